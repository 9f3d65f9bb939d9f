"""Simulated traces (``simulate(..., trace=True)``) under the *sync* and *stepwise* semantics.

References: the operations of a dissemination barrier under LogP and of recursive doubling
under α-β, written out by hand from the models' rules; and, for every model of the table and
every registered algorithm at small P, that the trace ends where the simulation says each
rank finishes and that a rank's CPU never does two things at once.  The *loggopsim*
semantics is compared with LogGOPSim's own visualisation files in
tests/test_loggopsim_traces.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from netmodels.algorithms import registry
from netmodels.models import table
from netmodels.models.alphabeta import AlphaBeta
from netmodels.models.logp import LogGP, LogP
from netmodels.simulate import simulate
from netmodels.simulate import trace as tr

US = 1e-6
CPU = (tr.SEND, tr.RECV, tr.BYTES, tr.COMBINE)


def _rows(t: tr.Trace, kind: int):
    """``{(rank, step): (start, end)}`` of the rows of ``kind`` (one each)."""
    m = t.kind == kind
    out = {}
    for r, s, a, b in zip(t.rank[m].tolist(), t.step[m].tolist(), t.start[m].tolist(), t.end[m].tolist()):
        assert (r, s) not in out
        out[(r, s)] = (a, b)
    return out


@pytest.mark.parametrize("semantics", ["sync", "stepwise"])
def test_dissemination_under_logp_is_the_hand_written_timeline(semantics):
    L, o_s, o_r, g = 5 * US, 1 * US, 2 * US, 0.5 * US      # g below a round: no gap holds anything
    p = 8
    t = simulate(registry.build("barrier.dissemination", p, 0), LogP(L, o_s, g, p, o_r=o_r),
                 semantics=semantics, trace=True).trace
    round_ = o_s + L + o_r
    send, wire, recv = _rows(t, tr.SEND), _rows(t, tr.WIRE), _rows(t, tr.RECV)
    assert len(t) == 3 * 3 * p and set(t.kind.tolist()) == {tr.SEND, tr.WIRE, tr.RECV}
    for r in range(p):
        for s in range(3):
            b = s * round_
            assert send[(r, s)] == pytest.approx((b, b + o_s), abs=1e-15)
            assert wire[(r, s)] == pytest.approx((b + o_s, b + o_s + L), abs=1e-15)      # sender's row
            assert recv[(r, s)] == pytest.approx((b + o_s + L, b + round_), abs=1e-15)  # receiver's row
    m = t.kind == tr.WIRE
    assert (t.peer[m] == (t.rank[m] + 2 ** t.step[m]) % p).all()     # a message goes to rank + 2^step
    m = t.kind == tr.RECV
    assert (t.peer[m] == (t.rank[m] - 2 ** t.step[m]) % p).all()


def test_a_long_gap_shows_as_gap_before_each_later_send():
    L, o, g = 1 * US, 1 * US, 10 * US                      # a round (3 µs) is shorter than g
    p = 8
    t = simulate(registry.build("barrier.dissemination", p, 0), LogP(L, o, g, p), semantics="stepwise",
                 trace=True).trace
    gap, send = _rows(t, tr.GAP), _rows(t, tr.SEND)
    for r in range(p):
        assert (r, 0) not in gap
        for s in (1, 2):
            assert send[(r, s)][0] == pytest.approx(s * g)          # sends one gap apart
            assert gap[(r, s)] == pytest.approx(((s - 1) * g + o + L + o, s * g))


def test_a_long_message_takes_its_bytes_on_the_receiver_before_the_overhead():
    L, o, g, G = 2 * US, 1 * US, 0.1 * US, 1e-9
    m = 1000 * 8
    t = simulate(registry.build("allreduce.recursive_doubling", 2, 1000), LogGP(L, o, g, 2, G=G),
                 semantics="stepwise", trace=True).trace
    wire = (m - 1) * G
    assert _rows(t, tr.WIRE)[(0, 0)] == pytest.approx((o, o + L))
    assert _rows(t, tr.BYTES)[(1, 0)] == pytest.approx((o + L, o + L + wire))
    assert _rows(t, tr.RECV)[(1, 0)] == pytest.approx((o + L + wire, 2 * o + L + wire))


@pytest.mark.parametrize("semantics", ["sync", "stepwise"])
def test_recursive_doubling_under_alpha_beta_is_one_wire_per_rank_and_step(semantics):
    alpha, beta, n = 10 * US, 1e-9, 1000
    p = 8
    t = simulate(registry.build("allreduce.recursive_doubling", p, n), AlphaBeta(alpha, beta),
                 semantics=semantics, trace=True).trace
    c = alpha + beta * n * 8                   # one message each way per step, full duplex
    rows = _rows(t, tr.WIRE)
    assert len(t) == p * 3 and set(rows) == {(r, s) for r in range(p) for s in range(3)}
    for (r, s), (a, b) in rows.items():
        assert (a, b) == pytest.approx((s * c, (s + 1) * c))
    assert (t.peer == -1).all()


def test_combining_under_nbl_follows_the_steps_longest_communication():
    model = table.get("nbl").default()
    a = registry.build("allreduce.recursive_doubling", 4, 64)
    res = simulate(a, model, semantics="sync", trace=True)
    t = res.trace
    comb, wire = _rows(t, tr.COMBINE), _rows(t, tr.WIRE)
    ends = np.cumsum(res.step_times)
    for (r, s), (x, y) in comb.items():
        longest = max(wire[(q, s)][1] for q in range(4))
        assert x == pytest.approx(longest) and y == pytest.approx(ends[s]) or y <= ends[s] + 1e-15


#: every model of the table, its default machine, at small P on every algorithm
MODELS = [n for n in table.names()]


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("semantics", ["sync", "stepwise"])
def test_every_model_traces_every_algorithm_to_its_finish(model, semantics):
    m = table.get(model).default()
    for name in registry.names():
        n = 0 if name.startswith("barrier.") else 37
        for p in (3, 8):
            try:
                a = registry.build(name, p, n)
                res = simulate(a, m, semantics=semantics, trace=True)
            except ValueError:            # an option tied to P, or NBL's f table without the links needed
                continue
            t = res.trace
            assert t.semantics == semantics and t.nprocs == p
            assert t.span[1] == pytest.approx(res.time, rel=1e-12, abs=1e-18), (name, p)
            if semantics == "stepwise":   # each rank's last operation ends where the simulation says it finishes
                last = np.full(p, np.nan)
                for r in range(p):
                    mine = t.end[t.rank == r]
                    if mine.size:
                        last[r] = mine.max()
                has = ~np.isnan(last)
                if hasattr(m, "message_terms"):
                    assert np.allclose(last[has], res.finish[has], rtol=1e-12, atol=1e-18), (name, p)
                else:                     # a rank priced nothing (LoP's receiver) may still wait for a message
                    assert (last[has] <= res.finish[has] * (1 + 1e-12) + 1e-18).all(), (name, p)
            if hasattr(m, "message_terms"):   # the LogP family: per message, a CPU does one thing at a time
                cpu = np.isin(t.kind, CPU)
                msgs = int(sum(int((s.src != s.dst).sum()) for s in a.steps))
                assert int((t.kind == tr.SEND).sum()) == msgs == int((t.kind == tr.RECV).sum())
                for r in range(p):
                    mine = cpu & (t.rank == r)
                    order = np.argsort(t.start[mine], kind="stable")
                    s, e = t.start[mine][order], t.end[mine][order]
                    assert (s[1:] >= e[:-1] - 1e-15).all(), (name, p, r)


def test_a_trace_that_would_not_fit_is_refused_in_one_line_before_the_run():
    a = registry.build("barrier.dissemination", 64, 0)
    calls = []
    with pytest.raises(ValueError) as err:
        simulate(a, table.get("logp").default(), trace=True, memory=10_000, progress=calls.append)
    text = str(err.value)
    assert "\n" not in text and "trace of P = 64 ranks" in text and "GiB" in text
    assert calls == []                                         # refused before the first step
    simulate(a, table.get("logp").default(), trace=True, memory=10**9)   # fits: runs
    with pytest.raises(ValueError, match="trace must be True or False"):
        simulate(a, table.get("logp").default(), trace="yes")


def test_no_trace_unless_asked():
    a = registry.build("barrier.dissemination", 8, 0)
    assert simulate(a, table.get("logp").default()).trace is None


# ---------------------------------------------------------------- the Trace itself
def _trace(**cols):
    base = dict(rank=[0, 1], peer=[1, -1], step=[0, 0], kind=[tr.SEND, tr.WIRE], start=[0.0, 1.0], end=[1.0, 2.0])
    base.update(cols)
    return tr.Trace(2, *(np.asarray(base[k]) for k in ("rank", "peer", "step", "kind", "start", "end")))


@pytest.mark.parametrize("cols, fragment", [
    ({"rank": [0, 2]}, "rank must lie in 0..1"),
    ({"peer": [0, -2]}, "peer must lie in -1..1"),
    ({"kind": [0, 99]}, "kind must lie in"),
    ({"step": [-1, 0]}, "step must be >= 0"),
    ({"end": [1.0, 0.5]}, "end >= start"),
    ({"start": [0.0, np.nan]}, "finite"),
    ({"rank": [0]}, "one entry per operation"),
    ({"rank": [0.5, 1.0]}, "rank must hold integers"),
])
def test_a_bad_trace_is_refused_naming_the_column(cols, fragment):
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace(".", r"\.")):
        _trace(**cols)


def test_a_trace_goes_to_json_and_back():
    t = simulate(registry.build("allreduce.ring", 5, 13), table.get("loggp").default(), trace=True).trace
    back = tr.from_json(t.to_json())
    for k in ("rank", "peer", "step", "kind", "start", "end"):
        assert np.array_equal(getattr(back, k), getattr(t, k))
    assert (back.kinds, back.semantics, back.model, back.nprocs) == (t.kinds, t.semantics, t.model, t.nprocs)
    with pytest.raises(ValueError, match="not a trace"):
        tr.from_json({"nprocs": 2})


def test_step_ends_is_each_ranks_last_end_per_step():
    t = _trace(rank=[0, 0, 1], peer=[1, 1, -1], step=[0, 1, 1], kind=[0, 0, 1], start=[0.0, 3.0, 1.0],
               end=[1.0, 4.0, 2.0])
    e = t.step_ends()
    assert e[0].tolist() == [1.0, 4.0] and np.isnan(e[1, 0]) and e[1, 1] == 2.0
