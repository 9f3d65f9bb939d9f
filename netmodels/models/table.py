"""The table of models: every model of the kit once, with what a caller needs to use it.

One :class:`Entry` per model: its name (the one spelling every command line, JSON file and
figure uses), the label tables print, its parameters with units and meaning, its default
machine with the source of the numbers, its natural timing semantics (the model class's
``semantics``, which :func:`netmodels.simulate.simulate` uses unless told otherwise), and
how to build it from parameter values.  ``python -m netmodels simulate``, ``predict``, the
panels and the scale sweep read :data:`MODELS`; a new model is one entry here plus its
module.

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


@dataclass(frozen=True)
class Parameter:
    """One parameter of a model: its name (as ``--param NAME=VALUE`` takes it), its unit
    (SI; ``curve``: a function of a peer count, not a number) and its meaning."""

    name: str
    unit: str
    meaning: str


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


def _logp_values(m) -> dict:
    return {"L": m.L, "o_s": m.o_s, "o_r": m.o_r, "g": m.g}


def _loggp_args(m) -> dict:
    return {"L": m.L, "o": m.o_s, "o_r": m.o_r, "g": m.g, "G": m.G, "P": m.P}


#: LogGOPSim's default eager limit S (bytes, its option ``-S``): the LogGOPS default machine's
LOGGOPSIM_S = 65535.0


_AB = (Parameter("alpha", "s", "latency per message"), Parameter("beta", "s/B", "time per byte"))
_SEGMENT = (Parameter("S", "B", "protocol switch: first size of the upper segment (inf: none)"),
            Parameter("alpha_r", "s", "latency per message from S bytes on (an intercept: may be <= 0)"),
            Parameter("beta_r", "s/B", "time per byte from S bytes on"))
_EXCHANGE = (Parameter("alpha_x", "s", "latency of a message in an exchange (its rank sends and receives)"),
             Parameter("beta_x", "s/B", "time per byte of a message in an exchange"))
_EXCHANGE_SEGMENT = (Parameter("alpha_xr", "s", "alpha_x from S bytes on (an intercept: may be <= 0)"),
                     Parameter("beta_xr", "s/B", "beta_x from S bytes on"))
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


_LOGP = (Parameter("L", "s", "latency"), Parameter("o_s", "s", "send overhead"),
         Parameter("o_r", "s", "receive overhead"), Parameter("g", "s", "gap between sends (receives)"))

#: the models of the kit, by name
MODELS = {e.name: e for e in (
    Entry("alpha-beta", "α-β", AlphaBeta,
          (Parameter("alpha", "s", "latency per message"), Parameter("beta", "s/B", "time per byte")),
          lambda: machines.LSDYNA_100MBIT,
          lambda alpha, beta: AlphaBeta(alpha, beta, name="α-β"),
          lambda m: {"alpha": m.alpha, "beta": m.beta}),
    Entry("alpha-beta-segmented", "α-β, segmented", SegmentedAlphaBeta, _AB + _SEGMENT,
          _segmented_default, _segmented("α-β, segmented"),
          _segmented_values(["alpha", "beta", "S", "alpha_r", "beta_r"]),
          note=_SEGMENTED_NOTE.format(machines.LSDYNA_100MBIT.source)),
    Entry("alpha-beta-exchange", "α-β, exchange β", SegmentedAlphaBeta, _AB + _EXCHANGE,
          _segmented_default, _segmented("α-β, exchange β"),
          _segmented_values(["alpha", "beta", "alpha_x", "beta_x"]),
          note=_SEGMENTED_NOTE.format(machines.LSDYNA_100MBIT.source)),
    Entry("alpha-beta-exchange-segmented", "α-β, exchange β, segmented", SegmentedAlphaBeta,
          _AB + _SEGMENT + _EXCHANGE + _EXCHANGE_SEGMENT,
          _segmented_default, _segmented("α-β, exchange β, segmented"),
          _segmented_values(["alpha", "beta", "S", "alpha_r", "beta_r", "alpha_x", "beta_x", "alpha_xr",
                             "beta_xr"]),
          note=_SEGMENTED_NOTE.format(machines.LSDYNA_100MBIT.source)),
    Entry("logp", "LogP", LogP, _LOGP,
          lambda: LogP(machines.KIT_VM_LOGGP.L, machines.KIT_VM_LOGGP.o, machines.KIT_VM_LOGGP.g, 2,
                       o_r=machines.KIT_VM_LOGGP.o_r, name=machines.KIT_VM_LOGGP.name,
                       source=machines.KIT_VM_LOGGP.source + ", without G"),
          lambda L, o_s, o_r, g: LogP(L=L, o=o_s, g=g, P=2, o_r=o_r, name="LogP"),
          _logp_values),
    Entry("loggp", "LogGP", LogGP, _LOGP + (Parameter("G", "s/B", "time per byte of a long message"),),
          lambda: machines.KIT_VM_LOGGP,
          lambda L, o_s, o_r, g, G: LogGP(L=L, o=o_s, g=g, P=2, o_r=o_r, G=G, name="LogGP"),
          lambda m: {**_logp_values(m), "G": m.G}),
    Entry("loggp-segmented", "LogGP, segmented G", SegmentedLogGP,
          _LOGP + (Parameter("G", "s/B", "time per byte of a message below S bytes"),
                   Parameter("S", "B", "protocol switch: first size of the upper segment (inf: none)"),
                   Parameter("G_r", "s/B", "time per byte of a message of S bytes or more")),
          lambda: SegmentedLogGP(**_loggp_args(machines.KIT_VM_LOGGP), name=machines.KIT_VM_LOGGP.name,
                                 source=machines.KIT_VM_LOGGP.source),
          lambda L, o_s, o_r, g, G, S, G_r: SegmentedLogGP(L=L, o=o_s, g=g, P=2, o_r=o_r, G=G, S=S, G_r=G_r,
                                                           name="LogGP, segmented G"),
          lambda m: {**_logp_values(m), "G": m.G, "S": m.S, "G_r": m.G_r},
          note=machines.KIT_VM_LOGGP.source + "; no switch (predict measures it: the ping-pong's, with "
               "G_r its time per byte from the switch on)"),
    Entry("loggops", "LogGOPS", LogGOPS,
          _LOGP + (Parameter("G", "s/B", "time per byte of a long message"),
                   Parameter("O", "s/B", "CPU overhead per byte (the copies), at sender and receiver"),
                   Parameter("S", "B", "eager limit: a message of more bytes goes by rendezvous (inf: none)")),
          lambda: LogGOPS(**_loggp_args(machines.KIT_VM_LOGGP), O=0.0, S=LOGGOPSIM_S,
                          name=machines.KIT_VM_LOGGP.name, source=machines.KIT_VM_LOGGP.source),
          lambda L, o_s, o_r, g, G, O, S: LogGOPS(L=L, o=o_s, g=g, P=2, o_r=o_r, G=G, O=O, S=S,  # noqa: E741
                                                  name="LogGOPS"),
          lambda m: {**_logp_values(m), "G": m.G, "O": m.O, "S": m.S},
          note=machines.KIT_VM_LOGGP.source + "; O = 0 and S = 65535 B, LogGOPSim's defaults "
               "(Hoefler, Schneider & Lumsdaine, LSAP/HPDC 2010; loggopsim_cmdline.ggo)"),
    Entry("nbl", "NBL f(L)", NBLModel,
          (Parameter("alpha", "s", "start-up per message"), Parameter("beta", "s/B", "time per byte"),
           Parameter("c2", "s/B", "2-way combine, per byte combined"),
           Parameter("c3", "s/B", "3-way combine, per byte combined")),
          _nbl_default, _nbl_build, _nbl_values, extra=r"f[1-9][0-9]*",
          extra_meaning="fN: f(N), the node bandwidth factor with N links active (no unit; f(1) = 1; "
                        "default: the paper's fitted table)",
          note=machines.DELTA.source + ", with the paper's fitted f(L) (nbl.FITTED_DELTA)"),
    Entry("nbl-exchange", "NBL, f(2) from the exchange", NBLModel,
          (Parameter("alpha", "s", "start-up per message"), Parameter("beta", "s/B", "time per byte"),
           Parameter("c2", "s/B", "2-way combine, per byte combined"),
           Parameter("c3", "s/B", "3-way combine, per byte combined")),
          _nbl_default, lambda alpha, beta, c2, c3, **f: replace(_nbl_build(alpha, beta, c2, c3, **f),
                                                                 name="NBL, f(2) from the exchange"),
          _nbl_values, extra=r"f[1-9][0-9]*",
          extra_meaning="fN: f(N) with N links active; f2 = beta_x / beta, the exchange benchmark's time per "
                        "byte over the ping-pong's (predict), the others 1",
          note=machines.DELTA.source + ", with the paper's fitted f(L) (nbl.FITTED_DELTA); predict measures f(2)"),
    Entry("nbl-exchange-segmented", "NBL, f(2) from the exchange, segmented", SegmentedNBL,
          (Parameter("alpha", "s", "start-up per message below S bytes"),
           Parameter("beta", "s/B", "time per byte below S bytes"),
           Parameter("c2", "s/B", "2-way combine, per byte combined"),
           Parameter("c3", "s/B", "3-way combine, per byte combined")) + _SEGMENT,
          lambda: SegmentedNBL(**{k: getattr(_nbl_default(), k) for k in ("alpha", "beta", "f", "c2", "c3")},
                               name=_nbl_default().name, source=_nbl_default().source),
          lambda alpha, beta, c2, c3, S, alpha_r, beta_r, **f: SegmentedNBL(
              alpha, beta, {int(k[1:]): v for k, v in f.items()}, c2, c3, S=S, alpha_r=alpha_r, beta_r=beta_r,
              name="NBL, f(2) from the exchange, segmented"),
          lambda m: {**_nbl_values(m), "S": m.S, "alpha_r": m.alpha_r, "beta_r": m.beta_r},
          extra=r"f[1-9][0-9]*",
          extra_meaning="fN: f(N) with N links active; f2 = beta_x / beta (predict), the others 1",
          note=machines.DELTA.source + ", with the paper's fitted f(L) and no switch (predict measures it)"),
    Entry("bsp", "BSP", BSP,
          (Parameter("g", "s/element", "time per element of an h-relation"),
           Parameter("l", "s", "time per superstep (synchronisation)")),
          lambda: machines.KIT_VM_BSP,
          lambda g, l: BSP(g, l, "words", name="BSP"),      # noqa: E741
          lambda m: {"g": m.g, "l": m.l}),
    Entry("twolevel", "two-level α-β", TwoLevel,
          (Parameter("alpha_intra", "s", "latency within a node"),
           Parameter("beta_intra", "s/B", "time per byte within a node"),
           Parameter("alpha_inter", "s", "latency between nodes"),
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


def names(numeric: bool = False) -> tuple:
    """The models' names (``numeric``: only those whose parameters are all numbers)."""
    return tuple(n for n, e in MODELS.items() if e.numeric or not numeric)


def get(name: str) -> Entry:
    """The entry of model ``name`` (ValueError naming the models if there is none)."""
    try:
        return MODELS[name]
    except (KeyError, TypeError):
        raise ValueError(f"model must be one of {', '.join(MODELS)}; got {name!r}") from None
