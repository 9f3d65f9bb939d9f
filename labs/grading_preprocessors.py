"""nbgrader preprocessors used by ``nbgrader_config.py``.

``ExecuteRestartingDeadKernel`` (autograde): nbgrader's ``Execute`` gives up on the whole
notebook when the kernel dies (``exit()``, ``os._exit()``, a crash), and the student gets
nothing.  This one records the death in the cell, starts a fresh kernel and goes on: the
cells after it run without the lost variables, as they would for the student.

``LimitOutputSize`` (autograde): nbgrader's ``LimitOutput`` counts lines: one ``print("x" * 10**7)`` is a single line of
10 MB that would end up in the gradebook's notebook and in the student's HTML feedback.
``LimitOutputSize`` also caps the characters of every output and drops oversized binary
outputs (images), keeping a note of what was cut.

``HideHiddenTestsInFeedback`` (feedback): the graded notebook holds the hidden tests again
(nbgrader restores them to grade); the students' feedback pages do not show them, so that a
lab can be given again.  It removes the hidden regions from the cells' sources, and the
outputs of every code cell from the first hidden test on: from then on the kernel, which the
student's code controls, has seen hidden test code and could print it (IPython keeps every
cell's source in ``In``), encoded or not.  Those cells show their score instead.  Unlike
nbgrader's own ``ClearHiddenTests`` it never raises: a student cell may contain the marker
text, any number of times.
"""

from __future__ import annotations

import nbformat
from nbclient.exceptions import DeadKernelError
from nbclient.util import run_sync
from nbgrader.preprocessors import Execute, LimitOutput, NbGraderPreprocessor
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
    """Feedback without hidden tests: their regions and every output from the first one on."""

    begin_test_delimeter = Unicode("BEGIN HIDDEN TESTS").tag(config=True)
    end_test_delimeter = Unicode("END HIDDEN TESTS").tag(config=True)
    display_data_priority = List().tag(config=True)  # set by the HTML exporter; unused here

    def preprocess(self, nb, resources):
        seen = False
        for cell in nb.cells:
            if self.begin_test_delimeter in cell.source:
                cell.source = self._without_hidden(cell.source)
                seen = True
            if seen and cell.cell_type == "code":
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=_note(cell))]
        return nb, resources

    def _without_hidden(self, source: str) -> str:
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


def _note(cell) -> str:
    meta = cell.metadata.get("nbgrader", {})
    head = "[output not shown in feedback: this cell ran after hidden tests]"
    if meta.get("grade") and not meta.get("solution") and meta.get("score") is not None:
        verdict = "passed" if float(meta["score"]) >= float(meta.get("points", 0)) else "failed"
        return f"{head}\nTest {verdict}: {float(meta['score']):g} of {float(meta.get('points', 0)):g} points\n"
    return head + "\n"
