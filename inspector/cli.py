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

SUBCOMMANDS = ("stats", "tokens")


def _root_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="inspector",
        description="Look inside Claude Code sessions: records, tokens, compactions.",
        epilog="Subcommands: stats (facts about every session), tokens (thresholds, context per turn, why each "
        "compaction fired). `inspector SUBCOMMAND --help` for each.",
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


def _tokens_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="inspector tokens",
        description="The token story of each session under PATH: Claude Code's thresholds, the context at every "
        "response, and why each compaction fired. Settings come from the environment and Claude Code's config; "
        "the flags override them to ask 'what if'.",
    )
    p.add_argument("path", nargs="?", help="a .jsonl transcript, a project folder or a projects root")
    p.add_argument("--json", action="store_true", help="print a JSON array, one object per session")
    p.add_argument("--full", action="store_true", help="with --json: full summary and analysis texts")
    p.add_argument("--at", metavar="UUID", help="also show what fills the context at this record")
    g = p.add_argument_group("what if (override Claude Code's settings)")
    g.add_argument("--model", help="model id or setting, e.g. claude-opus-4-6 or opus[1m] (default: the session's)")
    g.add_argument("--window", type=int, metavar="N", help="context window in tokens (default: 200,000; 1M if usage exceeded 200k)")
    g.add_argument("--one-m", action=argparse.BooleanOptionalAction, default=None, help="assume a 1M window (or not)")
    g.add_argument("--auto-compact-window", type=int, metavar="N", help="CLAUDE_CODE_AUTO_COMPACT_WINDOW / autoCompactWindow")
    g.add_argument("--pct", type=float, metavar="P", help="CLAUDE_AUTOCOMPACT_PCT_OVERRIDE (can only lower the threshold)")
    g.add_argument("--no-auto-compact", action="store_true", help="as with DISABLE_AUTO_COMPACT or autoCompactEnabled=false")
    g.add_argument("--auto-compact", action="store_true", help="assume auto-compact on, whatever the config says")
    g.add_argument("--max-output-tokens", type=int, metavar="N", help="CLAUDE_CODE_MAX_OUTPUT_TOKENS")
    g.add_argument("--blocking-limit", type=int, metavar="N", help="CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE")
    g.add_argument("--disable-1m", action="store_true", help="CLAUDE_CODE_DISABLE_1M_CONTEXT")
    g.add_argument("--output-cap", action="store_true", help="assume the 8k output-slot cap (GrowthBook tengu_otk_slot_v1; off by default)")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def settings_from_args(args: argparse.Namespace) -> Any:
    """Claude Code's settings from the environment and config, then the user's overrides."""
    from inspector.tokens.thresholds import Settings

    s = Settings.from_environment()
    changes: dict[str, Any] = {}
    for flag, field in (("model", "model"), ("window", "window"), ("one_m", "one_m"), ("auto_compact_window", "auto_compact_window"),
                        ("pct", "pct_override"), ("max_output_tokens", "max_output_tokens"), ("blocking_limit", "blocking_override")):
        v = getattr(args, flag, None)
        if v is not None:
            changes[field] = v
    if getattr(args, "no_auto_compact", False):
        changes["auto_compact_enabled"] = False
    if getattr(args, "auto_compact", False):
        changes["auto_compact_enabled"], changes["compact_disabled"] = True, False
    if getattr(args, "disable_1m", False):
        changes["disable_1m"] = True
    if getattr(args, "output_cap", False):
        changes["output_slot_cap"] = True
    if args.pct is not None and not 0 < args.pct <= 100:
        from inspector.transcript.discovery import InspectorError

        raise InspectorError("--pct must be in (0, 100]")
    return s.with_(**changes) if changes else s


def cmd_tokens(args: argparse.Namespace, out: Any, err: Any) -> int:
    import orjson

    from inspector.tokens.context import composition
    from inspector.tokens.explain import analyze
    from inspector.tokens.series import token_count_with_estimation
    from inspector.transcript.discovery import InspectorError, resolve_target, session_files
    from inspector.transcript.session import Session

    settings = settings_from_args(args)
    path = Path(args.path) if args.path else _default_path(err)
    target = resolve_target(path)
    reports = []
    found_at = False
    for f, agents in session_files(target):
        s = Session.load(f)
        rep = analyze(s, settings)
        d = rep.as_dict(full=args.full)
        if args.at:
            i = s.conversation.by_uuid.get(args.at)
            if i is not None and i in rep.series.chain:
                found_at = True
                pos = rep.series.chain.index(i)
                comp = composition(s, rep.series, rep.counts, rep.calibration, pos)
                d["at"] = {"uuid": args.at, "token_count_with_estimation": token_count_with_estimation(s, rep.series, pos),
                           "composition": comp.as_dict()}
        reports.append((rep, d))
    if args.at and not found_at:
        raise InspectorError(f"no record {args.at} on the conversation of the session(s) under {path}")
    if args.json:
        out.write(orjson.dumps([d for _, d in reports], option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        out.write("\n".join(format_token_report(rep, d) for rep, d in reports) or "No sessions found.\n")
    return EXIT_OK


def _bar(n: int, scale: float, width: int, marks: dict[int, str]) -> str:
    cells = [" "] * width
    filled = min(width, int(round(n * scale)))
    for k in range(filled):
        cells[k] = "█"
    for col, ch in marks.items():
        if 0 <= col < width and cells[col] == " ":
            cells[col] = ch
    return "".join(cells)


def format_token_report(rep: Any, d: dict[str, Any], width: int = 48, max_rows: int = 24) -> str:
    """The readable `tokens` report: thresholds, a text chart, each compaction explained."""
    from inspector.textutil import printable

    th = d["thresholds"]
    lines = [f"{printable(d['title'] or '(untitled)')}  ({d['session_id']})",
             f"  {d['path']}",
             f"  model {d['model'] or '?'}, Claude Code {d['version'] or '?'}"]
    auto = th["auto_compact"]
    lines.append(
        f"  Thresholds: window {th['context_window']:,} ({th['window_source']}), effective {th['effective_window']:,}, "
        f"warning {th['warning']:,}, " + (f"auto-compact {auto:,}, " if auto is not None else "auto-compact off, ")
        + f"blocking {th['blocking']:,}")
    c = d["calibration"]
    lines.append(f"  Calibration: fixed overhead ≈ {c['overhead_tokens']:,} tokens, ratio {c['ratio']} (offline tokenizer → API), "
                 f"fit error {c['error_pct']}% over {c['points']} responses ({c['method']})")
    turns = d["turns"]
    if turns:
        top = max(th["context_window"], max(t["context_tokens"] for t in turns))
        scale = width / top
        marks = {int(th["warning"] * scale): "│", int(th["blocking"] * scale): "┃"}
        if auto is not None:
            marks[int(auto * scale)] = "╏"
        lines.append(f"  Context per response ({len(turns)}; █ = context, │ warning, ╏ auto-compact, ┃ blocking):")
        segs: dict[int, list[dict[str, Any]]] = {}
        for t in turns:
            segs.setdefault(t["segment"], []).append(t)
        comps = [x for x in d["compactions"] if x["kind"] == "compact"]
        per_seg = max(2, max_rows // max(1, len(segs)))
        for seg, ts in segs.items():
            if seg > 0 and seg - 1 < len(comps):
                cx = comps[seg - 1]
                lines.append(f"    ── {cx['strategy']} compaction at {cx['pre_tokens'] if cx['pre_tokens'] is not None else '?':,} tokens ──")
            step = max(1, -(-len(ts) // per_seg))
            for k in range(0, len(ts), step):
                chunk = ts[k : k + step]
                peak = max(chunk, key=lambda t: t["context_tokens"])
                when = (peak["timestamp"] or "")[11:16]
                lines.append(f"    {when:>5} {peak['context_tokens']:>9,} {peak['percent_left']:>3}% left "
                             f"{_bar(peak['context_tokens'], scale, width, marks)} {'' if peak['state'] == 'ok' else peak['state']}")
    else:
        lines.append("  No API responses with usage on this session's chain.")
    for x in d["compactions"]:
        lines.append(f"  • {x['strategy']} ({x['trigger'] or '?'}) at {(x['timestamp'] or '?')[:19]}: {x['explanation']}")
        if x["kind"] == "compact":
            extra = []
            if x["predicted_post_tokens"] is not None:
                extra.append(f"predicted size after {x['predicted_post_tokens']:,}")
            if x["messages_summarized"] is not None:
                extra.append(f"{x['messages_summarized']} messages summarized, {x['messages_kept'] or 0} kept")
            if x.get("compact_call") and x["compact_call"].get("usage"):
                extra.append(f"summarizer call {x['compact_call']['agent_id']} read {x['compact_call']['usage']['context_tokens']:,} tokens")
            if extra:
                lines.append("      " + "; ".join(extra))
    for a in d["anomalies"]:
        lines.append(f"  ! {a}")
    for sa in d.get("subagents", []):
        if sa["turns"]:
            lines.append(f"  subagent {sa['agent_id']} ({sa['kind']}): {sa['turns']} responses, peak {sa['peak_tokens']:,} tokens"
                         f" — `inspector tokens {sa['path']}` for its own series")
    if "at" in d:
        at = d["at"]
        comp = at["composition"]
        lines.append(f"  At {at['uuid']}: tokenCountWithEstimation {at['token_count_with_estimation']:,}; "
                     f"context {comp['total']:,} ({comp['source']}):")
        for cat, n in sorted(comp["categories"].items(), key=lambda kv: -kv[1]):
            lines.append(f"      {n:>9,}  {cat}")
        for it in comp["largest_tool_results"][:5]:
            lines.append(f"      {it['tokens']:>9,}  {it['tool']} {printable(it['what'])[:80]}")
    return "\n".join(lines) + "\n"


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
        if argv and argv[0] == "tokens":
            args = _tokens_parser().parse_args(argv[1:])
            return cmd_tokens(args, out, err)
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
