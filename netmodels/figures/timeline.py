"""The timeline of a collective: ranks down, time across, every operation coloured by the model
term that prices it, live and static.

:func:`timeline_traces` turns one or two :class:`~netmodels.simulate.trace.Trace` into the
figure's traces, ``{legend label: (xs, ys)}``, bars as horizontal segments (µs on the axis, s
inside): the first trace (simulated) on each rank's row, a second one (measured) just above it
on the same time axis, and a dashed line where they first part (:func:`first_parting`).  A
message's ``wire`` is a line from its sender's row to its receiver's (as LogGOPSim's drawviz
draws it).  Above :data:`MAX_ROWS` ranks the figure aggregates (:func:`aggregate`): ranks go in
:data:`MAX_ROWS` bins, and per bin, step and kind of operation it draws the median start to
the median end as a bar and the earliest start to the latest end as a thin line, never one
bar per operation.  A ``late receive`` (an instant) is a tick across its row.

:func:`timeline_spec` declares the figure once (:mod:`netmodels.figures.panel`): a schedule of
the registry under a model of the table, one control for the semantics; ``.live()`` is its
panel, ``.static()`` its twin for the HTML book; :func:`draw_timeline` draws the same traces
with matplotlib (the live view and ``python -m netmodels timeline --png``).
"""

from __future__ import annotations

import numpy as np

from ..simulate import trace as tr

US = 1e-6
#: ranks drawn one row each; above, ranks are binned into this many rows
MAX_ROWS = 64
#: colour of each kind of operation (by name; other names take the palette in turn)
COLOURS = {"send overhead": "#1f77b4", "wire": "#7f7f7f", "receive overhead": "#d62728", "gap": "#ffbb78",
           "combine": "#2ca02c", "bytes": "#9467bd", "wire (unexpected)": "#bcbd22", "late receive": "#000000"}
#: the term of the LogP family that prices each kind (legend)
LOGP_TERMS = {"send overhead": "o_s", "wire": "L", "receive overhead": "o_r", "gap": "g, g + (m−1)G",
              "combine": "per element", "bytes": "(m−1)G", "wire (unexpected)": "L, before its receive",
              "late receive": "receive posted after its message"}
#: the term that prices a step-synchronous model's ``wire`` (its comm) and ``combine``, by model class
STEP_TERMS = {"AlphaBeta": {"wire": "α + βm"}, "NBLModel": {"wire": "α + βm·f(L)", "combine": "c₂, c₃ per byte"},
              "BSP": {"wire": "g·h + l"}, "TwoLevel": {"wire": "α + βm per level, packing"},
              "LoP": {"wire": "L(p), o(p)"}}
_WIRES = ("wire", "wire (unexpected)")
_PALETTE = ("#17becf", "#e377c2", "#8c564b", "#aec7e8", "#98df8a", "#ff9896")


def _check_trace(name: str, t) -> tr.Trace:
    if not isinstance(t, tr.Trace):
        raise ValueError(f"{name} must be a netmodels.simulate.trace.Trace, got {type(t).__name__}")
    return t


def label(kind: str, model: str = "") -> str:
    """The legend's label of ``kind``: its name and the model term that prices it."""
    term = STEP_TERMS.get(model, {}).get(kind) if model in STEP_TERMS else LOGP_TERMS.get(kind)
    return f"{kind} ({term})" if term else kind


def colour(kind: str, kinds) -> str:
    if kind in COLOURS:
        return COLOURS[kind]
    return _PALETTE[list(kinds).index(kind) % len(_PALETTE)]


# ---------------------------------------------------------------- where two traces part
def first_parting(a: tr.Trace, b: tr.Trace, tolerance: float | None = None, rtol: float = 0.05):
    """The first step at which traces ``a`` and ``b`` part, or None: the first step t at which a
    rank that has operations of step t in both ends its step t more than ``tolerance`` (s;
    default ``rtol`` times the longer of the two traces' spans) earlier or later in one than in
    the other.  Steps and ranks are compared where both traces have them."""
    _check_trace("a", a), _check_trace("b", b)
    if a.nprocs != b.nprocs:
        raise ValueError(f"the traces must have as many ranks; got {a.nprocs} and {b.nprocs}")
    if tolerance is None:
        if not (rtol >= 0 and np.isfinite(rtol)):
            raise ValueError(f"rtol must be a finite number >= 0, got {rtol!r}")
        tolerance = rtol * max(a.span[1] - a.span[0], b.span[1] - b.span[0])
    elif not (tolerance >= 0 and np.isfinite(tolerance)):
        raise ValueError(f"tolerance must be a finite time >= 0 (s), got {tolerance!r}")
    n = min(a.nsteps, b.nsteps)
    if n == 0:
        return None
    ea, eb = a.step_ends()[:, :n], b.step_ends()[:, :n]
    both = ~(np.isnan(ea) | np.isnan(eb))
    apart = both & (np.abs(np.where(both, ea - eb, 0.0)) > tolerance)
    steps = np.flatnonzero(apart.any(axis=0))
    return int(steps[0]) if steps.size else None


def step_start(t: tr.Trace, step: int) -> float:
    """The earliest start of an operation of ``step`` in ``t`` (s)."""
    m = t.step == step
    return float(t.start[m].min()) if m.any() else float("nan")


# ---------------------------------------------------------------- aggregation
def aggregate(t: tr.Trace, rows: int = MAX_ROWS):
    """Per bin of ranks (``rows`` bins of consecutive ranks), step and kind:
    ``(bin, kind, min start, median start, median end, max end)`` arrays (s)."""
    rows = max(1, min(int(rows), t.nprocs))
    nb = np.int64(rows)
    binned = (t.rank.astype(np.int64) * nb) // t.nprocs
    nk, ns = len(t.kinds), max(t.nsteps, 1)
    key = (binned * ns + t.step) * nk + t.kind
    out = []
    for col in (t.start, t.end):
        order = np.lexsort((col, key))
        k = key[order]
        first = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
        last = np.r_[first[1:], k.size] - 1
        mid = (first + last) // 2
        out.append((k[first], col[order], first, last, mid))
    (keys, s_sorted, first, last, mid), (_, e_sorted, _, elast, emid) = out
    return (keys // nk // ns, (keys % nk).astype(np.int64), s_sorted[first], s_sorted[mid], e_sorted[emid],
            e_sorted[elast])


def _bars(x0, x1, y):
    """Horizontal segments as one polyline with NaN breaks: ``(xs, ys)``."""
    n = len(x0)
    xs, ys = np.full(3 * n, np.nan), np.full(3 * n, np.nan)
    xs[0::3], xs[1::3] = x0, x1
    ys[0::3] = ys[1::3] = y
    return xs, ys


def _segments(x0, y0, x1, y1):
    """Segments from (x0, y0) to (x1, y1), with NaN breaks: ``(xs, ys)``."""
    n = len(x0)
    xs, ys = np.full(3 * n, np.nan), np.full(3 * n, np.nan)
    xs[0::3], xs[1::3], ys[0::3], ys[1::3] = x0, x1, y0, y1
    return xs, ys


def layers(t: tr.Trace, offset: float = 0.0, rows: int = MAX_ROWS, prefix: str = ""):
    """The traces of one timeline: ``{label: (xs, ys, how)}`` (s, row), ``how`` "bar", "line"
    (a message from row to row) or "range" (an aggregated bin's earliest start to latest end);
    rows are ranks, or bins of ranks above ``rows`` ranks; ``offset`` shifts the row."""
    out = {}
    binned = t.nprocs > rows
    if binned:
        b, kind, lo, s, e, hi = aggregate(t, rows)
        for k in sorted(np.unique(kind).tolist(), key=lambda k: t.kinds[k] not in _WIRES):   # wires below
            m = kind == k
            name = prefix + label(t.kinds[k], t.model)
            if t.kinds[k] in _WIRES and (t.peer[t.kind == k] >= 0).all():
                # messages in flight are no work of the row's ranks: their span only, a thin line
                out[name] = (*_bars(lo[m], hi[m], b[m] + offset), "range", t.kinds[k])
                continue
            out[name] = (*_bars(s[m], e[m], b[m] + offset), "bar", t.kinds[k])
            out[name + " (range)"] = (*_bars(lo[m], hi[m], b[m] + offset), "range", t.kinds[k])
        return out
    for k in np.unique(t.kind).tolist():
        m = t.kind == k
        name = prefix + label(t.kinds[k], t.model)
        peer = t.peer[m]
        if t.kinds[k] in _WIRES and (peer >= 0).all():
            out[name] = (*_segments(t.start[m], t.rank[m] + offset, t.end[m], peer + offset), "line", t.kinds[k])
        elif t.kinds[k] == "late receive":      # an instant: a tick across the row
            row = t.rank[m] + offset
            out[name] = (*_segments(t.start[m], row - 0.3, t.start[m], row + 0.3), "line", t.kinds[k])
        else:
            out[name] = (*_bars(t.start[m], t.end[m], t.rank[m] + offset), "bar", t.kinds[k])
    return out


def timeline_traces(simulated: tr.Trace, measured: tr.Trace | None = None, rows: int = MAX_ROWS,
                    tolerance: float | None = None) -> tuple[dict, dict]:
    """``(traces, info)``: the figure's traces ``{label: (xs, ys, how, kind)}`` (s, row) and
    ``info`` (``rows``: rows drawn, ``ranks_per_row``, ``parting``: the first step where the
    two traces part or None, ``parting_s``: where it is marked, s, ``span``: (s, s)).  With a
    ``measured`` trace, it is drawn a third of a row above the simulated one."""
    _check_trace("simulated", simulated)
    if measured is not None:
        _check_trace("measured", measured)
        if measured.nprocs != simulated.nprocs:
            raise ValueError(f"measured has {measured.nprocs} ranks, simulated {simulated.nprocs}")
    rows = max(1, int(rows))
    shown = min(rows, simulated.nprocs)
    both = measured is not None
    out = layers(simulated, 0.17 if both else 0.0, rows, "simulated: " if both else "")
    info = {"rows": shown, "ranks_per_row": simulated.nprocs / shown, "parting": None, "parting_s": None,
            "span": simulated.span}
    if both:
        out.update(layers(measured, -0.17, rows, "measured: "))
        info["span"] = (min(simulated.span[0], measured.span[0]), max(simulated.span[1], measured.span[1]))
        step = first_parting(simulated, measured, tolerance)
        if step is not None:
            x = min(step_start(simulated, step), step_start(measured, step))
            info["parting"], info["parting_s"] = step, x
            out[f"first parting: step {step}"] = (np.array([x, x]), np.array([-0.5, shown - 0.5]), "mark", "")
    return out, info


# ---------------------------------------------------------------- drawing
def _width(how: str, rows: int) -> float:
    """Line width (points) of a bar for ``rows`` rows on a 4-inch-high axis."""
    bar = max(1.0, min(9.0, 180.0 / max(rows, 1)))
    return {"bar": bar, "range": 1.0, "line": 0.8, "mark": 1.2}[how]


def bin_ticks(nprocs: int, rows: int, most: int = 9):
    """``(rows, labels)``: at most ``most`` rows of bins of ranks, each labelled by its first rank."""
    step = max(1, -(-rows // most))
    where = list(range(0, rows, step))
    return where, [f"{-(-b * nprocs // rows):,}" for b in where]


def draw_timeline(ax, simulated: tr.Trace, measured: tr.Trace | None = None, rows: int = MAX_ROWS,
                  title: str = "", tolerance: float | None = None) -> dict:
    """Draw the timeline on a matplotlib ``Axes`` (µs across, ranks down); returns ``info``
    of :func:`timeline_traces`."""
    from matplotlib.collections import LineCollection

    traces, info = timeline_traces(simulated, measured, rows, tolerance)
    ax.clear()
    for name, (xs, ys, how, kind) in traces.items():
        if how == "mark":
            ax.plot(xs / US, ys, color="black", ls="--", lw=_width(how, info["rows"]), label=name, zorder=5)
            continue
        if xs.size < 3:
            continue
        seg = np.stack([np.stack([xs[0::3], ys[0::3]], axis=1), np.stack([xs[1::3], ys[1::3]], axis=1)],
                       axis=1) * np.array([1 / US, 1.0])
        c = "black" if how == "mark" else colour(kind, simulated.kinds + (measured.kinds if measured else ()))
        lc = LineCollection(seg, colors=c, linewidths=_width(how, info["rows"]),
                            linestyles="dashed" if how == "mark" else "solid",
                            alpha=0.45 if how == "range" else 1.0,
                            label="_nolegend_" if name.endswith(" (range)") else name, capstyle="butt")
        ax.add_collection(lc)
    lo, hi = info["span"]
    pad = 0.02 * (hi - lo or 1e-6)
    ax.set_xlim((lo - pad) / US, (hi + pad) / US)
    ax.set_ylim(info["rows"] - 0.5, -0.5)
    per = info["ranks_per_row"]
    ax.set_xlabel("time (µs)")
    ax.set_ylabel("rank" if per == 1 else f"rank ({per:g} per row; bar: median, line: earliest to latest)")
    if per == 1 and info["rows"] <= 32:
        ax.set_yticks(range(info["rows"]))
    elif per > 1:                                # a bin is labelled by its first rank
        ticks, names = bin_ticks(simulated.nprocs, info["rows"])
        ax.set_yticks(ticks, names)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.set_title(title, fontsize=9)
    return info


# ---------------------------------------------------------------- the figure, declared once
def simulated_trace(algorithm: str, P: int, model: str, semantics: str | None = None, N: int | None = None,
                    receives: str = "after-sends", params: dict | None = None) -> tr.Trace:
    """The trace of registered ``algorithm`` on ``P`` ranks and ``N`` elements (default 0 for a
    barrier, 1 otherwise) under table model ``model`` (``params`` replacing its default
    machine's) and ``semantics`` (None: the model's own)."""
    from ..algorithms import registry
    from ..models import table
    from ..simulate import simulate

    entry = table.get(model)
    name = registry.get(algorithm).name
    n = (0 if name.startswith("barrier.") else 1) if N is None else N
    a = registry.build(name, P, n)
    sim_model = entry.make(**(params or {}))
    return simulate(a, sim_model, semantics=semantics, trace=True,
                    receives=receives if semantics == "loggopsim" else "after-sends").trace


def timeline_spec(algorithm: str = "barrier.dissemination", P: int = 8, model: str = "loggp",
                  N: int | None = None, semantics=None, params: dict | None = None, rows: int = MAX_ROWS):
    """The timeline of ``algorithm`` on ``P`` ranks under table ``model``, one control: the
    semantics (``semantics``: the choices, default every one the model takes, its own first)."""
    from ..models import table
    from ..simulate.engine import SEMANTICS
    from .panel import Control, PanelSpec

    entry = table.get(model)
    if semantics is None:
        clocked = hasattr(entry.default(), "message_terms")
        semantics = (entry.semantics,) + tuple(s for s in SEMANTICS if s != entry.semantics
                                               and (clocked or s != "loggopsim"))
    semantics = tuple(semantics)
    traces = {s: simulated_trace(algorithm, P, model, s, N, params=params) for s in semantics}
    span = max(t.span[1] for t in traces.values())
    drawn = {s: timeline_traces(t, rows=rows)[0] for s, t in traces.items()}
    names = list(dict.fromkeys(k for d in drawn.values() for k in d))
    how = {k: v[2:] for d in drawn.values() for k, v in d.items()}
    shown = min(rows, P)

    def data(x, semantics):
        d = drawn[semantics]
        return {k: (d[k][0], d[k][1]) if k in d else (np.array([np.nan]), np.array([np.nan])) for k in names}

    styles = {}
    for k in names:
        h, kind = how[k]
        styles[k] = {"mode": "lines", "line": {"color": colour(kind, tr.KINDS), "width": _width(h, shown) * 1.3},
                     **({"opacity": 0.45} if h == "range" else {}),
                     **({"showlegend": False} if k.endswith(" (range)") else {})}
    per = P / shown

    def readout(semantics):
        t = traces[semantics]
        return f"{semantics}: the last rank ends at {t.span[1] / US:,.4g} µs; {len(t):,} operations"

    class View:
        def __init__(self, spec):
            from matplotlib.figure import Figure

            self.fig = Figure(figsize=spec.figsize)
            self.ax = self.fig.add_subplot()

        def show(self, values):
            from .panel import png

            s = values["semantics"]
            draw_timeline(self.ax, traces[s], rows=rows, title=f"{algorithm} on P = {P}, {entry.label}, {s}")
            self.fig.tight_layout()
            return png(self.fig)

    return PanelSpec(
        title=f"{algorithm} on P = {P} under {entry.label}",
        controls=(Control("semantics", "semantics", semantics[0], values=semantics, options=semantics,
                          widget="toggle", help="when a rank may go on: together (sync), on its own clock "
                                                "(stepwise), or as LogGOPSim (loggopsim)"),),
        data=data, x=np.array([0.0, span]), xlabel="time (µs)",
        ylabel="rank" if per == 1 else f"ranks ({per:g} per row)", x_scale=1 / US, styles=styles,
        readout=readout, digits=6, view=View, figsize=(8.5, 4.5),
        layout={"yaxis": {"range": [shown - 0.5, -0.5]}, "height": 460, "legend": {"font": {"size": 10}}})


def plotly_figure(simulated: tr.Trace, measured: tr.Trace | None = None, rows: int = MAX_ROWS, title: str = "",
                  tolerance: float | None = None):
    """The timeline as a Plotly figure (the same traces as :func:`draw_timeline`)."""
    import plotly.graph_objects as go

    traces, info = timeline_traces(simulated, measured, rows, tolerance)
    kinds = simulated.kinds + (measured.kinds if measured is not None else ())
    fig = go.Figure()
    for name, (xs, ys, how, kind) in traces.items():
        line = {"color": "black" if how == "mark" else colour(kind, kinds), "width": _width(how, info["rows"]) * 1.3}
        if how == "mark":
            line["dash"] = "dash"
        fig.add_trace(go.Scattergl(x=xs / US, y=ys, mode="lines", name=name, line=line,
                                   opacity=0.45 if how == "range" else 1.0,
                                   showlegend=not name.endswith(" (range)")))
    per = info["ranks_per_row"]
    lo, hi = info["span"]
    fig.update_layout(title={"text": title, "x": 0.01}, height=520, legend={"font": {"size": 10}},
                      xaxis={"title": {"text": "time (µs)"}, "range": [lo / US, hi / US * 1.02],
                             "exponentformat": "none"},
                      yaxis={"title": {"text": "rank" if per == 1 else f"ranks ({per:g} per row)"},
                             "range": [info["rows"] - 0.5, -0.5]})
    if per > 1:
        ticks, names = bin_ticks(simulated.nprocs, info["rows"])
        fig.update_yaxes(tickvals=ticks, ticktext=names)
    return fig


def html_page(simulated: tr.Trace, measured: tr.Trace | None = None, rows: int = MAX_ROWS, title: str = "") -> str:
    """A standalone HTML page of the timeline (Plotly's script inside: no network needed)."""
    return plotly_figure(simulated, measured, rows, title).to_html(include_plotlyjs=True, full_html=True)
