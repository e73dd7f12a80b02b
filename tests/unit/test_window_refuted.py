"""A 1M window inferred from usage is refuted by a compaction Claude Code made on its own far below that window's
limits: the API served more than the window Claude Code counted (2.1.88 seed 131000: claude-fable-5, unknown to that
release, answered at 235,020 tokens; Claude Code, on its 200,000 window, compacted there at its threshold)."""

from __future__ import annotations

from builders import assistant, system, user
from helpers import write_jsonl

from inspector.tokens.explain import analyze
from inspector.tokens.series import FileFacts, auto_compacted_at, session_facts
from inspector.tokens.thresholds import Settings, thresholds
from inspector.transcript.session import Session

MODEL = "claude-sonnet-4-5-20250929"


def _session(tmp_path, pre: int, trigger: str = "auto", version: str = "2.1.88", name: str = "s"):
    recs = [
        user("u1", None, "go", sec=0),
        assistant("a1", "u1", sec=1, usage=(100_000, 0, 20_000, 50), model=MODEL),
        user("u2", "a1", "go on", sec=2),
        assistant("a2", "u2", sec=3, usage=(pre - 2_000, 0, 2_000, 50), model=MODEL),
        system("cb", "a2", "compact_boundary", sec=4, compactMetadata={"trigger": trigger, "preTokens": pre}),
        user("sm", "cb", "This session is being continued from a previous conversation.", sec=4, isCompactSummary=True),
    ]
    for r in recs:
        r["version"] = version
    return Session.load(write_jsonl(tmp_path / f"{name}{pre}{trigger}.jsonl", recs))


def _settings(tmp_path, **kw):
    return Settings.from_environment(env=kw, config_dir=tmp_path / "none")


def test_the_facts_keep_the_smallest_compaction_of_each_model(tmp_path):
    s = _session(tmp_path, 235_020)
    f = session_facts(s)
    assert f.auto_pre == 235_020 and f.auto_pres == {MODEL: 235_020}
    assert auto_compacted_at(f, MODEL) == 235_020 and auto_compacted_at(f, "claude-other") == 235_020
    assert auto_compacted_at(FileFacts.from_json(f.as_json()), MODEL) == 235_020  # kept in the counts' cache
    manual = session_facts(_session(tmp_path, 235_020, "manual"))
    assert manual.auto_pre is None and manual.auto_pres == {}


def test_a_compaction_far_below_a_1m_threshold_refutes_the_inferred_window(tmp_path):
    s = _settings(tmp_path).with_(model=MODEL)
    inferred = thresholds(s, peak_usage=235_020, version="2.1.88")
    assert inferred.model_window == 1_000_000 and inferred.window_source.startswith("inferred")
    got = thresholds(s, peak_usage=235_020, version="2.1.88", compacted_at=235_020)
    assert got.model_window == 200_000 and got.auto_compact == 167_000
    assert "compacted on its own at 235,020" in got.window_source
    # a compaction where a 1M window compacts confirms it; a setting that lowers the threshold explains a low one
    assert thresholds(s, peak_usage=980_000, version="2.1.88", compacted_at=968_000).model_window == 1_000_000
    low = s.with_(auto_compact_window=300_000, sources=(("auto_compact_window", "CLAUDE_CODE_AUTO_COMPACT_WINDOW"),))
    assert thresholds(low, peak_usage=290_000, version="2.1.88", compacted_at=270_000).model_window == 1_000_000


def test_the_compaction_is_explained_by_the_window_claude_code_counted(tmp_path):
    settings = _settings(tmp_path)
    rep = analyze(_session(tmp_path, 235_020), settings)
    assert rep.compactions[-1].cause == "threshold"
    assert rep.thresholds.model_window == 200_000
    # without the compaction's evidence the usage still says 1M (a [1m] setting is not recorded)
    recs_only = analyze(_session(tmp_path, 235_020, "manual", name="m"), settings)
    assert recs_only.thresholds.model_window == 1_000_000
