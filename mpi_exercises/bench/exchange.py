"""Exchange between ranks 0 and 1: both send and receive ``m`` bytes at once, over the
ping-pong's message sizes.

In a collective's exchange step two copies cross each rank's memory at once, which a
ping-pong (one message in flight) never measures.  Method: each rank calls ``Sendrecv``
with the other (separate send and receive buffers), and rank 0 times each call with
``MPI.Wtime`` (:data:`METHOD`); sizes in interleaved rounds with the ping-pong's stopping
rule (:func:`mpi_exercises.bench.pingpong.sweep`).  The fit is the ping-pong's, one truth
(:func:`~mpi_exercises.bench.pingpong.fit_file`): α_x and β_x on the minima, and two
segments, split at the ping-pong's switch when ``predict`` has one.

    mpiexec -n 2 python -m mpi_exercises exchange --json exchange.json
"""

from __future__ import annotations

import numpy as np

from . import pingpong, placement

#: how an exchange is timed, in words (printed and stored in the JSON)
METHOD = ("exchange: ranks 0 and 1 each Sendrecv m bytes with the other at once; the time of each "
          "Sendrecv on rank 0, one by one with MPI.Wtime; separate send and receive buffers")

add_arguments = pingpong.add_arguments


def exchanges(comm, send, recv, iters: int, warmup: int) -> np.ndarray:
    """Times (s) of ``iters`` exchanges between ranks 0 and 1, each sending ``send`` and
    receiving ``recv`` (same size) at once, after ``warmup`` untimed ones; meaningful on
    rank 0."""
    from mpi4py import MPI

    peer = 1 - comm.Get_rank()
    samples = np.empty(iters)
    for i in range(-warmup, iters):
        t0 = MPI.Wtime()
        comm.Sendrecv([send, MPI.BYTE], dest=peer, sendtag=3, recvbuf=[recv, MPI.BYTE], source=peer, recvtag=3)
        if i >= 0:
            samples[i] = MPI.Wtime() - t0
    return samples


def sweep(comm, sizes, iterations, warmup, budget_bytes, progress=True, kind="small",
          **options) -> tuple[list[dict], dict]:
    """:func:`pingpong.sweep` with :func:`exchanges` as the timer (collective): ``(per-size
    summaries, the rounds' record)`` on rank 0, ``([], record)`` elsewhere."""
    results, info = pingpong.sweep(comm, sizes, iterations, warmup, budget_bytes, progress, kind,
                                   timer=exchanges, desc="exchange", **options)
    for r in results:           # bytes each way over the time of the exchange
        r["bandwidth_Bps"] = r["bytes"] / r["median_s"] if r["bytes"] else None
    return results, info


def measure(comm, sizes, iterations, warmup, budget_bytes, progress=True, **options) -> list[dict]:
    """:func:`sweep`'s per-size summaries (rank 0; an empty list elsewhere)."""
    return sweep(comm, sizes, iterations, warmup, budget_bytes, progress, **options)[0]


def run(args) -> int:
    def last(fitted, oversubscribed):
        load = placement.load_average()
        f = fitted["alpha_beta"]
        return (f"exchange: {len(args.sizes)} sizes, alpha_x = {f['alpha_s'] * 1e6:.3f} µs, "
                f"1/beta_x = {1e-6 / f['beta_s_per_byte']:.0f} MB/s each way; "
                f"load {'unknown' if load is None else format(load, '.1f')}{'; OVERSUBSCRIBED' if oversubscribed else ''}")
    return pingpong.run_sweep(args, "exchange", METHOD, sweep, what="exchange", after=last)
