"""nbgrader configuration of the course (read by every ``nbgrader`` command run in ``labs/``).

The course root is this folder: ``source/`` (instructor versions), ``release/`` (student
versions), ``submitted/<student>/<lab>/`` (hand-ins), ``autograded/``, ``feedback/`` and
``gradebook.db``.  Grading runs locally, offline, without Docker.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # for grading_preprocessors, feedback_page

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

# nbgrader 0.9.6's Gradebook.add_submission builds a submission's rows linked to rows of the session
# and adds them to it a few lines later; SQLAlchemy 2 no longer adds such rows by their links
# (cascade_backrefs removed), so the reads in between warn that it "will not proceed" with them.
# Harmless: the explicit add that follows saves them all (every graded submission's grades are in
# the gradebook).  Only that warning, from that module, of those two objects, is silenced.
import warnings  # noqa: E402

from sqlalchemy.exc import SAWarning  # noqa: E402

warnings.filterwarnings("ignore", category=SAWarning, module=r"nbgrader\.api\Z",
                        message=r"Object of type <Submitted(Assignment|Notebook)> not in session, "
                                r"add operation along '\w+\.submissions' will not proceed")

c.CourseDirectory.course_id = "netmodels"
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))

# Each lab ships data files with its source notebook (the reference measurement that makes
# the source notebook deterministic under nbval).  nbgrader copies the source folder's files
# over the student's before grading; the student's own measurement must win.  Which lab hands
# in which files is declared once, with the labs, in mpi_exercises/labspec.py.
from mpi_exercises.labspec import LABS  # noqa: E402

c.Autograde.exclude_overwriting = {name: lab.data_files for name, lab in LABS.items() if lab.files}

# A submission may delete test cells: put them back (from the gradebook) before grading.
c.OverwriteCells.add_missing_cells = True
# nbgrader's sanitizing steps, with OverwriteCells replaced by its subclass that logs a test cell
# handed in as released (its hidden tests removed by the release) as restored, not as changed:
# nbgrader would warn "checksum ... has changed!" for every test cell with hidden tests of every
# real hand-in.  A cell the student changed still gets nbgrader's warning (grading_cells.py).
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "grading_preprocessors.RestoreReleasedCells",
    "nbgrader.preprocessors.CheckCellMetadata",
]

# Per-cell time limit while grading (seconds; also read by the Execute subclass used below).
# A cell that runs longer is interrupted, scores what it broke, and the rest of the notebook
# still runs.  Every cell of the labs takes well under a second on a laptop.
c.Execute.timeout = 60
# A kernel of `nbgrader autograde` started by anything but grade.py (the Formgrader's "autograde"
# button, a command typed by hand) would run a student's code as the instructor, on a hand-in
# grade.py refused (a link to another file, a notebook without nbgrader's cells): its kernels
# are the sandbox's, which only grade.py can start (they refuse to without $LABS_SANDBOX).
# Grading without a sandbox stays grade.py's choice: UNSAFE_GRADING=1 (labs/README.md).
if os.environ.get("UNSAFE_GRADING") != "1":
    c.Execute.kernel_manager_class = "grading_sandbox.SandboxedKernelManager"
c.Execute.startup_timeout = 120
c.Execute.interrupt_on_timeout = True
# After a cell's reply, its last outputs may lag on a loaded machine: wait for them this long
# (seconds; nbclient's 4 s failed whole submissions while other jobs shared the cores).
c.Execute.iopub_timeout = 30
# When the last cell is done (its outputs all received), the kernel is stopped at once: a
# graceful stop would only wait for the kernel's Python to tear itself down (about 0.5 s per
# notebook, a fifth of grading a lab) and run exit handlers a submission may have registered.
c.Execute.shutdown_kernel = "immediate"

# Outputs kept in the graded notebook and the feedback: lines and characters per cell.
c.Autograde.autograde_preprocessors = [
    "grading_preprocessors.ExecuteRestartingDeadKernel",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "grading_preprocessors.LimitOutputSize",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.LimitOutputSize.max_lines = 200
c.LimitOutputSize.max_chars = 20_000

# Feedback pages: the scores, written answers not graded yet marked pending, the student's own
# outputs and the visible tests' messages (from the run without hidden tests that grade.py
# makes; the first error whole, later NameErrors one line, no path of this machine), never a
# hidden test, and MathJax inside the page (grading_preprocessors.py).
c.GenerateFeedback.preprocessors = [
    "grading_preprocessors.GetGradesMarkingPending",
    "grading_preprocessors.HideHiddenTestsInFeedback",
    "grading_preprocessors.TidyErrorsForFeedback",
    "grading_preprocessors.InlineMathJax",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]

# The page: feedback_page.FeedbackExporter, for the feedback pages only (the Formgrader's own
# HTML exporter keeps its templates), with nbgrader's feedback template (its folder stays on the
# search path) extended by templates/kit_feedback: a Content Security Policy (no script but the
# page's own), the student's HTML through an allow-list and the score out of its reach, pending
# answers, the notes of the feedback run, MathJax from the page itself instead of a CDN.  A page
# handed out alone loads nothing.
import nbgrader  # noqa: E402

c.GenerateFeedback.exporter_class = "feedback_page.FeedbackExporter"
c.FeedbackExporter.template_name = "kit_feedback"            # its base template is nbgrader's "feedback"
c.FeedbackExporter.template_file = "feedback_offline.html.j2"
c.FeedbackExporter.extra_template_basedirs = [
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates"),
    os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "templates"),
]
