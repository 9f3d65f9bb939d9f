"""Global combining (allreduce) algorithms as schedules.

Every rank starts with a vector of ``N`` elements and ends with the element-wise
combination of all ranks' vectors.  Each builder returns a :class:`~netmodels.algorithms.schedule.Schedule`
(counts in vector *elements*) for any ``P >= 1`` and ``N >= 0``; transfers of zero
elements are left out, so ``N = 0`` gives a schedule without steps.

The three algorithms of Littlefield (1992, "Modeling node bandwidth limits and their
effect on vector combining algorithms", section 3.2 and the appendix) run on a
``W x H`` logical mesh given as ``mesh=(W, H)``; ``W * H`` must equal ``P``.
Rank ``r`` sits at column ``x = r % W`` and row ``y = r // W``; row 0 is the
*bottom* row and node ``(0, 0)`` (rank 0) is the lower-left corner, where the
paper's Fence collects its results.  ``mesh=None`` takes the most nearly square
factorisation ``W >= H`` (what ``MPI.Compute_dims(P, 2)`` returns).

- ``tree``: binary combining along every row towards column 0 (distances 1, 2, 4, ...),
  then along column 0 towards node (0, 0), then the same steps reversed to broadcast:
  ``ceil(log2 W) + ceil(log2 H)`` steps each way (the paper's ``log2 W + log2 H`` when
  W and H are powers of two).  Other widths are handled by letting a node whose
  partner would lie outside the mesh sit the step out.
- ``snake``: a pipelined chain along the boustrophedon path through the mesh (row 0
  left to right, row 1 right to left, ...), blocks of ``block`` elements; the last
  node of the snake feeds block ``b`` inward at step ``b``, node 0 of the snake
  finishes it and sends it back outward.  ``B + 2P - 3`` steps for ``B`` blocks
  (the paper's timeline), any ``P``: the snake is a path on any full mesh.
- ``fence``: blocks flow down every column and left along the bottom row; column
  ``x`` starts block ``b`` at step ``b + (W - 1 - x)``, so the block coming down a
  column reaches the bottom row in the same step as the one coming from the right
  and the bottom-row nodes combine three vectors at once (the paper's 3-way
  combining).  Results go back the way they came, right along the bottom row and up
  every column.  ``B + 2W + 2H - 5`` steps.  Figure 3 of the paper is missing from
  the text; this timing is reconstructed from section 3.2 and reproduces the
  appendix timeline (L = 1, 2, 3, 4, 6, 4, 3, 2, 1).  ``W = 1`` or ``H = 1``
  degenerate to a chain.

The algorithms MPI libraries use (rank order, no mesh):

- ``ring``: reduce-scatter then allgather around the ring, ``2(P - 1)`` steps, the
  vector cut into ``P`` nearly equal blocks (sizes differ by at most one element).
- ``recursive_doubling``: ``log2 P'`` full-vector exchanges, ``P'`` the largest power
  of two ``<= P``; the other ``r = P - P'`` ranks first fold their vector into a
  neighbour (even rank ``2i`` into ``2i + 1``, ``i < r``) and get the result back
  at the end (the usual MPICH treatment of non-powers of two).
- ``rabenseifner``: recursive halving (reduce-scatter, distances 1, 2, 4, ...) then
  recursive doubling (allgather) among the ``P'`` ranks, with the same fold for the
  other ``r``; an odd range is cut at ``lo + (hi - lo) // 2``.
- ``binomial``: binomial-tree reduce to rank 0 then binomial broadcast,
  ``2 ceil(log2 P)`` steps of the whole vector.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from .._check import positive_int
from .schedule import Schedule, Transfer

#: Per-message overhead expressed in vector elements (α/β in elements): the block
#: size whose transfer time equals the cost of one more message.  8192 doubles is
#: typical of mpi4py on shared memory (some µs per message, about 1 ns per element).
OVERHEAD_ELEMS = 8192

ALGORITHMS = ("tree", "snake", "fence", "ring", "recursive_doubling", "rabenseifner", "binomial")
MESH_ALGORITHMS = ("tree", "snake", "fence")
PIPELINED = ("snake", "fence")


# --------------------------------------------------------------------------- helpers
def default_mesh(nprocs: int) -> tuple[int, int]:
    """The most nearly square ``(W, H)`` with ``W * H == nprocs`` and ``W >= H``."""
    nprocs = positive_int("nprocs", nprocs)
    h = max(d for d in range(1, math.isqrt(nprocs) + 1) if nprocs % d == 0)
    return nprocs // h, h


def check_mesh(nprocs: int, mesh) -> tuple[int, int]:
    """Validate ``mesh=(W, H)`` against ``nprocs`` (None: :func:`default_mesh`)."""
    if mesh is None:
        return default_mesh(nprocs)
    try:
        w, h = mesh
    except (TypeError, ValueError):
        raise ValueError(f"mesh must be a pair (W, H) of integers >= 1 with W*H == {nprocs}, "
                         f"got {mesh!r}") from None
    w, h = positive_int("mesh width W", w), positive_int("mesh height H", h)
    if w * h != nprocs:
        raise ValueError(f"mesh {w}x{h} has {w * h} nodes, but there are {nprocs} ranks: "
                         f"W*H must equal {nprocs}")
    return w, h


def mesh_rank(x: int, y: int, mesh: tuple[int, int]) -> int:
    """Rank at column ``x``, row ``y`` of ``mesh=(W, H)``."""
    return y * mesh[0] + x


def snake_order(mesh: tuple[int, int]) -> list[int]:
    """Ranks along the snake: row 0 left to right, row 1 right to left, and so on."""
    w, h = mesh
    return [mesh_rank(x if y % 2 == 0 else w - 1 - x, y, mesh) for y in range(h) for x in range(w)]


def split(nelems: int, parts: int) -> list[tuple[int, int]]:
    """``(start, count)`` of ``parts`` nearly equal blocks of ``nelems`` (the first ones larger)."""
    q, r = divmod(nelems, parts)
    out, start = [], 0
    for i in range(parts):
        c = q + (i < r)
        out.append((start, c))
        start += c
    return out


def blocks(nelems: int, block: int) -> list[tuple[int, int]]:
    """``(start, count)`` of consecutive blocks of ``block`` elements (the last one shorter)."""
    return [(s, min(block, nelems - s)) for s in range(0, nelems, block)]


def default_block(algorithm: str, nprocs: int, nelems: int, mesh=None, *,
                  overhead_elems: float = OVERHEAD_ELEMS) -> int:
    """Block size for the pipelined algorithms (elements); the whole vector for the others.

    A pipeline of depth ``K`` (extra steps beyond the ``B`` blocks: ``2P - 3`` for snake,
    ``2W + 2H - 5`` for fence) costs about ``(N/S + K)(a + bS)``; its minimum is at
    ``S = sqrt(N (a/b) / K)``, the square-root rule of the paper's ``S_opt``.
    ``overhead_elems`` is ``a/b``, the per-message overhead in elements.
    """
    algorithm = _check_algorithm(algorithm)
    nprocs = positive_int("nprocs", nprocs)
    nelems = positive_int("nelems", nelems, minimum=0)
    if algorithm not in PIPELINED or nelems <= 1:
        return max(nelems, 1)
    w, h = check_mesh(nprocs, mesh)
    depth = max(2 * nprocs - 3 if algorithm == "snake" else 2 * w + 2 * h - 5, 1)
    s = math.ceil(math.sqrt(nelems * overhead_elems / depth))
    return max(1, min(nelems, s))


def _check_algorithm(algorithm) -> str:
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}; got {algorithm!r}")
    return algorithm


class _Steps:
    """Collect transfers by step index; empty steps and zero-count transfers are dropped."""

    def __init__(self):
        self.by_step = defaultdict(list)

    def add(self, step, src, dst, start, count, combine):
        if count > 0:
            self.by_step[step].append(Transfer(src, dst, start, count, combine))

    def steps(self):
        return [tuple(self.by_step[t]) for t in sorted(self.by_step) if self.by_step[t]]


def _reduce_then_broadcast(up: list, nelems: int) -> _Steps:
    """Whole-vector steps: ``up[t]`` lists the (src, dst) pairs that combine at step t; the
    broadcast then runs the same pairs backwards, in reverse order, as copies."""
    st = _Steps()
    for t, pairs in enumerate(up):
        for src, dst in pairs:
            st.add(t, src, dst, 0, nelems, True)
    for t, pairs in enumerate(reversed(up)):
        for src, dst in pairs:
            st.add(len(up) + t, dst, src, 0, nelems, False)
    return st


# --------------------------------------------------------------------------- Littlefield's three
def tree(nprocs: int, nelems: int, mesh=None) -> Schedule:
    """Binary combining along rows, then column 0, then the broadcast back (see module doc)."""
    w, h = check_mesh(nprocs, mesh)
    up = []
    d = 1
    while d < w:
        up.append([(mesh_rank(x, y, (w, h)), mesh_rank(x - d, y, (w, h)))
                   for y in range(h) for x in range(d, w, 2 * d)])
        d *= 2
    d = 1
    while d < h:
        up.append([(mesh_rank(0, y, (w, h)), mesh_rank(0, y - d, (w, h))) for y in range(d, h, 2 * d)])
        d *= 2
    st = _reduce_then_broadcast(up, nelems)
    return Schedule("tree", nprocs, nelems, st.steps(), {"mesh": (w, h), "block": nelems})


def snake(nprocs: int, nelems: int, block: int | None = None, mesh=None) -> Schedule:
    """Pipelined chain along the snake through the mesh (see module doc)."""
    w, h = check_mesh(nprocs, mesh)
    block = default_block("snake", nprocs, nelems, (w, h)) if block is None else positive_int("block", block)
    order = snake_order((w, h))
    p = nprocs
    st = _Steps()
    for b, (start, count) in enumerate(blocks(nelems, block)):
        for k in range(p - 1):                      # inward: snake node P-1-k -> P-2-k
            st.add(b + k, order[p - 1 - k], order[p - 2 - k], start, count, True)
        for j in range(p - 1):                      # outward: snake node j -> j+1
            st.add(b + p - 1 + j, order[j], order[j + 1], start, count, False)
    return Schedule("snake", nprocs, nelems, st.steps(), {"mesh": (w, h), "block": block, "order": order})


def fence(nprocs: int, nelems: int, block: int | None = None, mesh=None) -> Schedule:
    """Pipelined down the columns and left along the bottom row, 3-way combining (see module doc)."""
    w, h = check_mesh(nprocs, mesh)
    block = default_block("fence", nprocs, nelems, (w, h)) if block is None else positive_int("block", block)
    m = (w, h)
    st = _Steps()
    for b, (start, count) in enumerate(blocks(nelems, block)):
        for x in range(w):
            for y in range(1, h):                   # down column x
                st.add(b + (w - 1 - x) + (h - 1 - y), mesh_rank(x, y, m), mesh_rank(x, y - 1, m),
                       start, count, True)
        for x in range(1, w):                       # left along the bottom row
            st.add(b + h - 1 + (w - 1 - x), mesh_rank(x, 0, m), mesh_rank(x - 1, 0, m), start, count, True)
        out = b + w + h - 2                         # result leaves node (0, 0)
        for x in range(w - 1):                      # right along the bottom row
            st.add(out + x, mesh_rank(x, 0, m), mesh_rank(x + 1, 0, m), start, count, False)
        for x in range(w):
            for y in range(h - 1):                  # up column x
                st.add(out + x + y, mesh_rank(x, y, m), mesh_rank(x, y + 1, m), start, count, False)
    return Schedule("fence", nprocs, nelems, st.steps(), {"mesh": m, "block": block})


# --------------------------------------------------------------------------- what MPI libraries do
def ring(nprocs: int, nelems: int) -> Schedule:
    """Ring reduce-scatter then ring allgather (see module doc)."""
    p = positive_int("nprocs", nprocs)
    parts = split(nelems, p)
    st = _Steps()
    for k in range(p - 1):
        for r in range(p):
            start, count = parts[(r - k) % p]
            st.add(k, r, (r + 1) % p, start, count, True)
    for k in range(p - 1):
        for r in range(p):
            start, count = parts[(r + 1 - k) % p]
            st.add(p - 1 + k, r, (r + 1) % p, start, count, False)
    return Schedule("ring", nprocs, nelems, st.steps(), {"block": max(c for _, c in parts)})


def _fold(p: int):
    """Power-of-two core for non-powers of two: (P', r, real rank of virtual rank v)."""
    p2 = 1 << (p.bit_length() - 1)
    r = p - p2
    return p2, r, (lambda v: 2 * v + 1 if v < r else v + r)


def _fold_in(st: _Steps, r: int, nelems: int) -> int:
    """Step 0 of the fold: even rank ``2i`` (``i < r``) combines its vector into ``2i + 1``.
    Returns the next free step (1 if there was a fold, else 0)."""
    for i in range(r):
        st.add(0, 2 * i, 2 * i + 1, 0, nelems, True)
    return 1 if r else 0


def _fold_out(st: _Steps, t: int, r: int, nelems: int) -> None:
    """Last step of the fold: rank ``2i + 1`` sends the result back to ``2i`` (``i < r``)."""
    for i in range(r):
        st.add(t, 2 * i + 1, 2 * i, 0, nelems, False)


def recursive_doubling(nprocs: int, nelems: int) -> Schedule:
    """Full-vector exchanges at distances 1, 2, 4, ... (see module doc)."""
    p = positive_int("nprocs", nprocs)
    p2, r, real = _fold(p)
    st = _Steps()
    t = _fold_in(st, r, nelems)
    d = 1
    while d < p2:
        for v in range(p2):
            st.add(t, real(v), real(v ^ d), 0, nelems, True)
        d, t = 2 * d, t + 1
    _fold_out(st, t, r, nelems)
    return Schedule("recursive_doubling", nprocs, nelems, st.steps(), {"block": nelems})


def rabenseifner(nprocs: int, nelems: int) -> Schedule:
    """Recursive halving reduce-scatter then recursive doubling allgather (see module doc)."""
    p = positive_int("nprocs", nprocs)
    p2, r, real = _fold(p)
    st = _Steps()
    t = _fold_in(st, r, nelems)
    rng = [(0, nelems)] * p2
    history = []
    d = 1
    while d < p2:
        history.append(list(rng))
        new = []
        for v in range(p2):
            lo, hi = rng[v]
            mid = lo + (hi - lo) // 2
            keep, give = ((lo, mid), (mid, hi)) if v & d == 0 else ((mid, hi), (lo, mid))
            st.add(t, real(v), real(v ^ d), give[0], give[1] - give[0], True)
            new.append(keep)
        rng, d, t = new, 2 * d, t + 1
    while d > 1:
        d //= 2
        for v in range(p2):
            lo, hi = rng[v]
            st.add(t, real(v), real(v ^ d), lo, hi - lo, False)
        rng, t = history.pop(), t + 1
    _fold_out(st, t, r, nelems)
    return Schedule("rabenseifner", nprocs, nelems, st.steps(), {"block": nelems})


def binomial(nprocs: int, nelems: int) -> Schedule:
    """Binomial-tree reduce to rank 0, then binomial broadcast (see module doc)."""
    p = positive_int("nprocs", nprocs)
    up = []
    d = 1
    while d < p:
        up.append([(r, r - d) for r in range(d, p, 2 * d)])
        d *= 2
    st = _reduce_then_broadcast(up, nelems)
    return Schedule("binomial", nprocs, nelems, st.steps(), {"block": nelems})


# --------------------------------------------------------------------------- entry point
def build(algorithm: str, nprocs: int, nelems: int, block: int | None = None, mesh=None) -> Schedule:
    """The schedule of ``algorithm`` on ``nprocs`` ranks for vectors of ``nelems`` elements.

    ``block`` (elements, >= 1) is used by ``snake`` and ``fence`` (None: :func:`default_block`)
    and ignored by the others; ``mesh=(W, H)`` by ``tree``, ``snake`` and ``fence``
    (None: :func:`default_mesh`) and, when given, checked against ``nprocs`` for all.
    """
    algorithm = _check_algorithm(algorithm)
    nprocs = positive_int("nprocs", nprocs)
    nelems = positive_int("nelems", nelems, minimum=0)
    if block is not None:
        block = positive_int("block", block)
    mesh = check_mesh(nprocs, mesh)
    if algorithm == "tree":
        s = tree(nprocs, nelems, mesh)
    elif algorithm == "snake":
        s = snake(nprocs, nelems, block, mesh)
    elif algorithm == "fence":
        s = fence(nprocs, nelems, block, mesh)
    else:
        s = globals()[algorithm](nprocs, nelems)
        s.meta["mesh"] = mesh
    return s


# --------------------------------------------------------------------------- array form
# The same schedules as ring, recursive_doubling, rabenseifner and binomial above, built
# as columns (netmodels.algorithms.arrays) without one object per transfer: equal to
# ArraySchedule.from_schedule of their per-transfer twins, transfer for transfer.
from . import arrays as _arrays  # noqa: E402
from .arrays import nonzero_step as _step, schedule_of as _schedule_of  # noqa: E402


def _split_arrays(nelems: int, parts: int):
    """:func:`split` as two int64 arrays (start, count)."""
    q, r = divmod(nelems, parts)
    count = np.full(parts, q, dtype=np.int64)
    count[:r] += 1
    return np.cumsum(count) - count, count


def ring_arrays(nprocs: int, nelems: int) -> _arrays.ArraySchedule:
    """:func:`ring` in array form.  The columns of every step are views of one pair of
    doubled block tables, so 2(P - 1) steps cost O(P) memory."""
    p = positive_int("nprocs", nprocs)
    nelems = positive_int("nelems", nelems, minimum=0)
    start, count = _split_arrays(nelems, p)
    start2, count2 = np.concatenate((start, start)), np.concatenate((count, count))
    src = np.arange(p, dtype=_arrays.RANK)
    dst = np.roll(src, -1)
    steps = []
    for k in range(p - 1):                      # reduce-scatter: rank r sends block (r - k) mod P
        sl = slice(p - k, 2 * p - k)
        steps.append(_step(src, dst, start2[sl], count2[sl], True))
    for k in range(p - 1):                      # allgather: rank r sends block (r + 1 - k) mod P
        sl = slice(p + 1 - k, 2 * p + 1 - k) if k >= 1 else slice(1, p + 1)
        steps.append(_step(src, dst, start2[sl], count2[sl], False))
    return _schedule_of("ring", p, nelems, steps, {"block": int(count.max())})


def _fold_arrays(p: int):
    """(P', r, real rank of every virtual rank as an array) of :func:`_fold`."""
    p2, r, _ = _fold(p)
    v = np.arange(p2, dtype=np.int64)
    return p2, r, np.where(v < r, 2 * v + 1, v + r).astype(_arrays.RANK)


def _fold_steps(r: int, nelems: int):
    odd = np.arange(r, dtype=_arrays.RANK) * 2 + 1
    return _step(odd - 1, odd, 0, nelems, True), _step(odd, odd - 1, 0, nelems, False)


def recursive_doubling_arrays(nprocs: int, nelems: int) -> _arrays.ArraySchedule:
    """:func:`recursive_doubling` in array form."""
    p = positive_int("nprocs", nprocs)
    nelems = positive_int("nelems", nelems, minimum=0)
    p2, r, real = _fold_arrays(p)
    fold_in, fold_out = _fold_steps(r, nelems)
    v = np.arange(p2)
    steps = [fold_in]
    d = 1
    while d < p2:
        steps.append(_step(real, real[v ^ d], 0, nelems, True))
        d *= 2
    steps.append(fold_out)
    return _schedule_of("recursive_doubling", p, nelems, steps, {"block": nelems})


def rabenseifner_arrays(nprocs: int, nelems: int) -> _arrays.ArraySchedule:
    """:func:`rabenseifner` in array form."""
    p = positive_int("nprocs", nprocs)
    nelems = positive_int("nelems", nelems, minimum=0)
    p2, r, real = _fold_arrays(p)
    fold_in, fold_out = _fold_steps(r, nelems)
    v = np.arange(p2)
    lo, hi = np.zeros(p2, dtype=np.int64), np.full(p2, nelems, dtype=np.int64)
    steps, history = [fold_in], []
    d = 1
    while d < p2:
        history.append((lo, hi))
        mid = lo + (hi - lo) // 2
        low_half = (v & d) == 0
        give_lo, give_hi = np.where(low_half, mid, lo), np.where(low_half, hi, mid)
        steps.append(_step(real, real[v ^ d], give_lo, give_hi - give_lo, True))
        lo, hi = np.where(low_half, lo, mid), np.where(low_half, mid, hi)
        d *= 2
    while d > 1:
        d //= 2
        steps.append(_step(real, real[v ^ d], lo, hi - lo, False))
        lo, hi = history.pop()
    steps.append(fold_out)
    return _schedule_of("rabenseifner", p, nelems, steps, {"block": nelems})


def _binomial_pairs(p: int):
    """The fan-in rounds of :func:`binomial`: (src, dst) arrays, distance 1, 2, 4, ..."""
    out, d = [], 1
    while d < p:
        src = np.arange(d, p, 2 * d, dtype=_arrays.RANK)
        out.append((src, src - d))
        d *= 2
    return out


def binomial_arrays(nprocs: int, nelems: int) -> _arrays.ArraySchedule:
    """:func:`binomial` (reduce then broadcast) in array form."""
    p = positive_int("nprocs", nprocs)
    nelems = positive_int("nelems", nelems, minimum=0)
    up = _binomial_pairs(p)
    steps = [_step(s, d, 0, nelems, True) for s, d in up]
    steps += [_step(d, s, 0, nelems, False) for s, d in reversed(up)]
    return _schedule_of("binomial", p, nelems, steps, {"block": nelems})


#: algorithm -> array builder, for the algorithms that have one
ARRAY_BUILDERS = {"ring": ring_arrays, "recursive_doubling": recursive_doubling_arrays,
                  "rabenseifner": rabenseifner_arrays, "binomial": binomial_arrays}


def build_arrays(algorithm: str, nprocs: int, nelems: int, mesh=None) -> _arrays.ArraySchedule:
    """:func:`build` in array form, for the algorithms of :data:`ARRAY_BUILDERS` (meta included)."""
    if algorithm not in ARRAY_BUILDERS:
        raise ValueError(f"algorithm must be one of {', '.join(ARRAY_BUILDERS)} in array form; "
                         f"got {algorithm!r}")
    nprocs = positive_int("nprocs", nprocs)
    mesh = check_mesh(nprocs, mesh)
    s = ARRAY_BUILDERS[algorithm](nprocs, nelems)
    s.meta["mesh"] = mesh
    return s


from .registry import register  # noqa: E402


@register("allreduce.ring")
def _ring(nprocs: int, nelems: int) -> _arrays.ArraySchedule:
    """Ring reduce-scatter then ring allgather."""
    return build_arrays("ring", nprocs, nelems)


@register("allreduce.recursive_doubling")
def _recursive_doubling(nprocs: int, nelems: int) -> _arrays.ArraySchedule:
    """Full-vector exchanges at distances 1, 2, 4, ..., non-powers of two folded in."""
    return build_arrays("recursive_doubling", nprocs, nelems)


@register("allreduce.rabenseifner")
def _rabenseifner(nprocs: int, nelems: int) -> _arrays.ArraySchedule:
    """Recursive halving reduce-scatter then recursive doubling allgather."""
    return build_arrays("rabenseifner", nprocs, nelems)


@register("allreduce.binomial")
def _binomial(nprocs: int, nelems: int) -> _arrays.ArraySchedule:
    """Binomial-tree reduce to rank 0, then binomial broadcast."""
    return build_arrays("binomial", nprocs, nelems)


@register("allreduce.tree")
def _tree(nprocs: int, nelems: int, mesh=None) -> _arrays.ArraySchedule:
    """Littlefield's Tree: binary combining along the mesh's rows, then column 0, and back."""
    return _arrays.ArraySchedule.from_schedule(build("tree", nprocs, nelems, mesh=mesh))


@register("allreduce.snake")
def _snake(nprocs: int, nelems: int, block=None, mesh=None) -> _arrays.ArraySchedule:
    """Littlefield's Snake: a pipelined chain along the boustrophedon path of the mesh."""
    return _arrays.ArraySchedule.from_schedule(build("snake", nprocs, nelems, block, mesh))


@register("allreduce.fence")
def _fence(nprocs: int, nelems: int, block=None, mesh=None) -> _arrays.ArraySchedule:
    """Littlefield's Fence: pipelined down the columns and along the bottom row, 3-way combining."""
    return _arrays.ArraySchedule.from_schedule(build("fence", nprocs, nelems, block, mesh))
