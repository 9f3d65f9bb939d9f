"""The kit's wheel (``book/_ext/kit_wheel.py``) dates its files the last commit that changed its
sources, not 2000-01-01 (which JupyterLab shows as "26y ago"), and stays reproducible."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import zipfile

import pytest

from tests.mpirun import ROOT

sys.path.insert(0, str(ROOT / "book" / "_ext"))
import kit_wheel  # noqa: E402 (the book's builder of the wheel)


def _dates(wheel) -> set[tuple]:
    with zipfile.ZipFile(wheel) as zf:
        return {info.date_time for info in zf.infolist()}


def _zip_date(epoch: int) -> tuple:
    t = time.gmtime(epoch)
    return (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec - t.tm_sec % 2)


@pytest.mark.slow                       # builds the wheel again (the run's first build is shared)
@pytest.mark.timeout(600)
def test_wheel_files_carry_the_last_commit_date_of_its_sources(tmp_path, monkeypatch, kit_wheel_file):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    commit = subprocess.run(["git", "log", "-1", "--format=%ct", "--", "pyproject.toml", "netmodels", "mpi_exercises"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    if not commit:    # a copy of the kit without its history: the newest source file dates it
        commit = str(int(max(p.stat().st_mtime for p in kit_wheel._sources(ROOT))))
    first = kit_wheel_file                  # built without SOURCE_DATE_EPOCH (tests/conftest.py)
    assert _dates(first) == {_zip_date(int(commit))}
    assert min(_dates(first))[0] >= 2024                        # not 2000-01-01
    again = kit_wheel.build(ROOT, tmp_path / "b")
    assert again.read_bytes() == first.read_bytes()              # reproducible


def test_source_date_epoch_wins_and_is_clipped_to_a_zip_date(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1750000000")
    assert kit_wheel.wheel_epoch(ROOT) == 1750000000
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    assert kit_wheel.wheel_epoch(ROOT) == 315532800             # 1980-01-01, the earliest a zip holds
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # outside git: the newest file
    (tmp_path / "a.py").write_text("")
    (tmp_path / "b.py").write_text("")
    os.utime(tmp_path / "a.py", (1_600_000_000, 1_600_000_000))
    os.utime(tmp_path / "b.py", (1_700_000_000, 1_700_000_000))
    assert kit_wheel.source_epoch(tmp_path, ["."], [tmp_path / "a.py", tmp_path / "b.py"]) == 1_700_000_000
