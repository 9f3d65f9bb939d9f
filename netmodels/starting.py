"""A command's first line: a Ctrl-C while it starts ends it with one line, not a traceback.

A script's modules take a while to load (numpy, numba, nbgrader), and a ``KeyboardInterrupt``
raised while they load can come out as another error (numpy's C extensions turn it into an
``ImportError``, a class body into a ``RuntimeError``).  So a script's first statement calls
:func:`ctrl_c_in_one_line`, whose handler ends the process itself, raising nothing; its
``main`` calls :func:`ctrl_c_raises` where its own handling (what was kept) begins.  This
module imports nothing that takes time (``_signal`` is built in), so that the window before
it is Python's own start alone.
"""

import _signal
import os

#: exit status of a command ended by Ctrl-C: 128 + SIGINT, as a shell reports it
INTERRUPTED = 130


def ctrl_c_in_one_line(prog: str) -> None:
    """Until :func:`ctrl_c_raises`, a Ctrl-C ends this process at once with one line naming
    ``prog`` and exit status :data:`INTERRUPTED`."""
    line = f"{prog}: interrupted (Ctrl-C) while starting; nothing was written\n".encode()

    def end(signum, frame):
        os.write(2, line)
        os._exit(INTERRUPTED)

    _signal.signal(_signal.SIGINT, end)


def ctrl_c_raises() -> None:
    """From now on a Ctrl-C raises ``KeyboardInterrupt`` (Python's own handler)."""
    _signal.signal(_signal.SIGINT, _signal.default_int_handler)
