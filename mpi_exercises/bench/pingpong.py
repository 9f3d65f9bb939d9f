"""Ping-pong between ranks 0 and 1: one-way time and bandwidth over message sizes.

Method (after the OSU latency test, with the statistics of Hoefler & Belli, SC15): the
one-way time of a round trip is half of it, timed round trip by round trip with
``MPI.Wtime`` on rank 0 (:data:`METHOD`); rank 0 sends from one buffer and receives into
another, as rank 1 does (one buffer for both would keep a large message in cache and
flatter it).  The sizes are measured in interleaved rounds (:mod:`mpi_exercises.bench.measure`):
each round visits every size once, in a random order drawn from a recorded seed, after
``--warmup`` untimed round trips (fewer for large messages, ``--budget-bytes``, at least one),
so a burst of load from other jobs hits all sizes alike.
The first ``--rounds`` rounds take ``--iterations`` round trips per size in all (fewer for
large messages, ``--budget-bytes``); then, while the 95 % confidence interval of some size's
median is wider than ``--target`` of it and the ``--time-budget`` lasts, rounds double the
repetitions of those sizes (rank 0 decides, the ranks follow).  Ranks other than 0 and 1
wait.  α and β are fitted to the per-size minima (:data:`FIT_STATISTIC`, the one fit of a
measured file, :func:`fit_file`) with :func:`netmodels.fit_alpha_beta`
(relative residuals), with the least-squares 95 % intervals (:data:`CI_METHODS`: estimate ±
t(0.975, sizes - 2) × standard error, the ± printed); a two-segment fit looks for the
eager/rendezvous protocol switch.  The JSON keeps every sample (``times_s`` per size).  A size
whose median's 95 % interval is still wider than ``measure.NOISY`` (±10 %, five times the
default target) at the end marks the run unreliable, by the rule ``predict`` applies to its
calibrations: one line says so, and the JSON has ``"reliable": false`` and the sizes.

    mpiexec -n 2 python -m mpi_exercises pingpong --json pingpong.json
"""

from __future__ import annotations

import numpy as np

from netmodels.models.fit import unphysical

from .. import pages
from . import arguments, fresh_data, placement, records, statistics, timing
from . import measure as sampling

DEFAULT_SIZES = [0] + [2**k for k in range(0, 23)]  # 0 B, 1 B ... 4 MiB

#: how a one-way time is taken, in words (printed and stored in the JSON)
METHOD = ("pingpong: half of each round trip between ranks 0 and 1, timed one by one with MPI.Wtime "
          "on rank 0; separate send and receive buffers")

#: how the 95 % intervals of α and β are obtained, by the statistic fitted (stored in the JSON as
#: ``ci_method``; a file recording another text has intervals of an earlier method, :func:`file_fit`).
#: Medians: a block bootstrap over the rounds (:func:`mpi_exercises.bench.measure.bootstrap_fit`).
#: Minima: not so, as the percentile bootstrap fails for an extreme (Bickel & Freedman, Ann. Statist.
#: 9 (1981) 1196, section 6): a resampled minimum is never below the sample's, so every replicate
#: fit lies on one side of the estimate; instead the least-squares interval of the fit itself.
CI_METHODS = {
    "median_s": ("relative least squares on the per-size medians; 95 % percentile bootstrap over the rounds: "
                 "whole rounds drawn with replacement, the same for every size, 200 replicates, seed 0"),
    "min_s": ("relative least squares on the per-size minima; 95 % least-squares interval: estimate ± "
              "t(0.975, sizes - 2) × its standard error (Student's t; not a bootstrap, which fails for a "
              "minimum: a resampled minimum is never below the sample's)"),
}
#: the line the report prints under the fitted α and β, saying what their ± and interval are
CI_WORDS = {
    "median_s": "  ± is one standard error of the least squares; 95 % CI: percentile bootstrap over the rounds",
    "min_s": ("  ± is one standard error; 95 % CI = estimate ± t(0.975, {dof}) × standard error (± {q:.2f} of them):\n"
              "  how closely the {m} sizes' minima pin the line down, not where another launch may land"),
}


def add_arguments(p) -> None:
    p.add_argument("--sizes", type=arguments.size_list, default=DEFAULT_SIZES,
                   help="comma-separated message sizes in bytes, suffixes k = 1024 and M = 1024**2 allowed "
                        "(default: 0 and powers of two from 1 B to 4 MiB)")
    arguments.add_options(p, iterations=(1000, "round trips per size in the first rounds, for small messages "
                                          "(default 1000)"),
                     warmup=(50, "untimed round trips before each size in each round (default 50; capped "
                                 "like the iterations by --budget-bytes, at least 1)"))
    p.add_argument("--budget-bytes", type=arguments.positive_int, default=256 * 2**20,
                   help="cap on iterations x size per size, so large messages take fewer "
                        "iterations (default 256 MiB; at least 20 iterations are always run)")
    p.add_argument("--pages", choices=pages.KINDS, default="small",
                   help="page kind of the buffers: small (4 KiB, what the collectives' buffers get) or "
                        "huge (2 MiB transparent huge pages, where the kernel grants them); default small")
    p.add_argument("--fresh", action="store_true",
                   help="write the send buffer inside each sample, as a collective sends data it has just "
                        "written; the best write into memory no other rank reads is taken off "
                        "(default: the same buffer again and again)")
    sampling.add_options(p)


def buffers(nbytes: int, kind: str = "small") -> tuple[np.ndarray, np.ndarray]:
    """A send and a receive buffer of ``nbytes`` bytes each: separate, page-aligned memory
    on pages of ``kind`` (:mod:`mpi_exercises.pages`), every page written.  (``np.zeros``
    would not do: a large zeroed array is mapped to the kernel's one shared zero page until
    written, so a send buffer never written reads the same cached page over and over, and
    large messages look faster than any real data could go.)"""
    send, recv = pages.allocate(nbytes, np.uint8, kind), pages.allocate(nbytes, np.uint8, kind)
    pattern = (np.arange(min(nbytes, PATTERN_BYTES)) % 251).astype(np.uint8)   # bytes 0, 1, ..., 250, 0, ...
    for start in range(0, nbytes, PATTERN_BYTES):     # in pieces: no temporary as large as the buffer
        send[start:start + PATTERN_BYTES] = pattern[:nbytes - start]
    recv[:] = 0xFF
    return send, recv


#: the piece :func:`buffers` writes at a time, bytes: a multiple of 251 (about 1 MiB)
PATTERN_BYTES = 251 * 4096


def roundtrips(comm, send, recv, iters: int, warmup: int, write=None) -> np.ndarray:
    """One-way times (seconds) of ``iters`` round trips between ranks 0 and 1, each rank
    sending ``send`` and receiving into ``recv`` (same size), after ``warmup`` untimed
    ones; meaningful on rank 0 (rank 1 returns its own copy).  ``write``: a function of no
    argument each rank calls right before each of its sends, inside the timed round trip
    (:mod:`mpi_exercises.bench.fresh_data`)."""
    from mpi4py import MPI

    rank = comm.Get_rank()
    peer = 1 - rank
    samples = np.empty(iters)
    for i in range(-warmup, iters):
        if rank == 0:
            t0 = MPI.Wtime()
            if write is not None:
                write()
            comm.Send([send, MPI.BYTE], dest=peer, tag=1)
            comm.Recv([recv, MPI.BYTE], source=peer, tag=1)
            if i >= 0:
                samples[i] = (MPI.Wtime() - t0) / 2
        else:
            comm.Recv([recv, MPI.BYTE], source=peer, tag=1)
            if write is not None:
                write()
            comm.Send([send, MPI.BYTE], dest=peer, tag=1)
    return samples


def warm_up(comm, send, recv, warmup: int) -> None:
    """Untimed round trips of 0 bytes and of the whole buffers on ranks 0 and 1: the first
    round trips of a run set up the shared-memory or network path and fault in the
    buffers' pages, and would otherwise be charged to the first size measured."""
    if comm.Get_rank() in (0, 1):
        roundtrips(comm, send[:0], recv[:0], 0, 10 * warmup)
        roundtrips(comm, send, recv, 0, min(warmup, 5))


def sweep(comm, sizes, iterations, warmup, budget_bytes, progress=True, kind="small", *, timer=roundtrips,
          desc="ping-pong", fresh: bool = False, **options) -> tuple[list[dict], dict]:
    """Run the sweep on ranks 0 and 1 of ``comm`` (collective) in interleaved rounds
    (:func:`mpi_exercises.bench.measure.interleaved_rounds`): ``(per-size summaries, the
    rounds' record)`` on rank 0, ``([], record)`` elsewhere.  Without ``target`` every size
    gets exactly its first-pass repetitions (``iterations``, capped by ``budget_bytes``).
    ``timer(comm, send, recv, iters, warmup)``: the samples of one size (default
    :func:`roundtrips`; the exchange benchmark passes its own); ``fresh``: that timer with the send
    buffer written inside each sample (:func:`mpi_exercises.bench.fresh_data.timer`).  ``options``: those of
    :func:`~mpi_exercises.bench.measure.interleaved_rounds` (``rounds``, ``target``,
    ``time_budget_s``, ``seed``)."""
    rank = comm.Get_rank()
    send, recv = buffers(max(sizes), kind)
    warm_up(comm, send, recv, warmup)
    if fresh:
        timer = fresh_data.timer(timer, max(sizes), kind)
        desc += ", fresh"

    def run(size, reps):
        if rank in (0, 1):   # warm-up calls capped like the timed ones (at least one)
            return timer(comm, send[:size], recv[:size], reps,
                         timing.capped_iterations(size, warmup, budget_bytes, at_least=1))
        return np.empty(0)

    samples, info = sampling.interleaved_rounds(
        comm, sizes, run, lambda size: timing.capped_iterations(size, iterations, budget_bytes, at_least=20),
        desc=desc, progress=progress, **options)
    if rank != 0:
        return [], info
    results = []
    for k, size in enumerate(sizes):
        stats = statistics.summarize(samples[size])
        stats["samples_per_round"] = [counts[k] for counts in info["repetitions_per_round"]]
        stats["bytes"] = size
        stats["bandwidth_Bps"] = size / stats["median_s"] if size else None
        results.append(stats)
    return results, info


def measure(comm, sizes, iterations, warmup, budget_bytes, progress=True, **options) -> list[dict]:
    """:func:`sweep`'s per-size summaries (rank 0; an empty list elsewhere)."""
    return sweep(comm, sizes, iterations, warmup, budget_bytes, progress, **options)[0]


#: the statistics a fit can use, by their key in the per-size summaries
STATISTICS = {"median_s": np.median, "min_s": np.min}

#: the statistic of THE fit of a measured file (:func:`fit_file`), wherever it is fitted (lab 1,
#: lab 5, the class report, predict): the minimum.  Noise (other programs, interrupts) only ever
#: adds time, so the minimum moves least with the machine's load; the collectives ``predict``
#: compares with are its minima too, and so are its software term and its LogGP fit.
FIT_STATISTIC = "min_s"


def fit_file(data: dict, ci: bool = False) -> dict:
    """THE fit of a ``pingpong --json`` (or ``exchange --json``) file: :func:`fit` of its
    ``results`` on :data:`FIT_STATISTIC`, with ``"statistic"`` naming it (ValueError/KeyError
    on a file without results; ``ci``: 95 % intervals, as :func:`fit`)."""
    results = data["results"]
    if not isinstance(results, list) or not results:
        raise ValueError("its results are not a list of sizes")
    return {"statistic": FIT_STATISTIC, **fit(results, FIT_STATISTIC, ci=ci)}


#: the fields of a recorded α-β fit that :func:`file_fit` compares with its own
RECORDED_FIELDS = ("alpha_s", "beta_s_per_byte", "alpha_ci_s", "beta_ci_s_per_byte")


def file_fit(data: dict) -> tuple[dict, str]:
    """THE fit of a measured file with its 95 % intervals (:func:`fit_file`'s ``alpha_beta``, by
    the method of :data:`CI_METHODS`), and where they come from: ``"recorded"`` when the file's
    own ``fit`` holds this very fit and these intervals by this method, ``"recomputed"`` when it
    does not (a file made before the method changed, by other code, or edited: its record is
    not used), ``"none"`` when no interval can be had (two sizes; medians without samples).
    ValueError, KeyError or TypeError on a file whose results cannot be fitted."""
    ab = fit_file(data, ci=True)["alpha_beta"]
    if "alpha_ci_s" not in ab:
        return ab, "none"
    try:
        rec = data["fit"]["alpha_beta"]
        same = rec["ci_method"] == ab["ci_method"] and all(
            np.shape(rec[k]) == np.shape(ab[k]) and np.allclose(np.asarray(rec[k], dtype=float), ab[k],
                                                                rtol=1e-9, atol=0)
            for k in RECORDED_FIELDS)
    except (KeyError, TypeError, ValueError, IndexError):
        same = False
    return ab, "recorded" if same else "recomputed"


def points(data: dict) -> tuple[np.ndarray, np.ndarray]:
    """``(sizes in B, times in s)`` of a measured file: what :func:`fit_file` fits."""
    return (np.array([r["bytes"] for r in data["results"]], dtype=float),
            np.array([r[FIT_STATISTIC] for r in data["results"]], dtype=float))


def fit(results: list[dict], statistic: str = "median_s", ci: bool = False, switch: float | None = None) -> dict:
    """Fit α, β (and a two-segment model if there are enough sizes) to the median times
    (or ``statistic="min_s"``: the minima, more robust on a machine shared with other jobs);
    ``switch`` (B): the two segments split there instead of where they fit best (an exchange
    split at its ping-pong's switch).  A measured file's one fit is :func:`fit_file`'s.

    With ``ci``, α and β get 95 % confidence intervals (``alpha_ci_s``, ``beta_ci_s_per_byte``)
    by the method of :data:`CI_METHODS` for ``statistic``, named in ``ci_method``.  On the minima:
    estimate ± t(0.975, sizes - 2) × standard error (three sizes at least).  On the medians, with
    the samples in ``results`` (``times_s`` and ``samples_per_round``): the fit is repeated on the
    medians of the samples of rounds drawn with replacement
    (:func:`mpi_exercises.bench.measure.bootstrap_fit`), so that a burst that slowed a whole
    round widens the interval.  Such an interval says how well one run determines α and β;
    another launch of the benchmark can land elsewhere (other cores, other load)."""
    from netmodels import fit_alpha_beta, fit_piecewise

    n = np.array([r["bytes"] for r in results], dtype=float)
    t = np.array([r[statistic] for r in results])
    out = {}
    if np.unique(n).size >= 2:
        f = fit_alpha_beta(n, t)
        out["alpha_beta"] = {"alpha_s": f.alpha, "beta_s_per_byte": f.beta,
                             "alpha_stderr_s": f.alpha_stderr, "beta_stderr_s_per_byte": f.beta_stderr,
                             "max_relative_residual": f.max_relative_residual}
        lo = hi = None
        if ci and statistic == "min_s":
            lo, hi = _least_squares_interval(f)
        elif ci and all("times_s" in r and "samples_per_round" in r for r in results):
            def refit(stats):
                g = fit_alpha_beta(n, stats)
                return [g.alpha, g.beta]
            _, lo, hi = sampling.bootstrap_fit([r["times_s"] for r in results], refit, STATISTICS[statistic],
                                               per_round=[r["samples_per_round"] for r in results])
        if lo is not None:
            out["alpha_beta"].update(alpha_ci_s=[float(lo[0]), float(hi[0])],
                                     beta_ci_s_per_byte=[float(lo[1]), float(hi[1])],
                                     ci_method=CI_METHODS[statistic])
    if np.unique(n).size >= 6:
        pw = fit_piecewise(n, t, switch=switch)
        out["piecewise"] = {"switch_bytes": pw.switch_bytes,
                            "below": {"alpha_s": pw.below.alpha, "beta_s_per_byte": pw.below.beta},
                            "above": {"alpha_s": pw.above.alpha, "beta_s_per_byte": pw.above.beta}}
    return out


def _least_squares_interval(f, confidence: float = 0.95):
    """``(lo, hi)`` of α and β of the fit ``f`` (:class:`netmodels.models.fit.AlphaBetaFit`,
    :func:`netmodels.models.fit.least_squares_interval`); ``(None, None)`` without a finite
    standard error (two sizes)."""
    from netmodels.models.fit import least_squares_interval

    err = [f.alpha_stderr, f.beta_stderr]
    if f.npoints < 3 or not np.isfinite(err).all():
        return None, None
    return least_squares_interval([f.alpha, f.beta], err, f.npoints, confidence)


def agreement(fits: list[dict]) -> dict:
    """How far apart the α and β of several runs are (no MPI).  ``fits``: each run's
    ``fit["alpha_beta"]`` (:func:`fit`).  Per parameter (``alpha_s``, ``beta_s_per_byte``):
    the values, their 95 % intervals where the runs have them (else None), and the spread
    ``(max - min) / min``, the largest relative difference between two runs."""
    out = {}
    for key, ci in (("alpha_s", "alpha_ci_s"), ("beta_s_per_byte", "beta_ci_s_per_byte")):
        values = [f[key] for f in fits]
        out[key] = {"values": values, "ci": [f.get(ci) for f in fits],
                    "spread": (max(values) - min(values)) / min(values)}
    return out


def report(results: list[dict], fitted: dict) -> str:
    """A readable table of the sweep (median with its 95 % interval) and the fitted parameters."""
    lines = [f"{'size':>10} {'iters':>6} {'min µs':>10} {'median µs':>10} {'95 % CI µs':>19} {'MB/s':>9}",
             "-" * 69]
    for r in results:
        bw = f"{r['bandwidth_Bps'] / 1e6:9.1f}" if r["bandwidth_Bps"] else f"{'-':>9}"
        lo, hi = r["median_ci_s"]
        lines.append(f"{records.fmt_bytes(r['bytes']):>10} {r['samples']:>6} {r['min_s'] * 1e6:10.2f} "
                     f"{r['median_s'] * 1e6:10.2f} {f'[{lo * 1e6:.2f}, {hi * 1e6:.2f}]':>19} {bw}")
    if "alpha_beta" in fitted:
        f = fitted["alpha_beta"]

        def ci(key, scale, digits):
            return f"  95 % CI [{f[key][0] * scale:.{digits}f}, {f[key][1] * scale:.{digits}f}]" if key in f else ""
        statistic = fitted.get("statistic", "median_s")
        what = {"median_s": "median", "min_s": "minimum"}[statistic]
        lines += ["", f"Fit t = alpha + beta*n to the {what} {fitted.get('what', 'one-way')} times "
                  "(relative least squares):",
                  f"  alpha = {f['alpha_s'] * 1e6:.3f} ± {f['alpha_stderr_s'] * 1e6:.3f} µs"
                  + ci("alpha_ci_s", 1e6, 3),
                  f"  beta  = {f['beta_s_per_byte'] * 1e9:.4f} ± {f['beta_stderr_s_per_byte'] * 1e9:.4f} ns/B"
                  + ci("beta_ci_s_per_byte", 1e9, 4) + f"   (1/beta = {1e-6 / f['beta_s_per_byte']:.0f} MB/s)"]
        if f.get("ci_method") == CI_METHODS[statistic]:
            m = len(results)
            from netmodels.models.fit import t_quantile

            lines.append(CI_WORDS[statistic].format(dof=m - 2, q=t_quantile(m - 2) if m > 2 else 0.0, m=m))
        lines.append(f"  n1/2  = alpha/beta = {f['alpha_s'] / f['beta_s_per_byte']:.0f} B;"
                     f" worst relative residual {100 * f['max_relative_residual']:.0f} %")
        if len(results) < 3:
            lines.append("  WARNING: 2 sizes determine alpha and beta exactly: no error estimate; "
                         "measure more sizes")
        why = unphysical("the alpha-beta fit", alpha=f["alpha_s"], beta=f["beta_s_per_byte"])
        if why:
            lines.append(f"  WARNING: {why}")
    if "piecewise" in fitted:
        p = fitted["piecewise"]
        lines += [f"Two-segment fit: switch at {records.fmt_bytes(p['switch_bytes'])}; "
                  f"below alpha = {p['below']['alpha_s'] * 1e6:.2f} µs, "
                  f"1/beta = {1e-6 / p['below']['beta_s_per_byte']:.0f} MB/s; "
                  f"above alpha = {p['above']['alpha_s'] * 1e6:.2f} µs, "
                  f"1/beta = {1e-6 / p['above']['beta_s_per_byte']:.0f} MB/s"]
        for side in ("below", "above"):
            why = unphysical(f"the segment {side} the switch", alpha=p[side]["alpha_s"],
                             beta=p[side]["beta_s_per_byte"])
            if why:
                lines.append(f"  WARNING: {why}")
    return "\n".join(lines)


def run(args) -> int:
    fresh = bool(getattr(args, "fresh", False))
    return run_sweep(args, "pingpong", METHOD + ("; " + fresh_data.METHOD if fresh else ""),
                     lambda *a, **options: sweep(*a, fresh=fresh, **options), before=lambda: [
                         f"buffers: page-aligned, {args.pages} pages asked for "
                         f"(transparent huge pages: {pages.transparent_huge_pages() or 'not reported'})"],
                     what="one-way (fresh data)" if fresh else None, fields={"fresh": fresh})


def run_sweep(args, name: str, method: str, sweep_fn, *, what: str | None = None, before=lambda: [],
              after=None, fields: dict | None = None) -> int:
    """The command of a sweep over message sizes (``pingpong``, ``exchange``): ``sweep_fn`` (as
    :func:`sweep`) in interleaved rounds, then on rank 0 the header, the lines ``before()``, the
    table with THE fit (:func:`fit_file`, ``what`` naming the times fitted), the noise line if
    a size missed, the line ``after(fitted, oversubscribed)`` and the JSON (``--json``; ``fields``:
    more of its top-level fields, e.g. the exchange's ``fresh``)."""
    comm, oversubscribed = placement.start(name)
    if oversubscribed is None:
        return 2
    options = sampling.options_from(comm, args)
    results, rounds = sweep_fn(comm, args.sizes, args.iterations, args.warmup, args.budget_bytes,
                               not args.no_progress, args.pages, **options)
    if comm.Get_rank() == 0:
        fitted = fit_file({"results": results}, ci=True)
        if what is not None:
            fitted["what"] = what
        noise = noise_of(results)
        print(sampling.header(method, rounds))
        for line in before():
            print(line)
        print(report(results, fitted), flush=True)
        if not noise["reliable"]:
            print(sampling.noise_line(noise), flush=True)
        if after is not None:
            print(after(fitted, oversubscribed), flush=True)
        records.save(comm, args.json, name, oversubscribed,
                     {"sizes": args.sizes, "iterations": args.iterations, "warmup": args.warmup,
                      "budget_bytes": args.budget_bytes, "pages": args.pages, **options},
                     timing_method=method, rounds=rounds, reliable=noise["reliable"], reliability=noise,
                     results=results, fit=fitted, **(fields or {}))
    return 0


def noise_of(results: list[dict]) -> dict:
    """How well the sweep pins its medians down (:func:`~mpi_exercises.bench.measure.reliability`:
    unreliable if a size's 95 % interval is wider than ``measure.NOISY`` of its median)."""
    return sampling.reliability([(r["ci_relative_halfwidth"] or 0.0, records.fmt_bytes(r["bytes"]))
                                 for r in results])
