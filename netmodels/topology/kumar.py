"""Kumar's all-to-all multicast results (seed 004) recomputed: bandwidths, distances, contention.

Everything a chapter needs to set the slides' tables beside the models: predicted node
bandwidth from the cost equation (:func:`netmodels.topology.cost.kumar_time`),
bandwidth under α-β with link contention on a fat tree with missing leaves, and
counts of "far-away" messages.  Sizes in bytes, times in seconds, bandwidths in B/s.
"""

from __future__ import annotations

import numpy as np

from ..algorithms import registry
from ..models.alphabeta import AlphaBeta
from ..models.machines import KUMAR2004_COST
from ..simulate.engine import simulate
from .contention import max_degree, step_pairs
from .cost import kumar_time, node_bandwidth
from .fattree import KaryNTree


def predicted_bandwidth(strategy: str, nprocs, nbytes, k: int | None = None, params=None):
    """Node bandwidth (B/s) predicted by the cost equation with the slide-27 parameters."""
    c = dict(KUMAR2004_COST if params is None else params)
    t = kumar_time(strategy, nprocs, nbytes, c["alpha"], c["beta_em"], c["delta"], c["alpha_b"], k)
    return node_bandwidth(nprocs, nbytes, t)


def quadrics_tree(nodes: int, missing=()) -> KaryNTree:
    """The smallest 4-ary n-tree with at least ``nodes + len(missing)`` leaves; ranks on the
    first leaves except ``missing`` (so ``nodes`` ranks)."""
    missing = sorted(set(int(m) for m in missing))
    need = nodes + len(missing)
    n = 1
    while 4 ** n < need:
        n += 1
    leaves = np.setdiff1d(np.arange(need), missing)
    return KaryNTree(4, n, leaves)


def contention_bandwidth(algorithm: str, tree: KaryNTree, nbytes: int, k: int | None = None,
                         alpha: float | None = None, beta: float | None = None) -> tuple[float, float]:
    """Node bandwidth (B/s) of ``algorithm`` on ``tree``'s ranks without and with link contention.

    α-β with the slide-27 α and β_em (unless given); the step time with contention is set
    by the most loaded link (the simulator with the tree as ``topology``, :mod:`netmodels.topology.cost`).  ``nbytes`` per
    rank, sent as one element of ``nbytes`` bytes.
    """
    a = KUMAR2004_COST["alpha"] if alpha is None else alpha
    b = KUMAR2004_COST["beta_em"] if beta is None else beta
    s = registry.get(algorithm, "allgather").build(tree.nprocs, 1, k=k).to_schedule()
    free = simulate(s, AlphaBeta(a, b), elem_bytes=nbytes).time
    loaded = simulate(s, AlphaBeta(a, b), topology=tree, elem_bytes=nbytes).time
    p = tree.nprocs
    return float(node_bandwidth(p, nbytes, free)), float(node_bandwidth(p, nbytes, loaded))


def worst_step_ratio(algorithm: str, tree: KaryNTree, k: int | None = None) -> float:
    """Largest (link load / rank degree) over the steps: 1 means contention-free."""
    s = registry.get(algorithm, "allgather").build(tree.nprocs, 1, k=k).to_schedule()
    out = 1.0
    for t in range(s.nsteps):
        src, dst = step_pairs(s, t)
        if src.size:
            out = max(out, tree.link_loads(src, dst)[1] / max_degree(src, dst))
    return out


def far_away(tree: KaryNTree) -> dict:
    """Per rank, how many of its P-1 destinations are far: counted three ways.

    ``top``: routes through the top level (lowest common ancestor = level n);
    ``rank_distance``: ``|i - d| >= P/2`` in rank numbers;
    ``levels``: the number of destinations at each lowest-common-ancestor level 1..n
    (the same for every rank on a full tree).  Every allgather sends to all P-1
    others, so these counts are the same for prefix, k-prefix and k-shift; what differs
    is when, and how many at once.
    """
    p = tree.nprocs
    i, d = np.meshgrid(np.arange(p), np.arange(p), indexing="ij")
    off = i != d
    lev = tree.lca_level(tree.leaves[i], tree.leaves[d])
    return {
        "top": (off & (lev == tree.n)).sum(axis=1),
        "rank_distance": (off & (np.abs(i - d) >= p / 2)).sum(axis=1),
        "levels": {l: (lev == l).sum(axis=1) for l in range(1, tree.n + 1)},
    }


def step_levels(algorithm: str, tree: KaryNTree, k: int | None = None) -> list[int]:
    """Per data step, the highest lowest-common-ancestor level any message climbs to."""
    s = registry.get(algorithm, "allgather").build(tree.nprocs, 1, k=k).to_schedule()
    out = []
    for t in range(s.nsteps):
        src, dst = step_pairs(s, t)
        if src.size:
            out.append(int(tree.lca_level(tree.leaves[src], tree.leaves[dst]).max()))
    return out
