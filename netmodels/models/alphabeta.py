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


@dataclass(frozen=True)
class SegmentedAlphaBeta:
    """α-β with the protocol switch and an exchange term: a message of ``m`` bytes costs
    ``a + b m`` with ``(a, b)`` chosen by its size and by what its rank does in the step.

    * one way, below the switch ``S`` (bytes): ``alpha + beta m`` (the ping-pong's eager segment);
    * one way, ``m >= S``: ``alpha_r + beta_r m`` (its rendezvous segment);
    * in an exchange (the rank both sends and receives in the step, so two copies cross its
      memory at once): ``alpha_x + beta_x m`` below ``S``, ``alpha_xr + beta_xr m`` from ``S``
      on (the exchange benchmark's segments, split at the ping-pong's switch).

    Otherwise the rule is :class:`AlphaBeta`'s: a rank's part of a step is
    ``max(Σ sends, Σ receives)``, so an exchange of ``m`` bytes with one peer costs
    ``alpha_x + beta_x m``, which is what the exchange benchmark measures.  Seconds, s/B,
    bytes.  ``S = inf``: no switch.  ``alpha_r`` and ``alpha_xr`` are intercepts extrapolated
    from the sizes at and above the switch and may be <= 0; the time of a message of ``S``
    bytes on those segments must be > 0.  No topology (its link floors are :class:`AlphaBeta`'s).
    """

    alpha: float
    beta: float
    S: float = float("inf")
    alpha_r: float | None = None   #: None: alpha
    beta_r: float | None = None    #: None: beta
    alpha_x: float | None = None   #: None: alpha
    beta_x: float | None = None    #: None: beta
    alpha_xr: float | None = None  #: None: alpha_x if given, else alpha_r
    beta_xr: float | None = None   #: None: beta_x if given, else beta_r
    name: str = ""
    source: str = ""

    def __post_init__(self):
        def put(k, v):
            object.__setattr__(self, k, v)

        for k in ("alpha", "beta"):
            put(k, positive(k, getattr(self, k)))
        S = float(self.S)
        if not S >= 0:
            raise ValueError(f"S must be >= 0 bytes (inf: no switch), got {self.S!r}")
        put("S", S)
        ex = self.alpha_x is not None or self.beta_x is not None     # an exchange term given
        defaults = {"alpha_r": self.alpha, "beta_r": self.beta, "alpha_x": self.alpha, "beta_x": self.beta}
        for k, d in defaults.items():
            put(k, d if getattr(self, k) is None else float(getattr(self, k)))
        put("alpha_xr", (self.alpha_x if ex else self.alpha_r) if self.alpha_xr is None else float(self.alpha_xr))
        put("beta_xr", (self.beta_x if ex else self.beta_r) if self.beta_xr is None else float(self.beta_xr))
        for k in ("beta_r", "alpha_x", "beta_x", "beta_xr"):
            put(k, positive(k, getattr(self, k)))
        for a, b in (("alpha_r", "beta_r"), ("alpha_xr", "beta_xr")):
            at_switch = getattr(self, a) + getattr(self, b) * (0.0 if np.isinf(S) else S)
            if not (np.isfinite(getattr(self, a)) and at_switch > 0):
                raise ValueError(f"{a} must be finite and {a} + {b} * S > 0 (a message of S bytes takes "
                                 f"time), got {a} = {getattr(self, a)!r}")

    def time(self, nbytes, exchange: bool = False):
        """Time in seconds of a message of ``nbytes`` (scalar or array, >= 0), one way or
        (``exchange``) in an exchange."""
        n = sizes("nbytes", nbytes)
        t = self._cost(n, np.asarray(exchange, dtype=bool))
        return float(t) if np.ndim(t) == 0 else t

    def _cost(self, n, exchange):
        long_ = n >= self.S
        a = np.where(exchange, np.where(long_, self.alpha_xr, self.alpha_x), np.where(long_, self.alpha_r, self.alpha))
        b = np.where(exchange, np.where(long_, self.beta_xr, self.beta_x), np.where(long_, self.beta_r, self.beta))
        return a + b * n

    #: the timing semantics the simulator uses for this model unless told otherwise
    semantics = "sync"

    def step_rule(self, schedule) -> "SegmentedAlphaBetaRule":
        """:class:`AlphaBeta`'s rule with each message priced by its segment and kind."""
        return SegmentedAlphaBetaRule(self, schedule.nprocs)


class SegmentedAlphaBetaRule(SyncRule):
    """``comm = max(Σ sends, Σ receives)`` per rank; each message priced by its size's segment,
    on each side by whether that side's rank exchanges (sends and receives) in the step."""

    def costs(self, step: Step):
        if step.link_bytes is not None:
            raise ValueError("the segmented α-β models take no topology (use alpha-beta)")
        m, p = self.model, step.nprocs
        exchanging = (np.bincount(step.src, minlength=p) > 0) & (np.bincount(step.dst, minlength=p) > 0)
        sent = np.bincount(step.src, m._cost(step.nbytes, exchanging[step.src]), minlength=p).astype(float)
        received = np.bincount(step.dst, m._cost(step.nbytes, exchanging[step.dst]), minlength=p).astype(float)
        return np.maximum(sent, received), None
