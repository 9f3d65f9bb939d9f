"""Link-load drawings, the live panel's pure functions and the static twin."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from netmodels.figures import topology_panel as TP  # noqa: E402
from netmodels.figures.topology_draw import draw_link_loads, link_segments  # noqa: E402
from netmodels.topology import KaryNTree, Mesh2D, Torus2D  # noqa: E402
from netmodels.topology import contention as C  # noqa: E402


def test_case_counts_loads_like_the_checker():
    tree = KaryNTree.missing(4, 2, [5])
    loads, (src, dst), text = TP.case(tree, "prefix j", 3)
    assert loads.max() == C.max_load(tree, *C.prefix_permutation(15, 3)) == 2
    assert text == "i → i XOR 3 on the 4-ary 2-tree, leaf 5 missing, ranks renumbered: " \
        "largest link load 2 → 2 messages on one link"
    loads, _, text = TP.case(KaryNTree(4, 2), "shift s", 5)
    assert loads.max() == 1 and "contention-free" in text
    _, (src, dst), text = TP.case(KaryNTree(4, 2), "allgather step", 0, "k-prefix", 4)
    assert len(src) == 16 * 3 and "k-prefix step 0 of 4" in text and "busiest rank 3" in text
    _, _, text = TP.case(Mesh2D(4, 4), "transpose")
    assert text.startswith("transpose on the 4x4 mesh")
    with pytest.raises(ValueError, match="pattern"):
        TP.case(tree, "bitonic")


def test_parse_and_make():
    assert TP.parse_leaves(" 5, 9;12 ") == [5, 9, 12] and TP.parse_leaves("") == []
    with pytest.raises(ValueError, match="integers"):
        TP.parse_leaves("5, x")
    assert TP.make_topology("fat tree", 2, 3, [1]).nprocs == 7
    assert isinstance(TP.make_topology("torus", 3, 2), Torus2D)
    with pytest.raises(ValueError, match="kind"):
        TP.make_topology("ring", 2, 2)


@pytest.mark.parametrize("topo", [KaryNTree.missing(2, 3, [4]), Mesh2D(3, 2), Torus2D(3, 3)], ids=repr)
def test_drawing_has_one_segment_per_existing_link(topo):
    ids, segs = link_segments(topo)
    want = topo.nlinks if isinstance(topo, KaryNTree) else int(topo.used_links().sum())
    assert len(ids) == len(segs) == want
    fig, ax = plt.subplots()
    loads, top = topo.link_loads(*C.cyclic_shift(topo.nprocs, 1))
    lc = draw_link_loads(ax, topo, loads)
    assert len(lc.get_segments()) == want and str(top) in ax.get_title()
    plt.close(fig)


def test_static_twin_frames_match_the_topology_code():
    fig = TP.topology_spec().static()
    assert fig.n_frames == 2 * 2 * 15
    assert [p["labels"] for p in fig.spec["params"][:2]] == [["prefix j", "shift s"], ["none", "leaf 5"]]
    frame = fig.frame(pattern=0, missing=1, j=2)                     # j index 2: XOR 3, leaf 5 missing
    z = np.array(next(iter(frame.values())), dtype=float).reshape(4, 16)
    loads, top = KaryNTree.missing(4, 2, [5]).link_loads(*C.prefix_permutation(15, 3))
    np.testing.assert_array_equal(z, loads.reshape(4, 16))
    assert f"largest link load {top}" in fig.readout(pattern=0, missing=1, j=2)


def test_panel_redraws_and_reports_bad_input():
    panel = TP.topology_spec().live()
    status, image = panel.children[-1], panel.children[-2]
    assert "largest link load 1" in status.value
    missing = panel.children[1].children[0]
    missing.value = "5"
    assert "leaf 5 missing" in status.value and image.value[:4] == b"\x89PNG"
    missing.value = "5, x"
    assert "<b>missing leaves must be integers" in status.value
