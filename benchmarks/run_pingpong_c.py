"""Run the C ping-pong on 2 ranks and store its JSON with the command, date, load and
the α-β fit (the same relative least squares as the Python ping-pong).

    python benchmarks/run_pingpong_c.py BINARY OUT.json   (what ``make pingpong-c`` runs)
"""

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path


def main(argv) -> int:
    if len(argv) != 2:
        print("usage: run_pingpong_c.py BINARY OUT.json", file=sys.stderr)
        return 2
    binary, out = argv
    mpiexec = str(Path(sys.executable).with_name("mpiexec"))
    cmd = [mpiexec, "-n", "2", binary]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if res.returncode != 0:
        print(res.stderr, file=sys.stderr)
        return res.returncode
    data = json.loads(res.stdout)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from mpi_exercises.bench import core as _bench
    from mpi_exercises.bench.pingpong import fit

    cores = _bench.usable_cores()
    data.update({"command": "make pingpong-c (mpiexec -n 2 " + Path(binary).name + ")",
                 "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                 "ranks": 2, "cores": cores, "oversubscribed": cores < 2, "load_average_1min": load,
                 "fit": fit(data["results"]), "fit_min": fit(data["results"], "min_s")})
    Path(out).write_text(json.dumps(data, indent=1) + "\n")
    f = data["fit_min"]["alpha_beta"]
    print(f"C ping-pong: alpha = {f['alpha_s'] * 1e6:.3f} µs, 1/beta = {1e-6 / f['beta_s_per_byte']:.0f} MB/s "
          f"(fit to the minima); written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
