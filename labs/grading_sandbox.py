"""The sandbox each submission's code runs in while it is graded (bubblewrap, Linux).

``grade.py`` makes, per submission, a scratch folder holding ``work/`` (a copy of the
submission and of the lab's released data files), ``run/`` (the kernel's sockets) and
``connection/`` (its connection file), and tells ``nbgrader autograde`` to start kernels through
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
- run under resource limits: address space, CPU time and file size per process;
- inherit no descriptor of the grader's and none of its environment: the sandbox starts with
  standard input from ``/dev/null`` and its output in a pipe the grader copies, bounded, into
  the submission's log; bubblewrap itself starts with an empty environment;
- start the kernel with ``python -P`` (no module of the submission's folder before IPython
  adds it to the path) and its stdout and stderr cut at :data:`KERNEL_STREAM_CHARS` per cell.

Nothing the grader does as the instructor touches ``work/`` or ``run/`` once a kernel has
started: the connection file lives in ``connection/``, bound read-only; matplotlib's font
list is bound read-only into the kernel's private ``/tmp``.  (A kernel that replaced a file
of ``run/`` by a link to the gradebook, then died, would otherwise have the grader write
through that link when it restarts the kernel.)
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager

ENV = "LABS_SANDBOX"  # JSON {"work", "run", "connection", "memory" (bytes), "cpu" (s), "fsize" (bytes), "fonts"}, set by grade.py
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


#: characters a kernel's stdout, and its stderr, send per request (a cell); past it the kernel drops
#: the rest and says so.  Set by :data:`_KERNEL`, which the submission may undo: the grader bounds
#: what it receives too (``grading_preprocessors.ExecuteRestartingDeadKernel``).
KERNEL_STREAM_CHARS = 1_000_000

# The kernel's own start (``python -c``, instead of ``-m ipykernel_launcher``): bound what each
# output stream sends per request, then start ipykernel as its launcher does.
_KERNEL = f"""
from ipykernel import iostream
def _bounded(write, limit={KERNEL_STREAM_CHARS}):
    def bounded_write(self, string):
        key = self.parent_header.get("msg_id")
        used = self.__dict__.get("_kit_used")
        if not used or used[0] != key:
            used = self.__dict__["_kit_used"] = [key, 0]
        before, used[1] = used[1], used[1] + len(string)
        if before < limit:
            write(self, string[:limit - before])
            if used[1] > limit:
                write(self, f"\\n... output cut while grading: more than {{limit}} characters ...\\n")
        return len(string)
    return bounded_write
iostream.OutStream.write = _bounded(iostream.OutStream.write)
del iostream, _bounded
from ipykernel import kernelapp
kernelapp.launch_new_instance()
"""


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
    without matplotlib.  Each sandboxed kernel reads it (bound read-only: :func:`command`)
    instead of listing the system's fonts again, which took 0.2 CPU-s per kernel that plots."""
    try:
        import matplotlib
        from matplotlib import font_manager
    except ImportError:
        return None
    path = Path(matplotlib.get_cachedir()) / f"fontlist-v{font_manager.FontManager.__version__}.json"
    return str(path) if path.is_file() else None


#: the kernel's matplotlib folder (``$MPLCONFIGDIR``), in its private ``/tmp``
MATPLOTLIB_DIR = "/tmp/matplotlib"


def command(work: str, run: str, *, memory: int, cpu: int, fsize: int, fonts: str | None = None,
            connection: str | None = None) -> list[str]:
    """The bwrap command line up to the kernel's own command (append it).

    ``work`` and ``run``: host folders, bound read-write at the same paths; ``connection``:
    a host folder bound read-only at the same path (the kernel's connection file); ``memory``:
    address space per process in bytes; ``cpu``: CPU seconds per process; ``fsize``: largest
    file a process may write, in bytes; ``fonts``: a matplotlib font list (:func:`font_list`)
    bound read-only into the kernel's matplotlib folder, :data:`MATPLOTLIB_DIR`.  Nothing is
    written on the host.
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
    args += ["--bind", run, run, "--bind", work, work]
    if connection:
        args += ["--ro-bind", connection, connection]
    args += ["--dir", "/tmp/home", "--dir", MATPLOTLIB_DIR]
    if fonts and Path(fonts).is_file():
        args += ["--ro-bind", fonts, f"{MATPLOTLIB_DIR}/{Path(fonts).name}"]
    args += ["--remount-ro", "/", "--chdir", work, "--clearenv"]
    env = {"HOME": "/tmp/home", "TMPDIR": "/tmp", "MPLCONFIGDIR": MATPLOTLIB_DIR,
           "PATH": os.pathsep.join([str(Path(sys.prefix) / "bin"), "/usr/local/bin", "/usr/bin", "/bin"]),
           "PYDEVD_DISABLE_FILE_VALIDATION": "1", "NBGRADER_EXECUTION": "autograde",
           "OPENBLAS_NUM_THREADS": BLAS_THREADS}
    env.update({k: os.environ[k] for k in PASS_ENV if k in os.environ})
    for key, value in env.items():
        args += ["--setenv", key, value]
    return [*args, "--", sys.executable, "-I", "-S", "-c", _LIMITS, str(memory), str(cpu), str(fsize)]


def hold_grader() -> None:
    """Hold this grading process to the address space its kernels get (``memory`` of
    ``$LABS_SANDBOX``; the soft limit only, which the kernels replace by their own).  The
    grader reads no message part over 16 MiB from a kernel, but a message may have any number
    of parts: what they add up to then ends this grading process (the submission's status says
    so), not the machine.  Without ``$LABS_SANDBOX`` (unconfined grading) nothing is set."""
    import resource

    spec = os.environ.get(ENV)
    if not spec:
        return
    memory = int(json.loads(spec)["memory"])
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    resource.setrlimit(resource.RLIMIT_AS, (memory if hard == resource.RLIM_INFINITY else min(memory, hard), hard))


#: bytes of the kernel's own standard output and error (not its cells' outputs, which go over
#: the sockets) copied into the submission's log; the rest is read and dropped
KERNEL_LOG_BYTES = 64 * 1024


def _relay(fd: int, limit: int) -> None:
    """Copy at most ``limit`` bytes read from ``fd`` to this process's standard error (the
    submission's log), drop the rest, close ``fd`` at its end."""
    kept = 0
    try:
        while chunk := os.read(fd, 65536):
            if kept < limit:
                part = chunk[:limit - kept]
                kept += len(part)
                os.write(2, part)
                if kept >= limit:
                    os.write(2, f"\n[the kernel's output beyond {limit} bytes is not logged]\n".encode())
    except OSError:
        pass
    finally:
        os.close(fd)


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
        # written by the grader: in a folder the kernel may read, never write
        self.connection_file = os.path.join(self._sandbox.get("connection") or run, "kernel.json")

    def format_kernel_cmd(self, extra_arguments=None):
        cmd = super().format_kernel_cmd(extra_arguments)
        at = next((i for i in range(len(cmd) - 1) if cmd[i:i + 2] == ["-m", "ipykernel_launcher"]), None)
        if at is not None:
            # -P: no module of the submission's folder at start (its own ipykernel.py, ast.py)
            cmd[at:at + 2] = (["-P"] if sys.version_info >= (3, 11) else []) + ["-c", _KERNEL]
        self.kernel_spec.interrupt_mode = "message"
        box = self._sandbox
        return command(box["work"], box["run"], memory=box["memory"], cpu=box["cpu"], fsize=box["fsize"],
                       fonts=box.get("fonts"), connection=box.get("connection")) + cmd

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        """Start bubblewrap with an empty environment, in ``work/``, with no descriptor of the
        grader's: standard input from ``/dev/null``, output into a pipe copied to the log."""
        read, write = os.pipe()
        kw.update(env={}, cwd=self._sandbox["work"], stdin=subprocess.DEVNULL, stdout=write, stderr=write)
        try:
            await super()._async_launch_kernel(kernel_cmd, **kw)
        except BaseException:
            os.close(read)
            raise
        finally:
            os.close(write)
        threading.Thread(target=_relay, args=(read, KERNEL_LOG_BYTES), daemon=True).start()


# ---------------------------------------------------------------- the scratch copy a kernel sees
#: the start of a scratch folder's name, in the temporary folder (a feedback page shows its path as ``.``)
SCRATCH_PREFIX = "labs-grade-"


def scratch_copy(submission: Path, source: Path, work: Path, data_files=()) -> None:
    """What the sandbox sees of a submission: the files of the folder ``submission``, then the
    lab's released files (of its ``source`` folder) copied into ``work``.

    As ``nbgrader autograde`` does, the source folder's files other than notebooks and the
    students' own ``data_files`` (``exclude_overwriting``) replace the student's.  Symbolic
    links are not copied (``grade.check_notebooks`` refuses submissions holding any).
    """
    def copy_tree(src: Path, dst: Path, skip=()):
        dst.mkdir(exist_ok=True)
        for entry in src.iterdir():
            if entry.is_symlink() or entry.name in skip or entry.name in ("__pycache__", ".ipynb_checkpoints"):
                continue
            if entry.is_dir():
                copy_tree(entry, dst / entry.name)
            elif entry.is_file():
                target = dst / entry.name
                if target.exists():
                    target.unlink()
                shutil.copyfile(entry, target)

    copy_tree(submission, work)
    copy_tree(source, work, skip={*data_files, *(p.name for p in source.glob("*.ipynb"))})


@contextlib.contextmanager
def environment(submission: Path, source: Path, data_files, limits: dict | None):
    """The environment of a grading process (a copy of this one's).  With ``limits`` (``memory``
    and ``fsize`` in bytes, ``cpu`` in seconds per process, ``fonts``: :func:`command`),
    :data:`ENV` names a fresh scratch folder for its kernel, holding :func:`scratch_copy` of
    the submission, deleted afterwards without following links; None: unconfined, no copy."""
    env = dict(os.environ)
    if limits is None:
        yield env
        return
    scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX))
    try:
        work, run, connection = scratch / "work", scratch / "run", scratch / "connection"
        run.mkdir()
        connection.mkdir()     # the grader's: bound read-only into the sandbox
        scratch_copy(submission, source, work, data_files)
        env[ENV] = json.dumps({"work": str(work), "run": str(run), "connection": str(connection), **limits})
        yield env
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
