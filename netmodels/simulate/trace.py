"""Traces: what every rank does over time, operation by operation, as columns of arrays.

A :class:`Trace` holds one row per operation: its ``rank``, its ``peer`` (the other end of a
message, -1 for none), its ``step`` (of the schedule), its ``kind`` (a code into
``kinds``) and its ``start`` and ``end`` (s).  Six arrays, about :data:`ROW_BYTES` bytes a
row, never one Python object per operation.  :func:`netmodels.simulate.simulate` returns
one when asked (``trace=True``), with the kinds of :data:`KINDS`, each named after the model
term that prices it:

* ``send overhead`` (o_s): the sender's CPU sends a message (rank: sender, peer: receiver);
* ``wire``: a message from the end of its send overhead until the receiver takes its first
  byte (L, plus any wait for the receiver's CPU or gap; rank: sender, peer: receiver).  A
  step-synchronous model (α-β, NBL, BSP, two-level α-β, LoP), which prices a rank's whole
  communication of a step at once, gives one ``wire`` row per rank and step (peer -1);
* ``receive overhead`` (o_r): the receiver's CPU takes the message (rank: receiver);
* ``gap`` (g, and g + (m - 1) G after a long send): the CPU is free and an operation is
  ready, but the network interface's gap holds it;
* ``combine``: the receiver combines the message's elements (``combine`` per element); a
  step-synchronous model's ``comp``;
* ``bytes`` ((m - 1) G): the receiver takes the bytes after the first (LogGP, as LogGOPSim
  charges them), between the first byte and the receive overhead;
* ``wire (unexpected)``: a ``wire`` whose message was taken before its receive was posted
  (*loggopsim* only: LogGOPSim's unexpected queue);
* ``late receive``: the posting of a receive whose message was already taken (*loggopsim*
  only; zero length): LogGOPSim's ``-V`` draws that receive's overhead there.

Per message under the LogP family (every semantics), per rank and step under the
step-synchronous models.  An operation of no length is left out (a ``gap`` that does not
hold anything, ``bytes`` of a one-byte message), except a send or receive overhead, a
``wire`` and a ``late receive`` (LogGOPSim draws them with o = 0 or L = 0 too).

:func:`loggopsim_view` turns a *loggopsim* trace into the lines LogGOPSim's visualisation
file (``LogGOPSim -V FILE``) holds, and :func:`read_viz` reads such a file, so the two can be
compared operation by operation (``benchmarks/loggopsim_traces.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: the kinds of a simulated trace, by code (see the module docstring)
KINDS = ("send overhead", "wire", "receive overhead", "gap", "combine", "bytes", "wire (unexpected)",
         "late receive")
SEND, WIRE, RECV, GAP, COMBINE, BYTES, UNEXPECTED, LATE = range(len(KINDS))
#: bytes of one row: rank, peer, step (int32), kind (int8), start, end (float64)
ROW_BYTES = 4 + 4 + 4 + 1 + 8 + 8
#: a trace is refused when its rows, with the copies made while they are gathered and
#: sorted (this many times the rows), would need more memory than is available
WORKING_COPIES = 3
#: rows per message at most (LogP family: send overhead, gap, wire, bytes, gap, receive
#: overhead, combine, late receive) and per rank and step (step-synchronous: wire, combine)
ROWS_PER_MESSAGE = 8
ROWS_PER_RANK_STEP = 2


@dataclass(frozen=True, eq=False)
class Trace:
    """Operations of a run, one row each (see the module docstring); times in s.

    nprocs: ranks.  rank, peer, step: int32 (peer -1: none).  kind: int8 codes into
    ``kinds``.  start, end: float64 (s), ``end >= start``.  semantics, model: what made it
    (a measured trace names its own kinds and semantics)."""

    nprocs: int
    rank: np.ndarray
    peer: np.ndarray
    step: np.ndarray
    kind: np.ndarray
    start: np.ndarray
    end: np.ndarray
    kinds: tuple = KINDS
    semantics: str = ""
    model: str = ""
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        if isinstance(self.nprocs, bool) or not isinstance(self.nprocs, (int, np.integer)) or self.nprocs < 1:
            raise ValueError(f"nprocs must be an integer >= 1, got {self.nprocs!r}")
        object.__setattr__(self, "nprocs", int(self.nprocs))
        cols = self._columns()
        if cols["rank"].size:
            _check_ranges(cols, self.nprocs, len(self.kinds))
        for k, a in cols.items():
            object.__setattr__(self, k, a)
        object.__setattr__(self, "kinds", tuple(self.kinds))

    def _columns(self) -> dict:
        """The six columns as 1-D arrays of their dtypes, one entry per operation each."""
        cols = {}
        for name, dtype in (("rank", np.int32), ("peer", np.int32), ("step", np.int32), ("kind", np.int8),
                            ("start", np.float64), ("end", np.float64)):
            a = np.asarray(getattr(self, name))
            if a.ndim != 1:
                raise ValueError(f"{name} must be a 1-D array, got shape {a.shape}")
            if dtype is not np.float64 and a.size and a.dtype.kind not in "iu":
                raise ValueError(f"{name} must hold integers, got {a.dtype}")
            cols[name] = a.astype(dtype, copy=False)
        n = cols["rank"].size
        if any(a.size != n for a in cols.values()):
            raise ValueError("rank, peer, step, kind, start and end must have one entry per operation: "
                             + ", ".join(f"{k} {a.size}" for k, a in cols.items()))
        return cols

    def __len__(self) -> int:
        return int(self.rank.size)

    @property
    def nsteps(self) -> int:
        """One more than the largest step (0 for an empty trace)."""
        return int(self.step.max()) + 1 if len(self) else 0

    @property
    def span(self) -> tuple[float, float]:
        """(first start, last end) of the trace, s; (0, 0) when empty."""
        if not len(self):
            return 0.0, 0.0
        return float(self.start.min()), float(self.end.max())

    def select(self, mask) -> "Trace":
        """The rows where ``mask`` (boolean, or indices) holds, as a trace of their own."""
        return Trace(self.nprocs, self.rank[mask], self.peer[mask], self.step[mask], self.kind[mask],
                     self.start[mask], self.end[mask], self.kinds, self.semantics, self.model, self.meta)

    def ordered(self) -> "Trace":
        """The rows by rank, then start, then kind."""
        return self.select(np.lexsort((self.kind, self.start, self.rank)))

    def of_kind(self, name: str) -> "Trace":
        """The rows of the kind called ``name``."""
        if name not in self.kinds:
            raise ValueError(f"kind must be one of {', '.join(self.kinds)}; got {name!r}")
        return self.select(self.kind == self.kinds.index(name))

    def step_ends(self) -> np.ndarray:
        """``(nprocs, nsteps)`` array: per rank and step, the end of its last operation of the
        step (s), NaN where the rank has none (a ``late receive`` counts too)."""
        out = np.full(self.nprocs * max(self.nsteps, 0), -np.inf)
        np.maximum.at(out, self.rank.astype(np.int64) * self.nsteps + self.step, self.end)
        out[np.isneginf(out)] = np.nan
        return out.reshape(self.nprocs, self.nsteps)

    def to_json(self) -> dict:
        """A JSON-ready dict (lists); :func:`from_json` reads it back."""
        return {"nprocs": self.nprocs, "kinds": list(self.kinds), "semantics": self.semantics,
                "model": self.model, "meta": self.meta, "time_unit": "s",
                "columns": {k: getattr(self, k).tolist() for k in ("rank", "peer", "step", "kind", "start", "end")}}


def _check_ranges(cols: dict, nprocs: int, nkinds: int) -> None:
    """ValueError unless the (non-empty) columns name ranks, peers, kinds and steps that exist
    and finite times (s) with end >= start."""
    if cols["rank"].min() < 0 or cols["rank"].max() >= nprocs:
        raise ValueError(f"rank must lie in 0..{nprocs - 1}")
    if cols["peer"].min() < -1 or cols["peer"].max() >= nprocs:
        raise ValueError(f"peer must lie in -1..{nprocs - 1}")
    if cols["kind"].min() < 0 or cols["kind"].max() >= nkinds:
        raise ValueError(f"kind must lie in 0..{nkinds - 1} (codes of kinds)")
    if cols["step"].min() < 0:
        raise ValueError("step must be >= 0")
    s, e = cols["start"], cols["end"]
    if not (np.isfinite(s).all() and np.isfinite(e).all()) or (e < s).any():
        raise ValueError("start and end must be finite times (s) with end >= start")


def from_json(doc: dict) -> Trace:
    """The :class:`Trace` of :meth:`Trace.to_json`'s dict (ValueError if it is not one)."""
    try:
        c = doc["columns"]
        return Trace(doc["nprocs"], np.asarray(c["rank"], np.int64), np.asarray(c["peer"], np.int64),
                     np.asarray(c["step"], np.int64), np.asarray(c["kind"], np.int64),
                     np.asarray(c["start"], float), np.asarray(c["end"], float), tuple(doc["kinds"]),
                     doc.get("semantics", ""), doc.get("model", ""), doc.get("meta", {}))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a trace (missing or bad {exc})") from None


class Collector:
    """Rows gathered chunk by chunk (one chunk per step), joined once by :meth:`trace`."""

    def __init__(self, nprocs: int):
        self.nprocs = nprocs
        self.parts: list[tuple] = []

    def add(self, kind: int, rank, peer, step, start, end, keep_empty: bool = False) -> None:
        """Rows of one ``kind`` (scalars broadcast); rows of no length are left out unless
        ``keep_empty``."""
        start, end = np.broadcast_arrays(np.asarray(start, float), np.asarray(end, float))
        end = np.maximum(end, start)                 # a rounding error never makes an end early
        rank, peer, step = (np.broadcast_to(np.asarray(x), start.shape) for x in (rank, peer, step))
        if not keep_empty:
            keep = end > start
            if not keep.all():
                rank, peer, step, start, end = rank[keep], peer[keep], step[keep], start[keep], end[keep]
        if start.size:
            self.parts.append((kind, rank.astype(np.int32), peer.astype(np.int32),
                               step.astype(np.int32), start.copy(), end.copy()))

    def trace(self, semantics: str, model: str) -> Trace:
        cols = [[] for _ in range(6)]
        for kind, *rest in self.parts:
            cols[0].append(np.full(rest[0].size, kind, np.int8))
            for j, a in enumerate(rest):
                cols[j + 1].append(a)
        empty = (np.int8, np.int32, np.int32, np.int32, float, float)
        kind, rank, peer, step, start, end = (np.concatenate(c) if c else np.zeros(0, d) for c, d in zip(cols, empty))
        self.parts = []
        return Trace(self.nprocs, rank, peer, step, kind, start, end, KINDS, semantics, model).ordered()


def estimate_rows(schedule, clocked: bool) -> int:
    """An upper bound of a trace's rows for ``schedule`` (an ArraySchedule): per message
    :data:`ROWS_PER_MESSAGE` under a clocked model (the LogP family), else per rank and step
    :data:`ROWS_PER_RANK_STEP`, at most two ranks per transfer."""
    transfers = sum(len(s) for s in schedule.steps)
    if clocked:
        return ROWS_PER_MESSAGE * transfers
    return ROWS_PER_RANK_STEP * sum(min(2 * len(s), schedule.nprocs) for s in schedule.steps)


def refusal(rows: float, nprocs: int, memory: float | None) -> str | None:
    """One line refusing a trace of about ``rows`` operations on ``nprocs`` ranks that would not
    fit in ``memory`` bytes (None: unknown, never refused), or None when it fits."""
    need = rows * ROW_BYTES * WORKING_COPIES
    if memory is None or need <= memory:
        return None
    return (f"a trace of P = {nprocs} ranks would hold up to {rows:.3g} operations, about {need / 2**30:.3g} GiB "
            f"while it is built ({memory / 2**30:.3g} GiB are available): trace fewer ranks or leave the trace out")


# ---------------------------------------------------------------- LogGOPSim's visualisation file
#: the line kinds of LogGOPSim's ``-V`` file compared here (``noise`` lines, of no length
#: without OS noise, and ``loclop``, local computation the kit's schedules have none of, are not)
VIZ_KINDS = ("osend", "orecv", "transmission")


def read_viz(text: str) -> dict:
    """The lines of a LogGOPSim visualisation file (``LogGOPSim -V FILE``), as
    ``{"numranks": P, "osend": [(rank, start, end)], "orecv": [(rank, start, end)],
    "transmission": [(src, dst, start, end, size)], "noise": [(rank, start, end)]}``, times in
    LogGOPSim's integer unit (sorted lists).  ValueError on a line it does not know."""
    out = {"numranks": None, "osend": [], "orecv": [], "transmission": [], "noise": [], "loclop": []}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip().rstrip(";").strip()
        if not line:
            continue
        word, *rest = line.split()
        try:
            if word == "numranks":
                out["numranks"] = int(rest[0])
            elif word in ("osend", "orecv", "noise", "loclop"):
                rank, _cpu, start, end = (int(v) for v in rest[:4])
                out[word].append((rank, start, end))
            elif word == "transmission":
                src, dst, start, end, size = (int(v) for v in rest[:5])
                out[word].append((src, dst, start, end, size))
            else:
                raise ValueError(word)
        except (ValueError, IndexError):
            raise ValueError(f"line {n} is no line of LogGOPSim's visualisation file: {line[:80]!r}") from None
    for k in VIZ_KINDS + ("noise", "loclop"):
        out[k].sort()
    return out


def loggopsim_view(trace: Trace, o: float, unit: float = 1e-12, sizes=None) -> dict:
    """The lines LogGOPSim's ``-V`` writes for the run of ``trace`` (a *loggopsim* trace of a
    LogGP model with ``o_s = o_r = o``, s), as :func:`read_viz` returns them, times in
    ``unit`` (s): ``osend`` = a send overhead; ``transmission`` = a ``wire`` (a message
    taken after its receive was posted; LogGOPSim draws none for an unexpected one), with its
    size in bytes from ``sizes`` (``{(src, dst, step): bytes}``; 0 if not given); ``orecv`` = a
    receive overhead of such a message, and for an unexpected message ``[posted, posted + o]``
    at its ``late receive`` (where LogGOPSim draws it, though its CPU took the message when
    it arrived)."""
    if trace.semantics != "loggopsim":
        raise ValueError(f"trace must be one of the loggopsim semantics, got {trace.semantics!r}")
    q = lambda x: np.rint(np.asarray(x) / unit).astype(np.int64)  # noqa: E731
    k, r = trace.kind, trace.rank
    out = {"numranks": trace.nprocs}
    m = k == SEND
    out["osend"] = sorted(zip(r[m].tolist(), q(trace.start[m]).tolist(), q(trace.end[m]).tolist()))
    m = k == WIRE
    sizes = sizes or {}
    out["transmission"] = sorted(
        (int(s), int(d), a, b, int(sizes.get((int(s), int(d), int(t)), 0)))
        for s, d, t, a, b in zip(r[m], trace.peer[m], trace.step[m], q(trace.start[m]).tolist(),
                                 q(trace.end[m]).tolist()))
    # the receive overheads of messages taken after their receive was posted: those a wire
    # (not an unexpected one) leads to, matched by receiver, sender and step
    expected = {}
    for s, d, t in zip(r[m].tolist(), trace.peer[m].tolist(), trace.step[m].tolist()):
        expected[(d, s, t)] = expected.get((d, s, t), 0) + 1
    orecv = []
    m = np.flatnonzero(k == RECV)
    for i in m[np.argsort(trace.start[m], kind="stable")]:
        key = (int(r[i]), int(trace.peer[i]), int(trace.step[i]))
        if expected.get(key, 0) > 0:
            expected[key] -= 1
            orecv.append((key[0], int(q(trace.start[i])), int(q(trace.end[i]))))
    m = k == LATE
    ticks_o = int(q(o))
    orecv += [(int(a), int(b), int(b) + ticks_o) for a, b in zip(r[m], q(trace.start[m]).tolist())]
    out["orecv"] = sorted(orecv)
    return out


def compare_viz(kit: dict, reference: dict, with_sizes: bool = True) -> dict:
    """Operation by operation, the lines of :data:`VIZ_KINDS` of two ``-V`` files (as
    :func:`read_viz` or :func:`loggopsim_view` give them): per kind, how many lines each has
    and how many are equal (as multisets), and whether all are (``equal``)."""
    from collections import Counter

    out, equal = {}, kit.get("numranks") == reference.get("numranks")
    for kind in VIZ_KINDS:
        a, b = kit[kind], reference[kind]
        if not with_sizes and kind == "transmission":
            a, b = [x[:4] for x in a], [x[:4] for x in b]
        same = sum((Counter(map(tuple, a)) & Counter(map(tuple, b))).values())
        out[kind] = {"kit": len(a), "loggopsim": len(b), "equal": same}
        equal &= same == len(a) == len(b)
    out["equal"] = bool(equal)
    return out
