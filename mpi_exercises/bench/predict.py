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

After calibration the launch's mode is measured (:func:`mpi_exercises.bench.launch_mode.detect_mode`:
MPI's Allreduce over an exchange of 1 MiB; 0.2 s at load 4 on the kit's 2-core machine): launches a
minute apart can time long messages several times apart, so the JSON (``launch_mode``) and the last
line name it.  It is one reading: under load, readings within one launch differ too
(``mpiexec -n 2 python -m mpi_exercises.bench.launch_mode --repeat 10`` repeats it).
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
from .launch_mode import detect_mode
#: the network models a prediction report compares, by their names in the table of models: each
#: plain model, then the same with a measured term added (:func:`network_parameters`), so that the
#: report shows what each term buys
MODELS = ("alpha-beta", "alpha-beta-segmented", "alpha-beta-exchange", "alpha-beta-exchange-segmented",
          "nbl", "nbl-exchange", "nbl-exchange-segmented", "loggp", "loggp-segmented", "loggops")
#: the benchmarks each model of :data:`MODELS` is calibrated from (``python -m mpi_exercises NAME``)
MEASURED_BY = {"alpha-beta": ("pingpong",), "alpha-beta-segmented": ("pingpong",),
               "alpha-beta-exchange": ("pingpong", "exchange"),
               "alpha-beta-exchange-segmented": ("pingpong", "exchange"), "nbl": ("pingpong",),
               "nbl-exchange": ("pingpong", "exchange"), "nbl-exchange-segmented": ("pingpong", "exchange"),
               "loggp": ("logp",), "loggp-segmented": ("logp", "pingpong"), "loggops": ("logp", "pingpong")}
#: the plain models: an unphysical fit of one of them refuses the calibration; a model with an
#: added term whose fit is unphysical is left out with a warning (:func:`keep_physical`)
PLAIN = ("alpha-beta", "nbl", "loggp")
#: the benchmark kinds a --calibration file may hold, by its "benchmark" field
FILE_KINDS = {"pingpong": "pingpong", "logp-prtt": "logp", "exchange": "exchange"}
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
    #: the benchmarks whose measured files it was fitted from (pingpong, exchange, logp)
    measured_from: tuple = ()
    #: what a measured calibration measured, per benchmark its per-size summaries without the
    #: samples (written beside the block by ``predict --json``: the fits can be redone from it)
    measurements: dict | None = None

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


def load_calibration(paths, nprocs: int, warnings: list | None = None) -> Calibration:
    """The calibration in the JSON files ``paths``, merged in order (a later file's model
    replaces an earlier one's): a calibration block or a whole ``predict --json`` report, a
    ``pingpong --json`` file (α-β, its segments and NBL), an ``exchange --json`` file (the
    exchange terms, with a ping-pong file) or a ``logp --json`` file (LogGP; LogGOPS with a
    ping-pong file), each fitted as predict fits its own (:func:`fits`).  ValueError naming the
    file and the problem; an unphysical fit of a plain model is refused (:func:`unphysical`),
    and so is a file that is a link, not a regular file, or too large
    (:func:`netmodels.outputs.read_input`: a named pipe is never opened, so no rank waits on
    it).  ``warnings`` (a list) receives one line per model with an added term left out."""
    models, software, noisy, measured = {}, None, [], {}
    for path in [paths] if isinstance(paths, str) else paths:
        try:
            data = json.loads(read_input(path).decode("utf-8"))
            kind = FILE_KINDS.get(data.get("benchmark") if isinstance(data, dict) else None)
            if kind is not None:
                results = data["results"]
                measured[kind] = (results, data["parameters"]["n"] if kind == "logp" else None)
                part = {m: p for m, p in parameters_of(measured, nprocs).items() if kind in MEASURED_BY[m]}
                if kind != "logp":
                    noisy += [(r["ci_relative_halfwidth"] or 0.0, f"{path}: {kind} {r['bytes']} B") for r in results]
            else:
                c = Calibration.from_dict(data, source=str(path))
                part, software = c.models, c.software or software
            why = unphysical(part)
            if why:
                raise ValueError(why)
            part, dropped = keep_physical(part)
            if warnings is not None:
                warnings += [f"--calibration {path}: {w}" for w in dropped]
            models.update(part)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError, KeyError, ValueError,
                TypeError) as exc:
            what = f"no {exc} in it" if isinstance(exc, KeyError) else str(exc)
            what = exc.why if isinstance(exc, Refused) else what
            raise ValueError(f"--calibration {path}: {what}") from None
    if "exchange" in measured and "pingpong" not in measured:
        why = ("the exchange terms are fitted beside the ping-pong's α and β and at its switch: give its "
               "pingpong --json file too (mpiexec -n 2 python -m mpi_exercises pingpong --json pingpong.json)")
        if not models:
            raise ValueError(f"--calibration: {why}")
        if warnings is not None:
            warnings.append(f"--calibration: {why}")
    try:
        return Calibration(models, software, ", ".join(map(str, [paths] if isinstance(paths, str) else paths)),
                           reliability(noisy) if noisy else None, tuple(measured))
    except ValueError as exc:
        raise ValueError(f"--calibration: {exc}") from None


def missing_line(cal: Calibration) -> str | None:
    """One line naming the models of :data:`MODELS` a calibration lacks and what to measure for
    them (a file written before the exchange benchmark, LogGOPS or the segments), or None."""
    missing = [m for m in MODELS if m not in cal.models]
    if not missing:
        return None
    needs = sorted({b for m in missing for b in MEASURED_BY[m]} - set(cal.measured_from),
                   key=["pingpong", "exchange", "logp"].index)
    return (f"predict: warning: the calibration has no {', '.join(missing)}: measure "
            + " and ".join(f"`mpiexec -n 2 python -m mpi_exercises {b} --json {b}.json`" for b in needs)
            + f" and give {'them' if len(needs) > 1 else 'it'} to --calibration as well (predict without "
            "--calibration measures every one); predicting "
            + ", ".join(cal.models) + " only")


def fits(measured: dict) -> dict:
    """The one fit of each measured input (no MPI), by kind: ``measured`` maps ``"pingpong"``,
    ``"exchange"``, ``"logp"`` to ``(results, n)`` (``n``: the PRTT's message count, else None).
    The ping-pong and the exchange by :func:`pingpong.fit_file` (:data:`pingpong.FIT_STATISTIC`),
    the exchange's two segments split at the ping-pong's switch (one switch: MPI's); LogGP by
    :func:`logp_bench.fit` on the same statistic, LogGOPS's ``O`` from the PRTT's overheads per
    size (:func:`netmodels.models.logp.fit_copy_overhead`)."""
    from netmodels.models.logp import fit_copy_overhead

    from . import logp_bench, pingpong

    out = {}
    if "pingpong" in measured:
        out["pingpong"] = pingpong.fit_file({"results": measured["pingpong"][0]})
    if "exchange" in measured:
        switch = out.get("pingpong", {}).get("piecewise", {}).get("switch_bytes")
        results = measured["exchange"][0]
        try:
            out["exchange"] = pingpong.fit(results, pingpong.FIT_STATISTIC, switch=switch)
        except ValueError:          # the ping-pong's switch leaves too few of its sizes on a side
            out["exchange"] = pingpong.fit(results, pingpong.FIT_STATISTIC)
            out["exchange"].pop("piecewise", None)
    if "logp" in measured:
        results, n = measured["logp"]
        lg = logp_bench.fit(results, n, pingpong.FIT_STATISTIC)
        lg["O_s_per_byte"] = fit_copy_overhead([r["bytes"] for r in results], lg["o_s_by_size_s"],
                                               lg["o_r_by_size_s"])
        out["logp"] = lg
    return out


def parameters_of(measured: dict, nprocs: int) -> dict:
    """Each model's parameters from the measured inputs (:func:`fits`, then
    :func:`network_parameters`)."""
    f = fits(measured)
    pp, ex = f.get("pingpong", {}), f.get("exchange", {})
    return network_parameters(pp.get("alpha_beta"), f.get("logp"), None, nprocs, segments=pp.get("piecewise"),
                              exchange=ex.get("alpha_beta"), exchange_segments=ex.get("piecewise"))


def network_parameters(alpha_beta: dict | None, loggp: dict | None, f: dict | None, nprocs: int, *,
                       segments: dict | None = None, exchange: dict | None = None,
                       exchange_segments: dict | None = None) -> dict:
    """Each model's parameters (by the table's names) from the ping-pong fit ``alpha_beta``
    (``alpha_s``, ``beta_s_per_byte``: α-β and NBL), the PRTT fit ``loggp`` (``L_s``, ``o_s_s``,
    ``o_r_s``, ``g_s``, ``G_s_per_byte``; g and G None when not identified: 0) and the f(L)
    table ``f`` (None: f(L) = 1 for every L a schedule on ``nprocs`` ranks can have); a fit
    that is None gives no model.  Combining is in the software term, so no model charges it.

    The models with an added term, each beside its plain one: ``segments`` (the ping-pong's
    two-segment fit: ``switch_bytes``, ``below`` and ``above`` as ``alpha_beta``) gives
    "alpha-beta-segmented"; ``exchange`` (the exchange benchmark's fit, as ``alpha_beta``)
    "alpha-beta-exchange" and NBL's f(2) = β_x / β ("nbl-exchange"; with ``segments``,
    "nbl-exchange-segmented": α and β of the segments); with ``exchange_segments`` (its two
    segments at the ping-pong's switch) as well, "alpha-beta-exchange-segmented"; ``loggp`` with
    ``segments`` gives "loggp-segmented" (G_r: the ping-pong's time per byte from the switch on:
    the slope of LogGP's one-way time) and, with ``O_s_per_byte``, "loggops" (LogGP's parameters,
    O, and S = the switch - 1: a message of the switch's size goes by rendezvous)."""
    out = {}
    if alpha_beta is not None:
        a, b = alpha_beta["alpha_s"], alpha_beta["beta_s_per_byte"]
        ftab = dict(f) if f else {}
        for L in range(2, 2 * nprocs + 1):
            ftab.setdefault(L, 1.0)
        out["alpha-beta"] = {"alpha": a, "beta": b}
        out["nbl"] = {"alpha": a, "beta": b, "c2": 0.0, "c3": 0.0,
                      **{f"f{L}": float(v) for L, v in sorted(ftab.items()) if L > 1}}
        if segments is not None:
            lo, hi = segments["below"], segments["above"]
            seg = {"alpha": lo["alpha_s"], "beta": lo["beta_s_per_byte"], "S": float(segments["switch_bytes"]),
                   "alpha_r": hi["alpha_s"], "beta_r": hi["beta_s_per_byte"]}
            out["alpha-beta-segmented"] = seg
        if exchange is not None:
            ax, bx = exchange["alpha_s"], exchange["beta_s_per_byte"]
            out["alpha-beta-exchange"] = {"alpha": a, "beta": b, "alpha_x": ax, "beta_x": bx}
            out["nbl-exchange"] = {**out["nbl"], "f2": bx / b}
            if segments is not None:
                out["nbl-exchange-segmented"] = {**out["nbl-exchange"], "alpha": seg["alpha"], "beta": seg["beta"],
                                                 "S": seg["S"], "alpha_r": seg["alpha_r"], "beta_r": seg["beta_r"]}
            if segments is not None and exchange_segments is not None \
                    and float(exchange_segments["switch_bytes"]) == float(segments["switch_bytes"]):
                xlo, xhi = exchange_segments["below"], exchange_segments["above"]
                out["alpha-beta-exchange-segmented"] = {
                    **seg, "alpha_x": xlo["alpha_s"], "beta_x": xlo["beta_s_per_byte"],
                    "alpha_xr": xhi["alpha_s"], "beta_xr": xhi["beta_s_per_byte"]}
    if loggp is not None:
        out["loggp"] = {"L": loggp["L_s"], "o_s": loggp["o_s_s"], "o_r": loggp["o_r_s"],
                        "g": loggp["g_s"] or 0.0, "G": loggp["G_s_per_byte"] or 0.0}
        if segments is not None:
            out["loggp-segmented"] = {**out["loggp"], "S": float(segments["switch_bytes"]),
                                      "G_r": segments["above"]["beta_s_per_byte"]}
        if segments is not None and loggp.get("O_s_per_byte") is not None:
            out["loggops"] = {**out["loggp"], "O": float(loggp["O_s_per_byte"]),
                              "S": max(float(segments["switch_bytes"]) - 1.0, 0.0)}
    return out


def unphysical(models: dict) -> str | None:
    """Why fitted parameters of a plain model (:data:`PLAIN`) cannot be a machine
    (:func:`netmodels.models.fit.unphysical`: a time or a time per byte below 0, a latency or
    overhead of 0), or None."""
    for name, (keys, may_be_zero) in UNPHYSICAL_CHECKS.items():
        given = {k: models[name][k] for k in keys if models.get(name, {}).get(k) is not None}
        why = fit_unphysical(f"the {name} fit", may_be_zero, **given) if given else None
        if why:
            return why
    return None


def keep_physical(models: dict) -> tuple[dict, list[str]]:
    """``(models, warnings)``: the models with an added term whose parameters the table's model
    refuses (a segment's β <= 0, a message of S bytes taking no time) left out, one line each
    saying why; the plain ones are :func:`unphysical`'s to refuse."""
    kept, dropped = {}, []
    for name, params in models.items():
        if name not in PLAIN and name in MODELS:
            try:
                table.get(name).build(**params)
            except (TypeError, ValueError) as exc:
                dropped.append(f"{name} left out: its fit is no machine ({exc}); the timings were probably "
                               "disturbed: measure again when the machine is quiet")
                continue
        kept[name] = params
    return kept, dropped


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


def size_class_table(summary: dict) -> str:
    """Per model and size class, the median |error| and median signed error with the software term."""
    classes = [c for c, _ in SIZE_CLASSES]
    head = f"{'model':<30}" + "".join(f" {c + ' |err| (signed)':>24}" for c in classes)
    lines = [head, "-" * len(head)]
    for m, s in summary.items():
        by = s["with_software"]["by_size_class"]
        lines.append(f"{m:<30}" + "".join(
            f" {format(by[c]['median_abs'], '.0%') + ' (' + format(by[c]['median'], '+.0%') + ')':>24}"
            if c in by else f" {'-':>24}" for c in classes))
    return "\n".join(lines)


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
    microbenchmarks (ping-pong, exchange over the same sizes, PRTT), the software term
    without the network.  On rank 0 ``(Calibration, None)`` or ``(None, why)`` if a fit of a
    plain model is unphysical (a model with an added term whose fit is unphysical is left
    out, the reason in ``reliability["left_out"]``); elsewhere ``(None, None)``."""
    from dataclasses import replace

    from netmodels.models.nbl_fit import fit_f

    from . import exchange, logp_bench, nbl_testjig, pingpong

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
        for m, params in before.models.items():      # the plain models' (a segment's intercept
            if m not in PLAIN:                         # may be near 0, its switch jump a size)
                continue
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


#: models per table of rows (a wider table would not fit a terminal)
MODELS_PER_TABLE = 3


def row_table(rows: list[dict], models) -> str:
    """Every row with its parts: measured, software, and per model network and total (µs), in
    tables of :data:`MODELS_PER_TABLE` models."""
    models = list(models)
    if len(models) > MODELS_PER_TABLE:
        return "\n\n".join(row_table(rows, models[k:k + MODELS_PER_TABLE])
                            for k in range(0, len(models), MODELS_PER_TABLE))
    width = max([14] + [len(m) + 4 for m in models])
    head = f"{'collective:algorithm':<30} {'N':>7} {'measured':>9} {'software':>9}"
    head += "".join(f" | {m + ' net':>{width}} {'total':>9} {'err':>6}" for m in models)
    lines = [head + "   (µs)", "-" * len(head)]
    for r in rows:
        line = f"{r['collective'] + ':' + r['algorithm']:<30} {r['nelems']:>7} {_us(r['measured_s'])} " \
               f"{_us(r['software_s'])}"
        for m in models:
            if m in r["predicted_s"]:
                line += f" | {_us(r['network_s'][m]):>{width}} {_us(r['predicted_s'][m])} {r['relative_error'][m]:+6.0%}"
            else:
                line += f" | {'-':>{width}} {'-':>9} {'':>6}"
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
    head = (f"{'model':<30} {'collective':<10} {'network alone: median |err| [95 % CI]':>40} "
            f"{'with software':>26} {'within ' + format(TOLERANCE, '.0%'):>10}")
    lines += [head, "-" * len(head)]

    def cell(e):
        lo, hi = e["median_abs_ci"]
        return f"{e['median_abs']:6.0%} [{lo:4.0%}, {hi:4.0%}]"
    for m, s in summary.items():
        w, n = s["with_software"], s["network_only"]
        lines.append(f"{m:<30} {'(all)':<10} {cell(n):>40} {cell(w):>26} {w['within_tolerance']:>4} of {w['rows']}")
        for c in w["by_collective"]:
            wc, nc = w["by_collective"][c], n["by_collective"][c]
            lines.append(f"{'':<30} {c:<10} {cell(nc):>40} {cell(wc):>26} "
                         f"{wc['within_tolerance']:>4} of {wc['rows']}")
    lines += ["", "median |error| with the software term per size class of the vector (median signed error):",
              size_class_table(summary)]
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
    given, error, notes = None, None, []
    if args.calibration and rank == 0:
        try:
            given = load_calibration(args.calibration, P, notes)
        except ValueError as exc:
            error = str(exc)
    error = _agree(comm, error)
    if error:
        if rank == 0:
            print(f"predict: error: {error}", file=sys.stderr)
        return 2
    if given is not None and rank == 0:
        for line in notes + [missing_line(given)]:
            if line:
                print(line if line.startswith("predict:") else f"predict: warning: {line}", file=sys.stderr)
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
    mode = detect_mode(comm)                                  # the launch's mode, beside what it measures
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
    for line in (cal.reliability or {}).get("left_out", []):
        print(f"warning: {line}")
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
            "calibration_measurements": cal.measurements,
            "reliable": None if cal.reliability is None else cal.reliability["reliable"],
            "drift": moved, "stable": moved["stable"], "launch_mode": mode, "rows": rows, "summary": summary,
            "best": best_models(summary)})
        print(f"results written to {args.json}")
    load = placement.load_average()
    best = best_models(summary).get("(all)")
    print(f"predict: {P} ranks{' OVERSUBSCRIBED (not valid)' if oversubscribed else ''}, 1-minute load "
          f"{'unknown' if load is None else format(load, '.1f')}; best model "
          + (f"{best} (median |error| {summary[best]['with_software']['median_abs']:.0%})" if best else "none")
          + f"; calibration {'reliable' if (cal.reliability or {}).get('reliable') else 'NOT reliable or not known'}"
          + f"; launch mode {mode['mode']} (MPI Allreduce / exchange at {mode['bytes'] // 1024} KiB "
            f"{mode['ratio']:.1f}, slow above {mode['threshold']:g})",
          flush=True)
    return 0
