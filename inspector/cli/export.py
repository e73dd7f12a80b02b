"""`inspector export --html DIR`: a self-contained page per session and an index."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from inspector.cli.common import EXIT_ERROR, EXIT_OK, Parser, target_of


def _export_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="inspector export",
        description="Write one self-contained HTML page per session under PATH (the token chart, each compaction and "
        "why it fired, the conversation with collapsible tool results and thinking, persisted outputs) and an "
        "index.html, into DIR. The pages load nothing from the network and run no script; the transcript's text is "
        "shown as text, never as markup. Only pages inspector exported before are replaced.",
    )
    p.add_argument("path", nargs="?", help="a projects root, a project folder or a .jsonl file (default: the projects root)")
    p.add_argument("--html", required=True, metavar="DIR", help="the folder for the pages (created if needed)")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def cmd_export(args: argparse.Namespace, out: Any, err: Any) -> int:
    from inspector.htmlexport import ExportError, export_html
    from inspector.textutil import printable

    path, target = target_of(args, err)
    to = Path(args.html).expanduser().absolute()
    try:
        rep = export_html(target, to)
    except (ExportError, OSError) as exc:
        err.write(printable(f"inspector: export: {getattr(exc, 'strerror', None) or exc}") + "\n")
        return EXIT_ERROR
    for p, why in rep.skipped:
        err.write(printable(f"inspector: warning: {p} cannot be read ({why}); not exported") + "\n")
    out.write(printable(f"{len(rep.pages)} session(s) in {rep.files - 1} page(s), and index.html, written to {to}") + "\n")
    return EXIT_OK
