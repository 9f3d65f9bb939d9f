"""Driver run by tests/test_allreduce_mpi.py on P ranks, for every P in one job (tests/by_size.py;
alone: ``mpiexec -n P python tests/allreduce_sweep.py``).

Sweeps every algorithm x N x dtype x op (and a few blocks and meshes), compares
``mpi_exercises.allreduce`` with ``MPI.Allreduce`` (exactly for integers, to a
tolerance for floats; into ``out=`` for one op per N, each op over the Ns), then checks
that bad arguments raise ValueError on every rank.  Prints one line per failure and ``SWEEP OK <count>`` or ``SWEEP FAILED``
on rank 0; the exit status is 0 only if everything passed.
"""

from tests.mpirun import finish_sweep, refused_on_every_rank, sweep_comm

import numpy as np
from mpi4py import MPI

from mpi_exercises.bench.allreduce import matches, test_vector
from mpi_exercises.collectives.allreduce import allreduce, choices

comm = sweep_comm()   # COMM_WORLD, or the first P ranks of it under tests/by_size.py
P, rank = comm.Get_size(), comm.Get_rank()
OPS = {"sum": MPI.SUM, "prod": MPI.PROD, "max": MPI.MAX, "min": MPI.MIN}
DTYPES = ["int32", "int64", "uint8", "float32", "float64", "complex128"]
SIZES = sorted({0, 1, max(P - 1, 0), P, P + 1, 1001})
failures, count = [], 0


def refusals(calls: dict, failure: str) -> int:
    """Call each of ``calls`` (name -> call) expecting a ValueError; a call that returns adds
    ``failure`` (formatted with its name) to the failures.  Returns the number of calls."""
    for name, call in calls.items():
        try:
            call()
            failures.append(f"FAIL rank {rank}: " + failure.format(name))
        except ValueError:
            pass
    return len(calls)


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


for algorithm in choices():
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
                    if k == j % len(OPS):    # into out=: one op per size, each op over the sizes
                        out = np.zeros_like(x)
                        z = allreduce(comm, x, algorithm, block, op, mesh, out=out)
                        ok = ok and z is out and matches(out, ref)
                    count += 1
                    if not ok:
                        failures.append(f"FAIL rank {rank}: {algorithm} block={block} mesh={mesh} N={n} "
                                        f"{dtype} {opname}")

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
    if not refused_on_every_rank(comm, lambda: allreduce(comm, xx, **kwargs)):
        failures.append(f"FAIL no ValueError on every rank for: {name}")
    count += 1

# The messages say what was wrong, on every rank: the failing rank its own error, the
# others which rank failed; differing arguments name the argument.
if P > 1:
    cases = ((dict(block=0 if rank == P - 1 else None),
              "block must be an integer >= 1" if rank == P - 1 else f"invalid arguments on rank {P - 1}: block"),
             (dict(x=np.ones(5 + (rank == 0))), "nelems = 6 on rank 0, 5 on rank"))
    for kwargs, expect in cases:
        try:
            allreduce(comm, kwargs.pop("x", x), "snake", **kwargs)
            msg = ""
        except ValueError as exc:
            msg = str(exc)
        if expect not in msg:
            failures.append(f"FAIL rank {rank}: message {msg!r} lacks {expect!r}")
        count += 1

# check=False: the same results without the agreement; bad arguments seen by every rank
# still raise (locally, on every rank here, so nobody waits).
for algorithm in ("recursive_doubling", "snake", "ring", "mpi"):
    for n in (0, 1, P + 1, 1001):
        xx = test_vector(n, "float64", rank, "sum")
        ref = np.empty_like(xx)
        comm.Allreduce(xx, ref, op=MPI.SUM)
        out = np.empty_like(xx)
        for _ in range(2):                              # the second call hits the cache
            y = allreduce(comm, xx, algorithm, out=out, check=False)
        if not (y is out and matches(out, ref)):
            failures.append(f"FAIL rank {rank}: check=False {algorithm} N={n}")
        count += 1
# shaped arrays, and outs that alternate (the executor rebinds or reuses its requests)
xs = test_vector(15, "float64", rank, "sum").reshape(3, 5)
ref = np.empty_like(xs)
comm.Allreduce(xs, ref, op=MPI.SUM)
outs = [np.empty_like(xs), np.empty_like(xs)]
for i in range(5):
    for algorithm in ("ring", "snake", "mpi"):
        y = allreduce(comm, xs, algorithm, out=outs[i % 2 if i < 3 else 0], check=i % 2 == 0)
        if y.shape != (3, 5) or not matches(y, ref):
            failures.append(f"FAIL rank {rank}: shaped allreduce {algorithm} call {i}")
        count += 1

for name, kwargs in {"unknown algorithm": dict(algorithm="bogus"), "block 0": dict(algorithm="snake", block=0),
                     "out of another shape": dict(out=np.empty(4))}.items():
    try:
        allreduce(comm, x, check=False, **kwargs)
        failures.append(f"FAIL rank {rank}: check=False did not raise for {name}")
    except ValueError:
        pass
    count += 1

# The executor itself: pure synchronisation schedules on an empty vector (barriers), a
# swap that needs the step semantics (send the old block, then overwrite it), bad input.
from netmodels.algorithms.schedule import Schedule, Transfer  # noqa: E402

from mpi_exercises.executor import Executor  # noqa: E402

rounds, d = [], 1
while d < P:                                            # dissemination barrier: zero-count messages
    rounds.append(tuple(Transfer(r, (r + d) % P, 0, 0) for r in range(P)))
    d *= 2
with Executor(comm, Schedule("dissemination", P, 0, rounds), np.float64, None) as ex:
    for _ in range(3):
        ex.run(np.empty(0))
count += 1
if P >= 2:
    swap = Schedule("swap", P, 3, [(Transfer(0, 1, 0, 2), Transfer(1, 0, 1, 2),
                                    Transfer(0, 1, 2, 1, True), Transfer(1, 0, 2, 1, True))])
    buf = np.array([10.0 * rank, 10.0 * rank + 1, rank + 1.0])
    with Executor(comm, swap, np.float64, MPI.SUM) as ex:
        ex.run(buf)
        ex.run(buf[:])                                  # another view of the same memory
    # reference: the step semantics by hand (blocks sent as they were when the step began)
    a0, a1 = np.array([0.0, 1.0, 1.0]), np.array([10.0, 11.0, 2.0])
    for _ in range(2):
        # rank 0: copy [1:3] from rank 1, then combine [2] (step order); rank 1: copy [0:2], combine [2]
        a0, a1 = (np.array([a0[0], a1[1], a1[2] + a1[2]]), np.array([a0[0], a0[1], a1[2] + a0[2]]))
    mine = {0: a0, 1: a1}.get(rank, np.array([10.0 * rank, 10.0 * rank + 1, rank + 1.0]))
    if not np.array_equal(buf, mine):
        failures.append(f"FAIL rank {rank}: executor swap gave {buf}, expected {mine}")
    count += 1
    # Executor.bind: the same swap on a working vector given as pieces (one here; alltoall's
    # pieces are checked in tests/collectives_sweep.py), and pieces it must refuse
    with Executor(comm, swap, np.float64, MPI.SUM) as ex:
        whole = np.array([10.0 * rank, 10.0 * rank + 1, rank + 1.0])
        ro = whole.copy()
        ro.flags.writeable = False
        refused = {"run_bound before bind": lambda: ex.run_bound(),
                   "a gap": lambda: ex.bind([(0, whole[0:1]), (2, whole[2:3])]),
                   "too short": lambda: ex.bind([(0, whole[0:2])]),
                   "another dtype": lambda: ex.bind([(0, whole.astype(np.float32))]),
                   "a list": lambda: ex.bind([(0, [1.0, 2.0, 3.0])])}
        if rank < 2:                                   # ranks 0 and 1 write and send across [0:3)
            refused["a block across two pieces"] = lambda: ex.bind([(0, whole[0:1]), (1, whole[1:3])])
            refused["a read-only piece written"] = lambda: ex.bind([(0, ro)])
        count += refusals(refused, "Executor.bind accepted {}")
        for _ in range(2):
            ex.bind([(0, np.empty(0)), (0, whole)])     # an empty piece anywhere is allowed
            ex.run_bound()
        if not np.array_equal(whole, mine):
            failures.append(f"FAIL rank {rank}: executor swap on pieces gave {whole}, expected {mine}")
        count += 1
summing = Schedule("sum", P, 1, [(Transfer(0, 1, 0, 1, True),)] if P >= 2 else [])
bad_executors = {"nprocs mismatch": lambda: Executor(comm, Schedule("x", P + 1, 0, []), np.float64),
                 "bool dtype": lambda: Executor(comm, Schedule("z", P, 0, []), bool)}
if P >= 2:
    bad_executors["combine without op"] = lambda: Executor(comm, summing, np.float64, None)
count += refusals(bad_executors, "no ValueError for executor {}")

# The communicator still works after all those errors.
y = allreduce(comm, np.full(4, rank, dtype=np.int64), "snake")
if not comm.allreduce(np.array_equal(y, np.full(4, P * (P - 1) // 2)), op=MPI.LAND):
    failures.append("FAIL allreduce after the error cases")
finish_sweep(comm, failures, f"SWEEP OK {count}", "SWEEP FAILED")
