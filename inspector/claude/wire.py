"""What Claude Code 2.1.3xx sends for a chain of transcript records: the messages of the API request, in the API's form.

Claude Code builds each request from the records of the conversation's chain after the last compaction (after the
relink of the kept records, claude-code-2.1.328.md §3.6), so the same records give the same request on resume. The
rules, read from the binary and checked against every request of the conformance runs:

* a user record is a user message; assistant records with one `message.id` are one assistant message (a fragment
  whose id was seen before, with only tool results between, joins that message);
* an attachment is sent as the text of its `rendered` entries (one text block each); attachments without
  `rendered` are not sent;
* attachments move up, past user messages, until they meet an assistant message or a user message that starts
  with a tool result (reorderAttachmentsForAPI);
* consecutive user messages become one: where a message ending in a text block meets one starting with a text
  block, the earlier text gets a newline; attachments that follow a tool result are folded into its text (each
  part trimmed, joined by a blank line), except those rendered beside the tool result, which stay text blocks;
  several attachments in a row are one group (no newline between their blocks).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

WIRE_TYPES = ("user", "assistant", "attachment")


@dataclass
class _Item:
    kind: str  # "user", "assistant", "attachment"
    blocks: list[dict[str, Any]] = field(default_factory=list)
    text: str | None = None  # a user record's string content, kept as a string when nothing joins it
    message_id: str | None = None
    beside: bool = False  # an attachment rendered beside a tool result
    system: bool = False  # an attachment rendered with the system role


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [copy.deepcopy(b) for b in content if isinstance(b, dict)]
    return []


def _starts_with_tool_result(it: _Item) -> bool:
    return it.kind == "user" and it.text is None and bool(it.blocks) and it.blocks[0].get("type") == "tool_result"


def _items(bodies: Iterable[Mapping[str, Any]]) -> list[_Item]:
    out: list[_Item] = []
    by_id: dict[str, int] = {}  # assistant message id -> its item, while only tool results follow it
    for b in bodies:
        t = b.get("type")
        if t == "assistant":
            if b.get("isApiErrorMessage"):
                continue
            msg = b.get("message") if isinstance(b.get("message"), dict) else {}
            mid = msg.get("id") if isinstance(msg.get("id"), str) else None
            at = by_id.get(mid) if mid is not None else None
            if at is not None and out[at].kind == "assistant":
                out[at].blocks += _blocks(msg.get("content"))
                continue
            out.append(_Item("assistant", _blocks(msg.get("content")), message_id=mid))
            if mid is not None:
                by_id[mid] = len(out) - 1
        elif t == "user":
            msg = b.get("message") if isinstance(b.get("message"), dict) else {}
            content = msg.get("content")
            it = _Item("user", _blocks(content), text=content if isinstance(content, str) else None)
            if not _starts_with_tool_result(it) and not any(x.get("type") == "tool_result" for x in it.blocks):
                by_id.clear()
            out.append(it)
        elif t == "attachment":
            rendered = b.get("rendered")
            if not isinstance(rendered, list):
                continue
            blocks = [{"type": "text", "text": r["content"]} for r in rendered if isinstance(r, dict) and isinstance(r.get("content"), str)]
            if blocks:
                out.append(_Item("attachment", blocks, beside=bool(b.get("renderedBesideToolResult")),
                                 system=b.get("renderedRole") == "system"))
    return out


def _reorder(items: list[_Item]) -> list[_Item]:
    """Attachments bubble up until an assistant message or a user message starting with a tool result."""
    result: list[_Item] = []
    pending: list[_Item] = []
    for it in reversed(items):
        if it.kind == "attachment":
            pending.append(it)
            continue
        if pending and (it.kind == "assistant" or _starts_with_tool_result(it)):
            result += pending
            pending = []
        result.append(it)
    result += pending
    result.reverse()
    return result


def _fold(tool_result: dict[str, Any], texts: list[str]) -> dict[str, Any]:
    """Text appended to a tool result (h9e): every part trimmed, empty ones dropped, joined by a blank line."""
    c = tool_result.get("content")
    if c is None or isinstance(c, str):
        parts = [(c or "").strip()] + [t.strip() for t in texts]
        return {**tool_result, "content": "\n\n".join(p for p in parts if p)}
    blocks: list[dict[str, Any]] = []
    for b in list(c) + [{"type": "text", "text": t} for t in texts]:
        if isinstance(b, dict) and b.get("type") == "text":
            t = str(b.get("text", "")).strip()
            if not t:
                continue
            if blocks and blocks[-1].get("type") == "text":
                blocks[-1] = {**blocks[-1], "text": f"{blocks[-1]['text']}\n\n{t}"}
            else:
                blocks.append({"type": "text", "text": t})
        else:
            blocks.append(b)
    return {**tool_result, "content": blocks}


STYLES = ("user", "system", "system-bare")
_OPEN, _CLOSE = "<system-reminder>\n", "\n</system-reminder>"


def _bare(text: str) -> str:
    """A reminder's text without its <system-reminder> wrapper."""
    t = text.strip()
    if t.startswith(_OPEN.strip()) and t.endswith(_CLOSE.strip()):
        t = t[len(_OPEN.strip()):-len(_CLOSE.strip())].strip("\n")
    return t


def api_messages(bodies: Iterable[Mapping[str, Any]], style: str = "user") -> list[dict[str, Any]]:
    """The `messages` of the request Claude Code 2.1.3xx sends for these chain records (after the last boundary).

    `style` is how the model takes reminders rendered with the system role: "user" (text in the user turn, the
    Claude 4 models), "system" (a system-role entry of the messages array after the user turn, wrapped in
    <system-reminder>: the Claude 5 models) or "system-bare" (the same without the wrapper: models the catalog does
    not know)."""
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, not {style!r}")
    items = _reorder(_items(bodies))
    out: list[dict[str, Any]] = []
    cur: _Item | None = None  # the user message being built
    cur_atts = False  # whether `cur` ends with an attachment group (no newline between attachment blocks)
    pending: list[str] = []  # system-role reminders waiting for the end of the user turn

    def flush() -> None:
        nonlocal cur
        if cur is not None:
            if cur.text is not None and len(cur.blocks) == 1:
                out.append({"role": "user", "content": cur.text})
            else:
                out.append({"role": "user", "content": cur.blocks})
        cur = None
        if pending:
            text = "\n\n".join(_bare(t) if style == "system-bare" else t for t in pending)
            out.append({"role": "system", "content": text})
            pending.clear()

    for it in items:
        if it.kind == "assistant":
            flush()
            out.append({"role": "assistant", "content": it.blocks})
            continue
        if it.kind == "attachment" and it.system and style != "user":
            pending.extend(b["text"] for b in it.blocks)
            continue
        if cur is None:
            cur = _Item("user", list(it.blocks), text=it.text if it.kind == "user" else None)
            cur_atts = it.kind == "attachment"
            continue
        last = cur.blocks[-1] if cur.blocks else None
        if it.kind == "attachment" and last is not None and last.get("type") == "tool_result" and not it.beside:
            cur.blocks[-1] = _fold(last, [b["text"] for b in it.blocks])
            cur.text = None
            continue
        if it.kind == "attachment" and cur_atts:
            cur.blocks += it.blocks
            cur.text = None
            continue
        first = it.blocks[0] if it.blocks else None
        if last is not None and first is not None and last.get("type") == "text" and first.get("type") == "text":
            cur.blocks[-1] = {**last, "text": last["text"] + "\n"}
        results = [b for b in it.blocks if b.get("type") == "tool_result"]
        others = [b for b in it.blocks if b.get("type") != "tool_result"]
        if results:
            n = sum(1 for b in cur.blocks if b.get("type") == "tool_result")
            cur.blocks[n:n] = results
        cur.blocks += others
        cur.text = None
        cur_atts = it.kind == "attachment"
    flush()
    return out


def style_for_model(model: str | None) -> str:
    """How a model takes system-role reminders, when no recorded request shows it: the Claude 5 models as
    system-role entries, models the catalog does not know as the same without the wrapper, the others as user text
    (what 2.1.328 did with claude-sonnet-5, claude-foo-1 and the Claude 4 models in the conformance runs)."""
    from inspector.claude.versions import catalog_key

    key = catalog_key(model)
    if key is None:
        return "system-bare" if model else "user"
    m = re.match(r"claude-(?:[a-z]+-)?(\d+)", key)
    return "system" if m and int(m.group(1)) >= 5 else "user"


def style_of_request(messages: Iterable[Mapping[str, Any]]) -> str | None:
    """The style a recorded request shows, or None when it has no system-role entry to tell."""
    for m in messages:
        if m.get("role") == "system":
            c = m.get("content")
            text = c if isinstance(c, str) else next((b.get("text", "") for b in c if isinstance(b, dict)), "") if isinstance(c, list) else ""
            return "system" if str(text).startswith("<system-reminder>") else "system-bare"
    return None


def wire_style(s: Any) -> str:
    """The style of a session: what its recorded requests show, else what its model implies."""
    from inspector.claude.requests import rebuild_requests

    for q in rebuild_requests(s):
        st = style_of_request(q.request.get("messages") or ())
        if st is not None:
            return st
    return style_for_model(s.main_model)


def sent_bodies(s: Any, chain: Iterable[int]) -> list[dict[str, Any]]:
    """The bodies of the records of `chain` (record indexes) that a request is built from: after the last boundary."""
    chain = list(chain)
    start = max((k for k, i in enumerate(chain) if s.records[i].is_compact_boundary), default=-1) + 1
    return [s.body(i) for i in chain[start:] if s.records[i].type in WIRE_TYPES]


__all__ = ["api_messages", "STYLES", "WIRE_TYPES", "sent_bodies", "style_for_model", "style_of_request", "wire_style"]
