"""Messages of fresh data (``pingpong --fresh``, ``exchange --fresh``): each timed sample writes
its send buffer inside the span, as a collective sends data it has just written, and the best
write into memory of the rank's own is taken off; the JSON and the last lines say so."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from mpi_exercises.bench import exchange, fresh_data, pingpong
from tests.mpirun import run_mpi_ok


class RecordingComm:
    """One rank of a pair, without MPI: records each call (its bytes and the first byte sent)."""

    def __init__(self, rank=0):
        self.rank, self.calls = rank, []

    def Get_rank(self):
        return self.rank

    def Sendrecv(self, send, dest, sendtag, recvbuf, source, recvtag):
        buf = send[0]
        self.calls.append(("sendrecv", buf.size, int(buf[0]) if buf.size else None))

    def Send(self, send, dest, tag):
        self.calls.append(("send", send[0].size, int(send[0][0]) if send[0].size else None))

    def Recv(self, recv, source, tag):
        self.calls.append(("recv", recv[0].size))


def writer(comm, send):
    """A write that fills ``send`` with its own count and records itself."""
    count = []

    def write():
        count.append(1)
        send[:] = len(count)
        comm.calls.append(("write",))
    return write


@pytest.mark.parametrize("iters,warmup", [(5, 0), (3, 2)])
def test_every_fresh_exchange_sends_the_data_written_just_before_it(iters, warmup):
    comm, send, recv = RecordingComm(), np.zeros(64, np.uint8), np.zeros(64, np.uint8)
    t = exchange.exchanges(comm, send, recv, iters, warmup, write=writer(comm, send))
    assert t.shape == (iters,) and np.all(t >= 0)
    n = iters + warmup
    assert comm.calls == [c for k in range(1, n + 1) for c in (("write",), ("sendrecv", 64, k))]


@pytest.mark.parametrize("rank,order", [(0, ("write", "send", "recv")), (1, ("recv", "write", "send"))])
def test_every_fresh_round_trip_writes_right_before_each_send(rank, order):
    comm, send, recv = RecordingComm(rank), np.zeros(16, np.uint8), np.zeros(16, np.uint8)
    pingpong.roundtrips(comm, send, recv, 3, 1, write=writer(comm, send))
    assert [c[0] for c in comm.calls] == list(order) * 4
    assert [c[2] for c in comm.calls if c[0] == "send"] == [1, 2, 3, 4]      # the bytes just written


@pytest.mark.parametrize("base,expect", [(exchange.exchanges, 0.02), (pingpong.roundtrips, 0.01)])
def test_the_write_is_inside_the_timed_span(base, expect):
    comm, send, recv = RecordingComm(), np.zeros(8, np.uint8), np.zeros(8, np.uint8)
    t = base(comm, send, recv, 2, 0, write=lambda: time.sleep(0.02))
    assert np.all(t >= expect)          # a round trip's one-way time is half of it
    assert np.all(base(comm, send, recv, 2, 0) < expect)


def test_the_plain_timers_write_nothing():
    comm, send, recv = RecordingComm(), np.full(8, 7, np.uint8), np.zeros(8, np.uint8)
    exchange.exchanges(comm, send, recv, 4, 1)
    pingpong.roundtrips(comm, send, recv, 1, 0)
    assert comm.calls == [("sendrecv", 8, 7)] * 5 + [("send", 8, 7), ("recv", 8)]


def test_the_fresh_timer_takes_the_best_own_write_off_every_sample(monkeypatch):
    seen = []

    def base(comm, send, recv, iters, warmup, write):
        write()
        seen.append(send.copy())
        return np.array([1.0, 2.0, 3.0])[:iters]
    monkeypatch.setattr(fresh_data, "own_write_s", lambda own, source, times: 0.25 if own.size == 16 else 9.0)
    timed = fresh_data.timer(base, 32)
    send, recv = np.zeros(32, np.uint8), np.zeros(32, np.uint8)
    assert timed(None, send[:16], recv[:16], 3, 0).tolist() == [0.75, 1.75, 2.75]
    assert (seen[0] == 0xA5).all() and not send[16:].any()          # only the size sent is written


def test_the_best_own_write_copies_and_is_a_minimum():
    own, source = np.zeros(1 << 20, np.uint8), np.full(1 << 20, 3, np.uint8)
    best = fresh_data.own_write_s(own, source, 5)
    assert (own == 3).all() and 0 < best < 1
    assert fresh_data.own_write_s(own[:0], source[:0], 5) < best     # nothing to copy costs less


@pytest.mark.mpi
@pytest.mark.parametrize("command,last", [("exchange", "exchange of fresh data: 4 sizes"),
                                          ("pingpong", None)])
def test_fresh_on_two_ranks_says_fresh_and_keeps_every_sample(tmp_path, command, last):
    out = tmp_path / f"{command}-fresh.json"
    res = run_mpi_ok(2, ["-m", "mpi_exercises", command, "--fresh", "--sizes", "0,64,64k,256k",
                         "--iterations", "20", "--warmup", "2", "--time-budget", "0", "--no-progress",
                         "--json", str(out)], timeout=120)
    data = json.loads(out.read_text())
    assert data["benchmark"] == command and data["fresh"] is True
    assert data["timing_method"].endswith("; " + fresh_data.METHOD)
    assert [r["bytes"] for r in data["results"]] == [0, 64, 65536, 262144]
    for r in data["results"]:
        assert r["samples"] == len(r["times_s"]) >= 20 and 0 < r["min_s"] <= r["median_s"]
    assert fresh_data.METHOD in res.stdout
    if last:
        assert last in res.stdout.splitlines()[-2]
    else:
        assert "fresh data" in data["fit"]["what"]
