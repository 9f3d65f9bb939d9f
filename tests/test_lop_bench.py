"""The LoP benchmark under mpiexec (timeouts turn a deadlock into a failure); no timing is asserted."""

import json

import numpy as np
import pytest

from mpi_exercises.bench import lop_bench
from netmodels.models import lop, lop_fit
from tests.mpirun import run_mpi_ok

QUICK = ["--repetitions", "20", "--warmup", "3", "--barrier-repetitions", "5", "--inner", "3", "--target", "0",
         "--no-progress"]   # exactly 20 samples per case


def _run(nprocs, tmp_path, *extra):
    out = tmp_path / f"lop{nprocs}.json"
    res = run_mpi_ok(nprocs, ["-m", "mpi_exercises", "lop", *QUICK, *extra, "--json", str(out)], timeout=180)
    return res, json.loads(out.read_text())


def _check_wellformed(data, nprocs):
    assert data["benchmark"] == "lop" and data["environment"]["ranks"] == nprocs
    assert data["oversubscribed"] == (nprocs > data["environment"]["cores"])
    assert [r["peers"] for r in data["results"]] == list(range(1, nprocs))
    for r in data["results"]:
        for mode in lop_bench.MODES:
            for key in ("rtt", "rtt_per_message", "os"):
                s = r[f"{key}_{mode}"]
                assert s["samples"] == 20 and 0 < s["min_s"] <= s["median_s"] <= s["max_s"]
            assert r[f"rtt_per_message_{mode}"]["min_s"] * r["peers"] == pytest.approx(r[f"rtt_{mode}"]["min_s"])
    assert [b["options"]["n"] for b in data["barrier"]] == list(range(1, data["parameters"]["n_max"] + 1))


@pytest.mark.mpi
def test_two_ranks(tmp_path):
    res, data = _run(2, tmp_path, "--n-max", "2")
    _check_wellformed(data, 2)
    assert data["prediction"]["single"]["best_n"] == 1      # only one peer: n = 1 is all there is
    assert "at least 4 distinct" in data["fit"]["single"]["overhead"]["error"]
    assert "best n: predicted" in res.stdout


@pytest.mark.mpi
def test_four_ranks_prediction_is_the_tabulated_model(tmp_path):
    res, data = _run(4, tmp_path)
    _check_wellformed(data, 4)
    for mode in lop_bench.MODES:
        p, rtt, os_ = lop_bench.curves(data["results"], mode)
        pred = data["prediction"][mode]
        # recompute by hand: L(p) = rtt(p)/2 - o(p) - o(1); rounds of the 3-way barrier on 4 ranks: one
        L = rtt / 2 - os_ - os_[0]
        np.testing.assert_allclose(pred["L_s"], L, rtol=1e-12)
        t13 = (3 * os_[2] if mode == "list" else os_[2]) + 3 * L[2]
        assert pred["barrier_s"][2] == pytest.approx(t13)
        assert len(pred["barrier_s"]) == 3 and pred["best_n"] == int(np.argmin(pred["barrier_s"])) + 1
    assert ("ranks are oversubscribed" in res.stderr) == data["oversubscribed"]   # not the lop-on-4 warning


@pytest.mark.mpi
def test_fit_runs_on_the_json_of_six_ranks(tmp_path):
    _, data = _run(6, tmp_path, "--n-max", "2")
    p, rtt, os_ = lop_bench.curves(data["results"], "single")
    fits = {}
    for key, fit in (("rtt", lambda: lop_fit.fit_rtt(p, rtt, saturation=False)),
                     ("overhead", lambda: lop_fit.fit_overhead(p, os_))):
        stored = data["fit"]["single"][key]
        if "error" in stored:        # six ranks on two cores can measure curves no model fits:
            with pytest.raises(lop_fit.FitError) as exc:   # the file says why, as the fit does here
                fit()
            assert str(exc.value) == stored["error"]
            continue
        fits[key] = fit()
        assert stored["lambdas"] == pytest.approx(list(fits[key].lambdas), rel=1e-6)
    if len(fits) == 2:
        assert lop.best_n(6, fits["rtt"], fits["overhead"], n_max=2)[0] in (1, 2)


def test_tabulated_curve_refuses_extrapolation():
    t = lop.Tabulated((1, 2, 3), (3e-6, 2e-6, 1e-6))
    assert t(2.5) == pytest.approx(1.5e-6)
    with pytest.raises(ValueError, match="measured range"):
        t(4)
    with pytest.raises(ValueError, match="repeat"):
        lop.Tabulated((1, 1), (1e-6, 2e-6))
