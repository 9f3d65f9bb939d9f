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
#: a step whose blocks to apply total at most this many bytes is recorded as combined when it
#: completed: applying them (a one-element combine, ~0.1 µs) costs about what a clock read costs,
#: and is counted in the next step's posting instead
QUICK_BYTES = 64


def record(executor, recorder) -> None:
    """Run ``executor``'s bound steps (:meth:`Executor.run_recorded
    <mpi_exercises.executor.Executor.run_recorded>` binds and checks), keeping the clock read
    after each ``Startall`` (posted), ``Waitall`` (completed) and the blocks applied (combined)
    in ``recorder``: one read per event, appended to a list; a step with no message is posted
    when it completed, one with nothing to apply or little (:data:`QUICK_BYTES`) combined then."""
    steps = executor._steps
    if recorder._quick[0] is not steps:        # per bound steps: which are quick to apply
        size, plan = executor.dtype.itemsize, executor._plan
        recorder._quick = (steps, [not post or size * sum(b.count for b in plan[t].incoming) <= QUICK_BYTES
                                   for (_, _, post), t in zip(steps, executor._step_index)])
    startall, waitall, clock = executor._startall, executor._waitall, CLOCK
    times = []
    mark = times.append
    mark(clock())
    for (pre, reqs, post), quick in zip(steps, recorder._quick[1]):
        for f in pre:
            f()
        if reqs:
            startall(reqs)
            mark(clock())
            waitall(reqs)
            t = clock()
        else:
            t = clock()
            mark(t)
        mark(t)
        for f in post:
            f()
        mark(t if quick else clock())
    recorder._times, recorder._index = times, executor._step_index


class Recorder:
    """This rank's times of the last :meth:`Executor.run_recorded` call of ``executor``, on
    :data:`CLOCK` (s, this rank's own clock: :mod:`mpi_exercises.clocks` aligns ranks).

    ``entered``: when the call began; ``step``: the schedule's steps this rank takes part
    in (int array); ``posted``, ``completed``, ``combined``: per such step, when its
    messages were posted (``Startall`` returned; the step began at the previous step's
    ``combined``, or ``entered``), completed (``Waitall`` returned) and its blocks applied.
    A step without messages (local copies only) is posted and completed at once; a step
    with no block to apply (sends only), or blocks of at most :data:`QUICK_BYTES`, is combined
    when it completed."""

    def __init__(self, executor):
        if not callable(getattr(executor, "run_recorded", None)):     # an Executor (its module imports this one)
            raise ValueError(f"executor must be an Executor, got {type(executor).__name__}")
        self.executor = executor
        self._times, self._index = [], []     # the last call's raw times, its steps (arrays made when read)
        self._quick = (None, [])              # record's: the bound steps, which of them are quick to apply

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
