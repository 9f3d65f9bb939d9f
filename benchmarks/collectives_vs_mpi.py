"""The kit's collectives against MPI's own: every collective and algorithm of the registry at
8 B, 64 KiB and 1 MiB, in the three ways a front door is called, interleaved with MPI's call.

    mpiexec -n 2 python benchmarks/collectives_vs_mpi.py --json book/data/collectives_vs_mpi.json

Sizes are bytes of float64 data per block: the vector of allreduce and broadcast, each rank's
block of allgather, each pair's block of alltoall; the barrier has none.  For each collective
and size, MPI's own collective and every (algorithm, mode) are timed in interleaved rounds of a
random order (:func:`mpi_exercises.bench.measure.compare`, the benchmarks' one measurement core:
a sample is ``--inner`` back-to-back calls after one barrier, per call, the slowest rank's);
modes are those of :data:`mpi_exercises.bench.records.MODES` (``default``: the front door as
users call it, with its argument agreement; ``check=False``; ``executor``: the algorithm
alone).  Beside alltoall, a bare ``Sendrecv`` of the bytes each rank sends to the others (with
rank + 1 and rank - 1; at P = 2 exactly the exchange of the schedule) is timed in the same rounds.

Before and after: every (collective, size, algorithm, mode) of this run beside the same row of
``--before`` (default: book/data/collectives_vs_mpi_before.json, the executor before its long
exchanges were reworked), both as ratios of medians to MPI's median of their own run (so two
runs at different loads compare in one unit), with each ratio's interval from the medians'
confidence intervals; a row is marked SLOWER when this run's interval lies wholly above the
before's, and the count of such rows is printed (stored as ``before_after``).

``--rev REV`` times REV's front doors too (its ``mpi_exercises``, imported beside this tree's:
``package_at`` of benchmarks/recording_cost.py), as algorithms ``NAME@REV`` in the same interleaved rounds, and prints
this tree's median over REV's for every (collective, size, algorithm, mode): before and after at
one load (stored as ``same_run``; REV's rows as ``results_rev``).  A row is SLOWER when this
tree was slower in nearly every round (the rounds paired, :func:`same_run`); ``--rev HEAD`` on a
clean tree times the same code twice, the check that the verdict says nothing of noise.

Prints every collective's table (median µs per call, best of ours against MPI), then one
summary: per collective and size the best algorithm of each mode as a ratio of medians to MPI's,
with the 1-minute load average measured around that collective's rounds, marked oversubscribed
when ranks outnumber cores.  The JSON (written atomically) holds every result and the
``GLIBC_TUNABLES`` of the launch: every buffer timed here is page-aligned (:mod:`mpi_exercises.pages`),
because where two buffers lie changes what a copy costs (on a 2-core AMD EPYC VM with glibc 2.36,
copying 64 KiB took 33 µs when the destination lay 16 bytes past the source modulo 4 KiB, as
two arrays of a power-of-two size allocated one after the other do, and 2 µs otherwise, or
with ``GLIBC_TUNABLES=glibc.cpu.x86_rep_movsb_threshold=2147483647``).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402

from netmodels.commandline import OneLineParser  # noqa: E402
from netmodels.outputs import output_problem  # noqa: E402
from recording_cost import has_package, package_at  # noqa: E402

COLLECTIVES = ("allreduce", "allgather", "alltoall", "broadcast", "barrier")
BEFORE = ROOT / "book" / "data" / "collectives_vs_mpi_before.json"
SIZES_BYTES = (8, 64 * 1024, 1024 * 1024)
SENDRECV = "sendrecv"           #: the bare exchange timed beside alltoall (not one of ours)


class Parser(OneLineParser):
    """One error line from the first rank only (every rank parses, before MPI starts)."""

    def error(self, message):
        from mpi_exercises.bench.placement import launch_rank

        if launch_rank() == 0:
            print(f"{self.prog}: error: {message} (--help lists the options)", file=sys.stderr)
        sys.exit(2)


def build_parser() -> Parser:
    from mpi_exercises.bench import arguments
    from mpi_exercises.bench import measure as sampling
    from mpi_exercises.bench.records import MODES

    p = Parser(prog="collectives_vs_mpi.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--json", metavar="FILE", help="write the results to FILE as JSON (atomically)")
    p.add_argument("--collectives", type=arguments.name_list(COLLECTIVES), default=list(COLLECTIVES),
                   help="comma-separated subset of " + ",".join(COLLECTIVES) + " (default: all)")
    p.add_argument("--sizes", type=arguments.size_list_of(1, 4, all_ranks=True), default=list(SIZES_BYTES),
                   help="comma-separated bytes per block, multiples of 8, suffix k/M allowed (default 8,64k,1M)")
    p.add_argument("--modes", type=arguments.name_list(MODES), default=list(MODES),
                   help="comma-separated subset of " + ",".join(MODES) + " (default: all)")
    p.add_argument("--iterations", type=arguments.sample_count, default=100,
                   help="timed samples per variant and size in the first pass, fewer for large sizes "
                        "(--budget-bytes; default 100)")
    p.add_argument("--warmup", type=arguments.nonneg_int, default=10, help="untimed samples first (default 10)")
    p.add_argument("--budget-bytes", type=arguments.positive_int, default=1 << 30,
                   help="caps samples x inner x bytes per call of a size (default 1 GiB)")
    p.add_argument("--inner", type=arguments.positive_int, default=10,
                   help="back-to-back calls per sample (default 10)")
    p.add_argument("--before", metavar="FILE", default=str(BEFORE),
                   help="an earlier run's JSON to print beside this one (default: %(default)s; 'none': no comparison)")
    p.add_argument("--rev", metavar="REV", help="also time the front doors of git revision REV (its "
                   "mpi_exercises imported beside this tree's) in the same rounds, and print now against it")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    sampling.add_options(p, target=0.0)
    return p


# ---------------------------------------------------------------- what each collective times
def _broadcast_prepare(comm, pkg="mpi_exercises"):
    pages, records = _module(pkg, "pages"), _module(pkg, "bench.records")
    broadcast, executor_for = (getattr(_module(pkg, "collectives.broadcast"), f) for f in ("broadcast", "executor_for"))

    rank, outs = comm.Get_rank(), {}

    def prepare(n, algorithm, mode):
        x = pages.copy(np.random.default_rng(rank).random(n))
        ref = x.copy()
        comm.Bcast(ref, root=0)
        out = outs.setdefault((n, algorithm), pages.allocate((n,), np.float64))
        out[...] = 0
        if algorithm == "mpi":
            def call():
                if rank == 0:
                    out[...] = x
                comm.Bcast(out, root=0)
        else:
            def executor():
                ex = executor_for(comm, algorithm, x.shape, x.dtype)

                def run():
                    if rank == 0:
                        out[...] = x
                    ex.run(out)
                return run
            call = records.mode_call(mode, broadcast, (comm, x, algorithm), dict(out=out), executor)
        call()
        return call, np.array_equal(out, ref)
    return prepare


def _barrier_prepare(comm, pkg="mpi_exercises"):
    records = _module(pkg, "bench.records")
    Barrier, barrier = (getattr(_module(pkg, "collectives.barrier"), f) for f in ("Barrier", "barrier"))

    made = {}

    def prepare(n, algorithm, mode):
        if algorithm == "mpi":
            return comm.Barrier, True

        def executor():
            return made.setdefault(algorithm, Barrier(comm, algorithm))
        call = records.mode_call(mode, barrier, (comm, algorithm), {}, executor)
        call()
        return call, True
    return prepare, made


def _alltoall_prepare(comm, pkg="mpi_exercises"):
    pages, _prepare = _module(pkg, "pages"), _module(pkg, "bench.alltoall")._prepare
    kit, size, rank = _prepare(comm, None, 0.0), comm.Get_size(), comm.Get_rank()

    def prepare(n, algorithm, mode):
        if algorithm != SENDRECV:
            return kit(n, algorithm, mode)
        send, recv = pages.copy(np.full(n * (size - 1), float(rank))), pages.allocate((n * (size - 1),), np.float64)
        right, left = (rank + 1) % size, (rank - 1) % size

        def call():
            comm.Sendrecv(send, right, 0, recv, left, 0)
        call()
        return call, bool(np.all(recv == left))
    return prepare


def _module(pkg: str, name: str):
    import importlib

    return importlib.import_module(f"{pkg}.{name}")


def _plans(comm, pkg="mpi_exercises"):
    """Per collective: ``(prepare, bytes per call of n elements)``, of package ``pkg``."""
    allgather_prepare = _module(pkg, "bench.allgather")._prepare
    allreduce_prepare = _module(pkg, "bench.allreduce")._prepare

    p = comm.Get_size()
    return {"allreduce": (allreduce_prepare(comm), lambda n: 8 * n),
            "allgather": (allgather_prepare(comm, None), lambda n: 8 * n * p),
            "alltoall": (_alltoall_prepare(comm, pkg), lambda n: 8 * n * p),
            "broadcast": (_broadcast_prepare(comm, pkg), lambda n: 8 * n)}


def joined(now, before, tag: str):
    """One prepare for both packages: an algorithm named ``NAME@tag`` is ``before``'s NAME."""
    def prepare(n, algorithm, mode):
        if algorithm.endswith(tag):
            return before(n, algorithm[:-len(tag)], mode)
        return now(n, algorithm, mode)
    return prepare


#: rounds with samples of both revisions needed before a row may be called slower: with fewer, no
#: distribution-free interval of the median of the rounds' ratios reaches 95 %
PAIRED_ROUNDS = 6


def same_run(results: list[dict], collective: str, tag: str) -> list[dict]:
    """Per size, algorithm and mode timed at both revisions in this run: now's median over
    before's (interleaved, so at one load), and the same paired round by round: in each round
    that timed both, the ratio of their medians; the median of those ratios with its 95 %
    distribution-free interval (:func:`~mpi_exercises.bench.statistics.median_ci`), and
    ``slower`` when that interval lies wholly above 1 over at least :data:`PAIRED_ROUNDS` rounds.
    Rounds are the unit because the machine drifts between them: the samples of one round are
    not independent of each other, and an interval from the pooled samples of two copies of the
    same code called 8 to 11 of 63 rows slower (allreduce, two runs, 2 ranks)."""
    from mpi_exercises.bench.measure import by_round
    from mpi_exercises.bench.statistics import median_ci

    def per_round(result):
        return by_round(result["times_s"], result["samples_per_round"])
    med = {(r["nelems"], r["algorithm"], r["mode"]): r for r in results}
    rows = []
    for (n, a, m), r in sorted(med.items()):
        old = med.get((n, a + tag, m))
        if old is None:
            continue
        ratios = [float(np.median(x) / np.median(y)) for x, y in zip(per_round(r), per_round(old)) if x.size and y.size]
        mid, lo, hi = median_ci(ratios)
        rows.append({"collective": collective, "bytes": 8 * n, "algorithm": a, "mode": m,
                     "before_median_s": old["median_s"], "now_median_s": r["median_s"],
                     "now_over_before": r["median_s"] / old["median_s"], "rounds_paired": len(ratios),
                     "round_ratio_median": mid, "interval": [lo, hi],
                     "slower": len(ratios) >= PAIRED_ROUNDS and lo > 1})
    return rows


def same_run_lines(rows: list[dict], rev: str) -> list[str]:
    from mpi_exercises.bench.records import fmt_bytes

    head = (f"{'collective':<10} {'size':>9} {'algorithm':<20} {'mode':<12} {'before µs':>10} {'now µs':>9} "
            f"{'now/before':>10}")
    lines = [f"This tree against {rev} in the same interleaved rounds (medians of the slowest rank)", head,
             "-" * len(head)]
    for r in rows:
        size = "-" if r["collective"] == "barrier" else fmt_bytes(r["bytes"])
        lines.append(f"{r['collective']:<10} {size:>9} {r['algorithm']:<20} {r['mode']:<12} "
                     f"{r['before_median_s'] * 1e6:10.1f} {r['now_median_s'] * 1e6:9.1f} {r['now_over_before']:10.2f}"
                     + ("  SLOWER" if r["slower"] else ""))
    lines.append(f"{sum(r['slower'] for r in rows)} of {len(rows)} rows slower than {rev}: in every round but "
                 f"few (the 95 % interval of the median of the rounds' ratios above 1, over {PAIRED_ROUNDS} rounds "
                 "or more)")
    return lines


# ---------------------------------------------------------------- the summary
def summary(collective: str, results: list[dict], load: tuple) -> list[dict]:
    """Per size: MPI's median, and per mode the best of ours (median, ratio of medians to MPI's)."""
    from mpi_exercises.bench.records import ratios

    ours = [r for r in results if r["algorithm"] != SENDRECV]
    table, rows = ratios(ours), []
    med = {(r["nelems"], r["algorithm"], r["mode"]): r["median_s"] for r in results}
    for n, modes in sorted(table.items()):
        row = {"collective": collective, "bytes": 8 * n, "mpi_median_s": med[(n, "mpi", "mpi")],
               "load_average_1min": list(load)}
        for mode, t in modes.items():
            row[mode] = {"best": t["best"], "median_s": med[(n, t["best"], mode)], "ratio": t["best_ratio"],
                         "ratios": {a: v for a, v in t.items() if not a.startswith("best")}}
        if (n, SENDRECV, "default") in med:
            row["sendrecv_median_s"] = med[(n, SENDRECV, "default")]
        rows.append(row)
    return rows


def summary_lines(rows: list[dict], modes: list[str]) -> list[str]:
    from mpi_exercises.bench.records import fmt_bytes

    head = f"{'collective':<10} {'size':>9} {'MPI µs':>8}" + "".join(
        f" | {m + ' best':<26} {'µs':>7} {'ratio':>6}" for m in modes) + " | load"
    lines = ["Best of ours per mode against MPI's (ratio of medians of the slowest rank)", head, "-" * len(head)]
    for r in rows:
        cells = "".join(f" | {r[m]['best']:<26} {r[m]['median_s'] * 1e6:7.1f} {r[m]['ratio']:6.2f}"
                        if m in r else f" | {'':<26} {'':>7} {'':>6}" for m in modes)
        size = "-" if r["collective"] == "barrier" else fmt_bytes(r["bytes"])
        lines.append(f"{r['collective']:<10} {size:>9} {r['mpi_median_s'] * 1e6:8.1f}{cells}"
                     f" | {r['load_average_1min'][0]:.2f}-{r['load_average_1min'][1]:.2f}")
        if "sendrecv_median_s" in r:
            lines.append(f"{'':<10} {'':>9} bare Sendrecv of the same bytes: {r['sendrecv_median_s'] * 1e6:.1f} µs "
                         f"(MPI's Alltoall x{r['mpi_median_s'] / r['sendrecv_median_s']:.2f} of it)")
    return lines


# ---------------------------------------------------------------- before and after
def ratios_to_mpi(results: dict) -> dict:
    """``{(collective, bytes, algorithm, mode): (ratio, low, high)}``: each variant's median over
    MPI's median at the same size (``results``: per collective, the rows of one run), and the
    ratio's interval from both medians' confidence intervals."""
    out = {}
    for collective, rows in results.items():
        mpi = {r["nelems"]: r for r in rows if r["algorithm"] == "mpi"}
        for r in rows:
            ref = mpi.get(r["nelems"])
            if r["algorithm"] in ("mpi", SENDRECV) or ref is None:
                continue
            (lo, hi), (rlo, rhi) = r["median_ci_s"], ref["median_ci_s"]
            out[(collective, 8 * r["nelems"], r["algorithm"], r["mode"])] = (
                r["median_s"] / ref["median_s"], lo / rhi, hi / rlo)
    return out


def before_after(before: dict, now: dict) -> list[dict]:
    """Rows present in both runs (:func:`ratios_to_mpi` of each): both ratios, their quotient,
    and ``slower`` when this run's interval lies wholly above the before's."""
    a, b = ratios_to_mpi(before), ratios_to_mpi(now)
    rows = []
    for key in sorted(set(a) & set(b), key=lambda k: (COLLECTIVES.index(k[0]) if k[0] in COLLECTIVES else 9,) + k):
        (r0, lo0, hi0), (r1, lo1, hi1) = a[key], b[key]
        rows.append({"collective": key[0], "bytes": key[1], "algorithm": key[2], "mode": key[3],
                     "before": r0, "before_interval": [lo0, hi0], "now": r1, "now_interval": [lo1, hi1],
                     "now_over_before": r1 / r0, "slower": lo1 > hi0})
    return rows


def before_after_lines(rows: list[dict], source: str) -> list[str]:
    from mpi_exercises.bench.records import fmt_bytes

    head = f"{'collective':<10} {'size':>9} {'algorithm':<20} {'mode':<12} {'before':>7} {'now':>7} {'now/before':>10}"
    lines = [f"Before ({source}) and now: ratios of medians to MPI's, each to its own run's MPI", head,
             "-" * len(head)]
    for r in rows:
        size = "-" if r["collective"] == "barrier" else fmt_bytes(r["bytes"])
        lines.append(f"{r['collective']:<10} {size:>9} {r['algorithm']:<20} {r['mode']:<12} {r['before']:7.2f} "
                     f"{r['now']:7.2f} {r['now_over_before']:10.2f}" + ("  SLOWER" if r["slower"] else ""))
    slower = sum(r["slower"] for r in rows)
    lines.append(f"{slower} of {len(rows)} rows slower than before beyond both confidence intervals")
    return lines


def read_before(path: str):
    """The ``results`` of an earlier run's JSON, or a one-line problem (str)."""
    import json

    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        results = data["results"]
        ratios_to_mpi(results)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"cannot read an earlier run from {path}: {type(exc).__name__}: {exc}"
    return results


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    bad = [s for s in args.sizes if s % 8]
    if bad or not args.sizes:
        build_parser().error(f"--sizes must be multiples of 8 bytes (float64 elements), got {bad or 'none'}")
    if args.json and (problem := output_problem(args.json)):
        build_parser().error(f"--json: {problem}")          # refused before any work, so none is lost
    before = None if args.before == "none" else read_before(args.before)
    if isinstance(before, str):
        build_parser().error(f"--before: {before}")
    if args.rev is not None and not has_package(args.rev):
        build_parser().error(f"--rev: git has no mpi_exercises/executor.py at {args.rev!r}")
    with tempfile.TemporaryDirectory() as where:
        return _main(args, before, argv, None if args.rev is None else package_at(args.rev, where))


def _main(args, before, argv, old) -> int:
    """Time every collective (and REV's doors beside, if ``old``), print, save; 1 on wrong results."""
    from mpi4py import MPI

    from mpi_exercises.bench import placement

    comm = MPI.COMM_WORLD
    oversubscribed = placement.warn_if_oversubscribed(comm)
    tag = None if old is None else "@" + args.rev
    runs = _Runs(comm, args, old, tag)
    for collective in args.collectives:
        runs.time(collective, oversubscribed)
    if comm.Get_rank() == 0:
        _report(comm, args, before, argv, runs, oversubscribed)
    ok = all(r["correct"] for rs in (*runs.everything.values(), *runs.earlier.values()) for r in rs)
    if comm.Get_rank() == 0 and not ok:
        print("WRONG RESULTS: see the tables above", file=sys.stderr)
    return 0 if ok else 1


class _Runs:
    """The runs of one launch, collective by collective: this tree's results (``everything``), their
    rounds (``record``), summary ``rows``, and with REV's doors beside (``tag``) the same-run
    comparison (``against``) and REV's own results (``earlier``)."""

    def __init__(self, comm, args, old, tag):
        from mpi_exercises.bench import measure as sampling

        self.comm, self.args, self.old, self.tag = comm, args, old, tag
        self.options = sampling.options_from(comm, args)
        self.plans = _plans(comm)
        self.old_plans = None if old is None else _plans(comm, old.__name__)
        self.sizes = [s // 8 for s in args.sizes]
        self.everything, self.record, self.rows, self.against, self.earlier = {}, {}, [], [], {}

    def _variants(self, collective):
        """``(prepare, nbytes, sizes, made, algorithms)`` of ``collective`` (REV's joined in)."""
        from mpi_exercises.collectives._door import choices

        comm, old, tag = self.comm, self.old, self.tag
        algorithms = [a for a in choices(collective) if a != "mpi"]
        if collective == "barrier":
            prepare, made = _barrier_prepare(comm)
            nbytes, todo = (lambda n: 0), [0]
            if old is not None:
                old_prepare, old_made = _barrier_prepare(comm, old.__name__)
                prepare, made = joined(prepare, old_prepare, tag), {**made, **{tag: old_made}}
        else:
            (prepare, nbytes), todo, made = self.plans[collective], self.sizes, {}
            if old is not None:
                prepare = joined(prepare, self.old_plans[collective][0], tag)
            if collective == "alltoall":
                algorithms.append(SENDRECV)
        if old is not None:
            algorithms += [a + tag for a in algorithms if a != SENDRECV]
        return prepare, nbytes, todo, made, algorithms

    def time(self, collective, oversubscribed):
        """Time ``collective``'s variants in interleaved rounds, keep and print the results."""
        from mpi_exercises.bench import measure as sampling
        from mpi_exercises.bench import placement, records

        args, tag = self.args, self.tag
        prepare, nbytes, todo, made, algorithms = self._variants(collective)
        load0 = placement.load_average()
        results, rounds = sampling.compare(
            self.comm, todo, algorithms, args.modes, prepare, nbytes, iterations=args.iterations,
            warmup=args.warmup, budget_bytes=args.budget_bytes, desc=collective, progress=not args.no_progress,
            inner=args.inner, **self.options)
        for made_one in made.values():
            for b in (made_one.values() if isinstance(made_one, dict) else [made_one]):
                b.free()
        load = (load0, placement.load_average())
        # the bare exchange is one call, whatever the mode
        results = [r for r in results if r["algorithm"] != SENDRECV or r["mode"] == "default"]
        if self.old is not None:
            self.against += same_run(results, collective, tag)
            self.earlier[collective] = [r for r in results if r["algorithm"].endswith(tag)]
            results = [r for r in results if not r["algorithm"].endswith(tag)]
        self.everything[collective], self.record[collective] = results, rounds
        self.rows += summary(collective, results, load)
        if self.comm.Get_rank() == 0:
            mpi_name = {"barrier": "MPI.Barrier", "broadcast": "MPI.Bcast"}.get(
                collective, "MPI." + collective.capitalize())
            print(f"\n{collective}, float64, {self.comm.Get_size()} ranks, load {load[0]:.2f}-{load[1]:.2f}"
                  + (" (OVERSUBSCRIBED: ranks share cores)" if oversubscribed else ""))
            print(records.compare_report([r for r in results if r["algorithm"] != SENDRECV], mpi_name,
                                         unit="elements"), flush=True)


def _report(comm, args, before, argv, runs: _Runs, oversubscribed) -> None:
    """Rank 0: the summary, before/after and same-run lines, and the JSON."""
    from mpi_exercises.bench import placement, records, timing

    print()
    print(f"timing: {timing.loop_method(args.inner)}; {comm.Get_size()} ranks, "
          f"{placement.usable_cores()} usable cores" + (", OVERSUBSCRIBED" if oversubscribed else ""))
    for line in summary_lines(runs.rows, args.modes):
        print(line)
    compared = [] if before is None else before_after(before, runs.everything)
    if before is not None:
        print()
        for line in before_after_lines(compared, args.before):
            print(line)
    if runs.old is not None:
        print()
        for line in same_run_lines(runs.against, args.rev):
            print(line)
    records.save(comm, args.json, "collectives_vs_mpi", oversubscribed,
                 {"sizes_bytes": args.sizes, "modes": args.modes, "collectives": args.collectives,
                  "iterations": args.iterations, "warmup": args.warmup, "budget_bytes": args.budget_bytes,
                  "inner": args.inner, **runs.options},
                 glibc_tunables=os.environ.get("GLIBC_TUNABLES"),
                 generated_by="mpiexec -n %d python benchmarks/collectives_vs_mpi.py %s"
                              % (comm.Get_size(), " ".join(sys.argv[1:] if argv is None else argv)),
                 timing_method=timing.loop_method(args.inner), summary=runs.rows,
                 before=None if before is None else args.before, before_after=compared,
                 rev=args.rev, same_run=runs.against, results_rev=runs.earlier, rounds=runs.record,
                 results=runs.everything)
    loads = [v for row in runs.rows for v in row["load_average_1min"]]
    if loads:                                   # the last line: the load the whole run saw
        print(f"load average (1 min) {min(loads):.2f}-{max(loads):.2f} over the run, {comm.Get_size()} ranks, "
              f"{placement.usable_cores()} usable cores" + (", OVERSUBSCRIBED" if oversubscribed else ""))


if __name__ == "__main__":
    sys.exit(main())
