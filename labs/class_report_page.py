"""The class report's page and CSV: one self-contained HTML page (inline SVG and CSS, no script,
a Content Security Policy; every text from a hand-in escaped) and the same numbers as CSV (a
text that would start a spreadsheet formula prefixed by ``'``), both written whole or not at all.
"""

from __future__ import annotations

import csv
import datetime as _dt
import html
import io
from pathlib import Path

from class_report_machines import OUTLIER_MADS, OUTLIER_MIN_MACHINES, Machine, plural
from class_report_views import LabView
from netmodels import outputs
from page_safety import csp_meta, csv_cell  # what a page and a CSV let through of a hand-in

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


def machines_table(view: LabView, machines: list[Machine]) -> str:
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


def page(view: LabView, machines: list[Machine], files: list[str], course: Path, command: str,
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
def write_csv(path: Path, view: LabView, machines: list[Machine], names: bool) -> None:
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
