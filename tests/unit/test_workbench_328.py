"""The workbench for today's Claude Code, checked against what the real 2.1.328 did in the conformance goldens:
its compaction (kept tail, records, summary shape, re-attached files, re-announcements), the tail a refusal keeps,
the request a resume sends, and saved sessions in its format. The round trip with the binary itself is
`python -m conformance --resume` (not run here: it needs the binary)."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import assistant, tool_use, user
from helpers import DATA, expand_golden, golden_transcript, run_cli, sample_session, sha256, write_jsonl

from conformance.fake_api import SUMMARY
from inspector.claude.requests import canonical
from inspector.claude.wire import api_messages, sent_bodies
from inspector.compact import CompactRequest, compact
from inspector.compact.base import RecordFactory
from inspector.compact.engine import api_rounds
from inspector.compact.summarize.base import SummaryOutput
from inspector.edit import SaveError, save
from inspector.transcript.session import Session
from inspector.transcript.tree import Conversation

# ids and times are new on every run; `slug` is a random name Claude Code gives a session when it first needs one (a
# session that never had one gets it at its compaction: inspector leaves it to Claude Code)
IGNORED = {
    "uuid",
    "parentUuid",
    "timestamp",
    "promptId",
    "turnPosition",
    "turnOrigin",
    "summarizedTurnPromptUuids",
    "sessionId",
    "logicalParentUuid",
    "slug",
}


class FakeSummary:
    """Replies with the summary the conformance fake gave Claude Code, so the texts can be compared whole."""

    name = "fake"
    sends_data = False

    def summarize(self, req, progress=None, cancel=None):
        return SummaryOutput(SUMMARY, "fake")


def _blocks(messages):
    return [
        {**m, "content": [{"type": "text", "text": m["content"]}]} if isinstance(m["content"], str) else m
        for m in canonical([dict(x) for x in messages])
    ]


def before_compaction(name: str, tmp: Path) -> tuple[Session, list[dict], dict]:
    """The golden's session as it was just before Claude Code compacted it (a copy cut at its boundary), the
    records Claude Code wrote from the boundary on, and that boundary."""
    path = golden_transcript(expand_golden(name, tmp))
    lines = path.read_bytes().splitlines(keepends=True)
    k = next(n for n, raw in enumerate(lines) if orjson.loads(raw).get("subtype") == "compact_boundary")
    cut = tmp / "cut" / path.parent.name / path.name
    cut.parent.mkdir(parents=True)
    cut.write_bytes(b"".join(lines[:k]))
    os.utime(cut, (time.time() - 3600, time.time() - 3600))
    after = [orjson.loads(raw) for raw in lines[k:]]
    return Session.load(cut), after, after[0]


def _shape(rec: dict, path_from: str, path_to: str) -> dict:
    out = {k: v for k, v in rec.items() if k not in IGNORED}
    if rec.get("type") == "user" and isinstance(rec.get("message", {}).get("content"), str):
        out["message"] = {**rec["message"], "content": rec["message"]["content"].replace(path_from, path_to)}
    if rec.get("type") == "system":
        meta = dict(out.get("compactMetadata", {}))
        for k in (
            "durationMs",
            "postTokens",
            "cumulativeDroppedTokens",
            "preCompactOrganizationsCoverStart",
            "runningTurnPrompt",
            "preservedSegment",
            "preservedMessages",
            "preTokens",
        ):
            meta.pop(k, None)
        out["compactMetadata"] = meta
    return out


@pytest.mark.parametrize(
    "name, trigger",
    [
        ("manual_compact_file_restore", "manual"),
        ("manual_compact_resume", "manual"),
        ("threshold_env_window_100k", "auto"),
        ("post_compact_file_restore_4", "auto"),
    ],
)
def test_the_records_of_a_compaction_are_those_claude_code_wrote(name, trigger, tmp_path):
    s, theirs, boundary = before_compaction(name, tmp_path)
    instructions = None
    for rec in theirs:
        c = rec.get("message", {}).get("content") if rec.get("type") == "user" else None
        if isinstance(c, str) and "<command-args>" in c:
            instructions = c.split("<command-args>", 1)[1].split("</command-args>", 1)[0] or None
    when = datetime.fromisoformat(boundary["timestamp"].replace("Z", "+00:00"))
    res = compact(
        s,
        CompactRequest("compact", trigger=trigger, instructions=instructions),
        summarizer=FakeSummary(),
        factory=RecordFactory(s, now=when),
    )
    meta = boundary["compactMetadata"]
    # what is kept: the records Claude Code listed, in its order
    assert list(res.kept_uuids) == meta["preservedMessages"]["uuids"]
    assert res.new_records[0]["compactMetadata"]["preservedMessages"]["uuids"] == meta["preservedMessages"]["uuids"]
    assert res.new_records[0]["compactMetadata"]["trigger"] == meta["trigger"] == trigger
    assert res.new_records[0]["logicalParentUuid"] == boundary["logicalParentUuid"]
    # the records written: the same, in the same order, up to what the next turn adds (files may tie in Claude Code's
    # order: it sorts them by the files' modification times, which the harness made equal)
    ours = [_shape(r, str(s.path.resolve()), "PATH") for r in res.new_records]
    path_then = next(
        str(r["message"]["content"]).split("read the full transcript at: ")[1].split("\n")[0]
        for r in theirs
        if r.get("isCompactSummary")
    )
    cc = [_shape(r, path_then, "PATH") for r in theirs if r.get("uuid")][: len(ours)]
    key = lambda r: (r["type"], json.dumps(r, sort_keys=True))  # noqa: E731
    assert [r["type"] for r in ours] == [r["type"] for r in cc]
    files = lambda rs: sorted(key(r) for r in rs if r.get("attachment", {}).get("type") == "file")  # noqa: E731
    assert files(ours) == files(cc)
    assert [r for r in ours if r.get("attachment", {}).get("type") != "file"] == [
        r for r in cc if r.get("attachment", {}).get("type") != "file"
    ]


def test_the_summary_message_has_2_1_328s_shape(tmp_path):
    s, theirs, _ = before_compaction("threshold_env_window_100k", tmp_path)
    res = compact(s, CompactRequest("compact", trigger="auto"), summarizer=FakeSummary())
    summary = next(r for r in res.new_records if r.get("isCompactSummary"))
    text = summary["message"]["content"]
    cc = next(r for r in theirs if r.get("isCompactSummary"))["message"]["content"]
    path_then = cc.split("read the full transcript at: ")[1].split("\n")[0]
    assert text.replace(str(s.path.resolve()), path_then) == cc
    assert summary["isVisibleInTranscriptOnly"] is True


@pytest.mark.parametrize("name, rounds, kept", [("reactive_ptl_gap_1", 13, 7), ("reactive_ptl_sonnet45", 13, 1)])
def test_a_refusal_keeps_the_tail_claude_code_kept(name, rounds, kept, tmp_path):
    """The run refused at 200,000 with a limit of 199,999 (a gap of 1 token) kept 7 of 13 rounds (29 records); the
    run whose refusal named no gap (200,000 > 200,000) kept the last round."""
    s, theirs, boundary = before_compaction(name, tmp_path)
    limit = 199_999 if name.endswith("gap_1") else 200_000
    res = compact(s, CompactRequest("reactive", refused_at=limit, prompt_tokens=200_000), summarizer=FakeSummary())
    assert list(res.kept_uuids) == boundary["compactMetadata"]["preservedMessages"]["uuids"]
    assert (res.parameters["rounds"], res.parameters["kept_rounds"]) == (rounds, kept)
    assert res.new_records[0]["compactMetadata"]["trigger"] == "auto"


def test_the_first_request_after_claude_codes_compaction_is_the_preview(tmp_path):
    """A threshold compaction mid-turn: Claude Code's next request is exactly inspector's api_messages."""
    from conformance.runner import load_requests

    folder = expand_golden("threshold_env_window_100k", tmp_path / "g")
    s, theirs, boundary = before_compaction("threshold_env_window_100k", tmp_path)
    when = datetime.fromisoformat(boundary["timestamp"].replace("Z", "+00:00"))
    res = compact(s, CompactRequest("compact", trigger="auto"), summarizer=FakeSummary(), factory=RecordFactory(s, now=when))
    path_then = next(
        str(r["message"]["content"]).split("read the full transcript at: ")[1].split("\n")[0]
        for r in theirs
        if r.get("isCompactSummary")
    )
    sent = [q for q in load_requests(folder) if q["kind"] == "turn"]
    after = sent[[q["kind"] for q in load_requests(folder)].index("summary")]  # the first turn after the summarize call
    ours = json.loads(json.dumps([dict(m) for m in res.api_messages]).replace(json.dumps(str(s.path.resolve()))[1:-1], path_then))
    assert _blocks(ours) == _blocks(after["messages"])


def test_rounds_follow_message_ids_and_open_tool_calls(tmp_path):
    recs = [
        user("u1", None, "go"),
        assistant("a1", "u1", [tool_use("t1", "Bash")], message_id="m1"),
        user("r1", "a1", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]),
        assistant("a2", "r1", message_id="m2"),
        user("u2", "a2", "more"),
        assistant("a3", "u2", message_id="m3"),
    ]
    s = Session.load(write_jsonl(tmp_path / "p" / "s.jsonl", recs))
    rounds = api_rounds(s, list(s.conversation.chain))
    assert [[s.records[i].uuid for i in g] for g in rounds] == [["u1"], ["a1", "r1"], ["a2", "u2"], ["a3"]]


def test_a_saved_compaction_resumes_as_previewed(tmp_path):
    folder = expand_golden("post_compact_file_restore_4", tmp_path)
    path = golden_transcript(folder)
    os.utime(path, (time.time() - 3600, time.time() - 3600))
    before = sha256(path)
    s = Session.load(path)
    res = compact(s, "compact")
    out = save(s, res)
    assert sha256(path) == before
    back = Session.load(out.path)
    assert canonical(_blocks(api_messages(sent_bodies(back, back.conversation.chain), "user"))) == canonical(
        _blocks(res.api_messages)
    )
    body = [orjson.loads(raw) for raw in out.path.read_bytes().splitlines()]
    copied = [r for r in body if r.get("uuid") and r.get("uuid") in {x.uuid for x in s.records}]
    assert copied and all(r["forkedFrom"] == {"sessionId": s.session_id, "messageUuid": r["uuid"]} for r in copied)
    assert all(r.get("requestSessionId") == s.session_id for r in copied if r["type"] == "assistant")
    assert any(r["type"] == "attachment" and "rendered" in r for r in copied)  # attachments kept, chains run through them
    last = [r for r in body if r.get("subtype") == "compact_boundary"][-1]
    kept = last["compactMetadata"]["preservedMessages"]["uuids"]
    assert kept == list(res.kept_uuids) and set(kept) <= {r.get("uuid") for r in body}


def test_cli_compact_json_has_api_messages_rules_and_never_calls_growth_a_saving(tmp_path):
    path = golden_transcript(expand_golden("manual_compact_resume", tmp_path))
    code, out, err = run_cli("compact", path, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["strategy"] == "compact" and d["what_if"] is None and "2.1.328" in d["strategy_label"]
    assert [m["role"] for m in d["api_messages"]] == ["user", "assistant", "user"]
    assert d["tokens_after"] >= 0 and d["larger_after"] == (d["tokens_after"] > d["tokens_before"])
    code, out, err = run_cli("compact", path, "--strategy", "session-memory", "--json")
    assert code == 0, err
    assert "what-if" in json.loads(out)["what_if"] and "2.1.21" in json.loads(out)["what_if"]
    code, out, err = run_cli("compact", path, "--strategies")
    assert code == 0 and "compact " in out and "(default)" in out.splitlines()[2] and "session-memory" in out


def test_an_older_session_gets_its_own_strategies(tmp_path):
    path = sample_session("Fix forecast")
    s = Session.load(path)
    code, out, err = run_cli("compact", path, "--strategies")
    assert code == 0, err
    default = next(ln for ln in out.splitlines() if "(default)" in ln)
    from inspector.claude.versions import parse_version

    assert default.split()[0] == ("full" if parse_version(s.version) < (2, 1, 159) else "compact")
    res = compact(s, "compact")
    assert res.what_if and "2.1.159 and later" in res.what_if


def test_bad_input_is_one_line_and_writes_nothing(tmp_path):
    folder = expand_golden("manual_compact_resume", tmp_path)
    path = golden_transcript(folder)
    os.utime(path, (time.time() - 3600, time.time() - 3600))
    listing = sorted(p.name for p in path.parent.iterdir())
    s = Session.load(path)
    reply = next(s.records[i].uuid for i in reversed(s.conversation.chain) if s.records[i].type == "assistant")
    code, out, err = run_cli("compact", path, "--strategy", "partial", "--at", reply, "--write")
    assert code == 2 and "not a message the rewind menu offers" in err and len(err.strip().splitlines()) == 1
    (path.parent / "afile.txt").write_text("a file where a folder would go")  # a folder that cannot be written
    listing.append("afile.txt")
    code, out, err = run_cli("compact", path, "--write", "--out", str(path.parent / "afile.txt" / "x.jsonl"))
    assert code == 2 and "could not write" in err and len(err.strip().splitlines()) == 1
    # a session from a Claude Code newer than the round trip was run on
    newer = path.with_name("newer.jsonl")
    newer.write_bytes(path.read_bytes().replace(b'"version":"2.1.328"', b'"version":"2.1.400"'))
    os.utime(newer, (time.time() - 3600, time.time() - 3600))
    listing.append(newer.name)
    code, out, err = run_cli("compact", newer, "--write")
    assert code == 2 and "2.1.400" in err and "--allow-newer" in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in path.parent.iterdir()) == listing
    # a session still being written: it ends mid-turn and changed a moment ago
    live = write_jsonl(
        tmp_path / "live" / "live.jsonl",
        [
            user("u1", None, "go", sec=0, version="2.1.328"),
            assistant("a1", "u1", [tool_use("t1", "Bash")], sec=1, version="2.1.328"),
            user("u2", "a1", [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}], sec=2, version="2.1.328"),
            assistant("a2", "u2", [tool_use("t2", "Bash")], sec=3, version="2.1.328"),
        ],
    )
    code, out, err = run_cli("compact", live, "--strategy", "full", "--write")
    assert code == 2 and "still being written" in err and "--allow-live" in err
    assert sorted(p.name for p in live.parent.iterdir()) == ["live.jsonl"]
    os.utime(live, (time.time() - 600, time.time() - 600))
    code, out, err = run_cli("compact", live, "--strategy", "full", "--write")
    assert code == 0, err


def test_exact_counts_the_whole_request_after_asking(tmp_path, monkeypatch):
    from fake_anthropic import FakeAnthropic

    path = golden_transcript(expand_golden("manual_compact_resume", tmp_path))
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        code, out, err = run_cli("compact", path, "--exact")  # not a terminal, no --yes: nothing is sent
        assert code == 2 and "nothing was sent" in err and not fake.requests
        code, out, err = run_cli("compact", path, "--exact", "--yes", "--json")
        assert code == 0, err
        [req] = [r for r in fake.requests if r["path"].startswith("/v1/messages/count_tokens")]
        d = json.loads(out)
        assert canonical(req["body"]["messages"]) == canonical(d["api_messages"])
        assert req["body"]["tools"] and req["body"]["system"]
        assert d["tokens_after_exact"] > 0


def test_save_refuses_a_session_changed_since_it_was_read(tmp_path):
    path = golden_transcript(expand_golden("manual_compact_resume", tmp_path))
    os.utime(path, (time.time() - 3600, time.time() - 3600))
    s = Session.load(path)
    res = compact(s, "compact")
    with open(path, "ab") as f:
        f.write(b'{"type":"queue-operation","operation":"enqueue"}\n')
    with pytest.raises(SaveError, match="still being written"):
        save(s, res)
    assert Conversation(s.records).chain


def test_a_kept_tail_that_ends_in_an_informational_line_saves_and_is_on_the_resumed_chain(tmp_path):
    """A 2.1.328 REPL session (generated run gen_repl_1011) ending in a refused request and an informational line
    below it (a rewind pick that failed): a reactive compaction keeps the line as its tail's last record, and the
    one record after the summary (the system prompt's note, not sent) is relinked after it, so the line sits between
    the last message and the record `--resume` continues from. The save's check missed it and refused the save;
    the binary resumed the saved session as previewed (checked with the harness)."""
    import gzip

    path = tmp_path / "p" / "5aba572d-f255-4f90-926b-19c653f8fa36.jsonl"
    path.parent.mkdir()
    path.write_bytes(gzip.decompress((DATA / "repl_informational_tail.jsonl.gz").read_bytes()))
    os.utime(path, (time.time() - 3600, time.time() - 3600))
    before = sha256(path)
    s = Session.load(path)
    res = compact(s, CompactRequest("reactive", refused_at=7_918))
    assert s.body(s.conversation.by_uuid[res.kept_uuids[-1]]).get("subtype") == "informational"
    out = save(s, res)  # refused before: "1 record(s) expected on the resumed chain are missing"
    back = Session.load(out.path)
    conv = back.conversation
    on_chain = {back.records[i].uuid for i in conv.chain}
    i = conv.trailing_leaf
    while i is not None and i != conv.leaf:
        on_chain.add(back.records[i].uuid)
        i = conv.parent.get(i)
    assert set(res.kept_uuids) <= on_chain
    assert sha256(path) == before


class _Counter:
    """A token counter that records what it was asked, instead of the network."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def count_request(self, system, tools, messages, model=None):
        self.calls.append(("request", (system, tools, messages, model)))
        return 1234

    def count_messages(self, items):
        self.calls.append(("messages", items))
        return 1000


def test_one_exact_count_plan_for_both_kinds_of_session(tmp_path):
    """2.1.3xx with a recorded request shape: the whole request a resume sends is counted, and no overhead is
    calibrated; an older session: its messages are counted and the calibrated overhead added."""
    from inspector.compact.exact import plan_exact_count
    from inspector.tokens.thresholds import Settings

    s = Session.load(golden_transcript(expand_golden("manual_compact_resume", tmp_path)))
    res = compact(s, "compact")
    asked: list[int] = []
    plan = plan_exact_count(s, res, Settings(), lambda: asked.append(1) or 99.0)
    assert plan.whole_request and "system prompt and tools" in plan.describe()
    c = _Counter()
    n = plan.count(c)
    [(kind, (system, tools, messages, model))] = c.calls
    assert kind == "request" and system and tools and model == s.main_model
    assert canonical(messages) == canonical([dict(m) for m in res.api_messages])
    assert (n.tokens, n.estimated, n.whole_request, asked) == (1234, res.tokens_after, True, [])
    assert "whole request" in n.describe()

    old = Session.load(sample_session("Fix forecast"))
    res = compact(old, "full")
    plan = plan_exact_count(old, res, Settings(), lambda: asked.append(1) or 99.4)
    assert not plan.whole_request and f"the {len(res.view)} messages" in plan.describe()
    c = _Counter()
    n = plan.count(c)
    [(kind, items)] = c.calls
    assert kind == "messages" and [r for r, _ in items] == [v.role for v in res.view]
    assert (n.tokens, n.whole_request, asked) == (1099, False, [1])
    assert "fixed overhead" in n.describe()
    # without the caller's overhead the plan calibrates one on the session itself
    plan = plan_exact_count(old, res, Settings())
    assert plan.count(_Counter()).tokens > 1000


def _reads_session(tmp_path: Path, n: int) -> Path:
    """A 2.1.332 session that reads n files, each once, and never changes one."""
    from builders import tool_result

    recs: list[dict] = [user("u0", None, "read them", sec=0, version="2.1.332")]
    parent = "u0"
    for k in range(1, n + 1):
        path = f"/w/proj/f{k}.txt"
        text = f"file {k}\n"
        a = assistant(f"a{k}", parent, [tool_use(f"t{k}", "Read", {"file_path": path})], sec=2 * k, version="2.1.332")
        r = tool_result(
            f"r{k}",
            f"a{k}",
            f"t{k}",
            f"1\t{text}",
            sec=2 * k + 1,
            version="2.1.332",
            toolUseResult={
                "type": "text",
                "file": {"filePath": path, "content": text, "numLines": 1, "startLine": 1, "totalLines": 1},
            },
        )
        recs += [a, r]
        parent = f"r{k}"
    recs.append(assistant("end", parent, sec=99, version="2.1.332"))
    p = tmp_path / "reads.jsonl"
    write_jsonl(p, recs)
    return p


def _reattached(res) -> list[str]:
    names = []
    for r in res.new_records:
        att = r.get("attachment") if isinstance(r, dict) else None
        if isinstance(att, dict) and att.get("type") == "file":
            names.append(att["filename"].rsplit("/", 1)[-1])
    return names


def test_files_only_read_are_re_attached_by_their_times_where_known_and_the_preview_says_when_not(tmp_path):
    """Claude Code orders the files it re-attaches by the times it holds, and for a file only read that is the file's
    modification time, which no transcript records (2.1.332 seed 43126: it re-attached f6, the newest file, where
    inspector took f2, the most recently read). With the times given (the harness knows the files it made), the
    newest five; without them, the most recently read five, and a note that says the choice is not known."""
    s = Session.load(_reads_session(tmp_path, 7))
    res = compact(s, CompactRequest("compact", trigger="manual"), summarizer=FakeSummary())
    assert _reattached(res) == ["f7.txt", "f6.txt", "f5.txt", "f4.txt", "f3.txt"]
    assert any("modification times, which the transcript does not hold" in n and "f7.txt, f6.txt" in n for n in res.notes)
    # made in another order than read: f2 newest, then f1, f7... (the times the caller gives win)
    times = {f"/w/proj/f{k}.txt": t for k, t in zip((2, 1, 7, 3, 6, 4, 5), range(100, 0, -10))}
    res = compact(s, CompactRequest("compact", trigger="manual", file_times=times), summarizer=FakeSummary())
    assert _reattached(res) == ["f2.txt", "f1.txt", "f7.txt", "f3.txt", "f6.txt"]
    assert not any("modification times" in n for n in res.notes)
