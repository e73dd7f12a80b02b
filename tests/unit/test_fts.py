"""The search index (issue 17, first part): the same hits as the scan, kept up to date, never in the way."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from builders import assistant, user
from helpers import REAL_PROJECTS, SAMPLES, jsonl, requires_realdata, tree_hashes, write_jsonl
from helpers import run_cli as run

from inspector.library.cache import db_path
from inspector.library.fts import SearchIndex
from inspector.library.search import Query, search_file, search_target
from inspector.transcript.discovery import resolve_target

TERMS = [
    "error",
    "hourly",
    "Read",
    "the",
    "def ",
    "ok",
    '"',
    "TODO",
    "forecast crash",
    "zzqqxx",
    "é",
    "phoenix",
    "a",
    "100%",
    "tool_",
    "Zsh prompt",
]


def every(idx, sql):
    """The rows of a query over every shard of the texts ("{}" in it: the shard's schema)."""
    return [row for k in range(idx.shards) for row in idx.db.execute(sql.format(f"t{k}."))]


def held_texts(idx):
    """Every text the index holds, read back from its file as a lookup reads it (each row must still find its text)."""
    from inspector.library.shards import texts_at

    paths = dict(idx.db.execute("SELECT id, path FROM files"))
    by_file: dict[int, list] = {}
    for fid, *row in every(idx, "SELECT file_id, line, off, len, type, place, ts, k FROM {}docs ORDER BY id"):
        by_file.setdefault(fid, []).append(tuple(row))
    out = []
    for fid, rows in by_file.items():
        got = texts_at(os.fsdecode(paths[fid]), rows)
        assert len(got) == len(rows), f"rows of {paths[fid]!r} that no longer find their text"
        out += [text for *_, text in got]
    return out


def both(root, term, idx):
    t = resolve_target(root)
    scan = [(fh.path, [h.as_dict() for h in fh.hits]) for fh in search_target(t, Query(term))]
    indexed = [(fh.path, [h.as_dict() for h in fh.hits]) for fh in search_target(t, Query(term), index=idx)]
    return scan, indexed


def test_the_index_finds_what_the_scan_finds_on_the_samples(tmp_path):
    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    before = tree_hashes(root)
    idx = SearchIndex(tmp_path / "i.sqlite")
    for term in TERMS:
        scan, indexed = both(root, term, idx)
        assert scan == indexed, term
    assert idx.status().files > 0 and tree_hashes(root) == before


@pytest.mark.realdata  # reads ../shared/realdata: the realdata layer
@requires_realdata
def test_the_index_finds_what_the_scan_finds_on_real_sessions(tmp_path):
    idx = SearchIndex(tmp_path / "i.sqlite")
    for term in TERMS:
        scan, indexed = both(REAL_PROJECTS, term, idx)
        assert scan == indexed, term


def test_a_grown_file_is_read_from_where_it_stopped_and_a_replaced_one_again(tmp_path):
    p = write_jsonl(tmp_path / "p" / "s.jsonl", [user("u0", None, "first needle"), assistant("a1", "u0", sec=1)])
    idx = SearchIndex(tmp_path / "i.sqlite")
    assert [h.line for h in search_file(p, Query("needle"), index=idx)] == [1]
    with open(p, "ab") as f:  # a live session: one more line, and a last one still being written
        f.write(b'{"type":"user","uuid":"u2","parentUuid":"a1","message":{"role":"user","content":"second needle"}}\n')
        f.write(b'{"type":"user","uuid":"u3","parentUuid":"u2","message":{"role":"user","content":"third needle"}}')
    assert idx.update(p) == 1  # only the new complete line was read
    assert (
        [h.line for h in search_file(p, Query("needle"), index=idx)]
        == [1, 3, 4]
        == [h.line for h in search_file(p, Query("needle"))]
    )
    with open(p, "ab") as f:  # the last line ends: searched once, not twice
        f.write(b"\n")
    assert [h.line for h in search_file(p, Query("needle"), index=idx)] == [1, 3, 4]
    write_jsonl(p, [user("x0", None, "another file, another needle")])  # replaced (shorter): indexed again
    assert (
        [(h.line, h.snippet) for h in search_file(p, Query("needle"), index=idx)]
        == [(h.line, h.snippet) for h in search_file(p, Query("needle"))]
        == [(1, "another file, another needle")]
    )


def test_a_damaged_index_is_built_again_with_one_notice(tmp_path):
    path = tmp_path / "i.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    said = []
    idx = SearchIndex(path, notice=said.append)
    p = write_jsonl(tmp_path / "p" / "s.jsonl", [user("u0", None, "needle")])
    assert len(search_file(p, Query("needle"), index=idx)) == 1
    assert len(said) == 1 and "damaged" in said[0]


def test_an_index_of_another_schema_is_built_again(tmp_path):
    path = tmp_path / "i.sqlite"
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES('schema', '0');")
    db.close()
    said = []
    SearchIndex(path, notice=said.append)
    assert said and "another version" in said[0]


def test_search_uses_the_index_and_index_status_says_what_it_holds(tmp_path):
    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    code, out, err = run("search", "hourly", str(root), "--json")
    assert code == 0 and db_path().exists()
    code2, out2, _ = run("search", "hourly", str(root), "--json", "--no-index")
    assert jsonl(out) == jsonl(out2)
    code, out, err = run("index", "--status")
    assert code == 0 and "transcript(s)" in out
    code, out, err = run("index", str(root), "--rebuild")
    assert code == 0 and "Indexed" in out and "new line(s)" in out
    code, out, err = run("index", str(root))
    assert out.startswith("Indexed 0 new line(s)")  # nothing new: nothing read again
    gone = next(root.rglob("*.jsonl"))
    os.unlink(gone)
    code, out, err = run("index", str(root))
    assert "1 file(s) no longer on disk dropped" in out


def test_a_search_while_another_process_writes_the_index_is_never_blocked_for_long(tmp_path):
    """Another writer holds the index: the search waits its moment (2 s at most), then scans, with one notice."""
    import time

    p = write_jsonl(tmp_path / "p" / "s.jsonl", [user("u0", None, "needle here")])
    said = []
    idx = SearchIndex(tmp_path / "i.sqlite", notice=said.append)
    other = sqlite3.connect(tmp_path / "i.sqlite", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # a writer (the app, or another command) in the middle of its update
    try:
        t0 = time.perf_counter()
        hits = search_file(p, Query("needle"), index=idx)
        waited = time.perf_counter() - t0
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert [h.line for h in hits] == [1] and waited < 5
    assert said and "without the index" in said[0]
    assert [h.line for h in search_file(p, Query("needle"), index=idx)] == [1]  # and the next one uses it again


def test_search_by_project_and_since(tmp_path):
    import time

    root = tmp_path / "projects"
    write_jsonl(root / "-w-alpha" / "a.jsonl", [user("u0", None, "needle in alpha", cwd="/w/alpha", sec=0)])
    b = write_jsonl(
        root / "-w-beta" / "b.jsonl",
        [
            user("u0", None, "needle in beta", cwd="/srv/beta-service", sec=0),
            assistant("a1", "u0", [{"type": "text", "text": "a later needle"}], timestamp="2026-04-05T09:00:00.000Z"),
        ],
    )
    old = write_jsonl(root / "-w-gamma" / "c.jsonl", [user("u0", None, "needle in gamma", sec=0)])
    t = time.time() - 86400 * 400
    os.utime(old, (t, t))  # not written for a year: not read at all for a recent --since
    code, out, err = run("search", "needle", str(root), "--project", "BETA-serv", "--json")
    assert code == 0 and {os.path.basename(d["path"]) for d in jsonl(out)} == {"b.jsonl"}  # the cwd matched
    code, out, err = run("search", "needle", str(root), "--project", "alpha", "--json")
    assert {os.path.basename(d["path"]) for d in jsonl(out)} == {"a.jsonl"}  # the folder name matched
    ts = [d["timestamp"] for d in jsonl(run("search", "needle", str(b), "--json")[1])]
    day = max(ts)[:10]  # the day of the later reply, three days after the prompts
    later = [d for d in jsonl(run("search", "needle", str(root), "--since", day, "--json")[1])]
    assert [d["snippet"] for d in later] == ["a later needle"]
    assert all(
        os.path.basename(d["path"]) != "c.jsonl" for d in jsonl(run("search", "needle", str(root), "--since", "30d", "--json")[1])
    )
    code, out, err = run("search", "needle", str(root), "--since", "yesterday")
    assert code == 2 and "--since takes" in err


def _backdate(root, secs=60):
    """Every folder under root (and root) last changed `secs` ago: old enough for its listing to be kept."""
    import time

    when = time.time() - secs
    for d, _dirs, _files in os.walk(root):
        os.utime(d, (when, when))


def _listings_kept(tmp_path):
    """The samples' folders (last changed a minute ago) listed once through a new index, their listings kept: the
    index, the target and what the listing holds."""
    from inspector.library.search import list_transcripts

    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    _backdate(root)
    idx = SearchIndex(tmp_path / "i.sqlite")
    target = resolve_target(root)
    want = _old_listing(target)
    first = idx.listing()
    list_transcripts(target, scan=first)
    first.save()
    return idx, target, want


def _old_listing(target):
    """What the search listed before the index served listings: session_files, then subagent_files of each."""
    from inspector.transcript.discovery import session_files
    from inspector.transcript.session import subagent_files

    out, flat_seen = [], set()
    for path, agents in session_files(target):
        out.append((path, path))
        out.extend((a, path) for a in subagent_files(path))
        for a in agents:
            if a not in flat_seen:
                flat_seen.add(a)
                out.append((a, a))
    return out


def _with_orphans(target, listed):
    """The old listing and, since, the flat agent files of a project folder with no session transcript left."""
    from inspector.transcript.discovery import project_dirs, project_files

    projects = [target.path] if target.kind == "project" else project_dirs(target.path) if target.kind == "root" else []
    out = list(listed)
    for proj in projects:
        sessions, agents = project_files(proj)
        if not sessions:
            out.extend((a, a) for a in agents)
    return out


def test_listings_kept_in_the_index_list_what_the_folders_hold(tmp_path):
    from inspector.library.search import list_transcripts

    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    (root / "-evil").mkdir()
    (root / "-evil" / "s.jsonl").symlink_to(next(root.glob("*/*.jsonl")))  # a link: never listed
    _backdate(root)
    idx = SearchIndex(tmp_path / "i.sqlite")
    target = resolve_target(root)
    want = _old_listing(target)
    first = idx.listing()
    assert list_transcripts(target, scan=first)[0] == want and len(first.new) > 3  # kept: still for a minute
    first.save()
    served = SearchIndex(tmp_path / "i.sqlite").listing()  # another process
    assert list_transcripts(target, scan=served)[0] == want and served.new == []  # all from the database
    assert idx.listing() is first and list_transcripts(target, scan=first)[0] == want  # this one: from its memory
    proj = next(p for p in sorted(root.iterdir()) if p.name != "-evil")
    shutil.copy(next(proj.glob("*.jsonl")), proj / "zz-new.jsonl")  # the folder's time changes: listed again
    again = idx.listing()
    got = list_transcripts(target, scan=again)[0]
    assert got == _old_listing(target) and (proj / "zz-new.jsonl", proj / "zz-new.jsonl") in got
    assert [k for k, _m, _e in again.new] == []  # changed just now: not kept (a coarse clock may tick late)
    for term in ("error", "the"):
        scan, indexed = both(root, term, idx)
        assert scan == indexed, term


@pytest.mark.parametrize(
    "blob",
    [
        b'[["s.jsonl", 1], ["t',
        b'{"a": 1}',
        b'[["s.jsonl", 9]]',
        b"[[1, 2]]",
        b'[["x", true]]',
        b'["ab"]',
        b'[{"a": 1, "b": 2}]',
        b"[7]",
        b"xbad/ffine",
        b"",
        "text, not bytes",
    ],
)
def test_a_damaged_listing_entry_is_read_again_not_fatal(tmp_path, blob):
    """A truncated or ill-shaped listings blob (a page of the cache overwritten): the folder is listed again and the
    entry replaced; the search answers as the scan does (it raised JSONDecodeError or ValueError for good)."""
    from inspector.library.search import list_transcripts

    idx, target, want = _listings_kept(tmp_path)
    idx.db.execute("UPDATE listings SET entries=?", (blob,))
    idx.db.commit()
    assert list_transcripts(target, scan=idx.listing())[0] == want  # this process read them already
    again = SearchIndex(tmp_path / "i.sqlite").listing()  # the next process reads the damaged entry
    assert list_transcripts(target, scan=again)[0] == want
    assert again.new  # read again and kept anew
    scan, indexed = both(target.path, "error", idx)
    assert scan == indexed


@pytest.mark.realdata  # reads ../shared/realdata: the realdata layer
@requires_realdata
def test_the_listing_of_real_projects_is_the_old_one():
    from inspector.library.search import list_transcripts

    target = resolve_target(REAL_PROJECTS)
    assert list_transcripts(target)[0] == _with_orphans(target, _old_listing(target))


def test_dropped_rows_go_by_rowid_and_none_is_left_behind(tmp_path):
    """A tail read before its end, a file replaced, a file deleted: the texts table holds exactly what the files say."""
    p = write_jsonl(tmp_path / "p" / "s.jsonl", [user("u0", None, "first needle")])
    q = write_jsonl(tmp_path / "p" / "t.jsonl", [user("v0", None, "other needle")])
    idx = SearchIndex(tmp_path / "i.sqlite")

    def texts():
        return sorted(held_texts(idx))

    def spans_cover_all():
        n = sum(x for (x,) in every(idx, "SELECT coalesce(sum(hi - lo + 1), 0) FROM {}spans"))
        return n == sum(x for (x,) in every(idx, "SELECT count(*) FROM {}docs"))

    idx.update(q)
    with open(p, "ab") as f:
        f.write(b'{"type":"user","uuid":"u1","parentUuid":"u0","message":{"role":"user","content":"half a needle"}}')
    idx.update(p)
    assert texts() == ["first needle", "half a needle", "other needle"] and spans_cover_all()
    with open(p, "ab") as f:
        f.write(b'\n{"type":"user","uuid":"u2","parentUuid":"u1","message":{"role":"user","content":"whole"}}\n')
    idx.update(p)  # the tail's rows replaced by the finished line's, once
    assert texts() == ["first needle", "half a needle", "other needle", "whole"] and spans_cover_all()
    write_jsonl(p, [user("x0", None, "replaced")])
    idx.update(p)
    assert texts() == ["other needle", "replaced"] and spans_cover_all()
    q.unlink()
    idx.update(q)
    assert texts() == ["replaced"] and spans_cover_all()


def test_many_files_read_in_worker_processes_index_what_one_process_does(tmp_path, monkeypatch):
    import inspector.library.fts as fts
    from inspector.library.search import list_transcripts

    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    files, with_results = list_transcripts(resolve_target(root))
    one = SearchIndex(tmp_path / "one.sqlite")
    one.refresh([f for f, _ in files], with_results, workers=1)
    monkeypatch.setattr(fts, "POOL_MIN", 0)  # the samples are small: use the workers anyway
    many = SearchIndex(tmp_path / "many.sqlite")
    assert (
        many.refresh([f for f, _ in files], with_results, workers=2)
        == one.refresh([], [])
        + sum(n for (n,) in one.db.execute("SELECT lines FROM files WHERE owner IS NULL"))
        + one.status().persisted
    )

    def rows(idx):
        ids = dict(idx.db.execute("SELECT id, path FROM files"))
        return sorted((ids[f], *rest) for f, *rest in every(idx, "SELECT file_id, line, off, len, type, place, k FROM {}docs"))

    assert rows(many) == rows(one) and many.status().files == len(files) > 4
    assert sorted(held_texts(many)) == sorted(held_texts(one))
    for term in ("error", "the", "Read"):
        scan, indexed = both(root, term, many)
        assert scan == indexed, term


def test_a_file_another_process_indexed_meanwhile_is_not_indexed_twice(tmp_path):
    """Two processes bring the same file up to date at once (the app and `inspector index`): the one that comes
    second writes nothing, and no text is held twice."""
    p = write_jsonl(tmp_path / "p" / "s.jsonl", [user("u0", None, "first needle"), assistant("a1", "u0", sec=1)])
    a = SearchIndex(tmp_path / "i.sqlite")
    b = SearchIndex(tmp_path / "i.sqlite")
    plan = a._plan(p)  # a looks and plans (a new file) ...
    assert b.update(p) == 2  # ... b indexes it meanwhile ...
    from inspector.library.shards import read_texts

    assert a._apply(plan, read_texts(str(p), plan.start, plan.lines)) == 0  # ... a writes nothing
    assert held_texts(a).count("first needle") == 1
    with open(p, "ab") as f:
        f.write(b'{"type":"user","uuid":"u2","parentUuid":"a1","message":{"role":"user","content":"second needle"}}\n')
    plan = a._plan(p)
    assert b.update(p) == 1
    assert a._apply(plan, read_texts(str(p), plan.start, plan.lines)) == 0
    assert [h.line for h in search_file(p, Query("needle"), index=a)] == [1, 3]


def test_a_search_with_a_budget_indexes_a_part_and_reads_the_rest_with_the_same_results(tmp_path):
    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    t = resolve_target(root)
    idx = SearchIndex(tmp_path / "i.sqlite")
    sizes = sorted(p.stat().st_size for p, _ in transcripts_of(t))
    budget = sizes[-2] + 1  # a few of the samples at a time; the largest one never (it is left for `index`)
    said: list[str] = []
    idx.notice = said.append
    rounds = 0
    while True:
        term = ("hourly", "error", "Read")[rounds % 3]
        scan = [(fh.path, [h.as_dict() for h in fh.hits]) for fh in search_target(t, Query(term))]
        indexed = [(fh.path, [h.as_dict() for h in fh.hits]) for fh in search_target(t, Query(term), index=idx, budget=budget)]
        assert scan == indexed, term
        rounds += 1
        assert said and said[-1].endswith("not in the search index yet, read instead")
        if len(idx.stale) == 1 and not idx.stale_sessions:
            break
        assert rounds < 100
    assert rounds >= 2  # it took several searches: each indexed a part
    biggest = max((p for p, _ in transcripts_of(t)), key=lambda p: p.stat().st_size)
    assert idx.stale == {str(biggest)} and idx.status().files == len(transcripts_of(t)) - 1


def transcripts_of(target):
    from inspector.library.search import list_transcripts

    return list_transcripts(target)[0]


def test_refresh_stops_when_asked_and_keeps_what_it_did(tmp_path):
    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    files = [p for p, _ in transcripts_of(resolve_target(root))]
    idx = SearchIndex(tmp_path / "i.sqlite")
    asked = iter([False, False, True])
    idx.refresh(files, [], workers=1, stop=lambda: next(asked, True))
    assert idx.status().files == 2  # two files done, then it stopped
    idx.refresh(files, [], workers=1)
    assert idx.status().files == len(files)


def test_the_flat_agent_files_of_a_project_with_no_session_left_are_searched(tmp_path):
    proj = tmp_path / "projects" / "-w"
    write_jsonl(proj / "agent-a1.jsonl", [user("x0", None, "orphan needle")])  # its session's transcript is gone
    for no_index in ([], ["--no-index"]):
        code, out, err = run("search", "orphan needle", str(tmp_path / "projects"), "--json", *no_index)
        assert code == 0 and [h["path"] for h in jsonl(out)] == [str(proj / "agent-a1.jsonl")]


def test_a_lost_shard_means_the_index_is_built_again_with_one_notice(tmp_path):
    from inspector.library.cache import shard_path

    p = write_jsonl(tmp_path / "p" / "s.jsonl", [user("u0", None, "a needle")])
    idx = SearchIndex(tmp_path / "i.sqlite")
    idx.update(p)
    assert idx.shards >= 1 and idx.status().files == 1
    idx.close()
    for suffix in ("", "-wal", "-shm"):  # the texts of file 1 went with their shard
        try:
            os.unlink(str(shard_path(tmp_path / "i.sqlite", 1 % idx.shards)) + suffix)
        except FileNotFoundError:
            pass
    said: list[str] = []
    again = SearchIndex(tmp_path / "i.sqlite", notice=said.append)
    assert said == [f"the search index {tmp_path / 'i.sqlite'} was incomplete: built again"]
    assert again.status().files == 0
    assert [h.line for h in search_file(p, Query("needle"), index=again)] == [1]


@pytest.mark.parametrize(
    "damage, said_it",
    [
        ("DELETE FROM docs WHERE id % 2 = 0", "holds 20 texts and indexes 40 where its spans say 40"),
        ("DELETE FROM texts_docsize WHERE id % 2 = 0", "holds 40 texts and indexes 20 where its spans say 40"),
    ],
)
def test_a_shard_that_lost_texts_the_main_database_counts_is_built_again_not_trusted(tmp_path, damage, said_it):
    """Half a shard's texts (their places, or their index) gone while its spans (and the main database) still count
    them: a search returned half the hits and said nothing. The shard's rows are checked against its spans at
    opening."""
    import sqlite3

    from inspector.library.cache import shard_path

    p = write_jsonl(tmp_path / "p" / "s.jsonl", [user(f"u{k}", f"u{k - 1}" if k else None, f"needle {k}") for k in range(40)])
    idx = SearchIndex(tmp_path / "i.sqlite")
    idx.update(p)
    assert len(search_file(p, Query("needle"), index=idx)) == 40
    idx.close()
    shard = sqlite3.connect(shard_path(tmp_path / "i.sqlite", 1 % idx.shards))
    shard.execute(damage)
    shard.commit()
    shard.close()
    said: list[str] = []
    again = SearchIndex(tmp_path / "i.sqlite", notice=said.append)
    assert len(said) == 1 and said_it in said[0] and "built again" in said[0]
    assert len(search_file(p, Query("needle"), index=again)) == 40


def test_while_another_process_writes_the_index_a_search_reads_what_changed(tmp_path):
    """One process writes the index at a time (a lock): another one's search looks up what is indexed and reads the
    files that changed since, with the same results; its own index writes nothing meanwhile."""
    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    t = resolve_target(root)
    writer = SearchIndex(tmp_path / "i.sqlite")
    files = [p for p, _ in transcripts_of(t)]
    writer.refresh(files[: len(files) // 2], [])  # half indexed
    reader = SearchIndex(tmp_path / "i.sqlite")
    before = reader.status()
    with writer.writer():  # the other process is writing now
        for term in ("hourly", "error"):
            scan = [(fh.path, [h.as_dict() for h in fh.hits]) for fh in search_target(t, Query(term))]
            indexed = [(fh.path, [h.as_dict() for h in fh.hits]) for fh in search_target(t, Query(term), index=reader)]
            assert scan == indexed, term
            assert reader.stale  # what it could not index, it read
        assert [h.line for h in search_file(files[-1], Query("the"), index=reader)] == [
            h.line for h in search_file(files[-1], Query("the"))
        ]
        assert reader.status().files == before.files  # it wrote nothing
        assert reader.busy and reader.behind().endswith("another inspector is writing the index now, read instead")
    reader.refresh(files, [])
    assert reader.status().files == len(files) and not reader.stale


def test_an_index_whose_shard_count_is_damaged_is_built_again(tmp_path):
    p = write_jsonl(tmp_path / "p" / "s.jsonl", [user("u0", None, "a needle")])
    idx = SearchIndex(tmp_path / "i.sqlite")
    idx.update(p)
    idx.db.execute("UPDATE meta SET value='lots' WHERE key='shards'")
    idx.close()
    said: list[str] = []
    again = SearchIndex(tmp_path / "i.sqlite", notice=said.append)
    assert len(said) == 1 and "damaged" in said[0] and "shards" in said[0]
    assert [h.line for h in search_file(p, Query("needle"), index=again)] == [1]


def test_a_build_tells_how_far_it_is(tmp_path, monkeypatch):
    import inspector.library.fts as fts
    from inspector.library.search import list_transcripts

    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    t = resolve_target(root)
    files, with_results = (
        [p for p, _ in transcripts_of(t)],
        list_transcripts(t)[1],
    )
    for pool_min in (1 << 62, 0):  # in this process, then in the shards' processes
        monkeypatch.setattr(fts, "POOL_MIN", pool_min)
        idx = SearchIndex(tmp_path / f"i{pool_min}.sqlite")
        told: list[tuple[str, int, int]] = []
        idx.progress = lambda *a: told.append(a)
        idx.refresh(files, with_results, workers=2)
        # the transcripts and the persisted outputs are read in one run (one pool of workers), told as files
        every_file = len(files) + idx.status().persisted
        assert idx.status().persisted > 0 and {x[0] for x in told} == {"files"}
        assert told[-1] == ("files", every_file, every_file)
        assert [d for _, d, _ in told] == sorted(d for _, d, _ in told)


def test_without_worker_processes_the_index_is_built_in_one(tmp_path, monkeypatch):
    import concurrent.futures

    import inspector.library.fts as fts

    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    t = resolve_target(root)
    monkeypatch.setattr(fts, "POOL_MIN", 0)

    def broken(*a, **k):
        raise OSError("no semaphores here")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", broken)
    said: list[str] = []
    idx = SearchIndex(tmp_path / "i.sqlite", notice=said.append)
    from inspector.library.search import list_transcripts

    files, with_results = list_transcripts(t)
    idx.refresh([f for f, _ in files], with_results, workers=2)
    assert said and all(m == "indexing in one process: no semaphores here" for m in said)
    assert idx.status().files == len(files) and idx.status().persisted > 0
    scan, indexed = both(root, "hourly", idx)
    assert scan == indexed


def test_two_processes_opening_a_new_index_at_once_build_it_once(tmp_path):
    """Made under the writer lock and checked again once it is held: none deletes what the other made."""
    import subprocess
    import sys

    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from inspector.library.fts import SearchIndex; "
        "from pathlib import Path; said = []; i = SearchIndex(Path(sys.argv[2]), notice=said.append); "
        "print(i.shards, said)"
    )
    from helpers import ROOT

    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(ROOT), str(tmp_path / "i.sqlite")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    outs = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    said = [o.strip().split(" ", 1)[1] for o, _ in outs]
    # nothing was built twice or discarded: no notice, or (a loaded machine) only that one waited for the other
    assert all(s == "[]" or s == "['waiting for another inspector to finish writing the search index…']" for s in said), outs
    p = write_jsonl(tmp_path / "p" / "s.jsonl", [user("u0", None, "a needle")])
    assert [h.line for h in search_file(p, Query("needle"), index=SearchIndex(tmp_path / "i.sqlite"))] == [1]


def test_a_database_locked_at_once_while_turned_to_wal_is_tried_again(tmp_path, monkeypatch):
    """Two processes turning a new file to WAL at once: SQLite answers one "locked" without waiting (they would
    deadlock). The index opens once the other has turned it, instead of giving up on the index."""
    import inspector.library.fts as fts

    real = fts.pragmas
    calls = []

    def racing(db, schema=""):
        calls.append(schema)
        if len(calls) <= 2:
            raise sqlite3.OperationalError("database is locked")
        real(db, schema)

    monkeypatch.setattr(fts, "pragmas", racing)
    idx = SearchIndex(tmp_path / "i.sqlite")
    assert idx.shards >= 1 and len(calls) > 2
    p = write_jsonl(tmp_path / "p" / "s.jsonl", [user("u0", None, "a needle")])
    assert [h.line for h in search_file(p, Query("needle"), index=idx)] == [1]


def test_leftover_shards_of_a_deleted_index_are_not_in_the_way(tmp_path):
    from inspector.library.cache import shard_path

    p = write_jsonl(tmp_path / "p" / "s.jsonl", [user("u0", None, "a needle")])
    idx = SearchIndex(tmp_path / "i.sqlite")
    idx.update(p)
    idx.close()
    os.unlink(tmp_path / "i.sqlite")  # the main database deleted by hand, its shards left
    assert shard_path(tmp_path / "i.sqlite", 0).exists()
    said: list[str] = []
    again = SearchIndex(tmp_path / "i.sqlite", notice=said.append)
    assert said == [] and again.status().files == 0
    assert [h.line for h in search_file(p, Query("needle"), index=again)] == [1]


def test_a_deleted_session_leaves_the_index_and_the_stats_at_the_next_search(tmp_path):
    """The index never holds more than the transcripts do: a session deleted (by hand, or by Claude Code's cleanup)
    takes its texts, its persisted outputs' and its stats row out of the database at the next search or `stats` of
    its folder, not only at the next `inspector index`; a session that is only filtered out stays."""
    root = tmp_path / "projects"
    proj = root / "-home-u-p"
    keep = write_jsonl(proj / "keep.jsonl", [user("u0", None, "ordinary words")])
    gone = write_jsonl(proj / "gone.jsonl", [user("g0", None, "my zq9secret token")])
    out_dir = proj / "gone" / "tool-results"
    out_dir.mkdir(parents=True)
    (out_dir / "toolu_1.txt").write_text("persisted zq9secret output")
    agent = write_jsonl(proj / "gone" / "subagents" / "agent-a1.jsonl", [user("s0", None, "agent zq9secret")])
    code, out, _ = run("search", "zq9secret", str(root))
    assert code == 0 and "3 match(es)" in out
    code, _, _ = run("stats", str(root))
    assert code == 0

    def held() -> tuple[int, int, list[bytes]]:
        idx = SearchIndex(db_path())
        try:
            texts = sum(1 for t in held_texts(idx) if "zq9secret" in t)
            files = sum(1 for (p,) in idx.db.execute("SELECT path FROM files") if b"gone" in p)
            stats = [p for (p,) in idx.db.execute("SELECT path FROM stats")]
            return texts, files, stats
        finally:
            idx.close()

    texts, files, stats = held()
    assert texts == 3 and files == 3 and len(stats) == 2
    shutil.rmtree(proj / "gone")
    gone.unlink()
    code, out, _ = run("search", "zq9secret", str(root), "--project", "nothing-matches")  # filtered: still swept
    assert code == 1
    code, _, _ = run("stats", str(root))
    texts, files, stats = held()
    assert (texts, files) == (0, 0) and stats == [os.fsencode(keep)]
    assert keep.exists() and not agent.exists()


def test_a_deleted_sessions_text_is_not_left_in_the_databases_free_pages(tmp_path):
    """Deleted rows are overwritten (SQLite's secure_delete), not only unlinked: once a deleted session has left the
    index, its text is in no byte of the cache folder's files (databases and their journals)."""
    root = tmp_path / "projects"
    proj = root / "-home-u-p"
    for n in range(4):  # sessions that stay, in every shard: the deleted rows share their pages
        write_jsonl(proj / f"keep{n}.jsonl", [user(f"u{n}-{k}", None, f"ordinary words {n} {k} " * 8) for k in range(60)])
    secret = "zq9-" + "Sekrit-Passphrase-" * 10
    gone = write_jsonl(proj / "gone.jsonl", [user("g0", None, secret), assistant("a1", "g0", sec=1)])
    code, _, _ = run("search", "Sekrit", str(root))
    assert code == 0

    def leaked() -> list[str]:
        needle = secret[:64].encode()
        return [p.name for p in db_path().parent.iterdir() if p.is_file() and needle in p.read_bytes()]

    idx = SearchIndex(db_path())
    idx.scrub()  # its pages in the databases themselves, as after any checkpoint (SQLite makes one every 1,000 pages)
    idx.close()
    assert leaked() == []  # the search index keeps no copy of a text: it reads the transcript again
    code, _, _ = run("stats", str(root))
    idx = SearchIndex(db_path())
    idx.scrub()
    idx.close()
    assert code == 0 and leaked()  # the stats cache names a session by its first prompt while it is there
    gone.unlink()
    code, _, _ = run("search", "Sekrit", str(root))
    assert code == 1
    code, _, _ = run("stats", str(root))  # (the stats rows of a gone session leave at the next stats of its folder)
    assert code == 0 and leaked() == []


def test_waiting_for_the_writer_lock_is_said_only_when_it_lasts(tmp_path, monkeypatch):
    """Another process holding the writer lock for a moment is waited for quietly; for longer, once, with a notice."""
    import fcntl
    import threading

    import inspector.library.fts as fts

    monkeypatch.setattr(fts, "LOCK_QUIET", 0.3)
    said: list[str] = []
    idx = SearchIndex(tmp_path / "i.sqlite", notice=said.append)
    for hold, expected in ((0.1, []), (0.8, ["waiting for another inspector to finish writing the search index…"])):
        other = os.open(tmp_path / "i.lock", os.O_RDWR)  # another open file: a lock of its own, as another process
        fcntl.flock(other, fcntl.LOCK_EX)
        threading.Timer(hold, lambda fd=other: os.close(fd)).start()  # closing it releases the lock
        with idx.writer(wait=True):
            pass
        assert said == expected, (hold, said)
        said.clear()


def test_a_reader_in_the_middle_of_a_read_does_not_hold_a_search_that_sweeps(tmp_path):
    """Emptying the journals after a deleted session left waits for another process's read a moment only: the
    search goes on (its journal is emptied by a later one)."""
    import time

    root = tmp_path / "projects"
    proj = root / "-home-u-p"
    write_jsonl(proj / "keep.jsonl", [user("u0", None, "needle kept")])
    gone = write_jsonl(proj / "gone.jsonl", [user("g0", None, "needle gone")])
    idx = SearchIndex(tmp_path / "i.sqlite")
    t = resolve_target(root)
    assert sum(len(fh.hits) for fh in search_target(t, Query("needle"), index=idx)) == 2
    reader = sqlite3.connect(tmp_path / "i.sqlite", isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM files").fetchone()  # a read snapshot held, as a search in another process
    try:
        gone.unlink()
        t0 = time.perf_counter()
        hits = [h for fh in search_target(t, Query("needle"), index=idx) for h in fh.hits]
        took = time.perf_counter() - t0
    finally:
        reader.execute("COMMIT")
        reader.close()
    assert [h.snippet for h in hits] == ["needle kept"] and took < 1.5, took
    assert not [p for (p,) in idx.db.execute("SELECT path FROM files") if p.endswith(b"gone.jsonl")]


def _overwrite_pages(path, first_page=10, pages=4, page=4096):
    import random

    rnd = random.Random(first_page)
    with open(path, "r+b") as f:
        size = f.seek(0, 2)
        for k in range(first_page, first_page + pages):
            if k * page < size:
                f.seek(k * page)
                f.write(bytes(rnd.randrange(256) for _ in range(page)))


@pytest.mark.parametrize("which, first_page", [("main", 2), ("main", 10), ("shard", 2), ("shard", 10), ("shard", 20)])
def test_pages_of_the_index_overwritten_rebuild_it_with_one_notice(tmp_path, which, first_page):
    """A few pages of index.sqlite or of a shard overwritten: a search answers as the scan does and the index is built
    again (it scanned for good, saying 'database disk image is malformed'); `index` and `index --status` exit 0."""
    from inspector.library.cache import shard_path

    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    assert run("index", str(root))[0] == 0
    want = jsonl(run("search", "hourly", str(root), "--json", "--no-index")[1])
    damaged = db_path() if which == "main" else shard_path(db_path(), 0)
    _overwrite_pages(damaged, first_page)
    code, out, err = run("search", "hourly", str(root), "--json")
    assert code == 0 and jsonl(out) == want, err
    code, out, err2 = run("search", "hourly", str(root), "--json")
    assert code == 0 and jsonl(out) == want
    assert "searching without the index" not in err2, (err, err2)  # built again, not scanned around for good
    _overwrite_pages(damaged, first_page)
    code, out, err = run("index", str(root))
    assert code == 0 and "Indexed" in out, err
    _overwrite_pages(damaged, first_page)
    code, out, err = run("index", "--status")
    assert code == 0 and "transcript(s)" in out, err


def test_index_waits_out_a_locked_database_and_takes_the_work_up_again(tmp_path, monkeypatch):
    """'database is locked' while `inspector index` runs (its shard processes, a checkpoint, a reader on a loaded
    machine): waited for and tried again, the command ends well (it died with 'unexpected error: OperationalError')."""
    import inspector.cli.index as cli
    from inspector.library.fts import SearchIndex as SI

    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    real = SI.refresh
    calls = []

    def flaky(self, *a, **kw):
        calls.append(1)
        if len(calls) <= 2:
            raise sqlite3.OperationalError("database is locked")
        return real(self, *a, **kw)

    monkeypatch.setattr(SI, "refresh", flaky)
    monkeypatch.setattr(cli, "INDEX_LOCK_WAITS", (0.01, 0.01, 0.01))
    code, out, err = run("index", str(root))
    assert code == 0 and "Indexed" in out and len(calls) == 3
    assert err.count("trying again") == 2 and "unexpected" not in err
    monkeypatch.setattr(
        SI, "refresh", lambda self, *a, **kw: (_ for _ in ()).throw(sqlite3.OperationalError("database is locked"))
    )
    code, out, err = run("index", str(root))  # locked for good: one clear line, not a traceback
    assert code != 0 and "stayed locked" in err and "unexpected" not in err


def test_a_search_on_a_nearly_full_disk_reads_instead_of_indexing(tmp_path, monkeypatch):
    """A search on a nearly full disk filled it to 100% with its write-ahead log and left it so: below the margin it
    reads the files, writes nothing, and says why."""
    import inspector.library.fts as fts

    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    monkeypatch.setenv("INSPECTOR_NO_INDEX", "1")
    scan = run("search", "forecast", str(root), "--json")[1]
    monkeypatch.delenv("INSPECTOR_NO_INDEX")
    monkeypatch.setattr(fts, "free_bytes", lambda folder: 3 << 20)
    code, out, err = run("search", "forecast", str(root), "--json")
    assert code == 0 and out == scan
    assert "too little to index them, read instead" in err and "inspector index` adds the rest" not in err
    idx = SearchIndex(db_path())
    assert idx.status().texts == 0  # nothing written
    idx.close()


def test_index_on_a_disk_without_room_writes_nothing_and_says_so(tmp_path, monkeypatch):
    import inspector.library.fts as fts

    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    monkeypatch.setattr(fts, "free_bytes", lambda folder: 3 << 20)
    code, out, err = run("index", str(root))
    assert code == 2 and err.count("\n") == 1 and "too little for the" in err and "nothing was written" in err
    assert "unexpected" not in err


def test_a_disk_that_fills_while_indexing_gets_its_room_back(tmp_path):
    """'database or disk is full' midway (here a page limit on the shard): the write is undone and the logs cut
    back, the command ends in one line, what was indexed before stays, and the next search finds everything."""
    from inspector.library.cache import WAL_LIMIT, is_full, shard_path

    a = write_jsonl(tmp_path / "p" / "a.jsonl", [user("u0", None, "first needle")])
    big = write_jsonl(
        tmp_path / "p" / "b.jsonl", [user(f"b{k}", f"b{k - 1}" if k else None, f"needle {k} " + "x" * 3000) for k in range(300)]
    )
    idx = SearchIndex(tmp_path / "i.sqlite")
    idx.refresh([a])
    pages = [idx.db.execute(f"PRAGMA t{k}.page_count").fetchone()[0] for k in range(idx.shards)]
    for k in range(idx.shards):
        idx.db.execute(f"PRAGMA t{k}.max_page_count={pages[k] + 3}")
    with pytest.raises(sqlite3.OperationalError) as caught:
        idx.refresh([a, big])
    assert is_full(caught.value)
    assert idx.give_back() == "what it held before is kept"
    for k in range(idx.shards):
        wal = str(shard_path(tmp_path / "i.sqlite", k)) + "-wal"
        assert not os.path.exists(wal) or os.path.getsize(wal) <= WAL_LIMIT
    assert [h.line for h in search_file(a, Query("needle"), index=idx)] == [1]
    idx.close()
    again = SearchIndex(tmp_path / "i.sqlite")
    assert len(search_file(big, Query("needle"), index=again)) == 300


def _damage(rng, cache):
    """One random harm to the index's files: pages of a database overwritten, a write-ahead log cut short, a table
    dropped, a listings blob replaced by junk."""
    files = sorted(p for p in cache.iterdir() if p.suffix == ".sqlite")
    what = rng.choice(["pages", "wal", "table", "listing", "truncate"])
    target = rng.choice(files)
    if what == "pages":
        size = target.stat().st_size
        with open(target, "r+b") as f:
            for _ in range(rng.randint(1, 4)):
                f.seek(rng.randrange(max(1, size // 4096)) * 4096)
                f.write(bytes(rng.randrange(256) for _ in range(4096)))
    elif what == "truncate":
        with open(target, "r+b") as f:
            f.truncate(rng.randrange(target.stat().st_size))
    elif what == "wal":
        wal = Path(str(target) + "-wal")
        if wal.exists():
            with open(wal, "r+b") as f:
                f.truncate(rng.randrange(wal.stat().st_size + 1))
    else:
        db = sqlite3.connect(target)
        try:
            if what == "listing" and target.name == "index.sqlite":
                db.execute("UPDATE listings SET entries=?", (rng.choice([b"\x00\xff", b"[1,", b'{"a":1}', b"[[1,2,3]]"]),))
            else:
                names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
                if names:
                    db.execute(f"DROP TABLE {rng.choice(names)}")
            db.commit()
        except sqlite3.Error:
            pass
        finally:
            db.close()
    return what


@pytest.mark.parametrize("seed", range(int(os.environ.get("INSPECTOR_CACHE_FUZZ", "12"))))
def test_a_cache_damaged_at_random_costs_no_search_and_heals(tmp_path, seed):
    """Random harm to the cache (pages, a short write-ahead log or file, a dropped table, a junk listing): every
    search answers as the scan does, `index` and `index --status` exit 0, and the search after says nothing of it."""
    import random

    from inspector.statefiles import cache_dir

    rng = random.Random(seed)
    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    want = jsonl(run("search", "hourly", str(root), "--json", "--no-index")[1])
    assert run("index", str(root))[0] == 0
    for _ in range(3):
        what = _damage(rng, cache_dir())
        code, out, err = run("search", "hourly", str(root), "--json")
        assert code == 0 and jsonl(out) == want and "unexpected" not in err, (what, err)
        for argv in (("index", str(root)), ("index", "--status")):
            code, out, err = run(*argv)
            assert code == 0 and "unexpected" not in err, (what, argv, err)
    code, out, err = run("search", "hourly", str(root), "--json")
    assert code == 0 and jsonl(out) == want and err == "", err


def test_an_io_error_while_another_process_makes_the_index_does_not_discard_it(tmp_path, monkeypatch):
    """A process that had the new index open while another made it (removing the leftovers) read 'disk I/O error'
    and, without looking again, deleted the index the other had just built (1 run in 10 of the 4-process test)."""
    from inspector.library.fts import SearchIndex

    path = tmp_path / "i.sqlite"
    SearchIndex(path).close()  # made, whole
    made = {p.name: p.stat().st_ino for p in tmp_path.iterdir() if p.suffix == ".sqlite"}
    real = SearchIndex._attached
    calls = []

    def io_error_once(self, db):
        calls.append(1)
        if len(calls) == 1:
            raise sqlite3.OperationalError("disk I/O error")
        return real(self, db)

    monkeypatch.setattr(SearchIndex, "_attached", io_error_once)
    said: list[str] = []
    SearchIndex(path, notice=said.append).close()
    assert said == [] and len(calls) >= 2
    assert {p.name: p.stat().st_ino for p in tmp_path.iterdir() if p.suffix == ".sqlite"} == made  # nothing rebuilt


def test_a_shard_mostly_of_dropped_texts_is_built_again_and_searches_as_before(tmp_path, monkeypatch):
    """The index keeps no texts, so it cannot forget one: a dropped text's rowid stays in it with no place (never a
    candidate). Once most of a shard is such (files replaced, sessions deleted), the next pass empties it and reads
    its files again, and every search answers as the scan does throughout."""
    import inspector.library.fts as fts

    monkeypatch.setattr(fts, "REBUILD_DEAD", 20)
    root = tmp_path / "projects"
    p = write_jsonl(root / "-p" / "s.jsonl", [user(f"u{k}", f"u{k - 1}" if k else None, f"old needle {k}") for k in range(12)])
    idx = SearchIndex(tmp_path / "i.sqlite")
    assert len(search_file(p, Query("needle"), index=idx)) == 12
    shard = f"t{idx.db.execute('SELECT id FROM files').fetchone()[0] % idx.shards}."

    def state():
        dead = idx.db.execute(f"SELECT dead FROM {shard}wordstate").fetchone()[0]
        indexed = idx.db.execute(f"SELECT count(*) FROM {shard}texts_docsize").fetchone()[0]
        return dead, indexed

    write_jsonl(p, [user("n0", None, "new needle"), user("n1", "n0", "another needle")])  # replaced: 12 dropped
    assert [h.snippet for h in search_file(p, Query("needle"), index=idx)] == ["new needle", "another needle"]
    assert state() == (12, 14)  # the 12 old rowids stay in the index, with no place
    assert [h.snippet for h in search_file(p, Query("old"), index=idx)] == []
    monkeypatch.setattr(fts, "REBUILD_DEAD", 5)
    with open(p, "ab") as f:  # the next pass finds most of the shard dead: it is emptied and read again
        f.write(b'{"type":"user","uuid":"n2","parentUuid":"n1","message":{"role":"user","content":"third needle"}}\n')
    assert [h.snippet for h in search_file(p, Query("needle"), index=idx)] == ["new needle", "another needle", "third needle"]
    assert state() == (0, 3)
    scan, indexed = both(root, "needle", idx)
    assert scan == indexed and len(indexed[0][1]) == 3


def _shard_batch(tmp_path, n):
    """A shard's database and a batch of `n` small transcripts, each with a word of its own."""
    from inspector.library.shards import shard_schema

    db_file = tmp_path / "shard.sqlite"
    db = sqlite3.connect(db_file, isolation_level=None)
    db.executescript(shard_schema(""))
    items = []
    for k in range(n):
        p = write_jsonl(tmp_path / f"s{k}.jsonl", [user(f"u{k}", None, f"look at zqword{k} and the forecast")])
        items.append((k + 1, str(p), 0, 0, -1, "t"))
    return db, items


def _words_found(db, n):
    return [k for k in range(n) if db.execute("SELECT count(*) FROM texts WHERE texts MATCH ?", (f"zqword{k}",)).fetchone()[0]]


def test_a_shards_batch_inserts_its_texts_after_every_other_write_so_fts5_writes_one_segment(tmp_path):
    """FTS5 writes out what it holds at every savepoint, and SQLite opens one for any later statement that may fail
    part-way: texts inserted file by file, between the other writes, made a segment per file (then merged)."""
    from inspector.library.shards import _index_files

    db, items = _shard_batch(tmp_path, 12)
    statements: list[str] = []
    db.set_trace_callback(statements.append)
    out = _index_files(db, items, together=True)
    db.set_trace_callback(None)
    assert [row[0] for row in out] == list(range(1, 13)) and all(row[1] > 0 for row in out)
    writes = [s.split()[0:3] for s in statements if s.split()[0] in ("INSERT", "UPDATE", "DELETE", "COMMIT")]
    first_text = next(i for i, w in enumerate(writes) if w[:3] == ["INSERT", "INTO", "texts(rowid,"])
    assert writes[-1] == ["COMMIT"] and first_text > 0
    assert all(w[:3] == ["INSERT", "INTO", "texts(rowid,"] for w in writes[first_text:-1]), writes[first_text:]
    assert _words_found(db, 12) == list(range(12))


def test_held_texts_past_their_limit_are_inserted_in_parts_and_none_is_lost(tmp_path, monkeypatch):
    from inspector.library.shards import HeldTexts, _index_files

    monkeypatch.setattr(HeldTexts, "HOLD", 40)  # characters: about a file's text
    db, items = _shard_batch(tmp_path, 9)
    statements: list[str] = []
    db.set_trace_callback(statements.append)
    _index_files(db, items, together=True)
    db.set_trace_callback(None)
    runs, before = 0, None  # runs of FTS inserts between other writes
    for s in statements:
        now = s.startswith("INSERT INTO texts(rowid,")
        runs += now and before is False
        before = now if s.split()[0] in ("INSERT", "UPDATE", "DELETE") else before
    assert runs > 3
    assert _words_found(db, 9) == list(range(9))
    assert db.execute("SELECT count(*) FROM docs").fetchone()[0] == 9


def test_a_file_unreadable_in_a_shards_batch_leaves_the_others_indexed_and_none_of_its_texts(tmp_path):
    from inspector.library.shards import index_shard

    db, items = _shard_batch(tmp_path, 5)
    db.close()
    os.unlink(items[2][1])  # gone since it was listed: the batch is written again a file at a time, without it
    out = index_shard(str(tmp_path / "shard.sqlite"), items)
    assert [(fid, off is None) for fid, off, *_ in out] == [(1, False), (2, False), (3, True), (4, False), (5, False)]
    db = sqlite3.connect(tmp_path / "shard.sqlite")
    assert _words_found(db, 5) == [0, 1, 3, 4]
    assert sorted(fid for (fid,) in db.execute("SELECT file_id FROM docs")) == [1, 2, 4, 5]


def test_a_build_in_worker_processes_completes_each_shards_vocabulary_there(tmp_path, monkeypatch):
    """Each shard's last batch completes its vocabulary on the worker's core; the caller has none left to do, and a
    fragment of a word is found as the scan finds it."""
    import inspector.library.fts as fts
    from inspector.library.search import list_transcripts

    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    files, with_results = list_transcripts(resolve_target(root))
    monkeypatch.setattr(fts, "POOL_MIN", 0)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)  # two shards, on any machine
    in_caller: list[str] = []
    monkeypatch.setattr(fts, "sync_words", lambda db, shard: in_caller.append(shard))
    idx = SearchIndex(tmp_path / "i.sqlite")
    idx.refresh([f for f, _ in files], with_results, workers=2)
    shards = range(idx.shards)
    assert in_caller == [] and idx.shards == 2
    assert [idx.db.execute(f"SELECT behind FROM t{k}.wordstate").fetchone()[0] for k in shards] == [0] * idx.shards
    assert all(idx.db.execute(f"SELECT count(*) FROM t{k}.words").fetchone()[0] > 100 for k in shards)
    for fragment in ("ourl", "orecas", "rror"):
        scan, indexed = both(root, fragment, idx)
        assert scan == indexed and scan, fragment


def test_path_key_is_the_absolute_path_for_every_spelling(tmp_path, monkeypatch):
    """A file's key is os.path.abspath's, whichever way the path was typed (a relative root takes a fast path)."""
    from inspector.library.cache import path_key

    spellings = ["a", "a/b.jsonl", "./a", "../x/y", "a/./b", "a//b", "a/", "/abs/x", "/abs/../y", ".hidden/x"]
    spellings += ["a/.hidden/x", "a/b/..", "~x", "a b/ü.jsonl", "/", "."]
    spellings += ["/home/u/.claude/projects/-p/s.jsonl", "/a/.", "/a/..", "/a/.../b", "a/.b/..", "/..", "/.x/./y"]
    for where in (tmp_path, Path("/")):
        monkeypatch.chdir(where)
        for s in spellings:
            assert path_key(s) == os.fsencode(os.path.abspath(s)), (where, s)
            assert path_key(Path(s)) == os.fsencode(os.path.abspath(Path(s))), (where, s)


def test_a_path_is_normal_exactly_when_abspath_leaves_it_as_it_is():
    """The fast path of `path_key` (no normalising) is taken for every path abspath would not change, a folder named
    with a leading dot (~/.claude) included, and for no other: every string of these pieces, up to four of them (but
    a leading "//", which POSIX leaves as it is and the fast path leaves to abspath)."""
    import itertools

    from inspector.library.cache import is_normal_absolute

    pieces = ["/", "a", ".", "..", ".a", "a.", "..."]
    for n in range(1, 5):
        for parts in itertools.product(pieces, repeat=n):
            s = "".join(parts)
            normal = os.path.abspath(s) == s and s.startswith("/") and not s.startswith("//")
            assert is_normal_absolute(s) == normal, s


def test_a_listing_blob_reads_back_as_written_and_the_json_ones_before_it():
    """The listings are kept in a form read back without a JSON decoder (a warm search imports none), names that are
    not UTF-8 included; the JSON an earlier inspector wrote is still read."""
    import orjson

    from inspector.library.listings import listing_blob, parse_listing
    from inspector.transcript.safefs import DIR, FILE

    entries = [("s.jsonl", FILE), ("a b", DIR), ("é [x].jsonl", FILE), (os.fsdecode(b"\xff\xfe.jsonl"), FILE), ("f", DIR)]
    assert parse_listing(listing_blob(entries)) == entries
    assert parse_listing(listing_blob([])) == [] and listing_blob([]) == b"[]"
    assert parse_listing(orjson.dumps([[n, k] for n, k in entries if n.isprintable()])) == [
        e for e in entries if e[0].isprintable()
    ]
    for damaged in (b"fok/x", b"f", b"/d", b"d/", b"zname"):  # an entry without its kind, or without a name
        assert parse_listing(damaged) is None


def test_a_listing_an_earlier_inspector_kept_as_json_is_kept_again_in_todays_form(tmp_path):
    """A warm search reads every listing back without a JSON decoder once each has been read one more time."""
    import orjson

    from inspector.library.listings import parse_listing
    from inspector.library.search import list_transcripts

    idx, target, want = _listings_kept(tmp_path)
    rows = idx.db.execute("SELECT dir, entries FROM listings").fetchall()
    assert rows and all(not e.startswith(b"[[") for _, e in rows)
    for d, e in rows:  # as inspector kept them before
        idx.db.execute("UPDATE listings SET entries=? WHERE dir=?", (orjson.dumps(parse_listing(e)), d))
    idx.db.commit()
    again = SearchIndex(tmp_path / "i.sqlite").listing()
    assert list_transcripts(target, scan=again)[0] == want and len(again.new) == len([e for _, e in rows if e != b"[]"])
    again.save()
    assert all(not e.startswith(b"[[") for (e,) in idx.db.execute("SELECT entries FROM listings"))
    third = SearchIndex(tmp_path / "i.sqlite").listing()
    assert list_transcripts(target, scan=third)[0] == want and third.new == []


def test_what_a_shard_did_is_recorded_while_another_shard_is_being_written(tmp_path, monkeypatch):
    """A build's main process records each finished batch while the other shards' processes still write theirs: the
    record locks the main database only (it once began IMMEDIATE, which waits for every attached shard's lock)."""
    from inspector.library.cache import shard_path
    from inspector.library.shards import Job

    monkeypatch.setattr(os, "cpu_count", lambda: 2)  # two shards, whatever this machine's cores
    path = write_jsonl(tmp_path / "s.jsonl", [user("u1", None, "hello there")])
    idx = SearchIndex(tmp_path / "i.sqlite")
    assert idx.shards == 2
    fid = idx.db.execute("INSERT INTO files(path) VALUES(?)", (os.fsencode(path),)).lastrowid
    job = Job(os.fsencode(path), str(path), fid, 0, 0, -1, "t", os.stat(path), b"", None, None)
    other = sqlite3.connect(shard_path(tmp_path / "i.sqlite", (fid + 1) % 2), timeout=0, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # the other shard's process, writing
    idx.db.execute("PRAGMA busy_timeout=100")
    try:
        assert idx._record_batch([job], [(fid, 123, 1, 1)]) == 1
    finally:
        other.execute("ROLLBACK")
    assert idx.db.execute("SELECT indexed_to, lines FROM files WHERE id=?", (fid,)).fetchone() == (123, 1)


def test_a_sweep_looks_on_disk_only_for_what_the_listing_lacks(tmp_path, monkeypatch):
    """A warm search's sweep is a pass in memory: a file the listing has is never looked for on disk; one it lacks is,
    and dropped when it is gone."""
    root = tmp_path / "projects"
    a = write_jsonl(root / "-p" / "a.jsonl", [user("a0", None, "alpha words")])
    b = write_jsonl(root / "-p" / "b.jsonl", [user("b0", None, "beta words")])
    idx = SearchIndex(tmp_path / "i.sqlite")
    idx.refresh([a, b])
    looked: list[object] = []
    real_exists = os.path.exists
    monkeypatch.setattr(os.path, "exists", lambda p: looked.append(p) or real_exists(p))
    assert idx.refresh([a, b]) == 0  # unchanged
    assert idx.sweep(str(root), [str(a), str(b)]) == 0 and looked == []
    b.unlink()
    idx.refresh([a])  # the listing no longer has b
    assert idx.sweep(str(root), [str(a)]) == 1 and looked == [os.fsencode(b)]
    assert [p for (p,) in idx.db.execute("SELECT path FROM files")] == [os.fsencode(a)]
    idx.close()


def test_the_stats_cache_uses_an_open_index_and_leaves_it_open(tmp_path):
    """`search` names the sessions it found from the stats in the index's database, through the connection it has
    open: the stats cache reads and writes there and, closed, leaves that connection to its owner."""
    from inspector.library.stats import StatsCache, collect_stats, known_stats

    root = tmp_path / "projects"
    path = write_jsonl(root / "-p" / "s.jsonl", [user("u0", None, "hello words")])
    idx = SearchIndex(tmp_path / "cache" / "index.sqlite")
    cache = StatsCache(tmp_path / "cache", index=idx)
    [row] = collect_stats(resolve_target(root), cache)
    cache.close()
    assert idx.db.execute("SELECT count(*) FROM stats").fetchone()[0] == 1  # written there, and still open
    again = StatsCache(tmp_path / "cache", index=idx)
    assert known_stats(path, again)["session_id"] == row["session_id"] and again.hits == 1
    again.close()
    idx.close()
