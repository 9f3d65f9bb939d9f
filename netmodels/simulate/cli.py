"""``python -m netmodels simulate ALGORITHM -P RANKS --model MODEL``: predict a collective's time.

Builds the algorithm's schedule (:mod:`netmodels.algorithms.registry`) and
runs :func:`netmodels.simulate.simulate` on it; prints the predicted time, steps,
messages, bytes and the wall time of the simulation, and optionally writes them as JSON.
The models, their parameters (names, units, meanings), default machines with their
sources, natural semantics and builders are the table's (:mod:`netmodels.models.table`,
every model whose parameters are numbers).  Bad input, or a run the budget
(:mod:`netmodels.simulate.budget`) finds too long or too large for the memory left (the node's
and ``ulimit -v``'s), exits with status 2 and one line on stderr; a run that runs out of
memory all the same (``--force``) with status 1 and one line.
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
from ..commandline import available_memory
from ..models import table
from ..outputs import write_json
from . import budget
from .arrival import RECEIVES
from .engine import ELEM_BYTES, MAX_ELEMENTS, SEMANTICS, simulate

#: the models the command line offers: the table's, where every parameter is a number
MODELS = table.names(numeric=True)


def _power(text: str, minimum: int, what: str, limit: int, too_big: str) -> int:
    """argparse helper: an integer >= ``minimum``, written out or as a power (``2^20``,
    ``10^6``), refused above ``limit`` with ``too_big`` before it is computed (``2^99999999``
    would not end)."""
    base, caret, power = text.strip().partition("^")
    try:
        b, k = int(base), int(power) if caret else 1
    except ValueError:
        b = k = -1
    if b < minimum or k < 0 or (b == 0 and caret):
        raise argparse.ArgumentTypeError(f"expected an integer >= {minimum} (or a power such as 2^20), got {text!r}")
    if (b > 1 and k * math.log2(b) > 64) or b**k > limit:
        raise argparse.ArgumentTypeError(f"{what} = {text.strip()} is {too_big}")
    return b**k


def _ranks(text: str) -> int:
    """argparse type: ranks >= 1, as an integer or a power (``2^20``, ``10^6``)."""
    return _power(text, 1, "P", 2**62, f"far above 2^31 - 1 = {budget.MAX_RANKS}, the most ranks a schedule "
                  "holds (int32)")


def _elements(text: str) -> int:
    """argparse type: elements >= 0 whose bytes fit in 64 bits (``N * 8 < 2^63``)."""
    limit = MAX_ELEMENTS
    return _power(text, 0, "N", limit, f"above {limit} = (2^63 - 1) / {ELEM_BYTES}, the most elements whose "
                  "bytes a signed 64-bit integer holds")


def _pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()


def _epilog() -> str:
    lines = ["algorithms (collective.algorithm; the algorithm alone when unambiguous):",
             "  " + ", ".join(sorted(registry.names())), "",
             "models (--model NAME): the default machine and its source, the model's own semantics,",
             "and its parameters (--param NAME=VALUE, SI units; defaults):"]
    for name in MODELS:
        entry = table.get(name)
        lines.append(f"  {name} ({entry.label}, {entry.semantics}): {entry.source()}"
                     + (f"; also {entry.extra_meaning}" if entry.extra else ""))
        defaults = entry.defaults()
        for par in entry.parameters:
            lines.append(f"    {par.name:<11} = {defaults.pop(par.name):<12.6g} {par.unit:<10} {par.meaning}")
        lines += [f"    {k:<11} = {v:<12.6g} {'':<10} (see 'also' above)" for k, v in defaults.items()]  # NBL's f(N)
    others = [n for n in table.names() if n not in MODELS]
    if others:
        lines.append(f"  not here: {', '.join(others)} (a parameter is a curve, not a number: "
                     "from Python, simulate(schedule, table.get(name).default()))")
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
    p.add_argument("--model", choices=MODELS, required=True, help="cost model (list below)")
    p.add_argument("--param", type=_pair, action="append", default=[], metavar="NAME=VALUE",
                   help="override a model parameter (SI units, see below)")
    p.add_argument("-N", "--elements", type=_elements, default=None, metavar="ELEMENTS",
                   help="vector elements (8 B each; default 0 for barriers, 1 otherwise)")
    p.add_argument("--option", type=_pair, action="append", default=[], metavar="NAME=VALUE",
                   help="an option of the algorithm's builder")
    p.add_argument("--semantics", choices=SEMANTICS, default=None,
                   help="step semantics (default: the model's own, listed below)")
    p.add_argument("--json", metavar="FILE", help="also write the result as JSON")
    p.add_argument("--receives", choices=RECEIVES, default="after-sends",
                   help="loggopsim semantics: a step's receives posted after the rank's last send of the step "
                        "(default) or with its first send (pre-posted)")
    p.add_argument("--force", action="store_true",
                   help="simulate even when the estimate says the run would take more than "
                        f"{budget.MAX_SECONDS:.0f} s or more memory than is available")


def _number(name: str, text: str, physical: str = "") -> float:
    """``text`` as a parameter's value: finite, and in its physical range (the table's ``"> 0"``,
    else ``>= 0``: no parameter of a model is negative)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    strict = physical == "> 0"
    if not math.isfinite(value) or value < 0 or (strict and value == 0):
        raise ValueError(f"parameter {name} must be a finite number {'> 0' if strict else '>= 0'}, got {text!r}")
    return value


def parameter_values(model: str, overrides) -> dict:
    """The parameters of table model ``model`` by their ``--param`` names: the default
    machine's, then ``overrides`` ``[(name, text), ...]`` (ValueError for a bad one)."""
    entry = table.get(model)
    physical = {par.name: par.physical for par in entry.parameters}
    given = {name: _number(name, text, physical.get(name, "")) for name, text in overrides}
    entry.make(**given)                     # refuses a name the model does not have
    return {**entry.defaults(), **given}


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
    entry = table.get(model)
    lines = [f"  machine         {entry.source()}" + (" with --param overrides" if given else "")]
    units = {par.name: par.unit for par in entry.parameters}

    def shown(name, value):
        unit = units.get(name, "")
        text = format_time(value) if unit == "s" else f"{value:.6g}{(' ' + unit).rstrip()}"
        return f"{name} = {text}{'*' if name in given else ''}"

    lines.append("  parameters      " + "  ".join(shown(n, v) for n, v in values.items()))
    return lines


#: a build or a simulation that has run this long (s) shows its progress on a terminal
PROGRESS_AFTER = 2.0


@contextmanager
def _elapsed(desc: str):
    """On a terminal, after :data:`PROGRESS_AFTER`, a line ``desc: elapsed`` on stderr, kept
    ticking until the block ends (a schedule's build reports no steps of its own)."""
    bar = tqdm(desc=desc, bar_format="{desc}: {elapsed}", file=sys.stderr, leave=False, delay=PROGRESS_AFTER,
               disable=not sys.stderr.isatty())
    done = threading.Event()

    def tick():
        if done.wait(PROGRESS_AFTER):
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


def pipeline_blocks(name: str, options: dict):
    """For a pipelined algorithm (one whose builder takes a ``block`` option: snake, fence),
    ``(P, N) -> its number of blocks`` (the ``block`` option's, else the default block's,
    :func:`netmodels.algorithms.combining.default_block`); None for the others."""
    if "block" not in registry.get(name).options:
        return None
    from ..algorithms.combining import default_block

    def blocks(p: int, n: int) -> int:
        size = options.get("block") or default_block(name, p, n, options.get("mesh"))
        return -(-n // size)
    return blocks


def prepare(args):
    """What a run of ``args`` (``simulate``'s options) simulates, checked before anything is
    built: ``(name, entry, values, model, semantics, n, options, build, refused)``, where
    ``build(P, N)`` makes the schedule and ``refused`` is the budget's one line or None
    (:func:`budget.refusal`, its probe run under the same model and semantics; what a trace
    adds is the caller's to check).  ValueError or TypeError on
    arguments that do not fit together."""
    algorithm = registry.get(args.algorithm)
    name = algorithm.name
    entry = table.get(args.model)
    values = parameter_values(args.model, args.param)
    model = entry.build(**values)
    semantics = args.semantics or entry.semantics
    n = args.elements if args.elements is not None else (0 if name.startswith("barrier.") else 1)
    if args.receives != "after-sends" and semantics != "loggopsim":
        raise ValueError(f"--receives {args.receives} is a choice of the loggopsim semantics; under "
                         f"{semantics} a rank's receives of a step always follow its sends")
    options = {k: _option(v) for k, v in args.option}

    def build(p, m):
        return algorithm.build(p, m, **options)

    refused = budget.refusal(build, args.ranks, n, available_memory(), force=args.force, semantics=semantics,
                             simulate=lambda s: simulate(s, model, semantics=semantics, receives=args.receives),
                             blocks=pipeline_blocks(name, options))
    return name, entry, values, model, semantics, n, options, build, refused


def run(args) -> int:
    """The command (see the module docstring); a run that runs out of memory (past the
    estimate with ``--force``, or under a limit it could not see) ends with one line and exit
    status 1."""
    try:
        return _run(args)
    except MemoryError:                 # everything the run held is freed by now
        memory = available_memory()
        left = f" ({memory / 2**30:.3g} GiB are available)" if memory is not None else ""
        print(f"python -m netmodels simulate: error: P = {args.ranks} ran out of memory{left}; a smaller P or N "
              "fits" + (" (--force went past the estimate)" if args.force else ""), file=sys.stderr)
        return 1


def _run(args) -> int:
    try:
        name, entry, values, model, semantics, n, options, build, refused = prepare(args)
        algorithm = registry.get(name)
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
    print(f"{name} on P = {args.ranks} ranks, N = {n} elements, model {args.model}, {semantics} semantics"
          + (" (the model's own)" if args.semantics is None else "")
          + (f", receives {args.receives}" if semantics == "loggopsim" else ""))
    print("\n".join(describe_parameters(args.model, values, args.param)), flush=True)
    try:
        with tqdm(total=schedule.nsteps, unit="step", desc="simulating", file=sys.stderr, delay=PROGRESS_AFTER,
                  disable=not sys.stderr.isatty(), leave=False) as bar:
            result = simulate(schedule, model, semantics=semantics, progress=bar.update, receives=args.receives)
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
                  "machine": entry.default().name, "machine_description": entry.source(),
                  "parameters": values, "parameter_units": {par.name: par.unit for par in entry.parameters
                                                            if par.name in values},
                  "semantics": semantics, **({"receives": args.receives} if semantics == "loggopsim" else {}),
                  "time_s": result.time, "steps": result.steps,
                  "messages": result.messages, "bytes": result.bytes,
                  "build_wall_s": t1 - t0, "simulate_wall_s": t2 - t1}
        write_json(args.json, record)
    return 0
