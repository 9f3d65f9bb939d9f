"""Ping-pong between ranks 0 and 1: one-way time and bandwidth over message sizes.

Method (as in the OSU latency test): for each size, warm-up round trips, then
many timed round trips; the one-way time of a round trip is half of it, timed
with ``MPI.Wtime``.  Ranks other than 0 and 1 wait.  α and β are fitted to the
median one-way times with :func:`netmodels.fit_alpha_beta` (relative residuals);
a two-segment fit looks for the eager/rendezvous protocol switch.

    mpiexec -n 2 python -m mpi_exercises pingpong --json pingpong.json
"""

from __future__ import annotations

import sys

import numpy as np

from . import core

DEFAULT_SIZES = [0] + [2**k for k in range(0, 23)]  # 0 B, 1 B ... 4 MiB


def add_arguments(p) -> None:
    p.add_argument("--sizes", type=core.size_list, default=DEFAULT_SIZES,
                   help="comma-separated message sizes in bytes, suffixes k = 1024 and M = 1024**2 allowed "
                        "(default: 0 and powers of two from 1 B to 4 MiB)")
    core.add_options(p, iterations=(1000, "timed round trips per size for small messages (default 1000)"),
                     warmup=(50, "untimed round trips before each size (default 50)"))
    p.add_argument("--budget-bytes", type=core.positive_int, default=256 * 2**20,
                   help="cap on iterations x size per size, so large messages take fewer "
                        "iterations (default 256 MiB; at least 20 iterations are always run)")


def roundtrips(comm, msg, iters: int, warmup: int) -> np.ndarray:
    """One-way times (seconds) of ``iters`` round trips of ``msg`` between ranks 0 and 1,
    after ``warmup`` untimed ones; meaningful on rank 0 (rank 1 returns its own copy)."""
    from mpi4py import MPI

    rank = comm.Get_rank()
    peer = 1 - rank
    samples = np.empty(iters)
    for i in range(-warmup, iters):
        if rank == 0:
            t0 = MPI.Wtime()
            comm.Send([msg, MPI.BYTE], dest=peer, tag=1)
            comm.Recv([msg, MPI.BYTE], source=peer, tag=1)
            if i >= 0:
                samples[i] = (MPI.Wtime() - t0) / 2
        else:
            comm.Recv([msg, MPI.BYTE], source=peer, tag=1)
            comm.Send([msg, MPI.BYTE], dest=peer, tag=1)
    return samples


def measure(comm, sizes, iterations, warmup, budget_bytes, progress=True) -> list[dict]:
    """Run the sweep on ranks 0 and 1 of ``comm``; return per-size summaries on rank 0.

    Before the sweep, the connection and the whole buffer are warmed up once (untimed
    round trips of 0 bytes and of the largest size): the first round trips of a run
    set up the shared-memory or network path and fault in the buffer's pages, and
    would otherwise be charged to the first size of the sweep.
    """
    from tqdm import tqdm

    rank = comm.Get_rank()
    buf = np.zeros(max(sizes), dtype=np.uint8)
    if rank in (0, 1):
        roundtrips(comm, buf[:0], 0, 10 * warmup)
        roundtrips(comm, buf, 0, min(warmup, 5))
    results = []
    bar = tqdm(sizes, desc="ping-pong", unit="size", file=sys.stderr,
               disable=(rank != 0) or (not progress) or None)
    for size in bar:
        iters = core.capped_iterations(size, iterations, budget_bytes, at_least=20)
        if rank in (0, 1):
            samples = roundtrips(comm, buf[:size], iters, warmup)
        if rank == 0:
            stats = core.summarize(samples)
            stats["bytes"] = size
            stats["bandwidth_Bps"] = size / stats["median_s"] if size else None
            results.append(stats)
    comm.Barrier()
    return results


def fit(results: list[dict], statistic: str = "median_s") -> dict:
    """Fit α, β (and a two-segment model if there are enough sizes) to the median times
    (or ``statistic="min_s"``: the minima, more robust on a machine shared with other jobs)."""
    from netmodels import fit_alpha_beta, fit_piecewise

    n = np.array([r["bytes"] for r in results], dtype=float)
    t = np.array([r[statistic] for r in results])
    out = {}
    if np.unique(n).size >= 2:
        f = fit_alpha_beta(n, t)
        out["alpha_beta"] = {"alpha_s": f.alpha, "beta_s_per_byte": f.beta,
                             "alpha_stderr_s": f.alpha_stderr, "beta_stderr_s_per_byte": f.beta_stderr,
                             "max_relative_residual": f.max_relative_residual}
    if np.unique(n).size >= 6:
        pw = fit_piecewise(n, t)
        out["piecewise"] = {"switch_bytes": pw.switch_bytes,
                            "below": {"alpha_s": pw.below.alpha, "beta_s_per_byte": pw.below.beta},
                            "above": {"alpha_s": pw.above.alpha, "beta_s_per_byte": pw.above.beta}}
    return out


def report(results: list[dict], fitted: dict) -> str:
    """A readable table of the sweep and the fitted parameters."""
    lines = [f"{'size':>10} {'iters':>6} {'min µs':>10} {'median µs':>10} {'p75 µs':>10} {'MB/s':>9}",
             "-" * 60]
    for r in results:
        bw = f"{r['bandwidth_Bps'] / 1e6:9.1f}" if r["bandwidth_Bps"] else f"{'-':>9}"
        lines.append(f"{core.fmt_bytes(r['bytes']):>10} {r['samples']:>6} {r['min_s'] * 1e6:10.2f} "
                     f"{r['median_s'] * 1e6:10.2f} {r['p75_s'] * 1e6:10.2f} {bw}")
    if "alpha_beta" in fitted:
        f = fitted["alpha_beta"]
        lines += ["", "Fit t = alpha + beta*n to the median one-way times (relative least squares):",
                  f"  alpha = {f['alpha_s'] * 1e6:.3f} ± {f['alpha_stderr_s'] * 1e6:.3f} µs",
                  f"  beta  = {f['beta_s_per_byte'] * 1e9:.4f} ± {f['beta_stderr_s_per_byte'] * 1e9:.4f} ns/B"
                  f"   (1/beta = {1e-6 / f['beta_s_per_byte']:.0f} MB/s)",
                  f"  n1/2  = alpha/beta = {f['alpha_s'] / f['beta_s_per_byte']:.0f} B;"
                  f" worst relative residual {100 * f['max_relative_residual']:.0f} %"]
        if len(results) < 3:
            lines.append("  WARNING: 2 sizes determine alpha and beta exactly: no error estimate; "
                         "measure more sizes")
        if f["alpha_s"] <= 0 or f["beta_s_per_byte"] <= 0:
            lines.append("  WARNING: a fitted parameter is <= 0, which no network has: the sizes are "
                         "too few or too close, or the timings too noisy (oversubscribed?); measure a "
                         "wider range of sizes with more iterations")
    if "piecewise" in fitted:
        p = fitted["piecewise"]
        lines += [f"Two-segment fit: switch at {core.fmt_bytes(p['switch_bytes'])}; "
                  f"below alpha = {p['below']['alpha_s'] * 1e6:.2f} µs, "
                  f"1/beta = {1e-6 / p['below']['beta_s_per_byte']:.0f} MB/s; "
                  f"above alpha = {p['above']['alpha_s'] * 1e6:.2f} µs, "
                  f"1/beta = {1e-6 / p['above']['beta_s_per_byte']:.0f} MB/s"]
    return "\n".join(lines)


def run(args) -> int:
    comm, oversubscribed = core.start("pingpong")
    if oversubscribed is None:
        return 2
    results = measure(comm, args.sizes, args.iterations, args.warmup, args.budget_bytes,
                      progress=not args.no_progress)
    if comm.Get_rank() == 0:
        fitted = fit(results)
        print(report(results, fitted), flush=True)
        core.save(comm, args.json, "pingpong", oversubscribed,
                  {"sizes": args.sizes, "iterations": args.iterations, "warmup": args.warmup,
                   "budget_bytes": args.budget_bytes}, results=results, fit=fitted)
    return 0
