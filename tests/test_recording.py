"""The recorded step loop (:func:`mpi_exercises.recording.program`): which clock read lands in
which column, checked against a log of the calls it makes (no MPI), then real recorded calls
under ``mpiexec`` (times ordered and inside the call, results right, run reading no clock)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mpi_exercises import recording
from mpi_exercises.plan import Mode, plan
from netmodels.algorithms.schedule import Schedule, Transfer
from tests.mpirun import run_mpi

#: rank 0's part of a made-up schedule (P = 2, 64 float64): per step, what it does and whether
#: its blocks are few enough (at most QUICK_BYTES = 64 B) to be combined when they completed
STEPS = [
    ((Transfer(0, 0, 0, 4, dst_start=8),), "a local copy of 32 B only: no message", True),
    ((Transfer(1, 0, 0, 1, combine=True),), "a combine of 8 B", True),
    ((Transfer(1, 0, 0, 16, combine=True),), "a combine of 128 B", False),
    ((Transfer(0, 1, 0, 16),), "a send only: nothing to apply", True),
    ((Transfer(0, 0, 0, 32, dst_start=32),), "a local copy of 256 B: no message", False),
    ((Transfer(1, 1, 0, 4, dst_start=8),), "rank 1's local copy: rank 0 takes no part", None),
    ((Transfer(1, 0, 0, 4), Transfer(0, 0, 0, 4, dst_start=40)),
     "a message of 32 B into what a local copy reads: the copy staged before, 64 B applied", True),
]


class Logged:
    """What :func:`recording.program` reads of an Executor, bound as the executor binds (a
    staged copy before a step's messages, a call per block applied after them), each MPI call,
    staged copy, applied block and clock read appended to :attr:`log`."""

    def __init__(self, schedule, rank):
        self.dtype = np.dtype(np.float64)
        self._plan = plan(schedule, rank)
        self._step_index = [t for t, st in enumerate(self._plan) if st.sends or st.incoming]
        self.log = []
        self._steps = []
        for k, t in enumerate(self._step_index):
            st = self._plan[t]
            pre = tuple(self._event("staged", k) for b in st.incoming if b.mode in (Mode.STAGED, Mode.STAGED_COMBINE))
            messages = bool(st.sends) or any(not b.mode.local for b in st.incoming)
            post = tuple(self._event("applied", k) for b in st.incoming if b.mode is not Mode.DIRECT)
            posting = ((self._event("start", k), self._event("start", k)), (self._event("wait", k),)) if messages \
                else ((), ())
            self._steps.append((pre, [k] if messages else [], *posting, post))

    def _event(self, what, k):
        return lambda: self.log.append((what, k))

    def clock(self) -> float:
        self.log.append(("clock", len(self.log)))
        return float(len(self.log) - 1)


def expected(log, nentries, quick):
    """``(entered, posted, completed, combined)`` read off the log: the first read; per step the
    read after its last start (posted), after its last wait (completed; a step without messages:
    the read after its staged copies, both), after its last applied block (combined; a quick
    step: completed)."""
    reads = [i for i, (what, _) in enumerate(log) if what == "clock"]   # a read's value is its place
    after = lambda i: min(r for r in reads if r > i)     # noqa: E731
    posted, completed, combined = [], [], []
    last = reads[0]                                    # the previous step's last read
    for k in range(nentries):
        mine = [i for i, (what, kk) in enumerate(log) if kk == k and what != "clock"]
        start = [i for i in mine if log[i][0] == "start"]
        wait = [i for i in mine if log[i][0] == "wait"]
        staged = [i for i in mine if log[i][0] == "staged"]
        applied = [i for i in mine if log[i][0] == "applied"]
        if start:
            posted.append(after(start[-1]))
            completed.append(after(wait[-1]))
        else:                                          # the read after the previous step's and the staging
            posted.append(after(max([last] + staged)))
            completed.append(posted[-1])
        combined.append(completed[-1] if quick[k] else after(applied[-1]))
        last = combined[-1]
    return reads[0], posted, completed, combined


def test_every_read_lands_in_its_column(monkeypatch):
    schedule = Schedule("made-up", 2, 64, [s for s, _, _ in STEPS])
    ex = Logged(schedule, 0)
    quick = [q for _, _, q in STEPS if q is not None]
    assert ex._step_index == [t for t, (_, _, q) in enumerate(STEPS) if q is not None]
    monkeypatch.setattr(recording, "CLOCK", ex.clock)
    recorded = recording.program(ex)
    assert ex.log == []                                # generating it runs nothing
    times = [None] * recording.slots(ex)
    recorded(times)
    entered, posted, completed, combined = expected(ex.log, len(quick), quick)
    assert times[0] == entered == 0.0
    assert times[1::3] == posted and times[2::3] == completed and times[3::3] == combined
    # one read per distinct instant: a step without messages reads once for posted and completed,
    # a quick step none for combined
    messages = [bool(reqs) for _, reqs, _, _, _ in ex._steps]
    assert len([e for e in ex.log if e[0] == "clock"]) == 1 + sum(1 + m for m in messages) + quick.count(False)
    # the calls themselves in the order of the steps: staged copies, starts, waits, blocks applied
    order = [e for e in ex.log if e[0] != "clock"]
    assert [k for _, k in order] == sorted(k for _, k in order)
    assert [w for w, k in order if k == 5] == ["staged", "start", "start", "wait", "applied", "applied"]
    assert [w for w, k in order if k == 0] == ["applied"]
    # the same program again: the list is written over, not grown
    ex.log.clear()
    recorded(times)
    assert len(times) == recording.slots(ex) and times[0] == 0.0


def test_a_rank_without_steps_records_when_it_entered(monkeypatch):
    schedule = Schedule("made-up", 3, 4, [(Transfer(1, 2, 0, 4),)])
    ex = Logged(schedule, 0)
    monkeypatch.setattr(recording, "CLOCK", ex.clock)
    times = [None] * recording.slots(ex)
    recording.program(ex)(times)
    assert times == [0.0] and ex.log == [("clock", 0)]


SCRIPT = textwrap.dedent("""
    import time
    import numpy as np
    from mpi4py import MPI
    import mpi_exercises.executor as executor
    import mpi_exercises.recording as recording
    from netmodels.algorithms import registry

    comm = MPI.COMM_WORLD
    P, rank = comm.size, comm.rank
    for name, n in (("allreduce.ring", 6), ("allreduce.ring", 300), ("allreduce.rabenseifner", 7),
                    ("allreduce.snake", 1)):
        ex = executor.Executor(comm, registry.build(name, P, n), np.float64, MPI.SUM)
        recs = [executor.Recorder(ex), executor.Recorder(ex)]
        for call in range(6):
            x = np.arange(n, dtype=float) * (rank + 1) + call
            y = x.copy()                                           # a new buffer every call: rebound
            rec = recs[call % 2]
            before = time.perf_counter()
            ex.run_recorded(y, rec)
            after = time.perf_counter()
            assert np.array_equal(y, comm.allreduce(x)), (name, n, call)
            d = rec.as_dict()
            assert d["step"] == ex._step_index and len(d["posted"]) == len(d["step"])
            seq = [d["entered"]] + [v for trio in zip(d["posted"], d["completed"], d["combined"]) for v in trio]
            assert before <= seq[0] and seq[-1] <= after, (name, seq, before, after)
            assert all(a <= b for a, b in zip(seq, seq[1:])), (name, seq)
        ex.free()

    # recording off reads no clock: with CLOCK replaced before the executor exists, run never
    # calls it, and a recorded call does (the replacement is seen)
    def touched():
        raise AssertionError("clock read")
    recording.CLOCK = executor.CLOCK = touched
    ex = executor.Executor(comm, registry.build("allreduce.recursive_doubling", P, 3), np.float64, MPI.SUM)
    for _ in range(5):
        y = np.arange(3.0) + rank
        ex.run(y)
        assert np.array_equal(y, comm.allreduce(np.arange(3.0) + rank))
    assert ex._program is None
    try:
        ex.run_recorded(np.zeros(3), executor.Recorder(ex))
        raise SystemExit("a recorded call read no clock")
    except AssertionError as e:
        assert "clock read" in str(e)
    print("RECORDED OK", rank)
""")


@pytest.mark.mpi
@pytest.mark.parametrize("P", [2, 3])
def test_recorded_calls_are_ordered_inside_the_call_and_run_reads_no_clock(P):
    res = run_mpi(P, ["-c", SCRIPT], timeout=120, sleep_while_waiting=True)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.count("RECORDED OK") == P
