"""Shared data and outliers after grading: two students handing in byte-identical data files are
named in grades.csv (``data``: "same as bob's", for both) and in the class report, which counts
the file once in its medians; the class report shows each machine's load, marks outliers by a
rule it names, and counts in the singular and plural.  (No notebook is graded here: the files
alone.)"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import sys
from pathlib import Path

import numpy as np

from tests.test_class_report import LABS, _scale, _write, make_course

sys.path.insert(0, str(LABS))
import class_report  # noqa: E402
import class_report_views as views  # noqa: E402
import grade  # noqa: E402

A, B, FAR = "u1034", "u1411", "u1569"     # machines whose lab 1 is an ordinary measurement
LAB1 = grade.Lab("lab1", [], data_files=["pingpong.json"])


def course_with_a_shared_file(tmp_path, far: float = 30.0):
    course = make_course(tmp_path)
    sub = course / "submitted"
    shutil.copy(sub / A / "lab1" / "pingpong.json", sub / B / "lab1" / "pingpong.json")
    pp = json.loads((sub / FAR / "lab1" / "pingpong.json").read_text())
    _write(sub / FAR / "lab1" / "pingpong.json", _scale(pp, far))       # every time 30x: α and β 30x
    return course


def report(course, out, names=True):
    assert class_report.main(["--lab", "lab1", "--course", str(course), "--out", str(out)]
                             + (["--names"] if names else [])) == 0
    with open(out / "lab1.csv", newline="", encoding="utf-8") as fh:
        rows = {r["student"] or "(reference)": r for r in csv.DictReader(fh)} if names else list(csv.DictReader(fh))
    return rows, (out / "lab1.html").read_text(encoding="utf-8")


def test_grades_name_the_students_who_share_a_file(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))  # alembic
    course = course_with_a_shared_file(tmp_path)
    students = sorted(p.name for p in (course / "submitted").iterdir())
    shared = grade.same_data(course, LAB1, students)
    assert shared == {A: {"pingpong.json": [B]}, B: {"pingpong.json": [A]}}
    assert grade.data_status(course, LAB1, course / "submitted" / A / "lab1", shared[A]) == f"pingpong.json: same as {B}'s"
    assert grade.data_status(course, LAB1, course / "submitted" / B / "lab1", shared[B]) == f"pingpong.json: same as {A}'s"
    # the reference copy stays a reference copy, not "same as" the other student who copied it
    far = (course / "submitted" / FAR / "lab1" / "pingpong.json").read_bytes()
    shutil.copy(LABS / "source" / "lab1" / "pingpong.json", course / "submitted" / FAR / "lab1" / "pingpong.json")
    shutil.copy(LABS / "source" / "lab1" / "pingpong.json", course / "submitted" / A / "lab1" / "pingpong.json")
    assert grade.same_data(course, LAB1, students) == {}
    # a link to another student's file is refused (never read), not "the same" as it
    link = course / "submitted" / FAR / "lab1" / "pingpong.json"
    link.unlink()
    link.symlink_to(course / "submitted" / B / "lab1" / "pingpong.json")
    assert grade.same_data(course, LAB1, students) == {}
    link.unlink()
    # rows() writes it in grades.csv's data column, for both
    (course / "submitted" / FAR / "lab1" / "pingpong.json").write_bytes(far)
    shutil.copy(course / "submitted" / B / "lab1" / "pingpong.json", course / "submitted" / A / "lab1" / "pingpong.json")
    outcomes = {(s, "lab1"): grade.Outcome("failed", grade.data_status(course, LAB1, course / "submitted" / s / "lab1"))
                for s in (A, B, FAR)}
    table = {r["student"]: r for r in grade.rows(course, [LAB1], [A, B, FAR], outcomes)}
    assert table[A]["data"] == f"pingpong.json: same as {B}'s" and table[B]["data"] == f"pingpong.json: same as {A}'s"
    assert table[FAR]["data"] == "pingpong.json: own"
    # four copies: each names the three others
    for s in (FAR, "u1748"):
        shutil.copy(course / "submitted" / A / "lab1" / "pingpong.json", course / "submitted" / s / "lab1" / "pingpong.json")
    shared = grade.same_data(course, LAB1, students)
    assert grade.data_status(course, LAB1, course / "submitted" / "u1748" / "lab1", shared["u1748"]) == (
        f"pingpong.json: same as {A}'s, {B}'s and {FAR}'s")


def test_the_class_report_marks_the_shared_file_and_counts_it_once(tmp_path):
    course = course_with_a_shared_file(tmp_path)
    rows, page = report(course, tmp_path / "out")
    assert rows[A]["alpha_s"] == rows[B]["alpha_s"]
    assert rows[A]["shared"].startswith(f"pingpong.json: same as {B}") and rows[B]["shared"].startswith(
        f"pingpong.json: same as {A}")
    assert [rows[s]["shared"].endswith("(not counted again)") for s in (A, B)] == [False, True]   # A listed first
    for s, other in ((A, B), (B, A)):
        assert re.search(rf"<td>{s} <span class=\"tag shared\">pingpong.json same as {other}'s</span>", page), s
    # the point drawn over another names it in its tooltip (the figure's SVG <title>)
    assert re.search(rf"<title>{B}: [^<]*; pingpong.json same as {A}&#x27;s</title>", page)
    # the median counts each distinct file once: the distinct α of the machines used, not oversubscribed
    alphas = {float(r["alpha_s"]) for r in rows.values() if r["status"] == "used" and r["oversubscribed"] == "no"}
    shown = float(re.search(r"Class median α = ([0-9.]+) µs", page).group(1))
    assert abs(shown - np.median(sorted(alphas)) * 1e6) <= 0.005 * shown
    counted_twice = [float(r["alpha_s"]) for r in rows.values() if r["status"] == "used" and r["oversubscribed"] == "no"]
    assert len(counted_twice) == len(alphas) + 1 and f"over {len(alphas)} machines" in page
    assert "counted once in the class medians" in page


def test_outliers_by_the_named_rule_and_the_load_in_the_table(tmp_path):
    course = course_with_a_shared_file(tmp_path)
    rows, page = report(course, tmp_path / "out")
    base = [r for s, r in rows.items() if r["status"] == "used" and r["oversubscribed"] == "no"
            and not r["shared"].endswith("(not counted again)")]
    for key, label in (("alpha_s", "α"), ("beta_s_per_byte", "β")):
        x = np.log([float(r[key]) for r in base])
        med, mad = np.median(x), np.median(np.abs(x - np.median(x)))
        want = {s for s, r in rows.items() if s != "(reference)" and r[key]
                and abs(np.log(float(r[key])) - med) > 3 * mad}
        got = {s for s, r in rows.items() if label in r["outliers"].split(", ")}
        assert FAR in want and got == want, (key, got, want)
    assert re.search(rf"<td>{FAR}( <span[^>]*>[^<]*</span>)* <span class=\"tag outlier\">outlier: α, β", page)
    assert "more than 3 median absolute deviations from the class median" in page
    for s in (A, FAR):
        load = json.loads((course / "submitted" / s / "lab1" / "pingpong.json").read_text())["load_average_1min"]
        row = re.search(rf"<tr[^>]*><td>{s} .*?</tr>", page).group(0)
        assert f'<td class="num">{load:.1f}</td>' in row, row
    assert "<th>load</th>" in page


def test_one_of_a_kind_is_said_in_the_singular(tmp_path, capsys):
    course = make_course(tmp_path, students=["solo"])
    _write(course / "submitted" / "solo" / "lab1" / "pingpong.json", "{")
    _, page = report(course, tmp_path / "out", names=False)
    assert "1 student folder in" in page and "0 machines shown" in page and "1 hand-in not used" in page
    assert "lab1: 1 student folder, 0 machines shown, 1 hand-in not used" in capsys.readouterr().out


def test_figures_keep_their_significant_digits():
    assert views.fmt(1e-10, 1e9) == "0.100"       # β = 0.1 ns/B, three significant digits
    assert views.fmt(1.5e-6, 1e6) == "1.50" and views.fmt(12.34) == "12.3" and views.fmt(1234.5) == "1,234"
