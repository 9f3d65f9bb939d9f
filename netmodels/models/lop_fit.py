"""Least-squares fits of LoP's curves ``t_rtt(p)`` and ``t_ov(p)`` to measured data.

``scipy.optimize.curve_fit`` (trust-region reflective, with bounds) minimises the
*relative* residuals ``(model - t) / t``, like :mod:`netmodels.models.fit`.  Standard
errors come from the covariance scaled by the residual variance.

λ3, λ4 and λ6 of ``t_rtt`` cannot all be determined by any data: only ``λ3 + λ4`` and
``λ4 exp(-λ5 λ6)`` enter the curve (:mod:`netmodels.models.lop_audit` shows the exact
null direction of the Jacobian).  :func:`fit_rtt` therefore fixes ``λ6`` (default 0) and
fits the five others; any λ6 gives the same curve.  With ``saturation=False`` it fits
the pipeline and processing terms only (λ4 = λ5 = λ6 = 0), for data over few peers.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.optimize import OptimizeWarning, curve_fit

from .lop import OverheadCurve, RTTCurve, peers, t_ov, t_rtt

US = 1e-6
#: upper bound (peers) on the offsets λ2 of t_rtt and λ3 of t_ov: beyond it λ1/(λ2 + p) is a
#: straight line and λ1, λ2 run off together without bound
MAX_OFFSET = 1e3


class FitError(RuntimeError):
    """The least-squares fit did not converge from any starting point."""


@dataclass(frozen=True)
class LoPFit:
    """A fitted LoP curve: ``curve`` (RTTCurve or OverheadCurve, SI units) and diagnostics."""

    curve: object
    stderr: tuple              #: standard error of each λ (same units; 0 for a fixed one, inf if undetermined)
    fixed: tuple               #: True where the λ was held fixed
    rms_relative: float        #: root-mean-square relative residual
    max_relative: float        #: largest |model - data| / data
    npoints: int
    condition: float           #: condition number of the column-scaled Jacobian of the free λ

    @property
    def lambdas(self) -> tuple:
        return self.curve.lambdas

    def __call__(self, p):
        return self.curve(p)


def _data(p, seconds, nfree: int):
    x = peers("p", p)
    try:
        t = np.asarray(seconds, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"seconds must hold finite times > 0, got {seconds!r}") from None
    if x.ndim != 1 or t.shape != x.shape:
        raise ValueError(f"p and seconds must be 1-D arrays of equal length, got shapes {x.shape} and {t.shape}")
    if np.any(~np.isfinite(t) | (t <= 0)):
        raise ValueError("seconds must hold finite times > 0 (no NaN, inf, zero or negative)")
    if np.unique(x).size <= nfree:
        raise ValueError(f"p must hold at least {nfree + 1} distinct peer counts to fit {nfree} "
                         f"parameters with an error estimate, got {np.unique(x).size}")
    return x, t


def _fit(model, x, t, starts, lower, upper, fixed_values, npar):
    """Best curve_fit over ``starts`` (µs units inside); returns (params, cov, jac_cond)."""
    free = [i for i in range(npar) if i not in fixed_values]
    t_us = t / US

    def f(xx, *q):
        full = np.empty(npar)
        full[free] = q
        for i, v in fixed_values.items():
            full[i] = v
        return model(xx, *full)

    best, errors = None, []
    for p0 in starts:
        p0 = np.clip([p0[i] for i in free], [lower[i] + 1e-9 for i in free], [upper[i] - 1e-9 for i in free])
        try:
            with warnings.catch_warnings(), np.errstate(over="ignore", invalid="ignore"):
                warnings.simplefilter("ignore", OptimizeWarning)   # covariance not estimated: stderr inf
                warnings.simplefilter("ignore", RuntimeWarning)    # overflow of a trial step, rejected
                q, cov = curve_fit(f, x, t_us, p0=p0, sigma=t_us, absolute_sigma=False,
                                   bounds=([lower[i] for i in free], [upper[i] for i in free]),
                                   method="trf", max_nfev=2000)
        except (RuntimeError, ValueError) as exc:
            errors.append(str(exc))
            continue
        cost = float(np.sum(((f(x, *q) - t_us) / t_us) ** 2))
        if np.all(np.isfinite(q)) and (best is None or cost < best[0]):
            best = (cost, q, cov)
    if best is None:
        raise FitError("the least-squares fit did not converge from any starting point: "
                       + "; ".join(dict.fromkeys(errors)))
    _, q, cov = best
    # condition number of the Jacobian with columns scaled to relative sensitivities
    h = 1e-6 * np.maximum(np.abs(q), 1e-3)
    J = np.column_stack([(f(x, *(q + h[k] * np.eye(len(q))[k])) - f(x, *(q - h[k] * np.eye(len(q))[k])))
                         / (2 * h[k]) / t_us * max(abs(q[k]), 1e-3) for k in range(len(q))])
    s = np.linalg.svd(J, compute_uv=False)
    cond = float(s[0] / s[-1]) if s[-1] > 0 else math.inf
    full = np.empty(npar)
    full[free] = q
    err = np.zeros(npar)
    diag = np.diag(cov) if cov is not None else np.full(len(free), np.inf)
    err[free] = np.where(np.isfinite(diag) & (diag >= 0), np.sqrt(np.abs(diag)), np.inf)
    for i, v in fixed_values.items():
        full[i] = v
    resid = (model(x, *full) - t_us) / t_us
    return full, err, resid, cond


# units of each λ in the µs system used inside: 1 = microseconds, 0 = dimensionless
_RTT_US = (1, 0, 1, 1, 0, 0)
_OV_US = (1, 1, 0)


def _to_si(values, us_flags):
    return tuple(float(v * US) if u else float(v) for v, u in zip(values, us_flags))


def fit_rtt(p, seconds, *, saturation: bool = True, l6: float = 0.0) -> LoPFit:
    """Fit ``t_rtt(p; λ1..λ6)`` to round-trip times ``seconds`` (s, > 0) at peer counts ``p`` (>= 1).

    ``λ6`` is held at ``l6`` (it is not identifiable, see the module docstring); with
    ``saturation=False`` λ4 = λ5 = λ6 = 0 and three parameters are fitted.  Needs more
    distinct ``p`` than free parameters (6 with saturation, 4 without).  Bounds:
    ``λ1 >= 0`` (a start-up cost that pipelining spreads), ``-1 < λ2 <= MAX_OFFSET``
    (no pole at p >= 1), ``|λ5| <= 5`` per peer.  Raises :class:`FitError`
    if no start converges.
    """
    l6 = float(l6)
    if not math.isfinite(l6):
        raise ValueError(f"l6 must be a finite number of peers, got {l6!r}")
    fixed = {5: l6} if saturation else {3: 0.0, 4: 0.0, 5: 0.0}
    x, t = _data(p, seconds, 6 - len(fixed))
    t_us = t / US
    order = np.argsort(x)
    first, last = t_us[order[0]], t_us[order[-1]]
    tail = float(np.min(t_us))
    l1 = max((first - tail) * (1 + x.min()), 1e-3)
    starts = [(l1, 0.0, tail, 0.0, l5, l6) for l5 in ((-0.5, -0.05, 0.05) if saturation else (0.0,))]
    if saturation:
        starts += [(l1, 0.0, tail, last - tail, l5, l6) for l5 in (-0.5, 0.05)]
    inf = np.inf
    lower = (0.0, -0.999, -inf, -inf, -5.0, -inf)
    upper = (inf, MAX_OFFSET, inf, inf, 5.0, inf)
    full, err, resid, cond = _fit(t_rtt, x, t, starts, lower, upper, fixed, 6)
    curve = RTTCurve(_to_si(full, _RTT_US), name="fit", source="least squares (relative)")
    return LoPFit(curve, _to_si(err, _RTT_US), tuple(i in fixed for i in range(6)),
                  float(np.sqrt(np.mean(resid**2))), float(np.max(np.abs(resid))), int(x.size), cond)


def fit_overhead(p, seconds) -> LoPFit:
    """Fit ``t_ov(p) = λ1 + λ2 / (λ3 + p)`` to overheads ``seconds`` (s, > 0) at peer counts ``p``.

    Needs at least 4 distinct ``p``; bounds ``-1 < λ3 <= MAX_OFFSET``.  Raises :class:`FitError` if no
    start converges."""
    x, t = _data(p, seconds, 3)
    t_us = t / US
    tail = float(np.min(t_us))
    first = float(t_us[np.argmin(x)])
    starts = [(tail, max(first - tail, 1e-3) * (1 + l3), l3) for l3 in (0.0, -0.5, 2.0)]
    inf = np.inf
    full, err, resid, cond = _fit(t_ov, x, t, starts, (-inf, -inf, -0.999), (inf, inf, MAX_OFFSET), {}, 3)
    curve = OverheadCurve(_to_si(full, _OV_US), name="fit", source="least squares (relative)")
    return LoPFit(curve, _to_si(err, _OV_US), (False, False, False), float(np.sqrt(np.mean(resid**2))),
                  float(np.max(np.abs(resid))), int(x.size), cond)
