"""The executor's software term (mpi_exercises.software) against hand counts, and the benchmark
that measures it without the network (mpi_exercises.bench.software_cost)."""

import json

import numpy as np
import pytest

from mpi_exercises.bench import software_cost
from mpi_exercises.executor import Mode, plan
from mpi_exercises.software import SoftwareCost
from netmodels.algorithms import registry
from tests.mpirun import run_mpi_ok

US = 1e-6
# copies and combines linear in n between the knots: 0.1 µs + 1 ns per element (copy),
# 0.2 µs + 2 ns per element (combine); the door 3 µs + 0.5 ns per element
KNOTS = (1, 100, 10_000)
SW = SoftwareCost(KNOTS, tuple(3 * US + 0.5e-9 * n for n in KNOTS), 0.7 * US, 0.4 * US,
                  tuple(0.1 * US + 1e-9 * n for n in KNOTS), tuple(0.2 * US + 2e-9 * n for n in KNOTS))


def copy(n):
    return 0.1 * US + 1e-9 * n


def combine(n):
    return 0.2 * US + 2e-9 * n


def test_recursive_doubling_on_two_ranks_is_the_door_then_one_step_and_one_combine_per_rank():
    N = 1000
    s = registry.build("allreduce.recursive_doubling", 2, N)
    door = 3 * US + 0.5e-9 * N
    sw = SW.of(s)
    assert sw.start == pytest.approx(door)
    np.testing.assert_allclose(sw.steps, [[0.4 * US + combine(N)] * 2])
    assert SW.of(s, door=False).start == pytest.approx(0.7 * US)
    assert sw.lockstep(1, 2) == pytest.approx(door + 0.4 * US + combine(N))


def test_ring_on_four_ranks_combines_in_the_reduce_scatter_and_receives_straight_in_the_allgather():
    # reduce-scatter: 3 steps, each rank combines a block of N/4; allgather: 3 steps whose
    # blocks land in place (no apply): only the step's own cost
    N = 4000
    s = registry.build("allreduce.ring", 4, N)
    modes = {b.mode for st in plan(s, 0) for b in st.incoming}
    assert modes == {Mode.COMBINE, Mode.DIRECT}
    want = [[0.4 * US + combine(N / 4)] * 4] * 3 + [[0.4 * US] * 4] * 3
    np.testing.assert_allclose(SW.of(s).steps, want)
    assert SW.of(s).lockstep(6, 4) == pytest.approx(3 * US + 0.5e-9 * N + 3 * (0.4 * US + combine(N / 4)) + 3 * 0.4 * US)


def test_a_barrier_costs_a_step_per_round_and_no_apply():
    s = registry.build("barrier.dissemination", 8, 0)
    np.testing.assert_allclose(SW.of(s, door=False).steps, np.full((3, 8), 0.4 * US))


def test_a_rank_without_work_in_a_step_costs_nothing_there():
    # a binomial broadcast's first step on 8 ranks: rank 0 sends to rank 4, which receives
    # straight into its vector (no apply); the other six ranks have nothing to do
    s = registry.build("broadcast.binomial", 8, 64)
    assert [b.mode for b in plan(s, 4)[0].incoming] == [Mode.DIRECT]
    np.testing.assert_allclose(SW.of(s, door=False).steps[0], [0.4 * US, 0, 0, 0, 0.4 * US, 0, 0, 0])


def test_a_fit_below_zero_prices_a_step_at_zero_not_below():
    neg = SoftwareCost(KNOTS, SW.door, SW.call, -2 * US, SW.copy, SW.combine)
    s = registry.build("barrier.dissemination", 4, 0)
    assert SW.of(s).steps.min() == pytest.approx(0.4 * US)
    assert neg.of(s).steps.max() == 0.0


def test_lengths_beyond_the_knots_extend_the_last_piece():
    assert SW.apply(20_000, False) == pytest.approx(copy(20_000))
    assert SW.apply(0, True) == pytest.approx(combine(0))


@pytest.mark.parametrize("bad", [dict(knots=(5, 5)), dict(knots=(-1, 3)), dict(door=(1.0,)),
                                 dict(step=float("nan")), dict(copy=(1.0, float("inf")))])
def test_a_bad_term_is_refused(bad):
    args = {**dict(knots=(1, 2), door=(0.0, 0.0), call=0.0, step=0.0, copy=(0.0, 0.0), combine=(0.0, 0.0)), **bad}
    with pytest.raises(ValueError):
        SoftwareCost(**args)


def test_the_term_survives_its_json_form():
    d = json.loads(json.dumps(SW.as_dict()))
    assert SoftwareCost.from_dict(d) == SW
    with pytest.raises(ValueError, match="step_s"):
        SoftwareCost.from_dict({k: v for k, v in d.items() if k != "step_s"})


def test_local_schedules_send_no_message_and_apply_their_blocks():
    s = software_cost.local_schedule(3, 10, blocks=2, combine=True)
    assert s.nprocs == 1 and s.nsteps == 3 and s.nelems == 30
    steps = plan(s, 0)
    assert all(not st.sends and [b.mode for b in st.incoming] == [Mode.LOCAL_COMBINE] * 2 for st in steps)
    assert [b.start for b in steps[0].incoming] == [10, 20]


def test_the_fit_recovers_step_and_apply_costs_from_exact_times():
    # times made from known costs: a run of k steps with m blocks of n elements takes
    # call + k (step + m apply(n)); the fit must give them back
    call, step = 0.9 * US, 0.35 * US
    sizes, steps = [1, 64, 4096], [1, 4, 16]
    rows = []
    for n, kind, blocks, k in software_cost.cases(sizes, steps):
        t = call + k * (step + blocks * (copy(n) if kind == "copy" else combine(n)))
        rows.append({"nelems": n, "kind": kind, "blocks": blocks, "steps": k, "min_s": t})
    result = {"schedules": rows, "call": {"min_s": call},
              "door": [{"nelems": n, "min_s": 2 * US + n * 1e-9} for n in sizes]}
    sw = software_cost.term(result)
    assert sw.knots == (1, 64, 4096) and sw.call == pytest.approx(call)
    assert sw.step == pytest.approx(step)
    assert sw.copy == pytest.approx(tuple(copy(n) for n in sizes))
    assert sw.combine == pytest.approx(tuple(combine(n) for n in sizes))
    assert sw.door == pytest.approx(tuple(2 * US + n * 1e-9 for n in sizes))


@pytest.mark.mpi
def test_software_cost_under_mpiexec_writes_a_term_predict_can_read(tmp_path):
    out = tmp_path / "sw.json"
    res = run_mpi_ok(2, ["-m", "mpi_exercises", "software-cost", "--sizes", "1,64", "--steps", "1,2",
                         "--iterations", "5", "--warmup", "1", "--inner", "2", "--no-progress",
                         "--json", str(out)], timeout=120)
    assert "per step with work" in res.stdout and "COMM_SELF" in res.stdout
    data = json.loads(out.read_text())
    sw = SoftwareCost.from_dict(data["software"])
    assert sw.knots == (1, 64) and all(np.isfinite(sw.door)) and sw.call > 0
    kinds = {(r["kind"], r["blocks"]) for r in data["results"]["schedules"]}
    assert kinds == {("copy", 1), ("combine", 1), ("copy", 2)}
