"""The model in force: 2.1.3xx announces the model a process runs (a `model` attachment) as it starts or switches,
before any reply of it. A session resumed with another model, or switched with /model, is measured against the new
model's thresholds from that announcement on (found on 2.1.332: a session resumed on claude-foo-1 whose requests
were all refused was explained by the earlier claude-sonnet-4-5's rules)."""

from __future__ import annotations

from typing import Any

import orjson
from builders import assistant, attachment, user
from helpers import write_jsonl

from inspector.tokens.explain import analyze
from inspector.tokens.now import context_now
from inspector.tokens.series import FileFacts
from inspector.tokens.thresholds import Settings
from inspector.transcript.session import Session

V = "2.1.332"


def announce(uuid: str, parent: str, model: str, sec: int) -> dict[str, Any]:
    text = f"You are {model}."
    att = {"type": "model", "identity": {"modelId": model, "marketingName": "X"}, "text": text}
    return attachment(uuid, parent, att, sec, f"<system-reminder>\n{text}\n</system-reminder>", version=V, renderedRole="system")


def _session(tmp_path, *, switch: bool) -> Session:
    recs = [
        user("u1", None, "hi", version=V),
        assistant("a1", "u1", usage=(10, 100, 150_000, 50), model="claude-sonnet-4-5", sec=1, version=V),
        user("u2", "a1", "go on", sec=2, version=V),
    ]
    if switch:
        recs.append(announce("m1", "u2", "claude-foo-1", 3))
    return Session.load(write_jsonl(tmp_path / "proj" / "s.jsonl", recs))


def test_a_later_announcement_sets_the_model_and_its_thresholds(tmp_path) -> None:
    s = _session(tmp_path, switch=True)
    assert s.main_model == "claude-foo-1"
    assert s.model_at(len(s.records)) == "claude-foo-1" and s.model_at(3) == "claude-sonnet-4-5"
    assert FileFacts.of(s.records).last_main_model == "claude-foo-1"
    rep = analyze(s, Settings())
    # 2.1.332: an unknown model gets a 1M window, enforced at 967,000; claude-sonnet-4-5 a 200k one, not enforced
    assert (rep.thresholds.model, rep.thresholds.context_window, rep.thresholds.enforced) == ("claude-foo-1", 1_000_000, True)
    now = context_now(s, Settings())
    assert now is not None and now.thresholds.model == "claude-foo-1"


def test_without_one_the_last_reply_decides(tmp_path) -> None:
    s = _session(tmp_path, switch=False)
    assert s.main_model == "claude-sonnet-4-5"
    rep = analyze(s, Settings())
    assert (rep.thresholds.context_window, rep.thresholds.enforced) == (200_000, False)


def test_the_announced_model_keeps_its_1m(tmp_path) -> None:
    recs = [
        user("u1", None, "hi", version=V),
        assistant("a1", "u1", usage=(10, 100, 150_000, 50), model="claude-sonnet-4-5", sec=1, version=V),
        announce("m1", "a1", "claude-sonnet-4-5[1m]", 2),
    ]
    s = Session.load(write_jsonl(tmp_path / "p" / "s.jsonl", recs))
    assert s.main_model == "claude-sonnet-4-5[1m]"
    assert analyze(s, Settings()).thresholds.context_window == 1_000_000


def test_a_reply_after_an_announcement_keeps_its_1m_and_usage_infers_no_window(tmp_path) -> None:
    """An announced session names its [1m]: a reply of the announced model is that model with its [1m]; one without
    it has the catalog's window, whatever usage was reported (the fake API reports any size; the real one refuses)."""
    big = (10, 100, 206_000, 50)
    with_1m = [
        user("u1", None, "hi", version=V),
        announce("m1", "u1", "claude-sonnet-4-5[1m]", 1),
        assistant("a1", "m1", usage=big, model="claude-sonnet-4-5", sec=2, version=V),
    ]
    s = Session.load(write_jsonl(tmp_path / "a" / "s.jsonl", with_1m))
    assert s.main_model == "claude-sonnet-4-5[1m]" and FileFacts.of(s.records).last_main_model == "claude-sonnet-4-5[1m]"
    assert analyze(s, Settings()).thresholds.context_window == 1_000_000
    without = [dict(r) for r in with_1m]
    without[1] = announce("m1", "u1", "claude-opus-4-6", 1)
    without[2] = assistant("a1", "m1", usage=big, model="claude-opus-4-6", sec=2, version=V)
    s = Session.load(write_jsonl(tmp_path / "b" / "s.jsonl", without))
    th = analyze(s, Settings()).thresholds
    assert (s.main_model, th.context_window, th.effective_window) == ("claude-opus-4-6", 200_000, 180_000)
    # a release that announces nothing: a usage above 200k still means a 1M window it did not record
    old = [user("u1", None, "hi"), assistant("a1", "u1", usage=big, model="claude-opus-4-6", sec=2)]
    s = Session.load(write_jsonl(tmp_path / "c" / "s.jsonl", old))
    assert analyze(s, Settings()).thresholds.context_window == 1_000_000


def _switched_session(tmp_path):
    """A 2.1.332 session run on claude-opus-4-6 (whose tools list the Task tools), then resumed on claude-opus-5
    (which removes them)."""
    tools = ["SendMessage", "TaskCreate", "TaskGet", "WebFetch"]
    listed = (
        "<system-reminder>\nThe following deferred tools are now available via ToolSearch. Load one before use:\n"
        "{}\n</system-reminder>"
    )
    recs = [
        user("u1", None, "hi", version=V),
        announce("m1", "u1", "claude-opus-4-6", 1),
        attachment(
            "d1",
            "m1",
            {"type": "deferred_tools_delta", "addedNames": tools, "addedLines": tools, "removedNames": []},
            1,
            listed.format("\n".join(tools)),
            version=V,
        ),
        assistant("a1", "d1", usage=(10, 100, 50_000, 50), model="claude-opus-4-6", sec=2, version=V),
        user("u2", "a1", "go on", sec=3, version=V),
        announce("m2", "u2", "claude-opus-5", 4),
        attachment(
            "d2",
            "m2",
            {"type": "deferred_tools_delta", "addedNames": [], "addedLines": [], "removedNames": ["TaskCreate", "TaskGet"]},
            4,
            "<system-reminder>\ngone\n</system-reminder>",
            version=V,
        ),
        assistant("a2", "d2", usage=(10, 100, 60_000, 50), model="claude-opus-5", sec=5, version=V),
        user("u3", "a2", "and more", sec=6, version=V),
        assistant("a3", "u3", usage=(10, 100, 70_000, 50), model="claude-opus-5", sec=7, version=V),
    ]
    return Session.load(write_jsonl(tmp_path / "p" / "s.jsonl", recs))


def test_a_compaction_for_a_model_the_session_ran_re_announces_that_models_tools(tmp_path) -> None:
    from conformance.replay import _FakeText
    from inspector.compact import CompactRequest, compact

    s = _switched_session(tmp_path)

    def tools(**kw):
        res = compact(s, CompactRequest("compact", trigger="manual", **kw), summarizer=_FakeText("<summary>done</summary>"))
        got = [r["attachment"] for r in res.new_records if (r.get("attachment") or {}).get("type") == "deferred_tools_delta"]
        return [sorted(a.get("addedNames") or ()) for a in got], res.notes

    names, _ = tools()
    assert names == [["SendMessage", "WebFetch"]]  # the session's last model (opus-5): no Task tools
    names, _ = tools(resume_model="claude-opus-4-6")
    assert names == [["SendMessage", "TaskCreate", "TaskGet", "WebFetch"]]
    # a model the session never ran: its list, with the task tools as the release gives that model (2.1.332's mce)
    names, notes = tools(resume_model="claude-haiku-4-5")
    assert names == [["SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate", "WebFetch"]]
    assert not any("never ran" in n for n in notes)
    names, notes = tools(resume_model="claude-sonnet-5")
    assert names == [["SendMessage", "WebFetch"]] and not any("never ran" in n for n in notes)


def test_the_cli_takes_the_model_to_resume_with(tmp_path) -> None:
    from helpers import run_cli

    s = _switched_session(tmp_path)
    code, out, err = run_cli("compact", str(s.path), "--json", "--resume-model", "claude-haiku-4-5")
    assert code == 0, err
    import orjson

    assert "TaskList" in out  # the task tools re-announced, as claude-haiku-4-5 gets them
    code, out, _ = run_cli("compact", str(s.path), "--json")
    assert not any("never ran" in n for n in orjson.loads(out)["notes"])


def test_the_thresholds_facts_are_remembered_until_the_session_reads_more(tmp_path):
    """session_thresholds walks every record for its facts once per read of the session, not once per call; a session
    that reads on (a live one) is walked again, and its new model and peak count."""
    from inspector.tokens.series import session_facts, session_thresholds

    p = tmp_path / "s.jsonl"
    write_jsonl(p, [user("u1", None, "hi", version=V), assistant("a1", "u1", [{"type": "text", "text": "ok"}], 1, version=V)])
    s = Session.load(p)
    first = session_facts(s)
    assert session_facts(s) is first and first.last_model == "claude-sonnet-4-6"
    before = session_thresholds(s, Settings())
    with open(p, "ab") as f:
        grown = assistant("a2", "a1", [{"type": "text", "text": "ok"}], 2, usage=(10, 150_000, 0, 50), model="claude-opus-4-6")
        f.write(orjson.dumps(grown) + b"\n")
    assert s.update() == 1
    after = session_facts(s)
    assert after is not first and after.last_model == "claude-opus-4-6" and after.peak == FileFacts.of(s.records).peak
    assert session_thresholds(s, Settings()).model == "claude-opus-4-6" != before.model


def test_a_preview_resumed_on_a_retired_opus_is_opus_5_5_s(tmp_path) -> None:
    """2.1.328 and 2.1.332 run `--model claude-opus-4-1` as claude-opus-5-5 (generated runs): a preview asked for with
    that model is made for the model Claude Code would run (its tools, no task tools), and says so."""
    from conformance.replay import _FakeText
    from inspector.compact import CompactRequest, compact

    s = _switched_session(tmp_path)
    res = compact(
        s,
        CompactRequest("compact", trigger="manual", resume_model="claude-opus-4-1"),
        summarizer=_FakeText("<summary>done</summary>"),
    )
    got = [r["attachment"] for r in res.new_records if (r.get("attachment") or {}).get("type") == "deferred_tools_delta"]
    assert [sorted(a.get("addedNames") or ()) for a in got] == [["SendMessage", "WebFetch"]]  # Opus 5.5: no task tools
    assert any("runs claude-opus-4-1 as claude-opus-5-5" in n for n in res.notes)
