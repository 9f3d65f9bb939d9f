"""The per-transfer tools take either schedule form: executor (under mpiexec), the simulator
under NBL, LogP simulation, drawing."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from netmodels.algorithms import arrays, registry  # noqa: E402
from netmodels.figures.draw import draw_step  # noqa: E402
from netmodels.models import logp  # noqa: E402
from netmodels.models.nbl import NBLModel  # noqa: E402
from netmodels.simulate import simulate  # noqa: E402
from tests.mpirun import run_mpi_ok  # noqa: E402

MODEL = NBLModel(54e-6, 1.54e-6 / 8, {2: 1.1, 3: 1.3, 4: 3.9, 6: 5.1}, 0.25e-6 / 8, 0.37e-6 / 8)


@pytest.mark.parametrize("p", [1, 4, 7, 12])
def test_cost_and_logp_simulate_take_either_form(p):
    for name in ("tree", "snake", "fence", "ring", "rabenseifner"):
        a = registry.build("allreduce." + name, p, 3 * p + 1)
        s = a.to_schedule()
        assert np.array_equal(simulate(a, MODEL).step_times, simulate(s, MODEL).step_times)
    m = logp.LogP(5e-6, 1e-6, 2e-6, p)
    for alg in registry.algorithms("barrier"):
        a = alg.build(p)
        assert np.array_equal(simulate(a, m).finish, simulate(a.to_schedule(), m).finish)


def test_draw_step_takes_either_form():
    a = registry.build("allreduce.fence", 12, 24, block=4, mesh=(4, 3))
    s = a.to_schedule()
    for t in (0, s.nsteps // 2):
        ax1, ax2 = draw_step(s, t), draw_step(a, t)
        assert len(ax1.patches) == len(ax2.patches) > 12          # nodes plus one arrow per message
        assert [x.get_text() for x in ax1.texts] == [x.get_text() for x in ax2.texts]
    matplotlib.pyplot.close("all")


SCRIPT = """
import numpy as np
from mpi4py import MPI
from mpi_exercises.executor import Executor
from netmodels.algorithms import registry
comm = MPI.COMM_WORLD
p, r = comm.Get_size(), comm.Get_rank()
for name in ("allreduce.ring", "allreduce.rabenseifner", "allreduce.recursive_doubling", "allreduce.binomial"):
    for n in (0, 1, p + 2, 37):
        a = registry.build(name, p, n)
        x = np.random.default_rng(r + 10 * n).random(n)
        want = np.empty_like(x)
        comm.Allreduce(x, want, MPI.SUM)
        with Executor(comm, a, np.float64, MPI.SUM) as ex:
            ex.run(x)
        assert np.allclose(x, want, rtol=1e-12, atol=0), (name, n)
with Executor(comm, registry.build("barrier.dissemination", p), np.float64) as ex:
    ex.run(np.empty(0))
if r == 0:
    print("FORMS OK")
"""


@pytest.mark.mpi
@pytest.mark.parametrize("nprocs", [1, 3, 4])
def test_executor_runs_array_schedules_against_mpi_allreduce(nprocs):
    res = run_mpi_ok(nprocs, ["-c", SCRIPT], timeout=120, sleep_while_waiting=True)
    assert "FORMS OK" in res.stdout


def test_executor_refuses_other_objects():
    from mpi_exercises.executor import Executor

    class FakeComm:
        def Get_size(self):
            return 2

        def Get_rank(self):
            return 0

    with pytest.raises(ValueError, match="Schedule or an ArraySchedule"):
        Executor(FakeComm(), [(0, 1)], np.float64)
    assert arrays.as_transfers(registry.build("allreduce.ring", 2, 4)).nprocs == 2


def test_local_copies_cost_no_link_under_nbl():
    # the multilevel alltoall packs at its leaders with local copies: they are not messages
    s = registry.build("alltoall.multilevel", 8, 3, nodes=4).to_schedule()
    assert any(not tr.is_message for step in s.steps for tr in step)
    m = NBLModel.nominal(1e-6, 1e-8, 2e-9, 3e-9)
    without = type(s)(s.name, s.nprocs, s.nelems,
                      [tuple(tr for tr in step if tr.is_message) for step in s.steps], s.meta)
    assert simulate(s, m).time == simulate(without, m).time > 0
