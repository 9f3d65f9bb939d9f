"""The class's measured machines side by side: one static page per lab, for after grading.

    python labs/class_report.py --lab lab1              # what `make class-report LAB=lab1` runs
    python labs/class_report.py --lab lab3 --names      # student ids instead of pseudonyms

Every lab but lab 6 has each student measure their own machine.  This reads the data files
every student handed in for one lab, ``<course>/submitted/<student>/<lab>/<file>`` (the lab's
data files, declared once in ``mpi_exercises/labspec.py``: the hand-ins its page lists), checks each one, fits it with the kit's own functions (those the lab uses), and writes

* ``<out>/<lab>.html``: one self-contained page (figures as inline SVG, inline CSS, no script,
  nothing loaded from anywhere, which its Content Security Policy enforces: it opens offline,
  from a USB stick or a projector's laptop; every text from a hand-in is escaped):
  the class's figures, with the reference machine (the lab's own data in ``source/<lab>/``)
  and the papers' machines beside them; a table of the machines, each labelled by what its
  files record (ranks and cores, oversubscribed or not, MPI library, operating system, whether
  the run met its precision target, load); and the files that could not be used, with why;
* ``<out>/<lab>.csv``: the same numbers (SI units), one row per student folder and one for the
  reference machine (a text that would start a spreadsheet formula is prefixed by ``'``).

A file that is missing, spoiled (not JSON, cut short, another command's result, without a field
the lab reads: the labs' own loader, ``mpi_exercises.labdata``, says which), measured on a rank
count the lab cannot use, or a byte-for-byte copy of the reference file is listed with the
reason, never dropped silently; an oversubscribed run is drawn hollow and kept out of the class
medians.  Students appear under pseudonyms (an adjective and an animal drawn from a keyed hash of their
id: the same in every lab and every run; the key is ``<course>/autograded/.class-report-key``,
made on first use, so the pseudonyms cannot be recomputed from a list of ids), or under their
ids with ``--names``.  The default ``<out>`` is ``<course>/feedback/_class/``.

Its parts: this command; ``class_report_machines.py`` (reading and describing one student's
machine, pseudonyms, shared files, outliers); ``class_report_page.py`` (the page and the CSV);
``class_report_views.py`` (what every lab's view shares) and one view per lab,
``class_report_lab1.py`` to ``class_report_lab5.py`` (what the lab's page reads, computes, draws).
"""

from __future__ import annotations

if __name__ == "__main__":      # a Ctrl-C while the modules below load: one line, not a traceback
    import _signal                  # (built in: until the next line, a Ctrl-C ends it quietly)

    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
    from netmodels.starting import ctrl_c_in_one_line

    ctrl_c_in_one_line("python labs/class_report.py")

import argparse
import html
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import class_report_lab1  # noqa: E402 (next to this file: one module per lab)
import class_report_lab2  # noqa: E402
import class_report_lab3  # noqa: E402
import class_report_lab4  # noqa: E402
import class_report_lab5  # noqa: E402
import grade  # noqa: E402 (the course's layout)
from class_report_machines import build_machine, course_key, mark_outliers, mark_shared, plural, pseudonyms  # noqa: E402
from class_report_page import page, write_csv  # noqa: E402
from class_report_views import Figure, figure_style  # noqa: E402
from mpi_exercises.labspec import LABS as DECLARED  # noqa: E402 (each lab's data files, declared once)
from netmodels import outputs  # noqa: E402 (files written whole or not at all)

#: every lab's view, in lab order (lab 6 measures nothing)
LABS = {view.name: view for view in (class_report_lab1.VIEW, class_report_lab2.VIEW, class_report_lab3.VIEW,
                                     class_report_lab4.VIEW, class_report_lab5.VIEW)}


# ---------------------------------------------------------------- command line
def report(course: Path, lab: str, out: Path, names: bool = False, command: str = "") -> dict:
    """Write ``out/<lab>.html`` and ``out/<lab>.csv``; return what was done."""
    view = LABS[lab]
    files = DECLARED[lab].data_files
    submitted = course / "submitted"
    students = sorted(p.name for p in submitted.iterdir() if p.is_dir()) if submitted.is_dir() else []
    label = {s: s for s in students} if names else pseudonyms(students, course_key(course))
    machines = [build_machine(course, view, files, course / "source" / lab, "", "reference", "ref", reference=True)]
    for i, s in enumerate(sorted(students, key=label.get)):
        machines.append(build_machine(course, view, files, submitted / s / lab, s, label[s], f"m{i}"))
    mark_shared(course, view, files, machines)
    mark_outliers(view, machines)
    try:
        with figure_style():
            figures = view.figures([m for m in machines if m.drawn])
    except Exception as exc:  # noqa: BLE001 (the table and the list of hand-ins are still worth a page)
        figures = [Figure("", f"The figures could not be drawn: {type(exc).__name__}: {html.escape(str(exc))}")]
    out.mkdir(parents=True, exist_ok=True)
    html_path, csv_path = out / f"{lab}.html", out / f"{lab}.csv"
    text = page(view, machines, files, course, command or f"python labs/class_report.py --lab {lab}", figures,
                names)
    outputs.write_text(html_path, text)        # whole or not at all, also on Ctrl-C
    write_csv(csv_path, view, machines, names)
    return {"html": html_path, "csv": csv_path, "students": len(students),
            "shown": sum(1 for m in machines[1:] if m.drawn),
            "problems": sum(len(m.problems) for m in machines[1:])}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python labs/class_report.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--lab", required=True, choices=list(LABS),
                   help="the lab (lab 6 measures nothing)")
    p.add_argument("--course", type=Path, default=HERE, help="course folder (default: %(default)s)")
    p.add_argument("--out", type=Path, help="output folder (default: COURSE/feedback/_class)")
    p.add_argument("--names", action="store_true", help="name machines by student id, not by pseudonym")
    return p


def main(argv=None) -> int:
    """``python labs/class_report.py`` (see ``--help``); Ctrl-C ends it with one line saying
    what was kept (:func:`grade.interrupted_line`), and exit status 130."""
    parser = build_parser()
    args = parser.parse_args(argv)
    course = grade.course_folder(parser, args.course)
    t0 = time.monotonic()
    command = "python labs/class_report.py " + " ".join(argv if argv is not None else sys.argv[1:])
    out = args.out or course / "feedback" / "_class"
    before = {path: grade.file_version(path) for path in (out / f"{args.lab}.html", out / f"{args.lab}.csv")}
    from netmodels.starting import ctrl_c_raises

    ctrl_c_raises()
    try:
        done = report(course, args.lab, out, args.names, command)
    except KeyboardInterrupt:
        from netmodels.commandline import INTERRUPTED

        print(grade.interrupted_line("python labs/class_report.py", before), file=sys.stderr, flush=True)
        return INTERRUPTED
    print(f"{args.lab}: {plural(done['students'], 'student folder')}, {plural(done['shown'], 'machine')} shown, "
          f"{plural(done['problems'], 'hand-in')} not used ({time.monotonic() - t0:.1f} s)")
    print(f"page: {done['html']}\ncsv:  {done['csv']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
