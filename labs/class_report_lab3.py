"""The class report's page of lab 3: each machine's LogGP (Netgauge's equations on the
minima of ``logp.json``) and the rankings of its barriers, measured and predicted.
"""

from __future__ import annotations

import html

import numpy as np

from class_report_views import (US, Unusable, need, pyplot, Figure, to_svg, style, literal, jitter, counted,
                                 class_median, fmt, count_grid, Column, LabView, value, REFERENCE_COLOR,
                                 MEDIAN_COLOR)


def _loggp_parameters() -> tuple:
    """(key in the fit, name, unit shown, seconds per unit shown) of LogGP's parameters, as the
    table of models declares them."""
    from netmodels.models import table

    shown = {"s": ("µs", US), "s/B": ("ns/B", 1e-9)}
    return tuple((p.fitted, p.name, *shown[p.unit]) for p in table.get("loggp").parameters)


PARAMS3 = _loggp_parameters()


def lab3_extract(files: dict) -> tuple[dict, list[str]]:
    values, caveats = {}, []
    fit = None
    if "logp.json" in files:
        from netmodels.models import logp_family as logp

        data = files["logp.json"]
        try:
            fit = logp.fit_results(need(data, "results"), int(need(data, "parameters", "n")), "min_s")
        except (KeyError, TypeError, ValueError) as exc:
            raise Unusable(f"logp.json: cannot fit LogGP to its minima: {exc!r}") from None
        values.update(L_s=fit.L, L_unconstrained_s=fit.L_unconstrained, L_identified=fit.L_identified,
                      o_s_s=fit.o_s, o_r_s=fit.o_r, g_s=fit.g, G_s_per_byte=fit.G, g_identified=fit.g_identified)
    if "barriers.json" in files:
        data = files["barriers.json"]
        P = need(data, "environment", "ranks")
        try:
            measured = {str(r["algorithm"]): float(r["min_s"]) for r in need(data, "results")}
            options = {str(r["algorithm"]): dict(r.get("options") or {}) for r in data["results"]}
        except (KeyError, TypeError, ValueError) as exc:
            raise Unusable(f"barriers.json: malformed results: {exc!r}") from None
        if not measured:
            raise Unusable("barriers.json: no barrier measured")
        values.update(barrier_ranks=P, ranking_measured=sorted(measured, key=measured.get),
                      barrier_s={a: measured[a] for a in measured})
        if fit is not None:
            from netmodels.algorithms import registry
            from netmodels.simulate import simulate

            model = fit.model(P)
            predicted = {}
            for a in measured:
                if a == "mpi":
                    continue
                try:
                    predicted[a] = simulate(registry.build(f"barrier.{a}", P, **options[a]), model).time
                except (KeyError, ValueError, TypeError):
                    caveats.append(f"no schedule for the barrier {a!r}: not predicted")
            values.update(ranking_predicted=sorted(predicted, key=predicted.get), predicted_s=predicted)
    return values, caveats


def lab3_figures(machines) -> list[Figure]:
    from netmodels.models.machines import KIT_VM_LOGGP

    plt = pyplot()
    out = []
    withfit = [m for m in machines if "o_s_s" in m.values]
    if withfit:
        fig, axes = plt.subplots(1, len(PARAMS3), figsize=(10.5, 3.4))
        titles = {}
        x = jitter(len(withfit), seed=3)
        kit = {"L_s": KIT_VM_LOGGP.L, "o_s_s": KIT_VM_LOGGP.o_s, "o_r_s": KIT_VM_LOGGP.o_r,
               "g_s": KIT_VM_LOGGP.g, "G_s_per_byte": KIT_VM_LOGGP.G}
        for ax, (key, label, unit, scale) in zip(axes, PARAMS3):
            missing = 0
            for xx, m in zip(x, withfit):
                v = m.values.get(key)
                if v is None or not np.isfinite(v):
                    missing += 1
                    continue
                st = style(m)
                unidentified = (key == "L_s" and not m.values["L_identified"])
                gid = f"{m.gid}-{key}"
                ax.plot([xx], [v / scale], st.marker, color=st.color, ms=6 if m.reference else 5,
                        mfc="white" if unidentified and not m.oversubscribed else st.face,
                        zorder=st.zorder, gid=gid)
                titles[gid] = f"{m.tooltip}; {label} = {v / scale:.4g} {unit}"
            med = class_median(withfit, lambda m, k=key: m.values.get(k))
            if np.isfinite(med):
                ax.plot([-0.4, 0.4], [med / scale] * 2, color=MEDIAN_COLOR, lw=1.5)
            ax.plot([0.55], [kit[key] / scale], "s", color="#6b7280", ms=5)
            ax.set(xlim=(-0.6, 0.8), xticks=[], title=f"{label} ({unit})")
            ax.set_ylim(bottom=0)
            if all(not (m.values.get(key) or 0) > 0 for m in withfit) and not kit[key] > 0:
                ax.set_ylim(-0.05, 1)
                ax.text(0.5, 0.5, "0 on every machine:\nnot identified", transform=ax.transAxes,
                        ha="center", va="center", fontsize=7, color="#6b7280")
            if missing:
                ax.set_xlabel(f"{missing} not identified", fontsize=7)
        fig.tight_layout()
        out.append(Figure(to_svg(fig, f"{machines[0].lab}-logp", titles),
                          "LogGP per machine, fitted as the lab fits it (Netgauge's equations on the minima of "
                          "<code>logp.json</code>, <code>netmodels.models.logp_fit.fit_results</code>): points are "
                          "machines (spread sideways only to be told apart; hollow: L not identified and "
                          "clipped at 0, or oversubscribed in orange), the violet bar the class median, the grey "
                          "square the book's kit machine (<code>KIT_VM_LOGGP</code>). g and G are missing where "
                          "every gap measured an overhead."))
    ranked = [m for m in machines if m.values.get("ranking_measured")]
    if ranked:
        out.append(_ranking_figure(plt, machines[0].lab, ranked))
    return out


def _ranking_figure(plt, lab, ranked) -> Figure:
    from netmodels.models.machines import HOEFLER2005_BARRIER_TIMES

    algos = sorted({a for m in ranked for a in m.values["ranking_measured"]})
    kinds = [("ranking_measured", "measured")]
    if any(m.values.get("ranking_predicted") for m in ranked):
        kinds.append(("ranking_predicted", "predicted by each machine's LogGP"))
    fig, axes = plt.subplots(1, len(kinds), figsize=(5.4 * len(kinds), 0.32 * len(algos) + 1.3), squeeze=False)
    students = [m for m in ranked if not m.reference]
    for ax, (key, label) in zip(axes[0], kinds):
        names = [a for a in algos if any(a in (m.values.get(key) or []) for m in ranked)]
        count = np.zeros((len(names), len(names)), dtype=int)
        for m in students:
            order = [a for a in (m.values.get(key) or []) if a in names]
            for pos, a in enumerate(order):
                count[names.index(a), pos] += 1
        mean_pos = [(count[i] * np.arange(len(names))).sum() / max(count[i].sum(), 1) for i in range(len(names))]
        order = np.argsort(mean_pos, kind="stable")
        names = [names[i] for i in order]
        count = count[order]
        count_grid(ax, count, 7)
        ref = next((m for m in ranked if m.reference), None)
        if ref is not None:
            order_ref = [a for a in (ref.values.get(key) or []) if a in names]
            for pos, a in enumerate(order_ref):
                ax.add_patch(plt.Rectangle((pos - 0.5, names.index(a) - 0.5), 1, 1, fill=False,
                                           edgecolor=REFERENCE_COLOR, lw=1.2))
        ax.set_yticks(range(len(names)), [literal(a) for a in names], fontsize=8)
        ax.set_xticks(range(len(names)), [str(k + 1) for k in range(len(names))], fontsize=8)
        ax.set(xlabel="place (1 = fastest)", title=label)
        for side in ("top", "right", "left", "bottom"):
            ax.spines[side].set_visible(False)
    fig.tight_layout()
    slides = " &lt; ".join(sorted(HOEFLER2005_BARRIER_TIMES, key=lambda a: HOEFLER2005_BARRIER_TIMES[a][256]))
    return Figure(to_svg(fig, f"{lab}-ranking", {}),
                  "How many machines put each barrier algorithm in each place, by their minimum time in "
                  "<code>barriers.json</code> and, right, by the simulation of its schedule on the machine's "
                  "own LogGP (<code>netmodels.simulate.simulate</code>, as the lab predicts it); black frames: "
                  "the reference machine. Machines ran different rank counts (see the table). The slides' "
                  f"ranking on 256 nodes (Höfler &amp; Rehm 2005): {slides}.")


def lab3_summary(machines) -> list[str]:
    out = []
    students = [m for m in machines if not m.reference]
    fits = [m for m in students if "o_s_s" in m.values and counted(m)]
    if fits:
        parts = [f"{label} = {fmt(class_median(fits, lambda m, k=key: m.values.get(k)), 1 / scale)} {unit}"
                 for key, label, unit, scale in PARAMS3]
        out.append(f"Class medians over {len(fits)} machines not oversubscribed: " + ", ".join(parts) + ".")
        lost = sum(1 for m in fits if not m.values["L_identified"])
        if lost:
            out.append(f"L is not identified on {lost} of {len(fits)} machines (their overheads measured alone "
                       "exceed half a round trip).")
    ranked = [m for m in students if m.values.get("ranking_measured")]
    if ranked:
        first = {}
        for m in ranked:
            first[m.values["ranking_measured"][0]] = first.get(m.values["ranking_measured"][0], 0) + 1
        out.append("Fastest barrier measured: " + ", ".join(f"{html.escape(str(a))} on {k}" for a, k in
                                                             sorted(first.items(), key=lambda x: -x[1]))
                   + f" of {len(ranked)} machines.")
        agree = [m for m in ranked if m.values.get("ranking_predicted")]
        if agree:
            same = sum(1 for m in agree if m.values["ranking_predicted"][0] == next(
                a for a in m.values["ranking_measured"] if a != "mpi"))
            out.append(f"On {same} of {len(agree)} machines the LogGP model predicts the fastest of the "
                       "kit's algorithms.")
    return out


def _param3(key, scale):
    """A LogGP parameter for the table: "not identified" where the fit could not separate it."""
    def page(m):
        if key == "L_s" and m.values.get("L_identified") is False:
            return "0 (n.i.)"
        if key in ("g_s", "G_s_per_byte") and m.values.get("g_identified") is False:
            return "n.i."
        return fmt(m.values.get(key), 1 / scale, 3)
    return page


def _ranking(key):
    return lambda m: " < ".join(m.values.get(key) or [])


def _fastest(key):
    return lambda m: (m.values.get(key) or [""])[0]


VIEW = LabView(
    name="lab3", title="Lab 3: LogP parameters and barriers", main="logp.json",
    reads=("logp.json", "barriers.json"), extract=lab3_extract, figures=lab3_figures, summary=lab3_summary,
    about=("Each student's parametrised round trips (<code>logp</code>, 2 ranks), fitted as the lab fits "
           "them (Netgauge's equations on the minima), and the barrier benchmark "
           "(<code>barrier-bench</code> on as many ranks as cores), ranked by minimum time. In the table, "
           "n.i. is a parameter the fit could not identify: L when the overheads measured alone exceed half "
           "a round trip (L is then clipped at 0), g and G when every gap measured an overhead."),
    columns=[
        *[Column(key, value(key), f"{label} ({unit})", _param3(key, scale)) for key, label, unit, scale in PARAMS3],
        Column("L_unconstrained_s", value("L_unconstrained_s")),
        Column("L_identified", value("L_identified")),
        Column("g_identified", value("g_identified")),
        Column("barrier_ranks", value("barrier_ranks")),
        Column("fastest_measured", _fastest("ranking_measured"), "fastest barrier", _fastest("ranking_measured")),
        Column("fastest_predicted", _fastest("ranking_predicted"), "fastest predicted", _fastest("ranking_predicted")),
        Column("ranking_measured", _ranking("ranking_measured")),
        Column("ranking_predicted", _ranking("ranking_predicted")),
    ])
