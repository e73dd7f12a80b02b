"""What a session looks like, as plain data: timeline rows and a record's parts.

The app's timeline and detail pane and the `show` command draw the same views. Each row's kind and
label come from the record index alone, and a short text snippet is decoded from the body only when
the row is drawn (cached), so filtering 100k records costs no body decoding. Nothing here imports
Textual or Rich.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from inspector.library.search import Query, search_file
from inspector.textutil import human_size, printable
from inspector.transcript.records import (
    F_COMPACT_SUMMARY,
    F_IMAGE,
    F_META,
    F_SYNTHETIC,
    F_TEXT,
    F_THINKING,
    F_TOOL_ERROR,
    Record,
    context_tokens,
    iter_blocks,
    opt_count,
    text_of,
    tool_result_text,
)
from inspector.transcript.session import Session

_OTHER_KINDS = {"attachment": "attachment", "progress": "progress"}  # any other type (not user, assistant, system)


def row_kind(r: Record) -> str:
    """The row a record makes (called for every record of the timeline: its type first, no property on the way)."""
    t = r.type
    if t == "user":
        if r.flags & F_COMPACT_SUMMARY:
            return "summary"
        if r.tool_results:
            return "tool_result"
        return "user"
    if t == "assistant":
        if r.tool_uses:
            return "tool_call"
        if r.flags & F_THINKING and not r.flags & F_TEXT:
            return "thinking"
        return "assistant"
    if t == "system":  # (a compaction's and a microcompaction's boundaries are system records)
        st = r.subtype
        return "boundary" if st == "compact_boundary" or st == "microcompact_boundary" else "system"
    return _OTHER_KINDS.get(t, "metadata")


def passes(r: Record, kind: str, hidden: frozenset[str]) -> bool:
    """Does a row survive the filters? `hidden` holds filter names: user, assistant, tool_calls, thinking, system, metadata."""
    if "user" in hidden and kind in ("user", "summary"):
        return False
    if "assistant" in hidden and kind == "assistant":
        return False
    if "tool_calls" in hidden and kind in ("tool_call", "tool_result"):
        return False
    if "thinking" in hidden and (kind == "thinking" or (r.flags & F_THINKING and kind == "assistant")):
        return False
    if "system" in hidden and kind in ("system", "progress", "attachment"):
        return False
    if "metadata" in hidden and kind == "metadata":
        return False
    return True


class Row:
    """One timeline row. Its label (from the index: type, tool names, sizes) is made when first read: a timeline of
    100k records draws a screenful of them, and making them all took a third of a large session's load."""

    __slots__ = ("index", "kind", "time", "tokens", "on_chain", "_session", "_label")

    def __init__(self, index: int, kind: str, time: str, tokens: int | None, session: Session, on_chain: bool) -> None:
        self.index = index  # record index
        self.kind = kind
        self.time = time  # HH:MM:SS
        self.tokens = tokens  # context at this response (API usage), if it is one
        self.on_chain = on_chain
        self._session = session
        self._label: str | None = None

    @property
    def label(self) -> str:
        if self._label is None:
            self._label = label_of(self._session, self.index)
        return self._label

    def __repr__(self) -> str:
        return f"Row({self.index}, {self.kind!r}, {self.time!r}, {self.tokens!r}, on_chain={self.on_chain})"


def label_of(s: Session, i: int) -> str:
    r = s.records[i]
    kind = row_kind(r)
    if kind == "boundary":
        if r.is_compact_boundary:
            m = r.get("compact") or {}
            pre = opt_count(m.get("preTokens"))
            trigger = m.get("trigger") if isinstance(m.get("trigger"), str) else "?"
            return f"══ compaction ({printable(trigger)}) at {pre:,} tokens ══" if pre is not None else "══ compaction ══"
        m = r.get("microcompact") or {}
        saved = opt_count(m.get("tokensSaved"))
        return f"── microcompaction: {saved:,} tokens saved ──" if saved is not None else "── microcompaction ──"
    if kind == "tool_call":
        return "call " + ", ".join(name for _, name in r.tool_uses)
    if kind == "tool_result":
        names = [s.tool_name(t) or "?" for t in r.tool_results]
        err = " ERROR" if r.flags & F_TOOL_ERROR else ""
        persisted = " [persisted]" if r.get("persisted") else ""
        return f"result {', '.join(names)}{err} ({human_size(r.content_chars)}){persisted}"
    if kind == "summary":
        return "compact summary"
    if kind == "system":
        return f"system {r.subtype or ''}".strip()
    if kind == "attachment":
        return f"attachment {r.get('attachment_type') or ''}".strip()
    if kind == "metadata":
        return METADATA_LABELS.get(r.type, r.type or "(no type)")
    if kind == "progress":
        return f"progress {r.get('progress_type') or ''}".strip()
    extra = " [image]" if r.flags & F_IMAGE else ""
    if r.flags & F_META:
        extra += " [meta]"
    if kind == "assistant" and r.flags & F_THINKING:
        extra += " [thinking]"
    return f"{kind}{extra}"


# Readable names of the bookkeeping records (2.1.88 §2.1; format-2.1.3xx.md §3.1); an unknown type shows as written
METADATA_LABELS = {
    "api-request": "API request sent",
    "api-request-shape": "API request: system prompt and tools",
    "api-request-blob": "API request: a message as sent",
    "api-request-resumed": "API request resumed",
    "cost-state": "cost so far (Claude Code's own count)",
    "tools-used": "tools used so far",
    "file-history-snapshot": "file backups (for rewind)",
    "file-history-delta": "file backups (for rewind)",
    "queue-operation": "queued prompt",
    "last-prompt": "last prompt",
    "custom-title": "title (yours)",
    "ai-title": "title (generated)",
    "summary": "summary (legacy title)",
    "atis-latch": "latched request setting",
    "content-replacement": "tool results replaced in what is sent",
    "permission-mode": "permission mode",
    "mode": "session mode",
    "worktree-state": "worktree",
    "pr-link": "pull request",
    "tag": "tag",
    "attribution-snapshot": "attribution",
    "task-summary": "what it is doing",
}


def build_rows(s: Session, *, scope: str = "chain", hidden: frozenset[str] = frozenset()) -> list[Row]:
    """Rows for the timeline. scope: "chain" (the logical chain), "file" (every record in file order)."""
    conv = s.conversation
    records = s.records
    on = set(conv.logical_chain)
    indexes = conv.logical_chain if scope == "chain" else range(len(records))
    last_frag: dict[str, int] = {}
    for i in indexes:
        r = records[i]
        # (a response with real usage: has_real_usage, spelled out for the tens of thousands of records)
        if r.type == "assistant" and r.usage is not None and not r.flags & F_SYNTHETIC and r.message_id:
            last_frag[r.message_id] = i
    rows = []
    append = rows.append
    for i in indexes:
        r = records[i]
        kind = row_kind(r)
        if hidden and not passes(r, kind, hidden):
            continue
        tok = None
        u = r.usage
        if (
            u
            and r.type == "assistant"
            and not r.flags & F_SYNTHETIC
            and (r.message_id is None or last_frag.get(r.message_id) == i)
        ):
            tok = context_tokens(u)
        ts = r.timestamp
        append(Row(i, kind, ts[11:19] if ts and len(ts) >= 19 else "", tok, s, i in on))
    return rows


class Snippets:
    """One-line text of a record, decoded from its body when first drawn (LRU cached)."""

    def __init__(self, s: Session, size: int = 2048) -> None:
        self.s = s
        self.size = size
        self._cache: OrderedDict[int, str] = OrderedDict()

    def get(self, i: int) -> str:
        v = self._cache.get(i)
        if v is not None:
            self._cache.move_to_end(i)
            return v
        try:
            v = snippet(self.s, i)
        except Exception:  # noqa: BLE001 - a record that cannot be re-read shows as such
            v = "(cannot read this record)"
        self._cache[i] = v
        if len(self._cache) > self.size:
            self._cache.popitem(last=False)
        return v


def snippet(s: Session, i: int, width: int = 200) -> str:
    body = s.body(i)
    r = s.records[i]
    msg = body.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    text = ""
    if r.tool_uses:
        for b in iter_blocks(content):
            if b.get("type") == "tool_use":
                inp = b.get("input") if isinstance(b.get("input"), dict) else {}
                for key in ("file_path", "command", "pattern", "url", "description", "prompt", "query", "path"):
                    if isinstance(inp.get(key), str):
                        text = inp[key]
                        break
                break
    elif r.tool_results:
        for b in iter_blocks(content):
            if b.get("type") == "tool_result":
                text = tool_result_text(b.get("content"))
                break
    elif isinstance(msg, dict):
        text = text_of(content)
        if not text:
            for b in iter_blocks(content):
                if b.get("type") == "thinking" and isinstance(b.get("thinking"), str):
                    text = b["thinking"] or thinking_not_shown(body, short=True)
                    break
    elif isinstance(body.get("content"), str):
        text = body["content"]
    elif r.type == "attachment":
        text = attachment_text(body) or "(bookkeeping: not sent to the model)"
    elif r.type == "api-request":
        params = body.get("params") if isinstance(body.get("params"), dict) else {}
        tail = body.get("tail") if isinstance(body.get("tail"), list) else []
        keep = body.get("keep") if isinstance(body.get("keep"), int) else 0
        text = (
            f"{params.get('model', '?')} · {body.get('querySource', '?')} · {keep + len(tail)} messages "
            f"({keep} reused, {len(tail)} new) · id {body.get('id')}"
        )
    elif r.type == "api-request-blob":
        m = body.get("message") if isinstance(body.get("message"), dict) else {}
        text = f"{m.get('role', '?')}: {text_of(m.get('content'))}"
    elif r.type == "cost-state":
        cost = body.get("totalCostUSD")
        text = f"${cost:.4f} in all" if isinstance(cost, (int, float)) and not isinstance(cost, bool) else "cost"
        usage = body.get("modelUsage")
        if isinstance(usage, dict):
            text += " · " + ", ".join(
                f"{m}: ${u.get('costUSD', 0):.4f}"
                for m, u in usage.items()
                if isinstance(u, dict) and isinstance(u.get("costUSD"), (int, float))
            )
    elif r.type == "tools-used":
        tools = body.get("tools")
        text = ", ".join(str(t) for t in tools) if isinstance(tools, list) else ""
    elif r.type not in ("user", "assistant"):
        text = ", ".join(
            f"{k}={v}"
            for k, v in body.items()
            if isinstance(v, (str, int))
            and k
            not in (
                "type",
                "uuid",
                "parentUuid",
                "sessionId",
                "timestamp",
                "cwd",
                "version",
                "gitBranch",
                "userType",
                "isSidechain",
            )
        )
    return printable(" ".join(text.split()))[:width]


def attachment_text(body: dict[str, Any]) -> str:
    """What an attachment put in front of the model: its `rendered` text (2.1.3xx keeps it exactly as sent), else
    the readable fields of older attachments (content, prompt, the file name)."""
    rendered = body.get("rendered")
    if isinstance(rendered, list):
        parts = [x.get("content") for x in rendered if isinstance(x, dict) and isinstance(x.get("content"), str)]
        if parts:
            return "\n".join(parts)
    att = body.get("attachment") if isinstance(body.get("attachment"), dict) else {}
    for key in ("content", "prompt", "text", "filename", "planFilePath"):
        v = att.get(key)
        if isinstance(v, str) and v:
            return v
        if isinstance(v, list):
            texts = [x for x in v if isinstance(x, str)]
            if texts:
                return "\n".join(texts)
    return ""


def search_records(s: Session, needle: str) -> list[int]:
    """Indexes of the records whose readable text (or persisted output) contains `needle`, case-insensitive.

    The core search (`inspector.library.search`): the JSON around the text is not searched."""
    if not needle:
        return []
    by_offset = {r.offset: k for k, r in enumerate(s.records)}
    hits = search_file(s.path, Query(needle))
    return sorted({by_offset[h.offset] for h in hits if h.offset in by_offset})


# ---------------------------------------------------------------------------------------------
# one record, in full


TEXT_CAP = 20_000  # characters of one block shown before it is cut (the raw view and paging show more)
MARKDOWN_CAP = 12_000  # longer texts are shown as plain text, not rendered
JSON_CAP = 200_000


@dataclass(frozen=True, slots=True)
class Part:
    """One piece of a record's view. kind: head, label, text, markdown, thinking, note, persisted (a note that
    a full output can be read) or json."""

    kind: str
    text: str


def pretty(obj: Any) -> str:
    from inspector.textutil import deep_recursion

    with deep_recursion():  # a record may nest a thousand levels deep
        return json.dumps(obj, indent=2, ensure_ascii=False, default=str)


def media(b: dict[str, Any]) -> str:
    src = b.get("source") if isinstance(b.get("source"), dict) else {}
    data = src.get("data") if isinstance(src.get("data"), str) else ""
    return f"[{b.get('type')}: {src.get('media_type', '?')}, {human_size(len(data) * 3 // 4)}]"


def response_cost(s: Session, i: int) -> tuple[Any, Any]:
    """(the API response this record belongs to, its cost in USD or None when its model has no price); (None, None)
    when the record is no response. Memoised per session until it grows."""
    from inspector.library.cost import PriceTable, response_key, responses

    r = s.records[i]
    memo = s.__dict__.get("_cost_memo")
    if memo is None or memo[0] != len(s.records):
        memo = (len(s.records), {resp.key: resp for resp in responses(s)}, PriceTable.load())
        s.__dict__["_cost_memo"] = memo
    resp = memo[1].get(response_key(r))
    return (resp, resp.cost(memo[2])) if resp is not None else (None, None)


def response_cost_words(s: Session, i: int) -> str:
    """What the API response this record belongs to cost (its fragments merged), by the shipped or the user's prices."""
    from inspector.library.cost import usd

    r = s.records[i]
    resp, c = response_cost(s, i)
    if resp is None:
        return "cost: ?"
    if c is None:
        return f"cost: no price for {r.model} (add it to the prices file)"
    split = f", {resp.cache_write_1h:,} of the cache writes for 1 hour" if resp.cache_write_1h else ""
    return f"cost of this response: {usd(c)} ({r.model}, prices of {s.__dict__['_cost_memo'][2].date}{split})"


def iteration_words(r: Record) -> str:
    """The sampling iterations of a response (a server tool loop, an advisor): each one's figures, and which of them
    the context series uses, by the rule of the release that wrote it."""
    rows = (r.extra or {}).get("iterations")
    if not rows:
        return ""
    lines = [
        f"\n  iteration {k + 1}: {row[0]}{' ' + row[1] if row[1] else ''}  input {row[2]:,} + cache creation {row[3]:,} "
        f"+ cache read {row[4]:,} + output {row[5]:,} = {sum(row[2:6]):,}"
        for k, row in enumerate(rows)
    ]
    billed = (r.extra or {}).get("billed")
    if billed:
        why = (
            f"the context is the last iteration's ({sum(r.usage or ()):,}): Claude Code {r.version or '?'} reads it so "
            f"(2.1.153 and later); billed: the sum, {sum(billed):,}"
        )
    else:
        why = f"the context is the top-level usage ({sum(r.usage or ()):,}), as Claude Code {r.version or '?'} counts it"
    adv = [row for row in rows if row[0] == "advisor_message"]
    if adv:
        why += "; the advisor's iterations are priced at the advisor's model, beside the response"
    return f"\nsampled in {len(rows)} iterations, {why}:" + "".join(lines)


def record_parts(s: Session, i: int, *, raw: bool = False) -> list[Part]:
    """The selected record, block by block: what the detail pane and `inspector show --line` print.

    Texts are as written (untrusted): whoever draws them makes them printable."""
    r = s.records[i]
    try:
        body = s.body(i)
    except Exception as exc:  # noqa: BLE001
        return [Part("note", f"This record cannot be re-read: {exc}")]
    head = (
        f"{r.type}{' / ' + r.subtype if r.subtype else ''}   line {r.line}   {r.timestamp or ''}\nuuid {r.uuid or '-'}   "
        f"parent {r.parent or '-'}"
    )
    if r.model:
        head += f"\nmodel {r.model}   message {r.message_id or '-'}"
    if r.usage:
        u = r.usage
        head += f"\nusage: input {u[0]:,} + cache creation {u[1]:,} + cache read {u[2]:,} + output {u[3]:,} = {sum(u):,}"
        if r.type == "assistant":
            head += "\n" + response_cost_words(s, i)
        head += iteration_words(r)
    parts = [Part("head", head)]
    if raw:
        return parts + [Part("json", pretty(body))]
    msg = body.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(content, str):
        parts += _text(
            "summary" if r.is_compact_summary else r.type, content, markdown=r.type == "assistant" or r.is_compact_summary
        )
    for b in iter_blocks(content):
        parts += _block(s, r, b, body)
    if r.type not in ("user", "assistant"):
        shown = {
            k: v
            for k, v in body.items()
            if k
            not in (
                "parentUuid",
                "isSidechain",
                "userType",
                "cwd",
                "sessionId",
                "version",
                "gitBranch",
                "uuid",
                "timestamp",
                "type",
                "subtype",
                "slug",
                "entrypoint",
            )
        }
        parts.append(Part("json", pretty(shown)))
    tur = body.get("toolUseResult")
    if tur is not None:
        parts.append(Part("label", "toolUseResult (the tool's structured output, beside what the model saw)"))
        parts.append(Part("json", pretty(tur)[:10_000]))
    return parts


def thinking_not_shown(body: dict[str, Any], short: bool = False) -> str:
    """What an empty thinking block is: the reasoning the API did not return (Claude Code 2.1.3xx asks for it
    omitted, `thinkingDisplay: "omitted"`: the block holds only its signature, sent back as it came), with how long the
    model thought when the record says. `short`: the few words of a timeline row."""
    ms = body.get("thinkingDurationMs")
    ms = ms if isinstance(ms, int) and not isinstance(ms, bool) and ms >= 0 else None
    omitted = body.get("thinkingDisplay") == "omitted"
    if short:
        what = "(reasoning omitted by the API" if omitted else "(no reasoning text"
        return what + (f" · {ms:,} ms)" if ms is not None else ")")
    took = f"; thought for {ms:,} ms" if ms is not None else ""
    if omitted:
        return f"(reasoning omitted by the API, as Claude Code asks: only its signature is kept{took})"
    return f"(no reasoning text: only its signature is kept{took})"


def _text(label: str, text: str, *, markdown: bool) -> list[Part]:
    return [Part("label", label), Part("markdown" if markdown and len(text) <= MARKDOWN_CAP else "text", text)]


def _block(s: Session, r: Record, b: dict[str, Any], body: dict[str, Any]) -> list[Part]:
    t = b.get("type")
    if t == "text" and isinstance(b.get("text"), str):
        return _text("text", b["text"], markdown=r.type == "assistant")
    if t == "thinking":
        text = b.get("thinking")
        if isinstance(text, str) and text:
            return [Part("label", "thinking"), Part("thinking", text)]
        return [Part("label", "thinking"), Part("note", thinking_not_shown(body))]
    if t == "redacted_thinking":
        return [Part("label", "redacted thinking")]
    if t == "tool_use":
        return [Part("label", f"tool call {b.get('name', '?')}  ({b.get('id', '')})"), Part("json", pretty(b.get("input", {})))]
    if t == "tool_result":
        tid = b.get("tool_use_id", "")
        name = s.tool_name(tid) if isinstance(tid, str) else None
        inner = b.get("content")
        text = tool_result_text(inner)
        out = [
            Part("label", f"tool result {name or ''}  ({tid}){'  ERROR' if b.get('is_error') else ''}  {human_size(len(text))}")
        ]
        for po in s.persisted_outputs:
            if po.tool_use_id == tid:
                if po.file is not None:
                    out.append(Part("persisted", f"Full output persisted in {po.file} ({human_size(po.file_size)})"))
                elif po.marker is not None:
                    out.append(
                        Part(
                            "note",
                            f"Persisted output ({po.marker.size_text}) recorded at {po.marker.path}: the file is not in "
                            "this session's folder",
                        )
                    )
        out.append(Part("text", text))
        for ib in iter_blocks(inner):
            if ib.get("type") in ("image", "document"):
                out.append(Part("note", media(ib)))
        return out
    if t in ("image", "document"):
        return [Part("note", media(b))]
    return [Part("label", f"{t} block"), Part("json", pretty(b))]


# ---------------------------------------------------------------------------------------------
# Markdown


_BACKTICKS = re.compile("`+")
_MD_SPECIAL = re.compile(r"[\\`*_\[\]<>#|]")


def _fence(text: str, lang: str = "") -> str:
    """A fenced block that the text cannot close: longer than any run of backticks inside it."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def parts_markdown(parts: list[Part]) -> str:
    """One record's parts as Markdown (untrusted text stays inside fences, or is shown literally)."""
    out: list[str] = []
    for p in parts:
        text = printable(p.text, keep_newlines=True)
        if p.kind == "head":
            first, _, rest = text.partition("\n")
            out.append(f"### {md_inline(first)}")
            if rest.strip():
                out.append("<sub>" + " · ".join(md_inline(line) for line in rest.splitlines() if line.strip()) + "</sub>")
        elif p.kind == "label":
            out.append(f"**{md_inline(text)}**")
        elif p.kind == "markdown":
            out.append(text.rstrip().replace("<", "&lt;"))  # the model's Markdown, rendered; raw HTML is not
        elif p.kind == "thinking":
            out.append("\n".join("> " + line for line in text.rstrip().splitlines()) or ">")
        elif p.kind in ("note", "persisted"):
            out.append(f"*{md_inline(text)}*")
        elif p.kind == "json":
            out.append(_fence(text, "json"))
        else:
            out.append(_fence(text))
    return "\n\n".join(out) + "\n"


def md_inline(text: str) -> str:
    """Text for one Markdown line: no line breaks, markup characters escaped."""
    return _MD_SPECIAL.sub(r"\\\g<0>", " ".join(text.split()))


def export_markdown(s: Session, *, scope: str = "chain") -> Iterator[str]:
    """The conversation (scope "chain") or every record of the file ("file") as Markdown, record by record."""
    rows = build_rows(s, scope=scope)
    yield (
        f"# {md_inline(printable(s.title or s.session_id))}\n\n<sub>{md_inline(printable(s.cwd or ''))} · session "
        f"{md_inline(s.session_id)} · Claude Code {md_inline(printable(s.version or '?'))} · {len(rows):,} records"
        f"{' (every record of the file)' if scope == 'file' else ' (the conversation)'}</sub>\n\n"
    )
    for row in rows:
        yield parts_markdown(record_parts(s, row.index)) + "\n"


def export_name(s: Session) -> str:
    """A file name for an export: the title's words and the session id's first characters."""
    words = "".join(ch if ch.isalnum() else " " for ch in (s.title or "session").lower()).split()
    return "-".join(words[:8])[:60].strip("-") + f"-{s.session_id[:8]}.md"
