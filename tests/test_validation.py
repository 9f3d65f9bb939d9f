"""The kit's simulator against LogGOPSim, a simulator written elsewhere.

``book/data/loggopsim_reference.json`` holds LogGOPSim's finishing times (integer
picoseconds) of every case of :func:`netmodels.simulate.loggopsim.cases`: every
registered builder at P = 2, 3, 7, 37, 100, 1000 and 8 B, 4 KiB, 1 MiB, and 200 seeded
random schedules, under two LogGP parameter sets (g > o and g < o, both with G > 0).
``benchmarks/validate_loggopsim.py`` made it from a local build of LogGOPSim and keeps
the commands and the commit.  Here the kit's *loggopsim* semantics simulates the very
same schedules with the same parameters (given in picoseconds, so that every time is an
integer held exactly in floating point) and must equal LogGOPSim to 1e-9 relative.

Every case runs in ``make test``: about 8 minutes of one core (the semantics runs event by
event in Python; the largest case, the ring allreduce at P = 1000, takes about 40 s).  The
cases are dealt into :data:`SHARDS` classes of about equal cost (a case costs about its
number of messages), as ``make test`` gives each class to one worker (``--dist loadscope``).
They are marked ``slow`` (``make test-fast`` leaves them out).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from netmodels.algorithms.arrays import ArraySchedule, ArrayStep
from netmodels.models.logp import LogGP
from netmodels.simulate import loggopsim, simulate

DATA = json.loads((Path(__file__).resolve().parents[1] / "book" / "data" / "loggopsim_reference.json").read_text())


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
SHARDS = 8


def _shards(cases: list[dict], n: int) -> list[list[dict]]:
    """``cases`` dealt into ``n`` lists of about equal cost: the costliest first, each to
    the list with the fewest messages so far."""
    out, load = [[] for _ in range(n)], [0] * n
    for case in sorted(cases, key=lambda c: -c["messages"]):
        i = load.index(min(load))
        out[i].append(case)
        load[i] += case["messages"]
    return out


def _sweep(class_name: str, cases: list[dict]) -> type:
    """A test class ``class_name`` that checks ``cases``."""
    @pytest.mark.slow
    @pytest.mark.parametrize("case", cases, ids=[loggopsim.case_key(c) for c in cases])
    def test_loggopsim_semantics_equals_loggopsim(self, case):
        a = loggopsim.case_arrays(case)
        assert sum(int((s.src != s.dst).sum()) for s in a.steps) == case["messages"]
        for name, t_ps in case["time_ps"].items():
            q = DATA["parameter_sets"][name]
            m = LogGP(L=q["L"], o=q["o"], g=q["g"], P=a.nprocs, G=q["G"])
            kit = simulate(a, m, semantics="loggopsim", elem_bytes=DATA["elem_bytes"]).time
            assert kit == pytest.approx(t_ps, rel=1e-9, abs=0), name

    return type(class_name, (), {"test_loggopsim_semantics_equals_loggopsim": test_loggopsim_semantics_equals_loggopsim})


for _i, _cases in enumerate(_shards(DATA["cases"], SHARDS)):
    globals()[f"TestSweep{_i}"] = _sweep(f"TestSweep{_i}", _cases)


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
    q = DATA["parameter_sets"]["g>o"]
    a = loggopsim.case_arrays(case)
    m = LogGP(L=q["L"], o=q["o"], g=q["g"], P=37, G=q["G"])
    t = case["time_ps"]["g>o"]
    assert simulate(a, m, semantics="loggopsim", elem_bytes=8).time == pytest.approx(t, rel=1e-9)
    assert simulate(a, m, semantics="stepwise", elem_bytes=8).time > 1.1 * t
