"""One simulator, one step rule per model: every cost path of the kit agrees with the engine,
and every model costs every algorithm of the registry.

The cost paths (BSP's programs, predict's three models, the models panel's columns) are all
calls into :func:`netmodels.simulate.simulate`; these tests make sure each still says what the engine says on every registry entry.  The independent references
(closed forms, the per-transfer rules of tests/logp_reference.py and tests/nbl_reference.py)
are checked against the engine here and in test_simulate.py, test_nbl.py, test_logp.py,
test_bsp.py and test_twolevel.py.
"""

import numpy as np
import pytest

import netmodels.algorithms  # noqa: F401  (registers every builder)
from mpi_exercises.bench import predict
from netmodels.algorithms import registry
from netmodels.algorithms.arrays import as_arrays
from netmodels.figures import models_panel as mp
from netmodels.models import bsp, logp, lop, machines, nbl, twolevel
from netmodels.models.alphabeta import AlphaBeta
from netmodels.simulate import simulate

from . import logp_reference, nbl_reference

US = 1e-6
A, B = 10 * US, 1e-9                       # α = 10 µs, β = 1 ns/B
AB = AlphaBeta(A, B)
MODELS = {
    "AlphaBeta": AB,
    "NBLModel nominal": nbl.NBLModel.nominal(A, B, 0.2 * US / 8, 0.3 * US / 8),
    "NBL DELTA": machines.DELTA,
    "LogP": logp.LogP(L=3 * US, o=1 * US, g=2 * US, P=2, o_r=1.5 * US, combine=1e-9),
    "LogGP": logp.LogGP(L=3 * US, o=1 * US, g=0.5 * US, P=2, G=1e-9),
    "PLogP": logp.PLogP(2 * US, (0, 1024, 65536), (1 * US, 1.5 * US, 20 * US), (1 * US, 1.5 * US, 20 * US),
                        (2 * US, 3 * US, 60 * US)),
    "BSP words": bsp.BSP(1e-9, 20 * US, "words", combine=1e-9),
    "BSP messages": bsp.BSP(2 * US, 20 * US, "messages"),
    "TwoLevel": twolevel.origin2000(pack=1e-10),
    "LoP": lop.LoP(machines.LOP_SENDRECV_RTT_MIN, machines.LOP_RDMAW_OS),
}
NAMES = registry.names()
SIZES = (3, 8)


def build(name, P, n=40):
    return registry.build(name, P, 0 if name.startswith("barrier.") else n)


def test_the_registry_is_walked():
    assert len(NAMES) >= 25 and "allreduce.snake" in NAMES and "barrier.central_counter" in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_every_model_costs_every_registry_entry_in_both_semantics(name):
    for P in SIZES:
        s = build(name, P)
        for label, model in MODELS.items():
            sy = simulate(s, model, semantics="sync")
            df = simulate(s, model, semantics="stepwise")
            for r in (sy, df):
                assert np.isfinite(r.time) and r.time >= 0, (name, P, label)
                assert r.finish.shape == (P,) and np.all(r.finish <= r.time)
            assert sy.time == pytest.approx(sy.step_times.sum(), rel=1e-12, abs=1e-18)
            if sy.messages:
                assert sy.time > 0 and df.time > 0, (name, P, label)


@pytest.mark.parametrize("name", NAMES)
def test_every_cost_path_agrees_with_the_engine(name):
    for P in SIZES:
        for n in (1, 40):
            s = build(name, P, n)
            # predict's three models: each the table's model under its own semantics
            cal = predict.Calibration(predict.network_parameters(
                {"alpha_s": A, "beta_s_per_byte": B},
                {"L_s": 3 * US, "o_s_s": 1 * US, "o_r_s": 1 * US, "g_s": 0.5 * US, "G_s_per_byte": 1e-9}, None, P))
            got = predict.network_times(s, cal)
            assert got["alpha-beta"] == pytest.approx(simulate(s, AB, semantics="sync").time, rel=1e-12)
            nblm = nbl.NBLModel(A, B, {L: 1.0 for L in range(1, 2 * P + 1)})
            assert got["nbl"] == pytest.approx(simulate(s, nblm, semantics="sync").time, rel=1e-12)
            loggp = logp.LogGP(L=3 * US, o=1 * US, g=0.5 * US, P=2, G=1e-9)
            assert got["loggp"] == pytest.approx(simulate(s, loggp, semantics="stepwise").time, rel=1e-12)
            # BSP: the program's sum
            for unit in ("words", "messages"):
                b = bsp.BSP(1e-9, 20 * US, unit)
                assert bsp.program(s, unit, 1e-9).cost(b) == pytest.approx(
                    simulate(s, bsp.BSP(1e-9, 20 * US, unit, combine=1e-9)).time, rel=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_the_engine_agrees_with_the_per_transfer_references(name):
    """The references are written transfer by transfer, independently of the step rules."""
    for P in SIZES:
        s = build(name, P)
        for m in (MODELS["LogP"], logp.LogP(L=2 * US, o=1 * US, g=4 * US, P=2, o_r=0.5 * US)):
            ref = logp_reference.simulate(s, m, combine_s_per_elem=m.combine)
            np.testing.assert_allclose(simulate(s, m, semantics="stepwise").finish, ref, rtol=1e-12)
        m = MODELS["NBLModel nominal"]
        assert simulate(s, m).time == pytest.approx(nbl_reference.cost(s, m), rel=1e-12)


def test_the_models_panel_is_the_engine():
    mach = mp.Machine(bsp.BSP(1e-9, 20 * US), logp.LogP(3 * US, 1 * US, 2 * US, 2), AB)
    for alg in bsp.COMPARED:
        c = mp.model_costs(alg, 8, 64, mach)
        sched = bsp.compared(alg, 8, 64)
        assert c["BSP"] == pytest.approx(simulate(sched, mach.bsp).time, rel=1e-12)
        assert c["LogP"] == pytest.approx(simulate(sched, mach.logp, semantics="stepwise").time, rel=1e-12)
        assert c[mp.STANDARD] == pytest.approx(simulate(sched, nbl.NBLModel.standard(A, B)).time, rel=1e-12)


# ------------------------------------------------------------------ the two α-β rules
def test_the_two_alpha_beta_rules_in_one_table():
    """AlphaBeta (one port, full duplex: an exchange costs α + β m, a rank's messages one
    after the other) and Littlefield's standard model (L α + β S: α per link, sends and
    receives alike, and every link at full bandwidth at once), on hand-computed cases."""
    m = 1000                                         # elements, 8 bytes each
    std = nbl.NBLModel.standard(A, B)
    rd = registry.build("allreduce.recursive_doubling", 2, m)       # one exchange
    cc = registry.build("barrier.central_counter", 8, 0)            # 7 in, then 7 out
    flat = registry.build("alltoall.direct", 4, m)                  # 3 sends, 3 receives each
    table = {  # schedule: (AlphaBeta, standard model), s
        "exchange": (rd, A + 8 * B * m, 2 * A + 8 * B * m),
        "central counter P=8": (cc, 14 * A, 14 * A),
        "direct alltoall P=4": (flat, 3 * (A + 8 * B * m), 6 * A + 8 * B * m),
    }
    for label, (s, want_ab, want_std) in table.items():
        assert simulate(s, AB).time == pytest.approx(want_ab, rel=1e-12), label
        assert simulate(s, std).time == pytest.approx(want_std, rel=1e-12), label


def test_alpha_beta_with_links_the_busiest_link_sets_a_floor():
    """On a line of 4 nodes 0 -> 2 and 1 -> 3 at once both cross the link 1 -> 2: the step
    takes α + 2 β m (each message alone: α + β m)."""
    from netmodels.algorithms.arrays import ArraySchedule, ArrayStep
    from netmodels.topology import Mesh2D

    tree = Mesh2D(4, 1)
    src, dst = np.array([0, 1]), np.array([2, 3])
    step = ArrayStep(src, dst, np.zeros(2, np.int64), np.full(2, 100), np.zeros(2, bool))
    s = ArraySchedule("two over one link", 4, 100, [step])
    t = simulate(s, AB, topology=tree, elem_bytes=8).time
    assert t == pytest.approx(A + 2 * B * 800, rel=1e-12)
    assert simulate(s, AB, elem_bytes=8).time == pytest.approx(A + B * 800, rel=1e-12)


def test_a_model_without_a_step_rule_is_refused():
    with pytest.raises(ValueError, match="model must be"):
        simulate(as_arrays(build("barrier.dissemination", 4)), object())
