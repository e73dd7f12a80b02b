"""Issue 28 items 1-3: fast mode and US-only inference priced as billed, each with a hand-computed figure."""

from __future__ import annotations

from builders import assistant, user
from helpers import jsonl, run_cli, write_jsonl

USAGE = (1000, 0, 10_000, 2000)  # input, cache write, cache read, output


def _session(tmp_path, model, **usage_extra):
    a = assistant("a1", "u1", usage=USAGE, model=model, sec=1)
    a["message"]["usage"].update(usage_extra)
    return write_jsonl(tmp_path / "p" / "s.jsonl", [user("u1", None, "hi"), a])


def _cost(path):
    [d] = jsonl(run_cli("cost", path, "--json")[1])
    return d


def test_a_fast_turn_on_opus_4_6_costs_six_times_standard(tmp_path):
    # standard, per million tokens: 1,000 x $5 + 2,000 x $25 + 10,000 x $0.50 = 60,000 / 1e6 = $0.06; fast: 6 x
    d = _cost(_session(tmp_path, "claude-opus-4-6", speed="fast"))
    assert d["cost_usd"] == 0.36
    assert d["fast"] == {"usd": 0.36, "responses": 1} and d["cost_by_model"] == {"claude-opus-4-6 (fast)": 0.36}
    out = run_cli("cost", tmp_path / "p")[1]
    assert "of which fast mode: $0.360 over 1 response(s)" in out


def test_a_fast_turn_on_opus_5_costs_twice_standard(tmp_path):
    assert _cost(_session(tmp_path, "claude-opus-5", speed="fast"))["cost_usd"] == 0.12


def test_a_us_only_turn_costs_a_tenth_more_on_claude_4_6_and_later(tmp_path):
    d = _cost(_session(tmp_path, "claude-opus-4-6", inference_geo="us"))
    assert d["cost_usd"] == 0.066 and d["us_only"] == {"usd": 0.066, "responses": 1}
    older = _cost(_session(tmp_path / "o", "claude-opus-4-5", inference_geo="us"))
    assert older["cost_usd"] == 0.06  # no premium before 4.6


def test_fast_and_us_only_multiply(tmp_path):
    assert _cost(_session(tmp_path, "claude-opus-4-6", speed="fast", inference_geo="us"))["cost_usd"] == 0.396


def test_fable_5_2_at_its_price_and_a_fast_turn_without_a_known_fast_price_is_not_priced(tmp_path):
    # 1,000 x $8 + 2,000 x $40 + 10,000 x $0.20 = $0.09
    assert _cost(_session(tmp_path, "claude-fable-5-2"))["cost_usd"] == 0.09
    d = _cost(_session(tmp_path / "f", "claude-fable-5-2", speed="fast"))
    assert d["cost_usd"] is None and d["unknown_models"] == {"claude-fable-5-2 (fast)": 1}


def test_the_statusline_prices_them_alike(tmp_path, monkeypatch):
    import io
    import json
    import sys

    path = _session(tmp_path, "claude-opus-4-6", speed="fast", inference_geo="us")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps({"transcript_path": str(path)}).encode())))
    d = json.loads(run_cli("statusline", "--json")[1])
    assert d["cost"] == 0.396
