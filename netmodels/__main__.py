"""Command line: ``python -m netmodels COMMAND [options]`` (no MPI).

Each command lives in its own module, which provides ``add_arguments(parser)`` and
``run(args) -> int``.  Ctrl-C ends a command with one line saying what it kept, and exit
status 130 (128 + SIGINT, as a shell reports it).
"""

from __future__ import annotations

if __name__ == "__main__":      # a Ctrl-C while the modules below load: one line, not a traceback
    import _signal                  # (built in: until the next line, a Ctrl-C ends it quietly)

    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
    from netmodels.starting import ctrl_c_in_one_line

    ctrl_c_in_one_line("python -m netmodels")

import importlib
import sys

from .commandline import INTERRUPTED, OneLineParser, ctrl_c_raises, interrupted
from .outputs import output_problem

#: command name -> (module, one-line help).  A new command is one line here.
COMMANDS = {
    "simulate": ("netmodels.simulate.cli", "predict the time of a collective algorithm under a model"),
    "timeline": ("netmodels.simulate.timeline_cli", "draw what every rank does over time in a simulated collective"),
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
    prog, path = "python -m netmodels", None
    try:
        args = build_parser().parse_args(argv)
        prog, path = args.parser.prog, getattr(args, "json", None)
        ctrl_c_raises()                         # from here on, main says what was kept
        problem = None if path is None else output_problem(path)      # checked before any work
        if problem:
            args.parser.error(f"--json: {problem}")
        return importlib.import_module(args.module).run(args)
    except OSError as exc:                      # a result that could not be written (disk full, quota)
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:                   # Ctrl-C: a result being written was left whole (outputs)
        print(interrupted(prog, path), file=sys.stderr, flush=True)
        return INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
