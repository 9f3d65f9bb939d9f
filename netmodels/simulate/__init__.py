"""The time of a schedule under a model of communication.

- :mod:`netmodels.simulate.engine`: :func:`simulate`, the vectorised simulator: it walks the
  steps (loosely synchronous, step-ordered *stepwise*, or LogGOPSim's rules; skew, noise, link contention) and asks the model's
  step rule (:mod:`netmodels.models.step`) what each step costs, for every model of the kit
  (α-β, NBL, LogP, LogGP, PLogP, BSP, two-level α-β, LoP);
- :mod:`netmodels.simulate.desync`: a third timing semantics, self-timed with fluid sharing
  of a node's bandwidth (:func:`~netmodels.simulate.desync.simulate_fluid`).
"""

from .engine import SEMANTICS, SimResult, simulate

__all__ = ["SEMANTICS", "SimResult", "simulate"]
