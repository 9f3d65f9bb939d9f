"""``python -m MODULE ARGS`` or ``python SCRIPT ARGS`` without a new interpreter: in a child
forked from the test's process.

The tables of refused command lines (tests/test_cli_errors.py, tests/test_netmodels_cli_errors.py)
hold about two hundred rows; a new Python for each costs 0.15 to 0.2 s of start-up and imports,
most of the tables' time.  :func:`run_module` forks this process instead, and the child runs the
module as ``__main__`` (:func:`runpy.run_module`, what ``python -m`` does) with its own
arguments and standard streams (files); the parent waits for it under a timeout;
:func:`run_script` does the same for a script (:func:`runpy.run_path`).  Modules
the parent has imported are not imported again (the child shares them), so what a fresh
interpreter does at start-up is checked elsewhere: each table keeps a row per command that
starts a real ``python -m``, and tests/test_allreduce_mpi.py checks what building the
command line imports.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from functools import cache


def run_module(module: str, args: list[str], *, cwd, env: dict | None = None,
               timeout: float = 10) -> subprocess.CompletedProcess:
    """Like ``subprocess.run([python, "-m", module, *args], capture_output=True, text=True)``,
    in a forked child (Linux and macOS), whose output goes to files.  ``env``: the child's
    environment (default: this one).  Raises TimeoutExpired (the child killed) after
    ``timeout`` seconds."""
    import runpy

    _warm(module)
    return _forked([module, *args], lambda: runpy.run_module(module, run_name="__main__", alter_sys=True),
                   [sys.executable, "-m", module, *args], cwd=cwd, env=env, timeout=timeout)


def run_script(script: str, args: list[str], *, cwd, env: dict | None = None,
               timeout: float = 10) -> subprocess.CompletedProcess:
    """Like ``subprocess.run([python, script, *args], ...)`` (``script`` relative to ``cwd``),
    in a forked child as :func:`run_module`: the script runs as ``__main__`` with its own folder
    first on ``sys.path``, as ``python script`` puts it."""
    import runpy

    path = os.path.join(os.fspath(cwd), script)

    def run():
        sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
        runpy.run_path(path, run_name="__main__")

    return _forked([script, *args], run, [sys.executable, script, *args], cwd=cwd, env=env, timeout=timeout)


def _forked(argv: list[str], run, cmd: list[str], *, cwd, env, timeout) -> subprocess.CompletedProcess:
    """``run()`` in a forked child with ``sys.argv = argv``, as the command ``cmd`` would
    run (its status, stdout and stderr)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:                                          # the child: never returns
            code = 1
            try:
                os.setsid()
                signal.signal(signal.SIGINT, signal.default_int_handler)
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), line_buffering=True)
                sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), line_buffering=True)
                sys.stdin = io.TextIOWrapper(io.FileIO(os.open(os.devnull, os.O_RDONLY), "r"))
                os.chdir(cwd)
                if env is not None:
                    os.environ.clear()
                    os.environ.update(env)
                sys.argv = list(argv)
                try:
                    run()
                    code = 0
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                    if exc.code is not None and not isinstance(exc.code, int):
                        print(exc.code, file=sys.stderr)
            except BaseException:                         # noqa: BLE001 (what python -m would print)
                traceback.print_exc()
                code = 1
            finally:
                for stream in (sys.stdout, sys.stderr):
                    try:
                        stream.flush()
                    except (OSError, ValueError):
                        pass
                os._exit(code)
        deadline = time.monotonic() + timeout
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                try:
                    os.killpg(pid, signal.SIGKILL)         # the child and whatever it started
                except ProcessLookupError:                 # not yet in a session of its own
                    os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise subprocess.TimeoutExpired(cmd, timeout)
            time.sleep(0.002)
        code = os.waitstatus_to_exitcode(status)
        texts = []
        for f in (out, err):
            f.seek(0)
            texts.append(f.read().decode(errors="replace"))
    return subprocess.CompletedProcess(cmd, code, *texts)


@cache
def _warm(module: str) -> None:
    """Import ``module``'s ``__main__`` here, and what building its parser imports (every
    command's module), once: else each child would import them again."""
    import importlib

    main = importlib.import_module(f"{module}.__main__")
    if hasattr(main, "build_parser"):
        main.build_parser()


def first_of_each(keys) -> set[int]:
    """The indices of the first row of each distinct key in ``keys`` (None: a row of none):
    the rows of a table that start a new interpreter."""
    first = {}
    for i, key in enumerate(keys):
        if key is not None:
            first.setdefault(key, i)
    return set(first.values())
