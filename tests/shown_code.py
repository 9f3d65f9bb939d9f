"""What a reader of the book sees of its code: every line of a chapter's shown code cells,
classified as *plumbing* (printing, formatting, ``glue``) or *other* (the model, the schedule,
the measurement, the figures' data).

A code cell is shown unless it is tagged ``hide-input``, ``remove-input`` or ``remove-cell``
(myst-nb folds or drops those).  A line counts if it is neither blank nor a comment.  Each
statement is classified by its syntax tree (:func:`plumbing`): a call of ``print``, ``glue``,
``display``, ``Markdown`` or ``HTML``; an assignment, return or expression whose value is
built by formatting (an f-string, ``str.format``, ``%`` on a string, ``", ".join`` of those);
a loop, ``if``, ``with`` or function whose body is all plumbing.  A compound statement whose
body mixes the two has its header counted as other and its body line by line.

``python tests/shown_code.py`` prints the figures per chapter.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
HIDDEN = {"hide-input", "remove-input", "remove-cell"}
#: calls whose only purpose is to put text or a value on the page
SHOW_CALLS = {"print", "glue", "display", "Markdown", "HTML", "pprint"}


def chapters() -> list[Path]:
    """Every chapter notebook of the book."""
    return sorted(BOOK.glob("*.ipynb"))


def shown_cells(path: Path):
    """``(index, source)`` of every shown code cell of the notebook ``path``."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        if HIDDEN & set(cell.get("metadata", {}).get("tags", [])):
            continue
        source = cell["source"]
        yield i, "".join(source) if isinstance(source, list) else source


def _name(func) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _formatting(node) -> bool:
    """True for a value built by formatting text."""
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, (ast.Constant, ast.JoinedStr)):
        return isinstance(getattr(node.left, "value", ""), str)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _formatting(node.left) or _formatting(node.right)
    if isinstance(node, ast.Call) and _name(node.func) in {"format", "join", "ljust", "rjust", "center"}:
        if isinstance(node.func, ast.Attribute) and _name(node.func) == "join":
            return _formatting(node.args[0]) if node.args else False
        return True
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return _formatting(node.elt)
    if isinstance(node, ast.IfExp):
        return _formatting(node.body) or _formatting(node.orelse)
    return False


def plumbing(stmt: ast.stmt) -> bool:
    """True if the whole statement prints, formats or glues (see the module docstring)."""
    if isinstance(stmt, ast.Expr):
        v = stmt.value
        return (isinstance(v, ast.Call) and _name(v.func) in SHOW_CALLS) or _formatting(v)
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        return stmt.value is not None and _formatting(stmt.value)
    if isinstance(stmt, ast.Return):
        return stmt.value is not None and _formatting(stmt.value)
    if isinstance(stmt, (ast.For, ast.While, ast.If, ast.With, ast.FunctionDef)):
        body = [s for s in stmt.body + getattr(stmt, "orelse", [])
                if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]   # docstrings
        return bool(body) and all(plumbing(s) for s in body)
    return False


def _code_lines(lines: list[str], first: int, last: int) -> set[int]:
    return {n for n in range(first, last + 1)
            if lines[n - 1].strip() and not lines[n - 1].strip().startswith("#")}


def classify(source: str) -> tuple[set[int], set[int]]:
    """``(plumbing, other)``: the numbers (1-based) of the counted lines of ``source``."""
    text = "\n".join("pass" if ln.lstrip().startswith(("%", "!")) else ln for ln in source.splitlines())
    lines = text.splitlines()
    plumb, other = set(), set()

    def walk(stmts):
        for s in stmts:
            span = _code_lines(lines, s.lineno, s.end_lineno)
            if plumbing(s):
                plumb.update(span)
            elif isinstance(s, (ast.For, ast.While, ast.If, ast.With, ast.FunctionDef, ast.Try)):
                inner = [*s.body, *getattr(s, "orelse", []), *getattr(s, "finalbody", []),
                         *[x for h in getattr(s, "handlers", []) for x in h.body]]
                walk(inner)
                covered = set().union(*(_code_lines(lines, x.lineno, x.end_lineno) for x in inner)) if inner else set()
                other.update(span - covered - plumb - other)
            else:
                other.update(span)

    walk(ast.parse(text).body)
    return plumb, other - plumb


def figures(path: Path) -> dict:
    """``{"cells", "lines", "plumbing"}`` of one chapter's shown code."""
    cells = lines = plumb = 0
    for _, source in shown_cells(path):
        p, o = classify(source)
        cells += 1
        lines += len(p) + len(o)
        plumb += len(p)
    return {"cells": cells, "lines": lines, "plumbing": plumb}


def main() -> None:
    total = {"cells": 0, "lines": 0, "plumbing": 0}
    for path in chapters():
        f = figures(path)
        for k in total:
            total[k] += f[k]
        print(f"{path.name:<24} {f['cells']:>4} cells {f['lines']:>5} lines {f['plumbing']:>5} plumbing "
              f"({100 * f['plumbing'] / max(f['lines'], 1):.0f} %)")
    print(f"{'all chapters':<24} {total['cells']:>4} cells {total['lines']:>5} lines {total['plumbing']:>5} plumbing "
          f"({100 * total['plumbing'] / max(total['lines'], 1):.0f} %)")


if __name__ == "__main__":
    sys.exit(main())
