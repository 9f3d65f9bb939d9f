"""Pages and spreadsheets made from hostile hand-ins: nothing a student wrote runs, covers the
grader's score, or starts a spreadsheet formula.

The attacks are those that worked before: lab 3's fastest barrier named ``<script>``,
``<img onerror>`` or ``<svg onload>`` in ``barriers.json`` and lab 5's best model so named among
``predict.json``'s keys (both went into the class report's summary unescaped), student folders
named ``=1+2`` or ``@SUM(1)`` (went into the CSVs as formulas), and, on a feedback page, a
student's HTML output or Markdown carrying script, event handlers, styles that overlay the page
with "Score: 19.0 / 19.0", a forged grader's note, or image metadata breaking out of its
attribute.  Each page is checked by parsing it (no element or attribute of the attacker's is left)
and, where Chromium is installed, by opening it: no attacker's script ran (each would change
``document.title``), the page's own scripts did (MathJax typeset the math: the page's Content
Security Policy names them), and the score drawn at the top is the true one, not covered.

The feedback page is rendered here by the course's exporter (``labs/feedback_page.py``, with the
course's configuration and preprocessors) from a graded notebook built in the test, without
a gradebook; ``tests/test_grading_feedback.py`` makes one through ``make grade`` and
``make feedback``.
"""

from __future__ import annotations

import base64
import copy
import csv
import hashlib
import json
import os
import re
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

from tests.test_class_report import LABS, make_course

TITLE_MARK = "pwned"
#: one payload per trick; each would set document.title to contain TITLE_MARK
PAYLOADS = {
    "script": f'<script>document.title="{TITLE_MARK}:script"; window.pwned = 1</script>',
    "img": f"<img src=x onerror=\"document.title='{TITLE_MARK}:img'; window.pwned = 1\">",
    "svg": f"<svg onload=\"document.title='{TITLE_MARK}:svg'; window.pwned = 1\"><circle r=\"4\"></circle></svg>",
}
#: student folders named as formulas and as HTML (a folder name holds no "/")
HOSTILE_IDS = ["=1+2", "@SUM(1)", "+cmd", f"<img src=x onerror=document.title='{TITLE_MARK}:id'>"]
FORMULA = ("=", "+", "-", "@", "\t", "\r")
#: a barrier named as broken matplotlib math: the figures must still be drawn
MATHTEXT = r"$\frac{1$"


# ---------------------------------------------------------------- parsing
class Tree(HTMLParser):
    """Every start tag of a page with its attributes, and the text inside each element kind."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.scripts: list[tuple[dict, str]] = []
        self._script = None
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._script = (dict(attrs), [])

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag == "script" and self._script is not None:
            self.scripts.append((self._script[0], "".join(self._script[1])))
            self._script = None

    def handle_data(self, data):
        if self._script is not None:
            self._script[1].append(data)
        else:
            self.text.append(data)

    def handlers(self):
        return [(t, a) for t, a in self.tags for name in a if name.lower().startswith("on")]


def csp_of(tree: Tree) -> dict[str, list[str]]:
    """The page's Content Security Policy (``<meta http-equiv>``), directive -> sources."""
    metas = [a for t, a in tree.tags if t == "meta" and (a.get("http-equiv") or "").lower() == "content-security-policy"]
    assert len(metas) == 1, metas
    return {d.split()[0]: d.split()[1:] for d in metas[0]["content"].split(";") if d.strip()}


# ---------------------------------------------------------------- the class report
def _fastest_renamed(path: Path, name: str) -> None:
    data = json.loads(path.read_text())
    fastest = min(data["results"], key=lambda r: r["min_s"])
    fastest["algorithm"] = name
    path.write_text(json.dumps(data))


def _best_model_added(path: Path, name: str) -> None:
    """One more model in every row's errors, half the smallest error of the others: the best."""
    data = json.loads(path.read_text())
    for row in data["rows"]:
        for key in ("relative_error", "relative_error_network"):
            if row.get(key):
                row[key][name] = min(row[key].values(), key=abs) / 2
    path.write_text(json.dumps(data))


@pytest.fixture(scope="module")
def hostile_class(tmp_path_factory):
    """A class whose three first clean students name their fastest barrier and their best model
    after a payload each, with four more students in folders named as formulas or HTML, and one
    machine whose load (a number) is negative."""
    students = ["u1034", "u1342", "u2031", "u1187"] + HOSTILE_IDS     # (make_course: u2031's lab 1 is a copy)
    course = make_course(tmp_path_factory.mktemp("hostile"), students=students)
    for student, payload in zip(("u1034", "u1342", "u2031"), PAYLOADS.values()):
        _fastest_renamed(course / "submitted" / student / "lab3" / "barriers.json", payload)
        _best_model_added(course / "submitted" / student / "lab5" / "predict.json", payload)
    _fastest_renamed(course / "submitted" / "u1187" / "lab3" / "barriers.json", MATHTEXT)
    pp = course / "submitted" / "u1034" / "lab1" / "pingpong.json"
    data = json.loads(pp.read_text())
    data["load_average_1min"] = -2.5
    pp.write_text(json.dumps(data))
    sys.path.insert(0, str(LABS))
    import class_report

    out = {}
    for names in (False, True):
        for lab in ("lab1", "lab3", "lab5"):
            folder = course / ("named" if names else "pseudonyms")
            assert class_report.main(["--lab", lab, "--course", str(course), "--out", str(folder)]
                                     + (["--names"] if names else [])) == 0
            out[lab, names] = (folder / f"{lab}.html", folder / f"{lab}.csv")
    return out


@pytest.mark.slow
@pytest.mark.parametrize("names", [False, True], ids=["pseudonyms", "names"])
@pytest.mark.parametrize("lab", ["lab1", "lab3", "lab5"])
def test_class_report_keeps_no_element_of_a_student(hostile_class, lab, names):
    page = hostile_class[lab, names][0].read_text(encoding="utf-8")
    tree = Tree(page)
    assert not [t for t, _ in tree.tags if t in ("script", "img", "iframe", "object", "embed", "link", "base")]
    assert not tree.handlers()
    csp = csp_of(tree)
    assert csp["default-src"] == ["'none'"] and csp["script-src"] == ["'none'"]
    assert page.count("<svg") >= 1 and "could not be drawn" not in page     # the names did not stop the figures
    said = "".join(tree.text)
    if lab in ("lab3", "lab5"):       # the names are shown, as text, in the summary
        kind = "Fastest barrier measured: " if lab == "lab3" else "Best model (with the software term): "
        summary = next(line for line in said.splitlines() if kind in line)
        for payload in PAYLOADS.values():
            assert f"{payload} on 1" in summary, summary
        if lab == "lab3":
            assert f"{MATHTEXT} on 1" in summary
            assert MATHTEXT in "".join(Tree(page[page.index("<svg"):]).text)    # a tick label, as written
    if names:                          # the ids as text, in the tables and the tooltips
        for student in HOSTILE_IDS:
            assert student in said, student


@pytest.mark.slow
def test_class_report_in_a_browser_runs_nothing_of_a_student(hostile_class, tmp_path):
    from tests.cdp import Browser, chromium_or_skip

    with Browser(chromium_or_skip(), tmp_path / "profile") as browser:
        for (lab, names), (page, _) in sorted(hostile_class.items()):
            browser.load(page.as_uri(), quiet=0.3)
            title = browser.evaluate("document.title")
            assert TITLE_MARK not in title and title.endswith("the class's machines"), (lab, names, title)
            assert browser.evaluate("typeof window.pwned") == "undefined", (lab, names)
            assert browser.evaluate("document.querySelectorAll('script, img, [onload], [onerror]').length") == 0
            if lab == "lab3":
                summary = browser.evaluate("document.querySelector('.summary').innerText")
                assert PAYLOADS["script"] + " on 1" in summary, summary


@pytest.mark.slow
def test_class_report_csv_has_no_formula_and_numbers_stay_numbers(hostile_class):
    for (lab, names), (_, path) in hostile_class.items():
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        cells = [c for row in rows[1:] for c in row]
        assert not [c for c in cells if c.startswith(FORMULA) and not re.fullmatch(r"-[\d.]+(e-?\d+)?", c)], lab
        if names:
            students = [row[rows[0].index("student")] for row in rows[1:]]
            for student in HOSTILE_IDS:
                expected = "'" + student if student.startswith(FORMULA) else student
                assert expected in students, (lab, student, students)
    with open(hostile_class["lab1", True][1], newline="", encoding="utf-8") as fh:
        row = next(r for r in csv.DictReader(fh) if r["student"] == "u1034")
    assert float(row["load_average_1min"]) == -2.5      # a negative number, written as one


# ---------------------------------------------------------------- the feedback page
COVER = ("<div style=\"position:fixed;top:0;left:0;width:100%;height:100%;z-index:2147483647;background:#fff\">"
         "<h4>lab1 (Score: 19.0 / 19.0)</h4></div>"
         "<style>#kit-score, .kit-score { display: none !important }</style>"
         "<div class=\"navbar-fixed-top modal\" id=\"kit-score\">Score: 19.0 / 19.0</div>")
#: where each attack goes in the notebook
MATH = r"The fit: $\alpha + \beta n$ with $n > 0$."


def _graded_notebook():
    """A graded lab with 0 of 13 automatic points and 0 of 2 written ones, every student part hostile."""
    v4 = nbformat.v4
    everything = "".join(PAYLOADS.values()) + COVER
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()
    nb = v4.new_notebook()
    nb.cells = [
        v4.new_markdown_cell("# Lab 1\n" + MATH),
        v4.new_markdown_cell("My answer. " + MATH + "\n\n" + everything + "\n\n[click](javascript:window.pwned=1)"
                             " ![x](data:text/html;base64,PHNjcmlwdD4=)",
                             metadata={"nbgrader": {"grade": True, "solution": True, "points": 2, "score": 0.0,
                                                    "grade_id": "written\"><script>window.pwned=1</script>"}}),
        v4.new_code_cell("show()", outputs=[
            v4.new_output("display_data", data={"text/html": everything, "text/plain": "x",
                                                "application/javascript": "window.pwned = 1; document.title = 'pwned:js'"}),
            v4.new_output("display_data", data={"text/markdown": everything + "\n\n" + MATH}),
            v4.new_output("display_data", data={"image/svg+xml": PAYLOADS["svg"]}),
            v4.new_output("display_data", data={"image/png": png},
                          metadata={"image/png": {"width": "1 onerror=window.pwned=1", "height": 20}}),
            v4.new_output("display_data", data={"text/html": "<p>isolated</p>" + PAYLOADS["script"]},
                          metadata={"text/html": {"isolated": True}}),
            v4.new_output("stream", name="stdout", text=everything),
            v4.new_output("error", ename="ValueError", evalue=everything, traceback=[everything]),
        ], metadata={"nbgrader": {"grade": True, "solution": True, "points": 3, "score": 0.0, "grade_id": "fit"},
                     "kit_feedback_notes": ["All hidden tests passed: 19 of 19."],
                     "tags": ["mine", "x navbar-fixed-top modal"]}),   # a tag becomes a class name
        v4.new_code_cell("assert ok", metadata={"nbgrader": {"grade": True, "solution": False, "points": 10,
                                                             "score": 0.0, "grade_id": "test_fit"}}),
        v4.new_raw_cell(everything, metadata={"raw_mimetype": "text/html"}),
    ]
    return nb


@pytest.fixture(scope="module")
def feedback(tmp_path_factory):
    """The feedback page of :func:`_graded_notebook` (score 0 of 15), as ``make feedback`` renders it."""
    sys.path.insert(0, str(LABS))
    import feedback_page
    import nbgrader
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(LABS)).load_config()
    # what nbgrader's GenerateFeedback adds for its exporter: where bootstrap's CSS is
    config.HTMLExporter.extra_template_paths = [
        str(Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "static" / "node_modules"
            / "bootstrap" / "dist" / "css")]
    exporter = feedback_page.FeedbackExporter(config=config)
    for name in config.GenerateFeedback.preprocessors:
        if "GetGrades" not in name:        # the scores are in the notebook already: no gradebook here
            exporter.register_preprocessor(name, enabled=True)
    folder = tmp_path_factory.mktemp("feedback")
    resources = {"nbgrader": {"notebook": "lab1", "score": 0.0, "max_score": 15.0, "late_penalty": 0.0},
                 "metadata": {"path": str(folder), "name": "lab1"}}
    page, _ = exporter.from_notebook_node(_graded_notebook(), resources=resources)
    (folder / "lab1.html").write_text(page, encoding="utf-8")
    return folder / "lab1.html"


def test_the_exporter_is_the_feedback_pages_alone():
    """The Formgrader's HTML exporter keeps its own template: only GenerateFeedback's is ours."""
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(LABS)).load_config()
    assert "template_name" not in config.HTMLExporter and "template_file" not in config.HTMLExporter
    assert config.GenerateFeedback.exporter_class == "feedback_page.FeedbackExporter"
    assert config.FeedbackExporter.template_name == "kit_feedback"


@pytest.mark.slow
def test_feedback_page_keeps_no_element_of_a_student(feedback):
    page = feedback.read_text(encoding="utf-8")
    tree = Tree(page)
    assert not tree.handlers()
    assert not [t for t, _ in tree.tags if t in ("iframe", "object", "embed", "form", "base", "link", "svg")]
    body = page[page.index("<body"):]
    body_tree = Tree(body)
    assert not [a for _, a in body_tree.tags if "style" in a], "a style attribute in the body"
    assert not [t for t, _ in body_tree.tags if t in ("style", "script", "meta")]
    assert [a.get("id") for _, a in tree.tags].count("kit-score") == 1
    assert not [a for _, a in tree.tags if "navbar-fixed-top" in (a.get("class") or "")]
    assert [a for _, a in tree.tags if "celltag_mine" in (a.get("class") or "").split()]
    assert not [a for t, a in tree.tags if t == "a" and (a.get("href") or "").lower().startswith(("javascript", "data"))]
    assert all(a["src"].startswith("data:image/") for t, a in tree.tags if t == "img" and "src" in a)
    assert not [a for t, a in tree.tags if t == "img" and a.get("width") not in (None, "")], "width from a student"
    # the payloads are there as text for the student to read, not as markup
    said = "".join(body_tree.text)
    assert PAYLOADS["script"] in said and "Score: 19.0 / 19.0" in said
    assert "All hidden tests passed" not in said                  # a note only the grader writes
    scripts = [(a, s) for a, s in tree.scripts if a.get("type") != "application/octet-stream"]
    assert len(scripts) == 2 and all("pwned" not in s for _, s in scripts)


@pytest.mark.slow
def test_feedback_page_policy_names_only_its_own_scripts(feedback):
    page = feedback.read_text(encoding="utf-8")
    tree = Tree(page)
    csp = csp_of(tree)
    assert page.index("Content-Security-Policy") < page.index("<script")
    assert csp["default-src"] == ["'none'"] and "'unsafe-inline'" not in csp["script-src"]
    assert csp["img-src"] == ["data:"]

    def sha(text: bytes) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text).digest()).decode() + "'"

    own = [sha(s.encode()) for a, s in tree.scripts if a.get("type") != "application/octet-stream"]
    import gzip

    packed = next(s for a, s in tree.scripts if a.get("id") == "kit-mathjax")
    mathjax = gzip.decompress(base64.b64decode(packed))
    assert sorted(csp["script-src"]) == sorted(own + [sha(mathjax)])


@pytest.mark.slow
def test_feedback_page_in_a_browser(feedback, tmp_path):
    """No attacker's script ran, MathJax did, and the score at the top is the true one, uncovered,
    even where a student's box holds an overlay (put there past the allow-list, by the test)."""
    from tests.cdp import Browser, chromium_or_skip

    with Browser(chromium_or_skip(), tmp_path / "profile") as browser:
        events = browser.load(feedback.as_uri(), quiet=1.0)
        assert not [e for e in events if e["method"] == "Runtime.exceptionThrown"]
        deadline = time.monotonic() + 30
        while browser.evaluate("document.querySelectorAll('mjx-container').length") < 3:
            assert time.monotonic() < deadline, "MathJax typeset nothing: the policy stopped the page's own scripts"
            time.sleep(0.3)
        assert browser.evaluate("document.title") == "lab1"
        assert browser.evaluate("typeof window.pwned") == "undefined"
        blocked = [e["params"]["entry"]["text"] for e in browser.events if e["method"] == "Log.entryAdded"
                   and "Content Security Policy" in e["params"]["entry"]["text"]]
        assert not blocked, blocked[:2]     # nothing of the page's own was refused, no student's left to refuse
        requested = [e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"]
        assert [u for u in requested if not u.startswith("data:")] == [feedback.as_uri()], requested

        where = """(() => {
          const h = document.querySelector('#kit-score h4'), r = h.getBoundingClientRect();
          window.scrollTo(0, 0);
          const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
          return [h.innerText, hit !== null && h.contains(hit) || hit === h,
                  document.querySelector('#kit-score-bottom').innerText];
        })()"""
        text, visible, bottom = browser.evaluate(where)
        assert text == "lab1 (Score: 0.0 / 15.0)" and visible, (text, visible)
        assert "Score: 0.0 / 15.0" in bottom
        # an overlay inside a student's box (as if styles got through): it stays in its box
        browser.evaluate("""(() => {
          for (const box of document.querySelectorAll('div.output_subarea, div.text_cell_render')) {
            const d = document.createElement('div');
            d.style.cssText = 'position:fixed;top:0;left:0;width:100vw;height:100vh;z-index:2147483647;background:red';
            d.textContent = 'Score: 19.0 / 19.0';
            box.appendChild(d);
          }
        })()""")
        text, visible, _ = browser.evaluate(where)
        assert text == "lab1 (Score: 0.0 / 15.0)" and visible, "a student's box painted over the score"


# ---------------------------------------------------------------- spreadsheets
def test_spreadsheet_text_neutralises_formulas_only():
    sys.path.insert(0, str(LABS))
    import page_safety

    for text in ("=1+2", "+1", "-cmd", "@SUM(1)", "\t=1", "\r=1"):
        assert page_safety.spreadsheet_text(text) == "'" + text
    for text in ("alice", "", "1-2", "a=b", "'=1"):
        assert page_safety.spreadsheet_text(text) == text
    assert [page_safety.csv_cell(v) for v in (-2.5, -3, None, True)] == [-2.5, -3, None, True]
    with pytest.raises(ValueError, match="text must be a str"):
        page_safety.spreadsheet_text(-1)


def test_grades_csv_neutralises_student_ids_not_scores(tmp_path):
    sys.path.insert(0, str(LABS))
    import grade
    import grading_csv

    lab = grade.Lab("lab1", ["lab1"], [("lab1", "test_a", False)])
    rows = [{"student": sid, "lab": "lab1", "status": "=graded", "data": "-", "sandbox": "bwrap",
             "auto_score": -1.5, "auto_max": 2.0, "score": -1.5, "max_score": 2.0, "manual_pending": 0,
             grading_csv.column(lab, "lab1", "test_a"): -1.5} for sid in HOSTILE_IDS]
    grading_csv.write_csv(tmp_path / "grades.csv", [lab], copy.deepcopy(rows))
    with open(tmp_path / "grades.csv", newline="", encoding="utf-8") as fh:
        got = list(csv.DictReader(fh))
    for sid, row in zip(HOSTILE_IDS, got):
        assert row["student"] == ("'" + sid if sid.startswith(FORMULA) else sid)
        assert row["status"] == "'=graded" and row["data"] == "'-"
        assert float(row["score"]) == -1.5 and row["score"] == "-1.5"
        assert row[grading_csv.column(lab, "lab1", "test_a")] == "-1.5"


def test_clean_keeps_structure_and_drops_the_rest():
    sys.path.insert(0, str(LABS))
    import page_safety

    kept = Tree(page_safety.clean(
        '<table><tr><td colspan="2" style="position:fixed" class="navbar-fixed-top" id="kit-score">1</td></tr></table>'
        '<a href="javascript:window.pwned=1">x</a><a href="https://example.org/" onclick="1">y</a>'
        '<img src="data:text/html;base64,PHNjcmlwdD4=" onerror="1"><img src="data:image/png;base64,iVBORw0KGgo=">'
        '<form action="https://example.org"><input name="q"></form><iframe src="https://example.org"></iframe>'))
    assert kept.tags == [("table", {}), ("tbody", {}), ("tr", {}), ("td", {"colspan": "2"}), ("a", {}),
                         ("a", {"href": "https://example.org/"}), ("img", {}),
                         ("img", {"src": "data:image/png;base64,iVBORw0KGgo="})]
    assert "<form" in "".join(kept.text) and "<iframe" in "".join(kept.text)     # shown as text
    with pytest.raises(ValueError, match="text must be a str"):
        page_safety.clean(3)
    with pytest.raises(ValueError, match="scripts must be CSP sha256 sources"):
        page_safety.content_security_policy(["'unsafe-inline'"])
    assert "script-src 'none'" in page_safety.content_security_policy()
