"""What every collective front door (allreduce, barrier, broadcast, allgather, alltoall) shares.

The algorithms a front door accepts are the registry's for its collective, and ``"mpi"``
(:mod:`._algorithms`: :func:`choices`, :func:`algorithm_of`, :func:`resolve`,
:func:`schedule_of`, re-exported here).

A front door call has three parts, each done here once for all of them (what they keep per
communicator, the agreement's requests and the executor cache, is :mod:`._state`'s):

1. **validation**, cached: ``door.plan(key, validate)`` returns the :class:`Plan`
   that ``validate(*key)`` made the first time this process saw ``key`` (the raw,
   hashable arguments); ``validate`` raises ValueError naming the bad argument.  A call
   that repeats the last one accepted with ``out`` (the same comm, ``x`` and ``out`` objects,
   equal arguments, x's and out's dtype, shape and flags unchanged: :meth:`FrontDoor.again`,
   :class:`~._out.Repeat`) takes its plan and executor without building the key, checking
   ``out`` or looking the executor up: at P = 1, 1 double, allreduce through the door costs
   about 11,400 instructions a call instead of 15,100 (the executor's copy and run: 3,500;
   callgrind, independent of the load).
2. **agreement** (``check=True``, the default), in ``door.admit(comm, plan, check)``:
   one ``Allreduce(MAX)`` of two int64 words, ``[w, -w]``, where ``w`` is a 62-bit
   hash of the plan's normalised arguments (data size included).  The maxima are
   ``[max w, -min w]``, so every rank learns, from the same two numbers, whether all
   ranks hold the same ``w``.  A rank whose validation failed sends ``[E, E]`` with
   ``E = 2**62`` larger than any hash (:meth:`FrontDoor.fail`), so every rank learns
   that too.  Only then, on the rare error path, a second collective (an
   ``allgather`` of the failure messages or of the arguments, which every rank
   enters because every rank saw the same maxima) finds which rank was wrong or
   which argument differs, so that every rank raises a ``ValueError`` with a useful
   message; nobody is left waiting.  The ``Allreduce`` is *persistent* (``Allreduce_init``
   on a private duplicate of the communicator, made at the first checked call: one
   ``Start`` and one ``Wait`` per call).  At P = 2 it is one exchange of the two words
   (``Send_init``/``Recv_init``; each rank takes the maxima of its own and the other's), and
   a small first step of the schedule travels inside it (:meth:`Executor.start
   <mpi_exercises.executor.Executor.start>`'s ``inline``): one exchange, not two.
3. **executor cache**, also in ``admit``: the object ``plan.build(comm)`` made (an
   :class:`~mpi_exercises.executor.Executor`: schedule, buffers, persistent
   requests), cached on the communicator itself as an MPI attribute, keyed by the
   normalised arguments (by their word, the key kept beside the executor to tell
   two plans of one word apart); the least recently used of more than :data:`~._state.CACHE_SIZE`
   is freed, and freeing the communicator frees them all.  Building is collective,
   so hits and misses must be the same on every rank: they are, because the key is
   the normalised plan (equal on every rank once the agreement passed, even where
   the raw arguments differ, e.g. ``mesh=None`` against the mesh it stands for) and
   the cache changes only in calls on that communicator.

Why not one agreement per cached executor, skipping it on a cache hit?  Because
a hit on one rank says nothing about the others: if rank 0 calls with cached
arguments A and rank 1 with arguments B, rank 0 would start A's schedule while
rank 1 enters the agreement (or B's schedule), and both wait forever.  Only a
collective that every rank enters whatever its arguments can turn disagreement
into an error, so the default pays one small ``Allreduce`` per call.

**The agreement and the call travel together.**  On a cache hit (the common case: a time
loop), ``enter``'s ``prime`` starts the call (:meth:`Executor.start
<mpi_exercises.executor.Executor.start>`) right after the agreement's ``Start``, before its
``Wait``: the local work up to the first messages (x copied in), and the first sends where a
rank's first messages are sends only; the receives are posted only once every rank agreed (:meth:`Executor.finish
<mpi_exercises.executor.Executor.finish>`), so the schedule's first messages cross while the
agreement does, and a call costs about one message latency less.  At P = 2 a first step of at
most :data:`~mpi_exercises.executor.INLINE_BYTES` each way goes inside the agreement's
messages instead, applied only once the words agree (a refused call then sent nothing else).
Still safe: a rank waits for a schedule's message only after the agreement passed.  When it fails, some ranks
have sent messages that nobody will receive in this call; the error path's ``allgather``
carries, per rank, which cached executor it started at which step, and every rank that
holds that executor receives what was sent to it (:meth:`Executor.abandon
<mpi_exercises.executor.Executor.abandon>`; the executors are the same on every rank, since
every cache changes in agreed calls only), so no stale message is left for a later call
(tests/test_door_overlap_mpi.py replays it, and shows the wrong results without it).  A call
refused this way may have written into ``out`` what it sends first (x's copy; alltoall's own
row), never anything received.

On a communicator of one rank step 2 is skipped (nobody can disagree).
``check=False`` skips step 2: **arguments are then the caller's responsibility.**
Invalid arguments still raise ValueError, but only on the ranks that see them;
the other ranks are not told and may wait forever, and arguments that differ
between ranks are not detected (a hang or a wrong result).  Use it in time loops
whose arguments have been checked by one earlier call with ``check=True``.

One exception: the first call with ``check=False`` on a communicator (of any front
door) still takes part in the agreement, once, with its word marked (its lowest bit
flipped) and its failures told to every rank like a checked call's.  So a rank that
passes ``check=False`` while another passes ``check=True`` (or the other way round) is
found at that first call, and every rank raises a ValueError naming ``check``, instead of
one rank waiting in the agreement while the other waits in the exchange.  After it, the
unchecked calls on that communicator cost nothing: a rank that switches to
``check=True`` alone, once every rank has made its first unchecked call, still waits.

A ``comm`` that is no communicator (None, ``MPI.COMM_NULL``, a freed one) is a
ValueError (:func:`not_a_communicator`), not MPI's error stack.

Importing this module does not start MPI.
"""

from __future__ import annotations

import hashlib

import numpy as np

from ._algorithms import algorithm_of, choices, resolve, schedule_of  # noqa: F401  (re-exported)
from . import _state
from ._out import Repeat, check_out
from ._refusal import gathered, marked
from ._state import CACHE_SIZE, mpi, state_of  # noqa: F401  (re-exported)

#: validated argument sets remembered per front door (the dict is cleared when it grows beyond)
VALID_SIZE = 4096
#: agreement word of a rank whose arguments were invalid: larger than any hash (hashes are < 2**62)
_ERROR = 2**62

def word_of(key) -> int:
    """A 62-bit hash of ``repr(key)``, the same in every process (unlike ``hash``)."""
    return int.from_bytes(hashlib.blake2b(repr(key).encode(), digest_size=8).digest(), "little") >> 2


def not_a_communicator(comm) -> ValueError:
    """The error of a front door given a ``comm`` whose size MPI cannot tell (its callers
    catch that failure, which costs nothing on the common path)."""
    MPI = mpi()
    if not isinstance(comm, MPI.Comm):
        return ValueError(f"comm must be an MPI communicator (mpi4py's MPI.Comm), got {type(comm).__name__}")
    return ValueError("comm is MPI.COMM_NULL (a null or freed communicator): pass a communicator this rank "
                      "belongs to, e.g. MPI.COMM_WORLD")


class Plan:
    """Validated, normalised arguments of one front door call.

    ``key``: hashable normalised arguments (the executor cache key; its hash ``word``
    is what the agreement compares); ``args``: the same as a dict, for messages;
    ``build``: ``build(comm) -> executor`` (None: nothing to cache, e.g. ``algorithm="mpi"``);
    ``data``: whatever else the front door wants to keep (op name, layout, ...).
    """

    __slots__ = ("key", "word", "args", "build", "data")

    def __init__(self, door: str, args: dict, build=None, data=None):
        self.args = args
        self.key = (door,) + tuple(args.values())
        self.word = word_of(self.key)
        self.build = build
        self.data = data


def rank_list(ranks: list[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"ranks 0-2, 5"``, ``[3]`` -> ``"rank 3"`` (ranks ascending)."""
    parts, start = [], None
    for i, r in enumerate(ranks):
        if start is None:
            start = r
        if i + 1 == len(ranks) or ranks[i + 1] != r + 1:
            parts.append(str(start) if start == r else f"{start}-{r}")
            start = None
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(parts)


class FrontDoor:
    """The shared machinery of one collective's front door (``name`` prefixes its messages)."""

    def __init__(self, name: str):
        self.name = name
        self._valid: dict = {}
        self._last = (None, None)               # the raw arguments of enter's last call, their plan
        #: the last call :meth:`enter` accepted with ``args`` and ``out`` (:meth:`again`)
        self._repeat = None
        _state.DOORS.append(self)

    # ------------------------------------------------------------ 1. validation
    def plan(self, key, validate) -> Plan:
        """The :class:`Plan` of raw arguments ``key`` (a tuple): cached, else ``validate(*key)``."""
        try:
            plan = self._valid.get(key)
        except TypeError:                       # an unhashable argument: validate every time
            return validate(*key)
        if plan is None:
            plan = validate(*key)
            if len(self._valid) >= VALID_SIZE:
                self._valid.clear()
            self._valid[key] = plan
        return plan

    # ------------------------------------------------------------ 2. and 3.
    def admit(self, comm, plan: Plan, check: bool = True):
        """Collective: agree on ``plan`` (if ``check``), then return its cached executor
        (built on a miss; None if the plan has nothing to build)."""
        state = state_of(comm)
        if check and not state.alone:
            self._agree(comm, state, plan)
        return None if plan.build is None else state.executor(comm, plan)

    def _agree(self, comm, state, plan: Plan, checked: bool = True) -> None:
        w = plan.word if checked else plan.word ^ 1          # an unchecked call's word is marked
        hi, neg_lo = state.allreduce_max(comm, w, -w)
        if hi != w or neg_lo != -w:
            self._agree_failed(state, plan, hi, checked)

    def array(self, comm, x, check: bool = True) -> np.ndarray:
        """``x`` as a numpy array of numbers; if it cannot be one (a ragged list, strings,
        objects), the ValueError is raised on every rank (if ``check``), not on this one
        alone while the others wait in the agreement."""
        try:
            x = np.asarray(x)
            if x.dtype.kind not in "biufc":
                raise ValueError(f"dtype {x.dtype} is not a number type")
        except (ValueError, TypeError) as exc:
            self.fail(comm, ValueError(f"x must be an array of numbers (a ragged list is not one): {exc}"),
                      check)
        return x

    def arguments(self, comm, x=None, check: bool = True):
        """Every front door's first step: ``(comm's size, x as a numpy array)`` (:meth:`array`;
        ``x`` None: none); ValueError if ``comm`` is no communicator (:func:`not_a_communicator`)."""
        last, state = _state.LAST
        if comm is last and state is not None:  # the last communicator: its size is known
            size = state.size
        else:
            try:
                size = comm.Get_size()
            except Exception:
                raise not_a_communicator(comm) from None
        if x is not None and type(x) is not np.ndarray:
            x = self.array(comm, x, check)
        return size, x

    def again(self, comm, x, out, args, check: bool = True):
        """If this call repeats the last one :meth:`enter` accepted with ``args`` and ``out``: its
        executor, its call started during the agreement (``check``; finish it) or not started.
        None otherwise (then :meth:`enter`).  A repeat: the same comm (not freed since), ``x`` and
        ``out`` objects, ``args`` equal (the caller's other arguments), and what was checked of
        the arrays unchanged (:class:`~._out.Repeat`).  The agreement is the same as
        :meth:`enter`'s, on the plan accepted then; only the prologue (:meth:`arguments`, the key,
        the plan, :func:`check_out`) and the executor's look-up are skipped."""
        r = self._repeat
        if r is None or x is not r.x or out is not r.out or comm is not r.comm:
            return None
        try:
            if args != r.args:
                return None
        except (TypeError, ValueError):         # e.g. an array among them: not compared, not repeated
            return None
        if (x.dtype is not r.xdtype or out.dtype is not r.odtype or x.shape != r.xshape   # (Repeat)
                or out.shape != r.oshape or x.flags.num != r.xflags or out.flags.num != r.oflags):
            return None
        state, ex = r.state, r.ex
        if state.mru is not ex:                 # another executor used since: the cache's order too
            hit = state.cache.get(r.plan.word)
            if hit is None or hit[1] is not ex:
                return None
            state.cache.move_to_end(r.plan.word)
            state.mru = ex
        if not check or state.alone:
            return ex if state.unchecked or state.alone else None   # (the first unchecked call: enter)
        start = state.start
        if start is None:                       # the first checked call on comm: enter
            return None
        w = r.plan.word
        buf = state.buf
        buf[0] = w
        buf[1] = -w
        state.primed = ex
        if r.inline:                            # P = 2: the first step packed into the agreement
            r.prime(r.plan, ex, x, out, state.inline)
            start()
        else:
            start()
            r.prime(r.plan, ex, x, out, None)
        self._agreed(state, r.plan, w)
        return ex

    def enter(self, comm, key, validate, check: bool = True, x=None, out=None, out_shape=None, prime=None,
              args=None):
        """A front door's prologue (collective): the plan of ``key`` (:meth:`plan`), ``out``
        checked against ``out_shape`` and ``x``'s dtype, the agreement (if ``check``) and the
        cached executor (:meth:`admit`).  Returns ``(plan, executor or None, out)``, ``out``
        allocated if None was given (and ``out_shape`` is).  A ValueError on one rank is
        raised on every rank (if ``check``).

        This is every call's path: it does :meth:`plan` and :meth:`admit` inline; the plan is
        the last call's when ``key`` equals its key (a comparison of the same objects costs less
        than hashing), else one dictionary look-up; one more finds the executor (keyed by the
        plan's word, an int).  An executor is built only once every rank agreed.

        The agreement is started as soon as the plan is known (at P = 2 after ``prime``, which
        packs the first step into it), and waited for after the local work (the executor
        look-up, ``out``'s allocation, ``prime``), which so overlaps its messages.  ``prime(plan, executor, x, out, inline)`` (optional): on a cache hit,
        called while the agreement is in flight to start the call
        (:meth:`~mpi_exercises.executor.Executor.start`: its local work up to the first messages,
        and those if they are sends only, so that they travel with the agreement's); the caller
        then ends the call with ``finish`` (``executor.started``; a cached object other than an
        Executor has ``started``, ``sent_step`` and ``abandon`` too).  If the agreement fails,
        every rank gives up the started calls (:func:`~._refusal.gathered`: every message sent is
        received) before raising.

        ``args`` (optional): the caller's arguments that :meth:`again` compares; given (and
        ``out``), the call accepted is kept for it."""
        plan = self._prologue(comm, key, validate, check, x, out, out_shape)
        last, state = _state.LAST
        if comm is not last:
            state = state_of(comm)
        if check and state.alone:
            check = False
        ex = None if plan.build is None else self._cached(state, plan)
        req, inline = (state.start if check else None), None
        if check and req is None:               # the first checked call on comm: create the requests
            self._agree(comm, state, plan)
        elif check:                             # started now, waited for after the local work below
            buf, w = state.buf, plan.word
            buf[0] = w
            buf[1] = -w
            if state.inline is not None and ex is not None and prime is not None and ex.inlines:
                inline = state.inline           # P = 2: started after prime packed the first step in
            else:
                req()
        elif not state.unchecked and not state.alone:   # the first unchecked call on comm: agreed, marked
            state.unchecked = True
            self._agree(comm, state, plan, checked=False)
        if out is None and out_shape is not None:
            out = np.empty(out_shape, dtype=x.dtype)
        if req is not None:
            if prime is not None and ex is not None:
                state.primed = ex
                prime(plan, ex, x, out, inline)
            if inline is not None:
                req()
            self._agreed(state, plan, w)
        if ex is None and plan.build is not None:   # a miss: building is collective, once every rank agreed
            ex = state.executor(comm, plan)
        if args is not None and out is not None and ex is not None and self._last[1] is plan:   # (a hashable key)
            self._repeat = Repeat(comm, state, x, out, args, plan, ex, prime,
                                  state.inline is not None and prime is not None and ex.inlines)
        return plan, ex, out

    @staticmethod
    def _cached(state, plan: Plan):
        """The executor cached for ``plan`` on ``state``'s communicator, marked the last used, or None."""
        hit = state.cache.get(plan.word)
        if hit is None or not (hit[0] is plan.key or hit[0] == plan.key):
            return None
        state.cache.move_to_end(plan.word)
        state.mru = hit[1]
        return hit[1]

    def _agreed(self, state, plan: Plan, w: int) -> None:
        """Wait for the agreement started with word ``w``; raise on every rank if it failed."""
        state.wait()
        got = state.got
        if got[0] != w or got[1] != -w:
            self._agree_failed(state, plan, max(w, got[0]))
        state.primed = None

    def _prologue(self, comm, key, validate, check, x, out, out_shape) -> Plan:
        """:meth:`enter`'s first part: the plan of ``key``, ``out`` checked (ValueError on every
        rank if ``check``)."""
        try:
            last = self._last
            try:                                # a time loop: the last call's arguments (compared, not hashed)
                if key == last[0]:
                    plan = last[1]
                else:
                    plan = self._valid.get(key) or self.plan(key, validate)
                    self._last = (key, plan)
            except (TypeError, ValueError):     # an unhashable or incomparable argument: validate every time
                plan = validate(*key)
            if out is not None:
                check_out(out, out_shape, x.dtype, x)
        except ValueError as exc:
            self.fail(comm, exc, check)
        return plan

    def _agree_failed(self, state, plan: Plan, hi: int, checked: bool = True):
        if hi == _ERROR:
            self._failed_elsewhere(state, checked)
        self._differ(state, plan, checked)

    def fail(self, comm, error: ValueError, check: bool = True):
        """This rank's arguments are invalid: tell the others (collective if ``check``, or if
        this is the first unchecked call on ``comm``: the others agree in it), raise ``error``."""
        state = state_of(comm)
        if check or (not state.unchecked and not state.alone):
            state.allreduce_max(comm, _ERROR, _ERROR)
            marked(state, gathered(state, (str(error), check)))
        raise error

    def _failed_elsewhere(self, state, checked: bool):
        everyone = marked(state, gathered(state, (None, checked)))
        bad = [r for r, (m, _) in enumerate(everyone) if m is not None]
        raise ValueError(f"{self.name}: invalid arguments on {rank_list(bad)}: {everyone[bad[0]][0]}")

    def _differ(self, state, plan: Plan, checked: bool = True):
        mine = {**plan.args, "check": checked}
        everyone = gathered(state, mine)
        marked(state, [(None, args["check"]) for args in everyone])
        what = []
        for name in mine:
            values = {}
            for r, args in enumerate(everyone):
                values.setdefault(repr(args.get(name)), []).append(r)
            if len(values) > 1:
                what.append(f"{name} = " + ", ".join(f"{v} on {rank_list(rs)}" for v, rs in values.items()))
        raise ValueError(f"{self.name}: arguments must be the same on every rank; "
                         + ("; ".join(what) or "they differ"))
