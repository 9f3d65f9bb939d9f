"""Ctrl-C on both command lines: one line saying the run was interrupted and what was kept,
exit status 130 (128 + SIGINT), an existing result file unchanged, no traceback, no
launcher's banner.  (Every ``mpi_exercises`` command: tests/test_cli_errors.py.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.mpirun import ROOT, kill_job, mpiexec_path, wait_for_ranks

GOOD = {"a": "good result"}


def _interrupt(cmd: list[str], after_s: float, ranks: int = 0) -> tuple[subprocess.CompletedProcess, float]:
    """Start ``cmd`` in a session of its own, send SIGINT to its process group (what a
    terminal does on Ctrl-C) ``after_s`` seconds after it started (after its ``ranks``
    started, if ``cmd`` is a launcher); the finished process and how long it took to end."""
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if ranks:
        wait_for_ranks(proc, ranks, "mpi_exercises")
    time.sleep(after_s)
    assert proc.poll() is None, f"{cmd} ended before Ctrl-C: make it longer"
    os.killpg(proc.pid, signal.SIGINT)
    start = time.monotonic()
    try:
        stdout, stderr = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        kill_job(proc)
        pytest.fail(f"still running 10 s after Ctrl-C: {cmd}")
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr), time.monotonic() - start


@pytest.mark.cli
def test_ctrl_c_on_a_long_simulation_is_one_line_and_status_130(tmp_path):
    out = tmp_path / "result.json"
    out.write_text(json.dumps(GOOD))
    # building this schedule alone takes over 10 s on the kit's machine
    res, _ = _interrupt([sys.executable, "-m", "netmodels", "simulate", "allreduce.ring", "-P", "2^15", "--model",
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
    res, took = _interrupt([mpiexec_path(), "-n", "2", sys.executable, "-m", "mpi_exercises", "pingpong",
                            "--iterations", "1000000", "--no-progress", "--json", str(out)], 2, ranks=2)
    assert res.returncode == 130, res.stdout + res.stderr
    assert res.stderr.splitlines() == [f"python -m mpi_exercises pingpong: interrupted (Ctrl-C); nothing was "
                                       f"written: {out} was left as it was"], res.stderr
    # what is left on stdout is the launcher's own notice of a Ctrl-C, never a banner of a rank's death
    assert all(line.startswith("[mpiexec@") for line in res.stdout.splitlines()), res.stdout
    assert took < 5
    assert json.loads(out.read_text()) == GOOD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"]
