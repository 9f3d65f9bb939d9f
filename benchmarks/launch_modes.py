"""Launch modes of long messages: several ``mpiexec -n 2`` launches, each timing a ping-pong, an
exchange and MPI's Allreduce at long lengths with its buffers placed in several ways, under
settings that switch a suspected cause off.

    python benchmarks/launch_modes.py --json book/data/launch_modes.json

Each launch (a subprocess ``mpiexec -n 2 python benchmarks/launch_modes.py --worker``) times, for
every length and every buffer placement, three calls interleaved round-robin in one loop
(:func:`mpi_exercises.bench.timing.time_interleaved`, the benchmarks' one timing loop: a sample is
``--inner`` back-to-back calls after one barrier, per call, the slowest rank's):

- ``pingpong``: rank 0 sends, rank 1 sends it back (the time is half the round trip);
- ``exchange``: both ranks ``Sendrecv`` at once;
- ``allreduce``: MPI's own ``Allreduce`` (sum of float64).

Placements of the send and receive buffer of each rank (offsets in bytes modulo 4 KiB):

- ``numpy``: ``np.empty`` arrays allocated one after the other, as a program makes them (where
  they land is malloc's choice and is recorded), the receive buffer never written before;
- ``page``: both page-aligned (0, 0), as :mod:`mpi_exercises.pages` allocates them;
- ``recv+16``: send at 0, receive at +16: a copy from a send buffer into the peer's receive buffer
  then has its destination 16 bytes past its source modulo 4 KiB (the 4K-aliasing penalty of
  ``rep movsb``: copying 64 KiB that way takes 23 to 33 µs in one process, 2 µs otherwise);
- ``send+16``: send at +16, receive at 0 (the destination 16 bytes *before* the source);
- ``huge``: both page-aligned on 2 MiB transparent huge pages (physically contiguous, so the same
  cache sets in every launch).

Settings, one environment per launch, cycled so that launches of every setting are spread over
the run: ``default`` (``GLIBC_TUNABLES`` removed), ``movsb-off``
(``GLIBC_TUNABLES=glibc.cpu.x86_rep_movsb_threshold=2147483647``: glibc's memcpy never uses
``rep movsb``), ``cma-off`` (``MPIR_CVAR_CH4_CMA_ENABLE=0``: MPICH's single copy through
``process_vm_readv`` above ``MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD`` is off, long messages go
through the shared segment's cells, two copies by the processes' own memcpy) and
``cma-off+movsb-off``; where MPICH's own temporary buffers (its Allreduce's) land:
``tmp-mmap`` (``glibc.malloc.mmap_threshold=32768``: every temporary of 32 KiB or more mapped afresh
at each call, 16 bytes past a page, and faulted in), ``tmp-mmap+cma-off``, ``tmp-heap`` (never
mapped: in the heap, where what was allocated before puts it); and ``seed-0``
(``PYTHONHASHSEED=0``: the interpreter's own allocations the same in every launch).  Every launch records the medians, each rank's buffer offsets modulo 4 KiB,
the copy distances between ranks, the first (cold) call of each case, GLIBC_TUNABLES, MPICH's CVARs
set in its environment and the values MPICH takes for those of its intranode path (``mpivars``),
the CPU model, the load average, the transparent-huge-page mode, the core each rank is bound to
(:func:`mpi_exercises.bench.placement.placement`, as the kit's benchmarks bind them), the CPU
each rank last ran on, its memory on huge pages, the clock source and ``MPI.Wtick``, and where
``malloc`` hands out a block of each length after the timings (:func:`mpi_exercises.bench.probes.malloc_offsets`: where
MPICH's next temporary of that size lands).  Its mode (:func:`launch_mode`) is its Allreduce over
its exchange at the longest length, page-aligned: both timed in one loop, so the load divides out;
:func:`mpi_exercises.bench.launch_mode.detect_mode` measures the same in any program on 2 ranks
or more, for a benchmark or ``predict`` to write beside its results.

Prints one table (launch, setting, placement, distances, medians), the ratios of each placement
to ``page`` per setting, and a last line naming the mode found: per setting, the placements slow
against ``page`` in a launch (median ratio above :data:`SLOW_FACTOR`), the median ratio of the
rows whose copy distance is 16, and per setting the Allreduce / exchange ratios of its launches
with how many are slow (above :data:`MODE_RATIO`).  The JSON is written atomically.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from netmodels.commandline import OneLineParser  # noqa: E402
from netmodels.outputs import output_problem  # noqa: E402
# the mode of a launch, as predict and the benchmarks detect it (one definition, in the package)
from mpi_exercises.bench import probes  # noqa: E402
from mpi_exercises.bench.launch_mode import MODE_BYTES, MODE_RATIO, detect_mode, launch_mode  # noqa: E402,F401

PAGE = 4096                                   #: bytes of a page: offsets are taken modulo this
OPS = ("pingpong", "exchange", "allreduce")
#: placement name -> (send offset, receive offset) in bytes mod 4 KiB; None: as np.empty places it
PLACEMENTS = {"numpy": None, "page": (0, 0), "recv+16": (0, 16), "send+16": (16, 0), "huge": (0, 0)}
#: placements whose buffers are on 2 MiB transparent huge pages (physically contiguous: the same
#: cache sets in every launch), the others on 4 KiB pages
HUGE = ("huge",)
MOVSB_OFF = "glibc.cpu.x86_rep_movsb_threshold=2147483647"
#: setting -> the environment variables it sets (None: removes the variable)
#: glibc's malloc serves every block of 32 KiB or more by its own mmap (the threshold fixed, so
#: never raised by a free): MPICH's temporary buffers then start 16 bytes past a page, every call
TMP_MMAP = "glibc.malloc.mmap_threshold=32768"
#: glibc's malloc serves every block below 32 MiB from its heap: MPICH's temporaries land where
#: the heap's layout puts them (their offset mod 4 KiB then depends on what was allocated before)
TMP_HEAP = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=67108864"
SETTINGS = {
    "default": {"GLIBC_TUNABLES": None},
    "movsb-off": {"GLIBC_TUNABLES": MOVSB_OFF},
    "cma-off": {"GLIBC_TUNABLES": None, "MPIR_CVAR_CH4_CMA_ENABLE": "0"},
    "cma-off+movsb-off": {"GLIBC_TUNABLES": MOVSB_OFF, "MPIR_CVAR_CH4_CMA_ENABLE": "0"},
    "tmp-mmap": {"GLIBC_TUNABLES": TMP_MMAP},
    "tmp-mmap+cma-off": {"GLIBC_TUNABLES": TMP_MMAP, "MPIR_CVAR_CH4_CMA_ENABLE": "0"},
    "tmp-heap": {"GLIBC_TUNABLES": TMP_HEAP},
    "seed-0": {"GLIBC_TUNABLES": None, "PYTHONHASHSEED": "0"},
}
LENGTHS = (64 * 1024, 256 * 1024, 1024 * 1024)
#: a placement (or launch) is in a slow mode when its median is more than this times the reference's
SLOW_FACTOR = 1.5
MARK = "LAUNCH_MODES_RESULT "                 #: the worker's result line starts with this


# ---------------------------------------------------------------- pure parts
def offset_view(raw: np.ndarray, offset: int, nbytes: int) -> np.ndarray:
    """``nbytes`` of the page-aligned byte array ``raw`` from ``offset`` on, as float64: a
    buffer whose address is ``offset`` modulo 4 KiB.  ``offset`` must be a multiple of 8 in
    [0, 4096) and ``raw`` long enough."""
    if not 0 <= offset < PAGE or offset % 8:
        raise ValueError(f"offset must be a multiple of 8 in [0, {PAGE}), got {offset}")
    if nbytes <= 0 or nbytes % 8:
        raise ValueError(f"nbytes must be a positive multiple of 8, got {nbytes}")
    if raw.ctypes.data % PAGE or raw.nbytes < offset + nbytes:
        raise ValueError(f"raw must be page-aligned and hold offset + nbytes = {offset + nbytes} bytes")
    return raw[offset:offset + nbytes].view(np.float64)


def copy_distances(send_offsets, recv_offsets) -> list[int]:
    """For two ranks, the distance (bytes mod 4 KiB) from each message's source to its
    destination: rank r's send buffer to rank 1 - r's receive buffer, ``[0 -> 1, 1 -> 0]``.
    A copy is penalised by 4K aliasing when this is 16."""
    if len(send_offsets) != 2 or len(recv_offsets) != 2:
        raise ValueError("send_offsets and recv_offsets must hold one offset per rank of 2")
    return [(int(recv_offsets[1 - r]) - int(send_offsets[r])) % PAGE for r in range(2)]


def slow_ratio(median_s: float, reference_s: float) -> float:
    """``median_s`` over ``reference_s`` (both > 0)."""
    if not (median_s > 0 and reference_s > 0):
        raise ValueError(f"median_s and reference_s must be > 0, got {median_s}, {reference_s}")
    return median_s / reference_s


def mode_of(ratios, factor: float = SLOW_FACTOR) -> str:
    """``"slow"`` when the median of ``ratios`` (of a case's times to its reference's, one per
    length and operation) exceeds ``factor``, else ``"fast"``."""
    ratios = np.asarray(list(ratios), dtype=float)
    if ratios.size == 0 or not np.all(ratios > 0):
        raise ValueError("ratios must be a non-empty list of positive numbers")
    if not factor > 1:
        raise ValueError(f"factor must be > 1, got {factor}")
    return "slow" if float(np.median(ratios)) > factor else "fast"


def settings_order(settings, launches: int) -> list[str]:
    """The setting of each launch: the settings cycled ``launches`` times (interleaved, so that a
    burst of load does not fall on one setting only)."""
    if launches < 1:
        raise ValueError(f"launches must be >= 1, got {launches}")
    return [s for _ in range(launches) for s in settings]


# ---------------------------------------------------------------- one launch (under mpiexec)
def _buffers(placement: str, nbytes: int, rank: int):
    from mpi_exercises import pages

    n = nbytes // 8
    if PLACEMENTS[placement] is None:
        send, recv = np.empty(n), np.empty(n)
        send[...] = rank + 1.0
        return send, recv
    s_off, r_off = PLACEMENTS[placement]
    kind = "huge" if placement in HUGE else "small"
    send = offset_view(pages.allocate((nbytes + PAGE,), np.uint8, kind), s_off, nbytes)
    recv = offset_view(pages.allocate((nbytes + PAGE,), np.uint8, kind), r_off, nbytes)
    send[...] = rank + 1.0
    return send, recv


def _calls(comm, send, recv, peer):
    from mpi4py import MPI

    rank = comm.Get_rank()

    def pingpong():
        if rank == 0:
            comm.Send(send, peer, 1)
            comm.Recv(recv, peer, 2)
        else:
            comm.Recv(recv, peer, 1)
            comm.Send(send, peer, 2)

    def exchange():
        comm.Sendrecv(send, peer, 3, recv, peer, 3)

    def allreduce():
        comm.Allreduce(send, recv, op=MPI.SUM)
    return {"pingpong": pingpong, "exchange": exchange, "allreduce": allreduce}


def worker(args) -> int:
    from mpi4py import MPI

    from mpi_exercises.bench import placement as where
    from mpi_exercises.bench import timing

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if size != 2:
        if rank == 0:
            print("launch_modes.py --worker needs exactly 2 ranks", file=sys.stderr)
        return 2
    peer = 1 - rank
    place = where.placement(comm)           # each rank bound to a core of its own, as the kit's benchmarks
    load0 = where.load_average()
    keys, calls, offsets, kept = [], [], {}, []
    for nbytes in args.lengths:                 # allocated in this order, as a program would
        for name in PLACEMENTS:
            send, recv = _buffers(name, nbytes, rank)
            kept.append((send, recv))
            offsets[(nbytes, name)] = (send.ctypes.data % PAGE, recv.ctypes.data % PAGE)
            for op, fn in _calls(comm, send, recv, peer).items():
                keys.append((nbytes, name, op))
                calls.append(fn)
    cold = timing.time_interleaved(comm, calls, 1, 0)[:, 0]          # first call: page faults, setup
    samples = timing.time_interleaved(comm, calls, args.iterations, args.warmup, inner=args.inner)
    everyone = comm.gather(offsets, root=0)
    last_cpu = comm.gather(probes.last_cpu(), root=0)
    huge = comm.gather(probes.anon_huge_kib(), root=0)
    probe = comm.gather(probes.malloc_offsets(args.lengths, PAGE), root=0)
    for (nbytes, name, _), (send, recv) in zip(keys[::len(OPS)], kept):
        if not np.all(recv == 1.0 + 2.0):                            # the allreduce ran last
            raise RuntimeError(f"wrong result at {nbytes} B, {name}")
    if rank == 0:
        rows = []
        for k, (nbytes, name, op) in enumerate(keys):
            s_off = [everyone[r][(nbytes, name)][0] for r in range(2)]
            r_off = [everyone[r][(nbytes, name)][1] for r in range(2)]
            t = samples[k] / (2 if op == "pingpong" else 1)
            rows.append({"bytes": nbytes, "placement": name, "op": op, "send_offsets": s_off,
                         "recv_offsets": r_off, "distances": copy_distances(s_off, r_off),
                         "median_us": float(np.median(t) * 1e6), "min_us": float(t.min() * 1e6),
                         "cold_us": float(cold[k] * 1e6 / (2 if op == "pingpong" else 1))})
        out = {"rows": rows, "glibc_tunables": os.environ.get("GLIBC_TUNABLES"), "cvars": probes.cvars(),
               "load_average_1min": [load0, where.load_average()],
               "transparent_huge_pages": where.transparent_huge_pages(),
               "core_of_rank": place["core_of_rank"], "last_cpu_of_rank": last_cpu,
               "anon_huge_pages_kib_of_rank": huge, "malloc_offsets_of_rank": probe, "clock_source": probes.clock_source(),
               "wtick_s": MPI.Wtick(), "python_hash_seed": os.environ.get("PYTHONHASHSEED"),
               "mpi_library": MPI.Get_library_version().splitlines()[0].strip(), "pid": os.getpid()}
        print(MARK + json.dumps(out), flush=True)
    return 0


# ---------------------------------------------------------------- the launches
def setting_env(setting: str) -> dict:
    """This process's environment changed as ``setting`` says, with the kit on PYTHONPATH."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    for k, v in SETTINGS[setting].items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def worker_result(cmd: list, env: dict, timeout: float, mark: str) -> dict:
    """Run one launch (``cmd``, under ``env``, at most ``timeout`` s): the JSON of its worker's
    last line that starts with ``mark``, or ``{"error": why}`` in one line."""
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:g} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(mark)]
    if proc.returncode or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"exit status {proc.returncode}: {tail}"}
    return json.loads(lines[-1][len(mark):])


def launch(setting: str, args) -> dict:
    """One ``mpiexec -n 2`` launch of the worker under ``setting``; its result, or its error."""
    from mpi_exercises.labdata import mpiexec

    env = setting_env(setting)
    cmd = [mpiexec(), "-n", "2", sys.executable, str(Path(__file__).resolve()), "--worker",
           "--lengths", ",".join(map(str, args.lengths)), "--iterations", str(args.iterations),
           "--warmup", str(args.warmup), "--inner", str(args.inner)]
    t0 = time.time()
    out = worker_result(cmd, env, args.timeout, MARK)
    if "error" in out:
        return {"setting": setting, **out}
    ratios = op_ratio(out)
    at = max(ratios)
    return {"setting": setting, "environment": {k: v for k, v in SETTINGS[setting].items()},
            "launch_mode": {"bytes": at, "ratio": ratios[at], "mode": launch_mode(ratios[at])},
            "mpich_cvars": probes.mpich_cvars(env),
            "started": time.strftime("%H:%M:%S", time.gmtime(t0)), "seconds": time.time() - t0,
            **out}


def ratios_to_page(result: dict) -> dict:
    """Per placement: the ratio of each (length, op) median to the ``page`` placement's of the
    same launch, ``{placement: [ratio, ...]}``."""
    med = {(r["bytes"], r["placement"], r["op"]): r["median_us"] for r in result["rows"]}
    out = {}
    for (nbytes, name, op), t in med.items():
        out.setdefault(name, []).append(slow_ratio(t, med[(nbytes, "page", op)]))
    return out


def by_distance(result: dict) -> dict:
    """The ratios to ``page`` (:func:`ratios_to_page`'s) of one launch's rows grouped by their
    copy distances: ``{"16": [...], "other": [...]}`` (``"16"``: a message's destination 16
    bytes past its source mod 4 KiB; the ``page`` rows themselves left out)."""
    med = {(r["bytes"], r["placement"], r["op"]): r["median_us"] for r in result["rows"]}
    out = {"16": [], "other": []}
    for r in result["rows"]:
        if r["placement"] != "page":
            key = "16" if 16 in r["distances"] else "other"
            out[key].append(slow_ratio(r["median_us"], med[(r["bytes"], "page", r["op"])]))
    return out


def op_ratio(result: dict, op: str = "allreduce", over: str = "exchange", placement: str = "page") -> dict:
    """Per length in bytes: one launch's median of ``op`` over its median of ``over``, both with
    ``placement``'s buffers.  Both are timed interleaved in the same loop, so the load of the
    moment divides out: what stays is the launch's own mode."""
    med = {(r["bytes"], r["placement"], r["op"]): r["median_us"] for r in result["rows"]}
    lengths = sorted({b for (b, name, o) in med if name == placement and o in (op, over)})
    if not lengths:
        raise ValueError(f"placement {placement!r} has no rows of {op!r} and {over!r}")
    return {b: slow_ratio(med[(b, placement, op)], med[(b, placement, over)]) for b in lengths}


def summarize(results: list[dict]) -> dict:
    """Per setting and placement: the median over launches of the ratio to ``page``, the mode
    (:func:`mode_of`) of each launch, and the page-aligned medians' spread between launches."""
    out = {}
    for setting in dict.fromkeys(r["setting"] for r in results if "rows" in r):
        ok = [r for r in results if r["setting"] == setting and "rows" in r]
        per = {}
        for name in dict.fromkeys(x["placement"] for r in ok for x in r["rows"]):
            ratios = [ratios_to_page(r)[name] for r in ok]
            per[name] = {"median_ratio_to_page": float(np.median(np.concatenate(ratios))),
                         "modes": [mode_of(x) for x in ratios]}
        page = {}
        for r in ok:
            for row in r["rows"]:
                if row["placement"] == "page":
                    page.setdefault(f"{row['op']} {row['bytes']}", []).append(row["median_us"])
        dist = {k: [x for r in ok for x in by_distance(r)[k]] for k in ("16", "other")}
        within = {}
        for r in ok:
            for nbytes, ratio in op_ratio(r).items():
                within.setdefault(str(nbytes), []).append(ratio)
        out[setting] = {"launches": len(ok), "placements": per,
                        "launch_modes": [r["launch_mode"]["mode"] for r in ok if "launch_mode" in r],
                        "allreduce_to_exchange": within,
                        "median_ratio_to_page_by_distance": {k: float(np.median(v)) if v else None
                                                             for k, v in dist.items()},
                        "page_spread_max_over_min": {k: max(v) / min(v) for k, v in page.items()}}
    return out


def verdict(summary: dict) -> str:
    """The last line: which placements are slow in which settings."""
    parts = []
    for setting, s in summary.items():
        slow = [f"{name} x{p['median_ratio_to_page']:.1f} ({p['modes'].count('slow')}/{len(p['modes'])} launches slow)"
                for name, p in s["placements"].items() if name != "page" and "slow" in p["modes"]]
        d = s["median_ratio_to_page_by_distance"]
        parts.append(f"{setting}: " + (", ".join(slow) if slow else "no placement slow")
                     + (f", copy distance 16 x{d['16']:.1f}" if d["16"] is not None else ""))
    spans = []
    for setting, s in summary.items():
        within = s.get("allreduce_to_exchange") or {}
        if within:
            longest = max(within, key=int)
            v = within[longest]
            modes = s.get("launch_modes") or []
            spans.append(f"{setting} {min(v):.1f}-{max(v):.1f}"
                         + (f" ({modes.count('slow')}/{len(modes)} slow)" if modes else ""))
    tail = (f" | Allreduce / exchange within a launch at {int(longest) // 1024} KiB (slow above {MODE_RATIO:g}): "
            + ", ".join(spans)) if spans else ""
    return "mode: " + "; ".join(parts) + tail


def table(results: list[dict]) -> list[str]:
    head = (f"{'#':>2} {'setting':<18} {'placement':<9} {'dist 0>1,1>0':>12} {'bytes':>8} "
            + " ".join(f"{op + ' µs':>12}" for op in OPS) + " | load")
    lines = [head, "-" * len(head)]
    for i, r in enumerate(results):
        if "rows" not in r:
            lines.append(f"{i:>2} {r['setting']:<18} ERROR {r['error']}")
            continue
        med = {(x["bytes"], x["placement"], x["op"]): x for x in r["rows"]}
        for nbytes in dict.fromkeys(x["bytes"] for x in r["rows"]):
            for name in dict.fromkeys(x["placement"] for x in r["rows"]):
                d = med[(nbytes, name, "pingpong")]["distances"]
                lines.append(f"{i:>2} {r['setting']:<18} {name:<9} {d[0]:>5},{d[1]:>5}  {nbytes:>8} "
                             + " ".join(f"{med[(nbytes, name, op)]['median_us']:12.1f}" for op in OPS)
                             + f" | {r['load_average_1min'][0]:.1f}")
    return lines


class Parser(OneLineParser):
    pass


def _lengths(parse):
    """argparse type: :func:`size_list_of`'s sizes, each a positive multiple of 8 bytes."""
    import argparse

    def check(text: str) -> list[int]:
        sizes = parse(text)
        if any(v <= 0 or v % 8 for v in sizes):
            raise argparse.ArgumentTypeError(f"lengths must be positive multiples of 8 bytes, got {text!r}")
        return sizes
    return check


def build_parser() -> Parser:
    from mpi_exercises.bench import arguments

    p = Parser(prog="launch_modes.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--json", metavar="FILE", default=str(ROOT / "results" / "launch_modes.json"),
                   help="write the results to FILE as JSON, atomically (default results/launch_modes.json)")
    p.add_argument("--launches", type=arguments.positive_int, default=2,
                   help="launches per setting (default 2; the settings are cycled)")
    p.add_argument("--settings", type=arguments.name_list(tuple(SETTINGS)), default=list(SETTINGS),
                   help="comma-separated subset of " + ",".join(SETTINGS) + " (default: all)")
    p.add_argument("--lengths", type=_lengths(arguments.size_list_of(1, 8, True)), default=list(LENGTHS),
                   help="comma-separated bytes per message, multiples of 8, suffix k/M allowed (default 64k,256k,1M)")
    p.add_argument("--iterations", type=arguments.positive_int, default=40, help="timed samples per case (default 40)")
    p.add_argument("--warmup", type=arguments.nonneg_int, default=3, help="untimed samples first (default 3)")
    p.add_argument("--inner", type=arguments.positive_int, default=4, help="back-to-back calls per sample (default 4)")
    p.add_argument("--timeout", type=arguments.positive_int, default=300, help="seconds a launch may take (default 300)")
    p.add_argument("--worker", action="store_true", help="(internal) one launch's measurement, under mpiexec -n 2")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.worker:
        return worker(args)
    if problem := output_problem(args.json):
        build_parser().error(f"--json: {problem}")
    from mpi_exercises.bench import placement as where
    from netmodels.outputs import write_json

    results = []
    for setting in settings_order(args.settings, args.launches):
        results.append(launch(setting, args))
        r = results[-1]
        print(f"launch {len(results) - 1} ({setting}): " + (r.get("error") or f"{r['seconds']:.1f} s, "
              f"load {r['load_average_1min'][0]:.1f}"), file=sys.stderr, flush=True)
    summary = summarize(results)
    lines = table(results) + [""]
    for setting, s in summary.items():
        lines.append(f"{setting} ({s['launches']} launches): median ratio to page-aligned: " + ", ".join(
            f"{n} x{p['median_ratio_to_page']:.2f}" for n, p in s["placements"].items() if n != "page")
            + "; page-aligned max/min between launches: " + ", ".join(
            f"{k} {v:.2f}" for k, v in s["page_spread_max_over_min"].items()))
    last = verdict(summary)
    print("\n".join(lines + [last]))
    write_json(args.json, {
        "command": "python benchmarks/launch_modes.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "parameters": {k: getattr(args, k) for k in ("launches", "settings", "lengths", "iterations", "warmup", "inner")},
        "settings": SETTINGS, "placements": PLACEMENTS, "slow_factor": SLOW_FACTOR,
        "cpu_model": probes.cpu_model(), "transparent_huge_pages": where.transparent_huge_pages(),
        "parent_glibc_tunables": os.environ.get("GLIBC_TUNABLES"),
        "timing_method": "median of samples, each --inner calls after one barrier / inner, slowest rank "
                         "(mpi_exercises.bench.timing.time_interleaved); pingpong: half the round trip",
        "launches": results, "summary": summary, "mode": last})
    return 0 if all("rows" in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
