"""A small headless-Chromium driver over the Chrome DevTools Protocol (websocket-client).

Enough to load a page, record what it requested and logged, evaluate JavaScript and
send real mouse events.  Chromium is Debian's ``chromium`` (``CHROMIUM`` overrides the
executable); it runs with a fresh profile, no background services, and a host-resolver
rule that makes every host but 127.0.0.1/localhost unresolvable, so a page under test
can try to reach the internet (the test sees the attempt) but never does.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import websocket

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-dev-shm-usage",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-extensions", "--disable-default-apps", "--no-default-browser-check",
    "--disable-domain-reliability", "--disable-client-side-phishing-detection", "--no-pings",
    "--metrics-recording-only", "--mute-audio", "--hide-scrollbars", "--window-size=1280,900",
    "--disable-features=Translate,OptimizationHints,MediaRouter,DnsOverHttps,AutofillServerCommunication",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
]


def chromium_or_skip() -> str:
    """:func:`find_chromium`, or the test skipped (failed under ``CI``, where it is required)."""
    import pytest

    exe = find_chromium()
    if exe is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("chromium not found: required in CI")
        pytest.skip("chromium not found (apt-get install chromium)")
    return exe


def find_chromium() -> str | None:
    """The Chromium executable: $CHROMIUM, else chromium / chromium-browser on PATH."""
    env = os.environ.get("CHROMIUM")
    if env:
        return shutil.which(env) or (env if Path(env).is_file() else None)
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


class CDPError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with one page, driven over CDP.  Use as a context manager."""

    def __init__(self, executable: str, profile: Path, timeout: float = 30.0):
        self.timeout = timeout
        self.profile = Path(profile)
        self.profile.mkdir(parents=True, exist_ok=True)
        self.log = open(self.profile / "chromium.log", "wb")
        self.proc = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-port=0",
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            port = self._port()
            # Chromium's messages are UTF-8 JSON: checking each byte in Python (websocket-client's
            # default) took 1.7 of the crawl's 4 CPU-s on this side
            self.ws = websocket.create_connection(self._page_ws(port), timeout=timeout,
                                                  suppress_origin=True, enable_multithread=False,
                                                  skip_utf8_validation=True)
        except BaseException:
            self.close()
            raise
        self._next = 0
        self.events: list[dict] = []
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.call(f"{domain}.enable")

    # -- process -----------------------------------------------------------------------
    def _port(self) -> int:
        marker = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise CDPError(f"chromium exited with {self.proc.returncode}; see {self.profile / 'chromium.log'}")
            if marker.is_file():
                lines = marker.read_text().split()
                if lines:
                    return int(lines[0])
            time.sleep(0.1)
        raise CDPError(f"chromium did not open its DevTools port within {self.timeout} s")

    def _page_ws(self, port: int) -> str:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
                pages = [t for t in json.load(r) if t.get("type") == "page"]
            if pages:
                return pages[0]["webSocketDebuggerUrl"]
            time.sleep(0.1)
        raise CDPError("chromium has no page target")

    def close(self) -> None:
        ws = getattr(self, "ws", None)
        if ws is not None:
            try:
                ws.close()
            except Exception:
                pass
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(10)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(10)
        self.log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- protocol ----------------------------------------------------------------------
    def _receive(self, timeout: float) -> dict | None:
        self.ws.settimeout(max(timeout, 0.01))
        try:
            msg = json.loads(self.ws.recv())
        except websocket.WebSocketTimeoutException:
            return None
        if "method" in msg:
            self.events.append(msg)
        return msg

    def call(self, method: str, **params) -> dict:
        """Send a command and return its result (events received meanwhile are recorded)."""
        self._next += 1
        mid = self._next
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            msg = self._receive(deadline - time.monotonic())
            if msg is not None and msg.get("id") == mid:
                if "error" in msg:
                    raise CDPError(f"{method}: {msg['error']}")
                return msg.get("result", {})
        raise CDPError(f"{method}: no answer within {self.timeout} s")

    def pump(self, seconds: float) -> None:
        """Record events for ``seconds``."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self._receive(deadline - time.monotonic())

    def evaluate(self, expression: str, *, await_promise: bool = False):
        """Value of a JavaScript expression (JSON-serialisable), raising on a JS exception."""
        res = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                        awaitPromise=await_promise, timeout=int(self.timeout * 1000))
        if "exceptionDetails" in res:
            raise CDPError(f"JavaScript error: {res['exceptionDetails'].get('exception', res['exceptionDetails'])}")
        return res["result"].get("value")

    # -- pages -------------------------------------------------------------------------
    def load(self, url: str, *, quiet: float = 0.1, limit: float = 60.0) -> list[dict]:
        """Navigate to ``url``, wait for the load event and for the network to stay idle (no
        request in flight, no event) for ``quiet`` seconds (at most ``limit``), and return the
        events of this load.  After their load event the book's pages log little (the first
        page loads one more file, the index's redirect starts the next load): an event or a
        request in flight restarts the wait, and what a page logs after it is still recorded
        in :attr:`events` for the checks that follow."""
        self.events = []
        res = self.call("Page.navigate", url=url)
        if res.get("errorText"):
            raise CDPError(f"{url}: {res['errorText']}")
        deadline = time.monotonic() + limit
        while not any(e["method"] == "Page.loadEventFired" for e in self.events):
            if time.monotonic() > deadline:
                raise CDPError(f"{url}: no load event within {limit} s")
            self._receive(deadline - time.monotonic())
        idle_since = time.monotonic()
        while time.monotonic() < deadline:
            n = len(self.events)
            self.pump(0.1)
            if len(self.events) != n or self.in_flight():
                idle_since = time.monotonic()
            elif time.monotonic() - idle_since >= quiet:
                break
        return list(self.events)

    def in_flight(self) -> int:
        started, done = set(), set()
        for e in self.events:
            m = e["method"]
            if m == "Network.requestWillBeSent":
                started.add(e["params"]["requestId"])
            elif m in ("Network.loadingFinished", "Network.loadingFailed"):
                done.add(e["params"]["requestId"])
        return len(started - done)

    def drag(self, x0: float, y: float, x1: float, steps: int = 8) -> None:
        """Press the left button at (x0, y), move to (x1, y), release: a real drag."""
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x0, y=y)
        self.call("Input.dispatchMouseEvent", type="mousePressed", x=x0, y=y, button="left", clickCount=1)
        for k in range(1, steps + 1):
            self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x0 + (x1 - x0) * k / steps, y=y,
                      button="left", buttons=1)
        self.call("Input.dispatchMouseEvent", type="mouseReleased", x=x1, y=y, button="left", clickCount=1)

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=False)["data"]
        Path(path).write_bytes(base64.b64decode(data))
