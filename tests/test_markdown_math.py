"""No inline math of the book or the labs is cut by a line that markdown reads as a list item
(``tests/markdown_math.py``): every markdown cell of every notebook of ``book/`` and
``labs/source/``, and every ``.md`` page of the book."""

from __future__ import annotations

import pytest

from tests.markdown_math import broken_math, findings
from tests.mpirun import ROOT

FILES = sorted([*ROOT.glob("book/**/*.ipynb"), *ROOT.glob("labs/source/*/*.ipynb"), *ROOT.glob("book/**/*.md")])
FILES = [p for p in FILES if ".ipynb_checkpoints" not in p.parts and "_build" not in p.parts]

#: files whose markdown still breaks (relative path -> where), fixed in the notebook itself
KNOWN: dict[str, str] = {}


def _param(path):
    rel = path.relative_to(ROOT).as_posix()
    if rel in KNOWN:
        return pytest.param(path, id=rel, marks=pytest.mark.xfail(
            strict=True, reason=f"fixed in the notebook by the integrator: {KNOWN[rel]}"))
    return pytest.param(path, id=rel)


def test_the_scan_finds_a_list_item_inside_inline_math():
    text = "The paper prints $a = 1 + 2\n- (3 + 4)$: rounded.\n"
    assert broken_math(text) == [(2, "- (3 + 4)$: rounded.")]
    for item in ("* x$", "+ x$", "1. x$", "   - x$", "1) x$"):
        assert [n for n, _ in broken_math(f"so $a\n{item}\n")] == [2], item


@pytest.mark.parametrize("text", [
    "A list:\n\n- $a$ and $b$\n- $c$\n",                 # math closed on each line
    "Costs $a + b$\n- not math\n",                        # closed before the list item
    "open $a\n\n- a new paragraph ends it\n",             # a blank line ends inline math
    "```\n$a\n- code\n```\n",                             # fenced code is not markdown
    "$$\na\n- b\n$$\n",                                   # display math is its own block
    "`$a`\n- b\n",                                        # a dollar inside a code span
    "costs \\$5\n- b\n",                                  # an escaped dollar
    "so $a\n2. two is not a list start here$\n",           # only 1. interrupts a paragraph
])
def test_the_scan_accepts(text):
    assert broken_math(text) == []


def test_every_source_is_scanned():
    rel = {p.relative_to(ROOT).as_posix() for p in FILES}
    assert {"book/intro.md", "book/lop.ipynb", "labs/source/lab1/lab1.ipynb"} <= rel
    assert set(KNOWN) <= rel, "a known failure names a file that no longer exists"


@pytest.mark.parametrize("path", [_param(p) for p in FILES])
def test_inline_math_is_not_cut_by_a_list_item(path):
    found = findings(path)
    assert not found, f"{path.relative_to(ROOT)}: a line starts a list item inside inline math " \
                      "(rewrap the paragraph so that no line starts with '- ', '* ', '+ ' or '1. '):\n" \
                      + "\n".join(found)
