"""The kit's exact simulator beside LogGOPSim, end to end, on this machine, in one run.

    python benchmarks/loggopsim_speed.py --loggopsim path/to/src/LogGOPSim [--json FILE] [--only NAME ...]

For each case of :data:`CASES` the schedule is written as GOAL by ``to_goal`` and converted
by ``txt2bin`` beforehand (not timed); then, one after the other in the same run:
``LogGOPSim -f case.bin`` with the "g>o" parameters of the comparison, and the kit's
command line ``python -m netmodels simulate ... --semantics loggopsim`` (and
``--semantics stepwise``) in a fresh process, each timed end to end (wall clock, from
start to exit: imports, building the schedule, the simulation) with its own peak resident
memory (``os.wait4`` in a small launcher process: a child's peak counts its parent's
at the moment it was started, so it is not started from this one; peaks below the
launcher's own, about 10 MB, read as 10).  The two finishing times must be equal to
the picosecond.  Prints
a Markdown table with the load average before and after; ``--json`` also writes the rows.
(LogGOPSim built as ``benchmarks/validate_loggopsim.py`` says.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from netmodels.commandline import OneLineParser, run_script  # noqa: E402
from netmodels.outputs import provenance, write_json  # noqa: E402
from netmodels.simulate.loggopsim import find_binaries  # noqa: E402

#: (label, algorithm, P, N elements): the sizes of the comparison
CASES = (
    ("dissemination, P = 2^14", "barrier.dissemination", 2**14, 0),
    ("dissemination, P = 2^16", "barrier.dissemination", 2**16, 0),
    ("recursive doubling, P = 2^16", "allreduce.recursive_doubling", 2**16, 1),
    ("ring allreduce, P = 1024", "allreduce.ring", 1024, 1024),
    ("dissemination, P = 2^18", "barrier.dissemination", 2**18, 0),
    ("ring allreduce, P = 2896", "allreduce.ring", 2896, 2896),
    ("dissemination, P = 2^20", "barrier.dissemination", 2**20, 0),
)
UNIT = 1e-12


#: started as ``python -c LAUNCHER cmd...``: runs cmd, prints "wall_s peak_MB" on its last stderr line
LAUNCHER = """
import os, sys, time
t0 = time.perf_counter()
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ)
_, status, usage = os.wait4(pid, 0)
print(time.perf_counter() - t0, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), file=sys.stderr)
"""


def timed(cmd: list[str], env=None) -> tuple[float, float, str]:
    """``(wall s, peak RSS MB, stdout)`` of ``cmd`` run to its end."""
    res = subprocess.run([sys.executable, "-c", LAUNCHER, *cmd], capture_output=True, text=True, env=env)
    wall, peak, status = res.stderr.strip().splitlines()[-1].split()
    if int(status) or res.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({status}): {res.stderr[-2000:]}")
    return float(wall), float(peak), res.stdout


def kit(name: str, p: int, n: int, q: dict, semantics: str, tmp: Path) -> dict:
    params = [f"L={q['L'] * UNIT!r}", f"o_s={q['o'] * UNIT!r}", f"o_r={q['o'] * UNIT!r}",
              f"g={q['g'] * UNIT!r}", f"G={q['G'] * UNIT!r}"]
    out = tmp / "kit.json"
    cmd = [sys.executable, "-m", "netmodels", "simulate", name, "-P", str(p), "-N", str(n), "--model", "loggp",
           "--semantics", semantics, "--force", "--json", str(out)]
    for par in params:
        cmd += ["--param", par]
    wall, rss, _ = timed(cmd, env={**os.environ, "PYTHONPATH": str(ROOT)})
    rec = json.loads(out.read_text())
    return {"seconds": wall, "peak_MB": rss, "time_s": rec["time_s"], "messages": rec["messages"]}


def loggopsim_run(binaries, binary: Path, q: dict) -> dict:
    sim, _ = binaries
    cmd = [sim, "-f", str(binary), "-L", str(q["L"]), "-o", str(q["o"]), "-g", str(q["g"]), "-G", str(q["G"]),
           "-S", str(2**31 - 1), "--batchmode"]
    wall, rss, out = timed(cmd)
    t_ps = int(out.split("Maximum finishing time at host")[1].split(":")[1].split()[0])
    return {"seconds": wall, "peak_MB": rss, "time_s": t_ps * UNIT}


def main(argv=None) -> int:
    ap = OneLineParser(prog="loggopsim_speed.py", description=__doc__.splitlines()[0])
    ap.add_argument("--loggopsim", metavar="DIR", help="folder holding LogGOPSim and txt2bin (default: PATH)")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    ap.add_argument("--only", nargs="+", metavar="LABEL", help="only the cases whose label starts with one of these")
    args = ap.parse_checked(argv)
    binaries = find_binaries(args.loggopsim)
    if binaries is None:
        ap.error(f"--loggopsim: LogGOPSim and txt2bin not found in {args.loggopsim or 'PATH'} "
                 "(build them as benchmarks/validate_loggopsim.py says)")
    from netmodels.algorithms import registry
    from netmodels.simulate import loggopsim

    q = loggopsim.PARAMETER_SETS["g>o"]
    load0 = os.getloadavg()
    print(f"load average before: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f} ({os.cpu_count()} cores)")
    print("\n| schedule | messages | LogGOPSim s / peak MB | kit loggopsim s / peak MB | kit stepwise s / peak MB "
          "| LogGOPSim / kit loggopsim time |")
    print("|---|---:|---:|---:|---:|---:|")
    rows = []
    for label, name, p, n in CASES:
        if args.only and not any(label.startswith(x) for x in args.only):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            goal, binary = tmp / "case.goal", tmp / "case.bin"
            goal.write_text(loggopsim.to_goal(registry.build(name, p, n), loggopsim.ELEM_BYTES))
            subprocess.run([binaries[1], "-i", str(goal), "-o", str(binary)], check=True, capture_output=True)
            goal.unlink()
            ref = loggopsim_run(binaries, binary, q)
            exact = kit(name, p, n, q, "loggopsim", tmp)
            fast = kit(name, p, n, q, "stepwise", tmp)
        equal = round(exact["time_s"] / UNIT) == round(ref["time_s"] / UNIT)
        row = {"case": label, "algorithm": name, "P": p, "N": n, "messages": exact["messages"],
               "loggopsim": ref, "kit_loggopsim": exact, "kit_stepwise": fast, "equal": equal}
        rows.append(row)
        print(f"| {label} | {exact['messages']:.3g} | {ref['seconds']:.1f} / {ref['peak_MB']:.0f} | "
              f"{exact['seconds']:.1f} / {exact['peak_MB']:.0f} | {fast['seconds']:.1f} / {fast['peak_MB']:.0f} | "
              f"{ref['seconds'] / exact['seconds']:.2g}x{'' if equal else ' (TIMES DIFFER)'} |", flush=True)
    load1 = os.getloadavg()
    print(f"\nload average after: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    if args.json:
        write_json(args.json, {**provenance(__file__, argv), "load_before": load0, "load_after": load1,
                               "parameters_ps": q, "rows": rows})
    return 0 if all(r["equal"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(run_script(main, "loggopsim_speed.py"))
