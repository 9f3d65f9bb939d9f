"""What both command lines (``python -m netmodels``, ``python -m mpi_exercises``) share:
argument errors as one line, with exit status 2."""

from __future__ import annotations

import argparse
import sys


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors are one line, ``PROG: error: MESSAGE (--help lists the options)``,
    on stderr, with exit status 2 (no usage block: ``--help`` shows it).  ``speaks()`` says
    whether this process prints it (under a launcher, only one rank should)."""

    speaks = staticmethod(lambda: True)

    def error(self, message):
        if self.speaks():
            print(f"{self.prog}: error: {message} (--help lists the options)", file=sys.stderr)
        sys.exit(2)
