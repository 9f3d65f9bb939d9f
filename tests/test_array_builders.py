"""The builders in array form: a broadcast only forwards what it holds; columns shared; 2^20 ranks."""

import pytest

from netmodels.algorithms import barriers, broadcast, combining


@pytest.mark.parametrize("p", [1, 2, 3, 5, 8, 13, 16])
def test_broadcast_reaches_every_rank_from_one_holder(p):
    """Knowledge propagation: a rank sends only what it already holds, and all end with it."""
    for root in range(p):
        s = broadcast.binomial(p, 4, root).to_schedule()
        assert s.nsteps == barriers.ceil_log(2, p)
        have = {root}
        for step in s.steps:
            assert {tr.src for tr in step} <= have
            assert len({tr.src for tr in step}) == len(step)      # one send per rank and step
            have |= {tr.dst for tr in step}
        assert have == set(range(p))


def test_ring_steps_share_their_columns():
    """2(P - 1) steps of P transfers in O(P) memory: every column is a view."""
    a = combining.ring(512, 512 * 3)
    assert a.nsteps == 2 * 511
    assert all(s.start.base is not None and s.count.base is not None for s in a.steps)
    assert len({id(s.src) for s in a.steps}) == 1


def test_large_builders_are_fast():
    p = 1 << 20
    a = barriers.dissemination(p)
    assert a.nsteps == 20 and a.ntransfers == 20 * p
    b = combining.rabenseifner(p + 3, 10 * p)
    assert b.nsteps == 2 * 20 + 2
