"""Messages of data just written: the send buffer written inside each timed sample.

A collective sends what it has just written: the copy of its input, the partial sums it has
just combined.  On two cores of one node, MPICH's single copy then moves cache lines between
the cores: the sender's write takes back the lines its peer's copy read last time, and the
peer's copy reads lines the sender holds modified.  That is cache coherence, and a benchmark
that sends the same buffer again and again never pays it: the peer's core already holds the
clean lines.  ``benchmarks/coherence.py`` measures the price without any message; on the
course's VM it is four times the write itself in some minutes and nothing in others.

Method (``pingpong --fresh``, ``exchange --fresh``): before each message its sender writes the
whole send buffer (``np.copyto`` from a buffer of another pattern) inside the timed span; after
a size's samples the same rank times the same write into a buffer no other rank reads, as many
times (at least :data:`OWN_WRITES`), and the best of those writes is taken off every sample.  What is left is the message and
the coherence that its write and its copy cost: the copy itself is the software term's to charge.
"""

from __future__ import annotations

import numpy as np

from .. import pages

#: the method's words, appended to the benchmark's own (printed and stored in the JSON)
METHOD = ("fresh data: before each message its sender writes the whole send buffer (np.copyto from a "
          "buffer of another pattern) inside the timed span; the best time of the same write into a "
          "buffer no other rank reads (timed as many times after the size's samples, at least 20, rank 0) "
          "is taken off every sample")
#: the fewest writes of the rank's own memory whose best is taken off (one preempted write must
#: not stand for the write)
OWN_WRITES = 20


def own_write_s(own: np.ndarray, source: np.ndarray, times: int) -> float:
    """The best time (s) of ``times`` writes of ``source`` into ``own`` (same size): memory that
    no other rank reads, so no cache line has to come back from another core."""
    from mpi4py import MPI

    best = float("inf")
    for _ in range(max(1, times)):
        t0 = MPI.Wtime()
        np.copyto(own, source)
        best = min(best, MPI.Wtime() - t0)
    return best


def timer(base, max_bytes: int, kind: str = "small"):
    """``base`` (:func:`~mpi_exercises.bench.pingpong.roundtrips` or
    :func:`~mpi_exercises.bench.exchange.exchanges`, which take ``write``) made a timer of fresh
    data for sizes up to ``max_bytes``: its samples less the best write into memory of the rank's
    own (:func:`own_write_s`).  Buffers on pages of ``kind``."""
    source = pages.allocate(max(max_bytes, 1), np.uint8, kind)
    own = pages.allocate(max(max_bytes, 1), np.uint8, kind)
    source[:] = 0xA5
    own[:] = 0

    def timed(comm, send, recv, iters, warmup):
        src = source[:send.size]
        samples = base(comm, send, recv, iters, warmup, write=lambda: np.copyto(send, src))
        return samples - own_write_s(own[:send.size], src, max(iters, OWN_WRITES))
    return timed
