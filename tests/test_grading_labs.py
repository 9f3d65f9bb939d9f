"""The instructor's cycle for labs 4 to 6 (own data files, computed answers), and the
release of every lab, on a temporary copy of the course (lab 1's hostile submissions:
tests/test_grading.py; a module each, so that the two batches grade on different workers).

Each broken submission must lose exactly the points of the tests it breaks.  The three labs'
hand-ins are graded in one ``grade.py`` run (:func:`graded`), as ``make grade`` grades a
course: one start of the grader and its gradebook instead of one per lab.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from tests.labcourse import (ALL_LABS, LABS, grade, grade_meta, points, released_course, replace, solved,
                             source_nb)

CELL_TIMEOUT = 60  # seconds per cell while grading here (the course default)
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def course(tmp_path_factory, released_labs):
    return released_course(tmp_path_factory.mktemp("course") / "labs", released_labs)


def secret_lines(nb) -> tuple[set[str], set[str]]:
    """Lines of solutions and hidden tests that appear nowhere else in the source notebook."""
    secret, public = set(), set()
    for cell in nb.cells:
        inside = None
        for line in cell.source.splitlines():
            s = line.strip()
            if s in ("### BEGIN SOLUTION", "### BEGIN HIDDEN TESTS"):
                inside = s
            elif s in ("### END SOLUTION", "### END HIDDEN TESTS"):
                inside = None
            elif s:
                (secret if inside else public).add(s)
    return secret - public, public


@pytest.mark.parametrize("lab", ALL_LABS)
def test_release_contains_no_solution_and_no_hidden_test(course, lab):
    secret, _ = secret_lines(source_nb(lab))
    assert len(secret) > 20  # the check below has something to find
    release = nbformat.read(course / "release" / lab / f"{lab}.ipynb", as_version=4)
    text = "\n".join(c.source for c in release.cells)
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS", "Reference answer", "glue", "myst_nb"):
        assert marker not in text  # glue lives in solutions and reference answers only
    lines = {line.strip() for line in text.splitlines()}
    leaked = sorted(secret & lines)
    assert not leaked, f"solution or hidden-test lines in the student version: {leaked}"
    for cell in release.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None  # outputs would leak values
    shipped = sorted(p.name for p in (course / "release" / lab).iterdir())
    assert shipped == sorted(p.name for p in (LABS / "source" / lab).iterdir())  # notebook + data, nothing else


def data_state(student: str, contents: dict) -> str:
    """grades.csv's ``data`` of one file of ``student``: 'missing' (no content), 'own', or the
    other students who handed in the same content, in the order of their names."""
    mine = contents[student]
    if not mine:
        return "missing"
    others = [f"{s}'s" for s in sorted(contents) if s != student and contents[s] == mine]
    return "own" if not others else "same as " + (", ".join(others[:-1]) + " and " + others[-1] if others[1:]
                                                  else others[0])


# ---------------------------------------------------------------- lab 4: Your L(p)
LAB4 = "lab4"


def lab4_submissions(course: Path) -> dict:
    """student -> (files, grade_ids expected to fail) for lab 4."""
    own = (course / "source" / LAB4 / "lop.json").read_text() + "\n"   # a student's own file
    subs = {}

    def add(name, nb, failing, with_data=True, data=None):
        files = {f"{LAB4}.ipynb": nbformat.writes(nb)}
        if with_data:
            files["lop.json"] = own if data is None else json.dumps(data)
        subs[name] = (files, set(failing))

    add("alice", solved(course, LAB4), set())

    nb = solved(course, LAB4)   # the fit cell raises, and the paper's n is wrong
    replace(nb, "lop_fit", "lam_rtt = (", "raise ValueError('oops')\nlam_rtt = (")
    replace(nb, "lop_paper", "n_paper, paper_times = lop.best_n(64, LOP_SENDRECV_RTT_MIN, LOP_RDMAW_OS)",
            "n_paper, paper_times = 1, None")
    add("fit_raises", nb, {"test_lop_fit", "test_lop_latency", "test_lop_choose", "test_lop_paper"})

    nb = solved(course, LAB4)   # λ3 of t_rtt 30 % too large (used consistently); o_s(1) forgotten in L
    replace(nb, "lop_fit", "lam_rtt = (_q[0] * 1e-6, _q[1], _q[2] * 1e-6)",
            "lam_rtt = (_q[0] * 1e-6, _q[1], _q[2] * 1.3e-6)")
    replace(nb, "lop_latency", "L_points = rtt / 2 - (o_s + o_s[0])", "L_points = rtt / 2 - o_s")
    add("poor_fit", nb, {"test_lop_fit", "test_lop_latency"})

    needs_data = {"test_lop_load", "test_lop_fit", "test_lop_latency", "test_lop_choose"}
    add("no_data", solved(course, LAB4), needs_data, with_data=False)
    four = json.loads(own)     # 3 peer counts cannot be fitted: refused by the loader
    four["environment"]["ranks"] = 4
    add("four_ranks", solved(course, LAB4), needs_data, data=four)
    return subs


def submit_lab4(course: Path) -> dict:
    """Lab 4's hand-ins written into ``course/submitted``; returns :func:`lab4_submissions`."""
    subs = lab4_submissions(course)
    for student, (files, _) in subs.items():
        folder = course / "submitted" / student / LAB4
        folder.mkdir(parents=True)
        for name, content in files.items():
            (folder / name).write_text(content)
    return subs


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("student", ["alice", "fit_raises", "poor_fit", "no_data", "four_ranks"])
def test_lab4_submission_loses_exactly_what_it_broke(graded, student):
    subs, table, log = graded[LAB4]
    pts = points(source_nb(LAB4))
    manual = {k for k in pts if k.startswith("lop_answer")}
    _, failing = subs[student]
    row = table[student]
    assert row["status"] == "graded", (row, log)
    assert row["data"] == "lop.json: " + data_state(student, {s: f.get("lop.json") for s, (f, _) in subs.items()})
    got = {k: float(row[k]) for k in pts if k not in manual}
    want = {k: (0.0 if k in failing else v) for k, v in pts.items() if k not in manual}
    assert got == want, (student, log)
    assert float(row["auto_max"]) == 9 and float(row["max_score"]) == 13


# ---------------------------------------------------------------- lab 5: predict, then measure
LAB5 = "lab5"
LAB5_DATA = ("predict.json", "pingpong.json", "logp.json", "timeline.json")   # the order of exclude_overwriting


def lab5_submissions(course: Path) -> dict:
    """student -> (notebook, with data?, grade_ids expected to fail)."""
    subs = {"alice5": (solved(course, LAB5), True, set())}
    nb = solved(course, LAB5)  # the old rule: a combine cost in the network time (only alpha-beta is wrong)
    replace(nb, "p5_predict", "t = alpha + beta * 8 * tr.count",
            "t = alpha + beta * 8 * tr.count + (0.2e-9 * tr.count if tr.combine else 0.0)")
    subs["combine5"] = (nb, True, {"test_p5_ab"})
    nb = solved(course, LAB5)  # half duplex: an exchange costs two messages (2 alpha)
    replace(nb, "p5_predict", "max(max(sends.get(r, 0.0), recvs.get(r, 0.0)) for r in {*sends, *recvs})",
            "max(sends.get(r, 0.0) + recvs.get(r, 0.0) for r in {*sends, *recvs})")
    subs["half_duplex5"] = (nb, True, {"test_p5_ab"})
    nb = solved(course, LAB5)  # error with the wrong sign: only the errors are wrong
    replace(nb, "p5_errors", "(predicted[m][k] - measured[k]) / measured[k]", "(measured[k] - predicted[m][k]) / measured[k]")
    subs["sign5"] = (nb, True, {"test_p5_errors"})
    nb = solved(course, LAB5)  # forgets the software term: the totals are the network times
    replace(nb, "p5_errors", "net[k] + software[k]", "net[k]")
    subs["no_software5"] = (nb, True, {"test_p5_errors"})
    nb = solved(course, LAB5)  # medians instead of the report's statistic: errors and measured map off the data
    replace(nb, "p5_errors", 'rows[k]["measured_s"]', 'rows[k]["median_s"]')
    subs["median5"] = (nb, True, {"test_p5_errors", "test_p5_regime"})
    nb = solved(course, LAB5)  # the prediction with 2 alpha, not its move
    replace(nb, "p5_sensitivity", "ab_time(sched, 2 * alpha, beta) - pred_ab[key]", "ab_time(sched, 2 * alpha, beta)")
    subs["no_move5"] = (nb, True, {"test_p5_sensitivity"})
    nb = solved(course, LAB5)  # the parting step off by one, and a term chosen without the switch
    replace(nb, "p5_timeline", "parting_step = _apart[0] if _apart else None",
            "parting_step = _apart[0] + 1 if _apart else None")
    subs["late_parting5"] = (nb, True, {"test_p5_parting", "test_p5_term"})
    nb = solved(course, LAB5)  # the long-message term whatever the message's length
    replace(nb, "p5_timeline", "missing_term = TERM_OF[_part][largest_message(parting_step) > SWITCH_BYTES]",
            "missing_term = TERM_OF[_part][largest_message(parting_step) < SWITCH_BYTES]")
    subs["wrong_term5"] = (nb, True, {"test_p5_term"})
    subs["nodata5"] = (solved(course, LAB5), False, {"test_p5_params", "test_p5_ab", "test_p5_loggp",
                                                     "test_p5_errors", "test_p5_sensitivity", "test_p5_regime",
                                                     "test_p5_parting", "test_p5_term"})
    return subs


def submit_lab5(course: Path) -> dict:
    """Lab 5's hand-ins written into ``course/submitted``; returns :func:`lab5_submissions`."""
    data = {name: (course / "source" / LAB5 / name).read_text() for name in LAB5_DATA}
    subs = lab5_submissions(course)
    for student, (nb, with_data, _) in subs.items():
        folder = course / "submitted" / student / LAB5
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{LAB5}.ipynb")
        if with_data:
            for name, text in data.items():
                (folder / name).write_text(text + "\n")   # the student's own copy
    return subs


@pytest.mark.slow
def test_lab5_submissions_lose_exactly_what_they_broke(graded):
    subs, rows, log = graded[LAB5]
    pts = points(source_nb(LAB5))
    manual = {"p5_answer", "p5_suspects"}
    assert sum(v for k, v in pts.items() if k not in manual) == 10 and pts["p5_answer"] == pts["p5_suspects"] == 2
    for student, (_, with_data, failing) in subs.items():
        row = rows[student]
        assert row["status"] == "graded", (student, row, log)
        got = {k: float(row[k]) for k in pts if k not in manual}
        assert got == {k: (0.0 if k in failing else v) for k, v in pts.items() if k not in manual}, student
        assert row["data"] == "; ".join(f"{name}: " + data_state(student, {s: w for s, (_, w, _) in subs.items()})
                                        for name in LAB5_DATA)   # every student's copy is the same text


# ------------------------------------------------- lab 6 (computed answers, no data files)
LAB6 = "lab6"


def submit_lab6(course: Path) -> dict:
    """lab 6: a solved submission, and two that break one answer each, written into
    ``course/submitted``; student -> (notebook, grade_ids expected to fail)."""
    subs = {"alice6": (solved(course, LAB6), set())}
    nb = solved(course, LAB6)              # off-by-one turning level
    replace(nb, "lca", "    level = 0\n", "    level = 1\n")
    subs["off_by_one"] = (nb, {"test_lca"})
    nb = solved(course, LAB6)              # costs the schedules without the tree's link loads
    replace(nb, "choice", "simulate(s, AlphaBeta(ALPHA, BETA), topology=HOLED, elem_bytes=65536)",
            "simulate(s, AlphaBeta(ALPHA, BETA), topology=None, elem_bytes=65536)")
    subs["ignores_contention"] = (nb, {"test_choice"})
    for student, (nb, _) in subs.items():
        folder = course / "submitted" / student / LAB6
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{LAB6}.ipynb")
    return subs


@pytest.fixture(scope="module")
def graded(course):
    """lab -> (hand-ins as its ``submit_*`` returns them, grades.csv's rows by student, log):
    labs 4, 5 and 6 graded in one run of ``grade.py``, scores only."""
    subs = {LAB4: submit_lab4(course), LAB5: submit_lab5(course), LAB6: submit_lab6(course)}
    rows, log = grade(course, list(subs), cell_timeout=CELL_TIMEOUT)
    return {lab: (subs[lab], {s: row for (s, lb), row in rows.items() if lb == lab}, log) for lab in subs}


@pytest.mark.slow
def test_lab6_submissions_lose_exactly_what_they_broke(graded):
    subs, table, log = graded[LAB6]
    nb = source_nb(LAB6)
    pts = points(nb)
    manual = {grade_meta(c)["grade_id"] for c in nb.cells if grade_meta(c).get("grade") and grade_meta(c).get("solution")}
    assert manual == {"answer_choice"} and sum(v for k, v in pts.items() if k not in manual) == 9
    for student, (_, failing) in subs.items():
        row = table[student]
        assert row["status"] == "graded", (student, row, log)
        got = {k: float(row[k]) for k in pts if k not in manual}
        assert got == {k: (0.0 if k in failing else v) for k, v in pts.items() if k not in manual}, student
