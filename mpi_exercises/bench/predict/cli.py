"""``python -m mpi_exercises predict``: its options and its run (collective over MPI)."""

from __future__ import annotations

import sys

from netmodels.outputs import write_json

from .. import arguments, placement
from ..launch_mode import combined
from .calibration import Calibration, G_line, calibration_from, drift, load_calibration, missing_line
from .comparison import best_models, compare, summarize_errors
from .measurement import COLLECTIVES, ELEM_BYTES, LOGP_N, ROUNDS, interleaved, pool
from .text import drift_line, last_line, reliability_line, report

#: vector lengths (elements) predicted by default: between the calibration's lengths
DEFAULT_SIZES = [2, 40, 700, 12000, 100000]


def add_arguments(p) -> None:
    p.add_argument("--collectives", type=arguments.name_list(tuple(COLLECTIVES)), default=list(COLLECTIVES),
                   help="comma-separated collectives (default: all): " + ",".join(COLLECTIVES))
    p.add_argument("--sizes", type=arguments.size_list_of(8, 4, all_ranks=True), default=DEFAULT_SIZES,
                   help="comma-separated vector lengths in float64 elements, suffix k/M allowed "
                        "(default 2,40,700,12000,100000: between the calibration's lengths)")
    arguments.add_options(p, iterations=(100, "timed calls per algorithm and size (default 100; fewer for large "
                                             "vectors)"),
                          warmup=(10, "untimed calls first, in each round (default 10)"),
                          json="write calibration, rows and errors to FILE as JSON")
    p.add_argument("--statistic", choices=("min", "median"), default="min",
                   help="measured time compared with the predictions (default min: noise only adds time)")
    p.add_argument("--calibration", metavar="FILE", nargs="+",
                   help="take the models' parameters from these JSON files instead of measuring them: a "
                        "ping-pong (α-β, NBL), an exchange, both of fresh data (--fresh) and a logp (LogGP) --json file, or the 'calibration' block of an "
                        "earlier predict --json (with its software term) or one written in its shape")
    p.add_argument("--calibration-repetitions", type=arguments.sample_count, default=200,
                   help="samples per size of the ping-pong, exchange, PRTT and software calibration in each "
                        "half of the rounds (default 200; the ping-pong and the exchange of fresh data take half as many)")
    p.add_argument("--rounds", type=even_rounds, default=ROUNDS,
                   help=f"rounds in which calibration and collectives alternate, an even number >= 2 (default "
                        f"{ROUNDS}); the drift compares the first half of the calibration rounds with the second")
    p.add_argument("--testjig", action="store_true",
                   help="also measure f(2) with the f(L) test jig for the NBL model (else f(L) = 1)")


def even_rounds(text: str) -> int:
    """argparse type: an even number of rounds, 2 to 64."""
    import argparse

    try:
        k = int(text)
    except ValueError:
        k = 0
    if k < 2 or k > 64 or k % 2:
        raise argparse.ArgumentTypeError(f"expected an even number of rounds from 2 to 64, got {text!r}")
    return k


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
    given, error = given_calibration(comm, args.calibration)
    if error:
        return 2
    oversubscribed = placement.warn_if_oversubscribed(comm)
    cores = min(placement.usable_cores(), 8)
    if rank == 0 and P < cores and not oversubscribed:
        print(f"predict: {P} ranks on a machine with {placement.usable_cores()} usable cores: "
              f"mpiexec -n {cores} tests the algorithms' structure better", file=sys.stderr)
    progress = not args.no_progress
    network, software = given is None, given is None or given.software is None
    jig = []
    if network and args.testjig:
        from .. import nbl_testjig

        jig = nbl_testjig.measure(comm, [600, 6000, 60000], 20, 5, 2, progress)
    taken = interleaved(comm, args.rounds, args.calibration_repetitions, args.collectives, args.sizes,
                        args.iterations, args.warmup, network=network, software=software, progress=progress)
    cal, halves, why = None, None, None
    if rank == 0:
        cal, halves, why = calibrations(taken["calibration"], P, given, jig)
    why = _agree(comm, why)
    if why:
        if rank == 0:
            print(f"predict: refused: {why}. The machine was probably busy during the calibration: run "
                  "again when it is quiet, or give the parameters with --calibration FILE", file=sys.stderr)
        return 2
    if rank == 0:
        publish(comm, args, oversubscribed, taken, cal, halves, given)
    return 0


def given_calibration(comm, paths) -> tuple:
    """``(the calibration of the --calibration files or None, False)`` on every rank, their
    warnings printed by rank 0; ``(None, True)`` after one line saying why they are refused."""
    given, error, notes = None, None, []
    if paths and comm.Get_rank() == 0:
        try:
            given = load_calibration(paths, comm.Get_size(), notes)
        except ValueError as exc:
            error = str(exc)
    error = _agree(comm, error)
    if error:
        if comm.Get_rank() == 0:
            print(f"predict: error: {error}", file=sys.stderr)
        return None, True
    if given is not None and comm.Get_rank() == 0:
        for line in notes + [missing_line(given)]:
            if line:
                print(line if line.startswith("predict:") else f"predict: warning: {line}", file=sys.stderr)
    return comm.bcast(given, root=0), False


def publish(comm, args, oversubscribed: bool, taken: dict, cal: Calibration, halves, given) -> None:
    """Rank 0's part after the measurement: the predictions compared with it, the report, the
    JSON (``--json``) and the last line."""
    P = comm.Get_size()
    rows = compare(taken["rows"], cal, P, args.statistic + "_s")
    summary = summarize_errors(rows)
    valid = not oversubscribed
    moved = halves_drift(halves)
    mode = combined(taken["modes"])
    print(f"predictions against measurements on {P} ranks ({args.statistic} of the samples; "
          f"error = (predicted - measured) / measured; calibration: {cal.source})")
    print(report(rows, summary, valid, P), flush=True)
    print(reliability_line(cal.reliability))
    for line in (cal.reliability or {}).get("left_out", []):
        print(f"warning: {line}")
    print(rounds_line(taken["rounds"], given))
    if (cal.measurements or {}).get("logp"):
        print(G_line(cal.measurements["logp"], cal.measurements["logp_n"]) or "predict: LogGP's g and G not identified")
    print(drift_line(moved), flush=True)
    if args.json:
        write_json(args.json, {
            "benchmark": "predict", "environment": placement.environment(comm),
            "command": f"mpiexec -n {P} python -m mpi_exercises " + " ".join(sys.argv[1:]),
            "oversubscribed": oversubscribed, "valid": valid, "load_average_1min": placement.load_average(),
            "parameters": {"collectives": args.collectives, "sizes_elements": args.sizes,
                           "iterations": args.iterations, "warmup": args.warmup, "statistic": args.statistic,
                           "elem_bytes": ELEM_BYTES, "models": list(cal.models), "testjig": args.testjig,
                           "calibration_file": args.calibration, "rounds": args.rounds,
                           "calibration_repetitions": args.calibration_repetitions},
            "rounds": taken["rounds"], "calibration": cal.as_dict(),
            "calibration_halves": None if halves is None else [h if isinstance(h, str) else h.as_dict()
                                                               for h in halves],
            "calibration_measurements": cal.measurements,
            "reliable": None if cal.reliability is None else cal.reliability["reliable"],
            "drift": moved, "stable": moved["stable"], "launch_mode": mode, "rows": rows, "summary": summary,
            "best": best_models(summary)})
        print(f"results written to {args.json}")
    print(last_line(P, oversubscribed, placement.load_average(), summary, cal, mode, moved), flush=True)


def calibrations(rounds: list[dict], nprocs: int, given: Calibration | None, jig) -> tuple:
    """``(calibration of all rounds, (first half's, second half's) or None, None)``, or ``(None,
    None, why)`` if the fit of all rounds is refused (no MPI; :func:`calibration_from`).  With no
    round measured (a given calibration with its software term) the calibration is ``given``.  A
    half whose fit is refused stands as its reason (a str) in place of its calibration."""
    if not rounds:
        return given, None, None
    cal, why = calibration_from({**pool(rounds), "logp_n": LOGP_N}, nprocs, given, jig)
    if why:
        return None, None, why
    h = len(rounds) // 2
    halves = []
    for part in (rounds[:h], rounds[h:]):
        c, why_half = calibration_from({**pool(part), "logp_n": LOGP_N}, nprocs, given, jig)
        halves.append(c if c is not None else why_half)
    return cal, tuple(halves), None


def halves_drift(halves) -> dict:
    """:func:`drift` between the two halves' calibrations, ``compared`` naming them (no MPI);
    a half whose fit was refused makes the run unstable, its reason in ``at``; no halves
    (nothing measured): nothing known."""
    what = "first half of the rounds against the second"
    if halves is None:
        return {"largest": None, "at": None, "stable": None, "compared": what}
    refused = [f"{name} half's fit refused: {h}" for name, h in zip(("first", "second"), halves) if isinstance(h, str)]
    if refused:
        return {"largest": None, "at": "; ".join(refused), "stable": False, "compared": what}
    return {**drift(*halves), "compared": what}


def rounds_line(rounds: dict, given: Calibration | None) -> str:
    """How calibration and collectives were taken, in one line."""
    if not rounds["interleaved"]:
        return (f"calibration given ({given.source}), not measured: not interleaved with the collectives "
                f"({rounds['rounds']} rounds of collectives, {collective_samples(rounds)}); whether the machine "
                f"moved since is not known; {seconds(rounds)}")
    what = "the software term" if given is not None else "ping-pong, exchange, both of fresh data, PRTT and software term"
    return (f"calibration ({what}) and collectives measured in {rounds['rounds']} alternate rounds: "
            f"{rounds['calibration_samples_per_round']} calibration samples per size and round, pooled for the "
            f"fit; {collective_samples(rounds)}; {seconds(rounds)}")


def collective_samples(rounds: dict) -> str:
    lo, hi = rounds["collective_samples_per_row"]
    return f"{lo if lo == hi else f'{lo} to {hi}'} samples per collective row in all"


def seconds(rounds: dict) -> str:
    return "time spent: " + ", ".join(f"{k.replace('_', ' ')} {v:.1f} s" for k, v in rounds["seconds"].items())
