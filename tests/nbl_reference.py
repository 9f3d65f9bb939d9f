"""Reference for the tests: Littlefield's loosely synchronous NBL cost, transfer by transfer.

An independent implementation of the rule of :class:`netmodels.models.nbl.NBLRule` (the
one the simulator asks), in plain Python dictionaries as the rule was first written:
the simulator under *sync* must give the same step costs.  Small P only.
"""

from __future__ import annotations

from collections import defaultdict

from netmodels.algorithms.arrays import as_transfers


def step_costs(schedule, model, elem_bytes: int = 8) -> list[float]:
    """Seconds per step of ``schedule`` (either form) under the NBLModel ``model``, elements of
    ``elem_bytes`` bytes: the busiest node's ``L α + f(L) β S`` plus the largest combining
    time, a node doing one (k+1)-way combine per block that k combining messages bring."""
    out = []
    for step in as_transfers(schedule).steps:
        links = defaultdict(int)
        size = defaultdict(int)
        groups = defaultdict(lambda: defaultdict(int))   # node -> (start, count) -> combining arrivals
        for tr in step:
            if not tr.is_message:                       # a local copy (packing): no link, no time
                continue
            for node in (tr.src, tr.dst):
                links[node] += 1
                size[node] = max(size[node], tr.count * elem_bytes)
            if tr.combine:
                groups[tr.dst][(tr.start, tr.count)] += 1
        comm = max((L * model.alpha + model.f_of(L) * model.beta * size[node] for node, L in links.items()),
                   default=0.0)
        comp = max((sum(model.combine_cost(k + 1) * cnt * elem_bytes for (_, cnt), k in g.items())
                    for g in groups.values()), default=0.0)
        out.append(comm + comp)
    return out


def cost(schedule, model, elem_bytes: int = 8) -> float:
    """Total time (s): the sum of :func:`step_costs`."""
    return float(sum(step_costs(schedule, model, elem_bytes)))
