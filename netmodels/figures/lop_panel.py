"""Figures of the LoP chapter: the λ of t_rtt against the curves they make, live and static.

:func:`lop_spec` declares the figure once (:mod:`netmodels.figures.panel`): its live panel
(JupyterLab, ``lop_spec().live()``) and its static twin (the HTML book, ``.static()``) both
draw :func:`lop_curves`: ``t_rtt(p)``, ``L(p)`` and ``t_1:n`` over p = 1 .. 63 peers (the paper's
64-node cluster) for given λ1..λ6, with the paper's RDMA o_s, and the n of the fastest
n-way dissemination barrier on 64 ranks.  Units: seconds inside, µs on the axes.
"""

from __future__ import annotations

import numpy as np

from ..models import lop
from ..models.machines import LOP_CLUSTER_NODES, LOP_RDMAW_OS, LOP_RDMAW_RTT_MIN, LOP_SENDRECV_RTT_MIN
from .panel import Control, PanelSpec

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


def physical(times) -> np.ndarray:
    """``times`` (s) with the negative ones, where the fitted curves leave the model's
    physical range, replaced by NaN (not drawn): a time is never shown below zero."""
    t = np.asarray(times, dtype=float)
    return np.where(t < 0, np.nan, t)


def best_barrier(lambdas, overhead=LOP_RDMAW_OS, P: int = LOP_CLUSTER_NODES) -> tuple[int, float]:
    """(n, seconds) of the fastest n-way dissemination barrier on ``P`` ranks under these λ."""
    n, times = lop.best_n(P, lop.RTTCurve(tuple(lambdas)), overhead)
    return n, float(times[n - 1])


def lop_spec(reference: str = "Send/Receive (min)") -> PanelSpec:
    """The six λ of t_rtt around a curve of :data:`REFERENCES` (λ1, λ3, λ4 in µs).

    λ1 (s·peers) and λ2 (peers) set the falling part λ1/(p + λ2) of the curve (λ2 only moves its pole
    below p = 1), λ3 (s) its floor, λ4 (s), λ5 (1/peer) and λ6 (peers) its saturation
    λ4 (1 - e^(λ5 (p - λ6))).  Where a setting makes t_rtt/2 fall below the two send overheads,
    L(p) and t_1:n would be negative: those points are not drawn and the readout says from
    which p (:func:`physical`).

    Live: all six λ (linear sliders).  Static: λ1 and λ3 at half, once and twice the
    reference's, λ5 at -0.07, the paper's -0.0625, its rounded -0.06 and -0.055 (around the
    Send/Receive fit), λ6 at the reference's ± 10 peers.  λ2 (it only moves the pole below
    p = 1) and λ4 stay at the reference's: moving λ6 by δ is the same as scaling λ4 by
    exp(-λ5 δ) and moving λ3 to keep λ3 + λ4 (they are not identifiable separately,
    :mod:`netmodels.models.lop_audit`)."""
    from . import interactive as ia

    if reference not in REFERENCES:
        raise ValueError(f"reference must be one of {list(REFERENCES)}, got {reference!r}")
    l1, l2, l3, l4, l5, l6 = REFERENCES[reference].lambdas

    def curves(x, l1, l2, l3, l4, l5, l6):
        lam = (l1, l2, l3, l4, l5, l6)
        out = {k: physical(v) for k, v in lop_curves(lam, peers=x).items()}
        n, t = best_barrier(lam)
        out["best n (64 ranks)"] = ([n], list(physical([float(lop.t_one_to_n(n, lop.RTTCurve(lam), LOP_RDMAW_OS))])))
        return out

    def readout(**lam):
        lam = tuple(lam[k] for k in ("l1", "l2", "l3", "l4", "l5", "l6"))
        unphysical = {k: PEERS[np.asarray(v) < 0] for k, v in lop_curves(lam).items()}
        gone = [f"{k} < 0 from p = {v[0]:.0f}" for k, v in unphysical.items() if v.size]
        if gone:
            return ("outside the model's physical range, not drawn: " + "; ".join(gone)
                    + " (t_rtt/2 below the two send overheads)")
        n, t = best_barrier(lam)
        return f"64 ranks: fastest n-way dissemination n = {n}, {t / US:.1f} µs"

    def around(v, factors):
        return ia.with_values(np.array([v * f for f in factors]), [v])

    micro = dict(unit="µs", scale=1 / US, kw={"readout_format": ".4g"})
    plain = dict(kw={"readout_format": ".4g"})
    return PanelSpec(
        title=f"LoP: t_rtt, L(p) and t_1:n (paper's {reference.split(' (')[0]} fit)", data=curves,
        x=PEERS[::2], live_x=PEERS,
        controls=(
            Control("l1", "λ1", l1, span=(0, 60 * US), values=around(l1, (0.5, 1, 2)), **micro,
                    help="size of the falling part λ1/(p + λ2): what few peers cost extra (µs × peers)"),
            Control("l2", "λ2", l2, span=(-0.9, 5), **plain,
                    help="shift of the falling part, in peers (above -1: its pole stays below p = 1)"),
            Control("l3", "λ3", l3, span=(0, 20 * US), values=around(l3, (0.5, 1, 2)), **micro,
                    help="floor: the round-trip time the falling part levels out at"),
            Control("l4", "λ4", l4, span=(0, 10 * US), **micro,
                    help="height of the saturation step λ4 (1 - exp(λ5 (p - λ6))) that raises t_rtt at many peers"),
            Control("l5", "λ5", l5, unit="/peer", span=(-0.2, 0.0), values=np.array([-0.07, l5, -0.06, -0.055]),
                    help="steepness of the saturation step, per peer (negative: it rises with p)", **plain),
            Control("l6", "λ6", l6, unit="peers", span=(0, 120), values=np.array([l6 - 10, l6, l6 + 10]), **plain,
                    help="where the saturation step crosses zero, in peers"),
        ),
        rows=(("l1", "l2", "l3"), ("l4", "l5", "l6")),
        xlabel="peers p (n)", ylabel="time (µs)", y_scale=1 / US, readout=readout, digits=4,
        styles={"best n (64 ranks)": {"mode": "markers", "marker": {"color": "#d62728", "size": 10}}},
        layout={"yaxis": {"range": [0, 60]}, "legend": {"font": {"size": 10}}})
