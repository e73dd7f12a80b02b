"""What fills the context at a message (like /context, for any point in the past), and what a
full compaction puts back after the summary (§8.5: recently used files, the plan file, open todos).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from inspector.tokens.estimate import count, js_stringify, rough
from inspector.transcript.records import iter_blocks, tool_result_text
from inspector.transcript.session import Session

POST_COMPACT_MAX_FILES_TO_RESTORE = 5
POST_COMPACT_MAX_TOKENS_PER_FILE = 5_000
POST_COMPACT_TOKEN_BUDGET = 50_000
MEMORY_FILE_NAMES = ("CLAUDE.md", "CLAUDE.local.md")


@dataclass(frozen=True, slots=True)
class RestoredFile:
    path: str
    tokens: int  # estimated API tokens of the attachment
    kind: str  # "file" (content re-attached), "reference" (too large: name only), "plan" or "todo"
    counted: int  # offline-tokenizer count of the attachment
    partial: bool = False  # the file's size is estimated from a partial read (offset/limit) and its line count


def tool_inputs(s: Session, index: int) -> dict[str, dict[str, Any]]:
    msg = s.body(index).get("message")
    out = {}
    for b in iter_blocks(msg.get("content") if isinstance(msg, dict) else None):
        if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
            inp = b.get("input")
            out[b["id"]] = inp if isinstance(inp, dict) else {}
    return out


FILE_TOOLS = frozenset({"Read", "Edit", "MultiEdit", "Write"})


@dataclass(slots=True)
class FileState:
    """What the transcript says of one file's content as Claude Code last knew it (its readFileState)."""

    path: str
    touched: int  # chain position of the last read, edit or write
    modified: bool  # edited or written on this stretch: its file time is then the time of that change
    source: str | _Numbered | None  # the content (see `content`)
    scale: float  # the whole file is about `scale` times `content` (a partial read); 1.0 when exact
    changed_at: int = -1  # chain position of its last edit or write on this stretch (-1: none): its file time
    by: str = ""  # what touched it last: a tool's name, or "attachment" (a compaction re-attached it)
    result: int = -1  # record index of that touch's result (or of the attachment)
    changed_result: int = -1  # record index of the last edit's or write's result

    @property
    def content(self) -> str | None:
        """The content, or the part of it that was read. A Read result without its structured copy gives it as
        numbered lines, taken apart only when asked for: a compaction re-attaches a handful of a stretch's files."""
        self.source = c = _content(self.source)  # taken apart once
        return c


@dataclass(frozen=True, slots=True)
class _Numbered:
    """A file's text still in the numbered form the Read tool showed it."""

    text: str


def _content(source: str | _Numbered | None) -> str | None:
    return _unnumber(source.text) if isinstance(source, _Numbered) else source


def numbered(text: str, start: int = 1) -> str:
    """A file's text as the Read tool shows it (`cat -n` with an arrow), which is what a re-attached file is sent as."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(lines, start))


def result_of(s: Session, tid: str) -> tuple[Any, str, bool] | None:
    """(toolUseResult, tool_result text, is_error) of a tool call, or None when it has no result."""
    res = s.tool_index.get(tid, (None, None))[1]
    if res is None:
        return None
    body = s.body(res)
    text, err = "", False
    for b in iter_blocks((body.get("message") or {}).get("content") if isinstance(body.get("message"), dict) else None):
        if b.get("type") == "tool_result" and b.get("tool_use_id") == tid:
            text = tool_result_text(b.get("content"))
            err = b.get("is_error") is True
    return body.get("toolUseResult"), text, err or text.lstrip().startswith("<tool_use_error>")


UNCHANGED_STUBS = (
    "File unchanged since last read",  # 2.1.88's stub
    "Wasted call \u2014 file unchanged since your last Read",  # 2.1.2xx's (2.1.250: the file_unchanged result's text)
)


def is_unchanged_stub(tur: Any, text: str) -> bool:
    """Whether a Read's result is the stub Claude Code answers a read of a file it holds unchanged with (its
    toolUseResult `file_unchanged`, or the stub's words where no structured result is kept): no content is in it."""
    return (isinstance(tur, dict) and tur.get("type") == "file_unchanged") or text.startswith(UNCHANGED_STUBS)


def _apply_edit(content: str | None, old: Any, new: Any, replace_all: Any) -> str | None:
    if content is None or not isinstance(old, str) or not isinstance(new, str):
        return None
    if old == "":
        return new if content == "" else None
    if old not in content:
        return None
    return content.replace(old, new) if replace_all is True else content.replace(old, new, 1)


def process_exits(s: Session) -> list[int]:
    """Record indexes of the session's `cost-state` records: Claude Code (2.1.3xx) writes one as a process exits (one
    per run in the conformance runs); and in a fork (--fork-session), the last record of the copy it starts with,
    which the session it was forked from wrote (2.1.332 seed 84014: the fork's process held the files read in the
    kept records it copied, as a resumed process does). A file without any (a release before 2.1.277) has the ends
    its resumed processes' first skill listings show (`resumed_before`). Remembered on the session."""
    got = s.__dict__.get("_process_exits")
    if got is None:
        got = [i for i, r in enumerate(s.records) if r.type == "cost-state"] or resumed_before(s)
        copied = fork_copy_end(s)
        if copied is not None and copied not in got:
            got = sorted([*got, copied])
        s.__dict__["_process_exits"] = got
    return got


EXITS_RECORDED_FROM = (2, 1, 277)  # the first release that writes a cost-state record as a process exits (bisected)


def resumed_before(s: Session) -> list[int]:
    """In a session whose release records no process's end (before 2.1.277: no cost-state record), the ends of the
    processes that a later one resumed, where that one says it began: a process sends the skill listing once, its
    first marked `isInitial` (2.1.2xx's sentSkillNames, a process's own; a resumed process seeds it from a listing its
    loaded messages hold, and up to 2.1.303 a compaction neither clears it nor lists the skills again), so a main-thread
    listing marked initial with the conversation's records before its turn is a resumed (or forked) process's, whose
    loaded messages had lost the listing to a compaction, which is where telling the processes apart matters
    (generated seeds 155000 on 2.1.268, 158000 on 2.1.250 and 2.1.268, 159003 on 2.1.238 and 2.1.270: the re-attached
    files, the background agents and the prompt snapshots a resumed process holds). A process that sends no prompt (a
    /compact alone) lists nothing, nor one whose loaded messages kept the listing: those are read as the one before.
    The end is the last record before the turn that listing opens (its prompt, and what a resume writes before it:
    queue operations, a "Continue from where you left off." pair)."""
    from inspector.claude.release import at_or_after

    recs = s.records
    listings = [
        i
        for i, r in enumerate(recs)
        if r.type == "attachment"
        and r.get("attachment_type") == "skill_listing"
        and not r.is_sidechain
        and not at_or_after(r.version, EXITS_RECORDED_FROM, unknown=True)  # (from it, a cost-state says; from 2.1.304
        # a compaction lists the skills again, marked initial)
    ]
    out: list[int] = []
    for i in listings:
        if (s.body(i).get("attachment") or {}).get("isInitial") is not True:
            continue
        j = i - 1
        while j >= 0 and _opens_a_turn(recs[j]):
            j -= 1
        if j >= 0 and any(recs[k].type in ("user", "assistant") for k in range(j + 1)):
            out.append(j)  # (a fork's first listing too: the records before it are the copy a process of the other
            # session wrote; the file's first process lists the skills at its first prompt, with nothing before it)
    return sorted(set(out))


def _opens_a_turn(r: Any) -> bool:
    """A record a process writes as it takes a prompt: the prompt, its attachments, queue operations, bookkeeping
    without a uuid, and what a resume writes for an interrupted turn (a meta prompt and a synthetic reply)."""
    if r.type in ("attachment", "queue-operation") or r.uuid is None:
        return True
    if r.type == "user":
        return not r.tool_results
    return r.type == "assistant" and r.model == "<synthetic>"


def fork_copy_end(s: Session) -> int | None:
    """The last record of the copy a fork starts with: the records stamped before the file's first write (the fork's
    own first record), in a file whose replies carry the session that made them (a copy's mark, 2.1.332), or that
    begins with a compaction's boundary (2.1.3xx's --fork-session copies the records since the last compaction, the
    boundary first: a file of its own never starts so; 2.1.300 seed 160003, whose copy has no mark: the fork's process
    re-attached no file the copied compaction had, inspector one); None otherwise."""
    recs = s.records
    first = next((r.timestamp for r in recs if r.timestamp), None)
    if first is None:
        return None
    first_node = next((r for r in recs if r.uuid is not None), None)
    copied_from_boundary = first_node is not None and first_node.is_compact_boundary
    marked = any(r.extra and r.type == "assistant" and r.extra.get("fork_copy") for r in recs)
    if not (copied_from_boundary or marked or _copied_conversation(recs, first)):
        return None
    end = None
    for i, r in enumerate(recs):
        if r.timestamp is None:
            continue
        if r.timestamp < first:
            end = i
        elif end is not None and r.type in ("user", "assistant") and r.timestamp >= first:
            break  # the fork's own messages: the copy is behind
    return end


def _copied_conversation(recs: list[Any], first: str) -> bool:
    """A fork of a session with no compaction, before 2.1.332 (nothing marks the copy): a prompt and a reply stamped
    before the file's first write, and the first message stamped after it the fork's own prompt (2.1.290 seed 187014). A REPL's
    queued prompt is written first too, above the replies of the turn it waits for, but the turn goes on after it: the
    next message stamped after it is a tool result or a reply (2.1.300 REPL seed 173000, 2.1.310 REPL seed 181001)."""

    def prompt(r: Any) -> bool:
        return r.type == "user" and not (r.tool_results or r.is_meta or r.is_compact_summary or r.is_sidechain)

    before = [r for r in recs if r.timestamp is not None and r.timestamp < first]
    if not any(r.type == "assistant" and r.has_real_usage for r in before) or not any(prompt(r) for r in before):
        return False  # (a file of its own: at most a reply stamped a moment before the prompt that opens it)
    own = next((r for r in recs if r.type in ("user", "assistant") and r.timestamp is not None and r.timestamp >= first), None)
    return own is not None and prompt(own)


def same_process(s: Session, start: int | None, end: int) -> bool:
    """Whether the records after `start` and before `end` (record indexes, file order) were written by one Claude
    Code process: no process exit between them."""
    exits = process_exits(s)
    k = bisect.bisect_right(exits, -1 if start is None else start)
    return k == len(exits) or exits[k] >= end


def file_states(s: Session, chain: list[int], *, attachments: bool = False) -> dict[str, FileState]:
    """The files read, edited or written on this stretch of the chain, with what is known of their content.

    A full read or a write gives the content exactly; an edit applies its change to the original the tool
    recorded (`toolUseResult.originalFile`) or to what was known; a partial read (offset/limit) gives a part
    and the file's length in lines, so the whole is estimated from it. A read answered "File unchanged
    since last read" changes nothing (Claude Code does not refresh its state for it). With `attachments`, a file a
    compaction re-attached counts as read (within the process that compacted)."""
    states: dict[str, FileState] = {}
    for pos, i in enumerate(chain):
        r = s.records[i]
        if attachments and r.type == "attachment" and r.get("attachment_type") == "file":
            # a file a compaction re-attached: Claude Code read it again then, and holds it as read (in that process)
            att = s.body(i).get("attachment") or {}
            f = ((att.get("content") or {}).get("file") or {}) if isinstance(att.get("content"), dict) else {}
            path = att.get("filename")
            if isinstance(path, str) and isinstance(f.get("content"), str):
                prev = states.get(path)
                states[path] = FileState(
                    path,
                    pos,
                    bool(prev and prev.modified),
                    f["content"],
                    1.0,
                    prev.changed_at if prev else -1,
                    "attachment",
                    i,
                    prev.changed_result if prev else -1,
                )
            continue
        if not r.tool_uses or not any(name in FILE_TOOLS for _, name in r.tool_uses):
            continue
        inputs = tool_inputs(s, i)
        for tid, name in r.tool_uses:
            if name not in FILE_TOOLS:
                continue
            inp = inputs.get(tid, {})
            path = inp.get("file_path")
            got = result_of(s, tid)
            if not isinstance(path, str) or not path or got is None or got[2]:
                continue
            tur, text, _ = got
            tur = tur if isinstance(tur, dict) else {}
            prev = states.get(path)
            content: str | _Numbered | None
            content, scale = (prev.source, prev.scale) if prev else (None, 1.0)
            if name == "Read":
                if is_unchanged_stub(tur, text):
                    continue
                f = tur.get("file") if isinstance(tur.get("file"), dict) else None
                if f is not None and isinstance(f.get("content"), str):
                    content = f["content"]
                    n, total = f.get("numLines"), f.get("totalLines")
                    scale = total / n if isinstance(n, int) and isinstance(total, int) and 0 < n < total else 1.0
                elif tur.get("type") in ("image", "pdf", "notebook", "parts"):
                    continue  # not a text file: re-attached as media, outside this estimate
                else:
                    # no structured result (subagent files, old versions): the numbered text itself
                    content = _Numbered(text)
                    scale = 1.0
            elif name == "Write":
                c = inp.get("content")
                content, scale = (c, 1.0) if isinstance(c, str) else (content, scale)
            elif name == "Edit":
                orig = tur.get("originalFile")
                base = orig if isinstance(orig, str) else (_content(content) if scale == 1.0 else None)
                content = _apply_edit(base, inp.get("old_string"), inp.get("new_string"), inp.get("replace_all"))
                scale = 1.0
                if content is None and prev is not None:
                    content, scale = prev.source, prev.scale
            else:  # MultiEdit
                orig = tur.get("originalFileContents")
                cur = orig if isinstance(orig, str) else (_content(content) if scale == 1.0 else None)
                for e in inp.get("edits") or ():
                    if isinstance(e, dict):
                        cur = _apply_edit(cur, e.get("old_string"), e.get("new_string"), e.get("replace_all"))
                if cur is not None:
                    content, scale = cur, 1.0
            modified = name != "Read" or (prev is not None and prev.modified)
            res = s.tool_index.get(tid, (None, None))[1]
            res = res if isinstance(res, int) else i
            if name == "Read":
                changed, changed_res = (prev.changed_at, prev.changed_result) if prev is not None else (-1, -1)
            else:
                changed, changed_res = pos, res
            states[path] = FileState(path, pos, modified, content, scale, changed, name, res, changed_res)
    return states


def _unnumber(text: str) -> str:
    """The file text inside a Read result shown with line numbers."""
    out = []
    for line in text.split("\n"):
        head, sep, rest = line.partition("\u2192")
        if sep and head.strip().isdigit():
            out.append(rest)
        else:
            head, sep, rest = line.partition("\t")
            out.append(rest if sep and head.strip().isdigit() else line)
    return "\n".join(out)


PLAN_PREFIX = "Implement the following plan:"


@dataclass(frozen=True, slots=True)
class Carried:
    """What outlives a compaction and is re-attached after it: the plan file's content and the todo list, as
    they stood at each position of the logical chain (one scan, then each question is a binary search)."""

    plan_pos: tuple[int, ...]
    plans: tuple[str | None, ...]
    todo_pos: tuple[int, ...]
    todos: tuple[list[Any] | None, ...]

    def at(self, pos: int) -> tuple[str | None, list[Any] | None]:
        """(plan, open todos) in force at chain position `pos` (inclusive)."""
        import bisect

        k = bisect.bisect_right(self.plan_pos, pos) - 1
        j = bisect.bisect_right(self.todo_pos, pos) - 1
        return (self.plans[k] if k >= 0 else None), (self.todos[j] if j >= 0 else None)


def carried(s: Session, chain: list[int]) -> Carried:
    """The plan file and todo list along a chain (see `Carried`), remembered for the session's chain.

    Plan files live under `~/.claude/plans/<slug>.md`, named by the `slug` every record of such a session
    carries (older builds had plan mode but no plan file, and no slug). Their content shows in the transcript
    as the plan ExitPlanMode presented, as a Write or Edit of the plan file, or as the first prompt of a session
    started to carry out a plan ("Implement the following plan: ..."). The todo list is the last TodoWrite's;
    an empty or all-done list is none (Claude Code then holds an empty list and re-attaches nothing)."""
    key = (id(s.conversation), len(chain), chain[-1] if chain else None)
    memo = s.__dict__.get("_carried")
    if memo is not None and memo[0] == key:
        return memo[1]
    has_plan_file = any(isinstance(s.body(i).get("slug"), str) for i in chain[:20] if s.records[i].is_message)
    plan_pos: list[int] = []
    plans: list[str | None] = []
    todo_pos: list[int] = []
    todos: list[list[Any] | None] = []
    plan: str | None = None
    for pos, i in enumerate(chain):
        r = s.records[i]
        if has_plan_file and r.type == "user" and not r.tool_results:
            p = r.get("prompt")
            if p and p.startswith(PLAN_PREFIX):
                text = s.record_text(i)
                if text.startswith(PLAN_PREFIX):
                    plan = text[len(PLAN_PREFIX) :].strip()
                    plan_pos.append(pos)
                    plans.append(plan)
            continue
        if not r.tool_uses or not any(n in ("ExitPlanMode", "Write", "Edit", "TodoWrite") for _, n in r.tool_uses):
            continue
        inputs = tool_inputs(s, i)
        for tid, name in r.tool_uses:
            inp = inputs.get(tid, {})
            if name == "TodoWrite" and isinstance(inp.get("todos"), list):
                t = inp["todos"]
                done = not t or all(isinstance(x, dict) and x.get("status") == "completed" for x in t)
                todo_pos.append(pos)
                todos.append(None if done else t)
            elif not has_plan_file:
                continue
            elif name == "ExitPlanMode" and isinstance(inp.get("plan"), str) and inp["plan"].strip():
                plan = inp["plan"]
            elif name in ("Write", "Edit") and "/.claude/plans/" in str(inp.get("file_path", "")).replace("\\", "/"):
                if name == "Write" and isinstance(inp.get("content"), str):
                    plan = inp["content"]
                elif name == "Edit":
                    plan = _apply_edit(plan, inp.get("old_string"), inp.get("new_string"), inp.get("replace_all")) or plan
            else:
                continue
            if name != "TodoWrite":
                plan_pos.append(pos)
                plans.append(plan)
    out = Carried(tuple(plan_pos), tuple(plans), tuple(todo_pos), tuple(todos))
    s.__dict__["_carried"] = (key, out)
    return out


def restored_context(s: Session, chain: list[int], ratio: float, upto: int | None = None) -> list[RestoredFile]:
    """Everything a full compaction puts back after the summary that the transcript lets us see (§8.5): the
    recently used files of this stretch of the chain, and the plan file and open todo list in force at its end
    (`upto`: that end's position in the session's logical chain, found when not given)."""
    out = restored_files(s, chain, ratio)
    whole = s.conversation.logical_chain
    if upto is None:
        last = chain[-1] if chain else None
        upto = whole.index(last) if last is not None and last in whole else -1
    plan, todos = carried(s, whole).at(upto)
    if plan:
        counted = count(plan) + 40
        out.append(RestoredFile("plan file", round(ratio * counted), "plan", counted))
    if todos:
        counted = count(js_stringify(todos)) + 40
        out.append(RestoredFile("todo list", round(ratio * counted), "todo", counted))
    return out


# A long session re-attaches the same files compaction after compaction (the bench's 200 MB session counts 19 texts
# 2,085 times over its 139 compactions: 0.7 s of its counts): a file's count is kept by its text, which is what the
# count depends on. Bounded: a file's text can be large.
_file_count = lru_cache(maxsize=128)(count)


@lru_cache(maxsize=128)
def _numbered_count(text: str) -> int:
    """`count(numbered(text))`, kept by the text (see `_file_count`)."""
    return count(numbered(text))


def _names_big_files(version: str | None) -> bool:
    """Whether the release that compacted re-attaches a file over 5,000 tokens by its name only: from 1.0.85 (the era
    matrix's big-file-named probe, bisected: 1.0.70, 1.0.71 and 1.0.84 re-attached a file of 400 lines, about 7,600
    tokens, whole); a release the bisection does not place does as today's."""
    from inspector.claude.measured import answer_at

    return answer_at("big-file-named", version) is not False


def restored_files(s: Session, chain: list[int], ratio: float) -> list[RestoredFile]:
    """The files a full compaction re-attaches (§8.5): 5 of the files read, edited or written, excluding
    CLAUDE.md and plan files, each re-read whole: a file over 5,000 tokens becomes a reference (its name
    only, from 1.0.85), and files are kept while their rough size fits the 50,000-token budget.

    Which 5: Claude Code sorts its read-file state by the timestamp it stored, which is the file's
    modification time when it was read or written (not the time of the read). A file Claude Code edited
    carries the time of that edit; a file it only read carries a time from before the session, which the
    transcript does not show. So edited and written files come first, newest first, then the files only
    read, the most recently read first (the closest the transcript comes to their age)."""
    states = sorted(file_states(s, chain).values(), key=lambda f: (f.modified, f.touched), reverse=True)
    out: list[RestoredFile] = []
    budget = 0
    named_over_cap = _names_big_files(next((s.records[i].version for i in reversed(chain) if s.records[i].version), s.version))
    for st in states:
        path = st.path
        name = path.replace("\\", "/").rsplit("/", 1)[-1]
        if name in MEMORY_FILE_NAMES or "/.claude/plans/" in path.replace("\\", "/") or st.content is None:
            continue
        raw = _file_count(st.content) * st.scale
        kind = "file"
        if named_over_cap and ratio * raw > POST_COMPACT_MAX_TOKENS_PER_FILE:
            kind = "reference"
            counted = count(js_stringify({"type": "compact_file_reference", "filename": path})) + 10
            cost = counted
        else:
            counted = round(_numbered_count(st.content) * st.scale) + 20 + _file_count(path)
            cost = round(rough(st.content) * st.scale)
        if budget + cost > POST_COMPACT_TOKEN_BUDGET:
            break
        budget += cost
        out.append(RestoredFile(path, round(ratio * counted), kind, counted, st.scale != 1.0))
        if len(out) >= POST_COMPACT_MAX_FILES_TO_RESTORE:
            break
    return out
