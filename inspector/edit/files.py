"""How inspector writes files: atomically and never over an existing one, and how it cleans up after itself.

Every file is written to a temporary file beside its target (`.inspector-<pid>-<random>.tmp`), fsynced, then
hard-linked to its final name, which fails rather than overwrite; the folder is synced after. A new session's folder
carries a marker until its transcript is in place, so that an interrupted save is recognised and removed (only
inspector's own temporaries and folders, only once their process is gone). Every change to the disk goes through
`DISK`, so that a test can stop a save after any one of them.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from inspector.transcript.discovery import InspectorError
from inspector.transcript.safefs import open_regular


class SaveError(InspectorError):
    flag: str | None = None  # the command-line flag that overrides this refusal, if any


class RefusedSave(SaveError):
    def __init__(self, message: str, flag: str) -> None:
        super().__init__(message)
        self.flag = flag


TMP_PREFIX = ".inspector-"  # our temporary files: .inspector-<pid>-<random>.tmp
INCOMPLETE = ".inspector-incomplete"  # in a new session's folder until its transcript is in place
STALE_AFTER = 24 * 3600  # a temporary of a process that may still run is removed after a day


def _file_mode() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


FILE_MODE = _file_mode()


class _Disk:
    """Every change a save makes to the disk goes through here, in order (the kill test stops at each)."""

    def mkdir(self, path: Path) -> None:
        os.mkdir(path)

    def temp(self, folder: Path) -> tuple[int, str]:
        fd, name = tempfile.mkstemp(dir=folder, prefix=f"{TMP_PREFIX}{os.getpid()}-", suffix=".tmp")
        try:  # a new file's usual mode (0644 under the usual umask), as Claude Code's own files have, not mkstemp's 0600
            os.fchmod(fd, FILE_MODE)
        except OSError:
            pass
        return fd, name

    def write(self, f: Any, data: bytes) -> None:
        f.write(data)

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def link(self, src: str, dst: Path) -> None:
        os.link(src, dst)

    def unlink(self, path: str | Path) -> None:
        os.unlink(path)

    def rmdir(self, path: Path) -> None:
        os.rmdir(path)

    def rename(self, src: Path, dst: Path) -> None:
        os.rename(src, dst)

    def tempdir(self, folder: Path) -> Path:
        return Path(tempfile.mkdtemp(dir=folder, prefix=f"{TMP_PREFIX}{os.getpid()}-", suffix=".tmp"))

    def marker(self, path: Path) -> None:
        """The incomplete-session marker, created (never replaced) with our process id in it."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            os.write(fd, str(os.getpid()).encode())
        finally:
            os.close(fd)


DISK = _Disk()


def write_atomic(target: Path, chunks: Iterable[bytes], *, fsync: Callable[[int], None] | None = None) -> None:
    """Write to a temporary file beside `target`, fsync, then link it to `target`.

    The link fails if `target` exists, so nothing is ever overwritten; on any error the
    temporary file is removed and `target` does not exist. The folder must exist.
    """
    sync = fsync or DISK.fsync
    try:
        fd, tmp = DISK.temp(target.parent)
    except OSError as exc:
        raise SaveError(f"could not write in {target.parent}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            buf: list[bytes] = []
            held = 0
            for c in chunks:  # written in blocks of about a megabyte, not a call per record
                buf.append(c)
                held += len(c)
                if held >= 1 << 20:
                    DISK.write(f, b"".join(buf))
                    buf, held = [], 0
            if buf:
                DISK.write(f, b"".join(buf))
            f.flush()
            sync(f.fileno())
        DISK.link(tmp, target)
    except FileExistsError:
        raise SaveError(f"{target} already exists; nothing was overwritten") from None
    except SaveError:
        raise
    except OSError as exc:
        raise SaveError(f"could not write {target}: {exc.strerror or exc}") from None
    finally:
        try:
            DISK.unlink(tmp)
        except OSError:
            pass
    _sync_dir(target.parent, sync)


def _sync_dir(folder: Path, sync: Callable[[int], None] | None = None) -> None:
    try:
        dfd = os.open(folder, os.O_RDONLY)
        try:
            (sync or DISK.fsync)(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


class ReadError(SaveError):
    """A file the save had to copy could not be read (the source, not the destination, failed)."""


def copy_atomic(src: Path, target: Path) -> str:
    """Copy `src` byte for byte (never through a link) to `target`, atomically; returns the sha256 of what was copied."""
    digest = hashlib.sha256()

    def chunks() -> Iterable[bytes]:
        try:
            f = open_regular(src)
        except OSError as exc:
            raise ReadError(f"could not read {src}: {exc.strerror or exc}") from None
        with f:
            while True:
                try:
                    b = f.read(1 << 20)
                except OSError as exc:
                    raise ReadError(f"could not read {src}: {exc.strerror or exc}") from None
                if not b:
                    return
                digest.update(b)
                yield b

    write_atomic(target, chunks())
    return digest.hexdigest()


def sha256_of(path: Path) -> str | None:
    h = hashlib.sha256()
    try:
        with open_regular(path) as f:
            for b in iter(lambda: f.read(1 << 20), b""):
                h.update(b)
    except OSError:
        return None
    return h.hexdigest()


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, owned by someone else
    return True


def _ours_and_stale(name: str, mtime: float, now: float) -> bool:
    """A temporary file or marker of a save that can no longer finish: its process is gone, or it is a day old."""
    m = re.match(rf"^{re.escape(TMP_PREFIX)}(\d+)-.*\.tmp$", name)
    if m is None:
        return False
    return not _pid_alive(int(m.group(1))) or now - mtime > STALE_AFTER


def clean_stale(project_dir: Path) -> list[Path]:
    """Remove what an interrupted save of ours left in a project folder: temporary files, and the folders of new
    sessions whose transcript never appeared (they carry our marker). Nothing else is ever touched."""
    removed: list[Path] = []
    now = time.time()
    try:
        entries = list(os.scandir(project_dir))
    except OSError:
        return removed
    for e in entries:
        try:
            if e.is_file(follow_symlinks=False) and _ours_and_stale(e.name, e.stat(follow_symlinks=False).st_mtime, now):
                os.unlink(e.path)
                removed.append(Path(e.path))
            elif e.is_dir(follow_symlinks=False) and _ours_and_stale(e.name, e.stat(follow_symlinks=False).st_mtime, now):
                removed += _remove_our_folder(Path(e.path))  # a new session's folder still being filled
            elif e.is_dir(follow_symlinks=False):
                marker = Path(e.path) / INCOMPLETE
                if marker.is_file() and not marker.is_symlink():
                    pid, age = _marker_pid(marker), now - marker.stat().st_mtime
                    if (pid is None and age > 60) or (pid is not None and not _pid_alive(pid)) or age > STALE_AFTER:
                        if (project_dir / f"{e.name}.jsonl").exists():  # killed just after it was whole
                            os.unlink(marker)
                            removed.append(marker)
                        else:
                            removed += _remove_our_folder(Path(e.path))
        except OSError:
            continue
    return removed


def _marker_pid(marker: Path) -> int | None:
    try:
        return int(marker.read_text()[:20].strip())
    except (OSError, ValueError):
        return None


def _remove_our_folder(folder: Path) -> list[Path]:
    """The folder of a new session we began and never finished: our copies in tool-results/, subagents/ and
    session-memory/, our temporaries, the marker, then the (now empty) folders. A folder holding anything
    else is left alone."""
    removed: list[Path] = []
    subs = [folder / "tool-results", folder / "subagents", folder / "session-memory"]
    known = {p.name for p in subs} | {INCOMPLETE}
    try:
        if any(n not in known and not n.startswith(TMP_PREFIX) for n in os.listdir(folder)):
            return removed
        for d in subs:
            if d.is_dir() and not d.is_symlink():
                for e in os.scandir(d):
                    if e.is_file(follow_symlinks=False):
                        os.unlink(e.path)
                        removed.append(Path(e.path))
                os.rmdir(d)
        for n in os.listdir(folder):
            if n.startswith(TMP_PREFIX) or n == INCOMPLETE:
                os.unlink(folder / n)
                removed.append(folder / n)
        os.rmdir(folder)
        removed.append(folder)
    except OSError:
        pass
    return removed
