"""The LoP chapter's figures: the live panel's drawing and the static twin."""

import math

import matplotlib
import numpy as np
from matplotlib.figure import Figure

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


def test_static_twin_and_live_drawing():
    fig = lop_panel.lop_figure()
    html = fig._repr_html_()
    assert "fastest n-way dissemination n = 7" in html and html.count("λ") >= 4
    mfig = Figure()
    ax = mfig.add_subplot()
    lop_panel.draw_lop(ax, [22.4558, -0.0140, 9.1637, 0.0174, -0.0625, 101.3065])
    assert "fastest n = 7" in ax.get_title() and len(ax.get_lines()) == 4
