"""Save a compaction result as a new session that `claude --resume` continues (§8.6, §9.3).

The new file holds the conversation's history up to the chosen point (re-chained, with the new
session id), then the records Claude Code would have written for the compaction. Files that the
written records point to (persisted tool results, subagent transcripts, session memory) are
copied into the new session's folder. Every file is written atomically (a temporary file,
fsync, then a hard link to the final name, which fails rather than overwrite), and the new
session is loaded back and checked before success is reported. The original is never touched.
"""

from __future__ import annotations

import copy
import os
import tempfile
import uuid as uuidlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import orjson

from inspector.compact.base import CompactionResult, make_slice
from inspector.tokens.estimate import count_bodies
from inspector.transcript.discovery import InspectorError
from inspector.transcript.records import iter_blocks
from inspector.transcript.session import Session, safe_child


class SaveError(InspectorError):
    pass


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

    def as_dict(self) -> dict[str, Any]:
        v = self.verification
        return {"path": str(self.path), "session_id": self.session_id, "records": self.records, "copied": [str(p) for p in self.copied],
                "resume_command": self.resume_command, "notes": self.notes,
                "verification": {"ok": v.ok, "chain_ok": v.chain_ok, "tool_pairs_ok": v.tool_pairs_ok, "estimate_ok": v.estimate_ok,
                                 "saved_counted_tokens": v.saved_counted, "preview_counted_tokens": v.preview_counted, "problems": v.problems}}


def _shell_quote(s: str) -> str:
    import shlex

    return shlex.quote(s)


# ---------------------------------------------------------------------------------------------
# atomic writes


def write_atomic(target: Path, chunks: Iterable[bytes], *, fsync: Callable[[int], None] | None = None) -> None:
    """Write to a temporary file beside `target`, fsync, then link it to `target`.

    The link fails if `target` exists, so nothing is ever overwritten; on any error the
    temporary file is removed and `target` does not exist.
    """
    sync = fsync or os.fsync
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".inspector-", suffix=".tmp")
    except OSError as exc:
        raise SaveError(f"could not write in {target.parent}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            for c in chunks:
                f.write(c)
            f.flush()
            sync(f.fileno())
        os.link(tmp, target)
    except FileExistsError:
        raise SaveError(f"{target} already exists; nothing was overwritten") from None
    except OSError as exc:
        raise SaveError(f"could not write {target}: {exc.strerror or exc}") from None
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
    try:
        dfd = os.open(target.parent, os.O_RDONLY)
        try:
            sync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def copy_atomic(src: Path, target: Path) -> None:
    def chunks() -> Iterable[bytes]:
        with open(src, "rb") as f:
            while True:
                b = f.read(1 << 20)
                if not b:
                    return
                yield b

    write_atomic(target, chunks())


# ---------------------------------------------------------------------------------------------


def _with_session(rec: dict[str, Any], sid: str) -> dict[str, Any]:
    if "sessionId" in rec:
        rec["sessionId"] = sid
    return rec


def build_records(s: Session, result: CompactionResult, new_sid: str, new_dir: Path) -> tuple[list[dict[str, Any]], set[str], set[str]]:
    """The new file's records, and the tool_use ids / agent ids whose files must be copied."""
    sl = make_slice(s, result.point_uuid)
    old_dir = str(s.session_dir)
    out: list[dict[str, Any]] = []
    persisted: set[str] = set()
    agents: set[str] = set()
    title = s.title or "session"
    out.append({"type": "custom-title", "sessionId": new_sid, "customTitle": f"{title[:80]} ({result.strategy} compaction by inspector)"})
    prev: str | None = None
    for i in sl.history:
        r = s.records[i]
        if r.uuid is None:
            continue
        body = copy.deepcopy(dict(result.rewritten[r.uuid])) if r.uuid in result.rewritten else copy.deepcopy(s.body(i))
        _with_session(body, new_sid)
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
                persisted.add(b["tool_use_id"])
                c = b.get("content")
                if isinstance(c, str) and c.startswith("<persisted-output>") and old_dir in c:
                    b["content"] = c.replace(old_dir, str(new_dir))
        out.append(body)
    last_written = prev
    for rec in result.new_records:
        rec = _with_session(copy.deepcopy(dict(rec)), new_sid)
        if rec.get("type") == "system" and rec.get("subtype") == "microcompact_boundary":
            rec["parentUuid"] = last_written
        out.append(rec)
    return out, persisted, agents


def verify(saved: Session, result: CompactionResult) -> Verification:
    """Load-back checks: the chain, the tool pairs, and that what will be sent matches the preview."""
    problems: list[str] = []
    conv = saved.conversation
    chain = conv.chain
    uuids = [saved.records[i].uuid for i in chain]
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
    return Verification(chain_ok, pairs_ok, estimate_ok, saved_counted, preview_counted, problems)


def save(s: Session, result: CompactionResult, *, out: Path | None = None,
         new_id: Callable[[], str] = lambda: str(uuidlib.uuid4())) -> SaveResult:
    """Write `result` as a new session; verify it; return where it is and how to resume it."""
    if not result.changed:
        raise SaveError(f"nothing to save: {result.noop or 'the compaction changes nothing'}")
    new_sid = new_id()
    target = Path(out) if out is not None else s.project_dir / f"{new_sid}.jsonl"
    if target.suffix != ".jsonl":
        raise SaveError(f"the output must be a .jsonl file: {target}")
    if target.exists():
        raise SaveError(f"{target} already exists; choose another --out (nothing is ever overwritten)")
    if target.resolve() == s.path.resolve():
        raise SaveError("refusing to write over the original transcript")
    new_dir = target.with_suffix("")
    records, tool_ids, agent_ids = build_records(s, result, new_sid, new_dir)
    created: list[Path] = []
    try:
        write_atomic(target, (orjson.dumps(r) + b"\n" for r in records))
        created.append(target)
        copied = _copy_beside(s, new_dir, tool_ids, agent_ids, result, created)
        saved = Session.load(target)
        v = verify(saved, result)
        if not v.ok:
            raise SaveError("the saved session did not pass its checks (" + "; ".join(v.problems) + "); it was removed")
    except BaseException:
        for p in reversed(created):
            try:
                p.unlink()
            except OSError:
                pass
        for d in (new_dir / "tool-results", new_dir / "subagents", new_dir / "session-memory", new_dir):
            try:
                d.rmdir()
            except OSError:
                pass
        raise
    notes = []
    try:
        now = s.path.stat()
        if now.st_size != s.transcript.size or now.st_mtime_ns != s.transcript.mtime_ns:
            grew = now.st_size - s.transcript.size
            notes.append(f"the original grew by {grew:,} bytes since it was loaded (Claude Code is still writing it?): "
                         "the new session holds what was loaded" if grew > 0 else
                         "the original changed since it was loaded: the new session holds what was loaded")
    except OSError:
        notes.append("the original is gone from disk: the new session holds what was loaded")
    return SaveResult(target, new_sid, len(records), copied, v, saved.cwd, notes)


def _copy_beside(s: Session, new_dir: Path, tool_ids: set[str], agent_ids: set[str], result: CompactionResult,
                 created: list[Path]) -> list[Path]:
    copied: list[Path] = []
    for po in s.persisted_outputs:
        if po.tool_use_id in tool_ids and po.file is not None:
            dst = new_dir / "tool-results" / po.file.name
            if not dst.exists():
                copy_atomic(po.file, dst)
                created.append(dst)
                copied.append(dst)
    for sa in s.subagents:
        if sa.agent_id in agent_ids and sa.path is not None and sa.layout == "subagents-dir":
            dst = new_dir / "subagents" / sa.path.name
            if not dst.exists():
                copy_atomic(sa.path, dst)
                created.append(dst)
                copied.append(dst)
            meta = sa.path.with_suffix(".meta.json")
            if meta.is_file() and safe_child(sa.path.parent, meta.name) is not None:
                mdst = new_dir / "subagents" / meta.name
                if not mdst.exists():
                    copy_atomic(meta, mdst)
                    created.append(mdst)
                    copied.append(mdst)
    if result.strategy == "session-memory" and result.session_memory:
        dst = new_dir / "session-memory" / "summary.md"
        write_atomic(dst, [result.session_memory.encode("utf-8")])
        created.append(dst)
        copied.append(dst)
    return copied


__all__ = ["save", "SaveResult", "SaveError", "Verification", "write_atomic", "build_records", "verify"]
