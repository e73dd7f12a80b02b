"""A release that records no process's end (before 2.1.277, no cost-state record) is read as one process; where a
process resumed since the last compaction would re-attach other files, the preview says which (and the harness counts
Claude Code's choosing them as agreeing). The run: generated seed 155000 on the real 2.1.268, whose later compactions
were made by resumed processes (tests/data/gen_155000_2.1.268.tar.xz, the harness's saved run without its HOME)."""

from __future__ import annotations

from pathlib import Path

from helpers import saved_run, sha256

from conformance.replay import replay


def _run(tmp_path: Path) -> Path:
    return saved_run(tmp_path, "gen_155000_2.1.268")


def test_a_resumed_process_re_attaches_what_its_loaded_messages_wrote(tmp_path):
    folder = _run(tmp_path)
    before = {p: sha256(p) for p in (folder / "projects").rglob("*.jsonl")}
    got = {r.boundary: r for r in replay(folder)}
    assert len(got) == 5 and all(r.ok for r in got.values()), [(r.boundary, r.detail) for r in got.values() if not r.ok]
    # the threshold compaction of the process resumed with "continue" (found by its first skill listing): as Claude
    # Code made it; the /compact of the next process, which sent no prompt (no listing to find it by): Claude Code
    # re-attached what inspector's note names for a process resumed since the last compaction
    assert "the preview is what Claude Code's records send" in got[3].detail, got[3].detail
    assert "resumed since the last compaction" in got[4].detail, got[4].detail
    assert {p: sha256(p) for p in before} == before


def _cut(tmp_path: Path, folder: Path, n: int, name: str) -> Path:
    """The main transcript as it was when its n-th compaction ran."""
    (t,) = [p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts]
    lines = t.read_bytes().splitlines(keepends=True)
    cuts = [k for k, raw in enumerate(lines) if b'"compact_boundary"' in raw]
    cut = tmp_path / name / t.name
    cut.parent.mkdir()
    cut.write_bytes(b"".join(lines[: cuts[n]]))
    return cut


def _files(res) -> list[str]:
    return [Path(r["attachment"]["filename"]).name for r in res.new_records if (r.get("attachment") or {}).get("type") == "file"]


def test_the_preview_names_the_files_a_resumed_process_would_re_attach(tmp_path):
    from inspector.compact import CompactRequest, compact
    from inspector.tokens.context import process_exits
    from inspector.transcript.session import Session

    folder = _run(tmp_path)
    # the fourth compaction: its process began with a skill listing marked initial (2.1.268 records no process's
    # end), so its files are what that process restored from its loaded messages
    s = Session.load(_cut(tmp_path, folder, 3, "fourth"))
    assert len(process_exits(s)) == 1
    res = compact(s, CompactRequest("compact", trigger="auto"))
    assert _files(res) == ["out14.txt", "out10.txt"] and res.parameters["reattached_if_resumed"] is None
    # the fifth, a /compact by a process that sent no prompt: read as the one before it, the note names the other
    res = compact(
        Session.load(_cut(tmp_path, folder, 4, "fifth")), CompactRequest("compact", instructions="keep the step numbers")
    )
    names = [Path(f).name for f in res.parameters["reattached_if_resumed"]]
    assert names == ["f3.txt"] and _files(res) != names
    assert any("records no process's end" in n and "f3.txt" in n for n in res.notes)
    # the same file from a release that records its processes' ends (none here: one process) has no such alternative
    cut = _cut(tmp_path, folder, 4, "later")
    cut.write_bytes(cut.read_bytes().replace(b'"version":"2.1.268"', b'"version":"2.1.277"'))
    res = compact(Session.load(cut), CompactRequest("compact", instructions="keep the step numbers"))
    assert res.parameters["reattached_if_resumed"] is None
    assert not any("records no process's end" in n for n in res.notes)


def test_a_process_resumed_with_another_model_compacts_for_its_own(tmp_path):
    """Generated seed 159003 on the real 2.1.238: settings give claude-sonnet-5 a 120,000 auto-compact window through
    modelSettings, which 2.1.238 does not read (from 2.1.288, bisected); the third compaction was made by a process
    resumed with claude-sonnet-5 at 262,024 tokens, right after claude-mythos-5-2's replies (a model unknown to
    2.1.238, whose threshold is not enforced): it is the threshold of claude-sonnet-5, the model of the request it
    was made for, not a larger window (inspector said so, refuted by mythos's replies above sonnet's threshold) nor a
    refusal (mythos's rules)."""
    from conformance.compare import compare
    from conformance.replay import _settings  # what the run had: its environment, settings and the fake's host
    from inspector.tokens.explain import analyze
    from inspector.transcript.session import Session

    folder = saved_run(tmp_path, "gen_159003_2.1.238")
    row = compare(folder)
    # every compaction's cause agrees with Claude Code's (the second, a refusal, told by the two rounds it kept)
    assert not [n for n in row.notes if n.startswith(("compactions:", "threshold:", "window source:"))], row.notes
    (main,) = [p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts and p.stat().st_size > 1000]
    causes = [(e.cause, e.pre_tokens) for e in analyze(Session.load(main), _settings(folder)).compactions if e.kind == "auto"]
    assert ("threshold", 262_024) in causes and ("prompt_too_long", 137_152) in causes, causes


def test_a_process_resumed_with_an_announced_model_compacts_for_its_own(tmp_path):
    """Seed 9603 on the real 2.1.273, which announces each process's model: claude-opus-4-5's replies went to 275,000
    (its threshold not enforced), then a process resumed with claude-sonnet-5 announced it and compacted at once, at
    275,065, and again at 209,065 after claude-sonnet-4-0's replies: each at claude-sonnet-5's threshold of 167,000,
    which the other models' replies above it do not refute (inspector had said a larger window than assumed)."""
    from conformance.compare import compare
    from conformance.replay import _settings  # what the run had: its environment, settings and the fake's host
    from inspector.tokens.explain import analyze
    from inspector.transcript.session import Session

    folder = saved_run(tmp_path, "found_9603_2.1.273")
    row = compare(folder)
    assert not [n for n in row.notes if n.startswith(("compactions:", "threshold:", "window source:"))], row.notes
    (main,) = [p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts]
    exps = [e for e in analyze(Session.load(main), _settings(folder)).compactions if e.kind == "auto"]
    assert [(e.cause, e.pre_tokens, e.threshold) for e in exps[:2]] == [
        ("threshold", 275_065, 167_000),
        ("threshold", 209_065, 167_000),
    ], [e.cause_evidence for e in exps]


def test_the_harness_reads_a_forks_thresholds_from_the_fork_where_no_copy_is_marked(tmp_path):
    """Generated seed 172002 on the real 2.1.250: a session on claude-foo-1 (an unknown model: its 200,000 window
    enforced, CLAUDE_CODE_MAX_CONTEXT_TOKENS=200000), resumed on claude-sonnet-4-0, then forked on claude-foo-1. The
    thresholds in force at the end are the fork's process's, which no record of 2.1.250 marks as a fork: the harness
    finds it by the copied records' uuids (it had compared the source, claude-sonnet-4-0, unenforced)."""
    from conformance.compare import compare

    folder = saved_run(tmp_path, "gen_172002_2.1.250")
    row = compare(folder)
    assert not [n for n in row.notes if n.startswith(("compactions:", "threshold:", "window source:"))], row.notes


def test_a_fork_that_begins_with_a_compaction_began_a_process_after_its_copy(tmp_path):
    """2.1.3xx's --fork-session copies the records since the last compaction, its boundary first; before 2.1.332
    nothing marks them copied (2.1.300 seed 160003): the copy is the records stamped before the file's first write,
    and the fork's process began after them (it re-attached none of the files the copied compaction had). A file of
    its own whose first records are stamped a millisecond apart out of order is not taken for a fork."""
    from builders import assistant, user
    from helpers import write_jsonl

    from inspector.tokens.context import fork_copy_end
    from inspector.transcript.session import Session

    def at(sec: float) -> str:
        return f"2026-12-07T05:36:{sec:06.3f}Z"

    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": "b0",
        "parentUuid": None,
        "timestamp": at(17.614),
        "compactMetadata": {"trigger": "auto", "preTokens": 100_000},
    }
    summary = {**user("s0", "b0", "This session is being continued"), "isCompactSummary": True, "timestamp": at(17.604)}
    kept = {**assistant("k0", "s0"), "timestamp": at(17.029)}
    own = {**user("u1", "k0", "go on in a fork"), "timestamp": at(18.634)}
    reply = {**assistant("a1", "u1"), "timestamp": at(18.700)}
    queue = {"type": "queue-operation", "operation": "enqueue", "timestamp": at(18.586), "content": "go on in a fork"}
    fork = Session.load(write_jsonl(tmp_path / "f" / "fork.jsonl", [queue, boundary, summary, kept, own, reply]))
    assert fork_copy_end(fork) == 3  # the kept reply, the copy's last record
    prompt = {**user("u0", None, "hi"), "timestamp": at(10.002)}
    early = {**assistant("a0", "u0"), "timestamp": at(10.001)}
    alone = Session.load(
        write_jsonl(tmp_path / "o" / "own.jsonl", [prompt, early, {**user("u2", "a0", "more"), "timestamp": at(11.0)}])
    )
    assert fork_copy_end(alone) is None


def test_a_fork_of_a_session_with_no_compaction_began_a_process_after_its_copy(tmp_path):
    """2.1.290 (generated run gen_187014): a fork of a session that had not compacted copies its whole conversation,
    unmarked (before 2.1.332), below the fork process's first records and stamped before them. The fork's process began
    after the copy: the background agents the copied records launched were not its own, and its compaction re-announced
    none (inspector had re-announced three). A REPL's queued prompt, also written above older replies, is no fork: its
    turn goes on after it (the next message a tool result)."""
    from conformance.replay import replay
    from inspector.tokens.context import fork_copy_end, process_exits
    from inspector.transcript.session import Session

    folder = saved_run(tmp_path, "gen_187014_2.1.290")
    fork = next(p for p in (folder / "projects").rglob("41f1e64f*.jsonl"))
    s = Session.load(fork)
    end = fork_copy_end(s)
    assert end is not None and end in process_exits(s)
    assert s.records[end + 1].type == "user" and "go on in a fork" in s.record_text(end + 1)
    got = replay(folder)
    assert got and all(r.ok for r in got), [(r.boundary, r.detail) for r in got if not r.ok]
