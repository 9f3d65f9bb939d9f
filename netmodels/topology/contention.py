"""Contention: which permutations and schedule steps load a link with more than one message.

A permutation (every rank sends at most one message and receives at most one) is
*contention-free* on a topology iff every link carries at most one of its messages.
A schedule step in which a rank sends or receives d > 1 messages (k-prefix, direct)
cannot do better than d messages on that rank's own leaf link; such a step is called
contention-free iff no link carries more than the largest such d (the network adds
nothing to what the ranks' own links impose).

The permutations of Kumar's slide 8 (from Heller's CM-5 notes): the *prefix
permutation* j, ``i -> i XOR j``, and the *cyclic shift* by s, ``i -> (i + s) mod P``;
for contrast the transpose of a q x q matrix of ranks and seeded random permutations.
"""

from __future__ import annotations

import numpy as np

from .._check import positive_int
from .base import Topology, pair_arrays


def prefix_permutation(nprocs: int, j: int) -> tuple[np.ndarray, np.ndarray]:
    """``i -> i XOR j`` for the ranks whose partner exists (``i XOR j < P``)."""
    p = positive_int("nprocs", nprocs)
    i = np.arange(p)
    d = i ^ positive_int("j", j, minimum=0)
    keep = d < p
    return i[keep], d[keep]


def cyclic_shift(nprocs: int, s: int) -> tuple[np.ndarray, np.ndarray]:
    """``i -> (i + s) mod P``."""
    p = positive_int("nprocs", nprocs)
    i = np.arange(p)
    return i, (i + int(s)) % p


def transpose(nprocs: int) -> tuple[np.ndarray, np.ndarray]:
    """Ranks as a q x q matrix (P = q^2), ``a q + b -> b q + a``: the matrix transpose."""
    p = positive_int("nprocs", nprocs)
    q = int(round(p ** 0.5))
    if q * q != p:
        raise ValueError(f"nprocs must be a perfect square for transpose, got {p}")
    i = np.arange(p)
    return i, (i % q) * q + i // q


def random_permutation(nprocs: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A uniformly random permutation (``numpy.random.default_rng(seed)``)."""
    p = positive_int("nprocs", nprocs)
    return np.arange(p), np.random.default_rng(seed).permutation(p)


def max_degree(src, dst) -> int:
    """Largest number of messages one rank sends or receives (0 for no messages)."""
    src, dst = pair_arrays(src, dst)
    if src.size == 0:
        return 0
    return int(max(np.bincount(src).max(), np.bincount(dst).max()))


def max_load(topology: Topology, src, dst=None) -> int:
    """Largest number of messages on one link."""
    return topology.link_loads(src, dst)[1]


def is_contention_free(topology: Topology, src, dst=None) -> bool:
    """True iff no link carries more messages than the busiest rank sends or receives
    (for a permutation: at most one message per link).  Messages to oneself are ignored."""
    src, dst = pair_arrays(src, dst, topology.nprocs)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    return max_load(topology, src, dst) <= max(max_degree(src, dst), 1)


def step_pairs(schedule, t: int, with_empty: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(src, dst)`` of the messages of step t (zero-count messages only if ``with_empty``)."""
    tr = [x for x in schedule.steps[t] if x.src != x.dst and (with_empty or x.count > 0)]
    return (np.array([x.src for x in tr], dtype=np.int64), np.array([x.dst for x in tr], dtype=np.int64))


def schedule_loads(topology: Topology, schedule) -> list[tuple[int, int]]:
    """Per step, ``(largest link load, largest rank degree)`` of the messages carrying data."""
    out = []
    for t in range(schedule.nsteps):
        s, d = step_pairs(schedule, t)
        out.append((max_load(topology, s, d), max_degree(s, d)))
    return out


def survey(topology: Topology, family: str) -> dict[int, int]:
    """Largest link load of every member of a permutation family on ``topology``'s ranks.

    ``family``: ``"prefix"`` (j = 1 .. 2^⌈log2 P⌉ - 1) or ``"shift"`` (s = 1 .. P-1).
    """
    p = topology.nprocs
    if family == "prefix":
        members = range(1, 1 << max(p - 1, 0).bit_length())
        make = prefix_permutation
    elif family == "shift":
        members = range(1, p)
        make = cyclic_shift
    else:
        raise ValueError(f"family must be 'prefix' or 'shift', got {family!r}")
    return {j: max_load(topology, *make(p, j)) for j in members}


def shifts_free_by_rule(nprocs: int, k: int) -> bool:
    """Whether every cyclic shift of ranks on leaves 0..P-1 of a k-ary tree is contention-free,
    by the rule the checker's survey follows (the book's topology chapter compares the two for
    every P on three trees): P must be a multiple of k^j, where j is the smallest level with
    P <= 2 k^(j+1).  Stated from the checker's output, not from the slides (whose words are lost)."""
    j = 0
    while nprocs > 2 * k ** (j + 1):
        j += 1
    return nprocs % k**j == 0
