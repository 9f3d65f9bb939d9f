"""What the kit's own software costs when it runs a schedule, beyond the messages.

A network model (α-β, LogGP, NBL) prices a schedule's messages, MPI's calls included (its
parameters come from ping-pongs and round trips timed through mpi4py).  The executor
(:mod:`mpi_exercises.executor`) and a front door also run Python: per call the front door's
look-up and the copy of the input vector, per step a loop iteration, and per incoming block
the copy or combination that applies it.  :class:`SoftwareCost` is that term, one for every
model (it is a property of the executor, not of a model), measured without any message by
``python -m mpi_exercises software-cost`` (:mod:`mpi_exercises.bench.software_cost`): the
executor on ``MPI.COMM_SELF`` runs schedules of local copies and combines, which take the
same code path as a received block.

    start     = door(N) (or call, without a front door), on every rank
    step(t, r) = 0 if rank r has no work in step t, else
                 step + sum over r's blocks b in t of apply_kind(b)(count_b)

N the vector length (elements), ``apply_copy(n)`` and ``apply_combine(n)`` the time of one
copied or combined block of n elements, piecewise linear between the measured lengths
(``knots``, extended along the last piece beyond them): copies and combines are not one line
from a few bytes to megabytes (caches).  Which blocks a rank copies, combines or receives
straight into its vector is the executor's own :func:`~mpi_exercises.executor.plan`.
:meth:`SoftwareCost.of` prices a schedule so (a :class:`netmodels.simulate.Software`), and the
simulator combines it with a model's step rule in one walk (``simulate(schedule, model,
software=...)``, :mod:`netmodels.simulate.software` says how).  Times in s.  No MPI.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from netmodels.simulate.software import Software

from .executor import plan


def _piecewise(knots, values, x: float) -> float:
    """The piecewise-linear function through (knots, values) at x, extended linearly beyond
    the first and the last knot (one knot: constant)."""
    k, v = np.asarray(knots, dtype=float), np.asarray(values, dtype=float)
    if k.size == 1:
        return float(v[0])
    i = int(np.clip(np.searchsorted(k, x) - 1, 0, k.size - 2))
    return float(v[i] + (v[i + 1] - v[i]) * (x - k[i]) / (k[i + 1] - k[i]))


def _times(name: str, values, n: int) -> tuple:
    v = tuple(float(x) for x in values)
    if len(v) != n or not all(np.isfinite(v)):
        raise ValueError(f"{name} must hold {n} finite times (s), one per knot, got {values!r}")
    return v


@dataclass(frozen=True)
class SoftwareCost:
    """The software term (module docstring), in s.

    knots: vector lengths (elements, increasing, >= 0).  door: the front door's cost per call
    at each knot (look-up, copy of the input, the executor's call).  call: the executor's cost
    per call without a front door.  step: per step in which a rank has work.  copy, combine:
    one block applied at each knot.
    """

    knots: tuple
    door: tuple
    call: float
    step: float
    copy: tuple
    combine: tuple

    def __post_init__(self):
        knots = tuple(int(k) for k in self.knots)
        if not knots or knots[0] < 0 or any(b <= a for a, b in zip(knots, knots[1:])):
            raise ValueError(f"knots must be increasing element counts >= 0, got {self.knots!r}")
        object.__setattr__(self, "knots", knots)
        for name in ("door", "copy", "combine"):
            object.__setattr__(self, name, _times(name, getattr(self, name), len(knots)))
        for name in ("call", "step"):
            value = float(getattr(self, name))
            if not np.isfinite(value):
                raise ValueError(f"{name} must be a finite time (s), got {value!r}")
            object.__setattr__(self, name, value)

    def apply(self, count: int, combine: bool) -> float:
        """One incoming block of ``count`` elements, copied or combined (s)."""
        return _piecewise(self.knots, self.combine if combine else self.copy, count)

    def rank_step(self, st) -> float:
        """One rank's own time in one step of its plan (a :class:`~mpi_exercises.plan.StepPlan`, s):
        nothing without work, else the step and every incoming block applied (a staged local
        copy also saved before the messages); a fit's noise below zero counts as 0 (no rank runs
        backwards)."""
        if not (st.sends or st.incoming):
            return 0.0
        own = self.step
        for b in st.incoming:
            if b.mode.local and b.mode.buffered:          # staged: saved before the messages
                own += self.apply(b.count, False)
            if b.mode.name != "DIRECT":
                own += self.apply(b.count, b.mode.combines)
        return max(own, 0.0)

    def of(self, schedule, door: bool = True):
        """The term for one call of ``schedule`` through a front door or (``door=False``) the
        executor alone, per rank and step: a :class:`~netmodels.simulate.software.Software` for
        ``simulate(schedule, model, software=...)``."""
        per_rank = [[self.rank_step(st) for st in plan(schedule, r)] for r in range(schedule.nprocs)]
        steps = np.array(per_rank, dtype=float).T.reshape(-1, schedule.nprocs)
        start = _piecewise(self.knots, self.door, schedule.nelems) if door else self.call
        return Software(max(start, 0.0), steps)

    def as_dict(self) -> dict:
        """Its values with their units in the keys (JSON); :meth:`from_dict` reads it back."""
        return {"knots_elements": list(self.knots), "door_s": list(self.door), "call_s": self.call,
                "step_s": self.step, "copy_s": list(self.copy), "combine_s": list(self.combine)}

    @classmethod
    def from_dict(cls, d: dict) -> "SoftwareCost":
        """The term from :meth:`as_dict`'s form (ValueError naming a missing or bad key)."""
        keys = ("knots_elements", "door_s", "call_s", "step_s", "copy_s", "combine_s")
        if not isinstance(d, dict) or any(k not in d for k in keys):
            raise ValueError(f"a software term needs the keys {', '.join(keys)}")
        return cls(d["knots_elements"], d["door_s"], d["call_s"], d["step_s"], d["copy_s"], d["combine_s"])
