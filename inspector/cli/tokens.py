"""`inspector tokens`: the token story, as text or JSON."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from inspector.cli.common import (
    EXIT_OK,
    JsonArray,
    Parser,
    _positive,
    _report,
    json_lines,
    refuse_unreadable,
    report_skipped,
    settings_from_args,
    target_of,
)


def _tokens_parser() -> argparse.ArgumentParser:
    p = Parser(
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
    p.add_argument(
        "--lost",
        action="store_true",
        help="for each compaction, what it lost: the instructions, files read and edited, commands, errors and "
        "decisions of the records it summarized that its summary does not mention and it did not keep (with --json "
        "every item, each marked 'in summary', 'kept' or 'dropped', in the session's `lost` list)",
    )
    from inspector.tokens.whatif import add_flags

    add_flags(p.add_argument_group("what if (override Claude Code's settings)"), _positive)
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def cmd_tokens(args: argparse.Namespace, out: Any, err: Any) -> int:
    from inspector.tokens.composition import composition
    from inspector.tokens.explain import analyze
    from inspector.tokens.keptreport import kept_analyze
    from inspector.tokens.series import token_count_with_estimation
    from inspector.tokens.thresholds import Settings
    from inspector.transcript.discovery import InspectorError, session_files
    from inspector.transcript.session import Session

    settings = settings_from_args(args)
    baseline = Settings.from_environment()  # what the session's own settings are taken to be, when a flag is a what-if
    path, target = target_of(args, err)
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
            if target.kind == "file":
                refuse_unreadable(s, f)
            # one session's report is kept (opened again, it is read back); a folder's many are not written
            rep = (kept_analyze if target.kind == "file" else analyze)(s, settings, baseline=baseline)
            d = rep.as_dict(full=args.full)
            if args.lost:
                from inspector.tokens.lost import losses

                d["lost"] = [loss.as_dict() for loss in losses(s)]
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
            text = format_lost(d) if args.lost else format_token_report(rep, d)
            out.write(("\n" if printed else "") + text)
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
        out.write("\n".join(format_lost(d) if args.lost else format_token_report(rep, d) for rep, d in held))
    elif not printed:
        out.write("No sessions found.\n")
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
        f"warning {th['warning']:,}, "
        + auto_words
        + (f"blocking {th['blocking']:,}" if th["blocking"] is not None else "no blocking limit (before 2.0.77)")
    )
    if th.get("rules"):
        lines.append(f"  Rules: {th['rules']}")
    if th.get("measured"):
        lines.append(f"  Checked on the binary: {th['measured']}")
    from inspector.claude.measured import killed_resume

    conv = rep.session.conversation
    killed = killed_resume(conv, rep.session.version)  # a file a killed process left: not continued from its leaf
    if killed is not None:
        at = conv.by_uuid.get(killed[0]) if killed[0] is not None else None
        lines.append(f"  Resume: continues from line {rep.session.records[at].line if at is not None else '?'}: {killed[1]}")
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
            marks = {int(th["warning"] * scale): "│"}
            if th["blocking"] is not None:
                marks[int(th["blocking"] * scale)] = "┃"
            if auto is not None:
                marks[int(auto * scale)] = "╏"
            legend = "█ = context, │ warning, ╏ auto-compact" + (", ┃ blocking" if th["blocking"] is not None else "")
        else:  # Claude Code acts on no threshold here: only the one it computes, for reference
            marks = {int(th["unenforced_threshold"] * scale): "┆"} if th.get("unenforced_threshold") else {}
            legend = "█ = context, ┆ the auto-compact threshold, not enforced"
        segs: dict[int, list[dict[str, Any]]] = {}
        for t in turns:
            segs.setdefault(t["segment"], []).append(t)
        comps = [x for x in d["compactions"] if x["kind"] == "compact"]
        per_seg = max(2, max_rows // max(1, len(segs)))
        most = max(-(-len(ts) // per_seg) for ts in segs.values())
        rows_word = (
            f"each row the largest of up to {most} consecutive responses, from the first to the last one's time"
            if most > 1
            else "one row each"
        )
        lines.append(f"  Context per response ({len(turns)} responses, {rows_word}; {legend}):")
        shown = 0  # compactions drawn: each one between the segments it closed and opened, none left out where
        # back-to-back compactions leave a segment with no response

        def mark(upto: int) -> None:
            nonlocal shown
            while shown < min(upto, len(comps)):
                cx = comps[shown]
                at = f"{cx['pre_tokens']:,} tokens" if cx["pre_tokens"] is not None else "a count not recorded"
                lines.append(f"    ── {cx['strategy']} compaction at {at} ──")
                shown += 1

        for seg, ts in segs.items():
            mark(seg)
            step = max(1, -(-len(ts) // per_seg))
            for k in range(0, len(ts), step):
                chunk = ts[k : k + step]
                peak = max(chunk, key=lambda t: t["context_tokens"])
                first, last = (chunk[0]["timestamp"] or "")[11:16], (chunk[-1]["timestamp"] or "")[11:16]
                when = first if most == 1 else f"{first}–{last}" if first != last else first
                lines.append(
                    f"    {when:>11} {peak['context_tokens']:>9,} {peak['percent_left']:>3}% left "
                    f"{_bar(peak['context_tokens'], scale, width, marks)} {'' if peak['state'] == 'ok' else peak['state']}"
                )
        mark(len(comps))  # the compactions after the last response
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
            if x.get("duration_ms"):  # (0: written by a build that did not time it)
                extra.append(f"took {x['duration_ms'] / 1000:.1f} s")
            if x.get("cumulative_dropped_tokens") is not None:
                extra.append(f"{x['cumulative_dropped_tokens']:,} tokens dropped by the compactions so far (Claude Code's count)")
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


def format_lost(d: dict[str, Any], width: int = 110) -> str:
    """`tokens --lost`: per compaction, the items its summary does not mention and it did not keep."""
    from inspector.textutil import printable
    from inspector.tokens.lost import MENTION_RULE, describe

    lines = [f"{printable(d['title'] or '(untitled)')}  ({d['session_id']})", f"  {d['path']}"]
    if not d["lost"]:
        return "\n".join([*lines, "  No compaction summarized anything here.", ""])
    for k, loss in enumerate(d["lost"], 1):
        lines.append(f"  Compaction {k} at line {loss['line']} ({loss['timestamp'] or 'no time'}):")
        lines += [printable("    " + ln) for ln in describe(loss, width - 4)]
    lines.append(f"  (how mentions are found: {MENTION_RULE})")
    return "\n".join(lines) + "\n"
