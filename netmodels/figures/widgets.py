"""Live ipywidgets panels for JupyterLab readers (the static book has Plotly twins).

Each panel is a function returning an ``ipywidgets`` container; the drawing code is a
plain function of the slider values, so it is also usable (and tested) without widgets.
"""

from __future__ import annotations

import numpy as np

from ..models.alphabeta import AlphaBeta

US = 1e-6
MB = 1e6


def describe(model: AlphaBeta, nbytes: float) -> str:
    """One line: time of ``nbytes``, n½ and which term dominates (µs, bytes)."""
    t = model.time(nbytes)
    share = model.alpha / t
    dominant = "latency (α)" if share > 0.5 else "bandwidth (βn)"
    return (f"T({nbytes:,.0f} B) = {t / US:,.1f} µs; n½ = {model.half_performance_length:,.0f} B; "
            f"latency share {100 * share:.0f} % → {dominant} dominates")


def draw_alpha_beta(ax, alpha_us: float, bandwidth_mbs: float, nbytes: float, references=()):
    """Draw T(n) of the α-β model on log-log axes, the message ``nbytes`` and n½.

    ``alpha_us`` in µs, ``bandwidth_mbs`` in MB/s (10**6 B/s); ``references`` are
    :class:`AlphaBeta` models drawn as thin grey lines.  Returns the model.
    """
    model = AlphaBeta.from_latency_bandwidth(alpha_us * US, bandwidth_mbs * MB)
    n = np.logspace(0, 8, 200)
    ax.clear()
    for ref in references:
        ax.loglog(n, ref.time(n) / US, lw=0.8, color="0.7")
        ax.annotate(ref.name, (n[-1], ref.time(n[-1]) / US), fontsize=7, color="0.4", ha="right",
                    va="bottom")
    ax.loglog(n, model.time(n) / US, lw=2, label="T(n) = α + βn")
    ax.loglog(n, np.full_like(n, model.alpha / US), "--", lw=1, label="α")
    ax.loglog(n, model.beta * n / US, ":", lw=1, label="βn")
    ax.axvline(model.half_performance_length, color="C2", lw=1, label="n½ = α/β")
    ax.plot([nbytes], [model.time(nbytes) / US], "o", color="C3", label=f"n = {nbytes:,.0f} B")
    ax.set(xlabel="message size n (bytes)", ylabel="time (µs)", ylim=(0.1, 1e7))
    ax.legend(loc="upper left", fontsize=8)
    ax.set_title(describe(model, nbytes), fontsize=9)
    return model


def png(fig) -> bytes:
    """Render a matplotlib figure to PNG bytes (for an ``ipywidgets.Image``)."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    return buf.getvalue()


def alpha_beta_panel(references=()):
    """Sliders for α (µs), bandwidth (MB/s) and a message size (B), redrawing T(n).

    The figure is an ``ipywidgets.Image`` re-rendered on every move (no Output widget), so
    the panel behaves the same in JupyterLab, under nbval and in the static book.
    """
    import ipywidgets as w
    from matplotlib.figure import Figure

    alpha = w.FloatLogSlider(value=100, base=10, min=-1, max=4, description="α (µs)")
    bandwidth = w.FloatLogSlider(value=1.75, base=10, min=-1, max=5, description="1/β (MB/s)")
    size = w.FloatLogSlider(value=1266, base=10, min=0, max=8, description="n (bytes)")
    image = w.Image(format="png")
    fig = Figure(figsize=(7, 4))
    ax = fig.add_subplot()

    def redraw(_=None):
        draw_alpha_beta(ax, alpha.value, bandwidth.value, size.value, references)
        fig.tight_layout()
        image.value = png(fig)

    for slider in (alpha, bandwidth, size):
        slider.observe(redraw, names="value")
    redraw()
    return w.VBox([w.HBox([alpha, bandwidth, size]), image])
