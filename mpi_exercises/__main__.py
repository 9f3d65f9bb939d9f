"""Command line: ``mpiexec -n P python -m mpi_exercises COMMAND [options]``.

Each command is ``module`` (which provides ``add_arguments(parser)`` and ``run(args) -> int``)
or ``module:name`` (a :class:`mpi_exercises.bench.arguments.Command` of that module).  Importing
them does not start MPI: ``--help`` never does, and an argument error starts it only under
a launcher with several ranks, for the ranks to agree on it (:func:`agreed`).  Before a
command runs, every rank has checked its arguments (:func:`check`: values, output path, the
run's estimated time and memory, :mod:`mpi_exercises.bench.estimate`) and the ranks have
compared them (:func:`agreed`): any refusal is one line, exit status 2, on every rank.
Ctrl-C ends every rank with one line and exit status 130 (:mod:`mpi_exercises.interrupt`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import sys
import time
import traceback

#: set in every rank's environment (unless its user set them) before numpy is imported: one
#: BLAS thread.  A job's ranks share the node's cores, and numpy's OpenBLAS would start a
#: thread per core in each of them, which spin at start-up (a 2-rank ping-pong of 20
#: iterations: 0.76 CPU-s, 0.64 with one thread, on 2 cores).
RANK_ENVIRONMENT = {"OPENBLAS_NUM_THREADS": "1"}
for _name, _value in RANK_ENVIRONMENT.items():
    os.environ.setdefault(_name, _value)

from netmodels.commandline import OneLineParser  # noqa: E402 (after the environment above)
from netmodels.outputs import output_problem  # noqa: E402

#: command name -> (module, one-line help).  A new command is one line here.
COMMANDS = {
    "pingpong": ("mpi_exercises.bench.pingpong", "ping-pong latency/bandwidth sweep; fits alpha and beta"),
    "exchange": ("mpi_exercises.bench.exchange", "both ranks send and receive at once over the ping-pong's sizes; "
                 "fits alpha_x and beta_x"),
    "nbl-testjig": ("mpi_exercises.bench.nbl_testjig", "f(L) test jig: centre rank using 1, 2, 4, 6 links at once"),
    "logp": ("mpi_exercises.bench.logp_bench", "LogGP parameters L, o_s, o_r, g, G by Netgauge's PRTT(n, d, s) method"),
    "barrier-bench": ("mpi_exercises.bench.barrier", "time every barrier algorithm (and MPI.Barrier), rank them"),
    "allreduce": ("mpi_exercises.bench.allreduce:once", "one allreduce algorithm, checked against MPI.Allreduce, timed"),
    "bench-allreduce": ("mpi_exercises.bench.allreduce", "every allreduce algorithm against MPI.Allreduce over N"),
    "allgather": ("mpi_exercises.bench.allgather:once", "one allgather algorithm, checked against MPI.Allgather, timed"),
    "bench-allgather": ("mpi_exercises.bench.allgather", "every allgather algorithm against MPI.Allgather over sizes"),
    "alltoall": ("mpi_exercises.bench.alltoall:once",
                 "one alltoall algorithm, checked against MPI.Alltoall, timed, messages counted"),
    "bench-alltoall": ("mpi_exercises.bench.alltoall", "every alltoall algorithm against MPI.Alltoall over sizes"),
    "info": ("mpi_exercises.info", "which MPI library, launcher, nodes and cores; are ranks oversubscribed"),
    "software-cost": ("mpi_exercises.bench.software_cost",
                      "what the executor and a front door cost per call, step and block, measured without messages"),
    "predict": ("mpi_exercises.bench.predict", "fit the models apart, predict every collective, measure it, report each model's errors"),
    "lop": ("mpi_exercises.bench.lop_bench", "LoP: 1:n/n:1 round trips and o_s(p) of 1-byte messages, L(p), best n for n-way dissemination"),
    "timeline": ("mpi_exercises.timeline", "one collective measured rank by rank (clocks aligned) and simulated: two traces, one picture"),
    "bsp": ("mpi_exercises.bench.bsp_bench", "BSP g and l: supersteps of growing h-relations, least-squares fit"),
}


def command(target: str):
    """The object with ``add_arguments`` and ``run`` that ``target`` (``module`` or ``module:name``) names."""
    module, _, name = target.partition(":")
    module = importlib.import_module(module)
    return getattr(module, name) if name else module


class Refused(Exception):
    """An argument error (its one line), kept until every rank has checked its arguments."""


class _Parser(OneLineParser):
    """One-line argument errors, raised as :class:`Refused` so that :func:`main` can agree
    on them across ranks before anyone exits."""

    def error(self, message):
        raise Refused(f"{self.prog}: error: {message} (--help lists the options)")


def build_parser(argv=None) -> argparse.ArgumentParser:
    """The command line's parser.  Given the command line ``argv``, only the command it names
    gets its options (its module is imported, the others are not: each rank of a job builds
    the parser, and importing every command cost it about 0.04 CPU-s); else every command does."""
    chosen = next((a for a in argv if not a.startswith("-")), None) if argv is not None else None
    only = chosen if chosen in COMMANDS else None
    parser = _Parser(
        prog="python -m mpi_exercises",
        description="MPI exercises and benchmarks of the course kit "
                    "(run under mpiexec -n P or srun).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=_Parser)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if only in (None, name):
            command(module).add_arguments(p)
        p.set_defaults(module=module, parser=p)
    return parser


#: options that name a file the command writes
OUTPUT_OPTIONS = ("json", "png", "html")


#: seconds between a failing rank's message and MPI_Abort: the launcher forwards a rank's
#: output asynchronously, and an abort handled first would drop the message
ABORT_GRACE_S = 0.3


def run_guarded(run, args) -> int:
    """``run(args)`` such that one rank's failure ends the whole job, with a non-zero status.

    An exception on one rank prints its traceback and aborts every rank (``MPI_Abort``),
    instead of leaving the others waiting for it; a result file that could not be written
    (disk full, quota: an OSError) is one line instead of a traceback.  Either way the
    failing rank's message is the last thing it prints (:func:`abort`).  (Ctrl-C is
    :mod:`mpi_exercises.interrupt`'s: no result file is written, and an existing one
    stays whole.  An MPI call that fails after this rank's Ctrl-C, because its partner has
    already ended on its own, is left to that module: one line, status 130, no traceback.)
    """
    from . import interrupt

    try:
        return run(args)
    except Exception as exc:
        MPI = sys.modules.get("mpi4py.MPI")
        alone = MPI is None or not MPI.Is_initialized() or MPI.Is_finalized() or MPI.COMM_WORLD.Get_size() == 1
        if isinstance(exc, OSError):        # a result that could not be written (disk full, quota)
            print(f"{args.parser.prog}: error: {exc}", file=sys.stderr, flush=True)
            if alone:
                return 1
        elif alone:
            raise
        elif interrupt.received(within=ABORT_GRACE_S):   # a partner ended on its Ctrl-C first
            interrupt.end_here()
        else:
            traceback.print_exc()
            print(f"rank {MPI.COMM_WORLD.Get_rank()} failed: aborting every rank", file=sys.stderr, flush=True)
        abort(MPI)
        return 1


def abort(MPI) -> None:
    """``MPI_Abort`` of every rank, this rank's message already printed: after
    :data:`ABORT_GRACE_S`, with this rank's output silenced (the library prints lines of
    its own on aborting, which would bury that message).  The job's shared-memory files go
    first: an aborted job leaves them (:func:`mpi_exercises.interrupt.unlink_shared_memory`)."""
    from mpi_exercises.interrupt import unlink_shared_memory

    time.sleep(ABORT_GRACE_S)
    unlink_shared_memory()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    MPI.COMM_WORLD.Abort(1)


#: options that may differ between ranks: they act on rank 0 alone (the result file, which
#: only rank 0 checks and writes, and its progress bar)
RANK_LOCAL = ("json", "no_progress", "png", "html")
#: what argparse adds to the values of a command line, not options
_NOT_OPTIONS = ("module", "parser", "command")


def check(argv=None):
    """``(args, None)`` for a command line that may run, else ``(args or None, one-line error)``.

    Every option is parsed and checked (sizes against int32 counts and this node's memory,
    the run's estimated time and memory: :func:`mpi_exercises.bench.estimate.refusal`);
    output paths are checked on rank 0 only, the one that writes them (on a cluster, other
    nodes need not see its folder).  Whatever goes wrong while checking becomes the line,
    never an exception: the ranks must still meet in :func:`agreed`."""
    from .bench.estimate import refusal
    from .bench.placement import launch_rank

    args = None
    try:
        argv = sys.argv[1:] if argv is None else argv
        # --help prints on rank 0 only (every rank parses, and exits with it)
        with contextlib.redirect_stdout(io.StringIO()) if launch_rank() else contextlib.nullcontext():
            args, extra = build_parser(argv).parse_known_args(argv)
        if extra:  # report it with the command's own usage line, not the top-level one
            args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
        for option in OUTPUT_OPTIONS if launch_rank() == 0 else ():
            path = getattr(args, option, None)
            problem = None if path is None else output_problem(path)
            if problem:
                args.parser.error(f"--{option}: {problem}")
        refused = refusal(args)
        if refused:
            raise Refused(f"{args.parser.prog}: error: {refused}")
    except Refused as exc:
        return args, str(exc)
    except Exception as exc:        # an unforeseen failure of a check: one line all the same
        prog = args.parser.prog if args is not None else "python -m mpi_exercises"
        return args, f"{prog}: error: {exc.__class__.__name__}: {exc}"
    return args, None


def values(args) -> dict | None:
    """The values of a parsed command line that every rank must share (repr of each, by
    option; the command as ``COMMAND``), None if it was not parsed."""
    if args is None:
        return None
    return {"COMMAND": repr(args.command), **{k: repr(v) for k, v in vars(args).items()
                                               if k not in _NOT_OPTIONS + RANK_LOCAL}}


def difference(everyone: list[dict], parser) -> str | None:
    """The first value that differs between rank 0 and another rank (``everyone``: the
    :func:`values` of each rank), named by its option in ``parser`` (rank 0's), or None."""
    def name(dest):
        if dest == "COMMAND":
            return "the command"
        action = next((a for a in parser._actions if a.dest == dest), None)
        return action.option_strings[-1] if action is not None and action.option_strings else dest

    def short(text):
        return "(none)" if text is None else text if len(text) <= 60 else text[:57] + "..."

    mine = everyone[0]
    for r, theirs in enumerate(everyone[1:], 1):
        for dest in dict.fromkeys([*mine, *theirs]):
            if mine.get(dest) != theirs.get(dest):
                return f"{name(dest)} is {short(mine.get(dest))} on rank 0 but {short(theirs.get(dest))} on rank {r}"
    return None


def agreed(problem: str | None, args=None) -> str | None:
    """The first rank's argument error, on every rank, or None if no rank has one.

    Under a launcher with several ranks (one collective call): a rank that left alone
    would leave the others waiting for it for ever, so they agree first.  Ranks may
    disagree when nodes differ (memory) or when the launcher gives them different
    arguments (an MPMD launch, ``mpiexec -n 1 A : -n 1 B``): the message then names the
    rank that refused, or, if every rank accepted its own, the first option whose value
    differs between ranks (:func:`difference`; :data:`RANK_LOCAL` options may).  Without
    a launcher, or with one rank, ``problem`` itself (MPI is not started)."""
    from .bench.placement import ranks_in_job

    if ranks_in_job() <= 1:
        return problem
    from mpi4py import MPI

    everyone = MPI.COMM_WORLD.allgather((problem, values(args)))
    refusing = [r for r, (p, _) in enumerate(everyone) if p]
    if refusing:
        first = everyone[refusing[0]][0]
        return first if everyone[0][0] else first.replace(": error: ", f": error on rank {refusing[0]}: ", 1)
    differ = difference([v for _, v in everyone], args.parser)
    if differ:
        return (f"{args.parser.prog}: error: the ranks were given different arguments: {differ} "
                "(every rank must run the same command line)")
    return None


def main(argv=None) -> int:
    from . import interrupt
    from .bench.placement import launch_rank

    interrupt.install(speaks=launch_rank() == 0)     # from the start: Ctrl-C is one line, status 130
    args, problem = check(argv)
    if args is not None:
        interrupt.name(args.parser.prog, getattr(args, "json", None))
    problem = agreed(problem, args)
    if problem:  # before any measurement: nothing is lost, and every rank stops
        if launch_rank() == 0:
            print(problem, file=sys.stderr, flush=True)
        return 2
    return run_guarded(command(args.module).run, args)


if __name__ == "__main__":
    sys.exit(main())
