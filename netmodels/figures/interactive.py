"""Interactive figures that work in the static HTML book, where there is no kernel.

A live ipywidgets panel recomputes the model on every move of a slider; the built book
has no Python to do that.  This module precomputes the model on a grid of slider values
in the notebook and writes the whole family of curves, compactly, into the cell's HTML
output.  In the book, a small script served with the site (``book/_ext/static/
nm-interactive.js``) turns it into a Plotly figure with one HTML slider per parameter:
moving a slider only picks another precomputed curve, so it is instant and needs no
kernel and no network.

The chapters do not call this module directly: each figure is declared once as a
:class:`netmodels.figures.panel.PanelSpec`, from which both its live ipywidgets panel and
this static twin are made.  Used alone, a figure takes a few lines::

    from netmodels.figures import interactive as ia
    from netmodels.models.machines import US

    ia.slider_figure(
        lambda n, alpha, bw: {"T(n) = α + βn": alpha + n / bw},
        x=np.logspace(0, 8, 60),                                     # message sizes (B)
        params={"alpha": ia.Param(ia.grid(1e-7, 1e-2, 11), "α", "µs", scale=1e6),
                "bw": ia.Param(ia.grid(1e5, 1e10, 11), "1/β", "MB/s", scale=1e-6)},
        xlabel="message size n (bytes)", ylabel="time (µs)", y_scale=1 / US,
        log_x=True, log_y=True, title="α-β model")

Rules of the game (the output is a reference result checked by nbval):

- ``f(x, **values)`` is called once per combination of slider values (the Cartesian
  product of the ``Param`` grids, at most ``MAX_FRAMES``).  It returns a y array like
  ``x`` (one curve), or a dict ``{trace name: y}`` whose values are y arrays like ``x``
  (drawn as lines) or ``(xs, ys)`` pairs of their own (drawn as markers: a point that
  moves, a vertical line...).  Every call must return the same trace names.
- Values are rounded to ``digits`` significant digits and identical arrays are stored
  once, so a curve that depends on two of three sliders costs two sliders' worth of
  data.  A figure is refused above ``MAX_NUMBERS`` stored numbers: use coarser grids.
- The element id is derived from the content (or given as ``fig_id``), so re-executing
  the notebook gives the same bytes.
- Axes are fixed (x: the range of ``x``; y: the range of *all* frames), so a move of a
  slider moves the curve instead of silently rescaling the axes; ``layout`` overrides.
  Tick labels are plain numbers (1,000, not 1k), and a log axis labels its powers of ten
  only, not the 2 and 5 between them (:func:`netmodels.figures.plotly_spec.ticks`).
- Code stays in SI units; ``x_scale``/``y_scale`` and ``Param.scale`` convert for display.

:func:`slider_heatmap` does the same for a 2-D map (a regime map: which algorithm wins
where), with optional category names for integer-valued maps.

In JupyterLab (or any page without the book's script) the output shows a one-line
note instead: readers there use the chapter's live ipywidgets panel.

Keep each figure small (the α-β twin, 3 sliders and 3240 combinations, is 90 kB of
notebook output): a few hundred numbers per curve at most, half-decade grids, 4-5
digits.  Labels are plain Unicode (α, β, n½): no ``$...$`` (Plotly would call MathJax
itself) and no geographic traces (they fetch maps from the internet).  The browser test
(``tests/test_browser.py``) drags a slider of the first figure of chapter 1 and checks
that every figure of every page is drawn.
"""

from __future__ import annotations

import hashlib
import html
import itertools
import json
import math
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .._check import positive, positive_int
from . import plotly_spec
from .plotly_spec import nice

#: Format version of the JSON read by ``nm-interactive.js``.
SPEC_VERSION = 1
#: At most this many slider combinations per figure.
MAX_FRAMES = 5000
#: At most this many numbers stored in one figure (after de-duplication).
MAX_NUMBERS = 60_000

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def grid(start: float, stop: float, num: int, *, log: bool = True) -> np.ndarray:
    """``num`` slider values from ``start`` to ``stop``, geometric (``log=True``) or linear."""
    num = positive_int("num", num)
    if log:
        start, stop = positive("start", start), positive("stop", stop)
        return np.geomspace(start, stop, num)
    for name, v in (("start", start), ("stop", stop)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
            raise ValueError(f"{name} must be a finite real number, got {v!r}")
    return np.linspace(float(start), float(stop), num)


def with_values(values, extra, rtol: float = 1e-6) -> np.ndarray:
    """Sorted ``values`` plus ``extra`` (e.g. a paper's parameters, so that a slider can
    stop exactly on them); an ``extra`` value replaces a grid value within ``rtol``."""
    out = [float(v) for v in extra]
    for v in np.asarray(values, dtype=float):
        if not any(abs(v - e) <= rtol * max(abs(v), abs(e)) for e in out):
            out.append(float(v))
    return np.array(sorted(out))


@dataclass(frozen=True)
class Param:
    """One slider: the values it steps through (SI units) and how to display them.

    ``label`` is shown before the slider (default: the parameter's name), a value is
    displayed as ``format(value * scale, fmt) + " " + unit`` (``fmt=""``: three
    significant digits, thousands separators, no exponent between 10**-3 and 10**9);
    ``initial`` is the value the slider starts at (the nearest grid value; default: the
    middle of the grid).  ``names`` (one per value) label named choices instead: the
    values are then their positions 0, 1, ...
    """

    values: Sequence[float]
    label: str = ""
    unit: str = ""
    scale: float = 1.0
    fmt: str = ""
    initial: float | None = None
    names: Sequence[str] = ()
    _array: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        arr = np.asarray(self.values, dtype=float)
        if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)):
            raise ValueError(f"values must be a non-empty 1-D sequence of finite numbers, got {self.values!r}")
        positive("scale", self.scale)
        try:
            format(1.0, self.fmt or ".3g")
        except ValueError:
            raise ValueError(f"fmt must be a float format spec such as '.3g', got {self.fmt!r}") from None
        if self.initial is not None and (isinstance(self.initial, bool)
                                         or not isinstance(self.initial, numbers.Real)
                                         or not math.isfinite(self.initial)):
            raise ValueError(f"initial must be a finite number or None, got {self.initial!r}")
        if self.names and (len(self.names) != arr.size or not all(isinstance(n, str) for n in self.names)):
            raise ValueError(f"names must be one str per value ({arr.size}), got {self.names!r}")
        object.__setattr__(self, "_array", arr)

    @property
    def array(self) -> np.ndarray:
        return self._array

    def initial_index(self) -> int:
        if self.initial is None:
            return (len(self._array) - 1) // 2
        return int(np.argmin(np.abs(self._array - self.initial)))

    def display(self, value: float) -> str:
        if self.names:
            return self.names[int(np.argmin(np.abs(self._array - value)))]
        v = value * self.scale
        text = format(v, self.fmt) if self.fmt else nice(v)
        return f"{text} {self.unit}".strip()


def _as_param(name: str, p) -> Param:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"params keys must be Python identifiers (they are passed to f as keywords), got {name!r}")
    if isinstance(p, Param):
        return p if p.label else Param(p.values, name, p.unit, p.scale, p.fmt, p.initial, p.names)
    return Param(p, label=name)


def _round(values, digits: int, factor: float) -> list:
    """A JSON-ready list: ``values * factor`` to ``digits`` significant digits, NaN/inf as null.

    Values are first rounded to 12 significant digits, so that a value that is a tie at
    ``digits`` (150.45) rounds the same way whatever its last bits: the stored spec must not
    change with the machine's floating-point rounding (the notebooks' outputs are compared)."""
    out = []
    for v in np.asarray(values, dtype=float).ravel() * factor:
        out.append(float(f"{float(f'{v:.12g}'):.{digits}g}") if math.isfinite(v) else None)
    return out


class _Pool:
    """Arrays stored once each; ``add`` returns the index of an equal array."""

    def __init__(self):
        self.arrays: list[list] = []
        self._index: dict[str, int] = {}
        self.numbers = 0

    def add(self, values: list) -> int:
        key = json.dumps(values)
        if key not in self._index:
            self._index[key] = len(self.arrays)
            self.arrays.append(values)
            self.numbers += sum(len(v) if isinstance(v, list) else 1 for v in values)
            if self.numbers > MAX_NUMBERS:
                raise ValueError(f"the figure would store more than MAX_NUMBERS = {MAX_NUMBERS} numbers: "
                                 "use fewer slider values or fewer x points")
        return self._index[key]


class InteractiveFigure:
    """A precomputed interactive figure; displays as HTML in a notebook.

    ``spec`` is the JSON-ready description read by the book's script; ``html`` is the
    notebook output.  ``frame(**values)`` returns the stored traces for one combination
    of slider values (for tests and for checking a figure against its model).
    """

    def __init__(self, spec: dict, fig_id: str, title: str, fallback: str):
        self.spec = spec
        self.fig_id = fig_id
        self.title = title
        self.fallback = fallback

    @property
    def n_frames(self) -> int:
        """Number of slider combinations."""
        return math.prod(len(p["labels"]) for p in self.spec["params"])

    def _positions(self, indices: Mapping[str, int]) -> list[int]:
        params = self.spec["params"]
        if set(indices) != {p["name"] for p in params}:
            raise ValueError(f"indices must name every parameter {[p['name'] for p in params]}, got {sorted(indices)}")
        pos = []
        for p in params:
            i = indices[p["name"]]
            if isinstance(i, bool) or not isinstance(i, numbers.Integral) or not 0 <= i < len(p["labels"]):
                raise ValueError(f"{p['name']} index must be an integer in [0, {len(p['labels']) - 1}], got {i!r}")
            pos.append(int(i))
        return pos

    def _lookup(self, table: dict, pos: list[int]):
        k = 0
        for a in table["deps"]:
            k = k * len(self.spec["params"][a]["labels"]) + pos[a]
        return table["idx"][k]

    def frame(self, **indices: int) -> dict:
        """The traces at the given slider positions (``name=index``), in display units:
        ``{name: (x, y)}`` for curves, ``{name: z rows}`` for a map."""
        pos = self._positions(indices)
        pool, out = self.spec["pool"], {}
        for trace, table in zip(self.spec["traces"], self.spec["tables"]):
            xi, yi = self._lookup(table, pos)
            if self.spec["kind"] == "heatmap":
                out[trace["name"]] = pool[yi]
            else:
                out[trace["name"]] = (self.spec["x"] if xi < 0 else pool[xi], pool[yi])
        return out

    def readout(self, **indices: int) -> str | None:
        """The readout text at the given slider positions (None without a readout)."""
        read = self.spec["readout"]
        return None if read is None else read["texts"][self._lookup(read, self._positions(indices))]

    @property
    def html(self) -> str:
        payload = json.dumps(self.spec, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
        payload = payload.replace("</", "<\\/")          # cannot close the script element
        return (f'<div class="nm-interactive" id="{self.fig_id}">'
                f'<p class="nm-interactive-fallback"><em>{html.escape(self.fallback)}</em></p>'
                f'<script type="application/json" class="nm-interactive-spec">{payload}</script></div>')

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        names = ", ".join(p["name"] for p in self.spec["params"])
        return f"<InteractiveFigure {self.fig_id}: {self.title!r}, sliders {names}, {self.n_frames} frames>"


def _factor(keys: np.ndarray, dims: list[int]) -> dict:
    """Store per-frame entries only along the sliders they depend on.

    ``keys`` has shape ``dims + (k,)``; returns ``{"deps": [slider axes], "idx": rows}``
    where ``rows`` is indexed row-major by the positions of the ``deps`` sliders.
    """
    deps = [a for a in range(len(dims))
            if not np.array_equal(keys, np.broadcast_to(keys.take([0], axis=a), keys.shape))]
    sub = keys[tuple(slice(None) if a in deps else 0 for a in range(len(dims)))]
    rows = sub.reshape(-1, keys.shape[-1]).tolist()
    return {"deps": deps, "idx": [r if len(r) > 1 else r[0] for r in rows]}


def _fallback(title: str, params: Mapping[str, Param]) -> str:
    names = ", ".join(p.label for p in params.values())
    what = f"“{title}”" if title else "This figure"
    return (f"{what} is interactive (sliders {names}) in the HTML book. "
            "In JupyterLab, use the live panel of this notebook instead.")


def _check_options(params, digits, x_scale, y_scale, readout, styles, layout, fig_id):
    """The checked options of :func:`_build`: params as ``Param``, digits, scales, styles, layout."""
    if not isinstance(params, Mapping) or not params:
        raise ValueError("params must be a non-empty mapping {name: Param or sequence of values}")
    params = {name: _as_param(name, p) for name, p in params.items()}
    if len(params) > 4:
        raise ValueError(f"params must have at most 4 sliders, got {len(params)}")
    n_frames = math.prod(len(p.array) for p in params.values())
    if n_frames > MAX_FRAMES:
        raise ValueError(f"the slider grids give {n_frames} combinations; at most MAX_FRAMES = {MAX_FRAMES}")
    digits = positive_int("digits", digits, minimum=2)
    if digits > 12:
        raise ValueError(f"digits must be an integer in [2, 12], got {digits}")
    x_scale, y_scale = positive("x_scale", x_scale), positive("y_scale", y_scale)
    if readout is not None and not callable(readout):
        raise ValueError("readout must be None or a callable readout(**values) -> str")
    styles = dict(styles or {})
    layout = plotly_spec.check_layout(layout)
    if fig_id is not None and (not isinstance(fig_id, str) or not re.match(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$", fig_id)):
        raise ValueError(f"fig_id must be an HTML id (a letter, then letters, digits, - or _), got {fig_id!r}")
    return params, digits, x_scale, y_scale, styles, layout


def _axis_values(name: str, values) -> np.ndarray:
    """``values`` as a 1-D float array of at least 2 finite numbers, or ValueError naming ``name``."""
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1 or arr.size < 2 or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be a 1-D array of at least 2 finite numbers")
    return arr


@dataclass
class _Frames:
    """What the calls of ``f`` gave, stored once: the pool of arrays, one row of ``[x index,
    y index]`` per trace per frame (x index -1: the figure's x), readout texts, trace names,
    every x and y value shown (for the axes' ranges)."""

    xs: np.ndarray
    ys: np.ndarray | None
    digits: int
    x_scale: float
    y_scale: float
    pool: _Pool = field(default_factory=_Pool)
    frames: list = field(default_factory=list)
    texts: list = field(default_factory=list)
    trace_names: list | None = None
    all_x: list = field(default_factory=list)
    all_y: list = field(default_factory=list)
    _rounded: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self):
        self.all_x = _round(self.xs, self.digits, self.x_scale)

    def round(self, values: np.ndarray, factor: float) -> list:
        """:func:`_round` of a 1-D float64 array, remembered: most frames repeat most arrays (a curve
        that does not depend on one slider), and rounding is most of a figure's build time."""
        key = (values.tobytes(), factor)
        if key not in self._rounded:
            self._rounded[key] = _round(values, self.digits, factor)
        return self._rounded[key]

    def names(self, out: Mapping, values: dict) -> None:
        """Check that a frame has the traces of the first frame."""
        if self.trace_names is None:
            self.trace_names = list(out)
        elif list(out) != self.trace_names:
            raise ValueError(f"f must return the same traces for every value; got {list(out)} "
                             f"instead of {self.trace_names} at {values}")

    def curve(self, name: str, val) -> list[int]:
        """``[x index, y index]`` of one trace of a curve figure: a y array like x, or (xs, ys)."""
        if isinstance(val, tuple):
            if len(val) != 2:
                raise ValueError(f"trace {name!r} must be a y array or an (xs, ys) pair")
            px, py = (np.atleast_1d(np.asarray(v, dtype=float)) for v in val)
            if px.shape != py.shape or px.ndim != 1:
                raise ValueError(f"trace {name!r}: xs and ys must be 1-D of equal length")
            rx = self.round(px, self.x_scale)
            self.all_x.extend(rx)
            xi = self.pool.add(rx)
        else:
            py = np.asarray(val, dtype=float)
            if py.shape != self.xs.shape:
                raise ValueError(f"trace {name!r} must have the shape of x {self.xs.shape}, got {py.shape}")
            xi = -1
        ry = self.round(py, self.y_scale)
        self.all_y.extend(ry)
        return [xi, self.pool.add(ry)]

    def heatmap(self, z) -> list[int]:
        """``[-1, z index]`` of a heatmap's frame."""
        return [-1, self.pool.add([self.round(row, 1.0) for row in z])]


def _call(kind, f, fr: _Frames, values: dict, ylabel: str, zlabel: str) -> Mapping:
    """``f`` at one combination of slider values, as ``{trace name: value}``."""
    if kind == "heatmap":
        z = np.asarray(f(fr.xs, fr.ys, **values), dtype=float)
        if z.shape != (fr.ys.size, fr.xs.size):
            raise ValueError(f"f must return an array of shape (len(y), len(x)) = {(fr.ys.size, fr.xs.size)}, "
                             f"got {z.shape} at {values}")
        return {zlabel or "z": z}
    out = f(fr.xs, **values)
    return out if isinstance(out, Mapping) else {ylabel or "y": out}


def _run_frames(kind, f, fr: _Frames, params: dict, readout, ylabel: str, zlabel: str) -> None:
    """Call ``f`` (and ``readout``) once per combination of slider values, filling ``fr``."""
    names = list(params)
    for combo in itertools.product(*(p.array for p in params.values())):
        values = {n: float(v) for n, v in zip(names, combo)}
        out = _call(kind, f, fr, values, ylabel, zlabel)
        fr.names(out, values)
        fr.frames.append([fr.heatmap(val) if kind == "heatmap" else fr.curve(name, val)
                          for name, val in out.items()])
        if readout is not None:
            text = readout(**values)
            if not isinstance(text, str):
                raise ValueError(f"readout must return a str, got {type(text).__name__}")
            fr.texts.append(text)


def _tables(fr: _Frames, dims: list[int], readout) -> tuple[list, dict | None]:
    """The per-trace lookup tables and the readout's table (None without a readout)."""
    keys = np.asarray(fr.frames, dtype=np.int64).reshape(*dims, len(fr.trace_names), 2)
    tables = [_factor(keys[..., t, :], dims) for t in range(len(fr.trace_names))]
    if readout is None:
        return tables, None
    unique = sorted(set(fr.texts))
    code = {t: i for i, t in enumerate(unique)}
    codes = np.asarray([code[t] for t in fr.texts], dtype=np.int64).reshape(*dims, 1)
    return tables, {"texts": unique, **_factor(codes, dims)}


def _build(kind, f, x, y, params, *, title, xlabel, ylabel, zlabel, x_scale, y_scale, log_x, log_y,
           readout, styles, layout, digits, fig_id, categories):
    """The figure of :func:`slider_figure` (``kind="lines"``) or :func:`slider_heatmap`
    (``kind="heatmap"``): check the options, call ``f`` on every combination, store each
    array once, describe traces and layout."""
    if not callable(f):
        raise ValueError("f must be a callable f(x, **values)")
    params, digits, x_scale, y_scale, styles, layout = _check_options(
        params, digits, x_scale, y_scale, readout, styles, layout, fig_id)
    xs = _axis_values("x", x)
    ys = _axis_values("y", y) if kind == "heatmap" else None
    fr = _Frames(xs, ys, digits, x_scale, y_scale)
    _run_frames(kind, f, fr, params, readout, ylabel, zlabel)
    tables, read = _tables(fr, [len(p.array) for p in params.values()], readout)
    spec = {
        "version": SPEC_VERSION,
        "kind": kind,
        "params": [{"name": n, "label": p.label, "labels": [p.display(v) for v in p.array],
                    "initial": p.initial_index()} for n, p in params.items()],
        "x": fr.all_x[:xs.size] if kind != "heatmap" else [],
        "traces": plotly_spec.traces(kind, fr, styles, categories, zlabel),
        "pool": fr.pool.arrays,
        "tables": tables,
        "readout": read,
        "layout": plotly_spec.layout(kind, fr, title, xlabel, ylabel, log_x, log_y, layout),
    }
    if fig_id is None:
        digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()
        fig_id = "nm-" + digest[:12]
    return InteractiveFigure(spec, fig_id, title, _fallback(title, params))


def slider_figure(f: Callable, x, params: Mapping, *, title: str = "", xlabel: str = "",
                  ylabel: str = "", x_scale: float = 1.0, y_scale: float = 1.0, log_x: bool = False,
                  log_y: bool = False, readout: Callable | None = None, styles: Mapping | None = None,
                  layout: Mapping | None = None, digits: int = 5, fig_id: str | None = None
                  ) -> InteractiveFigure:
    """Curves ``f(x, **values)`` with one slider per entry of ``params``.

    ``x``: the x values (SI units; displayed times ``x_scale``).  ``params``: ``{name:
    Param(...)}`` or ``{name: values}``.  ``f`` returns a y array like ``x``, or ``{trace:
    y array or (xs, ys)}``, y in SI units (displayed times ``y_scale``).  ``readout(
    **values)`` may return a line of text shown under the sliders (e.g. the time of one
    message).  ``styles`` maps trace names to Plotly trace properties (``{"α": {"line":
    {"dash": "dash"}}}``), ``layout`` adds Plotly layout properties.  Values are stored
    with ``digits`` significant digits.  See the module docstring for an example.
    """
    return _build("lines", f, x, None, params, title=title, xlabel=xlabel, ylabel=ylabel, zlabel="",
                  x_scale=x_scale, y_scale=y_scale, log_x=log_x, log_y=log_y, readout=readout,
                  styles=styles, layout=layout, digits=digits, fig_id=fig_id, categories=None)


def slider_heatmap(f: Callable, x, y, params: Mapping, *, title: str = "", xlabel: str = "",
                   ylabel: str = "", zlabel: str = "", categories: Sequence[str] | None = None,
                   x_scale: float = 1.0, y_scale: float = 1.0, log_x: bool = False, log_y: bool = False,
                   readout: Callable | None = None, layout: Mapping | None = None, digits: int = 4,
                   fig_id: str | None = None) -> InteractiveFigure:
    """A map ``z = f(x, y, **values)`` of shape ``(len(y), len(x))`` with sliders.

    With ``categories`` (e.g. ``["Tree", "Snake", "Fence"]``), ``z`` holds integer codes
    0..len(categories)-1 (NaN: no value) and is drawn with one colour per category: a
    regime map.  Otherwise ``z`` is drawn on a continuous colour scale fixed over all
    frames.  Other arguments as in :func:`slider_figure`.
    """
    if categories is not None:
        if isinstance(categories, str) or not isinstance(categories, Sequence) or not categories \
                or not all(isinstance(c, str) for c in categories):
            raise ValueError(f"categories must be a non-empty sequence of str, got {categories!r}")
        categories = list(categories)
    return _build("heatmap", f, x, y, params, title=title, xlabel=xlabel, ylabel=ylabel, zlabel=zlabel,
                  x_scale=x_scale, y_scale=y_scale, log_x=log_x, log_y=log_y, readout=readout,
                  styles=None, layout=layout, digits=digits, fig_id=fig_id, categories=categories)
