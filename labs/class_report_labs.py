"""What the class report (``class_report.py``) reads, computes and draws for each lab.

Each lab is a :class:`LabView`: the data files it reads (their kinds: :data:`KINDS`), what it takes from
one student's usable files (:meth:`LabView.extract`, with the kit's own fits, those the lab
notebooks use), its columns and its figures.  Figures are matplotlib's SVG, inlined in the page
by ``class_report.py``; every point of a machine carries its label as an SVG ``<title>``
(a tooltip).  Nothing here reads a file: the report hands over parsed JSON.  Every text a
hand-in brings (algorithm names, model names, student ids) is escaped where it meets HTML
(summaries, tooltips; matplotlib escapes its SVG text) and kept from matplotlib's math
(:func:`literal`).
"""

from __future__ import annotations

import html
import io
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

US = 1e-6


class Unusable(Exception):
    """A data file that cannot be used: the message says why, in one sentence."""


# ---------------------------------------------------------------- the data files
#: the kind of every hand-in, as the labs' loader (:mod:`mpi_exercises.labdata`) names it: what it
#: checks a file against (the command's record, the fields the labs read, the ranks the lab needs)
KINDS = {"pingpong.json": "pingpong", "testjig.json": "nbl-testjig", "allreduce.json": "allreduce-runs",
         "logp.json": "logp", "barriers.json": "barrier-bench", "lop.json": "lop", "predict.json": "predict",
         "timeline.json": "timeline"}


def need(data, *path):
    """``data[path[0]][path[1]]...``, or :class:`Unusable` naming the missing field."""
    here = data
    for i, key in enumerate(path):
        try:
            here = here[key]
        except (KeyError, IndexError, TypeError):
            raise Unusable(f"incomplete: no {'.'.join(str(k) for k in path[:i + 1])}") from None
    return here


def records(name: str, data) -> list[dict]:
    """The benchmark records of a file (lab 2's ``allreduce.json`` holds several runs)."""
    return list(data["runs"]) if KINDS.get(name) == "allreduce-runs" else [data]


# ---------------------------------------------------------------- figures
#: the figures' look (matplotlib's rcParams, in force while :func:`figure_style` is): text left as
#: text in the SVG, in the page's font
STYLE = {"svg.fonttype": "none", "font.size": 9, "axes.spines.top": False, "axes.spines.right": False,
         "axes.titlesize": 10, "axes.titleweight": "bold", "legend.fontsize": 8, "legend.frameon": False,
         "figure.dpi": 100}


def pyplot():
    import matplotlib

    if matplotlib.get_backend().lower() != "agg":
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def figure_style():
    """A context in which the figures are drawn (:data:`STYLE`); matplotlib's settings are restored after."""
    import matplotlib

    return matplotlib.rc_context(STYLE)


@dataclass
class Figure:
    """One figure of the page: its SVG and its caption (HTML)."""

    svg: str
    caption: str


def to_svg(fig, salt: str, titles: dict[str, str]) -> str:
    """The figure as inline SVG: no XML prologue, ids unique to this figure (``salt``), a
    ``<title>`` (tooltip) in every group whose gid is a key of ``titles``."""
    plt = pyplot()
    plt.rcParams["svg.hashsalt"] = salt
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    for gid, title in titles.items():
        text = text.replace(f'<g id="{gid}">', f'<g id="{gid}"><title>{html.escape(title)}</title>', 1)
    return text


@dataclass
class Style:
    """How a machine is drawn: the reference machine in black, oversubscribed ones hollow."""

    color: str
    face: str
    marker: str
    zorder: int


CLASS_COLOR, REFERENCE_COLOR, CAVEAT_COLOR, MEDIAN_COLOR = "#0a7d91", "#222222", "#c2410c", "#7c3aed"


def style(m) -> Style:
    if m.reference:
        return Style(REFERENCE_COLOR, REFERENCE_COLOR, "D", 5)
    if m.oversubscribed:
        return Style(CAVEAT_COLOR, "none", "o", 4)
    return Style(CLASS_COLOR, CLASS_COLOR, "o", 3)


def plain_log(ax, axis: str = "both", unit: str = "") -> None:
    """Log axes labelled with plain numbers (2, 5, 10, 20, ...), as the book's figures are."""
    from matplotlib import ticker

    for name in ("x", "y") if axis == "both" else (axis,):
        a = getattr(ax, f"{name}axis")
        lo, hi = sorted(getattr(ax, f"get_{name}lim")())
        subs = (1.0,) if hi / lo > 1e3 else (1.0, 2.0, 5.0) if hi / lo > 8 else (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)
        a.set_major_locator(ticker.LogLocator(base=10, subs=subs))
        a.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:,.10g}{unit}"))
        a.set_minor_formatter(ticker.NullFormatter())


def literal(text) -> str:
    """A text from a hand-in (an algorithm, a model, a student id) as a figure's label: shown as
    written, never read as matplotlib's math (``$...$``)."""
    return str(text).replace("$", r"\$")


def jitter(n: int, seed: int = 0, width: float = 0.28) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-width, width, n)


def counted(m) -> bool:
    """Whether machine ``m`` counts in the class's statistics: a student's, not oversubscribed, and
    not drawn only from files byte-identical to an earlier machine's (a shared file counts once)."""
    return not m.reference and not m.oversubscribed and not getattr(m, "repeat", False)


def class_median(machines, key):
    """Median of ``key(m)`` over the machines that count (:func:`counted`; NaNs left out)."""
    vals = [key(m) for m in machines if counted(m)]
    vals = [v for v in vals if v is not None and np.isfinite(v)]
    return float(np.median(vals)) if vals else math.nan


def fmt(x, scale=1.0, digits=3) -> str:
    """A number for the page: ``digits`` significant digits (whole numbers once they have that many),
    empty if missing."""
    if x is None or isinstance(x, bool) or (isinstance(x, float) and not np.isfinite(x)):
        return ""
    v = x * scale
    return f"{v:,.0f}" if abs(v) >= 10 ** (digits - 1) else f"{v:#.{digits}g}".rstrip(".")


# ---------------------------------------------------------------- a lab
@dataclass
class Column:
    """A column of the machines' table and of the CSV: ``value(m)`` (SI units) is written to
    the CSV as ``csv`` and shown on the page as ``page(m)`` under ``header``."""

    csv: str
    value: Callable
    header: str = ""
    page: Callable | None = None


@dataclass
class LabView:
    name: str
    title: str
    main: str                                  #: the file whose record labels the machine
    reads: tuple                               #: files this page uses (others are only checked)
    extract: Callable                          #: {file: JSON} -> (values, caveats) of one machine
    columns: list[Column]
    figures: Callable                          #: machines -> [Figure]
    summary: Callable                          #: machines -> [sentence (HTML: a hand-in's text escaped)]
    about: str = ""                            #: what the page shows, one paragraph (HTML)
    notes: dict = field(default_factory=dict)  #: file -> why it is only checked (HTML)


def _v(key):
    return lambda m: m.values.get(key)


def _with_interval(key, lo, hi, scale, digits=4):
    """The value and its 95 % interval, e.g. ``1.277 [1.272, 1.284]``."""
    def page(m):
        v = fmt(m.values.get(key), scale, digits)
        if m.values.get(lo) is None or m.values.get(hi) is None:
            return v
        return f"{v} [{fmt(m.values[lo], scale, digits)}, {fmt(m.values[hi], scale, digits)}]"
    return page


# ---------------------------------------------------------------- lab 1: α and β
def lab1_extract(files: dict) -> tuple[dict, list[str]]:
    """α and β of a ``pingpong.json``: the kit's one fit of a measured file, the lab's
    (:func:`mpi_exercises.bench.pingpong.fit_file`, relative least squares on the per-size minima)."""
    from mpi_exercises.bench import pingpong
    from netmodels.models.fit import unphysical

    data = files["pingpong.json"]
    results = need(data, "results")
    try:
        n, _ = pingpong.points(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise Unusable(f"malformed results: {exc!r}") from None
    try:
        f = pingpong.fit_file(data)["alpha_beta"]
    except (KeyError, ValueError) as exc:
        raise Unusable(f"cannot fit α and β: {exc}") from None
    caveats = []
    values = {"alpha_s": f["alpha_s"], "beta_s_per_byte": f["beta_s_per_byte"], "sizes": int(n.size),
              "largest_bytes": float(n.max()), "max_relative_residual": f["max_relative_residual"]}
    lo, hi, how = _lab1_intervals(data, results, f)
    if lo is not None:
        values.update(alpha_ci_low_s=lo[0], alpha_ci_high_s=hi[0], beta_ci_low_s_per_byte=lo[1],
                      beta_ci_high_s_per_byte=hi[1])
    values["interval"] = how
    why = unphysical("the α-β fit", alpha=f["alpha_s"], beta=f["beta_s_per_byte"])   # the lab refuses it too
    if why:
        caveats.append(why + "; not drawn")
    else:
        values["n_half_bytes"] = f["alpha_s"] / f["beta_s_per_byte"]
        values["bandwidth_Bps"] = 1 / f["beta_s_per_byte"]
    return values, caveats


def _lab1_intervals(data, results, f):
    """95 % intervals of α and β: the file's own (the benchmark's bootstrap over its rounds) when
    its recorded fit is ``f`` (``fit_file``'s ``alpha_beta``), else the same bootstrap recomputed
    from its samples (``fit_file(ci=True)``)."""
    from mpi_exercises.bench import pingpong

    recorded = (data.get("fit") or {}).get("alpha_beta") or {}
    try:
        if (np.isclose(recorded["alpha_s"], f["alpha_s"], rtol=1e-9, atol=0)
                and np.isclose(recorded["beta_s_per_byte"], f["beta_s_per_byte"], rtol=1e-9, atol=0)):
            a, b = recorded["alpha_ci_s"], recorded["beta_ci_s_per_byte"]
            return (float(a[0]), float(b[0])), (float(a[1]), float(b[1])), "recorded"
    except (KeyError, TypeError, IndexError, ValueError):
        pass
    if all(isinstance(r, dict) and "times_s" in r and "samples_per_round" in r for r in results):
        statistic = pingpong.STATISTICS[pingpong.FIT_STATISTIC]
        try:
            # samples are stored to the picosecond (mpi_exercises.bench.statistics.summarize)
            if not all(np.isclose(statistic(r["times_s"]), r[pingpong.FIT_STATISTIC], rtol=1e-9, atol=1e-11)
                       for r in results):
                return None, None, f"none: its {pingpong.FIT_STATISTIC} values are not those of its samples"
            ab = pingpong.fit_file(data, ci=True)["alpha_beta"]
            return ((ab["alpha_ci_s"][0], ab["beta_ci_s_per_byte"][0]),
                    (ab["alpha_ci_s"][1], ab["beta_ci_s_per_byte"][1]), "recomputed")
        except (KeyError, TypeError, ValueError, IndexError):
            pass
    return None, None, "none"


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
               f"with their 95 % intervals ({len(widths)} of {len(drawn)} machines have one: the benchmark's "
               f"bootstrap over its rounds{width}: an interval says how well one run pins its machine down, "
               "not how far another launch may land); the cross is the class median (machines not "
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


LAB1 = LabView(
    name="lab1", title="Lab 1: α and β", main="pingpong.json", reads=("pingpong.json",),
    extract=lab1_extract, figures=lab1_figures, summary=lab1_summary,
    about=("Each student's ping-pong (<code>mpiexec -n 2 python -m mpi_exercises pingpong</code>), fitted "
           "as the lab fits it: α + βn by relative least squares on the minimum one-way times of each size "
           "(<code>min_s</code>; noise only adds time, so the minimum moves least with the machine's load), "
           "the kit's one fit of a measured file (<code>mpi_exercises.bench.pingpong.fit_file</code>), "
           "which lab 5 and <code>predict</code> use too."),
    columns=[
        Column("alpha_s", _v("alpha_s"), "α (µs) [95 %]",
               _with_interval("alpha_s", "alpha_ci_low_s", "alpha_ci_high_s", 1e6)),
        Column("alpha_ci_low_s", _v("alpha_ci_low_s")),
        Column("alpha_ci_high_s", _v("alpha_ci_high_s")),
        Column("beta_s_per_byte", _v("beta_s_per_byte"), "β (ns/B) [95 %]",
               _with_interval("beta_s_per_byte", "beta_ci_low_s_per_byte", "beta_ci_high_s_per_byte", 1e9)),
        Column("beta_ci_low_s_per_byte", _v("beta_ci_low_s_per_byte")),
        Column("beta_ci_high_s_per_byte", _v("beta_ci_high_s_per_byte")),
        Column("bandwidth_Bps", _v("bandwidth_Bps")),
        Column("n_half_bytes", _v("n_half_bytes"), "n½ (B)", lambda m: fmt(m.values.get("n_half_bytes"), 1, 4)),
        Column("interval", _v("interval")),
        Column("max_relative_residual", _v("max_relative_residual")),
    ])


# ---------------------------------------------------------------- lab 3: LogP and barriers
PARAMS3 = (("L_s", "L", "µs", US), ("o_s_s", "o_s", "µs", US), ("o_r_s", "o_r", "µs", US),
           ("g_s", "g", "µs", US), ("G_s_per_byte", "G", "ns/B", 1e-9))


def lab3_extract(files: dict) -> tuple[dict, list[str]]:
    values, caveats = {}, []
    fit = None
    if "logp.json" in files:
        from netmodels.models import logp

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
                          "<code>logp.json</code>, <code>netmodels.models.logp.fit_results</code>): points are "
                          "machines (spread sideways only to be told apart; hollow: L not identified and "
                          "clipped at 0, or oversubscribed in orange), the violet bar the class median, the grey "
                          "square the book's kit machine (<code>KIT_VM_LOGGP</code>). g and G are missing where "
                          "every gap measured an overhead."))
    ranked = [m for m in machines if m.values.get("ranking_measured")]
    if ranked:
        out.append(_ranking_figure(plt, machines[0].lab, ranked))
    return out


def _counts(ax, count) -> None:
    """A matrix of counts drawn as vector cells (no raster image), row 0 at the top."""
    n_rows, n_cols = count.shape
    ax.pcolormesh(np.arange(n_cols + 1) - 0.5, np.arange(n_rows + 1) - 0.5, count, cmap="Blues", vmin=0,
                  vmax=max(count.max(), 1), edgecolors="white", linewidth=0.5)
    ax.set_xlim(-0.5, n_cols - 0.5)
    ax.set_ylim(n_rows - 0.5, -0.5)


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
        _counts(ax, count)
        for i in range(len(names)):
            for j in range(len(names)):
                if count[i, j]:
                    ax.text(j, i, str(count[i, j]), ha="center", va="center", fontsize=7,
                            color="white" if count[i, j] > 0.6 * count.max() else "#1f2937")
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


LAB3 = LabView(
    name="lab3", title="Lab 3: LogP parameters and barriers", main="logp.json",
    reads=("logp.json", "barriers.json"), extract=lab3_extract, figures=lab3_figures, summary=lab3_summary,
    about=("Each student's parametrised round trips (<code>logp</code>, 2 ranks), fitted as the lab fits "
           "them (Netgauge's equations on the minima), and the barrier benchmark "
           "(<code>barrier-bench</code> on as many ranks as cores), ranked by minimum time. In the table, "
           "n.i. is a parameter the fit could not identify: L when the overheads measured alone exceed half "
           "a round trip (L is then clipped at 0), g and G when every gap measured an overhead."),
    columns=[
        *[Column(key, _v(key), f"{label} ({unit})", _param3(key, scale)) for key, label, unit, scale in PARAMS3],
        Column("L_unconstrained_s", _v("L_unconstrained_s")),
        Column("L_identified", _v("L_identified")),
        Column("g_identified", _v("g_identified")),
        Column("barrier_ranks", _v("barrier_ranks")),
        Column("fastest_measured", _fastest("ranking_measured"), "fastest barrier", _fastest("ranking_measured")),
        Column("fastest_predicted", _fastest("ranking_predicted"), "fastest predicted", _fastest("ranking_predicted")),
        Column("ranking_measured", _ranking("ranking_measured")),
        Column("ranking_predicted", _ranking("ranking_predicted")),
    ])


# ---------------------------------------------------------------- lab 5: predicted against measured
MODELS5 = ("alpha-beta", "nbl", "loggp")
MODEL_NAMES = {"alpha-beta": "α-β", "nbl": "NBL", "loggp": "LogGP"}


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
        ax.set_xticks(range(len(models)), [MODEL_NAMES.get(k, literal(k)) for k in models])
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


LAB5 = LabView(
    name="lab5", title="Lab 5: predicted against measured collectives", main="predict.json",
    reads=("predict.json",), extract=lab5_extract, figures=lab5_figures, summary=lab5_summary,
    about=("Each student's prediction report (<code>predict --calibration pingpong.json logp.json</code> on "
           "as many ranks as cores): every allreduce and barrier measured and predicted by α-β, NBL and LogGP "
           "from the student's own lab 1 and lab 3 files."),
    notes={"pingpong.json": "checked only: <code>predict.json</code> holds the models fitted to it",
           "logp.json": "checked only: <code>predict.json</code> holds the models fitted to it"},
    columns=[
        *[Column(f"{k}_median_abs_error", _v(f"{k}:with_software"), MODEL_NAMES[k], _err(f"{k}:with_software"))
          for k in MODELS5],
        *[Column(f"{k}_median_abs_error_network_only", _v(f"{k}:network_only"), f"{MODEL_NAMES[k]}, network",
                 _err(f"{k}:network_only")) for k in MODELS5],
        Column("best_model", _v("best"), "best model", lambda m: m.values.get("best", "")),
        Column("rows", _v("rows")),
    ])


# ---------------------------------------------------------------- lab 2: f(L)
def lab2_extract(files: dict) -> tuple[dict, list[str]]:
    values, caveats = {}, []
    if "testjig.json" in files:
        from mpi_exercises.bench.nbl_testjig import table
        from netmodels.models import nbl_fit

        data = files["testjig.json"]
        stat = (data.get("table") or {}).get("statistic") or "min_s"
        try:
            tab = table(need(data, "results"), stat)
            S = np.array(tab["S"], dtype=float)
            T = {int(L): np.array(t, dtype=float) for L, t in tab["T_s"].items()}
            f_fit, beta, _ = nbl_fit.fit_f(S, T)
        except (KeyError, TypeError, ValueError, StopIteration) as exc:
            raise Unusable(f"testjig.json: cannot fit f(L): {exc}") from None
        values.update(f={int(L): float(v) for L, v in f_fit.items()}, beta_s_per_elem=float(beta),
                      statistic=stat)
        if "warning" in tab:
            caveats.append(f"test jig: {tab['warning']}")
    if "allreduce.json" in files:
        runs = files["allreduce.json"]["runs"]
        values["allreduce_runs"] = len(runs)
    return values, caveats


def lab2_figures(machines) -> list[Figure]:
    from netmodels.models import nbl_fit
    from netmodels.models.machines import DELTA_TABLE1

    plt = pyplot()
    have = [m for m in machines if m.values.get("f")]
    if not have:
        return []
    fig, ax = plt.subplots(figsize=(7, 4.2))
    titles = {}
    Ls = sorted({L for m in have for L in m.values["f"]})
    grid = np.array([1, max(Ls)])
    ax.plot(grid, grid, ":", color="#9ca3af", lw=1)
    ax.text(grid[1], grid[1], " f = L (links share nothing)", fontsize=7, color="#6b7280", va="center")
    ax.plot(grid, [1, 1], ":", color="#9ca3af", lw=1)
    ax.text(grid[1], 1, " f = 1 (one link's worth)", fontsize=7, color="#6b7280", va="center")
    for m in have:
        st = style(m)
        L = sorted(m.values["f"])
        f = [m.values["f"][k] for k in L]
        gid = f"{m.gid}-f"
        ax.plot(L, f, "-" + st.marker, color=st.color, mfc=st.face, lw=1.6 if m.reference else 0.8,
                ms=5 if m.reference else 3.5, alpha=1 if m.reference else 0.6, zorder=st.zorder, gid=gid)
        titles[gid] = m.tooltip + "; " + ", ".join(f"f({k}) = {v:.2f}" for k, v in zip(L, f))
    delta, _, _ = nbl_fit.fit_f(DELTA_TABLE1["S"], DELTA_TABLE1["T"])
    dL = sorted(delta)
    ax.plot(dL, [delta[k] for k in dL], "s--", color="#6b7280", ms=4, lw=1,
            label="DELTA, Table 1 of Littlefield 1992")
    ax.set(xlabel="links L", ylabel="f(L): time per element relative to one link", xticks=Ls,
           title="f(L) of the class")
    ax.legend(loc="upper left")
    fig.tight_layout()
    return [Figure(to_svg(fig, f"{machines[0].lab}-fl", titles),
                   "Each machine's f(L), the least-squares slopes of its test-jig times relative to L = 1 "
                   "(<code>netmodels.models.nbl_fit.fit_f</code>, as the lab fits it); black: the reference "
                   "machine; orange: oversubscribed runs (their f measures the scheduler); dashed grey: the "
                   "paper's DELTA, its Table 1 fitted by the same function.")]


def lab2_summary(machines) -> list[str]:
    clean = [m for m in machines if counted(m) and m.values.get("f")]
    if not clean:
        return ["No machine of the class ran the test jig without oversubscription."]
    Ls = sorted({L for m in clean for L in m.values["f"]} - {1})
    return ["Class median " + ", ".join(f"f({L}) = {class_median(clean, lambda m, k=L: m.values['f'].get(k)):.2f}"
                                        for L in Ls) + f" over {len(clean)} machines not oversubscribed."]


def _f(L):
    return lambda m: (m.values.get("f") or {}).get(L)


LAB2 = LabView(
    name="lab2", title="Lab 2: f(L)", main="testjig.json", reads=("testjig.json", "allreduce.json"),
    extract=lab2_extract, figures=lab2_figures, summary=lab2_summary,
    about=("Each student's f(L) test jig (<code>nbl-testjig</code> on 4 ranks), fitted as the lab fits it "
           "(<code>nbl_fit.fit_f</code>); the allreduce runs are checked and counted."),
    columns=[
        *[Column(f"f{L}", _f(L), f"f({L})", lambda m, k=L: fmt(_f(k)(m), 1, 3)) for L in (2, 4, 6)],
        Column("beta_s_per_elem", _v("beta_s_per_elem"), "β (ns/elem)",
               lambda m: fmt(m.values.get("beta_s_per_elem"), 1e9, 3)),
        Column("allreduce_runs", _v("allreduce_runs"), "allreduce runs",
               lambda m: str(m.values.get("allreduce_runs", ""))),
    ])


# ---------------------------------------------------------------- lab 4: L(p) and the n-way barrier
def lab4_extract(files: dict) -> tuple[dict, list[str]]:
    from mpi_exercises.bench import lop_bench

    data = files["lop.json"]
    results = need(data, "results")
    P = need(data, "environment", "ranks")
    try:
        n_max = int((data.get("parameters") or {}).get("n_max") or 4)
        pred = lop_bench.predict(results, P, n_max)["single"]        # the measured points, no fit
        p = [float(r["peers"]) for r in results]
        measured = {int(r["options"]["n"]): float(r["min_s"]) for r in need(data, "barrier")}
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise Unusable(f"malformed: {exc!r}") from None
    values = {"p": p, "L_s": [float(x) for x in pred["L_s"]], "best_n_predicted": int(pred["best_n"]),
              "best_n_measured": min(measured, key=measured.get) if measured else None, "lop_ranks": P}
    return values, []


def lab4_figures(machines) -> list[Figure]:
    plt = pyplot()
    have = [m for m in machines if m.values.get("L_s")]
    if not have:
        return []
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10.5, 4), gridspec_kw={"width_ratios": [1.6, 1]})
    titles = {}
    for m in have:
        st = style(m)
        gid = f"{m.gid}-L"
        ax.plot(m.values["p"], np.array(m.values["L_s"]) / US, "-" + st.marker, color=st.color, mfc=st.face,
                lw=1.6 if m.reference else 0.8, ms=4 if m.reference else 3, alpha=1 if m.reference else 0.6,
                zorder=st.zorder, gid=gid)
        titles[gid] = m.tooltip + f"; chosen n = {m.values['best_n_predicted']}"
    ax.set(xlabel="peers p", ylabel="L(p) (µs)", title="L(p) of the class (measured points)")
    ns = sorted({m.values["best_n_predicted"] for m in have}
                | {m.values["best_n_measured"] for m in have if m.values["best_n_measured"]})
    count = np.zeros((len(ns), len(ns)), dtype=int)
    for m in have:
        if not m.reference and m.values["best_n_measured"]:
            count[ns.index(m.values["best_n_predicted"]), ns.index(m.values["best_n_measured"])] += 1
    _counts(bx, count)
    for i in range(len(ns)):
        for j in range(len(ns)):
            if count[i, j]:
                bx.text(j, i, str(count[i, j]), ha="center", va="center", fontsize=8,
                        color="white" if count[i, j] > 0.6 * count.max() else "#1f2937")
    bx.set_xticks(range(len(ns)), ns)
    bx.set_yticks(range(len(ns)), ns)
    bx.set(xlabel="fastest n measured", ylabel="n chosen from L(p)", title="The n of the n-way barrier")
    fig.tight_layout()
    return [Figure(to_svg(fig, f"{machines[0].lab}-lop", titles),
                   "Left: each machine's L(p) from its measured round trips and overheads (minima, sends posted "
                   "one by one; <code>mpi_exercises.bench.lop_bench.predict</code>, no fit). Right: how many "
                   "machines chose each n (from L(p)) against the n their measured barrier found fastest.")]


def lab4_summary(machines) -> list[str]:
    have = [m for m in machines if not m.reference and m.values.get("L_s")]
    if not have:
        return []
    same = sum(1 for m in have if m.values["best_n_predicted"] == m.values["best_n_measured"])
    return [f"On {same} of {len(have)} machines the n chosen from L(p) is the fastest measured."]


LAB4 = LabView(
    name="lab4", title="Lab 4: L(p) and the n-way barrier", main="lop.json", reads=("lop.json",),
    extract=lab4_extract, figures=lab4_figures, summary=lab4_summary,
    about="Each student's LoP measurement (<code>lop</code>, at least 5 ranks): L(p) and the n it chooses.",
    columns=[
        Column("lop_ranks", _v("lop_ranks")),
        Column("L1_s", lambda m: (m.values.get("L_s") or [None])[0], "L(1) (µs)",
               lambda m: fmt((m.values.get("L_s") or [None])[0], 1e6, 3)),
        Column("best_n_predicted", _v("best_n_predicted"), "n chosen",
               lambda m: str(m.values.get("best_n_predicted", ""))),
        Column("best_n_measured", _v("best_n_measured"), "n fastest measured",
               lambda m: str(m.values.get("best_n_measured", "") or "")),
    ])


LABS = {lab.name: lab for lab in (LAB1, LAB2, LAB3, LAB4, LAB5)}
