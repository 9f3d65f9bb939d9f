"""Alltoall schedules: every row reaches its place exactly once; message counts against the
closed forms and the LS-DYNA paper's 4 x 4 example."""

import itertools

import numpy as np
import pytest

from netmodels.algorithms import alltoall, registry
from netmodels.algorithms.arrays import ArraySchedule
from netmodels.models import machines

ALGORITHMS = registry.names("alltoall", short=True)


def build(algorithm, nprocs, nelems, nodes=None):
    """The registered alltoall ``algorithm`` per transfer."""
    return registry.get(algorithm, "alltoall").build(nprocs, nelems, nodes=nodes).to_schedule()


def hierarchies(p):
    """Node descriptions worth trying on ``p`` ranks."""
    out = [None, 1, 2, 3, p, (2, 2), (3, 2), (2, 1, 2), (1, 3)]
    rng = np.random.default_rng(p)
    out += [rng.integers(0, 3, p).tolist() for _ in range(2)]
    out.append([r % 2 for r in range(p)])                          # interleaved nodes
    return out


def run_on_data(schedule, send):
    """Execute ``schedule`` on ``send[i, j]`` (the row rank i has for rank j), with numpy.

    An executor written from the step semantics only: values read at the start of the
    step, applied in step order at the receive offset.  Returns ``recv[j, i]``.
    """
    p, m = schedule.nprocs, schedule.meta["nelems_per_pair"]
    send_off, recv_off = alltoall.layout(schedule)
    vec = np.full((p, schedule.nelems), np.nan)
    for r, j in itertools.product(range(p), repeat=2):
        vec[r, send_off[r, j]:send_off[r, j] + m] = send[r, j]
    for step in schedule.steps:
        data = [vec[t.src, t.start:t.start + t.count].copy() for t in step]
        for t, d in zip(step, data):
            at = t.start if t.dst_start is None else t.dst_start
            vec[t.dst, at:at + t.count] = d
    recv = np.empty_like(send)
    for j, i in itertools.product(range(p), repeat=2):
        recv[j, i] = vec[j, recv_off[j, i]:recv_off[j, i] + m]
    return recv


@pytest.mark.parametrize("p", range(1, 10))
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_row_arrives_once_at_its_place(p, algorithm):
    for nodes in hierarchies(p):
        for m in (1, 3):
            s = build(algorithm, p, m, nodes)
            assert alltoall.delivery_errors(s) == [], (nodes, m)
            send = np.random.default_rng(0).random((p, p, m))
            recv = run_on_data(s, send)
            np.testing.assert_array_equal(recv, send.transpose(1, 0, 2))
            assert ArraySchedule.from_schedule(s).to_schedule() == s


def test_the_checker_can_fail():
    s = build("multilevel", 6, 2, 3)
    dropped = build("multilevel", 6, 2, 3)
    dropped.steps[-1] = dropped.steps[-1][1:]
    assert alltoall.delivery_errors(dropped)
    doubled = build("direct", 4, 1)
    doubled.steps.append(doubled.steps[0][:1])
    assert any("2 times" in e for e in alltoall.delivery_errors(doubled))
    assert alltoall.delivery_errors(s) == []


def test_paper_example_4_nodes_of_4():
    ex = machines.LSDYNA_MULTILEVEL_EXAMPLE
    p = ex["nodes"] * ex["ppn"]
    for algorithm, key in (("direct", "standard"), ("pairwise", "standard"), ("multilevel", "multilevel")):
        counts = alltoall.message_counts(build(algorithm, p, 1, ex["ppn"]))
        assert counts == {1: ex[key]["inside"], 2: ex[key]["between"]}
        assert sum(counts.values()) == ex[key]["total"]
    assert sum(ex["multilevel"]["printed_terms"].values()) == ex["multilevel"]["total"]


@pytest.mark.parametrize("sizes", [(4, 4), (8, 8), (1, 5), (5, 1), (3, 2), (2, 2, 2), (2, 3, 4),
                                   (4, 4, 2), (3, 1, 2), (2, 2, 2, 2)])
def test_closed_forms_equal_the_schedules(sizes):
    p = int(np.prod(sizes))
    for algorithm in ALGORITHMS:
        s = build(algorithm, p, 1, tuple(sizes[:-1]))
        assert alltoall.message_counts(s) == alltoall.counts_closed(algorithm, sizes)


def test_two_level_closed_form_by_hand():
    # n nodes of c: standard n c (c-1) inside, n (n-1) c^2 between; multilevel
    # n c (c-1) + 2 n (n-1)(c-1) inside, n (n-1) between
    for n, c in itertools.product(range(1, 7), repeat=2):
        assert alltoall.counts_closed("direct", (c, n)) == {1: n * c * (c - 1), 2: n * (n - 1) * c * c}
        assert alltoall.counts_closed("multilevel", (c, n)) == {
            1: n * c * (c - 1) + 2 * n * (n - 1) * (c - 1), 2: n * (n - 1)}


def test_uneven_nodes_count_per_pair():
    # nodes of sizes 3, 3, 1 (ppn=3 on 7 ranks): each ordered node pair (a, b) costs
    # c_a + c_b - 1 messages, one of them between nodes
    sizes = [3, 3, 1]
    s = build("multilevel", 7, 1, 3)
    between = len(sizes) * (len(sizes) - 1)
    inside = sum(c * (c - 1) for c in sizes) + sum(a + b - 2 for a, b in itertools.permutations(sizes, 2))
    assert alltoall.message_counts(s) == {1: inside, 2: between}


def test_shapes_of_direct_and_pairwise():
    d = build("direct", 7, 2)
    assert d.nsteps == 1 and d.nmessages == 42
    pw = build("pairwise", 7, 2)
    assert pw.nsteps == 6
    for step in pw.steps:
        assert sorted(t.src for t in step) == list(range(7)) == sorted(t.dst for t in step)


def test_node_ids_in_any_order():
    ids = [5, 9, 5, 9, 5, 2]          # nodes {0, 2, 4}, {1, 3}, {5}, led by ranks 0, 1, 5
    s = build("multilevel", 6, 1, ids)
    assert list(s.meta["order"]) == [0, 2, 4, 1, 3, 5]
    between = [t for step in s.steps for t in step if t.is_message and ids[t.src] != ids[t.dst]]
    assert sorted((t.src, t.dst) for t in between) == [(0, 1), (0, 5), (1, 0), (1, 5), (5, 0), (5, 1)]
    assert alltoall.delivery_errors(s) == []


def test_zero_elements():
    for algorithm in ALGORITHMS:
        s = build(algorithm, 5, 0, 2)
        assert s.nelems == 0
        assert all(t.is_message and t.count == 0 for step in s.steps for t in step)
        assert s.nmessages == build(algorithm, 5, 1, 2).nmessages


def test_one_rank():
    for algorithm in ALGORITHMS:
        s = build(algorithm, 1, 4, 1)
        assert s.nmessages == 0 and alltoall.delivery_errors(s) == []


def test_layout_groups_nodes():
    s = build("multilevel", 4, 2, [1, 0, 1, 0])
    send, recv = alltoall.layout(s)
    assert send[0].tolist() == [0, 4, 2, 6]              # order 0, 2, 1, 3
    assert recv[0].tolist() == [0, 12, 10, 14]           # own row stays in place


@pytest.mark.parametrize("call, message", [
    (lambda: build("bruck", 4, 1), "algorithm"),
    (lambda: build("direct", 0, 1), "nprocs"),
    (lambda: build("direct", 4, -1), "nelems_per_pair"),
    (lambda: build("multilevel", 4, 1, 0), "nodes"),
    (lambda: build("multilevel", 4, 1, (2, 0)), "nodes"),
    (lambda: build("multilevel", 4, 1, [0, 1]), "nodes"),
    (lambda: build("multilevel", 4, 1, True), "nodes"),
    (lambda: alltoall.counts_closed("multilevel", ()), "sizes"),
    (lambda: alltoall.counts_closed("multilevel", (2, 0)), "sizes"),
    (lambda: alltoall.delivery_errors(build("direct", 2, 0)), "nelems_per_pair"),
])
def test_bad_input_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_contributions_follow_receive_offsets_and_local_copies():
    from netmodels.algorithms.schedule import Schedule, Transfer
    from netmodels.algorithms.semantics import contributions
    from netmodels.models.nbl import active_links
    s = Schedule("moves", 2, 4, [(Transfer(0, 1, 0, 1, dst_start=3), Transfer(1, 1, 0, 2, dst_start=1))])
    c = contributions(s)
    assert c[1, :, 0].tolist() == [0, 0, 0, 1]        # rank 0's element landed at 3
    assert c[1, :, 1].tolist() == [1, 1, 1, 0]        # rank 1 copied its [0, 2) to [1, 3)
    assert active_links(s).tolist() == [[1, 1]]       # the local copy is no link
