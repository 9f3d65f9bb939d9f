"""Barrier algorithms as schedules of zero-count messages (see :mod:`netmodels.algorithms.schedule`).

Every builder is registered as ``barrier.NAME`` in :mod:`netmodels.algorithms.registry`
and returns an :class:`~netmodels.algorithms.arrays.ArraySchedule` on ``nprocs`` ranks
(``nelems = 0``; ``.to_schedule()`` gives the per-transfer view) whose transfers carry no
data (``count == 0``): a message only says "I (and everyone I have
heard from) have entered".  The MPI executor runs these schedules, the LogP model
(:mod:`netmodels.models.logp`) costs them, and :func:`entered_sets` checks them without MPI.

The algorithms are those of Höfler & Rehm's barrier slides (seed 002): central counter,
combining tree, tournament, dissemination, binomial tree, n-way dissemination, and the
two other O(log2 P) algorithms the slides name, butterfly and pairwise exchange.  How
each handles a P that is not a power of two is said in its docstring.
"""

from __future__ import annotations

import numpy as np

from .._check import positive_int
from .arrays import RANK, ArraySchedule, ArrayStep, as_arrays, schedule_of
from .registry import register


def _schedule(name: str, nprocs: int, nelems: int, pairs, **meta) -> ArraySchedule:
    """The barrier of the ``(src, dst)`` arrays of every step (empty steps dropped)."""
    if nelems != 0:
        raise ValueError(f"a barrier carries no data: nelems must be 0, got {nelems!r}")
    steps = [ArrayStep.of(np.asarray(s, dtype=RANK), np.asarray(d, dtype=RANK)) for s, d in pairs]
    return schedule_of(name, nprocs, 0, steps, meta)


def ceil_log(base: int, p: int) -> int:
    """Smallest r with base**r >= p (exact integer arithmetic)."""
    r, reach = 0, 1
    while reach < p:
        reach *= base
        r += 1
    return r


@register("barrier.central_counter")
def central_counter(nprocs: int, nelems: int = 0) -> ArraySchedule:
    """Central counter: every rank reports to rank 0, which releases them all.

    2 steps, O(P); any P works.  The message-passing form of the shared counter: the
    root receives P - 1 arrivals one after the other, then sends P - 1 releases one after
    the other.
    """
    p = positive_int("nprocs", nprocs)
    r = np.arange(1, p)
    zero = np.zeros(p - 1, dtype=RANK)
    return _schedule("central_counter", p, nelems, [(r, zero), (zero, r)])


@register("barrier.combining_tree")
def combining_tree(nprocs: int, nelems: int = 0, fan_in: int = 4) -> ArraySchedule:
    """Combining tree of fan-in ``fan_in``: arrivals up the tree, release down it.

    O(fan_in · log_fan_in P).  Ranks form the heap-ordered tree with parent
    ``(r - 1) // fan_in``; any P works (the last level is partly filled).  Step ``d`` of
    the arrival phase carries the messages of the ranks at depth ``D - d`` to their
    parents, so a parent waits for all its children before it reports; the release phase
    runs the same levels downwards.
    """
    p = positive_int("nprocs", nprocs)
    k = positive_int("fan_in", fan_in, minimum=2)
    depth = np.zeros(p, dtype=np.int64)
    for r in range(1, p):
        depth[r] = depth[(r - 1) // k] + 1
    r = np.arange(p)
    parent = (r - 1) // k
    top = int(depth.max())
    up = [(r[depth == d], parent[depth == d]) for d in range(top, 0, -1)]
    down = [(parent[depth == d], r[depth == d]) for d in range(1, top + 1)]
    return _schedule("combining_tree", p, nelems, up + down, fan_in=k)


def _tournament_rounds(p: int):
    """Rounds of the tournament: in round k the loser r (r mod 2^(k+1) == 2^k) meets r - 2^k."""
    out = []
    for k in range(ceil_log(2, p)):
        src = np.arange(2**k, p, 2 ** (k + 1), dtype=RANK)
        out.append((src, src - 2**k))
    return out


@register("barrier.tournament")
def tournament(nprocs: int, nelems: int = 0, release: str = "tree") -> ArraySchedule:
    """Tournament: winners move up, then the champion releases the others.

    Hensgen, Finkel & Manber (1988): ⌈log2 P⌉ rounds of matches, then a release.  In
    round k the statically chosen loser ``r`` (``r mod 2^(k+1) == 2^k``) tells the winner
    ``r - 2^k``; rank 0 is the champion.  A loser without an opponent (P not a power of
    two) simply advances.  The slides class it as "O(log2 P) + Bcast": the release is a
    broadcast, ``release="tree"`` (default) down the reversed tournament tree as in
    Mellor-Crummey & Scott's version, or ``release="flat"`` (the champion sends to
    everyone, the message form of a global wake-up flag).  With ``"tree"`` the messages
    are those of :func:`binomial`: in message passing the two algorithms coincide.
    """
    p = positive_int("nprocs", nprocs)
    if release not in ("tree", "flat"):
        raise ValueError(f"release must be 'tree' or 'flat', got {release!r}")
    rounds = _tournament_rounds(p)
    if release == "tree":
        wake = [(w, r) for r, w in reversed(rounds)]
    else:
        wake = [(np.zeros(p - 1, dtype=RANK), np.arange(1, p, dtype=RANK))]
    return _schedule("tournament", p, nelems, rounds + wake, release=release)


@register("barrier.binomial")
def binomial(nprocs: int, nelems: int = 0) -> ArraySchedule:
    """Binomial tree: fan-in to rank 0, then fan-out.

    2⌈log2 P⌉ steps.  Rank r's parent is r with its lowest set bit cleared; the fan-in
    sends from the leaves of the smallest subtrees first, the fan-out to the largest
    subtree first.  Any P works (subtrees beyond P are absent).
    """
    p = positive_int("nprocs", nprocs)
    rounds = _tournament_rounds(p)
    return _schedule("binomial", p, nelems, rounds + [(w, r) for r, w in reversed(rounds)])


@register("barrier.dissemination")
def dissemination(nprocs: int, nelems: int = 0) -> ArraySchedule:
    """Dissemination: in round k rank r signals r + 2^k.

    Hensgen, Finkel & Manber (1988): ⌈log2 P⌉ rounds.  In round k rank r sends to
    ``(r + 2^k) mod P`` and hears from ``(r - 2^k) mod P``; after round k it has heard,
    directly or not, from its 2^(k+1) - 1 predecessors.  Any P works, with no extra round.
    """
    p = positive_int("nprocs", nprocs)
    src = np.arange(p, dtype=RANK)
    r = src.astype(np.int64 if p > 2**30 else RANK)     # r + 2^k stays below 2^31
    pairs = []
    for k in range(ceil_log(2, p)):
        d = r + 2**k
        d[d >= p] -= p
        pairs.append((src, d))
    return _schedule("dissemination", p, nelems, pairs)


@register("barrier.nway_dissemination")
def nway_dissemination(nprocs: int, nelems: int = 0, n: int = 2) -> ArraySchedule:
    """n-way dissemination: in round k rank r signals r + j (n+1)^k, j = 1..n.

    Hoefler et al. (2006): ⌈log_(n+1) P⌉ rounds of n messages each; after round k rank r
    has heard from its (n+1)^(k+1) - 1 predecessors.  ``n = 1`` is :func:`dissemination`.
    Any P works; a target that wraps onto r itself or repeats one of the round is dropped
    (whether it does depends on ``j (n+1)^k mod P`` only, not on the rank).
    """
    p = positive_int("nprocs", nprocs)
    n = positive_int("n", n)
    r = np.arange(p, dtype=np.int64)
    pairs = []
    for k in range(ceil_log(n + 1, p)):
        offsets = []
        for j in range(1, n + 1):
            o = j * (n + 1) ** k % p
            if o != 0 and o not in offsets:
                offsets.append(o)
        o = np.array(offsets, dtype=np.int64)
        pairs.append((np.repeat(r, o.size), ((r[:, None] + o[None, :]) % p).ravel()))
    return _schedule("nway_dissemination", p, nelems, pairs, n=n)


@register("barrier.butterfly")
def butterfly(nprocs: int, nelems: int = 0) -> ArraySchedule:
    """Butterfly: pairwise exchanges at distances 1, 2, 4, ...

    Brooks (1986): ⌈log2 P⌉ rounds of pairwise exchanges r ↔ r XOR 2^k.  For P not a
    power of two the butterfly runs on Q = 2^⌈log2 P⌉ virtual ranks and the missing
    virtual rank v >= P is played by the real rank v - Q/2, which then sends and receives
    for two roles in a round (messages between roles of one rank are dropped, duplicates
    merged; a rank's messages sorted by destination).  No extra round is needed, but some
    ranks carry twice the load.
    """
    p = positive_int("nprocs", nprocs)
    q = 2 ** ceil_log(2, p)
    if p == q:                                     # a power of two: every rank one role
        s = np.arange(p, dtype=RANK)
        return _schedule("butterfly", p, nelems, [(s, s ^ 2**k) for k in range(ceil_log(2, p))])
    v = np.arange(q, dtype=np.int64)
    real = np.where(v < p, v, v - q // 2)
    s = np.arange(p, dtype=np.int64)
    second = (s + q // 2 >= p) & (s < q // 2)      # rank s also plays virtual rank s + Q/2
    virtual = np.where(second, s + q // 2, 0)
    pairs = []
    for k in range(ceil_log(2, p)):
        a = real[s ^ 2**k]
        b = np.where(second, real[virtual ^ 2**k], -1)
        lo, hi = np.minimum(a, b), np.maximum(a, b)     # a rank's (at most two) partners, sorted
        keep = np.stack([(lo >= 0) & (lo != s), (hi != s) & (hi != lo)], axis=1)
        both = np.stack([lo, hi], axis=1)
        pairs.append((np.broadcast_to(s[:, None], both.shape)[keep], both[keep]))
    return _schedule("butterfly", p, nelems, pairs)


@register("barrier.pairwise_exchange")
def pairwise_exchange(nprocs: int, nelems: int = 0) -> ArraySchedule:
    """Pairwise exchange (butterfly with the extra ranks folded in).

    Recursive doubling, as in MPICH's barrier: log2 m rounds, m = 2^⌊log2 P⌋.  If P is not
    a power of two, the P - m extra ranks r >= m first report to r - m, the m low ranks run
    the butterfly exchanges among themselves, and finally release their extra partner: two
    more steps, ⌊log2 P⌋ + 2 in all.
    """
    p = positive_int("nprocs", nprocs)
    m = 2 ** (p.bit_length() - 1)
    extra = np.arange(m, p)
    low = np.arange(m)
    core = [(low, low ^ 2**k) for k in range(m.bit_length() - 1)]
    return _schedule("pairwise_exchange", p, nelems, [(extra, extra - m)] + core + [(extra - m, extra)])


def entered_sets(schedule) -> np.ndarray:
    """Boolean matrix K with K[p, q] = "rank p's exit depends causally on rank q's entry".

    Knowledge is propagated through the steps of ``schedule`` (either form) with the
    schedule semantics: a message of step t carries what its sender knew at the beginning
    of step t.  A schedule is a correct barrier iff K is all True.
    """
    a = as_arrays(schedule)
    k = np.eye(a.nprocs, dtype=bool)
    for step in a.steps:
        new = k.copy()
        np.logical_or.at(new, step.dst, k[step.src])
        k = new
    return k


def is_barrier(schedule) -> bool:
    """True iff every rank's exit depends on every rank's entry (see :func:`entered_sets`)."""
    return bool(entered_sets(schedule).all())
