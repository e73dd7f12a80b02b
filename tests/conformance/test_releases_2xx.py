"""Generated runs on the real 2.1.250 and 2.1.285 (tests/data, the harness's saved runs without their HOME), each
a rule of its release inspector had wrong: a kept Read answered by the unchanged-file stub shows nothing of the file,
which the compaction re-attaches (format.md §8.5); CLAUDE_AUTOCOMPACT_PCT_OVERRIDE is a percentage of the window the
release itself gave the model (claude-opus-5: 200,000 on 2.1.250, where today's catalog gives 1M); and the note on
launching agents together is worded for the model that compacts from 2.1.219 on, not only from 2.1.328."""

from __future__ import annotations

from helpers import saved_run, sha256

from conformance.compare import compare, wire_differences
from conformance.replay import replay


def test_a_kept_read_answered_by_the_unchanged_stub_does_not_keep_its_file_from_being_re_attached(tmp_path):
    folder = saved_run(tmp_path, "found_3010_2.1.250")
    before = {p: sha256(p) for p in (folder / "projects").rglob("*.jsonl")}
    got = replay(folder)
    assert got and all(r.ok for r in got), [(r.boundary, r.detail) for r in got if not r.ok]
    assert {p: sha256(p) for p in (folder / "projects").rglob("*.jsonl")} == before


def test_a_percentage_of_the_measured_window_explains_each_compaction(tmp_path):
    """claude-opus-5 at 50%: the session began above 90,000 tokens and compacted at its first check, twice."""
    folder = saved_run(tmp_path, "found_3037_2.1.250")
    row = compare(folder)
    assert not [n for n in row.notes if n.startswith(("compactions:", "threshold:", "window source:"))], row.notes


def test_a_listing_re_announced_for_a_nudged_model_ends_in_the_concurrency_note(tmp_path):
    """2.1.285 (generated run found_1065): a session begun on claude-opus-5[1m], whose agent listing has no note on
    launching agents together (its prompt bundle is not nudged, from 2.1.219), compacted in a process on
    claude-opus-4-6: the listing it re-announced ends in the note, as the release words it for that model."""
    folder = saved_run(tmp_path, "found_1065_2.1.285")
    got = replay(folder)
    assert got and all(r.ok for r in got), [(r.boundary, r.detail) for r in got if not r.ok]


def test_a_compact_right_after_a_compaction_keeps_from_the_last_user_message_up_to_2_1_322(tmp_path):
    """Kept scenario found_1182 (two /compact in a row; the second has no reply before its last round): 2.1.285's
    engine falls back to its last resort ("round ladder exhausted, last resort (keeping 5 trailing messages"),
    summarizing what comes before the last user message (the first /compact's output) and keeping from it; from
    2.1.323 the engine bails and nothing is kept (bisected). Both releases' runs replay whole."""
    for name in ("found_1182_2.1.285", "found_1182_2.1.323"):
        folder = saved_run(tmp_path / name, name)
        got = replay(folder)
        assert len(got) >= 3 and all(r.ok for r in got), (name, [(r.boundary, r.detail) for r in got if not r.ok])


def test_the_typed_compact_of_a_2_1_285_repl_is_neither_summarized_nor_kept(tmp_path):
    """2.1.285's REPL writes the typed "/compact" as the last user message before compacting; Claude Code kept the
    round before it (a reply and its turn_duration), not the command (kept scenario found_repl_1004)."""
    folder = saved_run(tmp_path, "found_repl_1004_2.1.285")
    got = replay(folder)
    assert got and all(r.ok for r in got), [(r.boundary, r.detail) for r in got if not r.ok]


def test_a_2_1_300_repl_records_no_row_for_its_first_request(tmp_path):
    """2.1.300's REPL writes no api-request row for a process's first request (the first row it writes is the second
    request's); the harness leaves that request out of the comparison, says so, and every other request inspector
    rebuilds is the one Claude Code sent (kept scenario found_repl_75026). The first request is not taken for any
    other: a run whose rows begin with the first request is compared whole."""
    from conformance.compare import request_differences, unrecorded_first_requests

    folder = saved_run(tmp_path, "found_repl_75026_2.1.300")
    assert unrecorded_first_requests(folder) == 1
    assert request_differences(folder) == []
    assert not [n for n in compare(folder).notes if "first difference" in n]
    other = saved_run(tmp_path / "other", "found_1065_2.1.285")  # (no rows at all: nothing left out)
    assert unrecorded_first_requests(other) == 0


def test_the_tools_a_summary_lists_run_on_from_the_summary_before(tmp_path):
    """2.1.310 (generated run gen_186012) writes no `tools-used` record; its summaries' <tools-used-before-summary>
    list runs on from one compaction to the next ("Bash, Glob" in every one), and a fork holds only the records since
    the last compaction, its summary among them: the fork's next summary lists Bash, which no record of the fork
    calls (inspector had listed Glob alone)."""
    folder = saved_run(tmp_path, "gen_186012_2.1.310")
    got = replay(folder)
    assert len(got) >= 6 and all(r.ok for r in got), [(r.boundary, r.detail) for r in got if not r.ok]


def test_deferred_tools_begin_with_2_1_304(tmp_path):
    """Deferred tools (a deferred_tools_delta announcement) begin with 2.1.304 (bisected: 2.1.303 announces none on
    claude-sonnet-4-5), where the Claude 3 models load every tool. 2.1.310 (generated run gen_186009): a session begun
    on claude-3-5-sonnet and switched to claude-sonnet-4-5[1m] compacted, and the compaction announced the new model's
    deferred tools, the task tools among them (inspector had announced none: its rule was measured on 2.1.328 only)."""
    from inspector.claude.models import defers_tools, task_tools

    assert defers_tools("claude-sonnet-4-5", (2, 1, 303)) is None
    assert defers_tools("claude-sonnet-4-5", (2, 1, 304)) is True
    assert defers_tools("claude-3-5-sonnet", (2, 1, 310)) is False
    assert task_tools("claude-sonnet-4-5", (2, 1, 310)) is True and task_tools("claude-sonnet-5", (2, 1, 310)) is False
    folder = saved_run(tmp_path, "gen_186009_2.1.310")
    first = next(r for r in replay(folder) if r.boundary == 0)
    assert first.ok, first.detail


def test_a_repl_reply_written_above_its_prompt_is_checked_against_its_own_chain(tmp_path):
    """2.1.310's REPL wrote the first reply at the file's head, above its prompt and its request's row (REPL run
    gen_repl_186001): the harness's wire check cut the records at that reply and compared an empty request; the
    chain is the one the reply hangs from, walked by its parents."""
    folder = saved_run(tmp_path, "gen_repl_186001_2.1.310")
    checked, diffs = wire_differences(folder)
    assert checked >= 12 and not diffs, diffs


def test_a_prompt_snapshot_the_compacting_process_loaded_stays_where_the_file_has_it(tmp_path):
    """Up to 2.1.327 a kept tail lists the prompt_snapshots the compacting process wrote each right after the one
    before it, and one it loaded where the file has it: 2.1.310 (generated run gen_186047) refused a fork's request;
    the tail kept the copied records in the copy's order, a snapshot after the reply it followed (inspector had moved
    it up before that reply)."""
    folder = saved_run(tmp_path, "gen_186047_2.1.310")
    got = replay(folder)
    assert len(got) >= 3 and all(r.ok for r in got), [(r.boundary, r.detail) for r in got if not r.ok]


def test_a_fork_onto_a_smaller_window_above_its_blocking_limit_compacts_on_the_threshold(tmp_path):
    """2.1.310 (kept scenario found_113016): replies on claude-sonnet-4-0[1m] up to 301,990, then a fork on
    claude-3-5-haiku, whose threshold the release does not enforce: the fork compacted at 302,058 before its first
    request, on the larger model (2.1.295+), where inspector had named a refusal."""
    folder = saved_run(tmp_path, "found_113016_2.1.310")
    row = compare(folder)
    assert row.match and row.claude.compactions == ["threshold at 302,058, kept 4"], row.notes


def test_a_fork_that_writes_its_copy_again_re_announces_none_of_its_agents(tmp_path):
    """2.1.300 (kept scenario found_113016): a fork onto claude-3-5-haiku compacted on the larger model at once, and
    wrote the conversation it had copied a second time, the background agents' launches with it: those are not its
    process's (Claude Code re-announced none of them; inspector had re-announced 15)."""
    folder = saved_run(tmp_path, "found_113016_2.1.300")
    got = replay(folder)
    assert got and all(r.ok for r in got), [(r.boundary, r.detail) for r in got if not r.ok]
    assert compare(folder).match


def test_a_background_agent_s_turn_is_sent_with_the_notice_s_words_before_it_on_2_1_219(tmp_path):
    """2.1.219 (generated run gen_189013): a turn a background agent's completion started went out as the notice's
    words and the notification, without a system-reminder around them (2.1.205-2.1.233); inspector sent the text
    alone."""
    folder = saved_run(tmp_path, "gen_189013_2.1.219")
    checked, diffs = wire_differences(folder)
    assert checked >= 5 and not diffs, diffs


def test_a_compaction_resumed_after_a_blocked_run_is_the_threshold_s(tmp_path):
    """2.1.219 (generated run gen_189036, CLAUDE_CODE_AUTO_COMPACT_WINDOW=150000): every summarize request of the first
    run failed, at 146,000 and 180,000, and the run ended in "Prompt is too long"; resumed, the first check compacted
    at 182,043, keeping 7 rounds (the threshold compaction routed through the reactive engine). inspector had named a
    refusal."""
    folder = saved_run(tmp_path, "gen_189036_2.1.219")
    row = compare(folder)
    assert row.match and row.claude.compactions[0] == "threshold at 182,043, kept 25", row.notes


def test_a_prompt_a_compaction_interrupted_is_replayed_from_the_copy_the_file_had_before_it(tmp_path):
    """2.1.174's REPL (generated run gen_repl_190002) wrote the prompt a threshold compaction came before, then the
    same prompt again below the new summary: the replay's cut had put that second copy after the first, its own
    parent, and inspector saw one round where Claude Code compacted four."""
    folder = saved_run(tmp_path, "gen_repl_190002_2.1.174")
    got = {r.boundary: r for r in replay(folder)}
    assert got[1].ok, got[1].detail


def test_the_records_a_compaction_wrote_leave_out_the_prompt_written_again_below_it(tmp_path):
    """2.1.174's REPL (generated run gen_repl_190000) wrote the prompt a threshold compaction came before again below
    the new summary: that copy is the prompt's, not a record of the compaction (the replay had compared it with
    inspector's re-attached file)."""
    folder = saved_run(tmp_path, "gen_repl_190000_2.1.174")
    got = replay(folder)
    assert len(got) >= 3 and all(r.ok for r in got), [(r.boundary, r.detail) for r in got if not r.ok]


def test_a_compaction_by_a_resumed_process_that_names_no_model_is_of_unknown_cause(tmp_path):
    """2.1.174 (kept scenario found_1168): claude-opus-5, a model the release does not know (no threshold enforced),
    refused at 194,064 and compacted; resumed with --model claude-sonnet-4-6, the new process compacted at once, at
    167,129 (its model's threshold), then was refused at 1,251 and ended in "Prompt is too long", writing no reply.
    No record names the resumed process's model: inspector had named a refusal by the earlier process's model; it now
    says the cause is not recorded and why, and still names the refusals it can tell (the first process's, and one
    below any threshold)."""
    from inspector.tokens.explain import analyze
    from inspector.transcript.session import Session

    folder = saved_run(tmp_path, "found_1168_2.1.174")
    row = compare(folder)
    assert row.claude.compactions[1] == "threshold at 167,129, kept 16"
    assert row.inspector.compactions == [
        "prompt_too_long at 194,064, kept 13",
        "unknown at 167,129, kept 16",
        "prompt_too_long at 1,251, kept 15",
    ], row.notes
    main = next(p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts)
    from conformance.replay import _settings

    second = analyze(Session.load(main), _settings(folder)).compactions[1]
    assert second.as_dict()["model_unrecorded"] == "claude-opus-5"
    assert "its model is not known" in second.cause_evidence and "167,000" in second.cause_evidence
    assert "its cause not recorded" in second.explanation and "The API refused" not in second.explanation
