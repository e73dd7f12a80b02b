"""The responses cache of `inspector cost` (library/costcache.py): a run over a folder after the first reads again only
the transcripts that changed, and answers as a run that reads them all."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from builders import assistant, user
from helpers import REAL_PROJECTS, SAMPLES, requires_realdata, tree_hashes, write_jsonl
from helpers import run_cli as run

import inspector.library.cost as cost
from inspector.library.costcache import ResponsesCache
from inspector.statefiles import cache_dir
from inspector.transcript.discovery import resolve_target
from inspector.transcript.session import Session


def reply(uuid, parent, mid, rid=None, sec=1, usage=(10, 100, 1000, 50), **kw):
    return assistant(uuid, parent, None, sec=sec, mid=mid, usage=usage, requestId=rid or f"r{mid}", **kw)


def _spy_loads(monkeypatch) -> list[Path]:
    """The transcripts read from now on (in this process: the tests read without worker processes)."""
    loaded: list[Path] = []
    real = Session.load.__func__  # type: ignore[attr-defined]

    def spy(cls, path, **kw):
        loaded.append(Path(path))
        return real(cls, path, **kw)

    monkeypatch.setattr(Session, "load", classmethod(spy))
    return loaded


def _read(target, cache=None, workers=1):
    return list(cost.responses_oldest_first(resolve_target(target), workers=workers, cache=cache))


def _root(tmp_path: Path) -> Path:
    """A root of two projects: a session with a subagent folder, a session with a flat agent file beside it (1.x),
    a resumed session that copies a response, a session whose copied record names a subagent, and the samples."""
    root = tmp_path / "projects"
    p = root / "-p"
    write_jsonl(p / "A.jsonl", [user("u0", None, "go"), reply("a1", "u0", "m1")])
    write_jsonl(
        p / "A" / "subagents" / "agent-x1.jsonl",
        [user("x0", None, "look", isSidechain=True, agentId="x1"), reply("x1", "x0", "mx", isSidechain=True, agentId="x1")],
    )
    write_jsonl(p / "B.jsonl", [user("b0", None, "go", sessionId="B", sec=5), reply("b1", "b0", "m1", sec=6, sessionId="B")])
    fork = {"sessionId": "A", "messageUuid": "x"}
    write_jsonl(
        p / "C.jsonl",
        [
            user("c0", None, "go", sec=7, forkedFrom=fork),
            {
                **user("c2", "c0", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "done"}], sec=8),
                "toolUseResult": {"agentId": "x1", "status": "completed"},
                "forkedFrom": fork,
            },
            reply("c3", "c2", "m3", sec=9),
        ],
    )
    write_jsonl(p / "C" / "subagents" / "agent-x1.jsonl", [reply("y1", None, "my", isSidechain=True, agentId="x1")])
    q = root / "-q"
    write_jsonl(q / "D.jsonl", [user("d0", None, "go", sessionId="D", sec=10), reply("d1", "d0", "m4", sec=11, sessionId="D")])
    write_jsonl(
        q / "agent-f1.jsonl",
        [user("f0", None, "look", sessionId="D", isSidechain=True), reply("f1", "f0", "mf", sessionId="D", isSidechain=True)],
    )
    for s in SAMPLES.iterdir():
        if s.is_dir():
            shutil.copytree(s, root / f"samples{s.name}")
    return root


def test_a_cached_run_answers_as_one_that_reads_every_file_and_reads_none_again(tmp_path, monkeypatch):
    root = _root(tmp_path)
    before = tree_hashes(root)
    want = _read(root)
    assert sum(len(own) + len(subs) for _f, (own, subs) in want) > 10  # noqa: the fixtures have responses to price
    cache = ResponsesCache(cache_dir())
    assert _read(root, cache) == want
    cache.close()
    loaded = _spy_loads(monkeypatch)
    cache = ResponsesCache(cache_dir())
    assert _read(root, cache) == want and loaded == []  # nothing read again: every row kept
    assert cache.hits == len(want) and cache.misses == 0
    cache.close()
    assert tree_hashes(root) == before  # the transcripts are the user's: never written


def test_a_grown_session_is_read_again_but_not_its_unchanged_subagents(tmp_path, monkeypatch):
    root = _root(tmp_path)
    cache = ResponsesCache(cache_dir())
    _read(root, cache)
    cache.close()
    main, sub = root / "-p" / "A.jsonl", root / "-p" / "A" / "subagents" / "agent-x1.jsonl"
    with open(main, "a") as f:
        f.write(json.dumps(reply("a2", "a1", "m2", sec=3)) + "\n")
    loaded = _spy_loads(monkeypatch)
    cache = ResponsesCache(cache_dir())
    got = _read(root, cache)
    cache.close()
    assert loaded == [main]  # its subagent, unchanged, came from the cache
    assert got == _read(root)  # (and reading everything again answers the same)
    loaded.clear()
    with open(sub, "a") as f:  # the subagent grows: only it is read again
        f.write(json.dumps(reply("x2", "x1", "mx2", isSidechain=True, agentId="x1")) + "\n")
    cache = ResponsesCache(cache_dir())
    got = _read(root, cache)
    cache.close()
    assert loaded == [sub] and got == _read(root)
    assert any(r.key == "mx2:rmx2" for _f, (_own, subs) in got for r in subs)


def test_a_damaged_or_foreign_row_is_read_again(tmp_path):
    root = _root(tmp_path)
    want = _read(root)
    cache = ResponsesCache(cache_dir())
    _read(root, cache)
    cache.close()
    cache = ResponsesCache(cache_dir())
    db = cache._conn()
    rows = db.execute("SELECT path FROM responses").fetchall()
    assert len(rows) > 8
    db.execute("UPDATE responses SET value = x'7b7b' WHERE rowid % 2 = 0")  # not JSON
    db.execute("UPDATE responses SET key = replace(key, '\"session\"', '\"agent\"') WHERE rowid % 3 = 0")
    assert _read(root, cache) == want and cache.misses > 0
    cache.close()


def test_a_deleted_sessions_rows_leave_the_cache(tmp_path):
    root = _root(tmp_path)
    cache = ResponsesCache(cache_dir())
    _read(root, cache)
    cache.close()
    shutil.rmtree(root / "-p" / "A")
    (root / "-p" / "A.jsonl").unlink()
    cache = ResponsesCache(cache_dir())
    _read(root, cache)
    cache.close()
    cache = ResponsesCache(cache_dir())
    paths = [bytes(p) for (p,) in cache._conn().execute("SELECT path FROM responses")]
    cache.close()
    assert paths and not any(b"/-p/A" in p for p in paths)


def test_the_cost_command_keeps_and_reuses_the_rows(tmp_path, monkeypatch):
    """`cost --by day|model|block` answer the same with, without and from the cache (the pool of worker processes
    forced, as on a large root)."""
    root = _root(tmp_path)
    monkeypatch.setattr(cost, "POOL_FILES", 1)
    monkeypatch.setattr(cost, "POOL_BYTES", 0)
    for by in ("day", "model", "block"):
        plain = run("cost", "--by", by, "--json", "--no-cache", root)
        assert plain[0] == 0 and plain[1]
        assert run("cost", "--by", by, "--json", root) == plain  # kept
        assert run("cost", "--by", by, "--json", root) == plain  # read back
    cache = ResponsesCache(cache_dir())
    assert cache._conn().execute("SELECT count(*) FROM responses").fetchone()[0] >= 10
    cache.close()


def test_no_cache_writes_nothing(tmp_path):
    root = _root(tmp_path)
    assert run("cost", "--by", "day", "--no-cache", root)[0] == 0
    assert not (cache_dir() / "index.sqlite").exists()


def test_an_index_made_before_the_cost_cache_gets_its_table(tmp_path):
    """A database an earlier inspector made (no `responses` table) is used as it is: the table is added, the search
    index kept."""
    root = _root(tmp_path)
    cache = ResponsesCache(cache_dir())
    cache._conn().execute("DROP TABLE responses")
    cache.close()
    cache = ResponsesCache(cache_dir())
    assert _read(root, cache) == _read(root)
    cache.close()
    cache = ResponsesCache(cache_dir())
    assert cache._conn().execute("SELECT count(*) FROM responses").fetchone()[0] > 0
    cache.close()


@pytest.mark.realdata
@requires_realdata
def test_the_real_sessions_read_from_the_cache_are_those_read_whole(tmp_path):
    want = _read(REAL_PROJECTS, workers=2)
    cache = ResponsesCache(cache_dir())
    assert _read(REAL_PROJECTS, cache, workers=2) == want
    cache.close()
    cache = ResponsesCache(cache_dir())
    assert _read(REAL_PROJECTS, cache, workers=2) == want and cache.misses == 0
    cache.close()


def test_a_sessions_cost_reads_each_subagent_file_once_across_runs(tmp_path, monkeypatch):
    """`cost --by session|project` and the session screen's header price a session with its subagents: the subagent
    files' responses are kept (costcache.KeptMemo), so a later run reads only the files that changed."""
    from inspector.library.cost import session_cost
    from inspector.library.costcache import KeptMemo

    root = _root(tmp_path)
    main = root / "-p" / "A.jsonl"
    plain = session_cost(Session.load(main))
    memo = KeptMemo(ResponsesCache(cache_dir()))
    assert session_cost(Session.load(main), memo=memo) == plain
    memo.flush()
    memo.cache.close()
    loaded = _spy_loads(monkeypatch)
    memo = KeptMemo(ResponsesCache(cache_dir()))
    assert session_cost(Session.load(main), memo=memo) == plain
    assert loaded == [main]  # the session itself; its subagent from the cache
    memo.cache.close()
    sub = root / "-p" / "A" / "subagents" / "agent-x1.jsonl"
    with open(sub, "a") as f:
        f.write(json.dumps(reply("x2", "x1", "mx2", isSidechain=True, agentId="x1")) + "\n")
    loaded.clear()
    memo = KeptMemo(ResponsesCache(cache_dir()))
    grown = session_cost(Session.load(main), memo=memo)
    assert loaded == [main, sub] and grown["cost_subagents_usd"] > plain["cost_subagents_usd"]
    memo.flush()
    memo.cache.close()


def test_cost_by_session_answers_the_same_with_the_kept_subagents(tmp_path):
    root = _root(tmp_path)
    for by in ("session", "project"):
        plain = run("cost", "--by", by, "--json", "--no-cache", root)
        assert plain[0] == 0 and plain[1]
        assert run("cost", "--by", by, "--json", root) == plain
        assert run("cost", "--by", by, "--json", root) == plain
