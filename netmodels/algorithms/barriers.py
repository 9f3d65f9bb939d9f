"""Barrier algorithms as schedules of zero-count messages (see :mod:`netmodels.algorithms.schedule`).

Every function returns a :class:`~netmodels.algorithms.schedule.Schedule` on ``nprocs`` ranks whose
transfers carry no data (``count == 0``): a message only says "I (and everyone I have
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
from .schedule import Schedule, Transfer


def _schedule(name: str, nprocs: int, steps, **meta) -> Schedule:
    steps = [tuple(Transfer(s, d) for s, d in step) for step in steps]
    return Schedule(name, nprocs, 0, [s for s in steps if s], meta)


def ceil_log(base: int, p: int) -> int:
    """Smallest r with base**r >= p (exact integer arithmetic)."""
    r, reach = 0, 1
    while reach < p:
        reach *= base
        r += 1
    return r


def central_counter(nprocs: int) -> Schedule:
    """Everyone tells rank 0 (the counter), then rank 0 releases everyone: 2 steps, O(P).

    Any P works.  The message-passing form of the shared counter: the root receives
    P - 1 arrivals one after the other, then sends P - 1 releases one after the other.
    """
    p = positive_int("nprocs", nprocs)
    return _schedule("central_counter", p, [[(r, 0) for r in range(1, p)],
                                            [(0, r) for r in range(1, p)]])


def combining_tree(nprocs: int, fan_in: int = 4) -> Schedule:
    """Arrival up a ``fan_in``-ary tree, release down the same tree: O(fan_in · log_fan_in P).

    Ranks form the heap-ordered tree with parent ``(r - 1) // fan_in``; any P works (the
    last level is partly filled).  Step ``d`` of the arrival phase carries the messages of
    the ranks at depth ``D - d`` to their parents, so a parent waits for all its children
    before it reports; the release phase runs the same levels downwards.
    """
    p = positive_int("nprocs", nprocs)
    k = positive_int("fan_in", fan_in, minimum=2)
    depth = [0] * p
    for r in range(1, p):
        depth[r] = depth[(r - 1) // k] + 1
    top = max(depth)
    up = [[(r, (r - 1) // k) for r in range(1, p) if depth[r] == d] for d in range(top, 0, -1)]
    down = [[((r - 1) // k, r) for r in range(1, p) if depth[r] == d] for d in range(1, top + 1)]
    return _schedule("combining_tree", p, up + down, fan_in=k)


def _tournament_rounds(p: int):
    """Rounds of the tournament: in round k the loser r (r mod 2^(k+1) == 2^k) meets r - 2^k."""
    return [[(r, r - 2**k) for r in range(2**k, p, 2 ** (k + 1))] for k in range(ceil_log(2, p))]


def tournament(nprocs: int, release: str = "tree") -> Schedule:
    """Tournament barrier (Hensgen, Finkel & Manber 1988): ⌈log2 P⌉ rounds of matches, then a release.

    In round k the statically chosen loser ``r`` (``r mod 2^(k+1) == 2^k``) tells the winner
    ``r - 2^k``; rank 0 is the champion.  A loser without an opponent (P not a power of two)
    simply advances.  The slides class it as "O(log2 P) + Bcast": the release is a broadcast,
    ``release="tree"`` (default) down the reversed tournament tree as in Mellor-Crummey &
    Scott's version, or ``release="flat"`` (the champion sends to everyone, the message
    form of a global wake-up flag).  With ``"tree"`` the messages are those of
    :func:`binomial`: in message passing the two algorithms coincide.
    """
    p = positive_int("nprocs", nprocs)
    if release not in ("tree", "flat"):
        raise ValueError(f"release must be 'tree' or 'flat', got {release!r}")
    rounds = _tournament_rounds(p)
    if release == "tree":
        wake = [[(w, r) for r, w in rnd] for rnd in reversed(rounds)]
    else:
        wake = [[(0, r) for r in range(1, p)]]
    return _schedule("tournament", p, rounds + wake, release=release)


def binomial(nprocs: int) -> Schedule:
    """Binomial-tree fan-in to rank 0 and fan-out from it: 2⌈log2 P⌉ steps.

    Rank r's parent is r with its lowest set bit cleared; the fan-in sends from the
    leaves of the smallest subtrees first, the fan-out to the largest subtree first.
    Any P works (subtrees beyond P are absent).
    """
    p = positive_int("nprocs", nprocs)
    rounds = _tournament_rounds(p)
    return _schedule("binomial", p, rounds + [[(w, r) for r, w in rnd] for rnd in reversed(rounds)])


def dissemination(nprocs: int) -> Schedule:
    """Dissemination barrier (Hensgen, Finkel & Manber 1988): ⌈log2 P⌉ rounds.

    In round k rank r sends to ``(r + 2^k) mod P`` and hears from ``(r - 2^k) mod P``;
    after round k it has heard, directly or not, from its 2^(k+1) - 1 predecessors.  Any
    P works, with no extra round.
    """
    p = positive_int("nprocs", nprocs)
    return _schedule("dissemination", p,
                     [[(r, (r + 2**k) % p) for r in range(p)] for k in range(ceil_log(2, p))])


def nway_dissemination(nprocs: int, n: int = 2) -> Schedule:
    """n-way dissemination (Hoefler et al., 2006): ⌈log_(n+1) P⌉ rounds of n messages each.

    In round k rank r sends to ``(r + j (n+1)^k) mod P`` for j = 1..n; after round k it has
    heard from its (n+1)^(k+1) - 1 predecessors.  ``n = 1`` is :func:`dissemination`.
    Any P works; a target that wraps onto r itself or repeats one of the round is dropped.
    """
    p = positive_int("nprocs", nprocs)
    n = positive_int("n", n)
    steps = []
    for k in range(ceil_log(n + 1, p)):
        step = []
        for r in range(p):
            seen = {r}
            for j in range(1, n + 1):
                d = (r + j * (n + 1) ** k) % p
                if d not in seen:
                    seen.add(d)
                    step.append((r, d))
        steps.append(step)
    return _schedule("nway_dissemination", p, steps, n=n)


def butterfly(nprocs: int) -> Schedule:
    """Butterfly barrier (Brooks 1986): ⌈log2 P⌉ rounds of pairwise exchanges r ↔ r XOR 2^k.

    For P not a power of two the butterfly runs on Q = 2^⌈log2 P⌉ virtual ranks and the
    missing virtual rank v >= P is played by the real rank v - Q/2, which then sends and
    receives for two roles in a round (messages between roles of one rank are dropped,
    duplicates merged).  No extra round is needed, but some ranks carry twice the load.
    """
    p = positive_int("nprocs", nprocs)
    q = 2 ** ceil_log(2, p)
    def real(v):
        return v if v < p else v - q // 2
    steps = []
    for k in range(ceil_log(2, p)):
        pairs = {(real(v), real(v ^ 2**k)) for v in range(q)}
        steps.append(sorted((s, d) for s, d in pairs if s != d))
    return _schedule("butterfly", p, steps)


def pairwise_exchange(nprocs: int) -> Schedule:
    """Pairwise exchange (recursive doubling, as in MPICH's barrier): log2 m rounds, m = 2^⌊log2 P⌋.

    If P is not a power of two, the P - m extra ranks r >= m first report to r - m, the
    m low ranks run the butterfly exchanges among themselves, and finally release their
    extra partner: two more steps, ⌊log2 P⌋ + 2 in all.
    """
    p = positive_int("nprocs", nprocs)
    m = 2 ** (p.bit_length() - 1)
    extra = [(r, r - m) for r in range(m, p)]
    core = [[(r, r ^ 2**k) for r in range(m)] for k in range(m.bit_length() - 1)]
    return _schedule("pairwise_exchange", p, [extra] + core + [[(s, d) for d, s in extra]])


#: algorithm name -> schedule builder (keyword options pass through)
BUILDERS = {
    "central_counter": central_counter,
    "combining_tree": combining_tree,
    "tournament": tournament,
    "dissemination": dissemination,
    "binomial": binomial,
    "nway_dissemination": nway_dissemination,
    "butterfly": butterfly,
    "pairwise_exchange": pairwise_exchange,
}


#: algorithm name -> the keyword options its builder takes (the others take none)
OPTIONS = {"combining_tree": ("fan_in",), "tournament": ("release",), "nway_dissemination": ("n",)}


def check_options(algorithm: str, options, accepted=None) -> None:
    """ValueError unless every key of ``options`` is an option ``algorithm`` takes.

    ``accepted`` maps algorithm names to their option names (default :data:`OPTIONS`);
    the message names each rejected option and the algorithms that do accept it.
    """
    accepted = OPTIONS if accepted is None else accepted
    bad = sorted(set(options) - set(accepted.get(algorithm, ())))
    if bad:
        takers = {o: sorted(a for a, opts in accepted.items() if o in opts) for o in bad}
        where = "; ".join(f"{o!r} is an option of {', '.join(t) if t else 'no algorithm'}"
                          for o, t in takers.items())
        mine = list(accepted.get(algorithm, ()))
        raise ValueError(f"{algorithm} takes {f'only {mine}' if mine else 'no options'}, got {bad}: {where}")


def build(algorithm: str, nprocs: int, **options) -> Schedule:
    """The schedule of ``algorithm`` (a key of :data:`BUILDERS`) on ``nprocs`` ranks.

    ``options`` are those of :data:`OPTIONS`; any other raises ValueError.
    """
    if algorithm not in BUILDERS:
        raise ValueError(f"algorithm must be one of {sorted(BUILDERS)}, got {algorithm!r}")
    check_options(algorithm, options)
    return BUILDERS[algorithm](nprocs, **options)


def entered_sets(schedule: Schedule) -> np.ndarray:
    """Boolean matrix K with K[p, q] = "rank p's exit depends causally on rank q's entry".

    Knowledge is propagated through the steps with the schedule semantics: a message
    of step t carries what its sender knew at the beginning of step t.  A schedule is a
    correct barrier iff K is all True.
    """
    k = np.eye(schedule.nprocs, dtype=bool)
    for step in schedule.steps:
        new = k.copy()
        for tr in step:
            new[tr.dst] |= k[tr.src]
        k = new
    return k


def is_barrier(schedule: Schedule) -> bool:
    """True iff every rank's exit depends on every rank's entry (see :func:`entered_sets`)."""
    return bool(entered_sets(schedule).all())


# --------------------------------------------------------------------------- array form
# dissemination, nway_dissemination, tournament, binomial and butterfly built as columns
# (netmodels.algorithms.arrays), without one object per message: equal to
# ArraySchedule.from_schedule of the builders above, message for message.
from . import arrays as _arrays  # noqa: E402

_RANK = _arrays.RANK


def _array_schedule(name: str, nprocs: int, pairs, **meta) -> _arrays.ArraySchedule:
    steps = [_arrays.ArrayStep.of(s, d) for s, d in pairs]
    return _arrays.schedule_of(name, nprocs, 0, steps, meta)


def dissemination_arrays(nprocs: int) -> _arrays.ArraySchedule:
    """:func:`dissemination` in array form."""
    p = positive_int("nprocs", nprocs)
    src = np.arange(p, dtype=_RANK)
    wide = np.int64 if p > 2**30 else _RANK           # r + 2^k stays below 2^31
    r = src.astype(wide)
    pairs = []
    for k in range(ceil_log(2, p)):
        d = r + 2**k
        d[d >= p] -= p
        pairs.append((src, d))
    return _array_schedule("dissemination", p, pairs)


def nway_dissemination_arrays(nprocs: int, n: int = 2) -> _arrays.ArraySchedule:
    """:func:`nway_dissemination` in array form.  Whether target j of round k wraps onto the
    sender or onto an earlier target depends on ``j (n+1)^k mod P`` only, not on the rank."""
    p = positive_int("nprocs", nprocs)
    n = positive_int("n", n)
    r = np.arange(p, dtype=np.int64)
    pairs = []
    for k in range(ceil_log(n + 1, p)):
        stride = (n + 1) ** k
        offsets = []
        for j in range(1, n + 1):
            o = j * stride % p
            if o != 0 and o not in offsets:
                offsets.append(o)
        o = np.array(offsets, dtype=np.int64)
        dst = (r[:, None] + o[None, :]) % p
        pairs.append((np.repeat(r, o.size), dst.ravel()))
    return _array_schedule("nway_dissemination", p, pairs, n=n)


def _tournament_pairs(p: int):
    out = []
    for k in range(ceil_log(2, p)):
        src = np.arange(2**k, p, 2 ** (k + 1), dtype=_RANK)
        out.append((src, src - 2**k))
    return out


def tournament_arrays(nprocs: int, release: str = "tree") -> _arrays.ArraySchedule:
    """:func:`tournament` in array form."""
    p = positive_int("nprocs", nprocs)
    if release not in ("tree", "flat"):
        raise ValueError(f"release must be 'tree' or 'flat', got {release!r}")
    rounds = _tournament_pairs(p)
    if release == "tree":
        wake = [(w, r) for r, w in reversed(rounds)]
    else:
        wake = [(np.zeros(p - 1, dtype=_RANK), np.arange(1, p, dtype=_RANK))]
    return _array_schedule("tournament", p, rounds + wake, release=release)


def binomial_arrays(nprocs: int) -> _arrays.ArraySchedule:
    """:func:`binomial` in array form."""
    p = positive_int("nprocs", nprocs)
    rounds = _tournament_pairs(p)
    return _array_schedule("binomial", p, rounds + [(w, r) for r, w in reversed(rounds)])


def butterfly_arrays(nprocs: int) -> _arrays.ArraySchedule:
    """:func:`butterfly` in array form (pairs merged and sorted as there)."""
    p = positive_int("nprocs", nprocs)
    q = 2 ** ceil_log(2, p)
    v = np.arange(q, dtype=np.int64)
    real = np.where(v < p, v, v - q // 2)
    if p == q:                                     # a power of two: every rank one role
        s = np.arange(p, dtype=_RANK)
        return _array_schedule("butterfly", p, [(s, s ^ 2**k) for k in range(ceil_log(2, p))])
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
    return _array_schedule("butterfly", p, pairs)


#: algorithm name -> array builder (keyword options as in :data:`OPTIONS`)
ARRAY_BUILDERS = {
    "dissemination": dissemination_arrays,
    "nway_dissemination": nway_dissemination_arrays,
    "tournament": tournament_arrays,
    "binomial": binomial_arrays,
    "butterfly": butterfly_arrays,
}


def build_arrays(algorithm: str, nprocs: int, **options) -> _arrays.ArraySchedule:
    """:func:`build` in array form, for the algorithms of :data:`ARRAY_BUILDERS`."""
    if algorithm not in ARRAY_BUILDERS:
        raise ValueError(f"algorithm must be one of {sorted(ARRAY_BUILDERS)} in array form, got {algorithm!r}")
    check_options(algorithm, options)
    return ARRAY_BUILDERS[algorithm](nprocs, **options)


from .registry import register  # noqa: E402


@register("barrier.central_counter")
def _central_counter(nprocs: int, nelems: int = 0) -> _arrays.ArraySchedule:
    """Central counter: every rank reports to rank 0, which releases them all."""
    return _arrays.ArraySchedule.from_schedule(central_counter(nprocs))


@register("barrier.combining_tree")
def _combining_tree(nprocs: int, nelems: int = 0, fan_in: int = 4) -> _arrays.ArraySchedule:
    """Combining tree of fan-in ``fan_in``: arrivals up the tree, release down it."""
    return _arrays.ArraySchedule.from_schedule(combining_tree(nprocs, fan_in))


@register("barrier.pairwise_exchange")
def _pairwise_exchange(nprocs: int, nelems: int = 0) -> _arrays.ArraySchedule:
    """Pairwise exchange (butterfly with the extra ranks folded in)."""
    return _arrays.ArraySchedule.from_schedule(pairwise_exchange(nprocs))


@register("barrier.dissemination")
def _dissemination(nprocs: int, nelems: int = 0) -> _arrays.ArraySchedule:
    """Dissemination: in round k rank r signals r + 2^k."""
    return dissemination_arrays(nprocs)


@register("barrier.nway_dissemination")
def _nway(nprocs: int, nelems: int = 0, n: int = 2) -> _arrays.ArraySchedule:
    """n-way dissemination: in round k rank r signals r + j (n+1)^k, j = 1..n."""
    return nway_dissemination_arrays(nprocs, n)


@register("barrier.tournament")
def _tournament(nprocs: int, nelems: int = 0, release: str = "tree") -> _arrays.ArraySchedule:
    """Tournament: winners move up, then the champion releases the others."""
    return tournament_arrays(nprocs, release)


@register("barrier.binomial")
def _binomial(nprocs: int, nelems: int = 0) -> _arrays.ArraySchedule:
    """Binomial tree: fan-in to rank 0, then fan-out."""
    return binomial_arrays(nprocs)


@register("barrier.butterfly")
def _butterfly(nprocs: int, nelems: int = 0) -> _arrays.ArraySchedule:
    """Butterfly: pairwise exchanges at distances 1, 2, 4, ..."""
    return butterfly_arrays(nprocs)
