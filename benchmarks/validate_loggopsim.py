"""Run the kit's schedules through LogGOPSim and store its times as reference data.

Opt-in: it needs a locally built LogGOPSim (Hoefler, Schneider & Lumsdaine, HPDC 2010;
https://github.com/spcl/LogGOPSim).  Without one it says so in one line and exits 0.
Build of the two programs used (the repository's CMake file also builds MPI tracing
libraries, which need Fortran, MPI and libclang; they are not needed here):

    apt-get install g++ re2c gengetopt libgraphviz-dev
    git clone https://github.com/spcl/LogGOPSim && cd LogGOPSim/src/LogGOPSim
    gengetopt -F loggopsim_cmdline -i loggopsim_cmdline.ggo
    gengetopt -F txt2bin_cmdline -i txt2bin_cmdline.ggo
    re2c -o txt2bin.cpp txt2bin.re
    g++ -std=c++11 -O2 -o LogGOPSim LogGOPSim.cpp loggopsim_cmdline.c -lcgraph
    g++ -O2 -o txt2bin txt2bin.cpp txt2bin_cmdline.c

Then, from the repository root:

    python benchmarks/validate_loggopsim.py --loggopsim path/to/src/LogGOPSim \\
        --commit $(git -C path/to/LogGOPSim rev-parse HEAD) --json book/data/loggopsim_reference.json

For every case (algorithm x P x parameter set, see ``netmodels.simulate.loggopsim``)
the schedule is written as GOAL text, converted by ``txt2bin`` and simulated by
``LogGOPSim`` with L, o, g, G in picoseconds (its parameters are integers) and the
eager limit S above every message; the JSON keeps, per case, the commands, the
parameters and the finishing time LogGOPSim prints (all ranks' when P <= 16).
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from netmodels.commandline import OneLineParser  # noqa: E402
from netmodels.models import logp, machines  # noqa: E402
from netmodels.outputs import output_problem, write_json  # noqa: E402
from netmodels.simulate import loggopsim  # noqa: E402

#: how the two binaries were built (in LogGOPSim's src/LogGOPSim, Debian 12, g++ 12)
BUILD = ("gengetopt -F loggopsim_cmdline -i loggopsim_cmdline.ggo",
         "gengetopt -F txt2bin_cmdline -i txt2bin_cmdline.ggo",
         "re2c -o txt2bin.cpp txt2bin.re",
         "g++ -std=c++11 -O2 -o LogGOPSim LogGOPSim.cpp loggopsim_cmdline.c -lcgraph",
         "g++ -O2 -o txt2bin txt2bin.cpp txt2bin_cmdline.c")
#: LogGOPSim's eager/rendezvous limit S (bytes): above every message of the cases
EAGER_LIMIT = 2**31 - 1


def parameter_sets() -> dict:
    """The LogGP parameter sets (s, s/B): a round one, the cluster of the LogP chapter's
    barrier slides (its L and o fitted there), and this machine (the LogP chapter's fit)."""
    sets = {"round": {"L": 5e-6, "o": 1.5e-6, "g": 2e-6, "G": 0.5e-9,
                      "source": "round numbers with g > o and a G"}}
    rows = [(a, p, t) for a, row in machines.HOEFLER2005_BARRIER_TIMES.items() if a != "open_mpi"
            for p, t in row.items()]
    fit = logp.fit_barrier_times(rows, {"combining_tree": {"fan_in": 2}})
    sets["cluster"] = {"L": fit.L, "o": fit.o, "g": 0.0, "G": 0.0,
                       "source": "L and o fitted to the barrier times of machines.HOEFLER2005_BARRIER_TIMES "
                                 "(combining tree fan-in 2), g = 0, G = 0, as in the LogP chapter"}
    ref = json.loads((ROOT / "book" / "data" / "logp_reference.json").read_text())
    col = lambda key: [r[key]["min_s"] for r in ref["results"]]  # noqa: E731
    f = logp.fit_prtt([r["bytes"] for r in ref["results"]], col("prtt_1_0"), col("prtt_n_0"),
                      col("prtt_n_d"), ref["parameters"]["n"], [r["d_s"] for r in ref["results"]],
                      col("o_r"))
    g = 0.0 if math.isnan(f.g) else max(f.g, 0.0)
    G = 0.0 if math.isnan(f.G) else max(f.G, 0.0)
    sets["this_machine"] = {"L": max(f.L, 0.0), "o": 0.5 * (f.o_s + f.o_r), "g": g, "G": G,
                            "source": "fit_prtt of book/data/logp_reference.json (minima), L clipped at 0, "
                                      "o = (o_s + o_r)/2 (LogGOPSim has one o; o_s + o_r is kept)"}
    for s in sets.values():   # LogGOPSim's integers; the kit is compared at the same rounded values
        for k in ("L", "o", "g", "G"):
            s[f"{k}_ps"] = round(s[k] / loggopsim.TIME_UNIT)
    return sets


def find_binaries(where: str | None):
    """(LogGOPSim, txt2bin) paths, or None if either is missing."""
    found = []
    for name in ("LogGOPSim", "txt2bin"):
        path = Path(where) / name if where else shutil.which(name)
        if not path or not Path(path).is_file():
            return None
        found.append(str(path))
    return tuple(found)


def parse_times(stdout: str) -> tuple[int, list[int] | None]:
    """LogGOPSim's finishing time (its time unit), and every rank's when it prints them."""
    hosts = [int(m) for m in re.findall(r"^Host \d+: (\d+)$", stdout, re.M)]
    if hosts:
        return max(hosts), hosts
    m = re.search(r"^Maximum finishing time at host \d+: (\d+)", stdout, re.M)
    if not m:
        raise RuntimeError(f"no finishing time in LogGOPSim's output:\n{stdout[-2000:]}")
    return int(m.group(1)), None


def run_case(binaries, workdir: Path, algorithm: str, nprocs: int, params: dict) -> dict:
    sim, txt2bin = binaries
    goal, binary = workdir / f"{algorithm}_{nprocs}.goal", workdir / f"{algorithm}_{nprocs}.bin"
    if not binary.exists():
        goal.write_text(loggopsim.to_goal(loggopsim.case_schedule(algorithm, nprocs)))
        subprocess.run([txt2bin, "-i", str(goal), "-o", str(binary)], check=True, capture_output=True)
        goal.unlink()
    cmd = [sim, "-f", str(binary), "-L", str(params["L_ps"]), "-o", str(params["o_ps"]),
           "-g", str(params["g_ps"]), "-G", str(params["G_ps"]), "-S", str(EAGER_LIMIT)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    t, hosts = parse_times(out)
    return {"time_ps": t, "finish_ps": hosts,
            "command": " ".join(["LogGOPSim"] + cmd[1:2] + [binary.name] + cmd[3:])}


def main(argv=None) -> int:
    p = OneLineParser(prog="validate_loggopsim.py", description=__doc__.splitlines()[0])
    p.add_argument("--loggopsim", metavar="DIR", help="folder holding LogGOPSim and txt2bin (default: PATH)")
    p.add_argument("--commit", default="unknown", help="the LogGOPSim commit the binaries were built from")
    p.add_argument("--json", metavar="FILE", default=str(ROOT / "book" / "data" / "loggopsim_reference.json"))
    p.add_argument("--only", metavar="ALGORITHM", choices=sorted(loggopsim.ALGORITHMS),
                   help="run this algorithm's cases only and replace them in an existing FILE")
    args = p.parse_args(argv)
    problem = output_problem(args.json)
    if problem:                                  # refused before any work, so none is lost
        p.error(f"--json: {problem}")
    binaries = find_binaries(args.loggopsim)
    if binaries is None:
        print("LogGOPSim and txt2bin not found (see the build steps in this script's docstring): nothing to do")
        return 0
    sets = parameter_sets()
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for algorithm, nprocs in loggopsim.CASES:
            if args.only and algorithm != args.only:
                continue
            for name, params in sets.items():
                t0 = time.perf_counter()
                r = run_case(binaries, Path(tmp), algorithm, nprocs, params)
                print(f"{algorithm:>18} P={nprocs:<5} {name:<13} {r['time_ps'] * 1e-6:14.3f} µs "
                      f"({time.perf_counter() - t0:.1f} s)", flush=True)
                out.append({"algorithm": algorithm, "nprocs": nprocs, "parameters": name, **r})
    doc = {
        "simulator": "LogGOPSim (Hoefler, Schneider & Lumsdaine, HPDC 2010), https://github.com/spcl/LogGOPSim",
        "commit": args.commit,
        "build": list(BUILD),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "generated_by": "python benchmarks/validate_loggopsim.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "time_unit_s": loggopsim.TIME_UNIT,
        "eager_limit_bytes": EAGER_LIMIT,
        "elem_bytes": 8,
        "goal": "netmodels.simulate.loggopsim.to_goal(case_schedule(algorithm, nprocs)), "
                "then txt2bin -i case.goal -o case.bin",
        "parameter_sets": sets,
        "cases": out,
    }
    if args.only:
        old = json.loads(Path(args.json).read_text())
        if old["commit"] != args.commit or old["parameter_sets"] != sets:
            print(f"{args.json} was made with another LogGOPSim commit or other parameters: not merged")
            return 1
        kept = [c for c in old["cases"] if c["algorithm"] != args.only]
        doc = {**old, "cases": kept + out,
               "generated_by": old["generated_by"] + "; then " + doc["generated_by"]}
    write_json(args.json, doc)
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
