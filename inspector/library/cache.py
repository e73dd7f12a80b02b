"""inspector's cache folder and the SQLite files in it: where they are, how each is opened, and how their errors are
told apart (another writer holding them, damage, a full disk).

The cache holds one database, `index.sqlite`, beside its text shards `index-t<k>.sqlite`: the search index's files
and texts (`fts`), the folder listings (`listings`) and the per-session stats rows (`stats`). Nothing in it is not
in the transcripts: deleting it loses nothing.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

from inspector.statefiles import cache_dir

WAL_LIMIT = 8 << 20  # bytes a database's write-ahead log keeps after a checkpoint


def db_path(env: dict[str, str] | None = None) -> Path:
    return cache_dir(env) / "index.sqlite"


def shard_path(path: Path, k: int) -> Path:
    """The database of the k-th shard of the texts, beside the main one (index-t0.sqlite, ...)."""
    return path.with_name(f"{path.stem}-t{k}{path.suffix}")


def remove_index(path: Path) -> None:
    """Delete the index's files: the main database, its shards, their journals (nothing else is touched)."""
    import glob

    names = [str(path)] + glob.glob(glob.escape(str(path.with_name(path.stem + "-t"))) + "[0-9]*" + path.suffix)
    for name in names:
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(name + suffix)
            except OSError:
                pass


def pragmas(db: sqlite3.Connection, schema: str = "") -> None:
    """How every database of the index is opened (`schema`: "t0." for an attached shard): write-ahead log, synced
    at checkpoints, and a deleted row's bytes overwritten, not left in a free page."""
    db.execute(f"PRAGMA {schema}journal_mode=WAL")
    db.execute(f"PRAGMA {schema}synchronous=NORMAL")
    db.execute(f"PRAGMA {schema}secure_delete=ON")
    db.execute(f"PRAGMA {schema}journal_size_limit={WAL_LIMIT}")  # a checkpointed log is cut back to this


class IndexBusy(sqlite3.OperationalError):
    """Another process is writing the index (one writes at a time): look up what it holds, read the rest."""


class IndexUnavailable(Exception):
    """The index cannot be used now (locked for long, no FTS5): search by scanning instead."""


class IndexFull(Exception):
    """The cache's disk has too little room for what `index` would write (nothing was written)."""

    def __init__(self, room: int, need: int) -> None:
        super().__init__(f"{room} bytes free, {need} needed")
        self.room, self.need = room, need


_FS_ENCODING, _FS_ERRORS = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()


_KEYS: dict[str, bytes] = {}
_KEYS_KEPT = 100_000  # about 25 MB at most (a root of 100,000 files)


def is_normal_absolute(s: str) -> bool:
    """Whether a path is absolute and already as `os.path.abspath` writes it (no `.` or `..` segment, no doubled or
    trailing slash): the paths of a listed root are, and need no normalising. A folder whose name starts with a dot
    (`~/.claude`, where every transcript is) is normal: testing for "/." sent every real path through abspath."""
    return s == "/" or (
        s.startswith("/") and "//" not in s and "/./" not in s and "/../" not in s and not s.endswith(("/", "/.", "/.."))
    )


def path_key(path: Path | str) -> bytes:
    """A file's key: its absolute path as bytes, as os.fsencode makes them (a name that is not UTF-8 is a valid key
    too). Called for every file of every search: the encoding is spelled out, without fsencode's own checks."""
    s = path if type(path) is str else os.fspath(path)
    key = _KEYS.get(s)
    if key is not None:
        return key
    if is_normal_absolute(s):
        key = s.encode(_FS_ENCODING, _FS_ERRORS)
        if len(_KEYS) < _KEYS_KEPT:  # an absolute path's key never changes: a process that searches again reuses it
            _KEYS[s] = key
        return key
    if not s or is_normal_absolute("/" + s):  # a relative path as a user types one: the folder it is in, no normpath
        cwd = os.getcwd()
        s = (cwd if cwd != "/" else "") + "/" + s
    else:  # a dot segment or a slash normpath takes out
        s = os.path.abspath(s)
    return s.encode(_FS_ENCODING, _FS_ERRORS)


_DAMAGE_WORDS = (
    "malformed",
    "corrupt",
    "vtable constructor failed",
    "not a database",
    "no such table",
    "disk i/o error",
    "could not decode",
)  # a log cut short reads as an I/O error; a page as bad text


def is_locked(exc: BaseException) -> bool:
    """Whether an SQLite error is another connection holding the database (locked, busy): to wait for, never damage."""
    msg = str(exc).lower()
    return isinstance(exc, sqlite3.DatabaseError) and ("locked" in msg or "busy" in msg)


def is_damage(exc: BaseException) -> bool:
    """Whether an SQLite error says the database is damaged (a page overwritten, a table lost), not busy: SQLite
    reports some damage as an OperationalError ("vtable constructor failed: texts", "no such table: spans")."""
    if not isinstance(exc, sqlite3.DatabaseError) or is_locked(exc):
        return False
    msg = str(exc).lower()
    return not isinstance(exc, sqlite3.OperationalError) or any(w in msg for w in _DAMAGE_WORDS)


def cut_short(path: Path, page: int) -> str | None:
    """Why a database file is cut short, or None: a file whose size is not a whole number of pages lost part of its
    last page, and SQLite reads what is left of it without a word (a search found one hit fewer, silently). Only its
    size is looked at: opening and closing a database file beside SQLite would drop SQLite's locks on it."""
    try:
        size = os.stat(path).st_size
    except OSError:
        return None
    if page > 0 and size % page:
        return f"is cut short: {size:,} bytes is not a whole number of {page:,}-byte pages"
    return None


def is_full(exc: BaseException) -> bool:
    """SQLite found the disk full (SQLITE_FULL)."""
    return isinstance(exc, sqlite3.Error) and (
        getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "disk is full" in str(exc).lower()
    )


def free_bytes(folder: Path) -> int | None:
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):
        return None
    return st.f_bavail * st.f_frsize
