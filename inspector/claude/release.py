"""Claude Code's release numbers, and the era matrix's file of what each measured release did.

The vocabulary both the version table (versions.py) and the measured facts (measured.py) stand on, so that neither
imports the other's reader: a release as (major, minor, patch), and which releases the matrix measured.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

Version = tuple[int, int, int]

MATRIX = Path(__file__).with_name("era_matrix.json")
_VERSION_RE = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def parse_version(v: str | None) -> Version | None:
    """(major, minor, patch) of a version string as Claude Code writes it ("2.1.39"), else None."""
    if not v:
        return None
    m = _VERSION_RE.search(v)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def at_or_after(version: str | None, first: Version, unknown: bool = True) -> bool:
    """Whether the release `version` ("2.1.39") is `first` or later; `unknown` for one that names no release (by
    default a session that does not say is taken as today's)."""
    v = parse_version(version)
    return unknown if v is None else v >= first


def show_version(v: Version) -> str:
    return ".".join(map(str, v))


@lru_cache(maxsize=1)
def matrix_data() -> dict[str, Any]:
    """The era matrix's file, read once ({} when it is missing or damaged)."""
    try:
        data = orjson.loads(MATRIX.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def matrix_rows(key: str) -> list[dict[str, Any]]:
    """The rows of one of the matrix's tables (the mappings only)."""
    rows = matrix_data().get(key)
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


@lru_cache(maxsize=1)
def measured_releases() -> tuple[Version, ...]:
    """The releases the matrix measured (a cell without an error), oldest first."""
    found = {parse_version(d.get("version")) for d in matrix_rows("cells") if not d.get("error")}
    return tuple(sorted(v for v in found if v is not None))
