"""LogGOPSim's rules in plain Python: the readable statement of the *loggopsim* semantics.

:func:`run` is the event loop of :mod:`netmodels.simulate.arrival` written to be read: one
heap of events, one object per rank and per message, no arrays.  The compiled loop
(:mod:`netmodels.simulate._events`) follows the same rules with integer arrays, and the tests
check that both give the same times on random schedules, ties included.  Small schedules only
(a Python object per event: about 10^5 events a second).  :func:`simulate` runs a schedule on
a model of the LogP family, its terms made as the engine makes them.
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter, deque
from dataclasses import dataclass, field

import numpy as np

from .._check import positive_int
from ..algorithms.arrays import as_arrays
from ..models.step import all_messages
from .arrival import RECEIVES, TICK, Messages, ticks
from .engine import ELEM_BYTES

SEND, RECV, MSG, WAKE = "send", "recv", "message", "wake"


@dataclass
class Message:
    """One message and its terms (ticks: integer picoseconds), as the model prices it."""

    src: int
    dst: int
    step: int
    send_busy: int      # the sender's CPU: o_s + (m-1) O
    send_gap: int       # the sender's NIC before its next send: g + (m-1) G
    first_byte: int     # from the end of send_busy to the first byte at dst: L - (m-1) O
    recv_busy: int      # dst's CPU from the first byte: o_r + max((m-1)G, (m-1)O) (+ combine)
    recv_gap: int       # dst's NIC before its next message: g + (m-1) G
    rendezvous: bool    # complete when matched (more than S bytes), not when started
    sent: int = -1      # filled by run: when the send started, when dst took the first
    taken: int = -1     # byte, and when the receive was posted if that was later
    late_post: int = -1


@dataclass
class Rank:
    """One rank's clocks (ticks) and where it is in its schedule."""

    cpu: int                    # when the CPU is next free (LogGOPSim's nexto)
    nic_send: int               # when the next send may start (nextgs)
    nic_recv: int               # when the next message may be taken (nextgr)
    sends: deque = field(default_factory=deque)     # to send, in step and column order
    recvs: deque = field(default_factory=deque)     # to receive, in the same order
    phase: int | None = None    # the step it is in: its sends of the step, then its receives
    nrecv: int = 0              # the phase's receives
    matched: int = 0            # of them matched
    pending: bool = False       # a send released, not complete
    posted: bool = False        # the phase's receives posted
    waiting: list = field(default_factory=list)     # (age, message) found the CPU or NIC busy
    token: tuple | None = None  # (time, age): when the oldest waiting message is next tried


def run(nprocs: int, messages: list[Message], entry: list[int],
        receives: str = "after-sends") -> list[int]:
    """Per rank, the tick its CPU is last free.  ``entry``: per rank its start (ticks);
    ``receives``: a phase's receives posted after its last send or with its first."""
    if receives not in RECEIVES or len(entry) != nprocs:
        raise ValueError(f"receives must be one of {RECEIVES} and entry hold {nprocs} ticks")
    loop = Loop([Rank(t, t, t) for t in entry], messages, receives)
    for i, m in enumerate(messages):
        loop.ranks[m.src].sends.append(i)
        loop.ranks[m.dst].recvs.append(i)
    for h in range(nprocs):
        loop.release(h)
    while loop.heap:
        now, age, kind, x = heapq.heappop(loop.heap)
        if kind == SEND:
            go = loop.send(now, age, x)
        elif kind == RECV:
            go = loop.post(now, x)
        else:                       # a message arrives, or the token of the oldest waiting one
            go = loop.take(now, age, kind, x)
        for h in sorted(set(go)):               # the ranks it lets go on: lower rank first
            loop.release(h)
    if any(r.sends or r.recvs for r in loop.ranks):
        raise ValueError("deadlock: a rendezvous send waits for a receive posted only after "
                         "a send that cannot complete")
    return [r.cpu for r in loop.ranks]


@dataclass
class Loop:
    """A run: its ranks, its messages and the heap of events (time, age, kind, message or
    rank); ``balance``: per (step, src, dst), the messages taken less the receives posted.
    Each event's method returns the ranks it lets go on."""

    ranks: list[Rank]
    messages: list[Message]
    receives: str
    heap: list = field(default_factory=list)
    ages: itertools.count = field(default_factory=itertools.count)
    balance: Counter = field(default_factory=Counter)

    def release(self, h):
        """Rank h goes on as far as it can: its next send, its receives, its next phase."""
        r, messages = self.ranks[h], self.messages
        while True:
            if r.phase is None:
                steps = [messages[q[0]].step for q in (r.sends, r.recvs) if q]
                if not steps:
                    return
                r.phase = min(steps)
                r.nrecv = sum(1 for i in r.recvs if messages[i].step == r.phase)
            sending = bool(r.sends) and messages[r.sends[0]].step == r.phase
            if sending and not r.pending:       # one at a time, when the CPU and NIC allow
                when = max(r.cpu, r.nic_send)
                heapq.heappush(self.heap, (when, next(self.ages), SEND, r.sends[0]))
                r.pending = True
            if not r.posted and r.nrecv and (self.receives == "with-sends" or not sending):
                r.posted = True                 # posting takes no time; the ages order them
                for i in list(r.recvs)[:r.nrecv]:
                    heapq.heappush(self.heap, (r.cpu, next(self.ages), RECV, i))
            if sending or r.matched < r.nrecv:
                return
            for _ in range(r.nrecv):            # the phase is complete
                r.recvs.popleft()
            r.phase, r.matched, r.posted, r.pending = None, 0, False, False

    def complete(self, h, now):
        """Rank h's rendezvous send is matched: it is done, its CPU and NIC free from now."""
        r = self.ranks[h]
        r.cpu, r.nic_send = max(r.cpu, now), max(r.nic_send, now)
        r.sends.popleft()
        r.pending = False
        return h

    def send(self, now, age, x):
        """Message x's send, when its CPU and NIC are free (else tried again then)."""
        m = self.messages[x]
        r = self.ranks[m.src]
        if max(r.cpu, r.nic_send) > now:        # the CPU or the NIC is busy: try again then
            heapq.heappush(self.heap, (max(r.cpu, r.nic_send), age, SEND, x))
            return []
        m.sent = now
        r.cpu, r.nic_send = now + m.send_busy, now + m.send_gap
        heapq.heappush(self.heap, (now + m.send_busy + m.first_byte, next(self.ages), MSG, x))
        if m.rendezvous:
            return []
        r.sends.popleft()                       # eager: complete when it starts
        r.pending = False
        return [m.src]

    def post(self, now, x):
        """Message x's receive is posted: matched if the message was taken already."""
        m = self.messages[x]
        key = (m.step, m.src, m.dst)
        go = []
        if self.balance[key] > 0:               # its message was taken already
            m.late_post = now
            self.ranks[m.dst].matched += 1
            go.append(m.dst)
            if m.rendezvous:
                go.append(self.complete(m.src, now))
        self.balance[key] -= 1
        return go

    def take(self, now, age, kind, x):
        """Message x arrives (MSG), or rank x's oldest waiting message is tried (WAKE):
        taken if the CPU and the receive NIC are free, else it waits, oldest first."""
        if kind == WAKE:
            if self.ranks[x].token != (now, age):
                return []                       # superseded by a later token
            x = self.ranks[x].waiting[0][1]
        m = self.messages[x]
        h, r = m.dst, self.ranks[m.dst]
        busy = max(r.cpu, r.nic_recv)
        if busy > now:                          # the message waits, oldest first
            if kind == MSG:
                heapq.heappush(r.waiting, (age, x))
                if r.token is not None and r.token[1] < age:
                    return []                   # an older message waits already
            r.token = (busy, age)
            heapq.heappush(self.heap, (busy, age, WAKE, h))
            return []
        if kind == WAKE:
            heapq.heappop(r.waiting)
            r.token = None
        m.taken = now
        r.cpu, r.nic_recv = now + m.recv_busy, now + m.recv_gap
        if r.waiting:                           # the others wait for the CPU and NIC again
            r.token = (max(r.cpu, r.nic_recv), r.waiting[0][0])
            heapq.heappush(self.heap, (*r.token, WAKE, h))
        key = (m.step, m.src, m.dst)
        go = []
        if self.balance[key] < 0:               # its receive was posted: matched
            r.matched += 1
            go.append(h)
            if m.rendezvous:
                go.append(self.complete(m.src, now))
        self.balance[key] += 1
        return go


def messages_of(src, dst, step, row, table, extra=None) -> list[Message]:
    """The messages of the compiled loop's arrays (:meth:`.arrival.Messages.arrays`)."""
    out = []
    columns = (np.asarray(a).tolist() for a in (src, dst, step, row))
    for i, (s, d, t, k) in enumerate(zip(*columns)):
        busy, gap, first, hold, rgap, rv = np.asarray(table[k]).tolist()
        first += int(extra[i]) if extra is not None and len(extra) else 0
        out.append(Message(s, d, t, busy, gap, first, hold, rgap, bool(rv)))
    return out


def simulate(schedule, model, *, receives: str = "after-sends", elem_bytes: int = ELEM_BYTES,
             entry=None):
    """``(finish, messages)``: per rank its finishing time (s) when ``schedule`` runs on
    ``model`` (the LogP family) under LogGOPSim's rules, and the messages with their times
    (ticks); the terms as :func:`netmodels.simulate.simulate` makes them.  ``receives``: one
    of :data:`~.arrival.RECEIVES`; ``elem_bytes``: bytes per element (>= 1); ``entry``: per
    rank its start (s, >= 0; default 0)."""
    a = as_arrays(schedule)
    if receives not in RECEIVES:
        raise ValueError(f"receives must be one of {', '.join(RECEIVES)}; got {receives!r}")
    elem_bytes = positive_int("elem_bytes", elem_bytes)
    if not getattr(getattr(model, "step_rule", None) and model.step_rule(a), "clocked", False):
        raise ValueError("model must be of the LogP family (LogP, LogGP, LogGOPS, PLogP), "
                         f"got {type(model).__name__}")
    try:
        start = ticks(np.zeros(a.nprocs) if entry is None else entry)
    except ValueError as e:
        raise ValueError(f"entry: {e}") from None
    if start.shape != (a.nprocs,):
        raise ValueError(f"entry must hold {a.nprocs} times (s), one per rank; got shape {start.shape}")
    t, every = all_messages(a, elem_bytes, None)
    held = Messages(t.size)
    if every is not None:
        rendezvous = model.rendezvous(every) if hasattr(model, "rendezvous") else None
        held.add(t, every, model.message_terms(every), None, rendezvous)
    msgs = messages_of(*held.arrays())
    return [x * TICK for x in run(a.nprocs, msgs, start.tolist(), receives)], msgs
