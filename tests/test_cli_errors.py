"""Every command line refuses bad input with one line, a non-zero status and no rank left.

One table, :data:`CASES`, of ``(ranks, argv, message)``: the command ``python -m argv``
(``ranks`` = 0: started directly, as argparse errors never start MPI; else under
``mpiexec -n ranks``) must exit 2 within 10 s with exactly one line on stderr that holds
``message``.  Below it, the cases that need more than a command line: a ragged input on
one rank only, a result file on a full disk, Ctrl-C.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.mpirun import ROOT, mpiexec_path, run_mpi

MISSING = "/nonexistent-folder/out.json"

#: (ranks, argv after ``python -m``, a fragment of the one line on stderr)
CASES = [
    # ---------------------------------------------------------------- mpi_exercises
    (0, ["mpi_exercises"], "required: COMMAND"),
    (0, ["mpi_exercises", "nonesuch"], "invalid choice"),
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
    (0, ["mpi_exercises", "pingpong", "--sizes", "-3"], "integers >= 0"),
    (0, ["mpi_exercises", "pingpong", "--sizes", "abc"], "integers >= 0"),
    (0, ["mpi_exercises", "pingpong", "--sizes", "1000000000000"], "int32"),
    (0, ["mpi_exercises", "pingpong", "--sizes", "100000000M"], "int32"),
    (0, ["mpi_exercises", "pingpong", "--iterations", "0"], "integer >= 1"),
    (0, ["mpi_exercises", "pingpong", "--warmup", "-1"], "integer >= 0"),
    (0, ["mpi_exercises", "pingpong", "--no-such-option"], "unrecognized arguments"),
    (0, ["mpi_exercises", "pingpong", "--json", MISSING], "does not exist"),
    (0, ["mpi_exercises", "pingpong", "--json", "/tmp"], "is a folder"),
    (0, ["mpi_exercises", "predict", "--collectives", "nope"], "subset of"),
    (0, ["mpi_exercises", "predict", "--sizes", "x"], "integers >= 0"),
    (0, ["mpi_exercises", "predict", "--json", MISSING], "does not exist"),
    (0, ["mpi_exercises", "info", "--json", MISSING], "does not exist"),
    (0, ["mpi_exercises", "info", "--bogus"], "unrecognized arguments"),
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
]


def _run(ranks: int, argv: list[str], **kw) -> subprocess.CompletedProcess:
    if ranks == 0:
        return subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, cwd=ROOT,
                              timeout=10, **kw)
    return run_mpi(ranks, ["-m", *argv], timeout=10)


@pytest.mark.parametrize("ranks, argv, message", CASES, ids=[" ".join(c[1][:3]) + f"-n{c[0]}" for c in CASES])
def test_bad_input_is_one_line_and_exit_2(ranks, argv, message):
    start = time.monotonic()
    res = _run(ranks, argv)
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert res.returncode == 2, res.stderr
    assert len(lines) == 1 and message in lines[0], res.stderr
    assert time.monotonic() - start < 10
    assert res.stdout == ""


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


@pytest.mark.mpi
@pytest.mark.skipif(os.geteuid() != 0, reason="a full disk is made with a private tmpfs, which needs root")
@pytest.mark.parametrize("argv", [
    ["netmodels", "simulate", "allreduce.ring", "-P", "64", "--model", "logp"],
    ["mpi_exercises", "info"],
    ["mpi_exercises", "bench-allreduce", "--sizes", "1", "--algorithms", "ring", "--iterations", "5",
     "--warmup", "1", "--no-progress"],
])
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
    lines = [line for line in res.stderr.splitlines() if "error" in line]
    assert f"cannot write {out} (No space left on device)" in lines[0] and "Traceback" not in res.stderr
    assert report["FILE"] == good
    assert report["LIST"].split() == ["filler", "result.json"]       # no temporary file left


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
    proc = subprocess.Popen([mpiexec_path(), "-n", "2", sys.executable, "-m", "mpi_exercises", *command,
                             *quiet, "--json", str(out)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    time.sleep(2)
    assert proc.poll() is None, "the command ended before Ctrl-C: make it longer"
    proc.send_signal(signal.SIGINT)
    start = time.monotonic()
    try:
        proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail(f"{command[0]} still running 10 s after Ctrl-C")
    assert time.monotonic() - start < 10
    assert proc.returncode != 0
    assert json.loads(out.read_text()) == {"a": "good result"}
    left = subprocess.run(["pgrep", "-f", f"mpi_exercises {command[0]}.*{out}"], capture_output=True, text=True)
    assert left.stdout.strip() == "", f"ranks left behind: {left.stdout}"
