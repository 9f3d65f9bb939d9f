"""Schedules as LogGOPSim's GOAL text, and the cases the simulator is validated on.

LogGOPSim (Hoefler, Schneider & Lumsdaine, HPDC 2010) reads a *GOAL* schedule: per
rank, a set of labelled operations ``send <bytes>b to <rank> tag <t>``, ``recv <bytes>b
from <rank> tag <t>`` and ``calc <time>``, and dependencies ``a requires b`` (a may
start once b is done; an eager send is done when it starts).  :func:`to_goal` writes a
kit schedule in that form with the step semantics of the kit's LogP simulation
(:func:`netmodels.simulate.simulate`, *stepwise*):

* a rank's sends of step t go in column order (each requires the previous one);
* its first send of step t requires everything it did in its last step before t
  (the receives of that step and its last send);
* its receives of step t require its last send of step t (receives come after the
  sends, ``receives="after-sends"``, the default), or, if it sends nothing or with
  ``receives="with-sends"`` (receives pre-posted), what its first send requires;
* the tag of a message is its step index, so a receive matches its own step's message.

A transfer of ``count`` elements is a message of ``max(count * elem_bytes, 1)`` bytes:
LogGOPSim charges ``(s - 1) G`` for ``s`` bytes and ``s - 1`` must not wrap around (a
barrier's empty message is LogGP's one-byte message, as in
:func:`netmodels.models.logp.wire_bytes`).

LogGOPSim's parameters are integers in its own time unit; :data:`TIME_UNIT` (one
picosecond) keeps 0.25 ns/B exact.  The cases of the comparison (:func:`cases`: every
registered builder at P in :data:`NPROCS` and sizes :data:`SIZES`, and seeded random
schedules) are rebuilt by :func:`case_arrays` from their JSON description, so a stored
LogGOPSim time can be compared with the kit's simulation of the very same schedule.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from ..algorithms import registry
from ..algorithms.arrays import ArraySchedule, ArrayStep, as_arrays, as_transfers
from .._check import positive_int
from .arrival import RECEIVES
from .engine import ELEM_BYTES

#: LogGOPSim's time unit used here (s): parameters and results are integers of it
TIME_UNIT = 1e-12

#: the comparison's grid: every registered builder at these P and message sizes (bytes; the
#: builder's ``nelems`` is ``size / ELEM_BYTES``; barriers carry no data and run once)
NPROCS = (2, 3, 7, 37, 100, 1000)
SIZES = (8, 4096, 2**20)
#: random schedules of the comparison: seeds of :func:`random_schedule`
RANDOM_SEEDS = tuple(range(200))

#: the LogGP parameter sets, in LogGOPSim's integer picoseconds (o_s = o_r = o)
PARAMETER_SETS = {
    "g>o": {"L": 5_000_000, "o": 1_500_000, "g": 2_000_000, "G": 500},
    "g<o": {"L": 3_000_000, "o": 2_000_000, "g": 1_000_000, "G": 250},
}


#: the second comparison, of exactness (:func:`exact_cases`): every registered builder at
#: these P (none a power of two but 16) and sizes (bytes), under every kind of
#: :data:`PARAMETER_KINDS`, with both receive orders (:data:`~netmodels.simulate.arrival.RECEIVES`)
EXACT_NPROCS = (5, 16, 63, 129)
EXACT_SIZES = (8, 1000, 307200)
#: and these builders at P = 1000 (the rules that differed at large P in an earlier comparison)
EXACT_LARGE = ("allreduce.rabenseifner", "barrier.butterfly", "barrier.dissemination", "allreduce.ring")
#: and these at the P where an earlier comparison, with receives posted first, found them different
EXACT_NAMED = (("allreduce.rabenseifner", 7), ("allreduce.rabenseifner", 37), ("alltoall.direct", 37))
#: LogGP parameter kinds of the exactness comparison, in picoseconds (o_s = o_r = o).  Given
#: in seconds (``ps * 1e-12``), none of 0.3, 0.7, 2.1 µs ... is a binary fraction, so sums
#: that tie in picoseconds need not tie in floating-point seconds
PARAMETER_KINDS = {
    "o=0": {"L": 2_100_000, "o": 0, "g": 700_000, "G": 300},
    "o=1ps": {"L": 2_100_000, "o": 1, "g": 700_000, "G": 300},
    "g=o": {"L": 1_300_000, "o": 700_000, "g": 700_000, "G": 100},
    "g=0": {"L": 1_300_000, "o": 700_000, "g": 0, "G": 100},
    "G=0": {"L": 1_700_000, "o": 300_000, "g": 900_000, "G": 0},
    "large G, small L": {"L": 100_000, "o": 300_000, "g": 600_000, "G": 30_000},
    "L=0": {"L": 0, "o": 300_000, "g": 900_000, "G": 100},
}


#: the comparison of LogGOPS (:func:`loggops_cases`, ``book/data/loggops_exact.json``): these
#: builders at these P and sizes (bytes), with both receive orders, under every kind of
#: :data:`LOGGOPS_KINDS`
LOGGOPS_ALGORITHMS = ("barrier.dissemination", "allreduce.recursive_doubling", "allreduce.ring",
                      "allgather.ring", "alltoall.pairwise", "broadcast.binomial")
LOGGOPS_NPROCS = (8, 16, 64)
LOGGOPS_SIZES = (8, 4096, 65536)
#: LogGOPS parameter kinds, in picoseconds and bytes (o_s = o_r = o; ``O`` per byte like G;
#: ``S`` LogGOPSim's eager limit: a message of more than S bytes goes by rendezvous).  S = 0:
#: every message rendezvous (an empty one is a byte); 1000 and 3000: between the cases'
#: message sizes (8 B to 64 KiB; a ring allreduce's chunks are size / P); 2^31 - 1: all eager
LOGGOPS_KINDS = {
    "O, S=0": {"L": 2_100_000, "o": 700_000, "g": 900_000, "G": 300, "O": 100, "S": 0},
    "O, S=1000": {"L": 2_100_000, "o": 700_000, "g": 900_000, "G": 300, "O": 100, "S": 1000},
    "O>G, S=3000": {"L": 1_300_000, "o": 300_000, "g": 600_000, "G": 100, "O": 700, "S": 3000},
    "O, eager": {"L": 1_700_000, "o": 500_000, "g": 400_000, "G": 200, "O": 50, "S": 2**31 - 1},
    "o=0, O=G, S=1000": {"L": 1_000_000, "o": 0, "g": 700_000, "G": 300, "O": 300, "S": 1000},
}


def loggops_cases():
    """The cases of the LogGOPS comparison (:data:`LOGGOPS_ALGORITHMS` at :data:`LOGGOPS_NPROCS`
    and :data:`LOGGOPS_SIZES`, a barrier once), each once per receive order."""
    out = []
    for name in LOGGOPS_ALGORITHMS:
        barrier = registry.get(name).collective == "barrier"
        for p in LOGGOPS_NPROCS:
            for size in ((0,) if barrier else LOGGOPS_SIZES):
                for receives in RECEIVES:
                    out.append({"algorithm": name, "nprocs": p, "bytes": size, "receives": receives})
    return out


def model_of(q: dict, unit: float, nprocs: int):
    """The kit's model of one stored parameter set ``q`` (LogGOPSim's integers of ``unit`` s):
    :class:`~netmodels.models.logp.LogGOPS` if it has ``O`` or ``S``, else LogGP (o_s = o_r = o)."""
    from ..models.logp import LogGOPS, LogGP

    base = dict(L=q["L"] * unit, o=q["o"] * unit, g=q["g"] * unit, P=nprocs, G=q["G"] * unit)
    if "O" in q or "S" in q:
        return LogGOPS(**base, O=q.get("O", 0) * unit, S=q.get("S", float("inf")))
    return LogGP(**base)


def exact_cases():
    """The cases of the exactness comparison (:data:`EXACT_NPROCS`, :data:`EXACT_SIZES`,
    :data:`EXACT_NAMED`, :data:`EXACT_LARGE`), as :func:`cases` gives them, each once per receive order
    (``"receives"``)."""
    out = []
    for name in registry.names():
        barrier = registry.get(name).collective == "barrier"
        named = tuple(p for n, p in EXACT_NAMED if n == name)
        for p in EXACT_NPROCS + named + ((1000,) if name in EXACT_LARGE else ()):
            for size in ((0,) if barrier else EXACT_SIZES if p < 1000 else (EXACT_SIZES[1],)):
                for receives in RECEIVES:
                    out.append({"algorithm": name, "nprocs": p, "bytes": size, "receives": receives})
    return out


def cases():
    """Every case of the comparison as a JSON-able dict: ``{"algorithm", "nprocs", "bytes"}``
    for a registered builder, ``{"random": seed}`` for a random schedule."""
    out = []
    for name in registry.names():
        sizes = (0,) if registry.get(name).collective == "barrier" else SIZES
        for p in NPROCS:
            for size in sizes:
                out.append({"algorithm": name, "nprocs": p, "bytes": size})
    out += [{"random": seed} for seed in RANDOM_SEEDS]
    return out


def case_key(case: dict) -> str:
    """A short name of a case (``alltoall.direct/P=37/4096B`` or ``random/7``)."""
    if "random" in case:
        return f"random/{case['random']}"
    tail = f"/{case['receives']}" if "receives" in case else ""
    return f"{case['algorithm']}/P={case['nprocs']}/{case['bytes']}B{tail}"


def case_arrays(case: dict) -> ArraySchedule:
    """The columnar schedule of a case (see :func:`cases`)."""
    if "random" in case:
        return random_schedule(case["random"])
    return registry.build(case["algorithm"], positive_int("nprocs", case["nprocs"]),
                          case["bytes"] // ELEM_BYTES)


def random_schedule(seed: int) -> ArraySchedule:
    """A random schedule (``numpy.random.default_rng(seed)``): 2 to 40 ranks, 1 to 8 steps,
    each with 0 to 3P messages between distinct random ranks (a pair may repeat in a step),
    of 0, 1, 512 or 131072 elements (0 B to 1 MiB); some ranks sit steps out."""
    rng = np.random.default_rng(seed)
    p = int(rng.integers(2, 41))
    nelems = 131072
    steps = []
    for _ in range(int(rng.integers(1, 9))):
        n = int(rng.integers(0, 3 * p + 1))
        src = rng.integers(0, p, n)
        dst = (src + rng.integers(1, p, n)) % p
        count = rng.choice(np.array([0, 1, 512, 131072]), n)
        steps.append(ArrayStep.of(src, dst, 0, count, False))
    return ArraySchedule(f"random{seed}", p, nelems, steps)


def to_goal(schedule, elem_bytes: int = ELEM_BYTES, receives: str = "after-sends") -> str:
    """``schedule`` (per-transfer or columnar) as GOAL text (see the module docstring),
    with its receives posted as ``simulate(..., receives=receives)`` simulates them."""
    if receives not in RECEIVES:
        raise ValueError(f"receives must be one of {', '.join(RECEIVES)}; got {receives!r}")
    sched = as_transfers(schedule)
    elem_bytes = positive_int("elem_bytes", elem_bytes)
    p = sched.nprocs
    lines = [[] for _ in range(p)]
    before = [[] for _ in range(p)]        # labels the rank's next step waits for
    for t, step in enumerate(sched.steps):
        sends = [[] for _ in range(p)]
        recvs = [[] for _ in range(p)]
        for tr in step:
            nbytes = max(tr.count * elem_bytes, 1)
            sends[tr.src].append((tr.dst, nbytes))
            recvs[tr.dst].append((tr.src, nbytes))
        for r in range(p):
            if sends[r] or recvs[r]:
                before[r] = _goal_step(lines[r], t, sends[r], recvs[r], before[r], receives)
    parts = [f"num_ranks {p}\n"]
    for r in range(p):
        parts.append(f"\nrank {r} {{\n")
        parts.append("".join(line + "\n" for line in lines[r]))
        parts.append("}\n")
    return "".join(parts)


def _goal_step(out: list, t: int, sends: list, recvs: list, before: list, receives: str) -> list:
    """A rank's step ``t`` as GOAL lines appended to ``out``: its ``sends`` (peer, bytes) in
    order, each after the one before (the first after ``before``), then its ``recvs``, posted
    after the last send or with the first (``receives``).  Returns the labels the rank's next
    step waits for: every receive and (pre-posted receives) the last send."""
    last = None
    for j, (dst, nbytes) in enumerate(sends):
        label = f"s{t}_{j}"
        out.append(f"{label}: send {nbytes}b to {dst} tag {t}")
        for dep in ([last] if last else before):
            out.append(f"{label} requires {dep}")
        last = label
    labels = []
    posted_after = [last] if last and receives == "after-sends" else before
    for j, (src, nbytes) in enumerate(recvs):
        label = f"r{t}_{j}"
        out.append(f"{label}: recv {nbytes}b from {src} tag {t}")
        for dep in posted_after:
            out.append(f"{label} requires {dep}")
        labels.append(label)
    return (labels or [last]) if receives == "after-sends" else labels + ([last] if last else [])


def loggopsim_viz(schedule, q: dict, unit: float = 1e-12, receives: str = "after-sends",
                  elem_bytes: int = ELEM_BYTES) -> dict:
    """The lines of LogGOPSim's ``-V`` for ``schedule`` run by the kit: its *loggopsim* trace under
    the stored parameter set ``q`` (LogGOPSim's integers of ``unit`` s, :func:`model_of`) with
    ``receives``, as :func:`~netmodels.simulate.trace.loggopsim_view` writes it, each message's
    size as :func:`to_goal` gives it."""
    from . import trace as tr
    from .engine import simulate

    a = as_arrays(schedule)
    model = model_of(q, unit, a.nprocs)
    result = simulate(a, model, semantics="loggopsim", receives=receives, trace=True, elem_bytes=elem_bytes)
    sizes = {}
    for t, s in enumerate(a.steps):
        for src, dst, count in zip(s.src.tolist(), s.dst.tolist(), s.count.tolist()):
            if src != dst:
                sizes[(src, dst, t)] = max(count * elem_bytes, 1)
    return tr.loggopsim_view(result.trace, model.o, unit, sizes)


def compare(data: dict, semantics: str = "loggopsim", only=None, receives: str = "after-sends") -> list[dict]:
    """LogGOPSim's stored times (``data``: ``book/data/loggopsim_reference.json`` or
    ``loggopsim_exact.json``) beside the kit's :func:`netmodels.simulate.simulate` of the
    same schedule with the same parameters given in seconds (``semantics``; o_s = o_r = o;
    the case's receive order, else ``receives``): rows with both times (s) and the
    relative difference.  ``only(case) -> bool`` picks cases."""
    from .engine import simulate

    unit = data["time_unit_s"]
    rows = []
    for c in data["cases"]:
        if only is not None and not only(c):
            continue
        a = case_arrays(c)
        for name, t_ps in c["time_ps"].items():
            model = model_of(data["parameter_sets"][name], unit, a.nprocs)
            try:
                kit = simulate(a, model, semantics=semantics, elem_bytes=data["elem_bytes"],
                               receives=c.get("receives", receives)).time
            except ValueError as e:
                if "deadlock" not in str(e):
                    raise
                kit = None
            ref = None if t_ps is None else t_ps * unit
            if ref is None or kit is None:     # a deadlock (LogGOPSim: messages left unmatched)
                relative = 0.0 if ref is None and kit is None else float("inf")
            else:
                relative = (kit - ref) / ref if t_ps else float(kit != 0)
            rows.append({"case": case_key(c), "parameters": name, "messages": c["messages"],
                         "loggopsim_s": ref, "kit_s": kit, "relative": relative})
    return rows


def agreement(rows: list[dict], semantics=("loggopsim", "stepwise", "sync"), tolerance: float = 1e-9) -> list[dict]:
    """Per algorithm (random schedules as one), from the rows of
    ``book/data/loggopsim_comparison.json`` (one per case and parameter set, with each
    semantics' relative difference to LogGOPSim): the number of rows and, per semantics,
    how many are within ``tolerance`` and the smallest and largest relative difference."""
    groups: dict = {}
    for r in rows:
        groups.setdefault(r["case"].split("/", 1)[0], []).append(r)
    out = []
    for name, rs in groups.items():
        row = {"algorithm": name, "rows": len(rs)}
        for sem in semantics:
            v = [r[sem] for r in rs]
            row[sem] = {"equal": sum(abs(x) <= tolerance for x in v), "min": min(v), "max": max(v)}
        out.append(row)
    return out


def find_binaries(where: str | None):
    """(LogGOPSim, txt2bin) paths in the folder ``where`` (default: PATH), or None if either
    is missing (the build: :mod:`benchmarks.validate_loggopsim`'s docstring)."""
    found = []
    for name in ("LogGOPSim", "txt2bin"):
        path = Path(where) / name if where else shutil.which(name)
        if not path or not Path(path).is_file():
            return None
        found.append(str(path))
    return tuple(found)
