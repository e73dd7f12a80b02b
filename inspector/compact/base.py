"""What every compaction strategy shares: the slice it works on, the result it returns, the
records Claude Code writes for it (§8.6), and the token estimates before and after.

A strategy is a pure function of (session, point, parameters) that returns one frozen
`CompactionResult`; nothing here writes a file (that is `inspector.edit`).
"""

from __future__ import annotations

import re
import uuid as uuidlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from inspector.claude.release import at_or_after
from inspector.tokens.calibrate import Calibration, calibrate, kept_chain_counts
from inspector.tokens.estimate import count_bodies
from inspector.tokens.series import Series, context_series, session_thresholds, token_count_with_estimation
from inspector.tokens.thresholds import Settings, Thresholds, percent_left, warning_state
from inspector.transcript.discovery import InspectorError
from inspector.transcript.session import Session

CONTINUE_INTRO = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation."
)
SM_PRESERVED = "Recent messages are preserved verbatim."
CONTINUATION_DIRECTIVE = (
    "Please continue the conversation from where we left it off without asking the user any further questions. "
    "Continue with the last task that you were asked to work on."
)


class CompactError(InspectorError):
    """A request the strategy cannot carry out (unknown point, nothing to summarize, ...)."""


# ---------------------------------------------------------------------------------------------
# the slice


@dataclass(frozen=True, slots=True)
class Slice:
    """The messages a compaction sees: the active chain from the last boundary to the point."""

    session: Session
    chain: tuple[int, ...]  # record indexes, starting at the last compact boundary (if any)
    history: tuple[int, ...]  # the whole logical chain up to the point (what a saved file keeps)
    point: int  # record index of the chosen point (the last record of `chain`)
    series: Series

    @property
    def records(self) -> list[Any]:
        return [self.session.records[i] for i in self.chain]

    def body(self, i: int) -> dict[str, Any]:
        return self.session.body(i)

    def uuid(self, i: int) -> str:
        u = self.session.records[i].uuid
        assert u is not None
        return u

    @property
    def boundary(self) -> int | None:
        first = self.chain[0] if self.chain else None
        return first if first is not None and self.session.records[first].is_compact_boundary else None

    @property
    def messages(self) -> list[int]:
        """The slice without its leading boundary."""
        return [i for i in self.chain if not self.session.records[i].is_compact_boundary]


def make_slice(s: Session, at: str | None = None, settings: Settings | None = None, series: Series | None = None) -> Slice:
    """The post-boundary slice ending at record `at` (a uuid on the logical chain; default: the leaf)."""
    series = series or context_series(s, settings or Settings())
    chain = list(series.chain)
    if not chain:
        raise CompactError(f"{s.path} has no conversation to compact")
    if at is None:
        # the leaf, or the record before a last reply cut off after its thinking: a resumed process, which would run
        # the compaction, does not have it (Conversation.left_out_on_resume)
        cut = s.conversation.left_out_on_resume(s.version)
        end = len(chain) - 1 - (len(cut) if chain[len(chain) - len(cut) :] == cut else 0)
        if end < 0:
            raise CompactError(f"{s.path} has no conversation to compact (its only reply was cut off while thinking)")
    else:
        i = s.conversation.by_uuid.get(at)
        if i is None:
            raise CompactError(f"no record {at} in {s.path}")
        if i not in chain:
            raise CompactError(f"record {at} is not on the conversation's chain (it is on an abandoned branch or a sidechain)")
        end = chain.index(i)
    start = 0
    for p in range(end, -1, -1):
        if s.records[chain[p]].starts_compaction:
            start = p
            break
    return Slice(s, tuple(chain[start : end + 1]), tuple(chain[: end + 1]), chain[end], series)


# ---------------------------------------------------------------------------------------------
# estimates


class Estimator:
    """Token numbers for a session: the API's where they exist, calibrated estimates elsewhere."""

    def __init__(self, s: Session, series: Series, settings: Settings | None = None) -> None:
        self.session = s
        self.series = series
        self.settings = settings or Settings()
        self.thresholds: Thresholds = session_thresholds(s, self.settings)
        self.counts = kept_chain_counts(s, series)
        self.calibration: Calibration = calibrate(s, series, self.counts)

    def before(self, sl: Slice) -> int:
        """tokenCountWithEstimation at the point: last API usage plus the rough estimate after it."""
        pos = list(self.series.chain).index(sl.point)
        return token_count_with_estimation(self.session, self.series, pos)

    def counted(self, bodies: Sequence[Mapping[str, Any]], cleared: frozenset[str] = frozenset()) -> int:
        """Offline-tokenizer count of what these records put in a request."""
        return count_bodies(bodies, cleared=cleared, replacements=self.session.transcript.replacements)

    def after(self, bodies: Sequence[Mapping[str, Any]], cleared: frozenset[str] = frozenset()) -> int:
        """The context right after: fixed overhead + ratio × what the messages count."""
        return self.calibration.predict(self.counted(bodies, cleared))

    def state(self, tokens: int) -> dict[str, Any]:
        return {
            "tokens": tokens,
            "state": warning_state(tokens, self.thresholds),
            "percent_left": percent_left(tokens, self.thresholds),
        }


# ---------------------------------------------------------------------------------------------
# the result


@dataclass(frozen=True, slots=True)
class ViewMessage:
    """One record of what the model would see after the compaction."""

    uuid: str | None
    role: str  # user, assistant, attachment
    body: Mapping[str, Any]
    origin: str  # "kept", "summary", "boundary", "new", "cleared"


@dataclass(frozen=True, slots=True)
class CompactionResult:
    strategy: str  # microcompact, session-memory, partial, full
    direction: str | None  # partial: "from" or "up_to"
    point_uuid: str | None
    pivot_uuid: str | None
    view: tuple[ViewMessage, ...]
    new_records: tuple[Mapping[str, Any], ...]  # appended when saving, in order
    rewritten: Mapping[str, Mapping[str, Any]]  # uuid -> replacement body (cleared tool results)
    cleared_tool_results: tuple[str, ...]
    cleared_tokens: Mapping[str, int]  # tool_use id -> rough tokens saved (§6.1)
    summarized_uuids: tuple[str, ...]
    kept_uuids: tuple[str, ...]
    summary: str | None
    tokens_before: int
    tokens_after: int
    restored_files_tokens: int  # what a live full compaction would also re-attach (§8.5)
    thresholds: Thresholds
    fallback: str | None = None  # why the requested strategy was replaced (session-memory -> full)
    noop: str | None = None  # why nothing would change (gap under the threshold, nothing to clear or summarize)
    notes: tuple[str, ...] = ()
    summarizer: str | None = None
    summarizer_usage: Mapping[str, Any] | None = None
    session_memory: str | None = None  # the notes used (session-memory strategy)
    session_memory_file: Path | None = None  # the session's own summary.md they came from (copied byte for byte on save)
    slice_records: int = 0
    parameters: Mapping[str, Any] = field(default_factory=dict)
    api_messages: tuple[Mapping[str, Any], ...] | None = None  # 2.1.3xx: the messages of the first request after a resume
    # False where the release adds to them what no record holds (before 2.1.268: its user context, and the text of the
    # attachments it renders as it sends them); the notes say what
    api_messages_exact: bool = True
    rules: str | None = None  # which release's rules were applied, and why
    strategy_label: str | None = None  # the strategy and the releases that had it
    what_if: str | None = None  # set when the session's own release did not do this
    accounting: Mapping[str, int] | None = None  # what the size after is made of, and what it replaces (see account())
    caveat: str | None = None  # why the size after may be far from the estimate (a calibration that fits badly)

    @property
    def changed(self) -> bool:
        return bool(self.new_records or self.rewritten)

    @property
    def change_words(self) -> str:
        """How the context's size changes, never calling growth a saving."""
        d = self.tokens_after - self.tokens_before
        dropped = self.records_dropped
        if d > 0 and dropped is not None and dropped > 0:
            # the records shrink, the total grows: the size before is Claude Code's own estimate, whose rough count
            # (characters / 4) of what came after the last response is below the calibrated count the size after uses
            return (
                f"+{d:,} tokens against Claude Code's own estimate before, not a saving by that measure; counted alike, "
                f"the records are {dropped:,} fewer (the two sizes are counted differently: see what they are made of)"
            )
        if d > 0 and dropped is not None and d + dropped > max(1000, d // 10):
            return (
                f"+{d:,} tokens: larger than before, not a saving (what replaces the records is {-dropped:,} longer "
                f"than what it replaces; the other {d + dropped:,} are the two sizes counted differently: see what they "
                "are made of)"
            )
        if d > 0:
            return f"+{d:,} tokens: larger than before, not a saving (the summary is longer than what it replaces)"
        if d < 0:
            return f"{-d:,} tokens fewer"
        return "no change in size"

    @property
    def records_dropped(self) -> int | None:
        """How many calibrated tokens fewer the records are after than before (what was compacted less what replaces
        it), from the accounting; None without one."""
        a = self.accounting
        if not a or "records_before" not in a:
            return None
        return a["records_before"] - (a.get("summary", 0) + a.get("new", 0) + a.get("kept", 0) + a.get("cleared_left", 0))

    def as_dict(self) -> dict[str, Any]:
        th = self.thresholds
        return {
            "strategy": self.strategy,
            "direction": self.direction,
            "point_uuid": self.point_uuid,
            "pivot_uuid": self.pivot_uuid,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "tokens_change": self.tokens_after - self.tokens_before,
            "larger_after": self.tokens_after > self.tokens_before,
            "records_dropped": self.records_dropped,
            "state_before": warning_state(self.tokens_before, th),
            "state_after": warning_state(self.tokens_after, th),
            "percent_left_before": percent_left(self.tokens_before, th),
            "percent_left_after": percent_left(self.tokens_after, th),
            "thresholds": th.as_dict(),
            "restored_files_tokens": self.restored_files_tokens,
            "cleared_tool_results": list(self.cleared_tool_results),
            "cleared_tokens": dict(self.cleared_tokens),
            "summarized_uuids": list(self.summarized_uuids),
            "kept_uuids": list(self.kept_uuids),
            "summary": self.summary,
            "fallback": self.fallback,
            "noop": self.noop,
            "notes": list(self.notes),
            "summarizer": self.summarizer,
            "summarizer_usage": dict(self.summarizer_usage) if self.summarizer_usage else None,
            "records_written": [
                {"type": r.get("type"), "subtype": r.get("subtype"), "uuid": r.get("uuid")} for r in self.new_records
            ],
            "parameters": dict(self.parameters),
            "api_messages": [dict(m) for m in self.api_messages] if self.api_messages is not None else None,
            "api_messages_exact": self.api_messages is not None and self.api_messages_exact,
            "rules": self.rules,
            "strategy_label": self.strategy_label,
            "what_if": self.what_if,
            "caveat": self.caveat,
            "accounting": dict(self.accounting) if self.accounting else None,
        }

    @property
    def counts_words(self) -> str:
        """How many messages it summarized and kept, as the accounting counts them (the messages sent: user,
        assistant, attachment), with the other records (bookkeeping) named apart, so every figure of the preview
        is the same number."""
        a = self.accounting
        summarized = a["replaced_messages"] if a else len(self.summarized_uuids)
        kept = a["kept_messages"] if a else len(self.kept_uuids)
        words = f"Summarized {summarized:,} message(s), kept {kept:,}"
        other = len(self.summarized_uuids) - summarized + max(0, len(self.kept_uuids) - kept)
        if a and other > 0:
            words += f" ({other:,} bookkeeping record(s) beside them, which are not sent)"
        return words

    @property
    def accounting_words(self) -> str | None:
        """The size after as a sum of its parts, and what it replaces: why the context drops by what it drops."""
        a = self.accounting
        if not a:
            return None
        parts = [f"{a['fixed']:,} system prompt, tools and the rest"]
        if a.get("summary"):
            parts.append(f"{a['summary']:,} summary")
        if a.get("new"):
            parts.append(f"{a['new']:,} re-attached files and notes")
        if a["kept_messages"]:
            parts.append(f"{a['kept']:,} kept ({a['kept_messages']:,} messages)")
        if self.cleared_tool_results:
            parts.append(f"{a['cleared_left']:,} left of the cleared results")
        words = (
            f"{self.tokens_before:,} before = {a['fixed_before']:,} system prompt, tools and the rest + "
            f"{a['records_before']:,} in the records compacted; "
        )
        words += f"{self.tokens_after:,} after = " + " + ".join(parts)
        if a.get("replaced_messages"):
            words += f"; the {a['replaced_messages']:,} summarized messages it replaces counted {a['replaced']:,}"
        if self.cleared_tool_results:
            words += (
                f"; the {len(self.cleared_tool_results)} cleared results counted {a['cleared_before']:,} before "
                f"(Claude Code's own rough figure, characters / 4, is {sum(self.cleared_tokens.values()):,})"
            )
        words += " (calibrated tokens)"
        if a["fixed_before"] - a["fixed"] > max(1000, a["fixed"] // 10):
            words += (
                f". The rest is {a['fixed_before'] - a['fixed']:,} smaller after: before, it held what an earlier "
                "compaction re-attached and whatever the offline count of the records misses (measured by the API), "
                "which the estimate after does not carry over"
            )
        elif a["fixed"] - a["fixed_before"] > max(1000, a["fixed_before"] // 10):
            words += (
                f". The rest is {a['fixed'] - a['fixed_before']:,} larger after: the size before is Claude Code's own "
                "estimate (the last response's usage plus a rough count, characters / 4, of what came after it), the "
                "size after the calibrated one (the session's fixed overhead, read at its first response, plus its "
                "ratio × the offline count), and here they count the same records differently"
            )
        return words


# ---------------------------------------------------------------------------------------------
# records as Claude Code writes them (§2.2, §8.6)


@dataclass(slots=True)
class RecordFactory:
    """Makes new records with the session's envelope; ids and clock injectable for tests."""

    session: Session
    new_id: Callable[[], str] = field(default_factory=lambda: lambda: str(uuidlib.uuid4()))
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    _tick: int = 0

    def envelope(self, template: Mapping[str, Any] | None) -> dict[str, Any]:
        keep = ("userType", "cwd", "sessionId", "version", "gitBranch", "entrypoint", "slug")
        env: dict[str, Any] = {"isSidechain": False}
        if template:
            env.update({k: template[k] for k in keep if k in template})
        env.setdefault("userType", "external")
        env.setdefault("sessionId", self.session.session_id)
        return env

    def timestamp(self) -> str:
        t = self.now + timedelta(milliseconds=10 * self._tick)
        self._tick += 1
        return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def boundary(
        self,
        template: Mapping[str, Any] | None,
        *,
        trigger: str,
        pre_tokens: int,
        logical_parent: str | None,
        extra_meta: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        meta: dict[str, Any] = {"trigger": trigger, "preTokens": pre_tokens}
        meta.update(extra_meta or {})
        rec = {
            "parentUuid": None,
            "logicalParentUuid": logical_parent,
            **self.envelope(template),
            "type": "system",
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "isMeta": False,
            "timestamp": self.timestamp(),
            "uuid": self.new_id(),
            "level": "info",
            "compactMetadata": meta,
        }
        return rec

    def user(self, template: Mapping[str, Any] | None, parent: str | None, content: Any, **extra: Any) -> dict[str, Any]:
        return {
            "parentUuid": parent,
            **self.envelope(template),
            "type": "user",
            "message": {"role": "user", "content": content},
            **extra,
            "uuid": self.new_id(),
            "timestamp": self.timestamp(),
        }

    def system(self, template: Mapping[str, Any] | None, parent: str | None, subtype: str, **extra: Any) -> dict[str, Any]:
        return {
            "parentUuid": parent,
            **self.envelope(template),
            "type": "system",
            "subtype": subtype,
            "isMeta": False,
            **extra,
            "uuid": self.new_id(),
            "timestamp": self.timestamp(),
        }


_ANALYSIS = re.compile(r"<analysis>.*?</analysis>", re.S)
_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.S)


# The caveat before a /compact's own messages, as each release writes it: 2.1.285 and later (bisected with generated
# seed 147100 over 2.1.200-2.1.328: 2.1.284 writes the older text, as 2.1.88 and 2.1.152 do)
CAVEAT = (
    "<local-command-caveat>The command below was run directly in Claude Code, not sent to you as a request, and its output "
    "goes straight to the user. It's recorded here as context for later messages.</local-command-caveat>"
)
CAVEAT_BEFORE_2_1_285 = (
    "<local-command-caveat>Caveat: The messages below were generated by the user while running local commands. DO NOT "
    "respond to these messages or otherwise consider them in your response unless the user explicitly asks you to."
    "</local-command-caveat>"
)
CAVEAT_CHANGED_IN = (2, 1, 285)


def command_caveat(version: str | None) -> str:
    """The caveat a release writes before a local command's messages (a session naming no release: today's)."""
    return CAVEAT if at_or_after(version, CAVEAT_CHANGED_IN) else CAVEAT_BEFORE_2_1_285


def format_compact_summary(raw: str, version: str | None = None) -> str:
    """formatCompactSummary (§8.4): drop the analysis, unwrap the summary, collapse blank runs; by the rule of the
    release `version` (None: the 2.1.88 reference). Whether an <analysis> block that follows the <summary> is dropped
    is a rule that changed twice (the era matrix's bisections: kept by the oldest releases and from 2.1.331, dropped
    between)."""
    from inspector.claude.measured import answer_at

    m = _ANALYSIS.search(raw)
    if m and not (answer_at("analysis", version) and "<summary>" in raw[: m.start()]):
        text = raw[: m.start()] + raw[m.end() :]
    else:
        text = raw
    m = _SUMMARY.search(text)
    if m:
        text = text[: m.start()] + "Summary:\n" + m.group(1).strip() + text[m.end() :]
    text = re.sub(r"\n{2,}", "\n\n", text)
    return text.strip()


def wrap_summary(formatted: str, *, transcript_path: str | None, preserved: bool, directive: bool) -> str:
    """getCompactUserSummaryMessage (§8.4, §7.7)."""
    out = CONTINUE_INTRO + "\n\n" + formatted
    if transcript_path:
        out += (
            "\n\nIf you need specific details from before compaction (like exact code snippets, error messages, or content "
            f"you generated), read the full transcript at: {transcript_path}"
        )
    if preserved:
        out += "\n\n" + SM_PRESERVED
    if directive:
        out += "\n" + CONTINUATION_DIRECTIVE
    return out
