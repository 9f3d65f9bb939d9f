"""The self-timed fluid simulation of the NBL machine and the fit of f(L) to its times."""

from dataclasses import replace

import pytest

from netmodels.algorithms.schedule import Schedule, Transfer
from netmodels.models import nbl, nbl_paper
from netmodels.models.machines import DELTA
from netmodels.simulate import desync


def test_one_node_with_three_links_costs_3_alpha_plus_3_beta_s():
    # rank 0 exchanges with 1 and receives from 2: L = 3 at rank 0, all in one step
    s = Schedule("t", 3, 100, [(Transfer(0, 1, 0, 100), Transfer(1, 0, 0, 100), Transfer(2, 0, 0, 100))])
    t, _ = desync.simulate_fluid(s, DELTA)
    # start-ups 3α at rank 0, then three transfers share its bandwidth: 3 β S; no combining
    assert t == pytest.approx(3 * DELTA.alpha + 3 * DELTA.beta * 8 * 100, rel=1e-12)   # 100 doubles


def test_perfect_overlap_machine_costs_one_transfer():
    s = Schedule("t", 3, 100, [(Transfer(1, 0, 0, 100), Transfer(2, 0, 0, 100))])
    t, _ = desync.simulate_fluid(s, DELTA, f_true=lambda n: 1)
    assert t == pytest.approx(2 * DELTA.alpha + DELTA.beta * 8 * 100, rel=1e-12)


def test_fit_recovers_the_f_table_of_lockstep_times():
    # times of the closed forms under an arbitrary f table: the fit must return that table
    f = {1: 1.0, 2: 1.7, 3: 2.2, 4: 3.1, 6: 4.4}
    rows = [(a, W, H, N, S, nbl_paper.time(a, N, W, H, S, replace(DELTA, f=f)))
            for a in ("Snake", "Fence") for W, H in ((4, 4), (8, 8)) for N in (1200, 6000)
            for S in (60, 120, 300)]
    fit = desync.fit_f(rows, DELTA)
    assert fit == pytest.approx({L: f[L] for L in desync.FITTED_LINKS}, rel=1e-9)


def test_self_timed_snake_without_noise_is_close_to_lockstep():
    from netmodels.algorithms import combining

    sched = combining.snake(16, 1200, block=120, mesh=(4, 4)).to_schedule()
    t, _ = desync.simulate_fluid(sched, DELTA)
    lock = nbl_paper.time("Snake", 1200, 4, 4, 120, replace(DELTA, f=nbl.NOMINAL))
    # a rank never waits longer than in lockstep, and fill and drain save little
    assert lock * 0.99 < t <= lock * (1 + 1e-12)
