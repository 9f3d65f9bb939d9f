"""predict's calibration, apart from what is predicted (no MPI): the parameters of each network
model the table of models declares a calibration for (:mod:`netmodels.models.table`, its
``Calibrated``: the benchmarks, the fits and the physical ranges) fitted on its own
microbenchmarks' measured files, a student's ``--calibration`` files read and checked, and how
much the machine moved between two calibrations of one run (:func:`drift`)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np

from netmodels.models import table
from netmodels.models.fit import unphysical as fit_unphysical
from netmodels.outputs import Refused, read_input

from ...software import SoftwareCost
from .. import measure as sampling



def calibrated() -> tuple:
    """The network models a prediction report compares: those the table of models declares a
    calibration for, in its order (each plain model and the same with a measured term added, so
    that the report shows what each term buys)."""
    return table.names(calibrated=True)


def plain() -> tuple:
    """The plain models of :func:`calibrated`: an unphysical fit of one of them refuses the
    calibration; a model with an added term whose fit is unphysical is left out with a warning
    (:func:`keep_physical`)."""
    return tuple(m for m in calibrated() if table.get(m).calibration.plain)


def measured_by(name: str) -> tuple:
    """The benchmarks model ``name`` is calibrated from (``python -m mpi_exercises NAME``)."""
    return table.get(name).calibration.measured_by


#: :func:`calibrated` and :func:`plain` as the table declares them when this module is imported
MODELS, PLAIN = calibrated(), plain()
#: the benchmark kinds a --calibration file may hold, by its "benchmark" field (a ping-pong or an
#: exchange file with ``"fresh": true`` is of kind ``pingpong-fresh`` or ``exchange-fresh``:
#: :func:`file_kind`)
FILE_KINDS = {"pingpong": "pingpong", "logp-prtt": "logp", "exchange": "exchange"}
#: the measured kinds in the order a missing line names them, each with its command's arguments
COMMANDS = {"pingpong": "pingpong --json pingpong.json", "exchange": "exchange --json exchange.json",
            "pingpong-fresh": "pingpong --fresh --json pingpong-fresh.json",
            "exchange-fresh": "exchange --fresh --json exchange-fresh.json", "logp": "logp --json logp.json"}
#: the measured kinds of fresh data (:mod:`mpi_exercises.bench.fresh_data`), by their clean kind
FRESH = {"pingpong": "pingpong-fresh", "exchange": "exchange-fresh"}


def file_kind(data) -> str | None:
    """The measured kind of a --calibration file (:data:`FILE_KINDS`; a ping-pong or an exchange
    of fresh data, ``"fresh": true``, is of its kind in :data:`FRESH`), or None for a calibration
    block or report."""
    kind = FILE_KINDS.get(data.get("benchmark") if isinstance(data, dict) else None)
    return FRESH.get(kind, kind) if isinstance(data, dict) and data.get("fresh") is True else kind
#: a calibration is unreliable if a median's 95 % interval is wider than this fraction of it on
#: either side (the measurement core's rule: five times its default target)
NOISY = sampling.NOISY


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
                             f"models: {', '.join(calibrated())}")
        sw = d.get("software")
        return cls({k: dict(v) if isinstance(v, dict) else v for k, v in d["models"].items()},
                   None if sw is None else SoftwareCost.from_dict(sw), source or d.get("source") or "given",
                   d.get("reliability"))


def load_calibration(paths, nprocs: int, warnings: list | None = None) -> Calibration:
    """The calibration in the JSON files ``paths``, merged in order (a later file's model
    replaces an earlier one's): a calibration block or a whole ``predict --json`` report, a
    ``pingpong --json`` file (α-β, its segments and NBL), an ``exchange --json`` file (the
    exchange terms, with a ping-pong file) or a ``logp --json`` file (LogGP; LogGOPS with a
    ping-pong file), each fitted as predict fits its own (:func:`fits`; a logp file adds to
    ``warnings`` the line of :func:`G_line`: from which sizes G comes).  ValueError naming the
    file and the problem; an unphysical fit of a plain model is refused (:func:`unphysical`),
    and so is a file that is a link, not a regular file, or too large
    (:func:`netmodels.outputs.read_input`: a named pipe is never opened, so no rank waits on
    it).  ``warnings`` (a list) receives one line per model with an added term left out."""
    models, software, noisy, measured = {}, None, [], {}
    for path in [paths] if isinstance(paths, str) else paths:
        try:
            data = json.loads(read_input(path).decode("utf-8"))
            kind = file_kind(data)
            if kind is not None:
                results = data["results"]
                measured[kind] = (results, data["parameters"]["n"] if kind == "logp" else None)
                part = {m: p for m, p in parameters_of(measured, nprocs).items() if kind in measured_by(m)}
                if kind != "logp":
                    noisy += [(r["ci_relative_halfwidth"] or 0.0, f"{path}: {kind} {r['bytes']} B") for r in results]
                elif warnings is not None and G_line(results, data["parameters"]["n"], path):
                    warnings.append(G_line(results, data["parameters"]["n"], path))
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
    lonely = [ping for ex, ping in (("exchange", "pingpong"), ("exchange-fresh", "pingpong-fresh"))
              if ex in measured and ping not in measured]
    if lonely:
        why = ("the exchange terms are fitted beside the ping-pong's α and β and at its switch: give its "
               + " and ".join(f"{COMMANDS[k].split(' --json')[0]} --json file" for k in lonely) + " too ("
               + "; ".join(f"mpiexec -n 2 python -m mpi_exercises {COMMANDS[k]}" for k in lonely) + ")")
        if not models:
            raise ValueError(f"--calibration: {why}")
        if warnings is not None:
            warnings.append(f"--calibration: {why}")
    try:
        return Calibration(models, software, ", ".join(map(str, [paths] if isinstance(paths, str) else paths)),
                           reliability(noisy) if noisy else None, tuple(measured))
    except ValueError as exc:
        raise ValueError(f"--calibration: {exc}") from None


def G_line(results: list, n: int, where: str = "the PRTT") -> str | None:
    """One line saying from which sizes of a PRTT (its per-size ``results``, ``n`` messages)
    LogGP's g and G come (:func:`logp_bench.G_source`), or None if they are not identified."""
    from .. import logp_bench, pingpong

    fitted = logp_bench.fit(results, n, pingpong.FIT_STATISTIC)
    return f"predict: LogGP from {where}: {logp_bench.G_source(fitted)}" if fitted["g_identified"] else None


def missing_line(cal: Calibration) -> str | None:
    """One line naming the models of :func:`calibrated` a calibration lacks and what to measure
    for them (a file written before the exchange benchmark, its fresh exchange, LogGOPS or the
    segments), or None."""
    missing = [m for m in calibrated() if m not in cal.models]
    if not missing:
        return None
    needs = sorted({b for m in missing for b in measured_by(m)} - set(cal.measured_from), key=list(COMMANDS).index)
    return (f"predict: warning: the calibration has no {', '.join(missing)}: measure "
            + " and ".join(f"`mpiexec -n 2 python -m mpi_exercises {COMMANDS[b]}`" for b in needs)
            + f" and give {'them' if len(needs) > 1 else 'it'} to --calibration as well (predict without "
            "--calibration measures every one); predicting "
            + ", ".join(cal.models) + " only")


def fits(measured: dict) -> dict:
    """The one fit of each measured input (no MPI), by kind: ``measured`` maps ``"pingpong"``,
    ``"exchange"``, ``"pingpong-fresh"``, ``"exchange-fresh"``, ``"logp"`` to ``(results, n)``
    (``n``: the PRTT's message count, else None).  The ping-pongs and the exchanges by
    :func:`pingpong.fit_file` (:data:`pingpong.FIT_STATISTIC`), each exchange's two segments split
    at its ping-pong's switch (the fresh exchange at the fresh ping-pong's; one switch: MPI's; none
    where it leaves too few of the exchange's sizes on a side); LogGP by
    :func:`logp_bench.fit` on the same statistic (G from the long sizes when the PRTT has them),
    LogGOPS's ``O`` from the PRTT's send overheads over its gap-bound sizes below the ping-pong's
    switch (:func:`netmodels.models.logp_fit.fit_copy_overhead`; None where fewer than two)."""
    from netmodels.models.logp_fit import fit_copy_overhead

    from .. import logp_bench, pingpong

    out = {}
    for kind in ("pingpong", "pingpong-fresh"):
        if kind in measured:
            out[kind] = pingpong.fit_file({"results": measured[kind][0]})
    for kind, by in (("exchange", "pingpong"), ("exchange-fresh", "pingpong-fresh")):
        if kind not in measured:
            continue
        switch = out.get(by, {}).get("piecewise", {}).get("switch_bytes")
        results = measured[kind][0]
        try:
            out[kind] = pingpong.fit(results, pingpong.FIT_STATISTIC, switch=switch)
        except ValueError:          # the ping-pong's switch leaves too few of its sizes on a side
            out[kind] = pingpong.fit(results, pingpong.FIT_STATISTIC)
            out[kind].pop("piecewise", None)
    if "logp" in measured:
        results, n = measured["logp"]
        lg = logp_bench.fit(results, n, pingpong.FIT_STATISTIC)
        switch = out.get("pingpong", {}).get("piecewise", {}).get("switch_bytes")
        try:
            lg["O_s_per_byte"] = fit_copy_overhead([r["bytes"] for r in results], lg["o_s_by_size_s"],
                                                   lg["gap_fit_sizes"], math.inf if switch is None else switch)
        except ValueError:
            lg["O_s_per_byte"] = None
        out["logp"] = lg
    return out


def parameters_of(measured: dict, nprocs: int) -> dict:
    """Each model's parameters from the measured inputs (:func:`fits`, then
    :func:`network_parameters`)."""
    f = fits(measured)
    pp, ex = f.get("pingpong", {}), f.get("exchange", {})
    fp, fx = f.get("pingpong-fresh", {}), f.get("exchange-fresh", {})
    return network_parameters(pp.get("alpha_beta"), f.get("logp"), None, nprocs, segments=pp.get("piecewise"),
                              exchange=ex.get("alpha_beta"), exchange_segments=ex.get("piecewise"),
                              fresh=(fp.get("piecewise"), fx.get("piecewise")))


def network_parameters(alpha_beta: dict | None, loggp: dict | None, f: dict | None, nprocs: int, *,
                       segments: dict | None = None, exchange: dict | None = None,
                       exchange_segments: dict | None = None, fresh: tuple = (None, None)) -> dict:
    """Each model of :func:`calibrated`'s parameters (by the table's names, in its order) from
    the fits, as the table's entries declare (``Entry.calibrate``): the ping-pong fit
    ``alpha_beta`` (``alpha_s``, ``beta_s_per_byte``), the PRTT fit ``loggp`` (``L_s``,
    ``o_s_s``, ``o_r_s``, ``g_s``, ``G_s_per_byte``, ``O_s_per_byte``; g and G None when not
    identified: 0), the f(L) table ``f`` (None: f(L) = 1 for every L a schedule on ``nprocs``
    ranks can have), ``segments`` (the ping-pong's two-segment fit: ``switch_bytes``, ``below``
    and ``above`` as ``alpha_beta``), ``exchange`` (the exchange benchmark's fit, as
    ``alpha_beta``), ``exchange_segments`` (its two segments, used only if split at the
    ping-pong's switch) and ``fresh`` (the two segments of the ping-pong and of the exchange of
    fresh data, ``pingpong --fresh`` and ``exchange --fresh``, the exchange's used only if split at
    the fresh ping-pong's switch).  A fit that is None gives no model that reads it."""
    given = {"pingpong": alpha_beta, "pingpong segments": segments, "exchange": exchange, "logp": loggp,
             "f(L)": f}
    if segments is not None:
        given.update({"pingpong below": segments["below"], "pingpong above": segments["above"]})
    if exchange is not None and segments is not None and exchange_segments is not None \
            and float(exchange_segments["switch_bytes"]) == float(segments["switch_bytes"]):
        given.update({"exchange below": exchange_segments["below"], "exchange above": exchange_segments["above"]})
    fresh_pingpong, fresh_exchange = fresh
    if fresh_pingpong is not None:
        given.update({"fresh pingpong segments": fresh_pingpong, "fresh pingpong below": fresh_pingpong["below"],
                      "fresh pingpong above": fresh_pingpong["above"]})
        if fresh_exchange is not None \
                and float(fresh_exchange["switch_bytes"]) == float(fresh_pingpong["switch_bytes"]):
            given.update({"fresh exchange below": fresh_exchange["below"],
                          "fresh exchange above": fresh_exchange["above"]})
    given = {k: v for k, v in given.items() if v is not None}
    out = {}
    for name in calibrated():
        params = table.get(name).calibrate(given, nprocs)
        if params is not None:
            out[name] = params
    return out


def unphysical(models: dict) -> str | None:
    """Why fitted parameters of a plain model (:func:`plain`) cannot be a machine: a parameter
    outside the physical range its table entry declares (:func:`netmodels.models.fit.unphysical`:
    a time or a time per byte below 0, a latency or overhead of 0), or None."""
    for name in plain():
        checked = [p for p in table.get(name).parameters if p.physical]
        may_be_zero = tuple(p.name for p in checked if p.physical == ">= 0")
        given = {p.name: models[name][p.name] for p in checked if models.get(name, {}).get(p.name) is not None}
        why = fit_unphysical(f"the {name} fit", may_be_zero, **given) if given else None
        if why:
            return why
    return None


def keep_physical(models: dict) -> tuple[dict, list[str]]:
    """``(models, warnings)``: the models with an added term whose parameters the table's model
    refuses (a segment's β <= 0, a message of S bytes taking no time) left out, one line each
    saying why; the plain ones are :func:`unphysical`'s to refuse."""
    kept, dropped = {}, []
    plain_models, measured_models = plain(), calibrated()
    for name, params in models.items():
        if name not in plain_models and name in measured_models:
            try:
                table.get(name).build(**params)
            except (TypeError, ValueError) as exc:
                dropped.append(f"{name} left out: its fit is no machine ({exc}); the timings were probably "
                               "disturbed: measure again when the machine is quiet")
                continue
        kept[name] = params
    return kept, dropped


#: how noisy measurements were (the measurement core's rule, :func:`measure.reliability`)
reliability = sampling.reliability


def calibration_from(taken: dict, nprocs: int, given: Calibration | None = None, jig=None):
    """The calibration of what a run measured (no MPI): ``taken`` holds, by benchmark, the
    per-size summaries with their samples (``pingpong``, ``exchange``, ``pingpong-fresh``,
    ``exchange-fresh``, ``logp`` and ``software``, each optional: a round of
    ``measurement.calibration_round`` or several pooled; without both of fresh data their model
    is not calibrated);
    ``given`` supplies what was not measured; ``jig`` (the f(L) test jig's rows) gives NBL's f(L).
    ``(Calibration, None)``, or ``(None, why)`` if a fit of a plain model is unphysical (a model
    with an added term whose fit is unphysical is left out, the reason in
    ``reliability["left_out"]``)."""
    from dataclasses import replace

    from netmodels.models.nbl_fit import fit_f

    from .. import nbl_testjig, software_cost

    noisy, left_out = [], []
    cal = given
    if "pingpong" in taken:
        lp = taken["logp"]
        kinds = {k: taken[k] for k in ("pingpong", "exchange", "pingpong-fresh", "exchange-fresh") if k in taken}
        models = parameters_of({**{k: (v, None) for k, v in kinds.items()}, "logp": (lp, taken["logp_n"])}, nprocs)
        if jig:
            tab = nbl_testjig.table(jig, "min_s")
            fitted, _, _ = fit_f(tab["S"], {int(L): np.array(v) for L, v in tab["T_s"].items()})
            models["nbl"].update({f"f{L}": float(v) for L, v in fitted.items() if L > 1})
        why = unphysical(models)
        if why:
            return None, why
        models, left_out = keep_physical(models)
        noisy += [(r["ci_relative_halfwidth"] or 0.0, f"{what} {r['bytes']} B")
                  for k, what in (("pingpong", "ping-pong"), ("exchange", "exchange"),
                                  ("pingpong-fresh", "fresh ping-pong"), ("exchange-fresh", "fresh exchange"))
                  for r in kinds.get(k, [])]
        noisy += [(r[k]["ci_relative_halfwidth"] or 0.0, f"PRTT {k} {r['bytes']} B")
                  for r in lp for k in ("prtt_1_0", "prtt_n_0", "prtt_n_d")]

        def without_samples(v):
            if isinstance(v, dict):
                return {k: without_samples(x) for k, x in v.items() if k != "times_s"}
            return [without_samples(x) for x in v] if isinstance(v, list) else v
        cal = Calibration(models, source="measured", measured_from=(*kinds, "logp"),
                          measurements={**{k: without_samples(v) for k, v in kinds.items()},
                                        "logp": without_samples(lp), "logp_n": taken["logp_n"]})
    if "software" in taken:
        noisy.append(software_cost.worst_interval(taken["software"]))
        cal = replace(cal, software=software_cost.term(taken["software"]))
    rel = reliability(noisy) if noisy else cal.reliability
    if left_out:
        rel = {**(rel or {}), "left_out": left_out}
    return replace(cal, reliability=rel), None


#: largest relative change between two calibrations of one run (the first and the second half of
#: its rounds) that still counts as one machine (:func:`drift`); software times below FLOOR_S
#: count as FLOOR_S
STABLE_TOLERANCE = 0.25
FLOOR_S = 1e-6


def drift(before: Calibration, after: Calibration) -> dict:
    """How much the machine moved during a run: the relative differences of every parameter
    measured both times (each plain model's, and the software term's at every length), the
    largest with where it is; ``stable`` if it is within :data:`STABLE_TOLERANCE` (no MPI).  A
    parameter that may be 0 for "not identified" (its table entry's ``physical`` is ">= 0":
    LogGP's g, G, L) and is 0 in either calibration is not compared: not identified is no size
    of a change."""
    def rel(x, y, floor=0.0):
        low = max(min(abs(x), abs(y)), floor)
        return abs(x - y) / low if low > 0 else (0.0 if x == y else float("inf"))

    diffs = []
    if before.source == after.source == "measured":
        plain_models = plain()
        for m, params in before.models.items():      # the plain models' (a segment's intercept
            if m not in plain_models:                  # may be near 0, its switch jump a size)
                continue
            zero_ok = [p.name for p in table.get(m).parameters if p.physical == ">= 0"]
            diffs += [(rel(v, after.models[m][k]), f"{m} {k}") for k, v in params.items()
                      if k in after.models.get(m, {}) and not k.startswith("f")
                      and not (k in zero_ok and 0.0 in (v, after.models[m][k]))]
    b, a = before.software, after.software
    if b is not None and a is not None and b.knots == a.knots:
        diffs.append((rel(b.step, a.step, FLOOR_S), "software per step"))
        for part in ("door", "copy", "combine"):
            diffs += [(rel(x, y, FLOOR_S), f"software {part} at n = {n}")
                      for n, x, y in zip(b.knots, getattr(b, part), getattr(a, part))]
    worst, at = max(diffs, key=lambda d: d[0], default=(0.0, None))     # the first of equals
    return {"largest": worst, "at": at, "stable": bool(worst <= STABLE_TOLERANCE)}

