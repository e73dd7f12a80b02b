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

from conformance.fake_api import FakeAPI, Script
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
    from conformance.repl import ReplSession, _screen, _wait

    sb = Sandbox.make()
    try:
        cmd = _command(
            sb, "statusline", "statusline --no-color --format 'SL used={used} left={left} level={level}'", keep_stdin=True
        )
        (sb.home / ".claude" / "settings.json").write_text(json.dumps({"statusLine": {"type": "command", "command": cmd}}))
        sizes = (40_000, 60_000, 90_000)
        with FakeAPI(Script(turns=len(sizes) - 1, sizes=sizes)) as fake:
            repl = ReplSession(
                claude,
                sb,
                fake,
                model=model,
                env_extra={"IS_SANDBOX": "1"},
                args=("--dangerously-skip-permissions",),
                config={"bypassPermissionsModeAccepted": True},
            )
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


def run_inside(claude: Claude, log: Any = print) -> list[Check]:
    out = []
    for check in (statusline_check,):
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
