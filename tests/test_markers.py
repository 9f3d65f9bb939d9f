"""The markers that keep ``make test-fast`` the unit tests alone (tests/conftest.py): the table of
tests that start processes names real tests, and a test that starts a process without a marker
fails."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import conftest

pytest_plugins = ["pytester"]
HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("key", sorted({*conftest.PROCESS_TESTS, *conftest.HEAVY_TESTS}))
def test_each_named_test_is_a_test_of_its_module_with_a_known_marker(key):
    module, function = key.split("::")
    text = (HERE / module).read_text(encoding="utf-8")
    assert re.search(rf"^def {function}\(", text, re.MULTILINE), f"{key}: no such test"
    assert conftest.PROCESS_TESTS.get(key, "slow") in conftest.PROCESS_MARKERS


GUARDED = """
import os, subprocess, sys
import pytest

def test_python():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

def test_shell():
    subprocess.run(f"{sys.executable} -c pass", shell=True, check=True)

def test_fork():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)

@pytest.mark.cli
def test_marked_python():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

def test_git():
    subprocess.run(["git", "--version"], check=True, capture_output=True)

def test_nothing():
    pass
"""


@pytest.mark.cli   # its session starts processes
def test_a_test_that_starts_a_process_without_a_marker_fails(pytester):
    pytester.makeconftest((HERE / "conftest.py").read_text(encoding="utf-8"))
    pytester.makeini("[pytest]\nmarkers =\n    cli: runs command lines\n")
    pytester.makepyfile(test_guarded=GUARDED)
    res = pytester.runpytest_inprocess("-p", "no:randomly", "-p", "no:xdist")
    res.assert_outcomes(passed=6, errors=3)
    errors = "\n".join(line for line in res.outlines if line.startswith("ERROR "))
    for name in ("test_python", "test_shell", "test_fork"):
        assert f"test_guarded.py::{name} " in errors + " ", errors
    assert "started python" in res.stdout.str() and "started os.fork" in res.stdout.str()
