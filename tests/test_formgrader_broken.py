"""A Formgrader opened on a course with broken submissions shows them as such and grades the rest.

One temporary course, lab 1, graded by ``grade.py`` as ``tests/test_instructor_walk.py`` does:
``alice`` and ``bob`` hand in the solved notebook; ``garbage`` a notebook that is not JSON;
``zero`` an empty file; ``stripped`` the solved notebook with every cell's nbgrader metadata
removed; ``linked`` a link to alice's notebook (refused: it could make the grader read any
file).  The Jupyter server of ``tests/formgrader.py`` then serves every page an instructor opens
to grade by hand: the assignment list, the submission lists, each submission.  One server, started
once for the module (:func:`server`), serves both tests, as an instructor's serves a session.
"""

from __future__ import annotations

import json
import os

import nbformat
import pytest

from nbgrader.api import Gradebook

from tests.formgrader import formgrader
from tests.labcourse import grade, released_course, require_sandbox, solved

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]
LAB = "lab1"
GOOD = ("alice", "bob")
#: the broken hand-ins and the status grade.py gives each
BROKEN = {"garbage": "unreadable notebook: lab1.ipynb (NotJSONError)",
          "zero": "unreadable notebook: lab1.ipynb (NotJSONError)",
          "stripped": "empty notebook: lab1.ipynb has no answer or test cell of the lab",
          "linked": "refused: lab1.ipynb is a link or a special file"}
MARK = "ran-as-the-instructor"


@pytest.fixture(scope="module")
def course(tmp_path_factory, released_labs):
    require_sandbox()
    course = released_course(tmp_path_factory.mktemp("broken") / "labs", released_labs, labs=[LAB])
    data = (course / "source" / LAB / "pingpong.json").read_bytes()
    folders = {s: course / "submitted" / s / LAB for s in (*GOOD, *BROKEN)}
    for folder in folders.values():
        folder.mkdir(parents=True)
        (folder / "pingpong.json").write_bytes(data)
    for student in GOOD:
        nbformat.write(solved(course, LAB), folders[student] / f"{LAB}.ipynb")
    (folders["garbage"] / f"{LAB}.ipynb").write_text('{"cells": [ this is not JSON', encoding="utf-8")
    (folders["zero"] / f"{LAB}.ipynb").write_bytes(b"")
    nb = solved(course, LAB)
    for cell in nb.cells:
        cell.metadata.pop("nbgrader", None)
    # run as the instructor, this would write next to the course (the sandbox does not show it)
    nb.cells.insert(1, nbformat.v4.new_code_cell(f"open({str(course.parent / MARK)!r}, 'w').write('ran')"))
    nbformat.write(nb, folders["stripped"] / f"{LAB}.ipynb")
    os.symlink(folders["alice"] / f"{LAB}.ipynb", folders["linked"] / f"{LAB}.ipynb")
    rows, log = grade(course, [LAB], cell_timeout=20)
    return course, rows, log


@pytest.fixture(scope="module")
def server(course, tmp_path_factory):
    """The Formgrader on the graded course (:func:`tests.formgrader.formgrader`)."""
    with formgrader(course[0], tmp_path_factory.mktemp("formgrader")) as fg:
        yield fg


def test_broken_submissions_are_named_in_grades_csv_and_the_log(course):
    course, rows, log = course
    assert {s: rows[s, LAB]["status"] for s in BROKEN} == BROKEN
    for student, status in BROKEN.items():
        assert float(rows[student, LAB]["score"]) == 0
        assert f"{LAB} {student}: {status} (" in log
        assert (course / "autograded" / student / f"{LAB}.log").read_text().strip() == status
    assert [rows[s, LAB]["status"] for s in GOOD] == ["graded", "graded"]
    assert [float(rows[s, LAB]["auto_score"]) for s in GOOD] == [13, 13]


def test_the_formgrader_lists_every_submission_and_grades_the_good_ones(course, server):
    """Every page of manual grading loads without a server error; the good submissions are in
    its lists with their autograded scores, and a written answer of each takes a score; the
    broken ones are listed as not autograded, by name."""
    course, rows, _ = course
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        ids = {s: gb.find_submission_notebook(LAB, LAB, s).id for s in GOOD}
        assert sorted(s.student.id for s in gb.assignment_submissions(LAB)) == sorted(GOOD)
    fg = server
    for page in ("/formgrader/", "/formgrader/manage_assignments", f"/formgrader/manage_submissions/{LAB}",
                 "/formgrader/gradebook", f"/formgrader/gradebook/{LAB}", f"/formgrader/gradebook/{LAB}/{LAB}",
                 "/formgrader/manage_students", *(f"/formgrader/manage_students/{s}/{LAB}" for s in (*GOOD, *BROKEN)),
                 *(f"/formgrader/submissions/{i}/" for i in ids.values())):
        status, body = fg.request(page)
        assert status == 200, (page, status, body[:300])
    status, body = fg.request("/formgrader/api/assignments")
    assert status == 200 and [(a["name"], a["num_submissions"]) for a in json.loads(body)] == [(LAB, 6)]
    status, body = fg.request(f"/formgrader/api/submissions/{LAB}")
    listed = {s["student"]: s for s in json.loads(body)}
    assert sorted(listed) == sorted((*GOOD, *BROKEN))
    assert [s for s, v in listed.items() if v["autograded"]] == list(GOOD)
    assert [listed[s]["score"] for s in GOOD] == [float(rows[s, LAB]["score"]) for s in GOOD]
    status, body = fg.request(f"/formgrader/api/submitted_notebooks/{LAB}/{LAB}")
    assert status == 200 and sorted(n["student"] for n in json.loads(body)) == sorted(GOOD)
    for student, i in ids.items():
        status, body = fg.request(f"/formgrader/api/grades?submission_id={i}")
        written = [g for g in json.loads(body) if g["needs_manual_grade"]]
        assert status == 200 and written, (student, body[:300])
        status, body = fg.request(f"/formgrader/api/grade/{written[0]['id']}", "PUT",
                                  {"manual_score": 1.5, "extra_credit": 0})
        assert status == 200 and json.loads(body)["manual_score"] == 1.5, (student, status, body[:300])
    assert not fg.errors(tracebacks=False), fg.errors(tracebacks=False)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in GOOD:
            assert gb.find_submission(LAB, student).score == float(rows[student, LAB]["score"]) + 1.5


def test_the_formgrader_autogrades_no_broken_submission_as_the_instructor(course, server):
    """The Formgrader's "autograde" button, on a broken hand-in, runs none of its code outside
    the sandbox and copies no file a link points to; the next grade.py leaves the gradebook as before."""
    course, rows, _ = course
    said, fg = {}, server
    for student in BROKEN:
        status, body = fg.request(f"/formgrader/api/submission/{LAB}/{student}/autograde", "POST", {})
        assert status == 200 and json.loads(body)["success"] is False, (student, status, body[:500])
        said[student] = json.loads(body)["log"]
    status, body = fg.request(f"/formgrader/api/submissions/{LAB}")
    assert [s["student"] for s in json.loads(body) if s["autograded"]] == list(GOOD)
    assert not fg.errors(tracebacks=False), fg.errors(tracebacks=False)
    assert not (course.parent / MARK).exists()
    # alice's notebook, reached through the link, is refused when its kernel would start
    assert "sandboxed kernels are started by labs/grade.py" in said["linked"], said["linked"][-2000:]
    assert not list((course / "autograded" / "linked").rglob("*.ipynb"))
    # nbgrader's failed autograde leaves an entry without scores in the gradebook; the next
    # grade.py drops it again (as it does a stale one) and gives the same statuses
    again, _ = grade(course, [LAB], cell_timeout=20)
    assert {s: again[s, LAB]["status"] for s in (*GOOD, *BROKEN)} == {**dict.fromkeys(GOOD, "graded"), **BROKEN}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        assert sorted(s.student.id for s in gb.assignment_submissions(LAB)) == sorted(GOOD)
