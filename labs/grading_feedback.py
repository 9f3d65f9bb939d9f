"""The feedback pages' side of grading: what a page shows of a graded notebook, and the run it shows.

A feedback page shows the student's own outputs (their fit, plots, results) and the message of
every visible test, never a hidden test's code or message, so that a lab can be given again:

- ``run_for_feedback`` (run by ``grade.py`` after each autograde, in the same sandbox; also
  ``python grading_feedback.py GRADED OUT``): the graded notebook is run again in a kernel
  of its own with its hidden tests removed, into ``autograded/<student>/<lab>.feedback-run/``.
  The graded run's outputs cannot be shown from the first hidden test on: its kernel, which the
  student's code controls, has seen hidden test code and could print it, encoded or not
  (IPython keeps every cell's source in ``In``; a traceback quotes the failing lines).  The run
  for feedback never sees any: its outputs are the student's own, and its test cells hold only
  the visible tests, whose failures show their messages.
- ``GetGradesMarkingPending``: nbgrader's ``GetGrades``, and which written answers wait for
  the instructor (:func:`is_pending`), so that a page says "pending" instead of "0 / 2".
- ``HideHiddenTestsInFeedback``: removes the hidden regions from the cells' sources and takes
  every code cell's outputs from the run for feedback.  A test cell that failed while grading
  and whose visible part passed failed in a hidden test: it says so, without the message.
  Without a run for feedback (a submission graded by an older ``grade.py``, or a run that did
  not finish) every code cell from the first hidden test on shows its score instead of its
  outputs.  Unlike nbgrader's own ``ClearHiddenTests`` it never raises: a student cell may
  contain the marker text, any number of times.
- ``TidyErrorsForFeedback``: the first error of the notebook outside a test cell is shown
  whole; a ``NameError`` after it (a name the failed cell never defined) is one line, "not run
  because of the error above", without its traceback; and no output shows a path of the grading machine (the
  scratch folder is ``.``, the course ``<course>``, the Python environment ``<python>``, the
  home folder ``~``: :func:`scrub_paths`).
- ``InlineMathJax``: MathJax 3 inside the page (``tex-svg-full.js`` of ``django-static-mathjax``,
  gzip-compressed and base64-encoded, about 0.95 MB, unpacked by the browser's
  ``DecompressionStream``), so that a page handed out on its own renders its math offline.
  The SVG output needs no font files; the full TeX input needs no extension loaded later.
"""

from __future__ import annotations

import base64
import copy
import functools
import gzip
import os
import re
import sys
from pathlib import Path

import nbformat
from nbgrader.preprocessors import GetGrades, NbGraderPreprocessor
from traitlets import List, Unicode

import grading_sandbox
from grading_execute import ExecuteRestartingDeadKernel, LimitOutputSize


class FeedbackPreprocessor(NbGraderPreprocessor):
    """A preprocessor of the feedback pages: takes the ``display_data_priority`` that nbconvert's
    HTML exporter configures for every ``NbConvertBase`` (unused here; nbgrader's base class does not
    take it from the configuration, and traitlets would warn "not recognized" on every page)."""

    display_data_priority = List().tag(config=True)


class HideHiddenTestsInFeedback(FeedbackPreprocessor):
    """Feedback without hidden tests: their regions removed, outputs from the run for feedback."""

    begin_test_delimeter = Unicode("BEGIN HIDDEN TESTS").tag(config=True)
    end_test_delimeter = Unicode("END HIDDEN TESTS").tag(config=True)

    def preprocess(self, nb, resources):
        for cell in nb.cells:       # the page's notes are the grader's: none from the submission
            cell.metadata.pop(NOTES, None)
            tags = cell.metadata.get("tags")     # they become class names on the page: one word each
            if tags is not None:
                cell.metadata["tags"] = ([t for t in tags if isinstance(t, str) and TAG.fullmatch(t)]
                                         if isinstance(tags, list) else [])
        run = _feedback_run(nb, resources)
        if run is None:
            return self._hide_after_first_hidden_test(nb), resources
        for cell, fresh in zip(nb.cells, run.cells):
            hidden = self.begin_test_delimeter in cell.source
            if hidden:
                cell.source = self.without_hidden(cell.source)
            if cell.cell_type != "code":
                continue
            cell.outputs, cell.execution_count = fresh.outputs, fresh.get("execution_count")
            meta = cell.metadata.get("nbgrader", {})
            if not (meta.get("grade") and not meta.get("solution") and meta.get("score") is not None):
                continue
            failed = float(meta["score"]) < float(meta.get("points", 0))
            if failed and not any(o.output_type == "error" for o in cell.outputs):
                cell.metadata.setdefault(NOTES, []).append(
                    "A hidden test of this cell failed; its message is not shown." if hidden else
                    "This test failed while grading, and passed when your notebook was run again "
                    "for this page: its result depends on something that changed between the runs.")
        return nb, resources

    def without_hidden(self, source: str) -> str:
        """``source`` without its hidden regions (an unclosed one runs to the end)."""
        kept, hidden = [], False
        for line in source.split("\n"):
            if self.begin_test_delimeter in line:
                hidden = True
            elif self.end_test_delimeter in line:
                hidden = False
            elif not hidden:
                kept.append(line)
        return "\n".join(kept)

    def _hide_after_first_hidden_test(self, nb):
        seen = False
        for cell in nb.cells:
            if self.begin_test_delimeter in cell.source:
                cell.source = self.without_hidden(cell.source)
                seen = True
            if seen and cell.cell_type == "code":
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=_note(cell))]
        return nb


def _note(cell) -> str:
    meta = cell.metadata.get("nbgrader", {})
    head = "[output not shown in feedback: this cell ran after hidden tests]"
    if meta.get("grade") and not meta.get("solution") and meta.get("score") is not None:
        verdict = "passed" if float(meta["score"]) >= float(meta.get("points", 0)) else "failed"
        return f"{head}\nTest {verdict}: {float(meta['score']):g} of {float(meta.get('points', 0)):g} points\n"
    return head + "\n"


class TidyErrorsForFeedback(FeedbackPreprocessor):
    """The first error whole, each later ``NameError`` one line without a traceback, and no path
    of the grading machine in any output (module docstring)."""

    def preprocess(self, nb, resources):
        paths = grader_paths(resources)
        first = None
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            for out in cell.get("outputs", []):
                if out.get("output_type") == "error":
                    if first is not None and out.get("ename") == "NameError":
                        name = re.search(r"name '([^']{1,100})' is not defined", str(out.get("evalue", "")))
                        missing = f"`{name.group(1)}` was never defined" if name else "a name was never defined"
                        out["traceback"] = [f"Not run because of the error above: {missing}."]
                    meta = cell.metadata.get("nbgrader", {})
                    test = meta.get("grade") and not meta.get("solution")    # defines nothing later cells use
                    first = index if first is None and not test else first
                _scrub_output(out, paths)
        return nb, resources


#: the folder name of a grading kernel's scratch copy of a submission (``grading_sandbox.environment``,
#: in the temporary folder, whichever it was when grading)
SCRATCH = "/" + grading_sandbox.SCRATCH_PREFIX
#: what ends a path in a text (a blank or a quote), and a folder's name
_PATH_END = " \t\n\r'\""
_NAME = re.compile(r"[^/\s'\"]*")


def grader_paths(resources=None) -> list[tuple[str, str]]:
    """(path of the grading machine, what a page shows instead), longest first: the course (this
    folder, the working folder, and the one above ``autograded/`` of the notebook converted), the
    Python environments (``<python>``) and the packages (their name) the kernel saw, the home folder."""
    pairs = {os.path.realpath(Path(__file__).parent): "<course>", os.path.realpath(os.getcwd()): "<course>"}
    where = (resources or {}).get("metadata", {}).get("path")
    if where and Path(where).resolve().parent.parent.name == "autograded":
        pairs[os.path.realpath(Path(where).resolve().parents[2])] = "<course>"
    prefixes = {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}
    for folder in grading_sandbox.python_dirs():     # environments, and packages by their name
        pairs[folder] = "<python>" if folder in prefixes else Path(folder).name
    pairs.setdefault(os.path.realpath(os.path.expanduser("~")), "~")
    return sorted(((k, v) for k, v in pairs.items() if len(k) > 1), key=lambda kv: -len(kv[0]))


def scrub_paths(text: str, paths: list[tuple[str, str]]) -> str:
    """``text`` with the scratch folder shown as ``.`` and each path of ``paths`` replaced."""
    parts, done, at = [], 0, text.find(SCRATCH)
    while at >= 0:                  # the path around it, from its start to the end of the folder's name
        start = at
        while start > done and text[start - 1] not in _PATH_END:
            start -= 1
        stop = _NAME.match(text, at + len(SCRATCH)).end()
        if text.startswith("/work", stop) and (stop + 5 == len(text) or text[stop + 5] in "/" + _PATH_END):
            stop += 5
        parts += [text[done:start], "."]
        done, at = stop, text.find(SCRATCH, stop)
    text = "".join(parts) + text[done:]
    for path, shown in paths:
        text = text.replace(path, shown)
    return text


def _scrub_output(out, paths) -> None:
    for key in ("text", "evalue", "ename"):
        if isinstance(out.get(key), str):
            out[key] = scrub_paths(out[key], paths)
    if isinstance(out.get("traceback"), list):
        out["traceback"] = [scrub_paths(str(line), paths) for line in out["traceback"]]
    data = out.get("data")
    if isinstance(data, dict):
        for mime, value in data.items():
            if mime.startswith("text/") or mime in ("application/json",):
                if isinstance(value, str):
                    data[mime] = scrub_paths(value, paths)
                elif isinstance(value, list):
                    data[mime] = [scrub_paths(v, paths) if isinstance(v, str) else v for v in value]


#: a cell's metadata key for the feedback page's own notes on it (texts; the template shows them
#: after the cell's outputs, which the student's code made and which are shown through an allow-list)
NOTES = "kit_feedback_notes"
#: a cell tag the page keeps (nbconvert writes each as a class name, ``celltag_<tag>``)
TAG = re.compile(r"[A-Za-z0-9_-]{1,64}")


# ---------------------------------------------------------------- the run for feedback
def feedback_run_folder(graded: Path) -> Path:
    """Where the runs for feedback of the graded folder ``autograded/<student>/<lab>`` are kept."""
    graded = Path(graded)
    return graded.parent / f"{graded.name}.feedback-run"


def feedback_run_path(graded: Path) -> Path:
    """Where the run for feedback of ``autograded/<student>/<lab>/<nb>.ipynb`` is kept."""
    return feedback_run_folder(Path(graded).parent) / Path(graded).name


def _feedback_run(nb, resources):
    """The run for feedback of the notebook being converted, if it matches it cell by cell."""
    folder = resources.get("metadata", {}).get("path")
    name = resources.get("nbgrader", {}).get("notebook")
    if not folder or not name:
        return None
    path = feedback_run_path(Path(folder) / f"{name}.ipynb")
    try:
        run = nbformat.read(path, as_version=4)
    except (OSError, ValueError):
        return None

    def shape(book):
        return [(c.cell_type, c.metadata.get("nbgrader", {}).get("grade_id")) for c in book.cells]

    return run if shape(run) == shape(nb) else None


def prepare_for_feedback(nb, hide: HideHiddenTestsInFeedback):
    """A copy of a graded notebook without its hidden regions, outputs or execution counts."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if hide.begin_test_delimeter in cell.source:
            cell.source = hide.without_hidden(cell.source)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def run_for_feedback(graded: Path, out: Path, course: Path, timeout: int | None = None) -> None:
    """Run the graded notebook ``graded`` again without its hidden tests; write it to ``out``.

    The course's ``nbgrader_config.py`` sets the kernel's limits (``Execute``) and the output
    caps (``LimitOutputSize``); ``timeout`` (seconds per cell) overrides ``Execute.timeout``.
    With ``$LABS_SANDBOX`` set (``grade.py``), the kernel runs in the submission's sandbox.
    """
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    if timeout:
        config.Execute.timeout = int(timeout)
    execute = {"kernel_manager_class": grading_sandbox.SandboxedKernelManager} if os.environ.get(grading_sandbox.ENV) else {}
    nb = prepare_for_feedback(nbformat.read(graded, as_version=4), HideHiddenTestsInFeedback(config=config))
    resources = {"metadata": {"path": str(Path(graded).parent)}}
    nb, resources = ExecuteRestartingDeadKernel(config=config, **execute).preprocess(nb, resources)
    nb, resources = LimitOutputSize(config=config).preprocess(nb, resources)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    nbformat.write(nb, tmp)
    os.replace(tmp, out)


# ---------------------------------------------------------------- scores still to come
def is_pending(grade) -> bool:
    """A written answer that waits for the instructor: no automatic and no manual score yet.

    (nbgrader scores an answer left as released 0 by itself: that one is not pending.)
    """
    return grade.auto_score is None and grade.manual_score is None


class GetGradesMarkingPending(GetGrades):
    """``GetGrades``, and ``nbgrader.pending`` on every answer not graded yet.

    ``resources["nbgrader"]["pending"]``: the points of those answers.
    """

    def preprocess(self, nb, resources):
        resources.setdefault("nbgrader", {})["pending"] = 0.0
        nb, resources = super().preprocess(nb, resources)
        resources["nbgrader"]["pending"] = sum(float(c.metadata.nbgrader.get("points", 0)) for c in nb.cells
                                               if c.metadata.get("nbgrader", {}).get("pending"))
        return nb, resources

    def _get_score(self, cell, resources):
        super()._get_score(cell, resources)
        grade = self.gradebook.find_grade(cell.metadata["nbgrader"]["grade_id"], self.notebook_id,
                                          self.assignment_id, self.student_id)
        cell.metadata.nbgrader["pending"] = is_pending(grade)


# ---------------------------------------------------------------- math, offline
#: the MathJax 3 component put into every page (SVG output: no font files to load)
MATHJAX = "tex-svg-full.js"


@functools.cache
def mathjax_gzip_base64() -> str:
    """``MATHJAX`` of the installed ``django-static-mathjax``, gzip-compressed, base64."""
    return base64.b64encode(gzip.compress(_mathjax_path().read_bytes(), compresslevel=9, mtime=0)).decode("ascii")


def _mathjax_path() -> Path:
    from importlib import resources as importlib_resources

    return Path(str(importlib_resources.files("mathjax"))) / "static" / "mathjax" / "es5" / MATHJAX


@functools.cache
def mathjax_sha256() -> str:
    """The CSP source of ``MATHJAX``'s text, the script the page's unpacker makes (its text is the
    file's, an ASCII file: ``page_safety.script_hash``)."""
    from page_safety import script_hash

    return script_hash(_mathjax_path().read_bytes().decode("utf-8").encode("utf-8"))


class InlineMathJax(FeedbackPreprocessor):
    """Puts MathJax into the page's resources (``resources["kit_mathjax"]``, see the template) and
    the hash by which the page's Content Security Policy lets it run (``kit_mathjax_sha256``)."""

    def preprocess(self, nb, resources):
        resources["kit_mathjax"] = mathjax_gzip_base64()
        resources["kit_mathjax_sha256"] = mathjax_sha256()
        return nb, resources


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Run a graded notebook again without its hidden tests "
                                     "(what its feedback page shows); grade.py runs this.")
    parser.add_argument("graded", type=Path, help="autograded/<student>/<lab>/<notebook>.ipynb")
    parser.add_argument("out", type=Path, help="where to write the run")
    parser.add_argument("--course", type=Path, default=Path.cwd(), help="the course folder (default: .)")
    parser.add_argument("--timeout", type=int, help="seconds per cell (default: Execute.timeout)")
    args = parser.parse_args()
    run_for_feedback(args.graded, args.out, args.course, args.timeout)
