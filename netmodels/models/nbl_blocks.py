"""Block sizes and regime maps of Tree, Snake and Fence under the NBL model (Littlefield 1992).

Every time here is :func:`netmodels.models.nbl_paper.time` (or its vectorised form) of an
:class:`~netmodels.models.nbl.NBLModel`; sizes N and S count vector elements, times are in
seconds.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from .._check import integers, positive_int
from .nbl_paper import (ALGORITHMS, affine_timeline, check_model, name_of, phase_sum, time, time_vec,
                        tree_levels, tree_time)


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


def optimal_block(algorithm, N, W, H, model, *, block_range=None) -> int:
    """The integer block size S (elements) that minimises the time; the smallest on ties.

    ``block_range=(low, high)`` restricts S to low..high (high clipped to N), e.g. the
    paper's ``machines.DELTA_BLOCK_RANGE`` (20..600); default 1..N.  Exhaustive over
    :func:`block_candidates` clipped into the range.  Tree does not pipeline: N.
    """
    name = name_of(algorithm)
    N = positive_int("N", N)
    lo, hi = _block_range(block_range, N)
    if name == "Tree":
        tree_time(N, W, H, model)  # validates the rest
        return N
    W, H = positive_int("W", W), positive_int("H", H)
    S = np.unique(np.clip(block_candidates(N), lo, hi))
    t = time_vec(name, W, H, -(-N // S), S, check_model(model))
    return int(S[int(np.argmin(t))])


def fastest(N, W, H, model, *, block_range=None) -> tuple[str, int, float]:
    """(algorithm, S, seconds) of the fastest algorithm at its optimal block size (Tree: S = N).
    Ties go to the algorithm listed first in ALGORITHMS."""
    best = None
    for name in ALGORITHMS:
        S = optimal_block(name, N, W, H, model, block_range=block_range)
        t = time(name, N, W, H, S, model)
        if best is None or t < best[2] * (1 - 1e-12):  # equal times (Snake with B = 1 on
            best = (name, S, t)                        # a chain is Tree): the first listed
    return best


# ------------------------------------------------------------------ continuous optimum
def relaxed_time(algorithm, N, W, H, S, model, *, paper_charges: bool = False):
    """Seconds of Snake or Fence with B = N / S real (the continuous relaxation, for
    B >= the timeline's B0); S (elements) may be real or an array."""
    name, N, W, H = _pipeline_args(algorithm, N, W, H)
    _, aff = affine_timeline(name, W, H, paper=paper_charges)
    return phase_sum([(a + b * (N / S), L, k) for a, b, L, k in aff], S, check_model(model))


def _coefficients(name, W, H, m, paper=False):
    """(a, K) of T = A + a B + K S for B >= B0: a = start-ups (s) of the phase that grows with
    B, K = seconds per element of S of the other phases (the growing phase's S B is N)."""
    _, aff = affine_timeline(name, W, H, paper=paper)
    a = phase_sum([(b, L, k) for _, b, L, k in aff], 0.0, m)
    K = phase_sum([(c, L, k) for c, _, L, k in aff], 1.0, replace(m, alpha=0.0))
    return a, K


def _pipeline_args(algorithm, N, W, H):
    """Validated (name, N, W, H) for the pipelined algorithms (Snake, Fence)."""
    name = name_of(algorithm)
    if name == "Tree":
        raise ValueError("algorithm must be 'Snake' or 'Fence' (Tree does not pipeline)")
    return name, positive_int("N", N), positive_int("W", W), positive_int("H", H)


def continuous_optimal_block(algorithm, N, W, H, model, *, paper_charges: bool = False) -> float:
    """S* = sqrt(a N / K) (elements) minimising :func:`relaxed_time`: ``a`` the start-ups of a
    full-pipeline step (4α for Snake, 6α for Fence in the paper's regime), ``K`` the
    coefficient of S; see :mod:`netmodels.models.nbl_derivation`.  ``paper_charges=True``:
    Fence's step H charged c2 as in the appendix (its eq. 1)."""
    name, N, W, H = _pipeline_args(algorithm, N, W, H)
    if W * H < 2:
        raise ValueError("a pipeline needs P = W*H >= 2 nodes")
    a, K = _coefficients(name, W, H, check_model(model), paper_charges)
    if K <= 0:
        raise ValueError("the timeline's coefficient of S is <= 0 for these parameters: no interior optimum")
    return math.sqrt(a * N / K)


def paper_printed_optimal_block(algorithm, N, W, H, model) -> float:
    """S_opt (elements) as printed in the paper's appendix, with β, c2, c3 per element:

    Snake: (N α / ((P-2)(c2 + 2β f(2)) + 2β f(3) - 3β f(4)))^(1/2)
    Fence: (6 N α / [H(c2 + 2β f(2)) + W(c3 + 2β f(3)) - 3 c3
                     + β(2f(1) - 2f(2) - 4f(3) + 2f(4) - 3f(6))])^(1/2)      (eq. 1)
    """
    name, N, W, H = _pipeline_args(algorithm, N, W, H)
    m = check_model(model)
    e = m.elem_bytes
    a, b, c2, c3, f = m.alpha, m.beta * e, m.c2 * e, m.c3 * e, m.f_of
    if name == "Snake":
        num, den = N * a, (W * H - 2) * (c2 + 2 * b * f(2)) + 2 * b * f(3) - 3 * b * f(4)
    else:
        num = 6 * N * a
        den = (H * (c2 + 2 * b * f(2)) + W * (c3 + 2 * b * f(3)) - 3 * c3
               + b * (2 * f(1) - 2 * f(2) - 4 * f(3) + 2 * f(4) - 3 * f(6)))
    if den <= 0:
        raise ValueError(f"the printed formula's denominator must be > 0, got {den!r} "
                         f"for {name} on {W}x{H} with these parameters (no interior optimum)")
    return math.sqrt(num / den)


# ------------------------------------------------------------------ regime map (vectorised)
def best_times(algorithm, Ns, meshes, model, *, ncandidates: int = 48):
    """Minimum time over block sizes on a grid, vectorised over vector lengths.

    Ns : vector lengths (elements); meshes : list of (W, H).  Returns (times, S) arrays of
    shape (len(meshes), len(Ns)).  Block sizes tried for each N: a geometric grid of
    ``ncandidates`` values, one and two blocks, and ceil(N/B) for B* - 8 ... B* + 8 around
    the continuous optimum B* = N/S*.  The time is flat near its minimum, so the result
    is within 0.5 % of :func:`optimal_block` (exhaustive and exact).
    """
    name = name_of(algorithm)
    m = check_model(model)
    Ns = integers("Ns", Ns)
    if Ns.ndim != 1 or Ns.size == 0:
        raise ValueError(f"Ns must be a non-empty 1-D sequence of integers >= 1, got shape {Ns.shape}")
    meshes = _meshes(meshes)
    ncandidates = positive_int("ncandidates", ncandidates, minimum=2)
    if name == "Tree":
        levels = np.array([tree_levels(w, h) for w, h in meshes])[:, None]
        NB = Ns[None, :] * m.elem_bytes
        t = levels * (2 * m.step_time(1, NB) + m.step_time(0, NB, m.c2))
        return t.astype(float), np.broadcast_to(Ns[None, :], t.shape).astype(float)
    geo = np.unique(np.geomspace(1, int(Ns.max()), ncandidates).round().astype(np.int64))
    Nv = Ns[:, None]
    times = np.empty((len(meshes), Ns.size))
    blocks = np.empty((len(meshes), Ns.size))
    for i, (W, H) in enumerate(meshes):
        a, K = _coefficients(name, W, H, m)
        Bstar = np.sqrt(np.maximum(K, 0) * Nv / a) if a > 0 else np.ones_like(Nv, dtype=float)
        Bnear = np.clip(np.floor(Bstar) + np.arange(-8, 9)[None, :], 1, None).astype(np.int64)
        S = np.concatenate([np.broadcast_to(geo, (Ns.size, geo.size)), -(-Nv // Bnear),
                            Nv, -(-Nv // 2)], axis=1)
        S = np.minimum(S, Nv)
        t = time_vec(name, W, H, -(-Nv // S), S, m)
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


def regime_map(Ns, meshes, model):
    """Fastest algorithm on a grid: (winner index into ALGORITHMS, times, block sizes);
    ``times`` and ``S`` have shape (3, len(meshes), len(Ns)), winner (len(meshes), len(Ns))."""
    res = [best_times(a, Ns, meshes, model) for a in ALGORITHMS]
    times = np.stack([r[0] for r in res])
    S = np.stack([r[1] for r in res])
    return np.argmin(times, axis=0), times, S


def long_vector_rate(algorithm: str, W: int, H: int, model, N: int = 10**6) -> float:
    """Elements per second a combining algorithm adds for long vectors: ``N / (T(2N) - T(N))``,
    each length at its :func:`optimal_block` (Tree: one block), the paper's "asymptotic (long
    vector) throughput"."""
    def t(n):
        return time(algorithm, n, W, H, optimal_block(algorithm, n, W, H, model), model)
    return N / (t(2 * N) - t(N))
