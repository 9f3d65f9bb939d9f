"""LogGP and LogGOPS refitted: the calibration of ``predict --json`` reports fitted again from their
own stored measurements with the kit's current fits, and each model's median |error| per size
class, as stored and as refitted (the same rows, the same software term: only the models'
parameters change; no measurement is repeated).

    python benchmarks/loggp_refit.py book/data/predict_launch_1.json book/data/predict_launch_2.json

Prints, per report, LogGP's and LogGOPS's parameters and the sizes LogGP's G comes from, then a
table of median |error| with the software term (median signed error in brackets) per model and
size class; ``--json FILE`` writes the same numbers.  A report whose PRTT stopped at 16 KiB keeps
G from the short sizes (no long size to fit it on): its LogGP rows do not move.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mpi_exercises.bench import logp_bench, pingpong, predict  # noqa: E402
from netmodels.commandline import OneLineParser, run_script  # noqa: E402
from netmodels.outputs import output_problem, read_input, write_json  # noqa: E402

#: the stored launches (benchmarks/predict_launches.py), from the repository's root
LAUNCHES = ["book/data/predict_launch_1.json", "book/data/predict_launch_2.json"]
MODELS = ("alpha-beta", "alpha-beta-segmented", "loggp", "loggp-segmented", "loggops", "nbl")


def refit(report: dict) -> tuple[predict.Calibration, predict.Calibration, dict]:
    """``(stored, refitted, LogGP's fit)`` of a report with ``calibration_measurements``."""
    cm = report["calibration_measurements"]
    stored = predict.Calibration.from_dict(report["calibration"])
    measured = {"pingpong": (cm["pingpong"], None), "exchange": (cm["exchange"], None),
                "logp": (cm["logp"], cm["logp_n"])}
    models = predict.parameters_of(measured, report["environment"]["ranks"])
    lg = logp_bench.fit(cm["logp"], cm["logp_n"], pingpong.FIT_STATISTIC)
    return stored, replace(stored, models={m: models[m] for m in stored.models if m in models}), lg


def errors(report: dict, cal: predict.Calibration) -> dict:
    """Per model and size class: (median |error|, median signed error) with the software term."""
    rows = [{k: v for k, v in r.items() if k in ("collective", "algorithm", "nelems", "bytes", "min_s",
                                                  "median_s")} for r in report["rows"]]
    stat = {"min": "min_s", "median": "median_s"}[report["parameters"]["statistic"]]
    summary = predict.summarize_errors(predict.compare(rows, cal, report["environment"]["ranks"], stat))
    return {m: {c: [v["median_abs"], v["median"]] for c, v in s["with_software"]["by_size_class"].items()}
            for m, s in summary.items()}


def main(argv=None) -> int:
    p = OneLineParser(prog="loggp_refit.py", description=__doc__.split("\n\n")[0])
    p.add_argument("reports", nargs="*", default=LAUNCHES,
                   help="predict --json files with calibration_measurements (default: " + " ".join(LAUNCHES) + ")")
    p.add_argument("--json", metavar="FILE", help="write the numbers to FILE")
    args = p.parse_args(argv)
    if args.json and output_problem(args.json):
        p.error(f"--json: {output_problem(args.json)}")
    out = {"benchmark": "loggp-refit", "command": " ".join(["python", "benchmarks/loggp_refit.py", *sys.argv[1:]]),
           "load_average_1min": os.getloadavg()[0], "reports": {}}
    for path in args.reports:
        try:
            report = json.loads(read_input(path).decode("utf-8"))
            stored, new, lg = refit(report)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as exc:
            p.error(f"{path}: cannot refit ({exc})")
        before, after = errors(report, stored), errors(report, new)
        print(f"{path} (launch at load {report.get('load_average_1min', float('nan')):.1f}):")
        print(f"  LogGP G from {logp_bench.G_source(lg)}")
        for m in ("loggp", "loggops"):
            for label, cal in (("stored", stored), ("refit", new)):
                params = ", ".join(f"{k} = {v * (1e12 if k in ('G', 'O', 'G_r') else 1e6):.4g}"
                                   f"{' ps/B' if k in ('G', 'O', 'G_r') else ' µs'}"
                                   for k, v in cal.models.get(m, {}).items() if k != "S")
                print(f"  {m:8} {label:6}: {params}")
        classes = [c for c, _ in predict.SIZE_CLASSES]
        print(f"  {'model':24}" + "".join(f"{c + ' stored':>22}{c + ' refit':>22}" for c in classes))
        for m in MODELS:
            if m not in after:
                continue
            cells = []
            for c in classes:
                for e in (before, after):
                    v = e.get(m, {}).get(c)
                    cells.append(f"{v[0] * 100:6.1f} % ({v[1] * 100:+6.1f} %)" if v else "-")
            print(f"  {m:24}" + "".join(f"{x:>22}" for x in cells))
        out["reports"][path] = {"G_source": logp_bench.G_source(lg), "stored": before, "refit": after,
                                "parameters_stored": stored.models, "parameters_refit": new.models}
    if args.json:
        write_json(args.json, out)
    print(f"loggp_refit: {len(args.reports)} reports refitted; load {out['load_average_1min']:.2f} "
          "(the refit repeats no measurement)")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main, "loggp_refit.py"))
