"""What the PRTT to 2 MiB costs predict: one calibration round's PRTT over the sizes it took before
(0 B to 16 KiB, every size ``reps`` samples) and over the ping-pong's sizes (0 B to 2 MiB, samples
of large sizes capped by the byte budget), timed alternately in one run, and one whole calibration
round for scale (what predict runs ``--rounds`` times).

    mpiexec -n 2 python benchmarks/prtt_calibration_time.py --pairs 3 --json results/prtt_time.json

The last line gives the median ratio new / old of the PRTT's time, the whole round's time, the
load and whether the ranks outnumber the cores (oversubscribed).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from mpi_exercises.bench import logp_bench, placement  # noqa: E402
from mpi_exercises.bench.predict import measurement  # noqa: E402
from netmodels.commandline import OneLineParser, run_script  # noqa: E402
from netmodels.outputs import output_problem, write_json  # noqa: E402

OLD_SIZES = [0, 1, 8, 64, 1024, 4096, 16384]          # predict's PRTT before it measured long messages


def main(argv=None) -> int:
    from mpi4py import MPI

    p = OneLineParser(prog="prtt_calibration_time.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", type=int, default=3, help="old/new pairs timed alternately (default 3)")
    p.add_argument("--rounds", type=int, default=measurement.ROUNDS, help="predict's --rounds (default 4)")
    p.add_argument("--repetitions", type=int, default=200, help="predict's --calibration-repetitions (default 200)")
    p.add_argument("--json", metavar="FILE", help="write the times to FILE")
    args = p.parse_args(argv)
    if args.json and output_problem(args.json):
        p.error(f"--json: {output_problem(args.json)}")
    if args.pairs < 1 or args.rounds < 2 or args.rounds % 2 or args.repetitions < 1:
        p.error("--pairs >= 1, --rounds an even number >= 2, --repetitions >= 1")
    comm = MPI.COMM_WORLD
    if comm.Get_size() != 2:
        if comm.Get_rank() == 0:
            print("prtt_calibration_time: run on 2 ranks (mpiexec -n 2)", file=sys.stderr)
        return 2
    oversubscribed = bool(placement.warn_if_oversubscribed(comm))
    rounds = args.rounds
    per = max(1, -(-2 * args.repetitions // rounds))           # predict's samples per calibration round
    share = lambda k: max(1, -(-2 * k // rounds))              # noqa: E731  (measurement.calibration_round's)
    budget = 2 * 64 * 2**20 // rounds

    def timed(fn):
        comm.Barrier()
        t0 = time.perf_counter()
        fn()
        comm.Barrier()
        return time.perf_counter() - t0

    old, new = [], []
    for _ in range(args.pairs):
        old.append(timed(lambda: logp_bench.measure(comm, OLD_SIZES, measurement.LOGP_N, per, share(10), False)))
        new.append(timed(lambda: logp_bench.measure(comm, measurement.PRTT_SIZES, measurement.LOGP_N, per, share(10),
                                                    False, budget_bytes=budget,
                                                    at_least=share(measurement.PRTT_LONG_SAMPLES))))
    whole = timed(lambda: measurement.calibration_round(comm, per, rounds))
    if comm.Get_rank() == 0:
        load = os.getloadavg()[0]
        ratio = float(np.median(np.array(new) / np.array(old)))
        out = {"benchmark": "prtt-calibration-time", "command": "mpiexec -n 2 python benchmarks/prtt_calibration_time.py "
               + " ".join(sys.argv[1:]), "oversubscribed": oversubscribed, "load_average_1min": load,
               "rounds": rounds, "samples_per_round": per, "old_sizes": OLD_SIZES, "new_sizes": measurement.PRTT_SIZES,
               "old_s": old, "new_s": new, "median_ratio": ratio, "calibration_round_s": whole}
        if args.json:
            write_json(args.json, out)
        print(f"PRTT per calibration round: to 16 KiB {np.median(old):.2f} s, to 2 MiB {np.median(new):.2f} s "
              f"(median ratio {ratio:.2f} over {args.pairs} alternating pairs); a whole calibration round "
              f"{whole:.2f} s, x {rounds} rounds; load {load:.2f}"
              + ("; OVERSUBSCRIBED" if oversubscribed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main, "prtt_calibration_time.py"))
