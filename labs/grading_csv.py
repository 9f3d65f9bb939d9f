"""``grades.csv``: one row per student and lab, and what its ``data`` and ``flags`` columns say.

``data`` (:func:`data_status`): per data file of the lab, the student's own, the same as another
student's (:func:`same_data`), the reference copy released with the lab, missing, or refused.
``flags`` (:func:`flags`): what the instructor should read in a graded notebook: tampering, suspect
code, data measured on a busy machine and the tests such data could not pass.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import nbformat


class Lab(Protocol):
    """What the rows need of a lab (``grade.Lab`` is one): its name and its students' data files."""

    name: str
    data_files: list[str]

FIELDS = ["student", "lab", "status", "data", "sandbox", "flags", "auto_score", "auto_max", "score",
          "max_score", "manual_pending"]


@dataclass
class Outcome:
    """What happened to one (student, lab) submission."""

    status: str
    data: str = ""
    sandbox: str = ""


def column(lab, notebook: str, grade_id: str) -> str:
    """The CSV column of a graded cell: its ``grade_id`` (with its notebook where a lab has several)."""
    return grade_id if len(lab.notebooks) == 1 else f"{notebook}:{grade_id}"


def same_data(course: Path, lab: Lab, students: list[str]) -> dict[str, dict[str, list[str]]]:
    """``{student: {file: [the other students whose file is byte-identical]}}`` over the
    hand-ins ``submitted/<student>/<lab>/<file>`` of ``lab``'s data files (SHA-256 of the bytes
    :func:`netmodels.outputs.read_input` reads; a file it refuses, and the reference copy
    released with the lab, are shared with no one)."""
    import hashlib

    from netmodels.outputs import Refused, read_input

    out: dict[str, dict[str, list[str]]] = {}
    for name in lab.data_files:
        try:
            ref = hashlib.sha256(read_input(course / "source" / lab.name / name, root=course)).digest()
        except (OSError, Refused):
            ref = None
        by_hash: dict[bytes, list[str]] = {}
        for student in students:
            try:
                h = hashlib.sha256(read_input(course / "submitted" / student / lab.name / name, root=course)).digest()
            except (OSError, Refused):      # missing, or refused: data_status says which
                continue
            if h != ref:
                by_hash.setdefault(h, []).append(student)
        for group in by_hash.values():
            for student in group if len(group) > 1 else ():
                out.setdefault(student, {})[name] = [s for s in group if s != student]
    return out


def data_status(course: Path, lab: Lab, folder: Path, shared: dict[str, list[str]] | None = None) -> str:
    """'own', 'reference copy', 'missing' or 'refused (why)', per data file of the lab (read by
    :func:`netmodels.outputs.read_input`: a link, a special file or a file too large is
    refused, also one in a folder reached through a link from ``course``); ``shared``: ``{file:
    [students]}`` whose file is the same (:func:`same_data`): "same as bob's" instead of 'own'."""
    from netmodels.outputs import Refused, read_input

    parts = []
    for name in lab.data_files:
        mine, ref = folder / name, course / "source" / lab.name / name
        try:
            own = read_input(mine, root=course)
        except FileNotFoundError:
            state = "missing"
        except Refused as exc:
            state = f"refused ({exc.why})"
        except OSError as exc:
            state = f"refused ({exc.strerror or exc})"
        else:
            try:
                state = "reference copy" if read_input(ref, root=course) == own else "own"
            except OSError:                 # no reference file: the lab releases none
                state = "own"
            if state == "own" and (shared or {}).get(name):
                others = [f"{other}'s" for other in shared[name]]
                state = "same as " + (f"{', '.join(others[:-1])} and {others[-1]}" if len(others) > 1 else others[0])
        parts.append(f"{name}: {state}")
    return "; ".join(parts)


def flags(course: Path, lab: Lab, student: str) -> str:
    """What the instructor should look at in a graded submission, or '':

    ``tampering: <columns>``, the test cells that did not run as written (the grader put the error
    ``grading_probe.TAMPERED`` first in their outputs; they score 0), and ``suspect code:
    <names>``, names of IPython's machinery or the built-ins in the submission's own cells
    (``grading_probe.SUSPECT``; not scored); ``measured disturbed: <file> (why)``, a data
    file whose record says the machine was busy (:func:`mpi_exercises.labdata.disturbance`), and
    ``failed on disturbed data: <columns>``, the test cells that the data could not pass
    (their error begins with :data:`mpi_exercises.labdata.DISTURBED`)."""
    from grading_probe import SUSPECT, TAMPERED

    from mpi_exercises.labdata import DISTURBED

    tampered, suspect, unfair = [], set(), []
    for name in lab.notebooks:
        try:
            nb = nbformat.read(course / "autograded" / student / lab.name / f"{name}.ipynb", as_version=4)
        except Exception:  # noqa: BLE001 (no graded notebook: nothing to flag)
            continue
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type != "code":
                continue
            if not meta.get("grade") or meta.get("solution"):       # the student's code
                suspect.update(m.group(0) for m in SUSPECT.finditer(cell.source))
            elif any(o.get("output_type") == "error" and o.get("ename") == TAMPERED for o in cell.get("outputs", [])):
                tampered.append(column(lab, name, meta.get("grade_id", "?")))
            elif any(o.get("output_type") == "error" and str(o.get("evalue", "")).startswith(DISTURBED)
                     for o in cell.get("outputs", [])):
                unfair.append(column(lab, name, meta.get("grade_id", "?")))
    found = ([f"tampering: {', '.join(tampered)}"] if tampered else []) + (
        [f"suspect code: {', '.join(sorted(suspect))}"] if suspect else []) + disturbed_data(course, lab, student) + (
        [f"failed on disturbed data: {', '.join(unfair)}"] if unfair else [])
    return "; ".join(found)


def disturbed_data(course: Path, lab: Lab, student: str) -> list[str]:
    """``measured disturbed: <file> (why)`` for each data file the student handed in whose record
    says the machine was busy while it measured (:func:`mpi_exercises.labdata.disturbance`)."""
    from mpi_exercises.labdata import disturbance
    from netmodels.outputs import Refused, read_input

    found = []
    for name in lab.data_files:
        try:
            why = disturbance(json.loads(read_input(course / "submitted" / student / lab.name / name, root=course)))
        except (OSError, Refused, ValueError, RecursionError):     # missing or unusable: the data column says
            continue
        if why:
            found.append(f"measured disturbed: {name} ({why})")
    return found


def rows(course: Path, labs: list[Lab], students: list[str], outcomes: dict) -> list[dict]:
    """One row per student and lab; scores from the gradebook for graded submissions."""
    from grading_feedback import is_pending
    from grading_processes import open_gradebook
    from nbgrader.api import MissingEntry

    out = []
    with open_gradebook(course) as gb:
        for lab in labs:
            maxima = {(nb, gid): gb.find_grade_cell(gid, nb, lab.name).max_score for nb, gid, _ in lab.cells}
            shared = same_data(course, lab, students)
            for student in students:
                oc = outcomes.get((student, lab.name), Outcome("not submitted"))
                data = oc.data
                if oc.data and student in shared:    # a file handed in by others too: named with them
                    data = data_status(course, lab, course / "submitted" / student / lab.name, shared[student])
                row = {"student": student, "lab": lab.name, "status": oc.status, "data": data,
                       "sandbox": oc.sandbox, "flags": flags(course, lab, student) if oc.status == "graded" else "",
                       "auto_score": 0.0, "auto_max": 0.0, "score": 0.0,
                       "max_score": float(sum(maxima.values())), "manual_pending": 0}
                for nb, gid, manual in lab.cells:
                    value = 0.0
                    if oc.status == "graded":
                        try:
                            grade = gb.find_grade(gid, nb, lab.name, student)
                        except MissingEntry:
                            grade = None
                        if grade is not None and manual and is_pending(grade):
                            value = ""  # waiting for the instructor
                        elif grade is not None:
                            value = float(grade.score)
                    row[column(lab, nb, gid)] = value
                    if value == "":
                        row["manual_pending"] += 1
                        continue
                    row["score"] += value
                    if not manual:
                        row["auto_score"] += value
                        row["auto_max"] += maxima[(nb, gid)]
                out.append(row)
    return out


def write_csv(path: Path, labs: list[Lab], table: list[dict]) -> None:
    """``grades.csv``: one row per student and lab; scores as numbers, texts (the student's id,
    statuses) through ``page_safety.csv_cell``, so that no spreadsheet reads one as a formula."""
    from netmodels import outputs
    from page_safety import csv_cell

    columns = list(FIELDS)
    for lab in labs:
        for nb, gid, _ in lab.cells:
            if column(lab, nb, gid) not in columns:
                columns.append(column(lab, nb, gid))
    fh = io.StringIO(newline="")
    writer = csv.DictWriter(fh, fieldnames=columns, restval="")
    writer.writeheader()
    for row in table:
        writer.writerow({k: (f"{v:g}" if isinstance(v, float) else csv_cell(v)) for k, v in row.items()})
    outputs.write_text(path, fh.getvalue())      # whole or not at all, also on Ctrl-C
