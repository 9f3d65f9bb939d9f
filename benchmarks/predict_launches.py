"""Two (or more) launches of ``predict`` on 2 ranks, at least a minute apart, each stored as its
own JSON, then per launch and model the median |error| with the software term per size class of
the vector (up to 1 KiB, 1 to 64 KiB, above 64 KiB), the best model over all rows, and the
classes where every model errs with one sign by more than 30 %.

    python benchmarks/predict_launches.py --out book/data/predict_launch

writes ``book/data/predict_launch_1.json``, ``_2.json`` (each a whole ``predict --json`` report,
with its load and its launch's mode, ``launch_mode``) and prints one table per launch; the last
lines name, one per launch, its 1-minute load, its mode (MPI's Allreduce over an exchange of
1 MiB, the readings of its rounds combined) and the best model, then the load now.  ``--summarize FILE ...`` prints the same tables from stored reports
without measuring.  A launch with more ranks than cores is marked oversubscribed by predict
itself (its JSON's ``valid``).
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

import numpy as np  # noqa: E402

from mpi_exercises.bench import predict  # noqa: E402
from netmodels.commandline import OneLineParser  # noqa: E402
from netmodels.outputs import output_problem  # noqa: E402

#: the targets of the long-message issue: median |error| per size class, best model overall,
#: the largest error of one sign shared by every model in a class
CLASS_TARGET, BEST_TARGET, SAME_SIGN = 0.25, 0.10, 0.30


def summary(data: dict) -> dict:
    """Per model and size class the median |error| and signed median (with the software term),
    each model's median |error| over all rows, the best model, the classes in which every
    model errs with one sign by more than :data:`SAME_SIGN` (recomputed from the rows), and
    ``per_class``: each (model, class)'s median |error|."""
    s = predict.summarize_errors(data["rows"])
    best = min(s, key=lambda m: s[m]["with_software"]["median_abs"])
    same = []
    for c, _ in predict.SIZE_CLASSES:
        signed = [s[m]["with_software"]["by_size_class"][c]["median"] for m in s
                  if c in s[m]["with_software"]["by_size_class"]]
        if signed and (all(v > SAME_SIGN for v in signed) or all(v < -SAME_SIGN for v in signed)):
            same.append(c)
    per_class = {(m, c): e["median_abs"] for m, v in s.items() for c, e in v["with_software"]["by_size_class"].items()}
    return {"summary": s, "best": best, "same_sign_classes": same, "per_class": per_class}


def mode_words(data: dict) -> str:
    """A launch's mode in words (a report written before predict measured it: not recorded)."""
    m = data.get("launch_mode")
    if not m:
        return "mode not recorded"
    readings = f", {m['slow_readings']} of {len(m['readings'])} readings slow" if "readings" in m else ""
    return f"mode {m['mode']} (Allreduce / exchange at {m['bytes'] // 1024} KiB {m['ratio']:.1f}{readings})"


def load_words(data: dict) -> str:
    load = data.get("load_average_1min")
    return "load unknown" if load is None else f"load {load:.1f}"


def table(name: str, data: dict) -> str:
    r = summary(data)
    interleaved = (data.get("rounds") or {}).get("interleaved")
    lines = [f"{name}: {data['environment']['date']}, {load_words(data)}, {mode_words(data)}, "
             f"valid {data['valid']}, calibration reliable {data['reliable']}, stable {data['stable']}, "
             f"calibration {'interleaved with' if interleaved else 'apart from'} the collectives",
             predict.size_class_table(r["summary"])]
    misses = [k for k, v in r["per_class"].items() if v > CLASS_TARGET]
    best = r["summary"][r["best"]]["with_software"]["median_abs"]
    lines += [f"best model over all rows: {r['best']} ({best:.0%}; target <= {BEST_TARGET:.0%})",
              f"classes above {CLASS_TARGET:.0%}: {len(misses)} of {len(r['per_class'])}",
              "classes where every model errs with one sign by more than "
              f"{SAME_SIGN:.0%}: {', '.join(r['same_sign_classes']) or 'none'}"]
    return "\n".join(lines)


def launch(path: Path, extra: list[str]) -> None:
    mpiexec = Path(sys.executable).with_name("mpiexec")
    cmd = [str(mpiexec) if mpiexec.exists() else "mpiexec", "-n", "2", sys.executable, "-m", "mpi_exercises",
           "predict", "--no-progress", "--json", str(path), *extra]
    run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"predict_launches.py: {' '.join(cmd[3:])} failed (status {run.returncode}): "
                         + (run.stderr.strip().splitlines() or ["no message"])[-1])


def main(argv=None) -> int:
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="results/predict_launch", help="prefix of the JSON files (default "
                   "results/predict_launch: _1.json, _2.json, ...)")
    p.add_argument("--launches", type=int, default=2, help="launches (default 2)")
    p.add_argument("--apart", type=float, default=60.0, help="seconds between the end of a launch and the "
                   "start of the next (default 60)")
    p.add_argument("--summarize", nargs="+", metavar="FILE", help="only summarize stored predict reports")
    args, extra = p.parse_known_args(argv)
    if args.launches < 1 or args.apart < 0:
        p.error("--launches must be >= 1 and --apart >= 0")
    if extra and args.summarize:
        p.error(f"unrecognized arguments: {' '.join(extra)}")
    paths = [Path(f) for f in args.summarize] if args.summarize else \
        [Path(f"{args.out}_{k + 1}.json") for k in range(args.launches)]
    if not args.summarize:
        for path in paths:
            why = output_problem(path)
            if why:
                p.error(f"--out: {why}")
        for k, path in enumerate(paths):
            if k:
                time.sleep(args.apart)
            launch(path, extra)
    last = []
    for path in paths:
        try:
            data = json.loads(path.read_text())
            print(table(str(path), data), "", sep="\n")
            r = summary(data)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            p.error(f"{path}: not a predict report ({exc})")
        last.append(f"{path.name}: {load_words(data)}, {mode_words(data)}, best {r['best']} "
                    f"{r['summary'][r['best']]['with_software']['median_abs']:.0%}")
    print(*last, sep="\n")
    print(f"predict_launches: {len(paths)} launches, {os.getloadavg()[0]:.1f} load now")
    return 0


if __name__ == "__main__":
    sys.exit(main())
