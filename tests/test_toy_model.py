"""Adding a model touches the table and the model's own module only: a toy model, written here as
a module of its own and declared as one entry of the table of models, is simulated, listed and
priced by ``python -m netmodels simulate --model toy``, priced by predict from a calibration
that names it, and calibrated by predict from a ping-pong's measured file, as its entry declares
(``calibration``), with no edit to predict.

The toy: every message costs ``t`` (s) at its sender and ``t + b m`` at its receiver (``m``
bytes), a rank's step its sum, steps loosely synchronous: a ping-pong's one-way time is
2 t + b m, so its entry takes t = α / 2 and b = β from the ping-pong's line α + β m.  The
references are closed forms counted from the algorithms' definitions, not from the toy's rule,
and the α and β of synthetic ping-pong files written as exact lines.
"""

from __future__ import annotations

import importlib
import json
import math
import subprocess
import sys
import textwrap

import pytest

from netmodels.algorithms import registry
from netmodels.models import table
from netmodels.simulate import simulate
from tests.mpirun import ROOT

#: the toy's own module, as a new model's file would be
TOY_MODULE = textwrap.dedent('''
    """A toy model: each message costs t (s) at its sender and t + b m at its receiver (m bytes)."""

    from dataclasses import dataclass

    import numpy as np

    from netmodels.models.step import SyncRule, per_rank_sum
    from netmodels.models.table import Calibrated, Entry, Parameter


    @dataclass(frozen=True)
    class Toy:
        t: float
        b: float = 0.0
        name: str = "toy"
        source: str = "made up for a test"
        semantics = "sync"

        def __post_init__(self):
            if not (self.t >= 0 and self.b >= 0):
                raise ValueError(f"t and b must be >= 0, got {self.t!r}, {self.b!r}")

        def step_rule(self, schedule):
            return ToyRule(self, schedule.nprocs)


    class ToyRule(SyncRule):
        def costs(self, step):
            m = self.model
            sent, _ = per_rank_sum(step, np.full(step.src.size, m.t))
            _, received = per_rank_sum(step, m.t + m.b * step.nbytes)
            return sent + received, None


    #: its line in the table of models; predict calibrates it from the ping-pong's line α + β m
    #: (the fit's alpha_s and beta_s_per_byte): a one-way time is 2 t + b m, so t = α / 2
    ENTRY = Entry("toy", "toy model", Toy,
                  (Parameter("t", "s", "per message, at either end", "alpha_s", "> 0"),
                   Parameter("b", "s/B", "per byte received", "beta_s_per_byte", "> 0")),
                  lambda: Toy(3e-6, 2e-9, name="toy default", source="made up for a test"),
                  lambda t, b: Toy(t, b), lambda m: {"t": m.t, "b": m.b},
                  calibration=Calibrated(("pingpong",), {"pingpong": ("t", "b")},
                                         derive=lambda taken, fits, nprocs: {"t": taken["t"] / 2}, plain=True))
''')

#: the table declaring the toy, in a process of the command line (the entry appended to MODELS, as
#: its line in table.py would be), then ``python -m netmodels`` itself
PROLOGUE = textwrap.dedent('''
    import runpy, sys
    sys.path.insert(0, sys.argv.pop(1))
    import toy_model
    from netmodels.models import table
    table.MODELS["toy"] = toy_model.ENTRY
    sys.argv[0] = "netmodels"
    runpy.run_module("netmodels", run_name="__main__", alter_sys=True)
''')


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy's module (a file of its own) imported, and its entry in the table."""
    (tmp_path / "toy_model.py").write_text(TOY_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("toy_model", None)
    module = importlib.import_module("toy_model")
    monkeypatch.setitem(table.MODELS, "toy", module.ENTRY)
    yield tmp_path
    sys.modules.pop("toy_model", None)


def dissemination(t: float, P: int) -> float:
    """ceil(log2 P) rounds; in each, every rank sends one empty message and receives one."""
    return math.ceil(math.log2(P)) * 2 * t


def recursive_doubling(t: float, b: float, P: int, N: int) -> float:
    """P a power of two: log2 P exchanges of the whole vector (8 N bytes) each way."""
    return int(math.log2(P)) * (2 * t + b * 8 * N)


def command(tmp_path, *args):
    return subprocess.run([sys.executable, "-c", PROLOGUE, str(tmp_path), "simulate", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_the_table_lists_the_toy_and_builds_it(toy):
    assert "toy" in table.names() and "toy" in table.names(numeric=True)
    entry = table.get("toy")
    assert entry.semantics == "sync" and entry.defaults() == {"t": 3e-6, "b": 2e-9}
    assert entry.make(t=1e-6).t == 1e-6 and entry.make(t=1e-6).b == 2e-9
    with pytest.raises(ValueError, match="model toy has no parameter 'alpha'"):
        entry.make(alpha=1.0)


@pytest.mark.parametrize("P", [2, 7, 8, 33])
def test_the_engine_simulates_the_toy(toy, P):
    model = table.get("toy").make(t=1.5e-6)
    got = simulate(registry.build("barrier.dissemination", P), model)
    assert got.time == pytest.approx(dissemination(1.5e-6, P), rel=1e-12)
    model = table.get("toy").make(t=1e-6, b=3e-9)
    got = simulate(registry.build("allreduce.recursive_doubling", 8, 100), model)
    assert got.time == pytest.approx(recursive_doubling(1e-6, 3e-9, 8, 100), rel=1e-12)


def test_the_command_line_lists_the_toy(toy):
    res = command(toy, "--help")
    assert res.returncode == 0, res.stderr
    models = res.stdout.split("models (--model NAME)")[1]
    assert "toy (toy model, sync): toy default (made up for a test)" in models
    assert "per message, at either end" in models and "per byte received" in models


def test_the_command_line_prices_the_toy(toy):
    out = toy / "r.json"
    res = command(toy, "allreduce.recursive_doubling", "-P", "8", "-N", "100", "--model", "toy",
                  "--param", "t=1e-6", "--json", str(out))
    assert res.returncode == 0, res.stderr
    data = json.loads(out.read_text())
    assert data["model"] == "toy" and data["semantics"] == "sync"
    assert data["time_s"] == pytest.approx(recursive_doubling(1e-6, 2e-9, 8, 100), rel=1e-12)
    assert "model toy, sync semantics (the model's own)" in res.stdout


def test_the_command_line_refuses_a_parameter_the_toy_has_not(toy):
    res = command(toy, "barrier.dissemination", "-P", "8", "--model", "toy", "--param", "alpha=1")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "no parameter 'alpha'" in res.stderr


def test_predict_prices_a_calibration_that_names_the_toy(toy):
    from mpi_exercises.bench.predict.calibration import Calibration
    from mpi_exercises.bench.predict.comparison import network_times

    cal = Calibration({"toy": {"t": 2e-6, "b": 1e-9}}, source="given")
    times = network_times(registry.build("allreduce.recursive_doubling", 16, 50), cal)
    assert times == {"toy": pytest.approx(recursive_doubling(2e-6, 1e-9, 16, 50), rel=1e-12)}


# ---------------------------------------------------------------- predict calibrates the toy
ALPHA, BETA = 4e-6, 2.5e-9                         # the ping-pong's line: s, s/B
SIZES = [0, 1, 8, 64, 512, 4096, 32768, 262144]


def pingpong_file(path, alpha=ALPHA, beta=BETA):
    """A ``pingpong --json`` file whose times are the line alpha + beta m exactly."""
    rows = [{"bytes": float(m), "min_s": alpha + beta * m, "median_s": 2 * (alpha + beta * m),
             "ci_relative_halfwidth": 0.01} for m in SIZES]
    path.write_text(json.dumps({"benchmark": "pingpong", "results": rows}))
    return path


def test_predict_calibrates_the_toy_from_the_fits_as_its_entry_declares(toy):
    from mpi_exercises.bench import predict

    assert "toy" in predict.calibrated() and "toy" in predict.plain()
    assert predict.measured_by("toy") == ("pingpong",)
    got = predict.network_parameters({"alpha_s": ALPHA, "beta_s_per_byte": BETA}, None, None, 2)
    assert got["toy"] == {"t": ALPHA / 2, "b": BETA}
    assert got["alpha-beta"] == {"alpha": ALPHA, "beta": BETA}         # the others as before
    # no ping-pong fit: no toy (a PRTT fit alone calibrates LogGP only)
    prtt = {"L_s": 1e-6, "o_s_s": 1e-6, "o_r_s": 1e-6, "g_s": 1e-6, "G_s_per_byte": 1e-9}
    assert set(predict.network_parameters(None, prtt, None, 2)) == {"loggp"}


def test_predict_calibrates_and_prices_the_toy_from_a_pingpong_file(toy):
    from mpi_exercises.bench import predict

    cal = predict.load_calibration([pingpong_file(toy / "pingpong.json")], 8)
    assert cal.models["toy"] == pytest.approx({"t": ALPHA / 2, "b": BETA}, rel=1e-9)
    rows = [{"collective": "allreduce", "algorithm": "recursive_doubling", "nelems": 100, "min_s": 1e-3},
            {"collective": "barrier", "algorithm": "dissemination", "nelems": 0, "min_s": 1e-4}]
    got = predict.compare(rows, cal, 8)
    assert got[0]["predicted_s"]["toy"] == pytest.approx(recursive_doubling(ALPHA / 2, BETA, 8, 100), rel=1e-9)
    assert got[1]["predicted_s"]["toy"] == pytest.approx(dissemination(ALPHA / 2, 8), rel=1e-9)
    assert "toy" in predict.summarize_errors(got)
    # a calibration without it names it and what to measure for it
    given = predict.Calibration({"alpha-beta": {"alpha": ALPHA, "beta": BETA}}, source="given")
    line = predict.missing_line(given)
    assert "toy" in line and "mpi_exercises pingpong --json pingpong.json" in line


def test_predict_refuses_an_unphysical_fit_of_the_toy_by_its_parameters_range(toy):
    from mpi_exercises.bench import predict

    models = predict.network_parameters({"alpha_s": ALPHA, "beta_s_per_byte": BETA}, None, None, 2)
    models["toy"]["t"] = -1e-6
    assert predict.unphysical(models).startswith("the toy fit: t = -1 µs <= 0, which no network has")
    models["toy"]["t"] = ALPHA / 2
    before = predict.Calibration(models, source="measured")
    moved = predict.Calibration({**models, "toy": {"t": 3 * ALPHA / 2, "b": BETA}}, source="measured")
    assert predict.drift(before, moved) == {"largest": pytest.approx(2.0), "at": "toy t", "stable": False}
