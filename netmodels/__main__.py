"""Command line: ``python -m netmodels COMMAND [options]`` (no MPI).

Each command lives in its own module, which provides ``add_arguments(parser)`` and
``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: command name -> (module, one-line help).  A new command is one line here.
COMMANDS = {
    "simulate": ("netmodels.simulate.cli", "predict the time of a collective algorithm under a model"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m netmodels",
                                     description="Performance models of parallel communication.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        importlib.import_module(module).add_arguments(p)
        p.set_defaults(module=module, parser=p)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return importlib.import_module(args.module).run(args)


if __name__ == "__main__":
    sys.exit(main())
