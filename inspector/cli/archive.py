"""`inspector archive`."""

from __future__ import annotations

import argparse
from typing import Any

from inspector.cli.common import EXIT_ERROR, EXIT_OK, Parser, json_text, target_of


def _archive_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="inspector archive",
        description="Copy the sessions under PATH, with their folders (subagents, tool results, memory) and flat agent "
        "files, into DIR laid out like a projects root (browse it with `inspector DIR`): only new or grown files, each "
        "verified by hash before it takes its name; an original is never moved or changed. Claude Code deletes "
        "transcripts older than cleanupPeriodDays (default 30) when it starts: an archive keeps them.",
    )
    p.add_argument("path", nargs="?", help="a projects root, a project folder or a .jsonl file (default: the projects root)")
    p.add_argument("--to", required=True, metavar="DIR", help="the archive folder (created if needed)")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def cmd_archive(args: argparse.Namespace, out: Any, err: Any) -> int:
    from inspector.library.retention import ArchiveError, archive
    from inspector.textutil import human_size, printable

    path, target = target_of(args, err)
    try:
        rep = archive(target, args.to)
    except ArchiveError as exc:
        err.write(printable(f"inspector: archive: {exc}") + "\n")
        return EXIT_ERROR
    for w in rep.warnings:
        err.write(printable(f"inspector: warning: {w}") + "\n")
    if args.json:
        out.write(
            json_text(
                {
                    "to": str(rep.to),
                    "sessions": rep.sessions,
                    "copied": [str(p) for p in rep.copied],
                    "unchanged": rep.unchanged,
                    "bytes": rep.bytes,
                    "beside": [str(p) for p in rep.beside],
                    "skipped": [str(p) for p in rep.skipped],
                    "warnings": rep.warnings,
                }
            )
        )
        return EXIT_OK
    out.write(
        printable(
            f"Archived {rep.sessions} session(s) into {rep.to}: {len(rep.copied)} file(s) copied "
            f"({human_size(rep.bytes)}), {rep.unchanged} already there and unchanged"
            + (f", {len(rep.beside)} other version(s) kept beside their archived copy" if rep.beside else "")
            + (f", {len(rep.skipped)} that could not be read left out" if rep.skipped else "")
            + f"; every copy checked by its hash. Browse it with: inspector {rep.to}"
        )
        + "\n"
    )
    return EXIT_OK
