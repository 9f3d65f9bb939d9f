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


# ---------------------------------------------------------------- walking a schedule
def _loads(topology, src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray):
    """Per message: the largest number of the step's messages on one of its links (>= 1)
    and the most bytes one of its links carries; ``(None, None)`` without a topology."""
    n = src.size
    if topology is None:
        return None, None
    load = np.ones(n)
    busiest = nbytes.astype(float).copy()
    msg, link = topology.routes(src, dst)
    msg, link = np.asarray(msg, dtype=np.int64), np.asarray(link, dtype=np.int64)
    if msg.shape != link.shape or msg.ndim != 1:
        raise ValueError("topology.routes must return two 1-D integer arrays of equal length")
    if msg.size == 0:
        return load, busiest
    if msg.min() < 0 or msg.max() >= n or link.min() < 0 or link.max() >= topology.nlinks:
        raise ValueError(f"topology.routes returned a message index outside 0..{n - 1} "
                         f"or a link outside 0..{topology.nlinks - 1}")
    per_link = np.bincount(link, minlength=topology.nlinks)
    np.maximum.at(load, msg, per_link[link].astype(float))
    bytes_link = np.bincount(link, nbytes[msg], minlength=topology.nlinks)
    np.maximum.at(busiest, msg, bytes_link[link])
    return load, busiest


def all_messages(a, elem_bytes: int = 8, topology=None) -> tuple[np.ndarray, Step | None]:
    """``(t, step)``: every message of the ArraySchedule ``a`` (local copies left out) as one
    :class:`Step`, in step and column order, and per message the index ``t`` of its step; link
    loads are those of each message's own step.  For a rule whose terms are per message (the
    *loggopsim* semantics), one call instead of one per step.  ``step`` is None without a message."""
    parts = [(t, s) for t, s in enumerate(a.steps) if len(s)]
    if not parts:
        return np.zeros(0, np.int64), None
    t = np.repeat([i for i, _ in parts], [len(s) for _, s in parts])
    src, dst, start, count, combine = (np.concatenate([getattr(s, k) for _, s in parts])
                                       for k in ("src", "dst", "start", "count", "combine"))
    keep = src != dst
    if not keep.all():
        t, src, dst, start, count, combine = t[keep], src[keep], dst[keep], start[keep], count[keep], combine[keep]
    if not t.size:
        return t, None
    nbytes = count.astype(float) * elem_bytes
    load = link_bytes = None
    if topology is not None:
        load, link_bytes = np.ones(t.size), nbytes.copy()
        bounds = np.flatnonzero(np.diff(t)) + 1
        for a_, b_ in zip(np.r_[0, bounds], np.r_[bounds, t.size]):
            load[a_:b_], link_bytes[a_:b_] = _loads(topology, src[a_:b_], dst[a_:b_], nbytes[a_:b_])
    return t, Step(a.nprocs, src, dst, start, count, combine, nbytes, load, link_bytes,
                   src[:0], count[:0], elem_bytes)


def steps(a, elem_bytes: int = 8, topology=None):
    """Every step of the ArraySchedule ``a`` as a :class:`Step` (messages and local copies
    split, sizes in bytes, link loads of ``topology``; see :mod:`netmodels.simulate.engine`
    for what a topology is), or None for an empty step: what the simulator hands a rule."""
    for step in a.steps:
        if len(step) == 0:
            yield None
            continue
        src, dst, count, combine, start = step.src, step.dst, step.count, step.combine, step.start
        local = src == dst
        copy_src = copy_count = src[:0]
        if local.any():
            keep = ~local
            copy_src, copy_count = src[local], count[local]
            src, dst, count, combine, start = src[keep], dst[keep], count[keep], combine[keep], start[keep]
        nbytes = count.astype(float) * elem_bytes
        load, link_bytes = _loads(topology, src, dst, nbytes)
        yield Step(a.nprocs, src, dst, start, count, combine, nbytes, load, link_bytes,
                   copy_src, copy_count, elem_bytes)
