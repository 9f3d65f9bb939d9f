"""What the software that runs a schedule costs beyond the messages a model prices.

A ping-pong times two MPI calls.  A collective run by the kit's executor
(``mpi_exercises.executor``) also pays, per call, the front door's lookup and the copy
of the input vector, and per step a ``Startall``/``Waitall``, a Python loop and the
copy or combination of what arrived.  :class:`SoftwareCost` is that term, measured by
``python -m mpi_exercises software-cost`` (k-step exchange schedules through the
executor at a few vector lengths, the knots) and added to a model's time by
:meth:`SoftwareCost.time`:

    T_software = c(N) + sum over the steps t with a message of s(R_t),

N the vector length (elements), R_t the most elements one rank receives in step t, and
c, s piecewise linear through their values at the knots (extended along the last piece
beyond them): the cost of copies and combines is not one line from a few bytes to
megabytes (caches, the eager/rendezvous switch).  The per-step values are residuals: what
the executor's step costs beyond what the model charges for the same step
(:func:`residual`), so each model gets its own.  The term is added per step of the
schedule as if every rank took part in every step (lockstep): an upper estimate where
ranks sit steps out.  Times in s.
"""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True)
class SoftwareCost:
    """The software term (see the module's docstring): ``per_call`` and ``per_step`` (s) at
    the vector lengths ``knots`` (elements, increasing)."""

    knots: tuple = (0,)
    per_call: tuple = (0.0,)
    per_step: tuple = (0.0,)

    def __post_init__(self):
        if not (len(self.knots) == len(self.per_call) == len(self.per_step) >= 1):
            raise ValueError("knots, per_call and per_step must have one value per knot")
        if np.any(np.diff(self.knots) <= 0):
            raise ValueError(f"knots must increase, got {self.knots}")

    def call(self, nelems: float) -> float:
        """c(N): the cost per call of an N-element vector (s)."""
        return _piecewise(self.knots, self.per_call, nelems)

    def step(self, received: float) -> float:
        """s(R): the cost of a step whose busiest rank receives R elements (s)."""
        return _piecewise(self.knots, self.per_step, received)

    def time(self, schedule) -> float:
        """The term for one call of ``schedule`` (s)."""
        a = as_arrays(schedule)
        t = self.call(a.nelems)
        for s in a.steps:
            msg = s.src != s.dst
            if msg.any():
                t += self.step(float(np.bincount(s.dst[msg], weights=s.count[msg], minlength=a.nprocs).max()))
        return t

    def as_dict(self) -> dict:
        """Its values with their units in the keys (JSON)."""
        return {"knots_elements": list(self.knots), "per_call_s": list(self.per_call),
                "per_step_s": list(self.per_step)}


def residual(per_call_s: dict, per_step_s: dict, model_step_s: dict) -> SoftwareCost:
    """The software term of one model from the executor's measured line T(k) = a(n) + b(n) k
    at several vector lengths n (``per_call_s = {n: a(n)}``, ``per_step_s = {n: b(n)}``) and
    the model's own time of one such step (``model_step_s = {n: s}``): per call a(n), per
    step b(n) - model(n)."""
    knots = tuple(sorted(per_call_s))
    return SoftwareCost(knots, tuple(per_call_s[n] for n in knots),
                        tuple(per_step_s[n] - model_step_s[n] for n in knots))
