"""A compaction at the blocking limit of a model whose threshold is not enforced (2.1.328 and later compact there
whatever the window's source: "routing through reactive (thresholdSource=auto)") is a threshold compaction, not an
answer to a refusal; and which models a release gives deferred tools."""

from __future__ import annotations

from builders import assistant, attachment, system, user
from helpers import write_jsonl

from inspector.claude.models import defers_tools
from inspector.tokens.explain import analyze
from inspector.tokens.thresholds import Settings
from inspector.transcript.session import Session


def _session(tmp_path, pre: int, version: str = "2.1.328", asked: str | None = "claude-sonnet-4-0[1m]"):
    """2.1.328 seed 113016's fork: a context of `pre` tokens written on a 1M model, then claude-3-5-haiku (its window
    the catalog's: not enforced, blocking at 188,808) announced and compacting before its first request."""
    recs = [
        user("u1", None, "go", sec=0),
        assistant("a1", "u1", sec=1, usage=(pre - 2_000, 0, 2_000, 50), model="claude-sonnet-4-0"),
        user("u2", "a1", "go on in a fork", sec=2),
        attachment("m1", "u2", {"type": "model", "identity": {"modelId": "claude-3-5-haiku"}}, sec=2),
        system("cb", "m1", "compact_boundary", sec=3, compactMetadata={"trigger": "auto", "preTokens": pre}),
        user("sm", "cb", "This session is being continued from a previous conversation.", sec=3, isCompactSummary=True),
    ]
    if asked is not None:
        recs[1]["requestedModel"] = asked  # what the reply was requested on (written from 2.1.295)
    for r in recs:
        r["version"] = version
    return Session.load(write_jsonl(tmp_path / f"s{pre}_{version}_{asked}.jsonl", recs))


def test_a_compaction_at_the_blocking_limit_is_the_threshold_s(tmp_path):
    settings = Settings.from_environment(env={}, config_dir=tmp_path / "none")
    above = analyze(_session(tmp_path, 222_058), settings).compactions[-1]
    assert above.cause == "threshold" and "blocking limit 188,808" in above.cause_evidence
    assert "requested on claude-sonnet-4-0[1m]" in above.cause_evidence
    assert "window was set" not in above.explanation and above.as_dict()["larger_model"] == "claude-sonnet-4-0[1m]"
    below = analyze(_session(tmp_path, 150_000), settings).compactions[-1]
    assert below.cause == "prompt_too_long"  # under the limit an unenforced threshold compacts only on a refusal


def test_the_releases_that_compact_at_the_blocking_limit_of_an_unenforced_threshold(tmp_path):
    """Bisected on the binaries (the era matrix's blocking-another-window probe: a session grown on a 1M window, then
    resumed on claude-haiku-4-5 above its blocking limit): 2.1.294 sent the request (the API refuses it, and the
    refusal compacts), 2.1.295 and later compact before sending (2.1.310 seed 113016, 2.1.322 seed 188007)."""
    settings = Settings.from_environment(env={}, config_dir=tmp_path / "none")
    for version, cause in (
        ("2.1.250", "prompt_too_long"),
        ("2.1.294", "prompt_too_long"),
        ("2.1.295", "threshold"),
        ("2.1.310", "threshold"),
        ("2.1.332", "threshold"),
    ):
        got = analyze(_session(tmp_path, 222_058, version), settings).compactions[-1]
        assert got.cause == cause, (version, got.cause, got.cause_evidence)
    # only a switch from a larger window compacts so (2.1.328: claude-opus-4-5's 200,000 to claude-3-5-haiku's sent the
    # request; a session grown on one model past its limit sends it too); a reply that names no requested model is
    # not evidence of one
    for asked in ("claude-opus-4-5", "claude-3-5-haiku", None):
        got = analyze(_session(tmp_path, 222_058, "2.1.328", asked), settings).compactions[-1]
        assert got.cause == "prompt_too_long", (asked, got.cause_evidence)


def test_the_models_that_get_deferred_tools():
    """Measured on 2.1.328 and 2.1.332 (a generated run on each catalog model): only the Claude 3 models load every
    tool (no deferred_tools_delta); elsewhere unmeasured."""
    for m in ("claude-3-5-haiku", "claude-3-5-sonnet", "claude-3-7-sonnet-20250219"):
        assert defers_tools(m, (2, 1, 332)) is False
    for m in ("claude-haiku-4-5", "claude-opus-4-1", "claude-sonnet-4-0[1m]", "claude-mythos-5", "claude-foo-1"):
        assert defers_tools(m, (2, 1, 328)) is True
    assert defers_tools("claude-3-5-haiku", (2, 1, 200)) is None and defers_tools(None, (2, 1, 332)) is None


def _failed_then_resumed(tmp_path, error: bool):
    """2.1.219 seed 189036's shape: claude-sonnet-4-6 (threshold 167,000) replied at 170,000 and 180,000, its tries to
    compact failing (nothing recorded), the turn ended in Claude Code's "Prompt is too long" error; resumed, the next
    prompt's first check compacted at 182,043. `error`: whether the error reply is in the file."""
    recs = [
        user("u1", None, "go", sec=0),
        assistant("a1", "u1", sec=1, usage=(10, 0, 170_000, 50), mid="m1"),
        user("u2", "a1", "go on", sec=2),
        assistant("a2", "u2", sec=3, usage=(10, 0, 180_000, 50), mid="m2"),
        user("u3", "a2", "and on", sec=4),
    ]
    last = "u3"
    if error:
        recs.append(
            assistant(
                "e1",
                "u3",
                [{"type": "text", "text": "Prompt is too long"}],
                sec=5,
                usage=(0, 0, 0, 0),
                model="<synthetic>",
                isApiErrorMessage=True,
            )
        )
        last = "e1"
    recs += [
        user("u4", last, "continue", sec=60),
        system("cb", "u4", "compact_boundary", sec=61, compactMetadata={"trigger": "auto", "preTokens": 182_043}),
        user("sm", "cb", "This session is being continued from a previous conversation.", sec=61, isCompactSummary=True),
        assistant("a3", "sm", sec=62, usage=(10, 0, 30_000, 50), mid="m3"),
    ]
    for r in recs:
        r["version"] = "2.1.219"
    return Session.load(write_jsonl(tmp_path / f"f{error}.jsonl", recs))


def test_a_compaction_at_the_next_prompt_after_a_too_long_error_is_the_threshold_s(tmp_path):
    """Replies above the threshold that did not compact refute it, unless the turn then ended in a "Prompt is too
    long" error (its tries to compact failed) and the compaction came at the next prompt's first check: Claude Code's
    threshold was in force all along (2.1.219 seed 189036, a release that records no request)."""
    settings = Settings.from_environment(env={}, config_dir=tmp_path / "none")
    got = analyze(_failed_then_resumed(tmp_path, True), settings).compactions[-1]
    assert got.cause == "threshold" and '"Prompt is too long" error (line 6)' in got.cause_evidence, got.cause_evidence
    assert "next prompt (line 7)" in got.cause_evidence
    without = analyze(_failed_then_resumed(tmp_path, False), settings).compactions[-1]
    assert "Prompt is too long" not in without.cause_evidence and without.refuted  # the replies refute it, as before
