"""The instructor's cycle on a temporary copy of the course, for lab 1: release, submit,
grade (scores only), CSV, feedback (labs 4 to 6, and the release of every lab:
tests/test_grading_labs.py; the second run for feedback pages: tests/test_grading_feedback.py).

Submissions are generated from the source notebook with nbformat: a correct one, and one
per way of breaking a notebook (a cell that raises, an infinite loop, tampered test cells,
``sys.exit()`` and megabytes of output, a kernel that dies, a hung ``mpiexec``, a missing
data file, an empty notebook, a file that is not JSON, no notebook at all).  The gradebook must give the correct
one full marks and each broken one exactly what it did not break.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import nbformat
import psutil
import pytest

from tests.labcourse import (ALL_LABS, LABS, cell_by_id, grade, grade_meta, nbgrader, points,
                             released_course, replace, solved, source_nb)

LAB = "lab1"
CELL_TIMEOUT = 5  # seconds per cell while grading here (the course default is 60); lab 1's longest cell takes about 1 s
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def course(tmp_path_factory, released_labs):
    return released_course(tmp_path_factory.mktemp("course") / "labs", released_labs, labs=[LAB])


def test_source_notebook_has_solutions_and_hidden_tests():
    nb = source_nb(LAB)
    text = "\n".join(c.source for c in nb.cells)
    assert text.count("### BEGIN HIDDEN TESTS") >= 4 and text.count("### BEGIN SOLUTION") >= 8
    assert nb.metadata.kernelspec.name == "python3"


GLUE_ROLE = re.compile(r"\{glue(?::\w+)?\}`")


def regions(cell) -> tuple[str, str]:
    """(text inside solution regions, text outside them) of a cell."""
    inside, outside, solution = [], [], False
    for line in cell.source.splitlines():
        s = line.strip()
        if s in ("### BEGIN SOLUTION", "### END SOLUTION"):
            solution = s == "### BEGIN SOLUTION"
        else:
            (inside if solution else outside).append(line)
    return "\n".join(inside), "\n".join(outside)


@pytest.mark.parametrize("lab", ALL_LABS)
def test_glue_only_in_solutions_and_reference_answers(lab):
    """Numbers of the reference answers come from cells through myst-nb glue; both the glue calls
    and the roles sit in solution regions, which the release removes, so the student version holds
    neither an answer nor a role without its value."""
    nb = source_nb(lab)
    for cell in nb.cells:
        inside, outside = regions(cell)
        assert "glue" not in outside, (lab, cell.get("id"), "glue outside a solution region")
        if GLUE_ROLE.search(inside):
            assert cell.cell_type == "markdown" and grade_meta(cell).get("solution"), (lab, cell.get("id"))
    glued = {o.metadata["scrapbook"]["name"] for c in nb.cells for o in c.get("outputs", [])
             if "scrapbook" in o.get("metadata", {})}
    used = {m.group(1) for c in nb.cells if c.cell_type == "markdown"
            for m in re.finditer(r"\{glue(?::\w+)?\}`([^`:]+)", c.source)}
    assert used == glued, (lab, sorted(used ^ glued))


# ---------------------------------------------------------------- submissions
def measure_cell(nb):
    return next(c for c in nb.cells if "MEASURE = False" in c.source)


def submissions(course: Path, marker: str) -> dict:
    """student -> (files to write, grade_ids expected to fail)."""
    data = (course / "source" / LAB / "pingpong.json").read_bytes()
    subs = {}

    def add(name, nb, failing=(), with_data=True, own=None):
        files = {f"{LAB}.ipynb": nbformat.writes(nb) if not isinstance(nb, (str, type(None))) else nb}
        if with_data:
            files["pingpong.json"] = data if own is None else json.dumps(own).encode()
        subs[name] = (files, failing if failing == "all" else set(failing))

    add("alice", solved(course, LAB))

    nb = solved(course, LAB)
    replace(nb, "fit", "fit = fit_alpha_beta", "raise ValueError('oops')\nfit = fit_alpha_beta")
    add("raises", nb, {"test_fit_units", "test_fit_data", "test_n_half"})

    nb = solved(course, LAB)
    replace(nb, "switch", "piecewise = ", "while True:\n    pass\npiecewise = ")
    add("loops", nb, {"test_switch", "test_predict"})

    nb = solved(course, LAB)  # wrong n_half, the test of it edited, other test cells edited or deleted
    replace(nb, "fit", "n_half = alpha / beta", "n_half = 1.0")
    cell_by_id(nb, "test_n_half").source = "assert True"
    cell_by_id(nb, "test_load").source = "pass"
    cell_by_id(nb, "test_switch").metadata.nbgrader["points"] = 100
    nb.cells = [c for c in nb.cells if grade_meta(c).get("grade_id") not in ("test_fit_data", "test_predict")]
    add("tamper", nb, {"test_n_half"})

    nb = solved(course, LAB)
    replace(nb, "comm_fraction", "import sympy", "import sys\nsys.exit()\nimport sympy")
    replace(nb, "load", "sizes, times = ",
            "print('x' * 5_000_000)\nfor _ in range(200_000):\n    print('spam')\nsizes, times = ")
    add("noisy", nb, {"test_comm_fraction"})

    nb = solved(course, LAB)  # the kernel dies: it is restarted and the next cells run
    replace(nb, "comm_fraction", "import sympy", "import os\nos._exit(1)\nimport sympy")
    add("kills_kernel", nb, {"test_comm_fraction"})

    nb = solved(course, LAB)
    measure_cell(nb).source = (
        "import subprocess, sys\nfrom pathlib import Path\n"
        "mpiexec = str(Path(sys.executable).with_name('mpiexec'))\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)  # {marker}'],\n"
        "                 start_new_session=True)  # escapes the kernel's process group\n"
        f"subprocess.run([mpiexec, '-n', '2', sys.executable, '-c', 'import time; time.sleep(600)  # {marker}'])")
    add("hung_mpiexec", nb)

    needs_data = {"test_load", "test_fit_units", "test_fit_data", "test_n_half", "test_switch", "test_predict"}
    add("no_data", solved(course, LAB), needs_data, with_data=False)
    three = json.loads(data)   # measured with a third rank that only waited: refused by the loader
    three["environment"]["ranks"] = 3
    add("three_ranks", solved(course, LAB), needs_data, own=three)
    disturbed = json.loads(data)   # the sizes below 8 KiB slowed by a burst: the lower segment's beta < 0
    small = [r for r in disturbed["results"] if r["bytes"] < 8192]
    for k, r in enumerate(small):
        r["min_s"] = r["median_s"] = 3.0e-6 - 1.7e-6 * k / (len(small) - 1)   # the lab fits the minima
    add("disturbed", solved(course, LAB), {"test_switch"}, own=disturbed)
    add("empty", nbformat.v4.new_notebook(), "all")
    add("not_json", '{"cells": [', "all")
    add("no_notebook", None, "all")
    add("renamed", solved(course, LAB), "all")      # the name `jupyter nbconvert --execute --output` gives
    subs["renamed"][0]["lab1_run.ipynb"] = subs["renamed"][0].pop(f"{LAB}.ipynb")
    add("hostile_name", None, "all")
    subs["hostile_name"][0].update({name: nbformat.writes(solved(course, LAB)) for name in HOSTILE_NAMES})
    return subs


#: notebooks of a hand-in whose names a terminal, a log or a page must not take as commands: a newline,
#: a terminal escape (clear the screen) with HTML, a bidirectional override, a byte that is not UTF-8
HOSTILE_NAMES = ("lab1\n.ipynb", "lab1\x1b[2J<script>alert(1)<img src=x onerror=alert(2)>.ipynb",
                 "lab1\u202egnp.ipynb", "lab1\udcff.ipynb")
#: what grade.py says of them, written out by hand: three names, escaped, the long one cut at 60 characters
HOSTILE_STATUS = ("no lab1.ipynb; found lab1\\n.ipynb, lab1\\x1b[2J<script>alert(1)<img src=x onerror=alert(2)>.i..., "
                  "lab1\\u202egnp.ipynb and 1 more: a hand-in must keep the released name")


@pytest.fixture(scope="module")
def graded(course):
    marker = f"labs-hung-{uuid.uuid4().hex[:8]}"
    subs = submissions(course, marker)
    for student, (files, _) in subs.items():
        folder = course / "submitted" / student / LAB
        folder.mkdir(parents=True)
        for name, content in files.items():
            if content is not None:
                (folder / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    # scores only: the second run, for the feedback pages, is test_grading_feedback.py's
    rows, log = grade(course, [LAB], cell_timeout=CELL_TIMEOUT)
    table = {student: row for (student, lab), row in rows.items() if lab == LAB}
    return subs, table, log, marker


@pytest.mark.slow
def test_every_submission_gets_a_row_and_loses_exactly_what_it_broke(graded):
    subs, table, log, _ = graded
    nb = source_nb(LAB)
    pts = points(nb)
    manual = {grade_meta(c)["grade_id"] for c in nb.cells if grade_meta(c).get("grade") and grade_meta(c).get("solution")}
    auto_max = sum(v for k, v in pts.items() if k not in manual)
    assert set(table) == set(subs), log
    for student, (_, failing) in subs.items():
        row = table[student]
        assert row["lab"] == LAB and float(row["max_score"]) == sum(pts.values())
        assert float(row["auto_max"]) == auto_max
        if failing == "all":
            assert row["status"] != "graded", (student, row)
            assert all(float(row[k]) == 0 for k in pts), (student, row)
            continue
        assert row["status"] == "graded", (student, row, log)
        got = {k: float(row[k]) for k in pts if k not in manual}
        want = {k: (0.0 if k in failing else v) for k, v in pts.items() if k not in manual}
        assert got == want, student
        assert float(row["auto_score"]) == sum(want.values())
        assert all(row[k] == "" for k in manual) and row["manual_pending"] == str(len(manual))


@pytest.mark.slow
def test_statuses_and_data_column(graded):
    _, table, _, _ = graded
    assert table["not_json"]["status"].startswith("unreadable notebook")
    assert table["no_notebook"]["status"] == "no lab1.ipynb; found no notebook, only pingpong.json"
    assert table["empty"]["status"].startswith("empty notebook")
    assert table["alice"]["data"] == "pingpong.json: reference copy"
    assert table["three_ranks"]["data"] == table["disturbed"]["data"] == "pingpong.json: own"
    assert table["no_data"]["data"] == "pingpong.json: missing"
    # a file whose data no switch can fit physically: the test says so, and grades.csv flags it
    assert table["disturbed"]["flags"] == "failed on disturbed data: test_switch", table["disturbed"]
    assert table["alice"]["flags"] == table["loops"]["flags"] == ""


def test_printable_escapes_what_a_terminal_would_run_and_refuses_bad_arguments(tmp_path):
    sys.path.insert(0, str(LABS))
    try:
        import grade
    finally:
        sys.path.remove(str(LABS))
    assert grade.printable("a\tb\x9b1m\u200fc.ipynb") == "a\\tb\\x9b1m\\u200fc.ipynb"
    assert grade.printable("é ü.ipynb", limit=9) == "é ü.ipynb" and grade.printable("abcdefghij", limit=6) == "abc..."
    for bad, why in (((b"x",), "text must be a str"), (("x", 3), "limit must be an int >= 4"),
                     (("x", True), "limit must be an int >= 4")):
        with pytest.raises(ValueError, match=why):
            grade.printable(*bad)
    lab = grade.Lab(LAB, [LAB])
    assert grade.check_notebooks(tmp_path, lab) == "no lab1.ipynb; the folder is empty"
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "Lab1.IPYNB").write_text("{}")
    assert grade.check_notebooks(tmp_path, lab) == ("no lab1.ipynb; found sub/Lab1.IPYNB: a hand-in must keep "
                                                    "the released name")


@pytest.mark.slow
def test_a_renamed_notebook_is_not_graded_and_every_report_says_what_was_found(graded, course):
    """Terminal, log and grades.csv name the expected notebook and what the folder holds instead;
    the renamed notebook is not graded (no graded copy, no gradebook entry), and hostile names reach
    none of them raw."""
    from nbgrader.api import Gradebook, MissingEntry

    _, table, log, _ = graded
    renamed = "no lab1.ipynb; found lab1_run.ipynb: a hand-in must keep the released name"
    for student, status in (("renamed", renamed), ("hostile_name", HOSTILE_STATUS)):
        assert table[student]["status"] == status and float(table[student]["score"]) == 0
        assert f"{LAB} {student}: {status} (" in log
        assert (course / "autograded" / student / f"{LAB}.log").read_text(encoding="utf-8") == status + "\n"
        assert not (course / "autograded" / student / LAB).exists()
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb, pytest.raises(MissingEntry):
            gb.find_submission(LAB, student)
    assert table["renamed"]["data"] == "pingpong.json: reference copy"
    csv_text = (course / "grades.csv").read_text(encoding="utf-8")
    for text in (log, csv_text):
        assert not any(ch in text for ch in "\x1b\u202e\udcff"), "a raw control character got through"
    assert csv_text.count("\n") == len(table) + 1          # no line break of a name splits a row


@pytest.mark.slow
def test_a_test_cell_handed_in_as_released_is_restored_without_a_warning(graded, course):
    """Hand-ins made from the released notebook (not the source): each test cell with hidden tests
    is put back with one INFO line and no warning of a changed checksum; the cells a student
    edited keep nbgrader's warning, and grades.csv flags nothing for the untouched hand-in."""
    _, table, _, _ = graded
    hidden = [grade_meta(c)["grade_id"] for c in source_nb(LAB).cells if "BEGIN HIDDEN TESTS" in c.source]
    assert len(hidden) >= 4
    alice = (course / "autograded" / "alice" / f"{LAB}.log").read_text()
    assert "WARNING" not in alice and "has changed" not in alice, alice
    assert re.findall(r"Cell (\w+) as released: its hidden tests put back", alice) == hidden
    assert table["alice"]["status"] == "graded" and table["alice"]["flags"] == ""
    tamper = (course / "autograded" / "tamper" / f"{LAB}.log").read_text()
    changed = re.findall(r"WARNING\] Attribute '(\w+)' for cell (\w+) has changed", tamper)
    assert sorted(changed) == [("checksum", "test_load"), ("checksum", "test_n_half"), ("points", "test_switch")]
    restored = re.findall(r"Cell (\w+) as released", tamper)
    assert restored == [g for g in hidden if g not in ("test_load", "test_n_half", "test_fit_data", "test_predict")]


@pytest.mark.slow
def test_no_process_survives_grading_and_output_is_capped(graded, course):
    _, _, _, marker = graded
    left = [p.pid for p in psutil.process_iter(["cmdline"]) if marker in " ".join(p.info["cmdline"] or [])]
    assert not left, f"processes started by the notebook survived grading: {left}"
    noisy = course / "autograded" / "noisy" / LAB / f"{LAB}.ipynb"
    assert noisy.stat().st_size < 200_000
    assert "output truncated while grading" in noisy.read_text()


@pytest.mark.slow
def test_feedback_of_scores_only_grading_hides_what_ran_after_a_hidden_test(graded, course):
    """Graded with --scores-only (no second run), a page shows the graded outputs up to the first
    hidden test, then scores only (test_grading_feedback.py: the pages of the second run)."""
    _, table, _, _ = graded
    nbgrader("generate_feedback", LAB, "--force", cwd=course)  # what `make feedback` runs
    for student in ("alice", "loops"):
        html = (course / "feedback" / student / LAB / f"{LAB}.html").read_text(errors="replace")
        row = table[student]
        assert f"Score: {float(row['auto_score']):.1f} / {float(row['max_score']):.1f}" in html
        assert "HIDDEN TESTS" not in html  # the graded notebook has them; the students' page not
        assert "output not shown in feedback: this cell ran after hidden tests" in html
        assert "Test failed: 0 of" in html if student == "loops" else "Test failed" not in html
    assert not (course / "feedback" / "not_json").exists()
    assert "for the feedback page" not in (course / "autograded" / "alice" / f"{LAB}.log").read_text()


def test_release_rejects_an_unknown_lab_and_a_folder_that_is_no_course(tmp_path):
    res = subprocess.run([sys.executable, str(LABS / "release.py"), "--lab", "lab9"],
                         capture_output=True, text=True, timeout=60)
    said = res.stderr.strip().splitlines()[-1]
    assert res.returncode == 2 and said.startswith("python labs/release.py: error: no lab 'lab9' in ")
    assert said.endswith(f"(labs: {' '.join(ALL_LABS)})") and "Traceback" not in res.stderr
    res = subprocess.run([sys.executable, str(LABS / "release.py"), "--course", str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "not a course folder" in res.stderr and not (tmp_path / "release").exists()


def test_grade_rejects_bad_arguments(tmp_path):
    for bad in (["--cell-timeout", "-1"], ["--jobs", "0"], ["--jobs", "two"]):
        res = subprocess.run([sys.executable, str(LABS / "grade.py"), *bad], capture_output=True, text=True, timeout=60)
        assert res.returncode == 2 and res.stderr.startswith("usage:") and "Traceback" not in res.stderr, bad
        assert res.stderr.strip().splitlines()[-1].startswith(f"python labs/grade.py: error: argument {bad[0]}: ")
    res = subprocess.run([sys.executable, str(LABS / "grade.py"), "--course", str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "not a course folder" in res.stderr


def test_make_grade_passes_lab_to_grade_py():
    def command(*args):
        run = subprocess.run(["make", "-n", "-C", str(LABS.parent), "grade", *args], capture_output=True, text=True,
                             timeout=60)
        assert run.returncode == 0, run.stderr
        return next(line for line in run.stdout.splitlines() if "grade.py" in line and not line.startswith("echo"))

    assert command("LAB=lab1").split("grade.py")[1].split("||")[0].split()[-2:] == ["--lab", "lab1"]
    assert "--lab lab2 --lab lab3" in command("LAB=lab2 lab3")
    assert "--lab" not in command()


HOLDS = """
import fcntl, os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import grading_processes
course = Path(sys.argv[2])

def free():
    fd = os.open(course / "gradebook.db", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)

print(free())
gb = grading_processes.open_gradebook(course)
inner = grading_processes.open_gradebook(course)   # a second one in the same process
inner.close()
print(free())
gb.close()
print(free())
gb = grading_processes.open_gradebook(course)
gb.close()
gb.close()                                        # closed twice: the lock is given back once
print(free(), grading_processes._HOLD["depth"])
"""


def _alembic_env():
    # nbgrader runs `alembic`, a console script next to this Python, as grade.py lets it
    return {**os.environ, "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])}


def test_a_grading_process_holds_the_gradebook_alone_while_it_is_open(tmp_path):
    # what lets `make grade` run submissions side by side: a Gradebook opened on the grading URL
    # holds a lock on gradebook.db, from opening to closing, that another grading process waits for
    res = subprocess.run([sys.executable, "-c", HOLDS, str(LABS), str(tmp_path)], capture_output=True,
                         text=True, timeout=60, env=_alembic_env())
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["True", "False", "True", "True", "0"]


NBGRADER = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import grading_processes
grading_processes.nbgrader(["db", "student", "add", sys.argv[2]], Path("."))
"""


def test_nbgrader_of_a_grading_process_waits_for_the_gradebook(tmp_path):
    # the URL reaches nbgrader's own Gradebook (CourseDirectory.db_url): while another process
    # holds the lock, `nbgrader db student add` run as grade.py runs nbgrader does not write
    import fcntl
    import time

    from nbgrader.api import Gradebook

    def add(student):
        return subprocess.Popen([sys.executable, "-c", NBGRADER, str(LABS), student], cwd=tmp_path, env=_alembic_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def blocked_on(path) -> bool:
        """Whether a process waits for the flock of ``path`` (a blocked request, ``->``, in /proc/locks)."""
        inode = f":{os.stat(path).st_ino} "
        return any("->" in line and inode in line for line in Path("/proc/locks").read_text().splitlines())

    assert add("alone").wait(timeout=120) == 0
    db = tmp_path / "gradebook.db"
    fd = os.open(db, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        waiting = add("waiting")
        deadline = time.monotonic() + 120
        while not blocked_on(db) and waiting.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert waiting.poll() is None, waiting.communicate()[0]     # it did not write through the lock
        assert blocked_on(db), "nbgrader never asked for the gradebook's lock"
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            assert [r[0] for r in con.execute("SELECT id FROM student")] == ["alone"]
    finally:
        os.close(fd)
    assert waiting.wait(timeout=120) == 0, waiting.communicate()[0]
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        assert sorted(s.id for s in gb.students) == ["alone", "waiting"]
