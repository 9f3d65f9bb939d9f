"""The ping-pong benchmark under mpiexec (timeouts turn a deadlock into a failure)."""

import json
import re

import pytest

from mpi_exercises.bench import measure, records, timing
from mpi_exercises.bench.pingpong import noise_of
from mpi_exercises import pages
from tests.alpha_beta_reference import least_squares_interval
from tests.mpirun import run_mpi_ok

QUICK = ["--sizes", "0,1,64,1k,8k,64k,256k", "--iterations", "50", "--warmup", "5", "--target", "0", "--no-progress"]


@pytest.mark.mpi
def test_pingpong_two_ranks_writes_results_and_fit(tmp_path):
    out = tmp_path / "pp.json"
    res = run_mpi_ok(2, ["-m", "mpi_exercises", "pingpong", *QUICK, "--json", str(out)])
    assert "alpha =" in res.stdout and "beta" in res.stdout
    data = json.loads(out.read_text())
    assert [r["bytes"] for r in data["results"]] == [0, 1, 64, 1024, 8192, 65536, 262144]
    for r in data["results"]:
        assert 0 < r["min_s"] <= r["median_s"] <= r["max_s"]
    # a size whose median's interval is wider than ±10 % makes the run unreliable: said in one line, recorded
    wide = [r["bytes"] for r in data["results"] if (r["ci_relative_halfwidth"] or 0) > 0.10]
    assert data["reliable"] is (not wide) and data["reliability"]["reliable"] is (not wide)
    assert data["reliability"]["missed"] == [records.fmt_bytes(n) for n in wide]
    assert sum(line.startswith("UNRELIABLE: ") for line in res.stdout.splitlines()) == (1 if wide else 0)
    fit = data["fit"]["alpha_beta"]
    assert fit["alpha_s"] > 0 and fit["beta_s_per_byte"] > 0
    assert data["environment"]["ranks"] == 2


@pytest.mark.mpi
def test_pingpong_three_ranks_idle_rank_does_not_hang(tmp_path):
    res = run_mpi_ok(3, ["-m", "mpi_exercises", "pingpong", "--sizes", "0,1k", "--iterations", "20",
                         "--target", "0", "--no-progress"])
    assert "1.0 KiB" in res.stdout


def test_iterations_shrink_for_large_messages_but_never_below_the_floor():
    assert timing.capped_iterations(8, 1000, 2**28, at_least=20) == 1000
    assert timing.capped_iterations(2**22, 1000, 2**28, at_least=20) == 64
    assert timing.capped_iterations(2**30, 1000, 2**28, at_least=20) == 20
    assert timing.capped_iterations(2**30, 5, 2**28, at_least=20) == 5


@pytest.mark.mpi
def test_pingpong_json_keeps_the_samples_intervals_rounds_and_method(tmp_path):
    out = tmp_path / "pp.json"
    run_mpi_ok(2, ["-m", "mpi_exercises", "pingpong", "--sizes", "0,64,1k,16k", "--iterations", "40",
                   "--warmup", "2", "--rounds", "3", "--seed", "5", "--time-budget", "5", "--no-progress",
                   "--json", str(out)])
    data = json.loads(out.read_text())
    assert "half of each round trip" in data["timing_method"] and "separate" in data["timing_method"]
    rounds = data["rounds"]
    assert rounds["seed"] == 5 and data["parameters"]["seed"] == 5 and rounds["rounds"] >= 3
    for order in rounds["order_per_round"]:
        assert sorted(order) == [0, 1, 2, 3]
    for r in data["results"]:
        assert len(r["times_s"]) == r["samples"] >= 40
        lo, hi = r["median_ci_s"]
        assert lo <= r["median_s"] <= hi
    fit = data["fit"]["alpha_beta"]
    assert fit["alpha_ci_s"][0] <= fit["alpha_ci_s"][1] and fit["beta_ci_s_per_byte"][0] <= fit["beta_ci_s_per_byte"][1]
    assert fit["ci_method"].startswith("relative least squares on the per-size minima; 95 % least-squares interval")
    assert fit["alpha_ci_s"][0] < fit["alpha_s"] < fit["alpha_ci_s"][1]
    assert fit["beta_ci_s_per_byte"][0] < fit["beta_s_per_byte"] < fit["beta_ci_s_per_byte"][1]
    assert data["parameters"]["pages"] == "small"
    assert data["environment"]["transparent_huge_pages"] == pages.transparent_huge_pages()


@pytest.mark.mpi
def test_pingpong_on_huge_pages_says_so(tmp_path):
    out = tmp_path / "pp.json"
    res = run_mpi_ok(2, ["-m", "mpi_exercises", "pingpong", "--sizes", "0,64", "--iterations", "20", "--warmup", "2",
                         "--rounds", "2", "--target", "0", "--pages", "huge", "--no-progress", "--json", str(out)])
    assert "huge pages asked for" in res.stdout
    assert json.loads(out.read_text())["parameters"]["pages"] == "huge"


@pytest.mark.mpi
def test_ranks_are_bound_to_a_core_each_unless_asked_not_to(tmp_path, monkeypatch):
    """Each rank of a node gets a core of its own where the node has enough (recorded in the
    placement), and MPI_EXERCISES_PIN=0 leaves them to the scheduler; the recorded core count is
    the machine's, not the one core a bound rank runs on."""
    from mpi_exercises.bench.placement import usable_cores

    out = tmp_path / "pp.json"
    args = ["-m", "mpi_exercises", "pingpong", "--sizes", "0", "--iterations", "20", "--warmup", "2",
            "--rounds", "2", "--target", "0", "--no-progress", "--json", str(out)]
    run_mpi_ok(2, args)
    env = json.loads(out.read_text())["environment"]
    cores = env["placement"]["core_of_rank"]
    assert env["cores"] == usable_cores()
    if usable_cores() >= 2:
        assert None not in cores and len(set(cores)) == 2
    else:
        assert cores == [None, None]
    monkeypatch.setenv("MPI_EXERCISES_PIN", "0")
    run_mpi_ok(2, args)
    assert json.loads(out.read_text())["environment"]["placement"]["core_of_rank"] == [None, None]


def test_a_two_segment_fit_with_a_negative_alpha_is_called_unphysical():
    # the large sizes of a disturbed run: the segment above 64 KiB comes out with alpha < 0
    import numpy as np

    from mpi_exercises.bench import pingpong

    sizes = [0, 64, 1024, 8192, 65536, 262144, 1048576, 4194304]
    t = [1e-6 + 1e-10 * n for n in sizes[:4]] + [-685e-6 + 3e-9 * n for n in sizes[4:]]
    t[4] = 5e-6                         # keep every time positive: only the fit goes negative
    results = [{"bytes": n, "min_s": x, "median_s": x, "median_ci_s": [x, x], "samples": 10,
                "bandwidth_Bps": n / x if n else None} for n, x in zip(sizes, np.abs(t))]
    fitted = pingpong.fit(results)
    above = fitted["piecewise"]["above"]
    assert above["alpha_s"] < 0
    text = pingpong.report(results, fitted)
    assert "WARNING: the segment above the switch: alpha = -" in text and "which no network has" in text
    assert "segment below" not in text


def test_a_size_that_misses_its_precision_by_far_makes_the_run_unreliable():
    """The rule of predict's calibrations (measure.NOISY: five times the default ±2 % target)."""
    rows = [{"bytes": 0, "ci_relative_halfwidth": 0.01}, {"bytes": 1024, "ci_relative_halfwidth": 0.30},
            {"bytes": 2**20, "ci_relative_halfwidth": None}, {"bytes": 8, "ci_relative_halfwidth": 0.11}]
    noise = noise_of(rows)
    assert noise == {"worst": 0.30, "at": "1.0 KiB", "limit": measure.NOISY, "reliable": False,
                     "missed": ["1.0 KiB", "8 B"]}
    assert measure.NOISY == 5 * measure.DEFAULT_TARGET
    assert measure.noise_line(noise) == ("UNRELIABLE: the median of 1.0 KiB, 8 B is known only to ±30% at worst "
                                         "(limit ±10%): the machine was busy; run again when it is quiet, or with "
                                         "a longer --time-budget")
    assert noise_of(rows[:1])["reliable"] and measure.noise_line(noise_of(rows[:1])) is None


# ---------------------------------------------------------------- the fit's 95 % intervals
def _sweep(seed: int, rounds: int = 10, per_round: int = 20) -> list[dict]:
    """A ping-pong's results as the benchmark stores them (``statistics.summarize`` of each size's
    samples, and its samples per round), no MPI: t = 1.2 µs + 0.07 ns/B × n, each sample slowed
    by a burst of its round (× 1 + Exp(5 %)) and noise of its own (× 1 + Exp(10 %)), as load
    from other programs only ever adds time."""
    import numpy as np

    from mpi_exercises.bench import pingpong, statistics

    rng = np.random.default_rng(seed)
    burst = 1 + rng.exponential(0.05, rounds)
    out = []
    for n in pingpong.DEFAULT_SIZES:
        x = (1.2e-6 + 7e-11 * n) * np.repeat(burst, per_round) * (1 + rng.exponential(0.1, rounds * per_round))
        stats = statistics.summarize(x)
        out.append({**stats, "bytes": n, "samples_per_round": [per_round] * rounds,
                    "bandwidth_Bps": n / stats["median_s"] if n else None})
    return out


@pytest.mark.parametrize("seed", range(6))
def test_the_interval_of_a_fit_on_minima_holds_its_estimate_in_its_middle(seed):
    """The one fit of a measured file is on the minima: its 95 % intervals are the least-squares
    ones (estimate ± t(0.975, sizes - 2) × standard error), which hold the estimate in their
    middle and agree with the printed ±.  (A percentile bootstrap of a minimum put the estimate
    on the interval's lower edge or below it: a resampled minimum is never below the sample's.)"""
    import numpy as np

    from mpi_exercises.bench import pingpong

    results = _sweep(seed)
    fitted = pingpong.fit_file({"results": results}, ci=True)
    ab = fitted["alpha_beta"]
    est, lo, hi = least_squares_interval(results)
    for k, (key, ci) in enumerate((("alpha_s", "alpha_ci_s"), ("beta_s_per_byte", "beta_ci_s_per_byte"))):
        assert ab[key] == pytest.approx(est[k], rel=1e-6)
        assert ab[ci] == pytest.approx([lo[k], hi[k]], rel=1e-6), key
        low, high = ab[ci]
        assert low < ab[key] < high
        assert (high - ab[key]) == pytest.approx(ab[key] - low, rel=1e-9), key    # in the middle
    assert "least squares" in ab["ci_method"] and "minima" in ab["ci_method"]
    assert "t(0.975, sizes - 2)" in ab["ci_method"] and "percentile bootstrap over the rounds" not in ab["ci_method"]
    # the printed lines: estimate ± standard error and the interval they make, said in words
    text = pingpong.report(results, fitted)
    err = (hi - est) / _t_quantile(len(results) - 2)
    assert (f"alpha = {est[0] * 1e6:.3f} ± {err[0] * 1e6:.3f} µs  95 % CI [{lo[0] * 1e6:.3f}, {hi[0] * 1e6:.3f}]"
            in text), text
    assert (f"beta  = {est[1] * 1e9:.4f} ± {err[1] * 1e9:.4f} ns/B  95 % CI [{lo[1] * 1e9:.4f}, {hi[1] * 1e9:.4f}]"
            in text), text
    assert (f"95 % CI = estimate ± t(0.975, {len(results) - 2}) × standard error "
            f"(± {_t_quantile(len(results) - 2):.2f} of them)") in text
    assert np.isfinite([low, high]).all()


def _t_quantile(dof):
    from scipy import stats

    return stats.t.ppf(0.975, dof)


def test_a_fit_on_medians_keeps_its_block_bootstrap_over_the_rounds():
    """Medians are not extremes: their interval is still the percentile bootstrap over whole
    rounds (measure.bootstrap_fit, seed 0, 200 replicates), named so in ci_method."""
    import numpy as np

    from mpi_exercises.bench import measure as sampling, pingpong
    from netmodels import fit_alpha_beta

    results = _sweep(3)
    ab = pingpong.fit(results, "median_s", ci=True)["alpha_beta"]
    n = np.array([r["bytes"] for r in results], float)

    def refit(medians):
        g = fit_alpha_beta(n, medians)
        return [g.alpha, g.beta]
    est, lo, hi = sampling.bootstrap_fit([r["times_s"] for r in results], refit, np.median,
                                         per_round=[r["samples_per_round"] for r in results], resamples=200, seed=0)
    assert [ab["alpha_s"], ab["beta_s_per_byte"]] == pytest.approx(est, rel=1e-12)
    assert ab["alpha_ci_s"] == pytest.approx([lo[0], hi[0]], rel=1e-12)
    assert ab["beta_ci_s_per_byte"] == pytest.approx([lo[1], hi[1]], rel=1e-12)
    assert "per-size medians; 95 % percentile bootstrap over the rounds" in ab["ci_method"]
    assert "percentile bootstrap over the rounds" in pingpong.report(results, {"statistic": "median_s",
                                                                              "alpha_beta": ab})
    # without the samples no bootstrap, and no interval
    bare = [{k: v for k, v in r.items() if k != "times_s"} for r in results]
    assert "alpha_ci_s" not in pingpong.fit(bare, "median_s", ci=True)["alpha_beta"]


#: the method the intervals of a fit on minima were recorded with before (a percentile bootstrap)
OLD_MINIMA_METHOD = ("relative least squares on the per-size minima; 95 % percentile bootstrap over the rounds: "
                     "whole rounds drawn with replacement, the same for every size, 200 replicates, seed 0")


def test_a_files_recorded_interval_is_used_only_if_it_is_todays_for_that_fit():
    """file_fit: a file recording this fit and these intervals by today's method says "recorded";
    one of the old bootstrap on minima, one whose numbers were edited, one whose record is
    malformed (a hand-in is hostile) gets them recomputed; two sizes give none."""
    import copy

    from mpi_exercises.bench import pingpong

    results = _sweep(1)
    est, lo, hi = least_squares_interval(results)
    today = {"alpha_s": est[0], "beta_s_per_byte": est[1], "alpha_ci_s": [lo[0], hi[0]],
             "beta_ci_s_per_byte": [lo[1], hi[1]], "ci_method": pingpong.CI_METHODS["min_s"]}
    ab, how = pingpong.file_fit({"results": results, "fit": {"alpha_beta": today}})
    assert how == "recorded" and ab["alpha_ci_s"] == pytest.approx(today["alpha_ci_s"], rel=1e-6)
    old = {**today, "alpha_ci_s": [est[0], est[0] * 1.03], "ci_method": OLD_MINIMA_METHOD}
    edited = {**today, "alpha_ci_s": [est[0] * 0.5, est[0] * 2]}
    bad = [{**today, "alpha_ci_s": "wide"}, {**today, "beta_ci_s_per_byte": [1, 2, 3]}, {**today, "alpha_s": None},
           {**today, "alpha_ci_s": {"lo": 1}}, {**today, "ci_method": ["x"]}, "not a fit", None]
    for record in [old, edited] + bad:
        ab, how = pingpong.file_fit({"results": copy.deepcopy(results), "fit": {"alpha_beta": record}})
        assert how == "recomputed", record
        assert ab["alpha_ci_s"] == pytest.approx([lo[0], hi[0]], rel=1e-6)
        assert ab["beta_ci_s_per_byte"] == pytest.approx([lo[1], hi[1]], rel=1e-6)
        assert ab["alpha_ci_s"][0] < ab["alpha_s"] < ab["alpha_ci_s"][1]
    ab, how = pingpong.file_fit({"results": results[:2]})
    assert how == "none" and "alpha_ci_s" not in ab
    assert "no error estimate" in pingpong.report(results[:2], pingpong.fit_file({"results": results[:2]}, ci=True))
