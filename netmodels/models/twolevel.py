"""Two-level α-β model: one α-β pair inside a node, another between nodes, plus packing.

A message between two ranks of the same node costs ``intra.alpha + intra.beta * n``; a
message between nodes ``inter.alpha + inter.beta * n`` (``n`` in bytes); a local copy
(a leader packing or unpacking rows) costs ``pack * n`` seconds.  How a schedule's step
is timed (loosely synchronous, the steps one after another):

- a rank handles its messages one at a time, sending and receiving at once (one port,
  full duplex): it is busy ``sum(sent) + copies`` and ``sum(received)``;
- with ``shared_channel=True`` (the paper's clusters of SMP nodes, where "all the
  processors need to communicate with other processors which are not available via
  the local shared memory") the messages leaving a node go one after another through
  its one external channel, and so do those entering it; with ``False`` every rank has
  its own path out (a switch port per processor);
- the step takes the longest of these busy times.

A single message costs exactly its α-β time; the standard (direct) exchange of ``n``
nodes of ``c`` ranks is bound by the node channel, ``c^2 (n - 1)`` inter-node messages in
a row; the multilevel exchange sends ``n - 1`` messages ``c^2`` times longer through it,
and pays a gather, a transposition and a scatter inside the node.  Both move the same
bytes between nodes: multilevel saves inter-node *latencies*, not bandwidth.
:func:`alltoall_times` gives both in closed form; the simulator
(:func:`netmodels.simulate.simulate`, *sync*) costs any schedule of
:mod:`netmodels.algorithms.alltoall` with :class:`TwoLevelRule` (nodes from its ``meta``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._check import positive, positive_int, sizes
from .alphabeta import AlphaBeta
from .step import Step, SyncRule
from . import machines


@dataclass(frozen=True)
class TwoLevel:
    """α-β inside a node (``intra``) and between nodes (``inter``), packing in s/byte."""

    intra: AlphaBeta
    inter: AlphaBeta
    pack: float = 0.0
    shared_channel: bool = True
    name: str = ""

    def __post_init__(self):
        for which in ("intra", "inter"):
            if not isinstance(getattr(self, which), AlphaBeta):
                raise ValueError(f"{which} must be an AlphaBeta, got {getattr(self, which)!r}")
        object.__setattr__(self, "pack", positive("pack", self.pack, allow_zero=True))


    #: the timing semantics the simulator uses for this model unless told otherwise
    semantics = "sync"

    def step_rule(self, schedule) -> "TwoLevelRule":
        """The step rule of the module docstring (:class:`TwoLevelRule`); nodes from
        ``schedule.meta["group_ids"]``."""
        return TwoLevelRule(self, schedule)


class TwoLevelRule(SyncRule):
    """Per rank: ``max(Σ sent + copies, Σ received)`` and, with a shared channel, the busy
    time of its node's channel out and in (every rank of the node is charged it)."""

    def __init__(self, model: TwoLevel, schedule):
        p = schedule.nprocs
        super().__init__(model, p)
        groups = (schedule.meta or {}).get("group_ids") or ((0,) * p,)
        self.node = np.asarray(groups[0], dtype=np.int64) if len(groups) else np.zeros(p, dtype=np.int64)
        self.nnodes = int(self.node.max(initial=0)) + 1

    def costs(self, step: Step):
        m, p, node = self.model, step.nprocs, self.node
        a, b = node[step.src], node[step.dst]
        inter = a != b
        t = np.where(inter, m.inter.alpha + m.inter.beta * step.nbytes,
                     m.intra.alpha + m.intra.beta * step.nbytes)
        send = np.bincount(step.src, t, minlength=p).astype(float)
        send += np.bincount(step.copy_src, m.pack * step.copy_count * float(step.elem_bytes), minlength=p)
        comm = np.maximum(send, np.bincount(step.dst, t, minlength=p))
        if m.shared_channel and inter.any():
            ti = np.where(inter, t, 0.0)
            chan = np.maximum(np.bincount(a, ti, minlength=self.nnodes), np.bincount(b, ti, minlength=self.nnodes))
            np.maximum(comm, chan[node], out=comm)
        return comm, None


def _t(ab: AlphaBeta, nbytes):
    return ab.alpha + ab.beta * nbytes


def alltoall_times(n: int, c: int, nbytes, model: TwoLevel):
    """``(standard, multilevel)`` alltoall times (s) on ``n`` nodes of ``c`` ranks.

    ``nbytes``: bytes each rank sends each rank (scalar or array).  Closed forms of
    the simulator's time for the registered ``alltoall.direct`` or ``alltoall.multilevel`` on ``n*c`` ranks,
    ``nbytes`` one-byte elements (``elem_bytes=1``), ``nodes=c``,
    with ``Ti(x)``, ``Te(x)`` the α-β times inside and between nodes and ``g = pack``:

    - standard (one step): ``max(S, C)``, a rank's port ``S = (c-1) Ti(m) + c(n-1) Te(m)``,
      the node channel ``C = c^2 (n-1) Te(m)`` (``C = 0`` without a shared channel);
    - multilevel (``c >= 2``, ``n >= 2``), four steps:
      gather ``max((c-1) Ti(m) + (c-1)(n-1) Ti(cm), (c-1) Ti(m) + g (n-1) c m)``
      (the leader receives; it also packs its own rows), transposition
      ``g (n-1) c^2 m``, leaders ``(n-1) Te(c^2 m)``, scatter
      ``(c-1)(n-1) Ti(cm) + g (n-1) c m``.  With ``c = 1`` it is the standard exchange,
      with ``n = 1`` both are ``(c-1) Ti(m)``.
    """
    n = positive_int("n", n)
    c = positive_int("c", c)
    m = sizes("nbytes", nbytes)
    ti, te, g = model.intra, model.inter, model.pack
    if n == 1:
        t = (c - 1) * _t(ti, m)
        return t, t
    port = (c - 1) * _t(ti, m) + c * (n - 1) * _t(te, m)
    channel = c * c * (n - 1) * _t(te, m) if model.shared_channel else 0 * m
    standard = np.maximum(port, channel)
    if c == 1:
        return standard, standard
    gather = np.maximum((c - 1) * _t(ti, m) + (c - 1) * (n - 1) * _t(ti, c * m),
                        (c - 1) * _t(ti, m) + g * (n - 1) * c * m)
    multilevel = (gather + g * (n - 1) * c * c * m + (n - 1) * _t(te, c * c * m)
                  + (c - 1) * (n - 1) * _t(ti, c * m) + g * (n - 1) * c * m)
    return standard, multilevel


def origin2000(pack: float = 0.0, shared_channel: bool = True, megabits: bool = False) -> TwoLevel:
    """The paper's Origin 2000 pair (``machines.ORIGIN2000_INTRA`` / ``_INTER``).

    ``megabits=True`` reads the paper's "Mb/s" as megabits per second (bandwidths / 8),
    the other possible reading; ``pack`` (s/byte) is not given by the paper.
    """
    intra, inter = machines.ORIGIN2000_INTRA, machines.ORIGIN2000_INTER
    if megabits:
        intra = AlphaBeta(intra.alpha, intra.beta * 8, intra.name + " [Mbit/s]", intra.source)
        inter = AlphaBeta(inter.alpha, inter.beta * 8, inter.name + " [Mbit/s]", inter.source)
    return TwoLevel(intra, inter, pack, shared_channel,
                    "Origin 2000 pair" + (" (Mbit/s reading)" if megabits else ""))


def table3() -> list[dict]:
    """Table 3 of the paper recomputed: per processor count, from the NZC of
    ``machines.LSDYNA_TABLE3_NZC``: speedup over 1 processor and efficiency (standard
    method), the multilevel gain ``NZC_std / NZC_ml - 1`` (the printed "Speedup") and the
    run-time reduction ``1 - NZC_ml / NZC_std``; fractions, not percent."""
    nzc = machines.LSDYNA_TABLE3_NZC
    t1 = nzc[1]["standard"]
    rows = []
    for p, row in nzc.items():
        if row["multilevel"] is None:
            continue
        std, ml = row["standard"], row["multilevel"]
        rows.append({"p": p, "speedup": t1 / std, "efficiency": t1 / std / p,
                     "gain": std / ml - 1, "reduction": 1 - ml / std})
    return rows


def crossover(n: int, c: int, model: TwoLevel, lo: float = 1.0, hi: float = 1e9) -> float | None:
    """Bytes per pair above which the multilevel exchange is slower (None: no sign change
    in ``[lo, hi]``), found with :func:`scipy.optimize.brentq` on the closed forms."""
    from scipy.optimize import brentq

    def diff(m):
        std, ml = alltoall_times(n, c, m, model)
        return float(ml - std)

    if diff(lo) * diff(hi) > 0:
        return None
    return brentq(diff, lo, hi, xtol=1e-6, rtol=1e-12)


def emulated(intra: AlphaBeta, delay: float) -> TwoLevel:
    """Nodes emulated on one machine (``bench-alltoall --ppn C --inter-delay D``).

    Every message costs the machine's own α-β (``intra``); one to another emulated node
    costs ``delay`` seconds more, busy-waited by its sender, each rank on its own (no
    shared channel).  Packing is taken as free (memory copies at GB/s).
    """
    d = positive("delay", delay, allow_zero=True)
    inter = AlphaBeta(intra.alpha + d, intra.beta, "emulated, between nodes")
    return TwoLevel(intra, inter, 0.0, shared_channel=False, name=f"emulated nodes, delay {d:g} s")
