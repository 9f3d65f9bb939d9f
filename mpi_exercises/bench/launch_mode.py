"""The mode of a launch: on the kit's 2-core machine, launches a minute apart time long messages
2 to 4 times apart, MPI's own Allreduce too, while a ping-pong's β moves a few per cent
(``benchmarks/launch_modes.py`` tests the suspects).  Such a mode can only be detected, so the
benchmarks and ``predict`` measure it (:func:`detect_mode`) and write it beside their results.

The measure is a ratio of two times taken in one loop, so load on a shared machine divides out:
MPI's Allreduce over a ``Sendrecv`` of the same bytes, page-aligned buffers, interleaved."""

from __future__ import annotations

import numpy as np

#: a launch whose MPI Allreduce takes more than this times a Sendrecv of the same bytes (page-aligned,
#: timed interleaved in one loop) is in the slow mode: on the kit's 2-core machine the default launches
#: gave 1.5 to 3.5 at 1 MiB, those with MPICH's temporaries forced 16 bytes past a page (tmp-mmap) up
#: to 7, the earlier version of this script 5 to 10 (book/data/launch_modes*.json)
MODE_RATIO = 4.0
#: the length (bytes) at which :func:`detect_mode` compares them
MODE_BYTES = 1 << 20


def launch_mode(ratio: float, threshold: float = MODE_RATIO) -> str:
    """``"slow"`` when a launch's Allreduce / exchange ``ratio`` (dimensionless) exceeds
    ``threshold``, else ``"normal"``."""
    if not (np.isfinite(ratio) and ratio > 0):
        raise ValueError(f"ratio must be a finite number > 0, got {ratio!r}")
    if not threshold > 1:
        raise ValueError(f"threshold must be > 1, got {threshold!r}")
    return "slow" if ratio > threshold else "normal"


def detect_mode(comm, nbytes: int = MODE_BYTES, samples: int = 20) -> dict:
    """The mode of this launch, measured on ``comm`` (collective; 2 ranks or more; ranks 0 and 1
    time, the others wait): MPI's Allreduce against a Sendrecv of ``nbytes`` (page-aligned
    buffers), interleaved, ``samples`` medians of 4 calls each.  Returns ``{"bytes",
    "allreduce_s", "exchange_s", "ratio", "mode", "threshold"}`` (times in seconds) on every rank
    (the mode is a launch's, not a rank's)."""
    from mpi4py import MPI

    from mpi_exercises import pages
    from mpi_exercises.bench import timing

    if nbytes <= 0 or nbytes % 8:
        raise ValueError(f"nbytes must be a positive multiple of 8, got {nbytes}")
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    if comm.Get_size() < 2:
        raise ValueError("detect_mode needs a communicator of 2 ranks or more")
    pair = comm.Split(0 if comm.Get_rank() < 2 else MPI.UNDEFINED, comm.Get_rank())
    result = None
    if pair != MPI.COMM_NULL:
        send = pages.allocate((nbytes // 8,), np.float64)
        recv = pages.allocate((nbytes // 8,), np.float64)
        send[...] = 1.0
        peer = 1 - pair.Get_rank()
        calls = [lambda: pair.Allreduce(send, recv, op=MPI.SUM), lambda: pair.Sendrecv(send, peer, 5, recv, peer, 5)]
        t = np.median(timing.time_interleaved(pair, calls, samples, 2, inner=4), axis=1)
        ratio = float(t[0] / t[1])
        result = {"bytes": int(nbytes), "allreduce_s": float(t[0]), "exchange_s": float(t[1]), "ratio": ratio,
                  "mode": launch_mode(ratio), "threshold": MODE_RATIO}
        pair.Free()
    return comm.bcast(result, root=0)
