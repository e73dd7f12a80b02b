"""Install any Claude Code release from npm into a cache folder, and run a scenario with it against the fake API.

Nothing here runs during the normal tests: installing needs the npm registry (80-400 MB a release). A release is
installed under `$XDG_CACHE_HOME/inspector-conformance/claude-code-<version>/` (never in the repository). Releases
from 2.1.113 on ship a native binary (`@anthropic-ai/claude-code-linux-x64`); older ones a `cli.js` that node runs.
Each run happens in a sandbox of its own (a throwaway HOME and working folder under
`<tmp>/inspector-conformance/`), so that two runs at once never touch each other's files and no personal path
reaches a transcript.
"""

from __future__ import annotations

import base64
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

from conformance.fake_api import FakeAPI, Logged, Script
from conformance.scenarios import Scenario, Step

DEFAULT_VERSION = "2.1.328"
SANDBOXES = Path(tempfile.gettempdir()) / "inspector-conformance"
FAKE_KEY = "sk-ant-conformance-fake-key"
BINARY_FILE = "base64:"  # a scenario file whose text starts so is written as the bytes it encodes


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "inspector-conformance"


@dataclass(frozen=True)
class Claude:
    """One installed release: how to start it."""

    version: str
    argv: tuple[str, ...]  # the command that starts it: (binary,) or ("node", cli.js)
    kind: str  # "native" or "node"

    def __str__(self) -> str:  # what a logged argv shows instead of the path
        return "claude"

    def supports(self, flag: str) -> bool:
        """Whether this release's `--help` lists a flag (`--debug-file` arrived in 2.1.x: 2.0.76 refuses it)."""
        return flag in _help_text(self.argv)


_HELP: dict[tuple[str, ...], str] = {}


def _help_text(argv: tuple[str, ...]) -> str:
    if argv not in _HELP:
        try:
            p = subprocess.run(
                [*argv, "--help"],
                capture_output=True,
                text=True,
                timeout=120,
                stdin=subprocess.DEVNULL,
                env={k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TERM")} | {"CI": "1"},
            )
            _HELP[argv] = p.stdout + p.stderr
        except (OSError, subprocess.TimeoutExpired):
            _HELP[argv] = ""
    return _HELP[argv]


def _installed(folder: Path, version: str) -> Claude | None:
    native = folder / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64" / "claude"
    if native.is_file():
        return Claude(version, (str(native),), "native")
    cli = folder / "node_modules" / "@anthropic-ai" / "claude-code" / "cli.js"
    if cli.is_file():
        node = shutil.which("node") or "node"
        return Claude(version, (node, str(cli)), "node")
    return None


def install(version: str = DEFAULT_VERSION, log: Any = None) -> Claude:
    """The release `version`, installed with npm on first use: its native binary where it has one, else its
    `cli.js` under node."""
    folder = cache_root() / f"claude-code-{version}"
    have = _installed(folder, version)
    if have is not None:
        return have
    folder.mkdir(parents=True, exist_ok=True)
    if log:
        log(f"installing @anthropic-ai/claude-code@{version} into {folder} (80-400 MB, once)")
    # --ignore-scripts: the wrapper's postinstall only copies the platform binary, which is used in place here
    r = subprocess.run(
        [
            "npm",
            "install",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--prefix",
            str(folder),
            f"@anthropic-ai/claude-code@{version}",
        ],
        capture_output=True,
        text=True,
    )
    have = _installed(folder, version)
    if r.returncode != 0 or have is None:
        raise RuntimeError(f"npm install of Claude Code {version} failed: {r.stderr.strip()[-500:]}")
    return have


@dataclass
class Sandbox:
    """A run's own HOME and working folder (made afresh, removed by `close`)."""

    root: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def projects(self) -> Path:
        return self.home / ".claude" / "projects"

    @classmethod
    def make(cls) -> Sandbox:
        SANDBOXES.mkdir(parents=True, exist_ok=True)
        sb = cls(Path(tempfile.mkdtemp(prefix="run-", dir=SANDBOXES)))
        (sb.home / ".claude").mkdir(parents=True)
        sb.work.mkdir()
        return sb

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


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
    sandbox: Sandbox | None = None
    steps: list[StepRun] = field(default_factory=list)
    debug: str = ""
    settings_after: dict[str, Any] | None = None
    file_times: dict[str, float] = field(default_factory=dict)  # the files made in the working folder: their times

    @property
    def requests(self) -> list[Logged]:
        return [r for st in self.steps for r in st.requests]

    @property
    def exchange(self) -> list[Logged]:
        """The turn and summarize requests, in the order the fake received them (side queries and counts left out)."""
        return [r for r in self.requests if r.kind in ("turn", "summary")]

    def close(self) -> None:
        """Remove the run's sandbox (once what is needed of it was read)."""
        if self.sandbox is not None:
            self.sandbox.close()

    def transcripts(self) -> list[Path]:
        return sorted(p for p in self.projects.rglob("*.jsonl") if "subagents" not in p.parts and not p.name.startswith("agent-"))


def _clean_env(home: Path, url: str, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR")}
    env.update(
        HOME=str(home),
        ANTHROPIC_BASE_URL=url,
        ANTHROPIC_API_KEY=FAKE_KEY,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        CI="1",
    )
    env.update(extra)
    return env


def _shift(transcript: Path, hours: float) -> None:
    """Move every timestamp of a transcript back (to make an idle gap before the next step)."""
    lines = []
    for raw in transcript.read_bytes().splitlines():
        if not raw.strip():
            lines.append(raw)  # a blank line (2.0.76 writes one): kept as it is
            continue
        obj = json.loads(raw)
        ts = obj.get("timestamp")
        if isinstance(ts, str):
            t = datetime.fromisoformat(ts.replace("Z", "+00:00")) - timedelta(hours=hours)
            obj["timestamp"] = t.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        lines.append(json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode())
    transcript.write_bytes(b"\n".join(lines) + b"\n")


def run(
    sc: Scenario,
    claude: Claude,
    version: str | None = None,
    *,
    timeout: float = 600,
    sandbox: Sandbox | None = None,
    resume_id: str | None = None,
) -> Run:
    """Run the scenario's steps in a sandbox of its own (made here unless given; the caller removes it with
    `run.sandbox.close()` once it has saved what it needs)."""
    sb = sandbox or Sandbox.make()
    home, work = sb.home, sb.work
    if sc.settings is not None:
        (home / ".claude" / "settings.json").write_text(json.dumps(sc.settings, indent=2))
    if sc.config is not None:
        (home / ".claude.json").write_text(json.dumps(sc.config, indent=2))
    now = time.time()
    times = {}
    for n, (name, text) in enumerate(sc.files.items()):
        if text.startswith(BINARY_FILE):  # a binary file (an image), given as base64
            (work / name).write_bytes(base64.b64decode(text[len(BINARY_FILE) :]))
        else:
            (work / name).write_text(text)
        # the files' ages in the order given, a minute apart: Claude Code orders what it re-attaches by the file
        # times it stored, and files written in the same instant would make that order a coin toss
        age = now - 60 * (len(sc.files) - n)
        os.utime(work / name, (age, age))
        times[str(work / name)] = age
    result = Run(sc, version or claude.version, sb.projects, sandbox=sb, file_times=times)
    debug = home / "debug.log"
    session_id: str | None = resume_id
    if sc.repl:
        _run_repl(sc, claude, result, debug)
    for step in () if sc.repl else sc.steps:
        script = _step_script(step, sc, work)
        if step.shift_hours:
            for t in result.transcripts():
                _shift(t, step.shift_hours)
            # the working files age with the transcripts: Claude Code orders what it re-attaches by the times it
            # holds for each file, a file's modification time beside the transcript's times of the reads it restores
            # on --resume; moving only one of the two back would make an order no real idle gap makes
            for f in (x for x in work.rglob("*") if x.is_file()):
                st = f.stat()
                os.utime(f, (st.st_atime - step.shift_hours * 3600, st.st_mtime - step.shift_hours * 3600))
        with FakeAPI(script) as fake:
            argv = [*claude.argv, "-p", step.prompt, "--model", step.model or sc.model, "--allowedTools", sc.tool]
            if claude.supports("--debug-file"):
                argv += ["--debug-file", str(debug)]
            if (step.resume == "resume" or (resume_id and step is sc.steps[0])) and session_id:
                argv += ["--resume", session_id]
            elif step.resume == "fork" and session_id:  # a new session that starts with a copy of this one's records
                argv += ["--resume", session_id, "--fork-session"]
            elif step.resume == "continue":
                argv += ["--continue"]
            argv += list(step.args)
            t0 = time.monotonic()
            try:
                p = subprocess.run(
                    argv,
                    cwd=work,
                    env=_clean_env(home, fake.url, sc.env),
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                    stdin=subprocess.DEVNULL,
                )
                rc, out, err = p.returncode, p.stdout, p.stderr
            except subprocess.TimeoutExpired as exc:
                rc, out, err = -9, str(exc.stdout or ""), f"timed out after {timeout:g} s"
            _take_debug(result, debug, len(result.steps))
            shown = ["claude", *argv[len(claude.argv) :]]
            result.steps.append(StepRun(shown, rc, out, err, list(fake.log), time.monotonic() - t0))
        ts = result.transcripts()
        if ts and session_id is None:
            session_id = max(ts, key=lambda q: q.stat().st_mtime).stem
    sp = home / ".claude" / "settings.json"
    result.settings_after = json.loads(sp.read_text()) if sp.exists() else None
    return result


def _step_script(step: Step, sc: Scenario, work: Path) -> Script:
    """A step's script for the fake, its `{work}` placeholders made the run's working folder."""
    return replace(
        step.script,
        cmd=step.script.cmd.replace("{work}", str(work)),
        tool=sc.tool.split(",")[0],
        calls=tuple((t, json.dumps(str(work))[1:-1].join(inp.split("{work}"))) for t, inp in step.script.calls),
    )


def _take_debug(result: Run, debug: Path, step: int) -> None:
    """Move the debug log's lines into the run under a marker of their step (the file is appended to)."""
    if debug.exists():
        result.debug += f"=== step {step} ===\n" + debug.read_text(errors="replace")
        debug.unlink()


def _run_repl(sc: Scenario, claude: Claude, result: Run, debug: Path) -> None:
    """Every step of the scenario typed into one REPL (conformance.repl): a prompt with its script, or a partial
    compaction from the rewind menu followed by "go on"."""
    from conformance.repl import ReplSession

    sb = result.sandbox
    assert sb is not None
    with FakeAPI(sc.steps[0].script) as fake:
        t0 = time.monotonic()
        repl = None
        try:
            # the default permission mode: some models start the REPL in auto mode, whose tool calls wait for a
            # server-side classifier review the fake API cannot give (the tools are denied and the run stalls)
            mode = ("--permission-mode", "default") if claude.supports("--permission-mode") else ()
            repl = ReplSession(
                claude,
                sb,
                fake,
                model=sc.model,
                env_extra=dict(sc.env),
                tools=sc.tool,
                debug_file=debug if claude.supports("--debug-file") else None,
                args=mode,
            )
            for step in sc.steps:
                n, t1 = len(fake.log), time.monotonic()
                script = _step_script(step, sc, sb.work)
                if step.rewind is not None:
                    what = repl.rewind(*step.rewind, script=script)
                    argv = ["claude", "(REPL: Esc Esc)", what]
                else:
                    repl.prompt(step.prompt, script, answer=step.answer)
                    argv, what = ["claude", "(REPL)", step.prompt], ""
                result.steps.append(StepRun(argv, 0, what, "", list(fake.log[n:]), time.monotonic() - t1))
            rc = repl.quit()
            if rc not in (0, 1) and result.steps:
                result.steps[-1].returncode = rc
        except (TimeoutError, RuntimeError) as exc:
            result.steps.append(StepRun(["claude", "(REPL)"], -9, "", str(exc), list(fake.log), time.monotonic() - t0))
        finally:
            if repl is not None:
                repl.close()
    _take_debug(result, debug, 0)  # one process: its lines are all step 0's


def cache_paths(obj: Any, path: tuple[Any, ...] = ()) -> list[list[Any]]:
    """Where a request carries cache breakpoints: [path, marker] for each `cache_control` (the path as Claude Code's
    api-request rows write it: ["messages", 3, "content", 1])."""
    out: list[list[Any]] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "cache_control":
                out.append([list(path), v])
            elif isinstance(v, (dict, list)):
                out += cache_paths(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            if isinstance(v, (dict, list)):
                out += cache_paths(v, path + (i,))
    return out


def canonical(obj: Any) -> Any:
    """Keys sorted, `cache_control` left out, a message's string content as its one text block: how Claude Code
    hashes a request's parts (format-2.1.3xx.md §3.4), and what the API reads the same either way."""
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
            item: dict[str, Any] = {
                "step": n,
                "path": q.path,
                "kind": q.kind,
                "answer": q.answer,
                "tokens": q.tokens,
                "headers": q.headers,
            }
            if q.error:
                item["error"] = q.error
            if q.reply_id:
                item["reply_id"] = q.reply_id
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
            item["cache"] = cache_paths(body)
            log.append(item)
    (dst / "requests.json").write_text(json.dumps({"version": r.version, "requests": log, **parts}, indent=1, sort_keys=True))
    (dst / "run.json").write_text(
        json.dumps(
            {
                "scenario": r.scenario.name,
                "version": r.version,
                "model": r.scenario.model,
                "env": r.scenario.env,
                "settings": r.scenario.settings,
                "settings_after": r.settings_after,
                "work": str(r.sandbox.work) if r.sandbox else None,
                "home": str(r.sandbox.home) if r.sandbox else None,
                "file_times": r.file_times,
                "steps": [
                    {
                        "argv": st.argv,
                        "returncode": st.returncode,
                        "stdout": st.stdout[-2000:],
                        "stderr": st.stderr[-2000:],
                        "seconds": round(st.seconds, 2),
                        "shift_hours": step.shift_hours,
                        **({"rewind": list(step.rewind)} if step.rewind else {}),
                    }
                    for st, step in zip(r.steps, r.scenario.steps)
                ],
            },
            indent=1,
        )
    )
    (dst / "debug.log").write_text(
        "\n".join(
            ln
            for ln in r.debug.splitlines()
            if "autocompact" in ln or "thresholdSource" in ln or ln.startswith("=== step ") or "compact" in ln.lower()
        )
    )
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
