"""Run a schedule (a :class:`netmodels.algorithms.schedule.Schedule` or an
:class:`~netmodels.algorithms.arrays.ArraySchedule`) on an MPI communicator, in place on a numpy vector.

    ex = Executor(comm, schedule, np.float64, MPI.SUM)   # collective: duplicates comm
    ex.run(buf)                                           # buf: 1-D, schedule.nelems elements
    ex.free()                                             # collective: frees the duplicate

Each step follows the step semantics of :mod:`netmodels.algorithms.schedule`: this rank
posts one receive per incoming transfer and one send per outgoing transfer (the
send blocks are views of ``buf``), waits for all of them, then applies the
incoming blocks in step order at their receive offsets (``dst_start``), combining
with the numpy ufunc of ``op`` in place (``np.add(a, b, out=a)``) or copying.
``buf`` is not written before the step's receives are all complete, except that a
copied block that overlaps nothing else sent, read or written in the step is
received straight into ``buf``.  Local copies (``src == dst``) are no messages:
they are applied in step order like received blocks, read from ``buf`` directly
when nothing in the step writes their source, else from a copy taken before the
step's messages start.  Tags are the step index modulo 32768.  Transfers of zero
elements are pure synchronisation messages, so a schedule on an empty vector
(``nelems == 0``) is a barrier.

Everything is prepared at construction: the plan (:func:`mpi_exercises.plan.plan`, pure,
no MPI) says per step what this rank sends and how each incoming block is received and
applied; one receive buffer as large as the largest step needs.  The MPI
requests are *persistent* (``Send_init``/``Recv_init``), bound to the last ``buf``
passed to :meth:`run`, and each block's copy or combine is a call prepared with them:
calling ``run`` again with the same array costs, per step, the start and the wait of its
requests (:func:`posting`) and one prepared call per block applied.  :meth:`Executor.bind` binds them
instead to a working vector made of pieces (the caller's arrays and private memory between
them), so that blocks go from and to the caller's arrays without copies (alltoall's input and
output rows); :meth:`Executor.run_bound` runs on those.  A call can also be made in two
halves, :meth:`Executor.start` (the local work up to this rank's first messages done, and
those started if they are sends only, or at P = 2 packed into the agreement's message) and
:meth:`Executor.finish`, so that a front door's argument agreement overlaps that work and
travels with the first sends; a call given up after ``start`` is cleared by
:meth:`Executor.abandon` on every rank.  Importing this module does not start MPI.

Recording (:class:`Recorder`, :meth:`Executor.run_recorded`): each rank's clock (:data:`CLOCK`,
s) at the start of a call and, per step, when its messages are posted (started),
completed (waited for) and its blocks applied.  :meth:`Executor.run` never records:
a recorded call runs the steps written out with their clock reads (:func:`~mpi_exercises.recording.program`,
generated once per binding), so a call not recorded costs what it did.
"""

from __future__ import annotations

import bisect
import operator
import time
import weakref
from functools import partial

import numpy as np

from netmodels.algorithms.arrays import ArraySchedule, as_transfers
from netmodels.algorithms.schedule import Schedule

from . import pages
from .mpi_types import mpi_datatype, ufunc_of
from .plan import Incoming, Mode, Send, StepPlan, plan, rbuf_size  # noqa: F401  (the executor's plan, re-exported)
from .recording import CLOCK, Recorder, program, slots  # noqa: F401  (re-exported)

MAX_TAG = 32768
#: at P = 2, a first step whose messages carry at most this many bytes each way may travel inside
#: a front door's agreement message (:meth:`Executor.start`'s ``inline``)
INLINE_BYTES = 256
#: a step with at most this many requests starts and waits for each alone: at P = 2 an exchange of
#: one double so costs 1.69 µs against 1.98 µs with ``Startall`` and ``Waitall``; with four requests
#: or more the lists cost as little or less (best of 7 interleaved rounds of 20,000, MPICH, 2 cores)
ONE_BY_ONE = 2


def posting(reqs) -> tuple[tuple, tuple]:
    """``(starts, waits)``: the calls that start ``reqs`` (persistent requests) and those that
    wait for them, each alone up to :data:`ONE_BY_ONE` requests, else one ``Startall`` and one
    ``Waitall`` (both empty for no request)."""
    from mpi4py import MPI

    if not reqs:
        return (), ()
    if len(reqs) <= ONE_BY_ONE:
        return tuple(r.Start for r in reqs), tuple(r.Wait for r in reqs)
    return (partial(MPI.Prequest.Startall, list(reqs)),), (partial(MPI.Request.Waitall, list(reqs)),)


def busy_wait(seconds: float) -> None:
    """Spin for ``seconds`` (a sleep would give the core away and wake up late)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def pins(arrays) -> list:
    """Weak references to the arrays that own the memory of ``arrays`` (numpy arrays; through
    views and memoryviews): numpy refuses to resize an array that has one, even with
    ``refcheck=False``, so memory that persistent requests point into cannot move (or be freed)
    while they do."""
    out = []
    for a in arrays:
        while True:
            b = a.base
            if isinstance(b, memoryview):
                b = b.obj
            if not isinstance(b, np.ndarray):
                break
            a = b
        out.append(weakref.ref(a))
    return out


class Resource:
    """Something holding MPI resources that :meth:`free` releases (collective); ``with`` frees it."""

    def free(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()


class Executor(Resource):
    """Runs ``schedule`` on ``comm`` for vectors of ``dtype``, combining with MPI ``op``.

    ``op`` may be None when the schedule has no combining transfer.  ``send_delay``
    (optional, a P x P array of seconds): an artificial cost per message, e.g. for
    messages between nodes: before a step's messages start, this rank busy-waits the sum
    of ``send_delay[rank, dst]`` over the messages it sends in the step.  Construction is
    collective (it duplicates ``comm``, so the executor's messages never mix with the
    caller's).
    """

    def __init__(self, comm, schedule: Schedule | ArraySchedule, dtype, op=None, send_delay=None):
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
        # one-element combines of floats as Python scalar arithmetic: a ufunc call on a
        # one-element array costs several times more (integers would warn on overflow)
        self._scalar_op = ({np.add: operator.add, np.multiply: operator.mul}.get(self.ufunc)
                           if self.dtype.kind in "fc" else None)
        self._plan = plan(schedule, rank)
        first = next((st for st in self._plan if st.sends or any(not b.mode.local for b in st.incoming)), None)
        #: this rank's first step with messages only sends: then :meth:`start` sends them early.
        #: A rank that receives first has nothing to send early; one whose first step is an
        #: exchange would post its sends and receives in two Startall calls instead of one,
        #: which cost more than the latency saved on one node (barrier.dissemination at P = 2:
        #: 7 % slower through the front door, in the same interleaved run as before the split)
        self.sends_first = first is not None and bool(first.sends) and all(b.mode.local for b in first.incoming)
        #: at P = 2, this rank's first step with messages carries at most :data:`INLINE_BYTES` each
        #: way: it can travel inside a front door's agreement message (:meth:`start`'s ``inline``)
        self.inlines = size == 2 and first is not None and self.dtype.itemsize * max(
            sum(s.stop - s.start for s in first.sends),
            sum(b.count for b in first.incoming if not b.mode.local)) <= INLINE_BYTES
        self._delay = [0.0] * len(self._plan)
        if send_delay is not None:
            send_delay = np.asarray(send_delay, dtype=float)
            if send_delay.shape != (size, size) or not np.all(np.isfinite(send_delay) & (send_delay >= 0)):
                raise ValueError(f"send_delay must be a ({size}, {size}) array of seconds >= 0")
            self._delay = [float(sum(send_delay[rank, s.peer] for s in st.sends)) for st in self._plan]
        self._rbuf = pages.allocate(rbuf_size(self._plan), self.dtype)   # page-aligned, as the timed buffers
        self._bound = None      # the array the persistent requests point into
        self._given = None      # the array last passed to run (a shaped array whose flat view is _bound)
        self._pieces = False    # the requests point into the pieces of bind()
        self._steps = []        # per step: (calls before its messages, its requests, the calls starting
        #                         them and those waiting for them (posting), calls applying its blocks)
        self._first, self._head, self._tail = None, [], []   # split of _steps at the first messages (start)
        self._first_pre, self._first_reqs, self._first_recvs, self._first_sends = (), [], [], []
        self._first_posting = ((), (), (), ())   # starts of all first requests, of its receives, of its sends; waits
        self._sent = False      # start() started the first sends
        self._inlined = False   # start() packed the first sends into an agreement message (inline)
        self._inline, self._packing = None, (None, (), ())   # see _bind_views and _pack_into
        self._recorder = None   # the last recorder run_recorded accepted
        self._program = None    # the recorded steps of the current binding (recording.program), made when first asked
        #: a call begun by :meth:`start` awaits :meth:`finish`
        self.started = False
        #: per entry of _steps: the schedule's step (those in which this rank sends or receives
        #: a block, a message or a local copy; the same whatever the binding)
        self._step_index = [t for t, st in enumerate(self._plan) if st.sends or st.incoming]
        from mpi4py import MPI

        self._address = MPI.Get_address
        self.comm = comm.Dup()

    # ---------------------------------------------------------------- binding to a buffer
    def _release_requests(self):
        for _, reqs, _, _, _ in self._steps:
            for r in reqs:
                r.Free()
        self._steps, self._bound, self._given, self._pieces, self._pins = [], None, None, False, []

    def _bind(self, buf):
        if not isinstance(buf, np.ndarray) or buf.dtype != self.dtype or buf.ndim != 1 \
                or buf.shape[0] != self.schedule.nelems or not buf.flags.c_contiguous or not buf.flags.writeable:
            raise ValueError(f"buf must be a writeable contiguous 1-D numpy array of {self.dtype} with "
                             f"{self.schedule.nelems} elements, got "
                             f"{getattr(buf, 'dtype', type(buf).__name__)} of shape {getattr(buf, 'shape', '?')}")
        self._bind_views(buf.__getitem__)
        self._bound, self._pins = buf, pins([buf])

    def _bind_views(self, view):
        """Create the persistent requests on the working vector that ``view(slice(a, b))``
        gives element ranges of (one array, or the pieces of :meth:`bind`), and the calls that
        stage local copies (before the step's messages) and apply the blocks (after them)."""
        self._release_requests()
        comm, t_mpi, rbuf = self.comm, self.mpitype, self._rbuf
        steps, targets = [], []
        nsteps = len(self._plan)
        for t in self._step_index:
            sends, incoming = self._plan[t]
            reqs, pre, post, into = [], [], [], []
            for b in incoming:
                dst, tag = view(slice(b.start, b.stop)), (t + b.seq * nsteps) % MAX_TAG
                if b.mode is Mode.DIRECT:
                    reqs.append(comm.Recv_init([dst, t_mpi], b.peer, tag))
                    into.append(dst)
                    continue
                if not b.mode.buffered:
                    src = view(slice(b.read, b.read + b.count))
                else:
                    src = rbuf[b.offset:b.offset + b.count]
                    if b.mode.local:
                        pre.append(partial(np.copyto, src, view(slice(b.read, b.read + b.count))))
                    else:
                        reqs.append(comm.Recv_init([src, t_mpi], b.peer, tag))
                        into.append(src)
                post.append(self._applier(b.mode.combines, dst, src))
            if self._delay[t]:
                pre.append(partial(busy_wait, self._delay[t]))
            for s in sends:
                reqs.append(comm.Send_init([view(slice(s.start, s.stop)), t_mpi], s.peer, (t + s.seq * nsteps) % MAX_TAG))
            steps.append((tuple(pre), reqs, *posting(reqs), tuple(post)))
            targets.append((tuple(view(slice(s.start, s.stop)) for s in sends), tuple(into)))
        self._steps, self._program = steps, None
        first = next((i for i, entry in enumerate(steps) if entry[1]), None)
        self._first = first                    # the entry of this rank's first messages (None: it has none)
        self._head = steps[:first] if first is not None else steps
        self._tail = []
        if first is not None:                  # its receives come first in its requests (see above)
            k = sum(1 for b in self._plan[self._step_index[first]].incoming if not b.mode.local)
            self._first_pre, self._first_reqs, starts, waits, post = steps[first]
            self._first_recvs, self._first_sends = self._first_reqs[:k], self._first_reqs[k:]
            self._first_posting = (starts, posting(self._first_recvs)[0], posting(self._first_sends)[0], waits)
            self._tail = [((), (), (), (), post)] + steps[first + 1:]
        self._inline, self._packing = (targets[first] if self.inlines else None), (None, (), ())

    def _applier(self, combine: bool, dst, src):
        """The call that applies block ``src`` to ``dst``: a copy, or a combine with the op."""
        if not combine:
            return partial(np.copyto, dst, src)
        if self._scalar_op is None or dst.shape[0] != 1:
            return partial(self.ufunc, dst, src, dst)
        op = self._scalar_op
        if dst.dtype.char == "d":              # items of a memoryview are Python floats: cheaper than numpy's
            dst, src = memoryview(dst), memoryview(src)

        def combine_one():
            dst[0] = op(dst[0], src[0])
        return combine_one

    def bind(self, pieces) -> None:
        """Bind the persistent requests to a working vector made of ``pieces`` instead of one
        array: ``[(start, array), ...]``, 1-D C-contiguous arrays of the executor's dtype that
        lie end to end from element 0 to ``schedule.nelems`` (e.g. the caller's input rows,
        its output rows, and private memory between them), so that blocks are sent from and
        received into the caller's arrays without copies.  A piece the schedule only reads
        may be read-only.  ValueError if the pieces do not tile the vector, if a block of the
        schedule straddles two pieces, or if a piece the schedule writes is read-only.  Then
        :meth:`run_bound` executes the schedule on them (as often as wanted)."""
        starts, arrays, at = [], [], 0
        for start, a in sorted(pieces, key=lambda sa: (sa[0], getattr(sa[1], "size", 0))):
            if not isinstance(a, np.ndarray) or a.dtype != self.dtype or a.ndim != 1 or not a.flags.c_contiguous:
                raise ValueError(f"pieces must be contiguous 1-D numpy arrays of {self.dtype}")
            if start != at:
                raise ValueError(f"pieces must lie end to end from element 0: one starts at {start}, not {at}")
            at += a.shape[0]
            if a.shape[0]:
                starts.append(start)
                arrays.append(a)
        if at != self.schedule.nelems:
            raise ValueError(f"pieces must cover the {self.schedule.nelems} elements of the working vector, "
                             f"they cover {at}")
        empty = np.empty(0, dtype=self.dtype)

        def piece(a: int, b: int):
            i = bisect.bisect_right(starts, a) - 1
            if i < 0:
                return None, 0
            if b - starts[i] > arrays[i].shape[0]:
                raise ValueError(f"elements {a}:{b} of the working vector straddle two pieces")
            return arrays[i], starts[i]

        for st in self._plan:                   # what the schedule writes must be writeable
            for b in st.incoming:
                arr, _ = piece(b.start, b.stop)
                if b.count and not arr.flags.writeable:
                    raise ValueError(f"elements {b.start}:{b.stop} are written by the schedule: "
                                     "their piece must be writeable")

        def view(sl):
            arr, at = piece(sl.start, sl.stop)
            return empty if arr is None else arr[sl.start - at:sl.stop - at]

        self._bind_views(view)
        self._pieces, self._pins = True, pins(arrays)

    def run_bound(self) -> None:
        """Execute the schedule on the pieces of the last :meth:`bind`."""
        if not self._pieces:
            raise ValueError("bind the executor to its pieces first (Executor.bind)")
        self._execute(self._steps)

    def _same_memory(self, buf) -> bool:
        b = self._bound
        # MPI_Get_address: ten times cheaper than numpy's __array_interface__ or ctypes
        return (isinstance(buf, np.ndarray) and buf.dtype == b.dtype and buf.shape == b.shape
                and buf.strides == b.strides and buf.flags.writeable
                and self._address(buf) == self._address(b))

    # ---------------------------------------------------------------- the hot path
    def run(self, buf):
        """Execute the schedule in place on ``buf`` (``schedule.nelems`` elements, C-contiguous;
        any shape, read as 1-D); returns ``buf``."""
        if buf is not self._bound and buf is not self._given:
            self._rebind(buf)
        self._execute(self._steps)
        return buf

    def _rebind(self, buf):
        """Bind the requests to ``buf`` (unless it is another view of the bound memory)."""
        self._given = buf              # a shaped array: its flat view is what is bound
        if type(buf) is np.ndarray and buf.ndim != 1:
            if not buf.flags.c_contiguous:
                raise ValueError("buf must be C-contiguous")
            flat = buf.reshape(-1)
        else:
            flat = buf
        if self._bound is not None and self._same_memory(flat):
            self._bound = flat         # another view of the same memory: requests still valid
        else:
            self._given = None
            self._bind(flat)
            self._given = buf

    @staticmethod
    def _execute(steps):
        for pre, _, starts, waits, post in steps:
            for f in pre:
                f()
            for f in starts:
                f()
            for f in waits:
                f()
            for f in post:
                f()

    # ---------------------------------------------------------------- a call in two halves
    def start(self, buf=None, inline=None) -> None:
        """The first half of :meth:`run` (of :meth:`run_bound` if ``buf`` is None): bind to
        ``buf``, run this rank's local work up to its first messages and, if they are sends only
        (:attr:`sends_first`), start them; :attr:`started` is then True and :meth:`finish`
        completes the call, or :meth:`abandon` gives it up.  A front door starts a call while its
        argument agreement is in flight, so that this work overlaps the agreement's messages and
        the schedule's first sends travel with them.  Receives are posted by :meth:`finish` only (a message that
        came early waits in MPI's queue): a call given up has no receive to cancel (with
        receives started early and cancelled, a later call hung in 2 of 15 runs of
        tests/test_door_overlap_mpi.py on 3 ranks, MPICH 5.0).

        ``inline`` (P = 2): ``(send, received)``, byte arrays of :data:`INLINE_BYTES` in a front
        door's agreement messages.  If the first step's messages fit (each way), its sends are
        copied into ``send``, and :meth:`finish` takes its blocks from ``received``: one exchange,
        not two (both ranks inline the same step or neither: at P = 2 a step's messages all
        pass between the two)."""
        if buf is None:
            if not self._pieces:
                raise ValueError("bind the executor to its pieces first (Executor.bind), or give buf")
        elif buf is not self._bound and buf is not self._given:
            self._rebind(buf)
        self.started, self._sent = True, False
        if self._first is None:                 # no messages at all: finish runs it whole
            return
        if self._head:
            self._execute(self._head)
        for f in self._first_pre:
            f()
        if inline is not None and self.inlines:
            if self._packing[0] is not inline:
                self._pack_into(inline)
            for d, s in self._packing[1]:
                d[:] = s
            self._inlined = True
        elif self.sends_first:
            for f in self._first_posting[2]:
                f()
            self._sent = True

    def _pack_into(self, inline):
        """``_packing``: ``inline``, the copies of the first step's blocks (``_inline``: its send
        views and receive targets, if they fit) into and out of its areas."""
        send, received = inline
        out, into = self._inline

        def pieces(area, arrays):
            at, views = 0, []
            for a in arrays:
                views.append(memoryview(area[at:at + a.nbytes]))
                at += a.nbytes
            return views
        self._packing = (inline, tuple(zip(pieces(send, out), (memoryview(a).cast("B") for a in out))),
                         tuple(zip((memoryview(a).cast("B") for a in into), pieces(received, into))))

    def finish(self) -> None:
        """The second half of :meth:`run` after :meth:`start`: wait for the first messages,
        apply their blocks, run the remaining steps."""
        if not self.started:
            raise ValueError("finish follows start (Executor.start)")
        self.started = False
        if self._first is None:
            self._execute(self._steps)
            return
        if self._inlined:                       # the first step came with the agreement
            self._inlined = False
            for d, s in self._packing[2]:
                d[:] = s
            self._execute(self._tail)
            return
        starts_all, starts_recvs, _, waits = self._first_posting
        for f in (starts_recvs if self._sent else starts_all):
            f()
        for f in waits:
            f()
        self._execute(self._tail)

    @property
    def sent_step(self):
        """The schedule's step of the sends that :meth:`start` started in the call it began, or
        None (no call begun, or its first messages are not sends only)."""
        return self._step_index[self._first] if self.started and self._sent else None
    def abandon(self, started) -> None:
        """Give up a call that :meth:`start` began on some ranks, leaving no message behind
        (a later call must not receive a stale one).  ``started``: ``(rank, step)`` of every
        rank that started its first sends (:attr:`sent_step`) on this executor.  This rank
        receives every message those ranks sent it (into scratch memory) and waits for its own
        sends.  Called by every rank holding this executor (point to point only: it completes
        once every such rank has called it)."""
        from mpi4py import MPI

        rank, nsteps = self.rank, len(self._plan)
        for peer, t in started:
            if peer != rank:
                for b in self._plan[t].incoming:
                    if b.peer == peer and not b.mode.local:
                        self.comm.Recv([np.empty(b.count, self.dtype), self.mpitype], peer,
                                       (t + b.seq * nsteps) % MAX_TAG)
        if self.started and self._sent:
            MPI.Request.Waitall(self._first_sends)
        self.started = self._sent = self._inlined = False

    # ---------------------------------------------------------------- recording
    def run_recorded(self, buf, recorder: "Recorder"):
        """:meth:`run`, recording this rank's times into ``recorder`` (a :class:`Recorder` of
        this executor; it keeps the last call's); returns ``buf``.  The steps run written out
        with their clock reads (:func:`~mpi_exercises.recording.program`, made once per binding)."""
        if recorder is not self._recorder:
            if not isinstance(recorder, Recorder) or recorder.executor is not self:
                raise ValueError("recorder must be a Recorder of this executor (Recorder(executor))")
            if len(recorder._times) != slots(self):
                recorder._times = [float("nan")] * slots(self)
            self._recorder = recorder
        if buf is not self._bound and buf is not self._given:
            self._rebind(buf)
        if self._program is None:
            self._program = program(self)
        self._program(recorder._times)
        return buf

    def free(self):
        """Free the requests and the duplicated communicator (collective)."""
        self._release_requests()
        if self.comm is not None:
            self.comm.Free()
            self.comm = None
