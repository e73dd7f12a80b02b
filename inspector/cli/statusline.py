"""`inspector statusline`: the line Claude Code's `statusLine` setting shows, from the JSON it pipes on stdin."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from inspector.cli.common import EXIT_OK, _confirm

STDIN_LIMIT = 1 << 20  # bytes of stdin read: Claude Code's input is a few hundred
FIELDS = ("line", "used", "window", "percent", "left", "level", "cost", "model", "version")


def _statusline_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="inspector statusline",
        description="For Claude Code's statusLine setting: reads the JSON Claude Code pipes on stdin (the session's "
        "transcript path, model, version) and prints one line: the context used, how far it is from auto-compaction "
        "by the rules of that release, model and settings (or where the API refuses, when the threshold is not "
        "enforced), the warning or blocking state, and the session's cost so far (as `inspector cost` prices it).",
    )
    p.add_argument(
        "--format",
        metavar="TEMPLATE",
        help="compose your own line from {line} {used} {window} {percent} {left} {level} {cost} {model} {version} "
        "(e.g. '{percent}%% · {left} left')",
    )
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object instead")
    p.add_argument("--no-color", action="store_true", help="no colours (also when NO_COLOR is set)")
    p.add_argument(
        "--install",
        action="store_true",
        help="set Claude Code's statusLine to this command in your settings.json: shows the change, asks, keeps a "
        "backup, touches no other key",
    )
    p.add_argument("--yes", action="store_true", help="with --install: write without asking")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _input(stdin: Any) -> dict[str, Any]:
    from inspector.textutil import json_loads
    from inspector.transcript.discovery import InspectorError

    raw = stdin.buffer.read(STDIN_LIMIT + 1) if hasattr(stdin, "buffer") else stdin.read(STDIN_LIMIT + 1)
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogateescape")
    if len(raw) > STDIN_LIMIT:
        raise InspectorError("statusline: stdin is over 1 MB, not Claude Code's statusline JSON")
    try:
        data = json_loads(raw) if raw.strip() else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise InspectorError("statusline: stdin is not Claude Code's statusline JSON (an object with transcript_path)")
    return data


def _text(d: dict[str, Any], key: str) -> str | None:
    v = d.get(key)
    return v if isinstance(v, str) and v else None


def cmd_statusline(args: argparse.Namespace, out: Any, err: Any, stdin: Any = None) -> int:
    from inspector.cli.common import json_text
    from inspector.library.cost import session_cost, usd
    from inspector.textutil import printable
    from inspector.tokens.now import context_now
    from inspector.tokens.thresholds import Settings
    from inspector.transcript.discovery import InspectorError
    from inspector.transcript.session import Session

    if args.install:
        return _install(args, out, err)
    data = _input(stdin if stdin is not None else sys.stdin)
    path = _text(data, "transcript_path")
    if path is None:
        raise InspectorError("statusline: the JSON on stdin names no transcript_path")
    p = Path(path).expanduser()
    if not p.is_file():
        raise InspectorError(f"statusline: no transcript at {printable(str(p))}")
    s = Session.load(p)
    settings = Settings.from_environment()  # Claude Code's own environment: the command runs inside it
    model = data.get("model")
    model_id = _text(model, "id") if isinstance(model, dict) else None
    if model_id:  # the model running now (after a /model switch too); records never carry its [1m]
        settings = settings.with_(model=model_id)
    now = context_now(s, settings)
    cost = session_cost(s)
    figures = {
        "used": now.tokens,
        "window": now.window,
        "percent": round(100 * now.tokens / now.window),
        "left": now.left,
        "level": now.level,
        "cost": cost.get("cost_usd"),
        "model": now.thresholds.model,
        "version": s.version or _text(data, "version"),
    }
    if args.json:
        out.write(json_text({**now.as_dict(), **figures, "session_id": s.session_id}))
        return EXIT_OK
    line = now.describe()
    priced = cost.get("cost_usd_priced")
    if isinstance(priced, (int, float)):
        line += f" · {usd(priced)}" + ("" if cost.get("cost_usd") is not None else "+?")
    if args.format:
        values = {k: ("" if v is None else v) for k, v in figures.items()}
        values["line"] = line
        values["cost"] = usd(priced) if isinstance(priced, (int, float)) else ""
        try:
            line = args.format.format_map(values)
        except (KeyError, ValueError, IndexError, AttributeError) as exc:
            raise InspectorError(
                f"statusline: --format {args.format!r} is not a template of {', '.join('{' + f + '}' for f in FIELDS)} ({exc})"
            ) from None
    line = printable(line)
    if not (args.no_color or os.environ.get("NO_COLOR")):
        colour = {"warning": "33", "compact": "31", "blocked": "1;31"}.get(now.level)
        if colour:
            line = f"\x1b[{colour}m{line}\x1b[0m"
    out.write(line + "\n")
    return EXIT_OK


def command_line() -> str:
    """How Claude Code should run this inspector: its own script when it was started by one, else this Python."""
    import shlex
    import shutil

    script = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    if script is not None and script.name == "inspector" and script.is_file():
        return f"{shlex.quote(str(script))} statusline"
    found = shutil.which("inspector")
    if found:
        return f"{shlex.quote(str(Path(found).resolve()))} statusline"
    return f"{shlex.quote(sys.executable)} -m inspector statusline"


def _install(args: argparse.Namespace, out: Any, err: Any) -> int:
    from inspector.edit.settings import apply, plan_setting, settings_path
    from inspector.textutil import printable

    change = plan_setting(settings_path(), "statusLine", {"type": "command", "command": command_line()})
    if not change.needed:
        out.write(f"statusLine is already set to this command in {printable(str(change.path))}\n")
        return EXIT_OK
    _confirm(args, err, printable(change.describe()), write=True)
    backup = apply(change)
    out.write(
        f"statusLine set in {printable(str(change.path))}"
        + (f" (the file as it was: {printable(str(backup))})" if backup else "")
        + "; Claude Code shows it from its next message\n"
    )
    return EXIT_OK
