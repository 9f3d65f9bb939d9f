"""The kit's wheel, built with the book: what a student installs (page "Install the kit").

Loaded by ``student_labs`` (the book's extension for what a course hands out).  When the
builder starts, it builds ``_build/kit/course_kit_netmodels-<version>-py3-none-any.whl``
(git-ignored) with setuptools, through ``pip wheel --no-deps``, from a temporary folder that
holds ``pyproject.toml`` and the two packages ``netmodels/`` and ``mpi_exercises/`` and
nothing else: no ``labs/`` (solutions, hidden tests), ``book/`` or ``tests/`` can end up in it.
The page ``book/install.md`` offers it with the ``{download}`` role.  Its dependencies are
those of ``pyproject.toml`` (requirements.txt's pins; nbgrader only in the ``instructor``
extra).  Every file of the wheel is dated the last commit that changed its sources
(:func:`source_epoch`: ``SOURCE_DATE_EPOCH`` if set), so the wheel depends on its sources only
and JupyterLab shows the kit's own date, not 2000-01-01; a digest of the sources is kept next to
it and a build whose digest matches reuses it.

    python book/_ext/kit_wheel.py [OUT]      # build it (default _build/kit), print its path
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: what goes into the wheel: the project file and the two packages (``pyproject.toml`` says so too)
PACKAGES = ("netmodels", "mpi_exercises")
OUT = Path("_build") / "kit"
DIGEST = "sources.sha256"
#: the range of dates a zip entry holds (1980-01-01 to 2107-12-31), in seconds since 1970
ZIP_EPOCHS = (315532800, 4354819198)
_SKIP = ("__pycache__", "*.pyc", ".ipynb_checkpoints")


def wheel_name(root: Path = ROOT) -> str:
    """The wheel's file name, from the name and version of ``root/pyproject.toml``."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    name = project["name"].replace("-", "_")
    return f"{name}-{project['version']}-py3-none-any.whl"


def source_epoch(cwd: Path, paths: list[str], files: list[Path]) -> int:
    """The one date (seconds since 1970, UTC) of every entry of a wheel or zip built from
    ``files``: ``SOURCE_DATE_EPOCH`` if set (the reproducible-builds convention), else the date
    of the last commit that changed ``paths`` (relative to ``cwd``), else the newest of the
    files' times; clipped to the dates a zip entry holds (:data:`ZIP_EPOCHS`)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not epoch.isdigit():
        try:
            epoch = subprocess.run(["git", "log", "-1", "--format=%ct", "--", *paths], cwd=cwd,
                                   capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            epoch = ""
    if not epoch.isdigit():
        epoch = str(int(max((p.stat().st_mtime for p in files), default=0)))
    return min(max(int(epoch), ZIP_EPOCHS[0]), ZIP_EPOCHS[1])


def wheel_epoch(root: Path = ROOT) -> int:
    """The date of every file of the wheel of ``root`` (:func:`source_epoch` of its sources)."""
    return source_epoch(root, ["pyproject.toml", *PACKAGES], _sources(root))


def _sources(root: Path) -> list[Path]:
    files = [root / "pyproject.toml"]
    for package in PACKAGES:
        files += [p for p in sorted((root / package).rglob("*"))
                  if p.is_file() and "__pycache__" not in p.parts and ".ipynb_checkpoints" not in p.parts
                  and p.suffix != ".pyc"]
    return files


def digest(root: Path = ROOT) -> str:
    """SHA-256 of what the wheel is built from, its date and this builder."""
    h = hashlib.sha256(Path(__file__).read_bytes() + str(wheel_epoch(root)).encode())
    for path in _sources(root):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def up_to_date(root: Path, out: Path) -> bool:
    stored = out / DIGEST
    return ((out / wheel_name(root)).is_file() and stored.is_file()
            and stored.read_text().strip() == digest(root))


def build(root: Path = ROOT, out: Path | None = None) -> Path:
    """Build the wheel of ``root`` into ``out`` (default ``root/_build/kit``); return its path."""
    out = Path(out) if out is not None else root / OUT
    out.mkdir(parents=True, exist_ok=True)
    before = digest(root)
    with tempfile.TemporaryDirectory(prefix="kit-wheel-") as tmp:
        src, dist = Path(tmp) / "src", Path(tmp) / "dist"
        src.mkdir()
        shutil.copy2(root / "pyproject.toml", src / "pyproject.toml")
        for package in PACKAGES:
            shutil.copytree(root / package, src / package, ignore=shutil.ignore_patterns(*_SKIP))
        env = dict(os.environ, SOURCE_DATE_EPOCH=str(wheel_epoch(root)), PIP_DISABLE_PIP_VERSION_CHECK="1")
        res = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir",
                              str(dist), str(src)], env=env, capture_output=True, text=True, timeout=600)
        if res.returncode != 0:
            raise RuntimeError(f"pip wheel failed (exit {res.returncode}):\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
        built = dist / wheel_name(root)
        if not built.is_file():
            raise RuntimeError(f"pip wheel made {sorted(p.name for p in dist.iterdir())}, not {built.name}")
        dest = out / built.name
        tmp_dest = out / f".{built.name}.{os.getpid()}.tmp"
        shutil.copyfile(built, tmp_dest)
        os.replace(tmp_dest, dest)
    if digest(root) == before:   # the sources did not change meanwhile
        tmp_digest = out / f".{DIGEST}.{os.getpid()}.tmp"
        tmp_digest.write_text(before + "\n")
        os.replace(tmp_digest, out / DIGEST)
    return dest


# -- Sphinx ---------------------------------------------------------------------------------
def build_kit_wheel(app) -> None:
    import time

    from sphinx.errors import ExtensionError
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    root, out = Path(app.srcdir), Path(app.srcdir) / OUT
    if up_to_date(root, out):
        logger.info("kit wheel: up to date in %s", out)
        return
    t0 = time.monotonic()
    try:
        path = build(root, out)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        raise ExtensionError(f"kit_wheel: building the kit's wheel failed: {exc}") from exc
    logger.info("kit wheel: %s (%.1f s)", path, time.monotonic() - t0)


def setup(app) -> dict:
    app.connect("builder-inited", build_kit_wheel)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    print(build(ROOT, Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else None))
