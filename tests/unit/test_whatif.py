"""The what-if table (inspector/tokens/whatif.py) drives the flags, the app's form and the description alike."""

from __future__ import annotations

import dataclasses

import pytest

from inspector.cli.tokens import _tokens_parser as build_parser
from inspector.tokens.thresholds import Settings
from inspector.tokens.whatif import TABLE, InvalidSetting, describe_changes, form_value, from_args, from_form

# a value for each row, as typed on the command line and as typed (or chosen) in the form
TYPED = {
    "model": (["--model", "claude-opus-4-6"], "claude-opus-4-6"),
    "window": (["--window", "150,000"], "150,000"),
    "one_m": (["--one-m"], "on"),
    "auto_compact": (["--no-auto-compact"], "off"),
    "auto_compact_window": (["--auto-compact-window", "120000"], "120000"),
    "model_window": (["--model-auto-compact-window", "110000"], "110000"),
    "enforce": (["--no-enforce"], "off"),
    "pct": (["--pct", "60"], "60"),
    "max_output_tokens": (["--max-output-tokens", "16000"], "16000"),
    "blocking": (["--blocking-limit", "190000"], "190000"),
    "disable_1m": (["--disable-1m"], True),
    "other_host": (["--other-api-host"], True),
    "output_cap": (["--output-cap"], True),
}


def _form(base: Settings, **typed: object) -> dict[str, object]:
    """The form as it opens on `base`, with some boxes typed into."""
    return {w.key: typed.get(w.key, form_value(w, base, base)) for w in TABLE}


def test_every_row_is_a_flag_and_a_box_that_agree():
    assert set(TYPED) == {w.key for w in TABLE}, "a new row needs a case here"
    base = Settings()
    parser = build_parser()
    for w in TABLE:
        flags, typed = TYPED[w.key]
        by_flag = from_args(base, parser.parse_args(["x.jsonl", *flags]))
        by_form = from_form(base, _form(base, **{w.key: typed}))
        assert by_flag != base, w.key
        differ = [f.name for f in dataclasses.fields(Settings) if f.name != "sources"
                  and getattr(by_flag, f.name) != getattr(by_form, f.name)]  # fmt: skip
        assert not differ, (w.key, differ)
        described = describe_changes(by_form, base)
        assert described.startswith(w.short), (w.key, described)


def test_the_form_shows_what_it_was_given():
    """Opening the form on a settings value and applying it unchanged gives the same settings back."""
    parser = build_parser()
    every = [arg for flags, _ in TYPED.values() for arg in flags]
    s = from_args(Settings(), parser.parse_args(["x.jsonl", *[a for a in every if a != "--no-auto-compact"]]))
    again = from_form(s, _form(s))
    assert dataclasses.replace(again, sources=()) == dataclasses.replace(s, sources=())
    assert describe_changes(again, s) == ""


def test_an_emptied_box_goes_back_to_claude_codes_rule_and_flags_not_given_keep_the_environment():
    configured = Settings(window=300_000, max_output_tokens=9_000, sources=(("window", "somewhere"),))
    assert from_form(configured, _form(configured, window="")).window is None
    kept = from_args(configured, build_parser().parse_args(["x.jsonl", "--pct", "50"]))
    assert (kept.window, kept.max_output_tokens, kept.pct_override) == (300_000, 9_000, 50)


@pytest.mark.parametrize(
    ("key", "typed", "message"),
    [
        ("window", "a lot", "window: 'a lot' is not a whole number"),
        ("max_output_tokens", "0", "max output tokens must be above 0"),
        ("pct", "150", "auto-compact percent must be in (0, 100]"),
        ("pct", "half", "auto-compact percent: 'half' is not a number"),
        ("model_window", "-5", "per-model auto-compact window must be above 0"),
    ],
)
def test_a_bad_value_is_refused_with_its_reason(key, typed, message):
    with pytest.raises(InvalidSetting, match=message.replace("(", r"\(").replace(")", r"\)")):
        from_form(Settings(), _form(Settings(), **{key: typed}))


def test_the_pct_flag_out_of_range_is_refused():
    with pytest.raises(InvalidSetting, match="--pct must be in"):
        from_args(Settings(), build_parser().parse_args(["x.jsonl", "--pct", "0"]))
