"""Search: what a person reads is found, the JSON around it is not; persisted outputs and subagents included."""

from __future__ import annotations

import os

import orjson
from builders import assistant, tool_result, tool_use, user
from helpers import jsonl, sha256, write_jsonl
from helpers import run_cli as run

from inspector.library.search import Query, search_file
from inspector.transcript.session import Session
from inspector.view import search_records


def project(tmp_path):
    """One session with a prompt, a tool call, a result, a reply, a persisted output and a subagent."""
    proj = tmp_path / "projects" / "-w-proj"
    recs = [
        user("u1", None, 'Please say "hi"\nthen fix the Parser', sec=0),
        assistant(
            "a1",
            "u1",
            [
                {"type": "thinking", "thinking": "The parser trips on tabs.", "signature": "c2lnbmF0dXJl"},
                tool_use("t1", "Bash", {"command": "pytest -q tests/test_parser.py"}),
            ],
            sec=1,
        ),
        tool_result("r1", "a1", "t1", "1 failed: ParserError at line 3", sec=2),
        assistant("a2", "r1", [tool_use("t2", "Bash", {"command": "cat big.log"})], sec=3),
        tool_result(
            "r2",
            "a2",
            "t2",
            "<persisted-output>\nOutput too large (1.2MB). Full output saved to: "
            "/home/x/.claude/projects/-w-proj/S/tool-results/t2.txt\n\nPreview (first 2KB):\nstart of log\n...\n"
            "</persisted-output>",
            sec=4,
        ),
        assistant("a3", "r2", [{"type": "text", "text": "Fixed: the tokenizer now skips tabs."}], sec=5),
        {
            "type": "progress",
            "uuid": "p1",
            "parentUuid": "a3",
            "sessionId": "SESSIONX",
            "timestamp": "2026-04-02T09:00:06.000Z",
            "data": {"type": "hook_progress", "hookName": "lint-on-save"},
            "toolUseID": "t2",
            "parentToolUseID": "t2",
        },
        {"type": "custom-title", "customTitle": "Parser rescue", "sessionId": "SESSIONX"},
        {
            "type": "attachment",
            "uuid": "at1",
            "parentUuid": "p1",
            "sessionId": "SESSIONX",
            "attachment": {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUg"},
            },
        },
        {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "b1",
            "parentUuid": None,
            "logicalParentUuid": "at1",
            "level": "info",
            "content": "Conversation compacted",
            "trigger": "auto",
            "compactMetadata": {"trigger": "auto", "preTokens": 167_000},
        },
    ]
    path = write_jsonl(proj / "S.jsonl", recs)
    tr = proj / "S" / "tool-results"
    tr.mkdir(parents=True)
    (tr / "t2.txt").write_text("start of log\n" + "noise\n" * 1000 + "deep in the log: SegmentationFault here\n")
    write_jsonl(
        proj / "S" / "subagents" / "agent-a1b2.jsonl",
        [
            user("s1", None, "look for the flaky tabs test", isSidechain=True),
            assistant("s2", "s1", [{"type": "text", "text": "Found it in test_tabs.py"}], isSidechain=True),
        ],
    )
    write_jsonl(
        proj / "S" / "subagents" / "workflows" / "wf_1" / "agent-w1.jsonl",  # the workflow layout
        [user("w1", None, "a workflow step about quokkas", isSidechain=True)],
    )
    return proj, path


def test_finds_what_was_said_run_and_returned(tmp_path):
    proj, path = project(tmp_path)
    q = Query("parser")
    where = {(h.line, h.where) for h in search_file(path, q)}
    assert where == {(1, "prompt"), (2, "thinking"), (2, "tool input (Bash)"), (3, "tool result"), (8, "custom-title")}
    assert [(h.line, h.where) for h in search_file(path, Query("lint-on-save"))] == [(7, "progress")]
    assert [(h.line, h.where) for h in search_file(path, Query("conversation compacted"))] == [(10, "system")]
    assert {h.where for h in search_file(path, Query("SEGMENTATIONFAULT"))} == {"persisted output"}
    deep = search_file(path, Query("segmentationfault"))[0]
    assert deep.line == 5 and deep.file == "t2.txt" and "deep in the log" in deep.snippet


def test_the_json_around_the_text_is_not_searched(tmp_path):
    _proj, path = project(tmp_path)
    for needle in (
        "is_error",
        "tool_use_id",
        "u1",
        "2026-04-02",
        "signature",
        "c2lnbmF0dXJl",
        "input_tokens",
        "sessionId",
        "sessionx",
        "hook_progress",
        "iVBORw0KGgo",
        "image/png",
        "parentToolUseID",
        "compact_boundary",
        "167000",
        "info",
    ):
        assert search_file(path, Query(needle)) == [], needle


def test_quotes_and_newlines_are_found_through_their_json_escapes(tmp_path):
    _proj, path = project(tmp_path)
    hits = search_file(path, Query('say "hi"\nthen'))
    assert [(h.line, h.where) for h in hits] == [(1, "prompt")]


def test_search_command(tmp_path):
    proj, path = project(tmp_path)
    before = sha256(path)
    code, out, err = run("search", "tabs", str(tmp_path / "projects"))
    assert code == 0, err
    assert "line 2" in out and "thinking" in out and "subagent agent-a1b2.jsonl" in out and "Found it in test_tabs.py" in out
    assert "match(es) in 2 transcript(s)." in out and out.rstrip().endswith("open FILE in the app and press /).")
    code, out, _ = run("search", "quokkas", str(tmp_path / "projects"), "--json")
    assert code == 0 and [h["path"].endswith("wf_1/agent-w1.jsonl") for h in jsonl(out)] == [True]
    code, out, _ = run("search", "tabs", str(proj), "--no-subagents", "--json")
    hits = jsonl(out)
    assert code == 0 and {h["where"] for h in hits} == {"thinking", "reply"} and all(h["path"] == str(path) for h in hits)
    assert set(hits[0]) == {"path", "line", "offset", "type", "where", "count", "timestamp", "file", "snippet"}
    code, out, _ = run("search", "tabs", str(path), "--limit", "1", "--json")
    assert len(jsonl(out)) == 1
    code, out, _ = run("search", "segmentationfault", str(path), "--no-persisted")
    assert code == 1 and "No match" in out
    code, _out, err = run("search", "", str(path))
    assert code == 2 and "nothing to search for" in err
    assert sha256(path) == before


def test_persisted_files_are_read_only_from_the_sessions_own_folder(tmp_path):
    proj, path = project(tmp_path)
    outside = tmp_path / "secret.txt"
    outside.write_text("TOPSECRET")
    os.symlink(outside, proj / "S" / "tool-results" / "t9.txt")
    (proj / "S" / "tool-results" / "nested").mkdir()
    (proj / "S" / "tool-results" / "nested" / "t8.txt").write_text("TOPSECRET")
    assert search_file(path, Query("topsecret")) == []


def test_bad_lines_are_skipped_and_escapes_printed_literally(tmp_path):
    path = write_jsonl(
        tmp_path / "p" / "s.jsonl",
        [user("u1", None, "alarm \x1b[31mRED\x07 here"), b"{not json alarm", user("u2", "u1", "second alarm")],
    )
    code, out, _ = run("search", "alarm", str(path))
    assert code == 0 and "\x1b" not in out and "alarm RED\\x07 here" in out  # colour dropped, the bell shown
    assert "line 1" in out and "line 3" in out and "line 2 " not in out


def test_session_search_in_the_app_finds_records_by_their_persisted_output(tmp_path):
    _proj, path = project(tmp_path)
    s = Session.load(path)
    assert [s.records[i].uuid for i in search_records(s, "segmentationfault")] == ["r2"]
    assert [s.records[i].uuid for i in search_records(s, "parser")] == ["u1", "a1", "r1", None]  # the last: the custom title
    assert search_records(s, "") == []


def test_block_scan_gives_the_same_lines_as_reading_line_by_line(tmp_path, monkeypatch):
    import inspector.library.search as search

    recs = []
    for k in range(300):
        text = f"note {k} " + ("needle " if k % 7 == 0 else "") + "x" * (k * 13 % 300)
        recs.append(user(f"u{k}", f"u{k - 1}" if k else None, text))
    recs.insert(50, user("long", "u49", "a needle in a very long line " + "y" * 5000))
    path = write_jsonl(tmp_path / "p" / "s.jsonl", recs)
    with open(path, "ab") as f:  # a last line without its newline
        f.write(orjson.dumps(user("tail", "u299", "needle at the end")))
    expect = [n for n, line in enumerate(path.read_bytes().split(b"\n"), 1) if b"needle" in line]
    for block in (64, 1000, 4096, 8 << 20):
        monkeypatch.setattr(search, "BLOCK", block)
        hits = search.search_file(path, Query("NEEDLE"))
        assert [h.line for h in hits] == expect, block
        raw = path.read_bytes()
        assert all(raw[h.offset :].startswith(b'{"type":"user"') for h in hits)


def test_an_undecodable_query_finds_the_replacement_character(tmp_path):
    path = write_jsonl(tmp_path / "p" / "s.jsonl", [user("u1", None, "plain")])
    path.write_bytes(path.read_bytes().replace(b"plain", b"pl\xffain"))  # invalid UTF-8: read as U+FFFD
    code, out, err = run("search", "pl\udcffain", str(path))  # what an undecodable byte on a command line becomes
    assert code == 0 and "line 1" in out, err
    code, out, _ = run("search", "\udcff\udcfe", str(path))
    assert code == 1 and "No match" in out


def test_the_query_is_escaped_as_json_writes_it():
    """The byte test looks for the query as a JSON string holds it: escaped as orjson (and JSON.stringify) escape it,
    for every character below U+0800 and some beyond (a search no longer imports orjson to know it)."""
    import orjson

    from inspector.library.search import json_string_body

    chars = [chr(c) for c in range(0x800)] + ["\u2028", "\u2029", "\ufeff", "\uffff", "😀", "\U0010ffff"]
    for c in chars:
        assert json_string_body(c) == orjson.dumps(c)[1:-1].decode(), repr(c)
    mixed = 'say "hi"\\n\x00\x1f\x7f\ttab é 😀 \u2028'
    assert json_string_body(mixed) == orjson.dumps(mixed)[1:-1].decode()
