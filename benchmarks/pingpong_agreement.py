"""Do several ping-pong runs agree?  α and β of each run (JSON of ``python -m mpi_exercises
pingpong``: the kit's one fit of its minima, ``pingpong.file_fit``) with their 95 % intervals and
the load it ran under, and per parameter the largest relative difference between two runs,
against a tolerance.

    mpiexec -n 2 python -m mpi_exercises pingpong --json results/pp1.json
    mpiexec -n 2 python -m mpi_exercises pingpong --json results/pp2.json
    python benchmarks/pingpong_agreement.py results/pp1.json results/pp2.json

Exit status 0 if α and β agree within ``--tolerance`` (default 5 %), 1 if not.  An interval
(least squares: estimate ± t(0.975, sizes - 2) standard errors) says how closely one run's
minima determine its α and β; separate launches can differ by more (other cores, other jobs):
this script is the check across launches.  A file recording a fit of an earlier kit (on the
medians, or intervals of an earlier method) is fitted again from its results, as every
reader of a measured file does, and says so.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from netmodels.commandline import OneLineParser  # noqa: E402


def load_text(data: dict) -> str:
    """The 1-minute load average a run recorded, as text."""
    load = data.get("load_average_1min")
    return "not recorded" if load is None else f"{load:.2f}"


def main(argv=None) -> int:
    from mpi_exercises.bench.arguments import float_in
    from mpi_exercises.bench.pingpong import agreement, file_fit

    p = OneLineParser(prog="pingpong_agreement.py", description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", metavar="JSON", help="two or more JSON files of the ping-pong")
    p.add_argument("--tolerance", type=float_in(0, 1, "a fraction", low_inclusive=False), default=0.05,
                   help="largest relative difference that counts as agreeing (default 0.05)")
    args = p.parse_args(argv)
    if len(args.runs) < 2:
        p.error("give at least two runs to compare")
    runs = []
    for path in args.runs:
        try:
            data = json.loads(Path(path).read_text())
            f, how = file_fit(data)
            runs.append((path, data, f, how))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            p.error(f"{path}: not a ping-pong JSON with results to fit ({type(exc).__name__}: {exc})")
    table = agreement([f for _, _, f, _ in runs])
    for path, data, f, how in runs:
        ci_a, ci_b = f.get("alpha_ci_s"), f.get("beta_ci_s_per_byte")
        print(f"{path}: alpha {f['alpha_s'] * 1e6:.3f} µs"
              + (f" [{ci_a[0] * 1e6:.3f}, {ci_a[1] * 1e6:.3f}]" if ci_a else "")
              + f", beta {f['beta_s_per_byte'] * 1e9:.4f} ns/B"
              + (f" [{ci_b[0] * 1e9:.4f}, {ci_b[1] * 1e9:.4f}]" if ci_b else "")
              + f"; {(data.get('environment') or {}).get('date', 'date not recorded')}, load {load_text(data)}"
              + (", OVERSUBSCRIBED" if data.get("oversubscribed") else "")
              + ("; fitted again from its results (its record is of an earlier kit)" if how == "recomputed" else ""))
    print("intervals: 95 %, least squares on the minima (estimate ± t(0.975, sizes - 2) standard errors): "
          "how closely one run's minima pin its line down")
    ok = True
    for key, name in (("alpha_s", "alpha"), ("beta_s_per_byte", "beta")):
        spread = table[key]["spread"]
        ok &= spread <= args.tolerance
        print(f"{name}: runs differ by up to {100 * spread:.1f} % "
              f"({'within' if spread <= args.tolerance else 'MORE than'} {100 * args.tolerance:g} %)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
