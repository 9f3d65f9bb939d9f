"""The mode of a launch: on the kit's 2-core machine, launches a minute apart time long messages
2 to 4 times apart, MPI's own Allreduce too, while a ping-pong's β moves a few per cent
(``benchmarks/launch_modes.py`` tests the suspects).  Such a mode can only be detected, so the
benchmarks and ``predict`` measure it (:func:`detect_mode`) and write it beside their results.

The measure is a ratio of two times taken in one loop, so load on a shared machine divides out:
MPI's Allreduce over a ``Sendrecv`` of the same bytes, page-aligned buffers, interleaved.

``mpiexec -n 2 python -m mpi_exercises.bench.launch_mode --repeat 10`` detects it ten times in one
launch and times each detection: at a 1-minute load of 4.3 on the kit's 2-core machine, 224 ms per
detection (median) and 7 of 10 readings slow, the ratio from 2.0 to 8.5 within the one launch, so
that under load one reading names the moment more than the launch."""

from __future__ import annotations

import numpy as np

#: a launch whose MPI Allreduce takes more than this times a Sendrecv of the same bytes (page-aligned,
#: timed interleaved in one loop) is in the slow mode.  At rest on the kit's 2-core machine the
#: launches fall in two groups, 1.6 to 2.0 and 2.6 to 3.4 at 1 MiB (book/data/fresh_data.json,
#: 16 launches): in the second, a message whose send buffer was just written costs about twice what
#: it costs from a buffer not written since (benchmarks/fresh_data.py).  Under load a reading
#: ranges from 2 to 8.5 within one launch (module docstring).
MODE_RATIO = 2.3
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
    buffers), interleaved, ``samples`` medians of 4 calls each; then the cores' cache coherence on
    as many bytes (:func:`mpi_exercises.bench.coherence.probe`: its ``write_ratio``, the suspect the
    mode follows).  Returns ``{"bytes", "allreduce_s", "exchange_s", "ratio", "mode", "threshold",
    "coherence_write_ratio"}`` (times in seconds) on every rank (the mode is a launch's, not a rank's)."""
    from mpi_exercises.bench import coherence

    return coherence.on_pair(comm, nbytes, samples, "detect_mode", lambda pair: _detect_on_pair(pair, nbytes, samples))


def _detect_on_pair(pair, nbytes: int, samples: int) -> dict:
    """:func:`detect_mode` on a communicator of exactly two ranks."""
    from mpi4py import MPI

    from mpi_exercises import pages
    from mpi_exercises.bench import coherence, timing

    send = pages.allocate((nbytes // 8,), np.float64)
    recv = pages.allocate((nbytes // 8,), np.float64)
    send[...] = 1.0
    peer = 1 - pair.Get_rank()
    calls = [lambda: pair.Allreduce(send, recv, op=MPI.SUM), lambda: pair.Sendrecv(send, peer, 5, recv, peer, 5)]
    t = np.median(timing.time_interleaved(pair, calls, samples, 2, inner=4), axis=1)
    ratio = float(t[0] / t[1])
    return {"bytes": int(nbytes), "allreduce_s": float(t[0]), "exchange_s": float(t[1]), "ratio": ratio,
            "mode": launch_mode(ratio), "threshold": MODE_RATIO,
            "coherence_write_ratio": coherence.probe(pair, nbytes, 5)["write_ratio"]}


def combined(readings: list[dict]) -> dict:
    """One launch's mode from several :func:`detect_mode` readings taken in one launch (``predict``
    takes one per round): the median Allreduce and exchange times (s) over the readings, their
    ratio and its mode, and each reading's ratio and mode (``readings``, ``slow_readings``).
    ValueError on no reading or readings of different lengths."""
    if not readings:
        raise ValueError("readings must hold at least one detect_mode result")
    if len({r["bytes"] for r in readings}) != 1:
        raise ValueError("readings must all be taken at one length (bytes)")
    a = float(np.median([r["allreduce_s"] for r in readings]))
    x = float(np.median([r["exchange_s"] for r in readings]))
    return {"bytes": readings[0]["bytes"], "allreduce_s": a, "exchange_s": x, "ratio": a / x,
            "mode": launch_mode(a / x, readings[0]["threshold"]), "threshold": readings[0]["threshold"],
            "readings": [{k: r[k] for k in ("ratio", "mode", "coherence_write_ratio") if k in r} for r in readings],
            "slow_readings": sum(r["mode"] == "slow" for r in readings),
            **({"coherence_write_ratio": float(np.median([r["coherence_write_ratio"] for r in readings]))}
               if all("coherence_write_ratio" in r for r in readings) else {})}


def main(argv=None) -> int:
    """``mpiexec -n 2 python -m mpi_exercises.bench.launch_mode [--repeat K]``: the mode detected
    ``K`` times in one launch, with the wall time of each detection (what it adds to ``predict``);
    the last line names the modes found, the median wall time and the 1-minute load."""
    import os
    import sys
    import time

    from netmodels.commandline import OneLineParser

    from .arguments import int_at_least
    from .placement import launch_rank, ranks_in_job

    p = OneLineParser(prog="python -m mpi_exercises.bench.launch_mode",
                      description="Detect the launch's mode K times in one launch and time each detection.")
    p.add_argument("--repeat", type=int_at_least(1), default=5, metavar="K", help="detections (default 5)")
    p.add_argument("--samples", type=int_at_least(1), default=20, help="samples per detection (default 20)")
    args = p.parse_args(argv)
    if ranks_in_job() < 2:
        if launch_rank() == 0:
            print(f"{p.prog}: error: needs 2 ranks or more: mpiexec -n 2 {p.prog}", file=sys.stderr)
        return 2
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    walls, found = [], []
    for k in range(args.repeat):
        comm.Barrier()
        t0 = time.perf_counter()
        r = detect_mode(comm, samples=args.samples)
        walls.append(comm.allreduce(time.perf_counter() - t0, op=MPI.MAX))
        found.append(r["mode"])
        if comm.Get_rank() == 0:
            print(f"detection {k}: {walls[-1] * 1e3:7.1f} ms, Allreduce / exchange at {r['bytes'] // 1024} KiB "
                  f"{r['ratio']:.2f}: {r['mode']}", flush=True)
    if comm.Get_rank() == 0:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"launch_mode: {comm.Get_size()} ranks, {found.count('slow')} of {len(found)} detections slow; "
              f"median {np.median(walls) * 1e3:.0f} ms per detection; 1-minute load {load:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
