"""The system prompt a prompt-too-long compaction takes off the API's count (2.1.3xx's K7n) is the compacting process's:
a process resumed under another model that compacts at its first request has written no snapshot yet, and the last
one may be of a model whose prompt is three times the size (fresh 2.1.332 seed 35001: 28,291 characters for
claude-sonnet-4-5, 10,220 for claude-opus-5's lean prompt)."""

from __future__ import annotations

from pathlib import Path

import orjson

from inspector.compact.engine import _system_prompt_text
from inspector.transcript.session import Session

LEAN = "lean prompt. " * 10
FULL = "the full prompt, three times the size. " * 30


def _session(tmp_path: Path) -> tuple[Session, dict[str, int]]:
    recs: list[dict] = []
    at: dict[str, int] = {}
    parent = None

    def add(name: str, rec: dict) -> None:
        nonlocal parent
        rec.update(
            uuid=f"u{len(recs):02d}", parentUuid=parent, sessionId="s", version="2.1.332", timestamp="2026-12-03T09:00:00.000Z"
        )
        at[name] = len(recs)
        recs.append(rec)
        parent = rec["uuid"]

    def model(m: str) -> dict:
        return {"type": "attachment", "attachment": {"type": "model", "identity": {"modelId": m}, "text": f"You are {m}"}}

    def snap(text: str) -> dict:
        return {"type": "attachment", "attachment": {"type": "prompt_snapshot", "systemPrompt": [text]}}

    def reply(m: str, n: int) -> dict:
        return {
            "type": "assistant",
            "message": {
                "id": f"msg_{n}",
                "role": "assistant",
                "model": m,
                "content": [{"type": "text", "text": "ok"}],
                "usage": {"input_tokens": 10, "output_tokens": 2},
            },
        }

    add("prompt1", {"type": "user", "message": {"role": "user", "content": "go"}})
    add("model1", model("claude-opus-5"))
    add("snap1", snap(LEAN))
    add("reply1", reply("claude-opus-5", 1))
    add("exit1", {"type": "cost-state"})
    add("model2", model("claude-sonnet-4-5"))
    add("snap2", snap(FULL))
    add("reply2", reply("claude-sonnet-4-5", 2))
    add("exit2", {"type": "cost-state"})
    add("model3", model("claude-opus-5[1m]"))
    add("prompt3", {"type": "user", "message": {"role": "user", "content": "continue"}})
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
    return Session.load(path), at


def test_the_compacting_models_own_prompt_is_taken_over_a_later_one_of_another_model(tmp_path: Path) -> None:
    s, at = _session(tmp_path)
    assert _system_prompt_text(s, at["prompt3"], "claude-opus-5[1m]") == LEAN  # the [1m] setting aside
    assert _system_prompt_text(s, at["prompt3"], "claude-sonnet-4-5") == FULL
    assert _system_prompt_text(s, at["prompt3"], None) == FULL  # no model known: the last snapshot


def test_only_snapshots_before_the_point_count(tmp_path: Path) -> None:
    s, at = _session(tmp_path)
    # compacting in the first process: the later process's snapshot is not yet written
    assert _system_prompt_text(s, at["reply1"], "claude-sonnet-4-5") == LEAN  # none of that model yet: the last one
    assert _system_prompt_text(s, at["reply1"], "claude-opus-5") == LEAN


def test_a_compaction_at_an_earlier_message_knows_nothing_written_after_it(tmp_path: Path) -> None:
    """What a compaction re-writes after its summary (the model, the session's context, the prompt snapshot) is the
    last before its point, not the file's last."""
    from inspector.compact.engine import _latest_payload, _snapshot_of

    s, at = _session(tmp_path)
    model = lambda body: body["attachment"]["identity"]["modelId"]  # noqa: E731
    assert model(_latest_payload(s, "model", at["reply1"])) == "claude-opus-5"
    assert model(_latest_payload(s, "model", at["reply2"])) == "claude-sonnet-4-5"
    assert model(_latest_payload(s, "model")) == "claude-opus-5[1m]"
    assert _snapshot_of(s, at["reply1"], None) == at["snap1"]
    assert _snapshot_of(s, None, "claude-opus-5") == at["snap1"] and _snapshot_of(s, None, None) == at["snap2"]
