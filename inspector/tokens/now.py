"""Where a session's context stands now, by the rules of the release, model and settings that run it: the number
Claude Code compares with its thresholds (tokenCountWithEstimation at the leaf, §3.3), how far it is from
auto-compaction (or, where the threshold is not enforced, from the API's refusal), and the warning and blocking
state. What `inspector statusline` prints, from the same functions as `tokens`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.textutil import timestamp_key
from inspector.tokens.series import (
    FileFacts,
    context_series,
    count_with_estimation,
    segment_start,
    thresholds_for,
    token_count_with_estimation,
)
from inspector.tokens.thresholds import Settings, Thresholds, percent_left
from inspector.transcript.index import Transcript
from inspector.transcript.records import Record
from inspector.transcript.session import Session, in_force, model_in_force, same_model


@dataclass(frozen=True, slots=True)
class ContextNow:
    tokens: int  # tokenCountWithEstimation at the leaf (0 before the first response)
    thresholds: Thresholds
    level: str  # "ok", "warning", "compact" (at or past an enforced threshold), "blocked"
    left: int | None  # tokens before auto-compaction fires (None: auto-compact off or not enforced)
    refused_at: int | None  # not enforced: where the API refuses the request instead (the model's window)
    percent_left: int  # Claude Code's own "N% until auto-compact" figure

    @property
    def window(self) -> int:
        return self.thresholds.model_window

    def describe(self) -> str:
        """One line, without colour: used, and the distance that matters for this release and model."""
        used = f"{_k(self.tokens)}/{_k(self.window)} ({100 * self.tokens / self.window:.0f}%)"
        t = self.thresholds
        if not t.auto_compact_enabled:
            tail = "auto-compact off"
        elif self.left is not None:
            tail = f"{_k(self.left)} to auto-compact" if self.left > 0 else "past auto-compact"
        else:
            tail = f"not enforced: compacts when the API refuses at ~{_k(self.refused_at or self.window)}"
        state = {"ok": "", "warning": " · warning", "compact": " · compacting", "blocked": " · blocked"}[self.level]
        return f"ctx {used} · {tail}{state}"

    def as_dict(self) -> dict[str, Any]:
        t = self.thresholds
        return {
            "tokens": self.tokens,
            "window": self.window,
            "level": self.level,
            "to_auto_compact": self.left,
            "auto_compact": t.auto_compact,
            "enforced": t.enforced,
            "refused_at": self.refused_at,
            "warning": t.warning,
            "blocking": t.blocking if t.has_blocking_limit else None,
            "percent_left": self.percent_left,
            "rules": t.rules,
        }


def _k(n: int) -> str:
    return f"{n / 1000:.0f}k" if n >= 1000 else str(n)


def context_now(s: Session, settings: Settings | None = None) -> ContextNow:
    """The context at the session's leaf against its thresholds (`settings`: the environment's, by default)."""
    settings = settings if settings is not None else Settings.from_environment()
    return _whole_file(s, FileFacts.of(s.records), settings)


def _whole_file(s: Session, facts: FileFacts, settings: Settings) -> ContextNow:
    """The context at the leaf of a session read whole, against the thresholds its facts give (session_thresholds's,
    or a tail reader's with the running release named from outside)."""
    th = thresholds_for(facts, s.main_model if settings.model is None else None, settings)
    series = context_series(s, settings, th)
    tokens = token_count_with_estimation(s, series, len(series.chain) - 1) if series.chain else 0
    return context_against(tokens, th)


def context_against(tokens: int, th: Thresholds) -> ContextNow:
    """`tokens` of context against a session's thresholds: its level and distances."""
    if th.auto_compact_enabled and not th.enforced:
        level = "ok"  # Claude Code checks nothing before the API's refusal: no warning, no blocking (format-2.1.3xx.md §1.3)
    elif th.blocks_before_sending and tokens >= th.blocking:
        level = "blocked"
    elif th.auto_compact is not None and tokens >= th.auto_compact:
        level = "compact"
    elif tokens >= th.warning:
        level = "warning"
    else:
        level = "ok"
    left = th.auto_compact - tokens if th.auto_compact is not None else None
    refused = th.model_window if th.auto_compact_enabled and th.auto_compact is None else None
    return ContextNow(tokens, th, level, left, refused, percent_left(tokens, th))


# -- a transcript read as it grows ---------------------------------------------------------------
FIRST_TAIL = 256 << 10  # bytes of the file's end read first for its leaf; four times more each time that is short


def line_start(path: Path, offset: int) -> int:
    """The start of the first whole line at or after `offset`."""
    if offset <= 0:
        return 0
    with open(path, "rb") as f:
        f.seek(offset - 1)
        pos = offset - 1
        while True:
            chunk = f.read(1 << 16)
            if not chunk:
                return pos
            k = chunk.find(b"\n")
            if k >= 0:
                return pos + k + 1
            pos += len(chunk)


def tail_context(path: Path, facts: FileFacts, end: int, settings: Settings) -> tuple[ContextNow, int]:
    """The context at the leaf of the transcript's first `end` bytes, whose whole-file facts are `facts`, read from
    the file's end: the smallest tail whose leaf, chain and thresholds are those of the whole file (the leaf is the
    latest main-thread record, the kept messages of the last compaction are in it, and the figure did not depend on
    where the tail's chain starts, see count_with_estimation), else four times more, up to the whole file.
    Returns the figure and the bytes read for it."""
    size = FIRST_TAIL
    while True:
        start = line_start(path, end - size) if end > size else 0
        t = Transcript.resume(path, start)
        t.update(max_bytes=end - start)
        s = Session(t)
        try:
            if start == 0:  # the whole file: as context_now, with the facts given (a release named from outside)
                return _whole_file(s, facts, settings), end
            got = _tail_leaf(s, facts, start, settings)
            if got is not None:
                return got, end - start
        finally:
            s.close()
        size *= 4


def _tail_leaf(s: Session, facts: FileFacts, start: int, settings: Settings) -> ContextNow | None:
    """The context at the leaf of a tail of a file (`start`: its first byte), or None when the tail is too short to
    know it as the whole file would."""
    conv = s.conversation
    if conv.leaf is None:
        return None
    recs = s.records
    leaf = recs[conv.leaf]
    ts = timestamp_key(leaf.timestamp)
    if facts.latest is not None and (ts is None or ts < facts.latest):
        return None  # a record before the tail may be the leaf
    if facts.has_main and leaf.is_sidechain:
        return None
    if facts.boundary_keeps and (facts.boundary is None or start > facts.boundary or conv.relink is None):
        return None  # the last compaction's kept messages are relinked: they must be in the tail
    chain = conv.logical_chain
    boundaries = tuple(pos for pos, i in enumerate(chain) if recs[i].is_compact_boundary)
    pos = len(chain) - 1
    tokens, needs_start = count_with_estimation(s, chain, boundaries, pos)
    seg = segment_start(boundaries, pos)
    first = recs[chain[seg]]
    whole_segment = seg in boundaries or _is_root(first)
    if needs_start and not whole_segment:
        return None
    main_model = None
    if settings.model is None:  # the session's model: the model in force at its leaf (Session.main_model)
        for k in range(len(chain) - 1, -1, -1):
            i = chain[k]
            if model_in_force(recs[i]):
                main_model = in_force(recs[j] for j in reversed(chain[: k + 1]))
                ann = facts.announced  # the announcement naming its [1m] can be before the tail read
                if ann and same_model(ann, main_model):
                    main_model = ann
                break
            if i == chain[seg] and not _is_root(recs[chain[0]]):
                return None  # the chain before this segment is not all in the tail
        if main_model is None:
            if not _is_root(recs[chain[0]]):
                return None
            main_model = facts.last_main_model  # no response on the chain: the file's last
    th = thresholds_for(facts, main_model, settings)
    return context_against(tokens, th)


def _is_root(r: Record) -> bool:
    """A record that starts its file's chain (not a compaction's boundary, which continues an earlier one)."""
    return r.parent is None and r.logical_parent is None and not r.is_compact_boundary
