"""A full-text index of what a person reads in the transcripts, in SQLite (FTS5): instant search.

The database `$XDG_CACHE_HOME/inspector/index.sqlite` knows every file indexed (`files`: its inode, size, time,
a digest of its first bytes, how far it was read), the folder listings (`listings`, `dirs`) and the per-session
stats (`stats`). The texts `search` looks in (`record_texts` of each line: prompts, replies, thinking, tool inputs
and results, summaries, system notes, attachments' rendered text; persisted tool results) are indexed in shards:
`index-t<k>.sqlite`, one per core (at most 8), file id i in shard i % n, attached to the main connection, each
text's place (file, line, byte offset and length, record type, place, time, rank in its line) beside it. Each shard
is written by one process at a time, so a build runs SQLite's tokenizer on every core.

- Incremental: a file is indexed once; a file that grew (a live session) only from the end of its last complete
  line indexed; a file replaced (another inode, other first bytes) or truncated is dropped and indexed again. A
  file's rows are found by their rowid spans (each with its first line), never by reading every text.
- What it returns is what the scan returns: the index is of words (FTS5's `ascii` tokenizer, `detail=none`,
  contentless), and it only picks the candidate texts: those holding the query's inner words whole, a word
  starting with its last and, for its first (a fragment of a word), one of the words of the shard's vocabulary
  that hold it (`shards.add_words`, looked up by trigram). Each candidate is read again from its transcript
  (`shards.texts_at`), and the same `Query.find_in` as the scan decides, counts and cuts the snippet. A query with
  no letter or digit, or not ASCII (FTS5 folds the case of ASCII only), or whose every word is too common to
  narrow, is left to the scan.
- Small, and no copy of what was written: the index keeps words and places, not the texts (against keeping them:
  a tenth of the disk, and a third less time to build); a contentless index cannot forget a text, so a dropped
  one's rowid stays in it with no place (never a candidate) until most of a shard is such, when it is built again.
- Safe: WAL mode, a short busy timeout, one writing process at a time (`index.lock`); a shard's commit comes before
  the main database's, and a crash between is healed by the file's next update (its lines after the main count
  are dropped first). A database that is corrupt, of another schema or missing a shard is deleted and built again
  (with one notice); one that stays locked is not waited on: the caller falls back to the scan. It holds nothing
  the transcripts do not: delete it and nothing is lost.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from inspector.library.cache import (
    IndexBusy,
    IndexFull,
    IndexUnavailable,
    cut_short,
    db_path,
    free_bytes,
    is_damage,
    is_full,
    is_locked,
    path_key,
    pragmas,
    remove_index,
    shard_path,
)
from inspector.library.listings import RACY_NS, Listings
from inspector.library.shards import (
    MAX_TERM,
    Job,
    drop_texts,
    index_shard,
    persisted_batches,
    read_texts,
    shard_schema,
    sync_words,
    texts_at,
    write_texts,
)

SCHEMA = 10
SHARDS_MAX = 8  # the texts are spread over this many databases at most (one per core): each is written by one process
ROOM_MARGIN = 64 << 20  # free bytes a search leaves on the cache's disk: below it, it reads instead of indexing
# a shard's tables, FTS5's own included (one lost makes lookups answer nothing, or fail, in silence)
SHARD_TABLES = frozenset(
    {"docs", "spans", "words", "wordstate", "vocab"}
    | {f"{fts}{part}" for fts in ("texts", "wordgrams") for part in ("", "_data", "_idx", "_config", "_docsize")}
)
# what the cost of each transcript was read as (costcache.ResponsesCache), valid while `key` (its size, time) holds; made
# in a database an earlier inspector made when first used (no other table changed: the search index is kept)
RESPONSES_TABLE = "CREATE TABLE IF NOT EXISTS responses(path BLOB PRIMARY KEY, key BLOB NOT NULL, value BLOB NOT NULL)"
HEAD = 4096  # bytes of a file's start that tell a replaced file from a grown one (kept as a digest, never the text)


def head_mark(head: bytes) -> bytes:
    """What the index keeps of a transcript's first bytes: their count and a digest (not the bytes: the cache holds no
    copy of what a person wrote)."""
    from inspector.textutil import blake2b

    return len(head).to_bytes(4, "big") + blake2b(head, 16).digest()


def same_start(mark: bytes | None, head: bytes) -> bool:
    """Whether a file now starts as it did when `mark` was taken (it may have grown since)."""
    if not mark or len(mark) != 20:
        return False
    n = int.from_bytes(mark[:4], "big")
    return len(head) >= n and head_mark(head[:n]) == mark


class IndexStatus(NamedTuple):
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
        self.busy = False  # the last `refresh` found another process writing the index
        self.low_disk: int | None = None  # the free bytes of the cache's disk when the last `refresh` left it for that
        self._read_bytes = 0
        self._known_cache: tuple[int, dict[bytes, tuple[int, int, int]]] | None = None
        self._lock_fd: int | None = None
        self._lock_depth = 0
        self._listings: Listings | None = None  # kept for the process's next search (the app's, the MCP server's)
        # told (what, done, of) as files are indexed: "transcripts" then "persisted outputs" (a command's progress line)
        self.progress: Callable[[str, int, int], None] = lambda _what, _done, _of: None
        self.db = self._open()

    # -- opening ------------------------------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        """Open the database and attach its shards. Making it (new, of another version, damaged, missing a shard)
        is done holding the writer lock, checked again once held: two processes opening it at once never build
        it twice, nor delete what the other just made."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for attempt in (1, 2):
            db = None
            try:
                db = self._connect()
                if self._why_not_ready(db) is not None:
                    db.close()
                    db = None
                    with self.writer(wait=True):
                        db = self._connect()
                        why = self._why_not_ready(db)
                        if why is not None:
                            db.close()  # an index that cannot be kept, or a new one: its files (leftovers) go
                            db = None
                            if why == "is new":
                                remove_index(self.path)
                            else:
                                self._discard(f"the search index {self.path} {why}: built again")
                            db = self._connect()
                            self._create(db)
                            for k in range(self._shard_count(db)):
                                self._attach(db, k)
                                self._create_shard(db, k)
                            # the schema's row last: until it is there, another process opening the index takes it
                            # for new and waits for this lock instead of reading half-made shards as damaged
                            db.execute("INSERT INTO meta VALUES('schema', ?)", (str(SCHEMA),))
                            return self._ready(db)
                return self._attached(db)
            except sqlite3.OperationalError as exc:
                if db is not None:
                    db.close()
                if is_locked(exc):
                    raise IndexUnavailable(f"the search index is locked by another process ({exc})") from None
                if "fts5" in str(exc) or "trigram" in str(exc):
                    raise IndexUnavailable(f"this Python's SQLite has no FTS5 trigram tokenizer ({exc})") from None
                if attempt == 2:
                    raise IndexUnavailable(str(exc)) from None
                with self.writer(wait=True):
                    # read again once no other process writes it: a process making the index meanwhile (it
                    # removes a new index's leftover files) gives an open connection an I/O error, not damage
                    if not self._whole_now():
                        self._discard(f"the search index {self.path} could not be read ({exc}): built again")
            except sqlite3.DatabaseError as exc:  # not a database, or damaged
                if db is not None:
                    db.close()
                if attempt == 2:
                    raise IndexUnavailable(str(exc)) from None
                with self.writer(wait=True):
                    if not self._whole_now():  # read again once no other process writes it
                        self._discard(f"the search index {self.path} was damaged ({exc}): built again")
        raise IndexUnavailable("unreachable")

    def _whole_now(self) -> bool:
        """Whether the index reads as whole (checked holding the writer lock, after a check without it failed)."""
        try:
            db = self._connect()
        except sqlite3.Error:
            return False
        try:
            if self._why_not_ready(db) is not None:
                return False
            self._attached(db)
            return True
        except sqlite3.Error:
            return False
        finally:
            db.close()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=2.0, isolation_level=None, check_same_thread=False)
        for tries in range(40):
            try:
                pragmas(db)
                return db
            except sqlite3.OperationalError as exc:
                # two processes turning a new file to WAL at once both hold a shared lock and want an exclusive
                # one: SQLite answers one of them "locked" at once, without waiting (its busy handler would
                # deadlock). Once the other has turned it, the pragma has nothing to do.
                if not is_locked(exc) or tries == 39:
                    db.close()
                    raise
                time.sleep(0.05)
        raise AssertionError("unreachable")

    def _why_not_ready(self, db: sqlite3.Connection) -> str | None:
        """None when the database is of this version with all its shards; else why not (None: new, to be made)."""
        version = self._version(db)
        if version is None:
            return "is new"
        if version != SCHEMA:
            return "is from another version of inspector"
        n = self._shard_count(db)  # raises DatabaseError when damaged
        if any(not os.path.exists(shard_path(self.path, k)) for k in range(n)):
            return "was incomplete"
        return None

    def _shard_count(self, db: sqlite3.Connection) -> int:
        row = db.execute("SELECT value FROM meta WHERE key='shards'").fetchone()
        shards = int(row[0]) if row and str(row[0]).isdigit() else 0
        if not 1 <= shards <= SHARDS_MAX:
            raise sqlite3.DatabaseError(f"its number of shards is {row[0] if row else 'missing'}")
        return shards

    def _attach(self, db: sqlite3.Connection, k: int) -> None:
        db.execute(f"ATTACH DATABASE ? AS t{k}", (str(shard_path(self.path, k)),))
        pragmas(db, f"t{k}.")

    def _attached(self, db: sqlite3.Connection) -> sqlite3.Connection:
        """The database with its shards attached, checked readable (DatabaseError when damaged)."""
        for k in range(self._shard_count(db)):
            self._attach(db, k)
        return self._ready(db)

    def _ready(self, db: sqlite3.Connection) -> sqlite3.Connection:
        """The shards are there and readable (a damaged one raises DatabaseError)."""
        self.shards = self._shard_count(db)
        for schema, f in [("main", self.path), *((f"t{k}", shard_path(self.path, k)) for k in range(self.shards))]:
            short = cut_short(f, db.execute(f"PRAGMA {schema}.page_size").fetchone()[0])
            if short:
                raise sqlite3.DatabaseError(f"{f.name} {short}")
        for k in range(self.shards):
            have = {n for (n,) in db.execute(f"SELECT name FROM t{k}.sqlite_master")}
            if not SHARD_TABLES <= have:
                raise sqlite3.DatabaseError(f"its shard {k} has no {', '.join(sorted(SHARD_TABLES - have))}")
            # what the spans say the shard holds against the rows it holds (a shard whose texts were lost would
            # return fewer hits in silence); both counts read b-tree pages only, not the texts
            spanned = db.execute(f"SELECT coalesce(sum(hi - lo + 1), 0) FROM t{k}.spans").fetchone()[0]
            held = db.execute(f"SELECT count(*) FROM t{k}.docs").fetchone()[0]
            indexed = db.execute(f"SELECT count(*) FROM t{k}.texts_docsize").fetchone()[0]
            dead = db.execute(f"SELECT dead FROM t{k}.wordstate").fetchone()[0]
            if not spanned == held == indexed - dead:
                raise sqlite3.DatabaseError(
                    f"its shard {k} holds {held:,} texts and indexes {indexed - dead:,} where its spans say {spanned:,}"
                )
        db.execute("SELECT count(*) FROM files").fetchone()
        return db

    def _discard(self, why: str) -> None:
        self.notice(why)
        remove_index(self.path)

    @staticmethod
    def _version(db: sqlite3.Connection) -> int | None:
        try:
            row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        except sqlite3.OperationalError:
            return None
        return int(row[0]) if row and str(row[0]).isdigit() else (-1 if row else None)

    @staticmethod
    def _create(db: sqlite3.Connection) -> None:
        db.executescript("""
            DROP TABLE IF EXISTS texts; DROP TABLE IF EXISTS docs; DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS meta;
            DROP TABLE IF EXISTS dirs; DROP TABLE IF EXISTS stats; DROP TABLE IF EXISTS listings; DROP TABLE IF EXISTS spans;
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
            DROP TABLE IF EXISTS responses;
        """)
        db.execute(RESPONSES_TABLE)
        # the texts of file `id` live in shard id % shards (its own database: one process can write each at once)
        db.execute("INSERT INTO meta VALUES('shards', ?)", (str(max(1, min(os.cpu_count() or 1, SHARDS_MAX))),))

    @staticmethod
    def _create_shard(db: sqlite3.Connection, k: int) -> None:
        db.executescript(shard_schema(f"t{k}."))

    def discard_damaged(self, exc: BaseException) -> bool:
        """After a query found the database damaged (`database disk image is malformed`: a page overwritten, which the
        checks at opening do not read): the index is removed, with one notice, so that the next one is built anew
        instead of every search scanning for good. False (nothing done) for an error that is not damage: a lock."""
        if not is_damage(exc):
            return False
        try:
            self.db.close()
        except sqlite3.Error:
            pass
        try:
            with self.writer(wait=True):
                self._discard(f"the search index {self.path} was damaged ({exc}): it is built again")
        except OSError:
            return False
        return True

    def failed(self, exc: sqlite3.Error) -> None:
        """A search's use of the index failed: a damaged index is removed (built anew by the next search), a full disk
        given back what the index took, anything else (a lock held long) said; the caller reads the files instead."""
        if self.discard_damaged(exc):
            return
        if is_full(exc):
            what = self.give_back()
            self.notice(
                f"the disk of the search index ({self.path.parent}) is full: searching without updating the index ({what})"
            )
            return
        self.notice(f"searching without the index: {exc}")

    def give_back(self) -> str:
        """After the disk filled: the write undone and each write-ahead log checkpointed and cut to nothing, so that
        the disk gets back what the index took for it; when even that needs room the disk does not have, the index is
        removed (it is a cache: built again when there is room). Says which, in words."""
        try:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
        except sqlite3.Error:
            pass
        try:
            for schema in ["main", *(f"t{k}" for k in range(getattr(self, "shards", 0)))]:
                self.db.execute(f"PRAGMA {schema}.wal_checkpoint(TRUNCATE)").fetchall()
            return "what it held before is kept"
        except sqlite3.Error:
            try:
                self.db.close()
            except sqlite3.Error:
                pass
            with contextlib.suppress(OSError):
                remove_index(self.path)
            return "it was removed to give the disk its room back, and is built again when there is room"

    def close(self) -> None:
        self.db.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    @contextlib.contextmanager
    def writer(self, wait: bool = False) -> Iterator[None]:
        """The index's writer lock (`index.lock`, flock): one process writes the texts at a time, so that what the
        main database says of a file and what its shard holds never come from two writers. Raises IndexBusy when
        another process holds it (or, with `wait`, waits for it). Re-entrant in one process."""
        if self._lock_depth == 0:
            try:
                import fcntl
            except ImportError:  # no flock (Windows): one writer is assumed
                fcntl = None  # type: ignore[assignment]
            if fcntl is not None:
                if self._lock_fd is None:
                    self._lock_fd = os.open(self.path.with_name(self.path.stem + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    if not wait:
                        raise IndexBusy("the search index is being written by another inspector") from None
                    self._wait_for_lock(fcntl)
        self._lock_depth += 1
        try:
            yield
        finally:
            self._lock_depth -= 1
            if self._lock_depth == 0 and self._lock_fd is not None:
                import fcntl

                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    def _wait_for_lock(self, fcntl: Any) -> None:
        """Wait for the writer lock: quietly for a moment (another process making the index, or writing a file),
        then saying so once before waiting for as long as it takes."""
        quiet_until = time.monotonic() + LOCK_QUIET
        while time.monotonic() < quiet_until:
            time.sleep(0.02)
            try:
                fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                pass
        self.notice("waiting for another inspector to finish writing the search index…")
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)

    # -- keeping it up to date ----------------------------------------------------------------
    def update(self, path: Path) -> int:
        """Index what is new in a transcript; returns the lines read. A replaced or truncated file is redone.
        Raises IndexBusy when another process is writing the index."""
        with self.writer():
            self._drop_dead()
            plan = self._plan(path)
            if plan is None:
                return 0
            read = self._apply(plan, read_texts(os.fspath(path), plan.start, plan.lines))
            self._sync_words()
            return read

    def _plan(self, path: Path) -> Job | None:
        """What to read of a transcript (None: nothing, it is unchanged or gone)."""
        key = path_key(path)
        try:
            st = os.stat(path)
        except OSError:
            self.forget(key)
            return None
        row = self._row(key)
        if row is not None and (row[1], row[2], row[3]) == (st.st_ino, st.st_size, st.st_mtime_ns):
            return None  # unchanged: one stat, nothing read
        try:
            with open(path, "rb") as f:
                head = f.read(HEAD)
        except OSError:
            self.forget(key)
            return None
        name = os.fspath(path)
        if row is None:
            return Job(key, name, None, 0, 0, -1, "t", st, head, None, row)
        fid, inode, size, mtime_ns, old_head, indexed_to, lines = row
        if inode != st.st_ino or st.st_size < indexed_to or not same_start(old_head, head):
            return Job(key, name, fid, 0, 0, -1, "t", st, head, None, row)  # replaced: all of it goes
        return Job(key, name, fid, indexed_to, lines, lines, "t", st, head, None, row)  # grown: its tail's rows go

    def _row(self, key: bytes) -> tuple[Any, ...] | None:
        """A transcript's row: (id, inode, size, mtime_ns, head, indexed_to, lines), or None."""
        return self.db.execute(
            "SELECT id, inode, size, mtime_ns, head, indexed_to, lines FROM files WHERE path=?", (key,)
        ).fetchone()

    def _apply(self, plan: Job, batches: Iterable[Any]) -> int:
        """Write what `read_texts` yields for a plan, in one transaction; returns the lines read. When another
        process (the app, a command) indexed the file since the plan was made, nothing is written: it is done."""
        with self.transaction():
            if self._row(plan.key) != plan.row:
                return 0
            if plan.fid is None:
                plan.fid = self.db.execute("INSERT INTO files(path) VALUES(?)", (plan.key,)).lastrowid
            fid = plan.fid
            assert fid is not None  # an INSERT's rowid
            end = write_texts(self.db, f"t{fid % self.shards}.", fid, plan.after, batches)
            self._record(plan, end.offset, end.lines)
        return end.read

    def _run_jobs(self, jobs: list[Job], workers: int | None, stop: Callable[[], bool], what: str) -> int:
        """Index these files: in shard processes when there is much to read (`_run_in_shards`), otherwise, or where
        worker processes cannot start (a sandbox, no /dev/shm), here. Returns the lines (persisted outputs) read. The
        vocabulary is left behind where a large write was: the caller completes it (`_sync_words`)."""
        n = self._workers(workers)
        pool = n > 1 and len(jobs) >= 4 and sum(job.size for job in jobs) >= POOL_MIN
        if pool or any(job.fid is None and job.kind == "p" for job in jobs):
            with self.transaction():  # the new files get their ids (and so their shards) first, in one transaction
                for job in jobs:
                    if job.fid is None and (pool or job.kind == "p"):
                        job.fid = self.db.execute("INSERT INTO files(path, owner) VALUES(?, ?)", (job.key, job.owner)).lastrowid
                        job.row = (job.fid, None, None, None, None, 0, 0)
        if pool:
            try:
                return self._run_in_shards(jobs, n, stop, what)
            except _POOL_ERRORS as exc:  # this process does it (a file a shard did is skipped: its row changed)
                self.notice(f"indexing in one process: {exc}")
        read = 0
        for k, job in enumerate(jobs):
            if stop():
                break
            try:
                read += (
                    self._apply(job, read_texts(job.path, job.start, job.lines))
                    if job.kind == "t"
                    else self._apply_persisted(job)
                )
            except OSError:
                pass  # gone since it was listed
            self.progress(what, k + 1, len(jobs))
        return read

    def _sync_words(self) -> None:
        """Each shard's vocabulary completed where a large write left it behind (the writer lock held)."""
        for k in range(self.shards):
            if self.db.execute(f"SELECT behind FROM t{k}.wordstate").fetchone()[0]:
                with self.transaction():
                    sync_words(self.db, f"t{k}.")

    def _drop_dead(self) -> None:
        """Empty each shard whose contentless index holds more texts since dropped than live ones (files replaced,
        sessions deleted), before a pass plans what to read: its files are then read again as new ones (the
        vocabulary stays: it never shrinks). Left to a later pass while another process writes."""
        for k in range(self.shards):
            dead = self.db.execute(f"SELECT dead FROM t{k}.wordstate").fetchone()[0]
            if dead > REBUILD_DEAD and dead > self.db.execute(f"SELECT count(*) FROM t{k}.docs").fetchone()[0]:
                try:
                    with self.writer():
                        self._rebuild(k)
                except IndexBusy:
                    return

    def _rebuild(self, k: int) -> None:
        with self.transaction():
            self.db.execute(f"INSERT INTO t{k}.texts(texts) VALUES('delete-all')")
            self.db.execute(f"DELETE FROM t{k}.docs")
            self.db.execute(f"DELETE FROM t{k}.spans")
            self.db.execute(f"UPDATE t{k}.wordstate SET dead=0")
            self.db.execute(
                "UPDATE files SET inode=NULL, size=NULL, mtime_ns=NULL, head=NULL, indexed_to=0, lines=0 WHERE id % ? = ?",
                (self.shards, k),
            )
            self.db.execute("DELETE FROM dirs")  # each session's persisted outputs looked at again

    def _workers(self, workers: int | None) -> int:
        """The worker processes to use: one per shard at most."""
        return min(workers if workers is not None else (os.cpu_count() or 1), self.shards)

    def _run_in_shards(self, jobs: list[Job], n: int, stop: Callable[[], bool], what: str) -> int:
        """A process per shard reads, decodes and writes its files' texts into its own shard database (SQLite's
        tokenizer, the slow part, then runs on every core), a batch of files at a time, while this process records
        in the main database what each shard has done. Returns the lines read."""
        import collections
        import multiprocessing
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

        queues: dict[int, collections.deque[Job]] = collections.defaultdict(collections.deque)
        for job in jobs:
            assert job.fid is not None
            queues[job.fid % self.shards].append(job)
        read = done_files = 0
        running: dict[Any, tuple[int, list[Job]]] = {}
        # forkserver, not fork: the caller may be a threaded program, and forking threads is unsafe
        with ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("forkserver")) as pool:
            while True:
                busy = {k for k, _ in running.values()}
                for k, q in queues.items():
                    if q and k not in busy and len(running) < n and not stop():
                        batch: list[Job] = []
                        size = 0
                        while q and (not batch or (size < SHARD_BATCH and len(batch) < 256)):
                            batch.append(q.popleft())
                            size += batch[-1].size
                        items = [(j.fid, j.path, j.start, j.lines, j.after, j.kind) for j in batch if j.fid is not None]
                        # the shard's last batch also completes its vocabulary (there, on the worker's core)
                        running[pool.submit(index_shard, str(shard_path(self.path, k)), items, not q)] = (k, batch)
                if not running:
                    break
                done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                for future in done:
                    _k, batch = running.pop(future)
                    read += self._record_batch(batch, future.result())
                    done_files += len(batch)
                    self.progress(what, done_files, len(jobs))
        return read

    def _record_batch(self, batch: list[Job], done: list[tuple[Any, ...]]) -> int:
        """What a shard's process now holds of each file of a batch, recorded in the main database while the other
        shards' processes go on writing theirs; returns the lines (persisted outputs) read. A deferred transaction:
        it locks the main database only, where BEGIN IMMEDIATE would take every attached shard's write lock too and
        wait for the process writing it (a fifth of a build's time, the other cores left without their next batch)."""
        read = 0
        with self.transaction(deferred=True):
            for job, (_fid, offset, lines, n_read) in zip(batch, done):
                if offset is not None:  # (None: unreadable now, left as its row says)
                    self._record(job, offset, lines)
                    read += n_read if job.kind == "t" else 1
        return read

    @contextlib.contextmanager
    def transaction(self, deferred: bool = False) -> Iterator[None]:
        """One write transaction: all of it, or (on any error or interruption) none of it. `deferred`: each database
        is locked at its first write, not all of them at the start (the caller holds the writer lock: no other
        process writes between its reads and its writes)."""
        self.db.execute("BEGIN" if deferred else "BEGIN IMMEDIATE")
        self._known_cache = None
        try:
            yield
        except BaseException:
            if self.db.in_transaction:  # SQLite has rolled back already after some errors (a full disk)
                self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def write_many(self, sql: str, rows: list[tuple[Any, ...]]) -> bool:
        """`executemany` in one transaction, best effort (what the listings and the stats cache keep): False, with
        nothing written, when the database cannot take it now (locked for long, read-only)."""
        if not rows:
            return True
        try:
            with self.transaction():
                self.db.executemany(sql, rows)
        except sqlite3.Error:
            return False
        return True

    def forget(self, key: bytes) -> None:
        row = self.db.execute("SELECT id FROM files WHERE path=?", (key,)).fetchone()
        if row:
            with contextlib.nullcontext() if self.db.in_transaction else self.transaction():
                drop_texts(self.db, f"t{row[0] % self.shards}.", row[0], -1)
                self.db.execute("DELETE FROM files WHERE id=?", (row[0],))

    def prune(self, present: Iterable[Path]) -> int:
        """Drop the files no longer on disk (any the index holds; `present`: those known to be there)."""
        keep = {path_key(p) for p in present}
        gone = [p for (p,) in self.db.execute("SELECT path FROM files") if p not in keep and not os.path.exists(p)]
        if gone:
            with self.writer(wait=True):
                self._drop(gone)
        return len(gone)

    def sweep(self, folder: str, listed: Iterable[str]) -> int:
        """Drop the transcripts under `folder` (a projects root or a project folder, listed whole: subagents
        included) that its listing no longer has and that are gone from disk, with their persisted outputs: a
        deleted session's texts leave the index at the next search (it never holds more than the transcripts do).
        A pass over what is known, in memory; only a file the listing lacks is looked for on disk. Left to the next
        search while another process writes."""
        prefix = path_key(folder).rstrip(b"/") + b"/"
        keep = {path_key(p) for p in listed}
        gone = [k for k in self._known() if k.startswith(prefix) and k not in keep and not os.path.exists(k)]
        if not gone:
            return 0
        try:
            with self.writer():
                self._drop(gone)
        except IndexBusy:
            return 0
        return len(gone)

    def _drop(self, keys: list[bytes]) -> None:
        """Forget files gone from disk, in one transaction (held writer lock): a transcript's persisted outputs, the
        time of its tool-results folder and the listings of its folder with it."""
        with self.transaction():
            for k in keys:
                for (p,) in self.db.execute("SELECT path FROM files WHERE owner=?", (k,)).fetchall():
                    self.forget(p)
                self.forget(k)
                if k.endswith(b".jsonl"):
                    folder = k[:-6]
                    self.db.execute("DELETE FROM dirs WHERE path=?", (folder + b"/tool-results",))
                    self.db.execute(
                        "DELETE FROM listings WHERE dir=? OR (dir >= ? AND dir < ?)", (folder, folder + b"/", folder + b"0")
                    )
        self.scrub()

    def scrub(self) -> None:
        """After deleting what a gone session held: its pages, overwritten (secure_delete), written into the databases
        and their journals emptied, so that its text is left in no file of the cache folder. Best effort: a reader
        in the middle of a long read leaves the journal to the next checkpoint."""
        self.db.execute("PRAGMA busy_timeout=200")  # a reader is waited for a moment, never the 2 s of a write
        try:
            for schema in ["main"] + [f"t{k}" for k in range(self.shards)]:
                try:
                    self.db.execute(f"PRAGMA {schema}.wal_checkpoint(TRUNCATE)")
                except sqlite3.Error:
                    pass
        finally:
            self.db.execute("PRAGMA busy_timeout=2000")

    def refresh(
        self,
        paths: list[Path],
        sessions: Sequence[Path] = (),
        workers: int | None = None,
        budget: int | None = None,
        stop: Callable[[], bool] | None = None,
        wait: bool = False,
    ) -> int:
        """Bring many files up to date: one query for what is known, one stat per file, a read only of what changed;
        for each of `sessions`, its persisted tool results, looked at again only when their folder's time changed
        (Claude Code writes each once, under a new name: one added or removed changes the folder's time; a folder
        changed in the last 2 s is looked at again next time, as a coarse clock may not have ticked yet).

        `budget`: at most about this many bytes are read (a first search of a large folder reads a part; the
        caller scans the rest, which is 20 times quicker than indexing it): the files left out are in `stale`,
        the sessions whose persisted outputs were left out in `stale_sessions`, `stale_bytes` says how much.
        `stop`: asked between files; when it says so, what is done is kept and the rest left (an app quitting).
        When another process is writing the index (and not `wait`), nothing is written: all that changed is stale."""
        self.stale, self.stale_sessions, self.stale_bytes, self.busy = set(), set(), 0, False
        self._drop_dead()
        known = self._known()
        changed = []
        left = budget if budget is not None else 1 << 62
        for p in paths:
            try:
                st = os.stat(p)
            except OSError:
                continue
            was = known.get(path_key(p))
            if was != (st.st_ino, st.st_size, st.st_mtime_ns):
                new = st.st_size - (was[1] if was is not None and was[0] == st.st_ino and was[1] <= st.st_size else 0)
                if new > left and budget is not None:  # left for later (a file larger than the budget: for `index`)
                    self.stale.add(p)
                    self.stale_bytes += new
                    continue
                left -= new
                changed.append((p, new))
        self.low_disk = None
        if budget is not None and changed:  # a search: never the one to fill the cache's disk
            room = free_bytes(self.path.parent)
            if room is not None and room < 2 * sum(n for _, n in changed) + ROOM_MARGIN:  # see IndexFull for `index`
                self.low_disk = room
                self.stale.update(p for p, _ in changed)
                self.stale_bytes += sum(n for _, n in changed)
                self.stale_sessions.update(sessions)
                return 0
        if budget is None and changed:  # `index`: refused before anything is written when it cannot fit
            room, need = free_bytes(self.path.parent), sum(n for _, n in changed) + ROOM_MARGIN
            if room is not None and room < need:
                raise IndexFull(room, need)
        behind: list[tuple[Path, bytes, int]] = []  # sessions whose tool-results folder changed
        if sessions:
            dirs = dict(self.db.execute("SELECT path, mtime_ns FROM dirs"))
            for session in sessions:
                d = path_key(session)[:-6] + b"/tool-results"
                try:
                    m = os.stat(d).st_mtime_ns
                except OSError:
                    continue
                if dirs.get(d) != m:
                    behind.append((session, d, m))
        if not changed and not behind:
            return 0
        try:
            with self.writer(wait=wait):
                # the transcripts, then the persisted outputs, read in one run (one pool of worker processes)
                jobs = [job for p, _ in changed if (job := self._plan(p)) is not None]
                now = time.time_ns()
                seen: list[tuple[bytes, int]] = []
                for session, d, m in behind:
                    if stop is not None and stop():
                        break
                    if left <= 0 and budget is not None:
                        self.stale_sessions.add(session)
                        continue
                    mine = self._persisted_jobs(session)
                    jobs += mine
                    left -= sum(job.size for job in mine)
                    seen.append((d, m if 0 <= now - m > RACY_NS else -1))
                read = self._run_jobs(jobs, workers, stop or (lambda: False), "files")
                self._sync_words()  # once, after both: it reads each shard's every word (done by the workers, if any)
                if not (stop is not None and stop()):  # folders done: looked at again only when they change
                    self.db.executemany("INSERT OR REPLACE INTO dirs VALUES(?, ?)", seen)
                return read
        except IndexBusy:  # another process writes: look up what is there, read what changed
            self.busy = True
            self.stale.update(p for p, _ in changed)
            self.stale_bytes += sum(n for _, n in changed)
            self.stale_sessions.update(session for session, _, _ in behind)
            return 0

    def _known(self) -> dict[bytes, tuple[int, int, int]]:
        """(inode, size, mtime) of every transcript indexed, by key: read again only when the database changed since
        (another process committed: SQLite's data_version; this one wrote: `transaction` forgets it)."""
        version = self.db.execute("PRAGMA data_version").fetchone()[0]
        if self._known_cache is None or self._known_cache[0] != version:
            self._known_cache = (
                version,
                {
                    k: (i, sz, m)
                    for k, i, sz, m in self.db.execute("SELECT path, inode, size, mtime_ns FROM files WHERE owner IS NULL")
                },
            )
        return self._known_cache[1]

    def _persisted_jobs(self, session: Path) -> list[Job]:
        """The session's persisted tool results that changed, each to be indexed as one text (as the scan reads it:
        its first PERSISTED_CAP bytes; a new one's row, so its shard, is made by `_run_jobs`); the rows of files gone
        are dropped."""
        from inspector.transcript.session import tool_result_files

        owner = path_key(session)
        present = tool_result_files(Path(session))
        keys = {path_key(p) for p in present}
        for (k,) in self.db.execute("SELECT path FROM files WHERE owner=?", (owner,)).fetchall():
            if k not in keys:
                self.forget(k)
        jobs = []
        for p in present:
            key = path_key(p)
            try:
                st = os.stat(p)
            except OSError:
                continue
            row = self.db.execute("SELECT id, inode, size, mtime_ns FROM files WHERE path=?", (key,)).fetchone()
            if row is not None and (row[1], row[2], row[3]) == (st.st_ino, st.st_size, st.st_mtime_ns):
                continue
            # a new one gets its row (so its shard) with the others, in one transaction (`_run_jobs`)
            jobs.append(Job(key, os.fspath(p), row[0] if row else None, 0, 0, -1, "p", st, None, owner, None))
        return jobs

    def _apply_persisted(self, job: Job) -> int:
        batches = persisted_batches(job.path)  # OSError: unreadable now
        assert job.fid is not None
        with self.transaction():
            end = write_texts(self.db, f"t{job.fid % self.shards}.", job.fid, -1, batches)
            self._record(job, end.offset, 0)
        self._read_bytes += end.offset
        return 1

    def _record(self, job: Job, offset: int, lines: int) -> None:
        """What a file's shard now holds, in the main database (in the caller's transaction)."""
        st = job.st
        if job.kind == "p":
            self.db.execute(
                "UPDATE files SET inode=?, size=?, mtime_ns=?, indexed_to=?, owner=? WHERE id=?",
                (st.st_ino, st.st_size, st.st_mtime_ns, offset, job.owner, job.fid),
            )
        else:
            self.db.execute(
                "UPDATE files SET inode=?, size=?, mtime_ns=?, head=?, indexed_to=?, lines=? WHERE id=?",
                (st.st_ino, st.st_size, st.st_mtime_ns, head_mark(job.head or b""), offset, lines, job.fid),
            )

    def behind(self) -> str:
        """What the last `refresh` left for the caller to read, in words ('' when nothing)."""
        from inspector.textutil import human_size

        parts = []
        if self.stale:
            parts.append(f"{human_size(self.stale_bytes)} in {len(self.stale):,} transcript(s)")
        if self.stale_sessions:
            parts.append(f"the persisted outputs of {len(self.stale_sessions):,} session(s)")
        if not parts:
            return ""
        why = (
            "another inspector is writing the index now"
            if self.busy
            else f"the cache's disk has {human_size(self.low_disk)} free, too little to index them"
            if self.low_disk is not None
            else "not in the search index yet"
        )
        return f"{' and '.join(parts)}: {why}, read instead"

    def persisted_candidates(self, session: Path, query: Any) -> list[tuple[Path, str]] | None:
        """(persisted file, its text) of one session's persisted tool results the index says may match, by name; None
        when the index cannot pick them for this query (the caller reads them)."""
        found = self.search_all([], query, persisted_of=[session])
        return found[1].get(session, []) if found is not None else None

    def search_all(
        self, paths: list[Path], query: Any, persisted_of: Sequence[Path] = ()
    ) -> tuple[dict[Path, list[tuple[Any, ...]]], dict[Path, list[tuple[Path, str]]]] | None:
        """The candidate texts of every one of `paths` (in each file's order), and for each session of `persisted_of`
        its persisted outputs' as (file, text) by name, in one lookup (the words index first, then the files of
        what it found: a join on the unindexed file column would scan every text); None when the index cannot pick
        the candidates of this query (see `_expression`): the caller scans."""
        conds = conditions(query.folded)
        if conds is None:
            return None
        found = []  # each shard's, in its rowid order: a file's texts are in one shard, in its order
        for k in range(self.shards):
            expr = self._expression(k, conds)
            if expr is None:
                return None
            if expr:
                found += self.db.execute(
                    f"SELECT file_id, line, off, len, type, place, ts, k FROM t{k}.docs "
                    f"WHERE id IN (SELECT rowid FROM t{k}.texts WHERE texts MATCH ?) ORDER BY id",
                    (expr,),
                ).fetchall()
        out: dict[Path, list[tuple[Any, ...]]] = {}
        outp: dict[Path, list[tuple[Path, str]]] = {}
        if not found:
            return out, outp
        fids = sorted({r[0] for r in found})
        ids: dict[int, tuple[bytes, bytes | None]] = {}
        for n in range(0, len(fids), 500):
            part = fids[n : n + 500]
            ids.update(
                (fid, (k, o))
                for fid, k, o in self.db.execute(
                    f"SELECT id, path, owner FROM files WHERE id IN ({','.join('?' * len(part))})", part
                )
            )
        wanted = {path_key(p): p for p in paths}
        owners = {path_key(p): p for p in persisted_of}
        by_file: dict[int, list[tuple[Any, ...]]] = {}
        for row in found:
            by_file.setdefault(row[0], []).append(row[1:])
        for fid, rows in by_file.items():
            got = ids.get(fid)
            if got is None:
                continue
            fkey, owner = got
            if rows[0][0] == 0:
                if owner is not None and owner in owners:
                    for *_, text in texts_at(os.fsdecode(fkey), rows):
                        outp.setdefault(owners[owner], []).append((Path(os.fsdecode(fkey)), text))
            elif fkey in wanted:
                out[wanted[fkey]] = texts_at(os.fsdecode(fkey), rows, query.line_may_match)
        for v in outp.values():
            v.sort()
        return out, outp

    def listing(self) -> Listings:
        """Folder listings for `search.list_transcripts`, from the database while a folder's time is unchanged; one
        object for the life of the index, so that a process that searches again reads none of them again."""
        if self._listings is None:
            self._listings = Listings(self)
        return self._listings

    # -- looking up ---------------------------------------------------------------------------
    def candidates(self, path: Path, query: Any) -> list[tuple[int, int, str, str, str | None, str]] | None:
        """(line, offset, type, place, time, text) of the texts of one transcript the index says may match, in file
        order; None when it cannot pick them for this query (the caller scans)."""
        conds = conditions(query.folded)
        if conds is None:
            return None
        row = self.db.execute("SELECT id FROM files WHERE path=?", (path_key(path),)).fetchone()
        if row is None:
            return []
        k = row[0] % self.shards
        expr = self._expression(k, conds)
        if not expr:
            return None if expr is None else []
        rows = self.db.execute(
            f"SELECT line, off, len, type, place, ts, k FROM t{k}.docs "
            f"WHERE id IN (SELECT rowid FROM t{k}.texts WHERE texts MATCH ?) AND file_id=? ORDER BY id",
            (expr, row[0]),
        ).fetchall()
        return texts_at(os.fspath(path), rows, query.line_may_match)

    def _expression(self, k: int, conds: list[tuple[str, str]]) -> str | None:
        """The FTS5 query that picks the texts of shard k a query's `conditions` allow: each whole word, each word
        that starts with a fragment (FTS5's prefix query), and for a fragment that ends a word or lies inside one
        any of the vocabulary's words that hold it (with the words too long for the index to keep whole). '' when
        no text of the shard can match; None when no condition narrows (each is a fragment in more than
        MAX_ALTERNATIVES words, or the vocabulary is behind: another process is writing): the caller scans."""
        groups = []
        for kind, w in conds:
            if kind == "word":
                groups.append(f'"{w}"')
                continue
            if kind == "prefix":
                groups.append(f'"{w}"*')
                continue
            if self.db.execute(f"SELECT behind FROM t{k}.wordstate").fetchone()[0]:
                continue  # another process's large write is not in the vocabulary yet: the other conditions pick
            pattern = f"%{w}" if kind == "suffix" else f"%{w}%"
            words = self.db.execute(
                f"SELECT word, long FROM t{k}.words WHERE id IN (SELECT rowid FROM t{k}.wordgrams WHERE word LIKE ?) "
                f"UNION ALL SELECT word, long FROM t{k}.words WHERE long LIMIT {MAX_ALTERNATIVES + 1}",
                (pattern,),
            ).fetchall()
            if len(words) > MAX_ALTERNATIVES:
                continue  # too common to narrow: the other conditions do
            if not words:
                return ""
            groups.append("(" + " OR ".join(f'"{word}"*' if long else f'"{word}"' for word, long in words) + ")")
        return " AND ".join(groups) if groups else None

    def status(self) -> IndexStatus:
        files, persisted, done = self.db.execute(
            "SELECT count(*) FILTER (WHERE owner IS NULL), count(*) FILTER (WHERE owner IS NOT NULL), "
            "coalesce(sum(indexed_to), 0) FROM files"
        ).fetchone()
        texts = sum(self.db.execute(f"SELECT count(*) FROM t{k}.docs").fetchone()[0] for k in range(self.shards))
        sessions = self.db.execute("SELECT count(*) FROM stats").fetchone()[0]
        names = [str(self.path)] + [str(shard_path(self.path, k)) for k in range(self.shards)]
        size = sum(os.path.getsize(n + s) for n in names for s in ("", "-wal") if os.path.exists(n + s))
        return IndexStatus(self.path, files, texts, done, size, persisted, sessions)


SEARCH_BUDGET = 64 << 20  # bytes a search reads to bring the index up to date (the rest it scans): about 2 s
POOL_MIN = 32 << 20  # bytes to read below which the files are read here (starting workers costs more)


# what a pool of worker processes raises when it cannot run here (BrokenProcessPool is a RuntimeError); not imported
# from concurrent.futures at start: multiprocessing costs a command 15 ms of imports
_POOL_ERRORS = (OSError, RuntimeError)
SHARD_BATCH = 64 << 20  # bytes of files a shard's process is given at a time
LOCK_QUIET = 1.0  # seconds waited for the writer lock before saying so


REBUILD_DEAD = 100_000  # texts dropped from a shard's index (and still in it) above which, when most of it, it is rebuilt
MAX_ALTERNATIVES = 400  # words holding a fragment beyond which its condition does not narrow enough to be asked
_QUERY_WORD = re.compile(r"[0-9a-z]+")


def conditions(folded: str) -> list[tuple[str, str]] | None:
    """What a text must hold, word by word, to hold `folded` (a query in lower case), in the words of the index's
    tokenizer: ("word", w) the whole word w, ("prefix", w) a word that starts with w, ("suffix", w) one that ends
    with it, ("part", w) one that holds it. A query's inner words are whole words of the text, its first word ends
    one and its last starts one (unless the query starts or ends with a separator: then they are whole there too).
    None when the index cannot pick: no letter or digit in the query, or a character beyond ASCII (FTS5 folds the
    case of ASCII only; such a query is scanned, so that what Python's lower() matches is never missed)."""
    if not folded.isascii():
        return None
    words = _QUERY_WORD.findall(folded)
    if not words or any(len(w) >= MAX_TERM for w in words):
        return None
    open_start = folded[0].isalnum()
    open_end = folded[-1].isalnum()
    out = []
    for i, w in enumerate(words):
        starts = i > 0 or not open_start
        ends = i < len(words) - 1 or not open_end
        out.append(("word" if starts and ends else "prefix" if starts else "suffix" if ends else "part", w))
    return out


def usable(query: Any) -> bool:
    """Whether the index may pick a query's candidates (the lookup can still decline: see `_expression`)."""
    return conditions(query.folded) is not None


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


__all__ = ["IndexStatus", "SearchIndex", "conditions", "open_index", "usable"]
