"""A vectorised simulator: the time of a schedule under α-β, NBL f(L), LogP or LogGP.

:func:`simulate` takes a schedule in either form (an
:class:`~netmodels.algorithms.arrays.ArraySchedule`, or a per-transfer
:class:`~netmodels.algorithms.schedule.Schedule`, converted) and works on the columns
of one step at a time with numpy: no Python object, no Python loop per transfer.
Times are in seconds, message sizes ``count * elem_bytes`` bytes (``elem_bytes`` per
vector element) for every model.
A transfer with ``src == dst`` is local work: no message, no time.  A receive offset
column, if a schedule carries one, plays no part in the time.

**Three semantics.**  *sync* (loosely synchronous, the NBL paper's assumption): every
rank performs step t together; step t begins when the last rank has finished step
t - 1 (step 0 when the last rank has entered, see ``skew``), and every rank that
takes part in a step finishes at its end.  *stepwise* (step-ordered): every rank has its own clock and begins its
part of step t as soon as it has finished its part of step t - 1; within a step it
does its sends, then its receives, and it touches no message of step t + 1 before it
has finished step t; a rank without a transfer in a step is not held up by it.  This is
an MPI program that posts step t's receives only after its sends and handles a message
only inside its matching receive (no progress thread, rendezvous-like).  *loggopsim*
(LogGOPSim's rules, :mod:`netmodels.simulate.arrival`; the LogP family only): a message
is handled as soon as it has arrived and the CPU and the receive gap allow, oldest
first, even before its receive is posted and before the rank's own later sends; this is
an MPI library that progresses eager messages on arrival.  The *loggopsim* semantics
equals LogGOPSim to the picosecond on the comparisons of ``book/data/loggopsim_reference.json``
and ``loggopsim_exact.json``; it runs event by event (a compiled loop, time in integer
picoseconds) and is the slowest of the three.  ``receives`` says when its ranks post a
step's receives: after their last send of the step, or with their first.

**Models.**  The engine knows no model: it asks ``model.step_rule(schedule)`` for the
model's step rule (:mod:`netmodels.models.step`) and hands it every step.  A
step-synchronous rule (α-β :class:`~netmodels.models.alphabeta.AlphaBeta`, NBL
:class:`~netmodels.models.nbl.NBLModel`, BSP, two-level α-β, LoP) answers per-rank communication and combining times ``comm``
and ``comp``.  Under *sync* such a step costs ``max comm + max comp`` over the ranks.
Under *stepwise* a message from s to d starts when both have begun the step
(``max(b_s, b_d)``, b the rank's begin) and ends ``max(comm_s, comm_d)`` later; a rank
ends its communication at ``max(b + comm, end of each of its messages)`` and then
combines for ``comp``.  A clocked rule (the LogP family,
:class:`~netmodels.models.logp.LogPClock`) moves per-rank CPU clocks through the step
itself; under *sync* every rank starts the step at the end of the previous one.
Each model's docstring states its rule.

**Software** (``software``): each rank's own time beside the network (a program's entry, its
loop, copying or combining what arrives), as plain numbers the caller prices
(:class:`~netmodels.simulate.software.Software`), combined with any model's rule in the same
walk: a rank enters ``start`` later, and its time of step t follows its own part of the step
(under *sync* a step-synchronous step lasts ``max comm + max (comp + software)``).

**Contention** (``topology``): an object with ``nprocs``, ``nlinks`` and
``routes(src, dst) -> (msg_index, link_id)`` (message ``i`` of the arrays uses link
``link_id[k]`` for every k with ``msg_index[k] == i``).  The load of a link in a step
is the number of the step's messages routed over it; a message's bandwidth term
(``β m`` in α-β, ``(m - 1) G`` in LogGP, ``β S`` in NBL) is multiplied by the largest
load on its links (1 if it uses none), and the engine also gives the rule the most
bytes one of a message's links carries (α-β uses it: the busiest link sets a floor).
LogP's small messages have no bandwidth term: contention does not slow them.

**Skew and noise.**  ``skew`` (s, one per rank, >= 0) is when each rank enters the
schedule (default 0).  ``noise`` (s, >= 0) is the mean of an extra latency drawn for
every message from an exponential distribution (``numpy.random.default_rng(seed)``,
one draw per message in step and column order): it delays the message's arrival
(clocked rules) or is added to the receiver's communication time of the step
(step-synchronous rules; the largest draw of its incoming messages).

**Trace** (``trace=True``): the result also holds a :class:`~netmodels.simulate.trace.Trace`,
every rank's operations with their start, end and kind (the model term that prices them):
per message under the LogP family (the times its clocked rule or LogGOPSim's rules give),
per rank and step under a step-synchronous rule: ``comm`` as ``wire`` (under *sync* from the
step's start; under *stepwise* ending where the rank's communication of the step ends, so that
the time it waits for a later partner is left blank before it), then ``comp`` as ``combine``
(under *sync* after the step's longest ``comm``).  A trace that would not fit in the memory available is refused, in one
line, before the run starts (:func:`netmodels.simulate.trace.refusal`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._check import positive, positive_int
from ..algorithms.arrays import ArraySchedule, as_arrays
from ..models.step import all_messages, steps
from . import trace as tr
from .software import Software

SEMANTICS = ("sync", "stepwise", "loggopsim")
#: bytes per vector element unless told otherwise (float64): every caller's default
ELEM_BYTES = 8
#: the most elements of ELEM_BYTES whose bytes a signed 64-bit integer holds
MAX_ELEMENTS = (2**63 - 1) // ELEM_BYTES


@dataclass(frozen=True, eq=False)
class SimResult:
    """What :func:`simulate` predicts (seconds, bytes).

    time: completion of the last rank (s).  finish: per-rank finish times (s): under
    *sync* the end of the last step the rank takes part in (its entry time if none).
    steps, messages, bytes: the schedule's steps, messages (``src != dst``) and bytes
    sent.  step_times: under *sync* the duration of every step (s; the first step is
    counted from the last rank's entry), None under *stepwise* and *loggopsim*.  trace:
    the :class:`~netmodels.simulate.trace.Trace` when asked, else None.
    """

    time: float
    finish: np.ndarray
    steps: int
    messages: int
    bytes: int
    step_times: np.ndarray | None
    semantics: str
    model: str
    trace: "tr.Trace | None" = None     #: every rank's operations, when asked (``trace=True``)


# ----------------------------------------------------------------------------- helpers
def _check_times(name: str, values, p: int) -> np.ndarray:
    a = np.asarray(values, dtype=float)
    if a.ndim == 0:
        a = np.full(p, float(a))
    if a.shape != (p,) or np.any(~np.isfinite(a)) or np.any(a < 0):
        raise ValueError(f"{name} must be a time >= 0 or {p} finite times >= 0 (s), got shape {a.shape}")
    return a.copy()


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


# ----------------------------------------------------------------------------- traces
class _StepTrace:
    """What a trace (``out``, a :class:`~netmodels.simulate.trace.Collector`) records of step
    ``t``: a clocked rule's messages, or a step-synchronous rule's time per rank."""

    def __init__(self, out: "tr.Collector", t: int, step, model):
        self.out, self.t, self.step, self.model = out, t, step, model

    def messages(self):
        """The ``record`` callback of a clocked rule (:meth:`netmodels.models.logp.LogPClock.advance`)
        for the step's messages: their operations into the trace."""
        out, t, step, model = self.out, self.t, self.step, self.model

        def record(send_ready, send_start, arrival, recv_ready, recv_start):
            send_busy, _, _, recv_wire, recv_busy, _ = model.message_terms(step)
            src, dst = step.src, step.dst
            sent = send_start + send_busy
            first = recv_start - recv_wire                   # the receiver takes the first byte
            comb = getattr(model, "combine", 0.0) * np.where(step.combine, step.count, 0)
            out.add(tr.GAP, src, dst, t, send_ready, send_start)
            out.add(tr.SEND, src, dst, t, send_start, sent, keep_empty=True)
            out.add(tr.WIRE, src, dst, t, sent, first, keep_empty=True)
            out.add(tr.GAP, dst, src, t, np.maximum(recv_ready, arrival - recv_wire), first)
            out.add(tr.BYTES, dst, src, t, first, recv_start)
            out.add(tr.RECV, dst, src, t, recv_start, recv_start + recv_busy - comb, keep_empty=True)
            out.add(tr.COMBINE, dst, src, t, recv_start + recv_busy - comb, recv_start + recv_busy)
        return record

    def ranks(self, comm, comm_start, comp, comp_start) -> None:
        """Per rank: ``comm`` as ``wire`` from ``comm_start``, ``comp`` (None: none) as
        ``combine`` from ``comp_start`` (s, per rank or scalar)."""
        ranks = np.flatnonzero(comm > 0)
        self.out.add(tr.WIRE, ranks, -1, self.t, _at(comm_start, ranks), _at(comm_start, ranks) + comm[ranks])
        if comp is not None:
            ranks = np.flatnonzero(comp > 0)
            self.out.add(tr.COMBINE, ranks, -1, self.t, _at(comp_start, ranks), _at(comp_start, ranks) + comp[ranks])


def _at(x, idx):
    return x if np.ndim(x) == 0 else x[idx]


# ----------------------------------------------------------------------------- walking the steps
def walk_steps(a: ArraySchedule, model, rule, sync: bool, entry: np.ndarray, rng, noise, topology,
               elem_bytes: int, progress, out, software=None):
    """The *sync* or *stepwise* semantics: every step of ``a`` in order, priced by the model's
    step ``rule`` plus, if given, each rank's own time of the step (``software``, a checked
    :class:`~netmodels.simulate.software.Software`; see the module docstring).  Returns
    ``(finish, step_times, messages, bytes)``: per-rank finish times (s), the steps' durations
    under *sync* (s; None under *stepwise*), the messages and bytes sent."""
    clock = entry.copy()                                    # stepwise: each rank's own time
    ends = np.full(a.nsteps + 1, float(entry.max(initial=0.0)))    # sync: ends[t + 1], when step t ends
    messages = nbytes_total = 0
    kept = None     # the last step's arrays, freed once the next step has made its own: freed before, malloc
    #                 gives the heap's top back and faults it in again every step (4 times slower at 2^18 ranks)
    for t, step in enumerate(steps(a, elem_bytes, topology)):
        if progress is not None:
            progress(1)
        own = None if software is None else software.at(t, a.nprocs)    # per rank (s)
        extra = None
        if step is not None:                                # None: local copies only, no message
            messages += step.src.size
            nbytes_total += int(step.count.sum()) * elem_bytes
            extra = _noise(rng, noise, step.src.size)
        trace = None if out is None else _StepTrace(out, t, step, model)
        if sync:
            ends[t + 1], kept = sync_step(rule, step, ends[t], own, extra, trace)
        else:
            clock, kept = stepwise_step(rule, step, clock, own, extra, trace)
    if not sync:
        return clock, None, messages, nbytes_total
    return _sync_finish(a, entry, ends[1:]), np.diff(ends), messages, nbytes_total


def sync_step(rule, step, now, own, extra, trace):
    """*sync*: every rank begins ``step`` at ``now`` (s, when the previous step ended); returns
    when the step ends (s): after its busiest rank's ``comm``, then its busiest rank's ``comp``
    and own time, or when the last CPU clock of a clocked rule stops; and the step's arrays."""
    if step is None or (rule.clocked and step.src.size == 0):     # no message: the ranks' own time
        return (now if own is None else now + float(own.max(initial=0.0))), own
    if rule.clocked:
        cpu = np.full(step.nprocs, now)
        clocked_step(rule, step, cpu, own, extra, trace)
        return float(cpu.max()), cpu
    comm, comp = step_costs(rule, step, own, extra)
    longest = float(comm.max(initial=0.0))
    if trace is not None:
        trace.ranks(comm, now, comp, now + longest)
    return now + (longest + (float(comp.max()) if comp is not None else 0.0)), (comm, comp)


def stepwise_step(rule, step, clock, own, extra, trace):
    """*stepwise*: each rank begins ``step`` at its own ``clock`` (s per rank); returns the
    clocks at the end of its part.  A message from s to d starts when both have begun and
    lasts the longer of their ``comm``; a rank's communication ends with its last message,
    then it combines (``comp``) and spends its own time.  And the step's arrays."""
    if step is None or (rule.clocked and step.src.size == 0):     # no message: the ranks' own time
        return (clock if own is None else clock + own), clock
    if rule.clocked:
        clocked_step(rule, step, clock, own, extra, trace)
        return clock, clock
    comm, comp = step_costs(rule, step, own, extra)
    src, dst = step.src, step.dst
    end = clock + comm
    msg_end = np.maximum(clock[src], clock[dst]) + np.maximum(comm[src], comm[dst])
    np.maximum.at(end, src, msg_end)
    np.maximum.at(end, dst, msg_end)
    if trace is not None:
        trace.ranks(comm, end - comm, comp, end)
    return (end if comp is None else end + comp), (comm, comp, end, msg_end)


def clocked_step(rule, step, cpu, own, extra, trace) -> None:
    """A clocked rule (the LogP family): its CPU and NIC clocks move ``cpu`` (s per rank, in
    place) through the step's sends and receives; then each rank spends its own time."""
    rule.advance(cpu, step, extra, None if trace is None else trace.messages())
    if own is not None:
        cpu += own


def step_costs(rule, step, own, extra):
    """A step-synchronous rule's ``(comm, comp)`` per rank (s): its own time added to ``comp``,
    and a receiver's communication lengthened by the largest noise of its incoming messages."""
    comm, comp = rule.costs(step)
    if own is not None:
        comp = own if comp is None else comp + own
    if extra is not None:
        late = np.zeros(step.nprocs)
        np.maximum.at(late, step.dst, extra)
        comm = comm + late
    return comm, comp


def _noise(rng, noise, n: int):
    """The extra latency of ``n`` messages (s, exponential of mean ``noise``), or None."""
    return rng.exponential(noise, n) if rng is not None and noise > 0 and n else None


# ----------------------------------------------------------------------------- LogGOPSim's rules
def _loggopsim(a, model, rule, entry, rng, noise, topology, elem_bytes, progress, receives,
               out=None) -> SimResult:
    """The *loggopsim* semantics (:mod:`netmodels.simulate.arrival`): the LogP family only."""
    from .arrival import Messages, run

    if not rule.clocked:
        from netmodels.models import table      # the family's names, as --model spells them

        family = [n for n in table.names() if table.get(n).semantics == "stepwise"]
        raise ValueError("semantics 'loggopsim' takes a model of the LogP family (LogP, LogGP, LogGOPS, PLogP; "
                         f"in the table: {', '.join(family)}), got {type(model).__name__}")
    t, every = all_messages(a, elem_bytes, topology)    # the terms are per message: one call
    held = Messages(t.size)
    nbytes_total = 0
    split = None
    if every is not None:
        nbytes_total = int(every.count.sum()) * elem_bytes
        extra = rng.exponential(noise, t.size) if rng is not None and noise > 0 else None   # drawn in step order
        terms = model.message_terms(every)
        rendezvous = model.rendezvous(every) if hasattr(model, "rendezvous") else None
        held.add(t, every, terms, extra, rendezvous)
        if out is not None:             # what a trace needs beyond the loop: (m - 1) G and combining, in ticks
            comb = getattr(model, "combine", 0.0) * np.where(every.combine, every.count, 0)
            split = (_ticks_of(terms[3], t.size), _ticks_of(comb, t.size))
    del t, every                       # held has what the event loop needs: the rest is freed before it runs
    if progress is not None:
        progress(a.nsteps)
    if out is None:
        finish = run(a.nprocs, held, entry, receives)
    else:
        from . import _events

        rec = np.full((_events.REC_ROWS, held.n), -1, np.int64)
        finish = run(a.nprocs, held, entry, receives, rec)
        if held.n:
            _record_loggopsim(out, held, rec, *split)
    return SimResult(float(finish.max(initial=0.0)), finish, a.nsteps, held.n, nbytes_total,
                     None, "loggopsim", type(model).__name__,
                     None if out is None else out.trace("loggopsim", type(model).__name__))


def _ticks_of(x, n: int) -> np.ndarray:
    from .arrival import ticks

    return ticks(np.broadcast_to(np.asarray(x, dtype=float), (n,)))


def _record_loggopsim(out: "tr.Collector", held, rec, wire_t, comb_t) -> None:
    """The operations of every message from the event loop's record ``rec`` (ticks, rows of
    :mod:`netmodels.simulate._events`): see :mod:`netmodels.simulate.trace`."""
    from . import _events as ev
    from .arrival import TICK

    src, dst, step, row, table, _ = held.arrays()
    s = lambda x: x * TICK  # noqa: E731
    sent = rec[ev.REC_SEND] + table[row, 0]
    taken = rec[ev.REC_TAKEN]
    hold = taken + table[row, 3]
    unexpected = rec[ev.REC_UNEXPECTED] == 1
    out.add(tr.GAP, src, dst, step, s(rec[ev.REC_SEND_READY]), s(rec[ev.REC_SEND]))
    out.add(tr.SEND, src, dst, step, s(rec[ev.REC_SEND]), s(sent), keep_empty=True)
    for kind, m in ((tr.WIRE, ~unexpected), (tr.UNEXPECTED, unexpected)):
        out.add(kind, src[m], dst[m], step[m], s(sent[m]), s(taken[m]), keep_empty=True)
    out.add(tr.GAP, dst, src, step, s(rec[ev.REC_TAKE_READY]), s(taken))
    out.add(tr.BYTES, dst, src, step, s(taken), s(taken + wire_t))
    out.add(tr.RECV, dst, src, step, s(taken + wire_t), s(hold - comb_t), keep_empty=True)
    out.add(tr.COMBINE, dst, src, step, s(hold - comb_t), s(hold))
    m = rec[ev.REC_POSTED] >= 0
    out.add(tr.LATE, dst[m], src[m], step[m], s(rec[ev.REC_POSTED][m]), s(rec[ev.REC_POSTED][m]),
            keep_empty=True)


# ----------------------------------------------------------------------------- entry point
def _checked_run(schedule, model, semantics, elem_bytes, topology):
    """``(a, semantics, elem_bytes)``: the schedule as arrays, the semantics (None: the model's
    own) and the element size, each checked (ValueError naming the argument)."""
    if not callable(getattr(model, "step_rule", None)):
        raise ValueError("model must be a model with a step rule (model.step_rule(schedule)): an AlphaBeta, "
                         f"NBLModel, LogP, LogGP, PLogP, BSP, TwoLevel or LoP; got {type(model).__name__}")
    a = as_arrays(schedule)
    if semantics is None:
        semantics = getattr(model, "semantics", "sync")
    if semantics not in SEMANTICS:
        raise ValueError(f"semantics must be one of {', '.join(SEMANTICS)}; got {semantics!r}")
    elem_bytes = positive_int("elem_bytes", elem_bytes)
    if a.nelems * elem_bytes > 2**63 - 1:
        raise ValueError(f"N = {a.nelems} elements of {elem_bytes} B is {a.nelems * elem_bytes} bytes, "
                         "more than a signed 64-bit integer holds")
    if topology is not None and getattr(topology, "nprocs", None) != a.nprocs:
        raise ValueError(f"topology has {getattr(topology, 'nprocs', None)} nodes, "
                         f"the schedule {a.nprocs} ranks")
    return a, semantics, elem_bytes


def _checked_software(software, a: ArraySchedule, semantics: str, trace: bool) -> Software:
    """``software`` checked against the schedule ``a`` and refused under *loggopsim* and with a trace."""
    if not isinstance(software, Software):
        raise ValueError(f"software must be a netmodels.simulate.software.Software or None, got {software!r}")
    if semantics == "loggopsim" or trace:
        raise ValueError("software is combined under the sync and stepwise semantics without a trace; "
                         f"got semantics {semantics!r}{' with trace' if trace else ''}")
    return software.checked(a.nsteps, a.nprocs)


def _collector(a: ArraySchedule, rule, memory) -> "tr.Collector":
    """An empty trace of ``a``'s ranks, refused (ValueError, one line) when its rows would not fit
    in ``memory`` (bytes; None: what the system says is available)."""
    if memory is None:
        from ..commandline import available_memory
        memory = available_memory()
    refused = tr.refusal(tr.estimate_rows(a, rule.clocked), a.nprocs, memory)
    if refused:
        raise ValueError(refused)
    return tr.Collector(a.nprocs)


def simulate(schedule, model, *, semantics: str | None = None, skew=None, noise=None, seed=None,
             topology=None, elem_bytes: int = ELEM_BYTES, progress=None,
             receives: str = "after-sends", trace: bool = False, memory: float | None = None,
             software: Software | None = None) -> SimResult:
    """Time of ``schedule`` on ``model`` (see the module docstring for every rule).

    schedule: an ArraySchedule or a Schedule.  model: any model with a step rule
    (``model.step_rule(schedule)``, :mod:`netmodels.models.step`): AlphaBeta, NBLModel,
    LogP, LogGP, PLogP, BSP, TwoLevel, LoP.  semantics: "sync", "stepwise"
    or "loggopsim" (the LogP family only); None (default): the model's own
    (``model.semantics``, as :mod:`netmodels.models.table` lists it).  skew: entry time of every rank (s, scalar or one per rank, >= 0).
    noise: mean extra latency per message (s, >= 0; exponential), drawn with
    ``numpy.random.default_rng(seed)``.  topology: see the module docstring.
    elem_bytes: bytes per vector element (default :data:`ELEM_BYTES`, 8: float64).  progress: called with 1 after every step (e.g. a
    tqdm bar's ``update``).  receives (*loggopsim* only): when a rank posts a step's
    receives, "after-sends" (after its last send of the step, default) or "with-sends"
    (with its first send: pre-posted), :data:`netmodels.simulate.arrival.RECEIVES`.
    trace: also return every rank's operations (``result.trace``, see the module docstring),
    refused (ValueError, one line) before the run when they would not fit in ``memory``
    (bytes; default: what the system says is available).
    software: each rank's own time beside the network (a :class:`~netmodels.simulate.software.Software`:
    per rank at the start and per step, s), combined with the model's rule in the same walk under
    *sync* and *stepwise* as :mod:`netmodels.simulate.software` says; refused under *loggopsim* and
    with ``trace``.  None (default): the network alone.
    """
    a, semantics, elem_bytes = _checked_run(schedule, model, semantics, elem_bytes, topology)
    entry = np.zeros(a.nprocs) if skew is None else _check_times("skew", skew, a.nprocs)
    rng = None
    if noise is not None:
        noise = positive("noise", noise, allow_zero=True)
        rng = np.random.default_rng(seed)
    if not isinstance(trace, bool):
        raise ValueError(f"trace must be True or False, got {trace!r}")
    if software is not None:
        software = _checked_software(software, a, semantics, trace)
        entry = entry + software.start
    rule = model.step_rule(a)
    out = _collector(a, rule, memory) if trace else None
    if semantics == "loggopsim":
        return _loggopsim(a, model, rule, entry, rng, noise, topology, elem_bytes, progress, receives, out)
    if receives != "after-sends":
        raise ValueError(f"receives={receives!r} is a choice of the loggopsim semantics; under {semantics!r} "
                         "a rank's receives of a step always follow its sends")
    sync = semantics == "sync"
    finish, step_times, messages, nbytes_total = walk_steps(a, model, rule, sync, entry, rng, noise, topology,
                                                            elem_bytes, progress, out, software)
    return SimResult(float(finish.max(initial=0.0)), finish, a.nsteps, messages, nbytes_total,
                     step_times, semantics, type(model).__name__,
                     None if out is None else out.trace(semantics, type(model).__name__))
