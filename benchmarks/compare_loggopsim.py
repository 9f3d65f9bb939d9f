"""The kit's three semantics against LogGOPSim's stored times, case by case.

    python benchmarks/compare_loggopsim.py [--json book/data/loggopsim_comparison.json]

Reads ``book/data/loggopsim_reference.json`` (LogGOPSim's times, made by
``benchmarks/validate_loggopsim.py``), simulates every case under *sync*, *stepwise* and
*loggopsim* (:func:`netmodels.simulate.loggopsim.compare`) and stores, per case and
parameter set, LogGOPSim's time and each semantics' relative difference; prints per
semantics the number of cases, how many are equal within 1e-9 relative, and the worst
case.  No LogGOPSim needed.  About ten minutes (the *loggopsim* semantics runs event by
event in Python).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from netmodels.commandline import OneLineParser, run_script  # noqa: E402
from netmodels.outputs import provenance, write_json  # noqa: E402
from netmodels.simulate import loggopsim  # noqa: E402

SEMANTICS = ("sync", "stepwise", "loggopsim")
TOLERANCE = 1e-9


def summary(rows: list[dict]) -> dict:
    """Per semantics: cases, cases within :data:`TOLERANCE`, and the worst case."""
    out = {}
    for sem in SEMANTICS:
        worst = max(rows, key=lambda r: abs(r[sem]))
        out[sem] = {"cases": len(rows), "equal": sum(abs(r[sem]) <= TOLERANCE for r in rows),
                    "worst_case": worst["case"], "worst_parameters": worst["parameters"],
                    "worst_relative": worst[sem]}
    return out


def main(argv=None) -> int:
    p = OneLineParser(prog="compare_loggopsim.py", description=__doc__.splitlines()[0])
    p.add_argument("--reference", default=str(ROOT / "book" / "data" / "loggopsim_reference.json"))
    p.add_argument("--json", default=str(ROOT / "book" / "data" / "loggopsim_comparison.json"))
    args = p.parse_checked(argv)                 # --json refused before the ten minutes of work
    data = json.loads(Path(args.reference).read_text())
    t0 = time.perf_counter()
    by_sem = {sem: loggopsim.compare(data, sem) for sem in SEMANTICS}
    rows = []
    for k, base in enumerate(by_sem["loggopsim"]):
        rows.append({"case": base["case"], "parameters": base["parameters"], "messages": base["messages"],
                     "loggopsim_s": base["loggopsim_s"], **{sem: by_sem[sem][k]["relative"] for sem in SEMANTICS}})
    doc = {**provenance(__file__, argv),
           "reference": "book/data/loggopsim_reference.json",
           "columns": "per case and parameter set: LogGOPSim's time (s) and, per semantics, "
                      "(kit - LogGOPSim) / LogGOPSim",
           "summary": summary(rows), "rows": rows}
    write_json(args.json, doc)
    for sem, s in doc["summary"].items():
        print(f"{sem:>10}: {s['equal']}/{s['cases']} equal within {TOLERANCE:g}; worst {s['worst_relative']:+.3%} "
              f"({s['worst_case']}, {s['worst_parameters']})")
    print(f"wrote {args.json} ({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main, "compare_loggopsim.py"))
