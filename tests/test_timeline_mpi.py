"""Measured traces: the executor's recording, the clock alignment and ``python -m mpi_exercises timeline``.

The MPI cases run under ``mpiexec`` with a timeout (:mod:`tests.mpirun`); the recorded steps are
checked against the schedule itself (which steps each rank takes part in, counted from its
transfers), the alignment against the true offset of one node's clocks (0: every process reads
the same CLOCK_MONOTONIC), and the not-aligned case without MPI.
"""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

from mpi_exercises import clocks
from mpi_exercises.timeline import MEASURED_KINDS, draw, measured_trace, not_aligned_note
from netmodels.algorithms import registry
from netmodels.algorithms.arrays import as_arrays
from netmodels.figures.timeline import simulated_trace
from tests.mpirun import ROOT, run_mpi


def steps_of(schedule, rank: int) -> list[int]:
    """The steps in which ``rank`` sends or receives a message, or copies a non-empty block locally."""
    out = []
    for t, s in enumerate(as_arrays(schedule).steps):
        src, dst, count = np.asarray(s.src), np.asarray(s.dst), np.asarray(s.count)
        message = (src != dst) & ((src == rank) | (dst == rank))
        local = (src == rank) & (dst == rank) & (count > 0)
        if message.any() or local.any():
            out.append(t)
    return out


@pytest.mark.parametrize("P, algorithm, N", [(2, "allreduce.recursive_doubling", 1),
                                             (3, "allreduce.ring", 6),
                                             (4, "barrier.dissemination", 0)])
def test_timeline_records_every_step_of_the_schedule(tmp_path, P, algorithm, N):
    out, png = tmp_path / "t.json", tmp_path / "t.png"
    res = run_mpi(P, ["-m", "mpi_exercises", "timeline", algorithm, "-N", str(N), "--repeat", "4",
                      "--warmup", "1", "--json", str(out), "--png", str(png)], timeout=120,
                  sleep_while_waiting=True)
    assert res.returncode == 0, res.stderr
    doc = json.loads(out.read_text())
    assert png.stat().st_size > 10_000
    cols = {k: np.asarray(v) for k, v in doc["measured"]["columns"].items()}
    assert doc["measured"]["kinds"] == list(MEASURED_KINDS)
    schedule = registry.build(algorithm, P, N)
    for r in range(P):
        mine = cols["rank"] == r
        want = steps_of(schedule, r)
        for k in range(len(MEASURED_KINDS)):     # one row of each kind per step taken part in
            assert sorted(cols["step"][mine & (cols["kind"] == k)].tolist()) == want
        order = np.lexsort((cols["kind"][mine], cols["step"][mine]))
        start, end = cols["start"][mine][order], cols["end"][mine][order]
        assert (end >= start).all() and (start[1:] >= end[:-1] - 1e-12).all()   # monotone, end to end
    a = doc["alignment"]
    assert a["method"] and "Cristian" in a["source"] and len(a["error_s"]) == P
    assert doc["aligned"] is True and a["unstable"] == []
    off, err = np.asarray(a["offset_s"]), np.asarray(a["error_s"])
    # one node: the true offset is 0, and it must lie inside every rank's error bound
    assert (np.abs(off) <= err + 1e-9).all() and err.max() < 1e-3
    assert doc["simulated"]["nprocs"] == P and doc["predicted_s"] > 0


SCRIPT = textwrap.dedent("""
    import numpy as np
    from mpi4py import MPI
    import mpi_exercises.executor as executor
    from netmodels.algorithms import registry

    comm = MPI.COMM_WORLD
    ex = executor.Executor(comm, registry.build("allreduce.recursive_doubling", comm.size, 3), np.float64, MPI.SUM)
    rec = executor.Recorder(ex)
    x = np.arange(3.0) + comm.rank
    ex.run_recorded(x, rec)
    want = comm.allreduce(np.arange(3.0) + comm.rank)
    assert np.array_equal(x, want), (x, want)
    kept = rec.as_dict()
    assert len(kept["step"]) == len(ex.schedule.steps) and kept["entered"] <= kept["posted"][0]
    # blocks of at most QUICK_BYTES are combined when they completed (no clock read for them);
    # larger ones read the clock after they are applied
    import mpi_exercises.recording as recording
    assert 3 * 8 <= recording.QUICK_BYTES < 64 * 8
    assert kept["combined"] == kept["completed"], kept
    big = executor.Executor(comm, registry.build("allreduce.recursive_doubling", comm.size, 64), np.float64,
                            MPI.SUM)
    rec_big = executor.Recorder(big)
    z = np.arange(64.0) + comm.rank
    big.run_recorded(z, rec_big)
    assert np.array_equal(z, comm.allreduce(np.arange(64.0) + comm.rank))
    b = rec_big.as_dict()
    assert all(p <= c < d for p, c, d in zip(b["posted"], b["completed"], b["combined"])), b
    try:
        big.run_recorded(z, rec)
        raise AssertionError("another executor's recorder accepted")
    except ValueError:
        pass
    big.free()

    def touched(*args, **kw):
        raise AssertionError("the recorder was touched by run")

    executor.CLOCK = recording.CLOCK = touched
    executor.time.perf_counter = touched
    for _ in range(5):
        y = np.arange(3.0) + comm.rank
        ex.run(y)
        assert np.array_equal(y, want)
    assert rec.as_dict() == kept
    ex.free()
    print("RECORDER OK", comm.rank)
""")


def test_run_does_not_touch_the_recorder():
    res = run_mpi(2, ["-c", SCRIPT], timeout=60, sleep_while_waiting=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("RECORDER OK") == 2


def records(P: int, steps: int) -> list[dict]:
    """One call per rank, made up: step t from 10 t to 10 t + 9 µs on every rank's own clock."""
    out = []
    for r in range(P):
        t = np.arange(steps) * 10e-6 + 5.0 * r          # rank r's clock is 5 r s ahead
        out.append({"entered": 5.0 * r, "step": list(range(steps)), "posted": (t + 2e-6).tolist(),
                    "completed": (t + 6e-6).tolist(), "combined": (t + 9e-6).tolist()})
    return out


def test_combine_marks_an_offset_that_moved():
    steady = (np.array([0.0, -5.0]), np.array([0.0, 1e-6]))
    moved = (np.array([0.0, -5.0 + 5e-6]), np.array([0.0, 1e-6]))
    ok = clocks.combine([steady, (steady[0] + np.array([0, 0.5e-6]), steady[1])])
    assert ok["aligned"] == [True, True] and ok["unstable"] == []
    bad = clocks.combine([steady, moved])
    assert bad["aligned"] == [True, False] and bad["unstable"] == [1]
    assert bad["spread_s"][1] == pytest.approx(5e-6)
    with pytest.raises(ValueError, match="estimates"):
        clocks.combine([])


def test_measured_trace_is_on_rank_0s_clock():
    a = clocks.combine([(np.array([0.0, -5.0]), np.array([0.0, 1e-6]))])
    t = measured_trace(records(2, 3), a)
    ends = t.step_ends()
    assert np.allclose(ends[0], ends[1]) and np.allclose(ends[0], np.arange(3) * 10e-6 + 9e-6)
    assert t.meta["aligned"] is True and t.kinds == MEASURED_KINDS


def test_clocks_that_cannot_be_aligned_say_so(tmp_path):
    steady = (np.array([0.0, -5.0]), np.array([0.0, 1e-6]))
    moved = (np.array([0.0, -4.99]), np.array([0.0, 1e-6]))
    a = clocks.combine([steady, moved])
    t = measured_trace(records(2, 3), a)
    assert t.meta["aligned"] is False
    note = not_aligned_note(a)
    assert "not aligned" in note and "rank 1" in note
    sim = simulated_trace("allreduce.recursive_doubling", 2, "loggp", N=1)
    html = tmp_path / "t.html"
    draw(t, sim, "title", html=str(html))
    page = html.read_text()
    assert "clocks not aligned" in page and "measured: " not in page
    draw(measured_trace(records(2, 3), clocks.combine([steady])), sim, "title", html=str(html))
    assert "measured: " in html.read_text()            # the same picture, aligned, draws it


def test_the_intersection_of_every_exchange_bounds_a_known_offset():
    rng = np.random.default_rng(5)
    offset = 3.25e-3                                   # rank 0's clock minus rank r's, s
    a = np.sort(rng.uniform(0, 1, 200))               # rank r's clock when it pings
    out = rng.exponential(2e-6, 200) + 0.5e-6          # one-way delays, s
    back = rng.exponential(2e-6, 200) + 0.5e-6
    t0 = a + out + offset                              # rank 0 reads its clock on arrival
    b = a + out + back                                 # rank r's clock when the answer arrives
    est, bound, rtt_bound, consistent = clocks.interval_of(a, t0, b)
    assert consistent and abs(est - offset) <= bound
    assert rtt_bound == pytest.approx((out + back).min() / 2)
    # the intersection is as narrow as the fastest way out and the fastest way back, even when
    # they happened in different exchanges: never wider than the shortest round trip's interval
    assert bound == pytest.approx((out.min() + back.min()) / 2) and bound <= rtt_bound
    # Cristian's own estimate (the shortest exchange) is within its own, wider bound
    best = np.argmin(b - a)
    assert abs(t0[best] - (a[best] + b[best]) / 2 - offset) <= rtt_bound
    # the offset steps by 10 µs half way: no point lies in every interval, the rank is marked
    t0_moved = t0 + np.where(np.arange(200) < 100, 0.0, 10e-6)
    *_, consistent = clocks.interval_of(a, t0_moved, b)
    assert not consistent
    with pytest.raises(ValueError, match="b >= a"):
        clocks.interval_of(a, t0, a - 1)


def test_an_estimate_whose_exchanges_disagree_makes_its_rank_unstable():
    good = clocks.Estimate(np.array([0.0, 1e-6]), np.array([0.0, 0.2e-6]), np.array([0.0, 1e-6]),
                           np.array([True, True]))
    bad = good._replace(consistent=np.array([True, False]))
    assert clocks.combine([good, good])["unstable"] == []
    a = clocks.combine([good, bad])
    assert a["unstable"] == [1] and a["round_trip_bound_s"] == [0.0, 1e-6] and a["error_s"][1] == 0.2e-6


def test_timeline_prices_the_simulated_trace_with_a_calibration(tmp_path):
    from mpi_exercises.bench.predict import load_calibration
    from netmodels.models import table
    from netmodels.simulate import simulate

    cal = tmp_path / "pingpong.json"
    cal.write_text((ROOT / "book/data/pingpong_reference.json").read_text())
    out = tmp_path / "t.json"
    res = run_mpi(2, ["-m", "mpi_exercises", "timeline", "allreduce.ring", "-N", "8", "--repeat", "2",
                      "--warmup", "0", "--model", "alpha-beta", "--calibration", str(cal), "--json", str(out)],
                  timeout=120, sleep_while_waiting=True)
    assert res.returncode == 0, res.stderr
    doc = json.loads(out.read_text())
    params = load_calibration([str(cal)], 2).models["alpha-beta"]
    assert doc["parameters"] == params and params != table.get("alpha-beta").defaults()
    assert str(cal) in doc["machine"] and str(cal) in res.stdout
    model = table.get("alpha-beta").make(**params)
    want = simulate(registry.build("allreduce.ring", 2, 8), model, trace=True).trace.span[1]
    assert doc["predicted_s"] == pytest.approx(want)
    # one node: every alignment's error is measured (the true offset is 0) and inside its bound
    a = doc["alignment"]
    assert a["one_node"] is True and len(a["measured_error_s"]) == 2
    assert all(m <= e + 1e-9 for m, e in zip(a["measured_error_s"], a["error_s"]))
    assert all(e <= r + 1e-12 for e, r in zip(a["error_s"], a["round_trip_bound_s"]))


@pytest.mark.parametrize("args, says", [
    (["--calibration", "/nonexistent.json"], "--calibration /nonexistent.json"),
    (["--calibration", str(ROOT / "book/data/logp_kit_vm.json"), "--model", "alpha-beta"],
     "gives no parameters of alpha-beta"),
])
def test_a_calibration_that_cannot_price_the_trace_is_refused_in_one_line(args, says):
    res = run_mpi(2, ["-m", "mpi_exercises", "timeline", "allreduce.ring", *args], timeout=60,
                  sleep_while_waiting=True)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and says in lines[0] and "Traceback" not in res.stderr
