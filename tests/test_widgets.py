import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

from netmodels.models import machines  # noqa: E402
from netmodels.figures.widgets import alpha_beta_panel, describe, draw_alpha_beta  # noqa: E402


def test_describe_names_the_dominant_term():
    net = machines.LSDYNA_100MBIT            # n1/2 = 175 B
    assert "latency (α) dominates" in describe(net, 100)
    assert "bandwidth (βn) dominates" in describe(net, 1266)
    assert "823.4 µs" in describe(net, 1266)


def test_draw_returns_the_model_it_draws():
    ax = Figure().add_subplot()
    model = draw_alpha_beta(ax, 100, 1.75, 1266, references=[machines.LSDYNA_10MBIT])
    assert model.half_performance_length == machines.LSDYNA_100MBIT.half_performance_length
    assert "n½ = 175 B" in ax.get_title()


def test_panel_redraws_when_a_slider_moves():
    panel = alpha_beta_panel()
    sliders, image = panel.children[0].children, panel.children[1]
    before = image.value
    sliders[0].value = 1.0                   # α from 100 µs to 1 µs
    assert image.value != before and image.value[:4] == b"\x89PNG"
