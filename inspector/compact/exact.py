"""The exact count of what the model would see after a compaction: one plan, shared by `inspector compact --exact`
and the workbench's exact-count key.

Two ways, chosen by what the session recorded:
- a 2.1.3xx session whose request shape (system prompt and tools) is known: the whole request a resume would send is
  counted by the API's token-counting endpoint, as Claude Code would send it;
- otherwise the messages after the compaction are counted and the session's calibrated fixed overhead (system prompt
  and tools, measured from its own usage) is added.

Nothing leaves the machine here until `count()` is called: the front end first shows `describe()` and asks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from inspector.compact.base import CompactionResult
    from inspector.tokens.thresholds import Settings
    from inspector.transcript.session import Session


class TokenCounter(Protocol):
    """What the plan needs of a counter (the Anthropic summarizer's client has both)."""

    def count_request(self, system: Any, tools: Any, messages: list[dict[str, Any]], model: str | None = None) -> int: ...

    def count_messages(self, items: list[tuple[str, dict[str, Any]]]) -> int: ...


@dataclass(frozen=True, slots=True)
class ExactCount:
    tokens: int
    estimated: int  # inspector's own estimate of the same thing, for comparison
    whole_request: bool

    def describe(self) -> str:
        if self.whole_request:
            return f"exact: {self.tokens:,} tokens by the API's count of the whole request ({self.estimated:,} estimated)"
        return (
            f"exact: {self.tokens:,} tokens (the API's count of the messages + the calibrated fixed overhead; "
            f"{self.estimated:,} estimated)"
        )

    def as_dict(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "estimated": self.estimated, "whole_request": self.whole_request}


@dataclass(frozen=True, slots=True)
class ExactCountPlan:
    """What would be sent to the token-counting endpoint, and how to send it."""

    session: Session
    result: CompactionResult
    shape: dict[str, Any] | None  # the recorded request shape, when the whole request is counted
    overhead: Callable[[], float]  # the calibrated fixed overhead, computed only when the messages alone are counted

    @property
    def whole_request(self) -> bool:
        return self.shape is not None

    def describe(self) -> str:
        """What leaves the machine, in words, for the consent question."""
        res = self.result
        if self.whole_request:
            return (
                f"the request a resume would send: {len(res.api_messages or ())} messages with the session's system "
                f"prompt and tools, about {res.tokens_after:,} tokens"
            )
        return f"the {len(res.view)} messages after the compaction (about {res.tokens_after:,} tokens with the fixed overhead)"

    def count(self, counter: TokenCounter) -> ExactCount:
        """Send it (the caller has asked): the API's count."""
        res = self.result
        if self.shape is not None:
            n = counter.count_request(
                self.shape.get("system"),
                self.shape.get("tools"),
                [dict(m) for m in res.api_messages or ()],
                self.session.main_model,
            )
        else:
            n = round(self.overhead()) + counter.count_messages([(v.role, dict(v.body)) for v in res.view])
        return ExactCount(n, res.tokens_after, self.shape is not None)


def plan_exact_count(
    session: Session, result: CompactionResult, settings: Settings, overhead: Callable[[], float] | None = None
) -> ExactCountPlan:
    """The plan for counting `result` exactly. `overhead`: the caller's calibrated overhead when it has an estimator
    already (the workbench); otherwise one is calibrated on the session, only if the messages alone are counted."""
    from inspector.claude.requests import recorded_shape

    shape = recorded_shape(session) if result.api_messages is not None else None

    def calibrated() -> float:
        from inspector.compact.base import Estimator, make_slice

        return Estimator(session, make_slice(session, None, settings).series, settings).calibration.overhead

    return ExactCountPlan(session, result, shape, overhead or calibrated)
