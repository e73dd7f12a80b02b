"""What a compaction writes for the session's hooks (2.1.3xx, measured with the generated conformance runs).

Claude Code runs the SessionStart hooks again after a compaction and writes their output; a /compact reports its
PreCompact hooks in its output; a partial compaction counts a SessionStart hook's record twice. inspector never runs
a hook (a transcript's commands are not run): what their last run wrote stands in, and the previews say so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from inspector.compact.base import RecordFactory, Slice
from inspector.textutil import as_dict

_HOOK_SOURCE = re.compile(r"\bSessionStart:[a-z]+\b")


def session_start_hook(s: Any, i: int) -> str | None:
    """The hook name of record `i` when it is what a SessionStart hook wrote (an attachment whose `hookEvent` is
    SessionStart), else None."""
    r = s.records[i]
    if r.type != "attachment" or "hook" not in str(r.get("attachment_type") or ""):
        return None
    att = as_dict(s.body(i).get("attachment"))
    return str(att.get("hookName") or "SessionStart") if att.get("hookEvent") == "SessionStart" else None


def session_start_hooks(sl: Slice) -> list[dict[str, Any]]:
    """The records the session's SessionStart hooks wrote at their last run before the slice's point: the last one on
    the chain whose `hookEvent` is SessionStart, and those of the same name among the attachments written with it
    (next to it in the file: a compaction's tail can keep an earlier run's records next to it on the chain), or []."""
    s = sl.session
    recs = s.records
    last = next((i for i in reversed(s.conversation.logical_chain) if i <= sl.point and session_start_hook(s, i)), None)
    if last is None:
        return []
    name = session_start_hook(s, last)
    lo = hi = last
    while lo > 0 and recs[lo - 1].type == "attachment":
        lo -= 1
    while hi + 1 < len(recs) and hi + 1 <= sl.point and recs[hi + 1].type == "attachment":
        hi += 1
    return [s.body(i) for i in range(lo, hi + 1) if session_start_hook(s, i) == name]


def compact_stdout(sl: Slice, plain: str) -> tuple[str, str | None]:
    """The output /compact writes (`plain`), with the lines its PreCompact hooks add ("PreCompact [command] completed
    successfully: ...", 2.1.332 seed 83009) as the last /compact before the point wrote them: inspector never runs a
    hook, so the last run's report stands in (None when the session's last /compact reported none: the note's)."""
    s = sl.session
    head = plain.split("</local-command-stdout>", 1)[0]
    for i in reversed(s.conversation.logical_chain):
        if i > sl.point or s.records[i].type != "user":
            continue
        content = as_dict(s.body(i).get("message")).get("content")
        if isinstance(content, str) and content.startswith(head) and content != plain:
            extra = content[len(head) :].split("</local-command-stdout>", 1)[0]
            if extra.startswith("\n") and "PreCompact" in extra:
                return head + extra + "</local-command-stdout>", (
                    "the PreCompact hooks' report in /compact's output is the last /compact's (inspector never runs a hook)"
                )
            break
        if isinstance(content, str) and content == plain:
            break
    return plain, None


def hooks_note(n: int, written: bool) -> str:
    """What a preview says of the SessionStart hooks Claude Code runs again after a compaction (n records at their last
    run): written as they were (`written`), or only named (a release whose compaction inspector writes without them)."""
    them = f"the {n} record{'s' if n != 1 else ''} they wrote at their last run"
    if written:
        return (
            "Claude Code runs the session's SessionStart hooks again after a compaction (source compact); inspector never "
            f"runs them: {them} (their output, as Claude Code sends it) stand{'s' if n == 1 else ''} in for theirs"
        )
    return (
        "a live compaction would also run the session's SessionStart hooks again (source compact) and add what they "
        f"print; inspector never runs them ({them} are not in this preview)"
    )


def hook_twins(s: Any, summarized: Sequence[int]) -> int:
    """How many more messages than records Claude Code counts in a partial compaction's messagesSummarized: one for
    each SessionStart hook record summarized that was written since the last compaction (its hook's result is among
    the process's messages twice, the second never written: 2.1.332 REPL seeds 82050, 82117, 82161, 82229 and 82242
    each counted one more than their summarized records with one such record among them, at the session's start or
    after a compaction, and none more without). A hook record an earlier compaction kept in its tail is there once:
    2.1.328 REPL seed 96015's "from" summarized two hook records, one kept from before the last compaction, and
    counted one more than its records."""
    if not summarized:
        return 0
    recs = s.records
    end = max(summarized)
    since = next((k for k in range(end, -1, -1) if recs[k].is_compact_boundary), -1)
    return sum(1 for i in summarized if i > since and session_start_hook(s, i))


def as_compact_hook(rec: dict[str, Any], factory: RecordFactory) -> dict[str, Any]:
    """A SessionStart hook's record as its run after a compaction writes it: named for the `compact` source (its name
    and its rendering), with a call id of its own."""
    att = rec.get("attachment") or {}
    if isinstance(att.get("hookName"), str):
        att["hookName"] = _HOOK_SOURCE.sub("SessionStart:compact", att["hookName"])
    if isinstance(att.get("toolUseID"), str) and att["toolUseID"] != "SessionStart":
        att["toolUseID"] = factory.new_id()
    for r in rec.get("rendered") or ():
        if isinstance(r, dict) and isinstance(r.get("content"), str):
            r["content"] = _HOOK_SOURCE.sub("SessionStart:compact", r["content"])
    return rec


# the releases whose REPL holds a subagent's progress among its messages without writing it: 2.1.84 writes each
# agent_progress record, 2.1.85 writes none (bisected with the REPL on kept scenario found_repl_202); up to 2.1.197 a
# partial compaction counts them in messagesSummarized, 2.1.198 does not (bisected the same way)
PROGRESS_HELD_FROM = (2, 1, 85)
PROGRESS_HELD_UNTIL = (2, 1, 198)
AGENT_TOOLS = ("Agent", "Task")


def held_progress(s: Any, summarized: Sequence[int], version: str | None, end: int, since: int | None) -> tuple[int, int]:
    """How many more messages than records Claude Code 2.1.85-2.1.197 counts in a partial compaction's
    messagesSummarized for the subagents it ran (their progress, which its REPL holds among its messages and never
    writes), and of how many calls the count is not known (their subagent's transcript is not there). Each Agent (or
    Task) call of the compacting process among the summarized records added one message for its subagent's prompt and
    one for each tool call and tool result of the subagent (the 2.1.88 and 2.1.197 code: `agent_progress`, sent to
    the REPL, which appends it; a text reply of the subagent is not sent). Measured on 2.1.104, 2.1.124, 2.1.150,
    2.1.174 and 2.1.197 (REPL seed 202: three calls of a subagent that answered in text, three more than the records;
    2.1.198 and 2.1.219 none). A call of an earlier process than the one that compacts (at `end`: engine
    `_compacting_end`) is not counted: a resumed process loads the transcript, which holds none of them; nor one
    written before the last compaction (`since`, its boundary), which its tail kept: the kept messages are put back
    without their progress (2.1.174 REPL seed 79200: two calls a reactive compaction kept, summarized "up to" later,
    counted none)."""
    from inspector.claude.release import at_or_after
    from inspector.tokens.context import same_process

    if not summarized or not at_or_after(version, PROGRESS_HELD_FROM) or at_or_after(version, PROGRESS_HELD_UNTIL):
        return 0, 0
    recs = s.records
    calls = [
        tid
        for i in summarized
        if recs[i].type == "assistant" and (since is None or i > since) and same_process(s, i, end)
        for tid, name in recs[i].tool_uses
        if name in AGENT_TOOLS
    ]
    if not calls:
        return 0, 0
    by_call = {sa.spawned_by: sa for sa in s.subagents if sa.spawned_by and sa.path is not None}
    extra = unknown = 0
    for tid in calls:
        sa = by_call.get(tid)
        extra += 1
        if sa is None:
            unknown += 1
            continue
        try:
            sub = s.load_subagent(sa)
        except OSError:
            sub = None
        if sub is None:
            unknown += 1
            continue
        extra += sum(len(r.tool_uses) + len(r.tool_results) for r in sub.records if r.type in ("assistant", "user"))
    return extra, unknown


# attachments are written from 2.1.97: up to 2.1.96 the transcript writer drops every `attachment` record (bisected on
# its filter; docs/binary-findings.md), which the REPL holds among its messages all the same
ATTACHMENTS_WRITTEN_FROM = (2, 1, 97)
TASK_TOOLS = ("TaskCreate", "TaskUpdate")
# TURNS_SINCE_WRITE and TURNS_BETWEEN_REMINDERS of the task reminder, 2.1.20-2.1.96 (read in 2.1.20, 2.1.36, 2.1.53,
# 2.1.72, 2.1.88 and 2.1.96; 2.0.76 had 7 and 3, but no partial compaction)
REMINDER_TURNS = 10


def held_reminders(sl: Slice, summarized: Sequence[int], version: str | None, end: int) -> int:
    """How many task reminders Claude Code's REPL held among the summarized messages without writing them (releases
    before `ATTACHMENTS_WRITTEN_FROM`). Before each request (after a typed prompt, and after the tool results a reply
    continues from) the REPL adds a `task_reminder` attachment when its messages since the last compaction hold ten
    replies (records of a reply, thinking-only ones not counted) since the last TaskCreate or TaskUpdate call and ten
    since the last such reminder (the 2.1.36-2.1.96 code). Measured on 2.1.88 by logging the messages a partial
    compaction summarized (REPL seeds 172000 and 91000: one and two reminders, one right after the prompt picked).
    Only the compacting process's (up to `end`) are held: a resumed process loads none (they were never written), and
    counts its replies afresh."""
    from inspector.claude.release import at_or_after
    from inspector.compact.reattach import _is_prompt
    from inspector.tokens.context import same_process
    from inspector.transcript.records import F_THINKING_ONLY

    if not summarized or version is None or at_or_after(version, ATTACHMENTS_WRITTEN_FROM):
        return 0
    recs, chain, inside = sl.session.records, sl.chain, set(summarized)
    since_task = since_reminder = held = 0
    for k, i in enumerate(chain):
        r = recs[i]
        if r.type == "assistant":
            if r.flags & F_THINKING_ONLY:
                continue
            since_reminder += 1
            since_task = 0 if any(name in TASK_TOOLS for _, name in r.tool_uses) else since_task + 1
            continue
        nxt = recs[chain[k + 1]] if k + 1 < len(chain) else None
        if nxt is None or nxt.type != "assistant" or not (_is_prompt(r) or r.tool_results):
            continue  # no request follows here (a tool result before the round's last, a command, the end)
        if since_task >= REMINDER_TURNS and since_reminder >= REMINDER_TURNS and same_process(sl.session, i, end):
            since_reminder = 0
            held += i in inside  # the reminder follows this record: summarized with it
    return held


def written_progress(sl: Slice, summarized: Sequence[int], version: str | None, end: int) -> int:
    """How many more messages than the summarized records Claude Code up to 2.1.84 counts for the progress it wrote:
    each `progress` record hanging below a summarized record (the REPL appends it there, and a resume loads it: it is
    on the chain), and, for each hook's progress, the hook's result, an attachment the compacting process held without
    writing it (before `ATTACHMENTS_WRITTEN_FROM`). Logged from 2.1.36's code (REPL seed 193002, "from" the first
    prompt: 58 messages, its 45 records, 6 hook_progress records of an internal PostToolUse:Read hook, a hook_success
    after each, one task reminder). From 2.1.85 no progress is written (`held_progress` counts a subagent's)."""
    from inspector.claude.release import at_or_after
    from inspector.tokens.context import same_process

    if not summarized or version is None or at_or_after(version, PROGRESS_HELD_FROM):
        return 0
    s = sl.session
    recs, parent, inside = s.records, s.conversation.parent, set(summarized)
    results_held = not at_or_after(version, ATTACHMENTS_WRITTEN_FROM)
    n = 0
    for i in range(sl.boundary or 0, len(recs)):
        r = recs[i]
        if r.type != "progress":
            continue
        # the record it hangs from, past any progress above it (the tree bridges progress for every other record, not
        # for a progress record itself); a loop of progress records, in a damaged file, hangs from nothing
        k, seen = parent.get(i), {i}
        while k is not None and recs[k].type == "progress" and k not in seen:
            seen.add(k)
            k = parent.get(k)
        if k is None or k in seen or k not in inside:
            continue
        n += 1
        if results_held and r.get("progress_type") == "hook_progress" and same_process(s, i, end):
            n += 1
    return n


def summarized_count(sl: Slice, summarized: Sequence[int], version: str | None) -> tuple[int, list[str]]:
    """A partial compaction's messagesSummarized: the records summarized, with what the REPL holds beside them
    (`hook_twins`, `held_progress`, `held_reminders`, `written_progress`), and the note of a count not known in full."""
    from inspector.claude.release import at_or_after
    from inspector.compact.reattach import _compacting_end

    s = sl.session
    end = _compacting_end(sl)
    held, unseen = held_progress(s, summarized, version, end, sl.boundary)
    held += held_reminders(sl, summarized, version, end) + written_progress(sl, summarized, version, end)
    notes = [held_note(unseen)] if unseen else []
    if version is not None and not at_or_after(version, ATTACHMENTS_WRITTEN_FROM):
        notes.append(UNWRITTEN_NOTE)
    return len(summarized) + hook_twins(s, summarized) + held, notes


# 2.1.88 REPL seeds 75026 and 181001: "summarize from" a /compact command counted the file it re-attached (75026: the
# messages summarized logged from its code) and three more (181001: its summary request shows a SessionStart:compact
# hook's output and a UserPromptSubmit hook's among them); /compact puts its breadcrumbs before the compaction's
# attachments (`[boundary, summary, caveat, command, output, ...attachments, ...hook output]`, the 2.1.88 code)
UNWRITTEN_NOTE = (
    "this release wrote no attachments: messagesSummarized also counts those its REPL held among the summarized "
    "messages (a hook's output after a prompt, what a /compact re-attached after its output), which no record shows; "
    "inspector counts its task reminders only, by their rule"
)


def held_note(unseen: int) -> str:
    """What a partial compaction's count leaves out when a subagent's transcript is not there (`held_progress`)."""
    return (
        f"messagesSummarized counts one message for each of {unseen} subagent call(s) whose transcript is not there: "
        "Claude Code also counted one for each tool call and result of that subagent (its progress, which this "
        "release's REPL held without writing it)"
    )


def trailing_records(sl: Slice) -> list[int]:
    """The bookkeeping record below the session's last message (a REPL's turn_duration), when the compacting
    process has it among its messages: the one that wrote it does, and so does a resumed one of a release whose
    `--resume` continues from it (2.1.328 lists it among a kept tail's preservedMessages and counts it in a partial
    compaction's messagesSummarized)."""
    from inspector.claude.measured import resume_parent
    from inspector.tokens.context import same_process

    conv = sl.session.conversation
    tail = conv.trailing_leaf
    if tail is None or sl.point != conv.leaf:
        return []
    live = same_process(sl.session, sl.boundary, len(sl.session.records))
    if not (live or resume_parent(conv, sl.session.version)[0] == sl.session.records[tail].uuid):
        return []
    # the records between the last message and it too (a prompt_snapshot written after the reply: 2.1.328 counted it
    # in a partial "from" compaction's messagesSummarized, REPL seed 14003)
    return conv.below_leaf()
