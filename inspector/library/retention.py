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
import math
import os
import stat
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO

import orjson

DEFAULT_DAYS = 30
SOON_DAYS = 7  # "at risk": falls due within this many days
OFF_DAYS = 36_500  # a period of a century or more is cleanup turned off, in effect
TMP_PREFIX = ".inspector-archive-"  # a copy in progress: never a name that a browser lists (not *.jsonl)


def managed_settings_dir() -> Path:
    """Where Claude Code reads managed settings (`managed-settings.json` and the `managed-settings.d/` drop-ins), by
    platform (2.1.88's managedPath.ts)."""
    if sys.platform == "darwin":
        return Path("/Library/Application Support/ClaudeCode")
    if sys.platform.startswith("win"):
        return Path(r"C:\Program Files\ClaudeCode")
    return Path("/etc/claude-code")


def _days(v: Any) -> int | None:
    """A valid `cleanupPeriodDays` (the settings schema: a whole number ≥ 0), else None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 or v != int(v):
        return None
    return int(v)


# The rules by the release that runs the cleanup (the one the user starts next), read from each binary:
# 2.1.88 (src/utils/cleanup.ts): cutoff = now - cleanupPeriodDays (0: every transcript is old); skipped only when
#   a settings file has a validation error and some file sets the key.
# 2.1.328: 0 turns the sweep off (`if(s===0)return null`); a settings file that cannot be parsed skips the sweep
#   (cleanupPeriodDays "may be set to a value that cannot be seen"); managed settings that set the key run it first.
# 2.1.332 adds: an empty user settings.json written within the last 30 days skips it (a settings file caught
#   mid-write); managed settings not read in full skip it; ANTHROPIC_PROFILE naming a profile with no credential
#   skips it (remote managed settings unknowable).
RULES = ("2.1.88", "2.1.328", "2.1.332")


def cleanup_rules(release: str | None) -> str:
    """Which measured release's cleanup rules apply to a Claude Code release (None: the newest measured)."""
    from inspector.claude.release import parse_version

    v = parse_version(release)
    if v is None:
        return RULES[-1]
    return next((r for r in reversed(RULES) if v >= parse_version(r)), RULES[0])  # type: ignore[operator]


def newest_release(versions: Iterable[str | None]) -> str | None:
    """The newest Claude Code release among the sessions' versions: the one the user runs, whose cleanup comes next."""
    from inspector.claude.release import parse_version

    best = max(((v, s) for s in versions if (v := parse_version(s)) is not None), default=None)
    return best[1] if best else None


@dataclass(frozen=True, slots=True)
class _Layer:
    name: str  # "user settings", "project settings"...
    path: Path
    state: str  # "absent", "read", "unreadable", "unparsed", "empty"
    data: dict[str, Any] = field(default_factory=dict)
    mtime: float = 0.0

    @property
    def has_key(self) -> bool:
        return "cleanupPeriodDays" in self.data

    def where(self) -> str:
        return f"{self.name} ({self.path})"


def _read_layer(name: str, path: Path) -> _Layer:
    try:
        st = os.stat(path)
        raw = path.read_bytes()[: 8 << 20]
    except (FileNotFoundError, NotADirectoryError):
        return _Layer(name, path, "absent")
    except OSError:
        return _Layer(name, path, "unreadable")
    if not raw.strip():
        return _Layer(name, path, "empty", mtime=st.st_mtime)
    try:
        data = orjson.loads(raw.removeprefix(b"\xef\xbb\xbf"))
    except orjson.JSONDecodeError:
        return _Layer(name, path, "unparsed", mtime=st.st_mtime)
    if not isinstance(data, dict):
        return _Layer(name, path, "unparsed", mtime=st.st_mtime)
    return _Layer(name, path, "read", data, st.st_mtime)


def settings_layers(
    env: Mapping[str, str] | None = None, config_dir: Path | None = None, managed: Path | None = None, cwd: Path | None = None
) -> list[_Layer]:
    """Every settings file Claude Code started in `cwd` reads for cleanupPeriodDays, lowest precedence first: user,
    project (`.claude/settings.json`), local project (`.claude/settings.local.json`), then managed (the cached
    remote managed settings when they have content, else `managed-settings.json` with its `managed-settings.d/`
    drop-ins in name order). A file met twice (Claude Code started in its own config folder's parent) counts once."""
    from inspector.transcript.discovery import config_dir as claude_config_dir

    env = os.environ if env is None else env
    home = config_dir or claude_config_dir(env)
    cwd = Path.cwd() if cwd is None else cwd
    mdir = managed or managed_settings_dir()
    layers: list[_Layer] = []
    seen: set[Path] = set()
    for name, path in (
        ("user settings", home / "settings.json"),
        ("project settings", cwd / ".claude" / "settings.json"),
        ("local project settings", cwd / ".claude" / "settings.local.json"),
    ):
        key = path.absolute()
        if key not in seen:
            seen.add(key)
            layers.append(_read_layer(name, path))
    remote = _read_layer("remote managed settings", home / "remote-settings.json")
    if remote.state == "read" and remote.data:
        layers.append(remote)  # the first managed source with content wins, the server's first
        return layers
    layers.append(_read_layer("managed settings", mdir / "managed-settings.json"))
    try:
        drop_ins = sorted(n for n in os.listdir(mdir / "managed-settings.d") if n.endswith(".json") and not n.startswith("."))
    except OSError:
        drop_ins = []
    layers += [_read_layer("managed settings", mdir / "managed-settings.d" / n) for n in drop_ins]
    return layers


@dataclass(frozen=True, slots=True)
class Retention:
    days: int | None  # None: Claude Code's cleanup deletes nothing (off, or skipped; `skipped` says which)
    source: str  # where the number came from, or why there is none
    skipped: str | None = None  # why the release's cleanup would not run at all
    rules: str = RULES[-1]  # the release whose cleanup rules were applied
    notes: tuple[str, ...] = ()  # what could change the answer that inspector cannot see
    layers: tuple[_Layer, ...] = ()  # the settings files read for it, lowest precedence first

    @classmethod
    def read(
        cls,
        env: Mapping[str, str] | None = None,
        config_dir: Path | None = None,
        managed: Path | None = None,
        cwd: Path | None = None,
        release: str | None = None,
    ) -> Retention:
        """`cleanupPeriodDays` as the given Claude Code release, started in `cwd`, reads it from every settings
        layer (the later layer wins; managed settings over all), and whether that release would skip its cleanup."""
        env = os.environ if env is None else env
        rules = cleanup_rules(release)
        era = RULES.index(rules)  # 0: 2.1.88's rules, 1: 2.1.328's, 2: 2.1.332's
        layers = settings_layers(env, config_dir, managed, cwd)
        notes = ["a --settings file or --setting-sources given to Claude Code is not seen here"]
        if release is not None and release not in RULES and era < len(RULES) - 1:
            notes.append(
                f"the cleanup of {release} was not read: the rules of {rules}, the newest release read before it, are applied"
            )
        if era >= 1:
            notes.append(
                f"with a sign-in that has server-managed settings, Claude Code {rules} skips its cleanup while it "
                "holds none of them (its request failed or has not finished)"
            )
        if era >= 2 and env.get("ANTHROPIC_PROFILE"):
            notes.append(
                "ANTHROPIC_PROFILE is set: if it names a profile with no credential, Claude Code "
                f"{rules} skips its cleanup (the sign-in's managed settings cannot be read)"
            )
        setting = next((ly for ly in reversed(layers) if ly.has_key), None)
        policy = next((ly for ly in layers if "managed" in ly.name and ly.has_key), None)
        invalid = next((ly for ly in layers if ly.has_key and _days(ly.data["cleanupPeriodDays"]) is None), None)
        broken = [ly for ly in layers if ly.state in ("unparsed", "unreadable")]

        def made(days: int | None, source: str, skipped: str | None = None) -> Retention:
            return cls(days, source, skipped, rules, tuple(notes), tuple(layers))

        def skip(why: str) -> Retention:
            return made(None, f"cleanup skipped: {why}", why)

        if invalid is not None:  # a validation error, and the key is set: every release skips
            return skip(
                f"cleanupPeriodDays in {invalid.where()} is not a whole number of days ≥ 0; Claude Code {rules} "
                "skips its cleanup until the settings are fixed"
            )
        if policy is None and era >= 1:  # managed settings that set the key run the sweep before these
            user = layers[0]
            if (
                era >= 2
                and setting is None
                and user.state == "empty"
                and time.time() - DEFAULT_DAYS * 86400 < user.mtime <= time.time()
            ):
                return skip(
                    f"the user settings file {user.path} is empty and was written in the last {DEFAULT_DAYS} "
                    f"days; Claude Code {rules} skips its cleanup (a settings file caught mid-write)"
                )
            if era >= 2 and any("managed" in ly.name and ly.state == "unreadable" for ly in broken):
                bad = next(ly for ly in broken if "managed" in ly.name)
                return skip(
                    f"{bad.where()} cannot be read; Claude Code {rules} skips its cleanup while managed settings "
                    "are not read in full"
                )
            if broken:
                return skip(
                    f"{broken[0].where()} cannot be {'read' if broken[0].state == 'unreadable' else 'parsed'}, so "
                    f"cleanupPeriodDays may be set there; Claude Code {rules} skips its cleanup until it is fixed"
                )
        elif era == 0 and broken and setting is not None:
            return skip(
                f"{broken[0].where()} has errors and cleanupPeriodDays is set in {setting.where()}; Claude Code "
                f"{rules} skips its cleanup until the settings are fixed"
            )
        if setting is None:
            return made(DEFAULT_DAYS, f"Claude Code's default of {DEFAULT_DAYS} days (no cleanupPeriodDays in its settings)")
        d = _days(setting.data["cleanupPeriodDays"])
        assert d is not None
        said = f"cleanupPeriodDays {d} from {setting.where()}"
        if d == 0:
            if era == 0:
                return made(0, f"{said}: Claude Code {rules} deletes every transcript when it starts")
            return made(None, f"{said}: Claude Code {rules} turns its cleanup off")
        return made(None if d >= OFF_DAYS else d, said)

    def describe(self) -> str:
        """Where the period comes from (or why there is none) and whose rules say so."""
        return f"{self.source}; the cleanup rules of Claude Code {self.rules}"

    def due(self, path: Path | str) -> datetime | None:
        """When Claude Code's cleanup deletes this file (its mtime + the period), or None when cleanup is off."""
        if self.days is None:
            return None
        try:
            return self.due_at(os.stat(path).st_mtime)
        except OSError:
            return None

    def due_at(self, mtime: float) -> datetime | None:
        """When the cleanup deletes a file of this modification time (epoch seconds), or None when it is off."""
        return None if self.days is None else datetime.fromtimestamp(mtime, UTC) + timedelta(days=self.days)

    def risk(self, path: Path, now: datetime | None = None) -> str | None:
        """ "next start" (already past its date: the next start of Claude Code deletes it), "soon" (within 7 days),
        or None."""
        return self.risk_at(self.due(path), now)

    @staticmethod
    def risk_at(due: datetime | None, now: datetime | None = None) -> str | None:
        """The risk of a file due at `due` (see `risk`), for a caller that has its date already."""
        if due is None:
            return None
        now = now or datetime.now(UTC)
        if due <= now:
            return "next start"
        return "soon" if due <= now + timedelta(days=SOON_DAYS) else None


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
    beside: list[Path] = field(default_factory=list)  # another version of an archived file, kept beside it
    skipped: list[Path] = field(default_factory=list)  # sources that could not be read (each named in a warning)


MANIFEST = ".inspector-archive.json"  # in the archive's top folder: what each copy was made from
_CHUNK = 1 << 20


class _ReadError(OSError):
    """Reading the source failed (not the archive's disk)."""


def _copy_fd(fin: BinaryIO, dst_tmp: Path) -> tuple[str, int]:
    """Copy an open source to a new file `dst_tmp` (fsynced), return the sha256 and size of what was read."""
    h = hashlib.sha256()
    n = 0
    fd = os.open(dst_tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "wb") as fout:
        while True:
            try:
                chunk = fin.read(_CHUNK)
            except OSError as exc:
                raise _ReadError(exc.errno, exc.strerror) from None
            if not chunk:
                break
            h.update(chunk)
            n += len(chunk)
            fout.write(chunk)
        fout.flush()
        os.fsync(fout.fileno())
    return h.hexdigest(), n


def _sha256(path: Path, limit: int | None = None) -> str:
    """The sha256 of a file of the archive (its first `limit` bytes), read without following a link."""
    from inspector.transcript.safefs import open_regular

    h = hashlib.sha256()
    left = limit
    with open_regular(path) as f:
        while left is None or left > 0:
            chunk = f.read(_CHUNK if left is None else min(_CHUNK, left))
            if not chunk:
                break
            h.update(chunk)
            if left is not None:
                left -= len(chunk)
    return h.hexdigest()


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _session_files(session: Path, flat_agents: list[Path]) -> list[Path]:
    """The transcript, what lies in its folder (subagents, tool results, memory; never through a link), its flat
    agent files."""
    from inspector.transcript.safefs import walk_files

    return [session, *walk_files(session.parent, session.with_suffix("")), *flat_agents]


def _stamp(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def _read_manifest(to: Path) -> dict[str, list[Any]]:
    try:
        data = orjson.loads((to / MANIFEST).read_bytes())
        files = data.get("files") if isinstance(data, dict) else None
        return (
            {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, list) and len(v) == 6}
            if isinstance(files, dict)
            else {}
        )
    except (OSError, orjson.JSONDecodeError):
        return {}


def _write_manifest(to: Path, files: dict[str, list[Any]]) -> None:
    tmp = to / f"{TMP_PREFIX}{os.getpid()}-manifest"
    try:
        with open(tmp, "wb") as f:
            f.write(orjson.dumps({"version": 1, "files": files}))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, to / MANIFEST)
    except OSError:
        _unlink(tmp)  # the manifest only saves reading: without it the next run compares contents


def _beside_name(dst: Path, st: os.stat_result) -> Path:
    """Where another version of `dst` is kept: its name with the source's time (cut to fit a file name)."""
    stamp = datetime.fromtimestamp(st.st_mtime, UTC).strftime("%Y%m%dT%H%M%SZ")
    stem, suffix = dst.stem, dst.suffix
    room = 255 - len(f".{stamp}{suffix}".encode())
    while len(stem.encode()) > room:
        stem = stem[:-1]
    return dst.with_name(f"{stem}.{stamp}{suffix}")


def projects_roots(target: Any) -> list[Path]:
    """The projects roots an archive must stay out of: Claude Code's (as the environment names it) and the one the
    sessions come from."""
    from inspector.transcript.discovery import default_projects_root

    base = Path(target.path)
    src_root = base if target.kind == "root" else base.parent if target.kind == "project" else base.parent.parent
    return [r for r in {default_projects_root(), src_root} if str(r)]


def inside(a: Path, b: Path) -> bool:
    """Whether path `a` is `b` or lies under it (both resolved by the caller)."""
    return a == b or b in a.parents


def archive(
    target: Any, to: Path | str, *, progress: Callable[[int, int], None] | None = None, only: set[Path] | None = None
) -> ArchiveReport:
    """Copy every session under `target` into `to` (as `<to>/<project folder>/...`): new or grown files only, each
    verified by hash before it takes its name. A copy is never replaced by a shorter or different one (that version
    is kept beside it, and said); nothing is read through a link; a source that cannot be read is reported and
    skipped. Raises ArchiveError (a target inside the transcripts, a full disk, a read-only target...) before
    creating anything where it can."""
    from inspector.transcript.discovery import session_files
    from inspector.transcript.safefs import open_regular
    from inspector.transcript.session import orphan_agents, own_agents

    if not str(to).strip():
        raise ArchiveError("no folder to archive into (the target is empty)")
    to = Path(to).expanduser().absolute()
    resolved_to = to.resolve()
    for root in projects_roots(target):
        rr = root.resolve()
        if inside(resolved_to, rr) or inside(rr, resolved_to):
            raise ArchiveError(f"{to} overlaps the projects root {root}: choose a folder outside it")
    files = session_files(target)
    owners: dict[Path, str | None] = {}
    plan: list[tuple[Path, Path]] = []  # (source, archive path)
    sessions = 0
    for path, agents in files + [(a, []) for a in orphan_agents(files)]:
        if only is not None and path not in only:
            continue
        project = path.parent.resolve()
        if inside(resolved_to, project) or inside(project, resolved_to):
            raise ArchiveError(f"{to} overlaps the transcripts it would archive ({path.parent}): choose a folder outside them")
        mine = own_agents(path, agents, owners) if agents else []
        sessions += 1
        for f in _session_files(path, mine):
            plan.append((f, to / path.parent.name / f.relative_to(path.parent)))
    try:
        to.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ArchiveError(f"cannot create {to}: {exc.strerror or exc}") from None
    if not os.access(to, os.W_OK):
        raise ArchiveError(f"{to} is not writable")
    rep = ArchiveReport(resolved_to, sessions=sessions)
    base = Path(target.path) if target.kind != "file" else Path(target.path).parent
    try:
        if os.stat(base).st_dev == os.stat(to).st_dev:
            rep.warnings.append(f"{to} is on the same disk as the transcripts: a failure of that disk loses both")
    except OSError:
        pass
    manifest = _read_manifest(to)
    first = dict(manifest)
    tmp = to / f"{TMP_PREFIX}{os.getpid()}-copy"  # short: a source's long name never makes it too long
    try:
        for n, (src, dst) in enumerate(plan):
            if progress:
                progress(n, len(plan))
            rel = str(dst.relative_to(to))
            try:
                fin = open_regular(src)
            except FileNotFoundError:
                continue  # gone meanwhile
            except OSError as exc:
                why = "it is a link (not followed)" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
                rep.warnings.append(f"cannot read {src}: {why}; not archived")
                rep.skipped.append(src)
                continue
            with fin:
                st = os.fstat(fin.fileno())
                known = manifest.get(rel)
                if known is not None and known[:5] == _stamp(st) and _size(dst) == known[0]:
                    rep.unchanged += 1
                    continue
                try:
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    tmp = dst.parent / f"{TMP_PREFIX}{os.getpid()}-copy"
                    _unlink(tmp)
                    digest, size = _copy_fd(fin, tmp)
                    if _sha256(tmp) != digest:
                        raise ArchiveError(f"the copy of {src} does not match it (a disk error?): not kept")
                    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
                    placed = _place(tmp, dst, digest, size, st, rep)
                except _ReadError as exc:
                    _unlink(tmp)
                    rep.warnings.append(f"cannot read {src}: {exc.strerror}; not archived")
                    rep.skipped.append(src)
                    continue
                except OSError as exc:
                    _unlink(tmp)
                    if exc.errno == errno.ENOSPC:
                        raise ArchiveError(
                            f"the disk of {to} is full: {len(rep.copied)} file(s) archived, {src.name} and the "
                            "rest not (nothing partial was left)"
                        ) from None
                    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
                        raise ArchiveError(f"cannot write in {dst.parent}: {exc.strerror}") from None
                    raise ArchiveError(f"cannot write {dst}: {exc.strerror or exc}") from None
                manifest[rel] = [*_stamp(st), digest]
                if placed:
                    rep.bytes += size
                if n % 200 == 199:
                    _write_manifest(to, manifest)
                    first = dict(manifest)
    finally:
        _unlink(tmp)
        if manifest != first:
            _write_manifest(to, manifest)
    _sweep(to)
    return rep


def _size(p: Path) -> int | None:
    try:
        st = os.lstat(p)
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def _place(tmp: Path, dst: Path, digest: str, size: int, st: os.stat_result, rep: ArchiveReport) -> bool:
    """Give a verified copy its name: the archive's copy when there is none or the new one extends it; when it is the
    same, nothing; when it is shorter or different, beside the archived copy (which is kept), said in a warning.
    True when a copy was written."""
    old = _size(dst)
    if old is None and os.path.lexists(dst):  # not a regular file in the archive (a link, a folder): left alone
        where = _beside_name(dst, st)
        os.replace(tmp, where)
        rep.beside.append(where)
        rep.warnings.append(f"{dst} is not a regular file in the archive: the copy of it is kept as {where.name}")
        return True
    if old is None:
        os.replace(tmp, dst)
        _fsync_dir(dst.parent)
        rep.copied.append(dst)
        return True
    if old == size and _sha256(dst) == digest:
        _unlink(tmp)
        rep.unchanged += 1
        return False
    if size > old and _sha256(tmp, old) == _sha256(dst):  # grown: what the archive held is its start
        os.replace(tmp, dst)
        _fsync_dir(dst.parent)
        rep.copied.append(dst)
        return True
    where = _beside_name(dst, st)
    if _size(where) == size and _sha256(where) == digest:
        _unlink(tmp)
        rep.unchanged += 1
        return False
    os.replace(tmp, where)
    _fsync_dir(dst.parent)
    rep.beside.append(where)
    how = f"shorter than its archived copy ({old:,} → {size:,} bytes)" if size < old else "changed, not grown"
    rep.warnings.append(f"{dst.name} is {how}: the archived copy is kept and this version written beside it as {where.name}")
    return True


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


__all__ = [
    "ArchiveError",
    "ArchiveReport",
    "MANIFEST",
    "Retention",
    "archive",
    "cleanup_rules",
    "newest_release",
    "inside",
    "projects_roots",
    "settings_layers",
]
