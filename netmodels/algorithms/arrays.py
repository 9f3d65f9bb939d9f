"""Schedules in columnar form: per step, NumPy arrays ``src, dst, start, count, combine``.

A :class:`~netmodels.algorithms.schedule.Schedule` holds one :class:`Transfer` object per
message; at 10^6 ranks that is tens of millions of Python objects.  An
:class:`ArraySchedule` holds the same information as one :class:`ArrayStep` per step,
each a set of equal-length columns, with the same step semantics (see
:mod:`netmodels.algorithms.schedule`): transfer ``i`` of a step sends the block
``[start[i], start[i] + count[i])`` of rank ``src[i]``'s vector as it was at the
beginning of the step to rank ``dst[i]``, which combines (``combine[i]``) or copies it
once every transfer of the step has arrived, in column order.

An optional sixth column ``dst_start`` (None when absent) holds the receive offsets of
:attr:`Transfer.dst_start <netmodels.algorithms.schedule.Transfer.dst_start>`: present,
it is where every block of the step lands (equal to ``start`` where the transfer has no
receive offset); rows with ``src == dst`` are then local copies.  A step without it
behaves exactly as before.

Columns that are the same for every transfer of a step (a barrier's ``count = 0``,
``combine = False``) may be passed as scalars: they are stored as zero-stride views
(:func:`numpy.broadcast_to`), so they cost no memory.  Ranks are ``int32`` (so
``nprocs < 2**31``), blocks ``int64``, in vector *elements*.

Every algorithm's builder returns this form (:mod:`netmodels.algorithms.registry`);
``to_schedule`` and ``from_schedule`` convert exactly:

    >>> from netmodels.algorithms import barriers
    >>> a = barriers.dissemination(5)
    >>> a.nsteps, a.ntransfers
    (3, 15)
    >>> ArraySchedule.from_schedule(a.to_schedule()).to_schedule() == a.to_schedule()
    True
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .schedule import Schedule, Transfer, check_size

RANK = np.int32
ELEM = np.int64


def _column(values, n: int, dtype, name: str) -> np.ndarray:
    """``values`` as a read-only 1-D array of ``n`` items (a scalar is broadcast, not copied)."""
    a = np.asarray(values)
    if a.ndim == 0:
        return np.broadcast_to(a.astype(dtype), (n,))
    if a.ndim != 1 or a.shape[0] != n:
        raise ValueError(f"{name} must be a scalar or a 1-D array of {n} items, got shape {a.shape}")
    if dtype is bool:
        if a.dtype != bool:
            raise ValueError(f"{name} must be boolean, got {a.dtype}")
    elif a.size and not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"{name} must hold integers, got {a.dtype}")
    a = a.astype(dtype, copy=False)
    return a


@dataclass(frozen=True, eq=False)
class ArrayStep:
    """The transfers of one step as columns of equal length."""

    src: np.ndarray
    dst: np.ndarray
    start: np.ndarray
    count: np.ndarray
    combine: np.ndarray
    dst_start: np.ndarray | None = None

    @classmethod
    def of(cls, src, dst, start=0, count=0, combine=False, dst_start=None) -> "ArrayStep":
        """Build a step; ``start``, ``count``, ``combine`` and ``dst_start`` may be scalars.

        ``dst_start=None`` (default): every block lands at its ``start``.
        """
        src = np.asarray(src)
        n = src.shape[0] if src.ndim == 1 else np.asarray(dst).reshape(-1).shape[0]
        return cls(_column(src, n, RANK, "src"), _column(dst, n, RANK, "dst"),
                   _column(start, n, ELEM, "start"), _column(count, n, ELEM, "count"),
                   _column(combine, n, bool, "combine"),
                   None if dst_start is None else _column(dst_start, n, ELEM, "dst_start"))

    def __len__(self) -> int:
        return self.src.shape[0]

    @property
    def stop(self) -> np.ndarray:
        return self.start + self.count

    @property
    def recv_start(self) -> np.ndarray:
        """Where each block lands at its destination (``start`` without a ``dst_start`` column)."""
        return self.start if self.dst_start is None else self.dst_start

    @property
    def is_message(self) -> np.ndarray:
        """Boolean column: True for messages, False for local copies."""
        return self.src != self.dst

    def transfers(self) -> tuple[Transfer, ...]:
        """The step as :class:`Transfer` objects (one Python object each: small P only)."""
        cols = [self.src.tolist(), self.dst.tolist(), self.start.tolist(), self.count.tolist(),
                self.combine.tolist()]
        if self.dst_start is not None:
            cols.append(self.dst_start.tolist())
        return tuple(Transfer(*row) for row in zip(*cols))


@dataclass(eq=False)
class ArraySchedule:
    """A schedule on ``nprocs`` ranks over ``nelems`` elements, one :class:`ArrayStep` per step."""

    name: str
    nprocs: int
    nelems: int
    steps: list[ArrayStep] = field(default_factory=list)
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        self.validate()

    def validate(self) -> None:
        """Raise ValueError if a transfer names a rank or block outside the schedule."""
        check_size(self.nprocs, self.nelems)
        p = self.nprocs
        for t, s in enumerate(self.steps):
            if not isinstance(s, ArrayStep):
                raise ValueError(f"step {t} must be an ArrayStep, got {type(s).__name__}")
            if len(s) == 0:
                continue
            same = s.src == s.dst
            if s.dst_start is not None:
                same = same & (s.dst_start == s.start)
            bad = (s.src < 0) | (s.src >= p) | (s.dst < 0) | (s.dst >= p) | same
            if bad.any():
                i = int(np.argmax(bad))
                raise ValueError(f"step {t}: transfer {s.src[i]} -> {s.dst[i]} needs distinct ranks "
                                 f"in 0..{p - 1}")
            bad = (s.count < 0) | (s.start < 0) | (s.start + s.count > self.nelems)
            if bad.any():
                i = int(np.argmax(bad))
                raise ValueError(f"step {t}: block [{s.start[i]}, {s.start[i] + s.count[i]}) of "
                                 f"transfer {s.src[i]} -> {s.dst[i]} outside 0..{self.nelems}")
            if s.dst_start is not None:
                bad = (s.dst_start < 0) | (s.dst_start + s.count > self.nelems)
                if bad.any():
                    i = int(np.argmax(bad))
                    raise ValueError(f"step {t}: receive block [{s.dst_start[i]}, "
                                     f"{s.dst_start[i] + s.count[i]}) of transfer {s.src[i]} -> "
                                     f"{s.dst[i]} outside 0..{self.nelems}")

    @property
    def nsteps(self) -> int:
        return len(self.steps)

    @property
    def ntransfers(self) -> int:
        """Transfers in all steps (messages, plus local copies if a step has any)."""
        return sum(len(s) for s in self.steps)

    @property
    def nmessages(self) -> int:
        """Messages in all steps (local copies not counted)."""
        return sum(int(np.count_nonzero(s.is_message)) for s in self.steps)

    @property
    def nelems_moved(self) -> int:
        """Elements sent in all steps (sum of counts, local copies included)."""
        return int(sum(int(s.count.sum()) for s in self.steps))

    @classmethod
    def from_schedule(cls, schedule: Schedule) -> "ArraySchedule":
        """The columnar form of a per-transfer :class:`Schedule` (same steps, same order)."""
        steps = []
        for step in schedule.steps:
            cols = list(zip(*[(t.src, t.dst, t.start, t.count, t.combine, t.recv_start)
                              for t in step])) or [()] * 6
            moved = any(t.dst_start is not None for t in step)
            steps.append(ArrayStep.of(np.array(cols[0], dtype=RANK), np.array(cols[1], dtype=RANK),
                                      np.array(cols[2], dtype=ELEM), np.array(cols[3], dtype=ELEM),
                                      np.array(cols[4], dtype=bool),
                                      np.array(cols[5], dtype=ELEM) if moved else None))
        return cls(schedule.name, schedule.nprocs, schedule.nelems, steps, dict(schedule.meta))

    def to_schedule(self) -> Schedule:
        """The per-transfer form (one :class:`Transfer` per message: small P only)."""
        return Schedule(self.name, self.nprocs, self.nelems, [s.transfers() for s in self.steps],
                        dict(self.meta))


def as_arrays(schedule) -> ArraySchedule:
    """``schedule`` in columnar form (returned as is if it already is)."""
    if isinstance(schedule, ArraySchedule):
        return schedule
    if isinstance(schedule, Schedule):
        return ArraySchedule.from_schedule(schedule)
    raise ValueError(f"schedule must be a Schedule or an ArraySchedule, got {type(schedule).__name__}")


def as_transfers(schedule) -> Schedule:
    """``schedule`` in per-transfer form (returned as is if it already is)."""
    if isinstance(schedule, Schedule):
        return schedule
    if isinstance(schedule, ArraySchedule):
        return schedule.to_schedule()
    raise ValueError(f"schedule must be a Schedule or an ArraySchedule, got {type(schedule).__name__}")


# --------------------------------------------------------------------------- for the builders
def nonzero_step(src, dst, start, count, combine) -> ArrayStep:
    """An :class:`ArrayStep` without its transfers of zero elements (``count`` an array or scalar)."""
    count = np.asarray(count)
    if count.ndim == 0:
        if count == 0:
            return ArrayStep.of(np.zeros(0, RANK), np.zeros(0, RANK))
        return ArrayStep.of(src, dst, start, count, combine)
    keep = count > 0
    if keep.all():
        return ArrayStep.of(src, dst, start, count, combine)
    pick = [np.asarray(c)[keep] if np.ndim(c) else c for c in (src, dst, start, count, combine)]
    return ArrayStep.of(*pick)


def schedule_of(name: str, nprocs: int, nelems: int, steps, meta=None) -> ArraySchedule:
    """An :class:`ArraySchedule` of the non-empty ``steps`` (as the per-transfer builders drop them)."""
    return ArraySchedule(name, nprocs, nelems, [s for s in steps if len(s)], dict(meta or {}))
