"""The student version of every lab, built with the book.

A local Sphinx extension (``_config.yml``: ``sphinx.local_extensions``).  When the builder
starts (``builder-inited``) it releases every lab of the nbgrader course ``labs/`` with
nbgrader's own ``generate_assignment`` -- what ``make release`` runs: solutions replaced by
``YOUR CODE HERE``, hidden tests removed, outputs cleared, the lab's data files copied -- and
zips each student folder into ``_build/student-labs/<lab>.zip`` (git-ignored), which the lab
pages of the book offer with the ``{download}`` role.

The course is ``labs/`` of the book's root, or the folder named by the Sphinx option
``student_labs_course`` or the environment variable ``STUDENT_LABS_COURSE`` (an instructor's
private copy).  nbgrader runs in a child process on a temporary copy of the course (its
configuration and ``source/``), so the course's own ``release/`` and ``gradebook.db`` are never
touched and no gradebook is written.  The zips depend only on their sources (fixed timestamps,
sorted entries); a digest of the course's sources, this file and nbgrader's version is stored
next to them, and a build whose digest matches reuses them (about 7 s saved).

    python book/_ext/student_labs.py [COURSE] [OUT]   (the child process; defaults labs, _build/student-labs)
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from importlib import metadata
from pathlib import Path

#: the course's files that nbgrader reads to release a lab (besides source/)
COURSE_FILES = ("nbgrader_config.py", "grading_preprocessors.py")
OUT = Path("_build") / "student-labs"
DIGEST = "sources.sha256"
#: a fixed timestamp for every zip entry, so that a zip depends on its content only
ZIP_TIME = (2000, 1, 1, 0, 0, 0)


def labs(course: Path) -> list[str]:
    """The labs of ``course``: every folder of ``source/`` that holds a notebook."""
    return sorted({p.parent.name for p in (course / "source").glob("*/*.ipynb")})


def _source_files(course: Path) -> list[Path]:
    files = [course / name for name in COURSE_FILES if (course / name).is_file()]
    files += [p for p in sorted((course / "source").rglob("*"))
              if p.is_file() and ".ipynb_checkpoints" not in p.parts and "__pycache__" not in p.parts]
    return files


def digest(course: Path) -> str:
    """SHA-256 of the course's sources, this generator and nbgrader's version."""
    h = hashlib.sha256(metadata.version("nbgrader").encode())
    h.update(Path(__file__).read_bytes())
    for path in _source_files(course):
        h.update(path.relative_to(course).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def write_zip(folder: Path, dest: Path) -> None:
    """Zip ``folder`` as ``<folder name>/...`` into ``dest`` (written whole, then renamed)."""
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(f"{folder.name}/{path.relative_to(folder).as_posix()}", ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, path.read_bytes())
    os.replace(tmp, dest)


def release(course: Path, out: Path) -> list[Path]:
    """Release every lab of ``course`` with nbgrader into ``out/<lab>.zip``; return the zips.

    Runs nbgrader in this process: call it in a child process (``main``), not inside Sphinx.
    """
    from nbgrader.apps import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    out.mkdir(parents=True, exist_ok=True)
    zips = []
    with tempfile.TemporaryDirectory(prefix="student-labs-") as tmp:
        copy = Path(tmp) / "course"
        copy.mkdir()
        for name in COURSE_FILES:
            if (course / name).is_file():
                shutil.copy2(course / name, copy / name)
        shutil.copytree(course / "source", copy / "source",
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        config = PyFileConfigLoader("nbgrader_config.py", path=str(copy)).load_config()
        config.CourseDirectory.root = str(copy)
        config.GenerateAssignment.no_database = True   # the same student version, no gradebook
        config.SaveCells.enabled = False
        api = NbGraderAPI(config=config)
        for lab in labs(copy):
            result = api.generate_assignment(lab, force=True, create=False)
            if not result["success"]:
                raise RuntimeError(f"nbgrader generate_assignment {lab} failed:\n"
                                   f"{result.get('log', '')}\n{result.get('error', '')}")
            zips.append(out / f"{lab}.zip")
            write_zip(copy / "release" / lab, zips[-1])
    return zips


def up_to_date(course: Path, out: Path) -> bool:
    stored = out / DIGEST
    return (stored.is_file() and stored.read_text().strip() == digest(course)
            and all((out / f"{lab}.zip").is_file() for lab in labs(course)))


def main(argv: list[str]) -> int:
    course = Path(argv[0] if argv else "labs").resolve()
    out = Path(argv[1] if len(argv) > 1 else OUT).resolve()
    before = digest(course)
    zips = release(course, out)
    if digest(course) == before:   # the sources did not change meanwhile
        tmp = out / f".{DIGEST}.{os.getpid()}.tmp"
        tmp.write_text(before + "\n")
        os.replace(tmp, out / DIGEST)
    print(" ".join(z.name for z in zips))
    return 0


# -- Sphinx ---------------------------------------------------------------------------------
def build_student_labs(app) -> None:
    from sphinx.errors import ExtensionError
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    root = Path(app.srcdir)
    course = root / (os.environ.get("STUDENT_LABS_COURSE") or app.config.student_labs_course)
    out = root / OUT
    if not (course / "source").is_dir():
        raise ExtensionError(f"student_labs: no nbgrader course (source/) at {course}: set "
                             "student_labs_course in _config.yml or STUDENT_LABS_COURSE")
    if up_to_date(course, out):
        logger.info("student labs: up to date in %s", out)
        return
    logger.info("student labs: nbgrader generate_assignment for %s ...", ", ".join(labs(course)))
    t0 = time.monotonic()
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    res = subprocess.run([sys.executable, __file__, str(course), str(out)], cwd=root, env=env,
                         capture_output=True, text=True, timeout=600)
    if res.returncode != 0:
        raise ExtensionError(f"student_labs: releasing the labs failed (exit {res.returncode}):\n"
                             f"{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
    logger.info("student labs: %s in %s (%.1f s)", res.stdout.strip(), out, time.monotonic() - t0)


def setup(app) -> dict:
    # the nbgrader course, relative to the book's root (an instructor's private copy elsewhere:
    # STUDENT_LABS_COURSE=/path/to/course make book)
    app.add_config_value("student_labs_course", "labs", "env", [str])
    app.connect("builder-inited", build_student_labs)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
