"""benchmarks/cache_state.py: every work timed in every way, and a run it cannot make refused."""

from __future__ import annotations

import json

import pytest

from tests.mpirun import ROOT, run_mpi, run_mpi_ok

pytestmark = pytest.mark.mpi
SCRIPT = str(ROOT / "benchmarks" / "cache_state.py")


def test_a_run_stores_each_work_in_each_way(tmp_path):
    out = tmp_path / "cache.json"
    res = run_mpi_ok(2, [SCRIPT, "-N", "64", "200000", "--blocks", "2", "--samples", "3", "--evict-mib", "4",
                         "--json", str(out)], timeout=120)
    assert res.stdout.splitlines()[-1].startswith("load ")
    d = json.loads(out.read_text())
    assert [r["elements"] for r in d["lengths"]] == [64, 200000] and d["evict_mib"] == 4
    for r in d["lengths"]:
        for w in ("exchange", "combine", "nothing"):
            for way in ("loop", "single", "cold"):
                t = r["work"][w][way]
                assert 0 < t["min_s"] <= t["median_s"]
    small, large = (r["work"] for r in d["lengths"])
    assert large["combine"]["loop"]["median_s"] > small["combine"]["loop"]["median_s"]       # 1.6 MB against 512 B
    assert large["exchange"]["loop"]["median_s"] > small["exchange"]["loop"]["median_s"]


def test_it_refuses_any_number_of_ranks_but_two():
    res = run_mpi(1, [SCRIPT, "-N", "64", "--blocks", "1"], timeout=60)
    assert res.returncode == 2 and "2 ranks" in res.stderr and "Traceback" not in res.stderr
