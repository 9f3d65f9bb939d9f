"""Ctrl-C at a random moment of a command's first second: what does the user see?

    python benchmarks/ctrl_c_at_start.py [--runs 40] [--within 1.0]

Starts each command-line tool of the kit (the course tools on a folder that is not a course,
so they end by themselves after loading; ``python -m netmodels simulate`` on a long run),
sends SIGINT to its process group after a uniform random delay, and sorts what came out:
``one line`` (the kit's line, status 130), ``ended first`` (the tool had ended on its own),
``quiet`` (killed by the signal before Python's handler or the kit's was in place: no output),
``python's start`` (a traceback from Python's own start-up: ``site``, the compilation of the
script, no frame of the kit's code executed), ``kit traceback`` (a traceback through a line of
the kit's code: a defect).  Prints one row per tool and the load.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mpi_exercises.bench.arguments import float_in, positive_int  # noqa: E402
from netmodels.commandline import OneLineParser  # noqa: E402

KINDS = ("one line", "ended first", "quiet", "python's start", "kit traceback")


def commands(nowhere: str) -> dict:
    py = sys.executable
    return {
        "labs/grade.py": [py, str(ROOT / "labs" / "grade.py"), "--course", nowhere],
        "labs/class_report.py": [py, str(ROOT / "labs" / "class_report.py"), "--lab", "lab1", "--course", nowhere],
        "mpi_exercises.labdata": [py, "-m", "mpi_exercises.labdata", "--help"],
        "netmodels simulate": [py, "-m", "netmodels", "simulate", "allreduce.ring", "-P", "2^15", "--model", "loggp"],
    }


def kind(status: int, err: str) -> str:
    """Which of :data:`KINDS` a run's exit status and standard error are."""
    if "Traceback" in err or "Fatal Python error" in err or err.strip() == "KeyboardInterrupt":
        kit_frames = [line for line in re.findall(r'File "([^"]+)", line (\d+)', err)
                      if line[0].startswith(str(ROOT)) and "site-packages" not in line[0] and line[1] != "0"]
        start = "Fatal Python error: init_import_site" in err
        return "kit traceback" if kit_frames and not start else "python's start"
    if status == 130 and "interrupted (Ctrl-C)" in err and len(err.splitlines()) == 1:
        return "one line"
    if status == -signal.SIGINT and not err:
        return "quiet"
    return "ended first"


def main(argv=None) -> int:
    p = OneLineParser(prog="ctrl_c_at_start.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=positive_int, default=40, help="Ctrl-Cs per tool (default %(default)s)")
    p.add_argument("--within", type=float_in(0, 60, "seconds", low_inclusive=False), default=1.0,
                   help="latest delay, s (default %(default)s)")
    args = p.parse_args(argv)
    seen, examples = {}, {}
    with tempfile.TemporaryDirectory() as nowhere:
        todo = commands(str(Path(nowhere) / "not-a-course"))
        for _ in range(args.runs):
            for name, cmd in todo.items():          # interleaved: every tool sees the same load
                proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        start_new_session=True, text=True)
                try:
                    proc.wait(random.uniform(0.0, args.within))
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGINT)
                err = proc.communicate(timeout=30)[1]
                k = kind(proc.returncode, err)
                seen.setdefault(name, Counter())[k] += 1
                examples.setdefault(k, err)
    print(f"{'tool':24}" + "".join(f"{k:>16}" for k in KINDS))
    for name, counts in seen.items():
        print(f"{name:24}" + "".join(f"{counts[k]:>16}" for k in KINDS))
    if "kit traceback" in examples:
        print("a kit traceback:\n" + examples["kit traceback"][-1500:])
    print(f"{args.runs} Ctrl-Cs per tool, uniform in [0, {args.within}] s; load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
