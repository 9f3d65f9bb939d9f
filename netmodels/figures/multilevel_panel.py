"""Figures of the multilevel chapter: standard against multilevel alltoall, live and static.

:func:`multilevel_spec` declares the figure once (:mod:`netmodels.figures.panel`): nodes
``n``, ranks per node ``c``, the bytes each rank sends each rank, both α-β pairs and the
packing rate; it draws the predicted times of both exchanges against the message size
(:func:`netmodels.models.twolevel.alltoall_times`) and gives their message counts (inside
and between nodes).  Its live panel (JupyterLab, ``multilevel_spec().live()``) has every
control; its static twin (the HTML book, ``.static()``) slides ``n``, ``c``,
inter-node α and bandwidth and holds the rest.  Units: seconds and bytes inside, µs, MB/s
on the axes.
"""

from __future__ import annotations

import numpy as np

from ..algorithms.alltoall import counts_closed
from ..models.alphabeta import AlphaBeta
from ..models.twolevel import TwoLevel, alltoall_times, origin2000
from . import panel
from .panel import Control, PanelSpec

US, MB = 1e-6, 1e6

#: message sizes of the curves (bytes per pair): 1 B .. 10 MB, 8 per decade
SIZES = np.logspace(0, 7, 57)


def model(intra_alpha: float, intra_bw: float, inter_alpha: float, inter_bw: float,
          pack_bw: float | None = None, shared_channel: bool = True) -> TwoLevel:
    """A :class:`TwoLevel` from latencies (s) and bandwidths (B/s); ``pack_bw`` None: free."""
    return TwoLevel(AlphaBeta.from_latency_bandwidth(intra_alpha, intra_bw, "inside a node"),
                    AlphaBeta.from_latency_bandwidth(inter_alpha, inter_bw, "between nodes"),
                    0.0 if pack_bw is None else 1.0 / pack_bw, shared_channel)


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
    """Draw :func:`multilevel_spec` for ``tl``, ``n``, ``c`` on ``ax``; mark ``nbytes``."""
    panel.draw(multilevel_spec(tl, n, c, nbytes), ax)


def multilevel_spec(tl: TwoLevel | None = None, n: int = 4, c: int = 4, nbytes: float = 1266.0) -> PanelSpec:
    """Standard against multilevel alltoall on ``tl`` (default: the Origin 2000 pair with
    packing at 100 MB/s), with controls n, c, the bytes per pair, both links and packing.

    Live: n and c 1-32, bytes per pair 1 B-10 MB, α inside 0.1 µs-1 ms and between nodes
    0.1 µs-10 ms, bandwidths 0.1 MB/s-100 GB/s inside and 0.01 MB/s-100 GB/s between nodes,
    packing 1 MB/s-100 GB/s.  Static: n and c in {2, 4, 8, 16} (plus the start values),
    inter-node α (1 µs-10 ms, two decades apart) and bandwidth (0.1 MB/s-1 GB/s, two decades
    apart), plus ``tl.inter``'s; the message size, ``tl.intra`` and ``tl.pack`` are held.
    Sizes on the curves: 8 per decade live, 4 static."""
    from . import interactive as ia

    if tl is None:
        tl = origin2000(pack=1 / (100 * MB))
    if not isinstance(tl, TwoLevel):
        raise ValueError(f"tl must be a TwoLevel, got {type(tl).__name__}")

    def machine(intra_alpha, intra_bw, alpha, bw, pack_bw, **_):
        return model(intra_alpha, intra_bw, alpha, bw, pack_bw, tl.shared_channel)

    def curves(x, n, c, **values):
        std, ml = alltoall_times(int(n), int(c), x, machine(**values))
        return {"standard (direct)": std, "multilevel": ml}

    def readout(n, c, **_):
        std, ml = counts_closed("direct", (int(c), int(n))), counts_closed("multilevel", (int(c), int(n)))
        return (f"messages: standard {sum(std.values())} ({std[2]} between nodes), "
                f"multilevel {sum(ml.values())} ({ml[2]} between nodes)")

    def status(n, c, nbytes, **values):
        return summary(n, c, nbytes, machine(**values))

    micro, mega = dict(unit="µs", scale=1 / US, log=True), dict(unit="MB/s", scale=1 / MB, log=True)
    return PanelSpec(
        title="Standard and multilevel alltoall, two-level α-β model", data=curves,
        x=SIZES[::2], live_x=SIZES,
        controls=(
            Control("n", "nodes n", n, span=(1, 32), integer=True, fmt=".0f", values=ia.with_values([2, 4, 8, 16], [n]),
                    help="number of nodes"),
            Control("c", "ranks per node c", c, span=(1, 32), integer=True, fmt=".0f",
                    values=ia.with_values([2, 4, 8, 16], [c]),
                    help="ranks on each node: the alltoall runs on n × c ranks"),
            Control("nbytes", "bytes per pair", float(nbytes), unit="B", log=True, span=(1, 1e7),
                    help="what each rank sends to each other rank; the readout gives both times there"),
            Control("pack_bw", "packing", 1 / tl.pack if tl.pack else 1e11, span=(1e6, 1e11), **mega,
                    help="rate at which the multilevel algorithm copies blocks into combined messages"),
            Control("intra_alpha", "α inside a node", tl.intra.alpha, span=(1e-7, 1e-3), **micro,
                    help="start-up time of a message between two ranks of one node"),
            Control("intra_bw", "bandwidth inside a node", tl.intra.bandwidth, span=(1e5, 1e11), **mega,
                    help="bandwidth of a message between two ranks of one node"),
            Control("alpha", "α between nodes", tl.inter.alpha, span=(1e-7, 1e-2),
                    values=ia.with_values(ia.grid(1e-6, 1e-2, 3), [tl.inter.alpha]), **micro,
                    help="start-up time of a message between two nodes"),
            Control("bw", "bandwidth between nodes", tl.inter.bandwidth, span=(1e4, 1e11),
                    values=ia.with_values(ia.grid(1e5, 1e9, 3), [tl.inter.bandwidth]), **mega,
                    help="bandwidth of a message between two nodes"),
        ),
        rows=(("n", "c"), ("nbytes", "pack_bw"), ("intra_alpha", "intra_bw"), ("alpha", "bw")),
        figsize=(7.5, 4.2), xlabel="bytes per pair", ylabel="predicted time (µs)", y_scale=1 / US,
        log_x=True, log_y=True, readout=readout, live_readout=status, digits=4, mark="nbytes",
        layout={"legend": {"font": {"size": 10}}})
