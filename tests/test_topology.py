"""Topologies: routes checked against brute force on the link graph, contention of Kumar's permutations."""

import itertools
from collections import Counter, deque

import numpy as np
import pytest

from netmodels.algorithms import allgather as AG, registry
from netmodels.models.alphabeta import AlphaBeta
from netmodels.models.machines import KUMAR2004_COST
from netmodels.simulate import simulate
from netmodels.topology import KaryNTree, Mesh2D, Torus2D
from netmodels.topology import contention as C
from netmodels.topology import cost


def graph(topo):
    adj = {}
    ids = range(topo.nlinks) if isinstance(topo, KaryNTree) else np.nonzero(topo.used_links())[0]
    for a, b in map(topo.link_name, ids):
        adj.setdefault(a, set()).add(b)
    return adj


def bfs(adj, a):
    dist, todo = {a: 0}, deque([a])
    while todo:
        x = todo.popleft()
        for y in adj.get(x, ()):
            if y not in dist:
                dist[y] = dist[x] + 1
                todo.append(y)
    return dist


def digits_lca(a, b, k):
    """Lowest common ancestor level by comparing base-k digits, most significant first."""
    level = 0
    while a != b:
        a, b, level = a // k, b // k, level + 1
    return level


@pytest.mark.parametrize("k, n", [(2, 1), (2, 3), (3, 2), (4, 2), (2, 4)])
def test_fat_tree_is_a_k_ary_n_tree(k, n):
    t = KaryNTree(k, n)
    names = t.endpoints()
    assert len(names) == t.nlinks == 2 * n * k ** n and len(set(names)) == t.nlinks
    assert set(names) == {(b, a) for a, b in names}                   # every link has its twin
    deg = Counter(a for a, _ in names)
    switches = [x for x in deg if x[0] == "sw"]
    assert len(switches) == n * k ** (n - 1)
    assert all(deg[s] == (k if s[1] == n else 2 * k) for s in switches)
    adj = graph(t)
    for a in range(k ** n):
        dist = bfs(adj, ("leaf", a))
        for b in range(k ** n):
            assert dist[("leaf", b)] == 2 * digits_lca(a, b, k)
    # k^(L-1) shortest paths between leaves whose lowest common ancestor is at level L
    a, b = 0, k ** n - 1
    frontier = [[("leaf", a)]]
    for _ in range(2 * n):
        frontier = [p + [y] for p in frontier for y in adj[p[-1]] if y not in p]
    assert sum(p[-1] == ("leaf", b) for p in frontier) == k ** (n - 1)


@pytest.mark.parametrize("topo", [KaryNTree(2, 3), KaryNTree(3, 2), KaryNTree(4, 2, routing="random", seed=3),
                                  KaryNTree.missing(2, 3, [2, 5]), Mesh2D(4, 3), Torus2D(5, 4), Torus2D(4, 4)],
                         ids=repr)
def test_every_route_is_a_shortest_connected_path(topo):
    adj = graph(topo)
    node = (lambda r: ("leaf", int(topo.leaves[r]))) if isinstance(topo, KaryNTree) else \
        (lambda r: (r % topo.width, r // topo.width))
    for a in range(topo.nprocs):
        dist = bfs(adj, node(a))
        for b in range(topo.nprocs):
            path = topo.route(a, b)
            assert len(path) == dist[node(b)]
            if path:
                assert path[0][0] == node(a) and path[-1][1] == node(b)
                assert all(x[1] == y[0] for x, y in zip(path, path[1:]))
                assert all(y in adj[x] for x, y in path)


def test_mesh_routes_go_along_x_first_then_along_y_as_on_the_delta():
    m = Mesh2D(5, 3)
    for a, b in itertools.product(range(15), repeat=2):
        path = m.route(a, b)
        dx, dy = abs(b % 5 - a % 5), abs(b // 5 - a // 5)
        assert len(path) == dx + dy
        assert all(u[1] == v[1] for u, v in path[:dx]) and all(u[0] == v[0] for u, v in path[dx:])
    assert Torus2D(6, 1).route(0, 4) == [((0, 0), (5, 0)), ((5, 0), (4, 0))]       # the shorter way round


def brute_loads(topo, src, dst):
    c = Counter(link for s, d in zip(src, dst) for link in topo.route(int(s), int(d)))
    return max(c.values(), default=0), c


@pytest.mark.parametrize("topo", [KaryNTree(2, 2), KaryNTree(3, 1), Mesh2D(2, 2), Torus2D(2, 2)], ids=repr)
def test_contention_checker_against_brute_force_on_all_permutations(topo):
    p = topo.nprocs
    for perm in itertools.permutations(range(p)):
        src, dst = np.arange(p), np.array(perm)
        want, counts = brute_loads(topo, src, dst)
        loads, got = topo.link_loads(src, dst)
        assert got == want
        assert {topo.link_name(l): int(v) for l, v in enumerate(loads) if v} == dict(counts)
        assert C.is_contention_free(topo, src, dst) == (want <= 1)


@pytest.mark.parametrize("topo", [KaryNTree(2, 4), KaryNTree(3, 2), KaryNTree.missing(4, 2, [1, 6]),
                                  KaryNTree(4, 2, routing="random"), Torus2D(4, 3)], ids=repr)
def test_random_permutations_against_brute_force(topo):
    for seed in range(20):
        src, dst = C.random_permutation(topo.nprocs, seed)
        want, counts = brute_loads(topo, src, dst)
        assert topo.link_loads(src, dst)[1] == want
        np.testing.assert_array_equal(topo.message_loads(src, dst),
                                      [max((counts[l] for l in topo.route(s, d)), default=0)
                                       for s, d in zip(src, dst)])


@pytest.mark.parametrize("k, n", [(4, 3), (2, 6), (2, 3), (4, 2), (8, 2)])
def test_prefix_permutations_and_cyclic_shifts_are_contention_free_on_full_trees(k, n):
    t = KaryNTree(k, n)
    p = k ** n
    for j in range(1, p):
        src, dst = C.prefix_permutation(p, j)
        assert sorted(dst) == list(range(p))
        assert brute_loads(t, src, dst)[0] == 1, j
        assert brute_loads(t, *C.cyclic_shift(p, j))[0] == 1, j


def test_what_is_not_contention_free():
    t = KaryNTree(4, 3)
    assert C.max_load(t, *C.transpose(64)) == 4
    assert C.max_load(KaryNTree(2, 6), *C.transpose(64)) == 7
    assert all(C.max_load(t, *C.random_permutation(64, s)) > 1 for s in range(10))
    r = KaryNTree(4, 3, routing="random", seed=1)                  # random up-ports collide
    assert max(C.survey(r, "prefix").values()) > 1
    assert KaryNTree(4, 3, routing="random", seed=1).link_loads(*C.transpose(64))[0].sum() == \
        t.link_loads(*C.transpose(64))[0].sum()                    # same path lengths, other links


def test_missing_leaves():
    last = KaryNTree.missing(4, 3, [63])                           # ranks still on leaves 0..62
    assert max(C.survey(last, "prefix").values()) == 1
    assert max(C.survey(last, "shift").values()) == 2
    mid = KaryNTree.missing(4, 3, [5])                              # ranks above 5 move one leaf up
    bad = {j for j, v in C.survey(mid, "prefix").items() if v > 1}
    assert len(bad) == 60 and 1 not in bad
    # a subset of a contention-free permutation stays contention-free: prefix send in leaf numbering
    s = AG.on_leaves("prefix", mid.leaves, 64, 1)
    assert all(load <= 1 for load, _ in C.schedule_loads(mid, s))
    # shifts on contiguous leaves 0..P-1: all contention-free when k^(n-1) divides P
    for p in (16, 32, 48, 64):
        assert max(C.survey(KaryNTree(4, 3, np.arange(p)), "shift").values()) == 1
    assert max(C.survey(KaryNTree(4, 3, np.arange(60)), "shift").values()) == 2


def build(algorithm, nprocs, nelems, k=None):
    """The registered allgather ``algorithm`` per transfer."""
    return registry.get(algorithm, "allgather").build(nprocs, nelems, k=k).to_schedule()


def test_schedule_steps_of_kumar_strategies():
    t = KaryNTree(4, 3)
    for a in ("prefix", "k-prefix", "k-shift", "ring", "direct"):
        s = build(a, 64, 1, {"k-prefix": 16, "k-shift": 8}.get(a))
        assert all(load <= deg for load, deg in C.schedule_loads(t, s)), a
    tm = KaryNTree.missing(4, 3, [5])
    ks = build("k-shift", 63, 1, 8)
    kp = build("k-prefix", 63, 1, 16)
    worst = lambda s: max(load / deg for load, deg in C.schedule_loads(tm, s))
    assert worst(ks) < worst(kp)


def test_costs():
    a, b = 9e-6, KUMAR2004_COST["beta_em"]
    m = 1000
    t = KaryNTree(4, 2)
    for alg in ("direct", "ring", "prefix", "k-shift", "k-prefix"):
        s = build(alg, 16, m, 4 if registry.get(alg, "allgather").takes("k") else None)
        want = 15 * (a + 8 * m * b)                                  # (P-1)(α + m β), 8-byte elements
        assert simulate(s, AlphaBeta(a, b)).time == pytest.approx(want)
        assert simulate(s, AlphaBeta(a, b), topology=t).time == pytest.approx(want)  # contention-free
    s = build("prefix", 15, m)
    tm = KaryNTree.missing(4, 2, [3])
    times = simulate(s, AlphaBeta(a, b), topology=tm).step_times
    loads = [C.max_load(tm, *C.step_pairs(s, i)) for i in range(s.nsteps)]
    np.testing.assert_allclose(times, [a + 8 * m * b * l for l in loads])
    assert cost.half_performance_length(9e-6, 1 / 294e6) == pytest.approx(2646)
    T = cost.kumar_time("k-prefix-lb", 64, 1e6, 9e-6, 1 / 294e6, 1 / 294e6, 15e-6, 16)
    assert T == pytest.approx(1e6 / 294e6 + 63 * (9e-6 + 1e6 / 294e6) + 3 * 15e-6)
    assert cost.node_bandwidth(64, 1e6, T) < 294e6


@pytest.mark.parametrize("call, match", [
    (lambda: KaryNTree(1, 2), "k must"), (lambda: KaryNTree(2, 0), "n must"),
    (lambda: KaryNTree(2, 2, [0, 0]), "leaves"), (lambda: KaryNTree(2, 2, [4]), "leaves"),
    (lambda: KaryNTree(2, 2, routing="adaptive"), "routing"), (lambda: Mesh2D(0, 2), "width"),
    (lambda: KaryNTree(2, 2).link_loads([0, 1], [4, 0]), "dst"), (lambda: C.transpose(8), "square"),
    (lambda: KaryNTree(2, 2).link_loads([0], [1, 2]), "same length"), (lambda: C.survey(Mesh2D(2, 2), "x"), "family"),
    (lambda: cost.kumar_time("bruck", 4, 1, 1, 1, 1), "strategy"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_kumar_counts_and_predictions():
    from netmodels.topology import kumar
    from netmodels.models.machines import KUMAR2004_BANDWIDTH

    tree = kumar.quadrics_tree(64)
    assert (tree.k, tree.n, tree.nprocs) == (4, 3, 64)
    far = kumar.far_away(tree)
    assert (far["top"] == 48).all()                                     # 64 - 16 leaves outside the subtree
    i = np.arange(64)
    np.testing.assert_array_equal(far["rank_distance"], [sum(abs(a - d) >= 32 for d in range(64)) for a in i])
    assert far["rank_distance"][0] == 32 and far["rank_distance"].min() == 1
    assert kumar.quadrics_tree(128, missing=[5]).nprocs == 128
    assert kumar.step_levels("prefix", tree)[:3] == [1, 1, 1] and max(kumar.step_levels("prefix", tree)) == 3
    # large messages: the cost equation tends to (P-1)/P / β_em, below every slide-23 k-prefix number's bound
    big = kumar.predicted_bandwidth("k-prefix-lb", np.array(KUMAR2004_BANDWIDTH["nodes"]), 1e9, 16)
    np.testing.assert_allclose(big, 294e6 * (np.array(KUMAR2004_BANDWIDTH["nodes"]) - 1) / np.array(KUMAR2004_BANDWIDTH["nodes"]), rtol=1e-3)
    assert all(b > k for b, k in zip(big, KUMAR2004_BANDWIDTH["k-prefix"]))
    holed = kumar.quadrics_tree(30, missing=[5])
    free, loaded = kumar.contention_bandwidth("ring", holed, 65536)
    assert free == pytest.approx(loaded)
    free, loaded = kumar.contention_bandwidth("prefix", holed, 65536)
    assert loaded < free and kumar.worst_step_ratio("prefix", holed) == 2


@pytest.mark.parametrize("k, n", [(4, 2), (2, 4), (3, 2)])
def test_the_shift_rule_equals_the_checker(k, n):
    """contention.shifts_free_by_rule is the checker's survey of cyclic shifts, for every P."""
    for p in range(2, k**n + 1):
        survey = C.survey(KaryNTree(k, n, np.arange(p)), "shift")
        assert (max(survey.values()) <= 1) == C.shifts_free_by_rule(p, k), p
