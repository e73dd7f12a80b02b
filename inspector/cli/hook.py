"""`inspector hook`: Claude Code's `SessionEnd` and `PreCompact` hooks, archiving the session as it ends or before it
is compacted, so that Claude Code's cleanup of old transcripts never removes the only copy.

Claude Code pipes the hook's JSON on stdin (read from the 2.1.332 binary: `session_id`, `transcript_path`, `cwd`,
`hook_event_name`, with `reason` for SessionEnd and `trigger` / `custom_instructions` for PreCompact); the session's
transcript, its folder (subagents, tool results) and its flat agent files are copied into the archive by the verified,
incremental `inspector archive` (only what is new or grew; a copy is never replaced by a shorter one). The hook writes
nothing on stdout (a PreCompact hook's output becomes the compaction's instructions) and exits 0; a problem is one line
on stderr and exit 1, never 2 (which blocks a compaction), so Claude Code shows it without stopping anything.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from inspector.cli.common import EXIT_ERROR, EXIT_OK, Parser, add_install_flags, install_setting, own_command, stdin_json

EVENTS = ("SessionEnd", "PreCompact")
HOOK_TIMEOUT = 60  # seconds Claude Code lets the hook run (it waits 1.5 s by default at SessionEnd; at most 60)


def default_archive(env: Any = None) -> Path:
    """$XDG_DATA_HOME/inspector/archive (by default ~/.local/share/inspector/archive): kept data, not a cache."""
    from inspector.statefiles import inspector_dir

    return inspector_dir("data", env) / "archive"


def _hook_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="inspector hook",
        description="For Claude Code's SessionEnd and PreCompact hooks: reads the hook's JSON on stdin and archives the "
        "session (its transcript, subagents and tool results) into DIR, incrementally and verified, so that Claude "
        "Code's cleanup of old transcripts never removes the only copy. `--install` adds the two hooks to your "
        "settings.json after showing the change.",
    )
    p.add_argument(
        "--to",
        metavar="DIR",
        help="the archive folder (default: $XDG_DATA_HOME/inspector/archive, else ~/.local/share/inspector/archive)",
    )
    add_install_flags(
        p,
        "add this command as Claude Code's SessionEnd and PreCompact hooks in your settings.json: shows the change, "
        "asks, keeps a backup, leaves every other hook and key as it was",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def cmd_hook(args: argparse.Namespace, out: Any, err: Any, stdin: Any = None) -> int:
    from inspector.textutil import printable
    from inspector.transcript.discovery import InspectorError

    to = Path(args.to).expanduser() if args.to else default_archive()
    if args.install:
        return _install(args, out, err, to)
    try:
        return _run(to, stdin, err)
    except InspectorError as exc:
        # exit 1, never 2: Claude Code reads a PreCompact hook's exit 2 as "block the compaction" (2.1.332)
        err.write(printable(f"inspector: {exc}") + "\n")
        return EXIT_ERROR


def _run(to: Path, stdin: Any, err: Any) -> int:
    from inspector.library.retention import ArchiveError, archive
    from inspector.textutil import printable
    from inspector.transcript.discovery import InspectorError, Target, default_projects_root

    data = stdin_json(stdin if stdin is not None else sys.stdin, "hook", "Claude Code's hook JSON")
    event = data.get("hook_event_name")
    if event not in EVENTS:
        raise InspectorError(f"hook: {printable(str(event))!s} is not a hook inspector handles ({', '.join(EVENTS)})")
    raw = data.get("transcript_path")
    if not isinstance(raw, str) or not raw:
        raise InspectorError("hook: the JSON on stdin names no transcript_path (the session is not saved on disk)")
    path = Path(raw).expanduser()
    root = default_projects_root()
    try:
        inside = path.resolve().is_relative_to(root.resolve())
    except OSError:
        inside = False
    if not inside or path.suffix != ".jsonl":
        raise InspectorError(f"hook: {printable(str(path))} is not a transcript under {printable(str(root))}")
    if not path.is_file():
        raise InspectorError(f"hook: no transcript at {printable(str(path))}")
    try:
        rep = archive(Target("file", path), to)
    except ArchiveError as exc:
        err.write(printable(f"inspector: hook: {exc}") + "\n")
        return EXIT_ERROR
    for w in rep.warnings:
        if "same disk" not in w:  # said once by `inspector archive`; every hook run would repeat it
            err.write(printable(f"inspector: hook: {w}") + "\n")
    return EXIT_OK


def command_line(to: Path) -> str:
    """How Claude Code should run this inspector's hook."""
    return own_command(f"hook --to {shlex.quote(str(to))}")


def merged_hooks(before: Any, command: str) -> dict[str, Any]:
    """Claude Code's `hooks` setting with this command added for SessionEnd and PreCompact (every other hook kept as
    it was; an event that already runs this command is left alone)."""
    hooks = dict(before) if isinstance(before, dict) else {}
    for event in EVENTS:
        groups = hooks.get(event)
        groups = list(groups) if isinstance(groups, list) else []
        present = any(
            isinstance(g, dict)
            and any(
                isinstance(h, dict) and h.get("command") == command
                for h in g.get("hooks") or ()
                if isinstance(g.get("hooks"), list)
            )
            for g in groups
        )
        if not present:
            groups.append({"hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT}]})
        hooks[event] = groups
    return hooks


def _install(args: argparse.Namespace, out: Any, err: Any, to: Path) -> int:
    from inspector.textutil import printable

    command = command_line(to.absolute())
    return install_setting(
        args,
        out,
        err,
        "hooks",
        lambda before: merged_hooks(before, command),
        already="the hooks already run this command",
        done="SessionEnd and PreCompact hooks set",
        after=f"sessions are archived into {printable(str(to))} from the next one that ends or compacts",
    )
