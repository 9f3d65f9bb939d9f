"""The simulator's walk (*sync*, *stepwise*) against an earlier revision: one interleaved run.

    python benchmarks/walk_speed.py [--rev 5ddd719] [--rounds 5] [--repeats 3] [--json results/walk_speed.json]

Each case (an algorithm at P ranks under a model and a semantics) is simulated in a fresh
process with ``netmodels`` of ``--rev`` (the package as git holds it there, extracted to a
temporary folder) and with this tree's, alternately, ``--rounds`` times; a process times
``--repeats`` runs after one untimed run and reports the best (s).  Prints per case the best of
each side and the median over rounds of the ratio within a round (this tree / ``--rev``), then
the load average before and after (os.getloadavg); ``--json`` stores all of it.  On a loaded
machine single runs vary by a factor of 2 or more: compare ratios, and re-run at rest.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = (("barrier.dissemination", 2**18, 0, "logp", "stepwise"),
         ("barrier.dissemination", 2**18, 0, "logp", "sync"),
         ("allreduce.ring", 1024, 1024, "loggp", "stepwise"),
         ("barrier.dissemination", 2**18, 0, "alpha-beta", "stepwise"),
         ("allreduce.binomial", 2**18, 2**18, "alpha-beta", "sync"),
         ("alltoall.direct", 512, 512, "loggp", "stepwise"))
TIMER = """
import json, sys, time
from netmodels.algorithms import registry
from netmodels.models import table
from netmodels.simulate import simulate
algorithm, P, N, name, semantics, repeats = json.loads(sys.argv[1])
a, model = registry.build(algorithm, P, N), table.get(name).default()
simulate(a, model, semantics=semantics)
best = float("inf")
for _ in range(repeats):
    t0 = time.perf_counter()
    simulate(a, model, semantics=semantics)
    best = min(best, time.perf_counter() - t0)
print(best)
"""


def extract(rev: str, where: str) -> str:
    """``netmodels`` as git holds it at ``rev``, extracted under ``where``; returns the folder."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "netmodels"], capture_output=True, check=True)
    path = Path(where) / "before.tar"
    path.write_bytes(archive.stdout)
    with tarfile.open(path) as tar:
        tar.extractall(where, filter="data")
    return where


def best_time(case, repeats: int, path: str) -> float:
    """The best of ``repeats`` runs of ``case`` in a fresh process importing netmodels from ``path`` (s)."""
    out = subprocess.run([sys.executable, "-c", TIMER, json.dumps([*case, repeats])], capture_output=True,
                         text=True, check=True, cwd=tempfile.gettempdir(), env={**os.environ, "PYTHONPATH": path})
    return float(out.stdout)


def main(argv=None) -> int:
    from mpi_exercises.bench.arguments import positive_int
    from netmodels.commandline import OneLineParser
    from netmodels.outputs import output_problem, provenance, write_json

    parser = OneLineParser(prog="walk_speed.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rev", default="5ddd719", help="the earlier revision (default 5ddd719)")
    parser.add_argument("--rounds", type=positive_int, default=5, help="interleaved rounds (>= 1, default 5)")
    parser.add_argument("--repeats", type=positive_int, default=3, help="timed runs per process (>= 1, default 3)")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    problem = args.json and output_problem(args.json)
    if problem:                                  # refused before any work
        parser.error(f"--json: {problem}")
    load_before = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            before = extract(args.rev, tmp)
        except subprocess.CalledProcessError:
            parser.error(f"--rev {args.rev}: git cannot archive netmodels there")
        times = {case: {"before": [], "now": []} for case in CASES}
        for _ in range(args.rounds):
            for case in CASES:
                for side, path in (("before", before), ("now", str(ROOT))):
                    times[case][side].append(best_time(case, args.repeats, path))
    for case, t in times.items():
        ratio = statistics.median(n / b for n, b in zip(t["now"], t["before"]))
        rows.append({"case": case, "before_s": t["before"], "now_s": t["now"], "ratio_median": ratio})
        print(f"{case[0]} P={case[1]} N={case[2]} {case[3]} {case[4]}: best {min(t['before']):.3f} s before, "
              f"{min(t['now']):.3f} s now; now/before median {ratio:.2f}")
    load_after = os.getloadavg()
    if args.json:
        write_json(args.json, {"provenance": provenance(__file__, argv), "rev": args.rev, "rounds": args.rounds,
                               "repeats": args.repeats, "cores": os.cpu_count(), "load_before": load_before,
                               "load_after": load_after, "rows": rows})
    print(f"load average before {load_before[0]:.1f}, after {load_after[0]:.1f} ({os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
