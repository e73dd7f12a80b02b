"""Claude Code's compaction strategies as pure functions over a loaded session.

`compact(session, request)` picks the slice (the active chain from the last boundary to the chosen point), runs the
strategy the request names (by the registry `REGISTRY`) and returns one frozen `CompactionResult`. A request is one
value (`CompactRequest`: what to compute), built the same way by the command line, the workbench and the harness; the
collaborators (summarizer, record factory, estimator, progress, cancel) are how to run it. Session-memory compaction
falls back to full compaction where Claude Code would, and says why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from inspector.claude.versions import default_strategy, releases_with, rules_for, what_if
from inspector.compact.base import CompactError, CompactionResult, Estimator, RecordFactory, Slice, make_slice
from inspector.compact.engine import EngineParams, engine_compact
from inspector.compact.invariants import KeepConfig
from inspector.compact.microcompact import MicrocompactParams, microcompact
from inspector.compact.session_memory import SessionMemoryParams, session_memory_compact
from inspector.compact.summarize.base import Cancel, Progress, Summarizer
from inspector.compact.summarize.offline import OfflineSummarizer
from inspector.compact.summary_compact import FullParams, PartialParams, full_compact, partial_compact
from inspector.tokens.series import Series
from inspector.tokens.thresholds import Settings
from inspector.transcript.records import F_INTERRUPT
from inspector.transcript.session import Session


@dataclass(frozen=True, slots=True)
class CompactRequest:
    """What a compaction computes. `strategy` None: what the session's own Claude Code does. `at`: the record to
    compact at (None: the session's end); `pivot` and `direction` ("from", "up_to"): a partial compaction's prompt;
    `trigger`, `refused_at`, `prompt_tokens`: how a 2.1.3xx compaction was set off (manual, auto, the API's refusal
    and the count it gave)."""

    strategy: str | None = None
    at: str | None = None
    pivot: str | None = None
    direction: str = "from"
    instructions: str | None = None
    trigger: str = "manual"
    refused_at: int | None = None
    prompt_tokens: int | None = None
    settings: Settings | None = None
    microcompact_params: MicrocompactParams | None = None
    session_memory_params: SessionMemoryParams | None = None
    # the model of the Claude Code that compacts, where it is not the one the session last announced (a session
    # resumed with --model and compacted before any reply): what it re-announces is worded for that model (2.1.3xx)
    resume_model: str | None = None
    # when the compaction was asked for (a /compact typed, a message picked in the dialog): the background agents
    # Claude Code still held then are the ones it re-announces (None: the time its records are dated)
    asked_at: datetime | None = None
    # the modification times (epoch seconds) of files the session only read, where the caller knows them (the
    # conformance harness dates the files it makes): Claude Code orders such files by them when it picks the files to
    # re-attach, and a transcript does not record them (None: the most recently read first, and the preview says so)
    file_times: Mapping[str, float] | None = None


@dataclass(frozen=True, slots=True)
class Run:
    """One compaction's inputs, resolved: what each strategy in the registry is given."""

    request: CompactRequest
    slice: Slice
    estimator: Estimator
    summarizer: Summarizer
    factory: RecordFactory
    progress: Progress | None
    cancel: Cancel | None
    tail_era: bool  # the session's release compacts keeping a tail (2.1.3xx's engine)


@dataclass(frozen=True, slots=True)
class Strategy:
    name: str
    summarizes: bool  # it asks a summarizer (microcompaction does not)
    run: Callable[[Run], CompactionResult]


def _engine(mode: str) -> Callable[[Run], CompactionResult]:
    def run(r: Run) -> CompactionResult:
        q = r.request
        params = EngineParams(
            mode,
            q.trigger,
            q.instructions,
            q.refused_at,
            q.prompt_tokens,
            resume_model=q.resume_model,
            asked_at=q.asked_at,
            file_times=q.file_times,
        )
        return engine_compact(r.slice, r.estimator, r.summarizer, params, r.factory, r.progress, r.cancel)

    return run


def _partial(r: Run) -> CompactionResult:
    q = r.request
    if q.pivot is None:
        what = "a prompt you typed" if r.tail_era else "a user message"
        cands = pivot_candidates(r.slice.session, series=r.slice.series)
        raise CompactError(f"partial compaction needs a pivot: the uuid of {what} (--at); {pivot_words(r.slice.session, cands)}")
    if r.tail_era:
        params = EngineParams(
            "partial", "manual", q.instructions, None, None, q.pivot, q.direction, q.resume_model, q.asked_at, q.file_times
        )
        return engine_compact(r.slice, r.estimator, r.summarizer, params, r.factory, r.progress, r.cancel)
    return partial_compact(
        r.slice, r.estimator, r.summarizer, PartialParams(q.pivot, q.direction, q.instructions), r.factory, r.progress, r.cancel
    )


def _full(r: Run, trigger: str | None = None) -> CompactionResult:
    params = FullParams(r.request.instructions) if trigger is None else FullParams(r.request.instructions, trigger=trigger)
    return full_compact(r.slice, r.estimator, r.summarizer, params, r.factory, r.progress, r.cancel)


def _session_memory(r: Run) -> CompactionResult:
    smp = r.request.session_memory_params or SessionMemoryParams()
    res = session_memory_compact(r.slice, r.estimator, r.summarizer, smp, r.factory)
    if res.fallback is None:
        return res
    full = _full(r, "auto" if smp.auto else "manual")
    return replace(full, fallback=res.fallback, notes=(f"session-memory compaction not applicable: {res.fallback}",) + full.notes)


def _microcompact(r: Run) -> CompactionResult:
    return microcompact(r.slice, r.estimator, r.request.microcompact_params or MicrocompactParams(), r.factory)


REGISTRY: dict[str, Strategy] = {
    s.name: s
    for s in (
        # what each does, in words, is versions.STRATEGY_WORDS (with the releases that had it)
        Strategy("compact", True, _engine("compact")),
        Strategy("reactive", True, _engine("reactive")),
        Strategy("partial", True, _partial),
        Strategy("full", True, _full),
        Strategy("session-memory", True, _session_memory),
        Strategy("microcompact", False, _microcompact),
    )
}
STRATEGIES = tuple(REGISTRY)


def compact(
    s: Session,
    request: CompactRequest | str | None = None,
    *,
    summarizer: Summarizer | None = None,
    factory: RecordFactory | None = None,
    estimator: Estimator | None = None,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> CompactionResult:
    """Run the request's strategy (default: what the session's own Claude Code does; a bare name is a request with
    only a strategy) and say which release's rules it follows."""
    from inspector.claude.versions import TAIL

    q = request if isinstance(request, CompactRequest) else CompactRequest(request)
    rules = rules_for(s.version)
    name = q.strategy or default_strategy(rules.era)
    strategy = REGISTRY.get(name)
    if strategy is None:
        raise CompactError(f"unknown strategy {name!r} (choose from {', '.join(STRATEGIES)})")
    key = f"partial-{q.direction.replace('_', '-')}" if name == "partial" else name
    settings = q.settings or Settings()
    sl = make_slice(s, q.at, settings)
    if estimator is None:
        estimator = Estimator(s, sl.series, settings)
    if factory is None:  # the new records are dated just after the point they compact, not on the day they are saved
        factory = RecordFactory(s, now=_just_after(s, sl.point))
    run = Run(
        replace(q, strategy=name, settings=settings),
        sl,
        estimator,
        summarizer or OfflineSummarizer(),
        factory,
        progress,
        cancel,
        TAIL in rules.era.strategies,
    )
    ran_as = None
    if q.resume_model:
        from inspector.claude.models import run_as
        from inspector.claude.release import parse_version

        to = run_as(q.resume_model, parse_version(s.version) if s.version else None)
        if to != q.resume_model:
            ran_as = f"Claude Code {s.version} runs {q.resume_model} as {to}: the preview is {to}'s"
            run = replace(run, request=replace(run.request, resume_model=to))
    res = strategy.run(run)
    label = f"{key}: the rules of Claude Code {rules.era.label} (releases {releases_with(key)} had it)"
    wi = what_if(key, rules.era, rules.version)
    return replace(
        res,
        rules=rules.note,
        strategy_label=label,
        what_if=wi,
        notes=((wi,) if wi else ()) + ((ran_as,) if ran_as else ()) + res.notes,
        accounting=account(s, estimator, res),
        caveat=estimate_caveat(estimator),
    )


CALIBRATION_TRUSTED = 10.0  # % of fit error above which the size after is said to be uncertain, where it is shown


def estimate_caveat(est: Estimator) -> str | None:
    """Why the size after a compaction may be far from its estimate: the session's own calibration (the offline count
    against what the API said) fits badly, or rests on too few responses. Said beside the figure, not only in `tokens`."""
    c = est.calibration
    if c.points < 3:
        return (
            f"an estimate from {c.points} response(s) with usage: too few to calibrate the count on this session, so "
            "the real size after may differ widely"
        )
    if c.error_pct > CALIBRATION_TRUSTED:
        return (
            f"an estimate: this session's calibration fits its own {c.points} responses with a {c.error_pct:.1f}% error, "
            "so the real size after may differ by as much"
        )
    return None


def pivot_candidates(s: Session, settings: Settings | None = None, series: Series | None = None) -> list[int]:
    """The records a partial compaction can pivot on, by the rules of the session's release: the prompts you typed
    since the last compaction (what the rewind menu offers), not tool results, replies or meta messages (nor, from
    2.1.83, summaries)."""
    from inspector.claude.versions import TAIL

    try:
        sl = make_slice(s, None, settings or Settings(), series)
    except CompactError:
        return []
    if TAIL in rules_for(s.version).era.strategies:
        from inspector.compact.engine import rewind_candidates

        return rewind_candidates(sl)
    from inspector.compact.summary_compact import is_pivot_candidate

    return [i for i in sl.messages if is_pivot_candidate(sl, i)]


def pivot_words(s: Session, cands: list[int]) -> str:
    """Which records can be pivots, in words: none, or the last few with their line and first words."""
    if not cands:
        return "this session has no prompt you typed after its last compaction, so it has no pivot at all"

    def words(k: int) -> str:
        r = s.records[k]
        if r.is_compact_summary:  # (offered before 2.1.83)
            return "the last compaction's summary"
        return repr(" ".join(str(r.get("prompt") or "").split())[:30])

    listed = ", ".join(f"line {s.records[k].line} ({words(k)})" for k in cands[-5:])
    return f"the pivots here are the prompts you typed since the last compaction: {listed}" + (
        f" and {len(cands) - 5} earlier" if len(cands) > 5 else ""
    )


def resolve_reference(s: Session, ref: str, *, pivot: bool = False, settings: Settings | None = None) -> str:
    """The uuid of the record `ref` names (a uuid, a uuid prefix or a line number, as `show` prints them); for a pivot,
    an error that says why the record cannot be one and which can."""
    try:
        i = s.find_record(ref)
    except LookupError as exc:
        raise CompactError(str(exc)) from None
    r = s.records[i]
    if r.uuid is None:
        raise CompactError(f"line {r.line} is a {r.type} record without a uuid: it cannot be compacted at")
    if not pivot:
        return r.uuid
    cands = pivot_candidates(s, settings)
    if i in cands:
        return r.uuid

    def offer() -> str:
        return "; " + pivot_words(s, cands)

    chain = make_slice(s, None, settings or Settings()).series.chain
    if i not in chain:
        why = "is not on the conversation's chain (an abandoned branch, a sidechain or metadata)"
    else:
        last_boundary = max((k for k in chain if s.records[k].starts_compaction), default=None)
        if last_boundary is not None and chain.index(i) <= chain.index(last_boundary):
            why = (
                f"is before the last compaction (line {s.records[last_boundary].line}): only what came after it can be "
                "summarized from or up to"
            )
        elif r.type == "assistant":
            why = "is a reply of the model, not a prompt you typed"
        elif r.type == "user" and r.tool_results:
            why = "is a tool result, not a prompt you typed"
        elif r.type == "user" and r.is_compact_summary:
            why = "is a compaction summary, not a prompt you typed"
        elif r.type == "user" and r.is_meta:
            why = "is a message Claude Code added (meta), not a prompt you typed"
        elif r.type == "user" and (r.flags & F_INTERRUPT or (r.get("prompt") or "").startswith("[Request")):
            why = "is Claude Code's note of an interruption, not a prompt you typed"
        elif r.type == "user":
            why = "is a command's or the shell's output (or a task notification), which the rewind menu does not offer"
        else:
            why = f"is a {r.type} record, not a prompt you typed"
    raise CompactError(f"line {r.line} ({r.uuid[:8]}) {why}: not a message the rewind menu offers" + offer())


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
    out = {
        "summary": tokens(by["summary"]),
        "new": tokens(by["new"]),
        "kept": tokens(by["kept"]),
        "kept_messages": len(by["kept"]) + len(by["cleared"]),
        "cleared_left": tokens(by["cleared"]),
    }
    if res.cleared_tool_results:
        originals = [
            s.body(s.conversation.by_uuid[v.uuid]) for v in res.view if v.origin == "cleared" and v.uuid in s.conversation.by_uuid
        ]
        out["cleared_before"] = tokens(originals)
    replaced = [
        s.body(i)
        for u in res.summarized_uuids
        if (i := s.conversation.by_uuid.get(u)) is not None and s.records[i].type in ("user", "assistant", "attachment")
    ]
    out["replaced"], out["replaced_messages"] = tokens(replaced), len(replaced)
    out["fixed"] = res.tokens_after - out["summary"] - out["new"] - out["kept"] - out["cleared_left"]
    # the same split of the size before: the records compacted, and the rest (the system prompt and tools, what an
    # earlier compaction re-attached, and whatever the offline count of the records misses)
    originals = [
        s.body(i)
        for v in res.view
        if v.origin in ("kept", "cleared") and v.uuid is not None and (i := s.conversation.by_uuid.get(v.uuid)) is not None
    ]
    out["records_before"] = tokens(replaced + originals)
    out["fixed_before"] = res.tokens_before - out["records_before"]
    return out


def _just_after(s: Session, index: int) -> datetime:
    from datetime import datetime, timedelta

    from inspector.textutil import timestamp_key

    for i in range(index, -1, -1):
        t = timestamp_key(s.records[i].timestamp)
        if t is not None:
            return datetime.fromtimestamp(t, tz=UTC) + timedelta(seconds=1)
    return datetime.now(UTC)


__all__ = [
    "pivot_candidates",
    "pivot_words",
    "resolve_reference",
    "EngineParams",
    "REGISTRY",
    "STRATEGIES",
    "CompactRequest",
    "Strategy",
    "CompactError",
    "CompactionResult",
    "Estimator",
    "KeepConfig",
    "MicrocompactParams",
    "RecordFactory",
    "SessionMemoryParams",
    "Slice",
    "compact",
    "make_slice",
]
