"""LogGOPS: LogGP plus O (CPU overhead per byte) and S (eager limit), against LogGOPSim.

``book/data/loggops_exact.json`` holds LogGOPSim's times (integer picoseconds) of
:func:`netmodels.simulate.loggopsim.loggops_cases` (a dissemination barrier, recursive
doubling and ring allreduces, a ring allgather, a pairwise alltoall and a binomial broadcast at
P = 8, 16, 64 and 8 B, 4 KiB, 64 KiB, both receive orders) under the five kinds of
:data:`~netmodels.simulate.loggopsim.LOGGOPS_KINDS` (O > 0 everywhere, O > G in one; S below
every message, between the sizes, above them), run with ``-O`` and ``-S`` by
``benchmarks/validate_loggopsim.py --suite loggops``.  A null time is a case LogGOPSim ends with
messages unmatched: a rendezvous send waits for a receive posted only after it (the kit
raises ValueError there).  The closed forms below are derived from LogGOPSim's rules
(``LogGOPSim.cpp``), independently of the kit's code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from netmodels.algorithms.arrays import ArraySchedule, ArrayStep
from netmodels.models import table
from netmodels.models.logp import LogGOPS, LogGP
from netmodels.simulate import loggopsim, simulate

DATA = json.loads((Path(__file__).resolve().parents[1] / "book" / "data" / "loggops_exact.json").read_text())
UNIT = DATA["time_unit_s"]


def _run(case, name):
    a = loggopsim.case_arrays(case)
    model = loggopsim.model_of(DATA["parameter_sets"][name], UNIT, a.nprocs)
    return simulate(a, model, semantics="loggopsim", elem_bytes=DATA["elem_bytes"], receives=case["receives"])


@pytest.mark.slow
@pytest.mark.parametrize("case", DATA["cases"], ids=[loggopsim.case_key(c) for c in DATA["cases"]])
def test_loggopsim_semantics_equals_loggopsim_with_O_and_S(case):
    for name, t_ps in case["time_ps"].items():
        if t_ps is None:                         # LogGOPSim: unmatched at the end
            with pytest.raises(ValueError, match="deadlock"):
                _run(case, name)
            continue
        r = _run(case, name)
        assert round(r.time / UNIT) == t_ps, name
        if name in case.get("hosts_ps", {}):
            assert [round(x / UNIT) for x in r.finish] == case["hosts_ps"][name], name


def test_the_stored_comparison_covers_what_it_claims():
    assert sorted(loggopsim.case_key(c) for c in DATA["cases"]) == \
        sorted(loggopsim.case_key(c) for c in loggopsim.loggops_cases())
    assert DATA["parameter_sets"] == loggopsim.LOGGOPS_KINDS and len(DATA["commit"]) == 40
    kinds = DATA["parameter_sets"].values()
    assert all(q["O"] > 0 for q in kinds) and any(q["O"] > q["G"] for q in kinds)
    sizes = {max(c["bytes"], 1) for c in DATA["cases"]}
    assert any(q["S"] < min(sizes) for q in kinds) and any(q["S"] > max(sizes) for q in kinds)
    assert any(min(sizes) < q["S"] < max(sizes) for q in kinds)
    assert {c["nprocs"] for c in DATA["cases"]} == {8, 16, 64}
    assert {c["receives"] for c in DATA["cases"]} == {"after-sends", "with-sends"}
    times = [t for c in DATA["cases"] for t in c["time_ps"].values()]
    assert len(times) == 480
    # deadlocks (receives after a rendezvous send) and finished rendezvous runs both present
    assert 50 <= sum(t is None for t in times) <= 200
    # receives posted with the sends never deadlock; after the sends, the broadcast (no rank
    # sends to a rank that sends to it first) never does either
    assert all(t is not None for c in DATA["cases"] if c["receives"] == "with-sends" for t in c["time_ps"].values())
    assert all(t is not None for c in DATA["cases"] if c["algorithm"].startswith("broadcast")
               for t in c["time_ps"].values())


def test_S_changes_loggopsims_times_where_messages_switch():
    # the same case with every message eager (kit, S above every size) differs from
    # LogGOPSim's stored rendezvous times, rank by rank, on many cases: the comparison checks
    # the rendezvous rule, not a no-op.  (A rendezvous holds the sender until its message is
    # taken, o + L after the send at the earliest, never longer than the receiver's own
    # receive: the end times of these collectives do not move, the senders' times do)
    differ = 0
    for c in DATA["cases"]:
        hosts = c.get("hosts_ps", {}).get("O, S=0")
        if hosts is None:
            continue
        q = dict(DATA["parameter_sets"]["O, S=0"], S=2**31 - 1)
        a = loggopsim.case_arrays(c)
        eager = simulate(a, loggopsim.model_of(q, UNIT, a.nprocs), semantics="loggopsim", receives=c["receives"])
        differ += [round(x / UNIT) for x in eager.finish] != hosts
    assert differ >= 10, differ


# ------------------------------------------------------------ closed forms
L, o, g, G, O, M = 3e-6, 0.5e-6, 0.8e-6, 1e-10, 4e-10, 4096       # bytes; (M - 1) O > (M - 1) G, L > (M - 1) O


def _schedule(pairs, nprocs):
    """One message of M bytes per step, ``pairs`` = [(src, dst), ...]."""
    steps = [ArrayStep.of([s], [d], 0, [M // 8], False) for s, d in pairs]
    return ArraySchedule("pairs", nprocs, M // 8, steps)


def _model(S, o_=o, O_=O):
    return LogGOPS(L=L, o=o_, g=g, P=3, G=G, O=O_, S=S)


@pytest.mark.parametrize("semantics", ["loggopsim", "stepwise"])
@pytest.mark.parametrize("S", [M, M - 1], ids=["eager", "rendezvous"])
def test_pingpong_closed_form(semantics, S):
    m = M
    wO, wG = (m - 1) * O, (m - 1) * G
    one = 2 * o + L + max(wO, wG)                       # send start to the end of the receive
    r = simulate(_schedule([(0, 1), (1, 0)], 2), _model(S), semantics=semantics)
    # rank 1 answers at `one`; its CPU is free after its copy, or (rendezvous) only once rank 0
    # has taken the answer's first byte, o + L after the answer's start
    held = o + wO if m <= S else max(o + wO, o + L)
    assert r.finish[0] == pytest.approx(2 * one, rel=1e-12)
    assert r.finish[1] == pytest.approx(one + held, rel=1e-12)
    sync = simulate(_schedule([(0, 1), (1, 0)], 2), _model(S), semantics="sync")
    assert sync.time == pytest.approx(2 * one, rel=1e-12)


def test_O_doubled_moves_a_message_by_its_copies_and_a_barrier_not():
    m = M
    pp = _schedule([(0, 1), (1, 0)], 2)
    for semantics in ("loggopsim", "stepwise", "sync"):
        t1 = simulate(pp, _model(1e9), semantics=semantics).time
        t2 = simulate(pp, _model(1e9, O_=2 * O), semantics=semantics).time
        assert t2 - t1 == pytest.approx(2 * (m - 1) * O, rel=1e-9), semantics
    barrier = loggopsim.case_arrays({"algorithm": "barrier.dissemination", "nprocs": 8, "bytes": 0})
    assert simulate(barrier, _model(1e9)).time == simulate(barrier, _model(1e9, O_=2 * O)).time


@pytest.mark.parametrize("semantics", ["loggopsim", "stepwise"])
def test_S_across_the_size_switches_the_protocol_by_the_handshake(semantics):
    # rank 0 sends M bytes to 1, then to 2: by rendezvous its second send waits until rank 1
    # has taken the first message (o + L after the start), eagerly only for its CPU and gap
    m = M
    wO, wG = (m - 1) * O, (m - 1) * G
    s = _schedule([(0, 1), (0, 2)], 3)
    eager = simulate(s, _model(m), semantics=semantics).time
    rdv = simulate(s, _model(m - 1), semantics=semantics).time
    second_eager, second_rdv = max(o + wO, g + wG), max(o + wO, g + wG, o + L)
    assert eager == pytest.approx(second_eager + 2 * o + L + max(wO, wG), rel=1e-12)
    assert rdv - eager == pytest.approx(second_rdv - second_eager, rel=1e-9) and rdv > eager


def test_loggops_without_O_and_S_is_loggp():
    case = {"algorithm": "allreduce.ring", "nprocs": 16, "bytes": 65536}
    a = loggopsim.case_arrays(case)
    base = dict(L=L, o=o, g=g, P=16, G=G)
    for semantics in ("loggopsim", "stepwise", "sync"):
        assert simulate(a, LogGOPS(**base), semantics=semantics).time == \
            simulate(a, LogGP(**base), semantics=semantics).time


def test_loggops_is_an_entry_of_the_table_beside_loggp():
    e = table.get("loggops")
    assert "loggp" in table.MODELS and e.cls is LogGOPS and e.semantics == "stepwise"
    assert {p.name: p.unit for p in e.parameters}["O"] == "s/B" and e.accepts("S")
    d = e.defaults()
    assert d["O"] == 0.0 and d["S"] == 65535.0           # LogGOPSim's defaults of -O and -S
    assert {k: d[k] for k in ("L", "o_s", "o_r", "g", "G")} == table.get("loggp").defaults()
    assert "LogGOPSim" in e.source()
    assert e.make(O=1e-9).O == 1e-9


@pytest.mark.parametrize("bad", [{"O": -1e-9}, {"S": -1}, {"S": float("nan")}])
def test_bad_parameters_are_refused(bad):
    with pytest.raises(ValueError, match="O|S"):
        LogGOPS(L=L, o=o, g=g, P=2, G=G, **bad)
