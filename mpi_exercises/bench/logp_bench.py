"""Measure LogGP parameters (L, o_s, o_r, g, G) with Netgauge's PRTT(n, d, s) method.

Method (Hoefler, Lichei & Rehm 2007, as implemented in Netgauge's ``loggp`` pattern):
a parametrised round trip PRTT(n, d, s) is timed on rank 0 (the client): it sends n
messages of s bytes to rank 1, pausing d seconds (busy wait) after each but the last,
and rank 1 (the server) answers with one s-byte message once all n have arrived.  Per
size s three of them are measured, PRTT(1,0,s), PRTT(n,0,s) and PRTT(n,d,s) with
d = PRTT(1,0,s) (longer than any gap), and :func:`netmodels.models.logp_fit.fit_prtt` turns
them into g and G (lines through the gap (PRTT(n,0,s) - PRTT(1,0,s))/(n-1) over s - 1: G
the slope over the long sizes, whose gap is at least twice the smallest, when two or more were
measured and one exceeds 64 KiB, g the intercept over the shorter sizes where that gap exceeds the send overhead; one
line over the latter when fewer than two long sizes were measured, as with the default sizes;
g is reported as not identifiable when fewer than two sizes are gap-bound), o_s(s)
((PRTT(n,d,s) - PRTT(1,0,s))/(n-1) - d) and L.  o_r(s) is timed on the server: the
time of a receive whose message has certainly arrived (the server waits d first).  As
a cross-check the time of the client's blocking send, o_s(direct), is recorded too.

    mpiexec -n 2 python -m mpi_exercises logp --json logp.json

Before the sweep the connection and the whole buffers are warmed up (untimed round trips,
as in the ping-pong), so the first size is not charged the set-up; messages are sent from
one buffer and received into another.  Sampling is the measurement core's
(:mod:`mpi_exercises.bench.measure`): first PRTT(1,0,s) of every size, in interleaved
rounds, to fix d; then PRTT(n,0,s), PRTT(n,d,s), o_s(direct) and o_r of every size, all
interleaved in rounds of a recorded random order, ``--warmup`` untimed runs before each,
``--repetitions`` samples per case in the first rounds, then more rounds for the cases whose
median's 95 % interval is wider than ``--target`` (within ``--time-budget``).  The fit uses
medians (as Netgauge does); every sample, the quartiles and the medians' intervals are in the
JSON, with a second fit to the minima (``fit_min``), more robust on a shared machine.
"""

from __future__ import annotations

import sys

import numpy as np

from netmodels.models import logp_fit

from . import arguments, placement, records, statistics
from . import measure as sampling

DEFAULT_SIZES = [0, 1, 8, 64, 256, 1024, 2048, 4096, 8192, 16384]

#: how the samples are taken, in words (printed and stored in the JSON)
METHOD = ("logp: PRTT(n, d, s) timed on rank 0 from its first send to the answer's arrival, one run per "
          "sample; o_s(direct) the time of a blocking send on rank 0, o_r that of a receive whose message "
          "has arrived on rank 1; separate send and receive buffers")


def add_arguments(p) -> None:
    p.add_argument("--sizes", type=arguments.size_list, default=DEFAULT_SIZES,
                   help="comma-separated message sizes in bytes, suffix k/M allowed "
                        "(default 0,1,8,64,256,1k,2k,4k,8k,16k)")
    p.add_argument("--n", type=arguments.int_at_least(2), default=10, help="messages per PRTT(n, d, s) (default 10, >= 2)")
    arguments.add_options(p, repetitions=(200, "timed samples of each PRTT per size (default 200)"),
                     warmup=(20, "untimed runs first (default 20)"), json="write raw data and fit to FILE as JSON")
    sampling.add_options(p)


def _spin(seconds: float, wtime) -> None:
    """Busy-wait (a sleep would hand the core to the OS and wake up late)."""
    t = wtime()
    while wtime() - t < seconds:
        pass


def _prtt(comm, msg, back, n, d, reps, warmup):
    """Samples of PRTT(n, d, len(msg)) on rank 0 (rank 1 serves; messages are sent from
    ``msg`` and received into ``back``, of the same size); empty elsewhere."""
    from mpi4py import MPI

    rank, wtime = comm.Get_rank(), MPI.Wtime
    out = np.empty(reps)
    for i in range(-warmup, reps):
        if rank == 0:
            t0 = wtime()
            for k in range(n):
                comm.Send([msg, MPI.BYTE], dest=1, tag=7)
                if d > 0 and k < n - 1:
                    _spin(d, wtime)
            comm.Recv([back, MPI.BYTE], source=1, tag=8)
            if i >= 0:
                out[i] = wtime() - t0
        elif rank == 1:
            for _ in range(n):
                comm.Recv([back, MPI.BYTE], source=0, tag=7)
            comm.Send([msg, MPI.BYTE], dest=0, tag=8)
    return out


def _overheads(comm, msg, back, d, reps, warmup):
    """(o_s direct on rank 0, o_r on rank 1) samples: time of a Send, of a Recv already arrived."""
    from mpi4py import MPI

    rank, wtime = comm.Get_rank(), MPI.Wtime
    out = np.empty(reps)
    for i in range(-warmup, reps):
        if rank == 0:
            t0 = wtime()
            comm.Send([msg, MPI.BYTE], dest=1, tag=9)
            t = wtime() - t0
            comm.Recv([msg[:0], MPI.BYTE], source=1, tag=10)
        elif rank == 1:
            _spin(d, wtime)                 # the message has arrived by now
            t0 = wtime()
            comm.Recv([back, MPI.BYTE], source=0, tag=9)
            t = wtime() - t0
            comm.Send([msg[:0], MPI.BYTE], dest=0, tag=10)
        if rank in (0, 1) and i >= 0:
            out[i] = t
    return out


#: the cases measured at every size once d is known
KINDS = ("prtt_n_0", "prtt_n_d", "o_s_direct", "o_r")


def sweep(comm, sizes, n, reps, warmup, progress=True, *, d: dict | None = None,
          budget_bytes: int | None = None, at_least: int = 10, **options) -> tuple[list[dict], dict]:
    """The PRTT sweep on ranks 0 and 1 (collective), in interleaved rounds: ``(per-size
    summaries (s), the rounds' record)`` on rank 0, ``([], record)`` elsewhere.  Without
    ``target`` every case gets exactly ``reps`` samples, or, with ``budget_bytes``, as the
    ping-pong's byte budget: at a size s, ``reps`` capped so that samples x n x s stay within
    ``budget_bytes`` but at least ``at_least`` (a PRTT(n, d, 2 MiB) sends n such messages and
    waits n - 1 times d, a few ms), its warm-up runs capped alike (at least one).  ``options``:
    those of :func:`~mpi_exercises.bench.measure.interleaved_rounds` (the second part draws
    its orders from ``seed + 1``).  ``d``: the delay (s) of PRTT(n, d, s) per size, instead of
    this sweep's own medians of PRTT(1, 0, s): sweeps whose samples are pooled share one d."""
    from mpi4py import MPI

    from . import timing
    from .pingpong import buffers, warm_up

    if budget_bytes is not None and not (isinstance(budget_bytes, int) and budget_bytes >= 1):
        raise ValueError(f"budget_bytes must be an integer >= 1 (None: no budget), got {budget_bytes!r}")
    if not (isinstance(at_least, int) and at_least >= 1):
        raise ValueError(f"at_least must be an integer >= 1, got {at_least!r}")

    def capped(s, k, least):
        return k if budget_bytes is None else timing.capped_iterations(n * s, k, budget_bytes, at_least=least)

    rank = comm.Get_rank()
    send, recv = buffers(max(sizes) or 1)
    warm_up(comm, send, recv, warmup)            # connection set-up and page faults, untimed
    d_of: dict = {}

    def run(case, count):
        kind, s = case
        msg, back = send[:s], recv[:s]
        warm = capped(s, warmup, 1)
        if kind in ("prtt_1_0", "prtt_n_0", "prtt_n_d"):
            return _prtt(comm, msg, back, 1 if kind == "prtt_1_0" else n, d_of.get(s, 0.0) if kind == "prtt_n_d"
                         else 0.0, count, warm)
        ov = _overheads(comm, msg, back, d_of[s], count, warm)
        if kind == "o_s_direct" or rank not in (0, 1):
            return ov
        if rank == 1:
            comm.Send([ov, MPI.DOUBLE], dest=0, tag=11)
            return ov
        o_r = np.empty(count)
        comm.Recv([o_r, MPI.DOUBLE], source=1, tag=11)
        return o_r

    first, info1 = sampling.interleaved_rounds(comm, [("prtt_1_0", s) for s in sizes], run,
                                               lambda c: capped(c[1], reps, at_least),
                                               desc="PRTT(1,0)", progress=progress, **options)
    for s in sizes:                   # d: longer than any gap (rank 0's median of PRTT(1, 0, s))
        d_of[s] = float(d[s]) if d is not None else \
            comm.bcast(float(np.median(first[("prtt_1_0", s)])) if rank == 0 else None, root=0)
    rest, info2 = sampling.interleaved_rounds(comm, [(k, s) for s in sizes for k in KINDS], run,
                                              lambda c: capped(c[1], reps, at_least),
                                              desc="PRTT", progress=progress,
                                              **{**options, "seed": options.get("seed", 0) + 1})
    info = {"prtt_1_0": info1, "others": info2}
    if rank != 0:
        return [], info
    return [{"bytes": s, "d_s": d_of[s], "prtt_1_0": statistics.summarize(first[("prtt_1_0", s)]),
             **{k: statistics.summarize(rest[(k, s)]) for k in KINDS}} for s in sizes], info


def measure(comm, sizes, n, reps, warmup, progress=True, **options) -> list[dict]:
    """:func:`sweep`'s per-size summaries (rank 0; an empty list elsewhere; ``options``: :func:`sweep`'s)."""
    return sweep(comm, sizes, n, reps, warmup, progress, **options)[0]


def fit(results: list[dict], n: int, statistic: str = "median_s") -> dict:
    """LogGP from the medians (or ``statistic="min_s"``) by ``netmodels.models.logp_fit.fit_prtt`` (s, s/B).

    Minima are the better estimate on a machine shared with other jobs: noise only
    ever adds time.
    """
    from netmodels.models.logp_fit import fit_results

    col = lambda key: [r[key][statistic] for r in results]  # noqa: E731
    f = fit_results(results, n, statistic)
    finite = lambda v: v if np.isfinite(v) else None  # noqa: E731  (JSON has no NaN)
    return {"statistic": statistic, "L_s": f.L, "L_identified": f.L_identified,
            "L_unconstrained_s": f.L_unconstrained, "o_s_s": f.o_s, "o_r_s": f.o_r, "g_s": finite(f.g),
            "G_s_per_byte": finite(f.G), "G_unconstrained_s_per_byte": finite(f.G_unconstrained), "n": n, "g_identified": f.g_identified, "g_upper_s": f.g_upper,
            "gap_fit_sizes": list(f.gap_sizes), "G_fit_sizes": list(f.G_sizes), "G_long": f.G_long,
            "G_short_s_per_byte": finite(f.G_short), "L_by_size_s": list(f.L_by_size),
            "o_s_by_size_s": list(f.o_s_by_size), "gap_by_size_s": list(f.gap_by_size),
            "o_r_by_size_s": col("o_r"), "o_s_direct_by_size_s": col("o_s_direct"),
            "outliers": [{"parameter": p, "bytes": b, "value_s": v} for p, b, v in f.outliers],
            "left_out": f.dropped()}


def G_source(fitted: dict) -> str:
    """From which sizes a fit's g and G come, in words (:func:`fit`'s dict; older fits, without
    ``G_fit_sizes``, fitted both to ``gap_fit_sizes``)."""
    sizes = lambda key: ", ".join(records.fmt_bytes(s) for s in fitted[key])  # noqa: E731
    if fitted.get("G_long"):
        return (f"G the gap per byte of the long messages, {sizes('G_fit_sizes')} (gap >= "
                f"{logp_fit.LONG_GAP_FACTOR:g} x the smallest); g from {sizes('gap_fit_sizes')}")
    return (f"g and G fitted to the sizes whose gap exceeds o_s: {sizes('gap_fit_sizes')}; no long messages "
            f"measured (two sizes with a gap >= {logp_fit.LONG_GAP_FACTOR:g} x the smallest, one above "
            f"{records.fmt_bytes(logp_fit.LONG_BYTES)}), so G is the short messages' time per byte")


def report(results: list[dict], fitted: dict) -> str:
    n = fitted["n"]
    lines = [f"{'size':>9} {'PRTT(1,0)':>10} {f'PRTT({n},0)':>11} {f'PRTT({n},d)':>11} {'o_s':>7} "
             f"{'o_s dir':>8} {'o_r':>7}   (µs, medians)", "-" * 72]
    for r, os_ in zip(results, fitted["o_s_by_size_s"]):
        lines.append(f"{records.fmt_bytes(r['bytes']):>9} {r['prtt_1_0']['median_s'] * 1e6:10.2f} "
                     f"{r['prtt_n_0']['median_s'] * 1e6:11.2f} {r['prtt_n_d']['median_s'] * 1e6:11.2f} "
                     f"{os_ * 1e6:7.2f} {r['o_s_direct']['median_s'] * 1e6:8.2f} {r['o_r']['median_s'] * 1e6:7.2f}")
    G, g, L = fitted["G_s_per_byte"], fitted["g_s"], fitted["L_s"]
    lines += ["", f"LogGP (Netgauge PRTT method, from the {fitted['statistic'][:-2]}s):",
              (f"  L   = {L * 1e6:8.3f} µs" if fitted.get("L_identified", L >= 0) else
               f"  L   = not identifiable (constrained to 0; unconstrained estimate "
               f"{fitted['L_unconstrained_s'] * 1e6:.3f} µs)"), f"  o_s = {fitted['o_s_s'] * 1e6:8.3f} µs",
              f"  o_r = {fitted['o_r_s'] * 1e6:8.3f} µs"]
    if fitted["g_identified"]:
        lines += [f"  g   = {g * 1e6:8.3f} µs", f"  G   = {G * 1e9:8.4f} ns/B"
                  + (f"   (1/G = {1e-6 / G:.0f} MB/s)" if G > 0 else ""), f"  ({G_source(fitted)})"]
    else:
        lines += ["  g   = not identifiable: at every size but at most one the gap is the send overhead "
                  "o_s(s);", f"        g <= {fitted['g_upper_s'] * 1e6:.3f} µs (the smallest gap), G unknown"]
    if fitted.get("outliers"):
        lines += ["  left out by the medians (the fit is robust to them):"] + [
            f"    {o['parameter']} at {records.fmt_bytes(o['bytes'])}: {o['value_s'] * 1e6:.3f} µs"
            for o in fitted["outliers"]]
    if not fitted.get("L_identified", L >= 0):
        lines += ["", "warning: the overheads measured alone (o_s + o_r) exceed half the round trip by "
                  f"{-fitted['L_unconstrained_s'] * 1e6:.3f} µs;",
                  "  they overlap in a round trip (shared memory), or other jobs disturbed the run: check "
                  "the load (uptime), re-run on a quiet machine with --repetitions 1000; if L stays < 0, "
                  "latency and overhead cannot be separated here: use L = 0 and o_s + o_r as the cost "
                  "of a small message."]
    return "\n".join(lines)


def run(args) -> int:
    comm, oversubscribed = placement.start("logp")
    if oversubscribed is None or len(args.sizes) < 2:     # sizes: distinct (arguments.size_list)
        if oversubscribed is not None and comm.Get_rank() == 0:
            print("logp needs at least 2 distinct sizes to fit g and G", file=sys.stderr)
        return 2
    options = sampling.options_from(comm, args)
    results, rounds = sweep(comm, args.sizes, args.n, args.repetitions, args.warmup, not args.no_progress, **options)
    if comm.Get_rank() == 0:
        fitted = fit(results, args.n)
        print(sampling.header(METHOD, *rounds.values()))
        print(report(results, fitted), flush=True)
        records.save(comm, args.json, "logp-prtt", oversubscribed,
                  {"sizes": args.sizes, "n": args.n, "repetitions": args.repetitions, "warmup": args.warmup,
                   **options},
                  timing_method=METHOD, rounds=rounds, results=results, fit=fitted,
                  fit_min=fit(results, args.n, "min_s"))
    return 0
