"""The executor's plan (mpi_exercises.plan.plan): a pure function, tested without MPI.

The plan of every rank, run by a small numpy interpreter of the step semantics, must
give the collective's result (checked against numpy's sum and stacking); the modes it
picks (direct, buffered, local, staged) and its tags' sequence numbers are checked on
hand-made steps.
"""

import subprocess
import sys

import numpy as np
import pytest

from mpi_exercises.plan import Incoming, Mode, Send, StepPlan, plan, rbuf_size
from netmodels.algorithms import registry
from netmodels.algorithms.schedule import Schedule, Transfer
from tests.mpirun import ROOT


def interpret(schedule, bufs):
    """Run every rank's plan on ``bufs`` (one array per rank), as the executor does: blocks
    sent as they were when the step began, staged copies saved first, then the incoming
    blocks applied in step order."""
    plans = [plan(schedule, r) for r in range(schedule.nprocs)]
    for t in range(len(plans[0])):
        sent = {(r, s.peer, s.seq): bufs[r][s.start:s.stop].copy()
                for r in range(schedule.nprocs) for s in plans[r][t].sends}
        for r in range(schedule.nprocs):
            staged = [bufs[r][b.read:b.read + b.count].copy() if b.mode in (Mode.STAGED, Mode.STAGED_COMBINE)
                      else None for b in plans[r][t].incoming]
            for b, saved in zip(plans[r][t].incoming, staged):
                if b.mode.local:
                    src = saved if saved is not None else bufs[r][b.read:b.read + b.count].copy()
                else:
                    src = sent[(b.peer, r, b.seq)]
                dst = bufs[r][b.start:b.stop]
                if b.mode.combines:
                    dst += src
                else:
                    dst[...] = src
    return bufs


@pytest.mark.parametrize("nprocs", [1, 2, 3, 4, 5, 8])
@pytest.mark.parametrize("name", registry.names("allreduce"))
def test_every_rank_s_plan_computes_the_allreduce(name, nprocs):
    n = 2 * nprocs + 3
    rng = np.random.default_rng(nprocs)
    bufs = [rng.integers(-50, 50, n) for _ in range(nprocs)]
    want = np.sum(bufs, axis=0)
    for got in interpret(registry.build(name, nprocs, n), [b.copy() for b in bufs]):
        assert np.array_equal(got, want)


@pytest.mark.parametrize("nprocs", [2, 3, 5])
@pytest.mark.parametrize("name", registry.names("allgather") + registry.names("broadcast"))
def test_every_rank_s_plan_gathers_or_broadcasts(name, nprocs):
    m = 3
    s = registry.build(name, nprocs, m)
    if name.startswith("allgather"):
        bufs = [np.zeros(nprocs * m, dtype=np.int64) for _ in range(nprocs)]
        for r in range(nprocs):
            bufs[r][r * m:(r + 1) * m] = 100 * r + np.arange(m)
        want = np.concatenate([100 * r + np.arange(m) for r in range(nprocs)])
    else:
        bufs = [np.full(m, -1, dtype=np.int64) for _ in range(nprocs)]
        bufs[0][:] = [7, 8, 9]
        want = np.array([7, 8, 9])
    for got in interpret(s, bufs):
        assert np.array_equal(got, want)


def swap():
    """Two ranks swap overlapping blocks and combine a third in one step."""
    return Schedule("swap", 2, 3, [(Transfer(0, 1, 0, 2), Transfer(1, 0, 1, 2),
                                    Transfer(0, 1, 2, 1, True), Transfer(1, 0, 2, 1, True))])


def test_a_block_that_overlaps_what_the_step_sends_goes_through_the_receive_buffer():
    (step,) = plan(swap(), 0)
    assert isinstance(step, StepPlan)
    assert step.sends == (Send(0, 2, 1, 0), Send(2, 3, 1, 1))
    assert step.incoming == (Incoming(1, 0, 2, 1, 3, Mode.COPY, 1, 0), Incoming(1, 2, 1, 2, 3, Mode.COMBINE, 2, 1))
    assert rbuf_size((step,)) == 3
    # the reference: the step semantics by hand (blocks sent as they were when the step began)
    a0, a1 = np.array([0.0, 1.0, 1.0]), np.array([10.0, 11.0, 2.0])
    got = interpret(swap(), [a0.copy(), a1.copy()])
    assert np.array_equal(got[0], [0.0, 11.0, 4.0]) and np.array_equal(got[1], [0.0, 1.0, 3.0])


def test_a_copy_that_overlaps_nothing_is_received_in_place():
    s = Schedule("copy", 2, 4, [(Transfer(0, 1, 0, 2),)])
    assert plan(s, 1)[0].incoming == (Incoming(0, 0, 2, 0, 2, Mode.DIRECT, 0, 0),)
    assert plan(s, 0)[0] == StepPlan((Send(0, 2, 1, 0),), ())
    assert rbuf_size(plan(s, 1)) == 0


def test_local_copies_are_read_in_place_unless_the_step_writes_their_source():
    free = Schedule("local", 1, 4, [(Transfer(0, 0, 0, 2, dst_start=2),)])
    (step,) = plan(free, 0)
    assert step.sends == () and step.incoming[0].mode is Mode.LOCAL and rbuf_size((step,)) == 0
    # rank 0's [0:2] is also overwritten by a message from rank 1 in the same step
    clash = Schedule("clash", 2, 4, [(Transfer(0, 0, 0, 2, True, dst_start=2), Transfer(1, 0, 0, 2))])
    modes = [b.mode for b in plan(clash, 0)[0].incoming]
    assert modes == [Mode.STAGED_COMBINE, Mode.COPY]
    got = interpret(clash, [np.array([1, 2, 3, 4]), np.array([5, 6, 7, 8])])[0]
    assert np.array_equal(got, [5, 6, 4, 6])        # [2:4] += the old [0:2]; [0:2] = rank 1's


def test_messages_between_one_pair_in_one_step_are_numbered_for_their_tags():
    s = Schedule("two", 2, 4, [(Transfer(0, 1, 0, 1), Transfer(0, 1, 2, 1))])
    assert [x.seq for x in plan(s, 0)[0].sends] == [0, 1]
    assert [b.seq for b in plan(s, 1)[0].incoming] == [0, 1]


def test_the_plan_is_the_same_for_both_forms_of_a_schedule():
    a = registry.build("allreduce.rabenseifner", 6, 17)
    for r in range(6):
        assert plan(a, r) == plan(a.to_schedule(), r)


def test_modes_say_what_they_do():
    assert [m for m in Mode if m.combines] == [Mode.COMBINE, Mode.LOCAL_COMBINE, Mode.STAGED_COMBINE]
    assert [m for m in Mode if m.local] == [Mode.LOCAL, Mode.LOCAL_COMBINE, Mode.STAGED, Mode.STAGED_COMBINE]
    assert [m for m in Mode if m.buffered] == [Mode.COPY, Mode.COMBINE, Mode.STAGED, Mode.STAGED_COMBINE]


def test_planning_does_not_import_mpi():
    code = ("import sys; from mpi_exercises.plan import plan; from netmodels.algorithms import registry; "
            "plan(registry.build('allreduce.snake', 4, 100), 2); "
            "assert 'mpi4py' not in sys.modules, 'mpi4py imported'")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert res.returncode == 0, res.stderr
