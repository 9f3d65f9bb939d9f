"""LoP model, its fits, and the audit of the paper's arithmetic."""

import math

import numpy as np
import pytest

from netmodels.models import lop, lop_audit, lop_fit
from netmodels.models import machines as m

P = np.arange(1, m.LOP_CLUSTER_NODES)


def paper_send_rtt_us(p):
    """Section 4.7's Send/Receive formula, typed as printed (µs)."""
    return 9.1637 + 22.4558 / (-0.0140 + p) + 0.0174 * (1 - math.exp(-0.0625 * (p - 101.3065)))


def paper_rdma_rtt_us(p):
    return 4.4642 + 16.7937 / (0.0058 + p) + 4.4751 * (1 - math.exp(-0.0642 * (p - 12.9209)))


def printed_L_us(p):
    return (4.58 + 11.23 / (-0.01 + p) + 0.01 * (1 - math.exp(-0.06 * (p - 101.31)))
            - (0.52 + 0.84 / (-0.12 + 1)) - (0.52 + 0.84 / (-0.12 + p)))


def test_reference_curves_reproduce_the_printed_formulas():
    for p in (1, 2, 7, 30, 63):
        assert m.LOP_SENDRECV_RTT_MIN(p) == pytest.approx(paper_send_rtt_us(p) * 1e-6, rel=1e-12)
        assert m.LOP_RDMAW_RTT_MIN(p) == pytest.approx(paper_rdma_rtt_us(p) * 1e-6, rel=1e-12)
        assert m.LOP_RDMAW_OS(p) == pytest.approx((0.5557 + 0.2103 / (p - 0.7728)) * 1e-6, rel=1e-12)
        assert lop_audit.printed_latency_send(p) == pytest.approx(printed_L_us(p) * 1e-6, rel=1e-12)


def test_printed_L_halves_the_rtt_fit_rounded_to_two_decimals():
    full = np.array(m.LOP_SENDRECV_RTT_MIN.lambdas) / [1e-6, 1, 1e-6, 1e-6, 1, 1]
    half = np.array(m.LOP_PRINTED_L_HALF_RTT.lambdas) / [1e-6, 1, 1e-6, 1e-6, 1, 1]
    for k in (0, 2, 3):       # λ1, λ3, λ4 are halved
        assert round(full[k] / 2, 2) == pytest.approx(half[k])
    for k in (1, 4, 5):       # λ2, λ5, λ6 are not
        assert round(full[k], 2) == pytest.approx(half[k])


def test_rounding_error_of_the_printed_L_up_to_044_us_and_32_percent():
    full = np.array([lop.latency(p, lambda q: paper_send_rtt_us(q) * 1e-6, m.LOP_PRINTED_L_OVERHEAD)
                     for p in P])
    diff = np.array([printed_L_us(p) * 1e-6 for p in P]) - full
    d, r = lop_audit.rounding_error(P)
    np.testing.assert_allclose(d, diff, rtol=1e-9, atol=1e-15)
    assert d.max() == pytest.approx(0.4394e-6, abs=1e-10) and P[d.argmax()] == 1
    assert r.max() == pytest.approx(0.3252, abs=1e-4) and P[r.argmax()] == 6
    # the cause: e^(0.0625·101.31) against e^(0.06·101.31)
    assert math.exp(0.0625 * 101.31) == pytest.approx(562.2, abs=0.1)
    assert math.exp(0.06 * 101.31) == pytest.approx(436.4, abs=0.1)


def test_subtracted_overhead_is_not_the_printed_rdma_fit():
    d = lop_audit.overhead_mismatch(P)
    assert d.max() == pytest.approx(((0.52 + 0.84 / 1.88) - (0.5557 + 0.2103 / 1.2272)) * 1e-6, rel=1e-9)
    assert P[d.argmax()] == 2 and d.max() > 0.23e-6


def test_jacobian_is_the_finite_difference_one_and_has_rank_five():
    lam = np.array(m.LOP_SENDRECV_RTT_MIN.lambdas)
    J = lop_audit.rtt_jacobian(P, lam, relative=False)
    for k in range(6):
        h = 1e-6 * max(abs(lam[k]), 1e-9)
        up, down = lam.copy(), lam.copy()
        up[k] += h
        down[k] -= h
        fd = (lop.t_rtt(P, *up) - lop.t_rtt(P, *down)) / (2 * h)
        np.testing.assert_allclose(J[:, k], fd, rtol=1e-5, atol=1e-9 * np.abs(fd).max())
    info = lop_audit.identifiability(P, lam)
    assert info["condition_6"] > 1e14 and info["condition_5"] < 1e5
    assert np.linalg.matrix_rank(lop_audit.rtt_jacobian(P, lam)) == 5


def test_lambda3_4_6_trade_off_exactly():
    v, Jv = lop_audit.rtt_null_direction()
    assert Jv == 0
    l1, l2, l3, l4, l5, l6 = m.LOP_SENDRECV_RTT_MIN.lambdas
    new6 = 20.0
    new4 = l4 * math.exp(l5 * (new6 - l6))          # keeps λ4 e^(-λ5 λ6)
    other = lop.RTTCurve((l1, l2, l3 + l4 - new4, new4, l5, new6))
    np.testing.assert_allclose(other(P), m.LOP_SENDRECV_RTT_MIN(P), rtol=1e-12)
    assert new4 / l4 > 100      # λ4 from 0.0174 µs to 2.8 µs, λ3 moved alike: the same curve


def test_t_one_to_n_is_not_monotone_for_the_paper_curves():
    t = [lop.t_one_to_n(n, m.LOP_SENDRECV_RTT_MIN, m.LOP_RDMAW_OS) for n in P]
    assert lop_audit.first_decrease(t) == 1
    assert int(np.argmin(t)) + 1 == 5 and t[4] < t[0]


def test_t_one_to_n_formula_by_hand():
    rtt, ov = m.LOP_SENDRECV_RTT_MIN, m.LOP_RDMAW_OS
    for n in (1, 3, 8):
        L = rtt(n) / 2 - ov(n) - ov(1)
        assert lop.t_one_to_n(n, rtt, ov) == pytest.approx(ov(n) + n * L)
        assert lop.t_one_to_n(n, rtt, ov, post_list=True) == pytest.approx(n * ov(n) + n * L)
        assert lop.latency_list(n, rtt, ov) == pytest.approx(rtt(n) / 2 - n * ov(n) - ov(1))


@pytest.mark.parametrize("P_, n, rounds", [(64, 3, 3), (64, 7, 2), (64, 1, 6), (9, 2, 2), (2, 4, 1), (1, 2, 0)])
def test_nway_barrier_rounds_follow_the_schedule(P_, n, rounds):
    sizes = lop.round_sizes(P_, n)
    assert len(sizes) == rounds
    assert all(s == min(n, P_ - 1) for s in sizes)
    expect = rounds * lop.t_one_to_n(min(n, max(P_ - 1, 1)), m.LOP_SENDRECV_RTT_MIN, m.LOP_RDMAW_OS) if rounds else 0
    assert lop.nway_barrier_time(P_, n, m.LOP_SENDRECV_RTT_MIN, m.LOP_RDMAW_OS) == pytest.approx(expect)


def test_best_n_is_the_brute_force_minimum():
    n, times = lop.best_n(64, m.LOP_SENDRECV_RTT_MIN, m.LOP_RDMAW_OS)
    brute = min(range(1, 64), key=lambda k: lop.nway_barrier_time(64, k, m.LOP_SENDRECV_RTT_MIN, m.LOP_RDMAW_OS))
    assert n == brute and times.size == 63


@pytest.mark.parametrize("bad", [0, 0.5, np.nan, np.inf, [1, -2], "x", []])
def test_bad_peer_counts_are_refused(bad):
    with pytest.raises(ValueError, match="p must hold"):
        m.LOP_SENDRECV_RTT_MIN(bad)


def test_bad_curves_are_refused():
    with pytest.raises(ValueError, match="6 numbers"):
        lop.RTTCurve((1, 2, 3))
    with pytest.raises(ValueError, match="λ2 must be > -1"):
        lop.RTTCurve((1e-6, -1.5, 1e-6, 0, 0, 0))
    with pytest.raises(ValueError, match="λ3 must be > -1"):
        lop.OverheadCurve((1e-6, 1e-6, -2))
    with pytest.raises(ValueError, match="finite"):
        lop.OverheadCurve((np.nan, 1e-6, 0))
    with pytest.raises(ValueError, match="P must be an integer >= 2"):
        lop.best_n(1, m.LOP_SENDRECV_RTT_MIN, m.LOP_RDMAW_OS)


# ---------------------------------------------------------------- fits
@pytest.mark.parametrize("curve", [m.LOP_SENDRECV_RTT_MIN, m.LOP_RDMAW_RTT_MIN])
def test_fit_rtt_recovers_the_paper_curves(curve):
    f = lop_fit.fit_rtt(P, curve(P))
    np.testing.assert_allclose(f(P), curve(P), rtol=1e-6)
    assert f.rms_relative < 1e-6 and f.fixed == (False,) * 5 + (True,)
    # the identifiable combinations agree with the paper's, whatever λ6 is
    for got, want in zip(lop_audit.identifiable_combinations(f.lambdas),
                         lop_audit.identifiable_combinations(curve.lambdas)):
        assert got == pytest.approx(want, rel=1e-4)
    g = lop_fit.fit_rtt(P, curve(P), l6=30.0)
    np.testing.assert_allclose(g(P), curve(P), rtol=1e-6)


def test_fit_rtt_with_noise_and_uncertainties():
    rng = np.random.default_rng(3)
    t = m.LOP_SENDRECV_RTT_MIN(P) * (1 + 0.01 * rng.standard_normal(P.size))
    f = lop_fit.fit_rtt(P, t)
    assert np.max(np.abs(f(P) / m.LOP_SENDRECV_RTT_MIN(P) - 1)) < 0.02
    assert 0.005 < f.rms_relative < 0.02
    assert all(np.isfinite(f.stderr[:5])) and f.stderr[5] == 0


def test_fit_overhead_and_the_predicted_n():
    o = lop_fit.fit_overhead(P, m.LOP_RDMAW_OS(P))
    np.testing.assert_allclose(o.lambdas, m.LOP_RDMAW_OS.lambdas, rtol=1e-6)
    r = lop_fit.fit_rtt(P, m.LOP_SENDRECV_RTT_MIN(P))
    assert lop.best_n(64, r, o)[0] == lop.best_n(64, m.LOP_SENDRECV_RTT_MIN, m.LOP_RDMAW_OS)[0]


def test_fit_without_saturation_on_few_peers():
    p = np.arange(1, 6)
    f = lop_fit.fit_rtt(p, m.LOP_RDMAW_RTT_MIN(p), saturation=False)
    assert f.lambdas[3:] == (0.0, 0.0, 0.0) and f.rms_relative < 0.05


@pytest.mark.parametrize("p, t, match", [
    ([1, 2, 3], [3e-6, 2e-6, 1e-6], "at least 6 distinct"),
    ([1, 1, 1, 1, 1, 1, 1], [1e-6] * 7, "at least 6 distinct"),
    (range(1, 8), [1e-6, np.nan, 1, 1, 1, 1, 1], "finite times > 0"),
    (range(1, 8), [1e-6, 0, 1, 1, 1, 1, 1], "finite times > 0"),
    (range(1, 8), [1e-6] * 6, "equal length"),
    ([0, 1, 2, 3, 4, 5, 6], [1e-6] * 7, "p must hold"),
])
def test_fit_rtt_refuses_bad_data(p, t, match):
    with pytest.raises(ValueError, match=match):
        lop_fit.fit_rtt(p, t)


def test_fit_overhead_refuses_too_few_points():
    with pytest.raises(ValueError, match="at least 4 distinct"):
        lop_fit.fit_overhead([1, 2, 3], [1e-6, 1e-6, 1e-6])


def test_a_fit_that_does_not_converge_is_reported(monkeypatch):
    def fail(*a, **k):
        raise RuntimeError("Optimal parameters not found: The maximum number of function evaluations is exceeded.")
    monkeypatch.setattr(lop_fit, "curve_fit", fail)
    with pytest.raises(lop_fit.FitError, match="did not converge.*maximum number"):
        lop_fit.fit_rtt(P, m.LOP_SENDRECV_RTT_MIN(P))


def test_references_5_and_6_are_the_same_entry():
    assert lop_audit.PRINTED_REFERENCE_5 == lop_audit.PRINTED_REFERENCE_6


def test_whole_round_trip_reading_counts_the_latency_once():
    rtt = lambda p: np.full(np.shape(p), 20e-6) if np.ndim(p) else 20e-6      # constant R
    ov = lambda p: np.full(np.shape(p), 1e-6) if np.ndim(p) else 1e-6         # constant O
    L = 20e-6 / 2 - 2e-6                                                       # R/2 - 2 O
    for n in (1, 4, 9):
        assert lop.t_one_to_n(n, rtt, ov) == pytest.approx(1e-6 + n * L)
        assert lop.t_one_to_n(n, rtt, ov, rtt_per_message=False) == pytest.approx(1e-6 + L)
        assert lop.t_one_to_n(n, rtt, ov, post_list=True, rtt_per_message=False) == pytest.approx(n * 1e-6 + L)
    # one round of 63 messages against six rounds of one: 1e-6 + L against 6 (1e-6 + L)
    n, times = lop.best_n(64, rtt, ov, rtt_per_message=False)
    assert n == 63 and times[0] == pytest.approx(6 * (1e-6 + L)) and times[-1] == pytest.approx(1e-6 + L)


def test_non_pipeline_part_at_one_peer_from_the_printed_numbers():
    # t_rtt(1) minus 22.4558 / (1 - 0.0140), typed from the paper (µs)
    send = paper_send_rtt_us(1) - 22.4558 / (-0.0140 + 1)
    rdma = paper_rdma_rtt_us(1) - 16.7937 / (0.0058 + 1)
    assert lop_audit.non_pipeline_at_one(m.LOP_SENDRECV_RTT_MIN.lambdas) == pytest.approx(send * 1e-6, rel=1e-9)
    assert lop_audit.non_pipeline_at_one(m.LOP_RDMAW_RTT_MIN.lambdas) == pytest.approx(rdma * 1e-6, rel=1e-9)
    assert send < 0 and rdma < -0.5
    # the same curve with λ6 moved (λ3, λ4 adjusted) gives the same value
    l1, l2, l3, l4, l5, l6 = m.LOP_SENDRECV_RTT_MIN.lambdas
    new4 = l4 * np.exp(l5 * (1.0 - l6))
    moved = (l1, l2, l3 + l4 - new4, new4, l5, 1.0)
    assert lop_audit.non_pipeline_at_one(moved) == pytest.approx(send * 1e-6, rel=1e-9)
    assert moved[2] == pytest.approx(send * 1e-6, rel=1e-6)     # λ6 = 1: λ3 is that value


def test_linear_fit_recovers_a_line():
    p = np.arange(1, 20)
    a, g, worst = lop_audit.linear_fit(p, 3e-6 + 2e-6 * p)
    assert a == pytest.approx(3e-6) and g == pytest.approx(2e-6) and worst < 1e-9
    a, g, worst = lop_audit.linear_fit([1, 2, 3], [1.0, 1.0, 4.0])
    assert (a, g) == pytest.approx((-1.0, 1.5))
    assert worst == pytest.approx(1.0)      # the line gives 0.5, 2.0, 3.5: 2.0 against 1.0 at p = 2


def test_printed_rounding_spread_is_the_lambda5_term():
    # non_pipeline_at_one = (λ3 + λ4) - λ4 e^(λ5 (1 - λ6)); moving λ5 by 5e-5 changes the
    # exponential by the factor e^(±5e-5 (1 - λ6)): for Send/Receive 9.78 µs x 5e-5 x 100.3
    l1, l2, l3, l4, l5, l6 = m.LOP_SENDRECV_RTT_MIN.lambdas
    expo = l4 * math.exp(l5 * (1 - l6))
    by_l5 = max(abs(expo * (math.exp(s * 5e-5 * (1 - l6)) - 1)) for s in (-1, 1))
    spread = lop_audit.printed_rounding_spread(lop_audit.non_pipeline_at_one, m.LOP_SENDRECV_RTT_MIN.lambdas)
    assert spread == pytest.approx(by_l5, rel=1e-6)
    assert 0.04e-6 < spread < 0.06e-6
