"""Figures of the chapter "Models compared": one algorithm costed under PRAM, BSP, LogP and α-β.

:func:`model_costs` prices one schedule of :data:`netmodels.models.bsp.COMPARED` in every
model of :data:`MODELS` with the kit's one simulator (:func:`netmodels.simulate.simulate`),
each under its own semantics (:mod:`netmodels.models.table`): BSP (*sync*: a superstep costs
``g h + l``), LogP (*stepwise*: the last rank's exit; every message is a small message, sizes
are ignored) and :data:`STANDARD`, Littlefield's standard model ``NBLModel.standard``
(loosely synchronous: a step costs, on its busiest rank, ``α`` per message sent or received
plus ``β`` times its largest message; the chapter's α-β in its standard form, not the
table's one-port :class:`~netmodels.models.alphabeta.AlphaBeta`).
:func:`models_spec` declares the figure once (:mod:`netmodels.figures.panel`): ``.live()``
is its panel, ``.static()`` its twin for the HTML book.  Units: seconds inside, µs on the
axes; vectors of float64 elements (:data:`ELEM_BYTES`, the simulator's default).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .._check import positive_int
from ..models import bsp, table
from ..models.logp import LogP
from ..models.logp_fit import fit_results
from ..models.alphabeta import AlphaBeta
from ..models.nbl import NBLModel
from ..simulate.engine import ELEM_BYTES, simulate  # noqa: F401 (ELEM_BYTES: named in the docstring)
from .panel import Control, PanelSpec, draw

US = 1e-6

#: process counts of the curves (the schedules are built message by message: keep P small)
P_AXIS = np.array([2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64])
#: vector lengths (elements) of the static figure's slider
N_VALUES = np.array([1, 64, 4096, 262144])
#: the α-β column: Littlefield's standard model (``NBLModel.standard``: exchange = 2α)
STANDARD = "α-β standard"
#: the columns: the table's BSP and LogP, and :data:`STANDARD`
MODELS = (table.get("bsp").label, table.get("logp").label, STANDARD)


@dataclass(frozen=True)
class Machine:
    """One machine seen by the three models: BSP (h in words), LogP, α-β (β per byte)."""

    bsp: bsp.BSP
    logp: LogP
    alphabeta: AlphaBeta

    def __post_init__(self):
        if not (isinstance(self.bsp, bsp.BSP) and self.bsp.unit == "words"):
            raise ValueError("bsp must be a netmodels.models.bsp.BSP with unit 'words'")
        if not isinstance(self.logp, LogP):
            raise ValueError("logp must be a netmodels.models.logp.LogP")
        if not isinstance(self.alphabeta, AlphaBeta):
            raise ValueError("alphabeta must be a netmodels.models.alphabeta.AlphaBeta")


def model_costs(algorithm: str, P: int, N: int, machine: Machine) -> dict:
    """{"PRAM steps" or a label of :data:`MODELS`: the cost}: ``algorithm`` on ``P`` ranks
    and ``N`` elements (steps; seconds) on ``machine``, each model under its own semantics."""
    if not isinstance(machine, Machine):
        raise ValueError(f"machine must be a models_panel.Machine, got {type(machine).__name__}")
    s = bsp.compared(algorithm, P, N)
    standard = NBLModel.standard(machine.alphabeta.alpha, machine.alphabeta.beta)
    models = (machine.bsp, machine.logp, standard)
    return {"PRAM steps": bsp.pram_steps(s), **{k: simulate(s, m).time for k, m in zip(MODELS, models)}}


def cost_curves(algorithm: str, N: int, machine: Machine, Ps=P_AXIS) -> dict:
    """{"PRAM steps" or model: values over ``Ps``} (steps; seconds for :data:`MODELS`)."""
    rows = [model_costs(algorithm, int(P), N, machine) for P in Ps]
    return {k: np.array([r[k] for r in rows]) for k in ("PRAM steps", *MODELS)}


def describe(algorithm: str, P: int, N: int, costs: dict) -> str:
    """One line from the :func:`model_costs` of ``algorithm`` at ``P``, ``N``: steps and µs."""
    return (f"{algorithm}, P = {P}, N = {N:,}: PRAM {costs['PRAM steps']} steps; "
            + ", ".join(f"{m} {costs[m] / US:,.4g} µs" for m in MODELS))


def machine_from_reference(bsp_json: dict, logp_json: dict, pingpong_json: dict) -> Machine:
    """This machine as measured by ``python -m mpi_exercises bsp``, ``logp`` and ``pingpong``
    (their JSON files, loaded): BSP from its fit to the minima, LogP fitted again to the
    stored minima by :func:`netmodels.models.logp_fit.fit_results` (the LogP chapter's fit; L
    clipped at 0, an unidentified g taken as 0), α-β from the ping-pong fit."""
    b, ab = bsp_json["fit_min"], pingpong_json["fit"]["alpha_beta"]
    lp = fit_results(logp_json["results"], logp_json["parameters"]["n"], "min_s")
    g = lp.g if lp.g_identified and np.isfinite(lp.g) else 0.0
    return Machine(bsp.BSP(max(b["g_s"], 0.0), max(b["l_s"], 0.0), "words", name="bsp fit"),
                   LogP(lp.L, lp.o_s, g, 2, o_r=lp.o_r, name="PRTT fit"),
                   AlphaBeta(ab["alpha_s"], ab["beta_s_per_byte"], name="ping-pong fit"))


def draw_models(ax, algorithm: str, P: int, N: int, machine: Machine) -> None:
    """Draw :func:`models_spec` at ``algorithm``, ``P``, ``N`` on ``ax``, its readout as the title."""
    spec = models_spec(machine, algorithm, P, N)
    draw(spec, ax)
    ax.set_title(spec.readout(**spec.defaults()), fontsize=8)


def models_spec(machine: Machine, algorithm: str = "dissemination barrier", P: int = 16,
                N: int = 4096) -> PanelSpec:
    """The three models' cost of one algorithm against P, for both views.

    Controls: the algorithm (by name, every one of :data:`netmodels.models.bsp.COMPARED`),
    N (live: 1-10^6 elements; static: :data:`N_VALUES`) and P (:data:`P_AXIS`)."""
    names = list(bsp.COMPARED)

    @functools.lru_cache(maxsize=None)
    def curves_of(algorithm: str, N: int) -> dict:
        return cost_curves(algorithm, N, machine)

    def curves(x, algorithm, N, P):
        c = curves_of(algorithm, int(N))
        out = {m: np.maximum(c[m], 1e-9) for m in MODELS}
        i = int(np.searchsorted(P_AXIS, P))
        out["P"] = ([P, P], [1e-7, 1.0])               # seconds: the whole y axis, 0.1 µs-1 s
        for m in MODELS:
            out[f"{m} at P"] = ([P], [max(out[m][i], 1e-9)])
        return out

    def readout(algorithm, N, P):
        i = int(np.searchsorted(P_AXIS, P))
        return describe(algorithm, int(P), int(N), {k: v[i] for k, v in curves_of(algorithm, int(N)).items()})

    styles = {"P": {"mode": "lines", "line": {"color": "#999999", "width": 1}, "showlegend": False}}
    colours = ("#1f77b4", "#ff7f0e", "#2ca02c")
    for m, c in zip(MODELS, colours):
        styles[m] = {"mode": "lines+markers", "line": {"color": c}}
        styles[f"{m} at P"] = {"mode": "markers", "marker": {"color": c, "size": 10}, "showlegend": False}
    return PanelSpec(
        title="One algorithm, three models", data=curves, x=P_AXIS.astype(float),
        controls=(
            Control("algorithm", "algorithm", algorithm, options=names, values=names,
                    help="the algorithm whose cost PRAM, BSP and LogP predict"),
            Control("N", "N (elements)", positive_int("N", N), log=True, integer=True, span=(1, 1e6),
                    values=N_VALUES.astype(float), kw={"step": 0.25, "readout_format": ".0f"},
                    help="elements the algorithm moves (a barrier moves none)"),
            Control("P", "P", positive_int("P", P), fmt=".0f", integer=True, values=P_AXIS.astype(float),
                    help="number of processes the readout and the markers give the costs at"),
        ),
        rows=(("algorithm", "P", "N"),), figsize=(7.5, 4.2),
        xlabel="processes P", ylabel="predicted time (µs)", y_scale=1 / US, log_x=True, log_y=True,
        readout=readout, styles=styles, digits=4, layout={"yaxis": {"range": [-1, 6]}})

