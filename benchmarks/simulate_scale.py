"""Speed and memory of the vectorised simulator at scale.

    python benchmarks/simulate_scale.py [--P-log 1048576] [--P-linear 4096] [--json FILE]

Every logarithmic-step algorithm of the registry (netmodels.algorithms.registry) at
``--P-log`` ranks and every linear one (ring, pairwise, direct, snake and fence, the
two-phase and flat broadcasts, the central counter, and every allgather and alltoall: Θ(P)
steps, Θ(P) messages at one rank, or Θ(P²) messages) at ``--P-linear``, under LogGP with the kit's measured machine
(machines.KIT_VM_LOGGP), both semantics; data collectives move ``N = P`` elements.
Each case runs in a fresh subprocess, so its peak resident memory (``ru_maxrss``)
is its own.  Prints a table: build and simulation wall time, the process's CPU time
(user + sys, which a loaded machine inflates less than wall time), peak RSS, and
transfers simulated per second of wall time.  Goals: <= 10 s and <= 2 GB per case,
>= 5e6 transfers/s.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import subprocess
import sys
import time

#: algorithms with Θ(P) steps (ring, pairwise, snake), Θ(P) messages at one rank (direct, flat,
#: central_counter), Θ(P) messages per pipelined block (fence) or Θ(P²) messages (two_phase)
LINEAR = ("ring", "pairwise", "direct", "snake", "fence", "flat", "two_phase", "central_counter")
#: collectives whose every algorithm takes Θ(P) steps or Θ(P²) transfers: run at --P-linear
LINEAR_COLLECTIVES = ("allgather", "alltoall")
#: its leaders' packing is collected in Python lists, rank by rank: not a scale case
SKIP = ("alltoall.multilevel",)


def one_case(name: str, p: int, semantics: str) -> dict:
    """Build and simulate one case in this process; return its measurements."""
    from netmodels.algorithms import registry
    from netmodels.models.machines import KIT_VM_LOGGP
    from netmodels.simulate import simulate

    n = 0 if name.startswith("barrier.") else p
    t0, c0 = time.perf_counter(), time.process_time()
    schedule = registry.build(name, p, n)
    t1, c1 = time.perf_counter(), time.process_time()
    result = simulate(schedule, KIT_VM_LOGGP, semantics=semantics)
    t2, c2 = time.perf_counter(), time.process_time()
    return {"algorithm": name, "P": p, "N": n, "semantics": semantics, "steps": result.steps,
            "transfers": result.messages, "predicted_s": result.time,
            "build_wall_s": t1 - t0, "simulate_wall_s": t2 - t1,
            "build_cpu_s": c1 - c0, "simulate_cpu_s": c2 - c1,
            "peak_rss_MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def cases(p_log: int, p_linear: int):
    from netmodels.algorithms import registry

    for name in sorted(registry.names()):
        if name in SKIP:
            continue
        collective, algorithm = name.split(".", 1)
        linear = algorithm in LINEAR or collective in LINEAR_COLLECTIVES
        for semantics in ("sync", "stepwise"):
            yield name, p_linear if linear else p_log, semantics


def main(argv=None) -> int:
    from netmodels.commandline import OneLineParser
    from netmodels.outputs import output_problem, write_json

    ap = OneLineParser(prog="simulate_scale.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--P-log", type=int, default=2**20, help="ranks for logarithmic-step algorithms")
    ap.add_argument("--P-linear", type=int, default=4096, help="ranks for linear-step algorithms")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per case")
    ap.add_argument("--json", help="write the rows as JSON")
    ap.add_argument("--case", nargs=3, metavar=("NAME", "P", "SEMANTICS"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    problem = args.json and output_problem(args.json)
    if problem:                                  # refused before any work, so none is lost
        ap.error(f"--json: {problem}")
    if args.case:
        name, p, semantics = args.case
        print(json.dumps(one_case(name, int(p), semantics)))
        return 0
    load = os.getloadavg()[0]
    print(f"# python benchmarks/simulate_scale.py  ({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} "
          f"UTC, {os.cpu_count()} cores, load average {load:.1f}"
          f"{': machine loaded by other work' if load > 0.5 * (os.cpu_count() or 1) else ''})")
    head = (f"{'algorithm':<30} {'P':>8} {'semantics':<9} {'steps':>6} {'transfers':>10} {'build s':>8} "
            f"{'sim s':>7} {'sim CPU s':>9} {'RSS MB':>7} {'transfers/s':>11}")
    print(head)
    rows = []
    for name, p, semantics in cases(args.P_log, args.P_linear):
        cmd = [sys.executable, __file__, "--case", name, str(p), semantics]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, check=True)
        except subprocess.TimeoutExpired:
            print(f"{name:<30} {p:>8} {semantics:<9} timed out after {args.timeout:g} s")
            continue
        except subprocess.CalledProcessError as exc:
            why = (exc.stderr.strip().splitlines() or [f"exit status {exc.returncode}"])[-1]
            print(f"{name:<30} {p:>8} {semantics:<9} failed: {why}")
            continue
        r = json.loads(out.stdout)
        rows.append(r)
        rate = r["transfers"] / max(r["simulate_wall_s"], 1e-9)
        print(f"{name:<30} {p:>8} {semantics:<9} {r['steps']:>6} {r['transfers']:>10} {r['build_wall_s']:>8.2f} "
              f"{r['simulate_wall_s']:>7.2f} {r['simulate_cpu_s']:>9.2f} {r['peak_rss_MB']:>7.0f} {rate:>11.3g}",
              flush=True)
    if args.json:
        write_json(args.json, {"load_average_1min": load, "cores": os.cpu_count(), "rows": rows})
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        sys.exit(main())
    except OSError as exc:                       # a result that could not be written (disk full)
        print(f"simulate_scale.py: error: {exc}", file=sys.stderr)
        sys.exit(1)
