"""The records of a new session, and the check of it once written and loaded back.

`build_records` re-chains the conversation up to the compaction's point under the new session id and appends the
records Claude Code would have written for the compaction (boundary, summary, kept tail, attachments), saying which
persisted outputs and subagent transcripts they point to; `verify` loads the written session back and checks its
chain, its tool pairs and its token count against the preview.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.compact.base import CompactionResult, make_slice
from inspector.compact.engine import trailing_records
from inspector.tokens.estimate import count_bodies
from inspector.transcript.records import iter_blocks
from inspector.transcript.session import Session


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
        else:  # an older release's format names no origin: inspector's own mark, which Claude Code ignores
            body["inspectorCopiedFrom"] = {"sessionId": s.session_id, "messageUuid": r.uuid}
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
    from inspector.claude.measured import resumed_chain

    conv = saved.conversation
    chain = resumed_chain(conv, saved.version)  # the kept bookkeeping records below the last message too, where the
    uuids = [saved.records[i].uuid for i in chain]  # release resumes from them (a kept tail's informational line)
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
        last = saved.records[conv.chain[-1]] if conv.chain else None
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
        from inspector.claude.wire import api_messages, effort_of, sent_bodies, thinking_of

        style = str(result.parameters.get("wire_style") or "user")
        sent = api_messages(sent_bodies(saved, chain), style, thinking_of(result.parameters), effort_of(result.parameters))
        if canonical(_as_blocks(sent)) != canonical(_as_blocks([dict(m) for m in result.api_messages])):
            estimate_ok = False
            problems.append("a resume of the saved session would send other messages than the preview shows")
    return Verification(chain_ok, pairs_ok, estimate_ok, saved_counted, preview_counted, problems)


def _as_blocks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**m, "content": [{"type": "text", "text": m["content"]}]} if isinstance(m.get("content"), str) else m for m in messages
    ]
