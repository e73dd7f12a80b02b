"""The worker side of building the search index: reading a file's texts and writing them into one shard's database.

Pure functions over a file and a connection, so that a worker process can run them (`index_shard`); the index
(`fts.SearchIndex`) plans the jobs and records in its main database how far each file was read.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

from inspector.library.cache import pragmas


class Job:
    """A file to index: a transcript ("t": read from `start`, its line count then `lines`, after dropping its rows
    of lines after `after`: -1 all of them (a replaced or new file), `lines` those of an unfinished last line) or a
    persisted output ("p": one text, its first PERSISTED_CAP bytes). `row`: the file's row in the main database
    when planned (None: no row yet); written only if still the same."""

    __slots__ = ("key", "path", "fid", "start", "lines", "after", "kind", "st", "head", "owner", "row")

    def __init__(
        self,
        key: bytes,
        path: str,
        fid: int | None,
        start: int,
        lines: int,
        after: int,
        kind: str,
        st: os.stat_result,
        head: bytes | None,
        owner: bytes | None,
        row: tuple[Any, ...] | None,
    ) -> None:
        self.key, self.path, self.fid, self.start, self.lines, self.after = key, path, fid, start, lines, after
        self.kind, self.st, self.head, self.owner, self.row = kind, st, head, owner, row

    def __repr__(self) -> str:
        return f"Job({self.kind} {self.path!r} fid={self.fid} from {self.start})"

    @property
    def size(self) -> int:
        """The bytes it reads."""
        from inspector.library.texts import PERSISTED_CAP

        return max(0, self.st.st_size - self.start) if self.kind == "t" else min(self.st.st_size, PERSISTED_CAP)


class End(NamedTuple):
    offset: int  # where the next read starts: the end of the last complete line
    lines: int  # complete lines up to there
    read: int  # lines read this time


BATCH = 5000

# -- the vocabulary ---------------------------------------------------------------------------------------------------
# The texts are indexed by words (FTS5's `ascii` tokenizer: a word is a run of ASCII letters and digits and of any
# character beyond ASCII, its ASCII letters folded to lower case; anything else separates words). A query that starts
# or ends inside a word is looked up through the shard's vocabulary: `words` holds each distinct word once and
# `wordgrams` indexes them by trigram, so that the words holding a fragment are found, then the texts holding them.
# A word of more than MAX_TERM bytes is kept by FTS5 cut to that length; the vocabulary keeps its first LONG_PREFIX
# bytes flagged `long` (a fragment past the cut can be anywhere in such a word: the texts holding one are candidates).

MAX_TERM = 32768  # FTS5's FTS5_MAX_TOKEN_SIZE: the bytes of a word it keeps
LONG_PREFIX = 256  # bytes kept of a longer word (cut at a character's start)
WORDS_INLINE = 1 << 16  # characters written by one call up to which their words are found here (else: `sync_words`)
_WORD = re.compile(rb"[0-9a-z\x80-\xff]+")


def shard_schema(shard: str) -> str:
    """The tables of one shard (`shard`: "t0." when attached)."""
    return f"""
        -- where each text is (a contentless FTS5 table indexes it: the text itself stays in the transcript, read again
        -- when a lookup picks it; a tenth of the disk and two thirds of the write of an index that keeps a copy):
        -- its file, line, the line's byte offset and length, record type, place, time, and `k`, its rank among the
        -- line's texts (`record_texts`, the empty ones left out)
        CREATE TABLE {shard}docs(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, line INTEGER, off INTEGER,
                                 len INTEGER, type TEXT, place TEXT, ts TEXT, k INTEGER NOT NULL);
        CREATE VIRTUAL TABLE {shard}texts USING fts5(text, content='', tokenize='ascii', detail=none);
        -- the rowids of a file's texts, a span per update (an FTS5 table finds rows by rowid only: deleting by
        -- file_id would read every text); `line_lo`: the first line of the span (0: a persisted output)
        CREATE TABLE {shard}spans(file_id INTEGER NOT NULL, lo INTEGER NOT NULL, hi INTEGER NOT NULL,
                                  line_lo INTEGER NOT NULL);
        CREATE INDEX {shard}spans_file ON spans(file_id);
        -- the vocabulary (never shrinks: a word of texts since dropped only widens a lookup's candidates)
        CREATE TABLE {shard}words(id INTEGER PRIMARY KEY, word TEXT NOT NULL, long INTEGER NOT NULL, UNIQUE(word, long));
        CREATE INDEX {shard}words_long ON words(long) WHERE long;
        CREATE VIRTUAL TABLE {shard}wordgrams USING fts5(word, content='words', content_rowid='id',
                                                         tokenize='trigram', detail=none);
        CREATE VIRTUAL TABLE {shard}vocab USING fts5vocab(texts, row);
        -- `behind`: 1 while texts were written whose words the vocabulary lacks (a large write, until `sync_words`);
        -- `next_id`: the rowid the next text gets (never one used before: a contentless index cannot forget a text,
        -- so a dropped text's rowid stays in it, with no docs row: never a candidate); `dead`: such rowids
        CREATE TABLE {shard}wordstate(behind INTEGER NOT NULL, next_id INTEGER NOT NULL, dead INTEGER NOT NULL);
        INSERT INTO {shard}wordstate VALUES(0, 1, 0);
    """


def _word_row(term: bytes) -> tuple[str, int]:
    if len(term) < MAX_TERM:
        return term.decode("utf-8", "replace"), 0
    return term[:LONG_PREFIX].decode("utf-8", "ignore"), 1  # a cut inside a character drops its first bytes only


def text_words(texts: Iterable[str]) -> set[bytes]:
    """The words FTS5's `ascii` tokenizer makes of these texts, as the bytes it keeps (the vocabulary `sync_words`
    reads back from the index, found here without it for a small write)."""
    out: set[bytes] = set()
    for text in texts:
        out.update(_WORD.findall(text.encode("utf-8", "surrogatepass").lower()))
    return {w[:MAX_TERM] for w in out}


def add_words(db: sqlite3.Connection, shard: str, terms: Iterable[bytes]) -> None:
    """Put the words not yet in the shard's vocabulary into it (in the caller's transaction)."""
    top = db.execute(f"SELECT coalesce(max(id), 0) FROM {shard}words").fetchone()[0]
    db.executemany(f"INSERT OR IGNORE INTO {shard}words(word, long) VALUES(?, ?)", map(_word_row, terms))
    db.execute(f"INSERT INTO {shard}wordgrams(rowid, word) SELECT id, word FROM {shard}words WHERE id > ?", (top,))


def sync_words(db: sqlite3.Connection, shard: str) -> bool:
    """After a large write: the vocabulary completed from the index's own (a pass over its terms, in the caller's
    transaction). Returns whether it was behind."""
    if not db.execute(f"SELECT behind FROM {shard}wordstate").fetchone()[0]:
        return False
    add_words(db, shard, [t for (t,) in db.execute(f"SELECT CAST(term AS BLOB) FROM {shard}vocab")])
    db.execute(f"UPDATE {shard}wordstate SET behind=0")
    return True


def read_texts(path: str, start: int, lines: int) -> Iterator[Any]:
    """The texts of a transcript's lines from byte `start` (line `lines` + 1), in batches of rows (text, line, offset,
    the line's length, type, place, time, k), then an `End`. The rows of a last line without its end (still being
    written) come in a batch of their own that starts with None: searched now, read again once the file changes. A
    line over MAX_LINE bytes is skipped as the scan skips it. Pure (no database): a worker process can run it."""
    from inspector.transcript.index import MAX_LINE, READ_BUFFER

    rows: list[tuple[Any, ...]] = []
    read = 0
    with open(path, "rb", buffering=READ_BUFFER) as f:
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
    yield End(offset, lines, read)


class HeldTexts:
    """The texts a transaction puts into a shard's FTS5 table, held back and inserted together after the other writes.

    FTS5 keeps the words of what is inserted in memory and writes them out as a segment of its index at a commit, or
    at any savepoint: SQLite opens one for each later statement that may fail part-way (an INSERT into `docs`, an
    UPDATE of `wordstate`...). Inserted as they come, a build of many small files wrote a segment per file, and then
    merged them (over half of the build of the bench's persisted outputs); held to the end of the transaction, or
    until HOLD characters, a segment is written per batch of files."""

    HOLD = 16 << 20  # characters held at most (a larger file is inserted in parts, each a segment of its own)

    def __init__(self, db: sqlite3.Connection, shard: str) -> None:
        self.db, self.shard = db, shard
        self.rows: list[tuple[int, str]] = []
        self.chars = 0

    def add(self, first: int, texts: list[str]) -> None:
        self.rows += zip(range(first, first + len(texts)), texts)
        self.chars += sum(map(len, texts))
        if self.chars > self.HOLD:
            self.insert()

    def insert(self) -> None:
        """Insert what is held (the caller's last write before its commit)."""
        if self.rows:
            self.db.executemany(f"INSERT INTO {self.shard}texts(rowid, text) VALUES(?, ?)", self.rows)
        self.rows, self.chars = [], 0


def write_texts(
    db: sqlite3.Connection, shard: str, fid: int, after: int, batches: Iterable[Any], held: HeldTexts | None = None
) -> End:
    """In a write transaction on the shard's database (`shard`: "t0." when attached, "" when it is the main one):
    drop the file's texts of lines after `after` (-1: all of them; its rows of an unfinished last line are among
    them, and any rows a crash left between this shard's commit and the main one's), then insert what `read_texts`
    yields, with consecutive rowids, recording their spans. Returns its `End`. The texts themselves go into `held`,
    which the caller inserts before its commit (`HeldTexts`); without one, they are inserted here, last."""
    own = held is None
    if held is None:
        held = HeldTexts(db, shard)
    drop_texts(db, shard, fid, after)
    first = next_id = db.execute(f"SELECT next_id FROM {shard}wordstate").fetchone()[0]
    tail_from = None
    end = End(0, 0, 0)
    texts: list[str] | None = []  # what was written, while small enough to find its words here
    chars = 0
    for item in batches:
        if isinstance(item, End):
            end = item
            break
        if item and item[0] is None:  # the marker before the rows of an unfinished last line
            tail_from = next_id
            item = item[1:]
        if item:
            db.executemany(
                f"INSERT INTO {shard}docs(id, file_id, line, off, len, type, place, ts, k) VALUES(?,?,?,?,?,?,?,?,?)",
                [(next_id + n, fid, *r[1:]) for n, r in enumerate(item)],
            )
            held.add(next_id, [r[0] for r in item])
            next_id += len(item)
            if texts is not None:
                texts += (r[0] for r in item)
                chars += sum(len(r[0]) for r in item)
                if chars > WORDS_INLINE:
                    texts = None
    db.execute(f"UPDATE {shard}wordstate SET next_id=?", (next_id,))
    if texts is None:
        db.execute(f"UPDATE {shard}wordstate SET behind=1")
    elif texts:
        add_words(db, shard, text_words(texts))
    if tail_from is None:
        tail_from = next_id
    if tail_from > first:  # the complete lines: from the first one read (a persisted output: line 0)
        db.execute(f"INSERT INTO {shard}spans VALUES(?, ?, ?, ?)", (fid, first, tail_from - 1, max(after, -1) + 1))
    if next_id > tail_from:  # an unfinished last line: dropped with the lines after the file's count
        db.execute(f"INSERT INTO {shard}spans VALUES(?, ?, ?, ?)", (fid, tail_from, next_id - 1, end.lines + 1))
    if own:
        held.insert()
    return end


def drop_texts(db: sqlite3.Connection, shard: str, fid: int, after: int) -> None:
    """Forget a file's texts of the spans that start after line `after` (-1: all): their rows go, their rowids stay in
    the contentless index as `dead` (a lookup joins the rows: a dead rowid is never a candidate; `SearchIndex` builds
    a shard again once most of it is dead)."""
    for span, lo, hi in db.execute(
        f"SELECT rowid, lo, hi FROM {shard}spans WHERE file_id=? AND line_lo>?", (fid, after)
    ).fetchall():
        gone = db.execute(f"DELETE FROM {shard}docs WHERE id BETWEEN ? AND ?", (lo, hi)).rowcount
        db.execute(f"UPDATE {shard}wordstate SET dead=dead+?", (gone,))
        db.execute(f"DELETE FROM {shard}spans WHERE rowid=?", (span,))


def persisted_batches(path: str) -> list[Any]:
    """A persisted output as `read_texts` would give it: one text, as the scan reads it (its first PERSISTED_CAP
    bytes), then an `End` whose offset is the bytes read."""
    from inspector.library.texts import read_persisted

    data = read_persisted(path)
    return [[(data.decode("utf-8", "replace"), 0, -1, len(data), "user", "persisted output", None, 0)], End(len(data), 0, 0)]


def index_shard(shard_file: str, items: list[tuple[int, str, int, int, int, str]], words: bool = False) -> list[tuple[Any, ...]]:
    """In a worker process: index files into one shard's database, in one transaction (FTS5 writes a segment at each
    commit, and merges them: a commit per file wrote 14 times the bytes); for each, (id, where its next read starts,
    its complete lines, lines read), or (id, None, None, 0) when it cannot be read now (then the batch is written
    again a file at a time, without it). The main database is written after, by the caller: a crash between leaves
    the shard ahead, which the next `write_texts` of that file drops (its lines after the count the main database
    has). `words`: then the shard's vocabulary is completed (`sync_words`, in a transaction of its own), here on the
    worker's core rather than after every shard in the caller's process."""
    db = sqlite3.connect(shard_file, timeout=60.0, isolation_level=None)
    try:
        pragmas(db)
        try:
            out = _index_files(db, items, together=True)
        except OSError:  # a file gone or unreadable since it was listed
            out = _index_files(db, items, together=False)
        if words:
            try:
                db.execute("BEGIN IMMEDIATE")
                sync_words(db, "")
                db.execute("COMMIT")
            except sqlite3.Error:  # left behind: the caller completes it (`SearchIndex._sync_words`), or says why not
                if db.in_transaction:
                    db.execute("ROLLBACK")
        return out
    finally:
        db.close()


def _index_files(
    db: sqlite3.Connection, items: list[tuple[int, str, int, int, int, str]], together: bool
) -> list[tuple[Any, ...]]:
    """Index files into a shard in one transaction (`together`: an error undoes all and is raised) or one each (a file
    that cannot be read is left out)."""
    out: list[tuple[Any, ...]] = []
    held = HeldTexts(db, "") if together else None  # (a file's own transaction: write_texts inserts its texts last)
    if together:
        db.execute("BEGIN IMMEDIATE")
    try:
        for fid, path, start, lines, after, kind in items:
            try:
                batches = persisted_batches(path) if kind == "p" else read_texts(path, start, lines)
                if not together:
                    db.execute("BEGIN IMMEDIATE")
                try:
                    end = write_texts(db, "", fid, after, batches, held)
                except BaseException:
                    if not together and db.in_transaction:  # not after SQLite rolled back itself (a full disk)
                        db.execute("ROLLBACK")
                    raise
                if not together:
                    db.execute("COMMIT")
                out.append((fid, end.offset, end.lines, end.read))
            except OSError:
                if together:
                    raise
                out.append((fid, None, None, 0))
        if held is not None:
            held.insert()  # the batch's texts: its last write before the commit
    except BaseException:
        if together and db.in_transaction:
            db.execute("ROLLBACK")
        raise
    if together:
        db.execute("COMMIT")
    return out


def _texts(raw: bytes, line: int, offset: int) -> list[tuple[Any, ...]]:
    from inspector.transcript.records import LineError, decode_line

    try:
        body, _ = decode_line(raw)
    except LineError:
        return []
    t = body.get("type")
    t = t if isinstance(t, str) else ""
    ts = body.get("timestamp") if isinstance(body.get("timestamp"), str) else None
    return [(text, line, offset, len(raw), t, where, ts, k) for k, (where, text) in enumerate(line_texts(body))]


def line_texts(body: dict[str, Any]) -> list[tuple[str, str]]:
    """The (place, text) of a decoded line that the index holds, in order: `k` in `docs` is a rank in this list."""
    from inspector.library.texts import record_texts

    return [(where, text) for where, text in record_texts(body) if text]


def texts_at(path: str, rows: list[tuple[Any, ...]], may_match: Callable[[bytes], bool] | None = None) -> list[tuple[Any, ...]]:
    """The texts of an index's rows of one file, read again from it: each row (line, offset, length, type, place, time,
    k) becomes (line, offset, type, place, time, text). A row whose line no longer holds that text (the file was
    changed since it was indexed, as the next search will find) is left out. A persisted output (line 0) is its
    first PERSISTED_CAP bytes. Lines are read once however many of their texts are asked for; `may_match`: the search's
    byte test of a line (a line that cannot hold the query is not decoded: its texts are left out)."""
    from inspector.library.texts import read_persisted
    from inspector.transcript.records import LineError, decode_line

    out: list[tuple[Any, ...]] = []
    if rows and rows[0][0] == 0:  # a persisted output: one text, as the scan reads it
        try:
            data = read_persisted(path)
        except OSError:
            return out
        return [(0, -1, rows[0][3], rows[0][4], rows[0][5], data.decode("utf-8", "replace"))]
    try:
        f = open(path, "rb")  # noqa: SIM115 (held across the rows, closed below)
    except OSError:
        return out
    with f:
        at: int | None = None
        texts: list[tuple[str, str]] = []
        for line, off, length, t, place, ts, k in rows:
            if off != at:
                at = off
                f.seek(off)
                raw = f.read(length)
                try:
                    whole = len(raw) == length and (may_match is None or may_match(raw))
                    texts = line_texts(decode_line(raw)[0]) if whole else []
                except LineError:
                    texts = []
            if k < len(texts) and texts[k][0] == place:
                out.append((line, off, t, place, ts, texts[k][1]))
    return out
