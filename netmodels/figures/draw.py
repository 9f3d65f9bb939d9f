"""Draw one step of a schedule on its logical mesh, like Figures 1-3 of Littlefield (1992).

Nodes are circles at their mesh positions (rank ``r`` at column ``r % W``, row
``r // W``, row 0 at the bottom); each message of the step is an arrow labelled
with the number of the block it carries (blocks numbered from 1, as in the paper).
Combining messages (data flowing in) are blue, copies of results (flowing back
out) green; messages that share a mesh link with another message of the step
(dimension-order routing, see :mod:`netmodels.algorithms.semantics`) are red, and so are the
overloaded links.
"""

from __future__ import annotations

import numpy as np

from ..algorithms.arrays import ArraySchedule, as_transfers
from ..algorithms.schedule import Schedule
from ..topology.mesh import step_link_loads

COMBINE, COPY, CONFLICT = "tab:blue", "tab:green", "red"


def block_number(schedule: Schedule, tr) -> int:
    """1-based index of the block a transfer carries (blocks of ``meta['block']`` elements)."""
    blk = schedule.meta.get("block") or max(tr.count, 1)
    return tr.start // max(blk, 1) + 1


def draw_step(schedule: Schedule | ArraySchedule, t: int, ax=None, mesh=None, *, labels: bool = True):
    """Draw step ``t`` (0-based) of ``schedule`` (either form) on ``mesh=(W, H)`` (default: the
    schedule's); return ax."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch

    schedule = as_transfers(schedule)
    if not 0 <= t < schedule.nsteps:
        raise ValueError(f"step t must be in 0..{schedule.nsteps - 1}, got {t!r}")
    mesh = tuple(mesh or schedule.meta.get("mesh") or (schedule.nprocs, 1))
    w, h = mesh
    if w * h != schedule.nprocs:
        raise ValueError(f"mesh {w}x{h} does not have the schedule's {schedule.nprocs} nodes")
    if ax is None:
        _, ax = plt.subplots(figsize=(1.1 * w + 1, 1.1 * h + 0.8))
    loads = step_link_loads(schedule, t, mesh)
    hot = {link for link, trs in loads.items() if len(trs) > 1}
    bad = {id(tr) for link in hot for tr in loads[link]}
    for (a, b) in hot:                                   # overloaded links: thick red segments
        ax.plot([a[0], b[0]], [a[1], b[1]], color=CONFLICT, lw=6, alpha=0.35, zorder=1)
    for r in range(schedule.nprocs):
        x, y = r % w, r // w
        ax.add_patch(plt.Circle((x, y), 0.17, facecolor="white", edgecolor="black", zorder=3))
        if labels:
            ax.text(x, y, str(r), ha="center", va="center", fontsize=8, zorder=4)
    for tr in schedule.steps[t]:
        p0 = np.array([tr.src % w, tr.src // w], float)
        p1 = np.array([tr.dst % w, tr.dst // w], float)
        d = p1 - p0
        dist = np.hypot(*d)
        normal = np.array([-d[1], d[0]]) / dist * 0.08          # right-hand offset: two-way traffic apart
        q0, q1 = p0 - normal + d / dist * 0.2, p1 - normal - d / dist * 0.2
        color = CONFLICT if id(tr) in bad else (COMBINE if tr.combine else COPY)
        neighbours = abs(d).sum() == 1
        ax.add_patch(FancyArrowPatch(q0, q1, arrowstyle="-|>", mutation_scale=12, lw=1.6, color=color,
                                     connectionstyle="arc3" if neighbours else "arc3,rad=-0.25", zorder=2))
        if labels:
            mid = (q0 + q1) / 2 - normal * (1.9 if neighbours else 4)
            ax.text(*mid, str(block_number(schedule, tr)), fontsize=7, color=color, ha="center", va="center",
                    zorder=4)
    ax.set_xlim(-0.6, w - 0.4)
    ax.set_ylim(-0.6, h - 0.4)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_title(f"{schedule.name}: step {t + 1} of {schedule.nsteps}", fontsize=9)
    return ax
