"""predict's measurements on the machine (collective over MPI): the calibration's
microbenchmarks and the software term, and the collectives themselves through the kit's front
doors, the slowest rank's time."""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ... import pages
from .. import records, statistics, timing

ELEM_BYTES = 8                       #: the vectors are float64
#: message sizes (bytes) of the ping-pong calibration
CALIBRATION_SIZES = [0, 1, 8, 64, 512, 4096, 32768, 262144, 2097152]
#: message sizes (bytes) of the PRTT calibration: the ping-pong's, so that LogGP's G is the gap
#: per byte of long messages, as LogGP defines it (:func:`netmodels.models.logp_fit.fit_prtt`);
#: before, the PRTT stopped at 16 KiB (0, 1, 8, 64, 1024, 4096, 16384) and G was the slope of
#: the gaps up to 4 KiB
PRTT_SIZES = CALIBRATION_SIZES


@dataclass(frozen=True)
class Collective:
    """One collective of the report.

    ``algorithms(P)``: the algorithms to run on P ranks.  ``schedule(algorithm, P, nelems)``:
    its schedule (None: not modelled, e.g. the library's own).  ``call(comm, algorithm, x,
    out)``: a function of no argument that runs it once through the front door.  ``sized``:
    False for barriers (one run, no vector).
    """

    algorithms: Callable
    schedule: Callable
    call: Callable
    sized: bool = True
    door: bool = True                #: called through a front door (False: its executor directly)


def _front_door_kwargs(func) -> dict:
    """``check=False`` where a front door offers to skip its argument check (timing only)."""
    return {"check": False} if "check" in inspect.signature(func).parameters else {}


def _algorithms(collective: str) -> Callable:
    """``algorithms(P)`` of a collective: its front door's choices (the registry's, then mpi)."""
    def algorithms(P):
        from ...collectives._door import choices

        return list(choices(collective))
    return algorithms


def _schedule(collective: str) -> Callable:
    """``schedule(algorithm, P, nelems)`` of a collective: the registry's (None for mpi; a
    barrier carries no data, whatever ``nelems``)."""
    def schedule(algorithm, P, nelems=0):
        from netmodels.algorithms import registry

        if algorithm == "mpi":
            return None
        return registry.build(f"{collective}.{algorithm}", P, 0 if collective == "barrier" else nelems).to_schedule()
    return schedule


def _allreduce_call(comm, algorithm, x, out):
    from ...collectives.allreduce import allreduce

    kw = _front_door_kwargs(allreduce)
    return lambda: allreduce(comm, x, algorithm, out=out, **kw)


def _barrier_call(comm, algorithm, x=None, out=None):
    from ...collectives.barrier import Barrier

    return Barrier(comm, algorithm)


#: collective name -> entry.  A new collective (allgather, alltoall) is one entry here.
COLLECTIVES = {
    "allreduce": Collective(_algorithms("allreduce"), _schedule("allreduce"), _allreduce_call),
    "barrier": Collective(_algorithms("barrier"), _schedule("barrier"), _barrier_call, sized=False, door=False),
}


#: rounds of a measured run (``--rounds``): calibration and collectives alternate round by round.
#: Each row's minimum is the best its samples met, and the two cores' caches change state within
#: seconds: spread over more, shorter rounds, every row is likelier to meet the best state.  In eight
#: pairs of launches at rest (``benchmarks/predict_rounds.py``, ``book/data/predict_rounds.json``)
#: the best model erred 7 % with 16 rounds against 11 % with 4 (medians; at most 10 % in 6 and 4
#: launches of 8); the classes above 25 % were as many (7.5 of 36, medians); a launch took about
#: 21 s instead of 14 s (the gaps between the launches' dates there, less the 5 s between them)
ROUNDS = 16


#: the ping-pong and the exchange of fresh data take 1/FRESH_SHARE of the clean ones' samples,
#: warm-ups and byte budget (at least 20 samples a size): each sample also writes its buffer
FRESH_SHARE = 2


def calibration_round(comm, reps: int, rounds: int, *, network: bool = True, software: bool = True,
                      d: dict | None = None, fresh: bool = True) -> dict:
    """One round of the calibration (collective; no collective is timed): the ping-pong and the
    exchange over :data:`CALIBRATION_SIZES` (with ``fresh`` both of fresh data too, the send
    buffer written inside each sample, :data:`FRESH_SHARE` of the samples), the PRTT over
    :data:`PRTT_SIZES` (``d``: its delay per size, s, from the first round; its samples at a size
    s capped as the ping-pong's, by the byte budget over n s bytes, at least
    :data:`PRTT_LONG_SAMPLES` shared alike) when ``network``; the executor without messages when
    ``software``.  ``reps`` samples per size or case; the warm-ups and the byte budgets of large
    sizes are those of one calibration shared by ``rounds / 2`` rounds (each half of the rounds
    takes what one calibration took before calibration and collectives alternated).  On rank 0
    ``{"pingpong", "exchange", "pingpong-fresh", "exchange-fresh", "logp", "software"}`` (each benchmark's per-size
    summaries with their samples; what was not measured is absent), elsewhere ``{}``."""
    from .. import exchange, logp_bench, pingpong, software_cost

    def share(n):             # one calibration's n shared by rounds / 2 rounds (two calibrations: n each)
        return max(1, -(-2 * n // rounds))
    out = {}
    if network:
        budget = 2 * 64 * 2**20 // rounds
        out["pingpong"] = pingpong.measure(comm, CALIBRATION_SIZES, reps, share(20), budget, False)
        out["exchange"] = exchange.measure(comm, CALIBRATION_SIZES, reps, share(20), budget, False)
        if fresh:
            for kind, bench in (("pingpong-fresh", pingpong), ("exchange-fresh", exchange)):
                out[kind] = bench.measure(comm, CALIBRATION_SIZES, max(1, reps // FRESH_SHARE),
                                          share(20 // FRESH_SHARE), budget // FRESH_SHARE, False, fresh=True)
        out["logp"] = logp_bench.measure(comm, PRTT_SIZES, LOGP_N, reps, share(10), False, d=d,
                                         budget_bytes=budget, at_least=share(PRTT_LONG_SAMPLES))
    if software:
        out["software"] = software_cost.measure(comm, software_cost.SIZES, software_cost.STEPS, reps, share(10),
                                                timing.DEFAULT_INNER, False, budget_bytes=share(2**30),
                                                at_least=share(30))
    return out if comm.Get_rank() == 0 else {}


#: PRTT(n, d, s)'s n, messages per parametrised round trip
LOGP_N = 10
#: samples of the PRTT at a size whose byte budget allows fewer, per calibration (shared by
#: ``rounds / 2`` rounds as the warm-ups are: 5 a round, 20 a run by default): at 2 MiB a
#: PRTT(10, d, s) takes 5 to 30 ms (the ping-pong keeps 20 a round: its sample is one round trip);
#: ``benchmarks/prtt_calibration_time.py`` times the PRTT to 2 MiB against the one to 16 KiB
PRTT_LONG_SAMPLES = 10


def interleaved(comm, rounds: int, reps: int, collectives, sizes, iterations: int, warmup: int, *,
                network: bool = True, software: bool = True, progress: bool = True) -> dict:
    """Calibration and collectives measured in alternate rounds (collective), so that both see
    the same machine: each round a :func:`calibration_round` (``2 reps / rounds`` samples per
    size: each half of the rounds takes ``reps``), one reading of the launch's mode
    (:func:`~mpi_exercises.bench.launch_mode.detect_mode`) and the collectives
    (:func:`measure`, ``iterations / rounds`` samples per row).  Without ``network`` and
    ``software`` (a given calibration) only the collectives are measured, in the same rounds.
    On rank 0 ``{"calibration": [each round's], "modes": [each round's], "rows": [the rows,
    every round's samples pooled (:func:`pool`)], "rounds": {...}}``; elsewhere ``{}``."""
    from ..launch_mode import detect_mode

    if rounds < 2 or rounds % 2:
        raise ValueError(f"rounds must be an even number >= 2, got {rounds!r}")
    per, its = max(1, -(-2 * reps // rounds)), max(1, -(-iterations // rounds))
    rank = comm.Get_rank()
    cal_rounds, modes, row_rounds, d = [], [], [], None
    seconds = {"calibration": 0.0, "launch_mode": 0.0, "collectives": 0.0}     # rank 0's wall time

    def timed(part, fn):
        t0 = time.perf_counter()
        out = fn()
        seconds[part] += time.perf_counter() - t0
        return out
    for _ in records.progress(range(rounds), desc="predict", unit="round", show=rank == 0 and progress):
        if network or software:
            cal_rounds.append(timed("calibration", lambda: calibration_round(
                comm, per, rounds, network=network, software=software, d=d)))
            if network and d is None:        # PRTT(n, d, s) keeps the first round's d: its samples pool
                d = comm.bcast({r["bytes"]: r["d_s"] for r in cal_rounds[0]["logp"]} if rank == 0 else None)
        modes.append(timed("launch_mode", lambda: detect_mode(comm)))
        row_rounds.append(timed("collectives", lambda: measure(comm, collectives, sizes, its, warmup, False)))
    if rank != 0:
        return {}
    rows = pool(row_rounds)
    return {"calibration": cal_rounds, "modes": modes, "rows": rows,
            "rounds": {"rounds": rounds, "interleaved": bool(network or software),
                       "calibration_samples_per_round": per if (network or software) else 0,
                       "collective_samples_per_row": [min(r["samples"] for r in rows), max(r["samples"] for r in rows)],
                       "seconds": seconds}}


#: the keys :func:`statistics.summarize` writes (redone on pooled samples)
_SUMMARY_KEYS = frozenset(statistics.summarize([1.0]))
#: the keys :func:`pool` redoes rather than requires equal in every round
_POOLED_KEYS = _SUMMARY_KEYS | {"samples_per_round", "bandwidth_Bps"}


def pool(parts: list):
    """The measurements of several rounds of one kind as one (no MPI): ``parts`` alike in shape
    (lists of the same length, dicts of the same keys, as each round returns them); wherever a
    dict holds samples (``times_s``) they are joined in round order and summarized again
    (:func:`statistics.summarize`), ``samples_per_round`` joined and a bandwidth redone on the
    pooled median; any other value (a size, a name, the PRTT's delay) must be the same in every
    round (ValueError naming it: samples of different things are not pooled)."""
    first = parts[0]
    if isinstance(first, dict):
        for k, v in first.items():
            if k not in _POOLED_KEYS and not isinstance(v, (dict, list)) and any(p.get(k) != v for p in parts):
                raise ValueError(f"pool: the rounds disagree on {k} ({', '.join(repr(p.get(k)) for p in parts)})")
    if isinstance(first, dict) and "times_s" in first:
        out = {k: v for k, v in first.items() if k not in _SUMMARY_KEYS}
        out.update(statistics.summarize(np.concatenate([p["times_s"] for p in parts])))
        if "samples_per_round" in first:
            out["samples_per_round"] = [c for p in parts for c in p["samples_per_round"]]
        if "bandwidth_Bps" in first:
            out["bandwidth_Bps"] = first["bytes"] / out["median_s"] if first["bytes"] else None
        return out
    if isinstance(first, dict):
        return {k: pool([p[k] for p in parts]) if isinstance(v, (dict, list)) else v for k, v in first.items()}
    if isinstance(first, list):
        if any(len(p) != len(first) for p in parts):
            raise ValueError("pool: the rounds hold lists of different lengths")
        return [pool(list(items)) for items in zip(*parts)]
    return first


#: vectors of more bytes than this are timed one call per sample (``inner`` = 1): their calls
#: last long enough that the barrier's exit skew does not count, and ten of them (milliseconds)
#: are cut by the scheduler of a busy machine where one call, like the calibration's single
#: messages, often is not (benchmarks/long_samples.py: at 800 KB on 2 ranks under load 7.8 and 9.1,
#: the minimum of ten calls per sample was 3.8 and 5.0 times that of one call per sample)
ONE_CALL_ABOVE_BYTES = 64 * 1024


def measure(comm, collectives, sizes, iterations, warmup, progress, inner: int = timing.DEFAULT_INNER) -> list[dict]:
    """Time every algorithm of every collective through its front door (collective);
    rows ``{collective, algorithm, nelems, min_s, median_s, median_ci_s, times_s, ...,
    timing_method}`` on rank 0.  A sample is ``inner`` back-to-back calls after one barrier,
    divided by ``inner``, the slowest rank's (:func:`timing.time_interleaved`): the barrier's
    exit skew is not charged to every call; a vector of more than :data:`ONE_CALL_ABOVE_BYTES`
    is timed one call per sample (its row's ``timing_method`` says so)."""
    P, rank = comm.Get_size(), comm.Get_rank()
    rows = []
    for name in collectives:
        entry = COLLECTIVES[name]
        algorithms = entry.algorithms(P)
        for n in records.progress(sizes if entry.sized else [0], desc=f"predict: {name}", unit="size",
                                  show=rank == 0 and progress):
            x = pages.copy(np.random.default_rng(rank).random(n))
            calls, frees = [], []
            for a in algorithms:
                out = pages.allocate(x.shape, x.dtype)
                call = entry.call(comm, a, x, out)
                if hasattr(call, "free"):
                    frees.append(call)
                calls.append(call)
            k = 1 if ELEM_BYTES * n > ONE_CALL_ABOVE_BYTES else inner
            method = timing.loop_method(k, warm=k == 1)
            iters = timing.capped_iterations(ELEM_BYTES * n * k, iterations, 256 * 2**20, at_least=10)
            # one call per sample: warmed by an untimed call first, as the calibration's messages
            # and the software term are timed (the same buffers again and again)
            samples = timing.time_interleaved(comm, calls, iters, warmup, inner=k, warm=k == 1)   # slowest rank's
            for b in frees:
                b.free()
            if rank == 0:
                for a, row in zip(algorithms, samples):
                    rows.append({"collective": name, "algorithm": a, "nelems": n,
                                 "bytes": ELEM_BYTES * n, **statistics.summarize(row), "timing_method": method})
    comm.Barrier()
    return rows

