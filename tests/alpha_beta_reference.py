"""Reference for the tests: the α-β fit of a measured file's minima with its 95 % intervals, written
out from the normal equations, not through the kit's fit (:func:`mpi_exercises.bench.pingpong.fit`)."""

from __future__ import annotations

import numpy as np


def least_squares_interval(results, confidence: float = 0.95):
    """α (s), β (s/B) and their ``confidence`` intervals by weighted least squares on the per-size
    minima of ``results`` (the normal equations of (α + β n - t) / t, the residual variance on
    sizes - 2 degrees of freedom, Student's t quantile from scipy.stats): arrays (estimate, low, high)."""
    from scipy import stats

    n = np.array([r["bytes"] for r in results], float)
    t = np.array([r["min_s"] for r in results], float)
    X = np.column_stack([1 / t, n / t])
    coef = np.linalg.solve(X.T @ X, X.T @ np.ones_like(t))
    s2 = np.sum((X @ coef - 1) ** 2) / (t.size - 2)
    half = stats.t.ppf(0.5 + confidence / 2, t.size - 2) * np.sqrt(s2 * np.diag(np.linalg.inv(X.T @ X)))
    return coef, coef - half, coef + half
