"""Aligning the ranks' clocks: each rank's offset from rank 0, with its own error bound.

Method: Cristian's probabilistic clock reading (F. Cristian, "Probabilistic clock
synchronization", Distributed Computing 3(3), 1989), the offset step that Hoefler, Schneider
and Lumsdaine take against a root rank in Netgauge ("Accurately measuring collective operations
at massive scale", IPDPS 2008, PMEO workshop, doi:10.1109/IPDPS.2008.4536494; SKaMPI's window
scheme, which they compare with, estimates offsets the same way):
rank r sends a ping at its time ``a``, rank 0 answers with its time ``t0``, rank r
receives the answer at its time ``b``.  Rank 0's clock read ``t0`` somewhere between
``a`` and ``b``, so the offset (rank 0's clock minus rank r's, s) lies in
``[t0 - b, t0 - a]``; Cristian keeps the exchange of the shortest round trip, whose
interval is ``(a + b) / 2 - t0`` plus or minus half that round trip (:attr:`Estimate.round_trip_bound`).
A constant offset lies in *every* exchange's interval, so here the intervals of all
``rounds`` ping-pongs are intersected (the intersection is never wider than the shortest
round trip's interval, and usually much narrower: one exchange bounds the offset from
below when rank 0 answered late, another from above when it answered early): the offset is
its midpoint and its half width the error bound (:attr:`Estimate.bound`).  Intervals that
share no point mean the offset moved during the estimate: the rank is then marked
(``consistent`` False) and its estimate falls back to the shortest round trip's.  Ranks
are done one after another (rank 0 answers one rank at a time).

Stability: the offset is estimated several times (the timeline command: once before and
once after its measurement); a constant offset lies inside every estimate's interval
``offset +- bound``, so intervals that share no point mean the offset moved (clock drift,
a clock stepped, a rank descheduled at the wrong moment): that rank's clock is *not
aligned* (:func:`combine`), and a trace of it must say so.

The clock is :data:`mpi_exercises.executor.CLOCK` (``time.perf_counter``, Linux's
CLOCK_MONOTONIC): the processes of one node share it, so there the true offset is 0 and
the estimate itself is the alignment's error, measured (:func:`one_node`).  ``MPI.WTIME_IS_GLOBAL`` (whether
the MPI library declares ``MPI.Wtime`` synchronised) is stored alongside, not trusted.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .executor import CLOCK

#: ping-pongs per rank and estimate
ROUNDS = 100
METHOD = ("Cristian's round-trip offset against rank 0, the intervals of all exchanges intersected "
          "(Cristian's own bound, half the shortest round trip, stored beside it)")
SOURCE = ("F. Cristian, Probabilistic clock synchronization, Distributed Computing 3(3), 1989; "
          "T. Hoefler, T. Schneider, A. Lumsdaine, Accurately measuring collective operations at "
          "massive scale, IPDPS 2008 (PMEO), doi:10.1109/IPDPS.2008.4536494")


class Estimate(NamedTuple):
    """Per rank (arrays, s; rank 0's own: 0): ``offset`` (rank 0's clock minus the rank's),
    ``bound`` (the true offset lies within ``offset +- bound``), ``round_trip_bound`` (half
    the shortest round trip: Cristian's bound), ``consistent`` (the exchanges' intervals
    share a point)."""

    offset: np.ndarray
    bound: np.ndarray
    round_trip_bound: np.ndarray
    consistent: np.ndarray


def interval_of(a, t0, b) -> tuple[float, float, float, bool]:
    """``(offset, bound, round_trip_bound, consistent)`` from one rank's exchanges: its
    clock ``a`` before each ping and ``b`` after each answer, rank 0's ``t0`` in between
    (arrays, s)."""
    a, t0, b = (np.asarray(v, float) for v in (a, t0, b))
    if a.ndim != 1 or not a.size or a.shape != t0.shape or a.shape != b.shape or (b < a).any():
        raise ValueError("a, t0 and b must be 1-D arrays of one length >= 1, with b >= a")
    best = int(np.argmin(b - a))
    rtt_bound = (b[best] - a[best]) / 2
    lo, hi = (t0 - b).max(), (t0 - a).min()
    if lo > hi:                                  # the offset moved: Cristian's estimate, marked
        return float(t0[best] - (a[best] + b[best]) / 2), float(rtt_bound), float(rtt_bound), False
    return float((lo + hi) / 2), float((hi - lo) / 2), float(rtt_bound), True


def estimate(comm, rounds: int = ROUNDS) -> Estimate | None:
    """The :class:`Estimate` of every rank's offset on rank 0, None on the others.  Collective."""
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be an integer >= 1, got {rounds!r}")
    rank, size = comm.Get_rank(), comm.Get_size()
    ping, pong = np.zeros(1), np.zeros(1)
    clock = CLOCK
    if rank == 0:
        for r in range(1, size):
            for _ in range(rounds):
                comm.Recv(ping, r, 7)
                pong[0] = clock()
                comm.Send(pong, r, 7)
        mine = (0.0, 0.0, 0.0, True)
    else:
        a, t0, b = np.empty(rounds), np.empty(rounds), np.empty(rounds)
        for i in range(rounds):
            a[i] = clock()
            comm.Send(ping, 0, 7)
            comm.Recv(pong, 0, 7)
            b[i] = clock()
            t0[i] = pong[0]
        mine = interval_of(a, t0, b)
    everyone = comm.gather(mine, root=0)
    if rank != 0:
        return None
    cols = list(zip(*everyone))
    return Estimate(np.array(cols[0]), np.array(cols[1]), np.array(cols[2]), np.array(cols[3], bool))


def combine(estimates) -> dict:
    """One alignment from several :func:`estimate` results (:class:`Estimate` or ``(offset,
    bound)`` pairs): per rank the estimate of the smallest bound (``offset``, ``error``, s, and
    its ``round_trip_bound_s`` when given), the ``spread`` of the estimates (largest minus
    smallest offset, s), whether the estimates' intervals share a point and each estimate's
    exchanges did (``aligned``, per rank), and ``unstable``: the ranks that are not aligned."""
    if not estimates:
        raise ValueError("estimates must hold at least one (offset, bound) pair")
    off = np.array([np.asarray(e[0], float) for e in estimates])
    bound = np.array([np.asarray(e[1], float) for e in estimates])
    if off.shape != bound.shape or off.ndim != 2 or not (np.isfinite(off).all() and (bound >= 0).all()):
        raise ValueError("estimates must be (offset, bound) arrays of one length, finite, bounds >= 0")
    best = bound.argmin(axis=0)
    cols = np.arange(off.shape[1])
    aligned = (off - bound).max(axis=0) <= (off + bound).min(axis=0)
    out = {"method": METHOD, "source": SOURCE, "offset_s": off[best, cols].tolist(),
           "error_s": bound[best, cols].tolist(), "spread_s": (off.max(axis=0) - off.min(axis=0)).tolist()}
    if all(isinstance(e, Estimate) for e in estimates):
        rtt = np.array([e.round_trip_bound for e in estimates], float)
        aligned &= np.array([e.consistent for e in estimates], bool).all(axis=0)
        out["round_trip_bound_s"] = rtt[best, cols].tolist()
    out.update({"aligned": aligned.tolist(), "unstable": np.flatnonzero(~aligned).tolist(),
                "estimates": len(estimates)})
    return out


def one_node(comm) -> bool:
    """Whether every rank of ``comm`` runs on this node (one processor name): then they read
    one clock, the true offsets are 0 and an estimate's offset is its error.  Collective."""
    from mpi4py import MPI

    names = comm.allgather(MPI.Get_processor_name())
    return len(set(names)) == 1
