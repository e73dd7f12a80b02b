"""A table of the inspector database that keeps one row per file: what was worked out from it, checked against a key.

The stats of a session (`stats.StatsCache`) and the cost facts of a transcript (`costcache.ResponsesCache`) are kept
so: a row is (the file's absolute path, its key, the value), the key says what the value was made from (the file's
size and time, the inspector that made it), and a row whose key no longer matches is made again. Rows are written in
batches, each in one transaction; never inside ~/.claude. Best effort: a database that cannot be opened or written
(a read-only or missing cache folder, locked by a writer for long) costs the speed, never the answer.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


class RowCache:
    """One table (`TABLE`: path BLOB PRIMARY KEY, key BLOB, value BLOB) of the inspector database (`index.sqlite` in
    the cache folder, beside the search index)."""

    TABLE = ""
    VALUE = "value"  # the value's column
    BATCH = 200

    def __init__(self, folder: Path | None, index: Any = None) -> None:
        """`index`: the inspector database the caller has open already (a `search`'s): used, and left open."""
        self.folder = folder
        self.hits = 0
        self.misses = 0
        self._index: Any = index  # the inspector database (fts.SearchIndex), opened when first needed
        self._own = index is None  # closed by `close` (else the caller's)
        self._unusable = folder is None and index is None
        self._pending: list[tuple[bytes, bytes, bytes]] = []
        self._rows: dict[bytes, tuple[bytes, bytes]] | None = None  # read ahead by `prefetch`
        self._checked = False  # `opened` was run on the database

    def _conn(self) -> Any:
        if self._index is None and not self._unusable:
            import sqlite3

            from inspector.library.cache import IndexUnavailable
            from inspector.library.fts import SearchIndex

            assert self.folder is not None
            try:
                self._index = SearchIndex(self.folder / "index.sqlite")
            except (OSError, IndexUnavailable, sqlite3.Error):
                self._unusable = True
        if self._index is not None and not self._checked:
            self._checked = True
            if not self.opened(self._index):
                self._unusable = True
                if self._own:
                    self._index.close()
                self._index = None
        return self._index.db if self._index is not None else None

    def opened(self, index: Any) -> bool:
        """Made ready once the database is open (False: not usable)."""
        return True

    @staticmethod
    def path_bytes(path: Path | str) -> bytes:
        """A file's row: its absolute path, as bytes (the search index's key of a file)."""
        from inspector.library.cache import path_key

        return path_key(path)

    def row(self, path: bytes) -> tuple[bytes, bytes] | None:
        """The (key, value) kept for a path (absolute, as `path_bytes` makes it), or None."""
        import sqlite3

        db = self._conn()
        if db is None:
            return None
        try:
            got = self._rows.pop(path, None) if self._rows is not None else None
            if got is None:
                got = db.execute(f"SELECT key, {self.VALUE} FROM {self.TABLE} WHERE path=?", (path,)).fetchone()
        except sqlite3.Error:
            return None
        return (got[0], got[1]) if got is not None else None

    def prefetch(self, folder: Path) -> None:
        """Read the rows of every file under a folder in one query (`row` then looks them up)."""
        import sqlite3

        db = self._conn()
        if db is None:
            return
        lo = os.fsencode(os.path.abspath(folder)) + b"/"
        try:
            self._rows = {
                p: (k, v)
                for p, k, v in db.execute(
                    f"SELECT path, key, {self.VALUE} FROM {self.TABLE} WHERE path >= ? AND path < ?", (lo, lo[:-1] + b"0")
                )
            }
        except sqlite3.Error:
            self._rows = None

    def put_row(self, path: bytes, key: bytes, value: bytes) -> None:
        if self._conn() is None:
            return
        self._pending.append((path, key, value))
        if len(self._pending) >= self.BATCH:
            self.flush()

    def flush(self) -> None:
        """Write what `put_row` holds, in one transaction (dropped, not raised, when the database cannot take it: the
        cache is an optimisation)."""
        rows, self._pending = self._pending, []
        if self._index is not None:
            self._index.write_many(f"INSERT OR REPLACE INTO {self.TABLE} VALUES(?, ?, ?)", rows)

    def sweep(self) -> None:
        """Delete the rows `prefetch` read that no `row` asked for and whose file is gone from disk: a deleted
        session's rows leave the database with it (when it cannot be written now, the next pass does it)."""
        left, self._rows = self._rows, None
        gone = [(p,) for p in left or () if not os.path.exists(p)]
        if gone and self._index is not None and self._index.write_many(f"DELETE FROM {self.TABLE} WHERE path=?", gone):
            self._index.scrub()

    def __enter__(self) -> RowCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.sweep()
        self.flush()
        if self._index is not None:
            if self._own:
                self._index.close()  # its connection, and its lock file if it took the lock
            self._index = None
            self._unusable = True
