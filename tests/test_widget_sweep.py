"""Every figure the book shows, swept over the range of each of its controls: finite values,
no negative time, and named choices (never numeric codes).

For each :class:`~netmodels.figures.panel.PanelSpec` of the chapters, each control in turn
takes every value of its static slider, both ends and the middle of its live span, and each
of its options (only the static values where the live panel draws with a view of its own),
the other controls at their defaults; the figure's data must be finite
where defined, and, on a time axis, never negative.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from netmodels.figures import (logp_panel, lop_panel, models_panel, multilevel_panel, nbl_plots,
                               scale_plots, topology_panel, widgets)

DATA = Path(__file__).resolve().parent.parent / "book" / "data"


def _machine():
    ref = {k: json.loads((DATA / f"{k}_reference.json").read_text()) for k in ("bsp", "logp", "pingpong")}
    return models_panel.machine_from_reference(ref["bsp"], ref["logp"], ref["pingpong"])


def _scale_rows():
    data = json.loads((DATA / "scale_reference.json").read_text())
    return data["rows"] if isinstance(data, dict) else data


SPECS = {
    "alpha_beta": lambda: widgets.alpha_beta_spec(),
    "logp barriers": lambda: logp_panel.barrier_spec(),
    "lop Send/Receive": lambda: lop_panel.lop_spec("Send/Receive (min)"),
    "lop RDMA Write": lambda: lop_panel.lop_spec("RDMA Write (min)"),
    "models compared": lambda: models_panel.models_spec(_machine()),
    "multilevel": lambda: multilevel_panel.multilevel_spec(),
    "nbl curves": lambda: nbl_plots.curves_spec(),
    "nbl regimes": lambda: nbl_plots.regime_spec(),
    "scale barrier": lambda: scale_plots.scale_spec(_scale_rows(), "barrier"),
    "scale allreduce": lambda: scale_plots.scale_spec(_scale_rows(), "allreduce"),
    "topology": lambda: topology_panel.topology_spec(),
}


def _settings(control, live: bool = True):
    """Every value the sweep gives one control (``live=False``: the static twin's values only,
    for a figure whose live panel draws with its own view)."""
    if not live:
        return list(np.asarray(control.values).ravel()) if control.values is not None else []
    out = list(control.options or ())
    if control.values is not None:
        out += list(np.asarray(control.values).ravel())
    if control.span is not None and not control.options:
        lo, hi = control.span
        mid = (lo * hi) ** 0.5 if control.log and lo > 0 else (lo + hi) / 2
        out += [lo, hi, round(mid) if control.integer else mid]
    return out


def _numbers(data):
    if not isinstance(data, dict):          # a heatmap or a figure's own array
        yield "data", np.asarray(data, dtype=float)
        return
    for trace, value in data.items():
        if isinstance(value, tuple):
            value = value[1]
        arr = np.asarray(value, dtype=float)
        yield trace, arr


@pytest.mark.parametrize("name", list(SPECS))
def test_every_control_over_its_range(name):
    spec = SPECS[name]()
    is_time = any(w in (spec.ylabel or "") for w in ("time", "(µs)", "(s)", "(ms)"))
    bad = []
    for control in spec.controls:
        if control.options:
            assert all(isinstance(o, str) or control.names for o in control.options), \
                f"{name}: control {control.name} offers unnamed options {control.options}"
        for value in _settings(control, live=spec.view is None):
            value = int(value) if control.integer else value
            data = spec.figure_data({control.name: value})
            for trace, arr in _numbers(data):
                if np.isinf(arr).any():
                    bad.append(f"{control.name}={value}: {trace} infinite")
                if is_time and (arr[np.isfinite(arr)] < 0).any():
                    bad.append(f"{control.name}={value}: {trace} down to {np.nanmin(arr):.3g} (negative time)")
    assert not bad, f"{name}:\n" + "\n".join(bad[:20])


@pytest.mark.parametrize("name", list(SPECS))
def test_every_control_is_explained_and_the_axes_carry_units(name):
    """Each control has one line saying what it is (the live panel's key); each
    numeric axis of the curves names its unit (or counts something: processes, peers, ranks)."""
    spec = SPECS[name]()
    unexplained = [c.name for c in spec.controls if len(c.help.split()) < 3]
    assert not unexplained, f"{name}: controls without a one-line explanation: {unexplained}"
    if spec.kind == "lines":
        for axis in (spec.xlabel, spec.ylabel):
            assert "(" in axis or axis.split()[0] in ("bytes", "processes", "peers"), f"{name}: axis {axis!r} names no unit"


def test_the_live_panel_shows_the_key():
    """The live panel (ipywidgets) shows each control's line in its key, under the status line."""
    pytest.importorskip("ipywidgets")
    spec = SPECS["lop Send/Receive"]()
    panel = spec.live()
    status = panel.children[-1].value
    for control in spec.controls:
        assert control.help in status, control.name
