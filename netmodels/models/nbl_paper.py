"""Vector combining on a 2-D mesh under the NBL model (Littlefield 1992): timelines and times.

Tree, Snake and Fence combine one vector of ``N`` elements per node over a ``W x H`` mesh
(``P = W H``) and broadcast the result; Snake and Fence pipeline blocks of ``S`` elements
(``B = ceil(N / S)`` blocks).  A time is a sum over a step timeline, a list of phases
``(steps, L of the busiest node, combining arity: 0 none, 2 uses c2, 3 uses c3)``, each step
costing :meth:`~netmodels.models.nbl.NBLModel.step_time` with ``S elem_bytes`` bytes.  Times
are in seconds; ``N`` and ``S`` count elements.

The paper's appendix tabulates the timelines (``PHASES``, as printed) for ``B >= 3``, Snake
on ``P >= 3`` nodes and Fence on meshes with ``W >= 3`` and ``H >= 2`` (:func:`in_paper_regime`).
Elsewhere the timeline is counted on the registry's schedule (:func:`count_timeline`), so
every mesh and every block count has a time.

One charge of the table is not the model's: at Fence's step ``H`` node ``(W-2, 0)`` already
combines three vectors, and the table books ``c2``.  The model charges ``c3`` wherever three
vectors meet (``TIMELINES``), so the tables and the counted timelines are one function of
``B``, ``W``, ``H``.  ``paper_charges=True`` gives the table's total, to compare with the
paper's printed formulas.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .._check import integers, positive_int
from .nbl import NBLModel, links

ALGORITHMS = ("Tree", "Snake", "Fence")

#: The step timelines of the paper's appendix, as printed: (number of steps, active links
#: L of the busiest node, combining arity).  Counts are expressions in P, W, H, B.
PHASES = {
    "Snake": [("1", 1, 2), ("P-2", 2, 2), ("1", 3, 2), ("B-3", 4, 2),
              ("1", 3, 2), ("P-2", 2, 0), ("1", 1, 0)],
    "Fence": [("1", 1, 2), ("H-1", 2, 2), ("W-2", 3, 3), ("1", 4, 3), ("B-3", 6, 3),
              ("1", 4, 3), ("W-2", 3, 0), ("H-1", 2, 0), ("1", 1, 0)],
}
#: The timelines the model charges: the paper's, except Fence's step H, where node
#: (W-2, 0) combines three vectors (c3; the table books c2).
TIMELINES = {
    "Snake": PHASES["Snake"],
    "Fence": [("1", 1, 2), ("H-2", 2, 2), ("1", 2, 3)] + PHASES["Fence"][2:],
}


def name_of(algorithm) -> str:
    """The algorithm's name as ALGORITHMS spells it (any case); ValueError otherwise."""
    for a in ALGORITHMS:
        if isinstance(algorithm, str) and algorithm.lower() == a.lower():
            return a
    raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")


def in_paper_regime(algorithm: str, W: int, H: int) -> bool:
    """True if the paper's tabulated timeline of ``algorithm`` holds on a W x H mesh (B >= 3)."""
    name = name_of(algorithm)
    if name == "Snake":
        return W * H >= 3
    if name == "Fence":
        return W >= 3 and H >= 2
    return True


def tree_levels(W: int, H: int) -> int:
    """Combining levels of Tree: ceil(log2 W) + ceil(log2 H) (= log2 P for powers of two)."""
    return (W - 1).bit_length() + (H - 1).bit_length()


def phases(algorithm: str, W: int, H: int, B: int, *, paper: bool = True) -> list[tuple[int, int, int]]:
    """The tabulated timeline (steps, L, arity) for a W x H mesh and B blocks: the paper's
    appendix as printed (``paper=True``) or the model's (``TIMELINES``)."""
    name = name_of(algorithm)
    if name == "Tree":
        levels = tree_levels(W, H)
        return [(levels, 1, 2), (levels, 1, 0)]
    env = {"P": W * H, "W": W, "H": H, "B": B}
    return [(eval(c, {}, env), L, k) for c, L, k in (PHASES if paper else TIMELINES)[name]]  # noqa: S307


# ------------------------------------------------------------------ counted timelines
def schedule(algorithm: str, W: int, H: int, B: int):
    """The registry's schedule of Snake or Fence on a W x H mesh with B blocks of one element."""
    from ..algorithms import registry

    name = name_of(algorithm)
    if name == "Tree":
        raise ValueError("algorithm must be 'Snake' or 'Fence'")
    return registry.build(f"allreduce.{name.lower()}", W * H, B, block=1, mesh=(W, H))


def messages(algorithm: str, W: int, H: int, B: int) -> list[tuple[int, int, int, bool]]:
    """All messages (step, src, dst, combines) of Snake or Fence; steps count from 1."""
    out = []
    for t, st in enumerate(schedule(algorithm, W, H, B).steps, start=1):
        msg = st.src != st.dst
        out += [(t, int(a), int(b), bool(c)) for a, b, c in zip(st.src[msg], st.dst[msg], st.combine[msg])]
    return out


def count_timeline(algorithm: str, W: int, H: int, B: int) -> tuple[np.ndarray, np.ndarray]:
    """Per step of the registry's schedule: L of the busiest node (:func:`~netmodels.models.nbl.links`)
    and the widest combine (0, or 1 + the combining blocks a node receives).  ValueError if a
    link carries two messages in one step (the algorithms are free of link conflicts)."""
    from .step import steps

    sched = schedule(algorithm, W, H, B)
    L = np.zeros(sched.nsteps, dtype=int)
    k = np.zeros(sched.nsteps, dtype=int)
    for t, st in enumerate(steps(sched)):
        if st is None or st.src.size == 0:
            continue
        if np.unique(st.src * st.nprocs + st.dst).size < st.src.size:
            raise ValueError("link conflict: a link carries two messages in one step")
        L[t] = links(st).max()
        arrivals = np.bincount(st.dst[st.combine], minlength=st.nprocs).max(initial=0)
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
    """(B0, phases) with phases (a, b, L, arity): for every B >= B0 the timeline has ``a + b B``
    steps of each kind.  The table (B0 = 3) where it holds (the model's, or the paper's
    charges if ``paper``); otherwise read off counted timelines at B0 and B0 + 1."""
    name = name_of(algorithm)
    if in_paper_regime(name, W, H):
        env0 = {"P": W * H, "W": W, "H": H, "B": 0}
        return 3, tuple((eval(c, {}, env0), int("B" in c), L, k)  # noqa: S307
                        for c, L, k in (PHASES if paper else TIMELINES)[name])
    B0 = 2 * (W + H) + 4 if name == "Fence" else 2 * W * H + 4
    p0, p1 = _counted(name, W, H, B0), _counted(name, W, H, B0 + 1)
    if [x[1:] for x in p0] != [x[1:] for x in p1]:
        raise RuntimeError(f"{name} {W}x{H}: timeline not yet stable at B0 = {B0}")
    return B0, tuple((c0 - (c1 - c0) * B0, c1 - c0, L, k) for (c0, L, k), (c1, _, _) in zip(p0, p1))


def timeline(algorithm: str, W: int, H: int, B: int, *, paper: bool = False) -> list[tuple[int, int, int]]:
    """The timeline (steps, L, arity) of any algorithm on any W x H mesh with B >= 1 blocks
    (``paper=True``: the appendix's c2 at Fence's step H where its table applies)."""
    name = name_of(algorithm)
    if name == "Tree":
        return phases(name, W, H, B)
    B0, aff = affine_timeline(name, W, H, paper=paper)
    if B >= B0:
        return [(a + b * B, L, k) for a, b, L, k in aff]
    return list(_counted(name, W, H, B))


# ------------------------------------------------------------------ times
def phase_sum(phase_list, S, model: NBLModel):
    """Seconds of a timeline: ``sum steps * model.step_time(L, S elem_bytes, c)`` over
    (steps, L, arity) phases; steps and S (elements) may be numpy arrays."""
    SB = S * model.elem_bytes
    return sum(n * model.step_time(L, SB, model.combine_cost(k)) for n, L, k in phase_list)


def check_model(model) -> NBLModel:
    """``model`` if it is an :class:`~netmodels.models.nbl.NBLModel`; ValueError otherwise."""
    if not isinstance(model, NBLModel):
        raise ValueError(f"model must be an NBLModel, got {model!r}")
    return model


def time_vec(name, W, H, B, S, model, paper=False):
    """Seconds of Snake or Fence on one mesh for arrays of block counts B and sizes S (elements)."""
    B, S = np.broadcast_arrays(np.asarray(B, dtype=np.int64), np.asarray(S, dtype=float))
    out = np.zeros(B.shape)
    B0, aff = affine_timeline(name, W, H, paper=paper)
    big = B >= B0
    if np.any(big):
        out[big] = phase_sum([(a + b * B[big], L, k) for a, b, L, k in aff], S[big], model)
    for b in np.unique(B[~big]):
        sel = B == b
        out[sel] = phase_sum(_counted(name, W, H, int(b)), S[sel], model)
    return out


def tree_time(N, W, H, model) -> float:
    """Tree (binary-tree combine then broadcast, no pipelining), in seconds: per level two
    one-link steps of N elements and one combine (the paper's appendix)."""
    N, W, H = positive_int("N", N), positive_int("W", W), positive_int("H", H)
    m = check_model(model)
    NB = N * m.elem_bytes
    return float(tree_levels(W, H) * (2 * m.step_time(1, NB) + m.step_time(0, NB, m.c2)))


def time(algorithm, N, W, H, S, model, *, paper_charges: bool = False) -> float:
    """Seconds of ``algorithm`` with blocks of S elements (S is ignored by Tree).

    ``paper_charges=True``: Fence's step H charged c2 as in the appendix."""
    name = name_of(algorithm)
    if name == "Tree":
        return tree_time(N, W, H, model)
    N, W, H, S = positive_int("N", N), positive_int("W", W), positive_int("H", H), positive_int("S", S)
    if S > N:
        raise ValueError(f"S must be in 1..N = {N}, got {S}")
    return float(time_vec(name, W, H, -(-N // S), S, check_model(model), paper_charges))


def curves(algorithm, N, W, H, Ss, model) -> np.ndarray:
    """Seconds for each block size in ``Ss`` (NaN where S > N or S < 1), vectorised.

    ``Ss`` must hold whole numbers (ValueError for NaN or 10.5)."""
    name = name_of(algorithm)
    N = positive_int("N", N)
    S = integers("Ss", Ss, minimum=None)
    if name == "Tree":
        return np.full(S.shape, tree_time(N, W, H, model))
    ok = (S >= 1) & (S <= N)
    Sc = np.where(ok, S, 1)
    t = time_vec(name, positive_int("W", W), positive_int("H", H), -(-N // Sc), Sc, check_model(model))
    return np.where(ok, t, np.nan)
