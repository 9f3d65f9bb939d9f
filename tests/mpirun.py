"""Launch ``mpiexec -n P`` from tests under a timeout, so a deadlock fails instead of hanging."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def mpiexec_path() -> str:
    """The mpiexec next to this Python (the venv's MPICH wheel), else the one on PATH."""
    local = Path(sys.executable).parent / "mpiexec"
    found = str(local) if local.exists() else shutil.which("mpiexec")
    if not found:
        raise RuntimeError("no mpiexec found: install requirements.txt (mpich wheel) or a system MPI")
    return found


def run_mpi(nprocs: int, args: list[str], *, timeout: float = 60, cwd=None) -> subprocess.CompletedProcess:
    """Run ``mpiexec -n nprocs python ARGS`` and return the completed process.

    Raises ``subprocess.TimeoutExpired`` (after killing the whole job) if it takes
    longer than ``timeout`` seconds.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("MPLBACKEND", "Agg")
    cmd = [mpiexec_path(), "-n", str(nprocs), sys.executable, *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=cwd or ROOT, env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
        raise subprocess.TimeoutExpired(cmd, timeout, output=out, stderr=err) from None
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def run_mpi_ok(nprocs: int, args: list[str], *, timeout: float = 60, cwd=None) -> subprocess.CompletedProcess:
    """Like :func:`run_mpi` but fail the test (with both streams) unless the exit status is 0."""
    res = run_mpi(nprocs, args, timeout=timeout, cwd=cwd)
    assert res.returncode == 0, (f"{' '.join(res.args)} exited {res.returncode}\n"
                                 f"--- stdout\n{res.stdout}\n--- stderr\n{res.stderr}")
    return res


def finish_sweep(comm, failures: list[str], ok: str, failed: str) -> None:
    """End a driver run under mpiexec: every rank's failures, once each, printed on rank 0,
    else the line ``ok``; then ``failed`` if any; exit status 1 if any, else 0 (collective)."""
    failures = list(dict.fromkeys(f for per_rank in comm.allgather(failures) for f in per_rank))
    if comm.Get_rank() == 0:
        print("\n".join(failures) if failures else ok, flush=True)
        if failures:
            print(failed, flush=True)
    sys.exit(1 if failures else 0)
