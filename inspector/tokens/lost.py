"""What a compaction lost: of the records it summarized, the user's instructions, the files read and edited, the
commands run and their errors, and the decisions stated, each with its text and where it is, marked by whether the
summary mentions it, the compaction kept it verbatim, or neither (dropped: what Claude can no longer see).

The summarized records are the compaction's segment of the logical chain (from the previous boundary, or the
session's start, up to the boundary), less the messages it kept (`preservedMessages`, a relinked preserved segment,
or a kept copy: any record after the boundary with the same text). Whether the summary mentions an item is a plain
test of its words, stated in `MENTION_RULE`; no model is asked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from inspector.tokens.series import summary_index
from inspector.transcript.records import F_INTERRUPT, F_TOOL_ERROR, iter_blocks, tool_result_text
from inspector.transcript.session import Session

READ_TOOLS = frozenset({"Read", "NotebookRead"})
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
COMMAND_TOOLS = frozenset({"Bash", "PowerShell", "BashOutput"})
KINDS = ("instruction", "file_edited", "file_read", "command", "error", "decision")
KIND_WORDS = {
    "instruction": "instructions",
    "file_edited": "files edited",
    "file_read": "files read",
    "command": "commands",
    "error": "errors",
    "decision": "decisions",
}
# a sentence of the assistant's that states what it decided or will do
DECISION = re.compile(
    r"\b(I'll|I will|I'm going to|let's|we'll|we will|decided|decision|instead of|rather than|the plan is|"
    r"I chose|we chose|going with|switch(?:ed)? to|won't|will not|must not|should not)\b",
    re.IGNORECASE,
)
MENTION_RULE = (
    "a file is mentioned when its path or its name is in the summary; any other item when at least 60% of its "
    "distinctive words (4 letters or more, not common words; the first 12) are"
)
_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-/]{3,}")
_COMMON = frozenset(
    "this that with from have will your what when where which there their about would could should into also "
    "then than them they these those been were just like make made only other some such more most very each "
    "file files please need want does done here over after before because while using used sure okay".split()
)
TEXT_CAP = 2000  # characters of an item's text kept


@dataclass(frozen=True, slots=True)
class LostItem:
    kind: str  # one of KINDS
    text: str
    uuid: str | None
    line: int
    status: str  # "in summary", "kept" or "dropped"
    tool: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "text": self.text,
            "uuid": self.uuid,
            "line": self.line,
            "status": self.status,
            "tool": self.tool,
        }


@dataclass(slots=True)
class Loss:
    """One compaction: what it summarized and what of that is no longer in view."""

    boundary: int  # record index
    uuid: str | None
    line: int
    timestamp: str | None
    summarized: int  # records summarized
    kept: int  # messages kept verbatim
    summary_uuid: str | None
    items: list[LostItem] = field(default_factory=list)

    @property
    def dropped(self) -> list[LostItem]:
        return [i for i in self.items if i.status == "dropped"]

    def counts(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for i in self.items:
            c = out.setdefault(i.kind, {"in summary": 0, "kept": 0, "dropped": 0})
            c[i.status] += 1
        return out

    def as_dict(self, *, dropped_only: bool = False) -> dict[str, Any]:
        return {
            "boundary_uuid": self.uuid,
            "line": self.line,
            "timestamp": self.timestamp,
            "records_summarized": self.summarized,
            "messages_kept": self.kept,
            "summary_uuid": self.summary_uuid,
            "counts": self.counts(),
            "items": [i.as_dict() for i in (self.dropped if dropped_only else self.items)],
            "mention_rule": MENTION_RULE,
        }


def words(text: str) -> list[str]:
    """An item's distinctive words, lower-cased, in order, once each."""
    seen: dict[str, None] = {}
    for w in _WORD.findall(text.lower()):
        w = w.strip(".-/")
        if len(w) >= 4 and w not in _COMMON:
            seen.setdefault(w, None)
    return list(seen)


def typed(text: str) -> str | None:
    """What the person said in a prompt: its text; a slash command or a shell escape as they typed it
    (`/review src`, `!make test`); None for what Claude Code injects in the user's turn (task notifications,
    command output, reminders)."""
    t = text.strip()
    if not t.startswith("<"):
        return t
    name = re.search(r"<command-name>(.*?)</command-name>", t, re.S)
    if name:
        args = re.search(r"<command-args>(.*?)</command-args>", t, re.S)
        return f"{name.group(1).strip()} {args.group(1).strip() if args else ''}".strip()
    bash = re.search(r"<bash-input>(.*?)</bash-input>", t, re.S)
    return f"!{bash.group(1).strip()}" if bash else None


def mentioned(kind: str, text: str, summary: str, summary_words: set[str]) -> bool:
    """Whether the summary mentions an item (MENTION_RULE)."""
    if kind in ("file_read", "file_edited"):
        name = text.rstrip("/").rsplit("/", 1)[-1]
        return text in summary or (len(name) >= 4 and name in summary)
    ws = words(text)[:12]
    if not ws:
        return True  # nothing distinctive to look for: not counted as lost
    return sum(1 for w in ws if w in summary_words or w in summary) >= 0.6 * len(ws)


def losses(s: Session, only: int | None = None) -> list[Loss]:
    """Every compaction of the session's logical chain (microcompactions clear tool output only: not here), or only
    the one whose boundary is record `only`."""
    conv = s.conversation
    chain = conv.logical_chain
    recs = s.records
    bounds = [p for p, i in enumerate(chain) if recs[i].is_compact_boundary]
    out = []
    for k, pos in enumerate(bounds):
        if only is not None and chain[pos] != only:
            continue
        start = bounds[k - 1] + 1 if k > 0 else 0
        end = bounds[k + 1] if k + 1 < len(bounds) else len(chain)
        out.append(_loss(s, chain, start, pos, end))
    return out


def describe(loss: dict[str, Any], width: int = 100) -> list[str]:
    """A compaction's loss (`Loss.as_dict()`) as lines a person reads (the app's "why" pane, `tokens --lost`): per
    kind, how many items the summary mentions, kept and dropped, then each dropped one with its line."""
    counts = loss["counts"]
    total = sum(sum(c.values()) for c in counts.values())
    dropped = sum(c["dropped"] for c in counts.values())
    out = [
        f"Summarized {loss['records_summarized']:,} messages, kept {loss['messages_kept']:,}; of {total:,} items, "
        f"{dropped:,} are neither in the summary nor kept:"
    ]
    for kind in KINDS:
        c = counts.get(kind)
        if not c:
            continue
        out.append(f"  {KIND_WORDS[kind]}: {c['dropped']} dropped, {c['in summary']} in the summary, {c['kept']} kept")
        for i in loss["items"]:
            if i["kind"] == kind and i["status"] == "dropped":
                text = " ".join(i["text"].split())
                room = width - 14
                out.append(f"    L{i['line']:<7} {text[:room] + ('…' if len(text) > room else '')}")
    return out


def _loss(s: Session, chain: list[int], start: int, pos: int, end: int) -> Loss:
    from inspector.tokens.cause import kept_uuids

    recs = s.records
    b = chain[pos]
    meta = recs[b].get("compact") or {}
    kept = set(kept_uuids(s, b, meta))
    si = summary_index(s, b)
    summary = s.record_text(si) if si is not None else ""
    summary_l = summary.lower()
    summary_words = set(words(summary))
    after = [i for i in chain[pos + 1 : end] if i != si]
    later_text = "\n".join(s.record_text(i) for i in after if recs[i].is_message)
    later_tools = {tid for i in after for tid, _ in recs[i].tool_uses}
    summarized = [i for i in chain[start:pos] if recs[i].uuid not in kept and recs[i].is_message]
    loss = Loss(
        b, recs[b].uuid, recs[b].line, recs[b].timestamp, len(summarized), len(kept), recs[si].uuid if si is not None else None
    )
    seen: set[tuple[str, str]] = set()

    def add(kind: str, text: str, i: int, *, tool: str | None = None, kept_here: bool = False) -> None:
        text = text.strip()
        if not text or (kind, text) in seen:
            return
        seen.add((kind, text))
        if kept_here or (kind in ("instruction", "decision") and text in later_text):
            status = "kept"
        elif mentioned(kind, text, summary_l, summary_words):
            status = "in summary"
        else:
            status = "dropped"
        loss.items.append(LostItem(kind, text[:TEXT_CAP], recs[i].uuid, recs[i].line, status, tool))

    commands: dict[str, tuple[str | None, str]] = {}  # tool_use id -> (tool, command) of the summarized span
    for i in summarized:
        r = recs[i]
        if r.type == "user":
            prompt = r.get("prompt")
            if isinstance(prompt, str) and prompt.strip() and not r.is_sidechain and not r.flags & F_INTERRUPT:
                said = typed(prompt if len(prompt) < 300 else s.record_text(i))
                if said:
                    add("instruction", said, i)
            if r.tool_results and r.flags & F_TOOL_ERROR:
                msg = s.body(i).get("message")
                for blk in iter_blocks(msg.get("content") if isinstance(msg, dict) else None):
                    if blk.get("type") == "tool_result" and blk.get("is_error") is True:
                        tid = blk.get("tool_use_id")
                        tid = tid if isinstance(tid, str) else ""
                        tool, cmd = commands.get(tid) or (s.tool_name(tid) if tid else None, "")
                        err = " ".join(tool_result_text(blk.get("content")).split())[:400]
                        add("error", f"{cmd} -> {err}" if cmd else err, i, tool=tool)
            continue
        if r.type != "assistant":
            continue
        msg = s.body(i).get("message")
        for blk in iter_blocks(msg.get("content") if isinstance(msg, dict) else None):
            t = blk.get("type")
            if t == "text" and isinstance(blk.get("text"), str):
                for sentence in re.split(r"(?<=[.!?])\s+|\n+", blk["text"]):
                    if DECISION.search(sentence) and len(sentence) > 20:
                        add("decision", sentence, i)
            elif t == "tool_use" and isinstance(blk.get("input"), dict):
                name, inp, tid = blk.get("name"), blk["input"], blk.get("id")
                kept_here = tid in later_tools
                if name in READ_TOOLS or name in EDIT_TOOLS:
                    path = inp.get("file_path") or inp.get("notebook_path")
                    if isinstance(path, str):
                        add("file_edited" if name in EDIT_TOOLS else "file_read", path, i, tool=name, kept_here=kept_here)
                elif name in COMMAND_TOOLS and isinstance(inp.get("command"), str):
                    cmd = " ".join(inp["command"].split())
                    if isinstance(tid, str):
                        commands[tid] = (name, cmd)
                    add("command", cmd, i, tool=name, kept_here=kept_here)
    order = {k: n for n, k in enumerate(KINDS)}
    loss.items.sort(key=lambda it: (order[it.kind], it.line))
    return loss
