"""The verdict of ``benchmarks/collectives_vs_mpi.py --rev``: a row is slower only when this tree
was slower in nearly every round, the rounds paired (no MPI)."""

from __future__ import annotations

import sys

import numpy as np

from mpi_exercises.bench.statistics import summarize
from tests.mpirun import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
from collectives_vs_mpi import PAIRED_ROUNDS, same_run  # noqa: E402

TAG = "@old"


def row(algorithm, rounds):
    """A result of ``measure.compare``: its samples taken round after round."""
    times = np.concatenate(rounds)
    return {"nelems": 1, "algorithm": algorithm, "mode": "default", **summarize(times),
            "samples_per_round": [len(r) for r in rounds]}


def verdict(now_rounds, old_rounds):
    (r,) = same_run([row("ring", now_rounds), row("ring" + TAG, old_rounds)], "allreduce", TAG)
    return r


def test_slower_in_every_round_is_slower():
    rng = np.random.default_rng(1)
    old = [1e-6 * (1 + 0.01 * rng.random(20)) for _ in range(10)]
    r = verdict([1.05 * t for t in old], old)
    assert r["slower"] and r["rounds_paired"] == 10 and r["interval"][0] > 1
    assert np.isclose(r["round_ratio_median"], 1.05)


def test_a_machine_that_drifts_between_rounds_is_no_verdict():
    """Same code, a machine that drifts: each round both copies take what that round's state
    costs, and the copy that happens to be timed in the slow rounds more often is not slower.
    The samples pooled would call it slower: their medians' intervals do not overlap."""
    rng = np.random.default_rng(2)
    state = [1.0, 1.0, 1.3, 1.0, 1.3, 1.3, 1.0, 1.3, 1.0, 1.3]
    now = [1e-6 * s * (1 + 0.01 * rng.random(30 if s > 1 else 10)) for s in state]
    old = [1e-6 * s * (1 + 0.01 * rng.random(10 if s > 1 else 30)) for s in state]
    r = verdict(now, old)
    pooled_now, pooled_old = row("a", now)["median_ci_s"], row("b", old)["median_ci_s"]
    assert pooled_now[0] > pooled_old[1]                     # what the pooled intervals said
    assert not r["slower"] and r["interval"][0] < 1 < r["interval"][1]


def test_too_few_rounds_give_no_verdict():
    old = [np.full(10, 1e-6) for _ in range(PAIRED_ROUNDS - 1)]
    r = verdict([2 * t for t in old], old)
    assert r["rounds_paired"] == PAIRED_ROUNDS - 1 and not r["slower"]


def test_a_round_without_samples_of_one_copy_is_not_paired():
    old = [np.full(10, 1e-6) for _ in range(8)]
    now = [1.1 * t for t in old]
    now[3] = np.empty(0)
    r = verdict(now, old)
    assert r["rounds_paired"] == 7 and r["slower"]
