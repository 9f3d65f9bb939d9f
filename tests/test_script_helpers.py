"""What the benchmark scripts share: the output path refused before any work
(``OneLineParser.parse_checked``), a result that could not be written as one line and status 1
(``run_script``), and where a result file comes from (``outputs.provenance``)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest

from netmodels.commandline import OneLineParser, run_script
from netmodels.outputs import provenance
from tests.mpirun import ROOT


def parser():
    p = OneLineParser(prog="x.py")
    p.add_argument("--json")
    p.add_argument("--out")
    return p


def test_parse_checked_refuses_an_output_path_before_any_work(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        parser().parse_checked(["--json", str(tmp_path / "missing" / "r.json")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1
    assert err.startswith("x.py: error: --json: cannot write ") and "does not exist" in err
    with pytest.raises(SystemExit):
        parser().parse_checked(["--out", str(tmp_path)], output="out")           # a folder, not a file
    assert "--out: " in capsys.readouterr().err


def test_parse_checked_passes_a_writable_path_and_none(tmp_path):
    assert parser().parse_checked(["--json", str(tmp_path / "r.json")]).json == str(tmp_path / "r.json")
    assert parser().parse_checked([]).json is None
    assert not (tmp_path / "r.json").exists()                 # checked, not written


def test_run_script_turns_an_os_error_into_one_line_and_status_1(capsys):
    def full():
        raise OSError(28, "No space left on device")

    assert run_script(full, "x.py") == 1
    assert capsys.readouterr().err == "x.py: error: [Errno 28] No space left on device\n"
    assert run_script(lambda: 3, "x.py") == 3
    with pytest.raises(ValueError):                          # only a result that could not be written
        run_script(lambda: int("x"), "x.py")


def test_provenance_names_the_command_time_host_and_load():
    before = datetime.now(timezone.utc).replace(microsecond=0)
    p = provenance("/somewhere/benchmarks/scale_sweep.py", ["--json", "a b.json"])
    assert p["generated_by"] == "python benchmarks/scale_sweep.py --json a b.json"
    date = datetime.fromisoformat(p["date"])
    assert date.tzinfo is not None and before <= date <= before + timedelta(minutes=1)
    assert (p["host"], p["cores"]) == (platform.node(), os.cpu_count())
    assert isinstance(p["load_average_1min"], float) and p["load_average_1min"] >= 0
    assert provenance("benchmarks/x.py", [])["generated_by"] == "python benchmarks/x.py"


def test_a_benchmark_writes_its_provenance_and_refuses_a_bad_path(tmp_path):
    out = tmp_path / "r.json"
    run = subprocess.run([sys.executable, "benchmarks/budget_accuracy.py", "--only", "none", "--json", str(out)],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr
    data = json.loads(out.read_text())
    assert data["generated_by"] == f"python benchmarks/budget_accuracy.py --only none --json {out}"
    assert data["rows"] == [] and data["cores"] == os.cpu_count()
    bad = subprocess.run([sys.executable, "benchmarks/budget_accuracy.py", "--json", str(tmp_path / "no" / "r.json")],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--json: cannot write" in bad.stderr
