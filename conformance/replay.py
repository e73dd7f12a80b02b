"""Each compaction of a run, done again by inspector: the session cut just before Claude Code's boundary, the
strategy its cause calls for (a /compact with its instructions, a threshold compaction, the refusal with the limit
the API named), and three answers compared with the binary's: the messages kept verbatim (its
`preservedMessages`), the records written (types, in order), and the first request Claude Code sent after it
against inspector's preview (`api_messages`; after a /compact, the preview followed by the next step's prompt).

Only for releases whose format inspector writes exactly (2.1.3xx: the tail-keeping compaction); the summarizer is
the fake API's text, so the summaries can be compared whole.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from conformance.runner import load_requests

REFUSAL = re.compile(r"prompt is too long: (\d+) tokens > (\d+) maximum")


@dataclass
class Replayed:
    transcript: str
    boundary: int  # the n-th compaction of that transcript
    what: str  # the strategy inspector ran
    ok: bool
    detail: str


class _FakeText:
    name = "fake"
    sends_data = False

    def __init__(self, text: str) -> None:
        self.text = text

    def summarize(self, req: Any, progress: Any = None, cancel: Any = None) -> Any:
        from inspector.compact.summarize.base import SummaryOutput

        return SummaryOutput(self.text, "fake")


def _settings(folder: Path) -> Any:
    from inspector.tokens.thresholds import Settings

    run = json.loads((folder / "run.json").read_text())
    home = Path(tempfile.mkdtemp(prefix="inspector-replay-home-"))
    settings_file = run.get("settings_after") if run.get("settings_after") is not None else run.get("settings")
    if settings_file is not None:
        (home / "settings.json").write_text(json.dumps(settings_file))
    try:
        return Settings.from_environment(env=dict(run.get("env") or {}), config_dir=home)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def replay(folder: Path, summary_text: str | None = None) -> list[Replayed]:
    """Every compaction of every main transcript of a saved run, done again by inspector and compared."""
    from conformance.fake_api import SUMMARY
    from conformance.resume import _blocks, _first_difference
    from inspector.claude.wire import api_messages, sent_bodies, wire_style
    from inspector.transcript.tree import Conversation
    from inspector.claude.versions import TAIL, rules_for
    from inspector.compact import compact
    from inspector.compact.base import CompactError, RecordFactory
    from inspector.transcript.session import Session

    import orjson

    run = json.loads((folder / "run.json").read_text())
    log = load_requests(folder)
    settings = _settings(folder)
    shifts = [float(st.get("shift_hours") or 0) for st in run.get("steps") or ()]
    name = str(run.get("scenario", ""))
    if not any("shift_hours" in st for st in run.get("steps") or ()) and name.startswith(("gen_", "found_")):
        from conformance.generate import scenario  # a run saved before the shifts were recorded: its scenario's
        from conformance.generated import load_found

        sc = scenario(int(name[4:])) if name.startswith("gen_") else next((f for f in load_found() if f.name == name), None)
        shifts = [st.shift_hours for st in sc.steps] if sc else shifts
    # the exchange around each served summary: the turn request before it (refused or not) and the first after it
    served = [n for n, q in enumerate(log) if q["kind"] == "summary" and q["answer"] == "summary"]
    out: list[Replayed] = []
    nth = 0  # boundaries seen, in the order Claude Code wrote them (= the order the summaries were served)
    tmp = Path(tempfile.mkdtemp(prefix="inspector-replay-"))
    try:
        for t in sorted(p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts):
            lines = t.read_bytes().splitlines(keepends=True)
            recs = [orjson.loads(raw) for raw in lines]  # parsed once: every boundary's cut reads them
            cuts = [k for k, r in enumerate(recs) if r.get("subtype") == "compact_boundary"]
            for b_no, k in enumerate(cuts):
                boundary = recs[k]
                n = served[nth] if nth < len(served) else None
                nth += 1
                cut = tmp / f"{t.stem}-{b_no}" / t.parent.name / t.name
                cut.parent.mkdir(parents=True)
                # the records Claude Code flushed just before its boundary can already hold later state (a `tools-used`
                # record naming the tool the next reply calls): the session as it was is the one before them
                last_msg = max((j for j in range(k) if recs[j].get("type") in ("user", "assistant", "attachment")), default=-1)
                cut.write_bytes(b"".join(raw for j, raw in enumerate(lines[:k])
                                         if j <= last_msg or recs[j].get("type") != "tools-used"))
                if t.with_suffix("").is_dir():
                    shutil.copytree(t.with_suffix(""), cut.with_suffix(""))
                s = Session.load(cut)
                if TAIL not in rules_for(s.version).era.strategies:
                    continue
                meta = boundary.get("compactMetadata") or {}
                after = recs[k:]
                kw: dict[str, Any] = {"strategy": "compact", "trigger": str(meta.get("trigger") or "auto")}
                at = next((j for j in range(n - 1, -1, -1) if log[j]["kind"] == "turn"), None) if n is not None else None
                before = log[at] if at is not None else None
                if kw["trigger"] == "manual":
                    for rec in after:
                        c = (rec.get("message") or {}).get("content") if rec.get("type") == "user" else None
                        if isinstance(c, str) and "<command-args>" in c:
                            kw["instructions"] = c.split("<command-args>", 1)[1].split("</command-args>", 1)[0] or None
                            break
                    what = "/compact" + (f" {kw['instructions']}" if kw.get("instructions") else "")
                elif before is not None and before["answer"] == "prompt_too_long" and REFUSAL.search(before.get("error") or ""):
                    got, limit = (int(x) for x in REFUSAL.search(before["error"]).groups())
                    kw = {"strategy": "reactive", "refused_at": limit, "prompt_tokens": got}
                    what = f"reactive ({got:,} > {limit:,})"
                else:
                    what = "compact (threshold)"
                refused_summaries = sum(1 for q in log[at or 0: n or 0]
                                        if q["kind"] == "summary" and q["answer"] == "prompt_too_long")
                if refused_summaries:
                    out.append(Replayed(t.name, b_no, what, True, f"not replayed: the summarize request was refused "
                                        f"{refused_summaries} time(s) and retried with more kept (inspector's preview "
                                        "assumes a summarizer that answers)"))
                    continue
                # the time it was written: the harness moved every earlier timestamp back for each idle gap after it
                when = datetime.fromisoformat(str(boundary["timestamp"]).replace("Z", "+00:00")) + timedelta(
                    hours=sum(shifts[log[n]["step"] + 1:]) if n is not None else 0)
                try:
                    res = compact(s, summarizer=_FakeText(summary_text or SUMMARY), factory=RecordFactory(s, now=when),
                                  settings=settings, **kw)
                except CompactError as exc:
                    out.append(Replayed(t.name, b_no, what, False, f"inspector could not: {exc}"))
                    continue
                theirs = (meta.get("preservedMessages") or {}).get("uuids") or []
                if list(res.kept_uuids) != list(theirs):
                    out.append(Replayed(t.name, b_no, what, False, f"kept {len(res.kept_uuids)} messages, Claude Code "
                                        f"{len(theirs)} (first different: {_first_mismatch(list(res.kept_uuids), theirs)})"))
                    continue
                ours_types = [_kind(r) for r in res.new_records]
                cc_types = [_kind(r) for r in after if r.get("uuid")][: len(ours_types)]
                if ours_types != cc_types:
                    j = next((n for n, (x, y) in enumerate(zip(ours_types, cc_types)) if x != y), min(len(ours_types), len(cc_types)))
                    out.append(Replayed(t.name, b_no, what, False, f"records written differ at #{j}: inspector "
                                        f"{ours_types[j:j + 3]}, Claude Code {cc_types[j:j + 3]} (of {ours_types})"))
                    continue
                ours_files = [(r.get("attachment") or {}).get("filename") for r in res.new_records if _kind(r) == "attachment file"]
                cc_files = [(r.get("attachment") or {}).get("filename") for r in after if r.get("uuid")][: len(ours_types)]
                cc_files = [f for r, f in zip([r for r in after if r.get("uuid")], cc_files) if _kind(r) == "attachment file"]
                if ours_files != cc_files and sorted(map(str, ours_files)) == sorted(map(str, cc_files)):
                    out.append(Replayed(t.name, b_no, what, True, f"kept {len(theirs)} as Claude Code; the same files "
                                        "re-attached in another order (Claude Code orders them by their modification "
                                        "times, which no transcript records: inspector takes the order they were read)"))
                    continue
                # what the model sees after it: Claude Code's chain up to the last record of its compaction, in the
                # wire form (the same form every logged request is checked against), and inspector's preview
                path_then = next((str(r["message"]["content"]).split("read the full transcript at: ")[1].split("\n")[0]
                                  for r in after if r.get("isCompactSummary") and "read the full transcript at: " in
                                  str((r.get("message") or {}).get("content"))), None)
                ours = [dict(m) for m in res.api_messages or ()]
                if path_then:
                    ours = json.loads(json.dumps(ours).replace(json.dumps(str(s.path.resolve()))[1:-1], path_then))
                whole = Session.load(t)
                last = [r.get("uuid") for r in after if r.get("uuid")][len(ours_types) - 1]
                end = whole.conversation.by_uuid.get(last)
                if end is None or res.api_messages is None:
                    out.append(Replayed(t.name, b_no, what, False, "no preview to compare"))
                    continue
                cc = api_messages(sent_bodies(whole, Conversation(whole.records[: end + 1]).chain),
                                  str(res.parameters.get("wire_style") or wire_style(s)))
                a, b = _blocks(ours), _blocks(cc)
                ok = a == b
                k2 = next((j for j, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
                why = ("the preview is what Claude Code's records send" if ok else
                       f"the preview differs at message {k2}: " +
                       (_first_difference(a[k2], b[k2]) if k2 < min(len(a), len(b)) else f"{len(a)} previewed, {len(b)} sent"))
                out.append(Replayed(t.name, b_no, what, ok, f"kept {len(theirs)} as Claude Code; {why}"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _kind(r: dict[str, Any]) -> str:
    a = r.get("attachment")
    return f"attachment {a.get('type')}" if isinstance(a, dict) else str(r.get("type"))


def _first_mismatch(a: list[str], b: list[str]) -> str:
    k = next((j for j, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"#{k}: {a[k][:8] if k < len(a) else '-'} vs {b[k][:8] if k < len(b) else '-'}"
