"""Time of a schedule under the standard and the node-bandwidth-limited (NBL) models, step by step.

The model and its step rule are :class:`netmodels.models.nbl.NBLModel` (re-exported here);
:func:`cost` and :func:`step_costs` are the simulator (:func:`netmodels.simulate.simulate`,
*sync* semantics) under that model, with each step's busiest node.

Littlefield's NBL model (1992, section 2): a node that has ``L`` links nominally
active at once, moving messages of ``S`` elements, needs

    T(L) = L*alpha + f(L)*beta*S,        f(1) = 1,

``f(L) = 1`` being the standard model (perfect overlap of the L transfers) and
``f(L) = L`` the nominal NBL model (no overlap at all).  Units: ``alpha`` in seconds
per message, ``beta`` in seconds per *element*, combining costs in seconds per
element (the paper's ``c2`` for ``v1 = v1 + v2``, ``c3`` for ``v1 = v1 + v2 + v3``).

How a schedule is costed (the paper's section 3.3, "loosely synchronous"):

- all nodes perform each step at the same time; communication is not overlapped
  with computation;
- ``L`` of a node in a step is the number of messages it sends plus the number it
  receives (one link per direction and neighbour, as on the DELTA, whose routers
  have independent links in both directions; the paper's f(L) test jig counts a
  node receiving from one neighbour as L = 1 and one exchanging with 1, 2, 3
  neighbours as L = 2, 4, 6), and ``S`` the largest message it handles;
- a step costs the largest communication time over the nodes plus the largest
  combining time over the nodes: a node that receives ``k`` combining blocks onto
  the same block does one ``(k+1)``-way combine of ``count`` elements, costed
  ``combine[k + 1]`` per element (else ``k * combine[2]``); copies cost nothing.

With these rules the cost of :func:`netmodels.algorithms.combining.tree` and ``snake`` equals
the paper's appendix expressions term by term once they are read with its own
model ``T(L) = L*alpha + f(L)*beta*S`` (the printed ``L*(alpha + f(L)*beta*S)``
would count the bandwidth term L times, against section 2 and against its own
Fence ``S_opt``); for ``fence`` the only difference is step ``H`` (index ``H - 1``),
where the first block coming from the right meets the first block coming down the
next column: that node does a 3-way combine, which the appendix table books as
2-way (``c2`` instead of ``c3``).  :func:`netmodels.models.nbl.time` charges ``c3`` there
too and equals this cost on every mesh and block count (``paper_charges=True``
gives the appendix's total).

The parameters can be given as an :class:`NBLModel` or, as :mod:`netmodels.models.nbl`
takes them, as an :class:`~netmodels.models.nbl.NBLMachine` plus an f table:
``cost(schedule, machine, f)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..algorithms.arrays import ArraySchedule, as_arrays
from ..algorithms.schedule import Schedule
from ..models.nbl import NBLMachine, NBLModel, as_model
from .engine import simulate, steps

__all__ = ["NBLModel", "StepCost", "step_costs", "cost"]


@dataclass(frozen=True)
class StepCost:
    """Cost of one step: busiest node's L and S, communication and combining seconds."""

    step: int
    L: int
    S: int
    comm: float
    comp: float

    @property
    def total(self) -> float:
        return self.comm + self.comp


def step_costs(schedule: Schedule | ArraySchedule, model: NBLModel | NBLMachine, f=None) -> list[StepCost]:
    """Per-step costs of ``schedule`` (either form) under ``model`` (its step rule,
    :class:`~netmodels.models.nbl.NBLRule`); ``model`` may be an NBLMachine, with its f
    table ``f``.  The busiest node is the one with the longest communication (ties: more
    links, then a larger message)."""
    model = as_model(model, f)
    a = as_arrays(schedule)
    rule = model.step_rule(a)
    out = []
    for t, step in enumerate(steps(a)):
        if step is None or step.src.size == 0:
            out.append(StepCost(t, 0, 0, 0.0, 0.0))
            continue
        comm, comp = rule.costs(step)
        L, S = rule.links_and_size(step)
        best = np.lexsort((S, L, comm))[-1]
        out.append(StepCost(t, int(L[best]), int(S[best]), max(float(comm[best]), 0.0),
                            0.0 if comp is None else float(comp.max())))
    return out


def cost(schedule: Schedule | ArraySchedule, model: NBLModel | NBLMachine, f=None) -> float:
    """Total time in seconds of ``schedule`` under ``model`` (or an NBLMachine and its f
    table ``f``): the simulator's *sync* time, the sum of :func:`step_costs`."""
    return simulate(schedule, as_model(model, f)).time
