"""Broadcast as a schedule: the binomial tree (per-transfer and array form).

The root's vector of ``N`` elements ends on every rank.  ``binomial`` works on ranks
relative to the root, ``v = (r - root) mod P``: in step k (k = 0 .. R-1, R = ⌈log2 P⌉,
``d = 2^(R-1-k)``) every ``v`` that is a multiple of ``2d`` and has ``v + d < P``
sends the whole vector to ``v + d``; the root feeds its largest subtree first, as the
fan-out of :func:`netmodels.algorithms.barriers.binomial`.  Any P >= 1 works; as in
:mod:`netmodels.algorithms.combining`, transfers of zero elements are left out, so
``N = 0`` gives a schedule without steps.

Closed forms (R steps, one message per rank and step): ``R (α + β m)`` under α-β
for ``m = N · elem_bytes`` bytes, and under loosely synchronous LogP ``R (o_s + L + o_r)``
when ``g <= o_s + L + o_r`` (the root's sends are one round apart).
"""

from __future__ import annotations

import numpy as np

from .._check import positive_int
from . import arrays as _arrays
from .barriers import ceil_log
from .schedule import Schedule, Transfer


def _check(nprocs, nelems, root):
    p = positive_int("nprocs", nprocs)
    n = positive_int("nelems", nelems, minimum=0)
    root = positive_int("root", root, minimum=0)
    if root >= p:
        raise ValueError(f"root must be a rank in 0..{p - 1}, got {root}")
    return p, n, root


def binomial(nprocs: int, nelems: int, root: int = 0) -> Schedule:
    """Binomial-tree broadcast of ``nelems`` elements from ``root`` (see the module docstring)."""
    p, n, root = _check(nprocs, nelems, root)
    R = ceil_log(2, p)
    steps = []
    for k in range(R):
        d = 2 ** (R - 1 - k)
        steps.append(tuple(Transfer((v + root) % p, (v + d + root) % p, 0, n, False)
                           for v in range(0, p - d, 2 * d)))
    return Schedule("binomial_broadcast", p, n, [s for s in steps if s and n > 0], {"root": root, "block": n})


def binomial_arrays(nprocs: int, nelems: int, root: int = 0) -> _arrays.ArraySchedule:
    """:func:`binomial` in array form."""
    p, n, root = _check(nprocs, nelems, root)
    R = ceil_log(2, p)
    steps = []
    for k in range(R):
        d = 2 ** (R - 1 - k)
        v = np.arange(0, p - d, 2 * d, dtype=np.int64)
        steps.append(_arrays.nonzero_step((v + root) % p, (v + d + root) % p, 0, n, False))
    return _arrays.schedule_of("binomial_broadcast", p, n, steps, {"root": root, "block": n})


from .registry import register  # noqa: E402


@register("broadcast.binomial")
def _binomial(nprocs: int, nelems: int, root: int = 0) -> _arrays.ArraySchedule:
    """Binomial-tree broadcast from ``root``, the largest subtree fed first."""
    return binomial_arrays(nprocs, nelems, root)
