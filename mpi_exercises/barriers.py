"""Barriers from schedules, a correctness check, and the ``barrier-bench`` command.

    from mpi_exercises.barriers import barrier, Barrier
    barrier(comm, algorithm="dissemination")           # one barrier (executor cached on comm)
    b = Barrier(comm, "nway_dissemination", n=3)       # reusable: persistent requests
    for _ in range(1000): b()
    b.free()

Algorithms: the schedules of :mod:`netmodels.algorithms.barriers` (``central_counter``,
``combining_tree`` (option ``fan_in``), ``tournament``, ``dissemination``, ``binomial``,
``nway_dissemination`` (option ``n``), ``butterfly``, ``pairwise_exchange``), run by
:class:`mpi_exercises.executor.Executor` on an empty vector, and ``mpi`` (``MPI.Barrier``).
Every algorithm works for any number of ranks; how each handles a P that is not a
power of two is said in :mod:`netmodels.algorithms.barriers` (butterfly: ranks play the missing
partners; pairwise exchange: the extra ranks fold in first and are released last).

Benchmark (the barrier-bench command): warm-up barriers, then ``--repetitions`` rounds;
in each round every algorithm in turn runs ``--inner`` back-to-back barriers, timed on
every rank (``MPI.Wtime``), and the sample is the mean time per barrier on the slowest
rank.  Interleaving the algorithms makes load from other jobs hit them all alike.
min/median over the samples, ranking, JSON output.

    mpiexec -n 4 python -m mpi_exercises barrier-bench --json barriers.json

Correctness check (used by the tests): ``python -m mpi_exercises.barriers --verify 50``
under mpiexec runs 50 barriers of every algorithm with random delays before entry and
checks with timestamps that no rank left a barrier before the last rank entered it.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from netmodels.algorithms import registry

from . import _bench

#: every algorithm name :func:`barrier` accepts
ALGORITHMS = registry.names("barrier", short=True) + ("mpi",)


class Barrier:
    """A reusable barrier on ``comm`` (construction and :meth:`free` are collective).

    ``algorithm`` is a name of :data:`ALGORITHMS` or a zero-count
    :class:`~netmodels.algorithms.schedule.Schedule` for ``comm``'s size.
    """

    def __init__(self, comm, algorithm="dissemination", **options):
        from netmodels.algorithms.schedule import Schedule

        if isinstance(algorithm, Schedule):     # any barrier schedule, e.g. one under study
            schedule, algorithm = algorithm, algorithm.name
        elif algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {list(ALGORITHMS)}, got {algorithm!r}")
        else:
            schedule = None
        self.algorithm, self.comm = algorithm, comm
        self._executor = None
        if algorithm == "mpi" and schedule is None:
            if options:
                raise ValueError(f"algorithm 'mpi' takes no options, got {sorted(options)}")
            return
        from .executor import Executor

        if not isinstance(schedule, Schedule):
            schedule = registry.get(algorithm, "barrier").build(comm.Get_size(), **options)
        self._executor = Executor(comm, schedule, np.uint8, None)
        self._buf = np.empty(0, dtype=np.uint8)

    def __call__(self) -> None:
        if self._executor is None:
            self.comm.Barrier()
        else:
            self._executor.run(self._buf)

    def free(self) -> None:
        if self._executor is not None:
            self._executor.free()
            self._executor = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()


_DOOR = None
_EMPTY = np.empty(0, dtype=np.uint8)


def _validate(algorithm, options, nprocs):
    """The plan of one barrier call (``options``: sorted (name, value) pairs); ValueError if invalid."""
    from netmodels.algorithms.schedule import Schedule

    from ._frontdoor import Plan, word_of
    from .executor import Executor

    if isinstance(algorithm, Schedule):
        schedule = algorithm
        if options:
            raise ValueError(f"a schedule takes no options, got {sorted(dict(options))}")
        if schedule.nprocs != nprocs or schedule.nelems != 0:
            raise ValueError(f"schedule {schedule.name!r} must be a barrier (nelems 0) for {nprocs} ranks, "
                             f"got nprocs {schedule.nprocs}, nelems {schedule.nelems}")
        args = dict(algorithm=schedule.name, schedule=word_of(schedule.steps))
    elif algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {list(ALGORITHMS)}, got {algorithm!r}")
    elif algorithm == "mpi":
        if options:
            raise ValueError(f"algorithm 'mpi' takes no options, got {sorted(dict(options))}")
        return Plan("barrier", dict(algorithm="mpi"))
    else:
        schedule = registry.get(algorithm, "barrier").build(nprocs, **dict(options))
        args = dict(algorithm=algorithm, options=options)
    return Plan("barrier", args, lambda comm: Executor(comm, schedule, np.uint8, None))


def barrier(comm, algorithm: str = "dissemination", check: bool = True, **options) -> None:
    """One barrier on ``comm`` with ``algorithm`` (see :data:`ALGORITHMS`, or a barrier
    :class:`~netmodels.algorithms.schedule.Schedule`); collective.

    The executor is cached on ``comm`` like allreduce's.  ``check=True`` (default) first
    agrees on the arguments in one small collective: a bad or differing argument raises
    ValueError on every rank.  ``check=False`` skips it: the arguments are then the
    caller's responsibility (see :mod:`mpi_exercises._frontdoor`).
    """
    global _DOOR
    if _DOOR is None:
        from ._frontdoor import FrontDoor

        _DOOR = FrontDoor("barrier")
    _, ex, _ = _DOOR.enter(comm, (algorithm, tuple(sorted(options.items())), comm.Get_size()),
                           _validate, check)
    if ex is None:
        comm.Barrier()
    else:
        ex.run(_EMPTY)


# ---------------------------------------------------------------- correctness check
def _clock() -> float:
    """CLOCK_MONOTONIC in seconds: one clock for all processes of one Linux/macOS host."""
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def verify(comm, algorithm: str, barriers: int = 50, max_delay: float = 2e-3, seed: int = 0,
           **options) -> list[str]:
    """Run ``barriers`` back-to-back barriers with random delays before entry; return violations.

    Before barrier i every rank sleeps a random time in [0, max_delay) (s), and one
    rank, a different one each time, sleeps ``max_delay`` more.  Each rank records its
    entry and exit times on CLOCK_MONOTONIC, which is the same clock for all processes
    of one host; the check refuses to run across hosts.  On rank 0 the result lists
    every barrier whose latest entry comes after its earliest exit (empty: correct).
    """
    from mpi4py import MPI

    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    one_host = node.Get_size() == comm.Get_size()
    node.Free()
    if not one_host:
        raise RuntimeError("verify needs all ranks on one host (it compares CLOCK_MONOTONIC stamps)")
    rank, size = comm.Get_rank(), comm.Get_size()
    rng = np.random.default_rng([seed, rank])
    delays = rng.uniform(0, max_delay, barriers) + max_delay * (np.arange(barriers) % size == rank)
    stamps = np.empty((barriers, 2))
    with Barrier(comm, algorithm, **options) as b:
        comm.Barrier()
        for i in range(barriers):
            time.sleep(delays[i])
            stamps[i, 0] = _clock()
            b()
            stamps[i, 1] = _clock()
    everyone = np.empty((size, barriers, 2)) if rank == 0 else None
    comm.Gather(stamps, everyone, root=0)
    if rank != 0:
        return []
    last_in, first_out = everyone[:, :, 0].max(axis=0), everyone[:, :, 1].min(axis=0)
    name = getattr(algorithm, "name", algorithm)
    return [f"{name}: barrier {i}: a rank left at {first_out[i]:.6f} s before the last entered "
            f"at {last_in[i]:.6f} s" for i in np.flatnonzero(first_out < last_in)]


def _verify_main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m mpi_exercises.barriers",
                                description="check every barrier algorithm with random entry delays")
    p.add_argument("--verify", type=_bench.positive_int, default=50, metavar="N",
                   help="barriers per algorithm (default 50)")
    p.add_argument("--max-delay-ms", type=float, default=2.0, help="random delay bound in ms")
    args = p.parse_args(argv)
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    failures = []
    for name in ALGORITHMS:
        variants = {"combining_tree": [{"fan_in": 2}, {"fan_in": 3}],
                    "nway_dissemination": [{"n": 2}, {"n": 3}],
                    "tournament": [{"release": "tree"}, {"release": "flat"}]}.get(name, [{}])
        for opts in variants:
            failures += verify(comm, name, args.verify, args.max_delay_ms * 1e-3, **opts)
            if comm.Get_rank() == 0:
                print(f"checked {name} {opts or ''} on {comm.Get_size()} ranks", flush=True)
    if comm.Get_rank() == 0:
        print("\n".join(failures) if failures else "all barriers correct", flush=True)
    return 1 if failures else 0


# ---------------------------------------------------------------- benchmark command
def add_arguments(p) -> None:
    p.add_argument("--algorithms", type=_bench.name_list(ALGORITHMS), default=list(ALGORITHMS),
                   help="comma-separated algorithms (default: all): " + ",".join(ALGORITHMS))
    p.add_argument("--fan-in", type=_bench.int_at_least(2), default=4, help="combining tree fan-in (default 4)")
    p.add_argument("--n", type=_bench.positive_int, default=2,
                   help="messages per round of n-way dissemination (default 2)")
    p.add_argument("--repetitions", type=_bench.positive_int, default=50,
                   help="timed samples per algorithm (default 50)")
    p.add_argument("--inner", type=_bench.positive_int, default=20,
                   help="back-to-back barriers per sample (default 20)")
    p.add_argument("--warmup", type=_bench.nonneg_int, default=20, help="untimed barriers first (default 20)")
    p.add_argument("--json", metavar="FILE", help="write the results to FILE as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def options_for(algorithm: str, fan_in: int = 4, n: int = 2) -> dict:
    """The keyword options of ``algorithm`` from the command-line values."""
    return {"combining_tree": {"fan_in": fan_in}, "nway_dissemination": {"n": n}}.get(algorithm, {})


def measure(comm, algorithms, repetitions, inner, warmup, progress=False) -> list[dict]:
    """Time several barriers, interleaved; per-algorithm summaries (s per barrier) on rank 0.

    ``algorithms`` is a list of ``(name, options)``.  Repetition i times ``inner``
    back-to-back barriers of every algorithm in turn (the order rotates with i), so that
    a burst of load from other jobs hits all algorithms alike instead of whichever was
    running.  A sample is the mean time per barrier on the slowest rank.
    """
    from mpi4py import MPI
    from tqdm import tqdm

    rank = comm.Get_rank()
    bars = [Barrier(comm, name, **opts) for name, opts in algorithms]
    samples = np.empty((len(bars), repetitions))
    try:
        for b in bars:
            for _ in range(warmup):
                b()
        comm.Barrier()
        for i in tqdm(range(repetitions), desc="barriers", unit="rep", file=sys.stderr,
                      disable=(rank != 0) or not progress or None):
            for j in np.roll(np.arange(len(bars)), i):
                b = bars[j]
                t0 = MPI.Wtime()
                for _ in range(inner):
                    b()
                samples[j, i] = (MPI.Wtime() - t0) / inner
    finally:
        for b in bars:
            b.free()
    worst = np.empty_like(samples) if rank == 0 else None
    comm.Reduce(samples, worst, op=MPI.MAX, root=0)
    if rank != 0:
        return []
    return [{"algorithm": name, "options": opts, **_bench.summarize(w)}
            for (name, opts), w in zip(algorithms, worst)]


def report(results: list[dict]) -> str:
    lines = [f"{'rank':>4} {'algorithm':<26} {'min µs':>10} {'median µs':>10} {'p75 µs':>10}", "-" * 64]
    for i, r in enumerate(sorted(results, key=lambda r: r["median_s"]), 1):
        label = r["algorithm"] + "".join(f" {k}={v}" for k, v in r["options"].items())
        lines.append(f"{i:>4} {label:<26} {r['min_s'] * 1e6:10.2f} {r['median_s'] * 1e6:10.2f} "
                     f"{r['p75_s'] * 1e6:10.2f}")
    return "\n".join(lines)


def run(args) -> int:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    oversubscribed = _bench.warn_if_oversubscribed(comm)
    rank = comm.Get_rank()
    algorithms = [(name, options_for(name, args.fan_in, args.n)) for name in args.algorithms]
    results = measure(comm, algorithms, args.repetitions, args.inner, args.warmup,
                      progress=not args.no_progress)
    if rank == 0:
        print(f"barrier times on {comm.Get_size()} ranks (per barrier; sample = max over ranks)")
        print(report(results), flush=True)
        if args.json:
            _bench.write_json(args.json, {
                "benchmark": "barrier", "environment": _bench.environment(comm),
                "oversubscribed": oversubscribed, "load_average_1min": _bench.load_average(),
                "parameters": {"repetitions": args.repetitions, "inner": args.inner,
                               "warmup": args.warmup, "fan_in": args.fan_in, "n": args.n},
                "results": results})
            print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(_verify_main())
