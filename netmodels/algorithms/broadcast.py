"""Broadcast as schedules: the binomial tree, the flat tree and BSP's two-phase broadcast.

The root's vector of ``N`` elements ends on every rank.  Every builder is registered as
``broadcast.NAME`` in :mod:`netmodels.algorithms.registry`, takes the ``root`` (default 0)
and returns an :class:`~netmodels.algorithms.arrays.ArraySchedule`; any P >= 1 works.  As
in :mod:`netmodels.algorithms.combining`, transfers of zero elements are left out, so
``N = 0`` gives a schedule without steps.

- ``binomial`` works on ranks relative to the root, ``v = (r - root) mod P``: in step k
  (k = 0 .. R-1, R = ⌈log2 P⌉, ``d = 2^(R-1-k)``) every ``v`` that is a multiple of
  ``2d`` and has ``v + d < P`` sends the whole vector to ``v + d``; the root feeds its
  largest subtree first, as the fan-out of :func:`netmodels.algorithms.barriers.binomial`
  and the second half of :func:`netmodels.algorithms.combining.binomial`.
- ``flat``: the root sends the whole vector to every other rank in one step (in rank
  order).
- ``two_phase``: BSP's broadcast: the root scatters block ``v`` (of ``P`` nearly equal
  blocks, :func:`netmodels.algorithms.combining.split`) to relative rank ``v``, then every
  rank sends its block to all others (a total exchange).  2 steps.

Closed forms of ``binomial`` (R steps, one message per rank and step): ``R (α + β m)``
under α-β for ``m = N · elem_bytes`` bytes, and under loosely synchronous LogP
``R (o_s + L + o_r)`` when ``g <= o_s + L + o_r`` (the root's sends are one round apart).
"""

from __future__ import annotations

import numpy as np

from .._check import positive_int
from .arrays import ArraySchedule, nonzero_step, schedule_of
from .barriers import ceil_log
from .combining import split_arrays
from .registry import register


def _check(nprocs, nelems, root):
    p = positive_int("nprocs", nprocs)
    n = positive_int("nelems", nelems, minimum=0)
    root = positive_int("root", root, minimum=0)
    if root >= p:
        raise ValueError(f"root must be a rank in 0..{p - 1}, got {root}")
    return p, n, root


@register("broadcast.binomial")
def binomial(nprocs: int, nelems: int, root: int = 0) -> ArraySchedule:
    """Binomial-tree broadcast from ``root``, the largest subtree fed first."""
    p, n, root = _check(nprocs, nelems, root)
    R = ceil_log(2, p)
    steps = []
    for k in range(R):
        d = 2 ** (R - 1 - k)
        v = np.arange(0, p - d, 2 * d, dtype=np.int64)
        steps.append(nonzero_step((v + root) % p, (v + d + root) % p, 0, n, False))
    return schedule_of("binomial_broadcast", p, n, steps, {"root": root, "block": n})


@register("broadcast.flat")
def flat(nprocs: int, nelems: int, root: int = 0) -> ArraySchedule:
    """Flat tree: the root sends the whole vector to every other rank in one step."""
    p, n, root = _check(nprocs, nelems, root)
    others = (root + np.arange(1, p)) % p
    return schedule_of("flat_broadcast", p, n, [nonzero_step(np.full(p - 1, root), np.sort(others), 0, n, False)],
                       {"root": root, "block": n})


@register("broadcast.two_phase")
def two_phase(nprocs: int, nelems: int, root: int = 0) -> ArraySchedule:
    """BSP's two-phase broadcast: the root scatters P blocks, then a total exchange of them."""
    p, n, root = _check(nprocs, nelems, root)
    start, count = split_arrays(n, p)
    owner = (root + np.arange(p)) % p                     # relative rank v holds block v
    scatter = nonzero_step(np.full(p - 1, root), owner[1:], start[1:], count[1:], False)
    v, d = np.divmod(np.arange(p * p), p)                 # block v from owner[v] to every other rank d
    keep = owner[v] != d
    exchange = nonzero_step(owner[v][keep], d[keep], start[v][keep], count[v][keep], False)
    return schedule_of("two_phase_broadcast", p, n, [scatter, exchange],
                       {"root": root, "block": int(count.max())})
