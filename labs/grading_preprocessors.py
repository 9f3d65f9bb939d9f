"""nbgrader preprocessors used by ``nbgrader_config.py``, and the run that feeds the feedback pages.

``ExecuteRestartingDeadKernel`` (autograde): nbgrader's ``Execute`` gives up on the whole
notebook when the kernel dies (``exit()``, ``os._exit()``, a crash), and the student gets
nothing.  This one records the death in the cell, starts a fresh kernel and goes on: the
cells after it run without the lost variables, as they would for the student.

``LimitOutputSize`` (autograde): nbgrader's ``LimitOutput`` counts lines: one ``print("x" * 10**7)`` is a single line of
10 MB that would end up in the gradebook's notebook and in the student's HTML feedback.
``LimitOutputSize`` also caps the characters of every output and drops oversized binary
outputs (images), keeping a note of what was cut.

A feedback page shows the student's own outputs (their fit, plots, results) and the message of
every visible test, never a hidden test's code or message, so that a lab can be given again:

- ``run_for_feedback`` (run by ``grade.py`` after each autograde, in the same sandbox; also
  ``python grading_preprocessors.py GRADED OUT``): the graded notebook is run again in a kernel
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
from pathlib import Path

import nbformat
from nbclient.exceptions import DeadKernelError
from nbclient.util import run_sync
from nbgrader.preprocessors import Execute, GetGrades, LimitOutput, NbGraderPreprocessor
from traitlets import Integer, List, Unicode


NOTE = "\n... output truncated while grading ({} characters) ...\n"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + NOTE.format(len(text))


class ExecuteRestartingDeadKernel(Execute):
    """``Execute`` that survives the death of the kernel: restart it and run the next cells.

    A kernel may also die just after a cell that called ``exit()`` replied; the death then
    shows at the next cell, which is run again once in the fresh kernel.
    """

    def preprocess_cell(self, cell, resources, index):
        for attempt in (1, 2):
            try:
                return super().preprocess_cell(cell, resources, index)
            except DeadKernelError:
                self.log.warning("The kernel died in cell %d (attempt %d): restarting it", index, attempt)
                run_sync(self.km.restart_kernel)(now=True)
                run_sync(self.kc.wait_for_ready)(timeout=self.startup_timeout)
        cell.outputs.append(nbformat.v4.new_output(
            "error", ename="DeadKernelError",
            evalue="the kernel died while running this cell; the next cells run in a new kernel",
            traceback=["DeadKernelError: the kernel died while running this cell (exit(), os._exit(), "
                       "a crash); the next cells run in a new kernel, without this cell's variables"]))
        return cell, self.resources


class LimitOutputSize(LimitOutput):
    """``LimitOutput`` (lines) plus a cap on characters per output (-1: no cap)."""

    max_chars = Integer(20_000, help="maximum characters kept per output (-1 means no limit)").tag(config=True)

    def preprocess_cell(self, cell, resources, cell_index):
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        limit = self.max_chars
        if limit < 0 or cell.cell_type != "code":
            return cell, resources
        for out in cell.outputs:
            kind = out.output_type
            if kind == "stream":
                out.text = _cut(out.text, limit)
            elif kind == "error":
                out.evalue = _cut(str(out.evalue), limit)
                out.traceback = [_cut(line, limit) for line in out.traceback]
            elif kind in ("execute_result", "display_data"):
                for mime, value in list(out.data.items()):
                    text = "".join(value) if isinstance(value, list) else str(value)
                    if len(text) <= limit or (mime.startswith("image/") and len(text) <= 50 * limit):
                        continue  # small, or an ordinary figure
                    if mime == "text/plain":
                        out.data[mime] = _cut(text, limit)
                    else:
                        del out.data[mime]
                if not out.data:
                    out.data["text/plain"] = "... output removed while grading (too large) ..."
        return cell, resources


class HideHiddenTestsInFeedback(NbGraderPreprocessor):
    """Feedback without hidden tests: their regions removed, outputs from the run for feedback."""

    begin_test_delimeter = Unicode("BEGIN HIDDEN TESTS").tag(config=True)
    end_test_delimeter = Unicode("END HIDDEN TESTS").tag(config=True)
    display_data_priority = List().tag(config=True)  # set by the HTML exporter; unused here

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

    import grading_sandbox

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


class InlineMathJax(NbGraderPreprocessor):
    """Puts MathJax into the page's resources (``resources["kit_mathjax"]``, see the template) and
    the hash by which the page's Content Security Policy lets it run (``kit_mathjax_sha256``)."""

    display_data_priority = List().tag(config=True)  # set by the HTML exporter; unused here

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
