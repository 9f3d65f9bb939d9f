"""The labs' one loader of data files (mpi_exercises.labdata): the stored files load; a spoiled
file (missing, empty, cut short, not JSON, the wrong kind, a field missing, another lab's file,
the wrong number of ranks) is refused with one message naming the file, the problem and the
command that writes it; every lab reads its files through it; and the command that writes lab 2's
allreduce.json writes what the loader accepts."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from mpi_exercises import allreduce_runs, labdata
from mpi_exercises.labdata import KINDS, LabDataError, load
from tests.mpirun import ROOT

SOURCE = ROOT / "labs" / "source"

#: every data file a lab reads, and its kind (lab 5 reads its calibration inputs for the reference answer)
FILES = {
    ("lab1", "pingpong.json"): "pingpong",
    ("lab2", "testjig.json"): "nbl-testjig",
    ("lab2", "allreduce.json"): "allreduce-runs",
    ("lab3", "logp.json"): "logp",
    ("lab3", "barriers.json"): "barrier-bench",
    ("lab4", "lop.json"): "lop",
    ("lab5", "predict.json"): "predict",
    ("lab5", "pingpong.json"): "pingpong",
    ("lab5", "logp.json"): "logp",
    ("lab5", "timeline.json"): "timeline",
}
#: one file of each kind, in an order in which each is followed by another lab's kind
ONE_PER_KIND = [("lab1", "pingpong.json"), ("lab2", "testjig.json"), ("lab2", "allreduce.json"),
                ("lab3", "logp.json"), ("lab3", "barriers.json"), ("lab4", "lop.json"), ("lab5", "predict.json")]


def stored(lab, name) -> dict:
    return json.loads((SOURCE / lab / name).read_text())


def without_field(data: dict, kind: str) -> dict:
    """``data`` with the last key of the first field the loader requires removed."""
    first = KINDS[kind].fields[0].split(".")
    node = data
    for part in first[:-1]:
        key = part.split("[")[0]
        node = node[key][0] if "[" in part else node[key]
    del node[first[-1].split("[")[0]]
    return data


def spoil(how: str, lab: str, name: str, path: Path) -> str | None:
    """Write the spoiled ``path`` (``how``); return the fragment the message must hold."""
    kind = FILES[lab, name]
    text = (SOURCE / lab / name).read_text()
    if how == "missing":
        return "missing: no such file in the folder the notebook runs in"
    if how == "empty":
        path.write_text("")
        return "empty"
    if how == "truncated":
        path.write_text(text[: len(text) // 2])
        return "cut short"
    if how == "not JSON":
        path.write_text("results: " + text)
        return "not JSON (line 1, column 1"
    if how == "wrong kind":
        path.write_text(json.dumps([1, 2, 3]))
        return "holds a JSON array"
    if how == "missing field":
        path.write_text(json.dumps(without_field(stored(lab, name), kind)))
        return "has no field " + KINDS[kind].fields[0].split(".")[0].replace("[]", "[0]")
    if how == "other lab's file":
        other = ONE_PER_KIND[(ONE_PER_KIND.index((lab, name)) + 1) % len(ONE_PER_KIND)]
        path.write_text((SOURCE / other[0] / other[1]).read_text())
        return "holds a list of runs" if FILES[other] == "allreduce-runs" else "holds the result of `"
    raise AssertionError(how)


SPOILINGS = ("missing", "empty", "truncated", "not JSON", "wrong kind", "missing field", "other lab's file")


@pytest.mark.parametrize("lab, name", list(FILES))
def test_the_stored_files_load(lab, name):
    data = load(SOURCE / lab / name, FILES[lab, name])
    assert isinstance(data, dict) and data


@pytest.mark.parametrize("how", SPOILINGS)
@pytest.mark.parametrize("lab, name", ONE_PER_KIND)
def test_a_spoiled_file_is_named_with_its_problem_and_its_command(tmp_path, monkeypatch, lab, name, how):
    monkeypatch.chdir(tmp_path)
    path = Path(name)                        # as the labs name them: relative to the lab's folder
    fragment = spoil(how, lab, name, tmp_path / name)
    with pytest.raises(LabDataError) as err:
        load(path, FILES[lab, name])
    msg = str(err.value)
    assert msg.startswith(f"{name}: "), msg
    assert fragment in msg, msg
    command = KINDS[FILES[lab, name]].write_with(name)
    assert msg.endswith(f"Write it again, from the lab's folder, with: {command}"), msg
    assert f"--json {name}" in command and "\n" not in msg
    assert str(tmp_path) not in msg and os.sep + "tmp" not in msg     # no folder of the machine that ran it


def test_a_notebook_shows_one_line_without_the_loaders_path(tmp_path):
    """What a student (and a feedback page) sees of a missing file: the message alone, not
    IPython's traceback through labdata.py with this machine's paths."""
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell('from mpi_exercises.labdata import load\n'
                                          'PINGPONG = load("pingpong.json", "pingpong")')]
    NotebookClient(nb, kernel_name="python3", allow_errors=True, timeout=60,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    [out] = [o for o in nb.cells[0].outputs if o.output_type == "error"]
    assert out.ename == "LabDataError"
    assert out.traceback == [f"LabDataError: {out.evalue}"]
    assert out.evalue.startswith("pingpong.json: missing: no such file in the folder the notebook runs in. ")
    assert str(tmp_path) not in out.evalue and "labdata.py" not in out.evalue


def test_a_file_elsewhere_is_named_by_its_path(tmp_path):
    (tmp_path / "pingpong.json").write_text("{")
    with pytest.raises(LabDataError, match=re.escape(f"{tmp_path / 'pingpong.json'}: cut short")) as err:
        load(tmp_path / "pingpong.json", "pingpong")
    assert str(err.value).endswith(f"--json {tmp_path / 'pingpong.json'}")


@pytest.mark.parametrize("lab, name, ranks, want", [
    ("lab1", "pingpong.json", 3, "measured with 3 ranks, but this lab needs exactly 2 (ranks 0 and 1 measure"),
    ("lab1", "pingpong.json", 1, "measured with 1 rank, but this lab needs exactly 2"),
    ("lab3", "logp.json", 4, "measured with 4 ranks, but this lab needs exactly 2"),
    ("lab2", "testjig.json", 2, "measured with 2 ranks, but this lab needs exactly 4 (the centre rank"),
    ("lab4", "lop.json", 4, "measured with 4 ranks, but this lab needs at least 5"),
    ("lab3", "barriers.json", 1, "measured with 1 rank, but this lab needs at least 2"),
])
def test_the_wrong_number_of_ranks_is_refused(tmp_path, lab, name, ranks, want):
    data = stored(lab, name)
    data["environment"]["ranks"] = ranks
    (tmp_path / name).write_text(json.dumps(data))
    with pytest.raises(LabDataError, match=re.escape(want)) as err:
        load(tmp_path / name, FILES[lab, name])
    assert KINDS[FILES[lab, name]].command.split(" --json")[0] in str(err.value)


def test_the_allreduce_runs_are_not_what_bench_allreduce_or_one_run_writes(tmp_path):
    one_run = stored("lab2", "allreduce.json")["runs"][0]
    for data, want in (({"benchmark": "bench-allreduce", "results": []}, "holds the result of `bench-allreduce`"),
                       (one_run, "holds the result of `allreduce`"),
                       ({"runs": [stored("lab3", "logp.json")]}, "runs[0] holds the result of `logp`"),
                       ({"runs": []}, "has no runs to read")):
        (tmp_path / "allreduce.json").write_text(json.dumps(data))
        with pytest.raises(LabDataError, match=re.escape(want)):
            load(tmp_path / "allreduce.json", "allreduce-runs")


def test_other_failures(tmp_path):
    with pytest.raises(LabDataError, match="a folder, not a file"):
        load(tmp_path, "lop")
    (tmp_path / "lop.json").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(LabDataError, match="not a text file"):
        load(tmp_path / "lop.json", "lop")
    with pytest.raises(ValueError, match="kind must be one of"):
        load(tmp_path / "lop.json", "lab4")


# ---------------------------------------------------------------- the labs use it
LOAD_CALL = re.compile(r"""\bload\(\s*["']([\w.]+)["']\s*,\s*["']([\w-]+)["']\s*\)""")


@pytest.mark.parametrize("lab", sorted({lab for lab, _ in FILES}))
def test_every_lab_reads_its_data_files_through_the_loader(lab):
    nb = nbformat.read(SOURCE / lab / f"{lab}.ipynb", as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "json.load" not in code and "read_text(" not in code, f"{lab} reads a file without the loader"
    calls = set(LOAD_CALL.findall(code))
    assert calls == {(name, kind) for (lb, name), kind in FILES.items() if lb == lab}, calls


# ---------------------------------------------------------------- lab 2's allreduce.json
FAKE_MPIEXEC = """#!{python}
# stands in for mpiexec: writes what `python -m mpi_exercises allreduce --json PATH` writes
import json, sys
argv = sys.argv[1:]
if {marker!r} == "hang":
    import time
    time.sleep(120)
if "fail" in {marker!r} and "fence" in argv:
    print("error: the result differs from MPI.Allreduce", file=sys.stderr)
    sys.exit(1)
opt = {{argv[i]: argv[i + 1] for i in range(len(argv) - 1) if argv[i].startswith("-")}}
run = {{"benchmark": "allreduce", "oversubscribed": False,
        "environment": {{"ranks": int(opt["-n"]), "cores": 4, "date": "d", "mpi_library": "m"}},
        "parameters": {{"algorithm": opt["--algorithm"], "N": int(opt["-N"]), "mesh": None,
                       "block": int(opt["--block"]) if "--block" in opt else None}},
        "results": {{"min_s": 1e-3, "median_s": 2e-3}}}}
json.dump(run, open(opt["--json"], "w"))
print(f"allreduce {{opt['--algorithm']}}: correct")
"""


def fake_mpiexec(tmp_path, monkeypatch, marker="ok"):
    fake = tmp_path / "mpiexec"
    fake.write_text(FAKE_MPIEXEC.format(python=sys.executable, marker=marker))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(allreduce_runs, "mpiexec", lambda: str(fake))


def test_allreduce_runs_writes_what_the_lab_loads(tmp_path, monkeypatch):
    fake_mpiexec(tmp_path, monkeypatch)
    lines = []
    out = tmp_path / "allreduce.json"
    assert labdata.measure_allreduce_runs(out, echo=lines.append) == 0
    runs = load(out, "allreduce-runs")["runs"]
    assert [(r["parameters"]["algorithm"], r["parameters"]["block"]) for r in runs] == list(labdata.ALLREDUCE_CASES)
    assert all(r["environment"]["ranks"] == 4 and r["parameters"]["N"] == 100_000 for r in runs)
    assert lines[-1] == f"10 runs written to {out}" and lines[0] == "tree: allreduce tree: correct"
    assert lines[3] == "snake, block 3000: allreduce snake: correct"    # the cases told apart by their block


def test_allreduce_runs_leaves_the_file_alone_when_a_run_fails(tmp_path, monkeypatch, capsys):
    fake_mpiexec(tmp_path, monkeypatch, marker="fail")
    out = tmp_path / "allreduce.json"
    out.write_text("before")
    assert labdata.measure_allreduce_runs(out, echo=lambda line: None) == 1
    err = capsys.readouterr().err.strip()
    assert out.read_text() == "before"
    assert len(err.splitlines()) == 1 and "--algorithm fence" in err and "exited with status 1" in err
    assert "the result differs from MPI.Allreduce" in err and f"{out} was not written" in err


def test_allreduce_runs_stops_a_run_that_hangs(tmp_path, monkeypatch, capsys):
    import psutil

    fake_mpiexec(tmp_path, monkeypatch, marker="hang")
    assert labdata.measure_allreduce_runs(tmp_path / "allreduce.json", timeout=1, echo=lambda line: None) == 1
    err = capsys.readouterr().err
    assert "did not finish within 1 s and was stopped" in err and not (tmp_path / "allreduce.json").exists()
    left = [p for p in psutil.process_iter(["cmdline"]) if str(tmp_path / "mpiexec") in " ".join(p.info["cmdline"] or [])]
    assert not left


@pytest.mark.parametrize("argv, env, status, fragment", [
    (["allreduce-runs", "--ranks", "0"], {}, 2, "integer >= 1"),
    (["allreduce-runs", "--json", "/nonexistent-folder/allreduce.json"], {}, 1, "does not exist"),
    (["allreduce-runs"], {"PMI_RANK": "0", "PMI_SIZE": "4"}, 2, "run it without mpiexec"),
    ([], {}, 2, "required: COMMAND"),
])
def test_the_command_refuses_in_one_line(tmp_path, argv, env, status, fragment):
    res = subprocess.run([sys.executable, "-m", "mpi_exercises.labdata", *argv], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60, env={**os.environ, **env})
    assert res.returncode == status, res
    assert len(res.stderr.strip().splitlines()) == 1 and fragment in res.stderr, res.stderr
    assert not list(tmp_path.iterdir())


@pytest.mark.mpi
@pytest.mark.timeout(120)
def test_allreduce_runs_under_mpi_writes_a_file_the_lab_loads(tmp_path):
    out = tmp_path / "allreduce.json"
    status = labdata.measure_allreduce_runs(out, ranks=2, nelems=64, cases=(("ring", None), ("snake", 16)),
                                            repeat=2, timeout=60, echo=lambda line: None)
    assert status == 0
    runs = load(out, "allreduce-runs")["runs"]
    assert [(r["parameters"]["algorithm"], r["parameters"]["block"], r["environment"]["ranks"]) for r in runs] \
        == [("ring", None, 2), ("snake", 16, 2)]
    assert all(r["correct"] for r in runs)
