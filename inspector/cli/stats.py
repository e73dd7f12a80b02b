"""`inspector stats`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from inspector.cli.common import (
    EXIT_OK,
    Parser,
    _report,
    add_window_flags,
    json_lines,
    not_jsonl,
    report_skipped,
    target_of,
    when_arg,
)


def _stats_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="inspector stats",
        description="Facts about every session under PATH: records, chain, compactions, context, subagents.",
    )
    p.add_argument("path", nargs="?", help="projects root, project folder or .jsonl file (default: the projects root)")
    p.add_argument("--json", action="store_true", help="print JSON Lines: one object per session, one per line")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the stats cache")
    add_window_flags(p, "sessions with a record")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def cmd_stats(args: argparse.Namespace, out: Any, err: Any) -> int:
    from inspector.library.stats import StatsCache, cache_dir, collect_stats

    path, target = target_of(args, err)
    cache = StatsCache(None if args.no_cache else cache_dir())
    show_progress = err.isatty() if hasattr(err, "isatty") else False

    def progress(n: int, total: int, p: Path) -> None:
        if show_progress and total > 20:
            err.write(f"\rinspector: reading {n + 1}/{total} sessions…")
            err.flush()

    skipped: list[tuple[Path, str]] = []
    stats = collect_stats(target, cache, progress, skipped=skipped if target.kind != "file" else None)
    if show_progress and len(stats) > 20:
        err.write("\r\x1b[K")
    report_skipped(skipped, err)
    since, until = when_arg(args.since, "--since"), when_arg(args.until, "--until")
    if since is not None or until is not None:  # the sessions whose span meets the window

        def meets(st: dict[str, Any]) -> bool:
            first, last = (st.get("first_timestamp") or "")[:19], (st.get("last_timestamp") or "")[:19]
            return bool(first) and (since is None or last >= since) and (until is None or first < until)

        stats = [st for st in stats if meets(st)]
    if target.kind == "file" and stats:
        bad = stats[0]["records"]
        if bad["total"] == 0 and bad["malformed"] > 0:
            first = stats[0]["problems"][0] if stats[0]["problems"] else None
            raise not_jsonl(path, (first["line"], first["reason"]) if first else None)
    from inspector.library.retention import Retention, newest_release

    keep = Retention.read(release=newest_release(st.get("version") for st in stats))
    risks = {}
    for st in stats:  # when Claude Code's cleanup deletes it: from the file's time now, never cached
        due = keep.due(st["path"])
        st["deletion_due"] = due.isoformat(timespec="seconds").replace("+00:00", "Z") if due else None
        risks[st["path"]] = keep.risk_at(due)
    if args.json:
        out.write(json_lines(stats))
    else:
        out.write(format_table(stats))
        at_risk = [st for st in stats if risks[st["path"]]]
        if at_risk:
            out.write(
                f"\n{len(at_risk)} session(s) will be deleted by Claude Code's cleanup within 7 days or at its next "
                f"start ({keep.describe()}): `inspector archive --to DIR` keeps a copy; `inspector cleanup` says why.\n"
            )
    return EXIT_OK


def format_table(stats: list[dict[str, Any]]) -> str:
    """A readable table, grouped by project."""
    from inspector.textutil import human_duration, human_size, human_tokens, human_when, printable

    if not stats:
        return "No sessions found.\n"
    lines: list[str] = []
    by_project: dict[str, list[dict[str, Any]]] = {}
    for s in stats:
        by_project.setdefault(s["project_dir"], []).append(s)
    head = (
        f"  {'session':<10} {'started':<16} {'dur':>5} {'size':>9} {'records':>7} {'peak ctx':>8} {'compact':>7} "
        f"{'agents':>6}  title"
    )
    total_records = sum(s["records"]["total"] for s in stats)
    for folder, items in by_project.items():
        n = len(items)
        lines.append(f"{printable(items[0]['project'])}  ({n} session{'s' if n != 1 else ''} in {printable(folder)})")
        lines.append(head)
        for s in sorted(items, key=lambda x: x["first_timestamp"] or ""):
            c = s["counts"]
            comp = f"{c['compactions']}+{c['microcompactions']}mc" if c["microcompactions"] else str(c["compactions"])
            title = printable(s["title"] or "(untitled)")
            if s["orphan_subagent"]:
                title = "[subagent without its session] " + title
            if s["records"]["malformed"]:
                title += f"  [{s['records']['malformed']} bad line(s)]"
            if s.get("cwd") and s["cwd"] != items[0]["project"]:  # started elsewhere than the folder's other sessions
                title += f"  [in {printable(s['cwd'])}]"
            lines.append(
                f"  {s['session_id'][:10]:<10} {human_when(s['first_timestamp']) or '-':<16} "
                f"{human_duration(s['first_timestamp'], s['last_timestamp']) or '-':>5} {human_size(s['size']):>9} "
                f"{s['records']['total']:>7} {human_tokens(s['context']['peak_tokens']):>8} {comp:>7} "
                f"{s['subagents']:>6}  {title[:70]}"
            )
        lines.append("")
    lines.append(f"{len(stats)} session(s) in {len(by_project)} project(s), {total_records} records.")
    return _report(lines)
