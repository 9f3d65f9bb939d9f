"""Hand-ins and calibrations that are not plain files: a named pipe, a link to /dev/zero, a link
to another student's file, a folder, a huge (sparse) file, a student's folder linked to another
student's.  Every reader (netmodels.outputs.read_input, the labs' loader, the class report,
grade.py's checks, predict --calibration on two ranks) refuses each one with one line, at once:
no reader blocks on the pipe, none reads /dev/zero until memory runs out, and none draws
another student's measurement as this student's machine."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from mpi_exercises import labdata
from netmodels.outputs import MAX_INPUT_BYTES, Refused, read_input
from tests.mpirun import ROOT, run_mpi
from tests.test_class_report import make_course

SOURCE = ROOT / "labs" / "source"
PINGPONG = SOURCE / "lab1" / "pingpong.json"

#: how a hand-in is spoiled -> a fragment of the one line that refuses it
HOSTILE = {
    "fifo": "a named pipe, not a file",
    "zero": "a symbolic link, not a file",
    "other": "a symbolic link, not a file",
    "folder": "a folder, not a file",
    "huge": f"too large: {2**40:,} bytes ({2**20:,} MiB), more than the {MAX_INPUT_BYTES:,} bytes",
}


def spoil(how: str, path: Path, other: Path) -> None:
    """Make ``path`` the hostile file ``how`` (``other``: another student's file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if how == "fifo":
        os.mkfifo(path)
    elif how == "zero":
        path.symlink_to("/dev/zero")
    elif how == "other":
        path.symlink_to(other)
    elif how == "folder":
        path.mkdir()
    elif how == "huge":                   # sparse: 1 TiB that takes no room on the disk
        with open(path, "wb") as fh:
            fh.truncate(2**40)
    else:
        raise AssertionError(how)


# ---------------------------------------------------------------- the reader itself
@pytest.mark.timeout(20)
@pytest.mark.parametrize("how", HOSTILE)
def test_the_reader_refuses_at_once(tmp_path, how):
    path = tmp_path / "pingpong.json"
    spoil(how, path, PINGPONG)
    start = time.monotonic()
    with pytest.raises(Refused) as err:
        read_input(path)
    assert time.monotonic() - start < 1
    assert str(err.value).startswith(f"{path}: ") and HOSTILE[how] in str(err.value)
    assert "\n" not in str(err.value)


def test_the_reader_reads_a_plain_file_and_refuses_a_linked_folder_under_its_root(tmp_path):
    mine, theirs = tmp_path / "submitted" / "mine" / "lab1", tmp_path / "submitted" / "theirs" / "lab1"
    theirs.mkdir(parents=True)
    (theirs / "pingpong.json").write_bytes(PINGPONG.read_bytes())
    mine.parent.mkdir()
    mine.symlink_to(theirs)
    assert read_input(theirs / "pingpong.json", root=tmp_path) == PINGPONG.read_bytes()
    assert read_input(mine / "pingpong.json") == PINGPONG.read_bytes()      # no root: the caller's own path
    with pytest.raises(Refused, match="a folder on its path is a symbolic link"):
        read_input(mine / "pingpong.json", root=tmp_path)
    with pytest.raises(ValueError, match="inside root"):
        read_input(tmp_path / "submitted" / ".." / "x.json", root=tmp_path)
    with pytest.raises(ValueError, match="limit must be"):
        read_input(PINGPONG, -1)
    with pytest.raises(Refused, match="too large"):          # the bound is the one asked for
        read_input(PINGPONG, PINGPONG.stat().st_size - 1)
    assert read_input(PINGPONG, PINGPONG.stat().st_size) == PINGPONG.read_bytes()


# ---------------------------------------------------------------- the labs' loader
@pytest.mark.timeout(20)
@pytest.mark.parametrize("how", HOSTILE)
def test_the_labs_loader_refuses_in_one_line(tmp_path, monkeypatch, how):
    monkeypatch.chdir(tmp_path)
    spoil(how, tmp_path / "pingpong.json", PINGPONG)
    with pytest.raises(labdata.LabDataError) as err:
        labdata.load("pingpong.json", "pingpong")
    msg = str(err.value)
    assert msg.startswith("pingpong.json: ") and HOSTILE[how] in msg and "\n" not in msg, msg
    assert msg.endswith("--json pingpong.json"), msg


def test_the_labs_loader_refuses_json_nested_too_deeply(tmp_path):
    (tmp_path / "pingpong.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(labdata.LabDataError, match="nested too deeply"):
        labdata.load(tmp_path / "pingpong.json", "pingpong")


# ---------------------------------------------------------------- grade.py's checks
def _grade():
    sys.path.insert(0, str(ROOT / "labs"))
    import grade

    return grade


@pytest.mark.timeout(20)
@pytest.mark.parametrize("how", HOSTILE)
def test_grades_data_column_says_refused(tmp_path, how):
    grade = _grade()
    course = tmp_path / "course"
    (course / "source" / "lab1").mkdir(parents=True)
    (course / "source" / "lab1" / "pingpong.json").write_bytes(PINGPONG.read_bytes())
    victim = course / "submitted" / "victim" / "lab1" / "pingpong.json"
    victim.parent.mkdir(parents=True)
    victim.write_text(PINGPONG.read_text() + "\n")
    spoil(how, course / "submitted" / "mallory" / "lab1" / "pingpong.json", victim)
    lab = grade.Lab("lab1", [], data_files=["pingpong.json"])
    state = grade.data_status(course, lab, course / "submitted" / "mallory" / "lab1")
    assert state.startswith("pingpong.json: refused (") and HOSTILE[how] in state, state
    assert grade.data_status(course, lab, victim.parent) == "pingpong.json: own"
    victim.write_bytes(PINGPONG.read_bytes())
    assert grade.data_status(course, lab, victim.parent) == "pingpong.json: reference copy"


def test_grade_refuses_a_student_folder_linked_to_another_and_a_huge_file(tmp_path):
    grade = _grade()
    course = tmp_path / "course"
    lab = grade.Lab("lab1", ["lab1"], data_files=["pingpong.json"])
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "x = 1", metadata={"nbgrader": {"grade_id": "a", "solution": True, "grade": False}})])
    victim = course / "submitted" / "victim" / "lab1"
    victim.mkdir(parents=True)
    nbformat.write(nb, victim / "lab1.ipynb")
    assert grade.check_notebooks(victim, lab, course) is None
    (course / "submitted" / "mallory").symlink_to(course / "submitted" / "victim")
    linked = course / "submitted" / "mallory" / "lab1"
    status = grade.check_notebooks(linked, lab, course)
    assert status == "refused: lab1.ipynb: a folder on its path is a symbolic link, not a folder (a link is " \
                     "never followed)", status
    with open(victim / "pingpong.json", "wb") as fh:
        fh.truncate(MAX_INPUT_BYTES + 1)
    assert grade.check_notebooks(victim, lab, course) == f"refused: pingpong.json is larger than {MAX_INPUT_BYTES} bytes"


# ---------------------------------------------------------------- the class report
@pytest.mark.cli
def test_the_class_report_lists_each_hostile_hand_in_and_draws_none(tmp_path):
    students = ["victim", *HOSTILE, "linked"]
    course = make_course(tmp_path, students)
    victim = course / "submitted" / "victim" / "lab1"
    for how in HOSTILE:
        path = course / "submitted" / how / "lab1" / "pingpong.json"
        path.unlink()
        spoil(how, path, victim / "pingpong.json")
    linked = course / "submitted" / "linked"
    for part in linked.iterdir():           # the whole student folder is a link to the victim's
        for f in part.iterdir():
            f.unlink()
        part.rmdir()
    linked.rmdir()
    linked.symlink_to(victim.parent)
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, str(ROOT / "labs" / "class_report.py"), "--lab", "lab1", "--course",
                          str(course), "--out", str(out), "--names"], capture_output=True, text=True, timeout=180)
    assert run.returncode == 0 and not run.stderr, run.stderr
    with open(out / "lab1.csv", newline="", encoding="utf-8") as fh:
        rows = {r["student"]: r for r in csv.DictReader(fh)}
    assert rows["victim"]["status"] == "used"
    for how, fragment in HOSTILE.items():
        row = rows[how]
        assert row["status"] == "not used", row
        assert row["problems"].startswith(f"pingpong.json: {fragment}") and "\n" not in row["problems"], row
        assert row["alpha_s"] == "", row                       # nothing drawn, least of all the victim's
    row = rows["linked"]
    assert row["status"] == "not used" and "a folder on its path is a symbolic link" in row["problems"], row
    assert "victim" not in row["problems"] and str(tmp_path) not in row["problems"], row


# ---------------------------------------------------------------- predict --calibration
@pytest.mark.timeout(20)
@pytest.mark.parametrize("how", HOSTILE)
def test_load_calibration_refuses_in_one_line(tmp_path, how):
    from mpi_exercises.bench import predict

    path = tmp_path / "pingpong.json"
    spoil(how, path, PINGPONG)
    with pytest.raises(ValueError) as err:
        predict.load_calibration([path], 2)
    assert str(err.value).startswith(f"--calibration {path}: {HOSTILE[how]}"), err.value


@pytest.mark.mpi
@pytest.mark.parametrize("how", HOSTILE)
def test_predict_on_two_ranks_refuses_a_hostile_calibration_in_one_line(tmp_path, how):
    path = tmp_path / "pingpong.json"
    spoil(how, path, PINGPONG)
    res = run_mpi(2, ["-m", "mpi_exercises", "predict", "--no-progress", "--calibration", str(path)], timeout=30)
    assert res.returncode == 2, res.stdout + res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"predict: error: --calibration {path}: {HOSTILE[how]}"), lines


def test_the_stored_calibration_inputs_still_load():
    """What the refusals must not cost: the lab's own ping-pong and LogP files, read as before."""
    from mpi_exercises.bench import predict

    c = predict.load_calibration([PINGPONG, SOURCE / "lab3" / "logp.json"], 2)
    assert set(c.models) == {"alpha-beta", "alpha-beta-segmented", "nbl", "loggp", "loggp-segmented", "loggops"}
    assert json.loads(read_input(PINGPONG)) == json.loads(PINGPONG.read_text())
