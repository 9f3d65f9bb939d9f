"""Time a rank spends in its own software, beside the network: the ``software`` of :func:`simulate`.

A model's step rule prices a step's messages; the program that runs the schedule also spends
time of its own (a call's entry, a loop iteration per step, copying or combining what arrives).
:class:`Software` holds that time as plain numbers (s): ``start``, what each rank spends before
its first step, and ``steps``, what each rank spends in each step, as a ``(nsteps, nprocs)``
array or a callable ``t -> per-rank times`` (a scalar or ``nprocs`` values).  The caller prices
them (the kit's executor: :class:`mpi_exercises.software.SoftwareCost`); the simulator combines
them with the model's step rule in the same walk (:func:`netmodels.simulate.simulate`):

* every rank enters the schedule ``start`` later (added to its skew);
* *stepwise*: a rank's software time of step t follows its own part of the step (after its
  communication and combining, as an executor applies blocks after its wait), so it delays the
  rank's next step and, through it, only the partners that wait for the rank;
* *sync*: with a step-synchronous rule a step lasts ``max comm + max (comp + software)`` over
  the ranks (a rank's software added to its own combining); with a clocked rule (the LogP family)
  each rank's CPU is busy for its software time after its part of the step, and the step ends
  when the last rank has finished;
* *loggopsim*: refused (its messages are handled out of step order, where a per-step time has
  no place).

Adding the network's time and :meth:`Software.lockstep` (the software walked apart, every step
as long as its busiest rank) is an upper bound of the combined walk: the walk lets a rank's
software overlap another rank's communication.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


def _times(name: str, values, shape: tuple) -> np.ndarray:
    a = np.asarray(values, dtype=float)
    if a.ndim == 0:
        a = np.full(shape, float(a))
    if a.shape != shape or not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError(f"software {name} must be finite times >= 0 (s) of shape {shape} or one time, "
                         f"got shape {a.shape}")
    return a


@dataclass(frozen=True, eq=False)
class Software:
    """A rank's own time outside the network (s); see the module docstring.

    start: per rank before the first step (scalar or ``nprocs`` values, >= 0).  steps: per step
    and rank, a ``(nsteps, nprocs)`` array, or a callable ``t -> scalar or nprocs values`` (>= 0).
    """

    start: object
    steps: "np.ndarray | Callable[[int], object]"

    def checked(self, nsteps: int, nprocs: int) -> "Software":
        """This term with its start as ``nprocs`` values and, if an array, its steps checked
        against a schedule of ``nsteps`` steps on ``nprocs`` ranks (ValueError naming what is wrong)."""
        start = _times("start", self.start, (nprocs,))
        steps = self.steps if callable(self.steps) else _times("steps", self.steps, (nsteps, nprocs))
        return Software(start, steps)

    def at(self, t: int, nprocs: int) -> np.ndarray:
        """Per rank, the software time of step ``t`` (s)."""
        if not callable(self.steps):
            return self.steps[t]
        return _times(f"steps({t})", self.steps(t), (nprocs,))

    def lockstep(self, nsteps: int, nprocs: int) -> float:
        """The software alone, walked in lockstep (s): the latest start plus, per step, its
        busiest rank's time; what :func:`simulate` gives it under *sync* on a network that costs nothing."""
        s = self.checked(nsteps, nprocs)
        return float(s.start.max(initial=0.0)) + sum(float(s.at(t, nprocs).max(initial=0.0)) for t in range(nsteps))
