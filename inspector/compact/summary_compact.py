"""Full compaction (§8.1–8.6, `/compact [instructions]`) and partial compaction from a chosen
message in both directions (§8.7, "summarize from here" and "up to here").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspector.claude.release import at_or_after
from inspector.compact.base import (
    CAVEAT_BEFORE_2_1_285,
    CompactError,
    CompactionResult,
    Estimator,
    RecordFactory,
    Slice,
    ViewMessage,
    format_compact_summary,
    wrap_summary,
)
from inspector.compact.hooks import session_start_hook, summarized_count, trailing_records
from inspector.compact.summarize.base import Cancel, Progress, Summarizer, SummaryRequest
from inspector.tokens.context import restored_context
from inspector.transcript.records import MENU_HIDDEN_TAGS, REJECT_PREFIX, SYNTHETIC_TEXTS
from inspector.transcript.tree import is_sent, kept_not_relinked, relinks_kept

API_TYPES = ("user", "assistant", "attachment")


# the first release whose summary of a partial compaction says its direction (summarizeMetadata.direction: 2.1.87's
# code writes messagesSummarized and userContext only)
DIRECTION_WRITTEN_FROM = (2, 1, 88)
# the first release whose rewind menu leaves out a compaction's summary and a message shown in the transcript only
# (2.1.81's selector filter has neither test, 2.1.83's both; npm has no 2.1.82)
SUMMARY_NOT_OFFERED_FROM = (2, 1, 83)


@dataclass(frozen=True, slots=True)
class FullParams:
    instructions: str | None = None  # /compact [instructions]
    trigger: str = "manual"  # "manual" (/compact) or "auto" (what auto-compaction would write)


@dataclass(frozen=True, slots=True)
class PartialParams:
    pivot_uuid: str
    direction: str = "from"  # "from" (summarize from here) or "up_to" (summarize up to here)
    user_context: str | None = None


def _view(sl: Slice, indexes: list[int], origin: str) -> list[ViewMessage]:
    s = sl.session
    return [
        ViewMessage(s.records[i].uuid, s.records[i].type, s.body(i), origin) for i in indexes if s.records[i].type in API_TYPES
    ]


def _manual_breadcrumbs(factory: RecordFactory, tmpl: dict[str, Any], parent: str) -> list[dict[str, Any]]:
    """What /compact appends after the summary (§8.6)."""
    caveat = factory.user(
        tmpl,
        parent,
        CAVEAT_BEFORE_2_1_285,
        isMeta=True,
    )
    cmd = factory.user(
        tmpl,
        caveat["uuid"],
        "<command-name>/compact</command-name>\n            <command-message>compact</command-message>\n"
        "            <command-args></command-args>",
    )
    out = factory.user(tmpl, cmd["uuid"], "<local-command-stdout>Compacted (ctrl+o to see full summary)</local-command-stdout>")
    return [caveat, cmd, out]


def _hooks_notes(sl: Slice) -> list[str]:
    from inspector.compact.hooks import hooks_note, session_start_hooks

    hooked = session_start_hooks(sl)
    return [hooks_note(len(hooked), written=False)] if hooked else []


def full_compact(
    sl: Slice,
    est: Estimator,
    summarizer: Summarizer,
    params: FullParams = FullParams(),
    factory: RecordFactory | None = None,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> CompactionResult:
    s = sl.session
    msgs = [i for i in sl.messages if s.records[i].type != "progress"]
    if not any(s.records[i].type in ("user", "assistant") for i in msgs):
        raise CompactError("nothing to summarize: the slice has no messages after the last compaction")
    out = summarizer.summarize(SummaryRequest(s, tuple(msgs), kind="full", instructions=params.instructions), progress, cancel)
    formatted = format_compact_summary(out.text, s.version)
    wrapped = wrap_summary(formatted, transcript_path=str(s.path.resolve()), preserved=False, directive=params.trigger == "auto")
    factory = factory or RecordFactory(s)
    tmpl = s.body(sl.point)
    before = est.before(sl)
    boundary = factory.boundary(tmpl, trigger=params.trigger, pre_tokens=before, logical_parent=sl.uuid(sl.point))
    summary = factory.user(tmpl, boundary["uuid"], wrapped, isVisibleInTranscriptOnly=True, isCompactSummary=True)
    new = [boundary, summary]
    if params.trigger == "manual":
        new += _manual_breadcrumbs(factory, tmpl, summary["uuid"])
    view = [ViewMessage(summary["uuid"], "user", summary, "summary")] + [
        ViewMessage(r["uuid"], "user", r, "new") for r in new[2:]
    ]
    restored = restored_context(s, list(sl.chain), est.calibration.ratio)
    notes = _hooks_notes(sl)
    if restored:
        files = sum(1 for f in restored if f.kind in ("file", "reference"))
        what = [f"{files} recently used file(s)"] if files else []
        what += ["the plan file" for f in restored if f.kind == "plan"] + [
            "the open todo list" for f in restored if f.kind == "todo"
        ]
        notes.append(
            f"a live compaction would also re-attach {', '.join(what)} (+{sum(f.tokens for f in restored):,} tokens); "
            "a resumed session starts without them"
        )
    return CompactionResult(
        strategy="full",
        direction=None,
        point_uuid=sl.uuid(sl.point),
        pivot_uuid=None,
        view=tuple(view),
        new_records=tuple(new),
        rewritten={},
        cleared_tool_results=(),
        cleared_tokens={},
        summarized_uuids=tuple(u for i in msgs if (u := s.records[i].uuid)),
        kept_uuids=(),
        summary=wrapped,
        tokens_before=before,
        tokens_after=est.after([v.body for v in view]),
        restored_files_tokens=sum(f.tokens for f in restored),
        thresholds=est.thresholds,
        notes=tuple(notes + list(out.notes)),
        summarizer=out.summarizer,
        summarizer_usage={**out.usage, "cost_usd": out.cost_usd} if out.usage else None,
        slice_records=len(sl.chain),
        parameters={"instructions": params.instructions, "trigger": params.trigger},
    )


def is_pivot_candidate(sl: Slice, i: int) -> bool:
    """A message the rewind selector of the releases before 2.1.3xx offers (read from 2.1.88's source,
    `selectableUserMessagesFilter` in MessageSelector.tsx): a user message whose first block is not a tool result,
    that is not synthetic ("[Request interrupted…]", a cancel or a rejection), meta, a summary or shown in the
    transcript only, and whose text (a string, or its last block's) holds no command output, shell output, task
    notification, tick or teammate message. So a slash command's own record (`/compact`) is offered, its output
    is not (as in 2.1.3xx's menu, compact/engine.py: _offered_328). Before 2.1.83 the filter has no test of a summary
    or a message shown in the transcript only: the menu offers a compaction's summary (2.1.36 REPL seed 193001 picked
    one; read in the filters of 2.1.36-2.1.81, and 2.1.83's and 2.1.88's, which test both)."""
    r = sl.session.records[i]
    if r.type != "user" or r.is_meta:
        return False
    body = sl.session.body(i)
    if at_or_after(sl.session.version, SUMMARY_NOT_OFFERED_FROM) and (
        r.is_compact_summary or body.get("isVisibleInTranscriptOnly") is True
    ):
        return False
    msg = body.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    blocks = content if isinstance(content, list) else None
    if blocks and isinstance(blocks[0], dict):
        if blocks[0].get("type") == "tool_result":
            return False
        first = blocks[0].get("text") if blocks[0].get("type") == "text" else None
        if isinstance(first, str) and (first in SYNTHETIC_TEXTS or first.startswith(REJECT_PREFIX)):
            return False
    if isinstance(content, str):
        text = content.strip()
    else:
        last = blocks[-1] if blocks else None
        text = last.get("text", "").strip() if isinstance(last, dict) and last.get("type") == "text" else ""
        text = text if isinstance(text, str) else ""
    return not any(tag in text for tag in MENU_HIDDEN_TAGS) and "<teammate-message" not in text


def partial_compact(
    sl: Slice,
    est: Estimator,
    summarizer: Summarizer,
    params: PartialParams,
    factory: RecordFactory | None = None,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> CompactionResult:
    s = sl.session
    recs = s.records
    if params.direction not in ("from", "up_to"):
        raise CompactError(f"direction must be 'from' or 'up_to', not {params.direction!r}")
    # the REPL's messages end with the turn_duration below the last reply, which it holds as a message: a "from"
    # counts it among those summarized, an "up to" keeps it (2.1.124 and 2.1.150, REPL seed 202; 2.1.150's "up to"
    # compactions name it as the kept segment's tail, REPL seeds 1003, 1005, 203 and 17 more)
    msgs = list(sl.messages) + trailing_records(sl)
    pi = s.conversation.by_uuid.get(params.pivot_uuid)
    if pi is None or pi not in msgs:
        raise CompactError(f"pivot {params.pivot_uuid} is not a message after the last compaction on the conversation's chain")
    if not is_pivot_candidate(sl, pi):
        raise CompactError(
            f"pivot {params.pivot_uuid} is not a user message (pick a prompt you typed, not a tool result or a reply)"
        )
    k = msgs.index(pi)
    if params.direction == "from":
        summarize = msgs[k:]
        keep = [i for i in msgs[:k] if recs[i].type != "progress"]
        context = tuple(keep)
    else:
        summarize = msgs[:k]
        keep = [
            i
            for i in msgs[k:]
            if recs[i].type != "progress" and not recs[i].is_compact_boundary and not recs[i].is_compact_summary
        ]
        context = ()
    # a message or a record that is sent (a SessionStart hook's output before the first prompt: 2.1.150 summarized
    # it, and its twin, "up to" the first prompt, REPL seed 88003, as 2.1.328 does)
    if not any(recs[i].type in ("user", "assistant") or is_sent(recs[i]) or session_start_hook(s, i) for i in summarize):
        raise CompactError("nothing to summarize on that side of the pivot")
    kind = "partial_from" if params.direction == "from" else "partial_up_to"
    out = summarizer.summarize(
        SummaryRequest(s, tuple(summarize), context=context, kind=kind, instructions=params.user_context), progress, cancel
    )
    formatted = format_compact_summary(out.text, s.version)
    wrapped = wrap_summary(
        formatted, transcript_path=str(s.path.resolve()), preserved=params.direction == "up_to" and bool(keep), directive=False
    )
    factory = factory or RecordFactory(s)
    tmpl = s.body(sl.point)
    before = est.before(sl)
    boundary_uuid = factory.new_id()
    summary_uuid = factory.new_id()
    if params.direction == "from":
        logical = recs[keep[-1]].uuid if keep else None
        anchor = boundary_uuid
    else:
        before_pivot = [i for i in msgs[:k] if recs[i].type != "progress"]
        logical = recs[before_pivot[-1]].uuid if before_pivot else None
        anchor = summary_uuid
    counted, unknown = summarized_count(sl, summarize, s.version)
    # the REPL's messages start at the last compaction's boundary, which an "up to" counts among those it summarizes
    counted += 1 if params.direction == "up_to" and sl.boundary is not None else 0
    meta: dict[str, Any] = {"messagesSummarized": counted}
    if params.user_context:
        meta["userContext"] = params.user_context
    if keep:
        # a "from" keeps the REPL's messages before the pivot, the last compaction's boundary first (2.1.150 REPL seeds
        # 1004, 1011, 1019, 75026, 96015 and 9700 name it the kept segment's head); written for a release before 2.1.76
        # too, which names none (its code has none: 2.1.36 REPL seeds 202, 9700, 91000) and reads none, so that a
        # later release that resumes the saved session puts the kept messages back
        head = sl.boundary if params.direction == "from" and sl.boundary is not None else keep[0]
        meta["preservedSegment"] = {"headUuid": recs[head].uuid, "anchorUuid": anchor, "tailUuid": recs[keep[-1]].uuid}
    boundary = factory.boundary(tmpl, trigger="manual", pre_tokens=before, logical_parent=logical, extra_meta=meta)
    boundary["uuid"] = boundary_uuid
    extra: dict[str, Any] = {"isCompactSummary": True}
    if keep:
        # (the userContext of a pick without context is undefined in Claude Code's object: not written; the direction
        # is written from 2.1.88, which first offers "up to" in its code: 2.1.87's summarizeMetadata has none)
        extra["summarizeMetadata"] = {"messagesSummarized": counted}
        if params.user_context:
            extra["summarizeMetadata"]["userContext"] = params.user_context
        if at_or_after(s.version, DIRECTION_WRITTEN_FROM):
            extra["summarizeMetadata"]["direction"] = params.direction
    else:
        extra["isVisibleInTranscriptOnly"] = True
    summary = factory.user(tmpl, boundary_uuid, wrapped, **extra)
    summary["uuid"] = summary_uuid
    sv = ViewMessage(summary_uuid, "user", summary, "summary")
    notes = _hooks_notes(sl) + list(out.notes) + unknown
    if keep and not relinks_kept(s.version):
        # the release puts no kept message back when it loads the file: a resume sends the summary alone
        notes.append(kept_not_relinked(s.version, len(keep), "before the pivot"))
        keep = []
    kept_view = _view(sl, keep, "kept")
    view = kept_view + [sv] if params.direction == "from" else [sv] + kept_view
    if params.direction == "from":
        notes.append(
            "after a 'from' compaction Claude Code puts the pivot message's text back in the input box (it is not resent)"
        )
    return CompactionResult(
        strategy="partial",
        direction=params.direction,
        point_uuid=sl.uuid(sl.point),
        pivot_uuid=params.pivot_uuid,
        view=tuple(view),
        new_records=(boundary, summary),
        rewritten={},
        cleared_tool_results=(),
        cleared_tokens={},
        summarized_uuids=tuple(u for i in summarize if (u := recs[i].uuid)),
        kept_uuids=tuple(u for i in keep if (u := recs[i].uuid)),
        summary=wrapped,
        tokens_before=before,
        tokens_after=est.after([v.body for v in view]),
        restored_files_tokens=0,
        thresholds=est.thresholds,
        notes=tuple(notes),
        summarizer=out.summarizer,
        summarizer_usage={**out.usage, "cost_usd": out.cost_usd} if out.usage else None,
        slice_records=len(sl.chain),
        parameters={"direction": params.direction, "pivot_uuid": params.pivot_uuid, "user_context": params.user_context},
    )
