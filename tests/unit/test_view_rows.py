"""The timeline's rows: a label is made when a row is first drawn, not for every record when the session opens."""

from __future__ import annotations

from helpers import SAMPLES

import inspector.view as view
from inspector.transcript.session import Session


def test_rows_make_their_labels_when_read_and_as_before(monkeypatch) -> None:
    path = max(SAMPLES.rglob("*.jsonl"), key=lambda p: p.stat().st_size)
    s = Session.load(path)
    made: list[int] = []
    real = view.label_of

    def counting(session: Session, i: int) -> str:
        made.append(i)
        return real(session, i)

    monkeypatch.setattr(view, "label_of", counting)
    rows = view.build_rows(s, scope="file")
    assert len(rows) == len(s.records) > 50 and made == []  # opening a session makes no label
    first = rows[:20]
    assert [r.label for r in first] == [real(s, r.index) for r in first]
    assert made == [r.index for r in first]
    assert [r.label for r in first] and made == [r.index for r in first]  # read again: not made again
    kinds = {r.kind for r in rows}
    assert {"user", "assistant"} <= kinds or {"user", "tool_call"} <= kinds


def test_a_thinking_block_the_api_returned_empty_says_why(tmp_path) -> None:
    """2.1.3xx asks for the reasoning omitted (`thinkingDisplay: "omitted"`): its thinking blocks hold only a signature.
    The row and the detail say so, with how long the model thought, instead of an empty row (fresh seed 79202 with
    thinking replies on 2.1.332); a block with its text shows the text."""
    import orjson

    def line(uuid: str, parent: str | None, text: str, **extra: object) -> bytes:
        rec = {
            "type": "assistant",
            "uuid": uuid,
            "parentUuid": parent,
            "timestamp": "2026-12-06T01:53:47.771Z",
            "message": {
                "id": f"msg_{uuid}",
                "role": "assistant",
                "model": "claude-opus-5",
                "content": [{"type": "thinking", "thinking": text, "signature": "EqQBCkYIBRgCKkB"}],
            },
            **extra,
        }
        return orjson.dumps(rec) + b"\n"

    path = tmp_path / "s.jsonl"
    path.write_bytes(
        line("a", None, "", thinkingDurationMs=1250, thinkingDisplay="omitted")
        + line("b", "a", "")
        + line("c", "b", "Step 2 is next.")
    )
    s = Session.load(path)
    assert view.snippet(s, 0) == "(reasoning omitted by the API · 1,250 ms)"
    assert view.snippet(s, 1) == "(no reasoning text)"
    assert view.snippet(s, 2) == "Step 2 is next."
    notes = [p.text for p in view.record_parts(s, 0) if p.kind == "note"]
    assert notes == ["(reasoning omitted by the API, as Claude Code asks: only its signature is kept; thought for 1,250 ms)"]
    assert [p.text for p in view.record_parts(s, 2) if p.kind == "thinking"] == ["Step 2 is next."]
