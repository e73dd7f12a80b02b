"""Tiny builders for synthetic records used by unit tests."""

from __future__ import annotations

from typing import Any

_n = 0


def ts(sec: int) -> str:
    return f"2026-04-02T09:{sec // 60:02d}:{sec % 60:02d}.000Z"


def _record(kind: str, uuid: str, parent: str | None, sec: int) -> dict:
    """The fields every chain record of these builders has."""
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "timestamp": ts(sec),
        "sessionId": "S",
        "isSidechain": False,
        "cwd": "/w/proj",
        "version": "2.1.88",
    }


def user(uuid: str, parent: str | None, text: Any = "hi", sec: int = 0, **kw: Any) -> dict:
    r = _record("user", uuid, parent, sec)
    r["message"] = {"role": "user", "content": text}
    r.update(kw)
    return r


def assistant(
    uuid: str,
    parent: str | None,
    blocks: list | None = None,
    sec: int = 0,
    mid: str | None = None,
    usage: tuple[int, int, int, int] = (10, 100, 1000, 50),
    model: str = "claude-sonnet-4-6",
    **kw: Any,
) -> dict:
    r = _record("assistant", uuid, parent, sec)
    r["message"] = {
        "id": mid or f"msg_{uuid}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks if blocks is not None else [{"type": "text", "text": "ok"}],
        "usage": {
            "input_tokens": usage[0],
            "cache_creation_input_tokens": usage[1],
            "cache_read_input_tokens": usage[2],
            "output_tokens": usage[3],
        },
    }
    r.update(kw)
    return r


def tool_use(tid: str, name: str = "Read", inp: dict | None = None) -> dict:
    return {"type": "tool_use", "id": tid, "name": name, "input": inp or {"file_path": "/w/proj/a.py"}}


def tool_result(uuid: str, parent: str, tid: str, content: Any = "out", sec: int = 0, **kw: Any) -> dict:
    return user(
        uuid,
        parent,
        [{"type": "tool_result", "tool_use_id": tid, "content": content}],
        sec=sec,
        sourceToolAssistantUUID=parent,
        **kw,
    )


def system(uuid: str, parent: str | None, subtype: str, sec: int = 0, **kw: Any) -> dict:
    r = {
        "type": "system",
        "subtype": subtype,
        "uuid": uuid,
        "parentUuid": parent,
        "timestamp": ts(sec),
        "sessionId": "S",
        "isSidechain": False,
        "content": subtype,
    }
    r.update(kw)
    return r


def progress(uuid: str, parent: str | None, sec: int = 0) -> dict:
    return {
        "type": "progress",
        "uuid": uuid,
        "parentUuid": parent,
        "timestamp": ts(sec),
        "sessionId": "S",
        "data": {"type": "hook_progress"},
        "toolUseID": "t",
        "parentToolUseID": "t",
    }


def attachment(uuid: str, parent: str | None, att: dict, sec: int = 0, rendered: str | None = None, **kw: Any) -> dict:
    """An attachment record (2.1.3xx: with the text it is sent as in `rendered`)."""
    r = _record("attachment", uuid, parent, sec)
    r["attachment"] = att
    if rendered is not None:
        r["rendered"] = [{"content": rendered}]
    r.update(kw)
    return r
