"""Helpers for tests of the instructor's cycle: a temporary copy of the course, solved
submissions built from the source notebooks, and grading through ``labs/grade.py`` or the
Makefile's instructor targets.

Grading runs each submission in bubblewrap's sandbox: without ``bwrap`` the grading tests
are skipped on a developer's machine and fail under CI=true (``.ci/run`` installs Debian's
``bubblewrap``)."""

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
ALL_LABS = sorted(p.parent.name for p in LABS.glob("source/*/*.ipynb"))
SOLUTION = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$")


def run(cmd, cwd, timeout=300):
    """Run ``cmd`` with this Python's bin folder on PATH (nbgrader calls ``alembic``); assert success."""
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    res = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert res.returncode == 0, f"{cmd} exited {res.returncode}\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res


def nbgrader(*args, cwd):
    return run([str(Path(sys.executable).with_name("nbgrader")), *args], cwd)


def require_sandbox() -> None:
    """Skip (fail under CI=true) where grading cannot sandbox the submissions."""
    sys.path.insert(0, str(LABS))
    try:
        import grading_sandbox
    finally:
        sys.path.remove(str(LABS))
    why = grading_sandbox.unavailable()
    if why:
        msg = f"grading needs its sandbox: {why} (apt-get install bubblewrap)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(msg + ": required in CI")
        pytest.skip(msg)


COURSE_FILES = ("nbgrader_config.py", "grade.py", "release.py", *sorted(p.name for p in LABS.glob("grading_*.py")),
                "feedback_page.py", "page_safety.py")


# An attack: a kernel replaces every file of its run/ folder (and of matplotlib's, where the grader
# once copied its font list before each start) by a link to the gradebook, then dies, so that the
# grader, restarting it, would write through the links.
_GRADEBOOK_LINKS = """
import os
gradebook = {gradebook}
run = os.path.join(os.path.dirname(os.getcwd()), "run")
for folder in (run, os.path.join(run, "matplotlib"), os.environ.get("MPLCONFIGDIR", "/tmp/matplotlib")):
    os.makedirs(folder, exist_ok=True)
    for name in set(os.listdir(folder)) | {{"kernel.json", "fontlist-v390.json", "fontlist-v3.11.0.json", *{names!r}}}:
        path = os.path.join(folder, name)
        try:
            os.unlink(path)
        except OSError:
            pass
        try:
            os.symlink(gradebook, path)
        except OSError:
            pass
os._exit(1)
"""


def gradebook_links(gradebook: str, names=()) -> str:
    """A cell's code for that attack: ``gradebook`` is a Python expression of the gradebook's path
    in the kernel, ``names`` more file names to replace in each folder."""
    return _GRADEBOOK_LINKS.format(gradebook=gradebook, names=tuple(names))


def release_every_lab(dest: Path) -> subprocess.CompletedProcess:
    """A copy of the course (config, grading helpers, templates, source/) at ``dest``, every
    lab released there by ``make release``."""
    dest.mkdir(parents=True)
    for name in COURSE_FILES:
        shutil.copy(LABS / name, dest / name)
    shutil.copytree(LABS / "templates", dest / "templates")
    shutil.copytree(LABS / "source", dest / "source",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    return make(dest, "release", timeout=600)


def released_course(dest: Path, released: Path, labs=ALL_LABS) -> Path:
    """A course at ``dest`` holding ``labs`` as ``released`` (the ``released_labs`` fixture)
    holds them: source, student version, and the gradebook their release made."""
    dest.mkdir(parents=True)
    for name in (*COURSE_FILES, "gradebook.db"):
        shutil.copy(released / name, dest / name)
    shutil.copytree(released / "templates", dest / "templates")
    for lab in labs:
        for part in ("source", "release"):
            shutil.copytree(released / part / lab, dest / part / lab)
    return dest


def grade_meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def cell_by_id(nb, grade_id):
    for cell in nb.cells:
        if grade_meta(cell).get("grade_id") == grade_id:
            return cell
    raise KeyError(grade_id)


def replace(nb, grade_id, old, new):
    """Replace the first ``old`` by ``new`` in the cell ``grade_id`` of ``nb`` (which must hold it)."""
    cell = cell_by_id(nb, grade_id)
    assert old in cell.source, (grade_id, old)
    cell.source = cell.source.replace(old, new, 1)


def source_nb(lab):
    return nbformat.read(LABS / "source" / lab / f"{lab}.ipynb", as_version=4)


def hidden_lines(nb) -> list[str]:
    """Lines of the hidden tests of ``nb`` (a source notebook) that appear nowhere else in it
    (over 15 characters): what no student version or feedback page may show."""
    hidden, public = set(), set()
    for cell in nb.cells:
        inside = False
        for line in cell.source.splitlines():
            s = line.strip()
            if "BEGIN HIDDEN TESTS" in s or "END HIDDEN TESTS" in s:
                inside = "BEGIN" in s
            elif s:
                (hidden if inside else public).add(s)
    return sorted(s for s in hidden - public if len(s) > 15)


def points(nb) -> dict:
    """grade_id -> points of every graded cell."""
    return {grade_meta(c)["grade_id"]: float(grade_meta(c)["points"]) for c in nb.cells
            if grade_meta(c).get("grade")}


def automatic_points(nb) -> dict:
    """grade_id -> points of the autograded test cells (not the written answers)."""
    return {k: v for k, v in points(nb).items() if not grade_meta(cell_by_id(nb, k)).get("solution")}


def solved(course: Path, lab: str):
    """The student version of ``lab`` with every answer filled in from the source's solutions,
    without the figures of the reference answers (:func:`answer`)."""
    src = source_nb(lab)
    nb = nbformat.read(course / "release" / lab / f"{lab}.ipynb", as_version=4)
    for cell in nb.cells:
        meta = grade_meta(cell)
        if meta.get("solution"):
            ref = cell_by_id(src, meta["grade_id"]).source
            if cell.cell_type == "code":
                cell.source = answer(ref)
            else:
                cell.source += "\n\nMy answer: see my measurements above."
    return nb


#: the comment that starts, in a solution region, the figures of the reference answers: what
#: the instructor's notebook computes and glues into its written answers (labs/README.md), not
#: part of the answer a student writes
REFERENCE = "# figures of the reference answers"


def answer(source: str) -> str:
    """A solution cell's source as a student would hand it in: the solution markers removed, and
    the figures of the reference answers (from the line starting with :data:`REFERENCE` to the end
    of its solution region)."""
    kept, reference = [], False
    for line in source.splitlines():
        if line.startswith(REFERENCE):
            reference = True
        elif SOLUTION.match(line):
            reference = False
        elif not reference:
            kept.append(line)
    return "\n".join(kept)


def read_grades(course: Path) -> dict:
    """Rows of ``grades.csv`` by (student, lab)."""
    with open(course / "grades.csv", newline="") as fh:
        return {(row["student"], row["lab"]): row for row in csv.DictReader(fh)}


def make(course: Path, target: str, env=None, timeout: int = 900) -> subprocess.CompletedProcess:
    """``make TARGET`` of the repository's Makefile on ``course``, with this Python's venv."""
    venv = Path(sys.prefix)
    cmd = ["make", "-C", str(ROOT), "-o", str(venv / ".installed-requirements"), f"VENV={venv}",
           f"COURSE={course}", target]
    return subprocess.run(cmd, env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=timeout)


def grade(course: Path, labs, *, cell_timeout: int, timeout: int = 850, feedback_run: bool = False,
          jobs: int = 2):
    """Grade the submitted ``labs`` with ``grade.py``, ``jobs`` submissions at once; return (rows
    by (student, lab), log).  Without ``feedback_run`` (what tests of scores need) ``--scores-only``:
    no second run for the feedback pages, which tests/test_grading_feedback.py and
    test_grading_attacks.py check."""
    require_sandbox()
    res = run([sys.executable, str(course / "grade.py"), "--course", str(course),
               *[arg for lab in labs for arg in ("--lab", lab)],
               "--cell-timeout", str(cell_timeout), "--student-timeout", "300", "--jobs", str(jobs),
               *([] if feedback_run else ["--scores-only"])], course, timeout=timeout)
    return read_grades(course), res.stdout
