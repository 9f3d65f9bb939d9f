"""The prediction report: its models against hand-computed times, a change of a parameter moving
exactly that model's share, its checks of a calibration, and its JSON under mpiexec at P = 2.

Timings are reported, never asserted: the machine may be shared."""

import json

import numpy as np
import pytest

from mpi_exercises.bench import predict
from mpi_exercises.bench.predict.comparison import predicted_times
from mpi_exercises.software import SoftwareCost
from netmodels.algorithms import registry
from tests.mpirun import run_mpi, run_mpi_ok

US = 1e-6
ALPHA, BETA = 2e-6, 1e-9                      # 2 µs, 1 GB/s
LOGGP = {"L": 1e-6, "o_s": 0.5e-6, "o_r": 0.7e-6, "g": 0.2e-6, "G": 1e-9}
SW = SoftwareCost((1, 1000, 100_000), (3 * US, 4 * US, 50 * US), 0.6 * US, 0.3 * US,
                  (0.1 * US, 0.5 * US, 30 * US), (0.2 * US, 0.8 * US, 45 * US))


#: the added terms: a switch at 32 KiB, an exchange 1.5 times slower per byte, O = 0.1 ns/B
SWITCH, BETA_X = 32768.0, 1.5 * BETA
SEGMENTS = {"switch_bytes": SWITCH, "below": {"alpha_s": ALPHA, "beta_s_per_byte": BETA},
            "above": {"alpha_s": 3 * ALPHA, "beta_s_per_byte": 0.8 * BETA}}
EXCHANGE = {"alpha_s": 1.2 * ALPHA, "beta_s_per_byte": BETA_X}
EXCHANGE_SEGMENTS = {"switch_bytes": SWITCH, "below": {"alpha_s": 1.2 * ALPHA, "beta_s_per_byte": BETA_X},
                     "above": {"alpha_s": 4 * ALPHA, "beta_s_per_byte": 1.2 * BETA_X}}
#: the ping-pong and the exchange of data just written: twice the clean ones' time per byte above the switch
FRESH_PINGPONG = {"switch_bytes": SWITCH, "below": {"alpha_s": 1.1 * ALPHA, "beta_s_per_byte": 1.1 * BETA},
                  "above": {"alpha_s": 4 * ALPHA, "beta_s_per_byte": 1.6 * BETA}}
FRESH_SEGMENTS = {"switch_bytes": SWITCH, "below": {"alpha_s": 1.3 * ALPHA, "beta_s_per_byte": 1.1 * BETA_X},
                  "above": {"alpha_s": 5 * ALPHA, "beta_s_per_byte": 2.4 * BETA_X}}


def models(alpha=ALPHA, nprocs=2):
    return predict.network_parameters({"alpha_s": alpha, "beta_s_per_byte": BETA},
                                     {"L_s": LOGGP["L"], "o_s_s": LOGGP["o_s"], "o_r_s": LOGGP["o_r"],
                                      "g_s": LOGGP["g"], "G_s_per_byte": LOGGP["G"], "O_s_per_byte": 1e-10},
                                     None, nprocs, segments=SEGMENTS, exchange=EXCHANGE,
                                     exchange_segments=EXCHANGE_SEGMENTS, fresh=(FRESH_PINGPONG, FRESH_SEGMENTS))


def cal(alpha=ALPHA, software=SW):
    return predict.Calibration(models(alpha), software)


def test_each_model_prices_a_two_rank_exchange_as_its_paper_does():
    N = 1000
    s = registry.build("allreduce.recursive_doubling", 2, N)
    t = predict.network_times(s, cal())
    assert t["alpha-beta"] == pytest.approx(ALPHA + BETA * 8 * N)          # one port, full duplex
    assert t["nbl"] == pytest.approx(2 * ALPHA + BETA * 8 * N)             # L = 2 links, f(2) = 1
    g = LOGGP
    assert t["loggp"] == pytest.approx(g["o_s"] + g["L"] + (8 * N - 1) * g["G"] + g["o_r"])
    # the software term: the door at N = 1000 (a knot: 4 µs), then per rank one step (0.3 µs) and
    # one combine of N (0.8 µs); both ranks alike, so every model's walk adds it once
    sw = 4 * US + 0.3 * US + 0.8 * US
    assert predict.software_time(s, cal()) == pytest.approx(sw)
    with_sw = predicted_times(s, cal())
    assert set(with_sw) == set(t)
    for m in t:
        assert with_sw[m] == pytest.approx(t[m] + sw), m


def test_a_barrier_under_alpha_beta_counts_its_messages_in_sequence():
    P = 8
    d = registry.build("barrier.dissemination", P, 0)
    assert predict.network_times(d, cal())["alpha-beta"] == pytest.approx(3 * ALPHA)
    cc = registry.build("barrier.central_counter", P, 0)   # the root receives, then sends, P - 1 in turn
    assert predict.network_times(cc, predict.Calibration(models(nprocs=P)))["alpha-beta"] == \
        pytest.approx(2 * (P - 1) * ALPHA)


def _rows(c, sizes=(2, 700)):
    rows = [{"collective": "allreduce", "algorithm": a, "nelems": n, "min_s": 10 * US}
            for a in registry.names("allreduce", short=True) for n in sizes]
    rows += [{"collective": "barrier", "algorithm": a, "nelems": 0, "min_s": 3 * US}
             for a in registry.names("barrier", short=True)]
    return predict.compare(rows, c, 2)


def test_doubling_alpha_moves_every_alpha_beta_prediction_by_alpha_per_step_and_nothing_else():
    # on two ranks every step of every schedule is one message each way or one way: under α-β
    # a step with a message costs α + β m, so doubling α adds α per step that moves a message
    before, after = _rows(cal()), _rows(cal(alpha=2 * ALPHA))
    for b, a in zip(before, after):
        sched = predict.COLLECTIVES[b["collective"]].schedule(b["algorithm"], 2, b["nelems"])
        steps = sum(1 for s in sched.steps if any(tr.src != tr.dst for tr in s))
        assert steps > 0
        assert a["predicted_s"]["alpha-beta"] - b["predicted_s"]["alpha-beta"] == pytest.approx(steps * ALPHA)
        assert a["predicted_s"]["loggp"] == b["predicted_s"]["loggp"]
        assert a["software_s"] == b["software_s"]
        assert a["predicted_s"]["nbl"] > b["predicted_s"]["nbl"]                # NBL takes the same α


def test_rows_carry_their_parts_and_the_errors_of_the_models_alone():
    rows = _rows(cal())
    for r in rows:
        for m in predict.MODELS:
            # the software walked with the messages: at least the network, at most the two apart,
            # and under the α-β family's sync steps without a combining term exactly their sum
            assert r["network_s"][m] < r["predicted_s"][m] <= (r["network_s"][m] + r["software_s"]) * (1 + 1e-12)
            if m.startswith("alpha-beta"):
                assert r["predicted_s"][m] == pytest.approx(r["network_s"][m] + r["software_s"])
            assert r["relative_error"][m] == pytest.approx((r["predicted_s"][m] - r["min_s"]) / r["min_s"])
            assert r["relative_error_network"][m] == pytest.approx((r["network_s"][m] - r["min_s"]) / r["min_s"])
    # on two ranks many algorithms are the same schedule: binomial, tree, snake and fence
    # allreduce are a reduce to one rank then a broadcast back
    same = {r["algorithm"]: r["schedule"] for r in rows if r["collective"] == "allreduce" and r["nelems"] == 2}
    assert same["binomial"] == same["tree"] and same["ring"] != same["recursive_doubling"]
    assert len({r["schedule"] for r in rows}) < len(rows)


def test_the_sensitivity_benchmark_moves_alpha_beta_by_alpha_per_message_step_and_exchanges_only(capsys):
    import re
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "benchmarks"))
    from predict_sensitivity import main

    report = root / "book" / "data" / "predict_launch_1.json"
    data = json.loads(report.read_text())
    rows = [r for r in data["rows"] if r["algorithm"] != "mpi"]
    alpha = data["calibration"]["models"]["alpha-beta"]["alpha"]
    assert main([str(report)]) == 0                                  # α doubled: Δ = α
    out = capsys.readouterr().out
    assert f"alpha-beta moved by one Δ = {alpha:.3g} per step with a message in {len(rows)} of {len(rows)} rows" in out
    below = re.search(r"software walked with the messages: (\d+) of (\d+) predictions below", out)
    assert below and int(below.group(1)) <= int(below.group(2))
    assert main([str(report), "--scale", "alpha-beta-exchange.beta_x=2"]) == 0
    moved = re.search(r"moved (\d+) of \d+ rows with an exchange, 0 of (\d+) rows without one", capsys.readouterr().out)
    assert moved and int(moved.group(1)) > 0 and int(moved.group(2)) > 0


def test_errors_are_summarized_per_model_and_collective_with_and_without_software():
    rows = [{"collective": c, "relative_error": {"alpha-beta": e, "loggp": -2 * e},
             "relative_error_network": {"alpha-beta": 2 * e, "loggp": e}}
            for c, e in [("allreduce", 0.1), ("allreduce", -0.5), ("barrier", 0.2)]]
    s = predict.summarize_errors(rows)
    w = s["alpha-beta"]["with_software"]
    assert w["median_abs"] == pytest.approx(0.2) and w["worst"] == -0.5 and w["rows"] == 3
    assert w["within_tolerance"] == 1
    a = w["by_collective"]["allreduce"]
    assert (a["median_abs"], a["worst"], a["median_abs_ci"]) == (pytest.approx(0.3), -0.5, [0.1, 0.5])
    assert s["alpha-beta"]["network_only"]["median_abs"] == pytest.approx(0.4)
    assert s["loggp"]["with_software"]["worst"] == pytest.approx(1.0)
    assert predict.best_models(s) == {"(all)": "alpha-beta", "allreduce": "alpha-beta", "barrier": "alpha-beta"}


def test_a_calibration_round_trips_and_is_checked():
    c = cal()
    again = predict.Calibration.from_dict(json.loads(json.dumps(c.as_dict())))
    assert again.models == c.models and again.software == c.software
    # a whole report is accepted: its calibration block is read
    assert predict.Calibration.from_dict({"calibration": c.as_dict()}).models == c.models
    with pytest.raises(ValueError, match="lacks beta"):
        predict.Calibration({"alpha-beta": {"alpha": 1e-6}})
    with pytest.raises(ValueError, match="model must be one of"):
        predict.Calibration({"hockney": {"alpha": 1e-6, "beta": 1e-9}})
    with pytest.raises(ValueError, match="alpha"):
        predict.Calibration({"alpha-beta": {"alpha": -1e-6, "beta": 1e-9}})
    with pytest.raises(ValueError, match="finite number"):
        predict.Calibration({"alpha-beta": {"alpha": "fast", "beta": 1e-9}})
    # a calibration may hold a subset of the models: only those are predicted
    only = predict.Calibration({"alpha-beta": {"alpha": 1e-6, "beta": 1e-9}})
    assert set(predict.network_times(registry.build("barrier.dissemination", 2, 0), only)) == {"alpha-beta"}


def test_unphysical_fits_are_named():
    m = models()
    assert predict.unphysical(m) is None
    m["alpha-beta"]["alpha"] = -685e-6
    assert "the alpha-beta fit: alpha = -685 µs <= 0, which no network has" in predict.unphysical(m)
    m = models()
    m["loggp"]["g"] = 0.0                                   # not identified: allowed
    assert predict.unphysical(m) is None
    m["loggp"]["g"] = -1e-7
    assert "the loggp fit: g = -0.1 µs < 0, which no network has" in predict.unphysical(m)
    m["loggp"]["o_s"] = 0.0                                 # an overhead of 0: refused
    assert "o_s = 0 µs <= 0, g = -0.1 µs < 0" in predict.unphysical(m)
    m = models()                                            # NBL's β: its table entry's range, > 0
    m["nbl"]["beta"] = -1e-9
    assert "the nbl fit: beta = -1 ns/B <= 0, which no network has" in predict.unphysical(m)
    m = models()                                            # an added term is not the refusal's
    m["alpha-beta-segmented"]["beta_r"] = -1e-9
    assert predict.unphysical(m) is None


def test_noise_beyond_five_times_the_target_marks_the_calibration_unreliable():
    r = predict.reliability([(0.01, "ping-pong 8 B"), (0.3, "PRTT 1 KiB")])
    assert r == {"worst": 0.3, "at": "PRTT 1 KiB", "limit": predict.NOISY, "reliable": False,
                 "missed": ["PRTT 1 KiB"]}
    assert predict.reliability([(0.05, "x")])["reliable"] and predict.NOISY == pytest.approx(0.10)
    assert "UNRELIABLE" in predict.reliability_line(r)


def test_drift_is_the_largest_relative_change():
    from dataclasses import replace

    before = replace(cal(), source="measured")
    assert predict.drift(before, before) == {"largest": 0.0, "at": "alpha-beta alpha", "stable": True}
    moved = replace(before, models={**before.models, "alpha-beta": {"alpha": 1.5 * ALPHA, "beta": BETA}})
    d = predict.drift(before, moved)
    assert d["largest"] == pytest.approx(0.5) and d["at"] == "alpha-beta alpha" and not d["stable"]
    # software times are compared above a floor of 1 µs: 0.1 -> 0.3 µs is no drift
    sw = replace(SW, copy=(0.3 * US, 0.5 * US, 30 * US))
    assert predict.drift(before, replace(before, software=sw))["stable"]
    # a given calibration's models are not compared (nothing was measured)
    assert predict.drift(replace(before, source="given"), replace(moved, source="given"))["largest"] == 0.0


def test_rounds_pool_their_samples_as_one_measurement():
    from mpi_exercises.bench import statistics

    rng = np.random.default_rng(3)
    a, b = rng.random(7), rng.random(5)
    row = lambda t, k: {"bytes": 64, "bandwidth_Bps": 1.0, "samples_per_round": [k], **statistics.summarize(t)}  # noqa: E731
    logp = lambda t: {"bytes": 8, "d_s": 1e-5, "prtt_1_0": statistics.summarize(t)}  # noqa: E731
    pooled = predict.pool([[row(a, 7), logp(a)], [row(b, 5), logp(b)]])
    both = np.concatenate([a, b])
    assert pooled[0]["samples"] == 12 and pooled[0]["times_s"] == pytest.approx(both.tolist(), abs=1e-12)
    assert pooled[0]["min_s"] == pytest.approx(both.min()) and pooled[0]["median_s"] == pytest.approx(np.median(both))
    assert pooled[0]["samples_per_round"] == [7, 5]
    assert pooled[0]["bandwidth_Bps"] == pytest.approx(64 / np.median(both))
    assert pooled[1]["d_s"] == 1e-5 and pooled[1]["prtt_1_0"]["max_s"] == pytest.approx(both.max())
    with pytest.raises(ValueError, match="different lengths"):
        predict.pool([[row(a, 7)], []])
    # samples of different things are not pooled: PRTT(n, d, s) with another d, another size
    with pytest.raises(ValueError, match=r"the rounds disagree on d_s \(1e-05, 2e-05\)"):
        predict.pool([logp(a), {**logp(b), "d_s": 2e-5}])
    with pytest.raises(ValueError, match="the rounds disagree on bytes"):
        predict.pool([row(a, 7), {**row(b, 5), "bytes": 128}])


def test_a_launch_mode_combines_its_readings():
    from mpi_exercises.bench.launch_mode import MODE_RATIO, combined

    reading = lambda a, x: {"bytes": 1 << 20, "allreduce_s": a, "exchange_s": x, "ratio": a / x,  # noqa: E731
                            "mode": "slow" if a / x > MODE_RATIO else "normal", "threshold": MODE_RATIO}
    r = MODE_RATIO * 1e-3                 # readings around the threshold, whatever it is
    m = combined([reading(0.8 * r, 1e-3), reading(3 * r, 1e-3), reading(0.9 * r, 1e-3), reading(2.5 * r, 1e-3)])
    assert m["allreduce_s"] == pytest.approx(1.7 * r) and m["exchange_s"] == pytest.approx(1e-3)
    assert m["ratio"] == pytest.approx(1.7 * MODE_RATIO) and m["mode"] == "slow" and m["slow_readings"] == 2
    assert [r["mode"] for r in m["readings"]] == ["normal", "slow", "normal", "slow"]
    with pytest.raises(ValueError, match="at least one"):
        combined([])


def test_the_drift_compares_the_halves_and_skips_what_was_not_identified():
    from dataclasses import replace

    first = replace(cal(), source="measured")
    unidentified = {**first.models, "loggp": {**LOGGP, "G": 0.0}}          # G not identified: 0
    second = replace(first, models=unidentified)
    d = predict.halves_drift((first, second))
    assert d["largest"] == 0.0 and d["stable"] and d["compared"] == "first half of the rounds against the second"
    assert predict.drift_line(d).startswith("calibration, first half of the rounds against the second: "
                                            "the largest change is 0% (")
    refused = predict.halves_drift((first, "the alpha-beta fit: alpha = -1 µs <= 0"))
    assert refused["stable"] is False and refused["largest"] is None
    assert "first half" not in refused["at"] and "second half's fit refused" in refused["at"]
    assert "the machine changed during the run" in predict.drift_line(refused)
    assert predict.halves_drift(None)["stable"] is None
    # a report written before the halves keeps its line
    old = {"largest": 0.5, "at": "alpha-beta alpha", "stable": False}
    assert predict.drift_line(old).startswith("calibration before and after the measurement: the largest change is 50%")


@pytest.mark.cli
def test_rounds_must_be_even_on_the_command_line():
    import subprocess
    import sys

    for bad in ("3", "0", "x", "66"):
        res = subprocess.run([sys.executable, "-m", "mpi_exercises", "predict", "--rounds", bad],
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 2 and "Traceback" not in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1 and "even number of rounds" in res.stderr


def _write_calibration(path, alpha=ALPHA):
    path.write_text(json.dumps({"calibration": cal(alpha).as_dict()}))
    return str(path)


@pytest.mark.mpi
def test_predict_from_a_given_calibration_moves_with_its_alpha(tmp_path):
    # the predictions of a given calibration depend on nothing measured: doubling α in the
    # file moves every α-β prediction by exactly α per step that moves a message
    runs = {}
    for a in (ALPHA, 2 * ALPHA):
        out = tmp_path / f"predict_{a}.json"
        res = run_mpi_ok(2, ["-m", "mpi_exercises", "predict", "--calibration",
                             _write_calibration(tmp_path / f"cal_{a}.json", a), "--sizes", "2,700",
                             "--iterations", "3", "--warmup", "1", "--no-progress", "--json", str(out)],
                         timeout=120)
        assert "network alone" in res.stdout and "distinct schedules on P = 2" in res.stdout
        runs[a] = json.loads(out.read_text())
    for b, a in zip(runs[ALPHA]["rows"], runs[2 * ALPHA]["rows"]):
        assert (b["collective"], b["algorithm"], b["nelems"]) == (a["collective"], a["algorithm"], a["nelems"])
        if b["algorithm"] == "mpi":
            assert b["predicted_s"] == {} and a["predicted_s"] == {}
            continue
        sched = predict.COLLECTIVES[b["collective"]].schedule(b["algorithm"], 2, b["nelems"])
        steps = sum(1 for s in sched.steps if any(tr.src != tr.dst for tr in s))
        assert a["predicted_s"]["alpha-beta"] - b["predicted_s"]["alpha-beta"] == pytest.approx(steps * ALPHA)
        assert a["predicted_s"]["loggp"] == pytest.approx(b["predicted_s"]["loggp"])
    data = runs[ALPHA]
    assert data["calibration"]["source"].endswith(f"cal_{ALPHA}.json") and data["reliable"] is None
    assert data["calibration_halves"] is None                    # nothing measured, nothing to compare
    assert data["rounds"]["interleaved"] is False and data["stable"] is None
    assert "not interleaved with the collectives" in res.stdout


@pytest.mark.mpi
def test_a_bad_calibration_file_is_one_line_on_every_rank(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"models": {"alpha-beta": {"alpha": 1e-6}}}))
    res = run_mpi(2, ["-m", "mpi_exercises", "predict", "--calibration", str(bad), "--no-progress"], timeout=60)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.strip().splitlines() == [f"predict: error: --calibration {bad}: calibration: model "
                                               "alpha-beta lacks beta (units: alpha s, beta s/B)"]


@pytest.mark.mpi
def test_predict_under_mpiexec_measures_its_calibration_and_writes_the_report(tmp_path):
    out = tmp_path / "predict.json"
    # 15 calibration repetitions: with 3, beside a 6-rank job (as in `make test`) 1 run in 5 fitted
    # G < 0 and was refused as disturbed; with 15, none of 18 (0.8 s more)
    # four rounds, not the default sixteen: the counts of samples below are worked out for four
    options = ["--sizes", "2,9000", "--iterations", "3", "--warmup", "1", "--calibration-repetitions", "15",
               "--rounds", "4"]
    res = run_mpi_ok(2, ["-m", "mpi_exercises", "predict", *options, "--no-progress", "--json", str(out)], timeout=180)
    assert "median |err|" in res.stdout
    assert "calibration, first half of the rounds against the second: " in res.stdout
    assert "and collectives measured in 4 alternate rounds" in res.stdout
    data = json.loads(out.read_text())
    assert data["benchmark"] == "predict" and data["environment"]["ranks"] == 2
    assert data["valid"] is (not data["oversubscribed"]) and isinstance(data["load_average_1min"], float)
    c = predict.Calibration.from_dict(data)
    assert c.source == "measured" and c.software is not None
    left_out = [line.split(" ")[0] for line in c.reliability.get("left_out", [])]     # a disturbed fit
    assert set(c.models) | set(left_out) == set(predict.MODELS) and not set(left_out) & set(predict.PLAIN)
    assert isinstance(data["reliable"], bool) and data["reliable"] == c.reliability["reliable"]
    algorithms = {k: set(registry.names(k, short=True)) | {"mpi"} for k in ("allreduce", "barrier")}
    seen = {(r["collective"], r["algorithm"], r["nelems"]) for r in data["rows"]}
    assert seen == {("allreduce", a, n) for a in algorithms["allreduce"] for n in (2, 9000)} | {
        ("barrier", a, 0) for a in algorithms["barrier"]}
    for r in data["rows"]:
        assert 0 < r["min_s"] <= r["median_s"] and r["measured_s"] == r["min_s"]
        # above 64 KiB one call per sample, else ten (the barrier's skew charged once per ten)
        assert r["timing_method"].startswith("one call" if r["nelems"] == 9000 else "tight loop of 10"), r
    assert set(data["summary"]) == set(c.models)
    for s in data["summary"].values():
        for part in ("with_software", "network_only"):
            assert np.isfinite(s[part]["median_abs"]) and abs(s[part]["worst"]) >= s[part]["median_abs"]
    assert data["stable"] is data["drift"]["stable"]
    # calibration and collectives alternated: the rows pool every round's samples, and so does the
    # calibration (ceil(2 x 15 / 4) = 8 samples per size and round), whose halves are fitted apart
    rounds = data["rounds"]
    assert rounds["rounds"] == 4 and rounds["interleaved"] and rounds["calibration_samples_per_round"] == 8
    for r in data["rows"]:
        assert r["samples"] == len(r["times_s"]) == 4         # 3 iterations: one per round, at least
    halves = [predict.Calibration.from_dict(h) for h in data["calibration_halves"]]
    assert all(h.source == "measured" and h.software is not None for h in halves)
    for kind in ("pingpong", "exchange"):
        for r in data["calibration_measurements"][kind]:
            assert r["samples"] == 4 * 8 == sum(r["samples_per_round"])
    for kind in ("pingpong-fresh", "exchange-fresh"):            # half the samples: 8 // 2 a round
        for r in data["calibration_measurements"][kind]:
            assert r["samples"] == 4 * 4 == sum(r["samples_per_round"])
    # the launch's mode: MPI's Allreduce over an exchange of the same bytes, in the JSON and the last line
    from mpi_exercises.bench.launch_mode import MODE_BYTES, launch_mode

    mode = data["launch_mode"]
    assert mode["bytes"] == MODE_BYTES and mode["allreduce_s"] > 0 and mode["exchange_s"] > 0
    assert mode["ratio"] == pytest.approx(mode["allreduce_s"] / mode["exchange_s"])
    assert mode["mode"] == launch_mode(mode["ratio"])
    assert len(mode["readings"]) == 4 and mode["slow_readings"] == sum(r["mode"] == "slow" for r in mode["readings"])
    assert res.stdout.strip().splitlines()[-1].endswith(
        f"; launch mode {mode['mode']} (MPI Allreduce / exchange at 1024 KiB {mode['ratio']:.1f}, "
        f"slow above {mode['threshold']:g}; {mode['slow_readings']} of 4 readings slow; a write after the other "
        f"core read costs x{mode['coherence_write_ratio']:.1f} the write of own lines, caches apart above 2)")
    # the cores' cache coherence is read with each reading of the mode, the launch's the median
    ratios = [r["coherence_write_ratio"] for r in mode["readings"]]
    assert all(r > 0 for r in ratios) and mode["coherence_write_ratio"] == pytest.approx(float(np.median(ratios)))
    # what the calibration measured is stored, and its fits are those of the block
    meas = data["calibration_measurements"]
    for kind in ("pingpong", "exchange", "pingpong-fresh", "exchange-fresh"):
        assert [r["bytes"] for r in meas[kind]] == predict.CALIBRATION_SIZES
    redone = predict.keep_physical(predict.parameters_of(
        {"pingpong": (meas["pingpong"], None), "exchange": (meas["exchange"], None),
         "pingpong-fresh": (meas["pingpong-fresh"], None), "exchange-fresh": (meas["exchange-fresh"], None),
         "logp": (meas["logp"], meas["logp_n"])}, 2))[0]
    assert set(redone) == set(c.models)
    for m, params in redone.items():
        assert params == pytest.approx(c.models[m], rel=1e-12), m


@pytest.mark.mpi
def test_predict_oversubscribed_is_reported_not_valid(tmp_path):
    from mpi_exercises.bench.placement import usable_cores

    out = tmp_path / "predict.json"
    res = run_mpi_ok(usable_cores() + 1, ["-m", "mpi_exercises", "predict", "--collectives", "barrier",
                                          "--calibration", _write_calibration(tmp_path / "cal.json"),
                                          "--iterations", "3", "--warmup", "1", "--no-progress",
                                          "--json", str(out)], timeout=120)
    data = json.loads(out.read_text())
    assert data["oversubscribed"] is True and data["valid"] is False
    assert "NOT VALID" in res.stdout


def test_a_calibration_is_read_from_a_students_ping_pong_and_logp_files(tmp_path):
    from pathlib import Path

    import netmodels

    lab = Path(__file__).resolve().parents[1] / "labs" / "source"
    pp, lp = lab / "lab1" / "pingpong.json", lab / "lab3" / "logp.json"
    c = predict.load_calibration([pp, lp], 2)
    assert set(c.models) == {"alpha-beta", "alpha-beta-segmented", "nbl", "loggp", "loggp-segmented", "loggops"}
    assert c.software is None
    rows = json.loads(pp.read_text())["results"]        # α-β is the least-squares line through the minima
    line = netmodels.fit_alpha_beta([r["bytes"] for r in rows], [r["min_s"] for r in rows])
    assert c.models["alpha-beta"] == {"alpha": pytest.approx(line.alpha), "beta": pytest.approx(line.beta)}
    assert c.models["nbl"]["alpha"] == c.models["alpha-beta"]["alpha"] and c.models["nbl"]["f2"] == 1.0
    assert c.reliability is not None and str(pp) in c.source
    # a later file replaces an earlier one's model; a report's block brings its software term
    block = tmp_path / "block.json"
    block.write_text(json.dumps(cal(alpha=7e-6).as_dict()))
    merged = predict.load_calibration([pp, lp, block], 2)
    assert merged.models["alpha-beta"]["alpha"] == 7e-6 and merged.software == SW
    with pytest.raises(ValueError, match=f"--calibration {tmp_path / 'none.json'}: "):
        predict.load_calibration([tmp_path / "none.json"], 2)
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"benchmark": "pingpong", "results": [{"bytes": 0}]}))
    with pytest.raises(ValueError, match="broken.json: no 'min_s' in it"):
        predict.load_calibration([broken], 2)


@pytest.mark.cli
def test_predict_launches_names_each_launchs_mode_and_load_in_its_last_lines(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    stored = root / "book" / "data" / "predict_launch_rest_1.json"
    data = json.loads(stored.read_text())
    readings = [{"ratio": 5.0, "mode": "slow"}, {"ratio": 2.0, "mode": "normal"}]
    data.update(load_average_1min=3.3, launch_mode={**data["launch_mode"], "readings": readings, "slow_readings": 1})
    again = tmp_path / "again.json"
    again.write_text(json.dumps(data))
    res = subprocess.run([sys.executable, "benchmarks/predict_launches.py", "--summarize", str(stored), str(again)],
                         cwd=root, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    last = res.stdout.strip().splitlines()[-3:]
    original = json.loads(stored.read_text())
    mode = original["launch_mode"]
    assert last[0].startswith(f"predict_launch_rest_1.json: load {original['load_average_1min']:.1f}, mode {mode['mode']} "
                              f"(Allreduce / exchange at 1024 KiB {mode['ratio']:.1f}), best ")
    assert last[1].startswith(f"again.json: load 3.3, mode {mode['mode']} (Allreduce / exchange at 1024 KiB "
                              f"{mode['ratio']:.1f}, 1 of 2 readings slow), best ")
    assert last[2].startswith("predict_launches: 2 launches, ")


@pytest.mark.cli
def test_predict_rounds_judges_a_launch_as_predict_launches_does():
    """``benchmarks/predict_rounds.py``'s figures of one stored launch: its best model and the
    classes above 25 %, recomputed here from the report's rows."""
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "benchmarks"))
    from predict_rounds import judged

    data = json.loads((root / "book" / "data" / "predict_launch_1.json").read_text())
    j = judged(data, 16)
    s = predict.summarize_errors(data["rows"])
    per = {(m, c): e["median_abs"] for m, v in s.items() for c, e in v["with_software"]["by_size_class"].items()}
    best = min(s, key=lambda m: s[m]["with_software"]["median_abs"])
    assert j["rounds"] == 16 and j["best"] == best
    assert j["best_median_abs"] == s[best]["with_software"]["median_abs"]
    assert j["classes"] == len(per) and j["classes_above_target"] == sum(v > 0.25 for v in per.values())
    assert j["above_target"] == sorted(f"{m} {c}" for (m, c), v in per.items() if v > 0.25)
    assert list(j["worst_per_class"]) == [c for c, _ in predict.SIZE_CLASSES]
    assert all(j["worst_per_class"][c] == max(v for (_, k), v in per.items() if k == c) for c in j["worst_per_class"])
    assert len(j["coherence_write_ratios"]) == len(data["launch_mode"]["readings"])

