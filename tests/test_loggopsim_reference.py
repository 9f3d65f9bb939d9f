"""The readable statement of LogGOPSim's rules (:mod:`netmodels.simulate.reference`) against
the compiled event loop (:mod:`netmodels.simulate._events`) and against LogGOPSim itself.

The random cases are small (2 to 6 ranks, 1 to 4 steps, up to 2P messages a step) and their
terms small integers of ticks (0 to 3), so that events tie often and the order of ties (age,
sends before receives, lower rank first) decides the times; a third of the rows go by
rendezvous, some messages carry noise, ranks enter at different times, and both receive orders
are drawn.  Every rank's finishing time and every message's start, take and late post are
compared, and a case one side ends in deadlock must be a deadlock for the other.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from netmodels.algorithms import registry
from netmodels.models.alphabeta import AlphaBeta
from netmodels.models.logp import LogGOPS, LogGP, LogP
from netmodels.simulate import _events, loggopsim, reference, simulate
from netmodels.simulate.arrival import RECEIVES

DATA = Path(__file__).resolve().parents[1] / "book" / "data"
NCASES = 12_000


def random_cases(n: int, seed: int = 0):
    """``n`` cases ``(nprocs, (src, dst, step, row, table, extra), entry, recv_first)``, drawn in
    bulk: 2 to 6 ranks, 1 to 4 steps of 0 to 2P messages between distinct ranks, 1 to 3 rows
    of terms (ticks 0 to 3, the first byte -send_busy to 3, rendezvous one row in three), noise
    of 0 to 2 ticks in three cases of ten, entries 0 to 3 ticks."""
    rng = np.random.default_rng(seed)
    nprocs = rng.integers(2, 7, n)
    nsteps = rng.integers(1, 5, n)
    per_step = np.floor(rng.random((n, 4)) * (2 * nprocs + 1)[:, None]).astype(int)
    per_step[np.arange(4)[None, :] >= nsteps[:, None]] = 0
    counts = per_step.sum(axis=1)
    bounds = np.concatenate(([0], np.cumsum(counts)))
    case_of = np.repeat(np.arange(n), counts)
    p = nprocs[case_of]
    src = np.floor(rng.random(case_of.size) * p).astype(np.int32)
    dst = ((src + 1 + np.floor(rng.random(case_of.size) * (p - 1))) % p).astype(np.int32)
    step = np.concatenate([np.repeat(np.arange(4), k) for k in per_step]).astype(np.int32)
    nrows = rng.integers(1, 4, n)
    tables = rng.integers(0, 4, (n, 3, 6))
    tables[:, :, 2] = np.maximum(rng.integers(-3, 4, (n, 3)), -tables[:, :, 0])   # the first byte after the send started
    tables[:, :, 5] = rng.random((n, 3)) < 1 / 3
    row = np.floor(rng.random(case_of.size) * nrows[case_of]).astype(np.int32)
    noisy = rng.random(n) < 0.3
    extra = rng.integers(0, 3, case_of.size)
    entry = rng.integers(0, 4, (n, 6))
    recv_first = rng.random(n) < 0.5
    for c in range(n):
        a, b = bounds[c], bounds[c + 1]
        arrays = (src[a:b], dst[a:b], step[a:b], row[a:b], tables[c, :nrows[c]],
                  extra[a:b] if noisy[c] else np.zeros(0, np.int64))
        yield int(nprocs[c]), arrays, entry[c, :nprocs[c]], bool(recv_first[c])


def _compiled(nprocs, arrays, entry, recv_first):
    """``(finish, rec)`` of the compiled loop, or None for a deadlock."""
    rec = np.full((_events.REC_ROWS, arrays[0].size), -1, np.int64)
    try:
        return _events.simulate(nprocs, *arrays, entry, recv_first, rec).tolist(), rec
    except ValueError as e:
        assert "deadlock" in str(e)
        return None


def _reference(nprocs, arrays, entry, recv_first):
    """``(finish, messages)`` of the reference, or None for a deadlock."""
    msgs = reference.messages_of(*arrays)
    try:
        return reference.run(nprocs, msgs, entry.tolist(), RECEIVES[recv_first]), msgs
    except ValueError as e:
        assert "deadlock" in str(e)
        return None


def test_the_reference_equals_the_compiled_loop_on_random_schedules():
    seen = {"deadlock": 0, "late post": 0, "waited": 0, "rendezvous": 0, "messages": 0}
    for k, case in enumerate(random_cases(NCASES)):
        want, got = _reference(*case), _compiled(*case)
        assert (want is None) == (got is None), f"case {k}: one side ends in deadlock"
        if want is None:
            seen["deadlock"] += 1
            continue
        (finish, msgs), (cfinish, rec) = want, got
        assert finish == cfinish, f"case {k}"
        assert [m.sent for m in msgs] == rec[_events.REC_SEND].tolist(), f"case {k}"
        assert [m.taken for m in msgs] == rec[_events.REC_TAKEN].tolist(), f"case {k}"
        assert [m.late_post for m in msgs] == rec[_events.REC_POSTED].tolist(), f"case {k}"
        seen["messages"] += len(msgs)
        seen["late post"] += sum(m.late_post >= 0 for m in msgs)
        seen["waited"] += sum(m.taken > m.sent + m.send_busy + m.first_byte for m in msgs)
        seen["rendezvous"] += sum(m.rendezvous for m in msgs)
    assert NCASES - seen["deadlock"] >= 10_000          # cases whose times are compared
    # the cases exercise every rule: deadlocks, receives posted late, messages that waited
    # for the CPU or the NIC, rendezvous (their share of the compared messages)
    assert seen["deadlock"] > NCASES // 50 and seen["late post"] > seen["messages"] // 20
    assert seen["waited"] > seen["messages"] // 10 and seen["rendezvous"] > seen["messages"] // 10


def _random_model(rng, p):
    """A random model of the LogP family in seconds: o_r != o_s, G, O and S (S between the
    sizes of the schedules below)."""
    us = 1e-6
    L, o, g, o_r = (float(x) for x in rng.choice([0.0, 0.3, 0.7, 1.3, 2.1], 4) * us)
    kind = rng.integers(3)
    if kind == 0:
        return LogP(L=L, o=o, g=g, P=p, o_r=o_r)
    G = float(rng.choice([0.0, 0.1, 0.3])) * 1e-9
    if kind == 1:
        return LogGP(L=L, o=o, g=g, P=p, o_r=o_r, G=G)
    O = float(rng.choice([0.0, 0.05, 0.4])) * 1e-9
    return LogGOPS(L=L, o=o, g=g, P=p, o_r=o_r, G=G, O=O, S=float(rng.choice([0, 100, 5000, np.inf])))


@pytest.mark.parametrize("seed", range(4))
def test_the_reference_equals_simulate_on_builders_and_models(seed):
    """The whole path: a registered builder or a stored random schedule, a model in seconds,
    the engine's terms; the reference's finishing times equal ``simulate``'s to the tick."""
    rng = np.random.default_rng(seed)
    names, compared = registry.names(), 0
    for _ in range(40):
        p = int(rng.integers(2, 10))
        name = names[int(rng.integers(len(names)))]
        a = registry.build(name, p, 0 if name.startswith("barrier") else int(rng.choice([1, 7, 300])))
        model = _random_model(rng, p)
        receives = RECEIVES[int(rng.integers(2))]
        try:
            want = simulate(a, model, semantics="loggopsim", receives=receives).finish.tolist()
        except ValueError as e:
            assert "deadlock" in str(e)
            with pytest.raises(ValueError, match="deadlock"):
                reference.simulate(a, model, receives=receives)
            continue
        got, _ = reference.simulate(a, model, receives=receives)
        assert [round(x * 1e12) for x in got] == [round(x * 1e12) for x in want], (name, p, model, receives)
        compared += 1
    assert compared >= 30


def _small(case):
    return case.get("nprocs", 99) <= 16 and case.get("messages", 1e9) <= 200


@pytest.mark.parametrize("stored", ["loggopsim_exact.json", "loggops_exact.json"])
def test_the_reference_equals_loggopsim_itself(stored):
    """LogGOPSim's stored times (every rank's where stored) of the small cases of the two
    exact comparisons: the reference, not only the compiled loop, is LogGOPSim's rules."""
    data = json.loads((DATA / stored).read_text())
    unit, rows = data["time_unit_s"], 0
    for case in filter(_small, data["cases"]):
        a = loggopsim.case_arrays(case)
        for name, t_ps in case["time_ps"].items():
            model = loggopsim.model_of(data["parameter_sets"][name], unit, a.nprocs)
            if t_ps is None:                     # LogGOPSim: messages left unmatched
                with pytest.raises(ValueError, match="deadlock"):
                    reference.simulate(a, model, receives=case["receives"], elem_bytes=data["elem_bytes"])
                continue
            finish, _ = reference.simulate(a, model, receives=case["receives"], elem_bytes=data["elem_bytes"])
            assert round(max(finish) / unit) == t_ps, (loggopsim.case_key(case), name)
            if name in case.get("hosts_ps", {}):
                assert [round(x / unit) for x in finish] == case["hosts_ps"][name], (loggopsim.case_key(case), name)
            rows += 1
    assert rows >= 100


@pytest.mark.parametrize("bad, name", [
    ({"receives": "before-sends"}, "receives"), ({"elem_bytes": 0}, "elem_bytes"),
    ({"entry": [0.0, 1e-6]}, "entry"), ({"entry": [-1e-6, 0.0, 0.0, 0.0]}, "entry"),
    ({"model": AlphaBeta(alpha=1e-6, beta=1e-9)}, "model"),
])
def test_bad_arguments_are_refused_by_name(bad, name):
    kwargs = {"model": LogGP(L=1e-6, o=1e-6, g=1e-6, P=4), **bad}
    model = kwargs.pop("model")
    with pytest.raises(ValueError, match=name):
        reference.simulate(registry.build("barrier.dissemination", 4, 0), model, **kwargs)


def test_the_chapter_shows_the_rules_and_the_walk_as_the_modules_have_them():
    """*Simulating at scale* shows the reference and the engine's walk from source: its committed
    outputs are today's source (re-execute the chapter when either changes)."""
    import inspect

    from netmodels.figures.source import show_source
    from netmodels.simulate import engine

    nb = json.loads((DATA.parent / "simulating.ipynb").read_text(encoding="utf-8"))
    shown = ["".join(o["data"]["text/markdown"]) for c in nb["cells"] if c["cell_type"] == "code"
             for o in c.get("outputs", []) if "text/markdown" in o.get("data", {})]
    assert show_source(reference.Message, reference.Rank, reference.run, reference.Loop).data in shown
    walks = [s for s in shown if "rule.advance(" in s and "rule.costs(" in s]
    assert len(walks) == 1
    parts = (engine.walk_steps, engine.sync_step, engine.stepwise_step, engine.clocked_step, engine.step_costs)
    assert walks[0] == show_source(*parts).data                # the walk and its step rules, as they are today
    assert "for t, step in enumerate(steps(" in walks[0]
    assert "walk_steps(" in inspect.getsource(engine.simulate)     # and simulate walks with it
    walk = inspect.getsource(engine.walk_steps)                  # which hands every step to the rules shown
    assert "sync_step(" in walk and "stepwise_step(" in walk
