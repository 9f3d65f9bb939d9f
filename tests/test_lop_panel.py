"""The LoP chapter's figures: the live panel's drawing and the static twin."""

import math

import matplotlib
import numpy as np
import pytest

from netmodels.figures import lop_panel
from netmodels.models import lop
from netmodels.models import machines as m

matplotlib.use("Agg")


def test_curves_follow_the_printed_formula():
    out = lop_panel.lop_curves(m.LOP_SENDRECV_RTT_MIN.lambdas)
    p = lop_panel.PEERS
    typed = np.array([9.1637 + 22.4558 / (q - 0.0140) + 0.0174 * (1 - math.exp(-0.0625 * (q - 101.3065)))
                      for q in p]) * 1e-6
    np.testing.assert_allclose(out["t_rtt(p)"], typed, rtol=1e-12)
    o = np.array([0.5557 + 0.2103 / (q - 0.7728) for q in p]) * 1e-6
    L = typed / 2 - o - o[0]
    np.testing.assert_allclose(out["L(p)"], L, rtol=1e-9)
    np.testing.assert_allclose(out["t_1:n"], o + p * L, rtol=1e-9)


def test_best_barrier_is_the_brute_force_one():
    n, t = lop_panel.best_barrier(m.LOP_SENDRECV_RTT_MIN.lambdas)
    times = {k: lop.nway_barrier_time(64, k, m.LOP_SENDRECV_RTT_MIN, m.LOP_RDMAW_OS) for k in range(1, 64)}
    assert n == min(times, key=times.get) and t == times[n]


def test_static_twin_and_live_panel():
    fig = lop_panel.lop_spec().static()
    html = fig._repr_html_()
    assert "fastest n-way dissemination n = 7" in html and html.count("λ") >= 4
    assert [p["name"] for p in fig.spec["params"]] == ["l1", "l3", "l5", "l6"]   # λ2, λ4 held
    panel = lop_panel.lop_spec().live()
    sliders = [*panel.children[0].children, *panel.children[1].children]
    assert [s.description for s in sliders] == ["λ1 (µs)", "λ2", "λ3 (µs)", "λ4 (µs)", "λ5 (/peer)", "λ6 (peers)"]
    assert sliders[0].value == pytest.approx(22.4558)
    status = panel.children[-1]
    assert "fastest n-way dissemination n = 7" in status.value
    sliders[4].value = 0.0                                  # λ5 = 0: t_rtt(p) = λ3 + λ1/(p - λ2)
    rtt = lop.RTTCurve((22.4558e-6, -0.0140, 9.1637e-6, 0.0174e-6, 0.0, 101.3065))
    n, t = lop.best_n(64, rtt, m.LOP_RDMAW_OS)
    assert f"n = {n}, {t[n - 1] / 1e-6:.1f} µs" in status.value
