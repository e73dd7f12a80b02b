"""Why each compaction fired, and what looks wrong (§4, §6–§9.4, §13).

`analyze(session, settings)` returns a `TokenReport`: the thresholds, the context series, the
calibration, one `Explanation` per compact or microcompact boundary, and named anomalies. The
command line prints it; the TUI draws it.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace
from typing import Any

from inspector.textutil import fmt
from inspector.tokens.calibrate import (
    Calibration,
    Calibrator,
    Counts,
    Progress,
    _model_key,
    calibrator,
    kept_chain_counts,
    turn_counted,
)
from inspector.tokens.cause import (
    REQUEST_EVIDENCE,
    boundary_thresholds,
    compaction_cause,
    fails_silently,
    keeps_a_tail,
    kept_uuids,
    nothing_to_summarize_note,
    turn_positions,
)
from inspector.tokens.context import RestoredFile, fork_copy_end
from inspector.tokens.explanation import Explanation
from inspector.tokens.series import (
    Series,
    Turn,
    compaction_kind,
    context_series,
    session_thresholds,
    summary_index,
    token_count_with_estimation,
)
from inspector.tokens.thresholds import FIXED_COUNTED_WINDOW, Settings, Thresholds, percent_left
from inspector.tokens.whatif import describe_changes
from inspector.transcript.records import F_COMPACT_SUMMARY, context_tokens, opt_count
from inspector.transcript.session import Session

_ANALYSIS = re.compile(r"<analysis>(.*?)</analysis>", re.S)


@dataclass(slots=True)
class TokenReport:
    session: Session
    settings: Settings
    thresholds: Thresholds
    series: Series
    counts: Counts
    calibration: Calibration
    compactions: list[Explanation]
    anomalies: list[str]

    def as_dict(self, *, full: bool = False) -> dict[str, Any]:
        s = self.session
        return {
            "path": str(s.path),
            "session_id": s.session_id,
            "title": s.title,
            "model": self.thresholds.model,
            "version": s.version,
            "thresholds": self.thresholds.as_dict(),
            "settings": {k: v for k, v in _settings_dict(self.settings).items() if v is not None},
            "turns": self.series.as_points(),
            "compactions": [e.as_dict(full=full) for e in self.compactions],
            "calibration": self.calibration.as_dict(),
            "anomalies": self.anomalies,
            "subagents": self.subagent_series(),
            "resume": self.resume(),
        }

    def resume(self) -> dict[str, Any]:
        """Where `claude --resume` continues this session: the leaf (the last message of the active chain) and the
        record the next prompt hangs off, by the rule the session's release was measured to follow."""
        from inspector.claude.measured import resume_parent

        conv = self.session.conversation
        uuid, rule = resume_parent(conv, self.session.version)
        return {"leaf_uuid": conv.leaf_uuid, "continues_from": uuid, "rule": rule}

    def subagent_series(self) -> list[dict[str, Any]]:
        """Each subagent transcript's own context series, summarised (its own file has the details)."""
        out: list[dict[str, Any]] = []
        for sa in self.session.subagents:
            try:
                sub = self.session.load_subagent(sa) if sa.path is not None else None
            except OSError as exc:  # an unreadable subagent costs its own row, not the report
                out.append(
                    {
                        "agent_id": sa.agent_id,
                        "kind": sa.kind,
                        "layout": sa.layout,
                        "path": str(sa.path),
                        "turns": None,
                        "peak_tokens": None,
                        "error": exc.strerror or str(exc),
                    }
                )
                continue
            if sub is None:
                out.append(
                    {
                        "agent_id": sa.agent_id,
                        "kind": sa.kind,
                        "layout": sa.layout,
                        "path": None,
                        "turns": None,
                        "peak_tokens": None,
                    }
                )
                continue
            ser = context_series(sub, self.settings, self.thresholds)
            sub.close()
            out.append(
                {
                    "agent_id": sa.agent_id,
                    "kind": sa.kind,
                    "layout": sa.layout,
                    "path": str(sa.path),
                    "turns": len(ser.turns),
                    "peak_tokens": max((t.tokens for t in ser.turns), default=None),
                    "last_tokens": ser.turns[-1].tokens if ser.turns else None,
                }
            )
        return out


def _settings_dict(s: Settings) -> dict[str, Any]:
    return {
        "window": s.window,
        "one_m": s.one_m,
        "auto_compact_enabled": s.auto_compact_enabled,
        "auto_compact_window": s.auto_compact_window,
        "pct_override": s.pct_override,
        "max_output_tokens": s.max_output_tokens,
        "blocking_override": s.blocking_override,
        "disable_1m": s.disable_1m or None,
        "output_slot_cap": s.output_slot_cap or None,
        "sources": [list(x) for x in s.sources] or None,
    }


# ---------------------------------------------------------------------------------------------


def _compact_call(s: Session, boundary: int) -> dict[str, Any] | None:
    """The summarizer's call of a compaction, read from its subagent transcript; remembered on the session while its
    subagents are the same (see `prepare`)."""
    subs = s.subagents
    memo: tuple[Any, dict[int, dict[str, Any] | None]] | None = s.__dict__.get("_compact_calls")
    if memo is None or memo[0] is not subs:
        memo = s.__dict__["_compact_calls"] = (subs, {})
    calls = memo[1]
    if boundary not in calls:
        calls[boundary] = _read_compact_call(s, boundary)
    return calls[boundary]


def prepare(s: Session) -> None:
    """What `analyze` reads that does not depend on the token counts: the app does it while the child that counts
    them is still at work (the 139 summarizer transcripts of the bench's 200 MB session, 0.03 s of the report)."""
    for i, r in enumerate(s.records):
        if r.is_compact_boundary:
            _compact_call(s, i)


def _read_compact_call(s: Session, boundary: int) -> dict[str, Any] | None:
    for sa in s.subagents:
        if sa.boundary != boundary or sa.path is None:
            continue
        try:
            sub = s.load_subagent(sa)
        except OSError:
            return None  # unreadable: the explanation goes on without the summarizer's call
        if sub is None:
            return None
        reply = None
        usage = None
        for i in range(len(sub.records) - 1, -1, -1):
            r = sub.records[i]
            if r.type == "assistant" and r.usage is not None:
                reply = sub.record_text(i)
                usage = r.usage
                break
        m = _ANALYSIS.search(reply or "")
        return {
            "agent_id": sa.agent_id,
            "path": str(sa.path),
            "usage": {
                "input_tokens": usage[0],
                "cache_creation_input_tokens": usage[1],
                "cache_read_input_tokens": usage[2],
                "output_tokens": usage[3],
                "context_tokens": context_tokens(usage),
            }
            if usage
            else None,
            "analysis": m.group(1).strip() if m else None,
        }
    return None


def _stretch_start(series: Series, pos: int) -> int:
    """The chain position after the boundary before the one at `pos` (the first of the stretch it closed)."""
    b = bisect.bisect_left(series.boundaries, pos)
    return series.boundaries[b - 1] + 1 if b > 0 else 0


def _rounds(s: Session, series: Series, pos: int | None, kept: list[str]) -> tuple[int | None, int | None]:
    """API rounds (one response each, with its tool results) summarized and kept by the compaction at `pos`."""
    if pos is None:
        return None, None
    start = _stretch_start(series, pos)
    kept_set = set(kept)
    summarized: set[str] = set()
    kept_ids: set[str] = set()
    for k in range(start, pos):
        r = s.records[series.chain[k]]
        if r.type == "assistant" and not r.is_sidechain:
            (kept_ids if r.uuid in kept_set else summarized).add(r.message_id or f"#{k}")
    for u in kept:
        i = s.conversation.by_uuid.get(u)
        if i is not None and s.records[i].type == "assistant":
            kept_ids.add(s.records[i].message_id or u)
    return len(summarized - kept_ids), len(kept_ids)


def _around(series: Series, pos: int | None) -> tuple[list[Turn], list[Turn]]:
    """The response just before a chain position and the one just after (a binary search: thousands of boundaries
    stay linear); two empty lists for a boundary off the chain."""
    if pos is None:
        return [], []
    k = bisect.bisect_left(turn_positions(series), pos)
    return list(series.turns[max(0, k - 1) : k]), list(series.turns[k : k + 1])


def explain_boundary(
    s: Session,
    series: Series,
    counts: Counts,
    index: int,
    th: Thresholds,
    cal_all: Calibrator | None = None,
    positions: dict[int, int] | None = None,
    settings: Settings | None = None,
    requests: Any = None,
) -> Explanation:
    r = s.records[index]
    chain = series.chain
    if positions is None:
        positions = {i: k for k, i in enumerate(chain)}
    pos = positions.get(index)
    cal_all = cal_all or calibrator(s, series, counts)
    kind = compaction_kind(s, index)
    meta = (r.get("microcompact") if kind == "microcompact" else r.get("compact")) or {}
    unmarked = r.is_unmarked_compaction  # (up to 1.0.108: no boundary, no metadata)
    if unmarked:
        meta = {"trigger": kind}  # ("auto" or "manual": compaction_kind read the command's records)
    pre = opt_count(meta.get("preTokens"))
    post_meta = opt_count(meta.get("postTokens"))
    before, after = _around(series, pos)
    model_here = _model_key(s.records[before[-1].index].model) if before else None
    cal = cal_all.before(pos, model=model_here) if pos is not None else None
    # the last usage Claude Code counted from: one of the stretch this compaction closed (a compaction right after
    # another, with no response between, counted from none)
    closes = bisect.bisect_left(series.boundaries, pos) if pos is not None else None
    last_before = before[-1].tokens if before and before[-1].segment == closes else None
    rl = s.conversation.relinks.get(index)
    if rl is not None:
        # the kept records' responses were the last before the compaction (Claude Code zeroes their usage only
        # for what comes after it)
        # (a response an earlier compaction kept too had its usage zeroed by that one already)
        kept_at = s.conversation.kept_at
        kept_usage = [u for i, u in s.main_responses() if i < index and kept_at.get(s.records[i].uuid) == index]  # type: ignore[arg-type]
        if kept_usage:
            last_before = context_tokens(kept_usage[-1])
    if unmarked and pre is None:
        pre = last_before  # (what these releases counted when they compacted: the last usage, no estimate added)
    first_after = after[0].tokens if after else None
    th = boundary_thresholds(s, series, index, th, settings, before)
    # the auto-compact threshold says nothing about a microcompaction (it has its own trigger): no margin against it
    threshold = th.auto_compact if kind != "microcompact" else None
    margin = pre - threshold if pre is not None and threshold is not None else None

    # the prediction uses only what was known before the boundary
    predicted = None
    restored: list[RestoredFile] = []
    if kind == "microcompact":
        # Nothing but the cleared results leaves the context, so the prediction starts from the last
        # response before (the API's own number) and adds what changed since, in calibrated tokens:
        # the records sent since, minus the cleared results. Results cleared whose text is not in the
        # file (it starts after them) are taken at the size Claude Code recorded (tokensSaved).
        if cal is not None and pos is not None and before:
            gone = counts.unseen_cleared.get(pos, 0)
            if after:
                delta = turn_counted(counts, series, after[0]) - turn_counted(counts, series, before[-1])
                predicted = round(before[-1].tokens + cal.ratio * (delta - gone))
            else:
                saved = opt_count(meta.get("tokensSaved"))
                predicted = round(before[-1].tokens - cal.ratio * saved) if saved is not None else None
    elif cal is not None and pos is not None and after:
        counted_after = turn_counted(counts, series, after[0])
        predicted = cal.predict(counted_after)  # the restored files are part of what is counted after
        restored = [replace(f, tokens=round(cal.ratio * f.counted)) for f in counts.restored.get(pos, [])]
    notes = prediction_notes(s, series, counts, cal, kind, pos, after, restored) if predicted is not None else []

    size_after: int | None
    src: str | None
    if first_after is not None:
        size_after, src = first_after, "first usage after"
    elif post_meta is not None and kind != "microcompact" and cal is not None:
        # postTokens counts the conversation only; add the fixed overhead to compare with preTokens
        size_after, src = post_meta + round(cal.overhead), "postTokens + overhead"
    else:
        size_after, src = predicted, ("estimate" if predicted is not None else None)
    freed = None
    if kind == "microcompact" and opt_count(meta.get("tokensSaved")) is not None:
        freed = opt_count(meta.get("tokensSaved"))
    elif pre is not None and size_after is not None:
        freed = pre - size_after

    summarized = kept = None
    summary_text = None
    cleared: list[dict[str, Any]] = []
    if kind == "microcompact":
        listed = meta.get("compactedToolIds")
        ids = listed if isinstance(listed, list) else []
        for tid in ids:
            if not isinstance(tid, str):
                continue
            res = s.tool_index.get(tid, (None, None))[1]
            n = None
            if res is not None and res in counts.per_record and cal is not None:
                n = round(counts.per_record[res].by_category.get(f"tool_result:{tid}", 0) * cal.ratio)
            cleared.append({"tool_use_id": tid, "tool": s.tool_name(tid), "tokens": n})
    else:
        if opt_count(meta.get("messagesSummarized")) is not None:
            summarized = opt_count(meta.get("messagesSummarized"))
        elif pos is not None:
            summarized = sum(1 for p in range(_stretch_start(series, pos), pos) if s.records[chain[p]].is_message)
        rl = s.conversation.relinks.get(index)
        if rl is not None:
            kept = len(rl.preserved)
        elif isinstance(meta.get("preservedMessages"), dict) and isinstance(meta["preservedMessages"].get("uuids"), list):
            kept = len(meta["preservedMessages"]["uuids"])
        else:
            kept = 0
        si = summary_index(s, index)
        if si is not None:
            summary_text = s.record_text(si)

    e = Explanation(
        index=index,
        pos=pos,
        uuid=r.uuid,
        timestamp=r.timestamp,
        kind=kind,
        trigger=meta.get("trigger") if isinstance(meta.get("trigger"), str) else None,
        pre_tokens=pre,
        threshold=threshold,
        margin=margin,
        last_usage_before=last_before,
        post_tokens=post_meta,
        first_usage_after=first_after,
        predicted_post_tokens=predicted,
        size_after=size_after,
        size_after_source=src,
        tokens_freed=freed,
        messages_summarized=summarized,
        messages_kept=kept,
        restored_files=restored,
        compact_call=_compact_call(s, index) if kind != "microcompact" else None,
        summary_text=summary_text,
        cleared_tools=cleared,
        prediction_notes=notes,
        duration_ms=opt_count(meta.get("durationMs")) if kind != "microcompact" else None,
        cumulative_dropped_tokens=opt_count(meta.get("cumulativeDroppedTokens")) if kind != "microcompact" else None,
    )
    e.rules = th.rules
    e.pre_tokens_inferred = unmarked and pre is not None
    e.rules_of = th.era_label
    if kind != "microcompact":  # (what it kept is evidence of its cause: a refusal's tail is sized by its gap)
        e.kept_uuids = kept_uuids(s, index, meta)
        e.rounds_summarized, e.rounds_kept = _rounds(s, series, pos, e.kept_uuids)
    e.cause, e.cause_evidence = compaction_cause(s, e, th, requests, series, settings)
    e.threshold_source = _window_words(th)
    e.explanation = sentence(e, th)
    if e.cause == "threshold" and series is not None:
        e.explanation += nothing_to_summarize_note(s, series, e)
    return e


def prediction_notes(
    s: Session,
    series: Series,
    counts: Counts,
    cal: Calibration | None,
    kind: str,
    pos: int | None,
    after: list[Turn],
    restored: list[RestoredFile],
) -> list[str]:
    """What a predicted size after a boundary rests on, each an assumption a reader can weigh."""
    out: list[str] = []
    if cal is None or pos is None:
        return out
    if cal.method != "fit":
        out.append(f"too few responses before it to fit the tokenizer ratio: {cal.ratio:.2f} assumed")
    if kind == "microcompact":
        out.append("from the last API usage before it, plus what was sent since, minus the cleared tool results")
        gone = counts.unseen_cleared.get(pos)
        if gone:
            out.append(
                f"cleared results not in the file (it starts after them) taken at the size Claude Code recorded ({fmt(gone)} "
                f"rough tokens)"
            )
        return out
    if cal.anchor_model is not None:
        out.append(
            f"the fixed overhead (system prompt, tools, CLAUDE.md: {fmt(cal.overhead)} tokens) is the one measured at the "
            f"first response of {cal.anchor_model} (response {cal.anchor + 1}), the model in use at the compaction; the "
            "session began on another model, whose overhead is not used"
        )
    else:
        out.append(
            f"the fixed overhead (system prompt, tools, CLAUDE.md: {fmt(cal.overhead)} tokens) is the one measured at the "
            "session's first response, sent again unchanged"
        )
    files = [f for f in restored if f.kind in ("file", "reference")]
    if files:
        partial = [f for f in files if f.partial]
        words = f"{len(files)} re-attached file(s) estimated from what the transcript shows of them"
        if partial:
            words += f" ({len(partial)} only read in part: scaled by their line count)"
        out.append(words + "; files only read are taken in the order they were read (their file times are not recorded)")
    hooks = sorted({h for h in _compact_hooks(s, series, pos, after)})
    if hooks:
        out.append(
            f"SessionStart hooks ran again after the compaction ({', '.join(hooks)}); what they added is not in the "
            "file and is assumed to be what they added at the start (part of the overhead)"
        )
    return out


def _compact_hooks(s: Session, series: Series, pos: int, after: list[Turn]) -> list[str]:
    """Commands of the SessionStart:compact hooks recorded between a boundary and the first response after it."""
    start = series.chain[pos]
    end = after[0].first if after else min(len(s.records), start + 40)
    out = []
    for i in range(start + 1, end):  # file order: progress records are bridged, not on the chain
        r = s.records[i]
        if r.type == "progress" and r.get("progress_type") == "hook_progress":
            data = s.body(i).get("data") or {}
            if isinstance(data, dict) and str(data.get("hookName", "")).startswith("SessionStart"):
                out.append(str(data.get("command") or data.get("hookName")))
    return out


def _window_words(th: Thresholds) -> str:
    """How the threshold was computed, in words."""
    if not th.auto_compact_enabled:
        return "auto-compact off"
    if not th.enforced and th.compact_source is None:
        return (
            f"not enforced: Claude Code {th.era_label} compacts {th.model or 'this model'} only when the API refuses a "
            "request as too long"
        )
    if not th.enforced:
        return (
            f'not enforced: the auto-compact window\'s source is "auto" for {th.model or "this model"}, so Claude Code '
            f"compacts only when the API refuses a request as too long"
        )
    if th.from_binary:
        return f"as the {th.measured_on} binary compacted, measured by the era matrix; the formula gives another number"
    if th.auto_pct is not None:
        return f"{th.auto_pct:g}% of the {fmt(th.effective_window)} effective window, set by CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"
    if th.level_shares is not None:  # up to 1.0.70
        if th.effective_window == FIXED_COUNTED_WINDOW and th.reserved != th.max_output_tokens:
            return f"0.92 × a fixed {fmt(FIXED_COUNTED_WINDOW)} (up to 1.0.15 Claude Code counted every model against it)"
        return (
            f"0.92 × ({fmt(th.context_window)} window − {fmt(th.reserved)} max output); up to 1.0.70 the threshold was "
            "a share of the window, not 13,000 below it"
        )
    words = f"{fmt(th.context_window)} window − {fmt(th.reserved)} summary reserve − 13,000 buffer"
    if th.era in ("1.0.71", "2.0"):
        words += "; before 2.1.21 the reserve was the model's whole max output"
    return words


def _micro_after(e: Explanation) -> str:
    """What the next response shows of a microcompaction: its usage against the last one before, whose difference
    is the saving less what the turn added since (new prompts, tool results)."""
    if e.first_usage_after is None:
        return "."
    if e.last_usage_before is None:
        return f". The next response used {fmt(e.first_usage_after)} tokens."
    drop = e.last_usage_before - e.first_usage_after
    change = f"{fmt(drop)} fewer" if drop >= 0 else f"{fmt(-drop)} more"
    return (
        f". The next response used {fmt(e.first_usage_after)} tokens, {change} than the last one before it: the saving "
        "less what was added in between"
    ) + "."


def sentence(e: Explanation, th: Thresholds) -> str:
    """One plain sentence that says why it fired and what it did."""
    after = ""
    if e.size_after is not None and e.pre_tokens is not None:
        after = f"; the context went from {fmt(e.pre_tokens)} to {fmt(e.size_after)} tokens ({e.size_after_source})"
    if e.kind == "microcompact":
        tools: dict[str, int] = {}
        for c in e.cleared_tools:
            name = c["tool"] or "whose call is not in the file"
            tools[name] = tools.get(name, 0) + 1
        what = ", ".join(f"{n} {t}" for t, n in tools.items()) or "none"
        when = (
            f"when the context was {fmt(e.last_usage_before)} tokens"
            if e.last_usage_before is not None
            else "at an unknown context size"
        )
        trigger = (
            f'Claude Code decided it on its own (trigger "{e.trigger}"), by a rule of its own that is not the auto-compact '
            "threshold and is not written to the transcript (in 2.1.88's code: a count of compactable tool results since the "
            "last clearing, set remotely; or, when enabled, an idle gap of an hour since the last reply)"
            if e.trigger in (None, "auto")
            else f'trigger "{e.trigger}"'
        )
        return (
            f"Microcompaction cleared {len(e.cleared_tools)} old tool result(s) ({what}) {when} (recorded preTokens "
            f"{fmt(e.pre_tokens)}), "
            f"saving {fmt(e.tokens_freed)} tokens by Claude Code's own count (its tokensSaved: what the cleared results "
            f"weighed, not a change of the context); nothing is summarized, old tool output is only dropped from what is "
            f"sent. {trigger}" + _micro_after(e)
        )
    kept = ""
    if e.rounds_kept:
        kept = (
            f"; {fmt(e.rounds_summarized)} round(s) were summarized and the last {e.rounds_kept} kept verbatim "
            f"({len(e.kept_uuids)} record(s))"
        )
    elif e.kind == "auto" and not e.kept_uuids and e.rounds_summarized is not None and keeps_a_tail(th):
        kept = (
            f"; all {fmt(e.rounds_summarized)} round(s) were summarized, none kept: Claude Code keeps no round when the "
            "context refills to the threshold within 3 turns of its previous compaction in the same turn (a rapid "
            'refill; the third in a row stops compacting: "Autocompact is thrashing")'
        )
    if e.kind == "auto":
        usage = (
            (
                f"the last API usage, {fmt(e.last_usage_before)}: up to 1.0.108 Claude Code added no estimate and "
                "recorded no count"
                if e.pre_tokens_inferred
                else f"last API usage {fmt(e.last_usage_before)} plus the estimate of what followed"
            )
            if e.last_usage_before is not None
            else "no API usage recorded since the start or the compaction before it"
        )
        if e.refuted:
            what = {
                "other_threshold": "not at the auto-compact threshold these rules give",
                "other_window": "not at the threshold these rules give: the window was another",
                "prompt_too_long": "most likely after the API refused a request as too long",
                "threshold": "after failed tries",
            }.get(e.cause, "not at the threshold these rules give")
            return (
                f"Auto-compaction at {fmt(e.pre_tokens)} tokens ({usage}), {what} ({fmt(e.threshold)}: {_window_words(th)}): "
                f"{e.cause_evidence}" + kept + after + "."
            )
        if e.cause == "prompt_too_long":
            rule = (
                f'for {th.model or "this model"} these rules enforce no threshold (window source "auto": the '
                f"{fmt(th.unenforced_threshold)} it computes is not acted on), so only a refusal compacts"
                if not th.enforced
                else f"before the threshold of {fmt(e.threshold)} was reached: {e.cause_evidence}"
            )
            # (read from a request recorded without a reply, or from the rules; else inferred: `_refusal_below`)
            seen = not th.enforced or e.cause_evidence.startswith(REQUEST_EVIDENCE)
            return (
                f"The API {'refused' if seen else 'most likely refused'} a request as too long, and Claude Code compacted "
                f"then: the context was {fmt(e.pre_tokens)} tokens ({usage}); {rule}" + kept + after + "."
            )
        if e.margin is not None and e.threshold is not None and e.margin >= 0:
            why = (
                f"Auto-compaction fired because the context ({fmt(e.pre_tokens)} tokens, {usage}) "
                f"reached the auto-compact threshold of {fmt(e.threshold)} ({_window_words(th)}), {fmt(e.margin)} above it"
            ) + kept
        elif e.margin is not None and e.threshold is not None:
            why = (
                f"Auto-compaction fired at {fmt(e.pre_tokens)} tokens ({usage}), {fmt(-e.margin)} below the threshold of "
                f"{fmt(e.threshold)} ({_window_words(th)}) that these rules give: a lower threshold was in force "
                "(CLAUDE_AUTOCOMPACT_PCT_OVERRIDE, an auto-compact window setting, or a smaller window than assumed)"
                + (
                    ", or the API refused a request as too long (this release records no request to tell which)"
                    if e.cause == "unknown" and e.may_be_refusal
                    else ""
                )
            )
        elif e.cause == "unknown" and e.model_unrecorded is not None:
            why = f"Auto-compaction at {fmt(e.pre_tokens)} tokens ({usage}), its cause not recorded: {e.cause_evidence}" + kept
        elif e.cause == "threshold" and e.larger_model is not None:
            why = f"Auto-compaction at {fmt(e.pre_tokens)} tokens ({usage}) before a request was sent: {e.cause_evidence}" + kept
        elif e.cause == "threshold" and not th.enforced:
            why = (
                f"Auto-compaction at {fmt(e.pre_tokens)} tokens ({usage}) before a request was sent ({e.cause_evidence}): "
                f"a threshold was in force, so a window was set that the transcript does not record "
                f"(CLAUDE_CODE_AUTO_COMPACT_WINDOW, autoCompactWindow, modelSettings or /autocompact); without one these "
                f"rules enforce none for {th.model or 'this model'}"
            ) + kept
        elif th.auto_compact_enabled and not th.enforced:
            why = (
                f"Compaction at {fmt(e.pre_tokens)} tokens ({usage}) with no threshold in force: for {th.model or 'this model'} "
                f'Claude Code waits until the API refuses a request as too long (the window source is "auto"), then compacts'
            ) + kept
        else:
            why = (
                f"Auto-compaction fired at {fmt(e.pre_tokens)} tokens ({usage}) while auto-compact was off by the settings "
                f"assumed"
            )
        return why + after + "."
    if e.kind == "manual":
        pct = (
            f" ({100 - percent_left(e.pre_tokens, th)}% of the way to auto-compact)"
            if e.pre_tokens is not None and th.auto_compact
            else ""
        )
        return (
            f"You ran /compact at {fmt(e.pre_tokens)} tokens{pct}, so the conversation was summarized before the threshold was "
            f"reached" + kept + after + "."
        )
    if e.kind == "session-memory":
        return (
            f"Session-memory compaction replaced the older messages with the session notes (summary.md) and kept "
            f"{fmt(e.messages_kept)} recent messages "
            f"verbatim, at {fmt(e.pre_tokens)} tokens (threshold {fmt(e.threshold)})" + after + "."
        )
    return (
        f'A partial compaction ("summarize from here") summarized {fmt(e.messages_summarized)} message(s) and kept '
        f"{fmt(e.messages_kept)}, "
        f"started by you at {fmt(e.pre_tokens)} tokens" + after + "."
    )


def find_anomalies(s: Session, series: Series, exps: list[Explanation], th: Thresholds) -> list[str]:
    out: list[str] = []
    auto = th.auto_compact
    compact_pos = sorted(e.pos for e in exps if e.kind != "microcompact" and e.pos is not None)
    if auto is not None:
        by_segment: dict[int, list[Turn]] = {}
        for t in series.turns:
            if t.tokens >= auto:
                by_segment.setdefault(t.segment, []).append(t)
        for seg in sorted(by_segment):
            over = by_segment[seg]
            first_later = bisect.bisect_right(compact_pos, over[0].pos)
            later = compact_pos[first_later : first_later + 1]
            # a compaction right after the first crossing is the normal case
            if later and all(t.pos < later[0] for t in over) and len([t for t in over if t.pos < later[0]]) <= 2:
                continue
            if not later and over[-1] is series.turns[-1]:
                # the session's last response: Claude Code checks before the next request, and none was made
                over = over[:-1]
                if not over:
                    continue
            peak = max(t.tokens for t in over)
            n = len([t for t in over if not later or t.pos < later[0]])
            reasons = [
                "auto-compact was off (DISABLE_AUTO_COMPACT, DISABLE_COMPACT or autoCompactEnabled=false in ~/.claude.json)"
            ]
            failed = [a for a in s.subagents if a.kind == "compaction" and a.boundary is None]
            from inspector.claude.measured import lookup

            cell = lookup(s.version, th.model).cell
            gave_up = (
                f" (measured on {cell.label}: with every summarize request failing, {cell.summarizer_fails})"
                if (cell is not None and cell.summarizer_fails)
                else ""
            )
            if failed:
                reasons.insert(
                    0,
                    f"auto-compact was tried and failed ({len(failed)} compaction call(s) left no boundary)"
                    + (gave_up or "; after 3 consecutive failures Claude Code stops trying"),
                )
            elif th.era_label and fails_silently(th):
                reasons.insert(
                    0,
                    "the summarize requests failed (these releases do not write a failed compaction to the transcript)" + gave_up,
                )
            end = later[0] if later else len(s.records)
            thrash = [
                i
                for i in range(over[0].pos, end)
                if s.records[i].type == "assistant" and s.body(i).get("apiError") == "autocompact_thrashing"
            ]
            if thrash:  # Claude Code said why: its rapid-refill breaker
                reasons = [
                    f"Claude Code stopped compacting: the context refilled to the limit within 3 turns of the previous "
                    f'compaction, 3 times in a row (its "Autocompact is thrashing" notice, line {s.records[thrash[0]].line})'
                ]
            elif peak <= 200_000:
                reasons.append(
                    f"a larger window than {fmt(th.context_window)} (a [1m] model setting is not written to the transcript, "
                    "and usage never exceeded 200,000, so it cannot be inferred)"
                )
            from inspector.claude.versions import ERAS

            if any(e.key == th.era and e.basis == "assumed" for e in ERAS):
                reasons.append(f"the rules of this release are assumed, not measured ({th.rules})")
            out.append(
                f"Context above the auto-compact threshold ({fmt(auto)}) for {n} response(s), peak {fmt(peak)}, "
                f"with no compaction: " + "; or ".join(reasons) + "."
            )
    for i, r in enumerate(s.records):  # a /compact that failed (2.1.3xx records its outcome)
        if r.type != "system":
            continue
        b = s.body(i)
        run, outcome = b.get("commandRun"), b.get("commandOutcome")
        if (
            isinstance(run, dict)
            and run.get("command") == "compact"
            and isinstance(outcome, dict)
            and outcome.get("kind") == "failed"
        ):
            said = re.sub(r"</?local-command-stderr>", "", str(b.get("content") or "")).strip()
            args = f" {run['args']}" if isinstance(run.get("args"), str) and run["args"] else ""
            out.append(
                f"/compact{args} at {r.timestamp or 'an unknown time'} failed, and nothing was compacted"
                + (f": {said}" if said else "")
                + f" (line {r.line})."
            )
    out += iteration_notes(s, series, compact_pos)
    for e in exps:
        if (
            e.kind == "auto"
            and e.cause != "prompt_too_long"  # a refusal compacts wherever the threshold is: nothing was lowered
            and e.pre_tokens is not None
            and e.threshold is not None
            and e.pre_tokens < e.threshold * 0.9
        ):
            out.append(
                f"Auto-compaction at {fmt(e.pre_tokens)} tokens fired well below the threshold of {fmt(e.threshold)}: a lower "
                f"threshold was set "
                "(CLAUDE_AUTOCOMPACT_PCT_OVERRIDE or CLAUDE_CODE_AUTO_COMPACT_WINDOW / autoCompactWindow), or the window was "
                "smaller than assumed"
                + (", or the API refused a request as too long." if e.cause == "unknown" and e.may_be_refusal else ".")
            )
        before = e.pre_tokens if e.pre_tokens is not None else e.last_usage_before
        if e.kind != "microcompact" and e.first_usage_after is not None and before is not None and e.first_usage_after > before:
            kept = f", {fmt(e.messages_kept)} message(s) kept" if e.messages_kept else ""
            files = f", {len(e.restored_files)} file(s) re-attached" if e.restored_files else ""
            out.append(
                f"The compaction at {(e.timestamp or '?')[:19]} left the context larger than before: {fmt(before)} → "
                f"{fmt(e.first_usage_after)} tokens at the next response (what it added{kept}{files}, and the summary, "
                "outweighed what it removed; the next turn's own content counts in that response too)."
            )
    return out


def iteration_notes(s: Session, series: Series, compact_pos: list[int]) -> list[str]:
    """Responses sampled in several iterations, where the release that wrote them counted the iterations' sum as the
    context (before 2.1.153, measured by the era matrix's bisection): the figure that compaction decisions saw is
    inflated; say by how much, and whether a compaction followed (Claude Code issue #84738)."""
    out: list[str] = []
    for t in series.turns:
        r = s.records[t.index]
        last = (r.extra or {}).get("last_iteration")  # set only where the release counted the sum
        if not last:
            continue
        rows = r.extra["iterations"]  # type: ignore[index]
        alone = sum(last)
        nxt = bisect.bisect_right(compact_pos, t.pos)
        after = " and the compaction after it fired on that sum" if nxt < len(compact_pos) else ""
        out.append(
            f"The response at line {r.line} was sampled in {len(rows)} iterations: Claude Code {r.version or '?'} counts "
            f"their sum, {fmt(t.tokens)} tokens, as the context{after}; the last iteration alone was {fmt(alone)} "
            "(2.1.153 and later count that one)."
        )
    return out


def what_if_words(
    e: Explanation, real: Thresholds, wi: Thresholds, series: Series, changes: str
) -> tuple[int | None, int | None, str]:
    """What a what-if would change about a compaction that happened: (its threshold, the margin, in words). The
    explanation itself stays the one of the settings in force; the chart and the states follow the what-if."""
    head = f"What if ({changes})"
    if e.kind in ("manual", "partial"):
        return wi.auto_compact, None, f"{head}: nothing here, you asked for this compaction."
    t = wi.auto_compact if wi.enforced else None
    if t is None:
        return (
            None,
            None,
            (
                f"{head}: no auto-compact threshold would be enforced, so Claude Code would not have compacted here "
                "on its own (only when the API refused a request as too long, or on /compact)."
            ),
        )
    if e.pre_tokens is None:
        return t, None, f"{head}: the threshold would be {fmt(t)}; the size before this compaction is not recorded."
    margin = e.pre_tokens - t
    if margin < 0:
        return (
            t,
            margin,
            (
                f"{head}: the threshold would be {fmt(t)}, {fmt(-margin)} above the context here ({fmt(e.pre_tokens)}), "
                "so Claude Code would not have compacted here."
            ),
        )
    first = None
    if e.pos is not None:
        seg_start = max((b for b in series.boundaries if b < e.pos), default=-1)
        first = next((x for x in series.turns if seg_start < x.pos < e.pos and x.tokens >= t), None)
    earlier = (
        f", and earlier: the response of {(first.timestamp or '')[11:16] or '?'} was already at {fmt(first.tokens)}"
        if first is not None
        else ""
    )
    return (
        t,
        margin,
        (
            f"{head}: the threshold would be {fmt(t)}; the context here ({fmt(e.pre_tokens)}) is {fmt(margin)} above it, "
            f"so it would have fired here at the latest{earlier}."
        ),
    )


def analyze(
    s: Session, settings: Settings | None = None, progress: Progress | None = None, baseline: Settings | None = None
) -> TokenReport:
    """The token story of a session; `progress(what, done, total)` hears about the slow parts.

    With `baseline` (the settings Claude Code's environment and config give) different from `settings` (a what-if),
    the series and the chart follow the what-if, while each compaction that happened is explained by the settings
    in force, with what the what-if would have changed about it beside."""
    settings = settings or Settings()
    what_if = baseline is not None and baseline != settings
    th = session_thresholds(s, settings)
    real = session_thresholds(s, baseline) if what_if and baseline is not None else th
    series = context_series(s, settings, th)
    counts = kept_chain_counts(s, series, progress)
    cals = calibrator(s, series, counts)
    cal = cals.first(len(cals.pts))
    positions = {i: k for k, i in enumerate(series.chain)}
    bounds = [  # (the type first: a system record's subtype is all the two properties read)
        i
        for i, r in enumerate(s.records)
        if (r.type == "system" and (r.subtype == "compact_boundary" or r.subtype == "microcompact_boundary"))
        or (r.type == "user" and r.flags & F_COMPACT_SUMMARY and r.is_unmarked_compaction)  # (up to 1.0.108)
    ]
    from inspector.claude.requests import rebuild_requests

    requests = rebuild_requests(s) if bounds else []
    exps = []
    copied_to = fork_copy_end(s) if bounds else None
    for n, i in enumerate(bounds):
        if progress is not None and n % 10 == 0:
            progress("explaining compactions", n, len(bounds))
        e = explain_boundary(s, series, counts, i, real, cals, positions, baseline if what_if else settings, requests)
        if copied_to is not None and i <= copied_to and e.kind != "microcompact":
            _as_made_before_the_fork(s, e, settings)
        if what_if and e.kind != "microcompact":
            wi = boundary_thresholds(s, series, i, th, settings, _around(series, e.pos)[0])
            assert baseline is not None  # what_if: a baseline differs from the settings
            e.what_if_threshold, e.what_if_margin, e.what_if = what_if_words(
                e, real, wi, series, describe_changes(settings, baseline)
            )
            e.explanation += " " + e.what_if
        exps.append(e)
    return TokenReport(s, settings, th, series, counts, cal, exps, find_anomalies(s, series, exps, th))


_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")


def _as_made_before_the_fork(s: Session, e: Explanation, settings: Settings) -> None:
    """A compaction a fork (--fork-session) starts with is a copy of one the session it was forked from made: its cause
    is that session's explanation of it when its transcript is beside this one, else not known here (this file has
    nothing before it to judge it by)."""
    origin = next((r.extra["copied_from"] for r in s.records if r.extra and r.extra.get("fork_copy")), None)
    if not isinstance(origin, str) or not _SESSION_ID.fullmatch(origin):
        return
    made = f"Made by session {origin} before this session was forked from it (--fork-session)"
    path = s.path.parent / f"{origin}.jsonl"
    theirs = None
    if path != s.path and path.is_file():
        try:
            other = Session.load(path)
            try:
                theirs = next((x for x in analyze(other, settings).compactions if x.uuid == e.uuid), None)
            finally:
                other.close()
        except (OSError, ValueError):
            theirs = None
    if theirs is not None:
        e.cause, e.threshold, e.margin = theirs.cause, theirs.threshold, theirs.margin
        e.explanation = f"{made}; as its story explains it: {theirs.explanation}"
    else:
        e.cause = "unknown"
        e.explanation = f"{made}, whose transcript is not beside this one: why it fired is told there, not here."


__all__ = ["analyze", "TokenReport", "Explanation", "token_count_with_estimation", "prepare"]
