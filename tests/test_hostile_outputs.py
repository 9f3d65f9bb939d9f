"""Result paths that are not ordinary files: a device node, a named pipe, a socket, a name
too long for the system.  A device or a pipe is written through and stays what it was (as
root, ``--json /dev/null`` must never replace the system's /dev/null with a file); anything
else is refused in one line.  The device node is made with ``os.mknod`` in a temporary
folder, never the real /dev/null."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading

import pytest

from netmodels import outputs
from tests.mpirun import ROOT, run_mpi

LONG = "a" * 300 + ".json"      #: a file name longer than any file system takes (255 bytes)


@pytest.fixture
def null_device(tmp_path):
    """A character device 1,3 (what /dev/null is) in ``tmp_path``."""
    node = tmp_path / "null"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, AttributeError, OSError) as exc:
        pytest.skip(f"no device node can be made here ({exc}): os.mknod needs root (CAP_MKNOD)")
    return node


def _is_null_device(path) -> bool:
    st = os.stat(path)
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)


def test_a_device_is_written_through_not_replaced(null_device):
    assert outputs.output_problem(null_device) is None
    outputs.write_json(null_device, {"a": 1})
    assert _is_null_device(null_device)
    assert sorted(p.name for p in null_device.parent.iterdir()) == ["null"]      # no temporary file left


def test_a_named_pipe_is_written_through(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    outputs.write_json(fifo, {"a": 1})
    reader.join(timeout=10)
    assert json.loads(got[0]) == {"a": 1}
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_socket_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        assert "is a socket, not a file" in outputs.output_problem(path)
        with pytest.raises(OSError, match="it is a socket, not a file"):
            outputs.write_json(path, {"a": 1})
        assert stat.S_ISSOCK(os.stat(path).st_mode)


def test_a_name_too_long_is_one_line_not_an_exception(tmp_path):
    assert outputs.output_problem(tmp_path / LONG) == f"cannot write {tmp_path / LONG}: File name too long"
    with pytest.raises(OSError, match="cannot write .*File name too long"):
        outputs.write_json(tmp_path / LONG, {"a": 1})


def test_an_interruption_says_what_was_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(outputs, "WRITTEN", [])
    old = tmp_path / "old.json"
    old.write_text("{}")
    assert outputs.interruption(old) == f"nothing was written: {old} was left as it was"
    assert outputs.interruption(tmp_path / "new.json") == f"nothing was written ({tmp_path / 'new.json'} was not created)"
    assert outputs.interruption(None) == "no result file was asked for"
    outputs.write_json(old, {"a": 1})
    assert outputs.interruption(old) == f"results written to {old} are kept"


@pytest.mark.cli
def test_netmodels_writes_through_a_device(null_device):
    res = subprocess.run([sys.executable, "-m", "netmodels", "simulate", "allreduce.ring", "-P", "8", "--model",
                          "logp", "--json", str(null_device)], capture_output=True, text=True, cwd=ROOT, timeout=30)
    assert res.returncode == 0, res.stderr
    assert _is_null_device(null_device)


@pytest.mark.cli
def test_netmodels_refuses_a_name_too_long_in_one_line(tmp_path):
    res = subprocess.run([sys.executable, "-m", "netmodels", "simulate", "allreduce.ring", "-P", "8", "--model",
                          "logp", "--json", str(tmp_path / LONG)], capture_output=True, text=True, cwd=ROOT,
                         timeout=30)
    lines = res.stderr.splitlines()
    assert res.returncode == 2 and len(lines) == 1 and "File name too long" in lines[0], res.stderr


@pytest.mark.mpi
def test_mpi_exercises_writes_through_a_device(null_device):
    res = run_mpi(2, ["-m", "mpi_exercises", "info", "--json", str(null_device)], timeout=30)
    assert res.returncode == 0, res.stderr
    assert _is_null_device(null_device)


def test_the_results_folder_is_made_any_other_missing_folder_refused(tmp_path):
    """The book's commands write ``--json results/x.json`` (also outside a clone): the folder
    ``results`` is made when its parent exists; a missing folder of any other name, or a
    ``results`` whose parent is missing, is refused and nothing is made."""
    assert outputs.output_problem(tmp_path / "results" / "x.json") is None
    assert (tmp_path / "results").is_dir()
    assert "folder" in outputs.output_problem(tmp_path / "other" / "x.json")
    assert "does not exist" in outputs.output_problem(tmp_path / "a" / "results" / "x.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]


def test_a_chapter_command_outside_a_clone_makes_results(tmp_path):
    """Replayed as a reader runs it: in an empty folder, ``--json results/info.json``."""
    run = subprocess.run([sys.executable, "-m", "mpi_exercises", "info", "--json", "results/info.json"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr
    assert json.loads((tmp_path / "results" / "info.json").read_text())
