"""Driver run by tests/test_collectives_mpi.py on P ranks, for every P in one job (tests/by_size.py;
alone: ``mpiexec -n P python tests/collectives_sweep.py``).

Compares ``mpi_exercises.allgather`` with ``MPI.Allgather`` (every algorithm, every
valid k, sizes 0, 1, odd, 2-D and 0-d shapes, several dtypes; with and without
``out``, with ``check=False``) and ``mpi_exercises.alltoall`` with ``MPI.Alltoall``
(every algorithm, real nodes and several emulated ppn, levels), exactly; then checks
that bad or differing arguments raise ValueError on every rank.  Prints one line
per failure and ``SWEEP OK <count>`` or ``SWEEP FAILED`` on rank 0; exit status 0
only if everything passed.
"""

from tests.mpirun import finish_sweep, refused_on_every_rank, sweep_comm

import numpy as np
from mpi4py import MPI

from mpi_exercises.collectives.allgather import allgather, choices as allgather_choices
from mpi_exercises.collectives.alltoall import alltoall, choices as alltoall_choices
from netmodels.algorithms import registry

AG_ALGORITHMS, A2A_ALGORITHMS = allgather_choices(), alltoall_choices()

comm = sweep_comm()   # COMM_WORLD, or the first P ranks of it under tests/by_size.py
P, rank = comm.Get_size(), comm.Get_rank()
DTYPES = ["int8", "int32", "uint16", "float32", "float64", "complex128"]
failures, count = [], 0


def data(shape, dtype, seed):
    """Different on every rank, element and call; exact in every dtype (wraps for int8)."""
    v = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) * 3 + 101 * rank + 7 * seed
    return (v % 100 if np.dtype(dtype).itemsize == 1 else v).astype(dtype)


def ks(algorithm):
    if algorithm == "mpi" or not registry.get(algorithm, "allgather").takes("k"):
        return [None]
    if algorithm == "k-shift":
        return [None] + list(range(2, P + 1, 2))
    return [None] + list(range(1, P + 1))


# ------------------------------------------------------------------------- allgather
case = 0
for algorithm in AG_ALGORITHMS:
    for k in ks(algorithm):
        for shape in [(0,), (1,), (3,), (7,), (2, 3), ()]:
            dtype = DTYPES[case % len(DTYPES)]
            case += 1
            x = data(shape, dtype, case)
            keep = x.copy()
            ref = np.empty((P,) + x.shape, dtype=x.dtype)
            comm.Allgather(x, ref)
            y = allgather(comm, x, algorithm, k)
            out = np.zeros_like(ref)
            z = allgather(comm, x, algorithm, k, out=out, check=False)
            ok = (y.shape == ref.shape and y.dtype == ref.dtype and np.array_equal(y, ref)
                  and z is out and np.array_equal(out, ref) and np.array_equal(x, keep))
            count += 1
            if not ok:
                failures.append(f"FAIL rank {rank}: allgather {algorithm} k={k} shape={shape} {dtype}")
# a non-contiguous x and a longer vector
x = np.arange(2002, dtype=np.float64)[::2] + rank
ref = np.empty((P, 1001))
comm.Allgather(np.ascontiguousarray(x), ref)
for algorithm in ("ring", "k-prefix", "mpi"):
    if not np.array_equal(allgather(comm, x, algorithm), ref):
        failures.append(f"FAIL rank {rank}: allgather {algorithm} of a strided vector")
    count += 1

# ------------------------------------------------------------------------- alltoall
ppns = list(dict.fromkeys([None, 1, 2, 3, P, P + 1] + ([(2, 2)] if P >= 4 else []) + ([(1, 2, 2)] if P >= 5 else [])))
case = 0
for algorithm in A2A_ALGORITHMS:
    for ppn in ppns if algorithm != "mpi" else [None]:
        for tail in [(0,), (1,), (5,), (2, 3)]:
            dtype = DTYPES[case % len(DTYPES)]
            case += 1
            x = data((P,) + tail, dtype, case)
            keep = x.copy()
            ref = np.empty_like(x)
            comm.Alltoall(x, ref)
            y = alltoall(comm, x, algorithm, ppn)
            out = np.zeros_like(x)
            z = alltoall(comm, x, algorithm, ppn, out=out, check=False)
            ok = (y.shape == x.shape and y.dtype == x.dtype and np.array_equal(y, ref)
                  and z is out and np.array_equal(out, ref) and np.array_equal(x, keep))
            count += 1
            if not ok:
                failures.append(f"FAIL rank {rank}: alltoall {algorithm} ppn={ppn} tail={tail} {dtype}")
# repeated calls on the same arrays (a time loop: the schedule runs on x and out themselves
# from the second call on), new data in x between calls, rows of 256 KiB (sent from x even in
# a first call), a read-only x, a strided x, and out switched to another array and back
for algorithm in A2A_ALGORITHMS:
    for ppn in ([None, 1, 2] + ([(2, 2)] if P >= 4 else [])) if algorithm != "mpi" else [None]:
        for tail in [(3,), (2048,), (2, 16384)]:
            x = data((P,) + tail, "float64", 5)
            out, other = np.zeros_like(x), np.zeros_like(x)
            good = True
            for i in range(5):
                x += i
                ref = np.empty_like(x)
                comm.Alltoall(x, ref)
                target = other if i == 3 else out
                x.flags.writeable = i not in (1, 2)
                keep = x.copy()
                z = alltoall(comm, x, algorithm, ppn, out=target, check=i % 2 == 0)
                x.flags.writeable = True
                good &= z is target and np.array_equal(target, ref) and np.array_equal(x, keep)
            strided = data((P, 2 * tail[0]) + tail[1:], "float64", 6)[:, ::2]
            ref = np.empty(strided.shape)
            comm.Alltoall(np.ascontiguousarray(strided), ref)
            good &= np.array_equal(alltoall(comm, strided, algorithm, ppn, out=out), ref)
            count += 1
            if not good:
                failures.append(f"FAIL rank {rank}: alltoall {algorithm} ppn={ppn} tail={tail} repeated on one out")
# an artificial delay changes nothing in the result
x = data((P, 4), "float64", 99)
ref = np.empty_like(x)
comm.Alltoall(x, ref)
for algorithm in A2A_ALGORITHMS:
    if not np.array_equal(alltoall(comm, x, algorithm, ppn=2, inter_delay=1e-6), ref):
        failures.append(f"FAIL rank {rank}: alltoall {algorithm} with inter_delay")
    count += 1

# ------------------------------------------------------------------------- bad arguments
x1 = np.ones(3)
xa = np.ones((P, 2))
bad = {
    "allgather unknown algorithm": lambda: allgather(comm, x1, "bogus"),
    "allgather k = 0": lambda: allgather(comm, x1, "k-prefix", 0),
    "allgather k = P + 1": lambda: allgather(comm, x1, "k-prefix-lb", P + 1),
    "allgather k = 1.5": lambda: allgather(comm, x1, "k-prefix", 1.5),
    "allgather odd k of k-shift": lambda: allgather(comm, x1, "k-shift", 1),
    "allgather k of ring": lambda: allgather(comm, x1, "ring", 1),
    "allgather k of mpi": lambda: allgather(comm, x1, "mpi", 1),
    "allgather object dtype": lambda: allgather(comm, np.array([None, 1]), "ring"),
    "allgather out of the wrong shape": lambda: allgather(comm, x1, "ring", out=np.empty(3)),
    "allgather bad k on the last rank only": lambda: allgather(comm, x1, "k-prefix", 0 if rank == P - 1 else 1),
    "alltoall unknown algorithm": lambda: alltoall(comm, xa, "bogus"),
    "alltoall rows != P": lambda: alltoall(comm, np.ones((P + 1, 2)), "direct"),
    "alltoall 0-d x": lambda: alltoall(comm, np.float64(1.0), "direct"),
    "alltoall ppn 0": lambda: alltoall(comm, xa, "multilevel", 0),
    "alltoall ppn text": lambda: alltoall(comm, xa, "multilevel", "4"),
    "alltoall ppn levels with a 0": lambda: alltoall(comm, xa, "multilevel", (2, 0)),
    "alltoall negative delay": lambda: alltoall(comm, xa, "pairwise", inter_delay=-1.0),
    "alltoall out of another dtype": lambda: alltoall(comm, xa, "direct", out=np.empty((P, 2), dtype=np.float32)),
}
if P > 1:
    bad.update({
        "allgather differing k": lambda: allgather(comm, x1, "k-prefix", 1 + (rank == 0)),
        "allgather differing algorithm": lambda: allgather(comm, x1, "ring" if rank else "direct"),
        "allgather differing shape": lambda: allgather(comm, np.ones(3 + (rank == 1)), "ring"),
        "allgather differing dtype": lambda: allgather(comm, x1.astype(np.float32 if rank else np.float64)),
        "alltoall differing ppn": lambda: alltoall(comm, xa, "multilevel", 1 + (rank == 0)),
        "alltoall differing ppn None": lambda: alltoall(comm, xa, "multilevel", None if rank else 1),
        "alltoall differing row length": lambda: alltoall(comm, np.ones((P, 2 + (rank == P - 1))), "direct"),
    })
for name, call in bad.items():
    if not refused_on_every_rank(comm, call):
        failures.append(f"FAIL no ValueError on every rank for: {name}")
    count += 1

# check=False with the same bad argument on every rank: each rank raises by itself
for name, call in {"allgather k = 0": lambda: allgather(comm, x1, "k-prefix", 0, check=False),
                   "alltoall rows != P": lambda: alltoall(comm, np.ones((P + 1, 2)), check=False)}.items():
    try:
        call()
        failures.append(f"FAIL rank {rank}: check=False accepted {name}")
    except ValueError:
        pass
    count += 1

# the communicator still works after the errors
y = allgather(comm, np.array([rank]), "ring")
if not comm.allreduce(np.array_equal(y.ravel(), np.arange(P)), op=MPI.LAND):
    failures.append("FAIL allgather after the error cases")
finish_sweep(comm, failures, f"SWEEP OK {count}", "SWEEP FAILED")
