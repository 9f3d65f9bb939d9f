"""Ctrl-C on ``python -m mpi_exercises``: one line saying what was kept, exit status 130.

The launchers forward SIGINT to every rank (Hydra's ``mpiexec`` and ``srun`` alike).  A rank
may then be anywhere, also inside a blocking MPI call that waits for a partner that has
already stopped: Python runs its signal handlers only between bytecodes of the main thread,
so a ``KeyboardInterrupt`` would never come, and the rank would wait for ever.  Dying by the
signal itself does end it, but Hydra then prints an 11-line "BAD TERMINATION" banner.

So :func:`install` makes SIGINT wake a thread of its own instead (``signal.set_wakeup_fd``:
the C-level handler writes to a pipe at once, wherever the main thread is; mpi4py releases
the GIL inside MPI calls, so the thread runs).  That thread waits for a result file being
written to be complete (at most :data:`WRITE_GRACE_S`; :mod:`netmodels.outputs` writes
atomically, so an existing file is never half-replaced), prints one line on the first rank
(:func:`netmodels.commandline.interrupted`: what was kept) and ends the process with status
130, without MPI_Finalize, :data:`TOGETHER_S` after the signal on every rank: a launcher ends
the job quietly when its ranks exit so together.  What MPI_Finalize would have removed, the
job's shared-memory files, each rank removes itself (:func:`unlink_shared_memory`).
Hydra's own two lines on receiving Ctrl-C ("Sending Ctrl-C to processes as requested") are
the launcher's, not the kit's.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

from netmodels import outputs
from netmodels.commandline import INTERRUPTED, interrupted

#: seconds a Ctrl-C waits for a result file being written to be complete
WRITE_GRACE_S = 5.0
#: seconds after its Ctrl-C every rank ends (the launcher forwards it to all at once): they
#: end together, after the first rank has spoken.  Hydra ends the job when one rank ends: a
#: rank that ended early cut the first rank's line off, one that ended late was killed, with
#: Hydra's banner
TOGETHER_S = 0.25


#: the path prefix of MPICH's shared-memory files (one per job and node)
SHARED_MEMORY = "/dev/shm/mpich_shm_"

#: set when this rank has received its Ctrl-C (its watcher thread then ends the process)
RECEIVED = threading.Event()

#: what the line names: the command and its result file (:func:`install`, :func:`name`)
_COMMAND = {"prog": "python -m mpi_exercises", "path": None}


def install(speaks: bool) -> None:
    """From now on, SIGINT ends this process with one line (if ``speaks``: the rank that
    reports) and exit status :data:`~netmodels.commandline.INTERRUPTED`.  Main thread only."""
    read, write = os.pipe()
    os.set_blocking(write, False)
    signal.signal(signal.SIGINT, lambda signum, frame: None)      # the thread below does the work
    signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    threading.Thread(target=_watch, args=(read, speaks), name="ctrl-c", daemon=True).start()


def name(prog: str, path) -> None:
    """The command the line names (``prog``) and its result file (``path``; None: none)."""
    _COMMAND.update(prog=prog, path=path)


def received(within: float) -> bool:
    """Whether this rank has received a Ctrl-C, waiting up to ``within`` s for it.  An MPI
    call that failed because its partner already ended on its own Ctrl-C is not a failure:
    the caller leaves the ending to this module (:func:`end_here`)."""
    return RECEIVED.wait(within)


def end_here() -> None:
    """Wait for the watcher thread to end the process (after a Ctrl-C: :func:`received`)."""
    time.sleep(WRITE_GRACE_S + TOGETHER_S + 5.0)
    os._exit(INTERRUPTED)


def unlink_shared_memory() -> None:
    """Remove the MPI library's shared-memory files that this process has mapped (MPICH's
    :data:`SHARED_MEMORY` files, the ranks' exchange area on a node).  MPI_Finalize removes
    them; a rank that ends without it leaves each in memory (2 MB a job here) until the
    machine restarts.  The ranks' mappings stay valid; no file (no /proc): nothing to do."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as f:
            paths = {fields[5].strip() for fields in (line.split(None, 5) for line in f) if len(fields) == 6}
    except OSError:
        return
    for path in paths:
        if path.startswith(SHARED_MEMORY):
            try:
                os.unlink(path)
            except OSError:          # removed by another rank of the job already
                pass


def _watch(read: int, speaks: bool) -> None:
    while os.read(read, 1) != bytes([signal.SIGINT]):
        pass
    RECEIVED.set()
    end = time.monotonic() + TOGETHER_S
    if not outputs.WRITING.acquire(timeout=WRITE_GRACE_S):    # a write that hangs: drop it, keep the old file
        outputs.discard_partial()
    line = interrupted(_COMMAND["prog"], _COMMAND["path"])
    if speaks:
        try:
            print(line, file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass
    unlink_shared_memory()
    time.sleep(max(0.0, end - time.monotonic()))
    os._exit(INTERRUPTED)
