"""Exchange between ranks 0 and 1: both send and receive ``m`` bytes at once, over the
ping-pong's message sizes.

In a collective's exchange step two copies cross each rank's memory at once, which a
ping-pong (one message in flight) never measures.  Method: each rank calls ``Sendrecv``
with the other (separate send and receive buffers), and rank 0 times each call with
``MPI.Wtime`` (:data:`METHOD`); sizes in interleaved rounds with the ping-pong's stopping
rule (:func:`mpi_exercises.bench.pingpong.sweep`).  The fit is the ping-pong's, one truth
(:func:`~mpi_exercises.bench.pingpong.fit_file`): α_x and β_x on the minima, and two
segments, split at the ping-pong's switch when ``predict`` has one.

With ``--fresh`` every rank writes its send buffer inside each timed sample, less the best time
of the same write into memory of its own (:mod:`mpi_exercises.bench.fresh_data`): a collective
sends data it has just written, where the plain exchange sends the same buffer again and again;
the JSON says ``"fresh": true``.

    mpiexec -n 2 python -m mpi_exercises exchange --json exchange.json
    mpiexec -n 2 python -m mpi_exercises exchange --fresh --json exchange-fresh.json
"""

from __future__ import annotations

import numpy as np

from . import fresh_data, pingpong, placement

#: how an exchange is timed, in words (printed and stored in the JSON)
METHOD = ("exchange: ranks 0 and 1 each Sendrecv m bytes with the other at once; the time of each "
          "Sendrecv on rank 0, one by one with MPI.Wtime; separate send and receive buffers")


def add_arguments(p) -> None:
    pingpong.add_arguments(p)


def exchanges(comm, send, recv, iters: int, warmup: int, write=None) -> np.ndarray:
    """Times (s) of ``iters`` exchanges between ranks 0 and 1, each sending ``send`` and
    receiving ``recv`` (same size) at once, after ``warmup`` untimed ones; meaningful on
    rank 0.  ``write``: a function of no argument each rank calls right before each exchange,
    inside the timed span (:mod:`mpi_exercises.bench.fresh_data`)."""
    from mpi4py import MPI

    peer = 1 - comm.Get_rank()
    samples = np.empty(iters)
    for i in range(-warmup, iters):
        t0 = MPI.Wtime()
        if write is not None:
            write()
        comm.Sendrecv([send, MPI.BYTE], dest=peer, sendtag=3, recvbuf=[recv, MPI.BYTE], source=peer, recvtag=3)
        if i >= 0:
            samples[i] = MPI.Wtime() - t0
    return samples


def sweep(comm, sizes, iterations, warmup, budget_bytes, progress=True, kind="small", *, fresh: bool = False,
          **options) -> tuple[list[dict], dict]:
    """:func:`pingpong.sweep` with :func:`exchanges` as the timer (collective; ``fresh``: the
    send buffer written inside each sample, :func:`~mpi_exercises.bench.fresh_data.timer`):
    ``(per-size summaries, the rounds' record)`` on rank 0, ``([], record)`` elsewhere."""
    results, info = pingpong.sweep(comm, sizes, iterations, warmup, budget_bytes, progress, kind,
                                   timer=exchanges, desc="exchange", fresh=fresh, **options)
    for r in results:           # bytes each way over the time of the exchange
        r["bandwidth_Bps"] = r["bytes"] / r["median_s"] if r["bytes"] else None
    return results, info


def measure(comm, sizes, iterations, warmup, budget_bytes, progress=True, **options) -> list[dict]:
    """:func:`sweep`'s per-size summaries (rank 0; an empty list elsewhere)."""
    return sweep(comm, sizes, iterations, warmup, budget_bytes, progress, **options)[0]


def run(args) -> int:
    fresh = bool(getattr(args, "fresh", False))

    def last(fitted, oversubscribed):
        load = placement.load_average()
        f = fitted["alpha_beta"]
        return (f"exchange{' of fresh data' if fresh else ''}: {len(args.sizes)} sizes, "
                f"alpha_x = {f['alpha_s'] * 1e6:.3f} µs, "
                f"1/beta_x = {1e-6 / f['beta_s_per_byte']:.0f} MB/s each way; "
                f"load {'unknown' if load is None else format(load, '.1f')}{'; OVERSUBSCRIBED' if oversubscribed else ''}")

    def sweep_fn(*a, **options):
        return sweep(*a, fresh=fresh, **options)
    return pingpong.run_sweep(args, "exchange", METHOD + ("; " + fresh_data.METHOD if fresh else ""), sweep_fn,
                              what="fresh exchange" if fresh else "exchange", after=last, fields={"fresh": fresh})
