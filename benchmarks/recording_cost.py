"""What recording costs the executor, and the front door against an earlier revision: one
interleaved run under ``mpiexec -n P``.

    mpiexec -n 2 python benchmarks/recording_cost.py [--rev REV] [-N 1] [--rounds 200] [--calls 200] [--json F]

Five or six variants of one allreduce (the front door's default algorithm, snake, at ``-N`` float64
elements), each round in a new random order (``--seed``, the same on every rank: a rotated order
kept each variant after the same neighbour, which biased their ratios by up to 7 % for identical
code at load 8), each timed over ``--calls`` calls after a barrier: ``Executor.run`` of
``--rev`` (the package as git holds it there, imported whole under another name) and of this
tree; ``Executor.run_recorded`` of this tree and of ``--rev`` (if it records); and the allreduce
front door (default path, with its argument agreement) of ``--rev`` and of this tree.  Prints per variant the median and the best round's time per call (rank 0's, µs)
and the ratios that matter, each a median over rounds of the ratio within a round with its
interquartile range: recording on against off (this tree), this tree's run, recorded call and
front door against ``--rev``'s; then the clock alignment of :mod:`mpi_exercises.clocks`, ``--estimates``
times: on one node every rank reads one clock, so the true offset is 0 and each estimate's
offset is its error, measured, beside its bound and Cristian's (half the shortest round trip);
then each rank's own Python per call, run and recorded (this tree's and ``--rev``'s), with
the MPI calls replaced by no-ops on executors of their own (``--local-rounds``
interleaved rounds of ``--local-calls`` calls: what recording adds on a rank, without the other
rank's waits, which a loaded machine makes noisy); then the load average before and after
(os.getloadavg), ``OVERSUBSCRIBED`` when ranks outnumber cores.  ``--json`` stores all of it.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from mpi_exercises.bench import arguments  # noqa: E402
from netmodels.commandline import OneLineParser  # noqa: E402
from netmodels.outputs import write_json  # noqa: E402

#: the head before the front door overlapped its agreement with the schedule (today's code)
REV = "9766aa8"


def has_package(rev: str) -> bool:
    """Whether git knows ``rev`` and it holds ``mpi_exercises/executor.py``."""
    try:
        res = subprocess.run(["git", "cat-file", "-e", f"{rev}:mpi_exercises/executor.py"], cwd=ROOT,
                             capture_output=True)
    except OSError:
        return False
    return res.returncode == 0


def package_at(rev: str, where: str):
    """``mpi_exercises`` at git revision ``rev``, unpacked under the folder ``where`` and imported
    as ``mpi_exercises_<rev>`` (its imports of itself are relative; ``netmodels`` is this tree's),
    or None if git has no such revision."""
    if not has_package(rev):
        return None
    res = subprocess.run(["git", "archive", rev, "mpi_exercises"], cwd=ROOT, capture_output=True)
    if res.returncode != 0:
        return None
    name = "mpi_exercises_" + "".join(c if c.isalnum() else "_" for c in rev)
    with tarfile.open(fileobj=BytesIO(res.stdout)) as tar:
        tar.extractall(where, filter="data")
    os.rename(os.path.join(where, "mpi_exercises"), os.path.join(where, name))
    sys.path.insert(0, where)
    return importlib.import_module(name)


def build_parser() -> OneLineParser:
    p = OneLineParser(prog="recording_cost.py", description=__doc__.splitlines()[0])
    p.add_argument("--rev", default=REV, help=f"git revision to compare with (default {REV})")
    p.add_argument("-N", type=arguments.positive_int, default=1, help="float64 elements (default 1)")
    p.add_argument("--rounds", type=arguments.positive_int, default=200, help="rounds (default 200)")
    p.add_argument("--calls", type=arguments.positive_int, default=200, help="calls timed per round (default 200)")
    p.add_argument("--estimates", type=arguments.positive_int, default=20,
                   help="clock alignments estimated after the timing (default 20)")
    p.add_argument("--local-rounds", type=arguments.positive_int, default=20,
                   help="rounds of each rank's own Python timed alone (default 20)")
    p.add_argument("--local-calls", type=arguments.positive_int, default=10000,
                   help="calls per such round (default 10000)")
    p.add_argument("--seed", type=arguments.nonneg_int, default=0, help="seed of the rounds' random order (default 0)")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON")
    return p


def main(argv=None) -> int:
    p = build_parser()
    a = p.parse_checked(argv)
    with tempfile.TemporaryDirectory() as where:
        before = package_at(a.rev, where)
        if before is None:
            p.error(f"--rev: git has no mpi_exercises/executor.py at {a.rev!r} (a clone with its history is needed)")
        importlib.import_module(before.__name__ + ".collectives.allreduce")
        return measure(a, before, sys.argv[1:] if argv is None else argv)


def measure(a, before, argv: list) -> int:
    from mpi4py import MPI

    from mpi_exercises import clocks
    from mpi_exercises.bench import placement
    from mpi_exercises.collectives.allreduce import allreduce, executor_for
    from mpi_exercises.executor import Executor, Recorder

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    oversubscribed = placement.warn_if_oversubscribed(comm)
    load0 = os.getloadavg()
    x = np.zeros(a.N)          # sums stay 0: no overflow (its warnings would be timed)
    out, out_before = np.empty_like(x), np.empty_like(x)
    schedule = executor_for(comm, "snake", a.N, np.float64).schedule
    old = before.executor.Executor(comm, schedule, np.float64, MPI.SUM)
    new = Executor(comm, schedule, np.float64, MPI.SUM)
    rec = Recorder(new)
    buf = np.zeros(a.N)
    recorded_before = None
    if hasattr(before.executor, "Recorder"):
        rec_old = before.executor.Recorder(old)
        recorded_before = lambda: old.run_recorded(buf, rec_old)     # noqa: E731
    door_before = sys.modules[before.__name__ + ".collectives.allreduce"].allreduce
    variants = {"before: run": lambda: old.run(buf), "now: run": lambda: new.run(buf),
                "now: run_recorded": lambda: new.run_recorded(buf, rec),
                **({"before: run_recorded": recorded_before} if recorded_before else {}),
                "before: front door": lambda: door_before(comm, x, out=out_before),
                "now: front door": lambda: allreduce(comm, x, out=out)}
    names = list(variants)
    times = {k: [] for k in names}
    for f in variants.values():
        for _ in range(50):
            f()
    order = np.random.default_rng(a.seed)      # the same seed on every rank: the same order
    for r in range(a.rounds):
        for k in (names[i] for i in order.permutation(len(names))):
            f = variants[k]
            comm.Barrier()
            t0 = time.perf_counter()
            for _ in range(a.calls):
                f()
            times[k].append((time.perf_counter() - t0) / a.calls)
    old.free(), new.free()
    local = local_cost(a, before, comm, schedule)
    shared = clocks.one_node(comm)
    estimates = [clocks.estimate(comm) for _ in range(a.estimates)]
    if rank:
        return 0
    load1 = os.getloadavg()
    t = {k: np.array(v) for k, v in times.items()}
    pairs = {"recording on / off (now)": ("now: run_recorded", "now: run"),
             "run: now / before": ("now: run", "before: run"),
             **({"recording on: now / before": ("now: run_recorded", "before: run_recorded")}
                if recorded_before else {}),
             "front door: now / before": ("now: front door", "before: front door")}
    print(f"P = {comm.Get_size()}, N = {a.N}, {a.rounds} rounds x {a.calls} calls, before = {a.rev}"
          + (" OVERSUBSCRIBED" if oversubscribed else ""))
    result = {"P": comm.Get_size(), "N": a.N, "rounds": a.rounds, "calls": a.calls, "rev": a.rev, "seed": a.seed,
              "oversubscribed": oversubscribed, "load_average_1min": [load0[0], load1[0]],
              "command": "mpiexec -n %d python benchmarks/recording_cost.py %s"
                         % (comm.Get_size(), " ".join(argv)),
              "variants": {}, "ratios": {}}
    for k in names:
        result["variants"][k] = {"median_s": float(np.median(t[k])), "best_s": float(t[k].min())}
        print(f"  {k:20s} median {np.median(t[k]) * 1e6:7.3f} µs/call, best round {t[k].min() * 1e6:7.3f}")
    for label, (num, den) in pairs.items():
        ratio = t[num] / t[den]
        q1, q2, q3 = np.percentile(ratio, [25, 50, 75])
        result["ratios"][label] = {"median": q2, "iqr": [q1, q3], "of_best_rounds": t[num].min() / t[den].min()}
        print(f"  {label:26s} {q2:.3f} (IQR {q1:.3f}-{q3:.3f}; of best rounds {t[num].min() / t[den].min():.3f})")
    off = np.array([e.offset[1:] for e in estimates])
    bound = np.array([e.bound[1:] for e in estimates])
    rtt = np.array([e.round_trip_bound[1:] for e in estimates])
    result["clocks"] = {"method": clocks.METHOD, "source": clocks.SOURCE, "one_node": shared,
                        "offset_s": off.tolist(), "bound_s": bound.tolist(), "round_trip_bound_s": rtt.tolist(),
                        "consistent": [e.consistent[1:].tolist() for e in estimates]}
    inside = np.abs(off) <= bound
    print(f"  clocks ({a.estimates} estimates of ranks 1-{comm.Get_size() - 1}): bound median "
          f"{np.median(bound) * 1e6:.3f} µs (max {bound.max() * 1e6:.3f}), Cristian's half shortest round trip "
          f"median {np.median(rtt) * 1e6:.3f} µs"
          + (f"; one node, measured error |offset| median {np.median(np.abs(off)) * 1e6:.3f} µs, max "
             f"{np.abs(off).max() * 1e6:.3f} µs, within the bound in {inside.sum()} of {inside.size}"
             if shared else ""))
    result["local_ns"] = local
    print(f"  each rank's own Python per call, MPI calls no-ops ({a.local_rounds} rounds x {a.local_calls} calls), "
          "median ns (rank 0, rank 1, ...):")
    for k, v in local.items():
        print(f"    {k:32s} " + ", ".join(f"{x:7.1f}" for x in v))
    if a.json:
        write_json(a.json, result)
    print(f"load {load0[0]:.2f} before, {load1[0]:.2f} after" + (" OVERSUBSCRIBED" if oversubscribed else ""))
    return 0


def without_messages(ex, buf) -> None:
    """Make ``ex``'s MPI calls no-ops before its first recorded call (so that the program it then
    makes uses them): at a revision whose executor posts through ``_startall`` and ``_waitall``,
    those become a builtin that does nothing; today, ``ex`` is bound to ``buf`` (one real call,
    collective) and its steps' starts and waits are dropped."""
    if hasattr(ex, "_startall"):
        ex._startall = ex._waitall = len       # a builtin that does nothing with the requests
        return
    ex.run(buf)
    ex._steps = [(pre, reqs, (), (), post) for pre, reqs, _, _, post in ex._steps]


def local_cost(a, before, comm, schedule) -> dict:
    """Per variant, every rank's median time per call (ns) of its own Python: run and recorded,
    of this tree and of ``--rev`` (if it records), on executors whose MPI calls are no-ops
    (:func:`without_messages`); and the medians of recorded minus run within a round.  Collective."""
    from mpi4py import MPI

    from mpi_exercises.executor import Executor, Recorder

    mods = {"now": sys.modules["mpi_exercises.executor"], "before": before.executor}
    buf, variants, made = np.zeros(schedule.nelems), {}, []
    for who, mod in mods.items():
        ex = (Executor if who == "now" else mod.Executor)(comm, schedule, np.float64, MPI.SUM)
        made.append(ex)
        without_messages(ex, buf)
        variants[f"{who}: run"] = (lambda ex=ex: ex.run(buf))
        if hasattr(mod, "Recorder"):
            rec = (Recorder if who == "now" else mod.Recorder)(ex)
            variants[f"{who}: run_recorded"] = (lambda ex=ex, rec=rec: ex.run_recorded(buf, rec))
    names, order = list(variants), np.random.default_rng(a.seed + 1)
    per = {k: [] for k in names}
    clock = time.perf_counter_ns
    for f in variants.values():
        f()
    for _ in range(a.local_rounds):
        for k in (names[i] for i in order.permutation(len(names))):
            f = variants[k]
            t0 = clock()
            for _ in range(a.local_calls):
                f()
            per[k].append((clock() - t0) / a.local_calls)
    for ex in made:
        ex.free()
    mine = {k: float(np.median(v)) for k, v in per.items()}
    for who in mods:
        if f"{who}: run_recorded" in per:
            extra = np.array(per[f"{who}: run_recorded"]) - np.array(per[f"{who}: run"])
            mine[f"{who}: recorded minus run"] = float(np.median(extra))
    everyone = comm.gather(mine, root=0)
    return {k: [m[k] for m in everyone] for k in mine} if comm.Get_rank() == 0 else {}


if __name__ == "__main__":
    sys.exit(main())
