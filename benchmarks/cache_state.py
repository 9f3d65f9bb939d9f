"""Warm or cold: what the cache holds when a long message or a combination starts, and what it costs.

    mpiexec -n 2 python benchmarks/cache_state.py [-N 700 12000 100000] [--blocks 8] [--samples 20] [--evict-mib 16] [--json F]

``predict`` calibrates on messages timed back to back at one size (the ping-pong's and the
exchange's sweeps: the same buffers again and again, so in the cache) and times each collective
longer than 64 KiB one call per sample, in turn with every other algorithm's call (each with
buffers of its own). Per vector length ``N`` (float64, page-aligned), three pieces of work, each
timed in three ways, in blocks of ``--samples`` samples of one kind, the blocks in turn:

* ``loop``: ten calls back to back after a barrier, per call (the buffers stay in the cache);
* ``single``: one call after a barrier, the one before it being the same (warm);
* ``cold``: one call after a barrier, after each rank read one byte of every 64 of a buffer of
  ``--evict-mib`` MiB (untimed): what a call meets after other work went through the cache.

The work: ``exchange`` (``Sendrecv`` of x into recv), ``combine`` (``x + recv`` into out, no
message) and ``nothing`` (the timing's own floor). A time is the slowest rank's (``MPI.Wtime``).
Prints per length and work the median and minimum of each way, and the ratio cold / single of the
medians; the load average before and after, ``OVERSUBSCRIBED`` when ranks outnumber cores;
``--json`` stores it all.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from mpi_exercises.bench import arguments  # noqa: E402
from netmodels.commandline import OneLineParser, run_script  # noqa: E402

#: vector lengths (float64 elements): predict's lengths around and above its 64 KiB timing switch
LENGTHS = (700, 12000, 100000)
WAYS = ("loop", "single", "cold")
WORK = ("exchange", "combine", "nothing")
LOOP_CALLS = 10


def build_parser() -> OneLineParser:
    p = OneLineParser(prog="cache_state.py", description=__doc__.splitlines()[0])
    p.add_argument("-N", type=arguments.positive_int, nargs="+", default=list(LENGTHS),
                   help="vector lengths, float64 elements (default %s)" % " ".join(map(str, LENGTHS)))
    p.add_argument("--blocks", type=arguments.positive_int, default=8, help="blocks of each kind (default 8)")
    p.add_argument("--samples", type=arguments.positive_int, default=20, help="samples per block (default 20)")
    p.add_argument("--evict-mib", type=arguments.positive_int, default=16,
                   help="MiB read before a cold sample (default 16, twice the L3 share of a core on most machines)")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON")
    return p


def one_length(comm, n: int, blocks: int, samples: int, evict) -> dict:
    """Samples (s) of every work and way at ``n`` elements, the slowest rank's (collective)."""
    from mpi4py import MPI

    from mpi_exercises import pages

    peer = 1 - comm.Get_rank()
    x, out, recv = (pages.allocate(8 * n, np.uint8, "small").view(np.float64) for _ in range(3))
    for a in (x, out, recv):
        a[:] = 1.0
    work = {"exchange": lambda: comm.Sendrecv([x, MPI.DOUBLE], dest=peer, sendtag=6,
                                              recvbuf=[recv, MPI.DOUBLE], source=peer, recvtag=6),
            "combine": lambda: np.add(x, recv, out=out),
            "nothing": lambda: None}

    evict_sum = [0]

    def sample(f, way: str) -> float:
        if way == "cold":
            evict_sum[0] = evict[::64].sum()      # read, not written: no dirty line is written back while timed
        calls = LOOP_CALLS if way == "loop" else 1
        comm.Barrier()
        t0 = MPI.Wtime()
        for _ in range(calls):
            f()
        return comm.allreduce((MPI.Wtime() - t0) / calls, op=MPI.MAX)

    times = {(w, way): [] for w in WORK for way in WAYS}
    for _ in range(blocks):
        for w, way in times:
            f = work[w]
            f()                                  # the call before a "single" one is the same
            times[w, way] += [sample(f, way) for _ in range(samples)]
    out_ = {"elements": n, "bytes": 8 * n, "work": {}}
    for w in WORK:
        out_["work"][w] = {way: {"median_s": float(np.median(times[w, way])), "min_s": float(min(times[w, way]))}
                           for way in WAYS}
        out_["work"][w]["cold_over_single"] = out_["work"][w]["cold"]["median_s"] / out_["work"][w]["single"]["median_s"]
    return out_


def main(argv=None) -> int:
    p = build_parser()
    a = p.parse_checked(argv)
    from mpi_exercises import pages
    from mpi_exercises.bench import placement

    started = placement.two_ranks("cache_state.py")
    if started is None:
        return 2
    comm = started[0]
    evict = pages.allocate(a.evict_mib << 20, np.uint8, "small")
    results = [one_length(comm, n, a.blocks, a.samples, evict) for n in a.N]
    if comm.Get_rank():
        return 0
    print("µs per call, the slowest rank's: median (minimum); cold / single of the medians")
    for r in results:
        for w in WORK:
            d = r["work"][w]
            print(f"{r['elements']:>8d} {w:<9s} " + "  ".join(
                f"{way} {d[way]['median_s'] * 1e6:8.1f} ({d[way]['min_s'] * 1e6:7.1f})" for way in WAYS)
                + f"   cold/single {d['cold_over_single']:.2f}")
    return placement.two_ranks_end("cache_state.py", started, argv, a.json, blocks=a.blocks, samples=a.samples,
                                   evict_mib=a.evict_mib, loop_calls=LOOP_CALLS, lengths=results)

if __name__ == "__main__":
    sys.exit(run_script(main, "cache_state.py"))
