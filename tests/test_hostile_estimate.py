"""Runs too long or too large for the machine are refused before they start: one line with
the estimate and ``--force``, exit status 2 (on every rank under a launcher).  The estimate
(mpi_exercises/bench/estimate.py) is a floor: every command's default run must pass it."""

from __future__ import annotations

import subprocess
import sys
import time
import tracemalloc

import pytest

from mpi_exercises.__main__ import COMMANDS, build_parser
from mpi_exercises.bench import estimate
from netmodels.simulate.budget import MAX_SECONDS
from tests.mpirun import ROOT, run_mpi

#: (argv after ``python -m mpi_exercises``, a fragment of the line): what a user may type
HOSTILE = [
    (["pingpong", "--rounds", "1000000000"], "GiB of memory on this node"),
    (["pingpong", "--warmup", "1000000000000"], "years"),
    (["pingpong", "--rounds", "1000000000", "--sizes", "0"], "1000000000 rounds"),
    (["bench-allreduce", "--warmup", "1000000000000"], "years"),
    (["bench-allreduce", "--iterations", "10000000"], "minutes"),
    (["bench-allreduce", "--inner", "1000000000"], "days"),
    (["barrier-bench", "--inner", "1000000000"], "days"),
    (["barrier-bench", "--warmup", "1000000000000"], "days"),
    (["allreduce", "--warmup", "1000000000000"], "days"),
    (["allgather", "--repeat", "100000000", "-N", "100000"], "MPI calls over 1 case;"),
    (["logp", "--warmup", "10000000000"], "days"),
    (["lop", "--inner", "1000000000"], "days"),
    (["nbl-testjig", "--inner", "1000000000"], "days"),
    (["bsp", "--rounds", "1000000000"], "rounds"),
    (["software-cost", "--inner", "1000000000"], "days"),
    (["predict", "--warmup", "1000000000000"], "days"),
]


def _args(argv):
    return build_parser().parse_args(argv)


#: the arguments a command cannot run without
REQUIRED = {"timeline": ["allreduce.recursive_doubling"]}


@pytest.mark.parametrize("name", [n for n in COMMANDS if n != "info"])
def test_every_default_run_passes_and_has_force(name):
    args = _args([name, *REQUIRED.get(name, [])])
    assert args.force is False
    assert estimate.refusal(args) is None
    assert estimate.estimate(args).seconds < MAX_SECONDS / 10


@pytest.mark.parametrize("argv, fragment", HOSTILE, ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_a_run_beyond_the_limits_is_refused_with_its_estimate(argv, fragment, monkeypatch):
    # the estimate is the subject: the options' own memory check (at parsing) sees a node with
    # 64 GiB free, or a smaller one (allgather --repeat 10^8 needs 11.9 GiB) refuses before it
    from mpi_exercises.bench import arguments

    monkeypatch.setattr(arguments, "available_memory", lambda: 64 << 30)
    line = estimate.refusal(_args(argv))
    assert line is not None and fragment in line and line.startswith("this run would take at least ")
    assert line.endswith("; --force runs it anyway")
    assert estimate.refusal(_args([*argv, "--force"])) is None


def test_the_estimate_counts_rounds_calls_bytes_and_delays():
    base = estimate.estimate(_args(["pingpong", "--sizes", "0", "--iterations", "1000", "--warmup", "0"]))
    assert base.calls == 1000 and base.cases == 1 and base.rounds == 10
    rounds = estimate.estimate(_args(["pingpong", "--sizes", "0", "--iterations", "1000", "--warmup", "0",
                                      "--rounds", "1000000"]))
    assert rounds.seconds - base.seconds == pytest.approx((1000000 - 10) * (estimate.ROUND_S + estimate.ROUND_CASE_S))
    assert rounds.node_bytes - base.node_bytes == (1000000 - 10) * (estimate.ROUND_BYTES + estimate.ROUND_CASE_BYTES)
    big = estimate.estimate(_args(["pingpong", "--sizes", "1M", "--iterations", "1000", "--warmup", "0",
                                   "--budget-bytes", str(2**40)]))
    assert big.seconds - base.seconds == pytest.approx(1000 * 2**20 * estimate.BYTE_S)
    # every algorithm of bench-allreduce in each of its 3 modes, MPI's own once
    bench = estimate.estimate(_args(["bench-allreduce", "--sizes", "1", "--algorithms", "ring,snake"]))
    assert bench.cases == 1 + 2 * 3


@pytest.mark.mpi
def test_a_busy_wait_between_emulated_nodes_is_counted():
    """Two ranks, emulated nodes of one rank: every call waits --inter-delay; every rank stops."""
    start = time.monotonic()
    res = run_mpi(2, ["-m", "mpi_exercises", "alltoall", "--inter-delay", "1e9", "--ppn", "1"], timeout=10)
    lines = res.stderr.splitlines()
    assert res.returncode == 2 and len(lines) == 1, res.stderr
    assert "1e+09 s of --inter-delay per call" in lines[0] and "--force runs it anyway" in lines[0]
    assert time.monotonic() - start < 10


@pytest.mark.cli
def test_the_refusal_is_one_line_and_exit_2():
    res = subprocess.run([sys.executable, "-m", "mpi_exercises", "pingpong", "--rounds", "1000000000"],
                         capture_output=True, text=True, cwd=ROOT, timeout=10)
    assert res.returncode == 2 and res.stdout == ""
    [line] = res.stderr.splitlines()
    assert line.startswith("python -m mpi_exercises pingpong: error: this run would take at least ")
    assert "1000000000 rounds" in line and line.endswith("--force runs it anyway")


def test_ping_pong_buffers_are_filled_without_a_temporary_as_large_as_them():
    """A 2000M ping-pong needed 16 bytes of temporaries per byte (np.arange of int64)."""
    from mpi_exercises.bench.pingpong import buffers

    tracemalloc.start()
    try:
        send, _ = buffers(64 * 2**20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20
    assert send[250] == 250 and send[251] == 0 and send[-1] == (64 * 2**20 - 1) % 251
