"""The software term (netmodels.models.software) and the benchmark that measures it
(python -m mpi_exercises software-cost), and how predict adds it."""

import json

import numpy as np
import pytest

from mpi_exercises.bench import predict, software_cost
from netmodels.algorithms.arrays import ArraySchedule, ArrayStep
from netmodels.models.logp import LogGP
from netmodels.models.software import STEP_KINDS, SoftwareCost, residual, step_kind
from tests.mpirun import run_mpi_ok


def test_time_is_the_per_call_cost_plus_one_step_cost_per_step_with_a_message():
    # step 0: 0 -> 1 (4 elements) and 2 -> 1 (2), copied: one-way, rank 1 receives 6;
    # step 1: nothing moves (a local copy); step 2: 1 -> 0 and 1 -> 2 (3 each), combined:
    # one-way, combined, the busiest receiver gets 3; step 3: 0 <-> 1 (5 each): an exchange
    s = ArraySchedule("t", 3, 8, [ArrayStep.of([0, 2], [1, 1], 0, [4, 2]),
                                  ArrayStep.of([0], [0], 0, 1, dst_start=4),
                                  ArrayStep.of([1, 1], [0, 2], 0, [3, 3], True),
                                  ArrayStep.of([0, 1], [1, 0], 0, 5)])
    assert [step_kind(st) for st in s.steps] == ["one-way", None, "one-way, combined", "exchange"]
    c = SoftwareCost(knots=(0, 10), per_call=(1.0, 2.0),
                     per_step={"one-way": (0.5, 1.5), "one-way, combined": (1.0, 2.0), "exchange": (0.0, 10.0)})
    # c(8) = 1.8; one-way s(6) = 1.1; one-way, combined s(3) = 1.3; exchange s(5) = 5
    assert c.time(s) == pytest.approx(1.8 + 1.1 + 1.3 + 5.0)
    # a kind it was not given costs nothing
    assert SoftwareCost(knots=(0, 10), per_call=(1.0, 2.0), per_step={"exchange": (0.0, 10.0)}).time(s) \
        == pytest.approx(1.8 + 5.0)


def test_piecewise_values_and_extension_beyond_the_knots():
    c = SoftwareCost(knots=(0, 100, 1000), per_call=(1.0, 2.0, 2.0), per_step={"exchange": (0.0, 10.0, 100.0)})
    assert [c.call(x) for x in (0, 50, 100, 550, 1000, 2000)] == pytest.approx([1, 1.5, 2, 2, 2, 2])
    assert [c.step(x, "exchange") for x in (-100, 50, 1000, 2000)] == pytest.approx([-10, 5, 100, 200])
    assert SoftwareCost(knots=(7,), per_call=(3.0,), per_step={"one-way": (4.0,)}).step(1e6, "one-way") == 4.0
    with pytest.raises(ValueError):
        SoftwareCost(knots=(0, 0), per_call=(1, 1), per_step={"exchange": (1, 1)})
    with pytest.raises(ValueError):
        SoftwareCost(knots=(0, 1), per_call=(1,), per_step={"exchange": (1, 1)})
    with pytest.raises(ValueError):
        SoftwareCost(knots=(0, 1), per_call=(1, 1), per_step={"exchange": (1,)})
    with pytest.raises(ValueError, match="unknown kinds"):
        SoftwareCost(knots=(0, 1), per_call=(1, 1), per_step={"two-way": (1, 1)})


def test_residual_is_the_measured_step_less_the_models():
    c = residual({0: 1e-6, 64: 2e-6}, {"exchange": {0: 5e-6, 64: 9e-6}, "one-way": {0: 3e-6, 64: 4e-6}},
                 {"exchange": {0: 4e-6, 64: 6e-6}, "one-way": {0: 2.5e-6, 64: 4.5e-6}})
    assert c.knots == (0, 64) and c.per_call == (1e-6, 2e-6)
    assert c.per_step["exchange"] == pytest.approx((1e-6, 3e-6))
    assert c.per_step["one-way"] == pytest.approx((0.5e-6, -0.5e-6))


def test_exchange_schedule_pairs_ranks_and_repeats_the_step():
    s = software_cost.exchange_schedule(5, 3, 10)
    assert len(s.steps) == 3 and s.nelems == 10
    st = s.steps[0]
    assert list(st.src) == [0, 1, 2, 3] and list(st.dst) == [1, 0, 3, 2]
    assert st.count.tolist() == [10] * 4 and st.combine.all()
    assert not software_cost.exchange_schedule(4, 1, 10, combine=False).steps[0].combine.any()


def test_oneway_schedule_alternates_the_direction_and_each_kind_is_its_own():
    s = software_cost.oneway_schedule(5, 4, 10)
    assert [(list(st.src), list(st.dst)) for st in s.steps] == [([0, 2], [1, 3]), ([1, 3], [0, 2])] * 2
    for kind in STEP_KINDS:
        sched = software_cost.schedule_of(kind, 4, software_cost.steps_of(kind, 3), 8)
        assert {step_kind(st) for st in sched.steps} == {kind}
        # one-way schedules come with an even number of steps: run back to back, they chain
        assert len(sched.steps) == (3 if kind.startswith("exchange") else 6)

def _calibration():
    loggp = LogGP(L=0.2e-6, o=0.6e-6, g=1.2e-6, P=2, o_r=1.3e-6, G=0.05e-9)
    return predict.Calibration(alpha=1.4e-6, beta=0.07e-9, loggp=loggp, c2=0.2e-9, c3=0.3e-9)


@pytest.mark.parametrize("model", predict.MODELS)
def test_the_term_makes_each_model_reproduce_the_calibration_schedules(model):
    """Synthetic executor lines T(k) = a(n) + b_kind(n) k: with the software term, every
    model's prediction of every calibration schedule equals its line at every k and n (the
    term prices exactly what the model leaves out of the calibration schedules)."""
    a = {0: 0.3e-6, 1024: 0.35e-6, 16384: 0.9e-6}
    b = {kind: {0: (1.8 + i) * 1e-6, 1024: (5.5 + i) * 1e-6, 16384: (23.0 - i) * 1e-6}
         for i, kind in enumerate(STEP_KINDS)}
    lines = {n: {"per_call_s": a[n], "per_step_s": {kind: b[kind][n] for kind in STEP_KINDS}, "door_s": 0.3e-6}
             for n in a}
    cal = predict.with_software(_calibration(), lines, 2)
    for n in a:
        for kind in STEP_KINDS:
            for k in (1, 3, 16):
                t = predict.predict_times(software_cost.schedule_of(kind, 2, k, n), cal)[model]
                assert t == pytest.approx(a[n] + b[kind][n] * k, rel=1e-9)
    # through a front door, its cost per call comes on top
    t = predict.predict_times(software_cost.exchange_schedule(2, 2, 1024), cal, door=True)[model]
    assert t == pytest.approx(a[1024] + 2 * b["exchange, combined"][1024] + 0.3e-6, rel=1e-9)


def test_lines_recover_a_known_intercept_and_slopes():
    slope = {"exchange": 2e-6, "one-way": 1e-6, "exchange, combined": 3e-6, "one-way, combined": 1.5e-6}
    rng = np.random.default_rng(1)
    result = {"executor": [{"nelems": n, "kind": kind, "steps": k,
                            "min_s": 1e-6 * (0.5 + n / 1e4) + slope[kind] * k * (1 + n / 1e3) + 1e-9 * rng.normal()}
                           for n in (0, 1000) for kind in STEP_KINDS for k in (1, 2, 4, 8)],
              "door": [{"nelems": n, "door": {"min_s": 3e-6}, "executor": {"min_s": 1e-6}} for n in (0, 1000)]}
    fit = software_cost.lines(result, "min_s")
    for n, scale in ((0, 1.0), (1000, 2.0)):
        assert fit[n]["per_call_s"] == pytest.approx(1e-6 * (0.5 + n / 1e4), abs=5e-9)
        for kind in STEP_KINDS:
            assert fit[n]["per_step_s"][kind] == pytest.approx(slope[kind] * scale, abs=2e-9)
            assert 0 < fit[n]["per_step_stderr_s"][kind] < 2e-9
    assert fit[1000]["door_s"] == pytest.approx(2e-6)
    # rows of the first version of the benchmark (no kind) are combined exchanges
    old = {"executor": [{"nelems": 0, "steps": k, "min_s": 1e-6 + 2e-6 * k} for k in (1, 2, 4)],
           "door": [{"nelems": 0, "door": {"min_s": 3e-6}, "executor": {"min_s": 1e-6}}]}
    assert software_cost.lines(old, "min_s")[0]["per_step_s"] == pytest.approx({"exchange, combined": 2e-6})


@pytest.mark.mpi
def test_the_command_measures_and_writes_its_lines(tmp_path):
    out = tmp_path / "sw.json"
    res = run_mpi_ok(2, ["-m", "mpi_exercises", "software-cost", "--sizes", "0,64", "--steps", "1,2,4",
                         "--iterations", "20", "--warmup", "2", "--inner", "2", "--no-progress",
                         "--json", str(out)], timeout=90)
    assert "per step" in res.stdout
    data = json.loads(out.read_text())
    assert data["benchmark"] == "software-cost" and "tight loop of 2 calls" in data["timing_method"]
    assert {(r["nelems"], r["kind"], r["steps"]) for r in data["results"]["executor"]} == {
        (n, kind, software_cost.steps_of(kind, k)) for n in (0, 64) for kind in STEP_KINDS for k in (1, 2, 4)}
    for r in data["results"]["executor"]:
        assert len(r["times_s"]) == 20 and r["median_ci_s"][0] <= r["median_s"] <= r["median_ci_s"][1]
    assert set(data["fit"]) == {"0", "64"}
    assert all(set(f["per_step_s"]) == set(STEP_KINDS) and np.isfinite(list(f["per_step_s"].values())).all()
               for f in data["fit"].values())


def test_the_door_costs_its_lookup_plus_the_copy_of_the_input():
    """door_cost: the look-up is the allgather door less its executor less the copy at the
    smallest length; at every length the door costs that plus the copy timed there (the
    allgather door's own difference at large lengths is not used)."""
    doors = [{"nelems": 0, "copy": {"min_s": 0.1e-6}, "door": {"min_s": 3.0e-6}, "executor": {"min_s": 1.7e-6}},
             {"nelems": 1000, "copy": {"min_s": 0.5e-6}, "door": {"min_s": 9.0e-6}, "executor": {"min_s": 2.0e-6}},
             {"nelems": 10**5, "copy": {"min_s": 20e-6}, "door": {"min_s": 200e-6}, "executor": {"min_s": 60e-6}}]
    cost = software_cost.door_cost(doors, "min_s")
    lookup = 3.0e-6 - 1.7e-6 - 0.1e-6
    assert cost == pytest.approx({0: lookup + 0.1e-6, 1000: lookup + 0.5e-6, 10**5: lookup + 20e-6})
    # rows without a copy (the first version of the benchmark): the door less its executor
    old = [{k: v for k, v in d.items() if k != "copy"} for d in doors]
    assert software_cost.door_cost(old, "min_s") == pytest.approx({0: 1.3e-6, 1000: 7e-6, 10**5: 140e-6})
