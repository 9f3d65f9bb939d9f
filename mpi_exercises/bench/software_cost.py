"""The kit's software cost, measured without the network: what the executor and a front door
cost per call, per step and per block applied (:class:`mpi_exercises.software.SoftwareCost`).

    mpiexec -n 2 python -m mpi_exercises software-cost --json software.json

Method.  Every rank, at the same time (so that they share the memory bus as in a collective),
runs the executor on ``MPI.COMM_SELF``: no message, only the executor's own code.  A local
block (``src == dst``) takes the same path as a received one (a ``copyto`` or an in-place
ufunc, or a scalar operation for one float), so schedules of k steps, each applying m blocks
of n elements, copied or combined (SUM), give per step ``b = step + m apply(n)``: with m = 1
at every length n (``--sizes``) and m = 2 at n = 1, ``step = 2 b_1 - b_2`` and
``apply(n) = b(n) - step``, b the slope of a least-squares line in k (``--steps``).  The
executor's cost per call is an empty schedule's run; the front door's is an allreduce on
``COMM_SELF`` (one rank: no step), its look-up and the copy of the input vector, at each n.
Samples: ``--inner`` back-to-back runs, interleaved over the cases of one length
(:func:`timing.time_interleaved`); the figures are rank 0's minima (noise only adds time).
No collective is timed and no message is sent, so ``predict`` can calibrate on it and
judge on the collectives.
"""

from __future__ import annotations

import sys

import numpy as np

from .. import pages
from ..software import SoftwareCost
from netmodels.outputs import write_json

from . import arguments, placement, records, statistics, timing
STEPS = [1, 4, 16]
#: the lengths (elements) at which copies and combines are timed: powers of 8 from 1 to
#: 256 Ki; predict's default lengths lie between them
SIZES = [8**e for e in range(7)]
KINDS = ("copy", "combine")


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
                   help="comma-separated step counts k of the local schedules (default 1,4,16)")
    p.add_argument("--sizes", type=arguments.size_list_of(8, 4, all_ranks=True), default=SIZES,
                   help="comma-separated block lengths n in float64 elements, >= 1 (default the powers of "
                        "8 from 1 to 256k)")
    arguments.add_inner_option(p)
    arguments.add_options(p, iterations=(200, "timed samples per schedule (default 200)"),
                          warmup=(10, "untimed samples first (default 10)"),
                          json="write the samples and the fitted term to FILE as JSON")


def local_schedule(steps: int, nelems: int, blocks: int = 1, combine: bool = False):
    """One rank, ``steps`` steps, each applying ``blocks`` local blocks of ``nelems``
    elements read from the vector's first ``nelems`` and written after it, copied or combined."""
    from netmodels.algorithms.arrays import ArraySchedule, ArrayStep

    zeros = np.zeros(blocks, dtype=np.int64)
    step = ArrayStep.of(zeros, zeros, 0, nelems, combine, dst_start=nelems * np.arange(1, blocks + 1))
    return ArraySchedule(f"local x{steps}", 1, nelems * (blocks + 1), [step] * steps)


def cases(sizes, steps) -> list[tuple]:
    """``(n, kind, blocks, k)`` of every local schedule timed: each kind at each n with one
    block per step, and copies of one element with two blocks per step."""
    return ([(n, kind, 1, k) for n in sizes for kind in KINDS for k in steps]
            + [(sizes[0], "copy", 2, k) for k in steps])


def measure(comm, sizes, steps, iterations, warmup, inner, progress=True, *, budget_bytes: int = 2**30,
            at_least: int = 30) -> dict | None:
    """Time the local schedules, an empty run and the front door on every rank of ``comm``
    at once, each on ``COMM_SELF`` (collective); on rank 0 ``{"schedules": [{nelems, kind,
    blocks, steps, **summary}], "call": summary, "door": [{nelems, **summary}]}``.  The cases
    of one length are interleaved, the lengths timed one after the other: a small case timed
    right after a large one would pay for the caches the large one emptied, which a
    collective called again and again at one length does not.  A case gets ``iterations`` samples,
    fewer where they would copy more than ``budget_bytes`` in all, but at least ``at_least``."""
    from mpi4py import MPI

    from netmodels.algorithms.arrays import ArraySchedule

    from ..collectives.allreduce import allreduce
    from ..executor import Executor

    self_ = MPI.COMM_SELF
    rank = comm.Get_rank()
    out = {"schedules": [], "door": []}
    empty = Executor(self_, ArraySchedule("empty", 1, 1, []), np.float64, MPI.SUM)
    one = pages.allocate(1, np.float64)
    comm.Barrier()
    for n in records.progress(sizes, desc="software-cost", unit="size", show=rank == 0 and progress):
        todo = [c for c in cases(sizes, steps) if c[0] == n]
        runs, calls = [], []
        for _, kind, blocks, k in todo:
            ex = Executor(self_, local_schedule(k, n, blocks, kind == "combine"), np.float64, MPI.SUM)
            buf = pages.allocate(n * (blocks + 1), np.float64)     # zeros: sums never overflow
            runs.append(ex)
            calls.append(lambda ex=ex, buf=buf: ex.run(buf))
        x, y = pages.copy(np.random.default_rng(rank).random(n)), pages.allocate(n, np.float64)
        calls.append(lambda: allreduce(self_, x, "recursive_doubling", out=y, check=False))
        if n == sizes[0]:
            calls.append(lambda: empty.run(one))
        reps = timing.capped_iterations(n * 8 * 2 * max(steps) * inner, iterations, budget_bytes, at_least=at_least)
        samples = timing.time_interleaved(self_, calls, reps, warmup, inner=inner)
        for ex in runs:
            ex.free()
        out["schedules"] += [{"nelems": n, "kind": kind, "blocks": blocks, "steps": k, **statistics.summarize(row)}
                             for (_, kind, blocks, k), row in zip(todo, samples)]
        out["door"].append({"nelems": n, **statistics.summarize(samples[len(todo)])})
        if n == sizes[0]:
            out["call"] = statistics.summarize(samples[len(todo) + 1])
    empty.free()
    comm.Barrier()
    return out if rank == 0 else None


def _slope(rows, statistic) -> float:
    """The per-step slope (s) of a least-squares line T = a + b k through ``rows``."""
    k = np.array([r["steps"] for r in rows], dtype=float)
    t = np.array([r[statistic] for r in rows])
    return float(np.polyfit(k, t, 1)[0])


def term(result: dict, statistic: str = "min_s") -> SoftwareCost:
    """The :class:`~mpi_exercises.software.SoftwareCost` of a :func:`measure` result (no MPI)."""
    rows = result["schedules"]
    sizes = sorted({r["nelems"] for r in rows})

    def slope(n, kind, blocks=1):
        return _slope([r for r in rows if (r["nelems"], r["kind"], r["blocks"]) == (n, kind, blocks)], statistic)

    b1, b2 = slope(sizes[0], "copy"), slope(sizes[0], "copy", 2)
    step = 2 * b1 - b2
    door = {d["nelems"]: d[statistic] for d in result["door"]}
    return SoftwareCost(tuple(sizes), tuple(door[n] for n in sizes), result["call"][statistic], step,
                        tuple(slope(n, "copy") - step for n in sizes),
                        tuple(slope(n, "combine") - step for n in sizes))


def worst_interval(result: dict) -> tuple[float, str]:
    """The widest median confidence interval of the measurement, relative to its median,
    and which case it belongs to."""
    named = [(r["ci_relative_halfwidth"] or 0.0, f"software-cost {r['kind']} n={r['nelems']} k={r['steps']}")
             for r in result["schedules"]]
    named += [(d["ci_relative_halfwidth"] or 0.0, f"software-cost front door n={d['nelems']}") for d in result["door"]]
    return max(named, key=lambda d: d[0])


def report(sw: SoftwareCost) -> str:
    """The term as a table, in µs."""
    lines = [f"executor: {sw.call * 1e6:.2f} µs per call, {sw.step * 1e6:.2f} µs per step with work",
             f"{'n (elements)':>12} {'front door':>11} {'copy':>9} {'combine':>9}   (µs)", "-" * 46]
    lines += [f"{n:>12} {d * 1e6:11.2f} {c * 1e6:9.2f} {m * 1e6:9.2f}"
              for n, d, c, m in zip(sw.knots, sw.door, sw.copy, sw.combine)]
    return "\n".join(lines)


def run(args) -> int:
    comm, oversubscribed = placement.start("software-cost", min_ranks=1)
    if oversubscribed is None:
        return 2
    if min(args.sizes) < 1:
        if comm.Get_rank() == 0:
            print("software-cost: error: --sizes must be >= 1 element", file=sys.stderr)
        return 2
    result = measure(comm, args.sizes, args.steps, args.iterations, args.warmup, args.inner,
                     not args.no_progress)
    if comm.Get_rank() != 0:
        return 0
    sw = term(result)
    print(f"timing: {timing.loop_method(args.inner)}, on MPI.COMM_SELF (no message), minima of rank 0")
    print(report(sw), flush=True)
    if args.json:
        write_json(args.json, {
            "benchmark": "software-cost", "environment": placement.environment(comm),
            "oversubscribed": oversubscribed, "load_average_1min": placement.load_average(),
            "parameters": records.parameters(args), "timing_method": timing.loop_method(args.inner),
            "results": result, "software": sw.as_dict()})
        print(f"results written to {args.json}")
    return 0
