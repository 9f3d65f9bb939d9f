"""BSP and PRAM costs of schedules (netmodels.models.bsp)."""

import math
from dataclasses import replace

import numpy as np
import pytest

from netmodels.algorithms import barriers, broadcast, combining
from netmodels.algorithms.semantics import combining_errors
from netmodels.models import bsp
from netmodels.simulate import simulate

G, L = 1.3e-9, 2.1e-6
WORDS, MESSAGES = bsp.BSP(G, L, "words"), bsp.BSP(G, L, "messages")


def brute_h(schedule, unit):
    """h of every step by a loop over the Transfer objects (no numpy)."""
    out = []
    for step in schedule.steps:
        sent, received = [0] * schedule.nprocs, [0] * schedule.nprocs
        for tr in step:
            u = 1 if unit == "messages" else tr.count
            sent[tr.src] += u
            received[tr.dst] += u
        out.append(max(max(sent), max(received)))
    return out


@pytest.mark.parametrize("algorithm", list(bsp.COMPARED))
@pytest.mark.parametrize("P", [1, 2, 3, 5, 6, 8, 12])
@pytest.mark.parametrize("unit", bsp.UNITS)
def test_program_h_equals_a_loop_over_the_transfers(algorithm, P, unit):
    s = bsp.compared(algorithm, P, 3 * P + 1).to_schedule()
    prog = bsp.program(s, unit)
    assert [st.h for st in prog.supersteps] == brute_h(s, unit)
    assert prog.S == s.nsteps == bsp.pram_steps(s)
    assert prog.cost(bsp.BSP(G, L, unit)) == pytest.approx(sum(G * h + L for h in brute_h(s, unit)))


def test_hand_counted_programs():
    # two-phase broadcast, P = 4, N = 8: the root scatters 3 blocks of 2, then everyone sends
    # its block to 3 others and receives 3 blocks: h = 6 words twice, 3 messages twice
    s = broadcast.two_phase(4, 8)
    assert [(x.sent, x.received) for x in bsp.program(s).supersteps] == [(6, 2), (6, 6)]
    assert simulate(s, WORDS).time == pytest.approx(2 * (6 * G + L))
    assert simulate(s, MESSAGES).time == pytest.approx(2 * (3 * G + L))
    # ring allreduce, P = 3, N = 10: blocks 4, 3, 3; each step moves one block per rank
    assert [x.h for x in bsp.program(combining.ring(3, 10)).supersteps] == [4, 4, 4, 4]
    # recursive doubling on 6 ranks: fold in, 2 exchanges, fold out, the whole vector each
    assert [x.h for x in bsp.program(combining.recursive_doubling(6, 5)).supersteps] == [5] * 4
    # a barrier's messages are empty: in words it is l per superstep, in messages g + l
    d = barriers.dissemination(5)
    assert simulate(d, WORDS).time == pytest.approx(3 * L)
    assert simulate(d, MESSAGES).time == pytest.approx(3 * (G + L))
    # central counter: the root receives then sends P - 1 messages
    assert simulate(barriers.central_counter(7), MESSAGES).time == pytest.approx(2 * (6 * G + L))


def test_combine_time_is_the_local_work_of_the_busiest_rank():
    c = 1e-9
    s = combining.binomial(4, 10)         # 2 combining steps, 2 copy steps
    prog = bsp.program(s, "words", combine_time=c)
    assert [x.w for x in prog.supersteps] == pytest.approx([10 * c, 10 * c, 0, 0])
    assert prog.W == pytest.approx(20 * c)
    assert simulate(s, replace(WORDS, combine=c)).time == pytest.approx(20 * c + 4 * (10 * G + L))
    # a rank that combines two blocks in one step does both
    s = combining.fence(6, 4, block=4, mesh=(3, 2))
    assert max(x.w for x in bsp.program(s, combine_time=c).supersteps) == pytest.approx(8 * c)


@pytest.mark.parametrize("algorithm", list(bsp.COMPARED))
@pytest.mark.parametrize("unit", bsp.UNITS)
def test_closed_forms_equal_the_programs_for_powers_of_two(algorithm, unit):
    m = bsp.BSP(G, L, unit)
    for P in (2, 4, 8, 32, 128):
        for N in (P, 16 * P):
            expected = bsp.program(bsp.compared(algorithm, P, N), unit).cost(m)
            assert bsp.closed_form_value(algorithm, P, N, m) == pytest.approx(expected, rel=1e-12)


def test_closed_forms_read_as_the_textbook_ones():
    y = bsp.symbols()
    P, R, N, g, l = y.P, y.R, y.N, y.g, y.l
    assert (bsp.closed_form("rabenseifner allreduce") - 2 * (g * N * (1 - 1 / P) + R * l)).simplify() == 0
    assert (bsp.closed_form("recursive doubling allreduce") - R * (g * N + l)).simplify() == 0
    assert (bsp.closed_form("two-phase broadcast", "messages") - 2 * ((P - 1) * g + l)).simplify() == 0


def test_the_new_broadcasts_broadcast():
    for build in (broadcast.binomial, broadcast.flat, broadcast.two_phase):
        for P in (1, 2, 3, 5, 8):
            for N in (0, 1, P - 1, 2 * P + 1):
                s = build(P, N).to_schedule()
                have = np.zeros((P, N), dtype=bool)
                have[0] = True
                for step in s.steps:
                    before = have.copy()
                    for tr in step:
                        assert before[tr.src, tr.start:tr.stop].all()
                        have[tr.dst, tr.start:tr.stop] = True
                assert have.all(), (s.name, P, N)


def test_compared_allreduces_are_allreduces():
    for name, registered in bsp.COMPARED.items():
        kind = registered.split(".")[0]
        if kind == "allreduce":
            for P in (1, 3, 4, 6):
                assert combining_errors(bsp.compared(name, P, 7).to_schedule()) == []
        if kind == "barrier":
            assert all(barriers.is_barrier(bsp.compared(name, P)) for P in range(1, 20))


def test_array_schedules_at_scale():
    P = 2**12
    a = barriers.dissemination(P)
    prog = bsp.program(a, "messages")
    assert (prog.S, prog.H) == (12, 12)
    assert simulate(a, MESSAGES).time == pytest.approx(12 * (G + L))
    assert math.isclose(bsp.closed_form_value("dissemination barrier", P, 0, MESSAGES), 12 * (G + L))


@pytest.mark.parametrize("call, match", [
    (lambda: bsp.BSP(-1, 1), "g must be"),
    (lambda: bsp.BSP(1, float("nan")), "l must be"),
    (lambda: bsp.BSP(1, 1, "bytes"), "unit must be"),
    (lambda: bsp.program(barriers.dissemination(4), "bits"), "unit must be"),
    (lambda: bsp.program(barriers.dissemination(4), combine_time=-1), "combine_time must be"),
    (lambda: bsp.program([1, 2]), "schedule must be"),
    (lambda: bsp.program(barriers.dissemination(4), "words").cost(MESSAGES), "counts h in"),
    (lambda: bsp.compared("bcast", 4), "algorithm must be"),
    (lambda: bsp.compared("ring allreduce", 0, 4), "nprocs must be"),
    (lambda: bsp.compared("ring allreduce", 4, -1), "nelems must be"),
    (lambda: bsp.closed_form("bcast"), "algorithm must be"),
    (lambda: bsp.closed_form_value("ring allreduce", 0, 4, WORDS), "P must be"),
    (lambda: bsp.pram_steps("ring"), "schedule must be"),
])
def test_bad_input_is_a_value_error_naming_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_fit_recovers_g_and_l_from_exact_data():
    h = np.array([0, 10, 100, 1000, 10000])
    fit = bsp.fit_bsp(h, L + G * h)
    assert fit.g == pytest.approx(G, rel=1e-9) and fit.l == pytest.approx(L, rel=1e-9)
    assert fit.g_stderr == pytest.approx(0, abs=1e-15) and fit.max_relative_residual < 1e-9
    assert fit.params("messages") == bsp.BSP(fit.g, fit.l, "messages", name="fit")


def test_fit_confidence_intervals_cover_the_truth_at_their_level():
    """Known g, l plus Gaussian noise: the 95 % intervals hold the truth in about 95 % of runs,
    and the standard errors match the spread of the estimates (a hand-made OLS as reference)."""
    rng = np.random.default_rng(7)
    h = np.repeat([0, 100, 400, 1600, 6400], 3).astype(float)
    sigma = 0.3e-6
    hits_g = hits_l = 0
    est = []
    runs = 400
    for _ in range(runs):
        t = L + G * h + rng.normal(0, sigma, h.size) + 1e-3   # offset keeps every time > 0
        fit = bsp.fit_bsp(h, t)
        A = np.column_stack([np.ones_like(h), h])
        (l_ref, g_ref), *_ = np.linalg.lstsq(A, t, rcond=None)
        assert fit.g == pytest.approx(g_ref, rel=1e-9) and fit.l == pytest.approx(l_ref, rel=1e-9)
        hits_g += fit.g_ci[0] <= G <= fit.g_ci[1]
        hits_l += fit.l_ci[0] <= L + 1e-3 <= fit.l_ci[1]
        est.append((fit.g, fit.g_stderr))
    assert 0.91 <= hits_g / runs <= 0.99 and 0.91 <= hits_l / runs <= 0.99
    g_hat, se = np.array(est).T
    exact_se = sigma / np.sqrt(np.sum((h - h.mean()) ** 2))
    assert np.std(g_hat) == pytest.approx(exact_se, rel=0.1)
    assert np.median(se) == pytest.approx(exact_se, rel=0.15)


@pytest.mark.parametrize("h, t, match", [
    ([0, 1], [1e-6, 2e-6], "at least 3 points"),
    ([5, 5, 5], [1e-6, 2e-6, 3e-6], "2 distinct"),
    ([0, 1, 2], [1e-6, 0, 3e-6], "seconds must be"),
    ([0, -1, 2], [1e-6, 2e-6, 3e-6], "h must be"),
    ([0, 1, 2], [1e-6, 2e-6], "equal length"),
])
def test_fit_bad_input(h, t, match):
    with pytest.raises(ValueError, match=match):
        bsp.fit_bsp(h, t)
    with pytest.raises(ValueError, match="confidence"):
        bsp.fit_bsp([0, 1, 2], [1e-6, 2e-6, 3e-6], confidence=1.5)
