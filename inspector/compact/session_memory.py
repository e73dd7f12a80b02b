"""Session-memory compaction (§7): the notes in summary.md replace the older messages; a
window of recent messages is kept verbatim.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.compact.base import CompactError, CompactionResult, Estimator, RecordFactory, Slice, ViewMessage, wrap_summary
from inspector.compact.invariants import KeepConfig, calculate_messages_to_keep_index
from inspector.compact.summarize.base import Summarizer, SummaryRequest
from inspector.tokens.estimate import estimate_record_padded
from inspector.transcript.session import read_capped
from inspector.transcript.tree import kept_not_relinked, relinks_kept

TEMPLATE_SECTIONS: tuple[tuple[str, str], ...] = (
    ("Session Title", "A short and distinctive 5-10 word descriptive title for the session. Super info dense, no filler"),
    ("Current State", "What is actively being worked on right now? Pending tasks not yet completed. Immediate next steps."),
    ("Task specification", "What did the user ask to build? Any design decisions or other explanatory context"),
    ("Files and Functions", "What are the important files? In short, what do they contain and why are they relevant?"),
    ("Workflow", "What bash commands are usually run and in what order? How to interpret their output if not obvious?"),
    (
        "Errors & Corrections",
        "Errors encountered and how they were fixed. What did the user correct? What approaches failed and should not be tried "
        "again?",
    ),
    ("Codebase and System Documentation", "What are the important system components? How do they work/fit together?"),
    ("Learnings", "What has worked well? What has not? What to avoid? Do not duplicate items from other sections"),
    (
        "Key results",
        "If the user asked a specific output such as an answer to a question, a table, or other document, repeat the exact "
        "result here",
    ),
    ("Worklog", "Step by step, what was attempted, done? Very terse summary for each step"),
)
SECTION_CHAR_LIMIT = 8_000  # 2,000 tokens × 4 (truncateSessionMemoryForCompact)
TRUNCATED_MARK = "[... section truncated for length ...]"


def template_text() -> str:
    return "\n".join(f"# {t}\n_{d}_\n" for t, d in TEMPLATE_SECTIONS)


def is_empty_template(text: str) -> bool:
    return text.strip() == template_text().strip()


def truncate_for_compact(text: str) -> tuple[str, bool]:
    """Each `# ` section's body limited to 8,000 chars, cut at a line boundary (§7.7)."""
    out: list[str] = []
    truncated = False
    section: list[str] = []
    header: str | None = None

    def flush() -> None:
        nonlocal truncated
        body = "\n".join(section)
        if len(body) > SECTION_CHAR_LIMIT:
            cut = body[:SECTION_CHAR_LIMIT]
            nl = cut.rfind("\n")
            body = (cut[:nl] if nl > 0 else cut) + "\n" + TRUNCATED_MARK
            truncated = True
        if header is not None:
            out.append(header)
        if body or header is not None:
            out.append(body)

    for line in text.splitlines():
        if line.startswith("# "):
            flush()
            header, section = line, []
        else:
            section.append(line)
    flush()
    return "\n".join(x for x in out if x is not None), truncated


@dataclass(frozen=True, slots=True)
class SessionMemoryParams:
    keep: KeepConfig = KeepConfig()
    last_summarized_uuid: str | None = None  # lastSummarizedMessageId; None: the resumed-session rule (§7.6)
    auto: bool = False  # the auto path: fall back when the result is still above the threshold


def session_memory_compact(
    sl: Slice,
    est: Estimator,
    summarizer: Summarizer,
    params: SessionMemoryParams = SessionMemoryParams(),
    factory: RecordFactory | None = None,
) -> CompactionResult:
    """Returns the result, or one whose `fallback` says why Claude Code would do a full compaction."""
    s = sl.session
    recs = s.records
    msgs_idx = list(sl.chain)  # the slice as Claude Code passes it: starts at the boundary
    msgs = [recs[i] for i in msgs_idx]
    notes: list[str] = []
    memory = None
    mp = s.memory_file()
    unreadable = None
    if mp is not None:
        try:
            memory, _ = read_capped(mp, 4 << 20)  # for the summary; a save copies the file itself, byte for byte
            notes.append(f"notes from {mp}")
        except OSError as exc:
            unreadable = f"{mp} could not be read ({exc.strerror or exc})"
            mp = None
    fallback = None
    summarizer_name = None
    usage = None
    if memory is not None and is_empty_template(memory):
        fallback = "summary.md is still the empty template: Claude Code falls back to full compaction"
    if unreadable is not None:
        fallback = f"{unreadable}: Claude Code falls back to full compaction when the notes cannot be read"
    if memory is None:
        # Claude Code would fall back to full compaction; here the chosen summarizer writes the notes
        out = summarizer.summarize(SummaryRequest(s, tuple(sl.messages), kind="session_memory_notes"))
        memory, summarizer_name, usage = out.text, out.summarizer, out.usage
        notes.append(
            f"no summary.md: the notes were written by the {out.summarizer} summarizer in Claude Code's template "
            "(Claude Code itself would fall back to full compaction)"
        )
    if params.last_summarized_uuid is not None:
        try:
            last_idx = next(k for k, i in enumerate(msgs_idx) if recs[i].uuid == params.last_summarized_uuid)
        except StopIteration:
            raise CompactError(
                f"lastSummarizedMessageId {params.last_summarized_uuid} is not in the slice: "
                "Claude Code would fall back to full compaction"
            ) from None
    else:
        last_idx = len(msgs) - 1  # the resumed-session rule (§7.6)
        notes.append("lastSummarizedMessageId is not on disk: the resumed-session rule keeps a window built back from the end")
    padded = {
        k: estimate_record_padded(s.body(msgs_idx[k])) if msgs[k].type in ("user", "assistant") else 0 for k in range(len(msgs))
    }
    start = calculate_messages_to_keep_index(msgs, last_idx, padded.__getitem__, params.keep)
    keep = [msgs_idx[k] for k in range(start, len(msgs)) if not recs[msgs_idx[k]].is_compact_boundary]
    kept_set = set(keep)
    summarized = [i for i in sl.messages if i not in kept_set]
    noop = None
    if not any(recs[i].type in ("user", "assistant") for i in summarized):
        noop = (
            f"the keep window (at least {params.keep.min_tokens:,} tokens and {params.keep.min_text_block_messages} text "
            f"messages, "
            f"at most {params.keep.max_tokens:,}) covers the whole slice: nothing to summarize"
        )
    truncated_text, truncated = truncate_for_compact(memory)
    wrapped = wrap_summary(truncated_text.strip(), transcript_path=str(s.path.resolve()), preserved=bool(keep), directive=True)
    if truncated:
        wrapped += f"\n\nSome sections were truncated for length; the full notes are in {mp}"
    factory = factory or RecordFactory(s)
    tmpl = s.body(sl.point)
    last_uuid = sl.uuid(sl.point)
    # preTokens = tokenCountFromLastAPIResponse: API usage only, no estimate (§7.7)
    chain = list(sl.series.chain)
    lo, hi = chain.index(sl.chain[0]), chain.index(sl.point)
    last_api = next((t.tokens for t in reversed(sl.series.turns) if lo <= t.pos <= hi), 0)
    summary_uuid = factory.new_id()
    meta_extra = {}
    if keep:
        meta_extra["preservedSegment"] = {
            "headUuid": recs[keep[0]].uuid,
            "anchorUuid": summary_uuid,
            "tailUuid": recs[keep[-1]].uuid,
        }
    boundary = factory.boundary(tmpl, trigger="auto", pre_tokens=last_api, logical_parent=last_uuid, extra_meta=meta_extra)
    summary = factory.user(tmpl, boundary["uuid"], wrapped, isVisibleInTranscriptOnly=True, isCompactSummary=True)
    summary["uuid"] = summary_uuid
    view = [ViewMessage(summary_uuid, "user", summary, "summary")]
    sent = keep  # the kept messages a resume sends
    if keep and noop is None and not relinks_kept(s.version):
        # the release puts no kept message back when it loads the file: a resume sends the summary alone
        notes.append(kept_not_relinked(s.version, len(keep), "it keeps"))
        sent = []
    view += [
        ViewMessage(recs[i].uuid, recs[i].type, s.body(i), "kept")
        for i in sent
        if recs[i].type in ("user", "assistant", "attachment")
    ]
    after = est.after([v.body for v in view])
    # Claude Code's own check uses estimateMessageTokens of the result (string summary counts 0)
    sm_estimate = sum(padded[msgs_idx.index(i)] for i in keep)
    if params.auto and est.thresholds.auto_compact is not None and sm_estimate >= est.thresholds.auto_compact:
        fallback = (
            f"the kept messages alone are estimated at {sm_estimate:,} tokens, at or above the auto-compact threshold "
            f"{est.thresholds.auto_compact:,}: Claude Code falls back to full compaction"
        )
    before = est.before(sl)
    if noop is not None:
        view = [
            ViewMessage(recs[i].uuid, recs[i].type, s.body(i), "kept")
            for i in keep
            if recs[i].type in ("user", "assistant", "attachment")
        ]
        after = before
    return CompactionResult(
        strategy="session-memory",
        direction=None,
        point_uuid=last_uuid,
        pivot_uuid=None,
        view=tuple(view),
        new_records=(boundary, summary) if noop is None else (),
        rewritten={},
        noop=noop,
        cleared_tool_results=(),
        cleared_tokens={},
        summarized_uuids=tuple(u for i in summarized if (u := recs[i].uuid)),
        kept_uuids=tuple(u for i in sent if (u := recs[i].uuid)),
        summary=wrapped if noop is None else None,
        tokens_before=before,
        tokens_after=after,
        restored_files_tokens=0,
        thresholds=est.thresholds,
        fallback=fallback,
        notes=tuple(notes),
        summarizer=summarizer_name,
        summarizer_usage=usage,
        session_memory=memory,
        session_memory_file=mp,
        slice_records=len(sl.chain),
        parameters={
            "min_tokens": params.keep.min_tokens,
            "min_text_block_messages": params.keep.min_text_block_messages,
            "max_tokens": params.keep.max_tokens,
            "last_summarized_uuid": params.last_summarized_uuid,
        },
    )
