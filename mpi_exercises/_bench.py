"""Shared pieces of the benchmarks: argument types, oversubscription warning,
summary statistics and JSON results.  Importing this module does not start MPI."""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import sys

import numpy as np


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


nonneg_int = int_at_least(0)    #: argparse type: an integer >= 0
positive_int = int_at_least(1)  #: argparse type: an integer >= 1


def size_list(text: str) -> list[int]:
    """argparse type: comma-separated byte counts >= 0, e.g. ``0,8,1k``; suffixes k = 1024, M = 1024**2."""
    out = []
    for item in text.split(","):
        item = item.strip()
        scale = {"k": 1024, "K": 1024, "M": 1024**2}.get(item[-1:], 1)
        try:
            out.append(nonneg_int(item[:-1] if scale > 1 else item) * scale)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(
                f"sizes must be comma-separated integers >= 0 (suffix k or M allowed), got {text!r}") from None
    return sorted(set(out))


def name_list(known, always=()):
    """argparse type: a comma-separated, non-empty subset of ``known`` (``always`` appended)."""
    def parse(text: str) -> list[str]:
        names = [t.strip() for t in text.split(",") if t.strip()]
        if not names or any(n not in known for n in names):
            raise argparse.ArgumentTypeError(
                f"expected a comma-separated subset of {','.join(known)}; got {text!r}")
        return list(dict.fromkeys(names + list(always)))
    return parse


def capped_iterations(nbytes: int, iterations: int, budget_bytes: int, at_least: int) -> int:
    """Timed repetitions for one message size: ``iterations``, capped so that repetitions x
    ``nbytes`` stays within ``budget_bytes`` (large messages take fewer), but at least
    ``at_least`` (or ``iterations`` if that is smaller)."""
    return max(min(at_least, iterations), min(iterations, budget_bytes // max(nbytes, 1)))


# ---------------------------------------------------------------- environment
def usable_cores() -> int:
    """Cores this process may run on (affinity-aware where the OS tells)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


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
    """
    from mpi4py import MPI

    try:
        cpus = sorted(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        cpus = list(range(os.cpu_count() or 1))
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    leader = comm.allgather(comm.Get_rank() if node.Get_rank() == 0 else None)
    node_rank0 = node.bcast(comm.Get_rank(), root=0)
    node.Free()
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
    }


# ---------------------------------------------------------------- statistics and output
def summarize(samples) -> dict:
    """min, quartiles, median and max of timing samples in seconds."""
    s = np.asarray(samples, dtype=float)
    q = np.percentile(s, [0, 25, 50, 75, 100])
    return {"samples": int(s.size), "min_s": q[0], "p25_s": q[1], "median_s": q[2],
            "p75_s": q[3], "max_s": q[4]}


def write_json(path: str, payload: dict) -> None:
    """Write ``payload`` as indented JSON (numpy scalars converted)."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(payload, fh, indent=1, default=lambda o: o.item() if hasattr(o, "item") else str(o))
        fh.write("\n")


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


def time_interleaved(comm, calls: list, iters: int, warmup: int) -> np.ndarray:
    """Per-call times (s), shape (len(calls), iters): round-robin over ``calls``, so every
    variant sees the same machine conditions (other processes, frequency changes); each
    call follows a barrier; a call's time is the slowest rank's."""
    from mpi4py import MPI

    samples = np.empty((len(calls), iters))
    for i in range(-warmup, iters):
        for k, fn in enumerate(calls):
            comm.Barrier()
            t0 = MPI.Wtime()
            fn()
            if i >= 0:
                samples[k, i] = MPI.Wtime() - t0
    comm.Allreduce(MPI.IN_PLACE, samples, op=MPI.MAX)
    return samples


def compare(comm, sizes, algorithms, modes, prepare, nbytes, *, iterations, warmup, budget_bytes,
            desc="bench", progress=True) -> list[dict]:
    """Time every (algorithm, mode) and MPI's own collective, interleaved, for every size.

    ``prepare(n, algorithm, mode) -> (call, correct)`` makes the timed call and says
    whether its result equals MPI's (it is asked once with ``("mpi", "mpi")`` for the
    reference); ``nbytes(n)`` is the data per call that caps the repetitions
    (:func:`capped_iterations`).  One result per size and variant, on every rank:
    ``nelems, algorithm, mode, correct`` and :func:`summarize`'s statistics.
    """
    from mpi4py import MPI
    from tqdm import tqdm

    results = []
    for n in tqdm(sizes, desc=desc, unit="size", file=sys.stderr,
                  disable=(comm.Get_rank() != 0) or (not progress) or None):
        cases = [("mpi", "mpi")] + [(a, m) for a in algorithms if a != "mpi" for m in modes]
        calls, oks = [], []
        for algorithm, mode in cases:
            call, ok = prepare(n, algorithm, mode)
            calls.append(call)
            oks.append(comm.allreduce(bool(ok), op=MPI.LAND))
        iters = capped_iterations(nbytes(n), iterations, budget_bytes, at_least=10)
        for (algorithm, mode), ok, row in zip(cases, oks, time_interleaved(comm, calls, iters, warmup)):
            results.append(dict(nelems=n, algorithm=algorithm, mode=mode, correct=ok, **summarize(row)))
    return results


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
    lines = [f"Median time per call (µs); best of ours: ratio of medians (ratio of minima) to {reference}",
             f"{unit:>8} {'mode':<12}{'mpi':>{width}} " + " ".join(f"{a[:width]:>{width}}" for a in algorithms)
             + "  best of ours",
             "-" * (22 + (width + 1) * (len(algorithms) + 1) + 26)]
    for n in sorted({r["nelems"] for r in results}):
        for i, mode in enumerate(modes):
            mpi = f"{med[(n, 'mpi', 'mpi')] * 1e6:>{width}.1f}" if i == 0 else " " * width
            cells = " ".join(f"{med[(n, a, mode)] * 1e6:>{width}.1f}" for a in algorithms)
            t = tab[n][mode]
            lines.append(f"{n if i == 0 else '':>8} {mode:<12}{mpi} {cells}  {t['best']} x{t['best_ratio']:.2f} "
                         f"({t['best_by_min']} x{t['best_min_ratio']:.2f})")
    bad = sorted({(r["nelems"], r["algorithm"]) for r in results if not r["correct"]})
    if bad:
        lines.append(f"WRONG RESULTS: {bad}")
    return "\n".join(lines)
