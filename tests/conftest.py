"""Fixtures shared by several test files.

``book_html``: the HTML book built from the working tree, once per test run.  It is built into
a temporary directory with the flags of ``make book`` (-W -n --keep-going), so tests see the
current sources and never a stale ``_build/html``; under pytest-xdist the workers share one
build (a lock file in the run's common temporary directory).  ``BOOK_HTML=path/to/html`` tests
an existing build instead (the deployment workflow tests the very site it uploads).

``released_labs``: a copy of the course with every lab released by ``make release``, once per
test run and shared by the workers in the same way; the grading tests copy the labs they need
from it (``tests.labcourse.released_course``).

:func:`pytest_collection_modifyitems` adds the markers that files cannot carry themselves
(``notebook`` on every nbval cell, ``cli`` on the tests of :data:`CLI_MODULES`, ``slow`` on
every test that needs a fixture of :data:`SLOW_FIXTURES`) and puts first the scopes that
hold an ``mpi`` test, then those that hold a ``slow``, ``cli`` or ``notebook`` one: ``make test``
hands out scopes in this order (``--dist loadscope --no-loadscope-reorder``), the long ones early,
the short ones (unit tests, a second or less each) last to even out the workers' ends.  The MPI
tests come together because their ranks wait by polling and yielding: ranks of two jobs share
the cores, while ranks beside a busy Python process (a notebook, the book's build) wait out its
time slices (two 4-rank sweeps of tests/allreduce_sweep.py on 2 cores: 4.5 s one after the
other, 5.9 s together, 12.6 s one after the other beside one busy process).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILD_TIMEOUT = 300  # seconds; the build takes well under a minute
#: fixtures that take up to a minute to make: a test that needs one is ``slow``
SLOW_FIXTURES = {"book_html": "builds the book", "released_labs": "releases the labs with nbgrader",
                 "course": "makes a course (tests/test_class_report.py: a class of hand-ins and reports)",
                 "browser": "starts a headless Chromium (tests/test_browser.py)"}
#: modules whose tests run command lines, most in a new Python process per case: ``cli``
CLI_MODULES = {"test_cli_errors.py", "test_netmodels_cli_errors.py", "test_simulate_cli.py"}


#: a folder in memory for the run's temporary files, if the system's is on a disk
#: (:func:`_temporary_folder_in_memory`), and the space it must have free (bytes)
MEMORY_TMP, MEMORY_TMP_FREE = Path("/dev/shm"), 3 << 30
_RUN_TMP: dict = {}


def _on_tmpfs(path: Path) -> bool:
    """Whether ``path`` is on a file system held in memory (tmpfs)."""
    import psutil

    path = path.resolve()
    mounts = [p for p in psutil.disk_partitions(all=True) if path.is_relative_to(p.mountpoint)]
    return bool(mounts) and max(mounts, key=lambda p: len(p.mountpoint)).fstype == "tmpfs"


def _temporary_folder_in_memory() -> None:
    """Point this run's temporary files (pytest's ``tmp_path``, and every process it starts,
    through ``TMPDIR``) at a new folder of :data:`MEMORY_TMP` if the system's temporary folder
    is on a disk and ``TMPDIR`` is not set.  The tests write about 1 GB (a virtual environment
    of 24,000 files, courses, the book), and on a disk the writers pay for the write-back in
    kernel time: installing the kit's wheel took 16 CPU-s of it on an ext4 disk, 2 on tmpfs.
    The folder is removed at the end of a run that passed, kept (and named) otherwise."""
    import tempfile

    if "TMPDIR" in os.environ or not MEMORY_TMP.is_dir() or not os.access(MEMORY_TMP, os.W_OK):
        return
    if _on_tmpfs(Path(tempfile.gettempdir())) or not _on_tmpfs(MEMORY_TMP) \
            or shutil.disk_usage(MEMORY_TMP).free < MEMORY_TMP_FREE:
        return
    folder = tempfile.mkdtemp(prefix="kit-tests-", dir=MEMORY_TMP)
    os.environ["TMPDIR"] = tempfile.tempdir = folder
    _RUN_TMP["folder"] = folder


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    """In the process that runs the session (xdist's controller, or the only one): the run's
    temporary folder (:func:`_temporary_folder_in_memory`) and one BLAS thread per process
    (the workers and every process of the run inherit both); then, before the workers of a
    parallel run start, the compiled event loop of the *loggopsim* semantics is loaded from
    numba's cache (``make``'s setup of the environment fills it), or compiled into it once (9 s
    in a fresh clone whose environment was made otherwise).  Else the workers, the
    notebooks' kernels and the command lines the tests start, all at once, could each compile
    it until one had written the cache."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if config.option.basetemp is None:
        _temporary_folder_in_memory()
    # every process of the run (workers, kernels, command lines, the tests' own MPI drivers) gets
    # what a rank of the kit gets, one BLAS thread unless set: the run starts about a thousand
    # Pythons, two workers at once on a laptop's cores, and numpy's OpenBLAS would start a
    # thread per core in each, which spin at start-up
    from mpi_exercises.__main__ import RANK_ENVIRONMENT

    for name, value in RANK_ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    if not getattr(config.option, "numprocesses", None) or config.getoption("collectonly", False):
        return
    from netmodels.algorithms.arrays import ArraySchedule, ArrayStep
    from netmodels.models.logp import LogP
    from netmodels.simulate import simulate

    simulate(ArraySchedule("warm-up", 2, 1, [ArrayStep.of([0], [1], 0, 1)]), LogP(L=1e-6, o=1e-6, g=1e-6, P=2),
             semantics="loggopsim")


def _keep_run_tmp() -> bool:
    """Whether the run's folder in memory stays: after a run that failed, if it holds anything."""
    folder = _RUN_TMP.get("folder")
    return bool(folder) and not _RUN_TMP.get("passed") and any(Path(folder).iterdir())


def pytest_sessionfinish(session, exitstatus):
    _RUN_TMP["passed"] = exitstatus == 0


def pytest_terminal_summary(terminalreporter):
    if _keep_run_tmp():
        terminalreporter.write_line(f"temporary files of this run (in memory: remove them when done): "
                                    f"{_RUN_TMP['folder']}")


def pytest_unconfigure(config):
    if "folder" in _RUN_TMP and not _keep_run_tmp():
        shutil.rmtree(_RUN_TMP.pop("folder"), ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    """Markers and order (see the module docstring)."""
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.notebook)
        if item.path.name in CLI_MODULES:
            item.add_marker(pytest.mark.cli)
        if SLOW_FIXTURES.keys() & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    def scopes(*markers):   # xdist's scope: module or class
        return {_scope(item) for item in items if any(item.get_closest_marker(m) for m in markers)}

    mpi, long = scopes("mpi"), scopes("slow", "mpi", "cli", "notebook")
    items.sort(key=lambda item: (_scope(item) not in mpi, _scope(item) not in long))


def _scope(item) -> str:
    return item.nodeid.rsplit("::", 1)[0]


@contextlib.contextmanager
def _locked(path: Path):
    try:
        import fcntl
    except ImportError:  # no flock (Windows): builds of concurrent workers may repeat
        yield
        return
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def build_book(out: Path) -> subprocess.CompletedProcess:
    """``jupyter-book build`` of the repository into ``out`` (flags of ``make book``)."""
    jb = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(jb) if jb.exists() else shutil.which("jupyter-book") or "jupyter-book", "build", str(ROOT),
           "--path-output", str(out), "--builder", "html", "--warningiserror", "--nitpick", "--keep-going"]
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT)


def _once_per_run(tmp_path_factory, name: str, make) -> Path:
    """``base/name``, made by ``make(base/name)`` (a CompletedProcess) once per test run: the
    workers of a pytest-xdist run share it (a lock file in the run's common temporary directory).
    Fails the test if ``make`` failed, with its output."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # common to the workers of this run
    out, log = base / name, base / f"{name}.log"
    with _locked(base / f"{name}.lock"):
        if not log.exists():
            res = make(out)
            log.write_text(f"exit {res.returncode}\n{res.stdout[-4000:]}\n{res.stderr[-4000:]}")
    text = log.read_text()
    assert text.startswith("exit 0\n"), f"{name} failed:\n{text}"
    return out


@pytest.fixture(scope="session")
def book_html(tmp_path_factory) -> Path:
    """The built book's HTML folder (see the module docstring)."""
    given = os.environ.get("BOOK_HTML")
    if given:
        html = Path(given).resolve()
        assert (html / "index.html").is_file(), f"BOOK_HTML={given} has no index.html"
        return html
    return _once_per_run(tmp_path_factory, "book", build_book) / "_build" / "html"


@pytest.fixture(scope="session")
def released_labs(tmp_path_factory) -> Path:
    """A copy of the course with every lab released by ``make release``, once per test run (the
    workers share it, as ``book_html``): tests copy what they need of it
    (``tests.labcourse.released_course``)."""
    from tests.labcourse import release_every_lab

    return _once_per_run(tmp_path_factory, "released-labs", release_every_lab)
