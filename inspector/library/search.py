"""Find text in transcripts: what was said, run and returned, not the JSON around it.

A search reads the raw lines once and keeps only the lines that contain the text as it would be
written inside a JSON string (quotes and newlines escaped): that byte test is the fast part. Each
line that passes is decoded and the text is looked for again in what a person reads: prompts,
replies, thinking, tool inputs (their values) and tool results, summaries, system notes, metadata
values. So "error" does not find every tool result through its `"is_error":false`, and a
search for a uuid, a timestamp or a field name finds nothing. Tool results persisted beside the
session (`<session>/tool-results/`) are searched too: only files directly in that folder, never
through a symlink.

Matching is a case-insensitive substring. Nothing here imports Textual or Rich.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from inspector.textutil import printable, without_surrogates
from inspector.transcript.discovery import Target, transcript_names
from inspector.transcript.safefs import DIR, scan_dir

# What reads a transcript (orjson, the records and their texts) is imported where a file is read: a search the index
# answers with nothing to read starts in the time of the few libraries its lookup needs (issue 29.5).

_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def json_string_body(text: str) -> str:
    """A text as it is written between the quotes of a JSON string by Claude Code (JSON.stringify) and by orjson: the
    quote, the backslash and the control characters escaped, everything else as it is."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return text
    return "".join(_SHORT_ESCAPES.get(c) or (f"\\u{ord(c):04x}" if c < " " else c) for c in text)


SNIPPET = 160  # characters of context shown around a match


class Hit:
    """One place where the text was found. (A plain class, as the others `search` imports: the dataclasses module costs
    a search a tenth of its time.)"""

    __slots__ = ("path", "line", "offset", "type", "where", "snippet", "count", "timestamp", "file")

    def __init__(
        self,
        path: Path,  # the transcript
        line: int,  # 1-based line of the record (0: a persisted file whose record was not found)
        offset: int,  # byte offset of that line (-1 when line is 0)
        type: str,  # the record's type
        where: str,  # prompt, reply, thinking, tool input (Bash), tool result, persisted output, summary, ...
        snippet: str,  # printable text around the first match
        count: int,  # matches in that text
        timestamp: str | None = None,
        file: str | None = None,  # for a persisted output: its file name in tool-results/
    ) -> None:
        self.path, self.line, self.offset, self.type, self.where = path, line, offset, type, where
        self.snippet, self.count, self.timestamp, self.file = snippet, count, timestamp, file

    def _key(self) -> tuple[Any, ...]:
        return tuple(getattr(self, k) for k in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return self._key() == other._key() if isinstance(other, Hit) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return "Hit(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__) + ")"

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "line": self.line,
            "offset": self.offset,
            "type": self.type,
            "where": self.where,
            "count": self.count,
            "timestamp": self.timestamp,
            "file": self.file,
            "snippet": self.snippet,
        }


class Query:
    """A case-insensitive substring, with the byte forms the raw lines are tested against."""

    def __init__(self, text: str) -> None:
        if not text:
            raise ValueError("nothing to search for")
        # a lone surrogate (an undecodable byte on the command line) can match nothing we decode, where
        # every lone surrogate became U+FFFD: search for that instead
        text = without_surrogates(text)
        self.text = text
        self.folded = text.lower()
        escaped = json_string_body(self.folded)  # as it appears inside a JSON string
        self.ascii = self.folded.isascii()
        self.raw = escaped.encode("utf-8").lower()
        self.raw_text = escaped
        self.plain = self.folded.encode("utf-8")

    def line_may_match(self, line: bytes) -> bool:
        """The byte test: False means the line cannot match."""
        if self.ascii:
            return self.raw in line.lower()
        return self.raw_text in line.decode("utf-8", "replace").lower()

    def find_in(self, text: str) -> tuple[int, int]:
        """(position of the first match, number of matches) in a text; (-1, 0) if none."""
        low = text.lower()
        pos = low.find(self.folded)
        if pos < 0:
            return -1, 0
        return pos, low.count(self.folded)

    def snippet(self, text: str, pos: int, width: int = SNIPPET) -> str:
        before = max(0, pos - width // 3)
        cut = text[before : before + width]
        out = " ".join(printable(cut, keep_newlines=True).split())
        return ("…" if before > 0 else "") + out + ("…" if before + width < len(text) else "")


# ---------------------------------------------------------------------------------------------
# files


def search_file(
    path: str | os.PathLike[str], query: Query, *, persisted: bool = True, limit: int | None = None, index: Any = None
) -> list[Hit]:
    """Every readable text of a transcript (and its persisted outputs) that contains the query.

    With `index` (an `inspector.library.fts.SearchIndex`), the file is brought up to date in it and the texts the trigrams
    pick are tested; without, or for a query too short for trigrams, every line is scanned. Same hits either way.
    Lines that cannot be decoded are skipped: a search never fails on a bad line."""
    path = Path(path)
    hits: list[Hit] = []
    cands = None
    if index is not None:
        from inspector.library.cache import IndexBusy

        try:
            index.update(path)
            cands = index.candidates(path, query)
            pc = None
            if cands is not None and persisted:
                index.refresh([], [path])
                pc = None if index.stale_sessions else index.persisted_candidates(path, query)
        except IndexBusy:  # another process is writing the index: this file is read
            cands = None
        except sqlite3.Error as exc:  # locked by another writer for long, damaged meanwhile, a full disk: scan
            index.failed(exc)
            cands = None
    if cands is not None:
        return hits_of(path, query, cands, persisted=persisted, limit=limit, persisted_cands=pc)
    from inspector.library.texts import record_texts
    from inspector.transcript.records import LineError, decode_line

    for line_no, offset, raw in _candidate_lines(path, query):
        try:
            body, _ = decode_line(raw)
        except LineError:
            continue
        t = body.get("type")
        ts = body.get("timestamp") if isinstance(body.get("timestamp"), str) else None
        for where, text in record_texts(body):
            pos, n = query.find_in(text)
            if n:
                hits.append(Hit(path, line_no, offset, t if isinstance(t, str) else "", where, query.snippet(text, pos), n, ts))
                if limit is not None and len(hits) >= limit:
                    return hits
    if persisted:
        hits.extend(_search_persisted(path, query, limit=None if limit is None else limit - len(hits)))
        hits.sort(key=lambda h: h.line or 1 << 62)  # a persisted output beside the record that points at it
    return hits


def hits_of(
    path: Path,
    query: Query,
    cands: list[tuple[Any, ...]],
    *,
    persisted: bool,
    limit: int | None,
    persisted_cands: list[tuple[Path, str]] | None = None,
) -> list[Hit]:
    """The hits among an index's candidate texts of one file (the scan's matcher decides), then its persisted outputs."""
    hits: list[Hit] = []
    for line_no, offset, t, where, ts, text in cands:
        pos, n = query.find_in(text)
        if n:
            hits.append(Hit(path, line_no, offset, t, where, query.snippet(text, pos), n, ts))
            if limit is not None and len(hits) >= limit:
                return hits
    if persisted:
        hits.extend(
            _search_persisted(path, query, limit=None if limit is None else limit - len(hits), candidates=persisted_cands)
        )
        hits.sort(key=lambda h: h.line or 1 << 62)
    return hits


BLOCK = 8 << 20


def _candidate_lines(path: Path, query: Query) -> Iterator[tuple[int, int, bytes]]:
    """(line number, byte offset, raw line) of the lines that pass the byte test.

    An ASCII query is looked for in whole 8 MB blocks (one `lower()` and a few `find()`s per block,
    no Python per line), and only the lines around a find are cut out; line numbers are counted only
    up to a find, so a file without one costs its read and one pass of `find`. Other queries go line
    by line."""
    from inspector.transcript.index import MAX_LINE, READ_BUFFER

    with open(path, "rb", buffering=READ_BUFFER if not query.ascii else -1) as f:
        if not query.ascii:
            offset, n = 0, 0
            while True:
                raw = f.readline(MAX_LINE + 1)
                if not raw:
                    return
                n += 1
                if len(raw) > MAX_LINE and raw[-1] != 10:  # over-long: skipped, never held
                    while raw and raw[-1] != 10:
                        offset += len(raw)
                        raw = f.readline(1 << 20)
                    offset += len(raw)
                    continue
                if query.line_may_match(raw):
                    yield n, offset, raw
                offset += len(raw)
        counter = _LineCounter(path)
        base, carry, skipping = 0, b"", False
        while True:
            data = f.read(BLOCK)
            block = carry + data
            if not block:
                return
            cut = block.rfind(b"\n") + 1 if data else len(block)
            if cut == 0:  # no newline yet: one line longer than a block
                if skipping or len(block) > MAX_LINE:  # a line the index does not read is not searched, nor held
                    skipping, carry, base = True, b"", base + len(block)
                    continue
                carry = block
                continue
            if skipping:  # the end of an over-long line: the next line starts after its (first) newline
                end = block.find(b"\n") + 1
                skipping, base = False, base + end
                carry = block[end:]
                continue
            carry, block = block[cut:], block[:cut]
            low = block.lower()
            pos = low.find(query.raw)
            while pos >= 0:
                start = block.rfind(b"\n", 0, pos) + 1
                end = block.find(b"\n", pos)
                end = len(block) if end < 0 else end + 1
                yield counter.line_at(base + start), base + start, block[start:end]
                pos = low.find(query.raw, end)
            base += len(block)


class _LineCounter:
    """Line numbers of byte offsets, counted on demand by reading the file again up to them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.at = 0  # offset counted up to
        self.line = 1  # line number at that offset

    def line_at(self, offset: int) -> int:
        if offset > self.at:
            with open(self.path, "rb") as f:
                f.seek(self.at)
                left = offset - self.at
                while left > 0:
                    chunk = f.read(min(BLOCK, left))
                    if not chunk:
                        break
                    self.line += chunk.count(b"\n")
                    left -= len(chunk)
            self.at = offset
        return self.line


def _search_persisted(path: Path, query: Query, limit: int | None, candidates: list[tuple[Path, str]] | None = None) -> list[Hit]:
    """`candidates`: the persisted outputs the search index picked, [(file, text)], instead of reading every one."""
    found: list[tuple[Path, int, int, str]] = []
    if candidates is not None:  # the index's candidates, decided by the same matcher
        for p, text in candidates:
            pos, n = query.find_in(text)
            if n:
                found.append((p, pos, n, text))
            if limit is not None and len(found) >= limit:
                break
    else:  # every persisted output read
        from inspector.library.texts import read_persisted
        from inspector.transcript.session import tool_result_files

        for p in tool_result_files(path):
            try:
                data = read_persisted(p)
            except OSError:
                continue
            if query.ascii and query.plain not in data.lower():  # plain text, not JSON: the query as typed
                continue
            text = data.decode("utf-8", "replace")
            pos, n = query.find_in(text)
            if n:
                found.append((p, pos, n, text))
            if limit is not None and len(found) >= limit:
                break
    if not found:
        return []
    # the record that points at each file: the line whose tool_result has that id (file stem)
    wanted = {p.stem: p for p, *_ in found}
    where_line: dict[str, tuple[int, int, str | None]] = {}
    import orjson

    from inspector.transcript.index import READ_BUFFER
    from inspector.transcript.records import LineError, decode_line

    needles = {tid: orjson.dumps(tid) for tid in wanted}
    with open(path, "rb", buffering=READ_BUFFER) as f:
        offset, line_no = 0, 0
        for raw in f:
            line_no += 1
            if b"tool_result" in raw:
                for tid, nb in needles.items():
                    if tid not in where_line and nb in raw:
                        ts = None
                        try:
                            body, _ = decode_line(raw)
                            ts = body.get("timestamp") if isinstance(body.get("timestamp"), str) else None
                        except LineError:
                            pass
                        where_line[tid] = (line_no, offset, ts)
            offset += len(raw)
            if len(where_line) == len(needles):
                break
    out = []
    for p, pos, n, text in found:
        line, off, ts = where_line.get(p.stem, (0, -1, None))
        out.append(Hit(path, line, off, "user", "persisted output", query.snippet(text, pos), n, ts, p.name))
    return out


# ---------------------------------------------------------------------------------------------
# everything under a path


class FileHits(NamedTuple):
    """The hits in one transcript; `session` is the main transcript it belongs to."""

    path: Path
    session: Path
    hits: list[Hit]


Scan = Callable[[str], "list[tuple[str, int]]"]  # a folder's (name, FILE or DIR): safefs.scan_dir, or the index's


def _agents_below(folder: str, scan: Scan) -> list[str]:
    """The `agent-*.jsonl` files under a session's `subagents` folder, as `subagent_files` finds them (no link, a
    bounded depth and number of files, pathlib's order), from listings."""
    from inspector.transcript.safefs import MAX_DEPTH, MAX_FILES

    found: list[str] = []
    stack = [(folder, 0)]
    files = 0
    while stack and files < MAX_FILES:
        d, depth = stack.pop()
        for name, kind in scan(d):
            if kind == DIR:
                if depth < MAX_DEPTH:
                    stack.append((d + os.sep + name, depth + 1))
            else:
                files += 1
                if name.startswith("agent-") and name.endswith(".jsonl") and files <= MAX_FILES:
                    found.append(d + os.sep + name)
    cut = len(folder) + 1
    found.sort(key=lambda p: p[cut:].split(os.sep))
    return found


def list_transcripts(
    target: Target, *, subagents: bool = True, scan: Scan = scan_dir
) -> tuple[list[tuple[Path, Path]], list[Path]]:
    """(transcript, the session it belongs to) for every session under a target, its subagents after it, and the
    sessions whose folder has a `tool-results` folder. The listings come from `scan` (the search index serves them
    from its database while a folder's time is unchanged); no link is followed below a project folder."""
    files, with_results = _list_names(target, subagents, scan)
    paths: dict[str, Path] = {}

    def path(s: str) -> Path:
        if s not in paths:
            paths[s] = Path(s)
        return paths[s]

    return [(path(a), path(b)) for a, b in files], [path(s) for s in with_results]


def _list_names(target: Target, subagents: bool, scan: Scan) -> tuple[list[tuple[str, str]], list[str]]:
    """`list_transcripts` as strings (a search makes a Path only of the files it finds something in)."""
    out: list[tuple[str, str]] = []
    with_results: list[str] = []
    sep = os.sep
    if target.kind == "file":
        groups: list[tuple[str, list[str], list[str]]] = [(os.fspath(target.path.parent), [target.path.name], [])]
    else:
        projects = (
            [os.fspath(target.path)]
            if target.kind == "project"
            else [os.fspath(target.path) + sep + n for n, k in sorted(scan(os.fspath(target.path))) if k == DIR]
        )
        groups = [(proj, *transcript_names(scan(proj))) for proj in projects]
    for proj, sessions, agents in groups:
        folders = {n for n, k in scan(proj) if k == DIR} if sessions else set()
        flat_done = False
        for name in sessions:
            session = proj + sep + name
            out.append((session, session))
            stem = name[:-6]
            if stem in folders:
                beside = dict(scan(proj + sep + stem))
                if beside.get("tool-results") == DIR:
                    with_results.append(session)
                if subagents and beside.get("subagents") == DIR:
                    out.extend((a, session) for a in _agents_below(proj + sep + stem + sep + "subagents", scan))
            if subagents and not flat_done:  # a project's flat agent-*.jsonl files, once, after its first session
                flat_done = True
                out.extend((proj + sep + a, proj + sep + a) for a in agents)
        if subagents and not sessions:  # flat agent files whose session transcript is gone: searched all the same
            out.extend((proj + sep + a, proj + sep + a) for a in agents)
    with_results.sort(key=lambda p: p.split(sep))  # pathlib's order
    return out, with_results


def parse_since(text: str, now: float | None = None) -> str:
    """`--since`: a date (2026-11-02), a UTC time (2026-11-02T14:00) or a span back from now (7d, 12h), as the
    ISO prefix the transcripts' UTC timestamps are compared with. Raises ValueError."""
    import re
    import time
    from datetime import UTC, datetime

    t = text.strip()
    m = re.fullmatch(r"(\d+)\s*([dhm])", t)
    if m:
        secs = int(m.group(1)) * {"d": 86400, "h": 3600, "m": 60}[m.group(2)]
        at = datetime.fromtimestamp((now if now is not None else time.time()) - secs, UTC)
        return at.strftime("%Y-%m-%dT%H:%M:%S")
    try:
        at = datetime.fromisoformat(t.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"--since takes a date (2026-11-02), a UTC time (2026-11-02T14:00) or a span (7d, 12h), not {text!r}"
        ) from None
    if at.tzinfo is not None:
        at = at.astimezone(UTC)
    return at.strftime("%Y-%m-%dT%H:%M:%S")


def _project_matches(session: Path, words: str, cwds: dict[Path, str]) -> bool:
    """`--project`: the words in the project's folder name or in the session's working folder (any case)."""
    w = words.lower()
    if w in session.parent.name.lower():
        return True
    if session not in cwds:
        from inspector.transcript.discovery import quick_info

        try:
            cwds[session] = (quick_info(session).cwd or "").lower()
        except OSError:
            cwds[session] = ""
    return w in cwds[session]


def search_target(
    target: Target,
    query: Query,
    *,
    persisted: bool = True,
    subagents: bool = True,
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    index: Any = None,
    project: str | None = None,
    since: str | None = None,
    budget: int | None = None,
    workers: int | None = None,
) -> Iterator[FileHits]:
    """The transcripts under a target that contain the query, in order, with their hits.

    With an index, `budget` bounds the bytes it reads to catch up (None: all); what it leaves is scanned;
    `workers`: the processes it may read with (the app says 1: its threads are never forked).

    A file that cannot be read is skipped (it may have been deleted since it was listed)."""
    listing = index.listing() if index is not None else None
    files, with_results = _list_names(target, subagents, listing or scan_dir)
    listed = [p for p, _ in files]  # before --project and --since leave some out
    if listing is not None:
        listing.save()
    if project:
        cwds: dict[Path, str] = {}
        files = [(p, sess) for p, sess in files if _project_matches(Path(sess), project, cwds)]
    if since:
        from datetime import UTC, datetime

        def written_since(p: str) -> bool:  # a file last written before `since` holds no record after it
            try:
                return datetime.fromtimestamp(os.stat(p).st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%S") >= since
            except OSError:
                return False

        files = [(p, sess) for p, sess in files if written_since(p)]
    left = limit
    found = None
    found_persisted: dict[Any, list[Any]] = {}
    stale: set[Any] = set()  # files the index was not brought up to date for (its budget): scanned
    stale_sessions: set[Any] = set()
    from inspector.library.fts import usable

    if index is not None and usable(query):  # every file brought up to date, then one lookup for all
        kept = {s for _, s in files}
        sessions = [s for s in with_results if s in kept] if persisted else []
        try:
            index.refresh([p for p, _ in files], sessions, budget=budget, workers=workers)
            if subagents and target.kind != "file":  # the folder listed whole: what is gone from it leaves the index
                try:
                    index.sweep(os.fspath(target.path), listed)
                except sqlite3.Error:
                    pass  # the next search does it; this one's lookup is not lost for it
            both = index.search_all([p for p, _ in files], query, persisted_of=sessions)
            if both is not None:  # (None: the index cannot pick this query's candidates: every file is read)
                found, found_persisted = both
                stale, stale_sessions = index.stale, index.stale_sessions
                if stale or stale_sessions:
                    index.notice(index.behind())
        except sqlite3.Error as exc:  # locked by another writer for long, damaged meanwhile, a full disk: scan
            index.failed(exc)
            found, index = None, None
    for n, (name, session) in enumerate(files):
        if progress is not None:
            progress(n, len(files))
        own = persisted and name == session
        try:
            if found is not None and name not in stale:
                cands = found.get(name, [])
                pc = None if name in stale_sessions else found_persisted.get(name, [])
                if not cands and not (own and (pc is None or pc)):
                    continue  # nothing the index picked, nothing to read
                hits = hits_of(Path(name), query, cands, persisted=own, limit=left, persisted_cands=pc)
            else:
                hits = search_file(Path(name), query, persisted=own, limit=left)
        except OSError:
            continue
        if since:  # a record of before `since` is no hit (one without a time is kept: its file was written since)
            hits = [h for h in hits if not h.timestamp or h.timestamp[:19] >= since]
        if hits:
            yield FileHits(hits[0].path, Path(session), hits)
            if left is not None:
                left -= len(hits)
                if left <= 0:
                    return
