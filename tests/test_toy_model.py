"""Adding a model touches the table and the model's own module only: a toy model, written here as
a module of its own and declared as one entry of the table of models, is simulated, listed and
priced by ``python -m netmodels simulate --model toy``, and priced by predict from a calibration
that names it.

The toy: every message costs ``t`` (s) at its sender and ``t + b m`` at its receiver (``m``
bytes), a rank's step its sum, steps loosely synchronous.  The references are closed forms
counted from the algorithms' definitions, not from the toy's rule.
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
    from netmodels.models.table import Entry, Parameter


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


    #: its line in the table of models
    ENTRY = Entry("toy", "toy model", Toy,
                  (Parameter("t", "s", "per message, at either end"), Parameter("b", "s/B", "per byte received")),
                  lambda: Toy(3e-6, 2e-9, name="toy default", source="made up for a test"),
                  lambda t, b: Toy(t, b), lambda m: {"t": m.t, "b": m.b})
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
