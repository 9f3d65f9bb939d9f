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
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Transfer:
    """One message: ``count`` elements starting at ``start``, from ``src`` to ``dst``."""

    src: int
    dst: int
    start: int = 0
    count: int = 0
    combine: bool = False

    @property
    def stop(self) -> int:
        return self.start + self.count


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
        if self.nprocs < 1:
            raise ValueError(f"nprocs must be >= 1, got {self.nprocs}")
        if self.nelems < 0:
            raise ValueError(f"nelems must be >= 0, got {self.nelems}")
        for t, step in enumerate(self.steps):
            for tr in step:
                if not (0 <= tr.src < self.nprocs and 0 <= tr.dst < self.nprocs) or tr.src == tr.dst:
                    raise ValueError(f"step {t}: transfer {tr} needs distinct ranks in 0..{self.nprocs - 1}")
                if tr.count < 0 or tr.start < 0 or tr.stop > self.nelems:
                    raise ValueError(f"step {t}: transfer {tr} block outside 0..{self.nelems}")

    @property
    def nsteps(self) -> int:
        return len(self.steps)
