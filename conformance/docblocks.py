"""The one writer of the generated parts of docs/: each measuring script (the CLI reference, the benchmarks, the
fidelity table, the conformance tables) hands its text here, and only the part between the block's two markers,
`<!-- NAME:start -->` and `<!-- NAME:end -->`, is replaced, atomically. A page without the markers is an error:
a table that silently stops being written is a table that quietly goes stale."""

from __future__ import annotations

import os
from pathlib import Path


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}:start -->\n", f"<!-- {name}:end -->"


def read_block(doc: Path, name: str) -> str:
    """The text between the block's markers (what a test compares with what the script would write now)."""
    start, end = markers(name)
    body = doc.read_text(encoding="utf-8")
    if start not in body or end not in body:
        raise ValueError(f"{doc} has no {name} block ({start.strip()} … {end})")
    return body.split(start, 1)[1].split(end, 1)[0]


def write_block(doc: Path, name: str, text: str) -> None:
    """Replace the block `name` of `doc` with `text` (written to a temporary file beside it, then renamed)."""
    start, end = markers(name)
    body = doc.read_text(encoding="utf-8")
    if start not in body or end not in body:
        raise ValueError(f"{doc} has no {name} block ({start.strip()} … {end})")
    head, rest = body.split(start, 1)
    _, tail = rest.split(end, 1)
    tmp = doc.with_name(f".{doc.name}.{os.getpid()}.tmp")
    tmp.write_text(head + start + text + end + tail, encoding="utf-8")
    tmp.replace(doc)


def write_page(doc: Path, text: str) -> None:
    """A page that is generated whole (the era matrix, the generated runs), atomically."""
    doc.parent.mkdir(parents=True, exist_ok=True)
    tmp = doc.with_name(f".{doc.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(doc)
