"""Output limits applied to graded notebooks (an nbgrader preprocessor).

nbgrader's ``LimitOutput`` counts lines: one ``print("x" * 10**7)`` is a single line of
10 MB that would end up in the gradebook's notebook and in the student's HTML feedback.
``LimitOutputSize`` also caps the characters of every output and drops oversized binary
outputs (images), keeping a note of what was cut.
"""

from __future__ import annotations

from nbgrader.preprocessors import LimitOutput
from traitlets import Integer

NOTE = "\n... output truncated while grading ({} characters) ...\n"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + NOTE.format(len(text))


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
