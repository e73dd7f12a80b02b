"""§4: windows and thresholds, table-driven from the worked numbers of §4.4."""

from __future__ import annotations

import orjson
import pytest

from inspector.tokens.thresholds import Settings, js_round, max_output_limits, percent_left, thresholds, warning_state

ROWS = [
    # (case, settings, reserved, effective, auto, warn, blocking)
    ("sonnet 4.x default", Settings(model="claude-sonnet-4-5-20250929"), 20_000, 180_000, 167_000, 147_000, 177_000),
    ("opus 4.6 default", Settings(model="claude-opus-4-6"), 20_000, 180_000, 167_000, 147_000, 177_000),
    ("haiku 4.5", Settings(model="claude-haiku-4-5-20251001"), 20_000, 180_000, 167_000, 147_000, 177_000),
    ("slot cap on", Settings(model="claude-sonnet-4-6", output_slot_cap=True), 8_000, 192_000, 179_000, 159_000, 189_000),
    ("3.5 sonnet", Settings(model="claude-3-5-sonnet-20241022"), 8_192, 191_808, 178_808, 158_808, 188_808),
    ("1M window", Settings(model="claude-opus-4-6[1m]"), 20_000, 980_000, 967_000, 947_000, 977_000),
    ("auto-compact off", Settings(model="claude-sonnet-4-6", auto_compact_enabled=False), 20_000, 180_000, None, 160_000, 177_000),
    ("AUTO_COMPACT_WINDOW=100000", Settings(model="claude-sonnet-4-6", auto_compact_window=100_000), 20_000, 80_000, 67_000, 47_000, 77_000),
    ("PCT_OVERRIDE=50", Settings(model="claude-sonnet-4-6", pct_override=50), 20_000, 180_000, 90_000, 70_000, 177_000),
]


@pytest.mark.parametrize("case, s, reserved, effective, auto, warn, blocking", ROWS, ids=[r[0] for r in ROWS])
def test_worked_numbers(case, s, reserved, effective, auto, warn, blocking):
    t = thresholds(s)
    assert (t.reserved, t.effective_window, t.auto_compact, t.warning, t.error, t.blocking) == (reserved, effective, auto, warn, warn, blocking)


def test_pct_override_can_only_lower_the_threshold():
    assert thresholds(Settings(model="claude-sonnet-4-6", pct_override=99)).auto_compact == 167_000
    assert thresholds(Settings(model="claude-sonnet-4-6", pct_override=100)).auto_compact == 167_000
    # the report names the override only when it is what set the threshold
    assert thresholds(Settings(model="claude-sonnet-4-6", pct_override=99)).auto_pct is None
    assert thresholds(Settings(model="claude-sonnet-4-6", pct_override=72.5)).auto_pct == 72.5


def test_blocking_override_and_max_output_env():
    t = thresholds(Settings(model="claude-sonnet-4-6", blocking_override=150_000))
    assert t.blocking == 150_000
    t = thresholds(Settings(model="claude-sonnet-4-6", max_output_tokens=8_000))
    assert (t.reserved, t.auto_compact) == (8_000, 179_000)
    t = thresholds(Settings(model="claude-opus-4-1-20250805", max_output_tokens=100_000))  # capped at the upper limit
    assert t.max_output_tokens == 32_000 and t.reserved == 20_000


def test_window_resolution():
    assert thresholds(Settings(model="claude-sonnet-4-6")).context_window == 200_000
    assert thresholds(Settings(model="claude-sonnet-4-6"), peak_usage=250_000).context_window == 1_000_000
    assert thresholds(Settings(model="claude-sonnet-4-6"), peak_usage=250_000).window_source == "usage above 200k"
    assert thresholds(Settings(model="claude-sonnet-4-6", one_m=False), peak_usage=250_000).context_window == 200_000
    assert thresholds(Settings(model="claude-opus-4-6[1m]", disable_1m=True)).context_window == 200_000
    assert thresholds(Settings(model="x", window=500_000)).effective_window == 480_000
    # the auto-compact window caps a 1M window too
    assert thresholds(Settings(model="opus[1m]", auto_compact_window=400_000)).auto_compact == 367_000


@pytest.mark.parametrize("model, expect", [
    ("claude-opus-4-6", (64_000, 128_000)), ("claude-sonnet-4-6", (32_000, 128_000)), ("claude-opus-4-5-20251101", (32_000, 64_000)),
    ("claude-sonnet-4-20250514", (32_000, 64_000)), ("claude-opus-4-1-20250805", (32_000, 32_000)), ("claude-3-opus-20240229", (4_096, 4_096)),
    ("claude-3-5-haiku-20241022", (8_192, 8_192)), ("claude-3-7-sonnet-20250219", (32_000, 64_000)), ("mystery-model", (32_000, 64_000)),
])
def test_max_output_table(model, expect):
    assert max_output_limits(model) == expect


def test_states_and_percent_left():
    t = thresholds(Settings(model="claude-sonnet-4-6"))
    assert [warning_state(n, t) for n in (100_000, 147_000, 166_999, 167_000, 177_000)] == ["ok", "warning", "warning", "auto_compact", "blocking"]
    assert percent_left(0, t) == 100 and percent_left(167_000, t) == 0 and percent_left(200_000, t) == 0
    assert percent_left(83_500, t) == 50
    off = thresholds(Settings(model="claude-sonnet-4-6", auto_compact_enabled=False))
    assert warning_state(170_000, off) == "warning" and percent_left(90_000, off) == 50


def test_js_round():
    assert [js_round(x) for x in (0.5, 1.5, 2.5, 2.4999)] == [1, 2, 3, 2]


def test_settings_from_environment_and_config(tmp_path):
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    env = {"CLAUDE_CONFIG_DIR": str(cfg)}
    assert Settings.from_environment(env) == Settings()
    (cfg / ".claude.json").write_bytes(orjson.dumps({"autoCompactEnabled": False}))
    (cfg / "settings.json").write_bytes(orjson.dumps({"autoCompactWindow": 300_000}))
    s = Settings.from_environment(env)
    assert s.auto_compact_enabled is False and s.auto_compact_window == 300_000
    env.update({"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50", "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "8000",
                "CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE": "90000", "CLAUDE_CODE_DISABLE_1M_CONTEXT": "1", "DISABLE_COMPACT": "true"})
    s = Settings.from_environment(env)
    assert (s.auto_compact_window, s.pct_override, s.max_output_tokens, s.blocking_override, s.disable_1m, s.compact_disabled) == (100_000, 50.0, 8_000, 90_000, True, True)
    assert dict(s.sources)["auto_compact"] == "DISABLE_COMPACT"
    bad = Settings.from_environment({"CLAUDE_CONFIG_DIR": str(cfg / "nope"), "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "abc", "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "-5"})
    assert bad.pct_override is None and bad.max_output_tokens is None
