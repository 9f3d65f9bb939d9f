"""The α-β figure of chapter 1 (netmodels.figures.widgets): its spec, both views."""

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from netmodels import AlphaBeta  # noqa: E402
from netmodels.models import machines  # noqa: E402
from netmodels.figures import interactive as ia  # noqa: E402
from netmodels.figures.widgets import alpha_beta_spec, describe  # noqa: E402

REFS = [machines.LSDYNA_100MBIT, machines.LSDYNA_10MBIT]


def test_describe_names_the_dominant_term():
    net = machines.LSDYNA_100MBIT            # n1/2 = 175 B
    assert "latency (α) dominates" in describe(net, 100)
    assert "bandwidth (βn) dominates" in describe(net, 1266)
    assert "823.4 µs" in describe(net, 1266)


def test_static_frames_hold_the_model_at_every_slider_position():
    fig = alpha_beta_spec(REFS).static()
    params = fig.spec["params"]
    rng = np.random.default_rng(1)
    alphas = ia.with_values(ia.grid(1e-7, 1e-2, 11), [r.alpha for r in REFS])
    bws = ia.with_values(ia.grid(1e5, 1e11, 13), [r.bandwidth for r in REFS])
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
        np.testing.assert_allclose(frame[REFS[1].name][1], REFS[1].time(x) * 1e6, rtol=1e-3)


def test_sliders_start_at_the_papers_example_in_both_views():
    fig = alpha_beta_spec([machines.LSDYNA_100MBIT]).static()
    labels = {p["name"]: p["labels"][p["initial"]] for p in fig.spec["params"]}
    assert labels == {"alpha": "100 µs", "bandwidth": "1.75 MB/s", "size": "1,266 B"}
    sliders = alpha_beta_spec([machines.LSDYNA_100MBIT]).live().children[0].children
    assert [s.description for s in sliders] == ["α (µs)", "1/β (MB/s)", "n (B)"]
    assert [s.value for s in sliders] == pytest.approx([100, 1.75, 1266])


def test_panel_redraws_when_a_slider_moves():
    panel = alpha_beta_spec().live()
    sliders, image, status = panel.children[0].children, panel.children[1], panel.children[2]
    before = image.value
    assert "n½ = 175 B" in status.value                      # 100 µs, 1.75 MB/s
    sliders[0].value = 1.0                                   # α from 100 µs to 1 µs
    assert image.value != before and image.value[:4] == b"\x89PNG"
    assert "n½ = 2 B" in status.value                        # 1 µs x 1.75 MB/s = 1.75 B


def test_bad_references():
    with pytest.raises(ValueError, match="references must be AlphaBeta"):
        alpha_beta_spec(["ethernet"])
