"""Drawings of a topology with every directed link coloured by its load (matplotlib).

A fat tree is drawn with its leaves at the bottom and level-n switches at the top; a
mesh or torus as a grid (wrap-around links of a torus are drawn as short stubs).  The
two directions of a link are drawn side by side (up / +x / +y on the right or above);
unused links are light grey, loaded links take the colour of their load, and links
carrying more than one message are drawn thicker.
"""

from __future__ import annotations

import numpy as np

from ..topology import KaryNTree


def _position(topology, name):
    if isinstance(topology, KaryNTree):
        if name[0] == "leaf":
            return float(name[1]), 0.0
        _, level, s = name
        k = topology.k
        return (s + 0.5) * k - 0.5, float(level)
    x, y = name
    return float(x), float(y)


def link_segments(topology) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, segments)``: drawable link ids and their line segments ``[[x0, y0], [x1, y1]]``,
    each direction shifted sideways so the two directions of a link do not overlap."""
    if isinstance(topology, KaryNTree):
        ids = np.arange(topology.nlinks)
    else:
        ids = np.nonzero(topology.used_links())[0]
    segs = []
    for l in ids:
        a, b = topology.link_name(int(l))
        (x0, y0), (x1, y1) = _position(topology, a), _position(topology, b)
        if not isinstance(topology, KaryNTree) and (abs(x1 - x0) > 1 or abs(y1 - y0) > 1):
            x1, y1 = x0 + 0.35 * np.sign(x0 - x1) if x1 != x0 else x0, y0 + 0.35 * np.sign(y0 - y1) if y1 != y0 else y0
        dx, dy = x1 - x0, y1 - y0
        norm = np.hypot(dx, dy) or 1.0
        off = 0.08
        nx, ny = dy / norm * off, -dx / norm * off      # right of the direction of travel
        segs.append([[x0 + nx, y0 + ny], [x1 + nx, y1 + ny]])
    return ids, np.array(segs)


def draw_link_loads(ax, topology, loads, *, title: str = "", cmap: str = "viridis", vmax: int | None = None):
    """Draw ``topology`` on ``ax`` with links coloured by ``loads`` (array of ``nlinks``).

    Returns the ``LineCollection`` (for a colour bar)."""
    from matplotlib.collections import LineCollection
    from matplotlib import cm, colors

    loads = np.asarray(loads)
    ids, segs = link_segments(topology)
    top = max(int(vmax or 0), int(loads.max(initial=0)), 1)
    norm = colors.Normalize(vmin=0, vmax=top)
    mapper = cm.ScalarMappable(norm=norm, cmap=cmap)
    col = [mapper.to_rgba(v) if v else (0.85, 0.85, 0.85, 1.0) for v in loads[ids]]
    width = [0.6 if v == 0 else (1.6 if v == 1 else 3.2) for v in loads[ids]]
    lc = LineCollection(segs, colors=col, linewidths=width)
    ax.add_collection(lc)
    if isinstance(topology, KaryNTree):
        present = np.zeros(topology.nleaves, dtype=bool)
        present[topology.leaves] = True
        x = np.arange(topology.nleaves)
        ax.scatter(x[present], np.zeros(present.sum()), s=14, c="k", zorder=3)
        ax.scatter(x[~present], np.zeros((~present).sum()), s=30, marker="x", c="red", zorder=3,
                   label="missing leaf")
        ax.set_ylabel("level")
        ax.set_xlabel("leaf")
        ax.set_ylim(-0.4, topology.n + 0.4)
        ax.set_xlim(-1, topology.nleaves)
    else:
        r = np.arange(topology.nprocs)
        ax.scatter(r % topology.width, r // topology.width, s=14, c="k", zorder=3)
        ax.set_xlim(-0.6, topology.width - 0.4)
        ax.set_ylim(-0.6, topology.height - 0.4)
        ax.set_aspect("equal")
    mapper.set_array([])
    ax.figure.colorbar(mapper, ax=ax, label="messages on the link", fraction=0.04)
    ax.set_title(title or f"{topology!r}: largest load {int(loads.max(initial=0))}")
    return lc
