"""``python -m netmodels timeline ALGORITHM -P RANKS --model MODEL``: a collective's simulated timeline.

Builds the algorithm's schedule, simulates it with its trace (:func:`netmodels.simulate.simulate`,
``trace=True``), prints the predicted time and the operations traced, and writes the trace as
JSON (``--json``) and its picture (:mod:`netmodels.figures.timeline`): a PNG (``--png``,
matplotlib) or a standalone HTML page (``--html``, Plotly, no network needed).  The arguments
shared with ``python -m netmodels simulate`` (models, parameters, options, semantics, receive
order) are that command's.  Bad input exits with status 2 and one line on stderr; a trace that
would not fit in memory is refused the same way before anything is built.
"""

from __future__ import annotations

import sys
import time

from ..commandline import available_memory
from ..outputs import output_problem, write_json, write_text
from . import budget, cli
from . import trace as tr
from .engine import simulate

PROG = "python -m netmodels timeline"


def add_arguments(p) -> None:
    cli.add_arguments(p)
    for action in list(p._actions):          # simulate's --json says "the result"; ours holds the trace
        if action.dest == "json":
            action.help = "write the trace (every operation: rank, peer, step, kind, start, end in s) as JSON"
    out = p.add_mutually_exclusive_group()
    out.add_argument("--png", metavar="FILE", help="draw the timeline as a PNG picture")
    out.add_argument("--html", metavar="FILE", help="draw the timeline as a standalone HTML page (Plotly)")
    p.add_argument("--rows", type=int, default=None, metavar="ROWS",
                   help="rows of the picture: more ranks than this are drawn in bins of ranks "
                        "(median and range per step and kind; default 64)")


def _error(text: str) -> int:
    print(f"{PROG}: error: {text}", file=sys.stderr)
    return 2


def _trace_refusal(build, nprocs: int, nelems: int, clocked: bool) -> str | None:
    """The trace's own memory, estimated from the schedule's growth before it is built."""
    if nprocs <= 4 * budget.PROBE:
        return None
    g = budget.growth(build, nelems, nprocs)
    if g is None:
        return None
    transfers, steps = g.at(nprocs, nelems)[:2]
    rows = (tr.ROWS_PER_MESSAGE * transfers if clocked
            else tr.ROWS_PER_RANK_STEP * min(2 * transfers, nprocs * steps))
    return tr.refusal(rows, nprocs, available_memory())


def _save_png(fig, path) -> None:
    """``fig`` as a PNG at ``path``, atomically as :func:`netmodels.outputs.write_text` writes
    text (a temporary file in the same folder, then one ``os.replace``); a character device or
    a named pipe is written through."""
    import os
    import tempfile
    from pathlib import Path

    p = Path(path)
    if p.exists() and not p.is_file():
        with open(p, "wb") as fh:
            fig.savefig(fh, format="png", dpi=110)
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fig.savefig(fh, format="png", dpi=110)
        os.chmod(tmp, 0o644)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _summary(args, name, n, values, semantics, result, seconds: float) -> None:
    """What was simulated, its parameters, the predicted time, the operations by kind and the
    wall time of build and simulation (``seconds``), on stdout."""
    trace = result.trace
    print(f"{name} on P = {args.ranks} ranks, N = {n} elements, model {args.model}, {semantics} semantics"
          + (f", receives {args.receives}" if semantics == "loggopsim" else ""))
    print("\n".join(cli.describe_parameters(args.model, values, args.param)))
    print(f"  predicted time  {cli.format_time(result.time)}")
    counts = {k: int((trace.kind == i).sum()) for i, k in enumerate(trace.kinds)}
    print(f"  operations      {len(trace):,} (" + ", ".join(f"{k} {v:,}" for k, v in counts.items() if v) + ")")
    print(f"  wall time       build and simulation {seconds:.3f} s", flush=True)


def _write_outputs(args, result, rows: int, about: dict, title: str) -> None:
    """The files asked for: ``--json`` (``about``, the time and the trace), ``--png``, ``--html``."""
    from ..figures import timeline as tl

    trace = result.trace
    if args.json:
        write_json(args.json, {**about, **({"receives": args.receives} if about["semantics"] == "loggopsim" else {}),
                               "time_s": result.time, "trace": trace.to_json()})
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib.figure import Figure

        fig = Figure(figsize=(10, 5.5))
        tl.draw_timeline(fig.add_subplot(), trace, rows=rows, title=title)
        fig.tight_layout()
        _save_png(fig, args.png)
    if args.html:
        write_text(args.html, tl.html_page(trace, rows=rows, title=title))


def run(args) -> int:
    from ..figures import timeline as tl

    for name in ("png", "html"):
        path = getattr(args, name)
        problem = path and output_problem(path)
        if problem:
            return _error(f"--{name}: {problem}")
        if path and not str(path).lower().endswith(f".{name}"):    # the picture's kind is the option's
            return _error(f"--{name} writes a {name.upper()} file: give it a name ending in .{name}, got {path}")
    if args.rows is not None and args.rows < 1:
        return _error(f"--rows must be an integer >= 1, got {args.rows}")
    rows = args.rows or tl.MAX_ROWS
    try:
        name, entry, values, model, semantics, n, options, build, refused = cli.prepare(args)
        refused = refused or _trace_refusal(build, args.ranks, n, hasattr(model, "message_terms"))
        if refused:
            return _error(refused)
        t0 = time.perf_counter()
        schedule = build(args.ranks, n)
        result = simulate(schedule, model, semantics=semantics, receives=args.receives, trace=True)
    except (ValueError, TypeError) as exc:
        return _error(str(exc))
    t1 = time.perf_counter()
    _summary(args, name, n, values, semantics, result, t1 - t0)
    _write_outputs(args, result, rows, {"algorithm": name, "P": args.ranks, "N": n, "options": options,
                                        "model": args.model, "parameters": values, "semantics": semantics},
                   title=f"{name} on P = {args.ranks}, N = {n}: {entry.label}, {semantics}")
    t2 = time.perf_counter()
    if args.png or args.html:
        print(f"  picture         {args.png or args.html} ({t2 - t1:.3f} s)")
    elif not args.json:
        print("  nothing drawn or written: --png FILE, --html FILE or --json FILE keeps the timeline")
    return 0
