"""Message buffers on pages of a known kind.

Where a buffer's bytes lie in memory changes how fast MPI moves them.  On Linux with
transparent huge pages in ``madvise`` mode, numpy asks for 2 MiB pages for every array of
4 MiB or more, but only for the 2 MiB-aligned part inside it; which part that is depends on
the address ``malloc`` returns, so it changes from launch to launch.  On a 2-core VM with
MPICH over UCX, a 1 MiB ping-pong took 22 µs one way on 2 MiB pages and 67 µs on 4 KiB
pages, and ``np.empty`` buffers gave 45 µs in one launch and 57 µs in the next.  Every
buffer a benchmark or the executor times is therefore allocated here: page-aligned (as the
OSU micro-benchmarks align theirs), on fresh private memory, with the page kind stated to
the kernel, and with every page written, so that the first timed message does not pay the
page faults (and a never-written page is not the kernel's shared zero page).

``small`` (the default) asks for ordinary pages (``MADV_NOHUGEPAGE``); ``huge`` asks for
2 MiB transparent huge pages (``MADV_HUGEPAGE``), which the kernel may or may not grant:
:func:`huge_page_bytes` tells how much of a buffer it did.  Where ``madvise`` or the advice
does not exist (not Linux), the kind is whatever the system gives.
"""

from __future__ import annotations

import mmap
import re
from pathlib import Path

import numpy as np

KINDS = ("small", "huge")       #: the page kinds a buffer can ask for
HUGE_PAGE = 2 << 20             #: bytes of an x86-64 transparent huge page
_ADVICE = {"small": getattr(mmap, "MADV_NOHUGEPAGE", None), "huge": getattr(mmap, "MADV_HUGEPAGE", None)}
_THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def allocate(shape, dtype=np.uint8, pages: str = "small") -> np.ndarray:
    """A zero-filled C-contiguous array of ``shape`` and ``dtype`` on fresh private memory
    aligned to its pages (4 KiB, or 2 MiB for ``huge``), every page written, asking the
    kernel for ``pages`` ("small" or "huge").  The memory lives as long as the array (or any
    view of it)."""
    if pages not in KINDS:
        raise ValueError(f"pages must be one of {KINDS}, got {pages!r}")
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    nbytes = count * dtype.itemsize
    align = HUGE_PAGE if pages == "huge" else mmap.PAGESIZE
    span = max(-(-nbytes // align) * align, align)
    flags = getattr(mmap, "MAP_PRIVATE", 0) | getattr(mmap, "MAP_ANONYMOUS", 0)
    region = mmap.mmap(-1, span + align - mmap.PAGESIZE, **({"flags": flags} if flags else {}))
    raw = np.frombuffer(region, dtype=np.uint8)
    start = (-raw.ctypes.data) % align
    advice = _ADVICE[pages]
    if advice is not None and hasattr(region, "madvise"):
        region.madvise(advice, start, span)
    array = raw[start:start + nbytes].view(dtype).reshape(shape)
    raw[start:start + span] = 0          # every page written: faulted in now, not when timed
    return array


def huge_page_bytes(array: np.ndarray) -> int | None:
    """Bytes of transparent huge pages backing the mappings that hold ``array`` (from
    ``/proc/self/smaps``), or None where that file does not exist."""
    smaps = Path("/proc/self/smaps")
    if not smaps.exists():
        return None
    address = array.ctypes.data
    total, inside = 0, False
    for line in smaps.read_text().splitlines():
        head = re.match(r"^([0-9a-f]+)-([0-9a-f]+) ", line)
        if head:
            lo, hi = int(head.group(1), 16), int(head.group(2), 16)
            inside = lo <= address < hi or address <= lo < address + array.nbytes
        elif inside and line.startswith("AnonHugePages:"):
            total += int(line.split()[1]) * 1024
    return total


def transparent_huge_pages() -> str | None:
    """The kernel's transparent-huge-page mode ("always", "madvise" or "never"), or None
    where the system does not say."""
    try:
        text = _THP.read_text()
    except OSError:
        return None
    chosen = re.search(r"\[(\w+)\]", text)
    return chosen.group(1) if chosen else None


def copy(values, pages: str = "small") -> np.ndarray:
    """``values`` copied into a buffer from :func:`allocate` (same shape and dtype)."""
    values = np.asarray(values)
    out = allocate(values.shape, values.dtype, pages)
    out[...] = values
    return out
