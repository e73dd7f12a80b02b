"""Crash shapes: saved runs cut where a killed process leaves a file, resumed by a release, against inspector.

    python -m conformance --crash-cuts RUNS [--version V] [--seed S] [--per-kind N]

RUNS is a folder of kept runs (`--out` of a `--random` batch). Each transcript in it is cut at the ends of a turn a
process can die at (inside a reply, after its thinking, after a call, after a result, a prompt, an attachment, an API
error, a turn_duration, a compaction's boundary or summary); N cuts of each kind, drawn with the seed, are resumed with
`--resume` and a new prompt (`matrix.resume_cut`), and the record Claude Code continued from is compared with the one
inspector says (`claude.measured.resume_parent`). How the thinking-end rule (`tree.THINKING_END_LEFT_OUT`) was found
and how docs/binary-findings.md counts the crash shapes it does not follow.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KINDS = (
    "inside_reply",
    "thinking_only_end",
    "call_without_result",
    "after_result",
    "after_prompt",
    "after_attachment",
    "after_api_error",
    "after_system",
    "after_boundary",
    "after_summary",
)


@dataclass
class Cut:
    kind: str
    path: Path
    lines: int  # the file's first lines kept
    claude: int | None = None  # the line of the record the release continued from (None: another answer)
    inspector: int | None = None
    note: str = ""

    @property
    def same(self) -> bool:
        return self.claude is not None and self.claude == self.inspector


def _blocks(r: dict[str, Any]) -> list[Any]:
    c = (r.get("message") or {}).get("content")
    return [b.get("type") for b in c if isinstance(b, dict)] if isinstance(c, list) else []


def kind_of(recs: list[dict[str, Any]], i: int) -> str | None:
    """The crash shape a file cut after its record `i` ends in (None: not one of KINDS)."""
    r, t = recs[i], recs[i].get("type")
    if t == "assistant":
        mid = (r.get("message") or {}).get("id")
        more = mid is not None and any(
            q.get("type") == "assistant" and (q.get("message") or {}).get("id") == mid for q in recs[i + 1 : i + 12]
        )
        if r.get("isApiErrorMessage"):
            return "after_api_error"
        if more:
            return "thinking_only_end" if _blocks(r) == ["thinking"] else "inside_reply"
        if "tool_use" in _blocks(r):
            return "call_without_result"
        return None
    if t == "system":
        if r.get("subtype") == "compact_boundary":
            return "after_boundary"
        return "after_system" if r.get("uuid") else None
    if t == "user":
        if r.get("isCompactSummary"):
            return "after_summary"
        if "tool_result" in _blocks(r):
            return "after_result"
        content = (r.get("message") or {}).get("content")
        return "after_prompt" if isinstance(content, str) and not r.get("isMeta") else None
    return "after_attachment" if t == "attachment" else None


def cuts_of(files: Iterable[Path], per_kind: int, seed: int, kinds: tuple[str, ...] = KINDS) -> list[Cut]:
    """`per_kind` cuts of each kind, drawn with `seed` from every cut point of the files."""
    found: dict[str, list[tuple[Path, int]]] = {k: [] for k in kinds}
    for f in files:
        try:
            recs = [json.loads(ln) for ln in f.read_text().splitlines() if ln.strip()]
        except (OSError, ValueError):
            continue
        for i in range(len(recs) - 1):  # (cut before the file's end: the file's own last record is no crash)
            k = kind_of(recs, i) if isinstance(recs[i], dict) else None
            if k in found:
                found[k].append((f, i + 1))
    rng = random.Random(seed)
    out = []
    for k in kinds:
        items = found[k]
        rng.shuffle(items)
        out += [Cut(k, f, n) for f, n in items[:per_kind]]
    return out


def read_cut(cut: Cut, version: str) -> tuple[int | None, dict[str, int]]:
    """The cut file read by inspector: the line of the record it says a resume continues from, and the line of each
    record's uuid (where the release's answer is looked up)."""
    from inspector.claude.measured import resume_parent
    from inspector.transcript.session import Session

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / cut.path.name
        p.write_text("".join(ln + "\n" for ln in cut.path.read_text().splitlines()[: cut.lines]))
        s = Session.load(p)
        lines: dict[str, int] = {}
        for r in s.records:
            if r.uuid is not None:
                lines.setdefault(r.uuid, r.line)
        uuid = resume_parent(s.conversation, version)[0]
        return (lines.get(uuid) if uuid is not None else None), lines


def compare(cuts: list[Cut], version: str, log: Callable[[str], None] = print) -> list[Cut]:
    """Each cut resumed by `version` and read by inspector."""
    from conformance.matrix import resume_cut

    for cut in cuts:
        cut.inspector, lines = read_cut(cut, version)
        try:
            uuid, between = resume_cut(cut.path, cut.lines, version)
        except Exception as exc:  # noqa: BLE001 - a run that fails is a row that says so
            cut.note = f"{type(exc).__name__}: {exc}"[:200]
            log(f"{cut.kind} {cut.path.name} {cut.lines}: {cut.note}")
            continue
        cut.claude = lines.get(uuid) if uuid is not None else None
        cut.note = f"written between: {', '.join(between) or 'none'}"
        log(
            f"{'same' if cut.same else 'DIFFERENT'} {cut.kind} {cut.path.parent.parent.parent.name} cut {cut.lines}: "
            f"Claude Code {cut.claude}, inspector {cut.inspector} ({cut.note})"
        )
    return cuts


def table(cuts: list[Cut], version: str) -> str:
    rows = [f"Claude Code {version}: files cut at the ends of a turn and resumed, where each continued from.", ""]
    rows += ["| shape | cuts | continued where inspector says |", "|---|---:|---:|"]
    for k in KINDS:
        mine = [c for c in cuts if c.kind == k]
        if mine:
            rows.append(f"| {k.replace('_', ' ')} | {len(mine)} | {sum(c.same for c in mine)} |")
    bad = [c for c in cuts if not c.same]
    if bad:
        rows += ["", "| shape | file | cut after line | Claude Code | inspector |", "|---|---|---:|---:|---:|"]
        rows += [f"| {c.kind} | {c.path.name} | {c.lines} | {c.claude} | {c.inspector} |" for c in bad]
    return "\n".join(rows) + "\n"


def main(runs: Path, version: str, per_kind: int, seed: int) -> int:
    import sys

    files = sorted(p for p in runs.glob("*/projects/**/*.jsonl") if "subagents" not in p.parts)
    cuts = compare(cuts_of(files, per_kind, seed), version, log=lambda m: print(m, file=sys.stderr))
    print(table(cuts, version), end="")
    return 0 if all(c.same for c in cuts) else 1
