"""The time of a schedule under a model of communication.

- :mod:`netmodels.simulate.cost`: the NBL cost of a schedule step by step (per transfer);
- :mod:`netmodels.simulate.engine`: :func:`simulate`, the vectorised simulator (α-β, NBL,
  LogP, LogGP; loosely synchronous or dataflow; skew, noise, link contention).
"""

from .engine import SEMANTICS, SimResult, simulate

__all__ = ["SEMANTICS", "SimResult", "simulate"]
