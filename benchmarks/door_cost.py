"""What a front door call costs beyond its executor: allreduce through the door (default and
``check=False``), the executor alone (x copied into out, then ``run``; and each of the two alone)
and MPI's ``Allreduce``, in loops of ``--calls`` back-to-back calls timed with ``perf_counter_ns``
(x and out page-aligned, :mod:`mpi_exercises.pages`), in interleaved rounds of a seeded random
order; with ``--rev`` the same door of that git revision too (imported beside this tree's,
:func:`recording_cost.package_at`), so before and after are measured in one run.

    mpiexec -n 2 .venv/bin/python benchmarks/door_cost.py --elements 1 --rev b7672f3 --json /tmp/door_cost.json

Prints per variant the median µs per call over the rounds (the slowest rank's loop) and its ratio
to MPI's, the 1-minute load average, and whether ranks outnumber cores (oversubscribed).
"""

from __future__ import annotations

import importlib
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402

from netmodels.commandline import OneLineParser  # noqa: E402
from netmodels.outputs import output_problem, write_json  # noqa: E402
from recording_cost import package_at  # noqa: E402


def build_parser() -> OneLineParser:
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--elements", type=int, default=1, help="float64 elements of x (>= 1; 8192 = 64 KiB)")
    p.add_argument("--calls", type=int, default=20000, help="calls per timed loop (>= 1)")
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds (>= 1)")
    p.add_argument("--algorithm", default="snake", help="the allreduce algorithm")
    p.add_argument("--seed", type=int, default=11, help="seed of the rounds' orders")
    p.add_argument("--rev", default=None, help="git revision whose door is timed too")
    p.add_argument("--json", default=None, help="file to write the results to")
    return p


def variants(comm, pkg, tag: str, algorithm: str, x, y) -> dict:
    """name -> call, for one package's front door and executor."""
    ar = importlib.import_module(pkg.__name__ + ".collectives.allreduce")
    ex = ar.executor_for(comm, algorithm, x.size, x.dtype)

    def executor():
        y[...] = x
        ex.run(y)
    calls = {f"default{tag}": lambda: ar.allreduce(comm, x, algorithm, out=y),
             f"check=False{tag}": lambda: ar.allreduce(comm, x, algorithm, out=y, check=False),
             f"executor{tag}": executor}
    if not tag:                                         # the executor's two pieces, once
        calls.update({"copy": lambda: y.__setitem__(Ellipsis, x), "run": lambda: ex.run(y)})
    return calls


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    for name in ("elements", "calls", "rounds"):
        if getattr(args, name) < 1:
            build_parser().error(f"--{name} must be >= 1, got {getattr(args, name)}")
    if args.json and output_problem(args.json):
        build_parser().error(f"--json: {output_problem(args.json)}")
    from mpi4py import MPI

    import mpi_exercises
    from mpi_exercises import pages
    comm = MPI.COMM_WORLD
    x, y = pages.allocate(args.elements, np.float64), pages.allocate(args.elements, np.float64)
    x[:] = 1.0
    calls = {"mpi": lambda: comm.Allreduce(x, y), **variants(comm, mpi_exercises, "", args.algorithm, x, y)}
    if args.rev:
        with tempfile.TemporaryDirectory() as where:
            old = package_at(args.rev, where)
            if old is None:
                build_parser().error(f"--rev {args.rev} has no mpi_exercises")
            calls.update(variants(comm, old, "@" + args.rev, args.algorithm, x, y))
    times = {name: [] for name in calls}
    rng = random.Random(args.seed)
    load = [os.getloadavg()[0]]
    for r in range(args.rounds + 1):                   # round 0 warms up, not kept
        order = list(calls)
        rng.shuffle(order)
        for name in order:
            f = calls[name]
            comm.Barrier()
            t0 = time.perf_counter_ns()
            for _ in range(args.calls):
                f()
            per = comm.allreduce((time.perf_counter_ns() - t0) / args.calls / 1000, op=MPI.MAX)
            if r:
                times[name].append(per)
    load.append(os.getloadavg()[0])
    if comm.rank:
        return 0
    med = {name: float(np.median(v)) for name, v in times.items()}
    over = comm.size > (os.cpu_count() or 1)
    for name, m in med.items():
        print(f"{name:24s} {m:8.2f} us  {m / med['mpi']:5.2f}x MPI")
    print(f"P = {comm.size}, {args.elements} float64, load {load[0]:.1f}-{load[1]:.1f}"
          + (", oversubscribed" if over else ""))
    if args.json:
        write_json(args.json, dict(P=comm.size, elements=args.elements, calls=args.calls, rounds=args.rounds,
                                   seed=args.seed, rev=args.rev, load=load, oversubscribed=over, us=times,
                                   median_us=med))
    return 0


if __name__ == "__main__":
    sys.exit(main())
