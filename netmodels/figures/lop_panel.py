"""Figures of the LoP chapter: the λ of t_rtt against the curves they make, live and static.

:func:`lop_panel` is the live ipywidgets panel (JupyterLab); :func:`lop_figure` its
precomputed twin for the static book (:mod:`netmodels.figures.interactive`).  Both draw
:func:`lop_curves`: ``t_rtt(p)``, ``L(p)`` and ``t_1:n`` over p = 1 .. 63 peers (the paper's
64-node cluster) for given λ1..λ6, with the paper's RDMA o_s, and the n of the fastest
n-way dissemination barrier on 64 ranks.  Units: seconds inside, µs on the axes.
"""

from __future__ import annotations

import numpy as np

from ..models import lop
from ..models.machines import LOP_CLUSTER_NODES, LOP_RDMAW_OS, LOP_RDMAW_RTT_MIN, LOP_SENDRECV_RTT_MIN

US = 1e-6
#: peer counts drawn: 1 .. 63
PEERS = np.arange(1, LOP_CLUSTER_NODES, dtype=float)
#: the reference curves the panels start from
REFERENCES = {"Send/Receive (min)": LOP_SENDRECV_RTT_MIN, "RDMA Write (min)": LOP_RDMAW_RTT_MIN}


def lop_curves(lambdas, overhead=LOP_RDMAW_OS, peers=PEERS) -> dict:
    """{"t_rtt(p)": s, "L(p)": s, "t_1:n": s} over ``peers`` for ``lambdas`` (λ1..λ6, SI)."""
    rtt = lop.RTTCurve(tuple(lambdas))
    return {"t_rtt(p)": np.asarray(rtt(peers)), "L(p)": np.asarray(lop.latency(peers, rtt, overhead)),
            "t_1:n": np.asarray(lop.t_one_to_n(peers, rtt, overhead))}


def best_barrier(lambdas, overhead=LOP_RDMAW_OS, P: int = LOP_CLUSTER_NODES) -> tuple[int, float]:
    """(n, seconds) of the fastest n-way dissemination barrier on ``P`` ranks under these λ."""
    n, times = lop.best_n(P, lop.RTTCurve(tuple(lambdas)), overhead)
    return n, float(times[n - 1])


def draw_lop(ax, lambdas_us) -> None:
    """Draw :func:`lop_curves` for λ given with λ1, λ3, λ4 in µs (λ2, λ5, λ6 as they are)."""
    lam = [v * US if k in (0, 2, 3) else v for k, v in enumerate(lambdas_us)]
    ax.clear()
    for name, t in lop_curves(lam).items():
        ax.plot(PEERS, t / US, label=name)
    ax.axhline(0, color="0.7", lw=0.8)
    n, t = best_barrier(lam)
    ax.set(xlabel="peers p (n)", ylabel="time (µs)", ylim=(-10, 60))
    ax.set_title(f"n-way dissemination on 64 ranks: fastest n = {n} ({t / US:.1f} µs)", fontsize=9)
    ax.legend(fontsize=8)


def lop_panel(reference: str = "Send/Receive (min)"):
    """Six λ sliders (starting at a curve of :data:`REFERENCES`) redrawing :func:`draw_lop`."""
    import ipywidgets as w
    from matplotlib.figure import Figure

    from .widgets import png

    start = REFERENCES[reference].lambdas
    names = ("λ1 (µs)", "λ2", "λ3 (µs)", "λ4 (µs)", "λ5", "λ6")
    ranges = ((0, 60), (-0.9, 5), (0, 20), (0, 10), (-0.2, 0.0), (0, 120))
    sliders = [w.FloatSlider(value=(v / US if k in (0, 2, 3) else v), min=lo, max=hi,
                             step=(hi - lo) / 400, description=names[k], readout_format=".4g")
               for k, (v, (lo, hi)) in enumerate(zip(start, ranges))]
    image = w.Image(format="png")
    fig = Figure(figsize=(7.5, 4.5))
    ax = fig.add_subplot()

    def redraw(_=None):
        draw_lop(ax, [s.value for s in sliders])
        fig.tight_layout()
        image.value = png(fig)

    for s in sliders:
        s.observe(redraw, names="value")
    redraw()
    return w.VBox([w.HBox(sliders[:3]), w.HBox(sliders[3:]), image])


def lop_figure():
    """The static twin of :func:`lop_panel` around the paper's Send/Receive curve.

    Sliders (at most four): λ1 and λ3 at half, once and twice the paper's, λ5 at -0.07,
    the paper's -0.0625, its rounded -0.06 and -0.055, λ6 at the paper's ± 10 peers.  λ2
    (it only moves the pole below p = 1) and λ4 stay at the paper's: moving λ6 by δ is
    the same as scaling λ4 by exp(-λ5 δ) and moving λ3 to keep λ3 + λ4 (they are not
    identifiable separately, :mod:`netmodels.models.lop_audit`)."""
    from . import interactive as ia

    l1, l2, l3, l4, l5, l6 = LOP_SENDRECV_RTT_MIN.lambdas
    peers = PEERS[::2]

    def curves(x, l1, l3, l5, l6):
        lam = (l1, l2, l3, l4, l5, l6)
        out = lop_curves(lam, peers=x)
        n, t = best_barrier(lam)
        out["best n (64 ranks)"] = ([n], [float(lop.t_one_to_n(n, lop.RTTCurve(lam), LOP_RDMAW_OS))])
        return out

    def readout(l1, l3, l5, l6):
        n, t = best_barrier((l1, l2, l3, l4, l5, l6))
        return f"64 ranks: fastest n-way dissemination n = {n}, {t / US:.1f} µs"

    def around(v, factors):
        return ia.with_values(np.array([v * f for f in factors]), [v])

    return ia.slider_figure(
        curves, peers,
        params={"l1": ia.Param(around(l1, (0.5, 1, 2)), "λ1", "µs", scale=1 / US, initial=l1),
                "l3": ia.Param(around(l3, (0.5, 1, 2)), "λ3", "µs", scale=1 / US, initial=l3),
                "l5": ia.Param(np.array([-0.07, l5, -0.06, -0.055]), "λ5", "/peer", initial=l5),
                "l6": ia.Param(np.array([l6 - 10, l6, l6 + 10]), "λ6", "peers", initial=l6)},
        title="LoP: t_rtt, L(p) and t_1:n (paper's Send/Receive fit)", xlabel="peers p (n)",
        ylabel="time (µs)", y_scale=1 / US, readout=readout, digits=4,
        styles={"best n (64 ranks)": {"mode": "markers", "marker": {"color": "#d62728", "size": 10}}},
        layout={"yaxis": {"range": [-10, 60]}, "legend": {"font": {"size": 10}}})
