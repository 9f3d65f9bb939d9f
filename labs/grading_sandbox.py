"""The sandbox each submission's code runs in while it is graded (bubblewrap, Linux).

``grade.py`` makes, per submission, a scratch folder holding ``work/`` (a copy of the
submission and of the lab's released data files) and ``run/`` (the kernel's connection
file and sockets), and tells ``nbgrader autograde`` to start kernels through
``SandboxedKernelManager``.  Only the kernel runs in the sandbox; nbgrader, which holds
the hidden tests and the gradebook, stays outside and talks to the kernel over Unix
sockets in ``run/``.  The kernel and everything it starts:

- see the Python environment (the virtual environment, the Python it was made from, the
  course packages it imports, the packages of ``$PYTHONPATH``), ``/usr``, ``/sys`` and a few
  files of ``/etc``, all read-only, and
  read-write only ``work/``, ``run/`` and a private ``/tmp``;
- do not see the course (``source/``, ``release/``, the gradebook, other submissions) or
  anyone's home;
- have no network (a private loopback only), their own PID namespace (all of them die with
  the kernel, sessions and double forks included), no capabilities;
- run under resource limits: address space, CPU time and file size per process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager

ENV = "LABS_SANDBOX"  # JSON {"work", "run", "memory" (bytes), "cpu" (s), "fsize" (bytes), "fonts"}, set by grade.py
ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "hosts", "host.conf",
       "nsswitch.conf", "localtime", "fonts")
SYSTEM = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
PASS_ENV = ("LANG", "LC_ALL", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONPATH")
#: the kernel's BLAS threads unless the grader's environment sets them (PASS_ENV): grading runs
#: ``--jobs`` kernels at once, and numpy's and scipy's OpenBLAS would each start a thread per
#: core in every kernel, which spin at start-up (importing numpy, scipy.linalg and
#: scipy.optimize on 2 cores: 0.61 CPU-s, 0.41 with one thread)
BLAS_THREADS = "1"

# Run in the sandbox before the kernel: set the limits (inherited by every child), exec the kernel.
_LIMITS = (
    "import os, resource, sys\n"
    "mem, cpu, fsize = map(int, sys.argv[1:4])\n"
    "resource.setrlimit(resource.RLIMIT_AS, (mem, mem))\n"
    "resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))\n"
    "resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))\n"
    "resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
    "os.execv(sys.argv[4], sys.argv[4:])\n"
)


def bwrap() -> str | None:
    """The bubblewrap executable: ``$BWRAP``, else ``bwrap`` on PATH (None if there is none)."""
    exe = os.environ.get("BWRAP") or "bwrap"
    return shutil.which(exe)


def unavailable() -> str | None:
    """None if a sandbox can be made here, else why not (one line)."""
    if sys.platform != "linux":
        return f"the sandbox needs Linux namespaces, this is {sys.platform}"
    exe = bwrap()
    if exe is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        res = subprocess.run([exe, *_namespaces(), "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev",
                              "--", "true"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{exe} does not run ({exc})"
    if res.returncode != 0:
        lines = (res.stderr or res.stdout).strip().splitlines() or [f"exit status {res.returncode}"]
        return f"{exe} cannot make namespaces here ({lines[-1]})"
    return None


def _namespaces() -> list[str]:
    return ["--unshare-all", "--unshare-user", "--uid", "1000", "--gid", "1000", "--cap-drop", "ALL",
            "--die-with-parent", "--new-session"]


def python_dirs() -> list[str]:
    """Folders the kernel's Python needs: this environment, its base Python, editable packages.

    Of the folders on ``$PYTHONPATH`` only the packages (subfolders with ``__init__.py``) are
    bound, never the folder itself: it may be a course's repository, ``labs/`` included.
    """
    dirs = {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}
    for entry in filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)):
        if Path(entry).is_dir():
            dirs.update(os.path.realpath(p) for p in Path(entry).iterdir() if (p / "__init__.py").is_file())
    for entry in sys.path:  # editable installs map package names to source folders
        folder = Path(entry)
        if not folder.is_dir() or not str(folder).startswith(tuple(dirs)):
            continue
        for finder in folder.glob("__editable__*finder.py"):
            module = sys.modules.get(finder.stem) or _load(finder)
            for path in getattr(module, "MAPPING", {}).values():
                dirs.add(os.path.realpath(path))
    # a folder inside another one is bound with it
    return sorted(d for d in dirs if not any(d != o and d.startswith(o.rstrip("/") + "/") for o in dirs))


def _load(path: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def font_list() -> str | None:
    """This environment's matplotlib font list (its cache file, built now if missing), or None
    without matplotlib.  Each sandboxed kernel starts from a copy (:func:`command`) instead of
    listing the system's fonts again, which took 0.2 CPU-s per kernel that plots."""
    try:
        import matplotlib
        from matplotlib import font_manager
    except ImportError:
        return None
    path = Path(matplotlib.get_cachedir()) / f"fontlist-v{font_manager.FontManager.__version__}.json"
    return str(path) if path.is_file() else None


def command(work: str, run: str, *, memory: int, cpu: int, fsize: int, fonts: str | None = None) -> list[str]:
    """The bwrap command line up to the kernel's own command (append it).

    ``work`` and ``run``: host folders, bound read-write at the same paths; ``memory``:
    address space per process in bytes; ``cpu``: CPU seconds per process; ``fsize``:
    largest file a process may write, in bytes; ``fonts``: a matplotlib font list
    (:func:`font_list`) copied into the kernel's matplotlib folder, ``run/matplotlib``.
    """
    exe = bwrap()
    if exe is None:
        raise RuntimeError("bubblewrap (bwrap) is not installed")
    args = [exe, *_namespaces()]
    for name in SYSTEM:
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for name in ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    args += ["--ro-bind-try", "/sys", "/sys", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for path in python_dirs():
        args += ["--ro-bind", path, path]
    args += ["--bind", run, run, "--bind", work, work, "--dir", "/tmp/home", "--remount-ro", "/",
             "--chdir", work, "--clearenv"]
    matplotlib_dir = Path(run) / "matplotlib"
    matplotlib_dir.mkdir(exist_ok=True)
    if fonts and Path(fonts).is_file():
        shutil.copy(fonts, matplotlib_dir)
    env = {"HOME": "/tmp/home", "TMPDIR": "/tmp", "MPLCONFIGDIR": str(matplotlib_dir),
           "PATH": os.pathsep.join([str(Path(sys.prefix) / "bin"), "/usr/local/bin", "/usr/bin", "/bin"]),
           "PYDEVD_DISABLE_FILE_VALIDATION": "1", "NBGRADER_EXECUTION": "autograde",
           "OPENBLAS_NUM_THREADS": BLAS_THREADS}
    env.update({k: os.environ[k] for k in PASS_ENV if k in os.environ})
    for key, value in env.items():
        args += ["--setenv", key, value]
    return [*args, "--", sys.executable, "-I", "-S", "-c", _LIMITS, str(memory), str(cpu), str(fsize)]


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel manager whose kernels run in the sandbox described by ``$LABS_SANDBOX``.

    The kernel talks over Unix sockets in the sandbox's ``run/`` folder (it has no
    network), and is interrupted by a message (``interrupt_request``): the process this
    manager sees is bubblewrap, which a SIGINT would kill.
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        spec = os.environ.get(ENV)
        if not spec:
            raise RuntimeError(f"{ENV} is not set: sandboxed kernels are started by labs/grade.py")
        self._sandbox = json.loads(spec)
        run = self._sandbox["run"]
        self.transport = "ipc"
        self.ip = os.path.join(run, "kernel")
        self.connection_file = os.path.join(run, "kernel.json")

    def format_kernel_cmd(self, extra_arguments=None):
        cmd = super().format_kernel_cmd(extra_arguments)
        self.kernel_spec.interrupt_mode = "message"
        box = self._sandbox
        return command(box["work"], box["run"], memory=box["memory"], cpu=box["cpu"], fsize=box["fsize"],
                       fonts=box.get("fonts")) + cmd
