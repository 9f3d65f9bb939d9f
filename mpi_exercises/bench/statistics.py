"""Summary statistics of timing samples: quartiles, and the median with a distribution-free
confidence interval (seconds in, seconds out)."""

from __future__ import annotations

import numpy as np


def summarize(samples, confidence: float = 0.95) -> dict:
    """min, quartiles, median and max of timing samples in seconds; the median's
    ``confidence`` interval (:func:`median_ci`) as ``median_ci_s`` = [lo, hi] with its
    half-width over the median (``ci_relative_halfwidth``); and every sample, in the order
    taken (``times_s``, rounded to the picosecond: ``MPI.Wtime``'s tick is a nanosecond, and
    the digits below are the rounding of a difference of two clock readings), so that a figure
    can be redrawn from the JSON.  ``samples`` is their count."""
    s = np.asarray(samples, dtype=float)
    q = np.percentile(s, [0, 25, 50, 75, 100])
    med, lo, hi = median_ci(s, confidence)
    return {"samples": int(s.size), "min_s": q[0], "p25_s": q[1], "median_s": q[2],
            "p75_s": q[3], "max_s": q[4], "median_ci_s": [lo, hi], "confidence": confidence,
            "ci_relative_halfwidth": (hi - lo) / 2 / abs(med) if med else None,
            "times_s": np.round(s, 12).tolist()}


def median_ci(samples, confidence: float = 0.95) -> tuple[float, float, float]:
    """The median of ``samples`` and a distribution-free confidence interval for it (same
    unit as the samples): order statistics x_(j) <= median <= x_(k), with j and k from the
    binomial distribution Bin(n, 1/2), as Le Boudec (2011) and Hoefler & Belli (SC15)
    recommend for timings, which are seldom normal.  The interval covers the true median
    with probability >= ``confidence``; with fewer than 6 samples at 95 % none does, and
    the interval is (min, max)."""
    x = np.sort(np.asarray(samples, dtype=float))
    n = x.size
    if n == 0:
        raise ValueError("median_ci needs at least one sample")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    # the largest j with P(B <= j - 1) <= (1 - confidence) / 2, B ~ Bin(n, 1/2): the interval
    # x_(j) .. x_(n+1-j) (1-based) misses the median with probability 2 P(B <= j - 1)
    j = max(1, int(np.count_nonzero(half_binomial_cdf(n) <= (1 - confidence) / 2)))
    return float(np.median(x)), float(x[j - 1]), float(x[n - j])


def half_binomial_cdf(n: int) -> np.ndarray:
    """P(B <= i) for i = 0 .. n-1, B ~ Bin(n, 1/2), from the log-pmf's recursion
    log C(n, i+1) = log C(n, i) + log((n-i)/(i+1)): numpy only, as scipy.stats alone takes
    0.45 s to import in every benchmark's process (tests/test_median_ci.py compares it
    with ``scipy.stats.binom.cdf``)."""
    i = np.arange(n - 1, dtype=float)
    log_comb = np.concatenate(([0.0], np.cumsum(np.log((n - i) / (i + 1)))))
    return np.minimum(np.cumsum(np.exp(log_comb - n * np.log(2.0))), 1.0)
