"""mpi_exercises.bench.timing.time_interleaved: what a sample times, warm or not."""

from __future__ import annotations

import time

import numpy as np
import pytest

from mpi_exercises.bench import timing

mpi = pytest.importorskip("mpi4py.MPI")


def test_a_warm_sample_makes_its_call_once_untimed_before_the_barrier():
    comm = mpi.COMM_SELF
    made = {"a": 0, "b": 0}
    calls = [lambda: made.__setitem__("a", made["a"] + 1), lambda: made.__setitem__("b", made["b"] + 1)]
    timing.time_interleaved(comm, calls, iters=5, warmup=2, inner=3)
    assert made == {"a": 7 * 3, "b": 7 * 3}
    made.update(a=0, b=0)
    timing.time_interleaved(comm, calls, iters=5, warmup=2, inner=1, warm=True)
    assert made == {"a": 7 * 2, "b": 7 * 2}


def test_the_untimed_call_is_not_in_the_sample():
    comm = mpi.COMM_SELF
    state = {"first": True}

    def slow_first_of_two():              # the untimed call sleeps, the timed one does not
        if state["first"]:
            time.sleep(0.01)
        state["first"] = not state["first"]

    samples = timing.time_interleaved(comm, [slow_first_of_two], iters=5, warmup=0, inner=1, warm=True)
    assert np.all(samples < 0.005)
    assert "untimed" in timing.loop_method(1, warm=True) and "untimed" not in timing.loop_method(1)
