"""The Hockney (α-β) model: sending ``n`` bytes takes ``T(n) = α + β n``.

**Step rule** (:meth:`AlphaBeta.step_rule`, what :func:`netmodels.simulate.simulate` asks):
one port, full duplex.  A rank's sends in a step go one after the other, and so do its
receives, while sending and receiving overlap: its part of the step takes
``max(Σ_sends (α + β m), Σ_receives (α + β m))``, so an exchange with one peer costs
``α + β m``.  With a topology the most loaded link sets a floor: a rank that sends s
messages cannot finish before ``s α + β b``, b the most bytes one of its messages' links
carries in the step (likewise for its receives); a contention-free step costs what it
costs without a topology.  This is the cost of Kumar's all-to-all slides (α + β m per
message, the busiest link setting the pace).

Littlefield's *standard model* (:meth:`netmodels.models.nbl.NBLModel.standard`,
``L α + β S`` with L = sends + receives) is the other α-β rule of the book: there an
exchange costs ``2α + β m`` (a node pays a start-up per link) and a node drives all its
links at full bandwidth (only its largest message counts).  The chapter "Models compared"
uses it as its α-β column and the tests compare the two on one table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._check import positive, sizes
from .step import Step, SyncRule, per_rank_sum


@dataclass(frozen=True)
class AlphaBeta:
    """Point-to-point cost ``T(n) = alpha + beta * n``.

    Parameters
    ----------
    alpha : latency in seconds (time of a zero-byte message), > 0.
    beta : transfer time in seconds per byte (1 / asymptotic bandwidth), > 0.
    name : optional label used in tables and plots.
    source : where the numbers come from (paper, table), for reference sets.
    """

    alpha: float
    beta: float
    name: str = ""
    source: str = ""

    def __post_init__(self):
        object.__setattr__(self, "alpha", positive("alpha", self.alpha))
        object.__setattr__(self, "beta", positive("beta", self.beta))

    @classmethod
    def from_latency_bandwidth(cls, latency: float, bandwidth: float, name: str = "",
                               source: str = "") -> "AlphaBeta":
        """Build the model from a latency in seconds and a bandwidth in bytes per second."""
        return cls(positive("latency", latency), 1.0 / positive("bandwidth", bandwidth), name, source)

    def time(self, nbytes):
        """Time in seconds to send ``nbytes`` (scalar or array, each >= 0)."""
        n = sizes("nbytes", nbytes)
        t = self.alpha + self.beta * n
        return float(t) if np.ndim(t) == 0 else t

    @property
    def bandwidth(self) -> float:
        """Asymptotic bandwidth 1/β in bytes per second."""
        return 1.0 / self.beta

    @property
    def half_performance_length(self) -> float:
        """n½ = α/β in bytes: the size at which half the asymptotic bandwidth is reached.

        It is also the message size whose transfer time equals the latency, the
        "latency-equivalent message size".
        """
        return self.alpha / self.beta

    def effective_bandwidth(self, nbytes):
        """Achieved bandwidth n / T(n) in bytes per second (sizes > 0)."""
        n = sizes("nbytes", nbytes, allow_zero=False)
        return n / self.time(n)

    def latency_share(self, nbytes):
        """Fraction α / T(n) of the time spent in latency, in [0, 1]."""
        return self.alpha / self.time(nbytes)

    #: the timing semantics the simulator uses for this model unless told otherwise
    semantics = "sync"

    def step_rule(self, schedule) -> "AlphaBetaRule":
        """The step rule of the module docstring (single port, full duplex)."""
        return AlphaBetaRule(self, schedule.nprocs)


class AlphaBetaRule(SyncRule):
    """``comm = max(Σ sends, Σ receives)`` per rank, each message ``α + β m``; no combining."""

    def costs(self, step: Step):
        m = self.model
        sent, received = per_rank_sum(step, m.alpha + m.beta * step.nbytes)
        if step.link_bytes is not None:            # the busiest link of each message
            p = step.nprocs
            floor = m.beta * step.link_bytes
            for ranks, total in ((step.src, sent), (step.dst, received)):
                busiest = np.zeros(p)
                np.maximum.at(busiest, ranks, floor)
                np.maximum(total, m.alpha * np.bincount(ranks, minlength=p) + busiest, out=total)
        return np.maximum(sent, received), None
