"""What a model is asked by the simulator: the protocol of a step rule.

The simulator (:func:`netmodels.simulate.simulate`) walks a schedule step by step and
hands every step to the model as a :class:`Step`: the columns of its messages
(``src != dst``), their sizes, the link loads of a topology and the extra latency of
noise, and the local copies.  It never looks at the model's kind; it calls

    rule = model.step_rule(schedule)

once per run (``schedule`` an ArraySchedule: its ``nprocs`` and ``meta``) and then, for every step, one of the two methods a rule has:

* a **step-synchronous** rule (``rule.clocked`` False: α-β, NBL, BSP, two-level α-β,
  LoP) answers ``rule.costs(step) -> (comm, comp)``, the per-rank communication and
  combining times of the step (s, arrays of ``nprocs``; ``comp`` may be None).  The
  simulator applies its semantics to them (under *sync* a step lasts
  ``max comm + max comp``);
* a **clocked** rule (``rule.clocked`` True: the LogP family) keeps per-rank clocks of
  its own (CPU and NIC gaps) and answers ``rule.advance(cpu, step)``: it moves the
  per-rank CPU times ``cpu`` (s, updated in place) through the step.

Every model keeps its one rule beside its parameters: :mod:`~netmodels.models.alphabeta`,
:mod:`~netmodels.models.nbl`, :mod:`~netmodels.models.logp`, :mod:`~netmodels.models.lop`,
:mod:`~netmodels.models.bsp`, :mod:`~netmodels.models.twolevel`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Step(NamedTuple):
    """One step of a schedule as a model sees it (SI units).

    nprocs: ranks.  src, dst, start, count, combine: the columns of the step's messages
    (``src != dst``; ``count`` in elements).  nbytes: ``count * elem_bytes`` (float, B).
    load: per message, the largest number of the step's messages on one of its links
    (None without a topology: every load 1).  link_bytes: per message, the most bytes one
    of its links carries in the step (None without a topology).  copy_src, copy_count:
    the local copies of the step (``src == dst``: a rank packing ``count`` elements).
    elem_bytes: bytes per element.
    """

    nprocs: int
    src: np.ndarray
    dst: np.ndarray
    start: np.ndarray
    count: np.ndarray
    combine: np.ndarray
    nbytes: np.ndarray
    load: np.ndarray | None
    link_bytes: np.ndarray | None
    copy_src: np.ndarray
    copy_count: np.ndarray
    elem_bytes: int


def per_rank_sum(step: Step, values) -> tuple[np.ndarray, np.ndarray]:
    """``(sent, received)``: per rank, the sum of ``values`` (one per message) over the
    messages it sends and over those it receives."""
    p = step.nprocs
    return (np.bincount(step.src, values, minlength=p).astype(float, copy=False),
            np.bincount(step.dst, values, minlength=p).astype(float, copy=False))


def combined_elements(step: Step) -> np.ndarray:
    """Per rank: the elements it combines in the step (the ``count`` of every combining
    message it receives, summed)."""
    w = np.where(step.combine, step.count, 0).astype(float)
    return np.bincount(step.dst, w, minlength=step.nprocs)


class SyncRule:
    """Base of the step-synchronous rules: ``costs(step) -> (comm, comp)``."""

    clocked = False

    def __init__(self, model, nprocs: int):
        self.model, self.nprocs = model, nprocs

    def costs(self, step: Step):  # pragma: no cover - the protocol
        raise NotImplementedError
