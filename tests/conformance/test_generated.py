"""The generated conformance runs (conformance/generate.py, generated.py, replay.py) and what they found, checked
without the binary: the generator is a pure function of its seed, the fake API follows a generated script, the
whole-request comparison sees every kind of difference, and the rules the runs showed hold in inspector."""

from __future__ import annotations

import json

import pytest
from builders import assistant, user
from helpers import GOLDENS

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


def test_the_generator_draws_every_model_of_the_catalog():
    """The generated runs cover the release's whole catalog (a model inspector knows only from the catalog is a model
    the runs must check), each with the window the catalog gives it, and the unknown model."""
    from conformance.generate import CATALOG, MODELS, ONE_MILLION
    from inspector.claude.models import catalog, catalog_ids

    assert sorted(CATALOG) == sorted(catalog_ids())
    for m in MODELS:
        c = catalog(m.removesuffix("[1m]"))
        assert (m in ONE_MILLION) == (m.endswith("[1m]") or c is None or c.window >= 1_000_000), m
    drawn = {scenario(k).model for k in range(600)}
    assert drawn == set(MODELS)


def test_the_fake_calls_the_tools_the_request_offers():
    s = Script(calls=(CALLS["grep"], CALLS["agent"], CALLS["read"]))
    offered = {"tools": [{"name": n} for n in ("Bash", "Read", "Agent")]}
    tool, inp = call_for(s, 0, offered)  # Grep left in 2.1.3xx: its Bash equivalent
    assert tool == "Bash" and inp["command"].startswith("grep -rn")
    assert call_for(s, 1, offered)[0] == "Agent"
    assert call_for(s, 1, {"tools": [{"name": "Task"}]})[0] == "Task"  # the same subagent in older releases
    assert call_for(s, 2, offered) == ("Read", {"file_path": "{work}/f3.txt"})


def _req(**kw):
    base = {
        "messages": [{"role": "user", "content": "hi"}],
        "system": [{"type": "text", "text": "x-anthropic-billing-header: x"}, {"type": "text", "text": "sys"}],
        "tools": [{"name": "Bash"}],
        "params": {"model": "m", "max_tokens": 10, "stream": True},
        "headers": {"anthropic-beta": "a,b"},
        "cache": [[["messages", 0, "content", 0], {"type": "ephemeral"}], [["system", 1], {"type": "ephemeral"}]],
    }
    base.update(kw)
    return base


def _rebuilt(**kw):
    base = {
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}],
        "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "Bash"}],
        "model": "m",
        "max_tokens": 10,
        "betas": ["b", "a"],
    }
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
    assert req["messages"][0]["content"] == [
        {"type": "text", "text": "<total_tokens>1 tokens left</total_tokens>", "cache_control": {"type": "ephemeral"}}
    ]


def test_an_api_error_message_stops_the_climb_of_attachments():
    """A session that ended in "Prompt is too long" (or "Autocompact is thrashing") and was then compacted: the
    re-announcements after the summary stay after it (the reorder runs before the error message is dropped), as
    2.1.328 sent them; before, they climbed above the summary."""
    recs = [
        user("s", None, "This session is being continued from a previous conversation.", isCompactSummary=True),
        assistant("e", "s", [{"type": "text", "text": "Prompt is too long"}], isApiErrorMessage=True),
        user("c", "e", "<local-command-stdout>Compacted</local-command-stdout>"),
        {
            "type": "attachment",
            "uuid": "a",
            "parentUuid": "c",
            "attachment": {"type": "environment"},
            "rendered": [{"content": "<system-reminder>\nenv\n</system-reminder>"}],
            "renderedRole": "user",
        },
    ]
    [m] = api_messages(recs)
    texts = [b["text"] for b in m["content"]]
    assert [t.split("\n")[0] for t in texts] == [
        "This session is being continued from a previous conversation.",
        "<system-reminder>",
        "<local-command-stdout>Compacted</local-command-stdout>",
    ]
    without = [r for r in recs if r["uuid"] != "e"]
    assert api_messages(without)[0]["content"][0]["text"].startswith("<system-reminder>\nenv")  # no barrier: it climbs


@pytest.mark.parametrize(
    "text, bare",
    [
        ("<system-reminder>\nA\n</system-reminder>", "A"),
        ("<system-reminder>\nends in a blank line.\n\n</system-reminder>", "ends in a blank line.\n"),
    ],
)
def test_a_bare_reminder_loses_its_tags_and_one_newline_each_side(text, bare):
    assert _bare(text) == bare


def _refill_session(tmp_path, *, between=(), after_prompt=False, rounds_after=2):
    """A 2.1.328 session: a prompt, three tool rounds, an automatic compaction (keeping nothing), then
    `rounds_after` tool rounds; `between` records are put right after the boundary's summary."""
    from builders import system, tool_result, tool_use
    from helpers import write_jsonl

    v = {"version": "2.1.328"}
    recs = [user("p", None, "run the checks", promptId="x", **v)]
    parent = "p"
    for n in range(3):
        recs += [
            assistant(f"a{n}", parent, [tool_use(f"t{n}", "Bash", {"command": "ls"})], **v),
            tool_result(f"r{n}", f"a{n}", f"t{n}", **v),
        ]
        parent = f"r{n}"
    recs.append(
        system(
            "b",
            None,
            "compact_boundary",
            logicalParentUuid=parent,
            compactMetadata={"trigger": "auto", "preTokens": 100_000},
            **v,
        )
    )
    recs.append(user("s", "b", "This session is being continued from a previous conversation.", isCompactSummary=True, **v))
    parent = "s"
    recs += list(between)
    if after_prompt:
        recs.append(user("p2", parent, "go on", promptId="y", **v))
        parent = "p2"
    for n in range(rounds_after):
        recs += [
            assistant(f"c{n}", parent, [tool_use(f"u{n}", "Bash", {"command": "ls"})], **v),
            tool_result(f"q{n}", f"c{n}", f"u{n}", **v),
        ]
        parent = f"q{n}"
    from inspector.transcript.session import Session

    return Session.load(write_jsonl(tmp_path / "p" / "s.jsonl", recs))


def test_a_threshold_compaction_soon_after_another_keeps_no_round(tmp_path):
    """2.1.328's rapid refill (Cls, measured in the generated runs): back at the threshold within 3 tool rounds
    of an automatic compaction, in the same turn and process, it summarizes the last round too; a prompt typed
    since, a new process (a cost-state between) or 3 rounds since make it an ordinary compaction again."""
    from inspector.compact import make_slice
    from inspector.compact.engine import rapid_refills

    assert rapid_refills(make_slice(_refill_session(tmp_path / "a"))) == 1
    assert rapid_refills(make_slice(_refill_session(tmp_path / "b", rounds_after=3))) == 0
    assert rapid_refills(make_slice(_refill_session(tmp_path / "c", after_prompt=True))) == 0
    exited = [{"type": "cost-state", "sessionId": "S", "costUSD": 0}]
    assert rapid_refills(make_slice(_refill_session(tmp_path / "d", between=exited))) == 0
    from inspector.compact import CompactRequest, compact

    s = _refill_session(tmp_path / "e")
    res = compact(s, CompactRequest("compact", trigger="auto"), summarizer=_Fake())
    assert res.kept_uuids == () and "rapid refill" in " ".join(res.notes)
    assert compact(
        _refill_session(tmp_path / "f", rounds_after=3), CompactRequest("compact", trigger="auto"), summarizer=_Fake()
    ).kept_uuids


class _Fake:
    name = "fake"
    sends_data = False

    def summarize(self, req, progress=None, cancel=None):
        from inspector.compact.summarize.base import SummaryOutput

        return SummaryOutput("<summary>done</summary>", "fake")


def _delta(uuid, added=(), removed=()):
    lines = "\n".join(added)
    return {
        "type": "attachment",
        "uuid": uuid,
        "parentUuid": None,
        "version": "2.1.328",
        "attachment": {
            "type": "deferred_tools_delta",
            "addedNames": list(added),
            "addedLines": list(added),
            "removedNames": list(removed),
        },
        "rendered": [
            {
                "content": "<system-reminder>\nThe following deferred tools are now available via ToolSearch. "
                f"Load them first:\n{lines}\n</system-reminder>"
            }
        ],
        "renderedRole": "user",
    }


def test_announcements_add_up_and_merge_as_claude_code_writes_them(tmp_path):
    from helpers import write_jsonl

    from inspector.compact.reattach import _announced, _merged_tools_delta
    from inspector.transcript.session import Session

    s = Session.load(
        write_jsonl(tmp_path / "p" / "s.jsonl", [_delta("d1", ["B", "A"]), _delta("d2", removed=["A"]), _delta("d3", ["C"])])
    )
    assert _announced(s, [0, 1, 2], "deferred_tools_delta") == ("B", "C")
    merged = _merged_tools_delta(s, [0, 2], {"C", "B"})
    assert merged["attachment"]["addedNames"] == ["B", "C"]
    assert merged["rendered"][0]["content"].endswith("Load them first:\nB\nC\n</system-reminder>")


def test_the_commit_attribution_names_the_model_now_in_use():
    from inspector.compact.engine import _attributed

    rec = {
        "attachment": {"type": "remote_session_change", "commit": "Co-Authored-By: Claude Code <noreply@anthropic.com>"},
        "rendered": [{"content": "end commits with\nCo-Authored-By: Claude Code <noreply@anthropic.com>\nthanks"}],
    }
    model = {"attachment": {"type": "model", "identity": {"modelId": "claude-sonnet-4-6", "marketingName": "Sonnet 4.6"}}}
    out = _attributed(rec, model)
    assert out["attachment"]["commit"] == "Co-Authored-By: Claude Sonnet 4.6 <noreply@anthropic.com>"
    assert "Claude Sonnet 4.6 <noreply" in out["rendered"][0]["content"] and out["rendered"][0]["content"].endswith("thanks")
    unnamed = {"attachment": {"type": "model", "identity": {"modelId": "claude-foo-1", "marketingName": None}}}
    assert _attributed(out, unnamed)["attachment"]["commit"] == "Co-Authored-By: Claude Code <noreply@anthropic.com>"


GENERATED = sorted(p.name for p in [*GOLDENS.glob("gen_*"), *GOLDENS.glob("found_*")] if p.is_dir())


def test_there_are_generated_goldens():
    assert len(GENERATED) >= 5


@pytest.mark.parametrize("name", GENERATED)
def test_a_generated_run_is_rebuilt_explained_and_replayed_as_the_binary_did(name, tmp_path):
    """A generated run the real 2.1.328 made (python -m conformance --golden-seeds): every request (subagents' and
    refused ones too) rebuilt whole from the transcripts, each equal to the wire form of the records before it,
    the facts inspector reads, and each compaction done again by inspector as Claude Code did it (the kept
    messages, the records written, what they send), with the original files unchanged."""
    from helpers import expand_golden, sha256

    from conformance.compare import compare, request_differences, wire_differences
    from conformance.replay import replay

    folder = expand_golden(name, tmp_path)
    before = {p: sha256(p) for p in (folder / "projects").rglob("*.jsonl")}
    row = compare(folder)
    assert row.match, row.notes
    assert request_differences(folder) == []
    checked, wire = wire_differences(folder)
    assert checked > 0 and wire == []
    for r in replay(folder):
        assert r.ok, (r.boundary, r.what, r.detail)
    assert {p: sha256(p) for p in before} == before


def test_the_history_of_every_generated_run_holds_each_of_its_compactions(tmp_path):
    """The token story walks the history (`logical_chain`): every compaction of a main transcript is on it, however
    the compactions' kept records overlap (back-to-back compactions of runs 23026 and 23031 had left 1 and 5 off,
    and 10 other goldens some) and wherever a partial compaction keeps them (a REPL's "summarize from here" that
    kept an earlier compaction, run repl_14003, had cut the history there)."""
    from helpers import expand_golden

    from inspector.transcript.session import Session

    checked = 0
    for name in GENERATED:
        folder = expand_golden(name, tmp_path / name)
        for path in sorted((folder / "projects").glob("*/*.jsonl")):
            s = Session.load(path)
            bounds = [i for i, r in enumerate(s.records) if r.is_compact_boundary and not r.is_sidechain]
            on = set(s.conversation.logical_chain)
            assert [i for i in bounds if i not in on] == [], (name, bounds)
            checked += len(bounds)
    assert checked > 60


POST_TOKENS_SLACK = 5  # tokens: inspector counts 0-5 fewer than Claude Code on 276 compactions (not yet traced)


def test_a_compaction_counts_the_size_after_it_as_the_binary_does(tmp_path, monkeypatch):
    """postTokens, and the room the earlier messages get (the same sum), count the compaction's own records: not the
    session context, date, remote session and prompt snapshot written around an automatic one, nor the /compact
    command's own messages (inspector counted 160-167 and 108-116 tokens more than 2.1.328 and 2.1.332 did on every
    such compaction of 100 fresh runs). Every compaction the goldens replay, within a rounding of Claude Code's."""
    import orjson
    from helpers import expand_golden

    import inspector.compact as compact_module
    from conformance.replay import replay
    from inspector.compact.engine import rough_record

    made = []
    real = compact_module.compact

    def spy(s, req, **kw):
        res = real(s, req, **kw)
        ours = res.new_records[0]["compactMetadata"].get("postTokens") if res.new_records else None
        summary = next((r for r in res.new_records if r.get("isCompactSummary")), None)
        made.append((s.path, ours, summary))
        return res

    monkeypatch.setattr(compact_module, "compact", spy)
    kinds = set()
    checked = 0
    for name in ("gen_repl_16000", "gen_2004", "gen_repl_4", "manual_compact_resume", "reactive_ptl_sonnet45"):
        folder = expand_golden(name, tmp_path / name)
        made.clear()
        replay(folder)
        for cut, ours, summary in made:
            b_no = int(cut.parent.parent.name.rsplit("-", 1)[1])
            original = next(folder.glob(f"projects/*/{cut.name}"))
            recs = [orjson.loads(x) for x in original.read_bytes().splitlines()]
            at = [k for k, r in enumerate(recs) if r.get("subtype") == "compact_boundary"][b_no]
            meta = recs[at].get("compactMetadata") or {}
            if meta.get("postTokens") is None or ours is None or summary is None:
                continue
            # the replay's copy lies in another folder, whose path the summary names: count Claude Code's summary
            theirs = next(r for r in recs[at:] if r.get("isCompactSummary"))
            ours += rough_record(theirs) - rough_record(summary)
            kinds.add(meta.get("trigger"))
            checked += 1
            assert abs(ours - meta["postTokens"]) <= POST_TOKENS_SLACK, (name, b_no, ours, meta["postTokens"])
    assert checked >= 8 and kinds == {"auto", "manual"}


def test_a_1m_window_is_inferred_from_the_models_own_usage(tmp_path):
    """A session on claude-opus-5[1m] (555,000 tokens) switched to claude-opus-4-6: the 200k model's thresholds are
    not made 1M by the other model's usage (2.1.328 enforced 180,000, model-default, for it)."""
    from helpers import write_jsonl

    from inspector.tokens.series import session_thresholds
    from inspector.tokens.thresholds import Settings
    from inspector.transcript.session import Session

    v = {"version": "2.1.328"}
    recs = [
        user("u1", None, "go", **v),
        assistant("a1", "u1", usage=(10, 0, 555_000, 10), model="claude-opus-5", **v),
        user("u2", "a1", "more", **v),
        assistant("a2", "u2", usage=(10, 0, 50_000, 10), model="claude-opus-4-6", **v),
    ]
    s = Session.load(write_jsonl(tmp_path / "p" / "s.jsonl", recs))
    th = session_thresholds(s, Settings())
    assert (th.model, th.context_window, th.enforced, th.effective_window) == ("claude-opus-4-6", 200_000, True, 180_000)


def test_responses_of_an_earlier_process_do_not_refute_a_threshold(tmp_path):
    """Above the threshold for five responses with no compaction (the summarizer failed, then the breaker), the
    process exits; the next one compacts at its first check, far above the threshold: the threshold's own
    compaction, not "another threshold" (a generated 2.1.328 run)."""
    from builders import system
    from helpers import write_jsonl

    from inspector.tokens.explain import analyze
    from inspector.tokens.thresholds import Settings
    from inspector.transcript.session import Session

    v = {"version": "2.1.328"}
    recs, parent = [user("p", None, "run", **v)], "p"
    for n, tok in enumerate((40_000, 93_000, 120_000, 150_000, 200_000)):
        recs += [
            assistant(f"a{n}", parent, usage=(10, 0, tok, 10), model="claude-haiku-4-5", **v),
            user(f"r{n}", f"a{n}", "ok", **v),
        ]
        parent = f"r{n}"
    recs += [
        {"type": "cost-state", "sessionId": "S"},
        user("c", parent, "continue", **v),
        system(
            "b", None, "compact_boundary", logicalParentUuid="c", compactMetadata={"trigger": "auto", "preTokens": 202_000}, **v
        ),
        user("s", "b", "This session is being continued.", isCompactSummary=True, **v),
        assistant("z", "s", usage=(10, 0, 30_000, 10), model="claude-haiku-4-5", **v),
    ]
    s = Session.load(write_jsonl(tmp_path / "p" / "s.jsonl", recs))
    rep = analyze(s, Settings(auto_compact_window=100_000, sources=(("auto_compact_window", "CLAUDE_CODE_AUTO_COMPACT_WINDOW"),)))
    [e] = [e for e in rep.compactions if e.kind == "auto"]
    assert e.cause == "threshold" and not e.refuted, e.explanation


def test_a_compact_with_no_reply_before_the_last_round_keeps_nothing(tmp_path):
    """A /compact right after a compaction: the rounds to summarize hold no reply, 2.1.328's engine bails ("no
    assistant messages in summarize set") and its legacy compaction keeps nothing (generated runs, 3 of 3)."""
    from builders import system
    from helpers import write_jsonl

    from inspector.compact import compact
    from inspector.transcript.session import Session

    v = {"version": "2.1.328"}
    recs = [
        user("p", None, "run", promptId="x", **v),
        assistant("a0", "p", **v),
        system("b", None, "compact_boundary", logicalParentUuid="a0", compactMetadata={"trigger": "manual", "preTokens": 9}, **v),
        user("s", "b", "This session is being continued.", isCompactSummary=True, **v),
        assistant("a1", "s", **v),
    ]
    s = Session.load(write_jsonl(tmp_path / "p" / "s.jsonl", recs))
    res = compact(s, "compact", summarizer=_Fake())
    assert res.kept_uuids == () and "keeping nothing" in " ".join(res.notes)
    recs.insert(4, assistant("a2", "s", **v))  # a reply before the last round: a tail is kept again
    recs[-1]["parentUuid"] = "a2"
    s = Session.load(write_jsonl(tmp_path / "q" / "s.jsonl", recs))
    assert compact(s, "compact", summarizer=_Fake()).kept_uuids == ("a1",)


def test_attachments_folded_into_a_tool_result_with_blocks_each_end_in_a_newline_where_one_follows():
    """A file re-attached after a tool result whose content is a list (an Agent launch): its call and its result are
    each followed by a newline, as every block before another (2.1.328 in the generated runs)."""
    recs = [
        user("r", None, [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "launched"}]}]),
        {
            "type": "attachment",
            "uuid": "f",
            "parentUuid": "r",
            "attachment": {"type": "file"},
            "renderedRole": "user",
            "rendered": [
                {"content": "<system-reminder>\ncall\n</system-reminder>"},
                {"content": "<system-reminder>\nresult\n</system-reminder>"},
            ],
        },
    ]
    [m] = api_messages(recs)
    texts = [b["text"] for b in m["content"][0]["content"]]
    assert texts == [
        "launched\n",
        "<system-reminder>\ncall\n</system-reminder>\n",
        "<system-reminder>\nresult\n</system-reminder>",
    ]


def test_a_failed_compact_s_error_is_sent_as_user_text():
    """2.1.328 writes a failed /compact's stderr as a system local_command record, and sends it as user text."""
    err = "<local-command-stderr>Error during compaction: API Error: 400</local-command-stderr>"
    recs = [
        user("u", None, "go"),
        {"type": "system", "subtype": "local_command", "uuid": "e", "parentUuid": "u", "content": err},
        user("c", "e", "continue"),
    ]
    [m] = api_messages(recs)
    assert [b["text"] for b in m["content"]] == ["go\n", err + "\n", "continue"]


def _repl_session(tmp_path):
    """A 2.1.328 REPL session: two prompts (a bookkeeping attachment with nothing to send among the first's
    records, a turn_duration after each reply), a /compact between them and its breadcrumbs."""
    from builders import system
    from helpers import write_jsonl

    v = {"version": "2.1.328", "entrypoint": "cli"}
    recs = [
        user("p1", None, "first task", **v),
        {"type": "attachment", "uuid": "snap", "parentUuid": "p1", "attachment": {"type": "prompt_snapshot"}, **v},
        assistant("a1", "snap", usage=(10, 0, 30_000, 10), **v),
        system("d1", "a1", "turn_duration", durationMs=5, **v),
        user("cv", "d1", "<local-command-caveat>The command below was run directly</local-command-caveat>", isMeta=True, **v),
        user("cmd", "cv", "<command-name>/compact</command-name>\n            <command-message>compact</command-message>", **v),
        user("out", "cmd", "<local-command-stdout>Compacted (ctrl+o to see full summary)</local-command-stdout>", **v),
        user("p2", "out", "second task", **v),
        {"type": "attachment", "uuid": "ctx", "parentUuid": "p2", "attachment": {"type": "session_context", "context": {}}, **v},
        {"type": "attachment", "uuid": "snap2", "parentUuid": "ctx", "attachment": {"type": "prompt_snapshot"}, **v},
        assistant("a2", "snap2", usage=(10, 0, 40_000, 10), **v),
        system("d2", "a2", "turn_duration", durationMs=5, **v),
    ]
    return write_jsonl(tmp_path / "p" / "s.jsonl", recs)


def test_the_rewind_menu_of_2_1_3xx_offers_a_command_but_not_its_output(tmp_path):
    """Read from 2.1.328's menu filter and seen in its REPL in tmux (a generated REPL run picked the `/compact` row):
    a slash command's own record is offered, its output, the caveat and tool results are not."""
    from inspector.compact.base import make_slice
    from inspector.compact.engine import rewind_candidates
    from inspector.transcript.session import Session

    s = Session.load(_repl_session(tmp_path))
    assert [s.records[i].uuid for i in rewind_candidates(make_slice(s))] == ["p1", "cmd", "p2"]


def test_a_partial_compaction_divides_the_messages_claude_code_has(tmp_path):
    """2.1.328 in its REPL: "from" keeps the whole prefix (a prompt_snapshot with nothing to send too), "up to"
    keeps the trailing turn_duration the process has and a session_context but no prompt_snapshot (2.1.332), and
    neither summary says anything of messages kept after it."""
    from conformance.replay import _FakeText
    from inspector.compact import CompactRequest, compact
    from inspector.compact.engine import KEPT_AFTER
    from inspector.transcript.session import Session

    s = Session.load(_repl_session(tmp_path))
    res = compact(
        s, CompactRequest(strategy="partial", pivot="p2", direction="from"), summarizer=_FakeText("<summary>x</summary>")
    )
    assert list(res.kept_uuids) == ["p1", "snap", "a1", "d1", "cv", "cmd", "out"]
    assert res.new_records[0]["compactMetadata"]["messagesSummarized"] == 5  # p2 to the turn_duration
    up = compact(
        s, CompactRequest(strategy="partial", pivot="p2", direction="up_to"), summarizer=_FakeText("<summary>x</summary>")
    )
    # a tail keeps a session_context with nothing to send (2.1.332), not a prompt_snapshot
    assert list(up.kept_uuids) == ["p2", "ctx", "a2", "d2"]
    assert KEPT_AFTER not in up.summary and KEPT_AFTER not in res.summary


def test_a_repl_compact_writes_its_output_dimmed(tmp_path):
    """The REPL (entrypoint "cli") writes /compact's output line with the terminal's dim escapes (2.1.328 in tmux);
    shown by inspector, the escapes are never passed to the terminal."""
    from conformance.replay import _FakeText
    from inspector.compact import CompactRequest, compact
    from inspector.textutil import printable
    from inspector.transcript.session import Session

    s = Session.load(_repl_session(tmp_path))
    res = compact(s, CompactRequest(strategy="compact", trigger="manual"), summarizer=_FakeText("<summary>x</summary>"))
    out = [r for r in res.new_records if "local-command-stdout" in str((r.get("message") or {}).get("content"))]
    assert out and "\x1b[2mCompacted" in out[0]["message"]["content"]
    assert "\x1b" not in printable(out[0]["message"]["content"])


def test_a_parameter_claude_code_does_not_record_is_named(tmp_path):
    """With auto mode's beta, 2.1.328's REPL sends the classifier's `safeguards` with every request and records it
    with none: the rebuilt request says so instead of passing for whole."""
    from inspector.claude.requests import _not_recorded

    assert _not_recorded({"betas": ["claude-code-20250219", "afk-mode-2026-01-31"]}) == ["safeguards"]
    assert _not_recorded({"betas": ["claude-code-20250219"]}) == []
    sent = _req(params={"model": "m", "max_tokens": 10, "stream": True, "safeguards": [{"x": 1}]})
    assert whole_difference(sent, _rebuilt()) is not None  # unexplained, it differs
    assert whole_difference(sent, _rebuilt(), ["safeguards"]) is None
    assert "not sent" in str(whole_difference(_req(), _rebuilt(), ["safeguards"]))


def test_a_kept_trailing_turn_duration_is_saved_and_resumes_as_previewed(tmp_path):
    """A /compact of a REPL session ending in a turn_duration keeps it at the end of its tail (as 2.1.328 does); the
    saved session holds it, so the kept tail is on the resumed chain (a fresh generated REPL batch found the save
    refused: the record was kept but not written)."""
    from helpers import sha256

    from conformance.replay import _FakeText
    from inspector.compact import CompactRequest, compact
    from inspector.edit import save
    from inspector.transcript.session import Session

    path = _repl_session(tmp_path)
    before = sha256(path)
    s = Session.load(path)
    res = compact(s, CompactRequest(strategy="compact", trigger="manual"), summarizer=_FakeText("<summary>x</summary>"))
    assert list(res.kept_uuids)[-1] == "d2"
    out = save(s, res, out=tmp_path / "saved" / "new.jsonl", allow_live=True)
    saved = Session.load(out.path)
    chain = [saved.records[i].uuid for i in saved.conversation.chain]
    assert set(res.kept_uuids) <= set(chain)
    assert sha256(path) == before


def test_an_up_to_compaction_that_keeps_the_trailing_record_is_saved(tmp_path):
    """An "up to" compaction keeps the tail to the end, the trailing bookkeeping record too; in the saved file it hangs below the
    last message again, where the release's --resume continues from it (measured: 2.1.120 on), so the save's own
    check counts it as on the resumed chain (a fresh 2.1.332 REPL seed's save was refused)."""
    from conformance.replay import _FakeText
    from inspector.compact import CompactRequest, compact
    from inspector.edit import save
    from inspector.transcript.session import Session

    s = Session.load(_repl_session(tmp_path))
    res = compact(
        s, CompactRequest(strategy="partial", pivot="p2", direction="up_to"), summarizer=_FakeText("<summary>x</summary>")
    )
    assert list(res.kept_uuids)[-1] == "d2"
    out = save(s, res, out=tmp_path / "saved" / "new.jsonl", allow_live=True)
    saved = Session.load(out.path)
    assert saved.records[saved.conversation.trailing_leaf].uuid == "d2"


def test_a_compact_that_compacted_nothing_keeps_its_output_on_the_resumed_chain(tmp_path):
    """A /compact that had nothing to compact writes its output as a `local_command` system record below the command
    (the file's leaf is the command). 2.1.328 resumes from that record and sends it: an "up to" compaction kept it,
    the preview showed it, and the save's own check, reading the chain only to the command, refused the save (fresh
    2.1.328 seed 28002; resumed by the binary once the check read the chain the release resumes)."""
    from builders import system
    from helpers import sha256, write_jsonl

    from conformance.replay import _FakeText
    from inspector.claude.measured import resumed_chain
    from inspector.compact import CompactRequest, compact
    from inspector.edit import save
    from inspector.transcript.session import Session

    path = _repl_session(tmp_path)
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    v = {"version": "2.1.328", "entrypoint": "cli"}
    recs += [
        user("cv2", "d2", "<local-command-caveat>The command below was run directly</local-command-caveat>", isMeta=True, **v),
        user("cmd2", "cv2", "<command-name>/compact</command-name>\n            <command-message>compact</command-message>", **v),
        system(
            "nothing",
            "cmd2",
            "local_command",
            content="<local-command-stdout>Not enough messages to compact.</local-command-stdout>",
            **v,
        ),
    ]
    path = write_jsonl(tmp_path / "q" / "s.jsonl", recs)
    before = sha256(path)
    s = Session.load(path)
    assert s.records[s.conversation.leaf].uuid == "cmd2" and s.records[s.conversation.trailing_leaf].uuid == "nothing"
    res = compact(
        s, CompactRequest(strategy="partial", pivot="p2", direction="up_to"), summarizer=_FakeText("<summary>x</summary>")
    )
    assert "Not enough messages to compact." in json.dumps(res.api_messages)
    out = save(s, res, out=tmp_path / "saved" / "new.jsonl", allow_live=True)  # refused before: the check's chain
    saved = Session.load(out.path)
    assert saved.records[resumed_chain(saved.conversation, saved.version)[-1]].uuid == "nothing"
    assert sha256(path) == before


def test_the_fake_reports_a_reply_sampled_in_iterations_as_the_api_does():
    """The era matrix's "iterations" probe: each iteration reports the request's context, the top level their sum;
    a summary is one plain reply. Streamed, the iterations come with message_start."""
    import json
    import urllib.request

    from conformance.fake_api import FakeAPI

    def post(url: str, body: dict) -> bytes:
        req = urllib.request.Request(url + "/v1/messages", json.dumps(body).encode(), {"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.read()

    with FakeAPI(Script(turns=2, start=90_000, step=0, iterations=2)) as fake:
        msg = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 10,
            "messages": [{"role": "user", "content": "go"}],
            "tools": [{"name": "Bash", "input_schema": {"type": "object"}}],
        }
        u = json.loads(post(fake.url, msg))["usage"]
        assert [i["input_tokens"] + i["output_tokens"] for i in u["iterations"]] == [90_000, 90_000]
        assert u["input_tokens"] + u["output_tokens"] == 180_000 and {i["type"] for i in u["iterations"]} == {"message"}
        events = post(fake.url, dict(msg, stream=True)).decode()
        start = json.loads(next(line[6:] for line in events.splitlines() if '"message_start"' in line))
        assert len(start["message"]["usage"]["iterations"]) == 2
        ask = {"role": "user", "content": "Your task is to create a detailed summary: answer in <summary> tags"}
        summary = json.loads(post(fake.url, dict(msg, messages=[ask])))
        assert "iterations" not in summary["usage"]


def test_a_nightly_takes_the_kept_scenarios_no_golden_holds_in_a_rotation_that_reaches_all():
    """`--random` runs the kept scenarios too; with 162 of them it took 32 minutes of the 30 it has. Those the suite
    holds as goldens are replayed at every test run and are left out; of the rest, at most KEPT_PER_RUN in a rotation
    from the seed, which other seeds carry on."""
    from conformance.generated import KEPT_PER_RUN, _shape, kept_for, load_found

    found = load_found()
    golden = {f.name for f in found if (GOLDENS / f.name.replace("found_", "gen_", 1)).is_dir()}
    assert golden, "some kept scenarios have a golden (found_23035 and gen_23035)"
    rest = [f.name for f in found if f.name not in golden]
    for seed in (0, 37000, 1000):
        got = [f.name for f in kept_for(seed, set())]
        assert len(got) == min(KEPT_PER_RUN, len(rest)) == len(set(got)) and not golden & set(got)
    # as many nights as it takes reach every one (seeds a rotation's length apart; the list grows with every finding)
    nights = [[f.name for f in kept_for(k * KEPT_PER_RUN, set())] for k in range(-(-len(rest) // KEPT_PER_RUN))]
    assert set().union(*nights) == set(rest)
    asked = {_shape(found[0])}  # a kept one the seeds ask for again runs once, as a seed
    assert found[0].name not in {f.name for f in kept_for(0, asked, limit=len(found))}


def test_a_compaction_a_refusal_caused_is_not_called_a_lowered_threshold(tmp_path):
    """gen_2010 (2.1.328) compacted three times when the API refused a request as too long, at about 97,000 tokens
    against a threshold of 967,000: the refusal is the cause, so no anomaly says a lower threshold was set."""
    from helpers import expand_golden

    from inspector.tokens.explain import analyze
    from inspector.transcript.session import Session

    folder = expand_golden("gen_2010", tmp_path)
    (t,) = [p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts]
    rep = analyze(Session.load(t))
    refused = [e for e in rep.compactions if e.cause == "prompt_too_long" and e.pre_tokens < 0.9 * e.threshold]
    assert len(refused) == 3
    assert not [a for a in rep.anomalies if "fired well below the threshold" in a]


def test_some_repl_scenarios_ask_a_question_answered_in_the_repl():
    """A generated REPL scenario may ask the user a question (the fake's AskUserQuestion call, answered with its first
    option): the tool offered, the step answered, the input one the tool takes; kept scenarios read back the same."""
    from conformance.generate import QUESTION_SHARE, repl_scenario

    scs = [repl_scenario(70_000 + k) for k in range(60)]
    asking = [sc for sc in scs if any(st.answer for st in sc.steps)]
    assert 0.2 * len(scs) < len(asking) < 2 * QUESTION_SHARE * len(scs)
    for sc in asking:
        (step,) = [st for st in sc.steps if st.answer]
        assert "AskUserQuestion" in sc.tool.split(",") and "a question" in sc.doc
        ((tool, inp),) = step.script.calls
        q = json.loads(inp)["questions"]
        assert tool == "AskUserQuestion" and len(q) == 1 and 2 <= len(q[0]["options"]) <= 4
        assert Scenario.from_dict(json.loads(json.dumps(sc.as_dict()))) == sc  # as found.json keeps it
    assert all("AskUserQuestion" not in sc.tool for sc in scs if sc not in asking)


def test_the_moment_a_pick_was_asked_for_counts_agents_told_while_idle_too():
    """The harness dates a rewind pick by the agents Claude Code still re-announced (it forgets one 30 s after telling
    the model it ended). An agent told while the model was idle is a user turn of its own, not a queued command: the
    engine counts it (seed 67005), and so must the dating, or the pick is dated too late and the agent dropped (fresh
    2.1.328 REPL seed 74013: four agents re-announced, three replayed)."""
    from conformance.replay import _asked_at

    def note(aid: str) -> str:
        return f"<task-notification>\n<task-id>{aid}</task-id>\n<status>completed</status>\n</task-notification>"

    before = [
        {"type": "user", "timestamp": "2026-12-04T18:05:45.758Z", "message": {"role": "user", "content": note("idle1")}},
        {
            "type": "attachment",
            "timestamp": "2026-12-04T18:05:50.000Z",
            "attachment": {"type": "queued_command", "prompt": note("busy1")},
        },
        {"type": "assistant", "timestamp": "2026-12-04T18:06:07.100Z", "message": {"role": "assistant", "content": []}},
    ]
    atts = [{"type": "attachment", "attachment": {"type": "task_status", "taskId": a}} for a in ("idle1", "busy1")]
    when, words = _asked_at(before, atts, "2026-12-04T18:06:17.931Z", True)
    assert when.isoformat() == "2026-12-04T18:06:15.757000+00:00" and "re-announced tell" in words
    assert _asked_at(before, atts, "2026-12-04T18:06:17.931Z", False)[0].isoformat() == "2026-12-04T18:06:17.931000+00:00"


def test_a_forks_copy_of_a_compaction_is_not_another_compaction(tmp_path):
    """--fork-session (2.1.332 seeds 84002, 84014) starts a new transcript with a copy of the last compaction's
    boundary (same uuid, same time): the replay pairs each compaction with its served summary by time across the
    run's transcripts and leaves the copy out; one transcript keeps its file order."""
    import orjson

    from conformance.replay import _boundary_order

    def boundary(u: str, ts: str) -> dict:
        return {"type": "system", "subtype": "compact_boundary", "uuid": u, "timestamp": f"2026-12-06T02:39:{ts}Z"}

    first = tmp_path / "a.jsonl"
    fork = tmp_path / "b.jsonl"
    first.write_bytes(
        b"".join(
            orjson.dumps(r) + b"\n"
            for r in [
                {"type": "user", "uuid": "p", "timestamp": "2026-12-06T02:39:50.000Z"},
                boundary("b1", "54.757"),
                boundary("b3", "58.000"),
            ]
        )
    )
    fork.write_bytes(
        b"".join(
            orjson.dumps(r) + b"\n"
            for r in [
                {"type": "queue-operation", "timestamp": "2026-12-06T02:39:55.810Z"},
                boundary("b1", "54.757"),
                boundary("b2", "56.055"),
            ]
        )
    )
    order, copies = _boundary_order([first, fork], [10, 20, 30])
    assert copies == {(fork, 1)}
    assert order == {(first, 1): 10, (fork, 2): 20, (first, 2): 30}
    one, none = _boundary_order([first], [7, 8])
    assert one == {(first, 1): 7, (first, 2): 8} and none == set()


def test_the_thresholds_compared_are_the_last_working_steps(tmp_path):
    """Claude Code's side of the facts reads the thresholds of the last step that sent a turn or judged its context
    (its debug log); a step that only compacted without judging (a /compact after a fork, 2.1.332 seed 86197) is not
    it, so inspector's side takes the transcript that step's process wrote."""
    import json as _json

    from conformance.compare import last_working_step

    steps = ["autocompact: tokens=1 threshold=2", "nothing", "autocompact: x", "summarize"]
    (tmp_path / "debug.log").write_text("".join(f"=== step {n} ===\n{line}\n" for n, line in enumerate(steps)))
    requests = [{"kind": "turn", "step": 1}, {"kind": "summary", "step": 3}]
    (tmp_path / "requests.json").write_text(_json.dumps({"requests": requests, "messages": {}, "system": {}, "tools": {}}))
    assert last_working_step(tmp_path) == 2
    (tmp_path / "debug.log").write_text("no steps here")
    assert last_working_step(tmp_path) is None


def test_the_crash_shapes_are_cut_where_a_killed_process_leaves_a_file(tmp_path):
    """conformance/crash.py's cut points, on a transcript of every shape: each cut ends in the record that names its
    shape, a draw takes at most N of each, and the file's own last record is no crash."""
    from builders import attachment, system, tool_result, tool_use

    from conformance.crash import KINDS, cuts_of, kind_of

    think = {"type": "thinking", "thinking": "hm", "signature": "s"}
    recs = [
        user("u1", None, "a prompt", sec=0),  # after_prompt
        attachment("at1", "u1", {"type": "date", "date": "x"}, sec=1),  # after_attachment
        assistant("a1", "at1", [think], sec=2, mid="m1"),  # thinking_only_end (the reply goes on)
        assistant("a2", "a1", [{"type": "text", "text": "so"}], sec=3, mid="m1"),  # inside_reply
        assistant("a3", "a2", [tool_use("c1")], sec=4, mid="m1"),  # call_without_result (its last fragment)
        tool_result("r1", "a3", "c1", sec=5),  # after_result
        assistant("e1", "r1", [{"type": "text", "text": "API Error"}], sec=6, isApiErrorMessage=True),  # after_api_error
        system("s1", "e1", "turn_duration", sec=7),  # after_system
        system("b1", None, "compact_boundary", sec=8, logicalParentUuid="s1"),  # after_boundary
        user("sum", "b1", "This session is being continued", sec=9, isCompactSummary=True),  # after_summary
        user("u9", "sum", "the last prompt", sec=10),  # the file's end: no cut
    ]
    want = [
        "after_prompt",
        "after_attachment",
        "thinking_only_end",
        "inside_reply",
        "call_without_result",
        "after_result",
        "after_api_error",
        "after_system",
        "after_boundary",
        "after_summary",
    ]
    assert [kind_of(recs, i) for i in range(len(recs) - 1)] == want and sorted(want) == sorted(KINDS)
    p = tmp_path / "s.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    cuts = cuts_of([p, p], 1, seed=0)
    assert sorted(c.kind for c in cuts) == sorted(KINDS) and {c.lines for c in cuts} == set(range(1, len(recs)))
    assert all(kind_of(recs, c.lines - 1) == c.kind for c in cuts)
    assert len(cuts_of([p, p], 2, seed=0)) == 2 * len(KINDS)


def test_the_fake_tells_a_subagent_s_prompt_from_a_summary_that_quotes_it():
    """A saved compaction of a subagent's transcript, resumed, starts with a summary that quotes the subagent's prompt:
    the fake answers it as a turn, not as a subagent (2.0.76 seed 143103: 8 round trips read as "sent no request")."""
    from conformance.fake_api import SUBAGENT_MARK, _asks_a_subagent

    prompt = f"{SUBAGENT_MARK} look around (step 4)"
    summary = "This session is being continued from a previous conversation that ran out of context.\n\n" + prompt
    assert _asks_a_subagent(prompt) and _asks_a_subagent([{"type": "text", "text": prompt}])
    assert _asks_a_subagent([{"type": "text", "text": "<system-reminder>x</system-reminder>"}, {"type": "text", "text": prompt}])
    assert not _asks_a_subagent(summary) and not _asks_a_subagent([{"type": "text", "text": summary}])
    assert not _asks_a_subagent("run the checks") and not _asks_a_subagent(None)


def test_blank_lines_in_a_run_s_transcripts_are_no_records(tmp_path):
    """2.0.76 wrote a session file whose only line is blank (generated seed 178000): the harness read it as a record
    and stopped. A run with blank lines, one file of nothing else and one inside the transcript, is compared and
    replayed as it is without them (each compaction cut at its own line)."""
    from helpers import golden_transcript, saved_run

    from conformance.compare import compare
    from conformance.replay import replay

    plain = saved_run(tmp_path / "plain", "gen_170000_2.1.200")
    blank = saved_run(tmp_path / "blank", "gen_170000_2.1.200")
    t = golden_transcript(blank)
    lines = t.read_bytes().splitlines(keepends=True)
    t.write_bytes(b"".join(lines[:3]) + b"\n" + b"".join(lines[3:]))
    (t.parent / "398153a4-7b75-40fc-96ab-8728b4249356.jsonl").write_bytes(b"\n")

    def seen(folder):
        row = compare(folder)
        return row.match, row.notes, [(r.boundary, r.what, r.ok, r.detail) for r in replay(folder)]

    got, want = seen(blank), seen(plain)
    assert want[2], "the saved run has compactions to replay"
    assert got == want


def test_a_release_that_records_no_request_is_checked_by_the_replies_it_received(tmp_path):
    """Before 2.1.3xx no api-request row records what was sent: each request the fake answered is checked against
    the chain its reply hangs from (the fake logs the reply's message id, which its records carry). The reminders
    such a release records nowhere (the user context, attachments: hooks' output, the todo reminder a tool result
    ends with) are left out of what was sent, and nothing else: 2.1.88 seed 178001, a session with two hooks and
    compactions, every request identical but for them; a tool result changed in the transcript is found."""
    from helpers import golden_transcript, saved_run

    from conformance.compare import wire_differences
    from conformance.runner import load_requests

    folder = saved_run(tmp_path, "gen_178001_2.1.88")
    sent = [q for q in load_requests(folder) if q["kind"] == "turn" and q.get("reply_id")]
    texts = json.dumps([q["messages"] for q in sent])
    for unrecorded in ("As you answer the user's questions", "UserPromptSubmit hook success", "The TodoWrite tool hasn't"):
        assert unrecorded in texts  # sent, and in no record
    checked, diffs = wire_differences(folder)
    assert checked == 19 and diffs == []
    t = golden_transcript(folder)
    t.write_text(t.read_text().replace('"content":"File created successfully', '"content":"File made successfully', 1))
    checked, diffs = wire_differences(folder)
    assert checked == 19 and diffs and all("File made" in d for d in diffs), diffs


def test_what_an_old_release_records_nowhere_is_left_out_and_nothing_else():
    """`_without_unrecorded`, case by case: before 2.1.268 a reminder's text is in no record, so what inspector
    cannot have is left out of what was sent (a reminder block, a system-role entry's text, the reminders folded
    into a tool result, whose text Claude Code trims first); what it has is compared as sent."""
    from conformance.compare import _without_unrecorded

    rem = "<system-reminder>\nThe TodoWrite tool hasn't been used recently.\n</system-reminder>"
    read = "     1→line one\n     2→\t"
    ours = [
        {"role": "user", "content": [{"type": "text", "text": "run the checks"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": read}]},
    ]
    sent = [
        {"role": "user", "content": [{"type": "text", "text": rem}, {"type": "text", "text": "run the checks"}]},
        {"role": "system", "content": [{"type": "text", "text": "SessionStart:startup hook success: notes"}]},
        ours[1],
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": read.strip() + "\n\n" + rem}]},
    ]
    assert _without_unrecorded(sent, ours, "2.1.250") == ours
    assert _without_unrecorded(sent, ours, "2.1.268") == sent  # from 2.1.268 the records hold them: as sent
    # what inspector has is not left out: a changed text, or a reminder it has and the request lacks, still differ
    other = [ours[0], ours[1], {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}]
    assert _without_unrecorded(sent, other, "2.1.250") != other
    kept = [{**ours[0], "content": [{"type": "text", "text": rem}, {"type": "text", "text": "run the checks"}]}, *ours[1:]]
    assert _without_unrecorded(sent, kept, "2.1.250") == kept  # a reminder a record holds is compared, not dropped
    assert _without_unrecorded(sent[1:], kept, "2.1.250") != kept


def test_a_window_the_fake_let_a_reply_pass_is_the_one_the_run_names(tmp_path):
    """The fake does not refuse a request past its model's 200,000 window, as the API would: a reply above it reads as
    a 1M window, which no real transcript can contradict. The run's debug log names the window Claude Code ran with:
    it is given to inspector only when every step's is at most 200,000 and no step asked for [1m]."""
    from conformance.compare import _grew_past_the_window

    (tmp_path / "projects" / "p").mkdir(parents=True)
    reply = {"type": "assistant", "message": {"usage": {"input_tokens": 190_000, "cache_read_input_tokens": 12_991}}}
    (tmp_path / "projects" / "p" / "s.jsonl").write_text(json.dumps(reply) + "\n")
    steps = [{"argv": ["claude", "-p", "go", "--model", "claude-sonnet-4-5"]}]
    (tmp_path / "debug.log").write_text("autocompact: tokens=4 threshold=153000 effectiveWindow=180000\n")
    assert _grew_past_the_window(tmp_path, {"steps": steps}) == {180_000}
    assert _grew_past_the_window(tmp_path, {"steps": [{"argv": ["claude", "--model", "claude-sonnet-4-5[1m]"]}]}) == set()
    (tmp_path / "debug.log").write_text("autocompact: tokens=4 threshold=967000 effectiveWindow=980000\n")
    assert _grew_past_the_window(tmp_path, {"steps": steps}) == set()
    (tmp_path / "debug.log").write_text("autocompact: tokens=4 threshold=153000 effectiveWindow=180000\n")
    reply["message"]["usage"]["cache_read_input_tokens"] = 0
    (tmp_path / "projects" / "p" / "s.jsonl").write_text(json.dumps(reply) + "\n")
    assert _grew_past_the_window(tmp_path, {"steps": steps}) == set()  # no reply above 200,000


def test_a_preserved_segment_counts_the_records_from_its_tail_up_to_its_head():
    """Before 2.1.3xx a compaction that keeps messages names them as a segment (head, anchor, tail), not a list: the
    harness read every such compaction as keeping none (2.1.88 REPL seed 181001: a partial compaction that kept 3)."""
    from conformance.compare import _segment_length

    recs = [{"uuid": "a", "parentUuid": None}, {"uuid": "b", "parentUuid": "a"}, {"uuid": "c", "parentUuid": "b"}]
    assert _segment_length(recs, {"preservedSegment": {"headUuid": "b", "anchorUuid": "x", "tailUuid": "c"}}) == 2
    assert _segment_length(recs, {"preservedSegment": {"headUuid": "a", "anchorUuid": "x", "tailUuid": "c"}}) == 3
    assert _segment_length(recs, {"preservedSegment": {"headUuid": "z", "anchorUuid": "x", "tailUuid": "c"}}) == 0
    assert _segment_length(recs, {}) == 0


@pytest.mark.parametrize("name", ["gen_181029_2.1.88", "found_113015_2.1.88"])
def test_the_last_step_s_thresholds_are_its_own_model_s_where_no_record_names_it(name, tmp_path):
    """The thresholds compared are the last working step's (Claude Code's debug log names them). Its model is named
    by no record where 2.1.88 writes none: a step on claude-opus-4-6[1m] after three on claude-opus-4-0 (seed 181029:
    below 200,000 tokens a 1M window shows nowhere), and a step on claude-3-5-sonnet whose one request was refused as
    too long (kept seed 113015: no reply of it). The harness gives each step's model, as a user would tell inspector
    (--one-m, --model): Claude Code's windows of 980,000 and 191,808 are inspector's."""
    from helpers import saved_run

    from conformance.compare import compare

    row = compare(saved_run(tmp_path, name))
    assert row.match, row.notes
    assert row.inspector.effective_window == {"gen_181029_2.1.88": 980_000, "found_113015_2.1.88": 191_808}[name]


@pytest.mark.parametrize("name, held", [("gen_182000_2.1.150", True), ("found_repl_203_2.1.150", False)])
def test_what_a_2_1_150_process_held_is_checked_as_it_held_it(name, held, tmp_path, monkeypatch):
    """Two shapes of a 2.1.150 file whose chain is not what its process sent: a resume after a /compact whose
    summarizer failed put "No response requested." below the command and sent the command's stderr (the file's leaf
    then) after it, with its prompt (seed 182000); its REPL wrote a process's first reply before its prompt (kept REPL
    seed 203). Every answered request is checked identical; without the stderr held, the resumed requests differ."""
    from helpers import saved_run

    import conformance.compare as compare

    folder = saved_run(tmp_path, name)
    checked, diffs = compare.wire_differences(folder)
    assert checked > 10 and diffs == []
    if held:
        monkeypatch.setattr(compare, "_held_output", lambda s, chain: chain)
        assert any("local-command-stderr" in d for d in compare.wire_differences(folder)[1])


def test_a_fork_s_copies_of_its_session_s_replies_are_checked_in_that_session(tmp_path, monkeypatch):
    """2.1.273 writes a fork's copies of its session's records after the fork's own prompt, stamped as the originals:
    nothing in the fork's file tells them from its own (kept seed 86197). The session a step resumed is checked first,
    so each reply is checked where it was made; the fork's file, sorted first by its name, had one request compared
    with the fork's chain."""
    from helpers import saved_run

    import conformance.compare as compare

    folder = saved_run(tmp_path, "found_86197_2.1.273")
    checked, diffs = compare.wire_differences(folder)
    assert checked == 15 and diffs == []
    run = json.loads((folder / "run.json").read_text())
    for st in run["steps"]:
        st["argv"] = [a for a in st["argv"] if a != "--resume"]  # (the order of the names alone)
    (folder / "run.json").write_text(json.dumps(run))
    assert compare.wire_differences(folder)[1] != []


def test_the_round_trip_s_order_check_joins_a_reply_s_fragments_as_the_wire_does():
    """A call run while its reply streamed has its result written before the reply's next fragment (2.1.219 seed
    189059): the request sends the reply's calls together, then the results, and the round trip's order check reads
    the saved records so (it had failed a resume that sent exactly the preview)."""
    from types import SimpleNamespace

    from conformance.resume import in_order

    def call(tid):
        return {"type": "tool_use", "id": tid, "name": "Bash", "input": {}}

    def result(tid):
        return {"type": "tool_result", "tool_use_id": tid, "content": "ok"}

    recs = [
        user("u1", None, "go", sec=0),
        assistant("a1", "u1", [{"type": "text", "text": "Running step 8."}], sec=1, mid="m1"),
        assistant("a2", "a1", [call("t1")], sec=1, mid="m1"),
        user("r1", "a2", [result("t1")], sec=2),
        assistant("a3", "r1", [call("t2")], sec=2, mid="m1"),
        user("r2", "a3", [result("t2")], sec=3),
    ]
    view = [SimpleNamespace(role=r["type"], body=r) for r in recs]
    sent = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "text", "text": "Running step 8."}, call("t1"), call("t2")]},
        {"role": "user", "content": [result("t1"), result("t2")]},
    ]
    ok, why = in_order(SimpleNamespace(view=view), sent)
    assert ok, why
    swapped = [sent[0], {"role": "assistant", "content": [call("t2"), call("t1")]}, sent[2]]
    assert not in_order(SimpleNamespace(view=view), swapped)[0]
