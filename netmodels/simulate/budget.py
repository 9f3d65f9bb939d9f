"""What a simulation will cost, known before it runs: transfers, steps, memory and time.

A schedule's size is extrapolated from small builds of the same algorithm (at
:data:`PROBE` and twice that many ranks): every count of the registry's builders grows
like a power of P between them (P log P grows a little slower than its fitted power, and
the counts are taken at the next power of two, so the estimate errs on the large side; the
pipelined mesh algorithms, whose number of blocks changes with P, can be off by up to 4x
either way: tests/test_simulate_budget.py).  :func:`refusal` turns the estimate into one line
naming the limit that a run would pass and the largest P that fits.

Three counts are extrapolated: the transfers the schedule holds, its steps, and its
*candidate* transfers: the (rank, block) pairs a builder handles before it drops the
empty ones (:func:`netmodels.algorithms.arrays.nonzero_step`).  With few elements the
two differ: ring allreduce of one element on 10^6 ranks holds 2·10^6 transfers, but its
builder walks 2·10^12 candidates (P per step), which is what makes it slow.  The
candidates are counted by building the probes with a vector long enough that no block is
empty (``max(N, 2 PROBE)`` elements).

The rates are those of ``python -m netmodels simulate`` on the kit's 2-core build
machine under a load average of about 3 (so on the slow side): a simulated transfer costs
about 1/3e6 s (alltoall.direct at P = 2^13: 6.7e7 transfers in 37 s, 1.8e6/s, the
slowest); a step costs about 65 µs of Python to build and simulate (ring allreduce at
P = 2^15 with one element: 4.0 s for 65,534 steps); a candidate costs between 0.8 ns (ring
allreduce, slices of one table) and about 100 ns (broadcast.two_phase, P^2 index
arithmetic), taken as 5 ns.  Memory: a step of m transfers holds about 100 bytes per
transfer at its peak (alltoall.direct at 2^13: 5.6 GB), a schedule about 24 bytes per
transfer it holds (allgather.ring at 2^14: 2.7e8 transfers in 4.3 GB) and 1.2 kB per step
(ring allreduce at 2^17 with one element: 280 MB for 262,142 steps), and a builder about
64 bytes per candidate of its largest step.  Known misses: alltoall.multilevel's builder
is about 10x slower per transfer than the rate above, so its time estimate is low; a
schedule whose options are tied to P (a ``mesh``) is not estimated at all.

**Long vectors.**  Pipelined algorithms (snake, fence, and any ``block`` option) have a
number of steps that grows with N, so above :data:`NPROBE` elements the counts are also
extrapolated in N, from builds at NPROBE and 2 NPROBE elements (at the real P when it is
small).  A run that cannot be estimated (a probe fails, or needs more memory than there
is) is refused unless it is small in both P and N, never run blind.

**The loggopsim semantics** (:mod:`netmodels.simulate.arrival`) adds its event loop: about
:data:`LOGGOPSIM_MESSAGES_PER_S` messages per second and :data:`LOGGOPSIM_BYTES_PER_MESSAGE`
bytes per message on top of the schedule, and :data:`LOGGOPSIM_FIXED_BYTES` for the
compiler's runtime (measured: dissemination at P = 2^20, 2.1e7 messages, 1.9 GB at its
peak in 19 s of CPU; ring allreduce at P = 2896, 1.7e7 messages, 1.3 GB in 8 s, on the
2-core machine under a load average of 5 to 10, so the rate is taken at half the best).
"""

from __future__ import annotations

import math
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

#: names of the counts, in the order :class:`Growth` holds them
COUNTS = ("transfers", "steps", "largest step", "candidates", "largest step's candidates")


@dataclass(frozen=True)
class Growth:
    """Counts of a schedule at ``p0`` ranks and ``n0`` elements (:data:`COUNTS`), the power
    of P each grows with, and the power of N beyond ``n0``."""

    p0: int
    counts: tuple[int, ...]
    powers: tuple[float, ...]
    n0: int = 0
    npowers: tuple[float, ...] = (0.0,) * len(COUNTS)

    def at(self, nprocs: int, nelems: int | None = None) -> tuple[float, ...]:
        """The counts extrapolated to ``nprocs`` ranks, taken at the next power of two
        (where P is not one, algorithms pad, fold or add rounds: the power of two above
        bounds them), and to ``nelems`` elements (None: ``n0``)."""
        top = 2 ** math.ceil(math.log2(nprocs))
        if top > self.p0:
            r, logs = top / self.p0, math.log2(top) / math.log2(self.p0)
            # a count growing like log P (tree depths, rounds) jumps between probes: never less than that
            out = [max(c * r**k, c * logs) for c, k in zip(self.counts, self.powers)]
        else:
            out = list(self.counts)
        if nelems is not None and nelems > self.n0 > 0:
            out = [c * (nelems / self.n0) ** k for c, k in zip(out, self.npowers)]
        return tuple(out)

    def cost(self, nprocs: int, nelems: int | None = None, semantics: str = "sync") -> tuple[float, float]:
        """``(seconds, peak bytes)`` of building and simulating at ``nprocs`` ranks and
        ``nelems`` elements under ``semantics``."""
        transfers, steps, largest, candidates, largest_candidates = self.at(nprocs, nelems)
        seconds = transfers / TRANSFERS_PER_S + steps * STEP_S + candidates * CANDIDATE_S
        peak = max(largest * BYTES_PER_TRANSFER, transfers * BYTES_PER_HELD_TRANSFER,
                   largest_candidates * BYTES_PER_CANDIDATE) + steps * BYTES_PER_STEP
        if semantics == "loggopsim":
            seconds += transfers / LOGGOPSIM_MESSAGES_PER_S
            peak = transfers * (BYTES_PER_HELD_TRANSFER + LOGGOPSIM_BYTES_PER_MESSAGE) + LOGGOPSIM_FIXED_BYTES
        return seconds, peak


def _counts(schedule) -> tuple[int, int, int]:
    """``(transfers, steps, transfers of the largest step)`` of a schedule."""
    sizes = [len(s) for s in schedule.steps]
    return sum(sizes), len(sizes), max(sizes, default=0)


def growth(build, nelems: int, nprocs: int | None = None) -> Growth | None:
    """The growth of ``build(P, N)`` (ranks, elements -> ArraySchedule) at ``N = nelems``
    from builds at PROBE and 2 PROBE ranks (at ``nprocs`` itself when it is at most
    4 PROBE: no growth in P); the candidates from the same builds with
    ``max(nelems, 2 PROBE)`` elements; above :data:`NPROBE` elements, the growth in N from
    builds at NPROBE and 2 NPROBE.  None if a probe cannot be built (options tied to P,
    such as a mesh, or a probe that runs out of memory)."""
    p_small, p_large = (PROBE, 2 * PROBE) if nprocs is None or nprocs > 4 * PROBE else (nprocs, nprocs)
    n0 = min(nelems, NPROBE)
    full = n0 if n0 == 0 else max(n0, 2 * PROBE)
    try:
        small = _counts(build(p_small, n0))
        large = small if p_large == p_small else _counts(build(p_large, n0))
        small_full, large_full = small, large
        if full != n0:
            small_full = _counts(build(p_small, full))
            large_full = small_full if p_large == p_small else _counts(build(p_large, full))
        longer = _counts(build(p_large, 2 * NPROBE)) if nelems > NPROBE else None
    except (ValueError, TypeError, MemoryError):
        return None
    small = (*small, max(small[0], small_full[0]), max(small[2], small_full[2]))
    large = (*large, max(large[0], large_full[0]), max(large[2], large_full[2]))
    powers = tuple(math.log2(max(b, 1) / max(a, 1)) for a, b in zip(small, large))
    npowers = (0.0,) * len(COUNTS)
    if longer is not None:
        longer = (*longer, longer[0], longer[2])
        npowers = tuple(max(math.log2(max(b, 1) / max(a, 1)), 0.0) for a, b in zip(large, longer))
    return Growth(p_large, large, powers, n0 if nelems > NPROBE else 0, npowers)


def refusal(build, nprocs: int, nelems: int, memory: float | None, force: bool = False,
            semantics: str = "sync") -> str | None:
    """One line saying which limit simulating ``build(nprocs, nelems)`` under ``semantics``
    would pass, or None if it fits (or is small enough to build at once).  ``memory``:
    bytes available (None: unknown).  ``force`` passes the time and memory limits, never
    the int32 one."""
    if nprocs > MAX_RANKS:
        fit = "" if force else "; " + _largest_fit(growth(build, nelems), MAX_RANKS, nelems, memory,
                                                   semantics) + " fits"
        return (f"P = {nprocs} is above 2^31 - 1 = {MAX_RANKS}, the most ranks a schedule holds "
                f"(int32){fit}")
    small = nprocs <= 4 * PROBE and nelems <= NPROBE
    if force or (small and semantics != "loggopsim"):
        return None
    g = growth(build, nelems, nprocs)
    if g is None:
        if small:
            return None
        return (f"P = {nprocs}, N = {nelems} cannot be estimated (a trial build at {min(nprocs, PROBE)} ranks "
                f"and {min(nelems, NPROBE)} to {2 * NPROBE} elements failed or ran out of memory); "
                "--force runs it anyway")
    seconds, peak = g.cost(nprocs, nelems, semantics)
    transfers, steps, largest, candidates, _ = g.at(nprocs, nelems)
    over = []
    if seconds > MAX_SECONDS:
        walked = f", {candidates:.2g} candidates" if candidates > 2 * transfers else ""
        over.append(f"about {human(seconds)} ({transfers:.2g} transfers in {_count(steps)} steps{walked}"
                    f"{' under loggopsim' if semantics == 'loggopsim' else ''}; the limit is {MAX_SECONDS:.3g} s)")
    if memory is not None and peak > memory:
        over.append(f"about {peak / 2**30:.3g} GiB of memory ({memory / 2**30:.3g} GiB are available)")
    if not over:
        return None
    where = f"P = {nprocs}" + (f", N = {nelems}" if nelems > NPROBE else "")
    return f"{where} would take {' and '.join(over)}; {_largest_fit(g, nprocs, nelems, memory, semantics)} fits " \
           "(--force runs it anyway)"


def _largest_fit(g: Growth | None, nprocs: int, nelems: int, memory: float | None, semantics: str) -> str:
    """The largest power of two P <= ``nprocs`` whose estimate fits, as ``P = 2^k = P``
    (or that none does at this N)."""
    def fits(p):
        seconds, peak = g.cost(p, nelems, semantics)
        return seconds <= MAX_SECONDS and (memory is None or peak <= memory)

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
