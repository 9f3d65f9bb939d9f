"""Run a schedule (a :class:`netmodels.algorithms.schedule.Schedule` or an
:class:`~netmodels.algorithms.arrays.ArraySchedule`) on an MPI communicator, in place on a numpy vector.

    ex = Executor(comm, schedule, np.float64, MPI.SUM)   # collective: duplicates comm
    ex.run(buf)                                           # buf: 1-D, schedule.nelems elements
    ex.free()                                             # collective: frees the duplicate

Each step follows the step semantics of :mod:`netmodels.algorithms.schedule`: this rank
posts one receive per incoming transfer and one send per outgoing transfer (the
send blocks are views of ``buf``), waits for all of them, then applies the
incoming blocks in step order, combining with the numpy ufunc of ``op`` in place
(``np.add(a, b, out=a)``) or copying.  ``buf`` is not written before the step's
receives are all complete, except that a copied block that overlaps nothing else
sent or received in the step is received straight into ``buf``.  Tags are the
step index modulo 32768.  Transfers of zero elements are pure synchronisation
messages, so a schedule on an empty vector (``nelems == 0``) is a barrier.

Everything is prepared at construction (per step: peers, block bounds, receive
buffer offsets; one receive buffer as large as the largest step needs).  The MPI
requests are *persistent* (``Send_init``/``Recv_init``), bound to the last ``buf``
passed to :meth:`run`: calling ``run`` again with the same array costs, per step,
one ``Startall``, one ``Waitall`` and the ufunc calls.  Importing this module does
not start MPI.
"""

from __future__ import annotations

import numpy as np

from netmodels.algorithms.arrays import ArraySchedule, as_transfers
from netmodels.algorithms.schedule import Schedule

MAX_TAG = 32768


def ufunc_of(op):
    """The numpy ufunc that computes MPI reduction ``op`` (SUM, PROD, MAX, MIN)."""
    from mpi4py import MPI

    for mpi_op, ufunc in ((MPI.SUM, np.add), (MPI.PROD, np.multiply),
                          (MPI.MAX, np.maximum), (MPI.MIN, np.minimum)):
        if op == mpi_op:
            return ufunc
    raise ValueError(f"op must be one of MPI.SUM, MPI.PROD, MPI.MAX, MPI.MIN; got {op!r}")


def mpi_datatype(dtype):
    """The predefined MPI datatype of a numeric numpy ``dtype`` (ValueError if there is none)."""
    from mpi4py.util.dtlib import from_numpy_dtype

    dtype = np.dtype(dtype)
    if dtype.kind not in "iufc":
        raise ValueError(f"dtype must be a numeric numpy dtype (integer, float or complex), got {dtype}")
    try:
        return from_numpy_dtype(dtype)
    except (ValueError, KeyError, TypeError):
        raise ValueError(f"dtype {dtype} has no MPI datatype in this MPI library") from None


class Executor:
    """Runs ``schedule`` on ``comm`` for vectors of ``dtype``, combining with MPI ``op``.

    ``op`` may be None when the schedule has no combining transfer.  Construction is
    collective (it duplicates ``comm``, so the executor's messages never mix with the
    caller's).
    """

    def __init__(self, comm, schedule: Schedule | ArraySchedule, dtype, op=None):
        if not isinstance(schedule, (Schedule, ArraySchedule)):
            raise ValueError("schedule must be a netmodels.algorithms.schedule.Schedule or an ArraySchedule, "
                             f"got {type(schedule).__name__}")
        schedule = as_transfers(schedule)
        size, rank = comm.Get_size(), comm.Get_rank()
        if schedule.nprocs != size:
            raise ValueError(f"schedule {schedule.name!r} is for {schedule.nprocs} ranks, "
                             f"the communicator has {size}")
        self.schedule = schedule
        self.dtype = np.dtype(dtype)
        self.mpitype = mpi_datatype(self.dtype)
        combines = any(tr.combine for step in schedule.steps for tr in step)
        self.ufunc = None
        if op is not None:
            self.ufunc = ufunc_of(op)
            if self.dtype.kind == "c" and self.ufunc in (np.maximum, np.minimum):
                raise ValueError(f"MPI defines MAX and MIN for real types only, not for {self.dtype}")
        elif combines:
            raise ValueError(f"schedule {schedule.name!r} combines data: op must be given")
        self.rank = rank
        self._plan = self._make_plan(schedule, rank)
        rsize = max((off + cnt for step in self._plan for (_, off, cnt, _, _, _) in step[1]), default=0)
        self._rbuf = np.empty(rsize, dtype=self.dtype)
        self._bound = None      # the array the persistent requests point into
        self._steps = []        # per step: (requests, combines, copies)
        from mpi4py import MPI

        self._startall, self._waitall = MPI.Prequest.Startall, MPI.Request.Waitall
        self.comm = comm.Dup()

    # ---------------------------------------------------------------- planning (no MPI)
    @staticmethod
    def _make_plan(schedule: Schedule, rank: int):
        """Per step: (sends [(start, stop, peer)], recvs [(peer, rbuf offset, count, start, stop, mode)]).

        mode is "combine", "copy" (from the receive buffer) or "direct" (received into buf).
        """
        plan = []
        for step in schedule.steps:
            sends = [(tr.start, tr.stop, tr.dst) for tr in step if tr.src == rank]
            incoming = [tr for tr in step if tr.dst == rank]
            recvs, off = [], 0
            for i, tr in enumerate(incoming):
                others = [(a, b) for a, b, _ in sends] + [(o.start, o.stop) for j, o in enumerate(incoming) if j != i]
                alone = all(b <= tr.start or a >= tr.stop for a, b in others)
                if not tr.combine and alone:
                    recvs.append((tr.src, 0, 0, tr.start, tr.stop, "direct"))
                else:
                    recvs.append((tr.src, off, tr.count, tr.start, tr.stop, "combine" if tr.combine else "copy"))
                    off += tr.count
            plan.append((sends, recvs))
        return plan

    # ---------------------------------------------------------------- binding to a buffer
    def _release_requests(self):
        for reqs, _, _ in self._steps:
            for r in reqs:
                r.Free()
        self._steps, self._bound = [], None

    def _bind(self, buf):
        if not isinstance(buf, np.ndarray) or buf.dtype != self.dtype or buf.ndim != 1 \
                or buf.shape[0] != self.schedule.nelems or not buf.flags.c_contiguous or not buf.flags.writeable:
            raise ValueError(f"buf must be a writeable contiguous 1-D numpy array of {self.dtype} with "
                             f"{self.schedule.nelems} elements, got "
                             f"{getattr(buf, 'dtype', type(buf).__name__)} of shape {getattr(buf, 'shape', '?')}")
        self._release_requests()
        comm, t_mpi, rbuf = self.comm, self.mpitype, self._rbuf
        steps = []
        for t, (sends, recvs) in enumerate(self._plan):
            tag = t % MAX_TAG
            reqs, combines, copies = [], [], []
            for peer, off, cnt, start, stop, mode in recvs:
                if mode == "direct":
                    reqs.append(comm.Recv_init([buf[start:stop], t_mpi], peer, tag))
                else:
                    src = rbuf[off:off + cnt]
                    reqs.append(comm.Recv_init([src, t_mpi], peer, tag))
                    (combines if mode == "combine" else copies).append((buf[start:stop], src))
            for start, stop, peer in sends:
                reqs.append(comm.Send_init([buf[start:stop], t_mpi], peer, tag))
            # apply in step order: combines and copies never touch the same block in our schedules,
            # but keep the order exact anyway when both are present
            if combines and copies:
                order = [(m, buf[s:e], rbuf[o:o + c]) for (_, o, c, s, e, m) in recvs if m != "direct"]
                combines, copies = None, order
            steps.append((reqs, combines, copies))
        self._steps, self._bound = steps, buf

    def _same_memory(self, buf) -> bool:
        b = self._bound
        return (isinstance(buf, np.ndarray) and buf.dtype == b.dtype and buf.shape == b.shape
                and buf.strides == b.strides and buf.flags.writeable
                and buf.__array_interface__["data"][0] == b.__array_interface__["data"][0])

    # ---------------------------------------------------------------- the hot path
    def run(self, buf):
        """Execute the schedule in place on ``buf`` (1-D, ``schedule.nelems`` elements); returns ``buf``."""
        if buf is not self._bound:
            if self._bound is not None and self._same_memory(buf):
                self._bound = buf          # another view of the same memory: requests still valid
            else:
                self._bind(buf)
        startall, waitall, ufunc, copyto = self._startall, self._waitall, self.ufunc, np.copyto
        for reqs, combines, copies in self._steps:
            if not reqs:
                continue
            startall(reqs)
            waitall(reqs)
            if combines is None:                       # mixed step: exact step order
                for mode, dst, src in copies:
                    if mode == "combine":
                        ufunc(dst, src, out=dst)
                    else:
                        copyto(dst, src)
                continue
            for dst, src in combines:
                ufunc(dst, src, out=dst)
            for dst, src in copies:
                copyto(dst, src)
        return buf

    def free(self):
        """Free the requests and the duplicated communicator (collective)."""
        self._release_requests()
        if self.comm is not None:
            self.comm.Free()
            self.comm = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()
