"""Command line: ``python -m netmodels COMMAND [options]`` (no MPI).

Each command lives in its own module, which provides ``add_arguments(parser)`` and
``run(args) -> int``.
"""

from __future__ import annotations

import importlib
import sys

from .commandline import OneLineParser
from .outputs import output_problem

#: command name -> (module, one-line help).  A new command is one line here.
COMMANDS = {
    "simulate": ("netmodels.simulate.cli", "predict the time of a collective algorithm under a model"),
}


def build_parser() -> OneLineParser:
    parser = OneLineParser(prog="python -m netmodels",
                           description="Performance models of parallel communication.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=OneLineParser)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        importlib.import_module(module).add_arguments(p)
        p.set_defaults(module=module, parser=p)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    path = getattr(args, "json", None)          # checked before any work, so none is lost
    problem = None if path is None else output_problem(path)
    if problem:
        args.parser.error(f"--json: {problem}")
    try:
        return importlib.import_module(args.module).run(args)
    except OSError as exc:                      # a result that could not be written (disk full, quota)
        print(f"{args.parser.prog}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
