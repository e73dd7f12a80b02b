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


def _timed(tmp_path, stamps, model="claude-sonnet-4-5"):
    """A session with one response (usage USAGE) at each ISO time of `stamps`."""
    recs, parent = [], None
    for k, ts in enumerate(stamps):
        u = user(f"u{k}", parent, "go")
        a = assistant(f"a{k}", f"u{k}", usage=USAGE, model=model)
        u["timestamp"] = a["timestamp"] = ts
        recs += [u, a]
        parent = f"a{k}"
    return write_jsonl(tmp_path / "p" / "s.jsonl", recs)


def test_blocks_start_at_the_hour_of_their_first_response_and_last_five_hours(tmp_path):
    # sonnet-4-5: 1,000 x $3 + 2,000 x $15 + 10,000 x $0.30 = $0.036 a response
    path = _timed(
        tmp_path,
        ["2026-11-02T09:40:00Z", "2026-11-02T13:59:00Z", "2026-11-02T14:00:00Z", "2026-11-02T14:30:00Z", "2026-11-03T02:00:00Z"],
    )
    rows = jsonl(run_cli("cost", path, "--by", "block", "--json")[1])
    assert [(r["start"], r["end"], r["responses"]) for r in rows] == [
        ("2026-11-02T09:00:00Z", "2026-11-02T14:00:00Z", 2),  # 13:59 is inside, 14:00 is the next block's
        ("2026-11-02T14:00:00Z", "2026-11-02T19:00:00Z", 2),
        ("2026-11-03T02:00:00Z", "2026-11-03T07:00:00Z", 1),
    ]
    assert [r["cost_usd"] for r in rows] == [0.072, 0.072, 0.036] and not any(r["active"] for r in rows)


def test_the_active_block_has_a_burn_rate_and_a_projection(tmp_path):
    import time
    from datetime import UTC, datetime

    from inspector.library.cost import PriceTable, Response, billing_blocks

    now = time.time()
    hour = now - now % 3600
    r = Response("k", "claude-sonnet-4-5", datetime.fromtimestamp(hour, UTC).isoformat(), 1000, 0, 0, 10_000, 2000, 0, 1)
    [b] = billing_blocks([(hour + 60, r), (hour + 60 + 1800, r)], PriceTable.load())
    assert b.active(hour + 3600)
    # $0.072 over the half hour since its first response: $0.144 an hour; 4 hours left at that rate: +$0.576
    assert round(b.burn_per_hour(hour + 60 + 1800), 6) == 0.144
    assert round(b.projected(hour + 60 + 1800), 6) == round(0.072 + 0.144 * (b.end - (hour + 60 + 1800)) / 3600, 6)


def test_since_until_and_by_week_and_month(tmp_path):
    path = _timed(tmp_path, ["2026-10-30T10:00:00Z", "2026-11-02T10:00:00Z", "2026-11-09T10:00:00Z"])
    weeks = {r["week"]: r["cost_usd"] for r in jsonl(run_cli("cost", path, "--by", "week", "--json")[1])}
    assert weeks == {"2026-W44": 0.036, "2026-W45": 0.036, "2026-W46": 0.036}
    months = {r["month"]: r["responses"] for r in jsonl(run_cli("cost", path, "--by", "month", "--json")[1])}
    assert months == {"2026-10": 1, "2026-11": 2}
    [d] = jsonl(run_cli("cost", path, "--since", "2026-11-01", "--until", "2026-11-05", "--json")[1])
    assert d["responses"] == 1 and d["cost_usd"] == 0.036
    assert jsonl(run_cli("stats", tmp_path / "p", "--since", "2026-11-10", "--json")[1]) == []
    assert len(jsonl(run_cli("stats", tmp_path / "p", "--until", "2026-11-01", "--json")[1])) == 1
    code, out, err = run_cli("cost", path, "--since", "last week")
    assert code == 2 and "--since takes" in err


def test_search_until(tmp_path):
    path = _timed(tmp_path, ["2026-10-30T10:00:00Z", "2026-11-09T10:00:00Z"])
    hits = jsonl(run_cli("search", "go", path.parent, "--json", "--no-index")[1])
    assert len(hits) == 2
    hits = jsonl(run_cli("search", "go", path.parent, "--json", "--no-index", "--until", "2026-11-01")[1])
    assert [h["timestamp"][:10] for h in hits] == ["2026-10-30"]


def test_check_prices_names_the_models_without_a_price(tmp_path):
    _session(tmp_path / "a", "claude-opus-4-6", speed="fast")
    _session(tmp_path / "b", "claude-fable-5-2", speed="fast")
    _session(tmp_path / "c", "claude-newt-9")
    root = tmp_path
    for d in ("a", "b", "c"):
        (root / d / "p" / "s.jsonl").rename(root / d / "p" / f"s{d}.jsonl")
    code, out, err = run_cli("cost", root / "a" / "p", "--check-prices")
    assert code == 0 and "priced        claude-opus-4-6 (fast) (1 response(s))" in out
    code, out, err = run_cli("cost", root / "b" / "p", "--check-prices")
    assert code == 1 and "no fast price claude-fable-5-2 (fast)" in out
    code, out, err = run_cli("cost", root / "c" / "p", "--check-prices")
    assert code == 1 and "no price      claude-newt-9" in out and "1 model(s) used, 1 without a price" in out
