"""The line index: lenient decoding, problems with line numbers, lazy bodies, live appends."""

from __future__ import annotations

import os

import orjson
import pytest
from builders import assistant, user
from helpers import sha256, write_jsonl

from inspector.transcript.index import INCOMPLETE_TAIL, FileChanged, Transcript
from inspector.transcript.session import Session


def test_empty_file_is_a_valid_session(tmp_path):
    p = tmp_path / "e.jsonl"
    p.write_bytes(b"")
    t = Transcript.load(p)
    assert t.records == [] and t.problems == [] and t.complete


def test_summary_only_file(tmp_path):
    p = write_jsonl(tmp_path / "s.jsonl", [{"type": "summary", "summary": "Old title", "leafUuid": "x"}])
    t = Transcript.load(p)
    assert [r.type for r in t.records] == ["summary"]
    assert t.metadata["summary"]["summary"] == "Old title"


def test_malformed_lines_are_reported_and_skipped(tmp_path):
    good = orjson.dumps(user("u1", None))
    lines = [good, b"{not json", b"[1, 2, 3]", b"", b"   ", b'"a string"', orjson.dumps(assistant("a1", "u1"))]
    p = tmp_path / "m.jsonl"
    p.write_bytes(b"\n".join(lines) + b"\n")
    t = Transcript.load(p)
    assert [r.uuid for r in t.records] == ["u1", "a1"]
    assert [(pr.line, pr.skipped) for pr in t.problems] == [(2, True), (3, True), (6, True)]
    assert t.problems[0].offset == len(good) + 1
    assert "not a JSON object" in t.problems[1].reason
    assert t.records[1].line == 7


def test_invalid_utf8_and_lone_surrogates_never_crash(tmp_path):
    p = tmp_path / "u.jsonl"
    bad_utf8 = b'{"type":"user","uuid":"u1","message":{"role":"user","content":"caf\xe9 \xff"}}'
    surrogate = b'{"type":"user","uuid":"u2","parentUuid":"u1","message":{"role":"user","content":"x\\ud800y"}}'
    p.write_bytes(bad_utf8 + b"\n" + surrogate + b"\n")
    t = Transcript.load(p)
    assert [r.uuid for r in t.records] == ["u1", "u2"]
    assert all(not pr.skipped for pr in t.problems) and len(t.problems) == 2
    body = t.body(t.records[1])
    assert body["message"]["content"] == "x\ufffdy"
    body["message"]["content"].encode("utf-8")  # printable and encodable


def test_unknown_types_subtypes_and_fields_are_kept(tmp_path):
    recs = [
        user("u1", None),
        {"type": "hologram", "uuid": "h1", "parentUuid": "u1", "timestamp": "2026-04-02T09:00:01.000Z", "frames": 3},
        {"type": "system", "subtype": "from_the_future", "uuid": "s1", "parentUuid": "h1", "wormhole": True},
        {"type": "quantum-bookmark", "sessionId": "S", "label": "x"},
        {"no_type_at_all": 1},
    ]
    t = Transcript.load(write_jsonl(tmp_path / "f.jsonl", recs))
    assert [r.type for r in t.records] == ["user", "hologram", "system", "quantum-bookmark", ""]
    assert t.records[1].uuid == "h1" and t.records[2].subtype == "from_the_future"
    assert t.body(t.records[1])["frames"] == 3  # the raw JSON is there on demand
    assert t.problems == []


def test_bodies_are_read_lazily_by_offset(tmp_path):
    big = "x" * 200_000
    p = write_jsonl(tmp_path / "b.jsonl", [user("u1", None, big), assistant("a1", "u1")])
    t = Transcript.load(p)
    r = t.records[0]
    assert r.content_chars == 200_000
    assert not hasattr(r, "__dict__")  # slots: the index holds no body
    assert t.body(r)["message"]["content"] == big
    assert t.read_raw(r, limit=10) == b'{"type":"u'


def test_truncated_last_line_then_completed_by_appends(tmp_path):
    full = orjson.dumps(assistant("a1", "u1"))
    p = tmp_path / "live.jsonl"
    p.write_bytes(orjson.dumps(user("u1", None)) + b"\n" + full[: len(full) // 2])
    before = sha256(p)
    t = Transcript.load(p)
    assert [r.uuid for r in t.records] == ["u1"]
    assert t.problems[-1].reason == INCOMPLETE_TAIL and t.problems[-1].line == 2
    assert sha256(p) == before  # never modified
    with open(p, "ab") as f:  # Claude Code finishes the line and appends another
        f.write(full[len(full) // 2 :] + b"\n" + orjson.dumps(user("u2", "a1")) + b"\n")
    new = t.update()
    assert [r.uuid for r in new] == ["a1", "u2"]
    assert [r.line for r in t.records] == [1, 2, 3]
    assert t.problems == [] and t.complete


def test_last_line_without_newline_that_parses_is_loaded(tmp_path):
    p = tmp_path / "n.jsonl"
    p.write_bytes(orjson.dumps(user("u1", None)))
    t = Transcript.load(p)
    assert len(t.records) == 1 and t.problems == []


def test_truncated_or_replaced_file_is_detected(tmp_path):
    p = write_jsonl(tmp_path / "t.jsonl", [user("u1", None), user("u2", "u1")])
    t = Transcript.load(p)
    p.write_bytes(orjson.dumps(user("u1", None)) + b"\n")  # shorter: truncated
    with pytest.raises(FileChanged):
        t.update()


def test_crlf_line_endings(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_bytes(orjson.dumps(user("u1", None)) + b"\r\n" + orjson.dumps(user("u2", "u1")) + b"\r\n")
    t = Transcript.load(p)
    assert [r.uuid for r in t.records] == ["u1", "u2"] and t.problems == []


def test_deep_nesting_and_wrong_types(tmp_path):
    deep = b'{"type":"user","uuid":"d","message":' + b'{"a":' * 5000 + b"1" + b"}" * 5000 + b"}"
    wrong = orjson.dumps(
        {"type": 5, "uuid": ["x"], "parentUuid": 7, "timestamp": {}, "message": "str", "isSidechain": "yes", "compactMetadata": 3}
    )
    p = tmp_path / "w.jsonl"
    p.write_bytes(deep + b"\n" + wrong + b"\n")
    t = Transcript.load(p)  # never raises
    assert len(t.records) + len(t.skipped) == 2
    assert t.records[-1].type == "" and t.records[-1].uuid is None


def test_usage_fields_of_wrong_type_count_as_zero(tmp_path):
    a = assistant("a1", None)
    a["message"]["usage"] = {"input_tokens": "12", "output_tokens": 5, "cache_read_input_tokens": None}
    t = Transcript.load(write_jsonl(tmp_path / "x.jsonl", [a]))
    assert t.records[0].usage == (0, 0, 0, 5)


def test_index_memory_stays_near_file_size(tmp_path):
    """A large transcript does not become gigabytes of Python objects (index + no bodies)."""
    import tracemalloc

    line = orjson.dumps(user("u", None, "lorem ipsum " * 800))  # ~10 KB per line
    p = tmp_path / "big.jsonl"
    with open(p, "wb") as f:
        for i in range(3000):
            f.write(line.replace(b'"uuid":"u"', f'"uuid":"u{i}"'.encode()) + b"\n")
    size = os.path.getsize(p)
    tracemalloc.start()
    t = Transcript.load(p)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(t.records) == 3000
    assert peak < size * 0.25, (peak, size)  # measured ~0.05x: the index, not the bodies


def test_the_garbage_collector_is_paused_only_while_indexing(tmp_path):
    import gc

    from inspector.transcript.records import gc_paused

    path = write_jsonl(tmp_path / "s.jsonl", [user("u1", None), assistant("a1", "u1")])
    assert gc.isenabled()
    s = Session.load(path)
    s.conversation
    assert gc.isenabled()  # back on after the index and the tree
    with gc_paused():
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()
    try:
        with gc_paused():
            raise ValueError("boom")
    except ValueError:
        pass
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        gc.enable()
