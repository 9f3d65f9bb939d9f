"""The NBL model of Littlefield (1992): timelines, closed forms, optimal blocks, regimes.

References used here are independent of netmodels.models.nbl's closed forms: the registry's
schedules (counted by nbl_paper.count_timeline and nbl_derivation.schedule_timeline, costed by the
simulator), brute force over every block size, scipy's minimiser, and the paper's Table 1.
"""

import math

import numpy as np
import pytest
import sympy as sp
from scipy.optimize import minimize_scalar

from dataclasses import replace

from netmodels.algorithms import registry
from netmodels.models import nbl_blocks, nbl_fit, nbl_paper
from netmodels.models import nbl_derivation as d
from netmodels.models.machines import (DELTA, DELTA_BLOCK_RANGE, DELTA_MESHES, DELTA_TABLE1,
                                       DELTA_VECTOR_LENGTHS)
from netmodels.models.nbl import FITTED_DELTA, NOMINAL, STANDARD, NBLModel
from netmodels.simulate import simulate

F_TABLES = {"standard": STANDARD, "nominal": NOMINAL, "fitted": FITTED_DELTA}
#: the DELTA per element as section 7.2 prints it: α (s), β, c2, c3 (s per double)
ALPHA, BETA, C2, C3 = 54e-6, 1.54e-6, 0.25e-6, 0.37e-6
CHARGE = {0: 0.0, 2: C2, 3: C3}


def delta(f):
    """The DELTA with f table ``f``."""
    return replace(DELTA, f=f)


def test_delta_is_the_papers_machine_in_bytes():
    assert DELTA.alpha == pytest.approx(ALPHA, rel=1e-12) and DELTA.elem_bytes == 8
    assert (DELTA.beta, DELTA.c2, DELTA.c3) == pytest.approx((BETA / 8, C2 / 8, C3 / 8), rel=1e-12)
    assert DELTA.link_bandwidth == pytest.approx(8 / 1.54e-6, rel=1e-12)   # 5.2 MB/s as printed
SNAKE_MESHES = [(3, 1), (1, 4), (2, 2), (4, 4), (5, 3)]
FENCE_MESHES = [(3, 2), (3, 5), (4, 4), (6, 3)]


def phase_arrays(name, W, H, B):
    return d.expand(nbl_paper.phases(name, W, H, B))


# ------------------------------------------------------------------ timelines
@pytest.mark.parametrize("W,H", SNAKE_MESHES)
@pytest.mark.parametrize("B", [3, 4, 9])
def test_snake_timeline_counted_step_by_step_is_the_papers(W, H, B):
    L, k = nbl_paper.count_timeline("Snake", W, H, B)
    Lp, kp = phase_arrays("Snake", W, H, B)
    assert len(L) == 2 * W * H + B - 3
    np.testing.assert_array_equal(L, Lp)
    np.testing.assert_array_equal(k, kp)


@pytest.mark.parametrize("W,H", FENCE_MESHES)
@pytest.mark.parametrize("B", [3, 4, 9])
def test_fence_timeline_counted_step_by_step_is_the_papers_but_one_combine(W, H, B):
    L, k = nbl_paper.count_timeline("Fence", W, H, B)
    Lp, kp = phase_arrays("Fence", W, H, B)
    assert len(L) == 2 * W + 2 * H + B - 5
    np.testing.assert_array_equal(L, Lp)
    # the paper charges c2 at step H, where node (W-2, 0) already combines three blocks
    differ = np.flatnonzero(k != kp)
    assert differ.tolist() == [H - 1] and k[H - 1] == 3 and kp[H - 1] == 2


@pytest.mark.parametrize("name,meshes", [("snake", SNAKE_MESHES), ("fence", FENCE_MESHES)])
def test_executable_schedules_have_the_papers_link_counts(name, meshes):
    for W, H in meshes:
        for B in (3, 5):
            S = 2
            sched = registry.build("allreduce." + name.lower(), W * H, B * S, block=S, mesh=(W, H)).to_schedule()
            L, k, _ = d.schedule_timeline(sched)
            Lp, kp = phase_arrays(name.capitalize(), W, H, B)
            np.testing.assert_array_equal(L, Lp)
            assert np.count_nonzero(k != kp) == (1 if name == "fence" else 0)


@pytest.mark.parametrize("W,H", [(4, 4), (3, 5), (8, 2)])
def test_tree_closed_form_is_the_cost_of_the_executable_tree(W, H):
    N = 1000
    sched = registry.build("allreduce.tree", W * H, N, mesh=(W, H)).to_schedule()
    L, k, _ = d.schedule_timeline(sched)
    assert set(L.tolist()) == {1}
    by_steps = sum(ALPHA + BETA * N + (C2 * N if kk else 0) for kk in k)
    assert nbl_paper.tree_time(N, W, H, delta(NOMINAL)) == pytest.approx(by_steps, rel=1e-12)


@pytest.mark.parametrize("fname", list(F_TABLES))
@pytest.mark.parametrize("name,W,H", [("Snake", 4, 4), ("Snake", 5, 3), ("Fence", 4, 4), ("Fence", 6, 3)])
def test_closed_forms_equal_the_sum_over_the_executable_schedule(fname, name, W, H):
    """Section 2's step cost L α + f(L) β S + c S summed over the registered schedule's steps
    (combine charged as the paper does: one c2 step more than the schedule shows in Fence)."""
    f, S, B = F_TABLES[fname], 7, 6
    sched = registry.build("allreduce." + name.lower(), W * H, S * B, block=S, mesh=(W, H)).to_schedule()
    L, k, _ = d.schedule_timeline(sched)
    _, kp = phase_arrays(name, W, H, B)
    steps = [LL * ALPHA + f[LL] * BETA * S + CHARGE[kk] * S for LL, kk in zip(L, kp)]
    if name == "Snake":  # no three-way combine: the paper's charges are the model's
        assert nbl_paper.time(name, S * B, W, H, S, delta(f)) == pytest.approx(sum(steps), rel=1e-12)
    assert nbl_paper.time(name, S * B, W, H, S, delta(f), paper_charges=True) == pytest.approx(sum(steps), rel=1e-12)
    exact = sum(LL * ALPHA + f[LL] * BETA * S + CHARGE[kk] * S for LL, kk in zip(L, k))
    assert nbl_paper.time(name, S * B, W, H, S, delta(f)) == pytest.approx(exact, rel=1e-12)  # what the schedule does
    if name == "Fence":  # charging the combine the schedule really does costs (c3 - c2) S more
        assert exact - sum(steps) == pytest.approx((C3 - C2) * S, rel=1e-9)


def test_messages_use_every_link_at_most_once_per_step():
    for W, H in FENCE_MESHES:
        nbl_paper.count_timeline("Fence", W, H, 4)  # raises on a conflict
    msgs = nbl_paper.messages("Fence", 3, 2, 3)
    assert len({(t, s, r) for t, s, r, _ in msgs}) == len(msgs)


# ------------------------------------------------------------------ symbolic results
def test_fence_optimal_block_printed_in_the_paper_follows_from_section_2():
    derived = d.optimal_block_symbolic("Fence", paper_charges=True)
    assert sp.simplify(derived**2 - d.paper_printed_optimal_block("Fence") ** 2) == 0


def test_fence_optimal_block_with_step_h_charged_c3_adds_c3_minus_c2_to_the_denominator():
    model = d.optimal_block_symbolic("Fence")
    printed = d.paper_printed_optimal_block("Fence")
    expected = 6 * d.N * d.alpha / (6 * d.N * d.alpha / printed**2 + d.c3 - d.c2)
    assert sp.simplify(model**2 - expected) == 0
    assert sp.simplify(model**2 - printed**2) != 0


def test_snake_optimal_block_printed_in_the_paper_lacks_a_factor_4_and_the_f1_term():
    derived = d.optimal_block_symbolic("Snake")
    printed = d.paper_printed_optimal_block("Snake")
    fixed = sp.sqrt(4 * d.N * d.alpha / (d.N * d.alpha / printed**2 + 2 * d.beta * d.f(1)))
    assert sp.simplify(derived**2 - fixed**2) == 0
    assert sp.simplify(derived**2 - printed**2) != 0


def test_appendix_step_cost_is_not_the_one_behind_the_printed_optimum():
    """The appendix prints L(α + f(L)βS) per step; its optimum differs from eq. (1)."""
    appendix = d.optimal_block_symbolic("Fence", appendix_step=True, paper_charges=True)
    assert sp.simplify(appendix**2 - d.paper_printed_optimal_block("Fence") ** 2) != 0


def test_symbolic_time_agrees_with_numeric_closed_forms():
    T = d.symbolic_time("Fence")
    W, H, N, S = 5, 4, 100, 9
    subs = {d.alpha: ALPHA, d.beta: BETA, d.c2: C2, d.c3: C3,
            d.W: W, d.H: H, d.P: W * H, d.B: math.ceil(N / S), d.S: S}
    subs.update({d.f(L): v for L, v in FITTED_DELTA.items()})
    assert float(T.subs(subs)) == pytest.approx(nbl_paper.time("Fence", N, W, H, S, delta(FITTED_DELTA)))


# ------------------------------------------------------------------ optimal block sizes
@pytest.mark.parametrize("fname", list(F_TABLES))
@pytest.mark.parametrize("name,W,H,N", [("Snake", 4, 4, 2000), ("Fence", 4, 4, 2000),
                                        ("Snake", 16, 16, 5000), ("Fence", 16, 32, 3001)])
def test_optimal_block_is_the_brute_force_minimum(fname, name, W, H, N):
    f = F_TABLES[fname]
    Ss = np.arange(1, N + 1)
    t = nbl_paper.curves(name, N, W, H, Ss, delta(f))
    best = int(Ss[np.nanargmin(t)])
    assert nbl_blocks.optimal_block(name, N, W, H, delta(f)) == best
    assert nbl_paper.time(name, N, W, H, best, delta(f)) == pytest.approx(np.nanmin(t))


@pytest.mark.parametrize("name", ["Snake", "Fence"])
@pytest.mark.parametrize("fname", list(F_TABLES))
def test_continuous_optimum_is_scipys_minimum(name, fname):
    f, W, H, N = F_TABLES[fname], 16, 16, 10**5
    def T(S):  # the paper's timeline with B = N / S real, summed by hand
        env = {"P": W * H, "W": W, "H": H, "B": N / S}
        return sum(eval(c, {}, env) * (L * ALPHA + (f[L] * BETA + CHARGE[k]) * S)  # noqa: S307
                   for c, L, k in nbl_paper.TIMELINES[name])

    assert nbl_blocks.relaxed_time(name, N, W, H, 123.4, delta(f)) == pytest.approx(T(123.4), rel=1e-12)

    res = minimize_scalar(T, bounds=(1, N / 3), method="bounded", options={"xatol": 1e-6})
    assert nbl_blocks.continuous_optimal_block(name, N, W, H, delta(f)) == pytest.approx(res.x, rel=1e-4)


def test_printed_snake_optimum_is_about_half_the_true_one():
    for W, H in DELTA_MESHES:
        ratio = (nbl_blocks.paper_printed_optimal_block("Snake", 10**4, W, H, delta(NOMINAL))
                 / nbl_blocks.continuous_optimal_block("Snake", 10**4, W, H, delta(NOMINAL)))
        assert 0.45 < ratio < 0.55


def test_printed_fence_optimum_is_the_true_one():
    """Exactly with the appendix's charges; within 1 % with step H charged c3."""
    for W, H in DELTA_MESHES:
        printed = nbl_blocks.paper_printed_optimal_block("Fence", 10**4, W, H, delta(FITTED_DELTA))
        assert printed == pytest.approx(nbl_blocks.continuous_optimal_block("Fence", 10**4, W, H, delta(FITTED_DELTA),
                                                                     paper_charges=True))
        model = nbl_blocks.continuous_optimal_block("Fence", 10**4, W, H, delta(FITTED_DELTA))
        assert model < printed and model == pytest.approx(printed, rel=1e-2)


# ------------------------------------------------------------------ Table 1
def test_table1_differences_are_the_printed_ones_and_f6_at_60_is_not():
    T = {L: np.array(v) for L, v in DELTA_TABLE1["T"].items()}
    dT, f = nbl_fit.f_from_testjig(DELTA_TABLE1["S"], T)
    for L, printed in DELTA_TABLE1["printed_dT"].items():
        np.testing.assert_allclose(dT[L], printed, atol=1e-9)
    for L, printed in DELTA_TABLE1["printed_f"].items():
        rounded = np.round(f[L], 1)
        if L == 6:
            assert rounded.tolist() == [3.5, 4.2, 5.8] and printed[0] == 3.8
        else:
            np.testing.assert_array_equal(rounded, printed)


def test_fit_f_recovers_a_known_f():
    S = np.array([10, 100, 1000, 5000])
    beta, alpha = 2e-9, 3e-6
    T = {L: L * alpha + fL * beta * S for L, fL in {1: 1.0, 2: 1.5, 4: 3.2}.items()}
    f, b, a = nbl_fit.fit_f(S, T)
    assert b == pytest.approx(beta) and f[4] == pytest.approx(3.2) and a[2] == pytest.approx(2 * alpha)


# ------------------------------------------------------------------ the paper's conclusions
def _grid_winners(f):
    out = {}
    for W, H in DELTA_MESHES:
        for N in DELTA_VECTOR_LENGTHS:
            t = {a: nbl_paper.time(a, N, W, H, nbl_blocks.optimal_block(a, N, W, H, delta(f)), delta(f))
                 for a in nbl_paper.ALGORITHMS}
            order = sorted(t, key=t.get)
            out[W, H, N] = (order[0], t[order[1]] / t[order[0]] - 1)
    return out


def test_nominal_nbl_each_algorithm_wins_by_33_percent_somewhere():
    won = _grid_winners(NOMINAL)
    for a in nbl_paper.ALGORITHMS:
        assert max(m for w, m in won.values() if w == a) >= 0.33


def test_standard_model_snake_wins_only_long_vectors_on_few_nodes_and_barely():
    won = _grid_winners(STANDARD)
    snake = [k for k, (w, _) in won.items() if w == "Snake"]
    assert snake == [(4, 4, 5 * 10**5)] and won[snake[0]][1] < 0.05
    assert all(won[W, H, 100][0] == "Tree" for W, H in DELTA_MESHES)


def test_fitted_model_snake_beats_fence_on_16_nodes_for_long_vectors():
    for N in (10**5, 5 * 10**5):
        s = nbl_paper.time("Snake", N, 4, 4, nbl_blocks.optimal_block("Snake", N, 4, 4, delta(FITTED_DELTA)), delta(FITTED_DELTA))
        f = nbl_paper.time("Fence", N, 4, 4, nbl_blocks.optimal_block("Fence", N, 4, 4, delta(FITTED_DELTA)), delta(FITTED_DELTA))
        assert 1.15 < f / s < 1.33


# ------------------------------------------------------------------ vectorised map
def test_regime_map_agrees_with_fastest():
    Ns = [10, 300, 3000, 30000, 400000]
    meshes = [(4, 4), (16, 16), (16, 32), (3, 2)]
    winner, times, S = nbl_blocks.regime_map(Ns, meshes, delta(NOMINAL))
    for i, (W, H) in enumerate(meshes):
        for j, N in enumerate(Ns):
            name, s, t = nbl_blocks.fastest(N, W, H, delta(NOMINAL))
            assert t <= times[:, i, j][winner[i, j]] <= t * 1.005
            assert nbl_paper.ALGORITHMS[winner[i, j]] == name or np.sort(times[:, i, j])[1] / t - 1 < 5e-3


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize("call,match", [
    (lambda: nbl_paper.tree_time(0, 4, 4, delta(NOMINAL)), "N must be"),
    (lambda: nbl_paper.tree_time(10, 0, 4, delta(NOMINAL)), "W must be"),
    (lambda: nbl_paper.time("Snake", 100, 4, 4, 0, delta(NOMINAL)), "S must be"),
    (lambda: nbl_paper.time("Snake", 100, 4, 4, 101, delta(NOMINAL)), "S must be in 1..N"),
    (lambda: nbl_paper.time("Fence", 100, 4, 4, 10, delta({1: 1, 2: 2, 3: 3, 4: 4})), "no value for L = 6"),
    (lambda: nbl_paper.time("Fence", 100, 4, 4, 10, delta({1: 1, 2: 2, 3: 3, 4: 4, 6: -1})), "f\\(6\\)"),
    (lambda: nbl_blocks.optimal_block("Ring", 100, 4, 4, delta(NOMINAL)), "algorithm must be"),
    (lambda: nbl_blocks.fastest(10, 4, 4, "DELTA"), "model must be"),
    (lambda: NBLModel(-1.0, 1e-6), "alpha"),
    (lambda: NBLModel(1e-6, 1e-9, c3=-1.0), "c3"),
    (lambda: NBLModel(1e-6, 1e-9, {0: 1.0}), "f keys"),
    (lambda: NBLModel(1e-6, 1e-9, elem_bytes=0), "elem_bytes"),
    (lambda: nbl_fit.f_from_testjig([1, 1], {1: [1, 2]}), "increasing"),
    (lambda: nbl_blocks.best_times("Fence", [100], [(0, 4)], delta(NOMINAL)), "W \\(of a mesh\\) must be an integer >= 1"),
    (lambda: nbl_blocks.regime_map([100], [(4, -1)], delta(NOMINAL)), "H \\(of a mesh\\) must be an integer >= 1"),
    (lambda: nbl_blocks.regime_map([100], [], delta(NOMINAL)), "meshes must be a non-empty"),
    (lambda: nbl_blocks.regime_map([100], [4], delta(NOMINAL)), "meshes must be a non-empty"),
    (lambda: nbl_blocks.best_times("Snake", [10.5], [(4, 4)], delta(NOMINAL)), "Ns must hold integers >= 1, got 10.5"),
    (lambda: nbl_blocks.best_times("Tree", [float("nan")], [(4, 4)], delta(NOMINAL)), "Ns must hold integers >= 1"),
    (lambda: nbl_blocks.regime_map([0, 10], [(4, 4)], delta(NOMINAL)), "Ns must hold integers >= 1, got 0"),
    (lambda: nbl_fit.fit_f([10, 20, 30], {1: [1.0, float("nan"), 3.0]}), "T\\[1\\] must be finite"),
    (lambda: nbl_fit.fit_f([10, float("nan"), 30], {1: [1.0, 2.0, 3.0]}), "S must be finite"),
    (lambda: nbl_fit.fit_f([10, 20, 30], {1: [1.0, 2.0, 3.0], 2: [1.0, 2.0]}), "T\\[2\\] must have the shape of S"),
    (lambda: nbl_fit.fit_f([10, 20], {2: [1.0, 2.0]}), "L = 1"),
    (lambda: nbl_fit.fit_f([10, 10], {1: [1.0, 2.0]}), "2 distinct block sizes"),
    (lambda: nbl_fit.f_from_testjig([10, 20, 30], {1: [1.0, 2.0, 3.0], 2: [1.0, np.nan, 3.0]}), "T\\[2\\] must be finite"),
    (lambda: nbl_fit.f_from_testjig([10, 20, np.inf], {1: [1.0, 2.0, 3.0]}), "S must be finite"),
    (lambda: nbl_blocks.paper_printed_optimal_block("Snake", -100, 4, 4, delta(NOMINAL)), "N must be an integer >= 1"),
    (lambda: nbl_blocks.paper_printed_optimal_block("Fence", 100, 0, 4, delta(NOMINAL)), "W must be an integer >= 1"),
    (lambda: nbl_blocks.paper_printed_optimal_block("Snake", 100, 2, 1, delta(NOMINAL)), "denominator must be > 0"),
    (lambda: nbl_blocks.paper_printed_optimal_block("Tree", 100, 4, 4, delta(NOMINAL)), "'Snake' or 'Fence'"),
    (lambda: nbl_paper.curves("Fence", 100, 4, 4, [10, float("nan")], delta(NOMINAL)), "Ss must hold integers"),
    (lambda: nbl_paper.curves("Snake", 100, 4, 4, [2.5], delta(NOMINAL)), "Ss must hold integers, got 2.5"),
])
def test_invalid_inputs_raise_value_error_naming_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_curves_keep_nan_for_whole_block_sizes_out_of_range():
    t = nbl_paper.curves("Fence", 100, 4, 4, [0, 10, 101, -3], delta(NOMINAL))
    assert np.isnan(t[[0, 2, 3]]).all() and t[1] == nbl_paper.time("Fence", 100, 4, 4, 10, delta(NOMINAL))
    assert nbl_paper.curves("Snake", 100, 4, 4, [10.0], delta(NOMINAL))[0] == nbl_paper.time("Snake", 100, 4, 4, 10, delta(NOMINAL))


def test_integer_array_check():
    from netmodels._check import integers

    np.testing.assert_array_equal(integers("N", [1, 2.0, np.int32(7)]), [1, 2, 7])
    assert integers("N", [[3, 4]]).dtype == np.int64
    np.testing.assert_array_equal(integers("S", [-3, 0], minimum=None), [-3, 0])
    for bad in ([10.5], [np.nan], [np.inf], [0], ["a"], [True], [[1, 2], [3]], None):
        with pytest.raises(ValueError, match="N must hold integers >= 1"):
            integers("N", bad)


def test_fastest_on_tiny_vectors_is_tree():
    assert nbl_blocks.fastest(2, 4, 4, delta(NOMINAL))[0] == "Tree"
    # on two nodes Snake with one block is Tree's exchange: equal times, Tree listed first
    assert nbl_blocks.fastest(10, 2, 1, delta(NOMINAL))[0] == "Tree"


# ------------------------------------------------------------------ outside the paper's closed forms
@pytest.mark.parametrize("name,W,H", [("Snake", 2, 1), ("Snake", 1, 2), ("Fence", 2, 2), ("Fence", 2, 5),
                                      ("Fence", 4, 1), ("Fence", 1, 4), ("Snake", 4, 4), ("Fence", 5, 3)])
@pytest.mark.parametrize("B", [1, 2, 3, 7, 40])
def test_general_timeline_is_the_executable_schedules(name, W, H, B):
    """Any mesh, any block count: the timeline used for costs is the schedule's, step by step."""
    S = 3
    sched = registry.build("allreduce." + name.lower(), W * H, B * S, block=S, mesh=(W, H)).to_schedule()
    L, k, _ = d.schedule_timeline(sched)
    Lt, kt = d.expand(nbl_paper.timeline(name, W, H, B))
    np.testing.assert_array_equal(L, Lt)
    np.testing.assert_array_equal(k, kt)  # the model charges c3 wherever three vectors meet
    _, kpaper = d.expand(nbl_paper.timeline(name, W, H, B, paper=True))
    if nbl_paper.in_paper_regime(name, W, H) and B >= 3:
        assert np.count_nonzero(k != kpaper) == (1 if name == "Fence" else 0)  # the paper's c2 at step H
    else:
        np.testing.assert_array_equal(k, kpaper)
    steps = sum(LL * ALPHA + NOMINAL[LL] * BETA * S + CHARGE[kk] * S for LL, kk in zip(L, k))
    assert nbl_paper.time(name, B * S, W, H, S, delta(NOMINAL)) == pytest.approx(steps, rel=1e-12)


def test_affine_extension_matches_direct_counting():
    for name, W, H in [("Fence", 2, 3), ("Snake", 2, 1), ("Fence", 6, 1)]:
        B0, _ = nbl_paper.affine_timeline(name, W, H)
        for B in (B0, B0 + 5, B0 + 37):
            assert nbl_paper.timeline(name, W, H, B) == nbl_paper.run_lengths(*nbl_paper.count_timeline(name, W, H, B))


def test_optimal_block_on_a_2x2_mesh_is_the_brute_force_minimum():
    N = 600
    for name in ("Snake", "Fence"):
        Ss = np.arange(1, N + 1)
        t = nbl_paper.curves(name, N, 2, 2, Ss, delta(FITTED_DELTA))
        assert nbl_blocks.optimal_block(name, N, 2, 2, delta(FITTED_DELTA)) == Ss[np.argmin(t)]


# ------------------------------------------------------------------ figures and panel
def test_panel_redraws_from_the_vectorised_map():
    from netmodels.figures import nbl_plots

    panel = nbl_plots.nbl_panel(delta(NOMINAL), N=10**5, mesh=(16, 16))
    status = panel.children[-1]
    assert status.value.startswith("N = 100,000, 16x16: Snake fastest")
    sliders = panel.children[0].children[1].children  # f(2) .. f(6)
    sliders[-1].value = 1.0  # f(6) = 1: Fence no longer penalised
    assert "Fence fastest" in status.value
    m, winner = nbl_plots.compute(54, 1.54, 0.25, 0.37, {L: L for L in (2, 3, 4, 5, 6)}, 10**5, (16, 16))
    np.testing.assert_array_equal(winner, nbl_blocks.regime_map(nbl_plots.MAP_NS, nbl_plots.MAP_MESHES, delta(NOMINAL))[0])


def test_static_twins_cover_standard_and_nominal():
    from netmodels.figures import nbl_plots

    assert nbl_plots.blend(0) == STANDARD and nbl_plots.blend(1) == NOMINAL
    html = nbl_plots.static_curves(N=3000, mesh=(4, 4))._repr_html_()
    assert "Snake" in html and "Fence" in html


# ------------------------------------------------------------------ against the simulator
@pytest.mark.parametrize("fname", list(F_TABLES))
@pytest.mark.parametrize("name,W,H,B", [("Tree", 4, 4, 1), ("Tree", 3, 5, 1), ("Snake", 4, 4, 6), ("Snake", 5, 3, 3),
                                        ("Snake", 2, 1, 4), ("Fence", 4, 4, 6), ("Fence", 6, 3, 9),
                                        ("Fence", 2, 2, 5), ("Fence", 2, 2, 1), ("Snake", 3, 3, 2)])
def test_closed_forms_are_the_cost_of_the_executable_schedules(fname, name, W, H, B):
    """The simulator costs the registered schedules step by step (the NBL rule: busiest node,
    widest combine); the closed forms agree except for the paper's c2 at Fence's step H."""
    f, S = F_TABLES[fname], 7
    block = None if name == "Tree" else S           # Tree sends whole vectors
    sched = registry.build("allreduce." + name.lower(), W * H, S * B, block=block, mesh=(W, H)).to_schedule()
    by_steps = simulate(sched, delta(f)).time
    closed = nbl_paper.time(name, S * B, W, H, S, delta(f), paper_charges=True)
    paper_c2 = name == "Fence" and nbl_paper.in_paper_regime(name, W, H) and B >= 3
    assert by_steps - closed == pytest.approx((C3 - C2) * S if paper_c2 else 0.0, abs=1e-12)
    assert nbl_paper.time(name, S * B, W, H, S, delta(f)) == pytest.approx(by_steps, rel=1e-12)


@pytest.mark.parametrize("W,H", [(2, 2), (3, 2), (2, 3), (3, 3), (4, 4)])
def test_fence_time_has_no_jump_where_the_closed_form_takes_over(W, H):
    """T against B at fixed S is the schedule's cost on both sides of B = 3 and of W = 3:
    no step of (c3 - c2) S where the appendix's table starts to apply."""
    S, model = 5, delta(NOMINAL)
    for B in range(1, 6):
        sched = registry.build("allreduce.fence", W * H, S * B, block=S, mesh=(W, H)).to_schedule()
        assert nbl_paper.time("Fence", S * B, W, H, S, model) == pytest.approx(simulate(sched, model).time, rel=1e-12)


def test_step_time_by_hand():
    """L α + f(L) β S + c S on numbers, and f(0) = 0: a node that only combines."""
    m = NBLModel(2.0, 0.5, {2: 1.5}, c2=0.25)
    assert m.step_time(2, 8.0) == 2 * 2.0 + 1.5 * 0.5 * 8
    assert m.step_time(1, 8.0, m.c2) == 2.0 + 0.5 * 8 + 0.25 * 8
    assert m.step_time(0, 8.0, m.c2) == 0.25 * 8
    np.testing.assert_array_equal(m.step_time(np.array([0, 1, 2]), np.array([0.0, 4.0, 8.0])), [0.0, 4.0, 10.0])
    assert (m.combine_cost(2), m.combine_cost(3), m.combine_cost(4)) == (0.25, 0.5, 0.75)  # c3 = 2 c2 by default
    with pytest.raises(ValueError, match="no value for L = 3"):
        m.step_time(3, 1.0)


@pytest.mark.parametrize("name", ["Snake", "Fence"])
@pytest.mark.parametrize("N", [100, 1000, 10**4, 10**5])
@pytest.mark.parametrize("mesh", DELTA_MESHES)
def test_optimal_block_in_the_papers_range_is_the_brute_force_integer_optimum(name, N, mesh):
    # every integer S of the paper's range 20..600 (clipped to N), costed one by one
    W, H = mesh
    lo, hi = DELTA_BLOCK_RANGE
    every = np.arange(min(lo, N), min(hi, N) + 1)
    for f in (NOMINAL, STANDARD, FITTED_DELTA):
        t = [nbl_paper.time(name, N, W, H, int(s), delta(f)) for s in every]
        best = int(every[int(np.argmin(t))])
        got = nbl_blocks.optimal_block(name, N, W, H, delta(f), block_range=DELTA_BLOCK_RANGE)
        assert got == best and min(lo, N) <= got <= min(hi, N)


def test_optimal_block_rejects_bad_ranges():
    for bad, match in [((600, 20), "low <= high"), ((0, 10), "block_range\\[0\\]"), (5, "pair")]:
        with pytest.raises(ValueError, match=match):
            nbl_blocks.optimal_block("Snake", 1000, 4, 4, delta(NOMINAL), block_range=bad)
