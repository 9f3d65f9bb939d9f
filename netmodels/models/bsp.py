"""BSP (Valiant 1990) and its idealised ancestor PRAM (Fortune & Wyllie 1978).

A BSP program is a sequence of *supersteps*.  In superstep ``i`` every processor computes
on data it holds (at most ``w_i`` seconds), then sends and receives messages, at most
``h_i`` units sent and at most ``h_i`` received per processor (an *h-relation*), then all
processors synchronise.  Data received in a superstep can be used only in the next one.
The machine has two parameters besides ``P``:

* ``g``: seconds per unit of ``h`` (the cost of routing a unit in continuous traffic);
* ``l``: seconds per superstep (the barrier, and the latency of the last message).

The cost of a program is ``Σ_i (w_i + g h_i + l) = W + g H + l S``.

What ``h`` counts (``unit``):

* ``"words"``: vector elements (the kit's schedules count elements).  This is Valiant's
  h-relation: ``g`` is a per-word cost and everything charged per message goes into
  ``l``.  A message without data (a barrier's) counts 0: in BSP a barrier is the
  synchronisation every superstep ends with, and it costs ``l``.
* ``"messages"``: messages whatever their size, the reading of Hoefler & Rehm's survey
  ("at most h messages ... of a fixed size"), the right unit for small messages and
  barriers, whose cost is per message.

``h`` is the maximum over processors of ``max(sent, received)``, not of their sum: an
h-relation bounds both directions separately because a processor sends and receives at
the same time (full-duplex links, also the survey's switch assumption).

Converting a schedule (:func:`program`): each step of a
:class:`~netmodels.algorithms.schedule.Schedule` becomes one superstep.  The step
semantics of the kit (a transfer sends the block as it was at the *beginning* of the step)
is exactly BSP's rule, so nothing else changes.  Combining what arrived is local work:
``w_i = combine_time × (the most elements one processor combines in step i)``; copies cost
nothing.  The simulator (:func:`netmodels.simulate.simulate`, BSP's own *sync* semantics)
gives the same cost from :class:`BSPRule`, ``combine`` (s per element) as the work.

PRAM: ``P`` processors in lock step on a shared memory, every access one time unit, so
communication is free and a schedule costs its number of steps (:func:`pram_steps`): the
ideal parallel complexity, a lower bound for every other model.

Units: seconds; ``g`` in seconds per element (``"words"``) or per message (``"messages"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import sympy

from .._check import positive, positive_int
from ..algorithms import registry
from ..algorithms.arrays import ArraySchedule, as_arrays
from ..algorithms.schedule import Schedule
from .step import Step, SyncRule, combined_elements

UNITS = ("words", "messages")


def _unit(unit) -> str:
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
    return unit


@dataclass(frozen=True)
class BSP:
    """BSP machine: ``g`` seconds per unit of h, ``l`` seconds per superstep (both >= 0).

    ``unit`` says what h counts, ``"words"`` (elements) or ``"messages"``.
    """

    g: float
    l: float  # noqa: E741  (Valiant's name)
    unit: str = "words"
    name: str = ""
    source: str = ""
    combine: float = 0.0    #: local work per element combined (s), the supersteps' w

    def __post_init__(self):
        object.__setattr__(self, "g", positive("g", self.g, allow_zero=True))
        object.__setattr__(self, "l", positive("l", self.l, allow_zero=True))
        object.__setattr__(self, "combine", positive("combine", self.combine, allow_zero=True))
        _unit(self.unit)

    def superstep_time(self, h, w=0.0):
        """``w + g h + l`` (s) of one superstep of an h-relation (scalar or array)."""
        return w + self.g * np.asarray(h, dtype=float) + self.l

    #: the timing semantics the simulator uses for this model unless told otherwise
    semantics = "sync"

    def step_rule(self, schedule) -> "BSPRule":
        """One superstep per step (:class:`BSPRule`)."""
        return BSPRule(self, schedule.nprocs)


class BSPRule(SyncRule):
    """A step is a superstep: per rank ``comm = g max(sent, received) + l`` (units of
    ``unit``; local copies are no communication) and ``comp = combine x`` the elements it
    combines, so that under the simulator's *sync* semantics the step costs
    ``max w + g h + l``.  A step of local copies only still costs ``l`` (its barrier)."""

    def costs(self, step: Step):
        m = self.model
        weight = np.ones(step.src.size) if m.unit == "messages" else step.count.astype(float)
        sent = np.bincount(step.src, weight, minlength=step.nprocs)
        received = np.bincount(step.dst, weight, minlength=step.nprocs)
        comm = m.g * np.maximum(sent, received) + m.l
        return comm, (m.combine * combined_elements(step) if m.combine else None)


@dataclass(frozen=True)
class Superstep:
    """One superstep: local work ``w`` (s) and its h-relation (``h = max(sent, received)``)."""

    w: float
    h: int
    sent: int      #: the most units one processor sends
    received: int  #: the most units one processor receives


@dataclass
class BSPProgram:
    """A sequence of supersteps on ``nprocs`` processors, h counted in ``unit``."""

    name: str
    nprocs: int
    unit: str
    supersteps: list[Superstep] = field(default_factory=list)

    @property
    def S(self) -> int:
        """Number of supersteps."""
        return len(self.supersteps)

    @property
    def H(self) -> int:
        """Sum of the h-relations, ``Σ h_i`` (units)."""
        return sum(s.h for s in self.supersteps)

    @property
    def W(self) -> float:
        """Sum of the local work, ``Σ w_i`` (s)."""
        return float(sum(s.w for s in self.supersteps))

    def cost(self, params: BSP) -> float:
        """``Σ (w_i + g h_i + l) = W + g H + l S`` in seconds under ``params``."""
        if not isinstance(params, BSP):
            raise ValueError(f"params must be a netmodels.models.bsp.BSP, got {type(params).__name__}")
        if params.unit != self.unit:
            raise ValueError(f"the program counts h in {self.unit!r} but params.g is per {params.unit!r}")
        return float(sum(s.w + params.g * s.h + params.l for s in self.supersteps))


def h_relation(step, nprocs: int, unit: str = "words") -> tuple[np.ndarray, np.ndarray]:
    """Units sent and received by every rank in one step (two int64 arrays of ``nprocs``).

    ``step`` is an :class:`~netmodels.algorithms.arrays.ArrayStep`; the step's h is
    ``max(sent.max(), received.max())``.  Local copies (``src == dst``) count nothing.
    """
    p = positive_int("nprocs", nprocs)
    message = np.asarray(step.src) != np.asarray(step.dst)      # a local copy is no communication
    weight = (np.ones(len(step), dtype=np.int64) if _unit(unit) == "messages"
              else np.asarray(step.count, dtype=np.int64)) * message
    sent = np.bincount(step.src, weights=weight, minlength=p).astype(np.int64)
    received = np.bincount(step.dst, weights=weight, minlength=p).astype(np.int64)
    return sent, received


def program(schedule, unit: str = "words", combine_time: float = 0.0) -> BSPProgram:
    """The BSP program of ``schedule`` (a Schedule or an ArraySchedule): one superstep per step.

    ``combine_time`` (s per element) prices the combining of received blocks as the
    superstep's local work (see the module docstring).  Vectorised: fine at 10^6 ranks.
    """
    a = as_arrays(schedule)
    unit = _unit(unit)
    c = positive("combine_time", combine_time, allow_zero=True)
    out = BSPProgram(a.name, a.nprocs, unit)
    for step in a.steps:
        sent, received = h_relation(step, a.nprocs, unit)
        work = 0.0
        if c > 0 and len(step):
            combined = np.bincount(step.dst, weights=np.where(step.combine, step.count, 0),
                                   minlength=a.nprocs)
            work = c * float(combined.max())
        s, r = int(sent.max(initial=0)), int(received.max(initial=0))
        out.supersteps.append(Superstep(work, max(s, r), s, r))
    return out


def pram_steps(schedule) -> int:
    """PRAM cost of a schedule: its number of steps (communication is free, one unit per step)."""
    if not isinstance(schedule, (Schedule, ArraySchedule)):
        raise ValueError(f"schedule must be a Schedule or an ArraySchedule, got {type(schedule).__name__}")
    return schedule.nsteps


# ---------------------------------------------------------------- the chapter's algorithms
#: the algorithms the chapter "Models compared" costs in every model: its label -> the
#: registered name (:mod:`netmodels.algorithms.registry`), in the chapter's order
COMPARED = {
    "dissemination barrier": "barrier.dissemination",
    "binomial barrier": "barrier.binomial",
    "central counter barrier": "barrier.central_counter",
    "binomial broadcast": "broadcast.binomial",
    "flat broadcast": "broadcast.flat",
    "two-phase broadcast": "broadcast.two_phase",
    "recursive doubling allreduce": "allreduce.recursive_doubling",
    "rabenseifner allreduce": "allreduce.rabenseifner",
    "ring allreduce": "allreduce.ring",
    "binomial allreduce": "allreduce.binomial",
}


def compared(label: str, nprocs: int, nelems: int = 0) -> ArraySchedule:
    """The registered schedule of the chapter's ``label`` (a key of :data:`COMPARED`) on
    ``nprocs`` ranks and ``nelems`` elements (ignored by the barriers, which carry none)."""
    if label not in COMPARED:
        raise ValueError(f"algorithm must be one of {list(COMPARED)}, got {label!r}")
    alg = registry.get(COMPARED[label])
    nelems = positive_int("nelems", nelems, minimum=0)
    return alg.build(positive_int("nprocs", nprocs), 0 if alg.collective == "barrier" else nelems)


# ---------------------------------------------------------------- closed forms
@lru_cache(maxsize=None)
def symbols():
    """The symbols of the closed forms, ``.P``, ``.R`` (= log2 P), ``.N``, ``.g``, ``.l``,
    ``.k`` (sympy, imported on first use: a command line that never derives pays nothing)."""
    from types import SimpleNamespace

    import sympy as sp

    P, N, g, l, k = sp.symbols("P N g l k", positive=True)  # noqa: E741
    return SimpleNamespace(P=P, N=N, g=g, l=l, k=k, R=sp.Symbol("R", positive=True, integer=True))


def _supersteps(algorithm: str, unit: str):
    """(S, h_k, repeat): S supersteps whose k-th (k = 1..S) is an h_k-relation, the whole
    sequence run ``repeat`` times (a mirror image: fan-in then fan-out, halving then
    doubling).  For P a power of two and N divisible by P."""
    import sympy as sp

    y = symbols()
    R, P_, N_, k_ = y.R, y.P, y.N, y.k
    one = sp.Integer(1)
    if unit == "words":
        table = {
            "dissemination barrier": (R, sp.Integer(0), 1),
            "binomial barrier": (R, sp.Integer(0), 2),
            "central counter barrier": (1, sp.Integer(0), 2),
            "binomial broadcast": (R, N_, 1),
            "flat broadcast": (1, (P_ - 1) * N_, 1),
            "two-phase broadcast": (1, (P_ - 1) * N_ / P_, 2),
            "recursive doubling allreduce": (R, N_, 1),
            "rabenseifner allreduce": (R, N_ / 2**k_, 2),
            "ring allreduce": (P_ - 1, N_ / P_, 2),
            "binomial allreduce": (R, N_, 2),
        }
    else:
        table = {
            "dissemination barrier": (R, one, 1),
            "binomial barrier": (R, one, 2),
            "central counter barrier": (1, P_ - 1, 2),
            "binomial broadcast": (R, one, 1),
            "flat broadcast": (1, P_ - 1, 1),
            "two-phase broadcast": (1, P_ - 1, 2),
            "recursive doubling allreduce": (R, one, 1),
            "rabenseifner allreduce": (R, one, 2),
            "ring allreduce": (P_ - 1, one, 2),
            "binomial allreduce": (R, one, 2),
        }
    if algorithm not in table:
        raise ValueError(f"algorithm must be one of {list(table)}, got {algorithm!r}")
    return table[algorithm]


@lru_cache(maxsize=None)
def closed_form(algorithm: str, unit: str = "words") -> "sympy.Expr":
    """BSP cost of ``algorithm`` as a sympy expression in P, R = log2 P, N, g, l (seconds).

    Derived as ``repeat × Σ_{k=1..S} (g h_k + l)`` from the h-relation of each superstep
    (see :func:`_supersteps`); valid for P a power of two and N divisible by P, where the
    tests and the chapter check it against :func:`program`.  No local work.
    """
    import sympy as sp

    y = symbols()
    R_, P_, g_, l_, k_ = y.R, y.P, y.g, y.l, y.k
    S, h, repeat = _supersteps(algorithm, _unit(unit))
    total = sp.expand(repeat * sp.summation(g_ * h + l_, (k_, 1, S)))
    # 2**(a R) = P**a
    total = total.replace(lambda e: e.is_Pow and e.base == 2 and e.exp.has(R_),
                          lambda e: P_ ** sp.expand(e.exp / R_))
    return sp.factor_terms(sp.collect(sp.expand(total), [g_, l_]))


def closed_form_value(algorithm: str, P: int, N: int, params: BSP) -> float:
    """:func:`closed_form` evaluated at ``P``, ``N`` and the machine ``params`` (s)."""
    import sympy as sp

    y = symbols()
    expr = closed_form(algorithm, params.unit)
    P = positive_int("P", P)
    return float(expr.subs({y.P: P, y.R: sp.log(P, 2), y.N: positive_int("N", N, minimum=0),
                            y.g: params.g, y.l: params.l}))


# ---------------------------------------------------------------- fit of g and l
@dataclass(frozen=True)
class BSPFit:
    """``g`` and ``l`` fitted to superstep times ``T(h) = l + g h`` (s per unit, s).

    ``*_stderr`` are standard errors, ``*_ci`` two-sided confidence intervals at level
    ``confidence`` (Student's t with ``npoints - 2`` degrees of freedom).
    """

    g: float
    l: float  # noqa: E741
    g_stderr: float
    l_stderr: float
    g_ci: tuple
    l_ci: tuple
    confidence: float
    npoints: int
    max_relative_residual: float

    def params(self, unit: str = "words", name: str = "fit") -> BSP:
        """The fitted machine as :class:`BSP` (a negative estimate clipped at 0)."""
        return BSP(max(self.g, 0.0), max(self.l, 0.0), unit, name=name)


def fit_bsp(h, seconds, confidence: float = 0.95) -> BSPFit:
    """Least-squares line ``T = l + g h`` through superstep times (``scipy.stats.linregress``).

    ``h`` (units >= 0) and ``seconds`` (> 0) are 1-D and of equal length, with at least 3
    points and 2 distinct h (a line through 2 points has no error estimate).
    """
    from scipy import stats

    from .._check import sizes
    from .fit import least_squares_interval

    x = sizes("h", h)
    t = sizes("seconds", seconds, allow_zero=False)
    if x.ndim != 1 or x.shape != t.shape:
        raise ValueError(f"h and seconds must be 1-D of equal length, got shapes {x.shape} and {t.shape}")
    if x.size < 3 or np.unique(x).size < 2:
        raise ValueError("h must hold at least 3 points with at least 2 distinct values to fit g and l")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    r = stats.linregress(x, t)
    g, l = float(r.slope), float(r.intercept)
    ge, le = float(r.stderr), float(r.intercept_stderr)
    lo, hi = least_squares_interval([g, l], [ge, le], x.size, confidence)
    resid = float(np.max(np.abs(l + g * x - t) / t))
    return BSPFit(g, l, ge, le, (float(lo[0]), float(hi[0])), (float(lo[1]), float(hi[1])), float(confidence),
                  int(x.size), resid)
