"""Compaction strategies (§6–§8), the shared invariants, saving, and the command line."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime, timedelta

import orjson
import pytest
from builders import assistant, system, tool_result, tool_use, user
from helpers import SAMPLES, copied_sample, jsonl, sample_as_release, sample_session, sha256, tree_hashes, write_jsonl
from helpers import run_cli as run

from inspector.compact import (
    CompactError,
    CompactRequest,
    KeepConfig,
    MicrocompactParams,
    SessionMemoryParams,
    compact,
    make_slice,
)
from inspector.compact.base import RecordFactory, format_compact_summary
from inspector.compact.invariants import adjust_index_to_preserve_api_invariants, calculate_messages_to_keep_index
from inspector.compact.session_memory import template_text, truncate_for_compact
from inspector.compact.summary_compact import is_pivot_candidate
from inspector.edit import SaveError, save
from inspector.edit.files import write_atomic
from inspector.tokens.estimate import CLEARED_MARKER
from inspector.transcript.session import Session

WEATHERLY = SAMPLES / "-home-ann-work-weatherly"


def ids():
    n = iter(range(10**6))
    return lambda: f"00000000-0000-4000-8000-{next(n):012d}"


def factory(s):
    return RecordFactory(s, new_id=ids(), now=datetime(2026, 11, 1, tzinfo=UTC))


# -- invariants (§7.4, §7.5) ------------------------------------------------------------------


def _recs(tmp_path, recs):
    return Session.load(write_jsonl(tmp_path / "x.jsonl", recs)).records


def test_adjust_keeps_tool_pairs_and_fragments(tmp_path):
    recs = _recs(
        tmp_path,
        [
            user("u1", None),
            assistant("t", "u1", [{"type": "thinking", "thinking": "x", "signature": "s"}], mid="m1"),
            assistant("a1", "t", [tool_use("t1")], mid="m1"),
            assistant("a2", "a1", [tool_use("t2")], mid="m1"),
            tool_result("r1", "a1", "t1"),
            tool_result("r2", "a2", "t2"),
            assistant("b", "r2", mid="m2"),
        ],
    )
    assert adjust_index_to_preserve_api_invariants(recs, 5) == 1  # r2 needs a2, a2 shares m1 with t and a1
    assert adjust_index_to_preserve_api_invariants(recs, 6) == 6
    assert adjust_index_to_preserve_api_invariants(recs, 0) == 0


def test_keep_index_rules(tmp_path):
    recs = _recs(tmp_path, [user(f"u{i}", None, f"msg {i}") for i in range(10)])
    tok = {i: 3000 for i in range(10)}
    # resumed-session rule: built back from the end until >= 10k tokens and >= 5 text messages
    assert calculate_messages_to_keep_index(recs, 9, tok.__getitem__) == 5
    assert calculate_messages_to_keep_index(recs, 9, tok.__getitem__, KeepConfig(min_tokens=1000, min_text_block_messages=1)) == 9
    # max tokens caps the backward growth
    assert calculate_messages_to_keep_index(recs, 9, {i: 30_000 for i in range(10)}.__getitem__) == 8
    # a last-summarized index: everything after it is kept if it already meets the minimums
    assert calculate_messages_to_keep_index(recs, 2, tok.__getitem__) == 3
    assert calculate_messages_to_keep_index([], 0, tok.__getitem__) == 0


def test_keep_index_never_crosses_a_boundary(tmp_path):
    recs = _recs(tmp_path, [user("a", None), system("b", None, "compact_boundary"), user("c", "b"), user("d", "c")])
    assert calculate_messages_to_keep_index(recs, 3, lambda i: 1) == 2


def test_format_compact_summary():
    raw = "<analysis>\nthinking\n</analysis>\n\n\n<summary>\n  1. A:\n   x\n\n\n\n2. B:\n</summary>\ntrailing"
    assert format_compact_summary(raw) == "Summary:\n1. A:\n   x\n\n2. B:\ntrailing"


def test_truncate_for_compact():
    text = "# A\n_d_\n" + "line\n" * 3000 + "# B\n_e_\nshort\n"
    out, truncated = truncate_for_compact(text)
    assert truncated and "[... section truncated for length ...]" in out and out.rstrip().endswith("short")
    assert truncate_for_compact(template_text())[1] is False


# -- microcompact (§6.1) ----------------------------------------------------------------------


def _mc_session(tmp_path, n=8):
    recs = [user("u0", None, "read everything", sec=0)]
    parent = "u0"
    for k in range(n):
        recs += [
            assistant(
                f"a{k}", parent, [tool_use(f"t{k}", "Read" if k != 2 else "Task", {"file_path": f"/w/f{k}.py"})], sec=2 * k + 1
            ),
            tool_result(f"r{k}", f"a{k}", f"t{k}", "y" * 4000, sec=2 * k + 2),
        ]
        parent = f"r{k}"
    recs.append(assistant("end", parent, sec=59))
    return Session.load(write_jsonl(tmp_path / "proj" / "mc.jsonl", recs))


def test_microcompact_clears_all_but_the_most_recent(tmp_path):
    s = _mc_session(tmp_path)
    last = datetime(2026, 4, 2, 9, 0, 59, tzinfo=UTC)
    r = compact(
        s,
        CompactRequest("microcompact", microcompact_params=MicrocompactParams(now=last + timedelta(minutes=61))),
        factory=factory(s),
    )
    assert r.noop is None
    assert r.cleared_tool_results == ("t0", "t1")  # t2 is a Task (not compactable); t3..t7 are the 5 most recent
    assert r.cleared_tokens == {"t0": 1000, "t1": 1000}
    assert r.tokens_after < r.tokens_before
    cleared = [v for v in r.view if v.origin == "cleared"]
    assert [c.body["message"]["content"][0]["content"] for c in cleared] == [CLEARED_MARKER, CLEARED_MARKER]
    assert r.new_records[0]["subtype"] == "microcompact_boundary"


def test_microcompact_gap_and_keep_recent(tmp_path):
    s = _mc_session(tmp_path)
    last = datetime(2026, 4, 2, 9, 0, 59, tzinfo=UTC)
    r = compact(s, CompactRequest("microcompact", microcompact_params=MicrocompactParams(now=last + timedelta(minutes=30))))
    assert r.noop and "under the 60 min threshold" in r.noop and not r.changed
    r = compact(
        s,
        CompactRequest(
            "microcompact", microcompact_params=MicrocompactParams(now=last + timedelta(minutes=30), force=True, keep_recent=0)
        ),
    )
    assert len(r.cleared_tool_results) == 6  # keep max(1, 0) = 1 of the 7 Reads


# -- session memory (§7) ----------------------------------------------------------------------


def test_session_memory_uses_summary_md_and_keeps_a_window(tmp_path):
    s = Session.load(sample_as_release("Fix forecast", tmp_path, "2.1.88"))  # a release that puts kept messages back
    b = next(i for i, r in enumerate(s.records) if r.is_compact_boundary)
    point = s.records[b].logical_parent  # compact the session as it was just before its auto-compaction
    r = compact(s, CompactRequest("session-memory", at=point), factory=factory(s))
    assert r.strategy == "session-memory" and r.fallback is None and r.noop is None
    assert r.summary.startswith("This session is being continued") and "Recent messages are preserved verbatim." in r.summary
    assert "# Current State" in r.summary and "Fix weatherly forecast crash" in r.summary
    boundary, summary = r.new_records
    seg = boundary["compactMetadata"]["preservedSegment"]
    assert seg == {"headUuid": r.kept_uuids[0], "anchorUuid": summary["uuid"], "tailUuid": r.kept_uuids[-1]}
    assert boundary["compactMetadata"]["trigger"] == "auto" and boundary["logicalParentUuid"] == point
    kept = [s.records[s.conversation.by_uuid[u]] for u in r.kept_uuids]
    assert not {t for k in kept for t in k.tool_results} - {t for k in kept for t, _ in k.tool_uses}
    assert r.tokens_after < r.tokens_before


def test_session_memory_empty_template_falls_back_to_full(workdir):
    p = next((workdir / "-home-ann-work-weatherly").glob("*.jsonl"))
    s = Session.load(p)
    s.memory_path.parent.mkdir(parents=True, exist_ok=True)
    if s.memory_path.exists():
        s.memory_path.unlink()
    s.memory_path.write_text(template_text())
    b = next((i for i, rec in enumerate(s.records) if rec.is_compact_boundary), None)
    r = compact(s, CompactRequest("session-memory", at=s.records[b].logical_parent if b is not None else None))
    assert r.strategy == "full" and "empty template" in r.fallback


def test_session_memory_without_notes_writes_the_template_sections(tmp_path):
    recs = [user("u0", None, "x" * 400, sec=0)]
    parent = "u0"
    for k in range(30):
        recs += [
            assistant(f"a{k}", parent, [{"type": "text", "text": f"step {k} " + "z" * 3000}], sec=k + 1),
        ]
        recs += [user(f"u{k + 1}", f"a{k}", f"next {k}", sec=k + 1)]
        parent = f"u{k + 1}"
    s = Session.load(write_jsonl(tmp_path / "p" / "s.jsonl", recs))
    r = compact(s, "session-memory")
    assert r.strategy == "session-memory" and r.session_memory.count("\n# ") == 9
    assert any("written by the offline summarizer" in n for n in r.notes)
    with pytest.raises(CompactError, match="not in the slice"):
        compact(s, CompactRequest("session-memory", session_memory_params=SessionMemoryParams(last_summarized_uuid="nope")))


# -- partial and full (§8) --------------------------------------------------------------------


def test_partial_from_and_up_to(tmp_path):
    s = Session.load(sample_as_release("history command", tmp_path, "2.1.88"))  # a release that puts kept messages back
    sl = make_slice(s, s.records[next(i for i, r in enumerate(s.records) if r.is_compact_boundary)].logical_parent)
    prompts = [s.records[i].uuid for i in sl.messages if is_pivot_candidate(sl, i)]
    assert len(prompts) >= 3
    at = sl.uuid(sl.point)
    pivot = prompts[1]
    r = compact(s, CompactRequest("partial", at=at, pivot=pivot, direction="from"), factory=factory(s))
    boundary, summary = r.new_records
    assert r.kept_uuids and r.kept_uuids[-1] == boundary["logicalParentUuid"]
    assert boundary["compactMetadata"]["preservedSegment"]["anchorUuid"] == boundary["uuid"]
    assert summary["summarizeMetadata"]["direction"] == "from" and [v.origin for v in r.view][-1] == "summary"
    assert pivot in r.summarized_uuids and pivot not in r.kept_uuids
    r2 = compact(s, CompactRequest("partial", at=at, pivot=pivot, direction="up_to"), factory=factory(s))
    b2, s2 = r2.new_records
    assert b2["compactMetadata"]["preservedSegment"]["anchorUuid"] == s2["uuid"] and r2.kept_uuids[0] == pivot
    assert [v.origin for v in r2.view][0] == "summary"
    assert "8. Work Completed:" in r2.summary
    with pytest.raises(CompactError, match="nothing to summarize"):
        compact(s, CompactRequest("partial", at=at, pivot=prompts[0], direction="up_to"))
    tool_res = next(s.records[i].uuid for i in sl.messages if s.records[i].tool_results)
    with pytest.raises(CompactError, match="not a user message"):
        compact(s, CompactRequest("partial", at=at, pivot=tool_res))
    with pytest.raises(CompactError, match="is not a message"):
        compact(s, CompactRequest("partial", at=at, pivot="no-such-uuid"))


@pytest.mark.parametrize(
    ("title", "version", "request_kw"),
    [
        ("Fix forecast", "2.1.39", {"strategy": "session-memory"}),
        ("history command", "2.1.20", {"strategy": "partial", "direction": "from"}),
        ("history command", "2.1.20", {"strategy": "partial", "direction": "up_to"}),
    ],
)
def test_a_release_before_2_1_76_resumes_a_compaction_without_the_messages_it_kept(tmp_path, title, version, request_kw):
    """Before 2.1.76 Claude Code reads no preservedSegment when it loads a session (the conformance round trip: 2.1.74
    and 2.1.75 sent a saved "summarize from here" without the messages before the pivot, 2.1.76 with them; 2.1.41 a
    saved session-memory compaction without the messages it kept): the preview is what a resume sends, and says so;
    saved, its chain is the boundary and the summary."""
    s = Session.load(copied_sample(title, tmp_path / "old"))
    assert s.version == version
    b = next(i for i, r in enumerate(s.records) if r.is_compact_boundary)
    sl = make_slice(s, s.records[b].logical_parent)
    kw = dict(request_kw, at=sl.uuid(sl.point))
    if kw["strategy"] == "partial":
        kw["pivot"] = [s.records[i].uuid for i in sl.messages if is_pivot_candidate(sl, i)][1]
    r = compact(s, CompactRequest(**kw), factory=factory(s))
    boundary = r.new_records[0]
    assert "preservedSegment" in boundary["compactMetadata"]  # written for a later release that reads it
    assert r.kept_uuids == () and [v.origin for v in r.view] == ["summary"]
    assert any(f"Claude Code {version} does not put the" in n and "the summary alone" in n for n in r.notes)
    saved = Session.load(save(s, r).path)
    assert [saved.records[i].uuid for i in saved.conversation.chain] == [boundary["uuid"], r.new_records[1]["uuid"]]
    # the same session as 2.1.88 wrote it: the messages kept are put back, before or after the summary
    s88 = Session.load(sample_as_release(title, tmp_path / "new", "2.1.88"))
    r88 = compact(s88, CompactRequest(**kw), factory=factory(s88))
    assert r88.kept_uuids and [v.origin for v in r88.view].count("kept") >= 1
    if kw.get("direction") != "up_to":  # ("up to here", a what-if before 2.1.159, is not saved there: its checks fail)
        saved88 = Session.load(save(s88, r88).path)
        assert set(r88.kept_uuids) <= {saved88.records[i].uuid for i in saved88.conversation.chain}


def test_full_manual_and_instructions():
    s = Session.load(sample_session("Fix forecast"))
    r = compact(s, CompactRequest("full", instructions="Focus on the tests"), factory=factory(s))
    types = [(x["type"], x.get("subtype")) for x in r.new_records]
    assert types == [("system", "compact_boundary"), ("user", None), ("user", None), ("user", None), ("user", None)]
    assert r.new_records[0]["compactMetadata"]["trigger"] == "manual"
    assert "<command-name>/compact</command-name>" in r.new_records[3]["message"]["content"]
    assert "Summary instructions given: Focus on the tests" in r.summary
    assert "Please continue the conversation" not in r.summary  # manual: no continuation directive
    assert "6. All user messages:" in r.summary and "Don't catch it in the CLI" in r.summary
    assert r.tokens_after < r.tokens_before


# -- saving -----------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["full", "session-memory", "partial", "microcompact"])
def test_save_round_trip(workdir, strategy):
    p = next(
        x for x in (workdir / "-home-ann-work-weatherly").glob("*.jsonl") if Session.load(x).title.startswith("Fix forecast")
    )
    before = tree_hashes(workdir)
    s = Session.load(p)
    b = next(i for i, r in enumerate(s.records) if r.is_compact_boundary)
    at = s.records[b].logical_parent
    kw: dict = {"at": at}
    if strategy == "partial":
        sl = make_slice(s, at)
        kw["pivot"] = [s.records[i].uuid for i in sl.messages if is_pivot_candidate(sl, i)][1]
    elif strategy == "microcompact":
        kw["microcompact_params"] = MicrocompactParams(force=True)
    r = compact(s, CompactRequest(strategy, **kw))
    res = save(s, r)
    after = tree_hashes(workdir)
    assert {k: v for k, v in after.items() if k in before} == before  # nothing existing changed
    saved = Session.load(res.path)
    assert saved.session_id == res.session_id and res.verification.ok
    chain = [saved.records[i].uuid for i in saved.conversation.chain]
    if strategy != "microcompact":
        assert chain[0] == r.new_records[0]["uuid"] and set(r.kept_uuids) <= set(chain)
        assert saved.records[saved.conversation.chain[0]].is_compact_boundary
    assert all(rec.session_id in (res.session_id, None) for rec in saved.records)
    assert f"claude --resume {res.session_id}" in res.resume_command
    if strategy == "microcompact":
        assert (res.path.with_suffix("") / "tool-results").is_dir()  # the persisted outputs it references
    if strategy == "session-memory":
        assert (res.path.with_suffix("") / "session-memory" / "summary.md").read_text() == r.session_memory
    assert not [x for x in res.path.parent.iterdir() if x.name.startswith(".inspector-")]


def test_save_never_overwrites_and_cleans_up_on_failure(workdir, monkeypatch):
    p = next((workdir / "-home-ann-work-weatherly").glob("*.jsonl"))
    s = Session.load(p)
    r = compact(s, "full")
    existing = workdir / "exists.jsonl"
    existing.write_text("keep me")
    with pytest.raises(SaveError, match="already exists"):
        save(s, r, out=existing)
    assert existing.read_text() == "keep me"
    h = sha256(p)
    with pytest.raises(SaveError, match="already exists"):
        save(s, r, out=p)  # the original itself
    assert sha256(p) == h
    target = workdir / "new.jsonl"

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    with pytest.raises(SaveError, match="No space left"):
        write_atomic(target, [b"x" * 10], fsync=disk_full)
    assert not target.exists() and not [x for x in workdir.iterdir() if x.name.startswith(".inspector-")]


def test_nothing_to_save_is_an_error(tmp_path):
    s = _mc_session(tmp_path)
    r = compact(
        s, CompactRequest("microcompact", microcompact_params=MicrocompactParams(now=datetime(2026, 4, 2, 9, 5, tzinfo=UTC)))
    )
    with pytest.raises(SaveError, match="nothing to save"):
        save(s, r)


# -- command line -----------------------------------------------------------------------------


def test_cli_compact_json_and_write(workdir):
    p = next(
        x for x in (workdir / "-home-ann-work-weatherly").glob("*.jsonl") if Session.load(x).title.startswith("Fix forecast")
    )
    h = sha256(p)
    code, out, err = run("compact", p, "--strategy", "full", "--json")
    assert code == 0, err
    d = orjson.loads(out)
    assert set(d) >= {
        "strategy",
        "tokens_before",
        "tokens_after",
        "cleared_tool_results",
        "summarized_uuids",
        "kept_uuids",
        "summary",
        "fallback",
        "written",
    }
    assert d["written"] is None and d["tokens_after"] < d["tokens_before"]
    code, out, err = run("compact", p, "--strategy", "full", "--write")
    assert code == 0, err
    # a folder Claude Code does not look in: where to copy it, then the command
    assert "Saved" in out and "copy it to its projects folder as" in out and "-home-ann-work-weatherly/" in out
    assert "then: cd /home/ann/work/weatherly && claude --resume" in out
    assert sha256(p) == h


def test_a_session_saved_in_claude_codes_projects_folder_resumes_as_is(monkeypatch, tmp_path):
    """Under the projects root, in the folder named after the cwd, `claude --resume` finds it: the command alone."""
    config = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    src = sample_session("Fix forecast")
    dst = config / "projects" / "-home-ann-work-weatherly" / src.name
    dst.parent.mkdir(parents=True)
    shutil.copyfile(src, dst)
    code, out, err = run("compact", dst, "--strategy", "full", "--write", "--json")
    assert code == 0, err
    saved = orjson.loads(out)["save"]
    assert saved["resumable"] is True and saved["resume_hint"] == saved["resume_command"]
    assert saved["resume_command"].startswith("cd /home/ann/work/weatherly && claude --resume ")


def test_a_session_saved_under_another_name_is_copied_as_its_id(monkeypatch, tmp_path):
    """`compact --write --out DIR/name.jsonl` printed `claude --resume <id>` with a copy that kept the name, which
    Claude Code never finds: even in the right folder, the file must be `<id>.jsonl`."""
    config = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    src = sample_session("Fix forecast")
    folder = config / "projects" / "-home-ann-work-weatherly"
    folder.mkdir(parents=True)
    code, out, err = run("compact", src, "--strategy", "full", "--write", "--json", "--out", folder / "mine.jsonl")
    assert code == 0, err
    saved = orjson.loads(out)["save"]
    sid = saved["session_id"]
    assert saved["resumable"] is False
    assert "under the name mine.jsonl" in saved["resume_hint"]
    assert f"cp {folder / 'mine.jsonl'} {folder / (sid + '.jsonl')}" in saved["resume_hint"]
    assert saved["resume_hint"].endswith(f"claude --resume {sid}")


def test_saving_a_bundled_sample_never_writes_into_the_package_or_the_checkout(monkeypatch, tmp_path):
    from inspector.transcript.discovery import samples_root

    root = samples_root()
    before = tree_hashes(root)
    src = next(
        p for p in root.rglob("*.jsonl") if "subagents" not in p.parts and Session.load(p).title.startswith("Fix forecast")
    )
    code, out, err = run("compact", src, "--strategy", "full", "--write", "--json")
    assert code == 0, err
    saved = orjson.loads(out)["save"]
    assert saved["path"].startswith(str(tmp_path.parent)) or "inspector/saved" in saved["path"]
    assert any("bundled samples" in n for n in saved["notes"]) and not saved["resumable"]
    assert tree_hashes(root) == before
    code, out, err = run("compact", src, "--strategy", "full", "--write", "--out", str(root / "x.jsonl"))
    assert code == 2 and "does not write inside" in err
    assert tree_hashes(root) == before


@pytest.mark.parametrize(
    "args, expect",
    [
        (["--strategy", "partial", "--at", "no-such-uuid"], "no record no-such-uuid: no uuid is or starts with it"),
        (["--strategy", "partial"], "needs a pivot"),
        (["--strategy", "full", "--at", "no-such-uuid"], "no record no-such-uuid"),
        (["--strategy", "microcompact", "--now", "yesterday"], "--now must be"),
    ],
)
def test_cli_compact_bad_arguments(args, expect):
    code, out, err = run("compact", sample_session("Fix forecast"), *args)
    assert code == 2 and expect in err and err.count("\n") == 1 and "Traceback" not in err


def test_cli_compact_needs_a_file():
    code, _, err = run("compact", SAMPLES, "--strategy", "full")
    assert code == 2 and "one session" in err


def test_cli_anthropic_without_key_sends_nothing(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    code, _, err = run("compact", sample_session("Fix forecast"), "--strategy", "full", "--summarizer", "anthropic")
    assert code == 2 and "ANTHROPIC_API_KEY" in err


def test_write_atomic_never_replaces_an_existing_file(tmp_path):
    target = tmp_path / "exists.jsonl"
    target.write_bytes(b"the user's data\n")
    with pytest.raises(SaveError, match="already exists"):
        write_atomic(target, [b"new content\n"])
    assert target.read_bytes() == b"the user's data\n"
    assert [p.name for p in tmp_path.iterdir()] == ["exists.jsonl"]  # no temporary file left


def test_a_summary_larger_than_what_it_replaces_is_never_called_a_saving(tmp_path):
    """Summarizing two short messages makes the context bigger: the preview says so, in numbers and words."""
    recs = [
        user("u0", None, "hello", sec=0),
        assistant("a0", "u0", sec=1, usage=(5, 0, 20_000, 10)),
        user("u1", "a0", "ok", sec=2),
        assistant("a1", "u1", [{"type": "text", "text": "fine"}], sec=3, usage=(5, 0, 20_020, 10)),
    ]
    p = write_jsonl(tmp_path / "p" / "s.jsonl", recs)
    res = compact(Session.load(p), CompactRequest("partial", pivot="u1", direction="from"))
    assert res.tokens_after > res.tokens_before >= 0
    assert "not a saving" in res.change_words and res.as_dict()["larger_after"] is True
    code, out, _ = run("compact", p, "--strategy", "partial", "--at", "u1")
    assert code == 0 and "larger than before, not a saving" in out and "saved" not in out.lower()


def test_tokens_after_is_never_negative_even_when_the_first_response_is_odd(tmp_path):
    """A first response whose counted size exceeds its usage (a gateway's odd usage) cannot make the overhead negative."""
    recs = [
        user("u0", None, "x " * 30_000, sec=0),
        assistant("a0", "u0", sec=1, usage=(1, 0, 2_000, 10)),
        user("u1", "a0", "ok", sec=2),
        assistant("a1", "u1", sec=3, usage=(1, 0, 2_100, 10)),
    ]
    p = write_jsonl(tmp_path / "p" / "s.jsonl", recs)
    res = compact(Session.load(p), CompactRequest("partial", pivot="u1", direction="up_to"))
    assert res.tokens_after >= 0


def test_a_saved_session_keeps_its_own_times_and_the_usual_file_mode(workdir):
    """The new records are dated just after the point they compact (not the day of the save: a session saved a year
    later does not last a year), and the files are written with the mode new files usually get (0644), as Claude
    Code's own are."""
    import stat

    from inspector.library.stats import session_stats

    src = next(
        x for x in (workdir / "-home-ann-work-weatherly").glob("*.jsonl") if Session.load(x).title.startswith("Fix forecast")
    )
    s = Session.load(src)
    res = save(s, compact(s, "full"))
    before, after = session_stats(s), session_stats(Session.load(res.path))
    assert (
        abs(
            (
                datetime.fromisoformat(after["last_timestamp"].replace("Z", "+00:00"))
                - datetime.fromisoformat(before["last_timestamp"].replace("Z", "+00:00"))
            ).total_seconds()
        )
        < 60
    )
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(res.path.stat().st_mode) == 0o666 & ~mask
    for p in res.copied:
        assert stat.S_IMODE(p.stat().st_mode) == 0o666 & ~mask


# -- pivots a user can find (issue 15.16) -------------------------------------------------------------------


def test_a_record_is_named_as_show_prints_it_and_a_bad_pivot_says_why():
    from inspector.compact import CompactError, pivot_candidates, resolve_reference

    s = Session.load(sample_session("Add a changelog"))  # a short session: prompts on lines 1 and 7, no compaction
    cands = pivot_candidates(s)
    assert [s.records[k].line for k in cands] == [1, 7]
    reply = next(k for k, r in enumerate(s.records) if r.type == "assistant")
    assert resolve_reference(s, "7", pivot=True) == s.records[cands[1]].uuid  # a line number
    assert resolve_reference(s, f"line {s.records[reply].line}") == s.records[reply].uuid
    assert resolve_reference(s, s.records[cands[0]].uuid[:8], pivot=True) == s.records[cands[0]].uuid  # a prefix
    with pytest.raises(
        CompactError,
        match=r"is a reply of the model, not a prompt you typed: not a message the rewind menu offers; the pivots here .*line "
        r"1 .*line 7",
    ):
        resolve_reference(s, str(s.records[reply].line), pivot=True)
    result = next(k for k, r in enumerate(s.records) if r.type == "user" and r.tool_results)
    with pytest.raises(CompactError, match="is a tool result"):
        resolve_reference(s, str(s.records[result].line), pivot=True)
    with pytest.raises(CompactError, match="no record on line 999: the file has"):
        resolve_reference(s, "999")
    with pytest.raises(CompactError, match="no record zzzzzzzz: no uuid is or starts with it"):
        resolve_reference(s, "zzzzzzzz")


def test_a_session_whose_prompts_are_all_before_its_last_compaction_has_no_pivot_and_says_so(tmp_path):
    """From 2.1.83 the rewind menu leaves out a compaction's summary: a session whose prompts are all before its last
    compaction has nothing to pick. 2.1.39, as every release before 2.1.83, offers the summary itself (its selector
    filter has no test of it; 2.1.36's REPL summarized from one, kept scenario found_repl_193001)."""
    from inspector.compact import CompactError, pivot_candidates, resolve_reference

    old = Session.load(sample_session("Fix forecast"))
    assert old.version == "2.1.39"
    assert [old.records[i].is_compact_summary for i in pivot_candidates(old)] == [True]
    s = Session.load(sample_as_release("Fix forecast", tmp_path, "2.1.83"))
    assert pivot_candidates(s) == []
    first_prompt = next(k for k, r in enumerate(s.records) if r.type == "user" and not r.tool_results)
    with pytest.raises(CompactError, match=r"is before the last compaction \(line \d+\).*has no pivot at all"):
        resolve_reference(s, str(s.records[first_prompt].line), pivot=True)


def test_compact_at_takes_a_line_number(tmp_path):
    path = sample_session("Add a changelog")
    code, out, err = run("compact", str(path), "--strategy", "partial", "--at", "7", "--direction", "up-to", "--json")
    assert code == 0, err
    d = jsonl(out)[0]
    s = Session.load(path)
    assert d["pivot_uuid"] == next(r.uuid for r in s.records if r.line == 7)
    code, out, err = run("compact", str(path), "--strategy", "partial", "--at", "4")
    assert code != 0 and "not a prompt you typed" in err and "line 7" in err


class _NoSummaries:
    """A summarizer that fails the test when asked: for the strategies that must never summarize."""

    def summarize(self, req, progress=None, cancel=None):
        raise AssertionError("a strategy that does not summarize asked for a summary")


def test_the_registry_runs_every_strategy_by_name_and_a_new_one_is_one_entry(tmp_path, monkeypatch):
    import inspector.compact as comp
    from inspector.compact import REGISTRY, STRATEGIES, Strategy

    assert STRATEGIES == tuple(REGISTRY) and {s.name for s in REGISTRY.values()} == set(STRATEGIES)
    s = _mc_session(tmp_path)
    for name, strategy in REGISTRY.items():
        if strategy.summarizes:
            continue
        r = compact(
            s, CompactRequest(name, microcompact_params=MicrocompactParams(force=True, keep_recent=1)), summarizer=_NoSummaries()
        )
        assert r.strategy == name
    seen = []

    def run(r):
        seen.append((r.request.strategy, r.request.instructions, r.slice.point))
        return REGISTRY["full"].run(r)

    monkeypatch.setitem(comp.REGISTRY, "newt", Strategy("newt", True, run))
    r = compact(s, CompactRequest("newt", instructions="keep the file names"))
    assert seen and seen[0][:2] == ("newt", "keep the file names") and r.new_records
    with pytest.raises(CompactError, match="unknown strategy 'nope'"):
        compact(s, "nope")
    # a bare name is the request with only a strategy
    assert compact(s, "full").summary == compact(s, CompactRequest("full")).summary is not None


def _counted_differently(tmp_path, earlier: str):
    """A session whose last prompt, after its last response, is digits: many tokens for their characters, so Claude
    Code's rough count of it (characters / 4) is far below the calibrated count."""
    digits = " ".join(str(n) for n in range(40_000))
    recs = [user("u0", None, "hello", sec=0), assistant("a0", "u0", sec=1, usage=(5, 0, 20_000, 10))]
    parent, used = "a0", 20_000
    for k in range(1, 5):
        used += 150 + len(earlier) // 4
        recs += [
            user(f"u{k}", parent, f"step {k} {earlier}", sec=2 * k),
            assistant(f"a{k}", f"u{k}", [{"type": "text", "text": "ok " * 50}], sec=2 * k + 1, usage=(5, 0, used, 10)),
        ]
        parent = f"a{k}"
    recs.append(user("u9", parent, digits, sec=20))
    return Session.load(write_jsonl(tmp_path / "p" / "s.jsonl", recs))


def test_growth_that_comes_from_counting_differently_is_not_blamed_on_the_summary(tmp_path):
    """The size before is Claude Code's estimate (the last usage plus characters / 4 of what came after it), the size
    after the calibrated one. Where a large prompt after the last response counts far higher offline than by its
    characters, the total grows though the compaction removes more than it adds: the words say so, and never that the
    summary is longer than what it replaces (a real 2.1.14 session: +25,371 with 76,278 fewer)."""
    big = _counted_differently(tmp_path / "a", "word " * 8000)  # the summarized steps weigh 8,000 tokens each
    res = compact(big, CompactRequest("partial", pivot="u9", direction="up_to"))
    assert res.tokens_after > res.tokens_before and res.records_dropped > 10_000
    assert "counted alike" in res.change_words and "summary is longer" not in res.change_words
    assert "larger after" in (res.accounting_words or "")  # the rest grew: said, with the two ways of counting
    # summarizing short steps: the summary does add a little, the counting the most: both said, with their sizes
    small = _counted_differently(tmp_path / "b", "x" * 400)
    res = compact(small, CompactRequest("partial", pivot="u9", direction="up_to"))
    d, dropped = res.tokens_after - res.tokens_before, res.records_dropped
    assert d > 0 and dropped < 0 and d + dropped > 10_000
    assert f"{-dropped:,} longer" in res.change_words and f"other {d + dropped:,}" in res.change_words


def test_summarize_up_to_here_is_a_what_if_before_2_1_141():
    """ "Summarize up to here" is in the rewind menu of every release from 2.1.141 (2.1.140's binary has no such item,
    2.1.150's REPL summarized up to a prompt; the 2.1.36 REPL offered "Summarize from here" only, generated seed 193003),
    so before it the workbench's "up to" is a what-if, and after it is not, in the 2.1.75 era as in the engine's."""
    from inspector.claude.versions import releases_with, rules_for, what_if

    assert releases_with("partial-up-to") == "2.1.141 and later"
    for v, who in (("2.1.36", "2.1.21 – 2.1.74"), ("2.1.88", "2.1.88"), ("2.1.140", "2.1.140")):
        r = rules_for(v)
        assert f"Claude Code {who} does not do" in (what_if("partial-up-to", r.era, r.version) or ""), v
    for v in ("2.1.141", "2.1.150", "2.1.155", "2.1.174", "2.1.332"):
        r = rules_for(v)
        assert what_if("partial-up-to", r.era, r.version) is None, v


def test_summarize_from_here_is_a_what_if_before_2_1_32():
    """ "Summarize from here" first appears in 2.1.32's code (its menu item and messagesSummarized; 2.1.31's and
    2.1.20's have neither): the workbench offers it on an older session as a what-if, and says which releases had it."""
    from inspector.claude.versions import releases_with, rules_for, what_if

    assert releases_with("partial-from") == "2.1.32 and later"
    for v, said in (("2.1.20", "Claude Code 2.0.0 – 2.1.20 does not do"), ("2.1.31", "Claude Code 2.1.31 does not do")):
        r = rules_for(v)
        assert said in (what_if("partial-from", r.era, r.version) or "")
    for v in ("2.1.32", "2.1.74", "2.1.88"):
        r = rules_for(v)
        assert what_if("partial-from", r.era, r.version) is None
    s = Session.load(sample_session("history command"))  # written by 2.1.20
    sl = make_slice(s, s.records[next(i for i, r in enumerate(s.records) if r.is_compact_boundary)].logical_parent)
    pivot = [s.records[i].uuid for i in sl.messages if is_pivot_candidate(sl, i)][1]
    res = compact(s, CompactRequest("partial", at=sl.uuid(sl.point), pivot=pivot), factory=factory(s))
    assert res.what_if and "2.1.32 and later" in res.what_if


@pytest.mark.parametrize("version, relisted", [("2.1.303", False), ("2.1.304", True), ("2.1.332", True)])
def test_the_skills_are_listed_again_after_a_compaction_from_2_1_304(tmp_path, version, relisted):
    """A compaction writes the session's skill listing again after its boundary from 2.1.304 (bisected with generated
    seed 147100: 2.1.163, 2.1.200, 2.1.300 and 2.1.303 write the file, agent, environment and model attachments and no
    skill listing; 2.1.304-2.1.328 write one): the same session, as each release wrote it."""
    from builders import attachment

    listing = "- review: Review a pull request\n- test: Run the tests"
    recs = [
        attachment("sk", None, {"type": "skill_listing", "content": listing}, rendered=listing, version=version),
        user("u0", "sk", "run the checks", sec=1, version=version),
    ]
    parent = "u0"
    for k in range(1, 7):
        recs.append(
            assistant(
                f"a{k}",
                parent,
                [{"type": "text", "text": f"Step {k} done."}],
                sec=2 * k,
                version=version,
                usage=(1, 0, 20_000 * k, 10),
            )
        )
        recs.append(user(f"u{k}", f"a{k}", f"continue {k}", sec=2 * k + 1, version=version))
        parent = f"u{k}"
    s = Session.load(write_jsonl(tmp_path / "p" / "s.jsonl", recs))
    res = compact(s, CompactRequest("compact"))
    kinds = [(b.get("attachment") or {}).get("type") for b in res.new_records if b.get("type") == "attachment"]
    assert ("skill_listing" in kinds) is relisted, kinds


def _five_bash_rounds(parent, version):
    """Five rounds of one Bash call and its result, written by `version`, after the record `parent`."""
    recs = []
    for k in range(1, 6):
        call = tool_use(f"t{k}", "Bash", {"command": f"echo {k}"})
        recs.append(assistant(f"a{k}", parent, [call], sec=2 * k, version=version, usage=(1, 0, 20_000 * k, 10)))
        recs.append(tool_result(f"r{k}", f"a{k}", f"t{k}", f"{k}", sec=2 * k + 1, version=version))
        parent = f"r{k}"
    return recs


def _summary_of_a_bash_session(tmp_path, version):
    """A compaction (keeping the last round) of five Bash calls written by `version`, and its summary message's text."""
    recs = [user("u0", None, "run the checks", sec=1, version=version)]
    recs += _five_bash_rounds("u0", version)
    res = compact(Session.load(write_jsonl(tmp_path / "p" / "s.jsonl", recs)), CompactRequest("compact"))
    summary = next(b for b in res.new_records if b.get("isCompactSummary"))
    content = summary["message"]["content"]
    return res, content if isinstance(content, str) else content[0]["text"]


@pytest.mark.parametrize(
    "version, form",
    [("2.1.303", None), ("2.1.304", "bare"), ("2.1.310", "bare"), ("2.1.311", "reminder"), ("2.1.332", "reminder")],
)
def test_the_tools_used_are_listed_in_the_summary_as_the_release_writes_them(tmp_path, version, form):
    """The summary message lists the tools used before it from 2.1.304 (a bare tag), in a system reminder from
    2.1.311 (bisected with generated seed 147100: none on 2.1.163-2.1.303; the bare tag on 2.1.304-2.1.310)."""
    res, text = _summary_of_a_bash_session(tmp_path, version)
    assert res.summary is not None
    tag = "<tools-used-before-summary>Bash</tools-used-before-summary>"
    assert (tag in text) is (form is not None), text[:300]
    assert (f"<system-reminder>\n{tag}" in text) is (form == "reminder"), text[:300]


@pytest.mark.parametrize("version, said", [("2.1.292", False), ("2.1.293", True), ("2.1.332", True)])
def test_the_paragraph_on_the_kept_records_ends_the_summary_from_2_1_293(tmp_path, version, said):
    """A compaction that keeps a tail ends its summary with the paragraph on the records kept after it from 2.1.293
    (bisected with generated seed 147100: 2.1.292 and earlier end it at the continuation directive)."""
    from inspector.compact.engine import KEPT_AFTER

    res, text = _summary_of_a_bash_session(tmp_path, version)
    assert res.kept_uuids
    assert text.endswith(KEPT_AFTER) is said, text[-200:]


def _at(version, patch):
    """`version` is 2.1.`patch` or later."""
    return tuple(map(int, version.split("."))) >= (2, 1, patch)


def _bash_session_with_listing(tmp_path, version, rendered):
    """Five Bash rounds written by `version`, with an agent listing (rendered as 2.1.268+ records it, or not)."""
    from builders import attachment

    listing = {"type": "agent_listing_delta", "addedLines": ["- Explore: Fast search"], "addedTypes": ["Explore"]}
    text = "<system-reminder>\nAvailable agent types for the Agent tool:\n- Explore: Fast search\n</system-reminder>"
    recs = [
        attachment("al", None, listing, rendered=text if rendered else None, version=version),
        user("u0", "al", "run the checks", sec=1, version=version),
    ]
    recs += _five_bash_rounds("u0", version)
    return Session.load(write_jsonl(tmp_path / "p" / "s.jsonl", recs))


@pytest.mark.parametrize(
    "version, caveat",
    [("2.1.200", "Caveat: The messages below"), ("2.1.284", "Caveat: The messages below"), ("2.1.285", "The command below")],
)
def test_the_compact_commands_caveat_is_worded_as_the_release_wrote_it(tmp_path, version, caveat):
    """The caveat before a /compact's own messages: 2.1.88's wording up to 2.1.284, the newer one from 2.1.285
    (bisected with generated seed 147100 over 2.1.200-2.1.328)."""
    res = compact(_bash_session_with_listing(tmp_path, version, rendered=_at(version, 268)), CompactRequest("compact"))
    metas = [b for b in res.new_records if b.get("type") == "user" and b.get("isMeta")]
    texts = [b["message"]["content"] for b in metas if "local-command-caveat" in str(b["message"]["content"])]
    assert len(texts) == 1 and texts[0].startswith(f"<local-command-caveat>{caveat}"), texts


@pytest.mark.parametrize(
    "version, written",
    [("2.1.267", []), ("2.1.268", ["date"]), ("2.1.269", ["session_context", "date"]), ("2.1.332", ["session_context", "date"])],
)
def test_an_automatic_compaction_records_the_sessions_context_as_the_release_did(tmp_path, version, written):
    """What an automatic compaction writes of the session's context (bisected with seed 147100): nothing up to
    2.1.267 (its requests carry the user context in no record), the date from 2.1.268, the session context from
    2.1.269; the date's reminder role from 2.1.285."""
    s = _bash_session_with_listing(tmp_path, version, rendered=_at(version, 268))
    res = compact(s, CompactRequest("compact", trigger="auto"))
    kinds = [(b.get("attachment") or {}).get("type") for b in res.new_records if b.get("type") == "attachment"]
    assert [k for k in kinds if k in ("session_context", "date")] == written, kinds
    date = next((b for b in res.new_records if (b.get("attachment") or {}).get("type") == "date"), None)
    if date is not None:
        assert ("renderedRole" in date) is _at(version, 285), date


@pytest.mark.parametrize("version", ["2.1.200", "2.1.267", "2.1.268", "2.1.332"])
def test_a_preview_before_2_1_268_says_what_the_release_adds_when_it_sends(tmp_path, version):
    """Up to 2.1.267 Claude Code puts its user context before the first message of every request and renders its
    attachments as it sends them, neither in any record (measured on 2.1.200: the round trip sent the agent listing
    and the user context that inspector's preview lacked). The preview says so and is not called exact; from 2.1.268
    it is, and a listing the release rendered into its record is among the messages sent."""
    old = not _at(version, 268)
    res = compact(_bash_session_with_listing(tmp_path, version, rendered=not old), CompactRequest("compact"))
    assert res.api_messages is not None
    assert res.api_messages_exact is (not old)
    assert res.as_dict()["api_messages_exact"] is (not old)
    notes = " ".join(res.notes)
    assert ("user context" in notes) is old
    assert ("renders attachments as it sends them" in notes and "agent_listing_delta" in notes) is old
    sent = json.dumps(res.api_messages)
    assert ("Available agent types" in sent) is (not old)
    assert res.parameters["user_context_unrecorded"] is old


@pytest.mark.parametrize("version, rounds", [("2.1.200", 1), ("2.1.309", 1), ("2.1.310", None), ("2.1.332", None)])
def test_the_tail_a_refusal_keeps_is_sized_as_the_release_sized_it(tmp_path, version, rounds):
    """A refusal by one token: up to 2.1.309 the tail is sized from the gap alone (less the last round), so the last
    round is kept; from 2.1.310 with the summarize prompt too (its ~1,600 rough tokens are more than these rounds),
    so more are kept (read in the 2.1.200, 2.1.309 and 2.1.310 binaries; generated seed 147102 kept one round of
    eight messages on 2.1.200, three to five on 2.1.328)."""
    s = _bash_session_with_listing(tmp_path, version, rendered=_at(version, 268))
    res = compact(s, CompactRequest("reactive", refused_at=100_000, prompt_tokens=100_001))
    kept = res.parameters["kept_rounds"]
    if rounds is None:
        assert kept > 1, res.notes
    else:
        assert kept == rounds, res.notes
    assert any(("summarize prompt" in n) is (rounds is None) for n in res.notes if "refused" in n)


def test_a_partial_compaction_without_a_pivot_says_which_records_can_be_one(tmp_path):
    """`inspector compact --strategy partial` without --at names the pivots the rewind menu offers (a 2.1.39 session:
    the last compaction's summary among them, as its menu offered it), not only that one is needed."""
    path = sample_session("Fix forecast")
    code, out, err = run("compact", str(path), "--strategy", "partial")
    assert code != 0 and "needs a pivot" in err
    assert "the last compaction's summary" in err and "line " in err
