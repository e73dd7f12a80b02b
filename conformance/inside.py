"""inspector inside Claude Code (issue 26), checked with the real binary against the fake API:

- `statusline`: the REPL in tmux with the statusLine setting pointing at `inspector statusline`; the line it shows
  must carry the number `inspector tokens --at <leaf>` gives for the transcript the run wrote, and the JSON Claude
  Code piped is kept to show which fields the release sends.
- `mcp`: print mode with `--mcp-config` naming `inspector mcp`; the fake API calls one of its tools, and the next
  request's tool result must be inspector's answer.
- `hook`: print mode with the SessionEnd hook set to `inspector hook`; the archive must then hold the transcript
  byte for byte.

    python -m conformance --inside [--version V]
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.fake_api import FakeAPI, Script, _text_of
from conformance.runner import Claude, Sandbox

PYTHON = sys.executable  # the Python this inspector runs under (installed, or this checkout on sys.path)
ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    facts: dict[str, Any] = field(default_factory=dict)


def _inspector(*args: str, env: dict[str, str] | None = None, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    e = dict(os.environ if env is None else env)
    e["PYTHONPATH"] = str(ROOT) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    return subprocess.run([PYTHON, "-m", "inspector", *args], input=stdin, capture_output=True, env=e, timeout=120)


def _command(sb: Sandbox, name: str, args: str, *, keep_stdin: bool = False) -> str:
    """A script in the sandbox that runs this inspector (optionally keeping the stdin Claude Code piped to it)."""
    script = sb.root / f"{name}.sh"
    keep = f"tee {shlex.quote(str(sb.root / (name + '-stdin.json')))} | " if keep_stdin else ""
    script.write_text(
        f"#!/bin/sh\nexport PYTHONPATH={shlex.quote(str(ROOT))}\n{keep}exec {shlex.quote(PYTHON)} -m inspector {args}\n"
    )
    script.chmod(0o755)
    return str(script)


def statusline_check(claude: Claude, model: str = "claude-sonnet-4-5") -> Check:
    """The REPL shows inspector's line; its number is `inspector tokens`' count at the leaf."""
    from conformance.repl import _screen, _wait, unguarded_repl

    sb = Sandbox.make()
    try:
        cmd = _command(
            sb, "statusline", "statusline --no-color --format 'SL used={used} left={left} level={level}'", keep_stdin=True
        )
        (sb.home / ".claude" / "settings.json").write_text(json.dumps({"statusLine": {"type": "command", "command": cmd}}))
        sizes = (40_000, 60_000, 90_000)
        with FakeAPI(Script(turns=len(sizes) - 1, sizes=sizes)) as fake:
            repl = unguarded_repl(claude, sb, fake, model)
            try:
                repl.prompt("run the checks", fake.script)
                time.sleep(2)  # the line is run again after the last message (debounced)
                screen = _wait(repl.name, lambda s: "SL used=" in s, 30, "inspector's statusline")
                time.sleep(1.5)
                screen = _screen(repl.name)
            finally:
                repl.close()
        m = re.findall(r"SL used=(\d+) left=(-?\d+|) level=(\w+)", screen)
        transcripts = sorted(p for p in sb.projects.rglob("*.jsonl") if "subagents" not in p.parts)
        stdin_file = sb.root / "statusline-stdin.json"
        piped = json.loads(stdin_file.read_text()) if stdin_file.is_file() else {}
        if not m or not transcripts:
            return Check(
                "statusline", False, f"no line on the screen ({len(transcripts)} transcripts)", {"screen": screen[-800:]}
            )
        shown = int(m[-1][0])
        path = transcripts[-1]
        from inspector.transcript.session import Session

        s = Session.load(path)
        leaf = s.conversation.leaf_uuid
        s.close()
        tok = _inspector("tokens", str(path), "--at", str(leaf), "--json")
        at = [json.loads(ln).get("at") for ln in tok.stdout.decode().splitlines() if ln.strip()]
        want = next((a["token_count_with_estimation"] for a in at if a), None)
        facts = {
            "shown": shown,
            "tokens": want,
            "stdin_fields": sorted(piped),
            "transcript_path_matches": piped.get("transcript_path") == str(path),
            "version": claude.version,
            "leaf": leaf,
        }
        ok = want is not None and shown == want and facts["transcript_path_matches"]
        return Check("statusline", ok, f"shown {shown:,}, inspector tokens {want}", facts)
    finally:
        sb.close()


def _print_mode(claude: Claude, sb: Sandbox, fake: FakeAPI, prompt: str, *extra: str) -> subprocess.CompletedProcess:
    from conformance.runner import _clean_env

    argv = [*claude.argv, "-p", prompt, "--model", "claude-sonnet-4-5", *extra]
    return subprocess.run(
        argv, cwd=sb.work, env=_clean_env(sb.home, fake.url, {}), capture_output=True, text=True, timeout=300,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def mcp_check(claude: Claude) -> Check:
    """Print mode with `--mcp-config` naming `inspector mcp`: the fake API calls its search tool; the next request's
    tool result must be inspector's answer (the earlier session's hit, as the tool gives it when asked again)."""
    from conformance.fake_api import Logged
    from inspector.cli.mcp import Tools

    sb = Sandbox.make()
    word = "zebracorn-4242"
    try:
        with FakeAPI(Script(turns=0)) as fake:  # an earlier session that said the word
            first = _print_mode(claude, sb, fake, f"Remember the codeword {word}.")
        earlier = {p.stem for p in sb.projects.rglob("*.jsonl") if "subagents" not in p.parts}
        cmd = _command(sb, "mcp", "mcp")
        config = sb.root / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"inspector": {"type": "stdio", "command": cmd, "args": []}}}))
        tool = "mcp__inspector__search_sessions"
        calls = ((tool, json.dumps({"query": word, "limit": 5})),)
        with FakeAPI(Script(turns=1, calls=calls)) as fake:
            second = _print_mode(claude, sb, fake, "Find the codeword.", "--mcp-config", str(config), "--allowedTools", tool)
            log: list[Logged] = list(fake.log)
        turns = [q for q in log if q.kind == "turn"]
        offered = sorted(
            t.get("name") for q in turns[:1] for t in q.body.get("tools") or () if str(t.get("name", "")).startswith("mcp__")
        )
        answer = _tool_result_text(turns[1].body) if len(turns) > 1 else None
        facts: dict[str, Any] = {"offered": offered, "rc": [first.returncode, second.returncode], "version": claude.version}
        if answer is None:
            return Check("mcp", False, f"no tool result reached the next request ({len(turns)} turns)", facts)
        try:  # the release may append its reminders after the tool's text (2.1.332: a <system-reminder> block)
            got, _end = json.JSONDecoder().raw_decode(answer.lstrip())
        except ValueError:
            return Check("mcp", False, f"the tool result is not inspector's JSON: {answer[:200]!r}", facts)
        again = json.loads(Tools(sb.projects).search_sessions(word, limit=5))["matches"]
        key = lambda h: (h["session"], h["line"], h["uuid"])  # noqa: E731
        seen = {key(h) for h in got.get("matches", [])}
        # the earlier session's hits, as the tool gives them when asked again now, are the ones the model was sent
        ok = bool(seen) and {key(h) for h in again if h["session"] in earlier} <= seen and any(s in earlier for s, _, _ in seen)
        facts["matches"] = len(seen)
        return Check("mcp", ok, f"{tool} answered {len(seen)} match(es) in the next request's tool result", facts)
    finally:
        sb.close()


def _tool_result_text(body: dict[str, Any]) -> str | None:
    for m in reversed(body.get("messages") or []):
        if m.get("role") != "user" or not isinstance(m.get("content"), list):
            continue
        for b in m["content"]:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                return _text_of(b.get("content"))
    return None


def hook_check(claude: Claude) -> Check:
    """The SessionEnd hook set to `inspector hook`: after a print-mode session, the archive holds its transcript byte
    for byte."""
    import hashlib

    sb = Sandbox.make()
    try:
        archive = sb.root / "archive"
        cmd = _command(sb, "hook", f"hook --to {shlex.quote(str(archive))}", keep_stdin=True)
        hooks = {e: [{"hooks": [{"type": "command", "command": cmd, "timeout": 60}]}] for e in ("SessionEnd", "PreCompact")}
        (sb.home / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
        with FakeAPI(Script(turns=2)) as fake:
            p = _print_mode(claude, sb, fake, "run the checks", "--allowedTools", "Bash")
        time.sleep(1)
        srcs = [q for q in sb.projects.rglob("*.jsonl")]
        piped_file = sb.root / "hook-stdin.json"
        piped = json.loads(piped_file.read_text()) if piped_file.is_file() else {}
        same = 0
        for src in srcs:
            copy = archive / src.relative_to(sb.projects)
            if copy.is_file() and hashlib.sha256(copy.read_bytes()).digest() == hashlib.sha256(src.read_bytes()).digest():
                same += 1
        facts = {
            "rc": p.returncode,
            "files": len(srcs),
            "identical": same,
            "stdin_fields": sorted(piped),
            "version": claude.version,
        }
        ok = bool(srcs) and same == len(srcs) and piped.get("hook_event_name") == "SessionEnd"
        return Check("hook", ok, f"{same} of {len(srcs)} transcript file(s) archived byte for byte at SessionEnd", facts)
    finally:
        sb.close()


def run_inside(claude: Claude, log: Any = print) -> list[Check]:
    out = []
    for check in (statusline_check, mcp_check, hook_check):
        try:
            got = check(claude)
        except (TimeoutError, RuntimeError, OSError, ValueError) as exc:
            got = Check(check.__name__.removesuffix("_check"), False, f"{type(exc).__name__}: {exc}")
        log(f"{got.name}: {'ok' if got.ok else 'DIFFERENT'}: {got.detail}")
        out.append(got)
    return out


def table(checks: list[Check], version: str) -> str:
    rows = [f"| {c.name} | {'yes' if c.ok else 'no'} | {c.detail} |" for c in checks]
    return (
        f"Claude Code {version}, inspector inside it (`python -m conformance --inside`):\n\n"
        + "\n".join(["| check | as inspector says | detail |", "|---|---|---|", *rows])
        + "\n"
    )
