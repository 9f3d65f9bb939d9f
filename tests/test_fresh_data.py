"""benchmarks/fresh_data.py: launches that time every call, and their classification by mode."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.mpirun import ROOT

SCRIPT = str(ROOT / "benchmarks" / "fresh_data.py")
sys.path.insert(0, str(ROOT / "benchmarks"))
import fresh_data  # noqa: E402


def _launch(setting, exchange, allreduce, clean, fresh):
    calls = dict.fromkeys(fresh_data.CALLS, 1.0) | {"exchange": exchange, "MPI Allreduce": allreduce,
                                                   "write, exchange clean": clean, "write, exchange it": fresh}
    return {"setting": setting, "rows": [{"bytes": 8, "median_us": calls, "min_us": calls}]}


def test_launches_are_classed_by_the_mode_of_their_own_loop_and_their_fresh_ratio_summarised():
    launches = [_launch("default", 100, 300, 150, 330), _launch("default", 100, 170, 150, 150),
                _launch("default", 100, 290, 150, 360), _launch("cma-off", 400, 480, 450, 450),
                {"setting": "default", "error": "timed out"}]
    s = fresh_data.summary(launches)
    assert s["default"]["slow"]["launches"] == 2 and s["default"]["slow"]["fresh_median"] == pytest.approx(2.3)
    assert s["default"]["slow"]["fresh_range"] == pytest.approx([2.2, 2.4])
    assert s["default"]["normal"] == {"launches": 1, "fresh_median": 1.0, "fresh_range": [1.0, 1.0]}
    assert set(s["cma-off"]) == {"normal"}           # 480 / 400 = 1.2: below the threshold


@pytest.mark.mpi
def test_a_run_of_two_launches_stores_every_call_and_its_mode(tmp_path):
    out = tmp_path / "fresh.json"
    res = subprocess.run([sys.executable, SCRIPT, "--launches", "2", "--iterations", "3", "--warmup", "0",
                          "--apart", "0", "--lengths", "64k", "--json", str(out)],
                         capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 3 and lines[-1].startswith("fresh data") and "load now" in lines[-1]
    d = json.loads(out.read_text())
    assert [r["setting"] for r in d["launches"]] == ["default", "cma-off"]
    for r in d["launches"]:
        (row,) = r["rows"]
        assert row["bytes"] == 65536 and set(row["median_us"]) == set(fresh_data.CALLS)
        assert all(0 < row["min_us"][c] <= row["median_us"][c] for c in fresh_data.CALLS)
        assert r["launch_mode"]["bytes"] == 1 << 20
    assert d["last_line"] == lines[-1]
