"""`inspector history`: the sessions Claude Code's history.jsonl still knows whose transcripts are gone."""

from __future__ import annotations

import argparse
from typing import Any

from inspector.cli.common import EXIT_OK, Parser, json_lines


def _history_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="inspector history",
        description="Recover what cleanup deleted: Claude Code keeps every prompt you type in its history.jsonl, also "
        "after its cleanup removed the session's transcript. Lists, per project, the sessions known only from there "
        "(their time and prompts), marked 'transcript deleted by cleanup', and when cleanup last ran.",
    )
    p.add_argument("--search", metavar="TEXT", help="only the sessions with a prompt that holds TEXT (any case)")
    p.add_argument("--project", metavar="WORDS", help="only the projects whose folder holds these words (any case)")
    p.add_argument("--json", action="store_true", help="print JSON Lines: one session a line, every prompt in full")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def cmd_history(args: argparse.Namespace, out: Any, err: Any) -> int:
    from inspector.library.history import history_path, known_sessions, last_cleanup, lost_sessions, read_history
    from inspector.textutil import printable
    from inspector.transcript.discovery import config_dir, default_projects_root

    config = config_dir()
    root = default_projects_root()
    problems: list[str] = []
    prompts = read_history(history_path(config), problems)
    for pr in problems:
        err.write(printable(f"inspector: {pr}") + "\n")
    ids, days = known_sessions(root)
    lost = lost_sessions(prompts, ids, days)
    if args.project:
        w = args.project.lower()
        lost = [g for g in lost if w in g.project.lower()]
    if args.search:
        q = args.search.lower()
        lost = [g for g in lost if any(q in p.text.lower() for p in g.prompts)]
    if args.json:
        out.write(json_lines(g.as_dict() for g in lost))
        return EXIT_OK
    ran = last_cleanup(config)
    out.write(
        f"{len(prompts):,} prompt(s) in {history_path(config)}; Claude Code's cleanup last ran "
        + (f"at {ran}" if ran else "at an unknown time (no .last-cleanup)")
        + "\n"
    )
    if not lost:
        out.write("No session is known only from the history: every session it names still has its transcript.\n")
        return EXIT_OK
    by_project: dict[str, list[Any]] = {}
    for g in lost:
        by_project.setdefault(g.project, []).append(g)
    for project, gs in sorted(by_project.items()):
        out.write(printable(f"\n{project}  ({len(gs)} session(s): transcript deleted by cleanup)") + "\n")
        for g in gs:
            name = g.session_id or "(no session id: one day of an older release's prompts)"
            out.write(
                printable(f"  {g.first[:16].replace('T', ' ')} – {g.last[11:16]}  {len(g.prompts):>4} prompt(s)  {name}") + "\n"
            )
            for p in g.prompts[:3]:
                out.write(printable(f"      {p.timestamp[11:16]}  {' '.join(p.text.split())[:100]}") + "\n")
            if len(g.prompts) > 3:
                out.write(f"      … {len(g.prompts) - 3} more (--json has them all)\n")
    return EXIT_OK
