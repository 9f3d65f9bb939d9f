"""The graded labs, each declared once: the data files a student hands in, the kind of each (the
command that writes it, the fields the labs read, the ranks it must be measured with), and where
a lab's graded cells are (its source notebook's nbgrader metadata, the one place nbgrader reads
them).

Every part of the kit that needs a lab's files reads them here: ``labs/nbgrader_config.py``
(``Autograde.exclude_overwriting``: the student's files win over the source folder's copies),
the loader (:func:`mpi_exercises.labdata.load` checks a file against its :class:`Kind`), the
release (``labs/release.py`` refuses a lab without a reference copy of each file), the grader
(through the course's configuration) and the class report (``labs/class_report.py``).

A new lab is one :class:`Lab` in :data:`LABS` (and a :class:`Kind` in :data:`KINDS` if a command
writes a new kind of file).  Importing this module imports nothing but the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Kind:
    """A kind of data file: the ``"benchmark"`` its command records (None: ten ``allreduce``
    runs), the command that writes it (``{path}``: the file), the fields the labs read
    (dotted paths; ``key[]`` is a non-empty list, every item of which must hold the rest of
    the path), and the ranks it must have been measured with (``ranks``: exactly;
    ``min_ranks``: at least; ``why_ranks``: why, in words)."""

    benchmark: str | None
    command: str
    fields: tuple[str, ...]
    ranks: int | None = None
    min_ranks: int | None = None
    why_ranks: str = ""

    def write_with(self, path) -> str:
        return self.command.format(path=path)


#: the ranks of a ping-pong or round trip: exactly two
_TWO_RANKS = {"ranks": 2, "why_ranks": "ranks 0 and 1 measure, any other rank only waits"}

#: the environment every benchmark records; the labs print and check parts of it
_ENV = ("environment.ranks", "environment.cores", "environment.date", "environment.mpi_library", "oversubscribed")

#: data file kinds, by the name of the command that writes them
KINDS: dict[str, Kind] = {
    "pingpong": Kind(
        "pingpong", "mpiexec -n 2 python -m mpi_exercises pingpong --json {path}",
        _ENV + ("results[].bytes", "results[].median_s", "results[].min_s"),
        **_TWO_RANKS),
    "nbl-testjig": Kind(
        "nbl-testjig", "mpiexec -n 4 python -m mpi_exercises nbl-testjig --json {path}",
        _ENV + ("table.S", "table.T_s.1", "table.T_s.2", "table.T_s.4", "table.T_s.6",
                "combine.c2_s_per_elem", "combine.c3_s_per_elem"),
        ranks=4, why_ranks="the centre rank and its 3 neighbours measure L = 1, 2, 4 and 6 links"),
    "allreduce-runs": Kind(
        None, "python -m mpi_exercises.labdata allreduce-runs --json {path}",
        ("runs[].benchmark", "runs[].environment.ranks", "runs[].environment.cores", "runs[].oversubscribed",
         "runs[].parameters.algorithm", "runs[].parameters.N", "runs[].parameters.block",
         "runs[].parameters.mesh", "runs[].results.min_s", "runs[].results.median_s")),
    "logp": Kind(
        "logp-prtt", "mpiexec -n 2 python -m mpi_exercises logp --json {path}",
        _ENV + ("parameters.n", "results[].bytes", "results[].d_s", "results[].prtt_1_0.min_s",
                "results[].prtt_n_0.min_s", "results[].prtt_n_d.min_s", "results[].o_r.min_s"),
        **_TWO_RANKS),
    "barrier-bench": Kind(
        "barrier", "mpiexec -n <cores> python -m mpi_exercises barrier-bench --json {path}",
        _ENV + ("results[].algorithm", "results[].options", "results[].min_s"),
        min_ranks=2, why_ranks="a barrier needs two ranks to synchronise"),
    "lop": Kind(
        "lop", "mpiexec -n 8 python -m mpi_exercises lop --json {path}",
        _ENV + ("results[].peers", "results[].rtt_per_message_single.min_s", "results[].os_single.min_s",
                "barrier[].options.n", "barrier[].min_s"),
        min_ranks=5, why_ranks="the fits need round trips to at least 4 peer counts"),
    "predict": Kind(
        "predict", "mpiexec -n <cores> python -m mpi_exercises predict --calibration pingpong.json logp.json "
                   "--json {path}",
        _ENV + ("valid", "reliable", "stable", "drift", "load_average_1min", "command", "calibration.source",
                "calibration.models.alpha-beta.alpha", "calibration.models.alpha-beta.beta",
                "calibration.models.loggp.L", "calibration.models.loggp.o_s", "calibration.models.loggp.o_r",
                "calibration.models.loggp.g", "calibration.models.loggp.G",
                "rows[].collective", "rows[].algorithm", "rows[].nelems", "rows[].measured_s",
                "rows[].software_s", "rows[algorithm!=mpi].network_s.alpha-beta",
                "rows[algorithm!=mpi].network_s.loggp", "rows[algorithm!=mpi].schedule",
                "summary.alpha-beta.with_software.median_abs", "summary.alpha-beta.network_only.median_abs",
                "summary.loggp.with_software.median_abs", "summary.loggp.network_only.median_abs",
                "summary.nbl.with_software.median_abs", "summary.nbl.network_only.median_abs")),
    "timeline": Kind(
        "timeline", "mpiexec -n 2 python -m mpi_exercises timeline allreduce.ALGORITHM -N ELEMENTS "
        "--calibration logp.json --json {path}",
        ("algorithm", "P", "N", "aligned", "load_average_1min", "measured.nprocs", "measured.kinds",
         "measured.columns.rank", "measured.columns.step", "measured.columns.kind", "measured.columns.start",
         "measured.columns.end")),
}


@dataclass(frozen=True)
class Lab:
    """A graded lab: its name (the folder of ``source/``), and the data files a student hands in
    with its notebook, ``{file: kind}`` (a key of :data:`KINDS`), in the order its page lists them."""

    name: str
    files: dict

    @property
    def data_files(self) -> list[str]:
        """The files handed in with the notebook (``Autograde.exclude_overwriting``)."""
        return list(self.files)

    def commands(self) -> list[str]:
        """The command that writes each data file, run from the lab's folder, in an order that runs:
        a command that reads another of the lab's files (lab 5's predict reads pingpong.json) after
        the command that writes it."""
        pending = {name: KINDS[kind].write_with(name) for name, kind in self.files.items()}
        ordered = []
        while pending:
            ready = next((name for name, command in pending.items()
                          if not any(other != name and other in command for other in pending)), next(iter(pending)))
            ordered.append(pending.pop(ready))
        return ordered

    def graded_cells(self, source: Path) -> list[tuple[str, str, float, bool]]:
        """``(notebook, grade_id, points, written)`` of every graded cell, in notebook order, read
        from the lab's notebooks in ``source/<lab>/`` (``written``: an answer graded by hand)."""
        import nbformat

        cells = []
        for path in sorted((Path(source) / self.name).glob("*.ipynb")):
            for cell in nbformat.read(path, as_version=4).cells:
                meta = cell.metadata.get("nbgrader", {})
                if meta.get("grade"):
                    cells.append((path.stem, meta["grade_id"], float(meta.get("points", 0)),
                                  bool(meta.get("solution"))))
        return cells


#: the labs, in order
LABS: dict[str, Lab] = {lab.name: lab for lab in (
    Lab("lab1", {"pingpong.json": "pingpong"}),
    Lab("lab2", {"testjig.json": "nbl-testjig", "allreduce.json": "allreduce-runs"}),
    Lab("lab3", {"logp.json": "logp", "barriers.json": "barrier-bench"}),
    Lab("lab4", {"lop.json": "lop"}),
    # predict --calibration's inputs beside its report; timeline.json: the worst row, rank by rank
    Lab("lab5", {"predict.json": "predict", "pingpong.json": "pingpong", "logp.json": "logp",
                 "timeline.json": "timeline"}),
    Lab("lab6", {}),                       # computes, measures nothing
)}


def kind_of(name: str) -> str:
    """The kind of the data file ``name`` (a file has one kind in every lab that reads it)."""
    for lab in LABS.values():
        if name in lab.files:
            return lab.files[name]
    raise ValueError(f"name must be a data file of a lab ({', '.join(sorted(FILES))}), got {name!r}")


#: every data file of the labs
FILES = sorted({name for lab in LABS.values() for name in lab.files})
