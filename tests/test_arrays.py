"""The columnar schedule form: conversion both ways, validation, zero-cost constant columns."""

import numpy as np
import pytest

from netmodels.algorithms import registry
from netmodels.algorithms.arrays import ArraySchedule, ArrayStep, as_arrays, as_transfers
from netmodels.algorithms.schedule import Schedule


@pytest.mark.parametrize("p", [1, 2, 3, 5, 8, 12])
def test_round_trip_every_builder(p):
    for alg in registry.algorithms("allreduce") + registry.algorithms("barrier"):
        s = alg.build(p, 0 if alg.collective == "barrier" else 17).to_schedule()
        a = ArraySchedule.from_schedule(s)
        assert a.nsteps == s.nsteps
        assert a.ntransfers == sum(len(step) for step in s.steps)
        assert a.nelems_moved == sum(t.count for step in s.steps for t in step)
        assert a.to_schedule() == s
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


def test_receive_offsets_and_local_copies_round_trip():
    from netmodels.algorithms.schedule import Transfer
    for alg in registry.algorithms("alltoall"):
        for nodes in (None, 2, (2, 2), [0, 1, 0, 1, 2]):
            s = alg.build(5, 3, nodes=nodes).to_schedule()
            a = ArraySchedule.from_schedule(s)
            assert a.to_schedule() == s
            assert a.nmessages == s.nmessages == sum(t.src != t.dst for st in s.steps for t in st)
            assert a.ntransfers == sum(len(st) for st in s.steps)
    # a receive offset equal to start is the same transfer as none
    assert Transfer(0, 1, 2, 3, dst_start=2) == Transfer(0, 1, 2, 3)
    mixed = Schedule("mixed", 3, 8, [(Transfer(0, 1, 0, 2), Transfer(1, 1, 0, 2, dst_start=4),
                                      Transfer(2, 0, 6, 2, dst_start=1)), (Transfer(1, 2, 2, 2),)])
    a = as_arrays(mixed)
    assert a.steps[0].dst_start.tolist() == [0, 4, 1] and a.steps[1].dst_start is None
    assert a.steps[0].is_message.tolist() == [True, False, True]
    assert a.to_schedule() == mixed and a.nmessages == 3


@pytest.mark.parametrize("step, message", [
    (ArrayStep.of([0], [0], start=1, count=1, dst_start=1), "distinct ranks"),
    (ArrayStep.of([0], [1], start=0, count=2, dst_start=3), "receive block"),
    (ArrayStep.of([0], [1], start=0, count=1, dst_start=-1), "receive block"),
])
def test_receive_offsets_are_validated(step, message):
    with pytest.raises(ValueError, match=message):
        ArraySchedule("bad", 4, 4, [step])
    with pytest.raises(ValueError, match=message.split()[0]):
        Schedule("bad", 4, 4, [step.transfers()])


def test_local_copy_is_valid_when_it_moves_data():
    step = ArrayStep.of([2], [2], start=0, count=2, dst_start=2)
    assert ArraySchedule("copy", 4, 4, [step]).nmessages == 0
