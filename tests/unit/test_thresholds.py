"""§4: windows and thresholds, table-driven from the worked numbers of §4.4."""

from __future__ import annotations

import dataclasses
from pathlib import Path

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
    (
        "auto-compact off",
        Settings(model="claude-sonnet-4-6", auto_compact_enabled=False),
        20_000,
        180_000,
        None,
        160_000,
        177_000,
    ),
    (
        "AUTO_COMPACT_WINDOW=100000",
        Settings(model="claude-sonnet-4-6", auto_compact_window=100_000),
        20_000,
        80_000,
        67_000,
        47_000,
        77_000,
    ),
    ("PCT_OVERRIDE=50", Settings(model="claude-sonnet-4-6", pct_override=50), 20_000, 180_000, 90_000, 70_000, 177_000),
]


@pytest.mark.parametrize("case, s, reserved, effective, auto, warn, blocking", ROWS, ids=[r[0] for r in ROWS])
def test_worked_numbers(case, s, reserved, effective, auto, warn, blocking):
    t = thresholds(s)
    assert (t.reserved, t.effective_window, t.auto_compact, t.warning, t.error, t.blocking) == (
        reserved,
        effective,
        auto,
        warn,
        warn,
        blocking,
    )


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
    assert thresholds(Settings(model="claude-sonnet-4-6"), peak_usage=250_000).window_source.startswith(
        "inferred: a response used 250,000"
    )
    assert thresholds(Settings(model="claude-sonnet-4-6", one_m=False), peak_usage=250_000).context_window == 200_000
    assert thresholds(Settings(model="claude-opus-4-6[1m]", disable_1m=True)).context_window == 200_000
    assert thresholds(Settings(model="x", window=500_000)).effective_window == 480_000
    # the auto-compact window caps a 1M window too
    assert thresholds(Settings(model="opus[1m]", auto_compact_window=400_000)).auto_compact == 367_000


@pytest.mark.parametrize(
    "model, expect",
    [
        ("claude-opus-4-6", (64_000, 128_000)),
        ("claude-sonnet-4-6", (32_000, 128_000)),
        ("claude-opus-4-5-20251101", (32_000, 64_000)),
        ("claude-sonnet-4-20250514", (32_000, 64_000)),
        ("claude-opus-4-1-20250805", (32_000, 32_000)),
        ("claude-3-opus-20240229", (4_096, 4_096)),
        ("claude-3-5-haiku-20241022", (8_192, 8_192)),
        ("claude-3-7-sonnet-20250219", (32_000, 64_000)),
        ("mystery-model", (32_000, 64_000)),
    ],
)
def test_max_output_table(model, expect):
    assert max_output_limits(model) == expect


def test_states_and_percent_left():
    t = thresholds(Settings(model="claude-sonnet-4-6"))
    assert [warning_state(n, t) for n in (100_000, 147_000, 166_999, 167_000, 177_000)] == [
        "ok",
        "warning",
        "warning",
        "auto_compact",
        "blocking",
    ]
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
    env.update(
        {
            "CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000",
            "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50",
            "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "8000",
            "CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE": "90000",
            "CLAUDE_CODE_DISABLE_1M_CONTEXT": "1",
            "DISABLE_COMPACT": "true",
        }
    )
    s = Settings.from_environment(env)
    assert (
        s.auto_compact_window,
        s.pct_override,
        s.max_output_tokens,
        s.blocking_override,
        s.disable_1m,
        s.compact_disabled,
    ) == (100_000, 50.0, 8_000, 90_000, True, True)
    # every place that turns auto-compact off, the one that decides today first
    assert [v for k, v in s.sources if k == "auto_compact"] == ["DISABLE_COMPACT", "autoCompactEnabled in .claude.json"]
    bad = Settings.from_environment(
        {"CLAUDE_CONFIG_DIR": str(cfg / "nope"), "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "abc", "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "-5"}
    )
    assert bad.pct_override is None and bad.max_output_tokens is None


# -- the rules of each release (inspector.claude.versions) -------------------------------------------

ENV_WINDOW = ("auto_compact_window", "CLAUDE_CODE_AUTO_COMPACT_WINDOW")
SETTING_WINDOW = ("auto_compact_window", "autoCompactWindow setting")
ERA_ROWS = [
    # (case, version, settings, auto-compact threshold (None: none in force), enforced)
    ("1.0.51: 0.92 of the window less the output", "1.0.51", Settings(model="claude-sonnet-4-20250514"), 154_560, True),
    ("1.0.15: 0.92 of a fixed 180,000", "1.0.15", Settings(model="claude-sonnet-4-20250514"), 165_600, True),
    ("1.0.71: 13,000 below the window less the output", "1.0.71", Settings(model="claude-sonnet-4-20250514"), 155_000, True),
    ("2.0.76 opus 4.5: whole max output reserved", "2.0.76", Settings(model="claude-opus-4-5-20251101"), 155_000, True),
    ("2.1.20 sonnet 4.5", "2.1.20", Settings(model="claude-sonnet-4-5-20250929"), 155_000, True),
    ("2.1.20 opus 4.1", "2.1.20", Settings(model="claude-opus-4-1-20250805"), 155_000, True),
    ("2.1.20 3.5 sonnet", "2.1.20", Settings(model="claude-3-5-sonnet-20241022"), 178_808, True),
    ("2.1.21: reserve capped", "2.1.21", Settings(model="claude-opus-4-5-20251101"), 167_000, True),
    ("2.1.88 sonnet 4.5", "2.1.88", Settings(model="claude-sonnet-4-5-20250929"), 167_000, True),
    # 2.1.328, Appendix A of format-2.1.3xx.md
    ("model_opus46", "2.1.328", Settings(model="claude-opus-4-6"), 167_000, True),
    ("model_sonnet46", "2.1.328", Settings(model="claude-sonnet-4-6"), 167_000, True),
    ("reactive_ptl_sonnet45", "2.1.328", Settings(model="claude-sonnet-4-5"), None, False),
    ("model_haiku45", "2.1.328", Settings(model="claude-haiku-4-5-20251001"), None, False),
    ("model_opus45", "2.1.328", Settings(model="claude-opus-4-5-20251101"), None, False),
    ("model_opus47_threshold", "2.1.328", Settings(model="claude-opus-4-7"), 967_000, True),
    ("model_sonnet5_threshold", "2.1.328", Settings(model="claude-sonnet-5"), 967_000, True),
    ("model_opus47_disable_1m", "2.1.328", Settings(model="claude-opus-4-7", disable_1m=True), 167_000, True),
    ("model_sonnet45_suffix_1m", "2.1.328", Settings(model="claude-sonnet-4-5[1m]"), None, False),
    ("model_opus46_suffix_1m", "2.1.328", Settings(model="claude-opus-4-6[1m]"), None, False),
    ("model_unknown", "2.1.328", Settings(model="claude-foo-1"), 967_000, True),
    ("model_unknown_max_context_150k", "2.1.328", Settings(model="claude-foo-1", max_context_tokens=150_000), 117_000, True),
    ("model_unknown_no_enforcement", "2.1.328", Settings(model="claude-foo-1", unknown_model_unenforced=True), None, False),
    (
        "threshold_env_window_100k",
        "2.1.328",
        Settings(model="claude-sonnet-4-5", auto_compact_window=100_000, sources=(ENV_WINDOW,)),
        67_000,
        True,
    ),
    ("pct50_only_sonnet45", "2.1.328", Settings(model="claude-sonnet-4-5", pct_override=50), None, False),
    (
        "pct50_plus_env200k_sonnet45",
        "2.1.328",
        Settings(model="claude-sonnet-4-5", pct_override=50, auto_compact_window=200_000, sources=(ENV_WINDOW,)),
        90_000,
        True,
    ),
    (
        "settings_autoCompactWindow_120k",
        "2.1.328",
        Settings(model="claude-sonnet-4-5", auto_compact_window=120_000, sources=(SETTING_WINDOW,)),
        87_000,
        True,
    ),
    (
        "settings_modelSettings_150k",
        "2.1.328",
        Settings(model="claude-sonnet-4-5", model_windows=(("claude-sonnet-4-5", 150_000),)),
        117_000,
        True,
    ),
    (
        "a per-model key spelled with [1m] applies (a generated run)",
        "2.1.328",
        Settings(model="claude-sonnet-4-5[1m]", model_windows=(("claude-sonnet-4-5[1m]", 150_000),)),
        117_000,
        True,
    ),
    (
        "a per-model key for a model the catalog does not know applies (gen_8109 on 2.1.332)",
        "2.1.332",
        Settings(model="claude-foo-1", model_windows=(("claude-foo-1", 120_000),)),
        87_000,
        True,
    ),
    (
        "a window below 100,000 is raised to it",
        "2.1.328",
        Settings(model="claude-sonnet-4-5", auto_compact_window=50_000, sources=(ENV_WINDOW,)),
        67_000,
        True,
    ),
    ("disable_auto_compact", "2.1.328", Settings(model="claude-opus-4-6", auto_compact_enabled=False), None, True),
    ("a newer release: the newest rules", "2.1.400", Settings(model="claude-sonnet-4-5"), None, False),
]


@pytest.mark.parametrize("case, version, s, auto, enforced", ERA_ROWS, ids=[r[0] for r in ERA_ROWS])
def test_each_release_by_its_own_rules(case, version, s, auto, enforced):
    t = thresholds(s, version=version)
    assert (t.auto_compact, t.enforced) == (auto, enforced)
    assert t.rules and version in t.rules


SHARE_ROWS = [
    # (version, model, auto-compact on, threshold, warning, error, effective window), as each release's code works them
    # out: 0.92 of a fixed 180,000 up to 1.0.15, of the window less the model's output up to 1.0.70 (the warning at 0.6
    # of it up to 1.0.48, 0.8 from 1.0.50, the error at 0.8), 13,000 below that from 1.0.71 (the levels 20,000 below)
    ("1.0.0", "claude-sonnet-4-20250514", True, 165_600, 99_360, 132_480, 180_000),
    ("1.0.15", "claude-3-5-haiku-20241022", True, 165_600, 99_360, 132_480, 180_000),
    ("1.0.15", "claude-sonnet-4-20250514", False, None, 108_000, 144_000, 180_000),
    ("1.0.16", "claude-sonnet-4-20250514", True, 154_560, 92_736, 123_648, 168_000),
    ("1.0.48", "claude-3-5-haiku-20241022", True, 176_464, 105_879, 141_171, 191_808),
    ("1.0.50", "claude-sonnet-4-20250514", True, 154_560, 123_648, 123_648, 168_000),
    ("1.0.70", "claude-sonnet-4-20250514", False, None, 134_400, 134_400, 168_000),
    ("1.0.71", "claude-sonnet-4-20250514", True, 155_000, 135_000, 135_000, 168_000),
]


@pytest.mark.parametrize("version, model, on, auto, warning, error, effective", SHARE_ROWS)
def test_up_to_1_0_70_the_threshold_and_levels_are_shares(version, model, on, auto, warning, error, effective):
    for measured in (False, True):  # the era matrix's cells (1.0.15, 1.0.16, 1.0.51, 1.0.70, 1.0.71) agree
        t = thresholds(Settings(model=model, auto_compact_enabled=on), version=version, measured=measured)
        assert (t.auto_compact, t.warning, t.error, t.effective_window) == (auto, warning, error, effective), measured
        assert not t.from_binary
    if on:
        assert warning_state(auto - 1, t) == "warning" and warning_state(auto, t) == "auto_compact"


def test_a_share_era_threshold_the_binary_moved_moves_the_reserve_not_the_window():
    """1.0.16 sized claude-haiku-4-5 with a "haiku" model's 8,192 of output (176,464) where the model registry gives it
    32,000 (154,560): the binary wins, and as every window of 1.0.x is 200,000 the difference is the reserve."""
    t = thresholds(Settings(model="claude-haiku-4-5"), version="1.0.30")
    assert t.from_binary and "1.0.16" in t.measured
    assert (t.auto_compact, t.context_window, t.effective_window, t.reserved) == (176_464, 200_000, 191_808, 8_192)
    assert (t.warning, t.error) == (105_879, 141_171)  # as claude-3-5-haiku's own formula gives them
    three_five = thresholds(Settings(model="claude-3-5-haiku-20241022"), version="1.0.30")
    assert (three_five.warning, three_five.error) == (t.warning, t.error) and not three_five.from_binary


def test_the_threshold_words_say_which_rule_applied():
    from inspector.tokens.explain import _window_words

    def words(v: str) -> str:
        return _window_words(thresholds(Settings(model="claude-sonnet-4-20250514"), version=v))

    assert words("1.0.15").startswith("0.92 × a fixed 180,000")
    assert words("1.0.51").startswith("0.92 × (200,000 window − 32,000 max output)")
    assert words("1.0.71").startswith("200,000 window − 32,000 summary reserve − 13,000 buffer")


def test_a_threshold_not_enforced_is_still_shown_and_sets_no_state():
    t = thresholds(Settings(model="claude-sonnet-4-5"), version="2.1.328")
    assert t.compact_source == "auto" and t.unenforced_threshold == 167_000
    assert warning_state(190_000, t) == "ok"  # Claude Code shows no level: it waits for the API to refuse
    t = thresholds(Settings(model="claude-opus-4-6"), version="2.1.328")
    assert t.compact_source == "model-default" and t.blocking == 177_000
    big = thresholds(Settings(model="claude-opus-4-6", auto_compact_window=100_000, sources=(ENV_WINDOW,)), version="2.1.328")
    assert big.auto_compact == 67_000 and big.blocking == 177_000  # blocking is measured on the model window


def test_every_era_is_reachable_and_says_how_it_is_known():
    from inspector.claude.versions import ERAS, rules_for

    seen = {
        rules_for(v).era.key
        for v in ("1.0.17", "1.0.128", "2.0.0", "2.1.20", "2.1.21", "2.1.75", "2.1.155", "2.1.159", "2.1.327", "2.1.328", "3.0.0")
    }
    assert seen == {e.key for e in ERAS}
    for e in ERAS:
        assert e.basis in ("measured", "read", "assumed") and e.evidence and e.strategies
    assert "newer than any release" in rules_for("2.1.400").note
    assert "not recorded" in rules_for(None).note and rules_for("garbage").era.key == "2.1.75"
    # consecutive eras leave no gap
    for a, b in zip(ERAS, ERAS[1:]):
        assert a.last is not None and b.first is not None and (a.last < b.first)


@pytest.mark.parametrize(
    "model, key",
    [
        ("claude-opus-4-5-20251101", "claude-opus-4-5"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
        ("claude-opus-4-6[1m]", "claude-opus-4-6"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4-0"),
        ("claude-opus-4-20250514", "claude-opus-4-0"),
        ("claude-foo-1", None),
        (None, None),
    ],
)
def test_catalog_key(model, key):
    from inspector.claude.versions import catalog_key

    assert catalog_key(model) == key


@pytest.mark.parametrize(
    "settings", [{"autoCompactWindow": 60_000}, {"modelSettings": {"claude-sonnet-4-5": {"autoCompactWindow": 60_000}}}]
)
def test_a_settings_window_below_100k_is_ignored_not_raised(tmp_path, settings):
    """Measured on 2.1.328 (a generated run found it): settings.json's autoCompactWindow of 60,000, top-level or per
    model, leaves sonnet-4-5 unenforced (refused at 185,039, no threshold compaction); the same value from
    CLAUDE_CODE_AUTO_COMPACT_WINDOW is raised to 100,000 (compacted at 80,153)."""
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "settings.json").write_bytes(orjson.dumps(settings))
    s = Settings.from_environment({"CLAUDE_CONFIG_DIR": str(cfg)})
    assert s.auto_compact_window is None and s.model_windows == ()
    t = thresholds(dataclasses.replace(s, model="claude-sonnet-4-5"), version="2.1.328")
    assert (t.enforced, t.context_window) == (False, 200_000)
    assert "60,000" in t.window_source and "ignore" in t.window_source
    env = Settings.from_environment({"CLAUDE_CONFIG_DIR": str(cfg), "CLAUDE_CODE_AUTO_COMPACT_WINDOW": "60000"})
    t = thresholds(dataclasses.replace(env, model="claude-sonnet-4-5"), version="2.1.328")
    assert (t.enforced, t.context_window, t.auto_compact) == (True, 100_000, 67_000)


def _named() -> dict[str, str]:
    from inspector.claude.models import NAMED

    return {k: v for k, v in orjson.loads(NAMED.read_bytes())["models"].items() if v and v != "2.1.159"}


def test_the_catalog_era_knows_each_model_from_the_release_whose_code_first_names_it():
    """A model the session's release did not know (its code first names it later: conformance/catalog.py bisected
    npm's releases) is an unknown model to that release (2.1.200 ran claude-mythos-5-2, first named in 2.1.321, with
    no enforced threshold, as its unknown models: generated seed 147103), and a catalog model from that release on."""
    from inspector.claude.models import unknown_to
    from inspector.claude.release import parse_version
    from inspector.claude.versions import rules_for

    named = _named()
    assert named["claude-mythos-5-2"] == "2.1.321" and named["claude-sonnet-5"] == "2.1.197"
    for model, first in named.items():
        v = parse_version(first)
        before = f"{v[0]}.{v[1]}.{v[2] - 1}"
        assert rules_for(before).era.windows == "catalog"
        assert unknown_to(model, parse_version(before)) == v
        assert unknown_to(model, v) is None
        old = thresholds(Settings(model=model), None, before, measured=False)
        new = thresholds(Settings(model=model), None, first, measured=False)
        assert f"does not know {model}" in old.window_source, old.window_source
        assert "does not know" not in new.window_source, new.window_source
    # a release before the catalog era sizes windows by its fixed rules, whatever the model
    assert unknown_to("claude-sonnet-5", parse_version("2.1.100")) is None
    assert "does not know" not in thresholds(Settings(model="claude-sonnet-5"), None, "2.1.100").window_source


@pytest.mark.parametrize(
    "model, peak, enforced",
    [("claude-sonnet-5", 204_000, True), ("claude-mythos-5-2", 360_000, False)],
)
def test_a_release_that_counted_less_than_the_models_window_was_served_past_it(model, peak, enforced):
    """2.1.200 counts 200,000 for claude-sonnet-5 (its catalog; 1M natively today: the era matrix measured 2.1.197 and
    2.1.284 compacting it at 167,000) and for claude-mythos-5-2 (unknown to it); the API serves either model's 1M. A
    response past 200,000 is that, not a setting: the measured numbers stay (generated seed 147103: 2.1.200 compacted
    claude-sonnet-5 at 204,069 and ran claude-mythos-5-2 to 360,000 without a threshold). That was through the fake
    API's host: on Anthropic's own, 2.1.200 gives claude-sonnet-5 its native 1M (its code: 2.1.144-2.1.284)."""
    t = thresholds(Settings(model=model, other_api_host=True), peak_usage=peak, version="2.1.200")
    assert t.context_window == 200_000 and t.served_past, t.window_source
    assert t.enforced is enforced
    threshold = t.auto_compact if enforced else t.unenforced_threshold
    assert threshold is not None and 166_000 <= threshold <= 168_000
    assert t.warning == threshold - 20_000
    assert "the API served" in t.measured
    if model == "claude-sonnet-5":
        own = thresholds(Settings(model=model), peak_usage=peak, version="2.1.200")
        assert (own.context_window, own.enforced, own.auto_compact) == (1_000_000, True, 967_000)  # (measured on 2.1.197)
        assert "on Anthropic's own API host" in own.window_source and not own.served_past
    # today's release knows both as 1M models: nothing is served past
    today = thresholds(Settings(model=model), peak_usage=peak, version="2.1.332")
    assert today.context_window == 1_000_000 and not today.served_past


def test_a_session_that_announces_its_model_is_checked_on_the_binary():
    """A session that announces its models (2.1.268 and later) carries no [1m] inference: its model's name says it
    (`series.for_model` sets one_m from the name). That is how the era matrix ran the model, so the release's
    measurement applies: 2.1.270 ran claude-mythos-5 with a 200,000 window and no enforced threshold (the matrix's
    2.1.237, 2.1.251 and 2.1.284 cells; generated seed 152000), where today's catalog gives it a native 1M window."""
    from inspector.tokens.series import for_model

    s = for_model(Settings(other_api_host=True), "claude-mythos-5", True)  # (the fake API's host, as the matrix ran)
    assert s.one_m is False
    t = thresholds(s, peak_usage=60_000, version="2.1.270")
    assert (t.context_window, t.enforced) == (200_000, False), t.window_source
    assert t.measured_on == "2.1.251"  # (the nearest measured release below 2.1.270)
    # a [1m] name with its setting is measured as the matrix ran it too
    one = thresholds(for_model(Settings(), "claude-opus-5[1m]", True), version="2.1.332")
    assert one.context_window == 1_000_000 and one.measured_on == "2.1.332"


def test_a_cell_from_before_the_model_was_known_is_not_used_after():
    """claude-haiku-5-5 is first named by 2.1.293: the era matrix's 2.1.285 cell ran it as an unknown model (200,000),
    and 2.1.300 (whose nearest measured release is 2.1.285) knows it as a 1M model (generated seed 155002: its log said
    effectiveWindow=980000): the nearest measured release above with the same rules that knows it answers (2.1.327).
    2.1.290, which did not know it either, takes the cell below."""
    from inspector.claude.measured import lookup

    lk = lookup("2.1.300", "claude-haiku-5-5")
    assert lk.release == (2, 1, 327) and lk.cell is not None
    assert "the nearest measured release above 2.1.300 (2.1.285, the nearest below, did not know claude-haiku-5-5" in lk.note
    assert thresholds(Settings(model="claude-haiku-5-5"), version="2.1.300").context_window == 1_000_000
    assert lookup("2.1.290", "claude-haiku-5-5").cell is not None
    assert thresholds(Settings(model="claude-haiku-5-5"), version="2.1.290").context_window == 200_000


def test_a_model_known_since_the_measured_release_below_is_answered_by_the_one_above():
    """claude-fable-5-1 is first named by 2.1.257; the era matrix measured 2.1.251 (which ran it as an unknown model:
    167,000 enforced), 2.1.284 (a 200,000 window, no threshold enforced) and 2.1.285 (native 1M, 967,000 enforced), and
    the rules change at 2.1.285. 2.1.273 ran it as 2.1.284 did (seed 110021: no threshold checked up to 300,000), where
    today's catalog would give 2.1.285's 1M window enforced; 2.1.285 has its own measurement."""
    t = thresholds(Settings(model="claude-fable-5-1", other_api_host=True), version="2.1.273")  # (the fake's host)
    assert (t.context_window, t.enforced, t.auto_compact) == (200_000, False, None)
    own = thresholds(Settings(model="claude-fable-5-1"), version="2.1.273")  # on Anthropic's: native, enforced from 2.1.260
    assert (own.context_window, own.enforced, own.auto_compact) == (1_000_000, True, 967_000)
    assert "measured on 2.1.284, the nearest measured release above 2.1.273" in t.measured
    assert thresholds(Settings(model="claude-fable-5-1"), version="2.1.285").auto_compact == 967_000


def test_model_settings_are_read_from_the_release_that_has_them(tmp_path):
    """modelSettings.<model>.autoCompactWindow is read from 2.1.288 (bisected on npm's binaries: 2.1.287 compacts
    claude-sonnet-4-5 at its own threshold with it set); before, the window is the model's, and the rules say why. The
    environment's window is read with or without it (and wins over it)."""
    import json

    from inspector.tokens.thresholds import Settings, thresholds

    (tmp_path / "settings.json").write_text(json.dumps({"modelSettings": {"claude-sonnet-5": {"autoCompactWindow": 120_000}}}))
    s = Settings.from_environment({}, tmp_path).with_(model="claude-sonnet-5")
    old, new = thresholds(s, version="2.1.287"), thresholds(s, version="2.1.288")
    assert new.effective_window == 100_000 and "modelSettings" in new.window_source
    assert old.effective_window != 100_000 and "modelSettings" not in old.window_source
    said = "modelSettings' autoCompactWindow is not read (Claude Code 2.1.287 has no modelSettings; read from 2.1.288"
    assert said in old.rules
    both = Settings.from_environment({"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "150000"}, tmp_path).with_(model="claude-sonnet-5")
    # the variable wins over modelSettings where both are read (2.1.288 and 2.1.332, measured: CLAUDE_CODE_AUTO_COMPACT
    # _WINDOW 150000 with modelSettings 100000 compacted at 120,000, 100000 with 150000 at 80,000)
    assert thresholds(both, version="2.1.287").effective_window == 130_000
    assert thresholds(both, version="2.1.288").effective_window == 130_000


def test_a_percentage_is_taken_of_the_window_the_release_measured():
    """CLAUDE_AUTOCOMPACT_PCT_OVERRIDE lowers a threshold; it neither sizes the window nor enforces one. 2.1.250 ran
    claude-opus-5 with a 200,000 window (the era matrix; today's catalog gives it 1M) and claude-opus-5[1m] with none
    enforced: under 50% the threshold is half of 180,000, enforced for the one and still not for the other. Where the
    measurement agrees with the formula (claude-sonnet-4-5), or no cell applies (2.1.332's opus-5 is 1M on both), the
    formula's numbers stand."""
    # (through the fake API's host, as the matrix and seed 3037 ran: 2.1.144-2.1.284 give the native 1M on Anthropic's
    # only, and the formula now says so itself)
    t = thresholds(Settings(model="claude-opus-5", pct_override=50, other_api_host=True), version="2.1.250")
    assert (t.context_window, t.auto_compact, t.enforced, t.auto_pct) == (200_000, 90_000, True, 50)
    # where the formula and the measurement differ: claude-mythos-5-2, unknown to 2.1.200 (the formula's 1M), which the
    # 2.1.197 binary sized 200,000 and did not enforce
    u = thresholds(Settings(model="claude-mythos-5-2", pct_override=50, other_api_host=True), version="2.1.200")
    assert (u.context_window, u.unenforced_threshold, u.enforced) == (200_000, 90_000, False)
    assert "takes 50% of its 180,000 effective window (still not enforced" in u.measured and u.measured_on == "2.1.197"
    one = thresholds(Settings(model="claude-opus-5[1m]", pct_override=85), version="2.1.250")
    assert (one.context_window, one.auto_compact, one.unenforced_threshold, one.enforced) == (1_000_000, None, 833_000, False)
    plain = thresholds(Settings(model="claude-sonnet-4-5", pct_override=50), version="2.1.250")
    assert plain == thresholds(Settings(model="claude-sonnet-4-5", pct_override=50), version="2.1.250", measured=False)
    today = thresholds(Settings(model="claude-opus-5", pct_override=50), version="2.1.332")
    assert (today.context_window, today.auto_compact) == (1_000_000, 490_000)


def test_the_releases_that_give_a_model_its_native_1m_window():
    """Read in each release's context window function and bisected on npm's binaries (models.json `native_1m`):
    claude-opus-4-7 from 2.1.117 (2.1.116 has none), claude-opus-4-8 from 2.1.154, claude-fable-5 and claude-mythos-5
    from 2.1.170, claude-mythos-preview from 2.1.179, the catalog's flag from 2.1.195. 2.1.144-2.1.284 give it only on
    Anthropic's own API host (2.1.143 and 2.1.285 through any): the era matrix, whose fake API is another host, measured
    200,000 there. 2.1.120 ran claude-opus-4-7 past 250,000 through the fake; 2.1.174, 2.1.197, 2.1.219 and 2.1.250 past
    979,000 on Anthropic's host as the binary tells it (_CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL), without compacting,
    and 2.1.260 and later compacted at 970,038."""
    from inspector.claude.models import native_1m

    for version, name, own, other in (
        ((2, 1, 116), "claude-opus-4-7", False, False),
        ((2, 1, 117), "claude-opus-4-7", True, True),
        ((2, 1, 143), "claude-opus-4-7", True, True),
        ((2, 1, 144), "claude-opus-4-7", True, False),
        ((2, 1, 153), "claude-opus-4-8", False, False),
        ((2, 1, 154), "claude-opus-4-8", True, False),
        ((2, 1, 169), "claude-fable-5", False, False),
        ((2, 1, 170), "claude-fable-5", True, False),
        ((2, 1, 178), "claude-mythos-preview", False, False),
        ((2, 1, 179), "claude-mythos-preview", True, False),
        ((2, 1, 194), "claude-opus-4-6", False, False),
        ((2, 1, 284), "claude-sonnet-5", True, False),
        ((2, 1, 285), "claude-sonnet-5", True, True),
        ((2, 1, 332), "claude-sonnet-4-6", False, False),
    ):
        assert native_1m(name, version, True) is own, (version, name)
        assert native_1m(name, version, False) is other, (version, name)
    cases = (
        ("2.1.116", {}, 200_000, True),
        ("2.1.120", {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9000"}, 1_000_000, True),
        ("2.1.152", {}, 1_000_000, True),
        ("2.1.152", {"ANTHROPIC_BASE_URL": "https://proxy.example.com"}, 200_000, True),
        ("2.1.152", {"ANTHROPIC_BASE_URL": "https://api.anthropic.com:443/"}, 1_000_000, True),
        ("2.1.219", {}, 1_000_000, False),  # its source "auto" until 2.1.260: no threshold enforced
        ("2.1.219", {"CLAUDE_CODE_DISABLE_1M_CONTEXT": "1"}, 200_000, None),
        ("2.1.260", {}, 1_000_000, True),
        ("2.1.284", {"ANTHROPIC_BASE_URL": "http://localhost:8080"}, 200_000, False),  # the era matrix's cell
        ("2.1.285", {"ANTHROPIC_BASE_URL": "http://localhost:8080"}, 1_000_000, True),
    )
    # before 2.1.260 a model with a default window of its own in the release's code is enforced (claude-sonnet-5
    # compacted at 970,016 on 2.1.197, 2.1.219 and 2.1.250); claude-opus-5 is not (2.1.219 sent 979,000)
    for name, enforced in (("claude-sonnet-5", True), ("claude-opus-5", False)):
        t = thresholds(Settings(model=name), version="2.1.219")
        assert (t.context_window, t.enforced) == (1_000_000, enforced), name
    for version, env, window, enforced in cases:
        s = Settings.from_environment(env=env, config_dir=Path("/nonexistent")).with_(model="claude-opus-4-7")
        t = thresholds(s, version=version)
        assert t.context_window == window, (version, env, t.window_source, t.measured)
        if enforced is not None:
            assert t.enforced is enforced, (version, env, t.measured)
        if window == 1_000_000 and version == "2.1.120":  # the cell below is of 2.1.111, which did not know the model
            assert "which 2.1.111 gives it on no host" in t.measured
        if window == 1_000_000 and version in ("2.1.152", "2.1.219"):
            assert "on Anthropic's own API host" in t.window_source
            assert "made through another API host, did not have" in t.measured  # the cell is not used, and says why


@pytest.mark.parametrize(
    "version, limited", [("1.0.51", False), ("2.0.76", False), ("2.0.77", True), ("2.1.0", True), (None, True)]
)
def test_a_release_before_2_0_77_has_no_blocking_limit(version, limited):
    """Nothing refused a request before the API did up to 2.0.76 (none in their code; 2.0.76's REPL sent a prompt at
    210,000 with auto-compact off, 2.1.0's refused it; 1.0.51 and 2.0.76 sent every request up to 1,010,000 in print
    mode): no blocking limit in words, in JSON or as a state."""
    for on in (True, False):
        t = thresholds(Settings(model="claude-sonnet-4-20250514", auto_compact_enabled=on), version=version)
        assert t.has_blocking_limit is limited
        assert (t.as_dict()["blocking"] is None) is not limited
        assert t.blocking_words == (f"blocking {t.blocking:,}" if limited else "no blocking limit")
        assert t.blocking == (177_000 if version is None else 197_000 if limited else 200_000)  # (none: the window)
        assert (warning_state(199_000, t) == "blocking") is limited
