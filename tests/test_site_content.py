"""What the built book hands out: every lab's student notebook, and no solution anywhere.

The site is the ``book_html`` fixture (``tests/conftest.py``).  Every file of it is read,
and every member of every zip in it (recursively): none may hold an nbgrader solution or
hidden-test marker.  Each lab of ``labs/source`` has a page "Lab N: ..." whose download is
nbgrader's student version: the notebook with "YOUR CODE HERE" in place of the solutions,
no outputs, and the data files of the source folder; the page's points and files to hand in
are those of the source notebook and folder.
"""

from __future__ import annotations

import io
import re
import zipfile
from html import unescape
from pathlib import Path
from urllib.parse import unquote

import nbformat
import pytest

from tests.labcourse import ALL_LABS, LABS, automatic_points, points, source_nb

#: nbgrader's solution and hidden-test delimiters (and what is left of them if reformatted)
MARKERS = (b"BEGIN SOLUTION", b"END SOLUTION", b"HIDDEN TESTS")


def _members(name: str, data: bytes, depth: int = 0):
    """(name, bytes) of a file and, for a zip, of every member, recursively."""
    yield name, data
    if name.lower().endswith(".zip") and depth < 3:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for info in zf.infolist():
                if not info.is_dir():
                    yield from _members(f"{name}!{info.filename}", zf.read(info), depth + 1)


def test_no_file_of_the_site_holds_a_solution(book_html):
    files = [p for p in book_html.rglob("*") if p.is_file()]
    assert len(files) > 10, f"{book_html} looks empty"
    found, zips = [], 0
    for path in files:
        zips += path.suffix == ".zip"
        for name, data in _members(path.relative_to(book_html).as_posix(), path.read_bytes()):
            found += [f"{name}: {m.decode()}" for m in MARKERS if m in data]
    assert not found, "solutions or hidden tests in the site:\n" + "\n".join(found)
    assert zips >= len(ALL_LABS), f"{zips} zips in the site for {len(ALL_LABS)} labs"


def _page(book_html: Path, lab: str) -> tuple[Path, str]:
    page = book_html / "book" / "labs" / f"{lab}.html"
    assert page.is_file(), f"no page for {lab} ({page.relative_to(book_html)})"
    return page, page.read_text(encoding="utf-8")


@pytest.mark.parametrize("lab", ALL_LABS)
def test_the_lab_page_offers_the_student_version(book_html, lab):
    page, html = _page(book_html, lab)
    number = re.fullmatch(r"lab(\d+)", lab).group(1)
    title = unescape(re.search(r"<title>(.*?)</title>", html, re.S).group(1))
    assert title.startswith(f"Lab {number}: "), f"{page.name}: title {title!r}"
    links = re.findall(r'<a class="reference download internal"[^>]*href="([^"]+)"', html)
    zips = [h for h in links if h.endswith(f"/{lab}.zip")]
    assert len(zips) == 1, f"{page.name}: downloads {links}"
    path = (page.parent / unquote(zips[0])).resolve()
    assert path.is_file(), f"{page.name}: {zips[0]} is not in the site"
    with zipfile.ZipFile(path) as zf:
        names = sorted(zf.namelist())
        nb = nbformat.reads(zf.read(f"{lab}/{lab}.ipynb").decode("utf-8"), as_version=4)
        readme = zf.read(f"{lab}/README.md").decode("utf-8")
        data = {n: zf.read(n) for n in names if n not in (f"{lab}/{lab}.ipynb", f"{lab}/README.md")}
    # the zip says how to install the kit (the book's page), without the course's repository
    assert 'page "Install the kit"' in readme and "pip install" in readme and "clone" not in readme, readme
    # and the command that writes each of its data files, as the labs declare them
    from mpi_exercises.labspec import LABS as DECLARED

    for command in DECLARED[lab].commands():
        assert command in readme, f"{lab}.zip: its README lacks {command!r}"
    assert f"Keep the notebook's name, `{lab}.ipynb`" in " ".join(readme.split()), readme   # (wrapped)
    source = LABS / "source" / lab
    expected = sorted(f"{lab}/{p.name}" for p in source.iterdir()
                      if p.is_file() and p.suffix != ".ipynb")
    assert sorted(data) == expected, f"{lab}.zip: data files {sorted(data)}, source has {expected}"
    for name, content in data.items():
        assert content == (source / name.split("/", 1)[1]).read_bytes(), f"{lab}.zip: {name} differs from the source's"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert any("YOUR CODE HERE" in c.source for c in code), f"{lab}.zip: no 'YOUR CODE HERE' in the notebook"
    assert not any(c.outputs for c in code), f"{lab}.zip: the student notebook has outputs"
    solutions = [c for c in nbformat.read(source / f"{lab}.ipynb", as_version=4).cells
                 if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"]
    released = {c.metadata["nbgrader"]["grade_id"]: c.source for c in code if c.metadata.get("nbgrader", {}).get("solution")}
    for cell in solutions:   # every answer cell is there, with its solution gone
        gid = cell.metadata["nbgrader"]["grade_id"]
        assert gid in released, f"{lab}.zip: answer cell {gid} missing"
        assert "YOUR CODE HERE" in released[gid] and released[gid] != cell.source, f"{lab}.zip: {gid}"


@pytest.mark.parametrize("lab", ALL_LABS)
def test_the_lab_page_agrees_with_the_notebook(lab):
    """The page's points and files to hand in are those of the source notebook and folder."""
    page = (LABS.parent / "book" / "labs" / f"{lab}.md").read_text(encoding="utf-8")
    nb = source_nb(lab)
    auto, total = sum(automatic_points(nb).values()), sum(points(nb).values())
    m = re.search(r"\*\*Points\.\*\* (\d+) automatic\b.*? and (\d+) for", page, re.S)
    assert m and (int(m.group(1)), int(m.group(2))) == (auto, total - auto), \
        f"{lab}.md: points {m and m.groups()}, the notebook has {auto} automatic and {total - auto} written"
    hand_in = page[page.index("## Hand in"):]
    named = set(re.findall(r"`([\w.-]+\.(?:ipynb|json))`", hand_in))
    data = {p.name for p in (LABS / "source" / lab).iterdir() if p.is_file()}
    assert named == data, f"{lab}.md hands in {sorted(named)}, the lab's folder holds {sorted(data)}"


CHAPTERS = sorted(p.stem for p in (Path(__file__).resolve().parent.parent / "book").glob("*.ipynb"))


def test_no_page_shows_test_plumbing(book_html):
    shown = [p.relative_to(book_html).as_posix() for p in book_html.rglob("*.html")
             if "NBVAL" in p.read_text(encoding="utf-8")]
    assert not shown, f"pages showing nbval markers: {shown}"


def _is_figure(output) -> bool:
    """An image, or the static twin of an interactive figure (netmodels.figures.interactive)."""
    data = output.get("data", {})
    return "image/png" in data or 'class="nm-interactive"' in str(data.get("text/html", ""))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_plot_has_a_numbered_caption_and_folded_code(book_html, chapter):
    """Each cell whose output is a figure (an image or an interactive figure's static twin) has
    a caption "Fig. N ..." and its code folded (myst-nb's hide-input); the book numbers figures
    in order across its pages."""
    nb = nbformat.read(Path(__file__).resolve().parent.parent / "book" / f"{chapter}.ipynb", as_version=4)
    plots = [c for c in nb.cells if c.cell_type == "code" and any(_is_figure(o) for o in c.outputs)]
    for cell in plots:
        assert "hide-input" in cell.metadata.get("tags", []), cell.source[:80]
        assert cell.metadata.get("mystnb", {}).get("figure", {}).get("caption"), cell.source[:80]
    html = (book_html / "book" / f"{chapter}.html").read_text(encoding="utf-8")
    numbers = [int(n) for n in re.findall(r'<span class="caption-number">Fig\. (\d+) </span>', html)]
    assert len(numbers) == len(plots) and numbers == sorted(set(numbers)), (chapter, numbers, len(plots))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_cells_printed_lines_are_one_box(book_html, chapter):
    """However the kernel flushed a cell's prints (the stored notebooks hold them split), the page
    shows them as one output (myst-nb's nb_merge_streams): a printed table is one table."""
    html = (book_html / "book" / f"{chapter}.html").read_text(encoding="utf-8")
    outputs = html.split('<div class="cell_output docutils container">')[1:]
    split = [i for i, o in enumerate(outputs)
             if len(re.findall(r'class="output stream', o.split('<div class="cell docutils container')[0])) > 1]
    assert not split, f"{chapter}: outputs {split} show their printed lines in several boxes"
