"""A release run interactively (its REPL, in tmux) against the fake API: does it compact where print mode does?

The era matrix measures print mode (`-p`). Real sessions are mostly the REPL's, whose query source differs; this
runs the same scripted sizes through the REPL (onboarding, trust and the API key accepted in the sandbox's
~/.claude.json; `IS_SANDBOX=1` so that root may skip the permission prompts) and reports which requests the fake
received: a summarize request after the reply that crossed the threshold, or none. Needs tmux.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
from typing import Any

from conformance.fake_api import FakeAPI, Script
from conformance.runner import FAKE_KEY, Claude, Sandbox


def repl_run(claude: Claude, model: str, sizes: tuple[int, ...], *, timeout: float = 150) -> dict[str, Any]:
    """Type one prompt into the REPL; the fake reports `sizes` for its replies. (requests, the screen's last lines)."""
    if shutil.which("tmux") is None:
        raise RuntimeError("the REPL check needs tmux")
    sb = Sandbox.make()
    try:
        cfg = {"hasCompletedOnboarding": True, "numStartups": 5, "theme": "dark", "lastReleaseNotesSeen": claude.version,
               "customApiKeyResponses": {"approved": [FAKE_KEY[-20:]], "rejected": []}, "bypassPermissionsModeAccepted": True,
               "projects": {str(sb.work): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}}}
        (sb.home / ".claude.json").write_text(json.dumps(cfg))
        with FakeAPI(Script(turns=len(sizes), sizes=sizes, stop_after_summary=True)) as fake:
            env = {"HOME": str(sb.home), "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": FAKE_KEY, "IS_SANDBOX": "1",
                   "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "TERM": "xterm-256color",
                   "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
            line = " ".join(shlex.quote(a) for a in (*claude.argv, "--model", model, "--dangerously-skip-permissions"))
            script = sb.root / "run.sh"
            script.write_text(f"cd {shlex.quote(str(sb.work))} && exec env -i "
                              + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + f" {line}\n")
            name = f"inspector-repl-{os.getpid()}-{sb.root.name}"
            subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "160", "-y", "48", f"bash {script}"], check=True)
            try:
                time.sleep(6)
                subprocess.run(["tmux", "send-keys", "-t", name, "-l", "run the checks"], check=True)
                time.sleep(1)  # older REPLs take a key sent with the text as part of a paste
                subprocess.run(["tmux", "send-keys", "-t", name, "Enter"], check=True)
                deadline = time.monotonic() + timeout
                while time.monotonic() < deadline:
                    time.sleep(2)
                    if any(q.kind == "summary" or (q.kind == "turn" and q.answer == "text") for q in fake.log):
                        break
                time.sleep(2)
                screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True).stdout
            finally:
                subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
            seq = [(q.kind, q.answer, q.tokens) for q in fake.log if q.kind in ("turn", "summary")]
        compacted_after = next((seq[n - 1][2] for n, q in enumerate(seq) if q[0] == "summary" and n > 0), None)
        return {"version": claude.version, "model": model, "requests": seq, "compacted_after_usage": compacted_after,
                "screen": [ln for ln in screen.splitlines() if ln.strip()][-8:]}
    finally:
        sb.close()
