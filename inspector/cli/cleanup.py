"""`inspector cleanup`: when Claude Code's cleanup deletes which session, and why, from every settings layer."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from inspector.cli.common import EXIT_OK, EXIT_USAGE, Parser, json_text, target_of

NEWEST = 50  # the release the user runs: the newest among the sessions written last (their heads and tails)


def _cleanup_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="inspector cleanup",
        description="When Claude Code's cleanup deletes your sessions, and why: cleanupPeriodDays as Claude Code "
        "started in a folder reads it from every settings layer (user, the project's .claude/settings.json and "
        "settings.local.json, managed settings), whether that release would skip its cleanup (a settings file it "
        "cannot parse, an invalid period...), when cleanup last ran, and the sessions due.",
    )
    p.add_argument("path", nargs="?", help="a projects root, a project folder or a .jsonl file (default: the projects root)")
    p.add_argument(
        "--cwd",
        metavar="DIR",
        help="the folder Claude Code is started in: its project settings count (default: the current folder)",
    )
    p.add_argument(
        "--release",
        metavar="VERSION",
        help="the Claude Code release that runs the cleanup (default: the newest among your latest sessions)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _state(layer: Any) -> str:
    if layer.state == "read":
        v = layer.data.get("cleanupPeriodDays", None) if layer.has_key else None
        return f"cleanupPeriodDays {v!r}" if layer.has_key else "no cleanupPeriodDays"
    return {
        "absent": "(no file)",
        "unreadable": "cannot be read",
        "unparsed": "cannot be parsed",
        "empty": "empty file",
    }[layer.state]


def cmd_cleanup(args: argparse.Namespace, out: Any, err: Any) -> int:
    from inspector.claude.release import parse_version
    from inspector.library.history import last_cleanup
    from inspector.library.retention import SOON_DAYS, Retention, newest_release
    from inspector.textutil import printable
    from inspector.transcript.discovery import config_dir, quick_info, session_files

    if args.release is not None and parse_version(args.release) is None:
        err.write(printable(f"inspector: cleanup: --release {args.release!r} is not a Claude Code version (like 2.1.332)") + "\n")
        return EXIT_USAGE
    cwd = Path(args.cwd).expanduser() if args.cwd else Path.cwd()
    path, target = target_of(args, err)
    files = [p for p, _agents in session_files(target)]
    stamps: list[tuple[float, Path]] = []
    for p in files:
        try:
            stamps.append((p.stat().st_mtime, p))
        except OSError:
            continue
    stamps.sort(reverse=True)
    release, said = args.release, "given with --release"
    if release is None:
        versions = []
        for _t, p in stamps[:NEWEST]:
            try:
                versions.append(quick_info(p).version)
            except OSError:
                continue
        release = newest_release(versions)
        said = "the newest release among your latest sessions" if release else "no session names its release"
    keep = Retention.read(cwd=cwd, release=release)
    now = datetime.now(UTC)
    due = [(d, keep.risk_at(d, now), p) for t, p in stamps if (d := keep.due_at(t)) is not None]
    at_start = sorted(p for _d, risk, p in due if risk == "next start")
    week = sorted((d, p) for d, risk, p in due if risk == "soon")  # within SOON_DAYS
    ran = last_cleanup(config_dir())
    if args.json:
        out.write(
            json_text(
                {
                    "release": release,
                    "rules": keep.rules,
                    "cwd": str(cwd),
                    "days": keep.days,
                    "source": keep.source,
                    "skipped": keep.skipped,
                    "notes": list(keep.notes),
                    "layers": [
                        {
                            "name": ly.name,
                            "path": str(ly.path),
                            "state": ly.state,
                            "cleanupPeriodDays": ly.data.get("cleanupPeriodDays"),
                        }
                        for ly in keep.layers
                    ],
                    "last_cleanup": ran,
                    "sessions": len(stamps),
                    "next_start": [str(p) for p in at_start],
                    "within_7_days": [{"path": str(p), "due": d.isoformat(timespec="seconds")} for d, p in week],
                }
            )
        )
        return EXIT_OK
    w = max(len(ly.name) for ly in keep.layers)
    lines = [
        f"Claude Code's cleanup by the rules of {keep.rules} (release {release or 'unknown'}: {said}), started in {cwd}:",
        *(f"  {ly.name:<{w}}  {_state(ly):<28} {ly.path}" for ly in keep.layers),
        "",
        f"{'Skipped' if keep.skipped else 'Period'}: {keep.skipped or keep.source}",
        "Last ran: " + (f"{ran} (.last-cleanup)" if ran else "unknown (no .last-cleanup)"),
    ]
    if keep.days is None:
        lines.append(f"Nothing of the {len(stamps)} session(s) is due while this holds.")
    else:
        lines.append(
            f"Due: {len(at_start)} of {len(stamps)} session(s) at Claude Code's next start, "
            f"{len(week)} more within {SOON_DAYS} days"
            + (" (`inspector archive --to DIR` keeps a copy)" if at_start or week else "")
        )
        lines += [f"  next start  {p}" for p in at_start[:10]]
        lines += [f"  {d.astimezone().strftime('%Y-%m-%d')}  {p}" for d, p in week[:10]]
        if len(at_start) + len(week) > 20:
            lines.append("  … (--json lists them all)")
    lines += [f"Not seen here: {n}" for n in keep.notes]
    out.write("".join(printable(line) + "\n" for line in lines))
    return EXIT_OK
