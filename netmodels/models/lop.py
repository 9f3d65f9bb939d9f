"""LoP: the small-message model of Hoefler & Rehm for offloading networks (InfiniBand).

LogP's latency and gap are folded into one latency ``L(p)`` that depends on the number
``p`` of peers a rank addresses at once (section 4.3 of the paper).  Two measured curves
define it (section 3):

* the round-trip time of 1-byte messages to ``p`` peers (1:n, then n:1),
  ``t_rtt(p) = λ1 / (λ2 + p) + λ3 + λ4 (1 - exp(λ5 (p - λ6)))``
  (pipeline start-up + processing + network saturation);
* the send overhead of posting ``p`` requests, ``t_ov(p) = λ1 + λ2 / (λ3 + p)``;

and section 4.4 derives from them ``L(p) = t_rtt(p)/2 - (o_s(p) + o_s(1))`` (requests
posted one by one) and ``L^list(p) = t_rtt(p)/2 - (p o_s(p) + o_s(1))`` (a list posted
at once).  The time to send one message to each of ``n`` peers is
``t_1:n = o(n) + n L(n)``, or ``n o(n) + n L(n)`` for a list (end of section 4.7).

Units are SI: seconds, and ``p``, ``λ2``, ``λ6`` in peers, ``λ5`` per peer.  The
paper's fitted curves are in :mod:`netmodels.models.machines` (``LOP_*``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .._check import positive_int
from .step import SyncRule


def peers(name: str, p) -> np.ndarray:
    """``p`` as a float array of finite peer counts >= 1, or ValueError naming ``name``."""
    try:
        arr = np.asarray(p, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold finite numbers of peers >= 1, got {p!r}") from None
    if arr.size == 0 or np.any(~np.isfinite(arr) | (arr < 1)):
        raise ValueError(f"{name} must hold finite numbers of peers >= 1, got {p!r}")
    return arr


def _out(x):
    return float(x) if np.ndim(x) == 0 else x


def t_rtt(p, l1, l2, l3, l4, l5, l6):
    """Round-trip time (s) of 1-byte messages to ``p`` peers, section 3's six-parameter curve.

    ``λ1 / (λ2 + p) + λ3 + λ4 (1 - exp(λ5 (p - λ6)))``; no check (used inside fits)."""
    p = np.asarray(p, dtype=float)
    return l1 / (l2 + p) + l3 + l4 * (1.0 - np.exp(l5 * (p - l6)))


def t_ov(p, l1, l2, l3):
    """Overhead (s) of posting to ``p`` peers, section 3's curve ``λ1 + λ2 / (λ3 + p)``."""
    p = np.asarray(p, dtype=float)
    return l1 + l2 / (l3 + p)


def _finite(name: str, values) -> tuple:
    out = tuple(float(v) for v in values)
    if not all(math.isfinite(v) for v in out):
        raise ValueError(f"{name} must be finite numbers, got {values!r}")
    return out


@dataclass(frozen=True)
class _Curve:
    """A curve of the paper, a function of the peer count p with the parameters ``lambdas``
    (``_count`` of them, the one at index ``_pole`` > -1 so that there is no pole at p >= 1)."""

    lambdas: tuple
    name: str = ""
    source: str = ""

    def __post_init__(self):
        lam = _finite("lambdas", self.lambdas)
        if len(lam) != self._count:
            raise ValueError(f"lambdas must hold {self._count} numbers λ1..λ{self._count}, got {len(lam)}")
        if lam[self._pole] <= -1:
            raise ValueError(f"λ{self._pole + 1} must be > -1 (no pole at p >= 1), got {lam[self._pole]!r}")
        object.__setattr__(self, "lambdas", lam)

    def __call__(self, p):
        return _out(self._formula(peers("p", p), *self.lambdas))


class RTTCurve(_Curve):
    """``t_rtt(p; λ1..λ6)`` (s); λ1 in s·peers, λ2, λ6 in peers, λ3, λ4 in s, λ5 per peer.

    ``λ2 > -1`` so that the curve has no pole at ``p >= 1``."""

    _count, _pole, _formula = 6, 1, staticmethod(t_rtt)


class OverheadCurve(_Curve):
    """``t_ov(p; λ1..λ3) = λ1 + λ2 / (λ3 + p)`` (s); λ1, λ2 in s (λ2 in s·peers), λ3 > -1 peers."""

    _count, _pole, _formula = 3, 2, staticmethod(t_ov)


def _curves(rtt, overhead):
    if not callable(rtt) or not callable(overhead):
        raise ValueError("rtt and overhead must be callables of p (e.g. RTTCurve, OverheadCurve)")
    return rtt, overhead


def latency(p, rtt, overhead):
    """``L(p) = t_rtt(p)/2 - (o_s(p) + o_s(1))`` (s): requests posted one by one (section 4.4)."""
    rtt, overhead = _curves(rtt, overhead)
    p = peers("p", p)
    return _out(np.asarray(rtt(p)) / 2 - (np.asarray(overhead(p)) + overhead(1.0)))


def latency_list(p, rtt, overhead):
    """``L^list(p) = t_rtt(p)/2 - (p o_s(p) + o_s(1))`` (s): a list of requests posted at once."""
    rtt, overhead = _curves(rtt, overhead)
    p = peers("p", p)
    return _out(np.asarray(rtt(p)) / 2 - (p * np.asarray(overhead(p)) + overhead(1.0)))


def t_one_to_n(n, rtt, overhead, *, post_list: bool = False, rtt_per_message: bool = True):
    """Time (s) to send one message to each of ``n`` peers (end of section 4.7).

    ``t_1:n = o(n) + n L(n)``; with ``post_list`` ``t_1:n^list = n o(n) + n L(n)``, both
    with :func:`latency`, as printed.  (With :func:`latency_list` in the second the
    paper's curves give negative times from a few peers on: see the chapter.)

    The factor ``n`` of ``n L(n)`` makes sense only if ``t_rtt(n)`` is a time *per
    message* (the paper does not say which it fits).  ``rtt_per_message=False`` is the
    other reading, ``t_rtt(n)`` the whole round trip to ``n`` peers: ``L(n)`` is then the
    latency of the whole batch and is counted once, ``o(n) + L(n)`` (``n o(n) + L(n)``
    with ``post_list``).  That variant is ours, for comparing the two readings."""
    n = peers("n", n)
    o = np.asarray(overhead(n))
    batches = n if rtt_per_message else 1.0
    return _out((n * o if post_list else o) + batches * np.asarray(latency(n, rtt, overhead)))


def round_sizes(P: int, n: int) -> tuple[int, ...]:
    """Messages each rank sends per round of the kit's n-way dissemination barrier on ``P`` ranks
    (the largest count of any rank in the round; a target repeating or wrapping is dropped)."""
    return _round_sizes(positive_int("P", P), positive_int("n", n))


@lru_cache(maxsize=4096)
def _round_sizes(P: int, n: int) -> tuple[int, ...]:
    from ..algorithms.barriers import nway_dissemination

    sched = nway_dissemination(P, n=n)
    return tuple(int(np.bincount(step.src, minlength=P).max()) for step in sched.steps)


def nway_barrier_time(P: int, n: int, rtt, overhead, *, post_list: bool = False,
                      rtt_per_message: bool = True) -> float:
    """Predicted time (s) of the n-way dissemination barrier on ``P`` ranks under LoP.

    Each round costs ``t_1:m`` with ``m`` the messages a rank sends in it
    (:func:`round_sizes`; ``m = n`` except where ``P`` is small or not a power of n+1),
    rounds follow one another (the paper's round-based use of L(p)).  ``rtt_per_message``
    as in :func:`t_one_to_n`."""
    return float(sum(t_one_to_n(m, rtt, overhead, post_list=post_list, rtt_per_message=rtt_per_message)
                     for m in round_sizes(P, n)))


def best_n(P: int, rtt, overhead, *, n_max: int | None = None, post_list: bool = False,
           rtt_per_message: bool = True):
    """``(n, times)``: the n in 1..n_max (default P - 1) with the fastest predicted barrier,
    and the predicted times (s) of every n (index 0 is n = 1).  ``P >= 2``."""
    P = positive_int("P", P, minimum=2)
    n_max = P - 1 if n_max is None else positive_int("n_max", n_max)
    times = np.array([nway_barrier_time(P, n, rtt, overhead, post_list=post_list,
                                        rtt_per_message=rtt_per_message)
                      for n in range(1, n_max + 1)])
    return int(np.argmin(times)) + 1, times


@dataclass(frozen=True)
class Tabulated:
    """A measured curve: linear interpolation of ``seconds`` at peer counts ``p`` (s).

    Evaluating it outside ``[min p, max p]`` raises ValueError (no extrapolation), so a
    prediction from measured points alone uses only what was measured."""

    p: tuple
    seconds: tuple

    def __post_init__(self):
        x = peers("p", self.p)
        t = np.asarray(self.seconds, dtype=float)
        if x.ndim != 1 or t.shape != x.shape or np.any(~np.isfinite(t)):
            raise ValueError("p and seconds must be 1-D, of equal length, with finite seconds")
        order = np.argsort(x)
        if np.any(np.diff(x[order]) == 0):
            raise ValueError("p must not repeat a peer count")
        object.__setattr__(self, "p", tuple(x[order]))
        object.__setattr__(self, "seconds", tuple(t[order]))

    def __call__(self, p):
        x = peers("p", p)
        if np.any((x < self.p[0]) | (x > self.p[-1])):
            raise ValueError(f"p must lie within the measured range {self.p[0]:g}..{self.p[-1]:g}, got {p!r}")
        return _out(np.interp(x, self.p, self.seconds))


@dataclass(frozen=True)
class LoP:
    """LoP as a model of a schedule: the curves ``rtt(p)`` and ``overhead(p)`` (callables
    of a peer count, s; e.g. :class:`RTTCurve`, :class:`OverheadCurve`, :class:`Tabulated`)
    and whether requests are posted as a list.

    **Step rule** (:meth:`step_rule`, round based as :func:`nway_barrier_time` prices its
    rounds): a rank that sends ``m`` messages in a step is busy ``t_1:m``
    (:func:`t_one_to_n`); LoP prices the sender's side, so receiving costs nothing more.
    Small messages only: sizes play no part.
    """

    rtt: object
    overhead: object
    post_list: bool = False
    name: str = ""

    def __post_init__(self):
        _curves(self.rtt, self.overhead)

    #: the timing semantics the simulator uses for this model unless told otherwise
    semantics = "sync"

    def step_rule(self, schedule) -> "LoPRule":
        return LoPRule(self, schedule.nprocs)


class LoPRule(SyncRule):
    """Per rank ``t_1:m``, m the messages it sends in the step (0 if none); no combining."""

    def __init__(self, model: LoP, nprocs: int):
        super().__init__(model, nprocs)
        self.table = {0: 0.0}

    def costs(self, step):
        sends = np.bincount(step.src, minlength=self.nprocs)
        m = self.model
        for n in np.unique(sends):
            if int(n) not in self.table:
                self.table[int(n)] = float(t_one_to_n(int(n), m.rtt, m.overhead, post_list=m.post_list))
        lookup = np.array([self.table.get(n, 0.0) for n in range(int(sends.max(initial=0)) + 1)])
        return lookup[sends], None
