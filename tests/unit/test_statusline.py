"""`inspector statusline`: the line for Claude Code's statusLine setting, from the JSON it pipes on stdin."""

from __future__ import annotations

import io
import json
import sys

import pytest
from builders import assistant, user
from helpers import SAMPLES, jsonl, run_cli, write_jsonl

from inspector.transcript.session import Session


def _run(monkeypatch, payload, *argv):
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8"))
    return run_cli("statusline", *argv)


def _session(tmp_path, version="2.1.88", model="claude-sonnet-4-6", cache_read=150_000, tail_chars=4_000):
    recs = [
        user("u1", None, "hi", version=version),
        assistant("a1", "u1", usage=(10, 100, cache_read, 50), model=model, sec=1, version=version),
        user("u2", "a1", "x" * tail_chars, sec=2, version=version),
    ]
    return write_jsonl(tmp_path / "proj" / "s.jsonl", recs)


def test_the_number_is_claude_codes_count_against_its_releases_threshold(tmp_path, monkeypatch):
    """2.1.88, sonnet-4-6: usage 150,160 + the rough estimate of the 4,000-character prompt after it (1,000) =
    151,160; the threshold is 200,000 - 20,000 - 13,000 = 167,000, the warning 20,000 below it."""
    path = _session(tmp_path)
    code, out, err = _run(monkeypatch, {"transcript_path": str(path)}, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert (d["used"], d["auto_compact"], d["to_auto_compact"], d["level"]) == (151_160, 167_000, 15_840, "warning")
    assert d["window"] == 200_000 and d["enforced"] is True
    code, out, _ = _run(monkeypatch, {"transcript_path": str(path)}, "--no-color")
    assert out.startswith("ctx 151k/200k (76%) · 16k to auto-compact · warning")
    code, out, _ = _run(monkeypatch, {"transcript_path": str(path)})
    assert out.startswith("\x1b[33m") and out.rstrip().endswith("\x1b[0m")  # the warning in colour
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b" not in _run(monkeypatch, {"transcript_path": str(path)})[1]


def test_the_model_claude_code_runs_now_decides_the_window(tmp_path, monkeypatch):
    """The stdin's model (after /model, or with the [1m] the records never carry) sizes the window."""
    path = _session(tmp_path)
    payload = {"transcript_path": str(path), "model": {"id": "claude-sonnet-4-6[1m]", "display_name": "Sonnet"}}
    d = json.loads(_run(monkeypatch, payload, "--json")[1])
    assert (d["window"], d["auto_compact"], d["level"]) == (1_000_000, 967_000, "ok")


def test_where_the_threshold_is_not_enforced_it_says_where_the_api_refuses(tmp_path, monkeypatch):
    """2.1.332 on claude-sonnet-4-5 (window source `auto`): nothing compacts before the API's refusal, no warning."""
    path = _session(tmp_path, version="2.1.332", model="claude-sonnet-4-5-20250929")
    code, out, err = _run(monkeypatch, {"transcript_path": str(path)}, "--no-color")
    assert code == 0, err
    assert "not enforced: compacts when the API refuses at ~200k" in out and "warning" not in out
    d = json.loads(_run(monkeypatch, {"transcript_path": str(path)}, "--json")[1])
    assert (d["enforced"], d["to_auto_compact"], d["refused_at"], d["level"]) == (False, None, 200_000, "ok")


def test_a_template_composes_the_line(tmp_path, monkeypatch):
    path = _session(tmp_path)
    code, out, _ = _run(monkeypatch, {"transcript_path": str(path)}, "--no-color", "--format", "{percent}% · {left} left")
    assert (code, out) == (0, "76% · 15840 left\n")
    code, out, err = _run(monkeypatch, {"transcript_path": str(path)}, "--format", "{nope}")
    assert code == 2 and "not a template" in err and "{used}" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "payload, words",
    [
        (b"not json", "not Claude Code's statusline JSON"),
        (b"[1, 2]", "not Claude Code's statusline JSON"),
        (b"", "not Claude Code's statusline JSON"),
        (b'{"session_id": "x"}', "names no transcript_path"),
        (b'{"transcript_path": "/nowhere/s.jsonl"}', "no transcript at /nowhere/s.jsonl"),
        (b"{" + b" " * (1 << 20) + b"}", "over 1 MB"),
    ],
)
def test_bad_input_is_one_line_and_a_non_zero_exit(monkeypatch, payload, words):
    code, out, err = _run(monkeypatch, payload)
    assert code == 2 and out == "" and words in err and len(err.strip().splitlines()) == 1


def test_its_number_is_inspector_tokens_number_for_every_sample(monkeypatch):
    """`inspector tokens --at <leaf>` says the count Claude Code compares with its thresholds at the leaf: the
    statusline says the same for each sample session, of every release the samples hold."""
    checked = 0
    for path in sorted(SAMPLES.rglob("*.jsonl")):
        if "subagents" in path.parts:
            continue
        s = Session.load(path)
        leaf = s.conversation.leaf_uuid
        if leaf is None:
            continue
        code, out, err = run_cli("tokens", path, "--at", leaf, "--json")
        assert code == 0, err
        [at] = [d["at"] for d in jsonl(out) if d.get("at")]
        d = json.loads(_run(monkeypatch, {"transcript_path": str(path)}, "--json")[1])
        assert d["used"] == at["token_count_with_estimation"] > 0, path
        checked += 1
    assert checked >= 3


def _settings(tmp_path, monkeypatch):
    config = tmp_path / "claude"
    config.mkdir(exist_ok=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    return config / "settings.json"


def test_install_shows_asks_keeps_a_backup_and_touches_no_other_key(tmp_path, monkeypatch):
    path = _settings(tmp_path, monkeypatch)
    original = b'{\n  "model": "opus",\n  "env": {"A": "1"},\n  "statusLine": {"type": "command", "command": "mine"}\n}\n'
    path.write_bytes(original)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # not a terminal: nothing is written without --yes
    code, out, err = run_cli("statusline", "--install")
    assert code == 2 and "nothing was written: re-run with --yes to write it" in err and '"command": "mine"' in err
    assert path.read_bytes() == original and sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]
    code, out, err = run_cli("statusline", "--install", "--yes")
    assert code == 0, err
    data = json.loads(path.read_text())
    assert list(data) == ["model", "env", "statusLine"] and data["model"] == "opus" and data["env"] == {"A": "1"}
    assert data["statusLine"]["type"] == "command" and data["statusLine"]["command"].endswith("statusline")
    [backup] = [p for p in path.parent.iterdir() if p.name.startswith("settings.json.inspector-backup-")]
    assert backup.read_bytes() == original and str(backup) in out
    code, out, err = run_cli("statusline", "--install", "--yes")  # again: nothing to do, no second backup
    assert code == 0 and "already set" in out and len(list(path.parent.iterdir())) == 2


def test_install_creates_the_settings_and_refuses_a_file_it_cannot_read_as_json(tmp_path, monkeypatch):
    path = _settings(tmp_path, monkeypatch)
    code, out, err = run_cli("statusline", "--install", "--yes")
    assert code == 0, err
    assert list(json.loads(path.read_text())) == ["statusLine"]
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]  # nothing to back up
    path.write_bytes(b'{"model": "opus",}')  # not JSON: left as it is
    code, out, err = run_cli("statusline", "--install", "--yes")
    assert code == 2 and "not valid JSON" in err and path.read_bytes() == b'{"model": "opus",}'


def test_a_settings_file_changed_after_it_was_shown_is_not_written_over(tmp_path, monkeypatch):
    from inspector.edit.files import SaveError
    from inspector.edit.settings import apply, plan_setting

    path = _settings(tmp_path, monkeypatch)
    path.write_text('{"a": 1}')
    change = plan_setting(path, "statusLine", {"type": "command", "command": "x"})
    path.write_text('{"a": 2}')  # Claude Code (or the user) wrote it meanwhile
    with pytest.raises(SaveError, match="changed since it was read"):
        apply(change)
    assert path.read_text() == '{"a": 2}' and len(list(path.parent.iterdir())) == 1


def test_the_running_release_applies_until_the_transcript_names_one(tmp_path, monkeypatch):
    """A session's first records may carry no version: the release Claude Code says it is decides the rules, not the
    2.1.88 reference (2.1.332 does not enforce the threshold for this model; 2.1.88 would say 167k)."""
    recs = [
        user("u1", None, "hi"),
        assistant("a1", "u1", usage=(10, 100, 50_000, 50), model="claude-sonnet-4-5", sec=1),
    ]
    for r in recs:
        r.pop("version", None)
    path = write_jsonl(tmp_path / "proj" / "s.jsonl", recs)
    d = json.loads(_run(monkeypatch, {"transcript_path": str(path), "version": "2.1.332"}, "--json")[1])
    assert d["enforced"] is False and "2.1.332" in d["rules"]
    d = json.loads(_run(monkeypatch, {"transcript_path": str(path), "version": "2.1.88"}, "--json")[1])
    assert d["enforced"] is True and d["auto_compact"] == 167_000


def test_a_release_newer_than_any_measured_says_whose_rules_it_shows(tmp_path, monkeypatch):
    path = _session(tmp_path, version="2.1.999", model="claude-sonnet-4-5")
    code, out, err = _run(monkeypatch, {"transcript_path": str(path), "version": "2.1.999"}, "--no-color")
    assert code == 0 and "rules of 2.1." in out
    code, out, err = _run(monkeypatch, {"transcript_path": str(path), "version": "banana"}, "--no-color")
    assert code == 2 and "not a Claude Code release" in err and out == ""
