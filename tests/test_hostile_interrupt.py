"""Ctrl-C on both command lines: one line saying the run was interrupted and what was kept,
exit status 130 (128 + SIGINT), an existing result file unchanged, no traceback, no
launcher's banner.  (Every ``mpi_exercises`` command: tests/test_cli_errors.py.)"""

from __future__ import annotations

import json
import sys

import pytest

from tests.mpirun import interrupt_job, mpiexec_path

GOOD = {"a": "good result"}


@pytest.mark.cli
def test_ctrl_c_on_a_long_simulation_is_one_line_and_status_130(tmp_path):
    out = tmp_path / "result.json"
    out.write_text(json.dumps(GOOD))
    # building this schedule alone takes over 10 s on the kit's machine
    res, _ = interrupt_job([sys.executable, "-m", "netmodels", "simulate", "allreduce.ring", "-P", "2^15", "--model",
                         "loggp", "--semantics", "loggopsim", "--json", str(out)], 2)
    assert res.returncode == 130, res.stderr
    assert res.stderr.splitlines() == [f"python -m netmodels simulate: interrupted (Ctrl-C); nothing was written: "
                                       f"{out} was left as it was"], res.stderr
    assert json.loads(out.read_text()) == GOOD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"]


@pytest.mark.mpi
def test_ctrl_c_on_a_ping_pong_is_one_line_and_status_130(tmp_path):
    out = tmp_path / "result.json"
    out.write_text(json.dumps(GOOD))
    res, took = interrupt_job([mpiexec_path(), "-n", "2", sys.executable, "-m", "mpi_exercises", "pingpong",
                            "--iterations", "1000000", "--no-progress", "--json", str(out)], 0.5, ranks=2)
    assert res.returncode == 130, res.stdout + res.stderr
    assert res.stderr.splitlines() == [f"python -m mpi_exercises pingpong: interrupted (Ctrl-C); nothing was "
                                       f"written: {out} was left as it was"], res.stderr
    # what is left on stdout is the launcher's own notice of a Ctrl-C, never a banner of a rank's death
    assert all(line.startswith("[mpiexec@") for line in res.stdout.splitlines()), res.stdout
    assert took < 5
    assert json.loads(out.read_text()) == GOOD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"]


# ---------------------------------------------------------------- the course tools
def _descendants(proc) -> list:
    import psutil

    try:
        return psutil.Process(proc.pid).children(recursive=True)
    except psutil.Error:
        return []


def _interrupt_when(cmd: list[str], ready, cwd=None, timeout: float = 600):
    """Start ``cmd`` in a session of its own (as a terminal starts a foreground job), wait until
    ``ready(proc)`` (polled every 0.2 s, at most ``timeout`` s), send SIGINT to its whole group
    (a Ctrl-C) and return (the finished process, seconds it took to end, its descendants at the
    moment of the Ctrl-C)."""
    import os
    import signal
    import subprocess
    import time

    from tests.mpirun import ROOT, kill_job, sigint_at_default

    with sigint_at_default():
        proc = subprocess.Popen(cmd, cwd=cwd or ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + timeout
    try:
        while not ready(proc):
            assert proc.poll() is None, f"{cmd} ended before Ctrl-C: {proc.communicate()}"
            assert time.monotonic() < deadline, f"{cmd} was not busy within {timeout} s"
            time.sleep(0.2)
        children = _descendants(proc)
        os.killpg(proc.pid, signal.SIGINT)
        start = time.monotonic()
        stdout, stderr = proc.communicate(timeout=10)
    except BaseException:
        kill_job(proc)
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr), time.monotonic() - start, children


def _after(seconds: float):
    """A ``ready`` of :func:`_interrupt_when`: true ``seconds`` after it is first asked."""
    import time

    start = time.monotonic()
    return lambda proc: time.monotonic() - start > seconds


def _none_left(children) -> None:
    import time

    from tests.mpirun import running

    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and any(running(p) for p in children):
        time.sleep(0.05)
    assert not [p.pid for p in children if running(p)], "a process of the interrupted tool outlived it"


@pytest.mark.mpi
def test_ctrl_c_on_labdata_allreduce_runs_ends_its_job_with_one_line(tmp_path):
    import os

    out = tmp_path / "allreduce.json"

    def ranks_running(proc):
        return sum("mpi_exercises" in " ".join(p.cmdline()) and "python" in p.name() for p in _descendants(proc)) >= 2

    res, took, children = _interrupt_when(
        [sys.executable, "-m", "mpi_exercises.labdata", "allreduce-runs", "--ranks", "2", "-N", "2000000",
         "--repeat", "100000", "--json", str(out)], ranks_running, timeout=60)
    assert res.returncode == 130, res.stderr
    assert res.stderr.splitlines() == [f"python -m mpi_exercises.labdata allreduce-runs: interrupted (Ctrl-C); "
                                       f"nothing was written ({out} was not created)"], res.stderr
    assert took < 3
    _none_left(children)
    assert not os.listdir(tmp_path)


@pytest.mark.cli
def test_ctrl_c_on_the_class_report_is_one_line_and_status_130(tmp_path):
    from tests.test_class_report import make_course
    from tests.mpirun import ROOT

    course = make_course(tmp_path, [f"s{i:02d}" for i in range(80)])
    out = tmp_path / "out"
    # past its imports (about 3 s at rest): reading and fitting the hand-ins (80 of them end the
    # report 4.9 s after its start at rest, 24 ended it before the Ctrl-C came)
    res, took, _ = _interrupt_when([sys.executable, str(ROOT / "labs" / "class_report.py"), "--lab", "lab1",
                                    "--course", str(course), "--out", str(out)], _after(3))
    assert res.returncode == 130, res.stderr
    assert res.stderr.splitlines() in (
        [f"python labs/class_report.py: interrupted (Ctrl-C); nothing was written ({out / 'lab1.html'} was not "
         "created)"],
        ["python labs/class_report.py: interrupted (Ctrl-C) while starting; nothing was written"]), res.stderr
    assert took < 3
    assert not (out / "lab1.html").exists() and not (out / "lab1.csv").exists()
    assert not out.exists() or not list(out.iterdir())


def test_a_class_report_interrupted_while_it_writes_leaves_no_part_of_a_page(tmp_path, monkeypatch):
    """Ctrl-C between writing the page and putting it in place: no page, no temporary file."""
    import os

    from tests.test_class_report import _module, make_course

    course = make_course(tmp_path, ["s00", "s01"])
    out = tmp_path / "out"
    real_replace = os.replace

    def interrupted_replace(src, dst, *args, **kwargs):
        if str(dst).endswith(".html"):
            raise KeyboardInterrupt
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", interrupted_replace)
    with pytest.raises(KeyboardInterrupt):
        _module().report(course, "lab1", out)
    assert sorted(p.name for p in out.iterdir()) == []


# ---------------------------------------------------------------- while a command starts
_START = """
import os, signal, sys
from netmodels.starting import ctrl_c_in_one_line, ctrl_c_raises
ctrl_c_in_one_line("some tool")
{before}
os.kill(os.getpid(), signal.SIGINT)
for _ in range(10 ** 6):
    pass
print("went on")
"""


def test_a_ctrl_c_while_a_command_starts_ends_it_with_one_line_raising_nothing():
    import subprocess

    res = subprocess.run([sys.executable, "-c", _START.format(before="")], capture_output=True, text=True,
                         timeout=60)
    assert (res.returncode, res.stdout, res.stderr) == (
        130, "", "some tool: interrupted (Ctrl-C) while starting; nothing was written\n")


def test_once_a_command_has_started_a_ctrl_c_raises_again():
    import subprocess

    code = _START.format(before="ctrl_c_raises()\ntry:").replace("\nos.kill", "\n    os.kill").replace(
        "for _ in range(10 ** 6):\n    pass", "    [0 for _ in range(10 ** 7)]\nexcept KeyboardInterrupt:\n"
                                               "    print('its own handling')")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (res.returncode, res.stdout, res.stderr) == (0, "its own handling\nwent on\n", "")


@pytest.mark.parametrize("script", ["labs/grade.py", "labs/class_report.py", "mpi_exercises/labdata.py",
                                    "netmodels/__main__.py"])
def test_every_command_guards_its_start_before_any_other_import(script):
    """The guard is the first statement after the docstring (and ``__future__``): nothing of the
    script's own runs before it; and ``main`` hands Ctrl-C back to its own handling."""
    import ast

    from tests.mpirun import ROOT

    tree = ast.parse((ROOT / script).read_text())
    body = [node for node in tree.body[1:] if not (isinstance(node, ast.ImportFrom) and node.module == "__future__")]
    guard = body[0]
    assert isinstance(guard, ast.If) and ast.unparse(guard.test) == "__name__ == '__main__'", ast.unparse(guard)
    calls = [ast.unparse(n.func) for n in ast.walk(guard) if isinstance(n, ast.Call)]
    assert calls[-1] == "ctrl_c_in_one_line", calls
    main = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main")
    assert "ctrl_c_raises" in {ast.unparse(n.func) for n in ast.walk(main) if isinstance(n, ast.Call)}


@pytest.fixture
def sleeping_course(tmp_path, released_labs):
    """A course of lab 6 with two submissions: ``alice6``'s, solved, then ``sleeper``'s, whose
    first answer never ends (it sleeps)."""
    import nbformat

    from tests.labcourse import released_course, replace, require_sandbox, solved

    require_sandbox()
    course = released_course(tmp_path / "labs", released_labs, labs=["lab6"])
    for student, sleeps in (("alice6", False), ("sleeper", True)):
        nb = solved(course, "lab6")
        if sleeps:
            replace(nb, "lca", "def lca_level", "import time\ntime.sleep(3600)\n\n\ndef lca_level")
        folder = course / "submitted" / student / "lab6"
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / "lab6.ipynb")
    return course


def _sleeper_running(course):
    """Whether the sleeper's submission is being graded: its log exists, and a kernel runs."""
    def ready(proc):
        return (course / "autograded" / "sleeper" / "lab6.log").exists() and any(
            "ipykernel" in " ".join(p.cmdline()) for p in _descendants(proc))
    return ready


def _gradebook(course):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {s.student_id: s.score for s in gb.assignment_submissions("lab6")}


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("how", ["grade.py", "make grade"])
def test_ctrl_c_on_grading_stops_the_sandbox_and_keeps_the_gradebook(sleeping_course, how):
    import signal
    from pathlib import Path

    from tests.mpirun import ROOT

    course = sleeping_course
    grade = [sys.executable, str(course / "grade.py"), "--course", str(course), "--jobs", "1", "--scores-only"]
    status = 130
    if how == "make grade":
        venv = Path(sys.prefix)
        grade = ["make", "-s", "-C", str(ROOT), "-o", str(venv / ".installed-requirements"), f"VENV={venv}",
                 f"COURSE={course}", "JOBS=1", "grade"]
        status = -signal.SIGINT              # make ends by the signal itself: status 130 in a shell
    res, took, children = _interrupt_when(grade, _sleeper_running(course))
    assert res.returncode == status, res.stderr
    assert res.stderr.splitlines() == [
        f"python labs/grade.py: interrupted (Ctrl-C); nothing was written ({course / 'grades.csv'} was not "
        "created); 1 submission under way stopped and left out of the gradebook"], res.stderr
    assert took < 3
    _none_left(children)
    # alice's grades are in the gradebook, the sleeper's submission is not: nbgrader can open it
    scores = _gradebook(course)
    assert set(scores) == {"alice6"} and scores["alice6"] > 0, scores
