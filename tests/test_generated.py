"""The generated conformance runs (conformance/generate.py, generated.py, replay.py) and what they found, checked
without the binary: the generator is a pure function of its seed, the fake API follows a generated script, the
whole-request comparison sees every kind of difference, and the rules the runs showed hold in inspector."""

from __future__ import annotations

import json

import pytest

from builders import assistant, user
from conformance.compare import whole_difference
from conformance.fake_api import Script, call_for
from conformance.generate import CALLS, scenario
from conformance.scenarios import Scenario
from inspector.claude.requests import _set_path
from inspector.claude.wire import _bare, api_messages


def test_a_seed_is_one_scenario_on_every_machine():
    a, b = scenario(7), scenario(7)
    assert a == b and a.name == "gen_7"
    assert scenario(8) != a
    assert Scenario.from_dict(json.loads(json.dumps(a.as_dict()))) == a  # kept as found.json keeps it
    kinds = {st.model for k in range(60) for st in scenario(k).steps} | {scenario(k).model for k in range(60)}
    assert len(kinds) > 6  # models, and /model switches, do vary
    assert any(st.prompt.startswith("/compact") for k in range(60) for st in scenario(k).steps)
    assert any(st.script.ptl_at for k in range(60) for st in scenario(k).steps)


def test_the_fake_calls_the_tools_the_request_offers():
    s = Script(calls=(CALLS["grep"], CALLS["agent"], CALLS["read"]))
    offered = {"tools": [{"name": n} for n in ("Bash", "Read", "Agent")]}
    tool, inp = call_for(s, 0, offered)  # Grep left in 2.1.3xx: its Bash equivalent
    assert tool == "Bash" and inp["command"].startswith("grep -rn")
    assert call_for(s, 1, offered)[0] == "Agent"
    assert call_for(s, 1, {"tools": [{"name": "Task"}]})[0] == "Task"  # the same subagent in older releases
    assert call_for(s, 2, offered) == ("Read", {"file_path": "{work}/f3.txt"})


def _req(**kw):
    base = {"messages": [{"role": "user", "content": "hi"}], "system": [{"type": "text", "text": "x-anthropic-billing-header: x"},
                                                                        {"type": "text", "text": "sys"}],
            "tools": [{"name": "Bash"}], "params": {"model": "m", "max_tokens": 10, "stream": True},
            "headers": {"anthropic-beta": "a,b"}, "cache": [[["messages", 0, "content", 0], {"type": "ephemeral"}],
                                                          [["system", 1], {"type": "ephemeral"}]]}
    base.update(kw)
    return base


def _rebuilt(**kw):
    base = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}],
            "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}], "tools": [{"name": "Bash"}],
            "model": "m", "max_tokens": 10, "betas": ["b", "a"]}
    base.update(kw)
    return base


def test_the_whole_request_is_compared():
    assert whole_difference(_req(), _rebuilt()) is None
    assert "message 0" in whole_difference(_req(), _rebuilt(messages=[{"role": "user", "content": "ho"}]))
    assert "system prompt" in whole_difference(_req(), _rebuilt(system=[{"type": "text", "text": "other"}]))
    assert "tools" in whole_difference(_req(), _rebuilt(tools=[]))
    assert "parameters" in whole_difference(_req(), _rebuilt(max_tokens=11))
    assert "betas" in whole_difference(_req(), _rebuilt(betas=["a"]))
    assert "breakpoints on messages" in whole_difference(_req(), _rebuilt(messages=[{"role": "user", "content": "hi"}]))
    assert "system prompt" in whole_difference(_req(), _rebuilt(system=[{"type": "text", "text": "sys"}]))


def test_a_breakpoint_on_a_string_content_is_put_on_its_block():
    """A system turn sent as a string carries its marker in block form (["messages", 13, "content", 0]): 2.1.328
    with claude-opus-5 did, and the rebuilt request had lost it."""
    req = {"messages": [{"role": "system", "content": "<total_tokens>1 tokens left</total_tokens>"}]}
    _set_path(req, ["messages", 0, "content", 0], {"type": "ephemeral"})
    assert req["messages"][0]["content"] == [{"type": "text", "text": "<total_tokens>1 tokens left</total_tokens>",
                                              "cache_control": {"type": "ephemeral"}}]


def test_an_api_error_message_stops_the_climb_of_attachments():
    """A session that ended in "Prompt is too long" (or "Autocompact is thrashing") and was then compacted: the
    re-announcements after the summary stay after it (the reorder runs before the error message is dropped), as
    2.1.328 sent them; before, they climbed above the summary."""
    recs = [user("s", None, "This session is being continued from a previous conversation.", isCompactSummary=True),
            assistant("e", "s", [{"type": "text", "text": "Prompt is too long"}], isApiErrorMessage=True),
            user("c", "e", "<local-command-stdout>Compacted</local-command-stdout>"),
            {"type": "attachment", "uuid": "a", "parentUuid": "c", "attachment": {"type": "environment"},
             "rendered": [{"content": "<system-reminder>\nenv\n</system-reminder>"}], "renderedRole": "user"}]
    [m] = api_messages(recs)
    texts = [b["text"] for b in m["content"]]
    assert [t.split("\n")[0] for t in texts] == ["This session is being continued from a previous conversation.",
                                                 "<system-reminder>", "<local-command-stdout>Compacted</local-command-stdout>"]
    without = [r for r in recs if r["uuid"] != "e"]
    assert api_messages(without)[0]["content"][0]["text"].startswith("<system-reminder>\nenv")  # no barrier: it climbs


@pytest.mark.parametrize("text, bare", [("<system-reminder>\nA\n</system-reminder>", "A"),
                                        ("<system-reminder>\nends in a blank line.\n\n</system-reminder>", "ends in a blank line.\n")])
def test_a_bare_reminder_loses_its_tags_and_one_newline_each_side(text, bare):
    assert _bare(text) == bare
