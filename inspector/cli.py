"""The command line: `inspector [PATH]` and headless subcommands over the same core.

Errors are one line on stderr and a non-zero exit; a traceback only with --debug.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from inspector import __version__

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def _report(lines: list[str]) -> str:
    """A report's lines as printed: transcript text in them (titles, models, times, paths) never acts on
    the terminal. Every report goes through here, whatever each field already did."""
    from inspector.textutil import printable

    return "".join(printable(line) + "\n" for line in lines)


def json_text(obj: Any) -> str:
    """One JSON value on one line, for the --json outputs (paths that are not UTF-8 included), with nothing in it a
    terminal would act on or hide (C1 controls, bidi overrides, zero-width characters are \\u escapes)."""
    from inspector.textutil import json_dumps, json_safe_text

    return json_safe_text(json_dumps(obj).decode()) + "\n"


def json_lines(objs: Any) -> str:
    """JSON Lines: one object per line, what `jq` and scripts read as a stream (stats, tokens, search, request)."""
    return "".join(json_text(o) for o in objs)


def _root_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="inspector",
        description="Look inside Claude Code sessions: records, tokens, compactions.",
        epilog="subcommands:\n"
        + "\n".join(f"  {name:<9} {what}" for name, (_make, _cmd, what) in COMMANDS.items())
        + "\n\n`inspector SUBCOMMAND --help` for each; --debug (tracebacks) goes before or after the subcommand.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "path",
        nargs="?",
        help="a projects root, a project folder or one .jsonl transcript "
        "(default: $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects; the bundled samples if that has no sessions)",
    )
    p.add_argument("--version", action="version", version=f"inspector {__version__}")
    p.add_argument("--no-tui", action="store_true", help="print the stats table instead of opening the app")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _stats_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="inspector stats",
        description="Facts about every session under PATH: records, chain, compactions, context, subagents.",
    )
    p.add_argument("path", nargs="?", help="projects root, project folder or .jsonl file (default: the projects root)")
    p.add_argument("--json", action="store_true", help="print JSON Lines: one object per session, one per line")
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
    p.add_argument("--json", action="store_true", help="print JSON Lines: one object per session, one per line")
    p.add_argument("--full", action="store_true", help="with --json: full summary and analysis texts")
    p.add_argument(
        "--at",
        metavar="REF",
        help="also show what fills the context at this record (a uuid, a uuid prefix or, "
        "for one file, a line number, as show prints them)",
    )
    g = p.add_argument_group("what if (override Claude Code's settings)")
    g.add_argument("--model", help="model id or setting, e.g. claude-opus-4-6 or opus[1m] (default: the session's)")
    g.add_argument(
        "--window", type=_positive, metavar="N", help="context window in tokens (default: 200,000; 1M if usage exceeded 200k)"
    )
    g.add_argument("--one-m", action=argparse.BooleanOptionalAction, default=None, help="assume a 1M window (or not)")
    g.add_argument(
        "--auto-compact-window", type=_positive, metavar="N", help="CLAUDE_CODE_AUTO_COMPACT_WINDOW / autoCompactWindow"
    )
    g.add_argument(
        "--model-auto-compact-window",
        type=_positive,
        metavar="N",
        help="settings modelSettings.<the session's model>.autoCompactWindow (2.1.3xx; what /autocompact writes)",
    )
    g.add_argument(
        "--enforce",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="assume the threshold is (not) enforced, whatever the window source says (2.1.159+)",
    )
    g.add_argument("--pct", type=float, metavar="P", help="CLAUDE_AUTOCOMPACT_PCT_OVERRIDE (can only lower the threshold)")
    g.add_argument("--no-auto-compact", action="store_true", help="as with DISABLE_AUTO_COMPACT or autoCompactEnabled=false")
    g.add_argument("--auto-compact", action="store_true", help="assume auto-compact on, whatever the config says")
    g.add_argument("--max-output-tokens", type=_positive, metavar="N", help="CLAUDE_CODE_MAX_OUTPUT_TOKENS")
    g.add_argument("--blocking-limit", type=_positive, metavar="N", help="CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE")
    g.add_argument("--disable-1m", action="store_true", help="CLAUDE_CODE_DISABLE_1M_CONTEXT")
    g.add_argument(
        "--output-cap", action="store_true", help="assume the 8k output-slot cap (GrowthBook tengu_otk_slot_v1; off by default)"
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _positive(text: str) -> int:
    """An argument that must be a whole number above zero (a window, a limit, a count of tokens)."""
    try:
        n = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0, not {n}")
    return n


def _window_arg(text: str) -> int:
    """A number of tokens, with an optional k or m suffix ("200k")."""
    from inspector.tokens.thresholds import window_value

    n = window_value(text)
    if n is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of tokens above 0 (200000, 200k, 1m)")
    return n


def _non_negative(text: str) -> int:
    try:
        n = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {n}")
    return n


def _non_negative_float(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (x >= 0) or x == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number, 0 or more, not {text}")
    return x


def settings_from_args(args: argparse.Namespace) -> Any:
    """Claude Code's settings from the environment and config, then the user's overrides."""
    from inspector.tokens.thresholds import Settings, pct_in_range

    s = Settings.from_environment()
    changes: dict[str, Any] = {}
    sources = list(s.sources)
    for flag, field in (
        ("model", "model"),
        ("window", "window"),
        ("one_m", "one_m"),
        ("auto_compact_window", "auto_compact_window"),
        ("pct", "pct_override"),
        ("max_output_tokens", "max_output_tokens"),
        ("blocking_limit", "blocking_override"),
    ):
        v = getattr(args, flag, None)
        if v is not None:
            changes[field] = v
            if field == "auto_compact_window":  # the flag, not the environment, set it now
                sources = [(k, w) for k, w in sources if k != "auto_compact_window"] + [(field, "--auto-compact-window")]
    if getattr(args, "model_auto_compact_window", None) is not None:
        changes["model_windows"] = (("*", args.model_auto_compact_window),)
        sources = [(k, w) for k, w in sources if k != "auto_compact_window"] + [
            ("auto_compact_window", "--model-auto-compact-window")
        ]
    if getattr(args, "enforce", None) is not None:
        changes["enforce"] = args.enforce
    if sources != list(s.sources):
        changes["sources"] = tuple(sources)
    if getattr(args, "no_auto_compact", False):
        changes["auto_compact_enabled"] = False
    if getattr(args, "auto_compact", False):
        changes["auto_compact_enabled"], changes["compact_disabled"] = True, False
    if getattr(args, "disable_1m", False):
        changes["disable_1m"] = True
    if getattr(args, "output_cap", False):
        changes["output_slot_cap"] = True
    if getattr(args, "pct", None) is not None and not pct_in_range(args.pct):
        from inspector.transcript.discovery import InspectorError

        raise InspectorError("--pct must be in (0, 100]")
    return s.with_(**changes) if changes else s


def cmd_tokens(args: argparse.Namespace, out: Any, err: Any) -> int:
    from inspector.tokens.context import composition
    from inspector.tokens.explain import analyze
    from inspector.tokens.series import token_count_with_estimation
    from inspector.tokens.thresholds import Settings
    from inspector.transcript.discovery import InspectorError, resolve_target, session_files
    from inspector.transcript.session import Session

    settings = settings_from_args(args)
    baseline = Settings.from_environment()  # what the session's own settings are taken to be, when a flag is a what-if
    path = Path(args.path) if args.path else _default_path(err)
    target = resolve_target(path)
    report_unreadable(target, err)
    files = session_files(target)
    skipped: list[tuple[Path, str]] = []
    # Each session is printed as soon as it is explained and then let go (its file closed): a root of thousands
    # of sessions costs one session's memory and one open file at a time. With --at the reports wait, since
    # the uuid may be in none of them.
    held: list[tuple[Any, dict[str, Any]]] = []
    array = JsonArray(out) if args.json and not args.at else None
    found_at = printed = False
    for f, _agents in files:
        try:
            s = Session.load(f)
            rep = analyze(s, settings, baseline=baseline)
            d = rep.as_dict(full=args.full)
        except OSError as exc:
            if target.kind == "file":
                raise
            skipped.append((f, exc.strerror or str(exc)))
            continue
        if args.at:
            try:  # a uuid, a uuid prefix, or (for one file) a line number
                i = s.find_record(args.at) if target.kind == "file" or not args.at.strip().isdigit() else None
            except LookupError as exc:
                if target.kind == "file":
                    raise InspectorError(f"{exc} in {f}") from None
                i = None
            if i is not None and i in rep.series.chain:
                found_at = True
                pos = rep.series.chain.index(i)
                comp = composition(s, rep.series, rep.counts, rep.calibration, pos)
                d["at"] = {
                    "uuid": s.records[i].uuid,
                    "token_count_with_estimation": token_count_with_estimation(s, rep.series, pos),
                    "composition": comp.as_dict(),
                }
            held.append((rep, d))
        elif array is not None:
            array.add(d)
        else:
            out.write(("\n" if printed else "") + format_token_report(rep, d))
            printed = True
        s.close()
    report_skipped(skipped, err)
    if args.at and not found_at:
        raise InspectorError(f"no record {args.at} on the conversation of the session(s) under {path}")
    if array is not None:
        array.close()
    elif args.json:
        out.write(json_lines(d for _, d in held))
    elif held:
        out.write("\n".join(format_token_report(rep, d) for rep, d in held))
    elif not printed:
        out.write("No sessions found.\n")
    return EXIT_OK


class JsonArray:
    """JSON Lines written one object at a time, as each session is done (memory stays flat over many sessions)."""

    def __init__(self, out: Any) -> None:
        self.out, self.n = out, 0

    def add(self, obj: Any) -> None:
        self.out.write(json_text(obj))
        self.n += 1

    def close(self) -> None:
        pass


def _report_paths(head: str, items: list[tuple[Path, str]], err: Any) -> None:
    """A heading, then each path with why (50 at most, the rest counted)."""
    from inspector.textutil import printable

    if items:
        err.write(head + "\n")
        for p, why in items[:50]:
            err.write(printable(f"  {p}: {why}") + "\n")
        if len(items) > 50:
            err.write(f"  … and {len(items) - 50} more\n")


def report_unreadable(target: Any, err: Any) -> None:
    """Name the folders under a target that could not be read: their sessions are left out of what follows."""
    from inspector.transcript.discovery import unreadable_folders

    bad = unreadable_folders(target)
    _report_paths(f"inspector: cannot read {len(bad)} folder(s); their sessions are left out:", bad, err)


def report_skipped(skipped: list[tuple[Path, str]], err: Any) -> None:
    """Name the files a command could not read and went on without."""
    _report_paths(f"inspector: skipped {len(skipped)} file(s) it could not read:", skipped, err)


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
    lines = [
        f"{printable(d['title'] or '(untitled)')}  ({d['session_id']})",
        f"  {d['path']}",
        f"  model {d['model'] or '?'}, Claude Code {d['version'] or '?'}",
    ]
    auto = th["auto_compact"]
    if auto is not None:
        auto_words = f"auto-compact {auto:,}, "
    elif th.get("unenforced_threshold") is not None:
        auto_words = (
            f"auto-compact {th['unenforced_threshold']:,} not enforced (window source {th['compact_source']}: "
            "Claude Code compacts only when the API refuses a request), "
        )
    else:
        auto_words = "auto-compact off, "
    lines.append(
        f"  Thresholds: window {th['context_window']:,} ({th['window_source']}), effective {th['effective_window']:,}, "
        f"warning {th['warning']:,}, " + auto_words + f"blocking {th['blocking']:,}"
    )
    if th.get("rules"):
        lines.append(f"  Rules: {th['rules']}")
    if th.get("measured"):
        lines.append(f"  Checked on the binary: {th['measured']}")
    c = d["calibration"]
    caveat = ""
    if c["error_pct"] > 10:
        caveat = (
            " — a poor fit: the context changed in ways the transcript does not show (a resumed or edited "
            "session, server-side clearing), so estimates from it are rough"
        )
    lines.append(
        f"  Calibration: fixed overhead ≈ {c['overhead_tokens']:,} tokens, ratio {c['ratio']} (offline tokenizer → API), "
        f"fit error {c['error_pct']}% over {c['points']} responses ({c['method']})" + caveat
    )
    turns = d["turns"]
    if turns:
        top = max(th["context_window"], max(t["context_tokens"] for t in turns))
        scale = width / top
        if th.get("enforced", True):
            marks = {int(th["warning"] * scale): "│", int(th["blocking"] * scale): "┃"}
            if auto is not None:
                marks[int(auto * scale)] = "╏"
            legend = "█ = context, │ warning, ╏ auto-compact, ┃ blocking"
        else:  # Claude Code acts on no threshold here: only the one it computes, for reference
            marks = {int(th["unenforced_threshold"] * scale): "┆"} if th.get("unenforced_threshold") else {}
            legend = "█ = context, ┆ the auto-compact threshold, not enforced"
        lines.append(f"  Context per response ({len(turns)}; {legend}):")
        segs: dict[int, list[dict[str, Any]]] = {}
        for t in turns:
            segs.setdefault(t["segment"], []).append(t)
        comps = [x for x in d["compactions"] if x["kind"] == "compact"]
        per_seg = max(2, max_rows // max(1, len(segs)))
        for seg, ts in segs.items():
            if seg > 0 and seg - 1 < len(comps):
                cx = comps[seg - 1]
                lines.append(
                    f"    ── {cx['strategy']} compaction at {cx['pre_tokens'] if cx['pre_tokens'] is not None else '?':,} "
                    f"tokens ──"
                )
            step = max(1, -(-len(ts) // per_seg))
            for k in range(0, len(ts), step):
                chunk = ts[k : k + step]
                peak = max(chunk, key=lambda t: t["context_tokens"])
                when = (peak["timestamp"] or "")[11:16]
                lines.append(
                    f"    {when:>5} {peak['context_tokens']:>9,} {peak['percent_left']:>3}% left "
                    f"{_bar(peak['context_tokens'], scale, width, marks)} {'' if peak['state'] == 'ok' else peak['state']}"
                )
    else:
        lines.append("  No API responses with usage on this session's chain.")
    for x in d["compactions"]:
        how = x["strategy"] if x["trigger"] in (None, x["strategy"]) else f"{x['strategy']} ({x['trigger']})"
        lines.append(f"  • {how} at {(x['timestamp'] or '?')[:19]}: {x['explanation']}")
        if x["kind"] == "compact":
            extra = []
            if x["predicted_post_tokens"] is not None:
                extra.append(f"predicted size after {x['predicted_post_tokens']:,}")
            if x["messages_summarized"] is not None:
                extra.append(f"{x['messages_summarized']} messages summarized, {x['messages_kept'] or 0} kept")
            if x.get("compact_call") and x["compact_call"].get("usage"):
                extra.append(
                    f"summarizer call {x['compact_call']['agent_id']} read {x['compact_call']['usage']['context_tokens']:,} "
                    f"tokens"
                )
            if extra:
                lines.append("      " + "; ".join(extra))
        if x.get("prediction_notes"):
            lines.append("      prediction assumes: " + "; ".join(x["prediction_notes"]))
    for a in d["anomalies"]:
        lines.append(f"  ! {a}")
    for sa in d.get("subagents", []):
        if sa["turns"]:
            lines.append(
                f"  subagent {sa['agent_id']} ({sa['kind']}): {sa['turns']} responses, peak {sa['peak_tokens']:,} tokens"
                f" — `inspector tokens {sa['path']}` for its own series"
            )
    if "at" in d:
        at = d["at"]
        comp = at["composition"]
        lines.append(
            f"  At {at['uuid']}: tokenCountWithEstimation {at['token_count_with_estimation']:,}; "
            f"context {comp['total']:,} ({comp['source']}):"
        )
        for cat, n in sorted(comp["categories"].items(), key=lambda kv: -kv[1]):
            lines.append(f"      {n:>9,}  {cat}")
        for it in comp["largest_tool_results"][:5]:
            lines.append(f"      {it['tokens']:>9,}  {it['tool']} {printable(it['what'])[:80]}")
    return _report(lines)


def _compact_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="inspector compact",
        description="Run one of Claude Code's compaction strategies on a session and preview the result: what the model "
        "would see, tokens before and after against the thresholds. A dry run unless --write, which saves a new session "
        "(the original is never modified) and prints the command to resume it.",
    )
    p.add_argument("path", help="the session's .jsonl transcript")
    p.add_argument(
        "--strategy",
        choices=["compact", "reactive", "partial", "full", "session-memory", "microcompact"],
        help="default: what the session's own Claude Code does (compact from 2.1.159, full before); "
        "--strategies lists them with the releases that had each",
    )
    p.add_argument("--strategies", action="store_true", help="list the strategies for this session's release and exit")
    p.add_argument(
        "--at",
        metavar="REF",
        help="partial: the prompt to summarize from (or up to), one the rewind menu offers; "
        "other strategies: compact as if the session ended at this record (default: its last message). A uuid, "
        "a uuid prefix or a line number, as show prints them",
    )
    p.add_argument(
        "--direction",
        default="from",
        choices=["from", "up-to", "up_to"],
        help="partial: summarize from the message on, or up to it",
    )
    p.add_argument(
        "--trigger",
        default="manual",
        choices=["manual", "auto"],
        help="compact: as /compact [instructions] (manual, default) or as the threshold would (auto)",
    )
    p.add_argument(
        "--refused-at", type=_window_arg, metavar="N", help="reactive: the limit the API refused the request at (e.g. 200k)"
    )
    p.add_argument(
        "--prompt-tokens",
        type=_window_arg,
        metavar="N",
        help="reactive: the size the refusal gave the request (default: the context at the point, or 1 over the limit)",
    )
    p.add_argument("--allow-live", action="store_true", help="with --write: save even when the session is still being written")
    p.add_argument(
        "--allow-newer",
        action="store_true",
        help="with --write: save a session from a Claude Code newer than the releases inspector's saves were checked on",
    )
    p.add_argument(
        "--summarizer",
        default="offline",
        choices=["offline", "anthropic"],
        help="offline (default: nothing leaves this machine) or anthropic (sends the conversation; asks first)",
    )
    p.add_argument("--model", help="anthropic: the model that writes the summary (default: %(default)s)", default=None)
    p.add_argument("--instructions", metavar="TEXT", help="full: /compact instructions; partial: the context you give")
    p.add_argument(
        "--yes", action="store_true", help="anthropic, --exact: send without asking (after you have seen what it sends once)"
    )
    p.add_argument(
        "--exact",
        action="store_true",
        help="with ANTHROPIC_API_KEY: count the messages after the compaction with the "
        "API's token-counting endpoint (sends those messages to count them; nothing is generated)",
    )
    p.add_argument("--json", action="store_true", help="print the result as one JSON object (on one line)")
    p.add_argument("--write", action="store_true", help="save the result as a new session beside the original")
    p.add_argument("--out", metavar="FILE", help="with --write: the new .jsonl file (must not exist)")
    g = p.add_argument_group("microcompact")
    g.add_argument(
        "--gap-minutes", type=_non_negative_float, default=60.0, help="minutes since the last reply before clearing (default 60)"
    )
    g.add_argument("--keep-recent", type=_non_negative, default=5, help="most recent tool results kept (default 5)")
    g.add_argument("--now", metavar="ISO", help="the time to measure the gap to (default: now)")
    g.add_argument("--force", action="store_true", help="clear even when the gap is under the threshold")
    g = p.add_argument_group("session-memory")
    g.add_argument("--min-tokens", type=_non_negative, default=10_000)
    g.add_argument("--min-text-messages", type=_non_negative, default=5)
    g.add_argument("--max-tokens", type=_positive, default=40_000)
    g.add_argument("--last-summarized", metavar="UUID", help="lastSummarizedMessageId (default: the resumed-session rule)")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _confirm(args: argparse.Namespace, err: Any, what: str) -> None:
    """Say what would leave the machine; go on only with --yes or a yes typed at a terminal."""
    from inspector.transcript.discovery import InspectorError

    err.write(f"inspector: {what}\n")
    if args.yes:
        return
    if not (hasattr(sys.stdin, "isatty") and sys.stdin.isatty()):
        raise InspectorError("nothing was sent: re-run with --yes to send it")
    err.write("Send it? [y/N] ")
    err.flush()
    if sys.stdin.readline().strip().lower() not in ("y", "yes"):
        raise InspectorError("nothing was sent")


def _confirm_send(summ: Any, req: Any, args: argparse.Namespace, err: Any) -> None:
    """Show what the Anthropic summarizer would send and what it costs; send only with consent."""
    est = summ.estimate(req)
    _confirm(args, err, f"the Anthropic summarizer would send {est.describe()}")


def cmd_compact(args: argparse.Namespace, out: Any, err: Any) -> int:
    from inspector.compact import (
        STRATEGIES,
        KeepConfig,
        MicrocompactParams,
        SessionMemoryParams,
        compact,
        make_slice,
        resolve_reference,
    )
    from inspector.compact.summarize.base import SummaryRequest
    from inspector.edit import save
    from inspector.transcript.discovery import InspectorError, resolve_target
    from inspector.transcript.session import Session

    target = resolve_target(args.path)
    if target.kind != "file":
        raise InspectorError(f"compact works on one session: give a .jsonl file, not {target.kind} {args.path}")
    assert args.strategy is None or args.strategy in STRATEGIES
    s = Session.load(target.path)
    if args.strategies:
        out.write(format_strategies(s))
        return EXIT_OK
    settings = settings_from_args(
        argparse.Namespace(
            **{
                **vars(args),
                "model": None,
                "window": None,
                "one_m": None,
                "auto_compact_window": None,
                "pct": None,
                "max_output_tokens": None,
                "blocking_limit": None,
            }
        )
    )
    if args.at:  # a uuid, a uuid prefix or a line number, as `show` prints them
        args.at = resolve_reference(s, args.at, pivot=args.strategy == "partial", settings=settings)
    summarizer = None
    if args.summarizer == "anthropic":
        from inspector.compact.summarize.anthropic_api import DEFAULT_MODEL, AnthropicSummarizer

        summarizer = AnthropicSummarizer(args.model or DEFAULT_MODEL)
        if not summarizer.has_key:
            raise InspectorError("set ANTHROPIC_API_KEY to use the Anthropic summarizer (nothing was sent)")
        if args.strategy != "microcompact":
            sl = make_slice(s, None if args.strategy == "partial" else args.at, settings)
            req = SummaryRequest(s, tuple(sl.messages), instructions=args.instructions)
            _confirm_send(summarizer, req, args, err)
    now = None
    if args.now:
        try:
            now = datetime.fromisoformat(args.now.replace("Z", "+00:00"))
            if now.tzinfo is None:  # a time without a zone is UTC, as the transcripts' are
                now = now.replace(tzinfo=UTC)
            now.timestamp()  # the year 1 is a date, but not one a clock can be measured from
        except (ValueError, OverflowError, OSError):
            raise InspectorError(f"--now must be an ISO date and time after 1970, not {args.now!r}") from None
    direction = args.direction.replace("-", "_")
    res = compact(
        s,
        args.strategy,
        at=None if args.strategy == "partial" else args.at,
        pivot=args.at if args.strategy == "partial" else None,
        direction=direction,
        instructions=args.instructions,
        summarizer=summarizer,
        settings=settings,
        microcompact_params=MicrocompactParams(
            gap_minutes=args.gap_minutes, keep_recent=args.keep_recent, now=now, force=args.force
        ),
        session_memory_params=SessionMemoryParams(
            KeepConfig(args.min_tokens, args.min_text_messages, args.max_tokens), args.last_summarized
        ),
        trigger=args.trigger,
        refused_at=args.refused_at,
        prompt_tokens=args.prompt_tokens,
    )
    exact = None
    if args.exact:
        from inspector.compact.base import Estimator
        from inspector.compact.summarize.anthropic_api import DEFAULT_MODEL, AnthropicSummarizer

        counter = AnthropicSummarizer(args.model or DEFAULT_MODEL)
        if not counter.has_key:
            raise InspectorError("--exact needs ANTHROPIC_API_KEY (nothing was sent)")
        from inspector.claude.requests import recorded_shape

        shape = recorded_shape(s)
        what = (
            f"the request a resume would send ({len(res.api_messages)} messages with the session's system prompt and tools, "
            f"about {res.tokens_after:,} tokens)"
            if res.api_messages is not None and shape is not None
            else f"the {len(res.view)} messages after the compaction"
        )
        _confirm(
            args, err, f"--exact sends {what} to the Anthropic API's token-counting endpoint (no charge, nothing is generated)"
        )
        if res.api_messages is not None and shape is not None:  # 2.1.3xx: the whole request, as Claude Code would send it
            exact = counter.count_request(
                shape.get("system"), shape.get("tools"), [dict(m) for m in res.api_messages], s.main_model
            )
        else:
            overhead = round(Estimator(s, make_slice(s, None, settings).series, settings).calibration.overhead)
            exact = overhead + counter.count_messages([(v.role, dict(v.body)) for v in res.view])
    saved = None
    if args.write:
        from inspector.edit.saving import RefusedSave

        try:
            saved = save(
                s, res, out=Path(args.out) if args.out else None, allow_live=args.allow_live, allow_newer=args.allow_newer
            )
        except RefusedSave as exc:
            raise InspectorError(f"{exc} ({exc.flag} saves it anyway)") from None
    if args.json:
        d = res.as_dict()
        d["written"] = str(saved.path) if saved else None
        d["tokens_after_exact"] = exact
        d["save"] = saved.as_dict() if saved else None
        out.write(json_text(d))
    else:
        out.write(format_compaction(res, saved))
        if exact is not None:
            out.write(
                f"Exact: the API counts the messages after the compaction at {exact:,} tokens (with the calibrated fixed "
                f"overhead).\n"
            )
    return EXIT_OK


def format_strategies(s: Any) -> str:
    from inspector.claude.versions import STRATEGY_WORDS, default_strategy, releases_with, rules_for, what_if
    from inspector.textutil import printable

    rules = rules_for(s.version)
    default = default_strategy(rules.era)
    lines = [printable(f"{s.title or s.session_id}: {rules.note}"), ""]
    for name, words in STRATEGY_WORDS.items():
        cli = name.replace("partial-from", "partial").replace("partial-up-to", "partial --direction up-to")
        mark = " (default)" if name == default else " (a what-if for this session)" if what_if(name, rules.era) else ""
        lines.append(f"  {cli:<28} {words}: {releases_with(name)}{mark}")
    return _report(lines)


def format_compaction(res: Any, saved: Any = None) -> str:
    from inspector.textutil import printable

    d = res.as_dict()
    th = d["thresholds"]
    auto = th["auto_compact"]
    lines = [
        f"{res.strategy} compaction"
        + (f" ({res.direction.replace('_', ' ')} {res.pivot_uuid})" if res.direction else "")
        + (f" — fell back from session-memory: {res.fallback}" if res.fallback else "")
    ]
    if res.strategy_label:
        lines.append(f"  Rules: {printable(res.strategy_label)}")
    if res.noop:
        lines.append(f"  Nothing would change: {res.noop}")
    lines.append(
        f"  Tokens: {res.tokens_before:,} ({d['state_before']}, {d['percent_left_before']}% left) → "
        f"{res.tokens_after:,} ({d['state_after']}, {d['percent_left_after']}% left); {res.change_words}"
    )
    auto_words = (
        f"auto-compact {auto:,}, "
        if auto is not None
        else f"auto-compact {th['unenforced_threshold']:,} not enforced, "
        if th.get("unenforced_threshold")
        else "auto-compact off, "
    )
    lines.append(
        f"  Thresholds: warning {th['warning']:,}, "
        + auto_words
        + f"blocking {th['blocking']:,}, window {th['context_window']:,}"
    )
    width = 50
    top = max(th["context_window"], res.tokens_before)
    for label, n in (("before", res.tokens_before), ("after", res.tokens_after)):
        bar = "█" * min(width, round(n / top * width))
        lines.append(f"  {label:>6} {bar:<{width}} {n:>9,}")
    if res.cleared_tool_results:
        lines.append(
            f"  Cleared {len(res.cleared_tool_results)} tool result(s): "
            + ", ".join(res.cleared_tool_results[:6])
            + (" …" if len(res.cleared_tool_results) > 6 else "")
        )
    if res.summarized_uuids or res.kept_uuids:
        lines.append(f"  Summarized {len(res.summarized_uuids)} record(s), kept {len(res.kept_uuids)}")
    if res.accounting_words:
        lines.append(f"  Made of: {res.accounting_words}")
    if res.restored_files_tokens:
        lines.append(
            f"  A live compaction would also re-attach recently used files, the plan and open todos: "
            f"+{res.restored_files_tokens:,} tokens"
        )
    for n in res.notes:
        lines.append(f"  note: {printable(n)}")
    if res.api_messages is not None:
        roles = ", ".join(f"{m.get('role')}" for m in res.api_messages)
        lines.append(
            f"  After `claude --resume`, Claude Code sends {len(res.api_messages)} message(s) before your next prompt: {roles} "
            "(--json: api_messages)"
        )
    if res.summarizer_usage:
        u = res.summarizer_usage
        lines.append(f"  Summarizer usage: {u.get('input_tokens', 0):,} in, {u.get('output_tokens', 0):,} out")
    if res.summary:
        lines.append("  Summary:")
        lines += ["    " + printable(ln, keep_newlines=True) for ln in res.summary.splitlines()]
    if saved is not None:
        lines.append(
            f"Saved {saved.records} records to {saved.path}"
            + (f" (+{len(saved.copied)} file(s) copied beside it)" if saved.copied else "")
        )
        lines.append(
            "Checked: chain intact, tool calls paired, the messages saved are those previewed"
            + (" and a resume sends the previewed api_messages." if res.api_messages is not None else ".")
        )
        if saved.resumable:
            lines.append(f"Resume it with: {saved.resume_command}")
        else:
            lines += saved.resume_hint.splitlines()
        for n in saved.notes:
            lines.append(f"note: {printable(n)}")
    elif res.changed:
        lines.append("Dry run: nothing was written. Add --write to save it as a new session.")
    return _report(lines)


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
        args.json, args.no_cache = False, False
        args.path = str(path)
        if not args.no_tui:
            err.write("inspector: not a terminal, so here is the stats table (run it in a terminal for the app)\n")
        return cmd_stats(args, out, err)
    from inspector.tui.app import run

    run(target, notices[0] if notices else None)
    return EXIT_OK


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
    from inspector.transcript.discovery import resolve_target
    from inspector.transcript.stats import StatsCache, cache_dir, collect_stats

    path = Path(args.path) if args.path else _default_path(err)
    target = resolve_target(path)
    report_unreadable(target, err)
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
    if target.kind == "file" and stats:
        bad = stats[0]["records"]
        if bad["total"] == 0 and bad["malformed"] > 0:
            from inspector.transcript.discovery import InspectorError

            first = stats[0]["problems"][0] if stats[0]["problems"] else None
            why = f" (line {first['line']}: {first['reason']})" if first else ""
            raise InspectorError(f"not a JSONL transcript: no line of {path} could be read{why}")
    from inspector.retention import Retention

    keep = Retention.read()
    for st in stats:  # when Claude Code's cleanup deletes it: from the file's time now, never cached
        due = keep.due(st["path"])
        st["deletion_due"] = due.isoformat(timespec="seconds").replace("+00:00", "Z") if due else None
    if args.json:
        out.write(json_lines(stats))
    else:
        out.write(format_table(stats))
        at_risk = [st for st in stats if keep.risk(Path(st["path"]))]
        if at_risk:
            out.write(
                f"\n{len(at_risk)} session(s) will be deleted by Claude Code's cleanup within 7 days or at its next "
                f"start ({keep.source}): `inspector archive --to DIR` keeps a copy.\n"
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


def _cost_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="inspector cost",
        description="What the sessions under PATH cost: every API response priced by its model (input, output, cache "
        "reads, 5-minute and 1-hour cache writes, web searches), each response counted once across the whole root "
        "(streamed fragments, resumed and forked copies, subagent files that repeat their parent's), subagents "
        "included. Prices: the table shipped in the package (dated), over which $XDG_CONFIG_HOME/inspector/"
        "prices.json (or $INSPECTOR_PRICES) wins; a model with no price is reported, never priced as zero.",
    )
    p.add_argument("path", nargs="?", help="a projects root, a project folder or a .jsonl file (default: the projects root)")
    p.add_argument(
        "--by",
        choices=["session", "project", "day", "model"],
        default="session",
        help="group by session (default), project, day (UTC, of each response) or model",
    )
    p.add_argument("--json", action="store_true", help="print JSON Lines: one object per group, one per line")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def cmd_cost(args: argparse.Namespace, out: Any, err: Any) -> int:
    from inspector.cost import Cost, Ledger, responses, subagent_responses, usd
    from inspector.textutil import printable
    from inspector.transcript.discovery import quick_info, resolve_target, session_files
    from inspector.transcript.session import Session
    from inspector.transcript.stats import project_name

    path = Path(args.path) if args.path else _default_path(err)
    target = resolve_target(path)
    report_unreadable(target, err)
    ledger = Ledger()
    for problem in ledger.table.problems:
        err.write(printable(f"inspector: prices: {problem}") + "\n")
    files = session_files(target)
    from inspector.transcript.stats import orphan_agents

    files += [(a, []) for a in orphan_agents(files)]  # a subagent whose session is gone still cost something
    # oldest first: a resumed or forked session's copy of earlier responses counts for the session they came from
    dated = []
    for f, _ in files:
        try:
            dated.append(((quick_info(f).first_timestamp or "~"), f))
        except OSError:
            continue
    groups: dict[str, dict[str, Any]] = {}
    skipped: list[tuple[Path, str]] = []
    total = Cost()

    def group(key: str, **facts: Any) -> dict[str, Any]:
        g = groups.get(key)
        if g is None:
            g = groups[key] = {"key": key, **facts, "own": Cost(), "subagents": Cost(), "claude_code_usd": None}
        return g

    for _, f in sorted(dated):
        try:
            s = Session.load(f)
        except OSError as exc:
            skipped.append((f, exc.strerror or str(exc)))
            continue
        try:
            if args.by == "session":
                own, subs = ledger.session(s)
                g = group(
                    str(f), session_id=s.session_id, title=s.title, project=s.cwd or f.parent.name, first_timestamp=s.time_span[0]
                )
                g["own"].merge(own)
                g["subagents"].merge(subs)
                cc = s.claude_cost
                if cc is not None:
                    g["claude_code_usd"] = cc["total_usd"]
                total.merge(own)
                total.merge(subs)
                continue
            for side, r in [("own", r) for r in responses(s)] + [("subagents", r) for r in subagent_responses(s)]:
                if args.by == "project":
                    key = str(f.parent)
                    g = group(key, project=project_name([s.cwd], f.parent) if s.cwd else f.parent.name)
                elif args.by == "day":
                    key = (r.timestamp or "")[:10]
                    key = key if re.fullmatch(r"\d{4}-\d\d-\d\d", key) else "unknown"
                    g = group(key, day=key)
                else:
                    key = r.model or "?"
                    g = group(key, model=key)
                c = Cost()
                ledger.price([r], c)
                g[side].merge(c)
                total.merge(c)
        finally:
            s.close()
    report_skipped(skipped, err)
    rows = list(groups.values())
    if args.by == "day":
        rows.sort(key=lambda g: g["key"])
    else:
        rows.sort(key=lambda g: -(g["own"].usd + g["subagents"].usd))
    if args.json:

        def obj(g: dict[str, Any]) -> dict[str, Any]:
            both = Cost()
            both.merge(g["own"])
            both.merge(g["subagents"])
            d = {k: v for k, v in g.items() if k not in ("own", "subagents", "key")}
            if args.by in ("session", "project"):
                d["path" if args.by == "session" else "project_dir"] = g["key"]
            d.update(
                cost_usd=round(both.usd, 6) if not both.unknown else None,
                cost_usd_priced=round(both.usd, 6),
                cost_subagents_usd=round(g["subagents"].usd, 6),
                cost_by_model=both.as_dict()["by_model"],
                unknown_models=both.as_dict()["unknown_models"],
                responses=both.responses,
                duplicates_skipped=both.duplicates,
                tokens=both.tokens,
                web_searches=both.web_searches,
                prices=ledger.table.date,
            )
            if g.get("claude_code_usd") is not None:
                d["difference_usd"] = round(both.usd - g["claude_code_usd"], 6)
            return d

        out.write(json_lines(obj(g) for g in rows))
        return EXIT_OK
    label = {"session": "session", "project": "project", "day": "day (UTC)", "model": "model"}[args.by]
    out.write(f"{'cost':>10} {'subagents':>10} {'responses':>9}  {label}\n")
    for g in rows:
        both = Cost()
        both.merge(g["own"])
        both.merge(g["subagents"])
        if args.by == "session":
            name = f"{(g.get('first_timestamp') or '')[:10]}  {g.get('title') or '(untitled)'}  [{g.get('project')}]"
        else:
            name = str(g.get("project")) if args.by == "project" else g["key"]
        extra = ""
        if both.unknown:
            extra += f"  (+ {sum(both.unknown.values())} response(s) of {', '.join(both.unknown)} with no price)"
        if g.get("claude_code_usd") is not None:
            extra += f"  (Claude Code says {usd(g['claude_code_usd'])})"
        out.write(
            printable(
                f"{usd(both.usd):>10} {usd(g['subagents'].usd) if g['subagents'].responses else '':>10} "
                f"{both.responses:>9}  {name}{extra}"
            )
            + "\n"
        )
    tail = f"{usd(total.usd):>10} {'':>10} {total.responses:>9}  total"
    if total.unknown:
        tail += f" of what has a price; no price for {', '.join(f'{m} ({n})' for m, n in total.unknown.items())}"
    out.write(printable(tail) + "\n")  # model names come from the transcript: never terminal escapes
    out.write(
        printable(
            f"prices of {ledger.table.date} ({ledger.table.source}); {total.duplicates:,} duplicate response(s) counted once"
        )
        + "\n"
    )
    return EXIT_OK


def _archive_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
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
    from inspector.retention import ArchiveError, archive
    from inspector.textutil import human_size, printable
    from inspector.transcript.discovery import resolve_target

    path = Path(args.path) if args.path else _default_path(err)
    target = resolve_target(path)
    report_unreadable(target, err)
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


def _search_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
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
    p.add_argument(
        "--since",
        metavar="WHEN",
        help="only records from then on: a date (2026-11-02), a UTC time (2026-11-02T14:00) or a span back from now (7d, 12h)",
    )
    p.add_argument(
        "--no-index",
        action="store_true",
        help="scan every file instead of using the search index "
        "(the same results, slower; the index is built and kept up to date as you search)",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _index_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="inspector index",
        description="The search index ($XDG_CACHE_HOME/inspector/index.sqlite, SQLite FTS5 with trigrams): bring it up "
        "to date for the transcripts under PATH (new files, and only the new lines of grown ones), --rebuild it from "
        "nothing, or show its --status. search and the app keep it up to date on their own; deleting it loses nothing.",
    )
    p.add_argument("path", nargs="?", help="a projects root, a project folder or a .jsonl file (default: the projects root)")
    p.add_argument("--rebuild", action="store_true", help="delete the index and build it again")
    p.add_argument("--status", action="store_true", help="only say what the index holds")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def cmd_index(args: argparse.Namespace, out: Any, err: Any) -> int:
    from inspector.fts import db_path, remove_index
    from inspector.textutil import printable
    from inspector.transcript.discovery import InspectorError

    def notice(m: str) -> None:
        err.write(printable(f"inspector: {m}") + "\n")

    if args.rebuild:
        remove_index(db_path())
    import sqlite3

    for attempt in (1, 2):  # a damaged index found by a query is removed and built again, once
        try:
            return _index_once(args, out, err, notice)
        except sqlite3.DatabaseError as exc:
            from inspector.fts import is_damage, is_locked

            if is_locked(exc):
                raise InspectorError(
                    f"the search index stayed locked for {sum(INDEX_LOCK_WAITS):g} s ({exc}): what was "
                    "indexed is kept; run inspector index again when the machine is quieter"
                ) from None
            if not is_damage(exc) or attempt == 2:
                raise
            notice(f"the search index {db_path()} was damaged ({exc}): it is built again")
            remove_index(db_path())
    return EXIT_OK


INDEX_LOCK_WAITS = (1.0, 2.0, 4.0, 8.0, 16.0)  # seconds between tries when SQLite says "database is locked"


def _refresh_waiting(idx: Any, files: list[Path], with_results: list[Path], notice: Callable[[str], None]) -> int:
    """The index brought up to date, a lock (its own shard processes, a checkpoint, another reader) waited out and the
    work taken up again where it stopped (what is indexed stays indexed), never the command's end."""
    import sqlite3
    import time

    from inspector.fts import is_locked

    for wait in (*INDEX_LOCK_WAITS, None):
        try:  # the lines of the last try only: those indexed before a lock are kept, not counted again
            return idx.refresh(files, with_results, wait=True)
        except sqlite3.OperationalError as exc:
            if wait is None or not is_locked(exc):
                raise
            notice(f"the search index is locked ({exc}): trying again in {wait:g} s")
            time.sleep(wait)
    return 0


def _index_once(args: argparse.Namespace, out: Any, err: Any, notice: Callable[[str], None]) -> int:
    import sqlite3
    import time

    from inspector.fts import IndexFull, IndexUnavailable, SearchIndex, is_full
    from inspector.search import list_transcripts
    from inspector.textutil import human_size, printable
    from inspector.transcript.discovery import InspectorError, resolve_target

    try:
        idx = SearchIndex(notice=notice)
    except IndexUnavailable as exc:
        raise InspectorError(f"the search index cannot be used: {exc}") from None
    try:
        if not args.status:
            path = Path(args.path) if args.path else _default_path(err)
            listing = idx.listing()
            files, with_results = list_transcripts(resolve_target(path), scan=listing)
            listing.save()
            t0 = time.perf_counter()
            tty = err.isatty() if hasattr(err, "isatty") else False
            if tty:
                shown = [0.0]

                def progress(what: str, done: int, of: int) -> None:  # a long build says how far it is
                    if time.monotonic() - shown[0] > 0.2 or done == of:
                        shown[0] = time.monotonic()
                        err.write(f"\rinspector: indexing {what}: {done:,}/{of:,}\x1b[K")
                        err.flush()

                idx.progress = progress
            try:
                lines = _refresh_waiting(idx, [f for f, _ in files], with_results, notice)
            except IndexFull as exc:
                raise InspectorError(
                    f"the disk of the search index ({idx.path.parent}) has {human_size(exc.room)} free, "
                    f"too little for the {human_size(exc.need)} indexing would take: nothing was written; "
                    "searches read the files meanwhile"
                ) from None
            except sqlite3.Error as exc:
                if not is_full(exc):
                    raise
                what = idx.give_back()
                raise InspectorError(
                    f"the disk of the search index ({idx.path.parent}) filled up: the index was not "
                    f"brought up to date ({what}); searches read the files meanwhile"
                ) from None
            if tty:
                err.write("\r\x1b[K")
            gone = idx.prune(f for f, _ in files)
            out.write(
                f"Indexed {lines:,} new line(s) and persisted output(s) of {len(files):,} transcript(s) and the "
                f"tool-results folders of {len(with_results):,} session(s) in {time.perf_counter() - t0:.2f} s"
                + (f"; {gone} file(s) no longer on disk dropped" if gone else "")
                + "\n"
            )
        st = idx.status()
        out.write(
            printable(
                f"{st.path}: {st.files:,} transcript(s) and {st.persisted:,} persisted output(s) indexed "
                f"({human_size(st.bytes_indexed)}, {st.texts:,} texts), the stats of {st.sessions:,} "
                f"session(s); {human_size(st.size)} on disk"
            )
            + "\n"
        )
    finally:
        idx.close()
    return EXIT_OK


def cmd_search(args: argparse.Namespace, out: Any, err: Any) -> int:
    from inspector.search import Query, search_target
    from inspector.textutil import human_when, printable
    from inspector.transcript.discovery import InspectorError, quick_info, resolve_target

    if not args.text:
        raise InspectorError("nothing to search for")
    if args.limit is not None and args.limit < 1:
        raise InspectorError("--limit must be at least 1")
    path = Path(args.path) if args.path else _default_path(err)
    target = resolve_target(path)
    report_unreadable(target, err)
    query = Query(args.text)
    from inspector.search import parse_since

    try:
        since = parse_since(args.since) if args.since else None
    except ValueError as exc:
        raise InspectorError(str(exc)) from None
    show_progress = (err.isatty() if hasattr(err, "isatty") else False) and not args.json

    def progress(n: int, total: int) -> None:
        if show_progress and total > 20 and n % 10 == 0:
            err.write(f"\rinspector: searching {n + 1}/{total} transcripts…")
            err.flush()

    from inspector.fts import SEARCH_BUDGET, open_index

    index = None if args.no_index else open_index(notice=lambda m: err.write(printable(f"inspector: {m}") + "\n"))
    found: list[Any] = []
    last_session: Path | None = None
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
        found.extend(fh.hits)
        if args.json:
            continue
        if fh.session != last_session:
            last_session = fh.session
            try:
                info = quick_info(fh.session)
                title = info.title or info.first_prompt or info.session_id
                when = human_when(info.first_timestamp, local=True) or ""
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


def _request_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="inspector request",
        description="Rebuild, from a Claude Code 2.1.3xx transcript alone, the API requests it sent: the system prompt, the "
        "tools and every message, as the API received them (the billing header line aside, which is not recorded).",
    )
    p.add_argument("path", help="the session's .jsonl transcript")
    p.add_argument(
        "--at",
        metavar="REF",
        help="only the request that produced this record (or the last one before it); a uuid, a uuid prefix or a line number",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="JSON Lines: one object per request (id, timestamp, query_source, model, request), one per line",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def cmd_request(args: argparse.Namespace, out: Any, err: Any) -> int:
    from inspector.claude.requests import rebuild_requests
    from inspector.textutil import printable
    from inspector.transcript.discovery import InspectorError, resolve_target
    from inspector.transcript.session import Session

    target = resolve_target(Path(args.path))
    if target.kind != "file":
        raise InspectorError(f"request needs one .jsonl transcript, not a folder: {args.path}")
    s = Session.load(target.path)
    found = rebuild_requests(s)
    if not found:
        v = s.version or "an unknown version"
        raise InspectorError(f"this transcript records no API request (Claude Code {v}; requests are recorded from 2.1.3xx)")
    if args.at:
        try:  # a uuid, a uuid prefix or a line number, as `show` prints them
            i = s.find_record(args.at)
        except LookupError as exc:
            raise InspectorError(f"{exc} in {args.path}") from None
        ref = s.body(i).get("requestRef")
        mine = [q for q in found if q.id == ref] or [q for q in found if q.index < i][-1:]
        if not mine:
            raise InspectorError(f"no request was recorded before {args.at}")
        found = mine
    if args.json:
        out.write(json_lines(q.as_dict() for q in found))
        return EXIT_OK
    lines = [f"{printable(s.title or s.session_id)}: {len(found)} request(s) rebuilt from the transcript"]
    for q in found:
        req = q.request
        msgs = req.get("messages") or []
        roles: dict[str, int] = {}
        for m in msgs:
            roles[str(m.get("role"))] = roles.get(str(m.get("role")), 0) + 1
        state = "answered" if q.answered else "no reply (refused, or the session ended)"
        exact = f"; {len(q.unresolved)} message(s) not in the transcript" if q.unresolved else ""
        if q.capped:
            exact += f"; {q.capped}"
        if q.not_recorded:
            exact += f"; also sent, not recorded: {', '.join(q.not_recorded)}"
        lines.append(
            f"  {q.id}  {(q.timestamp or '')[:19]}  {q.query_source or '?'}  {q.model or '?'}  "
            f"{len(req.get('system') or [])} system block(s), {len(req.get('tools') or [])} tools, {len(msgs)} messages "
            f"({', '.join(f'{n} {r}' for r, n in roles.items())}); {state}{exact}"
        )
    out.write(_report(lines))
    return EXIT_OK


def _show_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
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
    from inspector.transcript.discovery import InspectorError, resolve_target
    from inspector.transcript.session import Session
    from inspector.view import Snippets, build_rows, export_markdown, parts_markdown, record_parts

    target = resolve_target(Path(args.path))
    if target.kind != "file":
        raise InspectorError(f"show needs one .jsonl transcript, not a folder: {args.path}")
    s = Session.load(target.path)
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


# every subcommand: its parser, what runs it, and its line in the root's --help (listed from here)
COMMANDS: dict[str, tuple[Callable[[], argparse.ArgumentParser], Callable[[argparse.Namespace, Any, Any], int], str]] = {
    "stats": (_stats_parser, cmd_stats, "facts about every session: records, chain, compactions, cost"),
    "tokens": (_tokens_parser, cmd_tokens, "the context at every turn against the thresholds; why each compaction fired"),
    "compact": (_compact_parser, cmd_compact, "preview a compaction strategy from a message; save it as a new session"),
    "search": (_search_parser, cmd_search, "find text in every session, persisted tool results included"),
    "show": (_show_parser, cmd_show, "a session's timeline, or one record in full, as text or Markdown"),
    "request": (_request_parser, cmd_request, "the API requests a 2.1.3xx session sent, rebuilt from its transcript"),
    "cost": (_cost_parser, cmd_cost, "what the sessions cost, by session, model, day or project"),
    "archive": (_archive_parser, cmd_archive, "copy sessions before Claude Code's cleanup deletes them"),
    "index": (_index_parser, cmd_index, "build or check the search index"),
}


CLI_START, CLI_END = "<!-- cli:start -->\n", "<!-- cli:end -->"


def cli_reference(width: int = 100) -> str:
    """Every subcommand's --help, as Markdown: the generated part of docs/cli.md (docs/generate.py writes it; a test
    checks it is current)."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)  # argparse wraps to the terminal's width
    try:
        parts = [f"## inspector\n\n```text\n{_root_parser().format_help().rstrip()}\n```\n"]
        for name, (make, _cmd, what) in COMMANDS.items():
            parts.append(
                f"## inspector {name}\n\n{what[0].upper() + what[1:]}.\n\n```text\n{make().format_help().rstrip()}\n```\n"
            )
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None, out: Any = None, err: Any = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    out = out or sys.stdout or open(os.devnull, "w")  # a closed stdout (`inspector stats >&-`) is None
    err = err or sys.stderr or open(os.devnull, "w")
    for stream in (out, err):
        if stream in (sys.stdout, sys.stderr) and hasattr(stream, "reconfigure"):
            try:  # an output encoding that cannot show a character (PYTHONIOENCODING=latin-1) shows it as an escape
                stream.reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass
    debug = "--debug" in argv
    if len(argv) > 1 and argv[0] == "--debug" and argv[1] in COMMANDS:  # `inspector --debug index`
        argv = argv[1:]
    try:
        if argv and argv[0] in COMMANDS:
            parser, command, _what = COMMANDS[argv[0]]
            # options may come between positional arguments too: `search TEXT --json PATH`
            return command(parser().parse_intermixed_args(argv[1:]), out, err)
        args = _root_parser().parse_args(argv)
        return cmd_app(args, out, err)
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
    except ValueError as exc:
        if "closed file" in str(exc):  # the output was closed while writing: nobody is left to tell
            return EXIT_ERROR
        return _unexpected(exc, err, debug)
    except Exception as exc:  # noqa: BLE001 - the one place errors become a message
        return _unexpected(exc, err, debug)


def _unexpected(exc: BaseException, err: Any, debug: bool) -> int:
    """An error as one line on stderr (no credential, no terminal escapes); the traceback only with --debug."""
    if debug:
        raise exc
    from inspector.textutil import printable, redact
    from inspector.transcript.discovery import InspectorError

    def say(text: str) -> None:
        try:
            err.write(printable(redact(" ".join(text.split()))) + "\n")
        except (OSError, ValueError):
            pass  # stderr is gone too

    if isinstance(exc, InspectorError):
        say(f"inspector: {exc}")
        return EXIT_USAGE
    if isinstance(exc, OSError):
        say(f"inspector: {exc.strerror or exc}: {exc.filename or ''}")
        return EXIT_ERROR
    from inspector.compact.summarize.base import SummarizerError

    if isinstance(exc, SummarizerError):  # an API's answer (401, 404, 529...) or a network fault: expected, said as such
        say(f"inspector: the summarizer failed: {exc}")
        return EXIT_ERROR
    say(f"inspector: unexpected error: {type(exc).__name__}: {exc} (run with --debug for details)")
    return EXIT_ERROR
