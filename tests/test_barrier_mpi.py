"""Barrier algorithms under mpiexec: no rank leaves before every rank has entered; and the
two commands of the LogP chapter, barrier-bench and logp.

One mpiexec job runs ``python -m tests.barrier_verify --verify N`` on P = 1..8 ranks in turn
(tests/by_size.py); it loops over every algorithm (and a few option variants): back-to-back barriers with a
random delay before each entry plus one late rank per barrier, entry/exit stamped on
CLOCK_MONOTONIC (one clock for all processes of this host).  A negative control shows
that the check catches a schedule that is not a barrier.  Above 2 ranks this 2-core
machine is oversubscribed: delays are in milliseconds, the counts small.
"""

import json
import sys

import numpy as np
import pytest

from tests.mpirun import ROOT, run_by_size, run_mpi_ok


@pytest.mark.mpi
def test_every_algorithm_is_a_barrier_under_mpi():
    from mpi_exercises.collectives.barrier import choices

    # on 1 to 8 ranks, one job (tests/by_size.py)
    runs = run_by_size(list(range(1, 9)), ["-m", "tests.barrier_verify", "--verify", "12", "--max-delay-ms", "1"],
                       "all barriers correct", timeout=600)
    for nprocs, out in runs.items():   # every algorithm, three of them with two variants, on that many ranks
        assert out.count(f" on {nprocs} ranks\n") == len(choices()) + 3, out


def _driver(mode):
    """Run under mpiexec: ``broken`` (negative control) or ``frontdoor``."""
    from mpi4py import MPI

    import mpi_exercises
    from netmodels.algorithms import barriers
    from netmodels.algorithms.schedule import Schedule
    from mpi_exercises.collectives.barrier import verify

    comm = MPI.COMM_WORLD
    if mode == "broken":
        good = barriers.dissemination(comm.Get_size()).to_schedule()
        broken = Schedule("dissemination-without-last-round", good.nprocs, 0, good.steps[:-1])
        bad = verify(comm, broken, barriers=20, max_delay=2e-3)
        if comm.Get_rank() == 0:
            print(f"violations {len(bad)}")
    else:
        for name in ("dissemination", "butterfly", "mpi"):
            mpi_exercises.barrier(comm, algorithm=name)
        mpi_exercises.barrier(comm, algorithm="combining_tree", fan_in=3)
        for name, options in (("no-such", {}), ("dissemination", {"fan_in": 3})):
            try:
                mpi_exercises.barrier(comm, algorithm=name, **options)
            except ValueError as err:
                if comm.Get_rank() == 0:
                    print("ValueError:", err)


@pytest.mark.mpi
def test_the_mpi_check_catches_a_broken_barrier():
    res = run_mpi_ok(4, [__file__, "broken"], timeout=60)
    n = int(res.stdout.split("violations")[1].split()[0])
    assert n >= 10  # the late rank is seen by fewer than all others in most of the 20


@pytest.mark.mpi
def test_front_door_runs_and_rejects_unknown_algorithms():
    res = run_mpi_ok(3, [__file__, "frontdoor"], timeout=60, sleep_while_waiting=True)
    assert "ValueError: algorithm must be one of" in res.stdout
    assert "ValueError: dissemination takes no options, got ['fan_in']: 'fan_in' is an option of " \
           "combining_tree" in res.stdout


@pytest.mark.mpi
def test_barrier_bench_writes_json_and_ranks_every_algorithm(tmp_path):
    out = tmp_path / "b.json"
    res = run_mpi_ok(2, ["-m", "mpi_exercises", "barrier-bench", "--repetitions", "5", "--inner", "5",
                         "--warmup", "2", "--target", "0", "--no-progress", "--json", str(out)], timeout=90)
    data = json.loads(out.read_text())
    names = [r["algorithm"] for r in data["results"]]
    assert sorted(names) == sorted(["central_counter", "combining_tree", "tournament", "dissemination",
                                    "binomial", "nway_dissemination", "butterfly", "pairwise_exchange",
                                    "mpi"])
    for r in data["results"]:
        assert 0 < r["min_s"] <= r["median_s"] <= r["max_s"]
        assert len(r["times_s"]) == r["samples"] >= 5
        assert r["median_ci_s"][0] <= r["median_s"] <= r["median_ci_s"][1]
    assert "tight loop" in data["timing_method"] and "timing: barrier-bench: a tight loop" in res.stdout
    assert sorted(data["rounds"]["order_per_round"][0]) == list(range(9))
    assert "dissemination" in res.stdout and data["environment"]["ranks"] == 2


@pytest.mark.mpi
def test_logp_command_writes_raw_prtt_data_and_a_loggp_fit(tmp_path):
    out = tmp_path / "logp.json"
    res = run_mpi_ok(2, ["-m", "mpi_exercises", "logp", "--sizes", "0,64,1k", "--repetitions", "20",
                         "--warmup", "2", "--n", "4", "--time-budget", "2", "--no-progress", "--json", str(out)],
                     timeout=90)
    assert "LogGP (Netgauge PRTT method" in res.stdout
    data = json.loads(out.read_text())
    assert [r["bytes"] for r in data["results"]] == [0, 64, 1024]
    for r in data["results"]:
        assert r["d_s"] > 0
        for key in ("prtt_1_0", "prtt_n_0", "prtt_n_d", "o_r", "o_s_direct"):
            # 20 in the first rounds, more where the median's interval was still wide
            assert r[key]["samples"] >= 20 and 0 < r[key]["min_s"] <= r[key]["median_s"]
            assert len(r[key]["times_s"]) == r[key]["samples"]
            assert r[key]["median_ci_s"][0] <= r[key]["median_s"] <= r[key]["median_ci_s"][1]
    assert {p["stopped_by"] for p in data["rounds"].values()} <= {"ci", "time budget", "repetition cap"}
    assert "separate send and receive buffers" in data["timing_method"]
    for fit in (data["fit"], data["fit_min"]):
        assert fit["n"] == 4 and len(fit["o_s_by_size_s"]) == 3
        assert all(np.isfinite(fit[k]) for k in ("L_s", "o_s_s", "o_r_s", "g_upper_s"))
        if fit["g_identified"]:  # else JSON null: the gap measured o_s at (nearly) every size
            assert np.isfinite(fit["g_s"]) and np.isfinite(fit["G_s_per_byte"])
        else:
            assert fit["g_s"] is None and fit["G_s_per_byte"] is None
    assert ("  g   = not identifiable" in res.stdout) != data["fit"]["g_identified"]
    for fit in (data["fit"], data["fit_min"]):  # a negative L is caught: constrained to 0, flagged
        assert fit["L_s"] == max(fit["L_unconstrained_s"], 0.0) >= 0
        assert fit["L_identified"] == (fit["L_unconstrained_s"] >= 0)
    assert ("L   = not identifiable" in res.stdout) != data["fit"]["L_identified"]
    for fit in (data["fit"], data["fit_min"]):  # what the medians outweighed is named, if anything
        assert all(o["bytes"] in (0, 64) and o["parameter"] in ("o_s", "o_r", "L") for o in fit["outliers"])
        assert len(fit["left_out"]) >= len(fit["outliers"])
    assert ("left out by the medians" in res.stdout) == bool(data["fit"]["outliers"])


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    _driver(sys.argv[1])
