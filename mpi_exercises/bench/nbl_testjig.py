"""The f(L) test jig of Littlefield (1992), Table 1: how much slower is a node that uses
several links at once?

Rank 0 is the centre node, ranks 1, 2, 3 its neighbours (other ranks wait).  For each
block size S (double-precision elements):

* L = 1: neighbour 1 sends S doubles, the centre receives them;
* L = 2, 4, 6: the centre exchanges S doubles (sends and receives at once) with
  1, 2 or 3 neighbours.

Each sample is ``--inner`` back-to-back operations timed with ``MPI.Wtime`` on the
centre after a barrier, divided by ``--inner`` (:data:`METHOD`).  The (L, S) cases are
measured in interleaved rounds of a recorded random order (:mod:`mpi_exercises.bench.measure`),
``--warmup`` untimed samples before each, ``--repetitions`` samples per case in the first
rounds, then more rounds for the cases whose median's 95 % interval is wider than
``--target`` (within ``--time-budget``); every sample is kept in the JSON.  Table 1 uses
the minimum sample per case by default (``--statistic``).
When a node runs more ranks than it has cores the jig refuses to run (exit 2): ranks
then share cores, a message progresses only while both its ranks are scheduled, and
the "f(L)" measured is the operating system's scheduler (4 ranks on 2 cores gave
f(4) = 35.8 and f(6) = -7.3).  Run it with as many ranks as cores (2 ranks measure
L = 1 and 2), or pass ``--allow-oversubscribed`` to measure anyway: it then warns,
and the JSON and the printed table say ``oversubscribed``.  MPI's blocking waits
spin; when oversubscribed (``--wait auto``) every wait polls and yields the core
instead, so that a waiting rank does not starve the ranks it waits for.
As in the paper, dT(L) is the difference of the times at adjacent block sizes
and f(L) = dT(L) / dT(1); :func:`netmodels.models.nbl_fit.fit_f` also fits f(L) over all sizes.
Rank 0 finally times numpy combines of two and three vectors of the largest size: the
c2 and c3 of the model, in seconds per element.

    mpiexec -n 4 python -m mpi_exercises nbl-testjig --json testjig.json   # 4 cores or more
    mpiexec -n 2 python -m mpi_exercises nbl-testjig --json testjig.json   # 2 cores: L = 1, 2
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from .. import pages
from . import arguments, placement, records, statistics
from . import measure as sampling

DEFAULT_SIZES = [60, 120, 300, 600, 6000, 60000]

#: how a sample is taken, in words (printed and stored in the JSON)
METHOD = ("nbl-testjig: a barrier, then --inner back-to-back L-link operations timed on the centre rank, "
          "time / inner; separate send and receive buffers")


def element_sizes(text: str) -> list[int]:
    """argparse type: at least 2 distinct block sizes >= 1 (elements), comma-separated."""
    import argparse

    sizes = arguments.size_list_of(8, 13)(text)
    if len(sizes) < 2 or sizes[0] < 1:
        raise argparse.ArgumentTypeError(
            f"need at least 2 distinct block sizes >= 1 (f(L) is a ratio of differences), got {text!r}")
    return sizes


element_sizes.unit_bytes = 8      #: the sizes count doubles (for the run's estimate)


def add_arguments(p) -> None:
    p.add_argument("--sizes", type=element_sizes, default=DEFAULT_SIZES,
                   help="comma-separated block sizes in double-precision ELEMENTS, at least 2 "
                        "(default: the paper's 60,120,300,600 and 6000,60000)")
    p.add_argument("--inner", type=arguments.positive_int, default=10,
                   help="back-to-back operations per sample (default 10)")
    p.add_argument("--statistic", choices=("min", "median"), default="min",
                   help="which time per (L, size) enters Table 1 and the fit (default min: the "
                        "sample least disturbed by other processes)")
    p.add_argument("--wait", choices=("auto", "block", "yield"), default="auto",
                   help="how ranks wait: 'block' (MPI's waits, which spin), 'yield' (poll and give "
                        "the core to another rank between polls), 'auto' (yield when oversubscribed)")
    p.add_argument("--allow-oversubscribed", action="store_true",
                   help="measure even when ranks outnumber cores (default: refuse); the results "
                        "are then marked oversubscribed: they time the scheduler, not the links")
    arguments.add_options(p, repetitions=(30, "timed samples per (L, size) (default 30)"),
                     warmup=(3, "untimed samples before each (L, size) (default 3)"))
    sampling.add_options(p)


def link_counts(nprocs: int) -> list[int]:
    """The L values a run on ``nprocs`` ranks can measure: 1 and 2k for k neighbours."""
    return [1] + [2 * k for k in range(1, min(3, nprocs - 1) + 1)]


def _wait(reqs, yield_cpu: bool) -> None:
    """Wait for all requests; with ``yield_cpu`` poll and give the core away between polls."""
    from mpi4py import MPI

    if not yield_cpu:
        MPI.Request.Waitall(reqs)
        return
    while not MPI.Request.Testall(reqs):
        os.sched_yield() if hasattr(os, "sched_yield") else time.sleep(0)


def _operation(comm, L, sendbuf, recvbufs, tag, yield_cpu=False):
    """One L-link operation.  Ranks not involved return at once."""
    from mpi4py import MPI

    rank = comm.Get_rank()
    reqs = []
    if L == 1:
        if rank == 0:
            reqs = [comm.Irecv([recvbufs[0], MPI.DOUBLE], source=1, tag=tag)]
        elif rank == 1:
            reqs = [comm.Isend([sendbuf, MPI.DOUBLE], dest=0, tag=tag)]
    else:
        k = L // 2
        if rank == 0:
            reqs = [comm.Irecv([recvbufs[i], MPI.DOUBLE], source=i + 1, tag=tag) for i in range(k)]
            reqs += [comm.Isend([sendbuf, MPI.DOUBLE], dest=i + 1, tag=tag) for i in range(k)]
        elif rank <= k:
            reqs = [comm.Irecv([recvbufs[0], MPI.DOUBLE], source=0, tag=tag),
                    comm.Isend([sendbuf, MPI.DOUBLE], dest=0, tag=tag)]
    if reqs:
        _wait(reqs, yield_cpu)


def _barrier(comm, yield_cpu: bool) -> None:
    if yield_cpu:
        _wait([comm.Ibarrier()], True)
    else:
        comm.Barrier()


def sweep(comm, sizes, repetitions, inner, warmup, progress=True, yield_cpu=False,
          **options) -> tuple[list[dict], dict]:
    """Run the jig (collective) in interleaved rounds: ``(per-(L, S) summaries, the rounds'
    record)`` on rank 0, ``([], record)`` elsewhere.  Without ``target`` every case gets
    exactly ``repetitions`` samples.  ``options``: those of
    :func:`~mpi_exercises.bench.measure.interleaved_rounds`."""
    from mpi4py import MPI

    rank = comm.Get_rank()
    Ls = link_counts(comm.Get_size())
    sendbuf_all = pages.allocate(max(sizes), np.float64)
    sendbuf_all[:] = rank + 1
    recv_all = [pages.allocate(max(sizes), np.float64) for _ in range(3)]
    cases = [(L, S) for L in Ls for S in sizes]

    def run(case, reps):
        L, S = case
        tag = cases.index(case)
        sendbuf, recvbufs = sendbuf_all[:S], [r[:S] for r in recv_all]
        samples = np.empty(reps)
        for i in range(-warmup, reps):
            _barrier(comm, yield_cpu)
            t0 = MPI.Wtime()
            for _ in range(inner):
                _operation(comm, L, sendbuf, recvbufs, tag, yield_cpu)
            dt = (MPI.Wtime() - t0) / inner
            if i >= 0:
                samples[i] = dt
        if rank == 0 and S and recvbufs[0][0] != 2.0:  # what neighbour 1 sent
            raise RuntimeError(f"test jig received {recvbufs[0][0]} instead of 2.0")
        return samples

    taken, info = sampling.interleaved_rounds(comm, cases, run, lambda c: repetitions, desc="f(L) test jig",
                                              progress=progress, **options)
    if rank != 0:
        return [], info
    return [{**statistics.summarize(taken[(L, S)]), "L": L, "S": S, "bytes": 8 * S} for L, S in cases], info


def measure(comm, sizes, repetitions, inner, warmup, progress=True, yield_cpu=False, **options) -> list[dict]:
    """:func:`sweep`'s per-(L, S) summaries on rank 0 (empty list elsewhere)."""
    return sweep(comm, sizes, repetitions, inner, warmup, progress, yield_cpu, **options)[0]


def combine_costs(nelems: int, repetitions: int = 20) -> dict:
    """c2 and c3 in seconds per element: the fastest of ``repetitions`` numpy combines of
    two (``x += y``) and three (``x += y; x += z``) vectors of ``nelems`` doubles."""
    from mpi4py import MPI

    x, y, z = (np.random.default_rng(i).random(nelems) for i in range(3))
    best2 = best3 = float("inf")
    for _ in range(repetitions + 2):
        t0 = MPI.Wtime()
        np.add(x, y, out=x)
        t1 = MPI.Wtime()
        np.add(x, y, out=x)
        np.add(x, z, out=x)
        t2 = MPI.Wtime()
        best2, best3 = min(best2, t1 - t0), min(best3, t2 - t1)
    return {"c2_s_per_elem": best2 / nelems, "c3_s_per_elem": best3 / nelems, "nelems": nelems}


def table(results: list[dict], stat: str = "median_s") -> dict:
    """Table 1 from the results: T, dT and f(L) = dT(L)/dT(1) per L, and a least-squares f(L)."""
    from netmodels.models.nbl_fit import f_from_testjig, fit_f

    Ls = sorted({r["L"] for r in results})
    S = sorted({r["S"] for r in results})
    T = {L: np.array([next(r[stat] for r in results if r["L"] == L and r["S"] == s) for s in S])
         for L in Ls}
    out = {"S": S, "T_s": {str(L): T[L].tolist() for L in Ls}, "statistic": stat}
    try:
        dT, f = f_from_testjig(S, T)
        out["dT_s"] = {str(L): v.tolist() for L, v in dT.items()}
        out["f"] = {str(L): v.tolist() for L, v in f.items()}
    except ValueError as exc:  # timing noise can make dT(1) <= 0 on a busy machine
        out["dT_s"], out["f"], out["warning"] = None, None, str(exc)
    try:
        fitted, beta, icpt = fit_f(S, T)
        out["fit"] = {"f": {str(L): v for L, v in fitted.items()}, "beta_s_per_elem": beta,
                      "intercept_s": {str(L): v for L, v in icpt.items()}}
    except ValueError as exc:
        out["fit"] = None
        out["warning"] = str(exc)
    return out


OVERSUBSCRIBED_NOTE = ("OVERSUBSCRIBED: ranks outnumber cores; these times measure the operating "
                       "system's scheduler, not the links: do not use this f(L)")


def report(tab: dict, oversubscribed: bool = False) -> str:
    """Table 1 layout: S, then T (µs) per L, dT and f(L); a warning line first if oversubscribed."""
    Ls = list(tab["T_s"])
    head = f"{'S':>8} " + " ".join(f"{'T(L=' + L + ') µs':>13}" for L in Ls)
    lines = ([OVERSUBSCRIBED_NOTE] if oversubscribed else []) + [head, "-" * len(head)]
    for i, s in enumerate(tab["S"]):
        lines.append(f"{s:>8} " + " ".join(f"{tab['T_s'][L][i] * 1e6:13.2f}" for L in Ls))
    if tab.get("f"):
        lines += ["", "f(L) = dT(L)/dT(1) between adjacent sizes:"]
        for i in range(len(tab["S"]) - 1):
            lines.append(f"  {tab['S'][i]:>7} -> {tab['S'][i + 1]:<7} "
                         + " ".join(f"f({L})={tab['f'][L][i]:6.2f}" for L in Ls[1:]))
    if tab.get("fit"):
        fit = tab["fit"]
        lines += ["", "Least-squares over all sizes (T(L) = a_L + f(L) beta S):",
                  f"  beta = {fit['beta_s_per_elem'] * 1e9:.3f} ns per element; "
                  + " ".join(f"f({L}) = {v:.2f}" for L, v in fit["f"].items())]
    if tab.get("warning"):
        lines.append(f"WARNING: {tab['warning']}")
    return "\n".join(lines)


def run(args) -> int:
    sizes = args.sizes
    comm, oversubscribed = placement.start("nbl-testjig", suggest=4, why=" (4 for L = 1, 2, 4, 6)", advised=4,
                                      advised_why="f(4) needs 3 ranks and f(6) 4: they are not measured")
    if oversubscribed is None:
        return 2
    if oversubscribed and not args.allow_oversubscribed:
        if comm.Get_rank() == 0:
            print("nbl-testjig: refusing to measure f(L) with ranks sharing cores (it would time the "
                  "scheduler); run with at most as many ranks as cores, or pass --allow-oversubscribed",
                  file=sys.stderr, flush=True)
        return 2
    yield_cpu = args.wait == "yield" or (args.wait == "auto" and oversubscribed)
    options = sampling.options_from(comm, args)
    results, rounds = sweep(comm, sizes, args.repetitions, args.inner, args.warmup, not args.no_progress,
                            yield_cpu, **options)
    if comm.Get_rank() == 0:
        print(sampling.header(METHOD, rounds))
        tab = table(results, args.statistic + "_s")
        combine = combine_costs(max(sizes))
        print(report(tab, oversubscribed), flush=True)
        print(f"combining (numpy, {combine['nelems']} doubles): c2 = {combine['c2_s_per_elem'] * 1e9:.3f} ns, "
              f"c3 = {combine['c3_s_per_elem'] * 1e9:.3f} ns per element", flush=True)
        records.save(comm, args.json, "nbl-testjig", oversubscribed,
                  {"sizes_elements": sizes, "repetitions": args.repetitions, "inner": args.inner,
                   "warmup": args.warmup, "statistic": args.statistic, "wait": "yield" if yield_cpu else "block",
                   "links": link_counts(comm.Get_size()), **options},
                  timing_method=METHOD, rounds=rounds, results=results, table=tab, combine=combine)
    return 0
