"""The kit's ``mpi_exercises`` package as git holds it at another revision, imported beside this
tree's (for benchmarks that time both in one interleaved run)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def has_package(rev: str) -> bool:
    """Whether git knows ``rev`` and it holds ``mpi_exercises/executor.py``."""
    try:
        res = subprocess.run(["git", "cat-file", "-e", f"{rev}:mpi_exercises/executor.py"], cwd=ROOT,
                             capture_output=True)
    except OSError:
        return False
    return res.returncode == 0


def package_at(rev: str, where: str):
    """``mpi_exercises`` at git revision ``rev``, unpacked under the folder ``where`` and imported
    as ``mpi_exercises_<rev>`` (its imports of itself are relative; ``netmodels`` is this tree's),
    or None if git has no such revision."""
    if not has_package(rev):
        return None
    res = subprocess.run(["git", "archive", rev, "mpi_exercises"], cwd=ROOT, capture_output=True)
    if res.returncode != 0:
        return None
    name = "mpi_exercises_" + "".join(c if c.isalnum() else "_" for c in rev)
    with tarfile.open(fileobj=BytesIO(res.stdout)) as tar:
        tar.extractall(where, filter="data")
    os.rename(os.path.join(where, "mpi_exercises"), os.path.join(where, name))
    sys.path.insert(0, where)
    return importlib.import_module(name)
