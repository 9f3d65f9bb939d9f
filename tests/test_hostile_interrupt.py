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
