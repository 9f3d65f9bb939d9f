"""The *loggopsim* trace against LogGOPSim's own timelines, operation by operation.

``book/data/loggopsim_traces.json`` holds the visualisation files LogGOPSim itself wrote
(``LogGOPSim -V``, built from its source; ``benchmarks/loggopsim_traces.py --store`` made them
and keeps the commands and the commit) for a dissemination barrier, recursive doubling and
ring allreduce at P = 8 and 16 and a k-prefix allgather at P = 8, both receive orders, under
three LogGP parameter sets with o, g and G above 0.  The kit's trace of the same schedules
(``simulate(..., semantics="loggopsim", trace=True)``, parameters in seconds) must give every
line of every file: each send overhead, each receive overhead and each transmission, to the
picosecond, none missing and none extra.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from netmodels.algorithms import registry
from netmodels.models.logp import LogGP
from netmodels.simulate import loggopsim, simulate
from netmodels.simulate import trace as tr

DATA = json.loads((Path(__file__).resolve().parents[1] / "book" / "data" / "loggopsim_traces.json").read_text())
UNIT = DATA["time_unit_s"]
RUNS = [(c, name) for c in DATA["cases"] for name in c["viz"]]


def _reference(c: dict, name: str) -> dict:
    ref = c["viz"][name]
    return {"numranks": ref["numranks"], **{k: [tuple(x) for x in ref[k]] for k in tr.VIZ_KINDS}}


def test_the_stored_files_hold_what_they_claim():
    cases = {(c["algorithm"], c["nprocs"], c["bytes"]) for c in DATA["cases"]}
    for name in ("barrier.dissemination", "allreduce.recursive_doubling", "allreduce.ring"):
        assert {(name, p) for p in (8, 16)} <= {(a, p) for a, p, _ in cases}
    assert {c["receives"] for c in DATA["cases"]} == {"after-sends", "with-sends"}
    assert all(q["o"] > 0 and q["g"] > 0 and q["G"] > 0 for q in DATA["parameter_sets"].values())
    assert len(DATA["commit"]) == 40 and "-V case.viz" in DATA["command"]
    for c, name in RUNS:
        v = c["viz"][name]
        assert v["noise_lines_of_some_length"] == 0 and v["numranks"] == c["nprocs"]
        messages = sum(int((s.src != s.dst).sum()) for s in loggopsim.case_arrays(c).steps)
        assert len(v["osend"]) == messages           # one line per message sent
    # some messages are taken before their receive is posted: LogGOPSim draws no transmission for them
    assert any(len(c["viz"][n]["transmission"]) < len(c["viz"][n]["osend"]) for c, n in RUNS)


@pytest.mark.parametrize("c, name", RUNS, ids=[f"{loggopsim.case_key(c)}/{n}" for c, n in RUNS])
def test_the_kits_trace_is_loggopsims_timeline_line_by_line(c, name):
    kit = loggopsim.loggopsim_viz(loggopsim.case_arrays(c), DATA["parameter_sets"][name], UNIT, c["receives"],
                           DATA["elem_bytes"])
    ref = _reference(c, name)
    for kind in tr.VIZ_KINDS:
        assert Counter(kit[kind]) == Counter(ref[kind]), kind
    assert tr.compare_viz(kit, ref)["equal"]


def test_one_operation_off_by_a_picosecond_is_counted():
    c, name = next((c, n) for c, n in RUNS if c["algorithm"] == "allreduce.ring" and c["nprocs"] == 8)
    ref = _reference(c, name)
    kit = loggopsim.loggopsim_viz(loggopsim.case_arrays(c), DATA["parameter_sets"][name], UNIT, c["receives"])
    rank, start, end = kit["orecv"][5]
    kit["orecv"][5] = (rank, start + 1, end + 1)
    got = tr.compare_viz(kit, ref)
    assert not got["equal"] and got["orecv"]["equal"] == len(ref["orecv"]) - 1
    assert got["osend"]["equal"] == len(ref["osend"])


def test_the_loggopsim_trace_ends_where_each_rank_finishes():
    q = loggopsim.PARAMETER_SETS["g>o"]
    for name, n in (("allgather.k-prefix", 64), ("allreduce.rabenseifner", 100), ("barrier.butterfly", 0)):
        a = registry.build(name, 11, n)
        m = LogGP(L=q["L"] * UNIT, o=q["o"] * UNIT, g=q["g"] * UNIT, P=11, G=q["G"] * UNIT, combine=1e-9)
        for receives in ("after-sends", "with-sends"):
            res = simulate(a, m, semantics="loggopsim", trace=True, receives=receives)
            t = res.trace
            cpu = np.isin(t.kind, (tr.SEND, tr.RECV, tr.BYTES, tr.COMBINE))
            for r in range(11):
                mine = cpu & (t.rank == r)
                assert t.end[mine].max() == pytest.approx(res.finish[r], abs=1e-15)
                order = np.argsort(t.start[mine], kind="stable")
                assert (t.start[mine][order][1:] >= t.end[mine][order][:-1] - 1e-15).all()   # one thing at a time
            if n and name.startswith("allreduce"):
                assert (t.kind == tr.COMBINE).any()


def test_where_the_rules_agree_stepwise_and_loggopsim_trace_the_same_operations():
    # a dissemination barrier in lockstep: no message arrives before its receive, no gap binds
    q = loggopsim.PARAMETER_SETS["g>o"]
    a = registry.build("barrier.dissemination", 16, 0)
    m = LogGP(L=q["L"] * UNIT, o=q["o"] * UNIT, g=q["g"] * UNIT, P=16, G=q["G"] * UNIT)
    x = simulate(a, m, semantics="loggopsim", trace=True).trace
    y = simulate(a, m, semantics="stepwise", trace=True).trace
    assert len(x) == len(y)
    for col in ("rank", "peer", "step", "kind"):
        assert np.array_equal(getattr(x, col), getattr(y, col))
    assert np.allclose(x.start, y.start, rtol=0, atol=1e-15) and np.allclose(x.end, y.end, rtol=0, atol=1e-15)


def test_a_file_that_is_no_visualisation_is_refused():
    with pytest.raises(ValueError, match="line 2 is no line of LogGOPSim's visualisation file"):
        tr.read_viz("numranks 2;\nbogus 1 2 3;\n")
    got = tr.read_viz("numranks 2;\nosend 1 0 5 9 0 0 1;\ntransmission 1 0 9 20 8 5 0 0 1;\n")
    assert got["numranks"] == 2 and got["osend"] == [(1, 5, 9)] and got["transmission"] == [(1, 0, 9, 20, 8)]
