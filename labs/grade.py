"""Autograde every submission of the course and write one CSV gradebook.

    python labs/grade.py                     # what `make grade` runs (with --jobs 2)
    python labs/grade.py --cell-timeout 10   # shorter per-cell limit
    python labs/grade.py --jobs 4            # four submissions at once

Submissions live at ``submitted/<student>/<lab>/<lab>.ipynb`` with the data files the
student hands in.  Each submission is graded by its own ``nbgrader autograde`` process,
in its own process session, under a wall-clock limit: whatever one student hands in (a
notebook that hangs, prints megabytes, exits, is empty or is not JSON at all), the
batch goes on and every student gets a row in ``grades.csv``.  ``--jobs N`` grades N
submissions side by side (their processes share the gradebook one at a time):

    student, lab, status, data, sandbox, flags, auto_score, auto_max, score, max_score,
    manual_pending, then one column per graded cell (its ``grade_id``) with the points scored.

The submission's code runs in a sandbox (``grading_sandbox.py``): its kernel sees a scratch
copy of that submission and the lab's released data files, not the course.  nbgrader, which
records the scores, runs outside it.  Where no sandbox can be made, grading stops, unless
``UNSAFE_GRADING=1`` is set: the ``sandbox`` column then says the code ran unconfined.
``flags`` names the test cells that did not run as written (the grader's probe found IPython's
machinery, a built-in or numpy changed by the submission: ``grading_probe``), which
score 0, names of that machinery in the submission's own code, data files measured on a busy
machine and the test cells such data could not pass (``grading_csv.flags``).

``status`` is ``graded``, ``not submitted``, ``no <lab>.ipynb; found ...`` (what the folder
holds instead: a notebook renamed is not graded), ``unreadable notebook``,
``empty notebook``, ``refused`` (a link, a special file or a file too large), ``autograde
failed`` or ``stopped after N s``; anything but ``graded`` scores 0.
``data`` says whether each data file of the lab is the student's own, an unchanged copy
of the released reference file, missing, or refused (a link, a special file, too large).  Written answers stay empty (pending) until an
instructor grades them (``nbgrader formgrader``); ``score`` then includes them.  An answer
left as released is scored 0 by nbgrader itself and is not pending.

Each graded submission is then run once more, in a fresh sandbox, with its hidden tests
removed (``grading_feedback.run_for_feedback``): the feedback page (``make feedback``)
shows that run's outputs, the student's own results and the messages of the visible tests,
which the graded run cannot show once its kernel has seen hidden test code.

This file holds the command line and the flow; the grading processes (started, watched,
stopped, reaped; the gradebook taken in turn) are ``grading_processes``'s, the sandbox and its
scratch copy ``grading_sandbox``'s, the rows of ``grades.csv`` ``grading_csv``'s.
"""

from __future__ import annotations

if __name__ == "__main__":      # a Ctrl-C while the modules below load: one line, not a traceback
    import _signal                  # (built in: until the next line, a Ctrl-C ends it quietly)

    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
    from netmodels.starting import ctrl_c_in_one_line

    ctrl_c_in_one_line("python labs/grade.py")

import argparse
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

import grading_sandbox
from grading_csv import Outcome, data_status, rows, same_data, write_csv  # noqa: F401 (same_data: class_report.py's)
from grading_processes import Watched, ignore_ctrl_c, nbgrader, open_gradebook, run_all

HERE = Path(__file__).resolve().parent    # the course folder, by default
SANDBOXED, UNCONFINED = "bwrap", "none (UNSAFE_GRADING=1)"
GIB = 2**30


@dataclass
class Lab:
    """A lab of the source folder: its notebooks, graded cells and student data files."""

    name: str
    notebooks: list[str]
    cells: list[tuple[str, str, bool]] = field(default_factory=list)  # (notebook, grade_id, manual)
    data_files: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- course layout
def course_folder(parser: argparse.ArgumentParser, path: Path) -> Path:
    """``path`` resolved, or the parser's one-line error if it is not a course folder."""
    course = path.resolve()
    if not (course / "nbgrader_config.py").is_file() or not (course / "source").is_dir():
        parser.error(f"{course} is not a course folder (nbgrader_config.py and source/ expected)")
    return course


def nbgrader_command() -> list[str]:
    exe = Path(sys.executable).with_name("nbgrader")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "nbgrader"]


def course_config(course: Path):
    """The traitlets config of ``course/nbgrader_config.py``."""
    from traitlets.config.loader import PyFileConfigLoader

    return PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()


def lab_names(course: Path) -> list[str]:
    """The labs of ``course``: the folders of ``source/`` holding a notebook, sorted."""
    return sorted(p.name for p in (course / "source").iterdir() if p.is_dir() and any(p.glob("*.ipynb")))


def find_labs(course: Path) -> list[Lab]:
    """Labs (:func:`lab_names`) with their notebooks, and graded cells in notebook order."""
    excluded = course_config(course).Autograde.get("exclude_overwriting", {})
    labs = []
    for lab_name in lab_names(course):
        folder = course / "source" / lab_name
        nbs = sorted(p.stem for p in folder.glob("*.ipynb"))
        lab = Lab(lab_name, nbs, data_files=list(excluded.get(lab_name, [])))
        for name in nbs:
            nb = nbformat.read(folder / f"{name}.ipynb", as_version=4)
            for cell in nb.cells:
                meta = cell.metadata.get("nbgrader", {})
                if meta.get("grade"):  # graded: a test cell, or a written answer (manual)
                    lab.cells.append((name, meta["grade_id"], bool(meta.get("solution"))))
        labs.append(lab)
    return labs


# ---------------------------------------------------------------- grading
def ensure_released(course: Path, labs: list[Lab], log) -> None:
    """Labs missing from the gradebook are generated first (autograde needs their cells)."""
    from nbgrader.api import MissingEntry

    for lab in labs:
        try:
            with open_gradebook(course) as gb:
                for name in lab.notebooks:
                    gb.find_notebook(name, lab.name)
            continue
        except MissingEntry:
            pass
        log(f"{lab.name}: not in the gradebook yet, generating the student version first")
        subprocess.run([*nbgrader_command(), "generate_assignment", lab.name, "--force"],
                       cwd=course, check=True, capture_output=True, timeout=600)


def check_notebooks(folder: Path, lab: Lab, root: Path | None = None) -> str | None:
    """None if the notebooks can be handed to nbgrader, else the status to record.

    Only folders and regular files of at most :data:`netmodels.outputs.MAX_INPUT_BYTES` are
    accepted: a symbolic link could make the grader read its own files or another student's
    (nbgrader copies what links point to), a device could never end, a huge (sparse) file
    would fill the disk when copied.  With ``root`` (the course), no folder between it and
    the notebooks may be a link either (a student's folder linked to another's).
    """
    from netmodels.outputs import MAX_INPUT_BYTES, Refused, read_input

    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not (path.is_dir() or path.is_file()):
            return f"refused: {printable(str(path.relative_to(folder)))} is a link or a special file"
        if path.is_file() and path.stat().st_size > MAX_INPUT_BYTES:
            return f"refused: {printable(str(path.relative_to(folder)))} is larger than {MAX_INPUT_BYTES} bytes"
    present = [n for n in lab.notebooks if (folder / f"{n}.ipynb").is_file()]
    if not present:
        return no_notebook(folder, lab)
    for name in present:
        try:
            nb = nbformat.reads(read_input(folder / f"{name}.ipynb", root=root).decode("utf-8"), as_version=4)
            nbformat.validate(nb)
        except Refused as exc:
            return f"refused: {name}.ipynb: {exc.why}"
        except Exception as exc:  # noqa: BLE001 (anything a student hands in)
            return f"unreadable notebook: {name}.ipynb ({type(exc).__name__})"
        if not any(c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells):
            # nbgrader restores missing test cells after the answer cells; with none left it fails
            return f"empty notebook: {name}.ipynb has no answer or test cell of the lab"
    return None


#: how many of a folder's file names a status lists, and how many characters of each it shows
NAMES_LISTED, NAME_CHARS = 3, 60


def printable(text: str, limit: int = NAME_CHARS) -> str:
    """``text`` (a name a student chose) as a terminal, a log or a CSV cell may show it: each
    character that is not printable (control characters and so terminal escapes, line breaks,
    bidirectional overrides, bytes that are not UTF-8) as its Python escape (``\\x1b``), at most
    ``limit`` characters of the result (then ``...``).  Not HTML: a page escapes it as any text."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 4:
        raise ValueError(f"limit must be an int >= 4 (characters), got {limit!r}")
    shown = "".join(ch if ch.isprintable() else ch.encode("unicode_escape", "backslashreplace").decode("ascii")
                    for ch in text)
    return shown if len(shown) <= limit else shown[:limit - 3] + "..."


def listing(names: list[str]) -> str:
    """At most :data:`NAMES_LISTED` of ``names``, each :func:`printable`, then how many more."""
    shown = [printable(n) for n in names[:NAMES_LISTED]]
    more = len(names) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more else "")


def no_notebook(folder: Path, lab: Lab) -> str:
    """The status of a hand-in without the lab's notebook: what was expected and what the folder
    holds (its notebooks under other names, else its other files; :func:`listing`).  Another
    notebook is never graded in its place: a student must not choose, by a name, which file is."""
    expected = " or ".join(f"{n}.ipynb" for n in lab.notebooks)
    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    notebooks = [f for f in files if f.lower().endswith(".ipynb")]
    if notebooks:
        return f"no {expected}; found {listing(notebooks)}: a hand-in must keep the released name"
    return f"no {expected}; " + (f"found no notebook, only {listing(files)}" if files else "the folder is empty")


def grade_submission(course: Path, lab: Lab, student: str, cell_timeout, student_timeout, sandbox: dict | None,
                     feedback_run: bool):
    """Grade one submission: a generator of the :class:`Watched` processes it runs, one after
    the other (:func:`run_all` runs several submissions' at once), that returns its status."""
    logfile = course / "autograded" / student / f"{lab.name}.log"
    logfile.parent.mkdir(parents=True, exist_ok=True)
    status = check_notebooks(course / "submitted" / student / lab.name, lab, course)
    if status:
        logfile.write_text(status + "\n", encoding="utf-8")
        return status
    return (yield from autograde(course, lab, student, cell_timeout, student_timeout, logfile, sandbox,
                                 feedback_run))


def autograde(course: Path, lab: Lab, student: str, cell_timeout, student_timeout, logfile: Path,
              sandbox: dict | None, feedback_run: bool = True):
    """Run ``nbgrader autograde`` for one submission in its own session, log to ``logfile``
    (a generator of :class:`Watched` processes: :func:`grade_submission`).

    ``sandbox`` (None: unconfined): the kernel runs in ``grading_sandbox``, with a scratch
    copy of the submission; ``sandbox`` holds its limits (``memory``, ``fsize``: bytes,
    ``cpu``: seconds per process).  nbgrader itself (the hidden tests, the gradebook) stays
    outside.  The process groups of every descendant seen while grading are killed at the
    end, so nothing a notebook started (a background process, a hung ``mpiexec``) outlives
    its grading.  The log goes to a file, not a pipe, which such a process could keep open
    forever.  A graded submission is then run again for its feedback page (:func:`run_for_feedback`),
    unless ``feedback_run`` is False.
    """
    argv = ["autograde", lab.name, "--student", student, "--force"]
    if cell_timeout:
        argv.append(f"--Execute.timeout={int(cell_timeout)}")
    if sandbox is not None:
        argv.append("--Execute.kernel_manager_class=grading_sandbox.SandboxedKernelManager")
    with _environment(course, lab, student, sandbox) as env:
        status = yield Watched(nbgrader, (argv, course), course, env, student_timeout, logfile)
    if status == "graded" and feedback_run:
        yield from run_for_feedback(course, lab, student, cell_timeout, student_timeout, logfile, sandbox)
    return status


def run_for_feedback(course: Path, lab: Lab, student: str, cell_timeout, student_timeout, logfile: Path,
                     sandbox: dict | None):
    """Run each graded notebook again without its hidden tests, for the feedback page (a
    generator of :class:`Watched` processes).

    ``grading_feedback.run_for_feedback`` in a child process, watched and sandboxed as the
    grading was (a fresh scratch copy of the submission), its log appended to ``logfile``.
    Its outputs are what the feedback page shows; the scores stay those of the grading.  When
    it fails, the page falls back to showing scores only after the first hidden test.  A
    notebook that reached the cell time limit while graded is not run again (it would wait for
    the limit once more): its page shows the graded outputs up to the first hidden test.
    """
    import grading_feedback

    folder = course / "autograded" / student / lab.name
    shutil.rmtree(grading_feedback.feedback_run_folder(folder), ignore_errors=True)
    for name in lab.notebooks:
        graded = folder / f"{name}.ipynb"
        out = grading_feedback.feedback_run_path(graded)
        if not graded.is_file():
            continue
        if _timed_out(graded):
            with open(logfile, "a", encoding="utf-8") as log:
                log.write(f"\n--- {name}.ipynb is not run again for the feedback page: a cell reached the "
                          "time limit while graded; the page shows outputs up to the first hidden test\n")
            continue
        args = (graded, out, course, int(cell_timeout) if cell_timeout else None)
        with open(logfile, "a", encoding="utf-8") as log:
            log.write(f"\n--- {name}.ipynb run again without its hidden tests, for the feedback page\n")
        t0 = time.monotonic()
        with _environment(course, lab, student, sandbox) as env:
            status = yield Watched(grading_feedback.run_for_feedback, args, course, env, student_timeout,
                                   logfile, append=True)
        with open(logfile, "a", encoding="utf-8") as log:
            if status == "graded":
                log.write(f"--- run for the feedback page done in {time.monotonic() - t0:.0f} s\n")
            else:
                log.write(f"--- no run for the feedback page ({status}): it shows scores only after the "
                          "first hidden test\n")
                out.unlink(missing_ok=True)


def _environment(course: Path, lab: Lab, student: str, sandbox: dict | None):
    """The environment of a grading process of ``student``'s hand-in of ``lab``: with ``sandbox``
    (its limits), a fresh scratch copy for its kernel (:func:`grading_sandbox.environment`)."""
    return grading_sandbox.environment(course / "submitted" / student / lab.name, course / "source" / lab.name,
                                       lab.data_files, sandbox)


def _timed_out(graded: Path) -> bool:
    """Whether a cell of the graded notebook ``graded`` was stopped at the cell time limit."""
    try:
        nb = nbformat.read(graded, as_version=4)
    except Exception:  # noqa: BLE001 (then it is run again, and that run says what is wrong)
        return False
    return any(out.get("output_type") == "error" and out.get("ename") == "CellTimeoutError"
               for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", []))


def forget(course: Path, lab: Lab, student: str) -> None:
    """Drop a failed submission's stale grades (from an earlier run) from the gradebook."""
    from nbgrader.api import MissingEntry

    with open_gradebook(course) as gb:
        try:
            gb.remove_submission(lab.name, student)
        except MissingEntry:
            pass
    from grading_feedback import feedback_run_folder

    shutil.rmtree(feedback_run_folder(course / "autograded" / student / lab.name), ignore_errors=True)


# ---------------------------------------------------------------- command line
def positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    from mpi_exercises.bench.arguments import positive_int   # the kit's argparse type (the course needs the kit)

    p = argparse.ArgumentParser(prog="python labs/grade.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--course", type=Path, default=HERE, help="course folder (default: %(default)s)")
    p.add_argument("--csv", type=Path, help="output file (default: COURSE/grades.csv)")
    p.add_argument("--lab", action="append", help="grade only this lab (repeatable; default: all)")
    p.add_argument("--cell-timeout", type=positive,
                   help="seconds per cell (default: Execute.timeout of nbgrader_config.py)")
    p.add_argument("--student-timeout", type=positive, default=900,
                   help="wall-clock seconds per submission before it is stopped (default: %(default)s)")
    p.add_argument("--memory-limit", type=positive, default=4, metavar="GIB",
                   help="address space per process of a submission, GiB (default: %(default)s)")
    p.add_argument("--cpu-limit", type=positive, default=600, metavar="SECONDS",
                   help="CPU seconds per process of a submission (default: %(default)s)")
    p.add_argument("--jobs", type=positive_int, default=1, metavar="N",
                   help="submissions graded at once (default: %(default)s; each runs its own kernels)")
    p.add_argument("--scores-only", action="store_true",
                   help="grade without the second run for the feedback page (about half the time); "
                        "feedback pages then show outputs only up to the first hidden test")
    return p


def file_version(path: Path):
    """What tells one version of the file ``path`` from another (inode, size, modification
    time), None if there is none: a command interrupted by Ctrl-C compares it with the one
    before it started, to say whether it wrote the file (:func:`interrupted_line`)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def interrupted_line(prog: str, before: dict) -> str:
    """The one line of a course tool ended by Ctrl-C (:func:`netmodels.commandline.interrupted`):
    ``before`` maps each file it writes, the first its main result, to its
    :func:`file_version` when the tool started; a file since replaced is named as kept."""
    from netmodels import outputs
    from netmodels.commandline import interrupted

    outputs.WRITTEN.extend(str(path) for path, version in before.items() if file_version(path) != version)
    return interrupted(prog, next(iter(before)))


def main(argv=None) -> int:
    """``python labs/grade.py`` (see ``--help``).  Ctrl-C kills the grading processes under way,
    removes their submissions from the gradebook (as for a failed one: no stale grades) and
    ends with one line and exit status 130; grades.csv is then left as it was."""
    parser = build_parser()
    args = parser.parse_args(argv)
    course = course_folder(parser, args.course)
    out = args.csv or course / "grades.csv"
    before, started, outcomes = file_version(out), {}, {}
    from netmodels.starting import ctrl_c_raises

    ctrl_c_raises()
    try:
        return grade_all(parser, args, course, out, started, outcomes)
    except KeyboardInterrupt:             # run_all has killed the grading processes under way
        from netmodels.commandline import INTERRUPTED

        ignore_ctrl_c()                   # a second Ctrl-C does not stop the cleanup
        stopped = [key for key in started if key not in outcomes]
        for student, lab in stopped:
            forget(course, Lab(lab, []), student)
        print(interrupted_line("python labs/grade.py", {out: before})
              + (f"; {len(stopped)} submission{'s' * (len(stopped) != 1)} under way stopped and left out of the "
                 "gradebook" if stopped else ""), file=sys.stderr, flush=True)
        return INTERRUPTED


def grade_all(parser, args, course: Path, out: Path, started: dict, outcomes: dict) -> int:
    """Grade what ``args`` asks for and write ``out``; ``started`` and ``outcomes`` (by
    (student, lab)) fill in as submissions start and end."""
    labs = [lab for lab in find_labs(course) if not args.lab or lab.name in args.lab]
    if not labs:
        parser.error("no lab to grade")

    def log(msg):
        print(msg, flush=True)

    sandbox = {"memory": int(args.memory_limit * GIB), "cpu": int(args.cpu_limit), "fsize": GIB}
    why = grading_sandbox.unavailable()
    if os.environ.get("UNSAFE_GRADING") == "1":
        sandbox = None
        log("UNSAFE_GRADING=1: the submissions' code runs unconfined, as you (grades.csv says so)")
    elif why:
        sys.exit(f"grade.py: cannot sandbox the submissions' code: {why} (Debian/Ubuntu: apt-get install "
                 "bubblewrap); UNSAFE_GRADING=1 grades without a sandbox, trusting every submission")
    else:
        sandbox["fonts"] = grading_sandbox.font_list()

    # nbgrader runs `alembic` (a console script next to this Python) when it creates a gradebook.
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])

    ensure_released(course, labs, log)
    submitted = course / "submitted"
    students = sorted(p.name for p in submitted.iterdir() if p.is_dir()) if submitted.is_dir() else []
    by_name = {lab.name: lab for lab in labs}

    def tasks():
        for lab in labs:
            for student in students:
                if (submitted / student / lab.name).is_dir():
                    started[student, lab.name] = time.monotonic()
                    yield (student, lab.name), grade_submission(course, lab, student, args.cell_timeout,
                                                           args.student_timeout, sandbox, not args.scores_only)

    def done(key, status):
        student, lab = key[0], by_name[key[1]]
        if status != "graded":
            forget(course, lab, student)
        outcomes[(student, lab.name)] = Outcome(status, data_status(course, lab, submitted / student / lab.name),
                                                SANDBOXED if sandbox else UNCONFINED)
        shown = printable(student)        # a folder's name: no escape sequence reaches the terminal
        log(f"{lab.name} {shown}: {status} ({time.monotonic() - started[student, lab.name]:.0f} s, "
            f"log autograded/{shown}/{lab.name}.log)")

    run_all(tasks(), args.jobs if os.name != "nt" else 1, done)   # Windows: no lock for the gradebook
    write_csv(out, labs, rows(course, labs, students, outcomes))
    log(f"gradebook written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
