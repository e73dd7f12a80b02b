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
import time
import uuid as uuidlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.compact.base import CompactionResult
from inspector.edit.files import (
    DISK,
    INCOMPLETE,
    RefusedSave,
    SaveError,
    clean_stale,
    copy_atomic,
    sha256_of,
    write_atomic,
)
from inspector.edit.records import Verification, build_records, verify
from inspector.statefiles import inspector_dir
from inspector.transcript.discovery import project_folder_name
from inspector.transcript.records import dump_line
from inspector.transcript.session import Session, safe_child


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


def user_save_root() -> Path:
    """Where sessions saved from something inspector must not write into (the bundled samples) go:
    $XDG_DATA_HOME/inspector/saved, by default ~/.local/share/inspector/saved."""
    return inspector_dir("data") / "saved"


def _own_tree(path: Path) -> bool:
    """Inside inspector's own package or its bundled samples (never written to)."""
    from inspector.transcript.discovery import samples_root

    try:
        p = path.resolve()
    except OSError:
        return False
    package = Path(__file__).resolve().parent.parent
    samples = samples_root()
    roots = [package] + ([samples.resolve()] if samples is not None else [])
    return any(p == r or r in p.parents for r in roots)


def _shell_quote(s: str) -> str:
    import shlex

    return shlex.quote(s)


# ---------------------------------------------------------------------------------------------


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

    written_by = parse_version(s.version)
    if not allow_newer and written_by is not None and written_by > SAVES_CHECKED_ON:
        raise RefusedSave(
            f"nothing was saved: the session was written by Claude Code {show_version(written_by)}, newer than "
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
            if sha256_of(dst) != digest:
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


__all__ = ["SaveResult", "save", "still_written"]
