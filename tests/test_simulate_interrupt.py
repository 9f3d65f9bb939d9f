"""Ctrl-C during the compiled event loop of the *loggopsim* semantics
(netmodels/simulate/_events.py): the loop returns to Python every chunk of events, so the
command ends within a chunk, with one line and exit status 130, no traceback."""

from __future__ import annotations

import sys

import pytest

from tests.mpirun import interrupt_job


@pytest.mark.cli
def test_ctrl_c_in_the_compiled_loop_ends_the_command_within_3_s():
    # the schedule is built in about 0.5 s, its 2.1e7 messages laid out in a few seconds; the
    # loop alone then takes over 15 s on the kit's machine (so the signal lands in it)
    cmd = [sys.executable, "-m", "netmodels", "simulate", "barrier.dissemination", "-P", "2^20", "--model", "loggp",
           "--semantics", "loggopsim", "--force"]
    res, took = interrupt_job(cmd, 7)
    assert res.returncode == 130, res.stderr
    assert res.stderr.splitlines() == ["python -m netmodels simulate: interrupted (Ctrl-C); no result file was asked for"], \
        res.stderr
    assert "Traceback" not in res.stdout + res.stderr
    assert took < 3, f"{took:.1f} s after Ctrl-C"
