"""Driver run by tests/test_registry_mpi.py on P ranks, for every P in one job (tests/by_size.py;
alone: ``mpiexec -n P python tests/registry_sweep.py``).

Walks :mod:`netmodels.algorithms.registry` and runs every entry, with its default
options, through the front door of its collective against MPI's own: allreduce against
``MPI.Allreduce`` (int64 SUM, exact), broadcast against ``MPI.Bcast`` (from rank 0 and
from the last rank where the algorithm takes a root), allgather against
``MPI.Allgather``, alltoall against ``MPI.Alltoall`` (real nodes and nodes of 2 ranks),
for vector lengths 0, 1, P - 1, P + 1 and 2P + 3 (not divisible by P), with and without
the argument check; barriers against the barrier property, with timestamps on the one
host's monotonic clock: after random entry delays, no rank leaves before the last one
entered.  Prints one line per failure and ``REGISTRY OK <entries> <cases>`` or
``REGISTRY FAILED`` on rank 0; exit status 0 only if everything passed.
"""

import time

import numpy as np
from mpi4py import MPI

from mpi_exercises import allgather, allreduce, alltoall, barrier, broadcast
from netmodels.algorithms import registry
from tests.mpirun import finish_sweep, sweep_comm

comm = sweep_comm()   # COMM_WORLD, or the first P ranks of it under tests/by_size.py
P, rank = comm.Get_size(), comm.Get_rank()
SIZES = sorted({0, 1, max(P - 1, 0), P + 1, 2 * P + 3})
failures, count = [], 0


def data(shape, seed):
    """Different on every rank, element and call; exact in int64."""
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.int64) * 7 + 1000 * rank + 13 * seed).reshape(shape)


def check(ok, what):
    global count
    count += 1
    if not ok:
        failures.append(f"FAIL rank {rank} P={P}: {what}")


def run_allreduce(name, n, check_args):
    x = data((n,), n)
    ref = np.empty_like(x)
    comm.Allreduce(x, ref, op=MPI.SUM)
    y = allreduce(comm, x, name, check=check_args)
    return np.array_equal(y, ref)


def run_broadcast(name, n, check_args):
    roots = [0, P - 1] if "root" in registry.get(name, "broadcast").options else [0]
    ok = True
    for root in dict.fromkeys(roots):
        x = data((n,), n)
        ref = x.copy()
        comm.Bcast(ref, root=root)
        y = broadcast(comm, x, name, root=root, check=check_args)
        ok = ok and np.array_equal(y, ref)
    return ok


def run_allgather(name, n, check_args):
    x = data((n,), n)
    ref = np.empty((P, n), dtype=x.dtype)
    comm.Allgather(x, ref)
    return np.array_equal(allgather(comm, x, name, check=check_args), ref)


def run_alltoall(name, n, check_args):
    ok = True
    for ppn in (None, 2):
        x = data((P, n), n)
        ref = np.empty_like(x)
        comm.Alltoall(x, ref)
        ok = ok and np.array_equal(alltoall(comm, x, name, ppn, check=check_args), ref)
    return ok


def run_barrier(name, check_args, rounds=4, max_delay=1e-3):
    rng = np.random.default_rng([P, rank, len(name)])
    stamps = np.empty((rounds, 2))
    for i in range(rounds):
        time.sleep(rng.uniform(0, max_delay) + max_delay * (i % P == rank))
        stamps[i, 0] = time.clock_gettime(time.CLOCK_MONOTONIC)
        barrier(comm, name, check=check_args)
        stamps[i, 1] = time.clock_gettime(time.CLOCK_MONOTONIC)
    everyone = np.array(comm.allgather(stamps))             # (P, rounds, 2)
    return bool(np.all(everyone[:, :, 0].max(axis=0) <= everyone[:, :, 1].min(axis=0)))


RUN = {"allreduce": run_allreduce, "broadcast": run_broadcast, "allgather": run_allgather,
       "alltoall": run_alltoall}
entries = registry.algorithms()
node = comm.Split_type(MPI.COMM_TYPE_SHARED)
one_host = node.Get_size() == P
node.Free()
for entry in entries:
    for check_args in (True, False):                         # False: the second call hits the cache
        try:
            if entry.collective == "barrier":
                if one_host:
                    check(run_barrier(entry.short, check_args), f"{entry.name} check={check_args}: a rank left early")
                continue
            for n in SIZES:
                check(RUN[entry.collective](entry.short, n, check_args), f"{entry.name} N={n} check={check_args}")
        except Exception as exc:                             # say which entry, then stop: ranks may disagree
            failures.append(f"FAIL rank {rank} P={P}: {entry.name} raised {type(exc).__name__}: {exc}")
            break
finish_sweep(comm, failures, f"REGISTRY OK {len(entries)} {count}", "REGISTRY FAILED")
