"""Figures of the LogP chapter: every barrier's predicted time against P, live and static.

:func:`barrier_panel` is the live ipywidgets panel (JupyterLab); :func:`barrier_figure`
its precomputed twin for the static book (:mod:`netmodels.figures.interactive`).  Both draw
:func:`barrier_curves`, the closed forms of :func:`netmodels.models.logp.barrier_time`, for
P from 2 to 10^6.  Units: seconds inside, µs on the axes.
"""

from __future__ import annotations

import numpy as np

from ..models.logp import LogP, barrier_time, knowledge_bound

US = 1e-6

#: (label, algorithm, options) drawn by the panels
CURVES = (
    ("central counter", "central_counter", {}),
    ("combining tree (fan-in 4)", "combining_tree", {"fan_in": 4}),
    ("tournament = binomial", "tournament", {}),
    ("butterfly", "butterfly", {}),
    ("pairwise exchange", "pairwise_exchange", {}),
    ("dissemination", "dissemination", {}),
    ("2-way dissemination", "nway_dissemination", {"n": 2}),
    ("4-way dissemination", "nway_dissemination", {"n": 4}),
)

#: process counts of the curves: 2 .. 10^6, about 4 per decade, integers
P_AXIS = np.unique(np.round(np.logspace(np.log10(2), 6, 26)).astype(int))


def _cached_curves(L: float, o: float, g: float) -> dict:
    key = (L, o, g)
    if key not in _CACHE:
        _CACHE[key] = barrier_curves(L, o, g)
    return _CACHE[key]


_CACHE: dict = {}


def barrier_curves(L: float, o: float, g: float, Ps=P_AXIS, bound: bool = True) -> dict:
    """{label: times (s) over ``Ps``} for every curve of :data:`CURVES` (and the lower bound)."""
    out = {}
    for label, name, opts in CURVES:
        out[label] = np.array([barrier_time(name, LogP(L, o, g, int(P)), **opts) for P in Ps])
    if bound:
        out["lower bound (any barrier)"] = np.array([knowledge_bound(LogP(L, o, g, int(P))) for P in Ps])
    return out


def ranking(L: float, o: float, g: float, P: int) -> list[tuple[str, float]]:
    """(label, seconds) of every curve at ``P`` ranks, fastest first."""
    times = barrier_curves(L, o, g, [P], bound=False)
    return sorted(((k, float(v[0])) for k, v in times.items()), key=lambda kv: kv[1])


def draw_barriers(ax, L_us: float, o_us: float, g_us: float, P: int) -> None:
    """Draw every algorithm's predicted time against P (µs arguments); mark ``P``."""
    ax.clear()
    curves = barrier_curves(L_us * US, o_us * US, g_us * US)
    for i, (label, t) in enumerate(curves.items()):
        style = {"color": "k", "ls": "--", "lw": 1} if label.startswith("lower") else {"color": f"C{i}"}
        ax.loglog(P_AXIS, t / US, label=label, **style)
    ax.axvline(P, color="0.6", lw=1)
    best = ranking(L_us * US, o_us * US, g_us * US, P)
    ax.set(xlabel="processes P", ylabel="predicted barrier time (µs)")
    ax.set_title(f"P = {P:,}: fastest {best[0][0]} ({best[0][1] / US:,.1f} µs), "
                 f"slowest {best[-1][0]} ({best[-1][1] / US:,.0f} µs)", fontsize=9)
    ax.legend(fontsize=7, loc="upper left")


def barrier_panel(L_us: float = 240.0, o_us: float = 10.0, g_us: float = 1.0, P: int = 256):
    """Sliders L, o, g (µs, logarithmic) and P (2 .. 10^6) redrawing :func:`draw_barriers`."""
    import ipywidgets as w
    from matplotlib.figure import Figure

    from .widgets import png

    L = w.FloatLogSlider(value=L_us, base=10, min=-1, max=4, description="L (µs)")
    o = w.FloatLogSlider(value=o_us, base=10, min=-2, max=3, description="o (µs)")
    g = w.FloatLogSlider(value=g_us, base=10, min=-2, max=3, description="g (µs)")
    p = w.FloatLogSlider(value=P, base=10, min=np.log10(2), max=6, step=0.05, description="P",
                         readout_format=".0f")
    image = w.Image(format="png")
    fig = Figure(figsize=(7.5, 4.5))
    ax = fig.add_subplot()

    def redraw(_=None):
        draw_barriers(ax, L.value, o.value, g.value, int(round(p.value)))
        fig.tight_layout()
        image.value = png(fig)

    for s in (L, o, g, p):
        s.observe(redraw, names="value")
    redraw()
    return w.VBox([w.HBox([L, o]), w.HBox([g, p]), image])


def barrier_figure(L_us: float = 240.0, o_us: float = 10.0, g_us: float = 1.0, P: int = 256):
    """The static twin of :func:`barrier_panel`: precomputed curves on slider grids.

    Grids: L 0.1 µs-10 ms and o 0.01 µs-1 ms (half decades, plus the start values), g in
    {0.01, 1, 100} µs and the start value, P by decades from 2 to 10^6 plus ``P``.
    """
    from . import interactive as ia

    Ls = ia.with_values(ia.grid(1e-7, 1e-2, 6), [L_us * US])
    os_ = ia.with_values(ia.grid(1e-8, 1e-3, 6), [o_us * US])
    gs = ia.with_values(np.array([1e-8, 1e-6, 1e-4]), [g_us * US])
    Ps = ia.with_values(np.array([2, 10, 100, 1000, 10**4, 10**5, 10**6], dtype=float), [float(P)])

    def curves(x, L, o, g, P):
        out = dict(_cached_curves(L, o, g))
        at = ranking(L, o, g, int(P))
        out["P"] = ([P, P], [1e-2, 1e7])
        out["fastest at P"] = ([P], [at[0][1]])
        return out

    def readout(L, o, g, P):
        at = ranking(L, o, g, int(P))
        return f"P = {int(P):,}: " + " < ".join(f"{k} {v / US:,.4g} µs" for k, v in at[:3]) + " ..."

    styles = {"lower bound (any barrier)": {"line": {"color": "black", "dash": "dash", "width": 1}},
              "P": {"mode": "lines", "line": {"color": "#999999", "width": 1}, "showlegend": False},
              "fastest at P": {"mode": "markers", "marker": {"color": "#d62728", "size": 10}}}
    return ia.slider_figure(
        curves, P_AXIS.astype(float),
        params={"L": ia.Param(Ls, "L", "µs", scale=1 / US, initial=L_us * US),
                "o": ia.Param(os_, "o", "µs", scale=1 / US, initial=o_us * US),
                "g": ia.Param(gs, "g", "µs", scale=1 / US, initial=g_us * US),
                "P": ia.Param(Ps, "P", "", initial=float(P))},
        title="Barriers under LogP", xlabel="processes P", ylabel="predicted time (µs)",
        y_scale=1 / US, log_x=True, log_y=True, readout=readout, styles=styles, digits=4,
        layout={"yaxis": {"range": [-2, 7]}, "legend": {"font": {"size": 10}}})


def draw_schedule(ax, schedule, title: str | None = None) -> None:
    """Space-time diagram of a schedule: ranks on the y axis, steps on the x axis, one
    arrow per message from (step, src) to (step + 1, dst).  Either schedule form."""
    from ..algorithms.arrays import as_transfers

    schedule = as_transfers(schedule)
    P = schedule.nprocs
    for t, step in enumerate(schedule.steps):
        for tr in step:
            ax.annotate("", xy=(t + 1, tr.dst), xytext=(t, tr.src),
                        arrowprops={"arrowstyle": "->", "color": f"C{t % 10}", "lw": 1})
    ax.set(xlim=(-0.2, max(schedule.nsteps, 1) + 0.2), ylim=(P - 0.5, -0.5),
           xticks=range(schedule.nsteps + 1), yticks=range(P), xlabel="step", ylabel="rank")
    ax.set_title(title or schedule.name, fontsize=9)
