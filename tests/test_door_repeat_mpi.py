"""A front door call that repeats the last one (same comm, x, out and arguments) skips the
prologue (``FrontDoor.again``; every front door with ``out``): a valid call, then the same arrays changed in place on one
rank (out made read-only, reshaped, another dtype; x reshaped, another dtype, strided onto out)
must be refused on every rank as the first call would have been, and the next valid call
still give MPI's result."""

from __future__ import annotations

import pytest

from tests.mpirun import run_mpi

pytestmark = pytest.mark.mpi

DRIVER = """
import warnings
import numpy as np
from mpi4py import MPI
from mpi_exercises import allgather, allreduce, alltoall, broadcast
from tests.mpirun import finish_sweep

warnings.simplefilter("ignore", DeprecationWarning)      # setting strides in place
comm = MPI.COMM_WORLD
rank, P = comm.rank, comm.size
failures = []


def out_readonly(x, out):
    out.flags.writeable = False


def out_reshaped(x, out):
    out.shape = out.shape[:-1] + (2, out.shape[-1] // 2)


def out_retyped(x, out):
    out.dtype = np.int64


def x_reshaped(x, out):
    x.shape = x.shape[:-1] + (2, x.shape[-1] // 2)


def x_retyped(x, out):
    x.dtype = np.int64


def x_onto_out(x, out):
    x.strides = (x.strides[0] * 2,) + x.strides[1:]     # x's base holds out after it: x now overlaps out


CHANGES = (out_readonly, out_reshaped, out_retyped, x_reshaped, x_retyped, x_onto_out)


def arrays(name, n=4):
    base = np.arange(2 * n * P, dtype=np.float64) + 10 * rank
    if name == "alltoall":
        return base[:n * P].reshape(P, n), base[n * P:].reshape(P, n)
    x = base[:n]
    out = base[n:2 * n] if name in ("allreduce", "broadcast") else base[n:n + n * P].reshape(P, n)
    return x, out


def expected(name, x):
    if name == "allreduce":
        want = np.empty_like(x)
        comm.Allreduce(np.ascontiguousarray(x), want)
    elif name == "broadcast":
        want = np.ascontiguousarray(x)
        comm.Bcast(want, root=0)
    elif name == "alltoall":
        want = np.empty_like(x)
        comm.Alltoall(np.ascontiguousarray(x), want)
    else:
        want = np.empty((P,) + x.shape, x.dtype)
        comm.Allgather(np.ascontiguousarray(x), want)
    return want


DOORS = {"allreduce": lambda x, out, check: allreduce(comm, x, "ring", out=out, check=check),
         "allgather": lambda x, out, check: allgather(comm, x, "ring", out=out, check=check),
         "broadcast": lambda x, out, check: broadcast(comm, x, "binomial", out=out, check=check),
         "alltoall": lambda x, out, check: alltoall(comm, x, "pairwise", out=out, check=check)}
for name, call in DOORS.items():
    for check in (True, False):
        for change in CHANGES:
            x, out = arrays(name)
            for _ in range(2):                # the second call repeats the first
                got = call(x, out, check)
                if not np.array_equal(got, expected(name, x)):
                    failures.append(f"{name} check={check}: a repeated call gave a wrong result")
            if rank == 0 or not check:        # checked: one rank alone changes; unchecked: both do
                change(x, out)
            try:
                call(x, out, check)
                if rank == 0 or not check:
                    failures.append(f"{name} check={check}: {change.__name__} accepted on a repeated call")
            except ValueError as exc:
                if "out must" not in str(exc) and "invalid arguments on rank 0" not in str(exc):
                    failures.append(f"{name} check={check} {change.__name__}: {exc}")
            x, out = arrays(name)             # fresh arrays: the door still works
            if not np.array_equal(call(x, out, check), expected(name, x)):
                failures.append(f"{name} check={check} after {change.__name__}: a wrong result")
        door = {"allreduce": allreduce, "allgather": allgather, "broadcast": broadcast, "alltoall": alltoall}[name]
        algorithm = {"broadcast": "binomial", "alltoall": "pairwise"}.get(name, "ring")
        c = comm.Dup()                        # the same call again once its communicator is freed
        x, out = arrays(name)
        door(c, x, algorithm, out=out, check=check)
        door(c, x, algorithm, out=out, check=check)
        c.Free()
        try:
            door(c, x, algorithm, out=out, check=check)
            failures.append(f"{name} check={check}: a repeated call on a freed communicator accepted")
        except ValueError as exc:
            if "comm" not in str(exc):
                failures.append(f"{name} check={check} freed: {exc}")
finish_sweep(comm, failures, "repeated calls: arrays changed in place refused on every rank", "FAILED")
"""


def test_arrays_changed_in_place_are_refused_on_a_repeated_call():
    res = run_mpi(2, ["-c", DRIVER], timeout=60, sleep_while_waiting=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "refused on every rank" in res.stdout


MOVED = """
import numpy as np
from mpi4py import MPI
from mpi_exercises import allgather, allreduce, alltoall, broadcast
from tests.mpirun import finish_sweep

comm = MPI.COMM_WORLD
rank, P = comm.rank, comm.size
failures = []
n = 4
DOORS = {   # name: (call, x's shape, out's shape, MPI's result)
    "allreduce": (lambda x, out, check: allreduce(comm, x, "ring", out=out, check=check), (n,), (n,),
                  lambda x: comm.allreduce(x)),
    "allgather": (lambda x, out, check: allgather(comm, x, "ring", out=out, check=check), (n,), (P, n),
                  lambda x: np.array(comm.allgather(x))),
    "broadcast": (lambda x, out, check: broadcast(comm, x, "binomial", out=out, check=check), (n,), (n,),
                  lambda x: comm.bcast(x)),
    "alltoall": (lambda x, out, check: alltoall(comm, x, "pairwise", out=out, check=check), (P, n), (P, n),
                 lambda x: np.array(comm.alltoall(list(x)))),
}
for name, (call, xshape, oshape, want) in DOORS.items():
    for check in (True, False):
        x = np.arange(np.prod(xshape), dtype=np.float64).reshape(xshape) + 100 * rank
        out = np.zeros(oshape)
        for _ in range(2):                    # the second call repeats the first (alltoall: bound to x, out)
            call(x, out, check)
        for which, a in (("out", out), ("x", x))[:2 if name == "alltoall" else 1]:   # alltoall sends from x
            shape = a.shape
            try:                              # the memory the executor points into cannot move
                a.resize((1 << 16,), refcheck=False)
                failures.append(f"{name} check={check}: {which} resized (moved) under the executor")
                a.resize(shape, refcheck=False)
            except ValueError:
                pass
        if not np.array_equal(call(x, out, check), want(x)):
            failures.append(f"{name} check={check}: a wrong result after the resize was refused")
finish_sweep(comm, failures, "repeated calls: the memory of x and out cannot move under the executor", "FAILED")
"""


def test_the_arrays_an_executor_points_into_cannot_be_resized_away():
    """``out.resize(..., refcheck=False)`` would move out's memory while the executor's persistent
    requests still point into the old one (later calls wrote into freed memory: glibc aborted with
    "malloc(): unaligned tcache chunk detected"); numpy refuses it while the executor pins it."""
    res = run_mpi(2, ["-c", MOVED], timeout=60, sleep_while_waiting=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "cannot move under the executor" in res.stdout


ORDER = """
import numpy as np
from mpi4py import MPI
from mpi_exercises import allreduce
from mpi_exercises.collectives import allreduce as door
from mpi_exercises.collectives._door import CACHE_SIZE
from tests.mpirun import finish_sweep

comm = MPI.COMM_WORLD
rank = comm.rank
x, mine = np.arange(4.0) + rank, np.empty(4)


def call_a():       # rank 0 repeats its call (same out), rank 1 passes a new out each time
    out = mine if rank == 0 else np.empty(4)
    return allreduce(comm, x, "ring", out=out)


call_a()
door.executor_for(comm, "ring", 8, np.float64)            # another executor, used last
call_a()
door.executor_for(comm, "ring", 8, np.float64)            # looked up again: the last used
call_a()                                                   # rank 0 repeats, rank 1 looks up
for n in range(100, 100 + CACHE_SIZE - 1):                 # the least recently used is evicted
    door.executor_for(comm, "ring", n, np.float64)
want = np.empty(4)
comm.Allreduce(x, want)
got = allreduce(comm, x, "ring", out=np.empty(4))          # the same on every rank, or a hang
finish_sweep(comm, [] if np.array_equal(got, want) else ["a wrong result"],
             "the executor caches stay the same on every rank", "FAILED")
"""


def test_a_repeated_call_keeps_the_cache_order_of_the_others():
    """A repeated call skips the executor look-up only where its executor is the one used last;
    a rank that repeats and a rank that looks up must leave their caches in the same order, or
    they evict different executors and a later call builds on one rank only (a hang)."""
    res = run_mpi(2, ["-c", ORDER], timeout=60, sleep_while_waiting=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "the same on every rank" in res.stdout
