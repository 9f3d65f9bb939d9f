"""The benchmarks' command-line arguments: argparse types (counts checked against MPI's int32
and this node's memory, sample counts, name lists), the options most commands share, and a
command's two functions.  Importing this module does not start MPI."""

from __future__ import annotations

import argparse
from typing import Callable, NamedTuple

from netmodels.commandline import available_memory
from netmodels.simulate.budget import MAX_SECONDS

from .placement import ranks_in_job, ranks_on_this_node
from .records import fmt_bytes
from .timing import DEFAULT_INNER


class Command(NamedTuple):
    """One command of ``python -m mpi_exercises``: ``add_arguments(parser)`` and ``run(args) -> int``."""

    add_arguments: Callable
    run: Callable


def int_at_least(minimum: int):
    """argparse type: an integer >= ``minimum``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {text!r}")
        return value
    return parse


def float_in(low: float, high: float, what: str, low_inclusive: bool = True):
    """argparse type: a number in [low, high) (``(low, high)`` without ``low_inclusive``;
    never NaN), the error naming it ``what`` (e.g. "a fraction")."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not ((low <= value) if low_inclusive else (low < value)) or not value < high:
            bounds = f"{'[' if low_inclusive else '('}{low:g}, {high:g})"
            raise argparse.ArgumentTypeError(f"expected {what} in {bounds}, got {text!r}")
        return value
    return parse


nonneg_int = int_at_least(0)    #: argparse type: an integer >= 0


positive_int = int_at_least(1)  #: argparse type: an integer >= 1


#: the largest count one MPI call takes (counts are C ints)
INT32_MAX = 2**31 - 1


def check_count(value: int, *, unit_bytes: int, buffers: int, all_ranks: bool = False) -> int:
    """``value`` (a count of units of ``unit_bytes``) if one MPI call can carry it and this
    node's memory can hold ``buffers`` buffers of it for every rank on the node (times the
    job's ranks if ``all_ranks``: a buffer holds one block per rank); else
    argparse.ArgumentTypeError naming the limit and the largest value that fits."""
    if value > INT32_MAX:
        raise argparse.ArgumentTypeError(
            f"{value} is above {INT32_MAX}, the largest count one MPI call takes (int32)")
    copies = buffers * ranks_on_this_node() * (ranks_in_job() if all_ranks else 1)
    need, avail = value * unit_bytes * copies, available_memory()
    if avail is not None and need > avail:
        raise argparse.ArgumentTypeError(
            f"{value} needs {fmt_bytes(need)} of memory ({copies} buffers of {unit_bytes}-byte units "
            f"on this node) but {fmt_bytes(avail)} is available: at most {avail // (unit_bytes * copies)} fits")
    return value


def size_list_of(unit_bytes: int = 1, buffers: int = 2, all_ranks: bool = False):
    """argparse type: comma-separated counts >= 0, e.g. ``0,8,1k`` (suffixes k = 1024,
    M = 1024**2), each checked by :func:`check_count` (units of ``unit_bytes``, ``buffers``
    buffers per rank)."""
    def parse(text: str) -> list[int]:
        out = []
        for item in text.split(","):
            item = item.strip()
            scale = {"k": 1024, "K": 1024, "M": 1024**2}.get(item[-1:], 1)
            try:
                out.append(nonneg_int(item[:-1] if scale > 1 else item) * scale)
            except argparse.ArgumentTypeError:
                raise argparse.ArgumentTypeError(
                    f"sizes must be comma-separated integers >= 0 (suffix k or M allowed), got {text!r}") from None
        return [check_count(v, unit_bytes=unit_bytes, buffers=buffers, all_ranks=all_ranks)
                for v in sorted(set(out))]
    parse.unit_bytes = unit_bytes       # what a count is worth, for the run's estimate (estimate.py)
    return parse


#: argparse type: message sizes in bytes (a send and a receive buffer per rank)
size_list = size_list_of()


def sample_count(text: str) -> int:
    """argparse type: a number of timed calls or samples (>= 1).  Each sample is a float64
    kept on every rank (a row per variant timed) and reduced in one MPI call, so the number
    is checked like a size (:func:`check_count`, 8-byte units, 16 buffers: rows and copies)."""
    return check_count(positive_int(text), unit_bytes=8, buffers=SAMPLE_BUFFERS)


#: buffers of samples a benchmark may hold per rank (one row per variant, their reduction)
SAMPLE_BUFFERS = 16


def count_of(unit_bytes: int, buffers: int, all_ranks: bool = False):
    """argparse type: one count >= 0 checked by :func:`check_count`."""
    def parse(text: str) -> int:
        return check_count(nonneg_int(text), unit_bytes=unit_bytes, buffers=buffers, all_ranks=all_ranks)
    parse.unit_bytes = unit_bytes
    return parse


def name_list(known, always=()):
    """argparse type: a comma-separated, non-empty subset of ``known`` (``always`` appended)."""
    def parse(text: str) -> list[str]:
        names = [t.strip() for t in text.split(",") if t.strip()]
        if not names or any(n not in known for n in names):
            raise argparse.ArgumentTypeError(
                f"expected a comma-separated subset of {','.join(known)}; got {text!r}")
        return list(dict.fromkeys(names + list(always)))
    return parse


def add_options(p, *, warmup: tuple, iterations: tuple | None = None, repetitions: tuple | None = None,
                budget: str | None = None, json: str = "write the results to FILE as JSON",
                progress: bool = True) -> None:
    """The options most commands share: ``--iterations`` or ``--repetitions`` and ``--warmup``
    (each ``(default, help)``), ``--budget-bytes`` (``budget``: what it caps, default 256 MiB),
    ``--json FILE``, ``--no-progress`` and ``--force`` (:mod:`.estimate`)."""

    for flag, spec in (("--iterations", iterations), ("--repetitions", repetitions)):
        if spec is not None:
            p.add_argument(flag, type=sample_count, default=spec[0], help=spec[1])
    p.add_argument("--warmup", type=nonneg_int, default=warmup[0], help=warmup[1])
    if budget is not None:
        p.add_argument("--budget-bytes", type=positive_int, default=256 * 2**20,
                       help=f"cap on {budget} (default 256 MiB; at least 10 calls)")
    p.add_argument("--json", metavar="FILE", help=json)
    if progress:
        p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_force_option(p)


def add_inner_option(p, default: int = DEFAULT_INNER) -> None:
    """``--inner K``: calls per sample, back to back after one barrier (:func:`time_interleaved`)."""
    p.add_argument("--inner", type=positive_int, default=default,
                   help=f"calls per sample, back to back after one barrier, time / K, slowest rank: the "
                        f"barrier's exit skew is charged once per K calls (default {default}; 1: a barrier "
                        "before every call)")


def add_once_options(p, default_n: int, n_help: str, all_ranks: bool = False, *, algorithms=None,
                     default: str | None = None, mpi_call: str = "") -> None:
    """The options of a one-algorithm command (``allreduce``, ``allgather``, ``alltoall``):
    ``--algorithm`` (one of ``algorithms``, ``default``; ``mpi``: MPI's ``mpi_call`` itself) when
    given, ``-N``, ``--dtype``, ``--repeat``, ``--warmup``, ``--json``.  ``-N`` is checked against
    memory for the widest dtype (16 bytes) and 4 buffers (``all_ranks``: each holds a block
    per rank)."""
    if algorithms is not None:
        p.add_argument("--algorithm", choices=algorithms, default=default,
                       help=f"the algorithm run, checked and timed (mpi: MPI.{mpi_call} itself; default: {default})")
    p.add_argument("-N", type=count_of(16, 4, all_ranks), default=default_n, help=n_help)
    p.add_argument("--dtype", choices=DTYPES, default="float64", help="numpy element type of the vectors (native byte order; default: float64)")
    p.add_argument("--repeat", type=sample_count, default=20, help="calls timed, each after a barrier (default 20)")
    add_options(p, warmup=(3, "untimed calls first (default 3)"), progress=False)


#: the numpy dtypes of the one-algorithm commands
DTYPES = ("float64", "float32", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint8",
          "complex128", "complex64")


def add_force_option(p) -> None:
    """``--force``: run even when :func:`~mpi_exercises.bench.estimate.refusal` says the run is too
    long or too large."""
    p.add_argument("--force", action="store_true",
                   help="run even when the estimate (from the options, before anything runs) says the run "
                        f"would take more than {MAX_SECONDS:.0f} s or more memory than this node has available")
