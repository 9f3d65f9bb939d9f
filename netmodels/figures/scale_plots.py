"""Barrier and allreduce algorithms from P = 2 to 2^20 under α-β, LogGP and NBL: the
sweep behind the chapter "Simulating at scale" and its static figures.

:func:`sweep` simulates every algorithm of :data:`SWEPT` at every P of
:data:`NPROCS` under the three machines of :func:`machines` (one set of numbers, so
that the models differ in their rules, not in their parameters) and returns rows that
``benchmarks/scale_sweep.py`` stores in ``book/data/scale_reference.json``;
:func:`figure` draws them with a slider over the model.
"""

from __future__ import annotations

import time as _time

import numpy as np

from ..algorithms import registry
from ..models.alphabeta import AlphaBeta
from ..models.logp import LogGP
from ..simulate import simulate
from ..simulate.cost import NBLModel
from . import interactive as ia

#: the process counts of the sweep
NPROCS = (2, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 2**18, 2**20)
#: elements of the allreduce vector (8 MiB of doubles)
NELEMS = 2**20
ELEM_BYTES = 8
#: the algorithms swept, by registered name (the ring only up to RING_MAX: 2(P - 1) steps)
SWEPT = ("barrier.dissemination", "barrier.binomial", "barrier.butterfly",
         "allreduce.ring", "allreduce.recursive_doubling", "allreduce.rabenseifner", "allreduce.binomial")
#: the collectives of :data:`SWEPT`, in its order
COLLECTIVES = tuple(dict.fromkeys(name.split(".", 1)[0] for name in SWEPT))
RING_MAX = 1024
#: model name -> semantics used for it
SEMANTICS = {"α-β": "sync", "LogGP": "dataflow", "NBL f(L) = L": "sync"}


def machines(P: int) -> dict:
    """One machine seen by three models: a message of m bytes costs 8 µs + 0.5 ns/B × m
    end to end under α-β; LogGP splits the 8 µs as o = 1.5 µs, L = 5 µs, o = 1.5 µs with
    g = 2 µs, G = 0.5 ns/B; NBL has the α-β numbers per element with f(L) = L."""
    return {
        "α-β": AlphaBeta(8e-6, 0.5e-9, name="α-β"),
        "LogGP": LogGP(L=5e-6, o=1.5e-6, g=2e-6, P=P, G=0.5e-9, name="LogGP"),
        "NBL f(L) = L": NBLModel(8e-6, 0.5e-9 * ELEM_BYTES, float, name="NBL nominal"),
    }


def swept(collective: str) -> tuple[str, ...]:
    """The short names of the algorithms of ``collective`` in :data:`SWEPT`, in its order."""
    algs = [registry.get(name) for name in SWEPT]
    return tuple(a.short for a in algs if a.collective == collective)


def sweep(nprocs=NPROCS, progress=None) -> list[dict]:
    """Rows ``{collective, algorithm, P, model, semantics, time_s, steps, messages, wall_s}``."""
    rows = []
    for P in nprocs:
        for coll in COLLECTIVES:
            for alg in swept(coll):
                if alg == "ring" and P > RING_MAX:
                    continue
                sched = registry.build(f"{coll}.{alg}", P, 0 if coll == "barrier" else NELEMS)
                for name, model in machines(P).items():
                    t0 = _time.perf_counter()
                    r = simulate(sched, model, semantics=SEMANTICS[name], elem_bytes=ELEM_BYTES)
                    rows.append({"collective": coll, "algorithm": alg, "P": P, "model": name,
                                 "semantics": SEMANTICS[name], "time_s": r.time, "steps": r.steps,
                                 "messages": r.messages, "wall_s": _time.perf_counter() - t0})
                    if progress:
                        progress(rows[-1])
    return rows


def winners(rows, collective: str) -> dict:
    """``{model: [(P, fastest algorithm, its time s), ...]}`` from sweep rows (of algorithms
    within 1e-9 of each other, the first of :data:`SWEPT`)."""
    out = {}
    for model in SEMANTICS:
        best = {}
        for r in rows:
            if r["collective"] == collective and r["model"] == model:
                if r["P"] not in best or r["time_s"] < best[r["P"]][1] * (1 - 1e-9):
                    best[r["P"]] = (r["algorithm"], r["time_s"])
        out[model] = [(P, *best[P]) for P in sorted(best)]
    return out


def figure(rows, collective: str) -> ia.InteractiveFigure:
    """Time against P of every algorithm of ``collective``, one slider position per model."""
    models = list(SEMANTICS)
    Ps = np.array(sorted({r["P"] for r in rows}), dtype=float)
    table = {(r["algorithm"], r["P"], r["model"]): r["time_s"] for r in rows if r["collective"] == collective}

    def f(x, model):
        name = models[int(round(model)) - 1]
        return {alg: np.array([table.get((alg, int(P), name), np.nan) for P in x])
                for alg in swept(collective)}

    def readout(model):
        name = models[int(round(model)) - 1]
        return f"model {int(round(model))}: {name}, {SEMANTICS[name]} semantics"

    what = "barrier" if collective == "barrier" else f"allreduce of {NELEMS * ELEM_BYTES // 2**20} MiB"
    return ia.slider_figure(
        f, x=Ps, params={"model": ia.Param([1, 2, 3], "model (1 α-β, 2 LogGP, 3 NBL)", fmt=".0f", initial=1)},
        xlabel="P (ranks)", ylabel="time (µs)", y_scale=1e6, log_x=True, log_y=True, readout=readout,
        title=f"{what}: simulated time against P", fig_id=f"scale-{collective}")


def draw(ax, rows, collective: str, model: str) -> None:
    """Time against P of every algorithm of ``collective`` under ``model`` (log-log, µs)."""
    ax.clear()
    for alg in swept(collective):
        pts = sorted((r["P"], r["time_s"]) for r in rows
                     if r["collective"] == collective and r["algorithm"] == alg and r["model"] == model)
        if pts:
            P, t = zip(*pts)
            ax.loglog(P, np.array(t) * 1e6, "o-", ms=3, label=alg)
    ax.set(xlabel="P (ranks)", ylabel="time (µs)", title=f"{collective}: {model} ({SEMANTICS[model]})")
    ax.legend(fontsize=8)


def panel(rows):
    """Live panel (JupyterLab): buttons for the collective and the model, redrawing :func:`draw`."""
    import ipywidgets as w
    from matplotlib.figure import Figure

    from .widgets import png

    coll = w.ToggleButtons(options=list(COLLECTIVES), description="collective")
    model = w.ToggleButtons(options=list(SEMANTICS), description="model")
    image = w.Image(format="png")
    fig = Figure(figsize=(7, 4))
    ax = fig.add_subplot()

    def redraw(_=None):
        draw(ax, rows, coll.value, model.value)
        fig.tight_layout()
        image.value = png(fig)

    for b in (coll, model):
        b.observe(redraw, names="value")
    redraw()
    return w.VBox([coll, model, image])
