"""The graded labs' data files: one loader that names a bad file, what is wrong with it and
the command that writes it; what a file records of a disturbed machine; and the command that
writes lab 2's ``allreduce.json`` (``python -m mpi_exercises.labdata allreduce-runs``).

Which lab hands in which file, and each file's kind (the command that writes it, the fields the
labs read, the ranks it needs), are declared once, in :mod:`mpi_exercises.labspec`.

``load(path, kind)`` reads one and checks that it is there, is a regular file (never a link, a
pipe or a device) of at most :data:`netmodels.outputs.MAX_INPUT_BYTES`, is JSON and whole (not
cut short), is the result of that command (its ``"benchmark"`` field), holds every field the
lab reads, and was measured with the number of ranks the lab needs (exactly 2 for the
ping-pong and the round trips, whose third rank would only wait; 4 for the f(L) jig; at least
5 for LoP's fits).
Anything else raises :class:`LabDataError`, one message: the file, what is wrong, and the
command that writes it again, e.g. ::

    LabDataError: pingpong.json: measured with 3 ranks, but this lab needs exactly 2 (ranks 0
    and 1 measure, any other rank only waits). Write it again, from the lab's folder, with:
    mpiexec -n 2 python -m mpi_exercises pingpong --json pingpong.json

Lab 2's ``allreduce.json`` (ten ``allreduce`` runs, :mod:`mpi_exercises.allreduce_runs`) comes
from a terminal ::

    python -m mpi_exercises.labdata allreduce-runs --json allreduce.json

or from the notebook's measurement cell.  Importing this module does not start MPI.
"""

from __future__ import annotations

if __name__ == "__main__":      # a Ctrl-C while the modules below load: one line, not a traceback
    import _signal                  # (built in: until the next line, a Ctrl-C ends it quietly)

    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
    from netmodels.starting import ctrl_c_in_one_line

    ctrl_c_in_one_line("python -m mpi_exercises.labdata")

import json
import sys
from pathlib import Path

from .allreduce_runs import ALLREDUCE_CASES, measure_allreduce_runs, mpiexec, under_launcher  # noqa: F401
from .labspec import KINDS, Kind  # noqa: F401 (the kinds are declared with the labs)


class LabDataError(ValueError):
    """A lab's data file that cannot be used: the message names the file, the problem and the
    command that writes it.  A notebook (IPython) shows this one line, no traceback: the student
    needs the message, not this module's path on the machine that runs the notebook."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


#: the command of every ``"benchmark"`` a result file can name, for "this is another file" messages
_WRITTEN_BY = {kind.benchmark: name for name, kind in KINDS.items() if kind.benchmark}


def _what(data) -> str:
    """What a parsed file holds, in words, when it is not what was asked for."""
    if isinstance(data, dict):
        found = data.get("benchmark")
        if isinstance(found, str):
            command = _WRITTEN_BY.get(found, found)
            return f"holds the result of `{command}`"
        if "runs" in data:
            return "holds a list of runs"
        return "holds a JSON object without a \"benchmark\" field (no result of the kit's commands)"
    return f"holds a JSON {type(data).__name__.replace('dict', 'object').replace('list', 'array')}"


def _missing(node, parts: list[str], where: str) -> str | None:
    """The first place along the dotted path ``parts`` that ``node`` lacks, or None.  A part
    ``key[]`` is a non-empty list whose every item must hold the rest of the path;
    ``key[field!=value]`` the same for the items whose ``field`` is not ``value``."""
    if not parts:
        return None
    part = parts[0]
    key, bracket, cond = part.partition("[")
    here = f"{where}.{key}" if where else key
    if not isinstance(node, dict) or key not in node:
        return f"has no field {here}"
    value = node[key]
    if not bracket:
        return _missing(value, parts[1:], here)
    if not isinstance(value, list) or not value:
        return f"has no {here} to read (an empty list or none)"
    field, _, skip = cond.rstrip("]").partition("!=")
    for i, item in enumerate(value):
        if field and isinstance(item, dict) and item.get(field) == skip:
            continue
        problem = _missing(item, parts[1:], f"{here}[{i}]")
        if problem:
            return problem
    return None


def _unclosed(text: str) -> bool:
    """True if ``text`` ends inside a JSON string, object or array: what a file cut short
    (an interrupted write, an incomplete copy) looks like."""
    depth, in_string, escaped = 0, False, False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
    return in_string or depth > 0


def _parse(path: Path, root=None) -> object:
    """The JSON of ``path`` (read by :func:`netmodels.outputs.read_input`: no link, no special
    file, at most :data:`~netmodels.outputs.MAX_INPUT_BYTES`; ``root``: its trusted folder), or
    a LabDataError's problem (a str) if it has none."""
    from netmodels.outputs import Refused, read_input

    try:
        raw = read_input(path, root=root)
    except Refused as exc:
        return exc.why
    except FileNotFoundError:                   # where it was looked for, never the folder's full path
        return "missing: no such file" + ("" if path.is_absolute() else " in the folder the notebook runs in")
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "not a text file (not UTF-8), so no result of the kit's commands"
    if not text.strip():
        return "empty (0 bytes)" if not raw else "empty (only blanks)"
    try:
        return json.loads(text)
    except RecursionError:
        return "not JSON the kit writes: nested too deeply to be read"
    except json.JSONDecodeError as exc:
        if _unclosed(text):
            return (f"cut short: its JSON ends at line {text.rstrip().count(chr(10)) + 1} before it is "
                    "complete (was the command interrupted, or the file copied while it was written?)")
        return f"not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"


def problem(data, kind: str) -> str | None:
    """Why the parsed file ``data`` is not a usable ``kind`` (a key of :data:`KINDS`), or None."""
    spec = KINDS[kind]
    if spec.benchmark is None:                          # ten allreduce runs, collected
        if not isinstance(data, dict) or "runs" not in data:
            return f"{_what(data)}, not the allreduce runs this lab needs"
        runs = data["runs"]
        if isinstance(runs, list):
            for i, run in enumerate(runs):
                found = run.get("benchmark") if isinstance(run, dict) else None
                if found is not None and found != "allreduce":
                    return f"runs[{i}] {_what(run)}, not a run of `python -m mpi_exercises allreduce`"
    elif not isinstance(data, dict) or data.get("benchmark") != spec.benchmark:
        return f"{_what(data)}, not the result of `{kind}`"
    for path in spec.fields:
        missing = _missing(data, path.split("."), "")
        if missing:
            return missing
    env = data.get("environment") if spec.benchmark else None
    if env is not None:
        ranks = env["ranks"]
        if isinstance(ranks, bool) or not isinstance(ranks, int):
            return f"has environment.ranks = {ranks!r}, not a number of ranks"
        if spec.ranks is not None and ranks != spec.ranks:
            return (f"measured with {ranks} rank{'s' * (ranks != 1)}, but this lab needs exactly {spec.ranks} "
                    f"({spec.why_ranks})")
        if spec.min_ranks is not None and ranks < spec.min_ranks:
            return (f"measured with {ranks} rank{'s' * (ranks != 1)}, but this lab needs at least "
                    f"{spec.min_ranks} ({spec.why_ranks})")
    return None


def message(path, kind: str, why: str) -> str:
    """The one message of a LabDataError: the file, what is wrong, the command that writes it."""
    return (f"{path}: {why}. Write it again, from the lab's folder, with: "
            f"{KINDS[kind].write_with(Path(path).name if Path(path).parent == Path('.') else path)}")


def load(path, kind: str, root=None) -> dict:
    """The data file ``path`` of ``kind`` (a key of :data:`KINDS`: the command that writes it),
    parsed; :class:`LabDataError` naming the file, the problem and the command if it is
    missing, a link, a folder, a pipe or a device, too large
    (:data:`netmodels.outputs.MAX_INPUT_BYTES`), not JSON, cut short, another command's
    result, lacks a field the labs read, or was measured with ranks the lab cannot use (module
    docstring).  ``root``: a trusted folder ``path`` lies in, none of whose sub-folders on the
    way to the file may be a link (a student's folder in a course)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    path = Path(path)
    data = _parse(path, root)
    why = data if isinstance(data, str) else problem(data, kind)
    if why:
        raise LabDataError(message(path, kind, why))
    return data


# ---------------------------------------------------------------- was the machine quiet?
#: the first words of a test's message when the student's data cannot pass it because the
#: measurement was disturbed (``labs/grade.py`` flags the test cells whose error starts so)
DISTURBED = "Your measurement was disturbed"


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _noisy(data: dict) -> str:
    """How noisy the medians of a file marked ``"reliable": false`` are: the sizes and the widest
    95 % interval its ``reliability`` (or its calibration's) records."""
    rel = data.get("reliability") or (data.get("calibration") or {}).get("reliability") or {}
    rel = rel if isinstance(rel, dict) else {}
    worst, limit = _number(rel.get("worst")), _number(rel.get("limit"))
    missed = [str(m) for m in rel.get("missed", [])] if isinstance(rel.get("missed"), list) else []
    where = f" of {', '.join(missed[:4])}{', ...' if len(missed) > 4 else ''}" if missed else ""
    known = f" known only to ±{worst:.0%}" if worst is not None else " too noisy"
    return (f"the median{'s' if len(missed) != 1 else ''}{where}{known}"
            + (f" (limit ±{limit:.0%})" if limit is not None else ""))


def _unphysical_fits(data: dict) -> list[str]:
    """The parts of the benchmark's own α-β fit (whole, below and above the switch) with α or
    β <= 0."""
    fit = data.get("fit") if isinstance(data.get("fit"), dict) else {}
    pieces = fit.get("piecewise") if isinstance(fit.get("piecewise"), dict) else {}
    parts = (("the alpha-beta fit", fit.get("alpha_beta")), ("below the switch", pieces.get("below")),
             ("above the switch", pieces.get("above")))
    from netmodels.models import table

    keys = [p.fitted for p in table.get("alpha-beta").parameters if p.physical == "> 0"]   # alpha_s, beta_s_per_byte
    return [name for name, part in parts
            if isinstance(part, dict) and any(_number(part.get(k)) is not None and _number(part.get(k)) <= 0
                                              for k in keys)]


def _load_words(low: float, high: float, cores: float) -> str:
    """The finding of a load that other programs made: one load, or the range over runs."""
    span = f"{low:.1f}" + (f" to {high:.1f}" if f"{high:.1f}" != f"{low:.1f}" else "")
    return f"load average {span} on {cores:.0f} cores: other programs ran"


def _findings(data: dict) -> list[tuple[str, str, tuple]]:
    """What one run's parsed record says disturbed it (:func:`disturbance`), each ``(kind, in
    words, figures)``: ``"shared"`` (ranks, cores), ``"noisy"``, ``"drifted"``, ``"unphysical"``
    (no figures), ``"load"`` (load, cores)."""
    env = data.get("environment") if isinstance(data.get("environment"), dict) else {}
    ranks, cores = _number(env.get("ranks")), _number(env.get("cores"))
    on = f"{ranks:.0f} ranks on {cores:.0f} cores" if ranks and cores else "more ranks than cores"
    found = []
    if data.get("oversubscribed") is True or data.get("valid") is False:
        found.append(("shared", f"ranks shared cores ({on})", (ranks, cores)))
    if data.get("reliable") is False:
        found.append(("noisy", _noisy(data), ()))
    if data.get("stable") is False:
        found.append(("drifted", "the machine's speed drifted during the run", ()))
    bad = _unphysical_fits(data)
    if bad:
        found.append(("unphysical", f"the benchmark's own fit has alpha or beta <= 0 ({', '.join(bad)}; it printed "
                                    "a WARNING)", ()))
    load = _number(data.get("load_average_1min"))
    if load is not None and cores and load > 1.5 * max(cores, ranks or 0):   # its own busy ranks count too
        found.append(("load", _load_words(load, load, cores), (load, cores)))
    return found


def disturbance(data) -> str | None:
    """What disturbed the measurement, in words, from what the parsed data file ``data``
    records (the benchmark's own verdict), or None if it records nothing wrong: ranks sharing
    cores (``oversubscribed``, ``"valid": false``), medians too noisy (``"reliable": false``,
    the sizes and the widest 95 % interval of ``reliability``), a machine that drifted
    (``"stable": false``), the benchmark's own fit with α or β <= 0 (the ``WARNING`` it printed),
    a 1-minute load average over 1.5 times the cores, or the ranks where they outnumber the cores
    (other programs ran: the benchmark's own busy ranks count too).  Lab 2's runs (``"runs"``)
    are judged each, every finding once with the number of runs it was found in (loads as a range)."""
    if not isinstance(data, dict):
        return None
    if not isinstance(data.get("runs"), list):
        return "; ".join(words for _, words, _ in _findings(data)) or None
    found: dict = {}                    # a finding's words, or ("load", cores): a list, a run's load each
    for run in data["runs"]:
        for kind, words, figures in (_findings(run) if isinstance(run, dict) else []):
            found.setdefault(("load", figures[1]) if kind == "load" else words, []).append(
                figures[0] if kind == "load" else None)
    return "; ".join(f"{len(loads)} of {len(data['runs'])} runs: "
                     + (_load_words(min(loads), max(loads), key[1]) if isinstance(key, tuple) else key)
                     for key, loads in found.items()) or None


def _oversubscribed_only(data: dict) -> str | None:
    """``"R ranks on C cores"`` if all a record (or every disturbed run of lab 2's) says is that
    its R ranks outnumbered its C cores, else None."""
    shared = set()
    for record in data["runs"] if isinstance(data.get("runs"), list) else [data]:
        if not isinstance(record, dict):
            return None
        found = _findings(record)
        if not found:
            continue
        if [kind for kind, _, _ in found] != ["shared"]:
            return None
        ranks, cores = found[0][2]
        if not (ranks and cores and ranks > cores):
            return None
        shared.add(f"{ranks:.0f} ranks on {cores:.0f} cores")
    return ", ".join(sorted(shared)) or None


def verdict(data) -> str:
    """One line for a lab's setup cell: the benchmark's own verdict on the parsed data file
    ``data`` (:func:`disturbance`), and what to do if it was disturbed.  Ranks that outnumbered the
    cores, and nothing else, are what a lab asking for more ranks than the machine has cores gets
    on every such machine: the line says so instead of asking for a quieter machine."""
    why = disturbance(data)
    load = _number(data.get("load_average_1min")) if isinstance(data, dict) else None
    shared = _oversubscribed_only(data) if why else None
    if shared:
        return (f"OVERSUBSCRIBED: {shared}: the ranks took turns on the cores, so its times include the operating "
                "system's scheduling. Expected where the lab asks for more ranks than your machine has cores "
                "(its page says how to read such figures); on a machine with enough cores, measure again.")
    if why:
        return (f"DISTURBED: {why}. Figures from this file measure the other programs as much as your "
                "machine: measure again when it is quiet (close other programs), then run this notebook again.")
    said = "reliable: every median within its limit" if isinstance(data, dict) and data.get("reliable") is True \
        else "no disturbance recorded"
    return f"benchmark's verdict: {said}" + (f", load average {load:.1f}" if load is not None else "") + "."


def cannot_pass(what: str, data, kind: str, path: str) -> str:
    """The message of a test that the student's data ``data`` (the file ``path`` of ``kind``)
    cannot pass whatever the answer: :data:`DISTURBED`, ``what`` the data lacks, what the file
    records (:func:`disturbance`) and the command that measures it again."""
    why = disturbance(data)
    recorded = f"the file records: {why}" if why else (
        "the file records no warning, but a burst of load between the benchmark's rounds does this")
    return (f"{DISTURBED}: {what}, so no correct answer can pass this test ({recorded}). Measure again when the "
            f"machine is quiet (close other programs): {KINDS[kind].write_with(path)}, then run the notebook again.")


def build_parser():
    """The parser of ``python -m mpi_exercises.labdata`` (one-line errors, exit status 2)."""
    from netmodels.commandline import OneLineParser

    from .bench.arguments import positive_int

    parser = OneLineParser(prog="python -m mpi_exercises.labdata",
                           description="Write a lab's data file that no single benchmark writes.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("allreduce-runs", help="lab 2's allreduce.json: ten allreduce runs (Tree, ring, Snake "
                       "and Fence with four block sizes), each started with mpiexec",
                       description="Lab 2's allreduce.json: one `mpiexec -n RANKS python -m mpi_exercises "
                       "allreduce` per case (Tree, ring, and Snake and Fence with blocks of 1000, 3000, 10000 "
                       "and 30000 elements), each run's JSON kept whole. Run it without mpiexec: it starts "
                       "mpiexec itself, once per run.")
    p.add_argument("--json", default="allreduce.json", help="the file written (default allreduce.json)")
    p.add_argument("--ranks", type=positive_int, default=4, help="ranks of every run (default 4: a 2x2 mesh)")
    p.add_argument("-N", type=positive_int, default=100_000, help="vector length in elements (default 100000)")
    p.add_argument("--repeat", type=positive_int, default=20, help="timed calls per run (default 20)")
    return parser


def main(argv=None) -> int:
    """``python -m mpi_exercises.labdata allreduce-runs [options]`` (see ``--help``); Ctrl-C
    ends it with one line saying what was kept, and exit status 130."""
    from netmodels.commandline import INTERRUPTED, ctrl_c_raises, interrupted

    parser = build_parser()
    args = parser.parse_args(argv)
    if under_launcher():
        print(f"{parser.prog}: error: run it without mpiexec or srun: it starts `mpiexec -n {args.ranks}` "
              "itself, once per run", file=sys.stderr)
        return 2
    ctrl_c_raises()
    try:
        return measure_allreduce_runs(args.json, args.ranks, args.N, repeat=args.repeat)
    except KeyboardInterrupt:           # the run under way was stopped; a file written is whole
        print(interrupted(f"{parser.prog} {args.command}", args.json), file=sys.stderr, flush=True)
        return INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
