"""Driver run under ``mpiexec -n P`` by tests/test_allreduce_mpi.py (one job per P).

Sweeps every algorithm x N x dtype x op (and a few blocks and meshes), compares
``mpi_exercises.allreduce`` with ``MPI.Allreduce`` (exactly for integers, to a
tolerance for floats), then checks that bad arguments raise ValueError on every
rank.  Prints one line per failure and ``SWEEP OK <count>`` or ``SWEEP FAILED``
on rank 0; the exit status is 0 only if everything passed.
"""

import sys

import numpy as np
from mpi4py import MPI

from mpi_exercises.allreduce import ALGORITHMS, allreduce, matches, test_vector

comm = MPI.COMM_WORLD
P, rank = comm.Get_size(), comm.Get_rank()
OPS = {"sum": MPI.SUM, "prod": MPI.PROD, "max": MPI.MAX, "min": MPI.MIN}
DTYPES = ["int32", "int64", "uint8", "float32", "float64", "complex128"]
SIZES = sorted({0, 1, max(P - 1, 0), P, P + 1, 1001})
failures, count = [], 0


def variants(algorithm, n):
    """(block, mesh) pairs worth running for an algorithm at this P and N.

    Explicit blocks leave a short last block (1001 = 10 * 97 + 31); they stay large
    enough for the pipelines to have a dozen steps, not hundreds, because
    oversubscribed ranks make every step cost a context switch.
    """
    out = [(None, None)]
    blk = 97 if n > 100 else 2
    if algorithm in ("snake", "fence"):
        out.append((blk, None))
    if algorithm in ("tree", "snake", "fence") and P > 1:
        out.append((blk, (1, P)))                     # a single column
    return out


def dtypes_for(j, k, opname):
    """Dtypes for the j-th size and k-th op: over the sizes, each dtype meets each op twice
    (once for P >= 5, where every collective costs context switches)."""
    out = []
    for i in ((j + k, j + k + 3) if P <= 4 else (j + k,)):   # fewer when oversubscribed 3:1
        d = DTYPES[i % len(DTYPES)]
        out.append("float64" if d.startswith("complex") and opname in ("max", "min") else d)
    return out


for algorithm in ALGORITHMS:
    for j, n in enumerate(SIZES):
        for block, mesh in variants(algorithm, n):
            for k, (opname, op) in enumerate(OPS.items()):
                for dtype in dtypes_for(j, k, opname):
                    x = test_vector(n, dtype, rank, opname)
                    keep = x.copy()
                    ref = np.empty_like(x)
                    comm.Allreduce(x, ref, op=op)
                    y = allreduce(comm, x, algorithm, block, op, mesh)
                    ok = matches(y, ref) and np.array_equal(x, keep) and y.dtype == x.dtype
                    out = np.zeros_like(x)
                    z = allreduce(comm, x, algorithm, block, op, mesh, out=out)
                    ok = ok and z is out and matches(out, ref)
                    count += 1
                    if not ok:
                        failures.append(f"FAIL rank {rank}: {algorithm} block={block} mesh={mesh} N={n} "
                                        f"{dtype} {opname}")
failures = [f for per_rank in comm.allgather(failures) for f in per_rank]

# Bad arguments: a ValueError on every rank, nobody left waiting.
x = np.ones(5)
bad_cases = {
    "unknown algorithm": dict(algorithm="bogus"),
    "block 0": dict(algorithm="snake", block=0),
    "block -3 on rank 0 only": dict(algorithm="fence", block=-3 if rank == 0 else None),
    "mesh size not P": dict(algorithm="tree", mesh=(P + 1, 1)),
    "MAX on complex": dict(algorithm="ring", op=MPI.MAX, x=np.ones(3, dtype=complex)),
}
if P > 1:
    bad_cases["different N"] = dict(algorithm="snake", x=np.ones(5 + (rank == P - 1)))
    bad_cases["different algorithm"] = dict(algorithm="ring" if rank == 0 else "tree")
for name, kwargs in bad_cases.items():
    kwargs = dict(kwargs)
    xx = kwargs.pop("x", x)
    try:
        allreduce(comm, xx, **kwargs)
        raised = False
    except ValueError:
        raised = True
    if not comm.allreduce(raised, op=MPI.LAND):
        failures.append(f"FAIL no ValueError on every rank for: {name}")
    count += 1

# The communicator still works after all those errors.
y = allreduce(comm, np.full(4, rank, dtype=np.int64), "snake")
if not comm.allreduce(np.array_equal(y, np.full(4, P * (P - 1) // 2)), op=MPI.LAND):
    failures.append("FAIL allreduce after the error cases")
if rank == 0:
    print("\n".join(failures) if failures else f"SWEEP OK {count}", flush=True)
    if failures:
        print("SWEEP FAILED", flush=True)
sys.exit(1 if failures else 0)
