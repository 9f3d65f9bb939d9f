"""Does a prediction move when a model's parameter does?  Recompute a ``predict --json`` report's
predictions with one parameter scaled and print, per row, how much each model's prediction moved.

    python benchmarks/predict_sensitivity.py book/data/predict_reference.json --scale alpha-beta.alpha=2

The predictions of a report depend only on its calibration block and the schedules (no
measurement is repeated), so this is exact.  A model whose predictions do not move when its
own parameters do is not what is being tested.  Each row says whether its schedule has an
exchange (a rank that sends and receives in one step), and the last line counts the rows that
moved with and without one: an exchange term (``alpha-beta-exchange.beta_x``) doubled must move
only rows that have exchanges.  Each row also gives its steps with a message and how far the
scaled model moved in units of the parameter's change (α doubled under α-β on 2 ranks: one α per
step with a message, a line counts the rows where it is so), and a last line how far each
prediction (messages and software walked together) lies below the two walked apart.

    python benchmarks/predict_sensitivity.py book/data/predict_launch_1.json --scale alpha-beta-exchange.beta_x=2
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mpi_exercises.bench import predict  # noqa: E402
from netmodels.commandline import OneLineParser  # noqa: E402


def scaled(cal: predict.Calibration, what: str, factor: float) -> predict.Calibration:
    """``cal`` with the parameter ``what`` (``model.parameter``) multiplied by ``factor``
    (ValueError naming the parameters if it has no such one)."""
    model, _, name = what.partition(".")
    if model not in cal.models or name not in cal.models[model]:
        raise ValueError(f"no parameter {what!r}; the calibration has "
                         + ", ".join(f"{m}.{k}" for m, p in cal.models.items() for k in p))
    models = {m: dict(p) for m, p in cal.models.items()}
    models[model][name] *= factor
    return replace(cal, models=models)


def has_exchange(schedule) -> bool:
    """Whether some rank of ``schedule`` both sends and receives a message in one step."""
    from netmodels.algorithms.arrays import as_arrays

    for step in as_arrays(schedule).steps:
        moves = step.src != step.dst
        if np.intersect1d(step.src[moves], step.dst[moves]).size:
            return True
    return False


def message_steps(schedule) -> int:
    """The steps of ``schedule`` in which at least one message (``src != dst``) is sent."""
    from netmodels.algorithms.arrays import as_arrays

    return sum(1 for step in as_arrays(schedule).steps if np.any(step.src != step.dst))


def below_apart(rows: list[dict]) -> tuple[int, int, float, str | None]:
    """``(below, predictions, largest, model)``: how many predictions (messages and software in one
    walk) lie below the network time plus the software alone, and the largest relative gap."""
    gaps = [((r["network_s"][m] + r["software_s"] - t) / (r["network_s"][m] + r["software_s"]), m)
            for r in rows if r["predicted_s"] for m, t in r["predicted_s"].items()]
    largest = max(gaps, default=(0.0, None))
    return sum(1 for g, _ in gaps if g > 1e-12), len(gaps), largest[0], largest[1]


def main(argv=None) -> int:
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("report", help="a predict --json file")
    p.add_argument("--scale", default="alpha-beta.alpha=2", metavar="MODEL.PARAMETER=FACTOR",
                   help="the parameter to scale and by how much (default alpha-beta.alpha=2)")
    args = p.parse_args(argv)
    what, _, factor = args.scale.partition("=")
    try:
        factor = float(factor)
        if not factor > 0:
            raise ValueError
    except ValueError:
        p.error(f"--scale: expected MODEL.PARAMETER=FACTOR with a factor > 0, got {args.scale!r}")
    try:
        data = json.loads(Path(args.report).read_text())
        cal = predict.Calibration.from_dict(data)
        P = data["environment"]["ranks"]
        rows = [{k: r[k] for k in ("collective", "algorithm", "nelems", "min_s")} for r in data["rows"]]
        before = predict.compare(rows, cal, P)
        after = predict.compare(rows, scaled(cal, what, factor), P)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        what_went_wrong = f"no {exc} in it" if isinstance(exc, KeyError) else str(exc)
        p.error(f"{args.report}: not a predict report ({what_went_wrong})")
    models = list(cal.models)
    model, _, name = what.partition(".")
    delta = (factor - 1) * cal.models[model][name]      # the parameter's change
    print(f"{args.report}: {what} x {factor}; relative change of each prediction (with the software term)")
    width = max(11, *map(len, models))
    print(f"{'collective:algorithm':<30} {'N':>7} {'exchange':>8} {'msg steps':>9} {'moved/Δ':>8}"
          + "".join(f" {m:>{width}}" for m in models))
    moved = {m: [] for m in models}
    counts = {True: [0, 0], False: [0, 0]}          # has an exchange -> [rows moved, rows]
    per_step = 0                                    # rows that moved by one Δ per step with a message
    for b, a in zip(before, after):
        if not b["predicted_s"]:
            continue
        sched = predict.COLLECTIVES[b["collective"]].schedule(b["algorithm"], P, b["nelems"])
        x = has_exchange(sched)
        cells = []
        for m in models:
            change = a["predicted_s"][m] / b["predicted_s"][m] - 1
            moved[m].append(change)
            cells.append(f" {change:+{width}.1%}")
        counts[x][0] += any(a["predicted_s"][m] != b["predicted_s"][m] for m in models)
        counts[x][1] += 1
        steps = message_steps(sched)
        units = (a["predicted_s"][model] - b["predicted_s"][model]) / delta
        per_step += abs(units - steps) < 1e-6 * max(steps, 1)
        print(f"{b['collective'] + ':' + b['algorithm']:<30} {b['nelems']:>7} {'yes' if x else 'no':>8} "
              f"{steps:>9} {units:>8.3f}" + "".join(cells))
    print("median" + " " * 60 + "".join(f" {np.median(v):+{width}.1%}" for v in moved.values()))
    print(f"{what} x {factor:g}: moved {counts[True][0]} of {counts[True][1]} rows with an exchange, "
          f"{counts[False][0]} of {counts[False][1]} rows without one")
    print(f"{what} x {factor:g}: {model} moved by one Δ = {delta:.3g} per step with a message in {per_step} of "
          f"{counts[True][1] + counts[False][1]} rows")
    below, total, largest, where = below_apart(before)
    print(f"software walked with the messages: {below} of {total} predictions below network + software alone"
          + (f", by at most {largest:.2%} ({where})" if below else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
