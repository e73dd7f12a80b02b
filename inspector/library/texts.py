"""What a person reads in a record: the texts both the search's scan and the search index look in.

Prompts, replies, thinking, tool inputs (their values) and tool results, summaries, system notes, metadata values,
attachments' rendered text; not the JSON around them (identifiers, token counts, encoded data). One function, so the
index and the scan can never disagree on what a line holds.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from inspector.transcript.records import iter_blocks

PERSISTED_CAP = 64 << 20  # bytes of one persisted output searched


def read_persisted(path: Any) -> bytes:
    """What the search reads of a persisted output: its first PERSISTED_CAP bytes, a regular file only (OSError
    otherwise). The scan, the index's build and its lookups all read it so."""
    from pathlib import Path

    from inspector.transcript.safefs import open_regular

    with open_regular(Path(path)) as f:
        return f.read(PERSISTED_CAP)


# Keys whose values are identifiers, bookkeeping or encoded data, not text anyone reads.
_SKIP_KEYS = frozenset(
    {
        "uuid",
        "parentUuid",
        "logicalParentUuid",
        "leafUuid",
        "sessionId",
        "timestamp",
        "cwd",
        "version",
        "gitBranch",
        "userType",
        "requestId",
        "id",
        "tool_use_id",
        "toolUseID",
        "parentToolUseID",
        "signature",
        "type",
        "agentId",
        "slug",
        "model",
        "stop_reason",
        "stop_sequence",
        "messageId",
        "promptId",
        "sourceToolAssistantUUID",
        "isSidechain",
        "isMeta",
        "usage",
        "media_type",
        "data",
        "headUuid",
        "anchorUuid",
        "tailUuid",
        "uuids",
        "subtype",
        "level",
        "trigger",
        "originalModel",
        "fallbackModel",
        "compactedToolIds",
        "toolUseId",
        "permissionMode",
        "entrypoint",
        "operation",
        "preTokens",
        "postTokens",
    }
)


def _strings(value: Any, depth: int = 0) -> Iterator[str]:
    """String values, recursively, except under identifier and encoded-data keys."""
    if depth > 64:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, depth + 1)
    elif isinstance(value, dict):
        for k, v in value.items():
            if k in _SKIP_KEYS and not isinstance(v, dict) or k in ("usage", "source"):
                continue  # an identifier, a list of them, token counts, base64 data; a `data` object is read
            yield from _strings(v, depth + 1)


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in iter_blocks(content) if isinstance(b.get("text"), str))


def record_texts(body: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(where, text) for everything readable in one decoded line."""
    t = body.get("type")
    msg = body.get("message")
    if t in ("user", "assistant") and isinstance(msg, dict):
        content = msg.get("content")
        if isinstance(content, str):
            if t == "user":
                yield ("summary" if body.get("isCompactSummary") is True else "prompt"), content
            else:
                yield "reply", content
            return
        for b in iter_blocks(content):
            bt = b.get("type")
            if bt == "text" and isinstance(b.get("text"), str):
                yield ("prompt" if t == "user" else "reply"), b["text"]
            elif bt == "thinking" and isinstance(b.get("thinking"), str):
                yield "thinking", b["thinking"]
            elif bt == "tool_use":
                name = b.get("name") if isinstance(b.get("name"), str) else "?"
                yield f"tool input ({name})", "\n".join(_strings(b.get("input")))
            elif bt == "tool_result":
                yield "tool result", _result_text(b.get("content"))
        return
    if t == "system":
        yield (
            "system",
            "\n".join(_strings({k: v for k, v in body.items() if k not in ("compactMetadata", "microcompactMetadata")})),
        )
        return
    if t == "attachment":
        found = body.get("attachment")
        att: dict[str, Any] = found if isinstance(found, dict) else {}
        if att.get("type") == "prompt_snapshot":
            return  # the system prompt in force, again: it is searched once, in the request's shape
        rendered = body.get("rendered")
        if isinstance(rendered, list):  # 2.1.3xx: exactly what the model was shown
            yield (
                "attachment",
                "\n".join(x["content"] for x in rendered if isinstance(x, dict) and isinstance(x.get("content"), str)),
            )
            return
    if t == "api-request-blob":
        return  # a copy of messages whose records are searched themselves
    yield (t if isinstance(t, str) and t else "record"), "\n".join(_strings(body))
