"""Each lab declared once (mpi_exercises.labspec): nbgrader's configuration, the labs' loader and
the release read the declaration; the declaration agrees with an independent list of the labs'
files (tests/test_labdata.py), with the source folders' reference copies, and its graded cells
(read from the notebooks) with the cell tables of labs/README.md."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest
from traitlets.config.loader import PyFileConfigLoader

from mpi_exercises import labdata, labspec
from tests.mpirun import ROOT
from tests.test_labdata import FILES

LABS_DIR = ROOT / "labs"
SOURCE = LABS_DIR / "source"


def test_the_declaration_names_every_file_each_lab_reads_with_its_kind():
    declared = {(lab.name, name): kind for lab in labspec.LABS.values() for name, kind in lab.files.items()}
    assert declared == FILES
    assert labdata.KINDS is labspec.KINDS and set(FILES.values()) <= set(labspec.KINDS)
    assert list(labspec.LABS) == sorted(p.name for p in SOURCE.iterdir() if any(p.glob("*.ipynb")))


def test_nbgrader_keeps_the_declared_files_of_the_student():
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(LABS_DIR)).load_config()
    expected = {}
    for lab, name in FILES:                       # in the order a lab hands them in
        expected.setdefault(lab, []).append(name)
    assert dict(cfg.Autograde.exclude_overwriting) == expected


@pytest.mark.parametrize("lab", list(labspec.LABS))
def test_each_source_folder_ships_exactly_its_declared_files(lab):
    """A data file in the source folder that is not declared would replace the student's own when
    grading; a declared one missing would leave the released notebook without its data."""
    shipped = sorted(p.name for p in (SOURCE / lab).iterdir() if p.suffix == ".json")
    assert shipped == sorted(labspec.LABS[lab].data_files)


def _readme_tables() -> dict[str, tuple[dict[str, float], int, int]]:
    """``{lab: ({grade_id: points}, automatic, written)}`` from the ``## Lab N`` sections of
    labs/README.md: each cell table's rows, and the points the heading announces."""
    text = (LABS_DIR / "README.md").read_text(encoding="utf-8")
    out = {}
    for m in re.finditer(r"^## Lab (\d+): .*?\((\d+) automatic \+ (\d+) written points\)\n(.*?)(?=^## |\Z)",
                         text, flags=re.M | re.S):
        cells = {}
        for row in re.findall(r"^\| (`[^|]*) \| (\d+)(?: each)? \|", m.group(4), flags=re.M):
            for grade_id in re.findall(r"`([^`]+)`", row[0]):
                cells[grade_id] = float(row[1])
        out[f"lab{m.group(1)}"] = cells, int(m.group(2)), int(m.group(3))
    return out


@pytest.mark.parametrize("lab", list(labspec.LABS))
def test_the_readme_lists_every_graded_cell_with_its_points(lab):
    cells, automatic, written = _readme_tables()[lab]
    graded = labspec.LABS[lab].graded_cells(SOURCE)
    assert cells == {grade_id: points for _, grade_id, points, _ in graded}
    assert automatic == sum(points for *_, points, by_hand in graded if not by_hand)
    assert written == sum(points for *_, points, by_hand in graded if by_hand)


@pytest.mark.cli
def test_the_release_refuses_a_lab_without_the_reference_copy_of_its_data(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(SOURCE / "lab2", course / "source" / "lab2")
    shutil.copy(LABS_DIR / "nbgrader_config.py", course)
    (course / "source" / "lab2" / "allreduce.json").unlink()
    run = subprocess.run([sys.executable, str(LABS_DIR / "release.py"), "--course", str(course), "--lab", "lab2"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and not (course / "release").exists(), run.stderr
    assert run.stderr.strip().splitlines() == [
        f"release.py: {course / 'source' / 'lab2'} lacks allreduce.json: the reference copy of each data file lab2 "
        "declares (mpi_exercises/labspec.py), which its notebook reads"]


def test_the_readme_names_the_files_each_lab_hands_in():
    """The table of "Collecting submissions" in labs/README.md: each lab's row names exactly its
    declared data files."""
    text = (LABS_DIR / "README.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| lab (\d+) \| (.*) \|$", text, flags=re.M))
    assert sorted(rows) == sorted(name.removeprefix("lab") for name in labspec.LABS)
    for number, row in rows.items():
        assert set(re.findall(r"`([\w.-]+\.json)`", row)) == set(labspec.LABS[f"lab{number}"].data_files), row


@pytest.mark.parametrize("lab", sorted(labspec.LABS))
def test_a_labs_commands_run_in_order_each_after_the_files_it_reads(lab):
    """The zip's README lists them to run one after the other: lab 5's predict reads the
    pingpong.json and logp.json that two other commands write, so it comes after both."""
    commands = labspec.LABS[lab].commands()
    assert len(commands) == len(labspec.LABS[lab].files)
    writes = {name: next(i for i, c in enumerate(commands) if c.endswith(f"--json {name}"))
              for name in labspec.LABS[lab].files}
    for i, command in enumerate(commands):
        for name, j in writes.items():
            if name in command.removesuffix(f"--json {name}") and j != i:
                assert j < i, f"{lab}: {command!r} reads {name} before {commands[j]!r} writes it"
