"""The kit's simulator against LogGOPSim, a simulator written elsewhere.

``book/data/loggopsim_reference.json`` holds LogGOPSim's finishing times of the kit's
own schedules (``benchmarks/validate_loggopsim.py`` made it, with the commands and the
LogGOPSim commit).  Here the same schedules are simulated by
``netmodels.simulate.simulate(..., semantics="dataflow")`` with the same LogGP
parameters (LogGOPSim's integer picoseconds, o_s = o_r = o), and every difference must
be the one the rules explain:

* dissemination, binomial broadcast, ring allreduce: every rank handles at most one
  message per step, and both simulators charge a message ``o + L + (s-1)G + o`` end to
  end, space a rank's sends by ``g + (s-1)G`` and its receives by ``g + (s-1)G``:
  the times are **equal** (to the rounding of floats);
* 3-way dissemination, where a rank sends three messages and then receives three per
  round: the kit does a round's sends first, LogGOPSim lets the CPU take an arrived
  message as soon as it is idle, even between two sends the gap holds back.  Where a
  message arrives before the gap allows the next send (``o + L < g``), LogGOPSim's round
  interleaves send, receive, send, ... and the barrier takes exactly
  ``(R n - 1) max(2o + L, g) + 2o + L`` (R rounds of n messages); the kit takes its own
  closed form :func:`netmodels.models.logp.barrier_time`.  Otherwise they are equal;
* Rabenseifner's allreduce, whose messages halve and double from step to step: a
  receive may have to wait for the receive gap ``g + (m-1)G`` of the previous, larger
  message, which both start when its first byte arrives: LogGOPSim follows
  :func:`exchange_time` to the picosecond and the kit equals it (a simulator whose gap
  started after the last byte would be 14-24 % slower here: :func:`exchange_time` with
  ``gap_from_first_byte=False`` shows by how much).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from netmodels.algorithms.barriers import ceil_log
from netmodels.models import logp
from netmodels.simulate import loggopsim, simulate

DATA = json.loads((Path(__file__).resolve().parents[1] / "book" / "data" / "loggopsim_reference.json").read_text())
PS = DATA["time_unit_s"]
ONE_MESSAGE = ("dissemination", "binomial_bcast", "ring")


def model(name: str, nprocs: int) -> logp.LogGP:
    p = DATA["parameter_sets"][name]
    return logp.LogGP(L=p["L_ps"] * PS, o=p["o_ps"] * PS, g=p["g_ps"] * PS, P=nprocs, G=p["G_ps"] * PS)


def cases(algorithms):
    return [pytest.param(c, id=f"{c['algorithm']}-{c['nprocs']}-{c['parameters']}")
            for c in DATA["cases"] if c["algorithm"] in algorithms]


_schedules: dict = {}


def schedule(algorithm: str, nprocs: int):
    key = (algorithm, nprocs)
    if key not in _schedules:
        _schedules[key] = loggopsim.case_arrays(algorithm, nprocs)
    return _schedules[key]


def test_reference_covers_the_cases():
    stored = {(c["algorithm"], c["nprocs"], c["parameters"]) for c in DATA["cases"]}
    wanted = {(a, p, s) for a, p in loggopsim.CASES for s in DATA["parameter_sets"]}
    assert stored == wanted
    assert len(DATA["commit"]) == 40


@pytest.mark.parametrize("case", cases(ONE_MESSAGE))
def test_equal_where_each_rank_handles_one_message_per_step(case):
    P = case["nprocs"]
    r = simulate(schedule(case["algorithm"], P), model(case["parameters"], P), semantics="dataflow")
    assert r.time == pytest.approx(case["time_ps"] * PS, rel=1e-12)
    if case["finish_ps"] is not None:
        assert [round(t / PS) for t in r.finish] == case["finish_ps"]


@pytest.mark.parametrize("case", cases(("nway_dissemination",)))
def test_nway_dissemination_differs_only_by_the_order_of_sends_and_receives(case):
    P, n = case["nprocs"], 3
    p = DATA["parameter_sets"][case["parameters"]]
    L, o, g = p["L_ps"], p["o_ps"], p["g_ps"]
    m = model(case["parameters"], P)
    kit = simulate(schedule("nway_dissemination", P), m, semantics="dataflow").time
    assert kit == pytest.approx(logp.barrier_time("nway_dissemination", m, n=n), rel=1e-12)
    if o + L >= g:       # no message arrives while a send of the round is still to come
        assert kit == pytest.approx(case["time_ps"] * PS, rel=1e-12)
    else:                # LogGOPSim: send, receive, send, receive, ... (integers: exact)
        R = ceil_log(n + 1, P)
        assert case["time_ps"] == (R * n - 1) * max(2 * o + L, g) + 2 * o + L
        assert kit > case["time_ps"] * PS


@pytest.mark.parametrize("algorithm", ONE_MESSAGE)
def test_the_kit_simulates_the_schedule_loggopsim_ran(algorithm):
    import numpy as np

    from netmodels.algorithms.arrays import as_arrays

    a, b = loggopsim.case_arrays(algorithm, 64), as_arrays(loggopsim.case_schedule(algorithm, 64))
    assert a.nsteps == b.nsteps
    for x, y in zip(a.steps, b.steps):
        for col in ("src", "dst", "start", "count", "combine"):
            assert np.array_equal(getattr(x, col), getattr(y, col))


def test_goal_text_of_a_two_step_schedule():
    from netmodels.algorithms.schedule import Schedule, Transfer

    s = Schedule("t", 2, 4, [(Transfer(0, 1, 0, 4),), (Transfer(1, 0, 0, 2), Transfer(0, 1, 2, 2))])
    goal = loggopsim.to_goal(s)
    assert goal.splitlines()[0] == "num_ranks 2"
    rank0 = goal.split("rank 0 {")[1].split("}")[0].split()
    text = " ".join(rank0)
    assert "s0_0: send 32b to 1 tag 0" in text
    assert "s1_0: send 16b to 1 tag 1 s1_0 requires s0_0" in text      # after its last send
    assert "r1_0: recv 16b from 1 tag 1 r1_0 requires s1_0" in text     # receives after sends


def exchange_time(o, L, g, wires, gap_from_first_byte: bool):
    """Time of a schedule in which every rank sends one message and receives one per step
    (all ranks alike), the step-k message costing ``wires[k] = (m_k - 1) G`` on the wire.
    A rank sends when its CPU is free and ``g + wire`` after its previous send; the message's
    last byte arrives ``o + wire + L`` after the send began; the receive (o on the CPU) may
    start after that and ``g + wire_prev`` after the receiving NIC's previous message began:
    at its first byte (LogGOPSim) or at its receive (the kit)."""
    cpu, last_send, last_gap, prev_wire = 0, None, None, 0
    for wire in wires:
        send = cpu if last_send is None else max(cpu, last_send + g + prev_wire)
        recv = send + o + wire + L
        if last_gap is not None:
            recv = max(recv, last_gap + g + prev_wire)
        cpu = recv + o
        last_send, last_gap, prev_wire = send, (recv - wire if gap_from_first_byte else recv), wire
    return cpu


@pytest.mark.parametrize("case", cases(("rabenseifner",)))
def test_rabenseifner_receive_gap_starts_at_the_first_byte(case):
    # message sizes halve then double: a receive may wait for the gap of the larger one before
    P, p = case["nprocs"], DATA["parameter_sets"][case["parameters"]]
    sched = schedule("rabenseifner", P)
    wires = []
    for step in sched.steps:
        assert len(set(step.count.tolist())) == 1 and len(step) == P    # every rank alike
        wires.append((int(step.count[0]) * DATA["elem_bytes"] - 1) * p["G_ps"])
    lgs = exchange_time(p["o_ps"], p["L_ps"], p["g_ps"], wires, gap_from_first_byte=True)
    assert case["time_ps"] == lgs                                        # integers: exact
    kit = simulate(sched, model(case["parameters"], P), semantics="dataflow").time
    assert kit == pytest.approx(case["time_ps"] * PS, rel=1e-12)
    last_byte = exchange_time(p["o_ps"], p["L_ps"], p["g_ps"], wires, gap_from_first_byte=False)
    assert (last_byte == lgs) is (p["G_ps"] == 0)                      # the rule matters where G > 0
