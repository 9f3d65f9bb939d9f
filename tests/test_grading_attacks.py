"""Hostile submissions through the real ``make grade`` and ``make feedback``.

Each attack is a lab 6 submission whose first answer cell tries to cheat with nothing
more than a lab hands out: run the instructor's solution from ``source/``, print the
hidden tests (from ``source/``, and from IPython's input history once they have run),
write into the course, leave a double-forked daemon that rewrites ``grades.csv`` after the
batch, put the hidden-test marker twice in an answer, run another student's submission,
replace the files of its ``run/`` folder by links to the gradebook and kill its kernel (the
grader restarts it), list its descriptors and what ``/proc`` says of the grader, empty every
later cell with an input transformer, replace ``sys``'s hooks.
Each must score no more than the unsolved student version and change nothing outside its
scratch copy (the tampering ones are flagged in ``grades.csv``, the gradebook stays whole, the
grader's paths stay unseen); the honest submission still gets every automatic point, and every student
gets feedback.  One course is graded once for all of them.
"""

from __future__ import annotations

import hashlib
import html
import re
import time
import uuid
from pathlib import Path

import nbformat
import psutil
import pytest

from tests.labcourse import (LABS, automatic_points, cell_by_id, gradebook_links, hidden_lines, make, read_grades,
                             released_course, require_sandbox, solved, source_nb)
from tests.mpirun import ROOT

LAB = "lab6"
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

# Where an attack looks for the instructor's notebook: the course, the repository's labs/, and
# up from its working folder.  (Writes aim at the temporary course only.)
FIND_SOURCE = '''
import json, os, sys
from pathlib import Path
def _candidates(*parts):
    roots = [COURSE, REPO / "labs", *Path.cwd().parents, *[p / "labs" for p in Path.cwd().parents]]
    return [Path(r, *parts) for r in roots]
def _read_notebook(*parts):
    for path in _candidates(*parts):
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            continue
    return None
'''


def attack_code(kind: str, course: Path, marker: str) -> str:
    head = f"COURSE = Path({str(course)!r})\nREPO = Path({str(ROOT)!r})\nMARKER = {marker!r}\n"
    code = "from pathlib import Path\n" + head + FIND_SOURCE
    if kind == "reads_source":        # 1. run the instructor's solution cells
        code += f'''
_nb = _read_notebook("source", "{LAB}", "{LAB}.ipynb")
for _cell in (_nb or {{"cells": []}})["cells"]:
    _src = "".join(_cell["source"])
    if _cell["cell_type"] == "code" and "BEGIN SOLUTION" in _src:
        exec(_src, globals())
'''
    elif kind == "prints_hidden":     # 2. print the hidden tests: from source/, then as they run
        code += f'''
_nb = _read_notebook("source", "{LAB}", "{LAB}.ipynb")
for _cell in (_nb or {{"cells": []}})["cells"]:
    _src = "".join(_cell["source"])
    if "BEGIN HIDDEN TESTS" in _src:
        print(_src)
def _echo(result):
    print("ran:", result.info.raw_cell)
get_ipython().events.register("post_run_cell", _echo)
'''
    elif kind == "writes_course":     # 3. write into the course, the repository, the grader's /tmp and home
        code += f'''
_targets = [COURSE / "source" / "{LAB}" / (MARKER + ".py"), COURSE / "release" / "{LAB}" / (MARKER + ".py"),
            COURSE / "grades.csv", COURSE / "gradebook.db",
            COURSE / "submitted" / "alice6" / "{LAB}" / "{LAB}.ipynb",
            Path("/tmp") / MARKER, Path.home() / MARKER, Path("/root") / MARKER]
for _t in _targets:
    for _mode in ("a", "w"):
        try:
            with open(_t, _mode) as _fh:
                _fh.write("# " + MARKER + "\\n")
        except OSError:
            pass
'''
    elif kind == "daemon":            # 4. a setsid double fork that rewrites grades.csv later
        code += '''
import subprocess
_paths = [str(COURSE / "grades.csv"), str(Path.cwd().parent.parent.parent / "grades.csv")]
_daemon = f"""
import os, sys, time
from pathlib import Path
if os.fork():
    os._exit(0)
os.setsid()
if os.fork():
    os._exit(0)
end = time.time() + 120
while time.time() < end:
    for p in {_paths!r}:
        try:
            Path(p).write_text("student,lab,status,score\\\\ndaemon,lab6,graded,11\\\\n")
        except OSError:
            pass
    time.sleep(0.2)
"""
subprocess.run([sys.executable, "-c", _daemon, MARKER])
'''
    elif kind == "marker_twice":      # 5. the hidden-test marker in an answer, twice
        code += "# ### BEGIN HIDDEN TESTS\n# ### BEGIN HIDDEN TESTS\nx = 1\n"
    elif kind == "reads_other":       # 6. run another student's submission
        code += f'''
_nb = None
for _path in [COURSE / "submitted" / "alice6" / "{LAB}" / "{LAB}.ipynb",
              COURSE / "autograded" / "alice6" / "{LAB}" / "{LAB}.ipynb",
              Path.cwd().parent.parent / "alice6" / "{LAB}" / "{LAB}.ipynb"]:
    try:
        _nb = json.loads(_path.read_text())
        break
    except (OSError, ValueError):
        continue
for _cell in (_nb or {{"cells": []}})["cells"]:
    if _cell["cell_type"] == "code":
        try:
            exec("".join(_cell["source"]), globals())
        except Exception:
            pass
'''
    elif kind == "links_gradebook":   # 7. links to the gradebook where the grader writes, then die
        code += gradebook_links('str(COURSE / "gradebook.db")')
    elif kind == "recon":             # 8. what the kernel's descriptors and /proc say of the grader
        code += """
import os
for _fd in sorted(os.listdir("/proc/self/fd")):
    try:
        print("fd", _fd, os.readlink(f"/proc/self/fd/{_fd}"))
    except OSError:
        pass
for _pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        print("environ", _pid, open(f"/proc/{_pid}/environ", "rb").read().decode(errors="replace"))
        print("cwd", _pid, os.readlink(f"/proc/{_pid}/cwd"))
    except OSError:
        pass
"""
    elif kind == "transformers":      # 9. every later cell, the tests included, runs nothing
        code += "get_ipython().input_transformers_cleanup.append(lambda lines: [])\n"
    elif kind == "hooks":             # 10. hooks replaced (IPython puts them back after the cell)
        code += "import sys\nsys.excepthook = lambda *a: None\nsys.displayhook = lambda *a: None\n"
    else:
        raise ValueError(kind)
    return code


ATTACKS = ("reads_source", "prints_hidden", "writes_course", "daemon", "marker_twice", "reads_other",
           "links_gradebook", "recon", "transformers", "hooks")


def attack_notebook(course: Path, kind: str, marker: str):
    """The student version with the attack as its first answer, nothing else answered."""
    nb = nbformat.read(course / "release" / LAB / f"{LAB}.ipynb", as_version=4)
    cell_by_id(nb, "lca").source = attack_code(kind, course, marker)
    if kind == "prints_hidden":  # a later answer prints the input history, hidden tests included
        cell = cell_by_id(nb, "choice")
        cell.source = "print(In)\n" + cell.source
    return nb


def snapshot(*folders: Path) -> dict:
    """path -> sha256 of every file under ``folders``."""
    out = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture(scope="module")
def attacked(tmp_path_factory, released_labs):
    require_sandbox()
    course = released_course(tmp_path_factory.mktemp("attacked") / "labs", released_labs, labs=["lab1", LAB])
    marker = f"labs-attack-{uuid.uuid4().hex[:8]}"
    subs = {"alice6": solved(course, LAB),
            "blank6": nbformat.read(course / "release" / LAB / f"{LAB}.ipynb", as_version=4)}
    subs.update({kind: attack_notebook(course, kind, marker) for kind in ATTACKS})
    for student, nb in subs.items():
        folder = course / "submitted" / student / LAB
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{LAB}.ipynb")
    # a solved notebook handed in with a link to the instructor's notebook: refused, not run
    linked = course / "submitted" / "linked" / LAB
    linked.mkdir(parents=True)
    nbformat.write(subs["alice6"], linked / f"{LAB}.ipynb")
    (linked / "answers.ipynb").symlink_to(course / "source" / LAB / f"{LAB}.ipynb")
    kept = [course / "source", course / "release", course / "submitted", LABS / "source"]
    before = snapshot(*kept)
    graded = make(course, "grade")
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    right_after = (course / "grades.csv").read_text()
    time.sleep(1)  # a daemon left by a submission (it writes every 0.2 s) would rewrite grades.csv by now
    # a submission whose feedback cannot be made (here: not in the gradebook) in an earlier lab
    ghost = course / "autograded" / "ghost" / "lab1"
    ghost.mkdir(parents=True)
    (ghost / "lab1.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook()))
    feedback = make(course, "feedback")
    return {"course": course, "marker": marker, "subs": subs, "before": before, "kept": kept,
            "right_after": right_after, "rows": read_grades(course), "grade": graded, "feedback": feedback}


def score(row) -> float:
    return float(row["auto_score"])


def test_honest_submission_gets_every_point_in_the_sandbox(attacked):
    row = attacked["rows"]["alice6", LAB]
    assert row["status"] == "graded" and row["sandbox"] == "bwrap", row
    assert score(row) == sum(automatic_points(source_nb(LAB)).values()) == float(row["auto_max"]) == 9


@pytest.mark.parametrize("kind", ATTACKS)
def test_attack_scores_no_more_than_an_unsolved_notebook(attacked, kind):
    rows = attacked["rows"]
    assert rows[kind, LAB]["status"] == "graded", (rows[kind, LAB], attacked["grade"].stdout[-2000:])
    assert score(rows[kind, LAB]) <= score(rows["blank6", LAB]), rows[kind, LAB]


def test_tampering_is_flagged_in_grades_csv(attacked):
    rows = attacked["rows"]
    assert rows["transformers", LAB]["flags"].startswith("tampering: "), rows["transformers", LAB]
    assert "suspect code: displayhook, excepthook" in rows["hooks", LAB]["flags"], rows["hooks", LAB]
    assert rows["alice6", LAB]["flags"] == rows["blank6", LAB]["flags"] == ""
    log = (attacked["course"] / "autograded" / "transformers" / f"{LAB}.log").read_text()
    assert "did not run as written" in log


def test_a_dead_kernels_links_leave_the_gradebook_intact(attacked):
    course = attacked["course"]
    assert (course / "gradebook.db").read_bytes().startswith(b"SQLite format 3\x00")
    log = (course / "autograded" / "links_gradebook" / f"{LAB}.log").read_text()
    assert "The kernel died in cell" in log      # the attack ran, and the kernel was restarted
    assert attacked["rows"]["links_gradebook", LAB]["status"] == "graded"


def test_the_kernel_sees_no_path_or_environment_of_the_grader(attacked):
    course = attacked["course"]
    nb = nbformat.read(course / "autograded" / "recon" / LAB / f"{LAB}.ipynb", as_version=4)
    said = "".join(o.get("text", "") for o in cell_by_id(nb, "lca").outputs)
    assert "fd 0 /dev/null" in said and "environ 1 " in said, said[:2000]
    assert str(course) not in said and "autograded" not in said and "LABS_SANDBOX" not in said, said[:3000]


def test_submission_with_a_link_is_refused(attacked):
    row = attacked["rows"]["linked", LAB]
    assert row["status"] == "refused: answers.ipynb is a link or a special file" and row["score"] == "0", row


def test_attacks_change_nothing_outside_their_scratch_copy(attacked):
    marker = attacked["marker"]
    assert snapshot(*attacked["kept"]) == attacked["before"]
    for path in (Path("/tmp") / marker, Path.home() / marker, Path("/root") / marker):
        assert not path.exists(), path
    assert not list((LABS / "source").rglob(f"*{marker}*"))
    assert not [p for p in attacked["course"].rglob("*") if marker in p.name]


def test_no_daemon_outlives_grading_and_grades_csv_stays(attacked):
    marker = attacked["marker"]
    left = [p.pid for p in psutil.process_iter(["cmdline"]) if marker in " ".join(p.info["cmdline"] or [])]
    assert not left, f"processes started by a submission survived grading: {left}"
    assert (attacked["course"] / "grades.csv").read_text() == attacked["right_after"]
    assert attacked["rows"]["daemon", LAB]["score"] == "0"


def test_feedback_for_everyone_and_never_a_hidden_test(attacked):
    course, fb = attacked["course"], attacked["feedback"]
    # the ghost's lab 1 fails, is reported, and lab 6 still gets its feedback
    assert fb.returncode != 0 and "feedback incomplete for: lab1" in fb.stderr, fb.stderr[-2000:]
    secret = hidden_lines(source_nb(LAB))
    assert len(secret) >= 5
    # the printing attack did get hidden tests into its graded notebook's outputs ...
    graded = (course / "autograded" / "prints_hidden" / LAB / f"{LAB}.ipynb").read_text()
    outputs = "\n".join(str(o) for c in nbformat.reads(graded, as_version=4).cells
                        if c.cell_type == "code" for o in c.outputs)
    assert any(line in outputs for line in secret)
    # ... and no feedback page shows any of them
    for student in attacked["subs"]:
        page = course / "feedback" / student / LAB / f"{LAB}.html"
        assert page.is_file(), (student, fb.stdout[-2000:], fb.stderr[-2000:])
        text = html.unescape(page.read_text(errors="replace"))
        leaked = [line for line in secret if line in text]
        assert not leaked, (student, leaked[:3])
        assert "HIDDEN TESTS" not in text or student == "marker_twice"
    page = html.unescape((course / "feedback" / "alice6" / LAB / f"{LAB}.html").read_text())
    assert "Score: 9.0 / 11.0" in page
    # the student's own outputs, after the first hidden test too (from the run without hidden tests)
    assert "best: ring" in page and "ring              contention-free: True" in page
    # offline and alone: the page loads no file and no host (MathJax is inside it)
    raw = (course / "feedback" / "alice6" / LAB / f"{LAB}.html").read_text()
    loads = re.findall(r'<(?:script|link|img)\b[^>]*?(?:src|href)="([^"]+)"', raw)
    assert not [u for u in loads if not u.startswith("data:")], loads
    assert 'id="kit-mathjax"' in raw and not (course / "feedback" / "_mathjax").exists()


def test_grading_stops_without_a_sandbox_unless_unsafe(tmp_path, released_labs):
    course = released_course(tmp_path / "labs", released_labs, labs=[LAB])
    folder = course / "submitted" / "someone" / LAB
    folder.mkdir(parents=True)
    (folder / f"{LAB}.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook()))  # nothing to run
    res = make(course, "grade", env={"BWRAP": str(tmp_path / "no-bwrap")})
    assert res.returncode != 0 and not (course / "grades.csv").exists()
    said = [line for line in res.stderr.splitlines() if line.startswith("grade.py:")]
    assert len(said) == 1 and "UNSAFE_GRADING=1" in said[0] and "Traceback" not in res.stderr, res.stderr
    res = make(course, "grade", env={"BWRAP": str(tmp_path / "no-bwrap"), "UNSAFE_GRADING": "1"})
    assert res.returncode == 0, res.stderr
    row = read_grades(course)["someone", LAB]
    assert row["sandbox"] == "none (UNSAFE_GRADING=1)" and row["status"].startswith("empty notebook")
