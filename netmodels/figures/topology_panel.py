"""Link loads on a fat tree, mesh or torus: a live ipywidgets panel and its static twin.

:func:`case` computes one picture's data (a pure function of the controls, tested
without widgets); :func:`topology_spec` declares the figure once
(:mod:`netmodels.figures.panel`): its live panel (``topology_spec().live()``) draws the
topology with :func:`netmodels.figures.topology_draw.draw_link_loads`, its static twin for
the HTML book (``.static()``) the loads of each level as a map.
"""

from __future__ import annotations

import numpy as np

from ..algorithms import registry
from ..topology import KaryNTree, Mesh2D, Torus2D
from ..topology import contention as C
from .panel import Control, PanelSpec

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


def describe(topology, what: str, top: int, deg: int) -> str:
    """One line: the pattern on the topology, its largest link load and the verdict."""
    if isinstance(topology, KaryNTree):
        missing = sorted(set(range(topology.nleaves)) - set(int(v) for v in topology.leaves))
        where = ("full tree" if not missing else
                 f"{'leaf' if len(missing) == 1 else 'leaves'} {', '.join(map(str, missing))} missing, "
                 "ranks renumbered")
        place = f"the {topology.k}-ary {topology.n}-tree, {where}"
    else:
        place = f"the {topology.width}x{topology.height} {'torus' if isinstance(topology, Torus2D) else 'mesh'}"
    busiest = f", busiest rank {deg}" if deg > 1 else ""
    verdict = "contention-free" if top <= max(deg, 1) else f"{top} messages on one link"
    return f"{what} on {place}: largest link load {top}{busiest} → {verdict}"


def case(topology, pattern: str, j: int = 1, algorithm: str = "prefix", k: int | None = None):
    """``(loads, pairs, text)`` for one pattern on ``topology``.

    ``j``: the prefix j, the shift s, the random seed, or the allgather step (0-based) of
    the registered allgather ``algorithm`` (with its option ``k``, None: its default).
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
        s = registry.build(f"allgather.{algorithm}", p, 1, **({} if k is None else {"k": k})).to_schedule()
        data = [t for t in range(s.nsteps) if t not in s.meta["barrier_steps"]]
        t = data[min(max(j, 0), len(data) - 1)] if data else None
        src, dst = C.step_pairs(s, t) if t is not None else (np.zeros(0, int), np.zeros(0, int))
        what = f"{algorithm} step {data.index(t) if t is not None else 0} of {len(data)}"
    else:
        raise ValueError(f"pattern must be one of {PATTERNS}, got {pattern!r}")
    keep = src != dst
    src, dst = src[keep], dst[keep]
    loads, top = topology.link_loads(src, dst)
    return loads, (src, dst), describe(topology, what, top, C.max_degree(src, dst))


def _topology(topology, k, n, missing, **_):
    return make_topology(topology, k, n, parse_leaves(missing) if topology == "fat tree" else [])


class LinkLoadView:
    """The live drawing: the topology with its links coloured by their load."""

    def __init__(self, spec):
        from matplotlib.figure import Figure

        self.fig = Figure(figsize=spec.figsize)

    def show(self, values):
        from .panel import png
        from .topology_draw import draw_link_loads

        topo = _topology(**values)
        loads, _, text = case(topo, values["pattern"], values["j"], values["algorithm"])
        self.fig.clear()
        draw_link_loads(self.fig.add_subplot(), topo, loads, title=f"{topo!r}")
        self.fig.tight_layout()
        return png(self.fig), text


def topology_spec(k: int = 4, n: int = 2, absent: int = 5) -> PanelSpec:
    """Link loads of a pattern on a fat tree, mesh or torus.

    Live: the topology (k-ary n-tree with missing leaves, or a k x n mesh or torus), any
    pattern of :data:`PATTERNS` (the allgather steps of every registered allgather), j.
    Static: messages per link of the k-ary n-tree (rows: the up links of each level, then
    the down links, each row named on the axis; columns: link position) for the prefix permutations and cyclic shifts, on the full tree and
    with leaf ``absent`` missing (ranks renumbered)."""
    p = k ** n

    def rows(x, y, pattern, j, algorithm, **values):
        loads, _, _ = case(_topology(**values), pattern, j, algorithm)
        return loads.reshape(2 * n, p).astype(float)

    def readout(pattern, j, algorithm, **values):
        return case(_topology(**values), pattern, j, algorithm)[2]

    return PanelSpec(
        title=f"Messages per link, {k}-ary {n}-tree", kind="heatmap", data=rows,
        x=np.arange(p, dtype=float), y=np.arange(2 * n, dtype=float),
        controls=(
            Control("topology", "topology", "fat tree", options=["fat tree", "mesh", "torus"],
                    help="the network: a k-ary n-tree, or a width × height mesh or torus"),
            Control("k", "k / width", k, span=(2, 8), integer=True,
                    help="fat tree: switch arity k (k^n leaves); mesh, torus: width"),
            Control("n", "n / height", n, span=(1, 4), integer=True,
                    help="fat tree: number of levels n; mesh, torus: height"),
            Control("pattern", "pattern", "prefix j", options=PATTERNS, values=["prefix j", "shift s"],
                    help="which messages are sent: the counts are those of this traffic pattern"),
            Control("missing", "missing leaves", "", widget="text", values=["", str(absent)],
                    names={"": "none", str(absent): f"leaf {absent}"}, kw={"placeholder": "e.g. 5, 9"},
                    help="leaves with no rank (a node down), as numbers separated by commas"),
            Control("algorithm", "algorithm", "prefix", options=registry.names("allgather", short=True),
                    help="the allgather whose step the pattern 'allgather step' sends"),
            Control("j", "j / s / step", 1, span=(0, 63), integer=True, fmt=".0f",
                    values=np.arange(1, p, dtype=float),
                    help="the pattern's number: prefix length j, shift s, or the allgather's step"),
        ),
        rows=(("topology", "k", "n"), ("missing", "pattern", "algorithm"), ("j",)), figsize=(9, 4.2),
        xlabel="link position in its level", ylabel="links", zlabel="messages",
        layout={"yaxis": {"tickmode": "array", "tickvals": list(range(2 * n)),
                          "ticktext": [f"{way}, level {level}" for way in ("up", "down") for level in range(n)]}},
        readout=readout, fig_id="topology-link-loads", view=LinkLoadView)
