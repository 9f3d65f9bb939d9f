"""What a simulation will cost, known before it runs: transfers, steps, memory and time.

A schedule's size is extrapolated from small builds of the same algorithm (at
:data:`PROBE`, 2 PROBE and 4 PROBE ranks): every count of the registry's builders grows
like ``C P^k (log2 P)^j`` between them (:func:`_fit`; exact at powers of two for P log P
and P^2 counts; at other P an algorithm that pads to the power of two above holds up to 2x
more).  :func:`refusal` turns the estimate into one line naming the limit that a run would
pass and the largest P that fits.

Three counts are extrapolated: the transfers the schedule holds, its steps, and its
*candidate* transfers: the (rank, block) pairs a builder handles before it drops the
empty ones (:func:`netmodels.algorithms.arrays.nonzero_step`).  With few elements the
two differ: ring allreduce of one element on 10^6 ranks holds 2·10^6 transfers, but its
builder walks 2·10^12 candidates (P per step), which is what makes it slow.  The
candidates are counted by building the probes with a vector long enough that no block is
empty (``max(N, 4 PROBE)`` elements).

**Long vectors.**  A pipelined algorithm (snake, fence: a builder with a ``block`` option)
repeats one block's transfers once per block, one step later each: its counts are those of
one block (built at N = 1) times its number of blocks, N / block, computed at the real P
and N before anything is built (``blocks``, :func:`netmodels.simulate.cli.pipeline_blocks`).
Any other algorithm above :data:`NPROBE` elements is also extrapolated in N, from builds
at NPROBE and 2 NPROBE elements.  A run that cannot be estimated (a probe fails, or needs
more memory than there is) is refused unless it is small in both P and N, never run blind.

**Rates, measured here.**  The module's constants are the rates of the kit's 2-core
machine (a transfer about 1/3e6 s, a step 65 µs of Python, a candidate 5 ns; the loggopsim
loop about :data:`LOGGOPSIM_MESSAGES_PER_S` messages per second; memory per transfer of the
largest step, per transfer held, per step, per candidate).  They give the shape of the cost;
its size on this machine, for this algorithm under this semantics, is measured
(:func:`estimate`): the run's own build and simulation at a probe size that takes about
:data:`PROBE_S` of CPU (sized by a smaller probe first) scales the time, and a run of the
probe under :mod:`tracemalloc` scales the memory.  So a family the constants
misjudge (the incast of alltoall.direct, the event loop of loggopsim) is priced by what it
costs here.  Two costs a small probe cannot see are charged apart: the page faults of a
builder whose steps' dropped candidates are mapped afresh (:func:`fault_seconds`), and the
loggopsim loop's cache misses once its messages outgrow the last-level cache
(:func:`miss_seconds`).  And a run whose steps' arrays are too large for the C allocator
to reuse maps each afresh and faults it in again, which a probe in a warm heap would not:
its probe is then timed with fresh mappings (:func:`_fresh_memory`).
``benchmarks/budget_accuracy.py`` compares the estimates with runs.

**Memory left** is the node's available memory and what the process's own limits leave
(``ulimit -v``: :func:`netmodels.commandline.available_memory`).
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass

#: ranks are int32 in the schedules (and in MPI)
MAX_RANKS = 2**31 - 1
#: ranks of the smaller probe build (the larger has twice as many)
PROBE = 128
#: slowest simulation rate measured, transfers per second
TRANSFERS_PER_S = 3e6
#: Python cost of one step, built and simulated, seconds
STEP_S = 65e-6
#: builder cost of one candidate transfer (see the module's docstring), seconds
CANDIDATE_S = 5e-9
#: peak memory per transfer of the largest step, bytes
BYTES_PER_TRANSFER = 100
#: memory per transfer held by the whole schedule, bytes
BYTES_PER_HELD_TRANSFER = 24
#: memory per step of a schedule, bytes
BYTES_PER_STEP = 1200
#: builder memory per candidate of its largest step, bytes
BYTES_PER_CANDIDATE = 64
#: a run estimated longer than this is refused (without --force), seconds
MAX_SECONDS = 300.0
#: elements of the probe builds when N is larger (the counts are extrapolated in N beyond)
NPROBE = 2**14
#: the loggopsim semantics' event loop: messages per second (slow side), bytes per
#: message at its peak (layout, matching and terms), and its runtime's fixed memory (bytes)
LOGGOPSIM_MESSAGES_PER_S = 5e5
LOGGOPSIM_BYTES_PER_MESSAGE = 70
LOGGOPSIM_FIXED_BYTES = 2.5e8
#: the loggopsim loop's own arrays (numba's, which tracemalloc does not see): per message its
#: layout, matching key and balance (4 int32), per rank 15 int64 and two heap entries of 3
LOOP_BYTES_PER_MESSAGE = 16
LOOP_BYTES_PER_RANK = 15 * 8 + 2 * 3 * 8

#: system time of the page faults per byte of a fresh mapping (measured on the kit's machine: 2.5 ns,
#: huge pages compacted on demand), and the size above which the C allocator maps a block afresh
#: for each allocation (glibc's largest dynamic mmap threshold), bytes
FAULT_S_PER_BYTE = 2.5e-9
MMAP_THRESHOLD = 32 * 2**20

#: bytes of one array element of a step (int64 or float64): a step's arrays are mapped afresh for
#: each allocation once ``largest step * STEP_ARRAY_BYTES`` exceeds :data:`MMAP_THRESHOLD`
STEP_ARRAY_BYTES = 8
#: glibc's ``mallopt`` parameters (``malloc.h``) and the block size above which a probe maps
#: its memory afresh (:func:`_fresh_memory`), bytes
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
FRESH_ABOVE = 256 * 2**10

#: the loggopsim loop's cost per message of working set that no longer fits the last-level cache
#: (a few misses to memory per event), s; the cache's size is the machine's (:func:`cache_bytes`)
LOGGOPSIM_MISS_S = 0.3e-6

#: wall time a probe of this machine's speed is sized to take (:func:`estimate`), s
PROBE_S = 0.2
#: an estimate at the module's rates this many times the limit is refused without a probe
NO_PROBE_BEYOND = 100

#: names of the counts, in the order :class:`Growth` holds them
COUNTS = ("transfers", "steps", "largest step", "candidates", "largest step's candidates")


@dataclass(frozen=True)
class Growth:
    """Counts of a schedule at ``p0`` ranks and ``n0`` elements (:data:`COUNTS`), the powers
    of P and of log2 P each grows with (``powers``, ``logs``), and the power of N beyond ``n0``.  A pipelined schedule
    (``blocks``: ranks, elements -> its number of blocks) holds the counts of one block,
    which every block repeats one step later (:func:`netmodels.algorithms.combining._pipeline`)."""

    p0: int
    counts: tuple[int, ...]
    powers: tuple[float, ...]
    n0: int = 0
    npowers: tuple[float, ...] = (0.0,) * len(COUNTS)
    blocks: Callable[[int, int], int] | None = None
    logs: tuple[float, ...] = (0.0,) * len(COUNTS)

    def at(self, nprocs: int, nelems: int | None = None) -> tuple[float, ...]:
        """The counts extrapolated to ``nprocs`` ranks (where P is not a power of two, some
        algorithms pad, fold or add rounds: they hold up to the counts of the power of two
        above, up to 2x more for a count growing like P^2), and to ``nelems`` elements (None: ``n0``); a pipeline's from its
        number of blocks at ``nprocs`` and ``nelems``."""
        top = nprocs
        if top > self.p0:
            r, logs = top / self.p0, math.log2(top) / math.log2(self.p0)
            # a count growing like log P (tree depths, rounds) jumps between probes: never less than that
            out = [max(c * r**k * logs**j, c * logs) for c, k, j in zip(self.counts, self.powers, self.logs)]
        else:
            out = list(self.counts)
        if self.blocks is not None:
            b = self.blocks(nprocs, self.n0 if nelems is None else nelems)
            transfers, steps, largest = out[0], out[1], out[2]
            largest = min(b * largest, transfers)      # at most b blocks in a step, at most one block's all
            steps = b + steps - 1 if b else 0
            return (b * transfers, steps, largest, b * transfers, largest)
        if nelems is not None and nelems > self.n0 > 0:
            out = [c * (nelems / self.n0) ** k for c, k in zip(out, self.npowers)]
        return tuple(out)

    def terms(self, nprocs: int, nelems: int | None = None, semantics: str = "sync") -> tuple[float, float]:
        """The seconds of :meth:`cost` in two terms: the steps', the transfers' and candidates'."""
        transfers, steps, _, candidates, _ = self.at(nprocs, nelems)
        units = transfers / TRANSFERS_PER_S + candidates * CANDIDATE_S
        if semantics == "loggopsim":
            units += transfers / LOGGOPSIM_MESSAGES_PER_S
        return steps * STEP_S, units

    def cost(self, nprocs: int, nelems: int | None = None, semantics: str = "sync") -> tuple[float, float]:
        """``(seconds, peak bytes)`` of building and simulating at ``nprocs`` ranks and
        ``nelems`` elements under ``semantics``, at the kit machine's rates (the module's
        constants; :func:`estimate` scales the seconds by this machine's)."""
        transfers, steps, largest, candidates, largest_candidates = self.at(nprocs, nelems)
        seconds = sum(self.terms(nprocs, nelems, semantics))
        peak = max(largest * BYTES_PER_TRANSFER, transfers * BYTES_PER_HELD_TRANSFER,
                   largest_candidates * BYTES_PER_CANDIDATE) + steps * BYTES_PER_STEP
        if semantics == "loggopsim":
            peak = transfers * (BYTES_PER_HELD_TRANSFER + LOGGOPSIM_BYTES_PER_MESSAGE)
        return seconds, peak


def fault_seconds(counts: tuple[float, ...]) -> float:
    """System seconds of the page faults of a build's dropped candidates (:data:`COUNTS`): a
    builder whose largest step walks more than :data:`MMAP_THRESHOLD` of candidates
    (:data:`BYTES_PER_CANDIDATE` each) allocates each step's candidates afresh, and every byte
    of those it drops is faulted in (:data:`FAULT_S_PER_BYTE`).  A smaller probe reuses its
    heap and does not see this cost."""
    transfers, _, _, candidates, largest_candidates = counts
    if largest_candidates * BYTES_PER_CANDIDATE <= MMAP_THRESHOLD:
        return 0.0
    return max(candidates - transfers, 0.0) * BYTES_PER_CANDIDATE * FAULT_S_PER_BYTE


def cache_bytes() -> int:
    """Size of this machine's last-level CPU cache in bytes (32 MiB if it cannot be read)."""
    best = 0
    for index in range(8):
        try:
            with open(f"/sys/devices/system/cpu/cpu0/cache/index{index}/size") as f:
                text = f.read().strip()
        except OSError:
            continue
        unit = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
        try:
            best = max(best, int(text.rstrip("KMG")) * unit)
        except ValueError:
            continue
    return best or 32 * 2**20


def miss_seconds(transfers: float, cache: int) -> float:
    """Seconds the loggopsim loop spends on cache misses for ``transfers`` messages: each
    costs :data:`LOGGOPSIM_MISS_S` times the share of its working set (:data:`LOGGOPSIM_BYTES_PER_MESSAGE`
    plus :data:`LOOP_BYTES_PER_MESSAGE` a message) beyond ``cache`` bytes."""
    working = transfers * (LOGGOPSIM_BYTES_PER_MESSAGE + LOOP_BYTES_PER_MESSAGE)
    return 0.0 if working <= cache else transfers * LOGGOPSIM_MISS_S * (1 - cache / working)


def fresh_steps(counts: tuple[float, ...]) -> bool:
    """Whether a run's largest step (:data:`COUNTS`: its transfers or candidates) has arrays of
    about :data:`MMAP_THRESHOLD` or more: the C allocator then maps each of them afresh, and
    every byte is faulted in again.  "About": within 1/64, as the counts are extrapolated
    (alltoall.direct at P = 2048 has P (P - 1) transfers, but arrays of P^2 elements, 32 MiB
    exactly, and ran 2.1x its estimate from a probe that reused its heap)."""
    return max(counts[2], counts[4]) * STEP_ARRAY_BYTES >= MMAP_THRESHOLD * (1 - 1 / 64)


@contextlib.contextmanager
def _fresh_memory(active: bool):
    """While ``active``, a block above :data:`FRESH_ABOVE` is mapped afresh and returned when
    freed, as a run whose steps are :func:`fresh_steps` has each of its large blocks: a probe
    at a smaller size then pays the page faults the run will pay (alltoall.direct at P = 4096
    took 2.2x its estimate from a probe that reused its heap).  Afterwards the thresholds are
    glibc's largest dynamic ones (32 MiB, trimming above 64 MiB), as a long run reaches them.
    Nothing is changed where the C library has no ``mallopt`` (not glibc)."""
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None) if active else None
    if mallopt is None:
        yield
        return
    mallopt(_M_MMAP_THRESHOLD, FRESH_ABOVE)
    mallopt(_M_TRIM_THRESHOLD, FRESH_ABOVE)
    try:
        yield
    finally:
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
        mallopt(_M_TRIM_THRESHOLD, 2 * MMAP_THRESHOLD)


def _counts(schedule) -> tuple[int, int, int]:
    """``(transfers, steps, transfers of the largest step)`` of a schedule."""
    sizes = [len(s) for s in schedule.steps]
    return sum(sizes), len(sizes), max(sizes, default=0)


def growth(build, nelems: int, nprocs: int | None = None, blocks=None) -> Growth | None:
    """The growth of ``build(P, N)`` (ranks, elements -> ArraySchedule) at ``N = nelems``
    from builds at PROBE, 2 PROBE and 4 PROBE ranks (:func:`_fit`; at ``nprocs`` itself when
    it is at most 4 PROBE: no growth in P); the candidates from the same builds with
    ``max(nelems, 4 PROBE)`` elements; above :data:`NPROBE` elements, the growth in N from
    builds at NPROBE and 2 NPROBE.  A pipelined algorithm (``blocks(P, N)``: its number of
    blocks, which grows with N / block) is counted from builds of one block (N = 1) instead.
    None if a probe cannot be built (options tied to P, such as a mesh, or a probe that runs
    out of memory)."""
    if blocks is not None:
        g = growth(build, min(nelems, 1), nprocs)
        return None if g is None else Growth(g.p0, g.counts, g.powers, 1, blocks=blocks, logs=g.logs)
    sizes = (PROBE, 2 * PROBE, 4 * PROBE) if nprocs is None or nprocs > 4 * PROBE else (nprocs,)
    n0 = min(nelems, NPROBE)
    full = n0 if n0 == 0 else max(n0, sizes[-1])
    try:
        counts = []
        for p in sizes:
            c = _counts(build(p, n0))
            cf = _counts(build(p, full)) if full != n0 else c
            counts.append((*c, max(c[0], cf[0]), max(c[2], cf[2])))
        longer = _counts(build(sizes[-1], 2 * NPROBE)) if nelems > NPROBE else None
    except (ValueError, TypeError, MemoryError):
        return None
    large = counts[-1]
    powers = (0.0,) * len(COUNTS)
    logs = (0.0,) * len(COUNTS)
    if len(counts) == 3:
        powers, logs = zip(*(_fit(*c) for c in zip(*counts)))
    npowers = (0.0,) * len(COUNTS)
    if longer is not None:
        longer = (*longer, longer[0], longer[2])
        npowers = tuple(max(math.log2(max(b, 1) / max(a, 1)), 0.0) for a, b in zip(large, longer))
    return Growth(sizes[-1], large, powers, n0 if nelems > NPROBE else 0, npowers, logs=logs)


def _fit(a: float, b: float, c: float) -> tuple[float, float]:
    """``(k, j)`` of a count ``C P^k (log2 P)^j`` that is ``a``, ``b``, ``c`` at PROBE, 2 PROBE
    and 4 PROBE ranks, with ``j`` in 0 .. 2 (else j = 0 and k from the last two: a count that
    jumps between probes)."""
    a, b, c = (max(x, 1) for x in (a, b, c))
    l0, l1, l2 = (math.log2(PROBE * f) for f in (1, 2, 4))
    r1, r2 = math.log2(b / a), math.log2(c / b)
    u1, u2 = math.log2(l1 / l0), math.log2(l2 / l1)
    j = (r1 - r2) / (u1 - u2)
    if not 0 <= j <= 2:
        return max(r2, 0.0), 0.0
    return max(r1 - j * u1, 0.0), j


@dataclass(frozen=True)
class Estimate:
    """What a run will cost: ``seconds`` (CPU, on this machine when ``probe`` is set),
    ``peak`` (bytes above what the process holds before it builds), the counts at its size
    (:data:`COUNTS`), and the probe that measured this machine's rates: ``(P, N, CPU seconds
    measured, seconds at the module's rates, peak bytes measured, peak bytes at the module's
    rates)``, or None."""

    seconds: float
    peak: float
    counts: tuple[float, ...]
    probe: tuple | None
    growth: Growth


def _probe_point(g: Growth, nprocs: int, nelems: int, semantics: str, seconds: float,
                 scale: float = 1.0) -> tuple[int, int]:
    """The largest size up to ``(nprocs, nelems)``, P first, then N, doubled from the
    growth's probe while it is estimated (the module's rates times ``scale``) to take at
    most ``seconds`` times the square root of 2 (the doubling nearest ``seconds``: allgather
    ring at 5792 ranks probed at 512 ranks, where its steps' Python cost dominates, was 3.8x
    over).  A run of at least one element per rank (and at most :data:`NPROBE`)
    is probed at its own elements per rank, N / P: its blocks as even (or uneven) as the
    run's, whose layout and memory differ (ring allreduce at P = N = 2896 probed at 512
    ranks and 2896 elements traced 3.5x the memory of 512 and 2048)."""
    def fits(p, n):                 # the doubling nearest to ``seconds`` (within sqrt 2), not only below it
        return scale * g.cost(p, n, semantics)[0] <= math.sqrt(2) * seconds

    per_rank = g.blocks is None and nprocs <= nelems <= NPROBE

    def elems(p):
        return min(nelems, max(p, nelems * p // nprocs)) if per_rank else n

    p, n = min(nprocs, g.p0), min(nelems, NPROBE if g.blocks is None else 1)
    n = elems(p)
    while p < nprocs and fits(min(2 * p, nprocs), elems(min(2 * p, nprocs))):
        p = min(2 * p, nprocs)
        n = elems(p)
    while not per_rank and n < nelems and fits(p, min(max(2 * n, 1), nelems)):
        n = min(max(2 * n, 1), nelems)
    return p, n


def _probe(g: Growth, build, simulate, nprocs: int, nelems: int, semantics: str):
    """``(P, N, CPU s, s at the module's rates, traced peak bytes, peak bytes at the module's
    rates)`` of a probe (see :func:`estimate`): a first one sized to take a quarter of
    :data:`PROBE_S` at the module's rates, then one sized by its measured speed.  (A fit of
    separate scales for the steps' and the transfers' terms from the two was tried: the
    first probe's fixed costs threw it off, up to 50x on two-phase broadcast.)"""
    if semantics == "loggopsim":
        simulate(build(2, min(nelems, 2)))          # the compiled loop loaded (or compiled) first
    fresh = fresh_steps(g.at(nprocs, nelems))
    scale, last = 1.0, None
    for share in (4, 1):
        p, n = _probe_point(g, nprocs, nelems, semantics, PROBE_S / share, scale)
        if (p, n) == last:              # run once only: a second run finds its memory mapped, many times faster
            break
        last = (p, n)
        with _fresh_memory(fresh and not fresh_steps(g.at(p, n))):
            t0 = time.process_time()
            schedule = build(p, n)                  # the build is timed too: some cost most there
            simulate(schedule)
            took = max(time.process_time() - t0, 1e-4)
        scale = took / g.cost(p, n, semantics)[0]
        del schedule
    tracemalloc.start()
    try:
        simulate(build(p, n))
        traced = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return p, n, took, g.cost(p, n, semantics)[0], traced, g.cost(p, n, semantics)[1]


def estimate(build, nprocs: int, nelems: int, semantics: str = "sync", simulate=None,
             blocks=None) -> Estimate | None:
    """The cost of ``simulate(build(nprocs, nelems))`` (:class:`Estimate`), None if it cannot
    be estimated (:func:`growth`).  With ``simulate`` (schedule -> anything, the very run to
    come), this machine's rates are measured on the algorithm itself under ``semantics``: a
    probe at the largest size estimated to take :data:`PROBE_S` (:func:`_probe`) is built and
    simulated twice,
    once for its CPU time, once under :mod:`tracemalloc` for its peak memory, and the
    module's estimates are scaled by the two measured ratios (a probe that runs out of memory:
    None) (the loggopsim loop's own arrays,
    which tracemalloc does not see, are added: :data:`LOOP_BYTES_PER_MESSAGE`,
    :data:`LOOP_BYTES_PER_RANK`).  Without ``simulate``, or when the estimate is beyond any
    probe's correction (:data:`NO_PROBE_BEYOND` times the limit), the module's rates stand.
    ``blocks``: see :func:`growth`."""
    g = growth(build, nelems, nprocs, blocks)
    if g is None:
        return None
    seconds, peak = g.cost(nprocs, nelems, semantics)
    probe = None
    if simulate is not None and seconds <= NO_PROBE_BEYOND * MAX_SECONDS:
        try:
            probe = _probe(g, build, simulate, nprocs, nelems, semantics)
        except MemoryError:
            return None
        p, n, took, at_rates, traced, peak_at_rates = probe
        faults = fault_seconds(g.at(p, n))          # the probe's own, charged apart
        seconds *= max(took - faults, took / 4) / at_rates
        seconds += fault_seconds(g.at(nprocs, nelems))
        if semantics == "loggopsim":                # the probe's misses are in its time: only the excess
            cache = cache_bytes()
            seconds += max(miss_seconds(g.at(nprocs, nelems)[0], cache) - miss_seconds(g.at(p, n)[0], cache), 0.0)
        peak *= traced / peak_at_rates
        if semantics == "loggopsim":
            transfers = g.at(nprocs, nelems)[0]
            peak += transfers * LOOP_BYTES_PER_MESSAGE + nprocs * LOOP_BYTES_PER_RANK
    elif semantics == "loggopsim":
        peak += LOGGOPSIM_FIXED_BYTES
    return Estimate(seconds, peak, g.at(nprocs, nelems), probe, g)


def refusal(build, nprocs: int, nelems: int, memory: float | None, force: bool = False,
            semantics: str = "sync", simulate=None, blocks=None) -> str | None:
    """One line saying which limit simulating ``build(nprocs, nelems)`` under ``semantics``
    would pass, or None if it fits (or is small enough to build at once).  ``memory``:
    bytes available (None: unknown).  ``force`` passes the time and memory limits, never
    the int32 one.  ``simulate``, ``blocks``: see :func:`estimate`."""
    if nprocs > MAX_RANKS:
        fit = "" if force else "; " + _largest_fit(growth(build, nelems, None, blocks), MAX_RANKS, nelems, memory,
                                                   semantics) + " fits"
        return (f"P = {nprocs} is above 2^31 - 1 = {MAX_RANKS}, the most ranks a schedule holds "
                f"(int32){fit}")
    small = nprocs <= 4 * PROBE and nelems <= NPROBE
    if force or (small and semantics != "loggopsim"):
        return None
    est = estimate(build, nprocs, nelems, semantics, simulate, blocks)
    if est is None:
        if small:
            return None
        return (f"P = {nprocs}, N = {nelems} cannot be estimated (a trial build at {min(nprocs, PROBE)} ranks "
                f"and {min(nelems, NPROBE)} to {2 * NPROBE} elements failed or ran out of memory); "
                "--force runs it anyway")
    seconds, peak = est.seconds, est.peak
    transfers, steps, largest, candidates, _ = est.counts
    scale = est.seconds / g_cost if (g_cost := est.growth.cost(nprocs, nelems, semantics)[0]) > 0 else 1.0
    over = []
    if seconds > MAX_SECONDS:
        walked = f", {candidates:.2g} candidates" if candidates > 2 * transfers else ""
        over.append(f"about {human(seconds)} ({transfers:.2g} transfers in {_count(steps)} steps{walked}"
                    f"{' under loggopsim' if semantics == 'loggopsim' else ''}; the limit is {MAX_SECONDS:.3g} s)")
    if memory is not None and peak > memory:
        over.append(f"about {peak / 2**30:.3g} GiB of memory ({memory / 2**30:.3g} GiB are available)")
    if not over:
        return None
    g = est.growth
    where = f"P = {nprocs}" + (f", N = {nelems}" if nelems > NPROBE else "")
    return f"{where} would take {' and '.join(over)}; {_largest_fit(g, nprocs, nelems, memory, semantics, scale)} " \
           "fits (--force runs it anyway)"


def _largest_fit(g: Growth | None, nprocs: int, nelems: int, memory: float | None, semantics: str,
                 scale: float = 1.0) -> str:
    """The largest power of two P <= ``nprocs`` whose estimate fits (its seconds times
    ``scale``, this machine's speed against the module's rates), as ``P = 2^k = P`` (or
    that none does at this N)."""
    def fits(p):
        seconds, peak = g.cost(p, nelems, semantics)
        return seconds * scale <= MAX_SECONDS and (memory is None or peak <= memory)

    p = 1 << (min(nprocs, MAX_RANKS).bit_length() - 1)
    while g is not None and p > g.p0 and not fits(p):
        p //= 2
    if g is not None and nelems > NPROBE and not fits(p):
        return f"no P at N = {nelems} (a smaller N)"
    return f"P = 2^{p.bit_length() - 1} = {p}"


def _count(x: float) -> str:
    return f"{math.ceil(x):,}" if x < 1e6 else f"{x:.2g}"


def human(seconds: float) -> str:
    """``seconds`` in the largest unit that fits (years, days, hours, minutes, s), 3 digits."""
    for unit, size in (("years", 3.15e7), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"
