"""LogGOPSim's own timelines (``-V``) of a few schedules, stored, and the kit's traces against them.

Opt-in for the storing part: it needs a local build of LogGOPSim and txt2bin (the steps are
those of ``benchmarks/validate_loggopsim.py``'s docstring).  Without them, ``--store`` says so
in one line and exits 0.  Every case of :data:`CASES` (a dissemination barrier, recursive
doubling and ring allreduce at P = 8 and 16, and Kumar's k-prefix allgather at P = 8, whose
messages, with receives posted after the sends, often arrive before their receive; both
receive orders) is written as GOAL text by
``netmodels.simulate.loggopsim.to_goal``, converted by ``txt2bin`` and run by ``LogGOPSim
-V case.viz`` under the parameter sets of :data:`SETS` (o, g and G all above 0; g > o, g < o,
and a gap long enough that messages arrive before their receive is posted); the lines of the
visualisation file (``osend``, ``orecv``, ``transmission``) are stored with the commands, in
LogGOPSim's integer picoseconds (its ``noise`` lines, all of no length without OS noise, are
counted):

    python benchmarks/loggopsim_traces.py --store --loggopsim path/to/src/LogGOPSim \\
        --commit $(git -C path/to/LogGOPSim rev-parse HEAD)

Without ``--store`` (no LogGOPSim needed), the kit's trace of every stored case
(``simulate(..., semantics="loggopsim", trace=True)``, parameters given in seconds) is turned
into the same lines (``netmodels.simulate.trace.loggopsim_view``) and compared line by line:
the cases and the lines that are equal are counted (``tests/test_loggopsim_traces.py``
checks the same).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from netmodels.commandline import OneLineParser  # noqa: E402
from netmodels.outputs import output_problem, write_text  # noqa: E402
from netmodels.simulate import loggopsim, trace  # noqa: E402

DEFAULT_JSON = ROOT / "book" / "data" / "loggopsim_traces.json"
#: the cases: (algorithm, P, bytes); each with both receive orders
CASES = tuple((name, p, 0 if name.startswith("barrier.") else 4096)
              for name in ("barrier.dissemination", "allreduce.recursive_doubling", "allreduce.ring")
              for p in (8, 16)) + (("allgather.k-prefix", 8, 4096),)   # with unexpected messages
#: how the run writes its file (LogGOPSim's command line, for every parameter set)
COMMAND = "LogGOPSim -f case.bin -L {L} -o {o} -g {g} -G {G} -S %d -V case.viz"
#: the parameter sets (integer picoseconds): the two of the reference comparison (g > o, g < o)
#: and the exactness comparison's long gap after a long send, under which messages arrive
#: before their receive is posted (LogGOPSim's unexpected queue)
SETS = {**loggopsim.PARAMETER_SETS, "large G, small L": loggopsim.PARAMETER_KINDS["large G, small L"]}


def cases() -> list[dict]:
    """Every case as ``{"algorithm", "nprocs", "bytes", "receives"}``."""
    from netmodels.simulate.arrival import RECEIVES

    return [{"algorithm": n, "nprocs": p, "bytes": b, "receives": r} for n, p, b in CASES for r in RECEIVES]


def run_case(binaries, workdir: Path, case: dict, sets: dict) -> dict:
    """LogGOPSim's visualisation file of ``case`` under every parameter set, read
    (:func:`netmodels.simulate.trace.read_viz`), by parameter set."""
    from validate_loggopsim import EAGER_LIMIT

    sim, txt2bin = binaries
    goal, binary, viz = workdir / "case.goal", workdir / "case.bin", workdir / "case.viz"
    goal.write_text(loggopsim.to_goal(loggopsim.case_arrays(case), loggopsim.ELEM_BYTES, receives=case["receives"]))
    subprocess.run([txt2bin, "-i", str(goal), "-o", str(binary)], check=True, capture_output=True)
    out = {}
    for name, q in sets.items():
        subprocess.run([sim, "-f", str(binary), "-L", str(q["L"]), "-o", str(q["o"]), "-g", str(q["g"]),
                        "-G", str(q["G"]), "-S", str(EAGER_LIMIT), "-V", str(viz)],
                       check=True, capture_output=True, text=True)
        lines = trace.read_viz(viz.read_text())
        viz.unlink()
        out[name] = lines
    return out


def kit_view(case: dict, q: dict, unit: float) -> dict:
    """The kit's trace of ``case`` under parameter set ``q`` as the lines of LogGOPSim's ``-V``."""
    return loggopsim.loggopsim_viz(loggopsim.case_arrays(case), q, unit, case["receives"], loggopsim.ELEM_BYTES)


def compare(doc: dict) -> list[dict]:
    """Per stored case and parameter set: the line counts of :func:`netmodels.simulate.trace.compare_viz`."""
    rows = []
    for c in doc["cases"]:
        for name, ref in c["viz"].items():
            ref = {"numranks": ref["numranks"], **{k: [tuple(x) for x in ref[k]] for k in trace.VIZ_KINDS}}
            got = trace.compare_viz(kit_view(c, doc["parameter_sets"][name], doc["time_unit_s"]), ref)
            rows.append({"case": loggopsim.case_key(c), "parameters": name, **got})
    return rows


def summary(rows: list[dict]) -> str:
    """Cases and lines equal, in one paragraph."""
    lines = sum(r[k]["loggopsim"] for r in rows for k in trace.VIZ_KINDS)
    same = sum(r[k]["equal"] for r in rows for k in trace.VIZ_KINDS)
    return (f"{sum(r['equal'] for r in rows)} of {len(rows)} runs equal line by line; "
            f"{same} of {lines} lines of LogGOPSim's -V files equal ("
            + ", ".join(f"{k} {sum(r[k]['equal'] for r in rows)}/{sum(r[k]['loggopsim'] for r in rows)}"
                        for k in trace.VIZ_KINDS) + ")")


def dumps(doc: dict) -> str:
    """``doc`` as JSON text, one case a line (indented, the thousands of lines' numbers would
    take a line each)."""
    import json

    head = json.dumps({**doc, "cases": None}, indent=1)
    body = ",\n".join(json.dumps(c, separators=(",", ":")) for c in doc["cases"])
    return head.replace('"cases": null', '"cases": [\n' + body + "\n ]") + "\n"


def main(argv=None) -> int:
    import json

    p = OneLineParser(prog="loggopsim_traces.py", description=__doc__.splitlines()[0])
    p.add_argument("--store", action="store_true", help="run LogGOPSim -V on every case and store its lines")
    p.add_argument("--loggopsim", metavar="DIR", help="folder holding LogGOPSim and txt2bin (default: PATH)")
    p.add_argument("--commit", default="unknown", help="the LogGOPSim commit the binaries were built from")
    p.add_argument("--json", metavar="FILE", default=str(DEFAULT_JSON), help=f"default: {DEFAULT_JSON}")
    args = p.parse_args(argv)
    if not args.store:
        try:
            doc = json.loads(Path(args.json).read_text())
        except (OSError, ValueError) as exc:
            p.error(f"--json: cannot read {args.json}: {exc}")
        rows = compare(doc)
        for r in rows:
            if not r["equal"]:
                print(f"differs: {r['case']} {r['parameters']}: "
                      + ", ".join(f"{k} {r[k]['equal']}/{r[k]['loggopsim']}" for k in trace.VIZ_KINDS))
        print(summary(rows))
        return 0 if all(r["equal"] for r in rows) else 1
    problem = output_problem(args.json)
    if problem:
        p.error(f"--json: {problem}")
    binaries = loggopsim.find_binaries(args.loggopsim)
    if binaries is None:
        print("LogGOPSim and txt2bin not found (see benchmarks/validate_loggopsim.py's docstring): nothing to do")
        return 0
    from validate_loggopsim import BUILD, EAGER_LIMIT

    doc = {
        "simulator": "LogGOPSim (Hoefler, Schneider & Lumsdaine, HPDC 2010), https://github.com/spcl/LogGOPSim",
        "commit": args.commit,
        "build": list(BUILD),
        "generated_by": "python benchmarks/loggopsim_traces.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "command": COMMAND % EAGER_LIMIT,
        "goal": "netmodels.simulate.loggopsim.to_goal(case_arrays(case), 8, receives=case's receives), "
                "then txt2bin -i case.goal -o case.bin",
        "lines": "per case and parameter set, the lines of case.viz: osend and orecv [rank, start, end], "
                 "transmission [src, dst, start, end, bytes] (CPU column and colours left out), each kind "
                 "sorted; the number of noise lines and of those of some length",
        "time_unit_s": loggopsim.TIME_UNIT,
        "eager_limit_bytes": EAGER_LIMIT,
        "elem_bytes": loggopsim.ELEM_BYTES,
        "parameter_sets": SETS,
        "cases": [],
    }
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases():
            viz = run_case(binaries, Path(tmp), case, SETS)
            for lines in viz.values():
                if lines.pop("loclop"):
                    raise RuntimeError("LogGOPSim drew local computation the schedule does not have")
                noise = lines.pop("noise")
                lines["noise_lines"] = len(noise)
                lines["noise_lines_of_some_length"] = sum(a != b for _, a, b in noise)
            doc["cases"].append({**case, "viz": viz})
            print(loggopsim.case_key(case), {k: len(v["osend"]) for k, v in viz.items()}, "sends", flush=True)
    doc["date"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    write_text(args.json, dumps(doc))
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
