"""The LogP family: LogP (Culler et al. 1993), LogGP (Alexandrov et al. 1995), PLogP
(Kielmann et al. 2000), their step rule, and barrier times.

Units are SI: seconds, bytes.  LogP's parameters:

* ``L``: latency, the time a small message spends in the network (upper bound);
* ``o``: overhead, the time a processor is busy sending (``o_s``) or receiving (``o_r``)
  one message; the slides assume ``o_s = o_r = o``;
* ``g``: gap, the minimum interval between consecutive sends (or receives) of one
  processor, ``1/g`` its message rate;
* ``P``: the number of processors.

Each class carries its step rule (:meth:`LogP.step_rule`, :class:`LogPClock`), the one the
simulator (:func:`netmodels.simulate.simulate`) asks, under *stepwise* semantics unless
told otherwise (``semantics``).  :func:`barrier_time` gives the closed forms derived in
the chapter, which the tests check against the simulator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .._check import positive, positive_int
from ..algorithms.barriers import ceil_log
from ..algorithms.registry import check_options
from .step import Step

#: the barrier algorithms :func:`barrier_time` knows (those of :mod:`netmodels.algorithms.barriers`)
ALGORITHMS = ("central_counter", "combining_tree", "tournament", "binomial", "dissemination",
              "nway_dissemination", "butterfly", "pairwise_exchange")


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
    convention is the course's everywhere (:meth:`wire_time`, :func:`prtt_model`,
    :func:`fit_prtt`): a one-byte message is LogP's small message.
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
        (s per message) delays arrivals.  Where a gap cannot bind (it is no longer than the
        CPU's busy time) its clock is not kept; the times are the same.  ``record``, if given,
        is called once with, per message (s): its sender's CPU time before the send, the
        send's start, the arrival of its last byte, its receiver's CPU time before the
        receive and the start of the receive overhead (a trace, :mod:`netmodels.simulate.trace`)."""
        src, dst, n = step.src, step.dst, step.src.size
        send_busy, send_gap, transit, recv_wire, recv_busy, recv_gap = self.model.message_terms(step)
        wired = np.ndim(recv_wire) > 0 or recv_wire > 0
        send_binds = np.ndim(send_gap) > 0 or np.ndim(send_busy) > 0 or send_gap > send_busy
        recv_binds = wired or np.ndim(recv_gap) > 0 or np.ndim(recv_busy) > 0 or recv_gap > recv_busy
        arrival = np.empty(n)
        rec = None if record is None else np.empty((4, n))
        rdv = self.model.rendezvous(step) if hasattr(self.model, "rendezvous") else None
        if rdv is not None:
            rdv = np.broadcast_to(rdv, (n,))
            taken = np.empty(n)
        index, unique = self._ranks(src)
        sends = [(slice(None), index)] if unique else [(i, src[i]) for i in _positions(src, self.p)]
        for idx, s in sends:
            start = np.maximum(cpu[s], self.next_send[s]) if send_binds else cpu[s]
            if rec is not None:
                rec[0, idx], rec[1, idx] = cpu[s], start
            busy = start + _at(send_busy, idx)
            cpu[s] = busy
            if send_binds:
                self.next_send[s] = start + _at(send_gap, idx)
            a = busy + _at(transit, idx)
            arrival[idx] = a if extra is None else a + extra[idx]
        index, unique = self._ranks(dst)
        recvs = ([(slice(None), index)] if unique else
                 [(i, dst[i]) for i in _positions(dst, self.p, np.argsort(arrival, kind="stable"))])
        for idx, d in recvs:
            if rec is not None:
                rec[2, idx] = cpu[d]
            if wired:       # the first byte waits for the CPU and the gap, the rest follows
                w = _at(recv_wire, idx)
                start = np.maximum(np.maximum(cpu[d], self.next_recv[d]) + w, arrival[idx])
            else:
                start = np.maximum(cpu[d], arrival[idx])
                if recv_binds:
                    np.maximum(start, self.next_recv[d], out=start)
            if recv_binds:
                self.next_recv[d] = start + _at(recv_gap, idx)
            cpu[d] = start + _at(recv_busy, idx)
            if rec is not None:
                rec[3, idx] = start
            if rdv is not None:
                taken[idx] = start - _at(recv_wire, idx) if wired else start
        if rdv is not None and rdv.any():   # a rendezvous send ends when its message is taken
            for i in np.flatnonzero(rdv):
                s = src[i]
                cpu[s] = max(cpu[s], taken[i])
                self.next_send[s] = max(self.next_send[s], taken[i])
        if record is not None:
            record(rec[0], rec[1], arrival, rec[2], rec[3])


# ---------------------------------------------------------------- closed forms
def _check_params(params) -> LogP:
    if not isinstance(params, LogP):
        raise ValueError(f"params must be a netmodels.models.logp.LogP, got {type(params).__name__}")
    return params


def barrier_time(algorithm: str, params: LogP, **options) -> float:
    """Predicted time (s) of a barrier on ``params.P`` ranks entering together.

    ``algorithm`` is one of :data:`ALGORITHMS`; options: ``fan_in`` (combining_tree,
    default 4), ``n`` (nway_dissemination, default 2).  The closed forms are derived in
    the chapter "The LogP family and barriers" (there with ``o_s = o_r``; here general,
    with any gap).  They equal the simulator's time (:func:`netmodels.simulate.simulate`) of the schedule of :mod:`netmodels.algorithms.barriers` when the schedule is
    regular: any P for central counter and dissemination, a full tree for the combining
    tree (P = (k^(D+1) - 1)/(k - 1)), P a power of n + 1 for n-way dissemination, a power
    of two for the others.  For other P they are upper bounds (the tests check both).
    """
    _check_params(params)
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {list(ALGORITHMS)}, got {algorithm!r}")
    check_options(algorithm, options, _OPTIONS)
    return _FORMULAS[algorithm](params, params.P, **options)


def _central_counter(m: LogP, P: int) -> float:
    if P == 1:
        return 0.0
    return 2 * m.one_way + (P - 2) * (m.f_r + m.f_s)


def _tree_depth(P: int, k: int) -> int:
    """Depth of the heap-ordered k-ary tree on P nodes (the depth of node P - 1)."""
    depth, first, width = 0, 0, 1          # level d holds nodes first .. first + width - 1
    while first + width < P:
        first, width, depth = first + width, width * k, depth + 1
    return depth


def _combining_tree(m: LogP, P: int, fan_in: int = 4) -> float:
    k = positive_int("fan_in", fan_in, minimum=2)
    return _tree_depth(P, k) * (2 * m.one_way + (k - 1) * (m.f_r + m.f_s))


def _rounds(R: int, first: float, rest: float) -> float:
    """R rounds: the first is not held back by the gap of an earlier one."""
    return 0.0 if R == 0 else first + (R - 1) * rest


def _nway_round(m: LogP, n: int, first: bool = False) -> float:
    """One round of n-way dissemination: send n messages (one per f_s), then receive n (one
    per f_r, none before it arrives); a later round also waits a gap after the previous one."""
    busy = (n - 1) * (m.f_s + m.f_r) + m.o_s + m.o_r          # the rank's own sends and receives
    last = (n - 1) * max(m.f_s, m.f_r) + max(m.one_way, 0.0 if first else m.g)   # the last arrival
    return max(busy, last)


def _nway_dissemination(m: LogP, P: int, n: int = 2) -> float:
    n = positive_int("n", n)
    return _rounds(ceil_log(n + 1, P), _nway_round(m, n, True), _nway_round(m, n))


def _dissemination(m: LogP, P: int) -> float:
    return _rounds(ceil_log(2, P), m.one_way, m.t_r)


def _binomial(m: LogP, P: int) -> float:
    # fan-in: one receive per round at the winners; fan-out: the same chain backwards
    return 2 * _dissemination(m, P)


def _butterfly(m: LogP, P: int) -> float:
    R = ceil_log(2, P)
    if P == 2**R:
        return _dissemination(m, P)
    # some ranks play two roles: two sends and two receives per round
    return _rounds(R, _nway_round(m, 2, True), _nway_round(m, 2))


def _pairwise_exchange(m: LogP, P: int) -> float:
    R = P.bit_length() - 1
    # not a power of two: one step to fold the extra ranks in, one to release them
    return _rounds(R if P & (P - 1) == 0 else R + 2, m.one_way, m.t_r)


#: the options the closed forms take (a tournament's release is always the tree's here)
_OPTIONS = {"combining_tree": ("fan_in",), "nway_dissemination": ("n",)}

_FORMULAS = {
    "central_counter": _central_counter,
    "combining_tree": _combining_tree,
    "tournament": _binomial,
    "binomial": _binomial,
    "dissemination": _dissemination,
    "nway_dissemination": _nway_dissemination,
    "butterfly": _butterfly,
    "pairwise_exchange": _pairwise_exchange,
}


# ---------------------------------------------------------------- lower bound
def knowledge_bound(params: LogP) -> float:
    """Lower bound (s) on any barrier of ``params.P`` ranks under LogP.

    A rank can leave only once its knowledge covers all P entries.  Knowledge grows at
    most like an optimal broadcast run backwards (Karp et al., optimal broadcast in
    LogP): a rank takes in one message every ``f = max(o_r, g)`` and each message brings
    at most what its sender knew ``o_s + L + o_r`` earlier, so the number N(t) of entries
    one rank can know at time t obeys N(t) <= N(t - f) + N(t - (o_s + L + o_r)), N = 1
    before the first message.  Returns the first t with N(t) >= P.
    """
    _check_params(params)
    P = params.P
    if P == 1:
        return 0.0
    f, w = params.f_r, params.one_way
    # Optimal broadcast: a rank that sends at a*f + b*w (a sends after b hops) informs a
    # new rank at a*f + (b+1)*w; counting lattice paths, C(a+b, a) ranks are informed then,
    # and by the hockey-stick identity N(T) = 1 + sum_b C(A_b + b + 1, b + 1) with
    # A_b = floor((T - (b+1) w) / f).  N is a step function: bisect, then snap to the event.
    def informed(T):
        total, b = 1, 0
        while (b + 1) * w <= T * (1 + 1e-12):
            A = math.floor((T - (b + 1) * w) / f * (1 + 1e-12) + 1e-9) if f > 0 else P
            total += math.comb(A + b + 1, b + 1)
            if total >= P:
                return total
            b += 1
        return total

    lo, hi = 0.0, ceil_log(2, P) * (w + f)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if informed(mid) >= P else (mid, hi)
        if hi - lo <= 1e-13 * hi:
            break
    # the event time at hi: the largest (b+1) w + a f not above hi
    best = 0.0
    b = 0
    while (b + 1) * w <= hi * (1 + 1e-12):
        a = math.floor((hi - (b + 1) * w) / f * (1 + 1e-12) + 1e-9) if f > 0 else 0
        best = max(best, (b + 1) * w + a * f)
        b += 1
    return best


# ---------------------------------------------------------------- fits
#: a size's gap within this fraction above o_s(s) is taken as overhead-bound (see :func:`fit_prtt`)
GAP_MARGIN = 0.05
#: LogP's small-message parameters (o_s, o_r, L) come from the sizes up to this many bytes
SMALL_BYTES = 64


@dataclass(frozen=True)
class PRTTFit:
    """LogGP parameters from Netgauge's PRTT(n, d, s) measurements (seconds, s/B).

    ``g`` and ``G`` are NaN when no two sizes have a gap above their send overhead
    (``g_identified`` False): then ``g <= g_upper``, and nothing more can be said.
    ``L`` is constrained to ``L >= 0``: when what the round trip leaves after the
    overheads (``L_unconstrained``) is negative, ``L_identified`` is False and ``L = 0``.
    """

    L: float
    o_s: float
    o_r: float
    g: float
    G: float
    n: int
    sizes: tuple
    o_s_by_size: tuple      #: o_s(s) at each size: PLogP's send overhead
    gap_by_size: tuple      #: (PRTT(n,0,s) - PRTT(1,0,s)) / (n - 1) at each size
    g_identified: bool = True
    g_upper: float = math.inf   #: upper bound on g: the smallest gap measured (s)
    gap_sizes: tuple = ()       #: the sizes whose gap exceeds o_s(s): those g and G are fitted to
    L_by_size: tuple = ()       #: PRTT(1,0,s)/2 - o_s(s) - o_r(s) - (s-1)G at each size
    L_unconstrained: float = math.nan   #: the median of L_by_size over the small sizes, any sign (s)
    L_identified: bool = True   #: False when L_unconstrained < 0 (then L = 0)
    #: what the medians outweighed: (parameter, size in bytes, its estimate at that size, s)
    #: for every small size whose o_s, o_r or L lies more than OUTLIER_MADS scaled median
    #: absolute deviations from the median it takes part in
    outliers: tuple = ()
    #: the least-squares slope of the gaps, any sign (s/B): where it is negative (gaps that do not
    #: grow over the sizes measured, as on one node at up to 16 KiB) G = 0 and g is their mean
    G_unconstrained: float = math.nan

    def dropped(self) -> list[str]:
        """What the fit left out, one sentence each (empty when nothing): the sizes whose
        estimate the medians outweighed, and the sizes whose gap is an overhead (not g)."""
        lines = [f"{name} at {size:g} B is {value * 1e6:.3f} µs, an outlier the median of the sizes "
                 f"up to {SMALL_BYTES} B leaves out" for name, size, value in self.outliers]
        if self.G_unconstrained < 0:
            lines.append(f"G: the gaps fall with size (slope {self.G_unconstrained * 1e9:.4f} ns/B), so G = 0 "
                         f"and g is their mean; no per-byte gap is seen at these sizes")
        left = [s for s in self.sizes if s not in self.gap_sizes]
        if left:
            lines.append(f"g and G: the gaps at {', '.join(f'{s:g}' for s in left)} B do not exceed o_s "
                         f"(they measure the send overhead) and are not fitted")
        return lines

    def model(self, P: int = 2) -> LogGP:
        """The fitted machine as :class:`LogGP`: negative estimates clipped to tiny positives,
        and g = G = 0 when they are not identified (sends are then spaced by o_s anyway)."""
        g, G = (0.0 if math.isnan(v) else max(v, 0.0) for v in (self.g, self.G))
        return LogGP(self.L, max(self.o_s, 1e-12), g, P,
                     o_r=max(self.o_r, 1e-12), G=G, name="PRTT fit")


def fit_prtt(sizes, prtt_1_0, prtt_n_0, prtt_n_d, n: int, d, o_r, margin: float = GAP_MARGIN) -> PRTTFit:
    """Fit LogGP to PRTT(1,0,s), PRTT(n,0,s), PRTT(n,d,s) as Netgauge does (Hoefler et al. 2007).

    PRTT(n, d, s) is the time of one "parametrised round trip": the client sends n
    messages of s bytes with a pause of d seconds after each send, the server answers
    with one message when all n have arrived.  Under LogGP, with the course's
    ``(s - 1) G`` convention (:class:`LogGP`) and gap(s) = max(o_s(s), g + (s-1)G):

    * PRTT(1,0,s) = 2 (o_s + L + o_r + (s-1) G) (a plain round trip);
    * PRTT(n,0,s) = PRTT(1,0,s) + (n - 1) gap(s): back-to-back sends go one gap apart;
    * PRTT(n,d,s) = PRTT(1,0,s) + (n - 1)(o_s + d) when d >= gap(s): o_s(s) follows.

    Where o_s(s) >= g + (s-1)G (the slides' o > g) the gap measures o_s, not g: so g and
    G are the intercept and slope of the least-squares line through (s - 1, gap(s)) over
    the sizes whose gap exceeds ``(1 + margin) o_s(s)`` only (``margin`` absorbs the
    noise of two measurements of one quantity).  With fewer than two such sizes g and G
    are not identified (NaN): every gap is then an overhead, and g <= min gap(s).  A line
    that falls with size is constrained as L is: G = 0 and g the mean gap (the least squares
    with G >= 0), the slope kept in ``G_unconstrained``.

    ``o_r`` (s, scalar or one per size) is measured directly (the time of a receive
    whose message has already arrived); ``d`` is a scalar or one per size.  The small-
    message parameters are medians over the sizes up to :data:`SMALL_BYTES` (the
    smallest size if none), so that one cold or noisy size cannot spoil them: o_s and
    o_r, and L, what the round trip leaves, PRTT(1,0,s)/2 - o_s(s) - o_r(s) - (s-1)G
    (G taken as 0 if not identified).  A negative estimate means that the overheads
    measured alone exceed half the round trip: they overlap in a round trip (e.g. through
    shared memory, or on a loaded machine), and latency and overhead cannot be separated.
    The fit then reports L as not identifiable (``L_identified`` False) and returns the
    constrained estimate L = 0 (the least-squares L >= 0 of the residual's median), the
    negative value in ``L_unconstrained``.  Sizes in bytes, times in s.
    """
    s = np.asarray(sizes, dtype=float)
    n = positive_int("n", n, minimum=2)
    margin = positive("margin", margin, allow_zero=True)
    arrays = [np.broadcast_to(np.asarray(a, dtype=float), s.shape) for a in (prtt_1_0, prtt_n_0, prtt_n_d, d, o_r)]
    if s.ndim != 1 or s.size < 2 or np.unique(s).size < 2:
        raise ValueError("sizes must be a 1-D sequence with at least 2 distinct sizes")
    if np.any(s < 0) or any(np.any(~np.isfinite(a) | (a < 0)) for a in arrays):
        raise ValueError("sizes and times must be finite and >= 0")
    r1, rn0, rnd, dd, orr = arrays
    x = wire_bytes(s)
    gap = (rn0 - r1) / (n - 1)
    o_s = (rnd - r1) / (n - 1) - dd
    above = gap > (1 + margin) * o_s              # the gap is g + (s-1)G here, not o_s
    identified = np.unique(x[above]).size >= 2
    G, g = np.polyfit(x[above], gap[above], 1) if identified else (math.nan, math.nan)
    G_raw = float(G)
    if identified and G < 0:                      # gaps that fall with size: G = 0 is the least squares G >= 0
        G, g = 0.0, float(np.mean(gap[above]))
    L_s = r1 / 2 - o_s - orr - x * (G if identified else 0.0)
    small = (s <= SMALL_BYTES) | (s == s.min())
    L_raw = float(np.median(L_s[small]))
    outliers = tuple((name, float(size), float(v)) for name, values in (("o_s", o_s), ("o_r", orr), ("L", L_s))
                     for size, v in zip(s[small], values[small]) if _outlying(v, values[small]))
    return PRTTFit(max(L_raw, 0.0), float(np.median(o_s[small])), float(np.median(orr[small])),
                   float(g), float(G), n, tuple(s), tuple(o_s), tuple(gap), bool(identified),
                   float(gap.min()), tuple(s[above]), tuple(L_s), L_raw, L_raw >= 0, outliers, G_raw)


#: how far from the median (in scaled median absolute deviations, 1.4826 MAD, the normal
#: distribution's standard deviation) an estimate lies before :func:`fit_prtt` names it
OUTLIER_MADS = 3.0


def _outlying(value: float, values: np.ndarray) -> bool:
    """``value`` lies more than :data:`OUTLIER_MADS` scaled MADs from the median of ``values``
    (and more than 1 % of it, so that identical estimates name nothing)."""
    med = np.median(values)
    spread = max(1.4826 * np.median(np.abs(values - med)), 0.01 * abs(med))
    return values.size >= 3 and abs(value - med) > OUTLIER_MADS * spread



def fit_results(results: list[dict], n: int, statistic: str = "min_s") -> PRTTFit:
    """:func:`fit_prtt` of the per-size ``results`` of ``python -m mpi_exercises logp`` (its
    JSON's "results"; ``n`` is its ``parameters["n"]``), on their minima (``"min_s"``, the
    default: noise only adds time) or medians (``"median_s"``).  The one LogP fit of a
    measurement: the benchmark's report, the chapters and the default machine use it."""
    col = lambda key: [r[key][statistic] for r in results]  # noqa: E731
    return fit_prtt([r["bytes"] for r in results], col("prtt_1_0"), col("prtt_n_0"), col("prtt_n_d"), n,
                    [r["d_s"] for r in results], col("o_r"))

def fit_copy_overhead(nbytes, o_s, o_r) -> float:
    """LogGOPS's ``O`` (s/B) from overheads measured per size: the least-squares slope of the
    mean of ``o_s`` and ``o_r`` (s, one per size) against ``(m - 1)`` bytes (the course's
    convention, :meth:`LogGOPS.copy_time`), clipped at 0 (an overhead that does not grow with
    size has no copy to charge).  Needs at least 2 distinct sizes."""
    m = np.asarray(nbytes, dtype=float)
    o = (np.asarray(o_s, dtype=float) + np.asarray(o_r, dtype=float)) / 2
    if m.ndim != 1 or m.shape != o.shape or np.unique(m).size < 2 or not np.all(np.isfinite(o)) or np.any(m < 0):
        raise ValueError("nbytes, o_s and o_r must be 1-D, of one length, finite, sizes >= 0 and at least "
                         "2 of them distinct")
    slope = np.polyfit(np.maximum(m - 1.0, 0.0), o, 1)[0]
    return float(max(slope, 0.0))


def prtt_model(params: LogGP, n: int, d: float, nbytes) -> np.ndarray:
    """PRTT(n, d, s) predicted by LogGP (s): the forward model :func:`fit_prtt` inverts.

    Uses :meth:`LogGP.wire_time`, the ``(s - 1) G`` of one s-byte message."""
    wire = np.asarray(params.wire_time(nbytes))
    rtt = 2 * (params.o_s + params.L + params.o_r + wire)
    f = np.maximum(params.o_s, params.g + wire)
    return rtt + (n - 1) * np.maximum(f, params.o_s + d)


@dataclass(frozen=True)
class BarrierFit:
    """LogP parameters fitted to measured barrier times, and the predictions (s)."""

    L: float
    o: float
    rows: tuple          #: (algorithm, P, measured_s, predicted_s)
    rms_relative: float  #: root-mean-square relative error over the rows fitted

    def params(self, P: int) -> LogP:
        return LogP(self.L, self.o, 0.0, P, name="fit to barrier times")


def fit_barrier_times(measured, options=None) -> BarrierFit:
    """Fit L and o (g <= o, so g drops out) to barrier times by relative least squares.

    ``measured`` is a sequence of ``(algorithm, P, seconds)``; ``options`` maps an
    algorithm to the keyword options of :func:`barrier_time` (e.g. a combining tree's
    ``fan_in``).  Uses ``scipy.optimize.least_squares`` with L, o >= 0.
    """
    from scipy.optimize import least_squares

    options = options or {}
    rows = [(a, positive_int("P", P), positive("seconds", t)) for a, P, t in measured]
    if len(rows) < 2:
        raise ValueError("measured must hold at least 2 (algorithm, P, seconds) rows to fit L and o")

    def predict(x):
        L, o = x
        return np.array([barrier_time(a, LogP(L, max(o, 1e-15), 0.0, P), **options.get(a, {}))
                         for a, P, _ in rows])

    t = np.array([r[2] for r in rows])
    scale = float(np.median(t))
    res = least_squares(lambda x: (predict(x * scale) - t) / t, x0=[0.05, 0.005],
                        bounds=([0, 1e-9], [np.inf, np.inf]))
    L, o = res.x * scale
    pred = predict(res.x * scale)
    return BarrierFit(float(L), float(o), tuple((a, P, m, float(p)) for (a, P, m), p in zip(rows, pred)),
                      float(np.sqrt(np.mean(((pred - t) / t) ** 2))))
