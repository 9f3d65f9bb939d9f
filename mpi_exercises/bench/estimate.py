"""What a benchmark run will cost, known from its arguments before it starts, and the one
line that refuses a run beyond the limits (``--force`` runs it anyway).

Every command of ``python -m mpi_exercises`` with a ``--force`` option is estimated here,
on every rank, before MPI starts (:func:`refusal`, called by the command line's argument
check), from the options the commands share (their names are the kit's vocabulary,
:mod:`mpi_exercises.bench.arguments`):

- the cases: one per value of ``--sizes`` (or ``--h``; the one-algorithm commands: their
  vector of ``-N`` elements) times the values of ``--steps`` and ``--algorithms``, each
  algorithm in every one of ``--modes`` but ``mpi`` (MPI's own collective) in one;
- per case, the samples of every option that counts samples (of type
  :func:`~mpi_exercises.bench.arguments.sample_count`: ``--iterations``, ``--repetitions``,
  ``--repeat``, ...), capped by ``--budget-bytes`` where the command has one (as
  :func:`~mpi_exercises.bench.timing.capped_iterations` caps them, at least 10), each
  ``--inner`` calls, and ``--warmup`` untimed calls;
- the rounds of the first pass (``--rounds``), each recorded for the JSON.

A call costs at least :data:`CALL_S` plus :data:`BYTE_S` per byte of its message, plus
``--inter-delay`` when the ranks span two nodes or more (real ones, or those ``--ppn``
emulates); a round costs at least :data:`ROUND_S` plus :data:`ROUND_CASE_S` per case.
These are floors: the run takes longer, since the commands measure more than these counts
(modes, link counts, peers, calibrations), warm up in every round and add rounds until
their intervals are narrow (``--target``, within ``--time-budget``).  Memory on this node:
every rank keeps its samples (8 bytes each), the record of every round (two lists of a
pointer per case) and a send and a receive buffer of the largest case.

A run estimated longer than :data:`netmodels.simulate.budget.MAX_SECONDS` (the limit of
``python -m netmodels simulate``), or larger than the memory this node has available, is
refused; ``--force`` runs it anyway.  Importing this module does not start MPI.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from netmodels.commandline import available_memory
from netmodels.simulate.budget import MAX_SECONDS, human

from .arguments import sample_count
from .placement import ranks_in_job, ranks_on_this_node
from .records import fmt_bytes
from .timing import capped_iterations

#: a call (a round trip, a collective, a barrier) from Python, at least, s: a 0-byte round trip
#: between two mpi4py ranks took 2.2 µs on the kit's machine (book/data/pingpong_reference.json),
#: its fastest barrier 1.5 µs (book/data/barrier_reference.json)
CALL_S = 1e-6
#: a byte of a call's message, at least, s/B: 100 GB/s (the kit's machine moved 16 GB/s one
#: way on small pages, 54 GB/s on huge pages: book/data/pingpong_*.json)
BYTE_S = 1e-11
#: a round of the first pass, at least, s: its random order drawn and recorded
ROUND_S = 1e-6
#: a case in a round, at least, s (a ping-pong of 24 sizes took 3.5 µs per round with no
#: sample to take: 1e9 rounds, measured over 82 s)
ROUND_CASE_S = 5e-8
#: memory of a round's record, bytes: two Python lists (its order, its repetitions) ...
ROUND_BYTES = 2 * 56
#: ... of a pointer per case each
ROUND_CASE_BYTES = 2 * 8
#: memory of a sample, bytes (a float64 on every rank)
SAMPLE_BYTES = 8
#: the options whose values multiply the cases (besides the sizes, the algorithms and their modes)
CASE_OPTIONS = ("steps",)
#: the options that list the sizes of the cases (elements or bytes: the unit is their type's)
SIZE_OPTIONS = ("sizes", "h")
#: the fewest samples a budget in bytes leaves a case (``capped_iterations``' ``at_least``)
AT_LEAST = 10


@dataclass(frozen=True)
class Estimate:
    """A run's floors: ``seconds``, ``node_bytes`` (memory of this node's ranks), and what
    they come from: ``calls`` (timed and untimed), ``cases``, ``rounds``, ``delay_s`` (the
    busy wait of a call)."""

    seconds: float
    node_bytes: float
    calls: float
    cases: int
    rounds: int
    delay_s: float


def _action(args, dest: str):
    return next((a for a in args.parser._actions if a.dest == dest), None)


def _sizes(args) -> tuple[list[int], int]:
    """The sizes of the cases and their unit (bytes)."""
    for dest in SIZE_OPTIONS:
        values = getattr(args, dest, None)
        if values:
            return list(values), getattr(_action(args, dest).type, "unit_bytes", 1)
    if getattr(args, "N", None) is not None:
        return [args.N], np.dtype(getattr(args, "dtype", "float64")).itemsize
    return [0], 1


def _variants(args) -> int:
    """The variants timed per size: every algorithm in every mode, ``mpi`` in one."""
    algorithms, modes = getattr(args, "algorithms", None) or [None], getattr(args, "modes", None) or [None]
    return sum(1 if a == "mpi" else len(modes) for a in algorithms)


def _delay(args) -> float:
    """The busy wait of every call (s): ``--inter-delay`` if the ranks span two nodes or more."""
    delay = getattr(args, "inter_delay", 0.0) or 0.0
    if not delay:
        return 0.0
    ppn = getattr(args, "ppn", None)
    node = ranks_on_this_node() if ppn is None else (ppn if isinstance(ppn, int) else ppn[0])
    return delay if ranks_in_job() > node else 0.0


def estimate(args) -> Estimate:
    """The floors of the run ``args`` asks for (module docstring); no MPI."""
    sizes, unit = _sizes(args)
    others = _variants(args) * math.prod(len(getattr(args, d)) for d in CASE_OPTIONS if getattr(args, d, None))
    counts = [getattr(args, a.dest) for a in args.parser._actions if a.type is sample_count]
    inner = getattr(args, "inner", 1) or 1
    warmup = getattr(args, "warmup", 0) or 0
    rounds = getattr(args, "rounds", 0) or 0
    budget = getattr(args, "budget_bytes", None)
    delay = _delay(args)
    seconds = calls = samples = 0.0
    for n in sizes:
        nbytes = n * unit
        reps = sum(c if budget is None else capped_iterations(nbytes * inner, c, budget, at_least=AT_LEAST)
                   for c in counts)
        size_calls = (reps * inner + warmup) * others
        seconds += size_calls * (CALL_S + nbytes * BYTE_S + delay)
        calls += size_calls
        samples += reps * others
    cases = len(sizes) * others
    seconds += rounds * (ROUND_S + cases * ROUND_CASE_S)
    rank_bytes = (samples * SAMPLE_BYTES + rounds * (ROUND_BYTES + cases * ROUND_CASE_BYTES)
                  + 2 * max(sizes) * unit)
    return Estimate(seconds, rank_bytes * ranks_on_this_node(), calls, cases, rounds, delay)


def refusal(args) -> str | None:
    """One line saying which limit the run ``args`` asks for would pass (its estimate, and
    ``--force``), or None if it fits, ``args.force`` is set or the command has no
    ``--force``.  No MPI."""
    if getattr(args, "force", True):
        return None
    e = estimate(args)
    memory = available_memory()
    over = []
    if e.seconds > MAX_SECONDS:
        what = [f"{e.calls:.3g} MPI calls over {e.cases} case{'s' * (e.cases != 1)}"]
        if e.rounds:
            what.append(f"{e.rounds} rounds")
        if e.delay_s:
            what.append(f"{e.delay_s:g} s of --inter-delay per call")
        over.append(f"at least {human(e.seconds)} ({', '.join(what)}; the limit is {MAX_SECONDS:.3g} s)")
    if memory is not None and e.node_bytes > memory:
        over.append(f"at least {fmt_bytes(e.node_bytes)} of memory on this node ({fmt_bytes(memory)} available)")
    if not over:
        return None
    return f"this run would take {' and '.join(over)}; --force runs it anyway"
