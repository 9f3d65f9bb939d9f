"""Every algorithm of the registry runs under MPI through its front door and agrees with
MPI's own collective (tests/registry_sweep.py, one mpiexec job per P); a timeout turns a
deadlock into a failure."""

import pytest

from tests.mpirun import run_mpi


@pytest.mark.mpi
@pytest.mark.parametrize("nprocs", [1, 2, 3, 4, 5])
def test_every_registry_entry_matches_mpi(nprocs):
    from netmodels.algorithms import registry

    res = run_mpi(nprocs, ["tests/registry_sweep.py"], timeout=240, sleep_while_waiting=True)
    assert res.returncode == 0 and f"REGISTRY OK {len(registry.names())} " in res.stdout, \
        f"exit {res.returncode}\n--- stdout\n{res.stdout}\n--- stderr\n{res.stderr[-3000:]}"
