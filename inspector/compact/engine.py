"""Claude Code 2.1.3xx's compaction: one engine that summarizes every API round but a kept tail
(format-2.1.3xx.md §2.0–2.4), with the records it writes and the request a resume then sends.

* "compact now" — a threshold compaction (`trigger: auto`) or `/compact [instructions]` (`manual`): every round but
  the last is summarized, the last round is kept verbatim;
* "as if the API refused at N tokens" — the reactive compaction that follows a 400 "prompt is too long": the kept
  tail is sized from the refusal's gap, scaled by how the API's count compares with the local estimate;
* partial compaction from the rewind menu, "summarize from here" (`from`: the messages before the pivot are kept,
  the summary follows them) and "summarize up to here" (`up_to`: the summary comes first, the pivot and what
  follows it are kept), each with the optional context the user types.

Each writes, after the history, the records 2.1.328 writes (a boundary whose `preservedMessages` list the kept
records, which Claude Code relinks after the summary on load; the summary in 2.1.328's own words; up to 5 files
re-attached; the re-announcements of tools, agents, skills, environment and model, each with the exact `rendered`
text Claude Code sends) and knows the first request a resume of the saved session sends: `api_messages`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.claude.models import (
    lean_prompt,
    lean_prompt_delta,
    subagent_nudges,
)
from inspector.claude.release import at_or_after, parse_version
from inspector.claude.requests import rebuild_requests
from inspector.claude.versions import TAIL, rules_for
from inspector.claude.wire import THINKING_TYPES, api_messages, foreign_thinking, wire_effort, wire_style
from inspector.compact import earlier
from inspector.compact.base import (
    CONTINUE_INTRO,
    CompactError,
    CompactionResult,
    Estimator,
    RecordFactory,
    Slice,
    ViewMessage,
    command_caveat,
    format_compact_summary,
)
from inspector.compact.hooks import (
    as_compact_hook,
    compact_stdout,
    hooks_note,
    session_start_hooks,
    summarized_count,
    trailing_records,
)
from inspector.compact.reattach import (
    ATTACHMENTS_RENDERED_FROM,
    CONTEXT_ALWAYS_WRITTEN_FROM,
    CONTEXT_BEFORE_SUMMARY_FROM,
    DATE_WRITTEN_FROM,
    KEPT_AFTER_FROM,
    SESSION_CONTEXT_FROM,
    TOOLS_USED_FROM,
    TOOLS_USED_REMINDED_FROM,
    UNRENDERED_NOTE,
    USER_CONTEXT_NOTE,
    USER_CONTEXT_RECORDED_FROM,
    _as_release_renders,
    _compacting_end,
    _compacting_model,
    _files_if_resumed,
    _is_prompt,
    _latched_note,
    _latest_index,
    _latest_payload,
    _loop_start,
    _process_start,
    _ran_loading_every_tool,
    _rendered_fields,
    form_version,
    reannouncements,
    restored_file_bodies,
    task_statuses,
    tools_used,
)
from inspector.compact.summarize.base import Cancel, Progress, Summarizer, SummaryRequest
from inspector.textutil import as_dict
from inspector.tokens.context import (
    same_process,
)
from inspector.tokens.estimate import count_bodies, js_len, rough_328, rough_attachment, rough_record_328
from inspector.tokens.thresholds import js_round
from inspector.transcript.records import F_STRING_CONTENT, F_TEXT, MENU_HIDDEN_TAGS, context_tokens, text_of
from inspector.transcript.session import model_in_force, same_model
from inspector.transcript.tree import is_sent

DIRECTIVE = (
    "Continue the conversation from where it left off without asking the user any further questions. Resume directly "
    '\u2014 do not acknowledge the summary, do not recap what was happening, do not preface with "I\'ll continue" or '
    "similar. Pick up the last task as if the break never happened."
)
KEPT_AFTER = (
    "The messages after this summary are the most recent messages from before compaction, kept verbatim. The summary "
    "was written without seeing them, so something it says has not happened yet may already have happened in them."
)
TRANSCRIPT_POINTER = (
    "If you need specific details from before compaction (like exact code snippets, error messages, or content "
    "you generated), read the full transcript at: "
)
STDOUT = "<local-command-stdout>Compacted (ctrl+o to see full summary)</local-command-stdout>"
# the REPL (entrypoint "cli") writes the same line dimmed, with the terminal's escape codes (2.1.328, in tmux)
STDOUT_REPL = "<local-command-stdout>\x1b[2mCompacted (ctrl+o to see full summary)\x1b[22m</local-command-stdout>"


PTL_RATIO_FLOOR = 1.0
# Up to 2.1.327 a kept tail lists its prompt_snapshot records (`_listed_snapshots`); 2.1.328 lists none
SNAPSHOTS_UNLISTED_FROM = (2, 1, 328)
# A rapid refill (the context back at the threshold within 3 tool rounds of an automatic compaction) keeps nothing
# from 2.1.307 (`keepNoRound`: in the 2.1.307 binary, not in 2.1.306's; 2.1.238 kept the last round of each of
# generated seed 149000's rapid refills, 2.1.200 of seed 147103's)
KEEP_NO_ROUND_FROM = (2, 1, 307)
# A /compact with no reply before the last round (right after a compaction) keeps nothing from 2.1.323 (its engine
# bails, the legacy one summarizes everything); up to 2.1.322 the engine's last resort keeps from the last user message
# (bisected with kept scenario found_1182: 2.1.285-2.1.322 kept the five or seven records from it)
NO_REPLY_BAILS_FROM = (2, 1, 323)
# From 2.1.310 the tail a refusal keeps is sized with the gap scaled by the API's count against the rough one, plus the
# summarize prompt; up to 2.1.309 from the gap alone, less the last round (read in the 2.1.200, 2.1.309 and 2.1.310
# binaries; bisected with generated seed 147102, whose refusals by 1 token kept one round up to 2.1.309, three to
# five from 2.1.310)
REACTIVE_TAIL_SCALED_FROM = (2, 1, 310)
# The length of 2.1.328's summarize instruction (characters, measured in the conformance runs' summarize requests), and
# what "/compact <instructions>" adds to it ("\n\nAdditional Instructions:\n" + the text). Only its size matters here:
# the kept tail after a refusal is sized with it.
SUMMARIZE_PROMPT_CHARS = 6_361
INSTRUCTIONS_HEADER_CHARS = 27
MODES = ("compact", "reactive", "partial")


@dataclass(frozen=True, slots=True)
class EngineParams:
    mode: str = "compact"  # "compact" (threshold or /compact), "reactive" (as if the API refused), "partial"
    trigger: str = "manual"  # compact: "manual" (/compact [instructions]) or "auto" (the threshold)
    instructions: str | None = None  # /compact instructions, or the context typed in the rewind menu
    refused_at: int | None = None  # reactive: the API's limit in tokens
    prompt_tokens: int | None = None  # reactive: the size the API said the refused request had (default: the context)
    pivot_uuid: str | None = None  # partial: the user message picked in the rewind menu
    direction: str = "from"  # partial: "from" or "up_to"
    resume_model: str | None = None  # the compacting process's model, where the session has not announced it yet
    asked_at: Any = None  # when it was asked for (datetime): the agents the process still held then are re-announced
    file_times: Any = None  # path -> modification time of the files only read, where known (CompactRequest.file_times)


# ---------------------------------------------------------------------------------------------
# rounds and their rough sizes


def api_rounds(s: Any, indexes: list[int]) -> list[list[int]]:
    """The API rounds of a stretch of records (2.1.328's groups): a new round at each assistant message with a new
    `message.id`, unless the round so far still waits for the result of one of its tool calls; round 0 is what
    comes before the first reply. Progress records are not messages."""
    groups: list[list[int]] = []
    cur: list[int] = []
    last_id: str | None = None
    waiting: set[str] = set()
    for i in indexes:
        r = s.records[i]
        if r.type == "progress":
            continue
        if r.type == "assistant" and r.message_id != last_id and cur and not waiting:
            groups.append(cur)
            cur = []
        cur.append(i)
        if r.type == "assistant":
            last_id = r.message_id
            waiting |= {tid for tid, _ in r.tool_uses}
        waiting -= set(r.tool_results)
    if cur:
        groups.append(cur)
    return groups


rough_record = rough_record_328  # 2.1.328's rough estimate of one record (tokens/estimate.py)


def _halve_walk(sizes: list[int], n: int, need: float) -> int:
    """HEt: how many rounds, walking back from round n-1, cover `need` tokens; half of them when that takes all."""
    total, taken = 0, 0
    for k in range(n - 1, -1, -1):
        total += sizes[k]
        taken += 1
        if total >= need:
            break
    if taken >= n - 1:
        return max(1, n // 2)
    return taken


# ---------------------------------------------------------------------------------------------
# the session's state that a compaction re-announces


def wrap_summary_328(
    formatted: str,
    *,
    tools: list[str],
    transcript_path: str | None,
    directive: bool,
    kept_after: bool,
    version: str | None = None,
) -> str:
    """The summary message of 2.1.328 (§2.0): the opening sentence, the tools used, the summary, the transcript
    pointer, the continuation directive, and the paragraph on the records kept after it; the tools used as the
    release `version` writes them (None: as today's)."""
    out = CONTINUE_INTRO + "\n\n"
    if tools and at_or_after(version, TOOLS_USED_FROM):
        listed = f"<tools-used-before-summary>{', '.join(tools)}</tools-used-before-summary>\n"
        out += f"<system-reminder>\n{listed}</system-reminder>\n" if at_or_after(version, TOOLS_USED_REMINDED_FROM) else listed
    out += formatted
    if transcript_path:
        out += "\n\n" + TRANSCRIPT_POINTER + transcript_path
    if directive:
        out += "\n" + DIRECTIVE
    if kept_after and at_or_after(version, KEPT_AFTER_FROM):
        out += "\n\n" + KEPT_AFTER
    return out


# ---------------------------------------------------------------------------------------------
# how much is kept


@dataclass(frozen=True, slots=True)
class Split:
    summarize: list[int]
    keep: list[int]
    rounds: int
    kept_rounds: int
    why: str


def _snapshot_of(s: Any, point: int | None = None, model: str | None = None) -> int | None:
    """The prompt snapshot of the process that compacts at record `point` (None: the session's end): the last before
    it taken under the same model (a process that compacts at its first request has written none yet, and the one
    before it may run another model, whose prompt can be a third the size: 2.1.332 gives some models a lean one;
    fresh 2.1.332 seed 35001), else the last before it; None when there is none."""
    conv = s.conversation
    end = len(s.records) - 1 if point is None else min(point, len(s.records) - 1)
    chain = [i for i in conv.logical_chain if i <= end]
    if point is None or point == conv.leaf:
        # the snapshot hung below the last message: written for the request that came next (refused, or not yet
        # answered), by the process that compacts (fresh 2.1.328 seed 14018: the lean prompt of the model it was
        # resumed with, where the chain's last snapshot was the earlier process's, three times the size)
        chain += [i for i in conv.below_leaf() if i > end]
    snaps = [i for i in chain if s.records[i].type == "attachment" and s.records[i].get("attachment_type") == "prompt_snapshot"]
    if snaps and model:
        in_force: str | None = None
        by_snap: dict[int, str | None] = {}
        wanted = set(snaps)
        for i in range(0, snaps[-1] + 1):
            m = model_in_force(s.records[i])
            if m is not None:
                in_force = m
            if i in wanted:
                by_snap[i] = in_force
        same = [i for i in snaps if same_model(by_snap.get(i), model)]
        snaps = same or snaps
    return snaps[-1] if snaps else None


def _system_prompt_text(s: Any, point: int | None = None, model: str | None = None) -> str:
    """The system prompt of the process that compacts at record `point`: its snapshot's (`_snapshot_of`), else the
    last request's."""
    return _prompt_of(s, _snapshot_of(s, point, model))


def _prompt_of(s: Any, k: int | None) -> str:
    """The system prompt the snapshot at record `k` holds (none: the last request's)."""
    body = s.body(k) if k is not None else None
    sp = (body or {}).get("attachment", {}).get("systemPrompt") if body else None
    if isinstance(sp, list):
        return "\n".join(x for x in sp if isinstance(x, str))
    for q in reversed(rebuild_requests(s)):
        system = q.request.get("system")
        if isinstance(system, list):
            return "\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
    return ""


def _ran_without_tool_search(s: Any, point: int, version: tuple[int, int, int] | None) -> bool:
    """Whether the conversation since its last compaction, up to record `point` (on its chain or below it), ran a
    model that loads every tool: Claude Code then holds tool search off until the next compaction ("this
    conversation has run without ToolSearch"), and every model sends the full prompt, not its own lean one."""
    chain = [i for i in s.conversation.logical_chain if i <= point]
    start = max((k for k, i in enumerate(chain) if s.records[i].is_compact_boundary), default=-1) + 1
    return _ran_loading_every_tool(s, chain[start:], version)


def _ratio_prompt(s: Any, point: int, model: str | None, notes: list[str]) -> int:
    """The rough size of the system prompt K7n takes off the refusal's count: the compacting process's own
    (`_system_prompt_text`). Where tool search was held off (`_ran_without_tool_search`) for a model that gets a lean
    prompt, its requests carried the full one, but K7n takes the model's own off (2.1.328 seed 114005:
    claude-3-5-sonnet, then claude-fable-5-2 refused at 318,000; bisected on the binary, the ratio is that of fable's
    11,591 characters, not of the 28,305 it sent): the full one's length less the model's measured difference
    (models.json `lean_prompt_size`)."""
    written = _snapshot_of(s, point, model)  # the prompt was held off if it was written while tool search was
    system = _prompt_of(s, written)
    version = parse_version(s.version)
    if model and _ran_without_tool_search(s, point if written is None else written, version):
        delta = lean_prompt_delta(model, version)
        if delta is not None and js_len(system) + delta > 0:
            notes.append(
                f"tool search was held off (a model that loads every tool ran since the last compaction), so {model}'s "
                f"requests carried the full prompt; Claude Code sizes the tail with its own, {-delta:,} characters "
                "shorter (measured on the binary)"
            )
            return js_round((js_len(system) + delta) / 4)
    return rough_328(system)


_TYPED_COMPACT = re.compile(r"/compact(?:\s|$)")


def _without_typed_command(s: Any, msgs: list[int]) -> list[int]:
    """The messages a /compact compacts, without the command itself where the REPL wrote it as a plain prompt before
    compacting (2.1.285: "/compact" as the last user message, which Claude Code neither summarizes nor keeps: five
    REPL runs of a 2.1.285 batch, seed 173000, kept only what came before it)."""
    for k in range(len(msgs) - 1, -1, -1):
        r = s.records[msgs[k]]
        if r.type == "user" and not r.is_meta and not r.tool_results and r.flags & F_STRING_CONTENT:
            if _TYPED_COMPACT.match(s.record_text(msgs[k]).strip()):
                return msgs[:k] + msgs[k + 1 :]
            return msgs
        if r.type in ("user", "assistant"):
            return msgs
    return msgs


def _user_text(r: Any) -> bool:
    """A user message of text the engine's last resort keeps from: not meta, not a tool result, not a summary (a
    command's breadcrumb and its output are such messages)."""
    return (
        r.type == "user"
        and not r.tool_results
        and not r.is_meta
        and not r.is_compact_summary
        and bool(r.flags & (F_TEXT | F_STRING_CONTENT))
    )


def split_compact(s: Any, msgs: list[int]) -> Split:
    groups = api_rounds(s, msgs)
    if len(groups) < 2:
        raise CompactError(
            f"nothing to compact: {len(groups)} API round(s) since the last compaction, and Claude Code "
            "compacts only with 2 or more (it would say 'fewer than 2 groups')"
        )
    return Split([i for g in groups[:-1] for i in g], groups[-1], len(groups), 1, "the last API round is kept verbatim")


def split_reactive(
    s: Any, msgs: list[int], actual: int, limit: int, instructions: str | None, system: str | int | None = None
) -> Split:
    """The tail a prompt-too-long compaction keeps (K7n): the refusal's gap, in local-estimate units, plus the size of
    the summarize prompt, minus the last round, covered by the rounds before it; half the rounds when that would
    take nearly all of them. `system`: the compacting process's system prompt, or its rough size (taken off the API's
    count before the ratio; default: the session's last)."""
    groups = api_rounds(s, msgs)
    r = len(groups)
    if r < 2:
        raise CompactError(f"nothing to compact: {r} API round(s) since the last compaction (Claude Code needs 2)")
    keep = 1
    why = "the last API round is kept (too few rounds to size the tail from the gap)"
    if actual <= limit:
        why = (
            f"the refusal names no gap ({actual:,} is not over {limit:,}), so the tail is not sized from it: the last round "
            f"is kept"
        )
    elif r > 3:
        sizes = [sum(rough_record(s.body(i)) for i in g) for g in groups]
        total = sum(sizes)
        gap = actual - limit
        if at_or_after(form_version(s), REACTIVE_TAIL_SCALED_FROM):
            sys_rough = system if isinstance(system, int) else rough_328(system if system is not None else _system_prompt_text(s))
            ratio = max(PTL_RATIO_FLOOR, (actual - sys_rough) / total) if total > 0 else 1.0
            extra = INSTRUCTIONS_HEADER_CHARS + js_len(instructions) if instructions else 0
            prompt = js_round((SUMMARIZE_PROMPT_CHARS + extra) / 4)
        else:  # the gap as the API counts it, less the last round (2.1.200's and 2.1.309's code)
            ratio, prompt = 1.0, 0
        need = gap / ratio + prompt - sizes[-1]
        if need > 0:
            more = _halve_walk(sizes, r - 1, need)
            keep = 1 + more
            sized = (
                f"the refusal's gap of {gap:,} tokens is {gap / ratio:,.0f} in the local estimate (the API counts {ratio:.1f}× "
                f"it), plus {prompt:,} for the summarize prompt"
                if prompt
                else f"the refusal's gap of {gap:,} tokens (as this release sizes it: no ratio, no summarize prompt)"
            )
            why = f"{sized}, less the last round's {sizes[-1]:,}: {need:,.0f} to free, so {keep} of {r} rounds are kept" + (
                " (half the rounds: covering it would take nearly all)" if more == max(1, (r - 1) // 2) and more < r - 2 else ""
            )
        else:
            why = f"the refusal's gap fits in what the summary frees: the last of {r} rounds is kept"
    return Split([i for g in groups[: r - keep] for i in g], [i for g in groups[r - keep :] for i in g], r, keep, why)


# ---------------------------------------------------------------------------------------------
# the engine


STARTUP_ONLY = ("pendingMcpServers", "needsAuthMcpServers", "failedMcpServers")  # a session's first tool announcement only


def _copy_attachment(
    factory: RecordFactory, tmpl: Mapping[str, Any], parent: str | None, body: Mapping[str, Any]
) -> dict[str, Any]:
    rec: dict[str, Any] = {"parentUuid": parent, **factory.envelope(tmpl)}
    att = body.get("attachment")
    rec["attachment"] = json.loads(json.dumps(att)) if isinstance(att, dict) else {}
    if rec["attachment"].get("type") == "deferred_tools_delta":  # the MCP state at startup is not re-announced when empty
        for k in STARTUP_ONLY:
            if rec["attachment"].get(k) == []:
                del rec["attachment"][k]
    rec["type"] = "attachment"
    rec["uuid"] = factory.new_id()
    rec["timestamp"] = factory.timestamp()
    rec.update(_rendered_fields(body))
    return rec


_ATTRIBUTION = re.compile(r"Co-Authored-By: [^<\n]*<noreply@anthropic.com>")


def _attributed(rec: dict[str, Any], model: Mapping[str, Any] | None) -> dict[str, Any]:
    """The commit attribution of a re-announced remote_session_change, for the model now in use (its last `model`
    announcement): Claude Code renders it afresh ("Claude Opus 5", or "Claude Code" for a model it has no name for),
    so after a /model switch the copy of an older one would name the old model."""
    ident = ((model or {}).get("attachment") or {}).get("identity") if model else None
    if not isinstance(ident, dict):
        return rec
    name = ident.get("marketingName")
    if isinstance(name, str) and name.startswith("Claude "):  # an old model's full name: the attribution has the catalog's
        shown = _display_name(ident.get("modelId"))
        if shown:
            name = shown + (" (1M context)" if name.endswith(" (1M context)") else "")
    line = f"Co-Authored-By: {'Claude ' + name if isinstance(name, str) and name else 'Claude Code'} <noreply@anthropic.com>"
    att = rec.get("attachment") or {}
    if isinstance(att.get("commit"), str):
        att["commit"] = _ATTRIBUTION.sub(line, att["commit"])
    for r in rec.get("rendered") or ():
        if isinstance(r, dict) and isinstance(r.get("content"), str):
            r["content"] = _ATTRIBUTION.sub(line, r["content"])
    return rec


def _display_name(model: Any) -> str | None:
    """The catalog's display name of a model (2.1.332's catalog: "Sonnet 3.7", "Opus 4", "Opus 5.5": its family, then
    its version without a trailing .0), which an attribution names where the announcement's marketingName is an old
    model's full name ("Claude 3.7 Sonnet": the attribution said "Claude Sonnet 3.7", inspector's re-rendered copy
    "Claude Claude 3.7 Sonnet"). None for a model the catalog does not know."""
    from inspector.claude.versions import catalog_key

    key = catalog_key(model) if isinstance(model, str) else None
    m = re.fullmatch(r"claude-([a-z]+)-(\d+)(?:-(\d+))?", key or "") or re.fullmatch(r"claude-(\d+)-(\d+)-([a-z]+)", key or "")
    if m is None:
        return None
    if m.group(1).isdigit():
        family, major, minor = m.group(3), m.group(1), m.group(2)
    else:
        family, major, minor = m.group(1), m.group(2), m.group(3)
    return f"{family.capitalize()} {major}" + (f".{minor}" if minor and minor != "0" else "")


# The one built-in agent with two texts (2.1.152 to 2.1.332 alike): `whenToUse`, and `whenToUseLean` for a model that
# gets the lean prompt. Claude Code words its agent listing for the model in use when it writes it, so a compaction
# after a /model switch lists Explore in the new model's words.
EXPLORE_TEXTS = (
    'Fast read-only search agent for locating code. Use it to find files by pattern (eg. "src/components/**/*.tsx"), '
    'grep for symbols or keywords (eg. "API endpoints"), or answer "where is X defined / which files reference Y." Do '
    "NOT use it for code review, design-doc auditing, cross-file consistency checks, or open-ended analysis \u2014 it "
    "reads excerpts rather than whole files and will miss content past its read window. When calling, specify search "
    'breadth: "quick" for a single targeted lookup, "medium" for moderate exploration, or "very thorough" to search '
    "across multiple locations and naming conventions.",
    "Read-only search agent for broad fan-out searches \u2014 when answering means sweeping many files, directories, or "
    "naming conventions and you only need the conclusion, not the file dumps. It reads excerpts rather than whole "
    'files, so it locates code; it doesn\'t review or audit it. Specify search breadth: "medium" for moderate '
    'exploration, "very thorough" for multiple locations and naming conventions.',
)


# the first release whose code holds both Explore texts (bisected by the texts in npm's binaries: 2.1.140 has neither);
# the line is worded by lean_prompt, as 2.1.273's agent listing does (wz(modelForPrompt(mainLoopModel))), where it knows
EXPLORE_TEXTS_FROM = (2, 1, 141)


CONCURRENCY_NOTE = (
    "\n\nWhen you launch multiple agents for independent work, send them in a single message with multiple tool uses "
    "so they run concurrently."
)


def worded_for_model(rec: dict[str, Any], s: Any, model: str | None, latched: bool | None = None) -> dict[str, Any]:
    """An agent listing re-announced by a compaction, worded for the model in use as Claude Code words it afresh:
    its Explore line by whether the model gets the lean prompt (EXPLORE_TEXTS), its closing note on concurrent agents
    as the compacting process latched it (`latched`: what its own listing said; 2.1.332's REPL on claude-opus-5 shows
    the note, its print mode does not), else by whether the model is nudged about subagents. Each unchanged where
    inspector does not know the release's rule (lean_prompt's None); the note also stays off when it was off for a nudged
    model (the Pro plan, an environment setting)."""
    att = rec.get("attachment") or {}
    lines = att.get("addedLines")
    if att.get("type") != "agent_listing_delta" or not isinstance(lines, list):
        return rec
    version = parse_version(s.version)
    rendered = [r for r in rec.get("rendered") or () if isinstance(r, dict) and isinstance(r.get("content"), str)]
    lean = lean_prompt(model, version) if version is not None and version >= EXPLORE_TEXTS_FROM else None
    if lean is not None:
        want, other = (EXPLORE_TEXTS[1], EXPLORE_TEXTS[0]) if lean else EXPLORE_TEXTS
        old_line, new_line = f"- Explore: {other} (", f"- Explore: {want} ("
        att["addedLines"] = [x.replace(old_line, new_line, 1) if isinstance(x, str) else x for x in lines]
        for r in rendered:  # the text the record sends, as Claude Code rendered it
            r["content"] = r["content"].replace(old_line, new_line, 1)
    nudged = subagent_nudges(model, version) if latched is None else latched
    had = att.get("showConcurrencyNote")
    if nudged is None or not isinstance(had, bool) or had == nudged:
        return rec
    if latched is None and not had and not any(subagent_nudges(m, version) is False for m in s.models):
        return rec  # off for a nudged model: off for a reason no transcript records
    att["showConcurrencyNote"] = nudged
    end = "\n</system-reminder>"
    for r in rendered:
        c = r["content"]
        if nudged and c.endswith(end) and not c.endswith(CONCURRENCY_NOTE + end):
            r["content"] = c[: -len(end)] + CONCURRENCY_NOTE + end
        elif not nudged and c.endswith(CONCURRENCY_NOTE + end):
            r["content"] = c[: -len(CONCURRENCY_NOTE + end)] + end
    return rec


def _date_attachment(factory: RecordFactory, tmpl: Mapping[str, Any], parent: str | None, version: str | None) -> dict[str, Any]:
    day = factory.now.astimezone().date().isoformat() if factory.now.tzinfo else factory.now.date().isoformat()
    body = _as_release_renders(
        {"attachment": {"type": "date", "date": day}}, [f"<system-reminder>\nToday's date is {day}.\n</system-reminder>"], version
    )
    return _copy_attachment(factory, tmpl, parent, body)


ENVELOPE_KEYS = ("userType", "entrypoint", "cwd", "sessionId", "version", "gitBranch", "slug")


def _envelope_template(sl: Slice, reach: int = 200) -> dict[str, Any]:
    """The envelope new records carry: each field as the newest records of the chain have it (a final reply can lack
    the `slug` that the records before it carry)."""
    s = sl.session
    out: dict[str, Any] = {}
    for n, i in enumerate(reversed(sl.chain)):
        if n >= reach or len(out) == len(ENVELOPE_KEYS):
            break
        body = s.body(i)
        for k in ENVELOPE_KEYS:
            if k not in out and k in body:
                out[k] = body[k]
    return out


def _chain_records(new: list[dict[str, Any]]) -> None:
    for a, b in zip(new, new[1:]):
        if b.get("type") != "system" or b.get("subtype") != "compact_boundary":
            b["parentUuid"] = a["uuid"]


def engine_compact(
    sl: Slice,
    est: Estimator,
    summarizer: Summarizer,
    params: EngineParams,
    factory: RecordFactory | None = None,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> CompactionResult:
    s = sl.session
    form = form_version(s)  # the release whose forms and rules this compaction follows
    recs = s.records
    if params.mode not in MODES:
        raise CompactError(f"mode must be one of {', '.join(MODES)}, not {params.mode!r}")
    msgs = [i for i in sl.messages if recs[i].type != "progress"] + trailing_records(sl)
    if params.mode == "compact" and params.trigger == "manual":
        msgs = _without_typed_command(s, msgs)
    before = est.before(sl)
    notes: list[str] = []
    pivot_note: str | None = None
    keep_none = False
    tail_era = TAIL in rules_for(s.version).era.strategies
    live = same_process(s, sl.boundary, _compacting_end(sl))  # the process that wrote the slice compacts it
    if params.mode == "compact":
        split = split_compact(s, msgs)
        trigger = params.trigger
        no_reply = tail_era and not any(recs[i].type == "assistant" for i in split.summarize)
        if no_reply and not at_or_after(form, NO_REPLY_BAILS_FROM):
            # no reply before the last round (a /compact right after a compaction): up to 2.1.322 the engine's last
            # resort summarizes what comes before the last user message and keeps from it ("Reactive compact: round
            # ladder exhausted, last resort (keeping 5 trailing messages"; kept scenario found_1182 on 2.1.285)
            last = max((k for k, i in enumerate(msgs) if _user_text(recs[i])), default=0)
            if last > 0:
                split = Split(
                    msgs[:last],
                    msgs[last:],
                    split.rounds,
                    0,
                    "no reply to summarize before the last round: Claude Code's last resort summarizes what comes "
                    "before the last user message and keeps from it",
                )
                notes.append(split.why)
        elif no_reply:
            # no reply before the last round (a /compact right after a compaction): 2.1.328's engine bails ("no
            # assistant messages in summarize set") and the legacy compaction summarizes everything, keeping nothing
            split = Split(
                list(msgs),
                [],
                split.rounds,
                0,
                "no reply to summarize before the last round: Claude Code falls back to summarizing everything, keeping nothing",
            )
            notes.append(split.why)
        if trigger == "auto" and tail_era:
            refills = rapid_refills(sl, live)
            blocked = est.thresholds is not None and before >= est.thresholds.blocking
            if refills >= RAPID_REFILL_TRIP:
                raise CompactError(
                    f"Claude Code would not compact here: this is rapid refill number {refills} in a row (the "
                    "context back at the threshold within 3 tool rounds of each compaction), and it stops "
                    'with "Autocompact is thrashing"'
                )
            # at the blocking limit it keeps a tail as ever (keepNoRound is off then); before 2.1.307 it always does
            if refills and not blocked and at_or_after(form, KEEP_NO_ROUND_FROM):
                keep_none = True
                split = Split(
                    list(msgs),
                    [],
                    split.rounds,
                    0,
                    f"nothing is kept: the context refilled to the threshold "
                    f"within {RAPID_REFILL_TURNS} tool rounds of the previous compaction (a rapid refill, number "
                    f"{refills} in a row), so Claude Code summarizes the last round too",
                )
                notes.append(split.why)
    elif params.mode == "reactive":
        if params.refused_at is None or params.refused_at <= 0:
            raise CompactError("as if the API refused: give the limit it refused at (--refused-at N)")
        actual = params.prompt_tokens if params.prompt_tokens is not None else max(before, params.refused_at + 1)
        system = _ratio_prompt(s, sl.point, _compacting_model(sl, params.resume_model), notes)
        split = split_reactive(s, msgs, actual, params.refused_at, params.instructions, system)
        trigger = "auto"
        told = (
            ""
            if params.prompt_tokens is not None or before > params.refused_at
            else (f" (the context here is {before:,} tokens, under the limit: taken as a refusal by 1 token, the smallest)")
        )
        notes.append(f"as if the API had refused the request: {actual:,} tokens > {params.refused_at:,}{told}; {split.why}")
    else:
        # the messages a partial compaction divides start with the last compaction's boundary (2.1.328 keeps it in a
        # "from" prefix and counts it among an "up to" compaction's summarized messages)
        lead = [sl.boundary] if sl.boundary is not None else []
        split, pivot_note = _split_partial(sl, lead + msgs, params)
        trigger = "manual"
    if not any(recs[i].type in ("user", "assistant") or (params.mode == "partial" and is_sent(recs[i])) for i in split.summarize):
        raise CompactError("nothing to summarize: no message before the kept records")
    kind = "full" if params.mode != "partial" else ("partial_from" if params.direction == "from" else "partial_up_to")
    context = tuple(split.keep) if params.mode == "partial" and params.direction == "from" else ()
    out = summarizer.summarize(
        SummaryRequest(s, tuple(split.summarize), context=context, kind=kind, instructions=params.instructions), progress, cancel
    )
    formatted = format_compact_summary(out.text, s.version)
    tools = tools_used(s, list(sl.history))
    files, file_notes = restored_file_bodies(sl, split.summarize, split.keep, live, params.file_times)
    if_resumed = _files_if_resumed(sl, split.summarize, split.keep, live, params.file_times, files)
    if if_resumed is not None:
        file_notes.append(
            f"Claude Code {s.version} records no process's end (a cost-state record, from 2.1.277): the files "
            "re-attached are those the process that wrote the records since the last compaction would hold; had the "
            "session been resumed since, Claude Code would hold only what its loaded messages read, wrote or edited "
            "(not the files that compaction re-attached) and re-attach "
            + (", ".join(p.replace("\\", "/").rsplit("/", 1)[-1] for p in if_resumed) or "none")
        )
    if params.mode == "partial" and any((b.get("attachment") or {}).get("type") == "file" for b in files):
        # a partial compaction reads the files it re-attaches before it writes its summary, and that read is among the
        # tools it lists (every partial compaction of the saved runs that re-attached a file lists Read; 2.1.328 REPL
        # seeds 1021 and 18001 had called no Read); a full compaction reads them after
        tools = sorted({*tools, "Read"})
    kept_after = bool(split.keep) and params.mode != "partial"  # 2.1.328's partial summaries say nothing of it
    wrapped = wrap_summary_328(
        formatted,
        tools=tools,
        transcript_path=str(s.path.resolve()),
        directive=params.mode != "partial",
        kept_after=kept_after,
        version=form,
    )
    factory = factory or RecordFactory(s)
    tmpl = _envelope_template(sl)
    # the records kept, as Claude Code lists them: its messages, which a prompt_snapshot (the transcript's note of the
    # system prompt) is not in a kept tail (2.1.328 kept 14 of a tail of 16 records that held two), while a
    # session_context with nothing to send is (2.1.332, an "up to" tail); a partial "from" keeps the whole prefix,
    # prompt_snapshots too (2.1.328 listed 21 of 21). The releases before 2.1.328 list some (docs/binary-findings.md)
    prefix = params.mode == "partial" and params.direction == "from"
    listed = _listed_snapshots(sl, msgs, split.keep)
    held = [
        i
        for i in _as_held(s, split.keep, _loop_start(sl, trigger))
        if recs[i].uuid and (prefix or recs[i].get("attachment_type") != "prompt_snapshot" or i in listed)
    ]
    snapshots_held = not prefix and any(recs[i].get("attachment_type") == "prompt_snapshot" for i in held)
    keep_uuids = [str(recs[i].uuid) for i in (held if prefix else _snapshots_together(s, held, _process_start(sl)))]
    boundary_uuid, summary_uuid = factory.new_id(), factory.new_id()
    anchor = boundary_uuid if params.mode == "partial" and params.direction == "from" else summary_uuid
    meta: dict[str, Any] = {}
    counted = 0
    if params.mode == "partial":
        counted, unknown = summarized_count(sl, split.summarize, form)
        notes += unknown
        meta["messagesSummarized"] = counted
        if params.instructions:
            meta["userContext"] = params.instructions
    if keep_uuids:
        meta["preservedSegment"] = {"headUuid": keep_uuids[0], "anchorUuid": anchor, "tailUuid": keep_uuids[-1]}
        meta["preservedMessages"] = {"anchorUuid": anchor, "uuids": keep_uuids, "allUuids": keep_uuids}
    logical: str | None = sl.uuid(sl.point)
    if params.mode == "partial":
        before_pivot = _last_before(sl, msgs, params.pivot_uuid)
        logical = (
            recs[split.keep[-1]].uuid
            if params.direction == "from" and split.keep
            else recs[before_pivot].uuid
            if params.direction == "up_to" and before_pivot is not None
            else None
        )
    boundary = factory.boundary(tmpl, trigger=trigger, pre_tokens=before, logical_parent=logical, extra_meta=meta)
    boundary["uuid"] = boundary_uuid
    if trigger == "auto":
        boundary.pop("isMeta", None)  # as 2.1.328 writes an automatic boundary
    summary_extra: dict[str, Any] = {"isCompactSummary": True, "isVisibleInTranscriptOnly": True}
    if params.mode == "partial" and split.keep:
        summary_extra["summarizeMetadata"] = {
            "messagesSummarized": counted,
            "userContext": params.instructions,
            "direction": params.direction,
        }
    summary = factory.user(tmpl, boundary_uuid, wrapped, **summary_extra)
    summary["uuid"] = summary_uuid
    reanns, re_notes = reannouncements(sl, msgs, split.keep, params.resume_model, est.settings)
    # the agents of the process that compacts (task_statuses finds where it began): a slice begun by an earlier
    # process still has the ones the compacting process launched
    tasks, task_notes = task_statuses(sl, factory.now, params.asked_at)
    re_notes += task_notes
    notes += file_notes + re_notes
    auto = trigger == "auto"
    before_summary: list[dict[str, Any]] = []
    after_summary: list[dict[str, Any]] = []
    context_records: list[dict[str, Any]] = []
    context_first = False
    # what Claude Code writes around a compaction that is not its result: the session's context and date, the remote
    # session and the system prompt's snapshot (auto), the /compact command's own messages (manual). Neither its
    # postTokens nor the room it leaves the earlier messages counts them (measured: inspector counted 160-167 tokens
    # more than 2.1.332's postTokens after every automatic compaction of 34 fresh runs, 108-116 after /compact)
    outside: list[dict[str, Any]] = []
    if auto:
        # up to 2.1.273 the session's context and the date are the next request's own attachments, written when the
        # messages it sends (the kept records and the summary) hold none, or another: a compaction that keeps the
        # ones before it writes neither (generated seed 159002 on 2.1.270, a fork's second refusal in a turn, kept
        # the first one's; 2.1.274 writes both after every automatic compaction, bisected)
        kept_kinds = {recs[i].get("attachment_type"): i for i in split.keep if recs[i].type == "attachment"}
        as_needed = not at_or_after(form, CONTEXT_ALWAYS_WRITTEN_FROM)
        if at_or_after(form, SESSION_CONTEXT_FROM):
            latest = _latest_index(s, "session_context", sl.point)
            if not (as_needed and latest is not None and kept_kinds.get("session_context") == latest):
                ctx = s.body(latest) if latest is not None else None
                context_records.append(
                    _copy_attachment(factory, tmpl, None, ctx or {"attachment": {"type": "session_context", "context": {}}})
                )
        if at_or_after(form, DATE_WRITTEN_FROM):
            date = _date_attachment(factory, tmpl, None, form)
            kept_day = (s.body(kept_kinds["date"]).get("attachment") or {}).get("date") if "date" in kept_kinds else None
            if not (as_needed and kept_day == date["attachment"]["date"]):
                context_records.append(date)
        outside += context_records
        # before the summary; with nothing kept, or up to 2.1.273, after the re-announcements (as 2.1.328 writes them)
        context_first = not keep_none and at_or_after(form, CONTEXT_BEFORE_SUMMARY_FROM)
        if context_first:
            before_summary += context_records
    elif params.mode == "compact":
        args = params.instructions or ""
        after_summary.append(factory.user(tmpl, None, command_caveat(form), isMeta=True))
        after_summary.append(
            factory.user(
                tmpl,
                None,
                "<command-name>/compact</command-name>\n            <command-message>compact"
                f"</command-message>\n            <command-args>{args}</command-args>",
            )
        )
        stdout, reported = compact_stdout(sl, STDOUT_REPL if tmpl.get("entrypoint") == "cli" else STDOUT)
        if reported:
            notes.append(reported)
        after_summary.append(factory.user(tmpl, None, stdout))
        outside += after_summary
    after_summary += [_copy_attachment(factory, tmpl, None, b) for b in files]
    after_summary += [_copy_attachment(factory, tmpl, None, b) for b in tasks]
    in_use = params.resume_model or s.main_model
    latched = _latched_note(sl) if not params.resume_model else None
    after_summary += [worded_for_model(_copy_attachment(factory, tmpl, None, b), s, in_use, latched) for b in reanns]
    hooked = session_start_hooks(sl)
    if hooked:
        after_summary += [as_compact_hook(_copy_attachment(factory, tmpl, None, b), factory) for b in hooked]
        notes.append(hooks_note(len(hooked), written=True))
    if not context_first:
        after_summary += context_records
    if auto:
        remote = _latest_payload(s, "remote_session_change", sl.point)
        if (
            remote is not None
            and "rendered" in remote
            and not any(recs[i].get("attachment_type") == "remote_session_change" for i in split.keep)
        ):
            after_summary.append(
                _attributed(_copy_attachment(factory, tmpl, None, remote), _latest_payload(s, "model", sl.point))
            )
            outside.append(after_summary[-1])
        k_snap = _snapshot_of(s, sl.point, _compacting_model(sl, params.resume_model))  # the compacting process's own, if written
        # (up to 2.1.327 none while the kept tail lists one: generated seed 150003 on 2.1.290 and 2.1.315)
        snap = s.body(k_snap) if k_snap is not None and not snapshots_held else None
        if snap is not None:  # the system prompt in force; the tool list and CLI prefix are written only with the first
            rec = _copy_attachment(factory, tmpl, None, snap)
            for k in ("tools", "cliPrefix"):
                rec["attachment"].pop(k, None)
            after_summary.append(rec)
            outside.append(rec)
    around = {id(b) for b in outside}
    earlier_note = _earlier_messages(
        sl,
        est,
        msgs,
        split.keep,
        summary,
        [b for b in before_summary + after_summary if b.get("type") == "attachment" and id(b) not in around],
    )
    if earlier_note:
        notes.append(earlier_note)
    new = [boundary] + before_summary + [summary] + after_summary
    _chain_records(new)
    # the chain a resume rebuilds (§3.6): the kept records relinked after the anchor, the rest after them
    kept_bodies = [s.body(i) for i in split.keep]
    if params.mode == "partial" and params.direction == "from":
        resumed = kept_bodies + [summary] + after_summary
    else:
        resumed = before_summary + [summary] + kept_bodies + after_summary
    recorded = rebuild_requests(s)
    style = wire_style(s, recorded)
    thinking = foreign_thinking(s, recorded)
    effort = wire_effort(s, thinking.model)
    sent = api_messages(resumed, style, thinking, effort)
    unsent = _other_models_reasoning(resumed, thinking)
    if unsent:
        notes.append(unsent)
    view = [
        ViewMessage(b.get("uuid"), str(b.get("type")), b, _origin(b, set(keep_uuids), summary_uuid))
        for b in resumed
        if b.get("type") in ("user", "assistant", "attachment")
    ]
    post_tokens = sum(rough_record(b) for b in resumed if id(b) not in around)
    boundary["compactMetadata"]["postTokens"] = post_tokens
    unrendered = (
        []
        if at_or_after(form, ATTACHMENTS_RENDERED_FROM)
        else [b for b in resumed if b.get("type") == "attachment" and "rendered" not in b and rough_attachment(b)]
    )
    after, how = tokens_after(s, est, sent, unrendered)
    notes.append(how)
    context_unrecorded = not at_or_after(form, USER_CONTEXT_RECORDED_FROM)
    if context_unrecorded:
        notes.append(USER_CONTEXT_NOTE.format(version=s.version))
    if unrendered:
        kinds = sorted({str((b.get("attachment") or {}).get("type")) for b in unrendered})
        notes.append(UNRENDERED_NOTE.format(version=s.version, n=len(unrendered), kinds=", ".join(kinds)))
    if pivot_note:
        notes.append(pivot_note)
    if params.mode == "partial" and params.direction == "from":
        notes.append(
            "after a 'from' compaction Claude Code puts the pivot message's text back in the input box (it is not resent)"
        )
    strategy = {"compact": "compact", "reactive": "reactive", "partial": "partial"}[params.mode]
    return CompactionResult(
        strategy=strategy,
        direction=params.direction if params.mode == "partial" else None,
        point_uuid=sl.uuid(sl.point),
        pivot_uuid=params.pivot_uuid if params.mode == "partial" else None,
        view=tuple(view),
        new_records=tuple(new),
        rewritten={},
        cleared_tool_results=(),
        cleared_tokens={},
        summarized_uuids=tuple(u for i in split.summarize if (u := recs[i].uuid)),
        kept_uuids=tuple(keep_uuids),
        summary=wrapped,
        tokens_before=before,
        tokens_after=after,
        restored_files_tokens=0,
        thresholds=est.thresholds,
        notes=tuple(notes + list(out.notes)),
        summarizer=out.summarizer,
        summarizer_usage={**out.usage, "cost_usd": out.cost_usd} if out.usage else None,
        slice_records=len(sl.chain),
        parameters={
            "mode": params.mode,
            "trigger": trigger,
            "instructions": params.instructions,
            "refused_at": params.refused_at,
            "pivot_uuid": params.pivot_uuid,
            "direction": params.direction if params.mode == "partial" else None,
            "rounds": split.rounds,
            "kept_rounds": split.kept_rounds,
            "wire_style": style,
            "wire_model": thinking.model,
            "wire_effort": effort,
            "foreign_thinking": thinking.keep,
            "user_context_unrecorded": context_unrecorded,
            "attachments_unrendered": len(unrendered),
            "reattached_if_resumed": if_resumed,
        },
        api_messages=tuple(sent),
        api_messages_exact=not (context_unrecorded or unrendered),
    )


def _listed_snapshots(sl: Slice, msgs: list[int], keep: list[int]) -> set[int]:
    """The prompt_snapshot records of a kept tail that its list names: none from 2.1.328. Up to 2.1.327 the process
    holds each snapshot it writes just after the one before it in its message list (one it loaded stays where the file
    has it), and the kept tail is taken from that list: a snapshot is named when it is in the tail and so is the one
    before it (or there is none). Generated seeds 150003 on 2.1.290 and 2.1.315 (a refused request's snapshot named
    after the compaction's own, both in the tail), 152002 on 2.1.300 (a threshold compaction's last snapshot moved
    before its tail; a later process's /compact named the one after the last reply) and 155000 on 2.1.268 and
    2.1.300 (a refused request's snapshot moved before the tail)."""
    s = sl.session
    if at_or_after(form_version(s), SNAPSHOTS_UNLISTED_FROM):
        return set()
    start = _process_start(sl)
    kept = set(keep)
    snaps = [i for i in msgs if s.records[i].get("attachment_type") == "prompt_snapshot"]
    out: set[int] = set()
    for n, i in enumerate(snaps):
        if i in kept and (i <= start or n == 0 or snaps[n - 1] in kept):
            out.add(i)
    return out


def _snapshots_together(s: Any, held: list[int], start: int = -1) -> list[int]:
    """`held` with each prompt_snapshot the compacting process wrote (after `start`, where it began) moved up to just
    after the one before it: the place up to 2.1.327 lists a snapshot the process wrote for a later request (generated
    seed 150003 on 2.1.290 and 2.1.315: a refused request's snapshot listed after the compaction's own, before the
    replies written between them). One it loaded stays where the file has it (2.1.310 seed 186047: a fork's copied
    snapshots kept in the copy's order)."""
    out: list[int] = []
    last = None  # the position in `out` just after the last snapshot placed
    for i in held:
        if s.records[i].get("attachment_type") != "prompt_snapshot":
            out.append(i)
        elif i > start and last is not None:  # one it wrote: just after the one before it
            out.insert(last, i)
            last += 1
        else:  # the first, or one it loaded: where the file has it
            out.append(i)
            last = len(out)
    return out


def _as_held(s: Any, keep: list[int], start: int) -> list[int]:
    """The kept records in the order the compacting process held them. Records it read from the file are held in
    the chain's order; those it wrote itself (after `start`, where it began) as it made them: a reply's fragments,
    then its calls' results. The file can have a result between two fragments of one reply (a call that finished
    while the reply was still streaming its next call: 2.1.332 with parallel calls), which that process held after
    the reply's last fragment (2.1.332 REPL seed 79200: its preserved list put each such result after the fragment
    written after it): the loop holds each reply's fragments, then its results, whatever the file's order (see
    _loop_start for the records held as written)."""
    recs = s.records
    last: dict[str, int] = {}  # a reply's message id -> the position of its last fragment in `keep`
    for k, i in enumerate(keep):
        if i > start and recs[i].type == "assistant" and recs[i].message_id:
            last[recs[i].message_id] = k
    out: list[int] = []
    held: dict[str, list[int]] = {}  # results waiting for the last fragment of their reply
    reply: str | None = None  # the reply whose fragments are being read
    for k, i in enumerate(keep):
        r = recs[i]
        if i > start and r.type == "assistant" and r.message_id:
            reply = r.message_id
            out.append(i)
            if last.get(reply) == k:
                out += held.pop(reply, [])
            continue
        if i > start and r.type == "user" and r.tool_results and reply is not None and last.get(reply, -1) > k:
            held.setdefault(reply, []).append(i)
            continue
        out.append(i)
    return out  # a result is held only while a later fragment of its reply is kept, which lets it go


def _other_models_reasoning(bodies: list[dict[str, Any]], thinking: Any) -> str | None:
    """The note for kept replies whose reasoning the resumed request leaves out (another model wrote them), or None."""
    writers: dict[str, int] = {}
    for b in bodies:
        msg = as_dict(b.get("message")) if b.get("type") == "assistant" else {}
        content = msg.get("content")
        if isinstance(content, list) and any(isinstance(x, dict) and x.get("type") in THINKING_TYPES for x in content):
            if thinking.leaves_out(msg.get("model")):
                w = str(msg.get("model"))
                writers[w] = writers.get(w, 0) + 1
    if not writers:
        return None
    n = sum(writers.values())
    return (
        f"{n} reasoning block{'s' if n != 1 else ''} of kept replies ({', '.join(sorted(writers))}) "
        f"{'are' if n != 1 else 'is'} not sent: the next request is {thinking.model}'s, and Claude Code leaves out the "
        f"reasoning another model wrote (its signature is bound to that model; rule '{thinking.keep}', from the "
        "session's recorded requests or, with none to show it, what a connection to another host than Anthropic's does)"
    )


def _earlier_messages(
    sl: Slice, est: Estimator, msgs: list[int], keep: list[int], summary: dict[str, Any], attachments: list[dict[str, Any]]
) -> str | None:
    """2.1.331+'s experiment (CLAUDE_CODE_ELEGANT_MIST): the user's earlier messages written on the summary, as the
    release would for this session. On when the setting says so, or, unset, when the session's own newest summary
    carries the list (the experiment is also a server-side gate inspector cannot read)."""
    s = sl.session
    if not earlier.applies(s.version):
        return None
    chosen = est.settings.earlier_messages
    mode = earlier.mode_of(chosen) if chosen is not None else earlier.mode_in_session(s.body(i) for i in sl.chain)
    if mode is None:
        return None
    conversation = [s.body(i) for i in msgs]
    kept = [s.body(i) for i in keep]
    window = est.thresholds.model_window if est.thresholds is not None else 200_000
    removed = min(sum(rough_record(b) for b in conversation), window) - sum(
        rough_record(b) for b in [summary, *kept, *attachments]
    )
    items = earlier.earlier_messages(mode, conversation, {str(b.get("uuid")) for b in kept if b.get("uuid")}, removed)
    if items:
        summary["earlierMessages"] = items
    why = "set by CLAUDE_CODE_ELEGANT_MIST" if chosen is not None else "as this session's last summary shows"
    return (
        f"the user's earlier messages ({mode}, {why}): {sum(1 for e in items if e['kind'] != 'note')} written on the "
        f"summary, sent before it"
        if items
        else f"no earlier messages to write ({mode}, {why})"
    )


def _origin(body: Mapping[str, Any], kept: set[str], summary_uuid: str) -> str:
    u = body.get("uuid")
    if u == summary_uuid:
        return "summary"
    return "kept" if u in kept else "new"


def _last_before(sl: Slice, msgs: list[int], pivot: str | None) -> int | None:
    s = sl.session
    k = s.conversation.by_uuid.get(pivot) if pivot else None
    if k is None or k not in msgs:
        return None
    before = [i for i in msgs[: msgs.index(k)] if s.records[i].type != "progress"]
    return before[-1] if before else None


def rewind_candidates(sl: Slice) -> list[int]:
    """The messages the rewind menu offers to summarize from or up to, since the last compaction: the prompts the
    user typed (not tool results, meta messages or summaries). Which command records are among them is a rule of the
    release: 2.1.3xx offers a slash command's own record (`/compact`, `/model`) and never its output (read from
    2.1.328's menu filter and seen in its REPL in tmux); the releases before it the same way (2.1.88's selector
    filter, summary_compact.is_pivot_candidate)."""
    s = sl.session
    if TAIL in rules_for(s.version).era.strategies:
        return [i for i in sl.messages if _offered_328(s.records[i], s.body(i))]
    from inspector.compact.summary_compact import is_pivot_candidate

    return [i for i in sl.messages if is_pivot_candidate(sl, i)]


def _offered_328(r: Any, body: Mapping[str, Any]) -> bool:
    """2.1.328's rewind-menu filter (TVo "text" and tZ): a user message that is not a tool result, meta, a summary or
    shown in the transcript only; whose text holds no command output, shell output, task notification or tick;
    that is not a message from another session; and whose origin, when it says, is a human."""
    if r.type != "user" or r.tool_results or r.is_meta or r.is_compact_summary or body.get("isVisibleInTranscriptOnly"):
        return False
    msg = as_dict(body.get("message"))
    content = msg.get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict) and content[0].get("type") == "tool_result":
        return False
    text = text_of(content).strip()
    if not text or any(t in text for t in MENU_HIDDEN_TAGS) or text.startswith("<teammate-message "):
        return False
    origin = body.get("origin")
    if isinstance(origin, dict) and origin.get("kind") not in (None, "human"):
        return False
    return not body.get("stackedExpansion")


RAPID_REFILL_TURNS = 3  # a threshold compaction this few tool rounds after the previous one is a rapid refill (m1o)
RAPID_REFILL_TRIP = 3  # this many in a row and Claude Code stops compacting ("Autocompact is thrashing", _yn)


def rapid_refills(sl: Slice, live: bool | None = None) -> int:
    """The consecutive rapid refills 2.1.3xx would count at a threshold check at the slice's point (Cls): 0 unless the
    last compaction was automatic, in the same turn (no prompt typed since) and process, fewer than 3 tool rounds
    ago; then one more than that compaction counted. Rounds and prompts are counted in the order they were written
    (a compaction's kept tail is relinked after it in the chain, but came before it)."""
    s = sl.session
    if not (same_process(s, sl.boundary, _compacting_end(sl)) if live is None else live):
        return 0  # a new process: its turn tracking starts afresh
    marks = [i for i in sl.history if s.records[i].is_compact_boundary] + [sl.point + 1]
    prev: int | None = None  # the count the last boundary was made with, while it was automatic
    count, start = 0, None
    for here in marks:
        count = 0
        if prev is not None and start is not None:
            seg = [i for i in range(start + 1, here) if not s.records[i].is_sidechain]
            rounds = {
                s.records[i].message_id or s.records[i].uuid
                for i in seg
                if s.records[i].type == "assistant" and not s.body(i).get("isApiErrorMessage")
            }
            if (
                not any(_is_prompt(s.records[i]) for i in seg)
                and len(rounds) < RAPID_REFILL_TURNS
                and same_process(s, start, here)
            ):
                count = prev + 1
        if here <= sl.point:
            b = s.body(here)
            meta = as_dict(b.get("compactMetadata"))
            prev = count if meta.get("trigger") == "auto" else None
            start = here
    return count


def _split_partial(sl: Slice, msgs: list[int], params: EngineParams) -> tuple[Split, str | None]:
    s = sl.session
    recs = s.records
    if params.direction not in ("from", "up_to"):
        raise CompactError(f"direction must be 'from' or 'up_to', not {params.direction!r}")
    if not params.pivot_uuid:
        raise CompactError("partial compaction needs a pivot: the uuid of a prompt you typed (--at)")
    k = s.conversation.by_uuid.get(params.pivot_uuid)
    if k is None or k not in msgs:
        raise CompactError(f"pivot {params.pivot_uuid} is not a message after the last compaction on the conversation's chain")
    if k not in rewind_candidates(sl):
        raise CompactError(
            f"pivot {params.pivot_uuid} is not a message the rewind menu offers (pick a prompt you typed, not a tool "
            "result, a reply, a reminder or a command's output)"
        )
    at = msgs.index(k)
    if params.direction == "from":
        summarize = msgs[at:]
        keep = msgs[:at]
    else:
        summarize = msgs[:at]
        keep = [i for i in msgs[at:] if not recs[i].is_compact_boundary and not recs[i].is_compact_summary]
    # a message or a record that is sent (a SessionStart hook's output before the first prompt: 2.1.328 summarized
    # that alone "up to" the first prompt, REPL seed 88003; with nothing before it, nothing is summarized)
    if not any(recs[i].type in ("user", "assistant") or is_sent(recs[i]) for i in summarize):
        raise CompactError("nothing to summarize on that side of the pivot")
    return Split(summarize, keep, len(api_rounds(s, msgs)), 0, "partial"), None


# ---------------------------------------------------------------------------------------------
# the size of the first request after a resume


def tokens_after(
    s: Any, est: Estimator, sent: list[dict[str, Any]], unrendered: Sequence[Mapping[str, Any]] = ()
) -> tuple[int, str]:
    """The tokens of the first request a resume sends (system prompt and tools included), and how it is known.

    With a recorded request that the API answered: its exact count, less the local count of its messages scaled by
    the session's ratio, plus the same for the new messages (the system prompt and tools are the ones it had).
    Otherwise the calibrated estimate (fixed overhead + ratio × the messages' count). `unrendered`: attachments the
    release renders as it sends them, not in `sent` (counted by their JSON)."""
    counted = count_bodies(
        [{"type": "user", "message": m} if m.get("role") != "assistant" else {"type": "assistant", "message": m} for m in sent]
    ) + count_bodies(unrendered)
    ratio = est.calibration.ratio
    ref = None
    for q in reversed(rebuild_requests(s)):
        if q.agent_id is None and q.replies and q.exact:
            u = s.records[q.replies[0]].usage
            if u is not None:
                ref = (q, context_tokens(u) - u[3])
                break
    if ref is not None:
        q, api = ref
        old = count_bodies(
            [
                {"type": "user", "message": m} if m.get("role") != "assistant" else {"type": "assistant", "message": m}
                for m in q.request.get("messages") or ()
            ]
        )
        value = max(0, round(api + ratio * (counted - old)))
        return value, (
            f"tokens after: the recorded request {q.id} ({api:,} tokens by the API, system prompt and tools included) "
            f"with its messages replaced by these (estimated ×{ratio:.2f} from the offline count)"
        )
    value = max(0, est.calibration.predict(counted))
    return (
        value,
        "tokens after: estimated (the session's fixed overhead + its calibrated ratio × the offline count of the messages)",
    )


__all__ = [
    "EngineParams",
    "MODES",
    "api_rounds",
    "engine_compact",
    "rewind_candidates",
    "rough_record",
    "split_compact",
    "split_reactive",
    "tokens_after",
    "trailing_records",
    "wrap_summary_328",
]
