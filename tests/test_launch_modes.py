"""benchmarks/launch_modes.py's pure parts: buffers at chosen offsets modulo 4 KiB, the copy
distances between two ranks, the ratios to the page-aligned placement and the mode they name."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from mpi_exercises import pages
from mpi_exercises.bench import probes

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("launch_modes", ROOT / "benchmarks" / "launch_modes.py")
lm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lm)


@pytest.mark.parametrize("offset", [0, 16, 64, 2048, 4088])
def test_offset_view_lands_at_the_offset_asked_and_shares_the_memory(offset):
    raw = pages.allocate((4096 + 8 * 100,), np.uint8)
    view = lm.offset_view(raw, offset, 8 * 100)
    assert view.ctypes.data % 4096 == offset and view.ctypes.data - raw.ctypes.data == offset
    assert view.dtype == np.float64 and view.size == 100
    view[:] = 7.0
    assert raw[offset:offset + 800].view(np.float64).tolist() == [7.0] * 100
    assert not raw[:offset].any() and not raw[offset + 800:].any()


@pytest.mark.parametrize("offset, nbytes, raw_bytes, what", [
    (12, 800, 8192, "offset"), (4096, 800, 16384, "offset"), (-8, 800, 8192, "offset"),
    (0, 12, 8192, "nbytes"), (0, 0, 8192, "nbytes"), (16, 8192, 8192, "raw")])
def test_offset_view_refuses_what_it_cannot_place(offset, nbytes, raw_bytes, what):
    raw = pages.allocate((raw_bytes,), np.uint8)
    with pytest.raises(ValueError, match=what):
        lm.offset_view(raw, offset, nbytes)


def test_offset_view_refuses_an_unaligned_array():
    raw = pages.allocate((8192,), np.uint8)[8:]
    with pytest.raises(ValueError, match="page-aligned"):
        lm.offset_view(raw, 0, 800)


def test_copy_distances_are_from_each_senders_buffer_to_the_peers_receive_buffer():
    # rank 0 sends from 100 to rank 1's receive buffer at 116; rank 1 from 4000 to rank 0's at 8
    assert lm.copy_distances([100, 4000], [8, 116]) == [16, (8 - 4000) % 4096]
    assert lm.copy_distances([0, 0], [16, 16]) == [16, 16]          # the recv+16 placement
    assert lm.copy_distances([16, 16], [0, 0]) == [4080, 4080]      # the send+16 placement
    with pytest.raises(ValueError, match="2"):
        lm.copy_distances([0, 0, 0], [0, 0, 0])


def test_placements_offsets_give_the_distances_the_docstring_names():
    (s0, r0), (s1, r1) = lm.PLACEMENTS["recv+16"], lm.PLACEMENTS["recv+16"]
    assert lm.copy_distances([s0, s1], [r0, r1]) == [16, 16]
    (s0, r0) = lm.PLACEMENTS["page"]
    assert lm.copy_distances([s0, s0], [r0, r0]) == [0, 0]


def test_mode_is_slow_only_when_the_median_ratio_exceeds_the_factor():
    assert lm.mode_of([1.0, 1.1, 0.9]) == "fast"
    assert lm.mode_of([1.0, 3.0, 2.5]) == "slow"              # median 2.5
    assert lm.mode_of([1.0, 1.2, 9.0]) == "fast"              # one outlier does not make a mode
    assert lm.mode_of([1.5, 1.5, 1.5], factor=1.5) == "fast" and lm.mode_of([1.51], factor=1.5) == "slow"
    for bad in ([], [1.0, 0.0], [np.nan]):
        with pytest.raises(ValueError, match="ratios"):
            lm.mode_of(bad)
    with pytest.raises(ValueError, match="factor"):
        lm.mode_of([2.0], factor=1.0)


def _result(setting, times):
    """A launch's result with ``times[placement] = median µs`` for every op at one length."""
    return {"setting": setting, "rows": [
        {"bytes": 65536, "placement": name, "op": op, "median_us": t, "distances": [0, 0]}
        for name, t in times.items() for op in lm.OPS], "load_average_1min": [1.0, 1.0]}


def test_summary_ratios_and_verdict_follow_the_medians():
    times = {"numpy": 30.0, "page": 10.0, "recv+16": 40.0, "send+16": 11.0}
    results = [_result("default", times), _result("movsb-off", dict.fromkeys(times, 10.0)),
               _result("default", {**times, "numpy": 10.0, "page": 5.0}), {"setting": "default", "error": "x"}]
    assert lm.ratios_to_page(results[0]) == {"numpy": [3.0] * 3, "page": [1.0] * 3, "recv+16": [4.0] * 3,
                                            "send+16": [1.1] * 3}
    s = lm.summarize(results)
    assert s["default"]["launches"] == 2 and s["movsb-off"]["launches"] == 1
    assert s["default"]["placements"]["numpy"]["modes"] == ["slow", "slow"]
    assert s["default"]["placements"]["recv+16"]["median_ratio_to_page"] == pytest.approx(6.0)   # 4 and 8
    assert s["default"]["placements"]["send+16"]["modes"] == ["fast", "slow"]                    # 1.1, 2.2
    assert s["default"]["page_spread_max_over_min"]["pingpong 65536"] == pytest.approx(2.0)
    assert s["movsb-off"]["placements"]["recv+16"]["modes"] == ["fast"]
    line = lm.verdict(s)
    assert line.startswith("mode: default: ") and "recv+16 x6.0 (2/2 launches slow)" in line
    assert "movsb-off: no placement slow" in line
    assert any("ERROR x" in row for row in lm.table(results))


def test_settings_are_cycled_launch_by_launch():
    assert lm.settings_order(["a", "b"], 2) == ["a", "b", "a", "b"]
    with pytest.raises(ValueError, match="launches"):
        lm.settings_order(["a"], 0)


def test_rows_are_grouped_by_their_copy_distance():
    result = _result("default", {"numpy": 30.0, "page": 10.0, "recv+16": 40.0, "send+16": 11.0})
    for row in result["rows"]:
        row["distances"] = {"recv+16": [16, 16], "numpy": [16, 4000], "send+16": [4080, 4080]}.get(
            row["placement"], [0, 0])
    groups = lm.by_distance(result)
    assert sorted(groups["16"]) == [3.0] * 3 + [4.0] * 3 and groups["other"] == [1.1] * 3
    s = lm.summarize([result])
    assert s["default"]["median_ratio_to_page_by_distance"] == {"16": 3.5, "other": pytest.approx(1.1)}
    assert "copy distance 16 x3.5" in lm.verdict(s)


def test_mpich_cvar_lines_are_read_name_and_value():
    listing = ("\tMPIR_CVAR_CH4_CMA_ENABLE        =0\tSCOPE_ALL_EQ\tNo-object\n"
               "\tMPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD=8192\tSCOPE_ALL_EQ\n\tMPIR_CVAR_OTHER=1\tX\n")
    assert probes.parse_cvars(listing) == {"MPIR_CVAR_CH4_CMA_ENABLE": "0", "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD": "8192"}


def test_allreduce_over_exchange_is_taken_per_length_within_one_launch():
    result = {"rows": [{"bytes": b, "placement": name, "op": op, "median_us": t, "distances": [0, 0]}
                       for b, scale in ((65536, 1.0), (1048576, 10.0))
                       for name, f in (("page", 1.0), ("numpy", 3.0))
                       for op, t0 in (("pingpong", 5.0), ("exchange", 4.0), ("allreduce", 10.0))
                       for t in [t0 * scale * f]]}
    assert lm.op_ratio(result) == {65536: pytest.approx(2.5), 1048576: pytest.approx(2.5)}
    assert lm.op_ratio(result, "pingpong", "exchange", "numpy") == {65536: pytest.approx(1.25),
                                                                   1048576: pytest.approx(1.25)}
    with pytest.raises(ValueError, match="placement"):
        lm.op_ratio(result, placement="huge")


def test_a_launch_is_slow_above_the_threshold_and_the_summary_counts_it():
    assert lm.launch_mode(lm.MODE_RATIO) == "normal" and lm.launch_mode(lm.MODE_RATIO * 1.01) == "slow"
    assert lm.launch_mode(2.0, threshold=1.5) == "slow"
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="ratio"):
            lm.launch_mode(bad)
    with pytest.raises(ValueError, match="threshold"):
        lm.launch_mode(2.0, threshold=1.0)
    fast, slow = _result("default", {"page": 10.0}), _result("default", {"page": 10.0})
    for r, ratio in ((fast, 2.0), (slow, 9.0)):
        for row in r["rows"]:
            row["median_us"] *= ratio if row["op"] == "allreduce" else 1.0
        r["launch_mode"] = {"bytes": 65536, "ratio": ratio, "mode": lm.launch_mode(ratio)}
    s = lm.summarize([fast, slow])
    assert s["default"]["launch_modes"] == ["normal", "slow"]
    assert s["default"]["allreduce_to_exchange"] == {"65536": [pytest.approx(2.0), pytest.approx(9.0)]}
    assert "default 2.0-9.0 (1/2 slow)" in lm.verdict(s)


def test_malloc_offsets_are_where_malloc_puts_a_block_of_that_size():
    import ctypes
    import ctypes.util

    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    got = probes.malloc_offsets([64, 65536])
    assert set(got) == {64, 65536} and all(0 <= v < 4096 and v % 16 == 0 for v in got.values())
    ptr = libc.malloc(64)                       # a freed block of that size is handed out again
    libc.free(ptr)
    assert probes.malloc_offsets([64])[64] == ptr % 4096


@pytest.mark.mpi
@pytest.mark.timeout(120)
def test_detect_mode_times_allreduce_against_an_exchange_on_every_rank(tmp_path):
    from tests.mpirun import run_mpi

    script = tmp_path / "detect.py"
    script.write_text(
        "import json\n"
        "from mpi4py import MPI\n"
        "from mpi_exercises.bench import launch_mode as lm\n"
        "r = lm.detect_mode(MPI.COMM_WORLD, nbytes=65536, samples=3)\n"
        "try:\n    lm.detect_mode(MPI.COMM_WORLD, nbytes=12)\nexcept ValueError as e:\n    r['refused'] = str(e)\n"
        f"open({str(tmp_path)!r} + f'/rank{{MPI.COMM_WORLD.Get_rank()}}.json', 'w').write(json.dumps(r))\n")
    proc = run_mpi(3, [str(script)], timeout=100, sleep_while_waiting=True)
    assert proc.returncode == 0, proc.stderr
    found = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(3)]
    assert all(f == found[0] for f in found)            # every rank gets rank 0's
    r = found[0]
    assert r["bytes"] == 65536 and r["allreduce_s"] > 0 and r["exchange_s"] > 0
    assert r["ratio"] == pytest.approx(r["allreduce_s"] / r["exchange_s"])
    assert r["mode"] == lm.launch_mode(r["ratio"]) and r["threshold"] == lm.MODE_RATIO
    assert r["coherence_write_ratio"] > 0            # the cores' coherence, read beside the mode
    assert r["refused"] == "nbytes must be a positive multiple of 8, got 12"


def test_the_benchmark_detects_the_mode_with_the_packages_one_definition():
    from mpi_exercises.bench import launch_mode

    assert lm.detect_mode is launch_mode.detect_mode and lm.launch_mode is launch_mode.launch_mode
    assert (lm.MODE_RATIO, lm.MODE_BYTES) == (launch_mode.MODE_RATIO, launch_mode.MODE_BYTES)


@pytest.mark.parametrize("argv, message", [
    (["--repeat", "0"], "argument --repeat: expected an integer >= 1, got '0'"),
    (["--samples", "x"], "argument --samples: expected an integer >= 1, got 'x'")])
def test_the_mode_command_refuses_bad_arguments_in_one_line(argv, message, capsys):
    from mpi_exercises.bench import launch_mode

    with pytest.raises(SystemExit) as exc:
        launch_mode.main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and err == [f"python -m mpi_exercises.bench.launch_mode: error: {message} "
                                           "(--help lists the options)"]


@pytest.mark.mpi
@pytest.mark.timeout(120)
def test_the_mode_command_detects_and_times_each_detection():
    from tests.mpirun import run_mpi, run_mpi_ok

    res = run_mpi_ok(2, ["-m", "mpi_exercises.bench.launch_mode", "--repeat", "3", "--samples", "2"], timeout=100)
    lines = res.stdout.strip().splitlines()
    detections = [ln for ln in lines if ln.startswith("detection ")]
    assert len(detections) == 3 and all(ln.endswith((": normal", ": slow")) for ln in detections)
    slow = sum(ln.endswith(": slow") for ln in detections)
    assert lines[-1].startswith(f"launch_mode: 2 ranks, {slow} of 3 detections slow; median ")
    alone = run_mpi(1, ["-m", "mpi_exercises.bench.launch_mode"], timeout=60)
    assert alone.returncode == 2 and alone.stderr.strip().splitlines() == [
        "python -m mpi_exercises.bench.launch_mode: error: needs 2 ranks or more: "
        "mpiexec -n 2 python -m mpi_exercises.bench.launch_mode"]
