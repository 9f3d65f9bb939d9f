"""What a recorded call keeps (:meth:`Executor.run_recorded
<mpi_exercises.executor.Executor.run_recorded>`): this rank's times on :data:`CLOCK`, per step
it takes part in.  :mod:`mpi_exercises.clocks` aligns the ranks' clocks; :mod:`mpi_exercises.timeline`
draws the times.  Importing this module does not start MPI.

The recorded step loop is written out (:func:`program`): one straight-line function per binding
of the executor, the clock read into a list slot by index.  A loop appending to a list cost
about 1 µs more per call than the loop of :meth:`~mpi_exercises.executor.Executor.run` at two
steps (each rank's own Python, MPI calls replaced by no-ops, load 3-4); the written-out one
0.1-0.2 µs, the cost of its clock reads.
"""

from __future__ import annotations

import time
from functools import lru_cache

import numpy as np

#: the clock of a recording (s): CLOCK_MONOTONIC on Linux, one clock for every process of a node
#: (``time.perf_counter``, ``time.monotonic``, ``MPI.Wtime`` and the ``_ns`` clocks cost 45-55 ns
#: a read from Python here, measured: none is worth a second clock for the alignment)
CLOCK = time.perf_counter
#: a step whose blocks to apply total at most this many bytes is recorded as combined when it
#: completed: applying them (a one-element combine, ~0.1 µs) costs about what a clock read costs,
#: and is counted in the next step's posting instead
QUICK_BYTES = 64


def slots(executor) -> int:
    """How many clock reads a recorded call of ``executor`` keeps: when it began, then three per
    step this rank takes part in (posted, completed, combined)."""
    return 1 + 3 * len(executor._step_index)


def program(executor):
    """``recorded(times)``: one call of ``executor``'s bound steps (``executor._steps``), written
    out step by step, that puts the clock read when the call began in ``times[0]`` and per step
    ``k`` the reads after its requests are started (posted), waited for (completed) and blocks applied
    (combined) in ``times[1 + 3 k:4 + 3 k]`` (``times``: a list of :func:`slots` items).  A
    step with no message is posted when it completed, one with nothing to apply or little
    (:data:`QUICK_BYTES`) combined then: one clock read per distinct instant.  Made once per
    binding: its source names only the steps' positions (the same for every binding of an
    executor: compiled once, :func:`_compiled`), the requests and calls of this binding are
    looked up in its own namespace."""
    size, plan = executor.dtype.itemsize, executor._plan
    names = {"clock": CLOCK}
    body = ["t[0] = clock()"]
    for k, ((pre, reqs, starts, waits, post), step) in enumerate(zip(executor._steps, executor._step_index)):
        at = 1 + 3 * k
        for j, f in enumerate(pre):
            names[f"pre{k}_{j}"] = f
            body.append(f"pre{k}_{j}()")
        if reqs:
            for what, calls in (("start", starts), ("wait", waits)):
                for j, f in enumerate(calls):
                    names[f"{what}{k}_{j}"] = f
                    body.append(f"{what}{k}_{j}()")
                body.append(f"t[{at}] = clock()" if what == "start" else f"t[{at + 1}] = c = clock()")
        else:
            body.append(f"t[{at}] = t[{at + 1}] = c = clock()")
        for j, f in enumerate(post):
            names[f"post{k}_{j}"] = f
            body.append(f"post{k}_{j}()")
        quick = not post or size * sum(b.count for b in plan[step].incoming) <= QUICK_BYTES
        body.append(f"t[{at + 2}] = c" if quick else f"t[{at + 2}] = clock()")
    exec(_compiled("def recorded(t):\n    " + "\n    ".join(body) + "\n"), names)   # noqa: S102
    return names.pop("recorded")            # not left in its own namespace: no cycle for the collector


@lru_cache(maxsize=64)
def _compiled(source: str):
    """The code of :func:`program`'s ``source`` (integers and fixed names only).  Compiling it
    costs about 0.1 ms per step, in proportion (126 to 4094 steps, load 9), so an executor bound to
    one buffer after another (each binding makes its program) compiles it once."""
    return compile(source, "<recorded steps>", "exec")


class Recorder:
    """This rank's times of the last :meth:`Executor.run_recorded` call of ``executor``, on
    :data:`CLOCK` (s, this rank's own clock: :mod:`mpi_exercises.clocks` aligns ranks).

    ``entered``: when the call began; ``step``: the schedule's steps this rank takes part
    in (int array); ``posted``, ``completed``, ``combined``: per such step, when its
    messages were posted (its requests started; the step began at the previous step's
    ``combined``, or ``entered``), completed (waited for) and its blocks applied.
    A step without messages (local copies only) is posted and completed at once; a step
    with no block to apply (sends only), or blocks of at most :data:`QUICK_BYTES`, is combined
    when it completed.  Its list of raw times is made by its first call and reused by the next
    (the columns are arrays made when read)."""

    def __init__(self, executor):
        if not callable(getattr(executor, "run_recorded", None)):     # an Executor (its module imports this one)
            raise ValueError(f"executor must be an Executor, got {type(executor).__name__}")
        self.executor = executor
        self._times: list = []    # the last call's raw times (:func:`program`); empty before the first call

    def _column(self, j: int) -> np.ndarray:
        return np.asarray(self._times[1 + j::3], dtype=float)

    @property
    def entered(self) -> float:
        return float(self._times[0]) if self._times else float("nan")

    @property
    def step(self) -> np.ndarray:
        return np.asarray(self.executor._step_index if self._times else [], np.int32)

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
