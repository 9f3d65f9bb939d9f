"""Result files written safely (output paths checked before any work, writes atomic), and
input files read safely (:func:`read_input`: no link followed, no special file, size bounded).

Every command of ``python -m netmodels`` and ``python -m mpi_exercises`` that writes a
file checks its path with :func:`output_problem` at start-up (before measuring or
simulating) and writes with :func:`write_json` / :func:`write_text`, which never leave an
existing file half-written: the text goes to a temporary file in the same folder, is
flushed to disk, and replaces the target in one ``os.replace``.

A path that exists and is not a regular file is never replaced: a character device
(``/dev/null``, a terminal) or a named pipe (``/dev/stdout`` into a pipe) is written through,
as a shell redirection would; a block device, a socket or anything else is refused.

An interrupted command says what it kept with :func:`interruption`: the files this process
has written stay whole, and an interrupted write leaves the old file as it was.

Every file the kit reads that someone else may have made (a student's hand-in, a calibration,
a submitted notebook) is read with :func:`read_input`: a symbolic link is never followed (a
link to another student's file would be drawn as this student's machine), a named pipe or a
device is never opened (a pipe blocks for ever, ``/dev/zero`` never ends), and more than
:data:`MAX_INPUT_BYTES` is never read.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
import threading
from pathlib import Path

#: the folder the book's commands write to (``--json results/x.json``): made when missing
RESULTS = "results"
#: files written by this process, in order (what an interrupted command kept)
WRITTEN: list[str] = []
#: held while a temporary file exists, from its creation to its ``os.replace``
WRITING = threading.Lock()
#: the temporary file being written (None: no write under way)
_partial: str | None = None


#: what a path that is not a regular file is, in words, by ``stat``'s test of its mode
_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    """What a path of ``mode`` (``os.lstat``'s) is, in words, when it is not a regular file."""
    return next((word for test, word in _KINDS if test(mode)), "not a regular file")


def _special(mode: int) -> str | None:
    """How to write an existing path of ``mode`` (``os.stat``'s): None for a regular file
    (replaced atomically), ``"through"`` for a character device or a named pipe (written
    through), else what it is, in words (refused)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return "through"
    return _kind(mode)


def _existing_mode(path) -> int | None:
    """``os.stat(path).st_mode`` (symbolic links followed), None if nothing is there."""
    try:
        return os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None


def output_problem(path: str | os.PathLike) -> str | None:
    """One line saying why ``path`` cannot be written, or None when it can.

    Checks that the folder exists and is a writable folder, that a file can be created in
    it (an empty temporary file, removed at once: file systems such as /proc refuse what
    their permissions allow), and that the path itself is not a folder and, if it exists,
    is writable.  A character device or a named pipe is written through (only its own
    permission counts); a block device or a socket is refused.  A path the system cannot
    even look at (a name too long, a loop of links) is refused with the system's reason.
    A missing folder named :data:`RESULTS` whose parent is a folder is made (the book's
    commands write there, also outside a clone); any other missing folder is refused.
    No other file is left behind.
    """
    if str(path) == "":
        return "the output path is empty"
    try:
        return _problem(Path(path), path)
    except (OSError, ValueError) as exc:            # a name too long, a loop of links, a NUL byte
        return f"cannot write {path}: {getattr(exc, 'strerror', None) or exc}"


def _problem(p: Path, path) -> str | None:
    mode = _existing_mode(p)
    if mode is not None:
        how = _special(mode)
        if how == "a folder":
            return f"{path} is a folder, not a file"
        if how == "through":
            return None if os.access(p, os.W_OK) else f"cannot write {path}: it is not writable"
        if how is not None:
            return f"{path} is {how}, not a file: a result is never written there"
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.exists() and folder.name == RESULTS and folder.parent.is_dir():
        try:                                        # the kit's own folder for results: made
            folder.mkdir()
        except FileExistsError:                     # another rank or command made it meanwhile
            pass
        except OSError as exc:
            return f"cannot write {path}: folder {folder} cannot be made ({exc.strerror or exc})"
    if not folder.exists():
        return f"cannot write {path}: folder {folder} does not exist"
    if not folder.is_dir():
        return f"cannot write {path}: {folder} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot write {path}: folder {folder} is not writable"
    if mode is not None and not os.access(p, os.W_OK):
        return f"cannot write {path}: the file is read-only"
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".probe", dir=folder)
    except OSError as exc:
        return f"cannot write {path}: no file can be created in {folder} ({exc.strerror or exc})"
    os.close(fd)
    os.unlink(probe)
    return None


def _failed(path, exc: OSError) -> OSError:
    failed = OSError(f"cannot write {path} ({exc.strerror or exc}); the file was left as it was")
    failed.errno = exc.errno
    return failed


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temporary file, fsync, ``os.replace``).

    On any error (disk full, file-size limit) the temporary file is removed and an
    existing ``path`` is left as it was.  An existing character device or named pipe is
    written through instead (never replaced); any other path that is not a regular file
    is refused (OSError).
    """
    global _partial
    p = Path(path)
    try:
        how = _special(mode) if (mode := _existing_mode(p)) is not None else None
    except (OSError, ValueError) as exc:
        raise _failed(path, OSError(str(exc)) if isinstance(exc, ValueError) else exc) from exc
    if how == "through":
        try:
            with open(p, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise _failed(path, exc) from exc
        WRITTEN.append(str(path))
        return
    if how is not None:
        raise OSError(f"cannot write {path}: it is {how}, not a file; nothing was written")
    with WRITING:
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent or ".")
        except OSError as exc:
            raise _failed(path, exc) from exc
        _partial = tmp
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            if mode is not None:
                os.chmod(tmp, mode & 0o777)
            else:
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(tmp, 0o666 & ~umask)
            os.replace(tmp, p)
            WRITTEN.append(str(path))
        except BaseException as exc:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            if isinstance(exc, OSError):
                raise _failed(path, exc) from exc
            raise
        finally:
            _partial = None


def discard_partial() -> None:
    """Remove the temporary file of a write under way, if any (a process about to end
    without unwinding, e.g. on Ctrl-C: the file it was to replace stays as it was)."""
    tmp = _partial
    if tmp is not None:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def interruption(path: str | os.PathLike | None) -> str:
    """What an interrupted command kept, in words (no newline): the files this process wrote
    (:data:`WRITTEN`), else whether ``path`` (its result file, None: none asked for) was left
    as it was or not created."""
    if WRITTEN:
        return f"results written to {', '.join(dict.fromkeys(WRITTEN))} are kept"
    if path is None:
        return "no result file was asked for"
    try:
        exists = os.path.lexists(path)
    except (OSError, ValueError):
        exists = False
    return (f"nothing was written: {path} was left as it was" if exists
            else f"nothing was written ({path} was not created)")


def provenance(script: str | os.PathLike, argv=None) -> dict:
    """Where a result file comes from, as its JSON's first fields: the command that wrote it
    (``generated_by``: ``python FOLDER/SCRIPT ARGS``, ``argv`` default ``sys.argv[1:]``), when
    (``date``, UTC), on which ``host``, its ``cores`` and its 1-minute load average."""
    import platform
    import sys
    from datetime import datetime, timezone

    path = Path(script)
    args = sys.argv[1:] if argv is None else list(argv)
    return {"generated_by": " ".join(["python", f"{path.parent.name}/{path.name}", *args]),
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "host": platform.node(),
            "cores": os.cpu_count(), "load_average_1min": os.getloadavg()[0]}


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


# ---------------------------------------------------------------- reading what others made
#: the most bytes :func:`read_input` reads (64 MiB): the kit's records are far smaller (a
#: ping-pong keeping each of its 24 000 samples: 0.35 MB; with 100 times the samples, 35 MB)
MAX_INPUT_BYTES = 64 * 2**20


class Refused(ValueError):
    """An input file :func:`read_input` does not read: ``path``, and ``why`` in words."""

    def __init__(self, path, why: str):
        super().__init__(f"{path}: {why}")
        self.path, self.why = path, why


def _size(n: int) -> str:
    return f"{n:,} bytes" + (f" ({n / 2**20:,.0f} MiB)" if n >= 2**20 else "")


def read_input(path: str | os.PathLike, limit: int = MAX_INPUT_BYTES, *, root=None) -> bytes:
    """The bytes of the regular file ``path``, read without following a link and without
    blocking.  :class:`Refused` (one line: the file, and why) if it is a symbolic link, a
    folder, a named pipe, a device or a socket, or holds more than ``limit`` bytes; with
    ``root`` (a folder ``path`` lies in, trusted), also if a folder between ``root`` and the
    file is a link (a hand-in's folder linked to another student's).  A file that is missing
    or that the system refuses raises the system's OSError, naming ``path``."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ValueError(f"limit must be a whole number of bytes >= 0, got {limit!r}")
    p = Path(path)
    parts = [p.name] if root is None else list(p.relative_to(root).parts)   # ValueError: not in root
    if not parts or not parts[-1] or ".." in parts:
        raise ValueError(f"path must name a file{'' if root is None else f' inside root {root}'}, got {path}")
    try:
        folder = os.open(p.parent if root is None else root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise type(exc)(exc.errno, exc.strerror, str(path)) from None
    try:
        for part in parts[:-1]:
            try:
                inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    what = _kind(os.stat(part, dir_fd=folder, follow_symlinks=False).st_mode)
                    raise Refused(path, f"a folder on its path is {what}, not a folder (a link is never "
                                        "followed)") from None
                raise
            os.close(folder)
            folder = inner
        return _read_regular(path, parts[-1], folder, limit)
    except OSError as exc:
        raise type(exc)(exc.errno, exc.strerror, str(path)) from None
    finally:
        os.close(folder)


def _read_regular(path, name: str, folder: int, limit: int) -> bytes:
    """:func:`read_input`'s last step: the file ``name`` of the open folder ``folder``."""
    seen = os.stat(name, dir_fd=folder, follow_symlinks=False)
    if not stat.S_ISREG(seen.st_mode):            # refused before it is opened: a pipe would block
        link = " (a link is never followed)" if stat.S_ISLNK(seen.st_mode) else ""
        raise Refused(path, f"{_kind(seen.st_mode)}, not a file{link}")
    if seen.st_size > limit:
        raise Refused(path, f"too large: {_size(seen.st_size)}, more than the {_size(limit)} an input file may hold")
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (seen.st_dev, seen.st_ino) or not stat.S_ISREG(now.st_mode):
            raise Refused(path, "replaced while it was opened")
        chunks, total = [], 0
        while chunk := os.read(fd, min(limit + 1 - total, 1 << 20) or 1):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:                     # grown since it was looked at
                raise Refused(path, f"too large: more than the {_size(limit)} an input file may hold")
        return b"".join(chunks)
    finally:
        os.close(fd)
