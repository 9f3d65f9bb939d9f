"""Barrier and allreduce algorithms from P = 2 to 2^20 under α-β, LogGP and NBL: the data of
the chapter "Simulating at scale".

    python benchmarks/scale_sweep.py --json book/data/scale_reference.json

Runs :func:`netmodels.figures.scale_plots.sweep` (the vectorised simulator; several
minutes, most of them at P = 2^18 and 2^20) and stores its rows with the wall-clock time
of every simulation (machine-dependent: a shared 2-core machine when stored).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from netmodels.commandline import OneLineParser, run_script  # noqa: E402
from netmodels.figures import scale_plots  # noqa: E402
from netmodels.outputs import provenance, write_json  # noqa: E402


def main(argv=None) -> int:
    p = OneLineParser(prog="scale_sweep.py", description=__doc__.splitlines()[0])
    p.add_argument("--json", default=str(ROOT / "book" / "data" / "scale_reference.json"))
    args = p.parse_checked(argv)
    show = lambda r: print(f"{r['collective']:>9} {r['algorithm']:>18} P={r['P']:<8} {r['model']:<13} "  # noqa: E731
                           f"{r['time_s'] * 1e6:12.2f} µs  ({r['wall_s']:.1f} s)", flush=True)
    rows = scale_plots.sweep(progress=show)
    doc = {**provenance(__file__, argv), "nelems": scale_plots.NELEMS, "elem_bytes": scale_plots.ELEM_BYTES, "rows": rows}
    write_json(args.json, doc)
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main, "scale_sweep.py"))
