"""Install a pinned Claude Code from npm into a cache folder, and run a scenario with it against the fake API.

Nothing here runs during the normal tests: installing needs the npm registry and about 400 MB. The binary is
installed under `$XDG_CACHE_HOME/inspector-conformance/claude-code-<version>/` (never in the repository); a run
happens in a throwaway HOME and a working folder with a fixed, neutral name in the system temp folder
(`<tmp>/inspector-conformance/work`), so no personal path reaches a transcript.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from conformance.fake_api import FakeAPI, Logged
from conformance.scenarios import Scenario

DEFAULT_VERSION = "2.1.328"
WORK = Path(tempfile.gettempdir()) / "inspector-conformance" / "work"
HOME = Path(tempfile.gettempdir()) / "inspector-conformance" / "home"
FAKE_KEY = "sk-ant-conformance-fake-key"


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "inspector-conformance"


def install(version: str = DEFAULT_VERSION, log: Any = None) -> Path:
    """The path of the `claude` binary of that version, installed with npm on first use."""
    folder = cache_root() / f"claude-code-{version}"
    binary = folder / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64" / "claude"
    if binary.is_file():
        return binary
    folder.mkdir(parents=True, exist_ok=True)
    if log:
        log(f"installing @anthropic-ai/claude-code@{version} into {folder} (about 400 MB, once)")
    # --ignore-scripts: the wrapper's postinstall only copies the platform binary, which is used in place here
    r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "--prefix", str(folder),
                        f"@anthropic-ai/claude-code@{version}"], capture_output=True, text=True)
    if r.returncode != 0 or not binary.is_file():
        raise RuntimeError(f"npm install of Claude Code {version} failed: {r.stderr.strip()[-500:]}")
    return binary


@dataclass
class StepRun:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    requests: list[Logged]
    seconds: float


@dataclass
class Run:
    """What one scenario left: the projects folder of its HOME, the requests the fake received, the debug log."""

    scenario: Scenario
    version: str
    projects: Path  # <HOME>/.claude/projects
    steps: list[StepRun] = field(default_factory=list)
    debug: str = ""
    settings_after: dict[str, Any] | None = None

    @property
    def requests(self) -> list[Logged]:
        return [r for st in self.steps for r in st.requests]

    def transcripts(self) -> list[Path]:
        return sorted(p for p in self.projects.rglob("*.jsonl") if "subagents" not in p.parts)


def _clean_env(home: Path, url: str, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR")}
    env.update(HOME=str(home), ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY=FAKE_KEY, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
               DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1", CI="1")
    env.update(extra)
    return env


def _shift(transcript: Path, hours: float) -> None:
    """Move every timestamp of a transcript back (to make an idle gap before the next step)."""
    lines = []
    for raw in transcript.read_bytes().splitlines():
        obj = json.loads(raw)
        ts = obj.get("timestamp")
        if isinstance(ts, str):
            t = datetime.fromisoformat(ts.replace("Z", "+00:00")) - timedelta(hours=hours)
            obj["timestamp"] = t.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        lines.append(json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode())
    transcript.write_bytes(b"\n".join(lines) + b"\n")


def run(sc: Scenario, binary: Path, version: str, *, timeout: float = 600) -> Run:
    """Run the scenario's steps; the HOME and working folder are made afresh."""
    for d in (HOME, WORK):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    (HOME / ".claude").mkdir()
    if sc.settings is not None:
        (HOME / ".claude" / "settings.json").write_text(json.dumps(sc.settings, indent=2))
    for name, text in sc.files.items():
        (WORK / name).write_text(text)
    result = Run(sc, version, HOME / ".claude" / "projects")
    debug = HOME / "debug.log"
    session_id: str | None = None
    for step in sc.steps:
        script = replace(step.script, cmd=step.script.cmd.replace("{work}", str(WORK)), tool=sc.tool)
        if step.shift_hours:
            for t in result.transcripts():
                _shift(t, step.shift_hours)
        with FakeAPI(script) as fake:
            argv = [str(binary), "-p", step.prompt, "--model", sc.model, "--allowedTools", sc.tool, "--debug-file", str(debug)]
            if step.resume == "resume" and session_id:
                argv += ["--resume", session_id]
            elif step.resume == "continue":
                argv += ["--continue"]
            argv += list(step.args)
            t0 = time.monotonic()
            try:
                p = subprocess.run(argv, cwd=WORK, env=_clean_env(HOME, fake.url, sc.env), capture_output=True, text=True,
                                   timeout=timeout)
                rc, out, err = p.returncode, p.stdout, p.stderr
            except subprocess.TimeoutExpired as exc:
                rc, out, err = -9, str(exc.stdout or ""), f"timed out after {timeout:g} s"
            result.steps.append(StepRun([a if a != str(binary) else "claude" for a in argv], rc, out, err, list(fake.log),
                                        time.monotonic() - t0))
        ts = result.transcripts()
        if ts and session_id is None:
            session_id = max(ts, key=lambda q: q.stat().st_mtime).stem
    result.debug = debug.read_text(errors="replace") if debug.exists() else ""
    sp = HOME / ".claude" / "settings.json"
    result.settings_after = json.loads(sp.read_text()) if sp.exists() else None
    return result


def canonical(obj: Any) -> Any:
    """Keys sorted, `cache_control` left out, a message's string content as its one text block: how Claude Code
    hashes a request's parts (claude-code-2.1.328.md §3.4), and what the API reads the same either way."""
    if isinstance(obj, dict):
        out = {k: canonical(v) for k, v in sorted(obj.items()) if k != "cache_control"}
        if "role" in out and isinstance(out.get("content"), str):
            out["content"] = [{"text": out["content"], "type": "text"}]
        return out
    if isinstance(obj, list):
        return [canonical(v) for v in obj]
    return obj


def digest(obj: Any) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(canonical(obj), separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()


def save(r: Run, out: Path) -> Path:
    """Keep what a run left in `out/<scenario>/`: the projects folder, the requests (each distinct message, system
    prompt and tool list stored once), the debug log and how each step ran. Small enough to commit as a golden."""
    dst = out / r.scenario.name
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    if r.projects.is_dir():
        shutil.copytree(r.projects, dst / "projects", symlinks=True)
    parts: dict[str, dict[str, Any]] = {"messages": {}, "system": {}, "tools": {}}
    log = []
    for n, st in enumerate(r.steps):
        for q in st.requests:
            body = q.body
            item: dict[str, Any] = {"step": n, "path": q.path, "kind": q.kind, "answer": q.answer, "tokens": q.tokens,
                                    "headers": q.headers}
            for key in ("system", "tools"):
                if key in body:
                    h = digest(body[key])
                    parts[key].setdefault(h, body[key])
                    item[key] = h
            if "messages" in body:
                hs = []
                for m in body["messages"]:
                    h = digest(m)
                    parts["messages"].setdefault(h, m)
                    hs.append(h)
                item["messages"] = hs
            item["params"] = {k: v for k, v in body.items() if k not in ("system", "tools", "messages", "metadata")}
            log.append(item)
    (dst / "requests.json").write_text(json.dumps({"version": r.version, "requests": log, **parts}, indent=1, sort_keys=True))
    (dst / "run.json").write_text(json.dumps({
        "scenario": r.scenario.name, "version": r.version, "model": r.scenario.model, "env": r.scenario.env,
        "settings": r.scenario.settings, "settings_after": r.settings_after, "work": str(WORK), "home": str(HOME),
        "steps": [{"argv": st.argv, "returncode": st.returncode, "stdout": st.stdout[-2000:], "stderr": st.stderr[-2000:],
                   "seconds": round(st.seconds, 2)} for st in r.steps]}, indent=1))
    (dst / "debug.log").write_text("\n".join(ln for ln in r.debug.splitlines() if "autocompact" in ln or "thresholdSource" in ln
                                             or "compact" in ln.lower()))
    return dst


def load_requests(folder: Path) -> list[dict[str, Any]]:
    """The requests a saved run logged, with their messages, system prompt and tools put back."""
    data = json.loads((folder / "requests.json").read_text())
    out = []
    for item in data["requests"]:
        q = dict(item)
        if "messages" in q:
            q["messages"] = [data["messages"][h] for h in q["messages"]]
        for key in ("system", "tools"):
            if key in q:
                q[key] = data[key][q[key]]
        out.append(q)
    return out
