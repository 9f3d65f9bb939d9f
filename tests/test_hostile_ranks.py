"""Ranks that disagree before a command starts: a check that fails on one rank only, and
ranks given different arguments (an MPMD launch, ``mpiexec -n 1 A : -n 1 B``).  Either way
every rank stops within seconds, with exit status 2 and one line from rank 0 (no rank left
waiting in the ranks' agreement, no ``Message truncated`` from a benchmark whose ranks
exchange messages of different sizes)."""

from __future__ import annotations

import json
import sys
import time

import pytest

from tests.mpirun import run_mpi

pytestmark = pytest.mark.mpi

PY = [sys.executable, "-m", "mpi_exercises"]
QUICK = ["--iterations", "5", "--warmup", "0", "--target", "0", "--no-progress"]


def _refused(argv: list[str]) -> str:
    """The one line of ``mpiexec -n 1 python argv`` (``:`` and more in argv for MPMD), which
    must end within 10 s with exit status 2 and nothing else."""
    start = time.monotonic()
    res = run_mpi(1, argv, timeout=10)
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert res.returncode == 2, res.stdout + res.stderr
    assert len(lines) == 1 and res.stdout == "", res.stdout + res.stderr
    assert time.monotonic() - start < 10
    return lines[0]


def test_a_result_name_too_long_ends_every_rank_in_one_line(tmp_path):
    """Rank 0 alone checks the result path: its failure must reach rank 1 too."""
    res = run_mpi(2, ["-m", "mpi_exercises", "pingpong", "--json", str(tmp_path / ("a" * 300 + ".json"))],
                  timeout=10)
    lines = res.stderr.splitlines()
    assert res.returncode == 2 and len(lines) == 1 and "File name too long" in lines[0], res.stderr


#: rank 1's check raises what no check foresees
FAILING_CHECK = """
import sys
import mpi_exercises.bench.estimate as estimate
def broken(args):
    raise RuntimeError("a check that broke")
estimate.refusal = broken
sys.argv[0] = "mpi_exercises"
from mpi_exercises.__main__ import main
sys.exit(main())
"""


def test_a_check_that_fails_on_one_rank_ends_every_rank_in_one_line():
    line = _refused(["-m", "mpi_exercises", "pingpong", *QUICK, ":", "-n", "1", sys.executable, "-c", FAILING_CHECK,
                     "pingpong", *QUICK])
    assert line == "python -m mpi_exercises pingpong: error on rank 1: RuntimeError: a check that broke"


@pytest.mark.parametrize("rank0, rank1, message", [
    (["pingpong", "--sizes", "8"], ["pingpong", "--sizes", "1024"], "--sizes is [8] on rank 0 but [1024] on rank 1"),
    (["pingpong", "--iterations", "5"], ["pingpong", "--iterations", "50"],
     "--iterations is 5 on rank 0 but 50 on rank 1"),
    (["pingpong", "--sizes", "8"], ["pingpong", "--sizes", "8", "--seed", "3"], "--seed is None on rank 0 but 3 on rank 1"),
    (["pingpong"], ["bsp"], "the command is 'pingpong' on rank 0 but 'bsp' on rank 1"),
    (["bench-allreduce", "--sizes", "1"], ["bench-allreduce", "--sizes", "1", "--algorithms", "ring"],
     "--algorithms is ["),
], ids=["sizes", "iterations", "seed", "command", "algorithms"])
def test_ranks_given_different_arguments_are_refused_naming_the_option(rank0, rank1, message):
    line = _refused(["-m", "mpi_exercises", *rank0, "--no-progress", ":", "-n", "1", *PY, *rank1, "--no-progress"])
    assert line.startswith(f"python -m mpi_exercises {rank0[0]}: error: the ranks were given different arguments: ")
    assert message in line and line.endswith("(every rank must run the same command line)")


def test_the_result_file_may_be_named_on_rank_0_alone(tmp_path):
    """Options that act on rank 0 alone (--json, --no-progress) may differ."""
    out = tmp_path / "pp.json"
    res = run_mpi(1, ["-m", "mpi_exercises", "pingpong", "--sizes", "0,8", *QUICK, "--json", str(out), ":", "-n", "1",
                      *PY, "pingpong", "--sizes", "0,8", *QUICK[:-1]], timeout=30)
    assert res.returncode == 0, res.stderr
    assert json.loads(out.read_text())["benchmark"] == "pingpong"
