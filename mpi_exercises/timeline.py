"""``mpiexec -n P python -m mpi_exercises timeline ALGORITHM -N N``: one collective measured
rank by rank and predicted, as two traces and one picture.

Every rank runs the algorithm's schedule with the executor (``--warmup`` calls, then
``--repeat`` recorded calls, each after a barrier: :meth:`mpi_exercises.executor.Executor.run_recorded`);
the clocks are aligned before and after (:mod:`mpi_exercises.clocks`); the recorded call of
median length becomes the measured trace (:func:`measured_trace`: per rank and step, posting,
waiting and combining).  The prediction is the simulated trace of the same schedule under a
model of the table with its default machine (:func:`netmodels.figures.timeline.simulated_trace`),
named in the output.  ``--json`` writes both traces and the alignment; ``--png``/``--html``
draw the measured trace above the simulated one (:mod:`netmodels.figures.timeline`).  A rank
whose clock offset moved between the estimates (not aligned) is said in the JSON
(``alignment.aligned``), and the picture then leaves the measured trace out and says why.
"""

from __future__ import annotations

import argparse
import textwrap

import numpy as np

from netmodels.outputs import write_json, write_text
from netmodels.simulate import trace as tr

from .bench.arguments import add_force_option, count_of, int_at_least, sample_count

PROG = "python -m mpi_exercises timeline"
#: the kinds of a measured trace: a step's posting (from its start until its requests were
#: started), waiting (until they completed) and combining (its blocks applied).  The names are
#: those of the calls a step made when traces were first stored; a step of one or two requests
#: now starts and waits for each alone (:data:`mpi_exercises.executor.ONE_BY_ONE`): the names
#: stay, so that every stored trace and lab 5's parts read alike
MEASURED_KINDS = ("post (Startall)", "wait (Waitall)", "combine")


def _algorithm(text: str) -> str:
    from netmodels.algorithms import registry

    try:
        return registry.get(text).name
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_arguments(p) -> None:
    from netmodels.models import table

    p.add_argument("algorithm", metavar="ALGORITHM", type=_algorithm,
                   help="a registered algorithm (e.g. allreduce.recursive_doubling, barrier.dissemination)")
    p.add_argument("-N", type=count_of(8, 4), default=None,
                   help="float64 elements of the vector (default 0 for a barrier, 1 otherwise)")
    p.add_argument("--model", choices=table.names(), default="loggp",
                   help="model of the prediction, with its default machine unless --calibration (default: loggp)")
    p.add_argument("--calibration", metavar="FILE", nargs="+",
                   help="price the simulated trace with this machine's parameters instead: files predict "
                        "--calibration reads (a pingpong, exchange or logp --json file, or a calibration block)")
    p.add_argument("--repeat", type=sample_count, default=20,
                   help="calls recorded, each after a barrier; the one of median length is drawn (default 20)")
    p.add_argument("--warmup", type=int_at_least(0), default=3, help="calls run first, not recorded (default 3)")
    add_force_option(p)
    p.add_argument("--json", metavar="FILE", help="write both traces and the clock alignment as JSON")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--png", metavar="FILE", help="draw the measured trace above the simulated one as a PNG picture")
    out.add_argument("--html", metavar="FILE", help="draw them as a standalone HTML page (Plotly)")


def measured_trace(records: list[dict], alignment: dict) -> tr.Trace:
    """The measured trace of one call from each rank's :meth:`~mpi_exercises.executor.Recorder.as_dict`
    (``records[r]``), its times moved onto rank 0's clock by ``alignment`` (of
    :func:`mpi_exercises.clocks.combine`) and counted from the earliest rank's entry (s).
    Rows: per rank and step, ``post (Startall)``, ``wait (Waitall)``, ``combine``; ``meta``
    holds the alignment (``aligned``: every rank's clock)."""
    off = alignment["offset_s"]
    if len(off) != len(records):
        raise ValueError(f"alignment has {len(off)} ranks, records {len(records)}")
    zero = min(r["entered"] + off[i] for i, r in enumerate(records))
    cols = {k: [] for k in ("rank", "peer", "step", "kind", "start", "end")}
    for rank, r in enumerate(records):
        shift = off[rank] - zero
        combined = np.asarray(r["combined"], float) + shift
        began = np.r_[r["entered"] + shift, combined[:-1]]
        edges = (began, np.asarray(r["posted"], float) + shift, np.asarray(r["completed"], float) + shift, combined)
        for k in range(3):
            n = combined.size
            cols["rank"].append(np.full(n, rank))
            cols["peer"].append(np.full(n, -1))
            cols["step"].append(np.asarray(r["step"], np.int64))
            cols["kind"].append(np.full(n, k))
            cols["start"].append(edges[k])
            cols["end"].append(edges[k + 1])
    c = {k: np.concatenate(v) if v else np.zeros(0) for k, v in cols.items()}
    meta = {"aligned": all(alignment["aligned"]), "alignment": alignment}
    return tr.Trace(len(records), c["rank"].astype(np.int64), c["peer"].astype(np.int64),
                    c["step"].astype(np.int64), c["kind"].astype(np.int64), c["start"], c["end"],
                    MEASURED_KINDS, "measured", "", meta).ordered()


def not_aligned_note(alignment: dict) -> str | None:
    """One line saying which ranks' clocks are not aligned and why, or None if all are."""
    bad = alignment["unstable"]
    if not bad:
        return None
    r = bad[0]
    return (f"measured trace left out: clocks not aligned (rank {r}'s offset moved "
            f"{alignment['spread_s'][r] * 1e6:.3g} µs, more than its error bound "
            f"{alignment['error_s'][r] * 1e6:.3g} µs allows" + (f"; {len(bad)} ranks" if len(bad) > 1 else "") + ")")


def draw(measured: tr.Trace, simulated: tr.Trace, title: str, png=None, html=None) -> None:
    """The picture: the measured trace above the simulated one, or, when the clocks are not
    aligned, the simulated one alone with a line saying so (never a misleading picture)."""
    from netmodels.figures import timeline as tl
    from netmodels.simulate.timeline_cli import _save_png

    note = not_aligned_note(measured.meta["alignment"])
    shown = None if note else measured
    title = title + ("\n" + note if note else "")
    if png:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib.figure import Figure

        fig = Figure(figsize=(10, 5.5))
        tl.draw_timeline(fig.add_subplot(), simulated, shown, title=title)
        fig.tight_layout()
        _save_png(fig, png)
    if html:
        write_text(html, tl.html_page(simulated, shown, title=title))


def _record(comm, args):
    """This rank's recorded calls (a list of dicts) and the alignment (on rank 0; None elsewhere)."""
    from mpi4py import MPI

    from netmodels.algorithms import registry

    from . import clocks
    from .executor import Executor, Recorder

    n = args.N if args.N is not None else (0 if args.algorithm.startswith("barrier.") else 1)
    schedule = registry.build(args.algorithm, comm.Get_size(), n)
    buf = np.zeros(schedule.nelems)         # sums stay 0: no overflow, whatever the repeats
    before = clocks.estimate(comm)
    with Executor(comm, schedule, np.float64, MPI.SUM) as ex:
        for _ in range(args.warmup):
            comm.Barrier()
            ex.run(buf)
        calls = []
        for _ in range(args.repeat):
            rec = Recorder(ex)
            comm.Barrier()
            ex.run_recorded(buf, rec)
            calls.append(rec.as_dict())
    after = clocks.estimate(comm)
    shared = clocks.one_node(comm)
    alignment = clocks.combine([before, after]) if comm.Get_rank() == 0 else None
    if alignment is not None:
        alignment["wtime_is_global"] = bool(comm.Get_attr(MPI.WTIME_IS_GLOBAL))
        # one node, one clock: the true offsets are 0, so each estimate's offset is its error
        alignment["one_node"] = shared
        alignment["measured_error_s"] = ([max(abs(float(e.offset[r])) for e in (before, after))
                                          for r in range(comm.Get_size())] if shared else None)
    return n, calls, alignment


def simulated_schedule(algorithm: str, P: int, n: int):
    """The schedule the simulated trace is made of (the executor runs the same)."""
    from netmodels.algorithms import registry

    return registry.build(algorithm, P, n)


def calibrated(paths, model: str, nprocs: int):
    """``(calibration, parameters of model)`` from ``paths`` (read as ``predict --calibration``
    reads them: :func:`mpi_exercises.bench.predict.load_calibration`); ValueError naming what is
    wrong, also when the files give no parameters of ``model``."""
    from .bench.predict import load_calibration

    cal = load_calibration(paths, nprocs)
    if model not in cal.models:
        raise ValueError(f"--calibration {' '.join(map(str, paths))} gives no parameters of {model}; "
                         f"it gives {', '.join(cal.models)}: choose one of them with --model")
    return cal, dict(cal.models[model])


def run(args) -> int:
    import sys

    from mpi4py import MPI

    from netmodels.figures.timeline import first_parting, simulated_trace
    from netmodels.models import table

    from .bench.predict.comparison import predicted_times, software_time

    comm = MPI.COMM_WORLD
    cal = params = error = None
    if args.calibration and comm.Get_rank() == 0:       # read once, refused on every rank before any work
        try:
            cal, params = calibrated(args.calibration, args.model, comm.Get_size())
        except ValueError as exc:
            error = str(exc)
    error = comm.bcast(error, root=0)
    if error:
        if comm.Get_rank() == 0:
            print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    n, calls, alignment = _record(comm, args)
    everyone = comm.gather(calls, root=0)
    if comm.Get_rank() != 0:
        return 0
    P = comm.Get_size()
    traces = [measured_trace([everyone[r][i] for r in range(P)], alignment) for i in range(args.repeat)]
    lengths = np.array([t.span[1] for t in traces])
    measured = traces[int(np.argsort(lengths)[len(lengths) // 2])]
    entry = table.get(args.model)
    simulated = simulated_trace(args.algorithm, P, args.model, N=n, params=params)
    machine = entry.source() if cal is None else f"calibration {cal.source}"
    software = with_software = None
    if cal is not None and cal.software is not None:     # one walk: messages and the executor's own time
        sched = simulated_schedule(args.algorithm, P, n)
        software = software_time(sched, cal, door=False)
        with_software = predicted_times(sched, cal, door=False)[args.model]
    parting = first_parting(simulated, measured)
    aligned = measured.meta["aligned"]
    worst = max(alignment["error_s"]) * 1e6
    print(f"{args.algorithm} on P = {P}, N = {n} float64, {args.repeat} calls recorded")
    print(f"  measured        {measured.span[1] * 1e6:.4g} µs (median call; all {np.min(lengths) * 1e6:.4g} to "
          f"{np.max(lengths) * 1e6:.4g} µs)")
    print(f"  predicted       {simulated.span[1] * 1e6:.4g} µs ({entry.label}, "
          + (f"default machine: {machine})" if cal is None else f"{machine})")
          + ("" if software is None else f"; with the executor's software term (predict's) "
                                         f"{with_software * 1e6:.4g} µs"))
    measured_error = alignment["measured_error_s"]
    print(f"  clocks          {'aligned' if aligned else 'NOT aligned: ranks ' + str(alignment['unstable'])}, "
          f"error <= {worst:.3g} µs (half the shortest round trip: "
          f"{max(alignment['round_trip_bound_s']) * 1e6:.3g} µs"
          + ("" if measured_error is None else f"; one node, so measured: {max(measured_error) * 1e6:.3g} µs")
          + f"; {alignment['method']})")
    print(f"  first parting   {'none' if parting is None else f'step {parting}'}", flush=True)
    if args.json:
        from .bench.placement import load_average, ranks_on_this_node, usable_cores

        write_json(args.json, {"benchmark": "timeline", "algorithm": args.algorithm, "P": P, "N": n, "dtype": "float64",
                               "ranks": P, "cores": usable_cores(), "oversubscribed": ranks_on_this_node() > usable_cores(),
                               "load_average_1min": load_average(),
                               "model": args.model, "machine": machine, "parameters": params,
                               "software_s": software, "repeat": args.repeat,
                               "measured_s": measured.span[1], "predicted_s": simulated.span[1],
                               "call_lengths_s": lengths.tolist(), "aligned": aligned, "alignment": alignment,
                               "first_parting": parting, "measured": measured.to_json(),
                               "simulated": simulated.to_json()})
    if args.png or args.html:
        title = "\n".join(textwrap.wrap(
            f"{args.algorithm} on P = {P}, N = {n}: measured (upper bar of each rank, clocks aligned to "
            f"<= {worst:.2g} µs) and simulated under {entry.label} with "
            + (f"its default machine, {machine}" if cal is None else machine) + " (lower bar)", 120))
        draw(measured, simulated, title, args.png, args.html)
    return 0
