"""The class report's page of lab 1: each machine's α and β (the kit's one fit of a
``pingpong.json``), their 95 % intervals, n½, among the LS-DYNA paper's networks.
"""

from __future__ import annotations

import numpy as np

from class_report_views import (US, Unusable, need, pyplot, Figure, to_svg, style, plain_log, literal,
                                 jitter, counted, class_median, fmt, Column, LabView, value, with_interval,
                                 CLASS_COLOR, REFERENCE_COLOR, CAVEAT_COLOR, MEDIAN_COLOR)


def lab1_extract(files: dict) -> tuple[dict, list[str]]:
    """α and β of a ``pingpong.json``: the kit's one fit of a measured file, the lab's
    (:func:`mpi_exercises.bench.pingpong.fit_file`, relative least squares on the per-size minima),
    with its 95 % intervals (:func:`~mpi_exercises.bench.pingpong.file_fit`: the file's own if it
    records them by today's method, else recomputed; ``interval`` says which)."""
    from mpi_exercises.bench import pingpong
    from netmodels.models.fit import unphysical

    data = files["pingpong.json"]
    need(data, "results")
    try:
        n, _ = pingpong.points(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise Unusable(f"malformed results: {exc!r}") from None
    try:
        f, how = pingpong.file_fit(data)     # its intervals: the file's own only if they are today's
    except (KeyError, TypeError, ValueError) as exc:
        raise Unusable(f"cannot fit α and β: {exc}") from None
    caveats = []
    values = {"alpha_s": f["alpha_s"], "beta_s_per_byte": f["beta_s_per_byte"], "sizes": int(n.size),
              "largest_bytes": float(n.max()), "max_relative_residual": f["max_relative_residual"]}
    if "alpha_ci_s" in f:
        values.update(alpha_ci_low_s=f["alpha_ci_s"][0], alpha_ci_high_s=f["alpha_ci_s"][1],
                      beta_ci_low_s_per_byte=f["beta_ci_s_per_byte"][0],
                      beta_ci_high_s_per_byte=f["beta_ci_s_per_byte"][1])
    values["interval"] = how
    why = unphysical("the α-β fit", alpha=f["alpha_s"], beta=f["beta_s_per_byte"])   # the lab refuses it too
    if why:
        caveats.append(why + "; not drawn")
    else:
        values["n_half_bytes"] = f["alpha_s"] / f["beta_s_per_byte"]
        values["bandwidth_Bps"] = 1 / f["beta_s_per_byte"]
    return values, caveats


def _drawable1(m):
    return m.values.get("alpha_s", 0) > 0 and m.values.get("beta_s_per_byte", 0) > 0


def _nhalf_lines(ax) -> None:
    """Lines of constant n½ = α/β (diagonals of the log-log α-β plane, β in ns/B against α in
    µs: β = 1000 α / n½), labelled where they leave the axes; every other decade on a wide plane."""
    (x_lo, x_hi), (y_lo, y_hi) = ax.get_xlim(), ax.get_ylim()
    step = 2 if (x_hi / x_lo) * (y_hi / y_lo) > 1e6 else 1
    for nh in (10.0 ** k for k in range(0, 10, step)):
        if x_hi * 1e3 / nh < y_lo or x_lo * 1e3 / nh > y_hi:
            continue
        ax.plot([x_lo, x_hi], [x_lo * 1e3 / nh, x_hi * 1e3 / nh], color="#c8c8c8", lw=0.6, zorder=0)
        x_top = y_hi * nh / 1e3
        if x_top < x_hi:        # leaves through the top
            ax.text(x_top, y_hi, f" n½ = {_bytes(nh)}", fontsize=7, color="#8a8a8a", ha="left", va="top")
        else:                   # through the right side
            ax.text(x_hi, x_hi * 1e3 / nh, f"n½ = {_bytes(nh)} ", fontsize=7, color="#8a8a8a", ha="right",
                    va="bottom")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)


def _bytes(n: float) -> str:
    for unit, size in (("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n:g} B"


def lab1_figures(machines) -> list[Figure]:
    from netmodels.models import machines as paper

    plt = pyplot()
    drawn = [m for m in machines if _drawable1(m)]
    if not drawn:
        return []
    titles = {}
    fig, (ax, wide) = plt.subplots(1, 2, figsize=(10.5, 4.4), gridspec_kw={"width_ratios": [1.15, 1]})
    for i, m in enumerate(drawn):
        v, st = m.values, style(m)
        a, b = v["alpha_s"] / US, v["beta_s_per_byte"] * 1e9
        if "alpha_ci_low_s" in v:
            xerr = [[a - v["alpha_ci_low_s"] / US], [v["alpha_ci_high_s"] / US - a]]
            yerr = [[b - v["beta_ci_low_s_per_byte"] * 1e9], [v["beta_ci_high_s_per_byte"] * 1e9 - b]]
            ax.errorbar([a], [b], xerr=np.abs(xerr), yerr=np.abs(yerr), fmt="none", ecolor=st.color,
                        elinewidth=0.8, alpha=0.6, zorder=st.zorder)
        gid = f"{m.gid}-a"
        ax.plot([a], [b], st.marker, color=st.color, mfc=st.face, ms=6 if m.reference else 5,
                zorder=st.zorder + 1, gid=gid)
        titles[gid] = m.tooltip
        gid = f"{m.gid}-w"
        wide.plot([a], [b], st.marker, color=st.color, mfc=st.face, ms=5 if m.reference else 3.5,
                  zorder=st.zorder + 1, gid=gid)
        titles[gid] = m.tooltip
        if m.reference or m.oversubscribed:
            ax.annotate(literal(m.name), (a, b), xytext=(5, 4), textcoords="offset points", fontsize=7,
                        color=st.color)
    med_a = class_median(drawn, lambda m: m.values["alpha_s"] / US)
    med_b = class_median(drawn, lambda m: m.values["beta_s_per_byte"] * 1e9)
    if np.isfinite(med_a):
        for axis in (ax, wide):
            axis.plot([med_a], [med_b], "P", color=MEDIAN_COLOR, ms=9, mec="white", zorder=9,
                      label="class median")
    ax.set(xscale="log", yscale="log", xlabel="α (µs)", ylabel="β (ns per byte)",
           title="The class: α and β with their 95 % intervals")
    ax.margins(0.15)
    _nhalf_lines(ax)
    plain_log(ax)
    ax.plot([], [], "o", color=CLASS_COLOR, ms=5, label="a student's machine")
    ax.plot([], [], "o", color=CAVEAT_COLOR, mfc="none", ms=5, label="oversubscribed")
    ax.plot([], [], "D", color=REFERENCE_COLOR, ms=5, label="reference (the lab's data)")
    ax.legend(loc="upper left", fontsize=7)
    refs = [(paper.LSDYNA_10MBIT, (-6, 4), "right"), (paper.LSDYNA_100MBIT, (-6, 4), "right"),
            (paper.ORIGIN2000_INTRA, (6, -3), "left"), (paper.ORIGIN2000_INTER, (5, 3), "left")]
    for k, (mach, offset, ha) in enumerate(refs):
        a, b = mach.alpha / US, mach.beta * 1e9
        gid = f"paper-{k}"
        wide.plot([a], [b], "s", color="#6b7280", ms=5, zorder=4, gid=gid)
        titles[gid] = f"{mach.name}: α = {a:g} µs, β = {b:.4g} ns/B ({mach.source})"
        wide.annotate(mach.name.replace(" (LS-DYNA)", "").replace(" (LAM/MPI)", ""), (a, b),
                      xytext=offset, textcoords="offset points", fontsize=7, color="#4b5563", ha=ha)
    wide.set(xscale="log", yscale="log", xlabel="α (µs)", ylabel="β (ns per byte)",
             title="Beside the LS-DYNA paper's machines")
    wide.margins(0.25)
    _nhalf_lines(wide)
    plain_log(wide)
    fig.tight_layout()
    widths = [(m.values["alpha_ci_high_s"] - m.values["alpha_ci_low_s"]) / 2 / m.values["alpha_s"]
              for m in drawn if "alpha_ci_low_s" in m.values]
    width = f", ±{100 * float(np.median(widths)):.2g} % of α in the median" if widths else ""
    caption = (f"Left: each machine's α and β (relative least squares on the per-size minimum one-way times of "
               f"its <code>pingpong.json</code>, <code>pingpong.fit_file</code>: the kit's one fit, the lab's) "
               f"with their 95 % intervals ({len(widths)} of {len(drawn)} machines have one: the least-squares "
               f"interval, estimate ± t(0.975, sizes − 2) standard errors{width}: an interval says how closely "
               "one run's minima pin its line down, not how far another launch may land); the cross is the "
               "class median (machines not "
               "oversubscribed); grey diagonals are lines of equal n½ = α/β. "
               "Right: the same points among the LS-DYNA paper's networks (Table 1 and its Origin 2000, "
               "<code>netmodels/models/machines.py</code>). Hover over a point for the machine's label.")
    out = [Figure(to_svg(fig, f"{machines[0].lab}-ab", titles), caption)]

    fig, ax = plt.subplots(figsize=(10.5, 1.9))
    titles = {}
    y = jitter(len(drawn), seed=1, width=0.3)
    for yy, m in zip(y, drawn):
        st = style(m)
        gid = f"{m.gid}-n"
        ax.plot([m.values["n_half_bytes"]], [yy], st.marker, color=st.color, mfc=st.face,
                ms=6 if m.reference else 5, zorder=st.zorder, gid=gid)
        titles[gid] = m.tooltip
    med = class_median(drawn, lambda m: m.values["n_half_bytes"])
    if np.isfinite(med):
        ax.axvline(med, color=MEDIAN_COLOR, lw=1.2)
        ax.text(med, 0.42, f" class median {_bytes(float(f'{med:.3g}'))}", color=MEDIAN_COLOR, fontsize=7,
                va="bottom")
    ax.set(xscale="log", xlabel="n½ = α/β (bytes): messages shorter than this cost mostly latency",
           ylim=(-0.5, 0.6), yticks=[])
    lo, hi = ax.get_xlim()
    if hi / lo < 4:
        mid = np.sqrt(lo * hi)
        ax.set_xlim(mid / 2, mid * 2)
    plain_log(ax, "x")
    ax.spines["left"].set_visible(False)
    out.append(Figure(to_svg(fig, f"{machines[0].lab}-nhalf", titles),
                      "n½ per machine (points spread vertically only to be told apart)."))
    return out


def lab1_summary(machines) -> list[str]:
    drawn = [m for m in machines if _drawable1(m) and not m.reference]
    if not drawn:
        return ["No machine of the class could be drawn."]
    a = class_median(drawn, lambda m: m.values["alpha_s"])
    b = class_median(drawn, lambda m: m.values["beta_s_per_byte"])
    if not np.isfinite(a):
        return ["Every drawn machine is oversubscribed: no class median."]
    alphas = [m.values["alpha_s"] for m in drawn if counted(m)]
    return [f"Class median α = {fmt(a, 1 / US)} µs (from {fmt(min(alphas), 1 / US)} to {fmt(max(alphas), 1 / US)} "
            f"µs), β = {fmt(b, 1e9)} ns/B (1/β = {1e-6 / b:,.0f} MB/s), n½ = "
            f"{class_median(drawn, lambda m: m.values['n_half_bytes']):,.0f} B, over {len(alphas)} machines "
            "that were not oversubscribed" + (" (a file handed in twice counted once)." if any(
                getattr(m, "repeat", False) for m in drawn) else ".")]


VIEW = LabView(
    name="lab1", title="Lab 1: α and β", main="pingpong.json", reads=("pingpong.json",),
    extract=lab1_extract, figures=lab1_figures, summary=lab1_summary,
    about=("Each student's ping-pong (<code>mpiexec -n 2 python -m mpi_exercises pingpong</code>), fitted "
           "as the lab fits it: α + βn by relative least squares on the minimum one-way times of each size "
           "(<code>min_s</code>; noise only adds time, so the minimum moves least with the machine's load), "
           "the kit's one fit of a measured file (<code>mpi_exercises.bench.pingpong.fit_file</code>), "
           "which lab 5 and <code>predict</code> use too."),
    columns=[
        Column("alpha_s", value("alpha_s"), "α (µs) [95 %]",
               with_interval("alpha_s", "alpha_ci_low_s", "alpha_ci_high_s", 1e6)),
        Column("alpha_ci_low_s", value("alpha_ci_low_s")),
        Column("alpha_ci_high_s", value("alpha_ci_high_s")),
        Column("beta_s_per_byte", value("beta_s_per_byte"), "β (ns/B) [95 %]",
               with_interval("beta_s_per_byte", "beta_ci_low_s_per_byte", "beta_ci_high_s_per_byte", 1e9)),
        Column("beta_ci_low_s_per_byte", value("beta_ci_low_s_per_byte")),
        Column("beta_ci_high_s_per_byte", value("beta_ci_high_s_per_byte")),
        Column("bandwidth_Bps", value("bandwidth_Bps")),
        Column("n_half_bytes", value("n_half_bytes"), "n½ (B)", lambda m: fmt(m.values.get("n_half_bytes"), 1, 4)),
        Column("interval", value("interval")),
        Column("max_relative_residual", value("max_relative_residual")),
    ])
