"""predict's report in words (no MPI): the rows with their parts, the errors per model,
collective and size class, the best model, each model's worst row, the calibration's noise
and drift, each in lines of text."""

from __future__ import annotations

from ..coherence import APART_ABOVE
from .calibration import STABLE_TOLERANCE
from .comparison import SIZE_CLASSES, TOLERANCE, best_models


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



def explain(row: dict, model: str) -> str:
    """A row under ``model`` in one line: the sign and size of the error, the prediction and its
    parts in µs (network and software walked together, so the prediction is at most their sum)."""
    err = row["relative_error"][model]
    net, sw = row["network_s"][model], row["software_s"]
    side = "too slow" if err > 0 else "too fast"
    return (f"{model} predicts {side} by {abs(err):.0%}: {row['predicted_s'][model] * 1e6:.2f} µs (network "
            f"{net * 1e6:.2f} µs, software {sw * 1e6:.2f} µs), measured {row['measured_s'] * 1e6:.2f} µs")



def drift_line(d: dict) -> str:
    """:func:`drift` in one line: between the calibration's halves (``compared`` names them), or,
    in a report written before calibration and collectives alternated, before and after the
    measurement."""
    what = f"calibration, {d['compared']}" if "compared" in d else "calibration before and after the measurement"
    if d["at"] is None:
        return f"{what}: nothing measured twice"
    if d["largest"] is None:
        return f"{what}: {d['at']}; the machine changed during the run, the errors above are not the models'"
    verdict = ("the machine held still" if d["stable"] else
               f"MORE than {STABLE_TOLERANCE:.0%}: the machine changed during the run, the errors above "
               "are not the models'")
    return f"{what}: the largest change is {d['largest']:.0%} ({d['at']}); {verdict}"


def last_line(P: int, oversubscribed: bool, load: float | None, summary: dict, cal, mode: dict,
              drift: dict | None = None) -> str:
    """predict's last line: ranks, load, the best model, whether the calibration is reliable (its
    noise) and whether the machine held still while it ran (``drift``, :func:`drift`: its halves
    compared; a calibration can be precise and yet change between its halves), and the launch's
    mode (:func:`mpi_exercises.bench.launch_mode.combined`)."""
    best = best_models(summary).get("(all)")
    still = ""
    if drift is not None and drift.get("stable") is not None:
        how = (f"{drift['largest']:.0%} between the calibration's halves" if drift.get("largest") is not None
               else "a half of the calibration could not be fitted")
        still = "; the machine held still" if drift["stable"] else f"; the machine CHANGED during the run ({how}): measure again"
    readings = (f"; {mode['slow_readings']} of {len(mode['readings'])} readings slow"
                if "readings" in mode else "")
    return (f"predict: {P} ranks{' OVERSUBSCRIBED (not valid)' if oversubscribed else ''}, 1-minute load "
            f"{'unknown' if load is None else format(load, '.1f')}; best model "
            + (f"{best} (median |error| {summary[best]['with_software']['median_abs']:.0%})" if best else "none")
            + f"; calibration {'reliable' if (cal.reliability or {}).get('reliable') else 'NOT reliable or not known'}"
            + still
            + f"; launch mode {mode['mode']} (MPI Allreduce / exchange at {mode['bytes'] // 1024} KiB "
              f"{mode['ratio']:.1f}, slow above {mode['threshold']:g}{readings}"
            + (f"; a write after the other core read costs x{mode['coherence_write_ratio']:.1f} the write of "
               f"own lines, caches apart above {APART_ABOVE:g}" if "coherence_write_ratio" in mode else "") + ")")


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


