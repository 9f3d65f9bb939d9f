"""The α-β figure of chapter 1: T(n) = α + βn, its two terms and n½, against n.

:func:`alpha_beta_spec` declares it once (:mod:`netmodels.figures.panel`); its live panel
(JupyterLab, ``.live()``) and its static twin (the HTML book, ``.static()``) are made from it.
"""

from __future__ import annotations

import numpy as np

from ..models.alphabeta import AlphaBeta
from .panel import Control, PanelSpec, png  # noqa: F401  (png: the panels' PNG renderer)

US = 1e-6
MB = 1e6


def dominance(model: AlphaBeta, nbytes: float) -> str:
    """Which term dominates the time of ``nbytes``: the latency share α/T(n) and its verdict."""
    share = model.alpha / model.time(nbytes)
    dominant = "latency (α)" if share > 0.5 else "bandwidth (βn)"
    return f"latency share {100 * share:.0f} % → {dominant} dominates"


def describe(model: AlphaBeta, nbytes: float) -> str:
    """One line: time of ``nbytes``, n½ and which term dominates (µs, bytes)."""
    return (f"T({nbytes:,.0f} B) = {model.time(nbytes) / US:,.1f} µs; "
            f"n½ = {model.half_performance_length:,.0f} B; {dominance(model, nbytes)}")


def alpha_beta_spec(references=()) -> PanelSpec:
    """T(n) = α + βn with controls α, 1/β and a message size n, for both views.

    The line under the figure says which term dominates the time of the message n (live:
    with its time and n½, :func:`describe`; static: :func:`dominance`).
    Live: α 0.1 µs-10 ms, 1/β 0.1 MB/s-100 GB/s, n 1 B-100 MB (logarithmic).  Static: half
    decades over these ranges plus the values of ``references`` (
    :class:`~netmodels.models.alphabeta.AlphaBeta` models, drawn as thin grey curves); the
    controls start at the first reference (or at 100 µs, 1.75 MB/s) and n = 1266 B.
    """
    from . import interactive as ia

    refs = list(references)
    for r in refs:
        if not isinstance(r, AlphaBeta):
            raise ValueError(f"references must be AlphaBeta models, got {type(r).__name__}")
    start = refs[0] if refs else AlphaBeta.from_latency_bandwidth(100 * US, 1.75 * MB)
    names = [r.name or f"reference {i + 1}" for i, r in enumerate(refs)]

    def curves(n, alpha, bandwidth, size):
        model = AlphaBeta.from_latency_bandwidth(alpha, bandwidth)
        out = {name: r.time(n) for name, r in zip(names, refs)}
        out.update({
            "T(n) = α + βn": model.time(n),
            "α": np.full_like(n, alpha),
            "βn": model.beta * n,
            "n½ = α/β": ([model.half_performance_length] * 2, [1e-9, 1e2]),
            "message n": ([size], [model.time(size)]),
        })
        return out

    def status(alpha, bandwidth, size):
        return describe(AlphaBeta.from_latency_bandwidth(alpha, bandwidth), size)

    def verdict(alpha, bandwidth, size):          # the static twin's line: short, few distinct texts
        return dominance(AlphaBeta.from_latency_bandwidth(alpha, bandwidth), size)

    grey = {"line": {"color": "#b5b5b5", "width": 1}, "hoverinfo": "name"}
    styles = {name: grey for name in names}
    styles.update({
        "T(n) = α + βn": {"line": {"color": "#1f77b4", "width": 3}},
        "α": {"line": {"color": "#1f77b4", "width": 1, "dash": "dash"}},
        "βn": {"line": {"color": "#1f77b4", "width": 1, "dash": "dot"}},
        "n½ = α/β": {"mode": "lines", "line": {"color": "#2ca02c", "width": 1.5}},
        "message n": {"mode": "markers+text", "marker": {"color": "#d62728", "size": 11},
                      "texttemplate": "%{y:,.4~g} µs", "textposition": "top left"},
    })
    return PanelSpec(
        title="T(n) = α + βn", data=curves, x=np.logspace(0, 8, 33), live_x=np.logspace(0, 8, 200),
        controls=(
            Control("alpha", "α", start.alpha, unit="µs", scale=1 / US, log=True, span=(1e-7, 1e-2),
                    values=ia.with_values(ia.grid(1e-7, 1e-2, 11), [r.alpha for r in refs]),
                    help="start-up time: the time of a message of 0 bytes"),
            Control("bandwidth", "1/β", start.bandwidth, unit="MB/s", scale=1 / MB, log=True, span=(1e5, 1e11),
                    values=ia.with_values(ia.grid(1e5, 1e11, 13), [r.bandwidth for r in refs]),
                    help="bandwidth of a long message; β, its inverse, is the time per byte"),
            Control("size", "n", 1266.0, unit="B", log=True, span=(1.0, 1e8),
                    values=ia.with_values(ia.grid(1, 1e8, 17), [1266.0]),
                    help="the message size whose time T(n) the red marker gives"),
        ),
        rows=(("alpha", "bandwidth", "size"),), figsize=(7, 4),
        xlabel="message size n (bytes)", ylabel="time (µs)", y_scale=1 / US, log_x=True, log_y=True,
        readout=verdict, live_readout=status, styles=styles, digits=4,
        layout={"yaxis": {"range": [-1, 7]}, "legend": {"font": {"size": 11}}})
