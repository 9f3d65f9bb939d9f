"""The NBL chapter's live panel redraws fast enough to follow a slider.

Its figure (:class:`netmodels.figures.nbl_plots.PanelFigure`) draws the axes, ticks and
labels (most of the drawing time) only when their limits change, and otherwise redraws the
data artists alone (blitting).  Moving f(6) from 6 to 3 at N = 10^5 on 16 x 16 keeps the
limits of most frames, so a few full draws serve them all.
"""

import time

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402

from netmodels.figures import nbl_plots  # noqa: E402

N, MESH = 10**5, (16, 16)


def _frames(pf, count=12):
    """Move f(6) from 6 to 3 in ``count`` steps: (PNG bytes, seconds, axis limits) per redraw."""
    out = []
    for f6 in np.linspace(6, 3, count):
        t0 = time.perf_counter()
        m, winner = nbl_plots.compute(54, 1.54, 0.25, 0.37, {2: 2, 3: 3, 4: 4, 5: 5, 6: f6}, N, MESH)
        pf.update(m, winner, N, *MESH)
        image = pf.render()
        out.append((image, time.perf_counter() - t0, (pf.ax_t.get_xlim(), pf.ax_t.get_ylim())))
    return out


def test_the_axes_are_drawn_only_when_their_limits_change():
    pf = nbl_plots.PanelFigure()
    draws = []
    draw = pf.fig.canvas.draw
    pf.fig.canvas.draw = lambda *a, **k: (draws.append(1), draw(*a, **k))[1]
    frames = _frames(pf)
    assert all(image[:4] == b"\x89PNG" for image, _, _ in frames)
    assert len({image for image, _, _ in frames}) > 1       # the curves moved
    limits = [lim for _, _, lim in frames]
    changes = 1 + sum(a != b for a, b in zip(limits, limits[1:]))
    assert len(draws) == changes < len(frames)               # the other frames blitted


def test_a_redraw_after_the_first_takes_well_under_a_second():
    """The first frame draws the axes (about 0.2 s on the 2-core build machine); the others
    took a median of 15 ms there.  The bound leaves room for a loaded machine."""
    frames = _frames(nbl_plots.PanelFigure())
    assert np.median([t for _, t, _ in frames[1:]]) < 0.5
