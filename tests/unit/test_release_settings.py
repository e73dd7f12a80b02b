"""Settings that not every release reads: a session is explained by what the release that wrote it read.

2.1.88's binary reads autoCompactEnabled from ~/.claude.json only (a global config key) and has no autoCompactWindow
setting; 2.1.21's has no CLAUDE_CODE_AUTO_COMPACT_WINDOW. The releases where each began to be read are the era
matrix's bisections (conformance/matrix.py probes settings-auto-compact, settings-window, env-window), recorded in
inspector/claude/era_matrix.json; these tests take them from there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.claude.measured import answer_at, first_answering
from inspector.claude.release import parse_version, show_version
from inspector.tokens.thresholds import Settings, read_by_release, thresholds
from inspector.tokens.whatif import from_form

MODEL = "claude-sonnet-4-5"


def _settings(tmp_path: Path, settings: dict | None = None, config: dict | None = None, env: dict | None = None) -> Settings:
    if settings is not None:
        (tmp_path / "settings.json").write_text(json.dumps(settings))
    if config is not None:
        (tmp_path / ".claude.json").write_text(json.dumps(config))
    return Settings.from_environment(env or {}, tmp_path).with_(model=MODEL)


def _around(probe: str) -> tuple[str, str]:
    """The last release measured not reading a setting, and the first reading it."""
    first = first_answering(probe, True)
    assert first is not None, f"no bisection of {probe} in the era matrix"
    v = parse_version(first)
    assert v is not None
    before = show_version((v[0], v[1], v[2] - 1))
    assert answer_at(probe, before) is False and answer_at(probe, first) is True
    return before, first


def test_the_matrix_places_the_settings_after_2_1_88() -> None:
    # read from 2.1.88's own code: `autoCompactEnabled` of the global config, no autoCompactWindow at all
    assert answer_at("settings-auto-compact", "2.1.88") is False
    assert answer_at("settings-window", "2.1.88") is False
    assert answer_at("settings-auto-compact", "2.1.328") is True
    assert answer_at("settings-window", "2.1.328") is True


def test_auto_compact_off_in_settings_json_is_read_only_by_the_releases_that_read_it(tmp_path: Path) -> None:
    s = _settings(tmp_path, {"autoCompactEnabled": False})
    assert not s.auto_compact_enabled
    before, first = _around("settings-auto-compact")
    old = thresholds(s, version=before)
    assert old.auto_compact_enabled and old.auto_compact is not None
    assert "autoCompactEnabled false in settings.json is not read" in old.rules and first in old.rules
    # said once also where the thresholds are worked out again for a 1M window inferred from usage, or refuted
    for kw in ({"peak_usage": 300_000}, {"peak_usage": 300_000, "limit": (240_000, "compacted on its own at 240,000")}):
        assert thresholds(s, version=before, **kw).rules.count("autoCompactEnabled false in settings.json is not read") == 1
    new = thresholds(s, version=first)
    assert not new.auto_compact_enabled and new.auto_compact is None
    assert "not read" not in new.rules
    # a session that does not say its release is read as today's Claude Code would
    assert not thresholds(s, version=None).auto_compact_enabled


@pytest.mark.parametrize("where", ["env", "config"])
def test_auto_compact_off_elsewhere_is_read_by_the_releases_that_do_not_read_settings_json(tmp_path: Path, where: str) -> None:
    s = (
        _settings(tmp_path, {"autoCompactEnabled": False}, env={"DISABLE_AUTO_COMPACT": "1"})
        if where == "env"
        else _settings(tmp_path, {"autoCompactEnabled": False}, config={"autoCompactEnabled": False})
    )
    before, _ = _around("settings-auto-compact")
    got = thresholds(s, version=before)
    assert not got.auto_compact_enabled and got.auto_compact is None
    # settings.json's is named as not read, and what keeps auto-compact off said
    assert "another place turns auto-compact off" in got.rules and "auto-compact is on" not in got.rules


def test_disable_auto_compact_is_read_from_2_0_77(tmp_path: Path) -> None:
    """1.0.128 to 2.0.76 compact with DISABLE_AUTO_COMPACT set (the era matrix's cells, bisected with the
    env-auto-compact probe: 2.0.77 is the first that turns auto-compact off for it; a 1.0.128 run with the variable set
    compacted at 173,000 and was told 'unknown', generated seed 197004). ~/.claude.json's autoCompactEnabled, read by
    every release, keeps it off."""
    before, first = _around("env-auto-compact")
    assert (before, first) == ("2.0.76", "2.0.77")
    s = _settings(tmp_path, env={"DISABLE_AUTO_COMPACT": "1"})
    old = thresholds(s, version="1.0.128")
    assert old.auto_compact_enabled and old.auto_compact is not None
    assert "DISABLE_AUTO_COMPACT is not read" in old.rules and "auto-compact is on" in old.rules
    assert thresholds(s, version=before).auto_compact_enabled
    new = thresholds(s, version=first)
    assert not new.auto_compact_enabled and new.auto_compact is None and "not read" not in new.rules
    both = _settings(tmp_path, config={"autoCompactEnabled": False}, env={"DISABLE_AUTO_COMPACT": "1"})
    kept = thresholds(both, version=before)
    assert not kept.auto_compact_enabled and "DISABLE_AUTO_COMPACT is not read" in kept.rules


def test_the_window_setting_is_read_only_by_the_releases_that_have_it(tmp_path: Path) -> None:
    s = _settings(tmp_path, {"autoCompactWindow": 120_000})
    before, first = _around("settings-window")
    old = thresholds(s, version=before)
    assert old.context_window == 200_000
    assert "autoCompactWindow setting is not read" in old.rules
    new = thresholds(s, version=first)
    assert new.context_window == 120_000 and "not read" not in new.rules


def test_the_window_variable_is_read_only_by_the_releases_that_have_it(tmp_path: Path) -> None:
    s = _settings(tmp_path, env={"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "120000"})
    before, first = _around("env-window")
    old = thresholds(s, version=before)
    assert old.context_window == 200_000 and "CLAUDE_CODE_AUTO_COMPACT_WINDOW is not read" in old.rules
    assert thresholds(s, version=first).context_window == 120_000


def test_a_what_if_is_taken_as_it_is_by_every_release(tmp_path: Path) -> None:
    base = _settings(tmp_path, {"autoCompactEnabled": False, "autoCompactWindow": 120_000})
    before, _ = _around("settings-auto-compact")
    off = from_form(base, {"auto_compact": "off"})
    got = thresholds(off, version=before)
    assert not got.auto_compact_enabled and "not read" not in got.rules
    kept = from_form(base, {"auto_compact": "keep"})
    assert thresholds(kept, version=before).auto_compact_enabled  # the setting, which that release did not read
    no_window, _ = _around("settings-window")
    w = from_form(base, {"auto_compact_window": "150000"})
    assert thresholds(w, version=no_window).context_window == 150_000


def test_read_by_release_leaves_settings_alone_when_nothing_is_unread(tmp_path: Path) -> None:
    s = _settings(tmp_path, {"autoCompactEnabled": False})
    assert read_by_release(s, "2.1.328") == (s, ())
    assert read_by_release(Settings(model=MODEL), "2.1.20") == (Settings(model=MODEL), ())


def test_a_small_env_window_is_raised_only_by_the_releases_that_raise_it(tmp_path: Path) -> None:
    """CLAUDE_CODE_AUTO_COMPACT_WINDOW=80000: 2.1.88 takes it as it is (its code: window 80,000, threshold 47,000);
    from the release the bisection places (2.1.89) it is raised to 100,000 (threshold 67,000: 2.1.152 compacted at
    67,000-68,197, generated seed 144201); the report says what was asked and what it became."""
    s = _settings(tmp_path, env={"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "80000"})
    before, first = _around("env-window-floor")
    assert first == "2.1.89"
    old, new, today = (thresholds(s, version=v) for v in (before, first, "2.1.152"))
    assert (old.context_window, old.effective_window, old.auto_compact) == (80_000, 60_000, 47_000)
    assert (new.context_window, new.effective_window, new.auto_compact) == (100_000, 80_000, 67_000)
    assert (today.effective_window, today.auto_compact) == (80_000, 67_000)
    assert "80,000 (raised to 100,000" in new.window_source and "raised" not in old.window_source
    big = _settings(tmp_path, env={"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "150000"})
    assert thresholds(big, version=before).auto_compact == thresholds(big, version=first).auto_compact == 117_000


def test_max_context_tokens_sizes_an_unknown_model_only_where_the_release_reads_it(tmp_path: Path) -> None:
    """CLAUDE_CODE_MAX_CONTEXT_TOKENS sizes the window of a model no catalog has from 2.1.324 (the era matrix's
    max-context-tokens probe, bisected): before, the release gives the unknown model its own window (generated runs on
    2.1.250 and 2.1.300 with claude-foo-1 at 60,000 and 150,000 compacted at the unknown model's 167,000 threshold)."""
    s = Settings.from_environment({"CLAUDE_CODE_MAX_CONTEXT_TOKENS": "60000"}, tmp_path).with_(model="claude-foo-1")
    before, first = _around("max-context-tokens")
    old = thresholds(s, version=before)
    assert (old.context_window, old.auto_compact) == (200_000, 167_000)
    assert "CLAUDE_CODE_MAX_CONTEXT_TOKENS is not read" in old.rules and first in old.rules
    new = thresholds(s, version=first)
    assert (new.context_window, new.auto_compact) == (60_000, 27_000) and "not read" not in new.rules
    # a model the catalog knows is sized by the catalog on either side
    known = Settings.from_environment({"CLAUDE_CODE_MAX_CONTEXT_TOKENS": "60000"}, tmp_path).with_(model="claude-sonnet-4-6")
    assert thresholds(known, version=before).context_window == thresholds(known, version=first).context_window == 200_000


def test_an_unknown_model_s_window_source_is_named_as_its_release_names_it(tmp_path: Path) -> None:
    """2.1.159-2.1.222 give a model their catalog does not know the default's source, "model-default" (enforced) when
    its name gives it a window above 200,000 (claude-opus-5-5, named from 2.1.280, by its claude-opus-5 prefix), else
    "auto" (not enforced: claude-foo-1); 2.1.223 adds "unknown-model" (enforced) and reads
    CLAUDE_CODE_DISABLE_UNKNOWN_MODEL_WINDOW_ENFORCEMENT. Read in the 2.1.219, 2.1.222 and 2.1.223 code and measured by
    the era matrix on 2.1.222 and 2.1.223 (generated seeds 189014 and 189024 on 2.1.219, where inspector had said
    "unknown-model")."""
    got = {}
    for model in ("claude-foo-1", "claude-opus-5-5"):
        s = Settings.from_environment({}, tmp_path).with_(model=model)
        for v in ("2.1.222", "2.1.223"):
            t = thresholds(s, version=v)
            got[model, v] = (t.compact_source, t.enforced, t.effective_window)
    assert got == {
        ("claude-foo-1", "2.1.222"): ("auto", False, 180_000),
        ("claude-foo-1", "2.1.223"): ("unknown-model", True, 180_000),
        ("claude-opus-5-5", "2.1.222"): ("model-default", True, 180_000),
        ("claude-opus-5-5", "2.1.223"): ("unknown-model", True, 180_000),
    }
    off = Settings.from_environment({"CLAUDE_CODE_DISABLE_UNKNOWN_MODEL_WINDOW_ENFORCEMENT": "1"}, tmp_path)
    off = off.with_(model="claude-opus-5-5")
    assert thresholds(off, version="2.1.222").compact_source == "model-default"  # not read before 2.1.223
    assert thresholds(off, version="2.1.223").compact_source == "auto"


def test_the_percentage_override_is_read_from_2_0_20(tmp_path: Path) -> None:
    """CLAUDE_AUTOCOMPACT_PCT_OVERRIDE, bisected with the env-pct probe: 2.0.19 and earlier compact at their own
    threshold (1.0.128 compacted claude-sonnet-5 at 183,000 with 85 set, generated seed 197017), 2.0.20 takes the share."""
    before, first = _around("env-pct")
    assert (before, first) == ("2.0.19", "2.0.20")
    s = _settings(tmp_path, env={"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"})
    plain = thresholds(_settings(tmp_path), version=before)
    old = thresholds(s, version=before)
    assert old.auto_compact == plain.auto_compact and old.auto_pct is None
    assert "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE is not read" in old.rules and "2.0.20" in old.rules
    new = thresholds(s, version=first)
    assert new.auto_pct == 50 and new.auto_compact is not None and new.auto_compact < plain.auto_compact
    assert "not read" not in new.rules


@pytest.mark.parametrize("how", ["suffix", "told"])
def test_a_1m_model_setting_is_read_from_2_0_15(tmp_path: Path, how: str) -> None:
    """A model named with [1m] (or a user's --one-m) gets a 1M window from 2.0.15 (the one-m-suffix probe, bisected;
    the era matrix's cells: 1.0.128 and 2.0.0 compacted claude-sonnet-4-5[1m] at 155,000, 2.0.76 at 955,000). Before,
    the model's own 200,000 window, and the source says why (1.0.128 on claude-opus-5[1m], generated seed 197033)."""
    before, first = _around("one-m-suffix")
    assert (before, first) == ("2.0.14", "2.0.15")
    s = Settings(model="claude-sonnet-4-5[1m]") if how == "suffix" else Settings(model=MODEL, one_m=True)
    old = thresholds(s, version="1.0.128")
    assert old.context_window == 200_000 and "[1m] is not read by Claude Code 1.0.128" in old.window_source
    assert thresholds(s, version=before).context_window == 200_000
    assert thresholds(s, version=first).context_window == 1_000_000
    assert thresholds(s, version=None).context_window == 1_000_000  # a session that does not say its release


def test_auto_compact_is_on_when_no_place_that_turns_it_off_is_read(tmp_path: Path) -> None:
    """1.0.128 reads neither autoCompactEnabled in settings.json nor DISABLE_AUTO_COMPACT: with both set, auto-compact
    is on, and neither note says another place keeps it off."""
    s = _settings(tmp_path, {"autoCompactEnabled": False}, env={"DISABLE_AUTO_COMPACT": "1"})
    got = thresholds(s, version="1.0.128")
    assert got.auto_compact_enabled and got.auto_compact is not None
    assert "another place" not in got.rules and "auto-compact is on" in got.rules
