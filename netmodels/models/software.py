"""What the software that runs a schedule costs beyond the messages a model prices.

A ping-pong times two MPI calls.  A collective run by the kit's executor
(``mpi_exercises.executor``) also pays, per call, the front door's lookup and the copy
of the input vector, and per step a ``Startall``/``Waitall``, a Python loop and the
copy or combination of what arrived.  :class:`SoftwareCost` is that term, measured by
``python -m mpi_exercises software-cost`` (k-step schedules through the executor at
several vector lengths, the knots, one for each kind of step, :data:`STEP_KINDS`) and added
to a model's time by :meth:`SoftwareCost.time`:

    T_software = c(N) + sum over the steps t with a message of s_kind(t)(R_t),

N the vector length (elements), R_t the most elements one rank receives in step t, kind(t)
the step's kind (:func:`step_kind`): an *exchange* if some rank both sends and receives in
it, else *one-way*, and *combined* if what arrives is combined into the vector rather than
copied; c and s piecewise linear through their values at the knots (extended along the
last piece beyond them): the cost of copies and combines is not one line from a few bytes
to megabytes (caches, the eager/rendezvous switch).  The per-step values are residuals:
what the executor's step costs beyond what the model charges for the same step
(:func:`residual`), so each model gets its own, and they hold whatever the model leaves
out, software or not (two messages crossing in an exchange share the memory bus, which no
model here prices).  The term is added per step of the schedule as if every rank took part
in every step (lockstep): an upper estimate where ranks sit steps out.  Times in s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..algorithms.arrays import as_arrays


def _piecewise(knots, values, x: float) -> float:
    """The piecewise-linear function through (knots, values) at x, extended linearly beyond
    the first and the last knot (one knot: constant)."""
    k, v = np.asarray(knots, dtype=float), np.asarray(values, dtype=float)
    if k.size == 1:
        return float(v[0])
    i = int(np.clip(np.searchsorted(k, x) - 1, 0, k.size - 2))
    return float(v[i] + (v[i + 1] - v[i]) * (x - k[i]) / (k[i + 1] - k[i]))


#: the kinds of step the term tells apart (see the module's docstring)
STEP_KINDS = ("exchange", "one-way", "exchange, combined", "one-way, combined")


def step_kind(step) -> str | None:
    """The kind (:data:`STEP_KINDS`) of an :class:`~netmodels.algorithms.arrays.ArrayStep`,
    None if no message moves in it (only local copies)."""
    msg = step.src != step.dst
    if not msg.any():
        return None
    exchange = bool(np.intersect1d(step.src[msg], step.dst[msg]).size)
    kind = "exchange" if exchange else "one-way"
    return kind + ", combined" if step.combine[msg].any() else kind


@dataclass(frozen=True)
class SoftwareCost:
    """The software term (see the module's docstring), in s, at the vector lengths ``knots``
    (elements, increasing): ``per_call`` one value per knot, ``per_step`` a mapping from each
    kind of :data:`STEP_KINDS` to one value per knot (a kind left out costs nothing)."""

    knots: tuple = (0,)
    per_call: tuple = (0.0,)
    per_step: dict = field(default_factory=dict)

    def __post_init__(self):
        unknown = set(self.per_step) - set(STEP_KINDS)
        if unknown:
            raise ValueError(f"unknown kinds of step {sorted(unknown)}; the kinds are {STEP_KINDS}")
        if not (len(self.knots) == len(self.per_call) >= 1
                and all(len(v) == len(self.knots) for v in self.per_step.values())):
            raise ValueError("knots, per_call and every per_step kind must have one value per knot")
        if np.any(np.diff(self.knots) <= 0):
            raise ValueError(f"knots must increase, got {self.knots}")

    def call(self, nelems: float) -> float:
        """c(N): the cost per call of an N-element vector (s)."""
        return _piecewise(self.knots, self.per_call, nelems)

    def step(self, received: float, kind: str = "exchange, combined") -> float:
        """s(R): the cost of a step of ``kind`` whose busiest rank receives R elements (s)."""
        values = self.per_step.get(kind)
        return 0.0 if values is None else _piecewise(self.knots, values, received)

    def time(self, schedule) -> float:
        """The term for one call of ``schedule`` (s)."""
        a = as_arrays(schedule)
        t = self.call(a.nelems)
        for s in a.steps:
            kind = step_kind(s)
            if kind is not None:
                msg = s.src != s.dst
                t += self.step(float(np.bincount(s.dst[msg], weights=s.count[msg], minlength=a.nprocs).max()), kind)
        return t

    def as_dict(self) -> dict:
        """Its values with their units in the keys (JSON)."""
        return {"knots_elements": list(self.knots), "per_call_s": list(self.per_call),
                "per_step_s": {kind: list(v) for kind, v in self.per_step.items()}}


def residual(per_call_s: dict, per_step_s: dict, model_step_s: dict) -> SoftwareCost:
    """The software term of one model from the executor's measured lines at several vector
    lengths n, T = a(n) + b_kind(n) k for k steps of each kind (``per_call_s = {n: a(n)}``,
    ``per_step_s = {kind: {n: b_kind(n)}}``), and the model's own time of one such step
    (``model_step_s = {kind: {n: s}}``): per call a(n), per step of a kind b_kind(n) -
    model_kind(n)."""
    knots = tuple(sorted(per_call_s))
    return SoftwareCost(knots, tuple(per_call_s[n] for n in knots),
                        {kind: tuple(b[n] - model_step_s[kind][n] for n in knots) for kind, b in per_step_s.items()})
