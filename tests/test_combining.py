"""Allreduce schedules without MPI: semantics, mesh conflicts, timelines, cost, drawing."""

import math

import numpy as np
import pytest

from netmodels.algorithms import combining as C, registry
from netmodels.algorithms.schedule import Schedule, Transfer
from netmodels.algorithms.semantics import combining_errors, contributions
from netmodels.models import nbl_paper
from netmodels.models.nbl import NBLModel, active_links
from netmodels.simulate import simulate
from netmodels.topology.mesh import link_conflicts

ALLREDUCES = registry.algorithms("allreduce")


def build(algorithm, nprocs, nelems, block=None, mesh=None):
    """The registered allreduce ``algorithm`` per transfer (None: the option's default; a
    block size is passed to the pipelined algorithms only)."""
    alg = registry.get(algorithm, "allreduce")
    block = block if alg.takes("block") else None
    return alg.build(nprocs, nelems, block=block, mesh=mesh).to_schedule()


MESHES = {p: [None] + [(w, p // w) for w in (1, p) if (w, p // w) != C.default_mesh(p)] for p in range(1, 17)}


def sizes(p):
    return sorted({0, 1, max(p - 1, 0), p, p + 1, 1001})


# ----------------------------------------------------------------------------- semantics
@pytest.mark.parametrize("p", range(1, 17))
def test_every_contribution_combined_exactly_once_everywhere(p):
    for n in sizes(p):
        for alg in ALLREDUCES:
            algorithm = alg.short
            meshes = MESHES[p] if alg.takes("mesh") else [None]
            blocks = [None, 1, 7] if alg.takes("block") else [None]
            if n > 100 and alg.takes("block"):
                blocks = [None, 97]                    # 1001 = 10 * 97 + 31: a short last block
            for mesh in meshes:
                for block in blocks:
                    s = build(algorithm, p, n, block, mesh)
                    assert s.nprocs == p and s.nelems == n
                    assert combining_errors(s) == [], (algorithm, p, n, block, mesh)


def test_the_semantics_check_can_fail():
    s = build("ring", 4, 8)
    broken = Schedule("broken", 4, 8, [step for t, step in enumerate(s.steps) if t != 1])
    assert combining_errors(broken)
    doubled = Schedule("doubled", 4, 8, s.steps[:1] + s.steps)       # step 0 applied twice
    assert any("2 times" in e for e in combining_errors(doubled))


def test_step_sends_values_from_the_start_of_the_step():
    # a swap in one step: both see the other's original value, so each holds 1 + 1 contribution
    s = Schedule("swap", 2, 1, [(Transfer(0, 1, 0, 1, True), Transfer(1, 0, 0, 1, True))])
    assert (contributions(s) == 1).all()


# ----------------------------------------------------------------------------- the paper's claims
@pytest.mark.parametrize("algorithm", ["tree", "snake", "fence"])
@pytest.mark.parametrize("mesh", [(1, 1), (2, 1), (1, 3), (2, 2), (3, 2), (4, 4), (5, 3), (8, 4), (3, 7)])
def test_littlefield_algorithms_are_link_conflict_free(algorithm, mesh):
    p = mesh[0] * mesh[1]
    for n, block in ((1, None), (50, 4), (37, 5)):
        assert link_conflicts(build(algorithm, p, n, block, mesh)) == []


def test_conflict_check_finds_a_shared_link():
    s = Schedule("x", 4, 2, [(Transfer(0, 2, 0, 1), Transfer(1, 3, 1, 1))], {"mesh": (4, 1)})
    (step, link, trs), = link_conflicts(s)
    assert step == 0 and link == ((1, 0), (2, 0)) and len(trs) == 2
    # the two directions of a link are two links
    s = Schedule("y", 2, 1, [(Transfer(0, 1, 0, 1), Transfer(1, 0, 0, 1))], {"mesh": (2, 1)})
    assert link_conflicts(s) == []


def cost(schedule, model):
    """Seconds of ``schedule`` under ``model`` (the simulator, the model's sync semantics)."""
    return simulate(schedule, model).time


def timeline(schedule):
    """Run lengths ``[(steps, L of the busiest node)]`` like the paper's appendix tables."""
    L = active_links(schedule).max(axis=1, initial=0)
    return [(n, links) for n, links, _ in nbl_paper.run_lengths(L, 0 * L)]


def runs(rows):
    """The paper's (steps, L) rows with empty rows dropped and equal neighbours merged."""
    out = []
    for n, L in rows:
        if n and out and out[-1][1] == L:
            out[-1] = (out[-1][0] + n, L)
        elif n:
            out.append((n, L))
    return out


@pytest.mark.parametrize("w, h, b", [(4, 4, 10), (3, 5, 3), (8, 2, 7), (16, 2, 25)])
def test_snake_timeline_is_the_papers(w, h, b):
    p = w * h
    s = build("snake", p, b * 11, 11, (w, h))
    assert s.nsteps == b + 2 * p - 3
    assert timeline(s) == runs([(1, 1), (p - 2, 2), (1, 3), (b - 3, 4), (1, 3), (p - 2, 2), (1, 1)])
    assert active_links(s).max() == (4 if b > 3 else 3)


@pytest.mark.parametrize("w, h, b", [(4, 4, 10), (3, 5, 4), (8, 2, 7), (16, 2, 25)])
def test_fence_timeline_is_the_papers(w, h, b):
    s = build("fence", w * h, b * 13, 13, (w, h))
    assert s.nsteps == b + 2 * w + 2 * h - 5
    assert timeline(s) == runs([(1, 1), (h - 1, 2), (w - 2, 3), (1, 4), (b - 3, 6), (1, 4), (w - 2, 3),
                                (h - 1, 2), (1, 1)])
    peak = active_links(s).max(axis=0)
    for r in range(w * h):
        x, y = r % w, r // w
        if y == 0 and 0 < x < w - 1:                # 3-way combining and 2-way fan-out at once
            assert (peak[r] == 6) == (2 * x <= b - 2), (r, peak[r])   # long enough pipeline
        else:                                       # corners and columns: at most 4
            assert peak[r] <= 4


def test_fence_combines_three_ways_along_the_bottom_row():
    w, h = 4, 3
    s = build("fence", w * h, 40, 4, (w, h))
    t = w + h                                       # mid-pipeline
    arrivals = {}
    for tr in s.steps[t]:
        if tr.combine:
            arrivals.setdefault(tr.dst, []).append(tr.start)
    for x in range(w - 1):                          # bottom-row nodes left of the corner
        assert len(arrivals[x]) == 2 and arrivals[x][0] == arrivals[x][1]


@pytest.mark.parametrize("mesh", [(4, 4), (8, 2), (5, 3), (1, 6)])
def test_tree_step_count_and_one_link_per_node(mesh):
    w, h = mesh
    s = build("tree", w * h, 100, None, mesh)
    assert s.nsteps == 2 * (math.ceil(math.log2(w)) + math.ceil(math.log2(h)))
    assert active_links(s).max() == 1


@pytest.mark.parametrize("p", [2, 3, 4, 5, 8, 12])
def test_mpi_algorithms_step_counts(p):
    log2 = p.bit_length() - 1
    extra = 2 if p & (p - 1) else 0                 # fold in / out for non-powers of two
    assert build("ring", p, 100).nsteps == 2 * (p - 1)
    assert build("recursive_doubling", p, 100).nsteps == log2 + extra
    assert build("rabenseifner", p, 100).nsteps == 2 * log2 + extra
    assert build("binomial", p, 100).nsteps == 2 * math.ceil(math.log2(p))
    # Rabenseifner moves less data than recursive doubling: 2 (P'-1)/P' N per core rank
    if p == 8:
        sent = sum(tr.count for st in build("rabenseifner", p, 800).steps for tr in st if tr.src == 0)
        assert sent == 2 * 7 * 100


def test_zero_length_and_one_rank_need_no_messages():
    for alg in ALLREDUCES:
        assert alg.build(5, 0).nsteps == 0
        assert alg.build(1, 10).nsteps == 0


# ----------------------------------------------------------------------------- errors and block size
@pytest.mark.parametrize("kwargs, words", [
    (dict(algorithm="bogus"), "algorithm must be one of"),
    (dict(block=0), "block must be an integer >= 1"),
    (dict(block=2.5), "block must be an integer >= 1"),
    (dict(mesh=(3, 2)), "W*H must equal 4"),
    (dict(mesh=(0, 4)), "mesh width W"),
    (dict(mesh="4x1"), "mesh must be a pair"),
    (dict(nelems=-1), "nelems must be an integer >= 0"),
    (dict(nprocs=0), "nprocs must be an integer >= 1"),
])
def test_bad_arguments_name_the_parameter(kwargs, words):
    args = dict(algorithm="snake", nprocs=4, nelems=10) | kwargs
    with pytest.raises(ValueError, match=words.replace("*", r"\*")):
        build(**args)


@pytest.mark.parametrize("algorithm, p, n", [("snake", 4, 50_000), ("snake", 16, 200_000), ("fence", 16, 100_000),
                                             ("fence", 6, 300_000)])
def test_default_block_is_near_the_cost_minimum(algorithm, p, n):
    # standard model in which a mid-pipeline step (4 links for snake, 6 for fence) costs
    # OVERHEAD_ELEMS element-times of overhead plus S element-times: default_block's assumption
    beta = 1e-9
    model = NBLModel.standard(C.OVERHEAD_ELEMS * beta / (4 if algorithm == "snake" else 6), beta / 8)
    t_default = cost(build(algorithm, p, n), model)
    grid = np.unique(np.geomspace(n / 300, n, 40).astype(int))
    t_best = min(cost(build(algorithm, p, n, int(s)), model) for s in grid)
    assert t_default <= 1.05 * t_best


# ----------------------------------------------------------------------------- cost
A, B, C2, C3 = 54e-6, 1.54e-6, 0.25e-6, 0.37e-6      # the paper's DELTA numbers per double (section 7.2)
F = {2: 1.7, 3: 2.3, 4: 3.1, 6: 5.3}                 # distinct values so every term is visible
MODEL = NBLModel(A, B / 8, F, C2 / 8, C3 / 8)         # per byte, 8 bytes per element


def nbl(L, S):
    return L * A + (1 if L == 1 else F[L]) * B * S


def snake_appendix(p, b, s):
    """The appendix's Snake total, read with T(L) = L*alpha + f(L)*beta*S (section 2)."""
    return ((nbl(1, s) + C2 * s) + (p - 2) * (nbl(2, s) + C2 * s) + (nbl(3, s) + C2 * s)
            + (b - 3) * (nbl(4, s) + C2 * s) + (nbl(3, s) + C2 * s) + (p - 2) * nbl(2, s) + nbl(1, s))


def fence_appendix(w, h, b, s):
    return ((nbl(1, s) + C2 * s) + (h - 1) * (nbl(2, s) + C2 * s) + (w - 2) * (nbl(3, s) + C3 * s)
            + (nbl(4, s) + C3 * s) + (b - 3) * (nbl(6, s) + C3 * s) + (nbl(4, s) + C3 * s)
            + (w - 2) * nbl(3, s) + (h - 1) * nbl(2, s) + nbl(1, s))


@pytest.mark.parametrize("w, h, b, s", [(4, 4, 10, 60), (16, 16, 50, 20), (16, 32, 4, 600), (3, 5, 7, 11)])
def test_cost_reproduces_the_appendix_closed_forms(w, h, b, s):
    p, n = w * h, b * s
    assert cost(build("snake", p, n, s, (w, h)), MODEL) == pytest.approx(snake_appendix(p, b, s), rel=1e-12)
    # Fence: one step (H-1) does a 3-way combine the appendix books as 2-way
    assert cost(build("fence", p, n, s, (w, h)), MODEL) == \
        pytest.approx(fence_appendix(w, h, b, s) + (C3 - C2) * s, rel=1e-12)
    tree = (math.ceil(math.log2(w)) + math.ceil(math.log2(h))) * (2 * (A + B * n) + C2 * n)
    assert cost(build("tree", p, n, None, (w, h)), MODEL) == pytest.approx(tree, rel=1e-12)


def test_cost_by_hand_for_an_exchange_and_a_chain():
    n = 1000
    rd = build("recursive_doubling", 2, n)         # one exchange: L = 2 at both nodes
    assert cost(rd, MODEL) == pytest.approx(2 * A + F[2] * B * n + C2 * n)
    assert cost(rd, NBLModel.standard(A, B / 8, C2 / 8)) == pytest.approx(2 * A + B * n + C2 * n)
    assert cost(rd, NBLModel.nominal(A, B / 8, C2 / 8)) == pytest.approx(2 * A + 2 * B * n + C2 * n)
    assert active_links(rd).tolist() == [[2, 2]]
    assert cost(build("snake", 1, n), MODEL) == 0.0


def test_nominal_model_is_slower_and_missing_f_values_are_named():
    s = build("fence", 16, 10**4, 100, (4, 4))
    assert cost(s, NBLModel.nominal(A, B / 8, C2 / 8, C3 / 8)) > cost(s, NBLModel.standard(A, B / 8, C2 / 8, C3 / 8))
    with pytest.raises(ValueError, match="no value for L = 6"):
        cost(s, NBLModel(A, B / 8, {2: 1.1, 3: 1.3, 4: 3.9}))
    with pytest.raises(ValueError, match="alpha"):
        NBLModel(-1.0, B)
    with pytest.raises(ValueError, match="f keys"):
        NBLModel(A, B / 8, {0: 0.1})


# ----------------------------------------------------------------------------- drawing
def test_draw_step_draws_one_arrow_per_message_and_marks_conflicts_red():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.colors import to_rgba
    from matplotlib.patches import FancyArrowPatch

    from netmodels.figures.draw import draw_step

    s = build("fence", 12, 40, 4, (4, 3))
    ax = draw_step(s, 8)
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == len(s.steps[8])
    assert all(a.get_edgecolor() != to_rgba("red") for a in arrows)
    bad = Schedule("x", 4, 2, [(Transfer(0, 2, 0, 1), Transfer(1, 3, 1, 1))], {"mesh": (4, 1)})
    arrows = [p for p in draw_step(bad, 0).patches if isinstance(p, FancyArrowPatch)]
    assert all(a.get_edgecolor() == to_rgba("red") for a in arrows)
    with pytest.raises(ValueError, match="step t"):
        draw_step(s, s.nsteps)
