"""Launch ``mpiexec -n P`` from tests under a timeout, so a deadlock fails instead of hanging."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent


def mpiexec_path() -> str:
    """The mpiexec next to this Python (the venv's MPICH wheel), else the one on PATH."""
    local = Path(sys.executable).parent / "mpiexec"
    found = str(local) if local.exists() else shutil.which("mpiexec")
    if not found:
        raise RuntimeError("no mpiexec found: install requirements.txt (mpich wheel) or a system MPI")
    return found


#: The environment of a job that checks results, never timings: MPICH's ranks that wait for a
#: message sleep (nanosleep) instead of calling sched_yield.  Oversubscribed beside other work (a
#: test suite on 2 cores), yielding ranks spend their share in the kernel: the 4-rank sweep of
#: tests/allreduce_sweep.py beside one busy process took 6.0 to 6.6 s and 10.5 CPU-s yielding,
#: 5.4 s and 5.0 CPU-s sleeping; the 15 Ctrl-C tests took 35.9 busy CPU-s, 13.6 sleeping.
#: Alone it is slower (1.8 s against 3.7 s), and a waiting rank's sleep would show in any latency
#: measured, so the benchmarks' tests keep MPICH's default.  Other MPIs ignore the variable.
SLEEP_WHILE_WAITING = {"MPIR_CVAR_ENABLE_HEAVY_YIELD": "1"}


def run_mpi(nprocs: int, args: list[str], *, timeout: float = 60, cwd=None,
            sleep_while_waiting: bool = False) -> subprocess.CompletedProcess:
    """Run ``mpiexec -n nprocs python ARGS`` and return the completed process.

    ``sleep_while_waiting``: for a job that checks results only (:data:`SLEEP_WHILE_WAITING`).
    Raises ``subprocess.TimeoutExpired`` (after killing the whole job, :func:`kill_job`)
    if it takes longer than ``timeout`` seconds.
    """
    env = dict(os.environ, **(SLEEP_WHILE_WAITING if sleep_while_waiting else {}))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("MPLBACKEND", "Agg")
    cmd = [mpiexec_path(), "-n", str(nprocs), sys.executable, *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=cwd or ROOT, env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_job(proc)
        out, err = proc.communicate()
        raise subprocess.TimeoutExpired(cmd, timeout, output=out, stderr=err) from None
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def kill_job(proc: subprocess.Popen, wait: float = 10) -> None:
    """Kill a launcher started with ``start_new_session=True`` and every process under it,
    then wait up to ``wait`` seconds until none runs.  Its process group alone is not
    enough: Hydra starts each rank in a session of its own.  The ranks' shared-memory files,
    which killed ranks cannot remove, are removed."""
    try:
        procs = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        procs = []
    shared = _shared_memory(procs)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    for p in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and any(running(p) for p in procs):
        time.sleep(0.05)
    for path in shared:
        with contextlib.suppress(OSError):
            os.unlink(path)


def wait_for_ranks(proc: subprocess.Popen, nprocs: int, marker: str, timeout: float = 20) -> list[psutil.Process]:
    """Wait until ``nprocs`` processes under the launcher ``proc`` have ``marker`` in their
    command line and ``mpi4py.MPI`` imported (:func:`_has_mpi`: they are past their
    start-up and inside the command, whose first act is to take over Ctrl-C); fail the test if
    they have not within ``timeout`` seconds (a loaded machine starts slowly).  The ranks."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            ranks = [p for p in psutil.Process(proc.pid).children(recursive=True)
                     if marker in " ".join(p.cmdline())]
        except psutil.Error:
            ranks = []
        if len(ranks) >= nprocs:
            if not hasattr(psutil.Process, "memory_maps"):   # macOS: no maps to read, so one second
                time.sleep(1)                                # for the ranks to be past their start-up
                return ranks
            if all(_has_mpi(p) for p in ranks):
                return ranks
        time.sleep(0.05)
    raise AssertionError(f"{nprocs} ranks running {marker!r} did not start MPI within {timeout} s")


def _has_mpi(p: psutil.Process) -> bool:
    """Whether the process ``p`` has imported ``mpi4py.MPI`` (its extension module ``MPI.*``,
    which links the MPI library, is mapped): whatever the MPI, the wheel's or a system's."""
    try:
        return any(Path(m.path).name.startswith("MPI.") for m in p.memory_maps())
    except psutil.Error:
        return False


@contextlib.contextmanager
def sigint_at_default():
    """While it lasts, a child started inherits SIGINT at its default, as a terminal starts a
    foreground job: a suite started in the background by a script (``pytest ... &``, ``make
    test`` from one) ignores SIGINT, and its children would inherit that (a Python handler is
    reset to the default in the child; SIG_IGN is not), so that a make or a shell they start
    would never see a Ctrl-C."""
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def interrupt_job(cmd: list[str], after_s: float, ranks: int = 0,
                  group: bool = True) -> tuple[subprocess.CompletedProcess, float]:
    """Start ``cmd`` in a session of its own and send it SIGINT ``after_s`` seconds after it
    started (after its ``ranks`` started, if ``cmd`` is a launcher): to its whole process
    group (``group``: what a terminal does on Ctrl-C), else to the launcher alone (which
    forwards it to the ranks).  The finished process and how long it took to end; a test
    failure if it still runs 10 s after the signal, or if a shared-memory file its ranks had
    mapped is left behind.  Its ranks sleep while waiting
    (:data:`SLEEP_WHILE_WAITING`): what is checked is how they end, not how fast they run."""
    import pytest

    with sigint_at_default():
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True,
                                env={**os.environ, **SLEEP_WHILE_WAITING, "PYTHONPATH": str(ROOT)})
    started = wait_for_ranks(proc, ranks, "mpi_exercises") if ranks else []
    time.sleep(after_s)
    assert proc.poll() is None, f"{cmd} ended before Ctrl-C: make it longer"
    shared = _shared_memory(started)
    if group:
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGINT)
    start = time.monotonic()
    try:
        stdout, stderr = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        kill_job(proc)
        pytest.fail(f"still running 10 s after Ctrl-C: {cmd}")
    took = time.monotonic() - start
    left = [path for path in shared if os.path.exists(path)]
    assert not left, f"the ranks' shared memory outlived them (in memory until a restart): {left}"
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr), took


def _shared_memory(ranks: list[psutil.Process]) -> set[str]:
    """MPICH's shared-memory files (:data:`mpi_exercises.interrupt.SHARED_MEMORY`) that ``ranks``
    have mapped."""
    from mpi_exercises.interrupt import SHARED_MEMORY

    found = set()
    for p in ranks:
        try:
            found |= {m.path for m in p.memory_maps() if m.path.startswith(SHARED_MEMORY)}
        except (psutil.Error, AttributeError):     # ended, or no maps to read (macOS)
            pass
    return found


def running(p: psutil.Process) -> bool:
    """Whether ``p`` has not ended.  A process that has ended stays a zombie until its parent
    reaps it; a daemon's parent is the system's first process, which may take seconds (2 s
    on a machine whose first process is not an init)."""
    try:
        return p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def run_mpi_ok(nprocs: int, args: list[str], *, timeout: float = 60, cwd=None,
               sleep_while_waiting: bool = False) -> subprocess.CompletedProcess:
    """Like :func:`run_mpi` but fail the test (with both streams) unless the exit status is 0."""
    res = run_mpi(nprocs, args, timeout=timeout, cwd=cwd, sleep_while_waiting=sleep_while_waiting)
    assert res.returncode == 0, (f"{' '.join(res.args)} exited {res.returncode}\n"
                                 f"--- stdout\n{res.stdout}\n--- stderr\n{res.stderr}")
    return res


_SWEEP_COMMS: list = []   # set by tests/by_size.py while it runs a driver


def sweep_comm():
    """The communicator a driver checks: the one ``tests/by_size.py`` gives it (the world's
    first P ranks), else ``COMM_WORLD``."""
    from mpi4py import MPI

    return _SWEEP_COMMS[-1] if _SWEEP_COMMS else MPI.COMM_WORLD


def refused_on_every_rank(comm, call) -> bool:
    """Whether ``call()`` raised a ValueError on every rank of ``comm`` (collective: the ranks
    compare after the call, whatever it did on each)."""
    from mpi4py import MPI

    try:
        call()
        raised = False
    except ValueError:
        raised = True
    return comm.allreduce(raised, op=MPI.LAND)


def sections_by_size(stdout: str) -> dict[int, str]:
    """The output of a ``tests/by_size.py`` job, by number of ranks: each run's lines and its
    closing ``exit N`` line."""
    out, size = {}, None
    for line in stdout.splitlines():
        if line.startswith("--- ") and line.endswith(" ranks"):
            size = int(line.split()[1])
            out[size] = ""
        elif size is not None:
            out[size] += line + "\n"
    return out


def run_by_size(sizes: list[int], driver: list[str], ok: str, *, timeout: float) -> dict[int, str]:
    """Run the driver ``python DRIVER`` once per number of ranks of ``sizes`` in one job
    (``tests/by_size.py`` under ``mpiexec -n max(sizes)``, ranks sleeping while they wait)
    and fail the test unless every run exited 0 with the line ``ok`` (a prefix) in its
    output; return each run's output by number of ranks."""
    res = run_mpi(max(sizes), ["-m", "tests.by_size", ",".join(map(str, sizes)), *driver], timeout=timeout,
                  sleep_while_waiting=True)
    runs = sections_by_size(res.stdout)
    bad = [p for p in sizes if not (runs.get(p, "").endswith("exit 0\n")
                                    and any(line.startswith(ok) for line in runs[p].splitlines()))]
    assert res.returncode == 0 and sorted(runs) == sorted(sizes) and not bad, (
        f"{' '.join(res.args)} exited {res.returncode}; runs not ok: {bad}\n--- stdout\n{res.stdout}"
        f"\n--- stderr\n{res.stderr[-3000:]}")
    return runs


def finish_sweep(comm, failures: list[str], ok: str, failed: str) -> None:
    """End a driver run under mpiexec: every rank's failures, once each, printed on rank 0,
    else the line ``ok``; then ``failed`` if any; exit status 1 if any, else 0 (collective)."""
    failures = list(dict.fromkeys(f for per_rank in comm.allgather(failures) for f in per_rank))
    if comm.Get_rank() == 0:
        print("\n".join(failures) if failures else ok, flush=True)
        if failures:
            print(failed, flush=True)
    sys.exit(1 if failures else 0)
