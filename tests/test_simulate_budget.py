"""The simulator's size estimate (netmodels.simulate.budget) against the real schedules, and
``--force``.  The refusals themselves are rows of tests/test_netmodels_cli_errors.py."""

import pytest

from netmodels.__main__ import main
from netmodels.algorithms import registry
from netmodels.simulate import budget


@pytest.mark.parametrize("name", [n for n in registry.names() if n != "alltoall.multilevel"])
def test_the_extrapolated_counts_bracket_the_real_ones(name):
    """From builds at 128 and 256 ranks to 2048 (and 1500, not a power of two): every count
    within a factor of 4 of the schedule's own (the pipelined mesh algorithms, whose number
    of blocks changes with P, are the worst; most are within 10 %)."""
    n = 0 if name.startswith("barrier.") else 64
    g = budget.growth(lambda p, m: registry.build(name, p, m), n)
    for p in (1500, 2048):
        real = budget._counts(registry.build(name, p, n))
        for est, count, what in zip(g.at(p), real, budget.COUNTS):
            assert count / 4 <= est <= 4 * count + 2, (p, what, est, count)


@pytest.mark.parametrize("name, n, closed_form", [
    ("allreduce.ring", 1, lambda p: 2 * p * (p - 1)),            # P blocks per step, 2(P - 1) steps
    ("broadcast.two_phase", 1, lambda p: (p - 1) + p * (p - 1)),  # scatter, then every block to P - 1 ranks
])
def test_the_candidates_of_a_short_vector_are_those_of_a_full_one(name, n, closed_form):
    """With one element the schedules hold O(P) transfers, but their builders walk O(P^2)
    candidates: the estimate counts those (within 4x of the closed form at 2048 ranks)."""
    g = budget.growth(lambda p, m: registry.build(name, p, m), n)
    transfers, _, _, candidates, _ = g.at(2048)
    assert closed_form(2048) / 4 <= candidates <= 4 * closed_form(2048)
    assert transfers < candidates / 100


def test_force_runs_a_case_just_over_the_limit(monkeypatch, capsys):
    """The limit lowered to 90 % of the estimate of a small run: refused, then run with --force."""
    argv = ["simulate", "allreduce.ring", "-P", "600", "-N", "600", "--model", "alpha-beta"]
    g = budget.growth(lambda p, m: registry.build("allreduce.ring", p, m), 600)
    seconds, _ = g.cost(600)
    monkeypatch.setattr(budget, "MAX_SECONDS", 0.9 * seconds)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"the limit is {0.9 * seconds:.3g} s" in err and "--force runs it anyway" in err
    assert len(err.strip().splitlines()) == 1
    assert main(argv + ["--force"]) == 0
    assert "predicted time" in capsys.readouterr().out
    monkeypatch.setattr(budget, "MAX_SECONDS", 1.1 * seconds)      # just under: runs without --force
    assert main(argv) == 0
