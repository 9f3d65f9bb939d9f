"""How the book's figures label their axes and say what they show.

Static twins (Plotly, :mod:`netmodels.figures.interactive`): plain numbers on the ticks
(1,000, never 1k), a log axis labelled at its powers of ten only, a heatmap's first and last
rows drawn whole and named.  Live views (matplotlib, :func:`netmodels.figures.panel.log_ticks`):
no label on a minor tick.  And the lines under the figures the chapters promise.
"""

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402

from netmodels.figures import interactive as ia  # noqa: E402
from netmodels.figures import nbl_plots, topology_panel  # noqa: E402
from netmodels.figures.panel import log_ticks  # noqa: E402
from netmodels.models import machines  # noqa: E402


def _curves(x, y_of_x, log=True):
    return ia.slider_figure(lambda x, a: {"y": a * y_of_x(x)}, x, {"a": [1.0, 2.0]}, log_x=log, log_y=log)


def test_a_log_axis_over_decades_is_labelled_at_its_powers_of_ten_in_plain_numbers():
    fig = _curves(np.geomspace(1, 1e5, 20), lambda x: 10 * x)
    for axis in (fig.spec["layout"]["xaxis"], fig.spec["layout"]["yaxis"]):
        assert axis["dtick"] == 1                             # no 2 and 5 between the decades
        assert axis["exponentformat"] == "none" and axis["separatethousands"]   # 10,000, not 10k


def test_a_log_axis_within_a_decade_is_labelled_at_1_2_5():
    fig = _curves(np.linspace(150, 700, 12), lambda x: x)
    axis = fig.spec["layout"]["xaxis"]
    assert axis["tickvals"] == [200, 500] and axis["ticktext"] == ["200", "500"]


def test_far_from_one_the_ticks_are_powers_of_ten():
    fig = _curves(np.geomspace(1e-9, 1e-6, 10), lambda x: x)
    assert fig.spec["layout"]["xaxis"]["exponentformat"] == "power"


def test_an_axis_that_sets_its_own_ticks_keeps_them():
    fig = ia.slider_figure(lambda x, a: a * x, np.geomspace(1, 1e4, 9), {"a": [1.0]}, log_x=True,
                           layout={"xaxis": {"dtick": "D2"}})
    assert fig.spec["layout"]["xaxis"]["dtick"] == "D2" and "exponentformat" not in fig.spec["layout"]["xaxis"]


def test_the_nbl_time_axis_reads_plain_milliseconds():
    axis = nbl_plots.static_curves().spec["layout"]["yaxis"]
    assert axis["exponentformat"] == "none" and axis["dtick"] == 1


def test_a_heatmap_shows_its_first_and_last_rows_whole_and_names_them():
    layout = topology_panel.topology_spec(k=4, n=2).static().spec["layout"]
    assert layout["yaxis"]["range"] == [-0.5, 3.5] and layout["xaxis"]["range"] == [-0.5, 15.5]
    assert layout["yaxis"]["tickvals"] == [0, 1, 2, 3]
    assert layout["yaxis"]["ticktext"] == ["up, level 0", "up, level 1", "down, level 0", "down, level 1"]
    assert layout["yaxis"]["automargin"]
    trace = topology_panel.topology_spec(k=4, n=2).static().spec["traces"][0]["style"]
    assert trace["colorbar"]["dtick"] == 1                    # message counts: 0, 1, 2, not 0.5
    regime = nbl_plots.static_regime_map().spec["layout"]["yaxis"]["range"]
    P = np.log10([w * h for w, h in nbl_plots.MAP_MESHES])
    assert regime == pytest.approx([P[0] - (P[1] - P[0]) / 2, P[-1] + (P[-1] - P[-2]) / 2], abs=1e-5)


@pytest.mark.parametrize("lo,hi", [(300, 2000), (1, 1e4), (0.02, 0.5)])
def test_matplotlib_log_axes_label_no_minor_tick(lo, hi):
    fig = Figure()
    ax = fig.add_subplot()
    ax.plot([lo, hi], [lo, hi])
    ax.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(lo, hi))
    log_ticks(ax)
    fig.canvas.draw()
    for axis in (ax.xaxis, ax.yaxis):
        assert isinstance(axis.get_minor_formatter(), NullFormatter)
        labels = [t.get_text() for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
        assert len(labels) >= 2, labels                      # still readable within a decade
        assert all("×" not in t and "$" not in t for t in labels), labels


def test_the_alpha_beta_figure_says_which_term_dominates_in_both_views():
    from netmodels.figures.widgets import alpha_beta_spec

    refs = [machines.LSDYNA_100MBIT, machines.LSDYNA_10MBIT]
    static = alpha_beta_spec(refs).static()
    start = {p["name"]: p["initial"] for p in static.spec["params"]}
    assert static.readout(**start) == "latency share 12 % → bandwidth (βn) dominates"   # 1266 B, 100 Mbit
    status = alpha_beta_spec(refs).live().children[2].value
    assert "latency share 12 % → bandwidth (βn) dominates" in status and "823.4 µs" in status


def test_the_models_figure_names_the_unit_of_n_once():
    from netmodels.figures import models_panel as mp

    here = mp.machine_from_reference(*(machines_reference(k) for k in ("bsp", "logp", "pingpong")))
    params = {p["name"]: p for p in mp.models_spec(here).static().spec["params"]}
    assert params["N"]["label"] == "N (elements)"
    assert params["N"]["labels"][0] == "1"                   # not "1 elements"


def machines_reference(kind):
    import json
    from pathlib import Path

    return json.loads((Path(__file__).resolve().parent.parent / "book" / "data" / f"{kind}_reference.json").read_text())
