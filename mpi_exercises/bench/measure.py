"""How the benchmarks take their samples: cases interleaved in a seeded random order over
several rounds, warm-up runs, the median with its confidence interval, and a stopping rule.

After Hoefler & Belli, "Scientific benchmarking of parallel computing systems" (SC15), and
ReproMPI (Hunold & Carpen-Amarie): timings are seldom normal, so a case is summarised by
its median and a distribution-free confidence interval (:func:`statistics.median_ci`), and the
number of repetitions is not fixed in advance but raised until that interval is narrow
enough (or a time budget is spent).  A burst of load from other jobs lasts a while: if the
cases (message sizes, algorithms, ...) were measured one after the other it would spoil a
whole range of them, so every round visits every case once, in a new random order drawn
from a recorded seed, and a case's samples come from all rounds.

The pure parts (:func:`round_orders`, :func:`split_repetitions`, :func:`stop_reason`,
:func:`fit_to_budget`, :func:`bootstrap_fit`) take no MPI; :func:`interleaved_rounds` drives
them on a communicator (any object with ``Get_rank`` and ``bcast``).  Importing this module does
not start MPI.
"""

from __future__ import annotations

import time
from typing import Callable, Hashable, Sequence

import numpy as np

from . import arguments, records, statistics, timing
from .statistics import median_ci

#: default: stop adding rounds once every case's 95 % CI half-width is within 2 % of its median
DEFAULT_TARGET = 0.02
#: default time budget (s) of a sampling, first pass included: no round is added once it is spent
DEFAULT_TIME_BUDGET_S = 20.0
#: rounds of the first pass (each visits every case once)
DEFAULT_ROUNDS = 10
#: a case never takes more than this many times its first-pass repetitions
MAX_GROWTH = 64


#: a median is known too poorly to build on if its 95 % interval is wider than this fraction of
#: it on either side: five times the default target (a run that missed its precision by far)
NOISY = 5 * DEFAULT_TARGET


def reliability(named_rows, limit: float = NOISY) -> dict:
    """The widest median interval among ``named_rows`` ``[(relative half-width, case)]``, and
    every case wider than ``limit``: ``{"worst": x, "at": case, "limit": limit, "reliable":
    x <= limit, "missed": [cases]}``."""
    worst, at = max(named_rows, key=lambda d: d[0], default=(0.0, None))
    return {"worst": float(worst), "at": at, "limit": limit, "reliable": bool(worst <= limit),
            "missed": [case for x, case in named_rows if x > limit]}


def noise_line(r: dict) -> str | None:
    """One line naming the cases whose median :func:`reliability` found too wide (``r``) to
    build on, or None if every one is within the limit."""
    if r["reliable"]:
        return None
    return (f"UNRELIABLE: the median of {', '.join(map(str, r['missed']))} is known only to ±{r['worst']:.0%} at "
            f"worst (limit ±{r['limit']:.0%}): the machine was busy; run again when it is quiet, or with a "
            "longer --time-budget")


def round_orders(n_cases: int, rounds: int, seed: int) -> list[list[int]]:
    """The order of the cases 0 .. ``n_cases - 1`` in each of ``rounds`` rounds: a random
    permutation per round from ``numpy.random.default_rng(seed)``, so the same seed gives
    the same orders (every rank computes them alike, without a message)."""
    rng = np.random.default_rng(seed)
    return [rng.permutation(n_cases).tolist() for _ in range(rounds)]


def split_repetitions(total: int, rounds: int) -> list[int]:
    """``total`` repetitions cut into ``rounds`` near-equal shares, largest first (sum = total)."""
    base, extra = divmod(int(total), int(rounds))
    return [base + (i < extra) for i in range(rounds)]


def by_round(samples, counts) -> list:
    """``samples`` (in the order taken) cut into the rounds that took them, ``counts[r]`` in round
    ``r`` (a result's ``samples_per_round``; a round may hold none)."""
    return np.split(np.asarray(samples, dtype=float), np.cumsum(counts)[:-1])


def relative_halfwidth(samples, confidence: float = 0.95) -> float:
    """Half the width of the median's confidence interval over the median (inf if the
    median is 0); with fewer than 6 samples the interval is (min, max) (:func:`statistics.median_ci`)."""
    med, lo, hi = median_ci(samples, confidence)
    return (hi - lo) / 2 / abs(med) if med else float("inf")


def stop_reason(samples: Sequence, target: float | None, elapsed_s: float, time_budget_s: float | None,
                confidence: float = 0.95) -> str | None:
    """Why to stop adding rounds, or None to go on.

    ``samples``: one array of samples per case.  ``"ci"`` when every case's median has a
    ``confidence`` interval whose relative half-width (:func:`relative_halfwidth`) is at
    most ``target``; ``"time budget"`` when ``elapsed_s`` >= ``time_budget_s``;
    ``"fixed"`` when there is no target (the repetitions asked for are all there is)."""
    if target is None or target <= 0:
        return "fixed"
    if all(relative_halfwidth(s, confidence) <= target for s in samples):
        return "ci"
    if time_budget_s is not None and elapsed_s >= time_budget_s:
        return "time budget"
    return None


def fit_to_budget(more: Sequence[int], seconds_per_rep: Sequence[float], remaining_s: float) -> list[int]:
    """The repetitions ``more`` of a round, scaled down (each case in proportion, at least one
    for a case that asked for any) so that at ``seconds_per_rep`` each the round is expected
    to take at most ``remaining_s``: a round added late does not overrun the time budget by
    as much as all the rounds before it."""
    cost = sum(m * t for m, t in zip(more, seconds_per_rep))
    if cost <= remaining_s:
        return list(more)
    scale = max(remaining_s, 0.0) / cost
    return [max(1, int(m * scale)) if m else 0 for m in more]


def interleaved_rounds(comm, cases: Sequence[Hashable], run: Callable, first: Callable[[Hashable], int], *,
                       rounds: int = DEFAULT_ROUNDS, target: float | None = None,
                       time_budget_s: float | None = DEFAULT_TIME_BUDGET_S, seed: int = 0,
                       confidence: float = 0.95, root: int = 0, desc: str = "rounds",
                       progress: bool = False) -> tuple[dict, dict]:
    """Samples of every case, taken in interleaved rounds (collective over ``comm``).

    ``run(case, reps) -> ndarray``: ``reps`` timed samples of ``case`` (seconds) after its
    own warm-up, meaningful on ``root``; every rank calls it with the same arguments, with
    Python's garbage collector paused (:func:`timing.collector_paused`).
    ``first(case)``: the repetitions of the first pass, cut into ``rounds`` rounds
    (:func:`split_repetitions`).  Then, if ``target`` is set, more rounds until
    :func:`stop_reason` says stop: each doubles the repetitions of the cases whose median's
    interval is still wider than ``target`` (at most :data:`MAX_GROWTH` times the first
    pass; fewer if the round would outlast the budget left, :func:`fit_to_budget`); ``root``
    decides and broadcasts, so the ranks agree.  Each round visits the cases
    in the order :func:`round_orders` draws from ``seed``.  Returns ``({case: samples},
    info)`` on every rank (samples meaningful on ``root``; a case's samples are in the order
    taken, round after round); ``info`` records seed, rounds, their orders, the repetitions
    of each case in each round (``repetitions_per_round``), the reason to stop and the time
    taken, for the JSON.
    """
    cases = list(cases)
    rng = np.random.default_rng(seed)      # the stream of round_orders(len(cases), ..., seed)
    firsts = [max(1, int(first(c))) for c in cases]
    shares = [split_repetitions(f, min(rounds, f)) + [0] * (rounds - min(rounds, f)) for f in firsts]
    taken: list[list[np.ndarray]] = [[] for _ in cases]
    orders: list[list[int]] = []
    is_root = comm.Get_rank() == root
    bar = records.progress(desc=desc, unit="round", show=is_root and progress)
    t_start = time.perf_counter()

    spent = [0.0] * len(cases)          # seconds each case has taken so far (root's clock)
    per_round: list[list[int]] = []      # repetitions of each case in each round

    def one_round(reps_of):
        order = rng.permutation(len(cases)).tolist()
        orders.append(order)
        per_round.append([int(n) for n in reps_of])
        for k in order:
            if reps_of[k] > 0:
                t0 = time.perf_counter()
                with timing.collector_paused():
                    samples = run(cases[k], reps_of[k])
                taken[k].append(np.asarray(samples, dtype=float))
                spent[k] += time.perf_counter() - t0
        bar.update(1)

    for r in range(rounds):
        one_round([sh[r] for sh in shares])
    while True:
        counts = [sum(a.size for a in t) for t in taken]
        reason, more = None, None
        if is_root:
            joined = [np.concatenate(t) for t in taken]
            reason = stop_reason(joined, target, time.perf_counter() - t_start, time_budget_s, confidence)
            if reason is None:
                more = [min(c, MAX_GROWTH * f - c) if relative_halfwidth(x, confidence) > target else 0
                        for x, c, f in zip(joined, counts, firsts)]
                if time_budget_s is not None:
                    more = fit_to_budget(more, [t / c for t, c in zip(spent, counts)],
                                         time_budget_s - (time.perf_counter() - t_start))
                if not any(more):
                    reason = "repetition cap"
        reason, more = comm.bcast((reason, more), root=root)
        if reason is not None:
            break
        one_round(more)
    bar.close()
    samples = {c: np.concatenate(t) if t else np.empty(0) for c, t in zip(cases, taken)}
    info = {"seed": seed, "rounds": len(orders), "first_pass_rounds": rounds,
            "cases": [c if isinstance(c, (int, float, str)) else list(c) for c in cases],
            "order_per_round": orders, "repetitions_per_round": per_round, "stopped_by": reason,
            "target_relative_halfwidth": target,
            "time_budget_s": time_budget_s, "confidence": confidence, "seconds": time.perf_counter() - t_start}
    return samples, info


def describe(info: dict) -> str:
    """One line on how the samples of :func:`interleaved_rounds` were taken."""
    target = info["target_relative_halfwidth"]
    goal = (f"until every median's {100 * info['confidence']:.0f} % CI is within ±{100 * target:g} % "
            f"or {info['time_budget_s']:g} s are spent" if target else "fixed repetitions")
    return (f"sampling: {info['rounds']} interleaved rounds in random order (seed {info['seed']}), {goal}; "
            f"stopped by: {info['stopped_by']} after {info['seconds']:.1f} s")


def add_options(p, target: float = DEFAULT_TARGET) -> None:
    """The options of :func:`interleaved_rounds`: ``--rounds``, ``--target``, ``--time-budget``, ``--seed``."""
    from .arguments import float_in, nonneg_int, positive_int

    fraction, seconds = float_in(0, 1, "a fraction"), float_in(0, float("inf"), "seconds")
    p.add_argument("--rounds", type=positive_int, default=DEFAULT_ROUNDS,
                   help=f"rounds of the first pass, each visiting every case once in a new random order "
                        f"(default {DEFAULT_ROUNDS})")
    p.add_argument("--target", type=fraction, default=target,
                   help=f"then more rounds until every median's 95 %% confidence interval is within this "
                        f"fraction of it (default {target:g}; 0: no more rounds)")
    p.add_argument("--time-budget", type=seconds, default=DEFAULT_TIME_BUDGET_S, metavar="SECONDS",
                   help=f"stop adding rounds after this long (default {DEFAULT_TIME_BUDGET_S:g} s)")
    p.add_argument("--seed", type=nonneg_int, default=None,
                   help="seed of the random order of the cases (default: drawn, and recorded in the JSON)")


def options_from(comm, args) -> dict:
    """The keyword options of :func:`interleaved_rounds` from a command's :func:`add_options`
    values, the seed agreed by the ranks (collective: :func:`agreed_seed`)."""
    return {"rounds": args.rounds, "target": args.target or None, "time_budget_s": args.time_budget,
            "seed": agreed_seed(comm, args.seed)}


def header(method: str, *infos: dict) -> str:
    """The lines a benchmark prints before its table: how a sample is timed (``method``)
    and how the samples were taken (:func:`describe` of each ``info``)."""
    return "\n".join([f"timing: {method}"] + [describe(i) for i in infos])


def agreed_seed(comm, seed: int | None, root: int = 0) -> int:
    """``seed``, or one drawn on ``root`` (from the OS's entropy) and broadcast (collective)."""
    if seed is None and comm.Get_rank() == root:
        seed = int(np.random.SeedSequence().entropy % 2**32)
    return comm.bcast(seed, root=root)


#: statistics :func:`bootstrap_fit` refuses: extremes, for which the percentile bootstrap fails
EXTREMES = (np.min, np.max, np.amin, np.amax, min, max)


def bootstrap_fit(groups: Sequence, fit: Callable, statistic: Callable = np.median, *,
                  per_round: Sequence | None = None, resamples: int = 200, seed: int = 0,
                  confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A fit to per-group statistics with its percentile-bootstrap confidence intervals.

    ``groups``: the samples of each group (e.g. each message size), in the order taken.
    ``fit(stats) -> parameters`` (1-d) maps one statistic per group (``statistic``, default
    the median) to the fitted parameters.  Each of ``resamples`` replicates resamples the
    samples with replacement (``numpy.random.default_rng(seed)``), recomputes the statistics
    and refits; the interval is the replicates' ``(1 - confidence) / 2`` and ``(1 +
    confidence) / 2`` quantiles (Efron's percentile interval).  Returns ``(estimate, lo,
    hi)``, the estimate being the fit to the statistics of the samples themselves.

    Without ``per_round`` every sample is drawn independently.  With ``per_round`` (for each
    group, its number of samples in each round of :func:`interleaved_rounds`, the same rounds
    for every group) whole rounds are drawn, the same for every group (a block bootstrap): a
    burst of load hits every case of a round, so the samples of one round are not
    independent, and drawing them one by one would make the interval too narrow.

    ``statistic`` may not be an extreme (``np.min``, ``np.max``; ValueError): the percentile
    bootstrap fails for one (Bickel & Freedman, Ann. Statist. 9 (1981) 1196, section 6), as a
    resampled minimum is never below the sample's and every replicate lies on one side of the
    estimate (:data:`mpi_exercises.bench.pingpong.CI_METHODS` says what a fit on minima uses).
    """
    if any(statistic is f for f in EXTREMES):
        raise ValueError(f"statistic must not be an extreme (np.min, np.max): the percentile bootstrap fails "
                         f"for one, got {getattr(statistic, '__name__', statistic)}")
    rng = np.random.default_rng(seed)
    groups = [np.asarray(g, dtype=float) for g in groups]
    estimate = np.asarray(fit(np.array([statistic(g) for g in groups])), dtype=float)
    if per_round is None:
        def draw():
            return [g[rng.integers(0, g.size, g.size)] for g in groups]
    else:
        blocks = [by_round(g, counts) for g, counts in zip(groups, per_round)]
        n_rounds = len(blocks[0])

        def draw():
            chosen = rng.integers(0, n_rounds, n_rounds)
            out = [np.concatenate([b[r] for r in chosen]) for b in blocks]
            return [o if o.size else g for o, g in zip(out, groups)]   # a case absent from every round drawn
    reps = np.array([fit(np.array([statistic(x) for x in draw()])) for _ in range(resamples)], dtype=float)
    q = (1 - confidence) / 2
    lo, hi = np.quantile(reps, [q, 1 - q], axis=0)
    return estimate, lo, hi


# ---------------------------------------------------------------- a front door against MPI's collective
def compare(comm, sizes, algorithms, modes, prepare, nbytes, *, iterations, warmup, budget_bytes,
            desc="bench", progress=True, inner: int = 1, rounds: int = DEFAULT_ROUNDS,
            target: float | None = None, time_budget_s: float | None = DEFAULT_TIME_BUDGET_S,
            seed: int = 0) -> tuple[list[dict], list[dict]]:
    """Time every (algorithm, mode) and MPI's own collective for every size: per size, the
    variants in :func:`interleaved_rounds` (``rounds`` rounds in random order from ``seed``,
    then, with ``target``, more until every median's interval is that narrow or the size's
    share of ``time_budget_s`` is spent); a sample is ``inner`` calls after one barrier, the
    slowest rank's (:func:`timing.time_interleaved`).

    ``prepare(n, algorithm, mode) -> (call, correct)`` makes the timed call and says
    whether its result equals MPI's (it is asked once with ``("mpi", "mpi")`` for the
    reference); ``nbytes(n)`` is the data per call that caps the repetitions
    (:func:`timing.capped_iterations`, counting ``inner`` calls per sample).  Returns, on
    every rank, one result per size and variant (``nelems, algorithm, mode, correct``,
    :func:`statistics.summarize`'s statistics and ``samples_per_round``, how many of its samples,
    in the order taken, each round took) and the rounds' record of each size."""
    from mpi4py import MPI

    results, record = [], []
    share = None if time_budget_s is None else time_budget_s / max(len(sizes), 1)
    bar = records.progress(sizes, desc=desc, unit="size", show=comm.Get_rank() == 0 and progress)
    for i, n in enumerate(bar):
        cases = [("mpi", "mpi")] + [(a, m) for a in algorithms if a != "mpi" for m in modes]
        calls, oks = [], []
        for algorithm, mode in cases:
            call, ok = prepare(n, algorithm, mode)
            calls.append(call)
            oks.append(comm.allreduce(bool(ok), op=MPI.LAND))
        timing.time_interleaved(comm, calls, 0, warmup, inner=inner)      # warm-up of every variant
        iters = timing.capped_iterations(nbytes(n) * inner, iterations, budget_bytes, at_least=10)
        samples, info = interleaved_rounds(
            comm, range(len(cases)), lambda k, reps: timing.time_interleaved(comm, [calls[k]], reps, 1, inner=inner)[0],
            lambda k: iters, rounds=rounds, target=target, time_budget_s=share, seed=seed + i)
        for k, ((algorithm, mode), ok) in enumerate(zip(cases, oks)):
            results.append(dict(nelems=n, algorithm=algorithm, mode=mode, correct=ok, **statistics.summarize(samples[k]),
                                samples_per_round=[reps[k] for reps in info["repetitions_per_round"]]))
        record.append({"nelems": n, **info})
    return results, record


def versus_arguments(collective: str, sizes: list[int], sizes_help: str, budget: str,
                     more: Callable = lambda p: None, all_ranks: bool = False) -> Callable:
    """``add_arguments(p)`` of a ``bench-COLLECTIVE`` command: ``--sizes``, ``--algorithms`` (the
    front door's choices, mpi always included), ``--modes``, ``--iterations``, ``--warmup``,
    ``--budget-bytes``, ``--json``, ``--no-progress``, the rounds of :func:`add_options`, then
    ``more(p)``."""
    def add_arguments(p) -> None:
        from ..collectives._door import choices
        from .arguments import add_inner_option, name_list, size_list_of
        from .records import MODES

        names = choices(collective)
        p.add_argument("--sizes", type=size_list_of(8, 4, all_ranks), default=sizes, help=sizes_help)
        p.add_argument("--algorithms", type=name_list(names, always=["mpi"]), default=list(names),
                       help="comma-separated subset of " + ",".join(names) + " (mpi is always included)")
        p.add_argument("--modes", type=name_list(MODES), default=list(MODES),
                       help="comma-separated subset of " + ",".join(MODES) + " (default: all): how each "
                            "algorithm is called; default = the front door as users call it, check=False "
                            "= the same without its argument check (one small collective), executor = "
                            "the algorithm alone (cached executor, prepared buffers)")
        arguments.add_options(p, iterations=(200, "timed samples per size for small sizes (default 200)"),
                    warmup=(10, "untimed samples first (default 10)"), budget=budget)
        add_inner_option(p)
        add_options(p)
        more(p)
    return add_arguments


def versus_mpi(comm, args, prepare, nbytes, *, collective: str, reference: str, unit: str, header: str,
               parameters: dict, oversubscribed: bool, after: Callable = lambda: ([], {})) -> int:
    """A ``bench-COLLECTIVE`` command after its options are checked: :func:`compare` over
    ``args.sizes``, ``args.algorithms`` and ``args.modes`` with the rounds of
    :func:`add_options` (``--time-budget`` shared by the sizes), the report on rank 0
    (``header``, then :func:`records.compare_report` against ``reference``), the JSON
    (``parameters``, results, ratios and the rounds of each size).  ``after()`` (collective,
    after the timing) returns more lines to print and more JSON fields.  Exit status 1 if a
    result was wrong."""
    options = options_from(comm, args)
    results, rounds = compare(comm, args.sizes, args.algorithms, args.modes, prepare, nbytes,
                              iterations=args.iterations, warmup=args.warmup, budget_bytes=args.budget_bytes,
                              desc=f"bench-{collective}", progress=not args.no_progress, inner=args.inner,
                              **options)
    extra, fields = after()
    if comm.Get_rank() == 0:
        method = timing.loop_method(args.inner)
        print(header + (" (oversubscribed: timings include OS scheduling)" if oversubscribed else ""))
        print(f"timing: {method}")
        for r in rounds:
            print(f"N = {r['nelems']}: {describe(r)}")
        print(records.compare_report(results, reference, unit=unit), flush=True)
        for line in extra:
            print(line)
        records.save(comm, args.json, f"bench-{collective}", oversubscribed,
                  {"inner": args.inner, **parameters, **options},
                  timing_method=method, rounds=rounds, **fields, results=results,
                  ratios={str(n): v for n, v in records.ratios(results).items()})
    return 0 if all(r["correct"] for r in results) else 1
