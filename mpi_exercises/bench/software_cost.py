"""The kit's software cost: what running a schedule through the executor and a front door
costs beyond its messages.

    mpiexec -n 2 python -m mpi_exercises software-cost --json software.json

Method.  Schedules of k steps, each a pairwise exchange of n float64 elements combined by
SUM (rank r with r XOR 1; an odd last rank sits out), for k in ``--steps`` and n in
``--sizes``, run by the executor (``Executor.run``, the path of a barrier and of every
collective after its front door), interleaved, ``--inner`` back-to-back runs after one
barrier, the slowest rank's time (:func:`core.time_interleaved`).  Per n the medians give the
line T(k) = a(n) + b(n) k (least squares): a(n) is the executor's cost per call, b(n) its
cost per step, the message included.  The front door's own cost per call is the allgather
front door (ring, ``check=False``) against the executor running the same schedule, at each
n.  No allreduce and no barrier is timed, so ``predict`` can calibrate on this benchmark
and judge on those.  :func:`netmodels.models.software.residual` turns the lines into each
model's software term.
"""

from __future__ import annotations

import sys

import numpy as np

from . import core

STEPS = [1, 2, 4, 8, 16]
SIZES = [0, 64, 1024, 16384, 131072]
#: the front door whose own cost is measured (not one that predict judges)
DOOR = ("allgather", "ring")


def step_counts(text: str) -> list[int]:
    """argparse type: comma-separated step counts, at least two distinct, each in 1..4096."""
    import argparse

    try:
        ks = sorted({int(item) for item in text.split(",")})
    except ValueError:
        ks = []
    if len(ks) < 2 or ks[0] < 1 or ks[-1] > 4096:
        raise argparse.ArgumentTypeError(f"expected at least two distinct step counts in 1..4096, got {text!r}")
    return ks


def add_arguments(p) -> None:
    p.add_argument("--steps", type=step_counts, default=STEPS,
                   help="comma-separated step counts k of the exchange schedules (default 1,2,4,8,16)")
    p.add_argument("--sizes", type=core.size_list_of(8, 4, all_ranks=True), default=SIZES,
                   help="comma-separated vector lengths n in float64 elements (default 0,64,1k,16k,128k)")
    p.add_argument("--iterations", type=core.sample_count, default=200,
                   help="timed samples per schedule (default 200)")
    p.add_argument("--warmup", type=core.nonneg_int, default=10, help="untimed samples first (default 10)")
    core.add_inner_option(p)
    p.add_argument("--json", metavar="FILE", help="write the samples and the fitted lines to FILE as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def exchange_schedule(nprocs: int, steps: int, nelems: int):
    """``steps`` steps of pairwise exchanges of the whole vector, combined (rank r with r ^ 1)."""
    from netmodels.algorithms.arrays import ArraySchedule, ArrayStep

    ranks = np.arange(nprocs - nprocs % 2)
    step = ArrayStep.of(ranks, ranks ^ 1, 0, nelems, True)
    return ArraySchedule(f"exchange x{steps}", nprocs, nelems, [step] * steps)


def measure(comm, sizes, steps, iterations, warmup, inner, progress=True) -> dict:
    """Time the exchange schedules and the front door (collective); on rank 0
    ``{"executor": [{nelems, steps, **summary}], "door": [{nelems, door: summary,
    executor: summary}]}``, elsewhere None."""
    from mpi4py import MPI
    from tqdm import tqdm

    from netmodels.algorithms import registry

    from ..collectives.allgather import allgather
    from ..executor import Executor

    P, rank = comm.Get_size(), comm.Get_rank()
    out = {"executor": [], "door": []}
    for n in tqdm(sizes, desc="software-cost", unit="size", file=sys.stderr,
                  disable=(rank != 0) or not progress or None):
        buf = np.zeros(n)              # sums of zeros: the adds run, the values never overflow
        buf[:] = 0.0                   # pages written (np.zeros alone maps the shared zero page)
        runs = [Executor(comm, exchange_schedule(P, k, n), np.float64, MPI.SUM) for k in steps]
        x, gathered = np.random.default_rng(rank).random(n), np.empty((P, n))
        direct = Executor(comm, registry.build(".".join(DOOR), P, n), np.float64, None)
        calls = [lambda ex=ex: ex.run(buf) for ex in runs]
        calls += [lambda: allgather(comm, x, DOOR[1], out=gathered, check=False),
                  lambda: direct.run(gathered.reshape(-1))]
        samples = core.time_interleaved(comm, calls, iterations, warmup, inner=inner)
        for ex in runs + [direct]:
            ex.free()
        if rank == 0:
            out["executor"] += [{"nelems": n, "steps": k, **core.summarize(row)}
                                for k, row in zip(steps, samples[:len(steps)])]
            out["door"].append({"nelems": n, "door": core.summarize(samples[-2]),
                                "executor": core.summarize(samples[-1])})
    return out if rank == 0 else None


def lines(result: dict, statistic: str = "median_s") -> dict:
    """Per vector length n: the executor's a(n) (s per call) and b(n) (s per step) with
    their standard errors, and the front door's own cost per call (s) (no MPI)."""
    out = {}
    for n in dict.fromkeys(r["nelems"] for r in result["executor"]):
        rows = [r for r in result["executor"] if r["nelems"] == n]
        k = np.array([r["steps"] for r in rows], dtype=float)
        t = np.array([r[statistic] for r in rows])
        if k.size > 2:
            (b, a), cov = np.polyfit(k, t, 1, cov=True)
            err = np.sqrt(np.diag(cov))
        else:
            (b, a), err = np.polyfit(k, t, 1), (np.nan, np.nan)
        door = next(d for d in result["door"] if d["nelems"] == n)
        out[n] = {"per_call_s": float(a), "per_step_s": float(b), "per_call_stderr_s": float(err[1]),
                  "per_step_stderr_s": float(err[0]),
                  "door_s": float(door["door"][statistic] - door["executor"][statistic])}
    return out


def report(fitted: dict) -> str:
    lines_ = [f"{'n (elements)':>12} {'per call µs':>12} {'per step µs':>12} {'front door µs':>14}", "-" * 53]
    for n, f in fitted.items():
        lines_.append(f"{n:>12} {f['per_call_s'] * 1e6:8.2f} ±{f['per_call_stderr_s'] * 1e6:4.2f}"
                      f" {f['per_step_s'] * 1e6:7.2f} ±{f['per_step_stderr_s'] * 1e6:4.2f}"
                      f" {f['door_s'] * 1e6:14.2f}")
    return "\n".join(lines_)


def run(args) -> int:
    comm, oversubscribed = core.start("software-cost", why=" (it times exchanges between rank pairs)")
    if oversubscribed is None:
        return 2
    result = measure(comm, args.sizes, args.steps, args.iterations, args.warmup, args.inner,
                     not args.no_progress)
    if comm.Get_rank() != 0:
        return 0
    fitted = lines(result)
    print(f"timing: {core.loop_method(args.inner)}")
    print(report(fitted), flush=True)
    if args.json:
        core.write_json(args.json, {
            "benchmark": "software-cost", "environment": core.environment(comm),
            "oversubscribed": oversubscribed, "load_average_1min": core.load_average(),
            "parameters": core.parameters(args), "timing_method": core.loop_method(args.inner),
            "results": result, "fit": {str(n): f for n, f in fitted.items()}})
        print(f"results written to {args.json}")
    return 0
