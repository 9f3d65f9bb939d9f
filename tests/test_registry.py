"""Every registered algorithm, every option, many sizes: what it computes (against a brute-force
run of the step semantics written here), its two forms, the simulator under every model, a drawing."""

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from netmodels.algorithms import registry  # noqa: E402
from netmodels.algorithms.alltoall import delivery_errors, layout  # noqa: E402
from netmodels.algorithms.arrays import ArraySchedule  # noqa: E402
from netmodels.algorithms.semantics import allgather_errors, combining_errors  # noqa: E402
from netmodels.models.alphabeta import AlphaBeta  # noqa: E402
from netmodels.models.logp import LogGP, LogP  # noqa: E402
from netmodels.simulate import simulate  # noqa: E402
from netmodels.models.nbl import NBLModel  # noqa: E402

SIZES = range(1, 21)


def lengths(alg, P):
    """``nelems`` to try: a barrier none; a vector (allreduce, broadcast) none, one element,
    fewer than P, not a multiple of P; a block per rank or pair (allgather, alltoall) 0, 1, 3."""
    if alg.collective == "barrier":
        return [0]
    if alg.collective in ("allgather", "alltoall"):
        return [0, 1, 3]
    return sorted({0, 1, max(P - 1, 1), 2 * P + 3})


#: option -> its values to try on P ranks (besides the default); every option of the
#: registry must be here, so that a new one is tested too
OPTION_VALUES = {
    "mesh": lambda P, a: [(1, P), (P, 1)] + ([(P // 2, 2)] if P % 2 == 0 and P > 2 else []),
    "block": lambda P, a: [1, 3],
    "fan_in": lambda P, a: [2, 3],
    "release": lambda P, a: ["flat"],
    "n": lambda P, a: [1, 3],
    "root": lambda P, a: sorted({P // 2, P - 1} - {0}),
    "k": lambda P, a: [k for k in (1, 2, 3, P) if k <= P and (a.short != "k-shift" or k % 2 == 0)],
    "nodes": lambda P, a: [2, (2, 2), [r % 3 for r in range(P)]],
}

MODELS = {
    "alpha-beta": AlphaBeta(10e-6, 1e-9),
    "logp": LogP(L=5e-6, o=1.5e-6, g=2e-6, P=2),
    "loggp": LogGP(L=5e-6, o=1.5e-6, g=2e-6, P=2, G=0.5e-9),
    "nbl": NBLModel(10e-6, 1e-9, float, 1e-9 / 8, 1.5e-9 / 8),
}


def variants(alg, P):
    """``{}`` (every default) and each option set to each of its other values, alone."""
    out = [{}]
    for option in alg.options:
        out += [{option: v} for v in OPTION_VALUES[option](P, alg)]
    return out


def run(schedule, vectors):
    """The step semantics, written out: every transfer of a step reads its source as it was
    at the beginning of the step; destinations apply the blocks in step order."""
    v = [np.array(x, copy=True) for x in vectors]
    for step in schedule.steps:
        sent = [v[t.src][t.start:t.start + t.count].copy() for t in step]
        for t, data in zip(step, sent):
            lo = t.recv_start
            if t.combine:
                v[t.dst][lo:lo + t.count] += data
            else:
                v[t.dst][lo:lo + t.count] = data
    return v


def heard(schedule):
    """Per rank, the ranks whose entry its exit depends on (messages carry all a rank knows)."""
    k = [{r} for r in range(schedule.nprocs)]
    for step in schedule.steps:
        new = [set(x) for x in k]
        for t in step:
            new[t.dst] |= k[t.src]
        k = new
    return k


def check_semantics(alg, s, P, n, options):
    """``s`` (per transfer) does what ``alg``'s collective must do."""
    rng = np.random.default_rng(P * 1000 + n)
    if alg.collective == "allreduce":
        x = [rng.integers(-2**20, 2**20, n) for _ in range(P)]
        want = np.sum(x, axis=0)
        assert all(np.array_equal(got, want) for got in run(s, x))
        assert combining_errors(s) == []
    elif alg.collective == "barrier":
        assert s.nelems == 0 and all(t.count == 0 for step in s.steps for t in step)
        assert all(h == set(range(P)) for h in heard(s))
    elif alg.collective == "broadcast":
        root = options.get("root", 0)
        x = [np.full(n, -1 - r) for r in range(P)]
        x[root] = rng.integers(0, 2**20, n)
        assert all(np.array_equal(got, x[root]) for got in run(s, x))
        assert not any(t.combine for step in s.steps for t in step)
    elif alg.collective == "allgather":
        assert s.nelems == P * n
        x = [np.where(np.arange(P * n) // max(n, 1) == r, np.arange(P * n), -1) for r in range(P)]
        want = np.arange(P * n)
        assert all(np.array_equal(got, want) for got in run(s, x))
        assert allgather_errors(s) == []
    else:                                           # alltoall: row (i -> j) labelled i P + j
        send, recv = layout(s)
        x = []
        for i in range(P):
            v = np.full(s.nelems, -1)
            for j in range(P):
                v[send[i, j]:send[i, j] + n] = (i * P + j) * n + np.arange(n)
            x.append(v)
        got = run(s, x)
        for j in range(P):
            for i in range(P):
                assert np.array_equal(got[j][recv[j, i]:recv[j, i] + n], (i * P + j) * n + np.arange(n))
        if n:
            assert delivery_errors(s) == []


def check_forms(a):
    """The per-transfer view converts back to the same columns, step for step."""
    s = a.to_schedule()
    b = ArraySchedule.from_schedule(s)
    assert b.to_schedule() == s
    assert (b.name, b.nprocs, b.nelems, b.meta, b.nsteps) == (a.name, a.nprocs, a.nelems, a.meta, a.nsteps)
    for x, y in zip(a.steps, b.steps):
        for col in ("src", "dst", "start", "count", "combine", "recv_start"):
            assert np.array_equal(getattr(x, col), getattr(y, col)), col
    assert s.nmessages == a.nmessages
    return s


@pytest.mark.parametrize("name", registry.names())
def test_every_algorithm_does_its_collective_at_every_size_and_option(name):
    alg = registry.get(name)
    assert alg.builder.__doc__ and alg.summary
    for P in SIZES:
        for options in variants(alg, P):
            for n in lengths(alg, P):
                a = alg.build(P, n, **options)
                assert isinstance(a, ArraySchedule) and a.nprocs == P, (P, n, options)
                s = check_forms(a)
                try:
                    check_semantics(alg, s, P, n, options)
                except AssertionError as exc:
                    raise AssertionError(f"{name} P={P} n={n} {options}") from exc


@pytest.mark.parametrize("name", registry.names())
def test_every_algorithm_is_simulated_under_every_model(name):
    alg = registry.get(name)
    for P in SIZES:
        a = alg.build(P, lengths(alg, P)[-1])
        for model_name, model in MODELS.items():
            for semantics in ("sync", "stepwise"):
                r = simulate(a, model, semantics=semantics)
                assert math.isfinite(r.time) and r.time >= 0, (P, model_name, semantics)
                if P > 1:
                    assert r.time > 0, (P, model_name, semantics)
                    assert r.steps == a.nsteps


@pytest.mark.parametrize("name", registry.names())
def test_every_algorithm_can_be_drawn(name):
    import matplotlib.pyplot as plt

    from netmodels.figures.draw import draw_step

    alg = registry.get(name)
    a = alg.build(6, lengths(alg, 6)[-1])
    for t in range(a.nsteps):
        ax = draw_step(a, t)
        assert ax.figure is not None
        plt.close(ax.figure)


def test_every_option_of_the_registry_is_tried_and_every_collective_has_algorithms():
    options = {o for a in registry.algorithms() for o in a.options}
    assert options <= set(OPTION_VALUES)
    assert {a.collective for a in registry.algorithms()} == set(registry.COLLECTIVES)


def test_names_options_and_errors():
    assert registry.get("dissemination").name == "barrier.dissemination"
    assert registry.get("ring", "allgather").name == "allgather.ring"
    assert registry.get("snake").takes("block") and registry.get("snake").takes("mesh")
    assert not registry.get("allreduce.ring").takes("block")
    assert [a.short for a in registry.algorithms("allgather") if a.takes("k")] == ["k-prefix", "k-prefix-lb",
                                                                                 "k-shift"]
    with pytest.raises(ValueError, match="ambiguous"):
        registry.get("binomial")
    with pytest.raises(ValueError, match="must be one of"):
        registry.get("nonesuch")
    with pytest.raises(ValueError, match=r"dissemination takes no options.*'fan_in'.*combining_tree"):
        registry.build("barrier.dissemination", 8, fan_in=3)
    with pytest.raises(ValueError, match="nelems must be 0"):
        registry.build("barrier.dissemination", 4, 3)
    # None means "not given": one call can pass the same keywords to every algorithm
    assert registry.build("allgather.direct", 4, 1, k=None).nsteps == 1
    with pytest.raises(ValueError, match="root"):
        registry.build("broadcast.flat", 4, 1, root=4)
