"""The vectorised simulator against independent references.

References: the per-transfer LogP simulation (tests/logp_reference.py), the
per-transfer NBL cost (tests/nbl_reference.py), the NBL paper's closed forms
(netmodels.models.nbl_paper.time), the LogP barrier closed forms (logp_barriers.barrier_time),
Netgauge's PRTT forward model (logp_fit.prtt_model), and closed forms derived by hand in
the docstrings below, up to P = 2^20.
"""

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodels.algorithms import arrays, barriers, broadcast, combining, registry
from netmodels.algorithms.arrays import ArraySchedule, ArrayStep
from netmodels.algorithms.schedule import Schedule, Transfer
from netmodels.models import logp, logp_barriers, logp_fit, nbl, nbl_paper
from netmodels.models.alphabeta import AlphaBeta
from netmodels.models.machines import DELTA
from netmodels.simulate import simulate
from netmodels.models.nbl import NBLModel
from netmodels.models.step import all_messages, steps

from . import logp_reference, nbl_reference

US = 1e-6
# o > g and o < g, o_s != o_r: the per-step rules differ in each
LOGP = [logp.LogP(L=5 * US, o=1.5 * US, g=1 * US, P=2, o_r=2 * US),
        logp.LogP(L=2 * US, o=1 * US, g=4 * US, P=2, o_r=0.5 * US)]
# the paper's fitted f(L), extended beyond L = 6 (a central counter's root has L = P - 1)
NBL = [NBLModel(54 * US, 1.54 * US / 8, lambda L: nbl.FITTED_DELTA.get(L, 0.85 * L), 0.25 * US / 8, 0.37 * US / 8),
       NBLModel.nominal(1 * US, 0.01 * US / 8, 0.002 * US / 8, 0.003 * US / 8)]
AB = AlphaBeta(2 * US, 1e-9)
SIZES = list(range(1, 21)) + [31, 32, 33, 47, 63, 64]


def kit_schedules(p):
    """Every schedule of the kit on p ranks, per transfer: barriers (with options), allreduces, a broadcast."""
    out = [a.build(p) for a in registry.algorithms("barrier")]
    out += [barriers.combining_tree(p, fan_in=2), barriers.nway_dissemination(p, n=3),
            barriers.tournament(p, release="flat")]
    out += [a.build(p, n) for a in registry.algorithms("allreduce") for n in (1, 2 * p + 3)]
    out += [broadcast.binomial(p, 5, p // 2)]
    return [a.to_schedule() for a in out]


def rel(a, b):
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


# ----------------------------------------------------------------------------- per-transfer references
@pytest.mark.parametrize("p", SIZES)
def test_stepwise_logp_equals_the_per_transfer_simulation(p):
    for s in kit_schedules(p):
        for m in LOGP:
            ref = logp_reference.simulate(s, m)
            got = simulate(ArraySchedule.from_schedule(s), m, semantics="stepwise")
            assert np.max(np.abs(got.finish - ref) / np.maximum(ref, 1e-300)) <= 1e-9, (s.name, p)
            assert rel(got.time, ref.max(initial=0.0)) <= 1e-9


@pytest.mark.parametrize("p", [1, 2, 3, 5, 8, 13, 16, 31, 64])
def test_stepwise_loggp_equals_the_per_transfer_simulation(p):
    # G > 0 with message sizes that change from step to step (Rabenseifner, Fence, trees):
    # the receive gap must start at the first byte in both
    m = logp.LogGP(L=3 * US, o=1 * US, g=2 * US, P=2, o_r=1.5 * US, G=1e-9)
    for s in kit_schedules(p):
        ref = logp_reference.simulate(s, m, elem_bytes=8)
        got = simulate(s, m, semantics="stepwise", elem_bytes=8)
        assert np.max(np.abs(got.finish - ref) / np.maximum(ref, 1e-300)) <= 1e-9, (s.name, p)


@st.composite
def random_schedules(draw):
    """A schedule of 2 to 12 ranks and 1 to 6 steps, each with up to 3P messages between
    random distinct ranks (a pair may repeat), of 0 to 4096 elements."""
    p = draw(st.integers(2, 12))
    steps = []
    for _ in range(draw(st.integers(1, 6))):
        pairs = draw(st.lists(st.tuples(st.integers(0, p - 1), st.integers(1, p - 1),
                                        st.sampled_from([0, 1, 7, 512, 4096])), max_size=3 * p))
        src = np.array([a for a, _, _ in pairs], dtype=np.int64)
        dst = (src + np.array([b for _, b, _ in pairs], dtype=np.int64)) % p
        steps.append(ArrayStep.of(src, dst, 0, [c for _, _, c in pairs]))
    return ArraySchedule("random", p, 4096, steps)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(random_schedules(), st.sampled_from([(1.5, 1.0, 2.0), (1.0, 4.0, 0.5)]), st.sampled_from([0.0, 1e-3]))
def test_stepwise_equals_the_per_transfer_simulation_on_random_schedules(s, o_g_or, G):
    # any schedule, several messages into one rank, sizes that change: the receiver's
    # (m - 1) G from its first byte, the gaps, the order of arrival (tests/logp_reference.py)
    o, g, o_r = o_g_or
    m = logp.LogGP(L=3 * US, o=o * US, g=g * US, P=2, o_r=o_r * US, G=G * US)
    ref = logp_reference.simulate(s, m, elem_bytes=8)
    got = simulate(s, m, semantics="stepwise", elem_bytes=8)
    assert np.max(np.abs(got.finish - ref) / np.maximum(ref, 1e-300)) <= 1e-9


@pytest.mark.parametrize("p", SIZES)
def test_sync_nbl_equals_the_per_transfer_cost(p):
    for s in kit_schedules(p):
        for m in NBL:
            assert rel(simulate(s, m).time, nbl_reference.cost(s, m)) <= 1e-9, (s.name, p)


@pytest.mark.parametrize("mesh", [(4, 4), (5, 3), (8, 4), (16, 4), (3, 2), (7, 1)])
def test_sync_nbl_equals_the_papers_closed_forms(mesh):
    w, h = mesh
    f = nbl.FITTED_DELTA | {5: 4.5}
    for n, S in ((100, 20), (1200, 60), (999, 333), (40, 40)):   # N a multiple of S, as the closed forms assume
        for alg in ("tree", "snake", "fence"):
            s = registry.build(f"allreduce.{alg}", w * h, n, block=None if alg == "tree" else S, mesh=mesh)
            want = nbl_paper.time(alg, n, w, h, S, replace(DELTA, f=f))
            assert rel(simulate(s, replace(DELTA, f=f)).time, want) <= 1e-9, (alg, mesh, n, S)


def test_either_form_gives_the_same_result():
    s = combining.rabenseifner(13, 40).to_schedule()
    for m in LOGP + NBL + [AB]:
        for sem in ("sync", "stepwise"):
            a, b = simulate(s, m, semantics=sem), simulate(ArraySchedule.from_schedule(s), m, semantics=sem)
            assert a.time == b.time and np.array_equal(a.finish, b.finish)
            assert (a.steps, a.messages, a.bytes) == (s.nsteps, sum(map(len, s.steps)),
                                                       8 * sum(t.count for st in s.steps for t in st))


def test_stepwise_with_entry_skew_equals_the_per_transfer_simulation():
    rng = np.random.default_rng(1)
    for p in (5, 16, 23):
        skew = rng.uniform(0, 20 * US, p)
        for s in kit_schedules(p):
            ref = logp_reference.simulate(s, LOGP[0], entry=skew)
            got = simulate(s, LOGP[0], semantics="stepwise", skew=skew)
            assert np.allclose(got.finish, ref, rtol=1e-12, atol=0)


def test_sync_is_never_faster_than_stepwise_and_counts_steps():
    for p in (6, 16, 21):
        for s in kit_schedules(p):
            for m in LOGP + NBL + [AB]:
                sy, df = simulate(s, m, semantics="sync"), simulate(s, m, semantics="stepwise")
                assert df.time <= sy.time * (1 + 1e-12), (s.name, p, type(m).__name__)
                assert sy.step_times.shape == (s.nsteps,) and df.step_times is None
                assert sy.time == pytest.approx(sy.step_times.sum(), rel=1e-12)


# ----------------------------------------------------------------------------- closed forms up to 2^20
BIG = [3, 1000, 12345, 2**17 + 1, 2**20]


@pytest.mark.parametrize("p", BIG)
def test_dissemination_under_logp_equals_the_closed_form(p):
    """logp_barriers.barrier_time: one_way + (R - 1) max(g, one_way), R = ceil(log2 P), any P."""
    a = barriers.dissemination(p)
    for m in (LOGP if p < 2**20 else LOGP[1:]):       # at 2^20 the binding gap only (fast tests)
        want = logp_barriers.barrier_time("dissemination", m.with_P(p))
        for sem in ("sync", "stepwise"):
            assert rel(simulate(a, m, semantics=sem).time, want) <= 1e-12, (p, sem)


def test_dissemination_at_2_20_is_R_times_one_way_when_g_is_small():
    """g <= o_s + L + o_r: every round costs one message end to end, 20 (L + o_s + o_r)."""
    m = LOGP[0]
    r = simulate(barriers.dissemination(2**20), m)
    assert rel(r.time, 20 * (m.L + m.o_s + m.o_r)) <= 1e-12
    assert r.messages == 20 * 2**20 and r.bytes == 0 and r.steps == 20


@pytest.mark.parametrize("p", BIG)
def test_binomial_broadcast_closed_forms(p):
    """R = ceil(log2 P) steps of one whole-vector message per sender: R (α + β m) under α-β
    (both semantics: a rank sends as soon as it has received), and R (o_s + L + o_r) under
    sync LogP when g <= o_s + L + o_r (the root's sends are one round apart)."""
    n = 1000
    a = broadcast.binomial(p, n, root=p // 3)
    R = math.ceil(math.log2(p))
    for sem in ("sync", "stepwise"):
        assert rel(simulate(a, AB, semantics=sem).time, R * (AB.alpha + AB.beta * 8 * n)) <= 1e-12
    m = LOGP[0]
    assert rel(simulate(a, m, semantics="sync").time, R * m.one_way) <= 1e-12


@pytest.mark.parametrize("p", BIG)
def test_recursive_doubling_under_alphabeta(p):
    """log2 P' exchanges of the whole vector, plus the fold in and out when P is not a power
    of two: (floor(log2 P) + 2 [P != 2^k]) (α + β m), m = 8 N bytes."""
    n = 64
    steps = (p.bit_length() - 1) + (2 if p & (p - 1) else 0)
    want = steps * (AB.alpha + AB.beta * 8 * n)
    got = simulate(combining.recursive_doubling(p, n), AB)
    assert rel(got.time, want) <= 1e-12 and got.steps == steps


@pytest.mark.parametrize("p", [2, 3, 7, 64, 300])
def test_ring_under_alphabeta(p):
    """2 (P - 1) steps, each rank sending one block of ceil(N/P) elements at most:
    2 (P - 1) (α + β 8 ceil(N/P)); for N divisible by P the textbook 2(P-1)α + 2(P-1)/P β m."""
    for n in (p, 5 * p + 1):
        want = 2 * (p - 1) * (AB.alpha + AB.beta * 8 * -(-n // p))
        assert rel(simulate(combining.ring(p, n), AB).time, want) <= 1e-12
        assert rel(simulate(combining.ring(p, n), AB, semantics="stepwise").time, want) <= 1e-12


def test_loggp_round_trip_equals_the_prtt_forward_model():
    """n back-to-back messages then one answer: PRTT(n, 0, s) of logp_fit.prtt_model when the
    receiver keeps up (o_r <= g + (s - 1) G)."""
    m = logp.LogGP(L=3 * US, o=1 * US, g=2 * US, P=2, o_r=1.5 * US, G=1e-9)
    for nmsg in (1, 2, 10):
        for nbytes in (1, 8, 8000):
            s = Schedule("prtt", 2, nbytes, [tuple(Transfer(0, 1, 0, nbytes) for _ in range(nmsg)),
                                             (Transfer(1, 0, 0, nbytes),)])
            got = simulate(s, m, semantics="stepwise", elem_bytes=1).time
            assert rel(got, float(logp_fit.prtt_model(m, nmsg, 0.0, nbytes))) <= 1e-12


# ----------------------------------------------------------------------------- contention
class Bus:
    """Every message crosses the one shared link."""

    def __init__(self, p):
        self.nprocs, self.nlinks = p, 1

    def routes(self, src, dst):
        return np.arange(src.size), np.zeros(src.size, dtype=int)


class RingLinks:
    """Unidirectional ring: link i goes from node i to node i + 1; a message from s to d
    crosses links s, s + 1, ..., d - 1 (mod P)."""

    def __init__(self, p):
        self.nprocs = self.nlinks = p

    def routes(self, src, dst):
        hops = (dst - src) % self.nprocs
        msg = np.repeat(np.arange(src.size), hops)
        first = np.cumsum(hops) - hops
        return msg, (src[msg] + np.arange(msg.size) - first[msg]) % self.nprocs


def shift(p, d, n):
    return ArraySchedule("shift", p, n, [ArrayStep.of(np.arange(p), (np.arange(p) + d) % p, 0, n)])


def test_contention_on_a_ring_of_links():
    """A shift by d on a unidirectional ring puts d messages on every link: the bandwidth
    term is d times longer, the latency term is not."""
    p, n = 12, 100
    for d in (1, 2, 5):
        got = simulate(shift(p, d, n), AB, topology=RingLinks(p)).time
        assert rel(got, AB.alpha + d * AB.beta * 8 * n) <= 1e-12
        m = logp.LogGP(L=3 * US, o=1 * US, g=2 * US, P=2, G=1e-9)
        for semantics in ("stepwise", "loggopsim"):
            got = simulate(shift(p, d, n), m, topology=RingLinks(p), semantics=semantics).time
            assert rel(got, m.o_s + m.L + m.o_r + d * (8 * n - 1) * m.G) <= 1e-12, semantics
        nb = NBLModel.standard(10 * US, 0.1 * US / 8)
        got = simulate(shift(p, d, n), nb, topology=RingLinks(p)).time
        assert rel(got, 2 * nb.alpha + d * nb.beta * 8 * n) <= 1e-12


def test_all_messages_are_the_messages_of_the_steps_one_after_the_other():
    # what the loggopsim semantics hands the model in one call: the steps' messages, link loads
    # of their own step, local copies left out
    p = 12
    a = shift(p, 2, 10)
    a.steps += [ArrayStep.of(np.arange(p), np.arange(p), 0, 5),           # local copies only
                ArrayStep.of([0, 3, 3], [0, 4, 5], 0, [1, 2, 3], True),    # one local copy
                shift(p, 5, 10).steps[0]]
    t, every = all_messages(a, 8, RingLinks(p))
    per = [(i, s) for i, s in enumerate(steps(a, 8, RingLinks(p))) if s is not None and s.src.size]
    assert t.tolist() == [i for i, s in per for _ in range(s.src.size)] and len(per) == 3
    for field in ("src", "dst", "start", "count", "combine", "nbytes", "load", "link_bytes"):
        assert np.array_equal(getattr(every, field), np.concatenate([getattr(s, field) for _, s in per])), field
    assert set(every.load) == {2, 5}   # shifts by 2 and 5; 3 -> 4 and 3 -> 5 share the link out of 3
    local = ArraySchedule("none", 3, 1, [ArrayStep.of([0], [1], 0, 1)])
    local.steps[0] = ArrayStep.of([1], [1], 0, 1)    # as test_local_transfers_cost_nothing builds one
    t, every = all_messages(local)
    assert t.size == 0 and every is None


def test_contention_on_a_bus_and_none_without_topology():
    p, n = 8, 10
    a = combining.recursive_doubling(p, n)
    plain = simulate(a, AB).time
    assert rel(plain, 3 * (AB.alpha + AB.beta * 8 * n)) <= 1e-12
    assert rel(simulate(a, AB, topology=Bus(p)).time, 3 * (AB.alpha + p * AB.beta * 8 * n)) <= 1e-12
    with pytest.raises(ValueError, match="topology has 4 nodes"):
        simulate(a, AB, topology=Bus(4))


# ----------------------------------------------------------------------------- skew, noise, local work
def test_sync_skew_delays_the_first_step_only():
    a = barriers.dissemination(10)
    skew = np.zeros(10)
    skew[3] = 7 * US
    base = simulate(a, LOGP[0]).time
    assert rel(simulate(a, LOGP[0], skew=skew).time, base + 7 * US) <= 1e-12


def test_noise_is_seeded_and_adds_the_drawn_latency():
    s = ArraySchedule("one", 2, 4, [ArrayStep.of([0], [1], 0, 4)])
    draw = np.random.default_rng(42).exponential(3 * US, 1)[0]
    assert rel(simulate(s, AB, noise=3 * US, seed=42).time, AB.alpha + AB.beta * 32 + draw) <= 1e-12
    m = LOGP[0]
    assert rel(simulate(s, m, noise=3 * US, seed=42).time, m.one_way + draw) <= 1e-12
    a = barriers.dissemination(64)
    r1, r2 = (simulate(a, m, noise=1 * US, seed=7, semantics="stepwise") for _ in range(2))
    assert np.array_equal(r1.finish, r2.finish)
    assert r1.time > simulate(a, m).time
    assert simulate(a, m, noise=0.0, seed=7).time == simulate(a, m).time


def test_local_transfers_cost_nothing():
    a = shift(6, 1, 10)
    t = simulate(a, AB).time
    a.steps.append(ArrayStep.of(np.arange(6), np.arange(6), 0, 10))   # src == dst: local copies
    for m in [AB] + LOGP + NBL:
        r = simulate(a, m)
        assert r.messages == 6 and r.bytes == 6 * 10 * 8
    assert simulate(a, AB).time == t


@pytest.mark.parametrize("kwargs, message", [
    ({"semantics": "async"}, "semantics"),
    ({"skew": -1.0}, "skew"),
    ({"skew": [0.0, 1.0]}, "skew"),
    ({"noise": -1e-6}, "noise"),
    ({"elem_bytes": 0}, "elem_bytes"),
])
def test_bad_arguments_raise_valueerror(kwargs, message):
    with pytest.raises(ValueError, match=message):
        simulate(barriers.dissemination(4), LOGP[0], **kwargs)


def test_bad_model_and_schedule():
    with pytest.raises(ValueError, match="model must be"):
        simulate(barriers.dissemination(4), object())
    with pytest.raises(ValueError, match="Schedule or an ArraySchedule"):
        simulate([(0, 1)], AB)


def test_array_builders_simulate_like_their_twins():
    for name in registry.names():
        n = 0 if name.startswith("barrier.") else 50
        a = registry.build(name, 21, n)
        t = arrays.as_transfers(a)
        assert simulate(a, LOGP[1], semantics="stepwise").time == logp_reference.simulate(t, LOGP[1]).max()
