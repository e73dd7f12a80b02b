"""One compaction's explanation, as `analyze` reports it: what Claude Code recorded of it, why it fired (`cause`), what
it kept and freed, and the thresholds it is judged by. Made by `explain`, its cause found by `cause`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inspector.tokens.context import RestoredFile


@dataclass(slots=True)
class Explanation:
    """One compact or microcompact boundary, explained."""

    index: int
    pos: int | None  # position in the logical chain (None if the boundary is off the chain)
    uuid: str | None
    timestamp: str | None
    kind: str  # auto, manual, partial, session-memory, microcompact
    trigger: str | None
    pre_tokens: int | None
    threshold: int | None
    margin: int | None  # pre_tokens - threshold
    last_usage_before: int | None
    post_tokens: int | None  # compactMetadata.postTokens (newer builds; conversation only)
    first_usage_after: int | None
    predicted_post_tokens: int | None  # made without looking at any usage after the boundary
    size_after: int | None
    size_after_source: str | None  # "postTokens", "first usage after" or "estimate"
    tokens_freed: int | None
    messages_summarized: int | None
    messages_kept: int | None
    restored_files: list[RestoredFile] = field(default_factory=list)
    compact_call: dict[str, Any] | None = None  # the agent-acompact-* call: agent id, usage, analysis
    summary_text: str | None = None
    cleared_tools: list[dict[str, Any]] = field(default_factory=list)
    explanation: str = ""
    cause: str = ""  # threshold, prompt_too_long, manual, partial, session_memory, microcompact (or unknown)
    cause_evidence: str = ""  # what in the transcript says so
    kept_uuids: list[str] = field(default_factory=list)  # records kept verbatim after the summary
    rounds_summarized: int | None = None  # API rounds (responses with their tool results) summarized
    rounds_kept: int | None = None
    may_be_refusal: bool = False  # an automatic compaction of unknown cause that the API's refusal may have set off
    # the model, of a larger window, the reply before an automatic compaction at its model's blocking limit was
    # requested on (2.1.295+ compacts there, on that model, whatever the window's source: cause._larger_window)
    larger_model: str | None = None
    # the model an automatic compaction was judged by when the process that made it recorded none: no reply of its own
    # follows it, and the last reply before it is another (earlier) process's, whose model this is (cause._assumed_model)
    model_unrecorded: str | None = None
    rules: str = ""  # which Claude Code rules set the threshold, and why
    rules_of: str = ""  # the releases whose rules those are, e.g. "2.1.21 – 2.1.158"
    threshold_source: str = ""  # how the threshold was computed (window, reserve, buffer; or not enforced)
    prediction_notes: list[str] = field(default_factory=list)  # what the predicted size after rests on
    what_if_threshold: int | None = None  # under a what-if: the auto-compact threshold it would give here
    what_if_margin: int | None = None  # pre_tokens - what_if_threshold
    what_if: str | None = None  # under a what-if: what it would change about this compaction, in words
    refuted: int = 0  # earlier responses at or above the threshold that did not compact: the threshold was not the cause
    duration_ms: int | None = None  # compactMetadata.durationMs: how long the compaction took (2.1.19x and later)
    # compactMetadata.cumulativeDroppedTokens: Claude Code's own count of what this and the session's earlier
    # compactions dropped (each one's preTokens less its postTokens, added up; 2.1.19x and later)
    cumulative_dropped_tokens: int | None = None
    # pre_tokens is the last usage before it, not a count Claude Code recorded: up to 1.0.108 a compaction was its
    # summary alone, and those releases compared the last usage with the threshold, no estimate added
    pre_tokens_inferred: bool = False

    def as_dict(self, *, full: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {
            "uuid": self.uuid,
            "timestamp": self.timestamp,
            "kind": "microcompact" if self.kind == "microcompact" else "compact",
            "strategy": self.kind,
            "trigger": self.trigger,
            "pre_tokens": self.pre_tokens,
            "pre_tokens_inferred": self.pre_tokens_inferred,
            "threshold": self.threshold,
            "margin": self.margin,
            "last_usage_before": self.last_usage_before,
            "post_tokens": self.post_tokens,
            "first_usage_after": self.first_usage_after,
            "predicted_post_tokens": self.predicted_post_tokens,
            "size_after": self.size_after,
            "size_after_source": self.size_after_source,
            "tokens_freed": self.tokens_freed,
            "messages_summarized": self.messages_summarized,
            "messages_kept": self.messages_kept,
            "restored_files": [{"path": f.path, "tokens": f.tokens, "kind": f.kind} for f in self.restored_files],
            "cleared_tools": self.cleared_tools,
            "explanation": self.explanation,
            "cause": self.cause,
            "cause_evidence": self.cause_evidence,
            "kept_uuids": self.kept_uuids,
            "rounds_summarized": self.rounds_summarized,
            "rounds_kept": self.rounds_kept,
            "rules": self.rules,
            "rules_of": self.rules_of,
            "threshold_source": self.threshold_source,
            "prediction_notes": self.prediction_notes,
            "threshold_refuted": self.refuted > 0,
            "duration_ms": self.duration_ms,
            "cumulative_dropped_tokens": self.cumulative_dropped_tokens,
        }
        if self.larger_model is not None:
            d["larger_model"] = self.larger_model
        if self.model_unrecorded is not None:
            d["model_unrecorded"] = self.model_unrecorded
        if self.what_if is not None:
            d.update(what_if=self.what_if, what_if_threshold=self.what_if_threshold, what_if_margin=self.what_if_margin)
        if self.compact_call is not None:
            call = dict(self.compact_call)
            if not full and call.get("analysis"):
                call["analysis"] = call["analysis"][:400] + ("…" if len(call["analysis"]) > 400 else "")
            d["compact_call"] = call
        if self.summary_text is not None:
            d["summary_text"] = (
                self.summary_text if full else self.summary_text[:400] + ("…" if len(self.summary_text) > 400 else "")
            )
        return d
