"""Barrier and allreduce algorithms from P = 2 to 2^20 under α-β, LogGP and NBL: the
sweep behind the chapter "Simulating at scale" and its static figures.

:func:`sweep` simulates every algorithm of :data:`SWEPT` at every P of
:data:`NPROCS` under the three machines of :func:`machines` (one set of numbers, so
that the models differ in their rules, not in their parameters) and returns rows that
``benchmarks/scale_sweep.py`` stores in ``book/data/scale_reference.json``;
:func:`scale_spec` declares their figure (:mod:`netmodels.figures.panel`), drawn live by
``scale_spec(rows).live()`` and for the static book by ``scale_spec(rows, collective).static()``.
Every model runs under its own semantics (:mod:`netmodels.models.table`).
"""

from __future__ import annotations

import time as _time

import numpy as np

from ..algorithms import registry
from ..models import table
from ..models.alphabeta import AlphaBeta
from ..models.logp import LogGP
from ..models.nbl import NBLModel
from ..simulate.engine import ELEM_BYTES, simulate
from .panel import Control, PanelSpec

#: the process counts of the sweep
NPROCS = (2, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 2**18, 2**20)
#: elements of the allreduce vector (8 MiB of doubles)
NELEMS = 2**20
#: the algorithms swept, by registered name (the ring only up to RING_MAX: 2(P - 1) steps)
SWEPT = ("barrier.dissemination", "barrier.binomial", "barrier.butterfly",
         "allreduce.ring", "allreduce.recursive_doubling", "allreduce.rabenseifner", "allreduce.binomial")
#: the collectives of :data:`SWEPT`, in its order
COLLECTIVES = tuple(dict.fromkeys(name.split(".", 1)[0] for name in SWEPT))
RING_MAX = 1024
#: the models swept: label (the table's; NBL in its nominal form f(L) = L) -> name in the table
MODELS = {table.get("alpha-beta").label: "alpha-beta", table.get("loggp").label: "loggp",
          table.get("nbl").label + " = L": "nbl"}


def machines(P: int) -> dict:
    """One machine seen by the three models of :data:`MODELS` (by label): a message of m
    bytes costs 8 µs + 0.5 ns/B × m end to end under α-β; LogGP splits the 8 µs as
    o = 1.5 µs, L = 5 µs, o = 1.5 µs with g = 2 µs, G = 0.5 ns/B; NBL has the α-β numbers
    per element with f(L) = L."""
    ab, gp, nbl = MODELS
    return {
        ab: AlphaBeta(8e-6, 0.5e-9, name=ab),
        gp: LogGP(L=5e-6, o=1.5e-6, g=2e-6, P=P, G=0.5e-9, name=gp),
        nbl: NBLModel(8e-6, 0.5e-9, float, name="NBL nominal"),
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
                    r = simulate(sched, model)
                    rows.append({"collective": coll, "algorithm": alg, "P": P, "model": name,
                                 "semantics": r.semantics, "time_s": r.time, "steps": r.steps,
                                 "messages": r.messages, "wall_s": _time.perf_counter() - t0})
                    if progress:
                        progress(rows[-1])
    return rows


def winners(rows, collective: str) -> dict:
    """``{model: [(P, fastest algorithm, its time s), ...]}`` from sweep rows (of algorithms
    within 1e-9 of each other, the first of :data:`SWEPT`)."""
    out = {}
    for model in MODELS:
        best = {}
        for r in rows:
            if r["collective"] == collective and r["model"] == model:
                if r["P"] not in best or r["time_s"] < best[r["P"]][1] * (1 - 1e-9):
                    best[r["P"]] = (r["algorithm"], r["time_s"])
        out[model] = [(P, *best[P]) for P in sorted(best)]
    return out


def scale_spec(rows, collective: str = "barrier") -> PanelSpec:
    """Time against P of every algorithm of a collective, under a model, from sweep rows.

    Controls: the collective (live only: the static book has one figure per collective)
    and the model (both views)."""
    if collective not in COLLECTIVES:
        raise ValueError(f"collective must be one of {list(COLLECTIVES)}, got {collective!r}")
    Ps = np.array(sorted({r["P"] for r in rows}), dtype=float)
    times_s = {(r["collective"], r["algorithm"], r["P"], r["model"]): r["time_s"] for r in rows}

    def times(x, collective, model):
        return {alg: np.array([times_s.get((collective, alg, int(P), model), np.nan) for P in x])
                for alg in swept(collective)}

    def readout(collective, model):
        return f"{model}, {table.get(MODELS[model]).semantics} semantics"

    def title(collective):
        what = "barrier" if collective == "barrier" else f"allreduce of {NELEMS * ELEM_BYTES // 2**20} MiB"
        return f"{what}: simulated time against P"

    return PanelSpec(
        title=title, data=times, x=Ps,
        controls=(Control("collective", "collective", collective, options=list(COLLECTIVES), widget="toggle",
                          help="the collective simulated"),
                  Control("model", "model", next(iter(MODELS)), options=list(MODELS),
                          values=list(MODELS), widget="toggle",
                          help="the model whose step rule the simulator applies")),
        rows=(("collective",), ("model",)), figsize=(7, 4),
        xlabel="P (ranks)", ylabel="time (µs)", y_scale=1e6, log_x=True, log_y=True, readout=readout,
        digits=5, fig_id=lambda collective: f"scale-{collective}")

