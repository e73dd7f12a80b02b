"""The round trip: inspector compacts a session a run left, saves it as a new session, the real Claude Code resumes
that session (`claude --resume NEW -p continue`) against the fake API, and the first request it sends must be what
inspector previewed: its `api_messages`, then only what Claude Code adds for a new turn (fresh reminders, the
prompt). Any other difference is a failing row.

Every strategy of the session's release is tried where it applies: "compact now" as /compact (with and without
instructions) and as a threshold compaction, "as if the API refused" at a limit below the context, and partial
compaction from and up to each prompt the rewind menu offers. The original transcript must be byte-identical after.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.fake_api import FakeAPI, Script
from conformance.runner import Claude, Sandbox, _clean_env, canonical

PROMPT = "continue"


@dataclass
class Case:
    label: str
    kwargs: dict[str, Any]


@dataclass
class ResumeRow:
    run: str
    case: str
    ok: bool
    detail: str
    api_messages: int = 0
    sent_messages: int = 0
    extra: list[str] = field(default_factory=list)


def _blocks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for m in canonical(messages):
        c = m.get("content")
        out.append({**m, "content": [{"text": c, "type": "text"}] if isinstance(c, str) else c})
    return out


def _block_extends(a: dict[str, Any], r: dict[str, Any]) -> bool:
    """`r` is block `a` with text Claude Code added at its end (a newline at a seam, reminders folded into a result)."""
    if a == r:
        return True
    if a.get("type") != r.get("type"):
        return False
    if a.get("type") == "text":
        return str(r.get("text", "")).startswith(str(a.get("text", "")))
    if a.get("type") == "tool_result":
        rest_a = {k: v for k, v in a.items() if k != "content"}
        rest_r = {k: v for k, v in r.items() if k != "content"}
        ca, cr = a.get("content"), r.get("content")
        if rest_a != rest_r:
            return False
        if isinstance(ca, str) and isinstance(cr, str):
            return cr.startswith(ca)
        if isinstance(ca, list) and isinstance(cr, list) and len(cr) >= len(ca):
            return all(x == y for x, y in zip(ca[:-1], cr)) and (not ca or _block_extends(ca[-1], cr[len(ca) - 1]))
    return False


def extends(previewed: list[dict[str, Any]], sent: list[dict[str, Any]], prompt: str = PROMPT) -> tuple[bool, str]:
    """Whether the request `sent` is the `previewed` messages followed by a new turn ending in `prompt`."""
    a, r = _blocks(previewed), _blocks(sent)
    if not a:
        return False, "nothing previewed"
    if len(r) < len(a):
        return False, f"Claude Code sent {len(r)} messages, fewer than the {len(a)} previewed"
    for k in range(len(a) - 1):
        if a[k] != r[k]:
            return False, f"message {k} ({a[k].get('role')}) differs: {_first_difference(a[k], r[k])}"
    last_a, last_r = a[-1], r[len(a) - 1]
    if last_a.get("role") != last_r.get("role"):
        return False, f"message {len(a) - 1} is {last_r.get('role')} where the preview has {last_a.get('role')}"
    ba, br = last_a["content"], last_r["content"]
    if len(br) < len(ba) or any(x != y for x, y in zip(ba[:-1], br)) or not _block_extends(ba[-1], br[len(ba) - 1]):
        return False, f"message {len(a) - 1} ({last_a.get('role')}) differs: {_first_difference(last_a, last_r)}"
    users = [m for m in r[len(a) - 1 :] if m.get("role") == "user"]
    tail = users[-1]["content"] if users else []
    texts = [b for b in tail if b.get("type") == "text"]
    if not texts or texts[-1].get("text", "").strip() != prompt:
        return False, f"the new turn does not end with the prompt {prompt!r}"
    return True, f"{len(a)} previewed messages, then the new turn"


USER_CONTEXT_START = "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n"


def matches(res: Any, saved: Path, sent: list[dict[str, Any]]) -> tuple[bool, str]:
    """Whether Claude Code sent, on resuming the saved session, exactly what inspector says it sends.

    Two checks. The preview: the saved chain, as a resume rebuilds it, sends `api_messages` (what `compact --json`
    printed before anything was written). The request: the saved chain plus the records Claude Code appended for the
    new turn (its prompt and fresh reminders, found in the session file after the run) send exactly the messages
    the fake API received. Fresh reminders can land inside the last previewed user turn (attachments move up to
    the last assistant message), so the request is compared with the whole chain, not with a prefix."""
    from inspector.claude.wire import api_messages, effort_of, sent_bodies, thinking_of
    from inspector.transcript.session import Session
    from inspector.transcript.tree import Conversation

    style = str(res.parameters.get("wire_style") or "user")
    thinking = thinking_of(res.parameters)
    effort = effort_of(res.parameters)
    after = Session.load(saved)
    first_row = _request_end(after)
    bodies = sent_bodies(after, Conversation(after.records[:first_row]).chain)
    before_268 = bool(res.parameters.get("user_context_unrecorded"))  # the preview says it is not exact
    if before_268 and any(b.get("type") == "attachment" and "rendered" not in b for b in bodies):
        # the new turn brought attachments the release renders as it sends them (no record holds their text)
        ok, why = in_order(res, sent)
        return ok, f"{why}; the new turn's attachments are rendered as sent"
    whole = _blocks(api_messages(bodies, style, thinking, effort))
    got = _blocks(sent)
    if before_268:
        # the release puts its user context before the first message's blocks, in no record (the preview says so):
        # it must be there, and the rest must be exactly the chain
        first = got[0]["content"] if got else []
        if not (first and str(first[0].get("text", "")).startswith(USER_CONTEXT_START)):
            return False, "the release's user context was not the first block Claude Code sent"
        got = [{**got[0], "content": first[1:]}, *got[1:]]
    if whole != got:
        k = next((n for n, (x, y) in enumerate(zip(whole, got)) if x != y), min(len(whole), len(got)))
        what = _first_difference(whole[k], got[k]) if k < min(len(whole), len(got)) else f"{len(whole)} vs {len(got)} messages"
        if before_268:
            # a release before 2.1.268 also sends reminders it records nowhere (2.1.163 listed its skills for a new
            # turn with no record: seed 154000); the preview says it is not exact, so the check is that it is in order
            ok, why = in_order(res, sent)
            return ok, f"{why} (not exactly: at message {k}, {what})"
        return False, f"the request differs from the saved chain + the new turn at message {k}: {what}"
    preview = _blocks([dict(m) for m in res.api_messages or ()])
    if _blocks(api_messages(sent_bodies(after, _chain_before_resume(after, res)), style, thinking, effort)) != preview:
        return False, "the saved chain sends other messages than the preview showed"
    return True, f"identical: the {len(preview)} previewed messages and the new turn ({len(got)} messages)"


def _request_end(after: Any) -> int:
    """Where the records the resumed request was built from end: at its `api-request` record (2.1.3xx), else, for a
    release that records none (before 2.1.3xx), at the first reply after the new turn's prompt (its answer)."""
    recs = after.records
    row = next((k for k, r in enumerate(recs) if r.type == "api-request"), None)
    if row is not None:
        return row
    prompts = [k for k, r in enumerate(recs) if r.type == "user" and not r.is_meta and after.record_text(k).strip() == PROMPT]
    if not prompts:
        return len(recs)
    return next((k for k in range(prompts[-1] + 1, len(recs)) if recs[k].type == "assistant"), len(recs))


def _chain_before_resume(after: Any, res: Any) -> list[int]:
    """The saved session's chain as inspector wrote it: up to its last record, before Claude Code appended any."""
    from inspector.claude.measured import resumed_chain
    from inspector.transcript.tree import Conversation

    last = str(res.new_records[-1].get("uuid")) if res.new_records else None
    end = after.conversation.by_uuid.get(last) if last else None
    recs = after.records[: end + 1] if end is not None else after.records
    return resumed_chain(Conversation(recs), after.version)


def _first_difference(a: Any, b: Any, path: str = "") -> str:
    if type(a) is not type(b):
        return f"{path or 'the message'}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return _first_difference(a.get(k), b.get(k), f"{path}.{k}")
        return path
    if isinstance(a, list):
        for k, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _first_difference(x, y, f"{path}[{k}]")
        return f"{path}: {len(a)} vs {len(b)} items"
    if isinstance(a, str) and len(a) + len(b) > 160:  # long texts: where they part
        k = next((j for j, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        return f"{path} (from character {k}): {a[max(0, k - 20) : k + 60]!r} vs {b[max(0, k - 20) : k + 60]!r}"
    return f"{path}: {str(a)[:80]!r} vs {str(b)[:80]!r}"


def cases_for(s: Any) -> list[Case]:
    """The strategies a session's release has, each where it applies."""
    from inspector.claude.versions import FULL, MICROCOMPACT, PARTIAL_FROM, PARTIAL_UP_TO, SESSION_MEMORY, TAIL, rules_for
    from inspector.compact import make_slice
    from inspector.compact.base import Estimator
    from inspector.compact.engine import rewind_candidates
    from inspector.compact.summary_compact import is_pivot_candidate

    era = rules_for(s.version).era
    sl = make_slice(s)
    if TAIL in era.strategies:
        before = Estimator(s, sl.series).before(sl)
        cases = [
            Case("compact (/compact)", {"strategy": "compact"}),
            Case("compact (/compact keep the step numbers)", {"strategy": "compact", "instructions": "keep the step numbers"}),
            Case("compact (threshold)", {"strategy": "compact", "trigger": "auto"}),
            Case(f"reactive (refused at {before * 3 // 4:,})", {"strategy": "reactive", "refused_at": max(1, before * 3 // 4)}),
        ]
        pivots = rewind_candidates(sl)
    else:  # an older release: its own strategies, saved in its own format
        cases = []
        if FULL in era.strategies:
            cases += [
                Case("full (/compact)", {"strategy": "full"}),
                Case("full (/compact keep the API decisions)", {"strategy": "full", "instructions": "keep the API decisions"}),
            ]
        if SESSION_MEMORY in era.strategies:
            cases.append(Case("session-memory", {"strategy": "session-memory"}))
        if MICROCOMPACT in era.strategies:
            from inspector.compact import MicrocompactParams

            cases.append(
                Case(
                    "microcompact (keep 1, without the gap)",
                    {"strategy": "microcompact", "microcompact_params": MicrocompactParams(keep_recent=1, force=True)},
                )
            )
        pivots = [i for i in sl.messages if is_pivot_candidate(sl, i)]
    directions = [
        d for d, kind in (("from", PARTIAL_FROM), ("up_to", PARTIAL_UP_TO)) if kind in era.strategies or TAIL in era.strategies
    ]
    for i in pivots[:3]:
        u = s.records[i].uuid
        for d in directions:
            cases.append(Case(f"partial {d.replace('_', ' ')} {u[:8]}", {"strategy": "partial", "pivot": u, "direction": d}))
    return cases


def _as_merged(bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records in the order their blocks are sent: a reply's later fragments join its first, as the wire joins them,
    over the tool results and attachments written between them (a call run while the reply streamed: its result is
    written before the reply's next fragment; 2.1.219 seed 189059)."""
    out: list[dict[str, Any]] = []
    open_at: dict[str, int] = {}  # a reply's message id -> where its fragments go, while only results follow it
    for b in bodies:
        msg = b.get("message") or {}
        mid = msg.get("id") if b.get("type") == "assistant" else None
        if mid is not None and mid in open_at:
            out.insert(open_at[mid], b)
            open_at = {k: (v + 1 if v >= open_at[mid] else v) for k, v in open_at.items()}
            continue
        c = msg.get("content")
        result = (
            b.get("type") == "user"
            and isinstance(c, list)
            and any(isinstance(x, dict) and x.get("type") == "tool_result" for x in c)
        )
        if b.get("type") == "user" and not result:
            open_at.clear()
        out.append(b)
        if mid is not None:
            open_at[mid] = len(out)
    return out


def in_order(res: Any, sent: list[dict[str, Any]]) -> tuple[bool, str]:
    """For a session saved in an older release's format (no exact wire form): the summary and every kept message of
    the preview reach the request, in order (text by text, tool call and result by id)."""

    def needles(blocks: list[dict[str, Any]]) -> list[tuple[str, str]]:
        out = []
        for b in blocks:
            t = b.get("type")
            if t == "text" and str(b.get("text", "")).strip():
                out.append(("text", str(b["text"]).strip()))
            elif t == "tool_use":
                out.append(("tool_use", str(b.get("id"))))
            elif t == "tool_result":
                out.append(("tool_result", str(b.get("tool_use_id"))))
        return out

    want: list[tuple[str, str]] = []
    for body in _as_merged([v.body for v in res.view if v.role in ("user", "assistant", "attachment")]):
        if body.get("type") not in ("user", "assistant") or body.get("isApiErrorMessage"):
            continue  # an API error's message ("Prompt is too long") is in force, never sent (claude/wire.py)
        c = (body.get("message") or {}).get("content")
        want += needles([{"type": "text", "text": c}] if isinstance(c, str) else [b for b in c or () if isinstance(b, dict)])
    have: list[tuple[str, str]] = []
    for m in sent:
        c = m.get("content")
        have += needles([{"type": "text", "text": c}] if isinstance(c, str) else [b for b in c or () if isinstance(b, dict)])
    k = 0
    for kind, value in want:
        while k < len(have) and not (have[k][0] == kind and (value in have[k][1] if kind == "text" else value == have[k][1])):
            k += 1
        if k == len(have):
            return False, f"the request lacks, or has out of order, {kind} {value[:60]!r}"
        k += 1
    return True, f"the preview's {len(want)} texts and tool blocks sent in order ({len(sent)} messages)"


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _fresh_home(projects: Path | None = None) -> Sandbox:
    sb = Sandbox.make()
    if projects is not None:
        shutil.copytree(projects, sb.projects)
    else:
        sb.projects.mkdir()
    return sb


def run_resume(folder: Path, claude: Claude, *, timeout: float = 300, pick: Any = None) -> list[ResumeRow]:
    """Every case on the session a saved run left (`folder`: the harness's output for one scenario)."""
    info = json.loads((folder / "run.json").read_text())
    sb = _fresh_home(folder / "projects")
    try:
        runs = [p for p in sb.projects.iterdir() if p.is_dir()]
        if len(runs) == 1 and runs[0] != project_dir(sb):
            # the run's project, as the sandbox's working folder names it: a release before 2.1.3xx looks for the
            # session `--resume` names in the project of the folder it runs in only (2.1.88: "No conversation found")
            runs[0].rename(project_dir(sb))
        transcripts = sorted(p for p in sb.projects.rglob("*.jsonl") if "subagents" not in p.parts)
        return _run_cases(folder.name, transcripts, info["model"], claude, timeout, sb, pick)
    finally:
        sb.close()


def project_dir(sb: Sandbox) -> Path:
    """The projects folder Claude Code gives the sandbox's working folder (its path, / and . as -)."""
    return sb.projects / re.sub(r"[^a-zA-Z0-9]", "-", str(sb.work))


def run_resume_old(session: Path, claude: Claude, *, timeout: float = 300) -> list[ResumeRow]:
    """Every case of its release on a session an older Claude Code wrote (a bundled sample, a real session), put in
    the working folder's project so that today's Claude Code resumes what inspector saves of it."""
    from inspector.transcript.session import Session

    sb = _fresh_home()
    try:
        project = project_dir(sb)
        project.mkdir()
        dst = project / session.name
        shutil.copyfile(session, dst)
        folder = session.with_suffix("")
        if folder.is_dir():
            shutil.copytree(folder, project / folder.name)
        s = Session.load(dst)
        model = s.main_model or "claude-sonnet-4-5"
        return _run_cases(f"{session.stem[:8]} ({s.version or 'no version'})", [dst], model, claude, timeout, sb)
    finally:
        sb.close()


def _run_cases(
    name: str, transcripts: list[Path], model: str, claude: Claude, timeout: float, sb: Sandbox, pick: Any = None
) -> list[ResumeRow]:
    """Every case of `cases_for` (or those `pick` chooses of them) on each transcript."""
    from inspector.compact import CompactRequest, compact
    from inspector.compact.base import CompactError
    from inspector.edit import save
    from inspector.edit.files import SaveError
    from inspector.transcript.session import Session

    rows: list[ResumeRow] = []
    for path in transcripts:
        s = Session.load(path)
        if not s.conversation.chain:
            continue
        original = _sha(path)
        for case in pick(cases_for(s)) if pick else cases_for(s):
            try:
                res = compact(s, CompactRequest(**case.kwargs))
            except CompactError as exc:
                rows.append(ResumeRow(name, case.label, True, f"not applicable: {exc}"))
                continue
            if not res.changed:
                rows.append(ResumeRow(name, case.label, True, f"not applicable: {res.noop}"))
                continue
            try:
                saved = save(s, res, allow_live=True)
            except SaveError as exc:
                rows.append(ResumeRow(name, case.label, False, f"inspector could not save it: {exc}"))
                continue
            argv = [
                *claude.argv,
                "-p",
                PROMPT,
                "--resume",
                saved.session_id,
                "--model",
                # the model the preview was made for (the one in force at the session's end), else the last used
                str(res.parameters.get("wire_model") or _last_model(s, model)),
                "--allowedTools",
                "Bash",
            ]
            with FakeAPI(Script(turns=0)) as fake:
                try:
                    p = subprocess.run(
                        argv,
                        cwd=sb.work,
                        env=_clean_env(sb.home, fake.url, {}),
                        capture_output=True,
                        text=True,
                        timeout=timeout,
                        stdin=subprocess.DEVNULL,
                    )
                    err = p.stderr.strip()[-300:] if p.returncode not in (0, 1) else ""
                except subprocess.TimeoutExpired:
                    err = f"timed out after {timeout:g} s"
                turns = [q for q in fake.log if q.kind == "turn"]
                first = next((q for q in fake.log if q.kind in ("turn", "summary")), None)
            if not turns:
                rows.append(ResumeRow(name, case.label, False, f"Claude Code sent no request ({err or 'no error'})"))
                continue
            sent = turns[0].body.get("messages") or []
            if res.api_messages is None and first is not None and first.kind == "summary":
                # the saved session was still past the release's threshold: Claude Code compacted it as it resumed,
                # and its summarize request carries what it loaded (an older release's format: in order is the check)
                ok, why = in_order(res, first.body.get("messages") or [])
                why = f"compacted as it resumed; its summarize request: {why}"
            elif res.api_messages is not None and (res.api_messages_exact or not res.parameters.get("attachments_unrendered")):
                ok, why = matches(res, saved.path, sent)
            else:
                # an older format (no exact wire form), or attachments the release renders as it sends them
                ok, why = in_order(res, sent)
            row = ResumeRow(name, case.label, ok, why, len(res.api_messages or ()), len(sent))
            if _sha(path) != original:
                row.ok, row.detail = False, "the original transcript changed"
            rows.append(row)
    return rows


def _last_model(s: Any, default: str) -> str:
    """The model the session last used (a /model switch mid-session changes it): its last recorded main-thread
    request's (the one inspector's preview is worded for; a request refused has no reply), else its last reply's."""
    from inspector.claude.requests import rebuild_requests

    main = [q for q in rebuild_requests(s) if q.agent_id is None and q.model]
    if main:
        return str(main[-1].model)
    for i in range(len(s.records) - 1, -1, -1):
        r = s.records[i]
        if r.type == "assistant" and not r.is_sidechain:
            m = (s.body(i).get("message") or {}).get("model")
            if isinstance(m, str) and m.startswith("claude") and m != "<synthetic>":
                return m
    return default


def table(rows: list[ResumeRow], version: str) -> str:
    tried = [r for r in rows if not r.detail.startswith("not applicable")]
    ok = sum(1 for r in tried if r.ok)
    lines = [
        f"Round trip on Claude Code {version}: {ok} of {len(tried)} saved compactions resumed as previewed.",
        "",
        "| session | strategy | first request after `--resume` | match |",
        "|---|---|---|---|",
    ]
    for r in rows:
        mark = "—" if r.detail.startswith("not applicable") else "yes" if r.ok else "**no**"
        lines.append(f"| `{r.run}` | {r.case} | {r.detail} | {mark} |")
    return "\n".join(lines) + "\n"
