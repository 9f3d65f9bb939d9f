"""Allgather schedules without MPI: every block delivered exactly once to every rank, shapes of the strategies."""

import numpy as np
import pytest

from netmodels.algorithms import allgather as AG, registry
from netmodels.algorithms.barriers import is_barrier
from netmodels.algorithms.schedule import Schedule, Transfer
from netmodels.algorithms.semantics import allgather_errors


ALGORITHMS = registry.names("allgather", short=True)


def build(algorithm, nprocs, nelems, k=None):
    """The registered allgather ``algorithm`` per transfer (``k=None``: its default, if any)."""
    return registry.get(algorithm, "allgather").build(nprocs, nelems, k=k).to_schedule()


def all_k(algorithm, p):
    if not registry.get(algorithm, "allgather").takes("k"):
        return [None]
    return [None] + [k for k in range(1, p + 1) if algorithm != "k-shift" or k % 2 == 0]


def run_values(schedule):
    """Independent reference: run the schedule on real numbers (the step semantics by hand)."""
    p, n = schedule.nprocs, schedule.nelems
    m = n // p
    x = np.full((p, n), np.nan)
    for r in range(p):
        x[r, r * m:(r + 1) * m] = 1000.0 * r + np.arange(r * m, (r + 1) * m)
    for step in schedule.steps:
        old = x.copy()
        for tr in step:
            x[tr.dst, tr.start:tr.stop] = old[tr.src, tr.start:tr.stop]
    return x


@pytest.mark.parametrize("p", range(1, 18))
def test_every_block_arrives_exactly_once_everywhere(p):
    for algorithm in ALGORITHMS:
        for k in all_k(algorithm, p):
            for m in (0, 2):
                s = build(algorithm, p, m, k)
                assert (s.nprocs, s.nelems) == (p, p * m)
                assert allgather_errors(s) == [], (algorithm, p, k, m)
                assert all(not tr.combine for st in s.steps for tr in st)
                if m:
                    want = 1000.0 * (np.arange(p * m) // m) + np.arange(p * m)
                    np.testing.assert_array_equal(run_values(s), np.tile(want, (p, 1)))


@pytest.mark.parametrize("p", [1, 2, 5, 12, 33])
def test_direct_strategies_send_p_minus_1_own_blocks_per_rank(p):
    for algorithm in ("direct", "prefix", "k-prefix", "k-prefix-lb", "k-shift"):
        for k in all_k(algorithm, p):
            s = build(algorithm, p, 2, k)
            data = [tr for st in s.steps for tr in st if tr.count]
            assert len(data) == p * (p - 1)
            assert all(tr.start == 2 * tr.src for tr in data)           # own block only
            assert len({(tr.src, tr.dst) for tr in data}) == p * (p - 1)


def test_checker_catches_missing_duplicated_and_wrong_blocks():
    s = build("ring", 5, 2)
    assert allgather_errors(Schedule("x", 5, 10, s.steps[:-1]))                       # a step lost
    assert allgather_errors(Schedule("x", 5, 10, s.steps[:1] + s.steps))              # sent twice
    wrong = [tuple(Transfer(t.src, t.dst, (t.start + 2) % 10, 2) if i == 0 else t
                   for i, t in enumerate(st)) for st in s.steps]
    assert allgather_errors(Schedule("x", 5, 10, wrong))                              # block moved
    p = build("prefix", 4, 1)
    extra = Schedule("x", 4, 4, p.steps + [(Transfer(0, 1, 0, 1),)])                   # re-delivered
    assert any("arrived 2 times" in e for e in allgather_errors(extra))
    assert allgather_errors(Schedule("x", 4, 5, []))                                  # 5 % 4 != 0


def test_prefix_steps_are_xor_permutations_and_ring_shifts_by_one():
    s = build("prefix", 8, 1)
    assert s.nsteps == 7
    for j, st in enumerate(s.steps, 1):
        assert sorted((t.src, t.dst) for t in st) == [(i, i ^ j) for i in range(8)]
    s = build("prefix", 6, 1)                                  # XOR space of 8, absent 6 and 7
    assert s.nsteps == 7 and [len(st) for st in s.steps] == [6, 4, 4, 4, 4, 4, 4]
    r = build("ring", 6, 1)
    assert r.nsteps == 5 and all(t.dst == (t.src + 1) % 6 for st in r.steps for t in st)


def test_k_prefix_stage_targets_one_partition_and_k_shift_windows():
    s = build("k-prefix", 16, 1, 4)
    assert s.nsteps == 4
    for stage, st in enumerate(s.steps):
        for t in st:
            assert t.dst // 4 == (t.src // 4 + stage) % 4
    assert AG.shift_offsets(16, 8) == [[13, 14, 15, 1, 2, 3, 4], [5, 6, 7, 8, 9, 10, 11, 12]]
    s = build("k-shift", 16, 1, 8)
    assert [sorted({(t.dst - t.src) % 16 for t in st}) for st in s.steps] == \
        [[1, 2, 3, 4, 13, 14, 15], [5, 6, 7, 8, 9, 10, 11, 12]]


def test_k_prefix_lb_barriers_are_dissemination_barriers_between_stages():
    s = build("k-prefix-lb", 12, 1, 4)
    bars = s.meta["barrier_steps"]
    assert len(bars) == 2 * 4                                     # 2 barriers of ceil(log2 12) rounds
    assert all(tr.count == 0 for t in bars for tr in s.steps[t])
    first = Schedule("b", 12, 0, [s.steps[t] for t in bars[:4]])
    assert is_barrier(first)
    assert [t for t in range(s.nsteps) if t not in bars] == [0, 5, 10]


def test_on_leaves_skips_absent_leaves():
    leaves = [0, 1, 2, 4, 5, 6, 7]                                # leaf 3 missing
    for a in ("direct", "prefix", "k-prefix", "k-prefix-lb", "k-shift"):
        s = AG.on_leaves(a, leaves, 8, 2, 4 if a != "direct" and a != "prefix" else None)
        assert s.nprocs == 7 and allgather_errors(s) == []
    with pytest.raises(ValueError, match="ring"):
        AG.on_leaves("ring", leaves, 8, 1)
    with pytest.raises(ValueError, match="leaves"):
        AG.on_leaves("prefix", [0, 8], 8, 1)


@pytest.mark.parametrize("algorithm, p, k, match", [
    ("ring", 4, 2, "option of"), ("direct", 4, 1, "option of"), ("prefix", 4, 4, "option of"),
    ("k-prefix", 4, 0, "1 <= k"), ("k-prefix", 4, 5, "1 <= k"), ("k-prefix-lb", 4, 2.0, "integer"),
    ("k-prefix", 4, True, "integer"), ("k-shift", 8, 3, "even"), ("k-shift", 8, 10, "1 <= k"),
    ("k-shift", 1, 2, "1 <= k"), ("bruck", 4, None, "one of"),
])
def test_check_k_rejects(algorithm, p, k, match):
    with pytest.raises(ValueError, match=match):
        AG.check_k(algorithm, p, k)
    with pytest.raises(ValueError):
        build(algorithm, p, 1, k)


def test_bad_sizes_rejected():
    with pytest.raises(ValueError, match="nprocs"):
        build("ring", 0, 1)
    with pytest.raises(ValueError, match="nelems"):
        build("ring", 4, -1)
