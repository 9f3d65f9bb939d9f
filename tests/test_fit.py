import numpy as np
import pytest
from scipy.optimize import minimize

from netmodels import fit_alpha_beta, fit_piecewise


def synthetic(alpha, beta, sizes, noise, seed=0):
    rng = np.random.default_rng(seed)
    t = alpha + beta * sizes
    return t * (1 + noise * rng.standard_normal(t.shape))


def test_recovers_parameters_within_the_stated_error():
    n = np.repeat(np.logspace(0, 6, 25), 4)
    t = synthetic(3e-6, 2e-10, n, noise=0.02)
    f = fit_alpha_beta(n, t)
    # truth within 4 standard errors: the error estimate is honest, not decorative
    assert abs(f.alpha - 3e-6) < 4 * f.alpha_stderr
    assert abs(f.beta - 2e-10) < 4 * f.beta_stderr
    assert 0 < f.alpha_stderr < 0.1 * f.alpha


def test_agrees_with_a_direct_numerical_minimisation():
    n = np.logspace(0, 5, 12)
    t = synthetic(5e-6, 1e-9, n, noise=0.05, seed=3)
    f = fit_alpha_beta(n, t)
    res = minimize(lambda p: np.sum(((p[0] * 1e-6 + p[1] * 1e-9 * n - t) / t) ** 2), [1, 1],
                   method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-16, "maxiter": 10000})
    assert f.alpha == pytest.approx(res.x[0] * 1e-6, rel=1e-4)
    assert f.beta == pytest.approx(res.x[1] * 1e-9, rel=1e-4)


def test_exact_data_fits_exactly_and_two_points_have_no_error_estimate():
    f = fit_alpha_beta([0, 100], [1e-6, 2e-6])
    assert f.alpha == pytest.approx(1e-6) and f.beta == pytest.approx(1e-8)
    assert np.isnan(f.alpha_stderr)


def test_piecewise_finds_the_protocol_switch():
    n = np.array([2.0**k for k in range(0, 23)])
    t = np.where(n < 2**14, 1e-6 + n * 2e-10, 8e-6 + n * 1e-10)
    t = t * (1 + 0.005 * np.random.default_rng(1).standard_normal(n.size))
    pw = fit_piecewise(n, t)
    assert pw.switch_bytes == 2**14
    assert pw.below.alpha == pytest.approx(1e-6, rel=0.05)
    assert pw.above.beta == pytest.approx(1e-10, rel=0.05)
    single = fit_alpha_beta(n, t)
    assert np.sum(((pw.predict(n) - t) / t) ** 2) < np.sum(((single.predict(n) - t) / t) ** 2)


@pytest.mark.parametrize("n, t, word", [
    ([1, 1, 1], [1e-6, 1e-6, 1e-6], "distinct"),
    ([1, 2], [1e-6], "equal length"),
    ([1, -2], [1e-6, 2e-6], "nbytes"),
    ([1, 2], [1e-6, 0], "seconds"),
    ([1, 2], [1e-6, np.nan], "seconds"),
])
def test_bad_data(n, t, word):
    with pytest.raises(ValueError, match=word):
        fit_alpha_beta(n, t)


def test_piecewise_needs_enough_sizes():
    with pytest.raises(ValueError, match="distinct sizes"):
        fit_piecewise([1, 2, 3, 4], [1, 2, 3, 4])
    with pytest.raises(ValueError, match="min_sizes"):
        fit_piecewise(range(1, 10), range(1, 10), min_sizes=1)


def test_unphysical_fits_are_named_with_what_to_do():
    from netmodels.models.fit import MEASURE_AGAIN, unphysical

    n = np.array([2.0**k for k in range(0, 12)])
    good = fit_alpha_beta(n, 1e-6 + 1e-9 * n)
    assert good.unphysical() is None and unphysical("L(p)", L=np.array([3e-6, 1e-6])) is None
    big = np.array([2.0**k for k in range(7, 20)])   # times on a line through a negative latency
    bad = fit_alpha_beta(big, -1e-7 + 1e-9 * big)
    assert bad.alpha == pytest.approx(-1e-7)
    why = bad.unphysical("your fit")
    assert why.startswith("your fit: alpha = -") and why.endswith(MEASURE_AGAIN) and "beta" not in why
    why = unphysical("L(p)", L=np.array([3e-6, -2e-6]))
    assert why.startswith("L(p): L = -2 µs <= 0") and "close other programs and measure again" in why
    pw = fit_piecewise(n, np.where(n < 2**6, 1e-6 + 1e-9 * n, 0.5e-6 + 2e-9 * n))
    assert pw.unphysical() is None
    falling = fit_piecewise(n, np.where(n < 2**6, 3e-6 - 4e-8 * n, 1e-6 + 1e-9 * n))
    assert falling.below.beta < 0 and "below the switch: beta = -" in falling.unphysical()
