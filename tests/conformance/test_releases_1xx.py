"""Saved conformance runs of releases before 2.1.200 (tests/data), each checked the way the harness checks it."""

from __future__ import annotations

import pytest
from helpers import saved_run

from conformance.replay import replay


def _replayed(tmp_path, name):
    got = replay(saved_run(tmp_path, name))
    assert got and all(r.ok for r in got), [(r.boundary, r.what, r.detail) for r in got if not r.ok]
    return got


def test_a_subagent_s_progress_counts_among_the_messages_a_partial_compaction_summarized(tmp_path):
    """2.1.174's REPL (generated run gen_repl_190002) summarized "up to" a prompt whose turn ran a subagent: it counted
    8 messages where the file has 7 records, the eighth the subagent's progress, which its REPL holds and never
    writes (2.1.85-2.1.197; bisected with kept scenario found_repl_202)."""
    from inspector.compact.hooks import held_progress
    from inspector.transcript.session import Session

    folder = saved_run(tmp_path, "gen_repl_190002_2.1.174")
    got = {r.boundary: r for r in replay(folder)}
    assert got[0].ok and got[0].what.startswith("partial up_to"), got[0].detail
    main = next(p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts)
    s = Session.load(main)
    before = list(range(next(i for i, r in enumerate(s.records) if r.is_compact_boundary)))  # two subagent calls
    for version, held in (("2.1.84", 0), ("2.1.85", 2), ("2.1.174", 2), ("2.1.197", 2), ("2.1.198", 0), ("2.1.332", 0)):
        assert held_progress(s, before, version, len(s.records), None) == (held, 0), version
    # without the subagents' transcripts, each call counts its prompt's message and says the rest is not known
    import shutil

    shutil.rmtree(main.with_suffix("") / "subagents")
    assert held_progress(Session.load(main), before, "2.1.174", len(s.records), None) == (2, 2)


def test_the_subagents_a_compaction_kept_count_nothing_after_it(tmp_path):
    """2.1.174 (kept REPL scenario found_repl_79200): two subagent calls kept by a reactive compaction, summarized later
    "up to" a prompt, counted nothing more: the kept messages were put back without their progress."""
    _replayed(tmp_path, "found_repl_79200_2.1.174")


def test_a_partial_compaction_before_the_engine_counts_what_the_repl_holds(tmp_path):
    """2.1.150 (before 2.1.159's engine: kept REPL scenarios found_repl_202, found_repl_9700 and found_repl_74013).
    Its REPL counts what it holds: the turn_duration below the last reply (a "from" summarizes it; 202: 28, where
    inspector had 24), each subagent's progress (202: three), the last compaction's boundary (an "up to" after a
    /compact summarizes it, 74013; a "from" keeps it, the kept segment's head, 9700)."""
    for name in ("found_repl_202_2.1.150", "found_repl_9700_2.1.150", "found_repl_74013_2.1.150"):
        got = _replayed(tmp_path / name, name)
        assert any(r.what.startswith("partial") for r in got), name


def test_a_partial_compaction_before_2_1_97_counts_the_task_reminders_the_repl_held(tmp_path):
    """2.1.88's REPL (kept scenarios found_repl_172000 and found_repl_91000) adds a task reminder before a request once
    ten replies went by without a task tool and since the last reminder, and writes no attachment: "summarize from"
    counted 17 and 26 messages where the file has 16 and 24 (the messages it summarized, logged from 2.1.88's code:
    one reminder after a tool result, two, one of them right after the prompt picked). 2.1.97 writes its reminders."""
    from inspector.compact import make_slice
    from inspector.compact.hooks import UNWRITTEN_NOTE, held_reminders, summarized_count
    from inspector.transcript.session import Session

    for name, held in (("found_repl_172000_2.1.88", 1), ("found_repl_91000_2.1.88", 2)):
        got = _replayed(tmp_path / name, name)
        assert [r.what.split(" ")[0] for r in got] == ["partial"], name
        folder = tmp_path / name / name.rsplit("_", 1)[0]
        s = Session.load(next(p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts))
        b = next(i for i, r in enumerate(s.records) if r.is_compact_boundary)
        pivot = s.records[b].get("compact")["preservedSegment"]["tailUuid"]
        last = max(i for i in range(b) if s.records[i].type in ("user", "assistant"))
        sl = make_slice(s, at=s.records[last].uuid)
        kept_to = next(k for k, i in enumerate(sl.chain) if s.records[i].uuid == pivot)
        summarized = [i for i in sl.messages if sl.chain.index(i) > kept_to]
        assert held_reminders(sl, summarized, "2.1.88", len(s.records)) == held, name
        assert held_reminders(sl, summarized, "2.1.97", len(s.records)) == 0, name
        # what else it held is not known, and said: hook output, what a /compact re-attached
        assert UNWRITTEN_NOTE in summarized_count(sl, summarized, "2.1.88")[1]
        assert UNWRITTEN_NOTE not in summarized_count(sl, summarized, "2.1.97")[1]


def test_claude_opus_4_7_has_its_native_1m_window_through_any_host_on_2_1_120(tmp_path):
    """2.1.120 (generated run gen_192021, through the fake API's host): `--model claude-opus-4-0` ran as claude-opus-4-7
    (its legacy remap), whose window 2.1.117-2.1.143 make 1M whatever the host; the run went to 430,004 and Claude Code
    said an effective window of 980,000, as inspector now does (it had 180,000: no native 1M before 2.1.159's catalog)."""
    from conformance.compare import compare
    from conformance.replay import _settings
    from inspector.tokens.thresholds import thresholds

    folder = saved_run(tmp_path, "gen_192021_2.1.120")
    row = compare(folder)
    assert row.match and row.claude.effective_window == 980_000, row.notes
    # through the same host 2.1.152 gives it none (2.1.144-2.1.284: only on Anthropic's own)
    other = _settings(folder).with_(model="claude-opus-4-7")
    assert other.other_api_host and thresholds(other, version="2.1.152").context_window == 200_000
    assert thresholds(other.with_(other_api_host=False), version="2.1.152").context_window == 1_000_000


def _cut_before_partial(folder):
    """The session's transcript up to its partial compaction's boundary, written beside it (a release before 2.1.76
    does not put the kept messages back on load: the chain before the boundary is read from a file that ends there),
    loaded; and the boundary's record from the whole file."""
    from inspector.transcript.session import Session

    main = next(p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts)
    whole = Session.load(main)
    b = next(i for i, r in enumerate(whole.records) if r.is_compact_boundary and "messagesSummarized" in r.get("compact"))
    lines = main.read_bytes().splitlines(keepends=True)
    cut = main.with_name("cut.jsonl")
    cut.write_bytes(b"".join(lines[: whole.records[b].line - 1]))
    return Session.load(cut), whole, b


def test_a_partial_compaction_up_to_2_1_84_counts_the_progress_it_wrote_and_each_hook_s_result(tmp_path):
    """2.1.36's REPL (generated run gen_repl_193002, "from" the first prompt) summarized 58 messages: its 45 records, the
    6 progress records of an internal PostToolUse:Read hook, a hook_success after each (never written) and one task
    reminder (logged from 2.1.36's code). From 2.1.85 no progress is written (held_progress counts a subagent's)."""
    from inspector.compact import make_slice
    from inspector.compact.hooks import written_progress

    got = _replayed(tmp_path, "gen_repl_193002_2.1.36")
    assert [r.what.split(" ")[0] for r in got] == ["partial"]
    s, _, _ = _cut_before_partial(tmp_path / "gen_repl_193002")
    sl = make_slice(s)
    assert written_progress(sl, sl.messages, "2.1.36", len(s.records)) == 12  # 6 progress records, 6 hook results
    assert written_progress(sl, sl.messages, "2.1.97", len(s.records)) == 0  # (no release writes progress and not these)
    assert written_progress(sl, sl.messages, "2.1.85", len(s.records)) == 0


def test_a_partial_compaction_before_2_1_88_writes_the_summary_s_metadata_as_its_release_did(tmp_path):
    """2.1.36 (kept scenario found_repl_91000, "from" a prompt with context): summarizeMetadata holds messagesSummarized
    and userContext, no direction (2.1.87's code writes none, 2.1.88's does); a pick without context writes no
    userContext at all (2.1.88 REPL seed 172000: {"messagesSummarized": 17, "direction": "from"})."""
    from conformance.replay import _FakeText
    from inspector.compact import CompactRequest, compact

    _replayed(tmp_path / "36", "found_repl_91000_2.1.36")
    for name, context, want in (
        ("found_repl_91000_2.1.36", "keep the file names", {"userContext": "keep the file names"}),
        ("found_repl_172000_2.1.88", None, {"direction": "from"}),
    ):
        s, whole, b = _cut_before_partial(saved_run(tmp_path / name, name))
        theirs = whole.body(b + 1)["summarizeMetadata"]
        tail = whole.records[b].logical_parent
        after = next(i for i, r in enumerate(s.records) if r.uuid == tail) + 1
        pivot = next(r.uuid for r in s.records[after:] if r.type == "user" and not r.tool_results)
        res = compact(
            s, CompactRequest("partial", pivot=pivot, direction="from", instructions=context), summarizer=_FakeText("x")
        )
        ours = res.new_records[1]["summarizeMetadata"]
        assert ours == {"messagesSummarized": theirs["messagesSummarized"], **want} == theirs, name


def test_a_release_before_2_1_80_sends_what_it_loaded_without_repairing_parallel_calls(tmp_path):
    """2.1.36 (generated run gen_193028): resumed (`claude -p continue --resume`) after replies of two parallel calls,
    it sent each such reply of the loaded session with the call whose result is on the walked line and that result
    only (2.1.20-2.1.79 do not repair parallel calls on a resume; 2.1.80 does). The harness's wire check now compares
    the requests of a resumed process with what it held, and every request of the run is equal."""
    from conformance.compare import wire_differences
    from inspector.transcript.session import Session

    folder = saved_run(tmp_path, "gen_193028_2.1.36")
    n, diffs = wire_differences(folder)
    assert n == 15 and diffs == []
    from inspector.transcript.tree import Conversation

    s = Session.load(next(p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts))
    resumed_at = next(i for i, r in enumerate(s.records) if r.type == "user" and r.get("prompt") == "continue")
    conv = Conversation(s.records[: resumed_at + 2])  # the file as the resumed process's first reply found it
    held = conv.held_after_resume(list(conv.chain), resumed_at - 1, "2.1.36")
    left = [i for i in conv.chain if i not in held]
    assert left and all(i < resumed_at for i in left)  # only what it loaded
    assert {s.records[i].type for i in left} == {"assistant", "user"}  # the calls and the results off the walked line
    assert all(t not in {r for i in held for r in s.records[i].tool_results} for i in left for t, _ in s.records[i].tool_uses)
    assert conv.held_after_resume(list(conv.chain), resumed_at - 1, "2.1.80") == list(conv.chain)


def test_a_compaction_between_a_turn_s_requests_is_in_the_history_though_the_file_s_chain_walks_past_it(tmp_path):
    """2.1.113's REPL (generated run gen_repl_194003) compacted between two requests of a turn and wrote the next reply
    with the record before the boundary as its parent, its summary below the boundary, off the reply's line (as 2.1.88's,
    2.1.150's and 2.1.219's do). The process sent the summary: the token story breaks there, the next compaction's
    stretch starts there (it was read as a refusal: 'earlier responses above the threshold'), and every request the
    harness rebuilds is what was sent; a resume of the file still walks past the boundary, as Claude Code's does."""
    from conformance.compare import wire_differences
    from inspector.tokens.explain import analyze
    from inspector.tokens.series import context_series
    from inspector.transcript.session import Session

    folder = saved_run(tmp_path, "gen_repl_194003_2.1.113")
    main = next(p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts)
    s = Session.load(main)
    first = next(i for i, r in enumerate(s.records) if r.is_compact_boundary)
    from inspector.transcript.tree import Conversation

    conv = s.conversation
    assert first in conv.logical_chain and first in conv.side_relinked.values()
    second = next(i for i, r in enumerate(s.records) if r.is_compact_boundary and i > first)
    cut = Conversation(s.records[:second])  # the file before the next compaction, as a resume would load it
    assert first in cut.logical_chain and first not in cut.chain and any(i < first for i in cut.chain)
    series = context_series(s)
    assert len(series.boundaries) == 2 and max(t.segment for t in series.turns) == 2
    assert [c.cause for c in analyze(s).compactions] == ["threshold", "threshold"]
    n, diffs = wire_differences(folder)
    assert n == 14 and diffs == []


def test_progress_records_in_a_loop_count_nothing_and_end(tmp_path):
    """A damaged file whose progress records name each other as parents (untrusted input): written_progress counts
    neither and returns (it walked up from one to the other for ever before)."""
    import json

    from inspector.compact import make_slice
    from inspector.compact.hooks import written_progress
    from inspector.transcript.session import Session

    base = {"sessionId": "s", "version": "2.1.36", "cwd": "/w", "timestamp": "2026-01-01T00:00:00.000Z"}
    recs = [
        {**base, "type": "user", "uuid": "u1", "parentUuid": None, "message": {"role": "user", "content": "go"}},
        {
            **base,
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        },
        {**base, "type": "progress", "uuid": "p1", "parentUuid": "p2", "data": {"type": "hook_progress"}},
        {**base, "type": "progress", "uuid": "p2", "parentUuid": "p1", "data": {"type": "hook_progress"}},
        {**base, "type": "progress", "uuid": "p3", "parentUuid": "a1", "data": {"type": "hook_progress"}},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    s = Session.load(path)
    sl = make_slice(s)
    # p3 hangs from the reply: itself and its hook's result; the loop of p1 and p2 nothing
    assert written_progress(sl, sl.messages, "2.1.36", len(s.records)) == 2


def test_claude_p_sends_parallel_results_in_the_order_it_wrote_them_whatever_their_times(tmp_path):
    """2.1.20 (generated run gen_196056): `claude -p` ran a Read, a Grep and a Glob in parallel and wrote their results
    in the order of the calls, the Glob's stamped before the Grep's (it finished first); the next request sent them as
    written. The wire check had held them by their times (as a REPL of 2.1.88 held them) and found the request
    different; the process's held order for `claude -p` is the order written."""
    from conformance.compare import _live_order, wire_differences
    from inspector.transcript.session import Session

    folder = saved_run(tmp_path, "gen_196056_2.1.20")
    n, diffs = wire_differences(folder)
    assert n == 2 and diffs == []
    s = Session.load(next(p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts))
    results = [i for i, r in enumerate(s.records) if r.type == "user" and r.tool_results][:3]
    assert sorted(results, key=lambda i: s.records[i].timestamp) != results  # stamped out of the order written
    chain = list(s.conversation.chain)
    written = [i for i in _live_order(s, chain) if i in results]
    assert written == results
    assert [i for i in _live_order(s, chain, repl=True) if i in results] == sorted(results, key=lambda i: s.records[i].timestamp)


def test_a_reminder_folded_into_an_empty_tool_result_is_the_whole_text_sent(tmp_path):
    """2.1.20 (kept seed 191053): a Bash call's output was empty in the file and sent as the todo reminder alone, with
    no blank line before it (nothing to join it to). A reminder's text is in no record before 2.1.268: the wire check
    leaves it out, and every request of the run is what inspector rebuilds."""
    import json

    from conformance.compare import wire_differences

    folder = saved_run(tmp_path, "found_191053_2.1.20")
    assert wire_differences(folder) == (16, [])
    log = json.loads((folder / "requests.json").read_text())
    messages = log["messages"].values() if isinstance(log["messages"], dict) else log["messages"]
    sent = [
        b.get("content")
        for m in messages
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert any(isinstance(c, str) and c.startswith("<system-reminder>") for c in sent)  # the case the check met


def test_a_1m_window_read_from_usage_is_refuted_under_a_percentage_override_too(tmp_path):
    """2.1.20 (kept seed 193003) with CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=70: the fake let a reply of claude-fable-5 (no
    [1m]) reach 205,991 tokens, which alone reads as a 1M window, and Claude Code compacted at 206,452, at its 200,000
    window's threshold. A 1M window's threshold at 70% is 677,600: a compaction that far below it refutes that window,
    as it does without the override (the override was taken as a setting that could explain any compaction, and the
    three compactions were told as 'unknown')."""
    from conformance.compare import compare
    from inspector.tokens.explain import analyze
    from inspector.tokens.thresholds import Settings
    from inspector.transcript.session import Session

    folder = saved_run(tmp_path, "found_193003_2.1.20")
    row = compare(folder)
    assert row.claude.compactions == row.inspector.compactions
    assert [c.split(" at ")[0] for c in row.inspector.compactions] == ["threshold"] * 3
    s = Session.load(next(p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts))
    for env in ({}, {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70"}):
        th = analyze(s, Settings.from_environment(env=env, config_dir=tmp_path)).thresholds
        assert th.context_window == 200_000 and "far below" in th.window_source, env


@pytest.mark.parametrize(
    "name, unread",
    [
        ("gen_197033_1.0.128", ("[1m] is not read", "DISABLE_AUTO_COMPACT is not read")),
        ("gen_197017_1.0.128", ("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE is not read", "CLAUDE_CODE_AUTO_COMPACT_WINDOW is not read")),
    ],
)
def test_what_1_0_128_did_not_read_is_not_applied_to_its_sessions(tmp_path, name, unread):
    """1.0.128 (generated runs): claude-opus-5[1m] with DISABLE_AUTO_COMPACT set compacted at 164,000, its 200,000
    window's threshold (seed 197033); claude-sonnet-5 with CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=85 and a 100,000 window from
    the environment compacted at 183,000, past a reply at 152,000 (seed 197017). The release reads none of them (the
    one-m-suffix, env-auto-compact and env-pct probes, bisected: 2.0.15, 2.0.77 and 2.0.20 are the first that do);
    inspector told each compaction 'unknown' or 'other threshold'. Now each is the threshold's, and the report names
    what the release did not read."""
    from conformance.compare import compare, inspector_facts

    folder = saved_run(tmp_path, name)
    row = compare(folder)
    assert row.claude.compactions == row.inspector.compactions
    assert all(c.startswith("threshold at ") for c in row.inspector.compactions)
    f = inspector_facts(folder)
    assert f.effective_window is not None and f.effective_window < 200_000
    import json

    from conformance.compare import fake_env
    from inspector.tokens.explain import analyze
    from inspector.tokens.thresholds import Settings
    from inspector.transcript.session import Session

    run = json.loads((folder / "run.json").read_text())
    s = Session.load(max((p for p in (folder / "projects").rglob("*.jsonl")), key=lambda p: p.stat().st_size))
    settings = Settings.from_environment(env=fake_env(run), config_dir=tmp_path)
    if "[1m]" in run["model"]:
        settings = settings.with_(one_m=True)
    th = analyze(s, settings).thresholds
    said = th.rules + " " + th.window_source
    assert all(u in said for u in unread), said


def test_an_image_a_compaction_re_attached_is_in_no_record_before_2_1_97(tmp_path):
    """2.0.50 (generated run gen_198007): a Read of an image before an automatic compaction; the requests after it begin
    with the image, re-attached, which no record holds (the transcript writer drops every attachment before 2.1.97).
    The wire check leaves it out as it leaves out an unrecorded reminder's text, and every request is equal."""
    import json

    from conformance.compare import wire_differences

    folder = saved_run(tmp_path, "gen_198007_2.0.50")
    n, diffs = wire_differences(folder)
    assert n > 20 and diffs == []
    log = json.loads((folder / "requests.json").read_text())
    messages = log["messages"].values() if isinstance(log["messages"], dict) else log["messages"]
    blocks = [b for m in messages if isinstance(m.get("content"), list) for b in m["content"] if isinstance(b, dict)]
    assert any(b.get("type") == "image" for b in blocks)  # the case the check met


def test_1_0_128_sends_a_reply_written_as_an_api_error(tmp_path):
    """1.0.128 (generated run gen_197000): a request refused as too long, then `--resume`: the resumed process's
    requests send the "Prompt is too long" reply as an assistant message (releases from 2.0.47 leave it out), and
    every request of the run is what inspector rebuilds."""
    from conformance.compare import wire_differences

    folder = saved_run(tmp_path, "gen_197000_1.0.128")
    n, diffs = wire_differences(folder)
    assert n > 5 and diffs == []


@pytest.mark.parametrize(
    "name, facts",
    [
        ("repl_unmarked_auto_1.0.51", ["threshold at 160,000, kept 0"]),
        ("repl_unmarked_manual_1.0.17", ["manual at 40,000, kept 0"]),
    ],
)
def test_a_compaction_written_as_its_summary_alone_is_read_as_one(tmp_path, name, facts):
    """The REPLs of 1.0.17 and 1.0.51 (harness runs): a compaction wrote no boundary, only its summary, a record with no
    parent from which the conversation went on (1.0.17's without isCompactSummary: its text says it; a /compact's
    command records right after it). inspector read no compaction there and its token story began at the summary; now
    the summary is the compaction, the history runs through it, and every request after it is what inspector
    rebuilds."""
    from conformance.compare import compare, wire_differences
    from inspector.transcript.session import Session

    folder = saved_run(tmp_path, name)
    row = compare(folder)
    assert row.claude.compactions == row.inspector.compactions == facts
    n, diffs = wire_differences(folder)
    assert n >= 4 and diffs == []
    s = Session.load(next(p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts))
    assert s.conversation.logical_chain[0] != s.conversation.chain[0]  # the history before the summary is on it
