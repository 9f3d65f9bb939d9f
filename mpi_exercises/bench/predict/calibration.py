"""predict's calibration, apart from what is predicted (no MPI): the parameters of each network
model of :data:`MODELS` (names from :mod:`netmodels.models.table`) fitted on its own
microbenchmarks' measured files, a student's ``--calibration`` files read and checked, and how
much the machine moved between two calibrations of one run (:func:`drift`)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from netmodels.models import table
from netmodels.models.fit import unphysical as fit_unphysical
from netmodels.outputs import Refused, read_input

from ...software import SoftwareCost
from .. import measure as sampling

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
    size (:func:`netmodels.models.logp_fit.fit_copy_overhead`)."""
    from netmodels.models.logp_fit import fit_copy_overhead

    from .. import logp_bench, pingpong

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


def calibration_from(taken: dict, nprocs: int, given: Calibration | None = None, jig=None):
    """The calibration of what a run measured (no MPI): ``taken`` holds, by benchmark, the
    per-size summaries with their samples (``pingpong``, ``exchange``, ``logp`` and
    ``software``, each optional: a round of ``measurement.calibration_round`` or several pooled);
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
        pp, ex, lp = taken["pingpong"], taken["exchange"], taken["logp"]
        models = parameters_of({"pingpong": (pp, None), "exchange": (ex, None), "logp": (lp, taken["logp_n"])},
                               nprocs)
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

        def without_samples(v):
            if isinstance(v, dict):
                return {k: without_samples(x) for k, x in v.items() if k != "times_s"}
            return [without_samples(x) for x in v] if isinstance(v, list) else v
        cal = Calibration(models, source="measured", measured_from=("pingpong", "exchange", "logp"),
                          measurements={"pingpong": without_samples(pp), "exchange": without_samples(ex),
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
    parameter that may be 0 for "not identified" (:data:`UNPHYSICAL_CHECKS`: LogGP's g, G, L)
    and is 0 in either calibration is not compared: not identified is no size of a change."""
    def rel(x, y, floor=0.0):
        low = max(min(abs(x), abs(y)), floor)
        return abs(x - y) / low if low > 0 else (0.0 if x == y else float("inf"))

    diffs = []
    if before.source == after.source == "measured":
        for m, params in before.models.items():      # the plain models' (a segment's intercept
            if m not in PLAIN:                         # may be near 0, its switch jump a size)
                continue
            zero_ok = UNPHYSICAL_CHECKS.get(m, ((), ()))[1]
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

