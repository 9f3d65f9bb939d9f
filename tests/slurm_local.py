"""A throwaway one-machine Slurm for tests: munged, slurmctld and slurmd on localhost.

    with LocalSlurm(tmp_path) as slurm:
        slurm.sbatch(["job.sh"])

Everything lives in a temporary folder (configuration, munge key and socket, state,
logs); the daemons use free ports and are stopped on exit, so a site's own Slurm, if
any, is left alone.  Needs root (slurmd starts jobs as their user) and Debian's
``slurm-wlm`` and ``munge``; :func:`missing` says what is absent.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import psutil

from .mpirun import running

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "srun", "sinfo", "scontrol")
#: states of a job that has ended (``scontrol show job``)
ENDED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL",
         "DEADLINE", "PREEMPTED"}


def missing() -> str | None:
    """Why a local Slurm cannot be started here (None if it can)."""
    absent = [d for d in DAEMONS if not shutil.which(d) and not Path("/usr/sbin", d).exists()]
    if absent:
        return f"{', '.join(absent)} not installed (apt-get install slurm-wlm munge)"
    if os.geteuid() != 0:
        return "starting slurmd needs root"
    return None


def _exe(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalSlurm:
    """A one-node cluster named ``kit`` with one partition, started in ``folder``."""

    #: longest path of a Unix socket slurmd makes in its spool folder (a step's, for node
    #: ``localhost``), in bytes: the folder must leave room for it under the system's limit (108)
    SOCKET_NAME = len("/spool/localhost_4294967295.4294967291")

    def __init__(self, folder: Path, cpus: int | None = None):
        self.dir = Path(folder)
        if len(str(self.dir)) + self.SOCKET_NAME >= 108:
            raise ValueError(f"{folder}: too long a path for the cluster's sockets (slurmd's steps would "
                             "never start): give a folder of at most 70 characters")
        self.cpus = cpus or os.cpu_count() or 1
        self.conf = self.dir / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))

    def _write_config(self) -> None:
        d = self.dir
        for sub in ("state", "spool", "log", "munge"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        key = d / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        self.socket = d / "munge" / "socket"
        host = socket.gethostname()
        self.conf.write_text(f"""\
ClusterName=kit
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={self.socket}
CryptoType=crypto/munge
MpiDefault=pmi2
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
ReturnToService=2
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=localhost NodeHostname={host} CPUs={self.cpus} State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
""")

    def __enter__(self) -> "LocalSlurm":
        reason = missing()
        if reason:
            raise RuntimeError(reason)
        self._write_config()
        d = self.dir / "munge"
        subprocess.run([_exe("munged"), "--force", f"--key-file={d / 'munge.key'}",
                        f"--socket={self.socket}", f"--pid-file={d / 'pid'}",
                        f"--log-file={d / 'log'}", f"--seed-file={d / 'seed'}"],
                       check=True, capture_output=True, text=True, env=self.env, timeout=30)
        subprocess.run([_exe("slurmctld"), "-i", "-f", str(self.conf)], check=True,
                       capture_output=True, text=True, env=self.env, timeout=30)
        subprocess.run([_exe("slurmd"), "-f", str(self.conf), "-N", "localhost"], check=True,
                       capture_output=True, text=True, env=self.env, timeout=30)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = self.run(["sinfo", "-h", "-o", "%t"], check=False).stdout.strip()
            if state == "idle":
                return self
            time.sleep(0.1)
        self.__exit__(None, None, None)
        raise RuntimeError(f"the local Slurm did not come up (node state {state!r}); "
                           f"logs in {self.dir / 'log'}")

    def run(self, cmd: list[str], *, timeout: float = 120, check: bool = True, cwd=None,
            env: dict | None = None) -> subprocess.CompletedProcess:
        """Run a Slurm client command against this cluster."""
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                             env={**self.env, **(env or {})})
        if check and res.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} exited {res.returncode}\n--- stdout\n"
                                 f"{res.stdout}\n--- stderr\n{res.stderr}")
        return res

    def sbatch(self, args: list[str], *, timeout: float = 120, cwd=None,
               env: dict | None = None) -> subprocess.CompletedProcess:
        """``sbatch --parsable ARGS``, then wait until the job has ended, as ``sbatch --wait``
        does, but asking every 0.1 s (``sbatch --wait`` asks after 2 s, then less and less
        often: a job of a second took it 2 or 10 s).  ``stdout``: sbatch's (the job id);
        ``returncode``: the job's exit status (the first number of Slurm's ExitCode; 1 if
        it ended otherwise), or sbatch's own if it refused the job."""
        res = self.run(["sbatch", "--parsable", *args], timeout=timeout, check=False, cwd=cwd, env=env)
        if res.returncode != 0:
            return res
        job = res.stdout.strip().split(";")[0]
        deadline = time.monotonic() + timeout
        while True:
            shown = self.run(["scontrol", "--oneliner", "show", "job", job], timeout=30).stdout
            fields = dict(f.split("=", 1) for f in shown.split() if "=" in f)
            if fields.get("JobState") in ENDED:
                code = int(fields.get("ExitCode", "1:0").split(":")[0]) or int(fields["JobState"] != "COMPLETED")
                return subprocess.CompletedProcess(res.args, code, res.stdout, res.stderr)
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(res.args, timeout, output=shown)
            time.sleep(0.1)

    def log(self) -> str:
        """The daemons' logs, for failure messages."""
        return "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}"
                         for p in sorted((self.dir / "log").glob("*.log")))

    def __exit__(self, *exc) -> None:
        subprocess.run(["scancel", "--quiet", "-u", str(os.getuid())], env=self.env,
                       capture_output=True, timeout=30)
        # both Slurm daemons at once, then munged, which they use
        for pidfiles in ((self.dir / "slurmd.pid", self.dir / "slurmctld.pid"), (self.dir / "munge" / "pid",)):
            procs = []
            for pidfile in pidfiles:
                try:
                    proc = psutil.Process(int(pidfile.read_text().split()[0]))
                    proc.send_signal(signal.SIGTERM)
                    procs.append(proc)
                except (OSError, ValueError, IndexError, psutil.Error):
                    continue
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and any(running(p) for p in procs):
                time.sleep(0.05)
