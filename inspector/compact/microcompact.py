"""Time-based microcompact (§6.1): clear old tool results once the prompt cache has expired."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from inspector.compact.base import CompactionResult, Estimator, RecordFactory, Slice, ViewMessage
from inspector.textutil import human_span, timestamp_key
from inspector.tokens.estimate import CLEARED_MARKER, IMAGE_TOKENS_ROUGH, rough
from inspector.transcript.records import iter_blocks, json_copy

COMPACTABLE_TOOLS = frozenset({"Read", "Bash", "PowerShell", "Grep", "Glob", "WebSearch", "WebFetch", "Edit", "Write"})


@dataclass(frozen=True, slots=True)
class MicrocompactParams:
    gap_minutes: float = 60.0  # tengu_slate_heron gapThresholdMinutes
    keep_recent: int = 5  # tengu_slate_heron keepRecent
    tools: frozenset[str] = COMPACTABLE_TOOLS
    now: datetime | None = None  # "now" for the gap; default: the current time
    force: bool = False  # clear even if the gap is below the threshold (a what-if)


def _tool_result_tokens(content: Any) -> int:
    """§6.1: text chars / 4, 2,000 per image or document."""
    if isinstance(content, str):
        return rough(content)
    n = 0
    for b in iter_blocks(content):
        if b.get("type") == "text" and isinstance(b.get("text"), str):
            n += rough(b["text"])
        elif b.get("type") in ("image", "document"):
            n += IMAGE_TOKENS_ROUGH
    return n


def microcompact(
    sl: Slice, est: Estimator, params: MicrocompactParams = MicrocompactParams(), factory: RecordFactory | None = None
) -> CompactionResult:
    s = sl.session
    recs = s.records
    now = params.now or datetime.now(UTC)
    last_assistant = next((i for i in reversed(sl.chain) if recs[i].type == "assistant"), None)
    notes: list[str] = []
    noop = None
    gap = None
    if last_assistant is None:
        noop = "no assistant message: nothing to measure the gap from"
    else:
        ts = timestamp_key(recs[last_assistant].timestamp)
        gap = (now.timestamp() - ts) / 60 if ts is not None else None
        if gap is None:
            noop = "the last assistant message has no usable timestamp"
        elif gap < params.gap_minutes and not params.force:
            noop = (
                f"the gap since the last assistant message is {human_span(gap * 60)}, under the {params.gap_minutes:g} min "
                f"threshold: "
                "Claude Code would not clear anything"
            )
    ids: list[str] = []
    for i in sl.chain:
        for tid, name in recs[i].tool_uses:
            if name in params.tools and tid not in ids:
                ids.append(tid)
    keep = set(ids[-max(1, params.keep_recent) :]) if ids else set()
    to_clear = [t for t in ids if t not in keep]
    rewritten: dict[str, dict[str, Any]] = {}
    cleared: dict[str, int] = {}
    view: list[ViewMessage] = []
    before_bodies = []
    for i in sl.messages:
        body = s.body(i)
        before_bodies.append(body)
        r = recs[i]
        hit = [t for t in r.tool_results if t in to_clear] if noop is None else []
        if hit:
            nb = json_copy(body)
            for b in iter_blocks(nb["message"]["content"]):
                if b.get("type") == "tool_result" and b.get("tool_use_id") in hit:
                    if b.get("content") == CLEARED_MARKER:
                        continue
                    cleared[b["tool_use_id"]] = _tool_result_tokens(b.get("content"))
                    b["content"] = CLEARED_MARKER
            if any(t in cleared for t in hit):
                rewritten[r.uuid] = nb  # type: ignore[index]
                body = nb
        if r.type in ("user", "assistant", "attachment"):
            view.append(ViewMessage(r.uuid, r.type, body, "cleared" if r.uuid in rewritten else "kept"))
    saved = sum(cleared.values())
    if noop is None and saved == 0:
        noop = "nothing to clear: every old result of a compactable tool is already cleared or empty"
    before = est.before(sl)
    after_counted = est.after([v.body for v in view]) if rewritten else None
    tokens_after = before if not rewritten else min(before, before - (est.after(before_bodies) - (after_counted or 0)))
    new_records: list[dict[str, Any]] = []
    if rewritten:
        factory = factory or RecordFactory(s)
        tmpl = s.body(sl.point)
        notes.append(
            "Claude Code writes nothing for a time-based microcompact; the saved session records it as a "
            "microcompact_boundary so the clearing is visible"
        )
        new_records.append(
            factory.system(
                tmpl,
                sl.uuid(sl.point),
                "microcompact_boundary",
                content="Context microcompacted",
                level="info",
                microcompactMetadata={
                    "trigger": "manual",
                    "preTokens": before,
                    "tokensSaved": saved,
                    "compactedToolIds": list(cleared),
                    "clearedAttachmentUUIDs": [],
                },
            )
        )
    if gap is not None:
        notes.insert(0, f"gap since the last assistant message: {human_span(gap * 60)} (threshold {params.gap_minutes:g} min)")
    return CompactionResult(
        strategy="microcompact",
        direction=None,
        point_uuid=sl.uuid(sl.point),
        pivot_uuid=None,
        view=tuple(view),
        new_records=tuple(new_records),
        rewritten=rewritten,
        cleared_tool_results=tuple(cleared),
        cleared_tokens=cleared,
        summarized_uuids=(),
        kept_uuids=tuple(v.uuid for v in view if v.uuid),
        summary=None,
        tokens_before=before,
        tokens_after=tokens_after,
        restored_files_tokens=0,
        thresholds=est.thresholds,
        noop=noop,
        notes=tuple(notes),
        slice_records=len(sl.chain),
        parameters={
            "gap_minutes": params.gap_minutes,
            "keep_recent": params.keep_recent,
            "tools": sorted(params.tools),
            "force": params.force,
        },
    )
