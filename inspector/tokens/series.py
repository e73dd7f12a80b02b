"""The context series (§3): the context size at every API response of a thread.

One point per API response on the thread's logical chain (streamed fragments merged, synthetic
records ignored, a response seen twice counted once), valued with Claude Code's measure
(input + cache creation + cache read + output), classified against the thresholds. The series
restarts at each compact boundary (`segment`). Kept messages relinked after a compaction carry
stale usage that Claude Code zeroes on load; they are not points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from inspector.textutil import timestamp_key
from inspector.tokens.estimate import record_estimator
from inspector.tokens.thresholds import Settings, Thresholds, percent_left, thresholds, warning_state
from inspector.transcript.records import (
    F_COMPACT_SUMMARY,
    F_SIDECHAIN,
    F_SYNTHETIC,
    F_TOO_LONG,
    Record,
    context_tokens,
    opt_count,
)
from inspector.transcript.session import Session, same_model
from inspector.transcript.tree import is_sent

SM_MARKER = "Recent messages are preserved verbatim."
FULL_COMPACTIONS = ("auto", "manual")  # the kinds that re-attach recently read files (§8.5)


@dataclass(frozen=True, slots=True)
class Turn:
    """One API response of the thread."""

    index: int  # record index of the response's last fragment on the chain
    first: int  # record index of its first fragment
    pos: int  # position of the first fragment in the logical chain
    uuid: str | None
    timestamp: str | None
    tokens: int  # §3.2: the full context at that call
    input_side: int  # input + cache creation + cache read
    output: int
    segment: int  # number of compact boundaries before it
    state: str
    percent_left: int


@dataclass(frozen=True, slots=True)
class Series:
    turns: tuple[Turn, ...]
    chain: tuple[int, ...]  # the logical chain the series follows (record indexes)
    boundaries: tuple[int, ...]  # chain positions of compact boundaries
    microcompacts: tuple[int, ...]  # chain positions of microcompact boundaries
    thresholds: Thresholds
    sidechain: bool

    def as_points(self) -> list[dict[str, Any]]:
        names = LEVELS_2_1_159 if self.thresholds.era in ("2.1.159", "2.1.328") else {}
        return [
            {
                "uuid": t.uuid,
                "timestamp": t.timestamp,
                "context_tokens": t.tokens,
                "percent_left": t.percent_left,
                "state": t.state,
                "level": names.get(t.state, t.state),  # Claude Code's own name for it, in the session's release
                "segment": t.segment,
            }
            for t in self.turns
        ]


# What one turn adds to a context at most, for a prompt found too long after a response (its own count is not
# recorded): half a 1M window. A tool's result is capped far below (a Read at 25,000 tokens, a longer output persisted
# to a file), so only a prompt pasted whole could add more.
TURN_MOST = 500_000

# From 2.1.159 Claude Code's levels are ok / warn / compact / blocked (format-2.1.3xx.md §1.3)
LEVELS_2_1_159 = {"ok": "ok", "warning": "warn", "auto_compact": "compact", "blocking": "blocked"}


def thread_is_sidechain(s: Session) -> bool:
    """A subagent transcript: every chain record is a sidechain record."""
    seen = False
    for r in s.records:
        if r.uuid is not None:
            if not r.flags & F_SIDECHAIN:
                return False
            seen = True
    return seen


@dataclass(slots=True)
class FileFacts:
    """What the thresholds and the leaf rule need from the whole file, kept record by record so that a transcript
    read as it grows (`inspector statusline`, tokens/now.py) is worked out as a whole one is: the peak usage (of any
    real response, and by model: a [1m] window is inferred from the model's own usage), the last model, the last
    main-thread model (a session's model when its chain has no response), the release of the last record that names
    one, the latest timestamp of a main-thread record that is sent (the leaf rule, §2.7), and the last compact
    boundary (where it is, and whether it keeps messages: a relink, §8.6)."""

    peak: int | None = None
    peaks: dict[str, int] = field(default_factory=dict)
    last_model: str | None = None
    last_main_model: str | None = None
    announced: str | None = None  # the last model a 2.1.3xx `model` attachment named (with its [1m])
    version: str | None = None
    latest: float | None = None  # timestamp_key of the latest main-thread sent record
    has_main: bool = False  # a main-thread chain record (a subagent's file has none)
    boundary: int | None = None  # byte offset of the last compact boundary
    boundary_keeps: bool = False  # it names kept messages (preservedSegment / preservedMessages)
    # the smallest count at which the session met a limit of its window, and how, overall and by the model in force
    # (see limit_met): a 1M window inferred from usage is refuted by one far below that window's (thresholds(limit=))
    limit: tuple[int, str] | None = None
    limits: dict[str, tuple[int, str]] = field(default_factory=dict)
    last_context: int | None = None  # the context of the last main-thread response
    # an automatic compaction's limit, until the reply it was made for names its model (see add): [count, how, stamp]
    pending: list[Any] | None = None

    @classmethod
    def of(cls, records: list[Record]) -> FileFacts:
        """The facts the thresholds need (add); the leaf's (add_leaf) only where a file is read from its tail."""
        f = cls()
        for r in records:
            f.add(r)
        return f

    def add(self, r: Record) -> None:
        """The thresholds' facts of one more record: peaks, models, release (this runs on every record of a session
        each time its thresholds are worked out)."""
        u = r.usage
        if u is not None and not r.flags & F_SYNTHETIC:  # r.has_real_usage, inlined: this runs on every record
            tok = u[0] + u[1] + u[2] + u[3]  # context_tokens(u)
            if self.pending is not None and r.model and not r.flags & F_SIDECHAIN and (r.timestamp or "") >= self.pending[2]:
                self._limit_of(r.model, self.pending[0], self.pending[1])  # the model it was made for
                self.pending = None
            if not r.flags & F_SIDECHAIN:
                self.last_context = tok
            if self.peak is None or tok > self.peak:
                self.peak = tok
            if r.model:
                self.last_model = r.model
                if tok > self.peaks.get(r.model, -1):
                    self.peaks[r.model] = tok
                if r.type == "assistant" and not r.flags & F_SIDECHAIN:
                    ann = self.announced  # the API's model name drops the [1m] the announcement keeps
                    self.last_main_model = ann if ann and same_model(ann, r.model) else r.model
        elif r.extra and r.type == "attachment":
            got = r.extra.get("announced_model")  # a process's model, announced before any reply of it (2.1.3xx)
            if isinstance(got, str) and got:
                self.last_main_model = self.announced = got
        elif r.type == "system" and r.subtype == "compact_boundary":
            meta = r.get("compact") or {}
            pre = opt_count(meta.get("preTokens")) if meta.get("trigger") == "auto" else None
            if pre:
                self.limit_met(pre, f"compacted on its own at {pre:,}", r.timestamp if self.announced is None else None)
        elif r.flags & F_TOO_LONG and not r.flags & F_SIDECHAIN and self.last_context is not None:
            c = self.last_context
            self.limit_met(c + TURN_MOST, f"said the prompt was too long after a response of {c:,}")
        if r.version:
            self.version = r.version

    def limit_met(self, count: int, how: str, made_at: str | None = None) -> None:
        """The session met a limit of its window with at most `count` tokens: Claude Code compacted on its own (its
        preTokens), or a prompt was too long (the API refused it, or Claude Code would not send it: no count of it is
        recorded, so the response before it plus the most one turn adds). The limit is the model's in force: the last
        reply's; for an automatic compaction stamped `made_at` in a session that does not announce its models, the
        model of the first reply after it (the request it was made for: a process resumed with another --model
        compacts at that model's threshold at once; 2.1.100 seed 180005 read claude-sonnet-4-0[1m]'s window as 200,000
        because claude-opus-4-7 compacted at 492,002 after it). One the file ends before is the last reply's."""
        if self.limit is None or count < self.limit[0]:
            self.limit = (count, how)
        if made_at is not None:
            if self.pending is not None and self.last_model:
                self._limit_of(self.last_model, self.pending[0], self.pending[1])  # (none replied since the last one)
            self.pending = [count, how, made_at]
        elif self.last_model:
            self._limit_of(self.last_model, count, how)

    def _limit_of(self, m: str, count: int, how: str) -> None:
        if m not in self.limits or count < self.limits[m][0]:
            self.limits[m] = (count, how)

    def settled(self) -> FileFacts:
        """The facts with a compaction the file ends after (no reply since) counted for the last reply's model."""
        if self.pending is not None and self.last_model:
            out = replace(self, limits=dict(self.limits), pending=None)
            out._limit_of(self.last_model, self.pending[0], self.pending[1])
            return out
        return self

    def add_leaf(self, r: Record) -> None:
        """The leaf rule's facts of one more record: the latest main-thread sent record, the last compact boundary
        (what tokens.now.tail_context checks a tail against)."""
        if r.uuid is not None and not r.flags & F_SIDECHAIN and r.type != "progress":
            self.has_main = True
            if is_sent(r):
                ts = timestamp_key(r.timestamp)
                if ts is not None and (self.latest is None or ts > self.latest):
                    self.latest = ts
        if r.type == "system" and r.subtype == "compact_boundary":
            self.boundary = r.offset
            meta = r.get("compact") or {}
            self.boundary_keeps = isinstance(meta.get("preservedSegment"), dict) or isinstance(
                meta.get("preservedMessages"), dict
            )

    def as_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> FileFacts:
        f = cls()
        for k in cls.__slots__:
            if k in d:
                setattr(f, k, d[k])
        return f


def for_model(settings: Settings, model: str | None, announces: bool) -> Settings:
    """The settings for `model` in a session that does or does not announce its models: one that does (2.1.3xx)
    records a [1m] setting in the model's name, so a 1M window is not inferred from usage there (a larger usage than
    the window is the API's, or a fake's) unless the user said otherwise."""
    settings = settings.with_(model=model)
    if announces and settings.one_m is None and model:
        settings = settings.with_(one_m="[1m]" in model.lower())
    return settings


def thresholds_for(facts: FileFacts, main_model: str | None, settings: Settings) -> Thresholds:
    """Thresholds for a session with these facts: its model unless the user chose one; window inferred from usage."""
    if settings.model is None:
        model = main_model or facts.last_model
        if model:
            settings = for_model(settings, model, bool(facts.announced))
    peak = facts.peaks[settings.model] if settings.model in facts.peaks else facts.peak
    return thresholds(settings, peak_usage=peak, version=facts.version, limit=limit_for(facts, settings.model))


def limit_for(facts: FileFacts, model: str | None) -> tuple[int, str] | None:
    """The smallest count at which the session met a limit of its window while `model` was in force, and how (any
    model's, for a model the session has no response of, as the peak is)."""
    facts = facts.settled()
    got = facts.limits.get(model) if model in facts.peaks else facts.limit
    return (got[0], got[1]) if got else None  # (a list, read back from JSON)


def session_facts(s: Session) -> FileFacts:
    """The thresholds' facts of the session's records, remembered on it until it reads more (each working out of its
    thresholds walked every record again: the app's screen and its report each did, 0.05 s of a 200 MB session)."""
    records = s.records  # read on to more records by appending to this list
    hit = s.__dict__.get("_facts_memo")
    if hit is not None and hit[0] is records and hit[1] == len(records):
        return hit[2]
    facts = FileFacts.of(records)
    s.__dict__["_facts_memo"] = (records, len(records), facts)
    return facts


def session_thresholds(s: Session, settings: Settings) -> Thresholds:
    """Thresholds for this session: its model unless the user chose one; window inferred from usage."""
    facts = session_facts(s)
    return thresholds_for(facts, s.main_model if settings.model is None else None, settings)


def context_series(s: Session, settings: Settings | None = None, th: Thresholds | None = None) -> Series:
    """The context size at every API response of the thread's logical chain (§3).

    Remembered on the session for its current conversation: the workbench asks for it on every
    preview, and on a 200 MB session it costs a few tenths of a second each time."""
    settings = settings or Settings()
    conv = s.conversation
    memo: dict[tuple[Settings, Thresholds | None], tuple[Any, Series]] = s.__dict__.setdefault("_series_memo", {})
    hit = memo.get((settings, th))
    if hit is not None and hit[0] is conv:
        return hit[1]
    series = _context_series(s, settings, th or session_thresholds(s, settings))
    memo[(settings, th)] = (conv, series)
    return series


def _context_series(s: Session, settings: Settings, th: Thresholds) -> Series:
    side = thread_is_sidechain(s)
    conv = s.conversation
    chain = conv.logical_chain
    recs = s.records
    kept_at = conv.kept_at
    stale = kept_at.keys()
    groups: dict[str, list[int]] = {}
    order: list[tuple[str, int]] = []
    boundaries, micro = [], []
    seg_at: list[int] = []
    seg = 0
    kept_seg: dict[int, int] = {}  # a kept response (its last record) -> the segment its compaction closed
    # The responses a compaction kept verbatim sit after its summary on the chain, but they were answered before
    # it: they are points of the segment the compaction closed (Claude Code zeroes their usage only for what
    # follows). A response kept by back-to-back compactions belongs to the first one's segment.
    kept_groups: dict[int, list[tuple[str, list[int]]]] = {}
    if kept_at:
        for i in chain:
            r = recs[i]
            b = kept_at.get(r.uuid)  # type: ignore[arg-type]
            if b is not None and r.type == "assistant" and r.usage is not None and not r.flags & F_SYNTHETIC:
                key = r.message_id or f"#{i}"
                mine = kept_groups.setdefault(b, [])
                if mine and mine[-1][0] == key:
                    mine[-1][1].append(i)
                else:
                    mine.append((key, [i]))
    for pos, i in enumerate(chain):
        r = recs[i]
        rt = r.type
        if rt == "system":
            if r.subtype == "compact_boundary":
                if i in kept_groups:
                    for key, idx in kept_groups[i]:  # just before the boundary, in the segment it closes
                        key = f"kept:{key}"
                        groups[key] = idx
                        order.append((key, max(0, pos - 1)))
                        kept_seg[idx[-1]] = seg
                seg += 1
                boundaries.append(pos)
            elif r.subtype == "microcompact_boundary":
                micro.append(pos)
        elif rt == "user" and r.flags & F_COMPACT_SUMMARY and r.is_unmarked_compaction:
            seg += 1  # (up to 1.0.108 a compaction's summary is its only record: its own boundary)
            boundaries.append(pos)
        seg_at.append(seg)
        # r.has_real_usage and r.is_sidechain, inlined: this runs on every chain record
        if (
            rt != "assistant"
            or r.usage is None
            or r.flags & F_SYNTHETIC
            or bool(r.flags & F_SIDECHAIN) != side
            or r.uuid in stale
        ):
            continue
        key = r.message_id or f"#{i}"
        if key not in groups:
            groups[key] = []
            order.append((key, pos))
        groups[key].append(i)
    turns = []
    for key, pos in order:
        idx = groups[key]
        last = recs[idx[-1]]
        u = last.usage
        assert u is not None
        out = u[3] if len(idx) == 1 else max(recs[j].usage[3] for j in idx)  # type: ignore[index]
        inp = u[0] + u[1] + u[2]
        tok = inp + out
        turns.append(
            Turn(
                index=idx[-1],
                first=idx[0],
                pos=pos,
                uuid=last.uuid,
                timestamp=last.timestamp,
                tokens=tok,
                input_side=inp,
                output=out,
                segment=kept_seg[idx[-1]] if key.startswith("kept:") else seg_at[pos],
                state=warning_state(tok, th),
                percent_left=percent_left(tok, th),
            )
        )
    return Series(tuple(turns), tuple(chain), tuple(boundaries), tuple(micro), th, side)


def segment_start(chain_boundaries: tuple[int, ...], pos: int) -> int:
    """Chain position where the slice containing `pos` starts (the last boundary at or before it)."""
    start = 0
    for b in chain_boundaries:
        if b <= pos:
            start = b
    return start


def token_count_with_estimation(s: Session, series: Series, pos: int) -> int:
    """tokenCountWithEstimation (§3.3) of the post-boundary slice ending at chain position `pos`."""
    return count_with_estimation(s, series.chain, series.boundaries, pos)[0]


def count_with_estimation(s: Session, chain: Sequence[int], boundaries: Sequence[int], pos: int) -> tuple[int, bool]:
    """tokenCountWithEstimation (§3.3) at chain position `pos`, and whether the figure depended on where the chain's
    segment starts (no response with usage after it, or the response's fragments reach back to it): a chain read
    from the middle of a file gives the whole file's figure when it did not (tokens/now.py)."""
    start = segment_start(tuple(boundaries), pos)
    recs = s.records
    rough_record = record_estimator(s.version)  # the rules of the release that wrote it
    stale = s.conversation.kept_at.keys()
    sl = list(chain[start : pos + 1])
    found = None
    for k in range(len(sl) - 1, -1, -1):
        r = recs[sl[k]]
        if r.type == "assistant" and r.has_real_usage and r.uuid not in stale:
            found = k
            break
    if found is None:
        return sum(rough_record(s.body(i)) for i in sl), True
    u = recs[sl[found]].usage
    assert u is not None
    anchor = found
    mid = recs[sl[found]].message_id
    reached_start = False
    if mid is not None:
        k = found - 1
        while k >= 0:
            r = recs[sl[k]]
            if r.type == "assistant" and r.message_id is not None:
                if r.message_id != mid:
                    break
                anchor = k
            k -= 1
        else:
            reached_start = True
    return context_tokens(u) + sum(rough_record(s.body(i)) for i in sl[anchor + 1 :]), reached_start


def compaction_kind(s: Session, index: int) -> str:
    """auto, manual, partial, session-memory or microcompact, as far as the records tell (§9.4)."""
    r = s.records[index]
    if r.is_microcompact_boundary:
        return "microcompact"
    meta = r.get("compact") or {}
    summary = summary_index(s, index)
    if "messagesSummarized" in meta or (summary is not None and s.records[summary].get("summarize")):
        return "partial"
    has_segment = isinstance(meta.get("preservedSegment"), dict) or isinstance(meta.get("preservedMessages"), dict)
    if has_segment and summary is not None and SM_MARKER in s.record_text(summary):
        return "session-memory"
    if r.is_unmarked_compaction:
        return s.unmarked_trigger(index)
    return "manual" if meta.get("trigger") == "manual" else "auto"


def summary_index(s: Session, boundary: int) -> int | None:
    """The compact summary written right after a boundary (file order); a summary that is its own boundary (up to
    1.0.108) itself."""
    if s.records[boundary].is_unmarked_compaction:
        return boundary
    for j in range(boundary + 1, min(boundary + 40, len(s.records))):
        r = s.records[j]
        if r.is_compact_summary:
            return j
        if r.is_compact_boundary:
            break
    return None
