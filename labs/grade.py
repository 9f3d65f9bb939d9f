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
machinery, a built-in or numpy changed by the submission: ``grading_preprocessors``), which
score 0, names of that machinery in the submission's own code, data files measured on a busy
machine and the test cells such data could not pass (:func:`flags`).

``status`` is ``graded``, ``not submitted``, ``no notebook``, ``unreadable notebook``,
``empty notebook``, ``refused`` (a link, a special file or a file too large), ``autograde
failed`` or ``stopped after N s``; anything but ``graded`` scores 0.
``data`` says whether each data file of the lab is the student's own, an unchanged copy
of the released reference file, missing, or refused (a link, a special file, too large).  Written answers stay empty (pending) until an
instructor grades them (``nbgrader formgrader``); ``score`` then includes them.  An answer
left as released is scored 0 by nbgrader itself and is not pending.

Each graded submission is then run once more, in a fresh sandbox, with its hidden tests
removed (``grading_preprocessors.run_for_feedback``): the feedback page (``make feedback``)
shows that run's outputs, the student's own results and the messages of the visible tests,
which the graded run cannot show once its kernel has seen hidden test code.
"""

from __future__ import annotations

if __name__ == "__main__":      # a Ctrl-C while the modules below load: one line, not a traceback
    import _signal                  # (built in: until the next line, a Ctrl-C ends it quietly)

    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
    from netmodels.starting import ctrl_c_in_one_line

    ctrl_c_in_one_line("python labs/grade.py")

import argparse
import contextlib
import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import grading_sandbox  # noqa: E402 (next to this file)
FIELDS = ["student", "lab", "status", "data", "sandbox", "flags", "auto_score", "auto_max", "score",
          "max_score", "manual_pending"]
SANDBOXED, UNCONFINED = "bwrap", "none (UNSAFE_GRADING=1)"
GIB = 2**30


@dataclass
class Outcome:
    """What happened to one (student, lab) submission."""

    status: str
    data: str = ""
    sandbox: str = ""


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


def column(lab: Lab, notebook: str, grade_id: str) -> str:
    return grade_id if len(lab.notebooks) == 1 else f"{notebook}:{grade_id}"


def same_data(course: Path, lab: Lab, students: list[str]) -> dict[str, dict[str, list[str]]]:
    """``{student: {file: [the other students whose file is byte-identical]}}`` over the
    hand-ins ``submitted/<student>/<lab>/<file>`` of ``lab``'s data files (SHA-256 of the bytes
    :func:`netmodels.outputs.read_input` reads; a file it refuses, and the reference copy
    released with the lab, are shared with no one)."""
    import hashlib

    from netmodels.outputs import Refused, read_input

    out: dict[str, dict[str, list[str]]] = {}
    for name in lab.data_files:
        try:
            ref = hashlib.sha256(read_input(course / "source" / lab.name / name, root=course)).digest()
        except (OSError, Refused):
            ref = None
        by_hash: dict[bytes, list[str]] = {}
        for student in students:
            try:
                h = hashlib.sha256(read_input(course / "submitted" / student / lab.name / name, root=course)).digest()
            except (OSError, Refused):      # missing, or refused: data_status says which
                continue
            if h != ref:
                by_hash.setdefault(h, []).append(student)
        for group in by_hash.values():
            for student in group if len(group) > 1 else ():
                out.setdefault(student, {})[name] = [s for s in group if s != student]
    return out


def data_status(course: Path, lab: Lab, folder: Path, shared: dict[str, list[str]] | None = None) -> str:
    """'own', 'reference copy', 'missing' or 'refused (why)', per data file of the lab (read by
    :func:`netmodels.outputs.read_input`: a link, a special file or a file too large is
    refused, also one in a folder reached through a link from ``course``); ``shared``: ``{file:
    [students]}`` whose file is the same (:func:`same_data`): "same as bob's" instead of 'own'."""
    from netmodels.outputs import Refused, read_input

    parts = []
    for name in lab.data_files:
        mine, ref = folder / name, course / "source" / lab.name / name
        try:
            own = read_input(mine, root=course)
        except FileNotFoundError:
            state = "missing"
        except Refused as exc:
            state = f"refused ({exc.why})"
        except OSError as exc:
            state = f"refused ({exc.strerror or exc})"
        else:
            try:
                state = "reference copy" if read_input(ref, root=course) == own else "own"
            except OSError:                 # no reference file: the lab releases none
                state = "own"
            if state == "own" and (shared or {}).get(name):
                others = [f"{other}'s" for other in shared[name]]
                state = "same as " + (f"{', '.join(others[:-1])} and {others[-1]}" if len(others) > 1 else others[0])
        parts.append(f"{name}: {state}")
    return "; ".join(parts)


# ---------------------------------------------------------------- grading
def ensure_released(course: Path, labs: list[Lab], log) -> None:
    """Labs missing from the gradebook are generated first (autograde needs their cells)."""
    from nbgrader.api import Gradebook, MissingEntry

    for lab in labs:
        try:
            with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
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
            return f"refused: {path.relative_to(folder)} is a link or a special file"
        if path.is_file() and path.stat().st_size > MAX_INPUT_BYTES:
            return f"refused: {path.relative_to(folder)} is larger than {MAX_INPUT_BYTES} bytes"
    present = [n for n in lab.notebooks if (folder / f"{n}.ipynb").is_file()]
    if not present:
        return "no notebook"
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


def scratch_copy(course: Path, lab: Lab, folder: Path, work: Path) -> None:
    """What the sandbox sees of a submission: its files, then the lab's released files.

    As ``nbgrader autograde`` does, the source folder's files other than notebooks and the
    students' own data files (``exclude_overwriting``) replace the student's.  Symbolic
    links are not copied (``check_notebooks`` refuses submissions holding any).
    """
    def copy_tree(src: Path, dst: Path, skip=()):
        dst.mkdir(exist_ok=True)
        for entry in src.iterdir():
            if entry.is_symlink() or entry.name in skip or entry.name in ("__pycache__", ".ipynb_checkpoints"):
                continue
            if entry.is_dir():
                copy_tree(entry, dst / entry.name)
            elif entry.is_file():
                target = dst / entry.name
                if target.exists():
                    target.unlink()
                shutil.copyfile(entry, target)

    copy_tree(folder, work)
    source = course / "source" / lab.name
    copy_tree(source, work, skip={*lab.data_files, *(p.name for p in source.glob("*.ipynb"))})


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
        status = yield Watched(_nbgrader, (argv, course), course, env, student_timeout, logfile)
    if status == "graded" and feedback_run:
        yield from run_for_feedback(course, lab, student, cell_timeout, student_timeout, logfile, sandbox)
    return status


def run_for_feedback(course: Path, lab: Lab, student: str, cell_timeout, student_timeout, logfile: Path,
                     sandbox: dict | None):
    """Run each graded notebook again without its hidden tests, for the feedback page (a
    generator of :class:`Watched` processes).

    ``grading_preprocessors.run_for_feedback`` in a child process, watched and sandboxed as the
    grading was (a fresh scratch copy of the submission), its log appended to ``logfile``.
    Its outputs are what the feedback page shows; the scores stay those of the grading.  When
    it fails, the page falls back to showing scores only after the first hidden test.  A
    notebook that reached the cell time limit while graded is not run again (it would wait for
    the limit once more): its page shows the graded outputs up to the first hidden test.
    """
    import grading_preprocessors

    folder = course / "autograded" / student / lab.name
    shutil.rmtree(grading_preprocessors.feedback_run_folder(folder), ignore_errors=True)
    for name in lab.notebooks:
        graded = folder / f"{name}.ipynb"
        out = grading_preprocessors.feedback_run_path(graded)
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
            status = yield Watched(grading_preprocessors.run_for_feedback, args, course, env, student_timeout,
                                   logfile, append=True)
        with open(logfile, "a", encoding="utf-8") as log:
            if status == "graded":
                log.write(f"--- run for the feedback page done in {time.monotonic() - t0:.0f} s\n")
            else:
                log.write(f"--- no run for the feedback page ({status}): it shows scores only after the "
                          "first hidden test\n")
                out.unlink(missing_ok=True)


def flags(course: Path, lab: Lab, student: str) -> str:
    """What the instructor should look at in a graded submission, or '':

    ``tampering: <columns>``, the test cells that did not run as written (the grader put the error
    ``grading_preprocessors.TAMPERED`` first in their outputs; they score 0), and ``suspect code:
    <names>``, names of IPython's machinery or the built-ins in the submission's own cells
    (``grading_preprocessors.SUSPECT``; not scored); ``measured disturbed: <file> (why)``, a data
    file whose record says the machine was busy (:func:`mpi_exercises.labdata.disturbance`), and
    ``failed on disturbed data: <columns>``, the test cells that the data could not pass
    (their error begins with :data:`mpi_exercises.labdata.DISTURBED`)."""
    from grading_preprocessors import SUSPECT, TAMPERED

    from mpi_exercises.labdata import DISTURBED

    tampered, suspect, unfair = [], set(), []
    for name in lab.notebooks:
        try:
            nb = nbformat.read(course / "autograded" / student / lab.name / f"{name}.ipynb", as_version=4)
        except Exception:  # noqa: BLE001 (no graded notebook: nothing to flag)
            continue
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type != "code":
                continue
            if not meta.get("grade") or meta.get("solution"):       # the student's code
                suspect.update(m.group(0) for m in SUSPECT.finditer(cell.source))
            elif any(o.get("output_type") == "error" and o.get("ename") == TAMPERED for o in cell.get("outputs", [])):
                tampered.append(column(lab, name, meta.get("grade_id", "?")))
            elif any(o.get("output_type") == "error" and str(o.get("evalue", "")).startswith(DISTURBED)
                     for o in cell.get("outputs", [])):
                unfair.append(column(lab, name, meta.get("grade_id", "?")))
    found = ([f"tampering: {', '.join(tampered)}"] if tampered else []) + (
        [f"suspect code: {', '.join(sorted(suspect))}"] if suspect else []) + disturbed_data(course, lab, student) + (
        [f"failed on disturbed data: {', '.join(unfair)}"] if unfair else [])
    return "; ".join(found)


def disturbed_data(course: Path, lab: Lab, student: str) -> list[str]:
    """``measured disturbed: <file> (why)`` for each data file the student handed in whose record
    says the machine was busy while it measured (:func:`mpi_exercises.labdata.disturbance`)."""
    import json

    from mpi_exercises.labdata import disturbance
    from netmodels.outputs import Refused, read_input

    found = []
    for name in lab.data_files:
        try:
            why = disturbance(json.loads(read_input(course / "submitted" / student / lab.name / name, root=course)))
        except (OSError, Refused, ValueError, RecursionError):     # missing or unusable: the data column says
            continue
        if why:
            found.append(f"measured disturbed: {name} ({why})")
    return found


def _timed_out(graded: Path) -> bool:
    """Whether a cell of the graded notebook ``graded`` was stopped at the cell time limit."""
    try:
        nb = nbformat.read(graded, as_version=4)
    except Exception:  # noqa: BLE001 (then it is run again, and that run says what is wrong)
        return False
    return any(out.get("output_type") == "error" and out.get("ename") == "CellTimeoutError"
               for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", []))


@contextlib.contextmanager
def _environment(course: Path, lab: Lab, student: str, sandbox: dict | None):
    """The environment of a grading process; with ``sandbox``, a fresh scratch copy for its kernel."""
    env = dict(os.environ)
    if sandbox is None:
        yield env
        return
    scratch = Path(tempfile.mkdtemp(prefix="labs-grade-"))
    try:
        work, run, connection = scratch / "work", scratch / "run", scratch / "connection"
        run.mkdir()
        connection.mkdir()     # the grader's: bound read-only into the sandbox
        scratch_copy(course, lab, course / "submitted" / student / lab.name, work)
        env[grading_sandbox.ENV] = json.dumps({"work": str(work), "run": str(run), "connection": str(connection),
                                               **sandbox})
        yield env
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _nbgrader(argv: list[str], course: Path) -> None:
    """``nbgrader ARGV``, in this process, which holds ``course``'s gradebook only while no
    other grading process does (:func:`one_gradebook_at_a_time`)."""
    from nbgrader.apps.nbgraderapp import NbGraderApp

    one_gradebook_at_a_time(course)
    NbGraderApp.launch_instance(argv=argv)


_GRADEBOOK = {"depth": 0, "fd": -1}   # this process's hold on the gradebook's lock


def _hold_gradebook(course: Path) -> None:
    """Take ``course``'s gradebook lock (an advisory flock on ``gradebook.db``, which SQLite's own
    locks ignore), waiting for other processes; reentrant within a process."""
    if _GRADEBOOK["depth"] == 0:
        fd = os.open(course / "gradebook.db", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            import fcntl
        except ImportError:       # no flock (Windows): main() grades one submission at a time
            pass
        else:
            fcntl.flock(fd, fcntl.LOCK_EX)
        _GRADEBOOK["fd"] = fd
    _GRADEBOOK["depth"] += 1


def _release_gradebook() -> None:
    _GRADEBOOK["depth"] -= 1
    if _GRADEBOOK["depth"] == 0:
        os.close(_GRADEBOOK["fd"])          # closing the file releases the lock


@contextlib.contextmanager
def gradebook_lock(course: Path):
    """Hold ``course``'s gradebook alone while the block runs (:func:`_hold_gradebook`)."""
    _hold_gradebook(course)
    try:
        yield
    finally:
        _release_gradebook()


def one_gradebook_at_a_time(course: Path) -> None:
    """From now on, in this process, nbgrader holds the gradebook (from opening a ``Gradebook``
    to closing it) only while no other grading process does: SQLite lets one writer in at a
    time and makes a second wait at most a few seconds.  nbgrader opens it around each of its
    steps, never while a notebook runs, so submissions still run side by side."""
    from nbgrader import api

    real_init, real_close = api.Gradebook.__init__, api.Gradebook.close

    def init(self, *args, **kwargs):
        _hold_gradebook(course)
        self._holds_lock = True
        try:
            real_init(self, *args, **kwargs)
        except BaseException:
            self._holds_lock = False
            _release_gradebook()
            raise

    def close(self):
        try:
            real_close(self)
        finally:
            if self.__dict__.pop("_holds_lock", False):
                _release_gradebook()

    api.Gradebook.__init__, api.Gradebook.close = init, close


def _child(target, args, course: Path, env: dict, logfile: Path, append: bool) -> None:
    """Body of a grading process: its own session, the course as working folder, ``env`` as
    environment, stdout and stderr to ``logfile``; then ``target(*args)``."""
    if hasattr(os, "setsid"):
        os.setsid()
    if hasattr(signal, "pthread_sigmask"):      # out of the terminal's process group: Ctrl-C is the parent's
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    os.chdir(course)
    os.environ.clear()
    os.environ.update(env)
    grading_sandbox.hold_grader()
    fd = os.open(logfile, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC), 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    target(*args)
    sys.stdout.flush()
    sys.stderr.flush()


def _processes():
    """How grading processes are made: forked from this one where it can (Linux), so that
    nbgrader and nbconvert, imported once here, are not imported again for every submission
    (about 1.5 s each); else started afresh (spawn)."""
    import multiprocessing

    if sys.platform == "linux":
        import grading_preprocessors  # noqa: F401 (imported before the forks: see above)
        import nbgrader.apps.nbgraderapp  # noqa: F401
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


class Watched:
    """``target(*args)`` in a grading process (:func:`_child`) under the wall-clock limit
    ``student_timeout``; :meth:`poll` says how it ended ('graded' if with exit status 0)."""

    def __init__(self, target, args, course: Path, env: dict, student_timeout, logfile: Path,
                 append: bool = False):
        self.target, self.args, self.course, self.env = target, args, course, env
        self.student_timeout, self.logfile, self.append = student_timeout, logfile, append
        self.proc = None

    def start(self) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        self.proc = _processes().Process(target=_child, args=(self.target, self.args, self.course, self.env,
                                                              self.logfile, self.append))
        # the child takes no Ctrl-C of the terminal's before it has left its process group (_child)
        blocked = hasattr(signal, "pthread_sigmask")
        if blocked:
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self.proc.start()
        finally:
            if blocked:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        self.deadline, self.groups = time.monotonic() + self.student_timeout, {self.proc.pid}

    @property
    def sentinel(self):
        return self.proc.sentinel

    def poll(self) -> str | None:
        """None while it runs, else its status; every process group it made is then killed."""
        if self.proc.exitcode is not None:
            status = "graded" if self.proc.exitcode == 0 else "autograde failed"
        elif time.monotonic() > self.deadline:
            _kill_groups(self.groups | _process_groups(self.proc.pid))
            status = f"stopped after {self.student_timeout:.0f} s"
        else:
            self.groups |= _process_groups(self.proc.pid)
            return None
        self.proc.join()
        _kill_groups(self.groups)
        return status

    def stop(self) -> None:
        """Kill it now, with every process group it made (the batch is stopped)."""
        if self.proc is None or self.proc.pid is None:     # not started
            return
        self.groups |= _process_groups(self.proc.pid)
        self.proc.kill()
        _kill_groups(self.groups)
        self.proc.join()


def run_all(tasks, jobs: int, done) -> None:
    """Run the generators ``tasks`` (pairs of a key and a generator of :class:`Watched`, as
    :func:`grade_submission`), the processes of at most ``jobs`` of them at once; ``done(key,
    status)`` when one returns.  One thread: processes are forked only from it."""
    from multiprocessing.connection import wait

    tasks, running = iter(tasks), {}

    def advance(key, gen, status):
        try:
            watched = gen.send(status)
        except StopIteration as stop:
            running.pop(key, None)
            done(key, stop.value)
            return
        running[key] = (gen, watched)       # first: a Ctrl-C while it starts stops it too
        watched.start()

    try:
        while True:
            while len(running) < jobs:
                task = next(tasks, None)
                if task is None:
                    break
                advance(task[0], task[1], None)
            if not running:
                return
            wait([w.sentinel for _, w in running.values()], timeout=0.5)
            for key, (gen, watched) in list(running.items()):
                status = watched.poll()
                if status is not None:
                    advance(key, gen, status)
    finally:                            # Ctrl-C, or an error: no grading process outlives the batch
        for _, watched in running.values():
            watched.stop()


def _process_groups(pid: int) -> set[int]:
    """Process groups of the descendants of ``pid`` (not ours)."""
    import psutil

    found = set()
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return found
    for child in children:
        try:
            found.add(os.getpgid(child.pid))
        except OSError:
            pass
    return found - {os.getpgrp()}


def _kill_groups(groups) -> None:
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except OSError:
            pass


def forget(course: Path, lab: Lab, student: str) -> None:
    """Drop a failed submission's stale grades (from an earlier run) from the gradebook."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        try:
            gb.remove_submission(lab.name, student)
        except MissingEntry:
            pass
    from grading_preprocessors import feedback_run_folder

    shutil.rmtree(feedback_run_folder(course / "autograded" / student / lab.name), ignore_errors=True)


# ---------------------------------------------------------------- gradebook
def rows(course: Path, labs: list[Lab], students: list[str], outcomes: dict) -> list[dict]:
    """One row per student and lab; scores from the gradebook for graded submissions."""
    from grading_preprocessors import is_pending
    from nbgrader.api import Gradebook, MissingEntry

    out = []
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for lab in labs:
            maxima = {(nb, gid): gb.find_grade_cell(gid, nb, lab.name).max_score for nb, gid, _ in lab.cells}
            shared = same_data(course, lab, students)
            for student in students:
                oc = outcomes.get((student, lab.name), Outcome("not submitted"))
                data = oc.data
                if oc.data and student in shared:    # a file handed in by others too: named with them
                    data = data_status(course, lab, course / "submitted" / student / lab.name, shared[student])
                row = {"student": student, "lab": lab.name, "status": oc.status, "data": data,
                       "sandbox": oc.sandbox, "flags": flags(course, lab, student) if oc.status == "graded" else "",
                       "auto_score": 0.0, "auto_max": 0.0, "score": 0.0,
                       "max_score": float(sum(maxima.values())), "manual_pending": 0}
                for nb, gid, manual in lab.cells:
                    value = 0.0
                    if oc.status == "graded":
                        try:
                            grade = gb.find_grade(gid, nb, lab.name, student)
                        except MissingEntry:
                            grade = None
                        if grade is not None and manual and is_pending(grade):
                            value = ""  # waiting for the instructor
                        elif grade is not None:
                            value = float(grade.score)
                    row[column(lab, nb, gid)] = value
                    if value == "":
                        row["manual_pending"] += 1
                        continue
                    row["score"] += value
                    if not manual:
                        row["auto_score"] += value
                        row["auto_max"] += maxima[(nb, gid)]
                out.append(row)
    return out


def write_csv(path: Path, labs: list[Lab], table: list[dict]) -> None:
    """``grades.csv``: one row per student and lab; scores as numbers, texts (the student's id,
    statuses) through ``page_safety.csv_cell``, so that no spreadsheet reads one as a formula."""
    from netmodels import outputs
    from page_safety import csv_cell

    columns = list(FIELDS)
    for lab in labs:
        for nb, gid, _ in lab.cells:
            if column(lab, nb, gid) not in columns:
                columns.append(column(lab, nb, gid))
    fh = io.StringIO(newline="")
    writer = csv.DictWriter(fh, fieldnames=columns, restval="")
    writer.writeheader()
    for row in table:
        writer.writerow({k: (f"{v:g}" if isinstance(v, float) else csv_cell(v)) for k, v in row.items()})
    outputs.write_text(path, fh.getvalue())      # whole or not at all, also on Ctrl-C


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

        signal.signal(signal.SIGINT, signal.SIG_IGN)       # a second Ctrl-C does not stop the cleanup
        stopped = [key for key in started if key not in outcomes]
        with gradebook_lock(course):
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
            with gradebook_lock(course):
                forget(course, lab, student)
        outcomes[(student, lab.name)] = Outcome(status, data_status(course, lab, submitted / student / lab.name),
                                                SANDBOXED if sandbox else UNCONFINED)
        log(f"{lab.name} {student}: {status} ({time.monotonic() - started[student, lab.name]:.0f} s, "
            f"log autograded/{student}/{lab.name}.log)")

    run_all(tasks(), args.jobs if os.name != "nt" else 1, done)   # Windows: no lock for the gradebook
    write_csv(out, labs, rows(course, labs, students, outcomes))
    log(f"gradebook written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
