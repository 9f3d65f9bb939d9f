"""The prediction report: its models against hand-computed times, its JSON under mpiexec at P = 2.

Timings are reported, never asserted: the machine may be shared."""

import json

import numpy as np
import pytest

from mpi_exercises.bench import predict
from netmodels.algorithms import registry
from netmodels.models.logp import LogGP
from tests.mpirun import run_mpi_ok

ALPHA, BETA, C2 = 2e-6, 1e-9, 0.5e-9          # 2 µs, 1 GB/s, 0.5 ns per element combined


def cal(**kw):
    return predict.Calibration(ALPHA, BETA, LogGP(1e-6, 0.5e-6, 0.2e-6, 2, o_r=0.7e-6, G=1e-9), C2, C2, **kw)


def test_alpha_beta_of_recursive_doubling_on_two_ranks_is_one_exchange():
    # one step: both ranks send N doubles and combine N elements
    N = 1000
    sched = registry.build("allreduce.recursive_doubling", 2, N).to_schedule()
    assert predict.alpha_beta_time(sched, ALPHA, BETA, 8, C2) == pytest.approx(ALPHA + BETA * 8 * N + C2 * N)


def test_alpha_beta_of_ring_on_four_ranks_is_2_p_minus_1_steps_of_n_over_p():
    # reduce-scatter (P-1 steps, combining N/P) then allgather (P-1 steps, copying N/P)
    N, P = 4000, 4
    sched = registry.build("allreduce.ring", P, N).to_schedule()
    step = ALPHA + BETA * 8 * N / P
    want = 2 * (P - 1) * step + (P - 1) * C2 * N / P
    assert predict.alpha_beta_time(sched, ALPHA, BETA, 8, C2) == pytest.approx(want)


def test_alpha_beta_of_barriers_counts_messages_in_sequence():
    P = 8
    # dissemination: ceil(log2 8) = 3 rounds of one empty message
    d = registry.build("barrier.dissemination", P).to_schedule()
    assert predict.alpha_beta_time(d, ALPHA, BETA) == pytest.approx(3 * ALPHA)
    # central counter: a gather then a release; the root receives, then sends, P - 1 empty
    # messages one after the other (one port)
    cc = registry.build("barrier.central_counter", P).to_schedule()
    assert predict.alpha_beta_time(cc, ALPHA, BETA) == pytest.approx(2 * (P - 1) * ALPHA)


def test_predict_times_nbl_charges_alpha_per_link_and_loggp_per_message():
    N = 1000
    sched = registry.build("allreduce.recursive_doubling", 2, N).to_schedule()
    t = predict.predict_times(sched, cal())
    # NBL: each rank sends and receives (L = 2): 2 alpha + f(2) beta S with f = 1, plus c2 S
    assert t["nbl"] == pytest.approx(2 * ALPHA + BETA * 8 * N + C2 * N)
    # LogGP: o_s + L + (8N - 1) G + o_r, then the combine
    m = cal().loggp
    assert t["loggp"] == pytest.approx(m.o_s + m.L + (8 * N - 1) * m.G + m.o_r + C2 * N)
    t2 = predict.predict_times(sched, cal(f={1: 1.0, 2: 1.5}))
    assert t2["nbl"] == pytest.approx(2 * ALPHA + 1.5 * BETA * 8 * N + C2 * N)


def test_errors_are_summarized_per_model_and_algorithm():
    rows = [{"collective": "allreduce", "algorithm": a, "relative_error": {"alpha-beta": e, "loggp": -e}}
            for a, e in [("ring", 0.1), ("ring", -0.5), ("tree", 0.2)]]
    s = predict.summarize_errors(rows)
    assert s["alpha-beta"]["median_abs"] == pytest.approx(0.2) and s["alpha-beta"]["worst"] == -0.5
    assert s["loggp"]["worst"] == 0.5 and "nbl" not in s
    ring = s["alpha-beta"]["by_algorithm"]["allreduce:ring"]
    assert (ring["median_abs"], ring["worst"], ring["rows"], ring["within_tolerance"]) == (0.3, -0.5, 2, 1)
    assert ring["median_abs_ci"] == [0.1, 0.5]              # two rows: the interval is their range
    assert s["alpha-beta"]["by_collective"]["allreduce"]["within_tolerance"] == 1
    assert s["alpha-beta"]["within_tolerance"] == 1 and s["alpha-beta"]["rows"] == 3
    assert predict.relative_error(3.0, 2.0) == 0.5


def test_every_collective_has_a_schedule_for_each_of_its_algorithms_but_mpi():
    for name, entry in predict.COLLECTIVES.items():
        for a in entry.algorithms(5):
            sched = entry.schedule(a, 5, 7)
            assert (sched is None) == (a == "mpi"), (name, a)


@pytest.mark.mpi
def test_predict_under_mpiexec_writes_the_report(tmp_path):
    out = tmp_path / "predict.json"
    res = run_mpi_ok(2, ["-m", "mpi_exercises", "predict", "--sizes", "1,100", "--iterations", "5",
                         "--warmup", "1", "--calibration-repetitions", "5", "--no-progress",
                         "--json", str(out)], timeout=240)
    assert "median |err|" in res.stdout
    data = json.loads(out.read_text())
    assert data["benchmark"] == "predict" and data["environment"]["ranks"] == 2
    assert data["valid"] is (not data["oversubscribed"]) and isinstance(data["load_average_1min"], float)
    assert data["command"].startswith("mpiexec -n 2 python -m mpi_exercises predict")
    c = data["calibration"]
    assert set(c) >= {"alpha_s", "beta_s_per_byte", "loggp", "c2_s_per_elem", "software", "front_door"}
    assert set(c["software"]) == set(predict.MODELS)      # calibrated on exchange schedules, not on rows
    algorithms = {c: set(registry.names(c, short=True)) | {"mpi"} for c in ("allreduce", "barrier")}
    seen = {(r["collective"], r["algorithm"], r["nelems"]) for r in data["rows"]}
    assert seen == {("allreduce", a, n) for a in algorithms["allreduce"] for n in (1, 100)} | {
        ("barrier", a, 0) for a in algorithms["barrier"]}
    for r in data["rows"]:
        assert 0 < r["min_s"] <= r["median_s"] and r["measured_s"] == r["min_s"]
        if r["algorithm"] == "mpi":
            assert r["predicted_s"] == {} and r["relative_error"] == {}
        else:
            assert set(r["predicted_s"]) == set(predict.MODELS)
            for m in predict.MODELS:
                assert r["relative_error"][m] == pytest.approx((r["predicted_s"][m] - r["min_s"]) / r["min_s"])
                assert r["network_s"][m] + r["software_s"][m] == pytest.approx(r["predicted_s"][m])
    d = data["drift"]                  # the calibration again after the measurement, and how far it moved
    assert data["calibration_after"]["executor_step_s"].keys() == c["executor_step_s"].keys()
    assert data["stable"] is d["stable"] and "calibration before and after" in res.stdout
    assert d["alpha"] == pytest.approx(abs(c["alpha_s"] - data["calibration_after"]["alpha_s"])
                                       / min(c["alpha_s"], data["calibration_after"]["alpha_s"]))
    assert set(data["summary"]) == set(predict.MODELS)
    for s in data["summary"].values():
        assert s["rows"] == len([r for r in data["rows"] if r["algorithm"] != "mpi"])
        assert np.isfinite(s["median_abs"]) and abs(s["worst"]) >= s["median_abs"]


@pytest.mark.mpi
def test_predict_oversubscribed_is_reported_not_valid(tmp_path):
    from mpi_exercises.bench.core import usable_cores

    out = tmp_path / "predict.json"
    res = run_mpi_ok(usable_cores() + 1, ["-m", "mpi_exercises", "predict", "--collectives", "barrier",
                                          "--iterations", "3", "--warmup", "1", "--calibration-repetitions",
                                          "3", "--no-progress", "--json", str(out)], timeout=240)
    data = json.loads(out.read_text())
    assert data["oversubscribed"] is True and data["valid"] is False
    assert "NOT VALID" in res.stdout



def test_drift_is_the_largest_relative_change_and_stable_within_the_tolerance():
    from dataclasses import replace

    before = replace(cal(), steps={"exchange": {0: 1e-6, 64: 2e-6}, "one-way": {0: 1e-6, 64: 1.5e-6}})
    same = predict.drift(before, before)
    assert same["stable"] and same["alpha"] == same["beta"] == same["step"] == 0
    moved = replace(before, alpha=before.alpha * 1.1,
                    steps={"exchange": {0: 1e-6, 64: 2e-6}, "one-way": {0: 1e-6, 64: 3e-6}})
    d = predict.drift(before, moved)
    assert d["alpha"] == pytest.approx(0.1) and d["step"] == pytest.approx(1.0)     # 1.5 -> 3 µs
    assert d["step_at"] == {"kind": "one-way", "nelems": 64} and not d["stable"]
    assert "MORE than 25%" in predict.drift_line(d) and "held still" in predict.drift_line(same)
    # just within the tolerance, either way
    edge = replace(before, beta=before.beta * (1 + 0.99 * predict.STABLE_TOLERANCE))
    assert predict.drift(before, edge)["stable"] and predict.drift(edge, before)["stable"]
