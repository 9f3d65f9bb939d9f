"""The kit's software cost: what running a schedule through the executor and a front door
costs beyond its messages.

    mpiexec -n 2 python -m mpi_exercises software-cost --json software.json

Method.  Schedules of k steps between the rank pairs r and r XOR 1 (an odd last rank sits
out), n float64 elements per message, one schedule for each kind of step that
:mod:`netmodels.models.software` tells apart: *exchange* steps, in which both ranks of a
pair send and receive, and *one-way* steps, in which one rank of each pair sends and the
other receives, the direction alternating (a ping-pong run by the executor); each either
*combined* (what arrives is added by SUM) or copied.  For k in ``--steps`` (2k one-way
steps, :func:`steps_of`) and n in ``--sizes`` they are run by the executor
(``Executor.run``, the path of a barrier and of every collective after its front door),
interleaved, ``--inner`` back-to-back runs after one barrier, the slowest rank's time
(:func:`core.time_interleaved`).  Per n one least-squares fit of all of them gives
T = a(n) + b_kind(n) k: a(n) is the executor's cost per call, b_kind(n) its cost per step
of each kind, the message included.  The front door's own cost per call is its look-up (the allgather
front door, ring, ``check=False``, against the executor running the same schedule) plus the
copy of the input vector (:func:`door_cost`).  No allreduce and no barrier is timed, so ``predict`` can calibrate on this benchmark
and judge on those.  :func:`netmodels.models.software.residual` turns the lines into each
model's software term.
"""

from __future__ import annotations

import sys

import numpy as np

from netmodels.models.software import STEP_KINDS

from .. import pages
from . import core

STEPS = [1, 2, 4, 8, 16]
#: 0 and every power of two from 8 to 128 Ki elements: the step cost is not linear in n (it
#: jumps where MPI switches protocol, between 4 and 8 KiB on MPICH over UCX), and the term is
#: interpolated between these knots
SIZES = [0] + [2**e for e in range(3, 18)]

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
                   help="comma-separated vector lengths n in float64 elements (default 0 and the powers "
                        "of two from 8 to 128k)")
    p.add_argument("--iterations", type=core.sample_count, default=200,
                   help="timed samples per schedule (default 200)")
    p.add_argument("--warmup", type=core.nonneg_int, default=10, help="untimed samples first (default 10)")
    core.add_inner_option(p)
    p.add_argument("--json", metavar="FILE", help="write the samples and the fitted lines to FILE as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def exchange_schedule(nprocs: int, steps: int, nelems: int, combine: bool = True):
    """``steps`` steps of pairwise exchanges of the whole vector (rank r with r ^ 1),
    combined or (``combine=False``) copied."""
    from netmodels.algorithms.arrays import ArraySchedule, ArrayStep

    ranks = np.arange(nprocs - nprocs % 2)
    step = ArrayStep.of(ranks, ranks ^ 1, 0, nelems, combine)
    return ArraySchedule(f"exchange x{steps}", nprocs, nelems, [step] * steps)


def oneway_schedule(nprocs: int, steps: int, nelems: int, combine: bool = True):
    """``steps`` one-way steps of the whole vector, combined or copied: in step t the ranks r
    with r % 2 == t % 2 send to r ^ 1 (the pairs take turns, as in a ping-pong)."""
    from netmodels.algorithms.arrays import ArraySchedule, ArrayStep

    ranks = np.arange(nprocs - nprocs % 2)
    turns = [ArrayStep.of(ranks[ranks % 2 == t], ranks[ranks % 2 == t] ^ 1, 0, nelems, combine) for t in (0, 1)]
    return ArraySchedule(f"one-way x{steps}", nprocs, nelems, [turns[t % 2] for t in range(steps)])


def schedule_of(kind: str, nprocs: int, steps: int, nelems: int):
    """The calibration schedule of ``steps`` steps of one kind
    (:data:`~netmodels.models.software.STEP_KINDS`)."""
    build = exchange_schedule if kind.startswith("exchange") else oneway_schedule
    return build(nprocs, steps, nelems, kind.endswith("combined"))


def steps_of(kind: str, k: int) -> int:
    """Steps of the ``kind`` schedule timed for the step count ``k``: k exchange steps, 2k
    one-way steps.  A one-way schedule must have an even number of steps: the runs are timed
    back to back, and with an odd count the last step of one run and the first of the next
    send the same way, so a sender would not wait for its partner and the runs overlap."""
    return k if kind.startswith("exchange") else 2 * k


def measure(comm, sizes, steps, iterations, warmup, inner, progress=True) -> dict:
    """Time the calibration schedules, the front door, its executor and the copy of an
    n-element vector (collective); on rank 0 ``{"executor": [{nelems, kind, steps,
    **summary}], "door": [{nelems, copy: summary, door: summary, executor: summary}]}``,
    elsewhere None."""
    from mpi4py import MPI
    from tqdm import tqdm

    from netmodels.algorithms import registry

    from ..collectives.allgather import allgather
    from ..executor import Executor

    P, rank = comm.Get_size(), comm.Get_rank()
    out = {"executor": [], "door": []}
    for n in tqdm(sizes, desc="software-cost", unit="size", file=sys.stderr,
                  disable=(rank != 0) or not progress or None):
        buf = pages.allocate(n, np.float64)   # sums of zeros: the adds run, the values never overflow
        cases = [(kind, steps_of(kind, k)) for kind in STEP_KINDS for k in steps]
        runs = [Executor(comm, schedule_of(kind, P, k, n), np.float64, MPI.SUM) for kind, k in cases]
        x, gathered = pages.copy(np.random.default_rng(rank).random(n)), pages.allocate((P, n), np.float64)
        direct = Executor(comm, registry.build(".".join(DOOR), P, n), np.float64, None)
        calls = [lambda ex=ex: ex.run(buf) for ex in runs]
        flat = gathered.reshape(-1)    # one view: a new one per call would rebind the requests every time
        copied = pages.allocate(n, np.float64)
        calls += [lambda: np.copyto(copied, x),
                  lambda: allgather(comm, x, DOOR[1], out=gathered, check=False),
                  lambda: direct.run(flat)]
        reps = core.capped_iterations(n * 8 * sum(steps) * inner, iterations, 2**30, at_least=30)
        samples = core.time_interleaved(comm, calls, reps, warmup, inner=inner)
        for ex in runs + [direct]:
            ex.free()
        if rank == 0:
            out["executor"] += [{"nelems": n, "kind": kind, "steps": k, **core.summarize(row)}
                                for (kind, k), row in zip(cases, samples[:len(cases)])]
            out["door"].append({"nelems": n, "copy": core.summarize(samples[-3]),
                                "door": core.summarize(samples[-2]), "executor": core.summarize(samples[-1])})
    return out if rank == 0 else None


def lines(result: dict, statistic: str = "median_s") -> dict:
    """Per vector length n, one least-squares fit of T = a + b_kind k over the rows of every
    kind (rows without a ``kind`` are combined exchanges; ``steps`` counts the schedule's
    steps): the executor's a(n) (s per call) and per kind b_kind(n) (s per step), with
    their standard errors (NaN when the rows leave no degree of freedom), and the front
    door's own cost per call (s, :func:`door_cost`) (no MPI)."""
    out = {}
    door_of = door_cost(result["door"], statistic)
    for n in dict.fromkeys(r["nelems"] for r in result["executor"]):
        rows = [r for r in result["executor"] if r["nelems"] == n]
        kinds = list(dict.fromkeys(r.get("kind", "exchange, combined") for r in rows))
        design = np.zeros((len(rows), 1 + len(kinds)))
        design[:, 0] = 1.0
        for i, r in enumerate(rows):
            design[i, 1 + kinds.index(r.get("kind", "exchange, combined"))] = r["steps"]
        t = np.array([r[statistic] for r in rows])
        coef, _, _, _ = np.linalg.lstsq(design, t, rcond=None)
        err = np.full(coef.size, np.nan)
        dof = len(rows) - coef.size
        if dof > 0:
            resid = t - design @ coef
            err = np.sqrt(np.diag(np.linalg.inv(design.T @ design)) * (resid @ resid) / dof)
        out[n] = {"per_call_s": float(coef[0]), "per_call_stderr_s": float(err[0]),
                  "per_step_s": {kind: float(coef[1 + i]) for i, kind in enumerate(kinds)},
                  "per_step_stderr_s": {kind: float(err[1 + i]) for i, kind in enumerate(kinds)},
                  "door_s": door_of[n]}
    return out


def door_cost(doors: list[dict], statistic: str = "median_s") -> dict:
    """The front door's own cost per call (s) at each length n: its look-up and checks, the
    allgather door less its executor and less the copy at the smallest length, plus the copy
    of the n-element input vector into the output, timed alone at each length (what the
    allreduce door does before its executor runs).  Beyond the smallest length the allgather
    door's own difference is not used: it grows several times faster than its copy (on this
    book's 2-core machine 135 µs against 20 µs for the allreduce door at 128 Ki elements),
    the freshly written block being sent at once.  Rows without a ``copy`` (the benchmark's
    first version): the door less its executor at each length."""
    if any("copy" not in d for d in doors):
        return {d["nelems"]: float(d["door"][statistic] - d["executor"][statistic]) for d in doors}
    first = min(doors, key=lambda d: d["nelems"])
    lookup = first["door"][statistic] - first["executor"][statistic] - first["copy"][statistic]
    return {d["nelems"]: float(lookup + d["copy"][statistic]) for d in doors}


def report(fitted: dict) -> str:
    """The fitted lines as a table, in µs with their standard errors."""
    kinds = list(dict.fromkeys(kind for f in fitted.values() for kind in f["per_step_s"]))
    lines_ = ["per step, by kind of step (µs, ± standard error):",
              f"{'n (elements)':>12} {'per call':>13}" + "".join(f" {kind:>20}" for kind in kinds)
              + f" {'front door':>11}"]
    lines_.append("-" * len(lines_[-1]))
    for n, f in fitted.items():
        cells = [f"{f['per_call_s'] * 1e6:7.2f} ±{f['per_call_stderr_s'] * 1e6:4.2f}"]
        cells += [f"{f['per_step_s'][kind] * 1e6:14.2f} ±{f['per_step_stderr_s'][kind] * 1e6:4.2f}"
                  if kind in f["per_step_s"] else f"{'-':>20}" for kind in kinds]
        lines_.append(f"{n:>12} " + " ".join(cells) + f" {f['door_s'] * 1e6:11.2f}")
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
