"""`inspector [PATH]`: the root parser and opening the app."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from inspector import __version__
from inspector.cli.common import EXIT_OK, _default_path
from inspector.cli.stats import cmd_stats


def _root_parser() -> argparse.ArgumentParser:
    from inspector.cli import COMMANDS  # the registry imports this module

    p = argparse.ArgumentParser(
        prog="inspector",
        description="Look inside Claude Code sessions: records, tokens, compactions.",
        epilog="subcommands:\n"
        + "\n".join(f"  {name:<9} {what}" for name, (_make, _cmd, what) in COMMANDS.items())
        + "\n\n`inspector SUBCOMMAND --help` for each; --debug (tracebacks) goes before or after the subcommand.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "path",
        nargs="?",
        help="a projects root, a project folder or one .jsonl transcript "
        "(default: $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects; the bundled samples if that has no sessions)",
    )
    p.add_argument("--version", action="version", version=f"inspector {__version__}")
    p.add_argument("--no-tui", action="store_true", help="print the stats table instead of opening the app")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def cmd_app(args: argparse.Namespace, out: Any, err: Any) -> int:
    """The main job: the TUI in a terminal; the stats table when output is not a terminal."""
    from inspector.transcript.discovery import resolve_target

    notices: list[str] = []

    class Collect:
        def write(self, s: str) -> None:
            if s.strip():
                notices.append(s.strip().removeprefix("inspector: "))

    path = Path(args.path) if args.path else _default_path(Collect())
    target = resolve_target(path)
    tty = out is sys.stdout and sys.stdout.isatty() and sys.stdin.isatty()
    if not tty or args.no_tui:
        for n in notices:
            err.write(f"inspector: {n}\n")
        args.json, args.no_cache = False, False
        args.path = str(path)
        if not args.no_tui:
            err.write("inspector: not a terminal, so here is the stats table (run it in a terminal for the app)\n")
        return cmd_stats(args, out, err)
    from inspector.tui.app import run

    run(target, notices[0] if notices else None)
    return EXIT_OK
