"""`inspector history` (issue 28.7): the sessions whose transcripts cleanup deleted, recovered from history.jsonl."""

from __future__ import annotations

import json
import os

from builders import assistant, user
from helpers import jsonl, run_cli, sha256, write_jsonl


def _entry(text, ms, project, sid=None):
    d = {"display": text, "pastedContents": {}, "timestamp": ms, "project": project}
    if sid:
        d["sessionId"] = sid
    return json.dumps(d)


def _setup(isolated_env):
    config = isolated_env / "claude"
    # one session still has its transcript
    rec = user("u1", None, "kept prompt", cwd="/w/app")
    rec["sessionId"] = "keep-1"
    write_jsonl(config / "projects" / "-w-app" / "keep-1.jsonl", [rec, assistant("a1", "u1", cwd="/w/app")])
    lines = [
        _entry("kept prompt", 1_780_000_000_000, "/w/app", "keep-1"),
        _entry("migrate the billing tables", 1_770_000_000_000, "/w/app", "gone-1"),
        _entry("and add the index", 1_770_000_060_000, "/w/app", "gone-1"),
        _entry("an old release's prompt", 1_760_000_000_000, "/w/old"),
        "not json",
    ]
    (config / "history.jsonl").write_text("\n".join(lines) + "\n")
    (config / ".last-cleanup").write_text("")
    os.utime(config / ".last-cleanup", (1_781_000_000, 1_781_000_000))
    return config


def test_sessions_known_only_from_history_are_listed_per_project(isolated_env):
    config = _setup(isolated_env)
    before = sha256(config / "history.jsonl")
    code, out, err = run_cli("history")
    assert code == 0 and "1 line(s)" in err and "are not history entries" in err
    assert "cleanup last ran at 2026-06-09T" in out
    assert "/w/app  (1 session(s): transcript deleted by cleanup)" in out and "gone-1" in out
    assert "migrate the billing tables" in out and "keep-1" not in out and "kept prompt" not in out
    assert "/w/old" in out and "no session id" in out
    rows = jsonl(run_cli("history", "--json")[1])
    by = {r["session_id"]: r for r in rows}
    assert [p["text"] for p in by["gone-1"]["prompts"]] == ["migrate the billing tables", "and add the index"]
    assert by["gone-1"]["status"] == "transcript deleted by cleanup"
    assert by["gone-1"]["first_timestamp"].startswith("2026-02-02T")
    assert sha256(config / "history.jsonl") == before  # read only


def test_history_is_searchable_and_filtered_by_project(isolated_env):
    _setup(isolated_env)
    rows = jsonl(run_cli("history", "--json", "--search", "INDEX")[1])
    assert [r["session_id"] for r in rows] == ["gone-1"]
    rows = jsonl(run_cli("history", "--json", "--project", "old")[1])
    assert [r["project"] for r in rows] == ["/w/old"]


def test_no_history_is_said_plainly(isolated_env):
    code, out, err = run_cli("history")
    assert code == 0 and "0 prompt(s)" in out and "No session is known only from the history" in out
