"""Where a session's context stands now, by the rules of the release, model and settings that run it: the number
Claude Code compares with its thresholds (tokenCountWithEstimation at the leaf, §3.3), how far it is from
auto-compaction (or, where the threshold is not enforced, from the API's refusal), and the warning and blocking
state. What `inspector statusline` prints, from the same functions as `tokens`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspector.tokens.series import context_series, session_thresholds, token_count_with_estimation
from inspector.tokens.thresholds import Settings, Thresholds, percent_left
from inspector.transcript.session import Session


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
            "blocking": t.blocking,
            "percent_left": self.percent_left,
            "rules": t.rules,
        }


def _k(n: int) -> str:
    return f"{n / 1000:.0f}k" if n >= 1000 else str(n)


def context_now(s: Session, settings: Settings | None = None) -> ContextNow:
    """The context at the session's leaf against its thresholds (`settings`: the environment's, by default)."""
    settings = settings if settings is not None else Settings.from_environment()
    th = session_thresholds(s, settings)
    series = context_series(s, settings, th)
    tokens = token_count_with_estimation(s, series, len(series.chain) - 1) if series.chain else 0
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
