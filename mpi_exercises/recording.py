"""What a recorded call keeps (:meth:`Executor.run_recorded
<mpi_exercises.executor.Executor.run_recorded>`): this rank's times on :data:`CLOCK`, per step
it takes part in.  :mod:`mpi_exercises.clocks` aligns the ranks' clocks; :mod:`mpi_exercises.timeline`
draws the times.  Importing this module does not start MPI.
"""

from __future__ import annotations

import time

import numpy as np

#: the clock of a recording (s): CLOCK_MONOTONIC on Linux, one clock for every process of a node
CLOCK = time.perf_counter


class Recorder:
    """This rank's times of the last :meth:`Executor.run_recorded` call of ``executor``, on
    :data:`CLOCK` (s, this rank's own clock: :mod:`mpi_exercises.clocks` aligns ranks).

    ``entered``: when the call began; ``step``: the schedule's steps this rank takes part
    in (int array); ``posted``, ``completed``, ``combined``: per such step, when its
    messages were posted (``Startall`` returned; the step began at the previous step's
    ``combined``, or ``entered``), completed (``Waitall`` returned) and its blocks applied.
    A step without messages (local copies only) is posted and completed at once; a step
    with no block to apply (sends only) is combined when it completed."""

    def __init__(self, executor):
        if not callable(getattr(executor, "run_recorded", None)):     # an Executor (its module imports this one)
            raise ValueError(f"executor must be an Executor, got {type(executor).__name__}")
        self.executor = executor
        self._times, self._index = [], []     # the last call's raw times, its steps (arrays made when read)

    def _column(self, j: int) -> np.ndarray:
        return np.asarray(self._times[1 + j::3], dtype=float)

    @property
    def entered(self) -> float:
        return float(self._times[0]) if self._times else float("nan")

    @property
    def step(self) -> np.ndarray:
        return np.asarray(self._index, np.int32)

    @property
    def posted(self) -> np.ndarray:
        return self._column(0)

    @property
    def completed(self) -> np.ndarray:
        return self._column(1)

    @property
    def combined(self) -> np.ndarray:
        return self._column(2)

    def as_dict(self) -> dict:
        """The times as plain lists (for pickling or JSON)."""
        return {"entered": self.entered, "step": self.step.tolist(), "posted": self.posted.tolist(),
                "completed": self.completed.tolist(), "combined": self.combined.tolist()}
