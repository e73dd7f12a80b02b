"""The Anthropic summarizer through the real SDK against a local fake server on 127.0.0.1."""

from __future__ import annotations

import io
import threading

import pytest
from fake_anthropic import FakeAnthropic
from helpers import SAMPLES, write_jsonl

from inspector.cli import main
from inspector.compact import CompactRequest, compact, make_slice
from inspector.compact.summarize.anthropic_api import AnthropicSummarizer, build_messages, cost_usd, drop_oldest_rounds
from inspector.compact.summarize.base import Cancel, Cancelled, SummarizerError, SummaryRequest
from inspector.transcript.session import Session

KEY = "sk-ant-test-DO-NOT-LEAK-1234567890"


def session():
    p = next(
        p for p in (SAMPLES / "-home-ann-work-weatherly").glob("*.jsonl") if Session.load(p).title.startswith("Fix forecast")
    )
    return Session.load(p)


def pre_compaction_point(s):
    """The last message before the sample's auto-compaction: a long slice with an image in it."""
    return s.records[next(i for i, r in enumerate(s.records) if r.is_compact_boundary)].logical_parent


def summarizer(fake, **kw):
    kw.setdefault("max_retries", 2)
    return AnthropicSummarizer("claude-sonnet-4-6", api_key=KEY, base_url=fake.url, **kw)


def test_streamed_success_and_request_shape():
    s = session()
    with FakeAnthropic(["ok"]) as fake:
        r = compact(s, CompactRequest("full", at=pre_compaction_point(s)), summarizer=summarizer(fake))
    [req] = fake.message_requests
    body = req["body"]
    assert body["stream"] is True and body["max_tokens"] == 20_000 and body["model"] == "claude-sonnet-4-6"
    msgs = body["messages"]
    assert msgs[0]["role"] == "user" and msgs[-1]["role"] == "user"
    assert all(a["role"] != b["role"] for a, b in zip(msgs, msgs[1:]))
    assert "<analysis>" in msgs[-1]["content"] and "Do not call any tool" in msgs[-1]["content"]
    sent = str(body)
    assert "[image]" in sent and "iVBOR" not in sent  # the image is a placeholder
    assert r.summary.startswith("This session is being continued") and "Summary:\n1. Primary Request" in r.summary
    assert "<analysis>" not in r.summary
    assert r.summarizer == "anthropic" and r.summarizer_usage["output_tokens"] == 321


def test_429_then_529_then_success():
    with FakeAnthropic([("status", 429, {"retry-after-ms": "5"}), ("status", 529, {"retry-after-ms": "5"}), "ok"]) as fake:
        r = compact(session(), "full", summarizer=summarizer(fake, max_retries=3))
    assert len(fake.message_requests) == 3 and r.summarizer_usage


def test_529_exhausted_is_a_clear_error():
    with FakeAnthropic([("status", 529, {"retry-after-ms": "5"})] * 4) as fake:
        with pytest.raises(SummarizerError, match="overloaded \\(529\\)"):
            compact(session(), "full", summarizer=summarizer(fake, max_retries=1))


def test_401_names_the_key_but_never_shows_it():
    with FakeAnthropic(["401"]) as fake:
        with pytest.raises(SummarizerError) as e:
            compact(session(), "full", summarizer=summarizer(fake))
    assert "ANTHROPIC_API_KEY" in str(e.value) and KEY not in str(e.value)


def test_prompt_too_long_drops_the_oldest_rounds_and_retries():
    s = session()
    with FakeAnthropic(["ptl", "ok"]) as fake:
        r = compact(s, CompactRequest("full", at=pre_compaction_point(s)), summarizer=summarizer(fake, max_retries=0))
    a, b = fake.message_requests
    assert len(str(b["body"]["messages"])) < len(str(a["body"]["messages"]))
    assert any("prompt too long" in n for n in r.notes)
    with FakeAnthropic(["ptl"] * 5) as fake:
        with pytest.raises(SummarizerError, match="too long"):
            compact(s, CompactRequest("full", at=pre_compaction_point(s)), summarizer=summarizer(fake, max_retries=0))
    assert len(fake.message_requests) == 4  # the first try and 3 retries


def test_timeout():
    with FakeAnthropic([("hang", 2)] * 3) as fake:
        with pytest.raises(SummarizerError, match="timed out"):
            compact(session(), "full", summarizer=summarizer(fake, max_retries=1, timeout=0.5))


def test_connection_reset_mid_stream():
    with FakeAnthropic(["reset", "ok"]) as fake:
        r = compact(session(), "full", summarizer=summarizer(fake, max_retries=1))
    assert any("broke mid-stream" in n for n in r.notes)
    with FakeAnthropic(["reset"] * 3) as fake:
        with pytest.raises(SummarizerError, match="connection broke"):
            compact(session(), "full", summarizer=summarizer(fake, max_retries=1))


def test_nothing_listening_is_could_not_reach_not_a_broken_stream():
    """Before the answer begins, a connection error means the API was not reached (both SDK generations: 2.x raises
    APIConnectionError for a stream cut mid-way too, which the summarizer tells apart by whether the answer began)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    closed = AnthropicSummarizer("claude-sonnet-4-6", api_key=KEY, base_url=f"http://127.0.0.1:{port}", max_retries=0)
    with pytest.raises(SummarizerError, match="could not reach the API"):
        compact(session(), "full", summarizer=closed)


def test_cancel_stops_before_sending():
    c = Cancel()
    c.set()
    with FakeAnthropic(["ok"]) as fake:
        with pytest.raises(Cancelled):
            compact(session(), "full", summarizer=summarizer(fake), cancel=c)
    assert fake.message_requests == []


def test_cancel_while_streaming():
    c = Cancel()
    seen = []

    def progress(what, frac):
        seen.append(what)
        if "receiving" in what:
            c.set()

    with FakeAnthropic(["ok"]) as fake:
        with pytest.raises(Cancelled):
            compact(session(), "full", summarizer=summarizer(fake), progress=progress, cancel=c)
    assert seen


def test_estimate_uses_the_counting_endpoint_and_prices():
    s = session()
    sl = make_slice(s)
    with FakeAnthropic() as fake:
        est = summarizer(fake).estimate(SummaryRequest(s, tuple(sl.messages)))
    assert est.exact and est.input_tokens > 100 and fake.requests[0]["path"].startswith("/v1/messages/count_tokens")
    assert est.cost_usd_max == pytest.approx(cost_usd("claude-sonnet-4-6", est.input_tokens, 20_000))
    assert cost_usd("claude-opus-4-6", 1_000_000, 0) == 5.0 and cost_usd("claude-haiku-4-5", 0, 1_000_000) == 5.0


def test_messages_are_well_formed_when_the_slice_starts_with_a_reply(tmp_path):
    from builders import assistant, user

    s = Session.load(write_jsonl(tmp_path / "s.jsonl", [assistant("a0", None), user("u1", "a0", "hi"), assistant("a1", "u1")]))
    msgs = build_messages(SummaryRequest(s, (0, 1, 2)), [0, 1, 2], "PROMPT")
    assert msgs[0] == {"role": "user", "content": "[earlier conversation truncated for compaction retry]"}
    assert msgs[-1] == {"role": "user", "content": "PROMPT"}
    assert drop_oldest_rounds(SummaryRequest(s, (0, 1, 2)), [0, 1, 2], "prompt is too long: 10 tokens > 5") == [2]


def test_key_never_written_or_printed(workdir_copy, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    p = workdir_copy
    with FakeAnthropic(["ok"]) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        out, err = io.StringIO(), io.StringIO()
        code = main(
            ["compact", str(p), "--strategy", "full", "--summarizer", "anthropic", "--yes", "--write", "--json"], out, err
        )
    assert code == 0, err.getvalue()
    assert "would send" in err.getvalue() and "estimated cost $" in err.getvalue()
    everything = out.getvalue() + err.getvalue()
    for f in p.parent.rglob("*"):
        if f.is_file():
            everything += f.read_text(errors="replace")
    assert KEY not in everything


def test_without_consent_only_the_count_is_requested(workdir_copy, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with FakeAnthropic(["ok"]) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        out, err = io.StringIO(), io.StringIO()
        code = main(["compact", str(workdir_copy), "--strategy", "full", "--summarizer", "anthropic"], out, err)
    assert code == 2 and "nothing was sent" in err.getvalue() and "input tokens" in err.getvalue()
    assert fake.message_requests == [] and all("count_tokens" in r["path"] for r in fake.requests)


@pytest.fixture
def workdir_copy(tmp_path):
    import shutil

    src = session().path
    dst = tmp_path / "proj" / src.name
    dst.parent.mkdir()
    shutil.copy(src, dst)
    shutil.copytree(src.with_suffix(""), dst.with_suffix(""))
    return dst


def test_fake_servers_do_not_leak_threads():
    assert threading.active_count() < 20


def test_exact_count_of_the_preview(workdir_copy, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        out, err = io.StringIO(), io.StringIO()
        code = main(["compact", str(workdir_copy), "--strategy", "full", "--exact", "--yes", "--json"], out, err)
    assert code == 0, err.getvalue()
    import orjson

    d = orjson.loads(out.getvalue())
    assert d["tokens_after_exact"] > 10_000
    assert [r["path"] for r in fake.requests] == ["/v1/messages/count_tokens"]  # counted, nothing generated


def test_an_error_body_that_echoes_the_key_never_reaches_the_screen(workdir_copy, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with FakeAnthropic(["echo"] * 6) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        out, err = io.StringIO(), io.StringIO()
        code = main(["compact", str(workdir_copy), "--strategy", "full", "--summarizer", "anthropic", "--yes"], out, err)
        assert fake.headers and any(KEY in v for h in fake.headers for v in h.values())  # the key did go to the server
    assert code != 0 and "502" in err.getvalue()
    assert KEY not in out.getvalue() + err.getvalue() and KEY[:16] not in out.getvalue() + err.getvalue()
    with FakeAnthropic(["echo"] * 6) as fake:
        with pytest.raises(SummarizerError) as exc:
            summarizer(fake, max_retries=0).summarize(SummaryRequest(session(), tuple(make_slice(session(), None).messages)))
    assert KEY not in str(exc.value)


ODD_KEY = "proxy-key-0123456789abcdefghijklmnopqrstu"  # a key with no sk-ant prefix, as a gateway may issue


@pytest.mark.parametrize("step", [("status", 401), ("status", 404), ("status", 529, {"retry-after-ms": "5"})])
def test_an_api_error_is_an_expected_error_with_its_own_line(workdir_copy, monkeypatch, step):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with FakeAnthropic([step] * 8) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        out, err = io.StringIO(), io.StringIO()
        code = main(["compact", str(workdir_copy), "--strategy", "full", "--summarizer", "anthropic", "--yes"], out, err)
    text = err.getvalue()
    last = text.strip().splitlines()[-1]  # after the line that says what would be sent
    assert code == 1 and last.startswith("inspector: the summarizer failed: ")
    assert "unexpected error" not in text and "--debug" not in text
    assert f"({step[1]})" in last


def test_a_long_non_json_error_body_is_redacted_before_it_is_cut():
    body = "upstream said: " + ("k=" + ODD_KEY + " ") * 20  # one copy of the key straddles the 300th character
    with FakeAnthropic([("text", 502, body)] * 4) as fake:
        s = AnthropicSummarizer("claude-sonnet-4-6", api_key=ODD_KEY, base_url=fake.url, max_retries=0)
        with pytest.raises(SummarizerError) as exc:
            s.summarize(SummaryRequest(session(), tuple(make_slice(session(), None).messages)))
    msg = str(exc.value)
    assert "502" in msg and ODD_KEY[:12] not in msg  # not even the part before the cut


def test_a_summary_that_echoes_the_key_is_neither_shown_nor_saved():
    with FakeAnthropic(["ok"], reply="<summary>\nThe user pasted the key " + ODD_KEY + " by mistake.\n</summary>") as fake:
        s = AnthropicSummarizer("claude-sonnet-4-6", api_key=ODD_KEY, base_url=fake.url, max_retries=0)
        res = compact(session(), "full", summarizer=s)
    assert ODD_KEY not in res.summary and "[redacted]" in res.summary
    assert all(ODD_KEY not in str(r) for r in res.new_records)


@pytest.mark.parametrize(
    "model", ["claude-opus-4-7", "claude-opus-5", "claude-sonnet-5", "claude-sonnet-4-6", "claude-haiku-4-5"]
)
def test_the_consent_prices_are_those_of_inspector_cost(model):
    """The summarizer kept its own price list: the consent dialog priced claude-opus-4-7 and claude-opus-5 at 3x and
    claude-sonnet-5 at 1.5x what `inspector cost` charges. One table now."""
    from inspector.compact.summarize.anthropic_api import SendEstimate, cost_usd
    from inspector.library.cost import PriceTable

    r = PriceTable.load().rates_for(model)
    assert cost_usd(model, 1_000_000, 1_000_000) == pytest.approx(r.input + r.output)
    assert cost_usd(model, 0, 0, 1_000_000, 1_000_000) == pytest.approx(r.cache_write_5m + r.cache_read)
    assert cost_usd("claude-unknown-9", 1_000, 1_000) is None
    text = SendEstimate(1_000, False, 20_000, None, None, "claude-unknown-9").describe()
    assert "no price is known" in text and "$" not in text
