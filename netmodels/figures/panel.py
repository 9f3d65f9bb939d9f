"""One spec per figure: its controls and its data, from which both views are made.

A figure of the book is declared once, as a :class:`PanelSpec`: its controls
(:class:`Control`: a name, a label, a unit, a default, the values the static book steps
through and the range the live panel offers) and one data function of their values.  Two
generic functions make its two views:

- :func:`live_panel` (``spec.live()``): an ipywidgets panel for JupyterLab, one widget per
  control, that recomputes the data and redraws it with matplotlib on every change;
- :func:`static_figure` (``spec.static()``): its precomputed twin for the HTML book, a
  :mod:`netmodels.figures.interactive` figure with one slider per control that has
  static ``values`` (the others are held at their default).

A chapter declares a figure like this (SI units inside, ``scale`` converts for display)::

    from netmodels.figures.interactive import grid
    from netmodels.figures.panel import Control, PanelSpec

    spec = PanelSpec(
        title="α-β model", data=lambda n, alpha: {"T(n)": alpha + n * 1e-9},
        x=np.logspace(0, 8, 33), log_x=True, log_y=True, y_scale=1e6,
        xlabel="message size n (bytes)", ylabel="time (µs)",
        controls=(Control("alpha", "α", 1e-4, unit="µs", scale=1e6, log=True,
                          span=(1e-7, 1e-2), values=grid(1e-7, 1e-2, 11)),))
    spec.live()      # JupyterLab
    spec.static()    # the HTML book

Controls with named options (``options=("barrier", "allreduce")``) are drop-downs or
toggle buttons in the live panel and labelled sliders in the static book, never numeric
codes.  ``data(x, **values)`` returns what :func:`netmodels.figures.interactive.slider_figure`
takes: ``{trace: y array like x, or (xs, ys) pair}`` (``kind="heatmap"``: ``data(x, y,
**values)`` returns a ``(len(y), len(x))`` array).  ``styles`` (Plotly trace properties)
style both views; a figure whose live view draws more than its data (a topology, two
axes) gives a ``view`` factory instead of the generic matplotlib one.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import interactive as ia

_WIDGETS = ("", "dropdown", "toggle", "text", "int")


def png(fig) -> bytes:
    """Render a matplotlib figure to PNG bytes (for an ``ipywidgets.Image``)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    return buf.getvalue()


def log_ticks(ax) -> None:
    """Label the log axes of a matplotlib ``Axes`` as the static figures do
    (:func:`netmodels.figures.plotly_spec.ticks`): at the powers of ten only, never the
    minor ticks between them (matplotlib labels 2, 3, 4... there when an axis spans few
    decades), with plain numbers (1,000 and 0.01) where they are short; an axis that spans
    less than a decade is labelled at 1, 2 and 5 times a power of ten.  Call it once the
    limits are set; linear axes are left as they are."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    for axis in (ax.xaxis, ax.yaxis):
        if axis.get_scale() != "log":
            continue
        lo, hi = sorted(axis.get_view_interval())
        if not (lo > 0 and math.isfinite(hi)):
            continue
        if math.floor(math.log10(hi)) - math.ceil(math.log10(lo)) < 1:
            axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        axis.set_minor_formatter(NullFormatter())
        if 1e-3 <= lo and hi < 1e9:
            axis.set_major_formatter(FuncFormatter(lambda v, _pos: ia.nice(v)))


def _shown(v: float) -> float:
    """A value in display units, rid of the last bits of a unit conversion (1e-4 * 1e6 = 100)."""
    return float(f"{v:.12g}")


@dataclass(frozen=True)
class Control:
    """One parameter of a figure, for both views.

    ``default`` is its value (SI units, or one of ``options``).  ``values``: the static
    twin's slider values (``None``: the static twin holds the default).  The live panel
    offers ``options`` (named choices: a drop-down, ``widget="toggle"`` for buttons), or the
    continuous ``span=(lo, hi)`` (logarithmic with ``log``, whole numbers with
    ``integer``), or else the static ``values`` (a selection slider); ``live=False`` keeps a
    control out of the live panel (held at its default there).  Numbers are displayed as
    ``value * scale`` with ``fmt`` and ``unit``; ``names`` maps options to their labels.
    ``widget="text"`` is a free text field, ``"int"`` a bounded integer field over ``span``;
    ``kw`` passes ipywidgets options (``step``, ``readout_format``, ``continuous_update``...).
    ``help`` is one line saying what the parameter is (the live panel's key shows it under the
    controls).
    """

    name: str
    label: str
    default: Any
    values: Sequence | None = None
    options: Sequence | None = None
    span: tuple[float, float] | None = None
    unit: str = ""
    scale: float = 1.0
    fmt: str = ""
    log: bool = False
    integer: bool = False
    names: Mapping | None = None
    widget: str = ""
    live: bool = True
    kw: Mapping = field(default_factory=dict)
    help: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"name must be a Python identifier, got {self.name!r}")
        if "\n" in self.help:
            raise ValueError(f"help of {self.name} must be one line, got {self.help!r}")
        if self.widget not in _WIDGETS:
            raise ValueError(f"widget must be one of {_WIDGETS}, got {self.widget!r}")
        if self.span is not None:
            lo, hi = self.span
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi) or (self.log and lo <= 0):
                raise ValueError(f"span of {self.name} must be (lo, hi) with lo < hi (lo > 0 if log), got {self.span!r}")
        if self.live and self.span is None and self.options is None and self.values is None \
                and self.widget != "text":
            raise ValueError(f"control {self.name} needs options, span or values for the live panel")

    @property
    def named(self) -> bool:
        """True for a choice among named options (not a number)."""
        return self.options is not None or self.widget == "text"

    @property
    def description(self) -> str:
        return f"{self.label} ({self.unit})" if self.unit else self.label

    @property
    def explained(self) -> str:
        """``"label (unit): help"``, the control's line in the live panel's key."""
        return f"{self.description}: {self.help}" if self.help else self.description

    def display(self, value) -> str:
        """How a value is shown: its name, or ``value * scale`` with ``fmt`` and ``unit``."""
        if self.named:
            return str((self.names or {}).get(value, value))
        return self.param().display(float(value))

    def param(self) -> ia.Param:
        """The static twin's slider (positions index ``values`` for named options)."""
        if self.named:
            labels = tuple(self.display(v) for v in self.values)
            return ia.Param(np.arange(len(self.values), dtype=float), self.label, names=labels,
                            initial=float(list(self.values).index(self.default)))
        return ia.Param(self.values if self.values is not None else [float(self.default)], self.label,
                        self.unit, scale=self.scale, fmt=self.fmt, initial=float(self.default))

    def from_static(self, v: float):
        """A static slider value back as the data function takes it."""
        if self.named:
            return list(self.values)[int(v)]
        return int(round(v)) if self.integer else v

    # -- live widget -------------------------------------------------------------------
    def widget_for(self):
        """The ipywidgets control, in display units."""
        import ipywidgets as w

        kw = dict(self.kw)
        if self.widget == "text":
            return w.Text(value=str(self.default), description=self.description, **kw)
        if self.options is not None:
            opts = list(self.options) if not self.names else [(self.display(o), o) for o in self.options]
            cls = w.ToggleButtons if self.widget == "toggle" else w.Dropdown
            return cls(options=opts, value=self.default, description=self.description, **kw)
        if self.span is None:
            opts = [(self.display(v), v) for v in self.values]
            return w.SelectionSlider(options=opts, value=self.default, description=self.description, **kw)
        lo, hi = (_shown(v * self.scale) for v in self.span)
        value = _shown(self.default * self.scale)
        if self.widget == "int":
            return w.BoundedIntText(value=int(value), min=int(lo), max=int(hi), description=self.description, **kw)
        if self.log:
            return w.FloatLogSlider(value=value, base=10, min=_shown(math.log10(lo)), max=_shown(math.log10(hi)),
                                    description=self.description, **kw)
        if self.integer:
            return w.IntSlider(value=int(value), min=int(lo), max=int(hi), description=self.description, **kw)
        kw.setdefault("step", (hi - lo) / 400)
        return w.FloatSlider(value=value, min=lo, max=hi, description=self.description, **kw)

    def from_widget(self, value):
        """A widget's value back in SI units."""
        if self.named:
            return value
        if self.integer:
            return int(round(value / self.scale))
        return value / self.scale


@dataclass(frozen=True)
class PanelSpec:
    """A figure declared once: its controls, its data and how to draw it.

    ``data(x, **values)`` (``kind="heatmap"``: ``data(x, y, **values)``) gives the figure
    for the controls' values; ``x`` (and ``y``) are the static twin's axes, ``live_x`` a
    finer x for the live panel.  ``readout(**values)`` is a line of text under the figure
    in both views, ``live_readout`` replaces it in the live panel.  ``title`` and ``fig_id``
    may be functions of the controls the static twin holds.  Axes, ``styles`` (Plotly trace
    properties), ``layout``, ``digits`` and ``categories`` are those of
    :func:`netmodels.figures.interactive.slider_figure` / ``slider_heatmap``.  The live
    panel puts ``rows`` of control names in rows (a row of one: the control alone), or
    ``columns`` side by side; ``view(spec)`` makes its drawing (default: matplotlib curves,
    with a vertical line at the x of control ``mark``, e.g. a message size the static twin
    holds).
    """

    title: str | Callable[..., str]
    controls: tuple[Control, ...]
    data: Callable
    x: Sequence[float]
    kind: str = "lines"
    y: Sequence[float] | None = None
    live_x: Sequence[float] | None = None
    xlabel: str = ""
    ylabel: str = ""
    zlabel: str = ""
    x_scale: float = 1.0
    y_scale: float = 1.0
    log_x: bool = False
    log_y: bool = False
    readout: Callable[..., str] | None = None
    live_readout: Callable[..., str] | None = None
    styles: Mapping | None = None
    layout: Mapping | None = None
    digits: int = 4
    categories: Sequence[str] | None = None
    fig_id: str | Callable[..., str] | None = None
    rows: tuple[tuple[str, ...], ...] | None = None
    columns: tuple[tuple[str, ...], ...] | None = None
    figsize: tuple[float, float] = (7.5, 4.5)
    view: Callable | None = None
    mark: str | None = None

    def __post_init__(self):
        if self.kind not in ("lines", "heatmap"):
            raise ValueError(f"kind must be 'lines' or 'heatmap', got {self.kind!r}")
        names = [c.name for c in self.controls]
        if len(set(names)) != len(names):
            raise ValueError(f"control names must be unique, got {names}")
        for group in (self.rows or ()) + (self.columns or ()) + (((self.mark,),) if self.mark else ()):
            for n in group:
                if n not in names:
                    raise ValueError(f"rows/columns/mark name an unknown control {n!r}; controls are {names}")

    def control(self, name: str) -> Control:
        for c in self.controls:
            if c.name == name:
                return c
        raise ValueError(f"no control {name!r}; controls are {[c.name for c in self.controls]}")

    def defaults(self) -> dict:
        """Every control's default value."""
        return {c.name: c.default for c in self.controls}

    def held(self) -> dict:
        """The values the static twin holds (controls without static ``values``)."""
        return {c.name: c.default for c in self.controls if c.values is None}

    def text(self, what, values: Mapping) -> str | None:
        """``what`` (a string or a function of some controls) for these values."""
        if what is None or isinstance(what, str):
            return what
        import inspect

        params = inspect.signature(what).parameters
        return what(**{k: v for k, v in values.items() if k in params})

    def figure_data(self, values: Mapping, x=None):
        """``data`` at ``values`` (defaults for the controls not given)."""
        v = {**self.defaults(), **values}
        xs = np.asarray(self.x if x is None else x, dtype=float)
        if self.kind == "heatmap":
            return self.data(xs, np.asarray(self.y, dtype=float), **v)
        return self.data(xs, **v)

    def live(self):
        """The live ipywidgets panel (:func:`live_panel`)."""
        return live_panel(self)

    def static(self) -> ia.InteractiveFigure:
        """The static twin for the HTML book (:func:`static_figure`)."""
        return static_figure(self)


# -- the static twin -----------------------------------------------------------------------
def static_figure(spec: PanelSpec) -> ia.InteractiveFigure:
    """The precomputed figure of ``spec``: a slider per control with static ``values``."""
    held = spec.held()
    moving = [c for c in spec.controls if c.values is not None]

    def values_of(vals):
        return {**held, **{c.name: c.from_static(vals[c.name]) for c in moving}}

    def f(*axes, **vals):
        return spec.data(*axes, **values_of(vals))

    readout = None
    if spec.readout is not None:
        def readout(**vals):
            return spec.readout(**values_of(vals))

    common = dict(params={c.name: c.param() for c in moving}, title=spec.text(spec.title, held) or "",
                  xlabel=spec.xlabel, ylabel=spec.ylabel, x_scale=spec.x_scale, y_scale=spec.y_scale,
                  log_x=spec.log_x, log_y=spec.log_y, readout=readout, layout=spec.layout,
                  digits=spec.digits, fig_id=spec.text(spec.fig_id, held))
    if spec.kind == "heatmap":
        return ia.slider_heatmap(f, spec.x, spec.y, zlabel=spec.zlabel, categories=spec.categories, **common)
    return ia.slider_figure(f, spec.x, styles=spec.styles, **common)


# -- the live panel ------------------------------------------------------------------------
_DASH = {"dash": "--", "dot": ":", "dashdot": "-.", "longdash": "--", "solid": "-"}


def _mpl_style(style: Mapping, is_pair: bool, i: int) -> tuple[str, dict]:
    """matplotlib format and keywords for a Plotly trace style (the subset the book uses)."""
    mode = style.get("mode", "markers" if is_pair else "lines")
    line, marker = style.get("line", {}), style.get("marker", {})
    color = line.get("color") or marker.get("color") or f"C{i % 10}"
    kw = {"color": color}
    fmt = ""
    if "lines" in mode:
        fmt += _DASH.get(line.get("dash", "solid"), "-")
        kw["lw"] = line.get("width", 1.5)
    if "markers" in mode:
        fmt += "o"
        kw["ms"] = marker.get("size", 6) * 0.6
    return fmt, kw


def _limits(axis: Mapping | None, log: bool):
    rng = (axis or {}).get("range")
    if not rng:
        return None
    return tuple(10.0 ** r for r in rng) if log else tuple(rng)


def draw(spec: PanelSpec, ax, values: Mapping | None = None) -> None:
    """Draw ``spec`` at ``values`` (defaults for the controls not given) on a matplotlib
    ``Axes``: its curves styled as in the book (``kind="heatmap"``: its map), its axes and title."""
    values = {**spec.defaults(), **(values or {})}
    ax.clear()
    x = np.asarray(spec.live_x if spec.live_x is not None else spec.x, dtype=float)
    if spec.kind == "heatmap":
        from matplotlib.colors import ListedColormap

        y = np.asarray(spec.y, dtype=float)
        kw = {}
        if spec.categories:
            n = len(spec.categories)
            kw = dict(cmap=ListedColormap([f"C{k}" for k in range(n)]), vmin=-0.5, vmax=n - 0.5)
        ax.pcolormesh(x * spec.x_scale, y * spec.y_scale, spec.figure_data(values, x), shading="nearest", **kw)
    else:
        styles = spec.styles or {}
        for i, (name, val) in enumerate(spec.figure_data(values, x).items()):
            style = styles.get(name, {})
            xs, ys = (val if isinstance(val, tuple) else (x, val))
            fmt, kw = _mpl_style(style, isinstance(val, tuple), i)
            label = name if style.get("showlegend", True) else "_nolegend_"
            ax.plot(np.asarray(xs, float) * spec.x_scale, np.asarray(ys, float) * spec.y_scale, fmt,
                    label=label, **kw)
        if spec.mark:
            ax.axvline(values[spec.mark] * spec.x_scale, color="0.6", lw=1)
        ax.legend(fontsize=7, loc="best")
        layout = spec.layout or {}
        for axis, log, setter in (("xaxis", spec.log_x, ax.set_xlim), ("yaxis", spec.log_y, ax.set_ylim)):
            lim = _limits(layout.get(axis), log)
            if lim:
                setter(*lim)
    ax.set(xscale="log" if spec.log_x else "linear", yscale="log" if spec.log_y else "linear",
           xlabel=spec.xlabel, ylabel=spec.ylabel)
    log_ticks(ax)
    ax.set_title(spec.text(spec.title, values) or "", fontsize=9)


class CurvesView:
    """The generic live drawing: :func:`draw` on one matplotlib figure, as PNG."""

    def __init__(self, spec: PanelSpec):
        from matplotlib.figure import Figure

        self.spec = spec
        self.fig = Figure(figsize=spec.figsize)
        self.ax = self.fig.add_subplot()

    def show(self, values: Mapping) -> bytes:
        draw(self.spec, self.ax, values)
        self.fig.tight_layout()
        return png(self.fig)


def live_panel(spec: PanelSpec):
    """An ipywidgets panel of ``spec``: its controls, the figure (an ``ipywidgets.Image``
    re-rendered on every change, so it behaves the same in JupyterLab and under nbval)
    and a status line (the readout, or the error of an invalid entry).

    The panel is a ``VBox``: the controls (``spec.rows``: one row each, an ``HBox`` unless
    alone; ``spec.columns``: one ``HBox`` of ``VBox`` columns), the image, the status (with,
    under it, the key: one line per control that has a ``help``, saying what it is)."""
    import ipywidgets as w

    live = [c for c in spec.controls if c.live]
    widgets = {c.name: c.widget_for() for c in live}
    if spec.columns:
        boxes = [w.HBox([w.VBox([widgets[n] for n in col]) for col in spec.columns])]
    else:
        rows = spec.rows or (tuple(widgets),)
        boxes = [w.HBox([widgets[n] for n in row]) if len(row) > 1 else widgets[row[0]] for row in rows]
    image = w.Image(format="png")
    status = w.HTML()
    key = key_html(live)
    view = (spec.view or CurvesView)(spec)
    fixed = {c.name: c.default for c in spec.controls if not c.live}
    readout = spec.live_readout or spec.readout

    def redraw(_=None):
        values = {**fixed, **{c.name: c.from_widget(widgets[c.name].value) for c in live}}
        try:
            out = view.show(values)
            img, text = out if isinstance(out, tuple) else (out, None)
            image.value = img
            if text is None and readout is not None:
                text = readout(**values)
            status.value = (text or "") + key
        except ValueError as err:
            status.value = f"<b>{err}</b>" + key

    for widget in widgets.values():
        widget.observe(redraw, names="value")
    redraw()
    return w.VBox([*boxes, image, status])


def key_html(controls) -> str:
    """The live panel's key: one small line per control with a ``help`` (HTML)."""
    from html import escape

    lines = [f"<b>{escape(c.description)}</b>: {escape(c.help)}" for c in controls if c.help]
    return f'<div style="font-size: 85%; line-height: 1.3">{"<br>".join(lines)}</div>' if lines else ""
