"""The token report kept in the cache per session (issue 29.3): opening an unchanged session again reads its
compactions' explanations back, the same report to the last field, and a kept report is never used for a session, a
folder beside it, settings or code other than the ones it was made from."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict

import pytest
from helpers import REAL_PROJECTS, SAMPLES, copied_sample

from inspector.tokens import keptreport
from inspector.tokens.explain import analyze
from inspector.tokens.keptreport import kept_analyze, report_key
from inspector.tokens.thresholds import Settings
from inspector.transcript.session import Session


def same(a, b) -> bool:
    return a.as_dict(full=True) == b.as_dict(full=True) and [asdict(e) for e in a.compactions] == [
        asdict(e) for e in b.compactions
    ]


@pytest.fixture
def copy(tmp_path):
    return copied_sample("Fix forecast", tmp_path / "p")


def sessions() -> list:
    found = sorted(SAMPLES.rglob("*.jsonl"))
    if REAL_PROJECTS.is_dir():
        found += sorted(REAL_PROJECTS.glob("*/*.jsonl"))
    return [p for p in found if "subagents" not in p.parts]


def test_a_kept_report_is_the_report_to_the_last_field(monkeypatch):
    """On every sample and real session: the report made and kept, then read back, equals `analyze`'s."""
    paths = sessions()
    assert len(paths) >= 4
    made = {}
    for p in paths:
        want = analyze(Session.load(p), Settings())
        first = kept_analyze(Session.load(p), Settings())
        assert same(first, want), p
        made[p] = want
    read_back = 0
    real_analyze = keptreport.analyze
    monkeypatch.setattr(keptreport, "analyze", lambda *a, **k: pytest.fail("analyzed again"))
    for p, want in made.items():
        s = Session.load(p)
        if report_key(s, Settings(), None) is None:
            monkeypatch.setattr(keptreport, "analyze", real_analyze)  # a fork: never kept
            assert same(kept_analyze(s, Settings()), want), p
            monkeypatch.setattr(keptreport, "analyze", lambda *a, **k: pytest.fail("analyzed again"))
            continue
        assert same(kept_analyze(s, Settings()), want), p
        read_back += 1
    assert read_back >= len(paths) - 2


def test_a_grown_session_is_explained_again(copy, monkeypatch):
    made = []
    real = keptreport.analyze
    monkeypatch.setattr(keptreport, "analyze", lambda *a, **k: made.append(1) or real(*a, **k))
    kept_analyze(Session.load(copy), Settings())
    kept_analyze(Session.load(copy), Settings())
    assert len(made) == 1  # made once, then read back
    with open(copy, "ab") as f:
        f.write(b'{"type":"user","uuid":"zz-1","parentUuid":null,"message":{"role":"user","content":"more"}}\n')
    got = kept_analyze(Session.load(copy), Settings())
    assert len(made) == 2 and same(got, real(Session.load(copy), Settings()))


def test_a_file_beside_the_session_changes_the_key(copy):
    """A summarizer's or a subagent's transcript added, or one that grew: the report reads them, so it is made again."""
    s = Session.load(copy)
    before = report_key(s, Settings(), None)
    assert before is not None
    folder = copy.with_suffix("") / "subagents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "agent-acompact-zz.jsonl").write_text("")
    after = report_key(Session.load(copy), Settings(), None)
    assert after is not None and after != before
    (folder / "agent-acompact-zz.jsonl").write_text("{}\n")
    assert report_key(Session.load(copy), Settings(), None) != after


def test_other_settings_a_what_if_or_other_code_change_the_key(copy, monkeypatch):
    s = Session.load(copy)
    base = report_key(s, Settings(), None)
    assert report_key(s, Settings(window=1_000_000), None) != base
    assert report_key(s, Settings(), Settings(window=1_000_000)) != base
    assert report_key(s, Settings(), Settings()) == base  # a baseline that is the settings is no what-if
    monkeypatch.setattr(keptreport, "_code_stamp", lambda: "another checkout")
    assert report_key(s, Settings(), None) != base


def test_a_fork_is_not_kept(copy):
    """A fork's first compactions are explained from the session it was forked from: another file, not in the key."""
    lines = copy.read_text().splitlines()
    for n, line in enumerate(lines):
        d = json.loads(line)
        if d.get("type") == "assistant":
            d["requestSessionId"] = "0000aaaa-0000-4000-8000-000000000000"  # (2.1.332 marks a fork's copied reply so)
            lines[n] = json.dumps(d)
            break
    copy.write_text("\n".join(lines) + "\n")
    s = Session.load(copy)
    assert any(r.extra and r.extra.get("fork_copy") for r in s.records)
    assert report_key(s, Settings(), None) is None


def test_a_damaged_kept_report_is_made_again(copy):
    from inspector.statefiles import state_file

    want = kept_analyze(Session.load(copy), Settings())
    key = report_key(Session.load(copy), Settings(), None)
    assert key is not None
    where = state_file("report", key["path"])
    data = json.loads(where.read_text())
    data["compactions"][0]["no_such_field"] = 1
    where.write_text(json.dumps(data))
    assert same(kept_analyze(Session.load(copy), Settings()), want)
    assert "no_such_field" not in where.read_text()  # written over
    assert os.path.getsize(where) > 0


def test_a_deleted_sessions_report_leaves_the_cache(copy, tmp_path):
    """A kept report holds what the session's summaries say: once the session is gone from disk, the next report
    written sweeps it out of the cache, as the stats cache sweeps a deleted session's row."""
    from inspector.statefiles import state_file

    kept_analyze(Session.load(copy), Settings())
    key = report_key(Session.load(copy), Settings(), None)
    where = state_file("report", key["path"])
    assert where.exists()
    other = tmp_path / "q" / copy.name
    other.parent.mkdir()
    shutil.copyfile(copy, other)
    copy.unlink()
    kept_analyze(Session.load(other), Settings())
    assert not where.exists()
    assert state_file("report", report_key(Session.load(other), Settings(), None)["path"]).exists()
