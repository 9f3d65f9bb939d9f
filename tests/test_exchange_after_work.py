"""benchmarks/exchange_after_work.py: what it times is what its variants name, and it refuses
a run it cannot make."""

from __future__ import annotations

import json
import time

import pytest

from tests.mpirun import ROOT, run_mpi, run_mpi_ok

pytestmark = pytest.mark.mpi
SCRIPT = str(ROOT / "benchmarks" / "exchange_after_work.py")


def test_the_busy_wait_lasts_what_it_is_asked(monkeypatch):
    import importlib.util
    spec = importlib.util.spec_from_file_location("eaw", SCRIPT)
    eaw = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(eaw)
    for wait in (1e-4, 2e-3):
        t0 = time.perf_counter()
        eaw.spin(wait)
        took = time.perf_counter() - t0
        assert wait <= took < wait + 0.5      # a loaded machine may preempt the loop; never shorter


def test_a_run_stores_every_variant_and_the_interactions_of_its_medians(tmp_path):
    out = tmp_path / "eaw.json"
    res = run_mpi_ok(2, [SCRIPT, "-N", "64", "20000", "--rounds", "3", "--inner", "2", "--json", str(out)],
                     timeout=120)
    assert res.stdout.splitlines()[-1].startswith("load ")
    d = json.loads(out.read_text())
    assert [r["elements"] for r in d["lengths"]] == [64, 20000]
    for r in d["lengths"]:
        m = r["median_s"]
        assert set(m) == {"exchange", "combine", "exchange+combine", "exchange+spin", "exchange+copy", "copy",
                          "Allreduce"}
        assert all(v > 0 for v in m.values()) and all(r["min_s"][k] <= m[k] for k in m)
        # the busy wait is as long as the combination it stands in for, so a pair with it lasts at least that
        assert r["spin_s"] > 0 and m["exchange+spin"] >= r["spin_s"]
        assert r["interaction_s"]["combine"] == pytest.approx(m["exchange+combine"] - m["exchange"] - m["combine"])
    # a longer vector takes longer to combine and to copy
    small, large = (r["median_s"] for r in d["lengths"])
    assert large["combine"] > small["combine"] and large["copy"] > small["copy"]


def test_it_refuses_any_number_of_ranks_but_two():
    res = run_mpi(1, [SCRIPT, "-N", "64", "--rounds", "1"], timeout=60)
    assert res.returncode == 2 and "2 ranks" in res.stderr and "Traceback" not in res.stderr
