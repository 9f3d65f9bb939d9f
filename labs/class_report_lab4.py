"""The class report's page of lab 4: each machine's L(p) and the n of the n-way barrier it
chooses, against the n its measured barrier found fastest.
"""

from __future__ import annotations

import numpy as np

from class_report_views import (US, Unusable, need, pyplot, Figure, to_svg, style, fmt, count_grid, Column,
                                 LabView, value)


def lab4_extract(files: dict) -> tuple[dict, list[str]]:
    from mpi_exercises.bench import lop_bench

    data = files["lop.json"]
    results = need(data, "results")
    P = need(data, "environment", "ranks")
    try:
        n_max = int((data.get("parameters") or {}).get("n_max") or 4)
        pred = lop_bench.predict(results, P, n_max)["single"]        # the measured points, no fit
        p = [float(r["peers"]) for r in results]
        measured = {int(r["options"]["n"]): float(r["min_s"]) for r in need(data, "barrier")}
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise Unusable(f"malformed: {exc!r}") from None
    values = {"p": p, "L_s": [float(x) for x in pred["L_s"]], "best_n_predicted": int(pred["best_n"]),
              "best_n_measured": min(measured, key=measured.get) if measured else None, "lop_ranks": P}
    return values, []


def lab4_figures(machines) -> list[Figure]:
    plt = pyplot()
    have = [m for m in machines if m.values.get("L_s")]
    if not have:
        return []
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10.5, 4), gridspec_kw={"width_ratios": [1.6, 1]})
    titles = {}
    for m in have:
        st = style(m)
        gid = f"{m.gid}-L"
        ax.plot(m.values["p"], np.array(m.values["L_s"]) / US, "-" + st.marker, color=st.color, mfc=st.face,
                lw=1.6 if m.reference else 0.8, ms=4 if m.reference else 3, alpha=1 if m.reference else 0.6,
                zorder=st.zorder, gid=gid)
        titles[gid] = m.tooltip + f"; chosen n = {m.values['best_n_predicted']}"
    ax.set(xlabel="peers p", ylabel="L(p) (µs)", title="L(p) of the class (measured points)")
    ns = sorted({m.values["best_n_predicted"] for m in have}
                | {m.values["best_n_measured"] for m in have if m.values["best_n_measured"]})
    count = np.zeros((len(ns), len(ns)), dtype=int)
    for m in have:
        if not m.reference and m.values["best_n_measured"]:
            count[ns.index(m.values["best_n_predicted"]), ns.index(m.values["best_n_measured"])] += 1
    count_grid(bx, count, 8)
    bx.set_xticks(range(len(ns)), ns)
    bx.set_yticks(range(len(ns)), ns)
    bx.set(xlabel="fastest n measured", ylabel="n chosen from L(p)", title="The n of the n-way barrier")
    fig.tight_layout()
    return [Figure(to_svg(fig, f"{machines[0].lab}-lop", titles),
                   "Left: each machine's L(p) from its measured round trips and overheads (minima, sends posted "
                   "one by one; <code>mpi_exercises.bench.lop_bench.predict</code>, no fit). Right: how many "
                   "machines chose each n (from L(p)) against the n their measured barrier found fastest.")]


def lab4_summary(machines) -> list[str]:
    have = [m for m in machines if not m.reference and m.values.get("L_s")]
    if not have:
        return []
    same = sum(1 for m in have if m.values["best_n_predicted"] == m.values["best_n_measured"])
    return [f"On {same} of {len(have)} machines the n chosen from L(p) is the fastest measured."]


VIEW = LabView(
    name="lab4", title="Lab 4: L(p) and the n-way barrier", main="lop.json", reads=("lop.json",),
    extract=lab4_extract, figures=lab4_figures, summary=lab4_summary,
    about="Each student's LoP measurement (<code>lop</code>, at least 5 ranks): L(p) and the n it chooses.",
    columns=[
        Column("lop_ranks", value("lop_ranks")),
        Column("L1_s", lambda m: (m.values.get("L_s") or [None])[0], "L(1) (µs)",
               lambda m: fmt((m.values.get("L_s") or [None])[0], 1e6, 3)),
        Column("best_n_predicted", value("best_n_predicted"), "n chosen",
               lambda m: str(m.values.get("best_n_predicted", ""))),
        Column("best_n_measured", value("best_n_measured"), "n fastest measured",
               lambda m: str(m.values.get("best_n_measured", "") or "")),
    ])
