"""The summarizer interface: what to summarize in, a raw reply and its usage out."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from inspector.transcript.session import Session


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    session: Session
    to_summarize: tuple[int, ...]  # record indexes, in chain order
    context: tuple[int, ...] = ()  # records sent before them for context only (partial "from")
    kind: str = "full"
    instructions: str | None = None  # /compact instructions, or the user context of a partial compaction
    model: str | None = None


@dataclass(frozen=True, slots=True)
class SummaryOutput:
    text: str  # the raw reply: for the API summarizer an <analysis> block then a <summary> block
    summarizer: str
    model: str | None = None
    usage: Mapping[str, Any] | None = None
    cost_usd: float | None = None
    notes: tuple[str, ...] = ()


Progress = Callable[[str, float | None], None]  # (what is happening, fraction done or None)


@dataclass(slots=True)
class Cancel:
    """Set from the UI to stop a running summarizer; summarizers check it between steps."""

    event: threading.Event = field(default_factory=threading.Event)

    def set(self) -> None:
        self.event.set()

    @property
    def cancelled(self) -> bool:
        return self.event.is_set()


class SummarizerError(Exception):
    """A summarizer failed in a way the user must hear about (bad key, overloaded, ...). Its message never
    carries a credential: an API or proxy that echoes the key in an error body is redacted here."""

    def __init__(self, message: str = "") -> None:
        from inspector.textutil import redact

        super().__init__(redact(str(message)))


class Cancelled(SummarizerError):
    pass


class Summarizer(Protocol):
    name: str
    sends_data: bool  # True when it sends the transcript over the network

    def summarize(self, req: SummaryRequest, progress: Progress | None = None, cancel: Cancel | None = None) -> SummaryOutput: ...
