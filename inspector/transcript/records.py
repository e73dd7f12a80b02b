"""What one JSONL line says, reduced to a compact index entry.

A transcript line is decoded once while the file is indexed; the facts the rest of the
program needs (type, uuid, parent, usage, tool ids, sizes, a few metadata values) are kept
in a small `Record`, and the body is decoded again from disk only when someone asks for it.
Everything here is lenient: a field of the wrong type is treated as absent, never as an error.
"""

from __future__ import annotations

import gc
import json
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from sys import intern as _intern
from typing import Any, cast

import orjson

from inspector.textutil import deep_recursion, without_surrogates

# Record types that take part in the parentUuid chain (§2.1, §2.6). Unknown types that carry a
# uuid are chain nodes too (§10): they are kept as opaque structural records.
MESSAGE_TYPES = frozenset({"user", "assistant"})

# Metadata entries whose last value matters (§2.1). Kept whole because they are tiny.
SMALL_METADATA_TYPES = frozenset(
    {
        "summary",
        "custom-title",
        "ai-title",
        "last-prompt",
        "task-summary",
        "tag",
        "agent-name",
        "agent-color",
        "agent-setting",
        "pr-link",
        "mode",
        "worktree-state",
        "permission-mode",
        "cost-state",  # 2.1.3xx: Claude Code's own cost counters (last wins)
        "tools-used",  # 2.1.3xx: the tools used so far
    }
)

SYNTHETIC_MODEL = "<synthetic>"

# Texts of synthetic assistant/user records (§2.3, §3.1). Rejection texts are matched by prefix.
INTERRUPT_TEXTS = (
    "[Request interrupted by user]",
    "[Request interrupted by user for tool use]",
)
SYNTHETIC_TEXTS = frozenset(
    INTERRUPT_TEXTS
    + (
        "No response requested.",
        "The user doesn't want to take this action right now. STOP what you are doing and wait "
        "for the user to tell you how to proceed.",
    )
)
REJECT_PREFIX = "The user doesn't want to proceed with this tool use."

# what the rewind menus leave out of the user messages they list (the tags a message's text holds): 2.1.88's
# selector and 2.1.328's menu alike (both also a teammate's message, each in its own way)
MENU_HIDDEN_TAGS = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<task-notification>",
    "<tick>",
)

# Text a user record starts with when it is not a prompt someone typed (tags, caveats, interrupts)
NOT_TYPED = ("<", "Caveat:", "[Request")
# Where a session's title comes from, first match wins (§2.1): the user's, the generated one, the legacy summary
TITLE_SOURCES = (("custom-title", "customTitle"), ("ai-title", "aiTitle"), ("summary", "summary"))

PERSISTED_OPEN = "<persisted-output>"
_PERSISTED_RE = re.compile(
    r"^<persisted-output>\s*\nOutput too large \((?P<size>[^)]*)\)\. Full output saved to: (?P<path>[^\n]*)\n"
    r"(?:\s*\nPreview \([^)]*\):\n)?(?P<preview>.*?)(?:\n\.\.\.)?\n?</persisted-output>\s*$",
    re.S,
)

COMPACT_SUMMARY_PREFIX = "This session is being continued from a previous conversation"

# 2.1.3xx rows that hold copies of API messages (as sent), not conversation records
REQUEST_COPY_TYPES = frozenset({"api-request-blob", "api-request-resumed"})

# Record.flags bits
F_COMPACT_SUMMARY = 1 << 0  # user record with isCompactSummary (or the legacy text prefix)
F_VISIBLE_ONLY = 1 << 1  # isVisibleInTranscriptOnly
F_SYNTHETIC = 1 << 2  # synthetic assistant (model <synthetic> or a synthetic text)
F_THINKING = 1 << 3
F_IMAGE = 1 << 4
F_TEXT = 1 << 5  # has a non-empty text block / string content
F_STRING_CONTENT = 1 << 6  # message.content is a string (typed prompt, summary, breadcrumb)
F_API_ERROR = 1 << 7
F_META = 1 << 8
F_SIDECHAIN = 1 << 9
F_TOOL_ERROR = 1 << 10
F_DOCUMENT = 1 << 11
F_INTERRUPT = 1 << 12
F_THINKING_ONLY = 1 << 13  # an assistant record whose content is thinking blocks only (a reply cut off while thinking)
F_TOO_LONG = 1 << 14  # an API error message that says the prompt is too long (the API's refusal, or Claude Code's block)

# up to 1.0.108 a compaction was its summary alone (`_Facts.is_unmarked_compaction`); 1.0.109 first writes a boundary
UNMARKED_COMPACTIONS_UNTIL = (1, 0, 109)
# what a /compact typed writes right after such a summary (1.0.17 names the command without its slash)
COMPACT_COMMANDS = ("<command-name>/compact</command-name>", "<command-name>compact</command-name>")

PROMPT_TOO_LONG = "Prompt is too long"  # how such a message starts (2.1.3xx adds " · automatic compaction failed" ...)


@dataclass(slots=True)
class PersistedMarker:
    """A `<persisted-output>` block found in a tool_result (§5.2)."""

    tool_use_id: str
    size_text: str  # as written, e.g. "231.4KB"
    path: str  # absolute path as recorded on the original machine; never opened as is
    preview_chars: int


class _Facts:
    """What every index entry answers, from its fields."""

    __slots__ = ()
    type: str
    subtype: str | None
    flags: int
    usage: tuple[int, int, int, int] | None
    extra: dict[str, Any] | None
    parent: str | None
    version: str | None

    @property
    def is_message(self) -> bool:
        return self.type in MESSAGE_TYPES

    @property
    def is_sidechain(self) -> bool:
        return bool(self.flags & F_SIDECHAIN)

    @property
    def is_meta(self) -> bool:
        return bool(self.flags & F_META)

    @property
    def is_compact_boundary(self) -> bool:
        return self.type == "system" and self.subtype == "compact_boundary"

    @property
    def is_microcompact_boundary(self) -> bool:
        return self.type == "system" and self.subtype == "microcompact_boundary"

    @property
    def is_compact_summary(self) -> bool:
        return bool(self.flags & F_COMPACT_SUMMARY)

    @property
    def is_unmarked_compaction(self) -> bool:
        """A compaction written as its summary alone: up to 1.0.108 Claude Code wrote no compact boundary, and the REPL
        started the conversation again from the summary, a record with no parent (measured: 1.0.51's REPL; the era
        matrix's compaction-written probe, 1.0.109 the first that writes a boundary). The summary is its own boundary."""
        if not (self.flags & F_COMPACT_SUMMARY) or self.parent is not None or self.type != "user" or self.flags & F_SIDECHAIN:
            return False
        from inspector.claude.release import at_or_after

        return not at_or_after(self.version, UNMARKED_COMPACTIONS_UNTIL, unknown=True)

    @property
    def starts_compaction(self) -> bool:
        """Where what a compaction left begins: its boundary, or (up to 1.0.108) its summary."""
        return self.is_compact_boundary or self.is_unmarked_compaction

    @property
    def has_real_usage(self) -> bool:
        """§3.1: an assistant response whose usage counts for context accounting."""
        return self.usage is not None and not (self.flags & F_SYNTHETIC)

    def get(self, key: str, default: Any = None) -> Any:
        return self.extra.get(key, default) if self.extra else default


@dataclass(slots=True)
class Record(_Facts):
    """The index entry of one decoded line. Bodies stay on disk until asked for."""

    line: int  # 1-based line number in the file
    offset: int  # byte offset of the line
    length: int  # bytes, without the newline
    type: str  # the line's `type` as written ("" if absent or not a string)
    subtype: str | None = None
    uuid: str | None = None
    parent: str | None = None
    logical_parent: str | None = None
    timestamp: str | None = None
    session_id: str | None = None
    agent_id: str | None = None
    message_id: str | None = None
    model: str | None = None
    request_id: str | None = None
    usage: tuple[int, int, int, int] | None = None  # input, cache creation, cache read, output
    stop_reason: str | None = None
    flags: int = 0
    tool_uses: tuple[tuple[str, str], ...] = ()  # (tool_use id, tool name)
    tool_results: tuple[str, ...] = ()  # tool_use ids answered by this record
    content_chars: int = 0  # characters of message content (text, thinking, tool io)
    cwd: str | None = None
    version: str | None = None
    extra: dict[str, Any] | None = field(default=None)  # small per-type facts (see index_record)


class BareRecord(_Facts):
    """The index entry of a line that carries nothing the conversation is built from: no uuid, no message, no
    fact inspector keeps (a file-history snapshot, a queue operation, an empty object). The same attributes as a
    Record at a third of its memory, so a file of millions of such lines costs its index, not gigabytes."""

    __slots__ = ("line", "offset", "length", "type", "timestamp", "session_id")
    subtype = uuid = parent = logical_parent = agent_id = message_id = model = request_id = None
    usage = stop_reason = cwd = version = extra = None
    flags = content_chars = 0
    tool_uses: tuple[tuple[str, str], ...] = ()
    tool_results: tuple[str, ...] = ()

    def __init__(self, line: int, offset: int, length: int, type: str, timestamp: str | None, session_id: str | None) -> None:
        self.line, self.offset, self.length, self.type, self.timestamp, self.session_id = (
            line,
            offset,
            length,
            type,
            timestamp,
            session_id,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (Record, BareRecord)):
            return NotImplemented
        names = (
            "line",
            "offset",
            "length",
            "type",
            "subtype",
            "uuid",
            "parent",
            "logical_parent",
            "timestamp",
            "session_id",
            "agent_id",
            "message_id",
            "model",
            "request_id",
            "usage",
            "stop_reason",
            "flags",
            "tool_uses",
            "tool_results",
            "content_chars",
            "cwd",
            "version",
            "extra",
        )
        return all(getattr(self, n) == getattr(other, n) for n in names)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"BareRecord(line={self.line}, offset={self.offset}, length={self.length}, type={self.type!r})"


_gc_lock = threading.Lock()
_gc_holders = 0
_gc_was_enabled = True


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large acyclic structure is built.

    Indexing allocates a few objects per line and none of them form cycles, yet each 700
    allocations start a collection that walks ever more live objects: on a 200 MB transcript
    that is about a fifth of the indexing time. Nested and concurrent uses are counted; the
    collector is re-enabled by the last one out, and only if it was enabled to begin with.
    """
    global _gc_holders, _gc_was_enabled
    with _gc_lock:
        if _gc_holders == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_holders += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_holders -= 1
            if _gc_holders == 0 and _gc_was_enabled:
                gc.enable()


# --------------------------------------------------------------------------------------------
# decoding


class LineError(ValueError):
    """A line that cannot be decoded as a JSON object."""


def _scrub(value: Any) -> Any:
    """Replace lone surrogates (which cannot be encoded) by U+FFFD, recursively."""
    if isinstance(value, str):
        return without_surrogates(value)
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    return value


_HUGE_INT = 1 << 63  # what an integer too long to be a number becomes: beyond every range a field accepts


def decode_line(raw: bytes) -> tuple[dict[str, Any], str | None]:
    """Decode one line. Returns (object, note); note says what had to be repaired, and why.

    orjson is tried first. A line it refuses is decoded again leniently, and the note names the cause:
    invalid UTF-8 or an escaped lone surrogate (replaced by U+FFFD), an integer beyond 64 bits (kept when
    small enough to mean something, else ignored), NaN or Infinity (not JSON: read as null).
    Raises LineError when the line is not a JSON object at all.
    """
    try:
        obj = orjson.loads(raw)
        note = None
    except orjson.JSONDecodeError as exc:
        causes: list[str] = []

        def constant(name: str) -> None:
            causes.append(f"{name} (not JSON) read as null")
            return None

        def integer(digits: str) -> int:
            # one of hundreds of digits (Python refuses over 4,300) stands for nothing a transcript means: it
            # becomes a value every numeric field ignores, instead of costing the whole record
            if len(digits.lstrip("-")) > 30:
                causes.append("an integer too long to be a number, ignored")
                return -_HUGE_INT if digits.startswith("-") else _HUGE_INT
            return int(digits)

        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", "replace")
            causes.append("invalid UTF-8 replaced by U+FFFD")
        try:
            obj = json.loads(text, parse_int=integer, parse_constant=constant)
            scrubbed = _scrub(obj)
            if "\\ud" in text.lower() and scrubbed != obj:
                causes.append("lone surrogate replaced by U+FFFD")
        except (ValueError, RecursionError):
            raise LineError(_short_reason(str(exc))) from None
        obj = scrubbed
        if not causes and ("integer" in str(exc).lower() or "64-bit" in str(exc)):
            causes.append("an integer beyond 64 bits")
        note = "; ".join(dict.fromkeys(causes)) or _short_reason(str(exc))
    except RecursionError:
        raise LineError("nesting too deep") from None
    if not isinstance(obj, dict):
        raise LineError(f"not a JSON object (a {type(obj).__name__})")
    return obj, note


def _short_reason(msg: str) -> str:
    return msg if len(msg) <= 120 else msg[:117] + "..."


# --------------------------------------------------------------------------------------------
# small typed accessors


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


MAX_TOKENS_FIELD = 1 << 40  # no real token count comes near; larger values are garbage, not numbers to add up


def opt_int(v: Any) -> int | None:
    """An int that JSON and the tables can carry (metadata numbers in a transcript can be anything)."""
    return v if isinstance(v, int) and not isinstance(v, bool) and -(1 << 53) < v < (1 << 53) else None


def opt_count(v: Any) -> int | None:
    """A token or message count from a transcript's metadata: a non-negative int, else None (a negative
    preTokens is garbage, not a number to show)."""
    n = opt_int(v)
    return n if n is not None and n >= 0 else None


def _int(v: Any) -> int:
    """A token count: an int (or float) in a sane range, else 0."""
    if isinstance(v, bool):
        return 0
    if isinstance(v, int):
        return v if 0 <= v < MAX_TOKENS_FIELD else 0
    if isinstance(v, float) and v == v and 0 <= v < MAX_TOKENS_FIELD:
        return int(v)
    return 0


def usage_tuple(usage: Any) -> tuple[int, int, int, int] | None:
    """(input, cache creation, cache read, output) from an API usage object, or None."""
    if not isinstance(usage, dict):
        return None
    return (
        _int(usage.get("input_tokens")),
        _int(usage.get("cache_creation_input_tokens")),
        _int(usage.get("cache_read_input_tokens")),
        _int(usage.get("output_tokens")),
    )


def _progress_response(m: Any) -> tuple[Any, ...] | None:
    """A subagent's response as an agent_progress record relays it (2.1.x): (model, timestamp, message id, request
    id, usage, billing extras), the only trace of what it cost when the subagent's own transcript is gone."""
    if not isinstance(m, dict) or m.get("type") != "assistant":
        return None
    inner = m.get("message")
    u = inner.get("usage") if isinstance(inner, dict) else None
    usage = usage_tuple(u)
    if usage is None or not isinstance(u, dict) or not isinstance(inner.get("id"), str):  # type: ignore[union-attr]
        return None
    return (
        _str(inner.get("model")),  # type: ignore[union-attr]
        _str(m.get("timestamp")),
        inner["id"],  # type: ignore[index]
        _str(m.get("requestId")),
        usage,
        billing_extras(u) or (0, 0, 0, 0),
    )


ITERATION_CONTEXT_TYPES = ("message", "fallback_message")  # an iteration of the response itself (2.1.328's `wv`)
ITERATION_SIDE_TYPES = ("advisor_message", "compaction")  # another model's or the server's (2.1.328's `bv`)


def last_iteration_usage(top: tuple[int, int, int, int], its: list[Any]) -> tuple[int, int, int, int]:
    """The usage Claude Code 2.1.328 and later read the context from (`H6`, read from the binary): the last
    iteration that is not an advisor's or a compaction's, when it is the response's own (type message or
    fallback_message), has the four counts and a prompt; else the top-level usage (also when that is all zero)."""
    if top[0] + top[1] + top[2] == 0:
        return top
    last = next((it for it in reversed(its) if not (isinstance(it, dict) and it.get("type") in ITERATION_SIDE_TYPES)), None)
    if not isinstance(last, dict) or last.get("type") not in ITERATION_CONTEXT_TYPES:
        return top
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
    raw = [last.get(k) for k in keys]
    vals = [v for v in raw if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < MAX_TOKENS_FIELD]
    if len(vals) != 4 or vals[0] + vals[1] + vals[2] <= 0:
        return top
    return (vals[0], vals[1], vals[2], vals[3])


def _iterations(
    top: tuple[int, int, int, int], its: list[Any], version: str | None, extra: dict[str, Any] | None
) -> tuple[tuple[int, int, int, int], dict[str, Any] | None]:
    """A response's usage when it lists sampling iterations: the top-level sum is what was billed; the context is
    the last iteration's in the releases that read it so (the era matrix's "iterations" probe), the sum before.
    Each iteration is kept for the record's view, an advisor's with its model for the price."""
    rows = []
    for it in its[:64]:
        if isinstance(it, dict):
            c = usage_tuple(it) or (0, 0, 0, 0)
            rows.append((_str(it.get("type")) or "?", _str(it.get("model")), *c))
    last = last_iteration_usage(top, its)
    if len(rows) < 2 and last == top:
        return top, extra  # one iteration, the same as the whole: nothing to say
    extra = dict(extra or {})
    extra["iterations"] = rows
    if last != top and reads_last_iteration(version):
        extra["billed"] = top  # what the API charged: the sum; the context: the last iteration
        return last, extra
    if last != top:
        extra["last_iteration"] = last  # what 2.1.153 and later would have read: this release counts the sum
    return top, extra


def reads_last_iteration(version: str | None) -> bool:
    """Whether the release that wrote a record reads its context from the last iteration: the era matrix's
    "iterations" probe, bisected over every release (2.1.152 reads the top-level sum, 2.1.153 the last iteration)."""
    from inspector.claude.measured import answer_at

    got = answer_at("iterations", version)
    if got is not None:
        return got
    from inspector.claude.release import at_or_after

    return at_or_after(version, (2, 1, 153))  # the matrix's file unreadable: its bisection, as recorded when written


def billing_extras(usage: dict[str, Any]) -> tuple[int, int, int, int] | None:
    """(1-hour cache writes, web search requests, fast mode, US-only inference) of an API usage object, when any is
    there: what the price of a response needs beyond the four counts (a 1-hour cache write costs more than a
    5-minute one; `speed: "fast"` and `inference_geo: "us"` multiply every rate, as Claude Code records them)."""
    cc = usage.get("cache_creation")
    h1 = _int(cc.get("ephemeral_1h_input_tokens")) if isinstance(cc, dict) else 0
    st = usage.get("server_tool_use")
    web = _int(st.get("web_search_requests")) if isinstance(st, dict) else 0
    fast = 1 if usage.get("speed") == "fast" else 0
    us = 1 if usage.get("inference_geo") == "us" else 0
    return (h1, web, fast, us) if h1 or web or fast or us else None


def context_tokens(u: tuple[int, int, int, int]) -> int:
    """§3.2 getTokenCountFromUsage: the full context at that API call."""
    return u[0] + u[1] + u[2] + u[3]


def json_copy(value: Any) -> Any:
    """A deep copy of a decoded JSON value, without recursion (a record can nest a thousand levels deep, past what
    `copy.deepcopy` survives)."""
    if not isinstance(value, (dict, list)):
        return value
    root: Any = {} if isinstance(value, dict) else []
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        src, dst = stack.pop()
        items = src.items() if isinstance(src, dict) else enumerate(src)
        for k, v in items:
            if isinstance(v, (dict, list)):
                c: Any = {} if isinstance(v, dict) else []
                stack.append((v, c))
            else:
                c = v
            if isinstance(dst, dict):
                dst[k] = c
            else:
                dst.append(c)
    return root


def dump_line(record: Any) -> bytes:
    """A record as one JSON line's bytes (no newline): orjson's form; a record orjson refuses (nested past its 255
    levels, an integer past 64 bits) in the same compact form by the json module."""
    try:
        return orjson.dumps(record)
    except (TypeError, orjson.JSONEncodeError):
        with deep_recursion():
            return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")


def iter_blocks(content: Any) -> Iterator[dict[str, Any]]:
    if isinstance(content, list):
        for b in content:
            if isinstance(b, dict):
                yield b


def text_of(content: Any) -> str:
    """The plain text of a message content (string, or the text blocks joined)."""
    if isinstance(content, str):
        return content
    parts = [b["text"] for b in iter_blocks(content) if b.get("type") == "text" and isinstance(b.get("text"), str)]
    return "\n".join(parts)


def first_typed_prompt(prompts: Iterable[str | None]) -> str | None:
    """The first prompt a person typed, of the `prompt` facts of a session's main-thread records in file order (see
    index_record): a slash command's record counts only when nothing else was typed (its name, then); what Claude
    Code injects (`<...>` blocks, caveats, "[Request interrupted…]") never. Session.first_prompt and the browser's
    cheap read (discovery.quick_info) both take it from here."""
    fallback = None
    for p in prompts:
        if p is None:
            continue
        s = p.strip()
        if s.startswith("<command-name>") or s.startswith("<command-message>"):
            m = re.search(r"<command-name>([^<]*)</command-name>", s)
            fallback = fallback or (m.group(1).strip() if m else None)
            continue
        if s.startswith(NOT_TYPED):
            continue
        return " ".join(s.split())
    return fallback


def _human_text(content: Any) -> str:
    """The text a person typed: the first text block that is not an injected <tag> block."""
    if isinstance(content, str):
        return content
    texts = [b["text"] for b in iter_blocks(content) if b.get("type") == "text" and isinstance(b.get("text"), str)]
    for t in texts:
        if t.strip() and not t.lstrip().startswith("<"):
            return t
    return "\n".join(texts)


def tool_result_text(content: Any) -> str:
    """The text of a tool_result's content (string or list of text blocks)."""
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in iter_blocks(content) if isinstance(b.get("text"), str))


def parse_persisted(text: str) -> tuple[str, str, str] | None:
    """(size text, recorded path, preview) of a `<persisted-output>` block, else None."""
    if not text.startswith(PERSISTED_OPEN):
        return None
    m = _PERSISTED_RE.match(text)
    if not m:
        # A marker we cannot fully parse is still a marker; keep what we can read.
        size, path = "", ""
        mm = re.search(r"Output too large \(([^)]*)\)\. Full output saved to: ([^\n]*)", text)
        if mm:
            size, path = mm.group(1), mm.group(2)
        else:  # an older shape: "<persisted-output>Tool result saved to: PATH ... Use Read to view"
            mm = re.search(r"(?:saved|Saved) to: ([^\n<]*)", text)
            if mm:
                path = mm.group(1).strip()
        return size, path, ""
    return m.group("size"), m.group("path"), m.group("preview")


# --------------------------------------------------------------------------------------------
# the index entry of one line


def index_record(obj: dict[str, Any], line: int, offset: int, length: int) -> Record:
    """Reduce a decoded line to its Record. Never raises on odd shapes.

    This runs once per line of every transcript opened, so it is written for speed: no helper
    calls on the common paths, one `Record(...)` call at the end.
    """
    get = obj.get
    intern = _intern
    v = get("type")
    t = intern(v) if v.__class__ is str else ""
    v = get("uuid")
    uuid = v if v.__class__ is str else None
    v = get("parentUuid")
    parent = v if v.__class__ is str else None
    v = get("timestamp")
    ts = v if v.__class__ is str else None
    v = get("logicalParentUuid")
    logical = v if v.__class__ is str else None
    # strings that repeat on every record (cwd, version, session id...) are interned: stored once
    v = get("subtype")
    subtype = (intern(v) if len(v) < 512 else v) if v.__class__ is str else None
    v = get("sessionId")
    session_id = (intern(v) if len(v) < 512 else v) if v.__class__ is str else None
    v = get("agentId")
    agent_id = (intern(v) if len(v) < 512 else v) if v.__class__ is str else None
    v = get("cwd")
    cwd = (intern(v) if len(v) < 512 else v) if v.__class__ is str else None
    v = get("version")
    version = (intern(v) if len(v) < 512 else v) if v.__class__ is str else None
    flags = 0
    if get("isSidechain") is True:
        flags = F_SIDECHAIN
    if get("isMeta") is True:
        flags |= F_META
    if get("isVisibleInTranscriptOnly") is True:
        flags |= F_VISIBLE_ONLY
    extra: dict[str, Any] | None = None
    content_chars = 0

    if t == "progress":
        data = get("data")
        if data.__class__ is dict:
            extra = {}
            dtype = data.get("type")
            if dtype == "agent_progress":
                v = data.get("agentId")
                aid = (v if v.__class__ is str else None) or agent_id
                if aid:
                    extra["progress_agent"] = aid
                    v = get("parentToolUseID")
                    if v.__class__ is str and v:
                        extra["progress_tool_use"] = v
                resp = _progress_response(data.get("message"))
                if resp is not None:
                    extra["progress_response"] = resp
            if dtype.__class__ is str and dtype:
                extra["progress_type"] = dtype
            if not extra:
                extra = None
        if "message" not in obj:
            return Record(
                line,
                offset,
                length,
                t,
                subtype,
                uuid,
                parent,
                logical,
                ts,
                session_id,
                agent_id,
                None,
                None,
                None,
                None,
                None,
                flags,
                (),
                (),
                0,
                cwd,
                version,
                extra,
            )
    elif t in SMALL_METADATA_TYPES and uuid is None:
        extra = {"meta": {k: v for k, v in obj.items() if k != "type"}}
    elif t == "content-replacement":
        reps = {}
        items = get("replacements")
        for r in items if isinstance(items, list) else ():
            if isinstance(r, dict) and isinstance(r.get("toolUseId"), str) and isinstance(r.get("replacement"), str):
                reps[r["toolUseId"]] = r["replacement"]
        extra = {"replacements": reps}
    elif t == "system":
        extra = {}
        if subtype == "compact_boundary":
            cm = get("compactMetadata")
            extra["compact"] = cm if isinstance(cm, dict) else {}
        elif subtype == "microcompact_boundary":
            mm = get("microcompactMetadata")
            extra["microcompact"] = mm if isinstance(mm, dict) else {}
        content = get("content")
        if isinstance(content, str):
            content_chars = len(content)
    elif t == "attachment":
        att = get("attachment")
        if isinstance(att, dict):
            extra = {"attachment_type": _str(att.get("type"))}
            ident = att.get("identity") if extra["attachment_type"] == "model" else None
            if isinstance(ident, dict) and isinstance(ident.get("modelId"), str):
                # 2.1.3xx announces the model a process runs as it starts or switches (with its [1m]): the model in
                # force from here, before any reply of it
                extra["announced_model"] = ident["modelId"]
            if isinstance(get("rendered"), list):
                extra["rendered"] = True  # 2.1.3xx: sent to the API as this text, and a node of the chain a resume sends

    message = get("message") if t not in REQUEST_COPY_TYPES else None  # a request's copy of a message is not the message
    message_id = model = request_id = usage = stop_reason = None
    tool_uses: tuple[tuple[str, str], ...] = ()
    tool_results: tuple[str, ...] = ()
    if message.__class__ is dict or isinstance(message, dict):
        content = message.get("content")
        chars = 0
        first_block: Any = None
        if content.__class__ is str:
            flags |= F_STRING_CONTENT
            chars = len(content)
            if content.strip():
                flags |= F_TEXT
            if t == "user" and content.startswith(COMPACT_SUMMARY_PREFIX):
                flags |= F_COMPACT_SUMMARY
        elif isinstance(content, list):
            uses: list[tuple[str, str]] | None = None
            results: list[str] | None = None
            persisted: list[PersistedMarker] | None = None
            thinking_only = bool(content)  # every block a thinking or redacted_thinking one (Claude Code's test)
            for b in content:
                if not isinstance(b, dict):
                    thinking_only = False
                    continue
                if first_block is None:
                    first_block = b
                bt = b.get("type")
                if bt == "text":
                    txt = b.get("text")
                    if txt.__class__ is str:
                        chars += len(txt)
                        if not flags & F_TEXT and txt.strip():
                            flags |= F_TEXT
                elif bt == "tool_use":
                    v = b.get("id")
                    if v.__class__ is str and v:
                        name = b.get("name")
                        if uses is None:
                            uses = []
                        uses.append((v, name if name.__class__ is str and name else "?"))
                    try:
                        chars += len(orjson.dumps(b.get("input")))
                    except TypeError:
                        pass
                elif bt == "tool_result":
                    tid = b.get("tool_use_id")
                    if tid.__class__ is not str or not tid:
                        tid = None
                    else:
                        if results is None:
                            results = []
                        results.append(tid)
                    if b.get("is_error") is True:
                        flags |= F_TOOL_ERROR
                    inner = b.get("content")
                    if inner.__class__ is str:
                        text = inner
                    else:
                        text = tool_result_text(inner)
                        for ib in iter_blocks(inner):
                            if ib.get("type") == "image":
                                flags |= F_IMAGE
                    chars += len(text)
                    if tid and text.startswith(PERSISTED_OPEN):
                        p = parse_persisted(text)
                        if p:
                            if persisted is None:
                                persisted = []
                            persisted.append(PersistedMarker(tid, p[0], p[1], len(p[2])))
                elif bt == "thinking":
                    flags |= F_THINKING
                    th = b.get("thinking")
                    if th.__class__ is str:
                        chars += len(th)
                elif bt == "redacted_thinking":
                    flags |= F_THINKING
                elif bt == "image":
                    flags |= F_IMAGE
                elif bt == "document":
                    flags |= F_DOCUMENT
                if thinking_only and bt != "thinking" and bt != "redacted_thinking":
                    thinking_only = False
            if thinking_only and t == "assistant":
                flags |= F_THINKING_ONLY
            if uses:
                tool_uses = tuple(uses)
            if results:
                tool_results = tuple(results)
            if persisted:
                if extra is None:
                    extra = {}
                extra["persisted"] = persisted
        content_chars += chars

        if t == "assistant":
            v = message.get("id")
            message_id = v if v.__class__ is str else None
            v = message.get("model")
            model = (intern(v) if len(v) < 512 else v) if v.__class__ is str else None
            v = get("requestId")
            request_id = v if v.__class__ is str else None
            v = message.get("stop_reason")
            stop_reason = v if v.__class__ is str else None
            u = message.get("usage")
            usage = usage_tuple(u)
            if usage is not None and isinstance(u, dict):
                bill = billing_extras(u)
                if bill is not None:
                    if extra is None:
                        extra = {}
                    extra["billing"] = bill
                its = u.get("iterations")
                if its.__class__ is list and its:  # sampled in iterations: what the context is depends on the release
                    usage, extra = _iterations(usage, its, version, extra)
            txt = (  # the reply's text, as its first text block (what the synthetic and error checks read)
                content
                if content.__class__ is str
                else (first_block.get("text") if first_block is not None and first_block.get("type") == "text" else None)
            )
            if model == SYNTHETIC_MODEL:
                flags |= F_SYNTHETIC
            elif txt.__class__ is str and (txt in SYNTHETIC_TEXTS or txt.startswith(REJECT_PREFIX)):
                flags |= F_SYNTHETIC
            if get("isApiErrorMessage") is True:
                flags |= F_API_ERROR
                if txt.__class__ is str and txt.startswith(PROMPT_TOO_LONG):
                    flags |= F_TOO_LONG
        elif t == "user":
            if get("isCompactSummary") is True:
                flags |= F_COMPACT_SUMMARY
            sm = get("summarizeMetadata")
            if isinstance(sm, dict):
                if extra is None:
                    extra = {}
                extra["summarize"] = sm
            txt = text_of(content)
            if txt.startswith(INTERRUPT_TEXTS[0]):
                flags |= F_INTERRUPT
            if not (flags & (F_META | F_COMPACT_SUMMARY)) and not tool_results and txt.strip():
                if extra is None:
                    extra = {}
                extra["prompt"] = _human_text(content)[:300]
            tur = get("toolUseResult")
            if isinstance(tur, dict):
                v = tur.get("agentId")
                if v.__class__ is str and v:
                    if extra is None:
                        extra = {}
                    extra["spawned_agent"] = v
    if t in MESSAGE_TYPES:
        # a record copied from another session (Claude Code's own fork, 2.1.3xx; a session inspector saved): a
        # response in it was made, and paid for, by that session, and so was a subagent its tool result names
        fk = get("forkedFrom") or get("inspectorCopiedFrom")
        if fk.__class__ is dict and fk.get("sessionId").__class__ is str:
            if extra is None:
                extra = {}
            extra["copied_from"] = fk["sessionId"]
        else:
            # 2.1.332's --fork-session copies the chain since the last compaction with the fork's sessionId, and marks
            # a copied reply with the session whose request made it (2.1.332 seed 84002)
            v = get("requestSessionId")
            if v.__class__ is str and v and v != session_id:
                if extra is None:
                    extra = {}
                extra["copied_from"] = v
                extra["fork_copy"] = True

    if (
        uuid is None
        and parent is None
        and message_id is None
        and usage is None
        and not extra
        and not flags
        and not content_chars
        and cwd is None
        and version is None
        and agent_id is None
        and subtype is None
        and logical is None
        and not tool_results
    ):
        return cast(Record, BareRecord(line, offset, length, t, ts, session_id))  # it answers as a Record does
    return Record(
        line,
        offset,
        length,
        t,
        subtype,
        uuid,
        parent,
        logical,
        ts,
        session_id,
        agent_id,
        message_id,
        model,
        request_id,
        usage,
        stop_reason,
        flags,
        tool_uses,
        tool_results,
        content_chars,
        cwd,
        version,
        extra or None,
    )
