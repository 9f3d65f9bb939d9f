"""The class report (labs/class_report.py) on a synthetic class, without grading.

:func:`make_course` builds a temporary course of 12 students whose lab 1, 3 and 5 files are the
reference files of ``labs/source/`` with a seeded perturbation per student (every time scaled
by a factor of the student's own; per barrier algorithm another, so that rankings differ; lab 5's
measured times scaled and its errors recomputed), plus the files a class hands in by mistake: a
truncated file, a file of the wrong kind, one that is not JSON, a missing file, a folder without
the lab, a run on the wrong number of ranks, a copy of the reference file, and oversubscribed
runs (ranks above the cores recorded).  The tests check the CSV against values computed here
from those files with plain numpy, and that every bad file is on the page with its reason.
"""

from __future__ import annotations

import copy
import csv
import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.alpha_beta_reference import least_squares_interval

ROOT = Path(__file__).resolve().parent.parent
LABS = ROOT / "labs"
STUDENTS = [f"u{n}" for n in (1034, 1187, 1290, 1342, 1411, 1569, 1603, 1748, 1822, 1905, 1977, 2031)]
#: what goes wrong, and where
TRUNCATED, WRONG_KIND, NOT_JSON, MISSING, NO_FOLDER = "u1290", "u1411", "u1569", "u1748", "u1905"
WRONG_RANKS, COPY, OVER, OVER3, OVER5, RECOMPUTED = "u1822", "u2031", "u1603", "u1977", "u1187", "u1342"
#: lab 1: a file recording its fit's intervals by today's method (as the test computes them), and one
#: recording today's method with made-up intervals; the others keep the reference file's old ones
TODAYS, FORGED = "u1034", "u1411"
#: the method the reference file's intervals were recorded with: a percentile bootstrap on minima,
#: whose estimate sits on its interval's lower edge or below it
OLD_MINIMA_METHOD = ("relative least squares on the per-size minima; 95 % percentile bootstrap over the rounds: "
                     "whole rounds drawn with replacement, the same for every size, 200 replicates, seed 0")


def _scale(obj, k):
    """Every time in a benchmark record (keys ending in _s or _s_per_byte) times k."""
    if isinstance(obj, dict):
        return {key: (_times(v, k) if key.endswith(("_s", "_s_per_byte")) else _scale(v, k)) for key, v in obj.items()}
    if isinstance(obj, list):
        return [_scale(v, k) for v in obj]
    return obj


def _times(v, k):
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        return v * k
    if isinstance(v, list):
        return [_times(x, k) for x in v]
    if isinstance(v, dict):
        return {key: _times(x, k) for key, x in v.items()}
    return v


def _oversubscribe(rec, ranks, cores):
    """The record of a run of ``ranks`` ranks on a machine that gave it ``cores`` cores: only the
    counts change, not the file's own flags."""
    rec["environment"]["ranks"], rec["environment"]["cores"] = ranks, cores
    place = rec["environment"].get("placement")
    if place:
        place["nodes"][0].update(ranks=ranks, cores=cores)
    return rec


def _write(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")


def make_course(root: Path, students=STUDENTS, seed: int = 7, more: bool = False) -> Path:
    """A course folder (``nbgrader_config.py``, ``source/`` of labs 1, 3, 5, ``submitted/``);
    ``more``: labs 2 and 4 too (:func:`add_labs_2_and_4`)."""
    from mpi_exercises.bench import pingpong

    course = root / "course"
    course.mkdir(parents=True)
    shutil.copy(LABS / "nbgrader_config.py", course)
    for lab in ("lab1", "lab3", "lab5") + (("lab2", "lab4") if more else ()):
        shutil.copytree(LABS / "source" / lab, course / "source" / lab, ignore=shutil.ignore_patterns("*.ipynb"))
    if more:
        add_labs_2_and_4(course, students, seed)
    ref = {name: json.loads((LABS / "source" / lab / name).read_text()) for lab, name in
           (("lab1", "pingpong.json"), ("lab3", "logp.json"), ("lab3", "barriers.json"), ("lab5", "predict.json"))}
    rng = np.random.default_rng(seed)
    for student in students:
        k = float(rng.uniform(0.5, 3.0))
        sub = course / "submitted" / student
        # lab 1
        pp = _scale(copy.deepcopy(ref["pingpong.json"]), k)
        if student == RECOMPUTED:    # a different n1/2: latency added to every sample, the file's fit no longer its own
            for r in pp["results"]:
                for key in ("min_s", "p25_s", "median_s", "p75_s", "max_s"):
                    r[key] += 0.7e-6
                r["times_s"] = [t + 0.7e-6 for t in r["times_s"]]
        if student in (TODAYS, FORGED):
            est, lo, hi = least_squares_interval(pp["results"])
            if student == FORGED:
                lo, hi = lo * 0.5, hi * 1.5
            pp["fit"]["alpha_beta"].update(alpha_ci_s=[lo[0], hi[0]], beta_ci_s_per_byte=[lo[1], hi[1]],
                                           ci_method=pingpong.CI_METHODS["min_s"])   # a file made today
        if student == OVER:
            _oversubscribe(pp, 2, 1)
        if student == WRONG_RANKS:
            _oversubscribe(pp, 4, 8)
        _write(sub / "lab1" / "pingpong.json", pp)
        if student == TRUNCATED:
            text = json.dumps(pp)
            _write(sub / "lab1" / "pingpong.json", text[: len(text) // 3])
        if student == COPY:
            shutil.copy(LABS / "source" / "lab1" / "pingpong.json", sub / "lab1" / "pingpong.json")
        # lab 3
        lg = _scale(copy.deepcopy(ref["logp.json"]), k)
        bar = copy.deepcopy(ref["barriers.json"])
        for r in bar["results"]:
            f = k * float(rng.uniform(0.8, 1.25))
            for key in ("min_s", "p25_s", "median_s", "p75_s", "max_s"):
                r[key] *= f
        if student == OVER3:
            _oversubscribe(bar, 4, 2)
        if student != MISSING:
            _write(sub / "lab3" / "logp.json", lg)
        _write(sub / "lab3" / "barriers.json", lg if student == WRONG_KIND else bar)
        # lab 5: measured times scaled, predictions kept, errors recomputed
        if student == NO_FOLDER:
            continue
        pr = copy.deepcopy(ref["predict.json"])
        m = float(rng.uniform(0.6, 1.8))
        for r in pr["rows"]:
            r["measured_s"] *= m
            for key in ("relative_error", "relative_error_network"):
                times = r["predicted_s"] if key == "relative_error" else r["network_s"]
                r[key] = {model: (t - r["measured_s"]) / r["measured_s"] for model, t in times.items()}
        for model, parts in pr["summary"].items():
            for part, key in (("with_software", "relative_error"), ("network_only", "relative_error_network")):
                parts[part]["median_abs"] = float(np.median([abs(r[key][model]) for r in pr["rows"] if r[key]]))
        if student == OVER5:
            _oversubscribe(pr, 4, 2)
            pr["valid"] = False
        _write(sub / "lab5" / "predict.json", pr)
        _write(sub / "lab5" / "pingpong.json", pp)
        _write(sub / "lab5" / "logp.json", lg)
        if student == NOT_JSON:
            _write(sub / "lab5" / "predict.json", "predict.json\nalpha-beta 43 %\n")
    return course


def add_labs_2_and_4(course: Path, students, seed: int) -> None:
    """Labs 2 and 4 of every student: the reference files (measured oversubscribed) with every time
    scaled, the f(L) jig's times of L links by a factor growing with L (so f differs), and the
    ranks given as many cores (not oversubscribed)."""
    rng = np.random.default_rng(seed + 1)
    jig0 = json.loads((LABS / "source" / "lab2" / "testjig.json").read_text())
    runs0 = json.loads((LABS / "source" / "lab2" / "allreduce.json").read_text())
    lop0 = json.loads((LABS / "source" / "lab4" / "lop.json").read_text())
    for student in students:
        k, u = float(rng.uniform(0.5, 2.0)), float(rng.uniform(0.0, 0.4))
        jig = _oversubscribe(copy.deepcopy(jig0), 4, 4)
        jig["oversubscribed"] = False
        factor = {L: k * (1 + u * (L - 1)) for L in (1, 2, 4, 6)}
        for r in jig["results"]:
            for key in ("min_s", "p25_s", "median_s", "p75_s", "max_s"):
                r[key] *= factor[r["L"]]
        jig["table"]["T_s"] = {L: [t * factor[int(L)] for t in ts] for L, ts in jig["table"]["T_s"].items()}
        runs = {"runs": [{**_oversubscribe(_scale(r, k), 4, 4), "oversubscribed": False}
                         for r in copy.deepcopy(runs0["runs"])]}
        lop = _oversubscribe(_scale(copy.deepcopy(lop0), k), 8, 8)
        lop["oversubscribed"] = False
        _write(course / "submitted" / student / "lab2" / "testjig.json", jig)
        _write(course / "submitted" / student / "lab2" / "allreduce.json", runs)
        _write(course / "submitted" / student / "lab4" / "lop.json", lop)


# ---------------------------------------------------------------- running it
def _module():
    sys.path.insert(0, str(LABS))
    import class_report

    return class_report


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    return make_course(tmp_path_factory.mktemp("class"))


@pytest.fixture(scope="module")
def reports(course):
    """``{lab: (rows by student, page)}``, made with --names (rows keyed by student id)."""
    out = {}
    for lab in ("lab1", "lab3", "lab5"):
        assert _module().main(["--lab", lab, "--course", str(course), "--out", str(course / "named"), "--names"]) == 0
        with open(course / "named" / f"{lab}.csv", newline="", encoding="utf-8") as fh:
            rows = {r["student"] or "(reference)": r for r in csv.DictReader(fh)}
        out[lab] = rows, (course / "named" / f"{lab}.html").read_text(encoding="utf-8")
    return out


def _load(course, student, lab, name):
    return json.loads((course / "submitted" / student / lab / name).read_text())


def _used(rows):
    return {s: r for s, r in rows.items() if r["status"] == "used"}


# ---------------------------------------------------------------- lab 1
def test_lab1_alpha_beta_are_the_relative_least_squares_of_each_file(course, reports):
    rows, _ = reports["lab1"]
    used = _used(rows)
    expected = set(STUDENTS) - {TRUNCATED, WRONG_RANKS, COPY}
    assert set(used) == expected, {s: (r["status"], r["problems"]) for s, r in rows.items()}
    for s, row in used.items():
        res = _load(course, s, "lab1", "pingpong.json")["results"]
        n = np.array([r["bytes"] for r in res], float)
        t = np.array([r["min_s"] for r in res], float)     # the statistic of pingpong.fit_file
        # minimise sum(((a + b n - t) / t)^2): a linear least-squares problem in (a, b)
        a, b = np.linalg.lstsq(np.column_stack([1 / t, n / t]), np.ones_like(t), rcond=None)[0]
        assert float(row["alpha_s"]) == pytest.approx(a, rel=1e-6), s
        assert float(row["beta_s_per_byte"]) == pytest.approx(b, rel=1e-6), s
        assert float(row["n_half_bytes"]) == pytest.approx(a / b, rel=1e-6), s
        assert float(row["alpha_ci_low_s"]) <= float(row["alpha_s"]) <= float(row["alpha_ci_high_s"]), s
        assert (float(row["beta_ci_low_s_per_byte"]) <= float(row["beta_s_per_byte"])
                <= float(row["beta_ci_high_s_per_byte"])), s


def test_lab1_intervals_are_the_least_squares_ones_and_a_file_of_the_old_method_is_recomputed(course, reports):
    """Every file's α and β intervals are the least-squares ones of its minima (estimate ± t(0.975,
    sizes - 2) standard errors), computed here: the file's own ("recorded") only if it holds these
    by today's method; the reference file and the files scaled from it record the old percentile
    bootstrap on minima, whose estimate sat on the interval's edge, and get theirs recomputed, as
    does a file recording today's method with made-up numbers, or whose fit is no longer its data's."""
    rows, _ = reports["lab1"]
    source = json.loads((LABS / "source" / "lab1" / "pingpong.json").read_text())
    assert source["fit"]["alpha_beta"]["ci_method"] == OLD_MINIMA_METHOD     # the case this test is about
    for s, row in list(_used(rows).items()) + [("(reference)", rows["(reference)"])]:
        mine = source if s == "(reference)" else _load(course, s, "lab1", "pingpong.json")
        est, lo, hi = least_squares_interval(mine["results"])
        assert row["interval"] == ("recorded" if s == TODAYS else "recomputed"), s
        for k, name in enumerate(("alpha", "beta")):
            key = "s" if name == "alpha" else "s_per_byte"
            low, value, high = (float(row[f"{name}_ci_low_{key}"]), float(row[f"{name}_{key}"]),
                                float(row[f"{name}_ci_high_{key}"]))
            assert (low, high) == pytest.approx((lo[k], hi[k]), rel=1e-6), (s, name)
            assert low < value < high and value - low == pytest.approx(high - value, rel=1e-6), (s, name)
    forged = _load(course, FORGED, "lab1", "pingpong.json")["fit"]["alpha_beta"]
    assert float(rows[FORGED]["alpha_ci_low_s"]) != pytest.approx(forged["alpha_ci_s"][0], rel=1e-3)


def test_lab1_one_fit_named_on_the_page_and_in_the_reference_file(course, reports):
    """The page names the statistic of the fit (the minimum, as lab 1 and pingpong.fit_file); the
    reference file's recorded fit is that of its minima; a recomputed interval is file_fit's."""
    from mpi_exercises.bench import pingpong

    rows, page = reports["lab1"]
    assert "relative least squares on the minimum one-way times of each size (<code>min_s</code>" in page
    assert "relative least squares on the per-size minimum one-way times" in page
    assert "median one-way" not in page and "per-size medians" not in page
    assert "the least-squares interval, estimate ± t(0.975, sizes − 2) standard errors" in page
    assert "bootstrap" not in page
    source = json.loads((LABS / "source" / "lab1" / "pingpong.json").read_text())
    n = np.array([r["bytes"] for r in source["results"]], float)
    t = np.array([r["min_s"] for r in source["results"]], float)
    a, b = np.linalg.lstsq(np.column_stack([1 / t, n / t]), np.ones_like(t), rcond=None)[0]
    assert source["fit"]["statistic"] == "min_s"
    assert source["fit"]["alpha_beta"]["alpha_s"] == pytest.approx(a, rel=1e-9)
    assert source["fit"]["alpha_beta"]["beta_s_per_byte"] == pytest.approx(b, rel=1e-9)
    row = rows[RECOMPUTED]
    ab, how = pingpong.file_fit(_load(course, RECOMPUTED, "lab1", "pingpong.json"))
    assert how == "recomputed" and "least-squares interval" in ab["ci_method"]
    assert float(row["alpha_ci_low_s"]) == pytest.approx(ab["alpha_ci_s"][0], rel=1e-9)
    assert float(row["beta_ci_high_s_per_byte"]) == pytest.approx(ab["beta_ci_s_per_byte"][1], rel=1e-9)


def test_lab1_notebook_and_class_report_show_one_alpha_and_beta(reports):
    """Lab 1's stored output (its fit of the reference file) and the report's reference row agree."""
    nb = json.loads((LABS / "source" / "lab1" / "lab1.ipynb").read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "fit")
    text = "".join("".join(o.get("text", "")) for o in cell["outputs"])
    m = re.search(r"alpha = ([0-9.]+) µs, 1/beta = ([0-9]+) MB/s", text)
    assert m, text
    row = reports["lab1"][0]["(reference)"]
    assert float(m.group(1)) == pytest.approx(float(row["alpha_s"]) * 1e6, abs=0.0005)
    assert float(m.group(2)) == pytest.approx(1e-6 / float(row["beta_s_per_byte"]), abs=0.5)


def test_lab1_bad_files_are_listed_with_their_reason(reports):
    rows, page = reports["lab1"]
    why = {TRUNCATED: "cut short", WRONG_RANKS: "measured with 4 ranks, but this lab needs exactly 2",
           COPY: "a copy of the reference file"}
    for s, text in why.items():
        assert rows[s]["status"] == "not used" and text in rows[s]["problems"], rows[s]
        assert re.search(rf"<td>{s}</td><td><code>pingpong.json</code></td><td>[^<]*{re.escape(text)}", page), s
    assert rows[OVER]["status"] == "used" and rows[OVER]["oversubscribed"].startswith("yes: 2 ranks on 1 core")
    assert re.search(rf"<tr class=\"over[^\"]*\"><td>{OVER}</td>", page)
    assert "0 oversubscribed" not in page


def test_lab1_class_median_leaves_oversubscribed_runs_out(reports):
    rows, page = reports["lab1"]
    alphas = [float(r["alpha_s"]) for s, r in _used(rows).items() if s != OVER]
    assert f"Class median α = {np.median(alphas) * 1e6:.3g} µs" in page


# ---------------------------------------------------------------- lab 3
def _netgauge(data):
    """LogGP from the minima by Netgauge's equations, as lab 3 states them."""
    res, n = data["results"], data["parameters"]["n"]
    s = np.array([r["bytes"] for r in res], float)
    d = np.array([r["d_s"] for r in res])
    r1, rn0, rnd, o_r = (np.array([r[k]["min_s"] for r in res]) for k in ("prtt_1_0", "prtt_n_0", "prtt_n_d", "o_r"))
    x = np.maximum(s - 1, 0)
    gap = (rn0 - r1) / (n - 1)
    o_s_s = (rnd - r1) / (n - 1) - d
    above = gap > 1.05 * o_s_s
    G, g = np.polyfit(x[above], gap[above], 1)
    small = (s <= 64) | (s == s[0])
    L = np.median(r1[small] / 2 - o_s_s[small] - o_r[small] - x[small] * G)
    return {"L_s": max(L, 0.0), "o_s_s": np.median(o_s_s[small]), "o_r_s": np.median(o_r[small]), "g_s": g,
            "G_s_per_byte": G}


def test_lab3_logp_parameters_and_barrier_ranking(course, reports):
    rows, _ = reports["lab3"]
    for s in set(STUDENTS) - {MISSING}:
        row = rows[s]
        want = _netgauge(_load(course, s, "lab3", "logp.json"))
        for key, value in want.items():
            assert float(row[key]) == pytest.approx(value, rel=1e-6, abs=1e-15), (s, key)
        if s == WRONG_KIND:
            assert row["status"] == "partly used" and row["fastest_measured"] == ""
            continue
        bar = _load(course, s, "lab3", "barriers.json")["results"]
        order = [r["algorithm"] for r in sorted(bar, key=lambda r: r["min_s"])]
        assert row["ranking_measured"] == " < ".join(order) and row["fastest_measured"] == order[0], s
        assert len(row["ranking_predicted"].split(" < ")) == len(order) - 1     # MPI's own is not predicted
    assert rows[MISSING]["status"] == "partly used" and rows[MISSING]["L_s"] == ""


def test_lab3_bad_files_are_listed_with_their_reason(reports):
    rows, page = reports["lab3"]
    assert ("barriers.json: holds the result of `logp`, not the result of `barrier-bench`. Write it again, from the "
            "lab's folder, with: mpiexec -n <cores> python -m mpi_exercises barrier-bench --json barriers.json"
            in rows[WRONG_KIND]["problems"])
    assert "logp.json: missing" in rows[MISSING]["problems"]
    for s, f, text, effect in ((WRONG_KIND, "barriers.json", "holds the result of `logp`",
                                "shown without barriers.json"),
                               (MISSING, "logp.json", "missing", "shown without logp.json")):
        assert re.search(rf"<td>{s}</td><td><code>{f}</code></td><td>{re.escape(html.escape(text))}[^<]*</td>"
                         rf"<td>{effect}</td>", page), s
    assert "barriers.json oversubscribed (4 ranks on 2 cores)" in rows[OVER3]["caveats"]
    assert rows[OVER3]["ranks"] == "logp.json: 2; barriers.json: 4"


# ---------------------------------------------------------------- lab 5
def test_lab5_median_errors_per_model(course, reports):
    rows, _ = reports["lab5"]
    shown = set(STUDENTS) - {NOT_JSON, NO_FOLDER}
    assert {s for s, r in rows.items() if r["status"] == "used"} == shown
    for s in shown:
        data = _load(course, s, "lab5", "predict.json")
        for model in ("alpha-beta", "nbl", "loggp"):
            for key, col in (("relative_error", f"{model}_median_abs_error"),
                             ("relative_error_network", f"{model}_median_abs_error_network_only")):
                want = np.median([abs(r[key][model]) for r in data["rows"] if model in r[key]])
                assert float(rows[s][col]) == pytest.approx(want, rel=1e-9), (s, col)
        best = min(("alpha-beta", "nbl", "loggp"), key=lambda m: float(rows[s][f"{m}_median_abs_error"]))
        assert rows[s]["best_model"] == best


def test_lab5_bad_files_are_listed_with_their_reason(reports):
    rows, page = reports["lab5"]
    assert rows[NOT_JSON]["status"] == "not used" and "predict.json: not JSON" in rows[NOT_JSON]["problems"]
    assert rows[NO_FOLDER]["status"] == "not submitted" and "not submitted" in rows[NO_FOLDER]["problems"]
    assert rows[OVER5]["oversubscribed"].startswith("yes: 4 ranks on 2 cores")
    assert re.search(rf"<td>{NOT_JSON}</td><td><code>predict.json</code></td><td>not JSON", page)
    assert re.search(rf"<td>{NO_FOLDER}</td><td><code>lab5/</code></td><td>no lab5 folder", page)


def test_files_the_fits_refuse_are_listed_and_the_rest_shown(tmp_path):
    """Files that pass the loader but not the lab's computation: the page still comes out, each
    listed with why, and the machine keeps whatever else it handed in."""
    students = ["v101", "v102", "v103", "v104"]
    course = make_course(tmp_path, students)

    def edit(student, lab, name, change):
        path = course / "submitted" / student / lab / name
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data))

    edit(students[0], "lab1", "pingpong.json", lambda d: d["results"][0].update(min_s="fast"))
    edit(students[1], "lab1", "pingpong.json", lambda d: d.update(results=d["results"][:1]))
    edit(students[0], "lab3", "logp.json", lambda d: d["parameters"].update(n=0))
    edit(students[1], "lab3", "barriers.json", lambda d: d["results"][0].update(algorithm="no_such_barrier"))
    edit(students[0], "lab5", "predict.json", lambda d: d["rows"][0].update(relative_error=5))
    rows = {}
    for lab in ("lab1", "lab3", "lab5"):
        assert _module().main(["--lab", lab, "--course", str(course), "--out", str(tmp_path / "out"), "--names"]) == 0
        with open(tmp_path / "out" / f"{lab}.csv", newline="", encoding="utf-8") as fh:
            rows[lab] = {r["student"]: r for r in csv.DictReader(fh)}
    lab1, lab5 = rows["lab1"][students[0]], rows["lab5"][students[0]]
    assert lab1["status"] == "not used" and "malformed results" in lab1["problems"]
    assert "cannot fit α and β" in rows["lab1"][students[1]]["problems"]
    first = rows["lab3"][students[0]]
    assert first["status"] == "partly used" and first["problems"].startswith("logp.json: cannot fit LogGP")
    assert first["L_s"] == "" and first["fastest_measured"]          # its barriers are still ranked
    assert "no schedule for the barrier 'no_such_barrier'" in rows["lab3"][students[1]]["caveats"]
    assert lab5["status"] == "not used" and "malformed rows" in lab5["problems"]
    assert all(rows[lab][s]["status"] == "used" for lab in rows for s in students[2:])


# ---------------------------------------------------------------- labs 2 and 4
def test_labs_2_and_4(tmp_path):
    """f(L): the least-squares slope of each L's jig times over the L = 1 slope, from the file's
    table; L(p) at p = 1 and the chosen n as the benchmark stored them; the fastest n measured."""
    students = ["v201", "v202", "v203", "v204"]
    course = make_course(tmp_path, students, more=True)
    cr = _module()
    for lab in ("lab2", "lab4"):
        assert cr.main(["--lab", lab, "--course", str(course), "--out", str(tmp_path / "out"), "--names"]) == 0
    with open(tmp_path / "out" / "lab2.csv", newline="", encoding="utf-8") as fh:
        rows = {r["student"]: r for r in csv.DictReader(fh)}
    for s in students:
        table = _load(course, s, "lab2", "testjig.json")["table"]
        S = np.array(table["S"], float)
        slope = {int(L): np.polyfit(S, np.array(t), 1)[0] for L, t in table["T_s"].items()}
        for L in (2, 4, 6):
            assert float(rows[s][f"f{L}"]) == pytest.approx(slope[L] / slope[1], rel=1e-6), (s, L)
        assert float(rows[s]["beta_s_per_elem"]) == pytest.approx(slope[1], rel=1e-6)
        assert rows[s]["status"] == "used" and rows[s]["oversubscribed"] == "no" and rows[s]["allreduce_runs"] == "10"
    assert rows[""]["oversubscribed"].startswith("yes: 4 ranks on 2 cores")       # the reference files
    with open(tmp_path / "out" / "lab4.csv", newline="", encoding="utf-8") as fh:
        rows = {r["student"]: r for r in csv.DictReader(fh)}
    for s in students:
        lop = _load(course, s, "lab4", "lop.json")
        assert float(rows[s]["L1_s"]) == pytest.approx(lop["prediction"]["single"]["L_s"][0], rel=1e-9)
        assert int(rows[s]["best_n_predicted"]) == lop["prediction"]["single"]["best_n"]
        assert int(rows[s]["best_n_measured"]) == min(lop["barrier"], key=lambda r: r["min_s"])["options"]["n"]
    page = (tmp_path / "out" / "lab4.html").read_text(encoding="utf-8")
    assert page.count("<svg") == 1 and "<script" not in page


# ---------------------------------------------------------------- the page
@pytest.mark.parametrize("lab", ["lab1", "lab3", "lab5"])
def test_the_page_is_self_contained(reports, lab):
    _, page = reports[lab]
    assert page.count("<svg") >= 1 and "<script" not in page and "<link" not in page and "<img" not in page
    external = re.findall(r'(?:src|href)\s*=\s*"(?!#|data:)[^"]*"', page)
    assert not external, external
    assert re.search(r"url\((?!#)", page) is None


def test_pseudonyms_hide_ids_and_are_stable(course, tmp_path):
    cr = _module()
    assert cr.main(["--lab", "lab5", "--course", str(course), "--out", str(tmp_path)]) == 0
    text = (tmp_path / "lab5.html").read_text(encoding="utf-8") + (tmp_path / "lab5.csv").read_text(encoding="utf-8")
    assert not [s for s in STUDENTS if s in text]
    with open(tmp_path / "lab5.csv", newline="", encoding="utf-8") as fh:
        names = [r["machine"] for r in csv.DictReader(fh)]
    assert len(set(names)) == len(STUDENTS) + 1
    assert all(re.fullmatch(r"reference|[a-z]+ [a-z]+( \d+)?", n) for n in names), names
    # the same in every run and every lab (the course's key), whoever else is in the class
    key = cr.course_key(course)
    assert sorted(names[1:]) == sorted(cr.pseudonyms(STUDENTS, key).values())
    assert cr.pseudonyms(STUDENTS[:3], key)[STUDENTS[0]] == cr.pseudonyms(STUDENTS, key)[STUDENTS[0]]
    assert cr.pseudonyms(STUDENTS, b"another course's key") != cr.pseudonyms(STUDENTS, key)


@pytest.mark.cli
def test_command_line_and_make_target(course, tmp_path, capsys):
    run = subprocess.run([sys.executable, str(LABS / "class_report.py"), "--lab", "lab3", "--course", str(course),
                          "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "lab3: 12 student folders, 12 machines shown, 2 hand-ins not used" in run.stdout
    assert (tmp_path / "lab3.html").is_file() and (tmp_path / "lab3.csv").is_file()
    with pytest.raises(SystemExit) as exc:
        _module().main(["--lab", "lab6"])
    assert exc.value.code == 2 and "invalid choice: 'lab6'" in capsys.readouterr().err
    make = subprocess.run(["make", "-n", "class-report", "LAB=lab3"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert make.returncode == 0 and "labs/class_report.py --lab lab3" in make.stdout, make.stdout + make.stderr
