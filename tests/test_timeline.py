"""The timeline figure (netmodels.figures.timeline) and ``python -m netmodels timeline``.

Two synthetic traces that agree up to a step and then part check :func:`first_parting` and the
mark the figure draws; a brute-force loop over the bins of a random trace checks the
aggregation; the CLI's JSON is the engine's trace, its pictures are pictures.
"""

from __future__ import annotations

import json
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from netmodels.algorithms import registry  # noqa: E402
from netmodels.figures import timeline as tl  # noqa: E402
from netmodels.models import table  # noqa: E402
from netmodels.simulate import simulate  # noqa: E402
from netmodels.simulate import trace as tr  # noqa: E402
from tests.mpirun import ROOT  # noqa: E402

US = 1e-6


def lockstep(p: int, steps: int, late: dict | None = None) -> tr.Trace:
    """A synthetic trace: every rank sends for 1 µs then receives for 2 µs in each step, step t
    from 3t µs; ``late`` = {(rank, step): delay (s)} shifts that rank's operations from that step on."""
    rank, step, kind, start, end = [], [], [], [], []
    for r in range(p):
        shift = 0.0
        for t in range(steps):
            shift += (late or {}).get((r, t), 0.0)
            b = 3 * US * t + shift
            for k, a, e in ((tr.SEND, b, b + US), (tr.RECV, b + US, b + 3 * US)):
                rank.append(r), step.append(t), kind.append(k), start.append(a), end.append(e)
    n = len(rank)
    return tr.Trace(p, np.array(rank), np.full(n, -1), np.array(step), np.array(kind), np.array(start),
                    np.array(end))


def test_two_traces_part_at_the_first_step_where_a_rank_ends_elsewhere():
    a = lockstep(6, 5)
    b = lockstep(6, 5, late={(4, 3): 2 * US})            # rank 4 is 2 µs late from step 3 on
    assert tl.first_parting(a, a) is None
    assert tl.first_parting(a, b) == 3 == tl.first_parting(b, a)
    assert tl.first_parting(a, b, tolerance=2.5 * US) is None     # within the tolerance: no parting
    assert tl.first_parting(a, b, tolerance=1.9 * US) == 3
    c = lockstep(6, 5, late={(0, 1): 0.1 * US, (4, 3): 2 * US})   # a small slip first, below 5 % of the span
    assert tl.first_parting(a, c) == 3
    with pytest.raises(ValueError, match="as many ranks"):
        tl.first_parting(a, lockstep(5, 5))
    with pytest.raises(ValueError, match="tolerance must be"):
        tl.first_parting(a, b, tolerance=-1.0)


def test_the_figure_marks_where_they_part_and_draws_both_on_one_axis():
    a, b = lockstep(6, 5), lockstep(6, 5, late={(4, 3): 2 * US})
    traces, info = tl.timeline_traces(a, b)
    assert info["parting"] == 3 and info["parting_s"] == pytest.approx(9 * US)
    xs, ys, how, _ = traces["first parting: step 3"]
    assert how == "mark" and list(xs) == pytest.approx([9 * US, 9 * US])
    sim = traces["simulated: " + tl.label("send overhead")]
    meas = traces["measured: " + tl.label("send overhead")]
    rows = lambda ys: np.unique(ys[~np.isnan(ys)])  # noqa: E731
    assert np.allclose(rows(sim[1]), np.arange(6) + 0.17) and np.allclose(rows(meas[1]), np.arange(6) - 0.17)
    from matplotlib.figure import Figure

    ax = Figure().add_subplot()
    got = tl.draw_timeline(ax, a, b, title="two traces")
    assert got["parting"] == 3 and ax.get_xlabel() == "time (µs)" and ax.get_ylabel() == "rank"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "first parting: step 3" in labels and "measured: " + tl.label("receive overhead") in labels
    assert ax.get_ylim()[0] > ax.get_ylim()[1]                      # ranks down


def test_thousands_of_ranks_are_binned_with_median_and_range():
    rng = np.random.default_rng(3)
    p, n = 100, 4000
    start = rng.uniform(0, 1, n)
    t = tr.Trace(p, rng.integers(0, p, n), np.full(n, -1), rng.integers(0, 3, n), rng.integers(0, 3, n), start,
                 start + rng.uniform(0, 0.1, n))
    b, kind, lo, s, e, hi = tl.aggregate(t, rows=7)
    seen = 0
    for i in range(b.size):
        m = (t.rank * 7 // p == b[i]) & (t.kind == kind[i])
        steps = np.unique(t.step[m])
        for st in steps:                                     # the group is one of these steps
            g = m & (t.step == st)
            st_sorted, en_sorted = np.sort(t.start[g]), np.sort(t.end[g])
            mid = (g.sum() - 1) // 2
            if (lo[i], s[i], e[i], hi[i]) == (st_sorted[0], st_sorted[mid], en_sorted[mid], en_sorted[-1]):
                seen += 1
                break
    assert seen == b.size == 7 * 3 * 3
    traces, info = tl.timeline_traces(t, rows=7)
    assert info["rows"] == 7 and info["ranks_per_row"] == pytest.approx(100 / 7)
    bars = [v for v in traces.values() if v[2] == "bar"]
    assert sum(np.isfinite(v[0]).sum() // 2 for v in bars) == 7 * 3 * 3     # one bar per bin, step and kind


def test_a_timeline_of_2_to_the_14_ranks_is_drawn_binned():
    a = registry.build("barrier.dissemination", 2**14, 0)
    t = simulate(a, table.get("logp").default(), trace=True).trace
    from matplotlib.figure import Figure

    ax = Figure().add_subplot()
    info = tl.draw_timeline(ax, t)
    assert info["rows"] == tl.MAX_ROWS and info["ranks_per_row"] == 2**14 / tl.MAX_ROWS
    drawn = sum(len(c.get_segments()) for c in ax.collections)
    assert drawn < 20 * tl.MAX_ROWS * 14                         # bins, not 688,128 operations


def test_the_panel_has_a_static_twin_and_a_live_view():
    spec = tl.timeline_spec("barrier.dissemination", 8, "loggp")
    assert spec.control("semantics").options[0] == "stepwise"        # the model's own first
    fig = spec.static()
    assert "semantics" in fig.html and fig.n_frames == len(spec.control("semantics").values)
    frame = fig.frame(semantics=0)
    send = frame[tl.label("send overhead")]
    t = simulate(registry.build("barrier.dissemination", 8, 0), table.get("loggp").default(), trace=True).trace
    m = t.kind == tr.SEND
    xs = np.array([v for v in send[0] if v is not None])
    assert sorted(xs.tolist()) == pytest.approx(sorted(np.r_[t.start[m], t.end[m]] / US), rel=1e-5)
    png = spec.view(spec).show(spec.defaults())
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    ab = tl.timeline_spec("allreduce.ring", 4, "alpha-beta")
    assert "loggopsim" not in ab.control("semantics").options          # α-β has no LogGOPSim semantics


def run(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "netmodels", "timeline", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)


def test_the_command_writes_the_engines_trace_and_a_picture(tmp_path):
    out, png = tmp_path / "t.json", tmp_path / "t.png"
    res = run("allreduce.ring", "-P", "6", "-N", "60", "--model", "loggp", "--json", str(out), "--png", str(png))
    assert res.returncode == 0, res.stderr
    assert "operations" in res.stdout and "predicted time" in res.stdout
    doc = json.loads(out.read_text())
    t = tr.from_json(doc["trace"])
    ref = simulate(registry.build("allreduce.ring", 6, 60), table.get("loggp").default(), trace=True)
    assert doc["time_s"] == ref.time and len(t) == len(ref.trace)
    assert np.array_equal(t.start, ref.trace.start) and np.array_equal(t.kind, ref.trace.kind)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = tmp_path / "t.html"
    res = run("barrier.dissemination", "-P", "200", "--model", "alpha-beta", "--html", str(html), "--rows", "10")
    assert res.returncode == 0, res.stderr
    text = html.read_text()
    assert "plotly" in text.lower() and "ranks (20 per row)" in text
    res = run("barrier.dissemination", "-P", "8", "--model", "loggp")          # asked for nothing: says so
    assert res.returncode == 0 and "nothing drawn or written: --png FILE, --html FILE or --json FILE" in res.stdout


def test_a_late_receive_is_a_tick_at_its_instant():
    from netmodels.models.logp import LogGP

    a = registry.build("allgather.k-prefix", 8, 512)
    t = simulate(a, LogGP(L=1e-7, o=3e-7, g=6e-7, P=8, G=3e-8), semantics="loggopsim", trace=True).trace
    late = t.kind == tr.LATE
    assert late.any() and (t.start[late] == t.end[late]).all()
    xs, ys, how, _ = tl.timeline_traces(t)[0][tl.label("late receive")]
    assert how == "line" and np.allclose(xs[0::3], t.start[late]) and np.allclose(xs[1::3], t.start[late])
    assert np.allclose(ys[1::3] - ys[0::3], 0.6)
