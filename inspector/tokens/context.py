"""What fills the context at a message (like /context, for any point in the past), and what a
full compaction puts back after the summary (§8.5: the most recently read files).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from typing import TYPE_CHECKING

from inspector.tokens.estimate import count, js_stringify, rough
from inspector.tokens.series import Series, segment_start
from inspector.transcript.records import iter_blocks, tool_result_text
from inspector.transcript.session import Session

if TYPE_CHECKING:
    from inspector.tokens.calibrate import Calibration, Counts

POST_COMPACT_MAX_FILES_TO_RESTORE = 5
POST_COMPACT_MAX_TOKENS_PER_FILE = 5_000
POST_COMPACT_TOKEN_BUDGET = 50_000
MEMORY_FILE_NAMES = ("CLAUDE.md", "CLAUDE.local.md")


@dataclass(frozen=True, slots=True)
class RestoredFile:
    path: str
    tokens: int  # estimated API tokens of the attachment
    kind: str  # "file" (content re-attached) or "reference" (too large: name only)
    counted: int  # offline-tokenizer count of the attachment


def _tool_inputs(s: Session, index: int) -> dict[str, dict[str, Any]]:
    msg = s.body(index).get("message")
    out = {}
    for b in iter_blocks(msg.get("content") if isinstance(msg, dict) else None):
        if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
            inp = b.get("input")
            out[b["id"]] = inp if isinstance(inp, dict) else {}
    return out


def restored_files(s: Session, chain: list[int], ratio: float) -> list[RestoredFile]:
    """The files a full compaction re-attaches: the 5 most recently read, ≤5k tokens each (§8.5)."""
    reads: list[tuple[str, int]] = []  # (path, index of the tool_result record), in order
    for i in chain:
        r = s.records[i]
        if not r.tool_uses:
            continue
        names = dict(r.tool_uses)
        if "Read" not in names.values():
            continue
        inputs = _tool_inputs(s, i)
        for tid, name in names.items():
            if name != "Read":
                continue
            path = inputs.get(tid, {}).get("file_path")
            res = s.tool_index.get(tid, (None, None))[1]
            if isinstance(path, str) and res is not None:
                reads.append((path, res))
    seen: set[str] = set()
    out: list[RestoredFile] = []
    budget = 0
    for path, res in reversed(reads):
        if path in seen:
            continue
        name = path.replace("\\", "/").rsplit("/", 1)[-1]
        if name in MEMORY_FILE_NAMES or "/.claude/plans/" in path:
            continue
        text = ""
        for b in iter_blocks((s.body(res).get("message") or {}).get("content")):
            if b.get("type") == "tool_result":
                text = tool_result_text(b.get("content"))
        if text.startswith("File unchanged since last read"):
            continue  # the content is the one of an earlier read; keep looking
        seen.add(path)
        counted = count(text) + 20
        kind = "file"
        if round(ratio * counted) > POST_COMPACT_MAX_TOKENS_PER_FILE:
            kind, counted = "reference", count(js_stringify({"type": "compact_file_reference", "filename": path})) + 10
        tokens = round(ratio * counted)
        cost = rough(text) if kind == "file" else tokens
        if budget + cost > POST_COMPACT_TOKEN_BUDGET:
            break
        budget += cost
        out.append(RestoredFile(path, tokens, kind, counted))
        if len(out) >= POST_COMPACT_MAX_FILES_TO_RESTORE:
            break
    return out


# ---------------------------------------------------------------------------------------------
# composition

CATEGORY_LABELS = {
    "overhead": "system prompt, tools, CLAUDE.md (fixed overhead)",
    "summary": "compact summary",
    "user_text": "user messages",
    "assistant_text": "assistant text",
    "thinking": "thinking",
    "tool_use": "tool calls",
    "tool_results": "tool results",
    "images": "images and documents",
    "attachment": "attachments and system reminders",
}


@dataclass(slots=True)
class Composition:
    """Tokens by category at one message, scaled so the parts add up to `total`."""

    total: int
    source: str  # what `total` is: "API usage" or "estimate"
    categories: dict[str, int] = field(default_factory=dict)
    tool_results_by_tool: dict[str, int] = field(default_factory=dict)
    largest: list[dict[str, Any]] = field(default_factory=list)  # the biggest tool results

    def as_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "source": self.source,
            "categories": self.categories,
            "tool_results_by_tool": self.tool_results_by_tool,
            "largest_tool_results": self.largest,
        }


def composition(s: Session, series: Series, counts: "Counts", cal: "Calibration", pos: int) -> Composition:
    """What the context holds at chain position `pos` (the API view of its post-boundary slice)."""
    chain = series.chain
    start = segment_start(series.boundaries, pos)
    raw: dict[str, float] = {k: 0.0 for k in CATEGORY_LABELS}
    by_tool: dict[str, float] = {}
    items: list[tuple[float, str, str]] = []
    cleared: set[str] = set()
    for p in range(start, pos + 1):
        r = s.records[chain[p]]
        if r.is_microcompact_boundary:
            ids = (r.get("microcompact") or {}).get("compactedToolIds")
            if isinstance(ids, list):
                cleared.update(t for t in ids if isinstance(t, str))
    for p in range(start, pos + 1):
        i = chain[p]
        rc = counts.per_record.get(i)
        if rc is None:
            continue
        raw["images"] += rc.fixed
        for cat, n in rc.by_category.items():
            if cat.startswith("tool_result:"):
                tid = cat.split(":", 1)[1]
                if tid in cleared:
                    n = 10
                name = s.tool_name(tid) or "?"
                raw["tool_results"] += n
                by_tool[name] = by_tool.get(name, 0) + n
                items.append((n, tid, name))
            else:
                raw[cat] = raw.get(cat, 0) + n
    scaled = {k: v * cal.ratio for k, v in raw.items() if k != "images"}
    scaled["images"] = raw["images"]
    scaled["overhead"] = max(0.0, cal.overhead)
    # the API's number at this point: the last response at or before pos in this segment
    api = None
    for t in series.turns:
        if start <= t.pos <= pos:
            api = t.tokens
    est_total = sum(scaled.values())
    total, source = (api, "API usage") if api is not None else (round(est_total), "estimate")
    k = total / est_total if est_total else 0.0
    cats = {c: round(v * k) for c, v in scaled.items() if v}
    drift = total - sum(cats.values())
    if cats and drift:
        big = max(cats, key=cats.__getitem__)
        cats[big] += drift
    items.sort(reverse=True)
    largest = []
    for n, tid, name in items[:8]:
        largest.append({"tool_use_id": tid, "tool": name, "tokens": round(n * cal.ratio * k), "what": _describe_call(s, tid)})
    return Composition(
        total=total,
        source=source,
        categories=cats,
        tool_results_by_tool={t: round(v * cal.ratio * k) for t, v in sorted(by_tool.items(), key=lambda kv: -kv[1])},
        largest=largest,
    )


def _describe_call(s: Session, tid: str) -> str:
    """A file path, command or pattern that says what a tool call did."""
    i = s.tool_index.get(tid, (None, None))[0]
    if i is None:
        return ""
    inp = _tool_inputs(s, i).get(tid, {})
    for key in ("file_path", "command", "pattern", "url", "path", "description", "prompt"):
        v = inp.get(key)
        if isinstance(v, str) and v:
            return v if len(v) <= 120 else v[:119] + "…"
    return ""
