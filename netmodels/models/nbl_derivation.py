"""Derivations behind :mod:`netmodels.models.nbl_paper` and :mod:`~netmodels.models.nbl_blocks`:
the closed forms and optimal block sizes with sympy, and the step timeline of an executable
schedule.

What is checked against what:

* :func:`symbolic_time` sums a timeline *table* (``nbl_paper.TIMELINES``, the model's, or
  ``nbl_paper.PHASES``, the paper's appendix as printed) with section 2's step cost
  ``L α + f(L) β S`` plus combining; it never looks at messages.
* :func:`schedule_timeline` counts, step by step, the links and combines of an
  executable schedule of :mod:`netmodels.algorithms.combining` (the one MPI runs); it never
  looks at the tables.
* ``nbl_paper.count_timeline`` (in :mod:`netmodels.models.nbl_paper`, which uses it for meshes and block
  counts outside the tables) counts the registry's schedules (``allreduce.snake`` and
  ``allreduce.fence``, the one Snake/Fence generator), vectorised.

The tests compare the counts with the tables; the tables are not derived from the schedules.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from .nbl import active_links
from .nbl_paper import PHASES, TIMELINES, name_of as _name

alpha, beta, c2, c3 = sp.symbols("alpha beta c_2 c_3", positive=True)
N, S, B, P, W, H = sp.symbols("N S B P W H", positive=True)
f = sp.Function("f")
COMBINE = {0: 0, 2: c2, 3: c3}


def expand(phase_list) -> tuple[np.ndarray, np.ndarray]:
    """Per-step (L, arity) arrays of a phase list (steps, L, arity)."""
    L = np.concatenate([np.full(n, L_, dtype=int) for n, L_, _ in phase_list if n > 0])
    k = np.concatenate([np.full(n, k_, dtype=int) for n, _, k_ in phase_list if n > 0])
    return L, k


# ------------------------------------------------------------------ closed forms with sympy
def _count(expr: str):
    return sp.sympify(expr, locals={"P": P, "W": W, "H": H, "B": B})


def symbolic_time(algorithm: str, *, appendix_step: bool = False, paper_charges: bool = False) -> sp.Expr:
    """Total time as a sympy expression in alpha, beta, c_2, c_3, f(L), P, W, H, B, S.

    Step cost from section 2: ``L α + f(L) β S`` (+ c S).  With ``appendix_step=True``
    the step cost printed in the paper's appendix, ``L (α + f(L) β S)``, instead.
    Timeline: the model's (``nbl_paper.TIMELINES``), or with ``paper_charges=True`` the
    appendix's table (``nbl_paper.PHASES``: c2 at Fence's step H).
    Tree: the appendix formula with P = 2^k levels log2 W + log2 H.
    """
    name = _name(algorithm)
    if name == "Tree":
        return (sp.log(W, 2) + sp.log(H, 2)) * (2 * (alpha + f(1) * beta * N) + c2 * N)
    total = 0
    for c, L, k in (PHASES if paper_charges else TIMELINES)[name]:
        comm = L * (alpha + f(L) * beta * S) if appendix_step else L * alpha + f(L) * beta * S
        total += _count(c) * (comm + COMBINE[k] * S)
    return sp.expand(total)


def optimal_block_symbolic(algorithm: str, *, appendix_step: bool = False,
                           paper_charges: bool = False) -> sp.Expr:
    """S_opt solving dT/dS = 0 with B = N/S (options as in :func:`symbolic_time`).

    With B = N/S the time is ``A + a N / S + K S``: S_opt = sqrt(a N / K), the only
    positive root when K > 0 (checked: dT/dS vanishes there).
    """
    T = sp.expand(symbolic_time(algorithm, appendix_step=appendix_step,
                                paper_charges=paper_charges).subs(B, N / S))
    K, aN = T.coeff(S, 1), T.coeff(S, -1)
    assert sp.simplify(T - K * S - aN / S).free_symbols.isdisjoint({S})
    sopt = sp.sqrt(aN / K)
    assert sp.simplify(sp.diff(T, S).subs(S, sopt)) == 0
    return sopt


def paper_printed_optimal_block(algorithm: str) -> sp.Expr:
    """The S_opt formulas as printed in the paper's appendix."""
    name = _name(algorithm)
    if name == "Snake":
        return sp.sqrt(N * alpha / ((P - 2) * (c2 + 2 * beta * f(2)) + 2 * beta * f(3) - 3 * beta * f(4)))
    if name == "Fence":
        return sp.sqrt(6 * N * alpha / (H * (c2 + 2 * beta * f(2)) + W * (c3 + 2 * beta * f(3)) - 3 * c3
                                         + beta * (2 * f(1) - 2 * f(2) - 4 * f(3) + 2 * f(4) - 3 * f(6))))
    raise ValueError("algorithm must be 'Snake' or 'Fence'")


# ------------------------------------------------------------------ executable schedules
def schedule_timeline(sched) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per step of a :class:`~netmodels.algorithms.schedule.Schedule`: the most active links of a rank,
    the widest combine (0, 2 or 3 vectors) and the largest block (elements)."""
    L = active_links(sched).max(axis=1, initial=0)
    k, s = [], []
    for step in sched.steps:
        arrivals = np.zeros(sched.nprocs, int)
        for tr in step:
            arrivals[tr.dst] += tr.combine
        k.append(arrivals.max() + 1 if arrivals.max() else 0)
        s.append(max(tr.count for tr in step))
    return L, np.array(k, dtype=int), np.array(s, dtype=int)
