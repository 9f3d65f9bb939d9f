"""The exchange of fresh data (``exchange --fresh``): every timed exchange sends a buffer written
just before it, as a collective sends data it has just written; its JSON and last line say so."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mpi_exercises.bench import exchange
from tests.mpirun import run_mpi_ok


class RecordingComm:
    """Rank 0 of a pair, without MPI: records each Sendrecv (its bytes and the first byte sent)."""

    def __init__(self):
        self.calls = []

    def Get_rank(self):
        return 0

    def Sendrecv(self, send, dest, sendtag, recvbuf, source, recvtag):
        buf = send[0]
        self.calls.append(("sendrecv", buf.size, int(buf[0]) if buf.size else None, sendtag))


@pytest.mark.parametrize("iters,warmup", [(5, 0), (3, 2)])
def test_every_sample_of_a_fresh_exchange_sends_the_data_written_just_before_it(iters, warmup):
    comm, send, recv = RecordingComm(), np.zeros(64, np.uint8), np.zeros(64, np.uint8)
    written = []

    def write():
        written.append(len(written) + 1)
        send[:] = written[-1]
        comm.calls.append(("write",))
    t = exchange.exchanges(comm, send, recv, iters, warmup, write=write)
    assert t.shape == (iters,) and np.all(t >= 0)
    n = iters + warmup
    assert len(written) == n                                  # one write per sample, warm-ups too
    # each sample: the write, the meeting (0 bytes), then the exchange of the bytes just written
    expected = [c for k in range(1, n + 1) for c in (("write",), ("sendrecv", 0, None, 4), ("sendrecv", 64, k, 3))]
    assert comm.calls == expected


def test_the_plain_exchange_writes_nothing_and_does_not_meet_first():
    comm, send, recv = RecordingComm(), np.full(8, 7, np.uint8), np.zeros(8, np.uint8)
    exchange.exchanges(comm, send, recv, 4, 1)
    assert comm.calls == [("sendrecv", 8, 7, 3)] * 5


def test_the_fresh_timer_copies_its_source_into_the_send_buffer_of_each_size():
    comm, source = RecordingComm(), np.arange(32, dtype=np.uint8) + 100
    send, recv = np.zeros(32, np.uint8), np.zeros(32, np.uint8)
    exchange.fresh_timer(source)(comm, send[:16], recv[:16], 2, 0)
    assert np.array_equal(send[:16], source[:16]) and not send[16:].any()      # only the size sent
    assert comm.calls[-1] == ("sendrecv", 16, 100, 3)


@pytest.mark.mpi
def test_exchange_fresh_on_two_ranks_says_fresh_and_keeps_every_sample(tmp_path):
    out = tmp_path / "exchange-fresh.json"
    res = run_mpi_ok(2, ["-m", "mpi_exercises", "exchange", "--fresh", "--sizes", "0,64,1k,64k,256k",
                         "--iterations", "20", "--warmup", "2", "--time-budget", "0", "--no-progress",
                         "--json", str(out)], timeout=120)
    data = json.loads(out.read_text())
    assert data["benchmark"] == "exchange" and data["fresh"] is True
    assert data["timing_method"] == exchange.FRESH_METHOD != exchange.METHOD
    assert [r["bytes"] for r in data["results"]] == [0, 64, 1024, 65536, 262144]
    for r in data["results"]:
        assert r["samples"] == len(r["times_s"]) >= 20 and 0 < r["min_s"] <= r["median_s"]
    assert exchange.FRESH_METHOD in res.stdout
    assert "exchange of fresh data: 5 sizes" in res.stdout.splitlines()[-2]
