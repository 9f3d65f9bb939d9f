"""Does an exchange cost more when local work comes between exchanges, as in a collective?

    mpiexec -n 2 python benchmarks/exchange_after_work.py [-N 700 12000 100000 1000000] [--rounds 40] [--inner 10] [--json F]

The calibration of ``predict`` times exchanges back to back (``python -m mpi_exercises
exchange``) and the kit's software term times the combination of blocks without any message
(``software-cost``); a prediction adds the two.  A collective does both in turn: at P = 2
recursive doubling exchanges the vector, adds what arrived to its own, and the next call
exchanges again.  Per vector length ``N`` (float64, page-aligned buffers of 4 KiB pages, every
page written first), six variants, each timed over ``--inner`` calls after a barrier (slowest
rank), the order rotated every round:

* ``exchange``: ``Sendrecv`` of x into recv (what the calibration measures);
* ``combine``: ``recv + x`` into res, no message (what the software term measures);
* ``exchange+combine``: the two in turn (recursive doubling's call at P = 2);
* ``exchange+spin``: the exchange, then a busy wait as long as ``combine``'s median: the same
  time away from MPI with no memory traffic (do the ranks merely drift apart?);
* ``exchange+copy``: the exchange, then a copy of N elements between two buffers that no
  message touches: memory traffic that is not the received data (does the work push the next
  exchange's buffers out of the cache?);
* ``Allreduce``: MPI's own, for reference.

For each added piece of work the script prints its **interaction**: the time of the pair less
the times of its parts, each a median over rounds, as a fraction of the exchange; zero if the
two costs simply add, as ``predict`` assumes.  The load average before and after, and
``OVERSUBSCRIBED`` when ranks outnumber cores, end the output; ``--json`` stores it all.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from mpi_exercises.bench import arguments  # noqa: E402
from netmodels.commandline import OneLineParser, run_script  # noqa: E402

#: vector lengths (float64 elements): those of predict's long rows, and one far beyond the L2 cache
LENGTHS = (700, 12000, 100000, 1000000)
#: the variants' names, in the order of a round (rotated every round)
VARIANTS = ("exchange", "combine", "exchange+combine", "exchange+spin", "exchange+copy", "copy", "Allreduce")
#: interaction = pair - its parts (names of the timed variants; "spin" is the busy wait's own length)
PAIRS = {"combine": ("exchange+combine", "exchange", "combine"),
         "spin": ("exchange+spin", "exchange", "spin"),
         "copy": ("exchange+copy", "exchange", "copy")}


def build_parser() -> OneLineParser:
    p = OneLineParser(prog="exchange_after_work.py", description=__doc__.splitlines()[0])
    p.add_argument("-N", type=arguments.positive_int, nargs="+", default=list(LENGTHS),
                   help="vector lengths, float64 elements (default %s)" % " ".join(map(str, LENGTHS)))
    p.add_argument("--rounds", type=arguments.positive_int, default=40, help="rounds per length (default 40)")
    p.add_argument("--inner", type=arguments.positive_int, default=10, help="calls timed per round (default 10)")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON")
    return p


def spin(seconds: float) -> None:
    """Busy-wait ``seconds`` (s) reading the clock: time away from MPI, no memory traffic."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def timed(comm, f, inner: int) -> float:
    """Time (s) per call of ``inner`` calls of ``f`` after a barrier, the slowest rank's (collective)."""
    from mpi4py import MPI

    comm.Barrier()
    t0 = time.perf_counter()
    for _ in range(inner):
        f()
    return comm.allreduce((time.perf_counter() - t0) / inner, op=MPI.MAX)


def one_length(comm, n: int, rounds: int, inner: int) -> dict:
    """Medians and minima (s) of every variant at ``n`` elements, and the interactions."""
    from mpi4py import MPI

    from mpi_exercises import pages

    peer = 1 - comm.Get_rank()
    x, recv, res, src, dst = (pages.allocate(8 * n, np.uint8, "small").view(np.float64) for _ in range(5))
    for a in (x, recv, res, src, dst):
        a[:] = 1.0

    def exchange():
        comm.Sendrecv([x, MPI.DOUBLE], dest=peer, sendtag=5, recvbuf=[recv, MPI.DOUBLE], source=peer, recvtag=5)

    def combine():
        np.add(recv, x, out=res)

    def copy():
        np.copyto(dst, src)

    for _ in range(20):
        combine()
    t = [timed(comm, combine, inner) for _ in range(5)]
    wait = comm.bcast(float(np.median(t)), root=0)       # one length for every rank's busy wait
    run = {"exchange": exchange, "combine": combine, "copy": copy,
           "exchange+combine": lambda: (exchange(), combine()),
           "exchange+spin": lambda: (exchange(), spin(wait)),
           "exchange+copy": lambda: (exchange(), copy()),
           "Allreduce": lambda: comm.Allreduce([x, MPI.DOUBLE], [res, MPI.DOUBLE], op=MPI.SUM)}
    for f in run.values():
        for _ in range(5):
            f()
    times = {k: [] for k in VARIANTS}
    for r in range(rounds):
        for k in VARIANTS[r % len(VARIANTS):] + VARIANTS[:r % len(VARIANTS)]:
            times[k].append(timed(comm, run[k], inner))
    med = {k: float(np.median(v)) for k, v in times.items()}
    med["spin"] = wait
    out = {"elements": n, "bytes": 8 * n, "spin_s": wait,
           "median_s": {k: med[k] for k in VARIANTS}, "min_s": {k: float(min(v)) for k, v in times.items()},
           "interaction_s": {}, "interaction_of_exchange": {}}
    for name, (pair, a, b) in PAIRS.items():
        extra = med[pair] - med[a] - med[b]
        out["interaction_s"][name] = extra
        out["interaction_of_exchange"][name] = extra / med["exchange"]
    return out


def main(argv=None) -> int:
    p = build_parser()
    a = p.parse_checked(argv)
    from mpi_exercises.bench import placement

    started = placement.two_ranks("exchange_after_work.py")
    if started is None:
        return 2
    comm = started[0]
    results = [one_length(comm, n, a.rounds, a.inner) for n in a.N]
    if comm.Get_rank():
        return 0
    print("median per call (µs, slowest rank); interaction = pair - its parts, as a share of the exchange")
    print(f"{'elements':>9s} {'exchange':>9s} {'combine':>8s} {'ex+comb':>8s} {'ex+spin':>8s} {'ex+copy':>8s}"
          f" {'Allreduce':>9s} | {'+combine':>8s} {'+spin':>7s} {'+copy':>7s}")
    for r in results:
        m = {k: v * 1e6 for k, v in r["median_s"].items()}
        i = r["interaction_of_exchange"]
        print(f"{r['elements']:9d} {m['exchange']:9.1f} {m['combine']:8.1f} {m['exchange+combine']:8.1f}"
              f" {m['exchange+spin']:8.1f} {m['exchange+copy']:8.1f} {m['Allreduce']:9.1f} |"
              f" {i['combine']:+8.0%} {i['spin']:+7.0%} {i['copy']:+7.0%}")
    return placement.two_ranks_end("exchange_after_work.py", started, argv, a.json, rounds=a.rounds, inner=a.inner,
                                   lengths=results)

if __name__ == "__main__":
    sys.exit(run_script(main, "exchange_after_work.py"))
