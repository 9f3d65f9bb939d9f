"""Checks on schedules without MPI: what every rank holds at the end, and link conflicts.

:func:`contributions` runs a schedule on *counts* instead of numbers: rank ``r``
starts with ``c[r, e, q] = (q == r)`` (element ``e`` of rank ``r`` holds one copy of
its own contribution and nothing of rank ``q``'s); a combining transfer adds the
sender's counts into the receiver's, a copy overwrites them, following the step
semantics of :mod:`netmodels.algorithms.schedule`.  An allreduce is correct exactly when every
count ends at 1: every rank's contribution combined exactly once into every result
element on every rank.

:func:`link_conflicts` routes every message of a step over the mesh with
dimension-order routing (first along the row, then along the column) and reports
the links that carry more than one message in the same step.  A mesh link is a
pair of neighbouring nodes and a direction, as on the Touchstone DELTA, whose
routers have independent links in both directions.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from .schedule import Schedule


def contributions(schedule: Schedule) -> np.ndarray:
    """Counts ``c[rank, element, contributor]`` after running ``schedule`` (int32)."""
    p, n = schedule.nprocs, schedule.nelems
    c = np.zeros((p, n, p), dtype=np.int32)
    c[np.arange(p), :, np.arange(p)] = 1
    for step in schedule.steps:
        sent = [c[tr.src, tr.start:tr.stop].copy() for tr in step]   # values at the start of the step
        for tr, data in zip(step, sent):
            if tr.combine:
                c[tr.dst, tr.start:tr.stop] += data
            else:
                c[tr.dst, tr.start:tr.stop] = data
    return c


def combining_errors(schedule: Schedule, limit: int = 5) -> list[str]:
    """Human-readable reasons why ``schedule`` is not an allreduce (empty list: it is one)."""
    c = contributions(schedule)
    bad = np.argwhere(c != 1)
    return [f"rank {r} element {e}: contribution of rank {q} combined {c[r, e, q]} times (expected 1)"
            for r, e, q in bad[:limit]]


def route(src: tuple[int, int], dst: tuple[int, int]) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Directed links from mesh node ``src`` to ``dst`` (both ``(x, y)``), along x first, then y."""
    (x, y), (x1, y1) = src, dst
    links = []
    while x != x1:
        nx = x + (1 if x1 > x else -1)
        links.append(((x, y), (nx, y)))
        x = nx
    while y != y1:
        ny = y + (1 if y1 > y else -1)
        links.append(((x, y), (x, ny)))
        y = ny
    return links


def link_loads(schedule: Schedule, step: int, mesh=None) -> dict:
    """``{link: [transfers]}`` for step ``step`` on ``mesh=(W, H)`` (default: the schedule's)."""
    w, _ = mesh or schedule.meta["mesh"]
    loads = defaultdict(list)
    for tr in schedule.steps[step]:
        for link in route((tr.src % w, tr.src // w), (tr.dst % w, tr.dst // w)):
            loads[link].append(tr)
    return dict(loads)


def link_conflicts(schedule: Schedule, mesh=None) -> list[tuple[int, tuple, list]]:
    """``(step, link, transfers)`` for every link carrying more than one message in a step."""
    out = []
    for t in range(schedule.nsteps):
        for link, trs in link_loads(schedule, t, mesh).items():
            if len(trs) > 1:
                out.append((t, link, trs))
    return out


def active_links(schedule: Schedule) -> np.ndarray:
    """``L[step, rank]``: messages a rank sends plus receives in a step.

    This is the paper's L, "the number of communication links that are nominally
    active at the same time" at a node: its f(L) test jig counts a node that only
    receives from one neighbour as L = 1 and one exchanging with one, two, three
    neighbours as L = 2, 4, 6 (section 4.2, Table 1).
    """
    L = np.zeros((schedule.nsteps, schedule.nprocs), dtype=int)
    for t, step in enumerate(schedule.steps):
        for tr in step:
            L[t, tr.src] += 1
            L[t, tr.dst] += 1
    return L


def timeline(schedule: Schedule) -> list[tuple[int, int]]:
    """Run-length summary ``[(number of steps, max L), ...]`` like the paper's appendix tables."""
    out: list[list[int]] = []
    for lmax in active_links(schedule).max(axis=1, initial=0):
        if out and out[-1][1] == lmax:
            out[-1][0] += 1
        else:
            out.append([1, int(lmax)])
    return [tuple(x) for x in out]
