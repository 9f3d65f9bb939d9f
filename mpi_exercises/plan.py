"""What one rank does in each step of a schedule, for :class:`~mpi_exercises.executor.Executor`:
:func:`plan` (pure, no MPI: testable alone) says per step which blocks this rank sends
(:class:`Send`) and how each incoming block is received and applied (:class:`Incoming`, its
:class:`Mode`); :func:`rbuf_size` how large a receive buffer the plan needs (elements).
"""

from __future__ import annotations

import enum
from typing import NamedTuple

from netmodels.algorithms.arrays import as_transfers


class Mode(enum.Enum):
    """How an incoming block reaches ``buf``."""

    DIRECT = "direct"                  #: a copied message received straight into buf
    COPY = "copy"                      #: a message into the receive buffer, copied after the step's messages
    COMBINE = "combine"                #: a message into the receive buffer, combined after the step's messages
    LOCAL = "local"                    #: a local copy read from buf when applied (nothing of the step writes its source)
    LOCAL_COMBINE = "local-combine"    #: the same, combined
    STAGED = "staged"                  #: a local copy whose source the step also writes: saved before the messages
    STAGED_COMBINE = "staged-combine"  #: the same, combined

    @property
    def combines(self) -> bool:
        return self in (Mode.COMBINE, Mode.LOCAL_COMBINE, Mode.STAGED_COMBINE)

    @property
    def local(self) -> bool:
        """A local copy (no message)."""
        return self in (Mode.LOCAL, Mode.LOCAL_COMBINE, Mode.STAGED, Mode.STAGED_COMBINE)

    @property
    def buffered(self) -> bool:
        """The block goes through the receive buffer (at :attr:`Incoming.offset`)."""
        return self in (Mode.COPY, Mode.COMBINE, Mode.STAGED, Mode.STAGED_COMBINE)


class Send(NamedTuple):
    """A message this rank sends in a step: ``buf[start:stop]`` to ``peer``; ``seq`` numbers
    the messages to the same peer in the step (0, 1, ...), so that they get different tags."""

    start: int
    stop: int
    peer: int
    seq: int


class Incoming(NamedTuple):
    """A block this rank receives (from ``peer``, or from itself: a local copy) in a step,
    written to ``buf[start:stop]``; ``offset`` in the receive buffer (buffered modes); ``read``:
    where the block starts at its source; ``seq`` as in :class:`Send`."""

    peer: int
    offset: int
    count: int
    start: int
    stop: int
    mode: Mode
    read: int
    seq: int


class StepPlan(NamedTuple):
    """One step of :func:`plan`: this rank's sends and incoming blocks, both in step order."""

    sends: tuple
    incoming: tuple


def plan(schedule, rank: int) -> tuple[StepPlan, ...]:
    """What ``rank`` does in every step of ``schedule`` (a Schedule or an ArraySchedule): pure,
    no MPI.  A copied message is received straight into buf (:attr:`Mode.DIRECT`) when its
    target overlaps nothing else the step sends, reads or writes; a local copy is read from buf
    when it is applied (:attr:`Mode.LOCAL`) unless the step writes its source (:attr:`Mode.STAGED`)."""
    out = []
    for step in as_transfers(schedule).steps:
        nsent, nrecv = {}, {}      # several messages between one pair in one step: matched in order
        sends = []
        for tr in step:
            if tr.src == rank and tr.dst != rank:
                seq = nsent[tr.dst] = nsent.get(tr.dst, -1) + 1
                sends.append(Send(tr.start, tr.stop, tr.dst, seq))
        incoming = [tr for tr in step if tr.dst == rank and (tr.src != rank or tr.count)]
        writes = [(tr.recv_start, tr.recv_stop) for tr in incoming]
        reads = [(s.start, s.stop) for s in sends] + [(tr.start, tr.stop) for tr in incoming if tr.src == rank]
        recvs, off = [], 0
        for i, tr in enumerate(incoming):
            w0, w1 = tr.recv_start, tr.recv_stop
            others = [w for j, w in enumerate(writes) if j != i]
            if tr.src == rank:                                   # local copy
                if all(b <= tr.start or a >= tr.stop for a, b in others):
                    mode = Mode.LOCAL_COMBINE if tr.combine else Mode.LOCAL
                    recvs.append(Incoming(rank, 0, tr.count, w0, w1, mode, tr.start, 0))
                else:
                    mode = Mode.STAGED_COMBINE if tr.combine else Mode.STAGED
                    recvs.append(Incoming(rank, off, tr.count, w0, w1, mode, tr.start, 0))
                    off += tr.count
                continue
            seq = nrecv[tr.src] = nrecv.get(tr.src, -1) + 1
            if not tr.combine and all(b <= w0 or a >= w1 for a, b in others + reads):
                recvs.append(Incoming(tr.src, 0, tr.count, w0, w1, Mode.DIRECT, tr.start, seq))
            else:
                recvs.append(Incoming(tr.src, off, tr.count, w0, w1, Mode.COMBINE if tr.combine else Mode.COPY,
                                      tr.start, seq))
                off += tr.count
        out.append(StepPlan(tuple(sends), tuple(recvs)))
    return tuple(out)


def rbuf_size(steps) -> int:
    """Elements of the receive buffer a :func:`plan` needs (the largest step's buffered blocks)."""
    return max((b.offset + b.count for st in steps for b in st.incoming if b.mode.buffered), default=0)
