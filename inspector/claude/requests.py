"""The exact API requests Claude Code sent, rebuilt from a 2.1.3xx transcript alone (format-2.1.3xx.md §3.4).

Since 2.1.3xx every main-thread and subagent request is recorded: `api-request` rows (the parameters, the id of the
request it extends, how many of that request's messages it keeps, and the hashes of the messages it appends),
`api-request-shape` rows (the system prompt and the tools, by hash) and `api-request-blob` rows (a message that no run
of transcript records reproduces, e.g. a first user message with its reminders rendered in). A message hash is the
sha256 of its canonical JSON (keys sorted, no whitespace, `cache_control` left out, string content as one text
block); a run of consecutive user records, or of assistant records with one `message.id`, concatenated, is a
candidate for every prefix of it. The summarize call of a compaction is not recorded.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from inspector.claude.release import at_or_after
from inspector.textutil import as_dict, as_list, deep_recursion
from inspector.transcript.records import iter_blocks
from inspector.transcript.session import Session

REQUEST_TYPES = frozenset({"api-request", "api-request-shape", "api-request-blob", "api-request-resumed"})
# A request's messages past the API's limit on a request's size cannot have been sent: a hostile row that points at
# one blob 200,000 times is cut there, and the rebuild as a whole holds at most MAX_REFERENCES messages (each a
# reference to one shared object), so that what it costs stays proportional to what a session can have sent
REQUEST_BYTES_CAP = 32 << 20
MAX_REFERENCES = 5_000_000


def canonical(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: canonical(v) for k, v in sorted(obj.items()) if k != "cache_control"}
    if isinstance(obj, list):
        return [canonical(v) for v in obj]
    return obj


def _json(obj: Any) -> str:
    with deep_recursion():  # a message may nest a thousand levels deep
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def message_hash(message: dict[str, Any]) -> str:
    """Claude Code's hash of one API message."""
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    body = {"content": content, "role": message.get("role")}
    with deep_recursion():
        return hashlib.sha256(_json(canonical(body)).encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class RebuiltRequest:
    """One request as Claude Code sent it (cache markers and the billing line aside)."""

    id: str
    index: int  # record index of its api-request row
    timestamp: str | None
    query_source: str | None
    model: str | None
    request: dict[str, Any]  # system, tools, messages and the other parameters
    replies: list[int] = field(default_factory=list)  # record indexes of the assistant records it produced
    unresolved: list[str] = field(default_factory=list)  # message hashes the transcript does not hold
    agent_id: str | None = None
    # top-level parameters Claude Code sent that its transcript does not record (they are not in `request`)
    not_recorded: list[str] = field(default_factory=list)
    capped: str | None = None  # why its messages were cut short (a row no real request can match), in words

    @property
    def exact(self) -> bool:
        return not self.unresolved and self.capped is None

    @property
    def answered(self) -> bool:
        return bool(self.replies)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "timestamp": self.timestamp,
            "query_source": self.query_source,
            "model": self.model,
            "agent_id": self.agent_id,
            "answered": self.answered,
            "exact": self.exact,
            "unresolved": self.unresolved,
            "not_recorded": self.not_recorded,
            "capped": self.capped,
            "request": self.request,
        }


def _content_blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content) if isinstance(content, list) else []


def candidate_messages(s: Session) -> dict[str, dict[str, Any]]:
    """Every message a run of transcript records can make, by hash."""
    out: dict[str, dict[str, Any]] = {}
    recs = s.records
    k = 0
    idx = [i for i, r in enumerate(recs) if r.type in ("user", "assistant")]
    while k < len(idx):
        r = recs[idx[k]]
        j = k + 1
        if r.type == "user":
            while j < len(idx) and recs[idx[j]].type == "user":
                j += 1
        else:
            while j < len(idx) and recs[idx[j]].type == "assistant" and recs[idx[j]].message_id == r.message_id:
                j += 1
        content: list[Any] = []
        role = "user" if r.type == "user" else "assistant"
        for n in range(k, j):
            msg = s.body(idx[n]).get("message")
            if not isinstance(msg, dict):
                break
            content = content + _content_blocks(msg.get("content"))
            m = {"role": role, "content": content}
            out.setdefault(message_hash(m), m)
        k = j
    return out


def rebuild_requests(s: Session) -> list[RebuiltRequest]:
    """Every recorded request of a transcript, rebuilt; [] for a transcript that records none (before 2.1.3xx)."""
    recs = s.records
    rows = [i for i, r in enumerate(recs) if r.type in REQUEST_TYPES]
    if not any(recs[i].type == "api-request" for i in rows):
        return []
    shapes: dict[str, dict[str, Any]] = {}
    blobs: dict[str, dict[str, Any]] = {}
    for i in rows:
        b = s.body(i)
        if recs[i].type == "api-request-shape" and isinstance(b.get("shapeHash"), str) and isinstance(b.get("shape"), dict):
            shapes[b["shapeHash"]] = b["shape"]
        elif recs[i].type == "api-request-blob" and isinstance(b.get("hash"), str) and isinstance(b.get("message"), dict):
            blobs[b["hash"]] = b["message"]
    cands = candidate_messages(s)
    replies: dict[str, list[int]] = {}
    for i, r in enumerate(recs):
        if r.type == "assistant":
            ref = s.body(i).get("requestRef")
            if isinstance(ref, str):
                replies.setdefault(ref, []).append(i)
    unrecorded = at_or_after(s.version, SAFEGUARDS_UNRECORDED_FROM)
    built: dict[str, tuple[list[dict[str, Any]], list[int]]] = {}  # id: its messages, their sizes' running sums
    sizes: dict[int, int] = {}  # a message's JSON size, by object (messages are shared)
    refs = 0
    out: list[RebuiltRequest] = []
    for i in rows:
        if recs[i].type != "api-request":
            continue
        b = s.body(i)
        raw_id, raw_base, raw_keep = b.get("id"), b.get("base"), b.get("keep")
        rid: str = raw_id if isinstance(raw_id, str) else f"#{recs[i].line}"
        base = built.get(raw_base) if isinstance(raw_base, str) else None
        keep: int = raw_keep if isinstance(raw_keep, int) and not isinstance(raw_keep, bool) else 0
        keep = max(0, min(keep, len(base[0]))) if base is not None else 0
        msgs = list(base[0][:keep]) if base is not None else []
        sums = list(base[1][:keep]) if base is not None else []
        unresolved = [] if base is not None or not b.get("base") else [f"base request {b.get('base')}"]
        capped = None
        tail = as_list(b.get("tail"))
        for h in tail:
            m = (blobs.get(h) or cands.get(h)) if isinstance(h, str) else None
            if m is None:
                if len(unresolved) < 100:
                    unresolved.append(str(h)[:80])
                continue
            n = sizes.get(id(m))
            if n is None:
                n = sizes[id(m)] = len(_json(m))
            total = (sums[-1] if sums else 0) + n
            if total > REQUEST_BYTES_CAP:
                capped = (
                    f"cut at message {len(msgs):,}: its messages pass the API's limit of "
                    f"{REQUEST_BYTES_CAP >> 20} MB a request (no request this large was sent)"
                )
                break
            msgs.append(m)  # shared: _set_path copies what it marks
            sums.append(total)
        refs += len(msgs)
        if refs > MAX_REFERENCES:
            msgs, sums = [], []
            capped = (
                f"not rebuilt: the requests before it already hold {MAX_REFERENCES:,} messages, inspector's limit "
                "for one transcript"
            )
        built[rid] = (msgs, sums)
        params = as_dict(b.get("params"))
        shape_hash = b.get("shapeHash")
        shape = (shapes.get(shape_hash) if isinstance(shape_hash, str) else None) or {}
        request: dict[str, Any] = {
            **params,
            "system": shape.get("system"),
            "tools": shape.get("tools"),
            "messages": [dict(m) for m in msgs],
        }
        for cc in as_list(b.get("cacheControl")):
            if isinstance(cc, dict):
                _set_path(request, cc.get("path"), cc.get("value"))
        out.append(
            RebuiltRequest(
                rid,
                i,
                recs[i].timestamp,
                b.get("querySource") if isinstance(b.get("querySource"), str) else None,
                params.get("model") if isinstance(params.get("model"), str) else None,
                request,
                replies.get(rid, []),
                unresolved,
                b.get("agentId") if isinstance(b.get("agentId"), str) else None,
                _not_recorded(params, unrecorded),
                capped,
            )
        )
    return out


# The classifier's safeguards go with every auto-mode request and are recorded with none from 2.1.328 (measured);
# 2.1.300 sent them with the first such request of each process and recorded them there (generated seed 152000); the
# releases between were not measured
SAFEGUARDS_UNRECORDED_FROM = (2, 1, 328)


def _not_recorded(params: dict[str, Any], unrecorded: bool = True) -> list[str]:
    """What a request carried that its api-request row leaves out: with the auto-mode beta (the REPL's auto
    permission mode), the classifier's `safeguards` (its rules, the git state, the folders), from 2.1.328
    (`unrecorded`); an older release records them with the request that sent them."""
    betas = as_list(params.get("betas"))
    afk = any(isinstance(b, str) and b.startswith("afk-mode-") for b in betas)
    return ["safeguards"] if afk and unrecorded else []


def _set_path(obj: Any, path: Any, value: Any) -> None:
    """Put a cache marker back where Claude Code had it (`["messages", 0, "content", 8]`). Every container on the
    path is copied before it is changed: the messages are shared with the requests that extend this one, which
    must not carry this one's marker (each request has its own breakpoints)."""
    if not isinstance(path, list) or not path or not isinstance(value, dict):
        return
    cur = obj
    for n, key in enumerate(path):
        if isinstance(cur, dict) and isinstance(key, str) and key in cur:
            child = cur[key]
            if isinstance(child, str) and n + 1 < len(path) and isinstance(path[n + 1], int):
                child = [{"type": "text", "text": child}]  # a string content marked in its block form (a system turn)
                cur[key] = child
            elif isinstance(child, (dict, list)):
                child = dict(child) if isinstance(child, dict) else list(child)
                cur[key] = child
            cur = child
        elif isinstance(cur, list) and isinstance(key, int) and not isinstance(key, bool) and 0 <= key < len(cur):
            child = cur[key]
            if isinstance(child, str):  # a string content becomes its block form to carry a marker
                child = {"type": "text", "text": child}
            elif isinstance(child, (dict, list)):
                child = dict(child) if isinstance(child, dict) else list(child)
            cur[key] = child
            cur = child
        else:
            return
    if isinstance(cur, dict):
        cur["cache_control"] = value


def recorded_shape(s: Session) -> dict[str, Any] | None:
    """The system prompt and tools of the session's last recorded main-thread request (2.1.3xx), else None."""
    for q in reversed(rebuild_requests(s)):
        if q.agent_id is None and q.request.get("system") is not None:
            return q.request
    return None


def request_before(s: Session, requests: list[RebuiltRequest], index: int) -> RebuiltRequest | None:
    """The last main-thread request recorded before record `index` in the file and sent before it was written (a
    REPL of 2.1.332 can record the request it sends after a compaction before the compaction's boundary)."""
    best = None
    at = s.records[index].timestamp if 0 <= index < len(s.records) else None
    for q in requests:
        if q.index < index and q.agent_id is None and not (at and q.timestamp and q.timestamp > at):
            best = q
    return best


def message_texts(message: dict[str, Any]) -> list[tuple[str, str]]:
    """(kind, text) of each block of an API message, for counting what fills a request."""
    out = []
    for b in (
        iter_blocks(message.get("content"))
        if isinstance(message.get("content"), list)
        else [{"type": "text", "text": message.get("content") or ""}]
    ):
        t = b.get("type")
        if t == "text":
            out.append(("text", str(b.get("text", ""))))
        elif t == "tool_use":
            out.append(("tool_use", f"{b.get('name', '')}{_json(b.get('input', {}))}"))
        elif t == "tool_result":
            c = b.get("content")
            out.append(("tool_result", c if isinstance(c, str) else "\n".join(str(x.get("text", "")) for x in iter_blocks(c))))
        elif t in ("thinking", "redacted_thinking"):
            out.append(("thinking", str(b.get("thinking") or b.get("data") or "")))
        else:
            out.append((str(t), _json(b)))
    return out
