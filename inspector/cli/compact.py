"""`inspector compact`: preview a strategy, save it."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from inspector.cli.common import (
    EXIT_OK,
    Parser,
    _confirm,
    _confirm_send,
    _non_negative,
    _non_negative_float,
    _positive,
    _report,
    _window_arg,
    json_text,
    one_session,
    settings_from_args,
)


def _compact_parser() -> argparse.ArgumentParser:
    p = Parser(
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
        "--resume-model",
        metavar="MODEL",
        help="the model you will resume the saved session with, if not the session's last (2.1.3xx: the tools and "
        "agents Claude Code re-announces are worded for it)",
    )
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


def cmd_compact(args: argparse.Namespace, out: Any, err: Any) -> int:
    from inspector.compact import (
        REGISTRY,
        STRATEGIES,
        CompactRequest,
        KeepConfig,
        MicrocompactParams,
        SessionMemoryParams,
        compact,
        make_slice,
        resolve_reference,
    )
    from inspector.compact.summarize.base import SummaryRequest
    from inspector.edit import save
    from inspector.transcript.discovery import InspectorError

    s = one_session(args.path, "compact works on one session: give a .jsonl file, not {kind} {path}")
    assert args.strategy is None or args.strategy in STRATEGIES
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
        if args.strategy is None or REGISTRY[args.strategy].summarizes:
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
        CompactRequest(
            args.strategy,
            at=None if args.strategy == "partial" else args.at,
            pivot=args.at if args.strategy == "partial" else None,
            direction=direction,
            instructions=args.instructions,
            settings=settings,
            resume_model=args.resume_model,
            microcompact_params=MicrocompactParams(
                gap_minutes=args.gap_minutes, keep_recent=args.keep_recent, now=now, force=args.force
            ),
            session_memory_params=SessionMemoryParams(
                KeepConfig(args.min_tokens, args.min_text_messages, args.max_tokens), args.last_summarized
            ),
            trigger=args.trigger,
            refused_at=args.refused_at,
            prompt_tokens=args.prompt_tokens,
        ),
        summarizer=summarizer,
    )
    exact = None
    if args.exact:
        from inspector.compact.exact import plan_exact_count
        from inspector.compact.summarize.anthropic_api import DEFAULT_MODEL, AnthropicSummarizer

        counter = AnthropicSummarizer(args.model or DEFAULT_MODEL)
        if not counter.has_key:
            raise InspectorError("--exact needs ANTHROPIC_API_KEY (nothing was sent)")
        plan = plan_exact_count(s, res, settings)
        _confirm(
            args,
            err,
            f"--exact sends {plan.describe()} to the Anthropic API's token-counting endpoint (no charge, nothing is generated)",
        )
        exact = plan.count(counter)
    saved = None
    if args.write:
        from inspector.edit.files import RefusedSave

        try:
            saved = save(
                s, res, out=Path(args.out) if args.out else None, allow_live=args.allow_live, allow_newer=args.allow_newer
            )
        except RefusedSave as exc:
            raise InspectorError(f"{exc} ({exc.flag} saves it anyway)") from None
    if args.json:
        d = res.as_dict()
        d["written"] = str(saved.path) if saved else None
        d["tokens_after_exact"] = exact.tokens if exact else None
        d["exact"] = exact.as_dict() if exact else None
        d["save"] = saved.as_dict() if saved else None
        out.write(json_text(d))
    else:
        out.write(format_compaction(res, saved))
        if exact is not None:
            out.write(exact.describe()[0].upper() + exact.describe()[1:] + ".\n")
    return EXIT_OK


def format_strategies(s: Any) -> str:
    from inspector.claude.versions import STRATEGY_WORDS, default_strategy, releases_with, rules_for, what_if
    from inspector.textutil import printable

    rules = rules_for(s.version)
    default = default_strategy(rules.era)
    lines = [printable(f"{s.title or s.session_id}: {rules.note}"), ""]
    for name, words in STRATEGY_WORDS.items():
        cli = name.replace("partial-from", "partial").replace("partial-up-to", "partial --direction up-to")
        mark = (
            " (default)"
            if name == default
            else " (a what-if for this session)"
            if what_if(name, rules.era, rules.version)
            else ""
        )
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
        + (f"blocking {th['blocking']:,}" if th["blocking"] is not None else "no blocking limit")
        + f", window {th['context_window']:,}"
    )
    width = 50
    top = max(th["context_window"], res.tokens_before)
    for label, n in (("before", res.tokens_before), ("after", res.tokens_after)):
        bar = "█" * min(width, round(n / top * width))
        lines.append(f"  {label:>6} {bar:<{width}} {n:>9,}")
    if res.caveat:
        lines.append(f"  caveat: the size after is {res.caveat}")
    if res.cleared_tool_results:
        lines.append(
            f"  Cleared {len(res.cleared_tool_results)} tool result(s): "
            + ", ".join(res.cleared_tool_results[:6])
            + (" …" if len(res.cleared_tool_results) > 6 else "")
        )
    if res.summarized_uuids or res.kept_uuids:
        lines.append("  " + res.counts_words)
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
        on = res.parameters.get("wire_model")
        lines.append(
            f"  After `claude --resume`{' on ' + printable(str(on)) if on else ''}, Claude Code sends "
            f"{len(res.api_messages)} message(s) before your next prompt: {roles} (--json: api_messages)"
            + ("" if res.api_messages_exact else ", with what its release adds as it sends them (see the notes)")
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
            + (
                " and a resume sends the previewed api_messages."
                if res.api_messages is not None and res.api_messages_exact
                else "."
            )
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
