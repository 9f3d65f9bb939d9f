"""The node-bandwidth-limited (NBL) model and vector combining on a 2-D mesh (Littlefield 1992).

A node that sends or receives ``L`` messages of ``S`` elements at nominally the same
time needs ``T(L) = L α + f(L) β S`` (section 2 of the paper).  ``f(1) = 1``;
``f(L) = 1`` is perfect overlap (the standard model), ``f(L) = L`` no overlap at all
(node bandwidth = link bandwidth).  An f table is a dict ``{L: f(L)}``.

Tree, Snake and Fence combine one vector of ``N`` elements per node over a
``W x H`` mesh (``P = W H``) and broadcast the result.  Their times are sums over
the step timelines of the paper's appendix (``PHASES``): every step costs
``L α + f(L) β S + c S`` for the busiest node, with ``c = c2`` or ``c3`` when the
step combines blocks.  ``N`` and ``S`` count vector elements; ``α`` is in seconds,
``β``, ``c2``, ``c3`` in seconds per element; all times are in seconds.

The timelines hold when there are at least 3 blocks (``B = ceil(N / S) >= 3``),
for Snake on ``P >= 3`` nodes and for Fence on meshes with ``W >= 3`` and
``H >= 2`` (with ``W = 2`` no bottom-row node has six active links).  Outside
that range the functions raise ``ValueError``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._check import positive, positive_int

#: f(L) = 1: links overlap perfectly (the paper's "standard model").
STANDARD = {1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0, 5: 1.0, 6: 1.0}
#: f(L) = L: no overlap, node bandwidth equals link bandwidth ("nominal NBL model").
NOMINAL = {1: 1.0, 2: 2.0, 3: 3.0, 4: 4.0, 5: 5.0, 6: 6.0}
#: f(L) fitted by the paper to its measured Snake and Fence times on the DELTA
#: (Littlefield 1992, section 4.2, "Fitted NBL Model"); f(1) = 1 by definition, f(5) unused.
FITTED_DELTA = {1: 1.0, 2: 1.1, 3: 1.3, 4: 3.9, 6: 5.1}

ALGORITHMS = ("Tree", "Snake", "Fence")

#: The step timelines of the paper's appendix: (number of steps, active links L of the
#: busiest node, combining arity: 0 none, 2 uses c2, 3 uses c3).  Counts are expressions
#: in P, W, H, B evaluated by :func:`phases`.
PHASES = {
    "Snake": [("1", 1, 2), ("P-2", 2, 2), ("1", 3, 2), ("B-3", 4, 2),
              ("1", 3, 2), ("P-2", 2, 0), ("1", 1, 0)],
    "Fence": [("1", 1, 2), ("H-1", 2, 2), ("W-2", 3, 3), ("1", 4, 3), ("B-3", 6, 3),
              ("1", 4, 3), ("W-2", 3, 0), ("H-1", 2, 0), ("1", 1, 0)],
}


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


def check_shape(algorithm: str, W: int, H: int) -> None:
    """Raise ValueError if the paper's timeline of ``algorithm`` does not hold on a W x H mesh."""
    name = _name(algorithm)
    W = positive_int("W", W)
    H = positive_int("H", H)
    if name == "Snake" and W * H < 3:
        raise ValueError(f"Snake's timeline needs P = W*H >= 3 nodes, got W={W}, H={H}")
    if name == "Fence" and (W < 3 or H < 2):
        raise ValueError(f"Fence's timeline needs W >= 3 and H >= 2, got W={W}, H={H}")


# ------------------------------------------------------------------ timelines
def phases(algorithm: str, W: int, H: int, B: int) -> list[tuple[int, int, int]]:
    """The paper's timeline as (steps, L, combining arity) for a W x H mesh and B blocks."""
    name = _name(algorithm)
    env = {"P": W * H, "W": W, "H": H, "B": B}
    if name == "Tree":
        levels = tree_levels(W, H)
        return [(levels, 1, 2), (levels, 1, 0)]
    return [(eval(c, {}, env), L, k) for c, L, k in PHASES[name]]  # noqa: S307 - fixed strings


def tree_levels(W: int, H: int) -> int:
    """Combining levels of Tree: ceil(log2 W) + ceil(log2 H) (= log2 P for powers of two)."""
    return (W - 1).bit_length() + (H - 1).bit_length()


def _phase_sum(name, P, W, H, B, S, m, fv):
    """Vectorised sum over a timeline; P, W, H, B, S broadcast as numpy arrays."""
    cost = {0: 0.0, 2: m.c2, 3: m.c3}
    total = 0.0
    env = {"P": P, "W": W, "H": H, "B": B}
    for c, L, k in PHASES[name]:
        count = eval(c, {}, env)  # noqa: S307 - fixed strings
        total = total + count * (L * m.alpha + (fv[L] * m.beta + cost[k]) * S)
    return total


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


def _pipelined(name, N, W, H, S, machine, f) -> float:
    N = positive_int("N", N)
    W = positive_int("W", W)
    H = positive_int("H", H)
    check_shape(name, W, H)
    S = positive_int("S", S)
    if S > N:
        raise ValueError(f"S must be in 1..N = {N}, got {S}")
    B = _blocks(N, S)
    if B < 3:
        raise ValueError(f"{name}'s timeline needs B = ceil(N/S) >= 3 blocks, got N={N}, S={S} (B={B}); "
                         f"use S <= {max((N - 1) // 2, 1)}")
    m = _machine(machine)
    fv = _ftable(f, needed_links(name))
    return float(_phase_sum(name, W * H, W, H, B, S, m, fv))


def snake_time(N, W, H, S, machine, f) -> float:
    """Snake (linear pipeline through all P nodes, blocks of S elements), in seconds."""
    return _pipelined("Snake", N, W, H, S, machine, f)


def fence_time(N, W, H, S, machine, f) -> float:
    """Fence (pipeline down the columns and along the bottom row), in seconds."""
    return _pipelined("Fence", N, W, H, S, machine, f)


def time(algorithm, N, W, H, S, machine, f) -> float:
    """Time of ``algorithm`` in seconds (S is ignored by Tree)."""
    name = _name(algorithm)
    if name == "Tree":
        return tree_time(N, W, H, machine, f)
    return _pipelined(name, N, W, H, S, machine, f)


def block_candidates(N: int) -> np.ndarray:
    """Every block size that can be optimal, ascending: for each block count B the smallest
    S with ceil(N/S) = B (time grows with S at fixed B), i.e. S = ceil(N/B)."""
    r = math.isqrt(N) + 1
    small = np.arange(1, min(r, N) + 1)
    large = -(-N // np.arange(1, r + 1))
    return np.unique(np.concatenate([small, large]))


def optimal_block(algorithm, N, W, H, machine, f) -> int:
    """The integer block size S (elements) that minimises the time; the smallest on ties.

    Exhaustive over :func:`block_candidates` with B >= 3.  Tree does not pipeline: N.
    """
    name = _name(algorithm)
    N = positive_int("N", N)
    if name == "Tree":
        tree_time(N, W, H, machine, f)  # validates the rest
        return N
    W = positive_int("W", W)
    H = positive_int("H", H)
    check_shape(name, W, H)
    if N < 3:
        raise ValueError(f"{name} needs N >= 3 elements (B >= 3 blocks), got N={N}")
    m = _machine(machine)
    fv = _ftable(f, needed_links(name))
    S = block_candidates(N)
    B = -(-N // S)
    S, B = S[B >= 3], B[B >= 3]
    t = _phase_sum(name, W * H, W, H, B, S.astype(float), m, fv)
    return int(S[int(np.argmin(t))])


def fastest(N, W, H, machine, f) -> tuple[str, int, float]:
    """(algorithm, S, seconds) of the fastest algorithm at its optimal block size.

    Only algorithms whose timeline holds for N, W, H compete (Snake and Fence need
    N >= 3 and the mesh of :func:`check_shape`).  For Tree, S = N (one block).
    """
    best = None
    for name in ALGORITHMS:
        try:
            S = optimal_block(name, N, W, H, machine, f)
        except ValueError:
            if name == "Tree":
                raise
            continue
        t = time(name, N, W, H, S, machine, f)
        if best is None or t < best[2]:
            best = (name, S, t)
    return best


# ------------------------------------------------------------------ continuous optimum
def continuous_optimal_block(algorithm, N, W, H, machine, f) -> float:
    """S* = sqrt(a N / K) minimising the timeline with B = N/S (real-valued).

    ``a`` is the start-up cost of a full-pipeline step (4α for Snake, 6α for Fence)
    and ``K`` the coefficient of S in T; see :mod:`netmodels.nbl_derivation`.
    """
    name = _name(algorithm)
    if name == "Tree":
        raise ValueError("algorithm must be 'Snake' or 'Fence' (Tree does not pipeline)")
    N = positive_int("N", N)
    check_shape(name, W, H)
    m = _machine(machine)
    fv = _ftable(f, needed_links(name))
    cost = {0: 0.0, 2: m.c2, 3: m.c3}
    a = K = 0.0
    for count, L, k in phases(name, W, H, 0):
        # counts are affine in B: the B-dependent phase is the full pipeline "B-3"
        per_S = fv[L] * m.beta + cost[k]
        if L == max(needed_links(name)):
            a = L * m.alpha
            K -= 3 * per_S
        else:
            K += count * per_S
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
    name = _name(algorithm)
    m = _machine(machine)
    a, b, c2, c3 = m.alpha, m.beta, m.c2, m.c3
    if name == "Snake":
        fv = _ftable(f, (2, 3, 4))
        den = (W * H - 2) * (c2 + 2 * b * fv[2]) + 2 * b * fv[3] - 3 * b * fv[4]
        return math.sqrt(N * a / den)
    if name == "Fence":
        fv = _ftable(f, (1, 2, 3, 4, 6))
        den = (H * (c2 + 2 * b * fv[2]) + W * (c3 + 2 * b * fv[3]) - 3 * c3
               + b * (2 * fv[1] - 2 * fv[2] - 4 * fv[3] + 2 * fv[4] - 3 * fv[6]))
        return math.sqrt(6 * N * a / den)
    raise ValueError("algorithm must be 'Snake' or 'Fence'")


# ------------------------------------------------------------------ regime map (vectorised)
def best_times(algorithm, Ns, meshes, machine, f, *, ncandidates: int = 48):
    """Minimum time over block sizes on a grid, vectorised (no Python loop over cells).

    Ns : vector lengths (elements); meshes : list of (W, H).  Returns (times, S) arrays of
    shape (len(meshes), len(Ns)); NaN where the timeline does not hold.  Block sizes tried:
    a geometric grid of ``ncandidates`` values plus ceil(N/B) around the continuous
    optimum B* = N/S* (B* - 8 ... B* + 8).  The time is flat near its minimum, so the result
    is within 0.5 % of :func:`optimal_block` (which is exhaustive and exact); the exact
    optimum often prefers an S that divides N (no short last block).
    """
    name = _name(algorithm)
    m = _machine(machine)
    Ns = np.asarray(Ns, dtype=np.int64)
    Wv = np.array([w for w, _ in meshes], dtype=np.int64)[:, None, None]
    Hv = np.array([h for _, h in meshes], dtype=np.int64)[:, None, None]
    Nv = Ns[None, :, None]
    if name == "Tree":
        fv = _ftable(f, (1,))
        levels = np.array([tree_levels(w, h) for w, h in meshes])[:, None]
        t = levels * (2 * (m.alpha + fv[1] * m.beta * Ns[None, :]) + m.c2 * Ns[None, :])
        return t.astype(float), np.broadcast_to(Ns[None, :], t.shape).astype(float)
    fv = _ftable(f, needed_links(name))
    # continuous optimum per cell: a N / K with K affine in W, H
    cost = {0: 0.0, 2: m.c2, 3: m.c3}
    Lmax = max(needed_links(name))
    env = {"P": Wv * Hv, "W": Wv, "H": Hv, "B": 0}
    K = 0.0
    for c, L, k in PHASES[name]:
        per_S = fv[L] * m.beta + cost[k]
        K = K + (-3 * per_S if L == Lmax else eval(c, {}, env) * per_S)  # noqa: S307
    Kpos = np.where(K > 0, K, np.nan)
    Bstar = np.sqrt(np.where(Kpos > 0, Kpos * Nv / (Lmax * m.alpha), 1.0))
    Bstar = np.nan_to_num(Bstar, nan=3.0)
    Bnear = np.clip(np.floor(Bstar) + np.arange(-8, 9)[None, None, :], 1, None)
    Snear = -(-Nv // Bnear.astype(np.int64))
    geo = np.unique(np.geomspace(1, max(int(Ns.max()), 1), ncandidates).round().astype(np.int64))
    S = np.concatenate([np.broadcast_to(geo[None, None, :], (len(meshes), len(Ns), geo.size)),
                        Snear], axis=2)
    B = -(-Nv // S)
    ok = (S <= Nv) & (B >= 3)
    t = _phase_sum(name, Wv * Hv, Wv, Hv, B, S.astype(float), m, fv)
    t = np.where(ok, t, np.inf)
    i = np.argmin(t, axis=2)
    tbest = np.take_along_axis(t, i[..., None], 2)[..., 0]
    Sbest = np.take_along_axis(S, i[..., None], 2)[..., 0].astype(float)
    valid = np.isfinite(tbest)
    if name == "Fence":
        valid &= ((Wv >= 3) & (Hv >= 2))[..., 0]
    else:
        valid &= ((Wv * Hv) >= 3)[..., 0]
    return np.where(valid, tbest, np.nan), np.where(valid, Sbest, np.nan)


def regime_map(Ns, meshes, machine, f):
    """Fastest algorithm on a grid: (winner index into ALGORITHMS, times, block sizes).

    ``times`` and ``S`` have shape (3, len(meshes), len(Ns)); winner has shape
    (len(meshes), len(Ns)).  Vectorised: one redraw of a 40 x 60 map takes milliseconds.
    """
    res = [best_times(a, Ns, meshes, machine, f) for a in ALGORITHMS]
    times = np.stack([r[0] for r in res])
    S = np.stack([r[1] for r in res])
    winner = np.argmin(np.where(np.isnan(times), np.inf, times), axis=0)
    return winner, times, S


def curves(algorithm, N, W, H, Ss, machine, f) -> np.ndarray:
    """Time in seconds for each block size in ``Ss`` (NaN where B < 3 or S > N), vectorised."""
    name = _name(algorithm)
    m = _machine(machine)
    S = np.asarray(Ss, dtype=np.int64)
    if name == "Tree":
        return np.full(S.shape, tree_time(N, W, H, m, f))
    check_shape(name, W, H)
    fv = _ftable(f, needed_links(name))
    B = -(-N // S)
    t = _phase_sum(name, W * H, W, H, B, S.astype(float), m, fv)
    return np.where((S <= N) & (B >= 3) & (S >= 1), t, np.nan)


# ------------------------------------------------------------------ Table 1 arithmetic
def f_from_testjig(S, T):
    """f(L) from a test jig as in the paper's Table 1.

    S : block sizes (elements), ascending, shape (n,).  T : dict {L: times (n,)} with L = 1
    present.  dT(L) is the difference of adjacent T's; f(L) = dT(L) / dT(1), shape (n-1,).
    Returns (dT, f) as dicts of arrays.
    """
    S = np.asarray(S, dtype=float)
    if S.ndim != 1 or S.size < 2 or np.any(np.diff(S) <= 0):
        raise ValueError("S must hold at least 2 strictly increasing block sizes")
    if 1 not in T:
        raise ValueError("T must contain the L = 1 times (f(L) = dT(L)/dT(1))")
    dT = {}
    for L, t in T.items():
        t = np.asarray(t, dtype=float)
        if t.shape != S.shape:
            raise ValueError(f"T[{L}] must have the shape of S {S.shape}, got {t.shape}")
        dT[L] = np.diff(t)
    if np.any(dT[1] <= 0):
        raise ValueError("the L = 1 times must grow with S (dT(1) > 0)")
    return dT, {L: d / dT[1] for L, d in dT.items()}


def fit_f(S, T):
    """Least-squares f(L) from times T[L] (seconds) over block sizes S, one per L.

    Fits ``T(L, S) = a_L + f(L) β S`` with β from the L = 1 line (slope of T(1)).
    Returns ({L: f(L)}, β in seconds per element, {L: a_L in seconds}).
    """
    S = np.asarray(S, dtype=float)
    if 1 not in T:
        raise ValueError("T must contain the L = 1 times")
    slopes, intercepts = {}, {}
    for L, t in T.items():
        slope, icpt = np.polyfit(S, np.asarray(t, dtype=float), 1)
        slopes[L], intercepts[L] = slope, icpt
    beta = slopes[1]
    if beta <= 0:
        raise ValueError("the L = 1 times must grow with S to fit beta")
    return {L: s / beta for L, s in slopes.items()}, beta, intercepts
