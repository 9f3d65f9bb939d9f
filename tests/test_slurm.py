"""The cluster path: job scripts under a real (one-machine) Slurm, and their refusals.

The Slurm tests start munged, slurmctld and slurmd in a temporary folder
(:mod:`tests.slurm_local`), submit ``cluster/pingpong.sbatch`` on 2 ranks with ``sbatch``, wait
for the job to end (``LocalSlurm.sbatch``) and read its JSON.  Without Slurm (or without root) they are skipped on a
developer's machine and fail under CI=true, where ``.ci/run`` installs ``slurm-wlm``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from .slurm_local import LocalSlurm, missing

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(sys.prefix)
SCRIPTS = sorted((ROOT / "cluster").glob("*.sbatch"))

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def slurm():
    reason = missing()
    if reason:
        msg = f"local Slurm unavailable: {reason}"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(msg + ": the Slurm test is required in CI")
        pytest.skip(msg)
    # a short folder (tmp_path's can be too long for the sockets in it, see LocalSlurm)
    folder = Path(tempfile.mkdtemp(prefix="slurm-"))
    try:
        with LocalSlurm(folder) as cluster:
            yield cluster
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _kit_env(results: Path, **extra) -> dict:
    return {"KIT_ROOT": str(ROOT), "KIT_VENV": str(VENV), "KIT_RESULTS": str(results), **extra}


def test_pingpong_job_writes_its_json_with_the_placement(slurm, tmp_path):
    res = slurm.sbatch(["-N", "1", "-n", "2", "--ntasks-per-node=2",
                        str(ROOT / "cluster" / "pingpong.sbatch"), "--sizes", "0,8,1k,64k",
                        "--iterations", "200", "--no-progress"],
                       cwd=tmp_path, env=_kit_env(tmp_path / "results"), timeout=240)
    job = res.stdout.strip().split(";")[0]
    out = "\n".join(p.read_text() for p in tmp_path.glob("kit-pingpong-*.out"))
    assert res.returncode == 0, f"sbatch exited {res.returncode}: {res.stderr}\n{out}\n{slurm.log()}"
    files = list((tmp_path / "results").glob("pingpong-*.json"))
    assert [f.name for f in files] == [f"pingpong-kit-{job}.json"], out
    data = json.loads(files[0].read_text())
    place = data["environment"]["placement"]
    assert data["benchmark"] == "pingpong" and data["environment"]["ranks"] == 2
    assert place["slurm_job_id"] == job and place["launcher"].startswith("srun")
    assert place["ranks_per_node"] == [2] and place["node_of_rank"] == [0, 0]
    assert data["oversubscribed"] is place["oversubscribed"] is (2 > place["nodes"][0]["cores"])
    sizes = [r["bytes"] for r in data["results"]]
    assert sizes == [0, 8, 1024, 65536]
    fit = data["fit"]["alpha_beta"]
    assert fit["alpha_s"] > 0 and fit["beta_s_per_byte"] > 0


def test_mpiexec_inside_the_allocation_and_info_under_srun(slurm, tmp_path):
    res = slurm.sbatch(["-N", "1", "-n", "2", str(ROOT / "cluster" / "info.sbatch")], cwd=tmp_path,
                       env=_kit_env(tmp_path, KIT_LAUNCHER="mpiexec"), timeout=120)
    job = res.stdout.strip().split(";")[0]
    assert res.returncode == 0, res.stderr + slurm.log()
    info = json.loads((tmp_path / f"info-kit-{job}.json").read_text())
    assert info["placement"]["launcher"] == "mpiexec (Hydra) inside a Slurm allocation"
    assert info["ranks"] == 2 and info["mpi_vendor"].startswith("MPICH")
    srun = slurm.run(["srun", "--mpi=pmi2", "-n", "2", sys.executable, "-m", "mpi_exercises", "info"],
                     cwd=ROOT, timeout=120)
    assert "launcher      srun (PMI-2)" in srun.stdout and "ranks         2 on 1 node(s)" in srun.stdout


def test_more_ranks_than_the_allocation_stop_with_one_line(slurm, tmp_path):
    res = slurm.sbatch(["-N", "1", "-n", "1", str(ROOT / "cluster" / "pingpong.sbatch")],
                       cwd=tmp_path, env=_kit_env(tmp_path, KIT_RANKS="2"), timeout=120)
    assert res.returncode != 0
    lines = "".join(p.read_text() for p in tmp_path.glob("kit-pingpong-*.out")).strip().splitlines()
    assert lines == ["kit-job: 2 ranks asked for, but the allocation has 1 tasks"]
    assert not list(tmp_path.glob("pingpong-*.json"))


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_a_job_script_run_without_an_allocation_stops_with_one_line(script):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    res = subprocess.run([str(script)], capture_output=True, text=True, env=env, cwd=ROOT,   # executable
                         timeout=30)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.strip().splitlines() == [
        f"kit: no Slurm allocation: submit with 'sbatch cluster/{script.name}' from the repository root"]


def test_a_results_folder_that_cannot_be_made_stops_with_one_line():
    env = {**os.environ, "SLURM_JOB_ID": "1", "SLURM_NTASKS": "1", "KIT_RESULTS": "/proc/kit-results",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}
    res = subprocess.run([str(ROOT / "cluster" / "kit-job.sh"), "pingpong"], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=30)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.strip().splitlines() == [
        "kit-job: cannot create the results folder /proc/kit-results (set KIT_RESULTS to a writable folder)"]


def test_every_benchmark_has_a_job_script():
    from mpi_exercises.__main__ import COMMANDS

    wanted = {"pingpong", "logp", "nbl-testjig", "bench-allreduce", "info"}
    assert wanted <= {s.stem for s in SCRIPTS}
    assert {s.stem for s in SCRIPTS} <= set(COMMANDS) | {
        "bench-allgather", "bench-alltoall", "lop", "predict"}


def test_kit_job_refuses_bad_settings(tmp_path):
    env = dict(os.environ, SLURM_JOB_ID="1", SLURM_NTASKS="2", SLURM_SUBMIT_DIR=str(ROOT),
               KIT_VENV=str(VENV))
    script = str(ROOT / "cluster" / "kit-job.sh")
    for extra, line in [({"KIT_RANKS": "0"}, "kit-job: KIT_RANKS must be a positive integer, got '0'"),
                        ({"KIT_LAUNCHER": "ssh"}, "kit-job: KIT_LAUNCHER must be srun or mpiexec, got 'ssh'"),
                        ({"KIT_ROOT": str(tmp_path)},
                         f"kit-job: {tmp_path} is not the course kit: submit from the repository "
                         "root or set KIT_ROOT")]:
        res = subprocess.run(["bash", script, "pingpong"], capture_output=True, text=True,
                             env={**env, **extra, "KIT_RESULTS": str(tmp_path)}, timeout=30)
        assert (res.returncode, res.stderr.strip()) == (2, line)
