"""What a student installs: the kit's wheel, in a virtual environment of its own, without the
repository.

The wheel is built as the book builds it (``book/_ext/kit_wheel.py``) and offered by the page
``book/install.md``.  Its dependencies are ``requirements.txt``'s pins, nbgrader only in the
``instructor`` extra.  The slow test installs the wheel into an empty virtual environment
(``python -m venv``, then ``pip install`` of the wheel, its dependencies from the package
registry or pip's cache), runs a lab's command under ``mpiexec -n 2`` from that environment in
a folder that holds no file of the repository, and reads every file of the installed
distribution: no solution, no hidden test, nothing of ``labs/source``; no nbgrader, so no
"Create Assignment" in the student's JupyterLab.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from urllib.parse import unquote

import pytest
from packaging.requirements import Requirement

from tests.mpirun import ROOT

sys.path.insert(0, str(ROOT / "book" / "_ext"))
import kit_wheel  # noqa: E402 (the book's builder of the wheel)

#: nbgrader's solution and hidden-test delimiters
MARKERS = (b"BEGIN SOLUTION", b"END SOLUTION", b"BEGIN HIDDEN TESTS", b"END HIDDEN TESTS")
#: what a student's environment must hold (the kit's runtime), by distribution name
RUNTIME = {"numpy", "scipy", "sympy", "matplotlib", "plotly", "ipywidgets", "tqdm", "mpi4py", "numba",
           "mpich", "impi-rt", "jupyterlab"}


def _key(req: Requirement) -> tuple:
    return req.name.lower(), str(req.specifier), str(req.marker or "")


def pinned() -> dict[str, Requirement]:
    """requirements.txt's requirements by name (lower case)."""
    reqs = {}
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip() if not line.lstrip().startswith("#") else ""
        if line:
            req = Requirement(line)
            reqs[req.name.lower()] = req
    return reqs


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_declared_dependencies_are_the_pins_of_requirements_txt():
    pins = pinned()
    runtime = [Requirement(r) for r in project()["dependencies"]]
    instructor = [Requirement(r) for r in project()["optional-dependencies"]["instructor"]]
    assert {r.name.lower() for r in runtime} >= RUNTIME
    for req in runtime + instructor:
        assert req.name.lower() in pins, f"{req.name} is declared in pyproject.toml, not pinned in requirements.txt"
        assert _key(req) == _key(pins[req.name.lower()]), f"pyproject.toml {req} != requirements.txt {pins[req.name.lower()]}"
    assert "nbgrader" not in {r.name.lower() for r in runtime}   # a student gets no instructor tool
    assert {r.name for r in instructor} == {"nbgrader", "django-static-mathjax", "bleach"}   # grading and feedback pages
    assert "nbgrader" in pins   # `make venv` installs it for authors and instructors


def test_install_page_offers_the_wheel_the_build_makes():
    page = (ROOT / "book" / "install.md").read_text(encoding="utf-8")
    name = kit_wheel.wheel_name()
    assert f"</_build/kit/{name}>" in page   # the download link
    installs = [line for line in page.splitlines() if "pip install" in line and "--upgrade pip" not in line]
    assert len(installs) >= 2 and all(name in line for line in installs), installs   # Linux/macOS and Windows
    for needed in ("python3 -m venv", "py -m venv", "mpiexec -n 2 python -m mpi_exercises pingpong"):
        assert needed in page, needed
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    wheels = set(re.findall(r"course_kit_netmodels-[\w.]+-py3-none-any\.whl", readme))
    assert wheels == {name}, wheels   # the README's student commands name the same file


def _source_digests() -> set[str]:
    """SHA-256 of every file of labs/source (the instructor's notebooks and data)."""
    return {hashlib.sha256(p.read_bytes()).hexdigest() for p in (ROOT / "labs" / "source").rglob("*")
            if p.is_file()}


def _check_contents(named: dict[str, bytes], secret: set[str]) -> None:
    for name, data in named.items():
        assert "labs" not in Path(name).parts, name
        found = [m.decode() for m in MARKERS if m in data]
        assert not found, f"{name}: {found}"
        assert hashlib.sha256(data).hexdigest() not in secret, f"{name} is a file of labs/source"


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_the_wheel_installs_and_runs_a_lab_command_without_the_repository(tmp_path, kit_wheel_file):
    wheel = kit_wheel_file                    # built once per run (tests/conftest.py)
    assert wheel.name == kit_wheel.wheel_name()
    secret = _source_digests()
    with zipfile.ZipFile(wheel) as zf:
        members = {n: zf.read(n) for n in zf.namelist() if not n.endswith("/")}
    tops = {n.split("/", 1)[0] for n in members}
    assert tops == {"netmodels", "mpi_exercises", wheel.name.split("-py3")[0] + ".dist-info"}, tops
    _check_contents(members, secret)
    metadata = next(v.decode() for n, v in members.items() if n.endswith(".dist-info/METADATA"))
    requires = [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert [r for r in requires if r.startswith("nbgrader")] == ['nbgrader==0.9.6; extra == "instructor"'], requires
    assert [r for r in requires if 'extra == "instructor"' in r] == [
        'nbgrader==0.9.6; extra == "instructor"', 'django-static-mathjax==3.2.2.1; extra == "instructor"',
        'bleach==6.4.0; extra == "instructor"'], requires

    # an empty virtual environment, the wheel and its dependencies from the registry (or pip's cache),
    # installed by a current pip, as the Install page has the student upgrade pip first: this
    # environment's pip, pointed at the new one (--python), instead of installing into it the older
    # pip that venv bundles (3 s) and resolving with that (twice as slow)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    python, bin_dir = venv / "bin" / "python", venv / "bin"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(VIRTUAL_ENV=str(venv), PATH=os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"]), MPLBACKEND="Agg")
    # --no-compile: bytecode is written when a module is first imported instead of for every file
    # at install (half of pip's time here; what is installed is the same)
    res = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-compile",
                          str(wheel)], env=env, capture_output=True, text=True, timeout=1500)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]

    # a student's folder: nothing of the repository in it, nor on the paths of the environment
    work = tmp_path / "student" / "lab1"
    work.mkdir(parents=True)
    where = subprocess.run([str(python), "-c", "import json, mpi_exercises, netmodels; "
                            "print(json.dumps([mpi_exercises.__file__, netmodels.__file__]))"],
                           cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert where.returncode == 0, where.stderr
    for path in json.loads(where.stdout):
        assert Path(path).is_relative_to(venv) and not Path(path).is_relative_to(ROOT), path
    cmd = [str(bin_dir / "mpiexec"), "-n", "2", str(python), "-m", "mpi_exercises", "pingpong",
           "--sizes", "0,1k,64k", "--rounds", "2", "--target", "0", "--no-progress", "--json", "pingpong.json"]
    res = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    result = json.loads((work / "pingpong.json").read_text())
    fit = result["fit"]["alpha_beta"]
    assert fit["alpha_s"] > 0 and fit["beta_s_per_byte"] > 0, fit

    # every file of the installed distribution, read back from the environment
    listed = subprocess.run([str(python), "-c", "import json, importlib.metadata as m; print(json.dumps("
                             "[str(f.locate()) for f in m.files('course-kit-netmodels')]))"],
                            cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    files = [Path(p) for p in json.loads(listed.stdout)]
    assert len(files) > 50
    _check_contents({str(p.relative_to(venv)): p.read_bytes() for p in files if p.is_file()}, secret)

    # no instructor tool: no nbgrader, so no "Create Assignment" or Formgrader in JupyterLab
    spec = subprocess.run([str(python), "-c", "import importlib.util; print(importlib.util.find_spec('nbgrader'))"],
                          cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert spec.stdout.strip() == "None", spec.stdout + spec.stderr
    exts = subprocess.run([str(bin_dir / "jupyter"), "labextension", "list"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=300)
    assert exts.returncode == 0, exts.stderr
    shown = exts.stdout + exts.stderr
    assert "jupyterlab" in shown.lower() and "nbgrader" not in shown.lower(), shown

    # passed: the environment (24,000 files, 0.8 GB) goes now, while the other worker runs, and
    # not in pytest's removal of old runs' folders, which one process does at the end of a later run
    subprocess.run(["rm", "-rf", str(venv)], check=True, timeout=300)


def test_the_book_offers_the_wheel_and_every_lab_page_points_at_it(book_html):
    """The built site: the Install page's download is the kit's wheel (the two packages, no
    solution); each lab page links to the Install page."""
    page = book_html / "book" / "install.html"
    text = page.read_text(encoding="utf-8")
    links = re.findall(r'<a class="reference download internal"[^>]*href="([^"]+)"', text)
    wheels = [h for h in links if h.endswith(".whl")]
    assert len(wheels) == 1 and wheels[0].endswith("/" + kit_wheel.wheel_name()), links
    with zipfile.ZipFile((page.parent / unquote(wheels[0])).resolve()) as zf:
        members = {n: zf.read(n) for n in zf.namelist() if not n.endswith("/")}
    assert {n.split("/", 1)[0] for n in members} >= {"netmodels", "mpi_exercises"}
    _check_contents(members, _source_digests())
    for lab in sorted(p.parent.name for p in (ROOT / "labs" / "source").glob("*/*.ipynb")):
        html = (book_html / "book" / "labs" / f"{lab}.html").read_text(encoding="utf-8")
        assert 'href="../install.html"' in html, f"{lab}'s page does not point at the Install page"
        assert "results/" not in html, f"{lab}'s page still sends students to the repository's results/"
