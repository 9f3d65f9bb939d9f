"""The launch mode, explained: cache coherence between the two cores, read beside the mode.

    mpiexec -n 2 python benchmarks/coherence.py --rounds 200 --apart 0.2 --json results/coherence.json

Round after round (``--apart`` seconds between rounds), the two ranks take two readings at
1 MiB, one right after the other:

- coherence, with no message (:func:`mpi_exercises.bench.coherence.probe`): rank 0's write of
  shared memory that rank 1 has just read, over the same write again (``write_ratio``), and
  rank 1's read of memory rank 0 has just written, over the same read again (``read_ratio``);
- messages, in one interleaved loop (:func:`mpi_exercises.bench.timing.time_interleaved`, each
  call once untimed before its sample, the best of ``--samples``): the exchange (``Sendrecv``) of
  a buffer not written since; a write of 1 MiB (``np.copyto``) then that exchange; the same write
  then the exchange of the buffer just written; MPI's Allreduce.  ``fresh_ratio`` is the third over
  the second (:mod:`mpi_exercises.bench.fresh_data`), ``mode_ratio`` the Allreduce over the
  exchange, the launch mode's measure (slow above :data:`~mpi_exercises.bench.launch_mode.MODE_RATIO`;
  here on minima, where :func:`~mpi_exercises.bench.launch_mode.detect_mode` takes medians).

If the mode is the price of coherence, they move together round by round.  Prints one line per
20 rounds and a last line: Spearman's rank correlation (``scipy.stats.spearmanr``) of the write
ratio with the fresh ratio and with the mode's ratio over all rounds, and the median ratios in
the rounds whose write ratio is above and below :data:`mpi_exercises.bench.coherence.APART_ABOVE`.  The JSON (written
atomically by rank 0) keeps every round.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from mpi_exercises.bench import arguments  # noqa: E402
from mpi_exercises.bench.coherence import APART_ABOVE  # noqa: E402
from mpi_exercises.bench.launch_mode import MODE_RATIO  # noqa: E402
from netmodels.commandline import OneLineParser  # noqa: E402
from netmodels.outputs import output_problem, write_json  # noqa: E402


#: the calls of one round's loop of messages, in order
CALLS = ("exchange", "write, exchange clean", "write, exchange it", "MPI Allreduce")


def messages(comm, samples: int, nbytes: int = 1 << 20):
    """A function of no argument that times one round of :data:`CALLS` (collective, 2 ranks):
    the best time (s) of each over ``samples`` samples, a dict by call."""
    from mpi4py import MPI

    from mpi_exercises import pages
    from mpi_exercises.bench import timing

    n, peer = nbytes // 8, 1 - comm.Get_rank()
    x, recv, written, source, out = (pages.allocate((n,), np.float64) for _ in range(5))
    x[:], source[:] = 1.0 + comm.Get_rank(), 3.0

    def exchange(buf=x):
        comm.Sendrecv(buf, peer, 7, recv, peer, 7)
    calls = [exchange, lambda: (np.copyto(out, source), exchange()), lambda: (np.copyto(written, source),
                                                                                exchange(written)),
             lambda: comm.Allreduce(x, out, op=MPI.SUM)]
    return lambda: dict(zip(CALLS, timing.time_interleaved(comm, calls, samples, 1, warm=True).min(axis=1).tolist()))


def build_parser() -> OneLineParser:
    p = OneLineParser(prog="coherence.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=arguments.positive_int, default=200, help="rounds (default 200)")
    p.add_argument("--apart", type=arguments.float_in(0.0, 60.0, "seconds"), default=0.2,
                   help="seconds between rounds (default 0.2)")
    p.add_argument("--samples", type=arguments.positive_int, default=5,
                   help="samples of each call and probe per round, the best kept (default 5)")
    p.add_argument("--json", metavar="FILE", help="write every round and the summary to FILE as JSON, atomically")
    return p


def summary(rounds: list[dict]) -> dict:
    """Spearman's ρ (and its p-value) of the write ratio with the fresh ratio and with the mode's
    ratio over all rounds; the median of each ratio in the rounds whose write ratio is above
    :data:`mpi_exercises.bench.coherence.APART_ABOVE` (``apart``) and in the others (``shared``)."""
    from scipy.stats import spearmanr

    v = {k: np.array([r[k] for r in rounds]) for k in ("write_ratio", "read_ratio", "fresh_ratio", "mode_ratio")}
    apart = v["write_ratio"] > APART_ABOVE
    out = {"rounds": len(rounds), "apart_rounds": int(apart.sum()), "slow_rounds": int(np.sum(v["mode_ratio"] > MODE_RATIO))}
    for key in ("fresh_ratio", "mode_ratio"):
        rho = spearmanr(v["write_ratio"], v[key]) if len(rounds) > 2 else None
        out[f"write_vs_{key}"] = {"spearman_rho": None if rho is None else float(rho.statistic),
                                  "p_value": None if rho is None else float(rho.pvalue)}
    out["medians"] = {k: {"apart": float(np.median(x[apart])) if apart.any() else None,
                          "shared": float(np.median(x[~apart])) if (~apart).any() else None} for k, x in v.items()}
    return out


def last_line(s: dict, load: float) -> str:
    fmt = lambda v: "n/a" if v is None else f"{v:.2f}"  # noqa: E731
    m = s["medians"]
    return (f"coherence: {s['rounds']} rounds, {s['apart_rounds']} with the caches apart (write after the other core "
            f"read / write of own lines above {APART_ABOVE:g}: median {fmt(m['write_ratio']['apart'])}, else "
            f"{fmt(m['write_ratio']['shared'])}); fresh data x{fmt(m['fresh_ratio']['apart'])} apart, "
            f"x{fmt(m['fresh_ratio']['shared'])} shared; MPI Allreduce / exchange {fmt(m['mode_ratio']['apart'])} "
            f"apart, {fmt(m['mode_ratio']['shared'])} shared; Spearman's rho of the write ratio with fresh "
            f"{fmt(s['write_vs_fresh_ratio']['spearman_rho'])}, with the mode {fmt(s['write_vs_mode_ratio']['spearman_rho'])}; "
            f"load {load:.1f}")


def main(argv=None) -> int:
    from mpi4py import MPI

    from mpi_exercises.bench import coherence, placement, probes

    p = build_parser()
    args = p.parse_args(argv)
    comm = MPI.COMM_WORLD
    problem = args.json and output_problem(args.json)
    if problem or comm.Get_size() != 2:          # refused before any work, in one line (rank 0's)
        if comm.Get_rank() == 0:
            p.error(f"--json: {problem}" if problem else f"run it on 2 ranks (mpiexec -n 2), got {comm.Get_size()}")
        return 2
    placement.placement(comm)                  # each rank bound to a core of its own
    load0, t0, rounds = os.getloadavg()[0], time.time(), []
    round_of_messages = messages(comm, args.samples)
    for k in range(args.rounds):
        if k:
            time.sleep(args.apart)
        c = coherence.probe(comm, samples=args.samples)
        m = round_of_messages()
        rounds.append({"t_s": time.time() - t0, **c, **{f"{k} s": t for k, t in m.items()},
                       "fresh_ratio": m["write, exchange it"] / m["write, exchange clean"],
                       "mode_ratio": m["MPI Allreduce"] / m["exchange"]})
        if comm.Get_rank() == 0 and (k + 1) % 20 == 0:
            last = rounds[-20:]
            print(f"rounds {k - 18}-{k + 1}: write ratio " + " ".join(f"{r['write_ratio']:.1f}" for r in last)
                  + " | fresh " + " ".join(f"{r['fresh_ratio']:.1f}" for r in last)
                  + " | mode " + " ".join(f"{r['mode_ratio']:.1f}" for r in last), flush=True)
    if comm.Get_rank() == 0:
        s = summary(rounds)
        line = last_line(s, os.getloadavg()[0])
        print(line)
        if args.json:
            write_json(args.json, {
                "benchmark": "coherence", "ranks": 2, "cores": len(os.sched_getaffinity(0)),
                "oversubscribed": 2 > len(os.sched_getaffinity(0)),
                "command": "mpiexec -n 2 python benchmarks/coherence.py " + " ".join(sys.argv[1:] if argv is None else argv),
                "parameters": {"rounds": args.rounds, "apart_s": args.apart, "samples": args.samples,
                               "bytes": coherence.PROBE_BYTES},
                "cpu": probes.cpu_identity(), "method": coherence.METHOD, "calls": list(CALLS), "apart_above": APART_ABOVE, "slow_above": MODE_RATIO,
                "load_average_1min": [load0, os.getloadavg()[0]], "rounds": rounds, "summary": s, "last_line": line})
    return 0


if __name__ == "__main__":
    sys.exit(main())
