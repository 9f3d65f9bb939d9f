"""What every lab's page of the class report (``class_report.py``) shares: a lab's view
(:class:`LabView`: the files it reads, what it takes from one student's usable files with the
kit's own fits, its columns, figures and summary), and the figures' helpers.  Each lab's view is
a module of its own, ``class_report_lab1.py`` to ``class_report_lab5.py``.

Figures are matplotlib's SVG, inlined in the page by ``class_report_page.py``; every point of a
machine carries its label as an SVG ``<title>`` (a tooltip).  Nothing here reads a file: the
report hands over parsed JSON.  Every text a hand-in brings (algorithm names, model names,
student ids) is escaped where it meets HTML (summaries, tooltips; matplotlib escapes its SVG
text) and kept from matplotlib's math (:func:`literal`).
"""

from __future__ import annotations

import html
import io
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from mpi_exercises.labspec import kind_of

US = 1e-6


class Unusable(Exception):
    """A data file that cannot be used: the message says why, in one sentence."""


# ---------------------------------------------------------------- the data files
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
    return list(data["runs"]) if kind_of(name) == "allreduce-runs" else [data]


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


def count_grid(ax, count, fontsize: int) -> None:
    """A matrix of counts drawn as vector cells (no raster image), row 0 at the top, each count
    written in its cell."""
    n_rows, n_cols = count.shape
    ax.pcolormesh(np.arange(n_cols + 1) - 0.5, np.arange(n_rows + 1) - 0.5, count, cmap="Blues", vmin=0,
                  vmax=max(count.max(), 1), edgecolors="white", linewidth=0.5)
    ax.set_xlim(-0.5, n_cols - 0.5)
    ax.set_ylim(n_rows - 0.5, -0.5)
    for (i, j), n in np.ndenumerate(count):
        if n:
            ax.text(j, i, str(n), ha="center", va="center", fontsize=fontsize,
                    color="white" if n > 0.6 * count.max() else "#1f2937")


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


def value(key):
    """A column's value: ``m.values[key]``, None if missing."""
    return lambda m: m.values.get(key)


def with_interval(key, lo, hi, scale, digits=4):
    """The value and its 95 % interval, e.g. ``1.277 [1.272, 1.284]``."""
    def page(m):
        v = fmt(m.values.get(key), scale, digits)
        if m.values.get(lo) is None or m.values.get(hi) is None:
            return v
        return f"{v} [{fmt(m.values[lo], scale, digits)}, {fmt(m.values[hi], scale, digits)}]"
    return page
