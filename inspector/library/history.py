"""What Claude Code's `history.jsonl` still knows of sessions whose transcripts are gone.

Claude Code appends every prompt a person types to `<config>/history.jsonl` (`display`, `pastedContents`,
`timestamp` in epoch milliseconds, `project`: the working folder, and from 2.1.x `sessionId`), and its cleanup of old
transcripts does not remove them at once. So the prompts of a session deleted by cleanup can be read back: the
sessions named there that no transcript under the projects root answers are listed per project, with their prompts,
marked "transcript deleted by cleanup". Claude Code's own `.last-cleanup` sentinel says when cleanup last ran.
Read-only: the file is never written.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

HISTORY_LIMIT = 256 << 20  # bytes of history.jsonl read at most


@dataclass(frozen=True, slots=True)
class Prompt:
    text: str
    timestamp: str  # ISO, UTC
    project: str
    session_id: str | None


@dataclass(slots=True)
class LostSession:
    """A session known only from the prompts history.jsonl kept: its transcript is gone."""

    session_id: str | None  # None: an older release's entries, which name no session (grouped by project and day)
    project: str
    prompts: list[Prompt] = field(default_factory=list)

    @property
    def first(self) -> str:
        return self.prompts[0].timestamp

    @property
    def last(self) -> str:
        return self.prompts[-1].timestamp

    def as_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "project": self.project,
            "status": "transcript deleted by cleanup",
            "first_timestamp": self.first,
            "last_timestamp": self.last,
            "prompts": [{"timestamp": p.timestamp, "text": p.text} for p in self.prompts],
        }


def history_path(config: Path) -> Path:
    return config / "history.jsonl"


def read_history(path: Path, problems: list[str] | None = None) -> list[Prompt]:
    """The prompts of history.jsonl in file order; a line that is not an entry is skipped (and counted)."""
    out: list[Prompt] = []
    bad = 0
    try:
        with open(path, "rb") as f:
            data = f.read(HISTORY_LIMIT)
    except OSError:
        return out
    for raw in data.splitlines():
        try:
            d = orjson.loads(raw)
        except orjson.JSONDecodeError:
            bad += 1
            continue
        if not isinstance(d, dict):
            bad += 1
            continue
        text, ts, project = d.get("display"), d.get("timestamp"), d.get("project")
        if not isinstance(text, str) or isinstance(ts, bool) or not isinstance(ts, (int, float)) or not isinstance(project, str):
            bad += 1
            continue
        try:
            when = datetime.fromtimestamp(ts / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        except (OverflowError, OSError, ValueError):
            bad += 1
            continue
        sid = d.get("sessionId")
        out.append(Prompt(text, when, project, sid if isinstance(sid, str) and sid else None))
    if bad and problems is not None:
        problems.append(f"{bad:,} line(s) of {path} are not history entries (skipped)")
    return out


def known_sessions(root: Path) -> tuple[set[str], dict[str, set[str]]]:
    """(the session ids with a transcript under the projects root, the UTC days each working folder has one on: its
    first and last record's, from the cheap read of its head and tail)."""
    from inspector.transcript.discovery import Target, quick_info, session_files

    ids: set[str] = set()
    days: dict[str, set[str]] = {}
    if not root.is_dir():
        return ids, days
    for p, _ in session_files(Target("root", root)):
        ids.add(p.stem)
        try:
            info = quick_info(p)
        except OSError:
            continue
        if info.cwd and info.first_timestamp:
            days.setdefault(info.cwd, set()).update({info.first_timestamp[:10], (info.last_timestamp or "")[:10]})
    return ids, days


def lost_sessions(
    prompts: Iterable[Prompt], known_ids: set[str], known_days: Mapping[str, set[str]] | None = None
) -> list[LostSession]:
    """The sessions of these prompts that have no transcript (`known_ids`), in time order. Entries that name no session
    (older releases) are grouped by project and UTC day, and left out for a day on which that project has a
    transcript (`known_days`: project -> days): they may be its prompts."""
    groups: dict[tuple[str, str | None, str], LostSession] = {}
    for p in prompts:
        key: tuple[str, str | None, str]
        if p.session_id is not None:
            if p.session_id in known_ids:
                continue
            key = (p.project, p.session_id, "")
        else:
            day = p.timestamp[:10]
            if known_days is not None and day in known_days.get(p.project, set()):
                continue
            key = (p.project, None, day)
        g = groups.get(key)
        if g is None:
            g = groups[key] = LostSession(p.session_id, p.project)
        g.prompts.append(p)
    for g in groups.values():
        g.prompts.sort(key=lambda q: q.timestamp)
    return sorted(groups.values(), key=lambda g: g.first)


def last_cleanup(config: Path) -> str | None:
    """When Claude Code's cleanup last ran (the time of its `.last-cleanup` sentinel), ISO UTC; None if unknown."""
    try:
        st = os.stat(config / ".last-cleanup")
    except OSError:
        return None
    return datetime.fromtimestamp(st.st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
