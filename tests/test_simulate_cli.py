"""``python -m netmodels simulate`` in a subprocess: output, JSON, closed form at 2^20, bad input."""

import json
import subprocess
import sys

import pytest

from netmodels.__main__ import main
from netmodels.algorithms import registry
from netmodels.models import logp
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
    assert data["time_s"] == pytest.approx(logp.barrier_time("dissemination", m.with_P(2**20)), rel=1e-12)
    assert (data["steps"], data["messages"], data["bytes"]) == (20, 20 * 2**20, 0)


def test_parameters_and_semantics_reach_the_model(tmp_path):
    out = tmp_path / "r.json"
    res = run("allreduce.recursive_doubling", "-P", "6", "-N", "100", "--model", "alphabeta",
              "--param", "alpha=1e-6", "--param", "beta=1e-9", "--semantics", "stepwise", "--json", str(out))
    assert res.returncode == 0, res.stderr
    data = json.loads(out.read_text())
    assert data["time_s"] == pytest.approx(4 * (1e-6 + 800e-9), rel=1e-12)   # fold, 2 exchanges, fold
    assert data["semantics"] == "stepwise" and data["bytes"] == 8 * 100 * (2 + 4 * 2 + 2)
    res = run("barrier.nway_dissemination", "-P", "9", "--model", "nbl", "--option", "n=2", "--json", str(out))
    assert res.returncode == 0, res.stderr
    assert json.loads(out.read_text())["steps"] == 2


def test_help_lists_algorithms_parameters_units_and_defaults():
    res = run("--help")
    assert res.returncode == 0
    for word in ("barrier.dissemination", "allreduce.ring", "broadcast.binomial", "o_s", "s/B", "s/element",
                 "f4", "KIT_VM_LOGGP", "DELTA", "LSDYNA_100MBIT"):
        assert word in res.stdout, word


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


@pytest.mark.parametrize("model", ["alphabeta", "logp", "loggp", "nbl"])
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
    assert main(["simulate", "fence", "-P", "8", "-N", "16", "--model", "alphabeta",
                 "--option", "mesh=4x2", "--option", "block=4"]) == 0
    assert main(["simulate", "alltoall.multilevel", "-P", "8", "--model", "loggp", "--option", "nodes=2,2"]) == 0
    assert main(["simulate", "fence", "-P", "8", "--model", "alphabeta", "--option", "mesh=3x3"]) == 2


@pytest.mark.parametrize("args, message", [
    (["allreduce.ring", "-P", "0", "--model", "logp"], "integer >= 1"),
    (["allreduce.ring", "-P", "x", "--model", "logp"], "integer >= 1"),
    (["nonesuch", "-P", "4", "--model", "logp"], "must be one of"),
    (["binomial", "-P", "4", "--model", "logp"], "ambiguous"),
    (["allreduce.ring", "-P", "4", "--model", "logp", "--param", "q=1"], "no parameter 'q'"),
    (["allreduce.ring", "-P", "4", "--model", "logp", "--param", "g=-1"], ">= 0"),
    (["allreduce.ring", "-P", "4", "--model", "alphabeta", "--param", "alpha=fast"], ">= 0"),
    (["allreduce.ring", "-P", "4", "--model", "alphabeta", "--param", "alpha"], "NAME=VALUE"),
    (["allreduce.ring", "-P", "4", "--model", "bsp"], "invalid choice"),
    (["allreduce.ring", "-P", "4", "--model", "logp", "-N", "-3"], "integer >= 0"),
    (["broadcast.binomial", "-P", "4", "--model", "logp", "--option", "root=4"], "root"),
    (["dissemination", "-P", "4", "--model", "logp", "-N", "5"], "nelems must be 0"),
    (["dissemination", "-P", "4", "--model", "logp", "--option", "fan_in=3"], "takes"),
    (["barrier.nway_dissemination", "-P", "64", "--model", "nbl", "--option", "n=4"], "f table"),
])
def test_bad_input_exits_2_with_one_line(args, message, capsys):
    try:
        status = main(["simulate", *args])
    except SystemExit as exc:       # argparse's own errors
        status = exc.code
    err = capsys.readouterr().err
    assert status == 2
    assert message in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if "error" in line]) == 1


def test_bad_input_in_a_subprocess_has_no_traceback():
    for args in (["allreduce.ring", "-P", "0", "--model", "logp"], ["nonesuch", "-P", "4", "--model", "logp"]):
        res = run(*args)
        assert res.returncode == 2 and "Traceback" not in res.stderr
        assert len(res.stderr.strip().splitlines()[-1]) > 0


def test_the_default_loggp_machine_is_the_kits_measurement():
    """machines.KIT_VM_LOGGP is today's fit to the per-size minima of the samples stored in
    book/data/logp_reference.json (L clipped at 0)."""
    from mpi_exercises.bench.logp_bench import fit

    data = json.loads((ROOT / "book" / "data" / "logp_reference.json").read_text())
    again = fit(data["results"], data["parameters"]["n"], "min_s")
    m = KIT_VM_LOGGP
    assert (m.o_s, m.o_r, m.g, m.G) == (again["o_s_s"], again["o_r_s"], again["g_s"], again["G_s_per_byte"])
    assert m.L == max(again["L_s"], 0.0)


def test_the_output_names_the_machine_and_the_json_keys_are_the_param_names(tmp_path):
    out = tmp_path / "r.json"
    res = run("allreduce.ring", "-P", "8", "--model", "loggp", "--param", "g=2e-6", "--json", str(out))
    assert res.returncode == 0, res.stderr
    assert "machines.KIT_VM_LOGGP" in res.stdout and "g = 2e-06 s*" in res.stdout
    data = json.loads(out.read_text())
    assert set(data["parameters"]) == {"L", "o_s", "o_r", "g", "G"}
    assert data["parameters"]["g"] == 2e-6 and data["parameters"]["o_s"] == KIT_VM_LOGGP.o_s
    assert "KIT_VM_LOGGP" in data["machine"]
