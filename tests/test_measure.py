"""The measurement core's pure parts, without MPI: the order of the cases over rounds, the
stopping rule, the rounds driver on a one-rank stand-in communicator, the bootstrap of a
fit, and the statistics every benchmark stores."""

import numpy as np
import pytest

from mpi_exercises.bench import statistics, timing, pingpong
from mpi_exercises.bench import measure as sampling


class OneRank:
    """The two calls :func:`sampling.interleaved_rounds` makes of a communicator, for one rank."""

    def Get_rank(self):
        return 0

    def bcast(self, value, root=0):
        return value


def test_each_round_visits_every_case_once_in_an_order_that_changes_and_is_reproducible():
    orders = sampling.round_orders(12, 6, seed=7)
    assert len(orders) == 6
    for order in orders:
        assert sorted(order) == list(range(12))
    assert len({tuple(o) for o in orders}) == 6                 # 12! orders: no two rounds alike
    assert sampling.round_orders(12, 6, seed=7) == orders
    assert sampling.round_orders(12, 6, seed=8) != orders


def test_repetitions_are_split_over_the_rounds_without_loss():
    assert sampling.split_repetitions(10, 4) == [3, 3, 2, 2]
    assert sampling.split_repetitions(1000, 4) == [250] * 4


def _noisy(rng, n, spread):
    return 1e-6 * np.exp(rng.normal(0, spread, n))


def test_the_stopping_rule_stops_when_the_interval_is_narrow():
    rng = np.random.default_rng(1)
    narrow = [_noisy(rng, 400, 0.01) for _ in range(3)]       # CI half-width ~0.1 %
    assert sampling.stop_reason(narrow, 0.02, elapsed_s=0.0, time_budget_s=10) == "ci"


def test_the_stopping_rule_goes_on_while_an_interval_is_wide_and_stops_when_the_budget_is_spent():
    rng = np.random.default_rng(2)
    mixed = [_noisy(rng, 400, 0.01), _noisy(rng, 20, 1.0)]    # the second: CI half-width ~50 %
    assert sampling.relative_halfwidth(mixed[1]) > 0.2
    assert sampling.stop_reason(mixed, 0.02, elapsed_s=1.0, time_budget_s=10) is None
    assert sampling.stop_reason(mixed, 0.02, elapsed_s=10.0, time_budget_s=10) == "time budget"
    assert sampling.stop_reason(mixed, None, elapsed_s=0.0, time_budget_s=10) == "fixed"


def _driver(spreads, **options):
    """interleaved_rounds on one rank; case k draws lognormal samples of spread spreads[k]."""
    rng = np.random.default_rng(3)
    calls = []

    def run(case, reps):
        calls.append((case, reps))
        return _noisy(rng, reps, spreads[case])
    samples, info = sampling.interleaved_rounds(OneRank(), list(range(len(spreads))), run, lambda c: 40,
                                                **options)
    return samples, info, calls


def test_without_a_target_each_case_gets_its_first_pass_in_the_recorded_orders():
    samples, info, calls = _driver([0.01, 0.5, 0.1], rounds=4, seed=11)
    assert [s.size for s in samples.values()] == [40, 40, 40]
    assert info["stopped_by"] == "fixed" and info["rounds"] == 4 and info["seed"] == 11
    assert info["order_per_round"] == sampling.round_orders(3, 4, seed=11)
    assert [c for c, _ in calls] == [k for order in info["order_per_round"] for k in order]


def test_rounds_are_added_to_the_wide_cases_until_the_interval_is_narrow():
    samples, info, calls = _driver([0.005, 0.2], rounds=2, seed=0, target=0.02, time_budget_s=60)
    assert info["stopped_by"] == "ci" and info["rounds"] > 2
    assert samples[0].size == 40                                # narrow at once: never extended
    assert samples[1].size > 40
    assert all(sampling.relative_halfwidth(s) <= 0.02 for s in samples.values())
    assert info["order_per_round"] == sampling.round_orders(2, info["rounds"], seed=0)


def test_rounds_stop_when_the_time_budget_is_spent():
    samples, info, _ = _driver([0.005, 2.0], rounds=2, target=0.001, time_budget_s=0.0)
    assert info["stopped_by"] == "time budget" and info["rounds"] == 2
    assert samples[1].size == 40


ALPHA, BETA = 2e-6, 1e-10
SIZES = np.array([0, 64, 1024, 8192, 65536, 262144, 1048576], dtype=float)


def _refit(stats):
    from netmodels import fit_alpha_beta

    f = fit_alpha_beta(SIZES, stats)
    return [f.alpha, f.beta]


@pytest.mark.parametrize("by_round", [False, True])
def test_the_bootstrap_interval_of_alpha_and_beta_covers_the_true_values(by_round):
    """Synthetic ping-pongs t = α + β n with independent multiplicative noise of median 1, in
    10 rounds of 10 samples: the 95 % intervals must cover the true α and β in most data
    sets, and be narrow."""
    covered, widths = np.zeros(2), []
    trials = 20
    for seed in range(trials):
        rng = np.random.default_rng(100 + seed)
        groups = [(ALPHA + BETA * m) * np.exp(rng.normal(0, 0.1, 100)) for m in SIZES]
        est, lo, hi = sampling.bootstrap_fit(groups, _refit, resamples=200, seed=seed,
                                             per_round=[[10] * 10] * len(SIZES) if by_round else None)
        covered += (lo <= [ALPHA, BETA]) & ([ALPHA, BETA] <= hi)
        widths.append((hi - lo) / [ALPHA, BETA])
    assert (covered >= 0.8 * trials).all(), covered
    assert (np.median(widths, axis=0) < 0.1).all()             # not a vacuous interval


@pytest.mark.parametrize("extreme", [np.min, np.max, min])
def test_the_bootstrap_refuses_an_extreme_for_which_it_fails(extreme):
    """Every resampled minimum is at or above the sample's: the replicates of a fit on minima all
    lie on one side of its estimate, which the percentile interval then leaves at its edge."""
    rng = np.random.default_rng(9)
    groups = [(ALPHA + BETA * m) * (1 + rng.exponential(0.1, 100)) for m in SIZES]
    with pytest.raises(ValueError, match="statistic must not be an extreme"):
        sampling.bootstrap_fit(groups, _refit, extreme, per_round=[[10] * 10] * len(SIZES))


def test_a_burst_that_slows_whole_rounds_widens_the_interval_drawn_by_round():
    """Three rounds in ten run 30 % slower at every size (load from another job): samples drawn
    one by one hide it, whole rounds drawn show it."""
    rng = np.random.default_rng(5)
    slow = np.repeat(np.where(np.isin(np.arange(10), [2, 5, 6]), 1.3, 1.0), 10)
    groups = [(ALPHA + BETA * m) * slow * np.exp(rng.normal(0, 0.02, 100)) for m in SIZES]
    _, lo_iid, hi_iid = sampling.bootstrap_fit(groups, _refit, seed=1)
    _, lo_round, hi_round = sampling.bootstrap_fit(groups, _refit, seed=1, per_round=[[10] * 10] * len(SIZES))
    assert ((hi_round - lo_round) > 3 * (hi_iid - lo_iid)).all()


def test_the_summary_keeps_every_sample_and_an_ordered_interval():
    x = np.random.default_rng(4).exponential(1e-6, 101)
    s = statistics.summarize(x)
    assert np.allclose(s["times_s"], x, rtol=0, atol=1e-12) and s["samples"] == 101
    lo, hi = s["median_ci_s"]
    assert lo <= s["median_s"] <= hi
    assert (lo, hi) == statistics.median_ci(x)[1:]


def test_the_ping_pong_sends_and_receives_from_separate_buffers():
    send, recv = pingpong.buffers(4096)
    assert send.nbytes == recv.nbytes == 4096
    assert not np.shares_memory(send, recv)


def test_every_page_of_the_ping_pong_buffers_is_written():
    """No page is left as the kernel's shared zero page (np.zeros of a large array is), which
    a send would read from cache at every round trip and flatter large messages."""
    for buf in pingpong.buffers(3 * 4096 + 100):
        pages = np.array_split(buf, np.arange(4096, buf.size, 4096))
        assert all(page.any() for page in pages)


def test_the_collective_timing_method_says_whether_the_barrier_skew_is_charged():
    assert "includes" in timing.loop_method(1)
    assert "10 calls" in timing.loop_method(10)


@pytest.mark.parametrize("bad", ["1", "-0.1", "x"])
def test_the_target_option_is_a_fraction(bad):
    import argparse

    p = argparse.ArgumentParser()
    sampling.add_options(p)
    with pytest.raises(SystemExit):
        p.parse_args(["--target", bad])


def test_a_late_round_is_cut_to_the_time_left():
    assert sampling.fit_to_budget([100, 0, 50], [1e-3, 1e-3, 2e-3], remaining_s=1.0) == [100, 0, 50]
    cut = sampling.fit_to_budget([100, 0, 50], [1e-3, 1e-3, 2e-3], remaining_s=0.1)   # 0.2 s asked
    assert cut == [50, 0, 25]
    assert sampling.fit_to_budget([100, 0, 50], [1e-3, 1e-3, 2e-3], remaining_s=-1.0) == [1, 0, 1]


def _run_json(path, alpha, beta, wiggle=0.0):
    """A ping-pong JSON whose minima lie on t = alpha + beta n (each size's time times 1 ± ``wiggle``,
    alternately), and whose recorded fit is an earlier kit's: the medians' (20 % slower), with
    the old percentile bootstrap interval, the estimate on its lower edge."""
    import json

    sizes = [0, 64, 1024, 8192, 65536, 262144, 1048576]
    t = [(alpha + beta * n) * (1 + wiggle * (-1) ** k) for k, n in enumerate(sizes)]
    path.write_text(json.dumps({"environment": {"date": "2026-11-25T00:00:00+00:00"}, "load_average_1min": 0.1,
                                "oversubscribed": False,
                                "results": [{"bytes": n, "min_s": x, "median_s": 1.2 * x} for n, x in zip(sizes, t)],
                                "fit": {"alpha_beta": {"alpha_s": 1.2 * alpha, "beta_s_per_byte": 1.2 * beta,
                                                       "alpha_ci_s": [1.2 * alpha, 1.25 * alpha],
                                                       "beta_ci_s_per_byte": [1.2 * beta, 1.25 * beta],
                                                       "ci_method": "relative least squares on the per-size "
                                                                    "minima; 95 % percentile bootstrap over the "
                                                                    "rounds: whole rounds drawn with replacement, "
                                                                    "the same for every size, 200 replicates, seed 0"
                                                       }}}))
    return str(path)


def test_two_runs_agree_within_the_tolerance_or_are_told_apart(tmp_path):
    import re
    import subprocess
    import sys

    from tests.mpirun import ROOT

    table = pingpong.agreement([{"alpha_s": 2.0e-6, "beta_s_per_byte": 1e-10},
                                {"alpha_s": 2.1e-6, "beta_s_per_byte": 1e-10}])
    assert table["alpha_s"]["spread"] == pytest.approx(0.05) and table["beta_s_per_byte"]["spread"] == 0
    a = _run_json(tmp_path / "a.json", 2.0e-6, 1.00e-10)
    b = _run_json(tmp_path / "b.json", 2.04e-6, 1.03e-10)
    c = _run_json(tmp_path / "c.json", 2.0e-6, 1.20e-10)
    script = [sys.executable, str(ROOT / "benchmarks" / "pingpong_agreement.py")]
    same = subprocess.run([*script, a, b], capture_output=True, text=True, timeout=60)
    assert same.returncode == 0 and "alpha: runs differ by up to 2.0 % (within 5 %)" in same.stdout
    apart = subprocess.run([*script, a, b, c], capture_output=True, text=True, timeout=60)
    assert apart.returncode == 1 and "beta: runs differ by up to 20.0 % (MORE than 5 %)" in apart.stdout
    # each run's alpha and beta are the kit's fit of its minima, not an earlier kit's record, and
    # their intervals (least squares) hold them in their middle
    noisy = _run_json(tmp_path / "d.json", 2.0e-6, 1.00e-10, wiggle=0.03)
    shown = subprocess.run([*script, a, noisy], capture_output=True, text=True, timeout=60)
    line = next(x for x in shown.stdout.splitlines() if x.startswith(noisy))
    assert "fitted again from its results" in line and "least squares on the minima" in shown.stdout
    alpha, lo, hi = (float(x) for x in re.search(r"alpha ([0-9.]+) µs \[([0-9.]+), ([0-9.]+)\]", line).groups())
    assert lo < alpha < hi and alpha - lo == pytest.approx(hi - alpha, abs=2e-3)
    assert alpha == pytest.approx(2.0, rel=0.05) and f"alpha {2.0:.3f} µs [2.000, 2.000]" in shown.stdout


def test_a_progress_bar_is_tqdms_where_shown_and_imports_nothing_elsewhere():
    # a rank that shows no bar (not rank 0, or --no-progress) runs the rounds without importing
    # tqdm; where shown, the bar is tqdm's (stderr is no terminal here, so tqdm keeps it
    # silent)
    code = """
import sys
from mpi_exercises.bench import measure
from tests.test_measure import OneRank
for show in (False, True):
    samples, info = measure.interleaved_rounds(OneRank(), ["a", "b"], lambda c, n: [1e-6] * n, lambda c: 4,
                                               rounds=3, target=0, progress=show)
    print(show, "tqdm" in sys.modules, info["rounds"], len(samples["a"]))
"""
    import subprocess
    import sys
    from pathlib import Path

    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=Path(__file__).resolve().parents[1])
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", "False", "3", "4", "True", "True", "3", "4"], res.stdout
    from mpi_exercises.bench.records import progress

    assert list(progress(range(3), show=False)) == [0, 1, 2]
    bar = progress(range(3), show=True, desc="x")
    assert type(bar).__name__ == "tqdm" and list(bar) == [0, 1, 2] and bar.disable


def test_samples_are_taken_with_the_garbage_collector_paused_and_it_is_on_again_after():
    # a collection inside a timed region would be timed as communication: every run() of the
    # rounds sees the collector off, and it is on again afterwards, after an error too;
    # one that was off stays off
    import gc

    seen = []

    def run(case, reps):
        seen.append(gc.isenabled())
        return [1e-6] * reps

    assert gc.isenabled()
    sampling.interleaved_rounds(OneRank(), ["a", "b"], run, lambda c: 4, rounds=2, target=0)
    assert seen and not any(seen) and gc.isenabled()

    def fails(case, reps):
        raise RuntimeError("a failing sample")

    with pytest.raises(RuntimeError):
        sampling.interleaved_rounds(OneRank(), ["a"], fails, lambda c: 1, rounds=1)
    assert gc.isenabled()
    gc.disable()
    try:
        with timing.collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
