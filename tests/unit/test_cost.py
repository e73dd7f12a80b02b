"""What sessions cost: prices by model, each response once (issue 16, part 1)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from builders import assistant, user
from helpers import REAL_PROJECTS, SAMPLES, expand_golden, golden_transcript, jsonl, requires_realdata, tree_hashes, write_jsonl
from helpers import run_cli as run

from inspector.library.cost import (
    BUILTIN,
    Ledger,
    PriceTable,
    copied_agent,
    model_key,
    relayed_responses,
    responses,
    session_cost,
)
from inspector.transcript.session import Session


def reply(
    uuid,
    parent,
    *,
    mid,
    rid="req_1",
    model="claude-sonnet-4-5-20250929",
    usage=(10, 100, 1000, 50),
    sec=1,
    h1=None,
    web=None,
    **kw,
):
    r = assistant(uuid, parent, sec=sec, mid=mid, usage=usage, model=model, requestId=rid, **kw)
    if h1 is not None:
        r["message"]["usage"]["cache_creation"] = {"ephemeral_5m_input_tokens": usage[1] - h1, "ephemeral_1h_input_tokens": h1}
    if web is not None:
        r["message"]["usage"]["server_tool_use"] = {"web_search_requests": web}
    return r


def test_model_names_of_every_era_find_their_price():
    assert model_key("claude-sonnet-4-5-20250929") == "sonnet-4-5"
    assert model_key("claude-3-5-sonnet-20241022") == "sonnet-3-5"
    assert model_key("claude-3-haiku-20240307") == "haiku-3"
    assert model_key("opus[1m]") == "opus"
    assert model_key("claude-opus-4-6[1m]") == "opus-4-6"
    assert model_key("us.anthropic.claude-opus-4-1-20250805-v1:0") == "opus-4-1"
    assert model_key("claude-opus-4-1@20250805") == "opus-4-1"
    table = PriceTable(dict(BUILTIN))
    assert table.rates_for("claude-opus-4-5-20251101").input == 5 and table.rates_for("claude-opus-4-1").input == 15
    assert table.rates_for("some-new-model") is None


def test_a_streamed_response_is_counted_once_with_its_final_numbers(tmp_path):
    """Three records of one message.id/requestId (the output count growing) are one response: priced by hand."""
    recs = [
        user("u0", None, "go"),
        reply("a1", "u0", mid="msg_A", usage=(10, 2000, 30000, 5), h1=500, web=2),
        reply("a2", "a1", mid="msg_A", usage=(10, 2000, 30000, 80), h1=500, web=2),
        reply("a3", "a2", mid="msg_A", usage=(10, 2000, 30000, 120), h1=500, web=2),
        user("u4", "a3", "more", sec=2),
        reply("a5", "u4", mid="msg_B", rid="req_2", usage=(3, 0, 32000, 40), sec=3),
    ]
    s = Session.load(write_jsonl(tmp_path / "p" / "s.jsonl", recs))
    rs = responses(s)
    assert [r.key for r in rs] == ["msg_A:req_1", "msg_B:req_2"] and rs[0].output == 120 and rs[0].cache_write_1h == 500
    # sonnet 4.5: input $3, output $15, 5m writes $3.75, 1h writes $6, reads $0.30 per million; a search $0.01
    a = (10 * 3 + 120 * 15 + 1500 * 3.75 + 500 * 6 + 30000 * 0.30) / 1e6 + 2 * 0.01
    b = (3 * 3 + 40 * 15 + 32000 * 0.30) / 1e6
    c = session_cost(s)
    assert c["cost_usd"] == pytest.approx(a + b, abs=1e-6) and c["cost_responses"] == 2
    assert c["cost_by_model"] == {"claude-sonnet-4-5-20250929": pytest.approx(a + b, abs=1e-6)}


def test_a_long_prompt_pays_the_long_context_rates_and_an_unknown_model_is_never_free(tmp_path):
    recs = [
        user("u0", None, "go"),
        reply("a1", "u0", mid="m1", usage=(1000, 0, 250_000, 100)),  # a 251k prompt on sonnet 4.5: $6 / $22.50 / $0.60
        user("u2", "a1", "x", sec=2),
        reply("a3", "u2", mid="m3", rid="r3", usage=(5, 0, 0, 5), model="claude-nova-9", sec=3),
    ]
    s = Session.load(write_jsonl(tmp_path / "p" / "s.jsonl", recs))
    c = session_cost(s)
    assert c["cost_usd_priced"] == pytest.approx((1000 * 6 + 100 * 22.5 + 250_000 * 0.6) / 1e6, abs=1e-6)
    assert c["cost_usd"] is None and c["cost_unknown_models"] == {"claude-nova-9": 1}
    # what the long rates added, shown apart: the same request at $3 / $15 / $0.30 is what it would have cost below 200k
    premium = (1000 * 3 + 100 * 7.5 + 250_000 * 0.3) / 1e6
    code, out, _ = run("cost", "--json", str(tmp_path / "p"))
    assert jsonl(out)[0]["long_context"] == {"premium_usd": pytest.approx(premium, abs=1e-6), "responses": 1}
    code, out, _ = run("cost", str(tmp_path / "p"))
    assert "of which long-context rates: $0.079 more over 1 response(s)" in out


def test_a_users_price_file_wins_and_a_bad_entry_is_named(tmp_path, monkeypatch):
    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps(
            {
                "claude-nova-9": {"input": 1, "output": 2, "cache_write_5m": 1, "cache_write_1h": 1, "cache_read": 0.1},
                "claude-sonnet-4-5": {"input": "lots"},
            }
        )
    )
    monkeypatch.setenv("INSPECTOR_PRICES", str(prices))
    t = PriceTable.load()
    assert t.rates_for("claude-nova-9-20270101").output == 2 and t.rates_for("claude-sonnet-4-5").input == 3
    assert any("'claude-sonnet-4-5' skipped" in p for p in t.problems)


def test_a_subagent_is_included_and_shown_apart(tmp_path):
    main = write_jsonl(tmp_path / "p" / "S.jsonl", [user("u0", None, "go"), reply("a1", "u0", mid="m1")])
    write_jsonl(
        tmp_path / "p" / "S" / "subagents" / "agent-x1.jsonl",
        [
            user("x0", None, "look", isSidechain=True, agentId="x1"),
            reply(
                "x1",
                "x0",
                mid="mx",
                rid="rx",
                model="claude-haiku-4-5-20251001",
                usage=(100, 0, 0, 100),
                isSidechain=True,
                agentId="x1",
            ),
        ],
    )
    c = session_cost(Session.load(main))
    sub = (100 * 1 + 100 * 5) / 1e6
    own = (10 * 3 + 50 * 15 + 100 * 3.75 + 1000 * 0.30) / 1e6
    assert c["cost_subagents_usd"] == pytest.approx(sub, abs=1e-7) and c["cost_usd"] == pytest.approx(own + sub, abs=1e-7)


def test_a_response_copied_into_a_resumed_session_is_counted_once_across_the_root(tmp_path):
    """A resumed session starts with a copy of the first one's records: `cost` counts the copy once, in the first."""
    first = [user("u0", None, "go", sessionId="A"), reply("a1", "u0", mid="m1", sessionId="A")]
    second = [dict(r, sessionId="B") for r in first] + [
        user("u2", "a1", "again", sec=5, sessionId="B"),
        reply("a3", "u2", mid="m3", rid="r3", sec=6, sessionId="B"),
    ]
    root = tmp_path / "projects"
    write_jsonl(root / "-w-p" / "aaaaaaaa-0000-4000-8000-000000000000.jsonl", first)
    write_jsonl(root / "-w-p" / "bbbbbbbb-0000-4000-8000-000000000000.jsonl", second)
    before = tree_hashes(root)
    code, out, err = run("cost", str(root), "--json")
    assert code == 0, err
    rows = {os.path.basename(d["path"])[:8]: d for d in jsonl(out)}
    one = (10 * 3 + 50 * 15 + 100 * 3.75 + 1000 * 0.30) / 1e6
    assert rows["aaaaaaaa"]["cost_usd"] == pytest.approx(one) and rows["aaaaaaaa"]["responses"] == 1
    assert rows["bbbbbbbb"]["cost_usd"] == pytest.approx(one) and rows["bbbbbbbb"]["duplicates_skipped"] == 1
    code, out, _ = run("cost", str(root), "--by", "model", "--json")
    assert [d["responses"] for d in jsonl(out)] == [2]
    code, out, _ = run("cost", str(root))
    assert "1 duplicate response(s) counted once" in out and "$0.003" in out.splitlines()[-2]
    assert tree_hashes(root) == before


def test_claude_codes_own_figure_is_shown_beside_and_the_difference_said(tmp_path):
    """2.1.3xx writes its own total (cost-state): inspector's figure prices the responses the transcript has; Claude
    Code's also has the compaction's summarizer call, whose response is not written as a record."""
    folder = expand_golden("manual_compact_resume", tmp_path)
    s = Session.load(golden_transcript(folder))
    c = session_cost(s)
    assert c["cost_claude_code_usd"] == pytest.approx(2.14632)
    assert c["cost_difference_usd"] == pytest.approx(c["cost_usd"] - 2.14632)
    usage = s.metadata("cost-state")["modelUsage"]["claude-sonnet-4-5"]
    rs = responses(s)
    missing_in = usage["inputTokens"] - sum(r.input for r in rs)
    missing_out = usage["outputTokens"] - sum(r.output for r in rs)
    assert missing_out == 10 and missing_in > 0  # one call more than the transcript's responses: the summarizer's
    assert c["cost_difference_usd"] == pytest.approx(-(missing_in * 3 + missing_out * 15) / 1e6, abs=1e-6)


def test_stats_json_carries_the_cost():
    code, out, err = run("stats", "--json", "--no-cache", str(SAMPLES))
    assert code == 0, err
    for d in jsonl(out):
        assert d["cost_prices"] and isinstance(d["cost_by_model"], dict)
        assert d["cost_usd"] is None or d["cost_usd"] == pytest.approx(sum(d["cost_by_model"].values()), abs=1e-5)


@pytest.mark.realdata  # reads ../shared/realdata: the realdata layer
@requires_realdata
def test_the_real_sessions_agree_with_ccusages_figures():
    """Totals measured with ccusage 20.0.24 (--offline) on ../shared/realdata: `daily` 157.738 USD over the root, the
    same records counted (its `session` view says 157.28: it leaves out the subagent responses a session's
    agent_progress records relay when the subagent's file is gone, 0.45 USD of haiku; `daily` counts them)."""
    ledger = Ledger()
    total = 0.0
    for p in sorted(REAL_PROJECTS.glob("*/*.jsonl")):
        own, subs = ledger.session(Session.load(p))
        total += own.usd + subs.usd
    code, out, _ = run("cost", str(REAL_PROJECTS), "--json")
    got = sum(d["cost_usd_priced"] for d in jsonl(out))
    assert got == pytest.approx(157.738, abs=0.001)
    assert total <= got + 1e-6  # the orphan subagent is priced by `cost` too


def test_a_live_sessions_unchanged_subagents_are_not_read_again(tmp_path, monkeypatch):
    """The session screen asks for the cost at each growth: subagent files that did not change come from the memo."""
    main = write_jsonl(tmp_path / "p" / "S.jsonl", [user("u0", None, "go"), reply("a1", "u0", mid="m1")])
    sub = write_jsonl(
        tmp_path / "p" / "S" / "subagents" / "agent-x1.jsonl",
        [
            user("x0", None, "look", isSidechain=True, agentId="x1"),
            reply("x1", "x0", mid="mx", rid="rx", usage=(100, 0, 0, 100), isSidechain=True, agentId="x1"),
        ],
    )
    s = Session.load(main)
    memo: dict = {}
    first = session_cost(s, memo=memo)
    loaded = []
    real = Session.load.__func__  # type: ignore[attr-defined]

    def spy(cls, path, **kw):
        loaded.append(Path(path))
        return real(cls, path, **kw)

    monkeypatch.setattr(Session, "load", classmethod(spy))
    assert session_cost(s, memo=memo) == first and loaded == []
    with open(sub, "a") as f:  # the subagent grows: read again, and its new response priced
        f.write(json.dumps(reply("x2", "x1", mid="my", rid="ry", usage=(100, 0, 0, 100), isSidechain=True, agentId="x1")) + "\n")
    again = session_cost(s, memo=memo)
    assert loaded == [sub] and again["cost_subagents_usd"] > first["cost_subagents_usd"]


@pytest.mark.parametrize(
    "name", ["claude-x\x1b]0;pwned\x07", "claude-y\x1b[2J", "claude-z\x9b31m", "claude-\u202eevil", "claude-nul\x00"]
)
@pytest.mark.parametrize("by", ["session", "model", "day", "project"])
def test_a_hostile_model_name_never_reaches_the_terminal_raw(tmp_path, name, by):
    """An unknown model's name is printed in the totals ("no price for ..."): through the display sanitiser, as
    every field from a transcript (an OSC title, a screen clear, a C1 CSI, a bidi override, a NUL)."""
    recs = [user("u1", None, "hi", sec=0), assistant("a1", "u1", sec=1, model=name)]
    p = write_jsonl(tmp_path / "p" / "s.jsonl", recs)
    code, out, err = run("cost", "--by", by, p)
    assert code == 0, err
    for bad in ("\x1b", "\x07", "\x9b", "\u202e", "\x00"):
        assert bad not in out and bad not in err, (by, repr(out))
    assert "no price for" in out


def _relay(uuid: str, parent: str, mid: str, rid: str, usage: tuple[int, int, int, int], sec: int, agent: str = "x1") -> dict:
    """An agent_progress record relaying a subagent's response (2.1.x writes these in the main transcript)."""
    inner = reply(uuid + "-in", None, mid=mid, rid=rid, model="claude-haiku-4-5-20251001", usage=usage, sec=sec)
    return {
        "type": "progress",
        "uuid": uuid,
        "parentUuid": parent,
        "timestamp": inner["timestamp"],
        "sessionId": "S",
        "version": "2.1.20",
        "parentToolUseID": "toolu_1",
        "data": {
            "type": "agent_progress",
            "agentId": agent,
            "message": {"type": "assistant", "timestamp": inner["timestamp"], "message": inner["message"], "requestId": rid},
        },
    }


def test_a_subagent_known_only_from_its_progress_records_is_billed_once(tmp_path):
    """A subagent whose transcript is gone (deleted, never copied) still cost what its agent_progress records relay;
    each response once (two fragments of one are one response), none twice when the transcript is there (issue 28;
    ccusage's daily totals found it: $0.45 of haiku subagents on ../shared/realdata)."""
    recs = [
        user("u0", None, "go"),
        reply("a1", "u0", mid="m1"),
        _relay("p1", "a1", "mx", "rx", (100, 0, 0, 1), 2),
        _relay("p2", "p1", "mx", "rx", (100, 0, 0, 100), 3),  # the same response, its final output count
        _relay("p3", "p2", "my", "ry", (200, 0, 1000, 50), 4),
    ]
    main = write_jsonl(tmp_path / "p" / "S.jsonl", recs)
    own = (10 * 3 + 50 * 15 + 100 * 3.75 + 1000 * 0.30) / 1e6  # the default reply at claude-sonnet-4-5's prices
    sub = (100 * 1 + 100 * 5 + 200 * 1 + 1000 * 0.10 + 50 * 5) / 1e6  # claude-haiku-4-5: $1 in, $0.10 read, $5 out
    c = session_cost(Session.load(main))
    assert c["cost_subagents_usd"] == pytest.approx(sub, abs=1e-9) and c["cost_usd"] == pytest.approx(own + sub, abs=1e-9)
    from inspector.cli.statusline import read_live
    from inspector.tokens.thresholds import Settings

    assert read_live(main, Settings()).cost["cost_usd"] == pytest.approx(own + sub, abs=1e-9)  # the statusline agrees
    # the transcript is there: its responses are the subagent's, the relayed copies are not counted again
    write_jsonl(
        tmp_path / "p" / "S" / "subagents" / "agent-x1.jsonl",
        [
            user("x0", None, "look", isSidechain=True, agentId="x1"),
            reply("x1", "x0", mid="mx", rid="rx", model="claude-haiku-4-5-20251001", usage=(100, 0, 0, 100), isSidechain=True),
            reply("x2", "x1", mid="my", rid="ry", model="claude-haiku-4-5-20251001", usage=(200, 0, 1000, 50), isSidechain=True),
        ],
    )
    c = session_cost(Session.load(main))
    assert c["cost_subagents_usd"] == pytest.approx(sub, abs=1e-9) and c["cost_responses"] == 3
    code, out, _ = run("cost", "--by", "day", "--json", str(tmp_path / "p"))
    assert code == 0 and sum(d["cost_usd_priced"] for d in jsonl(out)) == pytest.approx(own + sub, abs=1e-6)


def _both_ways(path):
    """A file's responses and its subagents', from the whole index and from the partial one of the cost's lines."""
    from inspector.library.cost import COST_LINES, agent_file_responses, subagent_responses

    out = []
    for only in (None, COST_LINES):
        s = Session.load(path, only=only)
        if only is None:  # the subagent files read whole too
            copied = {a for r in s.records if (a := copied_agent(r))}
            files = [(sa.agent_id, sa.path) for sa in s.subagents if sa.path is not None]
            got = agent_file_responses(files, copied, load=Session.load)
            subs = [r for _k, found in got for r in found]
            subs += relayed_responses(s, {r.key for r in subs}, copied)
        else:
            subs = subagent_responses(s)
        out.append((responses(s), subs, len(s.records)))
        s.close()
    return out


def test_the_cost_read_from_its_lines_alone_is_the_whole_files(tmp_path):
    """`cost --by day|week|month|model|block` and the blocks view decode only the lines that hold a usage or a copy's
    mark (issue 29: most bytes are tool results): every response and every subagent response is the same as from the
    whole index, on the samples, every golden and the corpus of odd files; fewer records were made."""
    from helpers import CORPUS

    from conformance.goldens import GOLDENS

    files = [p for p in SAMPLES.rglob("*.jsonl") if "subagents" not in p.parts]
    for g in sorted(GOLDENS.iterdir()):
        if (g / "run.json").exists():
            files.append(golden_transcript(expand_golden(g.name, tmp_path)))
    files += sorted(CORPUS.glob("*.jsonl"))
    fewer = 0
    for f in files:
        (whole, whole_subs, n), (part, part_subs, m) = _both_ways(f)
        assert part == whole and part_subs == whole_subs, f
        fewer += m < n
    assert len(files) > 40 and fewer > 20


@pytest.mark.realdata
@requires_realdata
def test_the_cost_read_from_its_lines_alone_on_the_real_sessions():
    for f in sorted(REAL_PROJECTS.rglob("*.jsonl")):
        (whole, whole_subs, _), (part, part_subs, _) = _both_ways(f)
        assert part == whole and part_subs == whole_subs, f


def test_a_copied_record_naming_a_subagent_is_read_by_the_partial_index_too(tmp_path):
    """The copy's mark is one of the cost's lines: a fork's copied tool result names the subagent the original session
    paid for, so the fork's folder copy of that subagent costs nothing here, read whole or from the cost's lines."""
    fork = {"sessionId": "ORIG", "messageUuid": "x"}
    recs = [
        user("u0", None, "go", forkedFrom=fork),
        reply("a1", "u0", mid="m1", forkedFrom=fork),
        tool_result_user := {
            **user("u2", "a1", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "done"}], sec=2),
            "toolUseResult": {"agentId": "x1", "status": "completed"},
            "forkedFrom": fork,
        },
        user("u3", "u2", "more", sec=3),
        reply("a4", "u3", mid="m4", rid="r4", sec=4),
    ]
    assert tool_result_user["forkedFrom"] == fork
    main = write_jsonl(tmp_path / "p" / "S.jsonl", recs)
    write_jsonl(
        tmp_path / "p" / "S" / "subagents" / "agent-x1.jsonl",
        [user("x0", None, "look", isSidechain=True, agentId="x1"), reply("x1", "x0", mid="mx", rid="rx", isSidechain=True)],
    )
    (whole, whole_subs, n), (part, part_subs, m) = _both_ways(main)
    assert part == whole and [r.key for r in part] == ["m4:r4"] and part_subs == whole_subs == [] and m < n


def test_responses_read_in_worker_processes_are_those_read_here(monkeypatch):
    """`cost --by day|week|month|model` reads each transcript in a worker process (issue 29: the per-session result
    computed where the bytes are read): the same responses, in the same order (a copy is charged to the first
    session holding it), as one process reads them; the samples are small, so the workers are forced."""
    import inspector.library.cost as cost
    from inspector.transcript.discovery import resolve_target

    files = cost.oldest_first(resolve_target(SAMPLES))
    assert len(files) >= 3
    here = list(cost.responses_of_files(files, workers=1))
    monkeypatch.setattr(cost, "POOL_FILES", 1)
    monkeypatch.setattr(cost, "POOL_BYTES", 0)
    pooled = list(cost.responses_of_files(files, workers=2))
    assert pooled == here and any(own for _f, (own, _subs) in here)
    # the order read by the workers themselves (responses_oldest_first) is oldest_first's, pooled or not
    assert list(cost.responses_oldest_first(resolve_target(SAMPLES), workers=2)) == here
    assert list(cost.responses_oldest_first(resolve_target(SAMPLES), workers=1)) == here


@pytest.mark.parametrize("needles", [(b'"usage"', b'edFrom"'), (b"", b"x"), (b"a\x00b",)])
def test_the_line_test_of_a_partial_index_is_python_s_in(needles):
    """The partial index tests each line with the C library's memmem where there is one: it answers as `in` does."""
    import random

    from inspector.transcript.index import _holds_fn, _holds_in

    holds = _holds_fn()
    if sys.platform.startswith("linux"):
        assert holds is not _holds_in  # glibc's memmem is the one tested
    rng = random.Random(7)
    alphabet = b'"usageFromd\x00ab{}:x'
    for _ in range(3000):
        raw = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert holds(raw, needles) is _holds_in(raw, needles), raw


def test_a_cost_lists_the_subagent_transcripts_the_session_lists():
    """A cost reads a session's subagent transcripts from `agent_transcripts` (the folder listings alone, no meta file
    or compaction transcript read): the same agents and files, in the same order, as `Session.subagents` lists those
    with a file, on the samples and on every real session (flat agent files of 2.0.x and subagents folders)."""
    from inspector.library.cost import transcripts_of
    from inspector.transcript.discovery import resolve_target

    roots = [SAMPLES] + ([REAL_PROJECTS] if REAL_PROJECTS.is_dir() else [])
    with_agents = 0
    for root in roots:
        for f, agents in transcripts_of(resolve_target(root)):
            s = Session.load(f, flat_agents=None if agents else [])
            try:
                alone = s.agent_transcripts()  # from the listings (before `subagents`, which it reuses once listed)
                listed = [(sa.agent_id, sa.path) for sa in s.subagents if sa.path is not None]
                assert alone == listed == s.agent_transcripts(), f
                with_agents += bool(listed)
            finally:
                s.close()
    assert with_agents >= 3
