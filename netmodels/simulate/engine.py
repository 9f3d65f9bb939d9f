"""A vectorised simulator: the time of a schedule under α-β, NBL f(L), LogP or LogGP.

:func:`simulate` takes a schedule in either form (an
:class:`~netmodels.algorithms.arrays.ArraySchedule`, or a per-transfer
:class:`~netmodels.algorithms.schedule.Schedule`, converted) and works on the columns
of one step at a time with numpy: no Python object, no Python loop per transfer.
Times are in seconds, message sizes ``count * elem_bytes`` bytes (``elem_bytes`` per
vector element) for α-β and LogGP; the NBL model counts elements, as its paper does.
A transfer with ``src == dst`` is local work: no message, no time.  A receive offset
column, if a schedule carries one, plays no part in the time.

**Two semantics.**  *sync* (loosely synchronous, the NBL paper's assumption): every
rank performs step t together; step t begins when the last rank has finished step
t - 1 (step 0 when the last rank has entered, see ``skew``), and every rank that
takes part in a step finishes at its end.  *dataflow* (as LogGOPSim): every rank has
its own clock and begins its part of step t as soon as it has finished its part of
step t - 1 (its own receives of t - 1 have arrived and been handled); a rank without
a transfer in a step is not held up by it.

**LogP and LogGP** (:class:`~netmodels.models.logp.LogP`, ``LogGP``; L, o_s, o_r, g,
G) follow the rules of :func:`netmodels.models.logp.simulate`, which *dataflow*
reproduces exactly (to the last bit, G = 0).  In a step, a rank first sends its
messages, in the step's column order: a send starts at the earliest when the CPU is
free and when the NIC allows (``g + (m - 1) G`` after the start of the rank's
previous send, of ``m`` bytes), keeps the CPU busy ``o_s``, and the message arrives
``o_s + (m - 1) G + L`` after the send started.  Then the rank receives the step's
messages in order of arrival (ties: column order), each receive starting no earlier
than the arrival (of its last byte), the end of the previous CPU activity, and
``g + (m' - 1) G`` after the first byte of the previous receive (of ``m'`` bytes) came in,
that is ``g`` after the start of the previous receive, and keeping the CPU busy ``o_r``.
The receiving NIC's gap thus starts with a message's first byte, as in LogGOPSim
(Hoefler et al. 2010), not after its last byte, which would charge its wire time twice.  The NIC gaps
carry over from step to step.  A rank's part of the step ends with its last CPU
activity.  With G = 0 a message's size plays no part (LogP).

**α-β** (:class:`~netmodels.models.alphabeta.AlphaBeta`, single port, full duplex): a
message of m bytes takes ``α + β m``; a rank's sends in a step go one after the
other, and so do its receives, while sending and receiving overlap: its part of the
step takes ``comm = max(Σ sends, Σ receives)``.  **NBL**
(:class:`~netmodels.simulate.cost.NBLModel`, or an
:class:`~netmodels.models.nbl.NBLMachine` with f(L) = 1): the rules of
:mod:`netmodels.simulate.cost`, ``comm = L α + f(L) β S`` with L the messages the
rank sends plus receives and S its largest message (elements), and a combining time
``comp`` (a node receiving k combining blocks onto one block does one (k+1)-way
combine).  Under *sync* a step costs ``max comm + max comp`` over the ranks (exactly
:func:`netmodels.simulate.cost.cost`; α-β has no combining cost).  Under *dataflow*
a message from s to d starts when both have begun the step (``max(b_s, b_d)``, b
the rank's begin) and ends ``max(comm_s, comm_d)`` later; a rank ends its
communication at ``max(b + comm, end of each of its messages)`` and then combines
for ``comp``.

**Contention** (``topology``): an object with ``nprocs``, ``nlinks`` and
``routes(src, dst) -> (msg_index, link_id)`` (message ``i`` of the arrays uses link
``link_id[k]`` for every k with ``msg_index[k] == i``).  The load of a link in a step
is the number of the step's messages routed over it; a message's bandwidth term
(``β m`` in α-β, ``(m - 1) G`` in LogGP, ``β S`` in NBL) is multiplied by the largest
load on its links (1 if it uses none).  LogP's small messages have no bandwidth
term: contention does not slow them.

**Skew and noise.**  ``skew`` (s, one per rank, >= 0) is when each rank enters the
schedule (default 0).  ``noise`` (s, >= 0) is the mean of an extra latency drawn for
every message from an exponential distribution (``numpy.random.default_rng(seed)``,
one draw per message in step and column order): it delays the message's arrival
(LogP family) or is added to the receiver's communication time of the step
(α-β and NBL; the largest draw of its incoming messages).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._check import positive, positive_int
from ..algorithms.arrays import ArraySchedule, as_arrays
from ..models.alphabeta import AlphaBeta
from ..models.logp import LogGP, LogP
from ..models.nbl import NBLMachine
from .cost import NBLModel

SEMANTICS = ("sync", "dataflow")


@dataclass(frozen=True, eq=False)
class SimResult:
    """What :func:`simulate` predicts (seconds, bytes).

    time: completion of the last rank (s).  finish: per-rank finish times (s): under
    *sync* the end of the last step the rank takes part in (its entry time if none).
    steps, messages, bytes: the schedule's steps, messages (``src != dst``) and bytes
    sent.  step_times: under *sync* the duration of every step (s; the first step is
    counted from the last rank's entry), None under *dataflow*.
    """

    time: float
    finish: np.ndarray
    steps: int
    messages: int
    bytes: int
    step_times: np.ndarray | None
    semantics: str
    model: str


# ----------------------------------------------------------------------------- helpers
class _Ranks:
    """What a rank column is, remembered per column array (builders share columns between
    steps, e.g. ``src = arange(P)`` in every step of a dissemination barrier)."""

    def __init__(self, p: int):
        self.p, self.seen = p, {}
        self.arange = np.arange(p, dtype=np.int64)

    def index(self, keys: np.ndarray):
        """``slice(None)`` if ``keys`` is ``0, 1, ..., P-1`` (no gather or scatter needed), else ``keys``."""
        return slice(None) if self._info(keys)[0] else keys

    def unique(self, keys: np.ndarray) -> bool:
        """True if no rank appears twice in ``keys``."""
        return self._info(keys)[1]

    def _info(self, keys):
        hit = self.seen.get(id(keys))
        if hit is not None and hit[0] is keys:
            return hit[1]
        identity = keys.size == self.p and bool(np.array_equal(keys, self.arange))
        if identity or keys.size <= 1:
            unique = True
        elif 16 * keys.size < self.p:              # few transfers: sort them, not a table of P
            k = np.sort(keys)
            unique = not bool((k[1:] == k[:-1]).any())
        else:
            unique = bool(np.bincount(keys, minlength=self.p).max() <= 1)
        info = (identity, unique)
        self.seen[id(keys)] = (keys, info)
        return info


def _segment_positions(keys: np.ndarray, nkeys: int):
    """Group equal ``keys``: ``(order, pos)``, ``order`` a stable ordering by key and
    ``pos[i]`` the rank of item ``order[i]`` among the items with its key."""
    counts = np.bincount(keys, minlength=nkeys)
    order = np.argsort(keys, kind="stable")
    first = np.cumsum(counts) - counts
    pos = np.arange(keys.size) - first[keys[order]]
    return order, pos


def _by_position(order: np.ndarray, pos: np.ndarray):
    """Slices of ``order`` holding the items of position 0, 1, 2, ... (each slice: at most
    one item per key)."""
    top = int(pos.max(initial=-1)) + 1
    if top <= 8:                                    # few per key: one mask per position
        return [order[pos == j] for j in range(top)]
    by = np.argsort(pos, kind="stable")
    bounds = np.concatenate(([0], np.cumsum(np.bincount(pos))))
    ordered = order[by]
    return [ordered[bounds[j]:bounds[j + 1]] for j in range(bounds.size - 1)]


def _loads(topology, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Per message: the largest number of the step's messages on one of its links (>= 1);
    None without a topology (every load 1)."""
    n = src.size
    if topology is None:
        return None
    load = np.ones(n)
    msg, link = topology.routes(src, dst)
    msg, link = np.asarray(msg, dtype=np.int64), np.asarray(link, dtype=np.int64)
    if msg.shape != link.shape or msg.ndim != 1:
        raise ValueError("topology.routes must return two 1-D integer arrays of equal length")
    if msg.size == 0:
        return load
    if msg.min() < 0 or msg.max() >= n or link.min() < 0 or link.max() >= topology.nlinks:
        raise ValueError(f"topology.routes returned a message index outside 0..{n - 1} "
                         f"or a link outside 0..{topology.nlinks - 1}")
    per_link = np.bincount(link, minlength=topology.nlinks)
    np.maximum.at(load, msg, per_link[link].astype(float))
    return load


def _model_kind(model):
    if isinstance(model, LogP):
        return "logp"
    if isinstance(model, AlphaBeta):
        return "alphabeta"
    if isinstance(model, NBLMachine):
        return "nbl"
    if isinstance(model, NBLModel):
        return "nbl"
    raise ValueError("model must be an AlphaBeta, a LogP or LogGP, an NBLModel or an NBLMachine; "
                     f"got {type(model).__name__}")


def _check_times(name: str, values, p: int) -> np.ndarray:
    a = np.asarray(values, dtype=float)
    if a.ndim == 0:
        a = np.full(p, float(a))
    if a.shape != (p,) or np.any(~np.isfinite(a)) or np.any(a < 0):
        raise ValueError(f"{name} must be a time >= 0 or {p} finite times >= 0 (s), got shape {a.shape}")
    return a.copy()


# ----------------------------------------------------------------------------- LogP family
class _LogPState:
    """Per-rank clocks of the LogP family: CPU free, earliest next send / receive."""

    def __init__(self, model: LogP, p: int):
        self.os, self.or_, self.L, self.g = model.o_s, model.o_r, model.L, model.g
        self.G = model.G if isinstance(model, LogGP) else 0.0
        self.next_send = np.full(p, -np.inf)
        self.next_recv = np.full(p, -np.inf)
        self.p = p
        self.ranks = _Ranks(p)

    def step(self, cpu, src, dst, nbytes, load, extra):
        """Run one step from per-rank CPU times ``cpu`` (updated in place).

        ``extra`` (s per message) or None.  Where the gap cannot bind (G = 0 and g no
        longer than the overhead: the next send or receive could start ``g`` after this
        one, but the CPU is busy longer) its clock is not kept; the times are the same.
        """
        n = src.size
        wire = None
        if self.G:
            wire = np.maximum(nbytes() - 1.0, 0.0) * self.G
            if load is not None:
                wire *= load
        os_, or_, g, L = self.os, self.or_, self.g, self.L
        send_gap = wire is not None or g > os_
        recv_gap = g > or_                  # the receive gap starts at the first byte
        arrival = np.empty(n)
        if self.ranks.unique(src):
            sends = [(slice(None), self.ranks.index(src))]
        else:
            sends = [(idx, src[idx]) for idx in _by_position(*_segment_positions(src, self.p))]
        for idx, s in sends:
            start = np.maximum(cpu[s], self.next_send[s]) if send_gap else cpu[s]
            busy = start + os_
            cpu[s] = busy
            if wire is None:
                if send_gap:
                    self.next_send[s] = start + g
                a = busy + L
            else:
                w = wire[idx]
                self.next_send[s] = start + g + w
                a = busy + w + L
            arrival[idx] = a if extra is None else a + extra[idx]
        # receives in order of arrival, ties in column order
        if self.ranks.unique(dst):
            recvs = [(slice(None), self.ranks.index(dst))]
        else:
            counts = np.bincount(dst, minlength=self.p)
            by_time = np.argsort(arrival, kind="stable")          # ties: column order
            order = by_time[np.argsort(dst[by_time], kind="stable")]
            pos = np.arange(n) - (np.cumsum(counts) - counts)[dst[order]]
            recvs = [(idx, dst[idx]) for idx in _by_position(order, pos)]
        for idx, d in recvs:
            start = np.maximum(cpu[d], arrival[idx])
            if recv_gap:
                np.maximum(start, self.next_recv[d], out=start)
                self.next_recv[d] = start + g      # (start - wire) + g + wire
            cpu[d] = start + or_


# ----------------------------------------------------------------------------- α-β and NBL
def _step_costs(kind, model, p, src, dst, start, count, nbytes, combine, load, extra):
    """Per-rank communication and combining time of one step (s), α-β or NBL rules."""
    if kind == "alphabeta":
        t = model.alpha + model.beta * (nbytes() if load is None else nbytes() * load)
        comm = np.maximum(np.bincount(src, t, minlength=p), np.bincount(dst, t, minlength=p))
        comp = None
    else:
        links = np.bincount(src, minlength=p) + np.bincount(dst, minlength=p)
        size = np.zeros(p)
        eff = count if load is None else count * load
        np.maximum.at(size, src, eff)
        np.maximum.at(size, dst, eff)
        table = np.array([model.f_of(int(L)) if used else 0.0
                          for L, used in enumerate(np.bincount(links) > 0)])
        f = table[links]
        comm = links * model.alpha + f * model.beta * size
        comp = _combine_time(model, p, dst, start, count, combine)
    if extra is not None:
        late = np.zeros(p)
        np.maximum.at(late, dst, extra)
        comm = comm + late
    return comm, comp


def _combine_time(model: NBLModel, p, dst, start, count, combine):
    """Per rank: one (k+1)-way combine of ``count`` elements per block that k combining
    transfers of the step bring (blocks keyed by start and count)."""
    sel = np.flatnonzero(combine)
    if sel.size == 0:
        return None
    d, s, c = dst[sel], start[sel], count[sel]
    order = np.lexsort((c, s, d))
    d, s, c = d[order], s[order], c[order]
    new = np.ones(d.size, dtype=bool)
    new[1:] = (d[1:] != d[:-1]) | (s[1:] != s[:-1]) | (c[1:] != c[:-1])
    first = np.flatnonzero(new)
    k = np.diff(np.append(first, d.size))
    table = np.array([model.combine_cost(kk + 1) if used else 0.0
                      for kk, used in enumerate(np.bincount(k) > 0)])
    per_elem = table[k]
    return np.bincount(d[first], per_elem * c[first], minlength=p)


def _sync_finish(a: ArraySchedule, entry, ends) -> np.ndarray:
    """Per rank: the end (``ends[t]``) of the last step t it takes part in (its entry time
    if none), found from the last step backwards (usually the last step has every rank)."""
    finish = entry.copy()
    todo = np.ones(a.nprocs, dtype=bool)
    for t in range(a.nsteps - 1, -1, -1):
        step = a.steps[t]
        if len(step) == 0:
            continue
        hit = np.zeros(a.nprocs, dtype=bool)
        hit[step.src] = True
        hit[step.dst] = True
        hit &= todo
        finish[hit] = ends[t]
        todo &= ~hit
        if not todo.any():
            break
    return finish


# ----------------------------------------------------------------------------- entry point
def simulate(schedule, model, *, semantics: str = "sync", skew=None, noise=None, seed=None,
             topology=None, elem_bytes: int = 8) -> SimResult:
    """Time of ``schedule`` on ``model`` (see the module docstring for every rule).

    schedule: an ArraySchedule or a Schedule.  model: AlphaBeta, LogP, LogGP, NBLModel
    or NBLMachine.  semantics: "sync" or "dataflow".  skew: entry time of every rank
    (s, scalar or one per rank, >= 0).  noise: mean extra latency per message (s, >= 0;
    exponential), drawn with ``numpy.random.default_rng(seed)``.  topology: see the module
    docstring.  elem_bytes: bytes per vector element (α-β and LogGP).
    """
    a = as_arrays(schedule)
    kind = _model_kind(model)
    if kind == "nbl" and isinstance(model, NBLMachine):
        model = NBLModel.from_machine(model)
    if semantics not in SEMANTICS:
        raise ValueError(f"semantics must be one of {', '.join(SEMANTICS)}; got {semantics!r}")
    elem_bytes = positive_int("elem_bytes", elem_bytes)
    p = a.nprocs
    if topology is not None and getattr(topology, "nprocs", None) != p:
        raise ValueError(f"topology has {getattr(topology, 'nprocs', None)} nodes, "
                         f"the schedule {p} ranks")
    entry = np.zeros(p) if skew is None else _check_times("skew", skew, p)
    rng = None
    if noise is not None:
        noise = positive("noise", noise, allow_zero=True)
        rng = np.random.default_rng(seed)
    sync = semantics == "sync"
    clock = entry.copy()                    # dataflow: per-rank clock; sync: per-rank finish
    now = float(entry.max(initial=0.0))     # sync: the end of the previous step
    step_times = np.zeros(a.nsteps) if sync else None
    step_ends = np.full(a.nsteps, now)
    state = _LogPState(model, p) if kind == "logp" else None
    messages = nbytes_total = 0
    for t, step in enumerate(a.steps):
        src, dst, count, combine, start = step.src, step.dst, step.count, step.combine, step.start
        local = src == dst
        if local.any():
            keep = ~local
            src, dst, count, combine, start = src[keep], dst[keep], count[keep], combine[keep], start[keep]
        n = src.size
        messages += n
        def nb(count=count):
            return count.astype(float) * elem_bytes
        nbytes_total += int(count.sum()) * elem_bytes
        if n == 0:
            step_ends[t] = now
            continue
        load = _loads(topology, src, dst)
        extra = rng.exponential(noise, n) if rng is not None and noise > 0 else None
        if kind == "logp":
            cpu = np.full(p, now) if sync else clock
            state.step(cpu, src, dst, nb, load, extra)
            if sync:        # ranks outside the step are still at `now`
                end = max(now, float(cpu[src].max()), float(cpu[dst].max()))
                step_times[t], now = end - now, end
                step_ends[t] = now
            else:
                clock = cpu
            continue
        comm, comp = _step_costs(kind, model, p, src, dst, start, count, nb, combine, load, extra)
        if sync:
            dt = float(comm.max()) + (float(comp.max()) if comp is not None else 0.0)
            step_times[t], now = dt, now + dt
            step_ends[t] = now
        else:
            b = clock
            end = b + comm
            msg_end = np.maximum(b[src], b[dst]) + np.maximum(comm[src], comm[dst])
            np.maximum.at(end, src, msg_end)
            np.maximum.at(end, dst, msg_end)
            clock = end if comp is None else end + comp
    finish = _sync_finish(a, entry, step_ends) if sync else clock
    return SimResult(float(finish.max(initial=0.0)), finish, a.nsteps, messages, nbytes_total,
                     step_times, semantics, type(model).__name__)
