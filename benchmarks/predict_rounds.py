"""How many rounds ``predict`` needs: launches of ``predict`` on 2 ranks with ``--rounds`` 4 and
16 in turn (the order alternating from pair to pair), each launch judged as
``benchmarks/predict_launches.py`` judges one (median |error| with the software term per model
and size class, the best model over all rows, the classes above 25 %).

    python benchmarks/predict_rounds.py --pairs 8 --json book/data/predict_rounds.json

On a machine whose state changes within seconds (the two cores' caches, *Models compared*), a
row's minimum is the best its samples met: spread over more, shorter rounds, the calibration's
rows and the collectives' rows are each likelier to meet the machine's best state, and so to
compare like with like.  Prints one line per launch, then per number of rounds the median of the
best model's error and of the classes above 25 %; ``--json`` stores the launches' summaries
(not their whole reports) with the command.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from predict_launches import CLASS_TARGET, ROOT, launch, summary  # noqa: E402

sys.path.insert(0, str(ROOT))
from mpi_exercises.bench import predict  # noqa: E402
from netmodels.commandline import OneLineParser  # noqa: E402
from netmodels.outputs import output_problem, write_json  # noqa: E402

ROUNDS = (4, 16)


def judged(data: dict, rounds: int) -> dict:
    """One launch's figures: its rounds, time, load, coherence readings, best model, classes."""
    r = summary(data)
    per = r["per_class"]
    classes = [c for c, _ in predict.SIZE_CLASSES if any(k == c for _, k in per)]
    return {"rounds": rounds, "date": data["environment"]["date"], "load_average_1min": data["load_average_1min"],
            "ranks": data["environment"]["ranks"], "cores": data["environment"]["cores"],
            "oversubscribed": data["oversubscribed"],
            "coherence_write_ratios": [m.get("coherence_write_ratio") for m in data["launch_mode"]["readings"]],
            "best": r["best"], "best_median_abs": r["summary"][r["best"]]["with_software"]["median_abs"],
            "classes_above_target": sum(v > CLASS_TARGET for v in per.values()), "classes": len(per),
            "worst_per_class": {c: max(v for (_, k), v in per.items() if k == c) for c in classes},
            "above_target": sorted(f"{m} {c}" for (m, c), v in per.items() if v > CLASS_TARGET),
            "same_sign_classes": r["same_sign_classes"]}


def line(j: dict) -> str:
    return (f"rounds {j['rounds']:>2}: {j['date'][:19]}, load {j['load_average_1min']:.1f}, coherence write ratios "
            f"{min(j['coherence_write_ratios']):.1f}-{max(j['coherence_write_ratios']):.1f}; best {j['best']} "
            f"{j['best_median_abs']:.0%}; classes above {CLASS_TARGET:.0%}: {j['classes_above_target']} of {j['classes']}")


def main(argv=None) -> int:
    p = OneLineParser(prog="predict_rounds.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", type=int, default=8, help="pairs of launches, one of each number of rounds (default 8)")
    p.add_argument("--apart", type=float, default=5.0, help="seconds between launches (default 5)")
    p.add_argument("--json", metavar="FILE", help="store the launches' summaries as JSON")
    args = p.parse_args(argv)
    if args.pairs < 1 or args.apart < 0:
        p.error("--pairs must be >= 1 and --apart >= 0")
    if args.json and (why := output_problem(args.json)):
        p.error(f"--json: {why}")
    launches = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.pairs):
            for rounds in (ROUNDS if k % 2 == 0 else ROUNDS[::-1]):
                if launches:
                    time.sleep(args.apart)
                path = Path(tmp) / f"launch_{len(launches)}.json"
                launch(path, ["--rounds", str(rounds)])
                launches.append(judged(json.loads(path.read_text()), rounds))
                print(line(launches[-1]), flush=True)
    per = {r: [j for j in launches if j["rounds"] == r] for r in ROUNDS}
    verdict = {r: {"launches": len(js), "median_best": float(np.median([j["best_median_abs"] for j in js])),
                   "best_at_most_10_percent": sum(j["best_median_abs"] <= 0.10 for j in js),
                   "median_classes_above_target": float(np.median([j["classes_above_target"] for j in js]))}
               for r, js in per.items()}
    if args.json:
        write_json(args.json, {"benchmark": "predict_rounds", "command": "python benchmarks/predict_rounds.py "
                               + " ".join(sys.argv[1:] if argv is None else argv),
                               "ranks": launches[0]["ranks"], "cores": launches[0]["cores"],
                               "oversubscribed": any(j["oversubscribed"] for j in launches),
                               "launches": launches, "by_rounds": {str(r): v for r, v in verdict.items()}})
    for r, v in verdict.items():
        print(f"rounds {r}: {v['launches']} launches, best model's median |error| {v['median_best']:.0%} "
              f"(<= 10 % in {v['best_at_most_10_percent']}), classes above {CLASS_TARGET:.0%}: "
              f"{v['median_classes_above_target']:g} (median)")
    print(f"predict_rounds: {len(launches)} launches of {launches[0]['ranks']} ranks on {launches[0]['cores']} cores"
          + (", OVERSUBSCRIBED" if any(j["oversubscribed"] for j in launches) else "")
          + f", {os.getloadavg()[0]:.1f} load now")
    return 0


if __name__ == "__main__":
    sys.exit(main())
