"""predict's measurements on the machine (collective over MPI): the calibration's
microbenchmarks and the software term, and the collectives themselves through the kit's front
doors, the slowest rank's time."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ... import pages
from .. import records, statistics, timing
from .calibration import Calibration, keep_physical, parameters_of, reliability, unphysical

ELEM_BYTES = 8                       #: the vectors are float64
#: message sizes (bytes) of the ping-pong calibration
CALIBRATION_SIZES = [0, 1, 8, 64, 512, 4096, 32768, 262144, 2097152]
#: message sizes (bytes) of the PRTT calibration
PRTT_SIZES = [0, 1, 8, 64, 1024, 4096, 16384]


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


def measure_software(comm, reps: int, progress: bool):
    """The executor's software term (collective; on rank 0 ``(SoftwareCost, its widest
    interval)``, elsewhere None)."""
    from .. import software_cost

    sw = software_cost.measure(comm, software_cost.SIZES, software_cost.STEPS, reps, 10, timing.DEFAULT_INNER,
                               progress)
    if sw is None:
        return None
    return software_cost.term(sw), software_cost.worst_interval(sw)


def calibrate(comm, reps: int, testjig: bool, progress: bool, given: Calibration | None = None):
    """Measure what ``given`` does not hold (collective): the network models on their
    microbenchmarks (ping-pong, exchange over the same sizes, PRTT), the software term
    without the network.  On rank 0 ``(Calibration, None)`` or ``(None, why)`` if a fit of a
    plain model is unphysical (a model with an added term whose fit is unphysical is left
    out, the reason in ``reliability["left_out"]``); elsewhere ``(None, None)``."""
    from dataclasses import replace

    from netmodels.models.nbl_fit import fit_f

    from .. import exchange, logp_bench, nbl_testjig, pingpong

    rank = comm.Get_rank()
    if given is None:
        pp = pingpong.measure(comm, CALIBRATION_SIZES, reps, 20, 64 * 2**20, progress)
        ex = exchange.measure(comm, CALIBRATION_SIZES, reps, 20, 64 * 2**20, progress)
        lp = logp_bench.measure(comm, PRTT_SIZES, 10, reps, 10, progress)
        jig = nbl_testjig.measure(comm, [600, 6000, 60000], 20, 5, 2, progress) if testjig else []
    sw = measure_software(comm, reps, progress) if given is None or given.software is None else None
    if rank != 0:
        return None, None
    noisy, left_out = [], []
    if given is not None:
        cal = given
    else:
        models = parameters_of({"pingpong": (pp, None), "exchange": (ex, None), "logp": (lp, 10)},
                               comm.Get_size())
        if jig:
            tab = nbl_testjig.table(jig, "min_s")
            fitted, _, _ = fit_f(tab["S"], {int(L): np.array(v) for L, v in tab["T_s"].items()})
            models["nbl"].update({f"f{L}": float(v) for L, v in fitted.items() if L > 1})
        why = unphysical(models)
        if why:
            return None, why
        models, left_out = keep_physical(models)
        noisy += [(r["ci_relative_halfwidth"] or 0.0, f"ping-pong {r['bytes']} B") for r in pp]
        noisy += [(r["ci_relative_halfwidth"] or 0.0, f"exchange {r['bytes']} B") for r in ex]
        noisy += [(r[k]["ci_relative_halfwidth"] or 0.0, f"PRTT {k} {r['bytes']} B")
                  for r in lp for k in ("prtt_1_0", "prtt_n_0", "prtt_n_d")]
        def summaries(rows):
            return [{k: v for k, v in r.items() if k != "times_s"} for r in rows]
        cal = Calibration(models, source="measured", measured_from=("pingpong", "exchange", "logp"),
                          measurements={"pingpong": summaries(pp), "exchange": summaries(ex),
                                        "logp": [{k: ({kk: vv for kk, vv in v.items() if kk != "times_s"}
                                                      if isinstance(v, dict) else v) for k, v in r.items()}
                                                 for r in lp], "logp_n": 10})
    if sw is not None:
        term, widest = sw
        noisy.append(widest)
        cal = replace(cal, software=term)
    rel = reliability(noisy) if noisy else cal.reliability
    if left_out:
        rel = {**(rel or {}), "left_out": left_out}
    return replace(cal, reliability=rel), None


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
            method = timing.loop_method(k)
            iters = timing.capped_iterations(ELEM_BYTES * n * k, iterations, 256 * 2**20, at_least=10)
            samples = timing.time_interleaved(comm, calls, iters, warmup, inner=k)   # slowest rank's
            for b in frees:
                b.free()
            if rank == 0:
                for a, row in zip(algorithms, samples):
                    rows.append({"collective": name, "algorithm": a, "nelems": n,
                                 "bytes": ELEM_BYTES * n, **statistics.summarize(row), "timing_method": method})
    comm.Barrier()
    return rows

