"""A real headless Chromium, driven over the DevTools protocol on a pipe (no extra package): open a page, hear every
request it makes and every console message, error and CSP report, and evaluate an expression in it."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--remote-debugging-pipe",
]


def find() -> str | None:
    return next((p for name in ("chromium", "chromium-browser", "google-chrome") if (p := shutil.which(name))), None)


@dataclass
class Visit:
    requests: list[str] = field(default_factory=list)  # every URL the page asked for (its own file first)
    console: list[tuple[str, str]] = field(default_factory=list)  # (level, text): console calls and log entries
    exceptions: list[str] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)  # expression -> its value in the page

    def errors(self) -> list[str]:
        return self.exceptions + [t for level, t in self.console if level in ("error", "warning", "assert")]


class _Pipe:
    def __init__(self, proc: subprocess.Popen[bytes], to_fd: int, from_fd: int) -> None:
        self.proc, self.to_fd, self.from_fd = proc, to_fd, from_fd
        self.buf = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> int:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_fd, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def read(self, timeout: float) -> dict[str, Any] | None:
        end = time.monotonic() + timeout
        while b"\0" not in self.buf:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.from_fd], [], [], left)[0]:
                return None
            chunk = os.read(self.from_fd, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self.buf += chunk
        raw, _, self.buf = self.buf.partition(b"\0")
        return json.loads(raw)

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None, timeout: float = 30) -> Any:
        want = self.send(method, params, session)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            msg = self.read(end - time.monotonic())
            if msg is None:
                break
            if msg.get("id") == want:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)
        raise TimeoutError(method)

    def wait_for(self, method: str, timeout: float) -> bool:
        if any(e.get("method") == method for e in self.events):
            return True
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            msg = self.read(end - time.monotonic())
            if msg is None:
                return False
            self.events.append(msg)
            if msg.get("method") == method:
                return True
        return False


def visit(url: str, expressions: tuple[str, ...] = (), settle: float = 1.0, binary: str | None = None) -> Visit:
    """Open `url` in a fresh headless Chromium and report what the page did."""
    exe = binary or find()
    if exe is None:
        raise FileNotFoundError("chromium")
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()

    def fds() -> None:  # the DevTools pipe is the child's fd 3 (it reads) and fd 4 (it writes)
        a, b = os.dup(to_child_r), os.dup(from_child_w)  # out of the way of 3 and 4 first
        os.dup2(a, 3)
        os.dup2(b, 4)
        os.set_inheritable(3, True)
        os.set_inheritable(4, True)

    with tempfile.TemporaryDirectory(prefix="inspector-chromium-") as profile:
        proc = subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            preexec_fn=fds,
            close_fds=False,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        pipe = _Pipe(proc, to_child_w, from_child_r)
        out = Visit()
        try:
            target = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            sid = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Network", "Runtime", "Log", "Page"):
                pipe.call(f"{domain}.enable", session=sid)
            pipe.events.clear()
            pipe.call("Page.navigate", {"url": url}, session=sid)
            if not pipe.wait_for("Page.loadEventFired", 60):
                raise TimeoutError(f"{url} did not finish loading")
            pipe.wait_for("never", settle)  # late requests and messages
            for e in expressions:
                r = pipe.call("Runtime.evaluate", {"expression": e, "returnByValue": True}, session=sid)
                out.values[e] = r.get("result", {}).get("value")
            for ev in pipe.events:
                m, p = ev.get("method"), ev.get("params", {})
                if m == "Network.requestWillBeSent":
                    out.requests.append(p["request"]["url"])
                elif m == "Runtime.consoleAPICalled":
                    out.console.append(
                        (p.get("type", ""), " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
                    )
                elif m == "Log.entryAdded":
                    out.console.append((p["entry"].get("level", ""), p["entry"].get("text", "")))
                elif m == "Runtime.exceptionThrown":
                    out.exceptions.append(json.dumps(p.get("exceptionDetails", {}))[:500])
            try:
                pipe.send("Browser.close")
            except OSError:
                pass
        finally:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            os.close(to_child_w)
            os.close(from_child_r)
    return out
