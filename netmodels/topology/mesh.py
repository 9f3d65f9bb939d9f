"""2-D meshes and tori with dimension-order (XY) routing, as on the Touchstone DELTA (seed 000).

Rank r sits at ``(x, y) = (r % W, r // W)`` (the numbering of
:mod:`netmodels.algorithms.combining`).  A message goes along x first, then along y;
on a torus each dimension takes the shorter way round (the + direction on a tie).
Every node has four outgoing directed links, id ``4 r + d`` with d = 0 (+x), 1 (-x),
2 (+y), 3 (-y); on a mesh the border links that lead nowhere are never used
(``nlinks = 4 P`` is the size of the id space).  This is the kit's one mesh router;
:func:`step_link_loads` and :func:`link_conflicts` route a schedule's messages with it,
as on the Touchstone DELTA, whose routers have independent links in both directions.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from .._check import positive_int
from ..algorithms.arrays import as_transfers
from .base import Topology

_STEP = ((1, 0), (-1, 0), (0, 1), (0, -1))


class Mesh2D(Topology):
    """W x H mesh (no wrap-around links)."""

    wrap = False

    def __init__(self, width: int, height: int):
        self.width = positive_int("width", width)
        self.height = positive_int("height", height)
        self.nprocs = self.width * self.height
        self.nlinks = 4 * self.nprocs

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.width}, {self.height})"

    def _moves(self, a, b, size):
        """Signed number of hops along one dimension from coordinate a to b."""
        d = b - a
        if self.wrap:
            d = np.where(d > size // 2, d - size, d)
            d = np.where(d < -((size - 1) // 2), d + size, d)
        return d

    def _routes(self, src, dst):
        w, h = self.width, self.height
        x0, y0, x1, y1 = src % w, src // w, dst % w, dst // w
        dx, dy = self._moves(x0, x1, w), self._moves(y0, y1, h)
        hx, hy = np.abs(dx), np.abs(dy)
        total = hx + hy
        idx = np.repeat(np.arange(src.size), total)
        t = np.arange(idx.size) - np.repeat(np.cumsum(total) - total, total)   # hop number
        along_x = t < hx[idx]
        sx, sy = np.sign(dx)[idx], np.sign(dy)[idx]
        x = np.where(along_x, (x0[idx] + sx * t) % w, x1[idx])
        y = np.where(along_x, y0[idx], (y0[idx] + sy * (t - hx[idx])) % h)
        d = np.where(along_x, np.where(sx > 0, 0, 1), np.where(sy > 0, 2, 3))
        return idx, 4 * (y * w + x) + d

    def link_name(self, link: int) -> tuple:
        """``((x, y), (x', y'))`` of a directed link (coordinates wrap on a torus)."""
        r, d = divmod(int(link), 4)
        x, y = r % self.width, r // self.width
        ex, ey = _STEP[d]
        return (x, y), ((x + ex) % self.width, (y + ey) % self.height)

    def used_links(self) -> np.ndarray:
        """Boolean mask of the link ids that exist (a mesh has none leaving the border)."""
        r = np.arange(self.nprocs)
        x, y = r % self.width, r // self.width
        ok = np.stack([x < self.width - 1, x > 0, y < self.height - 1, y > 0], axis=1)
        if self.wrap:
            ok = np.stack([np.full(r.size, self.width > 1)] * 2 + [np.full(r.size, self.height > 1)] * 2,
                          axis=1)
        return ok.reshape(-1)


class Torus2D(Mesh2D):
    """W x H torus: a mesh with wrap-around links, shorter way round in each dimension."""

    wrap = True


def step_link_loads(schedule, step: int, mesh=None) -> dict:
    """``{link: [transfers]}`` of step ``step`` of ``schedule`` (either form) on ``mesh=(W, H)``
    (default: the schedule's ``meta["mesh"]``), routed by :class:`Mesh2D`; a link is
    ``((x, y), (x', y'))``, its transfers in step order."""
    schedule = as_transfers(schedule)
    topo = Mesh2D(*(mesh or schedule.meta["mesh"]))
    transfers = schedule.steps[step]
    idx, links = topo.routes([tr.src for tr in transfers], [tr.dst for tr in transfers])
    loads = defaultdict(list)
    for i, link in zip(idx.tolist(), links.tolist()):
        loads[topo.link_name(link)].append(transfers[i])
    return dict(loads)


def link_conflicts(schedule, mesh=None) -> list[tuple[int, tuple, list]]:
    """``(step, link, transfers)`` for every mesh link carrying more than one message in a
    step (see :func:`step_link_loads`)."""
    schedule = as_transfers(schedule)
    return [(t, link, trs) for t in range(schedule.nsteps)
            for link, trs in step_link_loads(schedule, t, mesh).items() if len(trs) > 1]
