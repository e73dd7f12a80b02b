"""Claude Code's compaction strategies as pure functions over a loaded session.

`compact(session, strategy, ...)` picks the slice (the active chain from the last boundary to the
chosen point), runs the strategy and returns one frozen `CompactionResult`. Session-memory
compaction falls back to full compaction where Claude Code would, and says why.
"""

from __future__ import annotations

from dataclasses import replace

from inspector.compact.base import CompactError, CompactionResult, Estimator, RecordFactory, Slice, make_slice
from inspector.compact.invariants import KeepConfig
from inspector.compact.microcompact import MicrocompactParams, microcompact
from inspector.compact.session_memory import SessionMemoryParams, session_memory_compact
from inspector.compact.summarize.base import Cancel, Progress, Summarizer
from inspector.compact.summarize.offline import OfflineSummarizer
from inspector.compact.summary_compact import FullParams, PartialParams, full_compact, partial_compact
from inspector.tokens.thresholds import Settings
from inspector.transcript.session import Session

STRATEGIES = ("microcompact", "session-memory", "partial", "full")


def compact(
    s: Session,
    strategy: str,
    *,
    at: str | None = None,
    summarizer: Summarizer | None = None,
    settings: Settings | None = None,
    microcompact_params: MicrocompactParams | None = None,
    session_memory_params: SessionMemoryParams | None = None,
    pivot: str | None = None,
    direction: str = "from",
    instructions: str | None = None,
    factory: RecordFactory | None = None,
    estimator: Estimator | None = None,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> CompactionResult:
    if strategy not in STRATEGIES:
        raise CompactError(f"unknown strategy {strategy!r} (choose from {', '.join(STRATEGIES)})")
    settings = settings or Settings()
    sl = make_slice(s, at, settings)
    est = estimator or Estimator(s, sl.series, settings)
    summarizer = summarizer or OfflineSummarizer()
    if strategy == "microcompact":
        return microcompact(sl, est, microcompact_params or MicrocompactParams(), factory)
    if strategy == "partial":
        if pivot is None:
            raise CompactError("partial compaction needs a pivot: the uuid of a user message (--at)")
        return partial_compact(sl, est, summarizer, PartialParams(pivot, direction, instructions), factory, progress, cancel)
    if strategy == "full":
        return full_compact(sl, est, summarizer, FullParams(instructions), factory, progress, cancel)
    res = session_memory_compact(sl, est, summarizer, session_memory_params or SessionMemoryParams(), factory)
    if res.fallback is not None:
        full = full_compact(sl, est, summarizer, FullParams(instructions, trigger="auto" if (session_memory_params or SessionMemoryParams()).auto else "manual"),
                            factory, progress, cancel)
        return replace(full, fallback=res.fallback, notes=(f"session-memory compaction not applicable: {res.fallback}",) + full.notes)
    return res


__all__ = ["STRATEGIES", "CompactError", "CompactionResult", "Estimator", "KeepConfig", "MicrocompactParams", "RecordFactory",
           "SessionMemoryParams", "Slice", "compact", "make_slice"]
