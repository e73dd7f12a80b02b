"""Reading Claude Code's files: discovery, the line index, records, the conversation tree.

This package never imports Textual or Rich. Its names are imported when first used (PEP 562), so that a command
that needs only part of it (a search looks up discovery and records) does not pay for the rest at its start.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "InspectorError": "discovery",
    "Target": "discovery",
    "default_projects_root": "discovery",
    "resolve_target": "discovery",
    "Problem": "index",
    "Transcript": "index",
    "Record": "records",
    "Session": "session",
    "Conversation": "tree",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(f"inspector.transcript.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'inspector.transcript' has no attribute {name!r}")
