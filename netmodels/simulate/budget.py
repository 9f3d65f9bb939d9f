"""What a simulation will cost, known before it runs: transfers, steps, memory and time.

A schedule's size is extrapolated from two small builds of the same algorithm (at
:data:`PROBE` and twice that many ranks): every count of the registry's builders grows
like a power of P between them (P log P grows a little slower than its fitted power, and
the counts are taken at the next power of two, so the estimate errs on the large side; the
pipelined mesh algorithms, whose number of blocks changes with P, can be off by up to 4x
either way: tests/test_simulate_budget.py).  :func:`refusal` turns the estimate into one line
naming the limit that a run would pass and the largest P that fits.

The rates are those of ``python benchmarks/simulate_scale.py`` on the kit's 2-core build
machine (README, "Simulating at scale"), rounded to the slow side: the slowest case moves
3e6 transfers/s, a step costs about 65 µs of Python to build and simulate (ring allreduce
at P = 2^15 with one element: 4.0 s for 65,534 steps), and a step of m transfers holds
about 100 bytes per transfer at its peak.
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
#: peak memory per transfer of the largest step, bytes
BYTES_PER_TRANSFER = 100
#: a run estimated longer than this is refused (without --force), seconds
MAX_SECONDS = 300.0


@dataclass(frozen=True)
class Growth:
    """Counts of a schedule at ``p0`` ranks (transfers, steps, transfers of the largest
    step) and the power of P each grows with."""

    p0: int
    counts: tuple[int, int, int]
    powers: tuple[float, float, float]

    def at(self, nprocs: int) -> tuple[float, float, float]:
        """The three counts extrapolated to ``nprocs`` ranks, taken at the next power of two
        (where P is not one, algorithms pad, fold or add rounds: the power of two above
        bounds them)."""
        top = 2 ** math.ceil(math.log2(nprocs))
        r, logs = top / self.p0, math.log2(top) / math.log2(self.p0)
        # a count growing like log P (tree depths, rounds) jumps between probes: never less than that
        return tuple(max(c * r**k, c * logs) for c, k in zip(self.counts, self.powers))

    def cost(self, nprocs: int) -> tuple[float, float]:
        """``(seconds, peak bytes)`` of building and simulating at ``nprocs`` ranks."""
        transfers, steps, largest = self.at(nprocs)
        return transfers / TRANSFERS_PER_S + steps * STEP_S, largest * BYTES_PER_TRANSFER


def _counts(schedule) -> tuple[int, int, int]:
    sizes = [len(s) for s in schedule.steps]
    return sum(sizes), len(sizes), max(sizes, default=0)


def growth(build) -> Growth | None:
    """The growth of ``build(P)`` (rank count -> ArraySchedule) from builds at PROBE and
    2 PROBE ranks; None if a probe cannot be built (options tied to P, such as a mesh)."""
    try:
        small, large = _counts(build(PROBE)), _counts(build(2 * PROBE))
    except (ValueError, TypeError):
        return None
    powers = tuple(math.log2(max(b, 1) / max(a, 1)) for a, b in zip(small, large))
    return Growth(2 * PROBE, large, powers)


def refusal(build, nprocs: int, memory: float | None) -> str | None:
    """One line saying which limit simulating ``build(nprocs)`` would pass, or None if it
    fits (or is small enough to build at once).  ``memory``: bytes available (None: unknown)."""
    if nprocs > MAX_RANKS:
        return f"P = {nprocs} is above {MAX_RANKS}, the most ranks a schedule holds (int32)"
    if nprocs <= 4 * PROBE:
        return None
    g = growth(build)
    if g is None:
        return None
    seconds, peak = g.cost(nprocs)
    transfers, steps, largest = g.at(nprocs)
    over = []
    if seconds > MAX_SECONDS:
        over.append(f"about {_human(seconds)} ({transfers:.2g} transfers in {steps:.2g} steps; "
                    f"the limit is {MAX_SECONDS:.0f} s)")
    if memory is not None and peak > memory:
        over.append(f"about {peak / 2**30:.3g} GiB for its largest step ({largest:.2g} transfers; "
                    f"{memory / 2**30:.3g} GiB are available)")
    if not over:
        return None
    return f"P = {nprocs} would take {' and '.join(over)}; {_largest_fit(g, nprocs, memory)} fits " \
           "(--force runs it anyway)"


def _largest_fit(g: Growth, nprocs: int, memory: float | None) -> str:
    p = 1 << (nprocs.bit_length() - 1)
    while p > g.p0:
        seconds, peak = g.cost(p)
        if seconds <= MAX_SECONDS and (memory is None or peak <= memory):
            break
        p //= 2
    return f"P = 2^{p.bit_length() - 1} = {p}"


def _human(seconds: float) -> str:
    for unit, size in (("years", 3.15e7), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"
