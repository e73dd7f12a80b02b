"""Goldens from the conformance harness: what the real Claude Code 2.1.328 did, read by the normal suite without it.

Each folder under tests/goldens is one run of `python -m conformance` (transcripts, request logs and persisted outputs
xz-compressed): what Claude Code did (its boundaries, the requests the fake API received and which were refused, its
debug log) must be what inspector says of the same transcript, and every request must be rebuilt from the transcript
exactly.
"""

from __future__ import annotations

import pytest
from helpers import ROOT, expand_golden, golden_transcript, jsonl, run_cli, sha256

from conformance.compare import claude_facts, compare, inspector_facts
from conformance.runner import canonical, load_requests

GOLDENS = ROOT / "tests" / "goldens"
NAMES = sorted(p.name for p in GOLDENS.iterdir() if p.is_dir()) if GOLDENS.is_dir() else []


expand = expand_golden
transcript = golden_transcript


def test_there_are_goldens():
    assert {
        "reactive_ptl_sonnet45",
        "threshold_env_window_100k",
        "manual_compact_resume",
        "persisted_bash_output",
        "post_compact_file_restore_4",
    } <= set(NAMES)
    assert sum(p.stat().st_size for p in GOLDENS.rglob("*") if p.is_file()) < 5 << 20


@pytest.mark.parametrize("name", NAMES)
def test_inspector_agrees_with_what_claude_code_did(name, tmp_path):
    row = compare(expand(name, tmp_path))
    assert row.match, row.notes


@pytest.mark.parametrize("name", NAMES)
def test_every_request_is_rebuilt_from_the_transcript_alone(name, tmp_path):
    folder = expand(name, tmp_path)
    logged = [q for q in load_requests(folder) if q["kind"] == "turn"]
    mains = sorted(p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts)
    before = [sha256(p) for p in mains]
    rebuilt = []
    for path in mains:  # a run with a fork wrote two sessions: each rebuilds the requests it sent
        code, out, err = run_cli("request", path, "--json")
        assert code == 0, err
        rebuilt += [q for q in jsonl(out) if q["agent_id"] is None]
    assert len(rebuilt) == len(logged) > 0
    if len(mains) > 1:  # the log is in the order they were sent, across the sessions
        rebuilt.sort(key=lambda q: q["timestamp"] or "")
    for sent, got in zip(logged, rebuilt):
        assert canonical(sent["messages"]) == canonical(got["request"]["messages"])
        assert canonical(sent["tools"]) == canonical(got["request"]["tools"])
        assert canonical(sent["system"][1:]) == canonical(got["request"]["system"])  # the billing line is not recorded
        assert got["answered"] == (sent["answer"] != "prompt_too_long")
    assert [sha256(p) for p in mains] == before


def test_a_refused_request_explained_in_words(tmp_path):
    folder = expand("reactive_ptl_sonnet45", tmp_path)
    code, out, err = run_cli("tokens", "--json", transcript(folder))
    rep = jsonl(out)[0]
    th = rep["thresholds"]
    assert (th["enforced"], th["source"], th["unenforced_threshold"]) == (False, "auto", 167_000)
    [c] = rep["compactions"]
    assert c["cause"] == "prompt_too_long" and "no reply" in c["cause_evidence"]
    assert c["rounds_kept"] >= 1 and c["kept_uuids"] and c["rounds_summarized"] >= 5
    assert "refused a request as too long" in c["explanation"] and "kept verbatim" in c["explanation"]
    assert "167,000" in c["explanation"] and "not acted on" in c["explanation"]
    assert max(t["context_tokens"] for t in rep["turns"]) >= 180_000  # the history before the compaction is on the chart


def test_claude_codes_side_is_read_from_the_run_not_from_inspector(tmp_path):
    """The harness's own reading of a run: the causes come from the request log, the window from the debug log."""
    a = claude_facts(expand("threshold_env_window_100k", tmp_path))
    assert a.enforced and a.effective_window == 80_000 and a.source == "env"
    assert [c.split(" at ")[0] for c in a.compactions] == ["threshold", "threshold"]
    b = inspector_facts(expand("reactive_ptl_sonnet45", tmp_path / "b"))
    assert b.compactions[0].startswith("prompt_too_long")


def test_what_fills_the_context_is_the_exact_request_in_the_app(tmp_path):
    """At a reply of a 2.1.3xx session the Why / context tab counts the request that produced it, part by part."""
    import asyncio

    from inspector.transcript.discovery import Target
    from inspector.tui.app import InspectorApp
    from inspector.tui.widgets.detail import Detail
    from inspector.tui.widgets.timeline import Timeline

    path = transcript(expand("threshold_env_window_100k", tmp_path))

    async def go():
        app = InspectorApp(Target("file", path))
        async with app.run_test(size=(140, 42)) as pilot:
            for _ in range(4):
                await app.workers.wait_for_complete()
                await pilot.pause()
            tl = app.screen.query_one(Timeline)
            row = next(r for r in tl.rows if r.tokens)  # the first reply with its usage
            tl.select_index(row.index)
            await pilot.press("y")
            for _ in range(4):
                await app.workers.wait_for_complete()
                await pilot.pause()
            from textual.widgets import Static

            return "\n".join(str(w.render()) for w in app.screen.query_one("#why", Detail).query(Static))

    text = asyncio.run(go())
    assert (
        "The request" in text
        and "system prompt" in text
        and "tools (" in text
        and "the API's count of this exact request" in text
    )


def test_what_if_the_per_model_window_or_enforcement(tmp_path):
    path = transcript(expand("reactive_ptl_sonnet45", tmp_path))
    code, out, _ = run_cli("tokens", "--json", path, "--model-auto-compact-window", "150000")
    th = jsonl(out)[0]["thresholds"]
    assert (th["auto_compact"], th["enforced"], th["source"]) == (117_000, True, "settings")
    code, out, _ = run_cli("tokens", "--json", path, "--enforce")
    assert jsonl(out)[0]["thresholds"]["auto_compact"] == 167_000
    code, out, _ = run_cli("tokens", "--json", transcript(expand("threshold_env_window_100k", tmp_path / "t")))
    levels = {t["level"] for t in jsonl(out)[0]["turns"]}
    assert levels <= {"ok", "warn", "compact", "blocked"}


def test_bookkeeping_of_today_is_read_and_shown(tmp_path):
    path = transcript(expand("manual_compact_resume", tmp_path))
    code, out, _ = run_cli("stats", "--json", "--no-cache", path)
    st = jsonl(out)[0]
    assert st["claude_code_cost"]["total_usd"] > 0 and "claude-sonnet-4-5" in st["claude_code_cost"]["by_model"]
    assert st["tools_used"] == ["Bash"]
    for t in ("api-request", "api-request-shape", "api-request-blob", "attachment", "cost-state", "tools-used"):
        assert st["records"]["by_type"].get(t), t
    code, out, _ = run_cli("show", path, "--all")
    assert "API request sent" in out and "cost so far (Claude Code's own count)" in out and "attachment date" in out
    code, out, _ = run_cli("search", "Today's date is", path, "--json")  # an attachment's rendered text
    hits = jsonl(out)
    assert hits and {h["type"] for h in hits} == {"attachment"}


def test_a_transcript_from_a_newer_claude_code_still_loads_and_says_which_rules(tmp_path):
    path = transcript(expand("reactive_ptl_sonnet45", tmp_path))
    lines = path.read_bytes().splitlines()
    newer = [ln.replace(b'"version":"2.1.328"', b'"version":"2.1.999"') for ln in lines]
    newer.insert(5, b'{"type":"hologram-state","sessionId":"x","mood":"curious","timestamp":"2026-11-30T16:08:50.000Z"}')
    path.write_bytes(b"\n".join(newer) + b"\n")
    code, out, err = run_cli("show", path, "--all")
    assert code == 0 and "hologram-state" in out
    code, out, err = run_cli("tokens", "--json", path)
    rep = jsonl(out)[0]
    assert "2.1.999 is newer than any release the era matrix measured" in rep["thresholds"]["rules"]
    assert "newer than any release" in rep["compactions"][0]["rules"] and rep["compactions"][0]["cause"] == "prompt_too_long"


@pytest.mark.parametrize("name", NAMES)
def test_every_request_is_what_the_chain_at_that_moment_sends(name, tmp_path):
    """The wire form (inspector.claude.wire) from the records alone: for each request Claude Code sent, the records
    of the chain in force when it was sent (a REPL writes a request's reminders after its api-request row: up to
    its first reply), turned into API messages, are the messages the fake API received."""
    from conformance.compare import wire_differences
    from inspector.claude.wire import wire_style
    from inspector.transcript.session import Session

    folder = expand(name, tmp_path)
    s = Session.load(transcript(folder))
    if not name.startswith(("gen_", "found_")):  # a generated run may switch models: each request in its own model's style
        assert wire_style(s) == {"model_sonnet5_threshold": "system", "model_unknown": "system-bare"}.get(name, "user")
    checked, wire = wire_differences(folder)
    assert checked and wire == []


# How each model's first request carried its reminders, one print-mode turn per model on the binaries
# (`conformance.matrix.reminder_style`, run 2026-12-06; the releases before 2.1.328 and the Claude 4 rows of 2.1.332
# 2026-12-07, at the bisected boundaries): "user" = no system-role entry (reminders as user text).
MEASURED_STYLES = {
    "2.1.332": {
        "claude-3-7-sonnet": "user",
        "claude-haiku-4-5": "user",
        "claude-sonnet-4-5": "user",
        "claude-sonnet-4-6": "user",
        "claude-opus-4-5": "user",
        "claude-opus-4-6": "user",
        "claude-opus-4-7": "user",
        "claude-opus-4-8": "system-bare",
        "claude-opus-4-0": "system-bare",
        "claude-opus-4-1": "system-bare",
        "claude-sonnet-4-0[1m]": "user",
        "claude-sonnet-5": "system",
        "claude-sonnet-5[1m]": "system",
        "claude-opus-5": "system-bare",
        "claude-opus-5[1m]": "system-bare",
        "claude-fable-5": "system-bare",
        "claude-mythos-5": "system-bare",
        "claude-mythos-5-1": "system-bare",
        "claude-sonnet-5-5": "system-bare",
        "claude-haiku-5-5": "system-bare",
        "claude-opus-5-5": "system-bare",
        "claude-foo-1": "system-bare",
    },
    "2.1.153": {
        "claude-3-7-sonnet": "user",
        "claude-foo-1": "user",
        "claude-haiku-5-5": "user",
        "claude-mythos-5": "user",
        "claude-opus-4-7": "user",
        "claude-opus-4-8": "user",
        "claude-opus-5": "user",
        "claude-sonnet-4-0[1m]": "user",
        "claude-sonnet-4-5": "user",
        "claude-sonnet-4-5[1m]": "user",
        "claude-sonnet-5": "user",
        "claude-sonnet-5[1m]": "user",
    },
    "2.1.154": {
        "claude-3-7-sonnet": "user",
        "claude-foo-1": "system-bare",
        "claude-haiku-5-5": "system-bare",
        "claude-mythos-5": "system-bare",
        "claude-opus-4-7": "user",
        "claude-opus-4-8": "system-bare",
        "claude-opus-5": "system-bare",
        "claude-sonnet-4-0[1m]": "system-bare",
        "claude-sonnet-4-5": "user",
        "claude-sonnet-4-5[1m]": "user",
        "claude-sonnet-5": "system-bare",
        "claude-sonnet-5[1m]": "system-bare",
    },
    "2.1.200": {
        "claude-3-7-sonnet[1m]": "user",
        "claude-haiku-4-5[1m]": "user",
        "claude-haiku-5-5": "system-bare",
        "claude-opus-4-0": "system-bare",
        "claude-opus-4-0[1m]": "system-bare",
        "claude-opus-4-1": "system-bare",
        "claude-opus-4-1[1m]": "system-bare",
        "claude-opus-4-5[1m]": "user",
        "claude-opus-4-6[1m]": "user",
        "claude-opus-4-7[1m]": "user",
        "claude-opus-5": "system-bare",
        "claude-sonnet-4-0": "user",
        "claude-sonnet-4-0[1m]": "system-bare",
        "claude-sonnet-4-6[1m]": "user",
        "claude-sonnet-5": "system-bare",
    },
    "2.1.202": {
        "claude-3-7-sonnet": "user",
        "claude-foo-1": "system-bare",
        "claude-haiku-5-5": "system-bare",
        "claude-mythos-5": "system-bare",
        "claude-opus-4-7": "user",
        "claude-opus-4-8": "system-bare",
        "claude-opus-5": "system-bare",
        "claude-sonnet-4-0[1m]": "system-bare",
        "claude-sonnet-4-5": "user",
        "claude-sonnet-4-5[1m]": "user",
        "claude-sonnet-5": "user",
        "claude-sonnet-5[1m]": "user",
    },
    "2.1.203": {
        "claude-3-7-sonnet": "user",
        "claude-foo-1": "system-bare",
        "claude-haiku-5-5": "system-bare",
        "claude-mythos-5": "system-bare",
        "claude-opus-4-7": "user",
        "claude-opus-4-8": "system-bare",
        "claude-opus-5": "system-bare",
        "claude-sonnet-4-0[1m]": "system-bare",
        "claude-sonnet-4-5": "user",
        "claude-sonnet-4-5[1m]": "user",
        "claude-sonnet-5": "system",
        "claude-sonnet-5[1m]": "system",
    },
    "2.1.251": {
        "claude-haiku-5-5": "system-bare",
        "claude-opus-4-0": "system-bare",
        "claude-opus-4-1": "system-bare",
        "claude-opus-4-8": "system-bare",
        "claude-sonnet-4-0[1m]": "user",
        "claude-sonnet-5": "system",
    },
    "2.1.278": {
        "claude-3-7-sonnet": "user",
        "claude-foo-1": "system-bare",
        "claude-haiku-5-5": "system-bare",
        "claude-mythos-5": "system-bare",
        "claude-opus-4-7": "user",
        "claude-opus-4-8": "system-bare",
        "claude-opus-5": "system-bare",
        "claude-sonnet-4-0[1m]": "user",
        "claude-sonnet-4-5": "user",
        "claude-sonnet-4-5[1m]": "user",
        "claude-sonnet-5": "system",
        "claude-sonnet-5[1m]": "system",
    },
    "2.1.280": {
        "claude-3-7-sonnet": "user",
        "claude-foo-1": "system-bare",
        "claude-haiku-5-5": "system-bare",
        "claude-mythos-5": "system-bare",
        "claude-opus-4-7": "user",
        "claude-opus-4-8": "system-bare",
        "claude-opus-5": "system-bare",
        "claude-sonnet-4-0[1m]": "user",
        "claude-sonnet-4-5": "user",
        "claude-sonnet-4-5[1m]": "user",
        "claude-sonnet-5": "system",
        "claude-sonnet-5[1m]": "system",
    },
    "2.1.285": {
        "claude-3-7-sonnet": "user",
        "claude-foo-1": "system-bare",
        "claude-haiku-5-5": "system-bare",
        "claude-mythos-5": "system-bare",
        "claude-opus-4-7": "user",
        "claude-opus-4-8": "system-bare",
        "claude-opus-5": "system-bare",
        "claude-sonnet-4-0[1m]": "user",
        "claude-sonnet-4-5": "user",
        "claude-sonnet-4-5[1m]": "user",
        "claude-sonnet-5": "system",
        "claude-sonnet-5[1m]": "system",
    },
    "2.1.300": {
        "claude-haiku-5-5": "system-bare",
        "claude-opus-4-0": "system-bare",
        "claude-opus-4-1": "system-bare",
        "claude-opus-4-8": "system-bare",
        "claude-sonnet-4-0[1m]": "user",
        "claude-sonnet-5": "system",
    },
    "2.1.328": {
        "claude-opus-4-7": "user",
        "claude-opus-4-8": "system-bare",
        "claude-sonnet-5": "system",
        "claude-opus-5": "system-bare",
        "claude-fable-5": "system-bare",
        "claude-mythos-5": "system-bare",
        "claude-sonnet-5-5": "system-bare",
        "claude-foo-1": "system-bare",
    },
}


@pytest.mark.parametrize("version", sorted(MEASURED_STYLES))
def test_wire_style_by_model_as_the_binaries_sent_it(version):
    """The style of a session with no recorded request (a fork's copy, a REPL session without api-request rows) is
    the model's, as the release sends it: claude-opus-5 bare, not wrapped (2.1.332 seed 104014's fork, resumed after a
    partial compaction, sent its environment bare where inspector's preview wrapped it)."""
    from inspector.claude.wire import style_for_model

    got = {m: style_for_model(m, version) for m in MEASURED_STYLES[version]}
    assert got == MEASURED_STYLES[version]
    assert style_for_model("claude-sonnet-4-5-20250929", version) == "user"  # a dated id is its model
    assert style_for_model("claude-opus-5", None) == "system-bare"  # no release known: the catalog's capability


@pytest.mark.parametrize("name", ["reactive_ptl_sonnet45", "manual_compact_resume", "threshold_env_window_100k"])
def test_each_rebuilt_request_carries_only_its_own_cache_breakpoints(name, tmp_path):
    """Each request is rebuilt on its own: the breakpoints of its api-request row, none of the requests it extends
    (a shared message carried every earlier request's marker: the 7th request of a session had seven)."""
    import orjson

    from conformance.runner import cache_paths
    from inspector.claude.requests import rebuild_requests
    from inspector.transcript.session import Session

    s = Session.load(golden_transcript(expand_golden(name, tmp_path)))
    rows = {}
    for line in s.path.read_bytes().splitlines():
        o = orjson.loads(line)
        if o.get("type") == "api-request":
            rows[o["id"]] = sorted(
                orjson.dumps(c["path"]).decode() for c in o.get("cacheControl") or () if c["path"][0] == "messages"
            )
    reqs = rebuild_requests(s)
    assert len(reqs) >= 3
    for q in reqs:
        have = sorted(orjson.dumps(p).decode() for p, _ in cache_paths(q.request) if p[0] == "messages")
        assert have == rows[q.id], q.id


def test_every_field_the_goldens_wrote_is_one_inspector_knows(tmp_path):
    """The registry of known record types and fields covers every golden run; a field it lacks fails the run's row."""
    from conformance.compare import unknown_in
    from inspector.transcript.fields import unknown_fields

    for name in NAMES:
        assert unknown_in(expand_golden(name, tmp_path)) == [], name
    line = (
        b'{"type":"user","uuid":"u","parentUuid":null,"sentAtMs":1,"hologramMs":1,"moodSource":"x","message":{"role":"user",'
        b'"content":"hi"}}'
    )
    assert set(unknown_fields([line])) == {("user", "hologramMs"), ("user", "moodSource")}  # sentAtMs: 2.1.332's, registered
    assert set(unknown_fields([b'{"type":"hologram-state","mood":"curious"}'])) == {("hologram-state", "*")}
    # a session that runs past midnight (UTC): 2.1.328's date reminder says the date changed (fresh REPL seed 77090)
    date = b'{"type":"attachment","uuid":"d","attachment":{"type":"date","date":"2026-12-06","changed":true,"moodDate":1}}'
    assert set(unknown_fields([date])) == {("attachment.attachment[date]", "moodDate")}
    # a reply that thinks, its reasoning asked omitted (2.1.332, fresh seed 79202 with thinking replies): how long the
    # model thought and how its reasoning was shown are the record's
    think = (
        b'{"type":"assistant","uuid":"a","thinkingDurationMs":1,"thinkingDisplay":"omitted","thinkingMood":1,'
        b'"message":{"role":"assistant","content":[{"type":"thinking","thinking":"","signature":"x"}]}}'
    )
    assert set(unknown_fields([think])) == {("assistant", "thinkingMood")}


@pytest.mark.parametrize(
    "bad",
    [
        '"oops"',
        '{"path": 1}',
        '[1, "x", null]',
        '[{"path": "messages", "value": 3}]',
        '[{"path": ["messages", 99, "content", 0], "value": {"type": "ephemeral"}}]',
    ],
)
def test_a_hostile_cache_control_costs_no_command(tmp_path, bad):
    """An api-request row whose cacheControl is not a list of objects (or points nowhere) is ignored: request,
    tokens and compact run (they crashed with TypeError or AttributeError)."""
    path = golden_transcript(expand_golden("reactive_ptl_sonnet45", tmp_path))
    lines = path.read_bytes().splitlines()
    out = []
    for ln in lines:
        if b'"type":"api-request"' in ln and b'"cacheControl":' in ln:
            import json as _json

            o = _json.loads(ln)
            o["cacheControl"] = _json.loads(bad)
            ln = _json.dumps(o).encode()
        out.append(ln)
    path.write_bytes(b"\n".join(out) + b"\n")
    for argv in (("request", "--json", path), ("tokens", "--json", path), ("compact", path)):
        code, _out, err = run_cli(*argv)
        assert code == 0, (argv, err)


def test_a_request_row_that_points_at_one_blob_many_times_costs_what_a_real_request_can(tmp_path):
    """A 13 MB transcript whose api-request tail names one 2 KB blob 200,000 times made `request --json` write 2 GB
    (4 GB of memory) and `compact` take 36 s: a request's messages are cut at the API's request size limit, said."""
    import json as _json

    from inspector.claude.requests import REQUEST_BYTES_CAP, rebuild_requests
    from inspector.transcript.session import Session

    h = "a" * 64
    recs = [
        {
            "type": "user",
            "uuid": "u0",
            "parentUuid": None,
            "timestamp": "2026-11-01T00:00:00Z",
            "sessionId": "S",
            "version": "2.1.332",
            "cwd": "/w",
            "message": {"role": "user", "content": "hi"},
        },
        {"type": "api-request-blob", "hash": h, "message": {"role": "user", "content": [{"type": "text", "text": "x" * 2000}]}},
        {"type": "api-request", "id": "r1", "tail": [h] * 200_000, "params": {"model": "claude-opus-5"}},
        {"type": "api-request", "id": "r2", "base": "r1", "keep": 10**12, "tail": [h], "params": {"model": "claude-opus-5"}},
    ]
    p = tmp_path / "p" / "s.jsonl"
    p.parent.mkdir()
    p.write_text("".join(_json.dumps(r) + "\n" for r in recs))
    reqs = rebuild_requests(Session.load(p))
    assert [len(q.request["messages"]) for q in reqs] == [16_344, 16_344]
    assert all(q.capped and "32 MB" in q.capped and not q.exact for q in reqs)
    assert sum(len(_json.dumps(m, separators=(",", ":"))) for m in reqs[0].request["messages"]) <= REQUEST_BYTES_CAP
    code, out, err = run_cli("request", p)
    assert code == 0 and "cut at message 16,344" in out
    code, out, err = run_cli("request", "--json", p)
    assert code == 0 and len(out) < 3 * REQUEST_BYTES_CAP and '"capped":"cut at message' in out


def test_the_one_writer_of_generated_blocks_replaces_only_its_block_and_refuses_a_page_without_it(tmp_path):
    from conformance.docblocks import read_block, write_block

    doc = tmp_path / "page.md"
    doc.write_text("# Title\n\ntyped\n<!-- t:start -->\nold\n<!-- t:end -->\ntyped after\n")
    write_block(doc, "t", "| a |\n")
    assert doc.read_text() == "# Title\n\ntyped\n<!-- t:start -->\n| a |\n<!-- t:end -->\ntyped after\n"
    assert read_block(doc, "t") == "| a |\n"
    with pytest.raises(ValueError, match="no other block"):
        write_block(doc, "other", "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.md"]  # no temporary left


def test_every_generated_block_of_the_docs_has_its_writer():
    """Each page's generated block is written by one script through the one writer; a block no script writes is typed."""
    from helpers import ROOT

    writers = {"cli": "docs/generate.py", "bench": "bench/run.py", "fidelity": "bench/fidelity.py"}
    writers["statusline"] = "bench/statusline.py"
    writers["cost"] = "bench/cost.py"
    writers["floors"] = "bench/floors.py"
    writers |= {
        "conformance": "conformance/__main__.py",
        "resume": "conformance/__main__.py",
        "inside": "conformance/__main__.py",
    }
    import re

    found = {}
    for page in (ROOT / "docs").glob("*.md"):
        for name in re.findall(r"<!-- ([a-z]+):start -->", page.read_text()):
            found[name] = page.name
    assert set(found) == set(writers), found
    for name, script in writers.items():
        assert f'"{name}"' in (ROOT / script).read_text(), (name, script)


def test_a_compaction_preview_names_the_model_the_resumed_request_is_for(tmp_path):
    """What a resume sends depends on its model (another model's reasoning is left out): the preview says which model
    it assumed, the one in force at the session's end, and --json carries it (`parameters.wire_model`)."""
    import io
    import json as _json

    from inspector.cli import main
    from inspector.transcript.session import Session

    path = golden_transcript(expand_golden("reactive_ptl_sonnet45", tmp_path))
    model = Session.load(path).main_model
    out, err = io.StringIO(), io.StringIO()
    assert main(["compact", str(path), "--strategy", "compact"], out, err) == 0, err.getvalue()
    assert f"After `claude --resume` on {model}, Claude Code sends" in out.getvalue()
    out = io.StringIO()
    assert main(["compact", str(path), "--strategy", "compact", "--json"], out, io.StringIO()) == 0
    got = _json.loads(out.getvalue())
    assert got["parameters"]["wire_model"] == model and got["parameters"]["foreign_thinking"] == "none"


def test_the_goldens_stay_small():
    """The goldens are the normal suite's record of real runs: under 5 MB in all (issue 23), their request logs' system
    prompts and tool lists kept once for all of them (conformance/goldens.py)."""
    files = [p for p in GOLDENS.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) < 5_000_000
    assert not [p for p in files if p.suffix not in (".xz", ".json")], "every golden file but run.json is compressed"


def test_a_request_log_comes_back_whole_from_the_shared_store(tmp_path):
    import json
    import lzma

    from conformance.goldens import _with_shared, dump_requests, pack_requests, prune_shared

    store = tmp_path / "shared.json.xz"
    log = {
        "requests": [{"system": "s1", "tools": "t1", "messages": ["m1"]}, {"system": "s2", "tools": "t1", "messages": []}],
        "messages": {"m1": {"role": "user", "content": "hi"}},
        "system": {"s1": [{"type": "text", "text": "a prompt"}], "s2": [{"type": "text", "text": "another"}]},
        "tools": {"t1": [{"name": "Bash"}]},
        "version": "2.1.332",
    }
    raw = dump_requests(log)
    packed = pack_requests(raw, store)
    kept = json.loads(lzma.decompress(packed))
    assert kept["system"] == {"s1": None, "s2": None} and kept["tools"] == {"t1": None}  # moved out
    assert kept["messages"] == log["messages"]
    assert _with_shared(lzma.decompress(packed), store) == raw  # the bytes the harness saved
    # a golden removed: prune_shared drops what no golden names
    (tmp_path / "g1").mkdir()
    (tmp_path / "g1" / "requests.json.xz").write_bytes(packed)
    other = dict(log, requests=[], system={}, tools={"t2": [{"name": "Read"}]})
    (tmp_path / "g2").mkdir()
    (tmp_path / "g2" / "requests.json.xz").write_bytes(pack_requests(dump_requests(other), store))
    (tmp_path / "g2" / "requests.json.xz").unlink()
    prune_shared(tmp_path)
    shared = json.loads(lzma.decompress(store.read_bytes()))
    assert set(shared["tools"]) == {"t1"} and set(shared["system"]) == {"s1", "s2"}
