"""The kit's simulator against LogGOPSim, a simulator written elsewhere.

``book/data/loggopsim_reference.json`` holds LogGOPSim's finishing times (integer
picoseconds) of every case of :func:`netmodels.simulate.loggopsim.cases`: every
registered builder at P = 2, 3, 7, 37, 100, 1000 and 8 B, 4 KiB, 1 MiB, and 200 seeded
random schedules, under two LogGP parameter sets (g > o and g < o, both with G > 0).
``book/data/loggopsim_exact.json`` holds a second comparison, of exactness: every builder
at P = 5, 16, 63, 129 (a few at 1000) and 8 B, 1000 B, 300 KiB, under seven parameter
kinds (o = 0, o = 1 ps, g = o, g = 0, G = 0, large G with small L, L = 0), with a step's
receives posted after its sends and with its first send, and every rank's time up to
P = 16.  ``benchmarks/validate_loggopsim.py`` made both from a local build of LogGOPSim
and keeps the commands and the commit.  Here the kit's *loggopsim* semantics simulates the
very same schedules with the same parameters, given in seconds as a user gives them, and
must equal LogGOPSim to the picosecond.

Every case runs in ``make test`` (about a minute of one core; the event loop is compiled).
The cases are dealt into :data:`SHARDS` classes of about equal cost (a case costs about its
number of messages), as ``make test`` gives each class to one worker (``--dist loadscope``).
They are marked ``slow`` (``make test-fast`` leaves them out).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from netmodels.algorithms.arrays import ArraySchedule, ArrayStep
from netmodels.models.logp import LogGP
from netmodels.simulate import loggopsim, simulate

_DATA_DIR = Path(__file__).resolve().parents[1] / "book" / "data"
DATA = json.loads((_DATA_DIR / "loggopsim_reference.json").read_text())
EXACT = json.loads((_DATA_DIR / "loggopsim_exact.json").read_text())
UNIT = DATA["time_unit_s"]


def _model(q: dict, nprocs: int) -> LogGP:
    """The LogGP machine of a stored parameter set (integer picoseconds), in seconds."""
    return LogGP(L=q["L"] * UNIT, o=q["o"] * UNIT, g=q["g"] * UNIT, P=nprocs, G=q["G"] * UNIT)


def test_reference_covers_every_case():
    # every case is stored, or named among the few not run, with the reason
    stored = [loggopsim.case_key(c) for c in DATA["cases"]]
    assert sorted(stored + DATA["not_run"]) == sorted(loggopsim.case_key(c) for c in loggopsim.cases())
    assert len(DATA["not_run"]) <= 6 and (DATA["not_run_reason"] or not DATA["not_run"])
    assert DATA["parameter_sets"] == loggopsim.PARAMETER_SETS
    sets = DATA["parameter_sets"].values()
    assert any(q["g"] > q["o"] for q in sets) and any(q["g"] < q["o"] for q in sets)
    assert all(q["G"] > 0 for q in sets)
    assert all(set(c["time_ps"]) == set(DATA["parameter_sets"]) for c in DATA["cases"])
    assert len(DATA["commit"]) == 40 and DATA["elem_bytes"] == loggopsim.ELEM_BYTES


#: classes the comparison's cases are dealt into (``make test`` runs each on one worker)
SHARDS = 2


def _shards(cases: list[dict], n: int) -> list[list[dict]]:
    """``cases`` dealt into ``n`` lists of about equal cost: the costliest first, each to
    the list with the fewest messages so far."""
    out, load = [[] for _ in range(n)], [0] * n
    for case in sorted(cases, key=lambda c: -c["messages"]):
        i = load.index(min(load))
        out[i].append(case)
        load[i] += case["messages"]
    return out


def _sweep(class_name: str, data: dict, cases: list[dict]) -> type:
    """A test class ``class_name`` that checks ``cases`` of ``data``: the end time, and every
    rank's where stored, equal to LogGOPSim's to the picosecond."""
    @pytest.mark.slow
    @pytest.mark.parametrize("case", cases, ids=[loggopsim.case_key(c) for c in cases])
    def test_loggopsim_semantics_equals_loggopsim(self, case):
        a = loggopsim.case_arrays(case)
        assert sum(int((s.src != s.dst).sum()) for s in a.steps) == case["messages"]
        for name, t_ps in case["time_ps"].items():
            r = simulate(a, _model(data["parameter_sets"][name], a.nprocs), semantics="loggopsim",
                         elem_bytes=data["elem_bytes"], receives=case.get("receives", "after-sends"))
            assert round(r.time / UNIT) == t_ps, name
            assert r.time == pytest.approx(t_ps * UNIT, rel=1e-12, abs=0), name
            if name in case.get("hosts_ps", {}):
                assert [round(x / UNIT) for x in r.finish] == case["hosts_ps"][name], name

    return type(class_name, (), {"test_loggopsim_semantics_equals_loggopsim": test_loggopsim_semantics_equals_loggopsim})


for _i, _cases in enumerate(_shards(DATA["cases"], SHARDS)):
    globals()[f"TestSweep{_i}"] = _sweep(f"TestSweep{_i}", DATA, _cases)
globals()["TestExact"] = _sweep("TestExact", EXACT, EXACT["cases"])


def test_exact_comparison_covers_what_it_claims():
    # every case of exact_cases() stored; the seven kinds; both receive orders; P not a
    # power of two and P >= 1000; every rank's time where LogGOPSim prints it (P <= 16)
    assert sorted(loggopsim.case_key(c) for c in EXACT["cases"]) == \
        sorted(loggopsim.case_key(c) for c in loggopsim.exact_cases())
    assert EXACT["parameter_sets"] == loggopsim.PARAMETER_KINDS
    kinds = EXACT["parameter_sets"].values()
    assert any(q["o"] == 0 for q in kinds) and any(q["g"] == 0 for q in kinds)
    assert any(q["G"] == 0 for q in kinds) and any(q["L"] == 0 for q in kinds)
    assert any(q["g"] == q["o"] > 0 for q in kinds) and any(q["G"] * 1000 > q["L"] for q in kinds)
    assert {c["receives"] for c in EXACT["cases"]} == {"after-sends", "with-sends"}
    assert max(c["nprocs"] for c in EXACT["cases"]) >= 1000
    assert all("hosts_ps" in c for c in EXACT["cases"] if c["nprocs"] <= 16)
    # the kinds hold times that are equal in picoseconds and not in floating-point seconds
    # (L, then n gaps added one by one, as a clock in seconds would add them)
    apart = [(name, n) for name, q in EXACT["parameter_sets"].items() for n in range(1, 21)
             if sum([q["g"] * UNIT] * n, q["L"] * UNIT) != (q["L"] + n * q["g"]) * UNIT]
    assert len(apart) >= 10, apart


def test_the_receive_order_changes_loggopsims_times():
    # where a step's receives are posted changes which of two simultaneous messages is
    # older: LogGOPSim's times differ between the two orders on many cases (so the
    # sweep above checks the kit's option, not a no-op)
    by = {}
    for c in EXACT["cases"]:
        by.setdefault(loggopsim.case_key({k: v for k, v in c.items() if k != "receives"}), {})[c["receives"]] = c
    differ = [k for k, v in by.items() if v["after-sends"]["time_ps"] != v["with-sends"]["time_ps"]]
    assert len(differ) >= 20, differ


def test_goal_text_of_a_small_schedule_is_the_hand_written_one():
    # step 0: 0 -> 1 (4 elements) and 2 -> 1 (0 elements: LogGP's one-byte message);
    # step 1: 1 -> 0 and 1 -> 2 (1 element each); rank 2 sits step 1 out as a sender
    s = ArraySchedule("t", 3, 4, [ArrayStep.of([0, 2], [1, 1], 0, [4, 0]),
                                  ArrayStep.of([1, 1], [0, 2], 0, [1, 1])])
    want = """num_ranks 3

rank 0 {
s0_0: send 32b to 1 tag 0
r1_0: recv 8b from 1 tag 1
r1_0 requires s0_0
}

rank 1 {
r0_0: recv 32b from 0 tag 0
r0_1: recv 1b from 2 tag 0
s1_0: send 8b to 0 tag 1
s1_0 requires r0_0
s1_0 requires r0_1
s1_1: send 8b to 2 tag 1
s1_1 requires s1_0
}

rank 2 {
s0_0: send 1b to 1 tag 0
r1_0: recv 8b from 1 tag 1
r1_0 requires s0_0
}
"""
    assert loggopsim.to_goal(s, elem_bytes=8) == want


def test_the_step_ordered_semantics_differs_where_the_rules_do():
    # direct allgather with g > o: a rank's P - 1 sends are spaced by g, the messages that
    # arrive meanwhile are handled between them under LogGOPSim's rules, after them
    # under *stepwise*: the kit's step-ordered rule is slower (see the chapter's table)
    case = next(c for c in DATA["cases"] if loggopsim.case_key(c) == "allgather.direct/P=37/8B")
    a = loggopsim.case_arrays(case)
    m = _model(DATA["parameter_sets"]["g>o"], 37)
    t = case["time_ps"]["g>o"] * UNIT
    assert simulate(a, m, semantics="loggopsim", elem_bytes=8).time == pytest.approx(t, rel=1e-9)
    assert simulate(a, m, semantics="stepwise", elem_bytes=8).time > 1.1 * t
