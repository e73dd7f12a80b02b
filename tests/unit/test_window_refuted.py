"""A 1M window inferred from usage is refuted where the session met a limit of its window far below that window's:

- Claude Code compacted on its own there (2.1.88 seed 131000: claude-fable-5, unknown to that release, answered at
  235,020 tokens; Claude Code, on its 200,000 window, compacted there at its threshold);
- a prompt was too long after a response far below it (2.1.152 seed 135005: claude-opus-5 answered at 228,990;
  Claude Code, on its 200,000 window, would not send the next request and wrote "Prompt is too long").
"""

from __future__ import annotations

from builders import assistant, system, user
from helpers import write_jsonl

from inspector.tokens.explain import analyze
from inspector.tokens.series import TURN_MOST, FileFacts, limit_for, session_facts
from inspector.tokens.thresholds import Settings, thresholds
from inspector.transcript.records import F_TOO_LONG
from inspector.transcript.session import Session

MODEL = "claude-sonnet-4-5-20250929"


def _records(pre: int, version: str):
    return [
        user("u1", None, "go", sec=0),
        assistant("a1", "u1", sec=1, usage=(100_000, 0, 20_000, 50), model=MODEL),
        user("u2", "a1", "go on", sec=2),
        assistant("a2", "u2", sec=3, usage=(pre - 2_000, 0, 2_000, 50), model=MODEL),
    ]


def _session(tmp_path, pre: int, trigger: str = "auto", version: str = "2.1.88", name: str = "s"):
    recs = [
        *_records(pre, version),
        system("cb", "a2", "compact_boundary", sec=4, compactMetadata={"trigger": trigger, "preTokens": pre}),
        user("sm", "cb", "This session is being continued from a previous conversation.", sec=4, isCompactSummary=True),
    ]
    for r in recs:
        r["version"] = version
    return Session.load(write_jsonl(tmp_path / f"{name}{pre}{trigger}.jsonl", recs))


def _too_long(tmp_path, usage: int, text: str = "Prompt is too long", version: str = "2.1.152"):
    recs = [
        *_records(usage, version),
        user("u3", "a2", "go on", sec=4),
        assistant(
            "e1", "u3", [{"type": "text", "text": text}], sec=5, usage=(0, 0, 0, 0), model="<synthetic>", isApiErrorMessage=True
        ),
    ]
    for r in recs:
        r["version"] = version
    return Session.load(write_jsonl(tmp_path / f"ptl{usage}{len(text)}.jsonl", recs))


def _settings(tmp_path, **kw):
    return Settings.from_environment(env=kw, config_dir=tmp_path / "none")


def test_the_facts_keep_the_smallest_compaction_of_each_model(tmp_path):
    s = _session(tmp_path, 235_020)
    f = session_facts(s)
    assert f.limit == (235_020, "compacted on its own at 235,020") and f.settled().limits == {MODEL: f.limit}
    assert limit_for(f, MODEL) == f.limit and limit_for(f, "claude-other") == f.limit
    assert limit_for(FileFacts.from_json(f.as_json()), MODEL) == f.limit  # kept in the counts' cache
    manual = session_facts(_session(tmp_path, 235_020, "manual"))
    assert manual.limit is None and manual.settled().limits == {}


def test_a_prompt_too_long_is_a_limit_met_after_the_response_before_it(tmp_path):
    s = _too_long(tmp_path, 228_990)
    assert s.records[-1].flags & F_TOO_LONG
    f = session_facts(s)
    ctx = 228_990 + 50  # the response's whole context: its prompt and its output
    assert f.limit == (ctx + TURN_MOST, "said the prompt was too long after a response of 229,040")
    other = _too_long(tmp_path, 228_990, text="API Error: 529 overloaded")
    assert not other.records[-1].flags & F_TOO_LONG and session_facts(other).limit is None


def test_a_compaction_far_below_a_1m_threshold_refutes_the_inferred_window(tmp_path):
    s = _settings(tmp_path).with_(model=MODEL)
    inferred = thresholds(s, peak_usage=235_020, version="2.1.88")
    assert inferred.model_window == 1_000_000 and inferred.window_source.startswith("inferred")
    got = thresholds(s, peak_usage=235_020, version="2.1.88", limit=(235_020, "compacted on its own at 235,020"))
    assert got.model_window == 200_000 and got.auto_compact == 167_000
    assert "compacted on its own at 235,020" in got.window_source
    # a compaction where a 1M window compacts confirms it; a setting that lowers the threshold explains a low one
    assert thresholds(s, peak_usage=980_000, version="2.1.88", limit=(968_000, "x")).model_window == 1_000_000
    low = s.with_(auto_compact_window=300_000, sources=(("auto_compact_window", "CLAUDE_CODE_AUTO_COMPACT_WINDOW"),))
    assert thresholds(low, peak_usage=290_000, version="2.1.88", limit=(270_000, "x")).model_window == 1_000_000


def test_the_compaction_is_explained_by_the_window_claude_code_counted(tmp_path):
    settings = _settings(tmp_path)
    rep = analyze(_session(tmp_path, 235_020), settings)
    assert rep.compactions[-1].cause == "threshold"
    assert rep.thresholds.model_window == 200_000
    # without the compaction's evidence the usage still says 1M (a [1m] setting is not recorded)
    recs_only = analyze(_session(tmp_path, 235_020, "manual", name="m"), settings)
    assert recs_only.thresholds.model_window == 1_000_000


def test_a_prompt_too_long_far_below_a_1m_window_refutes_it(tmp_path):
    settings = _settings(tmp_path)
    rep = analyze(_too_long(tmp_path, 228_990), settings)
    assert rep.thresholds.model_window == 200_000
    assert "said the prompt was too long after a response of 229,040" in rep.thresholds.window_source
    # refused after a response near the 1M window: that window fits
    assert analyze(_too_long(tmp_path, 700_000), settings).thresholds.model_window == 1_000_000


def test_a_compaction_s_limit_is_the_model_s_it_was_made_for(tmp_path):
    """An automatic compaction runs as the next request is about to go out, for that request's model: a process
    resumed with another --model compacts at its own threshold. 2.1.100 seed 180005: claude-sonnet-4-0[1m] answered up
    to 1,062,000 tokens, then a process on claude-opus-4-7 compacted at 492,002 before its first reply; inspector took
    492,002 for claude-sonnet-4-0's limit and gave it a 200,000 window. The limit is the first reply's after it; where
    the file ends first, the last reply's."""
    recs = [
        user("u1", None, "go", sec=0),
        assistant("a1", "u1", sec=1, usage=(1_000_000, 0, 62_000, 50), model="claude-sonnet-4-0"),
        system("cb", "a1", "compact_boundary", sec=4, compactMetadata={"trigger": "auto", "preTokens": 492_002}),
        user("sm", "cb", "This session is being continued from a previous conversation.", sec=4, isCompactSummary=True),
        assistant("a2", "sm", sec=5, usage=(30_000, 0, 6_000, 50), model="claude-opus-4-7"),
    ]
    for r in recs:
        r["version"] = "2.1.100"
    s = Session.load(write_jsonl(tmp_path / "switch.jsonl", recs))
    facts = session_facts(s)
    assert limit_for(facts, "claude-sonnet-4-0") is None
    assert limit_for(facts, "claude-opus-4-7") == (492_002, "compacted on its own at 492,002")
    rep = analyze(s, Settings())
    assert [e.cause for e in rep.compactions] == ["threshold"]  # opus-4-7's 200,000 window: 167,000
    assert rep.compactions[0].threshold == 167_000
    # the file ends after the boundary: the last reply's model, as before
    cut = FileFacts.of(s.records[:4])
    assert limit_for(cut, "claude-sonnet-4-0") == (492_002, "compacted on its own at 492,002")
    assert FileFacts.from_json(cut.as_json()).settled().limits == cut.settled().limits  # (the statusline keeps them)
