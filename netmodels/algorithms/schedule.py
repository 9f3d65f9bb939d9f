"""Algorithms as schedules: plain data that an MPI executor runs, a model costs and a figure draws.

A :class:`Schedule` is a list of steps; a step is a tuple of :class:`Transfer`.
Semantics of one step (the executor and every cost model follow them):

1. every transfer of the step sends the block ``[start, start + count)`` of the
   source's working vector *as it was at the beginning of the step*;
2. after all transfers of the step have arrived, each destination applies them in
   the order they appear in the step: ``combine=True`` combines the block into its
   own (``dst[block] = op(dst[block], received)``), ``combine=False`` overwrites it.

Blocks are counted in vector *elements* (not bytes); a transfer with ``count == 0``
is a pure synchronisation message (barriers).  Ranks are 0 .. nprocs-1.

Receive offset and local copies (optional; schedules that do not use them behave as
above, element for element):

3. ``dst_start`` (default ``None``: the same as ``start``) is where the block lands in
   the destination's vector: the destination applies the block to
   ``[recv_start, recv_start + count)``, with ``recv_start = start`` if ``dst_start`` is
   None, else ``dst_start``.  A ``dst_start`` equal to ``start`` is stored as None, so
   the two spellings of the same transfer are equal;
4. a transfer with ``src == dst`` is a *local copy* (packing, unpacking), not a
   message: the rank copies (or combines) its own block ``[start, stop)`` as it was at
   the beginning of the step to ``[recv_start, recv_start + count)``, applied in step
   order like a received block.  A local copy must move data elsewhere
   (``dst_start`` given and different from ``start``); blocks of one step's transfers
   may overlap only as they would without local copies.  Cost models count messages
   with :attr:`Transfer.is_message` and charge local copies as memory traffic.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def check_size(nprocs: int, nelems: int) -> None:
    """ValueError unless a schedule's ``nprocs >= 1`` and ``0 <= nelems < 2^63``."""
    if nprocs < 1:
        raise ValueError(f"nprocs must be >= 1, got {nprocs}")
    if nelems < 0:
        raise ValueError(f"nelems must be >= 0, got {nelems}")
    if nelems > 2**63 - 1:
        raise ValueError(f"nelems must be below 2^63 (blocks are int64 elements), got {nelems}")


@dataclass(frozen=True)
class Transfer:
    """One message: ``count`` elements starting at ``start``, from ``src`` to ``dst``.

    ``dst_start``: where the block lands at ``dst`` (None: at ``start``); with
    ``src == dst`` the transfer is a local copy (see the module docstring).
    """

    src: int
    dst: int
    start: int = 0
    count: int = 0
    combine: bool = False
    dst_start: int | None = None

    def __post_init__(self):
        if self.dst_start is not None and self.dst_start == self.start:
            object.__setattr__(self, "dst_start", None)

    @property
    def stop(self) -> int:
        return self.start + self.count

    @property
    def recv_start(self) -> int:
        """First element written at ``dst``."""
        return self.start if self.dst_start is None else self.dst_start

    @property
    def recv_stop(self) -> int:
        return self.recv_start + self.count

    @property
    def is_message(self) -> bool:
        """True for a message between two ranks, False for a local copy."""
        return self.src != self.dst


@dataclass
class Schedule:
    """A communication algorithm on ``nprocs`` ranks over a vector of ``nelems`` elements.

    ``meta`` holds what the algorithm was built with (mesh shape, block size, ...), for
    cost models and drawings.
    """

    name: str
    nprocs: int
    nelems: int
    steps: list[tuple[Transfer, ...]] = field(default_factory=list)
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        self.validate()

    def validate(self) -> None:
        """Raise ValueError if a transfer names a rank or block outside the schedule."""
        check_size(self.nprocs, self.nelems)
        for t, step in enumerate(self.steps):
            for tr in step:
                local_copy = tr.src == tr.dst and tr.dst_start is not None
                if not (0 <= tr.src < self.nprocs and 0 <= tr.dst < self.nprocs) or (
                        tr.src == tr.dst and not local_copy):
                    raise ValueError(f"step {t}: transfer {tr} needs distinct ranks in 0..{self.nprocs - 1}"
                                     " (or a dst_start other than start for a local copy)")
                if tr.count < 0 or tr.start < 0 or tr.stop > self.nelems:
                    raise ValueError(f"step {t}: transfer {tr} block outside 0..{self.nelems}")
                if tr.recv_start < 0 or tr.recv_stop > self.nelems:
                    raise ValueError(f"step {t}: transfer {tr} receive block outside 0..{self.nelems}")

    @property
    def nsteps(self) -> int:
        return len(self.steps)

    @property
    def nmessages(self) -> int:
        """Messages in all steps (local copies not counted)."""
        return sum(tr.is_message for step in self.steps for tr in step)
