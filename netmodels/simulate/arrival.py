"""The *loggopsim* semantics: a message is handled when it arrives, LogGOPSim's rules.

LogGOPSim (Hoefler, Schneider & Lumsdaine, HPDC 2010) runs a GOAL schedule event by
event in global time order.  This module runs a kit schedule under the same rules, with
the dependencies that :func:`netmodels.simulate.loggopsim.to_goal` writes (a rank's
sends of step t in column order, each after the previous one; its receives of step t
posted after its last send of t, or with its first send (``receives``); its first send
of the next step it takes part in after every receive of t is complete).  Per rank there
is one CPU clock ``nexto`` and two NIC clocks, ``nextgs`` (sends) and ``nextgr``
(receives), all starting at the rank's entry time.  Events are taken in order of time,
ties in order of creation (LogGOPSim's age stamp; operations released together are
stamped sends first, then receives):

* a **send** that is ready at t starts at ``t' = max(t, nexto, nextgs)``: the CPU is busy
  until ``t' + o_s``, the next send may start at ``t' + g + (m - 1) G``, and the message's
  first byte reaches the receiver at ``t' + o_s + L`` (plus the message's noise, if any).
  An eager send is complete when it starts: the rank's next operation is released at once;
* a **receive** is only *posted* (no CPU time): it matches a message already handled, or
  waits for one (matching by sender and step, first come first served);
* a **message** is handled at ``t = max(first byte, nexto, nextgr)``, whether or not its
  receive is posted, before or after the rank's own sends by the time they reach the
  CPU: the CPU is busy until ``t + o_r + (m - 1) G`` (the bytes after the first, then
  the overhead; plus ``combine`` per element), the next message may be handled at
  ``t + g + (m - 1) G``.  Messages that find the CPU or the gap busy wait, oldest first;
* with LogGOPS (:class:`~netmodels.models.logp.LogGOPS`) the CPU also copies ``(m - 1) O``:
  a send keeps it ``o_s + (m - 1) O`` (the first byte still leaves ``o_s + L`` before it
  arrives), a message ``o_r + max((m - 1) O, (m - 1) G)``; and a message of more than ``S``
  bytes is a **rendezvous**: its send is complete only when the receiver matches it (when
  the message is handled with its receive posted, or its receive is posted after), and the
  sender's CPU and send gap are then free no earlier than that instant.  The two ranks the
  match releases are released lower rank first.  A run that ends with a send unmatched (its
  receive is posted only after a send that waits itself) is a deadlock: ValueError.

A rank finishes when its CPU is last free (``nexto``), as LogGOPSim reports it.  The
terms come from the model's :meth:`~netmodels.models.logp.LogP.message_terms` (LogP,
LogGP with a topology's link loads, PLogP), so the LogP family's one cost rule is used.

**Exact time.**  As in LogGOPSim, time is an integer: every term is rounded once to the
nearest :data:`TICK` (one picosecond) and the simulation adds integers, so two events
that happen at the same picosecond are simultaneous whatever unit the parameters were
given in, and ties are broken by age, never by a rounding error of floating point.

**Speed.**  The event loop is compiled with numba (a JIT that installs from wheels on
Linux, macOS and Windows): a 4-ary heap over integer arrays, about 30 bytes per message
and no Python object per event.  The first call in a fresh environment compiles it (a
few seconds; the result is cached beside this file or in numba's user cache).
"""

from __future__ import annotations

import math

import numpy as np

#: the clock of the simulation (s): every term is rounded to a whole number of ticks
TICK = 1e-12
#: how a step's receives are posted: after the rank's last send of the step (what
#: :func:`~netmodels.simulate.loggopsim.to_goal` writes by default, an MPI program that
#: sends and then receives), or together with its first send (receives pre-posted)
RECEIVES = ("after-sends", "with-sends")
#: the largest time (ticks) a simulation may reach: int64 with room for one more term
MAX_TICKS = 2**62

_SEND, _RECV, _MSG, _WAKE = 1, 2, 4, 5    # (LogGOPSim's order of operation types when released together)


def ticks(seconds, signed: bool = False) -> np.ndarray:
    """``seconds`` (scalar or array, s, finite, >= 0 unless ``signed``) as int64 ticks,
    rounded to the nearest."""
    x = np.rint(np.asarray(seconds, dtype=float) / TICK)
    low = -MAX_TICKS if signed else 0
    if x.size and not (np.all(np.isfinite(x)) and x.min() >= low and np.abs(x).max() < MAX_TICKS):
        raise _out_of_range(signed)
    return x.astype(np.int64)


def _out_of_range(signed: bool) -> ValueError:
    """The error of a time that is no tick (:func:`ticks`, :func:`_row_ticks`)."""
    return ValueError(f"times must be finite, {'' if signed else '>= 0 and '}below {MAX_TICKS * TICK:.3g} s in size")


def _row_ticks(row: list[float]) -> list[int]:
    """One row of five terms (s) as ticks, as :func:`ticks` rounds and checks them (the
    third, first byte after the send busy, may be negative), in Python: a step whose terms
    are scalars costs a few microseconds instead of three array conversions."""
    out = []
    for j, x in enumerate(row):
        v = x / TICK
        r = round(v) if math.isfinite(v) else None          # round half to even, as np.rint
        if r is None or r < (-MAX_TICKS if j == 2 else 0) or abs(r) >= MAX_TICKS:
            raise _out_of_range(signed=j == 2)
        out.append(r)
    return out


class Messages:
    """The messages of a schedule in step and column order, collected step by step: per
    message its sender, receiver, step and the row of its terms (ticks) in a table
    of distinct rows (``send busy, send gap, first byte after the send busy, receive hold,
    receive gap, rendezvous 1 or 0``), and its extra latency (ticks) if there is noise."""

    def __init__(self, capacity: int):
        """``capacity``: the most messages :meth:`add` will be given (the schedule's transfers)."""
        self.n = 0
        self.src = np.empty(capacity, np.int32)
        self.dst = np.empty(capacity, np.int32)
        self.step = np.empty(capacity, np.int32)
        self.row = np.empty(capacity, np.int32)
        self.extra = None
        self._rows: list[np.ndarray] = []
        self._nrows = 0
        self._worst = 0          # the largest sum of one message's terms (ticks)

    def add(self, t, step, terms, extra=None, rendezvous=None) -> None:
        """The messages of ``step`` (a :class:`~netmodels.models.step.Step`), of step ``t``
        (one index, or one per message: :func:`~netmodels.models.step.all_messages`), with
        the model's ``terms`` (:meth:`~netmodels.models.logp.LogP.message_terms`, s) and
        their ``extra`` latency (s, one per message, or None); ``rendezvous``: per message
        True where it goes by rendezvous (:meth:`~netmodels.models.logp.LogGOPS.rendezvous`),
        or None (all eager).  The row's sixth term is 1 for a rendezvous message, else 0."""
        n = step.src.size
        if n == 0:
            return
        send_busy, send_gap, transit, recv_wire, recv_busy, recv_gap = terms
        cols = [send_busy, send_gap, transit - recv_wire, recv_busy + recv_wire, recv_gap + recv_wire]
        if rendezvous is not None:
            flag = np.asarray(rendezvous, dtype=bool)
            flag = bool(flag) if flag.ndim == 0 else (bool(flag[0]) if flag.min() == flag.max() else flag)
        else:
            flag = False
        if not isinstance(flag, np.ndarray) and all(not isinstance(c, np.ndarray) or c.min() == c.max()
                                                   for c in cols):   # one row (the usual step)
            row = _row_ticks([float(c.flat[0]) if isinstance(c, np.ndarray) else float(c) for c in cols])
            self._worst = max(self._worst, sum(abs(v) for v in row))
            row.append(int(flag))
            rows, inverse = np.array([row], np.int64), 0
        else:
            rows, inverse = _distinct_rows(np.stack([np.broadcast_to(np.asarray(c, dtype=float), (n,))
                                                     for c in cols], axis=1))
            rows = np.concatenate([ticks(rows[:, :2]), ticks(rows[:, 2:3], signed=True), ticks(rows[:, 3:])],
                                  axis=1)
            self._worst = max(self._worst, int(np.abs(rows).sum(axis=1).max()))
            rows = np.concatenate([rows, np.zeros((rows.shape[0], 1), np.int64)], axis=1)
            if isinstance(flag, np.ndarray) or flag:   # rendezvous rows: kept apart from eager ones
                rows = rows[inverse]
                rows[:, 5] = flag
                inverse = np.arange(n)
        a, b = self.n, self.n + n
        if b > self.src.size:
            raise ValueError(f"more messages than the capacity {self.src.size} given")
        self.src[a:b], self.dst[a:b], self.step[a:b] = step.src, step.dst, t
        self.row[a:b] = inverse + self._nrows
        self._rows.append(rows)
        self._nrows += rows.shape[0]
        if extra is not None:
            if self.extra is None:
                self.extra = np.zeros(self.src.size, np.int64)
            self.extra[a:b] = ticks(extra)
        self.n = b

    def arrays(self):
        """``(src, dst, step, row, table, extra)`` trimmed to the messages held."""
        n = self.n
        table = np.concatenate(self._rows) if self._rows else np.zeros((0, 6), np.int64)
        extra = self.extra[:n] if self.extra is not None else np.zeros(0, np.int64)
        return self.src[:n], self.dst[:n], self.step[:n], self.row[:n], np.ascontiguousarray(table), extra

    def bound(self, entry_ticks: np.ndarray) -> int:
        """An upper bound of any time the simulation can reach (ticks): the latest entry
        plus every message's terms and extra latency one after the other."""
        extra = int(self.extra[:self.n].max(initial=0)) if self.extra is not None else 0
        return int(entry_ticks.max(initial=0)) + self.n * (self._worst + extra)


#: distinct rows of a step looked for one at a time (a step's messages usually come in one to
#: three sizes) before the general method, which sorts
FEW_ROWS = 8


def _distinct_rows(cols: np.ndarray):
    """``(rows, inverse)``: the distinct rows of ``cols`` (n x k) and, per row of
    ``cols``, the index of its distinct row.  Up to :data:`FEW_ROWS` of them, each is
    compared with every row left (a step of two block sizes: 2 comparisons instead of 4
    sorts); beyond, one 1-D unique per varying column, then one over their combined codes
    (much faster than a unique over rows)."""
    inverse = np.empty(cols.shape[0], np.int64)
    left, found = np.arange(cols.shape[0]), []
    while left.size and len(found) < FEW_ROWS:
        same = (cols[left] == cols[left[0]]).all(axis=1)
        if not same[0]:                              # NaN: left to the general method
            break
        inverse[left[same]] = len(found)
        found.append(cols[left[0]])
        left = left[~same]
    if not left.size:
        return np.array(found), inverse
    varying = [j for j in range(cols.shape[1]) if cols[0, j] != cols[:, j].min() or cols[0, j] != cols[:, j].max()]
    code, span = np.zeros(cols.shape[0], np.int64), 1
    for j in varying:
        _, inv = np.unique(cols[:, j], return_inverse=True)
        span *= int(inv.max()) + 1
        if span >= 2**62:           # the codes would overflow: a unique over rows
            rows, inverse = np.unique(cols, axis=0, return_inverse=True)
            return rows, inverse.reshape(-1)
        code = code * (int(inv.max()) + 1) + inv
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    return cols[first], inverse


def run(nprocs: int, messages: Messages, entry: np.ndarray, receives: str = "after-sends",
        rec: np.ndarray | None = None) -> np.ndarray:
    """Finish time (s) of every rank (see the module docstring).  ``messages``: the
    schedule's messages and terms (:class:`Messages`); ``entry``: per rank its entry time
    (s); ``receives``: one of :data:`RECEIVES`; ``rec``: None, or an int64 array the loop fills
    with a trace's times (:mod:`netmodels.simulate._events`, ``REC_ROWS`` x messages, set to -1)."""
    if receives not in RECEIVES:
        raise ValueError(f"receives must be one of {', '.join(RECEIVES)}; got {receives!r}")
    start = ticks(entry)
    if messages.bound(start) >= MAX_TICKS:
        raise ValueError(f"the simulated time could pass {MAX_TICKS * TICK:.3g} s, the range of the "
                         "loggopsim semantics' clock (int64 picoseconds): use semantics 'stepwise'")
    src, dst, step, row, table, extra = messages.arrays()
    from . import _events   # here: numba's import and compilation are paid by this semantics only

    finish = _events.simulate(nprocs, src, dst, step, row, table, extra, start, receives == "with-sends", rec)
    return finish * TICK

