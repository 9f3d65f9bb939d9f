"""What the grading sandbox's kernel starts from (``labs/grading_sandbox.py``: ``font_list`` and
``command``): the grader's matplotlib font list, instead of listing the system's fonts again in
its empty home once per graded notebook that plots; and one BLAS thread unless the grader's
environment sets it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.labcourse import LABS, require_sandbox

sys.path.insert(0, str(LABS))
import grading_sandbox  # noqa: E402 (labs/ is not a package)

# run in the sandbox: where matplotlib keeps its files, and the marker of the font list it loaded
PROBE = ("import json, matplotlib\n"
         "from matplotlib import font_manager\n"
         "print(json.dumps([matplotlib.get_cachedir(), getattr(font_manager.fontManager, 'kit_marker', None)]))\n")


def _in_sandbox(tmp_path, fonts):
    work, run = tmp_path / "work", tmp_path / "run"
    work.mkdir(parents=True)
    run.mkdir()
    cmd = grading_sandbox.command(str(work), str(run), memory=4 << 30, cpu=60, fsize=1 << 30, fonts=fonts)
    res = subprocess.run([*cmd, sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    return run, json.loads(res.stdout.splitlines()[-1])


@pytest.mark.slow
def test_the_kernel_loads_the_graders_font_list_and_builds_its_own_without_one(tmp_path):
    require_sandbox()
    listed = grading_sandbox.font_list()
    assert listed is not None and listed.endswith(".json")
    marked = json.loads(open(listed, encoding="utf-8").read())
    marked["kit_marker"] = 7   # kept by matplotlib's loader: only a list read from this file has it
    given = tmp_path / "given" / listed.rsplit("/", 1)[1]
    given.parent.mkdir()
    given.write_text(json.dumps(marked), encoding="utf-8")

    run, (cachedir, marker) = _in_sandbox(tmp_path / "with", str(given))
    assert cachedir == str(run / "matplotlib") and marker == 7
    # without a list (no matplotlib where grade.py runs), matplotlib builds one in the same folder
    run, (cachedir, marker) = _in_sandbox(tmp_path / "without", None)
    assert cachedir == str(run / "matplotlib") and marker is None
    assert (run / "matplotlib" / given.name).is_file()


def test_the_kernel_gets_one_blas_thread_unless_the_grader_sets_it(tmp_path, monkeypatch):
    require_sandbox()

    def blas_threads() -> list[str]:
        cmd = grading_sandbox.command(str(tmp_path), str(tmp_path), memory=1 << 30, cpu=60, fsize=1 << 20)
        return [cmd[i + 2] for i in range(len(cmd) - 2) if cmd[i:i + 2] == ["--setenv", "OPENBLAS_NUM_THREADS"]]

    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    assert blas_threads() == ["1"]
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    assert blas_threads() == ["3"]
