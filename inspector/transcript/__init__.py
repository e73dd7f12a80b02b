"""Reading Claude Code's files: discovery, the line index, records, the conversation tree.

This package never imports Textual or Rich.
"""

from inspector.transcript.discovery import InspectorError, Target, default_projects_root, resolve_target
from inspector.transcript.index import Problem, Transcript
from inspector.transcript.records import Record
from inspector.transcript.session import Session
from inspector.transcript.tree import Conversation

__all__ = [
    "Conversation",
    "InspectorError",
    "Problem",
    "Record",
    "Session",
    "Target",
    "Transcript",
    "default_projects_root",
    "resolve_target",
]
