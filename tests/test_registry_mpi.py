"""Every algorithm of the registry runs under MPI through its front door and agrees with
MPI's own collective (tests/registry_sweep.py on P = 1 to 5 ranks, in one mpiexec job:
tests/by_size.py); a timeout turns a deadlock into a failure."""

import pytest

from tests.mpirun import run_by_size


@pytest.mark.mpi
def test_every_registry_entry_matches_mpi():
    from netmodels.algorithms import registry

    # on 1 to 5 ranks, one job (tests/by_size.py)
    run_by_size([1, 2, 3, 4, 5], ["tests/registry_sweep.py"], f"REGISTRY OK {len(registry.names())} ",
                timeout=600)
