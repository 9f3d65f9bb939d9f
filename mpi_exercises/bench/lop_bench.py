"""Measure LoP's curves (Hoefler & Rehm, section 4.4) and check its choice of n for barriers.

For every p = 1 .. P - 1 rank 0 sends a 1-byte message to each of ranks 1..p, and each
of them answers with one byte (1:n, then n:1).  Receives for the answers are posted in
advance (the paper: o_r does not matter).  Two ways of posting the p sends:

* ``single``: ``Isend`` one by one (the paper's ``VAPI_post_sr`` per message);
* ``list``: persistent requests started with one ``Startall`` (the analogue of
  ``EVAPI_post_sr_list``).

Per sample: the round trip (first post to last answer, ``rtt``), and the time spent
posting, divided by p: the send overhead per message ``o_s(p)``.  The paper's fitted
RTT curves fall from 22.8 µs at p = 1 to 6.2 µs at p = 10, so they are times per
message: :func:`fit` fits ``t_rtt`` to ``rtt / p`` and ``t_ov`` to ``o_s``, and the JSON
keeps the totals.  Then the kit's n-way dissemination barrier is timed for n = 1 ..
``--n-max`` (:func:`mpi_exercises.bench.barrier.measure`) and compared with the n LoP
predicts from the measured points (no fit needed for n <= P - 1).

Sampling is the measurement core's (:mod:`mpi_exercises.bench.measure`): the (p, mode) cases,
then the barriers, in interleaved rounds of a recorded random order, ``--warmup`` untimed
round trips before each, ``--repetitions`` samples per case in the first rounds, then more
rounds for the cases whose median round trip has a 95 % interval wider than ``--target``
(within ``--time-budget``); every sample is kept in the JSON.

    mpiexec -n 4 python -m mpi_exercises lop --json lop.json
"""

from __future__ import annotations

import sys

import numpy as np

from . import arguments, placement, records, statistics
from . import measure as sampling

MODES = ("single", "list")

#: how a sample is taken, in words (printed and stored in the JSON)
METHOD = ("lop: rank 0 times from its first post to the last answer (rtt) and the posting (o_s per message), "
          "one 1:n/n:1 round per sample; separate send and receive buffers")


def add_arguments(p) -> None:
    p.add_argument("--n-max", type=arguments.positive_int, default=4,
                   help="n-way dissemination barriers measured for n = 1..N_MAX (default 4)")
    p.add_argument("--barrier-repetitions", type=arguments.sample_count, default=50,
                   help="timed samples per barrier (default 50)")
    p.add_argument("--inner", type=arguments.positive_int, default=20,
                   help="back-to-back barriers per sample (default 20)")
    arguments.add_options(p, repetitions=(200, "timed round trips per peer count and mode (default 200)"),
                     warmup=(20, "untimed round trips first (default 20)"),
                     json="write raw data, fit and prediction to FILE as JSON")
    sampling.add_options(p)


def _round_trips(comm, p: int, mode: str, reps: int, warmup: int):
    """(rtt, o_s per message) samples on rank 0 for ``p`` peers; empty arrays elsewhere."""
    from mpi4py import MPI

    rank, wtime = comm.Get_rank(), MPI.Wtime
    total = reps + warmup
    if rank == 0:
        out = np.empty(1, dtype=np.uint8)
        back = np.zeros(p, dtype=np.uint8)
        recvs = [comm.Recv_init([back[j:j + 1], MPI.BYTE], source=j + 1, tag=2) for j in range(p)]
        sends = ([comm.Send_init([out, MPI.BYTE], dest=j + 1, tag=1) for j in range(p)]
                 if mode == "list" else [])
        rtt, post = np.empty(reps), np.empty(reps)
        for i in range(-warmup, reps):
            MPI.Prequest.Startall(recvs)
            t0 = wtime()
            if mode == "list":
                MPI.Prequest.Startall(sends)
                reqs = sends
            else:
                reqs = [comm.Isend([out, MPI.BYTE], dest=j + 1, tag=1) for j in range(p)]
            t1 = wtime()
            MPI.Request.Waitall(reqs)
            MPI.Request.Waitall(recvs)
            t2 = wtime()
            if i >= 0:
                rtt[i], post[i] = t2 - t0, (t1 - t0) / p
        for r in recvs + sends:
            r.Free()
        return rtt, post
    if rank <= p:
        buf = np.zeros(1, dtype=np.uint8)
        for _ in range(total):
            comm.Recv([buf, MPI.BYTE], source=0, tag=1)
            comm.Send([buf, MPI.BYTE], dest=0, tag=2)
    return np.empty(0), np.empty(0)


def sweep(comm, reps: int, warmup: int, progress: bool = True, **options) -> tuple[list[dict], dict]:
    """The sweep over p = 1 .. size - 1 and both modes in interleaved rounds (collective):
    ``(per-p summaries (s), the rounds' record)`` on rank 0, ``([], record)`` elsewhere.  The
    stopping rule judges the round trips; the posting times come with them.  Without
    ``target`` every case gets exactly ``reps`` samples.  ``options``: those of
    :func:`~mpi_exercises.bench.measure.interleaved_rounds`."""
    rank, size = comm.Get_rank(), comm.Get_size()
    posts: dict = {}

    def run(case, count):
        p, mode = case
        comm.Barrier()
        rtt, post = _round_trips(comm, p, mode, count, warmup)
        posts.setdefault(case, []).append(post)
        return rtt

    cases = [(p, mode) for p in range(1, size) for mode in MODES]
    taken, info = sampling.interleaved_rounds(comm, cases, run, lambda c: reps, desc="LoP 1:n/n:1",
                                              progress=progress, **options)
    if rank != 0:
        return [], info
    results = []
    for p in range(1, size):
        row = {"peers": p}
        for mode in MODES:
            rtt = taken[(p, mode)]
            row[f"rtt_{mode}"] = statistics.summarize(rtt)
            row[f"rtt_per_message_{mode}"] = statistics.summarize(rtt / p)
            row[f"os_{mode}"] = statistics.summarize(np.concatenate(posts[(p, mode)]))
        results.append(row)
    return results, info


def measure(comm, reps: int, warmup: int, progress: bool = True, **options) -> list[dict]:
    """:func:`sweep`'s per-p summaries on rank 0 (s; empty elsewhere)."""
    return sweep(comm, reps, warmup, progress, **options)[0]


def curves(results: list[dict], mode: str = "single", statistic: str = "min_s"):
    """``(p, rtt per message, o_s)`` arrays (s) of one mode and statistic from :func:`measure`."""
    p = np.array([r["peers"] for r in results], dtype=float)
    rtt = np.array([r[f"rtt_per_message_{mode}"][statistic] for r in results])
    os_ = np.array([r[f"os_{mode}"][statistic] for r in results])
    return p, rtt, os_


def predict(results: list[dict], P: int, n_max: int, statistic: str = "min_s") -> dict:
    """Predicted n-way dissemination barrier times (s) for n = 1..min(n_max, P - 1) from the
    measured points alone (linear interpolation, no fit), both ways of posting."""
    from netmodels.models import lop

    out = {"statistic": statistic}
    for mode in MODES:
        p, rtt, os_ = curves(results, mode, statistic)
        r, o = lop.Tabulated(tuple(p), tuple(rtt)), lop.Tabulated(tuple(p), tuple(os_))
        n, times = lop.best_n(P, r, o, n_max=min(n_max, P - 1), post_list=(mode == "list"))
        out[mode] = {"best_n": n, "barrier_s": list(times),
                     "L_s": list(np.atleast_1d(lop.latency(p, r, o))),
                     "t_1n_s": list(np.atleast_1d(lop.t_one_to_n(p, r, o, post_list=(mode == "list"))))}
    return out


def fit(results: list[dict], mode: str = "single", statistic: str = "min_s") -> dict:
    """Fit t_rtt (per message) and t_ov to the measured points; a reason where it cannot.

    With fewer than 6 peer counts t_rtt is fitted without the saturation term (needs 4);
    with fewer than 4 nothing is fitted."""
    from netmodels.models.lop_fit import FitError, fit_overhead, fit_rtt

    p, rtt, os_ = curves(results, mode, statistic)
    out = {"mode": mode, "statistic": statistic}
    for key, call in (("rtt", lambda: fit_rtt(p, rtt, saturation=p.size >= 6)),
                      ("overhead", lambda: fit_overhead(p, os_))):
        try:
            f = call()
        except (ValueError, FitError) as exc:
            out[key] = {"error": str(exc)}
            continue
        out[key] = {"lambdas": list(f.lambdas), "stderr": [s if np.isfinite(s) else None for s in f.stderr],
                    "fixed": list(f.fixed), "rms_relative": f.rms_relative, "condition": f.condition}
    return out


def report(results: list[dict], prediction: dict, barriers: list[dict]) -> str:
    lines = [f"{'p':>3} {'RTT single':>11} {'RTT list':>10} {'o_s single':>11} {'o_s list':>9}"
             "   (µs, minima; RTT = whole round trip to p peers, o_s per message)", "-" * 50]
    for r in results:
        lines.append(f"{r['peers']:>3} {r['rtt_single']['min_s'] * 1e6:11.2f} {r['rtt_list']['min_s'] * 1e6:10.2f} "
                     f"{r['os_single']['min_s'] * 1e6:11.3f} {r['os_list']['min_s'] * 1e6:9.3f}")
    lines += ["", "n-way dissemination barrier (µs): predicted by LoP from the minima, measured (min, median)"]
    for i, b in enumerate(barriers):
        n = b["options"]["n"]
        pred = "  ".join(f"{m} {prediction[m]['barrier_s'][n - 1] * 1e6:8.2f}"
                         for m in MODES if n <= len(prediction[m]["barrier_s"]))
        lines.append(f"  n = {n}:  {pred}   measured {b['min_s'] * 1e6:8.2f} {b['median_s'] * 1e6:8.2f}")
    measured_best = min(barriers, key=lambda b: b["median_s"])["options"]["n"]
    lines.append(f"best n: predicted {prediction['single']['best_n']} (single), {prediction['list']['best_n']} "
                 f"(list); measured {measured_best} (median)")
    return "\n".join(lines)


def run(args) -> int:
    from .barrier import METHOD as BARRIER_METHOD
    from .barrier import sweep as barrier_sweep

    comm, oversubscribed = placement.start("lop", suggest=8, advised=5,
                                      advised_why="fewer than 4 peer counts p, too few to fit L(p) and o(p)")
    if oversubscribed is None:
        return 2
    size = comm.Get_size()
    options = sampling.options_from(comm, args)
    results, rounds = sweep(comm, args.repetitions, args.warmup, not args.no_progress, **options)
    n_values = range(1, args.n_max + 1)
    barriers, barrier_rounds = barrier_sweep(comm, [("nway_dissemination", {"n": n}) for n in n_values],
                                             args.barrier_repetitions, args.inner, args.warmup,
                                             not args.no_progress, **{**options, "seed": options["seed"] + 1})
    if comm.Get_rank() == 0:
        prediction = predict(results, size, args.n_max)
        print(sampling.header(f"{METHOD}; barriers: {BARRIER_METHOD}", rounds, barrier_rounds))
        print(report(results, prediction, barriers), flush=True)
        records.save(comm, args.json, "lop", oversubscribed,
                  {"repetitions": args.repetitions, "warmup": args.warmup, "n_max": args.n_max,
                   "barrier_repetitions": args.barrier_repetitions, "inner": args.inner, "message_bytes": 1,
                   **options},
                  timing_method={"lop": METHOD, "barrier": BARRIER_METHOD},
                  rounds={"lop": rounds, "barrier": barrier_rounds},
                  command=f"mpiexec -n {size} python -m mpi_exercises " + " ".join(sys.argv[1:]),
                  results=results, barrier=barriers, prediction=prediction,
                  fit={m: fit(results, m) for m in MODES})
    return 0
