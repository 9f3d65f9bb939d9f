"""Run a driver once per number of ranks, in one mpiexec job:

    mpiexec -n 8 python -m tests.by_size 1,2,3,4,5,6,8 tests/collectives_sweep.py
    mpiexec -n 8 python -m tests.by_size 1,2,...,8 -m tests.barrier_verify --verify 12

runs the driver, as ``python`` would run it, on a communicator of the world's first P ranks
(:func:`tests.mpirun.sweep_comm`) for each P in turn, while the other ranks wait, sleeping
between polls.  Rank 0 prints ``--- P ranks`` before each run and ``exit N`` (the driver's
status) after it (:func:`tests.mpirun.sections_by_size` splits the output); the job's status is
1 if any run's was not 0.  One job instead of one per P: the ranks start once (a rank's
start-up, Python, numpy and MPI, costs about 0.25 CPU-s).
"""

import runpy
import sys
import time

from mpi4py import MPI

from tests.mpirun import _SWEEP_COMMS


def wait_sleeping(comm) -> None:
    """A barrier over ``comm`` whose ranks sleep between polls (MPI's own barrier polls a core)."""
    request = comm.Ibarrier()
    while not request.Test():
        time.sleep(0.002)


def run_driver(argv: list[str]) -> int:
    """Run ``python ARGV`` (a script, or ``-m module``) in this process: its exit status."""
    saved = sys.argv
    try:
        if argv[0] == "-m":
            sys.argv = [argv[1], *argv[2:]]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(argv)
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    finally:
        sys.argv = saved
    return 0


def main() -> int:
    sizes, driver = [int(p) for p in sys.argv[1].split(",")], sys.argv[2:]
    world = MPI.COMM_WORLD
    if max(sizes) > world.Get_size():
        raise SystemExit(f"tests.by_size: {max(sizes)} ranks asked, the job has {world.Get_size()}")
    failed = False
    for size in sizes:
        if world.Get_rank() == 0:
            print(f"--- {size} ranks", flush=True)
        comm = world.Split(0 if world.Get_rank() < size else MPI.UNDEFINED, world.Get_rank())
        if comm != MPI.COMM_NULL:
            _SWEEP_COMMS.append(comm)
            try:
                status = run_driver(driver)
            finally:
                _SWEEP_COMMS.pop()
            failed |= status != 0
            if world.Get_rank() == 0:
                print(f"exit {status}", flush=True)
            comm.Free()
        wait_sleeping(world)
    return 1 if world.allreduce(failed, op=MPI.LOR) else 0


if __name__ == "__main__":
    sys.exit(main())
