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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._check import positive, positive_int
from ..algorithms.arrays import ArraySchedule, as_arrays
from ..models.step import all_messages, steps

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
    counted from the last rank's entry), None under *stepwise* and *loggopsim*.
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


# ----------------------------------------------------------------------------- walking the steps
# ----------------------------------------------------------------------------- LogGOPSim's rules
def _loggopsim(a, model, rule, entry, rng, noise, topology, elem_bytes, progress, receives) -> SimResult:
    """The *loggopsim* semantics (:mod:`netmodels.simulate.arrival`): the LogP family only."""
    from .arrival import Messages, run

    if not rule.clocked:
        raise ValueError("semantics 'loggopsim' takes a model of the LogP family (LogP, LogGP, PLogP), "
                         f"got {type(model).__name__}")
    t, every = all_messages(a, elem_bytes, topology)    # the terms are per message: one call
    held = Messages(t.size)
    nbytes_total = 0
    if every is not None:
        nbytes_total = int(every.count.sum()) * elem_bytes
        extra = rng.exponential(noise, t.size) if rng is not None and noise > 0 else None   # drawn in step order
        held.add(t, every, model.message_terms(every), extra)
    del t, every                       # held has what the event loop needs: the rest is freed before it runs
    if progress is not None:
        progress(a.nsteps)
    finish = run(a.nprocs, held, entry, receives)
    return SimResult(float(finish.max(initial=0.0)), finish, a.nsteps, held.n, nbytes_total,
                     None, "loggopsim", type(model).__name__)


# ----------------------------------------------------------------------------- entry point
def simulate(schedule, model, *, semantics: str | None = None, skew=None, noise=None, seed=None,
             topology=None, elem_bytes: int = ELEM_BYTES, progress=None,
             receives: str = "after-sends") -> SimResult:
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
    """
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
    p = a.nprocs
    if topology is not None and getattr(topology, "nprocs", None) != p:
        raise ValueError(f"topology has {getattr(topology, 'nprocs', None)} nodes, "
                         f"the schedule {p} ranks")
    entry = np.zeros(p) if skew is None else _check_times("skew", skew, p)
    rng = None
    if noise is not None:
        noise = positive("noise", noise, allow_zero=True)
        rng = np.random.default_rng(seed)
    rule = model.step_rule(a)
    if semantics == "loggopsim":
        return _loggopsim(a, model, rule, entry, rng, noise, topology, elem_bytes, progress, receives)
    if receives != "after-sends":
        raise ValueError(f"receives={receives!r} is a choice of the loggopsim semantics; under {semantics!r} "
                         "a rank's receives of a step always follow its sends")
    sync = semantics == "sync"
    clock = entry.copy()                    # stepwise: per-rank clock
    now = float(entry.max(initial=0.0))     # sync: the end of the previous step
    step_times = np.zeros(a.nsteps) if sync else None
    step_ends = np.full(a.nsteps, now)
    messages = nbytes_total = 0
    for t, step in enumerate(steps(a, elem_bytes, topology)):
        if progress is not None:
            progress(1)
        if step is None:
            step_ends[t] = now
            continue
        n = step.src.size
        messages += n
        nbytes_total += int(step.count.sum()) * elem_bytes
        extra = rng.exponential(noise, n) if rng is not None and noise > 0 and n else None
        if rule.clocked:
            if n == 0:
                step_ends[t] = now
                continue
            cpu = np.full(p, now) if sync else clock
            rule.advance(cpu, step, extra)
            if sync:        # ranks outside the step are still at `now`
                end = max(now, float(cpu[step.src].max()), float(cpu[step.dst].max()))
                step_times[t], now = end - now, end
                step_ends[t] = now
            else:
                clock = cpu
            continue
        comm, comp = rule.costs(step)
        if extra is not None:
            late = np.zeros(p)
            np.maximum.at(late, step.dst, extra)
            comm = comm + late
        if sync:
            dt = float(comm.max(initial=0.0)) + (float(comp.max()) if comp is not None else 0.0)
            step_times[t], now = dt, now + dt
            step_ends[t] = now
        else:
            b = clock
            end = b + comm
            src, dst = step.src, step.dst
            msg_end = np.maximum(b[src], b[dst]) + np.maximum(comm[src], comm[dst])
            np.maximum.at(end, src, msg_end)
            np.maximum.at(end, dst, msg_end)
            clock = end if comp is None else end + comp
    finish = _sync_finish(a, entry, step_ends) if sync else clock
    return SimResult(float(finish.max(initial=0.0)), finish, a.nsteps, messages, nbytes_total,
                     step_times, semantics, type(model).__name__)
