"""What a benchmark records about the machine it ran on, beyond :mod:`placement`: the clock
source, the CPU model, the CPU a process last ran on, its memory on transparent huge pages,
where ``malloc`` puts a block of a given size, and MPICH's control variables of its intranode
large-message path (``benchmarks/launch_modes.py`` records them per launch).  Each returns None
(or an empty dict) where the system does not say."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path


def cvars() -> dict:
    """MPI's and its transports' settings in this process's environment (MPIR_CVAR_*, UCX_*, FI_*)."""
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith(("MPIR_CVAR_", "UCX_", "FI_"))}


def anon_huge_kib() -> int | None:
    """KiB of this process's anonymous memory on transparent huge pages (``AnonHugePages`` of
    /proc/self/smaps_rollup), None where unknown."""
    try:
        for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
            if line.startswith("AnonHugePages:"):
                return int(line.split()[1])
    except (OSError, IndexError, ValueError):
        pass
    return None


def malloc_offsets(lengths, page: int = 4096) -> dict:
    """Per length in bytes: the address mod 4 KiB of the block glibc's ``malloc`` hands out for
    that many bytes now (allocated, read, freed at once).  After MPICH's own temporary of the same
    size was freed, this is where MPICH's next one lands; None where there is no C library."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
    except OSError:
        return {int(n): None for n in lengths}
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    out = {}
    for n in lengths:
        ptr = libc.malloc(int(n))
        out[int(n)] = None if not ptr else int(ptr) % page
        libc.free(ptr)
    return out


def clock_source() -> str | None:
    """The kernel's clock source (``tsc``, ``hpet``, ...), which ``MPI.Wtime`` reads through
    ``clock_gettime``; None where unknown."""
    try:
        return Path("/sys/devices/system/clocksource/clocksource0/current_clocksource").read_text().strip()
    except OSError:
        return None


def last_cpu() -> int | None:
    """The CPU this process last ran on (field 39 of /proc/self/stat), None where unknown."""
    try:
        return int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[36])
    except (OSError, IndexError, ValueError):
        return None


def cpu_model() -> str | None:
    """The CPU's model name from /proc/cpuinfo (None where there is none)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_identity() -> dict:
    """The CPU's vendor, family, model and model name from /proc/cpuinfo (the first CPU's; empty
    where there is none): what a virtual machine says of the processor it runs on."""
    keys = {"vendor_id": "vendor", "cpu family": "family", "model": "model", "model name": "model_name"}
    out = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() in keys and keys[key.strip()] not in out:
                out[keys[key.strip()]] = int(value) if key.strip() in ("cpu family", "model") else value.strip()
            if not line.strip() and out:
                break
    except (OSError, ValueError):
        pass
    return out


#: MPICH's control variables of its intranode large-message path, recorded per launch
CVAR_PATTERN = re.compile(r"(MPIR_CVAR_CH4_(?:CMA_ENABLE|IPC_CMA_P2P_THRESHOLD|XPMEM_ENABLE|IPC_XPMEM_P2P_\w*|"
                          r"SHM\w*|NETMOD)) *=([^\t]*)")


def parse_cvars(listing: str) -> dict:
    """``{name: value}`` of :data:`CVAR_PATTERN`'s variables in ``mpivars``'s ``listing``."""
    return {m.group(1): m.group(2).strip() for m in CVAR_PATTERN.finditer(listing)}


def mpich_cvars(env: dict) -> dict:
    """The values MPICH takes for :data:`CVAR_PATTERN`'s control variables under ``env``, as
    ``mpivars`` (next to ``mpiexec``) lists them; empty where there is no ``mpivars``."""
    from mpi_exercises.labdata import mpiexec

    tool = Path(mpiexec()).with_name("mpivars")
    try:
        out = subprocess.run([str(tool)], env=env, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    return parse_cvars(out)
