"""What recording costs the executor: one interleaved run under ``mpiexec -n P``.

    mpiexec -n 2 python benchmarks/recording_cost.py [--rev REV] [-N 1] [--rounds 200] [--calls 200]

Four variants of one allreduce schedule (the front door's default, snake, at ``-N`` float64
elements), each round in turn (the order rotated every round), each timed over ``--calls``
calls after a barrier: the executor of ``--rev`` (before recording existed, read with
``git show``) and this tree's, both ``Executor.run``; this tree's ``Executor.run_recorded``;
and the allreduce front door (``mpi_exercises.collectives.allreduce``, this tree).  Prints
the median and the best round's time per call of each (rank 0's, µs), the ratios to the old executor with their
interquartile range over rounds, and the load average before and after.  Also the clock
alignment of :mod:`mpi_exercises.clocks` against the true offset on one node (0).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from mpi4py import MPI  # noqa: E402

from mpi_exercises import clocks  # noqa: E402
from mpi_exercises.bench import arguments  # noqa: E402
from mpi_exercises.collectives.allreduce import allreduce, executor_for  # noqa: E402
from mpi_exercises.executor import Executor, Recorder  # noqa: E402
from netmodels.commandline import OneLineParser  # noqa: E402


def executor_source(rev: str) -> str | None:
    """The text of ``mpi_exercises/executor.py`` at git revision ``rev``, or None if git has none."""
    try:
        res = subprocess.run(["git", "show", f"{rev}:mpi_exercises/executor.py"], cwd=ROOT,
                             capture_output=True, text=True)
    except OSError:
        return None
    return res.stdout if res.returncode == 0 else None


def old_executor(rev: str, text: str):
    """The Executor class of ``text``, ``mpi_exercises/executor.py`` at git revision ``rev``."""
    spec = importlib.util.spec_from_loader("mpi_exercises._executor_before", loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "mpi_exercises"
    exec(compile(text, f"{rev}:executor.py", "exec"), module.__dict__)
    return module.Executor


def build_parser() -> OneLineParser:
    p = OneLineParser(prog="recording_cost.py", description=__doc__.splitlines()[0])
    p.add_argument("--rev", default="36c3dbd~1", help="git revision of the executor before recording")
    p.add_argument("-N", type=arguments.positive_int, default=1, help="float64 elements (default 1)")
    p.add_argument("--rounds", type=arguments.positive_int, default=200, help="rounds (default 200)")
    p.add_argument("--calls", type=arguments.positive_int, default=200, help="calls timed per round (default 200)")
    return p


def main(argv=None) -> int:
    p = build_parser()
    a = p.parse_args(argv)
    text = executor_source(a.rev)
    if text is None:
        p.error(f"--rev: git has no mpi_exercises/executor.py at {a.rev!r} (a clone with its history is needed)")
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    load0 = os.getloadavg()
    x = np.zeros(a.N)          # sums stay 0: no overflow (its warnings would be timed)
    out = np.empty_like(x)
    schedule = executor_for(comm, "snake", a.N, np.float64).schedule
    old = old_executor(a.rev, text)(comm, schedule, np.float64, MPI.SUM)
    new = Executor(comm, schedule, np.float64, MPI.SUM)
    rec = Recorder(new)
    buf = np.zeros(a.N)
    variants = {"before: run": lambda: old.run(buf), "now: run": lambda: new.run(buf),
                "now: run_recorded": lambda: new.run_recorded(buf, rec),
                "front door": lambda: allreduce(comm, x, out=out)}
    names = list(variants)
    times = {k: [] for k in names}
    for f in variants.values():
        for _ in range(50):
            f()
    for r in range(a.rounds):
        for k in names[r % len(names):] + names[:r % len(names)]:
            f = variants[k]
            comm.Barrier()
            t0 = time.perf_counter()
            for _ in range(a.calls):
                f()
            times[k].append((time.perf_counter() - t0) / a.calls)
    estimates = [clocks.estimate(comm) for _ in range(5)]
    old.free(), new.free()
    if rank:
        return 0
    t = {k: np.array(v) for k, v in times.items()}
    print(f"P = {comm.Get_size()}, N = {a.N}, {a.rounds} rounds x {a.calls} calls; "
          f"load {load0[0]:.2f} before, {os.getloadavg()[0]:.2f} after")
    for k in names:
        ratio = t[k] / t["before: run"]
        q1, q2, q3 = np.percentile(ratio, [25, 50, 75])
        print(f"  {k:20s} median {np.median(t[k]) * 1e6:7.3f} µs/call, best round {t[k].min() * 1e6:7.3f}; "
              f"ratio of medians {np.median(t[k]) / np.median(t['before: run']):.3f}, "
              f"of best rounds {t[k].min() / t['before: run'].min():.3f}, per round {q2:.3f} (IQR {q1:.3f}-{q3:.3f})")
    for i, (off, bound) in enumerate(estimates):
        print(f"  clock estimate {i}: rank 1 offset {off[1] * 1e6:+.3f} µs (true 0 on one node), "
              f"bound (half the shortest round trip) {bound[1] * 1e6:.3f} µs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
