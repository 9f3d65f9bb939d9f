"""Every number a chapter's prose takes from a computed output is glued, and the glue holds.

A chapter quotes a computed figure with myst-nb's glue: a code cell computes it and calls
``glue("key", text, display=False)``; the markdown shows ``{glue:text}`key```.  The book is
built from the committed outputs, so a reference whose key no cell glued is an empty hole
in the page (a build warning), and a hidden glue that no sentence references is a figure the
prose stopped quoting.  This reads the notebooks' JSON (no execution): for every notebook of
``book/`` and ``labs/source/``, each ``{glue...}`` reference (role or directive) names a key a
code cell of the same notebook glued (or, as ``doc::key``, one the named notebook glued),
each ``display=False`` glue is referenced, no key is glued twice, and a format spec
(``{glue:text}`key:.2f```) applies to the glued value.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from myst_nb.core.variables import format_plain_text

ROOT = Path(__file__).resolve().parent.parent

#: roles {glue}`k`, {glue:text}`k:fmt`, {glue:any}`k`, ... and directives ```{glue:figure} k
ROLE = re.compile(r"\{glue(?::(\w+))?\}`([^`]+)`")
DIRECTIVE = re.compile(r"^\s*(?:```+|:::+)\{glue(?::(\w+))?\}\s+(\S+)", re.MULTILINE)


def notebooks() -> list[Path]:
    found = [*(ROOT / "book").rglob("*.ipynb"), *(ROOT / "labs" / "source").rglob("*.ipynb")]
    return sorted(p for p in found if not {"_build", ".ipynb_checkpoints"} & set(p.parts))


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def glued(nb: dict) -> tuple[dict, list[str]]:
    """``({key: (hidden, text/plain)}, [keys glued more than once])`` from the outputs."""
    keys, twice = {}, []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        for out in cell.get("outputs", []):
            book = out.get("metadata", {}).get("scrapbook")
            if not book:
                continue
            prefix = book.get("mime_prefix", "")
            data = {k[len(prefix):]: v for k, v in out.get("data", {}).items()}
            plain = data.get("text/plain")
            plain = "".join(plain) if isinstance(plain, list) else plain
            if book["name"] in keys:
                twice.append(book["name"])
            keys[book["name"]] = (bool(prefix), plain)
    return keys, twice


def references(nb: dict) -> list[tuple[str, str, str, str]]:
    """``(role, document, key, format spec)`` of every glue reference in the markdown."""
    out = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        text = _source(cell)
        for role, target in [*ROLE.findall(text), *DIRECTIVE.findall(text)]:
            doc, _, rest = target.rpartition("::")
            key, _, fmt = rest.partition(":")
            out.append((role or "any", doc, key.strip(), fmt.strip()))
    return out


def problems(path: Path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    keys, twice = glued(nb)
    found = [f"key {k!r} is glued more than once" for k in sorted(set(twice))]
    used = set()
    for role, doc, key, fmt in references(nb):
        if doc:
            other = (path.parent / doc).with_suffix(".ipynb")
            if not other.exists():
                found.append(f"{{glue:{role}}}`{doc}::{key}` names a notebook that does not exist ({other.name})")
            elif key not in glued(json.loads(other.read_text(encoding="utf-8")))[0]:
                found.append(f"{{glue:{role}}}`{doc}::{key}`: {other.name} glues no {key!r}")
            continue
        used.add(key)
        if key not in keys:
            found.append(f"{{glue:{role}}}`{key}` is glued by no cell of this notebook (its committed outputs)")
        elif fmt and role == "text":
            try:
                format_plain_text(keys[key][1] or "", fmt)
            except (ValueError, TypeError) as exc:
                found.append(f"{{glue:text}}`{key}:{fmt}`: the format does not apply to {keys[key][1]!r} ({exc})")
    for key, (hidden, _) in sorted(keys.items()):
        if hidden and key not in used:
            found.append(f"glue({key!r}, ..., display=False) is referenced by no sentence of this notebook")
    return found


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_glue_reference_has_its_glue_and_every_hidden_glue_is_quoted(path):
    found = problems(path)
    assert not found, f"{path.relative_to(ROOT)}:\n  " + "\n  ".join(found)


def test_the_check_sees_a_missing_key_an_unquoted_glue_and_a_bad_format(tmp_path):
    def output(key, value):
        return {"output_type": "display_data", "metadata": {"scrapbook": {"name": key, "mime_prefix":
                "application/papermill.record/"}}, "data": {"application/papermill.record/text/plain": value}}

    nb = {"cells": [
        {"cell_type": "code", "source": "glue(...)", "outputs": [output("shown", "'12 %'"), output("lost", "'3'"),
                                                                 output("shown", "'12 %'")]},
        {"cell_type": "markdown", "source": ["It is {glue:text}`shown`, {glue:text}`absent` and "
                                             "{glue:text}`shown:.2f`.\n"]}]}
    path = tmp_path / "page.ipynb"
    path.write_text(json.dumps(nb))
    found = "\n".join(problems(path))
    assert "'shown' is glued more than once" in found
    assert "{glue:text}`absent` is glued by no cell" in found
    assert "glue('lost', ..., display=False) is referenced by no sentence" in found
    assert "{glue:text}`shown:.2f`: the format does not apply" in found
    nb["cells"][0]["outputs"] = [output("shown", "0.123"), output("lost", "'3'")]
    nb["cells"][1]["source"] = "{glue:text}`shown:.2f` and\n```{glue:any} lost\n```\n"
    path.write_text(json.dumps(nb))
    assert problems(path) == []
