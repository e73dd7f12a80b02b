"""Responses sampled in several iterations (a server tool loop, an advisor; issue 28.4, Claude Code issue #84738):
the context each release reads, what was billed, and what the record's view says. The release rule is the era
matrix's "iterations" probe, bisected over the binaries (2.1.152 counts the sum, 2.1.153 the last iteration)."""

from __future__ import annotations

import pytest
from builders import assistant, user
from helpers import write_jsonl

from inspector.library.cost import PriceTable, RunningCost, responses, session_cost
from inspector.tokens.explain import analyze
from inspector.tokens.series import context_series
from inspector.transcript.records import last_iteration_usage, reads_last_iteration
from inspector.transcript.session import Session
from inspector.view import record_parts

FIRST = {
    "type": "message",
    "input_tokens": 1000,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 60000,
    "output_tokens": 200,
}
ADVISOR = {
    "type": "advisor_message",
    "model": "claude-opus-4-6",
    "input_tokens": 3000,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
    "output_tokens": 500,
}
LAST = {
    "type": "message",
    "input_tokens": 500,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 90000,
    "output_tokens": 300,
}


def advised(uuid: str, parent: str, sec: int, version: str) -> dict:
    """A claude-sonnet-4-6 response in two sampling iterations with an advisor's between them; the top-level usage
    is the sum of the response's own iterations, as the API reports it."""
    r = assistant(uuid, parent, sec=sec, usage=(1500, 0, 150_000, 500), version=version)
    r["message"]["usage"]["iterations"] = [FIRST, ADVISOR, LAST]
    return r


def session(tmp_path, version: str) -> Session:
    recs = [user("u1", None, "go", 0, version=version), advised("a1", "u1", 1, version)]
    return Session.load(write_jsonl(tmp_path / f"s-{version}.jsonl", recs))


def test_the_bisected_release_decides():
    assert not reads_last_iteration("2.1.88") and not reads_last_iteration("2.1.152")
    assert reads_last_iteration("2.1.153") and reads_last_iteration("2.1.332")


def test_since_2_1_153_the_context_is_the_last_iteration_and_the_bill_the_sum(tmp_path):
    s = session(tmp_path, "2.1.200")
    r = s.records[1]
    assert r.usage == (500, 0, 90_000, 300)  # the last of the response's own iterations, the advisor's skipped
    assert r.extra["billed"] == (1500, 0, 150_000, 500)
    ser = context_series(s)
    assert [t.tokens for t in ser.turns] == [90_800]
    # billed: the sum at claude-sonnet-4-6 ($3 in, $0.30 cache read, $15 out a million) = $0.057, and the advisor's
    # iteration at claude-opus-4-6 ($5 in, $25 out) = $0.0275
    cost = session_cost(s)
    assert cost["cost_usd"] == pytest.approx(0.0845)
    assert cost["cost_by_model"] == {"claude-opus-4-6": pytest.approx(0.0275), "claude-sonnet-4-6": pytest.approx(0.057)}
    head = record_parts(s, 1)[0].text
    assert "sampled in 3 iterations" in head and "the context is the last iteration's (90,800)" in head
    assert "billed: the sum, 152,000" in head and "advisor_message claude-opus-4-6" in head
    assert analyze(s).anomalies == []


def test_before_2_1_153_the_sum_is_the_context_and_said(tmp_path):
    s = session(tmp_path, "2.1.100")
    r = s.records[1]
    assert r.usage == (1500, 0, 150_000, 500) and "billed" not in r.extra
    assert [t.tokens for t in context_series(s).turns] == [152_000]
    assert session_cost(s)["cost_usd"] == pytest.approx(0.0845)  # the same bill
    notes = analyze(s).anomalies
    assert any("sampled in 3 iterations" in n and "152,000" in n and "90,800" in n for n in notes), notes
    assert "as Claude Code 2.1.100 counts it" in record_parts(s, 1)[0].text


def test_the_statusline_running_cost_prices_the_advisor_once(tmp_path):
    s = session(tmp_path, "2.1.200")
    table = PriceTable.load()
    run = RunningCost()
    for r in list(s.records) + list(s.records):  # a fragment seen again is not a second response
        run.add(r, table)
    total = run.done
    for key, row in run.recent.items():
        from inspector.library.cost import _response

        total.add(_response(key, row), table)
    assert total.usd == pytest.approx(0.0845)
    assert len(responses(s)) == 2


@pytest.mark.parametrize(
    "its, want",
    [
        ([FIRST, LAST], (500, 0, 90_000, 300)),
        ([FIRST, LAST, ADVISOR], (500, 0, 90_000, 300)),  # a trailing advisor's is skipped
        ([FIRST, dict(LAST, type="fallback_message")], (500, 0, 90_000, 300)),
        ([FIRST, dict(LAST, type="iteration")], None),  # not the response's own: the top-level usage
        ([FIRST, dict(LAST, input_tokens="5")], None),  # a count missing: the top level
        ([FIRST, dict(LAST, input_tokens=0, cache_read_input_tokens=0)], None),  # no prompt
        ([ADVISOR], None),
        ([], None),
    ],
)
def test_the_last_iteration_rule_as_the_binary_reads_it(its, want):
    top = (1500, 0, 150_000, 500)
    assert last_iteration_usage(top, its) == (want or top)
    assert last_iteration_usage((0, 0, 0, 0), its) == (0, 0, 0, 0)  # an all-zero top level is kept
