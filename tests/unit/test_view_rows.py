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
