"""`inspector hook` (issue 26.4): Claude Code's SessionEnd / PreCompact hook input archives the session, byte for
byte, incrementally; bad input is one line and exit 1 (never 2: a PreCompact hook's 2 blocks the compaction);
`--install` merges the two hooks into settings.json without touching any other."""

from __future__ import annotations

import io
import json
import shutil
import sys

import pytest
from helpers import SAMPLES, run_cli, sha256

from inspector.cli.hook import EVENTS, HOOK_TIMEOUT, merged_hooks


def _root(monkeypatch, tmp_path):
    """A Claude config folder whose projects root holds the samples (the hook refuses transcripts outside it)."""
    config = tmp_path / "claude"
    shutil.copytree(SAMPLES, config / "projects")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    return config / "projects"


def _hook(monkeypatch, payload, *argv):
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8"))
    return run_cli("hook", *argv)


@pytest.mark.parametrize("event", EVENTS)
def test_the_hook_archives_the_session_byte_for_byte_and_again_as_it_grows(tmp_path, monkeypatch, event):
    root = _root(monkeypatch, tmp_path)
    src = next(root.rglob("6513270e*.jsonl"))
    to = tmp_path / "archive"
    payload = {"session_id": src.stem, "transcript_path": str(src), "cwd": "/x", "hook_event_name": event}
    code, out, err = _hook(monkeypatch, payload, "--to", str(to))
    assert (code, out, err) == (0, "", "")  # nothing on stdout: a PreCompact hook's output becomes instructions
    copy = to / src.parent.name / src.name
    assert sha256(copy) == sha256(src)
    sub = next((src.with_suffix("") / "subagents").glob("*.jsonl"))
    assert sha256(to / src.parent.name / src.stem / "subagents" / sub.name) == sha256(sub)
    with open(src, "ab") as f:  # the session went on
        f.write(b'{"type":"user","uuid":"z1","parentUuid":null,"message":{"role":"user","content":"more"}}\n')
    code, out, err = _hook(monkeypatch, payload, "--to", str(to))
    assert code == 0 and sha256(copy) == sha256(src)


@pytest.mark.parametrize(
    "payload, words",
    [
        (b"not json", "not Claude Code's hook JSON"),
        ({"hook_event_name": "Stop", "transcript_path": "/x.jsonl"}, "not a hook inspector handles"),
        ({"hook_event_name": "SessionEnd"}, "no transcript_path"),
        ({"hook_event_name": "SessionEnd", "transcript_path": "/etc/passwd"}, "not a transcript under"),
    ],
)
def test_bad_input_is_one_line_and_exit_1_never_2(tmp_path, monkeypatch, payload, words):
    _root(monkeypatch, tmp_path)
    code, out, err = _hook(monkeypatch, payload, "--to", str(tmp_path / "archive"))
    assert code == 1 and out == "" and words in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "archive").exists()


def test_a_path_outside_the_projects_root_is_refused_even_through_a_link(tmp_path, monkeypatch):
    root = _root(monkeypatch, tmp_path)
    outside = tmp_path / "secret.jsonl"
    outside.write_text('{"type":"user"}\n')
    link = root / "-home-ann-work-weatherly" / "link.jsonl"
    link.symlink_to(outside)
    payload = {"hook_event_name": "SessionEnd", "transcript_path": str(link)}
    code, out, err = _hook(monkeypatch, payload, "--to", str(tmp_path / "a"))
    assert code == 1 and "not a transcript under" in err


def test_install_merges_the_two_hooks_and_keeps_every_other(tmp_path, monkeypatch):
    config = tmp_path / "claude"
    config.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    settings = config / "settings.json"
    mine = {"PreCompact": [{"matcher": "manual", "hooks": [{"type": "command", "command": "echo mine"}]}]}
    settings.write_text(json.dumps({"model": "opus", "hooks": mine, "theme": "dark"}, indent=2))
    before = settings.read_bytes()
    code, out, err = run_cli("hook", "--install", "--to", str(tmp_path / "arch"))
    assert code != 0 and settings.read_bytes() == before and "--yes" in err  # asked, nobody answered: nothing written
    code, out, err = run_cli("hook", "--install", "--yes", "--to", str(tmp_path / "arch"))
    assert code == 0, err
    data = json.loads(settings.read_text())
    assert list(data) == ["model", "hooks", "theme"] and data["model"] == "opus" and data["theme"] == "dark"
    assert data["hooks"]["PreCompact"][0] == mine["PreCompact"][0]  # the user's own hook kept, first
    for event in EVENTS:
        [ours] = [h for g in data["hooks"][event] for h in g["hooks"] if "hook --to" in h["command"]]
        assert ours["timeout"] == HOOK_TIMEOUT and str(tmp_path / "arch") in ours["command"]
    backups = list(config.glob("settings.json.inspector-backup-*"))
    assert len(backups) == 1 and backups[0].read_bytes() == before
    code, out, err = run_cli("hook", "--install", "--yes", "--to", str(tmp_path / "arch"))
    assert code == 0 and "already" in out  # installed once


def test_merging_is_idempotent_and_tolerates_odd_settings():
    cmd = "inspector hook --to /a"
    once = merged_hooks({"SessionEnd": "not a list", "Stop": [{"hooks": []}]}, cmd)
    assert merged_hooks(once, cmd) == once and once["Stop"] == [{"hooks": []}]
    assert merged_hooks(None, cmd)["SessionEnd"][0]["hooks"][0]["command"] == cmd
