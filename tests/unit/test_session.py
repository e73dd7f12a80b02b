"""Things beside the transcript: persisted outputs, subagents, session memory, titles (§1.3, §5, §7)."""

from __future__ import annotations

import os

import orjson
import pytest
from builders import assistant, system, tool_result, tool_use, user
from helpers import write_jsonl

from inspector.samplegen import persisted_block
from inspector.transcript.session import Session, split_memory


def make(tmp_path, recs, sid="11111111-1111-4111-8111-111111111111"):
    proj = tmp_path / "proj"
    path = write_jsonl(proj / f"{sid}.jsonl", recs)
    return path, proj / sid


def test_persisted_marker_shape_resolves_inside_session_folder(tmp_path):
    full = "line\n" * 20_000
    marker = persisted_block("/Users/someone/.claude/projects/-x/abc/tool-results/toolu_1.txt", full)
    path, sdir = make(
        tmp_path,
        [user("u1", None), assistant("a1", "u1", [tool_use("toolu_1", "Bash")]), tool_result("r1", "a1", "toolu_1", marker)],
    )
    (sdir / "tool-results").mkdir(parents=True)
    (sdir / "tool-results" / "toolu_1.txt").write_text(full)
    s = Session.load(path)
    [po] = s.persisted_outputs
    assert po.shape == "marker" and po.marker.size_text == "97.7KB"
    assert po.file == sdir / "tool-results" / "toolu_1.txt" and po.file_size == len(full)
    text, size = s.read_persisted(po, limit=100)
    assert size == len(full) and text == full[:100]


def test_inline_shape_with_file_beside(tmp_path):
    full = "x" * 60_000
    path, sdir = make(
        tmp_path, [user("u1", None), assistant("a1", "u1", [tool_use("toolu_2")]), tool_result("r1", "a1", "toolu_2", full)]
    )
    (sdir / "tool-results").mkdir(parents=True)
    (sdir / "tool-results" / "toolu_2.txt").write_text(full)
    s = Session.load(path)
    [po] = s.persisted_outputs
    assert po.shape == "inline" and po.record == 2 and po.file_size == 60_000


@pytest.mark.parametrize("recorded", ["../../../../etc/passwd", "/etc/passwd", "..", "tool-results/../../secret.txt"])
def test_paths_in_transcript_never_escape_the_session_folder(tmp_path, recorded):
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    marker = (
        "<persisted-output>\nOutput too large (2KB). Full output saved to: "
        + recorded
        + "\n\nPreview (first 2KB):\nabc\n</persisted-output>"
    )
    path, sdir = make(
        tmp_path, [user("u1", None), assistant("a1", "u1", [tool_use("toolu_3")]), tool_result("r1", "a1", "toolu_3", marker)]
    )
    (sdir / "tool-results").mkdir(parents=True)
    s = Session.load(path)
    [po] = s.persisted_outputs
    assert po.file is None
    with pytest.raises(FileNotFoundError):
        s.read_persisted(po)


def test_symlink_in_tool_results_pointing_outside_is_not_followed(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    marker = persisted_block("/x/tool-results/toolu_4.txt", "y" * 5000)
    path, sdir = make(
        tmp_path, [user("u1", None), assistant("a1", "u1", [tool_use("toolu_4")]), tool_result("r1", "a1", "toolu_4", marker)]
    )
    (sdir / "tool-results").mkdir(parents=True)
    os.symlink(secret, sdir / "tool-results" / "toolu_4.txt")
    s = Session.load(path)
    assert s.persisted_outputs[0].file is None
    assert s.tool_result_files() == []


def test_content_replacement_is_applied(tmp_path):
    recs = [
        user("u1", None),
        assistant("a1", "u1", [tool_use("toolu_5", "WebFetch")]),
        tool_result("r1", "a1", "toolu_5", "huge page"),
        {
            "type": "content-replacement",
            "sessionId": "S",
            "replacements": [
                {"kind": "tool-result", "toolUseId": "toolu_5", "replacement": "<persisted-output>…</persisted-output>"}
            ],
        },
    ]
    path, _ = make(tmp_path, recs)
    s = Session.load(path)
    assert s.tool_result_content(2) == "<persisted-output>…</persisted-output>"


def test_session_memory_sections(tmp_path):
    path, sdir = make(tmp_path, [user("u1", None)])
    (sdir / "session-memory").mkdir(parents=True)
    (sdir / "session-memory" / "summary.md").write_text(
        "# Session Title\n_A short title_\n\nFix bug\n\n# Current State\n_What now_\n\nTesting\nmore\n"
    )
    secs = Session.load(path).memory()
    assert [(x.title, x.description, x.body) for x in secs] == [
        ("Session Title", "A short title", "Fix bug"),
        ("Current State", "What now", "Testing\nmore"),
    ]


def test_split_memory_of_sample_has_ten_sections():
    from inspector.samplegen import MEMORY_MD

    assert [s.title for s in split_memory(MEMORY_MD)] == [
        "Session Title",
        "Current State",
        "Task specification",
        "Files and Functions",
        "Workflow",
        "Errors & Corrections",
        "Codebase and System Documentation",
        "Learnings",
        "Key results",
        "Worklog",
    ]


def test_subagent_layouts_are_linked_to_their_calls(tmp_path):
    sid = "22222222-2222-4222-8222-222222222222"
    recs = [
        user("u1", None, sessionId=sid),
        assistant("a1", "u1", [tool_use("toolu_A", "Agent", {"prompt": "look"})], sessionId=sid),
        tool_result(
            "r1", "a1", "toolu_A", "done", toolUseResult={"status": "completed", "agentId": "a0123456789abcdef"}, sessionId=sid
        ),
        {
            "type": "progress",
            "uuid": "p1",
            "parentUuid": "r1",
            "sessionId": sid,
            "parentToolUseID": "toolu_B",
            "data": {"type": "agent_progress", "agentId": "aprog", "message": {}},
        },
    ]
    path, sdir = make(tmp_path, recs, sid)
    (sdir / "subagents").mkdir(parents=True)
    write_jsonl(
        sdir / "subagents" / "agent-a0123456789abcdef.jsonl",
        [user("s1", None, "look", isSidechain=True, agentId="a0123456789abcdef")],
    )
    (sdir / "subagents" / "agent-a0123456789abcdef.meta.json").write_bytes(orjson.dumps({"agentType": "Explore"}))
    write_jsonl(tmp_path / "proj" / "agent-flat1.jsonl", [user("f1", None, "x", sessionId=sid, isSidechain=True)])
    write_jsonl(tmp_path / "proj" / "agent-other.jsonl", [user("f2", None, "x", sessionId="someone-else", isSidechain=True)])
    s = Session.load(path)
    got = {a.agent_id: (a.layout, a.spawned_by, a.meta.get("agentType")) for a in s.subagents}
    assert got == {
        "a0123456789abcdef": ("subagents-dir", "toolu_A", "Explore"),
        "flat1": ("flat", None, None),
        "aprog": ("progress", "toolu_B", None),
    }


def test_acompact_transcript_is_linked_to_its_boundary(tmp_path):
    sid = "33333333-3333-4333-8333-333333333333"
    recs = [
        user("u1", None),
        assistant("a1", "u1"),
        system("b1", None, "compact_boundary", logicalParentUuid="a1", compactMetadata={"trigger": "auto", "preTokens": 168000}),
        user("sum", "b1", "summary", isCompactSummary=True),
    ]
    path, sdir = make(tmp_path, recs, sid)
    (sdir / "subagents").mkdir(parents=True)
    write_jsonl(
        sdir / "subagents" / "agent-acompact-0011223344556677.jsonl",
        [
            user("q", "a1", "Your task is to create a detailed summary", isSidechain=True),
            assistant("z", "q", [{"type": "text", "text": "<analysis>..</analysis><summary>..</summary>"}], isSidechain=True),
        ],
    )
    s = Session.load(path)
    [a] = s.subagents
    assert a.kind == "compaction" and a.boundary == 2


def test_title_precedence(tmp_path):
    base = [
        user("u1", None, "<command-name>/model</command-name>"),
        user("u2", "u1", "Caveat: x", isMeta=True),
        user("u3", "u2", "[Request interrupted by user]"),
        user("u4", "u3", "  fix the\nflaky test  "),
    ]
    path, _ = make(tmp_path, base)
    assert Session.load(path).title == "fix the flaky test"
    path, _ = make(tmp_path, base + [{"type": "summary", "summary": "Legacy", "leafUuid": "u4"}])
    assert Session.load(path).title == "Legacy"
    path, _ = make(
        tmp_path, base + [{"type": "summary", "summary": "Legacy", "leafUuid": "u4"}, {"type": "ai-title", "aiTitle": "AI"}]
    )
    assert Session.load(path).title == "AI"
    path, _ = make(tmp_path, base + [{"type": "custom-title", "customTitle": "Mine"}, {"type": "ai-title", "aiTitle": "AI"}])
    assert Session.load(path).title == "Mine"


def test_session_update_sees_appended_turns(tmp_path):
    path, _ = make(tmp_path, [user("u1", None, sec=0), assistant("a1", "u1", sec=1)])
    s = Session.load(path)
    assert s.conversation.leaf_uuid == "a1"
    with open(path, "ab") as f:
        f.write(
            orjson.dumps(user("u2", "a1", sec=2))
            + b"\n"
            + orjson.dumps(assistant("a2", "u2", sec=3, usage=(1, 1, 90000, 9)))
            + b"\n"
        )
    assert s.update() == 2
    assert s.conversation.leaf_uuid == "a2" and s.last_context() == 90011


def test_in_file_sidechain_linked_to_task_call_by_prompt(tmp_path):
    recs = [
        user("u1", None, sec=0),
        assistant("a1", "u1", [tool_use("toolu_T", "Task", {"prompt": "find the prompt config"})], sec=1),
        user("s1", None, "find the prompt config", sec=2, isSidechain=True),
        assistant("s2", "s1", sec=3, isSidechain=True),
        tool_result("r1", "a1", "toolu_T", "it is in zsh/prompt.zsh", sec=4, toolUseResult={"content": "raw"}),
    ]
    path, _ = make(tmp_path, recs)
    s = Session.load(path)
    [a] = s.subagents
    assert (a.layout, a.spawned_by) == ("in-file", "toolu_T")
    assert s.tool_use_result(4) == {"content": "raw"}


def test_quick_info_reads_head_and_tail_only(tmp_path):
    from inspector.transcript.discovery import quick_info

    filler = [user(f"m{i}", None, "x" * 2000, sec=i % 60) for i in range(200)]  # ~400 KB in the middle
    recs = [user("u1", None, "first real prompt", sec=0)] + filler + [{"type": "ai-title", "aiTitle": "Generated"}]
    path, _ = make(tmp_path, recs)
    info = quick_info(path, window=8192)
    assert info.first_prompt == "first real prompt" and info.title == "Generated"
    assert info.cwd == "/w/proj" and info.session_id == "S" and info.size == path.stat().st_size
