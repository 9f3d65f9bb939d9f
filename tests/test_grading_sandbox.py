"""The grading sandbox from the grader's side (``labs/grading_sandbox.py``, ``labs/grading_execute.py``
and ``labs/grading_probe.py``), one notebook at a time, each run by a grading process of its own
(as ``grade.py`` runs nbgrader) in the sandbox:

- what the kernel starts from: the grader's matplotlib font list, bound read-only; one BLAS thread
  unless the grader's environment sets it;
- nothing the grader does as the instructor touches a path the kernel can write: a kernel that
  replaces the files of its ``run/`` folder by links to the gradebook and dies leaves it intact;
- the kernel inherits no descriptor, environment or path of the grader's (checked in the kernel
  restarted after the one that left those links: one grading for both checks);
- output is bounded while a cell runs: a cell printing hundreds of megabytes leaves the grading
  process small, and the graded notebook says what was cut; a message of many parts stays
  within the grading process's memory limit;
- a submission that tampers with IPython's input or output machinery, the built-ins or numpy
  scores 0 on every test it reaches, and the test says so (``TamperingDetected``), while an
  honest one scores every point (nbgrader's own ``determine_grade`` scores the cells).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.utils import determine_grade

from tests.labcourse import LABS, gradebook_links, require_sandbox

sys.path.insert(0, str(LABS))
import grading_probe  # noqa: E402 (labs/ is not a package)
import grading_sandbox  # noqa: E402

# run in the sandbox: where matplotlib keeps its files, the marker of the font list it loaded, what is there
PROBE = ("import json, os, matplotlib\n"
         "from matplotlib import font_manager\n"
         "print(json.dumps([matplotlib.get_cachedir(), getattr(font_manager.fontManager, 'kit_marker', None),\n"
         "                  sorted(os.listdir(matplotlib.get_cachedir()))]))\n")


def _in_sandbox(tmp_path, fonts):
    work, run = tmp_path / "work", tmp_path / "run"
    work.mkdir(parents=True)
    run.mkdir()
    cmd = grading_sandbox.command(str(work), str(run), memory=4 << 30, cpu=60, fsize=1 << 30, fonts=fonts)
    res = subprocess.run([*cmd, sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    return run, json.loads(res.stdout.splitlines()[-1])


@pytest.mark.slow
def test_the_kernel_loads_the_graders_font_list_and_builds_its_own_without_one(tmp_path):
    require_sandbox()
    listed = grading_sandbox.font_list()
    assert listed is not None and listed.endswith(".json")
    marked = json.loads(open(listed, encoding="utf-8").read())
    marked["kit_marker"] = 7   # kept by matplotlib's loader: only a list read from this file has it
    given = tmp_path / "given" / listed.rsplit("/", 1)[1]
    given.parent.mkdir()
    given.write_text(json.dumps(marked), encoding="utf-8")
    before = given.read_bytes()

    run, (cachedir, marker, files) = _in_sandbox(tmp_path / "with", str(given))
    assert cachedir == grading_sandbox.MATPLOTLIB_DIR and marker == 7 and given.name in files
    assert list(run.iterdir()) == [] and given.read_bytes() == before    # nothing written on the host
    # without a list (no matplotlib where grade.py runs), matplotlib builds one in the same folder
    run, (cachedir, marker, files) = _in_sandbox(tmp_path / "without", None)
    assert cachedir == grading_sandbox.MATPLOTLIB_DIR and marker is None and given.name in files
    assert list(run.iterdir()) == []


def test_the_kernel_gets_one_blas_thread_unless_the_grader_sets_it(tmp_path, monkeypatch):
    require_sandbox()

    def blas_threads() -> list[str]:
        cmd = grading_sandbox.command(str(tmp_path), str(tmp_path), memory=1 << 30, cpu=60, fsize=1 << 20)
        return [cmd[i + 2] for i in range(len(cmd) - 2) if cmd[i:i + 2] == ["--setenv", "OPENBLAS_NUM_THREADS"]]

    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    assert blas_threads() == ["1"]
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    assert blas_threads() == ["3"]


# ---------------------------------------------------------------- one notebook, graded as grade.py does
#: the grading process: the course's execution preprocessors, a sandboxed kernel, stderr to the log
GRADER = """
import json, logging, resource, sys
logging.basicConfig(level=logging.WARNING)    # the warnings of the preprocessors, into the log
sys.path.insert(0, sys.argv[4])
import nbformat, grading_execute, grading_sandbox
grading_sandbox.hold_grader()                 # as grade.py's grading process does
nb = nbformat.read(sys.argv[1], as_version=4)
run = grading_execute.ExecuteRestartingDeadKernel(
    kernel_manager_class=grading_sandbox.SandboxedKernelManager, timeout=60, iopub_timeout=10,
    check_tampering=sys.argv[5] == "1")
nb, _ = run.preprocess(nb, {"metadata": {"path": sys.argv[3]}})
nbformat.write(nb, sys.argv[2])
print(json.dumps({"maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""
#: runs a command; prints its exit status and the peak RSS of the largest of its processes
WATCH = """
import json, resource, subprocess, sys
status = subprocess.run(sys.argv[1:]).returncode
print(json.dumps({"status": status, "maxrss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""
#: in the grader's environment only: no process of the sandbox may see it
SECRET = "kit-grader-secret-5f1c"
GRADEBOOK = b"SQLite format 3\x00" + bytes(range(256)) * 64   # stands for the course's gradebook


def answer(source: str):
    return nbformat.v4.new_code_cell(source, metadata={"nbgrader": {
        "grade": False, "solution": True, "grade_id": "answer", "locked": False}})


def graded_cell(source: str, grade_id: str, points: int = 1):
    return nbformat.v4.new_code_cell(source, metadata={"nbgrader": {
        "grade": True, "solution": False, "grade_id": grade_id, "points": points, "locked": True}})


def grade_notebook(tmp_path: Path, cells, *, check_tampering: bool = True, memory: int = 4 << 30):
    """Run ``cells`` as ``grade.py``'s grading process does, kernels held to ``memory`` bytes of
    address space; return (graded notebook, peak RSS in bytes {"grader": of the grading process,
    "largest": of the largest process, it or a kernel}, its log, the course folder, links left in
    the kernel's ``run/``)."""
    require_sandbox()
    course = tmp_path / "course"
    graded = course / "autograded" / "student" / "lab"
    graded.mkdir(parents=True)
    (course / "gradebook.db").write_bytes(GRADEBOOK)
    empty = tmp_path / "empty"          # the submission's folder and the lab's: the notebook is given apart
    empty.mkdir()
    limits = {"memory": memory, "cpu": 120, "fsize": 1 << 30, "fonts": grading_sandbox.font_list()}
    with grading_sandbox.environment(empty, empty, (), limits) as env:    # a scratch folder, as grade.py's
        env["KIT_SECRET"] = SECRET      # the grader's environment, which the kernel must not see
        run = Path(json.loads(env[grading_sandbox.ENV])["run"])
        src, out = graded / "lab.ipynb", graded / "lab.graded.ipynb"
        nbformat.write(nbformat.v4.new_notebook(cells=cells), src)
        log = course / "autograded" / "student" / "lab.log"
        with open(log, "w") as fh:   # through a process of its own, whose children are the grader and its kernels
            res = subprocess.run([sys.executable, "-c", WATCH, sys.executable, "-c", GRADER, str(src), str(out),
                                  str(graded), str(LABS), "1" if check_tampering else "0"], cwd=course, env=env,
                                 stdout=subprocess.PIPE, stderr=fh, text=True, timeout=600)
        links = sum(p.is_symlink() for p in run.rglob("*"))
    watched = json.loads(res.stdout.splitlines()[-1])
    assert watched["status"] == 0, log.read_text()[-3000:]
    rss = {"grader": json.loads(res.stdout.splitlines()[-2])["maxrss_kib"] * 1024,
           "largest": watched["maxrss_kib"] * 1024}
    return nbformat.read(out, as_version=4), rss, log.read_text(), course, links


def outputs_text(cell) -> str:
    parts = []
    for o in cell.outputs:
        parts += [o.get("text", ""), str(o.get("evalue", "")), *map(str, o.get("data", {}).values())]
    return "\n".join(parts)


def scores(nb) -> dict:
    """grade_id -> points nbgrader gives each test cell of the graded notebook ``nb``."""
    return {c.metadata.nbgrader["grade_id"]: determine_grade(c)[0] for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("grade") and not c.metadata.nbgrader.get("solution")}


@pytest.fixture(scope="module")
def links_then_recon(tmp_path_factory):
    """One notebook graded as :func:`grade_notebook` does, read by two tests: its first answer
    replaces the files of the kernel's ``run/`` folder by links to the gradebook and kills the
    kernel; the restarted kernel runs the next cells, then :data:`RECON` (what that kernel sees
    of the grader)."""
    tmp_path = tmp_path_factory.mktemp("links-then-recon")
    fonts = grading_sandbox.font_list() or "fontlist.json"
    cells = [answer(gradebook_links(repr(str(tmp_path / "course" / "gradebook.db")), [os.path.basename(fonts)])),
             answer("x = 2"), graded_cell("assert x == 2", "after_restart"), answer(RECON)]
    return grade_notebook(tmp_path, cells)


@pytest.mark.slow
def test_a_dead_kernels_links_make_the_grader_write_nothing(links_then_recon):
    nb, _, log, course, links = links_then_recon
    assert links >= 2, "the kernel made no link: the attack did not run"
    assert "The kernel died in cell 0" in log, log[-2000:]
    assert (course / "gradebook.db").read_bytes() == GRADEBOOK
    assert scores(nb) == {"after_restart": 1}          # the restarted kernel ran the next cells


RECON = """
import json, os
fds = {}
for fd in os.listdir("/proc/self/fd"):
    try:
        fds[fd] = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        pass
seen = {"fds": fds, "environ": {}, "cwd": {}}
for pid in os.listdir("/proc"):
    if pid.isdigit():
        for key, name in (("environ", "environ"), ("cwd", "cwd")):
            try:
                seen[key][pid] = (open(f"/proc/{pid}/environ", "rb").read().decode(errors="replace")
                                  if key == "environ" else os.readlink(f"/proc/{pid}/cwd"))
            except OSError:
                pass
print(json.dumps(seen))
"""


@pytest.mark.slow
def test_the_kernel_sees_no_descriptor_path_or_environment_of_the_grader(links_then_recon):
    nb, _, log, course, _ = links_then_recon
    printed = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("name") == "stdout")
    seen = json.loads(printed.splitlines()[-1])
    fds = seen["fds"]
    assert fds["0"] == "/dev/null" and fds["1"].startswith("pipe:") and fds["2"].startswith("pipe:"), fds
    kinds = ("pipe:", "socket:", "anon_inode:", "/dev/null", "/proc/")
    assert [t for t in fds.values() if not t.startswith(kinds)] == [], fds
    everything = json.dumps(seen)
    assert str(course) not in everything and "lab.log" not in everything
    assert SECRET not in everything and grading_sandbox.ENV not in everything
    assert len(seen["environ"]) >= 2           # the kernel and bubblewrap's init were read


FLOOD = """
import sys
chunk = "y" * (1 << 20)
for _ in range(400):                  # 400 MB through print: cut by the kernel
    sys.stdout.write(chunk)
from IPython.display import display
for _ in range(300):                  # 300 MB of displays, which the kernel does not cut
    display({"text/plain": chunk}, raw=True)
"""


@pytest.mark.slow
def test_a_flood_of_output_leaves_the_grading_process_small(tmp_path):
    cells = [answer(FLOOD), answer('from IPython.display import display\n'
                                   'display({"text/plain": "z" * (64 << 20)}, raw=True)\nx = 2'),
             graded_cell("assert x == 2", "after_flood")]
    nb, rss, log, _, _ = grade_notebook(tmp_path, cells)
    assert rss["grader"] < 300e6, f"the grading process reached {rss['grader'] / 1e6:.0f} MB"
    flood, huge = outputs_text(nb.cells[0]), outputs_text(nb.cells[1])
    assert len(flood) < 3e6
    assert "output cut while grading: more than" in flood                 # the kernel's note
    assert "this cell's output was cut while it ran" in flood             # the grader's
    assert "outputs of this cell were lost" in huge and len(huge) < 1e5   # one message over the limit
    assert scores(nb) == {"after_flood": 1}                               # and the next cells ran


MANY_PARTS = """
kernel = get_ipython().kernel
part = b"m" * ((16 << 20) - 4096)      # under the grader's limit per part; the same bytes each time
for _ in range(2):                    # 768 MiB per message
    kernel.session.send(kernel.iopub_socket, "display_data", {"data": {"text/plain": "m"}, "metadata": {}},
                        parent=kernel.get_parent("shell"), buffers=[part] * 48)
"""


@pytest.mark.slow
def test_a_message_of_many_parts_stays_within_the_grading_processs_memory(tmp_path):
    memory = 1 << 30
    nb, rss, log, _, _ = grade_notebook(tmp_path, [answer(MANY_PARTS + "x = 2"), graded_cell("assert x == 2", "t")],
                                        memory=memory)
    assert rss["largest"] < memory, f"a process reached {rss['largest'] / 1e6:.0f} MB"
    assert "outputs of this cell were lost" in outputs_text(nb.cells[0])
    assert scores(nb) == {"t": 1}


# ---------------------------------------------------------------- tampering
#: the tests each submission below meets (their grade ids get the submission's name)
TESTS = (("plain", "assert x == 2, 'x must be 2'"),
         ("numpy", "import numpy as np\nassert np.isclose(x, 2)"),
         ("builtin", "assert all([x == 2])"))
ATTACKS = {
    "input_transformers": "get_ipython().input_transformers_cleanup.append(lambda lines: [])",
    "ast_transformers": ("import ast\nclass NoAssert(ast.NodeTransformer):\n"
                         "    def visit_Assert(self, node):\n        return ast.Pass()\n"
                         "get_ipython().ast_transformers.append(NoAssert())"),
    "patched_numpy": "import numpy\nnumpy.isclose = lambda *a, **k: True",
    "patched_builtin": "import builtins\nbuiltins.all = lambda *a: True",
    "assertion_error": "import builtins\nbuiltins.AssertionError = type('AssertionError', (Exception,), {})",
    "showtraceback": ("ip = get_ipython()\nip.showtraceback = lambda *a, **k: None\n"
                      "ip._showtraceback = lambda *a, **k: None"),
    "result_injected": ("get_ipython().events.register('pre_run_cell', "
                        "lambda *a: get_ipython().displayhook('passed'))"),
    "outputs_cleared": ("from IPython.display import clear_output\n"
                        "get_ipython().events.register('post_run_cell', lambda *a: clear_output())"),
}
#: attacks that, unchecked, score points on this notebook (the others only try: nbgrader itself
#: records the error of a cell whose reply says it failed, shown or cleared or not)
WORKING = ("input_transformers", "ast_transformers", "patched_numpy", "patched_builtin", "result_injected")
HONEST = "import numpy as np, matplotlib.pyplot as plt\nplt.plot([1, 2]); plt.show()\nx = 2"


def submissions(names):
    """One notebook holding, for each name, its answer (an attack, or the honest one) and the
    tests, then a cell that kills the kernel once (its file in work/ remembers), so that the
    next submission starts in a fresh kernel, as it would in a grading of its own.  The input
    transformer empties every later cell, that one included: it comes last."""
    cells = []
    for name in sorted(names, key=lambda name: name == "input_transformers"):
        cells.append(answer((HONEST if name.startswith("honest") else ATTACKS[name] + "\nx = 1")))
        cells += [graded_cell(source, f"{test}_{name}") for test, source in TESTS]
        cells.append(answer(f"import os\nif not os.path.exists('died_{name}'):\n"
                            f"    open('died_{name}', 'w').close()\n    os._exit(1)"))
    return cells


def by_submission(nb) -> dict:
    """name -> {test: points} of a notebook of :func:`submissions`."""
    out = {}
    for grade_id, points in scores(nb).items():
        test, name = grade_id.split("_", 1)
        out.setdefault(name, {})[test] = points
    return out


@pytest.mark.slow
def test_tampering_scores_nothing_and_is_flagged_and_an_honest_notebook_everything(tmp_path):
    names = ["honest_first", *ATTACKS, "honest_last"]
    nb, _, log, _, _ = grade_notebook(tmp_path, submissions(names))
    got = by_submission(nb)
    full, none = {t: 1 for t, _ in TESTS}, {t: 0 for t, _ in TESTS}
    assert got == {name: (full if name.startswith("honest") else none) for name in names}
    for cell in nb.cells:
        grade_id = cell.metadata.nbgrader.get("grade_id", "")
        if cell.metadata.nbgrader.get("grade"):
            flagged = [o.get("ename") for o in cell.outputs[:1]] == [grading_probe.TAMPERED]
            assert flagged == ("honest" not in grade_id), (grade_id, cell.outputs)
    assert log.count("did not run as written") == len(TESTS) * len(ATTACKS)
    assert log.count("The kernel died in cell") == len(names) - 1   # a fresh kernel for each


@pytest.mark.slow
def test_the_attacks_do_score_when_unchecked(tmp_path):
    nb, *_ = grade_notebook(tmp_path, submissions(WORKING), check_tampering=False)
    got = by_submission(nb)
    assert all(sum(got[name].values()) > 0 for name in WORKING), got
