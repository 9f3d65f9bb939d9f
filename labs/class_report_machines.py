"""The class report's machines: each student folder's data files read with the labs' own
loader (:mod:`mpi_exercises.labdata`), what a record says of its machine (ranks and cores,
oversubscribed, MPI, OS, precision, load), the pseudonyms, a lab's view applied to one folder
(:func:`build_machine`), and the marks across the class (byte-identical files, outliers).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

import grade  # the course's layout: reference copies, files handed in twice
from class_report_views import LabView, Unusable, counted, records
from mpi_exercises.labspec import kind_of

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
        return labdata.load(path, kind_of(name), root=root), None
    except labdata.LabDataError as exc:       # the file's own name, not its path (which holds the student id)
        return None, str(exc).removeprefix(f"{path}: ").replace(str(path), name).replace(str(path.parent),
                                                                                          "the lab's folder")


def again(name: str, why: str) -> str:
    """``why``, then the command that writes the file (the labs' loader's wording)."""
    from mpi_exercises import labdata

    return labdata.message(name, kind_of(name), why).removeprefix(f"{name}: ")


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
        if rec.get("reliable") is True and rec.get("stable") is False:   # precise, yet the machine changed
            largest = (rec.get("drift") or {}).get("largest")
            return "calibration reliable, machine changed during the run" + (
                f" ({largest:.0%})" if isinstance(largest, (int, float)) else "")
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
#: the words of the pseudonyms, in the order that fixes every course's pseudonyms (append, never reorder)
ADJECTIVES = tuple("""
    amber brave calm clever crimson dapper eager fancy gentle golden happy humble icy jolly keen kind
    lively lucky mellow merry misty nimble noble olive plucky polite proud quick quiet rapid rosy rusty
    sandy shy silver sleepy snowy sober spry steady stormy sunny swift tame tidy tiny upbeat vivid warm
    wily witty young zesty bold breezy cosy dusky fuzzy hazy jade lunar mossy peppy ruby
""".split())
ANIMALS = tuple("""
    otter badger falcon heron lynx marten newt ocelot panda quail raven salmon tapir urchin vole walrus
    yak zebra beaver bison camel dingo egret ferret gecko hare ibis jackal koala lemur moose narwhal
    owl puffin robin seal toucan viper wombat alpaca bat crane dolphin eel finch gibbon hedgehog iguana
    jay kiwi lark mole numbat orca pika quokka rhino stoat tern weasel wren yeti mink cod
""".split())


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


def build_machine(course: Path, view: LabView, files: list[str], folder: Path, student: str, name: str,
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
            recs = records(f, m.usable[f])
            m.description = describe(recs[0])
            break
    for f in view.reads:
        if f in m.usable:
            rec = records(f, m.usable[f])[0]
            m.ranks_by_file[f] = (rec.get("environment") or {}).get("ranks")
            over = next((oversubscription(r) for r in records(f, m.usable[f]) if oversubscription(r)), None)
            if over:
                m.description["oversubscribed"] = m.description.get("oversubscribed") or over
                m.caveats.append(f"{f} oversubscribed ({over}): its times include the scheduler; "
                                 "kept out of the class medians")
    while readable:     # a file the lab's computation refuses is left out, the others still shown
        try:
            values, caveats = view.extract({f: m.usable[f] for f in readable})
            m.values, m.caveats = values, m.caveats + caveats
            break
        except Unusable as exc:
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
def mark_shared(course: Path, view: LabView, files: list[str], machines: list[Machine]) -> None:
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


def mark_outliers(view: LabView, machines: list[Machine]) -> None:
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
        base = np.array([c.value(m) for m in students if counted(m) and number(c.value(m))])
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
