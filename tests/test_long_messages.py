"""Long messages: the protocol switch fitted as segments, the exchange term, NBL's f(2) from the
exchange, LogGOPS's O and S from round trips, one fit per measured file, and calibration files
written before the exchange benchmark.

Synthetic data with known segments are fitted and compared with an independent computation
(numpy's weighted polyfit: relative least squares is a line fitted with weights 1/t); model
times are compared with hand-computed sums."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from mpi_exercises.bench import pingpong, predict
from netmodels import fit_piecewise
from netmodels.algorithms import registry
from netmodels.models import table
from netmodels.models.alphabeta import AlphaBeta, SegmentedAlphaBeta
from netmodels.models.logp_fit import fit_copy_overhead
from netmodels.simulate import simulate
from tests.mpirun import run_mpi_ok

ROOT = Path(__file__).resolve().parents[1]
SIZES = np.array([0, 1, 8, 64, 512, 4096, 32768, 262144, 2097152], dtype=float)
SWITCH = 32768.0
BELOW, ABOVE = (2e-6, 1e-10), (9e-6, 6e-11)            # (α, β) of each segment: s, s/B
X_BELOW, X_ABOVE = (2.5e-6, 1.6e-10), (12e-6, 1.4e-10)  # the exchange's
F_BELOW, F_ABOVE = (3e-6, 2.1e-10), (15e-6, 3.1e-10)    # the exchange of fresh data's
FP_BELOW, FP_ABOVE = (2.2e-6, 1.2e-10), (11e-6, 2.4e-10)  # the ping-pong of fresh data's


def segments(n, below, above, switch=SWITCH):
    return np.where(n < switch, below[0] + below[1] * n, above[0] + above[1] * n)


def relative_line(n, t):
    """(α, β) of relative least squares, computed apart from the kit: weights 1/t."""
    beta, alpha = np.polyfit(n, t, 1, w=1 / t)
    return alpha, beta


def results(n, t_min, t_median=None):
    """Per-size rows of a measured file (pingpong or exchange)."""
    t_median = 2 * t_min if t_median is None else t_median
    return [{"bytes": float(b), "min_s": float(a), "median_s": float(m), "ci_relative_halfwidth": 0.01}
            for b, a, m in zip(n, t_min, t_median)]


# ---------------------------------------------------------------- fits
def test_a_fixed_switch_splits_the_fit_there_and_each_side_is_its_own_relative_line():
    rng = np.random.default_rng(1)
    t = segments(SIZES, BELOW, ABOVE) * (1 + 0.05 * rng.standard_normal(SIZES.size))
    for switch in (64.0, 4096.0, 20000.0, SWITCH):     # 20000 B: between two measured sizes
        pw = fit_piecewise(SIZES, t, switch=switch)
        lo, hi = SIZES < switch, SIZES >= switch
        assert pw.switch_bytes == switch
        assert (pw.below.alpha, pw.below.beta) == pytest.approx(relative_line(SIZES[lo], t[lo]), rel=1e-6)
        assert (pw.above.alpha, pw.above.beta) == pytest.approx(relative_line(SIZES[hi], t[hi]), rel=1e-6)
    with pytest.raises(ValueError, match="switch must leave at least 3 distinct sizes on each side"):
        fit_piecewise(SIZES, t, switch=8.0)


def test_exact_segments_are_found_where_they_switch_and_recovered():
    t = segments(SIZES, BELOW, ABOVE)
    pw = fit_piecewise(SIZES, t)
    assert pw.switch_bytes == SWITCH
    assert (pw.below.alpha, pw.below.beta, pw.above.alpha, pw.above.beta) == pytest.approx(
        (*BELOW, *ABOVE), rel=1e-9)


def test_a_file_has_one_fit_on_its_minima_whatever_its_medians():
    t = segments(SIZES, BELOW, ABOVE)
    rows = results(SIZES, t, t * np.linspace(1.5, 3, SIZES.size))      # medians: another curve
    f = pingpong.fit_file({"results": rows})
    assert f["statistic"] == pingpong.FIT_STATISTIC == "min_s"
    alpha, beta = relative_line(SIZES, t)
    assert (f["alpha_beta"]["alpha_s"], f["alpha_beta"]["beta_s_per_byte"]) == pytest.approx((alpha, beta), rel=1e-6)
    assert f["piecewise"]["switch_bytes"] == SWITCH
    n, times = pingpong.points({"results": rows})
    assert np.array_equal(n, SIZES) and np.array_equal(times, t)
    with pytest.raises(ValueError, match="not a list of sizes"):
        pingpong.fit_file({"results": []})


def test_the_exchange_is_split_at_the_pingpong_switch_not_its_own():
    pp = results(SIZES, segments(SIZES, BELOW, ABOVE))
    ex_t = segments(SIZES, X_BELOW, X_ABOVE)
    ex_t[SIZES == 4096] *= 3            # a bump that, searched freely, would move the exchange's switch
    f = predict.fits({"pingpong": (pp, None), "exchange": (results(SIZES, ex_t), None)})
    assert f["pingpong"]["piecewise"]["switch_bytes"] == SWITCH
    xs = f["exchange"]["piecewise"]
    assert xs["switch_bytes"] == SWITCH
    hi = SIZES >= SWITCH
    assert (xs["above"]["alpha_s"], xs["above"]["beta_s_per_byte"]) == pytest.approx(X_ABOVE, rel=1e-9)
    assert (xs["below"]["alpha_s"], xs["below"]["beta_s_per_byte"]) == pytest.approx(
        relative_line(SIZES[~hi], ex_t[~hi]), rel=1e-6)


def test_copy_overhead_is_the_slope_of_the_send_overhead_where_it_is_cpu_time_and_never_negative():
    m = np.array([0, 1, 8, 64, 1024, 4096, 16384, 65536], dtype=float)
    o_s = 1e-6 + 2e-10 * np.maximum(m - 1, 0)
    o_s[m >= 16384] = 50e-6                          # sends that waited for their receiver
    gap_bound = m[m < 16384]
    assert fit_copy_overhead(m, o_s, gap_bound) == pytest.approx(2e-10, rel=1e-9)
    assert fit_copy_overhead(m, o_s, below=16384) == pytest.approx(2e-10, rel=1e-9)
    assert fit_copy_overhead(m, o_s) > 3e-10        # the waiting counted as copies: what is left out
    assert fit_copy_overhead(m, 1e-6 - 1e-11 * m) == 0.0       # falling overheads: no copy
    with pytest.raises(ValueError, match=r"at least 2 distinct sizes \(beyond 1 B\)"):
        fit_copy_overhead([8, 8], [1e-6, 1e-6])
    with pytest.raises(ValueError, match=r"at least 2 distinct sizes \(beyond 1 B\)"):
        fit_copy_overhead(m, o_s, gap_bound, below=8)
    with pytest.raises(ValueError, match="below must be > 0"):
        fit_copy_overhead(m, o_s, below=0)


# ---------------------------------------------------------------- the models
def one_step(name, P, n):
    return registry.build(name, P, n).to_schedule()


def test_segmented_alpha_beta_prices_exchanges_and_one_way_steps_by_their_segments():
    m = SegmentedAlphaBeta(*BELOW, S=SWITCH, alpha_r=ABOVE[0], beta_r=ABOVE[1], alpha_x=X_BELOW[0],
                           beta_x=X_BELOW[1], alpha_xr=X_ABOVE[0], beta_xr=X_ABOVE[1])
    for N in (10, 100_000):         # 80 B (eager) and 800 KB (rendezvous)
        b = 8.0 * N
        x = X_BELOW if b < SWITCH else X_ABOVE
        one = BELOW if b < SWITCH else ABOVE
        # recursive doubling on 2 ranks: one exchange of the whole vector
        assert simulate(one_step("allreduce.recursive_doubling", 2, N), m).time == pytest.approx(x[0] + x[1] * b)
        # binomial on 2 ranks: a reduce to rank 0, then a broadcast back: two one-way messages
        assert simulate(one_step("allreduce.binomial", 2, N), m).time == pytest.approx(2 * (one[0] + one[1] * b))
    # a ring on 3 ranks: every rank sends and receives in every step, each an exchange
    N = 3000
    steps = sum(1 for s in one_step("allreduce.ring", 3, N).steps if len(s))
    assert simulate(one_step("allreduce.ring", 3, N), m).time == pytest.approx(
        steps * (X_BELOW[0] + X_BELOW[1] * 8 * N / 3))


@pytest.mark.parametrize("name", ["allreduce.ring", "allreduce.recursive_doubling", "allreduce.binomial",
                                  "barrier.dissemination", "barrier.central_counter"])
def test_without_its_terms_the_segmented_model_is_alpha_beta(name):
    plain = AlphaBeta(*BELOW)
    for entry in ("alpha-beta-segmented", "alpha-beta-exchange", "alpha-beta-exchange-segmented"):
        e = table.get(entry)            # every α the plain α, every β its β, the switch at 1 B or none
        for S in (1.0, float("inf")):
            m = e.build(**{p.name: S if p.name == "S" else BELOW[p.name.startswith("beta")] for p in e.parameters})
            for P in (2, 3, 5):
                s = one_step(name, P, 0 if name.startswith("barrier") else 1000)
                assert simulate(s, m).time == pytest.approx(simulate(s, plain).time, rel=1e-12), (entry, S, P)


def test_segmented_nbl_and_loggp_price_each_message_by_its_segment():
    from netmodels.models.logp import LogGP
    from netmodels.models.nbl import NBLModel
    from netmodels.models.segmented import SegmentedLogGP, SegmentedNBL

    f2 = 1.3
    nbl = SegmentedNBL(*BELOW, {2: f2}, S=SWITCH, alpha_r=ABOVE[0], beta_r=ABOVE[1])
    lg = dict(L=1e-6, o=0.5e-6, o_r=0.7e-6, g=0.2e-6, G=BELOW[1], P=2)
    loggp = SegmentedLogGP(**lg, S=SWITCH, G_r=ABOVE[1])
    for N in (10, 100_000):
        b = 8.0 * N
        a_, b_ = BELOW if b < SWITCH else ABOVE
        s = one_step("allreduce.recursive_doubling", 2, N)          # one exchange: L = 2 links
        assert simulate(s, nbl).time == pytest.approx(2 * a_ + f2 * b_ * b)
        assert simulate(s, loggp).time == pytest.approx(lg["o"] + lg["L"] + lg["o_r"] + (b - 1) * b_)
    for name in ("allreduce.ring", "allreduce.binomial", "barrier.dissemination"):   # no switch: the plain ones
        for P in (2, 3, 5):
            s = one_step(name, P, 0 if name.startswith("barrier") else 5000)
            plain = NBLModel(*BELOW, {L: 1.0 + L / 10 for L in range(1, 11)})
            assert simulate(s, SegmentedNBL(*BELOW, plain.f)).time == pytest.approx(simulate(s, plain).time, rel=1e-12)
            assert simulate(s, SegmentedLogGP(**lg)).time == pytest.approx(simulate(s, LogGP(**lg)).time, rel=1e-12)


def test_a_segmented_model_refuses_what_no_machine_has():
    with pytest.raises(ValueError, match="beta_x must be a finite real number > 0"):
        SegmentedAlphaBeta(*BELOW, alpha_x=1e-6, beta_x=-1e-10)
    with pytest.raises(ValueError, match=r"alpha_r \+ beta_r \* S > 0"):
        SegmentedAlphaBeta(*BELOW, S=1000, alpha_r=-1e-6, beta_r=1e-10)
    with pytest.raises(ValueError, match="S must be >= 0"):
        SegmentedAlphaBeta(*BELOW, S=-1)


def calibration_models(fresh=True):
    pp = results(SIZES, segments(SIZES, BELOW, ABOVE))
    ex = results(SIZES, segments(SIZES, X_BELOW, X_ABOVE))
    fx = {"pingpong-fresh": (results(SIZES, segments(SIZES, FP_BELOW, FP_ABOVE)), None),
          "exchange-fresh": (results(SIZES, segments(SIZES, F_BELOW, F_ABOVE)), None)} if fresh else {}
    prtt = json.loads((ROOT / "labs" / "source" / "lab3" / "logp.json").read_text())
    return predict.parameters_of({"pingpong": (pp, None), "exchange": (ex, None), **fx,
                                  "logp": (prtt["results"], prtt["parameters"]["n"])}, 2)


def test_every_model_is_calibrated_with_its_source_and_the_terms_land_where_they_belong():
    models = calibration_models()
    assert set(models) == set(predict.MODELS)
    ab, x = models["alpha-beta"], models["alpha-beta-exchange"]
    alpha, beta = relative_line(SIZES, segments(SIZES, BELOW, ABOVE))
    assert (ab["alpha"], ab["beta"]) == pytest.approx((alpha, beta), rel=1e-6)
    assert (x["alpha"], x["beta"]) == (ab["alpha"], ab["beta"])
    assert models["nbl-exchange"]["f2"] == pytest.approx(x["beta_x"] / ab["beta"], rel=1e-12)
    assert models["nbl"]["f2"] == 1.0
    seg = models["alpha-beta-exchange-segmented"]
    assert seg["S"] == SWITCH and (seg["alpha_xr"], seg["beta_xr"]) == pytest.approx(X_ABOVE, rel=1e-9)
    assert (seg["alpha_r"], seg["beta_r"]) == pytest.approx(ABOVE, rel=1e-9)
    nx = models["nbl-exchange-segmented"]
    assert (nx["alpha"], nx["beta"], nx["alpha_r"], nx["beta_r"]) == pytest.approx((*BELOW, *ABOVE), rel=1e-9)
    assert nx["f2"] == models["nbl-exchange"]["f2"] and nx["S"] == SWITCH
    lgs = models["loggp-segmented"]
    assert lgs["S"] == SWITCH and lgs["G_r"] == pytest.approx(ABOVE[1], rel=1e-9)
    assert {k: lgs[k] for k in models["loggp"]} == models["loggp"]
    lg, gops = models["loggp"], models["loggops"]
    assert {k: gops[k] for k in ("L", "o_s", "o_r", "g")} == {k: lg[k] for k in ("L", "o_s", "o_r", "g")}
    assert gops["S"] == SWITCH - 1      # a switch-sized message: rendezvous
    assert gops["G"] == pytest.approx(ABOVE[1], rel=1e-9) and 0 <= gops["O"] <= gops["G"]
    for name in predict.MODELS:
        entry = table.get(name)
        assert entry.build(**models[name]) is not None and entry.source()


def test_the_fresh_entry_takes_every_term_from_the_messages_of_fresh_data_not_the_clean_ones():
    models = calibration_models()
    fresh, clean = models["alpha-beta-fresh"], models["alpha-beta-exchange-segmented"]
    # the one-way terms are the fresh ping-pong's segments, at its switch; the exchange terms the fresh exchange's
    assert fresh["S"] == SWITCH and (fresh["alpha_r"], fresh["beta_r"]) == pytest.approx(FP_ABOVE, rel=1e-9)
    lo = SIZES < SWITCH
    assert (fresh["alpha"], fresh["beta"]) == pytest.approx(
        relative_line(SIZES[lo], segments(SIZES, FP_BELOW, FP_ABOVE)[lo]), rel=1e-6)
    assert fresh["beta_r"] > 2 * clean["beta_r"]
    assert (fresh["alpha_xr"], fresh["beta_xr"]) == pytest.approx(F_ABOVE, rel=1e-9)
    lo = SIZES < SWITCH
    assert (fresh["alpha_x"], fresh["beta_x"]) == pytest.approx(
        relative_line(SIZES[lo], segments(SIZES, F_BELOW, F_ABOVE)[lo]), rel=1e-6)
    assert fresh["beta_xr"] > 2 * clean["beta_xr"]
    # an exchange of 800 KB costs what the fresh exchange's upper segment says; a one-way step the fresh ping-pong's
    m = table.get("alpha-beta-fresh").build(**fresh)
    b = 8.0 * 100_000
    assert simulate(one_step("allreduce.recursive_doubling", 2, 100_000), m).time == pytest.approx(
        F_ABOVE[0] + F_ABOVE[1] * b, rel=1e-9)
    assert simulate(one_step("allreduce.binomial", 2, 100_000), m).time == pytest.approx(
        2 * (FP_ABOVE[0] + FP_ABOVE[1] * b), rel=1e-9)
    # LogGOPS of fresh data: the PRTT's terms and O as LogGOPS's, G and S from the fresh ping-pong
    gf, g = models["loggops-fresh"], models["loggops"]
    assert {k: gf[k] for k in ("L", "o_s", "o_r", "g")} == {k: g[k] for k in ("L", "o_s", "o_r", "g")}
    assert gf["G"] == pytest.approx(FP_ABOVE[1], rel=1e-9) and gf["S"] == SWITCH - 1 and 0 <= gf["O"] <= gf["G"]
    assert gf["G"] > 2 * g["G"]
    # without the messages of fresh data they are not calibrated, and nothing else changes
    without = calibration_models(fresh=False)
    assert set(without) == set(models) - {"alpha-beta-fresh", "loggops-fresh"}
    assert all(without[k] == models[k] for k in without)


def rows_on(P, sizes=(2, 700, 12000)):
    rows = [{"collective": "allreduce", "algorithm": a, "nelems": n, "min_s": 1e-5}
            for a in registry.names("allreduce", short=True) for n in sizes]
    rows += [{"collective": "barrier", "algorithm": a, "nelems": 0, "min_s": 3e-6}
             for a in registry.names("barrier", short=True)]
    return rows


def has_exchange(schedule) -> bool:
    """Some rank both sends and receives a message in some step."""
    for step in schedule.steps:
        moves = [t for t in step if t.src != t.dst]
        if {t.src for t in moves} & {t.dst for t in moves}:
            return True
    return False


@pytest.mark.parametrize("P", [2, 3, 4])
def test_an_exchange_term_doubled_moves_only_rows_that_have_exchanges(P):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from predict_sensitivity import scaled

    cal = predict.Calibration(calibration_models())
    rows = rows_on(P)
    before = predict.compare(rows, cal, P)
    for what in ("alpha-beta-exchange.beta_x", "alpha-beta-exchange.alpha_x"):
        after = predict.compare(rows, scaled(cal, what, 2.0), P)
        moved = still = 0
        for b, a in zip(before, after):
            if not b["predicted_s"]:
                continue
            sched = predict.COLLECTIVES[b["collective"]].schedule(b["algorithm"], P, b["nelems"])
            change = a["predicted_s"]["alpha-beta-exchange"] - b["predicted_s"]["alpha-beta-exchange"]
            if has_exchange(sched) and (what.endswith("alpha_x") or b["nelems"]):
                assert change > 0, (what, b["algorithm"], b["nelems"])
                moved += 1
            else:
                assert change == 0, (what, b["algorithm"], b["nelems"])
                still += 1
            for m in predict.MODELS:            # no other model moves
                if m != "alpha-beta-exchange":
                    assert a["predicted_s"][m] == b["predicted_s"][m]
        assert moved and (still or P > 2), (what, moved, still)


# ---------------------------------------------------------------- files written before the exchange
def test_an_old_calibration_still_calibrates_what_it_can_and_names_what_to_measure(tmp_path):
    lab = ROOT / "labs" / "source"
    c = predict.load_calibration([lab / "lab1" / "pingpong.json", lab / "lab3" / "logp.json"], 2)
    line = predict.missing_line(c)
    assert ("alpha-beta-exchange, alpha-beta-exchange-segmented, alpha-beta-fresh, loggops-fresh, nbl-exchange, "
            "nbl-exchange-segmented") in line
    assert "mpi_exercises exchange --json exchange.json" in line and "mpi_exercises pingpong --json" not in line
    assert ("mpi_exercises pingpong --fresh --json pingpong-fresh.json` and `mpiexec -n 2 python -m mpi_exercises "
            "exchange --fresh --json exchange-fresh.json") in line
    assert "\n" not in line
    old = tmp_path / "old_report.json"             # a predict --json written before: three models
    data = json.loads((ROOT / "book" / "data" / "predict_reference.json").read_text())
    old.write_text(json.dumps(data))
    c = predict.load_calibration([old], 2)
    assert set(c.models) == {"alpha-beta", "nbl", "loggp"} and c.software is not None
    line = predict.missing_line(c)
    for m in set(predict.MODELS) - {"alpha-beta", "nbl", "loggp"}:
        assert m in line
    assert line.endswith("predicting alpha-beta, nbl, loggp only")
    assert predict.missing_line(predict.Calibration(calibration_models())) is None


def test_a_calibration_without_fresh_data_names_it_alone_and_fresh_files_calibrate_it(tmp_path):
    files = {k: tmp_path / f"{k}.json" for k in ("pingpong", "exchange", "pingpong-fresh", "exchange-fresh")}
    for (kind, path), line in zip(files.items(), ((BELOW, ABOVE), (X_BELOW, X_ABOVE), (FP_BELOW, FP_ABOVE),
                                                  (F_BELOW, F_ABOVE))):
        path.write_text(json.dumps({"benchmark": kind.split("-")[0], **({"fresh": True} if "fresh" in kind else {}),
                                    "results": results(SIZES, segments(SIZES, *line))}))
    pp, ex, fp, fx = files.values()
    c = predict.load_calibration([pp, ex], 2)           # written before the messages of fresh data
    assert "alpha-beta-exchange-segmented" in c.models and "alpha-beta-fresh" not in c.models
    line = predict.missing_line(c)
    assert line.startswith("predict: warning: the calibration has no alpha-beta-fresh, loggp")
    assert "pingpong --fresh --json pingpong-fresh.json" in line and "exchange --fresh --json exchange-fresh.json" in line
    assert "exchange --json exchange.json" not in line
    c = predict.load_calibration([pp, fp, fx], 2)       # the fresh files are not taken for the clean ones
    assert "alpha-beta-fresh" in c.models and "alpha-beta-exchange" not in c.models
    assert c.models["alpha-beta-fresh"]["beta_xr"] == pytest.approx(F_ABOVE[1], rel=1e-9)
    assert c.models["alpha-beta-fresh"]["beta_r"] == pytest.approx(FP_ABOVE[1], rel=1e-9)
    assert c.models["alpha-beta"]["beta"] != c.models["alpha-beta-fresh"]["beta"]
    assert "exchange --json exchange.json" in predict.missing_line(c)
    with pytest.raises(ValueError, match=r"^--calibration: the exchange terms .* give its pingpong --fresh --json "
                                         r"file too \(mpiexec -n 2 python -m mpi_exercises pingpong --fresh"):
        predict.load_calibration([fx], 2)
    warnings = []                                        # the clean ones still calibrate their models
    c = predict.load_calibration([pp, ex, fx], 2, warnings)
    assert "alpha-beta-exchange" in c.models and "alpha-beta-fresh" not in c.models
    assert any("pingpong --fresh --json file too" in w for w in warnings)


def test_an_exchange_file_alone_names_the_pingpong_file_it_needs(tmp_path):
    ex = tmp_path / "exchange.json"
    ex.write_text(json.dumps({"benchmark": "exchange", "results": results(SIZES, segments(SIZES, X_BELOW, X_ABOVE))}))
    with pytest.raises(ValueError, match=r"^--calibration: the exchange terms .* give its pingpong --json file too"):
        predict.load_calibration([ex], 2)
    warnings = []
    c = predict.load_calibration([ex, ROOT / "labs" / "source" / "lab3" / "logp.json"], 2, warnings)
    warnings = [w for w in warnings if not w.startswith("predict: LogGP from")]       # the G line is a note
    assert set(c.models) == {"loggp"} and len(warnings) == 1 and "pingpong --json" in warnings[0]


def test_an_unphysical_added_term_is_left_out_with_a_warning_not_the_whole_calibration():
    models = calibration_models()
    models["alpha-beta-exchange"]["beta_x"] = -1e-10
    kept, dropped = predict.keep_physical(models)
    assert "alpha-beta-exchange" not in kept and set(kept) == set(models) - {"alpha-beta-exchange"}
    assert len(dropped) == 1 and dropped[0].startswith("alpha-beta-exchange left out: its fit is no machine")


@pytest.mark.mpi
def test_predict_with_an_old_report_warns_in_one_line_and_predicts(tmp_path):
    data = json.loads((ROOT / "book" / "data" / "predict_reference.json").read_text())
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"calibration": data["calibration"]}))
    res = run_mpi_ok(2, ["-m", "mpi_exercises", "predict", "--collectives", "barrier", "--iterations", "3",
                         "--warmup", "1", "--no-progress", "--calibration", str(old)], timeout=120)
    warnings = [line for line in res.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "mpi_exercises exchange" in warnings[0], res.stderr
    assert res.stdout.splitlines()[-1].startswith("predict: 2 ranks")


@pytest.mark.mpi
def test_the_exchange_benchmark_writes_its_samples_and_its_one_fit(tmp_path):
    out = tmp_path / "exchange.json"
    res = run_mpi_ok(2, ["-m", "mpi_exercises", "exchange", "--sizes", "0,64,1k,8k,64k,512k", "--iterations",
                         "20", "--warmup", "2", "--time-budget", "0", "--no-progress", "--json", str(out)],
                     timeout=120)
    data = json.loads(out.read_text())
    assert data["benchmark"] == "exchange" and data["fit"]["statistic"] == "min_s" and data["fresh"] is False
    assert [r["bytes"] for r in data["results"]] == [0, 64, 1024, 8192, 65536, 524288]
    for r in data["results"]:
        assert r["samples"] == len(r["times_s"]) >= 20 and 0 < r["min_s"] <= r["median_s"]
    f = pingpong.fit_file(data)
    assert f["alpha_beta"]["alpha_s"] == pytest.approx(data["fit"]["alpha_beta"]["alpha_s"], rel=1e-12)
    assert "load" in res.stdout.splitlines()[-2]
    # predict takes it with the ping-pong of the lab as a calibration
    warnings = []
    c = predict.load_calibration([ROOT / "labs" / "source" / "lab1" / "pingpong.json", out], 2, warnings)
    for m in ("alpha-beta-exchange", "nbl-exchange"):    # or left out, saying why (a disturbed run)
        assert (m in c.models) != any(w.startswith(f"--calibration {out}: {m} left out") for w in warnings)



# ---------------------------------------------------------------- LogGOPS calibrated on one message
def loggops_machine(O, G_below=150e-12, G_above=100e-12, L=0.5e-6, o_s=0.8e-6, o_r=1.6e-6, g=1.5e-6, n=10):
    """A ping-pong and a PRTT up to 2 MiB from one machine: eager below the switch, LogGOPS's
    rules (a send busy o_s + (m-1) O, one message o_s + L + o_r + (m-1) max(O, G)); from the
    switch on the sender waits for its receiver (its o_s(m) and its gap are the one-way time,
    (m-1) G_above per byte).  Written out here, apart from the kit's fits."""
    from netmodels.models.logp import LogGOPS
    from netmodels.models.logp_fit import prtt_model

    eager = LogGOPS(L=L, o=o_s, g=g, P=2, o_r=o_r, G=G_below, O=O)
    w = np.maximum(SIZES - 1, 0)
    one_way = np.where(SIZES < SWITCH, eager.message_time(SIZES), o_s + L + o_r + w * G_above)
    d = 2 * float(one_way.max())
    r1 = 2 * one_way
    rn0 = np.where(SIZES < SWITCH, prtt_model(eager, n, 0.0, SIZES), r1 + (n - 1) * one_way)
    rnd = np.where(SIZES < SWITCH, prtt_model(eager, n, d, SIZES), r1 + (n - 1) * (one_way + d))
    o_r_m = np.where(SIZES < SWITCH, o_r + w * max(O, G_below), one_way)
    prtt = [{"bytes": float(b), "d_s": d, **{k: {"min_s": float(v), "median_s": float(v), "ci_relative_halfwidth": 0.0}
                                              for k, v in (("prtt_1_0", a), ("prtt_n_0", b0), ("prtt_n_d", bd),
                                                           ("o_r", orr), ("o_s_direct", orr))}}
            for b, a, b0, bd, orr in zip(SIZES, r1, rn0, rnd, o_r_m)]
    return one_way, prtt, n


@pytest.mark.parametrize("O", [50e-12, 200e-12], ids=["O < G", "O > G: clipped"])
def test_loggops_one_message_takes_what_the_ping_pong_measures(O):
    one_way, prtt, n = loggops_machine(O)
    models = predict.parameters_of({"pingpong": (results(SIZES, one_way), None), "logp": (prtt, n)}, 2)
    p = models["loggops"]
    assert p["S"] == SWITCH - 1 and p["G"] == pytest.approx(100e-12, rel=1e-6)
    assert p["O"] == pytest.approx(min(O, 100e-12), rel=1e-6)      # the eager sends' copy, at most G
    model = table.get("loggops").build(**p)
    long_ = SIZES >= SWITCH
    # within 1e-4: L is what the round trips up to 64 B leave (their median), 0.2 ns off where
    # the overheads grow with size; the copy charged on top of the wire would be 3 % to 100 %
    assert model.message_time(SIZES[long_]) == pytest.approx(one_way[long_], rel=1e-4)
    for m, t in zip(SIZES[long_], one_way[long_]):      # the engine agrees: one message on 2 ranks
        sched = registry.build("broadcast.binomial", 2, int(m) // 8).to_schedule()
        assert simulate(sched, model, semantics="loggopsim").time == pytest.approx(t, rel=1e-4)
    assert models["loggp"]["G"] == pytest.approx(100e-12, rel=1e-6)       # LogGP's G: the long gaps'


def test_a_logp_file_to_16_KiB_still_calibrates_loggp_as_before_and_loggops():
    """``--calibration`` with a ping-pong file and a logp file written to 16 KiB: LogGP's G is
    the line of the gap-bound sizes (numpy's, here), LogGOPS has its O and G, nothing is lost."""
    from netmodels.models import logp_fit

    files = [str(ROOT / "book" / "data" / f) for f in ("pingpong_reference.json", "logp_reference.json")]
    warnings = []
    cal = predict.load_calibration(files, 2, warnings)
    data = json.loads(Path(files[1]).read_text())
    n, res = data["parameters"]["n"], data["results"]
    col = {k: np.array([r[k][pingpong.FIT_STATISTIC] for r in res]) for k in ("prtt_1_0", "prtt_n_0", "prtt_n_d")}
    s = np.array([r["bytes"] for r in res], dtype=float)
    gap = (col["prtt_n_0"] - col["prtt_1_0"]) / (n - 1)
    o_s = (col["prtt_n_d"] - col["prtt_1_0"]) / (n - 1) - np.array([r["d_s"] for r in res])
    bound = gap > (1 + logp_fit.GAP_MARGIN) * o_s
    assert max(s) == 16384 and len(warnings) == 1       # one line: from which sizes G comes
    assert warnings[0].startswith(f"predict: LogGP from {files[1]}: g and G fitted to the sizes whose gap exceeds o_s")
    assert "no long messages measured" in warnings[0]
    assert cal.models["loggp"]["G"] == pytest.approx(np.polyfit(np.maximum(s[bound] - 1, 0), gap[bound], 1)[0],
                                                     rel=1e-12)
    gops = cal.models["loggops"]
    assert 0 <= gops["O"] <= gops["G"] and gops["S"] >= 0 and "loggops" in predict.MODELS


@pytest.mark.mpi
def test_predicts_prtt_reaches_2_MiB_with_its_large_sizes_capped_by_the_byte_budget():
    """One calibration round's PRTT (2 ranks): the ping-pong's sizes, every case ``reps`` samples
    where the budget allows it, fewer (but at least its share of PRTT_LONG_SAMPLES) at 2 MiB."""
    code = ("import json\nfrom mpi4py import MPI\nfrom mpi_exercises.bench.predict import measurement as m\n"
            "out = m.calibration_round(MPI.COMM_WORLD, 30, 4, software=False)\n"
            "if MPI.COMM_WORLD.Get_rank() == 0:\n"
            "    print(json.dumps({r['bytes']: [r[k]['samples'] for k in ('prtt_1_0', 'prtt_n_0', 'prtt_n_d', 'o_r')]"
            " for r in out['logp']}))\n")
    res = run_mpi_ok(2, ["-c", code], timeout=180)
    samples = {int(k): v for k, v in json.loads(res.stdout.strip().splitlines()[-1]).items()}
    assert list(samples) == predict.CALIBRATION_SIZES == predict.PRTT_SIZES
    budget, n, least = 2 * 64 * 2**20 // 4, predict.LOGP_N, -(-2 * predict.measurement.PRTT_LONG_SAMPLES // 4)
    for s, counts in samples.items():       # the ping-pong's rule, written out: budget / (n s), within [least, 30]
        assert set(counts) == {max(least, min(30, budget // max(n * s, 1)))}, (s, counts)
    assert samples[2097152][0] == least < samples[0][0] == 30


@pytest.mark.parametrize("bad,match", [({"budget_bytes": 0}, "budget_bytes must be an integer >= 1"),
                                       ({"budget_bytes": 1.5}, "budget_bytes must be an integer >= 1"),
                                       ({"at_least": 0}, "at_least must be an integer >= 1")])
def test_the_prtt_sweep_refuses_a_bad_budget_before_any_message(bad, match):
    from mpi_exercises.bench import logp_bench

    with pytest.raises(ValueError, match=match):
        logp_bench.sweep(None, [0, 8], 10, 5, 1, False, **bad)      # no communicator is ever touched
