"""netmodels.figures.models_panel: one algorithm under PRAM, BSP, LogP and α-β."""

import json
import math

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from netmodels.figures import models_panel as mp  # noqa: E402
from netmodels.models import bsp, logp, logp_barriers  # noqa: E402
from netmodels.models.alphabeta import AlphaBeta  # noqa: E402
from tests.mpirun import ROOT  # noqa: E402

US = 1e-6
M = mp.Machine(bsp.BSP(1e-9, 10 * US), logp.LogP(2 * US, 0.5 * US, 1 * US, 2), AlphaBeta(1.5 * US, 1e-10))


@pytest.mark.parametrize("P", [2, 4, 16, 64])
def test_columns_equal_closed_forms_computed_apart(P):
    R = int(math.log2(P))
    a, b = M.alphabeta.alpha, M.alphabeta.beta * 8               # β per float64 element
    N = 64 * P
    d = mp.model_costs("dissemination barrier", P, N, M)
    assert d["PRAM steps"] == R
    assert d["BSP"] == pytest.approx(R * M.bsp.l)                # words: empty messages cost 0
    assert d["LogP"] == pytest.approx(logp_barriers.barrier_time("dissemination", M.logp.with_P(P)))
    assert d[mp.STANDARD] == pytest.approx(R * 2 * a)                  # one send + one receive per step
    r = mp.model_costs("recursive doubling allreduce", P, N, M)
    assert r["BSP"] == pytest.approx(R * (M.bsp.g * N + M.bsp.l))
    assert r[mp.STANDARD] == pytest.approx(R * (2 * a + b * N))
    assert r["LogP"] == pytest.approx(d["LogP"])                 # LogP does not see sizes
    f = mp.model_costs("flat broadcast", P, N, M)
    assert f["BSP"] == pytest.approx((P - 1) * N * M.bsp.g + M.bsp.l)
    assert f[mp.STANDARD] == pytest.approx((P - 1) * a + b * N)       # links overlap: f(L) = 1


def test_reference_machine_comes_from_the_three_benchmarks():
    data = {k: json.loads((ROOT / "book" / "data" / f"{k}_reference.json").read_text())
            for k in ("bsp", "logp", "pingpong")}
    m = mp.machine_from_reference(data["bsp"], data["logp"], data["pingpong"])
    assert m.bsp.g == max(data["bsp"]["fit_min"]["g_s"], 0) and m.bsp.unit == "words"
    from netmodels.models.logp_fit import fit_results    # the one LogP fit, as the LogP chapter's

    lp = fit_results(data["logp"]["results"], data["logp"]["parameters"]["n"], "min_s")
    assert (m.logp.L, m.logp.o_s, m.logp.o_r, m.logp.g) == (max(lp.L, 0.0), lp.o_s, lp.o_r, lp.g)
    assert m.alphabeta.alpha == data["pingpong"]["fit"]["alpha_beta"]["alpha_s"]


def test_static_figure_frames_equal_the_model_costs():
    fig = mp.models_spec(M, P=16, N=4096).static()
    names = list(bsp.COMPARED)
    rng = np.random.default_rng(3)
    for _ in range(6):
        ia, iN, iP = (int(rng.integers(n)) for n in (len(names), len(mp.N_VALUES), len(mp.P_AXIS)))
        frame = fig.frame(algorithm=ia, N=iN, P=iP)
        P, N = int(mp.P_AXIS[iP]), int(mp.N_VALUES[iN])
        want = mp.model_costs(names[ia], P, N, M)
        for m in mp.MODELS:
            assert frame[f"{m} at P"][1][0] == pytest.approx(max(want[m], 1e-9) / US, rel=1e-3)
        assert names[ia] in fig.readout(algorithm=ia, N=iN, P=iP)


def test_draw_and_panel():
    ax = Figure().add_subplot()
    mp.draw_models(ax, "ring allreduce", 8, 1000, M)
    assert "PRAM 14 steps" in ax.get_title()
    panel = mp.models_spec(M, "binomial broadcast", 8, 100).live()
    (alg, _, _), image = panel.children[0].children, panel.children[1]   # algorithm, P, n
    before = image.value
    alg.value = "two-phase broadcast"
    assert image.value != before and image.value[:4] == b"\x89PNG"


def test_bad_input():
    with pytest.raises(ValueError, match="machine must be"):
        mp.model_costs("ring allreduce", 4, 4, "fast")
    with pytest.raises(ValueError, match="unit 'words'"):
        mp.Machine(bsp.BSP(1, 1, "messages"), M.logp, M.alphabeta)
    with pytest.raises(ValueError, match="algorithm must be"):
        mp.model_costs("bcast", 4, 4, M)


def test_columns_are_the_tables_models_under_their_own_semantics():
    from netmodels.models import table

    assert mp.MODELS[:2] == (table.get("bsp").label, table.get("logp").label)
    assert (M.bsp.semantics, M.logp.semantics) == (table.get("bsp").semantics, table.get("logp").semantics)


def test_lop_simulated_prices_rounds_as_the_lop_model_does():
    from netmodels.algorithms import barriers
    from netmodels.models import lop, machines
    from netmodels.simulate import simulate

    rtt, ov = machines.LOP_RDMAW_RTT_MIN, machines.LOP_RDMAW_OS

    def cost(s):
        return simulate(s, lop.LoP(rtt, ov)).time

    for P, n in ((64, 1), (64, 3), (27, 2), (10, 4)):
        assert cost(barriers.nway_dissemination(P, n=n)) == pytest.approx(lop.nway_barrier_time(P, n, rtt, ov))
    t1 = lop.t_one_to_n(1, rtt, ov)
    assert cost(barriers.central_counter(8)) == pytest.approx(t1 + lop.t_one_to_n(7, rtt, ov))
    assert cost(barriers.binomial(16)) == pytest.approx(8 * t1)
