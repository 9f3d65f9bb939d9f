"""A Jupyter server with nbgrader's Formgrader on a course, as an instructor starts it (``jupyter
lab`` in ``labs/``), for tests: its address, token and log; stopped with its process group."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path


class Formgrader:
    def __init__(self, base: str, token: str, log: Path):
        self.base, self.token, self.log = base, token, log

    def request(self, path: str, method: str = "GET", body=None) -> tuple[int, str]:
        """(HTTP status, body) of ``path`` on the server, authenticated by the token."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return r.status, r.read().decode("utf-8")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode("utf-8", "replace")

    def said(self) -> str:
        return self.log.read_text(errors="replace")

    def errors(self, tracebacks: bool = True) -> list[str]:
        """Lines of the server's log that report a server error (:func:`server_errors`)."""
        return server_errors(self.said(), tracebacks=tracebacks)


def server_errors(said: str, tracebacks: bool = True) -> list[str]:
    """Lines of a Jupyter server's log that report an HTTP 5xx answer and, with ``tracebacks``, a
    traceback or a missing template (a request line reads ``[E 2026-11-29 00:12:25.500 ServerApp]
    500 GET /formgrader ...``; the milliseconds of its time stamp are not a status).  Without
    ``tracebacks`` for a page whose refusals nbgrader logs with their traceback."""
    pattern = r"\] 5\d\d [A-Z]+ /" + (r"|Traceback|TemplateNotFound" if tracebacks else "")
    return [line for line in said.splitlines() if re.search(pattern, line)]


@contextlib.contextmanager
def formgrader(course: Path, tmp: Path):
    """A Jupyter server rooted at ``course`` (its ``nbgrader_config.py`` read), on a free port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = "kit-formgrader-test"
    tmp.mkdir(parents=True, exist_ok=True)
    log_path = tmp / "server.log"
    log = open(log_path, "w")
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"), "JUPYTER_DATA_DIR": str(tmp / "data"),
           "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]])}
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter_server", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--ServerApp.token={token}", f"--ServerApp.root_dir={course}", "--ServerApp.port_retries=0", "--allow-root"],
        cwd=course, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    fg = Formgrader(f"http://127.0.0.1:{port}", token, log_path)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, fg.said()[-3000:]
            try:
                if fg.request("/api/status")[0] == 200:
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            assert time.monotonic() < deadline, "the Jupyter server did not start within 120 s"
            time.sleep(0.5)
        yield fg
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(10)
        log.close()
