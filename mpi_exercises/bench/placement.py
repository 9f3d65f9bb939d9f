"""Where the ranks of a benchmark run and what the machine is: the launcher's variables,
usable cores, binding each rank to a core, oversubscription, a command's prologue, the load
average and the environment stored with every result.  Importing this module does not start MPI."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import sys

from ..pages import transparent_huge_pages


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


def two_ranks(script: str):
    """A two-rank benchmark script's prologue (collective): ``(MPI.COMM_WORLD, oversubscribed,
    environment, 1-minute load average)``, or None after one line on stderr (rank 0) when the
    job has not exactly 2 ranks (the script then exits with status 2)."""
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    if comm.Get_size() != 2:
        if comm.Get_rank() == 0:
            print(f"{script}: run it on 2 ranks (mpiexec -n 2 ...)", file=sys.stderr)
        return None
    oversubscribed = warn_if_oversubscribed(comm)
    return comm, oversubscribed, environment(comm), load_average()


def two_ranks_end(script: str, started: tuple, argv, json_path, **fields) -> int:
    """A two-rank benchmark script's epilogue (rank 0), after :func:`two_ranks`: its result
    (``benchmark``, ``environment``, ``oversubscribed``, the load before and after, the
    ``command`` that reproduces it, then ``fields``) written to ``json_path`` if given, and its
    last line, the load; returns 0."""
    from netmodels.outputs import write_json

    _, oversubscribed, env, load0 = started
    load1 = load_average()
    args = sys.argv[1:] if argv is None else list(argv)
    result = {"benchmark": script.removesuffix(".py"), "environment": env, "oversubscribed": oversubscribed,
              "load_average_1min": [load0, load1],
              "command": " ".join(["mpiexec -n 2 python", f"benchmarks/{script}", *args]), **fields}
    if json_path:
        write_json(json_path, result)
    print(f"load {load0:.2f} before, {load1:.2f} after" + (" OVERSUBSCRIBED" if oversubscribed else ""))
    return 0


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
