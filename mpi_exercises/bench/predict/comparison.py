"""predict's comparison (no MPI): each model's prediction of a measured row (one call of the
simulator under the model with the executor's software term, and the same call without it: the
network alone), the relative errors, and their summaries per model, collective and size class."""

from __future__ import annotations

import numpy as np

from .. import statistics
from .calibration import Calibration
from .measurement import COLLECTIVES, ELEM_BYTES


def network_times(schedule, cal: Calibration, elem_bytes: int = ELEM_BYTES, software=None) -> dict:
    """Time (s) of ``schedule`` under each model of ``cal``: the simulator
    (:func:`netmodels.simulate.simulate`) under the model, in its own semantics (the table's:
    α-β and NBL loosely synchronous steps, LogGP each rank on its own clock), with ``software``
    (a :class:`~netmodels.simulate.software.Software`, :func:`software_of`) in the same walk, or
    the messages alone (None)."""
    from netmodels.simulate import simulate

    return {m: simulate(schedule, cal.model(m), elem_bytes=elem_bytes, software=software).time
            for m in cal.models}


def software_of(schedule, cal: Calibration, door: bool = True):
    """The executor's own time for one call of ``schedule``, per rank and step (a
    :class:`~netmodels.simulate.software.Software`; None without a software term in ``cal``)."""
    return None if cal.software is None else cal.software.of(schedule, door=door)


def predicted_times(schedule, cal: Calibration, door: bool = True) -> dict:
    """Per model of ``cal``, the prediction (s) of one call of ``schedule``: messages and the
    executor's software term in one walk (the network alone without a software term)."""
    return network_times(schedule, cal, software=software_of(schedule, cal, door))


def software_time(schedule, cal: Calibration, door: bool = True) -> float:
    """The executor's own time (s) for one call of ``schedule``, alone: every step as long as
    its busiest rank (:meth:`~netmodels.simulate.software.Software.lockstep`; 0 without a software
    term).  Added to a model's network time it bounds the model's prediction from above."""
    sw = software_of(schedule, cal, door)
    return 0.0 if sw is None else sw.lockstep(len(schedule.steps), schedule.nprocs)


def schedule_key(schedule) -> tuple:
    """A key equal for two schedules that move the same blocks in the same steps."""
    from netmodels.algorithms.arrays import as_arrays

    a = as_arrays(schedule)
    return (a.nprocs, a.nelems) + tuple(
        tuple(col.tobytes() for col in (s.src, s.dst, s.count, s.combine)) for s in a.steps)


def relative_error(predicted: float, measured: float) -> float:
    """(predicted - measured) / measured."""
    return (predicted - measured) / measured


#: a prediction within this relative error of the measurement is counted as a hit
TOLERANCE = 0.15


def _errors(errs) -> dict:
    """median |error| with its 95 % interval (:func:`statistics.median_ci`), worst (signed), rows,
    and how many are within :data:`TOLERANCE`."""
    e = np.array(errs, dtype=float)
    med, lo, hi = statistics.median_ci(np.abs(e))
    return {"median_abs": med, "median_abs_ci": [lo, hi], "worst": float(e[np.argmax(np.abs(e))]),
            "rows": int(e.size), "within_tolerance": int(np.sum(np.abs(e) <= TOLERANCE))}


#: the size classes of the errors, by the bytes of a row's vector: (name, largest bytes)
SIZE_CLASSES = (("<= 1 KiB", 1024), ("1-64 KiB", 64 * 1024), ("> 64 KiB", float("inf")))


def size_class(nbytes: float) -> str:
    """The name of the class of :data:`SIZE_CLASSES` a vector of ``nbytes`` falls in (a barrier: 0 B)."""
    return next(name for name, top in SIZE_CLASSES if nbytes <= top)


def summarize_errors(rows: list[dict]) -> dict:
    """Per model, with the software term (``relative_error``) and without it
    (``relative_error_network``): :func:`_errors` over all rows, per collective and per size
    class of the vector (:data:`SIZE_CLASSES`, with the median signed error ``median``)."""
    out = {}
    models = list(dict.fromkeys(m for r in rows for m in r["relative_error"]))
    for model in models:
        mine = [r for r in rows if r["relative_error"].get(model) is not None]
        out[model] = {}
        for part, key in (("with_software", "relative_error"), ("network_only", "relative_error_network")):
            errs = [(r["collective"], r[key][model]) for r in mine]
            classes = [(size_class(ELEM_BYTES * r["nelems"]), r[key][model]) for r in mine if "nelems" in r]
            out[model][part] = {**_errors([e for _, e in errs]),
                                "by_collective": {c: _errors([e for k, e in errs if k == c])
                                                  for c in dict.fromkeys(k for k, _ in errs)},
                                "by_size_class": {c: {**_errors([e for k, e in classes if k == c]),
                                                      "median": float(np.median([e for k, e in classes if k == c]))}
                                                  for c, _ in SIZE_CLASSES if any(k == c for k, _ in classes)}}
    return out



def best_models(summary: dict) -> dict:
    """The model with the smallest median |error| with the software term, overall
    (``"(all)"``) and per collective."""
    if not summary:
        return {}
    out = {"(all)": min(summary, key=lambda m: summary[m]["with_software"]["median_abs"])}
    for c in next(iter(summary.values()))["with_software"]["by_collective"]:
        out[c] = min(summary, key=lambda m: summary[m]["with_software"]["by_collective"][c]["median_abs"])
    return out



def compare(rows: list[dict], cal: Calibration, P: int, statistic: str = "min_s") -> list[dict]:
    """Add to measured rows each model's prediction with the software term (``predicted_s``) and
    without it (``network_s``), the software term alone (``software_s``, :func:`software_time`)
    and the relative errors with and without the software term (no MPI)."""
    out = []
    for r in rows:
        entry = COLLECTIVES[r["collective"]]
        sched = entry.schedule(r["algorithm"], P, r["nelems"])
        meas = r[statistic]
        if sched is None:
            out.append({**r, "measured_s": meas, "network_s": {}, "software_s": None, "predicted_s": {},
                        "relative_error": {}, "relative_error_network": {}, "schedule": None})
            continue
        net = network_times(sched, cal)
        sw = software_of(sched, cal, door=entry.door)
        pred = net if sw is None else network_times(sched, cal, software=sw)
        alone = 0.0 if sw is None else sw.lockstep(len(sched.steps), sched.nprocs)
        out.append({**r, "measured_s": meas, "network_s": net, "software_s": alone, "predicted_s": pred,
                    "relative_error": {m: relative_error(t, meas) for m, t in pred.items()},
                    "relative_error_network": {m: relative_error(t, meas) for m, t in net.items()},
                    "schedule": schedule_key(sched)})
    keys = {r["schedule"] for r in out if r["schedule"] is not None}
    index = {k: i for i, k in enumerate(sorted(keys, key=repr))}
    for r in out:       # the key itself is bytes: keep its number only
        r["schedule"] = None if r["schedule"] is None else index[r["schedule"]]
    return out

