"""The instructor's cycle on a temporary copy of the course: release, submit, grade, CSV.

Submissions are generated from the source notebook with nbformat: a correct one, and one
per way of breaking a notebook (a cell that raises, an infinite loop, tampered test cells,
``sys.exit()`` and megabytes of output, a kernel that dies, a hung ``mpiexec``, a missing
data file, an empty notebook, a file that is not JSON, no notebook at all).  The gradebook must give the correct
one full marks and each broken one exactly what it did not break.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from pathlib import Path

import nbformat
import psutil
import pytest

from tests.labcourse import (ALL_LABS, LABS, cell_by_id, grade, grade_meta, nbgrader, points,
                             released_course, solved, source_nb)

LAB = "lab1"
CELL_TIMEOUT = 8  # seconds per cell while grading here (the course default is 60); lab 1's longest cell takes about 1 s
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    return released_course(tmp_path_factory.mktemp("course") / "labs")


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


def test_source_notebook_has_solutions_and_hidden_tests():
    nb = source_nb(LAB)
    text = "\n".join(c.source for c in nb.cells)
    assert text.count("### BEGIN HIDDEN TESTS") >= 4 and text.count("### BEGIN SOLUTION") >= 8
    assert nb.metadata.kernelspec.name == "python3"


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
def replace(nb, grade_id, old, new):
    cell = cell_by_id(nb, grade_id)
    assert old in cell.source, (grade_id, old)
    cell.source = cell.source.replace(old, new, 1)


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
    replace(nb, "load", "times = np.array",
            "print('x' * 5_000_000)\nfor _ in range(200_000):\n    print('spam')\ntimes = np.array")
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
        r["median_s"] = 3.0e-6 - 1.7e-6 * k / (len(small) - 1)
    add("disturbed", solved(course, LAB), {"test_switch"}, own=disturbed)
    add("empty", nbformat.v4.new_notebook(), "all")
    add("not_json", '{"cells": [', "all")
    add("no_notebook", None, "all")
    return subs


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
    rows, log = grade(course, [LAB], cell_timeout=CELL_TIMEOUT, feedback_run=True)   # feedback test below
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
    assert table["no_notebook"]["status"] == "no notebook"
    assert table["empty"]["status"].startswith("empty notebook")
    assert table["alice"]["data"] == "pingpong.json: reference copy"
    assert table["three_ranks"]["data"] == table["disturbed"]["data"] == "pingpong.json: own"
    assert table["no_data"]["data"] == "pingpong.json: missing"


@pytest.mark.slow
def test_no_process_survives_grading_and_output_is_capped(graded, course):
    _, _, _, marker = graded
    left = [p.pid for p in psutil.process_iter(["cmdline"]) if marker in " ".join(p.info["cmdline"] or [])]
    assert not left, f"processes started by the notebook survived grading: {left}"
    noisy = course / "autograded" / "noisy" / LAB / f"{LAB}.ipynb"
    assert noisy.stat().st_size < 200_000
    assert "output truncated while grading" in noisy.read_text()


@pytest.mark.slow
def test_feedback_shows_scores_but_not_hidden_tests(graded, course):
    subs, table, _, _ = graded
    nbgrader("generate_feedback", LAB, "--force", cwd=course)  # what `make feedback` runs
    for student in ("alice", "loops"):
        html = (course / "feedback" / student / LAB / f"{LAB}.html").read_text(errors="replace")
        row = table[student]
        assert f"Score: {float(row['auto_score']):.1f} / {float(row['max_score']):.1f}" in html
        assert "HIDDEN TESTS" not in html  # the graded notebook has them; the students' page not
    assert not (course / "feedback" / "not_json").exists()
    # a notebook that reached the cell time limit is not run a second time for its page
    logs = {s: (course / "autograded" / s / f"{LAB}.log").read_text() for s in ("alice", "loops", "hung_mpiexec")}
    assert "run for the feedback page done" in logs["alice"]
    for student in ("loops", "hung_mpiexec"):
        assert "not run again for the feedback page: a cell reached the time limit" in logs[student], student
        assert "run for the feedback page done" not in logs[student], student


def test_grade_rejects_bad_arguments(tmp_path):
    res = subprocess.run([sys.executable, str(LABS / "grade.py"), "--cell-timeout", "-1"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and res.stderr.startswith("usage:") and "Traceback" not in res.stderr
    res = subprocess.run([sys.executable, str(LABS / "grade.py"), "--course", str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "not a course folder" in res.stderr


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


@pytest.fixture(scope="module")
def graded_lab4(course):
    subs = lab4_submissions(course)
    for student, (files, _) in subs.items():
        folder = course / "submitted" / student / LAB4
        folder.mkdir(parents=True)
        for name, content in files.items():
            (folder / name).write_text(content)
    rows, log = grade(course, [LAB4], cell_timeout=60)
    return subs, {s: row for (s, lab), row in rows.items() if lab == LAB4}, log


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("student", ["alice", "fit_raises", "poor_fit", "no_data", "four_ranks"])
def test_lab4_submission_loses_exactly_what_it_broke(graded_lab4, student):
    subs, table, log = graded_lab4
    pts = points(source_nb(LAB4))
    manual = {k for k in pts if k.startswith("lop_answer")}
    _, failing = subs[student]
    row = table[student]
    assert row["status"] == "graded", (row, log)
    assert row["data"] == ("lop.json: missing" if student == "no_data" else "lop.json: own")
    got = {k: float(row[k]) for k in pts if k not in manual}
    want = {k: (0.0 if k in failing else v) for k, v in pts.items() if k not in manual}
    assert got == want, (student, log)
    assert float(row["auto_max"]) == 9 and float(row["max_score"]) == 13


# ---------------------------------------------------------------- lab 5: predict, then measure
LAB5 = "lab5"
LAB5_DATA = ("predict.json", "pingpong.json", "logp.json")   # the order of exclude_overwriting


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
    subs["nodata5"] = (solved(course, LAB5), False, {"test_p5_params", "test_p5_ab", "test_p5_loggp",
                                                     "test_p5_errors", "test_p5_sensitivity", "test_p5_regime"})
    return subs


@pytest.mark.slow
def test_lab5_submissions_lose_exactly_what_they_broke(course):
    data = {name: (course / "source" / LAB5 / name).read_text() for name in LAB5_DATA}
    subs = lab5_submissions(course)
    for student, (nb, with_data, _) in subs.items():
        folder = course / "submitted" / student / LAB5
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{LAB5}.ipynb")
        if with_data:
            for name, text in data.items():
                (folder / name).write_text(text + "\n")   # the student's own copy
    rows, log = grade(course, [LAB5], cell_timeout=60)
    pts = points(source_nb(LAB5))
    manual = {"p5_answer"}
    assert sum(v for k, v in pts.items() if k not in manual) == 8 and pts["p5_answer"] == 2
    for student, (_, with_data, failing) in subs.items():
        row = rows[student, LAB5]
        assert row["status"] == "graded", (student, row, log)
        got = {k: float(row[k]) for k in pts if k not in manual}
        assert got == {k: (0.0 if k in failing else v) for k, v in pts.items() if k not in manual}, student
        assert row["data"] == "; ".join(f"{name}: {'own' if with_data else 'missing'}" for name in LAB5_DATA)


# ------------------------------------------------- lab 6 (computed answers, no data files)
LAB6 = "lab6"


@pytest.fixture(scope="module")
def graded6(course):
    """lab 6: a solved submission, and two that break one answer each."""
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
    rows, log = grade(course, [LAB6], cell_timeout=CELL_TIMEOUT)
    return subs, {s: row for (s, lab), row in rows.items() if lab == LAB6}, log


@pytest.mark.slow
def test_lab6_submissions_lose_exactly_what_they_broke(graded6):
    subs, table, log = graded6
    nb = source_nb(LAB6)
    pts = points(nb)
    manual = {grade_meta(c)["grade_id"] for c in nb.cells if grade_meta(c).get("grade") and grade_meta(c).get("solution")}
    assert manual == {"answer_choice"} and sum(v for k, v in pts.items() if k not in manual) == 9
    for student, (_, failing) in subs.items():
        row = table[student]
        assert row["status"] == "graded", (student, row, log)
        got = {k: float(row[k]) for k in pts if k not in manual}
        assert got == {k: (0.0 if k in failing else v) for k, v in pts.items() if k not in manual}, student
