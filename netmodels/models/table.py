"""The table of models: every model of the kit once, with what a caller needs to use it.

One :class:`Entry` per model: its name (the one spelling every command line, JSON file and
figure uses), the label tables print, its parameters with units and meaning, its default
machine with the source of the numbers, its natural timing semantics (the model class's
``semantics``, which :func:`netmodels.simulate.simulate` uses unless told otherwise), and
how to build it from parameter values, and, for a model ``predict`` calibrates, how its
parameters are made from the microbenchmarks' fits (:class:`Calibrated`).  ``python -m netmodels
simulate``, ``predict``, the panels and the scale sweep read :data:`MODELS`; a new model is one
entry here plus its module.

    >>> from netmodels.models import table
    >>> table.get("alpha-beta").make(alpha=2e-6)          # the default machine, α changed
    AlphaBeta(alpha=2e-06, ...)

Units are SI (s, B, s/B).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable

from . import machines
from .alphabeta import AlphaBeta, SegmentedAlphaBeta
from .bsp import BSP
from .logp import LogGOPS, LogGP, LogP
from .lop import LoP
from .nbl import FITTED_DELTA, NBLModel
from .segmented import SegmentedLogGP, SegmentedNBL
from .twolevel import TwoLevel


#: the physical ranges a fitted parameter may be declared to have (:attr:`Parameter.physical`)
RANGES = ("", "> 0", ">= 0")


@dataclass(frozen=True)
class Parameter:
    """One parameter of a model: its name (as ``--param NAME=VALUE`` takes it), its unit
    (SI; ``curve``: a function of a peer count, not a number) and its meaning.

    For a model ``predict`` calibrates: ``fitted``, the key of the fit it is read from (the
    measured files' name for it: ``alpha`` is a fit's ``alpha_s``, ``G`` its ``G_s_per_byte``,
    ``alpha_r`` the upper segment's ``alpha_s``); ``physical``, the range a fitted value of a
    plain model must be in: ``"> 0"``, ``">= 0"`` (0: not identified, and a fit that gives None
    gives 0) or ``""`` (none: an intercept may be <= 0; the model's own checks apply)."""

    name: str
    unit: str
    meaning: str
    fitted: str = ""
    physical: str = ""

    def __post_init__(self):
        if self.physical not in RANGES:
            raise ValueError(f"parameter {self.name}: physical must be one of {RANGES}, got {self.physical!r}")


@dataclass(frozen=True)
class Calibrated:
    """How ``predict`` calibrates a model from its microbenchmarks' fits.

    measured_by: the benchmarks it needs (``python -m mpi_exercises NAME``: pingpong, exchange,
    logp; ``pingpong-fresh`` and ``exchange-fresh``: ``pingpong --fresh``, ``exchange --fresh``).  take: fit -> the names of the parameters
    read from it, each under its :attr:`Parameter.fitted` key.  The fits, as ``predict`` names
    them: ``pingpong`` and ``exchange`` (a line α + β m), ``pingpong segments`` (its
    ``switch_bytes``), ``pingpong below`` and ``pingpong above`` (the two segments), ``exchange
    below`` and ``exchange above`` (split at the ping-pong's switch), ``fresh pingpong segments``,
    ``fresh pingpong below`` and ``above``, ``fresh exchange below`` and ``above`` (the messages
    of data just written, split at the fresh ping-pong's switch), ``logp`` (the
    PRTT fit), ``f(L)`` (NBL's table, if given).
    derive: ``(taken, fits, nprocs) -> parameters`` for the others (added, or replacing taken
    ones), or None.  plain: an unphysical fit (:attr:`Parameter.physical`) refuses the whole
    calibration; a model with an added term that is no machine is left out instead.  A model
    whose fits are not all there (a KeyError) is not calibrated."""

    measured_by: tuple
    take: dict
    derive: Callable | None = None
    plain: bool = False


@dataclass(frozen=True)
class Entry:
    """One model of the table.

    name: the one spelling.  label: as tables and figures print it.  cls: the model's class
    (its ``semantics`` is the natural one).  parameters: what :attr:`build` takes, by name.
    machine: a function of no argument returning the default machine (a model object).
    build: keyword parameters -> model.  values: model -> its parameters by name (the
    inverse of ``build`` on the default machine).  extra: a pattern of further, optional
    parameter names the model accepts (NBL's ``fN``, f(N) for any N), ``extra_meaning`` says
    what they are.
    """

    name: str
    label: str
    cls: type
    parameters: tuple
    machine: Callable
    build: Callable
    values: Callable
    extra: str = ""
    extra_meaning: str = ""  #: what the ``extra`` parameters are
    note: str = ""          #: where the default machine's numbers come from, if it does not say
    calibration: Calibrated | None = None   #: how predict calibrates it (None: it does not)

    @property
    def semantics(self) -> str:
        """The timing semantics the simulator uses for this model by default."""
        return self.cls.semantics

    @property
    def numeric(self) -> bool:
        """True if every parameter is a number (the command line can set them)."""
        return all(p.unit != "curve" for p in self.parameters)

    def default(self):
        """The default machine (a model object)."""
        return self.machine()

    def source(self) -> str:
        """The default machine as an output names it: its name and where its numbers come from."""
        m = self.machine()
        name, source = getattr(m, "name", ""), self.note or getattr(m, "source", "")
        return f"{name} ({source})" if source else name

    def defaults(self) -> dict:
        """The default machine's parameters by name."""
        return self.values(self.machine())

    def accepts(self, name: str) -> bool:
        """Whether ``name`` is a parameter of this model."""
        return any(p.name == name for p in self.parameters) or bool(self.extra and re.fullmatch(self.extra, name))

    def make(self, **values):
        """The model with the default machine's parameters, ``values`` replacing some of them
        (ValueError for a name the model does not have)."""
        unknown = [k for k in values if not self.accepts(k)]
        if unknown:
            raise ValueError(f"model {self.name} has no parameter {unknown[0]!r}; it has "
                             + ", ".join(p.name for p in self.parameters)
                             + (" and fN for any N" if self.extra else ""))
        return self.build(**{**self.defaults(), **values})

    def calibrate(self, fits: dict, nprocs: int) -> dict | None:
        """The parameters :attr:`calibration` makes from ``fits`` (fit name -> its dict of
        fitted values, SI units) for ``nprocs`` ranks, in the order of :attr:`parameters`;
        None if a fit it reads is not there or gives None for a parameter that may not be 0."""
        c = self.calibration
        if c is None:
            return None
        declared = {p.name: p for p in self.parameters}
        taken = [(fit, declared[name]) for fit, names in c.take.items() for name in names]
        out = {}
        try:
            for fit, p in taken:
                v = fits[fit][p.fitted]
                if v is None and p.physical != ">= 0":
                    return None
                out[p.name] = 0.0 if v is None else float(v)
            if c.derive is not None:
                out.update(c.derive(out, fits, nprocs))
        except KeyError:
            return None
        order = [p.name for p in self.parameters]
        return dict(sorted(out.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))


def _logp_values(m) -> dict:
    return {"L": m.L, "o_s": m.o_s, "o_r": m.o_r, "g": m.g}


def _loggp_args(m) -> dict:
    return {"L": m.L, "o": m.o_s, "o_r": m.o_r, "g": m.g, "G": m.G, "P": m.P}


#: LogGOPSim's default eager limit S (bytes, its option ``-S``): the LogGOPS default machine's
LOGGOPSIM_S = 65535.0


_ALPHA, _BETA = "alpha_s", "beta_s_per_byte"      # a fitted line's keys: α (s), β (s/B)
_AB = (Parameter("alpha", "s", "latency per message", _ALPHA, "> 0"),
       Parameter("beta", "s/B", "time per byte", _BETA, "> 0"))
_SWITCH = "switch_bytes"                           # a two-segment fit's key: the switch (B)
_SEGMENT = (Parameter("S", "B", "protocol switch: first size of the upper segment (inf: none)", _SWITCH),
            Parameter("alpha_r", "s", "latency per message from S bytes on (an intercept: may be <= 0)", _ALPHA),
            Parameter("beta_r", "s/B", "time per byte from S bytes on", _BETA, "> 0"))
_EXCHANGE = (Parameter("alpha_x", "s", "latency of a message in an exchange (its rank sends and receives)",
                       _ALPHA, "> 0"),
             Parameter("beta_x", "s/B", "time per byte of a message in an exchange", _BETA, "> 0"))
_EXCHANGE_SEGMENT = (Parameter("alpha_xr", "s", "alpha_x from S bytes on (an intercept: may be <= 0)", _ALPHA),
                     Parameter("beta_xr", "s/B", "beta_x from S bytes on", _BETA, "> 0"))
#: the segments' parameters from the ping-pong's two-segment fit
_SEGMENTS_TAKEN = {"pingpong below": ("alpha", "beta"), "pingpong segments": ("S",),
                   "pingpong above": ("alpha_r", "beta_r")}
_SEGMENTED_NOTE = ("the α-β entry's machine ({}) with no switch and no exchange term: the terms are "
                   "measured (predict: the ping-pong's two segments, the exchange benchmark)")


def _segmented(label, **fixed):
    """The builder of a segmented α-β entry: its parameters, ``fixed`` the others."""
    return lambda **p: SegmentedAlphaBeta(**{**fixed, **p}, name=label)


def _segmented_values(keys):
    return lambda m: {k: getattr(m, k) for k in keys}


def _segmented_default():
    m = machines.LSDYNA_100MBIT
    return SegmentedAlphaBeta(m.alpha, m.beta, name=m.name, source=m.source)


def _nbl_build(alpha, beta, c2, c3, **f):
    table = {int(k[1:]): v for k, v in f.items()}
    return NBLModel(alpha, beta, table, c2, c3, name="NBL")


def _nbl_default():
    return replace(machines.DELTA, f=FITTED_DELTA)


def _nbl_values(m) -> dict:
    f = m.f if isinstance(m.f, dict) else {}
    return {"alpha": m.alpha, "beta": m.beta, "c2": m.c2, "c3": m.c3,
            **{f"f{L}": v for L, v in sorted(f.items()) if L > 1}}


def _nbl_calibrated(taken, fits, nprocs) -> dict:
    """NBL's parameters besides α and β: no combining (it is in predict's software term), f(L)
    from the fit ``f(L)`` if given, else 1 for every L a schedule on ``nprocs`` ranks can have."""
    f = {**{L: 1.0 for L in range(2, 2 * nprocs + 1)}, **dict(fits.get("f(L)") or {})}
    return {"c2": 0.0, "c3": 0.0, **{f"f{L}": float(v) for L, v in sorted(f.items()) if L > 1}}


def _nbl_exchange_calibrated(taken, fits, nprocs) -> dict:
    """NBL's, with f(2) = β_x / β: the exchange's time per byte over the ping-pong's."""
    return {**_nbl_calibrated(taken, fits, nprocs), "f2": fits["exchange"][_BETA] / fits["pingpong"][_BETA]}


_LOGP = (Parameter("L", "s", "latency", "L_s", ">= 0"), Parameter("o_s", "s", "send overhead", "o_s_s", "> 0"),
         Parameter("o_r", "s", "receive overhead", "o_r_s", "> 0"),
         Parameter("g", "s", "gap between sends (receives)", "g_s", ">= 0"))
_G = "G_s_per_byte"                                # the PRTT fit's key: G (s/B)
_LOGP_TAKEN = ("L", "o_s", "o_r", "g")
_LOGGP_TAKEN = {"logp": _LOGP_TAKEN + ("G",)}


def _loggp_short_G(taken, fits, nprocs) -> dict:
    """LogGP's G below the switch: the slope of the PRTT's gaps short of the long sizes
    (``G_short_s_per_byte``; None: 0), or the fit's G where the fit has no such key (fitted
    before G came from long messages: its G is that slope)."""
    short = fits["logp"].get("G_short_s_per_byte", taken["G"])
    return {"G": 0.0 if short is None else float(short)}


def _loggops_calibrated(taken, fits, nprocs) -> dict:
    """LogGOPS's O and S, calibrated so that one message takes what the ping-pong measures.

    Under LogGOPSim's rules (Hoefler, Schneider & Lumsdaine, HPDC 2010; ``LogGOPSim.cpp``) a
    send keeps its CPU ``o_s + (m-1) O`` and a receive ``o_r + max((m-1) O, (m-1) G)``: the
    copies overlap the wire, and one message alone takes ``o_s + L + o_r + (m-1) max(O, G)``
    (not ``2 (m-1) O + (m-1) G``), eager or rendezvous (LogGOPSim charges the handshake
    nothing).  So the one-way time fixes only ``max(O, G)``: G is the ping-pong's time per byte
    from its switch on (``taken["G"]``, the long messages'), and O the PRTT's send overhead per
    byte where it is CPU time (:func:`netmodels.models.logp_fit.fit_copy_overhead`: its
    gap-bound sizes below the switch), clipped at G so that the one-way time keeps the
    ping-pong's slope.  On shared memory the wire is itself a CPU copy, and O and G cannot be
    told apart by any one-way time; O shows only where a rank both sends and receives (an
    exchange costs ``o_s + o_r + (m-1)(O + max(O, G))`` when the copy outlasts L).  S is the
    switch - 1: a message of the switch's size goes by rendezvous."""
    return {"O": min(taken["O"], taken["G"]), "S": max(taken["S"] - 1.0, 0.0)}
_NBL = (Parameter("alpha", "s", "start-up per message", _ALPHA, "> 0"),
        Parameter("beta", "s/B", "time per byte", _BETA, "> 0"),
        Parameter("c2", "s/B", "2-way combine, per byte combined"),
        Parameter("c3", "s/B", "3-way combine, per byte combined"))

def _loggops_entry(name: str, label: str, bench: str, fit: str, why: str, note: str,
                   measured: tuple = ("logp", "pingpong")) -> Entry:
    """A LogGOPS entry whose G and S come from ``bench``'s fit (``fit segments``, ``fit above``:
    the clean ping-pong's or the fresh one's), ``why`` saying what G's slope is, ``note`` added to
    LogGOPSim's defaults."""
    return Entry(
        name, label, LogGOPS,
        _LOGP + (Parameter("G", "s/B", f"time per byte on the wire (predict: the {bench}'s from its switch on, "
                                       f"{why})", _BETA, ">= 0"),
                 Parameter("O", "s/B", "CPU overhead per byte (the copies), at sender and receiver (predict: "
                           "the PRTT's send overhead per byte where it is CPU time, at most G)",
                           "O_s_per_byte", ">= 0"),
                 Parameter("S", "B", "eager limit: a message of more bytes goes by rendezvous (inf: none; "
                           f"predict: the {bench}'s switch - 1)", _SWITCH)),
        lambda: LogGOPS(**_loggp_args(machines.KIT_VM_LOGGP), O=0.0, S=LOGGOPSIM_S,
                        name=machines.KIT_VM_LOGGP.name, source=machines.KIT_VM_LOGGP.source),
        lambda L, o_s, o_r, g, G, O, S: LogGOPS(L=L, o=o_s, g=g, P=2, o_r=o_r, G=G, O=O, S=S,  # noqa: E741
                                                name=label),
        lambda m: {**_logp_values(m), "G": m.G, "O": m.O, "S": m.S},
        note=machines.KIT_VM_LOGGP.source + "; O = 0 and S = 65535 B, LogGOPSim's defaults" + note,
        calibration=Calibrated(measured, {"logp": _LOGP_TAKEN + ("O",), f"{fit} segments": ("S",),
                                          f"{fit} above": ("G",)}, derive=_loggops_calibrated))


#: the models of the kit, by name
MODELS = {e.name: e for e in (
    Entry("alpha-beta", "α-β", AlphaBeta, _AB,
          lambda: machines.LSDYNA_100MBIT,
          lambda alpha, beta: AlphaBeta(alpha, beta, name="α-β"),
          lambda m: {"alpha": m.alpha, "beta": m.beta},
          calibration=Calibrated(("pingpong",), {"pingpong": ("alpha", "beta")}, plain=True)),
    Entry("alpha-beta-segmented", "α-β, segmented", SegmentedAlphaBeta, _AB + _SEGMENT,
          _segmented_default, _segmented("α-β, segmented"),
          _segmented_values(["alpha", "beta", "S", "alpha_r", "beta_r"]),
          note=_SEGMENTED_NOTE.format(machines.LSDYNA_100MBIT.source),
          calibration=Calibrated(("pingpong",), _SEGMENTS_TAKEN)),
    Entry("alpha-beta-exchange", "α-β, exchange β", SegmentedAlphaBeta, _AB + _EXCHANGE,
          _segmented_default, _segmented("α-β, exchange β"),
          _segmented_values(["alpha", "beta", "alpha_x", "beta_x"]),
          note=_SEGMENTED_NOTE.format(machines.LSDYNA_100MBIT.source),
          calibration=Calibrated(("pingpong", "exchange"),
                                 {"pingpong": ("alpha", "beta"), "exchange": ("alpha_x", "beta_x")})),
    Entry("alpha-beta-exchange-segmented", "α-β, exchange β, segmented", SegmentedAlphaBeta,
          _AB + _SEGMENT + _EXCHANGE + _EXCHANGE_SEGMENT,
          _segmented_default, _segmented("α-β, exchange β, segmented"),
          _segmented_values(["alpha", "beta", "S", "alpha_r", "beta_r", "alpha_x", "beta_x", "alpha_xr",
                             "beta_xr"]),
          note=_SEGMENTED_NOTE.format(machines.LSDYNA_100MBIT.source),
          calibration=Calibrated(("pingpong", "exchange"),
                                 {**_SEGMENTS_TAKEN, "exchange below": ("alpha_x", "beta_x"),
                                  "exchange above": ("alpha_xr", "beta_xr")})),
    Entry("alpha-beta-fresh", "α-β, fresh data, segmented", SegmentedAlphaBeta,
          _AB + _SEGMENT + _EXCHANGE + _EXCHANGE_SEGMENT,
          _segmented_default, _segmented("α-β, fresh data, segmented"),
          _segmented_values(["alpha", "beta", "S", "alpha_r", "beta_r", "alpha_x", "beta_x", "alpha_xr",
                             "beta_xr"]),
          note=_SEGMENTED_NOTE.format(machines.LSDYNA_100MBIT.source) + "; predict: every term from "
               "messages whose sender wrote the send buffer inside each sample (pingpong --fresh, exchange "
               "--fresh), as a collective sends data it has just written: on one node the cache lines then "
               "move between the cores",
          calibration=Calibrated(("pingpong-fresh", "exchange-fresh"),
                                 {"fresh pingpong below": ("alpha", "beta"), "fresh pingpong segments": ("S",),
                                  "fresh pingpong above": ("alpha_r", "beta_r"),
                                  "fresh exchange below": ("alpha_x", "beta_x"),
                                  "fresh exchange above": ("alpha_xr", "beta_xr")})),
    Entry("logp", "LogP", LogP, _LOGP,
          lambda: LogP(machines.KIT_VM_LOGGP.L, machines.KIT_VM_LOGGP.o, machines.KIT_VM_LOGGP.g, 2,
                       o_r=machines.KIT_VM_LOGGP.o_r, name=machines.KIT_VM_LOGGP.name,
                       source=machines.KIT_VM_LOGGP.source + ", without G"),
          lambda L, o_s, o_r, g: LogP(L=L, o=o_s, g=g, P=2, o_r=o_r, name="LogP"),
          _logp_values),
    Entry("loggp", "LogGP", LogGP, _LOGP + (Parameter("G", "s/B", "time per byte of a long message", _G, ">= 0"),),
          lambda: machines.KIT_VM_LOGGP,
          lambda L, o_s, o_r, g, G: LogGP(L=L, o=o_s, g=g, P=2, o_r=o_r, G=G, name="LogGP"),
          lambda m: {**_logp_values(m), "G": m.G},
          calibration=Calibrated(("logp",), _LOGGP_TAKEN, plain=True)),
    Entry("loggp-segmented", "LogGP, segmented G", SegmentedLogGP,
          _LOGP + (Parameter("G", "s/B", "time per byte of a message below S bytes (predict: the slope of the "
                             "PRTT's gaps short of the long sizes)", _G, ">= 0"),
                   Parameter("S", "B", "protocol switch: first size of the upper segment (inf: none)", _SWITCH),
                   Parameter("G_r", "s/B", "time per byte of a message of S bytes or more (predict: the "
                             "ping-pong's from its switch on, the slope of LogGP's one-way time)", _BETA, "> 0")),
          lambda: SegmentedLogGP(**_loggp_args(machines.KIT_VM_LOGGP), name=machines.KIT_VM_LOGGP.name,
                                 source=machines.KIT_VM_LOGGP.source),
          lambda L, o_s, o_r, g, G, S, G_r: SegmentedLogGP(L=L, o=o_s, g=g, P=2, o_r=o_r, G=G, S=S, G_r=G_r,
                                                           name="LogGP, segmented G"),
          lambda m: {**_logp_values(m), "G": m.G, "S": m.S, "G_r": m.G_r},
          note=machines.KIT_VM_LOGGP.source + "; no switch (predict measures it: the ping-pong's, with "
               "G_r its time per byte from the switch on)",
          calibration=Calibrated(("logp", "pingpong"),
                                 {"logp": _LOGP_TAKEN + ("G",), "pingpong segments": ("S",),
                                  "pingpong above": ("G_r",)}, _loggp_short_G)),
    _loggops_entry("loggops", "LogGOPS", "ping-pong", "pingpong",
                   "so that one message's o_s + L + o_r + (m-1) max(O, G) has its slope",
                   " (Hoefler, Schneider & Lumsdaine, LSAP/HPDC 2010; loggopsim_cmdline.ggo)"),
    _loggops_entry("loggops-fresh", "LogGOPS, fresh data", "fresh ping-pong", "fresh pingpong",
                   "messages whose sender has just written them",
                   "; predict: LogGOPS whose G and S come from the ping-pong of fresh data (pingpong --fresh), as "
                   "a collective sends what it has just written", measured=("logp", "pingpong-fresh")),
    Entry("nbl", "NBL f(L)", NBLModel, _NBL,
          _nbl_default, _nbl_build, _nbl_values, extra=r"f[1-9][0-9]*",
          extra_meaning="fN: f(N), the node bandwidth factor with N links active (no unit; f(1) = 1; "
                        "default: the paper's fitted table)",
          note=machines.DELTA.source + ", with the paper's fitted f(L) (nbl.FITTED_DELTA)",
          calibration=Calibrated(("pingpong",), {"pingpong": ("alpha", "beta")}, _nbl_calibrated, plain=True)),
    Entry("nbl-exchange", "NBL, f(2) from the exchange", NBLModel, _NBL,
          _nbl_default, lambda alpha, beta, c2, c3, **f: replace(_nbl_build(alpha, beta, c2, c3, **f),
                                                                 name="NBL, f(2) from the exchange"),
          _nbl_values, extra=r"f[1-9][0-9]*",
          extra_meaning="fN: f(N) with N links active; f2 = beta_x / beta, the exchange benchmark's time per "
                        "byte over the ping-pong's (predict), the others 1",
          note=machines.DELTA.source + ", with the paper's fitted f(L) (nbl.FITTED_DELTA); predict measures f(2)",
          calibration=Calibrated(("pingpong", "exchange"), {"pingpong": ("alpha", "beta")},
                                 _nbl_exchange_calibrated)),
    Entry("nbl-exchange-segmented", "NBL, f(2) from the exchange, segmented", SegmentedNBL,
          (Parameter("alpha", "s", "start-up per message below S bytes", _ALPHA, "> 0"),
           Parameter("beta", "s/B", "time per byte below S bytes", _BETA, "> 0")) + _NBL[2:] + _SEGMENT,
          lambda: SegmentedNBL(**{k: getattr(_nbl_default(), k) for k in ("alpha", "beta", "f", "c2", "c3")},
                               name=_nbl_default().name, source=_nbl_default().source),
          lambda alpha, beta, c2, c3, S, alpha_r, beta_r, **f: SegmentedNBL(
              alpha, beta, {int(k[1:]): v for k, v in f.items()}, c2, c3, S=S, alpha_r=alpha_r, beta_r=beta_r,
              name="NBL, f(2) from the exchange, segmented"),
          lambda m: {**_nbl_values(m), "S": m.S, "alpha_r": m.alpha_r, "beta_r": m.beta_r},
          extra=r"f[1-9][0-9]*",
          extra_meaning="fN: f(N) with N links active; f2 = beta_x / beta (predict), the others 1",
          note=machines.DELTA.source + ", with the paper's fitted f(L) and no switch (predict measures it)",
          calibration=Calibrated(("pingpong", "exchange"), _SEGMENTS_TAKEN, _nbl_exchange_calibrated)),
    Entry("bsp", "BSP", BSP,
          (Parameter("g", "s/element", "time per element of an h-relation"),
           Parameter("l", "s", "time per superstep (synchronisation)")),
          lambda: machines.KIT_VM_BSP,
          lambda g, l: BSP(g, l, "words", name="BSP"),      # noqa: E741
          lambda m: {"g": m.g, "l": m.l}),
    Entry("twolevel", "two-level α-β", TwoLevel,
          (Parameter("alpha_intra", "s", "latency within a node"),
           Parameter("beta_intra", "s/B", "time per byte within a node"),
           Parameter("alpha_inter", "s", "latency between nodes (the schedule's nodes: alltoall's --option "
                     "nodes=c; any other schedule is one node and never pays it)"),
           Parameter("beta_inter", "s/B", "time per byte between nodes"),
           Parameter("pack", "s/B", "packing a message for the node's leader")),
          lambda: TwoLevel(machines.ORIGIN2000_INTRA, machines.ORIGIN2000_INTER,
                           name="Origin 2000 pair (LAM/MPI)"),
          lambda alpha_intra, beta_intra, alpha_inter, beta_inter, pack: TwoLevel(
              AlphaBeta(alpha_intra, beta_intra), AlphaBeta(alpha_inter, beta_inter), pack, name="two-level α-β"),
          lambda m: {"alpha_intra": m.intra.alpha, "beta_intra": m.intra.beta, "alpha_inter": m.inter.alpha,
                     "beta_inter": m.inter.beta, "pack": m.pack}),
    Entry("lop", "LoP", LoP,
          (Parameter("rtt", "curve", "round-trip time to p peers"),
           Parameter("overhead", "curve", "send overhead with p peers")),
          lambda: LoP(machines.LOP_SENDRECV_RTT_MIN, machines.LOP_RDMAW_OS, name="LoP (Hoefler & Rehm)"),
          lambda rtt, overhead: LoP(rtt, overhead, name="LoP"),
          lambda m: {"rtt": m.rtt, "overhead": m.overhead}),
)}


def names(numeric: bool = False, calibrated: bool = False) -> tuple:
    """The models' names in the table's order (``numeric``: only those whose parameters are all
    numbers; ``calibrated``: only those ``predict`` calibrates, :attr:`Entry.calibration`)."""
    return tuple(n for n, e in MODELS.items()
                 if (e.numeric or not numeric) and (e.calibration is not None or not calibrated))


def get(name: str) -> Entry:
    """The entry of model ``name`` (ValueError naming the models if there is none)."""
    try:
        return MODELS[name]
    except (KeyError, TypeError):
        raise ValueError(f"model must be one of {', '.join(MODELS)}; got {name!r}") from None
