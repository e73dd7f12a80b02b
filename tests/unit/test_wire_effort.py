"""The effort a per-turn-effort model's request states (`output_config` after the first user turn), and the model names
an attribution re-rendered after a /model switch carries: both as 2.1.328 and 2.1.332 send them."""

from __future__ import annotations

from builders import assistant, user
from helpers import write_jsonl

from inspector.claude.models import catalog, catalog_ids
from inspector.claude.wire import api_messages, wire_effort
from inspector.compact.engine import _display_name
from inspector.transcript.session import Session

# read from the catalogs of the 2.1.328 and 2.1.332 binaries (the models with the per_turn_effort capability)
PER_TURN_EFFORT = {
    "claude-fable-5-1",
    "claude-fable-5-2",
    "claude-haiku-5-5",
    "claude-mythos-5-2",
    "claude-opus-5-5",
    "claude-sonnet-5-5",
}


def test_the_catalog_names_the_models_that_state_their_effort():
    assert {m for m in catalog_ids() if (c := catalog(m)) is not None and c.per_turn_effort} == PER_TURN_EFFORT


def _turns(texts: list[tuple[str, str]]) -> list[dict]:
    return [
        {"type": "user", "message": {"role": "user", "content": t}}
        if r == "user"
        else {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": t}]}}
        for r, t in texts
    ]


def test_the_effort_is_stated_after_the_first_user_turn():
    """On the system-role entry right after the first user turn (a fresh session's first request: its environment),
    else on an empty system entry put there (2.1.332 after a /compact: the summary, then the statement)."""
    env = {"type": "attachment", "attachment": {"type": "x"}, "rendered": [{"content": "# Environment", "role": "system"}]}
    fresh = api_messages(_turns([("user", "go")]) + [env], "system-bare", effort="medium")
    assert [m["role"] for m in fresh] == ["user", "system"] and fresh[1]["output_config"] == {"effort": "medium"}
    after = api_messages(_turns([("user", "summary"), ("assistant", "ok"), ("user", "go on")]), "system-bare", effort="low")
    assert after[1] == {"role": "system", "content": [], "output_config": {"effort": "low"}}
    assert [m["role"] for m in after] == ["user", "system", "assistant", "user"]
    assert all("output_config" not in m for m in api_messages(_turns([("user", "summary")]), "system-bare"))


def test_the_effort_is_the_last_reply_s_of_that_model(tmp_path):
    recs = [user("u1", None, "go", sec=0), assistant("a1", "u1", sec=1, model="claude-sonnet-5-5")]
    recs[1]["effort"] = "medium"
    recs += [user("u2", "a1", "more", sec=2), assistant("a2", "u2", sec=3, model="claude-opus-5")]
    recs[3]["effort"] = "high"
    for r in recs:
        r["version"] = "2.1.332"  # (a release that knows these models: measured on 2.1.328 and 2.1.332)
    s = Session.load(write_jsonl(tmp_path / "s.jsonl", recs))
    assert wire_effort(s, "claude-sonnet-5-5") == "medium"
    assert wire_effort(s, "claude-sonnet-5-5[1m]") == "medium"
    assert wire_effort(s, "claude-opus-5") is None  # states no effort per turn
    # no reply of it says: the catalog's default (a fork whose copied replies are another model's: 2.1.332 seed 110010)
    assert wire_effort(s, "claude-haiku-5-5") == "medium"
    assert wire_effort(s, "claude-fable-5-1") == "high"
    assert wire_effort(s, "claude-sonnet-5-5", upto=1) == "medium"  # before its reply


def test_a_release_that_knew_none_of_these_models_states_no_effort(tmp_path):
    """2.1.88 (before the catalog era) runs claude-fable-5-2 as an unknown model: its requests carry no system-role
    entry at all (generated seed 178000 on 2.1.88: every request inspector rebuilt had one more message)."""
    recs = [user("u1", None, "go", sec=0), assistant("a1", "u1", sec=1, model="claude-fable-5-2")]
    recs[1]["effort"] = "medium"
    for version, want in (("2.1.88", None), ("2.1.320", None), ("2.1.321", "medium"), ("2.1.332", "medium")):
        for r in recs:
            r["version"] = version
        s = Session.load(write_jsonl(tmp_path / f"{version}.jsonl", recs))
        assert wire_effort(s, "claude-fable-5-2") == want, version


# the defaults of the 2.1.328 and 2.1.332 catalogs (default_effort), as the replies of every generated run recorded them
DEFAULT_EFFORT = {
    "claude-haiku-5-5": "medium",
    "claude-sonnet-5": "high",
    "claude-sonnet-5-5": "medium",
    "claude-opus-4-7": "xhigh",
    "claude-opus-4-8": "high",
    "claude-opus-5": "high",
    "claude-opus-5-5": "medium",
    "claude-fable-5": "high",
    "claude-fable-5-1": "high",
    "claude-fable-5-2": "medium",
    "claude-mythos-5-1": "high",
    "claude-mythos-5-2": "medium",
}


def test_the_catalog_gives_each_model_its_default_effort():
    got = {m: c.default_effort for m in catalog_ids() if (c := catalog(m)) is not None and c.default_effort}
    assert got == DEFAULT_EFFORT


def _reply(text: str, effort: str | None) -> dict:
    r = {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}
    return {**r, "effort": effort} if effort else r


def test_a_change_of_effort_is_stated_after_the_turn_that_made_it():
    """2.1.332 seed 110033: a session on claude-fable-5-1 (high) resumed on claude-sonnet-5-5 (medium) states high
    after its first prompt, as then, and medium after the prompt of the first turn at the new effort (on the system
    entry that follows it, the model's announcement); a turn at the same effort states nothing."""
    env = {"type": "attachment", "attachment": {"type": "x"}, "rendered": [{"content": "# Environment", "role": "system"}]}
    note = {"type": "attachment", "attachment": {"type": "m"}, "rendered": [{"content": "You are Sonnet 5.5", "role": "system"}]}
    turns = [
        {"type": "user", "message": {"role": "user", "content": "go"}},
        env,
        _reply("done", "high"),
        {"type": "user", "message": {"role": "user", "content": "again"}},
        _reply("done again", "high"),
        {"type": "user", "message": {"role": "user", "content": "continue"}},
        note,
    ]
    sent = api_messages(turns, "system-bare", effort="medium")
    stated = [(k, m["role"], m.get("output_config")) for k, m in enumerate(sent) if "output_config" in m]
    assert stated == [(1, "system", {"effort": "high"}), (6, "system", {"effort": "medium"})]
    # its reply recorded: the next request states nothing more, and the same effort throughout states it once
    sent = api_messages(
        [*turns, _reply("ok", "medium"), {"type": "user", "message": {"role": "user", "content": "more"}}],
        "system-bare",
        effort="medium",
    )
    assert [m.get("output_config") for m in sent if "output_config" in m] == [{"effort": "high"}, {"effort": "medium"}]
    same = api_messages(turns[:5] + [turns[5]], "system-bare", effort="high")
    assert [k for k, m in enumerate(same) if "output_config" in m] == [1]
    # with no system entry after the changed turn, an empty one carries it, at the end of the request
    bare = api_messages(turns[:6], "system-bare", effort="medium")
    assert bare[-1] == {"role": "system", "content": [], "output_config": {"effort": "medium"}}


def test_a_tool_round_s_batching_reminder_is_sent_once_after_the_last_system_entry():
    """2.1.332 seed 110021 (claude-fable-5-1): a `batching_reminder_sent` record before a request is sent as a text
    block after the last system entry's reminder, in that request only."""
    call = {
        "type": "assistant",
        "message": {"id": "m1", "role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
    }
    result = {
        "type": "user",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
    }
    tokens = {
        "type": "attachment",
        "attachment": {"type": "total_tokens_reminder"},
        "rendered": [{"content": "<total_tokens>9 left</total_tokens>"}],
        "renderedRole": "system",
    }
    nudge = {
        "type": "attachment",
        "attachment": {"type": "batching_reminder_sent", "text": "List what you need.", "model": "claude-fable-5-1"},
    }
    head = [{"type": "user", "message": {"role": "user", "content": "go"}}, call, result, tokens, nudge]
    sent = api_messages(head, "system-bare")
    assert sent[-1] == {
        "role": "system",
        "content": [
            {"type": "text", "text": "<total_tokens>9 left</total_tokens>"},
            {"type": "text", "text": "List what you need."},
        ],
    }
    later = api_messages(
        [*head, _reply("done", None), {"type": "user", "message": {"role": "user", "content": "next"}}], "system-bare"
    )
    assert "List what you need." not in str(later)
    # a reminder delivered the other way (cleared at the next user message) is not this one
    other = {**nudge, "attachment": {**nudge["attachment"], "clearAt": "next_user_message"}}
    assert "List what you need." not in str(api_messages([*head[:-1], other], "system-bare"))


def test_an_attribution_names_the_catalog_s_display_name():
    """The 2.1.332 catalog's display names: a re-rendered attribution says "Claude Sonnet 3.7" where the model's
    announcement has the marketing name "Claude 3.7 Sonnet" (generated run on claude-3-7-sonnet, its replay)."""
    assert _display_name("claude-3-7-sonnet") == "Sonnet 3.7"
    assert _display_name("claude-opus-4-0") == "Opus 4"
    assert _display_name("claude-sonnet-4-5-20250929") == "Sonnet 4.5"
    assert _display_name("claude-opus-5-5[1m]") == "Opus 5.5"
    assert _display_name("claude-foo-1") is None


def test_a_re_rendered_attribution_names_the_model_as_claude_code_does():
    from inspector.compact.engine import _attributed

    def rendered(model_id: str, marketing: str) -> str:
        rec = {"attachment": {"commit": "Co-Authored-By: Claude Opus 5 <noreply@anthropic.com>"}}
        ident = {"attachment": {"identity": {"modelId": model_id, "marketingName": marketing}}}
        return _attributed(rec, ident)["attachment"]["commit"]

    assert rendered("claude-3-7-sonnet", "Claude 3.7 Sonnet") == "Co-Authored-By: Claude Sonnet 3.7 <noreply@anthropic.com>"
    assert rendered("claude-sonnet-4-5[1m]", "Sonnet 4.5 (1M context)").endswith(
        "Claude Sonnet 4.5 (1M context) <noreply@anthropic.com>"
    )
    assert rendered("claude-foo-1", "") == "Co-Authored-By: Claude Code <noreply@anthropic.com>"


def test_a_release_that_does_not_know_the_model_states_no_effort(tmp_path):
    """claude-fable-5-2 is first named by 2.1.321 (conformance --catalog): 2.1.163 ran it as an unknown model and
    sent no effort after the first user turn (generated seed 152001's round trip); 2.1.332 states its default."""
    for version, want in (("2.1.163", None), ("2.1.332", "medium")):
        recs = [user("u1", None, "go", sec=0), assistant("a1", "u1", sec=1, model="claude-fable-5-2")]
        for r in recs:
            r["version"] = version
        s = Session.load(write_jsonl(tmp_path / version / "s.jsonl", recs))
        assert wire_effort(s, "claude-fable-5-2") == want, version
