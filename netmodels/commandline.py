"""What both command lines (``python -m netmodels``, ``python -m mpi_exercises``) share:
argument errors as one line, with exit status 2, the memory a size is checked against, and
the one line and exit status of a command ended by Ctrl-C."""

from __future__ import annotations

import argparse
import os
import sys

from .starting import INTERRUPTED, ctrl_c_in_one_line, ctrl_c_raises  # noqa: F401 (the command line's names)


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors are one line, ``PROG: error: MESSAGE (--help lists the options)``,
    on stderr, with exit status 2 (no usage block: ``--help`` shows it).  ``python -m
    mpi_exercises`` raises the line instead, to agree on it across ranks first."""

    def error(self, message):
        print(f"{self.prog}: error: {message} (--help lists the options)", file=sys.stderr)
        sys.exit(2)

    def parse_checked(self, argv=None, output: str = "json"):
        """:meth:`parse_args`, with the path of the ``--OUTPUT`` option (if given) checked before
        any work (:func:`netmodels.outputs.output_problem`): a path that cannot be written is an
        argument error, so no measurement is lost to it."""
        from .outputs import output_problem

        args = self.parse_args(argv)
        path = getattr(args, output, None)
        if path and (problem := output_problem(path)):
            self.error(f"--{output}: {problem}")
        return args


def run_script(main, prog: str) -> int:
    """``main()``'s exit status, for a script's ``sys.exit``: an OSError (a result that could not
    be written: disk full, quota) is one line ``PROG: error: ...`` on stderr and status 1."""
    try:
        return main()
    except OSError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1


def available_memory() -> int | None:
    """Bytes of memory available to new allocations by this process: the node's (Linux
    ``MemAvailable``; elsewhere free physical pages), and no more than its limits leave
    (``ulimit -v``, ``RLIMIT_AS``, less the address space it uses; ``RLIMIT_DATA``, less its
    data), or None where neither the system nor a limit says."""
    node = None
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    node = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    if node is None:
        try:
            node = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            pass
    left = [node] if node is not None else []
    left += _under_limits()
    return min(left) if left else None


def _under_limits() -> list[int]:
    """Bytes this process may still allocate under each of its memory limits that is set
    (``RLIMIT_AS`` against its ``VmSize``, ``RLIMIT_DATA`` against its ``VmData``)."""
    try:
        import resource
    except ImportError:                         # not a POSIX system
        return []
    used = {}
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key in ("VmSize", "VmData"):
                    used[key] = int(value.split()[0]) * 1024
    except (OSError, ValueError):
        pass
    out = []
    for limit, key in ((resource.RLIMIT_AS, "VmSize"), (getattr(resource, "RLIMIT_DATA", None), "VmData")):
        if limit is None:
            continue
        soft, _ = resource.getrlimit(limit)
        if soft != resource.RLIM_INFINITY:
            out.append(max(soft - used.get(key, 0), 0))
    return out


def interrupted(prog: str, path) -> str:
    """The one line of a command ended by Ctrl-C: that it was interrupted, and what it kept
    (:func:`netmodels.outputs.interruption`; ``path``: its result file, None if none)."""
    from .outputs import interruption

    return f"{prog}: interrupted (Ctrl-C); {interruption(path)}"
