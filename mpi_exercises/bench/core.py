"""The one measurement core of the benchmarks: argument types and common options, the
prologue (enough ranks? oversubscribed?) and the JSON epilogue every command shares,
summary statistics, interleaved timing, and the comparison of a front door with MPI's
own collective.  Importing this module does not start MPI."""

from __future__ import annotations

import argparse
import datetime as _dt
import functools
import os
import platform
import sys
from typing import Callable, NamedTuple

from netmodels.commandline import available_memory
from netmodels.outputs import write_json  # noqa: F401  (the one atomic writer; re-exported)

from ..pages import transparent_huge_pages

import numpy as np


class Command(NamedTuple):
    """One command of ``python -m mpi_exercises``: ``add_arguments(parser)`` and ``run(args) -> int``."""

    add_arguments: Callable
    run: Callable


# ---------------------------------------------------------------- argument types
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


def _env_int(*names: str, default: int = 1, minimum: int = 1) -> int:
    for name in names:
        try:
            return max(minimum, int(os.environ[name]))
        except (KeyError, ValueError):
            continue
    return default


def ranks_on_this_node() -> int:
    """Ranks the launcher started on this node (from its variables; 1 without a launcher)."""
    return _env_int("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE")


def ranks_in_job() -> int:
    """Ranks of the whole job (from the launcher's variables; 1 without a launcher)."""
    return _env_int("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS")


def launch_rank() -> int:
    """This process's rank from the launcher's variables (0 without a launcher): lets a
    command print a start-up error once, before MPI is initialised."""
    return _env_int("PMI_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", default=0, minimum=0)


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
    ``--json FILE`` and ``--no-progress``."""
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


def capped_iterations(nbytes: int, iterations: int, budget_bytes: int, at_least: int) -> int:
    """Timed repetitions for one message size: ``iterations``, capped so that repetitions x
    ``nbytes`` stays within ``budget_bytes`` (large messages take fewer), but at least
    ``at_least`` (or ``iterations`` if that is smaller)."""
    return max(min(at_least, iterations), min(iterations, budget_bytes // max(nbytes, 1)))


# ---------------------------------------------------------------- environment
def _cpu_set() -> list[int]:
    """The cores this process was started on (before :func:`placement` binds it to one)."""
    if _STARTED_ON:
        return list(_STARTED_ON)
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return list(range(os.cpu_count() or 1))


def usable_cores() -> int:
    """Cores this process may run on (affinity-aware where the OS tells), as started."""
    return len(_cpu_set())


#: the cores this process was started on, kept when :func:`placement` binds it to one
_STARTED_ON: list = []
#: set to 0 to leave the ranks where the operating system puts them
PIN_VARIABLE = "MPI_EXERCISES_PIN"


def launcher() -> str:
    """How this process was started, from the variables the launchers set.

    MPICH's Hydra (``mpiexec``) sets ``MPI_LOCALNRANKS``, also when it starts its
    proxies through Slurm inside an allocation; Slurm's ``srun`` sets ``SLURM_STEP_ID``
    (and ``PMI_RANK`` with ``--mpi=pmi2``); Open MPI's ``mpirun`` sets
    ``OMPI_COMM_WORLD_RANK``.
    """
    env = os.environ
    if "MPI_LOCALNRANKS" in env:
        return "mpiexec (Hydra)" + (" inside a Slurm allocation" if "SLURM_JOB_ID" in env else "")
    if "SLURM_STEP_ID" in env:
        return "srun" + (" (PMI-2)" if "PMI_RANK" in env else "")
    if "OMPI_COMM_WORLD_RANK" in env:
        return "mpirun (Open MPI)"
    if "PMI_RANK" in env:
        return "a PMI launcher"
    return "singleton (no launcher)"


#: placements already gathered, by communicator: (handle, size) -> placement dict
_PLACEMENTS: dict = {}


def placement(comm) -> dict:
    """Where the ranks run (collective): nodes with their ranks and cores, oversubscription.

    A node's cores are the union of the CPU sets its ranks may run on, so ranks bound to
    one core each (srun's default binding) are not mistaken for oversubscribed ones.
    Ranks are on the same node when MPI's ``COMM_TYPE_SHARED`` split puts them together.
    The answer is kept, so that :func:`environment` (called on one rank) can record it.

    Where the ranks of a node may all run on the same cores and there are at least as many
    cores as ranks, each rank is then bound to a core of its own (node rank k to the k-th
    core), as the OSU micro-benchmarks advise; ``core_of_rank`` records it (None: not bound;
    ``MPI_EXERCISES_PIN=0`` leaves the ranks unbound).  Left to the scheduler, two ranks on
    this book's 2-core machine measured a 0-byte ping-pong at 1.52-1.61 µs in 7 launches of 8
    and 1.14 µs in the eighth; bound, at 1.11-1.18 µs in 8 of 8.
    """
    from mpi4py import MPI

    cpus = _cpu_set()
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    leader = comm.allgather(comm.Get_rank() if node.Get_rank() == 0 else None)
    node_rank0 = node.bcast(comm.Get_rank(), root=0)
    same_cores = len(set(node.allgather(tuple(cpus)))) == 1
    local, local_size = node.Get_rank(), node.Get_size()
    node.Free()
    core = None
    if (same_cores and 1 < local_size <= len(cpus) and os.environ.get(PIN_VARIABLE, "1") != "0"
            and hasattr(os, "sched_setaffinity")):
        _STARTED_ON[:] = cpus
        core = cpus[local]
        os.sched_setaffinity(0, {core})
    mine = (node_rank0, MPI.Get_processor_name(), cpus)
    everyone = comm.allgather(mine)
    nodes = []
    for first in (r for r in leader if r is not None):
        ranks = [r for r, (n0, _, _) in enumerate(everyone) if n0 == first]
        union = set().union(*(set(everyone[r][2]) for r in ranks))
        nodes.append({"name": everyone[first][1], "rank_list": ranks, "ranks": len(ranks),
                      "cores": len(union)})
    env = os.environ
    place = {
        "launcher": launcher(),
        "slurm_job_id": env.get("SLURM_JOB_ID"),
        "slurm_cluster": env.get("SLURM_CLUSTER_NAME"),
        "node_of_rank": [next(i for i, n in enumerate(nodes) if r in n["rank_list"])
                         for r in range(comm.Get_size())],
        "nodes": nodes,
        "ranks_per_node": [n["ranks"] for n in nodes],
        "oversubscribed": any(n["ranks"] > n["cores"] for n in nodes),
        "core_of_rank": comm.allgather(core),
    }
    _PLACEMENTS[(comm.py2f(), comm.Get_size())] = place
    return place


def warn_if_oversubscribed(comm) -> bool:
    """Warn on stderr (rank 0) when a node runs more ranks than it has cores (collective).

    Oversubscribed ranks share cores: every timing then includes the operating
    system's scheduling and is not a property of the network.  Returns True if so.
    """
    place = placement(comm)
    over = place["oversubscribed"]
    if over and comm.Get_rank() == 0:
        worst = max(place["nodes"], key=lambda n: n["ranks"] - n["cores"])
        print(f"WARNING: {worst['ranks']} MPI ranks share {worst['cores']} cores on node "
              f"{worst['name']}: ranks are oversubscribed and every time measured includes "
              "operating-system scheduling.", file=sys.stderr, flush=True)
    return over


def start(command: str, min_ranks: int = 2, suggest: int | None = None, why: str = "",
          advised: int | None = None, advised_why: str = ""):
    """A command's prologue (collective): ``(MPI.COMM_WORLD, oversubscribed)``, where
    ``oversubscribed`` is None, after one line on stderr (rank 0) that suggests ``mpiexec -n
    suggest``, if there are fewer than ``min_ranks`` ranks; else whether ranks are
    oversubscribed (warned).  With fewer than ``advised`` ranks the command runs, after a
    one-line warning saying what is lost (``advised_why``)."""
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    size = comm.Get_size()
    if size < min_ranks:
        if comm.Get_rank() == 0:
            print(f"{command} needs at least {min_ranks} ranks{why}: mpiexec -n {suggest or min_ranks} "
                  f"python -m mpi_exercises {command}", file=sys.stderr)
        return comm, None
    if advised is not None:
        advise_ranks(comm, command, advised, advised_why, suggest)
    return comm, warn_if_oversubscribed(comm)


#: why the one-algorithm commands, their bench- variants and barrier-bench want 2 ranks
ONE_RANK_WHY = "no message is sent, so the time is that of local copies"


def advise_ranks(comm, command: str, advised: int, why: str, suggest: int | None = None) -> bool:
    """One warning line on stderr (rank 0) if ``comm`` has fewer than ``advised`` ranks, for a
    command that still runs but loses something (``why``) on fewer.  Returns True if warned."""
    size = comm.Get_size()
    if size >= advised:
        return False
    if comm.Get_rank() == 0:
        print(f"WARNING: {command} on {size} rank{'' if size == 1 else 's'}: {why}; run it on at least "
              f"{advised} (mpiexec -n {suggest or advised} python -m mpi_exercises {command})",
              file=sys.stderr, flush=True)
    return True


def save(comm, path, benchmark: str, oversubscribed: bool, parameters: dict, **fields) -> None:
    """A command's epilogue (rank 0): if ``path``, write the results as JSON (benchmark,
    environment, oversubscribed, 1-minute load average, parameters, then ``fields``) and say so."""
    if not path:
        return
    write_json(path, {"benchmark": benchmark, "environment": environment(comm), "oversubscribed": oversubscribed,
                      "load_average_1min": load_average(), "parameters": parameters, **fields})
    print(f"results written to {path}")


def parameters(args, drop=("module", "command", "parser")) -> dict:
    """The command-line values of ``args`` as a dict (argparse's own entries dropped)."""
    return {k: v for k, v in vars(args).items() if k not in drop}


def load_average():
    """The 1-minute load average (None where the OS has none): a machine shared with
    other jobs distorts every timing, so benchmarks record it with their results."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def environment(comm) -> dict:
    """Metadata stored with every result file (any rank; not collective).

    ``placement`` is the one :func:`placement` (or :func:`warn_if_oversubscribed`, which
    every benchmark calls) gathered on ``comm``, None if neither ran."""
    from mpi4py import MPI

    return {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "mpi_library": MPI.Get_library_version().splitlines()[0].strip(),
        "ranks": comm.Get_size(),
        "cores": usable_cores(),
        "wtick_s": MPI.Wtick(),
        "placement": _PLACEMENTS.get((comm.py2f(), comm.Get_size())),
        "transparent_huge_pages": transparent_huge_pages(),
    }


# ---------------------------------------------------------------- statistics and output
def summarize(samples, confidence: float = 0.95) -> dict:
    """min, quartiles, median and max of timing samples in seconds; the median's
    ``confidence`` interval (:func:`median_ci`) as ``median_ci_s`` = [lo, hi] with its
    half-width over the median (``ci_relative_halfwidth``); and every sample, in the order
    taken (``times_s``, rounded to the picosecond: ``MPI.Wtime``'s tick is a nanosecond, and
    the digits below are the rounding of a difference of two clock readings), so that a figure
    can be redrawn from the JSON.  ``samples`` is their count."""
    s = np.asarray(samples, dtype=float)
    q = np.percentile(s, [0, 25, 50, 75, 100])
    med, lo, hi = median_ci(s, confidence)
    return {"samples": int(s.size), "min_s": q[0], "p25_s": q[1], "median_s": q[2],
            "p75_s": q[3], "max_s": q[4], "median_ci_s": [lo, hi], "confidence": confidence,
            "ci_relative_halfwidth": (hi - lo) / 2 / abs(med) if med else None,
            "times_s": np.round(s, 12).tolist()}


def median_ci(samples, confidence: float = 0.95) -> tuple[float, float, float]:
    """The median of ``samples`` and a distribution-free confidence interval for it (same
    unit as the samples): order statistics x_(j) <= median <= x_(k), with j and k from the
    binomial distribution Bin(n, 1/2), as Le Boudec (2011) and Hoefler & Belli (SC15)
    recommend for timings, which are seldom normal.  The interval covers the true median
    with probability >= ``confidence``; with fewer than 6 samples at 95 % none does, and
    the interval is (min, max)."""
    from scipy import stats

    x = np.sort(np.asarray(samples, dtype=float))
    n = x.size
    if n == 0:
        raise ValueError("median_ci needs at least one sample")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    # the largest j with P(B <= j - 1) <= (1 - confidence) / 2, B ~ Bin(n, 1/2): the interval
    # x_(j) .. x_(n+1-j) (1-based) misses the median with probability 2 P(B <= j - 1)
    j = max(1, int(np.count_nonzero(stats.binom.cdf(np.arange(n), n, 0.5) <= (1 - confidence) / 2)))
    return float(np.median(x)), float(x[j - 1]), float(x[n - j])


def fmt_bytes(n: float) -> str:
    """Human-readable byte count with binary prefixes (1 KiB = 1024 B)."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


# ---------------------------------------------------------------- collectives against MPI's own
#: how a front door is timed: the call as users make it, without its argument check, or
#: only the algorithm (the cached executor on prepared buffers)
MODES = ("default", "check=False", "executor")


def loop_method(inner: int) -> str:
    """The synchronised start of the collective benchmarks, in words (output and JSON)."""
    if inner <= 1:
        return "one call after a barrier, slowest rank (includes the barrier's exit skew)"
    return (f"tight loop of {inner} calls after one barrier, time / {inner}, slowest rank "
            f"(the barrier's exit skew is charged once per {inner} calls)")


def time_interleaved(comm, calls: list, iters: int, warmup: int, *, inner: int = 1) -> np.ndarray:
    """Per-call times (s), shape (len(calls), iters): round-robin over ``calls``, so every
    variant sees the same machine conditions (other processes, frequency changes).  A
    sample is a barrier, then ``inner`` back-to-back calls, their time divided by
    ``inner``: the barrier's exit skew (ranks leave it at different times) is charged once
    per ``inner`` calls instead of to every call (``inner=1``: one call per barrier, the
    skew included; :func:`loop_method` says it in words).
    A sample's time is the slowest rank's."""
    from mpi4py import MPI

    samples = np.empty((len(calls), iters))
    for i in range(-warmup, iters):
        for k, fn in enumerate(calls):
            comm.Barrier()
            t0 = MPI.Wtime()
            for _ in range(inner):
                fn()
            if i >= 0:
                samples[k, i] = (MPI.Wtime() - t0) / inner
    comm.Allreduce(MPI.IN_PLACE, samples, op=MPI.MAX)
    return samples


def ratios(results: list[dict]) -> dict:
    """``{N: {mode: {algorithm: median / MPI's median, ..., best, best_ratio, best_by_min,
    best_min_ratio}}}``: each variant's median over MPI's, and the best algorithm per mode
    by median (and by minimum, the ratio of minima)."""
    ref = {r["nelems"]: r for r in results if r["algorithm"] == "mpi"}
    table: dict = {}
    for r in results:
        if r["algorithm"] != "mpi":
            row = table.setdefault(r["nelems"], {}).setdefault(r["mode"], {})
            row[r["algorithm"]] = r["median_s"] / ref[r["nelems"]]["median_s"]
            row.setdefault("_min", {})[r["algorithm"]] = r["min_s"] / ref[r["nelems"]]["min_s"]
    for modes in table.values():
        for row in modes.values():
            by_min = row.pop("_min")
            best, best_min = min(row, key=row.get), min(by_min, key=by_min.get)
            row.update(best=best, best_ratio=row[best], best_by_min=best_min, best_min_ratio=by_min[best_min])
    return table


def compare_report(results: list[dict], reference: str, unit: str = "N") -> str:
    """Median µs per call of every variant, and the best of ours as a ratio to ``reference``
    (MPI's collective): ratio of medians, and of minima in parentheses."""
    algorithms = list(dict.fromkeys(r["algorithm"] for r in results if r["algorithm"] != "mpi"))
    modes = list(dict.fromkeys(r["mode"] for r in results if r["algorithm"] != "mpi"))
    med = {(r["nelems"], r["algorithm"], r["mode"]): r["median_s"] for r in results}
    tab, width = ratios(results), 9
    widths = {a: max(width, len(a)) for a in algorithms}        # whole names in the header
    lines = [f"Median time per call (µs); best of ours: ratio of medians (ratio of minima) to {reference}",
             f"{unit:>8} {'mode':<12}{'mpi':>{width}} " + " ".join(f"{a:>{widths[a]}}" for a in algorithms)
             + "  best of ours",
             "-" * (22 + width + sum(w + 1 for w in widths.values()) + 26)]
    for n in sorted({r["nelems"] for r in results}):
        for i, mode in enumerate(modes):
            mpi = f"{med[(n, 'mpi', 'mpi')] * 1e6:>{width}.1f}" if i == 0 else " " * width
            cells = " ".join(f"{med[(n, a, mode)] * 1e6:>{widths[a]}.1f}" for a in algorithms)
            t = tab[n][mode]
            lines.append(f"{n if i == 0 else '':>8} {mode:<12}{mpi} {cells}  {t['best']} x{t['best_ratio']:.2f} "
                         f"({t['best_by_min']} x{t['best_min_ratio']:.2f})")
    bad = sorted({(r["nelems"], r["algorithm"]) for r in results if not r["correct"]})
    if bad:
        lines.append(f"WRONG RESULTS: {bad}")
    return "\n".join(lines)


#: calls per sample of the collective benchmarks (see :func:`time_interleaved`)
DEFAULT_INNER = 10


def add_inner_option(p, default: int = DEFAULT_INNER) -> None:
    """``--inner K``: calls per sample, back to back after one barrier (:func:`time_interleaved`)."""
    p.add_argument("--inner", type=positive_int, default=default,
                   help=f"calls per sample, back to back after one barrier, time / K, slowest rank: the "
                        f"barrier's exit skew is charged once per K calls (default {default}; 1: a barrier "
                        "before every call)")


def mode_call(mode: str, door: Callable, args: tuple, kwargs: dict, executor: Callable) -> Callable:
    """The timed call of one mode of :data:`MODES`: the front door ``door(*args, **kwargs)``
    as users call it, the same with ``check=False``, or ``executor()`` (which makes the call
    of the algorithm alone)."""
    if mode == "default":
        return functools.partial(door, *args, **kwargs)
    if mode == "check=False":
        return functools.partial(door, *args, check=False, **kwargs)
    return executor()


def add_once_options(p, default_n: int, n_help: str, all_ranks: bool = False) -> None:
    """The options of a one-algorithm command (``allreduce``, ``allgather``, ``alltoall``):
    ``-N``, ``--dtype``, ``--repeat``, ``--warmup``, ``--json``.  ``-N`` is checked against
    memory for the widest dtype (16 bytes) and 4 buffers (``all_ranks``: each holds a block
    per rank)."""
    p.add_argument("-N", type=count_of(16, 4, all_ranks), default=default_n, help=n_help)
    p.add_argument("--dtype", choices=DTYPES, default="float64", help="numpy element type of the vectors (native byte order; default: float64)")
    p.add_argument("--repeat", type=sample_count, default=20, help="calls timed, each after a barrier (default 20)")
    add_options(p, warmup=(3, "untimed calls first (default 3)"), progress=False)


#: the numpy dtypes of the one-algorithm commands
DTYPES = ("float64", "float32", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint8",
          "complex128", "complex64")


def once(comm, args, call: Callable, reference: Callable, *, collective: str, reference_name: str,
         describe: str, matches: Callable = np.array_equal, after: Callable = lambda: ([], {})) -> int:
    """A one-algorithm command: ``call(out=None)`` once (a ValueError: exit status 2 with one
    line), its result compared with ``reference()`` (MPI's own, on every rank), then
    ``args.repeat`` timed calls ``call(out)`` after ``args.warmup`` untimed ones, each after a
    barrier, a call's time being the slowest rank's (:func:`time_interleaved`, one call per
    sample, as :func:`loop_method` says in the output); the report (``describe``)
    and the JSON.  ``after()`` (collective, after the check) returns more lines to print and
    more JSON fields.  Exit status 1 if the result differs from MPI's."""
    from mpi4py import MPI

    rank = comm.Get_rank()
    oversubscribed = warn_if_oversubscribed(comm)
    try:  # first, so that invalid arguments end in a message, not in an MPI error
        out = call(None)
    except ValueError as exc:
        if rank == 0:
            print(f"error: {exc}", file=sys.stderr)
        return 2
    ok = comm.allreduce(bool(matches(out, reference())), op=MPI.LAND)
    extra, fields = after()
    # a call ends when the slowest rank is done; one call per barrier: what a single call costs
    samples = time_interleaved(comm, [lambda: call(out)], args.repeat, args.warmup)[0]
    if rank == 0:
        stats = summarize(samples)
        print(f"{describe}: {'correct' if ok else 'WRONG'} (vs {reference_name}); min {stats['min_s'] * 1e6:.1f} µs, "
              f"median {stats['median_s'] * 1e6:.1f} µs over {args.repeat} calls"
              + (" (oversubscribed)" if oversubscribed else ""), flush=True)
        print(f"timing: {loop_method(1)}")
        for line in extra:
            print(line)
        save(comm, args.json, collective, oversubscribed, parameters(args), correct=ok, **fields,
             timing_method=loop_method(1), results=stats)
    if not ok:
        if rank == 0:
            print(f"error: the result differs from {reference_name}", file=sys.stderr)
        return 1
    return 0
