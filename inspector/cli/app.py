"""`inspector [PATH]`: opening the app (the stats table when output is not a terminal)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from inspector.cli.common import EXIT_OK, _default_path
from inspector.cli.stats import cmd_stats


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
        args.json, args.no_cache, args.since, args.until = False, False, None, None
        args.path = str(path)
        if not args.no_tui:
            err.write("inspector: not a terminal, so here is the stats table (run it in a terminal for the app)\n")
        return cmd_stats(args, out, err)
    if target.kind == "file":
        from inspector.tokens.background import count_early

        count_early(str(target.path))  # the large session's counts start before the app is imported
    from inspector.tui.app import run

    run(target, notices[0] if notices else None)
    return EXIT_OK
