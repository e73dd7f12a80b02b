"""Index a transcript file line by line, and read record bodies back on demand.

The file is streamed (never read whole into one string); each line is decoded once and reduced
to a `Record`. Bodies are re-read with `os.pread` by byte offset when they are needed, so a
200 MB transcript costs its index, not gigabytes of Python objects. A file that is still being
written can be brought up to date with `Transcript.update()`, which reads only the new bytes.
"""

from __future__ import annotations

import os
import threading
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
# the buffer a file read line by line is opened with: Python's 8 KB default reads a 100 KB tool result's line in a dozen
# calls and joins them (the bench root's 200 files read by lines: 0.12-0.15 s with it, 0.05 s with this)
READ_BUFFER = 1 << 20


def _holds_in(raw: bytes, needles: tuple[bytes, ...]) -> bool:
    for needle in needles:  # a plain loop: a generator per line costs more than the search on short lines
        if needle in raw:
            return True
    return False


@cache
def _memmem() -> Any:
    """The C library's memmem through ctypes (glibc, macOS), or None (Windows): a partial index searches a
    transcript's bytes with it, at about 5 GB/s against Python's `in` (bytes.find) at 2 GB/s and `readline` a line at a
    time; ctypes is imported only by a partial index."""
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
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
    return fn


def _libc_memmem() -> Callable[[bytes, tuple[bytes, ...]], bool] | None:
    """`_holds_in` by the C library's memmem, where there is one: 2.5 times as quick as `in` on a line (measured on
    the bench's sessions: 0.11 s against 0.29 s for 295 MB). None elsewhere: `in` then."""
    fn = _memmem()
    if fn is None:
        return None

    def holds(raw: bytes, needles: tuple[bytes, ...]) -> bool:
        n = len(raw)
        for needle in needles:
            if fn(raw, n, needle, len(needle)):
                return True
        return False

    return holds


@cache
def _holds_fn() -> Callable[[bytes, tuple[bytes, ...]], bool]:
    """The test of a line for a partial index, chosen once."""
    return _libc_memmem() or _holds_in


MARKED_CHUNK = 4 << 20  # bytes a partial index reads at a time (a line longer than this is read on in more)
_buffers = threading.local()


def _chunk_buffer(size: int) -> bytearray:
    """The thread's buffer of a partial index's chunks, made once: a new one for each file cost more than the search
    (zeroing and faulting in 2 GB over the bench root's 3,000 files, 0.5 s of the 1.6)."""
    buf = getattr(_buffers, "buf", None)
    if buf is None or len(buf) != size:
        buf = _buffers.buf = bytearray(size)
    return buf


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


def _too_long(line: int, offset: int, size: int, cap: int) -> Problem:
    return Problem(line, offset, f"line too long ({size:,} bytes; a line over {cap:,} bytes is not read)")


def _read_into(fd: int, mv: memoryview, pos: int, size: int) -> int:
    """Read the file from `pos` into the buffer, up to its length and the file's size as it was when the pass began
    (bytes written since are the next pass's)."""
    want = min(len(mv), size - pos)
    if want <= 0:
        return 0
    return os.preadv(fd, [mv[:want]], pos) if hasattr(os, "preadv") else _pread_into(fd, mv, pos, want)


def _pread_into(fd: int, mv: memoryview, pos: int, want: int) -> int:
    data = os.pread(fd, want, pos)
    mv[: len(data)] = data
    return len(data)


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
        only = self.only
        if only is not None and progress is None and max_bytes is None and _memmem() is not None and all(only):
            self._update_marked(st.st_size, only, new)
            self.records.extend(new)
            return new
        problems, take = self.problems, self._take
        holds = _holds_fn() if only is not None else _holds_in
        with gc_paused(), open(self.path, "rb", buffering=READ_BUFFER) as f:
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
                    problems.append(_too_long(line_no, offset, total - 1 if last == 10 else total, cap))
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
                complete = raw[-1] == 10
                if only is not None and complete and not holds(raw, only):
                    offset += n  # not a line this partial index keeps: neither decoded nor counted as a problem
                    line_no += 1
                    continue
                if not take(raw, line_no, offset, complete, new):
                    break  # re-read it next time: it may still be being written
                offset += n
                line_no += 1
            self.scanned_to = offset
            self._next_line = line_no
        self.records.extend(new)
        return new

    def _take(self, raw: bytes, line_no: int, offset: int, complete: bool, new: list[Record]) -> bool:
        """Decode one line (its newline included, when it has one) into its record; False for a last line that is not
        whole yet (no newline, and not JSON: it may still be being written), which is left to be read again. A partial
        index keeps a whole last line without a newline only when it holds a needle."""
        n = len(raw)
        if complete:
            length = n - 2 if n > 1 and raw[-2] == 13 else n - 1
        else:
            length = n - 1 if n and raw[-1] == 13 else n
        if not n or not (raw[0] == 123 or (length > 0 and not raw.isspace())):
            return True
        try:
            obj = orjson.loads(raw)
            if obj.__class__ is not dict:
                raise LineError(f"not a JSON object (a {type(obj).__name__})")
            note = None
        except (orjson.JSONDecodeError, LineError, RecursionError):
            try:
                obj, note = decode_line(raw)
            except LineError as exc:
                if not complete:
                    self.problems.append(Problem(line_no, offset, INCOMPLETE_TAIL))
                    return False
                self.problems.append(Problem(line_no, offset, str(exc)))
                return True
        if not complete and self.only is not None and not _holds_in(raw, self.only):
            return True  # a whole last line without a newline that this partial index does not keep
        if note:
            self.problems.append(Problem(line_no, offset, note, skipped=False))
        rec = index_record(obj, line_no, offset, length)
        if rec.extra is not None:
            self._absorb(rec)
        new.append(rec)
        return True

    def _update_marked(self, size: int, only: tuple[bytes, ...], new: list[Record]) -> None:
        """A partial index's pass (`only`): the file is read a chunk at a time into one buffer and searched for the
        needles with the C library's memmem, from one hit to the next; the lines between are only counted (a newline
        search, no copy), and a line holding a needle is copied and decoded. The same records and problems as the
        line-by-line pass, at the speed of memmem (bench/cost.py: most of a root's bytes are tool results, in lines
        no cost reads). A line longer than the chunk is read on, a chunk at a time, to its end; the last line, when
        it has no newline, is decoded (and left to be read again when it is not JSON yet: it may still be being
        written, and the needle may be in the part not written yet)."""
        import ctypes

        memmem = _memmem()
        cap, chunk = MAX_LINE, MARKED_CHUNK
        overlap = max(len(x) for x in only) - 1
        buf = _chunk_buffer(chunk)
        mv = memoryview(buf)
        cbuf = ctypes.c_char.from_buffer(buf)
        addr = ctypes.addressof(cbuf)
        problems = self.problems
        take = self._take
        no_hit = 1 << 62
        fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            pos, line_no = self.scanned_to, self._next_line
            if pos == 0 and os.pread(fd, 3, 0) == b"\xef\xbb\xbf":
                pos = self.scanned_to = 3  # a UTF-8 byte order mark (an editor's save): not part of the first record
            with gc_paused():
                while pos < size:
                    n = _read_into(fd, mv, pos, size)
                    if n <= 0:
                        break
                    end = buf.rfind(b"\n", 0, n)  # the last newline: the lines wholly in the chunk end there
                    if end < 0:  # one line longer than the chunk, or the last line without its newline
                        pos, line_no, go_on = self._long_line(fd, mv, addr, pos, size, line_no, only, overlap, new)
                        if not go_on:
                            break
                        continue
                    stop = end + 1
                    hits = []
                    for needle in only:
                        r = memmem(addr, stop, needle, len(needle))
                        hits.append(r - addr if r else no_hit)
                    find, rfind = buf.find, buf.rfind
                    i = 0
                    while i < stop:
                        h = min(hits)
                        upto = stop if h == no_hit else rfind(b"\n", i, h) + 1 or i  # the hit's line starts here
                        while i < upto:  # lines without a needle: counted, and any too long reported
                            e = find(b"\n", i, upto)
                            if e - i > cap:  # its bytes but the newline (a carriage return counts, as readline's)
                                problems.append(_too_long(line_no, pos + i, e - i, cap))
                            line_no += 1
                            i = e + 1
                        if h == no_hit:
                            break
                        e = find(b"\n", h, stop)
                        if e - i > cap:
                            problems.append(_too_long(line_no, pos + i, e - i, cap))
                        else:
                            take(bytes(mv[i : e + 1]), line_no, pos + i, True, new)
                        line_no += 1
                        i = e + 1
                        for k, needle in enumerate(only):
                            if hits[k] < i:
                                r = memmem(addr + i, stop - i, needle, len(needle)) if i < stop else 0
                                hits[k] = r - addr if r else no_hit
                    pos += stop
        finally:
            os.close(fd)
            del cbuf
        self.scanned_to = pos
        self._next_line = line_no

    def _long_line(
        self,
        fd: int,
        mv: memoryview,
        addr: int,
        pos: int,
        size: int,
        line_no: int,
        only: tuple[bytes, ...],
        overlap: int,
        new: list[Record],
    ) -> tuple[int, int, bool]:
        """A line that starts at `pos` and has no newline in the chunk read there: read on to its end, a chunk at a
        time (each overlapping the last by a needle's length less one), keeping none of it; then decoded when it holds
        a needle or is the file's last line without a newline. (the next line's start, its number, False when it is
        to be read again later)."""
        memmem = _memmem()
        buf = mv.obj
        assert isinstance(buf, bytearray)
        p, found, end = pos, False, -1
        while True:
            n = _read_into(fd, mv, p, size)
            if n <= 0:
                break
            nl = buf.find(b"\n", 0, n)
            stop = nl if nl >= 0 else n
            if not found:
                found = any(memmem(addr, stop, x, len(x)) for x in only)
            if nl >= 0:
                end = p + nl
                break
            if p + n >= size:
                break
            p += max(n - overlap, 1)
        complete = end >= 0
        last = end if complete else size  # the line's end (its newline, or the file's end)
        content = last - pos
        if content > MAX_LINE:
            self.problems.append(_too_long(line_no, pos, content, MAX_LINE))
            return (last + 1 if complete else size), line_no + 1, True
        if found or not complete:
            raw = os.pread(fd, last + 1 - pos if complete else last - pos, pos)
            if not self._take(raw, line_no, pos, complete, new):
                return pos, line_no, False
        return (last + 1 if complete else size), line_no + 1, True

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
