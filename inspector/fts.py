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

SCHEMA = 7
HEAD = 4096  # bytes of a file's start kept to tell a replaced file from a grown one


def cache_dir(env: dict[str, str] | None = None) -> Path:
    """inspector's cache folder: $XDG_CACHE_HOME/inspector (by default ~/.cache/inspector)."""
    env = os.environ if env is None else env
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "inspector"


def db_path(env: dict[str, str] | None = None) -> Path:
    return cache_dir(env) / "index.sqlite"


class IndexUnavailable(Exception):
    """The index cannot be used now (locked for long, no FTS5): search by scanning instead."""


@dataclass(slots=True)
class IndexStatus:
    path: Path
    files: int  # transcripts
    texts: int
    bytes_indexed: int  # of transcripts and persisted outputs
    size: int
    persisted: int = 0  # persisted tool results
    sessions: int = 0  # rows of the stats cache


class SearchIndex:
    def __init__(self, path: Path | None = None, *, notice: Callable[[str], None] | None = None) -> None:
        self.path = Path(path) if path is not None else db_path()
        self.notice = notice or (lambda _msg: None)
        self.stale: set[Path] = set()  # what the last `refresh` left out for its budget
        self.stale_sessions: set[Path] = set()
        self.stale_bytes = 0
        self._read_bytes = 0
        self._known_cache: tuple[int, dict[bytes, tuple[int, int, int]]] | None = None
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
            DROP TABLE IF EXISTS stats; DROP TABLE IF EXISTS listings; DROP TABLE IF EXISTS spans;
            CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
            CREATE TABLE files(id INTEGER PRIMARY KEY, path BLOB UNIQUE NOT NULL, inode INTEGER, size INTEGER,
                               mtime_ns INTEGER, head BLOB, indexed_to INTEGER NOT NULL DEFAULT 0,
                               lines INTEGER NOT NULL DEFAULT 0, owner BLOB);
            CREATE INDEX files_owner ON files(owner);
            -- the rowids of a file's texts, a span per update (an FTS5 table finds rows by rowid only: deleting
            -- by file_id would read every text); `tail`: the rows of a last line read before its end was written
            CREATE TABLE spans(file_id INTEGER NOT NULL, lo INTEGER NOT NULL, hi INTEGER NOT NULL, tail INTEGER NOT NULL);
            CREATE INDEX spans_file ON spans(file_id);
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
        plan = self._plan(path)
        if plan is None:
            return 0
        return self._apply(plan, read_texts(os.fspath(path), plan.start, plan.lines))

    def _plan(self, path: Path) -> _Plan | None:
        """What to read of a transcript (None: nothing, it is unchanged or gone)."""
        key = _key(path)
        try:
            st = os.stat(path)
        except OSError:
            self.forget(key)
            return None
        row = self.db.execute("SELECT id, inode, size, mtime_ns, head, indexed_to, lines FROM files WHERE path=?",
                              (key,)).fetchone()
        if row is not None and (row[1], row[2], row[3]) == (st.st_ino, st.st_size, st.st_mtime_ns):
            return None  # unchanged: one stat, nothing read
        try:
            with open(path, "rb") as f:
                head = f.read(HEAD)
        except OSError:
            self.forget(key)
            return None
        if row is None:
            return _Plan(key, None, None, 0, 0, head, st, row)
        fid, inode, size, mtime_ns, old_head, indexed_to, lines = row
        if inode != st.st_ino or st.st_size < indexed_to or head[: len(old_head or b"")] != (old_head or b"")[: len(head)]:
            return _Plan(key, fid, True, 0, 0, head, st, row)  # replaced: all of it goes
        return _Plan(key, fid, False, indexed_to, lines, head, st, row)  # grown: an unfinished last line's rows go

    def _apply(self, plan: _Plan, batches: Iterable[Any]) -> int:
        """Write what `read_texts` yields for a plan, in one transaction; returns the lines read. When another
        process (the app, a command) indexed the file since the plan was made, nothing is written: it is done."""
        with self._write():
            now = self.db.execute("SELECT id, inode, size, mtime_ns, head, indexed_to, lines FROM files WHERE path=?",
                                  (plan.key,)).fetchone()
            if now != plan.row:
                return 0
            fid = plan.fid
            if fid is not None:
                self._drop(fid, tail_only=not plan.drop)
            else:
                fid = self.db.execute("INSERT INTO files(path) VALUES(?)", (plan.key,)).lastrowid
            first = next_id = self._next_rowid()
            tail_from = None
            for item in batches:
                if isinstance(item, _End):
                    end = item
                    break
                if item and item[0] is None:  # the marker before the rows of an unfinished last line
                    tail_from = next_id
                    item = item[1:]
                next_id = self._insert(item, fid, next_id)
            if tail_from is None:
                tail_from = next_id
            if tail_from > first:
                self.db.execute("INSERT INTO spans VALUES(?, ?, ?, 0)", (fid, first, tail_from - 1))
            if next_id > tail_from:
                self.db.execute("INSERT INTO spans VALUES(?, ?, ?, 1)", (fid, tail_from, next_id - 1))
            st = plan.st
            self.db.execute("UPDATE files SET inode=?, size=?, mtime_ns=?, head=?, indexed_to=?, lines=? WHERE id=?",
                            (st.st_ino, st.st_size, st.st_mtime_ns, plan.head, end.offset, end.lines, fid))
        return end.read

    def _update_many(self, paths: list[Path], workers: int | None = None, stop: Callable[[], bool] | None = None) -> int:
        """`update` each file; when there is much to read, the lines are read and decoded in a process per core
        (`workers`, default the number of cores) while this one writes, in the files' order, a few files ahead at
        most (bounded memory). A file with more than BIG bytes to read is read here, in batches."""
        plans = [(p, plan) for p in paths if (plan := self._plan(p)) is not None]
        todo = sum(max(0, plan.st.st_size - plan.start) for _, plan in plans)
        n = workers if workers is not None else (os.cpu_count() or 1)
        stop = stop or (lambda: False)
        if n <= 1 or len(plans) < 4 or todo < POOL_MIN:
            read = 0
            for p, plan in plans:
                if stop():
                    break
                read += self._apply_read(p, plan)
            return read
        import collections
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        read = 0
        # forkserver, not fork: the caller may be a threaded app (the TUI), and forking threads is unsafe
        with ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("forkserver")) as pool:
            ahead: collections.deque[tuple[Path, _Plan, Any]] = collections.deque()
            for p, plan in plans:
                if stop():
                    break
                small = plan.st.st_size - plan.start <= BIG
                ahead.append((p, plan, pool.submit(_read_all, os.fspath(p), plan.start, plan.lines) if small else None))
                while len(ahead) > 2 * n or (ahead and ahead[0][2] is None):
                    read += self._take(*ahead.popleft())
            while ahead and not stop():
                read += self._take(*ahead.popleft())
            for _p, _plan, future in ahead:  # left for the next time
                if future is not None:
                    future.cancel()
        return read

    def _take(self, p: Path, plan: _Plan, future: Any) -> int:
        if future is None:
            return self._apply_read(p, plan)
        try:
            return self._apply(plan, future.result())
        except OSError:
            return 0  # gone since it was listed

    def _apply_read(self, p: Path, plan: _Plan) -> int:
        try:
            return self._apply(plan, read_texts(os.fspath(p), plan.start, plan.lines))
        except OSError:
            return 0

    def _next_rowid(self) -> int:
        """The rowid the next text takes (in a write transaction: no one else inserts meanwhile)."""
        row = self.db.execute("SELECT rowid FROM texts ORDER BY rowid DESC LIMIT 1").fetchone()
        return (row[0] if row else 0) + 1

    def _insert(self, rows: list[tuple[Any, ...]], fid: int, next_id: int) -> int:
        """Insert texts (text, line, offset, type, place, time) of a file with consecutive rowids from `next_id`;
        returns the rowid after the last."""
        if rows:
            self.db.executemany("INSERT INTO texts(rowid, text, file_id, line, off, type, place, ts) "
                                "VALUES(?,?,?,?,?,?,?,?)",
                                [(next_id + n, r[0], fid, *r[1:]) for n, r in enumerate(rows)])
        return next_id + len(rows)

    def _drop(self, fid: int, *, tail_only: bool = False) -> None:
        """Delete a file's texts (or only those of its unfinished last line), by their rowids."""
        q = "SELECT rowid, lo, hi FROM spans WHERE file_id=?" + (" AND tail=1" if tail_only else "")
        for span, lo, hi in self.db.execute(q, (fid,)).fetchall():
            self.db.execute("DELETE FROM texts WHERE rowid BETWEEN ? AND ?", (lo, hi))
            self.db.execute("DELETE FROM spans WHERE rowid=?", (span,))

    @contextlib.contextmanager
    def _write(self) -> Iterator[None]:
        """One write transaction: all of it, or (on any error or interruption) none of it."""
        self.db.execute("BEGIN IMMEDIATE")
        self._known_cache = None
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def forget(self, key: bytes) -> None:
        row = self.db.execute("SELECT id FROM files WHERE path=?", (key,)).fetchone()
        if row:
            with contextlib.nullcontext() if self.db.in_transaction else self._write():
                self._drop(row[0])
                self.db.execute("DELETE FROM files WHERE id=?", (row[0],))

    def prune(self, present: Iterable[Path]) -> int:
        """Drop the files no longer on disk (of those under the folders given)."""
        keep = {_key(p) for p in present}
        gone = [p for (p,) in self.db.execute("SELECT path FROM files") if p not in keep and not os.path.exists(p)]
        for p in gone:
            self.forget(p)
        return len(gone)

    def refresh(self, paths: list[Path], sessions: list[Path] = (), workers: int | None = None,
                budget: int | None = None, stop: Callable[[], bool] | None = None) -> int:
        """Bring many files up to date: one query for what is known, one stat per file, a read only of what changed;
        for each of `sessions`, its persisted tool results, looked at again only when their folder's time changed
        (Claude Code writes each once, under a new name: one added or removed changes the folder's time; a folder
        changed in the last 2 s is looked at again next time, as a coarse clock may not have ticked yet).

        `budget`: at most about this many bytes are read (a first search of a large folder reads a part; the
        caller scans the rest, which is 20 times quicker than indexing it): the files left out are in `stale`,
        the sessions whose persisted outputs were left out in `stale_sessions`, `stale_bytes` says how much.
        `stop`: asked between files; when it says so, what is done is kept and the rest left (an app quitting)."""
        self.stale, self.stale_sessions, self.stale_bytes = set(), set(), 0
        known = self._known()
        changed = []
        left = budget if budget is not None else 1 << 62
        for p in paths:
            try:
                st = os.stat(p)
            except OSError:
                continue
            was = known.get(_key(p))
            if was != (st.st_ino, st.st_size, st.st_mtime_ns):
                new = st.st_size - (was[1] if was is not None and was[0] == st.st_ino and was[1] <= st.st_size else 0)
                if new > left and budget is not None:  # left for later (a file larger than the budget: for `index`)
                    self.stale.add(p)
                    self.stale_bytes += new
                    continue
                left -= new
                changed.append(p)
        read = self._update_many(changed, workers, stop) if changed else 0
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
                if stop is not None and stop():
                    break
                if left <= 0 and budget is not None:
                    self.stale_sessions.add(session)
                    continue
                self._read_bytes = 0
                read += self.update_persisted(session)
                left -= self._read_bytes
                self.db.execute("INSERT OR REPLACE INTO dirs VALUES(?, ?)", (d, m if 0 <= now - m > RACY_NS else -1))
        return read

    def _known(self) -> dict[bytes, tuple[int, int, int]]:
        """(inode, size, mtime) of every transcript indexed, by key: read again only when the database changed since
        (another process committed: SQLite's data_version; this one wrote: `_write` forgets it)."""
        version = self.db.execute("PRAGMA data_version").fetchone()[0]
        if self._known_cache is None or self._known_cache[0] != version:
            self._known_cache = (version, {k: (i, sz, m) for k, i, sz, m in self.db.execute(
                "SELECT path, inode, size, mtime_ns FROM files WHERE owner IS NULL")})
        return self._known_cache[1]

    def update_persisted(self, session: Path) -> int:
        """Index the session's persisted tool results, each file as one text (as the scan reads it: its first
        PERSISTED_CAP bytes); files gone are dropped."""
        from inspector.search import PERSISTED_CAP
        from inspector.transcript.safefs import open_regular
        from inspector.transcript.session import tool_result_files

        owner = _key(session)
        present = tool_result_files(Path(session))
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
            self._read_bytes += len(data)
            with self._write():
                if self.db.execute("SELECT id, inode, size, mtime_ns FROM files WHERE path=?", (key,)).fetchone() != row:
                    continue  # another process indexed it meanwhile
                if row is not None:
                    self._drop(row[0])
                    fid = row[0]
                else:
                    fid = self.db.execute("INSERT INTO files(path, owner) VALUES(?, ?)", (key, owner)).lastrowid
                rid = self._next_rowid()
                self._insert([(data.decode("utf-8", "replace"), 0, -1, "user", "persisted output", None)], fid, rid)
                self.db.execute("INSERT INTO spans VALUES(?, ?, ?, 0)", (fid, rid, rid))
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
        files, persisted, done = self.db.execute(
            "SELECT count(*) FILTER (WHERE owner IS NULL), count(*) FILTER (WHERE owner IS NOT NULL), "
            "coalesce(sum(indexed_to), 0) FROM files").fetchone()
        texts = self.db.execute("SELECT count(*) FROM texts").fetchone()[0]
        sessions = self.db.execute("SELECT count(*) FROM stats").fetchone()[0]
        size = sum(os.path.getsize(str(self.path) + s) for s in ("", "-wal") if os.path.exists(str(self.path) + s))
        return IndexStatus(self.path, files, texts, done, size, persisted, sessions)


@dataclass(slots=True)
class _Plan:
    """What `update` reads of a file: from `start` (its line count then `lines`), dropping all its rows first
    (`drop` True), those of an unfinished last line (False), or none (None: a new file, `fid` None)."""

    key: bytes
    fid: int | None
    drop: bool | None
    start: int
    lines: int
    head: bytes
    st: os.stat_result
    row: tuple[Any, ...] | None  # the file's row when planned: written only if still the same


@dataclass(slots=True)
class _End:
    offset: int  # where the next read starts: the end of the last complete line
    lines: int  # complete lines up to there
    read: int  # lines read this time


BATCH = 5000


def read_texts(path: str, start: int, lines: int) -> Iterator[Any]:
    """The texts of a transcript's lines from byte `start` (line `lines` + 1), in batches of rows (text, line, offset,
    type, place, time), then an `_End`. The rows of a last line without its end (still being written) come in a
    batch of their own that starts with None: searched now, read again once the file changes. A line over MAX_LINE
    bytes is skipped as the scan skips it. Pure (no database): a worker process can run it."""
    from inspector.transcript.index import MAX_LINE

    rows: list[tuple[Any, ...]] = []
    read = 0
    with open(path, "rb") as f:
        f.seek(start)
        offset = start
        while True:
            raw = f.readline(MAX_LINE + 1)
            if not raw:
                break
            if raw[-1] != 10:  # an over-long line or a last line without its end
                if len(raw) > MAX_LINE:
                    while raw and raw[-1] != 10:
                        offset += len(raw)
                        raw = f.readline(1 << 20)
                    offset += len(raw)
                    lines += 1
                    continue
                if rows:
                    yield rows
                    rows = []
                tail = _texts(raw, lines + 1, offset)
                if tail:
                    yield [None, *tail]
                break
            lines += 1
            read += 1
            rows.extend(_texts(raw, lines, offset))
            offset += len(raw)
            if len(rows) >= BATCH:
                yield rows
                rows = []
    if rows:
        yield rows
    yield _End(offset, lines, read)


SEARCH_BUDGET = 64 << 20  # bytes a search reads to bring the index up to date (the rest it scans): about 2 s
POOL_MIN = 32 << 20  # bytes to read below which the files are read here (starting workers costs more)
BIG = 64 << 20  # bytes to read above which a file is read here, in batches, not held whole by a worker


def _read_all(path: str, start: int, lines: int) -> list[Any]:
    """`read_texts` whole, in a worker process."""
    return list(read_texts(path, start, lines))


def _texts(raw: bytes, line: int, offset: int) -> list[tuple[Any, ...]]:
    from inspector.search import record_texts
    from inspector.transcript.records import LineError, decode_line

    try:
        body, _ = decode_line(raw)
    except LineError:
        return []
    t = body.get("type")
    t = t if isinstance(t, str) else ""
    ts = body.get("timestamp") if isinstance(body.get("timestamp"), str) else None
    return [(text, line, offset, t, where, ts) for where, text in record_texts(body) if text]


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
        lo = _key(first)
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
        key = _key(d)
        try:
            mtime = os.stat(d).st_mtime_ns
        except OSError:
            return []
        hit = self.known.get(key)
        if hit is not None and hit[0] == mtime:
            if hit[1][:1] == b"[":
                return orjson.loads(hit[1])  # type: ignore[no-any-return]  # [name, kind] pairs, as lists
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
