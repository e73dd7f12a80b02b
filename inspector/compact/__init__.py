"""Claude Code's compaction strategies as pure functions over a loaded session.

`compact(session, strategy, ...)` picks the slice (the active chain from the last boundary to the
chosen point), runs the strategy and returns one frozen `CompactionResult`. Session-memory
compaction falls back to full compaction where Claude Code would, and says why.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from inspector.claude.versions import default_strategy, releases_with, rules_for, what_if
from inspector.compact.base import CompactError, CompactionResult, Estimator, RecordFactory, Slice, make_slice
from inspector.compact.engine import EngineParams, engine_compact
from inspector.compact.invariants import KeepConfig
from inspector.compact.microcompact import MicrocompactParams, microcompact
from inspector.compact.session_memory import SessionMemoryParams, session_memory_compact
from inspector.compact.summarize.base import Cancel, Progress, Summarizer
from inspector.compact.summarize.offline import OfflineSummarizer
from inspector.compact.summary_compact import FullParams, PartialParams, full_compact, partial_compact
from inspector.tokens.thresholds import Settings
from inspector.transcript.session import Session

STRATEGIES = ("compact", "reactive", "partial", "full", "session-memory", "microcompact")


def compact(
    s: Session,
    strategy: str | None = None,
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
    trigger: str = "manual",
    refused_at: int | None = None,
    prompt_tokens: int | None = None,
) -> CompactionResult:
    """Run a strategy (default: what the session's own Claude Code does) and say which release's rules it follows."""
    rules = rules_for(s.version)
    strategy = strategy or default_strategy(rules.era)
    if strategy not in STRATEGIES:
        raise CompactError(f"unknown strategy {strategy!r} (choose from {', '.join(STRATEGIES)})")
    key = f"partial-{direction.replace('_', '-')}" if strategy == "partial" else strategy
    settings = settings or Settings()
    if estimator is None:
        estimator = Estimator(s, make_slice(s, at, settings).series, settings)
    res = _run(s, strategy, rules, at=at, summarizer=summarizer, settings=settings, microcompact_params=microcompact_params,
               session_memory_params=session_memory_params, pivot=pivot, direction=direction, instructions=instructions,
               factory=factory, estimator=estimator, progress=progress, cancel=cancel, trigger=trigger, refused_at=refused_at,
               prompt_tokens=prompt_tokens)
    label = f"{key}: the rules of Claude Code {rules.era.label} (releases {releases_with(key)} had it)"
    wi = what_if(key, rules.era)
    return replace(res, rules=rules.note, strategy_label=label, what_if=wi, notes=((wi,) if wi else ()) + res.notes,
                   accounting=account(s, estimator, res))


def account(s: Session, est: Estimator, res: CompactionResult) -> dict[str, int] | None:
    """What the size after a compaction is made of (summary, re-attached files, kept records, and the rest: the system
    prompt, tools and whatever the estimate anchors on), each in the session's calibrated tokens, and what the
    summarized records or the cleared results counted. The parts add up to `tokens_after` exactly."""
    if res.noop is not None:
        return None
    ratio = est.calibration.ratio

    def tokens(bodies: list) -> int:
        return round(ratio * est.counted([dict(b) for b in bodies])) if bodies else 0

    by = {o: [v.body for v in res.view if v.origin == o] for o in ("summary", "new", "kept", "cleared")}
    out = {"summary": tokens(by["summary"]), "new": tokens(by["new"]), "kept": tokens(by["kept"]),
           "kept_messages": len(by["kept"]) + len(by["cleared"]), "cleared_left": tokens(by["cleared"])}
    if res.cleared_tool_results:
        originals = [s.body(s.conversation.by_uuid[v.uuid]) for v in res.view if v.origin == "cleared" and v.uuid in s.conversation.by_uuid]
        out["cleared_before"] = tokens(originals)
    replaced = [s.body(i) for u in res.summarized_uuids if (i := s.conversation.by_uuid.get(u)) is not None
                and s.records[i].type in ("user", "assistant", "attachment")]
    out["replaced"], out["replaced_messages"] = tokens(replaced), len(replaced)
    out["fixed"] = res.tokens_after - out["summary"] - out["new"] - out["kept"] - out["cleared_left"]
    # the same split of the size before: the records compacted, and the rest (the system prompt and tools, what an
    # earlier compaction re-attached, and whatever the offline count of the records misses)
    originals = [s.body(i) for v in res.view if v.origin in ("kept", "cleared") and v.uuid is not None
                 and (i := s.conversation.by_uuid.get(v.uuid)) is not None]
    out["records_before"] = tokens(replaced + originals)
    out["fixed_before"] = res.tokens_before - out["records_before"]
    return out


def _just_after(s: Session, index: int) -> "datetime":
    from datetime import datetime, timedelta, timezone

    from inspector.transcript.records import timestamp_key

    for i in range(index, -1, -1):
        t = timestamp_key(s.records[i].timestamp)
        if t is not None:
            return datetime.fromtimestamp(t, tz=timezone.utc) + timedelta(seconds=1)
    return datetime.now(timezone.utc)


def _run(s: Session, strategy: str, rules: object, *, at: str | None, summarizer: Summarizer | None, settings: Settings | None,
         microcompact_params: MicrocompactParams | None, session_memory_params: SessionMemoryParams | None, pivot: str | None,
         direction: str, instructions: str | None, factory: RecordFactory | None, estimator: Estimator | None,
         progress: Progress | None, cancel: Cancel | None, trigger: str, refused_at: int | None,
         prompt_tokens: int | None) -> CompactionResult:
    from inspector.claude.versions import TAIL

    settings = settings or Settings()
    sl = make_slice(s, at, settings)
    est = estimator or Estimator(s, sl.series, settings)
    if factory is None:  # the new records are dated just after the point they compact, not on the day they are saved
        factory = RecordFactory(s, now=_just_after(s, sl.point))
    summarizer = summarizer or OfflineSummarizer()
    tail_era = TAIL in getattr(getattr(rules, "era"), "strategies")
    if strategy in ("compact", "reactive"):
        mode = "compact" if strategy == "compact" else "reactive"
        return engine_compact(sl, est, summarizer, EngineParams(mode, trigger, instructions, refused_at, prompt_tokens),
                              factory, progress, cancel)
    if strategy == "partial" and tail_era:
        if pivot is None:
            raise CompactError("partial compaction needs a pivot: the uuid of a prompt you typed (--at)")
        return engine_compact(sl, est, summarizer, EngineParams("partial", "manual", instructions, None, None, pivot, direction), factory,
                              progress, cancel)
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


__all__ = ["EngineParams", "STRATEGIES", "CompactError", "CompactionResult", "Estimator", "KeepConfig", "MicrocompactParams", "RecordFactory",
           "SessionMemoryParams", "Slice", "compact", "make_slice"]
