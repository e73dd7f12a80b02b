"""Index a transcript file line by line, and read record bodies back on demand.

The file is streamed (never read whole into one string); each line is decoded once and reduced
to a `Record`. Bodies are re-read with `os.pread` by byte offset when they are needed, so a
200 MB transcript costs its index, not gigabytes of Python objects. A file that is still being
written can be brought up to date with `Transcript.update()`, which reads only the new bytes.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import orjson

from inspector.transcript.records import LineError, Record, decode_line, gc_paused, index_record

PROGRESS_EVERY = 8 << 20
MAX_LINE = 64 << 20  # a line longer than this is reported and skipped, never held in memory (real ones reach ~13 MB)


def _holds_in(raw: bytes, needles: tuple[bytes, ...]) -> bool:
    for needle in needles:  # a plain loop: a generator per line costs more than the search on short lines
        if needle in raw:
            return True
    return False


def _libc_memmem() -> Callable[[bytes, tuple[bytes, ...]], bool] | None:
    """`_holds_in` by the C library's memmem, where there is one (glibc, macOS): the partial index's test of every
    line runs over most of a transcript's bytes, and memmem is 2.5 times as quick as `in` on them (measured on the
    bench's sessions: 0.11 s against 0.29 s for 295 MB). None elsewhere (Windows): `in` then."""
    try:
        import ctypes
        import ctypes.util

        name = ctypes.util.find_library("c")
        if name is None:
            return None
        fn = ctypes.CDLL(name).memmem
    except (ImportError, OSError, AttributeError):
        return None
    fn.restype = ctypes.c_void_p
    fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]

    def holds(raw: bytes, needles: tuple[bytes, ...]) -> bool:
        n = len(raw)
        for needle in needles:
            if fn(raw, n, needle, len(needle)):
                return True
        return False

    return holds


@cache
def _holds_fn() -> Callable[[bytes, tuple[bytes, ...]], bool]:
    """The test of a line for a partial index, chosen once (ctypes is imported only by a partial index)."""
    return _libc_memmem() or _holds_in


@dataclass(frozen=True, slots=True)
class Problem:
    """A line that was skipped (or repaired), with where it is and why."""

    line: int
    offset: int
    reason: str
    skipped: bool = True

    def __str__(self) -> str:
        what = "skipped" if self.skipped else "repaired"
        return f"line {self.line} (byte {self.offset}): {self.reason} [{what}]"


INCOMPLETE_TAIL = "incomplete last line (no newline: the file may still be being written)"


class FileChanged(Exception):
    """The file was truncated or replaced since it was indexed."""


class Transcript:
    """One JSONL transcript: its records' index, the problems found, and lazy bodies."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.records: list[Record] = []
        self.problems: list[Problem] = []
        self.metadata: dict[str, dict[str, Any]] = {}  # last value of each small metadata type
        self.replacements: dict[str, str] = {}  # content-replacement: toolUseId -> text (§5.3)
        self.agent_replacements: dict[str, dict[str, str]] = {}
        self.scanned_to = 0  # bytes consumed (complete lines only)
        self.size = 0
        self.mtime_ns = 0
        self._ino: int | None = None
        self._next_line = 1
        self._bodies: OrderedDict[int, dict[str, Any]] = OrderedDict()
        self._fd: int | None = None
        self.only: tuple[bytes, ...] | None = None  # a partial index: only the lines holding one of these

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        progress: Callable[[int, int], None] | None = None,
        only: tuple[bytes, ...] | None = None,
    ) -> Transcript:
        """The index of a file. `only`: index just the lines that hold one of these byte strings (a report that needs
        a few kinds of record, as the cost's responses, skips decoding the rest: most of a transcript's bytes are
        tool results); such an index is partial, and says so (`only`)."""
        t = cls(path)
        t.only = only
        t.update(progress)
        return t

    @classmethod
    def resume(cls, path: str | os.PathLike[str], offset: int, line: int = 1, inode: int | None = None) -> Transcript:
        """An index that starts at byte `offset` (a line's start) as line `line`, for reading on from where an earlier
        process stopped, or a file's tail: `update()` then reads from there. `inode`: the file read before (a file
        replaced since raises FileChanged on update)."""
        t = cls(path)
        t.scanned_to, t._next_line, t._ino = offset, line, inode
        return t

    @property
    def next_line(self) -> int:
        """The number the next line read will have."""
        return self._next_line

    # -- scanning ---------------------------------------------------------------------------
    def update(self, progress: Callable[[int, int], None] | None = None, max_bytes: int | None = None) -> list[Record]:
        """Index the bytes appended since the last call; return the new records.

        `progress(bytes_done, bytes_total)` is called every few megabytes on large files;
        `max_bytes` stops (at a line boundary) once that many bytes were read, for a quick first look.

        Raises FileChanged if the file shrank or was replaced by another file: the caller
        decides whether to reload from scratch (and tells the user).
        """
        st = os.stat(self.path)
        if self._ino is not None and (st.st_ino != self._ino or st.st_size < self.scanned_to):
            self.close()
            raise FileChanged(f"{self.path} was truncated or replaced while open")
        self._ino = st.st_ino
        self.size, self.mtime_ns = st.st_size, st.st_mtime_ns
        if self.problems and self.problems[-1].reason == INCOMPLETE_TAIL:
            self.problems.pop()
        new: list[Record] = []
        if st.st_size == self.scanned_to:
            return new
        loads, problems, absorb, append = orjson.loads, self.problems, self._absorb, new.append
        only = self.only
        holds = _holds_fn() if only is not None else _holds_in
        with gc_paused(), open(self.path, "rb", buffering=1 << 20) as f:
            if self.scanned_to == 0 and f.read(3) == b"\xef\xbb\xbf":
                self.scanned_to = 3  # a UTF-8 byte order mark (an editor's save): not part of the first record
            f.seek(self.scanned_to)
            offset = self.scanned_to
            line_no = self._next_line
            no_end = 1 << 62
            next_report = offset + PROGRESS_EVERY if progress is not None else no_end
            stop_at = offset + max_bytes if max_bytes is not None else no_end
            next_event = min(next_report, stop_at)  # one comparison per line for both
            readline, cap = f.readline, MAX_LINE
            while True:
                raw = readline(cap + 1)
                if not raw:
                    break
                if len(raw) > cap and raw[-1] != 10:
                    # too long: read on to its end a megabyte at a time, keeping none of it
                    total, last = len(raw), raw[-1]
                    raw = b""
                    while last != 10:
                        chunk = readline(1 << 20)
                        if not chunk:
                            break
                        total += len(chunk)
                        last = chunk[-1]
                    size = total - 1 if last == 10 else total
                    problems.append(
                        Problem(line_no, offset, f"line too long ({size:,} bytes; a line over {cap:,} bytes is not read)")
                    )
                    offset += total
                    line_no += 1
                    continue
                if offset >= next_event:
                    if offset >= stop_at:
                        break
                    assert progress is not None
                    progress(offset, st.st_size)
                    next_report = offset + PROGRESS_EVERY
                    next_event = min(next_report, stop_at)
                n = len(raw)
                # the line is decoded as read: JSON allows the trailing newline, and not slicing
                # it off saves copying every line (a 200 MB file is 200 MB of copies)
                if raw[-1] == 10:  # complete
                    length = n - 2 if n > 1 and raw[-2] == 13 else n - 1
                    complete = True
                else:
                    length = n - 1 if raw[-1] == 13 else n
                    complete = False
                if only is not None and not holds(raw, only):
                    offset += n  # not a line this partial index keeps: neither decoded nor counted as a problem
                    line_no += 1
                    continue
                if raw[0] == 123 or (length > 0 and not raw.isspace()):  # 123: "{", the usual first byte
                    try:
                        obj = loads(raw)
                        if obj.__class__ is not dict:
                            raise LineError(f"not a JSON object (a {type(obj).__name__})")
                        note = None
                    except (orjson.JSONDecodeError, LineError, RecursionError):
                        try:
                            obj, note = decode_line(raw)
                        except LineError as exc:
                            if not complete:
                                problems.append(Problem(line_no, offset, INCOMPLETE_TAIL))
                                break  # re-read it next time: it may still be being written
                            problems.append(Problem(line_no, offset, str(exc)))
                            obj = None
                    if obj is not None:
                        if note:
                            problems.append(Problem(line_no, offset, note, skipped=False))
                        rec = index_record(obj, line_no, offset, length)
                        if rec.extra is not None:
                            absorb(rec)
                        append(rec)
                offset += n
                line_no += 1
            self.scanned_to = offset
            self._next_line = line_no
        self.records.extend(new)
        return new

    def _absorb(self, rec: Record) -> None:
        if rec.extra is None:
            return
        meta = rec.extra.get("meta")
        if meta is not None:
            self.metadata[rec.type] = meta
        reps = rec.extra.get("replacements")
        if reps:
            aid = rec.agent_id
            if aid:
                self.agent_replacements.setdefault(aid, {}).update(reps)
            else:
                self.replacements.update(reps)

    @property
    def inode(self) -> int | None:
        """The inode of the file as it was indexed (a file replaced under the same name has another)."""
        return self._ino

    @property
    def complete(self) -> bool:
        """True when every byte of the file has been indexed."""
        return self.scanned_to >= self.size

    @property
    def skipped(self) -> list[Problem]:
        return [p for p in self.problems if p.skipped]

    # -- bodies -----------------------------------------------------------------------------
    def read_raw(self, rec: Record, limit: int | None = None) -> bytes:
        """The raw bytes of a record's line (at most `limit` bytes), by a positional read."""
        n = rec.length if limit is None else min(rec.length, limit)
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
        return os.pread(self._fd, n, rec.offset)

    def close(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None

    def __del__(self) -> None:
        self.close()

    def body(self, rec: Record) -> dict[str, Any]:
        """The decoded JSON object of a record (small LRU cache)."""
        cached = self._bodies.get(rec.offset)
        if cached is not None:
            self._bodies.move_to_end(rec.offset)
            return cached
        obj, _ = decode_line(self.read_raw(rec))
        self._bodies[rec.offset] = obj
        if len(self._bodies) > 64:
            self._bodies.popitem(last=False)
        return obj
