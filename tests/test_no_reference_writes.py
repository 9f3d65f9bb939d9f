"""No page shows a command that writes the book's reference data.

The measured files under ``book/data/`` and a lab's files under ``labs/source/`` are the
references the chapters, the labs and nbval read.  A reader who copies a command from a page
must not overwrite them (running the α-β chapter's ping-pong as printed once rewrote its
reference file by 43,000 lines): every command a page shows writes to ``results/`` or to the
reader's own folder, and refreshing the references is the authors' ``make
refresh-references``.  This reads every notebook of ``book/`` and ``labs/source/`` (markdown,
code and the committed outputs, where a stored file may print the command that made it) and
every markdown page of ``book/``, and fails on

- an output option or a redirection whose file lies under ``book/data/`` or ``labs/source/``
  (``--json``, ``--csv``, ``--output``, ``-o``, ``>``, ``>>``, ``tee``);
- a script of ``benchmarks/`` run (``python benchmarks/x.py``) without ``--json`` whose
  default output is under ``book/data/``;
- ``make refresh-...``, the targets that measure into the references.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROTECTED = ("book/data/", "labs/source/")

OUTPUT = re.compile(r"(?:--json|--csv|--output|(?<![\w-])-o)(?:[ =]+)(\S+)|(?:>>?|\btee(?: -a)?)[ \t]*(\S+)")
SCRIPT = re.compile(r"python[\d.]*\s+(?:\S*/)?benchmarks/(\w+)\.py")     # run, not named
REFRESH = re.compile(r"\bmake\s+(refresh-[\w-]+)")
JSON_DEFAULT = re.compile(r"add_argument\(\s*\"--json\"[^)]*?default=str\(ROOT((?:\s*/\s*\"[^\"]+\")+)\)")


def pages() -> list[Path]:
    found = [*(ROOT / "book").rglob("*.ipynb"), *(ROOT / "labs" / "source").rglob("*.ipynb"),
             *(ROOT / "book").rglob("*.md")]
    return sorted(p for p in found if not {"_build", ".ipynb_checkpoints"} & set(p.parts))


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def shown_text(path: Path) -> str:
    """What a reader sees of ``path``: a markdown page, or a notebook's cells and outputs."""
    if path.suffix == ".md":
        return path.read_text(encoding="utf-8")
    parts = []
    for cell in json.loads(path.read_text(encoding="utf-8")).get("cells", []):
        parts.append(_text(cell.get("source", "")))
        for out in cell.get("outputs", []):
            if "text" in out:
                parts.append(_text(out["text"]))
            for mime in ("text/plain", "text/markdown"):
                if mime in out.get("data", {}):
                    parts.append(_text(out["data"][mime]))
    return "\n".join(parts)


def protected(target: str) -> bool:
    target = target.strip("'\"`,;)(").removeprefix("./")
    return target.startswith(PROTECTED) or any(f"/{p}" in target for p in PROTECTED)


def script_default(name: str) -> str | None:
    """The default ``--json`` file of ``benchmarks/<name>.py``, relative to the root."""
    script = ROOT / "benchmarks" / f"{name}.py"
    if not script.exists():
        return None
    found = JSON_DEFAULT.search(script.read_text(encoding="utf-8"))
    return "/".join(re.findall(r"\"([^\"]+)\"", found.group(1))) if found else None


def problems(text: str) -> list[str]:
    found = []
    for line in text.splitlines():
        for option, redirect in OUTPUT.findall(line):
            if protected(option or redirect):
                found.append(f"writes {(option or redirect).strip(chr(96))}: {line.strip()}")
        if "--json" not in line:
            for name in SCRIPT.findall(line):
                default = script_default(name)
                if default and protected(default):
                    found.append(f"benchmarks/{name}.py writes {default} by default: {line.strip()}")
        for target in REFRESH.findall(line):
            found.append(f"make {target} measures into the references: {line.strip()}")
    return found


@pytest.mark.parametrize("path", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_command_on_a_page_writes_reference_data(path):
    found = problems(shown_text(path))
    assert not found, f"{path.relative_to(ROOT)}:\n  " + "\n  ".join(found)


def test_the_check_sees_every_way_of_writing_a_reference():
    bad = ["mpiexec -n 2 python -m mpi_exercises pingpong --json book/data/pingpong_reference.json",
           "python -m mpi_exercises logp --json=./labs/source/lab3/logp.json",
           "python -m netmodels simulate ... > book/data/x.json",
           "python benchmarks/scale_sweep.py",
           "make refresh-references"]
    for line in bad:
        assert problems(line), line
    good = ["mpiexec -n 2 python -m mpi_exercises pingpong --json results/pingpong.json",
            "python benchmarks/scale_sweep.py --json results/scale.json",
            "python -m mpi_exercises pingpong --json pingpong.json",
            "reads book/data/pingpong_reference.json", "p > 0", "make measure-references",
            "`benchmarks/scale_sweep.py` ran every case"]
    for line in good:
        assert not problems(line), line
    assert script_default("scale_sweep") == "book/data/scale_reference.json"
