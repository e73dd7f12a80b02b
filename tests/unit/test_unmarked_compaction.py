"""Compactions written as their summary alone: up to 1.0.108 Claude Code wrote no compact boundary, and its REPL began
the conversation again from the summary, a record with no parent (1.0.51's REPL in the harness; 1.0.109 the first that
writes a boundary, the era matrix's compaction-written probe). A manual /compact wrote its command's records right
after the summary."""

from __future__ import annotations

from builders import assistant, tool_result, tool_use, user
from helpers import write_jsonl

from inspector.tokens.explain import analyze
from inspector.tokens.series import context_series
from inspector.transcript.session import Session

SUMMARY = "This session is being continued from a previous conversation that ran out of context. Summary: ran the checks."
MODEL = "claude-sonnet-4-20250514"


def _session(tmp_path, version: str = "1.0.51", manual: bool = False, before: int = 160_000) -> Session:
    def v(r: dict) -> dict:
        r["version"] = version
        return r

    recs = [
        user("u1", None, "run the checks", sec=0),
        assistant("a1", "u1", [tool_use("t1", "Bash", {"command": "echo 1"})], sec=1, usage=(30_000, 0, 0, 10), model=MODEL),
        tool_result("r1", "a1", "t1", "1", sec=2),
        assistant("a2", "r1", [tool_use("t2", "Bash", {"command": "echo 2"})], sec=3, usage=(before, 0, 0, 10), model=MODEL),
        tool_result("r2", "a2", "t2", "2", sec=4),
        user("s1", None, SUMMARY, sec=5, isCompactSummary=True),
    ]
    parent = "s1"
    if manual:
        recs += [
            user("c1", "s1", "<command-name>/compact</command-name>\n<command-message>compact</command-message>", sec=6),
            user("c2", "c1", "<local-command-stdout>Compacted. ctrl+r to see full summary</local-command-stdout>", sec=6),
        ]
        parent = "c2"
    recs += [
        assistant("a3", parent, [tool_use("t3", "Bash", {"command": "echo 3"})], sec=7, usage=(20_000, 0, 0, 10), model=MODEL),
        tool_result("r3", "a3", "t3", "3", sec=8),
        assistant("a4", "r3", [{"type": "text", "text": "done"}], sec=9, usage=(21_000, 0, 0, 10), model=MODEL),
    ]
    return Session.load(write_jsonl(tmp_path / "s.jsonl", [v(r) for r in recs]))


def test_the_summary_is_the_compaction_and_the_history_runs_through_it(tmp_path):
    s = _session(tmp_path)
    comps = s.compactions()
    assert [(c["kind"], c["trigger"], c["pre_tokens"], c["line"]) for c in comps] == [("compact", "auto", None, 6)]
    conv = s.conversation
    uuids = [s.records[i].uuid for i in conv.logical_chain]
    assert uuids == ["u1", "a1", "r1", "a2", "r2", "s1", "a3", "r3", "a4"]  # the history, through the summary
    assert [s.records[i].uuid for i in conv.chain][0] == "s1"  # what Claude Code loads: from the summary
    series = context_series(s)
    assert [t.tokens for t in series.turns] == [30_010, 160_010, 20_010, 21_010]
    assert [t.segment for t in series.turns] == [0, 0, 1, 1] and series.boundaries == (5,)


def test_it_is_explained_by_the_last_usage_before_it(tmp_path):
    """These releases compared the last usage with the threshold (no estimate added): 160,010 against 0.92 of the
    window less the output, 154,560."""
    rep = analyze(_session(tmp_path))
    (e,) = rep.compactions
    assert (e.kind, e.pre_tokens, e.threshold, e.cause) == ("auto", 160_010, 154_560, "threshold")
    assert e.first_usage_after == 20_010 and e.summary_text.startswith("This session is being continued")
    assert e.pre_tokens_inferred and e.as_dict()["pre_tokens_inferred"] is True  # (no count recorded)
    assert "added no estimate" in e.explanation


def test_a_manual_compact_is_told_by_its_command_records(tmp_path):
    s = _session(tmp_path, manual=True, before=40_000)
    assert [c["trigger"] for c in s.compactions()] == ["manual"]
    (e,) = analyze(s).compactions
    assert (e.kind, e.pre_tokens) == ("manual", 40_010)


def test_from_1_0_109_a_summary_without_a_parent_is_not_a_compaction(tmp_path):
    """1.0.109 and later write a compact boundary before the summary: a summary record without a parent (a damaged
    file, a copy) is no compaction of its own there."""
    s = _session(tmp_path, version="1.0.109")
    assert s.compactions() == []
    assert [s.records[i].uuid for i in s.conversation.logical_chain][0] == "s1"
