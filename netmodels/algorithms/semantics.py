"""Checks on schedules without MPI: what every rank holds at the end, and the links a rank uses.

:func:`contributions` runs a schedule on *counts* instead of numbers: rank ``r``
starts with ``c[r, e, q] = (q == r)`` (element ``e`` of rank ``r`` holds one copy of
its own contribution and nothing of rank ``q``'s); a combining transfer adds the
sender's counts into the receiver's, a copy overwrites them, following the step
semantics of :mod:`netmodels.algorithms.schedule`.  An allreduce is correct exactly when every
count ends at 1: every rank's contribution combined exactly once into every result
element on every rank.  A transfer with a receive offset lands at
``[recv_start, recv_stop)``; local copies (``src == dst``) move counts inside a rank.
Which mesh links a schedule's messages share is a question of the topology:
:func:`netmodels.topology.mesh.link_conflicts`; how many links a rank has active, the NBL
model's L: :func:`netmodels.models.nbl.active_links`.
"""

from __future__ import annotations

import numpy as np

from .arrays import as_transfers
from .schedule import Schedule


def contributions(schedule: Schedule) -> np.ndarray:
    """Counts ``c[rank, element, contributor]`` after running ``schedule`` (either form; int32)."""
    schedule = as_transfers(schedule)
    p, n = schedule.nprocs, schedule.nelems
    c = np.zeros((p, n, p), dtype=np.int32)
    c[np.arange(p), :, np.arange(p)] = 1
    for step in schedule.steps:
        sent = [c[tr.src, tr.start:tr.stop].copy() for tr in step]   # values at the start of the step
        for tr, data in zip(step, sent):
            if tr.combine:
                c[tr.dst, tr.recv_start:tr.recv_stop] += data
            else:
                c[tr.dst, tr.recv_start:tr.recv_stop] = data
    return c


def combining_errors(schedule: Schedule, limit: int = 5) -> list[str]:
    """Human-readable reasons why ``schedule`` (either form) is not an allreduce (empty list: it is one)."""
    c = contributions(schedule)
    bad = np.argwhere(c != 1)
    return [f"rank {r} element {e}: contribution of rank {q} combined {c[r, e, q]} times (expected 1)"
            for r, e, q in bad[:limit]]


def deliveries(schedule: Schedule, owned: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Run a copy-only schedule on *labels*: where each element came from, how often it arrived.

    ``owned[r, e]`` (bool, shape ``(nprocs, nelems)``) says which elements hold a rank's
    original data at the start.  Returns ``origin[r, e]``, the flat index
    ``q * nelems + f`` of the original element (rank q, element f) that rank r holds at
    element e at the end (-1: nothing valid), and ``arrivals[r, e]``, how many messages
    wrote element e of rank r with valid data.  Copies follow the step semantics of
    :mod:`netmodels.algorithms.schedule` (data as at the beginning of the step); a
    combining transfer raises ValueError (use :func:`contributions`).  Either form.
    """
    schedule = as_transfers(schedule)
    p, n = schedule.nprocs, schedule.nelems
    owned = np.asarray(owned, dtype=bool)
    if owned.shape != (p, n):
        raise ValueError(f"owned must have shape ({p}, {n}), got {owned.shape}")
    origin = np.where(owned, np.arange(p * n).reshape(p, n), -1)
    arrivals = np.zeros((p, n), dtype=np.int64)
    for t, step in enumerate(schedule.steps):
        sent = [origin[tr.src, tr.start:tr.stop].copy() for tr in step]
        for tr, data in zip(step, sent):
            if tr.combine:
                raise ValueError(f"step {t}: transfer {tr} combines; deliveries counts copies only")
            lo = tr.recv_start
            origin[tr.dst, lo:lo + tr.count] = data
            if tr.src != tr.dst:
                arrivals[tr.dst, lo:lo + tr.count] += data >= 0
    return origin, arrivals


def allgather_errors(schedule: Schedule, limit: int = 5) -> list[str]:
    """Reasons why ``schedule`` is not an allgather (empty list: it is one).

    Rank r owns the block ``[r m, (r+1) m)`` with ``m = nelems / nprocs``; an allgather
    ends with element e of every rank holding element e of its owner, and delivers every
    block exactly once to every other rank (its owner never receives it).  Either form.
    """
    p, n = schedule.nprocs, schedule.nelems
    if n % p:
        return [f"nelems = {n} is not a multiple of nprocs = {p}"]
    m = n // p
    e = np.arange(n)
    owner = e // m if m else e
    owned = owner[None, :] == np.arange(p)[:, None]
    origin, arrivals = deliveries(schedule, owned)
    want = owner * n + e
    errors = [f"rank {r} element {x}: holds {'nothing' if origin[r, x] < 0 else f'element {origin[r, x] % n} of rank {origin[r, x] // n}'}"
              f" (expected element {x} of rank {owner[x]})"
              for r, x in np.argwhere(origin != want[None, :])[:limit]]
    expect = (~owned).astype(np.int64)
    errors += [f"rank {r} element {x}: arrived {arrivals[r, x]} times (expected {expect[r, x]})"
               for r, x in np.argwhere(arrivals != expect)[:limit]]
    return errors
