"""Allgather (all-to-all multicast) schedules: direct, ring, and Kumar's fat-tree strategies.

Every rank ``r`` contributes the block ``[r m, (r+1) m)`` of a working vector of
``P m`` elements (``m``, the builders' ``nelems``); at the end every rank holds every
block.  Every builder is registered as ``allgather.NAME`` in
:mod:`netmodels.algorithms.registry` and returns an
:class:`~netmodels.algorithms.arrays.ArraySchedule`; the three that take the partition
or window size have the option ``k``.  ``meta`` holds ``algorithm``,
``nelems_per_rank``, ``k`` and ``barrier_steps`` (indices of the zero-count barrier
steps of k-prefix-lb).
All transfers are copies (``combine=False``).  The strategies are those of Kumar's
"Scaling collective multicast on fat-tree networks" (ICPADS 2004, seed 004):

``direct``
    One step: every rank sends its block to every other rank, in the order of the
    cyclic shifts ``i -> i + s`` (s = 1 .. P-1).  The slides' "direct all to all",
    ``T = (P - 1)(α + m β)`` under α-β with sequential sends.
``ring``
    P - 1 steps of the cyclic shift by one; in step t rank i forwards block
    ``(i - t) mod P`` (the block it received in the step before).
``prefix``
    Prefix send: step j (j = 1, 2, ...) is the prefix permutation ``i <-> i XOR j``;
    every rank sends its own block.
``k-prefix``
    Prefix send inside partitions of k consecutive ranks, ring across partitions:
    stage s (s = 0 .. ⌈P/k⌉ - 1) sends rank i's block to the partition ``s`` places
    further round the ring of partitions, to the rank at position
    ``(i mod k) XOR j`` of that partition, for all j at once (k prefix permutations
    per step, one step per stage).
``k-prefix-lb``
    k-prefix with a dissemination barrier (zero-count messages, see
    :mod:`netmodels.algorithms.barriers`) between consecutive stages: "synchronises
    nodes after a few steps" (slide 25); here after every stage.
``k-shift``
    Stage s sends rank i's block to the k consecutive ranks
    ``i + s k - k/2 + 1, ..., i + s k + k/2`` (mod P, skipping i itself): stage 0 is
    the window ``[i - k/2 + 1, ..., i - 1, i + 1, ..., i + k/2]`` of slide 29, each
    later stage the same window shifted by k ("and to i + k").  Every message is a
    cyclic shift ``i -> i + c``.

Any P >= 1, any k in 1..P (k-shift: even k >= 2), any m >= 0.  How the strategies
stay exact when P is not a power of two or k does not divide P: the XOR of prefix
send runs over the next power of two Q >= P (the next power of two K >= k inside a
partition) and pairs whose partner is absent are skipped.  Since ``j -> i XOR j`` is a
bijection of 0 .. Q-1, rank i still meets every present rank exactly once, so no
fix-up step is needed; steps in which no pair is present are dropped.  The last
partition of k-prefix may be short; the window offsets of k-shift are taken modulo P
and stop once all P - 1 shifts have been used, each once.  Missing *nodes* (ranks
placed on a subset of the leaves of a fat tree) are a placement, not a schedule: see
:func:`on_leaves` and :mod:`netmodels.topology`.

Where the slides are ambiguous: whether the k messages of a k-prefix stage are
posted at once or as k consecutive permutations (here: at once, in one step, in the
order of the k permutations); how many steps k-prefix-lb runs between barriers (here:
one stage); and slide 29's "and to i + k", read as "then the window around i + k".
"""

from __future__ import annotations

import numbers

import numpy as np

from .._check import positive_int
from . import barriers
from .arrays import ArraySchedule, ArrayStep
from .registry import get, register


def _pow2_at_least(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def _takes_k(algorithm: str) -> bool:
    return "k" in get(algorithm, "allgather").options


def default_k(algorithm: str, nprocs: int) -> int | None:
    """The k used when none is given: None for algorithms without k.

    k-prefix: the largest power of 4 that is <= min(P, 16) (a subtree of a 4-ary fat
    tree, as on the Quadrics network of the slides); k-shift: k = 8 as on slide 29,
    lowered to the largest even k <= P; None when P = 1 (nothing to send).
    """
    if not _takes_k(algorithm):
        return None
    if get(algorithm, "allgather").short == "k-shift":
        return None if nprocs < 2 else min(8, nprocs - nprocs % 2)
    k = 1
    while 4 * k <= min(nprocs, 16):
        k *= 4
    return k


def check_k(algorithm: str, nprocs: int, k) -> int | None:
    """The k to use for ``algorithm`` on ``nprocs`` ranks, or ValueError.

    k is taken only by the algorithms with the option ``k`` (k-prefix, k-prefix-lb and
    k-shift); it must be an integer with 1 <= k <= P, and even (>= 2) for k-shift.
    ``k=None`` gives :func:`default_k`.
    """
    name = get(algorithm, "allgather").short
    p = positive_int("nprocs", nprocs)
    if k is None:
        return default_k(name, p)
    if not _takes_k(name):
        takers = [a.short for a in _algorithms() if "k" in a.options]
        raise ValueError(f"k is an option of {', '.join(takers)} only, not of {name}; got k={k!r}")
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= p:
        raise ValueError(f"k must be an integer with 1 <= k <= nprocs = {p}, got {k!r}")
    if name == "k-shift" and (k < 2 or k % 2):
        raise ValueError(f"k of k-shift must be even and >= 2 (and <= nprocs = {p}), got {k!r}")
    return int(k)


def _algorithms():
    from .registry import algorithms
    return algorithms("allgather")


def _schedule(algorithm: str, p: int, nelems: int, k, msg, forward=False, barrier=False) -> ArraySchedule:
    """The allgather of the message pattern ``msg`` (per step, ``(src, dst)`` arrays of
    own-block messages, None for a step left out; ``forward``: step t forwards block
    ``(src - t) mod P`` instead, as the ring; ``barrier``: a dissemination barrier after
    every step but the last of ``msg``)."""
    m = positive_int("nelems", nelems, minimum=0)
    steps, barrier_steps = [], []
    bar = barriers.dissemination(p).steps if barrier else []
    for t, pair in enumerate(msg):
        if pair is None:
            continue
        src, dst = pair
        start = ((src - t) % p) * m if forward else src * m
        steps.append(ArrayStep.of(src, dst, start, m, False))
        if barrier and t < len(msg) - 1:
            barrier_steps.extend(range(len(steps), len(steps) + len(bar)))
            steps.extend(bar)
    meta = {"algorithm": algorithm, "nelems_per_rank": m, "k": k, "barrier_steps": barrier_steps}
    return ArraySchedule(f"allgather-{algorithm}", p, p * m, steps, meta)


@register("allgather.direct")
def direct(nprocs: int, nelems: int) -> ArraySchedule:
    """Direct: every rank sends its block to every rank in one step, cyclic shifts 1 .. P-1."""
    p = positive_int("nprocs", nprocs)
    i = np.arange(p)
    msg = [(np.tile(i, p - 1), (np.tile(i, p - 1) + np.repeat(np.arange(1, p), p)) % p)] if p > 1 else []
    return _schedule("direct", p, nelems, None, msg)


@register("allgather.ring")
def ring(nprocs: int, nelems: int) -> ArraySchedule:
    """Ring: P - 1 cyclic shifts by one, each rank forwarding the block it received last."""
    p = positive_int("nprocs", nprocs)
    i = np.arange(p)
    return _schedule("ring", p, nelems, None, [(i, (i + 1) % p)] * (p - 1), forward=True)


@register("allgather.prefix")
def prefix(nprocs: int, nelems: int) -> ArraySchedule:
    """Prefix send: step j is the permutation i <-> i XOR j (absent partners skipped)."""
    p = positive_int("nprocs", nprocs)
    i = np.arange(p)
    msg = []
    for j in range(1, _pow2_at_least(p)):
        d = i ^ j
        keep = d < p
        if keep.any():
            msg.append((i[keep], d[keep]))
    return _schedule("prefix", p, nelems, None, msg)


def _kprefix_pairs(p: int, k: int):
    """One step per stage; columns ordered by the prefix permutation j inside the stage."""
    i = np.arange(p)
    nparts, kk = -(-p // k), _pow2_at_least(k)
    steps = []
    for s in range(nparts if p > 1 else 0):
        part = ((i // k) + s) % nparts
        srcs, dsts = [], []
        for j in range(kk):
            d = part * k + ((i % k) ^ j)
            keep = ((i % k) ^ j < k) & (d < p) & (d != i)
            srcs.append(i[keep])
            dsts.append(d[keep])
        src, dst = np.concatenate(srcs), np.concatenate(dsts)
        if src.size:
            steps.append((src, dst))
    return steps


@register("allgather.k-prefix")
def k_prefix(nprocs: int, nelems: int, k=None) -> ArraySchedule:
    """k-prefix: prefix send inside partitions of k ranks, a ring across partitions."""
    p = positive_int("nprocs", nprocs)
    k = check_k("k-prefix", p, k)
    return _schedule("k-prefix", p, nelems, k, _kprefix_pairs(p, k))


@register("allgather.k-prefix-lb")
def k_prefix_lb(nprocs: int, nelems: int, k=None) -> ArraySchedule:
    """k-prefix with a dissemination barrier between consecutive stages."""
    p = positive_int("nprocs", nprocs)
    k = check_k("k-prefix-lb", p, k)
    return _schedule("k-prefix-lb", p, nelems, k, _kprefix_pairs(p, k), barrier=True)


def shift_offsets(nprocs: int, k: int) -> list[list[int]]:
    """Per k-shift stage, the shifts c (``i -> (i + c) mod P``) it uses, each of 1..P-1 once."""
    p, h = nprocs, k // 2
    stages, seen = [], set()
    for s in range(-(-p // k)):
        offs = []
        for o in range(s * k - h + 1, s * k + h + 1):
            c = o % p
            if c and c not in seen and o <= p - h:
                seen.add(c)
                offs.append(c)
        stages.append(offs)
    return [o for o in stages if o]


@register("allgather.k-shift")
def k_shift(nprocs: int, nelems: int, k=None) -> ArraySchedule:
    """k-shift: stage s sends every block to the window of k ranks around i + s k."""
    p = positive_int("nprocs", nprocs)
    k = check_k("k-shift", p, k)
    i = np.arange(p)
    msg = [(np.tile(i, len(offs)), (np.tile(i, len(offs)) + np.repeat(offs, p)) % p)
           for offs in shift_offsets(p, k)] if p > 1 else []
    return _schedule("k-shift", p, nelems, k, msg)


def on_leaves(algorithm: str, leaves, nleaves: int, nelems_per_rank: int, k=None):
    """``algorithm`` run in *leaf* numbering with the absent leaves skipped (per-transfer form).

    The schedule is built for ``nleaves`` virtual ranks (a full fat tree), messages
    from or to a leaf not in ``leaves`` are dropped and the present leaves are
    renumbered 0 .. len(leaves)-1 in increasing order.  Correct for the direct
    strategies (every message carries the sender's own block and every pair meets
    once); ring forwards blocks and is refused.  Use it to compare "prefix send in
    leaf numbering" with prefix send in rank numbering on a tree with missing nodes.
    """
    alg = get(algorithm, "allgather")
    if alg.short == "ring":
        raise ValueError("algorithm must be a direct strategy for on_leaves (ring forwards blocks)")
    n = positive_int("nleaves", nleaves)
    leaves = np.unique(np.asarray(leaves, dtype=np.int64))
    if leaves.size == 0 or leaves[0] < 0 or leaves[-1] >= n:
        raise ValueError(f"leaves must be a non-empty set of integers in 0..{n - 1}")
    m = positive_int("nelems_per_rank", nelems_per_rank, minimum=0)
    full = alg.build(n, 1, k=k)
    msg = [(s.src, s.dst) for t, s in enumerate(full.steps) if t not in full.meta["barrier_steps"]]
    rank = np.full(n, -1)
    rank[leaves] = np.arange(leaves.size)
    kept = []
    for src, dst in msg:
        keep = (rank[src] >= 0) & (rank[dst] >= 0)
        kept.append((rank[src[keep]], rank[dst[keep]]) if keep.any() else None)
    s = _schedule(alg.short, leaves.size, m, full.meta["k"], kept, barrier=alg.short == "k-prefix-lb")
    s.meta.update(leaves=leaves.tolist(), nleaves=n)
    return s.to_schedule()
