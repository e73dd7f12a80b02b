"""What the cost of each transcript was read as, kept in the inspector database (`responses`), file by file.

`inspector cost --by day|week|month|model|block` over a root reads every transcript's responses (bench root: 1.9 GB);
kept here, a run after the first reads again only the transcripts that changed since, and a session's subagent files
only when they changed (a live session's growth re-reads its main transcript, not its 180 subagents). A row is:

- a session's transcript: its place in the order a root is read (`first_timestamp`), its own responses, the agents its
  copied records name, the responses its agent_progress records relay, its session id (how its flat agent files are
  found): all read from that file's bytes, keyed by its inode, size and time;
- a subagent transcript: its responses, keyed by its size and time (as `agent_file_responses` keys it).

Both keys hold the inspector version and `RESPONSES_SCHEMA`: another inspector reads them again. The rows hold no text
(models, times, token counts, response ids). Best effort, as every row cache (`rowcache`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from inspector import __version__
from inspector.library.cost import Digest, FileKey, Response
from inspector.library.rowcache import RowCache

RESPONSES_SCHEMA = 1  # bumped when what a row holds, or how a response is read, changes


def _rows(rs: list[Response]) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in rs]


def _responses(rows: Any) -> list[Response]:
    return [Response(*row) for row in rows]


class ResponsesCache(RowCache):
    TABLE = "responses"
    has_agents = True  # whether a subagent file's row may be kept (False once a prefetched folder has none)

    def prefetch(self, folder: Path) -> None:
        super().prefetch(folder)
        if self._rows is not None:
            self.has_agents = any(isinstance(k, bytes) and k.startswith(b'["agent"') for k, _v in self._rows.values())

    def opened(self, index: Any) -> bool:
        """The table, made in a database that has none yet (one an earlier inspector made)."""
        import sqlite3

        from inspector.library.fts import RESPONSES_TABLE

        try:
            if not index.db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='responses'").fetchone():
                with index.transaction():
                    index.db.execute(RESPONSES_TABLE)
        except sqlite3.Error:
            return False
        return True

    # -- a session's transcript ---------------------------------------------------------------
    @staticmethod
    def _session_key(key: tuple[int, int, int]) -> bytes:
        return orjson.dumps(["session", *key, __version__, RESPONSES_SCHEMA])

    def digest(self, path: Path) -> Digest | None:
        """The digest kept for a transcript as it is now, or None."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        row = self.row(self.path_bytes(path))
        if row is None or row[0] != self._session_key(key):
            self.misses += 1
            return None
        try:
            when, own, copied, relayed, sid = orjson.loads(row[1])
            d = Digest(key, str(when), _responses(own), [str(a) for a in copied], dict(relayed), str(sid))
        except (orjson.JSONDecodeError, TypeError, ValueError):
            self.misses += 1
            return None  # damaged: read again (and the row rewritten)
        self.hits += 1
        return d

    def put_digest(self, path: Path, d: Digest) -> None:
        try:
            value = orjson.dumps([d.when, _rows(d.own), d.copied, d.relayed, d.session_id])
        except TypeError:
            return  # a text orjson cannot write (a lone surrogate): not kept
        self.put_row(self.path_bytes(path), self._session_key(d.key), value)

    # -- a subagent transcript ----------------------------------------------------------------
    def agent(self, path: Path) -> tuple[FileKey, list[Response]] | None:
        """The responses kept for a subagent file, with the key (`FileKey`, the path as given) they were read at (it
        may not be the file's now: `agent_file_responses` compares), or None."""
        row = self.row(self.path_bytes(path))
        if row is None:
            return None
        try:
            kind, size, mtime_ns, version, schema = orjson.loads(row[0])
            if kind != "agent" or version != __version__ or schema != RESPONSES_SCHEMA:
                return None
            return (str(path), int(size), int(mtime_ns)), _responses(orjson.loads(row[1]))
        except (orjson.JSONDecodeError, TypeError, ValueError):
            return None

    def memo(self) -> KeptMemo:
        """A memo of subagent files' responses backed by this cache (KeptMemo)."""
        return KeptMemo(self)

    def put_agent(self, key: FileKey, found: list[Response]) -> None:
        try:
            value = orjson.dumps(_rows(found))
        except TypeError:
            return
        path, size, mtime_ns = key
        self.put_row(self.path_bytes(path), orjson.dumps(["agent", size, mtime_ns, __version__, RESPONSES_SCHEMA]), value)


class KeptMemo(dict[FileKey, list[Response]]):
    """The memo `agent_file_responses` takes (FileKey -> responses), backed by a ResponsesCache: a subagent file not
    read in this process is looked up there (as it is now: the key compared), and each file read is kept there too
    (written at `flush`). A session's cost (`session_cost`, `Ledger.session`) then reads a subagent transcript once
    across runs, not once a process."""

    def __init__(self, cache: ResponsesCache) -> None:
        super().__init__()
        self.cache = cache
        self._new: list[tuple[FileKey, list[Response]]] = []

    def get(self, key: FileKey, default: Any = None) -> Any:
        got = super().get(key)
        if got is not None:
            return got
        row = self.cache.agent(Path(key[0]))
        if row is not None and row[0] == key:
            super().__setitem__(key, row[1])
            return row[1]
        return default

    def hold(self, paths: Iterable[Path]) -> list[FileKey]:
        """The keys of the files among `paths` the cache holds, their responses put in the memo (not kept again): a
        worker told them reads only the others."""
        keys = []
        for p in paths:
            row = self.cache.agent(p)
            if row is not None:
                super().__setitem__(row[0], row[1])
                keys.append(row[0])
        return keys

    def __setitem__(self, key: FileKey, value: list[Response]) -> None:
        super().__setitem__(key, value)
        self._new.append((key, value))

    def flush(self) -> None:
        new, self._new = self._new, []
        for key, found in new:
            self.cache.put_agent(key, found)
        self.cache.flush()
