"""NBL and LogGP with the protocol switch: their per-byte terms (and NBL's start-up) in two
segments, as the ping-pong's two-segment fit finds them (:func:`netmodels.models.fit.fit_piecewise`).

Below ``S`` bytes a message is priced as by the plain model; from ``S`` bytes on NBL takes
``alpha_r`` and ``beta_r``, LogGP ``G_r``.  Each is a named entry of the table of models beside
its plain one (:mod:`netmodels.models.table`); α-β's own is
:class:`netmodels.models.alphabeta.SegmentedAlphaBeta`.  Seconds, s/B, bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._check import positive
from .logp import LogGP
from .nbl import NBLModel
from .step import Step


def _switch(S) -> float:
    S = float(S)
    if not S >= 0:
        raise ValueError(f"S must be >= 0 bytes (inf: no switch), got {S!r}")
    return S


@dataclass(frozen=True)
class SegmentedNBL(NBLModel):
    """:class:`~netmodels.models.nbl.NBLModel` whose step at a node with messages of ``S``
    bytes costs ``L a + (f(L) b + c) S`` with ``(a, b) = (alpha, beta)`` below the switch and
    ``(alpha_r, beta_r)`` from it on (None: the plain values).  ``alpha_r`` is an intercept
    and may be <= 0; a message of the switch's size must take time."""

    S: float = math.inf
    alpha_r: float | None = None
    beta_r: float | None = None

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "S", _switch(self.S))
        object.__setattr__(self, "alpha_r", self.alpha if self.alpha_r is None else float(self.alpha_r))
        object.__setattr__(self, "beta_r", positive("beta_r", self.beta if self.beta_r is None else self.beta_r,
                                                    allow_zero=True))
        at = self.alpha_r + self.beta_r * (0.0 if math.isinf(self.S) else self.S)
        if not (math.isfinite(self.alpha_r) and at > 0):
            raise ValueError(f"alpha_r must be finite and alpha_r + beta_r * S > 0, got alpha_r = {self.alpha_r!r}")

    def step_time(self, L, S, c=0.0):
        """As :meth:`NBLModel.step_time`, each node's ``a`` and ``b`` those of its size's segment."""
        long_ = np.asarray(S, dtype=float) >= self.S
        a, b = np.where(long_, self.alpha_r, self.alpha), np.where(long_, self.beta_r, self.beta)
        t = L * a + (self.f_of(L) * b + c) * S
        return float(t) if np.ndim(t) == 0 else t


@dataclass(frozen=True)
class SegmentedLogGP(LogGP):
    """:class:`~netmodels.models.logp.LogGP` whose messages of ``S`` bytes or more take ``G_r``
    per byte (None: ``G``): ``(m - 1) G_r`` on the wire, in every term LogGP charges ``G`` in."""

    S: float = math.inf
    G_r: float | None = None

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "S", _switch(self.S))
        object.__setattr__(self, "G_r", positive("G_r", self.G if self.G_r is None else self.G_r, allow_zero=True))

    def per_byte(self, nbytes):
        """``G`` or ``G_r`` of each message of ``nbytes`` (s/B)."""
        return np.where(np.asarray(nbytes, dtype=float) >= self.S, self.G_r, self.G)

    def wire_time(self, nbytes):
        """``(m - 1) G`` with each message's segment's ``G`` (s)."""
        t = np.maximum(np.asarray(nbytes, dtype=float) - 1.0, 0.0) * self.per_byte(nbytes)
        return float(t) if t.ndim == 0 else t

    def message_time(self, nbytes):
        """End-to-end time ``o_s + L + o_r + (m - 1) G`` of one message (s)."""
        t = self.o_s + self.L + self.o_r + np.asarray(self.wire_time(nbytes))
        return float(t) if t.ndim == 0 else t

    def message_terms(self, step: Step):
        """As :meth:`LogP.message_terms`, with each message's ``G`` its segment's."""
        wire = np.maximum(step.nbytes - 1.0, 0.0) * self.per_byte(step.nbytes)
        if step.load is not None:
            wire = wire * step.load
        recv_busy = self.o_r
        if self.combine:
            recv_busy = self.o_r + np.where(step.combine, step.count, 0) * self.combine
        return self.o_s, self.g + wire, wire + self.L, wire, recv_busy, self.g
