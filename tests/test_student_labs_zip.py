"""The dates in the lab zips the book offers (book/_ext/student_labs.py): every entry dated the
last commit that changed the course's sources (or SOURCE_DATE_EPOCH), the same in every build,
not a fixed 2000-01-01."""

from __future__ import annotations

import calendar
import os
import subprocess
import sys
import time
import zipfile

from tests.mpirun import ROOT

sys.path.insert(0, str(ROOT / "book" / "_ext"))
import student_labs  # noqa: E402

COMMITTED = "2024-03-05T14:07:42+00:00"      # a date the test gives the commit: the reference


def course_in_git(tmp_path, when=COMMITTED):
    course = tmp_path / "labs"
    (course / "source" / "lab1").mkdir(parents=True)
    (course / "source" / "lab1" / "lab1.ipynb").write_text("{}")
    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    env = dict(os.environ, GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when, GIT_AUTHOR_NAME="t",
               GIT_AUTHOR_EMAIL="t@example.org", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org")
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "course"]):
        subprocess.run(["git", *cmd], cwd=tmp_path, env=env, check=True, timeout=30)
    return course


def test_entries_are_dated_the_last_commit_of_the_sources(tmp_path, monkeypatch):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    course = course_in_git(tmp_path)
    os.utime(course / "source" / "lab1" / "lab1.ipynb", (0, 10 ** 9))       # a file time that must not count
    when = student_labs.zip_time(course)
    assert when == (2024, 3, 5, 14, 7, 42)
    student_labs.write_zip(course / "source" / "lab1", tmp_path / "lab1.zip", when)
    first = (tmp_path / "lab1.zip").read_bytes()
    with zipfile.ZipFile(tmp_path / "lab1.zip") as zf:
        assert [i.date_time for i in zf.infolist()] == [(2024, 3, 5, 14, 7, 42)]
    student_labs.write_zip(course / "source" / "lab1", tmp_path / "lab1.zip", student_labs.zip_time(course))
    assert (tmp_path / "lab1.zip").read_bytes() == first                     # reproducible


def test_source_date_epoch_wins_and_the_zip_range_is_kept(tmp_path, monkeypatch):
    course = course_in_git(tmp_path)
    stamp = calendar.timegm((2025, 6, 1, 8, 30, 15))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(stamp))
    assert student_labs.zip_time(course) == (2025, 6, 1, 8, 30, 14)          # zip times go in 2 s steps
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    assert student_labs.zip_time(course) == (1980, 1, 1, 0, 0, 0)            # the earliest a zip holds


def test_outside_git_the_newest_source_file_dates_it(tmp_path, monkeypatch):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    course = tmp_path / "labs"
    (course / "source" / "lab1").mkdir(parents=True)
    for name, t in (("a.ipynb", 1_600_000_000), ("b.json", 1_700_000_000)):
        (course / "source" / "lab1" / name).write_text("{}")
        os.utime(course / "source" / "lab1" / name, (t, t))
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))             # no repository above it
    assert student_labs.zip_time(course) == tuple(time.gmtime(1_700_000_000)[:6])
