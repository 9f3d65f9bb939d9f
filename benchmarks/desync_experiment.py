"""Self-timed Snake and Fence on a nominal NBL machine, with and without noise: the data of
the chapter "Simulating at scale" on Littlefield's fill-and-drain speculation.

    python benchmarks/desync_experiment.py --json book/data/desync_reference.json

Runs :func:`netmodels.simulate.desync.experiment` on the DELTA's parameters for every
noise level (mean extra delay per message, s) and stores the rows (algorithm, W, H, N,
S, simulated s, lockstep nominal s), the file rewritten after every level.  Deterministic
(seeded); about 2 min without noise and 11 min with, on a loaded 2-core machine.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from netmodels.commandline import OneLineParser, run_script  # noqa: E402
from netmodels.models.machines import DELTA, US  # noqa: E402
from netmodels.outputs import provenance, write_json  # noqa: E402
from netmodels.simulate import desync  # noqa: E402

MESHES = ((4, 4), (8, 8))
VECTOR_LENGTHS = (1200, 6000, 30000)
BLOCKS = (60, 120, 300, 600)
NOISE = (0.0, 54 * US)


def main(argv=None) -> int:
    p = OneLineParser(prog="desync_experiment.py", description=__doc__.splitlines()[0])
    p.add_argument("--json", default=str(ROOT / "book" / "data" / "desync_reference.json"))
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_checked(argv)
    runs = []
    doc = {**provenance(__file__, argv),
           "machine": "DELTA (netmodels.models.machines.DELTA), node bandwidth shared: f_true(n) = n",
           "seed": args.seed, "meshes": MESHES, "vector_lengths": VECTOR_LENGTHS, "blocks": BLOCKS,
           "columns": ["algorithm", "W", "H", "N", "S", "simulated_s", "lockstep_nominal_s"], "runs": runs}
    for noise in NOISE:
        t0 = time.perf_counter()
        rows = desync.experiment(MESHES, VECTOR_LENGTHS, BLOCKS, DELTA, noise=noise, seed=args.seed)
        fit = desync.fit_f([r[:6] for r in rows], DELTA)
        print(f"noise {noise / US:6.0f} µs: fitted f = {fit} ({time.perf_counter() - t0:.0f} s)", flush=True)
        runs.append({"noise_s": noise, "rows": [list(r) for r in rows]})
        write_json(args.json, doc)                                         # after every level
        print(f"wrote {args.json}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main, "desync_experiment.py"))
