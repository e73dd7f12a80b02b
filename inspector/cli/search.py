"""`inspector search`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from inspector.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    Parser,
    _positive,
    add_window_flags,
    json_lines,
    target_of,
    when_arg,
)


def _search_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="inspector search",
        description="Find text in every session under PATH: prompts, replies, thinking, tool inputs and results, "
        "summaries, and tool results persisted beside a session. Case-insensitive; the JSON around the text "
        "(field names, ids) is not searched. Exit status 0 when something was found, 1 when nothing was.",
    )
    p.add_argument("text", help="the text to find")
    p.add_argument("path", nargs="?", help="a projects root, a project folder or a .jsonl file (default: the projects root)")
    p.add_argument("--json", action="store_true", help="print JSON Lines: one object per match, one per line")
    p.add_argument("--limit", type=_positive, metavar="N", default=None, help="stop after N matches")
    p.add_argument("--no-subagents", action="store_true", help="do not search subagent transcripts")
    p.add_argument("--no-persisted", action="store_true", help="do not search tool results persisted to disk")
    p.add_argument(
        "--project",
        metavar="WORDS",
        help="only the sessions whose project folder name or working folder contains these words (any case)",
    )
    add_window_flags(p, "records")
    p.add_argument(
        "--no-index",
        action="store_true",
        help="scan every file instead of using the search index "
        "(the same results, slower; the index is built and kept up to date as you search)",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def cmd_search(args: argparse.Namespace, out: Any, err: Any) -> int:
    from inspector.library.search import Query, search_target
    from inspector.textutil import human_when, printable
    from inspector.transcript.discovery import InspectorError, quick_info

    if not args.text:
        raise InspectorError("nothing to search for")
    if args.limit is not None and args.limit < 1:
        raise InspectorError("--limit must be at least 1")
    path, target = target_of(args, err)
    query = Query(args.text)
    since, until = when_arg(args.since, "--since"), when_arg(args.until, "--until")
    show_progress = (err.isatty() if hasattr(err, "isatty") else False) and not args.json

    def progress(n: int, total: int) -> None:
        if show_progress and total > 20 and n % 10 == 0:
            err.write(f"\rinspector: searching {n + 1}/{total} transcripts…")
            err.flush()

    from inspector.library.fts import SEARCH_BUDGET, open_index

    index = None if args.no_index else open_index(notice=lambda m: err.write(printable(f"inspector: {m}") + "\n"))
    found: list[Any] = []
    last_session: Path | None = None
    stats_cache: Any = None  # what names a session, once one is found
    for fh in search_target(
        target,
        query,
        persisted=not args.no_persisted,
        subagents=not args.no_subagents,
        limit=args.limit,
        progress=progress,
        index=index,
        project=args.project,
        since=since,
        budget=SEARCH_BUDGET,
    ):
        if show_progress:
            err.write("\r\x1b[K")
        if until is not None:  # a record of then or after is no hit (one without a time is kept, as --since keeps it)
            fh.hits[:] = [h for h in fh.hits if not h.timestamp or h.timestamp[:19] < until]
            if not fh.hits:
                continue
        found.extend(fh.hits)
        if args.json:
            continue
        if fh.session != last_session:
            last_session = fh.session
            from inspector.library.stats import StatsCache, cache_dir, known_stats

            # (the index's database holds the stats too: its open connection, not a second one)
            stats_cache = stats_cache or StatsCache(cache_dir(), index=index)
            known = known_stats(fh.session, stats_cache)  # the title and time stats and the browser give, once known
            try:
                info = quick_info(fh.session)
                title = (known or {}).get("title") or info.title or info.first_prompt or info.session_id
                when = human_when((known or {}).get("first_timestamp") or info.first_timestamp, local=True) or ""
            except OSError:
                title, when = fh.session.stem, ""
            out.write(f"{printable(title)[:100]}   {when}\n  {printable(str(fh.session))}\n")
        if fh.path != fh.session:
            out.write(f"  subagent {printable(fh.path.name)}\n")
        for h in fh.hits:
            where = h.where + (f" {h.file}" if h.file else "") + (f" ×{h.count}" if h.count > 1 else "")
            line = f"line {h.line}" if h.line else "(record not found)"
            out.write(f"    {line:<11} {(human_when(h.timestamp, local=True) or '')[11:]:>5}  {printable(where)}: {h.snippet}\n")
    if show_progress:
        err.write("\r\x1b[K")
    if index is not None and (index.stale or index.stale_sessions) and not index.busy and index.low_disk is None:
        err.write("inspector: each search adds a part to the index; `inspector index` adds the rest now (once)\n")
    if args.json:
        out.write(json_lines(h.as_dict() for h in found))
    elif found:
        n_sessions = len({h.path for h in found})
        more = " (stopped at --limit)" if args.limit is not None and len(found) >= args.limit else ""
        out.write(
            f"\n{len(found)} match(es) in {n_sessions} transcript(s){more}.\n"
            f"A record in full: inspector show FILE --line N (or open FILE in the app and press /).\n"
        )
    else:
        out.write(f"No match for {printable(args.text)!r}.\n")
    return EXIT_OK if found else EXIT_ERROR
