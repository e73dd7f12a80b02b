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
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.fake_api import FakeAPI, Script
from conformance.runner import HOME, WORK, _clean_env, canonical

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
    users = [m for m in r[len(a) - 1:] if m.get("role") == "user"]
    tail = users[-1]["content"] if users else []
    texts = [b for b in tail if b.get("type") == "text"]
    if not texts or texts[-1].get("text", "").strip() != prompt:
        return False, f"the new turn does not end with the prompt {prompt!r}"
    return True, f"{len(a)} previewed messages, then the new turn"


def matches(res: Any, saved: Path, sent: list[dict[str, Any]]) -> tuple[bool, str]:
    """Whether Claude Code sent, on resuming the saved session, exactly what inspector says it sends.

    Two checks. The preview: the saved chain, as a resume rebuilds it, sends `api_messages` (what `compact --json`
    printed before anything was written). The request: the saved chain plus the records Claude Code appended for the
    new turn (its prompt and fresh reminders, found in the session file after the run) send exactly the messages
    the fake API received. Fresh reminders can land inside the last previewed user turn (attachments move up to
    the last assistant message), so the request is compared with the whole chain, not with a prefix."""
    from inspector.claude.wire import api_messages, sent_bodies
    from inspector.transcript.session import Session
    from inspector.transcript.tree import Conversation

    style = str(res.parameters.get("wire_style") or "user")
    after = Session.load(saved)
    first_row = next((k for k, r in enumerate(after.records) if r.type == "api-request"), len(after.records))
    whole = _blocks(api_messages(sent_bodies(after, Conversation(after.records[:first_row]).chain), style))
    got = _blocks(sent)
    if whole != got:
        k = next((n for n, (x, y) in enumerate(zip(whole, got)) if x != y), min(len(whole), len(got)))
        what = _first_difference(whole[k], got[k]) if k < min(len(whole), len(got)) else f"{len(whole)} vs {len(got)} messages"
        return False, f"the request differs from the saved chain + the new turn at message {k}: {what}"
    preview = _blocks([dict(m) for m in res.api_messages or ()])
    if _blocks(api_messages(sent_bodies(after, _chain_before_resume(after, res)), style)) != preview:
        return False, "the saved chain sends other messages than the preview showed"
    return True, f"identical: the {len(preview)} previewed messages and the new turn ({len(got)} messages)"


def _chain_before_resume(after: Any, res: Any) -> list[int]:
    """The saved session's chain as inspector wrote it: up to its last record, before Claude Code appended any."""
    from inspector.transcript.tree import Conversation

    last = str(res.new_records[-1].get("uuid")) if res.new_records else None
    end = after.conversation.by_uuid.get(last) if last else None
    recs = after.records[: end + 1] if end is not None else after.records
    return Conversation(recs).chain


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
    return f"{path}: {str(a)[:80]!r} vs {str(b)[:80]!r}"


def cases_for(s: Any) -> list[Case]:
    """The strategies a session's release has, each where it applies."""
    from inspector.claude.versions import TAIL, rules_for
    from inspector.compact import make_slice
    from inspector.compact.base import Estimator
    from inspector.compact.engine import rewind_candidates

    era = rules_for(s.version).era
    if TAIL not in era.strategies:
        return []
    sl = make_slice(s)
    before = Estimator(s, sl.series).before(sl)
    cases = [Case("compact (/compact)", {"strategy": "compact"}),
             Case("compact (/compact keep the step numbers)", {"strategy": "compact", "instructions": "keep the step numbers"}),
             Case("compact (threshold)", {"strategy": "compact", "trigger": "auto"}),
             Case(f"reactive (refused at {before * 3 // 4:,})", {"strategy": "reactive", "refused_at": max(1, before * 3 // 4)})]
    for i in rewind_candidates(sl):
        u = s.records[i].uuid
        for d in ("from", "up_to"):
            cases.append(Case(f"partial {d.replace('_', ' ')} {u[:8]}", {"strategy": "partial", "pivot": u, "direction": d}))
    return cases


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def run_resume(folder: Path, binary: Path, *, timeout: float = 300) -> list[ResumeRow]:
    """Every case on the session a saved run left (`folder`: the harness's output for one scenario)."""
    from inspector.compact import compact
    from inspector.compact.base import CompactError
    from inspector.edit import save
    from inspector.edit.saving import SaveError
    from inspector.transcript.session import Session

    info = json.loads((folder / "run.json").read_text())
    for d in (HOME, WORK):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    (HOME / ".claude").mkdir()
    shutil.copytree(folder / "projects", HOME / ".claude" / "projects")
    transcripts = sorted(p for p in (HOME / ".claude" / "projects").rglob("*.jsonl") if "subagents" not in p.parts)
    rows: list[ResumeRow] = []
    for path in transcripts:
        s = Session.load(path)
        if not s.conversation.chain:
            continue
        original = _sha(path)
        for case in cases_for(s):
            try:
                res = compact(s, **case.kwargs)
            except CompactError as exc:
                rows.append(ResumeRow(folder.name, case.label, True, f"not applicable: {exc}"))
                continue
            try:
                saved = save(s, res)
            except SaveError as exc:
                rows.append(ResumeRow(folder.name, case.label, False, f"inspector could not save it: {exc}"))
                continue
            argv = [str(binary), "-p", PROMPT, "--resume", saved.session_id, "--model", info["model"], "--allowedTools", "Bash"]
            with FakeAPI(Script(turns=0)) as fake:
                try:
                    p = subprocess.run(argv, cwd=WORK, env=_clean_env(HOME, fake.url, {}), capture_output=True, text=True, timeout=timeout)
                    err = p.stderr.strip()[-300:] if p.returncode not in (0, 1) else ""
                except subprocess.TimeoutExpired:
                    err = f"timed out after {timeout:g} s"
                turns = [q for q in fake.log if q.kind == "turn"]
            if not turns:
                rows.append(ResumeRow(folder.name, case.label, False, f"Claude Code sent no request ({err or 'no error'})"))
                continue
            sent = turns[0].body.get("messages") or []
            ok, why = matches(res, saved.path, sent)
            row = ResumeRow(folder.name, case.label, ok, why, len(res.api_messages or ()), len(sent))
            if _sha(path) != original:
                row.ok, row.detail = False, "the original transcript changed"
            rows.append(row)
    return rows


def table(rows: list[ResumeRow], version: str) -> str:
    ok = sum(1 for r in rows if r.ok)
    lines = [f"Round trip on Claude Code {version}: {ok} of {len(rows)} saved compactions resumed as previewed.", "",
             "| session | strategy | first request after `--resume` | match |", "|---|---|---|---|"]
    for r in rows:
        lines.append(f"| `{r.run}` | {r.case} | {r.detail} | {'yes' if r.ok else '**no**'} |")
    return "\n".join(lines) + "\n"
