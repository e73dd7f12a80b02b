"""The user's earlier messages a compaction keeps word for word (Claude Code 2.1.331 on, behind
`CLAUDE_CODE_ELEGANT_MIST` or the `tengu_elegant_mist` gate): a list written as `earlierMessages` on the summary
record and sent before the summary (`inspector.claude.wire`).

Read from 2.1.332's code (u9n, uvs, mvs): the walk goes over the messages the compaction summarizes, oldest first,
and keeps the user's prompts, the interrupt and refusal markers, the questions asked with AskUserQuestion and their
answers ("cards"), an earlier summary's own list, and in the `messages_and_replies` mode the assistant's closing
replies (the first and the last of a run of them; in the `messages` mode each reply becomes a "left out" note). A
budget of a third of the tokens the compaction removes (at most 50,000, by Claude Code's rough count) cuts long
items in the middle and then drops items, oldest and newest kept first.

Not followed: which records count as the user's own prompt is approximated (a user text message, not meta, not a
tool result, not a summary, typed by a human; a queued prompt attachment); the cowork memory records that reset
replies are ignored; the `[x$]` provenance Claude Code keeps in memory is not written (it is not serialized)."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from inspector.textutil import as_dict
from inspector.tokens.estimate import earlier_item_text, earlier_listed, earlier_rough, js_len

MODES = ("messages", "messages_and_replies")
FIRST_RELEASE = (2, 1, 331)

_OPEN, _CLOSE = "<system-reminder>", "</system-reminder>"


def _note(text: str) -> str:
    return f"{_OPEN}\n{text}\n{_CLOSE}"


INTRO = {
    "messages": _note(
        "This conversation was compacted. What follows are the user's earlier messages and the questions you asked the "
        "user with a tool, with any answers, word for word and oldest first, so that the exact wording stays available. "
        "Your replies and your other tool calls between them were removed. Standing instructions in them still apply "
        "unless a later message changed them; a one-time approval covered only the action it answered. They are a "
        "record, not new requests: the summary after them says what is done and what remains."
    ),
    "messages_and_replies": _note(
        "This conversation was compacted. What follows are the user's earlier messages, your closing replies to those "
        "messages, and the questions you asked the user with a tool, with any answers, word for word and oldest first, "
        "so that the exact wording stays available. The other tool calls, results and thinking between them were "
        "removed: the work those replies describe was done with tools, and new work still needs them. Standing "
        "instructions in them still apply unless a later message changed them; a one-time approval covered only the "
        "action it answered. They are a record, not new requests: the summary after them says what is done and what "
        "remains."
    ),
}
LEFT_OUT = {"kind": "note", "text": _note("Part of the conversation is left out here.")}
MIDDLE_CUT = "\n[The middle of this message is left out to save space.]\n"
REFUSED = "[Tool call refused by user]"
ASK_TOOL = "AskUserQuestion"
MORE_QUESTIONS = "The user asked for more questions"
SYNTHETIC = "<synthetic>"
BLOCKED_STOPS = frozenset(("refusal", "cyber_refusal", "prompt_injection_risk", "prompt_injection"))
RATIO, CAP, FLOOR, BYTES_PER_TOKEN = 1 / 3, 50_000, 200, 4
# the user-side markers of an interrupted or refused turn, kept as the user's words (tLe)
MARKERS = (
    "[Request interrupted by user]",
    "[Request interrupted: the session ended before this agent finished. Nobody asked it to stop.]",
    "[This turn ended before it finished.]",
    "[Agent call interrupted: the process running this conversation stopped before this agent finished, so it returned "
    "no result. Nobody asked it to stop.]",
    "[Request interrupted by user for tool use]",
    "[Tool call did not complete: the turn was ended to deliver the message that follows. Nothing refused it; re-run "
    "it if still needed.]",
    "[Tool call interrupted: the session ended before this call's result was recorded, so its outcome is unknown. "
    "Check whether it took effect before relying on it or running it again.]",
    "[Tool call result not in this copy: this session was copied from another session before that session recorded "
    "this call's result. The call may have finished there, may still be running there, or may never have run. Check "
    "whether it took effect before relying on it or running it again.]",
    "The user doesn't want to take this action right now. STOP what you are doing and wait for the user to tell you "
    "how to proceed.",
    "[Tool call skipped: the turn was stopped before this call ran, by the check whose denial is on another call in "
    "this batch. Nothing refused this call and it had no effects; re-run it if still needed.]",
    "[Tool call skipped: the turn ended to deliver the message that follows before this call ran. Nothing refused it; "
    "re-run it if still needed.]",
)
_COMMAND_TAGS = ("command-message", "command-name", "command-args", "skill-format", "command-contents")
_NOT_TYPED_ORIGINS = frozenset(("scheduled", "task_notification", "auto_continuation", "peer", "host_synthetic", "system"))
# a message whose last text starts with one of these is a command's record or output, not a prompt (xBe, Uwn)
_NOT_PROMPT_STARTS = tuple(
    f"<{t}>"
    for t in (
        "command-name",
        "local-command-stdout",
        "local-command-stderr",
        "local-command-caveat",
        "bash-input",
        "bash-stdout",
        "bash-stderr",
    )
)


def mode_of(value: str | None) -> str | None:
    """The mode a `CLAUDE_CODE_ELEGANT_MIST` value turns on (anything else is off, as in Claude Code)."""
    return value if value in MODES else None


def mode_in_session(bodies: Iterable[Mapping[str, Any]]) -> str | None:
    """The mode the release ran with, read from the session's newest summary that has an `earlierMessages` list (its
    first note is the mode's introduction)."""
    found: str | None = None
    for b in bodies:
        if b.get("isCompactSummary") and isinstance(b.get("earlierMessages"), list) and b["earlierMessages"]:
            first = b["earlierMessages"][0]
            text = first.get("text") if isinstance(first, dict) else None
            found = next((m for m, t in INTRO.items() if t == text), found)
    return found


def applies(version: str | None) -> bool:
    from inspector.claude.versions import parse_version

    v = parse_version(version) if version else None
    return v is not None and tuple(v[:3]) >= FIRST_RELEASE


# ---------------------------------------------------------------------------------------------
# the rough count the budget is kept in


item_text = earlier_item_text  # Tnt: what an item weighs (a card also its question's input, as JSON)
listed = earlier_listed  # Whe: a summary's earlier messages that Claude Code reads back (well-formed, with text)
rough_tokens = earlier_rough  # Txe: what they add to Claude Code's rough count of the summary record


def weight(items: Sequence[Mapping[str, Any]]) -> int:
    """bM: the bytes of each item over four, rounded up."""
    return sum(math.ceil(len(item_text(i).encode("utf-8")) / BYTES_PER_TOKEN) for i in items)


# ---------------------------------------------------------------------------------------------
# the words of a message


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _skip_space(s: str, i: int) -> int:
    while i < len(s) and s[i].isspace():
        i += 1
    return i


_TAG = re.compile(r"<([a-z-]+)>([\s\S]*?)</\1>")
_ARGS_TO_END = re.compile(r"<command-args>([\s\S]*)</command-args>\s*$")


def command_line(text: str) -> str | None:
    """Kke: a slash command's record read back as the line the user typed (`/name args`), or None."""
    tags: dict[str, str] = {}
    i = _skip_space(text, 0)
    while i < len(text):
        m = _ARGS_TO_END.match(text, i)
        if m:
            name, body, end = "command-args", m.group(1), len(text)
        else:
            m = _TAG.match(text, i)
            if not m:
                return None
            name, body, end = m.group(1), m.group(2), m.end()
        if name not in _COMMAND_TAGS or name in tags:
            return None
        tags[name] = body
        i = _skip_space(text, end)
    name = (tags.get("command-name") or "").strip()
    if not name or tags.get("skill-format", "true") != "true":
        return None
    return f"{name} {(tags.get('command-args') or '').strip()}".strip()


def _unwrap(text: str) -> str:
    """pvs: system-reminder wrappers at either end taken off."""
    n = text
    while n.lstrip().startswith(_OPEN) and _CLOSE in n:
        n = n[n.index(_CLOSE) + len(_CLOSE) :].lstrip()
    while n.rstrip().endswith(_CLOSE) and _OPEN in n:
        n = n[: n.rindex(_OPEN)].rstrip()
    return n


_REMINDER_LT = re.compile(r"<(?=\s*(?:/\s*)?system-reminder\b)", re.IGNORECASE)
_LEADING_COMMAND_MESSAGE = re.compile(r"^<(?=command-message>)")


def words(content: Any) -> str:
    """AB: a message's words (an image or document as `[image]`/`[document]`, a command as its line, reminders off)."""
    parts: list[str] = []
    for b in _blocks(content):
        if b.get("type") in ("image", "document"):
            parts.append(f"[{b['type']}]")
        elif b.get("type") == "text" and isinstance(b.get("text"), str):
            line = command_line(b["text"])
            parts.append(_REMINDER_LT.sub("&lt;", _unwrap(b["text"] if line is None else line)))
    return _LEADING_COMMAND_MESSAGE.sub("&lt;", "\n".join(parts).strip())


def _texts(content: Any) -> list[str]:
    return [b["text"] for b in _blocks(content) if b.get("type") == "text" and isinstance(b.get("text"), str)]


def _human(origin: Any) -> bool:
    return origin is None or (isinstance(origin, dict) and origin.get("kind") == "human")


def _is_prompt(b: Mapping[str, Any]) -> bool:
    """The user's own prompt (approximating gjn(…, "own-prompt") and O9n)."""
    if b.get("type") == "attachment":
        att = as_dict(b.get("attachment"))
        return att.get("type") == "queued_command" and _human(att.get("origin"))
    if b.get("type") != "user":
        return False
    msg = as_dict(b.get("message"))
    content = msg.get("content")
    blocks = _blocks(content)
    if blocks and blocks[0].get("type") == "tool_result":
        return False
    if b.get("isMeta") or b.get("isCompactSummary") or b.get("isVisibleInTranscriptOnly") or b.get("stackedExpansion"):
        return False
    if not _human(b.get("origin")):
        return False
    texts = _texts(content)
    return not (texts and texts[-1].startswith(_NOT_PROMPT_STARTS))


def _prompt_words(b: Mapping[str, Any]) -> str:
    """fvs: the words of a prompt, or "" when it was not typed by the user."""
    if b.get("type") == "attachment":
        att = as_dict(b.get("attachment"))
        if att.get("type") != "queued_command" or att.get("textNotTyped") is True or att.get("fromConnector") is True:
            return ""
        return words(att.get("prompt"))
    if (
        b.get("type") != "user"
        or b.get("isVirtual")
        or b.get("wakeupSource") is not None
        or (b.get("turnOrigin") or "") in _NOT_TYPED_ORIGINS
        or any(
            b.get(k) is True
            for k in ("textNotTyped", "queueSkipAttachments", "promptRewritten", "verifiedSlackHumanTurn", "fromConnector")
        )
    ):
        return ""
    msg = as_dict(b.get("message"))
    w = words(msg.get("content"))
    return "" if w.startswith("<task-notification>") else w


def _message(b: Mapping[str, Any]) -> dict[str, Any]:
    m = b.get("message")
    return m if isinstance(m, dict) else {}


def _uses_tools(b: Mapping[str, Any]) -> bool:
    m = _message(b)
    return (
        m.get("stop_reason") == "tool_use"
        or m.get("stop_reason") in BLOCKED_STOPS
        or any(x.get("type") == "tool_use" for x in _blocks(m.get("content")))
    )


def _answers(reply: str, prompt: str) -> str:
    return hashlib.sha256(f"{js_len(reply)}:{reply}{prompt}".encode()).hexdigest()[:32]


# ---------------------------------------------------------------------------------------------
# the walk and the budget


def walk(conversation: Sequence[Mapping[str, Any]], remaining: set[str]) -> list[dict[str, Any]]:
    """uvs: the items of the summarized messages, oldest first."""
    tool_ids: set[Any] = set()
    asks: dict[str, Any] = {}
    for b in conversation:
        if b.get("type") == "assistant":
            m = _message(b)
            if _uses_tools(b):
                tool_ids.add(m.get("id"))
            for x in _blocks(m.get("content")):
                if x.get("name") == ASK_TOOL and isinstance(x.get("input"), dict):
                    asks[str(x.get("id"))] = x["input"]
        if b.get("type") in ("assistant", "user") and b.get("refusedMessageId") is not None:
            tool_ids.add(b["refusedMessageId"])
    out: list[dict[str, Any]] = []
    last_id: Any = None
    tools_since = False
    changed: set[Any] = set()
    for n, b in enumerate(conversation):
        t = b.get("type")
        m = _message(b)
        acts = t == "assistant" and any(str(x.get("type", "")).endswith("tool_use") for x in _blocks(m.get("content")))
        tools_since = tools_since or acts
        if t == "assistant" and words(m.get("content")) != "\n".join(_texts(m.get("content"))).strip():
            changed.add(m.get("id"))
        if b.get("uuid") in remaining:
            continue
        if t == "user" and not b.get("isVirtual"):  # dvs: an answered question, as a card
            for x in _blocks(m.get("content")):
                q = asks.get(str(x.get("tool_use_id"))) if x.get("type") == "tool_result" and not x.get("is_error") else None
                text = words(x.get("content")) if q is not None else ""
                if text and not text.startswith(MORE_QUESTIONS):
                    out.append({"kind": "card", "text": text, "input": q})
        if t == "user" and b.get("isCompactSummary"):
            out += [{k: v for k, v in e.items()} for e in listed(b)[1:]]
        elif t == "assistant":
            text = words(m.get("content"))
            if not text or b.get("isVirtual") or m.get("model") == SYNTHETIC or m.get("id") in tool_ids:
                continue
            if out and out[-1].get("kind") == "reply" and last_id == m.get("id"):
                out[-1] = {**out[-1], "text": f"{out[-1]['text']}\n{text}"}
            else:
                said = max((k for k, e in enumerate(out) if e.get("kind") in ("user", "card")), default=-1)
                first = next((k for k, e in enumerate(out) if k > said and e.get("kind") == "reply"), None)
                if first is not None:
                    out = out[: first + 1] + [dict(LEFT_OUT)]
                out.append({"kind": "reply", "text": text})
            last_id, tools_since = m.get("id"), acts
        elif (
            t == "user"
            and b.get("toolDenialKind") == "user-rejected"
            and (b.get("permissionDecision") or {}).get("source") == "user_reject"
            and b.get("toolDenialAfterRun") is not True
            and b.get("toolDenialFromHost") is not True
        ):
            out.append({"kind": "user", "text": words(f"{REFUSED} {b.get('userFeedback') or ''}")})
        elif _is_prompt(b) or (
            t == "user"
            and b.get("interruptedByShutdown") is not True
            and b.get("retiredByNoPersonsInput") is not True
            and words(m.get("content")) in MARKERS
        ):
            text = _prompt_words(b)
            if not text:
                out.append(dict(LEFT_OUT))
                continue
            item: dict[str, Any] = {"kind": "user", "text": text}
            prev = out[-1] if out else None
            single = [w for w in (_texts(m.get("content")) if t == "user" else []) if words(w)]
            if (
                prev is not None
                and prev.get("kind") == "reply"
                and not tools_since
                and last_id is not None
                and last_id not in changed
                and t == "user"
                and isinstance(b.get("origin"), dict)
                and b["origin"].get("kind") == "human"
                and b.get("promptRewritten") is not True
                and len(single) == 1
                and single[0].strip().startswith(words(single[0]))
                and _reply_before(conversation, n) == last_id
            ):
                item["answers"] = _answers(prev["text"], text)
            out.append(item)
    return out


def _said(b: Mapping[str, Any]) -> bool:
    """cye: an assistant message with text that a request answered."""
    m = _message(b)
    if b.get("isApiErrorMessage") or b.get("isVirtual") or m.get("model") == SYNTHETIC:
        return False
    return bool("\n".join(_texts(m.get("content"))).strip())


def _ms(stamp: Any) -> float | None:
    from datetime import datetime

    try:
        return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp() * 1000
    except ValueError:
        return None


def _reply_before(conversation: Sequence[Mapping[str, Any]], n: int) -> Any:
    """Ree: the id of the reply the message at `n` follows directly (only attachments, meta notes and replies without
    text between them), when the message was sent after it."""
    b = conversation[n]
    sent = b.get("sentAtMs") if isinstance(b.get("sentAtMs"), (int, float)) else None
    for k in range(n - 1, -1, -1):
        x = conversation[k]
        t = x.get("type")
        if t == "assistant" and _said(x):
            at = _ms(x.get("timestamp"))
            return _message(x).get("id") if sent is None or at is None or sent > at else None
        if t == "assistant":
            continue
        if t == "user" and x.get("isMeta") is True and x.get("origin") is None:
            continue
        if t == "attachment" and (x.get("attachment") or {}).get("type") not in (
            "queued_command",
            "poll_events",
            "teammate_mailbox",
        ):
            continue
        if t not in ("user", "assistant", "attachment"):
            continue
        return None
    return None


def _merge_notes(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for k, e in enumerate(items) if e.get("kind") != "note" or k == 0 or items[k - 1].get("kind") != "note"]


def _cut_middle(item: dict[str, Any], limit: int) -> dict[str, Any]:
    """a9n: an item over `limit` tokens keeps its start and its end."""
    text = str(item.get("text", ""))
    room = limit * BYTES_PER_TOKEN
    size = len(text.encode("utf-8"))
    if item.get("kind") == "card" or size <= room:
        return item
    h = max(0, math.floor(len(text) * (room - len(MIDDLE_CUT)) / size / 2))
    return {**item, "text": text[:h] + MIDDLE_CUT + (text[len(text) - h :] if h else "")}


def _ends_first(items: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """gvs: items taken from both ends in turn until the budget runs out, a note where the rest was."""
    lo, hi, left = 0, len(items), budget
    while lo < hi:
        front = lo <= len(items) - hi
        k = weight([items[lo if front else hi - 1]])
        if k > left:
            return _merge_notes(items[:lo] + [dict(LEFT_OUT)] + items[hi:])
        left -= k
        if front:
            lo += 1
        else:
            hi -= 1
    return list(items)


def fit(items: list[dict[str, Any]], budget: float) -> list[dict[str, Any]]:
    """mvs: the items within the budget."""
    if weight(items) <= budget:
        return list(items)
    limit = max(math.floor(budget / 4), FLOOR)
    g = [_cut_middle(e, limit) for e in items]
    total = weight(g)
    for k, e in enumerate(g):
        if total > budget and e.get("kind") == "reply":
            total += weight([LEFT_OUT]) - weight([e])
            g[k] = dict(LEFT_OUT)
    if weight(g) > budget:
        g = [dict(LEFT_OUT) if e.get("kind") == "card" and weight([e]) > limit else e for e in g]
    g = _merge_notes(g)
    while weight(g) > budget and limit > FLOOR:
        limit = max(math.floor(limit / 2), FLOOR)
        g = [_cut_middle(e, limit) for e in g]
    return g if weight(g) <= budget else _ends_first(g, math.floor(budget - weight([LEFT_OUT])))


def blocked_last(conversation: Sequence[Mapping[str, Any]]) -> bool:
    """The conversation's last reply was a refusal (Che): Claude Code keeps no earlier messages then."""
    for b in reversed(conversation):
        if b.get("type") != "assistant":
            continue
        m = _message(b)
        if b.get("isApiErrorMessage"):
            if m.get("stop_reason") in BLOCKED_STOPS or b.get("apiError") in ("dlp_request_denied", "safety_monitor_blocked"):
                return True
            continue
        if b.get("isVirtual") or b.get("answeredWithoutRequest") or m.get("model") == SYNTHETIC:
            continue
        return m.get("stop_reason") in BLOCKED_STOPS
    return False


def earlier_messages(
    mode: str, conversation: Sequence[Mapping[str, Any]], remaining: set[str], removed_tokens: float
) -> list[dict[str, Any]]:
    """u9n: the list written on the summary, or [] when it would hold no message."""
    if blocked_last(conversation):
        return []
    intro = {"kind": "note", "text": INTRO[mode]}
    budget = min(CAP, removed_tokens * RATIO) - weight([intro])
    items = _merge_notes(
        [dict(LEFT_OUT) if mode == "messages" and e.get("kind") == "reply" else e for e in walk(conversation, remaining)]
    )
    kept = fit(items, budget)
    return [intro, *kept] if any(e.get("kind") != "note" for e in kept) else []
