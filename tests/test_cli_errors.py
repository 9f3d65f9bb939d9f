"""Every command line refuses bad input with one line, a non-zero status and no rank left.

One table, :data:`CASES`, of ``(ranks, argv, message)``: the command ``python -m argv``
(``ranks`` = 0: started directly, as argparse errors never start MPI; else under
``mpiexec -n ranks``) must exit 2 within 10 s with exactly one line on stderr that holds
``message``.  The first row of each command started directly runs a new interpreter (its
status, its one line, no traceback); the others ask, in this process, the function that
decides that line (``mpi_exercises.__main__.check``, which ``main`` prints before it returns
2, and which starts no MPI).  Below it, the cases that need more than a command line: a ragged
input on one rank only, a result file on a full disk, Ctrl-C.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from tests.forked import first_of_each
from mpi_exercises.interrupt import SHARED_MEMORY
from tests.mpirun import ROOT, interrupt_job, mpiexec_path, run_mpi

MISSING = "/nonexistent-folder/out.json"

#: (ranks, argv after ``python -m``, a fragment of the one line on stderr)
CASES = [
    # ---------------------------------------------------------------- mpi_exercises
    (0, ["mpi_exercises"], "required: COMMAND"),
    (0, ["mpi_exercises", "nonesuch"], "invalid choice"),
    (0, ["mpi_exercises.bench.coherence", "--samples", "0"], "argument --samples: expected an integer >= 1"),
    (0, ["mpi_exercises.bench.coherence"], "run it on 2 ranks: mpiexec -n 2"),
    (0, ["mpi_exercises", "allreduce", "--algorithm", "bogus"], "invalid choice"),
    (0, ["mpi_exercises", "allreduce", "-N", "-1"], "integer >= 0"),
    (0, ["mpi_exercises", "allreduce", "-N", "100000000000000"], "int32"),
    (0, ["mpi_exercises", "allreduce", "-N", "1e12"], "integer >= 0"),
    (0, ["mpi_exercises", "allreduce", "--block", "0"], "integer >= 1"),
    (0, ["mpi_exercises", "allreduce", "--mesh", "4by2"], "--mesh"),
    (0, ["mpi_exercises", "allreduce", "--op", "xor"], "invalid choice"),
    (0, ["mpi_exercises", "allreduce", "--json", MISSING], "does not exist"),
    (0, ["mpi_exercises", "bench-allreduce", "--algorithms", "snake,nope"], "subset of"),
    (0, ["mpi_exercises", "bench-allreduce", "--sizes", "x"], "integers >= 0"),
    (0, ["mpi_exercises", "bench-allreduce", "--sizes", "100000000M"], "int32"),
    (0, ["mpi_exercises", "bench-allreduce", "--modes", "fast"], "subset of"),
    (0, ["mpi_exercises", "bench-allreduce", "--json", "/tmp"], "is a folder"),
    (0, ["mpi_exercises", "allgather", "--algorithm", "bogus"], "invalid choice"),
    (0, ["mpi_exercises", "allgather", "--k", "0"], "integer >= 1"),
    (0, ["mpi_exercises", "allgather", "-N", "-1"], "integer >= 0"),
    (0, ["mpi_exercises", "allgather", "-N", "2000000000"], "of memory"),
    (0, ["mpi_exercises", "allgather", "--json", MISSING], "does not exist"),
    (0, ["mpi_exercises", "bench-allgather", "--algorithms", "ring,nope"], "subset of"),
    (0, ["mpi_exercises", "bench-allgather", "--modes", "fast"], "subset of"),
    (0, ["mpi_exercises", "bench-allgather", "--json", MISSING], "does not exist"),
    (0, ["mpi_exercises", "alltoall", "--ppn", "0"], "--ppn"),
    (0, ["mpi_exercises", "alltoall", "--ppn", "2,x"], "--ppn"),
    (0, ["mpi_exercises", "alltoall", "--inter-delay", "-1"], "--inter-delay"),
    (0, ["mpi_exercises", "alltoall", "--algorithm", "ring"], "invalid choice"),
    (0, ["mpi_exercises", "alltoall", "--json", MISSING], "does not exist"),
    (0, ["mpi_exercises", "bench-alltoall", "--sizes", "x"], "integers >= 0"),
    (0, ["mpi_exercises", "bench-alltoall", "--inter-delay", "nan"], "--inter-delay"),
    (0, ["mpi_exercises", "bench-alltoall", "--json", MISSING], "does not exist"),
    (0, ["mpi_exercises", "barrier-bench", "--algorithms", "nope"], "subset of"),
    (0, ["mpi_exercises", "barrier-bench", "--fan-in", "1"], "integer >= 2"),
    (0, ["mpi_exercises", "barrier-bench", "--repetitions", "0"], "integer >= 1"),
    (0, ["mpi_exercises", "barrier-bench", "--inner", "x"], "integer >= 1"),
    (0, ["mpi_exercises", "barrier-bench", "--bogus"], "unrecognized arguments: --bogus"),
    (0, ["mpi_exercises", "barrier-bench", "--json", MISSING], "does not exist"),
    (0, ["mpi_exercises", "logp", "--n", "1"], "integer >= 2"),
    (0, ["mpi_exercises", "logp", "--sizes", "-1"], "integers >= 0"),
    (0, ["mpi_exercises", "logp", "--repetitions", "0"], "integer >= 1"),
    (0, ["mpi_exercises", "logp", "--bogus"], "unrecognized arguments"),
    (0, ["mpi_exercises", "logp", "--json", MISSING], "does not exist"),
    (0, ["mpi_exercises", "bsp", "--h", "-3"], "integers >= 0"),
    (0, ["mpi_exercises", "bsp", "--h", "x"], "integers >= 0"),
    (0, ["mpi_exercises", "bsp", "--h", "1,2,100000000M"], "int32"),
    (0, ["mpi_exercises", "bsp", "--unit", "bytes"], "invalid choice"),
    (0, ["mpi_exercises", "bsp", "--repetitions", "0"], "integer >= 1"),
    (0, ["mpi_exercises", "bsp", "--warmup", "-1"], "integer >= 0"),
    (0, ["mpi_exercises", "bsp", "--no-such-option"], "unrecognized arguments"),
    (0, ["mpi_exercises", "bsp", "--json", MISSING], "does not exist"),
    (0, ["mpi_exercises", "lop", "--repetitions", "0"], "integer >= 1"),
    (0, ["mpi_exercises", "lop", "--warmup", "-1"], "integer >= 0"),
    (0, ["mpi_exercises", "lop", "--n-max", "x"], "integer >= 1"),
    (0, ["mpi_exercises", "lop", "--bogus"], "unrecognized arguments"),
    (0, ["mpi_exercises", "lop", "--json", MISSING], "does not exist"),
    (0, ["mpi_exercises", "nbl-testjig", "--sizes", "60"], "at least 2 distinct"),
    (0, ["mpi_exercises", "nbl-testjig", "--sizes", "0,60"], "at least 2 distinct"),
    (0, ["mpi_exercises", "nbl-testjig", "--sizes", "x"], "integers >= 0"),
    (0, ["mpi_exercises", "nbl-testjig", "--sizes", "60,1000000000"], "of memory"),
    (0, ["mpi_exercises", "nbl-testjig", "--repetitions", "0"], "integer >= 1"),
    (0, ["mpi_exercises", "nbl-testjig", "--statistic", "mean"], "invalid choice"),
    (0, ["mpi_exercises", "nbl-testjig", "--wait", "sleep"], "invalid choice"),
    (0, ["mpi_exercises", "nbl-testjig", "--bogus"], "unrecognized arguments"),
    (0, ["mpi_exercises", "nbl-testjig", "--json", MISSING], "does not exist"),
    (0, ["mpi_exercises", "timeline"], "required: ALGORITHM"),
    (0, ["mpi_exercises", "timeline", "allreduce.nope"], "ALGORITHM"),
    (0, ["mpi_exercises", "timeline", "allreduce.ring", "-N", "-1"], "integer >= 0"),
    (0, ["mpi_exercises", "timeline", "allreduce.ring", "-N", "100000000000000"], "int32"),
    (0, ["mpi_exercises", "timeline", "allreduce.ring", "--model", "nope"], "invalid choice"),
    (0, ["mpi_exercises", "timeline", "allreduce.ring", "--repeat", "0"], "integer >= 1"),
    (0, ["mpi_exercises", "timeline", "allreduce.ring", "--warmup", "-1"], "integer >= 0"),
    (0, ["mpi_exercises", "timeline", "allreduce.ring", "--json", MISSING], "does not exist"),
    (0, ["mpi_exercises", "timeline", "allreduce.ring", "--png", MISSING], "--png"),
    (0, ["mpi_exercises", "timeline", "allreduce.ring", "--html", "/tmp"], "is a folder"),
    (0, ["mpi_exercises", "timeline", "allreduce.ring", "--png", "a.png", "--html", "a.html"], "not allowed with"),
    (2, ["mpi_exercises", "timeline", "allreduce.ring", "--png", MISSING], "does not exist"),
    (0, ["mpi_exercises", "exchange", "--sizes", "abc"], "integers >= 0"),
    (0, ["mpi_exercises", "exchange", "--json", MISSING], "does not exist"),
    (0, ["mpi_exercises", "pingpong", "--sizes", "-3"], "integers >= 0"),
    (0, ["mpi_exercises", "pingpong", "--sizes", "abc"], "integers >= 0"),
    (0, ["mpi_exercises", "pingpong", "--sizes", "1000000000000"], "int32"),
    (0, ["mpi_exercises", "pingpong", "--sizes", "100000000M"], "int32"),
    (0, ["mpi_exercises", "pingpong", "--iterations", "0"], "integer >= 1"),
    (0, ["mpi_exercises", "pingpong", "--warmup", "-1"], "integer >= 0"),
    (0, ["mpi_exercises", "pingpong", "--target", "1"], "a fraction in [0, 1)"),
    (0, ["mpi_exercises", "pingpong", "--target", "nan"], "a fraction in [0, 1)"),
    (0, ["mpi_exercises", "pingpong", "--time-budget", "-1"], "seconds in [0, inf)"),
    (0, ["mpi_exercises", "logp", "--time-budget", "inf"], "seconds in [0, inf)"),
    (0, ["mpi_exercises", "bsp", "--rounds", "0"], "integer >= 1"),
    (0, ["mpi_exercises", "barrier-bench", "--seed", "-1"], "integer >= 0"),
    (0, ["mpi_exercises", "bench-allreduce", "--inner", "0"], "integer >= 1"),
    (0, ["mpi_exercises", "pingpong", "--no-such-option"], "unrecognized arguments"),
    (0, ["mpi_exercises", "pingpong", "--json", MISSING], "does not exist"),
    (0, ["mpi_exercises", "pingpong", "--json", "/tmp"], "is a folder"),
    (0, ["mpi_exercises", "pingpong", "--json", "/proc/out.json"], "no file can be created in /proc"),
    (0, ["mpi_exercises", "predict", "--collectives", "nope"], "subset of"),
    (0, ["mpi_exercises", "predict", "--sizes", "x"], "integers >= 0"),
    (0, ["mpi_exercises", "predict", "--json", MISSING], "does not exist"),
    (0, ["mpi_exercises", "software-cost", "--steps", "0,1"], "at least two distinct step counts in 1..4096"),
    (0, ["mpi_exercises", "software-cost", "--sizes", "x"], "--sizes"),
    (0, ["mpi_exercises", "software-cost", "--json", MISSING], "does not exist"),
    (0, ["mpi_exercises", "info", "--json", MISSING], "does not exist"),
    (0, ["mpi_exercises", "info", "--bogus"], "unrecognized arguments"),
    # numbers of timed calls: float64 samples on every rank, reduced in one MPI call
    (0, ["mpi_exercises", "pingpong", "--iterations", "2000000000"], "of memory"),
    (0, ["mpi_exercises", "barrier-bench", "--repetitions", "2000000000"], "of memory"),
    (0, ["mpi_exercises", "allreduce", "--repeat", "100000000000"], "int32"),
    (0, ["mpi_exercises", "bench-alltoall", "--iterations", "2000000000"], "of memory"),
    (0, ["mpi_exercises", "logp", "--repetitions", "2000000000"], "of memory"),
    (0, ["mpi_exercises", "bsp", "--repetitions", "2000000000"], "of memory"),
    (0, ["mpi_exercises", "lop", "--barrier-repetitions", "2000000000"], "of memory"),
    (0, ["mpi_exercises", "nbl-testjig", "--repetitions", "2000000000"], "of memory"),
    (0, ["mpi_exercises", "predict", "--calibration-repetitions", "100000000000"], "int32"),
    # commands that need more ranks than they got: one line from rank 0
    (1, ["mpi_exercises", "pingpong", "--no-progress"], "at least 2 ranks"),
    (1, ["mpi_exercises", "logp", "--no-progress"], "at least 2 ranks"),
    (1, ["mpi_exercises", "bsp", "--no-progress"], "at least 2 ranks"),
    (1, ["mpi_exercises", "lop", "--no-progress"], "lop needs at least 2 ranks: mpiexec -n 8"),
    (1, ["mpi_exercises", "nbl-testjig", "--no-progress"], "at least 2 ranks"),
    (1, ["mpi_exercises", "predict", "--no-progress"], "at least 2 ranks"),
    # under a launcher, an argument error is still one line (rank 0 prints it)
    (2, ["mpi_exercises", "pingpong", "--sizes", "1000000000000"], "int32"),
    (2, ["mpi_exercises", "bench-allreduce", "--json", MISSING], "does not exist"),
    # ranks that disagree (here the launcher gives rank 1 other arguments; on a cluster, nodes
    # with less memory): every rank stops, and the line names the rank that refused
    (1, ["mpi_exercises", "pingpong", "--no-progress", ":", "-n", "1", sys.executable, "-m", "mpi_exercises",
         "pingpong", "--sizes", "1000000000000"], "error on rank 1: argument --sizes: 1000000000000 is above"),
    # arguments that only the number of ranks makes wrong, checked on every rank after MPI starts
    (2, ["mpi_exercises", "allreduce", "--algorithm", "fence", "--mesh", "3x1", "-N", "10"], "W*H must equal 2"),
    (2, ["mpi_exercises", "allreduce", "-N", "5", "--dtype", "complex128", "--op", "min"],
     "MAX and MIN for real types only"),
    (2, ["mpi_exercises", "allgather", "--algorithm", "k-shift", "--k", "1", "-N", "4"], "k of k-shift must be even"),
    (2, ["mpi_exercises", "allgather", "--algorithm", "k-prefix", "--k", "3", "-N", "4"], "1 <= k <= nprocs = 2"),
    (2, ["mpi_exercises", "allgather", "--algorithm", "ring", "--k", "1", "-N", "4"], "'k' is an option of"),
    (2, ["mpi_exercises", "bench-allgather", "--algorithms", "k-shift", "--k", "1", "--no-progress"],
     "k of k-shift must be even"),
    (0, ["mpi_exercises", "bench-alltoall", "--ppn", "0"], "--ppn"),
    (2, ["mpi_exercises", "bsp", "--h", "0,8", "--no-progress"], "at least 3 distinct h"),
]


#: the shortest run of a bench- command (``--target 0``: no rounds added to narrow the intervals)
QUICK_BENCH = ["--sizes", "1", "--modes", "default", "--iterations", "1", "--warmup", "0", "--target", "0",
               "--no-progress"]


def _run(ranks: int, argv: list[str]) -> subprocess.CompletedProcess:
    """``python -m argv`` in a new interpreter (``ranks`` = 0), or under ``mpiexec -n ranks``."""
    if ranks == 0:
        return subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, cwd=ROOT, timeout=10)
    return run_mpi(ranks, ["-m", *argv], timeout=10)


#: the first row of each command started directly runs a new interpreter, the others ask
#: ``check`` in this process (the module docstring): without 0.15 s of start-up, or 0.05 s of
#: a fork, each
FRESH = first_of_each([tuple(c[1][:2]) if c[0] == 0 else None for c in CASES])


@pytest.mark.parametrize("ranks, argv, message, fresh", [   # the rows under mpiexec are marked mpi
    pytest.param(*c, i in FRESH, id=" ".join(c[1][:3]) + f"-n{c[0]}", marks=pytest.mark.mpi if c[0] else ())
    for i, c in enumerate(CASES)])
def test_bad_input_is_one_line_and_exit_2(ranks, argv, message, fresh, capsys):
    start = time.monotonic()
    if ranks == 0 and not fresh:
        from mpi_exercises.__main__ import check

        had_mpi = "mpi4py.MPI" in sys.modules
        _, problem = check(argv[1:])
        assert problem is not None and "\n" not in problem and message in problem, problem
        assert capsys.readouterr() == ("", "")                # check prints nothing: main prints the line
        assert had_mpi or "mpi4py.MPI" not in sys.modules     # nor starts MPI
        assert time.monotonic() - start < 10
        return
    res = _run(ranks, argv)
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert res.returncode == 2, res.stderr
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in res.stderr, res.stderr
    assert time.monotonic() - start < 10
    assert res.stdout == ""


#: (ranks, argv after ``python -m``, a fragment of the warning): fewer ranks than a command
#: wants, where fewer still makes sense: it runs (exit 0) after one WARNING line naming the
#: ranks it wants
FEW_RANKS = [
    (1, ["mpi_exercises", "allreduce", "-N", "4", "--repeat", "1", "--warmup", "0"],
     "allreduce on 1 rank: no message is sent"),
    (1, ["mpi_exercises", "allgather", "-N", "4", "--repeat", "1", "--warmup", "0"],
     "allgather on 1 rank: no message is sent"),
    (1, ["mpi_exercises", "alltoall", "-N", "4", "--repeat", "1", "--warmup", "0"],
     "alltoall on 1 rank: no message is sent"),
    (1, ["mpi_exercises", "bench-allreduce", *QUICK_BENCH, "--algorithms", "ring"], "run it on at least 2"),
    (1, ["mpi_exercises", "bench-allgather", *QUICK_BENCH, "--algorithms", "ring"], "run it on at least 2"),
    (1, ["mpi_exercises", "bench-alltoall", *QUICK_BENCH, "--algorithms", "direct"], "run it on at least 2"),
    (1, ["mpi_exercises", "barrier-bench", "--algorithms", "dissemination", "--repetitions", "1", "--warmup", "0",
         "--inner", "1", "--target", "0", "--no-progress"], "barrier-bench on 1 rank: no message is sent"),
    (2, ["mpi_exercises", "nbl-testjig", "--sizes", "1,10", "--repetitions", "1", "--warmup", "0", "--inner", "1",
         "--target", "0", "--no-progress"], "nbl-testjig on 2 ranks: f(4) needs 3 ranks and f(6) 4"),
    (2, ["mpi_exercises", "lop", "--n-max", "1", "--repetitions", "2", "--warmup", "0", "--barrier-repetitions", "1",
         "--inner", "1", "--target", "0", "--no-progress"], "lop on 2 ranks: fewer than 4 peer counts p"),
]


@pytest.mark.mpi
@pytest.mark.parametrize("ranks, argv, message", FEW_RANKS, ids=[f"{c[1][1]}-n{c[0]}" for c in FEW_RANKS])
def test_fewer_ranks_than_wanted_is_one_warning(ranks, argv, message):
    start = time.monotonic()
    res = _run(ranks, argv)
    assert res.returncode == 0, res.stderr
    warnings = [line for line in res.stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1 and message in warnings[0], res.stderr
    assert time.monotonic() - start < 10


@pytest.mark.mpi
def test_help_under_mpiexec_is_printed_once():
    res = _run(2, ["mpi_exercises", "allreduce", "--help"])
    assert res.returncode == 0 and res.stdout.count("usage: python -m mpi_exercises allreduce") == 1, res.stdout


def test_help_explains_every_option():
    """Every option of every command has a help text that says more than its default."""
    import argparse
    import re

    from mpi_exercises.__main__ import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    unexplained = []
    for name, sub in commands.items():
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            text = re.sub(r"\(?default[^)]*\)?", "", action.help or "")
            if action.help == argparse.SUPPRESS or len(re.findall(r"[A-Za-z]{2,}", text)) < 3:
                unexplained.append(f"{name} {'/'.join(action.option_strings)}: {action.help!r}")
    assert unexplained == []


def test_a_command_line_imports_only_its_own_command():
    """Each rank builds the parser: for ``pingpong ...`` only pingpong's module is imported,
    and its options are those of the full parser's ``pingpong``."""
    code = """
import sys
from mpi_exercises.__main__ import COMMANDS, build_parser
args = build_parser(["pingpong", "--sizes", "0,8"]).parse_args(["pingpong", "--sizes", "0,8"])
own = COMMANDS["pingpong"][0]
others = [m.partition(":")[0] for n, (m, _) in COMMANDS.items() if m.partition(":")[0] != own]
print(own in sys.modules, [m for m in others if m in sys.modules], args.sizes)
full = build_parser(); print(sorted(vars(full.parse_args(["pingpong", "--sizes", "0,8"]))) == sorted(vars(args)))
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split("\n")[:2] == ["True [] [0, 8]", "True"], res.stdout

def test_every_command_has_a_row():
    """(``python -m netmodels``'s rows are the table of tests/test_netmodels_cli_errors.py.)"""
    from mpi_exercises.__main__ import COMMANDS

    covered = {(c[1][0], c[1][1]) for c in CASES if len(c[1]) > 1}
    assert {("mpi_exercises", n) for n in COMMANDS} - covered == set()


RAGGED = """
from mpi4py import MPI
from mpi_exercises import allgather, allreduce, alltoall
comm = MPI.COMM_WORLD
x = [[1.0, 2.0], [3.0]] if comm.rank == 1 else [[1.0, 2.0], [3.0, 4.0]]
seen = []
for door in (allreduce, allgather, alltoall):
    try:
        door(comm, x)
        seen.append(f"{comm.rank} {door.__name__} accepted")
    except ValueError as exc:
        seen.append(f"{comm.rank} {door.__name__} ValueError {'rank 1' in str(exc) or comm.rank == 1}")
everyone = comm.gather(seen, root=0)       # one print, from rank 0: no interleaved lines
if comm.rank == 0:
    print(chr(10).join(line for lines in everyone for line in lines), flush=True)
"""


@pytest.mark.mpi
def test_a_ragged_input_on_one_rank_raises_on_every_rank():
    res = run_mpi(2, ["-c", RAGGED], timeout=20)
    assert res.returncode == 0, res.stderr
    lines = sorted(res.stdout.split("\n")[:-1])
    assert lines == sorted(f"{r} {d} ValueError True" for r in (0, 1) for d in ("allreduce", "allgather", "alltoall"))


#: run "$@" with folder $D on a 64 KiB tmpfs holding the good result $GOOD and a filler that
#: takes the rest (a private mount namespace: nothing outside sees it), then report
FULL_DISK = r"""
mount -t tmpfs -o size=64k kit-full-disk "$D" && printf '%s' "$GOOD" > "$D/result.json" || exit 99
dd if=/dev/zero of="$D/filler" bs=1k 2>/dev/null
"$@"; echo "@@STATUS $?"; echo "@@FILE $(cat "$D/result.json")"; echo "@@LIST $(ls -A "$D" | tr '\n' ' ')"
"""


#: commands whose result file a full disk must leave whole
WRITERS = [
    ["netmodels", "simulate", "allreduce.ring", "-P", "64", "--model", "logp"],
    ["mpi_exercises", "info"],
    ["mpi_exercises", "bench-allreduce", "--sizes", "1", "--algorithms", "ring", "--iterations", "5",
     "--warmup", "1", "--target", "0", "--no-progress"],
]


@pytest.mark.mpi
@pytest.mark.skipif(os.geteuid() != 0, reason="a full disk is made with a private tmpfs, which needs root")
@pytest.mark.parametrize("argv", WRITERS, ids=lambda a: a[1])
def test_a_full_disk_leaves_the_existing_result_whole(tmp_path, argv):
    good = json.dumps({"a": "good result"})
    out = tmp_path / "result.json"
    cmd = [sys.executable, "-m", *argv, "--json", str(out)]
    if argv[0] == "mpi_exercises":
        cmd = [mpiexec_path(), "-n", "1" if argv[1] == "info" else "2", *cmd]
    env = {**os.environ, "D": str(tmp_path), "GOOD": good, "PYTHONPATH": str(ROOT)}
    res = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", FULL_DISK, "sh", *cmd],
                         capture_output=True, text=True, cwd=ROOT, timeout=60, env=env)
    report = dict(line[2:].split(" ", 1) for line in res.stdout.splitlines() if line.startswith("@@"))
    assert report.get("STATUS") not in (None, "0"), res.stdout + res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and f"cannot write {out} (No space left on device)" in lines[0], res.stdout + res.stderr
    assert "Abort" not in res.stdout + res.stderr             # one message: no line of MPI's own after it
    assert report["FILE"] == good
    assert report["LIST"].split() == ["filler", "result.json"]       # no temporary file left


#: ``python -c LIMITED_WRITE MODULE ARGS``: ``python -m MODULE ARGS`` whose result files may
#: hold at most 512 bytes from the moment it writes one (``ulimit -f``; Python ignores
#: SIGXFSZ, so the write fails with EFBIG, "File too large").  Not a limit from the start
#: (``preexec_fn``): MPI's shared-memory files are bound by it too, and MPI_Init would fail.
LIMITED_WRITE = """
import resource, runpy, sys
import netmodels.outputs as outputs
real = outputs.write_text
def limited(path, text):
    resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))
    real(path, text)
outputs.write_text = limited
module = sys.argv.pop(1)
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


@pytest.mark.mpi
@pytest.mark.parametrize("argv", WRITERS, ids=lambda a: a[1])
def test_a_file_size_limit_leaves_the_existing_result_whole(tmp_path, argv):
    """A full disk without root: the result (longer than 512 bytes) cannot be written."""
    good = json.dumps({"a": "good result"})
    out = tmp_path / "result.json"
    out.write_text(good)
    cmd = [sys.executable, "-c", LIMITED_WRITE, *argv, "--json", str(out)]
    if argv[0] == "mpi_exercises":
        cmd = [mpiexec_path(), "-n", "1" if argv[1] == "info" else "2", *cmd]
    start = time.monotonic()
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=30,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert res.returncode != 0, res.stdout + res.stderr
    assert time.monotonic() - start < 10
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and f"cannot write {out} (File too large)" in lines[0], res.stderr
    assert "Abort" not in res.stdout + res.stderr             # one message: no line of MPI's own after it
    assert out.read_text() == good
    assert sorted(f.name for f in tmp_path.iterdir()) == ["result.json"]       # no temporary file left


ONE_RANK_FAILS = """
import sys
from mpi4py import MPI
from mpi_exercises.__main__ import build_parser, run_guarded
from mpi_exercises.interrupt import SHARED_MEMORY

def run(args):
    with open("/proc/self/maps") as f:   # the job's shared memory, which the abort must remove
        print(*sorted({l.split()[-1] for l in f if SHARED_MEMORY in l}), sep="\\n", flush=True)
    MPI.COMM_WORLD.Barrier()
    if MPI.COMM_WORLD.Get_rank() == 1:
        raise RuntimeError("something went wrong on rank 1")
    MPI.COMM_WORLD.Barrier()          # rank 0 would wait here for ever
    return 0

args = build_parser().parse_args(["info"])
sys.exit(run_guarded(run, args))
"""


@pytest.mark.mpi
def test_an_exception_on_one_rank_ends_every_rank():
    start = time.monotonic()
    res = run_mpi(2, ["-c", ONE_RANK_FAILS], timeout=10)
    assert res.returncode != 0
    assert "RuntimeError: something went wrong on rank 1" in res.stderr
    assert "rank 1 failed: aborting every rank" in res.stderr
    assert time.monotonic() - start < 10
    shared = {line for line in res.stdout.splitlines() if line.startswith(SHARED_MEMORY)}
    assert not [path for path in shared if os.path.exists(path)], shared   # in memory until a restart


@pytest.mark.mpi
@pytest.mark.parametrize("command", [
    ["bench-allreduce", "--iterations", "1000000", "--sizes", "1,1k"],
    ["bench-allgather", "--iterations", "1000000", "--sizes", "1,1k"],
    ["bench-alltoall", "--iterations", "1000000", "--sizes", "1,1k"],
    ["allreduce", "--repeat", "10000000"],
    ["allgather", "--repeat", "10000000"],
    ["alltoall", "--repeat", "10000000"],
    ["pingpong", "--iterations", "1000000"],
    ["barrier-bench", "--repetitions", "1000000"],
    ["logp", "--repetitions", "1000000"],
    ["nbl-testjig", "--repetitions", "1000000", "--allow-oversubscribed"],
    ["bsp", "--repetitions", "1000000"],
    ["lop", "--repetitions", "1000000"],
    ["predict", "--iterations", "1000000"],
], ids=lambda c: c[0])
def test_ctrl_c_ends_every_rank_within_10_s(tmp_path, command):
    out = tmp_path / "result.json"
    out.write_text(json.dumps({"a": "good result"}))
    quiet = [] if command[0] in ("allreduce", "allgather", "alltoall") else ["--no-progress"]
    res, took = interrupt_job([mpiexec_path(), "-n", "2", sys.executable, "-m", "mpi_exercises", *command, *quiet,
                               "--json", str(out)], 0.2, ranks=2, group=False)   # the launcher forwards it
    stdout, stderr = res.stdout, res.stderr
    assert took < 10
    assert res.returncode == 130, stderr
    said = [line for line in stderr.splitlines() if not line.startswith("WARNING")]   # a few ranks: warned at start
    assert said == [f"python -m mpi_exercises {command[0]}: interrupted (Ctrl-C); nothing was written: "
                    f"{out} was left as it was"], stderr
    assert "BAD TERMINATION" not in stdout
    assert json.loads(out.read_text()) == {"a": "good result"}
    left = subprocess.run(["pgrep", "-f", f"mpi_exercises {command[0]}.*{out}"], capture_output=True, text=True)
    assert left.stdout.strip() == "", f"ranks left behind: {left.stdout}"
