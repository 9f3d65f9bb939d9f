"""Figures typed by hand in the book's prose.

A measured or simulated figure in a chapter's prose must be glued from the cell that computes
it (``{glue:text}`key:fmt```), so that it cannot go stale; a page that cannot glue states it as
the output of a named command, and a test compares them (``tests/test_page_figures.py``).
:func:`hits` finds numbers with a unit of time, size, rate or ratio (µs, us, ns, ms, s, MB/s,
GB/s, %, ×, x, KiB, MiB, GiB, B, "times") and counts of a whole ("60 of 63") in the markdown
cells of ``book/*.ipynb`` and in the ``.md`` pages, outside glue roles, math, code and links,
minus :data:`ALLOWED`: figures that are not measured (definitions, the papers' constants, sizes
chosen by the text), each with its reason.

    python -m tests.typed_figures [FILE...]     (prints file:cell: [figure] line of every hit;
                                                 exit status 1 if there is one)
    python -m tests.typed_figures --sample 100 --seed 56
        (100 claim sentences of the built book drawn at random, glued values filled in as «v»,
         for a reader to check each against what it points at)
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

from tests.markdown_math import markdown_sources

BOOK = Path(__file__).resolve().parent.parent / "book"

#: a number (with , or . or a range a–b) followed by a unit; the unit ends at a word boundary
FIGURE = re.compile(
    r"(?<![\w.−/-])(?:~|≈|about\s)?\d[\d,]*(?:\.\d+)?(?:\s?[–-]\s?\d[\d,]*(?:\.\d+)?)?"
    r"\s?(?:µs|μs|us|ns|ms|MB/s|GB/s|KiB|MiB|GiB|KB|MB|GB|%|×|x|times|s|B)(?![\w/])")
#: a count of a whole, "60 of 63": a result as much as a figure with a unit
COUNT = re.compile(r"(?<![\w.−/-])\d[\d,]*\s(?:of|out of)\s\d[\d,]*\b")
GLUE = re.compile(r"\{glue(?::\w+)?\}`[^`]*`")
ROLE = re.compile(r"\{(?:math|eq|cite(?::\w+)?|ref|doc|numref|download|term)\}`[^`]*`")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,}|:{3,})(.*)$")
CODE_SPAN = re.compile(r"(`+).*?\1")
DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.S)
INLINE_MATH = re.compile(r"(?<!\\)\$[^$\n]+?(?<!\\)\$")
LINK_TARGET = re.compile(r"\]\([^)]*\)|<[^>\n]+>|https?://\S+")
COMMENT = re.compile(r"<!--.*?-->", re.S)

#: (file name, figures as the scan prints them, why they are not measured figures typed by hand)
ALLOWED: list[tuple[str, tuple[str, ...], str]] = [
    ("alpha_beta.ipynb", ("100 µs", "1.75 MB/s", "250 µs", "0.21 MB/s", "about 7.6 times", "6280 µs",
                          "4%", "14%", "4 %", "14 %", "4-14 %", "about 7.0 %", "7.0 %", "7 %",
                          "about 15 %", "15 %", "77 %", "1 KB", "99 %", "8 KB"),
     "the LS-DYNA paper's printed constants and quotes; the cells recompute each and glue the result"),
    ("alpha_beta.ipynb", ("2 times",), "'Table 2 times two crash models': the verb, not a figure"),
    ("alpha_beta.ipynb", ("4 KiB", "2 MiB", "8 KiB", "256 MiB", "1 B", "4 MiB"),
     "page sizes and message sizes of the sweeps, chosen by the text"),
    ("alpha_beta.ipynb", ("1.0x",), "the printed rounding of a glued comparison, not a result"),
    ("install.md", ("about 1 GB",), "disk to reserve for the install, a requirement rounded up"),
    ("lab1.md", ("1.4 s", "20 s"),
     "run time of the reference runs and the budget: tests/test_page_figures.py compares them"),
    ("lab3.md", ("0.8 s", "0.4 s", "20 s"),
     "run times of the reference runs and the budget: tests/test_page_figures.py compares them"),
    ("lab2.md", ("20 s",), "the jig's time budget: tests/test_page_figures.py compares it with the command's default"),
    ("lab4.md", ("20 s",), "the lop command's time budget: tests/test_page_figures.py compares it with its default"),
    ("logp.ipynb", ("0 B", "256 KiB", "64 B"), "ranges of message sizes chosen by the text"),
    ("lop.ipynb", ("40%", "40 %", "about 1 µs", "1 µs", "700µs", "700 µs"),
     "the LoP paper's quoted claims; the cells recompute what the paper prints and glue it"),
    ("models_compared.ipynb", ("95 %",), "the confidence level of the intervals, a definition"),
    ("models_compared.ipynb", ("30 %",), "the threshold of the classification, chosen by the text"),
    ("models_compared.ipynb", ("10 %", "25 %"), "the targets a launch is judged against (predict_launches.py's "
     "BEST_TARGET and CLASS_TARGET), chosen, not measured"),
    ("models_compared.ipynb", ("8 B", "1 KiB", "64 KiB", "256 KiB", "1 MiB", "2 MiB"),
     "message sizes, class bounds and page sizes chosen by the text"),
    ("multilevel.ipynb", ("8 ×", "4 ×", "2 ×"), "grid shapes (nodes × ranks), chosen by the text"),
    ("multilevel.ipynb", ("0.31 MB/s", "1.75 MB/s", "0.21 MB/s", "1.9 MB/s", "10-15 µs", "300 µs",
                          "15 MB/s", "12.5 µs", "77 %", "23 %", "4%", "4 %"),
     "the papers' printed parameters and quotes (unit conversions of printed Mbit/s); glued where recomputed"),
    ("multilevel.ipynb", ("100 MB/s", "500 µs", "1266 B"),
     "parameters and message sizes of the text's own what-if and emulation, chosen by the text"),
    ("multilevel.ipynb", ("5 %",), "the tolerance 'within 5 %' the glued comparison uses"),
    ("nbl.ipynb", ("33 %",), "the NBL paper's quoted claim; the model's figures next to it are glued"),
    ("nbl.ipynb", ("16 ×", "4 ×"), "mesh shapes chosen by the text"),
    ("nbl.ipynb", ("5 %",), "the margin 'leads by 5 % or more' that defines a clear winner"),
    ("simulating.ipynb", ("8 KiB", "5 µs", "1.5 µs", "2 µs", "8 µs", "0.5 ns", "4095 ×", "2.1 µs"),
     "the example's LogGP parameters and message size, inputs chosen by the text"),
    ("simulating.ipynb", ("8 B", "1000 B", "4 KiB", "300 KiB", "1 MiB", "8 MiB"),
     "message sizes of the compared cases, chosen by the text"),
    ("simulating.ipynb", ("3 %",), "the size of the random error the perturbation study injects"),
    ("topology.ipynb", ("8 ×",), "a matrix shape"),
    ("topology.ipynb", ("60 of 63",),
     "a count fixed by the tree's structure, printed by the cell above and asserted by "
     "tests/test_topology.py::test_missing_leaves"),
    ("topology.ipynb", ("9 µs", "294 MB/s", "128 MB/s", "2.5 times"),
     "the slides' printed constants and quotes; the cells recompute from them and glue the result"),
    ("topology.ipynb", ("256 KB",), "the message size of the text's example"),
]


def prose(text: str, spans: bool = True) -> str:
    """``text`` without fenced blocks (except the body of figure/admonition directives),
    directives' options, comments and display math; with ``spans`` also without inline math,
    glue and other roles, code spans and link targets.  Line breaks are kept."""
    out, fence = [], None
    for line in text.splitlines():
        m = FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2).strip():
                fence = None
                out.append("")
                continue
            out.append(line if keep else "")
            continue
        if m:
            fence = m.group(1)
            # prose inside {note}, {admonition}, {figure} etc. is shown; code and math are not
            directive = re.match(r"\{([\w-]+)\}", m.group(2).strip())
            keep = bool(directive) and directive.group(1) not in {
                "code-cell", "code", "code-block", "math", "glue:figure", "glue", "raw", "list-table"}
            out.append("")
            continue
        if re.match(r"^ {0,3}:[\w-]+:", line):  # a directive's option line
            out.append("")
            continue
        out.append(line)
    text = "\n".join(out)
    text = COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    text = DISPLAY_MATH.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for pattern in (GLUE, ROLE, CODE_SPAN, INLINE_MATH, LINK_TARGET) if spans else ():
        text = pattern.sub(" ", text)
    return text


def figures(path: Path) -> list[tuple[int | None, str, str]]:
    """(cell index or None, figure, its line) of every figure in the prose of ``path``."""
    found = []
    for cell, text in markdown_sources(path):
        for line in prose(text).splitlines():
            for m in [*FIGURE.finditer(line), *COUNT.finditer(line)]:
                found.append((cell, m.group(0), line.strip()))
    return found


def hits(path: Path) -> list[tuple[int | None, str, str]]:
    """The figures of ``path`` (as :func:`figures`) that :data:`ALLOWED` does not allow."""
    allowed = {(name, figure) for name, figures_, _ in ALLOWED for figure in figures_}
    return [hit for hit in figures(path) if (path.name, hit[1]) not in allowed]


#: a sentence that claims something checkable: a number, an equality, a comparison
CLAIM = re.compile(r"\d|equals?|reproduc|faster|slower|\bas\b|agree|within|wins?\b|matches", re.I)


def _glued_text(path: Path, text: str) -> str:
    """``text`` with each glue role replaced by «its value» as the built page shows it."""
    from myst_nb.core.variables import format_plain_text

    from tests.test_glue import ROLE as GLUE_ROLE, glued

    stores: dict[Path, dict] = {}

    def value(m: re.Match) -> str:
        doc, _, rest = m.group(2).rpartition("::")
        key, _, fmt = rest.partition(":")
        nb = (path.parent / doc).with_suffix(".ipynb") if doc else path
        if nb not in stores:
            stores[nb] = glued(json.loads(nb.read_text(encoding="utf-8")))[0] if nb.suffix == ".ipynb" else {}
        plain = (stores[nb].get(key.strip()) or (None, None))[1] or "??"
        try:
            plain = format_plain_text(plain, fmt.strip()) if fmt.strip() else plain
        except (ValueError, TypeError):
            pass
        return "«" + plain.strip("'\"") + "»"

    return GLUE_ROLE.sub(value, text)


def claim_sentences(paths: list[Path] | None = None) -> list[tuple[str, int | None, str]]:
    """(page relative to book/, cell index or None, sentence) of every sentence of the prose that
    :data:`CLAIM` matches, longer than 30 characters, glued values filled in."""
    found = []
    for path in paths or pages():
        for cell, text in markdown_sources(path):
            lines = [ln for ln in prose(_glued_text(path, text), spans=False).splitlines()
                     if not ln.lstrip().startswith("|")]
            for para in re.split(r"\n\s*\n|\n(?=\s*(?:[-*]|\d+\.)\s)", "\n".join(lines)):
                for sentence in re.split(r"(?<=[.!?:;])\s+(?=[A-Z*(\"«$])", " ".join(para.split())):
                    if len(sentence) > 30 and CLAIM.search(sentence) and not sentence.startswith("#"):
                        page = path.relative_to(BOOK).as_posix() if path.is_relative_to(BOOK) else str(path)
                        found.append((page, cell, sentence))
    return found


def pages() -> list[Path]:
    """The chapters and pages of the book: book/*.ipynb, book/*.md, book/labs/*.md."""
    return sorted([*BOOK.glob("*.ipynb"), *BOOK.glob("*.md"), *(BOOK / "labs").glob("*.md")])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.typed_figures",
                                     description="List measured figures typed by hand in the book's prose.")
    parser.add_argument("files", nargs="*", type=Path,
                        help="chapters (.ipynb) or pages (.md); default: the whole book")
    parser.add_argument("--sample", type=int, metavar="N",
                        help="print instead N claim sentences drawn at random, glued values filled in")
    parser.add_argument("--seed", type=int, default=56, help="seed of --sample (default 56)")
    args = parser.parse_args(argv)
    for path in args.files:
        if not path.is_file() or path.suffix not in (".ipynb", ".md"):
            parser.error(f"files: {path} is not an .ipynb or .md file")
    if args.sample is not None:
        sentences = claim_sentences(args.files or None)
        if not 1 <= args.sample <= len(sentences):
            parser.error(f"--sample: {args.sample} is not in 1..{len(sentences)}, the claim sentences")
        random.seed(args.seed)
        for i, (page, cell, sentence) in enumerate(random.sample(sentences, args.sample), 1):
            print(f"S{i:03d} {page}:{'' if cell is None else cell}: {sentence}")
        return 0
    total = 0
    for path in args.files or pages():
        for cell, figure, line in hits(path):
            where = "" if cell is None else f"{cell}:"
            print(f"{path}:{where} [{figure}] {line}")
            total += 1
    print(f"{total} typed figures")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
