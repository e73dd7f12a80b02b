"""Making untrusted transcript text safe to print: no terminal escapes, no control codes."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(s: str, *, keep_newlines: bool = False) -> str:
    """Show control characters (ESC, BEL, CSI, ...) as visible escapes instead of obeying them."""
    if not keep_newlines:
        s = s.replace("\n", " ").replace("\t", " ")
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", s)


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
