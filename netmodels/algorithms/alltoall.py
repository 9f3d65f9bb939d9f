"""Personalised all-to-all exchange (alltoall) as schedules: direct, pairwise, multilevel.

Every rank ``i`` has one *row* of ``m = nelems_per_pair`` elements for every rank ``j``
(its own row included); afterwards rank ``j`` holds the row of every ``i``.

Working vector and layout (rows of ``m`` elements, see :func:`layout`):

- rows ``[0, P)``: the input, rank ``r``'s row for ``j`` at row ``pos[j]``;
- rows ``[P, 2P)``: the output, the row from ``i`` at row ``P + pos[i]``; the row a
  rank keeps for itself stays where it was (row ``pos[r]``), so no copy is scheduled
  for it;
- rows from ``2P`` on: staging areas of node leaders (multilevel only).

``pos`` is the rank's place in :func:`order`: plain rank order for ``direct`` and
``pairwise``, ranks grouped node by node (level by level) for ``multilevel``.  A front
door copies its send buffer in with ``send_offsets`` and its receive buffer out with
``recv_offsets``, runs the schedule and is done.

Algorithms:

- ``direct``: every rank sends every other rank its row, all at once: one step of
  ``P(P - 1)`` messages (LS-DYNA/MPP's "standard" exchange);
- ``pairwise``: ``P - 1`` steps; in step ``k`` rank ``i`` sends to ``(i + k) % P`` and
  receives from ``(i - k) % P``;
- ``multilevel`` (Wainscott & Wang, "Multilevel Message Passing"): ranks of a node
  exchange directly; for every ordered pair of nodes (G, H) every rank of G sends its
  rows for H to G's leader (its first rank) in one message, the leader packs them and
  sends one message to H's leader, which hands every rank of H its rows from G in one
  message.  With several levels (``nodes=(c1, c2, ...)``) the same happens at every
  level between sibling groups, the gathers and scatters running up and down the
  levels below.  An ordered pair of sibling groups of sizes ``g`` and ``h`` costs
  ``(g - 1) + 1 + (h - 1)`` messages.

The multilevel schedule uses the optional parts of the step semantics
(:mod:`netmodels.algorithms.schedule`): receive offsets (``dst_start``), because rows
are gathered into a leader's staging area, and local copies (``src == dst``), the
leaders' packing: a leader copies its own rows into the gathered bundle, transposes the
bundle from source-major (one gathered message per source) to destination-major (one
scattered message per destination) before the leader-to-leader message, and copies its
own rows out of a received bundle.  Local copies are not messages.  A step may hold
several messages from the same source to the same destination (a rank's direct row
and its gathered rows for other nodes, to the same leader): they are matched in the
order they appear in the step.

``nodes`` (the hierarchy; ranks are grouped innermost first):

- ``None``: one node (multilevel is then direct);
- an ``int`` ``c``: nodes of ``c`` consecutive ranks, the last one possibly smaller;
- a ``tuple`` ``(c1, c2, ...)``: level-1 groups (nodes) of ``c1`` consecutive ranks,
  level-2 groups of ``c2`` consecutive nodes, and so on; all groups of the last level
  form the machine;
- a ``list`` (or 1-D array) of ``P`` node ids, one per rank, in any order (as
  ``comm.Split_type(MPI.COMM_TYPE_SHARED)`` gives them): ranks with the same id form a
  node, nodes are ordered by their smallest rank and led by it.

A message's *level* is the lowest level whose group holds both ends: 1 inside a node,
2 between nodes (of one level-2 group), ... :func:`message_counts` counts a schedule's
messages per level, :func:`counts_closed` gives the same numbers in closed form.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import numpy as np

from .._check import positive_int
from .arrays import ELEM, RANK, ArraySchedule, ArrayStep, as_transfers
from .registry import get, register


def group_ids(nprocs: int, nodes=None) -> np.ndarray:
    """``ids[k, r]``: the level-``k + 1`` group of rank ``r`` (shape ``(levels, nprocs)``).

    Groups are numbered 0, 1, ... in the order of their smallest rank; the machine
    (all ranks) is the implicit level above the last row.  See the module docstring
    for ``nodes``.
    """
    p = positive_int("nprocs", nprocs)
    ranks = np.arange(p)
    if nodes is None:
        return np.zeros((0, p), dtype=np.int64)
    if isinstance(nodes, (bool, np.bool_)):
        raise ValueError(f"nodes must be None, an int, a tuple of ints or a list of {p} node ids")
    if isinstance(nodes, (int, np.integer)):
        nodes = (nodes,)
    if isinstance(nodes, tuple):
        if not nodes or any(isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 1
                            for c in nodes):
            raise ValueError(f"nodes as levels must be a non-empty tuple of integers >= 1, got {nodes!r}")
        sizes = np.cumprod([int(c) for c in nodes])
        return np.stack([ranks // s for s in sizes]).astype(np.int64)
    ids = np.asarray(nodes)
    if ids.ndim != 1 or ids.shape[0] != p:
        raise ValueError(f"nodes as node ids must list one id per rank ({p}), got shape {ids.shape}")
    _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    rank_of_group = np.argsort(np.argsort(first))      # groups numbered by smallest rank
    return rank_of_group[inverse].reshape(1, p).astype(np.int64)


def order(nprocs: int, nodes=None) -> np.ndarray:
    """Ranks grouped by their outermost group first, then inner levels, then rank."""
    g = group_ids(nprocs, nodes)
    return np.lexsort(tuple([np.arange(nprocs)] + [g[k] for k in range(g.shape[0])]))


def _tree(ranks, g, level):
    """Nested tuples: a group is a tuple of its children, a rank is an int."""
    if level < 0:
        return int(ranks[0]) if len(ranks) == 1 else tuple(int(r) for r in ranks)
    children = []
    for gid in dict.fromkeys(g[level, ranks].tolist()):
        sub = ranks[g[level, ranks] == gid]
        children.append(_tree(sub, g, level - 1))
    return children[0] if len(children) == 1 else tuple(children)


def _leaves(t):
    return (t,) if isinstance(t, int) else tuple(r for c in t for r in _leaves(c))


def _height(t):
    return 0 if isinstance(t, int) else 1 + max(_height(c) for c in t)


class _Builder:
    """Multilevel schedule in rows; converted to elements at the end."""

    def __init__(self, p, pos, tree):
        self.p, self.pos, self.tree = p, pos, tree
        self.top = _height(tree) - 1          # gather steps 0 .. top-1, then pack, exchange, scatter
        self.free = [2 * p] * p                # next free staging row of each rank
        self.steps = defaultdict(list)         # step -> [(src, dst, row, nrows, dst_row)]
        self.last = 0

    def alloc(self, rank, nrows):
        row = self.free[rank]
        self.free[rank] += nrows
        return row

    def add(self, step, src, dst, row, nrows, dst_row):
        self.steps[step].append((src, dst, row, nrows, dst_row))

    def gather(self, g, h, leader, row):
        """Fill rows ``row ..`` of ``leader`` with the rows of group ``g`` for ``h``, source-major."""
        nh, start = len(_leaves(h)), self.pos[_leaves(h)[0]]
        offset = 0
        for child in ((g,) if isinstance(g, int) else g):
            members = _leaves(child)
            here = row + offset * nh
            offset += len(members)
            if isinstance(child, int):
                if child == leader:
                    self.add(0, child, child, start, nh, here)                 # pack own rows
                else:
                    self.add(0, child, leader, start, nh, here)
            elif members[0] == leader:
                self.gather(child, h, leader, here)
            else:
                own = self.alloc(members[0], len(members) * nh)
                self.gather(child, h, members[0], own)
                self.add(_height(child), members[0], leader, own, len(members) * nh, here)

    def scatter(self, h, g, leader, row):
        """Hand out rows ``row ..`` of ``leader`` (destination-major rows of ``h`` from ``g``)."""
        ng, out = len(_leaves(g)), self.p + self.pos[_leaves(g)[0]]
        first_scatter = self.top + 2
        offset = 0
        for child in ((h,) if isinstance(h, int) else h):
            members = _leaves(child)
            here = row + offset * ng
            offset += len(members)
            step = first_scatter + self.top - 1 - _height(child)
            self.last = max(self.last, step)
            if isinstance(child, int):
                if child == leader:
                    self.add(None, child, child, here, ng, out)                # unpack own rows
                else:
                    self.add(step, leader, child, here, ng, out)
            elif members[0] == leader:
                self.scatter(child, g, leader, here)
            else:
                own = self.alloc(members[0], len(members) * ng)
                self.add(step, leader, members[0], here, len(members) * ng, own)
                self.scatter(child, g, members[0], own)

    def pair(self, g, h):
        """Every row of group ``g`` for group ``h`` (siblings)."""
        lg, lh = _leaves(g), _leaves(h)
        a, b = lg[0], lh[0]
        if len(lg) == 1 and len(lh) == 1:
            self.add(0, a, b, self.pos[b], 1, self.p + self.pos[a])
            return
        exchange = self.top + 1
        if len(lg) == 1:
            send = self.pos[lh[0]]                                    # a's input rows for h
        else:
            bundle = self.alloc(a, len(lg) * len(lh))
            self.gather(g, h, a, bundle)
            if len(lh) == 1:
                send = bundle                                         # source-major = destination-major
            else:
                send = self.alloc(a, len(lg) * len(lh))
                for i in range(len(lg)):                              # transpose: pack
                    for j in range(len(lh)):
                        self.add(self.top, a, a, bundle + i * len(lh) + j, 1, send + j * len(lg) + i)
        if len(lh) == 1:
            self.add(exchange, a, b, send, len(lg), self.p + self.pos[lg[0]])
            self.last = max(self.last, exchange)
            return
        inbox = self.alloc(b, len(lg) * len(lh))
        self.add(exchange, a, b, send, len(lg) * len(lh), inbox)
        self.last = max(self.last, exchange + 1)
        self.scatter(h, g, b, inbox)

    def walk(self, t):
        if isinstance(t, int):
            return
        for g in t:
            for h in t:
                if g is not h:
                    self.pair(g, h)
        for c in t:
            self.walk(c)


def _meta(algorithm, p, m, sigma, g):
    return {"algorithm": algorithm, "nelems_per_pair": m, "order": tuple(int(r) for r in sigma),
            "group_ids": tuple(tuple(int(x) for x in row) for row in g)}


def _check(nprocs, nelems, nodes):
    p = positive_int("nprocs", nprocs)
    m = positive_int("nelems_per_pair", nelems, minimum=0)
    return p, m, group_ids(p, nodes)


@register("alltoall.direct")
def direct(nprocs: int, nelems: int, nodes=None) -> ArraySchedule:
    """Direct: every rank sends every other rank its row, all at once (one step).

    ``nelems``: elements each rank sends each rank.  ``nodes`` (the hierarchy, module
    docstring) does not change the schedule; it is kept in ``meta`` for
    :func:`message_counts`.  Built as columns: ``P(P - 1)`` messages at P = 4096 is 1.7e7.
    """
    p, m, g = _check(nprocs, nelems, nodes)
    ranks = np.arange(p, dtype=RANK)
    src = np.repeat(ranks, p - 1)                 # i-major, j ascending, j != i
    k = np.tile(np.arange(p - 1, dtype=RANK), p)
    dst = k + (k >= src)                          # skip the diagonal
    steps = [ArrayStep.of(src, dst, dst.astype(ELEM) * m, m, False, (p + src.astype(ELEM)) * m)]
    return ArraySchedule("alltoall-direct", p, 2 * p * m, steps, _meta("direct", p, m, ranks, g))


@register("alltoall.pairwise")
def pairwise(nprocs: int, nelems: int, nodes=None) -> ArraySchedule:
    """Pairwise: in step k rank i sends to (i + k) mod P and receives from (i - k) mod P.

    ``P - 1`` steps; ``nodes`` as for :func:`direct`.
    """
    p, m, g = _check(nprocs, nelems, nodes)
    ranks = np.arange(p, dtype=RANK)
    steps = []
    for k in range(1, p):
        dst = (ranks + k) % p
        steps.append(ArrayStep.of(ranks, dst, dst.astype(ELEM) * m, m, False, (p + ranks.astype(ELEM)) * m))
    return ArraySchedule("alltoall-pairwise", p, 2 * p * m, steps, _meta("pairwise", p, m, ranks, g))


@register("alltoall.multilevel")
def multilevel(nprocs: int, nelems: int, nodes=None) -> ArraySchedule:
    """Multilevel (Wainscott & Wang): leaders gather, exchange one message per pair of
    sibling groups, and scatter, at every level of ``nodes`` (module docstring)."""
    p, m, g = _check(nprocs, nelems, nodes)
    sigma = order(p, nodes)
    pos = np.empty(p, dtype=np.int64)
    pos[sigma] = np.arange(p)
    b = _Builder(p, pos.tolist(), _tree(np.asarray(sigma), g, g.shape[0] - 1))
    b.walk(b.tree)
    rows = [[] for _ in range(b.last + 1)]
    for step, items in b.steps.items():
        rows[b.last if step is None else step].extend(items)
    steps = []
    for step in rows:
        if m == 0:                  # nothing to copy: local copies vanish, messages stay
            step = [t for t in step if t[0] != t[1]]
        src, dst, row, n, dst_row = (np.array(c, dtype=np.int64).reshape(-1) for c in zip(*step)) \
            if step else (np.zeros(0, dtype=np.int64),) * 5
        moved = bool(np.any(dst_row * m != row * m))
        steps.append(ArrayStep.of(src, dst, row * m, n * m, False, dst_row * m if moved else None))
    return ArraySchedule("alltoall-multilevel", p, max(b.free) * m, steps, _meta("multilevel", p, m, sigma, g))


def layout(schedule) -> tuple[np.ndarray, np.ndarray]:
    """``(send_offsets, recv_offsets)``, both ``(P, P)`` arrays of element offsets (either form).

    Before the schedule, rank ``r``'s row for rank ``j`` (``nelems_per_pair`` elements)
    starts at ``send_offsets[r, j]`` of its working vector; after it, the row from rank
    ``i`` starts at ``recv_offsets[r, i]``.
    """
    p, m = schedule.nprocs, schedule.meta["nelems_per_pair"]
    pos = np.empty(p, dtype=np.int64)
    pos[list(schedule.meta["order"])] = np.arange(p)
    send = np.broadcast_to(pos * m, (p, p)).copy()
    recv = np.broadcast_to((p + pos) * m, (p, p)).copy()
    recv[np.arange(p), np.arange(p)] = pos * m
    return send, recv


def delivery_errors(schedule, limit: int = 5) -> list[str]:
    """Why ``schedule`` is not an alltoall (empty list: it is one).

    Runs the schedule on labels (element ``e`` of the row from ``i`` to ``j`` is
    labelled ``(i, j, e)``) following the step semantics, and checks that every rank
    ends with every row at its :func:`layout` place and that every row is delivered to
    its destination rank exactly once.  Needs ``nelems_per_pair >= 1``.  Either form.
    """
    schedule = as_transfers(schedule)
    p, m = schedule.nprocs, schedule.meta["nelems_per_pair"]
    if m < 1:
        raise ValueError("delivery_errors needs nelems_per_pair >= 1")
    send, recv = layout(schedule)
    vec = np.full((p, schedule.nelems), -1, dtype=np.int64)      # -1: no row

    def label(i, j):
        return (i * p + j) * m + np.arange(m)

    for r in range(p):
        for j in range(p):
            vec[r, send[r, j]:send[r, j] + m] = label(r, j)
    delivered = Counter()
    errors = []
    for t, step in enumerate(schedule.steps):
        if any(tr.combine for tr in step):
            errors.append(f"step {t}: an alltoall combines nothing")
        data = [vec[tr.src, tr.start:tr.stop].copy() for tr in step]
        for tr, d in zip(step, data):
            vec[tr.dst, tr.recv_start:tr.recv_stop] = d
            if tr.is_message:
                rows = np.unique(d[d >= 0] // m)
                for row in rows[rows % p == tr.dst]:                # rows addressed to dst
                    delivered[int(row)] += 1
    for j in range(p):
        for i in range(p):
            got = vec[j, recv[j, i]:recv[j, i] + m]
            if not np.array_equal(got, label(i, j)):
                errors.append(f"rank {j}: row from rank {i} missing or wrong at element {recv[j, i]}")
            n = delivered[i * p + j]
            if i != j and n != 1:
                errors.append(f"row {i} -> {j} delivered to rank {j} {n} times (expected 1)")
    return errors[:limit]


def message_counts(schedule) -> dict[int, int]:
    """``{level: messages}`` of an alltoall schedule of this module, either form (local
    copies not counted).

    Level 1: both ends in the same node; 2: in different nodes of one level-2 group;
    ...; the highest level: different groups of the last level given.
    """
    g = np.asarray(schedule.meta["group_ids"], dtype=np.int64).reshape(-1, schedule.nprocs)
    nlevels = g.shape[0] + 1
    counts = dict.fromkeys(range(1, nlevels + 1), 0)
    for step in as_transfers(schedule).steps:
        for tr in step:
            if tr.is_message:
                same = [k for k in range(g.shape[0]) if g[k, tr.src] == g[k, tr.dst]]
                counts[same[0] + 1 if same else nlevels] += 1
    return counts


def counts_closed(algorithm: str, sizes) -> dict[int, int]:
    """``{level: messages}`` in closed form for a uniform hierarchy.

    ``sizes = (c1, c2, ..., cK)``, innermost first: nodes of ``c1`` ranks, groups of
    ``c2`` nodes, ..., ``cK`` groups at the top; ``P = c1 c2 ... cK``, and the schedule
    is the registered ``alltoall.ALGORITHM`` on P ranks with ``nodes=(c1, ..., c_{K-1})``.  With ``s_k = c1 ... ck``
    (``s_0 = 1``):

    - direct and pairwise: every rank sends to the ``s_l - s_{l-1}`` ranks of its
      level-``l`` group outside its level-``(l-1)`` group: ``P (s_l - s_{l-1})``;
    - multilevel: the ``(P / s_l) c_l (c_l - 1)`` ordered sibling pairs of level ``l``
      exchange one leader message each; every pair of a level ``k > l`` gathers and
      scatters through every level below it, ``2 (s_{k-1} / s_l)(c_l - 1)`` messages of
      level ``l`` per pair, ``(P / s_k) c_k (c_k - 1)`` pairs: in all
      ``(P / s_l)(c_l - 1) [c_l + 2 sum_{k > l} (c_k - 1)]``.

    Two levels, ``n`` nodes of ``c``: standard ``{1: n c (c - 1), 2: n (n - 1) c^2}``,
    multilevel ``{1: n c (c - 1) + 2 n (n - 1)(c - 1), 2: n (n - 1)}``.
    """
    algorithm = get(algorithm, "alltoall").short
    if isinstance(sizes, (int, np.integer)) or not sizes:
        raise ValueError(f"sizes must be a non-empty sequence of integers >= 1, got {sizes!r}")
    c = [positive_int("sizes[i]", x) for x in sizes]
    p = math.prod(c)
    s = [1] + list(np.cumprod(c).tolist())
    out = {}
    for lev in range(1, len(c) + 1):
        if algorithm == "multilevel":
            cl = c[lev - 1]
            out[lev] = p // s[lev] * (cl - 1) * (cl + 2 * sum(ck - 1 for ck in c[lev:]))
        else:
            out[lev] = p * (s[lev] - s[lev - 1])
    return out
