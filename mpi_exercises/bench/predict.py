"""The kit's prediction report: fit the network models on their own microbenchmarks, measure
the software apart, predict the collectives, measure them, and say how far off each model is.

    mpiexec -n 2 python -m mpi_exercises predict --json predict.json
    mpiexec -n 2 python -m mpi_exercises predict --calibration my_calibration.json

1. Calibration, apart from what is predicted.  Each network model of :data:`MODELS` (names
   and parameters from :mod:`netmodels.models.table`) is fitted on its own microbenchmark
   only: α-β on the ping-pong sweep (:mod:`mpi_exercises.bench.pingpong`), LogGP on
   Netgauge's PRTT method (:mod:`mpi_exercises.bench.logp_bench`), NBL on the same α and β
   with f(L) from the f(L) test jig (``--testjig``; else f(L) = 1).  The software is a
   property of the executor, not of a model: measured without any message
   (:mod:`mpi_exercises.bench.software_cost`), the same term is added to every model.
   No collective is timed during calibration, and the default vector lengths lie between the
   lengths the calibration measures.  ``--calibration FILE ...`` takes the models' parameters
   from files instead of measuring them: a student's own ``pingpong`` and ``logp`` results, or
   an earlier report's ``calibration`` block (with its software term), edited or written by
   hand in its shape (a paper's machine).
2. Prediction of every algorithm of every collective in :data:`COLLECTIVES` from its schedule
   (:mod:`netmodels.algorithms.registry`): per model the network time (the simulator under
   the model, in the model's own semantics), the software time, and their sum.
3. Measurement of the same algorithms through the kit's front doors, the slowest rank's time.
4. Relative errors (predicted - measured) / measured, of the models alone and with the software
   term; per model and collective the median |error| with its 95 % interval.

A run with more ranks than cores is measured, but reported as not valid.  A calibration whose
measurements are too noisy (a median's 95 % interval wider than :data:`NOISY` of it) marks the
run unreliable; a fit that comes out unphysical (α, L, o or g < 0) is refused.  A new collective
is one entry of :data:`COLLECTIVES`; a new model one entry of the table and of
:func:`network_parameters`.
"""

from __future__ import annotations

import inspect
import json
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np

from netmodels.models import table
from netmodels.models.fit import unphysical as fit_unphysical

from .. import pages
from ..software import SoftwareCost
from netmodels.outputs import Refused, read_input, write_json

from . import arguments, placement, records, statistics, timing, measure as sampling
#: the network models a prediction report compares, by their names in the table of models
MODELS = ("alpha-beta", "nbl", "loggp")
ELEM_BYTES = 8                       #: the vectors are float64
#: vector lengths (elements) predicted by default: between the calibration's lengths
DEFAULT_SIZES = [2, 40, 700, 12000, 100000]
#: message sizes (bytes) of the ping-pong calibration
CALIBRATION_SIZES = [0, 1, 8, 64, 512, 4096, 32768, 262144, 2097152]
#: message sizes (bytes) of the PRTT calibration
PRTT_SIZES = [0, 1, 8, 64, 1024, 4096, 16384]
#: a calibration is unreliable if a median's 95 % interval is wider than this fraction of it on
#: either side (the measurement core's rule: five times its default target)
NOISY = sampling.NOISY


# ---------------------------------------------------------------- calibration (no MPI)
@dataclass(frozen=True)
class Calibration:
    """What a prediction is made from: ``models``, each model's parameters by the names of the
    table of models (SI units, :mod:`netmodels.models.table`); ``software``, the executor's
    :class:`~mpi_exercises.software.SoftwareCost` (None: not priced); ``source``, where the
    parameters come from; ``reliability``, how noisy the measurements were (None: given)."""

    models: dict
    software: SoftwareCost | None = None
    source: str = "measured"
    reliability: dict | None = None

    def __post_init__(self):
        if not isinstance(self.models, dict) or not self.models:
            raise ValueError("calibration: models must map at least one model name to its parameters")
        for name, params in self.models.items():
            entry = table.get(name)
            if not isinstance(params, dict):
                raise ValueError(f"calibration: the parameters of {name} must be a mapping of name to value")
            missing = [p.name for p in entry.parameters if p.name not in params]
            if missing:
                raise ValueError(f"calibration: model {name} lacks {', '.join(missing)} "
                                 f"(units: {', '.join(f'{p.name} {p.unit}' for p in entry.parameters)})")
            for k, v in params.items():
                if not entry.accepts(k):
                    raise ValueError(f"calibration: model {name} has no parameter {k!r}")
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
                    raise ValueError(f"calibration: {name} {k} must be a finite number, got {v!r}")
            self.model(name)        # the model's own checks (e.g. alpha > 0)

    def model(self, name: str):
        """The model object of ``name``, built by the table from its parameters."""
        return table.get(name).build(**self.models[name])

    def as_dict(self) -> dict:
        """JSON form; :meth:`from_dict` reads it back."""
        return {"models": self.models, "software": None if self.software is None else self.software.as_dict(),
                "source": self.source, "reliability": self.reliability}

    @classmethod
    def from_dict(cls, d: dict, source: str | None = None) -> "Calibration":
        """A calibration from its JSON form, or from a whole ``predict --json`` file (its
        ``calibration`` block); ``source`` replaces the one it names (default "given");
        ValueError with what is wrong."""
        if isinstance(d, dict) and "calibration" in d and "models" not in d:
            d = d["calibration"]
        if not isinstance(d, dict) or not isinstance(d.get("models"), dict):
            raise ValueError('a calibration is a JSON object with "models": {model: {parameter: value}}; '
                             f"models: {', '.join(MODELS)}")
        sw = d.get("software")
        return cls({k: dict(v) if isinstance(v, dict) else v for k, v in d["models"].items()},
                   None if sw is None else SoftwareCost.from_dict(sw), source or d.get("source") or "given",
                   d.get("reliability"))


def load_calibration(paths, nprocs: int) -> Calibration:
    """The calibration in the JSON files ``paths``, merged in order (a later file's model
    replaces an earlier one's): a calibration block or a whole ``predict --json`` report, a
    ``pingpong --json`` file (α-β and NBL, fitted as predict fits its own ping-pong) or a
    ``logp --json`` file (LogGP, by the PRTT fit).  ValueError naming the file and the problem;
    an unphysical fit is refused (:func:`unphysical`), and so is a file that is a link, not a
    regular file, or too large (:func:`netmodels.outputs.read_input`: a named pipe is never
    opened, so no rank waits on it)."""
    from . import logp_bench, pingpong

    models, software, noisy = {}, None, []
    for path in [paths] if isinstance(paths, str) else paths:
        try:
            data = json.loads(read_input(path).decode("utf-8"))
            kind = data.get("benchmark") if isinstance(data, dict) else None
            if kind == "pingpong":
                part = network_parameters(pingpong.fit(data["results"], "min_s")["alpha_beta"], None, None, nprocs)
                noisy += [(r["ci_relative_halfwidth"] or 0.0, f"{path}: ping-pong {r['bytes']} B")
                          for r in data["results"]]
            elif kind == "logp-prtt":
                part = network_parameters(None, logp_bench.fit(data["results"], data["parameters"]["n"], "min_s"),
                                          None, nprocs)
            else:
                c = Calibration.from_dict(data, source=str(path))
                part, software = c.models, c.software or software
            why = unphysical(part)
            if why:
                raise ValueError(why)
            models.update(part)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError, KeyError, ValueError,
                TypeError) as exc:
            what = f"no {exc} in it" if isinstance(exc, KeyError) else str(exc)
            what = exc.why if isinstance(exc, Refused) else what
            raise ValueError(f"--calibration {path}: {what}") from None
    try:
        return Calibration(models, software, ", ".join(map(str, [paths] if isinstance(paths, str) else paths)),
                           reliability(noisy) if noisy else None)
    except ValueError as exc:
        raise ValueError(f"--calibration: {exc}") from None


def network_parameters(alpha_beta: dict | None, loggp: dict | None, f: dict | None, nprocs: int) -> dict:
    """Each model's parameters (by the table's names) from the ping-pong fit ``alpha_beta``
    (``alpha_s``, ``beta_s_per_byte``: α-β and NBL), the PRTT fit ``loggp`` (``L_s``, ``o_s_s``,
    ``o_r_s``, ``g_s``, ``G_s_per_byte``; g and G None when not identified: 0) and the f(L)
    table ``f`` (None: f(L) = 1 for every L a schedule on ``nprocs`` ranks can have); a fit
    that is None gives no model.  Combining is in the software term, so no model charges it."""
    out = {}
    if alpha_beta is not None:
        a, b = alpha_beta["alpha_s"], alpha_beta["beta_s_per_byte"]
        ftab = dict(f) if f else {}
        for L in range(2, 2 * nprocs + 1):
            ftab.setdefault(L, 1.0)
        out["alpha-beta"] = {"alpha": a, "beta": b}
        out["nbl"] = {"alpha": a, "beta": b, "c2": 0.0, "c3": 0.0,
                      **{f"f{L}": float(v) for L, v in sorted(ftab.items()) if L > 1}}
    if loggp is not None:
        out["loggp"] = {"L": loggp["L_s"], "o_s": loggp["o_s_s"], "o_r": loggp["o_r_s"],
                        "g": loggp["g_s"] or 0.0, "G": loggp["G_s_per_byte"] or 0.0}
    return out


def unphysical(models: dict) -> str | None:
    """Why fitted parameters cannot be a machine (:func:`netmodels.models.fit.unphysical`:
    a time or a time per byte below 0, a latency or overhead of 0), or None."""
    for name, (keys, may_be_zero) in UNPHYSICAL_CHECKS.items():
        given = {k: models[name][k] for k in keys if models.get(name, {}).get(k) is not None}
        why = fit_unphysical(f"the {name} fit", may_be_zero, **given) if given else None
        if why:
            return why
    return None


#: model -> (parameters checked, those of them that may be 0: not identified, or clipped)
UNPHYSICAL_CHECKS = {"alpha-beta": (("alpha", "beta"), ()), "nbl": (("alpha",), ()),
                     "loggp": (("L", "o_s", "o_r", "g", "G"), ("L", "g", "G"))}


#: how noisy measurements were (the measurement core's rule, :func:`measure.reliability`)
reliability = sampling.reliability


# ---------------------------------------------------------------- prediction (no MPI)
def network_times(schedule, cal: Calibration, elem_bytes: int = ELEM_BYTES) -> dict:
    """Time (s) of ``schedule``'s messages under each model of ``cal``: the simulator
    (:func:`netmodels.simulate.simulate`) under the model, in its own semantics (the table's:
    α-β and NBL loosely synchronous steps, LogGP each rank on its own clock)."""
    from netmodels.simulate import simulate

    return {m: simulate(schedule, cal.model(m), elem_bytes=elem_bytes).time for m in cal.models}


def software_time(schedule, cal: Calibration, door: bool = True) -> float:
    """The executor's own time (s) for one call of ``schedule`` (0 without a software term)."""
    return 0.0 if cal.software is None else cal.software.time(schedule, door=door)


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


def summarize_errors(rows: list[dict]) -> dict:
    """Per model, with the software term (``relative_error``) and without it
    (``relative_error_network``): :func:`_errors` over all rows and per collective."""
    out = {}
    models = list(dict.fromkeys(m for r in rows for m in r["relative_error"]))
    for model in models:
        mine = [r for r in rows if r["relative_error"].get(model) is not None]
        out[model] = {}
        for part, key in (("with_software", "relative_error"), ("network_only", "relative_error_network")):
            errs = [(r["collective"], r[key][model]) for r in mine]
            out[model][part] = {**_errors([e for _, e in errs]),
                                "by_collective": {c: _errors([e for k, e in errs if k == c])
                                                  for c in dict.fromkeys(k for k, _ in errs)}}
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


def explain(row: dict, model: str) -> str:
    """A row under ``model`` in one line: the sign and size of the error, and its parts in µs."""
    err = row["relative_error"][model]
    net, sw = row["network_s"][model], row["software_s"]
    side = "too slow" if err > 0 else "too fast"
    return (f"{model} predicts {side} by {abs(err):.0%}: network {net * 1e6:.2f} µs + software "
            f"{sw * 1e6:.2f} µs, measured {row['measured_s'] * 1e6:.2f} µs")


# ---------------------------------------------------------------- the collectives
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
        from ..collectives._door import choices

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
    from ..collectives.allreduce import allreduce

    kw = _front_door_kwargs(allreduce)
    return lambda: allreduce(comm, x, algorithm, out=out, **kw)


def _barrier_call(comm, algorithm, x=None, out=None):
    from ..collectives.barrier import Barrier

    return Barrier(comm, algorithm)


#: collective name -> entry.  A new collective (allgather, alltoall) is one entry here.
COLLECTIVES = {
    "allreduce": Collective(_algorithms("allreduce"), _schedule("allreduce"), _allreduce_call),
    "barrier": Collective(_algorithms("barrier"), _schedule("barrier"), _barrier_call, sized=False, door=False),
}


# ---------------------------------------------------------------- MPI side
def add_arguments(p) -> None:
    p.add_argument("--collectives", type=arguments.name_list(tuple(COLLECTIVES)), default=list(COLLECTIVES),
                   help="comma-separated collectives (default: all): " + ",".join(COLLECTIVES))
    p.add_argument("--sizes", type=arguments.size_list_of(8, 4, all_ranks=True), default=DEFAULT_SIZES,
                   help="comma-separated vector lengths in float64 elements, suffix k/M allowed "
                        "(default 2,40,700,12000,100000: between the calibration's lengths)")
    p.add_argument("--iterations", type=arguments.sample_count, default=100,
                   help="timed calls per algorithm and size (default 100; fewer for large vectors)")
    p.add_argument("--warmup", type=arguments.nonneg_int, default=10, help="untimed calls first (default 10)")
    p.add_argument("--statistic", choices=("min", "median"), default="min",
                   help="measured time compared with the predictions (default min: noise only adds time)")
    p.add_argument("--calibration", metavar="FILE", nargs="+",
                   help="take the models' parameters from these JSON files instead of measuring them: a "
                        "ping-pong (α-β, NBL) and a logp (LogGP) --json file, or the 'calibration' block of an "
                        "earlier predict --json (with its software term) or one written in its shape")
    p.add_argument("--calibration-repetitions", type=arguments.sample_count, default=200,
                   help="samples per size of the ping-pong, PRTT and software calibration (default 200)")
    p.add_argument("--testjig", action="store_true",
                   help="also measure f(2) with the f(L) test jig for the NBL model (else f(L) = 1)")
    p.add_argument("--json", metavar="FILE", help="write calibration, rows and errors to FILE as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    arguments.add_force_option(p)


def measure_software(comm, reps: int, progress: bool):
    """The executor's software term (collective; on rank 0 ``(SoftwareCost, its widest
    interval)``, elsewhere None)."""
    from . import software_cost

    sw = software_cost.measure(comm, software_cost.SIZES, software_cost.STEPS, reps, 10, timing.DEFAULT_INNER,
                               progress)
    if sw is None:
        return None
    return software_cost.term(sw), software_cost.worst_interval(sw)


def calibrate(comm, reps: int, testjig: bool, progress: bool, given: Calibration | None = None):
    """Measure what ``given`` does not hold (collective): the network models on their
    microbenchmarks, the software term without the network.  On rank 0 ``(Calibration, None)``
    or ``(None, why)`` if a fit is unphysical; elsewhere ``(None, None)``."""
    from dataclasses import replace

    from netmodels.models.nbl_fit import fit_f

    from . import logp_bench, nbl_testjig, pingpong

    rank = comm.Get_rank()
    if given is None:
        pp = pingpong.measure(comm, CALIBRATION_SIZES, reps, 20, 64 * 2**20, progress)
        lp = logp_bench.measure(comm, PRTT_SIZES, 10, reps, 10, progress)
        jig = nbl_testjig.measure(comm, [600, 6000, 60000], 20, 5, 2, progress) if testjig else []
    sw = measure_software(comm, reps, progress) if given is None or given.software is None else None
    if rank != 0:
        return None, None
    noisy = []
    if given is not None:
        cal = given
    else:
        ab = pingpong.fit(pp, "min_s")["alpha_beta"]
        lg = logp_bench.fit(lp, 10, "min_s")
        f = None
        if jig:
            tab = nbl_testjig.table(jig, "min_s")
            fitted, _, _ = fit_f(tab["S"], {int(L): np.array(v) for L, v in tab["T_s"].items()})
            f = dict(fitted)
        models = network_parameters(ab, lg, f, comm.Get_size())
        why = unphysical(models)
        if why:
            return None, why
        noisy += [(r["ci_relative_halfwidth"] or 0.0, f"ping-pong {r['bytes']} B") for r in pp]
        noisy += [(r[k]["ci_relative_halfwidth"] or 0.0, f"PRTT {k} {r['bytes']} B")
                  for r in lp for k in ("prtt_1_0", "prtt_n_0", "prtt_n_d")]
        cal = Calibration(models, source="measured")
    if sw is not None:
        term, widest = sw
        noisy.append(widest)
        cal = replace(cal, software=term)
    return replace(cal, reliability=reliability(noisy) if noisy else cal.reliability), None


def measure(comm, collectives, sizes, iterations, warmup, progress, inner: int = timing.DEFAULT_INNER) -> list[dict]:
    """Time every algorithm of every collective through its front door (collective);
    rows ``{collective, algorithm, nelems, min_s, median_s, median_ci_s, times_s, ...,
    timing_method}`` on rank 0.  A sample is ``inner`` back-to-back calls after one barrier,
    divided by ``inner``, the slowest rank's (:func:`timing.time_interleaved`): the barrier's
    exit skew is not charged to every call."""
    P, rank = comm.Get_size(), comm.Get_rank()
    method = timing.loop_method(inner)
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
            iters = timing.capped_iterations(ELEM_BYTES * n * inner, iterations, 256 * 2**20, at_least=10)
            samples = timing.time_interleaved(comm, calls, iters, warmup, inner=inner)   # slowest rank's
            for b in frees:
                b.free()
            if rank == 0:
                for a, row in zip(algorithms, samples):
                    rows.append({"collective": name, "algorithm": a, "nelems": n,
                                 "bytes": ELEM_BYTES * n, **statistics.summarize(row), "timing_method": method})
    comm.Barrier()
    return rows


def compare(rows: list[dict], cal: Calibration, P: int, statistic: str = "min_s") -> list[dict]:
    """Add to measured rows each model's network time, the software time, their sums and the
    relative errors with and without the software term (no MPI)."""
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
        sw = software_time(sched, cal, door=entry.door)
        pred = {m: t + sw for m, t in net.items()}
        out.append({**r, "measured_s": meas, "network_s": net, "software_s": sw, "predicted_s": pred,
                    "relative_error": {m: relative_error(t, meas) for m, t in pred.items()},
                    "relative_error_network": {m: relative_error(t, meas) for m, t in net.items()},
                    "schedule": schedule_key(sched)})
    keys = {r["schedule"] for r in out if r["schedule"] is not None}
    index = {k: i for i, k in enumerate(sorted(keys, key=repr))}
    for r in out:       # the key itself is bytes: keep its number only
        r["schedule"] = None if r["schedule"] is None else index[r["schedule"]]
    return out


#: largest relative change between the calibrations before and after the measurement that
#: still counts as one machine (:func:`drift`); software times below FLOOR_S count as FLOOR_S
STABLE_TOLERANCE = 0.25
FLOOR_S = 1e-6


def drift(before: Calibration, after: Calibration) -> dict:
    """How much the machine moved during a run: the relative differences of every parameter
    measured both times (each model's, and the software term's at every length), the largest
    with where it is; ``stable`` if it is within :data:`STABLE_TOLERANCE` (no MPI)."""
    def rel(x, y, floor=0.0):
        low = max(min(abs(x), abs(y)), floor)
        return abs(x - y) / low if low > 0 else (0.0 if x == y else float("inf"))

    diffs = []
    if before.source == after.source == "measured":
        for m, params in before.models.items():
            diffs += [(rel(v, after.models[m][k]), f"{m} {k}") for k, v in params.items()
                      if k in after.models.get(m, {}) and not k.startswith("f")]
    b, a = before.software, after.software
    if b is not None and a is not None and b.knots == a.knots:
        diffs.append((rel(b.step, a.step, FLOOR_S), "software per step"))
        for part in ("door", "copy", "combine"):
            diffs += [(rel(x, y, FLOOR_S), f"software {part} at n = {n}")
                      for n, x, y in zip(b.knots, getattr(b, part), getattr(a, part))]
    worst, at = max(diffs, key=lambda d: d[0], default=(0.0, None))     # the first of equals
    return {"largest": worst, "at": at, "stable": bool(worst <= STABLE_TOLERANCE)}


def drift_line(d: dict) -> str:
    """:func:`drift` in one line."""
    if d["at"] is None:
        return "calibration before and after the measurement: nothing measured twice"
    verdict = ("the machine held still" if d["stable"] else
               f"MORE than {STABLE_TOLERANCE:.0%}: the machine changed during the run, the errors above "
               "are not the models'")
    return (f"calibration before and after the measurement: the largest change is {d['largest']:.0%} "
            f"({d['at']}); {verdict}")


def reliability_line(r: dict | None) -> str:
    """The calibration's noise in one line."""
    if r is None:
        return "calibration given, not measured: its noise is not known here"
    if r["reliable"]:
        return (f"calibration noise: every median's 95 % interval within ±{r['worst']:.1%} "
                f"(limit ±{r['limit']:.0%})")
    return (f"UNRELIABLE calibration: the median of {r['at']} is known only to ±{r['worst']:.0%} "
            f"(limit ±{r['limit']:.0%}); the machine is busy: run again when it is quiet")


def _us(t) -> str:
    return f"{t * 1e6:9.2f}" if t is not None else f"{'-':>9}"


def row_table(rows: list[dict], models) -> str:
    """Every row with its parts: measured, software, and per model network and total (µs)."""
    head = f"{'collective:algorithm':<30} {'N':>7} {'measured':>9} {'software':>9}"
    head += "".join(f" | {m + ' net':>14} {'total':>9} {'err':>6}" for m in models)
    lines = [head + "   (µs)", "-" * len(head)]
    for r in rows:
        line = f"{r['collective'] + ':' + r['algorithm']:<30} {r['nelems']:>7} {_us(r['measured_s'])} " \
               f"{_us(r['software_s'])}"
        for m in models:
            if m in r["predicted_s"]:
                line += f" | {_us(r['network_s'][m]):>14} {_us(r['predicted_s'][m])} {r['relative_error'][m]:+6.0%}"
            else:
                line += f" | {'-':>14} {'-':>9} {'':>6}"
        lines.append(line)
    return "\n".join(lines)


def report(rows: list[dict], summary: dict, valid: bool, P: int) -> str:
    """The rows with their parts, then per model and collective the median |error| of the
    model alone and with the software term (95 % intervals), the best model, and each model's
    worst row."""
    models = list(summary)
    lines = []
    if not valid:
        lines += ["NOT VALID: ranks outnumber cores (oversubscribed): these times measure the "
                  "scheduler; no model is judged by them.", ""]
    lines += [row_table(rows, models), ""]
    head = (f"{'model':<11} {'collective':<10} {'network alone: median |err| [95 % CI]':>40} "
            f"{'with software':>26} {'within ' + format(TOLERANCE, '.0%'):>10}")
    lines += [head, "-" * len(head)]

    def cell(e):
        lo, hi = e["median_abs_ci"]
        return f"{e['median_abs']:6.0%} [{lo:4.0%}, {hi:4.0%}]"
    for m, s in summary.items():
        w, n = s["with_software"], s["network_only"]
        lines.append(f"{m:<11} {'(all)':<10} {cell(n):>40} {cell(w):>26} {w['within_tolerance']:>4} of {w['rows']}")
        for c in w["by_collective"]:
            wc, nc = w["by_collective"][c], n["by_collective"][c]
            lines.append(f"{'':<11} {c:<10} {cell(nc):>40} {cell(wc):>26} "
                         f"{wc['within_tolerance']:>4} of {wc['rows']}")
    best = best_models(summary)
    if best:
        lines += ["", "best model (median |error| with the software term): "
                  + "; ".join(f"{c}: {m} ({(summary[m]['with_software'] if c == '(all)' else summary[m]['with_software']['by_collective'][c])['median_abs']:.0%})"
                              for c, m in best.items())]
        lines += ["where each model misses most:"]
        for m in models:
            worst = max((r for r in rows if m in r["relative_error"]), key=lambda r: abs(r["relative_error"][m]))
            lines.append(f"  {worst['collective']}:{worst['algorithm']} N = {worst['nelems']}: {explain(worst, m)}")
    modelled = [r for r in rows if r["schedule"] is not None]
    distinct = len({r["schedule"] for r in modelled})
    lines += ["", f"{len(modelled)} rows predicted, {distinct} distinct schedules on P = {P} ranks"
              + ("; at P = 2 every algorithm is a chain of one-way or exchange steps, so the algorithms "
                 "differ only in their steps' kinds and lengths: on a machine with more cores, predict at "
                 "P = its cores (up to 8) to test their structure" if P == 2 else "")]
    return "\n".join(lines)


def _agree(comm, error: str | None) -> str | None:
    """Rank 0's error (or None), known to every rank."""
    return comm.bcast(error, root=0)


def run(args) -> int:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    P, rank = comm.Get_size(), comm.Get_rank()
    if P < 2:
        if rank == 0:
            print("predict needs at least 2 ranks: mpiexec -n 2 python -m mpi_exercises predict",
                  file=sys.stderr)
        return 2
    given, error = None, None
    if args.calibration and rank == 0:
        try:
            given = load_calibration(args.calibration, P)
        except ValueError as exc:
            error = str(exc)
    error = _agree(comm, error)
    if error:
        if rank == 0:
            print(f"predict: error: {error}", file=sys.stderr)
        return 2
    given = comm.bcast(given, root=0)
    oversubscribed = placement.warn_if_oversubscribed(comm)
    cores = min(placement.usable_cores(), 8)
    if rank == 0 and P < cores and not oversubscribed:
        print(f"predict: {P} ranks on a machine with {placement.usable_cores()} usable cores: "
              f"mpiexec -n {cores} tests the algorithms' structure better", file=sys.stderr)
    progress = not args.no_progress
    cal, why = calibrate(comm, args.calibration_repetitions, args.testjig, progress, given)
    why = _agree(comm, why)
    if why:
        if rank == 0:
            print(f"predict: refused: {why}. The machine was probably busy during the calibration: run "
                  "again when it is quiet, or give the parameters with --calibration FILE", file=sys.stderr)
        return 2
    rows = measure(comm, args.collectives, args.sizes, args.iterations, args.warmup, progress)
    after = None
    if given is None or given.software is None:           # measured something: did the machine move?
        after, _ = calibrate(comm, args.calibration_repetitions, args.testjig, progress, given)
    if rank != 0:
        return 0
    rows = compare(rows, cal, P, args.statistic + "_s")
    summary = summarize_errors(rows)
    valid = not oversubscribed
    moved = drift(cal, after) if after is not None else {"largest": None, "at": None, "stable": None}
    print(f"predictions against measurements on {P} ranks ({args.statistic} of the samples; "
          f"error = (predicted - measured) / measured; calibration: {cal.source})")
    print(report(rows, summary, valid, P), flush=True)
    print(reliability_line(cal.reliability))
    print(drift_line(moved), flush=True)
    if args.json:
        write_json(args.json, {
            "benchmark": "predict", "environment": placement.environment(comm),
            "command": f"mpiexec -n {P} python -m mpi_exercises " + " ".join(sys.argv[1:]),
            "oversubscribed": oversubscribed, "valid": valid, "load_average_1min": placement.load_average(),
            "parameters": {"collectives": args.collectives, "sizes_elements": args.sizes,
                           "iterations": args.iterations, "warmup": args.warmup, "statistic": args.statistic,
                           "elem_bytes": ELEM_BYTES, "models": list(cal.models), "testjig": args.testjig,
                           "calibration_file": args.calibration},
            "calibration": cal.as_dict(), "calibration_after": after.as_dict() if after else None,
            "reliable": None if cal.reliability is None else cal.reliability["reliable"],
            "drift": moved, "stable": moved["stable"], "rows": rows, "summary": summary,
            "best": best_models(summary)})
        print(f"results written to {args.json}")
    return 0
