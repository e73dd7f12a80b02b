"""`inspector mcp`: an MCP server (stdio, the official `mcp` SDK) with tools Claude can call in the middle of a
session: search past sessions, list them, a session's token story, what a compaction dropped, and a record in full.

Read-only: it reads transcripts under the projects root and never writes one (the search index in the cache is
brought up to date as `inspector search` does). A session is named by its id (or a unique prefix of 4 characters or
more), never by a path, so nothing outside the projects root can be read through it; with no session named, the
newest session of the project the server runs in (Claude Code starts it in its working folder) is meant. Every
answer is bounded (MAX_CHARS; lists cut with a note of how many were left out).

The tools are plain functions over the core (`Tools`), which the tests call directly and through an MCP client; the
server only registers them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.cli.common import EXIT_OK, Parser

MAX_CHARS = 24_000  # characters of one answer
MAX_LIMIT = 100  # items of one list
PERSISTED_READ = 4 << 20  # bytes of a persisted tool output read for get_record
INSTRUCTIONS = (
    "inspector reads this machine's Claude Code sessions (read-only). Use it to find something said or done in a past "
    "session (search_sessions, list_sessions), to see how close this session is to auto-compaction and why earlier "
    "compactions fired (token_story), to get back what a compaction summarized away (compaction_lost: the user's "
    "instructions, files, commands, errors and decisions its summary does not mention), and to read a record in full "
    "(get_record). Without a session id, the newest session of the current project is used: usually this one."
)


def _mcp_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="inspector mcp",
        description="An MCP server over stdio for Claude Code (`claude mcp add inspector -- inspector mcp`): tools to "
        "search and list past sessions, see a session's token story and compactions, get back what a compaction "
        "dropped, and read a record by uuid. Read-only; answers are bounded; only sessions under the projects root.",
    )
    p.add_argument(
        "--root", metavar="PATH", help="the projects root (default: $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects)"
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def cmd_mcp(args: argparse.Namespace, out: Any, err: Any) -> int:
    from inspector.transcript.discovery import InspectorError, default_projects_root

    root = Path(args.root).expanduser() if args.root else default_projects_root()
    if not root.is_dir():
        raise InspectorError(f"mcp: no projects root at {root}")
    server = build_server(Tools(root, cwd=Path.cwd()))
    server.run("stdio")
    return EXIT_OK


def build_server(tools: Tools) -> Any:
    """The MCP server with inspector's tools registered (read-only, bounded)."""
    from mcp.server.mcpserver import MCPServer
    from mcp_types import ToolAnnotations

    from inspector import __version__

    server = MCPServer("inspector", version=__version__, instructions=INSTRUCTIONS)
    ro = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)

    @server.tool(annotations=ro, structured_output=False)
    def search_sessions(
        query: str, project: str | None = None, since: str | None = None, until: str | None = None, limit: int = 20
    ) -> str:
        """Find text in every past Claude Code session (prompts, replies, thinking, tool inputs and results, summaries,
        persisted tool outputs). project: words of the project's folder or working directory; since/until: a date
        (2026-11-02), a UTC time (2026-11-02T14:00) or a span back from now (7d, 12h). Returns the matches with their
        session id, line and uuid, for get_record."""
        return _answer(tools.search_sessions, query, project=project, since=since, until=until, limit=limit)

    @server.tool(annotations=ro, structured_output=False)
    def list_sessions(project: str | None = None, since: str | None = None, until: str | None = None, limit: int = 20) -> str:
        """The sessions under the projects root, newest first: id, project, title, first and last time, size,
        Claude Code release. Filters as search_sessions."""
        return _answer(tools.list_sessions, project=project, since=since, until=until, limit=limit)

    @server.tool(annotations=ro, structured_output=False)
    def token_story(session: str | None = None) -> str:
        """A session's token story by the rules of the release and model that wrote it: the context now against the
        auto-compact, warning and blocking thresholds (or where the API refuses when the threshold is not enforced),
        and each compaction with its cause. session: an id or unique prefix (default: this project's newest)."""
        return _answer(tools.token_story, session)

    @server.tool(annotations=ro, structured_output=False)
    def compaction_lost(session: str | None = None, compaction: int = -1, all_items: bool = False) -> str:
        """What a compaction summarized away: the user's instructions, files read and edited, commands and their
        errors, and decisions of the records it summarized that its summary does not mention and it did not keep,
        each with its text, line and uuid. compaction: 1 for the first, -1 (default) for the last; all_items: also
        the items the summary mentions or the compaction kept."""
        return _answer(tools.compaction_lost, session, compaction, all_items)

    @server.tool(annotations=ro, structured_output=False)
    def get_record(uuid: str, session: str | None = None, max_chars: int = 8000, around: str | None = None) -> str:
        """One record of a session in full (a uuid, a unique uuid prefix or a line number), tool results persisted
        to disk included, up to max_chars characters (at most 20,000); around: a text to centre that window on (a
        search's query, for a long tool output)."""
        return _answer(tools.get_record, uuid, session, max_chars, around)

    return server


def _answer(tool: Any, *args: Any, **kwargs: Any) -> str:
    """A tool's answer; a refusal (InspectorError: no such session, a bad date) or an unreadable file as the tool's
    error message, which Claude reads, instead of the SDK's bare "Error executing tool"."""
    from mcp.server.mcpserver.exceptions import ToolError

    from inspector.textutil import printable
    from inspector.transcript.discovery import InspectorError

    try:
        return str(tool(*args, **kwargs))
    except (InspectorError, OSError) as exc:
        raise ToolError(printable(str(exc))) from None


@dataclass
class Tools:
    """inspector's MCP tools as plain functions: each returns text (JSON) of at most MAX_CHARS characters."""

    root: Path
    cwd: Path | None = None

    # -- finding sessions, inside the root only -------------------------------------------------------------------
    def _sessions(self) -> list[Path]:
        from inspector.transcript.discovery import Target, session_files

        return [p for p, _ in session_files(Target("root", self.root))]

    def _session(self, ref: str | None) -> Path:
        from inspector.transcript.discovery import InspectorError, project_folder_name

        files = self._sessions()
        if not files:
            raise InspectorError(f"no sessions under {self.root}")
        if ref is None or not ref.strip():
            here = [p for p in files if self.cwd is not None and p.parent.name == project_folder_name(str(self.cwd))]
            return max(here or files, key=_mtime)
        ref = ref.strip()
        if len(ref) < 4:
            raise InspectorError("a session id or a prefix of 4 characters or more")
        found = [p for p in files if p.stem == ref] or [p for p in files if p.stem.startswith(ref)]
        if not found:
            raise InspectorError(f"no session {ref!r} under the projects root (list_sessions lists them)")
        if len(found) > 1:
            raise InspectorError(f"{len(found)} sessions start with {ref!r}: " + ", ".join(p.stem for p in found[:5]))
        return found[0]

    def _load(self, ref: str | None) -> Any:
        from inspector.transcript.session import Session

        return Session.load(self._session(ref))

    # -- the tools -------------------------------------------------------------------------------------------------
    def search_sessions(
        self, query: str, *, project: str | None = None, since: str | None = None, until: str | None = None, limit: int = 20
    ) -> str:
        from inspector.library.fts import SEARCH_BUDGET, open_index
        from inspector.library.search import Query, search_target
        from inspector.transcript.discovery import InspectorError, Target

        if not query.strip():
            raise InspectorError("nothing to search for")
        lo, hi = _when(since, "since"), _when(until, "until")
        limit = _limit(limit)
        index = open_index(notice=lambda m: None)
        hits: list[dict[str, Any]] = []
        for fh in search_target(
            Target("root", self.root), Query(query), limit=None if hi else limit, index=index, project=project,
            since=lo, budget=SEARCH_BUDGET,
        ):  # fmt: skip
            for h in fh.hits:
                if hi and h.timestamp and h.timestamp[:19] >= hi:
                    continue
                d = h.as_dict()
                d["session"] = fh.session.stem
                d["project"] = fh.session.parent.name
                d["uuid"] = _uuid_at(h.path, h.offset)
                if h.path != fh.session:
                    d["subagent"] = h.path.name
                del d["path"], d["offset"]
                hits.append(d)
            if len(hits) >= limit:
                break
        return _bounded({"query": query, "matches": hits[:limit]}, "matches")

    def list_sessions(
        self, *, project: str | None = None, since: str | None = None, until: str | None = None, limit: int = 20
    ) -> str:
        from inspector.transcript.discovery import quick_info

        lo, hi = _when(since, "since"), _when(until, "until")
        limit = _limit(limit)
        files = sorted(self._sessions(), key=_mtime, reverse=True)
        out = []
        for p in files:
            if len(out) >= limit:
                break
            if project and project.lower() not in p.parent.name.lower():
                continue
            try:
                info = quick_info(p)
            except OSError:
                continue
            first, last = info.first_timestamp or "", info.last_timestamp or ""
            if (lo and last and last[:19] < lo) or (hi and first and first[:19] >= hi):
                continue
            out.append(
                {
                    "session": info.session_id or p.stem,
                    "file": p.name,
                    "project": p.parent.name,
                    "cwd": info.cwd,
                    "title": info.title or info.first_prompt,
                    "first": info.first_timestamp,
                    "last": info.last_timestamp,
                    "bytes": info.size,
                    "version": info.version,
                }
            )
        return _bounded({"root": str(self.root), "sessions": out}, "sessions")

    def token_story(self, session: str | None) -> str:
        from inspector.tokens.keptreport import kept_analyze
        from inspector.tokens.now import context_now
        from inspector.tokens.thresholds import Settings

        s = self._load(session)
        try:
            settings = Settings.from_environment()
            rep = kept_analyze(s, settings)
            d = rep.as_dict()
            now = context_now(s, settings)
            th = d["thresholds"]
            story = {
                "session": s.session_id,
                "title": s.title,
                "model": d.get("model"),
                "claude_code": d.get("version"),
                "rules": th.get("rules"),
                "thresholds": {k: th.get(k) for k in ("context_window", "auto_compact", "warning", "blocking", "enforced")},
                "now": {"line": now.describe(), **now.as_dict()},
                "compactions": [
                    {
                        k: c.get(k)
                        for k in (
                            *("uuid", "kind", "trigger", "cause", "pre_tokens", "threshold", "size_after", "explanation"),
                            *("duration_ms", "cumulative_dropped_tokens"),
                        )
                    }
                    for c in d.get("compactions") or []
                ],
                "anomalies": d.get("anomalies"),
            }
            story["now"].pop("rules", None)
            return _bounded(story, "compactions")
        finally:
            s.close()

    def compaction_lost(self, session: str | None, compaction: int = -1, all_items: bool = False) -> str:
        from inspector.tokens.lost import losses
        from inspector.transcript.discovery import InspectorError

        s = self._load(session)
        try:
            found = losses(s)
            if not found:
                return _bounded({"session": s.session_id, "compactions": 0, "note": "no compaction summarized anything"})
            n = len(found)
            k = compaction - 1 if compaction > 0 else n + compaction
            if not 0 <= k < n:
                raise InspectorError(f"the session has {n} compaction(s): 1 to {n}, or -1 for the last")
            d = found[k].as_dict(dropped_only=not all_items)
            return _bounded({"session": s.session_id, "compaction": k + 1, "of": n, **d}, "items")
        finally:
            s.close()

    def get_record(self, ref: str, session: str | None = None, max_chars: int = 8000, around: str | None = None) -> str:
        from inspector.transcript.discovery import InspectorError
        from inspector.view import parts_markdown, record_parts

        s = self._load(session)
        try:
            try:
                i = s.find_record(ref)
            except LookupError as exc:
                raise InspectorError(str(exc)) from None
            r = s.records[i]
            text = parts_markdown(record_parts(s, i))
            cap = max(200, min(int(max_chars), 20_000))
            for po in s.persisted_outputs:  # the whole output of a tool result persisted beside the session
                if po.file is not None and (po.record == i or po.tool_use_id in r.tool_results):
                    full, _size = s.read_persisted(po, limit=PERSISTED_READ)
                    text += f"\n\n### the persisted output {po.file.name}\n\n{full}"
            start = 0
            if around and around.strip():
                k = text.lower().find(around.strip().lower())
                if k >= 0:
                    start = max(0, min(k - cap // 3, len(text) - cap))
            d = {
                "session": s.session_id,
                "uuid": r.uuid,
                "line": r.line,
                "type": r.type,
                "timestamp": r.timestamp,
                "text": text[start : start + cap],
            }
            if start > 0 or len(text) > start + cap:
                d["cut"] = (
                    f"characters {start:,} to {min(len(text), start + cap):,} of {len(text):,} (max_chars up to 20,000; "
                    "around: a text to centre on)"
                )
            return _bounded(d)
        finally:
            s.close()


def _mtime(p: Path) -> float:
    try:
        return os.stat(p).st_mtime
    except OSError:
        return 0.0


def _limit(n: Any) -> int:
    try:
        return max(1, min(int(n), MAX_LIMIT))
    except (TypeError, ValueError):
        return 20


def _when(text: str | None, what: str) -> str | None:
    """A tool's since / until (a blank one is none), as the command line's --since / --until reads it."""
    from inspector.cli.common import when_arg

    return when_arg(str(text) if text is not None and str(text).strip() else None, what)


def _uuid_at(path: Path, offset: int, cap: int = 16 << 20) -> str | None:
    """The uuid of the record at a byte offset (a search hit's): its line read and decoded (a line over `cap` bytes
    is looked through for its top-level uuid instead)."""
    import orjson

    if offset < 0:
        return None
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            line = f.readline(cap)
    except OSError:
        return None
    try:
        obj = orjson.loads(line)
        u = obj.get("uuid") if isinstance(obj, dict) else None
        return u if isinstance(u, str) else None
    except orjson.JSONDecodeError:
        found = re.findall(rb'"uuid"\s*:\s*"([0-9A-Za-z-]{8,64})"', line)
        return found[-1].decode() if found else None


def _bounded(d: dict[str, Any], list_key: str | None = None) -> str:
    """The answer as JSON text of at most MAX_CHARS characters: the list under `list_key` cut from its end (saying how
    many were left out), long strings shortened."""
    from inspector.textutil import printable

    def clean(v: Any) -> Any:
        if isinstance(v, str):
            return printable(v, keep_newlines=True)
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v

    d = clean(d)
    text = json.dumps(d, ensure_ascii=False, indent=1)
    if len(text) <= MAX_CHARS:
        return text
    items = d.get(list_key) if list_key else None
    if isinstance(items, list):
        total = len(items)
        while items and len(json.dumps(d, ensure_ascii=False, indent=1)) > MAX_CHARS - 200:
            items.pop()
            d["left_out"] = f"{total - len(items)} of {total} {list_key} (ask for fewer, or narrow the query)"
        text = json.dumps(d, ensure_ascii=False, indent=1)
    if len(text) > MAX_CHARS:
        text = text[: MAX_CHARS - 40] + "\n… (cut at the answer's size limit)"
    return text
