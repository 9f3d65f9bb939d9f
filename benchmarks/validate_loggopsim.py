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

Every case of ``netmodels.simulate.loggopsim.cases()`` (every registered builder at P in
2, 3, 7, 37, 100, 1000 and 8 B, 4 KiB, 1 MiB, and seeded random schedules) is written as
GOAL text by ``to_goal``, converted by ``txt2bin`` and simulated by ``LogGOPSim`` with
each parameter set of ``PARAMETER_SETS`` (L, o, g, G in picoseconds, its integers) and
the eager limit S above every message; the JSON keeps the commands and, per case and
parameter set, the finishing time LogGOPSim prints.  Cases are run from the fewest
messages up and the file is rewritten as they complete (``--max-messages`` bounds them).

``--suite loggops`` runs ``loggops_cases()`` under ``LOGGOPS_KINDS``, LogGOPS parameter sets
with ``-O`` (overhead per byte) and ``-S`` (eager limit: some or all messages go by
rendezvous), into ``book/data/loggops_exact.json``; a case LogGOPSim ends with messages or
receives unmatched (a rendezvous deadlock) is stored with a time of null.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from netmodels.commandline import OneLineParser  # noqa: E402
from netmodels.outputs import output_problem, write_json  # noqa: E402
from netmodels.simulate import loggopsim  # noqa: E402

#: how the two binaries were built (in LogGOPSim's src/LogGOPSim, Debian 12, g++ 12)
BUILD = ("gengetopt -F loggopsim_cmdline -i loggopsim_cmdline.ggo",
         "gengetopt -F txt2bin_cmdline -i txt2bin_cmdline.ggo",
         "re2c -o txt2bin.cpp txt2bin.re",
         "g++ -std=c++11 -O2 -o LogGOPSim LogGOPSim.cpp loggopsim_cmdline.c -lcgraph",
         "g++ -O2 -o txt2bin txt2bin.cpp txt2bin_cmdline.c")
#: why cases left out with --exclude were not run (the ones left out of the stored data)
NOT_RUN_REASON = ("one-step alltoall at P = 1000: every rank receives 999 messages at once and LogGOPSim "
                  "re-queues each waiting message every time the CPU frees, about 5e8 queue operations "
                  "per run; a single run had not finished after 9 minutes on the shared 2-core machine")
#: LogGOPSim's eager/rendezvous limit S (bytes): above every message of the cases
EAGER_LIMIT = 2**31 - 1


#: what LogGOPSim prints when messages or receives are left unmatched at the end (a deadlock)
DEADLOCK = re.compile(r"^(unexpected|receive) queue on host \d+ contains", re.M)


def parse_times(stdout: str) -> tuple[int | None, list[int] | None]:
    """LogGOPSim's finishing time (its time unit), and every rank's when it prints them;
    (None, None) when it ends with messages or receives unmatched (a rendezvous deadlock)."""
    if DEADLOCK.search(stdout):
        return None, None
    hosts = [int(m) for m in re.findall(r"^Host \d+: (\d+)$", stdout, re.M)]
    if hosts:
        return max(hosts), hosts
    m = re.search(r"^Maximum finishing time at host \d+: (\d+)", stdout, re.M)
    if not m:
        raise RuntimeError(f"no finishing time in LogGOPSim's output:\n{stdout[-2000:]}")
    return int(m.group(1)), None


def run_case(binaries, workdir: Path, case: dict, sets: dict) -> tuple[dict, dict]:
    """LogGOPSim's finishing time (ps) of ``case`` under every parameter set of ``sets``,
    and every rank's where LogGOPSim prints them (P <= 16)."""
    sim, txt2bin = binaries
    goal, binary = workdir / "case.goal", workdir / "case.bin"
    goal.write_text(loggopsim.to_goal(loggopsim.case_arrays(case), loggopsim.ELEM_BYTES,
                                      receives=case.get("receives", "after-sends")))
    subprocess.run([txt2bin, "-i", str(goal), "-o", str(binary)], check=True, capture_output=True)
    goal.unlink()
    times, hosts = {}, {}
    for name, q in sets.items():
        cmd = [sim, "-f", str(binary), "-L", str(q["L"]), "-o", str(q["o"]), "-g", str(q["g"]),
               "-G", str(q["G"]), "-S", str(q.get("S", EAGER_LIMIT))]
        if "O" in q:
            cmd += ["-O", str(q["O"])]
        if case["nprocs"] > 16:                  # LogGOPSim prints every rank's time up to 16
            cmd.append("--batchmode")
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        times[name], per_rank = parse_times(out)
        if per_rank is not None:
            hosts[name] = per_rank
    binary.unlink()
    return times, hosts


#: the suites: default file, parameter sets, cases
SUITES = {
    "reference": ("loggopsim_reference.json", loggopsim.PARAMETER_SETS, loggopsim.cases),
    "exact": ("loggopsim_exact.json", loggopsim.PARAMETER_KINDS, loggopsim.exact_cases),
    "loggops": ("loggops_exact.json", loggopsim.LOGGOPS_KINDS, loggopsim.loggops_cases),
}


def main(argv=None) -> int:
    p = OneLineParser(prog="validate_loggopsim.py", description=__doc__.splitlines()[0])
    p.add_argument("--loggopsim", metavar="DIR", help="folder holding LogGOPSim and txt2bin (default: PATH)")
    p.add_argument("--commit", default="unknown", help="the LogGOPSim commit the binaries were built from")
    p.add_argument("--suite", choices=tuple(SUITES), default="reference",
                   help="reference: cases() under PARAMETER_SETS (loggopsim_reference.json); exact: exact_cases() "
                        "under PARAMETER_KINDS, both receive orders, every rank's time up to P = 16 "
                        "(loggopsim_exact.json); loggops: loggops_cases() under LOGGOPS_KINDS, with -O and -S "
                        "(loggops_exact.json)")
    p.add_argument("--json", metavar="FILE", default=None,
                   help="default: book/data/loggopsim_reference.json, loggopsim_exact.json or loggops_exact.json "
                        "(--suite)")
    p.add_argument("--max-messages", type=int, default=None, help="skip cases with more messages")
    p.add_argument("--resume", action="store_true", help="keep the cases FILE holds and run the others")
    p.add_argument("--exclude", metavar="PREFIX", action="append", default=[],
                   help="skip the cases whose name (e.g. alltoall.direct/P=1000) starts with PREFIX")
    args = p.parse_args(argv)
    filename, sets, make_cases = SUITES[args.suite]
    if args.json is None:
        args.json = str(ROOT / "book" / "data" / filename)
    problem = output_problem(args.json)
    if problem:                                  # refused before any work, so none is lost
        p.error(f"--json: {problem}")
    binaries = loggopsim.find_binaries(args.loggopsim)
    if binaries is None:
        print("LogGOPSim and txt2bin not found (see the build steps in this script's docstring): nothing to do")
        return 0
    done = {}
    if args.resume and Path(args.json).exists():
        old = json.loads(Path(args.json).read_text())
        if old["commit"] != args.commit or old["parameter_sets"] != sets:
            print(f"{args.json} was made with another LogGOPSim commit or other parameters: not resumed")
            return 1
        done = {loggopsim.case_key(c): c for c in old["cases"]}
    todo, not_run = [], []
    for case in make_cases():
        key = loggopsim.case_key(case)
        if key in done:
            continue
        if any(key.startswith(x) for x in args.exclude):
            not_run.append(key)
            continue
        a = loggopsim.case_arrays(case)
        n = sum(int((s.src != s.dst).sum()) for s in a.steps)
        if args.max_messages is None or n <= args.max_messages:
            todo.append((n, case))
    todo.sort(key=lambda x: x[0])
    doc = {
        "simulator": "LogGOPSim (Hoefler, Schneider & Lumsdaine, HPDC 2010), https://github.com/spcl/LogGOPSim",
        "commit": args.commit,
        "build": list(BUILD),
        "generated_by": "python benchmarks/validate_loggopsim.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "command": ("LogGOPSim -f case.bin -L {L} -o {o} -g {g} -G {G} -S {S} -O {O}, with --batchmode above "
                    "P = 16; a time of null: LogGOPSim ended with messages or receives unmatched (a deadlock)"
                    if args.suite == "loggops" else
                    "LogGOPSim -f case.bin -L {L} -o {o} -g {g} -G {G} -S %d, with --batchmode above P = 16"
                    % EAGER_LIMIT),
        "time_unit_s": loggopsim.TIME_UNIT,
        **({} if args.suite == "loggops" else {"eager_limit_bytes": EAGER_LIMIT}),
        "elem_bytes": loggopsim.ELEM_BYTES,
        "goal": "netmodels.simulate.loggopsim.to_goal(case_arrays(case), 8, receives=case's receives), "
                "then txt2bin -i case.goal -o case.bin",
        "parameter_sets": sets,
        "cases": list(done.values()),
        "not_run": not_run,
        "not_run_reason": NOT_RUN_REASON if not_run else "",
    }
    if done:
        doc["generated_by"] = old["generated_by"] + "; then " + doc["generated_by"]
    with tempfile.TemporaryDirectory() as tmp:
        for k, (n, case) in enumerate(todo):
            t0 = time.perf_counter()
            times, hosts = run_case(binaries, Path(tmp), case, sets)
            doc["cases"].append({**case, "messages": n, "time_ps": times, **({"hosts_ps": hosts} if hosts else {})})
            print(f"{k + 1}/{len(todo)} {loggopsim.case_key(case):<40} {n:>8} messages "
                  f"({time.perf_counter() - t0:.1f} s)", flush=True)
            if time.perf_counter() - t0 > 1 or k % 50 == 0:
                doc["date"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
                write_json(args.json, doc)
    doc["date"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    write_json(args.json, doc)
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
