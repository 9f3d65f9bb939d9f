"""The grading processes: started, watched, stopped and reaped (``grade.py`` runs them).

Each step of grading a submission (``nbgrader autograde``, the run for the feedback page) runs
in a process of its own (:class:`Watched`), in a session of its own, under a wall-clock limit;
:func:`run_all` runs the steps of several submissions side by side from one thread and, on
Ctrl-C or an error, kills every process they started.  Their ``nbgrader`` opens the gradebook
on :func:`gradebook_url`, which holds ``gradebook.db``'s lock from opening to closing, so that
the processes take it in turn (:class:`GradebookLock`).
"""

from __future__ import annotations

import os
import signal
import sys
import time
import weakref
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import event
from sqlalchemy.dialects import plugins as engine_plugins
from sqlalchemy.engine import CreateEnginePlugin

import grading_sandbox

# ---------------------------------------------------------------- the gradebook, one process at a time
#: the SQLAlchemy plugin, named in the gradebook's URL, that holds the gradebook's lock
PLUGIN = "kit_gradebook_lock"
_HOLD = {"depth": 0, "fd": -1}   # this process's hold on the gradebook's lock


def gradebook_url(course: Path) -> str:
    """The URL on which a ``Gradebook`` of ``course`` holds its lock while open (SQLAlchemy's
    ``plugin`` parameter: :class:`GradebookLock`); nbgrader takes it as ``CourseDirectory.db_url``."""
    return f"sqlite:///{quote(str(Path(course).resolve() / 'gradebook.db'))}?plugin={PLUGIN}"


class GradebookLock(CreateEnginePlugin):
    """Holds the gradebook's lock (:func:`_hold`) from the creation of a ``Gradebook``'s
    engine to its disposal, which is ``Gradebook.close``.

    nbgrader names its ``Gradebook`` in every module that opens one (``from ..api import
    Gradebook``), so a subclass would have to replace that name in each of them; the URL reaches
    all of them through ``CourseDirectory.db_url`` instead.  SQLite lets one writer in at a time
    and makes a second wait at most a few seconds (or fails at once where two readers both want
    to write); nbgrader opens the gradebook around each of its steps, never while a notebook
    runs, so submissions still run side by side.
    """

    def update_url(self, url):
        """The URL as given (the ``plugin`` parameter is already taken out of it)."""
        return url

    def engine_created(self, engine) -> None:
        """Take the lock; give it back once, when the engine is disposed (or, if ``Gradebook``
        failed to open, collected)."""
        _hold(Path(engine.url.database))
        held = [True]

        def release(*_):
            if held.pop() if held else False:
                _release()

        event.listen(engine, "engine_disposed", release)
        weakref.finalize(engine, release)


engine_plugins.register(PLUGIN, __name__, "GradebookLock")


def _hold(path: Path) -> None:
    """Take the advisory lock (``flock``, which SQLite's own locks ignore) on the file ``path``,
    waiting for other processes; reentrant within a process."""
    if _HOLD["depth"] == 0:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            import fcntl
        except ImportError:       # no flock (Windows): grade.py grades one submission at a time
            pass
        else:
            fcntl.flock(fd, fcntl.LOCK_EX)
        _HOLD["fd"] = fd
    _HOLD["depth"] += 1


def _release() -> None:
    """Give back one hold taken by :func:`_hold`; the last one releases the lock."""
    _HOLD["depth"] -= 1
    if _HOLD["depth"] == 0:
        os.close(_HOLD["fd"])          # closing the file releases the lock


def open_gradebook(course: Path):
    """``course``'s gradebook (an nbgrader ``Gradebook``, to close or use in ``with``), holding
    its lock until closed."""
    from nbgrader.api import Gradebook

    return Gradebook(gradebook_url(course))


def nbgrader(argv: list[str], course: Path) -> None:
    """``nbgrader ARGV`` in this process, its gradebook opened on :func:`gradebook_url`."""
    from nbgrader.apps.nbgraderapp import NbGraderApp

    NbGraderApp.launch_instance(argv=[*argv, f"--CourseDirectory.db_url={gradebook_url(course)}"])


# ---------------------------------------------------------------- one grading process
def _child(target, args, course: Path, env: dict, logfile: Path, append: bool) -> None:
    """Body of a grading process: its own session, the course as working folder, ``env`` as
    environment, stdout and stderr to ``logfile``; then ``target(*args)``."""
    if hasattr(os, "setsid"):
        os.setsid()
    if hasattr(signal, "pthread_sigmask"):      # out of the terminal's process group: Ctrl-C is the parent's
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    os.chdir(course)
    os.environ.clear()
    os.environ.update(env)
    grading_sandbox.hold_grader()
    fd = os.open(logfile, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC), 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    target(*args)
    sys.stdout.flush()
    sys.stderr.flush()


def _processes():
    """How grading processes are made: forked from this one where it can (Linux), so that
    nbgrader and nbconvert, imported once here, are not imported again for every submission
    (about 1.5 s each); else started afresh (spawn)."""
    import multiprocessing

    if sys.platform == "linux":
        import grading_preprocessors  # noqa: F401 (imported before the forks: see above)
        import nbgrader.apps.nbgraderapp  # noqa: F401
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


class Watched:
    """``target(*args)`` in a grading process (:func:`_child`) under the wall-clock limit
    ``timeout`` (seconds); :meth:`poll` says how it ended ('graded' if with exit status 0)."""

    def __init__(self, target, args, course: Path, env: dict, timeout: float, logfile: Path,
                 append: bool = False):
        self.target, self.args, self.course, self.env = target, args, course, env
        self.timeout, self.logfile, self.append = timeout, logfile, append
        self.proc = None

    def start(self) -> None:
        """Start the process; the wall-clock limit runs from now."""
        sys.stdout.flush()
        sys.stderr.flush()
        self.proc = _processes().Process(target=_child, args=(self.target, self.args, self.course, self.env,
                                                              self.logfile, self.append))
        # the child takes no Ctrl-C of the terminal's before it has left its process group (_child)
        blocked = hasattr(signal, "pthread_sigmask")
        if blocked:
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self.proc.start()
        finally:
            if blocked:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        self.deadline, self.groups = time.monotonic() + self.timeout, {self.proc.pid}

    @property
    def sentinel(self):
        """What :func:`multiprocessing.connection.wait` waits on: ready when the process ends."""
        return self.proc.sentinel

    def poll(self) -> str | None:
        """None while it runs, else its status; every process group it made is then killed."""
        if self.proc.exitcode is not None:
            status = "graded" if self.proc.exitcode == 0 else "autograde failed"
        elif time.monotonic() > self.deadline:
            _kill_groups(self.groups | _process_groups(self.proc.pid))
            status = f"stopped after {self.timeout:.0f} s"
        else:
            self.groups |= _process_groups(self.proc.pid)
            return None
        self.proc.join()
        _kill_groups(self.groups)
        return status

    def stop(self) -> None:
        """Kill it now, with every process group it made (the batch is stopped)."""
        if self.proc is None or self.proc.pid is None:     # not started
            return
        self.groups |= _process_groups(self.proc.pid)
        self.proc.kill()
        _kill_groups(self.groups)
        self.proc.join()


def _process_groups(pid: int) -> set[int]:
    """Process groups of the descendants of ``pid`` (not ours)."""
    import psutil

    found = set()
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return found
    for child in children:
        try:
            found.add(os.getpgid(child.pid))
        except OSError:
            pass
    return found - {os.getpgrp()}


def _kill_groups(groups) -> None:
    """SIGKILL to each process group of ``groups`` (gone ones are skipped)."""
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except OSError:
            pass


# ---------------------------------------------------------------- the batch
def run_all(tasks, jobs: int, done) -> None:
    """Run the generators ``tasks`` (pairs of a key and a generator of :class:`Watched`, as
    ``grade.grade_submission``), the processes of at most ``jobs`` of them at once; ``done(key,
    status)`` when one returns.  One thread: processes are forked only from it.  Polls every
    0.5 s at most; on Ctrl-C or an error, every process under way is killed first."""
    from multiprocessing.connection import wait

    tasks, running = iter(tasks), {}

    def advance(key, gen, status):
        try:
            watched = gen.send(status)
        except StopIteration as stop:
            running.pop(key, None)
            done(key, stop.value)
            return
        running[key] = (gen, watched)       # first: a Ctrl-C while it starts stops it too
        watched.start()

    try:
        while True:
            while len(running) < jobs:
                task = next(tasks, None)
                if task is None:
                    break
                advance(task[0], task[1], None)
            if not running:
                return
            wait([w.sentinel for _, w in running.values()], timeout=0.5)
            for key, (gen, watched) in list(running.items()):
                status = watched.poll()
                if status is not None:
                    advance(key, gen, status)
    finally:                            # Ctrl-C, or an error: no grading process outlives the batch
        for _, watched in running.values():
            watched.stop()


def ignore_ctrl_c() -> None:
    """From now on a Ctrl-C does nothing (the cleanup after the first one runs to its end)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
