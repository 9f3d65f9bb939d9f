"""What a benchmark prints and writes: human-readable sizes, the JSON epilogue, a front door's
times against MPI's own collective, and the one-algorithm commands.  Importing this module
does not start MPI."""

from __future__ import annotations

import functools
import sys
from typing import Callable

import numpy as np

from netmodels.outputs import write_json

from .placement import environment, load_average, warn_if_oversubscribed
from .statistics import summarize
from .timing import loop_method, time_interleaved


def progress(iterable=None, *, show: bool, **options):
    """A progress bar on stderr over ``iterable`` (or updated by hand): tqdm's, with its
    ``options``, where ``show`` (rank 0 without ``--no-progress``) and stderr is a terminal;
    elsewhere one that shows nothing, and tqdm is not imported (its import looks up its
    version among the installed packages: 0.03 CPU-s in every rank)."""
    if show:
        from tqdm import tqdm

        return tqdm(iterable, file=sys.stderr, disable=None, **options)
    return _Hidden(iterable)


class _Hidden:
    """The progress bar that shows nothing: the calls the benchmarks make of tqdm's."""

    def __init__(self, iterable=None):
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def save(comm, path, benchmark: str, oversubscribed: bool, parameters: dict, **fields) -> None:
    """A command's epilogue (rank 0): if ``path``, write the results as JSON (benchmark,
    environment, oversubscribed, 1-minute load average, parameters, then ``fields``) and say so."""
    if not path:
        return
    write_json(path, {"benchmark": benchmark, "environment": environment(comm), "oversubscribed": oversubscribed,
                      "load_average_1min": load_average(), "parameters": parameters, **fields})
    print(f"results written to {path}")


def parameters(args, drop=("module", "command", "parser")) -> dict:
    """The command-line values of ``args`` as a dict (argparse's own entries dropped)."""
    return {k: v for k, v in vars(args).items() if k not in drop}


def fmt_bytes(n: float) -> str:
    """Human-readable byte count with binary prefixes (1 KiB = 1024 B)."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


#: how a front door is timed: the call as users make it, without its argument check, or
#: only the algorithm (the cached executor on prepared buffers)
MODES = ("default", "check=False", "executor")


def ratios(results: list[dict]) -> dict:
    """``{N: {mode: {algorithm: median / MPI's median, ..., best, best_ratio, best_by_min,
    best_min_ratio}}}``: each variant's median over MPI's, and the best algorithm per mode
    by median (and by minimum, the ratio of minima)."""
    ref = {r["nelems"]: r for r in results if r["algorithm"] == "mpi"}
    table: dict = {}
    for r in results:
        if r["algorithm"] != "mpi":
            row = table.setdefault(r["nelems"], {}).setdefault(r["mode"], {})
            row[r["algorithm"]] = r["median_s"] / ref[r["nelems"]]["median_s"]
            row.setdefault("_min", {})[r["algorithm"]] = r["min_s"] / ref[r["nelems"]]["min_s"]
    for modes in table.values():
        for row in modes.values():
            by_min = row.pop("_min")
            best, best_min = min(row, key=row.get), min(by_min, key=by_min.get)
            row.update(best=best, best_ratio=row[best], best_by_min=best_min, best_min_ratio=by_min[best_min])
    return table


def compare_report(results: list[dict], reference: str, unit: str = "N") -> str:
    """Median µs per call of every variant, and the best of ours as a ratio to ``reference``
    (MPI's collective): ratio of medians, and of minima in parentheses."""
    algorithms = list(dict.fromkeys(r["algorithm"] for r in results if r["algorithm"] != "mpi"))
    modes = list(dict.fromkeys(r["mode"] for r in results if r["algorithm"] != "mpi"))
    med = {(r["nelems"], r["algorithm"], r["mode"]): r["median_s"] for r in results}
    tab, width = ratios(results), 9
    widths = {a: max(width, len(a)) for a in algorithms}        # whole names in the header
    lines = [f"Median time per call (µs); best of ours: ratio of medians (ratio of minima) to {reference}",
             f"{unit:>8} {'mode':<12}{'mpi':>{width}} " + " ".join(f"{a:>{widths[a]}}" for a in algorithms)
             + "  best of ours",
             "-" * (22 + width + sum(w + 1 for w in widths.values()) + 26)]
    for n in sorted({r["nelems"] for r in results}):
        for i, mode in enumerate(modes):
            mpi = f"{med[(n, 'mpi', 'mpi')] * 1e6:>{width}.1f}" if i == 0 else " " * width
            cells = " ".join(f"{med[(n, a, mode)] * 1e6:>{widths[a]}.1f}" for a in algorithms)
            t = tab[n][mode]
            lines.append(f"{n if i == 0 else '':>8} {mode:<12}{mpi} {cells}  {t['best']} x{t['best_ratio']:.2f} "
                         f"({t['best_by_min']} x{t['best_min_ratio']:.2f})")
    bad = sorted({(r["nelems"], r["algorithm"]) for r in results if not r["correct"]})
    if bad:
        lines.append(f"WRONG RESULTS: {bad}")
    return "\n".join(lines)


def mode_call(mode: str, door: Callable, args: tuple, kwargs: dict, executor: Callable) -> Callable:
    """The timed call of one mode of :data:`MODES`: the front door ``door(*args, **kwargs)``
    as users call it, the same with ``check=False``, or ``executor()`` (which makes the call
    of the algorithm alone)."""
    if mode == "default":
        return functools.partial(door, *args, **kwargs)
    if mode == "check=False":
        return functools.partial(door, *args, check=False, **kwargs)
    return executor()


def once(comm, args, call: Callable, reference: Callable, *, collective: str, reference_name: str,
         describe: str, matches: Callable = np.array_equal, after: Callable = lambda: ([], {})) -> int:
    """A one-algorithm command: ``call(out=None)`` once (a ValueError: exit status 2 with one
    line), its result compared with ``reference()`` (MPI's own, on every rank), then
    ``args.repeat`` timed calls ``call(out)`` after ``args.warmup`` untimed ones, each after a
    barrier, a call's time being the slowest rank's (:func:`time_interleaved`, one call per
    sample, as :func:`loop_method` says in the output); the report (``describe``)
    and the JSON.  ``after()`` (collective, after the check) returns more lines to print and
    more JSON fields.  Exit status 1 if the result differs from MPI's."""
    from mpi4py import MPI

    rank = comm.Get_rank()
    oversubscribed = warn_if_oversubscribed(comm)
    try:  # first, so that invalid arguments end in a message, not in an MPI error
        out = call(None)
    except ValueError as exc:
        if rank == 0:
            print(f"error: {exc}", file=sys.stderr)
        return 2
    ok = comm.allreduce(bool(matches(out, reference())), op=MPI.LAND)
    extra, fields = after()
    # a call ends when the slowest rank is done; one call per barrier: what a single call costs
    samples = time_interleaved(comm, [lambda: call(out)], args.repeat, args.warmup)[0]
    if rank == 0:
        stats = summarize(samples)
        print(f"{describe}: {'correct' if ok else 'WRONG'} (vs {reference_name}); min {stats['min_s'] * 1e6:.1f} µs, "
              f"median {stats['median_s'] * 1e6:.1f} µs over {args.repeat} calls"
              + (" (oversubscribed)" if oversubscribed else ""), flush=True)
        print(f"timing: {loop_method(1)}")
        for line in extra:
            print(line)
        save(comm, args.json, collective, oversubscribed, parameters(args), correct=ok, **fields,
             timing_method=loop_method(1), results=stats)
    if not ok:
        if rank == 0:
            print(f"error: the result differs from {reference_name}", file=sys.stderr)
        return 1
    return 0
