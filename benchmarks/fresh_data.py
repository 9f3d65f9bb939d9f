"""The launch mode, explained: the price of sending data just written.

    python benchmarks/fresh_data.py --launches 8 --json results/fresh_data.json

Launches ``mpiexec -n 2`` again and again (settings cycled: ``default`` and ``cma-off``, as
``benchmarks/launch_modes.py`` defines them), a few seconds apart.  Each launch times, in one
interleaved loop per length (:func:`mpi_exercises.bench.timing.time_interleaved`, each call made
once untimed before its sample, as ``predict`` times a long call; one call per sample, the slowest
rank's), on page-aligned buffers:

- ``exchange``: both ranks ``Sendrecv`` a buffer not written since the last exchange (what every
  calibration times: the same buffer again and again);
- ``write``: a copy of as many bytes into another buffer (``np.copyto``), no message;
- ``write, exchange clean``: that copy, then the exchange of the clean buffer;
- ``write, exchange it``: the same copy, then the exchange of the buffer just written (what a
  collective does: it sends the copy of its input, or the partial sums it just combined);
- ``kit allreduce``: the kit's recursive doubling (``check=False``), and ``MPI Allreduce``.

``fresh`` = (write, exchange it) / (write, exchange clean): 1 if sending data just written costs
what sending data written long ago does.  A launch is slow when MPI's Allreduce takes more than :data:`~mpi_exercises.bench.launch_mode.MODE_RATIO` times the exchange at the
longest length in that same loop (the mode as :func:`mpi_exercises.bench.launch_mode.detect_mode`
reads it; its own reading, taken after the loop, is stored too: the mode can change within a
launch).  Prints one line per launch and a last line comparing ``fresh`` in the slow and normal launches;
the JSON (written atomically) holds every launch's medians and minima (µs).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402

from launch_modes import SETTINGS, setting_env, worker_result  # noqa: E402
from mpi_exercises.bench.launch_mode import MODE_RATIO  # noqa: E402
from netmodels.commandline import OneLineParser  # noqa: E402
from netmodels.outputs import output_problem, write_json  # noqa: E402

CALLS = ("exchange", "write", "write, exchange clean", "write, exchange it", "kit allreduce", "MPI Allreduce")
LENGTHS = (256 * 1024, 1024 * 1024)
MARK = "FRESH_DATA_RESULT "                   #: the worker's result line starts with this


def worker(args) -> int:
    """One launch (2 ranks): the calls of :data:`CALLS` at every length, and the launch's mode."""
    from mpi4py import MPI

    from mpi_exercises import pages
    from mpi_exercises.bench import placement, timing
    from mpi_exercises.bench.launch_mode import detect_mode
    from mpi_exercises.collectives.allreduce import allreduce

    comm = MPI.COMM_WORLD
    if comm.Get_size() != 2:
        if comm.Get_rank() == 0:
            print("fresh_data.py --worker needs exactly 2 ranks", file=sys.stderr)
        return 2
    placement.placement(comm)                   # each rank bound to a core of its own
    peer, load0 = 1 - comm.Get_rank(), placement.load_average()
    rows = []
    for nbytes in args.lengths:
        n = nbytes // 8
        x, recv, fresh, source, out = (pages.allocate((n,), np.float64) for _ in range(5))
        x[:], source[:] = 1.0 + comm.Get_rank(), 3.0

        def exchange(buf=x):
            comm.Sendrecv(buf, peer, 7, recv, peer, 7)

        def write():
            np.copyto(fresh, source)
        calls = [exchange, write, lambda: (write(), exchange()), lambda: (write(), exchange(fresh)),
                 lambda: allreduce(comm, x, "recursive_doubling", out=out, check=False),
                 lambda: comm.Allreduce(x, out, op=MPI.SUM)]
        t = timing.time_interleaved(comm, calls, args.iterations, args.warmup, warm=True) * 1e6
        rows.append({"bytes": nbytes, "median_us": dict(zip(CALLS, np.median(t, axis=1).tolist())),
                     "min_us": dict(zip(CALLS, t.min(axis=1).tolist()))})
    mode = detect_mode(comm)
    if comm.Get_rank() == 0:
        print(MARK + json.dumps({"rows": rows, "launch_mode": mode, "pid": os.getpid(),
                                 "load_average_1min": [load0, placement.load_average()]}), flush=True)
    return 0


def fresh_ratio(row: dict) -> float:
    """(write, exchange it) over (write, exchange clean), medians: the price of sending data just written."""
    m = row["median_us"]
    return m["write, exchange it"] / m["write, exchange clean"]


def launch(setting: str, args) -> dict:
    """One ``mpiexec -n 2`` launch of the worker under ``setting``: its result, or its error."""
    from mpi_exercises.labdata import mpiexec

    cmd = [mpiexec(), "-n", "2", sys.executable, str(Path(__file__).resolve()), "--worker", "--lengths",
           ",".join(map(str, args.lengths)), "--iterations", str(args.iterations), "--warmup", str(args.warmup)]
    t0 = time.time()
    out = worker_result(cmd, setting_env(setting), args.timeout, MARK)
    if "error" in out:
        return {"setting": setting, **out}
    return {"setting": setting, "started": time.strftime("%H:%M:%S", time.gmtime(t0)), **out}


def mode_ratio(row: dict) -> float:
    """MPI's Allreduce over the exchange, medians of one loop: the launch's mode at that moment."""
    return row["median_us"]["MPI Allreduce"] / row["median_us"]["exchange"]


def summary(launches: list[dict]) -> dict:
    """Per setting and kind of launch (slow: :func:`mode_ratio` at the longest length above
    :data:`~mpi_exercises.bench.launch_mode.MODE_RATIO`), the launches and the median ``fresh`` ratio at the longest length."""
    out = {}
    for r in launches:
        if "rows" not in r:
            continue
        kind = "slow" if mode_ratio(r["rows"][-1]) > MODE_RATIO else "normal"
        out.setdefault(r["setting"], {}).setdefault(kind, []).append(fresh_ratio(r["rows"][-1]))
    return {s: {k: {"launches": len(v), "fresh_median": float(np.median(v)), "fresh_range": [min(v), max(v)]}
                for k, v in kinds.items()} for s, kinds in out.items()}


def build_parser() -> OneLineParser:
    from mpi_exercises.bench import arguments

    p = OneLineParser(prog="fresh_data.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--launches", type=arguments.positive_int, default=8, help="launches (default 8)")
    p.add_argument("--settings", type=arguments.name_list(tuple(SETTINGS)), default=["default", "cma-off"],
                   help="comma-separated settings of launch_modes.py, cycled (default default,cma-off)")
    p.add_argument("--lengths", type=arguments.size_list_of(8, 8, True), default=list(LENGTHS),
                   help="comma-separated bytes per message, multiples of 8, suffix k/M (default 256k,1M)")
    p.add_argument("--iterations", type=arguments.positive_int, default=40, help="timed samples per call (default 40)")
    p.add_argument("--warmup", type=arguments.nonneg_int, default=3, help="untimed samples first (default 3)")
    p.add_argument("--apart", type=float, default=5.0, help="seconds between launches (default 5)")
    p.add_argument("--timeout", type=arguments.positive_int, default=300, help="seconds a launch may take (default 300)")
    p.add_argument("--json", metavar="FILE", help="write the results to FILE as JSON, atomically")
    p.add_argument("--worker", action="store_true", help="(internal) one launch's measurement, under mpiexec -n 2")
    return p


def main(argv=None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    if any(n % 8 for n in args.lengths):
        p.error(f"--lengths must be multiples of 8 bytes, got {args.lengths}")
    if args.worker:
        return worker(args)
    if args.json and (problem := output_problem(args.json)):
        p.error(f"--json: {problem}")
    if not args.apart >= 0:
        p.error(f"--apart must be >= 0 seconds, got {args.apart}")
    launches = []
    for k in range(args.launches):
        if k:
            time.sleep(args.apart)
        r = launch(args.settings[k % len(args.settings)], args)
        launches.append(r)
        if "error" in r:
            print(f"launch {k} ({r['setting']}): {r['error']}", flush=True)
            continue
        row = r["rows"][-1]
        m = row["median_us"]
        print(f"launch {k} ({r['setting']}, {r['started']}, load {r['load_average_1min'][0]:.1f}): mode "
              f"{mode_ratio(r['rows'][-1]):.2f} (after the loop {r['launch_mode']['ratio']:.2f}) | at {row['bytes'] // 1024} KiB, µs: " + ", ".join(
                  f"{c} {m[c]:.0f}" for c in CALLS) + f" | fresh x{fresh_ratio(row):.2f}", flush=True)
    s = summary(launches)
    last = "fresh data (exchange of a buffer just written / of a clean one, after the same write), by mode: " + "; ".join(
        f"{setting}: " + ", ".join(f"{k} x{v['fresh_median']:.2f} ({v['launches']} launches)" for k, v in kinds.items())
        for setting, kinds in s.items()) + f"; load now {os.getloadavg()[0]:.1f}"
    print(last)
    if args.json:
        write_json(args.json, {
            "benchmark": "fresh_data", "ranks": 2, "cores": len(os.sched_getaffinity(0)),
            "oversubscribed": 2 > len(os.sched_getaffinity(0)), "command": "python benchmarks/fresh_data.py " + " ".join(
                sys.argv[1:] if argv is None else argv),
            "parameters": {k: getattr(args, k) for k in ("launches", "settings", "lengths", "iterations", "warmup",
                                                         "apart")},
            "settings": {k: SETTINGS[k] for k in args.settings}, "slow_above": MODE_RATIO, "calls": list(CALLS),
            "timing_method": "one call per sample after an untimed call of itself and one barrier, slowest rank, "
                             "interleaved (mpi_exercises.bench.timing.time_interleaved, warm=True)",
            "launches": launches, "summary": s, "last_line": last})
    return 0 if all("rows" in r for r in launches) else 1


if __name__ == "__main__":
    sys.exit(main())
