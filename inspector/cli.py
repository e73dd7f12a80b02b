"""The command line: `inspector [PATH]` and headless subcommands over the same core.

Errors are one line on stderr and a non-zero exit; a traceback only with --debug.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, Sequence

from inspector import __version__

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2

SUBCOMMANDS = ("stats",)


def _root_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="inspector",
        description="Look inside Claude Code sessions: records, tokens, compactions.",
        epilog="Subcommands: stats (facts about every session; `inspector stats --help`).",
    )
    p.add_argument(
        "path",
        nargs="?",
        help="a projects root, a project folder or one .jsonl transcript "
        "(default: $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects; the bundled samples if that has no sessions)",
    )
    p.add_argument("--version", action="version", version=f"inspector {__version__}")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _stats_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="inspector stats",
        description="Facts about every session under PATH: records, chain, compactions, context, subagents.",
    )
    p.add_argument("path", nargs="?", help="projects root, project folder or .jsonl file (default: the projects root)")
    p.add_argument("--json", action="store_true", help="print a JSON array, one object per session")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the stats cache")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _default_path(err: Any) -> Path:
    """The projects root, or the bundled samples (with a notice) when it has no sessions."""
    from inspector.transcript.discovery import default_projects_root, resolve_target, samples_root, session_files

    root = default_projects_root()
    if root.is_dir():
        try:
            if session_files(resolve_target(root)):
                return root
        except Exception:
            pass
    samples = samples_root()
    if samples is None:
        return root
    print(
        f"inspector: no Claude Code sessions under {root}; showing the bundled sample sessions ({samples})",
        file=err,
    )
    return samples


def cmd_stats(args: argparse.Namespace, out: Any, err: Any) -> int:
    import orjson

    from inspector.transcript.discovery import resolve_target
    from inspector.transcript.stats import StatsCache, cache_dir, collect_stats

    path = Path(args.path) if args.path else _default_path(err)
    target = resolve_target(path)
    cache = StatsCache(None if args.no_cache else cache_dir())
    show_progress = err.isatty() if hasattr(err, "isatty") else False

    def progress(n: int, total: int, p: Path) -> None:
        if show_progress and total > 20:
            err.write(f"\rinspector: reading {n + 1}/{total} sessions…")
            err.flush()

    stats = collect_stats(target, cache, progress)
    if show_progress and len(stats) > 20:
        err.write("\r\x1b[K")
    if target.kind == "file" and stats:
        bad = stats[0]["records"]
        if bad["total"] == 0 and bad["malformed"] > 0:
            from inspector.transcript.discovery import InspectorError

            first = stats[0]["problems"][0] if stats[0]["problems"] else None
            why = f" (line {first['line']}: {first['reason']})" if first else ""
            raise InspectorError(f"not a JSONL transcript: no line of {path} could be read{why}")
    if args.json:
        out.write(orjson.dumps(stats, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        out.write(format_table(stats))
    return EXIT_OK


def _when(ts: str | None) -> str:
    if not ts:
        return "-"
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return "-"


def _duration(a: str | None, b: str | None) -> str:
    try:
        secs = (
            datetime.fromisoformat(b.replace("Z", "+00:00")) - datetime.fromisoformat(a.replace("Z", "+00:00"))
        ).total_seconds()  # type: ignore[union-attr]
    except (AttributeError, ValueError):
        return "-"
    if secs < 3600:
        return f"{secs / 60:.0f}m"
    return f"{secs / 3600:.1f}h"


def format_table(stats: list[dict[str, Any]]) -> str:
    """A readable table, grouped by project."""
    from inspector.textutil import human_size, human_tokens, printable

    if not stats:
        return "No sessions found.\n"
    lines: list[str] = []
    by_project: dict[str, list[dict[str, Any]]] = {}
    for s in stats:
        by_project.setdefault(s["project_dir"], []).append(s)
    head = f"  {'session':<10} {'started':<16} {'dur':>5} {'size':>9} {'records':>7} {'peak ctx':>8} {'compact':>7} {'agents':>6}  title"
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
            lines.append(
                f"  {s['session_id'][:10]:<10} {_when(s['first_timestamp']):<16} "
                f"{_duration(s['first_timestamp'], s['last_timestamp']):>5} {human_size(s['size']):>9} "
                f"{s['records']['total']:>7} {human_tokens(s['context']['peak_tokens']):>8} {comp:>7} "
                f"{s['subagents']:>6}  {title[:70]}"
            )
        lines.append("")
    lines.append(f"{len(stats)} session(s) in {len(by_project)} project(s), {total_records} records.")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None, out: Any = None, err: Any = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    out = out or sys.stdout
    err = err or sys.stderr
    debug = "--debug" in argv
    try:
        if argv and argv[0] == "stats":
            args = _stats_parser().parse_args(argv[1:])
            return cmd_stats(args, out, err)
        args = _root_parser().parse_args(argv)
        # Until the TUI lands, the main job is the stats table.
        args.json, args.no_cache = False, False
        return cmd_stats(args, out, err)
    except SystemExit as exc:  # argparse: --help, --version, usage errors
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    except KeyboardInterrupt:
        err.write("inspector: interrupted\n")
        return 130
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - the one place errors become a message
        if debug:
            raise
        from inspector.transcript.discovery import InspectorError

        if isinstance(exc, InspectorError):
            err.write(f"inspector: {exc}\n")
            return EXIT_USAGE
        if isinstance(exc, OSError):
            err.write(f"inspector: {exc.strerror or exc}: {exc.filename or ''}\n")
            return EXIT_ERROR
        err.write(f"inspector: unexpected error: {type(exc).__name__}: {exc} (run with --debug for details)\n")
        return EXIT_ERROR
