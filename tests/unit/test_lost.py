"""What a compaction lost (issue 26.3): the summarized records' instructions, files, commands, errors and decisions,
each marked 'in summary', 'kept' or 'dropped', with where it is; `inspector tokens --lost` and its JSON."""

from __future__ import annotations

import json

from builders import assistant, system, tool_result, tool_use, user
from helpers import REAL_PROJECTS, jsonl, run_cli, sha256, write_jsonl

from inspector.tokens.lost import losses, mentioned, typed, words
from inspector.transcript.session import Session

SUMMARY = (
    "This session is being continued from a previous conversation. Summary: the user asked to port the weather "
    "client; src/app.py was read and its retry loop fixed; pytest was run."
)


def _session(tmp_path, *, keep_tail=False):
    recs = [
        user("u1", None, "Port the weather client, and always use tabs in the Makefile", sec=1),
        assistant("a1", "u1", [tool_use("t1", "Read", {"file_path": "/w/proj/src/app.py"})], sec=2),
        tool_result("r1", "a1", "t1", "def main(): ...", sec=3),
        assistant(
            "a2",
            "r1",
            [tool_use("t2", "Edit", {"file_path": "/w/proj/src/storage.py", "old_string": "a", "new_string": "b"})],
            sec=4,
        ),
        tool_result("r2", "a2", "t2", "ok", sec=5),
        assistant("a3", "r2", [tool_use("t3", "Bash", {"command": "make lint-strict"})], sec=6),
        tool_result("r3", "a3", "t3", "Exit code 2\nmake: *** No rule to make target lint-strict", sec=7, is_error=True),
        assistant(
            "a4", "r3", [{"type": "text", "text": "I'll switch the cache to sqlite instead of the flat JSON files."}], sec=8
        ),
        user("u2", "a4", "<task-notification><task-id>x</task-id></task-notification>", sec=9),
        user("u3", "u2", "<command-name>/review</command-name><command-args>src</command-args>", sec=10),
        assistant("a5", "u3", [{"type": "text", "text": "Reviewed."}], sec=11),
    ]
    meta = {"trigger": "auto", "preTokens": 160_000}
    if keep_tail:
        meta["preservedSegment"] = {"headUuid": "u3", "anchorUuid": "s1", "tailUuid": "a5"}
    recs.append(system("b1", None, "compact_boundary", sec=12, logicalParentUuid="a5", compactMetadata=meta))
    recs.append(user("s1", "b1", SUMMARY, sec=13, isCompactSummary=True))
    recs.append(user("u4", "a5" if keep_tail else "s1", "go on", sec=14))
    # the tool_result builder marks errors through its kw: make sure the error flag is on the block too
    for r in recs:
        if r.get("uuid") == "r3":
            r["message"]["content"][0]["is_error"] = True
    return write_jsonl(tmp_path / "proj" / "s.jsonl", recs)


def _by_text(loss):
    return {(i.kind, i.text): i for i in loss.items}


def test_each_item_is_marked_in_summary_kept_or_dropped_with_where_it_is(tmp_path):
    path = _session(tmp_path)
    s = Session.load(path)
    [loss] = losses(s)
    items = _by_text(loss)
    assert items[("file_read", "/w/proj/src/app.py")].status == "in summary"  # its path is in the summary
    edited = items[("file_edited", "/w/proj/src/storage.py")]
    assert edited.status == "dropped" and edited.tool == "Edit" and edited.uuid == "a2"
    assert items[("command", "make lint-strict")].status == "dropped"
    [err] = [i for i in loss.items if i.kind == "error"]
    assert err.text.startswith("make lint-strict -> Exit code 2") and err.status == "dropped" and err.uuid == "r3"
    [decision] = [i for i in loss.items if i.kind == "decision"]
    assert "sqlite" in decision.text and decision.status == "dropped"
    instructions = [i for i in loss.items if i.kind == "instruction"]
    # the task notification is Claude Code's, not the person's; the slash command as it was typed
    assert [i.text for i in instructions] == [
        "Port the weather client, and always use tabs in the Makefile",
        "/review src",
    ]
    # "port the weather client" is in the summary, "always use tabs in the Makefile" is not: under 60% of its words
    assert instructions[0].status == "dropped" and instructions[0].line == 1
    assert loss.summarized == 11 and loss.kept == 0 and loss.summary_uuid == "s1"
    s.close()


def test_what_a_compaction_kept_verbatim_is_not_lost(tmp_path):
    path = _session(tmp_path, keep_tail=True)
    s = Session.load(path)
    [loss] = losses(s)
    assert loss.kept == 2
    texts = [i.text for i in loss.items]
    assert "/review src" not in texts  # u3 was kept: it is still in view, not summarized
    s.close()


def test_tokens_lost_prints_what_was_dropped_and_json_has_every_item(tmp_path):
    path = _session(tmp_path)
    before = sha256(path)
    code, out, err = run_cli("tokens", path, "--lost")
    assert code == 0, err
    assert "Compaction 1 at line 12" in out and "L4 " in out and "/w/proj/src/storage.py" in out
    assert "make lint-strict -> Exit code 2" in out and "/w/proj/src/app.py" not in out  # mentioned: not listed
    code, out, err = run_cli("tokens", path, "--lost", "--json")
    [d] = jsonl(out)
    [loss] = d["lost"]
    statuses = {(i["kind"], i["text"]): i["status"] for i in loss["items"]}
    assert statuses[("file_read", "/w/proj/src/app.py")] == "in summary"
    assert loss["counts"]["file_edited"] == {"in summary": 0, "kept": 0, "dropped": 1}
    assert sha256(path) == before


def test_the_mention_rule():
    summary = "the retry loop in src/app.py was fixed; pytest passes".lower()
    ws = set(words(summary))
    assert mentioned("file_read", "/x/src/app.py", summary, ws)
    assert not mentioned("file_read", "/x/src/other.py", summary, ws)
    assert mentioned("instruction", "fix the retry loop", summary, ws)
    assert not mentioned("instruction", "never touch the database migrations", summary, ws)
    assert typed("<bash-input>make test</bash-input>") == "!make test"
    assert typed("<local-command-stdout>ok</local-command-stdout>") is None


def test_realdata_compactions_are_accounted_for():
    """Every compaction of ../shared/realdata: each item has one status and a line in the file, and the summary is
    found for each."""
    import pytest

    if not REAL_PROJECTS.is_dir():
        pytest.skip("../shared/realdata is absent")
    seen = 0
    for p in sorted(REAL_PROJECTS.rglob("*.jsonl")):
        if "subagents" in p.parts:
            continue
        s = Session.load(p)
        lines = {r.line for r in s.records}
        for loss in losses(s):
            seen += 1
            assert loss.summary_uuid is not None, p
            assert loss.items and all(i.status in ("in summary", "kept", "dropped") and i.line in lines for i in loss.items)
            json.dumps(loss.as_dict())
        s.close()
    assert seen >= 10
