"""MathJax 3 served from the book's own site, never from a CDN: the files the book needs,
copied from the ``django-static-mathjax`` wheel (MathJax 3.2.2; only what the CHTML output of
``tex-mml-chtml.js`` loads).  (The labs' feedback pages carry their own MathJax inside each
page: ``labs/grading_feedback.py``.)
"""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

#: the entry script, relative to the copied folder
ENTRY = "tex-mml-chtml.js"
#: MathJax files copied from the package's es5 directory (relative paths or directories)
FILES = [
    ENTRY,
    "output/chtml/fonts/woff-v2",
    "input/tex/extensions",
    "ui",
    "a11y",
    "sre/mathmaps/base.json",
    "sre/mathmaps/en.json",
    "sre/mathmaps/nemeth.json",
]


def es5() -> Path:
    """The installed MathJax 3 es5 folder."""
    path = Path(str(resources.files("mathjax"))) / "static" / "mathjax" / "es5"
    if not (path / ENTRY).is_file():
        raise FileNotFoundError(f"MathJax 3 not found at {path}: install django-static-mathjax")
    return path


def copy(dst: Path) -> Path:
    """Copy :data:`FILES` into ``dst``; return the path of the entry script."""
    src, dst = es5(), Path(dst)
    for rel in FILES:
        s, d = src / rel, dst / rel
        d.parent.mkdir(parents=True, exist_ok=True)
        if s.is_dir():
            shutil.copytree(s, d, dirs_exist_ok=True)
        else:
            shutil.copy2(s, d)
    return dst / ENTRY

