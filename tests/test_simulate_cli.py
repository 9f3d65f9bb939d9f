"""``python -m netmodels simulate`` in a subprocess: output, JSON, closed form at 2^20, the default
machines.  Bad input: the table of tests/test_netmodels_cli_errors.py."""

import json
import re
import subprocess
import sys

import pytest

from netmodels.__main__ import main
from netmodels.algorithms import registry
from netmodels.models import logp_barriers
from netmodels.models.machines import KIT_VM_LOGGP
from tests.mpirun import ROOT


def run(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "netmodels", "simulate", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout)


def test_dissemination_at_2_20_under_logp_equals_the_closed_form(tmp_path):
    out = tmp_path / "r.json"
    res = run("dissemination", "-P", "1048576", "--model", "logp", "--json", str(out))
    assert res.returncode == 0, res.stderr
    assert "predicted time" in res.stdout and "µs" in res.stdout and "wall time" in res.stdout
    data = json.loads(out.read_text())
    m = KIT_VM_LOGGP
    assert m.g <= m.one_way            # so every round costs one message end to end
    assert data["time_s"] == pytest.approx(20 * (m.L + m.o_s + m.o_r), rel=1e-12)
    assert data["time_s"] == pytest.approx(logp_barriers.barrier_time("dissemination", m.with_P(2**20)), rel=1e-12)
    assert (data["steps"], data["messages"], data["bytes"]) == (20, 20 * 2**20, 0)


def test_parameters_and_semantics_reach_the_model(tmp_path):
    out = tmp_path / "r.json"
    res = run("allreduce.recursive_doubling", "-P", "6", "-N", "100", "--model", "alpha-beta",
              "--param", "alpha=1e-6", "--param", "beta=1e-9", "--semantics", "stepwise", "--json", str(out))
    assert res.returncode == 0, res.stderr
    data = json.loads(out.read_text())
    assert data["time_s"] == pytest.approx(4 * (1e-6 + 800e-9), rel=1e-12)   # fold, 2 exchanges, fold
    assert data["semantics"] == "stepwise" and data["bytes"] == 8 * 100 * (2 + 4 * 2 + 2)
    assert "stepwise semantics\n" in res.stdout                 # chosen, not the model's own
    res = run("barrier.nway_dissemination", "-P", "9", "--model", "nbl", "--option", "n=2", "--json", str(out))
    assert res.returncode == 0, res.stderr
    assert json.loads(out.read_text())["steps"] == 2


def test_help_lists_algorithms_parameters_units_and_defaults():
    res = run("--help")
    assert res.returncode == 0
    for word in ("barrier.dissemination", "allreduce.ring", "broadcast.binomial", "o_s", "s/B", "s/element",
                 "f4", "course kit VM", "Touchstone DELTA", "100 Mbit Ethernet (LS-DYNA)", "alpha_inter",
                 "logp (LogP, stepwise)", "bsp (BSP, sync)", "default: the model's own"):
        assert word in res.stdout, word
    models, others = res.stdout.split("models (--model NAME)")[1].split("  not here: ")
    # LoP's parameters are curves of the peer count: no --model, but the help says why and how
    assert "alphabeta" not in res.stdout and not re.search(r"\blop\b", models)
    assert others.startswith("lop (a parameter is a curve, not a number: from Python, simulate(schedule, ")


def test_help_lists_every_registered_algorithm_and_option():
    res = run("--help")
    assert res.returncode == 0
    for alg in registry.algorithms():
        assert alg.name in res.stdout
        for option in alg.options:
            assert option in res.stdout


#: f(L) for the links the DELTA's measured table lacks (L = 5 and 7..10 at P = 6), as in the
#: nominal model f(L) = L: schedules where a rank has more than 6 links need them
F_BEYOND_DELTA = [f"f{L}={L}" for L in (5, 7, 8, 9, 10)]


@pytest.mark.parametrize("model", ["alpha-beta", "logp", "loggp", "nbl", "bsp", "twolevel"])
@pytest.mark.parametrize("name", registry.names())
def test_every_registered_algorithm_runs_under_every_model(name, model, capsys):
    params = [x for f in F_BEYOND_DELTA for x in ("--param", f)] if model == "nbl" else []
    assert main(["simulate", name, "-P", "6", "--model", model, *params]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert out.startswith(f"{name} on P = 6 ranks") and "predicted time" in out


def test_snake_on_16_ranks_under_nbl(capsys):
    assert main(["simulate", "snake", "-P", "16", "--model", "nbl"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("allreduce.snake on P = 16 ranks") and "steps           30" in out


def test_mesh_and_nodes_options_are_read_as_tuples(capsys):
    assert main(["simulate", "fence", "-P", "8", "-N", "16", "--model", "alpha-beta",
                 "--option", "mesh=4x2", "--option", "block=4"]) == 0
    assert main(["simulate", "alltoall.multilevel", "-P", "8", "--model", "loggp", "--option", "nodes=2,2"]) == 0
    assert main(["simulate", "fence", "-P", "8", "--model", "alpha-beta", "--option", "mesh=3x3"]) == 2


def test_the_default_loggp_machine_is_the_kits_measurement():
    """machines.KIT_VM_LOGGP is today's fit to the per-size minima of the samples stored in
    book/data/logp_kit_vm.json (L clipped at 0)."""
    from mpi_exercises.bench.logp_bench import fit

    data = json.loads((ROOT / "book" / "data" / "logp_kit_vm.json").read_text())
    again = fit(data["results"], data["parameters"]["n"], "min_s")
    m = KIT_VM_LOGGP
    assert (m.o_s, m.o_r, m.g, m.G) == (again["o_s_s"], again["o_r_s"], again["g_s"], again["G_s_per_byte"])
    assert m.L == max(again["L_s"], 0.0)


#: the default machine's name and parameters as the papers print them (LS-DYNA: 100 µs and
#: 1.75 MB/s; Littlefield section 7.2: 54 µs, 1.54 µs per double, c2 0.25 µs, c3 0.37 µs, here
#: per byte: / 8);
#: LogP's are the kit's fit (test_the_default_loggp_machine_is_the_kits_measurement)
DEFAULT_OUTPUT = {
    "alpha-beta": ["100 Mbit Ethernet (LS-DYNA)", "Wainscott & Wang", "alpha = 100 µs", "beta = 5.71429e-07 s/B",
                   "sync semantics (the model's own)"],
    "nbl": ["Intel Touchstone DELTA", "section 7.2", "alpha = 54 µs", "beta = 1.925e-07 s/B",
            "c2 = 3.125e-08 s/B", "c3 = 4.625e-08 s/B", "f4 = 3.9"],
    "logp": ["course kit VM", "book/data/logp_kit_vm.json", "per-size minima", "L = 0 s", "o_s = 566.722 ns",
             "o_r = 1.291 µs", "g = 1.2465 µs", "stepwise semantics (the model's own)"],
    "loggp": ["book/data/logp_kit_vm.json", "o_s = 566.722 ns", "G = 5.30643e-12 s/B", "stepwise semantics"],
}


@pytest.mark.parametrize("model", sorted(DEFAULT_OUTPUT))
def test_the_default_machine_and_its_parameters_are_printed_before_the_result(model):
    res = run("allreduce.ring", "-P", "8", "--model", model)
    assert res.returncode == 0, res.stderr
    head, sep, _ = res.stdout.partition("predicted time")
    assert sep
    for text in DEFAULT_OUTPUT[model]:
        assert text in head, (text, head)
    assert "--param overrides" not in head and "*" not in head


@pytest.mark.parametrize("model", ["alpha-beta", "logp", "loggp", "nbl"])
def test_every_json_parameter_key_is_a_param_name(model, tmp_path):
    """Each key of the JSON's "parameters", given back as ``--param KEY=VALUE``, is accepted and
    comes out as that value (marked ``*`` in the printed line)."""
    out = tmp_path / "r.json"
    assert run("allreduce.ring", "-P", "4", "--model", model, "--json", str(out)).returncode == 0
    keys = list(json.loads(out.read_text())["parameters"])
    given = [f"{k}={0.5 + i}" for i, k in enumerate(keys)]
    res = run("allreduce.ring", "-P", "4", "--model", model, "--json", str(out),
              *[x for g in given for x in ("--param", g)])
    assert res.returncode == 0, res.stderr
    data = json.loads(out.read_text())
    assert data["parameters"] == {k: 0.5 + i for i, k in enumerate(keys)}
    assert res.stdout.count("*") == len(keys) and "with --param overrides" in res.stdout
    from netmodels.models import machines

    want = {"alpha-beta": machines.LSDYNA_100MBIT, "nbl": machines.DELTA}.get(model, machines.KIT_VM_LOGGP)
    assert data["machine"] == want.name


#: ``python -m netmodels ARGS`` with the progress delay (2 s) shortened to 0.1 s, so that a run of
#: about a second stands for a long one
QUICK_PROGRESS = ("import sys; import netmodels.simulate.cli as cli; cli.PROGRESS_AFTER = 0.1; "
                  "from netmodels.__main__ import main; sys.exit(main(sys.argv[1:]))")


def test_a_run_longer_than_the_delay_shows_its_progress_on_a_terminal_only():
    """Ring allreduce on 2^14 ranks (32,766 steps, about a second each to build and to
    simulate), progress after 0.1 s instead of 2 s: on a terminal (120 columns) stderr shows
    the build's elapsed time and the simulation's step counter; into a pipe, nothing."""
    import fcntl
    import os
    import pty
    import struct
    import termios

    from netmodels.simulate import cli

    assert cli.PROGRESS_AFTER == 2.0   # what the README says
    argv = [sys.executable, "-c", QUICK_PROGRESS, "simulate", "allreduce.ring", "-P", "2^14", "--model", "logp"]
    main_fd, child_fd = pty.openpty()
    fcntl.ioctl(child_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=child_fd, text=True)
    os.close(child_fd)
    shown = b""
    while True:
        try:
            chunk = os.read(main_fd, 4096)
        except OSError:                          # the child closed its end
            break
        if not chunk:
            break
        shown += chunk
    out, _ = proc.communicate(timeout=120)
    os.close(main_fd)
    assert proc.returncode == 0 and "predicted time" in out
    walls = [float(w.split()[0]) for w in out.split("wall time       build ")[1].split(", simulation ")]
    if walls[0] > 0.8:                           # the delay, then one tick (0.5 s) of the elapsed line
        assert b"building the schedule of allreduce.ring on 16384 ranks: 00:0" in shown
    if walls[1] > 0.3:
        assert b"simulating: " in shown and b"/32766 [" in shown
    assert max(walls) > 0.8, "the run was too fast to show progress: make it larger"
    piped = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0 and "predicted time" in piped.stdout and piped.stderr == ""
