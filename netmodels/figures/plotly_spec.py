"""The Plotly description of a precomputed figure (:mod:`netmodels.figures.interactive`): its
axes with their ranges and tick labels, each trace's style, the layout.  ``fr`` below is the
figure's stored frames (``interactive._Frames``: the x and y values shown, in display units).
"""

from __future__ import annotations

import math
from collections.abc import Mapping


def nice(v: float, digits: int = 3) -> str:
    """``v`` with ``digits`` significant digits for a label: 0.316, 1.75, 1,266, 10,000, 1e+12."""
    if v == 0 or not math.isfinite(v):
        return format(v, "g")
    if not 1e-3 <= abs(v) < 1e9:
        return format(v, f".{digits}g")
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(v))))
    text = f"{v:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def axis(label: str, log: bool, values: list, cells: bool = False) -> dict:
    """A Plotly axis over ``values``: 4 % of room on either side or, with ``cells`` (the
    centres of a heatmap's cells, increasing), half a cell, so that the first and last
    rows and columns are drawn whole."""
    # automargin: the margin grows to hold the tick labels and the title, never clipping them
    axis = {"title": {"text": label}, "type": "log" if log else "linear", "zeroline": False,
            "automargin": True}
    finite = [v for v in values if v is not None and (v > 0 or not log)]
    if finite:
        if log:
            finite = [math.log10(v) for v in finite]
        lo, hi = min(finite), max(finite)
        if cells and len(finite) > 1:
            pad_lo, pad_hi = (finite[1] - finite[0]) / 2, (finite[-1] - finite[-2]) / 2
        else:
            pad_lo = pad_hi = 0.04 * (hi - lo) if hi > lo else (0.5 if log else max(abs(lo) * 0.1, 1.0))
        axis["range"] = [float(f"{lo - pad_lo:.6g}"), float(f"{hi + pad_hi:.6g}")]
    return axis


def ticks(axis: dict, log: bool) -> dict:
    """Tick labels for an axis of ``range`` (log10 units on a log axis): plain numbers
    (1,000 and 0.01, never Plotly's 1k or 10m) while they stay short, powers of ten beyond
    (as :func:`nice`); on a log axis a label at every power of ten only (Plotly would label
    2 and 5 between them), or at 1, 2 and 5 times a power of ten when the axis spans less
    than a decade.  An axis that sets its own ticks (``dtick``, ``tickvals``,
    ``exponentformat``) is left as it is."""
    rng = axis.get("range")
    if not rng or axis.get("type") == "category" or {"dtick", "tickvals", "exponentformat"} & set(axis):
        return axis
    lo, hi = (10.0 ** r for r in rng) if log else (float(r) for r in rng)
    big = max(abs(lo), abs(hi))
    small = min(abs(lo), abs(hi)) if log else big
    plain = 1e-3 <= small and big < 1e9
    out = dict(axis, **({"exponentformat": "none", "separatethousands": True} if plain
                        else {"exponentformat": "power"}))
    if log:
        first, last = math.ceil(rng[0]), math.floor(rng[1])
        if last > first:
            out["dtick"] = 1
        else:
            vals = [m * 10.0 ** e for e in range(math.floor(rng[0]), math.ceil(rng[1]) + 1) for m in (1, 2, 5)
                    if rng[0] <= math.log10(m) + e <= rng[1]]
            out.update(tickmode="array", tickvals=vals, ticktext=[nice(v) for v in vals])
    return out


def check_layout(layout):
    if layout is None:
        return {}
    if not isinstance(layout, Mapping):
        raise ValueError(f"layout must be a mapping of Plotly layout properties, got {type(layout).__name__}")
    import plotly.graph_objects as go

    go.Layout(layout)          # raises ValueError naming a bad property
    return dict(layout)


def merge(base: dict, extra: Mapping) -> dict:
    out = dict(base)
    for k, v in extra.items():
        out[k] = merge(out[k], v) if isinstance(v, Mapping) and isinstance(out.get(k), dict) else v
    return out


PALETTE = ("#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#B279A2",
            "#FF9DA6", "#9D755D", "#BAB0AC", "#EECA3B")


def heatmap_style(fr, categories, zlabel: str) -> dict:
    """A heatmap trace's style: one colour per category, or Viridis fixed over all frames."""
    style = {"type": "heatmap", "hoverongaps": False}
    if categories:
        n = len(categories)
        scale = []
        for k in range(n):
            c = PALETTE[k % len(PALETTE)]
            scale += [[k / n, c], [(k + 1) / n, c]]
        style.update(zmin=-0.5, zmax=n - 0.5, colorscale=scale,
                     colorbar={"tickvals": list(range(n)), "ticktext": list(categories),
                               "title": {"text": zlabel}})
    else:
        zs = [v for arr in fr.pool.arrays for row in arr for v in row if v is not None]
        style.update(colorscale="Viridis", colorbar={"title": {"text": zlabel}})
        if zs:
            style.update(zmin=min(zs), zmax=max(zs))
            if all(float(v).is_integer() for v in zs):     # counts: whole ticks, no 0.5
                style["colorbar"]["dtick"] = max(1, math.ceil((max(zs) - min(zs)) / 8))
    style["x"], style["y"] = fr.all_x, fr.round(fr.ys, fr.y_scale)
    return style


def traces(kind, fr, styles: dict, categories, zlabel: str) -> list[dict]:
    """Each trace's name and Plotly style (the figure's, merged with ``styles[name]``)."""
    unknown = set(styles) - set(fr.trace_names)
    if unknown:
        raise ValueError(f"styles names unknown traces {sorted(unknown)}; traces are {fr.trace_names}")
    traces = []
    for i, name in enumerate(fr.trace_names):
        if kind == "heatmap":
            style = heatmap_style(fr, categories, zlabel)
        else:
            style = {"type": "scatter", "mode": "markers" if fr.frames[0][i][0] >= 0 else "lines"}
        extra = styles.get(name, {})
        if not isinstance(extra, Mapping):
            raise ValueError(f"styles[{name!r}] must be a mapping of Plotly trace properties")
        traces.append({"name": name, "style": merge(style, extra)})
    return traces


def layout(kind, fr, title, xlabel, ylabel, log_x, log_y, layout) -> dict:
    """The Plotly layout: fixed axes over every frame, title, legend, margins, then ``layout``."""
    heatmap = kind == "heatmap"
    base = {
        # title left-aligned and a legend below the x-axis title: neither under Plotly's
        # toolbar (top right) nor over the axis title
        "title": {"text": title, "font": {"size": 15}, "x": 0.01, "xanchor": "left"} if title else None,
        "margin": {"l": 70, "r": 20, "t": 60 if title else 20, "b": 50 if heatmap else 55},
        "height": 440,
        "legend": {"orientation": "h", "y": -0.3, "yanchor": "top"} if not heatmap else None,
        "xaxis": axis(xlabel, log_x, fr.all_x[:fr.xs.size], cells=heatmap),   # markers outside: clipped
        "yaxis": axis(ylabel, log_y, fr.round(fr.ys, fr.y_scale) if heatmap else fr.all_y,
                       cells=heatmap),
    }
    base = merge({k: v for k, v in base.items() if v is not None}, layout)
    for name, log in (("xaxis", log_x), ("yaxis", log_y)):
        base[name] = ticks(base[name], log)
    return base
