"""k-ary n-trees (Petrini & Vanneschi): the fat trees of Kumar's slides, with up/down routing.

``k^n`` leaves (processing nodes) and ``n`` levels of ``k^(n-1)`` switches of ``2k``
ports.  Level 1 is next to the leaves, level n at the top.  Leaf p hangs from the
level-1 switch p // k.  A level-ℓ switch is named ``(g, c)``: ``g = leaf // k^ℓ`` is the
subtree it serves (its leaves share every base-k digit of p above the ℓ lowest) and
``c`` (ℓ-1 digits) the up-ports chosen on the way to it; its index in its level is
``g k^(ℓ-1) + c``.  Up-port ``u`` of switch ``(g, c)`` of level ℓ < n leads to switch
``(g // k, c k + u)`` of level ℓ+1.  Every switch has k down- and (below the top) k
up-links, as in the 4-ary 1-, 2- and 3-trees of slide 7.

Routing: up to the lowest level L at which source and destination share a subtree
(``src // k^L == dst // k^L``), then down; the down path is then unique.  The up-port
at level ℓ is

- ``"destination"`` (default, deterministic, "d-mod-k"): the destination's digit ℓ-1,
  ``(dst // k^(ℓ-1)) % k``;
- ``"random"``: pseudo-random over the k ports, a hash (splitmix64) of ``(seed, source
  leaf, destination leaf, level)``: reproducible, and the same for a message routed
  alone or in a batch (a per-pair oblivious random routing).

Directed link ids: ``direction * n P + level * P + index`` with direction 0 up, 1
down; level 0 are the P leaf links (index = leaf), level ℓ >= 1 the ``k^(n-1) k = P``
links between levels ℓ and ℓ+1, index ``switch index * k + up-port``.  So
``nlinks = 2 n P`` for the full tree.

Missing nodes: ``leaves`` lists the leaf of each rank (rank r sits on ``leaves[r]``,
strictly increasing); the other leaves are absent (down nodes of slide 28).
"""

from __future__ import annotations

import numpy as np

from .._check import positive_int
from .base import Topology


def _mix(seed: int, a: np.ndarray, b: np.ndarray, level: int) -> np.ndarray:
    """splitmix64 of (seed, a, b, level): uniform-looking uint64 per message."""
    with np.errstate(over="ignore"):
        x = (np.uint64(seed & (2**64 - 1)) * np.uint64(0x9E3779B97F4A7C15)
             + a.astype(np.uint64) * np.uint64(0xBF58476D1CE4E5B9)
             + b.astype(np.uint64) * np.uint64(0x94D049BB133111EB) + np.uint64(level))
        for shift, mult in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
            x = (x ^ (x >> np.uint64(shift))) * np.uint64(mult)
        return x ^ (x >> np.uint64(31))


class KaryNTree(Topology):
    """A k-ary n-tree with ranks on ``leaves`` (default: every leaf, rank = leaf)."""

    def __init__(self, k: int, n: int, leaves=None, routing: str = "destination", seed: int = 0):
        self.k = positive_int("k", k, minimum=2)
        self.n = positive_int("n", n)
        self.nleaves = self.k ** self.n
        if routing not in ("destination", "random"):
            raise ValueError(f"routing must be 'destination' or 'random', got {routing!r}")
        self.routing, self.seed = routing, seed
        if leaves is None:
            leaves = np.arange(self.nleaves)
        leaves = np.asarray(leaves)
        if (leaves.ndim != 1 or leaves.size == 0 or leaves.dtype.kind not in "iu"
                or leaves.min() < 0 or leaves.max() >= self.nleaves or np.any(np.diff(leaves) <= 0)):
            raise ValueError(f"leaves must be a non-empty increasing list of leaves in 0..{self.nleaves - 1}")
        self.leaves = leaves.astype(np.int64)
        self.nprocs = int(self.leaves.size)
        self.nlinks = 2 * self.n * self.nleaves

    @classmethod
    def missing(cls, k: int, n: int, absent, **options) -> "KaryNTree":
        """The tree with the leaves ``absent`` missing (ranks on the others, in order)."""
        tree = cls(k, n)
        keep = np.setdiff1d(np.arange(tree.nleaves), np.asarray(absent, dtype=np.int64))
        return cls(k, n, keep, **options)

    def __repr__(self) -> str:
        miss = self.nleaves - self.nprocs
        return f"KaryNTree(k={self.k}, n={self.n}, P={self.nprocs}" + (f", {miss} missing" if miss else "") + ")"

    def lca_level(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Lowest level whose subtree holds both *leaves* a and b (0 if a == b)."""
        lev = np.zeros(np.shape(a), dtype=np.int64)
        a, b = np.asarray(a), np.asarray(b)
        for l in range(1, self.n + 1):
            lev += (a // self.k ** (l - 1)) != (b // self.k ** (l - 1))
        return lev

    def up_ports(self, src_leaf: np.ndarray, dst_leaf: np.ndarray) -> np.ndarray:
        """Port chosen at each level ℓ = 1 .. n-1 (columns), per message (rows)."""
        m = src_leaf.size
        if self.routing == "random":
            return np.stack([_mix(self.seed, src_leaf, dst_leaf, l) % self.k for l in range(1, self.n)],
                            axis=1).astype(np.int64) if self.n > 1 else np.zeros((m, 0), dtype=np.int64)
        return np.stack([(dst_leaf // self.k ** (l - 1)) % self.k for l in range(1, self.n)], axis=1) \
            if self.n > 1 else np.zeros((m, 0), dtype=np.int64)

    def _routes(self, src, dst):
        k, n, P = self.k, self.n, self.nleaves
        a, b = self.leaves[src], self.leaves[dst]
        L = self.lca_level(a, b)
        ports = self.up_ports(a, b)
        idx, links = [], []
        c = np.zeros(a.size, dtype=np.int64)            # up-ports so far, as a number
        for l in range(n):                              # links between level l and l+1
            use = np.nonzero(L > l)[0]
            if l == 0:
                up, down = a[use], b[use]
            else:
                c = c * k + ports[:, l - 1]
                up = (a[use] // k ** l) * k ** l + c[use]
                down = (b[use] // k ** l) * k ** l + c[use]
            idx += [use, use]
            links += [l * P + up, n * P + l * P + down]
        idx, links = np.concatenate(idx), np.concatenate(links)
        # order each message's links along its path: up levels ascending, down descending
        level = (links % (n * P)) // P
        key = np.where(links < n * P, level, 2 * n - 1 - level)
        order = np.lexsort((key, idx))
        return idx[order], links[order]

    def link_name(self, link: int) -> tuple:
        """``(from, to)``: leaves as ``("leaf", p)``, switches as ``("sw", level, index)``."""
        k, n, P = self.k, self.n, self.nleaves
        down, rest = divmod(int(link), n * P)
        level, i = divmod(rest, P)
        if level == 0:
            lo = ("leaf", i)
            hi = ("sw", 1, i // k)
        else:
            lo = ("sw", level, i // k)
            g, c = divmod(i // k, k ** (level - 1))
            hi = ("sw", level + 1, (g // k) * k ** level + c * k + i % k)
        return (hi, lo) if down else (lo, hi)

    def endpoints(self):
        """``(from, to)`` node names of every link id (for drawings and brute-force checks)."""
        return [self.link_name(l) for l in range(self.nlinks)]
