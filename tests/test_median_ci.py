"""The median's distribution-free confidence interval (mpi_exercises.bench.statistics.median_ci)."""

import numpy as np
import pytest

from mpi_exercises.bench.statistics import half_binomial_cdf, median_ci


@pytest.mark.parametrize("n, j, k", [(6, 1, 6), (10, 2, 9), (20, 6, 15), (100, 40, 61)])
def test_order_statistics_as_tabulated(n, j, k):
    """Le Boudec, Performance Evaluation of Computer and Communication Systems (2011),
    Table A.1 (95 %): the 1-based ranks of the interval's ends."""
    x = np.arange(1.0, n + 1)[::-1]              # given unsorted
    assert median_ci(x)[1:] == (j, k)


def test_below_six_samples_the_interval_is_the_range():
    assert median_ci([3.0, 1.0, 2.0, 5.0, 4.0]) == (3.0, 1.0, 5.0)


def test_coverage_on_skewed_timings():
    """Simulated log-normal 'timings' with a known median: the interval covers it in at
    least 95 % of 4000 draws, and in not much more (it is not the min-max range)."""
    rng = np.random.default_rng(7)
    true_median = np.exp(0.0)
    covered = 0
    for _ in range(4000):
        _, lo, hi = median_ci(rng.lognormal(0.0, 0.8, size=31))
        covered += lo <= true_median <= hi
    assert 0.95 <= covered / 4000 <= 0.985


def test_bad_input():
    with pytest.raises(ValueError):
        median_ci([])
    with pytest.raises(ValueError):
        median_ci([1.0], confidence=1.0)


@pytest.mark.parametrize("n", [1, 2, 5, 6, 31, 100, 1000, 20000])
def test_binomial_cdf_equals_scipys(n):
    from scipy import stats

    np.testing.assert_allclose(half_binomial_cdf(n), stats.binom.cdf(np.arange(n), n, 0.5), rtol=1e-9, atol=1e-300)


def test_summaries_do_not_import_scipy():
    """Every benchmark's process summarises its samples: scipy.stats would cost it 0.45 s."""
    import subprocess
    import sys

    code = ("import sys; from mpi_exercises.bench.statistics import summarize; summarize(range(1, 40)); "
            "assert 'scipy' not in sys.modules, sorted(m for m in sys.modules if m.startswith('scipy'))[:3]")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
