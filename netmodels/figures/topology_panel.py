"""Link loads on a fat tree, mesh or torus: a live ipywidgets panel and its static twin.

:func:`case` computes one picture's data (a pure function of the controls, tested
without widgets); :func:`topology_panel` redraws it with
:func:`netmodels.figures.topology_draw.draw_link_loads` on every change;
:func:`static_link_loads` precomputes a small family of cases for the HTML book.
"""

from __future__ import annotations

import numpy as np

from ..algorithms import allgather, registry
from ..topology import KaryNTree, Mesh2D, Torus2D
from ..topology import contention as C

PATTERNS = ("prefix j", "shift s", "transpose", "random", "allgather step")


def parse_leaves(text: str) -> list[int]:
    """``"5, 9"`` -> [5, 9] (missing leaves); empty text -> []."""
    out = []
    for part in str(text).replace(";", ",").split(","):
        part = part.strip()
        if part:
            if not part.isdigit():
                raise ValueError(f"missing leaves must be integers separated by commas, got {text!r}")
            out.append(int(part))
    return out


def make_topology(kind: str, k: int, n: int, missing=()) -> object:
    """``kind``: "fat tree" (k-ary n-tree without ``missing`` leaves), "mesh" or "torus" (k x n)."""
    if kind == "fat tree":
        return KaryNTree.missing(k, n, missing) if missing else KaryNTree(k, n)
    if kind == "mesh":
        return Mesh2D(k, n)
    if kind == "torus":
        return Torus2D(k, n)
    raise ValueError(f"kind must be 'fat tree', 'mesh' or 'torus', got {kind!r}")


def case(topology, pattern: str, j: int = 1, algorithm: str = "prefix", kparam: int | None = None):
    """``(loads, pairs, text)`` for one pattern on ``topology``.

    ``j``: the prefix j, the shift s, the random seed, or the allgather step (0-based).
    """
    p = topology.nprocs
    if pattern == "prefix j":
        src, dst = C.prefix_permutation(p, j)
        what = f"i → i XOR {j}"
    elif pattern == "shift s":
        src, dst = C.cyclic_shift(p, j)
        what = f"i → (i + {j}) mod {p}"
    elif pattern == "transpose":
        src, dst = C.transpose(p)
        what = "transpose"
    elif pattern == "random":
        src, dst = C.random_permutation(p, j)
        what = f"random permutation (seed {j})"
    elif pattern == "allgather step":
        s = registry.get(algorithm, "allgather").build(p, 1, k=kparam).to_schedule()
        data = [t for t in range(s.nsteps) if t not in s.meta["barrier_steps"]]
        t = data[min(max(j, 0), len(data) - 1)] if data else None
        src, dst = C.step_pairs(s, t) if t is not None else (np.zeros(0, int), np.zeros(0, int))
        what = f"{algorithm} step {data.index(t) if t is not None else 0} of {len(data)}"
    else:
        raise ValueError(f"pattern must be one of {PATTERNS}, got {pattern!r}")
    keep = src != dst
    src, dst = src[keep], dst[keep]
    loads, top = topology.link_loads(src, dst)
    deg = C.max_degree(src, dst)
    verdict = "contention-free" if top <= max(deg, 1) else f"contention: {top} messages on one link"
    return loads, (src, dst), f"{what}: largest link load {top}, busiest rank {deg} → {verdict}"


def draw_case(ax, kind, k, n, missing, pattern, j, algorithm="prefix", kparam=None):
    """Draw one case on ``ax``; returns the text line."""
    from .topology_draw import draw_link_loads

    topo = make_topology(kind, k, n, missing)
    loads, _, text = case(topo, pattern, j, algorithm, kparam)
    ax.clear()
    draw_link_loads(ax, topo, loads, title=f"{topo!r}")
    return text


def topology_panel():
    """Controls: topology, k and n (mesh: width and height), missing leaves, pattern, j."""
    import ipywidgets as w
    from matplotlib.figure import Figure

    from .widgets import png

    kind = w.Dropdown(options=["fat tree", "mesh", "torus"], value="fat tree", description="topology")
    k = w.IntSlider(value=4, min=2, max=8, description="k / width")
    n = w.IntSlider(value=2, min=1, max=4, description="n / height")
    missing = w.Text(value="", description="missing", placeholder="e.g. 5, 9")
    pattern = w.Dropdown(options=PATTERNS, value="prefix j", description="pattern")
    alg = w.Dropdown(options=list(registry.names("allgather", short=True)), value="prefix", description="algorithm")
    j = w.IntSlider(value=1, min=0, max=63, description="j / s / step")
    image = w.Image(format="png")
    status = w.HTML()
    fig = Figure(figsize=(9, 4.2))

    def redraw(_=None):
        fig.clear()
        ax = fig.add_subplot()
        try:
            miss = parse_leaves(missing.value) if kind.value == "fat tree" else []
            kp = None
            if registry.get(alg.value, "allgather").takes("k"):
                p = (k.value ** n.value - len(miss)) if kind.value == "fat tree" else k.value * n.value
                kp = allgather.default_k(alg.value, p)
            text = draw_case(ax, kind.value, k.value, n.value, miss, pattern.value, j.value, alg.value, kp)
            fig.tight_layout()
            image.value = png(fig)
            status.value = text
        except ValueError as err:
            status.value = f"<b>{err}</b>"

    for c in (kind, k, n, missing, pattern, alg, j):
        c.observe(redraw, names="value")
    redraw()
    return w.VBox([w.HBox([kind, k, n]), w.HBox([missing, pattern, alg]), j, image, status])


def static_link_loads(k: int = 4, n: int = 2, absent: int = 5):
    """Precomputed twin for the HTML book: link loads of a k-ary n-tree (rows: levels, up
    then down; columns: link position) for the prefix permutations and cyclic shifts,
    on the full tree and with leaf ``absent`` missing (ranks renumbered)."""
    from . import interactive as ia

    trees = [KaryNTree(k, n), KaryNTree.missing(k, n, [absent])]
    p = k ** n
    rows = np.arange(2 * n, dtype=float)

    def loads(family, tree, j):
        make = C.prefix_permutation if family == 0 else C.cyclic_shift
        src, dst = make(tree.nprocs, int(j))
        keep = src != dst
        return tree.link_loads(src[keep], dst[keep])

    def z(x, y, family, missing, j):
        l, _ = loads(int(family), trees[int(missing)], j)
        return l.reshape(2 * n, p).astype(float)

    def readout(family, missing, j):
        tree = trees[int(missing)]
        _, top = loads(int(family), tree, j)
        name = f"i → i XOR {int(j)}" if family == 0 else f"i → (i + {int(j)}) mod {tree.nprocs}"
        where = f"leaf {absent} missing, ranks renumbered" if missing else "full tree"
        verdict = "contention-free" if top <= 1 else f"{top} messages on one link"
        return f"{name} on the {k}-ary {n}-tree, {where}: largest link load {top} → {verdict}"

    return ia.slider_heatmap(
        z, np.arange(p, dtype=float), rows,
        params={"family": ia.Param([0, 1], "prefix (0) / shift (1)", fmt=".0f", initial=0),
                "missing": ia.Param([0, 1], "leaf missing", fmt=".0f", initial=0),
                "j": ia.Param(np.arange(1, p, dtype=float), "j or s", fmt=".0f", initial=1)},
        title=f"Messages per link, {k}-ary {n}-tree", xlabel="link position in its level",
        ylabel=f"rows 0..{n - 1}: up links of levels 0..{n - 1}; rows {n}..{2 * n - 1}: down links",
        zlabel="messages", readout=readout, fig_id="topology-link-loads")
