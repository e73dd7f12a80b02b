"""A full-text index of what a person reads in the transcripts, in SQLite (FTS5, trigram): instant search.

One database under `$XDG_CACHE_HOME/inspector/index.sqlite` holds, for every transcript searched, the texts
`search` looks in (`record_texts` of each line: prompts, replies, thinking, tool inputs and results, summaries,
system notes, attachments' rendered text), each with its file, line, byte offset, record type, place and time.

- Incremental: a file is indexed once; a file that grew (a live session) only from the end of its last complete
  line indexed; a file replaced (another inode, other first bytes) or truncated is dropped and indexed again.
- What it returns is what the scan returns: the trigram index only picks the candidate texts (a LIKE, which it
  serves with `detail=none`, half the size and build time of a phrase index), and the same `Query.find_in` as the
  scan decides, counts and cuts the snippet. A query under 3 characters (which trigrams cannot look up) or not
  ASCII (LIKE folds the case of ASCII only) is left to the scan. Tool results persisted beside a session are searched as before.
- Safe: WAL mode, a short busy timeout; a database that is corrupt or of another schema is deleted and built again
  (with one notice); one that stays locked is not waited on: the caller falls back to the scan. It holds nothing
  the transcripts do not: delete it and nothing is lost.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import orjson

SCHEMA = 6
HEAD = 4096  # bytes of a file's start kept to tell a replaced file from a grown one


def db_path(env: dict[str, str] | None = None) -> Path:
    from inspector.transcript.stats import cache_dir

    return cache_dir(env) / "index.sqlite"


class IndexUnavailable(Exception):
    """The index cannot be used now (locked for long, no FTS5): search by scanning instead."""


@dataclass(slots=True)
class IndexStatus:
    path: Path
    files: int
    texts: int
    bytes_indexed: int
    size: int


class SearchIndex:
    def __init__(self, path: Path | None = None, *, notice: Callable[[str], None] | None = None) -> None:
        self.path = Path(path) if path is not None else db_path()
        self.notice = notice or (lambda _msg: None)
        self.db = self._open()

    # -- opening ------------------------------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for attempt in (1, 2):
            try:
                db = sqlite3.connect(self.path, timeout=2.0, isolation_level=None, check_same_thread=False)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                version = self._version(db)
                if version is not None and version != SCHEMA and attempt == 1:
                    db.close()  # another layout: the file goes (dropping its tables would keep its size)
                    self._discard(f"the search index {self.path} is from another version of inspector: built again")
                    continue
                if version != SCHEMA:
                    self._create(db)
                db.execute("SELECT count(*) FROM files").fetchone()
                return db
            except sqlite3.OperationalError as exc:
                if "locked" in str(exc) or "busy" in str(exc):
                    raise IndexUnavailable(f"the search index is locked by another process ({exc})") from None
                if "fts5" in str(exc) or "trigram" in str(exc):
                    raise IndexUnavailable(f"this Python's SQLite has no FTS5 trigram tokenizer ({exc})") from None
                if attempt == 2:
                    raise IndexUnavailable(str(exc)) from None
                self._discard(f"the search index {self.path} could not be read ({exc}): built again")
            except sqlite3.DatabaseError as exc:  # not a database, or damaged
                if attempt == 2:
                    raise IndexUnavailable(str(exc)) from None
                self._discard(f"the search index {self.path} was damaged ({exc}): built again")
        raise IndexUnavailable("unreachable")

    def _discard(self, why: str) -> None:
        self.notice(why)
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(str(self.path) + suffix)
            except OSError:
                pass

    @staticmethod
    def _version(db: sqlite3.Connection) -> int | None:
        try:
            row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        except sqlite3.OperationalError:
            return None
        return int(row[0]) if row else None

    @staticmethod
    def _create(db: sqlite3.Connection) -> None:
        db.executescript("""
            DROP TABLE IF EXISTS texts; DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS dirs;
            DROP TABLE IF EXISTS stats; DROP TABLE IF EXISTS listings;
            CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
            CREATE TABLE files(id INTEGER PRIMARY KEY, path BLOB UNIQUE NOT NULL, inode INTEGER, size INTEGER,
                               mtime_ns INTEGER, head BLOB, indexed_to INTEGER NOT NULL DEFAULT 0,
                               lines INTEGER NOT NULL DEFAULT 0, owner BLOB);
            CREATE INDEX files_owner ON files(owner);
            CREATE TABLE dirs(path BLOB PRIMARY KEY, mtime_ns INTEGER);
            -- a folder's files and folders (Listings), valid while its time is `mtime_ns`
            CREATE TABLE listings(dir BLOB PRIMARY KEY, mtime_ns INTEGER NOT NULL, entries BLOB NOT NULL);
            -- `stats --json` of a session (StatsCache), valid while `key` (its size, time, folder) still holds
            CREATE TABLE stats(path BLOB PRIMARY KEY, key BLOB NOT NULL, stats BLOB NOT NULL);
            CREATE VIRTUAL TABLE texts USING fts5(text, file_id UNINDEXED, line UNINDEXED, off UNINDEXED,
                                                  type UNINDEXED, place UNINDEXED, ts UNINDEXED, tokenize='trigram',
                                                  detail=none);
        """)
        db.execute("INSERT INTO meta VALUES('schema', ?)", (str(SCHEMA),))

    def close(self) -> None:
        self.db.close()

    # -- keeping it up to date ----------------------------------------------------------------
    def update(self, path: Path) -> int:
        """Index what is new in a transcript; returns the lines read. A replaced or truncated file is redone."""
        from inspector.transcript.index import MAX_LINE

        key = _key(path)
        try:
            st = os.stat(path)
        except OSError:
            self.forget(key)
            return 0
        row = self.db.execute("SELECT id, inode, size, mtime_ns, head, indexed_to, lines FROM files WHERE path=?",
                              (key,)).fetchone()
        if row is not None and (row[1], row[2], row[3]) == (st.st_ino, st.st_size, st.st_mtime_ns):
            return 0  # unchanged: one stat, nothing read
        try:
            with open(path, "rb") as f:
                head = f.read(HEAD)
        except OSError:
            self.forget(key)
            return 0
        drop: tuple[str, tuple[Any, ...]] | None = None  # what of the file's rows goes, in the same transaction
        if row is not None:
            fid, inode, size, mtime_ns, old_head, indexed_to, lines = row
            replaced = inode != st.st_ino or st.st_size < indexed_to or head[: len(old_head or b"")] != (old_head or b"")[: len(head)]
            if replaced:
                drop = ("DELETE FROM texts WHERE file_id=?", (fid,))
                indexed_to = lines = 0
            elif size > indexed_to:  # its last line had no end when it was read: read again, from its start
                drop = ("DELETE FROM texts WHERE file_id=? AND line>?", (fid, lines))
        else:
            fid, indexed_to, lines = None, 0, 0
        rows: list[tuple[Any, ...]] = []
        read = 0
        with self._write():
            if drop is not None:
                self.db.execute(*drop)
            if fid is None:
                fid = self.db.execute("INSERT INTO files(path) VALUES(?)", (key,)).lastrowid
            with open(path, "rb") as f:
                f.seek(indexed_to)
                offset = indexed_to
                while True:
                    raw = f.readline(MAX_LINE + 1)
                    if not raw:
                        break
                    if raw[-1] != 10:  # an over-long line (skipped as the scan skips it) or a last line without its end
                        if len(raw) > MAX_LINE:
                            while raw and raw[-1] != 10:
                                offset += len(raw)
                                raw = f.readline(1 << 20)
                            offset += len(raw)
                            lines += 1
                            continue
                        # searched as the scan searches it, but not counted as done: it is indexed again (its rows
                        # replaced) once the file changes, as a line still being written would be
                        rows.extend(self._texts(raw, fid, lines + 1, offset))
                        break
                    lines += 1
                    read += 1
                    rows.extend(self._texts(raw, fid, lines, offset))
                    offset += len(raw)
                    if len(rows) >= 5000:
                        self.db.executemany("INSERT INTO texts VALUES(?,?,?,?,?,?,?)", rows)
                        rows.clear()
            if rows:
                self.db.executemany("INSERT INTO texts VALUES(?,?,?,?,?,?,?)", rows)
            self.db.execute("UPDATE files SET inode=?, size=?, mtime_ns=?, head=?, indexed_to=?, lines=? WHERE id=?",
                            (st.st_ino, st.st_size, st.st_mtime_ns, head, offset, lines, fid))
        return read

    @contextlib.contextmanager
    def _write(self) -> Iterator[None]:
        """One write transaction: all of it, or (on any error or interruption) none of it."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    @staticmethod
    def _texts(raw: bytes, fid: int, line: int, offset: int) -> Iterable[tuple[Any, ...]]:
        from inspector.search import record_texts
        from inspector.transcript.records import LineError, decode_line

        try:
            body, _ = decode_line(raw)
        except LineError:
            return ()
        t = body.get("type")
        t = t if isinstance(t, str) else ""
        ts = body.get("timestamp") if isinstance(body.get("timestamp"), str) else None
        return [(text, fid, line, offset, t, where, ts) for where, text in record_texts(body) if text]

    def forget(self, key: bytes) -> None:
        row = self.db.execute("SELECT id FROM files WHERE path=?", (key,)).fetchone()
        if row:
            self.db.execute("DELETE FROM texts WHERE file_id=?", (row[0],))
            self.db.execute("DELETE FROM files WHERE id=?", (row[0],))

    def prune(self, present: Iterable[Path]) -> int:
        """Drop the files no longer on disk (of those under the folders given)."""
        keep = {_key(p) for p in present}
        gone = [p for (p,) in self.db.execute("SELECT path FROM files") if p not in keep and not os.path.exists(p)]
        for p in gone:
            self.forget(p)
        return len(gone)

    def refresh(self, paths: list[Path], sessions: list[Path] = ()) -> int:
        """Bring many files up to date: one query for what is known, one stat per file, a read only of what changed;
        for each of `sessions`, its persisted tool results, looked at again only when their folder's time changed
        (Claude Code writes each once, under a new name: one added or removed changes the folder's time; a folder
        changed in the last 2 s is looked at again next time, as a coarse clock may not have ticked yet)."""
        known = {k: (i, sz, m) for k, i, sz, m in
                 self.db.execute("SELECT path, inode, size, mtime_ns FROM files WHERE owner IS NULL")}
        read = 0
        for p in paths:
            try:
                st = os.stat(p)
            except OSError:
                continue
            if known.get(_key(p)) != (st.st_ino, st.st_size, st.st_mtime_ns):
                read += self.update(p)
        if sessions:
            dirs = dict(self.db.execute("SELECT path, mtime_ns FROM dirs"))
            now = time.time_ns()
            for session in sessions:
                d = _key(session)[:-6] + b"/tool-results"
                try:
                    m = os.stat(d).st_mtime_ns
                except OSError:
                    continue
                if dirs.get(d) == m:
                    continue
                read += self.update_persisted(session)
                self.db.execute("INSERT OR REPLACE INTO dirs VALUES(?, ?)", (d, m if 0 <= now - m > RACY_NS else -1))
        return read

    def update_persisted(self, session: Path) -> int:
        """Index the session's persisted tool results, each file as one text (as the scan reads it: its first
        PERSISTED_CAP bytes); files gone are dropped."""
        from inspector.search import PERSISTED_CAP
        from inspector.transcript.safefs import open_regular
        from inspector.transcript.session import tool_result_files

        owner = _key(session)
        present = tool_result_files(session)
        keys = {_key(p) for p in present}
        for (k,) in self.db.execute("SELECT path FROM files WHERE owner=?", (owner,)).fetchall():
            if k not in keys:
                self.forget(k)
        n = 0
        for p in present:
            key = _key(p)
            try:
                st = os.stat(p)
            except OSError:
                continue
            row = self.db.execute("SELECT id, inode, size, mtime_ns FROM files WHERE path=?", (key,)).fetchone()
            if row is not None and (row[1], row[2], row[3]) == (st.st_ino, st.st_size, st.st_mtime_ns):
                continue
            try:
                with open_regular(p) as f:
                    data = f.read(PERSISTED_CAP)
            except OSError:
                continue
            with self._write():
                if row is not None:
                    self.db.execute("DELETE FROM texts WHERE file_id=?", (row[0],))
                    fid = row[0]
                else:
                    fid = self.db.execute("INSERT INTO files(path, owner) VALUES(?, ?)", (key, owner)).lastrowid
                self.db.execute("INSERT INTO texts VALUES(?,?,?,?,?,?,?)",
                                (data.decode("utf-8", "replace"), fid, 0, -1, "user", "persisted output", None))
                self.db.execute("UPDATE files SET inode=?, size=?, mtime_ns=?, indexed_to=?, owner=? WHERE id=?",
                                (st.st_ino, st.st_size, st.st_mtime_ns, len(data), owner, fid))
            n += 1
        return n

    def persisted_candidates(self, session: Path, query: Any) -> list[tuple[Path, str]]:
        """(persisted file, its text) of one session's persisted tool results the index says may match, by name."""
        found = self.search_all([], query, persisted_of=[session])
        return found[1].get(session, []) if found is not None else []

    def search_all(self, paths: list[Path], query: Any, persisted_of: list[Path] = ()
                   ) -> tuple[dict[Path, list[tuple[Any, ...]]], dict[Path, list[tuple[Path, str]]]] | None:
        """The candidate texts of every one of `paths` (in each file's order), and for each session of `persisted_of`
        its persisted outputs' as (file, text) by name, in one lookup (the trigram index first, then the files of
        what it found: a join on the unindexed file column would scan every text); None when the query is not
        `usable`."""
        if not usable(query):
            return None
        found = self.db.execute("SELECT file_id, line, off, type, place, ts, text FROM texts WHERE text LIKE ? "
                                "ORDER BY rowid", (like(query),)).fetchall()
        out: dict[Path, list[tuple[Any, ...]]] = {}
        outp: dict[Path, list[tuple[Path, str]]] = {}
        if not found:
            return out, outp
        fids = sorted({r[0] for r in found})
        ids: dict[int, tuple[bytes, bytes | None]] = {}
        for n in range(0, len(fids), 500):
            part = fids[n:n + 500]
            ids.update((fid, (k, o)) for fid, k, o in self.db.execute(
                f"SELECT id, path, owner FROM files WHERE id IN ({','.join('?' * len(part))})", part))
        wanted = {_key(p): p for p in paths}
        owners = {_key(p): p for p in persisted_of}
        for fid, line, off, t, place, ts, text in found:
            k, owner = ids.get(fid, (None, None))
            if k is None:
                continue
            if line == 0:
                if owner in owners:
                    outp.setdefault(owners[owner], []).append((Path(os.fsdecode(k)), text))
            elif k in wanted:
                out.setdefault(wanted[k], []).append((line, off, t, place, ts, text))
        for v in outp.values():
            v.sort()
        return out, outp

    def listing(self) -> Listings:
        """Folder listings for `search.list_transcripts`, from the database while a folder's time is unchanged."""
        return Listings(self)

    # -- looking up ---------------------------------------------------------------------------
    def candidates(self, path: Path, query: Any) -> list[tuple[int, int, str, str, str | None, str]] | None:
        """(line, offset, type, place, time, text) of the texts of one transcript the trigrams say may match, in file
        order; None when the query is too short for trigrams (the caller scans)."""
        if not usable(query):
            return None
        row = self.db.execute("SELECT id FROM files WHERE path=?", (_key(path),)).fetchone()
        if row is None:
            return []
        return self.db.execute("SELECT line, off, type, place, ts, text FROM texts WHERE file_id=? AND text LIKE ? "
                               "ORDER BY rowid", (row[0], like(query))).fetchall()

    def status(self) -> IndexStatus:
        files, done = self.db.execute("SELECT count(*), coalesce(sum(indexed_to), 0) FROM files").fetchone()
        texts = self.db.execute("SELECT count(*) FROM texts").fetchone()[0]
        size = sum(os.path.getsize(str(self.path) + s) for s in ("", "-wal") if os.path.exists(str(self.path) + s))
        return IndexStatus(self.path, files, texts, done, size)


RACY_NS = 2_000_000_000  # a folder changed this recently may change again within its clock's tick: not kept


class Listings:
    """What `os.scandir` says of a folder (its regular files and folders, links left out; as JSON, or as "f"/"d" + name
    joined by "/" when a name is not UTF-8), kept in the database with
    the folder's time: a folder whose time has not changed has the same entries (adding, removing or renaming an
    entry changes it), so a warm search costs one stat per folder instead of a listing. A listing is kept only once
    its folder has been still for 2 s, so that two changes within one tick of a coarse file-system clock are never
    taken for none."""

    def __init__(self, index: SearchIndex) -> None:
        self.index = index
        self.known: dict[bytes, tuple[int, bytes]] | None = None
        self.new: list[tuple[bytes, int, bytes]] = []

    def _load(self, first: str) -> dict[bytes, tuple[int, bytes]]:
        lo = os.fsencode(os.path.abspath(first))
        try:  # the folders under the first one asked for (the target): one query
            rows = self.index.db.execute("SELECT dir, mtime_ns, entries FROM listings WHERE dir >= ? AND dir < ?",
                                         (lo, lo + b"\xff")).fetchall()
        except sqlite3.Error:
            rows = []
        return {d: (m, e) for d, m, e in rows}

    def __call__(self, d: str) -> list[tuple[str, int]]:
        from inspector.search import DIR, FILE, scan_dir

        if self.known is None:
            self.known = self._load(d)
        key = os.fsencode(os.path.abspath(d))
        try:
            mtime = os.stat(d).st_mtime_ns
        except OSError:
            return []
        hit = self.known.get(key)
        if hit is not None and hit[0] == mtime:
            if hit[1][:1] == b"[":
                return [tuple(e) for e in orjson.loads(hit[1])]  # type: ignore[misc]
            return [(os.fsdecode(e[1:]), FILE if e[:1] == b"f" else DIR) for e in hit[1].split(b"/") if e]
        entries = scan_dir(d)
        if 0 <= time.time_ns() - mtime > RACY_NS:
            try:  # as JSON, [[name, kind], ...], the fastest to read back; a name that is not UTF-8 as bytes instead
                blob = orjson.dumps(entries)
            except TypeError:
                blob = b"/".join((b"f" if k == FILE else b"d") + os.fsencode(n) for n, k in entries)
            self.known[key] = (mtime, blob)
            self.new.append((key, mtime, blob))
        return entries

    def save(self) -> None:
        """Keep the listings read in this search (best effort: a locked database keeps them for the next one)."""
        rows, self.new = self.new, []
        if not rows:
            return
        try:
            with self.index._write():
                self.index.db.executemany("INSERT OR REPLACE INTO listings VALUES(?, ?, ?)", rows)
        except sqlite3.Error:
            pass


def usable(query: Any) -> bool:
    """Whether the index can pick the candidates: 3 characters or more (a trigram), ASCII (SQLite's LIKE folds the case
    of ASCII only; another query is scanned, so that what Python's lower() matches is never missed)."""
    return len(query.folded) >= 3 and query.folded.isascii()


def like(query: Any) -> str:
    """The LIKE pattern that picks the candidates. No ESCAPE clause (SQLite then does not use the trigram index): a
    % or _ in the query stays a wildcard, which only widens the candidates; the matcher decides."""
    return "%" + query.folded + "%"


def _key(path: Path | str) -> bytes:
    """A file's key: its absolute path as bytes (a name that is not UTF-8 is a valid key too)."""
    s = os.fspath(path)
    return os.fsencode(s if s.startswith("/") and "/." not in s and "//" not in s else os.path.abspath(s))


def open_index(notice: Callable[[str], None] | None = None) -> SearchIndex | None:
    """The index, or None (with the reason told to `notice`) when it cannot be used now: the scan is used then."""
    if os.environ.get("INSPECTOR_NO_INDEX"):
        return None
    try:
        return SearchIndex(notice=notice)
    except (IndexUnavailable, OSError) as exc:
        if notice:
            notice(f"searching without the index: {exc}")
        return None


__all__ = ["IndexStatus", "IndexUnavailable", "SearchIndex", "db_path", "open_index"]
