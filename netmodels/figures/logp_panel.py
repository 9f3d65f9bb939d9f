"""Figures of the LogP chapter: every barrier's predicted time against P, live and static.

:func:`barrier_spec` declares the figure once (:mod:`netmodels.figures.panel`): its live
panel (JupyterLab, ``barrier_spec(...).live()``) and its static twin (the HTML book,
``.static()``) both draw :func:`barrier_curves`, the closed forms of :func:`netmodels.models.logp_barriers.barrier_time`, for
P from 2 to 10^6.  Units: seconds inside, µs on the axes.
"""

from __future__ import annotations

import functools

import numpy as np

from ..models.logp import LogP
from ..models.logp_barrier_bound import knowledge_bound
from ..models.logp_barriers import barrier_time
from .panel import Control, PanelSpec, draw

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


@functools.lru_cache(maxsize=512)
def _cached_curves(L: float, o: float, g: float) -> dict:
    return barrier_curves(L, o, g)


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
    """Draw :func:`barrier_spec` at L, o, g (µs) and ``P`` on ``ax``, its readout as the title."""
    spec = barrier_spec(L_us, o_us, g_us, P)
    draw(spec, ax)
    ax.set_title(spec.readout(**spec.defaults()), fontsize=8)


def barrier_spec(L_us: float = 240.0, o_us: float = 10.0, g_us: float = 1.0, P: int = 256) -> PanelSpec:
    """Every barrier's predicted time against P, with controls L, o, g (µs) and P.

    Live: L 0.1 µs-10 ms, o and g 0.01 µs-1 ms (logarithmic), P 2-10^6.  Static: L and o by
    decades (plus the start values), g in {0.01, 1, 100} µs and the start value, P by
    decades from 2 to 10^6 plus ``P``.
    """
    from . import interactive as ia

    def curves(x, L, o, g, P, **_):
        out = dict(_cached_curves(L, o, g))
        at = ranking(L, o, g, int(P))
        out["P"] = ([P, P], [1e-8, 10.0])            # seconds: the whole y axis, 0.01 µs-10 s
        out["fastest at P"] = ([P], [at[0][1]])
        return out

    def readout(L, o, g, P, **_):
        at = ranking(L, o, g, int(P))
        return f"P = {int(P):,}: " + " < ".join(f"{k} {v / US:,.4g} µs" for k, v in at[:3]) + " ..."

    styles = {"lower bound (any barrier)": {"line": {"color": "black", "dash": "dash", "width": 1}},
              "P": {"mode": "lines", "line": {"color": "#999999", "width": 1}, "showlegend": False},
              "fastest at P": {"mode": "markers", "marker": {"color": "#d62728", "size": 10}}}
    micro = dict(unit="µs", scale=1 / US, log=True)
    return PanelSpec(
        title="Barriers under LogP", data=curves, x=P_AXIS.astype(float),
        controls=(
            Control("L", "L", L_us * US, span=(1e-7, 1e-2),
                    values=ia.with_values(ia.grid(1e-7, 1e-2, 6), [L_us * US]),
                    help="latency: the time a small message spends in the network", **micro),
            Control("o", "o", o_us * US, span=(1e-8, 1e-3),
                    values=ia.with_values(ia.grid(1e-8, 1e-3, 6), [o_us * US]),
                    help="overhead: the time a processor is busy sending or receiving one message", **micro),
            Control("g", "g", g_us * US, span=(1e-8, 1e-3),
                    values=ia.with_values(np.array([1e-8, 1e-6, 1e-4]), [g_us * US]),
                    help="gap: the least time between two sends (or two receives) of one processor", **micro),
            Control("P", "P", float(P), log=True, integer=True, span=(2, 1e6),
                    values=ia.with_values(np.array([2, 10, 100, 1000, 10**4, 10**5, 10**6], dtype=float),
                                          [float(P)]),
                    kw={"step": 0.05, "readout_format": ".0f"},
                    help="number of processes at which the readout ranks the barriers (grey line)"),
        ),
        rows=(("L", "o"), ("g", "P")),
        xlabel="processes P", ylabel="predicted time (µs)", y_scale=1 / US, log_x=True, log_y=True,
        readout=readout, styles=styles, digits=4,
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
