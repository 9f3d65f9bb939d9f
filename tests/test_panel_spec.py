"""netmodels.figures.panel: one spec per figure, made into a live panel and a static twin."""

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from netmodels.figures import interactive as ia  # noqa: E402
from netmodels.figures.panel import Control, PanelSpec  # noqa: E402

US = 1e-6
X = np.linspace(1.0, 4.0, 4)


def line(x, alpha, shape, n, label="held"):
    """alpha (s) times a power of x: 1 (flat), x (linear) or x^2 (square), n copies."""
    power = {"flat": 0, "linear": 1, "square": 2}[shape]
    return {"y": n * alpha * x ** power, "dot": ([x[0]], [alpha])}


def spec(**kw):
    controls = (
        Control("alpha", "α", 20 * US, unit="µs", scale=1 / US, log=True, span=(1e-7, 1e-3),
                values=[10 * US, 20 * US, 40 * US]),
        Control("shape", "shape", "linear", options=["flat", "linear", "square"], values=["flat", "square", "linear"],
                names={"flat": "constant", "linear": "∝ x", "square": "∝ x²"}),
        Control("n", "copies", 2, span=(1, 8), integer=True, values=[1, 2, 3]),
        Control("label", "label", "held", widget="text"),
    )
    return PanelSpec(title="test", controls=controls, data=line, x=X, y_scale=1 / US,
                     readout=lambda alpha, shape, n, label: f"{shape} x{n} at {alpha / US:.0f} µs ({label})",
                     rows=(("alpha", "shape"), ("n",), ("label",)), **kw)


def test_static_twin_is_the_figure_written_by_hand():
    by_spec = spec().static()
    shapes = ["flat", "square", "linear"]
    by_hand = ia.slider_figure(
        lambda x, alpha, shape, n: line(x, alpha, shapes[int(shape)], int(n)), X,
        params={"alpha": ia.Param([10 * US, 20 * US, 40 * US], "α", "µs", scale=1 / US, initial=20 * US),
                "shape": ia.Param([0, 1, 2], "shape", names=("constant", "∝ x²", "∝ x"), initial=2),
                "n": ia.Param([1, 2, 3], "copies", initial=2)},
        title="test", y_scale=1 / US, digits=4,
        readout=lambda alpha, shape, n: f"{shapes[int(shape)]} x{int(n)} at {alpha / US:.0f} µs (held)")
    assert by_spec.html == by_hand.html
    assert by_spec.frame(alpha=2, shape=1, n=2)["y"][1] == [3 * 40 * v ** 2 for v in X]
    assert by_spec.readout(alpha=0, shape=0, n=0) == "flat x1 at 10 µs (held)"


def test_live_panel_passes_si_values_and_names():
    seen = []

    def data(x, **values):
        seen.append(values)
        return line(x, **values)

    panel = PanelSpec(title="t", controls=spec().controls, data=data, x=X, rows=spec().rows).live()
    (alpha, shape), n, label = panel.children[0].children, panel.children[1], panel.children[2]
    image, status = panel.children[3], panel.children[4]
    assert (type(alpha).__name__, type(shape).__name__, type(n).__name__, type(label).__name__) == \
        ("FloatLogSlider", "Dropdown", "IntSlider", "Text")
    assert alpha.value == 20 and alpha.description == "α (µs)" and (alpha.min, alpha.max) == (-1, 3)
    assert shape.label == "∝ x" and shape.value == "linear"
    assert [lab for lab, _ in shape.options] == ["constant", "∝ x", "∝ x²"]
    assert seen[-1] == {"alpha": pytest.approx(20 * US), "shape": "linear", "n": 2, "label": "held"}
    before = image.value
    shape.value, n.value, alpha.value = "square", 5, 100.0
    assert seen[-1] == {"alpha": pytest.approx(100 * US), "shape": "square", "n": 5, "label": "held"}
    assert image.value != before and image.value[:4] == b"\x89PNG" and status.value == ""


def test_readout_and_errors_go_to_the_status_line():
    def data(x, alpha, shape, n, label):
        if label == "bad":
            raise ValueError("label must not be bad")
        return line(x, alpha, shape, n)

    panel = PanelSpec(title="t", controls=spec().controls, data=data, x=X, rows=spec().rows,
                      live_readout=lambda n, **_: f"{n} copies").live()
    status = panel.children[-1]
    assert status.value == "2 copies"
    panel.children[2].value = "bad"
    assert status.value == "<b>label must not be bad</b>"


def test_live_only_and_static_only_controls():
    controls = (Control("a", "a", 1.0, span=(0.0, 2.0), values=[1.0, 2.0]),
                Control("b", "b", 3.0, span=(0.0, 4.0)),                      # live only
                Control("c", "c", 0.5, values=[0.5, 1.0], live=False))       # static only
    s = PanelSpec(title="t", controls=controls, data=lambda x, a, b, c: {"y": a * x + b * c}, x=X)
    fig = s.static()
    assert [p["name"] for p in fig.spec["params"]] == ["a", "c"]
    assert fig.frame(a=1, c=1)["y"][1] == [2 * v + 3.0 for v in X]
    panel = s.live()
    assert [w.description for w in panel.children[0].children] == ["a", "b"]


@pytest.mark.parametrize("kwargs, message", [
    ({"name": "not a name"}, "identifier"),
    ({"widget": "knob"}, "widget must be"),
    ({"span": (2.0, 1.0)}, "span"),
    ({"span": (0.0, 1.0), "log": True}, "span"),
    ({"span": None}, "needs options, span or values"),
])
def test_bad_controls_name_the_parameter(kwargs, message):
    args = {"name": "a", "label": "a", "default": 1.0, "span": (0.5, 2.0), **kwargs}
    with pytest.raises(ValueError, match=message):
        Control(**args)


def test_bad_specs():
    with pytest.raises(ValueError, match="kind"):
        spec(kind="bars")
    with pytest.raises(ValueError, match="unknown control .z."):
        PanelSpec(title="t", controls=spec().controls, data=line, x=X, rows=(("z",),))
    with pytest.raises(ValueError, match="unique"):
        PanelSpec(title="t", controls=spec().controls * 2, data=line, x=X)


def test_generic_drawing_of_a_map_with_categories():
    controls = (Control("t", "threshold", 0.5, span=(0.0, 3.0), values=[0.5, 2.5]),)
    s = PanelSpec(title="regimes", kind="heatmap", controls=controls, x=[0.0, 1.0, 2.0], y=[0.0, 1.0],
                  data=lambda x, y, t: (np.add.outer(y, x) > t).astype(float), categories=["low", "high"],
                  zlabel="regime")
    assert s.static().frame(t=1)["regime"] == [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    panel = s.live()
    before = panel.children[-2].value
    panel.children[0].value = 2.9
    assert panel.children[-2].value != before and panel.children[-2].value[:4] == b"\x89PNG"
