"""netmodels.figures.interactive: the precomputed figures of the static book.

The frames of the chapters' figures are checked against their models in the figures'
tests (test_widgets.py for α-β); the browser side is tested in test_browser.py.
"""

import json

import numpy as np
import pytest

from netmodels.figures import interactive as ia


def line_figure(**kw):
    return ia.slider_figure(
        lambda x, a, b: {"line": a + b * x, "const": np.full_like(x, a), "dot": ([b], [a])},
        np.linspace(0, 1, 5), {"a": [1.0, 2.0, 3.0], "b": ia.Param([0.5, 1.5], "slope", "s", scale=2)}, **kw)


def test_named_values_are_shown_by_name():
    fig = ia.slider_figure(lambda x, mode: x * (mode + 1), [0.0, 1.0],
                           {"mode": ia.Param([0, 1, 2], "mode", names=("one", "two", "three"), initial=1)})
    assert fig.spec["params"][0]["labels"] == ["one", "two", "three"] and fig.spec["params"][0]["initial"] == 1
    assert fig.frame(mode=2)["y"] == (fig.spec["x"], [0.0, 3.0])
    with pytest.raises(ValueError, match="names must be one str per value"):
        ia.Param([0, 1], names=("one",))


def test_each_trace_is_stored_only_along_the_sliders_it_depends_on():
    fig = line_figure()
    deps = {t["name"]: tab["deps"] for t, tab in zip(fig.spec["traces"], fig.spec["tables"])}
    assert deps == {"line": [0, 1], "const": [0], "dot": [0, 1]}
    assert fig.frame(a=2, b=1)["line"] == (fig.spec["x"], [3.0, 3.375, 3.75, 4.125, 4.5])
    assert fig.frame(a=0, b=1)["dot"] == ([1.5], [1.0])
    assert fig.spec["params"][1]["labels"] == ["1 s", "3 s"]      # displayed with scale 2


def test_output_is_deterministic_and_safe_html():
    a, b = line_figure(title="</script><b>x</b>"), line_figure(title="</script><b>x</b>")
    assert a.html == b.html and a.fig_id == b.fig_id and a.fig_id.startswith("nm-")
    payload = a.html.split('class="nm-interactive-spec">', 1)[1].rsplit("</script>", 1)[0]
    assert "</" not in payload and json.loads(payload)["layout"]["title"]["text"] == "</script><b>x</b>"
    assert "&lt;/script&gt;" in a.html.split("<script", 1)[0]     # the fallback text is escaped
    assert line_figure(fig_id="fixed-id").html.startswith('<div class="nm-interactive" id="fixed-id">')
    assert "sliders a, b" in repr(a)


def test_readout_and_heatmap_categories():
    fig = ia.slider_heatmap(lambda x, y, c: (np.add.outer(y, x) > c).astype(float), [0, 1, 2], [0, 1],
                            {"c": [0.5, 2.5]}, categories=["low", "high"], zlabel="regime",
                            readout=lambda c: f"threshold {c}")
    assert fig.frame(c=0)["regime"] == [[0.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    assert fig.frame(c=1)["regime"] == [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    assert fig.readout(c=1) == "threshold 2.5"
    style = fig.spec["traces"][0]["style"]
    assert style["type"] == "heatmap" and style["colorbar"]["ticktext"] == ["low", "high"]


@pytest.mark.parametrize("kwargs, message", [
    ({"params": {}}, "params must be a non-empty mapping"),
    ({"params": {"not a name": [1]}}, "Python identifiers"),
    ({"params": {"a": []}}, "non-empty 1-D"),
    ({"params": {"a": [1, float("nan")]}}, "finite"),
    ({"params": {"a": list(range(100)), "b": list(range(100))}}, "MAX_FRAMES"),
    ({"x": [1.0]}, "at least 2"),
    ({"f": lambda x, a: x[:1]}, "shape of x"),
    ({"f": lambda x, a: {"t%d" % a: x}}, "same traces"),
    ({"fig_id": "1bad"}, "fig_id"),
    ({"digits": 1}, "digits"),
    ({"y_scale": 0}, "y_scale"),
    ({"styles": {"nope": {}}}, "unknown traces"),
    ({"layout": {"no_such_property": 1}}, "no_such_property"),
])
def test_bad_arguments_name_the_parameter(kwargs, message):
    args = {"f": lambda x, a: x * a, "x": [0.0, 1.0], "params": {"a": [1.0, 2.0]}}
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        ia.slider_figure(args.pop("f"), args.pop("x"), args.pop("params"), **args)


def test_size_limit():
    with pytest.raises(ValueError, match="MAX_NUMBERS"):
        ia.slider_figure(lambda x, a: x * a, np.linspace(0, 1, 1000), {"a": np.arange(1.0, 100.0)})


def test_nice_labels():
    assert [ia.nice(v) for v in (0.1, 0.31623, 1.75, 1266, 31622.7, 1e10, 0)] == \
        ["0.1", "0.316", "1.75", "1,266", "31,623", "1e+10", "0"]
