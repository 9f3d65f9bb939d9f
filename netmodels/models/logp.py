"""The LogP family's models: LogP (Culler et al. 1993), LogGP (Alexandrov et al. 1995),
LogGOPS (Hoefler et al. 2010), PLogP (Kielmann et al. 2000), and their one step rule.

Units are SI: seconds, bytes.  LogP's parameters:

* ``L``: latency, the time a small message spends in the network (upper bound);
* ``o``: overhead, the time a processor is busy sending (``o_s``) or receiving (``o_r``)
  one message; the slides assume ``o_s = o_r = o``;
* ``g``: gap, the minimum interval between consecutive sends (or receives) of one
  processor, ``1/g`` its message rate;
* ``P``: the number of processors.

Each class carries its step rule (:meth:`LogP.step_rule`, :class:`LogPClock`), the one the
simulator (:func:`netmodels.simulate.simulate`) asks, under *stepwise* semantics unless
told otherwise (``semantics``).  The family's other roles have rooms of their own: barrier
times in closed form (:mod:`.logp_barriers`), the lower bound on any barrier
(:mod:`.logp_barrier_bound`), the fits (:mod:`.logp_fit`); :mod:`.logp_family` hands all their
names on in one namespace.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .._check import positive, positive_int
from .step import Step


@dataclass(frozen=True)
class LogP:
    """LogP parameters in seconds: latency ``L``, overhead ``o``, gap ``g``; ``P`` processors.

    ``o`` is the send overhead and, unless ``o_r`` is given, also the receive overhead
    (the slides' assumption ``o_s = o_r``).  ``L``, ``o`` and ``g`` may be 0 (LogP allows
    o = 0, as LogGOPSim does).
    ``combine`` (s per element, >= 0; default 0): the receiver's CPU time per element of
    a combining message (e.g. a measured c2), after the receive overhead.
    """

    L: float
    o: float
    g: float
    P: int
    o_r: float | None = None
    name: str = ""
    source: str = ""
    combine: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "L", positive("L", self.L, allow_zero=True))
        object.__setattr__(self, "o", positive("o", self.o, allow_zero=True))
        object.__setattr__(self, "g", positive("g", self.g, allow_zero=True))
        object.__setattr__(self, "P", positive_int("P", self.P))
        o_r = self.o if self.o_r is None else positive("o_r", self.o_r, allow_zero=True)
        object.__setattr__(self, "o_r", o_r)
        object.__setattr__(self, "combine", positive("combine", self.combine, allow_zero=True))

    # the slides' base equations -------------------------------------------------
    @property
    def o_s(self) -> float:
        """Send overhead (s)."""
        return self.o

    @property
    def f_s(self) -> float:
        """Time between two sends of one processor: ``max(o_s, g)`` (s)."""
        return max(self.o_s, self.g)

    @property
    def f_r(self) -> float:
        """Time between two receives of one processor: ``max(o_r, g)`` (s)."""
        return max(self.o_r, self.g)

    @property
    def t_r(self) -> float:
        """One round of send-one/receive-one: ``max(f_r, o_s + L + o_r) = max(g, o_s + L + o_r)`` (s)."""
        return max(self.f_r, self.o_s + self.L + self.o_r)

    @property
    def one_way(self) -> float:
        """Time from the start of a send to the end of its receive: ``o_s + L + o_r`` (s)."""
        return self.o_s + self.L + self.o_r

    def with_P(self, P: int) -> "LogP":
        """The same machine with ``P`` processors."""
        return replace(self, P=P)

    # the step rule ----------------------------------------------------------------
    G = 0.0   #: LogP has no per-byte term (LogGP's field overrides it)

    #: the timing semantics the simulator uses for this model unless told otherwise: each rank
    #: on its own clock, message by message
    semantics = "stepwise"

    def step_rule(self, schedule) -> "LogPClock":
        """Per-rank clocks under the rules of :class:`LogPClock` (with ``G``: LogGP)."""
        return LogPClock(self, schedule.nprocs)

    def rendezvous(self, step: Step):
        """Which messages of ``step`` go by rendezvous: None, every one is eager (LogGOPS has ``S``)."""
        return None

    def message_terms(self, step: Step):
        """Per message of ``step`` (scalars where all are equal): ``(send_busy, send_gap,
        transit, recv_wire, recv_busy, recv_gap)`` in s, as :class:`LogPClock` uses them
        (``transit``: from the end of the send overhead to the arrival of the last byte;
        ``recv_wire``: the time the message's bytes after the first occupy the receiver)."""
        wire = None
        if self.G:
            nbytes = step.nbytes
            if step.load is None and nbytes.size and nbytes.min() == nbytes.max():   # one size: a scalar
                wire = max(float(nbytes[0]) - 1.0, 0.0) * self.G
            else:
                wire = np.maximum(nbytes - 1.0, 0.0) * self.G
                if step.load is not None:
                    wire *= step.load
        recv_busy = self.o_r
        if self.combine:
            recv_busy = self.o_r + np.where(step.combine, step.count, 0) * self.combine
        if wire is None:
            return self.o_s, self.g, self.L, 0.0, recv_busy, self.g
        return self.o_s, self.g + wire, wire + self.L, wire, recv_busy, self.g


@dataclass(frozen=True)
class LogGP(LogP):
    """LogGP: LogP plus ``G``, the time per byte of a long message (s/B).

    A message of ``m`` bytes keeps the sender busy ``o_s``, leaves the network interface
    over ``(m - 1) G`` after its first byte, and costs ``o_s + (m - 1) G + L + o_r`` end to
    end (Alexandrov et al. 1995); ``m = 0`` is treated like ``m = 1``.  This ``(m - 1) G``
    convention is the course's everywhere (:meth:`wire_time`, :func:`.logp_fit.prtt_model`,
    :func:`.logp_fit.fit_prtt`): a one-byte message is LogP's small message.
    """

    G: float = 0.0

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "G", positive("G", self.G, allow_zero=True))

    def wire_time(self, nbytes) -> float | np.ndarray:
        """``(m - 1) G``: the time the bytes after the first add to a message of ``nbytes`` (s)."""
        t = wire_bytes(nbytes) * self.G
        return float(t) if t.ndim == 0 else t

    def message_time(self, nbytes) -> float | np.ndarray:
        """End-to-end time ``o_s + L + o_r + (m - 1) G`` of one message of ``nbytes`` (s)."""
        t = self.o_s + self.L + self.o_r + wire_bytes(nbytes) * self.G
        return float(t) if t.ndim == 0 else t


@dataclass(frozen=True)
class LogGOPS(LogGP):
    """LogGOPS (Hoefler, Schneider & Lumsdaine, "LogGOPSim - Simulating Large-Scale
    Applications in the LogGOPS Model", LSAP workshop at HPDC 2010): LogGP plus ``O``, the
    CPU's overhead per byte (s/B, the copies), and ``S``, the size (B) above which a message
    goes by rendezvous instead of eagerly.

    The rules are LogGOPSim's (``LogGOPSim.cpp``, options ``-O`` and ``-S``), with
    ``w_O = (m - 1) O`` and ``w_G = (m - 1) G`` for ``m`` bytes:

    * a send keeps the sender's CPU ``o_s + w_O``, its NIC ``g + w_G``; the first byte
      arrives ``o_s + L`` after the send started (the copy goes on while the bytes flow);
    * the receiver's CPU is busy ``o_r + max(w_O, w_G)`` from the first byte it takes, its
      NIC ``g + w_G``;
    * a message of more than ``S`` bytes (``max(m, 1) > S``) is a rendezvous: the send is
      complete only when the receiver matches it (its receive posted and the message
      taken, whichever is later), and the sender's CPU and NIC are then free no earlier than
      that instant.  LogGOPSim charges no L or o for the request or the clear-to-send:
      the handshake costs the sender the wait for the receiver, nothing more.

    ``S = inf`` (the default) sends everything eagerly and ``O = 0`` is LogGP.
    """

    O: float = 0.0          # noqa: E741
    S: float = math.inf

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "O", positive("O", self.O, allow_zero=True))
        S = float(self.S)
        if not S >= 0:
            raise ValueError(f"S must be >= 0 bytes (inf: no rendezvous), got {self.S!r}")
        object.__setattr__(self, "S", S)

    def copy_time(self, nbytes) -> float | np.ndarray:
        """``(m - 1) O``: the CPU's copy of a message of ``nbytes`` beyond its first byte (s)."""
        t = wire_bytes(nbytes) * self.O
        return float(t) if t.ndim == 0 else t

    def message_time(self, nbytes) -> float | np.ndarray:
        """End-to-end time of one message of ``nbytes`` alone, eager or rendezvous (the
        receive posted in time): ``o_s + L + max((m-1) O, (m-1) G) + o_r`` (s)."""
        w = wire_bytes(nbytes)
        t = self.o_s + self.L + self.o_r + np.maximum(w * self.O, w * self.G)
        return float(t) if t.ndim == 0 else t

    def message_terms(self, step: Step):
        """As :meth:`LogP.message_terms`, with the copies: the send busy ``o_s + w_O``, the
        first byte still ``o_s + L`` after the send's start, the receive busy
        ``o_r + max(w_O, w_G)`` from the first byte taken."""
        send_busy, send_gap, transit, recv_wire, recv_busy, recv_gap = super().message_terms(step)
        if not self.O:
            return send_busy, send_gap, transit, recv_wire, recv_busy, recv_gap
        nbytes = step.nbytes
        if nbytes.size and nbytes.min() == nbytes.max():
            copy = max(float(nbytes[0]) - 1.0, 0.0) * self.O
        else:
            copy = np.maximum(nbytes - 1.0, 0.0) * self.O
        extra = (max(copy - recv_wire, 0.0) if np.ndim(copy) == 0 and np.ndim(recv_wire) == 0
                 else np.maximum(copy - recv_wire, 0.0))
        return send_busy + copy, send_gap, transit - copy, recv_wire, recv_busy + extra, recv_gap

    def rendezvous(self, step: Step):
        """Per message of ``step``, True where it goes by rendezvous (``max(m, 1) > S``,
        LogGOPSim's ``size > S`` with an empty message of one byte); None when none can."""
        if math.isinf(self.S):
            return None
        return np.maximum(step.nbytes, 1) > self.S


def wire_bytes(nbytes) -> np.ndarray:
    """``max(m - 1, 0)``: the bytes that LogGP charges ``G`` each (0 and 1 byte cost none)."""
    m = np.asarray(nbytes, dtype=float)
    if np.any(~np.isfinite(m) | (m < 0)):
        raise ValueError(f"nbytes must be finite and >= 0, got {nbytes!r}")
    return np.maximum(m - 1, 0.0)


@dataclass(frozen=True)
class PLogP:
    """Parameterised LogP (Kielmann, Bal & Verstoep 2000): size-dependent ``o_s(m)``, ``o_r(m)``, ``g(m)``.

    The three functions are tabulated at ``sizes`` (bytes, increasing) and interpolated
    linearly in between (Kielmann's procedure measures them at a few sizes).  In PLogP
    the end-to-end time of an m-byte message is ``L + g(m)``: L holds everything the gap
    does not, so PLogP's L is *not* LogP's L (see :meth:`to_logp`).
    """

    L: float
    sizes: tuple
    o_s: tuple
    o_r: tuple
    g: tuple
    P: int = 2
    name: str = ""
    source: str = ""

    def __post_init__(self):
        positive("L", self.L, allow_zero=True)
        positive_int("P", self.P)
        arrays = {k: np.asarray(getattr(self, k), dtype=float) for k in ("sizes", "o_s", "o_r", "g")}
        n = arrays["sizes"].size
        if n < 1 or any(a.shape != (n,) for a in arrays.values()):
            raise ValueError("sizes, o_s, o_r and g must be 1-D sequences of equal length >= 1")
        if np.any(np.diff(arrays["sizes"]) <= 0) or arrays["sizes"][0] < 0:
            raise ValueError("sizes must be >= 0 and strictly increasing")
        for k in ("o_s", "o_r", "g"):
            if np.any(~np.isfinite(arrays[k]) | (arrays[k] < 0)):
                raise ValueError(f"{k} must hold finite values >= 0")
            object.__setattr__(self, k, tuple(arrays[k]))
        object.__setattr__(self, "sizes", tuple(arrays["sizes"]))

    def _at(self, name: str, nbytes):
        return np.interp(np.asarray(nbytes, dtype=float), self.sizes, getattr(self, name))

    def send_overhead(self, nbytes):
        """o_s(m) in seconds."""
        return self._at("o_s", nbytes)

    def recv_overhead(self, nbytes):
        """o_r(m) in seconds."""
        return self._at("o_r", nbytes)

    def gap(self, nbytes):
        """g(m) in seconds."""
        return self._at("g", nbytes)

    def message_time(self, nbytes):
        """End-to-end time ``L + g(m)`` of one m-byte message (s)."""
        return self.L + self.gap(nbytes)

    #: the timing semantics the simulator uses for this model unless told otherwise: each rank
    #: on its own clock, message by message
    semantics = "stepwise"

    def step_rule(self, schedule) -> "LogPClock":
        """Per-rank clocks (:class:`LogPClock`) with size-dependent terms: a send keeps the
        CPU ``o_s(m)`` and the next send waits ``g(m)``; the message can be received from
        ``L + g(m) - o_r(m)`` after its send started (one message alone takes ``L + g(m)``),
        its receive keeps the CPU ``o_r(m)`` and the next receive waits ``g(m)``.  Link
        loads play no part (PLogP has no per-byte term to slow down)."""
        return LogPClock(self, schedule.nprocs)

    def message_terms(self, step: Step):
        """As :meth:`LogP.message_terms`, from the interpolated curves at each message's size."""
        m = step.nbytes
        os_, or_, g = self.send_overhead(m), self.recv_overhead(m), self.gap(m)
        return os_, g, self.L + g - or_ - os_, 0.0, or_, g

    def to_logp(self, nbytes: float = 0) -> LogP:
        """The LogP machine seen by messages of ``nbytes``: same end-to-end time ``L + g(m)``.

        LogP's latency is what is left of it after the two overheads:
        ``L_LogP = L + g(m) - o_s(m) - o_r(m)`` (clipped at 0).
        """
        os_, or_, g = (float(self._at(k, nbytes)) for k in ("o_s", "o_r", "g"))
        return LogP(max(self.L + g - os_ - or_, 0.0), max(os_, 1e-12), g, self.P, o_r=max(or_, 1e-12),
                    name=self.name, source=self.source)


# ---------------------------------------------------------------- the step rule
def _at(x, idx):
    return x if np.ndim(x) == 0 else x[idx]


def _positions(keys: np.ndarray, nkeys: int, order=None):
    """Slices of message indices, the i-th holding every key's i-th message (in ``order``,
    default column order): at most one message per key in each slice."""
    if order is None:
        order = np.argsort(keys, kind="stable")
    else:
        order = order[np.argsort(keys[order], kind="stable")]
    counts = np.bincount(keys, minlength=nkeys)
    pos = np.arange(keys.size) - (np.cumsum(counts) - counts)[keys[order]]
    top = int(pos.max(initial=-1)) + 1
    if top <= 8:                                    # few per key: one mask per position
        return [order[pos == j] for j in range(top)]
    by = np.argsort(pos, kind="stable")
    bounds = np.concatenate(([0], np.cumsum(np.bincount(pos))))
    ordered = order[by]
    return [ordered[bounds[j]:bounds[j + 1]] for j in range(bounds.size - 1)]


class LogPClock:
    """The LogP family's step rule: per-rank clocks, CPU and NIC gaps (``clocked``).

    In a step, a rank first sends its messages, in the step's column order: a send starts
    at the earliest when the CPU is free and when the NIC allows (``g + (m - 1) G`` after
    the start of the rank's previous send, of ``m`` bytes), keeps the CPU busy ``o_s``,
    and the message arrives ``o_s + (m - 1) G + L`` after the send started (plus the
    step's extra latency, if any).  Then the rank receives the step's messages in order
    of arrival (ties: column order).  A message of m bytes occupies the receiver for
    ``(m - 1) G`` from its first byte (as LogGOPSim counts it): its first byte is taken no
    earlier than the end of the previous CPU activity and ``g + (m' - 1) G`` after the
    first byte of the previous receive (of ``m'`` bytes), so its receive starts no earlier
    than the arrival of its last byte, ``(m - 1) G`` after the CPU is free, and
    ``g + (m - 1) G`` after the start of the previous receive; it keeps the CPU busy
    ``o_r`` (plus ``combine`` per element of a combining message).  A rendezvous message
    (:class:`LogGOPS`, more than ``S`` bytes) holds its sender's CPU and NIC until its receiver
    takes its first byte, as LogGOPSim does; here the wait is charged at the end of the
    sender's step (its later sends of the same step are not held back by it).  The NIC gaps carry over from step to step.  With G = 0 a
    message's size plays no part (LogP).  With a topology, ``(m - 1) G`` is multiplied by
    the message's link load.
    """

    clocked = True

    def __init__(self, model, nprocs: int):
        self.model, self.p = model, nprocs
        self.next_send = np.full(nprocs, -np.inf)
        self.next_recv = np.full(nprocs, -np.inf)
        self._seen = {}                     # id(rank column) -> (column, identity, unique)
        self._arange = np.arange(nprocs)

    def _ranks(self, keys: np.ndarray):
        """``(index, unique)``: ``slice(None)`` for the column ``0, 1, ..., P-1`` (no gather
        needed) else the column, and whether no rank repeats in it.  Remembered per column
        array: builders share columns between steps."""
        hit = self._seen.get(id(keys))
        if hit is not None and hit[0] is keys:
            return hit[1], hit[2]
        identity = keys.size == self.p and bool(np.array_equal(keys, self._arange))
        unique = identity or keys.size <= 1 or bool(np.bincount(keys, minlength=self.p).max() <= 1)
        out = (slice(None) if identity else keys, unique)
        if len(self._seen) > 4096:
            self._seen.clear()
        self._seen[id(keys)] = (keys, *out)
        return out

    def advance(self, cpu: np.ndarray, step: Step, extra=None, record=None) -> None:
        """Run one step from per-rank CPU times ``cpu`` (s, updated in place); ``extra``
        (s per message) delays arrivals.  ``record``, if given, is called once with, per
        message (s): its sender's CPU time before the send, the send's start, the arrival of
        its last byte, its receiver's CPU time before the receive and the start of the receive
        overhead (a trace, :mod:`netmodels.simulate.trace`)."""
        terms = self.model.message_terms(step)
        before = None if record is None else np.empty((3, step.src.size))
        arrival = self.send(cpu, step, terms, extra, before)
        received = self.receive(cpu, step, terms, arrival, before)
        self.hold_rendezvous(cpu, step, terms, received)
        if record is not None:
            record(before[0], before[1], arrival, before[2], received)

    def send(self, cpu, step: Step, terms, extra, before) -> np.ndarray:
        """Every rank sends its messages of ``step`` in column order: a send starts when the CPU
        is free and the NIC's gap has passed, keeps the CPU busy ``o_s``; returns each message's
        arrival (s).  A gap no longer than the CPU's busy time cannot bind: it is not kept."""
        send_busy, send_gap, transit, *_ = terms
        gap_binds = np.ndim(send_gap) > 0 or np.ndim(send_busy) > 0 or send_gap > send_busy
        arrival = np.empty(step.src.size)
        for idx, s in self._turns(step.src):
            start = np.maximum(cpu[s], self.next_send[s]) if gap_binds else cpu[s]
            if before is not None:
                before[0, idx], before[1, idx] = cpu[s], start
            busy = start + _at(send_busy, idx)
            cpu[s] = busy
            if gap_binds:
                self.next_send[s] = start + _at(send_gap, idx)
            a = busy + _at(transit, idx)
            arrival[idx] = a if extra is None else a + extra[idx]
        return arrival

    def receive(self, cpu, step: Step, terms, arrival, before) -> np.ndarray:
        """Every rank receives its messages of ``step`` in order of arrival: the first byte waits
        for the CPU and the receive gap, the rest ``(m - 1) G`` follows, and the receive keeps the
        CPU busy ``o_r``; returns each receive overhead's start (s)."""
        *_, recv_wire, recv_busy, recv_gap = terms
        wired = np.ndim(recv_wire) > 0 or recv_wire > 0
        gap_binds = wired or np.ndim(recv_gap) > 0 or np.ndim(recv_busy) > 0 or recv_gap > recv_busy
        started = np.empty(step.dst.size)
        for idx, d in self._turns(step.dst, arrival):
            if before is not None:
                before[2, idx] = cpu[d]
            if wired:
                start = np.maximum(np.maximum(cpu[d], self.next_recv[d]) + _at(recv_wire, idx), arrival[idx])
            else:
                start = np.maximum(cpu[d], arrival[idx])
                if gap_binds:
                    np.maximum(start, self.next_recv[d], out=start)
            if gap_binds:
                self.next_recv[d] = start + _at(recv_gap, idx)
            cpu[d] = start + _at(recv_busy, idx)
            started[idx] = start
        return started

    def hold_rendezvous(self, cpu, step: Step, terms, received) -> None:
        """A rendezvous send (:class:`LogGOPS`, more than ``S`` bytes) ends when its receiver takes
        its first byte, ``(m - 1) G`` before its receive overhead starts (``received``, s per
        message): its sender's CPU and NIC wait until then."""
        rdv = self.model.rendezvous(step) if hasattr(self.model, "rendezvous") else None
        if rdv is None:
            return
        taken = received - terms[3]         # recv_wire
        for i in np.flatnonzero(np.broadcast_to(rdv, (step.src.size,))):
            s = step.src[i]
            cpu[s] = max(cpu[s], taken[i])
            self.next_send[s] = max(self.next_send[s], taken[i])

    def _turns(self, ranks: np.ndarray, arrival=None):
        """``(messages, ranks)`` pairs in the order they are handled: one pair when no rank repeats
        in the column ``ranks``, else a rank's first message, then its second, ... (its sends in
        column order, its receives in order of ``arrival``, ties in column order)."""
        index, unique = self._ranks(ranks)
        if unique:
            return [(slice(None), index)]
        order = None if arrival is None else np.argsort(arrival, kind="stable")
        return [(i, ranks[i]) for i in _positions(ranks, self.p, order)]
