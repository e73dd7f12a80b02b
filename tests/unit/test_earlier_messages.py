"""2.1.331+'s `earlierMessages` (CLAUDE_CODE_ELEGANT_MIST): the user's earlier messages a compaction writes on its
summary. The cases in tests/data/earlier_messages.json were cut from runs of the real 2.1.332 (print mode and the
REPL, both modes): the records each compaction summarized, what it kept, and the list the binary wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import assistant, tool_result, tool_use, user
from helpers import DATA

from inspector.claude.wire import api_messages
from inspector.compact import CompactRequest, compact, earlier
from inspector.compact.engine import rough_record
from inspector.tokens.thresholds import Settings
from inspector.transcript.session import Session

CASES = json.loads((DATA / "earlier_messages.json").read_text())["cases"]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['run']}-{c['trigger']}" for c in CASES])
def test_the_list_is_the_one_2_1_332_wrote(case):
    got = earlier.earlier_messages(case["mode"], case["conversation"], set(case["remaining"]), case["removed_tokens"])
    assert got == case["binary_wrote"]


def test_the_cases_cover_both_modes_replies_notes_and_answers():
    kinds = {e["kind"] for c in CASES for e in c["binary_wrote"]}
    assert {"note", "user", "reply"} <= kinds
    assert {c["mode"] for c in CASES} == set(earlier.MODES)
    assert any("answers" in e for c in CASES for e in c["binary_wrote"])


def _conv(*texts):
    out, parent = [], None
    for k, (kind, text) in enumerate(texts):
        rec = (
            user(f"u{k}", parent, text)
            if kind == "user"
            else assistant(f"a{k}", parent, [{"type": "text", "text": text}], mid=f"m{k}")
        )
        out.append(rec)
        parent = rec["uuid"]
    return out


def test_what_the_walk_keeps_and_leaves_out():
    conv = _conv(
        ("user", "fix the parser"),
        ("assistant", "first"),
        ("assistant", "second"),
        ("assistant", "third"),
        ("user", "<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args></command-args>"),
        ("user", "<local-command-stdout>Set model</local-command-stdout>"),
        ("user", "[Request interrupted by user]"),
        ("user", "<system-reminder>\nnote\n</system-reminder>\nand the tests"),
    )
    conv.insert(2, assistant("t", "a1", [tool_use("t1", "Bash", {"command": "ls"})], mid="mt"))  # a tool call: not a reply
    items = earlier.walk(conv, set())
    assert [(e["kind"], e["text"]) for e in items] == [
        ("user", "fix the parser"),
        ("reply", "first"),
        ("note", earlier.LEFT_OUT["text"]),
        ("reply", "third"),
        ("user", "[Request interrupted by user]"),
        ("user", "and the tests"),
    ]
    assert earlier.walk(conv, {"u0"})[0]["kind"] == "reply"  # what the compaction keeps is not listed


def test_messages_mode_turns_replies_into_one_note_and_nothing_is_written_without_a_message():
    conv = _conv(("user", "go"), ("assistant", "done"), ("assistant", "more"))
    got = earlier.earlier_messages("messages", conv, set(), 10_000)
    assert got == [{"kind": "note", "text": earlier.INTRO["messages"]}, {"kind": "user", "text": "go"}, earlier.LEFT_OUT]
    assert earlier.earlier_messages("messages", _conv(("assistant", "only a reply")), set(), 10_000) == []


def test_a_long_prompt_is_cut_in_the_middle_within_a_third_of_what_was_removed():
    long = "start " + "x" * 40_000 + " end"
    got = earlier.earlier_messages("messages", _conv(("user", long), ("user", "short")), set(), 9_000)
    text = got[1]["text"]
    assert text.startswith("start ") and text.endswith(" end") and earlier.MIDDLE_CUT in text
    assert earlier.weight(got[1:]) <= 9_000 / 3 - earlier.weight(got[:1])
    assert got[2] == {"kind": "user", "text": "short"}


def test_a_blocked_last_reply_writes_nothing():
    conv = _conv(("user", "go"))
    conv.append(assistant("r", "u0", [{"type": "text", "text": "no"}], mid="mr"))
    conv[-1]["message"]["stop_reason"] = "refusal"
    assert earlier.earlier_messages("messages", conv, set(), 10_000) == []


def _session_332(tmp_path: Path, earlier_list: list | None = None) -> Session:
    recs, parent = [], None
    for k in range(6):
        u = user(f"u{k}", parent, f"task {k}", sec=k * 10, version="2.1.332")
        call = assistant(
            f"c{k}",
            u["uuid"],
            [tool_use(f"t{k}", "Bash", {"command": "make"})],
            sec=k * 10 + 1,
            mid=f"mc{k}",
            usage=(10, 0, 20_000 * k + 5_000, 50),
            version="2.1.332",
        )
        call["message"]["stop_reason"] = "tool_use"
        out = tool_result(f"r{k}", call["uuid"], f"t{k}", "build output line\n" * 2_000, sec=k * 10 + 2, version="2.1.332")
        a = assistant(
            f"a{k}",
            out["uuid"],
            [{"type": "text", "text": f"did {k}"}],
            sec=k * 10 + 5,
            mid=f"m{k}",
            usage=(10, 0, 20_000 * (k + 1), 50),
            model="claude-sonnet-4-6",
            version="2.1.332",
        )
        a["message"]["stop_reason"] = "end_turn"
        if k == 0 and earlier_list is not None:
            u["isCompactSummary"], u["earlierMessages"] = True, earlier_list
        recs += [u, call, out, a]
        parent = a["uuid"]
    p = tmp_path / "projects" / "-w" / "s.jsonl"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return Session.load(p)


def test_a_compaction_of_a_2_1_332_session_writes_the_list_and_sends_it_before_the_summary(tmp_path):
    s = _session_332(tmp_path)
    before = s.path.read_bytes()
    res = compact(s, CompactRequest("compact", settings=Settings(earlier_messages="messages_and_replies")))
    summary = next(r for r in res.new_records if r.get("isCompactSummary"))
    items = summary["earlierMessages"]
    assert items[0]["text"] == earlier.INTRO["messages_and_replies"]
    assert [e["text"] for e in items if e["kind"] == "user"][:2] == ["task 0", "task 1"]
    assert any("earlier messages (messages_and_replies, set by CLAUDE_CODE_ELEGANT_MIST)" in n for n in res.notes)
    first = res.api_messages[0]["content"]
    assert (first if isinstance(first, str) else first[0]["text"]).rstrip("\n") == earlier.INTRO["messages_and_replies"]
    assert earlier.rough_tokens(summary) > 0 and rough_record(summary) > earlier.rough_tokens(summary)
    assert s.path.read_bytes() == before

    off = compact(s, CompactRequest("compact", settings=Settings(earlier_messages="off")))
    assert not any("earlierMessages" in r for r in off.new_records)
    assert not any("earlierMessages" in r for r in compact(s, "compact").new_records)  # the session shows no list


def test_unset_the_mode_is_the_one_the_sessions_last_summary_shows(tmp_path):
    s = _session_332(tmp_path, [{"kind": "note", "text": earlier.INTRO["messages"]}, {"kind": "user", "text": "old"}])
    res = compact(s, "compact")
    summary = next(r for r in res.new_records if r.get("isCompactSummary"))
    assert summary["earlierMessages"][0]["text"] == earlier.INTRO["messages"]
    assert any("as this session's last summary shows" in n for n in res.notes)
    sent = api_messages([summary], "user")[0]["content"]
    assert (
        sent[0]["text"].rstrip("\n") == earlier.INTRO["messages"] and sent[1]["text"].rstrip("\n") == "old"
    )  # sent before the summary


def test_the_setting_is_read_from_the_environment_and_older_releases_never_write_it():
    assert Settings.from_environment(env={"CLAUDE_CODE_ELEGANT_MIST": "messages"}).earlier_messages == "messages"
    assert Settings.from_environment(env={"CLAUDE_CODE_ELEGANT_MIST": "yes"}).earlier_messages == "off"
    assert Settings.from_environment(env={}).earlier_messages is None
    assert earlier.applies("2.1.331") and earlier.applies("2.1.332") and not earlier.applies("2.1.328")


def _wire_of_summary_then_prompt(earlier: list | None) -> list[str]:
    from inspector.claude.wire import api_messages

    summary: dict = {
        "type": "user",
        "isCompactSummary": True,
        "message": {"role": "user", "content": "This session is being continued from a previous conversation."},
    }
    if earlier is not None:
        summary["earlierMessages"] = earlier
    bodies = [
        summary,
        {"type": "user", "message": {"role": "user", "content": "now task 2"}},
        {
            "type": "attachment",
            "attachment": {"type": "total_tokens_reminder"},
            "rendered": [{"content": "<system-reminder>\n<total_tokens>1 tokens left</total_tokens>\n</system-reminder>"}],
        },
    ]
    msgs = api_messages(bodies)
    return [str(b.get("text"))[:24] for m in msgs if m["role"] == "user" for b in m["content"] if isinstance(m["content"], list)]


def test_a_summary_with_earlier_messages_stops_the_attachments_climbing() -> None:
    """Seen on 2.1.332 (found_repl_1017, found_repl_203, and the round trips of generated seeds 1055 and 1072, each
    a partial "up to" compaction with earlierMessages): a kept prompt's reminder is sent after the summary, where
    without the list (every 2.1.328 run, gen_repl_4 and gen_repl_5) it climbs above it."""

    def at(texts: list[str], start: str) -> int:
        return next(i for i, t in enumerate(texts) if t.startswith(start))

    with_list = _wire_of_summary_then_prompt([{"kind": "user", "text": "run the checks"}])
    assert at(with_list, "run the checks") < at(with_list, "This session") < at(with_list, "<system-reminder>")
    assert at(with_list, "<system-reminder>") < at(with_list, "now task 2")
    without = _wire_of_summary_then_prompt(None)
    assert at(without, "<system-reminder>") == 0 < at(without, "This session")


def test_a_resumed_turns_date_climbs_above_a_summary_with_its_list_and_the_rest_stops_after_it(tmp_path):
    """2.1.332 resuming a session inspector saved (a /compact whose summary carries earlierMessages): the new turn's
    date goes above the summary (the session's context climbs past it: instructions, session_context, date...) and is
    the first part of the system turn; its attribution reminder stops right after the summary. Before, inspector's
    rebuild put the date last (a round trip of a generated 2.1.332 run, gen_1134, differed by that alone)."""
    import lzma

    from conformance.resume import _blocks
    from inspector.claude.wire import sent_bodies, wire_style
    from inspector.transcript.tree import Conversation

    with lzma.open(DATA / "resume_after_earlier_messages.json.xz", "rt") as f:
        case = json.load(f)
    path = tmp_path / "s.jsonl"
    path.write_text(case["session"])
    s = Session.load(path)
    first = next(k for k, r in enumerate(s.records) if r.type == "api-request")
    got = api_messages(sent_bodies(s, Conversation(s.records[:first]).chain), wire_style(s))
    assert _blocks(got) == _blocks(case["sent"])
    assert case["sent"][1]["content"][0]["text"].startswith("Today's date is")


def test_a_question_card_is_sent_as_the_question_asked_again_and_its_answer() -> None:
    """2.1.332's message builder (read from the binary, no run asks a question): a card is an AskUserQuestion call with
    the card's input, on the reply before it when there is one, and its answer as the call's result; a card that
    neither a reply nor another card follows is closed by "No response requested.". The call's id is
    "earliercard_" and a version 5 uuid of the summary's uuid and the entry's place among the listed entries."""
    import uuid

    from inspector.claude.wire import name_uuid

    sid = "3f2a9c1e-7b4d-4e8a-9c2f-1a2b3c4d5e6f"
    q1 = {"questions": [{"question": "Which database?", "header": "DB", "options": [{"label": "sqlite"}], "multiSelect": False}]}
    q2 = {"questions": [{"question": "Ship it?", "header": "Ship", "options": [{"label": "yes"}], "multiSelect": False}]}
    entries = [
        {"kind": "user", "text": "set up the store"},
        {"kind": "reply", "text": "I will ask first."},
        {"kind": "card", "text": "sqlite", "input": q1},
        {"kind": "card", "text": "no input: not listed"},  # a card without its input is not listed (Whe)
        {"kind": "card", "text": "yes", "input": q2},
        {"kind": "user", "text": "go on"},
    ]
    summary = {
        "type": "user",
        "uuid": sid,
        "isCompactSummary": True,
        "earlierMessages": entries,
        "message": {"role": "user", "content": "This session is being continued from a previous conversation."},
    }
    msgs = api_messages([summary])
    first, second = (f"earliercard_{uuid.uuid5(uuid.UUID(sid), f'earlier-{k}')}" for k in (2, 3))
    assert name_uuid("earlier-2", sid) == str(uuid.uuid5(uuid.UUID(sid), "earlier-2"))
    assert msgs == [
        {"role": "user", "content": "set up the store"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "I will ask first."},
                {"type": "tool_use", "id": first, "name": "AskUserQuestion", "input": q1},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": first, "content": "sqlite"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": second, "name": "AskUserQuestion", "input": q2}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": second, "content": "yes"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "No response requested."}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "go on\n"},
                {"type": "text", "text": "This session is being continued from a previous conversation."},
            ],
        },
    ]
