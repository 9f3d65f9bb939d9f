"""Aligning the ranks' clocks: each rank's offset from rank 0, with its own error bound.

Method: Cristian's probabilistic clock reading (F. Cristian, "Probabilistic clock
synchronization", Distributed Computing 3(3), 1989), the offset step that Hoefler, Schneider
and Lumsdaine take against a root rank in Netgauge ("Accurately measuring collective operations
at massive scale", IPDPS 2008, PMEO workshop, doi:10.1109/IPDPS.2008.4536494; SKaMPI's window
scheme, which they compare with, estimates offsets the same way):
rank r sends a ping at its time ``a``, rank 0 answers with its time ``t0``, rank r
receives the answer at its time ``b``.  Rank 0's clock read ``t0`` somewhere between
``a`` and ``b``, so ``offset = t0 - (a + b) / 2`` (rank 0's clock minus rank r's, s) is
wrong by at most ``(b - a) / 2``: of ``rounds`` ping-pongs the one of the shortest round
trip is kept, and its half round trip is the estimate's error bound.  Ranks are done one
after another (rank 0 answers one rank at a time).

Stability: the offset is estimated several times (:func:`align`, once before and once
after a measurement); a constant offset lies inside every estimate's interval
``offset +- bound``, so intervals that share no point mean the offset moved (clock drift,
a clock stepped, a rank descheduled at the wrong moment): that rank's clock is *not
aligned* (:func:`combine`), and a trace of it must say so.

The clock is :data:`mpi_exercises.executor.CLOCK` (``time.perf_counter``, Linux's
CLOCK_MONOTONIC): the processes of one node share it, so there the true offset is 0 and
the estimate itself is the alignment's error, measured.  ``MPI.WTIME_IS_GLOBAL`` (whether
the MPI library declares ``MPI.Wtime`` synchronised) is stored alongside, not trusted.
"""

from __future__ import annotations

import numpy as np

from .executor import CLOCK

#: ping-pongs per rank and estimate (the shortest round trip is kept)
ROUNDS = 100
METHOD = "Cristian's minimum-round-trip offset against rank 0"
SOURCE = ("F. Cristian, Probabilistic clock synchronization, Distributed Computing 3(3), 1989; "
          "T. Hoefler, T. Schneider, A. Lumsdaine, Accurately measuring collective operations at "
          "massive scale, IPDPS 2008 (PMEO), doi:10.1109/IPDPS.2008.4536494")


def estimate(comm, rounds: int = ROUNDS) -> tuple[np.ndarray, np.ndarray]:
    """``(offset, bound)`` per rank on rank 0 (s; rank 0's clock minus each rank's, and half
    the shortest round trip; rank 0's own: 0, 0), None on the others.  Collective."""
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
    else:
        best = (np.inf, 0.0)
        for _ in range(rounds):
            a = clock()
            comm.Send(ping, 0, 7)
            comm.Recv(pong, 0, 7)
            b = clock()
            if b - a < best[0]:
                best = (b - a, float(pong[0]) - (a + b) / 2)
    mine = (0.0, 0.0) if rank == 0 else (best[1], best[0] / 2)
    everyone = comm.gather(mine, root=0)
    if rank != 0:
        return None
    return np.array([o for o, _ in everyone]), np.array([b for _, b in everyone])


def combine(estimates) -> dict:
    """One alignment from several :func:`estimate` results (a list of ``(offset, bound)``):
    per rank the estimate of the smallest bound (``offset``, ``error``, s), the ``spread`` of
    the estimates (largest minus smallest offset, s), whether the estimates' intervals share
    a point (``aligned``, per rank), and ``unstable``: the ranks that are not aligned."""
    if not estimates:
        raise ValueError("estimates must hold at least one (offset, bound) pair")
    off = np.array([np.asarray(o, float) for o, _ in estimates])
    bound = np.array([np.asarray(b, float) for _, b in estimates])
    if off.shape != bound.shape or off.ndim != 2 or not (np.isfinite(off).all() and (bound >= 0).all()):
        raise ValueError("estimates must be (offset, bound) arrays of one length, finite, bounds >= 0")
    best = bound.argmin(axis=0)
    cols = np.arange(off.shape[1])
    aligned = (off - bound).max(axis=0) <= (off + bound).min(axis=0)
    return {"method": METHOD, "source": SOURCE, "offset_s": off[best, cols].tolist(),
            "error_s": bound[best, cols].tolist(), "spread_s": (off.max(axis=0) - off.min(axis=0)).tolist(),
            "aligned": aligned.tolist(), "unstable": np.flatnonzero(~aligned).tolist(),
            "estimates": len(estimates)}
