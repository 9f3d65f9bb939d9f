"""The node-bandwidth-limited (NBL) model and vector combining on a 2-D mesh (Littlefield 1992).

A node that sends or receives ``L`` messages of ``S`` elements at nominally the same
time needs ``T(L) = L α + f(L) β S`` (section 2 of the paper).  ``f(1) = 1``;
``f(L) = 1`` is perfect overlap (the standard model), ``f(L) = L`` no overlap at all
(node bandwidth = link bandwidth).  An f table is a dict ``{L: f(L)}``.

Tree, Snake and Fence combine one vector of ``N`` elements per node over a
``W x H`` mesh (``P = W H``) and broadcast the result.  Their times are sums over
step timelines: every step costs ``L α + f(L) β S + c S`` for the busiest node, with
``c = c2`` when a node combines two vectors and ``c3`` when it combines three.
``N`` and ``S`` count vector elements; ``α`` is in seconds, ``β``, ``c2``, ``c3`` in
seconds per element; all times are in seconds.

The paper's appendix tabulates the timelines (``PHASES``, as printed) for at least 3
blocks (``B = ceil(N / S) >= 3``), Snake on ``P >= 3`` nodes and Fence on meshes with
``W >= 3`` and ``H >= 2`` (:func:`in_paper_regime`); there closed forms are used.
Elsewhere (one or two blocks, a Fence two nodes wide, ...) the timeline is counted
from the messages of the algorithm (:func:`count_timeline`), with the same step cost,
so every mesh and every block size has a time.

One charge of the table is not the model's: at Fence's step ``H`` node ``(W-2, 0)``
already combines three vectors (from above and from the right), and the table books
``c2``.  The model charges ``c3`` wherever a node combines three vectors
(``TIMELINES``), so the closed forms and the counted timelines are the same function
of ``B``, ``W`` and ``H`` (no jump of ``(c3 - c2) S`` where one hands over to the
other).  ``paper_charges=True`` gives the total with the table's ``c2``, to compare
with the paper's printed formulas.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Mapping

import numpy as np

from .._check import integers, positive, positive_int, sizes
from .step import Step, SyncRule

#: f(L) = 1: links overlap perfectly (the paper's "standard model").
STANDARD = {1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0, 5: 1.0, 6: 1.0}
#: f(L) = L: no overlap, node bandwidth equals link bandwidth ("nominal NBL model").
NOMINAL = {1: 1.0, 2: 2.0, 3: 3.0, 4: 4.0, 5: 5.0, 6: 6.0}
#: f(L) fitted by the paper to its measured Snake and Fence times on the DELTA
#: (Littlefield 1992, section 4.2, "Fitted NBL Model"); f(1) = 1 by definition, f(5) unused.
FITTED_DELTA = {1: 1.0, 2: 1.1, 3: 1.3, 4: 3.9, 6: 5.1}

ALGORITHMS = ("Tree", "Snake", "Fence")

#: The step timelines of the paper's appendix, as printed: (number of steps, active links
#: L of the busiest node, combining arity: 0 none, 2 uses c2, 3 uses c3).  Counts are
#: expressions in P, W, H, B evaluated by :func:`phases`.
PHASES = {
    "Snake": [("1", 1, 2), ("P-2", 2, 2), ("1", 3, 2), ("B-3", 4, 2),
              ("1", 3, 2), ("P-2", 2, 0), ("1", 1, 0)],
    "Fence": [("1", 1, 2), ("H-1", 2, 2), ("W-2", 3, 3), ("1", 4, 3), ("B-3", 6, 3),
              ("1", 4, 3), ("W-2", 3, 0), ("H-1", 2, 0), ("1", 1, 0)],
}
#: The timelines the model charges: the paper's, except Fence's step H, where node
#: (W-2, 0) combines three vectors (c3; the table books c2).  Equal to the counted
#: timelines (:func:`count_timeline`) step by step wherever the table applies.
TIMELINES = {
    "Snake": PHASES["Snake"],
    "Fence": [("1", 1, 2), ("H-2", 2, 2), ("1", 2, 3)] + PHASES["Fence"][2:],
}


def _table(name: str, paper: bool):
    return (PHASES if paper else TIMELINES)[name]


@dataclass(frozen=True)
class NBLMachine:
    """Parameters of the NBL combining model.

    alpha : start-up cost per message in seconds (> 0).
    beta : transfer time per vector element in seconds (> 0).
    c2, c3 : cost per element of combining two / three vectors, in seconds (>= 0).
    elem_bytes : bytes per element (8 for double precision), for bandwidth displays.
    """

    alpha: float
    beta: float
    c2: float
    c3: float
    elem_bytes: int = 8
    name: str = ""
    source: str = ""

    def __post_init__(self):
        object.__setattr__(self, "alpha", positive("alpha", self.alpha))
        object.__setattr__(self, "beta", positive("beta", self.beta))
        object.__setattr__(self, "c2", positive("c2", self.c2, allow_zero=True))
        object.__setattr__(self, "c3", positive("c3", self.c3, allow_zero=True))
        object.__setattr__(self, "elem_bytes", positive_int("elem_bytes", self.elem_bytes))

    @property
    def link_bandwidth(self) -> float:
        """Link bandwidth elem_bytes / β in bytes per second."""
        return self.elem_bytes / self.beta

    #: the timing semantics the simulator uses for this model unless told otherwise (the
    #: paper's loosely synchronous steps)
    semantics = "sync"

    def step_rule(self, schedule) -> "NBLRule":
        """The step rule of :class:`NBLModel` with f(L) = 1 and this machine's c2, c3."""
        return NBLModel.from_machine(self).step_rule(schedule)


@dataclass(frozen=True)
class NBLModel:
    """Parameters of ``T(L) = L*alpha + f(L)*beta*S`` plus combining costs, and the step rule.

    alpha: seconds per message (>= 0).  beta: seconds per element (>= 0).
    f: ``{L: f(L)}`` (``f(1) = 1`` is implied), a callable ``L -> f(L)``, or None for the
    standard model ``f(L) = 1``.  combine: ``{ways: seconds per element}``, e.g.
    ``{2: c2, 3: c3}`` (missing: no combining cost).

    **Step rule** (the paper's section 3.3, "loosely synchronous"; :meth:`step_rule`):
    ``L`` of a node in a step is the number of messages it sends plus the number it
    receives (one link per direction and neighbour, as on the DELTA; the paper's f(L)
    test jig counts a node receiving from one neighbour as L = 1 and one exchanging with
    1, 2, 3 neighbours as L = 2, 4, 6), ``S`` the largest message it handles (elements;
    with a topology times the largest link load of the message), and its communication
    takes ``L α + f(L) β S``.  A node that receives ``k`` combining blocks onto the same
    block (same start and count) does one ``(k+1)``-way combine of ``count`` elements,
    costed ``combine[k + 1]`` per element (else ``k * combine[2]``); copies cost nothing.
    Under the simulator's *sync* semantics a step costs the largest communication time
    plus the largest combining time over the nodes.
    """

    alpha: float
    beta: float
    f: Mapping[int, float] | Callable[[int], float] | None = None
    combine: Mapping[int, float] = field(default_factory=dict)
    name: str = ""

    def __post_init__(self):
        object.__setattr__(self, "alpha", positive("alpha", self.alpha, allow_zero=True))
        object.__setattr__(self, "beta", positive("beta", self.beta, allow_zero=True))
        for ways, c in dict(self.combine).items():
            if not isinstance(ways, int) or ways < 2:
                raise ValueError(f"combine keys are the number of vectors combined, integers >= 2; got {ways!r}")
            positive(f"combine[{ways}]", c, allow_zero=True)
        if isinstance(self.f, Mapping):
            for L, v in self.f.items():
                if not isinstance(L, int) or L < 1:
                    raise ValueError(f"f keys are link counts L, integers >= 1; got {L!r}")
                positive(f"f({L})", v)

    @classmethod
    def from_machine(cls, machine: NBLMachine, f: Mapping[int, float] | None = None) -> "NBLModel":
        """The model of an :class:`NBLMachine` (alpha, beta, c2, c3) with an f table
        ``{L: f(L)}`` as this module takes them (None: ``f(L) = 1``)."""
        if not isinstance(machine, NBLMachine):
            raise ValueError(f"machine must be an NBLMachine (alpha, beta, c2, c3), got {machine!r}")
        return cls(machine.alpha, machine.beta, None if f is None else dict(f),
                   {2: machine.c2, 3: machine.c3}, machine.name)

    @classmethod
    def standard(cls, alpha, beta, c2=0.0, c3=None, name="standard model"):
        """``f(L) = 1``: links overlap perfectly."""
        return cls(alpha, beta, None, _combine(c2, c3), name)

    @classmethod
    def nominal(cls, alpha, beta, c2=0.0, c3=None, name="nominal NBL model"):
        """``f(L) = L``: no overlap, the node's bandwidth is one link's."""
        return cls(alpha, beta, float, _combine(c2, c3), name)

    def f_of(self, L: int) -> float:
        """f(L); ValueError if a table ``f`` has no entry for ``L`` (``f(1) = 1`` always)."""
        if L <= 1 or self.f is None:
            return 1.0 if L >= 1 else 0.0
        if isinstance(self.f, Mapping):
            if L not in self.f:
                raise ValueError(f"the f table has no value for L = {L} (it has L = {sorted(self.f)}); "
                                 f"add f({L}) or pass f as a callable")
            return float(self.f[L])
        return float(self.f(L))

    def combine_cost(self, ways: int) -> float:
        """Seconds per element of a ``ways``-way combine (``ways - 1`` pairwise ones if not tabulated)."""
        if ways < 2:
            return 0.0
        c = dict(self.combine)
        return float(c[ways]) if ways in c else (ways - 1) * float(c.get(2, 0.0))

    #: the timing semantics the simulator uses for this model unless told otherwise (the
    #: paper's loosely synchronous steps)
    semantics = "sync"

    def step_rule(self, schedule) -> "NBLRule":
        """The loosely synchronous step rule of the class docstring."""
        return NBLRule(self, schedule.nprocs)


def _combine(c2, c3):
    out = {2: c2}
    if c3 is not None:
        out[3] = c3
    return out


def as_model(model, f=None) -> NBLModel:
    """``model`` as an :class:`NBLModel`: an NBLModel as is, an NBLMachine with its f table ``f``."""
    if isinstance(model, NBLMachine):
        return NBLModel.from_machine(model, f)
    if not isinstance(model, NBLModel):
        raise ValueError(f"model must be an NBLModel or an NBLMachine, got {model!r}")
    if f is not None:
        raise ValueError("f is taken with an NBLMachine only (an NBLModel carries its own f)")
    return model


class NBLRule(SyncRule):
    """Per node ``L α + f(L) β S`` and one (k+1)-way combine per block (see :class:`NBLModel`)."""

    def links_and_size(self, step: Step):
        """Per node: L (messages sent plus received) and S (largest message, elements,
        times its link load with a topology)."""
        p = step.nprocs
        links = np.bincount(step.src, minlength=p) + np.bincount(step.dst, minlength=p)
        size = np.zeros(p)
        eff = step.count if step.load is None else step.count * step.load
        np.maximum.at(size, step.src, eff)
        np.maximum.at(size, step.dst, eff)
        return links, size

    def costs(self, step: Step):
        m = self.model
        links, size = self.links_and_size(step)
        table = np.array([m.f_of(int(L)) if used else 0.0
                          for L, used in enumerate(np.bincount(links) > 0)])
        comm = links * m.alpha + table[links] * m.beta * size
        return comm, self.combine_time(step)

    def combine_time(self, step: Step):
        """Per node: one (k+1)-way combine of ``count`` elements per block that k combining
        messages of the step bring (blocks keyed by start and count); None if none."""
        sel = np.flatnonzero(step.combine)
        if sel.size == 0:
            return None
        d, s, c = step.dst[sel], step.start[sel], step.count[sel]
        order = np.lexsort((c, s, d))
        d, s, c = d[order], s[order], c[order]
        new = np.ones(d.size, dtype=bool)
        new[1:] = (d[1:] != d[:-1]) | (s[1:] != s[:-1]) | (c[1:] != c[:-1])
        first = np.flatnonzero(new)
        k = np.diff(np.append(first, d.size))
        table = np.array([self.model.combine_cost(kk + 1) if used else 0.0
                          for kk, used in enumerate(np.bincount(k) > 0)])
        return np.bincount(d[first], table[k] * c[first], minlength=step.nprocs)


# ------------------------------------------------------------------ validation
def _machine(machine) -> NBLMachine:
    if not isinstance(machine, NBLMachine):
        raise ValueError(f"machine must be an NBLMachine (alpha, beta, c2, c3), got {machine!r}")
    return machine


def _ftable(f, needed) -> dict:
    if not isinstance(f, dict):
        raise ValueError(f"f must be a dict {{L: f(L)}}, got {type(f).__name__}")
    missing = [L for L in needed if L not in f]
    if missing:
        raise ValueError(f"f must give f(L) for L in {sorted(needed)}; missing L = {missing}")
    return {L: positive(f"f({L})", f[L]) for L in needed}


def _blocks(N, S) -> int:
    return -(-N // S)


def needed_links(algorithm: str) -> tuple[int, ...]:
    """The L values whose f(L) an algorithm's timeline uses."""
    name = _name(algorithm)
    if name == "Tree":
        return (1,)
    return tuple(sorted({L for _, L, _ in PHASES[name]}))


def _name(algorithm) -> str:
    for a in ALGORITHMS:
        if isinstance(algorithm, str) and algorithm.lower() == a.lower():
            return a
    raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")


def in_paper_regime(algorithm: str, W: int, H: int) -> bool:
    """True if the paper's closed-form timeline of ``algorithm`` holds on a W x H mesh (B >= 3)."""
    name = _name(algorithm)
    if name == "Snake":
        return W * H >= 3
    if name == "Fence":
        return W >= 3 and H >= 2
    return True


# ------------------------------------------------------------------ timelines
def phases(algorithm: str, W: int, H: int, B: int, *, paper: bool = True) -> list[tuple[int, int, int]]:
    """The tabulated timeline as (steps, L, combining arity) for a W x H mesh and B blocks:
    the paper's appendix as printed (``paper=True``) or the model's (``TIMELINES``)."""
    name = _name(algorithm)
    env = {"P": W * H, "W": W, "H": H, "B": B}
    if name == "Tree":
        levels = tree_levels(W, H)
        return [(levels, 1, 2), (levels, 1, 0)]
    return [(eval(c, {}, env), L, k) for c, L, k in _table(name, paper)]  # noqa: S307 - fixed strings


def tree_levels(W: int, H: int) -> int:
    """Combining levels of Tree: ceil(log2 W) + ceil(log2 H) (= log2 P for powers of two)."""
    return (W - 1).bit_length() + (H - 1).bit_length()


def _phase_sum(name, P, W, H, B, S, m, fv, *, paper: bool = False):
    """Vectorised sum over the tabulated timeline (the model's, or the paper's if ``paper``);
    P, W, H, B, S broadcast as numpy arrays (B may be real: the continuous relaxation)."""
    cost = {0: 0.0, 2: m.c2, 3: m.c3}
    total = 0.0
    env = {"P": P, "W": W, "H": H, "B": B}
    for c, L, k in _table(name, paper):
        count = eval(c, {}, env)  # noqa: S307 - fixed strings
        total = total + count * (L * m.alpha + (fv[L] * m.beta + cost[k]) * S)
    return total


def schedule(algorithm: str, W: int, H: int, B: int):
    """The registry's schedule of Snake or Fence on a W x H mesh with B blocks of one element
    (``allreduce.snake`` / ``allreduce.fence`` of :mod:`netmodels.algorithms.registry`)."""
    from ..algorithms import registry

    name = _name(algorithm)
    if name == "Tree":
        raise ValueError("algorithm must be 'Snake' or 'Fence'")
    return registry.build(f"allreduce.{name.lower()}", W * H, B, block=1, mesh=(W, H))


def messages(algorithm: str, W: int, H: int, B: int) -> list[tuple[int, int, int, bool]]:
    """All messages (step, src, dst, combines) of Snake or Fence; steps count from 1.

    Read off the registry's schedule (:func:`schedule`), ranks as it numbers them; local
    copies are not messages.  The closed forms of this module are independent of it (the
    tests compare them)."""
    out = []
    for t, st in enumerate(schedule(algorithm, W, H, B).steps, start=1):
        msg = st.src != st.dst
        out += [(t, int(a), int(b), bool(c)) for a, b, c in zip(st.src[msg], st.dst[msg], st.combine[msg])]
    return out


def count_timeline(algorithm: str, W: int, H: int, B: int) -> tuple[np.ndarray, np.ndarray]:
    """Per step: active links of the busiest node, and the widest combine (0, 2 or 3).

    The combine arity of a node is 1 + the number of partially combined blocks it
    receives in the step (0 if none).  Counted on the registry's schedule (:func:`schedule`).
    Raises ValueError if a link carries two messages in one step (the algorithms are free
    of link conflicts).
    """
    sched = schedule(algorithm, W, H, B)
    p = sched.nprocs
    L = np.zeros(sched.nsteps, dtype=int)
    k = np.zeros(sched.nsteps, dtype=int)
    for t, st in enumerate(sched.steps):
        msg = st.src != st.dst
        src, dst, comb = st.src[msg], st.dst[msg], st.combine[msg]
        if src.size == 0:
            continue
        if np.unique(src * p + dst).size < src.size:
            raise ValueError("link conflict: a link carries two messages in one step")
        L[t] = (np.bincount(src, minlength=p) + np.bincount(dst, minlength=p)).max()
        arrivals = np.bincount(dst[comb], minlength=p).max(initial=0)
        k[t] = arrivals + 1 if arrivals else 0
    return L, k


def run_lengths(L, k) -> list[tuple[int, int, int]]:
    """Run-length encode per-step (L, arity) into (steps, L, arity) phases."""
    out = []
    for a, b in zip(np.asarray(L).tolist(), np.asarray(k).tolist()):
        if out and out[-1][1:] == (a, b):
            out[-1] = (out[-1][0] + 1, a, b)
        else:
            out.append((1, a, b))
    return out


@lru_cache(maxsize=4096)
def _counted(name: str, W: int, H: int, B: int) -> tuple:
    return tuple(run_lengths(*count_timeline(name, W, H, B)))


@lru_cache(maxsize=1024)
def affine_timeline(algorithm: str, W: int, H: int, *, paper: bool = False) -> tuple[int, tuple]:
    """(B0, phases) with phases (a, b, L, arity): for every B >= B0 the timeline has
    ``a + b B`` steps of each kind.  The tabulated closed form (B0 = 3) where it holds
    (the model's, or the paper's charges if ``paper``); otherwise read off counted
    timelines at B0 and B0 + 1 (the pipeline's full phase is the one that grows with B)."""
    name = _name(algorithm)
    if in_paper_regime(name, W, H):
        env0 = {"P": W * H, "W": W, "H": H, "B": 0}
        return 3, tuple((eval(c, {}, env0), int("B" in c), L, k)  # noqa: S307
                        for c, L, k in _table(name, paper))
    B0 = 2 * (W + H) + 4 if name == "Fence" else 2 * W * H + 4
    p0, p1 = _counted(name, W, H, B0), _counted(name, W, H, B0 + 1)
    if [x[1:] for x in p0] != [x[1:] for x in p1]:
        raise RuntimeError(f"{name} {W}x{H}: timeline not yet stable at B0 = {B0}")
    return B0, tuple((c0 - (c1 - c0) * B0, c1 - c0, L, k) for (c0, L, k), (c1, _, _) in zip(p0, p1))


def timeline(algorithm: str, W: int, H: int, B: int, *, paper: bool = False) -> list[tuple[int, int, int]]:
    """The timeline (steps, L, arity) of Snake or Fence for any W x H mesh and B >= 1 blocks
    (``paper=True``: with the appendix's c2 at Fence's step H where its table applies)."""
    name = _name(algorithm)
    if name == "Tree":
        return phases(name, W, H, B)
    B0, aff = affine_timeline(name, W, H, paper=paper)
    if B >= B0:
        return [(a + b * B, L, k) for a, b, L, k in aff]
    return list(_counted(name, W, H, B))


def _time_vec(name, W, H, B, S, m, fv, paper=False):
    """Time of Snake or Fence on one mesh for arrays of block counts B and sizes S (seconds)."""
    B, S = np.broadcast_arrays(np.asarray(B, dtype=np.int64), np.asarray(S, dtype=float))
    cost = {0: 0.0, 2: m.c2, 3: m.c3}
    out = np.zeros(B.shape)
    B0, aff = affine_timeline(name, W, H, paper=paper)
    big = B >= B0
    if np.any(big):
        Bb, Sb = B[big], S[big]
        out[big] = sum((a + b * Bb) * (L * m.alpha + (fv[L] * m.beta + cost[k]) * Sb) for a, b, L, k in aff)
    for b in np.unique(B[~big]):
        sel = B == b
        out[sel] = sum(c * (L * m.alpha + (fv[L] * m.beta + cost[k]) * S[sel])
                       for c, L, k in _counted(name, W, H, int(b)))
    return out


# ------------------------------------------------------------------ closed forms
def tree_time(N, W, H, machine, f) -> float:
    """Tree (binary-tree combine then broadcast, no pipelining), in seconds.

    T = (ceil(log2 W) + ceil(log2 H)) (2 (α + f(1) β N) + c2 N)   (paper's appendix).
    """
    N = positive_int("N", N)
    W = positive_int("W", W)
    H = positive_int("H", H)
    m = _machine(machine)
    fv = _ftable(f, (1,))
    return float(tree_levels(W, H) * (2 * (m.alpha + fv[1] * m.beta * N) + m.c2 * N))


def _pipelined(name, N, W, H, S, machine, f, paper=False) -> float:
    N = positive_int("N", N)
    W = positive_int("W", W)
    H = positive_int("H", H)
    S = positive_int("S", S)
    if S > N:
        raise ValueError(f"S must be in 1..N = {N}, got {S}")
    m = _machine(machine)
    fv = _ftable(f, needed_links(name))
    return float(_time_vec(name, W, H, _blocks(N, S), S, m, fv, paper))


def snake_time(N, W, H, S, machine, f) -> float:
    """Snake (linear pipeline through all P nodes, blocks of S elements), in seconds."""
    return _pipelined("Snake", N, W, H, S, machine, f)


def fence_time(N, W, H, S, machine, f, *, paper_charges: bool = False) -> float:
    """Fence (pipeline down the columns and along the bottom row), in seconds.

    ``paper_charges=True``: step H's three-way combine charged c2 as in the appendix
    ((c3 - c2) S less, where the appendix's table applies)."""
    return _pipelined("Fence", N, W, H, S, machine, f, paper_charges)


def time(algorithm, N, W, H, S, machine, f, *, paper_charges: bool = False) -> float:
    """Time of ``algorithm`` in seconds (S is ignored by Tree); see :func:`fence_time`."""
    name = _name(algorithm)
    if name == "Tree":
        return tree_time(N, W, H, machine, f)
    return _pipelined(name, N, W, H, S, machine, f, paper_charges)


def block_candidates(N: int) -> np.ndarray:
    """Every block size that can be optimal, ascending: for each block count B the smallest
    S with ceil(N/S) = B (time grows with S at fixed B), i.e. S = ceil(N/B)."""
    r = math.isqrt(N) + 1
    small = np.arange(1, min(r, N) + 1)
    large = -(-N // np.arange(1, r + 1))
    return np.unique(np.concatenate([small, large]))


def _block_range(block_range, N) -> tuple[int, int]:
    """Validated (low, high) block sizes, high clipped to N (a block cannot exceed the vector)."""
    if block_range is None:
        return 1, N
    try:
        lo, hi = block_range
    except (TypeError, ValueError):
        raise ValueError(f"block_range must be a pair (low, high) of integers, got {block_range!r}") from None
    lo, hi = positive_int("block_range[0]", lo), positive_int("block_range[1]", hi)
    if lo > hi:
        raise ValueError(f"block_range must have low <= high, got {block_range!r}")
    return min(lo, N), min(hi, N)


def optimal_block(algorithm, N, W, H, machine, f, *, block_range=None) -> int:
    """The integer block size S (elements) that minimises the time; the smallest on ties.

    ``block_range=(low, high)`` restricts S to low..high (high clipped to N), e.g. the
    paper's experiments' ``machines.DELTA_BLOCK_RANGE`` (20..600); default 1..N.
    Exhaustive over :func:`block_candidates` (clipped into the range: at a fixed block
    count the smallest S in the range is the fastest).  Tree does not pipeline: N.
    """
    name = _name(algorithm)
    N = positive_int("N", N)
    lo, hi = _block_range(block_range, N)
    if name == "Tree":
        tree_time(N, W, H, machine, f)  # validates the rest
        return N
    W = positive_int("W", W)
    H = positive_int("H", H)
    m = _machine(machine)
    fv = _ftable(f, needed_links(name))
    S = np.unique(np.clip(block_candidates(N), lo, hi))
    t = _time_vec(name, W, H, -(-N // S), S, m, fv)
    return int(S[int(np.argmin(t))])


def fastest(N, W, H, machine, f, *, block_range=None) -> tuple[str, int, float]:
    """(algorithm, S, seconds) of the fastest algorithm at its optimal block size
    (searched in ``block_range``, see :func:`optimal_block`).

    For Tree, S = N (one block).  Ties go to the algorithm listed first in ALGORITHMS.
    """
    best = None
    for name in ALGORITHMS:
        S = optimal_block(name, N, W, H, machine, f, block_range=block_range)
        t = time(name, N, W, H, S, machine, f)
        if best is None or t < best[2] * (1 - 1e-12):  # equal times (Snake with B = 1 on
            best = (name, S, t)                        # a chain is Tree): the first listed
    return best


# ------------------------------------------------------------------ continuous optimum
def _coefficients(name, W, H, m, fv, paper=False):
    """(a, K) of T = A + a B + K S for B >= B0: a = start-ups of the full-pipeline phase,
    K = per-element cost of the other phases (the full phase's S B term is a constant N term)."""
    cost = {0: 0.0, 2: m.c2, 3: m.c3}
    _, aff = affine_timeline(name, W, H, paper=paper)
    a = sum(b * L * m.alpha for _, b, L, _k in aff)
    K = sum(c * (fv[L] * m.beta + cost[k]) for c, _, L, k in aff)
    return a, K


def _pipeline_args(algorithm, N, W, H):
    """Validated (name, N, W, H) for the pipelined algorithms (Snake, Fence)."""
    name = _name(algorithm)
    if name == "Tree":
        raise ValueError("algorithm must be 'Snake' or 'Fence' (Tree does not pipeline)")
    return name, positive_int("N", N), positive_int("W", W), positive_int("H", H)


def continuous_optimal_block(algorithm, N, W, H, machine, f, *, paper_charges: bool = False) -> float:
    """S* = sqrt(a N / K) minimising the timeline with B = N/S (real-valued).

    ``a`` is the start-up cost of a full-pipeline step (4α for Snake, 6α for Fence in the
    paper's regime) and ``K`` the coefficient of S in T; see :mod:`netmodels.models.nbl_derivation`.
    ``paper_charges=True``: Fence's step H charged c2 as in the appendix (its eq. 1).
    """
    name, N, W, H = _pipeline_args(algorithm, N, W, H)
    if W * H < 2:
        raise ValueError("a pipeline needs P = W*H >= 2 nodes")
    a, K = _coefficients(name, W, H, _machine(machine), _ftable(f, needed_links(name)), paper_charges)
    if K <= 0:
        raise ValueError("the timeline's coefficient of S is <= 0 for these parameters: "
                         "no interior optimum")
    return math.sqrt(a * N / K)


def paper_printed_optimal_block(algorithm, N, W, H, machine, f) -> float:
    """S_opt as printed in the paper's appendix (kept to compare with; see the chapter).

    Snake: (N α / ((P-2)(c2 + 2β f(2)) + 2β f(3) - 3β f(4)))^(1/2)
    Fence: (6 N α / [H(c2 + 2β f(2)) + W(c3 + 2β f(3)) - 3 c3
                     + β(2f(1) - 2f(2) - 4f(3) + 2f(4) - 3f(6))])^(1/2)      (eq. 1)
    """
    name, N, W, H = _pipeline_args(algorithm, N, W, H)
    m = _machine(machine)
    a, b, c2, c3 = m.alpha, m.beta, m.c2, m.c3
    if name == "Snake":
        fv = _ftable(f, (2, 3, 4))
        num, den = N * a, (W * H - 2) * (c2 + 2 * b * fv[2]) + 2 * b * fv[3] - 3 * b * fv[4]
    else:
        fv = _ftable(f, (1, 2, 3, 4, 6))
        num = 6 * N * a
        den = (H * (c2 + 2 * b * fv[2]) + W * (c3 + 2 * b * fv[3]) - 3 * c3
               + b * (2 * fv[1] - 2 * fv[2] - 4 * fv[3] + 2 * fv[4] - 3 * fv[6]))
    if den <= 0:
        raise ValueError(f"the printed formula's denominator must be > 0, got {den!r} "
                         f"for {name} on {W}x{H} with these parameters (no interior optimum)")
    return math.sqrt(num / den)


# ------------------------------------------------------------------ regime map (vectorised)
def best_times(algorithm, Ns, meshes, machine, f, *, ncandidates: int = 48):
    """Minimum time over block sizes on a grid, vectorised over vector lengths.

    Ns : vector lengths (elements); meshes : list of (W, H).  Returns (times, S) arrays of
    shape (len(meshes), len(Ns)).  Block sizes tried for each N: a geometric grid of
    ``ncandidates`` values, one and two blocks, and ceil(N/B) for B* - 8 ... B* + 8 around
    the continuous optimum B* = N/S*.  The time is flat near its minimum, so the result
    is within 0.5 % of :func:`optimal_block` (exhaustive and exact); the exact optimum
    often prefers an S that divides N (no short last block).  The only Python loop is
    over the meshes (and, for small block counts, over B values).
    """
    name = _name(algorithm)
    m = _machine(machine)
    Ns = integers("Ns", Ns)
    if Ns.ndim != 1 or Ns.size == 0:
        raise ValueError(f"Ns must be a non-empty 1-D sequence of integers >= 1, got shape {Ns.shape}")
    meshes = _meshes(meshes)
    ncandidates = positive_int("ncandidates", ncandidates, minimum=2)
    if name == "Tree":
        fv = _ftable(f, (1,))
        levels = np.array([tree_levels(w, h) for w, h in meshes])[:, None]
        t = levels * (2 * (m.alpha + fv[1] * m.beta * Ns[None, :]) + m.c2 * Ns[None, :])
        return t.astype(float), np.broadcast_to(Ns[None, :], t.shape).astype(float)
    fv = _ftable(f, needed_links(name))
    geo = np.unique(np.geomspace(1, int(Ns.max()), ncandidates).round().astype(np.int64))
    Nv = Ns[:, None]
    times = np.empty((len(meshes), Ns.size))
    blocks = np.empty((len(meshes), Ns.size))
    for i, (W, H) in enumerate(meshes):
        a, K = _coefficients(name, W, H, m, fv)
        Bstar = np.sqrt(np.maximum(K, 0) * Nv / a) if a > 0 else np.ones_like(Nv, dtype=float)
        Bnear = np.clip(np.floor(Bstar) + np.arange(-8, 9)[None, :], 1, None).astype(np.int64)
        S = np.concatenate([np.broadcast_to(geo, (Ns.size, geo.size)), -(-Nv // Bnear),
                            Nv, -(-Nv // 2)], axis=1)
        S = np.minimum(S, Nv)
        t = _time_vec(name, W, H, -(-Nv // S), S, m, fv)
        j = np.argmin(t, axis=1)
        times[i] = t[np.arange(Ns.size), j]
        blocks[i] = S[np.arange(Ns.size), j]
    return times, blocks


def _meshes(meshes) -> list[tuple[int, int]]:
    """Validate a non-empty sequence of (W, H) meshes, each side an integer >= 1."""
    try:
        pairs = [tuple(mesh) for mesh in meshes]
    except TypeError:
        raise ValueError(f"meshes must be a non-empty sequence of (W, H) pairs, got {meshes!r}") from None
    if not pairs or any(len(p) != 2 for p in pairs):
        raise ValueError(f"meshes must be a non-empty sequence of (W, H) pairs, got {meshes!r}")
    return [(positive_int("W (of a mesh)", w), positive_int("H (of a mesh)", h)) for w, h in pairs]


def regime_map(Ns, meshes, machine, f):
    """Fastest algorithm on a grid: (winner index into ALGORITHMS, times, block sizes).

    ``times`` and ``S`` have shape (3, len(meshes), len(Ns)); winner has shape
    (len(meshes), len(Ns)).  Vectorised: one redraw of a 10 x 80 map takes milliseconds.
    """
    res = [best_times(a, Ns, meshes, machine, f) for a in ALGORITHMS]
    times = np.stack([r[0] for r in res])
    S = np.stack([r[1] for r in res])
    winner = np.argmin(times, axis=0)
    return winner, times, S


def curves(algorithm, N, W, H, Ss, machine, f) -> np.ndarray:
    """Time in seconds for each block size in ``Ss`` (NaN where S > N or S < 1), vectorised.

    ``Ss`` must hold whole numbers (ValueError for NaN or 10.5)."""
    name = _name(algorithm)
    m = _machine(machine)
    N = positive_int("N", N)
    S = integers("Ss", Ss, minimum=None)
    if name == "Tree":
        return np.full(S.shape, tree_time(N, W, H, m, f))
    fv = _ftable(f, needed_links(name))
    ok = (S >= 1) & (S <= N)
    Sc = np.where(ok, S, 1)
    t = _time_vec(name, positive_int("W", W), positive_int("H", H), -(-N // Sc), Sc, m, fv)
    return np.where(ok, t, np.nan)


# ------------------------------------------------------------------ Table 1 arithmetic
def _times(T, S) -> dict:
    """Validate the test jig's times: {L: finite times >= 0 in seconds, shaped like S}, L = 1 present."""
    if not isinstance(T, dict) or 1 not in T:
        raise ValueError("T must be a dict {L: times} containing the L = 1 times (f(L) = dT(L)/dT(1))")
    out = {}
    for L, t in T.items():
        L = positive_int("L (a key of T)", L)
        t = sizes(f"T[{L}]", t)
        if t.shape != S.shape:
            raise ValueError(f"T[{L}] must have the shape of S {S.shape}, got {t.shape}")
        out[L] = t
    return out


def f_from_testjig(S, T):
    """f(L) from a test jig as in the paper's Table 1.

    S : block sizes (elements), ascending, shape (n,).  T : dict {L: times (n,)} with L = 1
    present.  dT(L) is the difference of adjacent T's; f(L) = dT(L) / dT(1), shape (n-1,).
    Returns (dT, f) as dicts of arrays.
    """
    S = sizes("S", S)
    if S.ndim != 1 or S.size < 2 or np.any(np.diff(S) <= 0):
        raise ValueError("S must hold at least 2 strictly increasing block sizes")
    dT = {L: np.diff(t) for L, t in _times(T, S).items()}
    if np.any(dT[1] <= 0):
        raise ValueError("the L = 1 times must grow with S (dT(1) > 0)")
    return dT, {L: d / dT[1] for L, d in dT.items()}


def fit_f(S, T):
    """Least-squares f(L) from times T[L] (seconds) over block sizes S, one per L.

    Fits ``T(L, S) = a_L + f(L) β S`` with β from the L = 1 line (slope of T(1)).
    Returns ({L: f(L)}, β in seconds per element, {L: a_L in seconds}).
    """
    S = sizes("S", S)
    if S.ndim != 1 or np.unique(S).size < 2:
        raise ValueError("S must be 1-D with at least 2 distinct block sizes to fit a line")
    slopes, intercepts = {}, {}
    for L, t in _times(T, S).items():
        slope, icpt = np.polyfit(S, t, 1)
        slopes[L], intercepts[L] = slope, icpt
    beta = slopes[1]
    if beta <= 0:
        raise ValueError("the L = 1 times must grow with S to fit beta")
    return {L: s / beta for L, s in slopes.items()}, beta, intercepts


def long_vector_rate(algorithm: str, W: int, H: int, machine, f, N: int = 10**6) -> float:
    """Elements per second a combining algorithm adds for long vectors: ``N / (T(2N) - T(N))``,
    each length at its :func:`optimal_block` (Tree: one block), the paper's "asymptotic (long
    vector) throughput"."""
    def t(n):
        S = n if _name(algorithm) == "tree" else optimal_block(algorithm, n, W, H, machine, f)
        return time(algorithm, n, W, H, S, machine, f)
    return N / (t(2 * N) - t(N))
