"""Labs whose graded answers come from the student's own data files (labs 2 and 3), through the
instructor's cycle on a temporary copy of the course: a solved submission with its own data files
gets every automatic point, the same submission without them gets none."""

from __future__ import annotations

import nbformat
import pytest
from traitlets.config.loader import PyFileConfigLoader

from tests.labcourse import LABS, automatic_points, grade, released_course, solved, source_nb

#: lab -> (data files that travel with a submission, automatic points of the lab)
DATA_LABS = {
    "lab2": (("testjig.json", "allreduce.json"), 14),
    "lab3": (("logp.json", "barriers.json"), 10),
}
pytestmark = pytest.mark.timeout(900)


@pytest.mark.parametrize("lab", DATA_LABS)
def test_data_files_are_the_students_own(lab):
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(LABS)).load_config()
    assert sorted(cfg.Autograde.exclude_overwriting[lab]) == sorted(DATA_LABS[lab][0])
    assert source_nb(lab).metadata.kernelspec.name == "python3"


@pytest.fixture(scope="module")
def graded(tmp_path_factory, released_labs):
    course = released_course(tmp_path_factory.mktemp("course") / "labs", released_labs, labs=list(DATA_LABS))
    for lab, (data, _) in DATA_LABS.items():
        nb = solved(course, lab)
        for student, with_data in (("alice", True), ("nodata", False)):
            folder = course / "submitted" / student / lab
            folder.mkdir(parents=True)
            nbformat.write(nb, folder / f"{lab}.ipynb")
            if with_data:
                for name in data:  # a student's own measurement: same content, own file
                    (folder / name).write_text((LABS / "source" / lab / name).read_text() + "\n")
    rows, log = grade(course, DATA_LABS, cell_timeout=60)
    return rows, log


@pytest.mark.slow
@pytest.mark.parametrize("lab", DATA_LABS)
def test_solved_gets_every_automatic_point_and_no_data_gets_none(graded, lab):
    rows, log = graded
    data, total = DATA_LABS[lab]
    assert sum(automatic_points(source_nb(lab)).values()) == total
    alice, nodata = rows["alice", lab], rows["nodata", lab]
    assert alice["status"] == "graded" and float(alice["auto_score"]) == total, (alice, log)
    assert alice["data"] == "; ".join(f"{name}: own" for name in data)
    assert nodata["status"] == "graded" and float(nodata["auto_score"]) == 0, nodata
    assert nodata["data"] == "; ".join(f"{name}: missing" for name in data)
