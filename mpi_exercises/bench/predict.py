"""The kit's own prediction report: calibrate the models, predict the collectives, measure
them, and say how far off each model is.

    mpiexec -n 2 python -m mpi_exercises predict --json predict.json

1. Calibration on ranks 0 and 1: the ping-pong sweep (:mod:`mpi_exercises.bench.pingpong`) gives
   α and β; Netgauge's PRTT method (:mod:`mpi_exercises.bench.logp_bench`, fit to the minima)
   gives LogGP's L, o_s, o_r, g, G; numpy combines give c2, c3 (s per element,
   :func:`mpi_exercises.bench.nbl_testjig.combine_costs`); ``--testjig`` also measures f(2)
   with the f(L) test jig (2 ranks).
2. Prediction of every algorithm of every collective in :data:`COLLECTIVES` from its
   schedule (:mod:`netmodels.algorithms.registry`), under each model of :func:`predict_times`.
3. Measurement of the same algorithms through the kit's front doors
   (``mpi_exercises.allreduce``, ``mpi_exercises.barrier``), the slowest rank's time.
4. Relative error (predicted - measured) / measured per row; per model the median of
   |error| and the worst error, overall and per algorithm.  Written as JSON and a table.

A run with more ranks than cores is measured, but reported as not valid (``"valid":
false`` in the JSON, and the table says so): its times are the scheduler's.  A new
collective is one entry of :data:`COLLECTIVES` (its schedule builder, its front door).
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import pages
from . import core

#: the models a prediction report compares (see :func:`predict_times`)
MODELS = ("alpha-beta", "nbl", "loggp")
ELEM_BYTES = 8                       #: the vectors are float64
DEFAULT_SIZES = [1, 64, 1024, 16384, 131072]
CALIBRATION_SIZES = [0, 1, 8, 64, 512, 4096, 32768, 262144, 1048576]


# ---------------------------------------------------------------- models (no MPI)
@dataclass(frozen=True)
class Calibration:
    """Fitted parameters (SI): α (s), β (s/B), LogGP, c2/c3 (s per element), f table."""

    alpha: float
    beta: float
    loggp: object                    #: netmodels.models.logp.LogGP
    c2: float = 0.0
    c3: float = 0.0
    f: dict | None = None            #: {L: f(L)} for the NBL model (None: f(L) = 1)
    #: {model: SoftwareCost} of the executor beyond each model's messages (None: not priced)
    software: dict | None = None
    #: the front door's own cost per call (a SoftwareCost of per_call terms only)
    door: object = None
    #: the executor's measured cost per step (s), ``{kind: {n: b}}``, the software term's source
    steps: dict | None = None

    def as_dict(self) -> dict:
        m = self.loggp
        return {"alpha_s": self.alpha, "beta_s_per_byte": self.beta,
                "loggp": {"L_s": m.L, "o_s_s": m.o_s, "o_r_s": m.o_r, "g_s": m.g, "G_s_per_byte": m.G},
                "c2_s_per_elem": self.c2, "c3_s_per_elem": self.c3,
                "f": None if self.f is None else {str(k): v for k, v in self.f.items()},
                "software": None if self.software is None else {m: c.as_dict() for m, c in self.software.items()},
                "front_door": None if self.door is None else self.door.as_dict(),
                "executor_step_s": None if self.steps is None else
                {kind: {str(n): b for n, b in by_n.items()} for kind, by_n in self.steps.items()}}


def alpha_beta_time(schedule, alpha: float, beta: float, elem_bytes: int = ELEM_BYTES,
                    c2: float = 0.0) -> float:
    """α-β time (s): the simulator (*sync*) under
    :class:`~netmodels.models.alphabeta.AlphaBeta` (one port, full duplex: a rank's sends
    go one after the other, and so do its receives, each α + β m for m bytes), plus, per
    step, the largest combine (c2 per element combined at one rank)."""
    from netmodels.models.alphabeta import AlphaBeta
    from netmodels.models.nbl import NBLModel
    from netmodels.simulate import simulate

    comm = simulate(schedule, AlphaBeta(alpha, beta), elem_bytes=elem_bytes).step_times
    if c2:      # the combine of the NBL step rule with f(L) = 0 links: c2 per element
        comb = simulate(schedule, NBLModel(0.0, 0.0, combine={2: c2}), elem_bytes=elem_bytes).step_times
        comm = comm + comb
    return float(comm.sum())


def predict_times(schedule, cal: Calibration, elem_bytes: int = ELEM_BYTES, door: bool = False) -> dict:
    """Predicted time (s) of ``schedule`` under each model of :data:`MODELS`: its messages
    (:func:`network_times`) plus, where calibrated, the software that runs them
    (:meth:`netmodels.models.software.SoftwareCost.time` of the model's term, and the front
    door's per-call cost if the call goes through a front door, ``door``)."""
    times = network_times(schedule, cal, elem_bytes)
    if cal.software is not None:
        extra = cal.door.call(schedule.nelems) if door and cal.door is not None else 0.0
        times = {m: t + cal.software[m].time(schedule) + extra for m, t in times.items()}
    return times


def network_times(schedule, cal: Calibration, elem_bytes: int = ELEM_BYTES) -> dict:
    """Time (s) of ``schedule``'s messages and combines under each model of :data:`MODELS`,
    all by the simulator :func:`netmodels.simulate.simulate` with the model's step rule:

    * ``alpha-beta``: :func:`alpha_beta_time`;
    * ``nbl``: Littlefield's step cost L α + f(L) β S + combining, the busiest rank per step
      (:class:`netmodels.models.nbl.NBLModel`, *sync*; f from the test jig, else f(L) = 1);
    * ``loggp``: message by message (LogGP with G per byte and the combine cost, *stepwise*),
      the last rank to finish.
    """
    from dataclasses import replace

    from netmodels.models.nbl import NBLModel
    from netmodels.simulate import simulate

    nbl = NBLModel(cal.alpha, cal.beta * elem_bytes, f=cal.f, combine={2: cal.c2, 3: cal.c3 or cal.c2})
    loggp = replace(cal.loggp, combine=cal.c2)
    return {"alpha-beta": alpha_beta_time(schedule, cal.alpha, cal.beta, elem_bytes, cal.c2),
            "nbl": simulate(schedule, nbl).time,
            "loggp": simulate(schedule, loggp, semantics="stepwise", elem_bytes=elem_bytes).time}


#: largest relative change between the calibrations before and after the measurement that
#: still counts as one machine (:func:`drift`)
STABLE_TOLERANCE = 0.25


def drift(before: Calibration, after: Calibration) -> dict:
    """How much the machine moved during a run: the relative differences
    |x - y| / min(|x|, |y|) of α, of β and, largest over every kind of step and vector length,
    of the executor's measured cost per step, between the calibration taken before the
    collectives were measured and the one taken after (no MPI).  ``stable`` says whether all
    are within :data:`STABLE_TOLERANCE`."""
    def rel(x, y):
        low = min(abs(x), abs(y))
        return abs(x - y) / low if low > 0 else (0.0 if x == y else float("inf"))

    out = {"alpha": rel(before.alpha, after.alpha), "beta": rel(before.beta, after.beta),
           "step": 0.0, "step_at": None}
    for kind, by_n in (before.steps or {}).items():
        for n, b in by_n.items():
            if n in (after.steps or {}).get(kind, {}):
                d = rel(b, after.steps[kind][n])
                if d > out["step"]:
                    out["step"], out["step_at"] = d, {"kind": kind, "nelems": n}
    out["stable"] = max(out["alpha"], out["beta"], out["step"]) <= STABLE_TOLERANCE
    return out


def drift_line(d: dict) -> str:
    """:func:`drift` in one line."""
    where = "" if d["step_at"] is None else f" ({d['step_at']['kind']}, n = {d['step_at']['nelems']})"
    verdict = ("the machine held still" if d["stable"] else
               f"MORE than {STABLE_TOLERANCE:.0%}: the machine changed during the run, the errors above "
               "are not the models'")
    return (f"calibration before and after the measurement: alpha differs by {d['alpha']:.0%}, beta by "
            f"{d['beta']:.0%}, the executor's steps by up to {d['step']:.0%}{where}; {verdict}")


def relative_error(predicted: float, measured: float) -> float:
    """(predicted - measured) / measured."""
    return (predicted - measured) / measured


#: a prediction within this relative error of the measurement is counted as a hit
TOLERANCE = 0.15


def _errors(errs) -> dict:
    """median |error| with its 95 % interval (:func:`core.median_ci`), worst (signed), rows,
    and how many are within :data:`TOLERANCE`."""
    e = np.array(errs, dtype=float)
    med, lo, hi = core.median_ci(np.abs(e))
    return {"median_abs": med, "median_abs_ci": [lo, hi], "worst": float(e[np.argmax(np.abs(e))]),
            "rows": int(e.size), "within_tolerance": int(np.sum(np.abs(e) <= TOLERANCE))}


def summarize_errors(rows: list[dict]) -> dict:
    """Per model: :func:`_errors` over all rows, per collective and per (collective, algorithm)."""
    out = {}
    for model in MODELS:
        errs = [(r["collective"], r["algorithm"], r["relative_error"][model]) for r in rows
                if r["relative_error"].get(model) is not None]
        if not errs:
            continue
        out[model] = {**_errors([x[2] for x in errs]),
                      "by_collective": {c: _errors([x[2] for x in errs if x[0] == c])
                                        for c in dict.fromkeys(x[0] for x in errs)},
                      "by_algorithm": {f"{c}:{a}": _errors([x[2] for x in errs if (x[0], x[1]) == (c, a)])
                                       for c, a in dict.fromkeys((x[0], x[1]) for x in errs)}}
    return out


def explain(row: dict, model: str) -> str:
    """Why a row misses under ``model``, from its numbers: the sign, and which part of the
    prediction (messages or software) is the larger, with both in µs."""
    err = row["relative_error"][model]
    net, sw = row["network_s"][model], row["software_s"][model]
    side = "too slow" if err > 0 else "too fast"
    part = "the messages dominate" if abs(net) >= abs(sw) else "the software dominates"
    return (f"{model} predicts {side} by {abs(err):.0%}: messages {net * 1e6:.2f} µs, software {sw * 1e6:.2f} µs "
            f"({part}), measured {row['measured_s'] * 1e6:.2f} µs")


# ---------------------------------------------------------------- the collectives
@dataclass(frozen=True)
class Collective:
    """One collective of the report.

    ``algorithms(P)``: the algorithms to run on P ranks.  ``schedule(algorithm, P, nelems)``:
    its schedule (None: not modelled, e.g. the library's own).  ``call(comm, algorithm, x,
    out)``: a function of no argument that runs it once through the front door.  ``sized``:
    False for barriers (one run, no vector).
    """

    algorithms: Callable
    schedule: Callable
    call: Callable
    sized: bool = True
    door: bool = True                #: called through a front door (False: its executor directly)


def _front_door_kwargs(func) -> dict:
    """``check=False`` where a front door offers to skip its argument check (timing only)."""
    return {"check": False} if "check" in inspect.signature(func).parameters else {}


def _algorithms(collective: str) -> Callable:
    """``algorithms(P)`` of a collective: its front door's choices (the registry's, then mpi)."""
    def algorithms(P):
        from ..collectives._door import choices

        return list(choices(collective))
    return algorithms


def _schedule(collective: str) -> Callable:
    """``schedule(algorithm, P, nelems)`` of a collective: the registry's (None for mpi; a
    barrier carries no data, whatever ``nelems``)."""
    def schedule(algorithm, P, nelems=0):
        from netmodels.algorithms import registry

        if algorithm == "mpi":
            return None
        return registry.build(f"{collective}.{algorithm}", P, 0 if collective == "barrier" else nelems).to_schedule()
    return schedule


def _allreduce_call(comm, algorithm, x, out):
    from ..collectives.allreduce import allreduce

    kw = _front_door_kwargs(allreduce)
    return lambda: allreduce(comm, x, algorithm, out=out, **kw)


def _barrier_call(comm, algorithm, x=None, out=None):
    from ..collectives.barrier import Barrier

    return Barrier(comm, algorithm)


#: collective name -> entry.  A new collective (allgather, alltoall) is one entry here.
COLLECTIVES = {
    "allreduce": Collective(_algorithms("allreduce"), _schedule("allreduce"), _allreduce_call),
    "barrier": Collective(_algorithms("barrier"), _schedule("barrier"), _barrier_call, sized=False, door=False),
}


# ---------------------------------------------------------------- MPI side
def add_arguments(p) -> None:
    p.add_argument("--collectives", type=core.name_list(tuple(COLLECTIVES)), default=list(COLLECTIVES),
                   help="comma-separated collectives (default: all): " + ",".join(COLLECTIVES))
    p.add_argument("--sizes", type=core.size_list_of(8, 4, all_ranks=True), default=DEFAULT_SIZES,
                   help="comma-separated vector lengths in float64 elements, suffix k/M allowed "
                        "(default 1,64,1k,16k,128k)")
    p.add_argument("--iterations", type=core.sample_count, default=100,
                   help="timed calls per algorithm and size (default 100; fewer for large vectors)")
    p.add_argument("--warmup", type=core.nonneg_int, default=10, help="untimed calls first (default 10)")
    p.add_argument("--statistic", choices=("min", "median"), default="min",
                   help="measured time compared with the predictions (default min: noise only adds time)")
    p.add_argument("--calibration-repetitions", type=core.sample_count, default=200,
                   help="samples per size of the ping-pong and PRTT calibration (default 200)")
    p.add_argument("--testjig", action="store_true",
                   help="also measure f(2) with the f(L) test jig for the NBL model (else f(L) = 1)")
    p.add_argument("--json", metavar="FILE", help="write calibration, rows and errors to FILE as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def calibrate(comm, reps: int, testjig: bool, progress: bool) -> Calibration | None:
    """Run the calibration benchmarks (collective); the fitted parameters on rank 0."""
    from netmodels.models.logp import LogGP
    from netmodels.models.nbl import fit_f

    from . import logp_bench, nbl_testjig, pingpong, software_cost

    pp = pingpong.measure(comm, CALIBRATION_SIZES, reps, 20, 64 * 2**20, progress)
    if comm.Get_rank() == 0:
        print(pingpong.report(pp, pingpong.fit(pp, "min_s")), file=sys.stderr, flush=True)
    lp = logp_bench.measure(comm, [0, 1, 8, 64, 1024, 4096, 16384], 10, reps, 10, progress)
    jig = nbl_testjig.measure(comm, [600, 6000, 60000], 20, 5, 2, progress) if testjig else []
    sw = software_cost.measure(comm, software_cost.SIZES, software_cost.STEPS, reps, 10, core.DEFAULT_INNER,
                               progress)
    if comm.Get_rank() != 0:
        return None
    ab = pingpong.fit(pp, "min_s")["alpha_beta"]
    lg = logp_bench.fit(lp, 10, "min_s")
    c = nbl_testjig.combine_costs(2**16)
    f = None
    if jig:
        tab = nbl_testjig.table(jig, "min_s")
        S = tab["S"]
        fitted, _, _ = fit_f(S, {int(L): np.array(v) for L, v in tab["T_s"].items()})
        f = {L: max(v, 1e-3) for L, v in fitted.items()}
    loggp = LogGP(lg["L_s"], max(lg["o_s_s"], 1e-12), max(lg["g_s"] or 0.0, 0.0), comm.Get_size(),
                  o_r=max(lg["o_r_s"], 1e-12), G=max(lg["G_s_per_byte"] or 0.0, 0.0), name="PRTT fit")
    cal = Calibration(max(ab["alpha_s"], 0.0), max(ab["beta_s_per_byte"], 0.0), loggp,
                      c["c2_s_per_elem"], c["c3_s_per_elem"], f)
    return with_software(cal, software_cost.lines(sw, "min_s"), comm.Get_size())   # minima, like the ping-pong fit


def with_software(cal: Calibration, lines: dict, P: int) -> Calibration:
    """``cal`` with each model's software term (no MPI): from the executor's lines
    ``{n: {per_call_s, per_step_s: {kind: s}, door_s}}`` of ``software-cost`` and each
    model's own time of one step of each kind of n elements
    (:func:`netmodels.models.software.residual`); the front door's per-call cost as a line
    in n."""
    from dataclasses import replace

    from netmodels.models.software import SoftwareCost, residual

    from .software_cost import schedule_of

    sizes = sorted(lines)
    kinds = list(dict.fromkeys(kind for n in sizes for kind in lines[n]["per_step_s"]))
    steps = {kind: {n: lines[n]["per_step_s"][kind] for n in sizes} for kind in kinds}
    model = {kind: {n: network_times(schedule_of(kind, P, 1, n), cal) for n in sizes} for kind in kinds}
    software = {m: residual({n: lines[n]["per_call_s"] for n in sizes}, steps,
                            {kind: {n: model[kind][n][m] for n in sizes} for kind in kinds}) for m in MODELS}
    door = SoftwareCost(tuple(sizes), tuple(lines[n]["door_s"] for n in sizes))
    return replace(cal, software=software, door=door, steps=steps)


def measure(comm, collectives, sizes, iterations, warmup, progress, inner: int = core.DEFAULT_INNER) -> list[dict]:
    """Time every algorithm of every collective through its front door (collective);
    rows ``{collective, algorithm, nelems, min_s, median_s, median_ci_s, times_s, ...,
    timing_method}`` on rank 0.  A sample is ``inner`` back-to-back calls after one barrier,
    divided by ``inner``, the slowest rank's (:func:`core.time_interleaved`): the barrier's
    exit skew is not charged to every call."""
    from tqdm import tqdm


    P, rank = comm.Get_size(), comm.Get_rank()
    method = core.loop_method(inner)
    rows = []
    for name in collectives:
        entry = COLLECTIVES[name]
        algorithms = entry.algorithms(P)
        for n in tqdm(sizes if entry.sized else [0], desc=f"predict: {name}", unit="size",
                      file=sys.stderr, disable=(rank != 0) or not progress or None):
            x = pages.copy(np.random.default_rng(rank).random(n))
            calls, frees = [], []
            for a in algorithms:
                out = pages.allocate(x.shape, x.dtype)
                call = entry.call(comm, a, x, out)
                if hasattr(call, "free"):
                    frees.append(call)
                calls.append(call)
            iters = core.capped_iterations(ELEM_BYTES * n * inner, iterations, 256 * 2**20, at_least=10)
            samples = core.time_interleaved(comm, calls, iters, warmup, inner=inner)   # slowest rank's
            for b in frees:
                b.free()
            if rank == 0:
                for a, row in zip(algorithms, samples):
                    rows.append({"collective": name, "algorithm": a, "nelems": n,
                                 "bytes": ELEM_BYTES * n, **core.summarize(row), "timing_method": method})
    comm.Barrier()
    return rows


def compare(rows: list[dict], cal: Calibration, P: int, statistic: str = "min_s") -> list[dict]:
    """Add predictions (messages, software, total) and relative errors to measured rows (no MPI)."""
    out = []
    for r in rows:
        entry = COLLECTIVES[r["collective"]]
        sched = entry.schedule(r["algorithm"], P, r["nelems"])
        pred = predict_times(sched, cal, door=entry.door) if sched is not None else {}
        net = network_times(sched, cal) if sched is not None else {}
        meas = r[statistic]
        out.append({**r, "measured_s": meas, "predicted_s": pred, "network_s": net,
                    "software_s": {m: pred[m] - net[m] for m in pred},
                    "relative_error": {m: relative_error(t, meas) for m, t in pred.items()}})
    return out


def report(rows: list[dict], summary: dict, valid: bool) -> str:
    """The error table: per model, overall, per collective and per algorithm, the median
    |error| with its 95 % interval, the worst error and the rows within :data:`TOLERANCE`;
    then every row a model misses, with :func:`explain`."""
    lines = []
    if not valid:
        lines += ["NOT VALID: ranks outnumber cores (oversubscribed): these times measure the "
                  "scheduler; no model is judged by them.", ""]
    lines.append(f"{'model':<11} {'collective:algorithm':<32} {'median |err| [95 % CI]':>24} {'worst':>7} "
                 f"{'within ' + format(TOLERANCE, '.0%'):>11}")
    lines.append("-" * 89)

    def line(model, key, e):
        lo, hi = e["median_abs_ci"]
        return (f"{model:<11} {key:<32} {e['median_abs']:9.0%} [{lo:4.0%}, {hi:4.0%}]   {e['worst']:+6.0%} "
                f"{e['within_tolerance']:>5} of {e['rows']:<3}")
    for model, s in summary.items():
        lines.append(line(model, "(all)", s))
        lines += [line("", f"{c} (all)", e) for c, e in s["by_collective"].items()]
        lines += [line("", key, e) for key, e in s["by_algorithm"].items()]
    missed = [(m, r) for m in summary for r in rows
              if r["relative_error"].get(m) is not None and abs(r["relative_error"][m]) > TOLERANCE]
    if missed:
        lines += ["", f"rows missed by more than {TOLERANCE:.0%}:"]
        lines += [f"  {r['collective']}:{r['algorithm']} N = {r['nelems']}: {explain(r, m)}" for m, r in missed]
    return "\n".join(lines)


def run(args) -> int:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    P, rank = comm.Get_size(), comm.Get_rank()
    if P < 2:
        if rank == 0:
            print("predict needs at least 2 ranks: mpiexec -n 2 python -m mpi_exercises predict",
                  file=sys.stderr)
        return 2
    oversubscribed = core.warn_if_oversubscribed(comm)
    progress = not args.no_progress
    cal = calibrate(comm, args.calibration_repetitions, args.testjig, progress)
    rows = measure(comm, args.collectives, args.sizes, args.iterations, args.warmup, progress)
    after = calibrate(comm, args.calibration_repetitions, args.testjig, progress)   # did the machine move?
    if rank != 0:
        return 0
    rows = compare(rows, cal, P, args.statistic + "_s")
    summary = summarize_errors(rows)
    valid = not oversubscribed
    moved = drift(cal, after)
    print(f"predictions against measurements on {P} ranks ({args.statistic} of the samples; "
          f"error = (predicted - measured) / measured)")
    print(report(rows, summary, valid), flush=True)
    print(drift_line(moved), flush=True)
    if args.json:
        core.write_json(args.json, {
            "benchmark": "predict", "environment": core.environment(comm),
            "command": f"mpiexec -n {P} python -m mpi_exercises " + " ".join(sys.argv[1:]),
            "oversubscribed": oversubscribed, "valid": valid, "load_average_1min": core.load_average(),
            "parameters": {"collectives": args.collectives, "sizes_elements": args.sizes,
                           "iterations": args.iterations, "warmup": args.warmup, "statistic": args.statistic,
                           "elem_bytes": ELEM_BYTES, "models": list(MODELS), "testjig": args.testjig},
            "calibration": cal.as_dict(), "calibration_after": after.as_dict(), "drift": moved,
            "stable": moved["stable"], "rows": rows, "summary": summary})
        print(f"results written to {args.json}")
    return 0
