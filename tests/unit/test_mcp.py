"""`inspector mcp` (issue 26.2): the MCP server's tools, called directly, through the SDK's in-process client, and
over stdio as Claude Code starts it. Read-only, bounded, confined to the projects root."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest
from helpers import ROOT, sha256

from inspector.cli import mcp as mcp_cli
from inspector.cli.mcp import Tools, build_server
from inspector.transcript.discovery import InspectorError, project_folder_name
from inspector.transcript.session import Session


def _all_hashes(root):
    return {p: sha256(p) for p in root.rglob("*") if p.is_file()}


def test_the_tools_answer_from_the_sessions_under_the_root(workdir):
    before = _all_hashes(workdir)
    t = Tools(workdir)
    listed = json.loads(t.list_sessions(limit=50))["sessions"]
    ids = {d["session"] for d in listed}
    assert len(listed) >= 4 and all(d["project"] and d["first"] for d in listed)
    hits = json.loads(t.search_sessions("IndexError", limit=5))["matches"]
    assert hits and all(h["session"] in ids or h.get("subagent") for h in hits) and all(h["uuid"] for h in hits)
    # the hit's record, read back by its uuid
    rec = json.loads(t.get_record(hits[0]["uuid"], hits[0]["session"], around="IndexError"))
    assert "indexerror" in rec["text"].lower() and rec["line"] == hits[0]["line"]
    assert hits[0]["where"] == "persisted output" and "cut" in rec  # the window around it, in the file in tool-results/
    story = json.loads(t.token_story("6513270e"))
    assert story["thresholds"]["auto_compact"] == 167_000 and story["compactions"][0]["cause"] == "threshold"
    # this 2.1.39 boundary has no durationMs or cumulativeDroppedTokens (written from 2.1.19x): said as unknown
    assert story["compactions"][0]["duration_ms"] is None and story["compactions"][0]["cumulative_dropped_tokens"] is None
    lost = json.loads(t.compaction_lost("6513270e"))
    assert lost["compaction"] == 1 and lost["of"] == 1 and lost["items"]
    assert all(i["status"] == "dropped" for i in lost["items"])
    assert {i["text"] for i in lost["items"]} >= {"/home/ann/work/weatherly/weatherly/units.py"}
    everything = json.loads(t.compaction_lost("6513270e", all_items=True))
    assert len(everything["items"]) > len(lost["items"])
    assert _all_hashes(workdir) == before  # read-only


def test_without_a_session_id_the_newest_session_of_the_working_project_is_meant(workdir):
    folder = next(p for p in workdir.iterdir() if p.name == "-home-ann-work-weatherly")
    newest = max(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    os.utime(newest, None)
    t = Tools(workdir, cwd=None)
    t.cwd = type("P", (), {"__str__": lambda self: "/home/ann/work/weatherly"})()
    assert project_folder_name("/home/ann/work/weatherly") == folder.name
    assert t._session(None) == newest


def test_names_not_paths_and_bad_arguments_are_one_clear_error(workdir, tmp_path):
    t = Tools(workdir)
    outside = tmp_path / "elsewhere" / "x.jsonl"
    outside.parent.mkdir()
    outside.write_text('{"type":"user"}\n')
    for ref in (str(outside), "../elsewhere/x", "x", "zzzzzzzz"):
        with pytest.raises(InspectorError):
            t.token_story(ref)
    with pytest.raises(InspectorError, match="1 to 1"):
        t.compaction_lost("6513270e", compaction=5)
    with pytest.raises(InspectorError, match="since"):
        t.list_sessions(since="last tuesday")
    with pytest.raises(InspectorError):
        t.get_record("nope", "6513270e")


def test_answers_are_bounded(workdir, monkeypatch):
    monkeypatch.setattr(mcp_cli, "MAX_CHARS", 3000)
    t = Tools(workdir)
    d = json.loads(t.search_sessions("the", limit=100))
    assert len(t.search_sessions("the", limit=100)) <= 3000 and "left_out" in d
    rec = json.loads(t.get_record("1", "6513270e", max_chars=10**9))
    assert len(rec["text"]) <= 3000


def test_the_server_lists_and_runs_its_tools_through_an_mcp_client(workdir):
    from mcp import Client

    server = build_server(Tools(workdir))

    async def go():
        async with Client(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {"search_sessions", "list_sessions", "token_story", "compaction_lost", "get_record"}
            assert all(t.annotations and t.annotations.read_only_hint for t in tools.values())
            res = await client.call_tool("token_story", {"session": "6513270e"})
            assert not res.is_error and '"auto_compact": 167000' in res.content[0].text
            bad = await client.call_tool("token_story", {"session": "zzzzzzzz"})
            assert bad.is_error and "no session" in bad.content[0].text

    asyncio.run(go())


def test_over_stdio_as_claude_code_starts_it(workdir, tmp_path):
    """A real MCP client session over the command's stdio (the initialize handshake Claude Code makes)."""
    from mcp import Client, StdioServerParameters

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "inspector", "mcp", "--root", str(workdir)], env=env)

    async def go():
        async with Client(params, mode="legacy") as client:
            res = await client.call_tool("list_sessions", {"limit": 2})
            d = json.loads(res.content[0].text)
            assert len(d["sessions"]) == 2

    asyncio.run(go())


def test_a_missing_root_is_one_line_and_a_non_zero_exit(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "inspector", "mcp", "--root", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0 and "no projects root" in p.stderr


def test_token_story_is_what_tokens_says(workdir):
    from helpers import jsonl, run_cli

    path = next(workdir.rglob("6513270e*.jsonl"))
    story = json.loads(Tools(workdir).token_story("6513270e"))
    code, out, err = run_cli("tokens", path, "--json")
    [d] = jsonl(out)
    assert story["thresholds"]["auto_compact"] == d["thresholds"]["auto_compact"]
    assert [c["pre_tokens"] for c in story["compactions"]] == [c["pre_tokens"] for c in d["compactions"]]
    s = Session.load(path)
    assert story["session"] == s.session_id
    s.close()
