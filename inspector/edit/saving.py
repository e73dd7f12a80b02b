"""Save a compaction result as a new session that `claude --resume` continues (§8.6, §9.3).

The new file holds the conversation's history up to the chosen point (re-chained, with the new
session id), then the records Claude Code would have written for the compaction. Files that the
written records point to (persisted tool results, subagent transcripts, session memory) are
copied into the new session's folder. Every file is written atomically (a temporary file,
fsync, then a hard link to the final name, which fails rather than overwrite), and the new
session is loaded back and checked before success is reported. The original is never touched.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import time
import uuid as uuidlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.compact.base import CompactionResult, make_slice
from inspector.compact.engine import trailing_records
from inspector.tokens.estimate import count_bodies
from inspector.transcript.discovery import InspectorError
from inspector.transcript.records import dump_line, iter_blocks
from inspector.transcript.safefs import open_regular
from inspector.transcript.session import Session, safe_child


class SaveError(InspectorError):
    flag: str | None = None  # the command-line flag that overrides this refusal, if any


class RefusedSave(SaveError):
    def __init__(self, message: str, flag: str) -> None:
        super().__init__(message)
        self.flag = flag


@dataclass(slots=True)
class Verification:
    chain_ok: bool
    tool_pairs_ok: bool
    estimate_ok: bool
    saved_counted: int
    preview_counted: int
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.chain_ok and self.tool_pairs_ok and self.estimate_ok


@dataclass(slots=True)
class SaveResult:
    path: Path
    session_id: str
    records: int
    copied: list[Path]
    verification: Verification
    cwd: str | None
    notes: list[str] = field(default_factory=list)

    @property
    def resume_command(self) -> str:
        cd = f"cd {_shell_quote(self.cwd)} && " if self.cwd else ""
        return f"{cd}claude --resume {self.session_id}"

    @property
    def project_folder(self) -> Path:
        """Where Claude Code looks for this session's file: its projects root, the folder named after the cwd."""
        from inspector.transcript.discovery import default_projects_root

        return default_projects_root() / project_folder_name(self.cwd or "")

    @property
    def resumable(self) -> bool:
        """Whether `claude --resume` (run in the session's folder) finds the saved file where it is."""
        from inspector.transcript.discovery import default_projects_root

        try:
            folder = self.path.parent.resolve()
            root = default_projects_root().resolve()
        except OSError:
            return False
        if folder.parent != root or self.path.name != f"{self.session_id}.jsonl":  # it finds <id>.jsonl, nothing else
            return False
        return (
            not self.cwd
            or folder.name == project_folder_name(self.cwd)
            or (len(project_folder_name(self.cwd)) > 200 and folder.name.startswith(project_folder_name(self.cwd)[:200]))
        )

    @property
    def resume_hint(self) -> str:
        """How to continue the saved session in Claude Code: the command, or first where to copy it."""
        if self.resumable:
            return self.resume_command
        dest = self.project_folder
        folder = self.path.with_suffix("")
        target = dest / f"{self.session_id}.jsonl"  # Claude Code resumes `<id>.jsonl` of the cwd's folder, nothing else
        copy = f"mkdir -p {_shell_quote(str(dest))} &&\n  cp {_shell_quote(str(self.path))} {_shell_quote(str(target))}"
        if folder.is_dir():  # a command a line: a long path never hides where the next one starts
            copy += f" &&\n  cp -r {_shell_quote(str(folder))} {_shell_quote(str(dest / self.session_id))}"
        where = f"in {self.path.parent}" if self.path.name == f"{self.session_id}.jsonl" else f"under the name {self.path.name}"
        return (
            f"Claude Code does not look for sessions {where}: copy it to its projects folder as {target.name} first,\n"
            f"  {copy}\nthen: {self.resume_command}"
        )

    def as_dict(self) -> dict[str, Any]:
        v = self.verification
        return {
            "path": str(self.path),
            "session_id": self.session_id,
            "records": self.records,
            "copied": [str(p) for p in self.copied],
            "resume_command": self.resume_command,
            "resumable": self.resumable,
            "resume_hint": self.resume_hint,
            "notes": self.notes,
            "verification": {
                "ok": v.ok,
                "chain_ok": v.chain_ok,
                "tool_pairs_ok": v.tool_pairs_ok,
                "estimate_ok": v.estimate_ok,
                "saved_counted_tokens": v.saved_counted,
                "preview_counted_tokens": v.preview_counted,
                "problems": v.problems,
            },
        }


def project_folder_name(cwd: str) -> str:
    """The name of the folder Claude Code keeps a project's sessions in (§1.2): every character that is not a letter
    or a digit becomes '-'. (Over 200 characters Claude Code adds a hash of the path that only its runtime makes.)"""
    return re.sub(r"[^a-zA-Z0-9]", "-", cwd)


def user_save_root() -> Path:
    """Where sessions saved from something inspector must not write into (the bundled samples) go:
    $XDG_DATA_HOME/inspector/saved, by default ~/.local/share/inspector/saved."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "inspector" / "saved"


def _own_tree(path: Path) -> bool:
    """Inside inspector's own package or its bundled samples (never written to)."""
    from inspector.transcript.discovery import samples_root

    try:
        p = path.resolve()
    except OSError:
        return False
    package = Path(__file__).resolve().parent.parent
    roots = [package] + ([samples_root().resolve()] if samples_root() is not None else [])
    return any(p == r or r in p.parents for r in roots)


def _shell_quote(s: str) -> str:
    import shlex

    return shlex.quote(s)


# ---------------------------------------------------------------------------------------------
# atomic writes

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


def _sha256(path: Path) -> str | None:
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


# ---------------------------------------------------------------------------------------------


def _with_session(rec: dict[str, Any], sid: str) -> dict[str, Any]:
    if "sessionId" in rec:
        rec["sessionId"] = sid
    return rec


def build_records(
    s: Session, result: CompactionResult, new_sid: str, new_dir: Path
) -> tuple[list[dict[str, Any]], set[str], set[str]]:
    """The new file's records, and the tool_use ids / agent ids whose files must be copied."""
    sl = make_slice(s, result.point_uuid)
    out: list[dict[str, Any]] = []
    persisted: set[str] = set()
    agents: set[str] = set()
    title = s.title or "session"
    fork_marks = result.api_messages is not None  # a 2.1.3xx session: copied records name where they come from
    out.append(
        {"type": "custom-title", "sessionId": new_sid, "customTitle": f"{title[:80]} ({result.strategy} compaction by inspector)"}
    )
    prev: str | None = None
    # the history, and the bookkeeping record below its last message when the compaction kept it (a REPL's
    # turn_duration: among the messages of the process that compacts, so the end of its kept tail)
    kept = set(result.kept_uuids)
    for i in [*sl.history, *(j for j in trailing_records(sl) if s.records[j].uuid in kept)]:
        r = s.records[i]
        if r.uuid is None:
            continue
        # only top-level fields change: a shallow copy (a kept record may nest past what a deep copy survives)
        body = dict(result.rewritten[r.uuid]) if r.uuid in result.rewritten else dict(s.body(i))
        _with_session(body, new_sid)
        if fork_marks:  # as Claude Code's own branch writes a copied record (2.1.3xx)
            if body.get("type") == "assistant":
                fk = body.get("forkedFrom")
                body["requestSessionId"] = next(
                    (
                        x
                        for x in (
                            body.get("requestSessionId"),
                            fk.get("sessionId") if isinstance(fk, dict) else None,
                            s.body(i).get("sessionId"),
                        )
                        if isinstance(x, str)
                    ),
                    None,
                )
            body["forkedFrom"] = {"sessionId": s.session_id, "messageUuid": r.uuid}
        if r.is_compact_boundary:
            body["parentUuid"] = None
        else:
            body["parentUuid"] = prev
        prev = body.get("uuid")
        tur = body.get("toolUseResult")
        if isinstance(tur, dict) and isinstance(tur.get("agentId"), str):
            agents.add(tur["agentId"])
        msg = body.get("message")
        for b in iter_blocks(msg.get("content") if isinstance(msg, dict) else None):
            if b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str):
                # the file is copied beside the new session; the text, which names the original's copy, is left as it
                # was sent, so a resume sends the kept records byte for byte (and the original's file stays in place)
                persisted.add(b["tool_use_id"])
        out.append(body)
    last_written = prev
    for rec in result.new_records:
        rec = _with_session(dict(rec), new_sid)
        if rec.get("type") == "system" and rec.get("subtype") == "microcompact_boundary":
            rec["parentUuid"] = last_written
        out.append(rec)
    return out, persisted, agents


def verify(saved: Session, result: CompactionResult) -> Verification:
    """Load-back checks: the chain, the tool pairs, and that what will be sent matches the preview."""
    problems: list[str] = []
    from inspector.claude.measured import resume_parent

    conv = saved.conversation
    chain = conv.chain
    uuids = [saved.records[i].uuid for i in chain]
    tail = conv.trailing_leaf  # kept bookkeeping records below the last message: on the resumed chain when the
    if tail is not None and resume_parent(conv, saved.version)[0] == saved.records[tail].uuid:  # release resumes from it
        below: list[str] = []  # every record between the last message and the one resumed from (a kept tail's
        i: int | None = tail  # informational line with the records relinked after it, as well as the last record)
        while i is not None and i != conv.leaf and len(below) <= len(saved.records):
            if saved.records[i].uuid:
                below.append(saved.records[i].uuid)
            i = conv.parent.get(i)
        uuids += below
    chain_ok = bool(chain)
    expect_new = [r.get("uuid") for r in result.new_records if r.get("type") in ("system", "user")]
    if result.strategy != "microcompact":
        missing = [u for u in list(result.kept_uuids) + [u for u in expect_new if u] if u not in uuids]
        if missing:
            chain_ok = False
            problems.append(f"{len(missing)} record(s) expected on the resumed chain are missing: {missing[:3]}")
        if saved.transcript.skipped:
            chain_ok = False
            problems.append("the saved file has unreadable lines")
    tool_uses = {tid for i in chain for tid, _ in saved.records[i].tool_uses}
    results = {tid for i in chain for tid in saved.records[i].tool_results}
    orphans = sorted(results - tool_uses)
    unanswered = sorted(tool_uses - results)
    pairs_ok = not orphans and not unanswered
    if orphans:
        problems.append(f"tool results without their call: {orphans[:3]}")
    if unanswered:
        # the last response may legitimately end with a call still running
        last = saved.records[chain[-1]] if chain else None
        if last is not None and set(unanswered) <= {t for t, _ in last.tool_uses}:
            pairs_ok = not orphans
        else:
            problems.append(f"tool calls without their result: {unanswered[:3]}")
    # what the saved session sends after its last boundary, against the preview's view
    start = max((k for k, i in enumerate(chain) if saved.records[i].is_compact_boundary), default=-1) + 1
    saved_bodies = [saved.body(i) for i in chain[start:] if saved.records[i].type in ("user", "assistant", "attachment")]
    saved_counted = count_bodies(saved_bodies)
    preview_counted = count_bodies([dict(v.body) for v in result.view])
    estimate_ok = saved_counted == preview_counted
    if not estimate_ok:
        problems.append(f"the saved session counts {saved_counted:,} tokens where the preview counted {preview_counted:,}")
    if result.api_messages is not None:  # 2.1.3xx: what a resume sends, exactly
        from inspector.claude.requests import canonical
        from inspector.claude.wire import api_messages, sent_bodies

        sent = api_messages(sent_bodies(saved, chain), str(result.parameters.get("wire_style") or "user"))
        if canonical(_as_blocks(sent)) != canonical(_as_blocks([dict(m) for m in result.api_messages])):
            estimate_ok = False
            problems.append("a resume of the saved session would send other messages than the preview shows")
    return Verification(chain_ok, pairs_ok, estimate_ok, saved_counted, preview_counted, problems)


def _as_blocks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**m, "content": [{"type": "text", "text": m["content"]}]} if isinstance(m.get("content"), str) else m for m in messages
    ]


LIVE_SECONDS = 60  # a transcript changed this recently, mid-turn, is one Claude Code is still writing


def still_written(s: Session, now: float | None = None) -> str | None:
    """Why the session looks like one Claude Code is still writing, or None: it changed since it was loaded, or it
    changed in the last minute and its conversation stops in the middle of a turn (a prompt or a tool result with no
    reply yet, or a reply that called a tool)."""
    try:
        st = s.path.stat()
    except OSError:
        return None
    if st.st_size != s.transcript.size or st.st_mtime_ns != s.transcript.mtime_ns:
        return "it changed since inspector read it"
    age = (now if now is not None else time.time()) - st.st_mtime
    if age >= LIVE_SECONDS:
        return None
    chain = s.conversation.chain
    last = next((s.records[i] for i in reversed(chain) if s.records[i].type in ("user", "assistant")), None)
    if last is None:
        return None
    mid_turn = last.type == "user" or bool(last.tool_uses) or last.stop_reason == "tool_use"
    return f"it changed {age:.0f} s ago and stops in the middle of a turn" if mid_turn else None


def save(
    s: Session,
    result: CompactionResult,
    *,
    out: Path | None = None,
    new_id: Callable[[], str] = lambda: str(uuidlib.uuid4()),
    allow_live: bool = False,
    allow_newer: bool = False,
) -> SaveResult:
    """Write `result` as a new session; verify it; return where it is and how to resume it.

    The session appears whole or not at all: its folder is filled first (each file atomic, copied byte for
    byte and checked by hash), marked as incomplete until the transcript, written last, is linked into
    place. A save killed at any point leaves either no transcript or a complete session, and the next save
    in the same project folder removes what the interrupted one left."""
    if not result.changed:
        raise SaveError(f"nothing to save: {result.noop or 'the compaction changes nothing'}")
    from inspector.claude.versions import SAVES_CHECKED_ON, parse_version, show_version

    v = parse_version(s.version)
    if not allow_newer and v is not None and v > SAVES_CHECKED_ON:
        raise RefusedSave(
            f"nothing was saved: the session was written by Claude Code {show_version(v)}, newer than "
            f"{show_version(SAVES_CHECKED_ON)}, the newest release that resumed inspector's saves in its checks "
            "(the preview stands)",
            "--allow-newer",
        )
    live = None if allow_live else still_written(s)
    if live is not None:
        raise RefusedSave(
            f"nothing was saved: the session is still being written ({live}); save it once Claude Code has finished the turn",
            "--allow-live",
        )
    new_sid = new_id()
    placed: list[str] = []
    if out is not None:
        target = Path(out)
        if _own_tree(target):
            raise SaveError(f"inspector does not write inside its own package or the bundled samples: {target}")
    elif _own_tree(s.path):  # a bundled sample: saved in the user's data folder, never in the package or the checkout
        target = user_save_root() / s.project_dir.name / f"{new_sid}.jsonl"
        placed.append(f"the original is one of inspector's bundled samples: saved under {target.parent} instead of beside it")
    else:
        target = s.project_dir / f"{new_sid}.jsonl"
    if target.suffix != ".jsonl":
        raise SaveError(f"the output must be a .jsonl file: {target}")
    if target.exists() or target.is_symlink():
        raise SaveError(f"{target} already exists; choose another --out (nothing is ever overwritten)")
    if target.resolve() == s.path.resolve():
        raise SaveError("refusing to write over the original transcript")
    new_dir = target.with_suffix("")
    if new_dir.is_symlink() or (new_dir.exists() and not new_dir.is_dir()):
        raise SaveError(f"{new_dir} exists and is not a folder; choose another --out")
    if new_dir.is_dir() and any(True for _ in os.scandir(new_dir)):
        raise SaveError(f"{new_dir} already holds files; a new session needs an empty folder (choose another --out)")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SaveError(f"could not write in {target.parent}: {exc.strerror or exc}") from None
    cleaned = clean_stale(target.parent)
    records, tool_ids, agent_ids = build_records(s, result, new_sid, new_dir)
    created: list[Path] = []  # files this save made (removed if it fails)
    made_dirs: list[Path] = []  # folders it made (removed too; never one that was there before)
    try:
        plan = _copy_plan(s, new_dir, tool_ids, agent_ids, result)
        fill = new_dir
        if plan:
            try:
                if new_dir.is_dir():  # the user's own empty folder: filled in place, marked first
                    DISK.marker(new_dir / INCOMPLETE)
                else:  # a folder of ours under a temporary name, renamed into place when full
                    fill = DISK.tempdir(target.parent)
                    made_dirs.append(fill)
                    DISK.marker(fill / INCOMPLETE)
            except OSError as exc:
                raise SaveError(f"could not write in {target.parent}: {exc.strerror or exc}") from None
            created.append(fill / INCOMPLETE)
        copied = _copy_beside([_Copy(c.src, fill / c.dst.relative_to(new_dir), c.data) for c in plan], created, made_dirs)
        if fill != new_dir:
            try:
                DISK.rename(fill, new_dir)
            except OSError as exc:
                raise SaveError(f"could not write {new_dir}: {exc.strerror or exc}") from None
            made_dirs = [new_dir / d.relative_to(fill) if d != fill else new_dir for d in made_dirs]
            created = [new_dir / p.relative_to(fill) for p in created]
            copied = [(src, new_dir / dst.relative_to(fill), digest) for src, dst, digest in copied]
        write_atomic(target, (dump_line(r) + b"\n" for r in records))
        created.append(target)
        if plan:
            DISK.unlink(new_dir / INCOMPLETE)
            created.remove(new_dir / INCOMPLETE)
        saved = Session.load(target)
        v = verify(saved, result)
        for src, dst, digest in copied:
            if _sha256(dst) != digest:
                v.problems.append(f"{dst.name} does not hold what was copied from {src}")
                v.estimate_ok = False
        if not v.ok:
            raise SaveError("the saved session did not pass its checks (" + "; ".join(v.problems) + "); it was removed")
    except BaseException:
        if target in created:  # the transcript goes first: the session disappears at once
            created.remove(target)
            _quiet(DISK.unlink, target)
        for p in reversed(created):
            _quiet(DISK.unlink, p)
        for d in reversed(made_dirs):
            _quiet(DISK.rmdir, d)
        raise
    notes = list(placed)
    if cleaned:
        notes.append(f"removed {len(cleaned)} file(s) and folder(s) an interrupted earlier save had left")
    try:
        now = s.path.stat()
        if now.st_size != s.transcript.size or now.st_mtime_ns != s.transcript.mtime_ns:
            grew = now.st_size - s.transcript.size
            notes.append(
                f"the original grew by {grew:,} bytes since it was loaded (Claude Code is still writing it?): "
                "the new session holds what was loaded"
                if grew > 0
                else "the original changed since it was loaded: the new session holds what was loaded"
            )
    except OSError:
        notes.append("the original is gone from disk: the new session holds what was loaded")
    return SaveResult(target, new_sid, len(records), [dst for _, dst, _ in copied], v, saved.cwd, notes)


def _quiet(fn: Callable[[Any], None], arg: Any) -> None:
    try:
        fn(arg)
    except OSError:
        pass


@dataclass(slots=True)
class _Copy:
    src: Path | None  # a file to copy byte for byte, or None for `data`
    dst: Path
    data: bytes | None = None


def _copy_plan(s: Session, new_dir: Path, tool_ids: set[str], agent_ids: set[str], result: CompactionResult) -> list[_Copy]:
    """The files the new transcript points to, to be copied into its folder."""
    plan: list[_Copy] = []
    seen: set[Path] = set()

    def add(c: _Copy) -> None:
        if c.dst not in seen:
            seen.add(c.dst)
            plan.append(c)

    for po in s.persisted_outputs:
        if po.tool_use_id in tool_ids and po.file is not None:
            add(_Copy(po.file, new_dir / "tool-results" / po.file.name))
    for sa in s.subagents:
        if sa.agent_id in agent_ids and sa.path is not None and sa.layout == "subagents-dir":
            add(_Copy(sa.path, new_dir / "subagents" / sa.path.name))
            meta = safe_child(sa.path.parent, sa.path.with_suffix(".meta.json").name, s.project_dir)
            if meta is not None:
                add(_Copy(meta, new_dir / "subagents" / meta.name))
    if result.strategy == "session-memory" and result.session_memory:
        dst = new_dir / "session-memory" / "summary.md"
        if result.session_memory_file is not None:
            add(_Copy(result.session_memory_file, dst))  # the notes file itself, byte for byte
        else:
            add(_Copy(None, dst, result.session_memory.encode("utf-8")))  # notes the summarizer wrote
    return plan


def _mkdir(folder: Path, made: list[Path]) -> None:
    if folder.is_dir() and not folder.is_symlink():
        return
    try:
        DISK.mkdir(folder)
    except OSError as exc:
        raise SaveError(f"could not write in {folder.parent}: {exc.strerror or exc}") from None
    made.append(folder)


def _copy_beside(plan: list[_Copy], created: list[Path], made_dirs: list[Path]) -> list[tuple[Path, Path, str]]:
    done: list[tuple[Path, Path, str]] = []
    for c in plan:
        _mkdir(c.dst.parent, made_dirs)
        if c.src is not None:
            digest = copy_atomic(c.src, c.dst)
        else:
            assert c.data is not None
            write_atomic(c.dst, [c.data])
            digest = hashlib.sha256(c.data).hexdigest()
        created.append(c.dst)
        done.append((c.src or c.dst, c.dst, digest))
    return done


__all__ = [
    "save",
    "SaveResult",
    "SaveError",
    "RefusedSave",
    "still_written",
    "ReadError",
    "Verification",
    "write_atomic",
    "build_records",
    "verify",
    "clean_stale",
]
