"""Global combining (allreduce) algorithms as schedules.

Every rank starts with a vector of ``N`` elements and ends with the element-wise
combination of all ranks' vectors.  Each builder is registered as ``allreduce.NAME`` in
:mod:`netmodels.algorithms.registry` and returns an
:class:`~netmodels.algorithms.arrays.ArraySchedule` (counts in vector *elements*;
``.to_schedule()`` gives the per-transfer view) for any ``P >= 1`` and ``N >= 0``;
transfers of zero elements are left out, so ``N = 0`` gives a schedule without steps.
Every schedule records the mesh it was built for in ``meta["mesh"]`` (the default mesh
for the algorithms that do not use one).

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

import numpy as np

from .._check import positive_int
from .arrays import RANK, ArraySchedule, ArrayStep, nonzero_step, schedule_of
from .registry import get, register

#: Per-message overhead expressed in vector elements (α/β in elements): the block
#: size whose transfer time equals the cost of one more message.  8192 doubles is
#: typical of mpi4py on shared memory (some µs per message, about 1 ns per element).
OVERHEAD_ELEMS = 8192


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


def mesh_rank(x, y, mesh: tuple[int, int]):
    """Rank at column ``x``, row ``y`` of ``mesh=(W, H)`` (integers or arrays)."""
    return y * mesh[0] + x


def snake_order(mesh: tuple[int, int]) -> list[int]:
    """Ranks along the snake: row 0 left to right, row 1 right to left, and so on."""
    w, h = mesh
    return [mesh_rank(x if y % 2 == 0 else w - 1 - x, y, mesh) for y in range(h) for x in range(w)]


def split(nelems: int, parts: int) -> list[tuple[int, int]]:
    """``(start, count)`` of ``parts`` nearly equal blocks of ``nelems`` (the first ones larger)."""
    start, count = split_arrays(nelems, parts)
    return list(zip(start.tolist(), count.tolist()))


def split_arrays(nelems: int, parts: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`split` as two int64 arrays ``(start, count)``."""
    q, r = divmod(nelems, parts)
    count = np.full(parts, q, dtype=np.int64)
    count[:r] += 1
    return np.cumsum(count) - count, count


def blocks(nelems: int, block: int) -> list[tuple[int, int]]:
    """``(start, count)`` of consecutive blocks of ``block`` elements (the last one shorter)."""
    return [(s, min(block, nelems - s)) for s in range(0, nelems, block)]


def default_block(algorithm: str, nprocs: int, nelems: int, mesh=None, *,
                  overhead_elems: float = OVERHEAD_ELEMS) -> int:
    """Block size of a pipelined allreduce (elements); the whole vector for the others.

    ``algorithm`` is an allreduce of the registry; it is pipelined when its builder takes a
    ``block`` option (snake, fence).  A pipeline of depth ``K`` (extra steps beyond the
    ``B`` blocks: ``2P - 3`` for snake, ``2W + 2H - 5`` for fence) costs about
    ``(N/S + K)(a + bS)``; its minimum is at ``S = sqrt(N (a/b) / K)``, the square-root
    rule of the paper's ``S_opt``.  ``overhead_elems`` is ``a/b``, the per-message
    overhead in elements.
    """
    algorithm = get(algorithm, "allreduce").short
    nprocs = positive_int("nprocs", nprocs)
    nelems = positive_int("nelems", nelems, minimum=0)
    if "block" not in get(algorithm, "allreduce").options or nelems <= 1:
        return max(nelems, 1)
    w, h = check_mesh(nprocs, mesh)
    depth = max(2 * nprocs - 3 if algorithm == "snake" else 2 * w + 2 * h - 5, 1)
    s = math.ceil(math.sqrt(nelems * overhead_elems / depth))
    return max(1, min(nelems, s))


def _reduce_then_broadcast(name: str, nprocs: int, nelems: int, up, meta) -> ArraySchedule:
    """Whole-vector steps: ``up[t] = (src, dst)`` arrays combine at step t; the broadcast
    then runs the same pairs backwards, in reverse order, as copies."""
    steps = [nonzero_step(s, d, 0, nelems, True) for s, d in up]
    steps += [nonzero_step(d, s, 0, nelems, False) for s, d in reversed(up)]
    return schedule_of(name, nprocs, nelems, steps, meta)


def _pipeline(name: str, nprocs: int, nelems: int, block: int, pattern, meta) -> ArraySchedule:
    """Every block of ``block`` elements runs the same ``pattern`` of transfers, block ``b``
    ``b`` steps after block 0.  ``pattern = (step, src, dst, combine)`` lists block 0's
    transfers; within a step the transfers are ordered by block, then by pattern order."""
    step0, src0, dst0, comb0 = (np.asarray(c) for c in pattern)
    start = np.arange(0, nelems, block, dtype=np.int64)
    count = np.minimum(block, nelems - start)
    nb, k = start.size, step0.size
    step = (np.arange(nb)[:, None] + step0[None, :]).ravel()
    order = np.argsort(step, kind="stable")
    step = step[order]
    src, dst = np.tile(src0, nb)[order], np.tile(dst0, nb)[order]
    comb = np.tile(comb0, nb)[order]
    st, ct = np.repeat(start, k)[order], np.repeat(count, k)[order]
    cuts = np.flatnonzero(np.diff(step)) + 1
    steps = [ArrayStep.of(*cols) for cols in zip(*(np.split(c, cuts) for c in (src, dst, st, ct, comb)))]
    return schedule_of(name, nprocs, nelems, steps if nb and k else [], meta)


def _block(algorithm, nprocs, nelems, block, mesh):
    return (default_block(algorithm, nprocs, nelems, mesh) if block is None
            else positive_int("block", block))


# --------------------------------------------------------------------------- Littlefield's three
@register("allreduce.tree")
def tree(nprocs: int, nelems: int, mesh=None) -> ArraySchedule:
    """Littlefield's Tree: binary combining along the mesh's rows, then column 0, and back."""
    p = positive_int("nprocs", nprocs)
    n = positive_int("nelems", nelems, minimum=0)
    w, h = m = check_mesh(p, mesh)
    up = []
    d = 1
    while d < w:
        x, y = np.meshgrid(np.arange(d, w, 2 * d), np.arange(h))
        src = mesh_rank(x, y, m).ravel().astype(RANK)
        up.append((src, src - d))
        d *= 2
    d = 1
    while d < h:
        src = mesh_rank(0, np.arange(d, h, 2 * d), m).astype(RANK)
        up.append((src, src - d * w))
        d *= 2
    return _reduce_then_broadcast("tree", p, n, up, {"mesh": m, "block": n})


@register("allreduce.snake")
def snake(nprocs: int, nelems: int, block: int | None = None, mesh=None) -> ArraySchedule:
    """Littlefield's Snake: a pipelined chain along the boustrophedon path of the mesh."""
    p = positive_int("nprocs", nprocs)
    n = positive_int("nelems", nelems, minimum=0)
    m = check_mesh(p, mesh)
    block = _block("snake", p, n, block, m)
    order = snake_order(m)
    o = np.asarray(order, dtype=RANK)
    k = np.arange(p - 1)
    pattern = (np.concatenate((k, p - 1 + k)),                    # inward P-1-k -> P-2-k, then outward j -> j+1
               np.concatenate((o[p - 1 - k], o[k])), np.concatenate((o[p - 2 - k], o[k + 1])),
               np.repeat([True, False], p - 1))
    return _pipeline("snake", p, n, block, pattern, {"mesh": m, "block": block, "order": order})


@register("allreduce.fence")
def fence(nprocs: int, nelems: int, block: int | None = None, mesh=None) -> ArraySchedule:
    """Littlefield's Fence: pipelined down the columns and along the bottom row, 3-way combining."""
    p = positive_int("nprocs", nprocs)
    n = positive_int("nelems", nelems, minimum=0)
    w, h = m = check_mesh(p, mesh)
    block = _block("fence", p, n, block, m)
    pat = []                                        # (step, src, dst, combine) of block 0
    for x in range(w):
        for y in range(1, h):                       # down column x
            pat.append(((w - 1 - x) + (h - 1 - y), mesh_rank(x, y, m), mesh_rank(x, y - 1, m), True))
    for x in range(1, w):                           # left along the bottom row
        pat.append((h - 1 + (w - 1 - x), mesh_rank(x, 0, m), mesh_rank(x - 1, 0, m), True))
    out = w + h - 2                                 # result leaves node (0, 0)
    for x in range(w - 1):                          # right along the bottom row
        pat.append((out + x, mesh_rank(x, 0, m), mesh_rank(x + 1, 0, m), False))
    for x in range(w):
        for y in range(h - 1):                      # up column x
            pat.append((out + x + y, mesh_rank(x, y, m), mesh_rank(x, y + 1, m), False))
    pattern = tuple(np.array(c) for c in zip(*pat)) if pat else (np.zeros(0, int),) * 3 + (np.zeros(0, bool),)
    return _pipeline("fence", p, n, block, pattern, {"mesh": m, "block": block})


# --------------------------------------------------------------------------- what MPI libraries do
@register("allreduce.ring")
def ring(nprocs: int, nelems: int) -> ArraySchedule:
    """Ring reduce-scatter then ring allgather.

    The columns of every step are views of one pair of doubled block tables, so
    2(P - 1) steps cost O(P) memory."""
    p = positive_int("nprocs", nprocs)
    nelems = positive_int("nelems", nelems, minimum=0)
    start, count = split_arrays(nelems, p)
    start2, count2 = np.concatenate((start, start)), np.concatenate((count, count))
    src = np.arange(p, dtype=RANK)
    dst = np.roll(src, -1)
    steps = []
    for k in range(p - 1):                      # reduce-scatter: rank r sends block (r - k) mod P
        sl = slice(p - k, 2 * p - k)
        steps.append(nonzero_step(src, dst, start2[sl], count2[sl], True))
    for k in range(p - 1):                      # allgather: rank r sends block (r + 1 - k) mod P
        sl = slice(p + 1 - k, 2 * p + 1 - k) if k >= 1 else slice(1, p + 1)
        steps.append(nonzero_step(src, dst, start2[sl], count2[sl], False))
    return schedule_of("ring", p, nelems, steps, {"block": int(count.max()), "mesh": default_mesh(p)})


def _fold(nprocs, nelems):
    """The checked ``(P, N)`` and the power-of-two core of a non-power of two: the real rank
    of every virtual rank, the virtual ranks ``0 .. P' - 1``, the fold-in and fold-out steps.

    The ``r = P - P'`` extra ranks fold in: even rank ``2i`` (``i < r``) combines its vector
    into ``2i + 1`` first and gets the result back last."""
    p = positive_int("nprocs", nprocs)
    nelems = positive_int("nelems", nelems, minimum=0)
    p2 = 1 << (p.bit_length() - 1)
    r = p - p2
    v = np.arange(p2, dtype=np.int64)
    odd = np.arange(r, dtype=RANK) * 2 + 1
    fold_in = nonzero_step(odd - 1, odd, 0, nelems, True)
    fold_out = nonzero_step(odd, odd - 1, 0, nelems, False)
    return p, nelems, np.where(v < r, 2 * v + 1, v + r).astype(RANK), v, fold_in, fold_out


@register("allreduce.recursive_doubling")
def recursive_doubling(nprocs: int, nelems: int) -> ArraySchedule:
    """Full-vector exchanges at distances 1, 2, 4, ..., non-powers of two folded in."""
    p, nelems, real, v, fold_in, fold_out = _fold(nprocs, nelems)
    steps = [fold_in]
    d = 1
    while d < v.size:
        steps.append(nonzero_step(real, real[v ^ d], 0, nelems, True))
        d *= 2
    steps.append(fold_out)
    return schedule_of("recursive_doubling", p, nelems, steps, {"block": nelems, "mesh": default_mesh(p)})


@register("allreduce.rabenseifner")
def rabenseifner(nprocs: int, nelems: int) -> ArraySchedule:
    """Recursive halving reduce-scatter then recursive doubling allgather."""
    p, nelems, real, v, fold_in, fold_out = _fold(nprocs, nelems)
    lo, hi = np.zeros(v.size, dtype=np.int64), np.full(v.size, nelems, dtype=np.int64)
    steps, history = [fold_in], []
    d = 1
    while d < v.size:
        history.append((lo, hi))
        mid = lo + (hi - lo) // 2
        low_half = (v & d) == 0
        give_lo, give_hi = np.where(low_half, mid, lo), np.where(low_half, hi, mid)
        steps.append(nonzero_step(real, real[v ^ d], give_lo, give_hi - give_lo, True))
        lo, hi = np.where(low_half, lo, mid), np.where(low_half, mid, hi)
        d *= 2
    while d > 1:
        d //= 2
        steps.append(nonzero_step(real, real[v ^ d], lo, hi - lo, False))
        lo, hi = history.pop()
    steps.append(fold_out)
    return schedule_of("rabenseifner", p, nelems, steps, {"block": nelems, "mesh": default_mesh(p)})


@register("allreduce.binomial")
def binomial(nprocs: int, nelems: int) -> ArraySchedule:
    """Binomial-tree reduce to rank 0, then binomial broadcast."""
    p = positive_int("nprocs", nprocs)
    nelems = positive_int("nelems", nelems, minimum=0)
    up, d = [], 1
    while d < p:
        src = np.arange(d, p, 2 * d, dtype=RANK)
        up.append((src, src - d))
        d *= 2
    return _reduce_then_broadcast("binomial", p, nelems, up, {"block": nelems, "mesh": default_mesh(p)})
