"""Reference for the tests: Littlefield's loosely synchronous NBL cost, transfer by transfer.

An independent implementation of the rule of :class:`netmodels.models.nbl.NBLRule` (the
one the simulator asks), in plain Python dictionaries as the rule was first written:
the simulator under *sync* must give the same step costs.  Small P only.
"""

from __future__ import annotations

from collections import defaultdict

from netmodels.algorithms.arrays import as_transfers
from netmodels.models.nbl import as_model
from netmodels.simulate.cost import StepCost


def step_costs(schedule: Schedule | ArraySchedule, model: NBLModel | NBLMachine, f=None) -> list[StepCost]:
    """Per-step costs of ``schedule`` (either form) under ``model`` (see the module docstring
    for the rules); ``model`` may be an NBLMachine, with its f table ``f``.  Per transfer:
    small P (:func:`netmodels.simulate.simulate` costs large schedules)."""
    model = as_model(model, f)
    schedule = as_transfers(schedule)
    out = []
    for t, step in enumerate(schedule.steps):
        links = defaultdict(int)
        size = defaultdict(int)
        groups = defaultdict(lambda: defaultdict(int))   # node -> (start, count) -> combining arrivals
        for tr in step:
            if not tr.is_message:                       # a local copy (packing): no link, no time
                continue
            for node in (tr.src, tr.dst):
                links[node] += 1
                size[node] = max(size[node], tr.count)
            if tr.combine:
                groups[tr.dst][(tr.start, tr.count)] += 1
        best = (-1.0, 0, 0)
        for node, L in links.items():
            comm = L * model.alpha + model.f_of(L) * model.beta * size[node]
            best = max(best, (comm, L, size[node]))
        comp = max((sum(model.combine_cost(k + 1) * cnt for (_, cnt), k in g.items())
                    for g in groups.values()), default=0.0)
        out.append(StepCost(t, best[1], best[2], max(best[0], 0.0), comp))
    return out


def cost(schedule, model, f=None) -> float:
    """Total time (s): the sum of :func:`step_costs`."""
    return float(sum(s.total for s in step_costs(schedule, model, f)))
