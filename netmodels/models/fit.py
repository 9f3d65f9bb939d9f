"""Least-squares fits of the α-β model to measured (size, time) data.

Timings span several decades (µs for small messages, ms for large ones), so
the fits minimise *relative* residuals ``(α + β n - t) / t`` by default: an
absolute fit would let the few largest messages decide α alone.  Standard
errors come from the covariance of the weighted least-squares problem scaled
by the residual variance (``scipy.optimize.curve_fit`` with
``absolute_sigma=False``): they say how well the data determine α and β, not
how noisy the machine is from one run to the next.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._check import sizes as _sizes
from .alphabeta import AlphaBeta


@dataclass(frozen=True)
class AlphaBetaFit:
    """Result of :func:`fit_alpha_beta` (seconds, seconds per byte)."""

    alpha: float
    beta: float
    alpha_stderr: float
    beta_stderr: float
    max_relative_residual: float  #: max |model - data| / data over the points fitted
    npoints: int

    @property
    def model(self) -> AlphaBeta:
        """The fitted :class:`AlphaBeta`.  Raises ValueError if a parameter came out <= 0."""
        return AlphaBeta(self.alpha, self.beta, name="fit")

    def predict(self, nbytes):
        """Predicted time in seconds (no positivity requirement on the parameters)."""
        return self.alpha + self.beta * np.asarray(nbytes, dtype=float)

    def unphysical(self, what: str = "the alpha-beta fit") -> str | None:
        """:func:`unphysical` of this fit's α and β."""
        return unphysical(what, alpha=self.alpha, beta=self.beta)


#: what to do about parameters fitted to disturbed timings
MEASURE_AGAIN = ("the timings were disturbed (other programs, or more ranks than cores); close other "
                 "programs and measure again")


#: parameters given per byte (printed in ns/B; the others are times, printed in µs)
PER_BYTE = ("beta", "G")


def unphysical(what: str, may_be_zero=(), **params) -> str | None:
    """None if every fitted parameter in ``params`` (a number, or an array such as L(p) at
    every p) is > 0, as a latency, an overhead or a time per byte of a real network is (>= 0
    for the names in ``may_be_zero``: a LogGP latency clipped at 0, a gap or G that a fit
    did not identify); else one line: ``what``, the parameters that are not (the smallest
    value of an array), that no network has them, and what to do (:data:`MEASURE_AGAIN`).
    Values in seconds (``beta*`` and ``G``: seconds per byte), printed in µs (ns/B)."""
    bad = []
    for name, value in params.items():
        v = float(np.min(value))
        if not (v >= 0 if name in may_be_zero else v > 0):
            shown = f"{v * 1e9:.4g} ns/B" if name.startswith(PER_BYTE) else f"{v * 1e6:.4g} µs"
            bad.append(f"{name} = {shown} {'< 0' if name in may_be_zero else '<= 0'}")
    if not bad:
        return None
    return f"{what}: {', '.join(bad)}, which no network has: {MEASURE_AGAIN}"


def _data(nbytes, seconds):
    n = _sizes("nbytes", nbytes)
    t = _sizes("seconds", seconds, allow_zero=False)
    if n.shape != t.shape or n.ndim != 1:
        raise ValueError(f"nbytes and seconds must be 1-D arrays of equal length, "
                         f"got shapes {n.shape} and {t.shape}")
    if np.unique(n).size < 2:
        raise ValueError("nbytes must hold at least 2 distinct sizes to fit alpha and beta")
    return n, t


def fit_alpha_beta(nbytes, seconds, *, relative: bool = True) -> AlphaBetaFit:
    """Fit ``t = α + β n`` to sizes ``nbytes`` (bytes, >= 0) and times ``seconds`` (> 0).

    Several samples per size are allowed.  With ``relative=True`` (default) each
    point is weighted by ``1 / t``; otherwise an ordinary least-squares fit.
    """
    n, t = _data(nbytes, seconds)
    sigma = t if relative else None
    w = None if sigma is None else 1 / sigma
    if len(n) == 2:  # an exact fit through two points carries no error estimate
        alpha, beta = np.polyfit(n, t, 1, w=w)[::-1]
        err = np.array([np.nan, np.nan])
    else:
        from scipy.optimize import curve_fit   # here: a command that only checks its arguments
        #                                          needs the rule below, not scipy (0.35 s to import)
        (alpha, beta), cov = curve_fit(lambda x, a, b: a + b * x, n, t, sigma=sigma,
                                       p0=np.polyfit(n, t, 1, w=w)[::-1], absolute_sigma=False)
        err = np.sqrt(np.diag(cov))
    resid = np.abs(alpha + beta * n - t) / t
    return AlphaBetaFit(float(alpha), float(beta), float(err[0]), float(err[1]),
                        float(resid.max()), int(len(n)))


@dataclass(frozen=True)
class PiecewiseFit:
    """Two α-β segments with a protocol switch (e.g. MPI eager → rendezvous)."""

    switch_bytes: float  #: first size (bytes) of the upper segment
    below: AlphaBetaFit
    above: AlphaBetaFit

    def predict(self, nbytes):
        n = np.asarray(nbytes, dtype=float)
        return np.where(n < self.switch_bytes, self.below.predict(n), self.above.predict(n))

    def unphysical(self, what: str = "the two-segment fit") -> str | None:
        """:func:`unphysical` of each segment (the first one found)."""
        return (self.below.unphysical(f"{what}, below the switch")
                or self.above.unphysical(f"{what}, from the switch on"))


def t_quantile(dof: int, confidence: float = 0.95) -> float:
    """Student's t quantile of a two-sided ``confidence`` on ``dof`` degrees of freedom
    (``scipy.special.stdtrit``, which ``scipy.stats.t.ppf`` calls, without the second it takes
    to import ``scipy.stats``)."""
    from scipy.special import stdtrit

    return float(stdtrit(dof, 0.5 + confidence / 2))


def least_squares_interval(estimate, stderr, npoints: int, confidence: float = 0.95):
    """``(lo, hi)``: a least-squares line's parameters ``estimate`` ± the t quantile on
    ``npoints - 2`` degrees of freedom (those of its residual variance) times their ``stderr``
    (arrays or floats alike)."""
    q = t_quantile(npoints - 2, confidence)
    est, err = np.asarray(estimate, dtype=float), np.asarray(stderr, dtype=float)
    return est - q * err, est + q * err


def _cost(fit: AlphaBetaFit, n, t) -> float:
    return float(np.sum(((fit.predict(n) - t) / t) ** 2))


def fit_piecewise(nbytes, seconds, *, min_sizes: int = 3, switch: float | None = None) -> PiecewiseFit:
    """Fit two α-β segments, choosing the switch size that minimises the relative residual.

    Every candidate switch between consecutive distinct sizes is tried (an exhaustive
    search, so the optimum is global); each segment needs ``min_sizes`` distinct sizes
    (>= 2).  Compare the total residual with a single :func:`fit_alpha_beta` to decide
    whether a switch is really there.  ``switch`` (bytes) fixes the switch instead of
    searching it (e.g. the ping-pong's, for an exchange over the same sizes): each side of
    it still needs ``min_sizes`` distinct sizes.
    """
    n, t = _data(nbytes, seconds)
    if isinstance(min_sizes, bool) or not isinstance(min_sizes, int) or min_sizes < 2:
        raise ValueError(f"min_sizes must be an integer >= 2, got {min_sizes!r}")
    distinct = np.unique(n)
    if distinct.size < 2 * min_sizes:
        raise ValueError(f"nbytes must hold at least {2 * min_sizes} distinct sizes for a "
                         f"piecewise fit with min_sizes={min_sizes}, got {distinct.size}")
    candidates = distinct[min_sizes:distinct.size - min_sizes + 1]
    if switch is not None:
        switch = float(switch)
        if not (np.sum(distinct < switch) >= min_sizes and np.sum(distinct >= switch) >= min_sizes):
            raise ValueError(f"switch must leave at least {min_sizes} distinct sizes on each side "
                             f"(between {candidates[0]:g} and {candidates[-1]:g} B), got {switch!r}")
        candidates = [switch]
    best = None
    for switch in candidates:
        lo, hi = n < switch, n >= switch
        below, above = fit_alpha_beta(n[lo], t[lo]), fit_alpha_beta(n[hi], t[hi])
        cost = _cost(below, n[lo], t[lo]) + _cost(above, n[hi], t[hi])
        if best is None or cost < best[0]:
            best = (cost, PiecewiseFit(float(switch), below, above))
    return best[1]
