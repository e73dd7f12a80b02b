"""What Claude Code did in a run, what inspector says about the same transcript, and whether they agree.

Claude Code's side is read from the run itself, never from inspector: the compact boundaries of the transcript
(trigger, preTokens, the kept uuids), the fake API's request log (which request was refused as too long, the exact
messages of every main-thread request) and Claude Code's debug log (`autocompact:` lines: the effective window, and
`thresholdSource=` when a threshold is enforced). inspector's side is `analyze()` and `rebuild_requests()` on the
saved transcript, with the scenario's environment and settings.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.runner import cache_paths, canonical, load_requests


@dataclass
class Facts:
    compactions: list[str] = field(default_factory=list)  # "cause at preTokens, kept N"
    enforced: bool | None = None
    effective_window: int | None = None
    source: str | None = None
    requests: str = ""  # "N requests" / "N/M identical"

    def short(self) -> str:
        th = ("not enforced" if self.enforced is False else
              f"enforced, effective {self.effective_window:,}" + (f" ({self.source})" if self.source else "")
              if self.enforced else "—")
        comp = "; ".join(self.compactions) or "no compaction"
        return f"{comp} · {th}"


@dataclass
class Row:
    scenario: str
    claude: Facts
    inspector: Facts
    notes: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # record types and fields the run wrote that inspector does not know

    @property
    def match(self) -> bool:
        a, b = self.claude, self.inspector
        window_ok = a.enforced is None or (a.enforced == b.enforced and (not a.enforced or a.effective_window == b.effective_window))
        source_ok = not a.source or a.source == b.source
        return (a.compactions == b.compactions and window_ok and source_ok and b.requests.startswith("all ")
                and not self.unknown)


def _system_without_billing(system: Any) -> Any:
    if isinstance(system, list) and system and isinstance(system[0], dict) and str(system[0].get("text", "")).startswith(
            "x-anthropic-billing-header:"):
        return system[1:]
    return system


def claude_facts(folder: Path) -> Facts:
    """What Claude Code did, from its own transcript, its requests and its debug log."""
    f = Facts()
    requests = load_requests(folder)
    transcripts = sorted(p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts)
    turns = [q for q in requests if q["kind"] == "turn"]
    boundaries: list[tuple[str, int, int]] = []  # (trigger, preTokens, kept)
    for t in transcripts:
        for line in t.read_text().splitlines():
            r = json.loads(line)
            if r.get("type") == "system" and r.get("subtype") == "compact_boundary":
                m = r.get("compactMetadata") or {}
                boundaries.append((str(m.get("trigger")), int(m.get("preTokens") or 0), len((m.get("preservedMessages") or {}).get("uuids") or [])))
    # the cause, from the request log: each main request refused as too long is followed by a reactive compaction
    refused = sum(1 for q in turns if q["answer"] == "prompt_too_long")
    for trigger, pre, kept in boundaries:
        if trigger == "manual":
            cause = "manual"
        elif refused > 0:
            cause, refused = "prompt_too_long", refused - 1
        else:
            cause = "threshold"
        f.compactions.append(f"{cause} at {pre:,}, kept {kept}")
    debug = (folder / "debug.log").read_text() if (folder / "debug.log").exists() else ""
    windows = re.findall(r"autocompact: .*?effectiveWindow=(\d+)", debug)
    sources = re.findall(r"thresholdSource=([a-z-]+)", debug)
    run = json.loads((folder / "run.json").read_text())
    disabled = any(k in run.get("env", {}) for k in ("DISABLE_AUTO_COMPACT", "DISABLE_COMPACT")) or (
        (run.get("settings") or {}).get("autoCompactEnabled") is False)
    if windows:
        f.enforced, f.effective_window = True, int(windows[-1])
        f.source = sources[-1] if sources else None
    elif not disabled:
        f.enforced = False
    f.requests = f"{len(turns)} requests"
    return f


def _markers(paths: list[list[Any]]) -> list[str]:
    """Cache breakpoints compared by where they are and what they say (system-prompt blocks' markers aside: the
    billing line Claude Code puts first is not recorded, so the system prompt's indexes differ by one)."""
    return sorted(json.dumps(p, sort_keys=True) for p in paths if p and p[0] and p[0][0] == "messages")


def inspector_facts(folder: Path) -> Facts:
    """What inspector says of the same run, given the scenario's environment and settings."""
    from inspector.claude.requests import rebuild_requests
    from inspector.tokens.explain import analyze
    from inspector.tokens.thresholds import Settings
    from inspector.transcript.session import Session

    run = json.loads((folder / "run.json").read_text())
    home = folder / "home"
    home.mkdir(exist_ok=True)
    (home / ".claude").mkdir(exist_ok=True)
    settings_file = run.get("settings_after") if run.get("settings_after") is not None else run.get("settings")
    if settings_file is not None:
        (home / ".claude" / "settings.json").write_text(json.dumps(settings_file))
    settings = Settings.from_environment(env=dict(run.get("env") or {}), config_dir=home / ".claude")
    f = Facts()
    logged = [q for q in load_requests(folder) if q["kind"] == "turn"]
    rebuilt = []
    th = None
    most = -1
    for t in sorted(p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts):
        s = Session.load(t)
        rep = analyze(s, settings)
        if len(rep.series.turns) > most:  # the thresholds of the session that did the work (a /autocompact step
            th, most = rep.thresholds, len(rep.series.turns)  # leaves a session of its own, with no model in it)
        for e in rep.compactions:
            if e.kind != "microcompact":
                f.compactions.append(f"{e.cause} at {e.pre_tokens:,}, kept {len(e.kept_uuids)}")
        rebuilt += [q for q in rebuild_requests(s) if q.agent_id is None]
    if th is not None:
        if not th.auto_compact_enabled:
            f.enforced = None
        else:
            f.enforced = th.enforced
            f.effective_window = th.effective_window
            f.source = th.compact_source
    same = sum(1 for a, b in zip(logged, rebuilt)
               if canonical(a.get("messages")) == canonical(b.request["messages"])
               and canonical(_system_without_billing(a.get("system"))) == canonical(b.request["system"])
               and canonical(a.get("tools")) == canonical(b.request["tools"])
               and ("cache" not in a or _markers(a["cache"]) == _markers(cache_paths(b.request))))
    if len(logged) == len(rebuilt) == same:
        f.requests = f"all {same} requests rebuilt identical"
    else:
        f.requests = f"{same}/{len(logged)} requests rebuilt identical ({len(rebuilt)} recorded)"
    return f


def compare(folder: Path) -> Row:
    a, b = claude_facts(folder), inspector_facts(folder)
    row = Row(folder.name, a, b)
    if a.compactions != b.compactions:
        row.notes.append(f"compactions: Claude Code {a.compactions}, inspector {b.compactions}")
    if a.enforced is not None and (a.enforced != b.enforced or (a.enforced and a.effective_window != b.effective_window)):
        row.notes.append(f"threshold: Claude Code {a.short()}, inspector {b.short()}")
    if a.source and a.source != b.source:
        row.notes.append(f"window source: Claude Code {a.source}, inspector {b.source}")
    if not b.requests.startswith("all "):
        row.notes.append(b.requests)
    row.unknown = unknown_in(folder)
    if row.unknown:
        row.notes.append("fields inspector does not know: " + ", ".join(row.unknown))
    return row


def unknown_in(folder: Path) -> list[str]:
    """The record types and fields of a run's transcripts that inspector's registry does not have ("type.field")."""
    from collections import Counter

    from inspector.transcript.fields import unknown_fields

    seen: Counter[tuple[str, str]] = Counter()
    for t in sorted((folder / "projects").rglob("*.jsonl")):
        seen += unknown_fields(t.read_bytes().splitlines())
    return [f"{w}.{k}" if k != "*" else f"{w} (a record type)" for (w, k) in sorted(seen)]


def table(rows: list[Row], version: str) -> str:
    lines = [f"Claude Code {version}, {sum(r.match for r in rows)} of {len(rows)} scenarios match.", "",
             "| scenario | Claude Code did | inspector says | requests | match |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| `{r.scenario}` | {r.claude.short()} | {r.inspector.short()} | {r.inspector.requests} | "
                     f"{'yes' if r.match else 'NO: ' + '; '.join(r.notes)} |")
    return "\n".join(lines) + "\n"
