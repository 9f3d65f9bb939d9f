"""The class report's page of lab 2: each machine's f(L) from its test jig, beside the
DELTA of Littlefield 1992; the allreduce runs checked and counted.
"""

from __future__ import annotations

import numpy as np

from class_report_views import (Unusable, need, pyplot, Figure, to_svg, style, counted, class_median, fmt,
                                 Column, LabView, value)


def lab2_extract(files: dict) -> tuple[dict, list[str]]:
    values, caveats = {}, []
    if "testjig.json" in files:
        from mpi_exercises.bench.nbl_testjig import table
        from netmodels.models import nbl_fit

        data = files["testjig.json"]
        stat = (data.get("table") or {}).get("statistic") or "min_s"
        try:
            tab = table(need(data, "results"), stat)
            S = np.array(tab["S"], dtype=float)
            T = {int(L): np.array(t, dtype=float) for L, t in tab["T_s"].items()}
            f_fit, beta, _ = nbl_fit.fit_f(S, T)
        except (KeyError, TypeError, ValueError, StopIteration) as exc:
            raise Unusable(f"testjig.json: cannot fit f(L): {exc}") from None
        values.update(f={int(L): float(v) for L, v in f_fit.items()}, beta_s_per_elem=float(beta),
                      statistic=stat)
        if "warning" in tab:
            caveats.append(f"test jig: {tab['warning']}")
    if "allreduce.json" in files:
        runs = files["allreduce.json"]["runs"]
        values["allreduce_runs"] = len(runs)
    return values, caveats


def lab2_figures(machines) -> list[Figure]:
    from netmodels.models import nbl_fit
    from netmodels.models.machines import DELTA_TABLE1

    plt = pyplot()
    have = [m for m in machines if m.values.get("f")]
    if not have:
        return []
    fig, ax = plt.subplots(figsize=(7, 4.2))
    titles = {}
    Ls = sorted({L for m in have for L in m.values["f"]})
    grid = np.array([1, max(Ls)])
    ax.plot(grid, grid, ":", color="#9ca3af", lw=1)
    ax.text(grid[1], grid[1], " f = L (links share nothing)", fontsize=7, color="#6b7280", va="center")
    ax.plot(grid, [1, 1], ":", color="#9ca3af", lw=1)
    ax.text(grid[1], 1, " f = 1 (one link's worth)", fontsize=7, color="#6b7280", va="center")
    for m in have:
        st = style(m)
        L = sorted(m.values["f"])
        f = [m.values["f"][k] for k in L]
        gid = f"{m.gid}-f"
        ax.plot(L, f, "-" + st.marker, color=st.color, mfc=st.face, lw=1.6 if m.reference else 0.8,
                ms=5 if m.reference else 3.5, alpha=1 if m.reference else 0.6, zorder=st.zorder, gid=gid)
        titles[gid] = m.tooltip + "; " + ", ".join(f"f({k}) = {v:.2f}" for k, v in zip(L, f))
    delta, _, _ = nbl_fit.fit_f(DELTA_TABLE1["S"], DELTA_TABLE1["T"])
    dL = sorted(delta)
    ax.plot(dL, [delta[k] for k in dL], "s--", color="#6b7280", ms=4, lw=1,
            label="DELTA, Table 1 of Littlefield 1992")
    ax.set(xlabel="links L", ylabel="f(L): time per element relative to one link", xticks=Ls,
           title="f(L) of the class")
    ax.legend(loc="upper left")
    fig.tight_layout()
    return [Figure(to_svg(fig, f"{machines[0].lab}-fl", titles),
                   "Each machine's f(L), the least-squares slopes of its test-jig times relative to L = 1 "
                   "(<code>netmodels.models.nbl_fit.fit_f</code>, as the lab fits it); black: the reference "
                   "machine; orange: oversubscribed runs (their f measures the scheduler); dashed grey: the "
                   "paper's DELTA, its Table 1 fitted by the same function.")]


def lab2_summary(machines) -> list[str]:
    clean = [m for m in machines if counted(m) and m.values.get("f")]
    if not clean:
        return ["No machine of the class ran the test jig without oversubscription."]
    Ls = sorted({L for m in clean for L in m.values["f"]} - {1})
    return ["Class median " + ", ".join(f"f({L}) = {class_median(clean, lambda m, k=L: m.values['f'].get(k)):.2f}"
                                        for L in Ls) + f" over {len(clean)} machines not oversubscribed."]


def _f(L):
    return lambda m: (m.values.get("f") or {}).get(L)


VIEW = LabView(
    name="lab2", title="Lab 2: f(L)", main="testjig.json", reads=("testjig.json", "allreduce.json"),
    extract=lab2_extract, figures=lab2_figures, summary=lab2_summary,
    about=("Each student's f(L) test jig (<code>nbl-testjig</code> on 4 ranks), fitted as the lab fits it "
           "(<code>nbl_fit.fit_f</code>); the allreduce runs are checked and counted."),
    columns=[
        *[Column(f"f{L}", _f(L), f"f({L})", lambda m, k=L: fmt(_f(k)(m), 1, 3)) for L in (2, 4, 6)],
        Column("beta_s_per_elem", value("beta_s_per_elem"), "β (ns/elem)",
               lambda m: fmt(m.values.get("beta_s_per_elem"), 1e9, 3)),
        Column("allreduce_runs", value("allreduce_runs"), "allreduce runs",
               lambda m: str(m.values.get("allreduce_runs", ""))),
    ])
