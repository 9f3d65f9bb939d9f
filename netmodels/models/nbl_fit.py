"""f(L) of the NBL model from test-jig times (Littlefield 1992, section 4.2 and Table 1).

The jig times a node that receives from one neighbour (L = 1) or exchanges with 1, 2, 3
neighbours (L = 2, 4, 6) for several block sizes S.  Times are in seconds; S in any unit
(elements as the paper, or bytes): β comes out in seconds per that unit.
"""

from __future__ import annotations

import numpy as np

from .._check import positive_int, sizes


def _times(T, S) -> dict:
    """Validate the jig's times: {L: finite times >= 0 in seconds, shaped like S}, L = 1 present."""
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
    """f(L) as in the paper's Table 1: dT(L), the differences of adjacent T's, and
    f(L) = dT(L) / dT(1), shape (n-1,).

    S : block sizes, ascending, shape (n,).  T : dict {L: times (n,)} with L = 1 present.
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
    """Least-squares f(L) from times T[L] (s) over block sizes S, one line per L.

    Fits ``T(L, S) = a_L + f(L) β S`` with β the slope of the L = 1 line.  Returns
    ({L: f(L)}, β in s per unit of S, {L: a_L in s}).
    """
    S = sizes("S", S)
    if S.ndim != 1 or np.unique(S).size < 2:
        raise ValueError("S must be 1-D with at least 2 distinct block sizes to fit a line")
    slopes, intercepts = {}, {}
    for L, t in _times(T, S).items():
        slopes[L], intercepts[L] = np.polyfit(S, t, 1)
    beta = slopes[1]
    if beta <= 0:
        raise ValueError("the L = 1 times must grow with S to fit beta")
    return {L: s / beta for L, s in slopes.items()}, beta, intercepts
