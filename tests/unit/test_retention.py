"""Claude Code's cleanup and the archive that outlives it (issue 16, part 2)."""

from __future__ import annotations

import json
import os
import shutil
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from helpers import SAMPLES, jsonl, tree_hashes
from helpers import run_cli as run

from inspector.library.retention import (
    MANIFEST,
    TMP_PREFIX,
    ArchiveError,
    Retention,
    archive,
    cleanup_rules,
    newest_release,
)
from inspector.transcript.discovery import resolve_target

DAY = 86400


def _settings(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else json.dumps(data).encode())
    return path


@pytest.fixture()
def where(tmp_path):
    """A config folder, a project started in, a managed-settings folder (all empty) and a reader over them."""
    home, cwd, managed = tmp_path / "claude", tmp_path / "project", tmp_path / "etc-claude-code"
    for d in (home, cwd, managed):
        d.mkdir()

    def read(release: str | None = "2.1.332", env: dict[str, str] | None = None) -> Retention:
        return Retention.read({"CLAUDE_CONFIG_DIR": str(home), **(env or {})}, managed=managed, cwd=cwd, release=release)

    return home, cwd, managed, read


def test_cleanup_period_is_read_where_claude_code_reads_it(where):
    home, cwd, managed, read = where
    r = read()
    assert r.days == 30 and "default" in r.source and r.skipped is None and r.rules == "2.1.332"
    _settings(home / "settings.json", {"cleanupPeriodDays": 10})
    r = read()
    assert r.days == 10 and str(home / "settings.json") in r.source and "user settings" in r.source
    _settings(home / "settings.json", {"cleanupPeriodDays": 99999})
    r = read()
    assert r.days is None and r.due(home / "settings.json") is None  # cleanup off, in effect: no date


def test_every_layer_in_claude_codes_precedence(where):
    """user < project .claude/settings.json < .claude/settings.local.json < managed (file, then drop-ins by name),
    and cached remote managed settings instead of the file when they have content (2.1.88's settings.ts)."""
    home, cwd, managed, read = where
    _settings(home / "settings.json", {"cleanupPeriodDays": 10})
    _settings(cwd / ".claude" / "settings.json", {"cleanupPeriodDays": 20})
    r = read()
    assert r.days == 20 and r.source.startswith("cleanupPeriodDays 20 from project settings")
    _settings(cwd / ".claude" / "settings.local.json", {"cleanupPeriodDays": 25, "model": "x"})
    assert read().days == 25 and "local project settings" in read().source
    _settings(managed / "managed-settings.json", {"cleanupPeriodDays": 90})
    assert read().days == 90 and "managed settings" in read().source
    _settings(managed / "managed-settings.d" / "20-b.json", {"cleanupPeriodDays": 45})
    _settings(managed / "managed-settings.d" / "10-a.json", {"cleanupPeriodDays": 60})
    _settings(managed / "managed-settings.d" / ".hidden.json", {"cleanupPeriodDays": 1})
    assert read().days == 45 and "20-b.json" in read().source  # drop-ins over the file, the later name last
    _settings(home / "remote-settings.json", {"cleanupPeriodDays": 14})
    assert read().days == 14 and "remote managed settings" in read().source  # the server's copy wins
    _settings(home / "remote-settings.json", {})
    assert read().days == 45  # an empty remote copy is no managed source


def test_a_file_met_twice_counts_once(tmp_path):
    """Claude Code started in the folder whose .claude is its config folder reads that settings.json once."""
    home = tmp_path / ".claude"
    _settings(home / "settings.json", {"cleanupPeriodDays": 12})
    r = Retention.read({"CLAUDE_CONFIG_DIR": str(home)}, managed=tmp_path / "none", cwd=tmp_path, release="2.1.332")
    assert r.days == 12 and "user settings" in r.source


@pytest.mark.parametrize("bad", [-1, 2.5, "30", True, None])
def test_an_invalid_period_skips_cleanup_in_every_release(where, bad):
    home, cwd, managed, read = where
    _settings(cwd / ".claude" / "settings.json", {"cleanupPeriodDays": bad})
    for release in ("2.1.50", "2.1.330", "2.1.340"):
        r = read(release)
        assert r.days is None and r.skipped and "project settings" in r.skipped and r.due(home) is None


def test_zero_deletes_everything_before_2_1_328_and_turns_cleanup_off_after(where, tmp_path):
    home, cwd, managed, read = where
    _settings(home / "settings.json", {"cleanupPeriodDays": 0})
    old = read("2.1.88")
    assert old.days == 0 and old.rules == "2.1.88" and "deletes every transcript" in old.source
    f = _settings(tmp_path / "s.jsonl", b"{}\n")
    assert old.risk(f) == "next start"
    new = read("2.1.328")
    assert new.days is None and new.rules == "2.1.328" and "turns its cleanup off" in new.source and new.risk(f) is None


def test_a_settings_file_that_cannot_be_parsed(where):
    """2.1.328 and later skip the sweep (the period may be set where it cannot be seen); 2.1.88 skips it only when
    the key is set somewhere; managed settings that set the key run it in 2.1.328 and later."""
    home, cwd, managed, read = where
    _settings(cwd / ".claude" / "settings.local.json", b"{not json")
    r = read("2.1.330")
    assert r.skipped and "settings.local.json" in r.skipped and "parsed" in r.skipped and r.days is None
    assert read("2.1.88").days == 30 and read("2.1.88").skipped is None
    _settings(home / "settings.json", {"cleanupPeriodDays": 9})
    assert read("2.1.88").skipped and "cleanupPeriodDays is set in user settings" in read("2.1.88").skipped
    _settings(managed / "managed-settings.json", {"cleanupPeriodDays": 40})
    assert read("2.1.332").days == 40 and read("2.1.332").skipped is None
    assert read("2.1.88").skipped  # 2.1.88 asks only whether there are errors and the key is set


def test_2_1_332_skips_on_an_empty_user_settings_file_written_lately(where):
    home, cwd, managed, read = where
    f = _settings(home / "settings.json", b"")
    assert read("2.1.332").skipped and "empty" in read("2.1.332").skipped
    assert read("2.1.328").skipped is None and read("2.1.328").days == 30  # the rule is new in 2.1.332
    t = time.time() - 31 * DAY
    os.utime(f, (t, t))
    assert read("2.1.332").skipped is None  # written over 30 days ago: not a file caught mid-write
    os.utime(f, None)
    _settings(cwd / ".claude" / "settings.json", {"cleanupPeriodDays": 5})
    assert read("2.1.332").days == 5  # the period is set elsewhere: nothing unseen


def test_2_1_332_skips_while_managed_settings_cannot_be_read(where, monkeypatch):
    home, cwd, managed, read = where
    f = _settings(managed / "managed-settings.json", {"cleanupPeriodDays": 3})
    real = Path.read_bytes

    def denied(self: Path) -> bytes:
        if self == f:
            raise PermissionError(13, "Permission denied")
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", denied)
    r = read("2.1.332")
    assert r.skipped and "not read in full" in r.skipped
    assert "cannot be read" in (read("2.1.328").skipped or "")  # 2.1.328: an unreadable file is an error too


def test_what_cannot_be_seen_is_said(where):
    home, cwd, managed, read = where
    r = read("2.1.332", {"ANTHROPIC_PROFILE": "work"})
    assert any("ANTHROPIC_PROFILE" in n for n in r.notes) and any("--settings" in n for n in r.notes)
    assert not any("ANTHROPIC_PROFILE" in n for n in read("2.1.328", {"ANTHROPIC_PROFILE": "work"}).notes)


def test_the_rules_follow_the_release():
    assert cleanup_rules("2.1.20") == "2.1.88" and cleanup_rules("2.1.327") == "2.1.88"
    assert cleanup_rules("2.1.328") == "2.1.328" and cleanup_rules("2.1.331") == "2.1.328"
    assert cleanup_rules("2.1.332") == "2.1.332" and cleanup_rules("2.2.0") == "2.1.332" and cleanup_rules(None) == "2.1.332"
    assert newest_release(["2.1.9", None, "2.1.88", "junk", "2.1.10"]) == "2.1.88" and newest_release([]) is None


def test_the_dates_at_risk_follow_the_files_time_and_the_setting(tmp_path):
    now = datetime(2026, 11, 30, 12, tzinfo=UTC)
    r = Retention(30, "test")
    old, soon, safe = tmp_path / "old.jsonl", tmp_path / "soon.jsonl", tmp_path / "safe.jsonl"
    for p, age in ((old, 31), (soon, 25), (safe, 10)):
        p.write_text("{}\n")
        t = (now - timedelta(days=age)).timestamp()
        os.utime(p, (t, t))
    assert r.risk(old, now) == "next start" and r.risk(soon, now) == "soon" and r.risk(safe, now) is None
    assert r.due(soon) == now - timedelta(days=25) + timedelta(days=30)


def test_stats_says_when_each_session_is_deleted(tmp_path, monkeypatch):
    home = tmp_path / "claude"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"cleanupPeriodDays": 7}))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    root = tmp_path / "root"
    shutil.copytree(SAMPLES, root)
    victim = next(root.rglob("*.jsonl"))
    t = time.time() - 8 * DAY
    os.utime(victim, (t, t))
    code, out, err = run("stats", "--json", "--no-cache", str(root))
    assert code == 0, err
    due = {Path(d["path"]).resolve(): d["deletion_due"] for d in jsonl(out)}
    expect = datetime.fromtimestamp(t, UTC) + timedelta(days=7)
    assert due[victim.resolve()] == expect.isoformat(timespec="seconds").replace("+00:00", "Z")
    code, out, _ = run("stats", "--no-cache", str(root))
    assert "will be deleted by Claude Code's cleanup" in out


def test_archive_round_trip_then_the_original_is_gone_and_the_archive_browses_the_same(tmp_path):
    """Archive a root, delete the originals (in a copy), browse the archive: the same stats, file for file."""
    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    before = tree_hashes(root)
    code, out, err = run("stats", "--json", "--no-cache", str(root))
    stats_before = sorted(
        (
            Path(d["path"]).relative_to(root).as_posix(),
            d["records"]["total"],
            d["cost_usd_priced"],
            d["subagents"],
            d["persisted_outputs"]["files"],
        )
        for d in jsonl(out)
    )
    to = tmp_path / "archive"
    code, out, err = run("archive", str(root), "--to", str(to), "--json")
    assert code == 0, err
    rep = jsonl(out)[0]
    assert rep["sessions"] == len(stats_before) and rep["copied"] and rep["unchanged"] == 0
    assert "same disk" in err
    assert tree_hashes(root) == before  # nothing moved or changed
    copied = {p.relative_to(to).as_posix(): p.read_bytes() for p in to.rglob("*") if p.is_file() and p.name != MANIFEST}
    originals = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert copied == {k: v for k, v in originals.items() if k in copied} and len(copied) >= len(stats_before)
    code, out, err = run("archive", str(root), "--to", str(to), "--json")  # incremental: nothing new
    assert jsonl(out)[0]["copied"] == [] and jsonl(out)[0]["unchanged"] == rep["unchanged"] + len(rep["copied"])
    grown = next(root.rglob("*.jsonl"))
    with open(grown, "ab") as f:  # a live session grows: only it is copied again
        f.write(b'{"type":"summary","summary":"more","leafUuid":"x"}\n')
    code, out, err = run("archive", str(root), "--to", str(to), "--json")
    assert [Path(p).name for p in jsonl(out)[0]["copied"]] == [grown.name]
    shutil.rmtree(root)
    code, out, err = run("stats", "--json", "--no-cache", str(to))
    stats_after = sorted(
        (
            Path(d["path"]).relative_to(to).as_posix(),
            d["records"]["total"],
            d["cost_usd_priced"],
            d["subagents"],
            d["persisted_outputs"]["files"],
        )
        for d in jsonl(out)
    )
    grown_rel = grown.relative_to(root).as_posix()
    assert [s for s in stats_after if s[0] != grown_rel] == [s for s in stats_before if s[0] != grown_rel]
    assert [s[1] for s in stats_after if s[0] == grown_rel] == [s[1] + 1 for s in stats_before if s[0] == grown_rel]


def test_an_interrupted_archive_leaves_no_partial_file_and_the_next_run_completes(tmp_path, monkeypatch):
    import inspector.library.retention as ret

    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    to = tmp_path / "archive"
    real = ret._copy_fd
    calls = {"n": 0}

    def dies_halfway(fin, dst_tmp):
        calls["n"] += 1
        if calls["n"] == 3:
            with open(dst_tmp, "wb") as f:  # half a file written, then the process is interrupted
                f.write(fin.read(100))
            raise KeyboardInterrupt
        return real(fin, dst_tmp)

    monkeypatch.setattr(ret, "_copy_fd", dies_halfway)
    with pytest.raises(KeyboardInterrupt):
        archive(resolve_target(root), to)
    visible = [p for p in to.rglob("*") if p.is_file() and p.name != ret.MANIFEST]
    assert len(visible) == 2 and not any(p.name.startswith(TMP_PREFIX) for p in visible)
    for p in visible:  # what is there is whole
        assert p.read_bytes() == (root / p.relative_to(to)).read_bytes()
    monkeypatch.setattr(ret, "_copy_fd", real)
    rep = archive(resolve_target(root), to)
    assert rep.unchanged == 2 and not list(to.rglob(f"{TMP_PREFIX}*"))


def test_a_full_disk_or_a_read_only_target_is_one_clear_error(tmp_path, monkeypatch):
    import errno

    import inspector.library.retention as ret

    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)

    def full(fin, dst_tmp):
        with open(dst_tmp, "wb") as f:
            f.write(b"x")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ret, "_copy_fd", full)
    code, out, err = run("archive", str(root), "--to", str(tmp_path / "a"))
    assert code == 1 and err.count("\n") <= 2 and "disk of" in err and "is full" in err
    assert not [p for p in (tmp_path / "a").rglob("*") if p.is_file()]

    def read_only(fin, dst_tmp):  # a read-only file system (as root, a chmod would not stop the write)
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(ret, "_copy_fd", read_only)
    code, out, err = run("archive", str(root), "--to", str(tmp_path / "b"))
    assert code == 1 and "cannot write in" in err and "Read-only file system" in err
    assert not [p for p in (tmp_path / "b").rglob("*") if p.is_file()]


def test_an_archive_inside_the_transcripts_is_refused(tmp_path):
    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    before = tree_hashes(root)
    with pytest.raises(ArchiveError, match="overlaps"):
        archive(resolve_target(root), root)
    assert tree_hashes(root) == before


# -- the archive under attack (issue 24.5) ---------------------------------------------------------------------


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    return root


def _archived(to: Path) -> dict[str, bytes]:
    return {
        p.relative_to(to).as_posix(): p.read_bytes()
        for p in to.rglob("*")
        if p.is_file() and p.name != MANIFEST and not p.name.startswith(TMP_PREFIX)
    }


def _sources(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_truncated_source_never_replaces_the_full_copy(tmp_path):
    root, to = _root(tmp_path), tmp_path / "archive"
    archive(resolve_target(root), to)
    victim = max(root.rglob("*.jsonl"), key=lambda p: p.stat().st_size)
    rel = victim.relative_to(root).as_posix()
    full = victim.read_bytes()
    victim.write_bytes(full[:1000])
    rep = archive(resolve_target(root), to)
    assert (to / rel).read_bytes() == full  # the archive keeps what it exists to keep
    assert [p.read_bytes() for p in rep.beside] == [full[:1000]] and rep.beside[0].suffix == ".jsonl"
    assert any("shorter than its archived copy" in w for w in rep.warnings)
    again = archive(resolve_target(root), to)  # the same truncated source: nothing more
    assert again.beside == [] and again.copied == [] and (to / rel).read_bytes() == full


def test_a_rewrite_of_the_same_size_and_time_is_seen(tmp_path):
    root, to = _root(tmp_path), tmp_path / "archive"
    archive(resolve_target(root), to)
    victim = next(root.rglob("*.jsonl"))
    st = victim.stat()
    body = bytearray(victim.read_bytes())
    body[10:14] = b"XXXX" if body[10:14] != b"XXXX" else b"YYYY"
    victim.write_bytes(bytes(body))
    os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size, same time
    rep = archive(resolve_target(root), to)
    assert [p.read_bytes() for p in rep.beside] == [bytes(body)]
    assert any("changed, not grown" in w for w in rep.warnings)


def test_a_source_swapped_for_a_link_is_not_followed(tmp_path, monkeypatch):
    import inspector.library.retention as ret

    root, to = _root(tmp_path), tmp_path / "archive"
    secret = tmp_path / "secret.txt"
    secret.write_text("not a transcript")
    victim = next(root.rglob("*.jsonl"))
    real = ret._session_files

    def swapped(session, agents):  # listed as a file, then made a link before it is opened
        files = real(session, agents)
        if session == victim:
            victim.unlink()
            victim.symlink_to(secret)
        return files

    monkeypatch.setattr(ret, "_session_files", swapped)
    rep = archive(resolve_target(root), to)
    assert b"not a transcript" not in b"".join(_archived(to).values())
    assert victim in rep.skipped and any("is a link (not followed)" in w for w in rep.warnings)


def test_an_unreadable_source_is_skipped_and_named_and_the_rest_archived(tmp_path, monkeypatch):
    import inspector.transcript.safefs as safefs

    root, to = _root(tmp_path), tmp_path / "archive"
    victim = sorted(root.rglob("*.jsonl"))[0]
    real = safefs.open_regular

    def refuse(path):  # as root a chmod would not stop the read
        if Path(path) == victim:
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(safefs, "open_regular", refuse)
    code, out, err = run("archive", str(root), "--to", str(to), "--json")
    assert code == 0, err
    assert f"cannot read {victim}: Permission denied" in err and "cannot write" not in err
    rel = victim.relative_to(root).as_posix()
    assert rel not in _archived(to)
    assert {k: v for k, v in _sources(root).items() if k != rel} == _archived(to)


def test_a_long_file_name_is_archived(tmp_path):
    root, to = _root(tmp_path), tmp_path / "archive"
    project = next(p for p in root.iterdir() if p.is_dir())
    session = next(project.glob("*.jsonl"))
    long = session.with_suffix("") / "tool-results" / ("x" * 245 + ".txt")
    long.parent.mkdir(parents=True, exist_ok=True)
    long.write_text("a persisted output")
    rep = archive(resolve_target(root), to)
    assert _archived(to) == _sources(root) and not rep.skipped


@pytest.mark.parametrize("target", ["", "INSIDE_ROOT", "INSIDE_DEFAULT"])
def test_a_target_in_a_projects_root_is_refused_before_anything_is_made(tmp_path, target, monkeypatch):
    root = _root(tmp_path)
    default = tmp_path / "claude" / "projects"
    default.mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.chdir(tmp_path / "claude")  # an empty --to once archived into the current folder
    before = tree_hashes(root), sorted(p for p in root.rglob("*")), sorted(default.rglob("*"))
    to = {"": "", "INSIDE_ROOT": str(root / "new" / "deeper"), "INSIDE_DEFAULT": str(default / "new")}[target]
    code, out, err = run("archive", str(root), "--to", to)
    assert code == 1 and err.count("\n") == 1
    assert (tree_hashes(root), sorted(p for p in root.rglob("*")), sorted(default.rglob("*"))) == before
    assert sorted(p.name for p in (tmp_path / "claude").iterdir()) == ["projects"]


def test_killed_at_any_write_the_next_archive_is_whole(tmp_path, monkeypatch):
    """A run stopped at each write, fsync, utime and rename in turn (and once more after it), then run again: every
    file arrives, whole, and nothing half-written is visible."""
    import inspector.library.retention as ret

    root = _root(tmp_path)
    victim = max(root.rglob("*.jsonl"), key=lambda p: p.stat().st_size)
    points = ("replace", "fsync", "utime", "open")
    k = 0
    while True:
        k += 1
        to = tmp_path / f"a{k}"
        archive(resolve_target(root), to, only={victim})  # an earlier archive holds an older copy of one session
        with open(victim, "ab") as f:
            f.write(b'{"type":"summary","summary":"grew","leafUuid":"x"}\n')
        calls = {"n": 0}

        def die(name, real):
            def wrapped(*a, **kw):
                calls["n"] += 1
                if calls["n"] == k:
                    raise KeyboardInterrupt(name)
                return real(*a, **kw)

            return wrapped

        with monkeypatch.context() as m:
            for name in points:
                m.setattr(ret.os, name, die(name, getattr(os, name)))
            try:
                archive(resolve_target(root), to)
                finished = True
            except KeyboardInterrupt:
                finished = False
        for rel, data in _archived(to).items():  # what is visible is whole: some version of its source
            src = (root / rel).read_bytes() if (root / rel).exists() else None
            assert src is not None and src.startswith(data), rel
        archive(resolve_target(root), to)
        assert _archived(to) == _sources(root), f"after a stop at call {k}"
        if finished:
            break
    assert k > 20  # the stops did reach every kind of call


def test_the_cleanup_command_names_each_layer_the_reason_and_the_sessions_due(tmp_path, monkeypatch):
    home, cwd = tmp_path / "claude", tmp_path / "work"
    _settings(home / "settings.json", {"cleanupPeriodDays": 60})
    _settings(cwd / ".claude" / "settings.json", {"cleanupPeriodDays": 7})
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    monkeypatch.chdir(cwd)
    root = tmp_path / "root"
    shutil.copytree(SAMPLES, root)
    before = tree_hashes(root)
    sessions = sorted(p for p in root.rglob("*.jsonl") if "subagents" not in p.parts)
    old, soon = sessions[0], sessions[1]
    for p in root.rglob("*"):
        t = time.time() + 3600
        os.utime(p, (t, t))  # fresh: due just after the week
    before = tree_hashes(root)
    for p, age in ((old, 8), (soon, 3)):
        t = time.time() - age * DAY
        os.utime(p, (t, t))
    code, out, err = run("cleanup", str(root), "--release", "2.1.332", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["days"] == 7 and rep["rules"] == "2.1.332" and "project settings" in rep["source"]
    assert [ly["state"] for ly in rep["layers"][:3]] == ["read", "read", "absent"]
    assert rep["next_start"] == [str(old)] and [d["path"] for d in rep["within_7_days"]] == [str(soon)]
    code, out, _ = run("cleanup", str(root), "--release", "2.1.332")
    assert "cleanupPeriodDays 7 from project settings" in out and "Due: 1 of" in out and str(old) in out
    # started elsewhere, the project's setting is not read: the user's 60 days
    code, out, _ = run("cleanup", str(root), "--release", "2.1.332", "--cwd", str(tmp_path), "--json")
    assert json.loads(out)["days"] == 60 and json.loads(out)["next_start"] == []
    # a broken local file: 2.1.332 skips, and stats says nothing is due
    _settings(cwd / ".claude" / "settings.local.json", b"{")
    code, out, _ = run("cleanup", str(root), "--release", "2.1.332")
    assert "Skipped:" in out and "settings.local.json" in out and "Nothing of the" in out
    assert run("cleanup", str(root), "--release", "two")[0] == 2
    assert tree_hashes(root) == before  # read only (hashes of content; the times were set above)
