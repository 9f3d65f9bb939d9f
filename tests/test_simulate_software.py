"""The software term in the simulator's walk (netmodels.simulate.software): hand-computed cases
under each semantics, the network and the network plus the software walked apart as the lower
and upper bounds of the combined walk, and the refusals."""

import numpy as np
import pytest

from netmodels.algorithms import registry
from netmodels.algorithms.schedule import Schedule, Transfer
from netmodels.models.alphabeta import AlphaBeta
from netmodels.models.logp import LogGP
from netmodels.models.nbl import NBLModel
from netmodels.simulate import Software, simulate

US = 1e-6
ALPHA, BETA = 2 * US, 1e-9
AB = AlphaBeta(ALPHA, BETA)
LGP = LogGP(L=1 * US, o=0.5 * US, g=0.3 * US, P=3, o_r=0.7 * US, G=1e-9)


def chain(n=100):
    """Rank 0 sends to 1 in step 0, rank 1 to 2 in step 1 (n elements each)."""
    return Schedule("chain", 3, n, [(Transfer(0, 1, 0, n),), (Transfer(1, 2, 0, n),)])


def per_step(*rows):
    return np.array(rows, dtype=float) * US


@pytest.mark.parametrize("semantics", ["sync", "stepwise"])
def test_a_chain_under_alpha_beta_adds_the_software_of_the_rank_that_holds_up_the_next_step(semantics):
    m = ALPHA + BETA * 800                                   # one message of 100 float64
    # rank 1 works 3 µs after its receive: its send of step 1 waits for it
    sw = Software(0.0, per_step([0, 3, 0], [0, 0, 0]))
    assert simulate(chain(), AB, semantics=semantics, software=sw).time == pytest.approx(2 * m + 3 * US)
    # rank 0 works 0.5 µs after its send in step 0 and has nothing in step 1: under stepwise
    # nobody waits for it (and it is done before rank 2); under sync the step lasts until its
    # work is done
    sw = Software(0.0, per_step([0.5, 0, 0], [0, 0, 0]))
    want = 2 * m + (0.5 * US if semantics == "sync" else 0.0)
    assert simulate(chain(), AB, semantics=semantics, software=sw).time == pytest.approx(want)


def test_a_chain_under_loggp_in_its_own_semantics():
    one = 0.5 * US + 1 * US + 799 * 1e-9 + 0.7 * US            # o_s + L + (m - 1) G + o_r
    net = simulate(chain(), LGP, semantics="stepwise").time
    assert net == pytest.approx(2 * one)
    for step0, add in (([0, 2, 0], 2 * US),                  # rank 1 late to its send
                       ([1, 0, 0], 0.0),                     # rank 0 busy after its send: nobody waits
                       ([0, 0, 0], 0.0)):
        sw = Software(0.0, per_step(step0, [0, 0, 1.5]))     # and rank 2's work after the last receive
        got = simulate(chain(), LGP, semantics="stepwise", software=sw).time
        assert got == pytest.approx(2 * one + add + 1.5 * US)


def test_the_start_delays_every_rank():
    sw = Software(5 * US, np.zeros((2, 3)))
    for model, sem in ((AB, "sync"), (AB, "stepwise"), (LGP, "stepwise"), (LGP, "sync")):
        net = simulate(chain(), model, semantics=sem).time
        assert simulate(chain(), model, semantics=sem, software=sw).time == pytest.approx(net + 5 * US)


def test_a_step_of_local_copies_costs_its_software():
    s = Schedule("copies", 2, 4, [(Transfer(0, 0, 0, 2, dst_start=2), Transfer(1, 1, 0, 2, dst_start=2))])
    sw = Software(0.0, per_step([1, 2]))
    for model in (AB, LGP):
        for sem in ("sync", "stepwise"):
            assert simulate(s, model, semantics=sem, software=sw).time == pytest.approx(2 * US)


SCHEDULES = [("allreduce.ring", 5, 1000), ("allreduce.recursive_doubling", 8, 64), ("allreduce.binomial", 6, 300),
             ("barrier.dissemination", 7, 0), ("allreduce.rabenseifner", 4, 4000)]


@pytest.mark.parametrize("name, P, N", SCHEDULES)
def test_the_combined_walk_lies_between_the_network_and_the_two_walks_added(name, P, N):
    s = registry.build(name, P, N)
    rng = np.random.default_rng(7)
    for model, sem in ((AB, "stepwise"), (AB, "sync"), (LogGP(L=1 * US, o=0.5 * US, g=0.3 * US, P=P, G=1e-9), "stepwise"),
                       (LogGP(L=1 * US, o=0.5 * US, g=0.3 * US, P=P, G=1e-9), "sync"),
                       (NBLModel(ALPHA, BETA), "sync"), (NBLModel(ALPHA, BETA), "stepwise")):
        sw = Software(rng.uniform(0, 2 * US, P), rng.uniform(0, 3 * US, (s.nsteps, P)))
        net = simulate(s, model, semantics=sem).time
        both = simulate(s, model, semantics=sem, software=sw).time
        apart = net + sw.lockstep(s.nsteps, P)
        assert net < both <= apart * (1 + 1e-12), (model, sem)
        # without a rank's own combining, a sync step is the busiest rank's messages plus the
        # busiest rank's software: the two walks added, exactly
        if sem == "sync" and isinstance(model, AlphaBeta):
            assert both == pytest.approx(apart)


def test_lockstep_is_the_sync_walk_on_a_network_that_costs_next_to_nothing():
    s = registry.build("allreduce.ring", 4, 100)
    rng = np.random.default_rng(3)
    sw = Software(rng.uniform(0, 1, 4), rng.uniform(0, 1, (s.nsteps, 4)))
    want = sw.start.max() + sw.steps.max(axis=1).sum()
    free = AlphaBeta(1e-300, 1e-300)
    assert sw.lockstep(s.nsteps, 4) == pytest.approx(want)
    assert simulate(s, free, semantics="sync", software=sw).time == pytest.approx(want)


def test_a_callable_gives_what_the_array_gives():
    s = registry.build("allreduce.ring", 5, 1000)
    table = np.random.default_rng(1).uniform(0, US, (s.nsteps, 5))
    for model in (AB, LogGP(L=1 * US, o=0.5 * US, g=0.3 * US, P=5)):
        a = simulate(s, model, semantics="stepwise", software=Software(US, table)).time
        b = simulate(s, model, semantics="stepwise", software=Software(US, lambda t: table[t])).time
        assert a == b


@pytest.mark.parametrize("software, kwargs, match", [
    (Software(0.0, np.zeros((2, 3))), dict(model=LGP, semantics="loggopsim"), "loggopsim"),
    (Software(0.0, np.zeros((2, 3))), dict(model=AB, trace=True), "trace"),
    (Software(0.0, np.zeros((3, 3))), dict(model=AB), r"shape \(2, 3\)"),
    (Software(-1.0, np.zeros((2, 3))), dict(model=AB), "start"),
    (Software(0.0, np.full((2, 3), np.nan)), dict(model=AB), "steps"),
    (Software(0.0, lambda t: [-1.0, 0, 0]), dict(model=AB, semantics="stepwise"), r"steps\(0\)"),
    ((0.0, np.zeros((2, 3))), dict(model=AB), "software must be"),
])
def test_bad_software_is_refused_in_one_line(software, kwargs, match):
    with pytest.raises(ValueError, match=match):
        simulate(chain(), software=software, **kwargs)
