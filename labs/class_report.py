"""The class's measured machines side by side: one static page per lab, for after grading.

    python labs/class_report.py --lab lab1              # what `make class-report LAB=lab1` runs
    python labs/class_report.py --lab lab3 --names      # student ids instead of pseudonyms

Every lab but lab 6 has each student measure their own machine.  This reads the data files
every student handed in for one lab, ``<course>/submitted/<student>/<lab>/<file>`` (the files
of the lab's ``Autograde.exclude_overwriting`` in ``nbgrader_config.py``: the hand-ins its page
lists), checks each one, fits it with the kit's own functions (those the lab uses), and writes

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
"""

from __future__ import annotations

if __name__ == "__main__":      # a Ctrl-C while the modules below load: one line, not a traceback
    import _signal                  # (built in: until the next line, a Ctrl-C ends it quietly)

    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
    from netmodels.starting import ctrl_c_in_one_line

    ctrl_c_in_one_line("python labs/class_report.py")

import argparse
import csv
import datetime as _dt
import hashlib
import hmac
import html
import io
import os
import secrets
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path


HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import class_report_labs as views  # noqa: E402 (next to this file)
import grade  # noqa: E402 (the course's layout: which files each lab hands in, reference copies)
from netmodels import outputs  # noqa: E402 (files written whole or not at all)
from page_safety import csp_meta, csv_cell  # noqa: E402 (what a page and a CSV let through of a hand-in)

KEY_FILE = Path("autograded") / ".class-report-key"


# ---------------------------------------------------------------- reading a data file
def read_data_file(path: Path, name: str, root: Path | None = None):
    """``(JSON, None)``, or ``(None, why)``: missing, or what the labs' loader
    (:func:`mpi_exercises.labdata.load`) finds wrong with it (a link, not a regular file, too
    large, not JSON, cut short, another command's result, a field the lab reads missing,
    measured on ranks the lab cannot use), with the command that writes it again.  ``root``:
    the course, no folder of which on the way to ``path`` may be a link."""
    from mpi_exercises import labdata

    if not os.path.lexists(path):
        return None, again(name, "missing")
    try:
        return labdata.load(path, views.KINDS[name], root=root), None
    except labdata.LabDataError as exc:       # the file's own name, not its path (which holds the student id)
        return None, str(exc).removeprefix(f"{path}: ").replace(str(path), name).replace(str(path.parent),
                                                                                          "the lab's folder")


def again(name: str, why: str) -> str:
    """``why``, then the command that writes the file (the labs' loader's wording)."""
    from mpi_exercises import labdata

    return labdata.message(name, views.KINDS[name], why).removeprefix(f"{name}: ")


# ---------------------------------------------------------------- what a record says of its machine
def short_mpi(text) -> str:
    if not isinstance(text, str) or not text.strip():
        return "?"
    line = " ".join(text.split()).split(",")[0]
    return line.replace(" Version:", "").replace("Version:", "")[:48]


def short_os(text) -> str:
    if not isinstance(text, str) or not text:
        return "?"
    parts = text.split("-")
    version = ".".join(parts[1].split(".")[:2]) if len(parts) > 1 else ""
    arch = next((p for p in parts if p in ("x86_64", "AMD64", "arm64", "aarch64", "i686", "ppc64le")), "")
    return " ".join(p for p in (parts[0], version, arch) if p)


def precision(rec: dict) -> str:
    """Whether the run met its precision target, from what the file records."""
    if rec.get("benchmark") == "predict":
        if rec.get("reliable") is True:
            return "calibration reliable"
        if rec.get("reliable") is False:
            worst = ((rec.get("calibration") or {}).get("reliability") or {}).get("worst")
            return "calibration not reliable" + (f" (±{worst:.0%})" if isinstance(worst, (int, float)) else "")
        return "calibration not judged"
    rounds = rec.get("rounds")
    if not isinstance(rounds, dict):
        return "not recorded"
    infos = [rounds] if "stopped_by" in rounds else [v for v in rounds.values() if isinstance(v, dict)]
    reasons = {i.get("stopped_by") for i in infos} - {None}
    if not reasons:
        return "not recorded"
    target = infos[0].get("target_relative_halfwidth")
    within = f"±{100 * target:g} %" if isinstance(target, (int, float)) and target else "target"
    if reasons == {"ci"}:
        return f"{within} met"
    if reasons == {"fixed"}:
        return "fixed repetitions"
    return f"{within} missed ({', '.join(sorted(reasons - {'ci'}))})"


def oversubscription(rec: dict) -> str | None:
    """Why a record's ranks shared cores (None if they did not): its own flag, its placement, or,
    on one node, more ranks than the cores it recorded."""
    env = rec.get("environment") if isinstance(rec.get("environment"), dict) else {}
    ranks, cores = env.get("ranks"), env.get("cores")
    place = env.get("placement") if isinstance(env.get("placement"), dict) else {}
    nodes = place.get("nodes") if isinstance(place.get("nodes"), list) else []
    counted = isinstance(ranks, int) and isinstance(cores, int)
    if counted and len(nodes) <= 1 and ranks > cores:
        return f"{ranks} ranks on {cores} core{'s' if cores != 1 else ''}"
    if rec.get("oversubscribed") or place.get("oversubscribed") or rec.get("valid") is False:
        return f"{ranks} ranks on {cores} cores, the file says" if counted else "the file says so"
    return None


def describe(rec: dict) -> dict:
    env = rec.get("environment") if isinstance(rec.get("environment"), dict) else {}
    load = rec.get("load_average_1min")
    return {"ranks": env.get("ranks"), "cores": env.get("cores"), "mpi_library": short_mpi(env.get("mpi_library")),
            "os": short_os(env.get("platform")), "precision": precision(rec),
            "load_average_1min": load if isinstance(load, (int, float)) else None,
            "oversubscribed": oversubscription(rec)}


# ---------------------------------------------------------------- pseudonyms
ADJECTIVES = ("amber", "brave", "calm", "clever", "crimson", "dapper", "eager", "fancy", "gentle", "golden",
              "happy", "humble", "icy", "jolly", "keen", "kind", "lively", "lucky", "mellow", "merry",
              "misty", "nimble", "noble", "olive", "plucky", "polite", "proud", "quick", "quiet", "rapid",
              "rosy", "rusty", "sandy", "shy", "silver", "sleepy", "snowy", "sober", "spry", "steady",
              "stormy", "sunny", "swift", "tame", "tidy", "tiny", "upbeat", "vivid", "warm", "wily",
              "witty", "young", "zesty", "bold", "breezy", "cosy", "dusky", "fuzzy", "hazy", "jade",
              "lunar", "mossy", "peppy", "ruby")
ANIMALS = ("otter", "badger", "falcon", "heron", "lynx", "marten", "newt", "ocelot", "panda", "quail",
           "raven", "salmon", "tapir", "urchin", "vole", "walrus", "yak", "zebra", "beaver", "bison",
           "camel", "dingo", "egret", "ferret", "gecko", "hare", "ibis", "jackal", "koala", "lemur",
           "moose", "narwhal", "owl", "puffin", "robin", "seal", "toucan", "viper", "wombat", "alpaca",
           "bat", "crane", "dolphin", "eel", "finch", "gibbon", "hedgehog", "iguana", "jay", "kiwi",
           "lark", "mole", "numbat", "orca", "pika", "quokka", "rhino", "stoat", "tern", "weasel",
           "wren", "yeti", "mink", "cod")


def course_key(course: Path) -> bytes:
    """The course's secret pseudonym key (made on first use, readable by its owner only)."""
    path = course / KEY_FILE
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32) + "\n")
    return path.read_text().strip().encode()


def pseudonyms(students, key: bytes) -> dict[str, str]:
    """``{student: "adjective animal"}`` from HMAC-SHA256(key, id): a student keeps theirs
    whoever else is in the class; two students who draw the same get " 2", " 3" after it in
    the order of their hashes."""
    digest = {s: hmac.new(key, s.encode(), hashlib.sha256).digest() for s in students}
    names = {s: f"{ADJECTIVES[d[0] % len(ADJECTIVES)]} {ANIMALS[d[1] % len(ANIMALS)]}" for s, d in digest.items()}
    out = {}
    for s in sorted(students, key=digest.get):
        base, k = names[s], 1
        while (names[s] if k == 1 else f"{base} {k}") in out.values():
            k += 1
        out[s] = base if k == 1 else f"{base} {k}"
    return out


# ---------------------------------------------------------------- one student's machine
@dataclass
class Problem:
    file: str
    reason: str
    effect: str


@dataclass
class Machine:
    lab: str
    student: str                 #: the folder's name ("" for the reference machine)
    name: str                    #: what the page calls it
    gid: str                     #: its id in the figures
    reference: bool = False
    usable: dict = field(default_factory=dict)     #: file -> JSON
    description: dict = field(default_factory=dict)
    ranks_by_file: dict = field(default_factory=dict)
    values: dict = field(default_factory=dict)
    caveats: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    submitted: bool = True
    shared: dict = field(default_factory=dict)     #: file -> the other machines that handed in the same bytes
    repeat: bool = False         #: drawn only from files an earlier machine handed in: out of the class statistics
    outliers: list = field(default_factory=list)   #: the figures far from the class's (:func:`mark_outliers`)

    @property
    def oversubscribed(self) -> bool:
        return bool(self.description.get("oversubscribed"))

    @property
    def drawn(self) -> bool:
        return bool(self.values)

    @property
    def status(self) -> str:
        if self.reference:
            return "reference"
        if not self.submitted:
            return "not submitted"
        if not self.values:
            return "not used"
        return "partly used" if any(p.effect.startswith("shown without") for p in self.problems) else "used"

    @property
    def ranks(self) -> str:
        d = self.description
        counts = sorted(set(self.ranks_by_file.values()), key=str)
        if len(counts) > 1:
            text = ", ".join(f"{r} ({f.removesuffix('.json')})" for f, r in self.ranks_by_file.items())
        else:
            text = str(d.get("ranks"))
        return f"{text} on {d.get('cores')} cores"

    @property
    def tooltip(self) -> str:
        d = self.description
        over = f"OVERSUBSCRIBED ({d['oversubscribed']})" if d.get("oversubscribed") else "not oversubscribed"
        load = f", load {d['load_average_1min']:.1f}" if d.get("load_average_1min") is not None else ""
        same = "".join(f"; {f} same as {', '.join(o)}'s" for f, o in self.shared.items())
        return (f"{self.name}: {self.ranks}, {over}; {d.get('mpi_library')}; {d.get('os')}; "
                f"precision {d.get('precision')}{load}{same}")


def check_file(course: Path, lab: str, folder: Path, name: str, reference: bool):
    """``(JSON, None)`` or ``(None, why)`` for one hand-in of one folder of ``course``."""
    data, why = read_data_file(folder / name, name, course)
    if why:
        return None, why
    if not reference:
        state = grade.data_status(course, grade.Lab(lab, [], data_files=[name]), folder)
        if state.endswith(": reference copy"):
            return None, again(name, "a copy of the reference file released with the lab, not a measurement "
                                     "of this machine")
    return data, None


def build_machine(course: Path, view: views.LabView, files: list[str], folder: Path, student: str, name: str,
                  gid: str, reference: bool = False) -> Machine:
    m = Machine(view.name, student, name, gid, reference=reference)
    if not folder.is_dir():
        m.submitted = False
        m.problems.append(Problem(f"{view.name}/", f"no {view.name} folder: not submitted", "nothing to show"))
        return m
    failed = {}
    for fname in files:
        data, why = check_file(course, view.name, folder, fname, reference)
        if why:
            failed[fname] = why
        else:
            m.usable[fname] = data
    readable = [f for f in view.reads if f in m.usable]
    for f in [view.main, *files]:
        if f in m.usable:
            recs = views.records(f, m.usable[f])
            m.description = describe(recs[0])
            break
    for f in view.reads:
        if f in m.usable:
            rec = views.records(f, m.usable[f])[0]
            m.ranks_by_file[f] = (rec.get("environment") or {}).get("ranks")
            over = next((oversubscription(r) for r in views.records(f, m.usable[f]) if oversubscription(r)), None)
            if over:
                m.description["oversubscribed"] = m.description.get("oversubscribed") or over
                m.caveats.append(f"{f} oversubscribed ({over}): its times include the scheduler; "
                                 "kept out of the class medians")
    while readable:     # a file the lab's computation refuses is left out, the others still shown
        try:
            values, caveats = view.extract({f: m.usable[f] for f in readable})
            m.values, m.caveats = values, m.caveats + caveats
            break
        except views.Unusable as exc:
            bad = next((f for f in readable if str(exc).startswith(f"{f}: ")), readable[0])
            failed[bad] = str(exc).removeprefix(f"{bad}: ")
        except Exception as exc:  # noqa: BLE001 (one student's odd file never stops the report)
            bad = readable[0]
            failed[bad] = f"could not be processed: {type(exc).__name__}: {exc}"
        readable.remove(bad)
    for fname, why in failed.items():
        if fname not in view.reads:
            effect = "checked only: machine shown"
        elif m.values:
            effect = f"shown without {fname}"
        else:
            effect = "left out"
        m.problems.append(Problem(fname, why, effect))
    return m


# ---------------------------------------------------------------- shared files, outliers
def mark_shared(course: Path, view: views.LabView, files: list[str], machines: list[Machine]) -> None:
    """Name, on each machine, the files byte-identical to another student's (:func:`grade.same_data`),
    and mark as a repeat a machine every file of which it is drawn from an earlier machine handed in."""
    students = [m for m in machines if not m.reference and m.submitted]
    shared = grade.same_data(course, grade.Lab(view.name, [], data_files=files), [m.student for m in students])
    by_id = {m.student: m for m in students}
    seen: set[tuple[str, str]] = set()     # (file, student) of the machines listed so far
    for m in students:
        m.shared = {f: [by_id[o].name for o in others] for f, others in shared.get(m.student, {}).items()}
        used = [f for f in view.reads if f in m.usable] if m.values else []
        m.repeat = bool(used) and all(any((f, o) in seen for o in shared.get(m.student, {}).get(f, []))
                                      for f in used)
        seen.update((f, m.student) for f in m.usable)


#: a figure is an outlier if it lies more than this many median absolute deviations from the class median
OUTLIER_MADS = 3
#: fewer machines counted than this: no outlier is marked
OUTLIER_MIN_MACHINES = 5


def mark_outliers(view: views.LabView, machines: list[Machine]) -> None:
    """Add to ``m.outliers`` the figures of the page's table (its columns of fitted numbers) in
    which machine ``m`` lies more than :data:`OUTLIER_MADS` median absolute deviations from the
    class median, both over the machines that count (:func:`class_report_labs.counted`), in the
    logarithm for figures that are all positive (a factor of 10 above as far as 10 below)."""
    import numpy as np

    def number(v):
        return isinstance(v, float) and np.isfinite(v)

    students = [m for m in machines if not m.reference and m.values]
    for c in view.columns:
        if not c.header:
            continue
        base = np.array([c.value(m) for m in students if views.counted(m) and number(c.value(m))])
        if base.size < OUTLIER_MIN_MACHINES:
            continue
        log = bool(np.all(base > 0))
        x = np.log(base) if log else base
        med = np.median(x)
        mad = np.median(np.abs(x - med))
        if mad == 0:
            continue
        for m in students:
            v = c.value(m)
            if number(v) and (v > 0 or not log) and abs((np.log(v) if log else v) - med) > OUTLIER_MADS * mad:
                m.outliers.append(c.header.split(" (")[0].split(" [")[0])


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# ---------------------------------------------------------------- the page
CSS = """
:root { --primary: #0a7d91; --text: #222832; --muted: #5a6270; --rule: #d8dde3; --faint: #f3f5f7; }
html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: var(--text); line-height: 1.5; font-size: 16px; }
body { margin: 0; background: #fff; }
main { max-width: 76rem; margin: 0 auto; padding: 1.5rem 1.5rem 4rem; }
h1 { font-size: 1.9rem; margin: 0.5rem 0 0.2rem; font-weight: 600; }
h1 small { display: block; font-size: 1rem; font-weight: 400; color: var(--muted); }
h2 { font-size: 1.35rem; margin: 2.2rem 0 0.6rem; padding-bottom: 0.2rem; border-bottom: 1px solid var(--rule);
     font-weight: 600; }
p.meta { color: var(--muted); font-size: 0.9rem; margin-top: 0.2rem; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.88em;
       background: var(--faint); padding: 0.05em 0.3em; border-radius: 3px; }
.summary { border-left: 4px solid var(--primary); background: #eef7f9; padding: 0.6rem 1rem; margin: 1rem 0; }
.summary ul { margin: 0; padding-left: 1.2rem; }
figure { margin: 1.5rem 0; }
figure svg { max-width: 100%; height: auto; display: block; }
figcaption { color: var(--muted); font-size: 0.88rem; margin-top: 0.4rem; }
table { border-collapse: collapse; width: 100%; font-size: 0.84rem; margin: 0.5rem 0 1rem; }
th, td { border-bottom: 1px solid var(--rule); padding: 0.3rem 0.45rem; text-align: left; vertical-align: top; }
th { background: var(--faint); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.machines td { white-space: nowrap; }
table.machines td.run { white-space: normal; min-width: 8rem; }
table.machines tr.has-notes td { border-bottom: none; }
table.machines tr.notes td { white-space: normal; color: var(--muted); font-size: 0.78rem; padding-top: 0; }
tr.reference td { background: #f6f6f6; }
tr.over td:first-child { border-left: 3px solid #c2410c; }
.tag { display: inline-block; font-size: 0.75rem; padding: 0 0.4em; border-radius: 3px; white-space: nowrap; }
.tag.over { background: #fde7dc; color: #9a3412; }
.tag.ok { background: #e0f2f1; color: #0f5f59; }
.tag.miss { background: #fef3c7; color: #854d0e; }
.tag.ref { background: #e5e7eb; color: #111827; }
.tag.shared { background: #ede9fe; color: #5b21b6; }
.tag.outlier { background: #fee2e2; color: #991b1b; }
.wide { overflow-x: auto; }
dl.legend dt { font-weight: 600; } dl.legend dd { margin: 0 0 0.4rem 1.2rem; color: var(--muted); }
a { color: var(--primary); }
footer { margin-top: 3rem; color: var(--muted); font-size: 0.8rem; }
"""


def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _precision_tag(text: str) -> str:
    cls = "ok" if text.endswith(" met") or text == "calibration reliable" else "miss"
    return f'<span class="tag {cls}">{_e(text)}</span>'


def machines_table(view: views.LabView, machines: list[Machine]) -> str:
    cols = [c for c in view.columns if c.header]
    width = 5 + len(cols)
    width += 1
    head = ("<tr><th>machine</th><th>run</th><th>MPI</th><th>OS</th><th>precision</th><th>load</th>"
            + "".join(f"<th>{_e(c.header)}</th>" for c in cols) + "</tr>")
    rows = []
    for m in machines:
        if not m.drawn:
            continue
        d = m.description
        run = _e(m.ranks) + (' <span class="tag over">oversubscribed</span>' if m.oversubscribed else "")
        name = _e(m.name) + (' <span class="tag ref">reference</span>' if m.reference else "")
        for f, others in m.shared.items():
            name += f' <span class="tag shared">{_e(f)} same as {_e(", ".join(others))}\'s</span>'
        if m.repeat:
            name += ' <span class="tag shared">not counted again</span>'
        if m.outliers:
            name += f' <span class="tag outlier">outlier: {_e(", ".join(m.outliers))}</span>'
        load = d.get("load_average_1min")
        cells = "".join(f'<td class="num">{_e(c.page(m))}</td>' for c in cols)
        cls = " ".join(k for k, on in (("reference", m.reference), ("over", m.oversubscribed)) if on)
        notes = m.caveats + [f"{p.file}: {p.reason}" for p in m.problems]
        rows.append(f'<tr class="{cls}{" has-notes" if notes else ""}"><td>{name}</td><td class="run">{run}</td>'
                    f"<td>{_e(d.get('mpi_library'))}</td><td>{_e(d.get('os'))}</td>"
                    f"<td>{_precision_tag(d.get('precision', ''))}</td>"
                    f'<td class="num">{"" if load is None else f"{load:.1f}"}</td>{cells}</tr>')
        if notes:
            rows.append(f'<tr class="notes {cls}"><td></td><td colspan="{width - 1}">{_e("; ".join(notes))}</td></tr>')
    return f'<div class="wide"><table class="machines">{head}{"".join(rows)}</table></div>'


def problems_table(machines: list[Machine]) -> str:
    rows = [f"<tr><td>{_e(m.name)}</td><td><code>{_e(p.file)}</code></td><td>{_e(p.reason)}</td>"
            f"<td>{_e(p.effect)}</td></tr>"
            for m in machines for p in m.problems]
    if not rows:
        return "<p>Every file handed in was read.</p>"
    return ('<div class="wide"><table><tr><th>machine</th><th>file</th><th>problem</th><th>consequence</th></tr>'
            + "".join(rows) + "</table></div>")


def page(view: views.LabView, machines: list[Machine], files: list[str], course: Path, command: str,
         figures: list, names: bool) -> str:
    students = [m for m in machines if not m.reference]
    drawn = [m for m in students if m.drawn]
    n_over = sum(1 for m in drawn if m.oversubscribed)
    n_problems = sum(len(m.problems) for m in students)
    summary = view.summary(machines)
    sharing = [m for m in students if m.shared]
    if sharing:
        summary.append(f"{plural(len(sharing), 'machine')} handed in a data file byte-identical to another "
                       "student's (" + "; ".join(f"{_e(m.name)}: {_e(', '.join(m.shared))}" for m in sharing)
                       + "): each such file is counted once in the class medians (the machine listed first "
                       "counts), and tagged in the table.")
    odd = [m for m in students if m.outliers]
    summary.append(f"Outliers: a figure of the table more than {OUTLIER_MADS} median absolute deviations from the "
                   "class median (of the logarithm when every value is positive; over the machines not "
                   f"oversubscribed, a shared file once; at least {OUTLIER_MIN_MACHINES} machines): "
                   + ("; ".join(f"{_e(m.name)} ({_e(', '.join(m.outliers))})" for m in odd) if odd else "none")
                   + ".")
    figs = "".join(f"<figure>{f.svg}<figcaption>{f.caption}</figcaption></figure>" for f in figures)
    checked = "".join(f"<li><code>{_e(f)}</code>: {view.notes[f]}</li>" for f in files if f in view.notes)
    who = "student ids (<code>--names</code>)" if names else "pseudonyms (a keyed hash of each student id)"
    try:
        course = course.relative_to(Path.cwd())
    except ValueError:
        pass
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
{csp_meta()}
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(view.title)}: the class's machines</title>
<style>{CSS}</style>
</head>
<body>
<main>
<h1>{_e(view.title)}<small>The class's machines side by side</small></h1>
<p class="meta">{plural(len(students), "student folder")} in <code>{_e(course)}/submitted</code>;
{plural(len(drawn), "machine")} shown ({n_over} oversubscribed); {plural(n_problems, "hand-in")} not used
(<a href="#not-used">listed below</a>);
machines named by {who}. Files read: {", ".join(f"<code>{_e(f)}</code>" for f in files)}.</p>
<div class="summary"><ul>{"".join(f"<li>{s}</li>" for s in summary)}</ul></div>
<p>{view.about} The reference machine is the lab's own data (<code>source/{_e(view.name)}/</code>), the one
the lab's reference answers are computed from.</p>
{f"<ul>{checked}</ul>" if checked else ""}
{figs or "<p>No machine could be drawn.</p>"}
<h2 id="machines">Machines</h2>
{machines_table(view, machines)}
<h2 id="not-used">Hand-ins not used</h2>
{problems_table(students)}
<h2 id="labels">Reading the labels</h2>
<dl class="legend">
<dt>ranks</dt><dd>the MPI ranks of the run and the cores its process could use, as the file records them.</dd>
<dt>oversubscribed</dt><dd>ranks outnumbered cores: the times include the operating system's scheduling, not
only the machine's communication. Drawn hollow in orange and kept out of the class medians.</dd>
<dt>precision</dt><dd>whether the benchmark stopped because every median's 95 % interval was within its
target (met), or because its time budget or repetition cap ran out first (missed); for lab 5, whether the
calibration was reliable. "not recorded": the file predates the record.</dd>
<dt>MPI, OS</dt><dd>the MPI library and the operating system the file records.</dd>
<dt>load</dt><dd>the machine's load average over the minute before the run (the file's
<code>load_average_1min</code>): above its core count, other programs competed with the measurement.</dd>
<dt>same as</dt><dd>the file is byte for byte another student's: one measurement handed in twice. Both
machines are shown; only the first counts in the class medians.</dd>
<dt>outlier</dt><dd>the figures named lie more than {OUTLIER_MADS} median absolute deviations from the class
median (the rule is in the summary above): a machine unlike the others, or a measurement to check.</dd>
</dl>
<footer>Made by <code>{_e(command)}</code> on {_dt.datetime.now().strftime("%Y-%m-%d %H:%M")}.
A static page: nothing in it is loaded from anywhere. The numbers are in <code>{_e(view.name)}.csv</code>
beside it.</footer>
</main>
</body>
</html>
"""


# ---------------------------------------------------------------- the CSV
def write_csv(path: Path, view: views.LabView, machines: list[Machine], names: bool) -> None:
    columns = ["machine", *(["student"] if names else []), "status", "problems", "caveats", "ranks", "cores",
               "oversubscribed", "mpi_library", "os", "precision", "load_average_1min", "shared", "outliers",
               *(c.csv for c in view.columns)]
    fh = io.StringIO(newline="")
    w = csv.writer(fh)
    w.writerow(columns)
    for m in machines:
        d = m.description
        row = [m.name, *([m.student] if names else []), m.status,
               "; ".join(f"{p.file}: {p.reason}" for p in m.problems), "; ".join(m.caveats),
               "; ".join(f"{f}: {r}" for f, r in m.ranks_by_file.items()) if len(set(m.ranks_by_file.values())) > 1
               else d.get("ranks", ""), d.get("cores", ""),
               "" if not d else ("yes: " + d["oversubscribed"] if d.get("oversubscribed") else "no"),
               d.get("mpi_library", ""), d.get("os", ""), d.get("precision", ""),
               None if d.get("load_average_1min") is None else float(f"{d['load_average_1min']:.3g}"),
               "; ".join(f"{f}: same as {', '.join(o)}" + (" (not counted again)" if m.repeat else "")
                         for f, o in m.shared.items()),
               ", ".join(m.outliers)]
        row += [c.value(m) if m.values else None for c in view.columns]
        # texts (a student's id, names and strings from the files) never start a formula;
        # numbers stay numbers
        w.writerow(["" if v is None else repr(v) if isinstance(v, float) else csv_cell(v) for v in row])
    outputs.write_text(path, fh.getvalue())


# ---------------------------------------------------------------- command line
def report(course: Path, lab: str, out: Path, names: bool = False, command: str = "") -> dict:
    """Write ``out/<lab>.html`` and ``out/<lab>.csv``; return what was done."""
    view = views.LABS[lab]
    files = list(grade.course_config(course).Autograde.get("exclude_overwriting", {}).get(lab, []))
    if not files:
        raise SystemExit(f"class_report.py: {lab} has no data files in {course / 'nbgrader_config.py'} "
                         "(Autograde.exclude_overwriting)")
    submitted = course / "submitted"
    students = sorted(p.name for p in submitted.iterdir() if p.is_dir()) if submitted.is_dir() else []
    label = {s: s for s in students} if names else pseudonyms(students, course_key(course))
    machines = [build_machine(course, view, files, course / "source" / lab, "", "reference", "ref", reference=True)]
    for i, s in enumerate(sorted(students, key=label.get)):
        machines.append(build_machine(course, view, files, submitted / s / lab, s, label[s], f"m{i}"))
    mark_shared(course, view, files, machines)
    mark_outliers(view, machines)
    try:
        with views.figure_style():
            figures = view.figures([m for m in machines if m.drawn])
    except Exception as exc:  # noqa: BLE001 (the table and the list of hand-ins are still worth a page)
        figures = [views.Figure("", f"The figures could not be drawn: {type(exc).__name__}: {html.escape(str(exc))}")]
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
    p.add_argument("--lab", required=True, choices=sorted(views.LABS),
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
