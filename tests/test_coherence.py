"""Cache coherence between two ranks' cores (mpi_exercises.bench.coherence) and the benchmark that
reads it beside the price of fresh data and the launch mode (benchmarks/coherence.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from mpi_exercises.bench import coherence
from tests.mpirun import ROOT, run_mpi_ok

SCRIPT = str(ROOT / "benchmarks" / "coherence.py")
sys.path.insert(0, str(ROOT / "benchmarks"))
import coherence as bench  # noqa: E402


class OneRank:
    def Get_size(self):
        return 1


@pytest.mark.parametrize("kwargs,match", [({"nbytes": 0}, "nbytes"), ({"nbytes": 12}, "nbytes"),
                                          ({"samples": 0}, "samples"), ({}, "2 ranks or more")])
def test_a_probe_refuses_what_it_cannot_measure(kwargs, match):
    with pytest.raises(ValueError, match=match):
        coherence.probe(OneRank(), **kwargs)


def _round(write, fresh, mode, read=1.0):
    return {"write_ratio": write, "read_ratio": read, "fresh_ratio": fresh, "mode_ratio": mode}


def test_the_summary_splits_rounds_by_the_write_ratio_and_ranks_them_against_fresh_and_mode():
    rounds = [_round(4.5, 2.2, 3.5), _round(1.1, 1.0, 1.9), _round(4.0, 2.0, 3.0), _round(1.2, 1.1, 2.5),
              _round(5.0, 2.5, 3.6)]
    s = bench.summary(rounds)
    assert s["rounds"] == 5 and s["apart_rounds"] == 3 and s["slow_rounds"] == 4      # MODE_RATIO 2.3
    assert s["medians"]["fresh_ratio"] == {"apart": 2.2, "shared": pytest.approx(1.05)}
    assert s["medians"]["mode_ratio"] == {"apart": 3.5, "shared": pytest.approx(2.2)}
    # Spearman's rho computed apart: the write ratio and the fresh ratio rank the rounds alike
    assert s["write_vs_fresh_ratio"]["spearman_rho"] == pytest.approx(1.0)
    ranks = lambda v: np.argsort(np.argsort(v))  # noqa: E731
    w, m = ranks([r["write_ratio"] for r in rounds]), ranks([r["mode_ratio"] for r in rounds])
    assert s["write_vs_mode_ratio"]["spearman_rho"] == pytest.approx(np.corrcoef(w, m)[0, 1])
    line = bench.last_line(s, 0.5)
    assert "3 with the caches apart" in line and "fresh data x2.20 apart, x1.05 shared" in line
    assert bench.summary([_round(1.0, 1.0, 2.0)])["medians"]["write_ratio"] == {"apart": None, "shared": 1.0}


@pytest.mark.cli
@pytest.mark.parametrize("argv", [["--rounds", "0"], ["--apart", "-1"], ["--samples", "x"]])
def test_bad_arguments_get_one_line_and_status_2(argv):
    res = subprocess.run([sys.executable, SCRIPT, *argv], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert res.returncode == 2 and "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


@pytest.mark.mpi
def test_a_probe_on_two_ranks_reads_four_times_and_their_ratios():
    code = ("from mpi4py import MPI; from mpi_exercises.bench import coherence; import json; "
            "r = coherence.probe(MPI.COMM_WORLD, 64 * 1024, 3); "
            "print(json.dumps(r)) if MPI.COMM_WORLD.Get_rank() == 0 else None")
    res = run_mpi_ok(2, ["-c", code], timeout=120)
    r = json.loads(res.stdout.strip().splitlines()[-1])
    assert r["bytes"] == 65536 and all(0 < r[k] < 1 for k in coherence.KINDS)
    assert r["write_ratio"] == pytest.approx(r["write, peer read"] / r["write, own lines"])
    assert r["read_ratio"] == pytest.approx(r["read, peer wrote"] / r["read, own copy"])


@pytest.mark.mpi
def test_a_run_stores_every_round_and_its_last_line(tmp_path):
    out = tmp_path / "coherence.json"
    res = run_mpi_ok(2, [SCRIPT, "--rounds", "3", "--apart", "0", "--samples", "2", "--json", str(out)], timeout=180)
    d = json.loads(out.read_text())
    assert len(d["rounds"]) == 3 and d["summary"]["rounds"] == 3
    for r in d["rounds"]:
        assert all(r[f"{c} s"] > 0 for c in bench.CALLS)
        assert r["fresh_ratio"] == pytest.approx(r["write, exchange it s"] / r["write, exchange clean s"])
        assert r["mode_ratio"] == pytest.approx(r["MPI Allreduce s"] / r["exchange s"])
    assert d["last_line"] == res.stdout.strip().splitlines()[-1]


@pytest.mark.cli
def test_the_cpu_is_named_as_lscpu_names_it():
    from mpi_exercises.bench import probes

    listing = dict(line.split(":", 1) for line in subprocess.run(["lscpu"], capture_output=True, text=True,
                                                                 env={"LC_ALL": "C"}).stdout.splitlines() if ":" in line)
    listing = {k.strip(): v.strip() for k, v in listing.items()}
    cpu = probes.cpu_identity()
    assert cpu["vendor"] == listing["Vendor ID"] and cpu["model_name"] == listing["Model name"]
    assert (cpu["family"], cpu["model"]) == (int(listing["CPU family"]), int(listing["Model"]))
