"""What the front doors keep on each communicator (:class:`_State`, found by :func:`state_of`):
the argument agreement's persistent requests and the executor cache, freed with the
communicator.  Importing this module does not start MPI.
"""

from __future__ import annotations

import array
from collections import OrderedDict

import numpy as np

from ..executor import INLINE_BYTES

#: executors cached per communicator (all front doors together); more are freed, least recently used first
CACHE_SIZE = 16

_KEYVAL = None
_MPI = None


def mpi():
    """mpi4py.MPI, imported on first use (importing a front door must not start MPI)."""
    global _MPI
    if _MPI is None:
        from mpi4py import MPI

        _MPI = MPI
    return _MPI


class _State:
    """What the front doors keep on one communicator: the executor cache and, once a
    call checked its arguments, a duplicate communicator with the agreement's persistent
    requests (no argument parsing per call): an ``Allreduce(MAX)`` of two int64 words
    (``Allreduce_init``), or at P = 2 one exchange of them with the other rank
    (``Send_init``/``Recv_init``), which the schedule's first sends join
    (:attr:`Executor.sends_early <mpi_exercises.executor.Executor.sends_early>`).  ``start()``
    and ``wait()`` run them; ``got`` then holds the maxima, or the other rank's words."""

    __slots__ = ("cache", "dup", "requests", "start", "wait", "buf", "got", "inline", "size", "alone",
                 "unchecked", "primed", "mru")

    def __init__(self, size: int):
        self.size = size
        #: a communicator of one rank: nobody to disagree with, the agreement is skipped
        self.alone = size == 1
        #: this rank made its first unchecked call on the communicator (agreed, marked)
        self.unchecked = False
        self.cache = OrderedDict()
        #: the executor of the cache used last, so the last of its order (every look-up, hit or
        #: built, sets it), None if none: a repeated call of it need not move it (FrontDoor.again)
        self.mru = None
        #: the executor whose call this rank started while the agreement was in flight (enter's prime)
        self.primed = None
        self.dup = self.requests = self.start = self.wait = None
        self.buf = array.array("q", (0, 0))
        self.got = self.buf
        #: at P = 2: the areas of the agreement messages (sent, received) that carry a first step
        self.inline = None

    def allreduce_max(self, comm, a: int, b: int):
        """The maxima of ``a`` and of ``b`` over the ranks (collective)."""
        if self.start is None:                  # collective, at the first checked call on comm
            MPI = mpi()
            self.dup = comm.Dup()
            if self.size == 2:                  # two words, then Executor.start's inline area
                peer, sent, got = 1 - comm.Get_rank(), np.zeros(16 + INLINE_BYTES, np.uint8), \
                    np.zeros(16 + INLINE_BYTES, np.uint8)
                self.buf, self.got = memoryview(sent[:16]).cast("q"), memoryview(got[:16]).cast("q")
                self.inline = (sent[16:], got[16:])
                self.requests = [self.dup.Recv_init([got, MPI.BYTE], peer, 0),
                                 self.dup.Send_init([sent, MPI.BYTE], peer, 0)]
                self.start, self.wait = _pair(*self.requests)
            else:
                req = self.dup.Allreduce_init(MPI.IN_PLACE, [self.buf, MPI.INT64_T], op=MPI.MAX)
                self.requests, self.start, self.wait = [req], req.Start, req.Wait
        buf, got = self.buf, self.got
        buf[0], buf[1] = a, b
        self.start()
        self.wait()
        return max(a, got[0]), max(b, got[1])

    def executor(self, comm, plan):
        """The executor of ``plan`` (collective on a miss): cached by the plan's word, with its
        key kept to tell the rare two plans of one word apart (the later one replaces the other)."""
        cache, word = self.cache, plan.word
        hit = cache.get(word)
        if hit is not None and (hit[0] is plan.key or hit[0] == plan.key):
            cache.move_to_end(word)
            self.mru = hit[1]
            return hit[1]
        if hit is not None:                     # another plan with the same word: same on every rank
            del cache[word]
            hit[1].free()
        ex = self.mru = plan.build(comm)
        cache[word] = (plan.key, ex)
        while len(cache) > CACHE_SIZE:          # same calls on every rank: same eviction
            cache.popitem(last=False)[1][1].free()
        return ex

    def free(self):
        self.mru = None
        while self.cache:
            self.cache.popitem(last=False)[1][1].free()
        if self.requests is not None:
            for req in self.requests:
                req.Free()
            self.dup.Free()
            self.requests = self.start = self.wait = self.dup = None


#: the last communicator seen and its state: time loops call on one communicator, and
#: ``Get_attr`` costs more than an identity test.  Safe: the reference keeps that Python
#: object alive (no other object can take its id), and freeing the communicator (the
#: only way its handle changes) runs :func:`_delete_state`, which forgets it.
LAST = (None, None)


def _pair(recv, send):
    """``(start, wait)`` of an exchange of persistent requests: each started and waited for alone
    (two ``Start`` and two ``Wait`` cost less than one ``Startall`` and one ``Waitall`` of the
    pair in mpi4py, about 0.3 µs a call less at P = 1)."""
    start_recv, start_send, wait_send, wait_recv = recv.Start, send.Start, send.Wait, recv.Wait

    def start():
        start_recv()
        start_send()

    def wait():
        wait_send()
        wait_recv()
    return start, wait


#: every front door (so that a freed communicator's calls are forgotten by all of them)
DOORS: list = []


def _delete_state(comm, keyval, state):
    """MPI calls this when ``comm`` is freed: free the cached executors' duplicated
    communicators and persistent requests too (same order on every rank), and forget the
    calls on it that a later call could repeat (:meth:`FrontDoor.again <._door.FrontDoor.again>`)."""
    global LAST
    if LAST[1] is state:
        LAST = (None, None)
    for door in DOORS:
        if door._repeat is not None and door._repeat.state is state:
            door._repeat = None
    state.free()


def state_of(comm) -> _State:
    """The front doors' state stored on ``comm`` as an MPI attribute (created on first use)."""
    global _KEYVAL, LAST
    last_comm, state = LAST
    if comm is last_comm:
        return state
    if _KEYVAL is None:
        _KEYVAL = mpi().Comm.Create_keyval(delete_fn=_delete_state)
    state = comm.Get_attr(_KEYVAL)
    if state is None:
        state = _State(comm.Get_size())
        comm.Set_attr(_KEYVAL, state)
    LAST = (comm, state)
    return state
