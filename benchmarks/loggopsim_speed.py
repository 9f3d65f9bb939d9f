"""Transfers per second: the kit's simulator beside LogGOPSim, on this machine, in one run.

    python benchmarks/loggopsim_speed.py --loggopsim path/to/src/LogGOPSim [--P 65536 131072 262144]

For the dissemination barrier at each P (log2 P rounds of P messages), LogGOPSim (built as
in ``benchmarks/validate_loggopsim.py``) runs the GOAL schedule of ``to_goal`` (converted by
``txt2bin`` beforehand, not timed) with the "g>o" parameters of the comparison; the kit
simulates the same schedule under each of its semantics, each case in a fresh process
(its peak resident memory its own; building the schedule not timed).  Also the two size
goals: 2^20-rank dissemination and 4096-rank ring allreduce (N = 4096 elements).
Prints a Markdown table with the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from netmodels.commandline import OneLineParser  # noqa: E402
from netmodels.simulate.loggopsim import find_binaries  # noqa: E402

SEMANTICS = ("sync", "stepwise", "loggopsim")


def one_case(name: str, p: int, n: int, semantics: str) -> dict:
    from netmodels.algorithms import registry
    from netmodels.models.logp import LogGP
    from netmodels.simulate import loggopsim, simulate

    q = loggopsim.PARAMETER_SETS["g>o"]
    model = LogGP(L=q["L"] * 1e-12, o=q["o"] * 1e-12, g=q["g"] * 1e-12, P=p, G=q["G"] * 1e-12)
    a = registry.build(name, p, n)
    t0 = time.perf_counter()
    r = simulate(a, model, semantics=semantics, elem_bytes=loggopsim.ELEM_BYTES)
    dt = time.perf_counter() - t0
    return {"transfers": r.messages, "seconds": dt, "time_s": r.time, "peak_rss_MB": peak_rss_mb()}


def peak_rss_mb() -> float:
    """This process's peak resident memory (MB): VmHWM, which a fresh process starts anew
    (``ru_maxrss`` keeps the parent's peak across fork and exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def kit(name: str, p: int, n: int, semantics: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--case", name, str(p), str(n), semantics],
                         check=True, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return json.loads(out.stdout)


def loggopsim_run(where: str, p: int) -> dict:
    from netmodels.algorithms import registry
    from netmodels.simulate import loggopsim

    q = loggopsim.PARAMETER_SETS["g>o"]
    with tempfile.TemporaryDirectory() as tmp:
        goal, binary = Path(tmp) / "d.goal", Path(tmp) / "d.bin"
        goal.write_text(loggopsim.to_goal(registry.build("barrier.dissemination", p, 0), loggopsim.ELEM_BYTES))
        subprocess.run([str(Path(where) / "txt2bin"), "-i", str(goal), "-o", str(binary)], check=True,
                       capture_output=True)
        goal.unlink()
        cmd = [str(Path(where) / "LogGOPSim"), "-f", str(binary), "-L", str(q["L"]), "-o", str(q["o"]),
               "-g", str(q["g"]), "-G", str(q["G"]), "--batchmode"]
        t0 = time.perf_counter()
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        dt = time.perf_counter() - t0
    t_ps = int(out.split("Maximum finishing time at host")[1].split(":")[1].split()[0])
    return {"seconds": dt, "time_s": t_ps * 1e-12}


def main(argv=None) -> int:
    ap = OneLineParser(prog="loggopsim_speed.py", description=__doc__.splitlines()[0])
    ap.add_argument("--loggopsim", metavar="DIR", help="folder holding LogGOPSim and txt2bin (needed but with --size-goals-only)")
    ap.add_argument("--P", type=int, nargs="+", default=[2**16, 2**17, 2**18],
                    help="the ranks of the dissemination barriers timed in both simulators")
    ap.add_argument("--case", nargs=4, help=argparse.SUPPRESS)
    ap.add_argument("--size-goals-only", action="store_true", help="only the 2^20 and 4096-rank goals")
    args = ap.parse_args(argv)
    if args.case:
        name, p, n, sem = args.case
        print(json.dumps(one_case(name, int(p), int(n), sem)))
        return 0
    if not args.size_goals_only and find_binaries(args.loggopsim) is None:
        ap.error(f"--loggopsim: LogGOPSim and txt2bin not found in {args.loggopsim or 'PATH'} "
                 "(build them as benchmarks/validate_loggopsim.py says, or give --size-goals-only)")
    if any(p < 2 for p in args.P):
        ap.error(f"--P: every P must be >= 2, got {args.P}")
    load0 = os.getloadavg()
    print(f"load average before: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f} ({os.cpu_count()} cores)")
    print("\n| case | transfers | LogGOPSim s | " + " | ".join(f"{s} s" for s in SEMANTICS)
          + " | " + " | ".join(f"{s} / LogGOPSim rate" for s in SEMANTICS) + " |")
    print("|---|---:|---:|" + "---:|" * (2 * len(SEMANTICS)))
    for p in ([] if args.size_goals_only else args.P):
        ref = loggopsim_run(args.loggopsim, p)
        runs = {s: kit("barrier.dissemination", p, 0, s) for s in SEMANTICS}
        for s, r in runs.items():
            assert abs(r["time_s"] - ref["time_s"]) <= 1e-9 * ref["time_s"] or s != "loggopsim", (p, s)
        n = runs["sync"]["transfers"]
        print(f"| dissemination P=2^{p.bit_length() - 1} | {n:.2e} | {ref['seconds']:.2f} | "
              + " | ".join(f"{runs[s]['seconds']:.2f}" for s in SEMANTICS) + " | "
              + " | ".join(f"{ref['seconds'] / runs[s]['seconds']:.2g}x" for s in SEMANTICS) + " |", flush=True)
    print("\n| size goal | semantics | transfers | s | peak RSS MB |")
    print("|---|---|---:|---:|---:|")
    for name, p, n in (("barrier.dissemination", 2**20, 0), ("allreduce.ring", 4096, 4096)):
        for s in ("sync", "stepwise"):
            r = kit(name, p, n, s)
            print(f"| {name} P={p} | {s} | {r['transfers']:.2e} | {r['seconds']:.2f} | {r['peak_rss_MB']:.0f} |",
                  flush=True)
    load1 = os.getloadavg()
    print(f"\nload average after: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
