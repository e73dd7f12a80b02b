"""The bundled samples: made by the committed generator, and showing every feature."""

from __future__ import annotations

from collections import Counter

import pytest
from helpers import SAMPLES, SAMPLES_SOURCE, tree_hashes

from inspector.library.stats import collect_stats
from inspector.samplegen import format_file_size, generate, persisted_block
from inspector.transcript.discovery import resolve_target
from inspector.transcript.records import F_IMAGE, F_THINKING
from inspector.transcript.session import Session


def test_generator_is_deterministic_and_matches_committed_samples(tmp_path):
    generate(tmp_path / "a")
    generate(tmp_path / "b")
    assert tree_hashes(tmp_path / "a") == tree_hashes(tmp_path / "b")
    made = tree_hashes(tmp_path / "a")
    committed = tree_hashes(SAMPLES_SOURCE)
    # every file the generator makes is committed as it makes it (other files a user saved there are not its concern)
    assert {k: committed.get(k) for k in made} == made, "run: python -m inspector.samplegen sample_sessions"


@pytest.fixture(scope="module")
def stats():
    return {s["title"]: s for s in collect_stats(resolve_target(SAMPLES))}


@pytest.fixture(scope="module")
def sessions():
    return {Session.load(p).title: Session.load(p) for p in SAMPLES.rglob("*.jsonl") if "subagents" not in p.parts}


AUTO = "Fix forecast crash on empty hourly data"
MANUAL = "history command"


def test_auto_compaction_climbs_through_the_thresholds(stats, sessions):
    s = stats[AUTO]
    [c] = s["compactions"]
    assert c["kind"] == "compact" and c["trigger"] == "auto" and c["pre_tokens"] >= 167_000
    sess = sessions[AUTO]
    ctx = [sum(u) for _, u in sess.main_responses()]
    assert any(147_000 <= v < 167_000 for v in ctx), "passes the warning threshold before compacting"
    kinds = {a["kind"]: a for a in s["subagent_list"]}
    assert set(kinds) == {"agent", "compaction"}
    [comp] = [a for a in sess.subagents if a.kind == "compaction"]
    assert comp.boundary is not None and sess.records[comp.boundary].is_compact_boundary
    [agent] = [a for a in sess.subagents if a.kind == "agent"]
    assert agent.meta["agentType"] == "Explore" and agent.spawned_by is not None
    assert s["session_memory"] is True and len(sess.memory()) == 10
    summary = sess.records[comp.boundary + 1]
    assert summary.is_compact_summary


def test_persisted_outputs_in_both_shapes(stats, sessions):
    auto, manual = sessions[AUTO], sessions[MANUAL]
    assert stats[AUTO]["persisted_outputs"]["markers"] >= 1
    shapes = Counter(po.shape for po in auto.persisted_outputs)
    assert shapes["marker"] >= 1 and all(po.file is not None for po in auto.persisted_outputs)
    inline = [po for po in manual.persisted_outputs]
    assert inline and all(po.shape == "inline" and po.file_size and po.file_size > 40_000 for po in inline)
    # the content-replacement record points at a persisted file too
    assert auto.transcript.replacements


def test_manual_compact_microcompacts_branch_drift(stats, sessions):
    s = stats[MANUAL]
    kinds = [(c["kind"], c["trigger"]) for c in s["compactions"]]
    assert kinds == [("microcompact", "auto"), ("microcompact", "auto"), ("compact", "manual")]
    assert all(c["tokens_saved"] > 0 for c in s["compactions"])
    assert s["chain"]["branches"] == 1
    assert {"hologram", "quantum-bookmark", "progress"} <= set(s["records"]["by_type"])
    sess = sessions[MANUAL]
    assert any(r.subtype == "context_forecast" for r in sess.records)


def test_parallel_calls_thinking_image(sessions):
    auto = sessions[AUTO]
    per_msg = Counter(r.message_id for r in auto.records if r.tool_uses)
    assert max(per_msg.values()) >= 2
    assert any(r.flags & F_THINKING for r in auto.records)
    assert any(r.flags & F_IMAGE for r in auto.records)


def test_live_session_has_a_truncated_last_line(stats):
    [live] = [s for s in stats.values() if s["records"]["malformed"]]
    assert live["problems"][-1]["reason"].startswith("incomplete last line")


def test_legacy_session(stats, sessions):
    s = stats["Zsh prompt shows git branch"]
    assert s["version"].startswith("1.0.")
    assert [a["layout"] for a in s["subagent_list"]] == ["in-file"] and s["subagent_list"][0]["spawned_by"]
    sess = sessions["Zsh prompt shows git branch"]
    assert any(r.type == "system" and r.subtype is None for r in sess.records)


@pytest.mark.parametrize(
    "n, text", [(500, "500 bytes"), (2000, "2KB"), (2048, "2KB"), (236_954, "231.4KB"), (50_176, "49KB"), (3 * 1024**2, "3MB")]
)
def test_format_file_size(n, text):
    assert format_file_size(n) == text


def test_persisted_block_preview_rules():
    short = persisted_block("/p/x.txt", "abc")
    assert short.endswith("abc\n</persisted-output>") and "Output too large (3 bytes)" in short
    long = persisted_block("/p/x.txt", ("y" * 99 + "\n") * 100)
    body = long.split("Preview (first 2KB):\n", 1)[1]
    assert body.endswith("\n...\n</persisted-output>")
    assert len(body.split("\n...\n")[0]) <= 2000
