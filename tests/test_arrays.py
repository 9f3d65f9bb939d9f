"""The columnar schedule form: conversion both ways, validation, zero-cost constant columns."""

import numpy as np
import pytest

from netmodels.algorithms import barriers, combining
from netmodels.algorithms.arrays import ArraySchedule, ArrayStep, as_arrays, as_transfers
from netmodels.algorithms.schedule import Schedule


@pytest.mark.parametrize("p", [1, 2, 3, 5, 8, 12])
def test_round_trip_every_builder(p):
    for algorithm in combining.ALGORITHMS:
        s = combining.build(algorithm, p, 17)
        a = ArraySchedule.from_schedule(s)
        assert a.nsteps == s.nsteps
        assert a.ntransfers == sum(len(step) for step in s.steps)
        assert a.nelems_moved == sum(t.count for step in s.steps for t in step)
        assert a.to_schedule() == s
    for algorithm in barriers.BUILDERS:
        s = barriers.build(algorithm, p)
        assert as_transfers(as_arrays(s)) == s


def test_scalar_columns_are_broadcast_without_copies():
    n = 1 << 20
    src = np.arange(n, dtype=np.int32)
    step = ArrayStep.of(src, (src + 1) % n)
    assert step.count.strides == (0,) and step.combine.strides == (0,)
    assert step.count.nbytes == 8 * n and step.count.base is not None
    a = ArraySchedule("shift", n, 0, [step])
    assert a.ntransfers == n and a.nelems_moved == 0


@pytest.mark.parametrize("step, message", [
    (ArrayStep.of([0], [0]), "distinct ranks"),
    (ArrayStep.of([0], [4]), "distinct ranks"),
    (ArrayStep.of([-1], [1]), "distinct ranks"),
    (ArrayStep.of([0], [1], start=3, count=2), "outside"),
    (ArrayStep.of([0], [1], start=0, count=-1), "outside"),
])
def test_validation_names_the_transfer(step, message):
    with pytest.raises(ValueError, match=message):
        ArraySchedule("bad", 4, 4, [step])


def test_bad_columns_are_refused():
    with pytest.raises(ValueError, match="1-D array of 2"):
        ArrayStep.of([0, 1], [1, 0], count=[1, 2, 3])
    with pytest.raises(ValueError, match="integers"):
        ArrayStep.of([0.5], [1])
    with pytest.raises(ValueError, match="Schedule or an ArraySchedule"):
        as_arrays([(0, 1)])
    with pytest.raises(ValueError, match="ArrayStep"):
        ArraySchedule("bad", 2, 0, [((0, 1),)])


def test_empty_steps_are_kept():
    s = Schedule("empty", 3, 0, [(), ()])
    a = as_arrays(s)
    assert a.nsteps == 2 and a.ntransfers == 0 and a.to_schedule() == s
