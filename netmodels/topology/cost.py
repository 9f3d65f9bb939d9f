"""Time of a schedule step by step: α-β, α-β with link contention, and Kumar's cost equation.

Units: seconds, bytes; ``elem_bytes`` converts a schedule's element counts to bytes.

Step time under α-β (:func:`step_times` without a topology): a rank posts its
messages one after the other, so a step lasts ``α · s + β · b`` where s is the largest
number of messages a rank sends and b the largest number of bytes a rank sends or
receives.  With a topology, b is instead the largest number of bytes carried by one
link: the most loaded link sets the pace (a contention-free step costs the same as
under α-β, since a rank's own leaf link carries exactly its bytes).  Zero-count
messages (barriers) cost α each and no bandwidth.

Kumar's cost equation (slide 24) lists α (host and network software overhead),
α_b (a barrier), β_em (per byte from NIC memory), δ (per byte, copy into NIC
memory), P and k, but its formula is lost in the slide text.  :func:`kumar_time` reads
it as follows, one line per strategy (m bytes per rank):

- direct strategies from NIC memory (prefix, k-prefix, k-shift): the block is copied
  into NIC memory once, then sent P-1 times: ``m δ + (P-1)(α + m β_em)``;
- k-prefix-lb adds a barrier between consecutive stages: ``+ (⌈P/k⌉ - 1) α_b``;
- ring forwards a different block each step, so each of its P-1 sends is copied first:
  ``(P-1)(α + m (β_em + δ))``.
"""

from __future__ import annotations

import numpy as np

from .._check import positive, positive_int
from .base import Topology


def step_times(schedule, alpha: float, beta: float, topology: Topology | None = None,
               elem_bytes: int = 8) -> np.ndarray:
    """Time of every step (s): ``α · (most messages sent by a rank) + β · (bytes on the
    busiest rank, or with ``topology`` on the busiest link)``."""
    alpha, beta = positive("alpha", alpha, allow_zero=True), positive("beta", beta, allow_zero=True)
    eb = positive_int("elem_bytes", elem_bytes)
    p = schedule.nprocs
    out = np.zeros(schedule.nsteps)
    for t, step in enumerate(schedule.steps):
        msgs = [tr for tr in step if tr.src != tr.dst]
        if not msgs:
            continue
        src = np.array([tr.src for tr in msgs])
        dst = np.array([tr.dst for tr in msgs])
        nbytes = np.array([tr.count for tr in msgs], dtype=float) * eb
        sends = np.bincount(src, minlength=p).max()
        if topology is None:
            busiest = max(np.bincount(src, nbytes, minlength=p).max(), np.bincount(dst, nbytes, minlength=p).max())
        else:
            idx, links = topology.routes(src, dst)
            busiest = np.bincount(links, nbytes[idx], minlength=topology.nlinks).max(initial=0)
        out[t] = alpha * sends + beta * busiest
    return out


def schedule_time(schedule, alpha: float, beta: float, topology: Topology | None = None,
                  elem_bytes: int = 8) -> float:
    """Sum of :func:`step_times` (loosely synchronous steps)."""
    return float(step_times(schedule, alpha, beta, topology, elem_bytes).sum())


def kumar_time(strategy: str, nprocs, nbytes, alpha: float, beta_em: float, delta: float,
               alpha_b: float = 0.0, k: int | None = None):
    """Completion time (s) of all-to-all multicast of ``nbytes`` per rank, as this module
    reads Kumar's cost equation (see the module docstring); arrays broadcast."""
    p = np.asarray(nprocs, dtype=float)
    m = np.asarray(nbytes, dtype=float)
    if np.any(p < 1) or np.any(m < 0):
        raise ValueError("nprocs must be >= 1 and nbytes >= 0")
    for name, v in (("alpha", alpha), ("beta_em", beta_em), ("delta", delta), ("alpha_b", alpha_b)):
        positive(name, v, allow_zero=True)
    if strategy == "ring":
        return (p - 1) * (alpha + m * (beta_em + delta))
    if strategy in ("prefix", "k-prefix", "k-shift"):
        return m * delta + (p - 1) * (alpha + m * beta_em)
    if strategy == "k-prefix-lb":
        k = positive_int("k", k)
        return m * delta + (p - 1) * (alpha + m * beta_em) + (np.ceil(p / k) - 1) * alpha_b
    raise ValueError(f"strategy must be ring, prefix, k-prefix, k-prefix-lb or k-shift, got {strategy!r}")


def node_bandwidth(nprocs, nbytes, time):
    """Kumar's "node bandwidth" (B/s): bytes a node receives, (P-1) m, per second of completion."""
    return (np.asarray(nprocs) - 1) * np.asarray(nbytes) / np.asarray(time)


def half_performance_length(alpha: float, beta: float) -> float:
    """n½ = α / β (bytes): the message size at which α-β reaches half its asymptotic bandwidth."""
    return positive("alpha", alpha) / positive("beta", beta)
