"""The Anthropic summarizer: the conversation and a summary prompt sent through the official SDK.

Only used when the user asks for it, after they have seen how many tokens it sends and what it
would cost (`estimate`). Streaming, with the SDK's retries on 429, 529 and 5xx (honouring
retry-after), a timeout, prompt-too-long retries that drop the oldest API rounds (§8.3), and a
cancel that stops the stream. Images and documents are replaced by placeholders; thinking is not
sent; tool calls and results are sent as text. The API key is read by the SDK from
ANTHROPIC_API_KEY and never printed, logged or written.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Any

from inspector.compact.invariants import group_by_api_round
from inspector.compact.summarize.base import Cancel, Cancelled, Progress, SummarizerError, SummaryOutput, SummaryRequest
from inspector.compact.summarize.prompt import SYSTEM, build_prompt
from inspector.tokens.estimate import count, js_stringify, rough_record
from inspector.tokens.thresholds import max_output_limits
from inspector.transcript.records import iter_blocks, tool_result_text

DEFAULT_MODEL = "claude-sonnet-4-6"
COMPACT_MAX_OUTPUT_TOKENS = 20_000
MAX_PTL_RETRIES = 3
RETRY_MARKER = "[earlier conversation truncated for compaction retry]"
TOOL_TEXT_LIMIT = 20_000  # characters of one tool result sent as text
_PTL = re.compile(r"prompt is too long[^0-9]*(\d+)\s*tokens?\s*>\s*(\d+)", re.I)


def cost_usd(model: str, input_tokens: int, output_tokens: int, cache_write: int = 0, cache_read: int = 0) -> float | None:
    """What a summarize call costs, by the one price table `inspector cost` uses (its dated rows and the user's own
    prices file); None for a model it has no price for (never a guess)."""
    from inspector.library.cost import PriceTable

    r = PriceTable.load().rates_for(model)
    if r is None:
        return None
    return (input_tokens * r.input + output_tokens * r.output + cache_write * r.cache_write_5m + cache_read * r.cache_read) / 1e6


class _StreamBroke(Exception):
    """The answer had begun (the API accepted the request) and its stream was cut: the SDK raises the HTTP library's
    own error for it in 0.x and an APIConnectionError in 2.x, which before the answer begins means the API was never
    reached."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


@dataclass(frozen=True, slots=True)
class SendEstimate:
    input_tokens: int
    exact: bool  # True when the token-counting endpoint answered
    max_output_tokens: int
    cost_usd_max: float | None  # input cost + the largest possible output (None: no price for the model)
    cost_usd_typical: float | None  # input cost + a typical 4,000-token summary
    model: str

    def describe(self) -> str:
        how = "counted by the API" if self.exact else "estimated offline"
        if self.cost_usd_typical is None or self.cost_usd_max is None:
            return (
                f"{self.input_tokens:,} input tokens ({how}) to {self.model}; no price is known for this model, so the "
                "cost is not estimated (add it to ~/.config/inspector/prices.json)"
            )
        return (
            f"{self.input_tokens:,} input tokens ({how}) to {self.model}; estimated cost ${self.cost_usd_typical:.2f} "
            f"(at most ${self.cost_usd_max:.2f} with a {self.max_output_tokens:,}-token reply)"
        )


def _block_text(b: dict[str, Any], names: dict[str, str]) -> str | None:
    t = b.get("type")
    if t == "text":
        return b.get("text") if isinstance(b.get("text"), str) else None
    if t in ("thinking", "redacted_thinking"):
        return None
    if t == "image":
        return "[image]"
    if t == "document":
        return "[document]"
    if t == "tool_use":
        inp = js_stringify(b.get("input", {}))
        if len(inp) > 4000:
            inp = inp[:4000] + "…"
        return f"[called {b.get('name', 'a tool')}: {inp}]"
    if t == "tool_result":
        inner = b.get("content")
        text = tool_result_text(inner)
        if any(x.get("type") == "image" for x in iter_blocks(inner)):
            text += "\n[image]"
        if len(text) > TOOL_TEXT_LIMIT:
            text = text[:TOOL_TEXT_LIMIT] + f"\n… [{len(text) - TOOL_TEXT_LIMIT:,} more characters not sent]"
        name = names.get(b.get("tool_use_id", ""), "tool")
        err = " (error)" if b.get("is_error") is True else ""
        return f"[{name} result{err}]\n{text}"
    return f"[{t}]" if isinstance(t, str) else None


def to_messages(items: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """(role, record body) pairs as API messages: text only, merged by role, starting with the user."""
    names: dict[str, str] = {}
    msgs: list[dict[str, Any]] = []
    for role, body in items:
        if role not in ("user", "assistant"):
            continue
        msg = body.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        for b in iter_blocks(content):
            if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                names[b["id"]] = str(b.get("name", "tool"))
        parts = [content] if isinstance(content, str) else [_block_text(b, names) for b in iter_blocks(content)]
        text = "\n\n".join(p for p in parts if p)
        if not text.strip():
            continue
        if msgs and msgs[-1]["role"] == role:
            msgs[-1]["content"] += "\n\n" + text
        else:
            msgs.append({"role": role, "content": text})
    if msgs and msgs[0]["role"] == "assistant":
        msgs.insert(0, {"role": "user", "content": RETRY_MARKER})
    return msgs


def build_messages(req: SummaryRequest, indexes: list[int], prompt: str) -> list[dict[str, Any]]:
    """API messages for the records, ending with the summary prompt."""
    s = req.session
    msgs = to_messages([(s.records[i].type, s.body(i)) for i in indexes if s.records[i].type in ("user", "assistant")])
    if msgs and msgs[-1]["role"] == "user":
        msgs[-1]["content"] += "\n\n" + prompt
    else:
        msgs.append({"role": "user", "content": prompt})
    return msgs


def drop_oldest_rounds(req: SummaryRequest, indexes: list[int], error_text: str) -> list[int] | None:
    """truncateHeadForPTLRetry (§8.3) on record indexes; None when nothing more can be dropped."""
    s = req.session
    recs = [s.records[i] for i in indexes]
    groups = group_by_api_round(recs)
    if len(groups) < 2:
        return None
    m = _PTL.search(error_text or "")
    if m:
        gap = int(m.group(1)) - int(m.group(2))
        drop, acc = 0, 0
        for g in groups:
            if acc >= gap:
                break
            acc += sum(rough_record(s.body(indexes[k])) for k in g)
            drop += 1
    else:
        drop = max(1, math.floor(0.2 * len(groups)))
    drop = min(drop, len(groups) - 1)
    if drop < 1:
        return None
    keep_from = groups[drop][0]
    return indexes[keep_from:]


class AnthropicSummarizer:
    name = "anthropic"
    sends_data = True

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 600.0,
        max_retries: int = 3,
        client: Any = None,
    ) -> None:
        self.model = model
        self._client = client
        self._api_key = api_key
        self._base_url = base_url
        self.timeout = timeout
        self.max_retries = max_retries

    @property
    def has_key(self) -> bool:
        return bool(self._api_key or os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN"))

    def client(self) -> Any:
        if self._client is None:
            import anthropic

            if not self.has_key:
                raise SummarizerError(
                    "no API key: set ANTHROPIC_API_KEY to use the Anthropic summarizer (or use the offline one)"
                )
            self._client = anthropic.Anthropic(
                api_key=self._api_key, base_url=self._base_url, timeout=self.timeout, max_retries=self.max_retries
            )
        return self._client

    @property
    def max_tokens(self) -> int:
        return min(COMPACT_MAX_OUTPUT_TOKENS, max_output_limits(self.model)[0])

    def _indexes(self, req: SummaryRequest) -> list[int]:
        return list(req.context) + list(req.to_summarize)

    def request(self, req: SummaryRequest, indexes: list[int] | None = None) -> dict[str, Any]:
        prompt = build_prompt(req.kind, req.instructions)
        return {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": SYSTEM,
            "messages": build_messages(req, indexes if indexes is not None else self._indexes(req), prompt),
        }

    def estimate(self, req: SummaryRequest, *, exact: bool = True) -> SendEstimate:
        """How many tokens a summary request sends and what it may cost; asks the API only with a key."""
        body = self.request(req)
        tokens, is_exact = None, False
        if exact and self.has_key:
            try:
                res = self.client().messages.count_tokens(model=body["model"], system=body["system"], messages=body["messages"])
                tokens, is_exact = int(res.input_tokens), True
            except Exception:  # noqa: BLE001 - fall back to the offline count
                tokens = None
        if tokens is None:
            text = body["system"] + "".join(m["content"] for m in body["messages"])
            tokens = round(count(text) * 1.1) + 10 * len(body["messages"])
        return SendEstimate(
            tokens,
            is_exact,
            self.max_tokens,
            cost_usd(self.model, tokens, self.max_tokens),
            cost_usd(self.model, tokens, min(self.max_tokens, 4_000)),
            self.model,
        )

    def count_messages(self, items: list[tuple[str, dict[str, Any]]]) -> int:
        """The API's own count of these messages (the token-counting endpoint; needs a key)."""
        msgs = to_messages(items) or [{"role": "user", "content": "."}]
        if msgs[-1]["role"] != "user":
            msgs.append({"role": "user", "content": "."})
        return int(self.client().messages.count_tokens(model=self.model, messages=msgs).input_tokens)

    def count_request(self, system: Any, tools: Any, messages: list[dict[str, Any]], model: str | None = None) -> int:
        """The API's count of a whole request (the token-counting endpoint: nothing is generated)."""
        kw: dict[str, Any] = {"model": model or self.model, "messages": messages}
        if system:
            kw["system"] = system
        if tools:
            kw["tools"] = tools
        try:
            return int(self.client().messages.count_tokens(**kw).input_tokens)
        except Exception as exc:  # noqa: BLE001
            raise SummarizerError(f"the token-counting endpoint failed: {_error_message(exc, self._secrets())}") from None

    def _secrets(self) -> tuple[str, ...]:
        """The key this summarizer was given, whatever its prefix (the environment's are redacted anyway)."""
        return (self._api_key,) if self._api_key else ()

    def summarize(self, req: SummaryRequest, progress: Progress | None = None, cancel: Cancel | None = None) -> SummaryOutput:
        import anthropic

        indexes = self._indexes(req)
        notes: list[str] = []
        attempt = broken = 0
        while attempt <= MAX_PTL_RETRIES:
            if cancel is not None and cancel.cancelled:
                raise Cancelled("cancelled before sending")
            body = self.request(req, indexes)
            try:
                return self._stream(body, progress, cancel, notes)
            except (SummarizerError, Cancelled):
                raise
            except anthropic.APIStatusError as exc:
                attempt += 1
                self._raise_for_status(exc, attempt)
                shorter = drop_oldest_rounds(req, indexes, _error_message(exc))
                if shorter is None:
                    break
                notes.append(f"prompt too long: dropped the oldest {len(indexes) - len(shorter)} records and retried")
                indexes = shorter
                if progress:
                    progress(notes[-1], None)
            except anthropic.APITimeoutError:
                raise SummarizerError(f"the request timed out after {self.timeout:g} s") from None
            except anthropic.APIConnectionError:
                raise SummarizerError("could not reach the API (connection failed)") from None
            except _StreamBroke as exc:
                broken += 1
                if broken > self.max_retries:
                    raise SummarizerError(
                        f"the connection broke while the summary was streaming ({type(exc.cause).__name__}), "
                        f"{broken} time(s): try again"
                    ) from None
                notes.append("the connection broke mid-stream; retried")
                if progress:
                    progress(notes[-1], None)
        raise SummarizerError(
            "Conversation too long to summarize even after dropping the oldest messages "
            f"{MAX_PTL_RETRIES} times: compact from a later message"
        )

    def _raise_for_status(self, exc: Any, attempt: int) -> None:
        """Turn an API error into one clear message; return only for a prompt-too-long that may be retried."""
        import anthropic

        msg = _error_message(exc, self._secrets())
        if isinstance(exc, anthropic.BadRequestError) and "prompt is too long" in msg.lower():
            if attempt > MAX_PTL_RETRIES:
                raise SummarizerError(
                    "Conversation too long to summarize even after dropping the oldest messages "
                    f"{MAX_PTL_RETRIES} times: compact from a later message"
                ) from None
            return
        status = getattr(exc, "status_code", None)
        text = {
            400: f"the API refused the request (400): {msg}",
            401: "the API key was refused (401): check ANTHROPIC_API_KEY",
            403: "this API key may not use that model (403)",
            404: f"model {self.model!r} was not found (404): choose another with --model",
            429: f"rate limited (429) even after {self.max_retries} retries: try again later",
            529: f"the API is overloaded (529) even after {self.max_retries} retries: try again later",
        }.get(status if isinstance(status, int) else 0, f"the API answered {status}: {msg}")
        raise SummarizerError(text) from None

    def _stream(self, body: dict[str, Any], progress: Progress | None, cancel: Cancel | None, notes: list[str]) -> SummaryOutput:
        client = self.client()
        received = 0
        import anthropic

        with client.messages.stream(**body) as stream:
            try:
                for event in stream:
                    if cancel is not None and cancel.cancelled:
                        stream.close()
                        raise Cancelled("cancelled while the summary was streaming")
                    if getattr(event, "type", None) == "text":
                        received += len(getattr(event, "text", "") or "")
                        if progress:
                            progress(f"receiving the summary ({received:,} characters)", None)
                final = stream.get_final_message()
            except (Cancelled, SummarizerError, anthropic.APIStatusError, anthropic.APITimeoutError):
                raise  # an error event in the stream is the API's answer; a read that timed out says so
            except Exception as exc:  # noqa: BLE001 - the stream cut mid-way: the HTTP library's error, or the SDK's
                raise _StreamBroke(exc) from exc
        # a summary that repeats the key (a prompt that quoted it, a model that echoed it) is shown and saved: never it
        from inspector.textutil import redact

        text = redact(
            "".join(getattr(b, "text", "") for b in final.content if getattr(b, "type", None) == "text"), self._secrets()
        )
        if not text.strip():
            raise SummarizerError("the API returned no text")
        if text.startswith("API Error"):
            raise SummarizerError(text[:200])
        u = final.usage
        usage = {
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "cache_creation_input_tokens": getattr(u, "cache_creation_input_tokens", None) or 0,
            "cache_read_input_tokens": getattr(u, "cache_read_input_tokens", None) or 0,
        }
        return SummaryOutput(
            text=text,
            summarizer=self.name,
            model=final.model,
            usage=usage,
            cost_usd=cost_usd(
                final.model or self.model,
                usage["input_tokens"],
                usage["output_tokens"],
                usage["cache_creation_input_tokens"],
                usage["cache_read_input_tokens"],
            ),
            notes=tuple(notes),
        )


def _error_message(exc: Any, secrets: tuple[str, ...] = ()) -> str:
    """An API error's message, credentials taken out *before* it is cut to 300 characters (a key cut in two is
    no longer recognised whole)."""
    from inspector.textutil import redact

    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return redact(err["message"], secrets)[:300]
    return redact(str(getattr(exc, "message", "") or exc), secrets)[:300]
