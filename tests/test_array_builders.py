"""Array builders against ArraySchedule.from_schedule of their per-transfer twins, P = 1..70."""

import numpy as np
import pytest

from netmodels.algorithms import arrays, barriers, broadcast, combining
from netmodels.algorithms.arrays import ArraySchedule
from netmodels.algorithms.semantics import combining_errors

COLUMNS = ("src", "dst", "start", "count", "combine")


def assert_same(a: ArraySchedule, b: ArraySchedule):
    assert (a.name, a.nprocs, a.nelems, a.meta) == (b.name, b.nprocs, b.nelems, b.meta)
    assert a.nsteps == b.nsteps
    for t, (x, y) in enumerate(zip(a.steps, b.steps)):
        for c in COLUMNS:
            u, v = getattr(x, c), getattr(y, c)
            assert u.dtype == v.dtype and np.array_equal(u, v), f"step {t}, column {c}"


@pytest.mark.parametrize("p", range(1, 71))
def test_combining(p):
    for n in sorted({0, 1, p, 3 * p + 1}):
        for algorithm in combining.ARRAY_BUILDERS:
            assert_same(combining.build_arrays(algorithm, p, n),
                        ArraySchedule.from_schedule(combining.build(algorithm, p, n)))
            assert_same(combining.ARRAY_BUILDERS[algorithm](p, n),
                        ArraySchedule.from_schedule(getattr(combining, algorithm)(p, n)))


@pytest.mark.parametrize("p", range(1, 71))
def test_barriers(p):
    for algorithm in barriers.ARRAY_BUILDERS:
        assert_same(barriers.build_arrays(algorithm, p), ArraySchedule.from_schedule(barriers.build(algorithm, p)))
    for n in (1, 2, 3, 6):
        assert_same(barriers.build_arrays("nway_dissemination", p, n=n),
                    ArraySchedule.from_schedule(barriers.nway_dissemination(p, n)))
    assert_same(barriers.build_arrays("tournament", p, release="flat"),
                ArraySchedule.from_schedule(barriers.tournament(p, "flat")))


@pytest.mark.parametrize("p", range(1, 71))
def test_broadcast(p):
    for n in (0, 1, 9):
        for root in sorted({0, p // 2, p - 1}):
            assert_same(broadcast.binomial_arrays(p, n, root),
                        ArraySchedule.from_schedule(broadcast.binomial(p, n, root)))


@pytest.mark.parametrize("p", [1, 2, 3, 5, 8, 13, 16])
def test_broadcast_reaches_every_rank_from_one_holder(p):
    """Knowledge propagation: a rank sends only what it already holds, and all end with it."""
    for root in range(p):
        s = broadcast.binomial(p, 4, root)
        assert s.nsteps == barriers.ceil_log(2, p)
        have = {root}
        for step in s.steps:
            assert {tr.src for tr in step} <= have
            assert len({tr.src for tr in step}) == len(step)      # one send per rank and step
            have |= {tr.dst for tr in step}
        assert have == set(range(p))


@pytest.mark.parametrize("p", [1, 3, 6, 8])
def test_array_allreduce_builders_are_allreduces(p):
    for algorithm in combining.ARRAY_BUILDERS:
        assert combining_errors(arrays.build("allreduce." + algorithm, p, 2 * p + 1).to_schedule()) == []


def test_registry_resolves_names_and_refuses_bad_ones():
    reg = arrays.builders()
    assert {"allreduce.ring", "barrier.dissemination", "broadcast.binomial"} <= set(reg)
    assert arrays.resolve("dissemination") == "barrier.dissemination"
    assert arrays.resolve("allreduce.binomial") == "allreduce.binomial"
    with pytest.raises(ValueError, match="ambiguous"):
        arrays.resolve("binomial")
    with pytest.raises(ValueError, match="must be one of"):
        arrays.resolve("nonesuch")
    with pytest.raises(ValueError, match="nelems must be 0"):
        arrays.build("dissemination", 4, 3)
    with pytest.raises(ValueError, match="takes"):
        arrays.build("dissemination", 4, n=3)
    with pytest.raises(ValueError, match="root"):
        broadcast.binomial_arrays(4, 1, root=4)


def test_ring_steps_share_their_columns():
    """2(P - 1) steps of P transfers in O(P) memory: every column is a view."""
    a = combining.ring_arrays(512, 512 * 3)
    assert a.nsteps == 2 * 511
    assert all(s.start.base is not None and s.count.base is not None for s in a.steps)
    assert len({id(s.src) for s in a.steps}) == 1


def test_large_builders_are_fast():
    p = 1 << 20
    a = barriers.dissemination_arrays(p)
    assert a.nsteps == 20 and a.ntransfers == 20 * p
    b = combining.rabenseifner_arrays(p + 3, 10 * p)
    assert b.nsteps == 2 * 20 + 2
