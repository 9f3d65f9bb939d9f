"""The simulator's size estimate (netmodels.simulate.budget) against the real schedules, and
``--force``.  The refusals themselves are rows of tests/test_netmodels_cli_errors.py."""

import os
import subprocess
import sys
import time

import pytest

from netmodels.__main__ import main
from netmodels.algorithms import registry
from netmodels.simulate import budget
from tests.mpirun import ROOT


@pytest.mark.parametrize("name", [n for n in registry.names() if n != "alltoall.multilevel"])
def test_the_extrapolated_counts_bracket_the_real_ones(name):
    """From builds at 128 and 256 ranks to 2048 (and 1500, not a power of two): every count
    within a factor of 4 of the schedule's own (the pipelined mesh algorithms, whose number
    of blocks changes with P, are the worst; most are within 10 %)."""
    n = 0 if name.startswith("barrier.") else 64
    g = budget.growth(lambda p, m: registry.build(name, p, m), n)
    for p in (1500, 2048):
        real = budget._counts(registry.build(name, p, n))
        for est, count, what in zip(g.at(p), real, budget.COUNTS):
            assert count / 4 <= est <= 4 * count + 2, (p, what, est, count)


@pytest.mark.parametrize("name, n, closed_form", [
    ("allreduce.ring", 1, lambda p: 2 * p * (p - 1)),            # P blocks per step, 2(P - 1) steps
    ("broadcast.two_phase", 1, lambda p: (p - 1) + p * (p - 1)),  # scatter, then every block to P - 1 ranks
])
def test_the_candidates_of_a_short_vector_are_those_of_a_full_one(name, n, closed_form):
    """With one element the schedules hold O(P) transfers, but their builders walk O(P^2)
    candidates: the estimate counts those (within 4x of the closed form at 2048 ranks)."""
    g = budget.growth(lambda p, m: registry.build(name, p, m), n)
    transfers, _, _, candidates, _ = g.at(2048)
    assert closed_form(2048) / 4 <= candidates <= 4 * closed_form(2048)
    assert transfers < candidates / 100


def _estimate(name, p, n, semantics="sync", model="alpha-beta", **options):
    """The estimate the command line makes (its probe included)."""
    from netmodels.models import table
    from netmodels.simulate.cli import parameter_values, pipeline_blocks
    from netmodels.simulate.engine import simulate

    m = table.get(model).build(**parameter_values(model, []))
    return budget.estimate(lambda q, k: registry.build(name, q, k, **options), p, n, semantics,
                           simulate=lambda s: simulate(s, m, semantics=semantics),
                           blocks=pipeline_blocks(name, options))


def test_force_runs_a_case_over_the_limit(monkeypatch, capsys):
    """The limit lowered to a third of the estimate of a small run: refused, then run with
    --force; raised to three times: runs (the probe's measured speed varies between runs)."""
    argv = ["simulate", "allreduce.ring", "-P", "600", "-N", "600", "--model", "alpha-beta"]
    seconds = _estimate("allreduce.ring", 600, 600).seconds
    monkeypatch.setattr(budget, "MAX_SECONDS", seconds / 3)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"the limit is {seconds / 3:.3g} s" in err and "--force runs it anyway" in err
    assert len(err.strip().splitlines()) == 1
    assert main(argv + ["--force"]) == 0
    assert "predicted time" in capsys.readouterr().out
    monkeypatch.setattr(budget, "MAX_SECONDS", 3 * seconds)
    assert main(argv) == 0


@pytest.mark.parametrize("name, p, n, options", [
    ("allreduce.snake", 16, 10**9, {}), ("allreduce.fence", 64, 10**9, {}), ("allreduce.fence", 16, 10**8, {}),
    ("allreduce.snake", 8, 10**6, {"block": 1000}), ("allreduce.fence", 4, 0, {}),
])
def test_a_pipeline_is_counted_block_by_block(name, p, n, options):
    """Snake and fence hold N / block blocks (the default block grows like sqrt N): the
    estimate counts them before building, within 1 % of the schedule built (it extrapolated
    from N = 2^14 and 2^15 and was 2000x short at N = 10^18)."""
    from netmodels.simulate.cli import pipeline_blocks

    g = budget.growth(lambda q, k: registry.build(name, q, k, **options), n, p, pipeline_blocks(name, options))
    real = budget._counts(registry.build(name, p, n, **options))
    for est, count, what in zip(g.at(p, n), real, budget.COUNTS):
        assert abs(est - count) <= 0.01 * count + 1e-9, (what, est, count)


def test_a_default_fence_of_10_18_elements_is_refused_quickly(capsys):
    """Refused in one line, naming its 10^7 steps, after a probe of at most a few seconds."""
    t0 = time.process_time()
    assert main(["simulate", "fence", "-P", "4", "-N", "10^18", "--model", "logp"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "1.9e+07 steps" in line and "--force runs it anyway" in line
    assert time.process_time() - t0 < 10


def test_the_probe_measures_this_machines_speed():
    """A simulation that burns a known CPU time per transfer: the estimate follows it, not the
    module's rates (at 2^18 ranks, from probes of at most 2^13: 32x smaller)."""
    def burn(schedule):
        t0 = time.process_time()
        want = 2e-6 * sum(len(s) for s in schedule.steps)
        while time.process_time() - t0 < want:
            pass

    build = lambda q, k: registry.build("barrier.dissemination", q, k)          # noqa: E731
    est = budget.estimate(build, 2**18, 0, "sync", simulate=burn)
    truth = 2e-6 * 18 * 2**18
    assert est.probe[0] <= 2**13
    assert truth / 1.5 < est.seconds < 1.5 * truth, (est.seconds, truth)


def test_a_run_of_blocks_is_probed_at_its_own_elements_per_rank():
    """Ring allreduce at P = N = 2896 (one element a rank) is probed with one element a rank
    too, not at 2896 elements on fewer ranks; one element on many ranks stays one."""
    build = lambda q, k: registry.build("allreduce.ring", q, k)                  # noqa: E731
    g = budget.growth(build, 2896, 2896)
    p, n = budget._probe_point(g, 2896, 2896, "loggopsim", budget.PROBE_S)
    assert p < 2896 and n == p
    g1 = budget.growth(build, 1, 2896)
    assert budget._probe_point(g1, 2896, 1, "sync", budget.PROBE_S)[1] == 1


def test_dropped_candidates_mapped_afresh_are_charged_their_page_faults():
    """Two-phase broadcast of one element at 5792 ranks walks about P^2 candidates in one step
    (far above the allocator's mmap threshold): 64 bytes each at 2.5 ns a byte; ring
    allreduce of one element walks P a step (1 MB at 16384 ranks, reused): no charge."""
    two_phase = budget.growth(lambda q, k: registry.build("broadcast.two_phase", q, k), 1, 5792)
    expected = 5792 * 5791 * 64 * 2.5e-9
    assert expected / 2 < budget.fault_seconds(two_phase.at(5792)) < 2 * expected
    ring = budget.growth(lambda q, k: registry.build("allreduce.ring", q, k), 1, 16384)
    assert budget.fault_seconds(ring.at(16384)) == 0.0


_FAULTS = """
import resource, sys
import numpy as np
from netmodels.simulate import budget
a = np.ones(2**20)                       # 8 MiB: above glibc's first threshold, below its largest
b = a + 1                                # the threshold adapts to 8 MiB blocks here
del b
with budget._fresh_memory(sys.argv[1] == "fresh"):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        b = a + 1                        # a temporary of 8 MiB, freed at once
        del b
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def test_a_probe_for_a_run_of_large_steps_maps_its_blocks_afresh_as_the_run_will():
    """In a process whose allocator has adapted, an 8 MiB temporary reuses the heap; in the
    probe of a run whose steps' arrays are 32 MiB or more it is mapped afresh each time and
    faulted in again (as every such array of the run is: 20 of them here, 8 MiB each, numpy's
    huge-page advice or not)."""
    def faults(mode):
        res = subprocess.run([sys.executable, "-c", _FAULTS, mode], capture_output=True, text=True, check=True)
        return int(res.stdout)

    warm, fresh = faults("warm"), faults("fresh")
    assert fresh > max(5 * warm, 20 * 4), (warm, fresh)
    large, small = (0, 1, 2**22, 0, 2**22), (0, 1, 2**21, 0, 2**21)
    assert budget.fresh_steps(large) and not budget.fresh_steps(small)


def test_the_loggopsim_loop_is_charged_its_misses_beyond_the_cache():
    """No charge while the messages fit the cache; nearly the full per-message cost far beyond."""
    cache = 32 * 2**20
    assert budget.miss_seconds(1000, cache) == 0.0
    far = budget.miss_seconds(1e9, cache)
    assert 0.99 * 1e9 * budget.LOGGOPSIM_MISS_S < far <= 1e9 * budget.LOGGOPSIM_MISS_S
    assert 0 < budget.miss_seconds(1e6, cache) < budget.miss_seconds(2e6, cache) / 2
    assert budget.cache_bytes() >= 2**20


#: a command that runs under a limit of its address space (``ulimit -v``), in bytes above what
#: it uses once started
LIMITED = """
import resource, subprocess, sys
limit = int(sys.argv[1])
res = subprocess.run(sys.argv[2:], capture_output=True, text=True,
                     preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
sys.stdout.write(res.stdout)
sys.stderr.write(res.stderr)
sys.exit(res.returncode)
"""

#: address space of ``python -m netmodels simulate`` under the limit, bytes (its libraries
#: map about 1 GB of address space they never touch)
LIMIT = 3 * 2**30


def _limited(*argv, timeout=120):
    cmd = [sys.executable, "-c", LIMITED, str(LIMIT), sys.executable, "-m", "netmodels", "simulate", *argv]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.cli
def test_ulimit_v_is_seen_and_the_run_refused_before_it_builds():
    """alltoall.direct at 8192 ranks holds 6.7e7 transfers in one step (about 5 GiB): under a
    3 GiB address space it is refused in one line naming what is left, before building."""
    t0 = time.monotonic()
    res = _limited("alltoall.direct", "-P", "8192", "-N", "8192", "--model", "logp")
    [line] = res.stderr.splitlines()
    assert res.returncode == 2 and res.stdout == "", res.stderr
    assert "GiB of memory" in line and "--force runs it anyway" in line
    available = float(line.split("GiB of memory (")[1].split(" GiB")[0])
    assert available < LIMIT / 2**30
    assert time.monotonic() - t0 < 60


@pytest.mark.cli
@pytest.mark.parametrize("semantics", ["stepwise", "loggopsim"])
def test_force_past_memory_ends_in_one_line(semantics):
    """--force past the memory left under ``ulimit -v``: the run ends in one line, status 1."""
    argv = (["alltoall.direct", "-P", "8192", "-N", "8192"] if semantics == "stepwise"
            else ["barrier.dissemination", "-P", "2^23"])
    res = _limited(*argv, "--model", "logp", "--semantics", semantics, "--force")
    assert res.returncode == 1, res.stderr
    assert "Traceback" not in res.stderr and "Error" not in res.stdout
    [line] = res.stderr.splitlines()
    assert line.startswith("python -m netmodels simulate: error: ") and "ran out of memory" in line
