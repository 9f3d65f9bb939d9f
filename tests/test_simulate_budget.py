"""The simulator's size estimate (netmodels.simulate.budget) against the real schedules, and
``--force``.  The refusals themselves are rows of tests/test_cli_errors.py."""

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
    g = budget.growth(lambda p: registry.build(name, p, n))
    for p in (1500, 2048):
        real = budget._counts(registry.build(name, p, n))
        for est, count, what in zip(g.at(p), real, ("transfers", "steps", "largest step")):
            assert count / 4 <= est <= 4 * count + 2, (p, what, est, count)


def test_force_runs_what_the_limit_refuses(monkeypatch, capsys):
    argv = ["simulate", "allreduce.ring", "-P", "600", "-N", "600", "--model", "alphabeta"]
    monkeypatch.setattr(budget, "MAX_SECONDS", 1e-3)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "the limit is 0 s" in err and "--force" in err and len(err.strip().splitlines()) == 1
    assert main(argv + ["--force"]) == 0
    assert "predicted time" in capsys.readouterr().out
