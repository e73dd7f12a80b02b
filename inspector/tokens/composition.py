"""What the context is made of: tokens by category at a message (like /context, for any point in the past), and the
parts of one rebuilt API request.

Above both the file state of context.py and the calibration (calibrate.py): a composition is the calibrated counts
of one point, split by what they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inspector.tokens.calibrate import Calibration, Counts
from inspector.tokens.context import tool_inputs
from inspector.tokens.estimate import js_stringify
from inspector.tokens.series import Series, segment_start
from inspector.transcript.session import Session

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


def composition(s: Session, series: Series, counts: Counts, cal: Calibration, pos: int) -> Composition:
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
    for size, tid, name in items[:8]:
        largest.append({"tool_use_id": tid, "tool": name, "tokens": round(size * cal.ratio * k), "what": _describe_call(s, tid)})
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
    inp = tool_inputs(s, i).get(tid, {})
    for key in ("file_path", "command", "pattern", "url", "path", "description", "prompt"):
        v = inp.get(key)
        if isinstance(v, str) and v:
            return v if len(v) <= 120 else v[:119] + "…"
    return ""


@dataclass(slots=True)
class RequestPart:
    label: str  # "system prompt", "tools (12)", "message 3 (user): tool result", ...
    tokens: int  # estimated (calibrated offline count), scaled to the exact total when there is one


@dataclass(slots=True)
class RequestComposition:
    """What filled one recorded request (2.1.3xx), part by part."""

    request_id: str
    total: int
    exact_total: bool  # the total is the API's own count (the usage of the request's reply)
    parts: list[RequestPart]
    messages: int

    @property
    def source(self) -> str:
        return (
            "the API's count of this exact request; the parts are offline counts scaled to it"
            if self.exact_total
            else "an estimate of this exact request (it got no reply to count it): offline counts, calibrated"
        )


def request_composition(s: Session, request: Any, ratio: float) -> RequestComposition:
    """The exact request Claude Code sent (rebuilt from the transcript), counted part by part: the system prompt,
    the tools, and each message by its blocks. The total is exact when the request was answered (input, cache
    creation and cache read of its reply); the split between parts is always an estimate."""
    from inspector.claude.requests import message_texts

    req = request.request
    texts: list[tuple[str, str]] = []
    system = req.get("system")
    sys_text = (
        system if isinstance(system, str) else "\n".join(str(b.get("text", "")) for b in system or () if isinstance(b, dict))
    )
    texts.append(("system prompt", sys_text))
    tools = req.get("tools") or []
    texts.append((f"tools ({len(tools)})", js_stringify(tools)))
    for n, m in enumerate(req.get("messages") or (), 1):
        if not isinstance(m, dict):
            continue
        kinds: dict[str, list[str]] = {}
        for kind, text in message_texts(m):
            kinds.setdefault(kind, []).append(text)
        for kind, parts in kinds.items():
            what = (
                "reminders"
                if kind == "text" and all(p.lstrip().startswith("<system-reminder>") for p in parts)
                else kind.replace("_", " ")
            )
            texts.append((f"message {n} ({m.get('role')}): {what}", "\n".join(parts)))
    from inspector.tokens.estimate import count_many

    counted = count_many([t for _, t in texts])
    est = [round(ratio * c) for c in counted]
    total, exact = sum(est), False
    if request.replies:
        u = s.records[request.replies[0]].usage
        if u is not None:
            total, exact = u[0] + u[1] + u[2], True
    k = total / sum(est) if sum(est) else 0.0
    shares = [RequestPart(label, round(n * k)) for (label, _), n in zip(texts, est)]
    return RequestComposition(request.id, total, exact, shares, len(req.get("messages") or ()))
