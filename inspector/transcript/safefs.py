"""Reading what lies beside a transcript without ever following a link out of it.

A session's folder (`<project>/<session>/`) holds its persisted tool results, subagent transcripts and notes.
It is untrusted: any part of it can be a symbolic link to somewhere else (`tool-results -> /etc`), a folder can
be a thousand levels deep, and a file can be swapped for a link between a check and a read. The rule here:
below the project folder nothing is read through a link, at any depth; the session folder itself must be a real
folder inside the project folder; walks are iterative and bounded; files are opened with O_NOFOLLOW and must be
regular files. The project folder and above are the user's own choice (a `~/.claude` that is a link to a
dotfiles folder is fine) and are not judged.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

MAX_DEPTH = 16  # folders below a session folder that are looked into (workflow folders are 2-3 deep)
MAX_FILES = 100_000  # files listed from one session folder
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _lstat_below(base: Path, path: Path) -> os.stat_result | None:
    """The lstat of `path` when every component of it below `base` exists and none is a symbolic link (or `..`)."""
    b, p = os.fspath(base), os.fspath(path)  # both normalised by pathlib: compared as strings (pathlib's costs 10×)
    prefix = b if b.endswith(os.sep) else b + os.sep
    if p == b:
        try:
            return os.lstat(p)
        except (OSError, ValueError):
            return None
    if not p.startswith(prefix):
        return None
    cur = b
    st = None
    for part in p[len(prefix) :].split(os.sep):
        if part in ("", ".", ".."):
            return None
        cur = os.path.join(cur, part)
        try:
            st = os.lstat(cur)
        except (OSError, ValueError):
            return None
        if stat.S_ISLNK(st.st_mode):
            return None
    return st


def real_dir(base: Path, path: Path) -> bool:
    """`path` is a folder below `base` reached without any link."""
    st = _lstat_below(base, path)
    return st is not None and stat.S_ISDIR(st.st_mode)


def real_file(base: Path, path: Path) -> bool:
    """`path` is a regular file below `base` reached without any link."""
    st = _lstat_below(base, path)
    return st is not None and stat.S_ISREG(st.st_mode)


FILE, DIR = 1, 2  # the kinds of entries a listing keeps (a link, or anything else, is never followed nor read)


def scan_dir(d: str) -> list[tuple[str, int]]:
    """(name, FILE or DIR) of the regular files and folders directly in `d`, links left out; [] when unreadable."""
    try:
        with os.scandir(d) as it:
            return [
                (e.name, FILE if e.is_file(follow_symlinks=False) else DIR)
                for e in it
                if not e.is_symlink() and (e.is_file(follow_symlinks=False) or e.is_dir(follow_symlinks=False))
            ]
    except OSError:
        return []


def list_files(base: Path, folder: Path) -> list[Path]:
    """The regular files directly in `folder` (a real folder below `base`), no links, sorted."""
    if not real_dir(base, folder):
        return []
    try:
        with os.scandir(folder) as it:
            return sorted(Path(e.path) for e in it if e.is_file(follow_symlinks=False))
    except OSError:
        return []


def walk_files(base: Path, folder: Path, *, max_depth: int = MAX_DEPTH, limit: int = MAX_FILES) -> list[Path]:
    """The regular files under `folder` (a real folder below `base`), never through a link, at most `max_depth`
    folders down and `limit` files (iterative: an untrusted depth never exhausts the stack), sorted."""
    root = os.fspath(folder)
    return [Path(root, rel) for rel, _st in walk_stat(base, folder, max_depth=max_depth, limit=limit)]


def walk_stat(
    base: Path,
    folder: Path,
    *,
    max_depth: int = MAX_DEPTH,
    limit: int = MAX_FILES,
    opaque: tuple[str, ...] = (),
    listed: bool = False,
) -> list[tuple[str, os.stat_result]]:
    """`walk_files` as (path relative to `folder`, its lstat), in the same order, without a Path per file. A folder
    directly in `folder` named in `opaque` is not looked into: it is listed itself, as `name/` with its own lstat.
    `listed`: `folder` is directly in `base` and `scan_dir(base)` just listed it as a folder (not a link): it is not
    looked at again."""
    if not (listed and os.path.dirname(os.fspath(folder)) == os.fspath(base)) and not real_dir(base, folder):
        return []
    root = os.fspath(folder)
    out: list[tuple[str, os.stat_result]] = []
    stack: list[tuple[str, int]] = [(root, 0)]
    cut = len(root) + 1
    while stack and len(out) < limit:
        d, depth = stack.pop()
        try:
            with os.scandir(d) as it:
                entries = list(it)
        except OSError:
            continue
        for e in entries:
            try:
                if e.is_symlink():
                    continue
                if e.is_dir(follow_symlinks=False):
                    if depth == 0 and e.name in opaque:
                        out.append((e.name + os.sep, e.stat(follow_symlinks=False)))
                    elif depth < max_depth:
                        stack.append((e.path, depth + 1))
                elif e.is_file(follow_symlinks=False):
                    out.append((e.path[cut:], e.stat(follow_symlinks=False)))
            except OSError:
                continue
    out = out[:limit]
    out.sort(key=lambda t: t[0].split(os.sep))  # pathlib's order: part by part
    return out


def stat_signature(
    folder: Path | None, beside: Iterable[Path] = (), *, opaque: tuple[str, ...] = (), listed: bool = False
) -> list[list[Any]]:
    """[name, size, mtime] of every file under a session's `folder` (None: it has none), walked as `walk_stat` walks
    it, then of each of the files `beside` it (its flat agent files; one gone is left out): what a cached result
    made from a session and the files around it is checked against (the stats, the token report)."""
    sig: list[list[Any]] = (
        []
        if folder is None
        else [[rel, st.st_size, st.st_mtime_ns] for rel, st in walk_stat(folder.parent, folder, opaque=opaque, listed=listed)]
    )
    for p in beside:
        try:
            st = p.stat()
        except OSError:
            continue
        sig.append([p.name, st.st_size, st.st_mtime_ns])
    return sig


def open_regular(path: Path) -> BinaryIO:
    """Open a file for reading, refusing a link in its last component and anything but a regular file."""
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(f"{path} is not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
