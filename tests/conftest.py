"""Fixtures shared by several test files.

``book_html``: the HTML book built from the working tree, once per test run.  It is built into
a temporary directory with the flags of ``make book`` (-W -n --keep-going), so tests see the
current sources and never a stale ``_build/html``; under pytest-xdist the workers share one
build (a lock file in the run's common temporary directory).  ``BOOK_HTML=path/to/html`` tests
an existing build instead (the deployment workflow tests the very site it uploads).

``released_labs``: a copy of the course with every lab released by ``make release``, once per
test run and shared by the workers in the same way; the grading tests copy the labs they need
from it (``tests.labcourse.released_course``).  ``kit_wheel_file``: the kit's wheel as the book
builds it, once per run in the same way (tests/test_student_install.py installs it,
tests/test_kit_wheel_date.py reads its dates and builds it again to compare).

:func:`pytest_collection_modifyitems` adds the markers that files cannot carry themselves
(``notebook`` on every nbval cell, ``cli`` on the tests of :data:`CLI_MODULES`, the marker of
:data:`PROCESS_TESTS` on the tests named there, ``slow`` on those of :data:`HEAVY_TESTS` and on
every test that needs a fixture of :data:`SLOW_FIXTURES`), so that ``make test-fast`` runs the unit tests alone: a test without one
of these markers that starts a process fails (:func:`_unit_tests_start_no_process`).  It puts
first the scopes that hold an ``mpi`` test, then those that hold a ``slow``, ``cli`` or
``notebook`` one: ``make test``
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
                 "browser": "starts a headless Chromium (tests/test_browser.py)",
                 "kit_wheel_file": "builds the kit's wheel with pip"}
#: modules whose tests run command lines, most in a new Python process per case: ``cli``
CLI_MODULES = {"test_cli_errors.py", "test_netmodels_cli_errors.py", "test_simulate_cli.py"}
#: tests of other modules that start processes of their own (``module::function``, every
#: parametrization), with the marker that keeps them out of ``make test-fast``: ``mpi`` for
#: mpiexec, ``cli`` for a command line or a new Python, ``slow`` for a grading process or a kernel
PROCESS_TESTS = {
    "test_allreduce_mpi.py::test_importing_the_package_and_the_cli_does_not_start_mpi": "cli",
    "test_collectives_mpi.py::test_importing_the_front_doors_does_not_start_mpi": "cli",
    "test_executor_plan.py::test_planning_does_not_import_mpi": "cli",
    "test_grading.py::test_release_rejects_an_unknown_lab_and_a_folder_that_is_no_course": "cli",
    "test_grading.py::test_grade_rejects_bad_arguments": "cli",
    "test_grading.py::test_make_grade_passes_lab_to_grade_py": "cli",
    "test_grading.py::test_a_grading_process_holds_the_gradebook_alone_while_it_is_open": "slow",
    "test_grading.py::test_nbgrader_of_a_grading_process_waits_for_the_gradebook": "slow",
    "test_grading_sandbox.py::test_the_kernel_gets_one_blas_thread_unless_the_grader_sets_it": "cli",
    "test_hostile_interrupt.py::test_a_ctrl_c_while_a_command_starts_ends_it_with_one_line_raising_nothing": "cli",
    "test_hostile_interrupt.py::test_once_a_command_has_started_a_ctrl_c_raises_again": "cli",
    "test_hostile_outputs.py::test_a_chapter_command_outside_a_clone_makes_results": "cli",
    "test_labdata.py::test_a_notebook_shows_one_line_without_the_loaders_path": "slow",
    "test_labdata.py::test_allreduce_runs_writes_what_the_lab_loads": "cli",
    "test_labdata.py::test_allreduce_runs_leaves_the_file_alone_when_a_run_fails": "cli",
    "test_labdata.py::test_allreduce_runs_stops_a_run_that_hangs": "cli",
    "test_labdata.py::test_the_command_refuses_in_one_line": "cli",
    "test_measure.py::test_two_runs_agree_within_the_tolerance_or_are_told_apart": "cli",
    "test_measure.py::test_a_progress_bar_is_tqdms_where_shown_and_imports_nothing_elsewhere": "cli",
    "test_median_ci.py::test_summaries_do_not_import_scipy": "cli",
    "test_predict.py::test_rounds_must_be_even_on_the_command_line": "cli",
    "test_predict.py::test_predict_launches_names_each_launchs_mode_and_load_in_its_last_lines": "cli",
    "test_script_helpers.py::test_a_benchmark_writes_its_provenance_and_refuses_a_bad_path": "cli",
    "test_shared_data.py::test_grades_name_the_students_who_share_a_file": "slow",
    "test_simulate_budget.py::test_a_probe_for_a_run_of_large_steps_maps_its_blocks_afresh_as_the_run_will": "cli",
    "test_timeline.py::test_the_command_writes_the_engines_trace_and_a_picture": "cli",
    "test_timeline_mpi.py::test_timeline_records_every_step_of_the_schedule": "mpi",
    "test_timeline_mpi.py::test_run_does_not_touch_the_recorder": "mpi",
    "test_timeline_mpi.py::test_timeline_prices_the_simulated_trace_with_a_calibration": "mpi",
    "test_timeline_mpi.py::test_a_calibration_that_cannot_price_the_trace_is_refused_in_one_line": "mpi",
    "test_toy_model.py::test_the_command_line_lists_the_toy": "cli",
    "test_toy_model.py::test_the_command_line_prices_the_toy": "cli",
    "test_toy_model.py::test_the_command_line_refuses_a_parameter_the_toy_has_not": "cli",
}
#: unit tests that compute for seconds (sweeps, random schedules, bootstraps, fits, class
#: reports): ``slow``, so that ``make test-fast`` stays under a minute; each of these functions
#: took 1 % or more of the unit tests' time in two runs of one worker (load 4 to 13, 28 Nov 2026)
HEAVY_TESTS = (
    "test_array_builders.py::test_large_builders_are_fast",
    "test_class_report.py::test_files_the_fits_refuse_are_listed_and_the_rest_shown",
    "test_combining.py::test_default_block_is_near_the_cost_minimum",
    "test_hostile_interrupt.py::test_a_class_report_interrupted_while_it_writes_leaves_no_part_of_a_page",
    "test_loggopsim_reference.py::test_the_reference_equals_the_compiled_loop_on_random_schedules",
    "test_loggopsim_reference.py::test_the_reference_equals_loggopsim_itself",
    "test_logp.py::test_closed_forms_equal_the_simulation_when_regular_and_bound_it_otherwise",
    "test_lop.py::test_fit_rtt_recovers_the_paper_curves",
    "test_lop.py::test_fit_rtt_with_noise_and_uncertainties",
    "test_lop.py::test_fit_overhead_and_the_predicted_n",
    "test_measure.py::test_the_bootstrap_interval_of_alpha_and_beta_covers_the_true_values",
    "test_nbl.py::test_optimal_block_in_the_papers_range_is_the_brute_force_integer_optimum",
    "test_registry.py::test_every_algorithm_does_its_collective_at_every_size_and_option",
    "test_shared_data.py::test_outliers_by_the_named_rule_and_the_load_in_the_table",
    "test_shared_data.py::test_the_class_report_marks_the_shared_file_and_counts_it_once",
    "test_shared_data.py::test_one_of_a_kind_is_said_in_the_singular",
    "test_simulate.py::test_stepwise_equals_the_per_transfer_simulation_on_random_schedules",
    "test_simulate_budget.py::test_the_extrapolated_counts_bracket_the_real_ones",
    "test_simulate_budget.py::test_force_runs_a_case_over_the_limit",
    "test_simulate_budget.py::test_a_default_fence_of_10_18_elements_is_refused_quickly",
    "test_topology.py::test_prefix_permutations_and_cyclic_shifts_are_contention_free_on_full_trees",
)
#: the markers of tests that may start processes; any other test that starts one fails
#: (:func:`_unit_tests_start_no_process`), so that ``make test-fast`` stays the unit tests alone
PROCESS_MARKERS = ("notebook", "mpi", "cli", "slow")
#: programs a unit test may start: they answer from the system in milliseconds (a commit's
#: date, the C library's path), and none is a command line of the kit
QUICK_PROGRAMS = {"git", "ldconfig"}


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
        function = f"{item.path.name}::{getattr(item, 'originalname', item.name)}"
        if function in PROCESS_TESTS:
            item.add_marker(getattr(pytest.mark, PROCESS_TESTS[function]))
        if function in HEAVY_TESTS:
            item.add_marker(pytest.mark.slow)
        if SLOW_FIXTURES.keys() & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    def scopes(*markers):   # xdist's scope: module or class
        return {_scope(item) for item in items if any(item.get_closest_marker(m) for m in markers)}

    mpi, long = scopes("mpi"), scopes("slow", "mpi", "cli", "notebook")
    items.sort(key=lambda item: (_scope(item) not in mpi, _scope(item) not in long))


@pytest.fixture(autouse=True)
def _unit_tests_start_no_process(request, monkeypatch):
    """Fail a test that starts a process (other than :data:`QUICK_PROGRAMS`) without a marker
    of :data:`PROCESS_MARKERS`: mark it in :data:`PROCESS_TESTS` or in its module."""
    if any(request.node.get_closest_marker(m) for m in PROCESS_MARKERS):
        yield
        return
    started = []
    popen_init, fork = subprocess.Popen.__init__, os.fork

    def init(self, args, *rest, **kwargs):
        first = args if isinstance(args, (str, bytes, os.PathLike)) else next(iter(args), "")
        first = os.fsdecode(first)
        program = Path(first.split()[0] if kwargs.get("shell") and first.split() else first).name
        if program not in QUICK_PROGRAMS:
            started.append(program)
        popen_init(self, args, *rest, **kwargs)

    def forked():
        started.append("os.fork")
        return fork()

    monkeypatch.setattr(subprocess.Popen, "__init__", init)
    monkeypatch.setattr(os, "fork", forked)
    yield
    if started:
        pytest.fail(f"{request.node.nodeid} started {', '.join(sorted(set(started)))} without a marker of "
                    f"{'/'.join(PROCESS_MARKERS)}: add it to PROCESS_TESTS in tests/conftest.py", pytrace=False)


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


def build_kit_wheel(out: Path) -> subprocess.CompletedProcess:
    """The kit's wheel built into ``out`` by the book's builder (``book/_ext/kit_wheel.py``),
    dated by the sources' last commit (``SOURCE_DATE_EPOCH`` unset), as a CompletedProcess
    whose stdout is the wheel's path."""
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    import kit_wheel

    args = ["kit_wheel.build", str(ROOT), str(out)]
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("SOURCE_DATE_EPOCH", raising=False)
        try:
            return subprocess.CompletedProcess(args, 0, str(kit_wheel.build(ROOT, out)), "")
        except Exception as exc:  # noqa: BLE001 (the fixture's users fail with its message)
            return subprocess.CompletedProcess(args, 1, "", f"{exc.__class__.__name__}: {exc}")


@pytest.fixture(scope="session")
def kit_wheel_file(tmp_path_factory) -> Path:
    """The kit's wheel (see the module docstring), built once per test run."""
    out = _once_per_run(tmp_path_factory, "kit-wheel", build_kit_wheel)
    wheels = sorted(out.glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]
