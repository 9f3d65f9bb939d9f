"""Do Snake and Fence desynchronise while their pipelines fill and drain?

Littlefield (1992, section 4.2) fitted f(2), f(3), f(4), f(6) of the NBL model to the
measured times of Snake and Fence on the DELTA and got 1.1, 1.3, 3.9, 5.1: two or three
links seem to overlap almost perfectly, four or six hardly at all, against the test
jig.  The paper *speculates* that in the fill and drain stages "data blocks become
separated in the mesh in such a way that only a single communication link is actually
in use when the model says that two or three should be".

The loosely synchronous model cannot say: it charges every node the links the schedule
gives it in a step.  :func:`simulate_fluid`, a third timing semantics beside the
simulator's *sync* and *stepwise* (named for what it is: self-timed, fluid bandwidth
sharing), runs a schedule *self-timed* on a machine
whose node bandwidth is shared by the transfers actually in progress at that moment:

* a rank begins step t when it has finished its part of its previous step (all its
  transfers done, then ``c_k S`` for a k-way combine of an S-element block), and
  spends ``α`` per message of the step on start-up (``k α`` for k messages);
* a transfer's data starts when both ends have done their start-ups (plus a random
  delay, exponential with mean ``noise`` s, if given); it moves ``S`` elements that
  take ``β S`` alone, and while ``n`` transfers are moving at a node each goes at
  ``1 / f_true(n)`` of a link's speed (``f_true(n) = n``: the node's bandwidth is one
  link's, the nominal NBL machine the test jig measured for long messages); a transfer
  goes at the speed its busier end allows.

In lockstep this machine costs every step what :meth:`~netmodels.models.nbl.NBLModel.step_time`
says with f = f_true: the loosely synchronous model.  Self-timed, a node charged L links may find fewer of them busy at
once.  :func:`fit_f` then fits f(2), f(3), f(4), f(6) to the simulated times by least
squares (the model's time is linear in f; α, β, c2, c3 known), as the paper fitted its
measurements.  Machines are :class:`~netmodels.models.nbl.NBLModel` (their own f unused
here: f is what is simulated or fitted); sizes count elements of ``elem_bytes`` bytes.
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from dataclasses import replace

import numpy as np

from .._check import positive
from ..algorithms import registry
from ..algorithms.arrays import as_transfers
from ..models import nbl, nbl_paper

#: the link counts whose f the paper fitted
FITTED_LINKS = (2, 3, 4, 6)


def simulate_fluid(schedule, machine: nbl.NBLModel, f_true=None, noise: float = 0.0, seed=None):
    """Self-timed completion time (s) of ``schedule`` on ``machine`` (see the module doc).

    ``f_true(n)``: the slowdown of each of n transfers moving at once at a node, the f of
    an :class:`~netmodels.models.nbl.NBLModel` (a table ``{L: f(L)}`` or a callable; default
    ``n``, the nominal NBL machine); f and the combining costs are read through the model.  Returns ``(time, finish)`` with every rank's finish.
    """
    sched = as_transfers(schedule)
    noise = positive("noise", noise, allow_zero=True)
    rng = np.random.default_rng(seed)
    fluid = _Fluid(sched, replace(machine, f=float if f_true is None else f_true), rng, noise)
    fluid.run()
    return float(fluid.finish.max(initial=0.0)), fluid.finish


class _Fluid:
    """One self-timed run of :func:`simulate_fluid`: the schedule's transfers as columns, per
    (rank, step) its transfers and combining time, each transfer's random delay (exponential,
    mean ``noise`` s, drawn with ``rng``), and the transfers waiting to move (a heap of
    ``(start, transfer)``)."""

    def __init__(self, sched, model: nbl.NBLModel, rng, noise: float):
        self.model, self.alpha = model, model.alpha
        self.beta = model.beta * model.elem_bytes           # beta per element
        # per rank: its steps in order; per (rank, step): transfers and combine time
        self.steps_of, self.members = defaultdict(list), defaultdict(list)
        self.combine_time = defaultdict(float)
        src, dst, cnt, stp = [], [], [], []
        for t, step in enumerate(sched.steps):
            blocks = defaultdict(int)
            for tr in step:
                i = len(src)
                src.append(tr.src), dst.append(tr.dst), cnt.append(tr.count), stp.append(t)
                for r in (tr.src, tr.dst):
                    if not self.steps_of[r] or self.steps_of[r][-1] != t:
                        self.steps_of[r].append(t)
                    self.members[r, t].append(i)
                if tr.combine:
                    blocks[tr.dst, tr.start, tr.count] += 1
            for (r, _, c), k in blocks.items():
                self.combine_time[r, t] += model.combine_cost(k + 1) * c * model.elem_bytes
        self.src, self.dst, self.cnt, self.stp = np.array(src), np.array(dst), np.array(cnt, dtype=float), stp
        self.nprocs = sched.nprocs
        self.delay = rng.exponential(noise, len(src)) if noise > 0 else np.zeros(len(src))
        self.begin = {}
        self.pending = {key: len(v) for key, v in self.members.items()}
        self.position = defaultdict(int)          # index into steps_of[r] of the rank's current step
        self.finish = np.zeros(sched.nprocs)
        self.heap = []

    def start_step(self, r, t, when):
        """Rank r begins step t at ``when``: each transfer whose other end has begun it too
        starts after both ends' start-ups (plus its delay)."""
        src, dst, members = self.src, self.dst, self.members
        self.begin[r, t] = when
        for i in members[r, t]:
            other = dst[i] if src[i] == r else src[i]
            if (other, t) in self.begin:
                s, d = src[i], dst[i]
                go = max(self.begin[s, t] + self.alpha * len(members[s, t]),
                         self.begin[d, t] + self.alpha * len(members[d, t]))
                heapq.heappush(self.heap, (go + self.delay[i], i))

    def transfer_done(self, i, now):
        """Transfer i has moved its data at ``now``: an end whose step it completes combines,
        then begins its next step."""
        t = self.stp[i]
        for r in (self.src[i], self.dst[i]):
            self.pending[r, t] -= 1
            if self.pending[r, t] == 0:
                ready = now + self.combine_time[r, t]
                self.finish[r] = ready
                self.position[r] += 1
                if self.position[r] < len(self.steps_of[r]):
                    self.start_step(r, self.steps_of[r][self.position[r]], ready)

    def run(self):
        """Every rank's steps, self-timed, until no transfer waits or moves (fills ``finish``);
        ``active``: the transfers moving, ``rem``: the data each has left (s, alone)."""
        src, dst, cnt, heap = self.src, self.dst, self.cnt, self.heap
        for r in range(self.nprocs):
            if self.steps_of[r]:
                self.start_step(r, self.steps_of[r][0], 0.0)
        active = np.zeros(0, dtype=np.int64)
        rem = np.zeros(0)
        busy = np.zeros(self.nprocs, dtype=np.int64)
        now = 0.0
        slow = np.array([0.0] + [self.model.f_of(k) for k in range(1, 64)])
        while heap or active.size:
            t_next = heap[0][0] if heap else math.inf
            if active.size:
                rate = 1.0 / slow[np.maximum(busy[src[active]], busy[dst[active]])]
                t_next = min(now + (rem / rate).min(), t_next)
                rem = rem - rate * (t_next - now)
                done = rem <= 1e-12 * self.beta * max(cnt.max(), 1.0)
                for i in active[done]:
                    busy[src[i]] -= 1
                    busy[dst[i]] -= 1
                    self.transfer_done(i, t_next)
                active, rem = active[~done], rem[~done]
            now = t_next
            new = []
            while heap and heap[0][0] <= now:
                new.append(heapq.heappop(heap)[1])
            if new:
                new = np.array(new, dtype=np.int64)
                np.add.at(busy, src[new], 1)
                np.add.at(busy, dst[new], 1)
                active = np.concatenate([active, new])
                rem = np.concatenate([rem, self.beta * cnt[new]])


def model_time(algorithm: str, W: int, H: int, N: int, S: int, machine: nbl.NBLModel, f) -> float:
    """The loosely synchronous NBL time (s) of Snake or Fence with f (a table or a callable)."""
    return nbl_paper.time(algorithm, N, W, H, S, replace(machine, f=f))


def design_row(algorithm: str, W: int, H: int, N: int, S: int, machine: nbl.NBLModel):
    """``(known, coefficients)``: the model time is ``known + Σ_L coefficients[L] f(L)``
    (s), L in :data:`FITTED_LINKS`; f(1) = 1 is in ``known``.  Read off the model's time,
    which is linear in the f(L): ``known`` with every fitted f(L) = 0, a coefficient the
    growth when one f(L) is 1."""
    def t(fitted):
        return model_time(algorithm, W, H, N, S, machine, lambda L: fitted.get(L, 1.0 if L == 1 else 0.0))

    known = t({})
    return known, {L: t({L: 1.0}) - known for L in FITTED_LINKS}


def fit_f(rows, machine: nbl.NBLModel) -> dict:
    """f(2), f(3), f(4), f(6) fitted by least squares (relative residuals) to ``rows`` of
    ``(algorithm, W, H, N, S, seconds)``."""
    A, b = [], []
    for algorithm, W, H, N, S, t in rows:
        known, coef = design_row(algorithm, W, H, N, S, machine)
        A.append([coef[L] / t for L in FITTED_LINKS])
        b.append((t - known) / t)
    x, *_ = np.linalg.lstsq(np.array(A), np.array(b), rcond=None)
    return {L: float(v) for L, v in zip(FITTED_LINKS, x)}


def _grid(meshes, vector_lengths, blocks):
    """``(algorithm, W, H, N, S)`` of Snake and Fence on every mesh, vector length and block
    size where N is a multiple of S and there are at least three blocks."""
    for W, H in meshes:
        for N in vector_lengths:
            for S in blocks:
                if N % S or N // S < 3:
                    continue
                for algorithm in ("Snake", "Fence"):
                    yield algorithm, W, H, N, S


def _rows(meshes, vector_lengths, blocks, machine, time_of):
    """Rows ``(algorithm, W, H, N, S, simulated s, lockstep nominal s)``: ``time_of(schedule)``
    against the nominal model's closed form, on every case of :func:`_grid`."""
    rows = []
    for algorithm, W, H, N, S in _grid(meshes, vector_lengths, blocks):
        sched = registry.build(f"allreduce.{algorithm.lower()}", W * H, N, block=S, mesh=(W, H))
        rows.append((algorithm, W, H, N, S, time_of(sched),
                     model_time(algorithm, W, H, N, S, machine, nbl.NOMINAL)))
    return rows


def experiment(meshes, vector_lengths, blocks, machine: nbl.NBLModel, noise: float = 0.0, seed: int = 0):
    """Snake and Fence on every mesh, vector length and block size (N a multiple of S),
    self-timed on the nominal machine: rows ``(algorithm, W, H, N, S, simulated s,
    lockstep nominal s)`` for :func:`fit_f`."""
    return _rows(meshes, vector_lengths, blocks, machine,
                 lambda sched: simulate_fluid(sched, machine, noise=noise, seed=seed)[0])


def experiment_engine(meshes, vector_lengths, blocks, machine: nbl.NBLModel, noise: float = 0.0,
                      seed: int = 0, semantics: str = "stepwise"):
    """As :func:`experiment`, with the vectorised simulator's NBL rules instead of the fluid
    machine (:func:`netmodels.simulate.simulate` with the nominal f(L) = L, ``semantics``
    and ``noise``): there a node is charged the links the schedule gives it in a step,
    whenever its messages actually move."""
    from .engine import simulate

    model = replace(machine, f=nbl.NOMINAL)
    return _rows(meshes, vector_lengths, blocks, machine,
                 lambda sched: simulate(sched, model, semantics=semantics, noise=noise, seed=seed).time)


def paper_grid():
    """The paper's experiments (section 4.2): Snake and Fence on its meshes, vector lengths
    and blocks from 20 to 600 doubles, where there are at least three blocks:
    ``(algorithm, W, H, N, S)``."""
    from ..models.machines import DELTA_MESHES, DELTA_VECTOR_LENGTHS

    return [(a, W, H, N, S) for a in ("Snake", "Fence") for W, H in DELTA_MESHES
            for N in DELTA_VECTOR_LENGTHS for S in (20, 60, 120, 300, 600) if N // S >= 3]


def lockstep_rows(machine: nbl.NBLModel, f, grid=None, factor=1.0):
    """Rows for :func:`fit_f`: the loosely synchronous times of ``grid`` (default
    :func:`paper_grid`) on ``machine`` with f table ``f``, times ``factor`` (a scalar or
    one per row)."""
    grid = paper_grid() if grid is None else grid
    factor = np.broadcast_to(np.asarray(factor, dtype=float), (len(grid),))
    return [(a, W, H, N, S, k * model_time(a, W, H, N, S, machine, f))
            for (a, W, H, N, S), k in zip(grid, factor)]
