"""An automatic compaction below the threshold, in a release that records no request (before 2.1.3xx): the API's
refusal is told from what the transcript shows, never assumed. Two kinds of evidence, each from Claude Code's own
behaviour: the tail a compaction after a refusal keeps is sized by how far the request was over, where a threshold
compaction of a release that keeps a tail (2.1.159 on) keeps one round; and Claude Code checks before every request,
so a reply of the same stretch above the compaction's size, followed by a request sent uncompacted, rules out a lower
threshold. Without either, the cause stays unknown and the sentence names both possibilities. The runs: generated seeds
on the real 2.1.200 (tests/data, the harness's saved runs without their HOME)."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import saved_run, sha256

from conformance.compare import compare, fake_env
from inspector.tokens.explain import analyze
from inspector.tokens.thresholds import Settings
from inspector.transcript.session import Session


def _main_transcript(folder: Path) -> Path:
    (main,) = [p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts]
    return main


def _settings(folder: Path) -> Settings:
    """What the harness ran with, as a user's settings file and environment would tell inspector."""
    run = json.loads((folder / "run.json").read_text())
    cfg = folder / "home" / ".claude"
    cfg.mkdir(parents=True, exist_ok=True)
    (cfg / "settings.json").write_text(json.dumps(run.get("settings_after") or run.get("settings") or {}))
    return Settings.from_environment(env=fake_env(run), config_dir=cfg)  # (the fake API's host: not Anthropic's)


def test_a_refusal_is_told_by_the_tail_it_kept(tmp_path):
    """Seed 158003: claude-sonnet-4-6 (its 167,000 threshold enforced) refused at about 101,000 tokens; Claude Code
    compacted keeping four rounds, where its threshold compaction keeps one."""
    folder = saved_run(tmp_path, "gen_158003_2.1.200")
    main = _main_transcript(folder)
    before = sha256(main)
    assert not [n for n in compare(folder).notes if n.startswith("compactions:")]
    (e,) = [e for e in analyze(Session.load(main), _settings(folder)).compactions if e.kind == "auto"]
    assert (e.cause, e.pre_tokens, e.rounds_kept, e.threshold) == ("prompt_too_long", 101_016, 4, 167_000)
    assert "kept the last 4 rounds verbatim where a threshold compaction of this release keeps one" in e.cause_evidence
    assert e.explanation.startswith("The API most likely refused a request as too long")
    assert sha256(main) == before


def test_a_refusal_is_told_by_a_later_reply_above_it(tmp_path):
    """Seed 170000: claude-sonnet-4-5[1m] with an auto-compact window of 200,000 (threshold 167,000) refused at 127,184
    tokens, one round kept; the session's next process (--resume) went to 151,000 tokens and sent its next request
    uncompacted: no threshold at 127,184 was in force (unless that process ran with other settings, which the sentence
    says). Cut before that process, nothing tells the refusal from a lower threshold: unknown, both named."""
    folder = saved_run(tmp_path, "gen_170000_2.1.200")
    main = _main_transcript(folder)
    settings = _settings(folder)
    assert not [n for n in compare(folder).notes if n.startswith("compactions:")]
    (e,) = analyze(Session.load(main), settings).compactions
    assert (e.cause, e.pre_tokens, e.rounds_kept) == ("prompt_too_long", 127_184, 1)
    assert "of a later (resumed) process of this session, reached 151,000 tokens" in e.cause_evidence
    assert "unless that process ran with other settings" in e.cause_evidence

    lines = main.read_bytes().splitlines(keepends=True)
    resumed = next(k for k, line in enumerate(lines) if b'"content":"continue"' in line)  # the second process's prompt
    cut = tmp_path / "cut" / main.parent.name / main.name
    cut.parent.mkdir(parents=True)
    cut.write_bytes(b"".join(lines[:resumed]))
    (e,) = analyze(Session.load(cut), settings).compactions
    assert e.cause == "unknown" and e.may_be_refusal
    assert "or the API refused a request as too long" in e.explanation


def test_a_reply_of_the_same_process_above_it_rules_out_a_lower_threshold(tmp_path):
    """The same run, read as one process (its second prompt's skill listing, which tells a resumed process by being
    marked initial, unmarked):
    the reply above the compaction is then of the process that compacted, and the sentence says so without the
    reservation; the last reply of a stretch (no request after it) proves nothing."""
    folder = saved_run(tmp_path, "gen_170000_2.1.200")
    main = _main_transcript(folder)
    settings = _settings(folder)
    lines = main.read_bytes().splitlines(keepends=True)
    resumed = next(k for k, line in enumerate(lines) if b'"content":"continue"' in line)
    listing = next(k for k in range(resumed, len(lines)) if b'"type":"skill_listing"' in lines[k])
    one = tmp_path / "one" / main.parent.name / main.name
    one.parent.mkdir(parents=True)
    unmarked = lines[listing].replace(b'"isInitial":true', b'"isInitial":false')
    assert unmarked != lines[listing]
    lines[listing] = unmarked
    one.write_bytes(b"".join(lines))
    s = Session.load(one)
    rep = analyze(s, settings)
    (e,) = rep.compactions
    assert e.cause == "prompt_too_long", e.cause_evidence
    assert "of the same process reached 151,000 tokens and the next request went out uncompacted" in e.cause_evidence

    # the 151,000 reply's request was the last the process sent after one above it: cut after it, only the last
    # reply of the stretch is above the compaction, and no request followed it
    above = s.records[next(t.index for t in rep.series.turns if t.tokens == 151_000)].line
    last = tmp_path / "last" / main.parent.name / main.name
    last.parent.mkdir(parents=True)
    last.write_bytes(b"".join(lines[:above]))
    (e,) = analyze(Session.load(last), settings).compactions
    assert e.cause == "unknown"


def test_a_later_reply_above_it_in_a_later_stretch_tells_a_refusal(tmp_path):
    """Seed 183014 on 2.1.250: claude-sonnet-4-6 refused at 50,055 and, after that compaction, at 50,060; a later
    process's reply reached 62,000 tokens and its next request went out uncompacted. That reply is past the second
    compaction, outside the first one's stretch, and it tells both refusals (the model each was made for is known: a
    release that announces none)."""
    folder = saved_run(tmp_path, "gen_183014_2.1.250")
    main = _main_transcript(folder)
    assert not [n for n in compare(folder).notes if n.startswith("compactions:")]
    exps = [e for e in analyze(Session.load(main), _settings(folder)).compactions if e.kind == "auto"]
    assert [(e.cause, e.pre_tokens) for e in exps] == [("prompt_too_long", 50_055), ("prompt_too_long", 50_060)]
    assert all("reached 62,000 tokens and its next request went out uncompacted" in e.cause_evidence for e in exps)


def test_a_session_that_announces_its_models_tells_a_refusal_by_a_later_stretch(tmp_path):
    """Seed 1126 on 2.1.273, which writes a `model` announcement for each process: claude-sonnet-5 was refused at
    68,086 and, after that compaction, at 68,355; a later reply of the model the first was made for went above it
    past the second, and the request after it went out uncompacted. The model a compaction was made for is the one
    announced at its boundary, so the later stretch tells the first refusal as it did for a release that announces
    none (inspector had said unknown)."""
    folder = saved_run(tmp_path, "found_1126_2.1.273")
    main = _main_transcript(folder)
    before = sha256(main)
    assert not [n for n in compare(folder).notes if n.startswith("compactions:")]
    exps = [e for e in analyze(Session.load(main), _settings(folder)).compactions if e.kind == "auto"]
    assert [(e.cause, e.pre_tokens) for e in exps][:2] == [("prompt_too_long", 68_086), ("prompt_too_long", 68_355)]
    assert sha256(main) == before


def test_a_reply_of_another_model_in_the_stretch_tells_a_refusal(tmp_path):
    """Seed 7010 on 2.1.285: claude-opus-5[1m] (a 1M window: threshold 967,000) compacted at 51,169; the session was
    resumed in that stretch with claude-haiku-4-5, whose reply reached 69,000 and the request after it went out
    uncompacted. A threshold as low as 51,169 comes from the settings (an override, an auto-compact window), not from a
    model's window, so that reply rules it out, with the reservation for a later process and the switch named. (The
    run's compaction at 2,364, before any reply of its stretch, stays unknown: nothing tells it.)"""
    folder = saved_run(tmp_path, "found_7010_2.1.285")
    main = _main_transcript(folder)
    (theirs,) = [n for n in compare(folder).notes if n.startswith("compactions:")]
    assert "'prompt_too_long at 51,169, kept 4'], inspector" in theirs and "'unknown at 2,364, kept 10'" in theirs
    (e,) = [e for e in analyze(Session.load(main), _settings(folder)).compactions if e.pre_tokens == 51_169]
    assert e.cause == "prompt_too_long", e.cause_evidence
    assert "a reply of claude-haiku-4-5, to which the model was switched" in e.cause_evidence
    assert "unless that process ran with other settings" in e.cause_evidence


def test_a_refusals_tail_tells_it_above_a_refuted_threshold(tmp_path):
    """Seed 1079 on 2.1.250: a process on claude-opus-5[1m] (which no transcript of that release records as such: the
    API's model name drops the [1m]) went to 289,000 uncompacted and was refused at 306,102; Claude Code compacted
    keeping 14 rounds. The replies above claude-opus-5's 167,000 refute that threshold, and what the compaction kept
    tells the refusal: a threshold compaction of this release keeps one round (inspector had said failed tries)."""
    folder = saved_run(tmp_path, "found_1079_2.1.250")
    main = _main_transcript(folder)
    assert not [n for n in compare(folder).notes if n.startswith("compactions:")]
    (e,) = [e for e in analyze(Session.load(main), _settings(folder)).compactions if e.kind == "auto"]
    assert (e.cause, e.pre_tokens, e.rounds_kept) == ("prompt_too_long", 306_102, 14), e.cause_evidence
    assert "so that threshold was not in force here; it kept the last 14 rounds verbatim" in e.cause_evidence
