"""LogP models, barrier schedules and their closed forms, checked without MPI.

References: the causal "who-has-entered" propagation (a barrier is correct iff every
exit depends on every entry), the message-by-message LogP simulation of the schedules
(independent of the closed forms), hand-computed timelines, and synthetic data for fits.
"""

import math
from dataclasses import replace

import numpy as np
import pytest

from netmodels.algorithms import barriers, registry
from netmodels.models import logp, logp_barrier_bound, logp_barriers, logp_fit
from netmodels.simulate import simulate
from netmodels.models.machines import HOEFLER2005_BARRIER_TIMES
from netmodels.algorithms.schedule import Schedule

VARIANTS = [(name, {}) for name in registry.names("barrier", short=True)] + [
    ("combining_tree", {"fan_in": 2}), ("combining_tree", {"fan_in": 3}),
    ("nway_dissemination", {"n": 1}), ("nway_dissemination", {"n": 3}),
    ("tournament", {"release": "flat"})]


def build(name, P, **options):
    """The registered barrier ``name`` on ``P`` ranks."""
    return registry.get(name, "barrier").build(P, **options)


@pytest.mark.parametrize("name,opts", VARIANTS)
def test_every_schedule_is_a_barrier_for_P_1_to_70(name, opts):
    for P in range(1, 71):
        s = build(name, P, **opts).to_schedule()
        assert s.nprocs == P and s.nelems == 0
        assert all(tr.count == 0 for step in s.steps for tr in step)
        assert barriers.is_barrier(s), (name, opts, P)


def test_the_correctness_check_can_fail():
    d = barriers.dissemination(12).to_schedule()
    for drop in range(d.nsteps):  # without any one of its rounds it is no barrier
        broken = Schedule("broken", 12, 0, d.steps[:drop] + d.steps[drop + 1:])
        assert not barriers.is_barrier(broken)
    k = barriers.entered_sets(Schedule("gather", 3, 0, [tuple(barriers.central_counter(3).to_schedule().steps[0])]))
    assert k[0].all() and not k[1].all()


def test_step_counts_follow_the_complexity_classes():
    for P in (2, 3, 7, 8, 9, 100, 1024):
        R = math.ceil(math.log2(P))
        assert barriers.dissemination(P).nsteps == R
        assert barriers.butterfly(P).nsteps == R
        assert barriers.tournament(P).nsteps == 2 * R
        assert barriers.nway_dissemination(P, n=3).nsteps == math.ceil(round(math.log(P, 4), 9))
        assert barriers.pairwise_exchange(P).nsteps == (R if P & (P - 1) == 0 else int(math.log2(P)) + 2)
    assert barriers.central_counter(50).nsteps == 2
    assert sum(len(s) for s in barriers.central_counter(50).steps) == 2 * 49
    assert barriers.tournament(8).to_schedule().steps == barriers.binomial(8).to_schedule().steps  # same messages


def _regular(name, P, opts):
    if name in ("central_counter", "dissemination"):
        return True
    if name == "combining_tree":
        k, total, width = opts.get("fan_in", 4), 1, 1
        while total < P:
            width *= k
            total += width
        return total == P
    if name == "nway_dissemination":
        x = 1
        while x < P:
            x *= opts.get("n", 2) + 1
        return x == P
    return P & (P - 1) == 0


@pytest.mark.parametrize("regime", ["slides: g <= o", "gap-bound: g > o", "o_s != o_r"])
def test_closed_forms_equal_the_simulation_when_regular_and_bound_it_otherwise(regime):
    rng = np.random.default_rng({"s": 7, "g": 8, "o": 9}[regime[0]])
    Ps = list(range(1, 34)) + [64, 81, 85, 128]
    for _ in range(6):
        L, o = rng.uniform(0, 20), rng.uniform(0.1, 3)
        g = rng.uniform(0, o) if regime.startswith("s") else rng.uniform(o, 3 * o + L)
        o_r = rng.uniform(0.1, 3) if regime.startswith("o") else None
        g = rng.uniform(0, 4) if o_r else g
        for name, opts in VARIANTS:
            if "release" in opts:
                continue
            for P in Ps:
                m = logp.LogP(L, o, g, P, o_r=o_r)
                sim = simulate(build(name, P, **opts), m).time
                closed = logp_barriers.barrier_time(name, m, **opts)
                assert sim <= closed * (1 + 1e-12) + 1e-12, (name, opts, P)
                if _regular(name, P, opts):
                    assert closed == pytest.approx(sim, rel=1e-12, abs=1e-12), (name, opts, P)


def test_slides_dissemination_formula_when_o_exceeds_g():
    m = logp.LogP(L=50e-6, o=5e-6, g=2e-6, P=128)
    assert logp_barriers.barrier_time("dissemination", m) == pytest.approx((2 * m.o + m.L) * 7)
    # and the slides' max{t_r, t_s} * ceil(log2 P) overstates it only when g > 2o + L:
    gappy = logp.LogP(L=1e-6, o=1e-6, g=10e-6, P=8)
    assert logp_barriers.barrier_time("dissemination", gappy) == pytest.approx(gappy.one_way + 2 * gappy.g)
    assert logp_barriers.barrier_time("dissemination", gappy) < 3 * gappy.t_r


def test_base_equations_of_the_slides():
    rng = np.random.default_rng(1)
    for _ in range(100):
        L, o, o_r, g = rng.uniform(0, 5, 4)
        m = logp.LogP(L, o + 1e-3, g, 4, o_r=o_r + 1e-3)
        assert m.t_r == pytest.approx(max(m.g, m.o_s + m.L + m.o_r))  # max{max{g,o_r}, ...}
        assert m.f_s == max(m.o_s, m.g) and m.f_r == max(m.o_r, m.g)


def test_hand_computed_central_counter_and_tournament_timelines():
    m = logp.LogP(L=10.0, o=1.0, g=0.5, P=3)
    # central counter, P = 3: arrivals at 11, root receives 11-12 and 12-13, sends at 13
    # and 14, the last release is received 14 + 1 + 10 .. + 1 = 26.
    assert simulate(barriers.central_counter(3), m).time == 26.0
    assert logp_barriers.barrier_time("central_counter", m) == 26.0
    # dissemination, P = 5: three rounds of o + L + o
    assert simulate(barriers.dissemination(5), m).time == 36.0


def test_knowledge_bound_is_below_every_algorithm_and_tight_for_small_P():
    rng = np.random.default_rng(3)
    for _ in range(10):
        L, o = rng.uniform(0, 20), rng.uniform(0.1, 3)
        for P in (2, 3, 5, 8, 17, 64):
            m = logp.LogP(L, o, rng.uniform(0, o), P)
            bound = logp_barrier_bound.knowledge_bound(m)
            best = min(simulate(build(n, P, **opts), m).time for n, opts in VARIANTS)
            assert bound <= best + 1e-9
    m = logp.LogP(L=10.0, o=1.0, g=0.0, P=3)
    assert logp_barrier_bound.knowledge_bound(m) == 13.0  # two receives after one latency: 11, 12, 13
    assert logp_barriers.barrier_time("nway_dissemination", m, n=2) == 13.0


def _greedy_broadcast(P, f, w):
    """Brute force, rank by rank: every informed rank sends to a new rank every f; a message
    informs its receiver w after it was sent; the time the P-th rank is informed."""
    import heapq
    sends, informed = [0.0], 1          # heap of next send times of informed ranks
    while True:
        t = heapq.heappop(sends)
        informed += 1
        if informed == P:
            return t + w
        heapq.heappush(sends, t + f)
        heapq.heappush(sends, t + w)


def test_knowledge_bound_equals_brute_force_greedy_broadcast():
    rng = np.random.default_rng(5)
    for _ in range(20):
        L, o, g = rng.uniform(0, 20), rng.uniform(0.1, 3), rng.uniform(0, 4)
        for P in (2, 3, 4, 7, 30, 200):
            m = logp.LogP(L, o, g, P)
            assert logp_barrier_bound.knowledge_bound(m) == pytest.approx(_greedy_broadcast(P, m.f_r, m.one_way), rel=1e-12)


def test_dissemination_is_not_optimal_when_latency_dominates():
    m = logp.LogP(L=100e-6, o=1e-6, g=0.0, P=1024)
    diss = logp_barriers.barrier_time("dissemination", m)
    nway = min(logp_barriers.barrier_time("nway_dissemination", m, n=n) for n in range(2, 40))
    assert nway < 0.5 * diss
    assert logp_barrier_bound.knowledge_bound(m) < nway


def test_prtt_fit_recovers_loggp_from_its_forward_model():
    true = logp.LogGP(L=3e-6, o=1.5e-6, g=2e-6, P=2, o_r=1.0e-6, G=0.4e-9)
    sizes = np.array([0, 64, 1024, 4096, 16384, 65536])
    n, d = 10, 200e-6
    fit = logp_fit.fit_prtt(sizes, logp_fit.prtt_model(true, 1, 0, sizes), logp_fit.prtt_model(true, n, 0, sizes),
                        logp_fit.prtt_model(true, n, d, sizes), n, d, true.o_r)
    assert fit.g == pytest.approx(true.g) and fit.G == pytest.approx(true.G)
    assert fit.o_s == pytest.approx(true.o_s) and fit.L == pytest.approx(true.L)
    assert fit.model().L == pytest.approx(true.L)


def _netgauge_data(L, o_s, o_r, g, G, sizes, n, d):
    """PRTT(1,0,s), PRTT(n,0,s), PRTT(n,d,s) written out from LogGP's definitions (Alexandrov
    et al.: an s-byte message costs (s-1)G on the wire; back-to-back sends leave
    max(o_s, g + (s-1)G) apart; a pause d after each send spaces them o_s + d apart)."""
    w = np.array([max(s - 1, 0) * G for s in sizes])
    rtt = 2 * (o_s + L + o_r + w)
    return rtt, rtt + (n - 1) * np.maximum(o_s, g + w), rtt + (n - 1) * (o_s + d)


@pytest.mark.parametrize("o_s,g", [(3e-6, 1e-6), (0.5e-6, 2e-6)], ids=["o > g (slides)", "g > o"])
def test_prtt_fit_recovers_g_and_G_whichever_of_o_and_g_is_larger(o_s, g):
    L, o_r, G, n, d = 2e-6, 1.2e-6, 0.4e-9, 8, 300e-6
    sizes = [0, 1, 8, 64, 1024, 4096, 16384, 65536, 262144]
    fit = logp_fit.fit_prtt(sizes, *_netgauge_data(L, o_s, o_r, g, G, sizes, n, d), n, d, o_r)
    assert fit.g_identified
    assert fit.g == pytest.approx(g, rel=1e-9) and fit.G == pytest.approx(G, rel=1e-9)
    assert fit.L == pytest.approx(L, rel=1e-9) and fit.o_s == pytest.approx(o_s, rel=1e-9)
    assert fit.o_r == pytest.approx(o_r)
    if o_s > g:  # only the sizes where g + (s-1)G > o_s carry g
        assert min(fit.gap_sizes) > (o_s - g) / G


def test_prtt_fit_constrains_a_gap_line_that_falls_with_size_to_G_0():
    """Gaps that shrink with size (noise about a G too small to see at these sizes): the least
    squares with G >= 0 is G = 0 and g the mean gap, the negative slope kept and named, as L's
    negative estimate is; a rising line is left as it is."""
    L, o_s, o_r, g, n, d = 2e-6, 0.5e-6, 1.2e-6, 2e-6, 8, 300e-6
    sizes = [0, 1, 8, 64, 1024, 4096, 16384]
    r1, rn0, rnd = _netgauge_data(L, o_s, o_r, g, 0.0, sizes, n, d)
    tilt = -2e-12 * np.array([max(s - 1, 0) for s in sizes])       # gaps falling by 2 ps a byte
    fit = logp_fit.fit_prtt(sizes, r1, rn0 + (n - 1) * tilt, rnd, n, d, o_r)
    gaps = np.array(fit.gap_by_size)[[s in fit.gap_sizes for s in fit.sizes]]
    assert fit.G == 0.0 and fit.g == pytest.approx(float(np.mean(gaps)), rel=1e-12)
    assert fit.G_unconstrained == pytest.approx(-2e-12, rel=1e-6)
    assert any(line.startswith("G: the gaps fall with size") for line in fit.dropped())
    rising = logp_fit.fit_prtt(sizes, r1, rn0 - (n - 1) * tilt, rnd, n, d, o_r)
    assert rising.G == pytest.approx(2e-12, rel=1e-6) == rising.G_unconstrained
    assert not any(line.startswith("G:") for line in rising.dropped())


def test_prtt_fit_says_g_is_not_identifiable_when_every_gap_is_an_overhead():
    L, o_s, o_r, g, G, n, d = 2e-6, 3e-6, 1e-6, 1e-6, 0.4e-9, 8, 300e-6
    sizes = [0, 8, 64, 1024, 4096]            # g + (s-1)G < o_s at all of them
    fit = logp_fit.fit_prtt(sizes, *_netgauge_data(L, o_s, o_r, g, G, sizes, n, d), n, d, o_r)
    assert not fit.g_identified and math.isnan(fit.g) and math.isnan(fit.G)
    assert fit.g_upper == pytest.approx(o_s) and g <= fit.g_upper
    # G unknown: L takes in the wire time of the median small size (8 B: 7 x 0.4 ns)
    assert fit.L == pytest.approx(L + 7 * G, rel=1e-9) and fit.model().g == 0.0


def test_prtt_fit_small_message_parameters_survive_a_cold_first_size():
    L, o_s, o_r, g, G, n, d = 1e-6, 0.6e-6, 1.3e-6, 1.2e-6, 0.2e-9, 10, 50e-6
    sizes = [0, 1, 8, 64, 1024, 8192]
    r1, rn0, rnd = _netgauge_data(L, o_s, o_r, g, G, sizes, n, d)
    rnd = rnd.copy()
    rnd[0] += (n - 1) * 3.5e-6                # the first size measured o_s(0) = 4.1 µs
    fit = logp_fit.fit_prtt(sizes, r1, rn0, rnd, n, d, o_r)
    assert fit.o_s_by_size[0] == pytest.approx(4.1e-6)
    assert fit.o_s == pytest.approx(o_s) and fit.L == pytest.approx(L)
    # and it says so: o_s and L at 0 B are named, nothing else (o_r is measured alone)
    assert [(name, size) for name, size, _ in fit.outliers] == [("o_s", 0.0), ("L", 0.0)]
    assert fit.outliers[0][2] == pytest.approx(4.1e-6)
    assert fit.dropped()[0].startswith("o_s at 0 B is 4.100 µs")


def test_prtt_fit_names_no_outlier_in_clean_data():
    L, o_s, o_r, g, G, n, d = 1e-6, 0.6e-6, 1.3e-6, 1.2e-6, 0.2e-9, 10, 50e-6
    sizes = [0, 1, 8, 64, 1024, 8192]
    fit = logp_fit.fit_prtt(sizes, *_netgauge_data(L, o_s, o_r, g, G, sizes, n, d), n, d, o_r)
    assert fit.outliers == () and fit.dropped() == []


def test_loggp_message_time_and_prtt_model_share_the_s_minus_1_convention():
    m = logp.LogGP(L=2e-6, o=1e-6, g=0.5e-6, P=2, o_r=1.5e-6, G=1e-9)
    for s in (0, 1, 2, 1000):
        one_way = 1e-6 + 2e-6 + 1.5e-6 + max(s - 1, 0) * 1e-9   # Alexandrov et al.'s definition
        assert m.message_time(s) == pytest.approx(one_way)
        assert logp_fit.prtt_model(m, 1, 0.0, s) == pytest.approx(2 * one_way)
    assert m.wire_time(1001) == pytest.approx(1000e-9)


def test_an_option_the_algorithm_does_not_take_is_a_valueerror_naming_who_takes_it():
    with pytest.raises(ValueError, match=r"dissemination takes no options.*'fan_in'.*combining_tree"):
        build("dissemination", 8, fan_in=3)
    with pytest.raises(ValueError, match=r"'n' is an option of barrier.nway_dissemination"):
        build("combining_tree", 8, n=2)
    with pytest.raises(ValueError, match=r"'fan_in' is an option of combining_tree"):
        logp_barriers.barrier_time("dissemination", logp.LogP(1, 1, 1, 8), fan_in=3)
    assert build("tournament", 8, release="flat").nsteps == 4


def test_barrier_table_fit_recovers_synthetic_parameters():
    true = logp.LogP(L=200e-6, o=12e-6, g=0.0, P=2)
    rows = [(a, P, logp_barriers.barrier_time(a, true.with_P(P))) for a in
            ("central_counter", "dissemination", "tournament") for P in (128, 256)]
    fit = logp_fit.fit_barrier_times(rows)
    assert fit.L == pytest.approx(true.L, rel=1e-6) and fit.o == pytest.approx(true.o, rel=1e-6)
    assert fit.rms_relative < 1e-8


def test_slides_table_is_typed_once_and_fit_to_it_explains_the_winner():
    rows = [(a, P, t) for a, d in HOEFLER2005_BARRIER_TIMES.items() if a != "open_mpi" for P, t in d.items()]
    fit = logp_fit.fit_barrier_times(rows, {"combining_tree": {"fan_in": 2}})
    pred = {(a, P): p for a, P, _, p in fit.rows}
    for P in (128, 256):
        assert min((a for a, q in pred if q == P), key=lambda a: pred[a, P]) == "dissemination"
    assert 0.05 < fit.rms_relative < 0.3  # LogP explains the ranking, not every number


def test_plogp_and_loggp_agree_with_their_definitions():
    p = logp.PLogP(L=5e-6, sizes=(0, 1024), o_s=(1e-6, 2e-6), o_r=(1e-6, 3e-6), g=(2e-6, 6e-6))
    assert p.message_time(512) == pytest.approx(5e-6 + 4e-6)
    lp = p.to_logp(0)
    assert lp.one_way == pytest.approx(p.message_time(0))
    gp = logp.LogGP(L=1e-6, o=1e-6, g=1e-6, P=2, G=1e-9)
    assert gp.message_time(1001) == pytest.approx(3e-6 + 1000e-9)


@pytest.mark.parametrize("call", [
    lambda: logp.LogP(-1, 1, 1, 2), lambda: logp.LogP(1, -1e-9, 1, 2), lambda: logp.LogP(1, 1, -1, 2),
    lambda: logp.LogP(1, 1, 1, 0), lambda: logp.LogP(1, 1, 1, 2.5), lambda: logp.LogP(math.nan, 1, 1, 2),
    lambda: logp.LogGP(1, 1, 1, 2, G=-1),
    lambda: logp_barriers.barrier_time("bogus", logp.LogP(1, 1, 1, 2)),
    lambda: logp_barriers.barrier_time("dissemination", logp.LogP(1, 1, 1, 2), fan_in=3),
    lambda: logp_barriers.barrier_time("combining_tree", logp.LogP(1, 1, 1, 2), fan_in=1),
    lambda: logp_barriers.barrier_time("dissemination", (1, 1, 1, 2)),
    lambda: logp.PLogP(1, (0, 1), (1,), (1, 1), (1, 1)),
    lambda: build("bogus", 4), lambda: barriers.dissemination(0),
    lambda: barriers.nway_dissemination(4, n=0), lambda: barriers.tournament(4, release="x"),
    lambda: logp_fit.fit_barrier_times([("dissemination", 8, 1e-3)]),
])
def test_bad_parameters_raise_valueerror(call):
    with pytest.raises(ValueError):
        call()


def test_valueerror_names_the_parameter_and_range():
    with pytest.raises(ValueError, match=r"o must be a finite real number >= 0"):
        logp.LogP(1e-6, -1e-6, 0, 4)
    assert logp.LogP(1e-6, 0, 0, 4).o == 0          # o = 0 is LogP's (and LogGOPSim's) too
    with pytest.raises(ValueError, match=r"P must be an integer >= 1"):
        logp.LogP(1e-6, 1e-6, 0, 0)


def test_panel_curves_rank_and_static_figure():
    from netmodels.figures import logp_panel

    curves = logp_panel.barrier_curves(240e-6, 10e-6, 1e-6)
    assert all(v.shape == logp_panel.P_AXIS.shape for v in curves.values())
    assert logp_panel.P_AXIS[0] == 2 and logp_panel.P_AXIS[-1] == 10**6
    bound = curves.pop("lower bound (any barrier)")
    assert all(np.all(bound <= v * (1 + 1e-12)) for v in curves.values())
    order = logp_panel.ranking(240e-6, 10e-6, 1e-6, 256)
    assert [t for _, t in order] == sorted(t for _, t in order)
    assert order[0][0].endswith("dissemination") and order[-1][0] == "central counter"
    fig = logp_panel.barrier_spec().static()
    assert fig.n_frames > 100 and fig.html == logp_panel.barrier_spec().static().html  # deterministic output


def test_panel_drawings_run_headless():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from netmodels.figures import logp_panel

    fig, (a, b) = plt.subplots(1, 2)
    logp_panel.draw_barriers(a, 240.0, 10.0, 1.0, 1000)
    logp_panel.draw_schedule(b, barriers.dissemination(5))
    assert "P = 1,000" in a.get_title() and len(b.texts) == 15
    plt.close(fig)


def test_prtt_fit_constrains_a_negative_latency_and_says_it_is_not_identifiable():
    # overheads measured alone larger than half the round trip: data written out by hand
    # with o_s + o_r = 1.9 µs and a round trip of 2 x 1.4 µs, so L would be -0.5 µs
    o_s, o_r, g, n, d = 0.6e-6, 1.3e-6, 1.2e-6, 10, 50e-6
    sizes = [0, 1, 8, 64]
    r1 = np.full(4, 2.8e-6)
    rn0 = r1 + (n - 1) * g
    rnd = r1 + (n - 1) * (o_s + d)
    fit = logp_fit.fit_prtt(sizes, r1, rn0, rnd, n, d, o_r)
    assert fit.L_unconstrained == pytest.approx(1.4e-6 - 1.9e-6)
    assert not fit.L_identified and fit.L == 0.0 and fit.model().L == 0.0
    good = logp_fit.fit_prtt(sizes, r1 + 2e-6, rn0 + 2e-6, rnd + 2e-6, n, d, o_r)
    assert good.L_identified and good.L == pytest.approx(0.5e-6) == good.L_unconstrained


def test_loggp_simulation_of_one_message_and_of_two_back_to_back_is_written_out_by_hand():
    from netmodels.algorithms.schedule import Schedule, Transfer

    m = logp.LogGP(L=2e-6, o=1e-6, g=0.5e-6, P=2, o_r=1.5e-6, G=1e-9)
    one = Schedule("one", 2, 100, [(Transfer(0, 1, 0, 100, True),)])
    # 100 doubles = 800 B: o_s + L + 799 G + o_r, plus a combine of 100 elements at 1 ns each
    assert simulate(one, replace(m, combine=1e-9)).finish[1] == pytest.approx(
        1e-6 + 2e-6 + 799e-9 + 1.5e-6 + 100e-9)
    small = logp.LogP(L=2e-6, o=1e-6, g=0.5e-6, P=2, o_r=1.5e-6)
    assert simulate(one, small).finish[1] == pytest.approx(1e-6 + 2e-6 + 1.5e-6)   # LogP: no bytes
    two = Schedule("two", 3, 100, [(Transfer(0, 1, 0, 100), Transfer(0, 2, 0, 100))])
    # the second send waits g + 799 G after the first (> o_s)
    t = simulate(two, m, elem_bytes=8).finish
    assert t[2] == pytest.approx(0.5e-6 + 799e-9 + 1e-6 + 2e-6 + 799e-9 + 1.5e-6)
    with pytest.raises(ValueError, match="elem_bytes"):
        simulate(one, m, elem_bytes=-1)


@pytest.mark.parametrize("o, g", [(1.5e-6, 1e-6), (1e-6, 4e-6)])       # o > g and g > o
@pytest.mark.parametrize("semantics", ["sync", "stepwise", "loggopsim"])
def test_two_long_messages_into_one_rank_charge_the_receiver_twice(o, g, semantics):
    """Ranks 0 and 1 send m bytes to rank 2 at once.  Both first bytes arrive at o + L;
    the receiver takes the first at o + L and is busy o + (m - 1) G with it, the second's
    first byte waits max(o, g) + (m - 1) G more, and its bytes take (m - 1) G again:
    T = o + L + max(o, g) + 2 (m - 1) G + o (hand-derived; LogGOPSim's rule)."""
    from netmodels.algorithms.arrays import ArraySchedule, ArrayStep

    L, G, m = 2e-6, 1e-9, 1 << 20
    step = ArrayStep(np.array([0, 1]), np.array([2, 2]), np.zeros(2, np.int64), np.full(2, m // 8),
                     np.zeros(2, bool))
    s = ArraySchedule("two into one", 3, m // 8, [step])
    model = logp.LogGP(L=L, o=o, g=g, P=3, G=G)
    w = (m - 1) * G
    want = o + L + max(o, g) + 2 * w + o
    assert simulate(s, model, semantics=semantics).time == pytest.approx(want, rel=1e-12)
    # one message alone: o + (m - 1) G + L + o, the wire charged once
    one = ArraySchedule("one", 3, m // 8, [ArrayStep(np.array([0]), np.array([2]), np.zeros(1, np.int64),
                                                     np.full(1, m // 8), np.zeros(1, bool))])
    assert simulate(one, model, semantics=semantics).time == pytest.approx(o + w + L + o, rel=1e-12)


# ---------------------------------------------------------------- G of long messages (to 2 MiB)
CALIBRATION_SIZES = [0, 1, 8, 64, 512, 4096, 32768, 262144, 2097152]      # predict's PRTT


def _segmented_prtt(sizes, n=10, d=None, noise=0.0, seed=0, **machine):
    """PRTT(1,0,s), PRTT(n,0,s), PRTT(n,d,s) of a LogGP whose messages of S bytes or more take
    G_r per byte (prtt_model of SegmentedLogGP), times (1 + noise x a standard normal)."""
    from netmodels.models.segmented import SegmentedLogGP

    m = SegmentedLogGP(**{"L": 0.5e-6, "o": 0.8e-6, "g": 1.5e-6, "P": 2, "o_r": 1.6e-6, "G": 40e-12,
                          "S": 32768, "G_r": 100e-12, **machine})
    s = np.array(sizes, dtype=float)
    d = float(logp_fit.prtt_model(m, 1, 0.0, s).max()) if d is None else d
    rng = np.random.default_rng(seed)
    out = [logp_fit.prtt_model(m, k, dd, s) * (1 + noise * rng.standard_normal(s.size))
           for k, dd in ((1, 0.0), (n, 0.0), (n, d))]
    return m, s, out, n, d


def test_prtt_fit_takes_G_from_the_long_messages_when_it_measured_them():
    """Below a 32 KiB switch 40 ps/B, from it on 100 ps/B: G is the long messages' (LogGP's
    definition), g the short ones' gap, the short slope kept apart; a line through every
    gap-bound size, Netgauge's fit to 16 KiB, would say 40 ps/B."""
    m, s, prtt, n, d = _segmented_prtt(CALIBRATION_SIZES)
    fit = logp_fit.fit_prtt(s, *prtt, n, d, m.o_r)
    assert fit.G_long and fit.G_sizes == (32768.0, 262144.0, 2097152.0)
    assert fit.G == pytest.approx(m.G_r, rel=1e-9) and fit.G_short == pytest.approx(m.G, rel=1e-9)
    assert fit.g == pytest.approx(m.g, rel=1e-9) and max(fit.gap_sizes) == 4096
    assert fit.o_s == pytest.approx(m.o_s) and fit.L == pytest.approx(m.L, rel=1e-6)
    short = logp_fit.fit_prtt(s[:6], *(p[:6] for p in prtt), n, d, m.o_r)          # to 4 KiB only
    assert not short.G_long and short.G == pytest.approx(m.G, rel=1e-9) == short.G_short


@pytest.mark.parametrize("seed", range(5))
def test_prtt_fit_recovers_the_long_G_from_noisy_round_trips_within_5_percent(seed):
    m, s, prtt, n, d = _segmented_prtt(CALIBRATION_SIZES, noise=0.01, seed=seed)
    fit = logp_fit.fit_prtt(s, *prtt, n, d, m.o_r)
    assert fit.G_long and abs(fit.G / m.G_r - 1) <= 0.05


def test_a_prtt_to_16_KiB_fits_as_before_even_with_long_gaps():
    """Sizes to 16 KiB whose last two gaps are long (lab 3's file, a stored predict from before
    the PRTT reached 2 MiB): one line over the gap-bound sizes, as Netgauge fits it, compared
    with numpy's own line."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for path, key in (("labs/source/lab3/logp.json", None), ("book/data/predict_launch_rest_2.json", "logp")):
        data = json.loads((root / path).read_text())
        results, n = (data["results"], data["parameters"]["n"]) if key is None else \
            (data["calibration_measurements"]["logp"], data["calibration_measurements"]["logp_n"])
        fit = logp_fit.fit_results(results, n, "min_s")
        t = {k: np.array([r[k]["min_s"] for r in results]) for k in ("prtt_1_0", "prtt_n_0", "prtt_n_d")}
        sizes = np.array([r["bytes"] for r in results], dtype=float)
        gap = (t["prtt_n_0"] - t["prtt_1_0"]) / (n - 1)
        o_s = (t["prtt_n_d"] - t["prtt_1_0"]) / (n - 1) - np.array([r["d_s"] for r in results])
        bound = gap > (1 + logp_fit.GAP_MARGIN) * o_s
        G, g = np.polyfit(np.maximum(sizes[bound] - 1, 0), gap[bound], 1)
        assert not fit.G_long and fit.G_sizes == fit.gap_sizes == tuple(sizes[bound])
        assert (fit.G, fit.g) == pytest.approx((G, g), rel=1e-12) and fit.G_short == fit.G
        assert max(sizes) == 16384 and any(gap >= logp_fit.LONG_GAP_FACTOR * gap.min())   # long gaps, not fitted
