"""Time of a schedule under the standard and the node-bandwidth-limited (NBL) models.

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

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Mapping

from .._check import positive
from ..models.nbl import NBLMachine
from ..algorithms.arrays import ArraySchedule, as_transfers
from ..algorithms.schedule import Schedule


@dataclass(frozen=True)
class NBLModel:
    """Parameters of ``T(L) = L*alpha + f(L)*beta*S`` plus combining costs.

    alpha: seconds per message (>= 0).  beta: seconds per element (>= 0).
    f: ``{L: f(L)}`` (``f(1) = 1`` is implied), a callable ``L -> f(L)``, or None for the
    standard model ``f(L) = 1``.  combine: ``{ways: seconds per element}``, e.g.
    ``{2: c2, 3: c3}`` (missing: no combining cost).
    """

    alpha: float
    beta: float
    f: Mapping[int, float] | Callable[[int], float] | None = None
    combine: Mapping[int, float] = field(default_factory=dict)
    name: str = ""

    def __post_init__(self):
        object.__setattr__(self, "alpha", positive("alpha", self.alpha, allow_zero=True))
        object.__setattr__(self, "beta", positive("beta", self.beta, allow_zero=True))
        for ways, c in dict(self.combine).items():
            if not isinstance(ways, int) or ways < 2:
                raise ValueError(f"combine keys are the number of vectors combined, integers >= 2; got {ways!r}")
            positive(f"combine[{ways}]", c, allow_zero=True)
        if isinstance(self.f, Mapping):
            for L, v in self.f.items():
                if not isinstance(L, int) or L < 1:
                    raise ValueError(f"f keys are link counts L, integers >= 1; got {L!r}")
                positive(f"f({L})", v)

    @classmethod
    def from_machine(cls, machine: NBLMachine, f: Mapping[int, float] | None = None) -> "NBLModel":
        """The model of an :class:`~netmodels.models.nbl.NBLMachine` (alpha, beta, c2, c3) with an
        f table ``{L: f(L)}`` as :mod:`netmodels.models.nbl` takes them (None: ``f(L) = 1``)."""
        if not isinstance(machine, NBLMachine):
            raise ValueError(f"machine must be an NBLMachine (alpha, beta, c2, c3), got {machine!r}")
        return cls(machine.alpha, machine.beta, None if f is None else dict(f),
                   {2: machine.c2, 3: machine.c3}, machine.name)

    @classmethod
    def standard(cls, alpha, beta, c2=0.0, c3=None, name="standard model"):
        """``f(L) = 1``: links overlap perfectly."""
        return cls(alpha, beta, None, _combine(c2, c3), name)

    @classmethod
    def nominal(cls, alpha, beta, c2=0.0, c3=None, name="nominal NBL model"):
        """``f(L) = L``: no overlap, the node's bandwidth is one link's."""
        return cls(alpha, beta, float, _combine(c2, c3), name)

    def f_of(self, L: int) -> float:
        """f(L); ValueError if a table ``f`` has no entry for ``L`` (``f(1) = 1`` always)."""
        if L <= 1 or self.f is None:
            return 1.0 if L >= 1 else 0.0
        if isinstance(self.f, Mapping):
            if L not in self.f:
                raise ValueError(f"the f table has no value for L = {L} (it has L = {sorted(self.f)}); "
                                 f"add f({L}) or pass f as a callable")
            return float(self.f[L])
        return float(self.f(L))

    def combine_cost(self, ways: int) -> float:
        """Seconds per element of a ``ways``-way combine (``ways - 1`` pairwise ones if not tabulated)."""
        if ways < 2:
            return 0.0
        c = dict(self.combine)
        return float(c[ways]) if ways in c else (ways - 1) * float(c.get(2, 0.0))


def _combine(c2, c3):
    out = {2: c2}
    if c3 is not None:
        out[3] = c3
    return out


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


def _as_model(model, f) -> NBLModel:
    if isinstance(model, NBLMachine):
        return NBLModel.from_machine(model, f)
    if not isinstance(model, NBLModel):
        raise ValueError(f"model must be an NBLModel or an NBLMachine, got {model!r}")
    if f is not None:
        raise ValueError("f is taken with an NBLMachine only (an NBLModel carries its own f)")
    return model


def step_costs(schedule: Schedule | ArraySchedule, model: NBLModel | NBLMachine, f=None) -> list[StepCost]:
    """Per-step costs of ``schedule`` (either form) under ``model`` (see the module docstring
    for the rules); ``model`` may be an NBLMachine, with its f table ``f``.  Per transfer:
    small P (:func:`netmodels.simulate.simulate` costs large schedules)."""
    model = _as_model(model, f)
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


def cost(schedule: Schedule | ArraySchedule, model: NBLModel | NBLMachine, f=None) -> float:
    """Total time in seconds of ``schedule`` under ``model`` (or an NBLMachine and its f
    table ``f``): the sum of :func:`step_costs`."""
    return float(sum(s.total for s in step_costs(schedule, model, f)))
