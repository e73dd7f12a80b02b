"""The request a compaction answered is the last one sent before it: a 2.1.332 REPL can record the request it sends
after a reactive compaction (the retry, answered) before the compaction's boundary, and that request must not hide
the refused one (found_repl_1017: the compaction was called a threshold's)."""

from __future__ import annotations

from types import SimpleNamespace

from builders import assistant, system, ts, user
from helpers import write_jsonl

from inspector.claude.requests import request_before
from inspector.transcript.session import Session


def test_a_request_recorded_before_the_boundary_but_sent_after_it_is_not_the_one_before(tmp_path) -> None:
    recs = [
        user("u1", None, "go", sec=1),
        assistant("a1", "u1", sec=2),
        user("u2", "a1", "more", sec=3),
        system("b", None, "compact_boundary", sec=6, compactMetadata={"trigger": "auto", "preTokens": 1000}),
    ]
    s = Session.load(write_jsonl(tmp_path / "p" / "s.jsonl", recs))
    b = next(i for i, r in enumerate(s.records) if r.is_compact_boundary)
    refused = SimpleNamespace(index=2, timestamp=ts(4), agent_id=None, answered=False)
    retry = SimpleNamespace(index=2, timestamp=ts(7), agent_id=None, answered=True)  # sent after the compaction
    assert request_before(s, [refused, retry], b) is refused
    early = SimpleNamespace(index=2, timestamp=ts(5), agent_id=None, answered=True)
    assert request_before(s, [refused, early], b) is early  # sent before it: the last one before
    assert request_before(s, [refused, SimpleNamespace(index=2, timestamp=ts(5), agent_id="x")], b) is refused
