"""``python -m netmodels simulate ALGORITHM -P RANKS --model MODEL``: predict a collective's time.

Builds the algorithm's schedule (:mod:`netmodels.algorithms.registry`) and
runs :func:`netmodels.simulate.simulate` on it; prints the predicted time, steps,
messages, bytes and the wall time of the simulation, and optionally writes them as JSON.
Bad input exits with status 2 and one line on stderr.
"""

from __future__ import annotations

import argparse
import math
import sys
import threading
import time
from contextlib import contextmanager

from tqdm import tqdm

from ..algorithms import registry
from ..models import nbl
from ..models.alphabeta import AlphaBeta
from ..models.logp import LogGP, LogP
from ..models import machines
from ..models.machines import SIMULATE_DEFAULTS
from ..models.nbl import NBLModel
from ..commandline import available_memory
from ..outputs import write_json
from . import budget
from .engine import SEMANTICS, simulate

_AB, _LOGGP, _NBL = (getattr(machines, SIMULATE_DEFAULTS[m]) for m in ("alphabeta", "loggp", "nbl"))
assert getattr(machines, SIMULATE_DEFAULTS["logp"]) is _LOGGP     # logp is loggp without G

#: model -> parameter -> (default, unit, meaning); defaults from machines.SIMULATE_DEFAULTS
PARAMETERS = {
    "alphabeta": {
        "alpha": (_AB.alpha, "s", "latency per message"),
        "beta": (_AB.beta, "s/B", "time per byte"),
    },
    "logp": {
        "L": (_LOGGP.L, "s", "latency"),
        "o_s": (_LOGGP.o_s, "s", "send overhead"),
        "o_r": (_LOGGP.o_r, "s", "receive overhead"),
        "g": (_LOGGP.g, "s", "gap between sends (receives)"),
    },
    "nbl": {
        "alpha": (_NBL.alpha, "s", "start-up per message"),
        "beta": (_NBL.beta, "s/element", "time per element"),
        "c2": (_NBL.c2, "s/element", "2-way combine"),
        "c3": (_NBL.c3, "s/element", "3-way combine"),
        **{f"f{L}": (v, "", f"f({L}), node bandwidth factor with {L} links active")
           for L, v in nbl.FITTED_DELTA.items() if L > 1},
    },
}
PARAMETERS["loggp"] = {**PARAMETERS["logp"], "G": (_LOGGP.G, "s/B", "time per byte of a long message")}


def _machine(model: str) -> str:
    """The default machine of ``model`` as the output names it: name, variable, provenance."""
    var = SIMULATE_DEFAULTS[model]
    m = getattr(machines, var)
    extra = " with the paper's fitted f(L) (nbl.FITTED_DELTA)" if model == "nbl" else ""
    return f"{m.name} (machines.{var}: {m.source}){extra}"


#: model -> the default machine, as printed and written to the JSON
SOURCES = {model: _machine(model) for model in PARAMETERS}


def _ranks(text: str) -> int:
    """argparse type: ranks >= 1, as an integer or a power (``2^20``, ``10^6``).  A power
    far beyond int32 is refused here, before it is computed (``2^99999999`` would not end)."""
    base, caret, power = text.strip().partition("^")
    try:
        b, k = int(base), int(power) if caret else 1
    except ValueError:
        b = k = -1
    if b < 1 or k < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1 (or a power such as 2^20), got {text!r}")
    if b > 1 and k * math.log2(b) > 62:
        raise argparse.ArgumentTypeError(f"P = {text.strip()} is far above 2^31 - 1 = {budget.MAX_RANKS}, "
                                         "the most ranks a schedule holds (int32)")
    return b**k


def _elements(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def _pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()


def _epilog() -> str:
    lines = ["algorithms (collective.algorithm; the algorithm alone when unambiguous):",
             "  " + ", ".join(sorted(registry.names())), "",
             "model parameters (--param NAME=VALUE, SI units; defaults):"]
    for model, params in PARAMETERS.items():
        lines.append(f"  {model}: {SOURCES[model]}" + ("; fN=VALUE sets f(N) for any N" if model == "nbl" else ""))
        for name, (default, unit, meaning) in params.items():
            lines.append(f"    {name:<6} = {default:<12.6g} {unit:<10} {meaning}")
    takes = {}
    for a in registry.algorithms():
        for option in a.options:
            takes.setdefault(option, []).append(a.name)
    lines += ["", "algorithm options (--option NAME=VALUE):"]
    lines += [f"  {option:<8} {', '.join(names)}" for option, names in sorted(takes.items())]
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = _epilog()
    p.add_argument("algorithm", metavar="ALGORITHM", help="a registered algorithm (list below)")
    p.add_argument("-P", "--ranks", type=_ranks, required=True, metavar="RANKS",
                   help="number of ranks (>= 1; a power such as 2^20 or 10^6 is accepted)")
    p.add_argument("--model", choices=sorted(PARAMETERS), required=True, help="cost model")
    p.add_argument("--param", type=_pair, action="append", default=[], metavar="NAME=VALUE",
                   help="override a model parameter (SI units, see below)")
    p.add_argument("-N", "--elements", type=_elements, default=None, metavar="ELEMENTS",
                   help="vector elements (8 B each; default 0 for barriers, 1 otherwise)")
    p.add_argument("--option", type=_pair, action="append", default=[], metavar="NAME=VALUE",
                   help="an option of the algorithm's builder")
    p.add_argument("--semantics", choices=SEMANTICS, default="sync", help="step semantics (default sync)")
    p.add_argument("--json", metavar="FILE", help="also write the result as JSON")
    p.add_argument("--force", action="store_true",
                   help="simulate even when the estimate says the run would take more than "
                        f"{budget.MAX_SECONDS:.0f} s or more memory than is available")


def _number(name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"parameter {name} must be a finite number >= 0, got {text!r}")
    return value


def parameter_values(model: str, overrides) -> dict:
    """The model's parameters by their ``--param`` names: defaults, then ``overrides``
    ``[(name, text), ...]``."""
    values = {name: default for name, (default, _, _) in PARAMETERS[model].items()}
    for name, text in overrides:
        if name not in values and not (model == "nbl" and name[:1] == "f" and name[1:].isdigit()):
            raise ValueError(f"model {model} has no parameter {name!r}; it has {', '.join(values)}")
        values[name] = _number(name, text)
    return values


def build_model(model: str, values: dict):
    """The model object from its parameter ``values`` (:func:`parameter_values`)."""
    if model == "alphabeta":
        return AlphaBeta(values["alpha"], values["beta"])
    if model in ("logp", "loggp"):
        cls, extra = (LogGP, {"G": values["G"]}) if model == "loggp" else (LogP, {})
        return cls(L=values["L"], o=values["o_s"], g=values["g"], P=2, o_r=values["o_r"], **extra)
    f = {int(k[1:]): v for k, v in values.items() if k[:1] == "f" and k[1:].isdigit()}
    return NBLModel(values["alpha"], values["beta"], f, {2: values["c2"], 3: values["c3"]})


def _option(text: str):
    """An option's value: an integer, a tuple of integers (``4x2`` or ``4,2``: a mesh, a
    hierarchy of nodes), else the text."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return tuple(int(v) for v in text.replace("x", ",").split(","))
    except ValueError:
        return text


def format_time(seconds: float) -> str:
    """``seconds`` with a readable unit (ns, µs, ms, s)."""
    if seconds == 0:
        return "0 s"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if seconds >= scale or unit == "ns":
            return f"{seconds / scale:.6g} {unit}"
    return f"{seconds:g} s"


def describe_parameters(model: str, values: dict, overrides) -> list[str]:
    """Lines naming the machine and every parameter value with its unit (``*``: set by --param);
    times in a readable unit (µs, ns), the rest in SI units."""
    given = {name for name, _ in overrides}
    lines = [f"  machine         {SOURCES[model]}" + (" with --param overrides" if given else "")]
    units = {name: unit for name, (_, unit, _) in PARAMETERS[model].items()}

    def shown(name, value):
        unit = units.get(name, "")
        text = format_time(value) if unit == "s" else f"{value:.6g}{(' ' + unit).rstrip()}"
        return f"{name} = {text}{'*' if name in given else ''}"

    lines.append("  parameters      " + "  ".join(shown(n, v) for n, v in values.items()))
    return lines


@contextmanager
def _elapsed(desc: str):
    """On a terminal, after 2 s, a line ``desc: elapsed`` on stderr, kept ticking until the
    block ends (a schedule's build reports no steps of its own)."""
    bar = tqdm(desc=desc, bar_format="{desc}: {elapsed}", file=sys.stderr, leave=False, delay=2,
               disable=not sys.stderr.isatty())
    done = threading.Event()

    def tick():
        if done.wait(2.0):
            return
        while not done.wait(0.5):
            bar.refresh()

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        bar.close()


def run(args) -> int:
    try:
        algorithm = registry.get(args.algorithm)
        name = algorithm.name
        values = parameter_values(args.model, args.param)
        model = build_model(args.model, values)
        n = args.elements if args.elements is not None else (0 if name.startswith("barrier.") else 1)
        options = {k: _option(v) for k, v in args.option}
        refused = budget.refusal(lambda p, m: algorithm.build(p, m, **options), args.ranks, n,
                                 available_memory(), force=args.force)
        if refused:
            print(f"python -m netmodels simulate: error: {refused}", file=sys.stderr)
            return 2
        t0 = time.perf_counter()
        with _elapsed(f"building the schedule of {name} on {args.ranks} ranks"):
            schedule = algorithm.build(args.ranks, n, **options)
        t1 = time.perf_counter()
    except (ValueError, TypeError) as exc:
        print(f"python -m netmodels simulate: error: {exc}", file=sys.stderr)
        return 2
    print(f"{name} on P = {args.ranks} ranks, N = {n} elements, model {args.model} ({args.semantics})")
    print("\n".join(describe_parameters(args.model, values, args.param)), flush=True)
    try:
        with tqdm(total=schedule.nsteps, unit="step", desc="simulating", file=sys.stderr, delay=2,
                  disable=not sys.stderr.isatty(), leave=False) as bar:
            result = simulate(schedule, model, semantics=args.semantics, progress=bar.update)
    except (ValueError, TypeError) as exc:       # a model that lacks a value the schedule needs
        print(f"python -m netmodels simulate: error: {exc}", file=sys.stderr)
        return 2
    t2 = time.perf_counter()
    print(f"  predicted time  {format_time(result.time)}")
    print(f"  steps           {result.steps}")
    print(f"  messages        {result.messages}")
    print(f"  bytes           {result.bytes}")
    print(f"  wall time       build {t1 - t0:.3f} s, simulation {t2 - t1:.3f} s")
    if args.json:
        record = {"algorithm": name, "P": args.ranks, "N": n, "options": options, "model": args.model,
                  "machine": SIMULATE_DEFAULTS[args.model], "machine_description": SOURCES[args.model],
                  "parameters": values, "parameter_units": {k: u for k, (_, u, _) in PARAMETERS[args.model].items()
                                                            if k in values},
                  "semantics": args.semantics, "time_s": result.time, "steps": result.steps,
                  "messages": result.messages, "bytes": result.bytes,
                  "build_wall_s": t1 - t0, "simulate_wall_s": t2 - t1}
        write_json(args.json, record)
    return 0
