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
    from conformance.compare import fake_env
    from inspector.tokens.thresholds import Settings

    run = json.loads((folder / "run.json").read_text())
    home = Path(tempfile.mkdtemp(prefix="inspector-replay-home-"))
    settings_file = run.get("settings_after") if run.get("settings_after") is not None else run.get("settings")
    if settings_file is not None:
        (home / "settings.json").write_text(json.dumps(settings_file))
    try:
        return Settings.from_environment(env=fake_env(run), config_dir=home)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _record(raw: bytes) -> dict[str, Any]:
    """A transcript line's record; a blank line (2.0.76 wrote one as a session's only line) is none, kept in its place
    so that a record's index is its line's."""
    import orjson

    return orjson.loads(raw) if raw.strip() else {}


def _boundary_order(mains: list[Path], served: list[int]) -> tuple[dict[tuple[Path, int], int | None], set[tuple[Path, int]]]:
    """The served summary (its index in the request log) of every compaction of the run's main transcripts, and the
    boundaries that are a fork's copies of another's (--fork-session starts a new transcript with a copy of the last
    compaction's boundary: same uuid and time). One transcript: the file's order is the order the summaries were
    served; several (a fork): the boundaries' times, the first session's copy being the original."""

    found: list[tuple[str, int, Path, int]] = []  # (time, the transcript's place, transcript, record)
    owner: dict[str, Path] = {}
    copies: set[tuple[Path, int]] = set()
    dated = []
    for t in mains:
        recs = [_record(raw) for raw in t.read_bytes().splitlines()]
        start = next((str(r["timestamp"]) for r in recs if isinstance(r.get("timestamp"), str)), "~")
        dated.append((start, t, recs))
    for place, (_start, t, recs) in enumerate(sorted(dated, key=lambda x: x[0])):
        for k, r in enumerate(recs):
            if r.get("subtype") != "compact_boundary":
                continue
            u = str(r.get("uuid"))
            if u in owner:
                copies.add((t, k))
                continue
            owner[u] = t
            found.append((str(r.get("timestamp") or ""), place, t, k))
    if len(mains) > 1:
        found.sort(key=lambda x: (x[0], x[1], x[3]))
    else:
        found.sort(key=lambda x: x[3])
    return {(t, k): (served[i] if i < len(served) else None) for i, (_, _, t, k) in enumerate(found)}, copies


def replay(folder: Path, summary_text: str | None = None) -> list[Replayed]:
    """Every compaction of every main transcript of a saved run, done again by inspector and compared."""
    import orjson

    from conformance.fake_api import SUMMARY
    from conformance.resume import _blocks, _first_difference
    from inspector.claude.versions import TAIL, rules_for
    from inspector.claude.wire import api_messages, effort_of, sent_bodies, thinking_of, wire_style
    from inspector.compact import CompactRequest, compact
    from inspector.compact.base import CompactError, RecordFactory
    from inspector.transcript.session import Session
    from inspector.transcript.tree import Conversation

    run = json.loads((folder / "run.json").read_text())
    log = load_requests(folder)
    settings = _settings(folder)
    shifts = [float(st.get("shift_hours") or 0) for st in run.get("steps") or ()]
    name = str(run.get("scenario", ""))
    if (
        not any("shift_hours" in st for st in run.get("steps") or ())
        and name.startswith(("gen_", "found_"))
        and name[name.index("_") + 1 :].isdigit()
    ):
        from conformance.generate import scenario  # a run saved before the shifts were recorded: its scenario's
        from conformance.generated import load_found

        sc = scenario(int(name[4:])) if name.startswith("gen_") else next((f for f in load_found() if f.name == name), None)
        shifts = [st.shift_hours for st in sc.steps] if sc else shifts
    # the exchange around each served summary: the turn request before it (refused or not) and the first after it
    served = [n for n, q in enumerate(log) if q["kind"] == "summary" and q["answer"] == "summary"]
    out: list[Replayed] = []
    mains = sorted(p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts)
    serve_of, copies = _boundary_order(mains, served)
    tmp = Path(tempfile.mkdtemp(prefix="inspector-replay-"))
    try:
        for t in mains:
            lines = t.read_bytes().splitlines(keepends=True)
            recs = [_record(raw) for raw in lines]  # parsed once: every boundary's cut reads them
            cuts = [k for k, r in enumerate(recs) if r.get("subtype") == "compact_boundary"]
            for b_no, k in enumerate(cuts):
                if (t, k) in copies:
                    continue  # a fork's copy of a compaction the session it was forked from made (replayed there)
                boundary = recs[k]
                n = serve_of.get((t, k))
                # the copy's path as long as the one Claude Code's summary names (the summary says where the transcript
                # is, and its length is in the rough counts a compaction budgets with: the earlier messages' budget is a
                # third of what it removes, and 8 bytes more of path cut an item, fresh 2.1.332 REPL seed 75026)
                named = _named_path(recs[k:])
                folder_name = f"{t.stem}-{b_no}"  # (ends with the boundary's number: tests read it)
                pad = len(named) - len(f"{tmp}/{folder_name}/{t.parent.name}/{t.name}") if named else 0
                folder_name = "x" * pad + folder_name if pad >= 0 else folder_name[min(-pad, len(t.stem) - 1) :]
                cut = tmp / folder_name / t.parent.name / t.name
                cut.parent.mkdir(parents=True)
                # the records Claude Code flushed just before its boundary can already hold later state (a `tools-used`
                # record naming the tool the next reply calls): the session as it was is the one before them
                last_msg = max((j for j in range(k) if recs[j].get("type") in ("user", "assistant", "attachment")), default=-1)
                # a REPL writes some of the records of the request it refused only after the compaction that
                # answered the refusal (a total_tokens_reminder, hung below the new summary): Claude Code had them in
                # memory and kept them, so the session as it was has them before the boundary
                theirs_kept = set(((boundary.get("compactMetadata") or {}).get("preservedMessages") or {}).get("uuids") or [])
                # (not one the file already has before the boundary: 2.1.174's REPL wrote a prompt that a compaction
                # interrupted again below the new summary, REPL seed 190002; the copy above is the one it had)
                written = {r.get("uuid") for r in recs[:k] if r.get("uuid")}
                late = [dict(r) for r in recs[k + 1 :] if r.get("uuid") in theirs_kept and r.get("uuid") not in written]
                parent = recs[last_msg].get("uuid") if last_msg >= 0 else None
                for r in late:
                    r["parentUuid"], parent = parent, r["uuid"]
                cut.write_bytes(
                    b"".join(raw for j, raw in enumerate(lines[:k]) if j <= last_msg or recs[j].get("type") != "tools-used")
                    + b"".join(orjson.dumps(r) + b"\n" for r in late)
                )
                if t.with_suffix("").is_dir():
                    shutil.copytree(t.with_suffix(""), cut.with_suffix(""))
                s = Session.load(cut)
                meta = boundary.get("compactMetadata") or {}
                moved = {x["uuid"] for x in late}
                # what it wrote (not a record the file has above the boundary, written again below the summary: the
                # prompt 2.1.174's REPL compacted before, REPL seeds 73007 and 190000)
                after = [r for r in recs[k:] if r.get("uuid") not in moved and r.get("uuid") not in written]
                partial = next(((rec.get("summarizeMetadata") or {}) for rec in after if rec.get("isCompactSummary")), {})
                if TAIL not in rules_for(s.version).era.strategies:
                    # before 2.1.159 only a partial compaction is checked, by what its boundary records: the messages
                    # it counts and the ends of the segment it kept (a release before the engine: the harness does not
                    # rebuild its other compactions)
                    if "messagesSummarized" in meta:
                        out.append(_partial_before_engine(s, boundary, partial, n, log, run, t.name, b_no))
                    continue
                kw: dict[str, Any] = {"strategy": "compact", "trigger": str(meta.get("trigger") or "auto")}
                at = next((j for j in range(n - 1, -1, -1) if log[j]["kind"] == "turn"), None) if n is not None else None
                # the request the compaction answered: the last turn request before its summary, in the same run (a
                # refusal that ended an earlier run was answered there, or not at all: a new process that compacts
                # as it starts does so at its threshold)
                before = log[at] if at is not None and log[at].get("step") == log[n].get("step") else None
                if "messagesSummarized" in meta:
                    kw, what = _partial(s, boundary, partial, n, log, run)
                    if kw is None:
                        out.append(Replayed(t.name, b_no, "partial", False, what))
                        continue
                elif kw["trigger"] == "manual":
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
                refused_summaries = sum(
                    1 for q in log[at or 0 : n or 0] if q["kind"] == "summary" and q["answer"] == "prompt_too_long"
                )
                if refused_summaries:
                    out.append(
                        Replayed(
                            t.name,
                            b_no,
                            what,
                            True,
                            f"not replayed: the summarize request was refused "
                            f"{refused_summaries} time(s) and retried with more kept (inspector's preview "
                            "assumes a summarizer that answers)",
                        )
                    )
                    continue
                # the time it was made: that of the attachments Claude Code writes after the summary (it works out a
                # background agent's state as it writes them; the boundary is stamped later, the summary earlier: an
                # agent whose last reply came between them was running for one and finished for the other), else
                # the summary's, else the boundary's; the harness moved every earlier timestamp back for each idle
                # gap after it
                k_sum = next((j for j, x in enumerate(after) if x.get("isCompactSummary")), None)
                follow = after[k_sum + 1 :] if k_sum is not None else []
                atts = follow[: next((j for j, x in enumerate(follow) if x.get("type") != "attachment"), len(follow))]
                summary_rec = [after[k_sum]] if k_sum is not None else []
                made = next(str(x["timestamp"]) for x in [*atts, *summary_rec, boundary] if x.get("timestamp"))
                when = datetime.fromisoformat(made.replace("Z", "+00:00")) + timedelta(
                    hours=sum(shifts[log[n]["step"] + 1 :]) if n is not None else 0
                )
                # a process resumed with --model that compacts before it has announced anything (a /compact as
                # its first command): no record names its model, the run does
                exits = [j for j, x in enumerate(recs[:k]) if x.get("type") == "cost-state"]
                announced = any(
                    (x.get("attachment") or {}).get("type") == "model" for x in recs[(exits[-1] if exits else -1) + 1 : k]
                )
                steps = run.get("steps") or ()
                if exits and not announced and n is not None and log[n].get("step") is not None and log[n]["step"] < len(steps):
                    argv = list(steps[log[n]["step"]].get("argv") or ())
                    if "--model" in argv[:-1]:
                        # the model the process sent its requests as: a retired one is run as another (2.1.332 ran
                        # --model claude-opus-4-0 and claude-opus-4-1 as claude-opus-5-5: seed 110000)
                        ran = next(
                            (
                                q["params"]["model"]
                                for q in log
                                if q.get("step") == log[n]["step"]
                                and q.get("kind") in ("turn", "summary")
                                and isinstance((q.get("params") or {}).get("model"), str)
                            ),
                            None,
                        )
                        kw["resume_model"] = ran or argv[argv.index("--model") + 1]
                kw["file_times"] = _file_times(run)
                kw["asked_at"], asked_note = _asked_at(
                    recs[: last_msg + 1], atts, made, "messagesSummarized" in meta or kw.get("trigger") == "manual"
                )
                try:
                    res = compact(
                        s,
                        CompactRequest(settings=settings, **kw),
                        summarizer=_FakeText(summary_text or SUMMARY),
                        factory=RecordFactory(s, now=when),
                    )
                except CompactError as exc:
                    out.append(Replayed(t.name, b_no, what, False, f"inspector could not: {exc}"))
                    continue
                theirs = (meta.get("preservedMessages") or {}).get("uuids") or []
                if list(res.kept_uuids) != list(theirs):
                    out.append(
                        Replayed(
                            t.name,
                            b_no,
                            what,
                            False,
                            f"kept {len(res.kept_uuids)} messages, Claude Code "
                            f"{len(theirs)} (first different: {_first_mismatch(list(res.kept_uuids), theirs)})",
                        )
                    )
                    continue
                ours_meta = (res.new_records[0].get("compactMetadata") or {}) if res.new_records else {}
                if "messagesSummarized" in meta and ours_meta.get("messagesSummarized") != meta["messagesSummarized"]:
                    out.append(
                        Replayed(
                            t.name,
                            b_no,
                            what,
                            False,
                            f"summarized {ours_meta.get('messagesSummarized')} "
                            f"messages, Claude Code {meta['messagesSummarized']}",
                        )
                    )
                    continue
                ours_types = [_kind(r) for r in res.new_records]
                seg = [_kind(r) for r in _compaction_records(after)]
                cc_reattached = _reattached_by(after)
                if_resumed = res.parameters.get("reattached_if_resumed")
                if if_resumed is not None and if_resumed == cc_reattached:
                    # a release that records no process's end (before 2.1.277): inspector reads the slice as one
                    # process's and says in a note which files a process resumed since would re-attach; Claude Code
                    # was such a process here, and re-attached those
                    out.append(
                        Replayed(
                            t.name,
                            b_no,
                            what,
                            True,
                            f"kept {len(theirs)} as Claude Code; re-attached the files inspector's note names for a "
                            f"process resumed since the last compaction ({len(cc_reattached)}: the release records no "
                            "process's end, and Claude Code's was resumed)",
                        )
                    )
                    continue
                extra = [k for k in seg[len(ours_types) :] if k not in PER_REQUEST]
                if seg[: len(ours_types)] == ours_types and extra:
                    out.append(
                        Replayed(
                            t.name,
                            b_no,
                            what,
                            False,
                            f"Claude Code wrote {len(extra)} more record(s) for the compaction: {extra[:4]}",
                        )
                    )
                    continue
                cc_types = [_kind(r) for r in _without_side_reply(after) if r.get("uuid")][: len(ours_types)]
                if ours_types != cc_types:
                    j = next(
                        (n for n, (x, y) in enumerate(zip(ours_types, cc_types)) if x != y), min(len(ours_types), len(cc_types))
                    )
                    out.append(
                        Replayed(
                            t.name,
                            b_no,
                            what,
                            False,
                            f"records written differ at #{j}: inspector "
                            f"{ours_types[j : j + 3]}, Claude Code {cc_types[j : j + 3]} (of {ours_types})",
                        )
                    )
                    continue
                ours_files = [
                    (r.get("attachment") or {}).get("filename") for r in res.new_records if _kind(r) == "attachment file"
                ]
                cc_files = [(r.get("attachment") or {}).get("filename") for r in after if r.get("uuid")][: len(ours_types)]
                cc_files = [f for r, f in zip([r for r in after if r.get("uuid")], cc_files) if _kind(r) == "attachment file"]
                if ours_files != cc_files and sorted(map(str, ours_files)) == sorted(map(str, cc_files)):
                    out.append(
                        Replayed(
                            t.name,
                            b_no,
                            what,
                            True,
                            f"kept {len(theirs)} as Claude Code; the same files "
                            "re-attached in another order (Claude Code orders them by their modification "
                            "times, which no transcript records: inspector takes the order they were read)",
                        )
                    )
                    continue
                # what the model sees after it: Claude Code's chain up to the last record of its compaction, in the
                # wire form (the same form every logged request is checked against), and inspector's preview
                path_then = _named_path(after)
                ours = [dict(m) for m in res.api_messages or ()]
                if path_then:
                    ours = json.loads(json.dumps(ours).replace(json.dumps(str(s.path.resolve()))[1:-1], path_then))
                ours = _as_of_summary(ours, res.new_records, after)
                whole = Session.load(t)
                last = [r.get("uuid") for r in after if r.get("uuid")][len(ours_types) - 1]
                end = whole.conversation.by_uuid.get(last)
                if end is None or res.api_messages is None:
                    out.append(Replayed(t.name, b_no, what, False, "no preview to compare"))
                    continue
                cc = api_messages(
                    sent_bodies(whole, _with_kept_reminder(whole, Conversation(whole.records[: end + 1]).chain, meta)),
                    str(res.parameters.get("wire_style") or wire_style(s)),
                    thinking_of(res.parameters),
                    effort_of(res.parameters),
                )
                a, b = _blocks(ours), _blocks(cc)
                ok = a == b
                k2 = next((j for j, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
                why = (
                    "the preview is what Claude Code's records send"
                    if ok
                    else f"the preview differs at message {k2}: "
                    + (_first_difference(a[k2], b[k2]) if k2 < min(len(a), len(b)) else f"{len(a)} previewed, {len(b)} sent")
                )
                # the size after it by Claude Code's own rough count (postTokens: the boundary, summary, kept records
                # and re-attachments), which also decides how many earlier messages the summary keeps
                ours_post = (res.new_records[0].get("compactMetadata") or {}).get("postTokens") if res.new_records else None
                cc_post = meta.get("postTokens")
                rendered_later = res.parameters.get("attachments_unrendered")
                if ok and isinstance(cc_post, int) and ours_post != cc_post:
                    if rendered_later:
                        # the release renders its attachments as it sends them (before 2.1.268): inspector counts them
                        # by their JSON, Claude Code by the text it renders, which no record holds
                        why += (
                            f"; postTokens {ours_post}, Claude Code {cc_post} ({rendered_later} attachment(s) rendered as sent)"
                        )
                    else:
                        ok, why = False, f"postTokens {ours_post}, Claude Code {cc_post}"
                out.append(Replayed(t.name, b_no, what, ok, f"kept {len(theirs)} as Claude Code; {why}{asked_note}"))
        out += _unserved_rewinds(folder, run)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _with_kept_reminder(s: Any, chain: list[int], meta: dict[str, Any]) -> list[int]:
    """The chain a compaction leaves, with the tool round's reminder record that ends its kept tail (a reactive
    compaction of a refused request after a tool result: 2.1.332 seed 112029). inspector's chain stops at the last
    record that is sent as a record of its own; that one is sent as the retried request's suffix (`wire.SENT_SUFFIXES`:
    the request after the compaction carried it, and the preview does)."""
    from inspector.claude.wire import SENT_SUFFIXES

    tail = (meta.get("preservedSegment") or {}).get("tailUuid")
    k = s.conversation.by_uuid.get(tail) if isinstance(tail, str) else None
    if k is None or k in chain or not chain or s.records[k].get("attachment_type") not in SENT_SUFFIXES:
        return chain
    return chain + [k] if s.records[k].parent == s.records[chain[-1]].uuid else chain


def _named_path(records: list[dict[str, Any]]) -> str | None:
    """The transcript path the first compact summary among these records names ("read the full transcript at: ...")."""
    return next(
        (
            str(r["message"]["content"]).split("read the full transcript at: ")[1].split("\n")[0]
            for r in records
            if r.get("isCompactSummary") and "read the full transcript at: " in str((r.get("message") or {}).get("content"))
        ),
        None,
    )


def _file_times(run: dict[str, Any]) -> dict[str, float]:
    """The times of the files the runner made in the working folder (Claude Code orders the files only read that it
    re-attaches by them; no transcript records them): as the run recorded them, else, for a run saved before it did,
    by the runner's rule: every scenario's files are f1.txt, f2.txt... made in that order, a minute apart."""
    got = run.get("file_times")
    if isinstance(got, dict):
        return {str(k): float(v) for k, v in got.items()}
    work = run.get("work")
    if not isinstance(work, str):
        return {}
    return {f"{work}/f{k}.txt": 60.0 * k for k in range(1, 100)}


def _asked_at(before: list[dict[str, Any]], atts: list[dict[str, Any]], made: str, asked: bool) -> tuple[datetime, str]:
    """When the compaction was asked for, in the transcript's own clock (its notifications are dated by it): the
    time its records are dated, for one Claude Code set off itself. A person's /compact or a message picked in the
    rewind dialog was asked for at a moment no record dates, after the last record before it: Claude Code's task
    panel forgets each finished agent 30 s after announcing it on a one-second tick that stops while a dialog is
    open, so the agents it still re-announces tell when; the latest time in that window that keeps every agent it
    re-announced is taken (said in the row's note), and where none does, the time its records are dated."""
    from inspector.compact.reattach import _NOTIFIED, EVICT_AFTER_S, notification_words

    dated = datetime.fromisoformat(made.replace("Z", "+00:00"))
    if not asked:
        return dated, ""
    told: dict[str, datetime] = {}
    for r in before:  # the notifications the engine reads (`task_statuses`): told as the model worked, or while idle
        said = notification_words(r)
        for n in _NOTIFIED.finditer(said or ""):
            told[n.group(1)] = datetime.fromisoformat(str(r.get("timestamp")).replace("Z", "+00:00"))
    kept = [
        told[x["attachment"].get("taskId")]
        for x in atts
        if (x.get("attachment") or {}).get("type") == "task_status" and (x.get("attachment") or {}).get("taskId") in told
    ]
    last = next((str(r["timestamp"]) for r in reversed(before) if r.get("timestamp")), None)
    if not kept or last is None:
        return dated, ""
    latest = min(kept) + timedelta(seconds=EVICT_AFTER_S) - timedelta(milliseconds=1)
    start = datetime.fromisoformat(last.replace("Z", "+00:00"))
    if not start <= latest < dated:
        return dated, ""
    return latest, (
        f" (asked for {(dated - latest).total_seconds():.1f} s or more before its records are dated, which no record "
        "says: the background agents it still re-announced tell)"
    )


def _unserved_rewinds(folder: Path, run: dict[str, Any]) -> list[Replayed]:
    """A rewind after which Claude Code summarized nothing ("up to" the first prompt): inspector must refuse too."""
    from inspector.compact import CompactRequest, compact
    from inspector.compact.base import CompactError, make_slice
    from inspector.compact.engine import rewind_candidates
    from inspector.transcript.session import Session

    steps = [st for st in run.get("steps") or () if st.get("rewind") and "no summary served" in str(st.get("stdout"))]
    mains = sorted(p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts)
    if not steps or len(mains) != 1:
        return []
    s = Session.load(mains[0])
    out = []
    for st in steps:
        ups, direction, context = st["rewind"]
        if "picked " not in str(st.get("stdout")):
            # the release's menu listed no message (conformance.repl.NOTHING_TO_REWIND): inspector's must list none
            menu = rewind_candidates(make_slice(s))
            what = f"partial {direction} (Claude Code's menu listed nothing)"
            rows = f"{len(menu)} row(s)" if menu else "none either"
            out.append(Replayed(mains[0].name, -1, what, not menu, f"inspector's menu lists {rows}"))
            continue
        if "menu has no" in str(st.get("stdout")):
            # the release has no such item (conformance.repl: "Summarize up to here" from 2.1.141): inspector must say
            # its "up to" is a what-if there
            from inspector.claude.versions import rules_for, what_if

            r = rules_for(s.version)
            said = what_if("partial-up-to" if direction == "up_to" else "partial-from", r.era, r.version)
            what = f"partial {direction} (not in Claude Code {s.version}'s menu)"
            out.append(Replayed(mains[0].name, -1, what, said is not None, said or "inspector offers it as this release's own"))
            continue
        picked = str(st.get("stdout")).split("picked ", 1)[1].split(", Summarize", 1)[0].strip("'\"")
        # the REPL's menu lists the prompts of the whole history it shows, from before a compaction too (picking
        # one says "That message is no longer in the active context"): the pivot is the last prompt of that text
        menu = rewind_candidates(make_slice(s))
        found = [
            i
            for i in range(len(s.records))
            if s.records[i].type == "user"
            and not s.records[i].is_meta
            and (
                (s.records[i].get("prompt") or "").strip().startswith(picked)
                # a slash command's own record, which the menu shows as the command
                or f"<command-name>{picked}</command-name>" in str((s.body(i).get("message") or {}).get("content"))
            )
        ]
        what = f"partial {direction} from {picked!r} (not compacted by Claude Code)"
        if not found:
            out.append(Replayed(mains[0].name, -1, what, False, f"no prompt {picked!r} in the transcript"))
            continue
        if found[-1] not in menu:
            out.append(
                Replayed(
                    mains[0].name, -1, what, True, "inspector's menu does not offer it either (it is before the last compaction)"
                )
            )
            continue
        try:
            compact(
                s,
                CompactRequest(strategy="partial", pivot=s.records[found[-1]].uuid, direction=direction),
                summarizer=_FakeText("x"),
            )
        except CompactError as exc:
            out.append(Replayed(mains[0].name, -1, what, True, f"inspector refuses too: {exc}"))
        else:
            out.append(Replayed(mains[0].name, -1, what, False, "Claude Code summarized nothing there; inspector would"))
    return out


def _partial_before_engine(
    s: Any,
    boundary: dict[str, Any],
    partial: dict[str, Any],
    n: int | None,
    log: list[dict[str, Any]],
    run: dict[str, Any],
    name: str,
    b_no: int,
) -> Replayed:
    """A partial compaction of a release before 2.1.159, done again by inspector: the same count of messages
    summarized and the same ends of the kept segment as the boundary records."""
    from conformance.fake_api import SUMMARY
    from inspector.compact import CompactRequest, compact
    from inspector.compact.base import CompactError
    from inspector.transcript.tree import relinks_kept

    kw, what = _partial(s, boundary, partial, n, log, run)
    if kw is None:
        return Replayed(name, b_no, "partial", False, what)
    try:
        res = compact(s, CompactRequest(**kw), summarizer=_FakeText(SUMMARY))
    except CompactError as exc:
        return Replayed(name, b_no, what, False, f"inspector could not: {exc}")
    theirs = boundary.get("compactMetadata") or {}
    ours = (res.new_records[0].get("compactMetadata") or {}) if res.new_records else {}
    if ours.get("messagesSummarized") != theirs.get("messagesSummarized"):
        return Replayed(
            name,
            b_no,
            what,
            False,
            f"summarized {ours.get('messagesSummarized')} messages, Claude Code {theirs.get('messagesSummarized')}",
        )
    ends = [
        (x.get("headUuid"), x.get("tailUuid")) for x in (ours.get("preservedSegment") or {}, theirs.get("preservedSegment") or {})
    ]
    if not relinks_kept(s.version) and "preservedSegment" not in theirs:
        # a release before 2.1.76 writes no kept segment; inspector writes one for the later release that resumes
        # its saved session (summary_compact.partial_compact): the kept messages are checked by the last one it keeps
        ends = [(None, (ours.get("preservedSegment") or {}).get("tailUuid")), (None, boundary.get("logicalParentUuid"))]
    if ends[0] != ends[1]:
        return Replayed(name, b_no, what, False, f"kept segment {ends[0]}, Claude Code {ends[1]}")
    return Replayed(name, b_no, what, True, f"summarized {ours.get('messagesSummarized')} messages as Claude Code")


def _partial(
    s: Any, boundary: dict[str, Any], partial: dict[str, Any], n: int | None, log: list[dict[str, Any]], run: dict[str, Any]
) -> tuple[dict[str, Any] | None, str]:
    """The partial compaction a boundary records ("summarize from / up to here"): inspector's arguments for it, or
    None and why not. The pivot is the prompt summarized from (the message after the kept prefix) or up to (the first
    kept message); where the run says which row of the rewind menu was picked, inspector's menu must offer that
    prompt in that row."""
    from inspector.compact.base import make_slice
    from inspector.compact.engine import rewind_candidates

    meta = boundary.get("compactMetadata") or {}
    step = (run.get("steps") or [])[log[n]["step"]] if n is not None and n < len(log) else {}
    # a compaction that kept nothing ("from" the first prompt) writes no summarizeMetadata: the run says which it was
    direction = partial.get("direction") or (step.get("rewind") or [None, None])[1]
    kept = (meta.get("preservedMessages") or {}).get("uuids") or []
    chain = [s.records[i].uuid for i in s.conversation.chain]
    pivot: str | None = None
    if direction == "from":
        last = boundary.get("logicalParentUuid")
        at = chain.index(last) + 1 if last in chain else 0
        pivot = next((u for u in chain[at:] if u and s.records[s.conversation.by_uuid[u]].type == "user"), None)
    elif direction == "up_to":
        pivot = kept[0] if kept else None
    if pivot is None:
        return None, f"a partial compaction whose pivot the records do not show (direction {direction!r}, {len(kept)} kept)"
    ups = (step.get("rewind") or [None])[0]
    if ups:
        menu = [s.records[i].uuid for i in rewind_candidates(make_slice(s))]
        # the driver pressed Up `ups` times from "(current)": the menu stops at its top row (2.1.174's listed one
        # prompt, and Up twice picked it: REPL seeds 1008, 1013, 7001, 1016, 79200)
        row = menu[-min(ups, len(menu))] if menu else None
        if row != pivot:
            offered = row[:8] if row else "nothing"
            return None, (
                f"the rewind menu's row {ups} above (current) was {pivot[:8]} in Claude Code, {offered} in "
                f"inspector's menu of {len(menu)} prompts"
            )
    kw = {"strategy": "partial", "pivot": pivot, "direction": direction, "instructions": partial.get("userContext") or None}
    return kw, f"partial {direction} {pivot[:8]}" + (f" ({kw['instructions']})" if kw["instructions"] else "")


# attachments Claude Code writes for the request after a compaction, not for the compaction (every request has them)
PER_REQUEST = frozenset(
    {"attachment total_tokens_reminder", "attachment task_reminder", "attachment todo_reminder", "attachment prompt_snapshot"}
)


def _without_side_reply(after: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records from a boundary on without the reply written among the compaction's own whose parent is the record
    the boundary follows (a REPL of 2.1.88-2.1.219 after a compaction between a turn's requests; a kept tail's last
    record on 2.1.2xx) and that reply's further fragments: the turn's records, not the compaction's."""
    side = {after[0].get("logicalParentUuid")} if after and after[0].get("logicalParentUuid") else set()
    out = []
    for r in after:
        if r.get("type") == "assistant" and r.get("parentUuid") in side and r.get("uuid"):
            side.add(r["uuid"])
            continue
        out.append(r)
    return out


def _compaction_records(after: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records Claude Code wrote for a compaction: the boundary and what follows it up to the next message of
    the conversation (a prompt, a tool result, a reply or a command's breadcrumb), or the reminder record of the
    request after it (a compaction in the middle of a tool round: 2.1.332 seed 110012)."""
    from inspector.claude.wire import SENT_SUFFIXES

    out: list[dict[str, Any]] = []
    for r in _without_side_reply(after):
        if not r.get("uuid"):
            continue
        if out and (
            r.get("type") == "assistant"
            or (r.get("type") == "user" and not r.get("isCompactSummary"))
            or r.get("type") == "system"
            or (r.get("type") == "attachment" and (r.get("attachment") or {}).get("type") in SENT_SUFFIXES)
        ):
            break
        out.append(r)
    return out


def _reattached_by(after: list[dict[str, Any]]) -> list[str]:
    """The files a compaction re-attached: the file attachments after its boundary, before the next reply or prompt (a
    /compact's breadcrumbs come between its summary and them)."""
    out: list[str] = []
    for r in after[1:]:
        if not r.get("uuid"):
            continue
        if r.get("type") == "assistant":
            break
        if r.get("type") == "user" and not r.get("isCompactSummary"):
            content = (r.get("message") or {}).get("content")
            if not (isinstance(content, str) and content.startswith(("<local-command-", "<command-"))):
                break
        if _kind(r) == "attachment file":
            out.append(str((r.get("attachment") or {}).get("filename")))
    return out


def _as_of_summary(ours: list[dict[str, Any]], new: Any, after: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The preview with its question cards' call ids made from Claude Code's summary's uuid instead of inspector's: an
    id is made from the summary's uuid, a fresh one on either side (the round trip checks inspector's own)."""
    from inspector.claude.wire import EARLIER_CARD_PREFIX, name_uuid

    mine = next((r for r in new if r.get("isCompactSummary")), None)
    theirs = next((r.get("uuid") for r in after if r.get("isCompactSummary")), None)
    if mine is None or not isinstance(theirs, str) or mine.get("uuid") == theirs or EARLIER_CARD_PREFIX not in json.dumps(ours):
        return ours
    text = json.dumps(ours)
    for k in range(len(mine.get("earlierMessages") or ())):
        text = text.replace(
            EARLIER_CARD_PREFIX + name_uuid(f"earlier-{k}", str(mine.get("uuid"))),
            EARLIER_CARD_PREFIX + name_uuid(f"earlier-{k}", theirs),
        )
    return list(json.loads(text))


def _kind(r: dict[str, Any]) -> str:
    a = r.get("attachment")
    return f"attachment {a.get('type')}" if isinstance(a, dict) else str(r.get("type"))


def _first_mismatch(a: list[str], b: list[str]) -> str:
    k = next((j for j, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"#{k}: {a[k][:8] if k < len(a) else '-'} vs {b[k][:8] if k < len(b) else '-'}"
