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


def _model(m: str) -> dict:
    return {"type": "attachment", "attachment": {"type": "model", "identity": {"modelId": m}, "text": f"You are {m}"}}


def _reply(m: str, n: int) -> dict:
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

    model, reply = _model, _reply

    def snap(text: str) -> dict:
        return {"type": "attachment", "attachment": {"type": "prompt_snapshot", "systemPrompt": [text]}}

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
    from inspector.compact.engine import _snapshot_of
    from inspector.compact.reattach import _latest_payload

    s, at = _session(tmp_path)
    model = lambda body: body["attachment"]["identity"]["modelId"]  # noqa: E731
    assert model(_latest_payload(s, "model", at["reply1"])) == "claude-opus-5"
    assert model(_latest_payload(s, "model", at["reply2"])) == "claude-sonnet-4-5"
    assert model(_latest_payload(s, "model")) == "claude-opus-5[1m]"
    assert _snapshot_of(s, at["reply1"], None) == at["snap1"]
    assert _snapshot_of(s, None, "claude-opus-5") == at["snap1"] and _snapshot_of(s, None, None) == at["snap2"]


def _held_off_session(tmp_path: Path, *, compacted: bool = False, lean_first: bool = False) -> tuple[Session, int]:
    """2.1.328: a session on claude-3-5-sonnet (every tool loaded, the full prompt), resumed on claude-fable-5-2, whose
    request is refused. Tool search stays held off until a compaction, so fable sends the same full prompt."""
    recs: list[dict] = []
    parent = None

    def add(rec: dict) -> int:
        nonlocal parent
        rec.update(
            uuid=f"u{len(recs):02d}", parentUuid=parent, sessionId="s", version="2.1.328", timestamp="2026-12-03T09:00:00.000Z"
        )
        recs.append(rec)
        parent = rec["uuid"]
        return len(recs) - 1

    model, reply = _model, _reply

    full = {"type": "attachment", "attachment": {"type": "prompt_snapshot", "systemPrompt": [FULL * 25]}}
    if lean_first:  # fable ran before the Claude 3 model, with its own prompt
        add(model("claude-fable-5-2"))
        add({"type": "attachment", "attachment": {"type": "prompt_snapshot", "systemPrompt": [LEAN]}})
        add(reply("claude-fable-5-2", 0))
    add({"type": "user", "message": {"role": "user", "content": "go"}})
    add(model("claude-3-5-sonnet"))
    add(json_copy(full))
    add(reply("claude-3-5-sonnet", 1))
    if compacted:
        add({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "compactMetadata": {}})
    add(model("claude-fable-5-2"))
    point = add({"type": "user", "message": {"role": "user", "content": "continue"}})
    add(json_copy(full))  # the snapshot of the refused request, below the last message
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
    return Session.load(path), point


def json_copy(rec: dict) -> dict:
    return orjson.loads(orjson.dumps(rec))


def test_a_held_off_prompt_is_sized_as_the_models_own(tmp_path: Path) -> None:
    """2.1.328 seed 114005: after a Claude 3 model, claude-fable-5-2's requests carried the full prompt, but the tail
    of its prompt-too-long compaction was sized with fable's own (11,591 characters, not 28,305: bisected on the
    binary by moving the refusal's limit): the full one's length less the measured difference."""
    from inspector.claude.models import lean_prompt_delta
    from inspector.compact.engine import _ratio_prompt, _snapshot_of
    from inspector.tokens.estimate import rough_328

    s, point = _held_off_session(tmp_path)
    assert _snapshot_of(s, point, "claude-fable-5-2") == point + 1
    delta = lean_prompt_delta("claude-fable-5-2", (2, 1, 328))
    assert delta == 11_591 - 28_305
    notes: list[str] = []
    assert _ratio_prompt(s, point, "claude-fable-5-2", notes) == round((len(FULL * 25) + delta) / 4)
    assert notes and "held off" in notes[0]
    # the Claude 3 model compacting: its own prompt is the full one
    assert _ratio_prompt(s, point, "claude-3-5-sonnet", []) == rough_328(FULL * 25)


def test_a_compaction_ends_the_hold(tmp_path: Path) -> None:
    from inspector.compact.engine import _ratio_prompt
    from inspector.tokens.estimate import rough_328

    s, point = _held_off_session(tmp_path, compacted=True)  # the Claude 3 model ran before the last compaction
    notes: list[str] = []
    assert _ratio_prompt(s, point, "claude-fable-5-2", notes) == rough_328(FULL * 25) and not notes


def test_a_prompt_written_before_the_hold_is_taken_as_it_is(tmp_path: Path) -> None:
    """A fable snapshot written before the Claude 3 model ran holds fable's own prompt already."""
    from inspector.compact.engine import _ratio_prompt, _snapshot_of
    from inspector.tokens.estimate import rough_328

    s, _ = _held_off_session(tmp_path, lean_first=True)
    first_fable_reply = 2
    assert _snapshot_of(s, first_fable_reply, "claude-fable-5-2") == 1
    assert _ratio_prompt(s, first_fable_reply, "claude-fable-5-2", []) == rough_328(LEAN)


def test_the_difference_is_known_only_where_measured() -> None:
    from inspector.claude.models import lean_prompt_delta

    assert lean_prompt_delta("claude-opus-5[1m]", (2, 1, 332)) == lean_prompt_delta("claude-opus-5", (2, 1, 332)) < 0
    assert lean_prompt_delta("claude-sonnet-4-5", (2, 1, 328)) is None  # no lean prompt: nothing to take off
    assert lean_prompt_delta("claude-fable-5-2", (2, 1, 300)) is None  # a release not measured
    assert lean_prompt_delta("claude-foo-1", (2, 1, 328)) == 6_805 - 28_305  # a model the catalog does not know


def test_a_skill_listing_is_read_entry_by_entry_and_checked_by_its_digest():
    """2.1.328 seed 98006: a listing written under a 120,000 window named two skills alone; the compaction under
    claude-sonnet-4-6 listed them with their descriptions, which the release's built-in skills give (each checked
    against the listing's digest: the first 16 hex digits of SHA-256 of JSON [name, description])."""
    from inspector.claude.models import listing_chars_per_token, skill_listing_rules
    from inspector.compact.reattach import listing_entries, skill_digest

    text = "- run: Run it.\nOn two lines.\n- init\n- security-review"
    assert listing_entries(text, ["run", "init", "security-review"]) == [
        ("run", "Run it.\nOn two lines."),
        ("init", None),
        ("security-review", None),
    ]
    assert listing_entries(text, ["run", "security-review", "init"]) is None  # not in that order
    assert listing_entries("- run (plugin): x", ["run"]) is None  # a name shown otherwise: not read
    rules = skill_listing_rules((2, 1, 328))
    assert rules is not None and skill_listing_rules((2, 1, 200)) is None
    init = rules["builtin"]["init"]
    assert skill_digest("init", init) == "ff38bf755f0da166"  # as 2.1.328's listing recorded it
    assert listing_chars_per_token("claude-sonnet-4-6", rules) == 4 and listing_chars_per_token("claude-foo-1", rules) == 3
    assert listing_chars_per_token("claude-sonnet-4-5[1m]", rules) == 4


def test_a_description_is_cut_and_measured_as_claude_code_does():
    """`y3n` cuts at UTF-16 units (an emoji is two), the budget counts columns (Bun.stringWidth: a wide character
    two, a combining mark none)."""
    from inspector.compact.reattach import _cut, _width

    assert _cut("abcdefgh", 8) == "abcdefgh" and _cut("abcdefgh", 5) == "abcd…"
    assert _cut("ab😀cd", 4) == "ab\ud83d…"  # the cut falls inside the emoji's pair, as String.slice cuts it
    assert _width("日本") == 4 and _width("e\u0301") == 1 and _width("plain") == 5
