"""Figures of the NBL chapter (Littlefield 1992): T(S) curves, regime maps, and a live panel.

Drawing functions take a matplotlib ``Axes``, an :class:`~netmodels.models.nbl.NBLModel` and
plain numbers, so the panel, the chapter and the tests use the same code.  Times are drawn in
milliseconds; the controls show α in µs, β, c2 and c3 in µs per element (the paper's units).
"""

from __future__ import annotations

import time as _time

import numpy as np

from ..models import nbl, nbl_blocks, nbl_paper
from ..models.nbl import NBLModel
from ..models.nbl_paper import ALGORITHMS
from .panel import Control, PanelSpec, log_ticks

US = 1e-6
COLORS = {"Tree": "#4c72b0", "Snake": "#dd8452", "Fence": "#55a868"}

#: Default axes of the regime maps: vector lengths 10 .. 10**6 elements and meshes
#: W x H = 2x2 ... 64x32 (P = 4 ... 2048), W = H or W = 2H.
MAP_NS = np.unique(np.round(np.geomspace(10, 1e6, 81)).astype(np.int64))
MAP_MESHES = tuple((2 ** ((k + 1) // 2), 2 ** (k // 2)) for k in range(2, 12))


def draw_curves(ax, N, W, H, model, *, Ss=None, label="", style="-", tree=True):
    """T(S) of Snake and Fence (ms) over block sizes S, their optima, and Tree's time."""
    Ss = np.unique(np.round(np.geomspace(1, max(N // 3, 2), 300)).astype(np.int64)) if Ss is None else Ss
    out = {}
    for name in ("Snake", "Fence"):
        try:
            t = nbl_paper.curves(name, N, W, H, Ss, model)
        except ValueError:
            continue
        ax.plot(Ss, t * 1e3, style, color=COLORS[name], label=f"{name} {label}".strip())
        if np.any(np.isfinite(t)):
            i = int(np.nanargmin(t))
            ax.plot(Ss[i], t[i] * 1e3, "o", color=COLORS[name], ms=5)
            out[name] = (int(Ss[i]), float(t[i]))
    if tree:
        tt = nbl_paper.tree_time(N, W, H, model)
        ax.axhline(tt * 1e3, color=COLORS["Tree"], ls=style, lw=1, label=f"Tree {label}".strip())
        out["Tree"] = (N, tt)
    ax.set(xscale="log", xlabel="block size S (elements)", ylabel="time (ms)")
    return out


def draw_regime(ax, winner, Ns=MAP_NS, meshes=MAP_MESHES, title=""):
    """The fastest algorithm on a (mesh, N) grid as coloured cells."""
    from matplotlib.colors import ListedColormap

    cmap = ListedColormap([COLORS[a] for a in ALGORITHMS])
    P = np.array([w * h for w, h in meshes])
    x = np.geomspace(Ns[0], Ns[-1], len(Ns) + 1) if len(Ns) > 1 else np.array([Ns[0], Ns[0] * 2])
    y = np.arange(len(meshes) + 1) - 0.5
    ax.pcolormesh(x, y, winner, cmap=cmap, vmin=-0.5, vmax=len(ALGORITHMS) - 0.5, shading="flat")
    ax.set(xscale="log", xlabel="vector length N (elements)", ylabel="mesh W x H (P)", title=title)
    ax.set_yticks(np.arange(len(meshes)), [f"{w}x{h} ({p})" for (w, h), p in zip(meshes, P)], fontsize=7)
    return ax


def regime_legend(ax):
    """Legend of the algorithm colours, above the map (the map's cells cover the axes)."""
    from matplotlib.patches import Patch

    ax.legend(handles=[Patch(color=COLORS[a], label=a) for a in ALGORITHMS], loc="lower left",
              bbox_to_anchor=(0.0, 1.0), ncol=3, fontsize=7, frameon=False, borderaxespad=0.2)


def model_from(alpha, beta, c2, c3, f, elem_bytes=8, name="panel") -> NBLModel:
    """The model of the controls: α in s, β, c2, c3 in s per element (the paper's units)."""
    return NBLModel(alpha, beta / elem_bytes, f, c2 / elem_bytes, c3 / elem_bytes, elem_bytes, name=name)


def compute(alpha_us, beta_us, c2_us, c3_us, fvalues, N, mesh, Ns=MAP_NS, meshes=MAP_MESHES):
    """Everything one redraw of the panel needs (vectorised): (model, winner map); α in µs,
    β, c2, c3 in µs per element."""
    f = {1: 1.0, **{L: float(v) for L, v in fvalues.items()}}
    m = model_from(alpha_us * US, beta_us * US, c2_us * US, c3_us * US, f)
    winner, _, _ = nbl_blocks.regime_map(Ns, meshes, m)
    return m, winner


class PanelFigure:
    """The panel's figure: a regime map and T(S) curves whose artists are updated in place
    (no re-layout, no new artists), so that a redraw costs one model evaluation and one render."""

    def __init__(self, Ns=MAP_NS, meshes=MAP_MESHES, nS=200):
        from matplotlib.figure import Figure

        self.Ns, self.meshes = Ns, meshes
        self.fig = Figure(figsize=(9, 3.4), dpi=72)
        self.fig.subplots_adjust(left=0.13, right=0.98, bottom=0.14, top=0.9, wspace=0.25)
        self.ax_map, self.ax_t = self.fig.subplots(1, 2)
        draw_regime(self.ax_map, np.zeros((len(meshes), len(Ns))), Ns, meshes)
        self.mesh = self.ax_map.collections[0]
        regime_legend(self.ax_map)
        self.nS = nS
        self.lines = {a: self.ax_t.plot([], [], color=COLORS[a], label=a)[0] for a in ALGORITHMS}
        self.dots = {a: self.ax_t.plot([], [], "o", color=COLORS[a], ms=5)[0] for a in ("Snake", "Fence")}
        self.ax_t.set(xscale="log", yscale="log", xlabel="block size S (elements)", ylabel="time (ms)")
        self.ax_t.legend(fontsize=7, loc="upper right")
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(self.fig)
        self.animated = [self.mesh, *self.lines.values(), *self.dots.values()]
        for a in self.animated:
            a.set_animated(True)
        self._key, self._background = None, None

    def update(self, model, winner, N, W, H) -> str:
        """Redraw with new model results; returns the title of the curves."""
        self.mesh.set_array(winner.ravel())
        Ss = np.unique(np.round(np.geomspace(1, max(N // 3, 2), self.nS)).astype(np.int64))
        best = ("Tree", N, nbl_paper.tree_time(N, W, H, model))
        ys = [best[2]]
        for name in ("Snake", "Fence"):
            try:
                t = nbl_paper.curves(name, N, W, H, Ss, model)
            except ValueError:
                t = np.full(Ss.shape, np.nan)
            self.lines[name].set_data(Ss, t * 1e3)
            if np.any(np.isfinite(t)):
                i = int(np.nanargmin(t))
                self.dots[name].set_data([Ss[i]], [t[i] * 1e3])
                ys += [np.nanmin(t), np.nanmax(t)]
                if t[i] < best[2]:
                    best = (name, int(Ss[i]), float(t[i]))
            else:
                self.dots[name].set_data([], [])
        self.lines["Tree"].set_data([1, Ss[-1]], [ys[0] * 1e3] * 2)
        # limits on whole decades (three of them above the fastest time): they change
        # rarely, so the axes (ticks and labels: most of the drawing time) are seldom redrawn
        low = 10.0 ** np.floor(np.log10(min(ys) * 1e3))
        self.ax_t.set_xlim(1, 10.0 ** np.ceil(np.log10(Ss[-1])))
        self.ax_t.set_ylim(low, 1000 * low)
        log_ticks(self.ax_t)
        return (f"N = {N:,}, {W}x{H}: {best[0]} fastest ({best[2] * 1e3:.3g} ms"
                + (f", S = {best[1]})" if best[0] != "Tree" else ")"))

    def render(self) -> bytes:
        """PNG of the figure.  The axes (ticks, labels: most of the drawing time) are drawn
        only when their limits change; otherwise only the data artists are redrawn (blitting)."""
        import io

        from PIL import Image

        canvas = self.fig.canvas
        key = (self.ax_t.get_xlim(), self.ax_t.get_ylim())
        if key != self._key:
            canvas.draw()
            self._background, self._key = canvas.copy_from_bbox(self.fig.bbox), key
        else:
            canvas.restore_region(self._background)
        for a in self.animated:
            a.axes.draw_artist(a)
        img = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        buf = io.BytesIO()
        img.save(buf, format="PNG", compress_level=1)
        return buf.getvalue()


def _model(alpha, beta, c2, c3, phi, f2, f3, f4, f5, f6, **_):
    """The model of the controls: f(L) = 1 + φ (f_L − 1) (φ = 1: the f_L given)."""
    f = {1: 1.0, **{L: 1.0 + phi * (v - 1) for L, v in zip(range(2, 7), (f2, f3, f4, f5, f6))}}
    return model_from(alpha, beta, c2, c3, f, name="")


def _controls(model: NBLModel, N: int, mesh, alphas, phis, phi_fmt: str, betas=None) -> tuple:
    """The NBL figures' controls: α, β, c2, c3 (µs, µs/element), the NBL strength φ (static
    only), f(2)..f(6) (live only), N and the mesh (the curves')."""
    look = dict(continuous_update=False, style={"description_width": "70px"})
    small = dict(unit="µs/element", scale=1 / US, log=True, span=(1e-10, 1e-5))

    def kw(**extra):
        return {**look, "layout": {"width": "300px"}, **extra}

    e, f = model.elem_bytes, model.f if isinstance(model.f, dict) else {}
    return (
        Control("alpha", "α", model.alpha, unit="µs", scale=1 / US, log=True, span=(1e-7, 1e-3),
                values=alphas, kw=kw(), help="start-up time of one message"),
        Control("beta", "β", model.beta * e, values=betas, kw=kw(), **small,
                help="transfer time of one element over a link that no other message shares"),
        Control("c2", "c2", model.c2 * e, kw=kw(), **small, help="time per element to combine two vectors"),
        Control("c3", "c3", model.c3 * e, kw=kw(), **small, help="time per element to combine three vectors"),
        Control("phi", "NBL strength φ", 1.0, values=phis, fmt=phi_fmt, live=False,
                help="f(L) = 1 + φ (f_L - 1): 0 the standard model, 1 the f(L) given"),
        *(Control(f"f{L}", f"f({L})", float(f.get(L, L)), span=(1.0, float(L)), kw=kw(step=0.05),
                  help=f"how many times longer a transfer takes when {L} share a node's bandwidth "
                       f"(1: no limit, {L}: one link's worth shared)")
          for L in range(2, 7)),
        Control("N", "N (curves)", N, widget="int", span=(3, 10**7), integer=True,
                help="vector length, in elements, of the curves T(S)",
                kw={k: v for k, v in kw().items() if k != "continuous_update"}),
        Control("mesh", "mesh", f"{mesh[0]}x{mesh[1]}", options=[f"{a}x{b}" for a, b in MAP_MESHES],
                help="the mesh of nodes (width x height) of the curves T(S)",
                kw={k: v for k, v in kw().items() if k != "continuous_update"}),
    )


class NBLView:
    """The live drawing of the NBL panel: the regime map and T(S) at N and the mesh
    (:class:`PanelFigure`); its text gives the time of the redraw (model, drawing, PNG)."""

    def __init__(self, spec):
        self.pf = PanelFigure()

    def show(self, values):
        t0 = _time.perf_counter()
        m = _model(**values)
        W, H = (int(v) for v in values["mesh"].split("x"))
        winner, _, _ = nbl_blocks.regime_map(self.pf.Ns, self.pf.meshes, m)
        title = self.pf.update(m, winner, int(values["N"]), W, H)
        image = self.pf.render()
        return image, f"{title}; redraw took {1e3 * (_time.perf_counter() - t0):.0f} ms"


def regime_spec(model: NBLModel | None = None, N: int = 10**5, mesh=(16, 16),
                Ns=None, meshes=MAP_MESHES) -> PanelSpec:
    """The fastest algorithm on a (mesh, N) map, for both views (default machine: the DELTA).

    Live: α, β, c2, c3, f(2)..f(6), and N and the mesh of the T(S) curves drawn beside the
    map.  Static: α (5.4-540 µs), β (0.154-15.4 µs/element) and the NBL strength φ, f(L) =
    1 + φ(f(L) − 1) (φ = 0: the standard model; φ = 1: the model's f, by default the DELTA's
    with the nominal f(L) = L)."""
    from . import interactive as ia

    model = model or _delta_nominal()
    Ns = np.unique(np.round(np.geomspace(10, 1e6, 41)).astype(np.int64)) if Ns is None else Ns
    P = np.array([w * h for w, h in meshes], dtype=float)

    def z(x, y, **values):
        winner, _, _ = nbl_blocks.regime_map(Ns, meshes, _model(**values))
        return winner.astype(float)

    return PanelSpec(
        title="Fastest algorithm; f(L) = 1 + φ(L − 1)", kind="heatmap", data=z, x=Ns.astype(float), y=P,
        controls=_controls(model, N, mesh, ia.grid(5.4e-6, 5.4e-4, 5), np.linspace(0, 1, 5), ".2f",
                           betas=ia.grid(1.54e-7, 1.54e-5, 3)),
        columns=(("alpha", "beta", "c2", "c3", "N", "mesh"), ("f2", "f3", "f4", "f5", "f6")),
        xlabel="vector length N (elements)", ylabel="nodes P (meshes 2x2 … 64x32)",
        categories=list(ALGORITHMS), log_x=True, log_y=True, view=NBLView)


def curves_spec(model: NBLModel | None = None, N: int = 10**5, mesh=(16, 16)) -> PanelSpec:
    """T(S) of Snake and Fence (and Tree) at ``N`` on ``mesh``, for both views.

    Static: α (5.4-540 µs) and the NBL strength φ (as in :func:`regime_spec`)."""
    from . import interactive as ia

    model = model or _delta_nominal()
    Ss = np.unique(np.round(np.geomspace(5, N // 3, 60)).astype(np.int64))

    def curves(S, N, mesh, **values):
        W, H = (int(v) for v in mesh.split("x"))
        m = _model(**values)
        Ss = np.round(S).astype(np.int64)
        out = {a: nbl_paper.curves(a, N, W, H, Ss, m) for a in ("Snake", "Fence")}
        out["Tree"] = np.full(Ss.shape, nbl_paper.tree_time(N, W, H, m))
        return out

    def title(N, mesh):
        return f"Time against block size, N = {N:,}, {mesh} mesh"

    return PanelSpec(
        title=title, data=curves, x=Ss.astype(float),
        controls=_controls(model, N, mesh, ia.grid(5.4e-6, 5.4e-4, 9), np.linspace(0, 1, 11), ".1f"),
        columns=(("alpha", "beta", "c2", "c3", "N", "mesh"), ("f2", "f3", "f4", "f5", "f6")),
        xlabel="block size S (elements)", ylabel="time (ms)", y_scale=1e3, log_x=True, log_y=True,
        styles={a: {"line": {"color": COLORS[a], "width": 2}} for a in ALGORITHMS}, digits=4)


def nbl_panel(model: NBLModel | None = None, N: int = 10**5, mesh=(16, 16)):
    """The live panel of :func:`regime_spec` (JupyterLab): the map and T(S) redrawn on
    every change, the time of the last redraw under them."""
    return regime_spec(model, N, mesh).live()


def _delta_nominal() -> NBLModel:
    """The DELTA with the nominal f(L) = L, the panels' default."""
    from dataclasses import replace

    from ..models.machines import DELTA

    return replace(DELTA, f=nbl.NOMINAL)


def blend(phi: float) -> dict:
    """f(L) = 1 + phi (L - 1): phi = 0 is the standard model, phi = 1 the nominal NBL model."""
    return {L: 1.0 + phi * (L - 1) for L in range(1, 7)}


def static_regime_map(Ns=None, meshes=MAP_MESHES):
    """The static twin of :func:`regime_spec` (the HTML book)."""
    return regime_spec(Ns=Ns, meshes=meshes).static()


def static_curves(N=10**5, mesh=(16, 16)):
    """The static twin of :func:`curves_spec` (the HTML book)."""
    return curves_spec(N=N, mesh=mesh).static()
