"""`inspector show`: a session as text."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from inspector.cli.common import EXIT_OK, Parser, _positive, one_session


def _show_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="inspector show",
        description="Print a session as text: its timeline (one line per record of the conversation's chain), "
        "or one record in full with --line (the line numbers `search` prints) or --uuid.",
    )
    p.add_argument("path", help="the session's .jsonl transcript")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--line", type=_positive, metavar="N", help="print the record on line N of the file in full")
    g.add_argument("--uuid", metavar="UUID", help="print the record with this uuid (or a unique prefix of it) in full")
    p.add_argument("--all", action="store_true", help="timeline: every record of the file, not only the chain")
    p.add_argument("--raw", action="store_true", help="with --line/--uuid: the record's JSON as written")
    p.add_argument("--full-output", action="store_true", help="with --line/--uuid: also print the tool output persisted to disk")
    p.add_argument(
        "--markdown",
        action="store_true",
        help="Markdown: the whole conversation, every record in full (or the one record of --line/--uuid), to share or keep",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def cmd_show(args: argparse.Namespace, out: Any, err: Any) -> int:
    from inspector.textutil import human_tokens, printable
    from inspector.transcript.discovery import InspectorError
    from inspector.view import Snippets, build_rows, export_markdown, parts_markdown, record_parts

    s = one_session(Path(args.path), "show needs one .jsonl transcript, not a folder: {path}")
    if args.line is None and args.uuid is None:
        if args.raw or args.full_output:
            raise InspectorError("--raw and --full-output go with --line or --uuid")
        rows = build_rows(s, scope="file" if args.all else "chain")
        if args.markdown:
            for chunk in export_markdown(s, scope="file" if args.all else "chain"):
                out.write(chunk)
            return EXIT_OK
        snips = Snippets(s)
        out.write(
            f"{printable(s.title or s.session_id)}\n{printable(str(s.path))}   {len(s.records):,} records, "
            f"{len(rows):,} shown ({'every record' if args.all else 'the conversation; --all for every record'})\n\n"
        )
        for row in rows:
            tok = human_tokens(row.tokens) if row.tokens else ""
            out.write(
                printable(f"{s.records[row.index].line:>6}  {row.time:<8}  {tok:>6}  {row.label}  {snips.get(row.index)[:120]}")
                + "\n"
            )
        return EXIT_OK
    if args.line is not None:
        idx = next((k for k, r in enumerate(s.records) if r.line == args.line), None)
        if idx is None:
            bad = next((p for p in s.transcript.problems if p.line == args.line), None)
            why = f": {bad.reason}" if bad else " (blank, or past the end of the file)"
            raise InspectorError(f"no record on line {args.line} of {args.path}{why}")
    else:
        try:  # a whole uuid or a unique prefix of one
            idx = s.find_record(args.uuid)
        except LookupError as exc:
            raise InspectorError(f"{exc} in {args.path}") from None
    if args.markdown:
        out.write(parts_markdown(record_parts(s, idx, raw=args.raw)))
        return EXIT_OK
    for part in record_parts(s, idx, raw=args.raw):
        text = printable(part.text, keep_newlines=True)
        if part.kind == "head":
            out.write(text + "\n\n")
        elif part.kind == "label":
            out.write(f"── {text} ──\n")
        elif part.kind in ("note", "persisted"):
            hint = "" if part.kind == "note" or args.full_output else " (--full-output prints it)"
            out.write(f"! {text}{hint}\n")
        else:
            out.write(text.rstrip("\n") + "\n\n")
    if args.full_output:
        r = s.records[idx]
        mine = [po for po in s.persisted_outputs if po.record == idx or po.tool_use_id in r.tool_results]
        if not any(po.file is not None for po in mine):
            err.write("inspector: this record has no tool output persisted in the session's folder\n")
        for po in mine:
            if po.file is not None:
                try:
                    write_file_text(po.file, out)
                except OSError as exc:
                    err.write(printable(f"inspector: could not read {po.file}: {exc.strerror or exc}") + "\n")
    return EXIT_OK


def write_file_text(path: Path, out: Any) -> None:
    """A persisted output printed whole, a megabyte at a time (never the whole file in memory), literally."""
    import codecs

    from inspector.textutil import printable
    from inspector.transcript.safefs import open_regular

    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        out.write(printable(f"── full output {path.name} ({size:,} bytes) ──") + "\n")
        dec = codecs.getincrementaldecoder("utf-8")("replace")
        while True:
            data = f.read(1 << 20)
            out.write(printable(dec.decode(data, final=not data), keep_newlines=True))
            if not data:
                break
    out.write("\n")
