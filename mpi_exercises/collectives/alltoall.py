"""Personalised all-to-all exchange with any alltoall of the registry.

    from mpi_exercises import alltoall
    y = alltoall(comm, x)                     # x[j] goes to rank j; y[i] came from rank i
    y = alltoall(comm, x, "multilevel", ppn=4)          # emulate nodes of 4 ranks

The algorithms are the registry's alltoalls (:func:`choices`) and ``"mpi"``.  Nodes: by default the real ones, from ``comm.Split_type(MPI.COMM_TYPE_SHARED)`` (the
node ids are gathered so that every rank knows the whole map); ``ppn=c`` emulates
nodes of ``c`` consecutive ranks (the last node may be smaller), ``ppn=(c1, c2, ...)``
a hierarchy of several levels (nodes of c1 ranks, groups of c2 nodes, ...).

``inter_delay`` (seconds, default 0) adds an artificial cost to every message
between nodes: before a step's messages start, the sending rank **busy-waits**
``inter_delay`` for each message it sends to another node in that step (a spin,
not a sleep, so the core is not given away).  It lets a laptop show the crossover
real clusters show, where a message between nodes costs much more than one inside
a node.  With ``algorithm="mpi"`` (the library's Alltoall, whose internal messages
cannot be delayed) the rank busy-waits before the call as long as the direct
exchange's messages to other nodes would cost.

The schedule's working vector holds the input rows, the output rows and the
leaders' staging areas (:func:`netmodels.algorithms.alltoall.layout`).  Where the
schedule never writes the input rows (every alltoall of the registry), those rows are x's
and the output rows are out's (:meth:`Executor.bind <mpi_exercises.executor.Executor.bind>`):
blocks are sent from x and received into out, and the rank's own row is one copy, as in
MPI's Alltoall; the private vector holds only the staging areas.  That binding is made when
the same x and out come again (a time loop) or the rows are long (:data:`BIND_BYTES`);
otherwise the call copies x in, runs the cached executor and copies the rows out.  Argument check,
``check=False`` and the executor cache are those of every front door
(:mod:`mpi_exercises.collectives._door`).  The command line is
:mod:`mpi_exercises.bench.alltoall`.  Importing this module does not start MPI.
"""

from __future__ import annotations

import numpy as np

from netmodels.algorithms import alltoall as _layout
from netmodels._check import positive

from .. import pages
from ..executor import Executor, busy_wait
from ._door import FrontDoor, Plan, algorithm_of, mpi, resolve, schedule_of
from ._door import choices as _choices

_DOOR = FrontDoor("alltoall")
#: rows of at least this many bytes are sent from and received into the caller's arrays even
#: in a call whose arrays are new: binding the requests anew (some 20 µs of Python at P = 2)
#: then costs less than copying every row in and out
BIND_BYTES = 256 * 1024


def choices() -> tuple[str, ...]:
    """Every ``algorithm`` :func:`alltoall` accepts: the registry's alltoalls, then ``"mpi"``."""
    return _choices("alltoall")


def node_ids(comm) -> list[int]:
    """Per rank of ``comm``, its node's id (the smallest rank of ``comm`` on that node); collective."""
    MPI = mpi()
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    leader = node.allreduce(comm.Get_rank(), op=MPI.MIN)
    node.Free()
    return comm.allgather(leader)


def _hierarchy(comm, ppn):
    """``nodes`` for the schedule builder: ``ppn`` as levels, or the real node ids."""
    if ppn is None:
        return node_ids(comm)
    return tuple(ppn) if isinstance(ppn, tuple) else (ppn,)


def _runs(rows) -> list[tuple[int, int, int]]:
    """``rows[i]`` for i = 0..P-1 as runs ``(a, b, rows[a])`` with ``rows[a:b]`` consecutive."""
    rows = [int(r) for r in rows]
    runs, a = [], 0
    for i in range(1, len(rows) + 1):
        if i == len(rows) or rows[i] != rows[i - 1] + 1:
            runs.append((a, i, rows[a]))
            a = i
    return runs


class Exchange:
    """A built alltoall on one communicator: executor, working vector, row places, counts."""

    def __init__(self, comm, algorithm, ppn, nelems_per_pair, dtype, inter_delay):
        p, rank, m = comm.Get_size(), comm.Get_rank(), nelems_per_pair
        entry = algorithm_of("alltoall", algorithm if algorithm != "mpi" else "direct")
        self.schedule, _ = schedule_of(entry, p, m, {"nodes": _hierarchy(comm, ppn)})
        g = np.asarray(self.schedule.meta["group_ids"], dtype=np.int64).reshape(-1, p)
        node = g[0] if g.shape[0] else np.zeros(p, dtype=np.int64)
        between = node[:, None] != node[None, :]
        dst = np.concatenate([st.dst[(st.src == rank) & st.is_message] for st in self.schedule.steps]
                             + [np.empty(0, dtype=np.int64)])
        #: messages this rank sends inside its node and to other nodes
        self.sent = {"inside": int(np.count_nonzero(~between[rank, dst])),
                     "between": int(np.count_nonzero(between[rank, dst]))}
        self.m, self.p, self.executor = m, p, None
        if algorithm == "mpi":                   # only the delay of the direct exchange
            self.delay = inter_delay * self.sent["between"]
            return
        self.delay = 0.0
        self.executor = Executor(comm, self.schedule, dtype, None,
                                 send_delay=inter_delay * between if inter_delay else None)
        self.work = pages.allocate(self.schedule.nelems, dtype)
        send, recv = _layout.layout(self.schedule)
        self.copy_in = self.copy_out = ()
        #: runs of rows (a, b, r): x[a:b] is rows r..r+b-a of the working vector, and out[a:b]
        self.runs_in = _runs(send[rank] // m) if m else []
        self.runs_out = _runs(recv[rank] // m) if m else []
        if m:
            rows = self.work.reshape(-1, m)
            # runs of consecutive rows: one slice copy each (fancy indexing is several times slower)
            self.copy_in = [(slice(a, b), rows[r:r + b - a]) for a, b, r in self.runs_in]
            self.copy_out = [(slice(a, b), rows[r:r + b - a]) for a, b, r in self.runs_out]
        # the schedule run on the caller's rows (no copy in or out) if it never writes the input rows
        written = [(b.start, b.stop) for st in self.executor._plan for b in st.incoming if b.count]
        self.in_place = bool(m) and all(a >= p * m for a, _ in written)
        self._pair = None               # the (x, out) the executor's requests point into
        self._last = None               # the (x, out) of the last call through the copies (kept: ids are reused)
        self._copy_back = False         # start went through the copies: finish copies the rows out
        self.rank = rank

    def _bind(self, x, out):
        """Point the executor's requests into ``x`` (its input rows, only read) and ``out``
        (the rows received), with private memory in the gaps (this rank's own row in the
        output area, the leaders' staging areas)."""
        m, rank = self.m, self.executor.rank
        x2, out2 = x.reshape(self.p, m), out.reshape(self.p, m)
        pieces = [(r * m, x2[a:b].reshape(-1)) for a, b, r in self.runs_in]
        # this rank's own row stays in the input area (layout): the caller copies it
        pieces += [(r * m, out2[a:b].reshape(-1)) for a, b, r in self.runs_out if not a <= rank < b]
        ends = sorted((start, start + v.size) for start, v in pieces)
        for lo, hi in zip([0] + [e for _, e in ends], [s for s, _ in ends] + [self.schedule.nelems]):
            if hi > lo:
                pieces.append((lo, self.work[lo:hi]))
        self.executor.bind(pieces)
        self._pair = (x, out)

    def run(self, x, out):
        """x: (P, ...) rows to send; out: (P, ...) rows received (out C-contiguous, sharing no
        memory with x).

        On the caller's own arrays (the schedule reads x and writes out, this rank's own row
        is one copy) when the schedule allows it, x is C-contiguous and either the rows are
        long (copying them costs more than binding the requests anew) or the same arrays come
        again (a time loop); else through the private working vector: copy in, run, copy out."""
        pair = self._pair
        if pair is not None and pair[0] is x and pair[1] is out:
            out[self.rank] = x[self.rank]
            self.executor.run_bound()
            return
        last = self._last
        if self.in_place and x.flags.c_contiguous and (
                (last is not None and last[0] is x and last[1] is out) or self.m * x.itemsize >= BIND_BYTES):
            self._bind(x, out)
            out[self.rank] = x[self.rank]
            self.executor.run_bound()
            return
        self._last, self._pair = (x, out), None
        x2, out2 = x.reshape(self.p, self.m), out.reshape(self.p, self.m)
        for mine, work in self.copy_in:
            work[...] = x2[mine]
        self.executor.run(self.work)
        for mine, work in self.copy_out:
            out2[mine] = work

    # the front door's call in two halves (FrontDoor.enter's prime): run's paths, the executor
    # started (Executor.start) while the agreement is in flight, then finished
    @property
    def started(self) -> bool:
        return self.executor is not None and self.executor.started

    @property
    def inlines(self) -> bool:
        return self.executor is not None and self.executor.inlines

    @property
    def sent_step(self):
        return None if self.executor is None else self.executor.sent_step

    def abandon(self, started) -> None:
        if self.executor is not None:
            self.executor.abandon(started)

    def start(self, x, out, inline=None) -> None:
        """:meth:`run`'s first half: its copies in, the executor started
        (:meth:`Executor.start <mpi_exercises.executor.Executor.start>`, ``inline`` its own)."""
        pair, last = self._pair, self._last
        self._copy_back = False
        if pair is not None and pair[0] is x and pair[1] is out:
            out[self.rank] = x[self.rank]
            self.executor.start(None, inline)
        elif self.in_place and x.flags.c_contiguous and (
                (last is not None and last[0] is x and last[1] is out) or self.m * x.itemsize >= BIND_BYTES):
            self._bind(x, out)
            out[self.rank] = x[self.rank]
            self.executor.start(None, inline)
        else:
            self._last, self._pair = (x, out), None
            x2 = x.reshape(self.p, self.m)
            for mine, work in self.copy_in:
                work[...] = x2[mine]
            self._copy_back = True
            self.executor.start(self.work, inline)

    def finish(self, out) -> None:
        """:meth:`run`'s second half after :meth:`start`."""
        self.executor.finish()
        if self._copy_back:
            out2 = out.reshape(self.p, self.m)
            for mine, work in self.copy_out:
                out2[mine] = work

    def free(self):
        if self.executor is not None:
            self.executor.free()
            self.executor = None


def check_ppn(ppn, nprocs: int):
    """``ppn`` normalised (None, an int, or a tuple of two or more ints: levels), or ValueError."""
    if ppn is None:
        return None
    levels = tuple(ppn) if isinstance(ppn, (tuple, list, np.ndarray)) else (ppn,)
    _layout.group_ids(nprocs, levels)                  # ValueError unless integers >= 1
    levels = tuple(int(c) for c in levels)
    return levels[0] if len(levels) == 1 else levels


def _validate(algorithm, ppn, dtype, shape, nprocs, inter_delay) -> Plan:
    """The plan of one alltoall call; ValueError if an argument is invalid."""
    entry, _ = resolve("alltoall", algorithm, (), dtype)
    algorithm = "mpi" if entry is None else entry.short
    try:
        ppn = check_ppn(ppn, nprocs)
    except ValueError as exc:
        raise ValueError(f"ppn must be None, an integer >= 1 or a tuple of them (levels); {exc}") from None
    if len(shape) < 1 or shape[0] != nprocs:
        raise ValueError(f"x must have one row per rank: shape ({nprocs}, ...), got {shape}")
    inter_delay = positive("inter_delay", inter_delay, allow_zero=True)
    m = int(np.prod(shape[1:], dtype=np.int64))
    args = dict(algorithm=algorithm, ppn=ppn, dtype=dtype.str, shape=shape, inter_delay=inter_delay)
    if algorithm == "mpi" and not inter_delay:
        return Plan("alltoall", args, None, m)
    return Plan("alltoall", args, lambda comm: Exchange(comm, algorithm, ppn, m, dtype, inter_delay), m)


def alltoall(comm, x, algorithm: str = "multilevel", ppn=None, out=None, check: bool = True, *,
             inter_delay: float = 0.0):
    """Row ``j`` of ``x`` (shape ``(P, ...)``) goes to rank ``j``; returns the rows received,
    row ``i`` from rank ``i``, in an array of x's shape: equal to ``comm.Alltoall``.

    ``algorithm``: one of :func:`choices` (``"mpi"``: the library's Alltoall).
    ``ppn``: None (the real nodes), an integer c (nodes of c consecutive ranks, the last
    possibly smaller) or a tuple (c1, c2, ...) of levels.  ``out``: a C-contiguous array
    of x's shape and dtype (None: a new one).  ``inter_delay``: seconds busy-waited per
    message between nodes (module docstring).  ``check``: True (default) agrees on the
    arguments in one small collective first, so that bad or differing arguments raise
    ValueError on every rank; False skips it and leaves the arguments to the caller (see
    :mod:`mpi_exercises.collectives._door`).  ``x`` is never modified.  Collective.
    """
    args = (algorithm, ppn, inter_delay)
    ex = _DOOR.again(comm, x, out, args, check)     # a time loop: the last call's arguments again
    if ex is None:
        size, x = _DOOR.arguments(comm, x, check)
        _, ex, out = _DOOR.enter(comm, (algorithm, ppn, x.dtype, x.shape, size, inter_delay),
                                 _validate, check, x, out, x.shape, _start, args)
    if ex is not None and ex.started:                # begun while the agreement was in flight
        ex.finish(out)
        return out
    if ex is None or ex.executor is None:
        if ex is not None and ex.delay:
            busy_wait(ex.delay)
        comm.Alltoall(x if x.flags.c_contiguous else np.ascontiguousarray(x), out)
        return out
    ex.run(x, out)
    return out


def exchange_for(comm, algorithm, ppn, nelems_per_pair, dtype=np.float64, inter_delay=0.0) -> Exchange:
    """The cached :class:`Exchange` (schedule, executor, message counts) of these arguments."""
    p = comm.Get_size()
    plan = _DOOR.plan((algorithm, ppn, np.dtype(dtype), (p, nelems_per_pair), p, inter_delay), _validate)
    if plan.build is None:
        return Exchange(comm, algorithm, ppn, nelems_per_pair, np.dtype(dtype), inter_delay)
    return _DOOR.admit(comm, plan, check=True)




def message_summary(comm, algorithm, ppn, n) -> dict:
    """Messages each rank sends inside and between nodes, for ``algorithm`` and for direct (collective)."""
    out = {}
    for name in dict.fromkeys((algorithm, "direct")):
        if name == "mpi":
            continue
        per_rank = comm.allgather(exchange_for(comm, name, ppn, n).sent)
        out[name] = {"per_rank": per_rank, "inside": sum(s["inside"] for s in per_rank),
                     "between": sum(s["between"] for s in per_rank)}
        out[name]["total"] = out[name]["inside"] + out[name]["between"]
    return out


def message_lines(counts: dict, algorithm: str | None = None) -> list[str]:
    """The report's lines on ``counts`` (:func:`message_summary`): per algorithm, and how
    ``algorithm`` compares with direct."""
    lines = [f"messages sent, {name}: {c['total']} ({c['inside']} inside nodes, {c['between']} between nodes)"
             for name, c in counts.items()]
    if algorithm in counts and "direct" in counts and algorithm != "direct":
        lines.append(f"messages: {counts['direct']['total']} -> {counts[algorithm]['total']} "
                     f"(direct -> {algorithm})")
    return lines


def _start(plan, ex, x, out, inline):
    """The call started while the agreement is in flight (FrontDoor.enter's prime)."""
    if ex.executor is not None:
        ex.start(x, out, inline)
