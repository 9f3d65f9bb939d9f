"""``python -m netmodels`` and the ``benchmarks/*.py`` scripts refuse bad input with one line.

One table, :data:`CASES`, of ``(argv, fragment, status)``: ``python -m netmodels ...`` (argv
starting with ``netmodels``) or ``python benchmarks/SCRIPT ...`` must end within 10 s with
``status``, exactly one line on stderr holding ``fragment``, and no result.  Paths in argv
may name the places the fixture makes: ``{DIR}`` a writable folder, ``{FILE}`` an ordinary
file, ``{RO}`` a read-only folder and ``{ROFILE}`` a read-only file.  As root, permission
bits stop nothing (``os.access`` says writable, and writing works), so there the read-only
places are made immutable with ``chattr +i``, which stops root too; where the file system
has no such attribute those rows are skipped, saying so.  ``FSIZE`` rows run under a
file-size limit (``ulimit -f``), which stops a write at the end the way a full disk does.

The estimate behind the size refusals is tested in tests/test_simulate_budget.py; ``--force``
there too.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time

import pytest

from tests.forked import first_of_each, run_module, run_script
from tests.mpirun import ROOT

MISSING = "/nonexistent-folder/out.json"
SIM = ["netmodels", "simulate"]
RING = [*SIM, "allreduce.ring", "-P", "4", "--model", "logp"]
TIMELINE = ["netmodels", "timeline", "allreduce.ring", "-P", "4", "--model", "logp"]
#: the size limit of rows marked so, bytes (a result file is larger)
FSIZE = 64
#: the benchmarks scripts with a --json option (run_pingpong_c.py creates missing folders)
SCRIPTS = ["compare_loggopsim.py", "desync_experiment.py", "scale_sweep.py", "simulate_scale.py",
           "validate_loggopsim.py", "collectives_vs_mpi.py", "launch_modes.py", "budget_accuracy.py",
           "exchange_after_work.py", "cache_state.py", "loggp_refit.py", "prtt_calibration_time.py",
           "door_cost.py", "walk_speed.py", "fresh_data.py", "coherence.py", "predict_rounds.py"]

#: (argv after ``python -m`` or ``python``, a fragment of the one line on stderr, exit status)
CASES = [
    # ---------------------------------------------------------------- the command and its arguments
    (["netmodels"], "required: COMMAND", 2),
    (["netmodels", "nonesuch"], "invalid choice: 'nonesuch'", 2),
    ([*SIM, "allreduce.ring", "--model", "logp"], "required: -P/--ranks", 2),
    ([*SIM, "allreduce.ring", "-P", "4"], "required: --model", 2),
    ([*SIM, "allreduce.ring", "-P", "0", "--model", "logp"], "integer >= 1", 2),
    ([*SIM, "allreduce.ring", "-P", "x", "--model", "logp"], "integer >= 1", 2),
    ([*SIM, "allreduce.ring", "-P", "2^x", "--model", "logp"], "a power such as 2^20", 2),
    ([*SIM, "allreduce.ring", "-P", "2^-1", "--model", "logp"], "a power such as 2^20", 2),
    ([*SIM, "allreduce.ring", "-P", "1e6", "--model", "logp"], "a power such as 2^20", 2),
    ([*SIM, "nonesuch", "-P", "4", "--model", "logp"], "must be one of", 2),
    ([*SIM, "binomial", "-P", "4", "--model", "logp"], "ambiguous", 2),
    ([*SIM, "allreduce.ring", "-P", "4", "--model", "lop"], "invalid choice", 2),        # curves, not numbers
    ([*SIM, "allreduce.ring", "-P", "4", "--model", "alphabeta"], "invalid choice", 2),  # one spelling: alpha-beta
    ([*RING, "--semantics", "exact"], "invalid choice: 'exact'", 2),
    ([*RING, "--param", "q=1"], "no parameter 'q'", 2),
    ([*RING, "--param", "g=-1"], ">= 0", 2),
    ([*RING, "--param", "g=inf"], "finite", 2),
    ([*SIM, "allreduce.ring", "-P", "4", "--model", "alpha-beta", "--param", "alpha=fast"], "must be a finite number > 0", 2),
    ([*SIM, "allreduce.ring", "-P", "4", "--model", "alpha-beta", "--param", "alpha"], "NAME=VALUE", 2),
    ([*RING, "-N", "-3"], "integer >= 0", 2),
    ([*RING, "-N", "10^x"], "a power such as 2^20", 2),
    ([*RING, "-N", "2^63"], "N = 2^63 is above 1152921504606846975 = (2^63 - 1) / 8", 2),      # bytes overflow int64
    ([*RING, "-N", "1234567890123456789012345678901"], "the most elements whose bytes", 2),
    ([*SIM, "alltoall.direct", "-P", "4", "--model", "logp", "-N", "2^60"], "(2^63 - 1) / 8", 2),
    ([*RING, "--receives", "with-sends"], "a choice of the loggopsim semantics", 2),
    ([*SIM, "snake", "-P", "4", "-N", "10^8", "--option", "block=1", "--model", "nbl"], "N = 100000000 would take", 2),
    ([*RING, "--option", "bogus=1"], "an option of no algorithm", 2),
    ([*SIM, "broadcast.binomial", "-P", "4", "--model", "logp", "--option", "root=4"], "root", 2),
    ([*SIM, "dissemination", "-P", "4", "--model", "logp", "-N", "5"], "nelems must be 0", 2),
    ([*SIM, "dissemination", "-P", "4", "--model", "logp", "--option", "fan_in=3"], "takes", 2),
    ([*SIM, "fence", "-P", "8", "--model", "alpha-beta", "--option", "mesh=3x3"], "W*H must equal 8", 2),
    ([*SIM, "barrier.nway_dissemination", "-P", "64", "--model", "nbl", "--option", "n=4"], "f table", 2),
    ([*TIMELINE, "--png", "{DIR}/out.json", "--html", "{DIR}/out.html"], "not allowed with argument", 2),
    ([*TIMELINE, "--png", MISSING], "folder /nonexistent-folder does not exist", 2),
    ([*TIMELINE, "--html", "/tmp"], "/tmp is a folder, not a file", 2),
    ([*TIMELINE, "--rows", "0"], "--rows must be an integer >= 1", 2),
    ([*TIMELINE, "--png", "{DIR}/out.html"], "--png writes a PNG file: give it a name ending in .png", 2),
    ([*SIM, "barrier.dissemination", "-P", "8", "--model", "alpha-beta", "--param", "alpha=0"],
     "parameter alpha must be a finite number > 0, got '0'", 2),            # the table's range, as the model's
    ([*SIM, "barrier.dissemination", "-P", "8", "--model", "alpha-beta", "--semantics", "loggopsim"],
     "(LogP, LogGP, LogGOPS, PLogP; in the table: logp, loggp, loggp-segmented, loggops, loggops-fresh)", 2),
    ([*TIMELINE, "--param", "g=-1"], ">= 0", 2),
    (["netmodels", "timeline", "dissemination", "-P", "2^22", "--model", "logp"],
     "a trace of P = 4194304 ranks would hold up to", 2),
    (["benchmarks/loggopsim_traces.py", "--bogus"], "unrecognized arguments: --bogus", 2),
    (["benchmarks/loggopsim_traces.py", "--json", "{FILE}"], "--json: cannot read", 2),
    (["benchmarks/loggopsim_traces.py", "--store", "--json", MISSING], f"--json: cannot write {MISSING}", 2),
    # ---------------------------------------------------------------- sizes that cannot finish
    ([*SIM, "dissemination", "-P", "2^40", "--model", "logp"],
     "P = 1099511627776 is above 2^31 - 1 = 2147483647, the most ranks a schedule holds (int32); P = 2^", 2),
    ([*SIM, "dissemination", "-P", "2^31", "--model", "logp"],
     "P = 2147483648 is above 2^31 - 1 = 2147483647, the most ranks a schedule holds (int32); P = 2^", 2),
    ([*SIM, "dissemination", "-P", "2^31", "--model", "logp", "--force"], "holds (int32)", 2),
    ([*SIM, "dissemination", "-P", "2^99999999", "--model", "logp"], "P = 2^99999999 is far above 2^31 - 1", 2),
    ([*SIM, "alltoall.direct", "-P", "10^6", "--model", "logp"], "the limit is 300 s) and about", 2),
    ([*SIM, "alltoall.direct", "-P", "10^6", "--model", "logp"], "fits (--force runs it anyway)", 2),
    ([*SIM, "allreduce.ring", "-P", "10^6", "--model", "logp"], "e+12 candidates; the limit is 300 s", 2),   # 2 P^2
    ([*SIM, "allreduce.ring", "-P", "10^6", "-N", "1000000", "--model", "logp"], "e+12 transfers in", 2),
    ([*SIM, "broadcast.two_phase", "-P", "2^20", "--model", "logp"], "GiB of memory", 2),
    # ---------------------------------------------------------------- output paths, checked before any work
    ([*RING, "--json", MISSING], "folder /nonexistent-folder does not exist", 2),
    ([*RING, "--json", "/tmp"], "/tmp is a folder, not a file", 2),
    ([*RING, "--json", ""], "the output path is empty", 2),
    ([*RING, "--json", "{FILE}/out.json"], "is not a folder", 2),
    ([*RING, "--json", "{RO}/out.json"], "is not writable", 2),
    ([*RING, "--json", "{ROFILE}"], "the file is read-only", 2),
    ([*RING, "--json", "{DIR}/out.json", "FSIZE"], "(File too large); the file was left as it was", 1),
    *[(["benchmarks/" + s, "--json", MISSING], f"{s}: error: --json: cannot write {MISSING}", 2) for s in SCRIPTS],
    *[(["benchmarks/" + s, "--json", "/tmp"], "/tmp is a folder, not a file", 2) for s in SCRIPTS],
    *[(["benchmarks/" + s, "--json", "{RO}/out.json"], "is not writable", 2) for s in SCRIPTS],
    *[(["benchmarks/" + s, "--bogus"], "unrecognized arguments: --bogus", 2) for s in SCRIPTS],
    (["benchmarks/run_pingpong_c.py"], "required: binary", 2),
    (["benchmarks/launch_modes.py", "--lengths", "12"], "lengths must be positive multiples of 8 bytes", 2),
    (["benchmarks/launch_modes.py", "--settings", "nonesuch"], "nonesuch", 2),
    (["benchmarks/recording_cost.py", "--bogus"], "unrecognized arguments: --bogus", 2),
    (["benchmarks/ctrl_c_at_start.py", "--bogus"], "unrecognized arguments: --bogus", 2),
    (["benchmarks/ctrl_c_at_start.py", "--runs", "0"], "expected an integer >= 1, got '0'", 2),
    (["benchmarks/ctrl_c_at_start.py", "--within", "-1"], "got '-1'", 2),
    (["benchmarks/recording_cost.py", "--rounds", "0"], "expected an integer >= 1, got '0'", 2),
    (["benchmarks/recording_cost.py", "--seed", "-1"], "expected an integer >= 0, got '-1'", 2),
    (["benchmarks/recording_cost.py", "--rev", "nonesuch"], "git has no mpi_exercises/executor.py at 'nonesuch'", 2),
    (["benchmarks/door_cost.py", "--elements", "0"], "--elements must be >= 1, got 0", 2),
    (["benchmarks/fresh_data.py", "--lengths", "12"], "--lengths must be multiples of 8 bytes", 2),
    (["benchmarks/fresh_data.py", "--apart", "-1"], "--apart must be >= 0 seconds", 2),
    (["benchmarks/door_cost.py", "--rev", "nonesuch"], "--rev nonesuch has no mpi_exercises", 2),
    (["benchmarks/loggopsim_speed.py", "--loggopsim", "{DIR}"], "LogGOPSim and txt2bin not found in", 2),
    (["benchmarks/loggopsim_speed.py", "--only"], "expected at least one argument", 2),
    (["benchmarks/loggopsim_speed.py", "--bogus"], "unrecognized arguments: --bogus", 2),
    (["benchmarks/pingpong_agreement.py"], "required: JSON", 2),
    (["benchmarks/long_samples.py", "-N", "0"], "argument -N: expected an integer >= 1", 2),
    (["benchmarks/walk_speed.py", "--repeats", "0"], "argument --repeats: expected an integer >= 1", 2),
    (["benchmarks/coherence.py"], "run it on 2 ranks (mpiexec -n 2), got 1", 2),
    (["benchmarks/long_samples.py", "--json", MISSING], "cannot write", 2),
    (["benchmarks/predict_launches.py", "--launches", "0"], "--launches must be >= 1", 2),
    (["benchmarks/predict_rounds.py", "--pairs", "0"], "--pairs must be >= 1 and --apart >= 0", 2),
    (["benchmarks/predict_launches.py", "--out", MISSING], "cannot write", 2),
    (["benchmarks/predict_launches.py", "--summarize", "{FILE}"], "not a predict report", 2),
    (["benchmarks/loggp_refit.py", "{FILE}"], "cannot refit", 2),
    (["benchmarks/prtt_calibration_time.py", "--pairs", "0"], "--pairs >= 1", 2),
    (["benchmarks/predict_sensitivity.py"], "required: report", 2),
    (["benchmarks/predict_sensitivity.py", "{FILE}"], "not a predict report", 2),
    (["benchmarks/predict_sensitivity.py", "book/data/predict_reference.json", "--scale", "alpha-beta.gamma=2"],
     "no parameter 'alpha-beta.gamma'", 2),
    (["benchmarks/predict_sensitivity.py", "book/data/predict_reference.json", "--scale", "alpha-beta.alpha=-1"],
     "a factor > 0", 2),
    (["benchmarks/pingpong_agreement.py", "{FILE}"], "at least two runs", 2),
    (["benchmarks/pingpong_agreement.py", "{FILE}", "{FILE}"], "not a ping-pong JSON", 2),
    (["benchmarks/pingpong_agreement.py", "{FILE}", "{FILE}", "--tolerance", "5"], "fraction in (0, 1)", 2),
    (["benchmarks/run_pingpong_c.py", "/bin/true", "--json", "/tmp"], "/tmp is a folder, not a file", 2),
    (["benchmarks/run_pingpong_c.py", "/bin/true", "--json", "{FILE}/out.json"], "cannot create folder", 2),
    (["benchmarks/run_pingpong_c.py", "/bin/true", "--json", "{RO}/sub/out.json"], "cannot create folder", 2),
]


@pytest.fixture(scope="module")
def read_only(tmp_path_factory):
    """``{RO, ROFILE}`` -> paths, made read-only once for the table (no row can write them:
    each row checks that ROFILE is whole), and why they could not be made (or None)."""
    base = tmp_path_factory.mktemp("read-only")
    ro, rofile = base / "ro", base / "ro.json"
    ro.mkdir()
    rofile.write_text('{"a": "good result"}')
    locked, why = [], None
    if os.geteuid() == 0:
        for p in (ro, rofile):
            res = subprocess.run(["chattr", "+i", str(p)], capture_output=True, text=True)
            if res.returncode != 0:
                why = f"root ignores permission bits, and chattr +i failed here: {res.stderr.strip()}"
                break
            locked.append(p)
    else:
        ro.chmod(0o555)
        rofile.chmod(0o444)
    yield {"RO": str(ro), "ROFILE": str(rofile)}, why
    for p in locked:
        subprocess.run(["chattr", "-i", str(p)], check=True)
    ro.chmod(0o755)


@pytest.fixture
def places(tmp_path, read_only):
    """``{DIR, FILE, RO, ROFILE}`` -> paths (a new writable folder and file for each row), and
    why read-only places could not be made (or None)."""
    file = tmp_path / "file"
    file.write_text("x")
    where, why = read_only
    return {"DIR": str(tmp_path), "FILE": str(file), **where}, why


def _limit_file_size():
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE, FSIZE))


#: the first row of ``python -m netmodels``, of each of its commands and of each script runs a
#: new interpreter, the others a fork of this process (tests/forked.py): the same ``__main__``
#: or script, without 0.15 s of start-up each.  The rows under a file size limit (which would
#: apply to the files the fork's output goes to, where a new interpreter writes to pipes)
#: always run in a new interpreter
FRESH = first_of_each([tuple(c[0][:2]) if c[0][0] == "netmodels" else c[0][0] for c in CASES]) | \
    {i for i, c in enumerate(CASES) if "FSIZE" in c[0]}


@pytest.mark.parametrize("argv, fragment, status, fresh", [(*c, i in FRESH) for i, c in enumerate(CASES)],
                         ids=[" ".join(c[0][:4]) + f"-{i}" for i, c in enumerate(CASES)])
def test_bad_input_is_one_line_and_its_status(argv, fragment, status, fresh, places):
    where, why_not = places
    if why_not and any("{RO" in a for a in argv):
        pytest.skip(why_not)
    fsize = "FSIZE" in argv
    argv = [a.format(**where) for a in argv if a != "FSIZE"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.monotonic()
    if fresh:
        cmd = [sys.executable, "-m", *argv] if argv[0] == "netmodels" else [sys.executable, *argv]
        res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=10, env=env,
                             preexec_fn=_limit_file_size if fsize else None)
    else:
        run = run_module if argv[0] == "netmodels" else run_script
        res = run(argv[0], argv[1:], cwd=ROOT, env=env)
    assert time.monotonic() - start < 10
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert res.returncode == status, res.stderr
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in res.stderr, res.stderr
    if status == 2:                              # refused before any work
        assert "predicted time" not in res.stdout
    assert not os.path.exists(os.path.join(where["DIR"], "out.json"))
    assert open(where["ROFILE"]).read() == '{"a": "good result"}'
    assert [n for n in os.listdir(where["DIR"]) if n.startswith(".")] == []     # no temporary file left


def test_every_command_and_script_has_a_row():
    from netmodels.__main__ import COMMANDS

    covered = {tuple(c[0][:2]) for c in CASES if c[0][0] == "netmodels"} | {c[0][0] for c in CASES}
    wanted = {("netmodels", n) for n in COMMANDS} | {
        "benchmarks/" + p.name for p in (ROOT / "benchmarks").glob("*.py")}
    assert wanted - covered == set()
