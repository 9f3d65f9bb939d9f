"""netmodels.figures.interactive: the precomputed figures of the static book.

The stored frames are checked against the model recomputed independently (AlphaBeta),
at random slider positions; the browser side is tested in test_browser.py.
"""

import json

import numpy as np
import pytest

from netmodels import AlphaBeta
from netmodels.models import machines
from netmodels.figures import interactive as ia


def line_figure(**kw):
    return ia.slider_figure(
        lambda x, a, b: {"line": a + b * x, "const": np.full_like(x, a), "dot": ([b], [a])},
        np.linspace(0, 1, 5), {"a": [1.0, 2.0, 3.0], "b": ia.Param([0.5, 1.5], "slope", "s", scale=2)}, **kw)


def test_frames_hold_the_model_at_every_slider_position():
    refs = [machines.LSDYNA_100MBIT, machines.LSDYNA_10MBIT]
    fig = ia.alpha_beta_figure(refs)
    params = fig.spec["params"]
    rng = np.random.default_rng(1)
    alphas = ia.with_values(ia.grid(1e-7, 1e-2, 11), [r.alpha for r in refs])
    bws = ia.with_values(ia.grid(1e5, 1e11, 13), [r.bandwidth for r in refs])
    sizes = ia.with_values(ia.grid(1, 1e8, 17), [1266.0])
    assert [len(p["labels"]) for p in params] == [len(alphas), len(bws), len(sizes)]
    x = np.logspace(0, 8, 33)
    for _ in range(25):
        i, j, k = (int(rng.integers(len(v))) for v in (alphas, bws, sizes))
        model = AlphaBeta.from_latency_bandwidth(alphas[i], bws[j])
        frame = fig.frame(alpha=i, bandwidth=j, size=k)
        np.testing.assert_allclose(frame["T(n) = α + βn"][1], model.time(x) * 1e6, rtol=1e-3)
        np.testing.assert_allclose(frame["message n"][1], [model.time(sizes[k]) * 1e6], rtol=1e-3)
        np.testing.assert_allclose(frame["n½ = α/β"][0], [model.half_performance_length] * 2, rtol=1e-3)
        np.testing.assert_allclose(frame[refs[1].name][1], refs[1].time(x) * 1e6, rtol=1e-3)


def test_sliders_start_at_the_papers_example():
    fig = ia.alpha_beta_figure([machines.LSDYNA_100MBIT])
    labels = {p["name"]: p["labels"][p["initial"]] for p in fig.spec["params"]}
    assert labels == {"alpha": "100 µs", "bandwidth": "1.75 MB/s", "size": "1,266 B"}


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
