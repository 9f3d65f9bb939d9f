"""The simulator's budget (netmodels/simulate/budget.py) against the runs it estimates.

    python benchmarks/budget_accuracy.py [--json FILE] [--only LABEL ...]

For each algorithm family of :data:`CASES`, at three sizes: the estimate the command line
makes before it builds anything (:func:`netmodels.simulate.budget.estimate`, with its probe
of this machine's speed: the same call as ``python -m netmodels simulate``, in a fresh
process as the command's), then the run
itself, ``python -m netmodels simulate ... --force`` in a fresh process: its CPU time and
its peak resident memory (``os.wait4`` in a small launcher, as in
``benchmarks/loggopsim_speed.py``).  The estimated
peak is the budget's (memory above what the command holds before it builds) plus the peak of
the smallest run of the same command (``-P 2``: the interpreter and its imports), measured
once per semantics; the measured time is the run's CPU time less that of the smallest run
(its start-up), as the estimate's is CPU time.  Prints a Markdown table with the ratios, and the load average before
and after; ``--json`` also writes the rows.  Each run takes under about 20 s on the kit's
2-core machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from netmodels.commandline import OneLineParser, run_script  # noqa: E402
from netmodels.outputs import provenance, write_json  # noqa: E402

#: (family, algorithm, model, semantics, ((P, N), ...)): three sizes of each family
CASES = (
    ("dissemination barrier", "barrier.dissemination", "logp", "sync", ((2**19, 0), (2**20, 0), (2**21, 0))),
    ("dissemination, loggopsim", "barrier.dissemination", "logp", "loggopsim", ((2**17, 0), (2**18, 0), (2**19, 0))),
    ("recursive doubling", "allreduce.recursive_doubling", "alpha-beta", "sync",
     ((2**20, 1), (2**21, 1), (2**22, 1))),
    ("ring, one element (candidates)", "allreduce.ring", "alpha-beta", "sync", ((4096, 1), (8192, 1), (16384, 1))),
    ("ring, loggopsim", "allreduce.ring", "loggp", "loggopsim", ((1024, 1024), (2048, 2048), (2896, 2896))),
    ("snake, default block", "allreduce.snake", "alpha-beta", "sync", ((16, 10**11), (64, 10**11), (64, 10**12))),
    ("fence, default block", "allreduce.fence", "alpha-beta", "sync", ((16, 10**11), (64, 10**11), (64, 10**12))),
    ("two-phase broadcast", "broadcast.two_phase", "logp", "sync", ((2048, 1), (4096, 1), (5792, 1))),
    ("allgather ring", "allgather.ring", "alpha-beta", "stepwise", ((2048, 2048), (4096, 4096), (5792, 5792))),
    ("alltoall direct (incast)", "alltoall.direct", "logp", "sync", ((1448, 1448), (2048, 2048), (4096, 4096))),
    ("alltoall direct, loggopsim", "alltoall.direct", "loggp", "loggopsim", ((1024, 1024), (1448, 1448),
                                                                               (2048, 2048))),
)


def command(name: str, p: int, n: int, model: str, semantics: str) -> list[str]:
    return [sys.executable, "-m", "netmodels", "simulate", name, "-P", str(p), "-N", str(n), "--model", model,
            "--semantics", semantics, "--force"]


def estimate(name: str, p: int, n: int, model: str, semantics: str):
    """The budget's estimate of the run, made as the command line makes it."""
    from netmodels.algorithms import registry
    from netmodels.models import table
    from netmodels.simulate import budget
    from netmodels.simulate.cli import parameter_values, pipeline_blocks
    from netmodels.simulate.engine import simulate

    m = table.get(model).build(**parameter_values(model, []))
    algorithm = registry.get(name)
    return budget.estimate(lambda q, k: algorithm.build(q, k), p, n, semantics,
                           simulate=lambda s: simulate(s, m, semantics=semantics), blocks=pipeline_blocks(name, {}))


#: started as ``python -c LAUNCHER cmd...``: runs cmd, prints "cpu_s peak_MB status" on its last
#: stderr line (``os.wait4``: the child's own CPU time and peak, not this process's)
LAUNCHER = """
import os, sys
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ)
_, status, usage = os.wait4(pid, 0)
print(usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), file=sys.stderr)
"""


#: started as ``python -c FRESH name P N model semantics``: the estimate in a fresh process, as
#: the command line makes it (in a process that has run larger cases, the allocator's pages
#: are already mapped and the probe runs many times faster than in a new one)
FRESH = """
import json, sys
sys.path.insert(0, sys.argv[6])
from budget_accuracy import estimate
e = estimate(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5])
print(json.dumps({"seconds": e.seconds, "peak": e.peak, "counts": e.counts, "probe": e.probe}))
"""


def fresh_estimate(name: str, p: int, n: int, model: str, semantics: str) -> dict:
    """:func:`estimate` in a fresh process: ``{"seconds", "peak", "counts", "probe"}``."""
    res = subprocess.run([sys.executable, "-c", FRESH, name, str(p), str(n), model, semantics,
                          str(ROOT / "benchmarks")], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    return json.loads(res.stdout)


def measure(cmd: list[str]) -> tuple[float, float]:
    """``(CPU s, peak RSS MB)`` of one run of ``python -m netmodels simulate``, from start to exit."""
    res = subprocess.run([sys.executable, "-c", LAUNCHER, *cmd], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    cpu, peak, status = res.stderr.strip().splitlines()[-1].split()
    if int(status) or res.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({status}): {res.stderr[-2000:]}")
    return float(cpu), float(peak)


def main(argv=None) -> int:
    ap = OneLineParser(prog="budget_accuracy.py", description=__doc__.splitlines()[0])
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    ap.add_argument("--only", nargs="+", metavar="LABEL", help="only the families whose label starts with one of these")
    args = ap.parse_checked(argv)
    load0 = os.getloadavg()
    print(f"load average before: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f} ({os.cpu_count()} cores)")
    base = {}
    for semantics, model in (("sync", "logp"), ("stepwise", "logp"), ("loggopsim", "logp")):
        measure(command("barrier.dissemination", 2, 0, model, semantics))      # compiled once, if need be
        base[semantics] = min((measure(command("barrier.dissemination", 2, 0, model, semantics)) for _ in range(3)),
                              key=lambda x: x[0])
    print("the smallest run (P = 2), CPU s / peak MB: "
          + ", ".join(f"{k} {v[0]:.2f} / {v[1]:.0f}" for k, v in base.items()))
    print("\n| family | P | N | transfers | steps | estimated CPU s | measured CPU s | ratio | estimated MB | measured MB "
          "| ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    for family, name, model, semantics, sizes in CASES:
        if args.only and not any(family.startswith(x) for x in args.only):
            continue
        for p, n in sizes:
            t0 = time.perf_counter()
            est = fresh_estimate(name, p, n, model, semantics)
            est_wall = time.perf_counter() - t0
            cpu, peak = measure(command(name, p, n, model, semantics))
            seconds = max(cpu - base[semantics][0], 1e-3)
            est_mb = base[semantics][1] + est["peak"] / 2**20
            row = {"family": family, "algorithm": name, "model": model, "semantics": semantics, "P": p, "N": n,
                   "transfers": est["counts"][0], "steps": est["counts"][1], "estimated_s": est["seconds"],
                   "estimate_took_s": est_wall, "probe": est["probe"], "measured_s": seconds,
                   "estimated_MB": est_mb, "measured_MB": peak}
            rows.append(row)
            print(f"| {family} | {p} | {n:.3g} | {est['counts'][0]:.3g} | {est['counts'][1]:.3g} | {est['seconds']:.3g} | "
                  f"{seconds:.3g} | {est['seconds'] / seconds:.2f} | {est_mb:.0f} | {peak:.0f} | {est_mb / peak:.2f} |",
                  flush=True)
    load1 = os.getloadavg()
    print(f"\nload average after: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    if rows:
        worst_t = max(max(r["estimated_s"] / r["measured_s"], r["measured_s"] / r["estimated_s"]) for r in rows)
        worst_m = max(max(r["estimated_MB"] / r["measured_MB"], r["measured_MB"] / r["estimated_MB"]) for r in rows)
        print(f"worst factor: time {worst_t:.2f}x, memory {worst_m:.2f}x")
    if args.json:
        write_json(args.json, {**provenance(__file__, argv), "load_before": load0, "load_after": load1,
                               "baseline_MB": base, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main, "budget_accuracy.py"))
