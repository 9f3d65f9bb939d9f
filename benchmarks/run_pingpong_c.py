"""Run the C ping-pong on 2 ranks and store its JSON with the command, date, load and
the α-β fit (the same relative least squares as the Python ping-pong).

    python benchmarks/run_pingpong_c.py BINARY [--json OUT.json] [--command TEXT]

``make pingpong-c`` writes ``results/pingpong_c.json`` (git-ignored, the default);
``make refresh-pingpong-c`` writes the chapter's committed reference ``book/data/pingpong_c.json``.
Missing folders of OUT are created.
"""

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

DEFAULT_OUT = "results/pingpong_c.json"


sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from netmodels.commandline import OneLineParser  # noqa: E402
from netmodels.outputs import output_problem, write_json  # noqa: E402


def parse_args(argv):
    """The arguments; the output's missing folders are created and the path is checked
    (one line, exit 2) before the run."""
    p = OneLineParser(prog="run_pingpong_c.py", description=__doc__.split("\n\n")[0])
    p.add_argument("binary", help="the compiled benchmarks/pingpong.c")
    p.add_argument("--json", default=DEFAULT_OUT, metavar="OUT",
                   help=f"where to write the results (default {DEFAULT_OUT}; folders are created)")
    p.add_argument("--command", default=None,
                   help="how the run was started, stored in the file (default: the mpiexec line)")
    args = p.parse_args(argv)
    folder = Path(args.json).parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        p.error(f"--json: cannot create folder {folder} ({exc.strerror or exc})")
    problem = output_problem(args.json)
    if problem:
        p.error(f"--json: {problem}")
    return args


def main(argv) -> int:
    args = parse_args(argv)
    mpiexec = str(Path(sys.executable).with_name("mpiexec"))
    cmd = [mpiexec, "-n", "2", args.binary]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if res.returncode != 0:
        print(res.stderr, file=sys.stderr)
        return res.returncode
    data = json.loads(res.stdout)
    from mpi_exercises.bench import placement
    from mpi_exercises.bench.pingpong import fit

    cores = placement.usable_cores()
    data.update({"command": args.command or f"mpiexec -n 2 {Path(args.binary).name}",
                 "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                 "ranks": 2, "cores": cores, "oversubscribed": cores < 2, "load_average_1min": load,
                 "fit": fit(data["results"]), "fit_min": fit(data["results"], "min_s")})
    out = Path(args.json)
    write_json(out, data)
    f = data["fit_min"]["alpha_beta"]
    print(f"C ping-pong: alpha = {f['alpha_s'] * 1e6:.3f} µs, 1/beta = {1e-6 / f['beta_s_per_byte']:.0f} MB/s "
          f"(fit to the minima); written to {out}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except OSError as exc:                       # a result that could not be written (disk full)
        print(f"run_pingpong_c.py: error: {exc}", file=sys.stderr)
        sys.exit(1)
