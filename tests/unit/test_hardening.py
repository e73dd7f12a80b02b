"""Hardening: paths never escape, writes are atomic even when killed, live files, API cancel from the UI."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest
from builders import assistant, system, tool_result, tool_use, user
from helpers import ROOT, jsonl, sample_session, sha256, tree_hashes, write_jsonl
from helpers import SAMPLES as SAMPLES_DIR
from helpers import run_cli as run

from inspector.compact import CompactRequest, KeepConfig, SessionMemoryParams, compact
from inspector.edit import SaveError, save
from inspector.transcript.session import Session

KEY = "sk-ant-hardening-secret-0000"


# -- safety -----------------------------------------------------------------------------------


@pytest.mark.parametrize("tid", ["../../../../etc/passwd", "toolu_/../../secret", "/etc/passwd", "..", "toolu_\x00x"])
def test_tool_use_ids_never_become_paths_outside(tmp_path, tid):
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    p = write_jsonl(
        tmp_path / "proj" / "s.jsonl",
        [
            user("u1", None),
            assistant("a1", "u1", [tool_use(tid, "Bash")]),
            tool_result(
                "r1",
                "a1",
                tid,
                "<persisted-output>\nOutput too large (9KB). Full output saved to: "
                f"{tid}\n\nPreview (first 2KB):\nx\n</persisted-output>",
            ),
        ],
    )
    (tmp_path / "proj" / "s" / "tool-results").mkdir(parents=True)
    s = Session.load(p)
    assert all(po.file is None for po in s.persisted_outputs)


def test_markup_and_escapes_are_printed_literally(tmp_path):
    nasty = "\x1b]0;pwned\x07\x1b[2J[bold red]boom[/bold red]"
    # in the text, and in every field a report prints: title, cwd, version, model, tool name, timestamp
    p = write_jsonl(
        tmp_path / "proj" / "s.jsonl",
        [
            user("u1", None, nasty, sec=0, cwd=nasty, version=nasty),
            assistant("a1", "u1", [{"type": "text", "text": nasty}], sec=1, model="claude-" + nasty),
            assistant(
                "a2", "a1", [{"type": "tool_use", "id": "t1", "name": nasty, "input": {}}], timestamp="2026-04-02T" + nasty
            ),
            {"type": "custom-title", "customTitle": nasty, "sessionId": "S"},
        ],
    )
    for argv in (
        ["stats", p],
        ["tokens", p],
        ["compact", p, "--strategy", "full"],
        ["compact", p, "--strategy", "microcompact", "--force"],
        ["show", p],
        ["show", p, "--all", "--markdown"],
        ["show", p, "--line", "3"],
        ["search", "pwned", p],
        ["stats", "--json", p],
        ["tokens", "--json", p],
    ):
        code, out, err = run(*argv)
        assert code == 0 and "\x1b" not in out + err and "\x07" not in out + err, argv
    assert "[bold red]boom[/bold red]" in run("compact", p, "--strategy", "full")[1]


def test_display_sizes_are_capped(tmp_path):
    from inspector.tui.widgets.detail import TEXT_CAP, safe

    t = safe("y" * (TEXT_CAP * 5))
    assert len(t.plain) < TEXT_CAP + 200 and "more characters" in t.plain
    from inspector.transcript.session import read_capped

    f = tmp_path / "big.txt"
    f.write_bytes(b"z" * 5_000_000)
    text, size = read_capped(f, limit=65536)
    assert len(text) == 65536 and size == 5_000_000


# -- writes -----------------------------------------------------------------------------------

KILLER = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {root!r})
    sys.path.insert(0, {tests!r})
    from inspector.transcript.session import Session
    from inspector.compact import CompactRequest, KeepConfig, SessionMemoryParams, compact
    import inspector.edit.saving as sv
    from pathlib import Path
    where, k = sys.argv[2], int(sys.argv[3])
    s = Session.load(sys.argv[1])
    r = compact(s, "full")
    calls = {{"n": 0}}
    real_fsync, real_link = os.fsync, os.link
    def die():
        os.kill(os.getpid(), signal.SIGKILL)
    if where == "fsync":
        sv.os.fsync = lambda fd: die()
    elif where == "link":
        sv.os.link = lambda a, b: die()
    elif where == "write":
        real = sv.dump_line
        def dumps(obj, *a, **kw):
            calls["n"] += 1
            if calls["n"] == k:
                die()
            return real(obj, *a, **kw)
        sv.dump_line = dumps
    elif where == "verify":
        sv.verify = lambda *a, **kw: die()
    sv.save(s, r, out=Path(sys.argv[4]), new_id=lambda: "11111111-2222-4333-8444-555555555555")
""")


@pytest.mark.parametrize("where, k", [("write", 1), ("write", 7), ("write", 150), ("fsync", 0), ("link", 0), ("verify", 0)])
def test_killed_writer_leaves_no_partial_file(workdir, tmp_path, where, k):
    src = sample_session("Fix forecast", workdir)
    h = sha256(src)
    target = src.parent / "killed.jsonl"
    script = tmp_path / "killer.py"
    script.write_text(KILLER.format(root=str(ROOT), tests=str(ROOT / "tests")))
    r = subprocess.run([sys.executable, str(script), str(src), where, str(k), str(target)], capture_output=True, text=True)
    assert r.returncode == -9, r.stderr
    assert sha256(src) == h
    if target.exists():  # killed after the atomic link: the file is complete
        assert where == "verify"
        back = Session.load(target)
        assert back.transcript.problems == [] and back.conversation.chain
    else:
        assert where != "verify"


def test_read_only_folder_and_full_disk_leave_nothing(workdir, monkeypatch):
    src = sample_session("Fix forecast", workdir)
    s = Session.load(src)
    r = compact(s, "full")
    before = sorted(p.name for p in src.parent.iterdir())
    import inspector.edit.files as sv
    import inspector.edit.saving as saving

    def read_only(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(sv.tempfile, "mkstemp", read_only)
    with pytest.raises(SaveError, match="Permission denied"):
        save(s, r)
    monkeypatch.undo()

    calls = {"n": 0}
    real_copy = saving.copy_atomic

    def full_disk(srcf, dst):
        calls["n"] += 1
        if calls["n"] == 2:
            raise SaveError(f"could not write {dst}: No space left on device")
        return real_copy(srcf, dst)

    monkeypatch.setattr(saving, "copy_atomic", full_disk)
    with pytest.raises(SaveError, match="No space left"):
        save(s, r)
    assert sorted(p.name for p in src.parent.iterdir()) == before  # the new file and its folder were removed


def test_cli_write_error_is_one_line(workdir, monkeypatch):
    src = sample_session("Fix forecast", workdir)
    import inspector.edit.files as sv

    monkeypatch.setattr(sv.os, "link", lambda a, b: (_ for _ in ()).throw(OSError(30, "Read-only file system")))
    code, out, err = run("compact", src, "--strategy", "full", "--write")
    assert code == 2 and "Read-only file system" in err and err.count("\n") == 1


# -- live files -------------------------------------------------------------------------------


def test_appended_while_compacting_is_noted_and_original_kept(workdir):
    src = sample_session("Fix forecast", workdir)
    s = Session.load(src)
    r = compact(s, "full")
    with open(src, "ab") as f:
        f.write(orjson.dumps(user("late", s.conversation.leaf_uuid, "one more thing")) + b"\n")
    h = sha256(src)
    before = sorted(p.name for p in src.parent.iterdir())
    with pytest.raises(SaveError, match="still being written .it changed since inspector read it"):
        save(s, r)  # refused: one line, nothing written
    assert sorted(p.name for p in src.parent.iterdir()) == before and sha256(src) == h
    res = save(s, r, allow_live=True)  # asked for: saved as loaded, and said
    assert sha256(src) == h
    assert any("grew" in n for n in res.notes)
    assert "late" not in {rec.uuid for rec in Session.load(res.path).records}


# -- API faults through the UI ----------------------------------------------------------------


# -- a save killed at every step -------------------------------------------------------------

SMALL_KEEP = SessionMemoryParams(KeepConfig(1_000, 2, 3_000))


def _disk_calls(monkeypatch, stop_at: int | None):
    """Count the disk changes a save makes (edit/files.DISK), killing the process at call `stop_at`."""
    import inspector.edit.files as sv

    calls = {"n": 0, "names": []}
    for name in ("mkdir", "tempdir", "marker", "temp", "write", "fsync", "link", "rename", "unlink", "rmdir"):
        real = getattr(sv.DISK, name)

        def wrapped(*a, _real=real, _name=name):
            calls["n"] += 1
            calls["names"].append(_name)
            if stop_at is not None and calls["n"] == stop_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return _real(*a)

        monkeypatch.setattr(sv.DISK, name, wrapped)
    return calls


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_save_killed_at_every_step_leaves_a_whole_session_or_none(workdir, monkeypatch):
    """A full compaction with persisted outputs and session notes, saved with a SIGKILL at each of its disk changes in
    turn (every mkdir, temporary file, write, fsync, link, unlink): afterwards there is either no new transcript or a
    complete one whose copied files are all there with the original bytes, and the next save removes what the
    killed one left behind."""
    from inspector.edit.files import INCOMPLETE, TMP_PREFIX, clean_stale

    src = sample_session("Fix forecast", workdir)
    project = src.parent
    s = Session.load(src)
    r = compact(s, CompactRequest("session-memory", session_memory_params=SMALL_KEEP))
    assert r.changed and r.session_memory_file is not None and s.persisted_outputs
    h = tree_hashes(project)
    calls = _disk_calls(monkeypatch, None)
    probe = save(s, r, out=project / "probe.jsonl", new_id=lambda: "probe")
    total = calls["n"]
    assert {"mkdir", "tempdir", "marker", "temp", "write", "fsync", "link", "rename", "unlink"} <= set(
        calls["names"]
    ) and total > 15
    assert len(probe.copied) >= 3  # two persisted outputs and the notes
    monkeypatch.undo()
    link_of_transcript = max(i for i, name in enumerate(calls["names"], 1) if name == "link")

    def calls_after_link(k):  # killed after the transcript's link, before the marker went: still whole
        return k > link_of_transcript

    for k in range(1, total + 1):
        target = project / f"killed-{k}.jsonl"
        pid = os.fork()
        if pid == 0:  # the child: save, and die at disk change k
            try:
                _disk_calls(monkeypatch, k)
                import inspector.edit.saving as sv

                sv.verify = lambda saved, result: sv.Verification(True, True, True, 0, 0)
                save(s, r, out=target, new_id=lambda: f"killed-{k}")
            finally:
                os._exit(3)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (k, status)
        folder = target.with_suffix("")
        if target.exists():  # whole: every file it points to is there, byte for byte
            back = Session.load(target)
            assert back.transcript.problems == [] and back.conversation.chain
            for po in back.persisted_outputs:
                assert po.file is not None and sha256(po.file) == sha256(src.with_suffix("") / "tool-results" / po.file.name)
            assert sha256(folder / "session-memory" / "summary.md") == sha256(
                src.with_suffix("") / "session-memory" / "summary.md"
            )
            assert not (folder / INCOMPLETE).exists() or calls_after_link(k)
        else:  # or nothing a reader would take for a session: at most an incomplete, marked folder
            assert not folder.exists() or (folder / INCOMPLETE).exists() or not any(folder.iterdir())
    left = [p for p in project.rglob("*") if p.name.startswith(TMP_PREFIX) or p.name == INCOMPLETE]
    removed = clean_stale(project)
    assert set(left) <= set(removed)
    assert not [p for p in project.rglob("*") if p.name.startswith(TMP_PREFIX) or p.name == INCOMPLETE]
    assert not [d for d in project.glob("killed-*") if d.is_dir() and not d.with_suffix(".jsonl").exists()]
    assert {k: v for k, v in tree_hashes(project).items() if k in h} == h  # the originals never changed


def test_a_destination_folder_that_already_holds_files_is_refused(workdir):
    src = sample_session("Fix forecast", workdir)
    s = Session.load(src)
    r = compact(s, "full")
    out = src.parent / "new.jsonl"
    stale = src.parent / "new" / "tool-results"
    stale.mkdir(parents=True)
    (stale / "toolu_stale.txt").write_text("an old file the new session must not point at")
    with pytest.raises(SaveError, match="already holds files"):
        save(s, r, out=out)
    assert not out.exists() and (stale / "toolu_stale.txt").exists()  # refused, and nothing removed


def test_a_failed_save_keeps_a_folder_that_was_there_before(workdir, monkeypatch):
    src = sample_session("Fix forecast", workdir)
    s = Session.load(src)
    r = compact(s, "full")
    out = src.parent / "mine.jsonl"
    (src.parent / "mine").mkdir()  # the user's empty folder
    import inspector.edit.saving as sv

    monkeypatch.setattr(sv, "verify", lambda *a: sv.Verification(False, True, True, 0, 0, ["forced"]))
    with pytest.raises(SaveError, match="forced"):
        save(s, r, out=out)
    assert not out.exists() and (src.parent / "mine").is_dir() and not any((src.parent / "mine").iterdir())


def test_session_notes_are_copied_byte_for_byte(workdir):
    """A 6 MB summary.md with invalid UTF-8 is copied whole: display caps are for display only."""
    src = sample_session("Fix forecast", workdir)
    notes = src.with_suffix("") / "session-memory" / "summary.md"
    data = notes.read_bytes() + b"\n\xff\xfe not UTF-8\n" + b"# Worklog\n" + b"x" * (6 << 20) + b"\n"
    notes.write_bytes(data)
    s = Session.load(src)
    res = save(s, compact(s, CompactRequest("session-memory", session_memory_params=SMALL_KEEP)), out=src.parent / "notes.jsonl")
    assert (src.parent / "notes" / "session-memory" / "summary.md").read_bytes() == data
    assert res.verification.ok


# -- folders that are links --------------------------------------------------------------------

SECRET = "TOPSECRET-4f1e"


def _secret_tree(tmp_path):
    """A folder outside the projects root holding what a link inside a session folder would expose."""
    out = tmp_path / "elsewhere"
    (out / "secret").mkdir(parents=True)
    (out / "secret" / "toolu_01L8ACDkBbMRLD90GAqmtNKc.txt").write_text(f"{SECRET} in a tool result\n")
    (out / "secret" / "agent-a123.jsonl").write_text(
        orjson.dumps(user("x1", None, f"{SECRET} in a subagent", isSidechain=True)).decode() + "\n"
    )
    (out / "secret" / "summary.md").write_text(f"# Current State\n{SECRET} in the notes\n")
    return out / "secret"


def _link_in(workdir, tmp_path, where):
    import shutil

    src = sample_session("Fix forecast", workdir)
    sdir = src.with_suffix("")
    secret = _secret_tree(tmp_path)
    if where == "session folder":
        moved = tmp_path / "moved-session"
        shutil.move(str(sdir), moved)
        for f in ("toolu_01L8ACDkBbMRLD90GAqmtNKc.txt",):
            (moved / "tool-results" / f).write_text(f"{SECRET} behind a linked session folder\n")
        sdir.symlink_to(moved, target_is_directory=True)
    elif where == "nested subagents folder":
        (sdir / "subagents" / "workflows").symlink_to(secret, target_is_directory=True)
    else:
        shutil.rmtree(sdir / where)
        (sdir / where).symlink_to(secret, target_is_directory=True)
    return src


@pytest.mark.parametrize("where", ["tool-results", "subagents", "session-memory", "session folder", "nested subagents folder"])
def test_nothing_is_read_through_a_folder_that_is_a_link(workdir, tmp_path, where):
    src = _link_in(workdir, tmp_path, where)
    s = Session.load(src)
    assert all(po.file is None for po in s.persisted_outputs) or where in (
        "subagents",
        "session-memory",
        "nested subagents folder",
    )
    assert not any(SECRET in (s.read_persisted(po)[0]) for po in s.persisted_outputs if po.file is not None)
    assert all("a123" not in sa.agent_id for sa in s.subagents)
    assert s.memory_file() is None or where not in ("session-memory", "session folder")
    code, out, err = run("search", SECRET, src.parent, "--json")
    assert code == 1 and jsonl(out) == [], out
    for line in (19, 27, 35):
        code, out, err = run("show", src, "--line", line, "--full-output")
        assert SECRET not in out
    code, out, err = run("tokens", src)
    assert code == 0 and SECRET not in out
    code, out, err = run("stats", "--json", "--no-cache", src)
    assert code == 0 and SECRET not in out
    r = compact(s, CompactRequest("session-memory", session_memory_params=SMALL_KEEP))
    assert SECRET not in (r.summary or "") and SECRET not in (r.session_memory or "")
    if r.changed:
        res = save(s, r, out=src.parent / "copy.jsonl")
        for p in [res.path] + res.copied:
            assert SECRET not in p.read_text(errors="replace")


def test_a_thousand_folders_deep_inside_a_session_folder(workdir):
    """No recursion on untrusted depth: stats, tokens and search walk a bounded depth and finish."""
    src = sample_session("Fix forecast", workdir)
    d = src.with_suffix("") / "subagents"
    fd = os.open(d, os.O_RDONLY)
    try:  # made with openat, since the path itself grows past PATH_MAX
        for _ in range(1_000):
            os.mkdir("d", dir_fd=fd)
            nfd = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nfd
    finally:
        os.close(fd)
    try:
        for argv in (("stats", "--json", "--no-cache", src.parent), ("tokens", src), ("search", "forecast", src.parent)):
            code, out, err = run(*argv)
            assert code == 0 and "RecursionError" not in err, (argv, err)
    finally:  # remove the tower without recursion (pytest's own cleanup would recurse)
        fds = [os.open(d, os.O_RDONLY)]
        while True:
            try:
                fds.append(os.open("d", os.O_RDONLY, dir_fd=fds[-1]))
            except FileNotFoundError:
                break
        while len(fds) > 1:
            os.close(fds.pop())
            os.rmdir("d", dir_fd=fds[-1])
        os.close(fds[0])


# -- unreadable files ---------------------------------------------------------------------------


@pytest.fixture
def unreadable(monkeypatch):
    """Make chosen files unreadable, as chmod 000 would for a user that is not root (the tests may run as root)."""
    import builtins
    import io

    blocked: set[str] = set()
    real_open, real_os_open = builtins.open, os.open

    def check(path):
        try:
            p = os.path.realpath(os.fspath(path)) if not isinstance(path, int) else None
        except TypeError:
            p = None
        if p in blocked:
            raise PermissionError(13, "Permission denied", os.fspath(path))

    def fake_open(file, *a, **kw):
        check(file)
        return real_open(file, *a, **kw)

    def fake_os_open(path, *a, **kw):
        if kw.get("dir_fd") is None:
            check(path)
        return real_os_open(path, *a, **kw)

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(io, "open", fake_open)
    monkeypatch.setattr(os, "open", fake_os_open)
    return lambda *paths: blocked.update(os.path.realpath(p) for p in paths)


def test_an_unreadable_session_or_agent_file_is_skipped_and_named(workdir, unreadable):
    project = workdir / "-home-ann-work-weatherly"
    victim = sample_session("history command", workdir)
    stray = project / "agent-deadbeef.jsonl"
    write_jsonl(stray, [user("z1", None, "lost agent", isSidechain=True, sessionId="gone")])
    unreadable(victim, stray)
    code, out, err = run("stats", "--json", "--no-cache", workdir)
    assert code == 0, err
    got = {Path(s["path"]).name for s in jsonl(out)}
    assert victim.name not in got and len(got) >= 2
    assert "skipped 2 file(s)" in err and victim.name in err and "agent-deadbeef.jsonl" in err and "Permission denied" in err
    code, out, err = run("tokens", "--json", workdir)
    assert code == 0 and len(jsonl(out)) >= 2 and victim.name in err


def test_an_unreadable_subagent_costs_its_own_row(workdir, unreadable):
    src = sample_session("Fix forecast", workdir)
    agents = sorted((src.with_suffix("") / "subagents").glob("agent-*.jsonl"))
    unreadable(*agents)
    code, out, err = run("tokens", "--json", src)
    assert code == 0, err
    rows = jsonl(out)[0]["subagents"]
    assert any(r.get("error") == "Permission denied" for r in rows)


def test_unreadable_notes_fall_back_to_full_compaction(workdir, unreadable):
    src = sample_session("Fix forecast", workdir)
    unreadable(src.with_suffix("") / "session-memory" / "summary.md")
    s = Session.load(src)
    r = compact(s, CompactRequest("session-memory", session_memory_params=SMALL_KEEP))
    assert r.strategy == "full" and "could not be read" in r.fallback


def test_an_unreadable_persisted_output(workdir, unreadable):
    src = sample_session("Fix forecast", workdir)
    s = Session.load(src)
    po = next(po for po in s.persisted_outputs if po.file is not None)
    line = s.records[po.record].line
    unreadable(po.file)
    code, out, err = run("show", src, "--line", line, "--full-output")
    assert code == 0 and "could not read" in err and "Permission denied" in err
    r = compact(s, "full")
    with pytest.raises(SaveError, match="could not read .*Permission denied"):
        save(s, r, out=src.parent / "x.jsonl")
    assert not (src.parent / "x.jsonl").exists() and not (src.parent / "x").exists()


# -- what one line may cost ---------------------------------------------------------------------


def test_a_line_over_the_cap_is_reported_with_its_size_and_never_held(tmp_path, monkeypatch):
    import inspector.library.search as search_mod
    import inspector.transcript.index as index_mod

    monkeypatch.setattr(index_mod, "MAX_LINE", 10_000)
    monkeypatch.setattr(search_mod, "BLOCK", 4_096)
    big = orjson.dumps(user("big", "u0", "needle " + "x" * 50_000))
    p = write_jsonl(tmp_path / "p" / "s.jsonl", [user("u0", None, "first"), big, user("u2", "u0", "needle after", sec=5)])
    s = Session.load(p)
    assert [r.uuid for r in s.records] == ["u0", "u2"]
    [prob] = s.transcript.problems
    assert prob.line == 2 and f"{len(big):,} bytes" in prob.reason and "too long" in prob.reason
    code, out, err = run("search", "needle", p, "--json")
    assert code == 0 and [h["line"] for h in jsonl(out)] == [3]
    code, out, err = run("search", "néedle", p, "--json")  # the line-by-line path of a non-ASCII query
    assert code == 1


def test_a_gigabyte_of_nul_bytes_costs_no_gigabyte(tmp_path):
    """A sparse file ending in 1 GB of NUL bytes (one unterminated 'line'): stats reads past it in bounded memory."""
    p = write_jsonl(tmp_path / "p" / "s.jsonl", [user("u0", None, "hello")])
    with open(p, "r+b") as f:
        f.truncate(p.stat().st_size + (1 << 30))
    code = (
        "import sys, io\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from inspector.cli import main\n"
        f"rc = main(['stats', '--json', '--no-cache', {str(p)!r}], io.StringIO(), io.StringIO())\n"
        # this process's own peak: getrusage's ru_maxrss would include the peak of the pytest process
        # that spawned it (the kernel folds the parent's high-water mark in at exec after a vfork)
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
        "print(rc, hwm)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    rc, rss_kb = r.stdout.split()
    assert rc == "0", r.stderr
    assert int(rss_kb) < 400 * 1024  # far below the gigabyte (it was 4.2 GB)


def test_tokens_over_a_large_root_holds_one_session_at_a_time(tmp_path):
    """300 sessions under a limit of 64 open files: each session is printed and let go before the next."""
    import shutil

    src = sample_session("history command")
    project = tmp_path / "root" / "-w-proj"
    project.mkdir(parents=True)
    for k in range(300):
        shutil.copyfile(src, project / f"{k:08d}-0000-4000-8000-000000000000.jsonl")
    code = (
        "import resource, sys, io\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from inspector.cli import main\n"
        "out, err = io.StringIO(), io.StringIO()\n"
        f"rc = main(['tokens', '--json', {str(tmp_path / 'root')!r}], out, err)\n"
        "print(rc, len(out.getvalue().splitlines()), err.getvalue().replace(chr(10), ' '))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.stdout.split()[:2] == ["0", "300"], r.stdout + r.stderr


# -- smaller things a hostile transcript or a careless call can do --------------------------------


def test_odd_numbers_and_a_byte_order_mark(tmp_path):
    huge = b"1" + b"9" * 5_000
    lines = [
        b"\xef\xbb\xbf" + orjson.dumps(user("u0", None, "first")),
        orjson.dumps(assistant("a1", "u0", sec=1)).replace(b'"output_tokens":50', b'"output_tokens":' + huge),
        orjson.dumps(user("u2", "a1", "third", sec=2)).replace(b'"third"', b'"third","score":NaN'),
        orjson.dumps(system("b3", None, "compact_boundary", sec=3, compactMetadata={"trigger": "auto", "preTokens": -5})),
    ]
    p = write_jsonl(tmp_path / "p" / "s.jsonl", [], raw_lines=None)
    p.write_bytes(b"\n".join(lines) + b"\n")
    s = Session.load(p)
    assert [r.uuid for r in s.records] == ["u0", "a1", "u2", "b3"]  # the BOM did not cost the first record
    assert [i for i in s.conversation.chain] == [0, 1, 2] or len(s.conversation.logical_chain) >= 3
    notes = {pr.line: pr.reason for pr in s.transcript.problems}
    assert "integer too long" in notes[2] and "NaN" in notes[3] and not any("UTF-8" in r for r in notes.values())
    assert s.compactions()[0]["pre_tokens"] is None  # a negative preTokens is not shown as a number


def test_json_and_text_output_carry_nothing_a_terminal_acts_on(tmp_path):
    title = "evil\x9b31m\u202etxt.exe\u200b\u2028line"
    p = write_jsonl(tmp_path / "p" / "s.jsonl", [user("u0", None, title), assistant("a1", "u0", sec=1)])
    code, out, err = run("stats", "--json", "--no-cache", p)
    assert code == 0 and jsonl(out)[0]["title"].startswith("evil\x9b31m")  # the same text to a parser
    assert not any(ch in out for ch in "\x9b\u202e\u200b\u2028")  # but escaped in the bytes
    code, out, err = run("stats", "--no-cache", p)
    assert code == 0 and not any(ch in out for ch in "\x9b\u202e\u200b\u2028")
    code, out, err = run("show", tmp_path / "p" / "\x1b[31mnope\u202e.jsonl")
    assert code != 0 and "\x1b" not in err and "\u202e" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ("tokens", "--window", "0"),
        ("tokens", "--window", "-1"),
        ("tokens", "--auto-compact-window", "-1"),
        ("tokens", "--blocking-limit", "-1"),
        ("tokens", "--max-output-tokens", "-5"),
        ("compact", "--strategy", "microcompact", "--keep-recent", "-1"),
        ("compact", "--strategy", "session-memory", "--min-tokens", "-5"),
        ("compact", "--strategy", "session-memory", "--max-tokens", "0"),
        ("compact", "--strategy", "microcompact", "--now", "yesterday"),
    ],
)
def test_impossible_numbers_are_refused_in_one_line(argv):
    path = str(sample_session("Fix forecast"))
    code, out, err = run(*argv[:1], path, *argv[1:])
    assert code == 2 and err.count("\n") <= 2 and "Traceback" not in err, err


def test_tiny_or_flagged_windows_never_give_negative_thresholds(monkeypatch):
    path = sample_session("Fix forecast")  # written by 2.1.20, which has no CLAUDE_CODE_AUTO_COMPACT_WINDOW
    monkeypatch.setenv("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "5000")
    code, out, _ = run("tokens", "--json", path)
    th = jsonl(out)[0]["thresholds"]
    assert code == 0 and th["context_window"] == 200_000 and "CLAUDE_CODE_AUTO_COMPACT_WINDOW is not read" in th["rules"]
    code, out, _ = run("tokens", "--json", str(sample_session("Add a changelog")))  # 2.1.88 reads it
    th = jsonl(out)[0]["thresholds"]
    assert code == 0 and min(th["warning"], th["blocking"], th["auto_compact"], th["effective_window"]) >= 0
    assert "CLAUDE_CODE_AUTO_COMPACT_WINDOW" in th["window_source"] and "leaves no room" in th["window_source"]
    monkeypatch.delenv("CLAUDE_CODE_AUTO_COMPACT_WINDOW")
    code, out, _ = run("tokens", "--json", "--auto-compact-window", "120000", path)
    th = jsonl(out)[0]["thresholds"]
    assert th["auto_compact"] == 87_000 and th["window_source"].startswith("--auto-compact-window: 120,000")


def test_a_damaged_stats_cache_entry_is_recomputed(workdir, tmp_path):
    from inspector.library.stats import StatsCache, collect_stats
    from inspector.transcript.discovery import resolve_target

    cache = StatsCache(tmp_path / "cache")
    first = collect_stats(resolve_target(workdir), cache)
    db = sqlite3.connect(tmp_path / "cache" / "index.sqlite")
    rows = db.execute("SELECT path, stats FROM stats").fetchall()
    assert len(rows) == len(first)
    for path, body in rows:  # the key still matches, the stats are damaged: one of the wrong type, one not JSON
        data = orjson.loads(body)
        data["records"] = "garbage"
        db.execute("UPDATE stats SET stats=? WHERE path=?", (orjson.dumps(data) if path < rows[-1][0] else b"{no", path))
    db.commit()
    db.close()
    cache = StatsCache(tmp_path / "cache")
    again = collect_stats(resolve_target(workdir), cache)
    assert again == first and cache.misses == len(first)
    assert collect_stats(resolve_target(workdir), StatsCache(tmp_path / "cache")) == first  # rewritten: hits again
    code, out, err = run("stats", workdir)
    assert code == 0


def test_output_that_cannot_take_every_character_or_is_closed(tmp_path):
    p = write_jsonl(tmp_path / "p" / "s.jsonl", [user("u0", None, "ünïcødé ✓ 日本"), assistant("a1", "u0", sec=1)])
    env = {**os.environ, "PYTHONIOENCODING": "latin-1"}
    r = subprocess.run([sys.executable, "-m", "inspector", "show", str(p)], capture_output=True, env=env, cwd=ROOT)
    assert r.returncode == 0 and b"Traceback" not in r.stderr
    r = subprocess.run(f"{sys.executable} -m inspector stats --no-cache {p} >&-", shell=True, capture_output=True, cwd=ROOT)
    assert b"Traceback" not in r.stderr and r.returncode in (0, 1)


def test_options_may_come_between_the_arguments():
    code, out, err = run("search", "forecast", "--json", SAMPLES_DIR)
    assert code == 0 and jsonl(out)


def test_a_time_long_before_the_session_is_a_gap_not_a_crash():
    code, out, err = run("compact", sample_session("Fix forecast"), "--strategy", "microcompact", "--now", "0001-01-01T00:00:00")
    assert code == 0 and "Nothing would change" in out and not err


def test_lines_that_carry_nothing_cost_little(tmp_path):
    """Lines with no uuid and no message (snapshots, queue operations, empty objects) are indexed as bare entries:
    100,000 of them take well under 200 bytes each (a full entry took about 300)."""
    import tracemalloc

    from inspector.transcript.index import Transcript
    from inspector.transcript.records import BareRecord

    p = tmp_path / "tiny.jsonl"
    p.write_bytes(b"{}\n" * 50_000 + b'{"type":"file-history-snapshot","messageId":"m"}\n' * 50_000)
    tracemalloc.start()
    t = Transcript.load(p)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(t.records) == 100_000 and all(isinstance(r, BareRecord) for r in t.records)
    assert peak / 100_000 < 200, peak
    s = Session.load(p)
    from inspector.library.stats import session_stats

    st = session_stats(s)
    assert st["records"]["by_type"] == {"": 50_000, "file-history-snapshot": 50_000} and st["chain"]["length"] == 0
