"""Figures of the multilevel chapter: standard against multilevel alltoall, live and static.

:func:`multilevel_panel` is the live ipywidgets panel (JupyterLab): nodes ``n``, ranks per
node ``c``, the bytes each rank sends each rank, both α-β pairs and the packing rate; it
prints the message counts of both exchanges (inside and between nodes) and draws their
predicted times against the message size (:func:`netmodels.models.twolevel.alltoall_times`).
:func:`multilevel_figure` is its precomputed twin for the static book
(:mod:`netmodels.figures.interactive`), with sliders ``n``, ``c``, inter-node α and
bandwidth; the intra-node link and packing stay at the values given.  Units: seconds and
bytes inside, µs, MB/s on the axes.
"""

from __future__ import annotations

import numpy as np

from ..algorithms.alltoall import counts_closed
from ..models.alphabeta import AlphaBeta
from ..models.twolevel import TwoLevel, alltoall_times

US, MB = 1e-6, 1e6

#: message sizes of the curves (bytes per pair): 1 B .. 10 MB, 8 per decade
SIZES = np.logspace(0, 7, 57)


def model(intra_alpha: float, intra_bw: float, inter_alpha: float, inter_bw: float,
          pack_bw: float | None = None) -> TwoLevel:
    """A :class:`TwoLevel` from latencies (s) and bandwidths (B/s); ``pack_bw`` None: free."""
    return TwoLevel(AlphaBeta.from_latency_bandwidth(intra_alpha, intra_bw, "inside a node"),
                    AlphaBeta.from_latency_bandwidth(inter_alpha, inter_bw, "between nodes"),
                    0.0 if pack_bw is None else 1.0 / pack_bw)


def summary(n: int, c: int, nbytes: float, tl: TwoLevel) -> str:
    """Counts and predicted times of both exchanges at one message size, as text."""
    std, ml = counts_closed("direct", (c, n)), counts_closed("multilevel", (c, n))
    ts, tm = (float(t) for t in alltoall_times(n, c, nbytes, tl))
    verdict = (f"multilevel {ts / tm:.2f}x faster" if tm < ts else f"standard {tm / ts:.2f}x faster")
    return (f"{n} nodes x {c} ranks, {nbytes:,.0f} B per pair: "
            f"standard {sum(std.values())} messages ({std[2]} between nodes, {std[1]} inside), "
            f"{ts / US:,.1f} µs; multilevel {sum(ml.values())} ({ml[2]} between, {ml[1]} inside), "
            f"{tm / US:,.1f} µs: {verdict}")


def draw(ax, n: int, c: int, nbytes: float, tl: TwoLevel) -> None:
    """Predicted times of both exchanges against the message size; mark ``nbytes``."""
    ax.clear()
    std, ml = alltoall_times(n, c, SIZES, tl)
    ax.loglog(SIZES, std / US, label="standard (direct)")
    ax.loglog(SIZES, ml / US, label="multilevel")
    ax.axvline(nbytes, color="0.6", lw=1)
    ax.set(xlabel="bytes per pair", ylabel="predicted alltoall time (µs)")
    ax.legend(fontsize=8, loc="upper left")


def multilevel_panel(n: int = 4, c: int = 4, nbytes: float = 1266.0, intra_alpha_us: float = 12.5,
                     intra_bw_mbs: float = 15.0, inter_alpha_us: float = 300.0,
                     inter_bw_mbs: float = 2.5, pack_bw_mbs: float = 100.0):
    """Sliders n, c, message size, both α (µs) and bandwidths (MB/s), packing (MB/s)."""
    import ipywidgets as w
    from matplotlib.figure import Figure

    from .widgets import png

    sn = w.IntSlider(value=n, min=1, max=32, description="nodes n")
    sc = w.IntSlider(value=c, min=1, max=32, description="ranks/node c")
    sm = w.FloatLogSlider(value=nbytes, base=10, min=0, max=7, description="bytes/pair")
    ia = w.FloatLogSlider(value=intra_alpha_us, base=10, min=-1, max=3, description="α in (µs)")
    ib = w.FloatLogSlider(value=intra_bw_mbs, base=10, min=-1, max=5, description="bw in (MB/s)")
    ea = w.FloatLogSlider(value=inter_alpha_us, base=10, min=-1, max=4, description="α out (µs)")
    eb = w.FloatLogSlider(value=inter_bw_mbs, base=10, min=-2, max=5, description="bw out (MB/s)")
    pk = w.FloatLogSlider(value=pack_bw_mbs, base=10, min=0, max=5, description="pack (MB/s)")
    text = w.HTML()
    image = w.Image(format="png")
    fig = Figure(figsize=(7.5, 4.2))
    ax = fig.add_subplot()

    def redraw(_=None):
        tl = model(ia.value * US, ib.value * MB, ea.value * US, eb.value * MB, pk.value * MB)
        draw(ax, sn.value, sc.value, sm.value, tl)
        fig.tight_layout()
        image.value = png(fig)
        text.value = summary(sn.value, sc.value, sm.value, tl)

    for s in (sn, sc, sm, ia, ib, ea, eb, pk):
        s.observe(redraw, names="value")
    redraw()
    return w.VBox([w.HBox([sn, sc]), w.HBox([sm, pk]), w.HBox([ia, ib]), w.HBox([ea, eb]), text, image])


def multilevel_figure(tl: TwoLevel, n: int = 4, c: int = 4):
    """The static twin of :func:`multilevel_panel`: curves precomputed on slider grids.

    Sliders: n and c in {2, 4, 8, 16} (plus the start values), inter-node α (1 µs-10 ms,
    two decades apart, plus ``tl.inter``'s) and bandwidth (0.1 MB/s-1 GB/s, two decades
    apart, plus ``tl.inter``'s); ``tl.intra`` and ``tl.pack`` are kept.  Sizes: 4 per decade.
    """
    from . import interactive as ia

    ns = ia.with_values([2, 4, 8, 16], [n])
    cs = ia.with_values([2, 4, 8, 16], [c])
    alphas = ia.with_values(ia.grid(1e-6, 1e-2, 3), [tl.inter.alpha])
    bws = ia.with_values(ia.grid(1e5, 1e9, 3), [tl.inter.bandwidth])

    def with_inter(alpha, bw):
        return TwoLevel(tl.intra, AlphaBeta.from_latency_bandwidth(alpha, bw), tl.pack, tl.shared_channel)

    def curves(x, n, c, alpha, bw):
        std, ml = alltoall_times(int(n), int(c), x, with_inter(alpha, bw))
        return {"standard (direct)": std, "multilevel": ml}

    def readout(n, c, alpha, bw):
        std, ml = counts_closed("direct", (int(c), int(n))), counts_closed("multilevel", (int(c), int(n)))
        return (f"messages: standard {sum(std.values())} ({std[2]} between nodes), "
                f"multilevel {sum(ml.values())} ({ml[2]} between nodes)")

    return ia.slider_figure(
        curves, SIZES[::2],
        params={"n": ia.Param(ns, "nodes n", fmt=".0f", initial=float(n)),
                "c": ia.Param(cs, "ranks per node c", fmt=".0f", initial=float(c)),
                "alpha": ia.Param(alphas, "α between nodes", "µs", scale=1 / US, initial=tl.inter.alpha),
                "bw": ia.Param(bws, "bandwidth between nodes", "MB/s", scale=1 / MB,
                               initial=tl.inter.bandwidth)},
        title="Standard and multilevel alltoall, two-level α-β model", xlabel="bytes per pair",
        ylabel="predicted time (µs)", y_scale=1 / US, log_x=True, log_y=True, readout=readout,
        digits=4, layout={"legend": {"font": {"size": 10}}})
