"""The node-bandwidth-limited (NBL) model (Littlefield 1992, section 2) and its step rule.

A node with ``L`` links nominally active at once, moving messages of ``S`` bytes, needs
``T(L) = L α + f(L) β S``, plus ``c S`` where it combines (``c2`` for two vectors, ``c3``
for three): :meth:`NBLModel.step_time`, the one place the kit computes it.  ``f(1) = 1``;
``f(L) = 1`` is the paper's standard model (perfect overlap), ``f(L) = L`` the nominal NBL
model (node bandwidth = link bandwidth).

Units: α in s per message, β in s per byte, c2 and c3 in s per byte combined (the paper
counts per element: divide by ``elem_bytes``, as :data:`netmodels.models.machines.DELTA`
does).  The paper's algorithms count vector elements; ``elem_bytes`` turns them into bytes.

The rest of the NBL material has rooms of its own: :mod:`~netmodels.models.nbl_paper` (Tree,
Snake and Fence on a mesh: the paper's timelines and their times), :mod:`~netmodels.models.nbl_blocks`
(block sizes and regime maps), :mod:`~netmodels.models.nbl_fit` (f(L) from a test jig) and
:mod:`~netmodels.models.nbl_derivation` (sympy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from .._check import positive, positive_int
from .step import Step, SyncRule

#: f(L) = 1: links overlap perfectly (the paper's "standard model").
STANDARD = {1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0, 5: 1.0, 6: 1.0}
#: f(L) = L: no overlap, node bandwidth equals link bandwidth ("nominal NBL model").
NOMINAL = {1: 1.0, 2: 2.0, 3: 3.0, 4: 4.0, 5: 5.0, 6: 6.0}
#: f(L) fitted by the paper to its measured Snake and Fence times on the DELTA
#: (Littlefield 1992, section 4.2, "Fitted NBL Model"); f(1) = 1 by definition, f(5) unused.
FITTED_DELTA = {1: 1.0, 2: 1.1, 3: 1.3, 4: 3.9, 6: 5.1}


@dataclass(frozen=True)
class NBLModel:
    """The NBL model: ``L α + f(L) β S + c S`` per node and step, and its step rule.

    alpha: s per message (>= 0).  beta: s per byte (>= 0).  f: ``{L: f(L)}`` (``f(1) = 1``
    is implied), a callable ``L -> f(L)``, or None for ``f(L) = 1``.  c2, c3: s per byte to
    combine two / three vectors (>= 0; c3 None: two pairwise combines, ``2 c2``).
    elem_bytes: bytes per vector element where element counts meet β (the closed forms
    of :mod:`~netmodels.models.nbl_paper`; the simulator passes its own, default 8).

    **Step rule** (section 3.3, "loosely synchronous"; :meth:`step_rule`): ``L`` of a node
    is the number of messages it sends plus the number it receives (:func:`links`: one link
    per direction and neighbour, as on the DELTA; the f(L) test jig counts a node receiving
    from one neighbour as L = 1 and one exchanging with 1, 2, 3 neighbours as L = 2, 4, 6),
    ``S`` the largest message it handles (bytes; with a topology times the message's largest
    link load).  A node that receives ``k`` combining blocks onto the same block (same start
    and count) does one ``(k+1)``-way combine of them (:meth:`combine_cost`); copies cost
    nothing.  Under the simulator's *sync* semantics a step costs the largest communication
    time plus the largest combining time over the nodes.
    """

    alpha: float
    beta: float
    f: Mapping[int, float] | Callable[[int], float] | None = None
    c2: float = 0.0
    c3: float | None = None
    elem_bytes: int = 8
    name: str = ""
    source: str = ""

    #: the timing semantics the simulator uses for this model unless told otherwise
    semantics = "sync"

    def __post_init__(self):
        for field in ("alpha", "beta", "c2"):
            object.__setattr__(self, field, positive(field, getattr(self, field), allow_zero=True))
        c3 = 2 * self.c2 if self.c3 is None else positive("c3", self.c3, allow_zero=True)
        object.__setattr__(self, "c3", c3)
        object.__setattr__(self, "elem_bytes", positive_int("elem_bytes", self.elem_bytes))
        if isinstance(self.f, Mapping):
            for L, v in self.f.items():
                if not isinstance(L, int) or L < 1:
                    raise ValueError(f"f keys are link counts L, integers >= 1; got {L!r}")
                positive(f"f({L})", v)
        elif self.f is not None and not callable(self.f):
            raise ValueError(f"f must be a dict {{L: f(L)}}, a callable or None, got {self.f!r}")

    @classmethod
    def standard(cls, alpha, beta, c2=0.0, c3=None, name="standard model"):
        """``f(L) = 1``: links overlap perfectly (units as the class)."""
        return cls(alpha, beta, None, c2, c3, name=name)

    @classmethod
    def nominal(cls, alpha, beta, c2=0.0, c3=None, name="nominal NBL model"):
        """``f(L) = L``: no overlap, the node's bandwidth is one link's (units as the class)."""
        return cls(alpha, beta, float, c2, c3, name=name)

    @property
    def link_bandwidth(self) -> float:
        """One link's bandwidth 1 / β in B/s."""
        return 1.0 / self.beta

    def _f(self, L: int) -> float:
        if L < 1:
            return 0.0
        if L == 1 or self.f is None:
            return 1.0
        if isinstance(self.f, Mapping):
            if L not in self.f:
                raise ValueError(f"the f table has no value for L = {L} (it has L = {sorted(self.f)}); "
                                 f"add f({L}) or pass f as a callable")
            return float(self.f[L])
        return float(self.f(L))

    def f_of(self, L):
        """f(L) for an integer or an array of them (``f(0) = 0``, ``f(1) = 1``); ValueError
        if a table ``f`` has no entry for an L asked."""
        L = np.asarray(L)
        if L.ndim == 0:
            return self._f(int(L))
        values, index = np.unique(L, return_inverse=True)
        return np.array([self._f(int(v)) for v in values])[index].reshape(L.shape)

    def combine_cost(self, ways: int) -> float:
        """s per byte of a ``ways``-way combine: 0 below 2, c2, c3, else ``ways - 1`` pairwise ones."""
        return 0.0 if ways < 2 else self.c2 if ways == 2 else self.c3 if ways == 3 else (ways - 1) * self.c2

    def step_time(self, L, S, c=0.0):
        """Seconds of one step at a node: ``L α + f(L) β S + c S`` with L links active,
        messages of S bytes and combining at c s/B (0, c2 or c3; L = 0: combining only).
        Vectorised over L, S and c."""
        return L * self.alpha + (self.f_of(L) * self.beta + c) * S

    def step_rule(self, schedule) -> "NBLRule":
        """The loosely synchronous step rule of the class docstring."""
        return NBLRule(self, schedule.nprocs)


def links(step: Step) -> np.ndarray:
    """Per rank: the paper's L in ``step``, messages sent plus messages received."""
    p = step.nprocs
    return np.bincount(step.src, minlength=p) + np.bincount(step.dst, minlength=p)


def active_links(schedule) -> np.ndarray:
    """``L[step, rank]`` (:func:`links`) of a schedule in either form; local copies are no links."""
    from ..algorithms.arrays import as_arrays
    from .step import steps

    a = as_arrays(schedule)
    out = np.zeros((a.nsteps, a.nprocs), dtype=int)
    for t, step in enumerate(steps(a)):
        if step is not None:
            out[t] = links(step)
    return out


class NBLRule(SyncRule):
    """Per node :meth:`NBLModel.step_time`: communication, then one (k+1)-way combine per block."""

    def costs(self, step: Step):
        p = step.nprocs
        size = np.zeros(p)
        eff = step.nbytes if step.load is None else step.nbytes * step.load
        np.maximum.at(size, step.src, eff)
        np.maximum.at(size, step.dst, eff)
        return self.model.step_time(links(step), size), self.combine_time(step)

    def combine_time(self, step: Step):
        """Per node: one (k+1)-way combine per block that k combining messages of the step
        bring (blocks keyed by start and count); None if none."""
        sel = np.flatnonzero(step.combine)
        if sel.size == 0:
            return None
        d, s, c = step.dst[sel], step.start[sel], step.nbytes[sel]
        order = np.lexsort((c, s, d))
        d, s, c = d[order], s[order], c[order]
        new = np.ones(d.size, dtype=bool)
        new[1:] = (d[1:] != d[:-1]) | (s[1:] != s[:-1]) | (c[1:] != c[:-1])
        first = np.flatnonzero(new)
        k = np.diff(np.append(first, d.size))
        cost = np.array([self.model.combine_cost(kk + 1) for kk in range(k.max() + 1)])
        return np.bincount(d[first], self.model.step_time(0, c[first], cost[k]), minlength=step.nprocs)
