"""The offline summarizer: deterministic and extractive, nothing leaves the machine.

It reads the facts straight from the transcript: every user message verbatim, the files read,
edited and written (with the last edit), the commands run, errors and whether a later run
succeeded, the pending todos from the last TodoWrite, and the current work from the last
messages. From those facts it writes the nine sections of a compaction summary (§8.2), or the
ten sections of Claude Code's session-memory notes (§7.2).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

from inspector.compact.summarize.base import Cancel, Cancelled, Progress, SummaryOutput, SummaryRequest
from inspector.textutil import as_dict
from inspector.transcript.records import INTERRUPT_TEXTS, iter_blocks, text_of, tool_result_text
from inspector.transcript.session import Session

MAX_USER_MESSAGE = 4_000  # characters of one user message quoted verbatim before it is cut
MAX_SNIPPET_LINES = 12
ERROR_RE = re.compile(
    r"(Traceback \(most recent call last\)|\b\w*(?:Error|Exception)\b:|\bERROR\b|\bFAILED\b|\b[1-9]\d* failed\b|"
    r"exit code [1-9]|command not found|No such file or directory|^fatal: |^error: )",
    re.M,
)
EDIT_TOOLS = ("Edit", "MultiEdit", "Write", "NotebookEdit")
EXT_LANG = {
    ".py": "Python",
    ".ts": "TypeScript",
    ".tsx": "TypeScript/React",
    ".js": "JavaScript",
    ".rs": "Rust",
    ".go": "Go",
    ".ex": "Elixir",
    ".exs": "Elixir",
    ".rb": "Ruby",
    ".java": "Java",
    ".md": "Markdown",
    ".css": "CSS",
    ".html": "HTML",
    ".sh": "shell",
    ".sql": "SQL",
    ".toml": "TOML",
    ".json": "JSON",
    ".yaml": "YAML",
    ".yml": "YAML",
    ".zsh": "zsh",
}


@dataclass(slots=True)
class FileFacts:
    path: str
    reads: int = 0
    edits: int = 0
    writes: int = 0
    last_edit: tuple[str, str] | None = None  # (old, new) of the last Edit, or ("", content) of a Write


@dataclass(slots=True)
class Facts:
    user_messages: list[str] = field(default_factory=list)
    files: dict[str, FileFacts] = field(default_factory=dict)
    commands: list[tuple[str, bool]] = field(default_factory=list)  # (command, failed)
    errors: list[dict[str, Any]] = field(default_factory=list)  # {tool, what, error, resolved}
    tools: dict[str, int] = field(default_factory=dict)
    todos: list[dict[str, str]] = field(default_factory=list)
    assistant_texts: list[str] = field(default_factory=list)
    last_calls: list[str] = field(default_factory=list)
    languages: dict[str, int] = field(default_factory=dict)
    earlier: dict[int, str] = field(default_factory=dict)  # sections of an earlier compaction's summary, by number


_SECTION_HEAD = re.compile(r"^\s*(\d+)\.\s+([^:\n]{3,60}):\s*$", re.M)


def parse_sections(summary: str) -> dict[int, str]:
    """The numbered sections of a compaction summary ("1. Primary Request and Intent:" ...)."""
    heads = list(_SECTION_HEAD.finditer(summary))
    out: dict[int, str] = {}
    for k, m in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(summary)
        body = summary[m.end() : end]
        body = body.split("\n\nIf you need specific details from before compaction", 1)[0]
        out[int(m.group(1))] = textwrap.dedent(body.strip("\n")).rstrip()
    return out


def _clip(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def _first_lines(s: str, n: int = MAX_SNIPPET_LINES) -> str:
    lines = s.splitlines()
    out = "\n".join(lines[:n])
    return out + (f"\n… ({len(lines) - n} more lines)" if len(lines) > n else "")


def _describe(name: str, inp: dict[str, Any]) -> str:
    for key in ("file_path", "command", "pattern", "url", "query", "description", "prompt", "path"):
        v = inp.get(key)
        if isinstance(v, str) and v:
            return f"{name} {_clip(' '.join(v.split()), 160)}"
    return name


def gather(s: Session, indexes: tuple[int, ...] | list[int]) -> Facts:
    """Collect the facts of these records (bodies decoded one at a time)."""
    f = Facts()
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    for i in indexes:
        r = s.records[i]
        if r.type not in ("user", "assistant"):
            continue
        body = s.body(i)
        msg = body.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        if r.type == "user":
            if body.get("isCompactSummary") is True:
                if not f.earlier:
                    f.earlier = parse_sections(text_of(content))
                continue
            if r.tool_results:
                for b in iter_blocks(content):
                    if b.get("type") != "tool_result":
                        continue
                    tid = b.get("tool_use_id")
                    name, inp = calls.get(tid, ("?", {})) if isinstance(tid, str) else ("?", {})
                    text = tool_result_text(b.get("content"))
                    failed = b.get("is_error") is True or (name == "Bash" and bool(ERROR_RE.search(text[-3000:])))
                    if name == "Bash" and isinstance(inp.get("command"), str):
                        f.commands.append((inp["command"], failed))
                    if failed:
                        line = next(
                            (ln for ln in text.splitlines() if ERROR_RE.search(ln)),
                            text.strip().splitlines()[0] if text.strip() else "",
                        )
                        f.errors.append(
                            {
                                "tool": name,
                                "what": _describe(name, inp),
                                "error": _clip(line.strip(), 300),
                                "resolved": False,
                                "key": inp.get("command") or inp.get("file_path"),
                            }
                        )
                    elif f.errors:
                        key = inp.get("command") or inp.get("file_path")
                        for e in f.errors:
                            if not e["resolved"] and key and e["key"] == key:
                                e["resolved"] = True
                continue
            text = text_of(content).strip()
            if not text or body.get("isMeta") is True or text.startswith(INTERRUPT_TEXTS[0]):
                continue
            if text.startswith("<command-name>"):
                m = re.search(r"<command-name>([^<]*)</command-name>.*?<command-args>([^<]*)</command-args>", text, re.S)
                text = f"(ran {m.group(1)} {m.group(2)})".replace(" )", ")") if m else text
            elif text.startswith("<local-command-stdout>") or text.startswith("<local-command-caveat>"):
                continue
            f.user_messages.append(_clip(text, MAX_USER_MESSAGE))
            continue
        for b in iter_blocks(content):
            bt = b.get("type")
            if bt == "text" and isinstance(b.get("text"), str) and b["text"].strip():
                f.assistant_texts.append(b["text"].strip())
            elif bt == "tool_use":
                raw_name = b.get("name")
                name = raw_name if isinstance(raw_name, str) else "?"
                inp = as_dict(b.get("input"))
                if isinstance(b.get("id"), str):
                    calls[b["id"]] = (name, inp)
                f.tools[name] = f.tools.get(name, 0) + 1
                f.last_calls.append(_describe(name, inp))
                path = inp.get("file_path") or inp.get("notebook_path")
                if isinstance(path, str):
                    ff = f.files.setdefault(path, FileFacts(path))
                    ext = "." + path.rsplit(".", 1)[-1] if "." in path.rsplit("/", 1)[-1] else ""
                    if ext in EXT_LANG:
                        f.languages[EXT_LANG[ext]] = f.languages.get(EXT_LANG[ext], 0) + 1
                    if name == "Read":
                        ff.reads += 1
                    elif name == "Write":
                        ff.writes += 1
                        ff.last_edit = ("", str(inp.get("content", "")))
                    elif name in EDIT_TOOLS:
                        ff.edits += 1
                        if isinstance(inp.get("old_string"), str):
                            ff.last_edit = (inp["old_string"], str(inp.get("new_string", "")))
                        elif isinstance(inp.get("edits"), list) and inp["edits"]:
                            e = inp["edits"][-1]
                            if isinstance(e, dict):
                                ff.last_edit = (str(e.get("old_string", "")), str(e.get("new_string", "")))
                if name == "TodoWrite" and isinstance(inp.get("todos"), list):
                    f.todos = [t for t in inp["todos"] if isinstance(t, dict)]
    return f


# ---------------------------------------------------------------------------------------------


def _files_section(f: Facts) -> list[str]:
    out = []
    for ff in f.files.values():
        ops = ", ".join(
            x
            for x in (
                f"read {ff.reads}×" if ff.reads else "",
                f"edited {ff.edits}×" if ff.edits else "",
                "written" if ff.writes else "",
            )
            if x
        )
        out.append(f"   - {ff.path} ({ops})")
        if ff.last_edit is not None:
            old, new = ff.last_edit
            if old:
                out.append(
                    "     Last edit replaced:\n"
                    + _indent(_first_lines(old), 7)
                    + "\n     with:\n"
                    + _indent(_first_lines(new), 7)
                )
            else:
                out.append("     Written with:\n" + _indent(_first_lines(new), 7))
    return out or ["   - (no files were read or changed)"]


def _indent(s: str, n: int) -> str:
    pad = " " * n
    return "\n".join(pad + ln for ln in s.splitlines())


def _errors_section(f: Facts) -> list[str]:
    out = []
    for e in f.errors[-15:]:
        state = "resolved: a later run succeeded" if e["resolved"] else "not shown resolved"
        out.append(f"   - {e['what']}: {e['error']} ({state})")
    return out or ["   - None recorded."]


def _pending(f: Facts) -> list[str]:
    out = [f"   - {t.get('content', '?')} ({t.get('status', '?')})" for t in f.todos if t.get("status") != "completed"]
    if not out and not f.todos and f.earlier.get(7):
        return ["   From the earlier summary:", _indent(f.earlier[7], 3)]
    return out or ["   - None recorded in a todo list."]


def _concepts(f: Facts) -> list[str]:
    out = []
    if f.languages:
        out.append("   - Languages: " + ", ".join(k for k, _ in sorted(f.languages.items(), key=lambda kv: -kv[1])))
    if f.tools:
        out.append("   - Tools used: " + ", ".join(f"{k} ×{v}" for k, v in sorted(f.tools.items(), key=lambda kv: -kv[1])))
    cmds = []
    for c, _ in f.commands:
        head = " ".join(c.split()[:3])
        if head not in cmds:
            cmds.append(head)
    if cmds:
        out.append("   - Commands: " + ", ".join(f"`{_clip(c, 60)}`" for c in cmds[:12]))
    return out or ["   - (none recorded)"]


def summary_sections(f: Facts, *, kind: str, instructions: str | None) -> str:
    first = f.user_messages[0] if f.user_messages else "(no user message in this part of the conversation)"
    last_text = f.assistant_texts[-1] if f.assistant_texts else ""
    doing = [t for t in f.todos if t.get("status") == "in_progress"]
    next_step = (
        f"Continue with: {doing[0].get('content')}"
        if doing
        else (
            f"Continue with the pending task: {next(t.get('content') for t in f.todos if t.get('status') == 'pending')}"
            if any(t.get("status") == "pending" for t in f.todos)
            else "Wait for the user's next request; the last request appears complete."
            if last_text
            else "Resume the user's last request."
        )
    )
    sec8, sec9 = (
        ("Work Completed", "Context for Continuing Work") if kind == "partial_up_to" else ("Current Work", "Optional Next Step")
    )
    early = f.earlier
    parts = ["1. Primary Request and Intent:"]
    if early.get(1):
        parts.append(_indent(early[1], 3))
        if f.user_messages:
            parts.append("   Since the earlier summary:")
    if f.user_messages or not early.get(1):
        parts.append(_indent(_clip(first, 1500), 3))
    if len(f.user_messages) > 1:
        parts.append(f"   Later requests are listed in section 6 ({len(f.user_messages) - 1} more).")
    if instructions:
        parts.append(f"   Summary instructions given: {instructions}")

    def carried(n: int) -> list[str]:
        return ["   From the earlier summary:", _indent(early[n], 3)] if early.get(n) else []

    parts += [
        "",
        "2. Key Technical Concepts:",
        *_concepts(f),
        *carried(2),
        "",
        "3. Files and Code Sections:",
        *_files_section(f),
        *carried(3),
        "",
        "4. Errors and fixes:",
        *_errors_section(f),
        *carried(4),
        "",
        "5. Problem Solving:",
        *carried(5),
    ]
    conclusions = [_clip(" ".join(t.split()), 400) for t in f.assistant_texts[-6:-1]]
    parts += [f"   - {c}" for c in conclusions] or ["   - (no intermediate conclusions recorded)"]
    parts += ["", "6. All user messages:"]
    if early.get(6):
        parts.append(_indent(early[6], 3))
    parts += [f"   - {_indent(m, 5).lstrip()}" for m in f.user_messages]
    if not f.user_messages and not early.get(6):
        parts.append("   - (none)")
    parts += ["", "7. Pending Tasks:", *_pending(f), "", f"8. {sec8}:"]
    if last_text:
        parts.append(_indent(_clip(last_text, 2000), 3))
    if f.last_calls:
        parts.append("   Last actions: " + "; ".join(f.last_calls[-5:]))
    parts += ["", f"9. {sec9}:", f"   {next_step}"]
    if last_text and kind != "partial_up_to":
        parts.append(f'   The latest work, verbatim: "{_clip(" ".join(last_text.split()), 300)}"')
    return "\n".join(parts)


def memory_notes(s: Session, f: Facts) -> str:
    """Claude Code's ten-section session-memory template (§7.2), filled from the facts."""
    from inspector.compact.session_memory import TEMPLATE_SECTIONS

    body = {
        "Session Title": s.title or (f.user_messages[0][:80] if f.user_messages else "Untitled session"),
        "Current State": "\n".join(
            filter(
                None,
                [
                    _clip(f.assistant_texts[-1], 1500) if f.assistant_texts else "",
                    "Pending:\n" + "\n".join(x.strip() for x in _pending(f)) if f.todos else "",
                ],
            )
        ),
        "Task specification": "\n\n".join(_clip(m, 1500) for m in f.user_messages[:3]),
        "Files and Functions": "\n".join(x.strip() for x in _files_section(f) if x.strip().startswith("- ")),
        "Workflow": "\n".join(f"- `{_clip(c, 200)}`{' (failed)' if bad else ''}" for c, bad in f.commands[-12:]),
        "Errors & Corrections": "\n".join(x.strip() for x in _errors_section(f)),
        "Codebase and System Documentation": "\n".join(x.strip() for x in _concepts(f)),
        "Learnings": "",
        "Key results": _clip(f.assistant_texts[-1], 1500) if f.assistant_texts else "",
        "Worklog": "\n".join(f"- {_clip(' '.join(m.split()), 200)}" for m in f.user_messages),
    }
    out = []
    for title, desc in TEMPLATE_SECTIONS:
        out.append(f"# {title}\n_{desc}_\n\n{body.get(title, '').strip()}\n")
    return "\n".join(out)


class OfflineSummarizer:
    name = "offline"
    sends_data = False

    def summarize(self, req: SummaryRequest, progress: Progress | None = None, cancel: Cancel | None = None) -> SummaryOutput:
        if cancel is not None and cancel.cancelled:
            raise Cancelled("cancelled")
        if progress:
            progress("reading the transcript", 0.0)
        facts = gather(req.session, req.to_summarize)
        if cancel is not None and cancel.cancelled:
            raise Cancelled("cancelled")
        if req.kind == "session_memory_notes":
            text = memory_notes(req.session, facts)
        else:
            text = "<summary>\n" + summary_sections(facts, kind=req.kind, instructions=req.instructions) + "\n</summary>"
        if progress:
            progress("done", 1.0)
        return SummaryOutput(text=text, summarizer=self.name)
