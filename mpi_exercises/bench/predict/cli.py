"""``python -m mpi_exercises predict``: its options and its run (collective over MPI)."""

from __future__ import annotations

import sys

from netmodels.outputs import write_json

from .. import arguments, placement
from ..launch_mode import detect_mode
from .calibration import drift, load_calibration, missing_line
from .comparison import best_models, compare, summarize_errors
from .measurement import COLLECTIVES, ELEM_BYTES, calibrate, measure
from .text import drift_line, reliability_line, report

#: vector lengths (elements) predicted by default: between the calibration's lengths
DEFAULT_SIZES = [2, 40, 700, 12000, 100000]


def add_arguments(p) -> None:
    p.add_argument("--collectives", type=arguments.name_list(tuple(COLLECTIVES)), default=list(COLLECTIVES),
                   help="comma-separated collectives (default: all): " + ",".join(COLLECTIVES))
    p.add_argument("--sizes", type=arguments.size_list_of(8, 4, all_ranks=True), default=DEFAULT_SIZES,
                   help="comma-separated vector lengths in float64 elements, suffix k/M allowed "
                        "(default 2,40,700,12000,100000: between the calibration's lengths)")
    p.add_argument("--iterations", type=arguments.sample_count, default=100,
                   help="timed calls per algorithm and size (default 100; fewer for large vectors)")
    p.add_argument("--warmup", type=arguments.nonneg_int, default=10, help="untimed calls first (default 10)")
    p.add_argument("--statistic", choices=("min", "median"), default="min",
                   help="measured time compared with the predictions (default min: noise only adds time)")
    p.add_argument("--calibration", metavar="FILE", nargs="+",
                   help="take the models' parameters from these JSON files instead of measuring them: a "
                        "ping-pong (α-β, NBL) and a logp (LogGP) --json file, or the 'calibration' block of an "
                        "earlier predict --json (with its software term) or one written in its shape")
    p.add_argument("--calibration-repetitions", type=arguments.sample_count, default=200,
                   help="samples per size of the ping-pong, PRTT and software calibration (default 200)")
    p.add_argument("--testjig", action="store_true",
                   help="also measure f(2) with the f(L) test jig for the NBL model (else f(L) = 1)")
    p.add_argument("--json", metavar="FILE", help="write calibration, rows and errors to FILE as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    arguments.add_force_option(p)


def _agree(comm, error: str | None) -> str | None:
    """Rank 0's error (or None), known to every rank."""
    return comm.bcast(error, root=0)


def run(args) -> int:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    P, rank = comm.Get_size(), comm.Get_rank()
    if P < 2:
        if rank == 0:
            print("predict needs at least 2 ranks: mpiexec -n 2 python -m mpi_exercises predict",
                  file=sys.stderr)
        return 2
    given, error, notes = None, None, []
    if args.calibration and rank == 0:
        try:
            given = load_calibration(args.calibration, P, notes)
        except ValueError as exc:
            error = str(exc)
    error = _agree(comm, error)
    if error:
        if rank == 0:
            print(f"predict: error: {error}", file=sys.stderr)
        return 2
    if given is not None and rank == 0:
        for line in notes + [missing_line(given)]:
            if line:
                print(line if line.startswith("predict:") else f"predict: warning: {line}", file=sys.stderr)
    given = comm.bcast(given, root=0)
    oversubscribed = placement.warn_if_oversubscribed(comm)
    cores = min(placement.usable_cores(), 8)
    if rank == 0 and P < cores and not oversubscribed:
        print(f"predict: {P} ranks on a machine with {placement.usable_cores()} usable cores: "
              f"mpiexec -n {cores} tests the algorithms' structure better", file=sys.stderr)
    progress = not args.no_progress
    cal, why = calibrate(comm, args.calibration_repetitions, args.testjig, progress, given)
    why = _agree(comm, why)
    if why:
        if rank == 0:
            print(f"predict: refused: {why}. The machine was probably busy during the calibration: run "
                  "again when it is quiet, or give the parameters with --calibration FILE", file=sys.stderr)
        return 2
    mode = detect_mode(comm)                                  # the launch's mode, beside what it measures
    rows = measure(comm, args.collectives, args.sizes, args.iterations, args.warmup, progress)
    after = None
    if given is None or given.software is None:           # measured something: did the machine move?
        after, _ = calibrate(comm, args.calibration_repetitions, args.testjig, progress, given)
    if rank != 0:
        return 0
    rows = compare(rows, cal, P, args.statistic + "_s")
    summary = summarize_errors(rows)
    valid = not oversubscribed
    moved = drift(cal, after) if after is not None else {"largest": None, "at": None, "stable": None}
    print(f"predictions against measurements on {P} ranks ({args.statistic} of the samples; "
          f"error = (predicted - measured) / measured; calibration: {cal.source})")
    print(report(rows, summary, valid, P), flush=True)
    print(reliability_line(cal.reliability))
    for line in (cal.reliability or {}).get("left_out", []):
        print(f"warning: {line}")
    print(drift_line(moved), flush=True)
    if args.json:
        write_json(args.json, {
            "benchmark": "predict", "environment": placement.environment(comm),
            "command": f"mpiexec -n {P} python -m mpi_exercises " + " ".join(sys.argv[1:]),
            "oversubscribed": oversubscribed, "valid": valid, "load_average_1min": placement.load_average(),
            "parameters": {"collectives": args.collectives, "sizes_elements": args.sizes,
                           "iterations": args.iterations, "warmup": args.warmup, "statistic": args.statistic,
                           "elem_bytes": ELEM_BYTES, "models": list(cal.models), "testjig": args.testjig,
                           "calibration_file": args.calibration},
            "calibration": cal.as_dict(), "calibration_after": after.as_dict() if after else None,
            "calibration_measurements": cal.measurements,
            "reliable": None if cal.reliability is None else cal.reliability["reliable"],
            "drift": moved, "stable": moved["stable"], "launch_mode": mode, "rows": rows, "summary": summary,
            "best": best_models(summary)})
        print(f"results written to {args.json}")
    load = placement.load_average()
    best = best_models(summary).get("(all)")
    print(f"predict: {P} ranks{' OVERSUBSCRIBED (not valid)' if oversubscribed else ''}, 1-minute load "
          f"{'unknown' if load is None else format(load, '.1f')}; best model "
          + (f"{best} (median |error| {summary[best]['with_software']['median_abs']:.0%})" if best else "none")
          + f"; calibration {'reliable' if (cal.reliability or {}).get('reliable') else 'NOT reliable or not known'}"
          + f"; launch mode {mode['mode']} (MPI Allreduce / exchange at {mode['bytes'] // 1024} KiB "
            f"{mode['ratio']:.1f}, slow above {mode['threshold']:g})",
          flush=True)
    return 0
