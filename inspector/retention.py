"""Claude Code's cleanup, and an archive that outlives it.

Claude Code deletes, when it starts, the transcripts (and tool-results files) whose modification time is older
than `cleanupPeriodDays` days (default 30; §1.5). `Retention` reads that setting where Claude Code does (the
managed settings over the user's) and says when each session falls due. `archive()` copies sessions with their
folders (subagents, tool results, memory) and their flat agent files into a folder laid out like a projects root,
verified by hash, only what is new or grown, never touching an original; `inspector DIR` browses it.
"""

from __future__ import annotations

import errno
import hashlib
import os
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Mapping

import orjson

DEFAULT_DAYS = 30
SOON_DAYS = 7  # "at risk": falls due within this many days
OFF_DAYS = 36_500  # a period of a century or more is cleanup turned off, in effect
TMP_PREFIX = ".inspector-archive-"  # a copy in progress: never a name that a browser lists (not *.jsonl)


def managed_settings_path() -> Path:
    if sys.platform == "darwin":
        return Path("/Library/Application Support/ClaudeCode/managed-settings.json")
    if sys.platform.startswith("win"):
        return Path(os.environ.get("PROGRAMDATA", r"C:\ProgramData")) / "ClaudeCode" / "managed-settings.json"
    return Path("/etc/claude-code/managed-settings.json")


def _days(v: Any) -> int | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v < 0:
        return None
    return int(v)


@dataclass(frozen=True, slots=True)
class Retention:
    days: int | None  # None: cleanup is off, in effect
    source: str  # where the number came from

    @classmethod
    def read(cls, env: Mapping[str, str] | None = None, config_dir: Path | None = None,
             managed: Path | None = None) -> "Retention":
        """`cleanupPeriodDays` as Claude Code reads it: managed settings win over the user's settings.json."""
        env = os.environ if env is None else env
        home = config_dir or (Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else
                              Path(os.path.expanduser("~")) / ".claude")
        for path in (managed or managed_settings_path(), home / "settings.json"):
            try:
                data = orjson.loads(path.read_bytes()[: 8 << 20])
            except (OSError, orjson.JSONDecodeError):
                continue
            d = _days(data.get("cleanupPeriodDays")) if isinstance(data, dict) else None
            if d is not None:
                return cls(None if d >= OFF_DAYS else d, f"cleanupPeriodDays {d} in {path}")
        return cls(DEFAULT_DAYS, f"Claude Code's default of {DEFAULT_DAYS} days (no cleanupPeriodDays in its settings)")

    def due(self, path: Path | str) -> datetime | None:
        """When Claude Code's cleanup deletes this file (its mtime + the period), or None when cleanup is off."""
        if self.days is None:
            return None
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            return None
        return datetime.fromtimestamp(mtime, timezone.utc) + timedelta(days=self.days)

    def risk(self, path: Path, now: datetime | None = None) -> str | None:
        """"next start" (already past its date: the next start of Claude Code deletes it), "soon" (within 7 days),
        or None."""
        d = self.due(path)
        if d is None:
            return None
        now = now or datetime.now(timezone.utc)
        if d <= now:
            return "next start"
        return "soon" if d <= now + timedelta(days=SOON_DAYS) else None


# ---------------------------------------------------------------------------------------------
# the archive


class ArchiveError(Exception):
    """One clear reason the archive could not be written (nothing partial is left visible)."""


@dataclass(slots=True)
class ArchiveReport:
    to: Path
    copied: list[Path] = field(default_factory=list)  # archive paths written (new or grown)
    unchanged: int = 0
    sessions: int = 0
    bytes: int = 0
    warnings: list[str] = field(default_factory=list)


def _sha256_copy(src: Path, dst_tmp: Path) -> str:
    """Copy `src` to a new file `dst_tmp`, return the sha256 of what was read."""
    h = hashlib.sha256()
    fd = os.open(dst_tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with open(src, "rb") as fin, os.fdopen(fd, "wb") as fout:
            fd = -1
            while True:
                chunk = fin.read(1 << 20)
                if not chunk:
                    break
                h.update(chunk)
                fout.write(chunk)
            fout.flush()
            os.fsync(fout.fileno())
    finally:
        if fd != -1:
            os.close(fd)
    return h.hexdigest()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _session_files(session: Path, flat_agents: list[Path]) -> list[Path]:
    """The transcript, what lies in its folder (subagents, tool results, memory; never through a link), its flat
    agent files."""
    from inspector.transcript.safefs import walk_files

    return [session, *walk_files(session.parent, session.with_suffix("")), *flat_agents]


def archive(target: Any, to: Path, *, progress: Callable[[int, int], None] | None = None,
            only: set[Path] | None = None) -> ArchiveReport:
    """Copy every session under `target` into `to` (as `<to>/<project folder>/...`): new or grown files only,
    each verified by hash before it takes its name. Raises ArchiveError (a full disk, a read-only target...)."""
    from inspector.transcript.discovery import session_files
    from inspector.transcript.stats import orphan_agents, own_agents

    to = Path(to).expanduser()
    try:
        to.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ArchiveError(f"cannot create {to}: {exc.strerror or exc}") from None
    if not os.access(to, os.W_OK):
        raise ArchiveError(f"{to} is not writable")
    files = session_files(target)
    rep = ArchiveReport(to.resolve())
    base = Path(target.path) if target.kind != "file" else Path(target.path).parent
    try:
        if os.stat(base).st_dev == os.stat(to).st_dev:
            rep.warnings.append(f"{to} is on the same disk as the transcripts: a failure of that disk loses both")
    except OSError:
        pass
    resolved_to = to.resolve()
    owners: dict[Path, str | None] = {}
    plan: list[tuple[Path, Path]] = []  # (source, archive path)
    for path, agents in files + [(a, []) for a in orphan_agents(files)]:
        if only is not None and path not in only:
            continue
        project = path.parent
        if resolved_to == project.resolve() or project.resolve() in resolved_to.parents or resolved_to in project.resolve().parents:
            raise ArchiveError(f"{to} overlaps the transcripts it would archive ({project}): choose a folder outside them")
        mine = own_agents(path, agents, owners) if agents else []
        rep.sessions += 1
        for f in _session_files(path, mine):
            plan.append((f, to / project.name / f.relative_to(project)))
    for n, (src, dst) in enumerate(plan):
        if progress:
            progress(n, len(plan))
        try:
            st = os.stat(src)
        except OSError:
            continue  # gone meanwhile
        try:
            dst_st = os.stat(dst)
            if dst_st.st_size == st.st_size and int(dst_st.st_mtime) == int(st.st_mtime):
                rep.unchanged += 1
                continue
        except OSError:
            pass
        tmp = dst.parent / f"{TMP_PREFIX}{os.getpid()}-{dst.name}"
        try:
            dst.parent.mkdir(parents=True, exist_ok=True)
            digest = _sha256_copy(src, tmp)
            if _sha256(tmp) != digest:
                raise ArchiveError(f"the copy of {src} does not match it (a disk error?): not kept")
            os.utime(tmp, (st.st_atime, st.st_mtime))
            os.replace(tmp, dst)  # the archive's own older copy of a grown file, never an original
        except OSError as exc:
            _unlink(tmp)
            if exc.errno == errno.ENOSPC:
                raise ArchiveError(f"the disk of {to} is full: {len(rep.copied)} file(s) archived, {src.name} and the rest not "
                                   "(nothing partial was left)") from None
            if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise ArchiveError(f"cannot write in {dst.parent}: {exc.strerror}") from None
            raise ArchiveError(f"{src}: {exc.strerror or exc}") from None
        except BaseException:
            _unlink(tmp)
            raise
        rep.copied.append(dst)
        rep.bytes += st.st_size
    _sweep(to)
    return rep


def _unlink(p: Path) -> None:
    try:
        p.unlink()
    except OSError:
        pass


def _sweep(to: Path, older_than: float = 600.0) -> None:
    """Copies left behind by an archive that was killed (they never had a visible name): removed once they have not
    been written to for ten minutes (a copy another archive is making keeps changing)."""
    import time

    try:
        for p in to.rglob(f"{TMP_PREFIX}*"):
            try:
                if time.time() - p.stat().st_mtime > older_than:
                    _unlink(p)
            except OSError:
                continue
    except OSError:
        pass


__all__ = ["ArchiveError", "ArchiveReport", "Retention", "archive"]
