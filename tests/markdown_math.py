"""Inline math that a list item breaks.

Markdown starts a list item at a line beginning with ``- ``, ``* ``, ``+ `` or ``1. `` even in
the middle of a paragraph.  When an inline ``$...$`` opened on an earlier line is still open
there, the math is cut in two and both halves show as raw TeX.  :func:`broken_math` finds such
lines in a markdown text; :func:`markdown_sources` lists the texts of a notebook (its markdown
cells) or of a ``.md`` page.

    python -m tests.markdown_math FILE...     (prints file, cell, line of every finding)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

#: a line that starts a list item (up to 3 spaces of indentation), as CommonMark reads it
LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|1[.)])(?:[ \t]|$)")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,}|:{3,})")
CODE_SPAN = re.compile(r"(`+).*?\1")


def _dollars(line: str) -> list[str]:
    """The ``$`` and ``$$`` delimiters of a line, outside code spans, escapes removed."""
    line = CODE_SPAN.sub("", line.replace("\\\\", "").replace("\\$", ""))
    return re.findall(r"\$\$|\$", line)


def broken_math(text: str) -> list[tuple[int, str]]:
    """(line number from 1, line) of every line that starts a list item while an inline
    ``$`` opened on a previous line of the same paragraph is still open."""
    found: list[tuple[int, str]] = []
    inline = display = False
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if fence is not None:          # inside a fenced block: no markdown, no math
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m and not inline and not display:
            fence = m.group(1)
            continue
        if not line.strip():           # a blank line ends the paragraph and any inline math
            inline = False
            continue
        if inline and LIST_ITEM.match(line):
            found.append((number, line))
        for d in _dollars(line):
            if d == "$$" and not inline:
                display = not display
            elif d == "$" and not display:
                inline = not inline
    return found


def markdown_sources(path: Path) -> list[tuple[int | None, str]]:
    """(cell index or None, markdown text) of a notebook's markdown cells or of a .md page."""
    if path.suffix == ".ipynb":
        nb = nbformat.read(path, as_version=4)
        return [(i, c.source) for i, c in enumerate(nb.cells) if c.cell_type == "markdown"]
    return [(None, path.read_text(encoding="utf-8"))]


def findings(path: Path) -> list[str]:
    """Every broken line of ``path``: "cell N, line L: text" (or "line L: text" for a page)."""
    out = []
    for cell, text in markdown_sources(path):
        where = "" if cell is None else f"cell {cell}, "
        out += [f"{where}line {n}: {line}" for n, line in broken_math(text)]
    return out


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        for f in findings(Path(arg)):
            print(f"{arg}: {f}")
