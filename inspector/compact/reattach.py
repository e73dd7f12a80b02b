"""What a compaction puts back after its summary, as the session's release writes it: the files it re-attaches
(`restored_file_bodies`), the tools, agents, skills, environment and model it re-announces (`reannouncements`), the
background tasks it reports (`task_statuses`) and the tools it names as used (`tools_used`); and the release gates
of those records' forms (`form_version`, `_as_release_renders`: what each release renders, and as which role).
`engine.engine_compact` writes them after the boundary and the summary.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC
from typing import Any

from inspector.claude.models import (
    TASK_TOOLS,
    defers_tools,
    listing_chars_per_token,
    skill_listing_rules,
    task_tools,
)
from inspector.claude.release import at_or_after, parse_version
from inspector.claude.requests import rebuild_requests
from inspector.claude.versions import TAIL, rules_for
from inspector.compact.base import (
    Slice,
)
from inspector.textutil import timestamp_key
from inspector.tokens.context import (
    EXITS_RECORDED_FROM,  # the first release that writes a cost-state record as a process exits (bisected)
    FILE_TOOLS,
    FileState,
    file_states,
    is_unchanged_stub,
    process_exits,
    result_of,
    same_process,
)
from inspector.tokens.estimate import js_len, rough_328
from inspector.tokens.thresholds import Settings
from inspector.transcript.records import iter_blocks
from inspector.transcript.session import in_force, model_in_force, same_model

MAX_FILES = 5  # files re-attached after a compaction [E post_compact_file_restore_max5]


MAX_FILE_TOKENS = 5_000  # a file over this (rough) is not re-attached whole


# the re-announcements that follow a compaction, in the order 2.1.328 writes them
REANNOUNCED = ("deferred_tools_delta", "agent_listing_delta", "skill_listing", "environment", "model")


# the first release that lists the skills again after a compaction (bisected with generated seed 147100: 2.1.303 and
# 2.1.300, 2.1.200, 2.1.163 write the file, agent, environment and model attachments after the boundary, no skill
# listing; 2.1.304, 2.1.305, 2.1.307, 2.1.314 and 2.1.328 write one)
SKILLS_RELISTED_FROM = (2, 1, 304)


def form_version(s: Any) -> str | None:
    """The release whose forms and rules a compaction by this engine follows: the session's own where its release had
    the engine (2.1.159 and later), else today's (None): a what-if on an older session is resumed by today's Claude
    Code, which writes, sends and sizes as today's does."""
    return s.version if TAIL in rules_for(s.version).era.strategies else None


ACCUMULATED = frozenset({"deferred_tools_delta", "agent_listing_delta", "skill_listing"})  # deltas: the state is all of them


def _segment(sl: Slice) -> list[int]:
    return [i for i in sl.chain if not sl.session.records[i].is_compact_boundary]


def _attachments_of(s: Any, indexes: list[int], kind: str) -> list[int]:
    return [i for i in indexes if s.records[i].type == "attachment" and s.records[i].get("attachment_type") == kind]


def _latest_payload(s: Any, kind: str, upto: int | None = None) -> dict[str, Any] | None:
    """The last attachment of `kind` on the history, at or before record `upto` (None: the session's end): a
    compaction at an earlier message knows nothing written after it."""
    i = _latest_index(s, kind, upto)
    return s.body(i) if i is not None else None


def _latest_index(s: Any, kind: str, upto: int | None = None) -> int | None:
    """The record index of `_latest_payload`'s attachment, or None."""
    for i in reversed(s.conversation.logical_chain):
        if (upto is None or i <= upto) and s.records[i].type == "attachment" and s.records[i].get("attachment_type") == kind:
            return i
    return None


def _rendered_fields(body: Mapping[str, Any]) -> dict[str, Any]:
    return {k: json.loads(json.dumps(v)) for k, v in body.items() if k.startswith("rendered")}


DELTA_KEYS = {"deferred_tools_delta": ("addedNames", "removedNames"), "agent_listing_delta": ("addedTypes", "removedTypes")}


def _announced(s: Any, indexes: list[int], kind: str, *, readded: bool = True) -> tuple[str, ...] | None:
    """What the announcements of `kind` among these records add up to (a delta adds and removes names; a skill
    listing is the whole list), in the order first added; None when there is none. `readded` False: a tool only said
    to be "available again (announced earlier in this conversation)" does not count as announced unless one of these
    records listed it earlier (2.1.332 counts only the announcements that list a tool, and re-announces it whole once
    the earlier one is summarized; kept, it still counts: gen_15005)."""
    found = _attachments_of(s, indexes, kind)
    if not found:
        return None
    if kind not in DELTA_KEYS:
        names = (s.body(found[-1]).get("attachment") or {}).get("names")
        return tuple(names) if isinstance(names, list) else None
    add_key, rm_key = DELTA_KEYS[kind]
    state: list[str] = []
    listed: set[str] = set()  # the names an announcement among these listed (added, not only said to be back)
    for i in found:
        att = s.body(i).get("attachment") or {}
        gone = set(x for x in att.get(rm_key) or () if isinstance(x, str))
        back = set(x for x in att.get("readdedNames") or () if isinstance(x, str))
        skip = set() if readded else back - listed  # back, and listed by an earlier one here: announced all the same
        added = [x for x in att.get(add_key) or () if isinstance(x, str)]
        state = [x for x in state if x not in gone] + [x for x in added if x not in state and x not in skip]
        listed.update(x for x in added if x not in back)
    return tuple(state)


_TOOLS_HEADER = "The following deferred tools are now available via ToolSearch."


def _merged_tools_delta(s: Any, found: list[int], names: set[str]) -> dict[str, Any] | None:
    """One deferred-tools announcement adding `names` (sorted, as 2.1.328 merges them), made from the last
    announcement that only added tools and lists them by name alone; None when there is none to make it from."""
    for i in reversed(found):
        body = s.body(i)
        att = body.get("attachment") or {}
        rendered = body.get("rendered")
        if (
            att.get("removedNames")
            or att.get("addedLines") != att.get("addedNames")
            or not isinstance(rendered, list)
            or not rendered
        ):
            continue
        text = rendered[0].get("content") if isinstance(rendered[0], dict) else None
        if not isinstance(text, str) or _TOOLS_HEADER not in text or ":\n" not in text:
            continue
        head = text.split(":\n", 1)[0] + ":\n"
        lines = sorted(names)
        new_att = {**att, "addedNames": lines, "addedLines": lines}
        return {
            **body,
            "attachment": new_att,
            "rendered": [{**rendered[0], "content": head + "\n".join(lines) + "\n</system-reminder>"}],
        }
    return None


def _announced_under(s: Any, history: list[int], model: str) -> bool:
    """Whether a deferred-tools announcement of `history` was written while `model` was in force (or before any
    record named a model: then it may well have been)."""
    cur: str | None = None
    for i in history:
        got = model_in_force(s.records[i])
        if got:
            cur = got
        if (cur is None or same_model(cur, model)) and s.records[i].type == "attachment":
            if s.records[i].get("attachment_type") == "deferred_tools_delta":
                return True
    return False


def _stretch_end(s: Any, history: list[int], model: str) -> int | None:
    """The length of `history` up to the end of its last stretch run by `model` (None: the session never ran it)."""
    cur: str | None = None
    end: int | None = None
    for p, i in enumerate(history):
        got = model_in_force(s.records[i])
        if got:
            cur = got
        if same_model(cur, model):
            end = p + 1
    return end


def reannouncements(
    sl: Slice, point_chain: list[int], kept: Sequence[int] = (), model: str | None = None, settings: Settings | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """The attachments a compaction re-announces, as the session last had them: (bodies to copy, notes).

    What the kept records already announce is not announced again: the environment or the model when a kept record
    announces it; for the tool, agent and skill listings, what the session's announcements add up to against what
    the kept ones do (nothing when they are the same; the announcement that says it all when the kept ones say
    nothing: a tail that removed four tools and an announcement of eleven re-announce the eleven, as 2.1.328 does)."""
    s = sl.session
    seg = [i for i in point_chain]
    out: list[dict[str, Any]] = []
    notes: list[str] = []
    in_kept = {s.records[i].get("attachment_type") for i in kept if s.records[i].type == "attachment"}
    upto = _compacting_end(sl)  # what the compacting process has announced: nothing written after it
    history = [i for i in s.conversation.logical_chain if i <= upto]
    tools_history = history  # the deferred tools depend on the model: a process on another model has its own list
    version = parse_version(s.version)
    tasks: bool | None = None  # a model the session never ran: whether it gets the task tools
    if model is not None and not same_model(model, s.main_model):
        end = _stretch_end(s, history, model)
        if end is not None:
            tools_history = history[:end]
        else:
            tasks = task_tools(model, version)
            if tasks is None:
                notes.append(
                    f"the session never ran {model}: its deferred tools are re-announced as the session last had them "
                    "(Claude Code lists the tools that model gets)"
                )
    compacting = _compacting_model(sl, model)
    defers = defers_tools(compacting, version)
    if tasks is None and compacting is not None and defers and not _announced_under(s, history, compacting):
        # the model in force announced no tools of its own (it came after one that loads every tool): the session's
        # list, with the task tools as the release gives them to it (2.1.332 seed 112059: claude-opus-5, then
        # claude-3-5-sonnet, then claude-opus-4-6[1m], whose compaction listed TaskCreate and the rest)
        tasks = task_tools(compacting, version)
    relisting = settings is not None and skill_listing_rules(version) is not None
    for kind in REANNOUNCED:
        if kind in in_kept and kind not in ACCUMULATED:
            continue
        if kind == "skill_listing" and not at_or_after(form_version(s), SKILLS_RELISTED_FROM):
            continue  # not listed again after a compaction by this release
        if kind == "deferred_tools_delta" and defers is False:
            if _attachments_of(s, history, kind):
                notes.append(f"{compacting} gets every tool loaded: no deferred tools are re-announced (2.1.328-2.1.332)")
            continue
        shown = _announced(s, list(kept), kind, readded=False) if kind in in_kept else None
        hist = tools_history if kind == "deferred_tools_delta" else history
        now = _announced(s, hist, kind) if kind in ACCUMULATED else None
        if kind == "deferred_tools_delta" and tasks is not None and now is not None:
            # the session's list, with the task tools as the release gives them to the new model
            fresh = tuple(x for x in now if x not in TASK_TOOLS) + (TASK_TOOLS if tasks else ())
            if set(fresh) != set(now):
                shown_set = set(shown or ())
                if set(fresh) == shown_set:
                    continue
                merged = _merged_tools_delta(s, _attachments_of(s, hist, kind), set(fresh) - shown_set)
                if merged is not None:
                    out.append(merged)
                    continue
                notes.append(
                    f"{model} gets {'the' if tasks else 'no'} task tools: the session's deferred tools are re-announced "
                    "as it last had them (no announcement of them by name alone to make the new one from)"
                )
        if shown is not None and now is not None and (set(now) == set(shown) if kind in DELTA_KEYS else now == shown):
            continue  # the kept records say it all
        in_hist = set(hist) if hist is not history else None
        found = (
            _attachments_of(s, [i for i in seg if in_hist is None or i in in_hist], kind) or _attachments_of(s, hist, kind)[-1:]
        )
        if not found:
            continue
        if kind == "skill_listing" and not relisting:
            notes += _listing_written_for(s, found[-1], compacting)
        if kind not in ACCUMULATED:
            out.append(s.body(found[-1]))
            continue
        if len(found) == 1 and not shown:
            out.append(s.body(found[0]))
            continue
        # what is left to announce: all of it, less what the kept records announce (a delta of names)
        want = (set(now or ()) - set(shown or ())) if kind in DELTA_KEYS else None
        whole = [
            i
            for i in _attachments_of(s, hist, kind)
            if (
                _announced(s, [i], kind) == now
                if want is None
                else set(_announced(s, [i], kind) or ()) == want
                and not (s.body(i).get("attachment") or {}).get(DELTA_KEYS[kind][1])
            )
        ]
        merged = _merged_tools_delta(s, found, want) if not whole and kind == "deferred_tools_delta" and want else None
        if whole:  # one announcement says what is left to say
            out.append(s.body(whole[-1]))
        elif merged is not None:  # none does: one that says it, as Claude Code writes it (the names sorted)
            out.append(merged)
        else:
            out += [s.body(i) for i in found]
            notes.append(
                f"the session announced {kind.replace('_', ' ')} {len(found)} times since its last compaction: "
                "re-announced as those announcements in order (Claude Code would send one that merges them)"
            )
    if (
        compacting is not None
        and defers
        and not _attachments_of(s, history, "deferred_tools_delta")
        and _ran_loading_every_tool(s, history, version)
    ):
        made = _first_tools_delta(s, sl.point, compacting)
        if made is not None:
            out.insert(0, made)
            notes.append(
                f"{compacting} came after a model that gets every tool loaded: its deferred tools, announced after the "
                "compaction, are the deferrable ones of the tools its last request carried"
            )
        else:
            notes.append(
                f"no record lists the deferred tools of {compacting}: after a /model switch from a model that gets "
                "every tool loaded, Claude Code announces the new model's deferred tools after a compaction "
                "(2.1.332), which inspector cannot write without a recorded request of it"
            )
    if relisting:
        assert settings is not None
        for k, body in enumerate(out):
            if (body.get("attachment") or {}).get("type") == "skill_listing":
                out[k], said = _relisted(s, body, compacting, settings)
                notes += said
    return out, notes


# the built-in tools 2.1.328 and 2.1.332 defer (every name their deferred_tools_delta records listed in the generated
# runs: 12,000 announcements; the plan-mode pair in the REPL), and the text that announces them
DEFERRED_BUILTINS = frozenset(
    {"CronCreate", "CronDelete", "CronList", "EnterPlanMode", "ExitPlanMode", "EnterWorktree", "ExitWorktree", "Monitor"}
    | {"NotebookEdit", "SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskStop", "TaskUpdate", "WebFetch", "WebSearch"}
)


TOOLS_ANNOUNCED = (
    _TOOLS_HEADER + " Their schemas are NOT loaded \u2014 calling them directly will fail with InputValidationError. Use "
    'ToolSearch with query "select:<name>[,<name>...]" to load tool schemas before calling them:'
)


def _first_tools_delta(s: Any, point: int, model: str) -> dict[str, Any] | None:
    """The deferred-tools announcement a compaction by `model` writes when no record announced any (the session
    began on a model that gets every tool loaded: 2.1.332 seeds 110001, 110035, 112117), made as 2.1.328-2.1.332
    write it: the deferrable tools (`DEFERRED_BUILTINS`, MCP tools) of the last main-thread request before the point,
    which carried every tool, the task tools as the release gives them to the model, sorted. None without such a
    request. The caller has asked `defers_tools` whether the model defers them on this release."""
    v = parse_version(s.version)
    last = None
    for q in rebuild_requests(s):
        if q.index <= point and q.agent_id is None and isinstance(q.request.get("tools"), list):
            last = q
    if last is None:
        return None
    names: set[str] = {t["name"] for t in last.request["tools"] if isinstance(t, dict) and isinstance(t.get("name"), str)}
    if "ToolSearch" in names:
        return None  # it deferred already: its announcements would be in the records
    deferred = {n for n in names if n in DEFERRED_BUILTINS or n.startswith("mcp__")} - set(TASK_TOOLS)
    if task_tools(model, v):
        deferred |= set(TASK_TOOLS)
    lines = sorted(deferred)
    if not lines:
        return None
    return {
        "type": "attachment",
        "attachment": {
            "type": "deferred_tools_delta",
            "addedNames": lines,
            "addedLines": lines,
            "removedNames": [],
            "wireHiddenNames": [],
            "readdedNames": [],
        },
        "rendered": [{"content": "<system-reminder>\n" + TOOLS_ANNOUNCED + "\n" + "\n".join(lines) + "\n</system-reminder>"}],
        "renderedRole": "system",
    }


def _listing_written_for(s: Any, k: int, model: str | None) -> list[str]:
    """A note when the skill listing copied from record `k` was written under another model than the one that
    compacts: Claude Code renders the listing for the compacting model's window (the skills' descriptions where they
    fit its budget, their names alone where not: 2.1.328 seed 98006, an unknown model with a 120,000 context listed
    names, claude-sonnet-4-6 after a /model switch the descriptions), which inspector cannot when no listing of that
    model is in the session."""
    was = in_force(s.records[i] for i in range(k, -1, -1))
    if model is None or was is None or same_model(was, model):
        return []
    return [
        f"the skill listing is re-announced as {was} had it; Claude Code renders it for {model}'s context window "
        "(with the skills' descriptions where they fit, their names alone where not), so its text may differ"
    ]


def _relisted(s: Any, body: dict[str, Any], model: str | None, settings: Settings) -> tuple[dict[str, Any], list[str]]:
    """A re-announced skill listing as the compacting process renders it (2.1.328 seed 98006): Claude Code lists
    the skills afresh for its model's window, `- name: description` for every skill when all fit the budget
    (models.json `skill_listing`). A skill the copied listing named alone gets its description from a listing of
    the session that had it, else from the release's built-in skills, each checked against the listing's digest.
    When they do not all fit, or a description is not known, the copy stays as it was, and a note says so when the
    listing was another model's."""
    from inspector.tokens.thresholds import thresholds

    rules = skill_listing_rules(parse_version(s.version))
    att = body.get("attachment") or {}
    names, digests, content = att.get("names"), att.get("digests"), att.get("content")
    k = s.conversation.by_uuid.get(body.get("uuid"))
    fallback = _listing_written_for(s, k, model) if k is not None else []
    if rules is None or not (isinstance(names, list) and isinstance(digests, list) and isinstance(content, str)):
        return body, fallback
    entries = listing_entries(content, names)
    if entries is None or len(digests) != len(entries):
        return body, fallback
    known = _known_descriptions(s, rules)
    full: list[str] = []
    for (name, desc), digest in zip(entries, digests, strict=True):
        if desc is None:
            desc = next((d for d in known.get(name, ()) if skill_digest(name, d) == digest), None)
            if desc is None:
                return body, fallback
        full.append(f"- {name}: {_cut(desc, int(rules['max_description']))}")
    window = thresholds(settings.with_(model=model), version=s.version).model_window
    budget = max(1, int(window * listing_chars_per_token(model, rules) * float(rules["budget_fraction"])))
    text = "\n".join(full)
    if sum(_width(x) for x in full) + len(full) - 1 > budget:
        return body, fallback  # over the budget: which skills keep their descriptions needs what no record says
    if text == content:
        return body, []
    out = json.loads(json.dumps(body))
    out["attachment"]["content"] = text
    for r in out.get("rendered") or ():
        if isinstance(r, dict) and isinstance(r.get("content"), str):
            r["content"] = r["content"].replace(content, text)
    return out, [
        f"the skill listing is rendered for {model or 'the compacting model'}'s window ({budget:,} characters): every "
        "skill with its description, as Claude Code lists them afresh after a compaction"
    ]


def _cut(text: str, cap: int) -> str:
    """`y3n`: a description longer than `cap` UTF-16 units cut to cap - 1 of them and an ellipsis."""
    if js_len(text) <= cap:
        return text
    units = text.encode("utf-16-le", "surrogatepass")[: 2 * (cap - 1)]
    return units.decode("utf-16-le", "surrogatepass") + "…"


def _width(text: str) -> int:
    """The columns a line takes (`se`: Bun.stringWidth): wide and full-width characters two, combining marks and
    zero-width ones none, every other one."""
    import unicodedata

    n = 0
    for ch in text:
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        n += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return n


def listing_entries(content: str, names: list[Any]) -> list[tuple[str, str | None]] | None:
    """(name, description, or None for a name alone) of each skill a listing's text names, in the order of its
    `names`; None when the text is not made of those entries (a name shown with its plugin, say)."""
    out: list[tuple[str, str | None]] = []
    pos = 0
    for k, name in enumerate(names):
        head = f"- {name}"
        if not isinstance(name, str) or not content.startswith(head, pos):
            return None
        start = pos + len(head)
        end = content.find(f"\n- {names[k + 1]}", start) if k + 1 < len(names) else len(content)
        if end < 0:
            return None
        rest = content[start:end]
        if rest and not rest.startswith(": "):
            return None
        out.append((name, rest[2:] if rest else None))
        pos = end + 1
    return out if pos >= len(content) else None


def skill_digest(name: str, description: str) -> str:
    """A skill listing's digest of one skill (`Ovt`): the first 16 hex digits of the SHA-256 of JSON [name,
    description]."""
    import hashlib

    raw = json.dumps([name, description], separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")
    return hashlib.sha256(raw).hexdigest()[:16]


def _known_descriptions(s: Any, rules: Mapping[str, Any]) -> dict[str, list[str]]:
    """Every description the session's skill listings show, and the release's built-in ones."""
    out: dict[str, list[str]] = {}
    for i, r in enumerate(s.records):
        if r.type != "attachment" or r.get("attachment_type") != "skill_listing":
            continue
        att = s.body(i).get("attachment") or {}
        names, content = att.get("names"), att.get("content")
        for name, desc in (listing_entries(content, names) or []) if isinstance(names, list) and isinstance(content, str) else []:
            if desc is not None and desc not in out.setdefault(name, []):
                out[name].append(desc)
    for name, desc in (rules.get("builtin") or {}).items():
        out.setdefault(name, []).append(desc)
    return out


def _compacting_end(sl: Slice) -> int:
    """Where the process that compacts at the slice's point is: at the point itself, or, at the session's last
    message, after every record the file has (a session whose process exited is compacted by a new one)."""
    s = sl.session
    chain = s.conversation.chain
    return len(s.records) if chain and sl.point >= chain[-1] else sl.point


_NOTIFIED = re.compile(r"<task-id>([^<]+)</task-id>.*?<status>([a-z_]+)</status>", re.S)


TASK_TEXT = (
    "<system-reminder>\nTask {id} (type: local_agent) (status: {status}) (description: {description}) Read the output "
    "file to retrieve the result: {path} (if you cannot read it and do not already have its result, ask agent {id} with "
    "SendMessage)\n</system-reminder>"
)


# a finished agent's task_status by release (generated seed 147102 on 2.1.200-2.1.328, and the binaries): no text
# recorded before 2.1.268 (rendered as sent); the offer to ask the agent from 2.1.327 (bisected: 2.1.326 ends at the
# path); `canContinueAgent` from 2.1.293 (in the 2.1.293 binary, not in 2.1.292's)
TASK_ASK_FROM = (2, 1, 327)


TASK_CONTINUE_FROM = (2, 1, 293)


TASK_TEXT_BEFORE_ASK = TASK_TEXT.split(" (if you cannot")[0] + "\n</system-reminder>"


def _agent_finished(s: Any, agent_id: str, by: str | None) -> bool:
    """Whether a subagent's own transcript has its final reply (one that calls no tool) by the time `by` (an ISO
    timestamp; None: at all)."""
    sub = next((a for a in s.subagents if a.agent_id == agent_id and a.path is not None), None)
    if sub is None:
        return False
    try:
        lines = sub.path.read_bytes().splitlines()
    except OSError:
        return False
    for raw in lines:
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        if not (isinstance(rec, dict) and rec.get("type") == "assistant"):
            continue
        content = (rec.get("message") or {}).get("content")
        if isinstance(content, list) and not any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content):
            return by is None or str(rec.get("timestamp") or "") <= by
    return False


RUNNING_TEXT = (
    '<system-reminder>\nBackground agent "{description}" ({id}) is still running. Do NOT spawn a duplicate. You '
    "will be notified when it completes. You can read partial output at {path} or send it a message with "
    "SendMessage.\n</system-reminder>"
)


# how long Claude Code keeps a finished background agent it has told the model about (2.1.328's OH, 2.1.332's V1:
# `evictAfter` = the notification's time + 30 s); past it, the next pass over its tasks forgets the agent (the task
# panel's one-second tick while it is shown, and each turn's attachments), and a compaction no longer re-announces it
EVICT_AFTER_S = 30.0


def notification_words(body: Mapping[str, Any]) -> str | None:
    """The words of a record that can tell the model a background agent ended (`_NOTIFIED` finds them): a queued
    command's prompt (told as the model worked), or a user turn of a task notification's own (told while it was idle:
    fresh 2.1.328 REPL seed 67005, an agent told so 2 minutes before a "summarize up to here" was not re-announced);
    None for any other record. The harness dates a rewind pick by the same words (`conformance.replay`)."""
    if body.get("type") == "attachment":
        a = body.get("attachment")
        said = a.get("prompt") if isinstance(a, dict) and a.get("type") == "queued_command" else None
        return said if isinstance(said, str) else None
    msg = body.get("message")
    if body.get("type") != "user" or body.get("isCompactSummary") or not isinstance(msg, dict):
        return None
    said = msg.get("content")
    return said if isinstance(said, str) and said.lstrip().startswith("<task-notification>") else None


def task_statuses(sl: Slice, now: Any = None, asked: Any = None) -> tuple[list[dict[str, Any]], list[str]]:
    """The `task_status` attachments 2.1.328 writes after a compaction for the background agents its process
    started (bRs): every agent launched since the process began, in launch order, with the status it last
    notified, else "completed" when its own transcript has its final reply by then, else "running" (each worded and
    recorded as the session's release did: `_as_release_renders`, TASK_ASK_FROM, TASK_CONTINUE_FROM). Only in the
    process that launched them: a session compacted by a new process (at rest, or resumed) has none; nor an agent
    whose notification came EVICT_AFTER_S or more before the compaction was asked for (`asked`, else `now`): Claude
    Code has forgotten it by then."""
    s = sl.session
    form = form_version(s)
    start = _process_start(sl)  # the compacting process began after it
    by = now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:23] + "Z" if now is not None else None
    out: list[dict[str, Any]] = []
    notes: list[str] = []
    status: dict[str, str] = {}
    told: dict[str, float] = {}  # when the model was told an agent had ended (its notification's time)
    for i in range(start + 1, min(sl.point + 1, len(s.records))):
        r = s.records[i]
        queued = r.type == "attachment" and r.get("attachment_type") == "queued_command"
        if not (queued or (r.type == "user" and not r.tool_results and not r.is_compact_summary)):
            continue  # (no body read)
        prompt = notification_words(s.body(i))
        if prompt is None:
            continue
        for m in _NOTIFIED.finditer(prompt):
            status[m.group(1)] = m.group(2)
            when = timestamp_key(r.timestamp)
            if when is not None:
                told[m.group(1)] = when
    asked = asked if asked is not None else now
    cutoff = asked.timestamp() - EVICT_AFTER_S if asked is not None else None
    seen: set[str] = set()
    # a record the file has before the process began, written again by it, is not its own (2.1.300 seed 113016: a fork
    # that compacted on a larger model wrote the conversation it had copied a second time, launches and all)
    before = {r.uuid for r in s.records[: start + 1] if r.uuid is not None}
    for i in range(start + 1, min(sl.point + 1, len(s.records))):
        if s.records[i].uuid in before:
            continue
        tur = s.body(i).get("toolUseResult") if s.records[i].type == "user" else None
        if not (isinstance(tur, dict) and tur.get("status") == "async_launched" and isinstance(tur.get("agentId"), str)):
            continue
        aid = tur["agentId"]
        if aid in seen:
            continue  # its launch's result written twice (2.1.200 seed 147102): Claude Code holds each task once, by its id
        seen.add(aid)
        if cutoff is not None and aid in told and told[aid] <= cutoff:
            notes.append(
                f"background agent {aid} ({tur.get('description')}) ended and was announced "
                f"{asked.timestamp() - told[aid]:.0f} s before the compaction: not re-announced (Claude Code forgets a "
                f"finished agent {EVICT_AFTER_S:.0f} s after announcing it)"
            )
            continue
        st = status.get(aid) or ("completed" if _agent_finished(s, aid, by) else "running")
        if st not in ("completed", "running"):
            notes.append(
                f"background agent {aid} ({tur.get('description')}) was {st}: not re-announced (inspector knows "
                "how 2.1.328 words a completed or a running agent only)"
            )
            continue
        path = tur.get("outputFile") if isinstance(tur.get("outputFile"), str) else None
        att: dict[str, Any] = {
            "type": "task_status",
            "taskId": aid,
            "taskType": "local_agent",
            "description": tur.get("description"),
            "status": st,
            "deltaSummary": None,
        }
        if path is not None and tur.get("canReadOutputFile", True):
            att["outputFilePath"] = path
        if at_or_after(form, TASK_CONTINUE_FROM):
            att["canContinueAgent"] = bool(tur.get("canContinueAgent", True))
        finished = TASK_TEXT if at_or_after(form, TASK_ASK_FROM) else TASK_TEXT_BEFORE_ASK
        text = (finished if st == "completed" else RUNNING_TEXT).format(
            id=aid, status=st, description=tur.get("description"), path=path
        )
        out.append(_as_release_renders({"attachment": att}, [text], form))
    if out and not at_or_after(form, EXITS_RECORDED_FROM):
        notes.append(
            f"Claude Code {s.version} records no process's end (a cost-state record, from 2.1.277): the {len(out)} "
            "background agent(s) re-announced are those launched since the file began, as if one process compacted; "
            "a process resumed since would announce none of them"
        )
    return out, notes


# A re-attached file's record by release (generated seeds 147100 and 150000 on 2.1.200-2.1.328): no text before
# 2.1.268; the text without a role up to 2.1.284; sent in the system role 2.1.285-2.1.317 (its call and result joined
# by a newline: wire.api_messages); in the user's, with `savedCopyFraming`, from 2.1.318 (bisected)
FILE_AS_USER_FROM = (2, 1, 318)


def _file_as_release_wrote(att: dict[str, Any], texts: list[str], version: str | None) -> dict[str, Any]:
    if at_or_after(version, FILE_AS_USER_FROM):
        att["savedCopyFraming"] = {"enveloped": False}
        return {"attachment": att, "rendered": [{"content": t} for t in texts], "renderedRole": "user"}
    return _as_release_renders({"attachment": att}, texts, version)


def _display_path(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def _latched_note(sl: Slice) -> bool | None:
    """The note on concurrent agents as the compacting process latched it: what the last agent listing it wrote
    before the point said (None: it wrote none)."""
    s = sl.session
    for i in range(min(sl.point, len(s.records) - 1), _process_start(sl), -1):
        r = s.records[i]
        if r.type == "attachment" and r.get("attachment_type") == "agent_listing_delta":
            got = (s.body(i).get("attachment") or {}).get("showConcurrencyNote")
            return got if isinstance(got, bool) else None
    return None


def _process_start(sl: Slice) -> int:
    """The record index after which the process that compacts at the slice's point began (-1: the file's start)."""
    exits = process_exits(sl.session)
    k = bisect.bisect_left(exits, _compacting_end(sl))
    return exits[k - 1] if k else -1


def _loop_start(sl: Slice, trigger: str) -> int:
    """The record index after which the records a compaction keeps are held in the order of Claude Code's query loop
    (see _as_held): a compaction inside the loop (automatic, or after a refusal) holds the replies of the turn it runs
    in as the loop made them; before the turn, and for a compaction the user asked for between turns (/compact, a
    partial compaction from the message list), the REPL's list holds every record as it was written (2.1.332 REPL
    seed 91000: a partial "from" kept a call's result before the next fragment of its reply, as the file has them;
    REPL seed 79200, a refusal mid-turn, kept the fragments first)."""
    s = sl.session
    if trigger != "auto":
        return len(s.records)
    start = _process_start(sl)
    end = min(_compacting_end(sl), len(s.records) - 1)
    for i in range(end, start, -1):
        if _is_prompt(s.records[i]):
            return i
    return start


def _held_time(sl: Slice, file_times: Mapping[str, float] | None = None, start: int | None = None) -> Any:
    """The sort key of a file Claude Code holds as read: the time it holds for it (newest re-attached first), then the
    latest touched. Claude Code's own process stores a file's modification time when it reads a file, and the time of
    the change when it edits or writes one; the reads and writes it restores on --resume from the transcript get the
    time of their result record (an edit there, the file's time). A file's modification time is that of its last edit
    or write anywhere before the point (a compaction forgets the read, not the file's time); a file the session
    never changed was last changed before it, at a time no transcript records: after every file it changed, and among
    such files by `file_times` where the caller knows them (else the most recently read first). `start`: the record
    after which the compacting process began (by default where the file's process exits say)."""
    s = sl.session
    if start is None:
        start = _process_start(sl)
    changes = [  # a file's time comes from its changes: the reads between them need not be decoded
        i
        for i in s.conversation.logical_chain
        if i <= sl.point and any(name in FILE_TOOLS and name != "Read" for _, name in s.records[i].tool_uses)
    ]
    mtime = {p: s.records[f.changed_result].timestamp or "" for p, f in file_states(s, changes).items() if f.changed_result >= 0}
    disk = file_times or {}

    def key(f: FileState) -> tuple[str, float, int]:
        restored = 0 <= f.result <= start
        if f.by in ("Write", "Edit", "MultiEdit") and not restored or f.by in ("Read", "Write") and restored:
            at = s.records[f.result].timestamp or "" if f.result >= 0 else ""
        else:
            at = mtime.get(f.path, "")
        return at, (disk.get(f.path, float("-inf")) if not at else 0.0), f.touched

    return key


def restored_file_bodies(
    sl: Slice,
    summarized: list[int],
    kept: list[int],
    live: bool | None = None,
    file_times: Mapping[str, float] | None = None,
    resumed_at: int | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The `file` attachments 2.1.328 writes after a compaction: up to 5 files read or changed before it and not
    visible in the kept records, newest first, each with the text of a whole Read. Only files whose whole content the
    transcript holds are re-attached (inspector never reads your files); the others are named in the notes. Files
    the session only read come after the rest, in the order of their modification times (`file_times`, where the
    caller knows them); without them, when two or more such files are in the running, the notes say that which of
    them and in what order is not known. `resumed_at`: the compacting process was resumed after that record (it holds
    what it restored from the records before it, with the times of their results)."""
    s = sl.session
    visible: set[str] = set()  # (a kept Read answered by the unchanged-file stub shows nothing of the file: §8.5)
    for i in kept:
        for tid, name in s.records[i].tool_uses:
            if name == "Read":
                got = s.tool_index.get(tid, (None, None))
                res = result_of(s, tid) if got[1] is not None and got[1] in kept else None
                if res is not None and not is_unchanged_stub(res[0], res[1]):
                    for b in iter_blocks((s.body(i).get("message") or {}).get("content")):
                        if (
                            b.get("id") == tid
                            and isinstance(b.get("input"), dict)
                            and isinstance(b["input"].get("file_path"), str)
                        ):
                            visible.add(b["input"]["file_path"])
    # in the order Claude Code saw them (the file's): what it holds of a file is its last read or change, and a
    # partial compaction "from" a message keeps the records before the ones it summarizes (a file re-attached by an
    # earlier compaction in the kept part was read again after it, as a generated REPL run showed: seed 40003)
    chain = sorted({*summarized, *kept})
    if live is None:  # whether the process that wrote the slice compacts it
        live = same_process(s, sl.boundary, _compacting_end(sl))
    if live and sl.boundary is not None:
        # the previous compaction cleared what Claude Code holds as read (then re-read the files it re-attached):
        # the reads in the records it kept came before that, and count no more in the process that compacted
        meta = s.body(sl.boundary).get("compactMetadata")
        pm = meta.get("preservedMessages") if isinstance(meta, dict) else None
        before = set(pm.get("uuids") or ()) if isinstance(pm, dict) else set()
        chain = [i for i in chain if s.records[i].uuid not in before]
    held = _held_time(sl, file_times, resumed_at)
    states = sorted(file_states(s, chain, attachments=live).values(), key=held, reverse=True)
    bodies: list[dict[str, Any]] = []
    skipped: list[str] = []
    undated: list[tuple[str, bool]] = []  # files only read, whose order no record gives: (name, re-attached)
    for st in states:
        name = st.path.replace("\\", "/").rsplit("/", 1)[-1]
        if st.path in visible or name in ("CLAUDE.md", "CLAUDE.local.md") or "/.claude/plans/" in st.path.replace("\\", "/"):
            continue
        full = len(bodies) >= MAX_FILES
        if not held(st)[0] and (file_times is None or st.path not in file_times):
            undated.append((name, not full))
        if full:
            continue
        if st.content is None or st.scale != 1.0:
            skipped.append(f"{st.path} (the transcript holds only part of it)")
            continue
        if rough_328(st.content) > MAX_FILE_TOKENS:
            skipped.append(f"{st.path} (over {MAX_FILE_TOKENS:,} tokens: Claude Code attaches a reference to it)")
            continue
        lines = st.content.split("\n")
        numbered_text = "\n".join(f"{n}\t{line}" for n, line in enumerate(lines, 1))
        call = json.dumps({"file_path": st.path}, separators=(",", ":"), ensure_ascii=False)
        bodies.append(
            _file_as_release_wrote(
                {
                    "type": "file",
                    "filename": st.path,
                    "content": {
                        "type": "text",
                        "file": {
                            "filePath": st.path,
                            "content": st.content,
                            "numLines": len(lines),
                            "startLine": 1,
                            "totalLines": len(lines),
                        },
                    },
                    "displayPath": _display_path(st.path, s.cwd),
                },
                [
                    f"<system-reminder>\nCalled the Read tool with the following input: {call}\n</system-reminder>",
                    f"<system-reminder>\nResult of calling the Read tool:\n{numbered_text}\n</system-reminder>",
                ],
                form_version(s),
            )
        )
    notes = []
    if len(undated) > 1 and any(chosen for _, chosen in undated):
        notes.append(
            "which of the files only read Claude Code re-attaches, and in what order, depends on their modification "
            "times, which the transcript does not hold; inspector took the most recently read first: "
            f"{', '.join(n for n, _ in undated[:8])}{' and more' if len(undated) > 8 else ''}"
        )
    if skipped:
        notes.append(
            "not re-attached (Claude Code would read them from disk; inspector does not read your files): "
            + "; ".join(skipped[:5])
            + (f" and {len(skipped) - 5} more" if len(skipped) > 5 else "")
        )
    return bodies, notes


def _reattached(files: list[dict[str, Any]]) -> list[str]:
    return [str((b.get("attachment") or {}).get("filename")) for b in files if (b.get("attachment") or {}).get("type") == "file"]


def _files_if_resumed(
    sl: Slice,
    summarize: list[int],
    keep: list[int],
    live: bool,
    file_times: Mapping[str, float] | None,
    files: list[dict[str, Any]],
) -> list[str] | None:
    """The files Claude Code would re-attach had the session been resumed just before the compacting turn, where that
    is not known and would change them: a release that records no process's end (before 2.1.277) is read as one
    process, which holds the files the previous compaction re-attached and not the reads in the records it kept; a
    resumed one holds what it restored from its loaded messages (their reads, writes and edits, each with the time of
    its result: 2.1.268's extractReadFilesFromMessages) and nothing a compaction re-attached (generated seed 155000
    on 2.1.268: a process resumed after the third compaction re-attached out14 and out10, the files its loaded
    messages wrote, where the one-process reading took four). None when it would re-attach the same files."""
    s = sl.session
    if not live or sl.boundary is None or at_or_after(form_version(s), EXITS_RECORDED_FROM) or s.version is None:
        return None
    alt, _ = restored_file_bodies(sl, summarize, keep, False, file_times, resumed_at=_compacting_end(sl))
    names = _reattached(alt)
    return names if names != _reattached(files) else None


_TOOLS_LISTED = re.compile(r"<tools-used-before-summary>([^<]*)</tools-used-before-summary>")


def tools_used(s: Any, indexes: list[int]) -> list[str]:
    """The tools used so far, as the summary's <tools-used-before-summary> lists them: the session's `tools-used`
    record when it has one, the tools an earlier summary of the chain listed (the list runs on from one compaction to
    the next: 2.1.304-2.1.310 write no `tools-used` record, and a fork holds only the records since the last compaction,
    its summary among them: 2.1.310 seed 186012), and the tool calls of the chain; sorted."""
    names: set[str] = set()
    rec = next((k for k in range(len(s.records) - 1, -1, -1) if s.records[k].type == "tools-used"), None)
    if rec is not None:
        tools = s.body(rec).get("tools")
        if isinstance(tools, list):
            names |= {t for t in tools if isinstance(t, str)}
    for i in indexes:
        r = s.records[i]
        names |= {name for _, name in r.tool_uses}
        if r.is_compact_summary:
            for listed in _TOOLS_LISTED.findall(s.record_text(i)[:4000]):
                names |= {t.strip() for t in listed.split(",") if t.strip()}
    return sorted(names)


# the tools used, in the summary message: from 2.1.304, bare; from 2.1.311, in a system reminder (bisected with
# generated seed 147100: 2.1.163, 2.1.200, 2.1.300 and 2.1.303 write none; 2.1.304, 2.1.307 and 2.1.310 the bare tag;
# 2.1.311, 2.1.312, 2.1.314 and 2.1.328 the reminder)
TOOLS_USED_FROM = (2, 1, 304)


TOOLS_USED_REMINDED_FROM = (2, 1, 311)


# the paragraph on the records kept after the summary: from 2.1.293 (bisected with seed 147100 over 2.1.200-2.1.300:
# 2.1.292 and earlier end the summary at the continuation directive)
KEPT_AFTER_FROM = (2, 1, 293)


def _ran_loading_every_tool(s: Any, indexes: Sequence[int], version: tuple[int, int, int] | None) -> bool:
    """Whether any of these records says a model that loads every tool (`defers_tools` False) was in force."""
    return any(defers_tools(model_in_force(s.records[i]), version) is False for i in indexes)


def _compacting_model(sl: Slice, resume_model: str | None) -> str | None:
    """The model of the process that compacts at the slice's point: the one it was resumed with, else the last a
    record before the point says is in force."""
    if resume_model:
        return resume_model
    s = sl.session
    return in_force(s.records[i] for i in range(min(sl.point, len(s.records) - 1), -1, -1))


# What an automatic compaction writes of the session's context, by release (bisected with generated seed 147100 over
# 2.1.200-2.1.328): no record of it up to 2.1.267, whose requests carry the user context unrecorded (USER_CONTEXT_...);
# the date from 2.1.268; the session context from 2.1.269; a rendered reminder's role from 2.1.285
DATE_WRITTEN_FROM = (2, 1, 268)


SESSION_CONTEXT_FROM = (2, 1, 269)


RENDERED_ROLE_FROM = (2, 1, 285)


# where a compaction that keeps a tail writes them: before its summary from 2.1.274, after its re-announcements before
# (as any compaction that keeps nothing does; bisected with generated seed 150003, a refusal that kept 15 messages)
CONTEXT_BEFORE_SUMMARY_FROM = (2, 1, 274)


CONTEXT_ALWAYS_WRITTEN_FROM = CONTEXT_BEFORE_SUMMARY_FROM  # (bisected: the session's context after a compaction that kept it)


# up to 2.1.267 every request starts with the user context (CLAUDE.md files, today's date) as a reminder put before the
# first message's blocks, written in no record (bisected with seed 147100: 2.1.267 sends it, 2.1.268 records the date)
USER_CONTEXT_RECORDED_FROM = DATE_WRITTEN_FROM


USER_CONTEXT_NOTE = (
    "Claude Code {version} also sends its user context (the CLAUDE.md files and today's date, as they are when it "
    "resumes) as a reminder before the first message of every request; no record holds it, so the preview leaves it out."
)


# before 2.1.268 an attachment record holds no text (`rendered`): Claude Code renders it when it sends it, by its
# release's own code (the re-announced agents and skills, re-read files, reminders)
ATTACHMENTS_RENDERED_FROM = DATE_WRITTEN_FROM


UNRENDERED_NOTE = (
    "Claude Code {version} renders attachments as it sends them and records no text for them: the preview's messages "
    "leave out {n} attachment(s) ({kinds}), so they are not exactly what a resume sends; the size after counts them by "
    "their JSON."
)


def _as_release_renders(body: dict[str, Any], texts: list[str], version: str | None) -> dict[str, Any]:
    """An attachment `body` that a release sends as `texts` with the system role, as the release records it: the text
    from 2.1.268 (before, it renders the attachment as it sends it), the role from 2.1.285."""
    if at_or_after(version, ATTACHMENTS_RENDERED_FROM):
        body["rendered"] = [{"content": t} for t in texts]
        if at_or_after(version, RENDERED_ROLE_FROM):
            body["renderedRole"] = "system"
    return body


def _is_prompt(r: Any) -> bool:
    """A prompt the user typed (not a tool result, a meta message, a summary or a command breadcrumb)."""
    if r.type != "user" or r.tool_results or r.is_meta or r.is_compact_summary or r.get("prompt") is None:
        return False
    text = r.get("prompt") or ""
    return not (text.startswith("<command-name>") or text.startswith("<local-command"))
