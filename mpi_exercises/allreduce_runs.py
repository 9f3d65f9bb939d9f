"""Lab 2's ``allreduce.json``, the one data file no benchmark writes by itself: ten runs of
``python -m mpi_exercises allreduce`` (Tree, ring, and Snake and Fence with four block sizes,
N = 10^5 doubles, on 4 ranks), each the JSON that command writes, collected as ``{"runs":
[...]}``.  :func:`measure_allreduce_runs` starts ``mpiexec`` once per run; its command line is
``python -m mpi_exercises.labdata allreduce-runs``.  Importing this module does not start MPI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: lab 2's runs: (algorithm, block size in elements or None), N = 10^5 doubles on 4 ranks
ALLREDUCE_CASES = (("tree", None), ("ring", None)) + tuple(
    (algorithm, block) for algorithm in ("snake", "fence") for block in (1000, 3000, 10_000, 30_000))


def mpiexec() -> str:
    """The ``mpiexec`` next to this Python (the kit's environment), else the first on PATH."""
    here = Path(sys.executable).with_name("mpiexec")
    return str(here) if here.exists() else (shutil.which("mpiexec") or "mpiexec")


def under_launcher(env=None) -> bool:
    """True when this process is itself a rank started by ``mpiexec`` or ``srun``."""
    env = os.environ if env is None else env
    return any(k in env for k in ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_PROCID"))


def _kill_job(proc: subprocess.Popen) -> None:
    """Stop a launcher started in a session of its own and every process under it (Hydra
    starts each rank in a session of its own, so its process group alone is not enough)."""
    import signal

    try:
        import psutil

        children = psutil.Process(proc.pid).children(recursive=True)
    except Exception:                      # no psutil, or the launcher is gone
        children = []
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    for child in children:
        try:
            child.kill()
        except Exception:
            pass
    proc.communicate()


#: seconds a job given a Ctrl-C has to end by itself before it is killed
INTERRUPT_GRACE_S = 3.0


def _interrupt_job(proc: subprocess.Popen) -> None:
    """Pass a Ctrl-C on to a launcher started in a session of its own: its ranks end as on a
    Ctrl-C of their own (:mod:`mpi_exercises.interrupt`: MPI's shared memory removed); what
    still runs after :data:`INTERRUPT_GRACE_S` is killed."""
    import signal

    try:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=INTERRUPT_GRACE_S)
    except subprocess.TimeoutExpired:
        _kill_job(proc)


def measure_allreduce_runs(path="allreduce.json", ranks: int = 4, nelems: int = 100_000,
                           cases=ALLREDUCE_CASES, repeat: int = 20, timeout: float = 900, echo=print) -> int:
    """Lab 2's ``allreduce.json``: one ``mpiexec -n ranks python -m mpi_exercises allreduce
    --algorithm A -N nelems [--block B] --repeat repeat --json ...`` per case of ``cases``,
    each run's JSON kept whole, written to ``path`` as ``{"runs": [...]}`` once every run
    succeeded (an existing file is left as it was otherwise).  ``echo`` gets each run's first
    line.  Returns 0, or 1 with one line on stderr naming the run that failed; a Ctrl-C stops
    the run under way (its whole job) and raises KeyboardInterrupt."""
    from netmodels.outputs import output_problem, write_json

    why = output_problem(path)
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 1
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for algorithm, block in cases:
            out = Path(tmp) / "run.json"
            argv = [mpiexec(), "-n", str(ranks), sys.executable, "-m", "mpi_exercises", "allreduce",
                    "--algorithm", algorithm, "-N", str(nelems), "--repeat", str(repeat), "--json", str(out)]
            if block:
                argv += ["--block", str(block)]
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    start_new_session=True)
            try:
                stdout, stderr = proc.communicate(timeout=timeout)
            except KeyboardInterrupt:       # Ctrl-C: the job, in a session of its own, is ended too
                _interrupt_job(proc)
                raise
            except subprocess.TimeoutExpired:
                _kill_job(proc)
                print(f"error: {' '.join(argv[3:])} did not finish within {timeout:g} s and was stopped; "
                      f"{path} was not written", file=sys.stderr)
                return 1
            lines = stdout.strip().splitlines()
            if proc.returncode != 0 or not out.exists():
                last = (stderr.strip().splitlines() or lines or ["no output"])[-1]
                print(f"error: {' '.join(argv[3:])} exited with status {proc.returncode} ({last}); "
                      f"{path} was not written", file=sys.stderr)
                return 1
            case = f"{algorithm}, block {block}" if block else algorithm     # the run's own line names no block
            echo(f"{case}: {lines[0]}" if lines else f"{case}: done")
            runs.append(json.loads(out.read_text()))
    write_json(path, {"runs": runs})
    echo(f"{len(runs)} runs written to {path}")
    return 0
