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
    sb = Sandbox.make()
    try:
        with FakeAPI(Script(turns=len(sizes), sizes=sizes, stop_after_summary=True)) as fake:
            repl = unguarded_repl(claude, sb, fake, model)
            try:
                repl.type("run the checks")
                deadline = time.monotonic() + timeout
                while time.monotonic() < deadline:
                    time.sleep(2)
                    if any(q.kind == "summary" or (q.kind == "turn" and q.answer == "text") for q in fake.log):
                        break
                time.sleep(2)
                screen = _screen(repl.name)
            finally:
                repl.close()
            seq = [(q.kind, q.answer, q.tokens) for q in fake.log if q.kind in ("turn", "summary")]
        compacted_after = next((seq[n - 1][2] for n, q in enumerate(seq) if q[0] == "summary" and n > 0), None)
        return {
            "version": claude.version,
            "model": model,
            "requests": seq,
            "compacted_after_usage": compacted_after,
            "screen": [ln for ln in screen.splitlines() if ln.strip()][-8:],
        }
    finally:
        sb.close()


def unguarded_repl(claude: Claude, sb: Sandbox, fake: Any, model: str) -> ReplSession:
    """The REPL as root may run it with no permission prompt (IS_SANDBOX, the bypass mode accepted)."""
    return ReplSession(
        claude,
        sb,
        fake,
        model=model,
        env_extra={"IS_SANDBOX": "1"},
        args=("--dangerously-skip-permissions",),
        config={"bypassPermissionsModeAccepted": True},
    )


def _screen(name: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True).stdout


def _wait(name: str, ok: Any, timeout: float, what: str = "") -> str:
    """Poll the pane until `ok(screen)` holds (the screen then), or raise with the last screen."""
    deadline = time.monotonic() + timeout
    while True:
        screen = _screen(name)
        if ok(screen):
            return screen
        if time.monotonic() > deadline:
            tail = "\n".join(ln for ln in screen.splitlines() if ln.strip())[-600:]
            raise TimeoutError(f"the REPL never showed {what or 'what was waited for'} in {timeout:g} s; its screen:\n{tail}")
        time.sleep(0.4)


NOTHING_TO_REWIND = "Nothing to rewind to yet"
RESTORE_ONLY = "Restore conversation"  # the rewind options of a release before 2.1.32: no summary offered


def _selected(screen: str) -> str:
    """The text of the highlighted row of a menu (the one after the ❯ marker), '' when none."""
    rows = [ln.strip()[1:].strip() for ln in screen.splitlines() if ln.strip().startswith("❯")]
    return rows[-1] if rows else ""


class ReplSession:
    """One Claude Code REPL in tmux against a fake API: prompts typed, the rewind menu driven, then quit. The fake's
    script is swapped per prompt (its reply count restarted), so one process runs every step of a scenario."""

    def __init__(
        self,
        claude: Claude,
        sb: Sandbox,
        fake: Any,
        *,
        model: str,
        env_extra: dict[str, str],
        resume_id: str | None = None,
        tools: str | None = None,
        debug_file: Any = None,
        args: tuple[str, ...] = (),
        config: dict[str, Any] | None = None,
    ) -> None:
        if shutil.which("tmux") is None:
            raise RuntimeError("a REPL run needs tmux")
        self.fake = fake
        cfg_path = sb.home / ".claude.json"
        try:
            cfg = json.loads(cfg_path.read_text())
        except (OSError, ValueError):
            cfg = {}
        cfg.update(
            {
                "hasCompletedOnboarding": True,
                "numStartups": 5,
                "theme": "dark",
                "lastReleaseNotesSeen": claude.version,
                "customApiKeyResponses": {"approved": [FAKE_KEY[-20:]], "rejected": []},
                **(config or {}),
            }
        )
        project = cfg.setdefault("projects", {}).setdefault(str(sb.work), {})
        project.update(hasTrustDialogAccepted=True, hasCompletedProjectOnboarding=True)
        # the project entry's lists, as Claude Code writes them: 1.0.x reads them without a default (1.0.51's REPL
        # stopped at start with a TypeError where `allowedTools` was missing)
        for key, empty in (("allowedTools", []), ("history", []), ("mcpServers", {}), ("ignorePatterns", [])):
            project.setdefault(key, empty)
        cfg_path.write_text(json.dumps(cfg))
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TMPDIR")}
        env.update(
            {
                "HOME": str(sb.home),
                "ANTHROPIC_BASE_URL": fake.url,
                "ANTHROPIC_API_KEY": FAKE_KEY,
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
                "DISABLE_TELEMETRY": "1",
                "DISABLE_ERROR_REPORTING": "1",
                "TERM": "xterm-256color",
                **env_extra,
            }
        )
        argv = [*claude.argv, "--model", model, *args]
        if tools:
            argv += ["--allowedTools", tools]
        if resume_id:
            argv += ["--resume", resume_id]
        if debug_file is not None:
            argv += ["--debug-file", str(debug_file)]
        line = " ".join(shlex.quote(a) for a in argv)
        script = sb.root / "repl.sh"
        # the shell ignores ^C (the keys that quit Claude Code) so that it can print the exit code
        script.write_text(
            f"trap '' INT; cd {shlex.quote(str(sb.work))} && env -i "
            + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
            + f" {line}; echo exit=$?; sleep 60\n"
        )
        self.name = f"inspector-repl-{os.getpid()}-{sb.root.name}"
        subprocess.run(["tmux", "new-session", "-d", "-s", self.name, "-x", "160", "-y", "48", f"bash {script}"], check=True)
        _wait(self.name, lambda s: "? for shortcuts" in s or "for agents" in s or "─" * 40 in s, 60, "its prompt")
        time.sleep(1.5)

    def keys(self, *keys: str, literal: bool = False) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *(("-l",) if literal else ()), *keys], check=True)

    def type(self, text: str) -> None:
        self.keys("C-u")
        time.sleep(0.3)
        self.keys(text, literal=True)
        time.sleep(1)  # a key sent with the text would be part of a paste
        self.keys("Enter")

    def settle(self, since: int, timeout: float = 150) -> None:
        """Wait until the work started after log entry `since` is over: a final reply served, or no request for a
        while and the screen no longer busy."""

        def replied() -> bool:
            return any(q.kind == "turn" and q.answer == "text" for q in self.fake.log[since:])

        if self._until(replied, timeout, f"the REPL did not finish in {timeout:g} s"):
            time.sleep(1.5)  # the records after the reply

    def _until(self, done: Any, timeout: float, failed: str) -> bool:
        """Poll until `done()` (True), or until no request came for 8 s and the screen is not busy (False); raise
        TimeoutError(`failed`, with the screen's last lines) after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        last, quiet = len(self.fake.log), time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.5)
            if done():
                return True
            if len(self.fake.log) != last:
                last, quiet = len(self.fake.log), time.monotonic()
            elif time.monotonic() - quiet > 8 and "esc to interrupt" not in _screen(self.name):
                return False
        tail = "\n".join(_screen(self.name).rstrip().splitlines()[-12:])
        raise TimeoutError(f"{failed}; its screen:\n{tail}")

    def prompt(self, text: str, script: Any, *, answer: bool = False) -> None:
        """Type a prompt and wait for its work to end; with `answer`, the question the fake's AskUserQuestion call
        shows is answered with its first option."""
        self.fake.script = script
        self.fake.replies = 0
        self.fake.summaries = 0
        n = len(self.fake.log)
        self.type(text)
        if answer and self._question_shown():
            time.sleep(0.5)
            self.keys("Enter")
        self.settle(n)

    def _question_shown(self, timeout: float = 90) -> bool:
        """Wait for the question to be shown (True), or for the REPL to sit idle without asking: a prompt refused
        before any request (the context at its blocking limit with auto-compact off: "Context limit reached") or
        a turn that ended otherwise (False)."""
        return self._until(
            lambda: "Enter to select" in _screen(self.name), timeout, f"the REPL never showed the question in {timeout:g} s"
        )

    def rewind(self, ups: int, direction: str, context: str, script: Any) -> str:
        """Esc Esc, the prompt `ups` rows above "(current)", "Summarize from here" (`from`) or "Summarize up to
        here" (`up_to`) with `context` typed into the option; then one prompt, "go on". What was picked."""
        self.fake.script = script
        self.fake.replies = 0
        self.fake.summaries = 0
        label = "Summarize from here" if direction == "from" else "Summarize up to here"
        self.keys("Escape")
        time.sleep(0.3)
        self.keys("Escape")
        menu = _wait(
            self.name,
            lambda s: "Rewind" in s and ("(current)" in s or NOTHING_TO_REWIND in s),
            30,
            "the rewind menu",
        )
        if NOTHING_TO_REWIND in menu and "(current)" not in menu:
            # 2.1.174's menu after a /compact (generated REPL seeds 190000 and 190004): no message to pick; the step
            # summarizes nothing, as a pick before the last compaction does
            self.keys("Escape")
            time.sleep(0.5)
            return f"the rewind menu listed nothing ({NOTHING_TO_REWIND!r}): no summary served"
        for _ in range(ups):
            self.keys("Up")
            time.sleep(0.3)
        picked = _selected(_screen(self.name))
        self.keys("Enter")
        options = _wait(
            self.name, lambda s: label in s or "Summarize from here" in s or RESTORE_ONLY in s, 30, "the rewind options"
        )
        if label not in options:
            # "Summarize up to here" is offered from 2.1.141 (2.1.140's menu has none; versions.STRATEGY_FIRST), and
            # "Summarize from here" from 2.1.32 (2.1.20 asks only whether to restore the conversation): the step
            # summarizes nothing on an older release (2.1.36 REPL seeds 193003, 193005, 193006 and 2.1.20 REPL seeds
            # 196000-196003 waited for it)
            for _ in range(2):
                self.keys("Escape")
                time.sleep(0.5)
            return f"picked {picked!r}: this release's menu has no {label!r}; no summary served"
        for _ in range(8):
            if label in _selected(_screen(self.name)):
                break
            self.keys("Down")
            time.sleep(0.3)
        else:
            raise RuntimeError(f"could not select {label!r} in the rewind menu")
        if context:
            self.keys(context, literal=True)
            time.sleep(0.5)
        n = len(self.fake.log)
        self.keys("Enter")
        # a pick that summarizes nothing (a row before the last compaction) sends no request: stop once the REPL has
        # been idle for a while instead of waiting the whole 150 s (a pick that summarizes shows it is busy)
        start = time.monotonic()
        deadline, quiet = start + 150, start
        while time.monotonic() < deadline and not any(q.kind == "summary" for q in self.fake.log[n:]):
            time.sleep(0.5)
            if "esc to interrupt" in _screen(self.name) or len(self.fake.log) > n:
                quiet = time.monotonic()
            elif time.monotonic() - quiet > 12:
                break
        if not any(q.kind == "summary" and q.answer == "summary" for q in self.fake.log[n:]):
            return f"picked {picked!r}, {label}: no summary served"
        _wait(self.name, lambda s: "ummarized" in s, 30, "the summary")
        time.sleep(1)
        self.prompt("go on", script)
        return f"picked {picked!r}, {label}" + (f" ({context})" if context else "")

    def quit(self) -> int:
        for key in ("Escape", "C-c", "C-c"):
            subprocess.run(["tmux", "send-keys", "-t", self.name, key], capture_output=True)
            time.sleep(0.6)
        screen = _wait(self.name, lambda s: "exit=" in s, 30, "its exit")
        return int(screen.split("exit=", 1)[1].split()[0])

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)
