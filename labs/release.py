"""Release labs: the student versions in ``release/<lab>/``, solutions replaced by
``# YOUR CODE HERE``, hidden tests removed, outputs cleared, each lab entered in the gradebook
(what ``nbgrader generate_assignment LAB --force`` does), every lab in one process.

    python labs/release.py                  # every lab of labs/source/ (what `make release` runs)
    python labs/release.py --lab lab1       # that lab only (repeatable; `make release LAB=lab1`)

One nbgrader for all the labs: its start-up (about 2 s) is paid once, not once per lab.  A lab
is released only with a reference copy of each data file it declares
(:data:`mpi_exercises.labspec.LABS`) in its source folder: its notebook reads them.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from grade import course_config, course_folder, lab_names  # noqa: E402 (next to this file)
from mpi_exercises.labspec import LABS  # noqa: E402 (each lab's data files, declared once)


def missing_data_files(course: Path, lab: str) -> list[str]:
    """The data files ``lab`` declares that its source folder lacks (none for an undeclared lab)."""
    declared = LABS[lab].data_files if lab in LABS else []
    return [name for name in declared if not (course / "source" / lab / name).is_file()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python labs/release.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--course", type=Path, default=HERE, help="course folder (default: %(default)s)")
    parser.add_argument("--lab", action="append", help="release only this lab (repeatable; default: all)")
    args = parser.parse_args(argv)
    course = course_folder(parser, args.course)
    labs = lab_names(course)
    for lab in args.lab or []:
        if lab not in labs:
            parser.error(f"no lab {lab!r} in {course / 'source'} (labs: {' '.join(labs)})")
    for lab in args.lab or labs:
        missing = missing_data_files(course, lab)
        if missing:
            sys.exit(f"release.py: {course / 'source' / lab} lacks {', '.join(missing)}: the reference copy of "
                     f"each data file {lab} declares (mpi_exercises/labspec.py), which its notebook reads")
    # nbgrader runs `alembic` (a console script next to this Python) when it creates a gradebook
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    from nbgrader.apps import NbGraderAPI

    config = course_config(course)
    config.CourseDirectory.root = str(course)
    api = NbGraderAPI(config=config)
    for lab in args.lab or labs:
        print(f"Releasing {lab} ...", flush=True)
        result = api.generate_assignment(lab, force=True)
        if not result["success"]:
            sys.exit(f"release.py: nbgrader generate_assignment {lab} failed:\n{result.get('log', '')}\n"
                     f"{result.get('error', '')}")
    print(f"Student versions: {course / 'release'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
