"""Making untrusted transcript text safe to print (no terminal escapes, no control codes), the small
formatters the tables share, and JSON in and out that survives paths whose bytes are not UTF-8."""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from functools import cache, lru_cache
from typing import Any

# json, orjson and datetime are imported where used: `inspector search` prints with this module and starts in the
# time of the few libraries a lookup needs (issue 29.5)

# the patterns are compiled when first used (functools.cache), not at import: 3 ms of every command's start
_CONTROL = r"[\x00-\x08\x0b-\x1f\x7f-\x9f]"
_SURROGATE = "[\ud800-\udfff]"


@cache
def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def without_surrogates(s: str) -> str:
    """Lone surrogates (undecodable bytes, escaped halves of a pair) as U+FFFD: they cannot be encoded."""
    return _rx(_SURROGATE).sub("\ufffd", s)


def printable(s: str, *, keep_newlines: bool = False) -> str:
    """Show control characters (ESC, BEL, CSI, ...) as visible escapes instead of obeying them.

    Lone surrogates (a file name with bytes that are not UTF-8) become U+FFFD: they cannot be printed."""
    if "\x1b" in s:  # colour codes and character-set switches of captured terminal output: dropped, they only style it
        s = _rx(_SGR).sub("", s)
    if not keep_newlines:
        s = s.replace("\n", " ").replace("\t", " ")
    if not s.isascii():
        s = _rx(_INVISIBLE).sub(lambda m: f"\\u{ord(m.group()):04x}", without_surrogates(s))
    return _rx(_CONTROL).sub(lambda m: f"\\x{ord(m.group()):02x}", s)


# Select Graphic Rendition (colours and bold) and the character-set designations `tput sgr0` writes (ESC ( B):
# nothing else, so a sequence that moves the cursor or retitles the terminal is still shown as an escape
_SGR = r"\x1b\[[0-9;:]*m|\x1b[()*+][A-Za-z0-9<=>]"

# Characters that change how text reads without showing: bidi embeddings, overrides and isolates (which can
# make a command read backwards), zero-width characters, line and paragraph separators, the BOM.
_INVISIBLE = "[\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
_JSON_UNSAFE = "[\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"


def json_safe_text(text: str) -> str:
    """JSON text with the C1 controls (U+0080–U+009F, e.g. the one-byte CSI) and the invisible characters
    above written as \\u escapes: the same JSON to a parser, nothing a terminal acts on or hides. They can only
    occur inside strings, where the escape means the same character."""
    if text.isascii():
        return _rx(_JSON_UNSAFE).sub(lambda m: f"\\u{ord(m.group()):04x}", text) if "\x7f" in text else text
    return _rx(_JSON_UNSAFE).sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def fmt(n: int | float | None) -> str:
    """A count with thousands separators, "?" when unknown."""
    return "?" if n is None else f"{round(n):,}"


def human_size(n: int | None) -> str:
    if n is None:
        return "-"
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def human_tokens(n: int | None) -> str:
    if n is None:
        return "-"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


def human_when(ts: str | None, *, local: bool = False) -> str | None:
    """An ISO timestamp as "YYYY-MM-DD HH:MM" (in local time if asked), None when it is not one."""

    if not ts:
        return None
    from datetime import datetime

    try:
        t = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (t.astimezone() if local else t).strftime("%Y-%m-%d %H:%M")


@lru_cache(maxsize=65536)
def timestamp_key(ts: str | None) -> float | None:
    """Seconds since the epoch for an ISO timestamp, None when it is not one."""
    if not ts:
        return None
    from datetime import datetime

    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    except (ValueError, TypeError):
        return None


def human_duration(first: str | None, last: str | None) -> str | None:
    """The time between two ISO timestamps, as "12m", "1.5h" or "122d"; None when either is not one."""
    a, b = timestamp_key(first), timestamp_key(last)
    if a is None or b is None:
        return None
    secs = b - a
    if secs < 3600:
        return f"{secs / 60:.0f}m"
    if secs < 48 * 3600:
        return f"{secs / 3600:.1f}h"
    return f"{secs / 86400:.0f}d"  # a session resumed weeks later


def human_span(seconds: float) -> str:
    """A length of time for a sentence: "40 s", "12 min", "3.5 h", "292 days"."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} days"


@contextlib.contextmanager
def deep_recursion() -> Iterator[None]:
    """Room for the standard library's JSON functions to walk a loaded record, which nests at most about 1,024
    levels (orjson's decoder refuses more): the recursion limit raised for the while."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 6000))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def json_dumps(obj: Any, *, indent: bool = False) -> bytes:
    """orjson's JSON, except for a str holding lone surrogates (a path whose bytes are not UTF-8), which
    orjson refuses: the standard library writes those as \\u escapes (the JSON stays ASCII)."""
    import orjson

    try:
        return orjson.dumps(obj, option=orjson.OPT_INDENT_2 if indent else 0)
    except TypeError:
        import json

        with deep_recursion():  # what orjson refuses may nest deep
            return json.dumps(obj, indent=2 if indent else None, ensure_ascii=True).encode()


def json_loads(data: bytes | str) -> Any:
    """What json_dumps wrote: orjson, or the standard library for \\u escapes of lone surrogates."""
    import orjson

    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        import json

        return json.loads(data)


_KEY_PATTERNS = (
    r"sk-ant-[A-Za-z0-9_\-]{6,}",  # Anthropic keys and tokens
    r"(?i)((?:x-api-key|authorization|proxy-authorization|api[-_]?key|auth[-_]?token)[\"']?\s*[:=]\s*[\"']?)"
    r"(?:bearer\s+|basic\s+)?[^\s\"',;}]+",
)


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """A message with anything that looks like a credential taken out: the API key of the environment (and
    `secrets`) wherever it appears, Anthropic keys, and the values of x-api-key / Authorization headers. Error
    bodies from an API, a proxy or the HTTP library are shown to the user only through this."""
    import os

    for k in (os.environ.get("ANTHROPIC_API_KEY"), os.environ.get("ANTHROPIC_AUTH_TOKEN"), *secrets):
        if k and len(k) >= 8:
            text = text.replace(k, "[redacted]")
    text = _rx(_KEY_PATTERNS[0]).sub("[redacted]", text)
    return _rx(_KEY_PATTERNS[1]).sub(lambda m: m.group(1) + "[redacted]", text)


def as_dict(value: Any) -> dict[str, Any]:
    """A decoded JSON value as an object, or an empty one: `as_dict(body.get("message"))`."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """A decoded JSON value as an array, or an empty one."""
    return value if isinstance(value, list) else []


def blake2b(data: bytes, digest_size: int) -> Any:
    """hashlib's blake2b, from CPython's own module where it has one: `import hashlib` loads OpenSSL first (3.6 ms of
    the start of a search that indexes an appended line, and of a statusline that prices one)."""
    try:
        from _blake2 import blake2b as make
    except ImportError:  # an interpreter built without it
        from hashlib import blake2b as make
    return make(data, digest_size=digest_size)
