"""Kumar's cost equation of all-to-all multicast on a fat tree, and the node bandwidth it gives.

Units: seconds, bytes.  The time of a schedule with link contention is the simulator's:
``simulate(schedule, AlphaBeta(α, β), topology=tree).time`` (:mod:`netmodels.simulate`; the
busiest link of a rank's messages sets a floor ``s α + β b``, s its messages, b the most bytes
on one of their links, so a contention-free step costs what it costs without a topology).

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
