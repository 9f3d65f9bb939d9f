"""Schedules as LogGOPSim's GOAL text, and the cases the simulator is validated on.

LogGOPSim (Hoefler, Schneider & Lumsdaine, HPDC 2010) reads a *GOAL* schedule: per
rank, a set of labelled operations ``send <bytes>b to <rank> tag <t>``, ``recv <bytes>b
from <rank> tag <t>`` and ``calc <time>``, and dependencies ``a requires b`` (a may
start once b is done; an eager send is done when it starts).  :func:`to_goal` writes a
kit schedule in that form with the step semantics of the kit's LogP simulation
(:func:`netmodels.models.logp.simulate`):

* a rank's sends of step t go in column order (each requires the previous one);
* its first send of step t requires everything it did in its last step before t
  (the receives of that step, or its last send if it only sent);
* its receives of step t require its last send of step t (receives come after the
  sends), or, if it sends nothing, what its first send would have required;
* the tag of a message is its step index, so a receive matches its own step's message.

A transfer of ``count`` elements is a message of ``max(count * elem_bytes, 1)`` bytes:
LogGOPSim charges ``(s - 1) G`` for ``s`` bytes and ``s - 1`` must not wrap around (a
barrier's empty message is LogGP's one-byte message, as in
:func:`netmodels.models.logp.wire_bytes`).

LogGOPSim's parameters are integers in its own time unit; :data:`TIME_UNIT` (one
picosecond) keeps 0.5 ns/B exact.  The cases of the validation (:data:`CASES`) are
rebuilt by :func:`case_schedule` from their JSON description, so a stored LogGOPSim
time can be compared with the kit's simulation of the very same schedule.
"""

from __future__ import annotations

from ..algorithms import registry
from ..algorithms.arrays import as_transfers
from ..algorithms.schedule import Schedule
from .._check import positive_int

#: LogGOPSim's time unit used here (s): parameters and results are integers of it
TIME_UNIT = 1e-12

#: validation case (the name LogGOPSim's stored data uses) -> (registered algorithm, its
#: options, vector length in elements as a function of P)
ALGORITHMS = {
    "dissemination": ("barrier.dissemination", {}, lambda p: 0),          # empty messages
    "binomial_bcast": ("broadcast.binomial", {}, lambda p: 1024),         # 8 KiB from rank 0
    "ring": ("allreduce.ring", {}, lambda p: 2**20),                      # 8 MiB, blocks of 2^20 / P
    "nway_dissemination": ("barrier.nway_dissemination", {"n": 3}, lambda p: 0),  # 3 out, 3 in a round
    "fence": ("allreduce.fence", {"block": 512}, lambda p: 4096),         # 8 blocks of 512, default mesh
    "rabenseifner": ("allreduce.rabenseifner", {}, lambda p: 2**20),      # messages halve, then double
}

#: (algorithm, P) of the validation: the first three algorithms at P = 8, 64, 1024, where
#: the kit's rules and LogGOPSim's should agree, two where a rank has several messages
#: to handle in one step and the two order its work differently, and Rabenseifner's,
#: whose message sizes change from step to step (the receive gap's convention shows)
CASES = ([(a, p) for a in ("dissemination", "binomial_bcast", "ring") for p in (8, 64, 1024)]
         + [("nway_dissemination", p) for p in (16, 64, 1024)]
         + [("fence", p) for p in (8, 64, 1024)]
         + [("rabenseifner", p) for p in (8, 64, 1024)])


def case_schedule(algorithm: str, nprocs: int, nelems: int | None = None) -> Schedule:
    """The per-transfer schedule of a validation case: ``algorithm`` a key of
    :data:`ALGORITHMS`, ``nelems`` its vector length (default: the case's)."""
    p = positive_int("nprocs", nprocs)
    if nelems is not None:
        nelems = positive_int("nelems", nelems, minimum=0)
    return case_arrays(algorithm, p, nelems).to_schedule()


def to_goal(schedule, elem_bytes: int = 8) -> str:
    """``schedule`` (per-transfer or columnar) as GOAL text (see the module docstring)."""
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
            if not sends[r] and not recvs[r]:
                continue
            out = lines[r]
            last = None
            for j, (dst, nbytes) in enumerate(sends[r]):
                label = f"s{t}_{j}"
                out.append(f"{label}: send {nbytes}b to {dst} tag {t}")
                for dep in ([last] if last else before[r]):
                    out.append(f"{label} requires {dep}")
                last = label
            labels = []
            for j, (src, nbytes) in enumerate(recvs[r]):
                label = f"r{t}_{j}"
                out.append(f"{label}: recv {nbytes}b from {src} tag {t}")
                for dep in ([last] if last else before[r]):
                    out.append(f"{label} requires {dep}")
                labels.append(label)
            before[r] = labels or [last]
    parts = [f"num_ranks {p}\n"]
    for r in range(p):
        parts.append(f"\nrank {r} {{\n")
        parts.append("".join(line + "\n" for line in lines[r]))
        parts.append("}\n")
    return "".join(parts)


def case_arrays(algorithm: str, nprocs: int, nelems: int | None = None):
    """:func:`case_schedule` in columnar form (what the vectorised simulator takes), as the
    registry builds it."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {sorted(ALGORITHMS)}, got {algorithm!r}")
    p = positive_int("nprocs", nprocs)
    name, options, length = ALGORITHMS[algorithm]
    return registry.build(name, p, length(p) if nelems is None else nelems, **options)


def compare(data: dict) -> list[dict]:
    """LogGOPSim's stored times (``data``: ``book/data/loggopsim_reference.json``) beside the
    kit's :func:`netmodels.simulate.simulate` of the same schedule with the same parameters
    (dataflow semantics, o_s = o_r = o): rows with both times (s) and the relative difference."""
    from ..models.logp import LogGP
    from .engine import simulate

    unit = data["time_unit_s"]
    rows, cache = [], {}
    for c in data["cases"]:
        key = (c["algorithm"], c["nprocs"])
        if key not in cache:
            cache[key] = case_arrays(*key)
        p = data["parameter_sets"][c["parameters"]]
        model = LogGP(L=p["L_ps"] * unit, o=p["o_ps"] * unit, g=p["g_ps"] * unit, P=c["nprocs"],
                      G=p["G_ps"] * unit)
        kit = simulate(cache[key], model, semantics="dataflow").time
        lgs = c["time_ps"] * unit
        rows.append({"algorithm": c["algorithm"], "P": c["nprocs"], "parameters": c["parameters"],
                     "loggopsim_s": lgs, "kit_s": kit, "relative": (kit - lgs) / lgs})
    return rows
