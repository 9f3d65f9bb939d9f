"""Command line: ``mpiexec -n P python -m mpi_exercises COMMAND [options]``.

Each command is ``module`` (which provides ``add_arguments(parser)`` and ``run(args) -> int``)
or ``module:name`` (a :class:`mpi_exercises.bench.core.Command` of that module); the module
is imported only when its command runs, so ``--help`` and argument errors never start MPI.
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: command name -> (module, one-line help).  A new command is one line here.
COMMANDS = {
    "pingpong": ("mpi_exercises.bench.pingpong", "ping-pong latency/bandwidth sweep; fits alpha and beta"),
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
    "predict": ("mpi_exercises.bench.predict", "calibrate the models, predict every collective, measure it, report the errors"),
    "lop": ("mpi_exercises.bench.lop_bench", "LoP: 1:n/n:1 round trips and o_s(p) of 1-byte messages, L(p), best n for n-way dissemination"),
    "bsp": ("mpi_exercises.bench.bsp_bench", "BSP g and l: supersteps of growing h-relations, least-squares fit"),
}


def command(target: str):
    """The object with ``add_arguments`` and ``run`` that ``target`` (``module`` or ``module:name``) names."""
    module, _, name = target.partition(":")
    module = importlib.import_module(module)
    return getattr(module, name) if name else module


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mpi_exercises",
        description="MPI exercises and benchmarks of the course kit "
                    "(run under mpiexec -n P or srun).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        command(module).add_arguments(p)
        p.set_defaults(module=module, parser=p)
    return parser


def main(argv=None) -> int:
    args, extra = build_parser().parse_known_args(argv)
    if extra:  # report it with the command's own usage line, not the top-level one
        args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return command(args.module).run(args)


if __name__ == "__main__":
    sys.exit(main())
