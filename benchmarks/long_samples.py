"""How long a sample is, at long lengths: a vector of N float64 allreduced on 2 ranks, one call
per sample against ten back-to-back calls per sample (predict's samples), beside a bare exchange
of the same bytes, all interleaved in one run.

    mpiexec -n 2 python benchmarks/long_samples.py --json results/long_samples.json

``predict`` times a collective as ten calls after one barrier (:data:`timing.DEFAULT_INNER`), so
at N = 100000 a sample lasts milliseconds, while its calibration (ping-pong, exchange) times one
message at a time.  On a busy machine a sample of milliseconds is more likely to be cut by the
scheduler than one of a hundred microseconds, and the minimum over a few dozen such samples
keeps that.  Cases, round-robin per sample (:func:`mpi_exercises.bench.timing.time_interleaved`,
the slowest rank's time): ``exchange`` (Sendrecv of 8 N bytes each way), the kit's
``recursive_doubling`` and MPI's ``Allreduce``, each ``x1`` (one call per sample) and ``x10``
(ten, time / 10).  Prints minimum and median per case, the ratios of minima x10 / x1 and
collective / exchange, and a last line with them and the 1-minute load; the JSON (written
atomically, its path checked first) keeps every sample.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from mpi_exercises.bench import arguments  # noqa: E402
from netmodels.commandline import OneLineParser  # noqa: E402
from netmodels.outputs import output_problem, write_json  # noqa: E402


def main(argv=None) -> int:
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-N", type=arguments.positive_int, default=100_000, help="float64 elements (default 100000: 800 KB)")
    p.add_argument("--samples", type=arguments.positive_int, default=100, help="samples per case (default 100)")
    p.add_argument("--json", help="write every sample here")
    args = p.parse_args(argv)
    if args.json and output_problem(args.json):
        p.error(f"--json: {output_problem(args.json)}")
    from mpi4py import MPI

    from mpi_exercises import pages
    from mpi_exercises.bench import placement, timing
    from mpi_exercises.collectives.allreduce import allreduce

    comm = MPI.COMM_WORLD
    if comm.Get_size() != 2:
        if comm.Get_rank() == 0:
            print("long_samples.py: run it on 2 ranks: mpiexec -n 2 python benchmarks/long_samples.py",
                  file=sys.stderr)
        return 2
    over = placement.warn_if_oversubscribed(comm)
    rank, peer = comm.Get_rank(), 1 - comm.Get_rank()
    x = pages.copy(np.random.default_rng(rank).random(args.N))
    out, recv = pages.allocate(x.shape, x.dtype), pages.allocate(x.shape, x.dtype)

    def exchange():
        comm.Sendrecv([x, MPI.DOUBLE], dest=peer, sendtag=5, recvbuf=[recv, MPI.DOUBLE], source=peer, recvtag=5)

    def kit():
        allreduce(comm, x, "recursive_doubling", out=out, check=False)

    def mpi():
        comm.Allreduce([x, MPI.DOUBLE], [out, MPI.DOUBLE])

    def ten(fn):
        def calls():
            for _ in range(10):
                fn()
        return calls

    cases = {"exchange x1": exchange, "recursive_doubling x1": kit, "recursive_doubling x10": ten(kit),
             "mpi x1": mpi, "mpi x10": ten(mpi)}
    samples = timing.time_interleaved(comm, list(cases.values()), args.samples, 3)
    if rank != 0:
        return 0
    times = {k: (row / 10 if k.endswith("x10") else row) for k, row in zip(cases, samples)}
    load = placement.load_average()
    print(f"N = {args.N} float64 ({8 * args.N} B) on 2 ranks, {args.samples} samples per case, interleaved; "
          f"1-minute load {load:.1f}{' (OVERSUBSCRIBED)' if over else ''}")
    print(f"{'case':<24} {'min µs':>9} {'median µs':>10}")
    for k, t in times.items():
        print(f"{k:<24} {t.min() * 1e6:9.1f} {np.median(t) * 1e6:10.1f}")
    mins = {k: float(t.min()) for k, t in times.items()}
    ratios = {"recursive_doubling x10 / x1": mins["recursive_doubling x10"] / mins["recursive_doubling x1"],
              "mpi x10 / x1": mins["mpi x10"] / mins["mpi x1"],
              "recursive_doubling x1 / exchange": mins["recursive_doubling x1"] / mins["exchange x1"],
              "mpi x1 / exchange": mins["mpi x1"] / mins["exchange x1"]}
    if args.json:
        write_json(args.json, {"benchmark": "long_samples", "environment": placement.environment(comm),
                               "oversubscribed": over, "load_average_1min": load, "N": args.N,
                               "samples": args.samples, "timing_method": timing.loop_method(1),
                               "times_s": {k: t.tolist() for k, t in times.items()}, "min_ratios": ratios})
    print("long_samples: ratios of minima " + ", ".join(f"{k} {v:.2f}" for k, v in ratios.items())
          + f"; load {load:.1f}" + ("; OVERSUBSCRIBED" if over else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
