"""Refuse notebooks whose committed outputs are not reference results.

``python -m tests.notebook_outputs DIR...`` exits 1 if a notebook under DIR has a
code cell that was never executed, an output of type ``error``, or stored widget state;
with ``--strip`` it first removes that state and the execution timestamps of the cells
(``make notebooks`` does).  The book is
built from committed outputs (no execution at build time), so this is the check
that a plain build would skip.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def problems(path: Path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    found = []
    if "widgets" in nb.get("metadata", {}):
        found.append(f"{path}: stores widget state (re-execute with `make notebooks`)")
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code" or not "".join(cell.get("source", "")).strip():
            continue
        if cell.get("execution_count") is None:
            found.append(f"{path}: code cell {i} was not executed")
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                found.append(f"{path}: code cell {i} raised {out.get('ename')}: {out.get('evalue')}")
    return found


def strip_volatile(path: Path) -> None:
    """Remove what changes at every execution without being a result: the stored ipywidgets
    state (the static book does not use it) and the cells' execution timestamps."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    changed = nb.metadata.pop("widgets", None) is not None
    for cell in nb.cells:
        changed |= cell.metadata.pop("execution", None) is not None
    if changed:
        nbformat.write(nb, path)


def main(argv: list[str]) -> int:
    strip = "--strip" in argv
    argv = [a for a in argv if a != "--strip"]
    notebooks = sorted(p for d in argv for p in Path(d).rglob("*.ipynb")
                       if ".ipynb_checkpoints" not in p.parts)
    if strip:
        for nb in notebooks:
            strip_volatile(nb)
    found = [msg for nb in notebooks for msg in problems(nb)]
    for msg in found:
        print(msg, file=sys.stderr)
    print(f"{len(notebooks)} notebooks checked, {len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["book"]))
