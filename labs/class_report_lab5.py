"""The class report's page of lab 5: each machine's median relative error per model over
the rows of its ``predict.json``, with and without the software term.
"""

from __future__ import annotations

import html

import numpy as np

from class_report_views import (Unusable, need, pyplot, Figure, to_svg, style, plain_log, literal, jitter,
                                 counted, class_median, fmt, Column, LabView, value, MEDIAN_COLOR)


def _plain_models() -> tuple:
    """The models lab 5 asks about: ``predict``'s plain ones, in the table's order (a file's other
    models are drawn after them)."""
    from mpi_exercises.bench.predict import PLAIN

    return PLAIN


MODELS5 = _plain_models()


def model_label(name: str) -> str:
    """A model's label in the table of models, or its name from the file as written."""
    from netmodels.models import table

    return table.MODELS[name].label if name in table.MODELS else literal(name)


def lab5_extract(files: dict) -> tuple[dict, list[str]]:
    from mpi_exercises.bench import predict

    data = files["predict.json"]
    rows = need(data, "rows")
    try:
        summary = predict.summarize_errors(rows)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise Unusable(f"malformed rows: {exc!r}") from None
    if not summary:
        raise Unusable("no prediction in its rows")
    values, caveats = {"rows": len(rows)}, []
    stored = data.get("summary") if isinstance(data.get("summary"), dict) else {}
    differs = []
    for model, parts in summary.items():
        for part in ("with_software", "network_only"):
            e = parts[part]
            values[f"{model}:{part}"] = e["median_abs"]
            values[f"{model}:{part}:ci"] = tuple(e["median_abs_ci"])
            try:
                if not np.isclose(stored[model][part]["median_abs"], e["median_abs"], rtol=1e-9, atol=1e-12):
                    differs.append(model)
            except (KeyError, TypeError):
                differs.append(model)
    if differs:
        caveats.append("the file's summary does not match its rows (" + ", ".join(sorted(set(differs)))
                       + "): recomputed from the rows")
    values["best"] = min(summary, key=lambda m: summary[m]["with_software"]["median_abs"])
    values["best_network"] = min(summary, key=lambda m: summary[m]["network_only"]["median_abs"])
    if data.get("stable") is False:
        caveats.append("the machine moved during the run (calibrations before and after differ)")
    return values, caveats


def lab5_figures(machines) -> list[Figure]:
    plt = pyplot()
    have = [m for m in machines if any(f"{k}:with_software" in m.values for k in MODELS5)]
    if not have:
        return []
    models = [k for k in MODELS5 if any(f"{k}:with_software" in m.values for m in have)]
    models += sorted({key.split(":")[0] for m in have for key in m.values if key.endswith(":with_software")}
                     - set(models))
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 4.2), sharey=True)
    titles = {}
    off = jitter(len(have), seed=5, width=0.18)
    for ax, part, label in ((axes[0], "with_software", "with the software term"),
                            (axes[1], "network_only", "network alone")):
        for dx, m in zip(off, have):
            st = style(m)
            xs = [i + dx for i, k in enumerate(models) if f"{k}:{part}" in m.values]
            ys = [100 * m.values[f"{k}:{part}"] for k in models if f"{k}:{part}" in m.values]
            ax.plot(xs, ys, "-", color=st.color, lw=1.4 if m.reference else 0.5,
                    alpha=1.0 if m.reference else 0.35, zorder=st.zorder)
            gid = f"{m.gid}-{part}"
            ax.plot(xs, ys, st.marker, color=st.color, mfc=st.face, ms=6 if m.reference else 4,
                    zorder=st.zorder + 1, gid=gid)
            titles[gid] = m.tooltip + "; median |error| " + ", ".join(
                f"{k} {100 * m.values[f'{k}:{part}']:.0f} %" for k in models if f"{k}:{part}" in m.values)
        for i, k in enumerate(models):
            med = class_median(have, lambda m, key=f"{k}:{part}": m.values.get(key))
            if np.isfinite(med):
                ax.plot([i - 0.32, i + 0.32], [100 * med] * 2, color=MEDIAN_COLOR, lw=2, zorder=8)
        ax.set(xticks=range(len(models)), xlim=(-0.5, len(models) - 0.5), yscale="log",
               title=f"Median |error| per machine, {label}")
        ax.set_xticks(range(len(models)), [model_label(k) for k in models])
        plain_log(ax, "y", " %")
    axes[0].set_ylabel("median |predicted − measured| / measured")
    fig.tight_layout()
    return [Figure(to_svg(fig, f"{machines[0].lab}-errors", titles),
                   "Each machine's median relative error per model over every row of its "
                   "<code>predict.json</code> (allreduce and barriers; <code>mpi_exercises.bench.predict."
                   "summarize_errors</code> on the file's rows), with the software term of the executor (left) "
                   "and without it (right). A line joins one machine's models; violet bars are the class "
                   "medians (machines not oversubscribed), black the reference machine, orange hollow the "
                   "oversubscribed runs, whose errors judge the scheduler, not the models. In the table, the "
                   "model columns are these medians (with the software term, then the network alone).")]


def lab5_summary(machines) -> list[str]:
    students = [m for m in machines if not m.reference and "best" in m.values]
    if not students:
        return []
    out = []
    clean = [m for m in students if counted(m)]
    if clean:
        out.append("Class median of the machines' median |error| with the software term: " + ", ".join(
            f"{k} {100 * class_median(clean, lambda m, key=f'{k}:with_software': m.values.get(key)):.0f} %"
            for k in MODELS5 if any(f"{k}:with_software" in m.values for m in clean)) + f" ({len(clean)} machines).")
    best = {}
    for m in clean:
        best[m.values["best"]] = best.get(m.values["best"], 0) + 1
    if best:
        out.append("Best model (with the software term): " + ", ".join(
            f"{html.escape(str(k))} on {n}" for k, n in sorted(best.items(), key=lambda x: -x[1]))
            + f" of {len(clean)} machines.")
    return out


def _err(key):
    return lambda m: fmt(m.values.get(key), 100, 3) + " %" if m.values.get(key) is not None else ""


VIEW = LabView(
    name="lab5", title="Lab 5: predicted against measured collectives", main="predict.json",
    reads=("predict.json",), extract=lab5_extract, figures=lab5_figures, summary=lab5_summary,
    about=("Each student's prediction report (<code>predict --calibration pingpong.json logp.json</code> on "
           "as many ranks as cores): every allreduce and barrier measured and predicted by α-β, NBL and LogGP "
           "from the student's own lab 1 and lab 3 files."),
    notes={"pingpong.json": "checked only: <code>predict.json</code> holds the models fitted to it",
           "logp.json": "checked only: <code>predict.json</code> holds the models fitted to it"},
    columns=[
        *[Column(f"{k}_median_abs_error", value(f"{k}:with_software"), model_label(k), _err(f"{k}:with_software"))
          for k in MODELS5],
        *[Column(f"{k}_median_abs_error_network_only", value(f"{k}:network_only"), f"{model_label(k)}, network",
                 _err(f"{k}:network_only")) for k in MODELS5],
        Column("best_model", value("best"), "best model", lambda m: m.values.get("best", "")),
        Column("rows", value("rows")),
    ])
