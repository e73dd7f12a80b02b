"""What the report reads that does not depend on the token counts can be read before them (the app does it while its
counting child is at work): the same report, and read once while the session's subagents are the same."""

from __future__ import annotations

from helpers import SAMPLES

from inspector.tokens import explain
from inspector.transcript.session import Session


def _with_compaction_calls() -> list[Session]:
    out = []
    for p in sorted(SAMPLES.rglob("*.jsonl")):
        if "subagents" in p.parts:
            continue
        s = Session.load(p)
        if any(explain._read_compact_call(s, i) for i, r in enumerate(s.records) if r.is_compact_boundary):
            out.append(s)
    return out


def test_a_prepared_session_reports_the_same_and_reads_each_call_once(monkeypatch):
    sessions = _with_compaction_calls()
    assert sessions, "a sample whose compaction left its summarizer's transcript"
    for s in sessions:
        want = explain.analyze(Session.load(s.transcript.path)).as_dict(full=True)
        reads = []
        real = explain._read_compact_call
        monkeypatch.setattr(explain, "_read_compact_call", lambda s, b: reads.append(b) or real(s, b))
        explain.prepare(s)
        bounds = [i for i, r in enumerate(s.records) if r.is_compact_boundary]
        assert sorted(reads) == bounds
        got = explain.analyze(s).as_dict(full=True)
        assert got == want and sorted(reads) == bounds  # the report read none of them again
        assert any(e.get("compact_call") for e in got["compactions"])
        s.__dict__.pop("subagents")  # what Session.update does when the file grew: read again
        explain.analyze(s)
        assert sorted(reads) == bounds + bounds
        monkeypatch.undo()
