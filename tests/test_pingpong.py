"""The ping-pong benchmark under mpiexec (timeouts turn a deadlock into a failure)."""

import json

import pytest

from mpi_exercises.bench import measure, records, timing
from mpi_exercises.bench.pingpong import noise_of
from mpi_exercises import pages
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
    assert "bootstrap" in fit["ci_method"]
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
