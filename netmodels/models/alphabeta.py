"""The Hockney (α-β) model: sending ``n`` bytes takes ``T(n) = α + β n``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._check import positive, sizes


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
