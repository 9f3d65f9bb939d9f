"""The feedback pages of ``make feedback`` teach: what a student sees of a graded lab.

One temporary course, lab 1, graded by ``make grade`` and given feedback by ``make feedback``:

- ``alice`` hands in the solved notebook; her written answers wait for the instructor;
- ``units`` gives α in microseconds: the visible test ``test_fit_units`` fails with its
  message ("alpha should be in seconds ..."), and a hidden test of ``test_fit_data`` fails;
- ``scaled`` reads times 1.5 times too long: only a hidden test of ``test_load`` fails;
- ``blank`` hands in the student version as released: nothing to grade by hand;
- ``loops`` never leaves a cell: it is stopped at the cell time limit (15 s in this course's
  ``nbgrader_config.py``), scores what that broke, and is not run a second time for its page;
- ``mallory`` hands in the student version with one cell more that displays HTML and Markdown
  made to run script and to cover the page with "Score: 19.0 / 19.0", and a written answer
  that tries the same (``tests/test_hostile_pages.py`` has every payload; here they come
  through grading, the run for feedback and ``make feedback``).

Each page must show the student's own outputs (the printed fit, the plot), the message of a
failed visible test, say that a hidden test failed without its message, never show hidden
test code, mark written answers not graded yet as pending (and only those), and render its
math alone: copied into an empty folder and opened in headless Chromium, it requests no other
file, and MathJax typesets its formulas.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import time
from pathlib import Path

import nbformat
import pytest

from tests.labcourse import (hidden_lines, make, read_grades, released_course, replace, require_sandbox, solved,
                             source_nb)

LAB = "lab1"
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

# seconds per cell in this course: lab 1's longest cell takes about 1 s at rest, but its setup cell (imports)
# took over 5 s, the former limit, at a load of 10 to 12 on 2 cores: every test of alice's scored 0
CELL_TIMEOUT = 15
LOOPS_FAILS = ("test_switch", "test_predict")
UNITS_MESSAGE = "AssertionError: alpha should be in seconds: between 10 ns and 10 ms"
HIDDEN_FAILED = "A hidden test of this cell failed; its message is not shown."
#: what mallory's cell displays: script, an event handler and a cover with a false score
HOSTILE = ('<script>document.title = "pwned"; window.pwned = 1</script>'
           "<img src=x onerror=\"document.title = 'pwned'; window.pwned = 1\">"
           "<svg onload=\"window.pwned = 1\"></svg>"
           '<div style="position:fixed;top:0;left:0;width:100%;height:100%;z-index:99999;background:#fff">'
           "<h4>lab1 (Score: 19.0 / 19.0)</h4></div><style>.panel-heading { display: none }</style>")


@pytest.fixture(scope="module")
def pages(tmp_path_factory, released_labs):
    """student -> (feedback page's text, grades.csv row); and the course."""
    require_sandbox()
    course = released_course(tmp_path_factory.mktemp("feedback") / "labs", released_labs, labs=[LAB])
    config = course / "nbgrader_config.py"   # the instructor's per-cell limit: CELL_TIMEOUT here, for `loops`
    assert "\nc.Execute.timeout = 60\n" in config.read_text()
    config.write_text(config.read_text().replace("\nc.Execute.timeout = 60\n", f"\nc.Execute.timeout = {CELL_TIMEOUT}\n"))
    data = (course / "source" / LAB / "pingpong.json").read_bytes()
    subs = {"alice": solved(course, LAB)}
    nb = solved(course, LAB)
    replace(nb, "fit", "alpha, beta = fit.alpha, fit.beta", "alpha, beta = fit.alpha * 1e6, fit.beta")
    subs["units"] = nb
    nb = solved(course, LAB)
    replace(nb, "load", "sizes, times = pingpong.points(PINGPONG)",
            "sizes, times = pingpong.points(PINGPONG)\ntimes = times * 1.5")
    subs["scaled"] = nb
    subs["blank"] = nbformat.read(course / "release" / LAB / f"{LAB}.ipynb", as_version=4)
    nb = solved(course, LAB)
    # a cell that never ends, sleeping: what is checked here is the page of a stopped cell
    # (tests/test_grading.py stops a busy one), and a busy loop would take a core for CELL_TIMEOUT seconds
    replace(nb, "switch", "piecewise = ", "import time\nwhile True:\n    time.sleep(0.05)\npiecewise = ")
    subs["loops"] = nb
    nb = nbformat.read(course / "release" / LAB / f"{LAB}.ipynb", as_version=4)
    nb.cells.insert(1, nbformat.v4.new_code_cell(
        "from IPython.display import HTML, Markdown, display\n"
        f"display(HTML({HOSTILE!r}))\ndisplay(Markdown({HOSTILE!r}))"))
    written = next(c for c in nb.cells if c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("solution"))
    written.source = "My answer.\n\n" + HOSTILE
    subs["mallory"] = nb
    subs["nodata"] = solved(course, LAB)      # hands in no pingpong.json
    for student, nb in subs.items():
        folder = course / "submitted" / student / LAB
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{LAB}.ipynb")
        if student != "nodata":
            (folder / "pingpong.json").write_bytes(data)
    graded = make(course, "grade")
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    feedback = make(course, "feedback")
    assert feedback.returncode == 0, feedback.stdout[-3000:] + feedback.stderr[-3000:]
    (course.parent / "make-feedback.log").write_text(feedback.stdout + feedback.stderr, encoding="utf-8")
    rows = read_grades(course)
    out = {}
    for student in subs:
        page = course / "feedback" / student / LAB / f"{LAB}.html"
        out[student] = (page.read_text(encoding="utf-8"), rows[student, LAB])
    return out, course


def text(page: str) -> str:
    """What the page says: no script or style, tags removed, entities decoded, blanks collapsed."""
    page = re.sub(r"<script\b.*?</script>|<style\b.*?</style>", "", page, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", page)).split())


def test_scores_are_those_of_the_grading(pages):
    out, _ = pages
    for student, (page, row) in out.items():
        assert f"Score: {float(row['score']):.1f} / {float(row['max_score']):.1f}" in text(page), student
    assert [float(out[s][1]["auto_score"]) for s in ("alice", "units", "scaled")] == [13, 10, 12]
    lost = sum(float(c.metadata.nbgrader["points"]) for c in source_nb(LAB).cells
               if c.metadata.get("nbgrader", {}).get("grade_id") in LOOPS_FAILS)
    assert lost > 0 and float(out["loops"][1]["auto_score"]) == 13 - lost


def test_a_notebook_stopped_at_the_cell_limit_is_not_run_again(pages):
    out, course = pages
    logs = {s: (course / "autograded" / s / f"{LAB}.log").read_text() for s in ("alice", "loops")}
    assert "run for the feedback page done" in logs["alice"]
    assert "not run again for the feedback page: a cell reached the time limit" in logs["loops"]
    assert "run for the feedback page done" not in logs["loops"]
    said = text(out["loops"][0])   # its graded outputs up to the first hidden test, then scores only
    assert "output not shown in feedback: this cell ran after hidden tests" in said
    assert said.count("Test failed: 0 of") == len(LOOPS_FAILS)


def test_the_students_own_outputs_are_shown(pages):
    out, _ = pages
    for student in ("alice", "units", "scaled", "blank"):
        page, _ = out[student]
        assert "output not shown" not in page, student
    said = text(out["units"][0])
    # the fit cell's own print (α in "seconds" that are microseconds), from after the first hidden test
    assert re.search(r"alpha = \d[\d.]* µs, 1/beta = ", said), said[:2000]
    for student in ("alice", "units", "scaled"):
        assert re.search(r'<img\b[^>]*src="data:image/png;base64,', out[student][0]), student   # the α-β plot


def test_grading_and_feedback_log_no_warning_of_their_own(pages):
    """No SQLAlchemy warning of nbgrader's gradebook while grading; `make feedback` warns of no
    option of the kit's preprocessors, and of images without alternative text only on the page
    whose student displayed one (mallory's HTML): the figures the notebooks drew carry one."""
    out, course = pages
    for student in out:
        assert "SAWarning" not in (course / "autograded" / student / f"{LAB}.log").read_text(), student
    said = (course.parent / "make-feedback.log").read_text(encoding="utf-8")
    assert "not recognized" not in said, said[:3000]
    warned, student = {}, None
    for line in said.splitlines():
        converting = re.search(r"Converting notebook .*/autograded/([^/]+)/", line)
        student = converting.group(1) if converting else student
        if "WARNING" in line:
            warned.setdefault(student, []).append(line)
    assert set(warned) == {"mallory"} and all("Alternative text is missing" in w for w in warned["mallory"]), warned
    for student in ("alice", "units", "scaled"):
        figures = [tag for tag in re.findall(r"<img\b[^>]*>", out[student][0]) if 'src="data:image/png;base64,' in tag]
        assert figures and all(' alt="A figure this cell drew (no description given)"' in tag for tag in figures), student


def test_a_failed_visible_test_shows_its_message(pages):
    out, _ = pages
    units = text(out["units"][0])
    assert UNITS_MESSAGE in units
    assert UNITS_MESSAGE not in text(out["alice"][0])   # the message of a test that passed is not shown


def test_a_missing_data_file_is_one_message_without_a_path_of_the_grader(pages):
    """The loader's one line (no traceback through labdata.py), naming the file only: not the
    grader's scratch folder, the course, the kit's folder or the home folder."""
    out, course = pages
    page, row = out["nodata"]
    said = text(page)
    assert row["data"] == "pingpong.json: missing"
    first = ("LabDataError: pingpong.json: missing: no such file in the folder the notebook runs in. Write it "
             "again, from the lab's folder, with: mpiexec -n 2 python -m mpi_exercises pingpong --json pingpong.json")
    assert first in said, said[:3000]
    assert "labdata.py" not in said and "Traceback" not in said.split(first)[0]
    for path in (str(course), str(Path(__file__).resolve().parent.parent), "/tmp/", "/dev/shm/",
                 os.path.expanduser("~") + "/"):
        assert path not in said, path


def test_a_failed_hidden_test_is_named_but_not_shown(pages):
    out, _ = pages
    hidden_messages = ["times are not the median times of pingpong.json",
                       "your alpha and beta fit your data clearly worse"]
    assert text(out["scaled"][0]).count(HIDDEN_FAILED) == 1     # test_load's hidden part
    assert text(out["units"][0]).count(HIDDEN_FAILED) >= 1      # test_fit_data's
    assert HIDDEN_FAILED not in text(out["alice"][0])
    hidden = hidden_lines(source_nb(LAB))
    assert len(hidden) >= 10
    for student, (page, _) in out.items():
        said = text(page)
        assert "HIDDEN TESTS" not in said, student
        for message in hidden_messages:
            assert message not in said, (student, message)
        leaked = [line for line in hidden if line in html.unescape(page)]
        assert not leaked, (student, leaked[:3])


def test_written_answers_not_graded_yet_are_pending(pages):
    out, _ = pages
    said = text(out["alice"][0])
    assert "Written answers worth 6.0 points are pending" in said
    assert said.count("pending: 2.0 points, not graded yet") == 2 * 3   # list of graded cells and headings
    assert "Written response (Score: 0.0 / 2.0)" not in said
    assert out["alice"][1]["manual_pending"] == "3"
    # answers left as released are scored 0 by nbgrader: not pending, on the page as in grades.csv
    blank = text(out["blank"][0])
    assert "pending" not in blank and out["blank"][1]["manual_pending"] == "0"
    assert "Written response (Score: 0.0 / 2.0)" in blank


def test_a_page_renders_its_math_alone(pages, tmp_path):
    out, _ = pages
    page = out["units"][0]
    loads = re.findall(r'<(?:script|link|img)\b[^>]*?(?:src|href)="([^"]+)"', page)
    assert not [u for u in loads if not u.startswith("data:")], loads   # nothing outside the page
    assert "mathjax" not in " ".join(loads).lower()
    assert len(page) < 1_500_000, len(page)
    from tests.cdp import Browser, chromium_or_skip

    exe = chromium_or_skip()
    alone = tmp_path / "handed-out"
    alone.mkdir()
    shutil.copy(next(pages[1].glob(f"feedback/units/{LAB}/{LAB}.html")), alone / "feedback.html")
    with Browser(exe, tmp_path / "profile") as browser:
        events = browser.load((alone / "feedback.html").as_uri(), quiet=1.0)
        seen = len(browser.events)
        requested = [e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"]
        assert [u for u in requested if not u.startswith("data:")] == [(alone / "feedback.html").as_uri()], requested
        errors = [e for e in events if e["method"] == "Runtime.exceptionThrown"]
        assert not errors, errors[:2]
        deadline = time.monotonic() + 30
        while browser.evaluate("document.querySelectorAll('mjx-container').length") < 10:
            assert time.monotonic() < deadline, "MathJax typeset nothing"
            time.sleep(0.5)
        browser.pump(1.0)
        left = browser.evaluate("Array.from(document.querySelectorAll('.text_cell_render'))"
                                ".map(e => e.innerText).join('\\n').match(/\\$[^$\\n]+\\$/g) || []")
        assert not left, f"math left as TeX: {left[:5]}"
        assert browser.evaluate("document.querySelectorAll('mjx-merror').length") == 0
        later = [e["params"]["request"]["url"] for e in browser.events[seen:]
                 if e["method"] == "Network.requestWillBeSent"]
        assert not later, later   # MathJax loaded nothing more


def test_a_students_html_runs_nothing_and_covers_no_score(pages, tmp_path):
    out, course = pages
    page, row = out["mallory"]
    true = f"Score: {float(row['score']):.1f} / {float(row['max_score']):.1f}"
    assert float(row["auto_score"]) == 0 and true != "Score: 19.0 / 19.0"
    assert "&lt;script&gt;document.title" in page             # shown to the student as text
    from tests.test_hostile_pages import Tree

    body = Tree(page[page.index("<body"):])
    assert not [t for t, _ in body.tags if t in ("script", "style", "svg")]
    assert not body.handlers()
    # the only styles in the body are the colours nbconvert gives a traceback's ANSI codes
    ansi = re.compile(r"((background-)?color: rgb\(\d+,\s*\d+,\s*\d+\);?\s*)+")
    assert not [a["style"] for _, a in body.tags if "style" in a and not ansi.fullmatch(a["style"])]
    from tests.cdp import Browser, chromium_or_skip

    exe = chromium_or_skip()
    with Browser(exe, tmp_path / "profile") as browser:
        browser.load((course / "feedback" / "mallory" / LAB / f"{LAB}.html").as_uri(), quiet=1.0)
        assert browser.evaluate("document.title") == LAB and browser.evaluate("typeof window.pwned") == "undefined"
        heading, visible = browser.evaluate("""(() => {
          const h = document.querySelector('#kit-score h4'), r = h.getBoundingClientRect();
          const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
          return [h.innerText, hit !== null && (hit === h || h.contains(hit))];
        })()""")
        assert heading == f"{LAB} ({true})" and visible, (heading, visible)


def test_the_formgrader_opens_a_graded_submission(pages, tmp_path):
    """Manual grading: the Formgrader's page of a graded submission (its own template, not the
    feedback pages'), served by a Jupyter server on the course as an instructor starts it
    (tests/test_instructor_walk.py grades written answers in it, in the browser)."""
    from nbgrader.api import Gradebook

    from tests.formgrader import formgrader

    _, course = pages
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        submission = gb.find_submission_notebook(LAB, LAB, "alice").id
    with formgrader(course, tmp_path) as fg:
        status, page = fg.request(f"/formgrader/submissions/{submission}/")
        said = fg.said()
        assert status == 200, (status, page[:500], said[-3000:])
        assert "TemplateNotFound" not in said and " 500 " not in said
        assert "formgrade" in page and "kit-score" not in page     # the Formgrader's template, not ours
