"""The LogP family in one namespace, as the LogP chapter and lab 3 use it (``logp.LogP``,
``logp.barrier_time``, ``logp.fit_prtt``): it defines nothing and hands on the names of its
rooms, the models and their step rule (:mod:`.logp`), barrier times in closed form
(:mod:`.logp_barriers`), the lower bound on any barrier (:mod:`.logp_barrier_bound`) and the
fits (:mod:`.logp_fit`).

    >>> from netmodels.models import logp_family as logp
    >>> logp.barrier_time("dissemination", logp.LogP(L=5e-6, o=1e-6, g=2e-6, P=8)) > 0
    True
"""

from .logp import LogGOPS, LogGP, LogP, LogPClock, PLogP, wire_bytes
from .logp_barrier_bound import knowledge_bound
from .logp_barriers import ALGORITHMS, barrier_time
from .logp_fit import (GAP_MARGIN, OUTLIER_MADS, SMALL_BYTES, BarrierFit, PRTTFit, fit_barrier_times,
                       fit_copy_overhead, fit_prtt, fit_results, prtt_model)

__all__ = ["ALGORITHMS", "GAP_MARGIN", "OUTLIER_MADS", "SMALL_BYTES", "BarrierFit", "LogGOPS", "LogGP", "LogP",
           "LogPClock", "PLogP", "PRTTFit", "barrier_time", "fit_barrier_times", "fit_copy_overhead", "fit_prtt",
           "fit_results", "knowledge_bound", "prtt_model", "wire_bytes"]
