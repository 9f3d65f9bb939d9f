"""Result files written safely: output paths checked before any work, writes atomic.

Every command of ``python -m netmodels`` and ``python -m mpi_exercises`` that writes a
file checks its path with :func:`output_problem` at start-up (before measuring or
simulating) and writes with :func:`write_json` / :func:`write_text`, which never leave an
existing file half-written: the text goes to a temporary file in the same folder, is
flushed to disk, and replaces the target in one ``os.replace``.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def output_problem(path: str | os.PathLike) -> str | None:
    """One line saying why ``path`` cannot be written, or None when it can.

    Checks that the folder exists and is a writable folder, that a file can be created in
    it (an empty temporary file, removed at once: file systems such as /proc refuse what
    their permissions allow), and that the path itself is not a folder and, if it exists,
    is writable.  Nothing is left behind.
    """
    p = Path(path)
    if str(path) == "":
        return "the output path is empty"
    if p.is_dir():
        return f"{path} is a folder, not a file"
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.exists():
        return f"cannot write {path}: folder {folder} does not exist"
    if not folder.is_dir():
        return f"cannot write {path}: {folder} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot write {path}: folder {folder} is not writable"
    if p.exists() and not os.access(p, os.W_OK):
        return f"cannot write {path}: the file is read-only"
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".probe", dir=folder)
    except OSError as exc:
        return f"cannot write {path}: no file can be created in {folder} ({exc.strerror or exc})"
    os.close(fd)
    os.unlink(probe)
    return None


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temporary file, fsync, ``os.replace``).

    On any error (disk full, file-size limit) the temporary file is removed and an
    existing ``path`` is left as it was.
    """
    p = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent or ".")
    except OSError as exc:
        failed = OSError(f"cannot write {path} ({exc.strerror or exc}); the file was left as it was")
        failed.errno = exc.errno
        raise failed from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if p.exists():
            os.chmod(tmp, p.stat().st_mode & 0o777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, p)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError):
            failed = OSError(f"cannot write {path} ({exc.strerror or exc}); the file was left as it was")
            failed.errno = exc.errno
            raise failed from exc
        raise


def _plain(obj):
    """JSON fallback: numpy scalars and arrays as Python numbers and lists."""
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if hasattr(obj, "item"):
        return obj.item()
    return str(obj)


def write_json(path: str | os.PathLike, payload) -> None:
    """Write ``payload`` as indented JSON, atomically (see :func:`write_text`)."""
    write_text(path, json.dumps(payload, indent=1, default=_plain) + "\n")
