"""Lab 3 ("Measure your LogP parameters") through the instructor's cycle on a temporary copy of the course:
release without solutions, a solved submission gets every automatic point from its own data
files, a submission without its data files gets none of the data-dependent points."""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests.mpirun import ROOT

LABS = ROOT / "labs"
LAB = "lab3"
DATA = ("logp.json", "barriers.json")
SOLUTION = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$")
pytestmark = pytest.mark.timeout(600)


def run(cmd, cwd, timeout=500):
    # nbgrader runs `alembic` (next to this Python) when it creates a gradebook
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    res = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert res.returncode == 0, f"{cmd} exited {res.returncode}\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res


def meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def source_nb():
    return nbformat.read(LABS / "source" / LAB / f"{LAB}.ipynb", as_version=4)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    dest = tmp_path_factory.mktemp("course") / "labs"
    dest.mkdir(parents=True)
    for f in LABS.glob("*.py"):
        shutil.copy(f, dest / f.name)
    shutil.copytree(LABS / "source" / LAB, dest / "source" / LAB,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    run([str(Path(sys.executable).with_name("nbgrader")), "generate_assignment", LAB, "--force"], dest)
    return dest


def test_data_files_are_the_students_own():
    from traitlets.config.loader import PyFileConfigLoader

    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(LABS)).load_config()
    assert sorted(cfg.Autograde.exclude_overwriting[LAB]) == sorted(DATA)
    assert source_nb().metadata.kernelspec.name == "python3"


def test_release_has_no_solution_and_no_hidden_test(course):
    secret, public = set(), set()
    for cell in source_nb().cells:
        inside = False
        for line in cell.source.splitlines():
            s = line.strip()
            if s in ("### BEGIN SOLUTION", "### BEGIN HIDDEN TESTS"):
                inside = True
            elif s in ("### END SOLUTION", "### END HIDDEN TESTS"):
                inside = False
            elif s:
                (secret if inside else public).add(s)
    secret -= public
    assert len(secret) > 30
    release = nbformat.read(course / "release" / LAB / f"{LAB}.ipynb", as_version=4)
    lines = {line.strip() for c in release.cells for line in c.source.splitlines()}
    assert not sorted(secret & lines)
    assert all(c.outputs == [] for c in release.cells if c.cell_type == "code")
    assert sorted(p.name for p in (course / "release" / LAB).iterdir()) == sorted((f"{LAB}.ipynb", *DATA))


@pytest.mark.slow
def test_solved_gets_every_automatic_point_and_no_data_gets_none(course):
    src = source_nb()
    nb = nbformat.read(course / "release" / LAB / f"{LAB}.ipynb", as_version=4)
    by_id = {meta(c).get("grade_id"): c for c in src.cells}
    for cell in nb.cells:
        if meta(cell).get("solution") and cell.cell_type == "code":
            ref = by_id[meta(cell)["grade_id"]].source
            cell.source = "\n".join(line for line in ref.splitlines() if not SOLUTION.match(line))
    for student, with_data in (("alice", True), ("nodata", False)):
        folder = course / "submitted" / student / LAB
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{LAB}.ipynb")
        if with_data:
            for name in DATA:  # a student's own measurement: same content, own file
                (folder / name).write_text((LABS / "source" / LAB / name).read_text() + "\n")
    run([sys.executable, str(course / "grade.py"), "--course", str(course), "--lab", LAB,
         "--cell-timeout", "60", "--student-timeout", "300"], course)
    with open(course / "grades.csv", newline="") as fh:
        table = {row["student"]: row for row in csv.DictReader(fh) if row["lab"] == LAB}
    auto = {meta(c)["grade_id"]: float(meta(c)["points"]) for c in src.cells
            if meta(c).get("grade") and not meta(c).get("solution")}
    alice, nodata = table["alice"], table["nodata"]
    assert alice["status"] == "graded" and float(alice["auto_score"]) == sum(auto.values()) == 10, alice
    assert alice["data"] == "logp.json: own; barriers.json: own"
    assert nodata["status"] == "graded" and float(nodata["auto_score"]) == 0, nodata
    assert nodata["data"] == "logp.json: missing; barriers.json: missing"
