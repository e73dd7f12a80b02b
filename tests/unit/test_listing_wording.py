"""A compaction re-announces the agent listing worded for the model in use (read from 2.1.328 and 2.1.332): the
Explore agent's lean or full text, and the note on concurrent agents only for a model that is nudged about them."""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any

from inspector.compact.engine import CONCURRENCY_NOTE, EXPLORE_TEXTS, worded_for_model

FULL, LEAN = EXPLORE_TEXTS
END = "\n</system-reminder>"


def listing(text: str, note: bool) -> dict[str, Any]:
    line = f"- Explore: {text} (Tools: All tools except Agent, Edit)"
    return {
        "type": "attachment",
        "attachment": {
            "type": "agent_listing_delta",
            "addedTypes": ["Explore"],
            "addedLines": [line],
            "showConcurrencyNote": note,
        },
        "rendered": [
            {"content": "<system-reminder>\nAvailable agent types:\n" + line + (CONCURRENCY_NOTE if note else "") + END}
        ],
    }


def session(version: str, *models: str) -> Any:
    return SimpleNamespace(version=version, models=list(models))


def test_a_switch_to_a_full_prompt_model_words_explore_in_full_and_adds_the_note() -> None:
    rec = worded_for_model(listing(LEAN, False), session("2.1.332", "claude-opus-5", "claude-opus-4-6"), "claude-opus-4-6")
    assert rec["attachment"]["addedLines"] == [f"- Explore: {FULL} (Tools: All tools except Agent, Edit)"]
    assert rec["attachment"]["showConcurrencyNote"] is True
    text = rec["rendered"][0]["content"]
    assert FULL in text and LEAN not in text and text.endswith(CONCURRENCY_NOTE + END)


def test_a_switch_to_opus_5_words_it_lean_and_drops_the_note() -> None:
    rec = worded_for_model(listing(FULL, True), session("2.1.328", "claude-sonnet-5", "claude-opus-5"), "claude-opus-5[1m]")
    assert rec["attachment"]["showConcurrencyNote"] is False
    text = rec["rendered"][0]["content"]
    assert LEAN in text and FULL not in text and text.endswith("Edit)" + END)


def test_the_same_model_changes_nothing() -> None:
    before = listing(FULL, True)
    assert worded_for_model(copy.deepcopy(before), session("2.1.332", "claude-sonnet-5"), "claude-sonnet-5") == before


def test_a_note_off_for_a_nudged_model_stays_off() -> None:
    """Off under a model that would be nudged: the Pro plan or an environment setting, which no transcript records."""
    before = listing(FULL, False)
    assert worded_for_model(copy.deepcopy(before), session("2.1.332", "claude-opus-4-6"), "claude-opus-4-6") == before


def test_a_release_whose_rule_was_not_read_is_left_as_written() -> None:
    before = listing(LEAN, False)
    assert (
        worded_for_model(copy.deepcopy(before), session("2.1.150", "claude-opus-5", "claude-opus-4-6"), "claude-opus-4-6")
        == before
    )
    # nor a model whose lean prompt a release leaves to a feature flag (claude-mythos-5-2, unknown to 2.1.273)
    assert worded_for_model(copy.deepcopy(before), session("2.1.273", "claude-mythos-5-2"), "claude-mythos-5-2") == before


def test_a_2_1_2xx_listing_is_worded_for_the_compacting_model_too() -> None:
    """2.1.273 words the Explore line by the lean prompt of the main loop's model (its agent listing calls
    wz(modelForPrompt(mainLoopModel)); both texts are in every release from 2.1.141, bisected): generated seed 160002
    on 2.1.273 re-announced it lean under claude-mythos-5 and in full under claude-opus-4-0. Its note on concurrent
    agents is not the model's there (the plan's and the steer's), so it is left as written."""
    rec = worded_for_model(listing(FULL, True), session("2.1.273", "claude-opus-4-0", "claude-mythos-5"), "claude-mythos-5")
    assert rec["attachment"]["addedLines"] == [f"- Explore: {LEAN} (Tools: All tools except Agent, Edit)"]
    assert rec["attachment"]["showConcurrencyNote"] is True and rec["rendered"][0]["content"].endswith(CONCURRENCY_NOTE + END)
    rec = worded_for_model(listing(LEAN, False), session("2.1.273", "claude-mythos-5", "claude-opus-4-0"), "claude-opus-4-0")
    assert FULL in rec["rendered"][0]["content"] and rec["attachment"]["showConcurrencyNote"] is False


def test_other_attachments_pass_through() -> None:
    rec = {"attachment": {"type": "skill_listing", "content": FULL}, "rendered": [{"content": FULL}]}
    assert worded_for_model(copy.deepcopy(rec), session("2.1.332", "claude-opus-5"), "claude-opus-5") == rec


def test_the_note_follows_what_the_compacting_process_latched() -> None:
    """The steer is latched per process: 2.1.332's REPL on claude-opus-5 shows the note (gen_repl_1016), its print
    mode does not; the compacting process's own listing says which."""
    rec = worded_for_model(listing(LEAN, False), session("2.1.332", "claude-opus-5"), "claude-opus-5", latched=True)
    assert rec["attachment"]["showConcurrencyNote"] is True
    assert rec["rendered"][0]["content"].endswith(CONCURRENCY_NOTE + END)
    rec = worded_for_model(listing(FULL, True), session("2.1.332", "claude-opus-4-6"), "claude-opus-4-6", latched=False)
    assert rec["attachment"]["showConcurrencyNote"] is False
