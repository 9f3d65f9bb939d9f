"""The time of a schedule under a model of communication.

- :mod:`netmodels.simulate.engine`: :func:`simulate`, the vectorised simulator: it walks the
  steps (loosely synchronous, step-ordered *stepwise*, or LogGOPSim's rules; skew, noise, link contention) and asks the model's
  step rule (:mod:`netmodels.models.step`) what each step costs, for every model of the kit
  (α-β, NBL, LogP, LogGP, PLogP, BSP, two-level α-β, LoP), plus, if given, each rank's own
  software time (:mod:`netmodels.simulate.software`) in the same walk;
- :mod:`netmodels.simulate.desync`: a third timing semantics, self-timed with fluid sharing
  of a node's bandwidth (:func:`~netmodels.simulate.desync.simulate_fluid`).
"""

from .engine import SEMANTICS, SimResult, simulate
from .software import Software

__all__ = ["SEMANTICS", "SimResult", "Software", "simulate"]
