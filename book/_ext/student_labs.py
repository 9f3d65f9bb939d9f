"""What a course hands out, built with the book: the student version of every lab, and the kit.

A local Sphinx extension (``_config.yml``: ``sphinx.local_extensions``).  When the builder
starts (``builder-inited``) it releases every lab of the nbgrader course ``labs/`` with
nbgrader's own ``generate_assignment`` -- what ``make release`` runs: solutions replaced by
``YOUR CODE HERE``, hidden tests removed, outputs cleared, the lab's data files copied -- adds a
``README.md`` (how to install the kit, where the lab's commands are, what to hand in) and zips
each student folder into ``_build/student-labs/<lab>.zip`` (git-ignored), which the lab pages
of the book offer with the ``{download}`` role.  It also loads ``kit_wheel`` (next to this
file), which builds the kit's wheel that the page "Install the kit" offers.

The course is ``labs/`` of the book's root, or the folder named by the Sphinx option
``student_labs_course`` or the environment variable ``STUDENT_LABS_COURSE`` (an instructor's
private copy).  nbgrader runs in a child process on a temporary copy of the course (its
configuration and ``source/``), so the course's own ``release/`` and ``gradebook.db`` are never
touched and no gradebook is written.  The zips depend only on their sources (sorted entries,
each dated the last commit that changed them: :func:`zip_time`); a digest of the course's
sources, this file, the wheel's name and nbgrader's version is stored next to them, and a build whose digest matches reuses them (about 7 s saved).

    python book/_ext/student_labs.py [COURSE] [OUT]   (the child process; defaults labs, _build/student-labs)
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import zipfile
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kit_wheel  # noqa: E402 (next to this file)

#: the course's files that nbgrader reads to release a lab (besides source/)
COURSE_FILES = ("nbgrader_config.py", "grading_preprocessors.py")
OUT = Path("_build") / "student-labs"
DIGEST = "sources.sha256"


def labs(course: Path) -> list[str]:
    """The labs of ``course``: every folder of ``source/`` that holds a notebook."""
    return sorted({p.parent.name for p in (course / "source").glob("*/*.ipynb")})


def _source_files(course: Path) -> list[Path]:
    files = [course / name for name in COURSE_FILES if (course / name).is_file()]
    files += [p for p in sorted((course / "source").rglob("*"))
              if p.is_file() and ".ipynb_checkpoints" not in p.parts and "__pycache__" not in p.parts]
    return files


def zip_time(course: Path) -> tuple[int, int, int, int, int, int]:
    """The one timestamp of every zip entry (UTC), so that a zip depends on its sources only:
    ``SOURCE_DATE_EPOCH`` if set (the reproducible-builds convention), else the date of the last
    commit that changed the course's sources (``source/`` and :data:`COURSE_FILES`), else the
    newest of its source files' times: a date a file manager shows as the lab's last change, not
    a fixed 2000-01-01 ("26 years ago")."""
    epoch = kit_wheel.source_epoch(course, ["source", *COURSE_FILES], _source_files(course))
    when = time.gmtime(epoch)     # a zip entry holds 1980-01-01 to 2107-12-31, in two-second steps
    return (when.tm_year, when.tm_mon, when.tm_mday, when.tm_hour, when.tm_min, when.tm_sec - when.tm_sec % 2)


def digest(course: Path) -> str:
    """SHA-256 of the course's sources, their date (:func:`zip_time`), this generator and
    nbgrader's version."""
    h = hashlib.sha256(metadata.version("nbgrader").encode() + repr(zip_time(course)).encode())
    h.update(Path(__file__).read_bytes() + kit_wheel.wheel_name().encode())
    for path in _source_files(course):
        h.update(path.relative_to(course).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def write_zip(folder: Path, dest: Path, when: tuple) -> None:
    """Zip ``folder`` as ``<folder name>/...`` into ``dest`` (written whole, then renamed), every
    entry dated ``when`` (a ``ZipInfo.date_time``)."""
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(f"{folder.name}/{path.relative_to(folder).as_posix()}", when)
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
    zips, when = [], zip_time(course)
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
            folder = copy / "release" / lab
            hand_in = [f"{lab}.ipynb", *config.Autograde.get("exclude_overwriting", {}).get(lab, [])]
            (folder / "README.md").write_text(readme(lab, folder, hand_in), encoding="utf-8")
            zips.append(out / f"{lab}.zip")
            write_zip(folder, zips[-1], when)
    return zips


def readme(lab: str, folder: Path, hand_in: list[str]) -> str:
    """The zip's ``README.md``: the lab's title, how to install the kit, the commands that write
    its data files (:meth:`mpi_exercises.labspec.Lab.commands`), what to hand in.

    ``hand_in``: the notebook, then the lab's data files (``Autograde.exclude_overwriting``).
    """
    import nbformat

    nb = nbformat.read(folder / f"{lab}.ipynb", as_version=4)
    heading = next((c.source.splitlines()[0] for c in nb.cells
                    if c.cell_type == "markdown" and c.source.startswith("# ")), f"# {lab}")
    title = heading[2:].strip()
    wheel = kit_wheel.wheel_name()
    notebook, data = hand_in[0], hand_in[1:]
    from mpi_exercises.labspec import LABS   # the command that writes each data file, declared once

    spec = LABS.get(lab)
    commands = spec.commands() if spec is not None else []
    placeholders = any("<" in c or re.search(r"\b[A-Z]{3,}\b", c) for c in commands)   # <cores>, ALGORITHM
    if data:
        handed = (f"`{notebook}` and your own " + ", ".join(f"`{d}`" for d in data)
                  + " (the copies in this zip are the course's reference measurements: replace them by yours)")
    else:
        handed = f"`{notebook}` (this lab has no data files)"
    return "\n".join([
        f"# {title}",
        "",
        *textwrap.wrap(f"The student version of the lab: the notebook `{notebook}` and its data files. "
                       f'The course book\'s page "{title}" says what the lab is about, the commands '
                       "to run and how many MPI ranks they need.", 96),
        "",
        "## 1. Install the course kit (once)",
        "",
        'The course book\'s page "Install the kit" offers the kit, a file',
        f"`{wheel}`, with the commands for Linux, macOS and Windows.",
        "You do not need the course's repository. On Linux or macOS, with Python 3.11 or newer:",
        "",
        "```bash",
        "python3 -m venv ~/netmodels-venv",
        "source ~/netmodels-venv/bin/activate",
        f"python -m pip install ~/Downloads/{wheel}",
        "```",
        "",
        "## 2. Work on the lab",
        "",
        *(textwrap.wrap("From this folder, with that environment active, measure your own data files "
                        "(the lab's page says why and how many ranks"
                        + (", and what to put in place of the words in capitals or in <>" if placeholders else "")
                        + "), then open the notebook:", 96) if commands else
          ["From this folder, with that environment active (this lab measures nothing):"]),
        "",
        "```bash",
        *commands,
        f"jupyter lab {notebook}",
        "```",
        "",
        "## 3. Hand in",
        "",
        *textwrap.wrap(f"This folder with {handed}. Keep the notebook's name, `{notebook}`: grading "
                       "looks for that file only (a copy saved under another name scores nothing).", 96),
        "",
    ])


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
    app.setup_extension("kit_wheel")   # the kit's wheel, offered by the page "Install the kit"
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
