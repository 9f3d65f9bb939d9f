"""Driver run by tests/test_barrier_mpi.py on P ranks, every P in one job (tests/by_size.py): every barrier
algorithm (and its variants) checked with random entry delays by
:func:`mpi_exercises.collectives.barrier.verify`; prints a line per checked algorithm, then the
failures or ``all barriers correct`` on rank 0; exit status 1 if any failed.

    mpiexec -n 4 python -m tests.barrier_verify --verify 12 --max-delay-ms 1
"""

import argparse
import sys

from mpi_exercises.bench.arguments import positive_int
from mpi_exercises.collectives.barrier import choices, verify
from tests.mpirun import sweep_comm


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.barrier_verify",
                                description="check every barrier algorithm with random entry delays")
    p.add_argument("--verify", type=positive_int, default=50, metavar="N",
                   help="barriers per algorithm (default 50)")
    p.add_argument("--max-delay-ms", type=float, default=2.0, help="random delay bound in ms")
    args = p.parse_args(argv)
    comm = sweep_comm()   # COMM_WORLD, or the first P ranks of it under tests/by_size.py
    failures = []
    for name in choices():
        variants = {"combining_tree": [{"fan_in": 2}, {"fan_in": 3}],
                    "nway_dissemination": [{"n": 2}, {"n": 3}],
                    "tournament": [{"release": "tree"}, {"release": "flat"}]}.get(name, [{}])
        for opts in variants:
            failures += verify(comm, name, args.verify, args.max_delay_ms * 1e-3, **opts)
            if comm.Get_rank() == 0:
                print(f"checked {name} {opts or ''} on {comm.Get_size()} ranks", flush=True)
    if comm.Get_rank() == 0:
        print("\n".join(failures) if failures else "all barriers correct", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
