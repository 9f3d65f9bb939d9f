"""Two-level α-β model: closed forms against the costed schedules, the paper's Table 3 and
"Analysis of test results" numbers."""

import itertools

import numpy as np
import pytest

from netmodels.algorithms import registry
from netmodels.models import machines, twolevel
from netmodels.models.alphabeta import AlphaBeta
from netmodels.simulate import simulate

US, MB = machines.US, machines.MB


@pytest.mark.parametrize("shared_channel", [True, False])
@pytest.mark.parametrize("pack", [0.0, 5e-9])
def test_closed_forms_equal_the_costed_schedules(shared_channel, pack):
    model = twolevel.origin2000(pack=pack, shared_channel=shared_channel)
    for n, c, m in itertools.product(range(1, 5), range(1, 5), (0, 1, 1266, 10**5)):
        std, ml = twolevel.alltoall_times(n, c, m, model)
        direct, multilevel = (registry.build(f"alltoall.{a}", n * c, m, nodes=c).to_schedule()
                              for a in ("direct", "multilevel"))
        assert std == pytest.approx(simulate(direct, model, elem_bytes=1).time)
        assert ml == pytest.approx(simulate(multilevel, model, elem_bytes=1).time)


def test_one_message_costs_its_alpha_beta_time():
    model = twolevel.origin2000()
    two_nodes = registry.build("alltoall.pairwise", 2, 1000, nodes=1).to_schedule()
    one_node = registry.build("alltoall.pairwise", 2, 1000, nodes=2).to_schedule()
    assert simulate(two_nodes, model, elem_bytes=1).time == pytest.approx(300 * US + 1000 / (2.5 * MB))
    assert simulate(one_node, model, elem_bytes=1).time == pytest.approx(12.5 * US + 1000 / (15 * MB))
    assert simulate(one_node, model).time == pytest.approx(
        12.5 * US + 8000 / (15 * MB))


def test_multilevel_saves_latency_not_bandwidth():
    model = twolevel.origin2000()
    n, c = 4, 4
    small = twolevel.alltoall_times(n, c, 1, model)
    large = twolevel.alltoall_times(n, c, 10**7, model)
    assert small[1] < small[0] / 10          # 192 inter-node latencies in a row become 12
    assert large[1] > large[0]               # same bytes through the channel, plus the hops inside
    m = twolevel.crossover(n, c, model)
    std, ml = twolevel.alltoall_times(n, c, np.array([0.9 * m, 1.1 * m]), model)
    assert std[0] > ml[0] and std[1] < ml[1]     # multilevel faster below m, slower above


def test_megabit_reading_divides_bandwidth_by_eight():
    mb, mbit = twolevel.origin2000(), twolevel.origin2000(megabits=True)
    assert mb.inter.bandwidth == pytest.approx(2.5 * MB)
    assert mbit.inter.bandwidth * 8 == pytest.approx(2.5 * MB)
    assert mbit.intra.bandwidth * 8 == pytest.approx(15 * MB)


def test_table3_as_printed():
    rows = {r["p"]: r for r in twolevel.table3()}
    for p, printed in machines.LSDYNA_TABLE3_PRINTED_GAIN_PERCENT.items():
        assert round(100 * rows[p]["gain"], 1) == printed
    a = machines.LSDYNA_ANALYSIS
    assert round(rows[12]["speedup"], 2) == a["speedup_1_to_12"]
    assert round(100 * rows[12]["efficiency"]) == a["useful_percent"]
    assert round(100 * (1 - rows[12]["efficiency"])) == a["lost_percent"]
    # "a speedup of 4%" and "a reduction of 4% in total runtime": 3.82 % and 3.68 %
    assert round(100 * rows[12]["gain"], 2) == 3.82 and round(100 * rows[12]["reduction"], 2) == 3.68
    assert round(100 * rows[12]["gain"]) == round(100 * rows[12]["reduction"]) == a["claimed_gain_percent"]


@pytest.mark.parametrize("call, message", [
    (lambda: twolevel.alltoall_times(0, 2, 1, twolevel.origin2000()), "n"),
    (lambda: twolevel.alltoall_times(2, 0, 1, twolevel.origin2000()), "c"),
    (lambda: twolevel.alltoall_times(2, 2, -1, twolevel.origin2000()), "nbytes"),
    (lambda: twolevel.TwoLevel(machines.ORIGIN2000_INTRA, machines.ORIGIN2000_INTER, pack=-1), "pack"),
    (lambda: twolevel.TwoLevel(machines.ORIGIN2000_INTRA, 3.0), "inter"),
])
def test_bad_input_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_panel_summary_and_static_twin():
    from netmodels.figures import multilevel_panel as mp
    tl = mp.model(12.5 * US, 15 * MB, 300 * US, 2.5 * MB)
    assert tl.intra.alpha == machines.ORIGIN2000_INTRA.alpha
    text = mp.summary(4, 4, 1266, tl)
    assert "standard 240 messages (192 between nodes, 48 inside)" in text
    assert "multilevel 132 (12 between, 120 inside)" in text
    fig = mp.multilevel_spec(twolevel.origin2000()).static()
    assert fig.n_frames == 4 * 4 * 4 * 4 and fig.html == mp.multilevel_spec(twolevel.origin2000()).static().html


def test_panel_draws_and_builds():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from netmodels.figures import multilevel_panel as mp
    fig, ax = plt.subplots()
    mp.draw(ax, 2, 6, 1266, twolevel.origin2000())
    assert len(ax.get_lines()) == 3
    plt.close(fig)
    panel = mp.multilevel_spec(n=2, c=3).live()
    assert len(panel.children) == 6


def test_emulated_nodes_add_the_delay_per_message_between_nodes():
    here = AlphaBeta(5 * US, 1e-9)
    model = twolevel.emulated(here, 500 * US)
    one = registry.build("alltoall.direct", 2, 100, nodes=1).to_schedule()   # two nodes of one rank
    assert simulate(one, model).time == pytest.approx(505 * US + 800e-9)
    four = registry.build("alltoall.direct", 4, 1, nodes=2).to_schedule()    # 2 messages out, 1 inside
    assert simulate(four, model).time == pytest.approx(2 * 505 * US + 5 * US + 3 * 8e-9)
    with pytest.raises(ValueError, match="delay"):
        twolevel.emulated(here, -1)
