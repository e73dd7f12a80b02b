"""What a 2.1.3xx request keeps of other models' reasoning, and the order a live process holds a reply's results.

Found by the conformance generator once its replies think (2.1.332 seeds 79307 and 79313: a /model switch, and
every request after it left out the thinking blocks the earlier model wrote), and once they make several calls at
once (REPL seed 79200: a call's result written between two fragments of its reply)."""

from __future__ import annotations

import orjson

from inspector.claude.wire import ForeignThinking, api_messages, foreign_keep, model_identity
from inspector.compact.base import make_slice
from inspector.compact.engine import _as_held
from inspector.compact.reattach import _loop_start
from inspector.transcript.session import Session


def test_whose_reasoning_a_request_leaves_out() -> None:
    rule = ForeignThinking("claude-sonnet-4-5[1m]")
    assert not rule.leaves_out("claude-sonnet-4-5")  # the [1m] setting is not another model
    assert not rule.leaves_out("claude-sonnet-4-5-20250929")  # nor the dated id the API answers with
    assert not rule.leaves_out("<synthetic>")
    assert rule.leaves_out("claude-sonnet-4-0") and rule.leaves_out("claude-opus-4-7") and rule.leaves_out(None)
    assert not ForeignThinking("claude-sonnet-4-5", "all").leaves_out("claude-haiku-4-5")
    up = ForeignThinking("claude-opus-4-7", "upgrade")
    assert not up.leaves_out("claude-sonnet-4-5") and not up.leaves_out("claude-opus-4-5")  # a higher family, a newer one
    assert ForeignThinking("claude-sonnet-4-5", "upgrade").leaves_out("claude-opus-4-5")  # a lower family
    assert ForeignThinking("claude-opus-4-5", "upgrade").leaves_out("claude-opus-4-7")  # an older version
    assert model_identity("claude-opus-4-6[1m]") == model_identity("claude-opus-4-6")


def _reply(uuid: str, mid: str, model: str, *blocks: dict) -> list[dict]:
    return [
        {"type": "assistant", "uuid": f"{uuid}{k}", "message": {"id": mid, "role": "assistant", "model": model, "content": [b]}}
        for k, b in enumerate(blocks)
    ]


def _bodies() -> list[dict]:
    think = {"type": "thinking", "thinking": "", "signature": "sigA"}
    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "f1.txt"}
    return [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "run the checks"}},
        *_reply("a", "msg_a", "claude-sonnet-4-0", think, {"type": "text", "text": "Running step 1."}, call),
        {"type": "user", "uuid": "u2", "message": {"role": "user", "content": [result]}},
        *_reply(
            "b", "msg_b", "claude-sonnet-4-5", {"type": "redacted_thinking", "data": "xyz"}, {"type": "text", "text": "Done."}
        ),
        {"type": "user", "uuid": "u3", "message": {"role": "user", "content": "continue"}},
    ]


def test_a_request_of_another_model_is_sent_without_the_earlier_models_reasoning() -> None:
    def kinds(messages: list[dict]) -> list[list[str]]:
        return [[b["type"] for b in m["content"]] if isinstance(m["content"], list) else ["text"] for m in messages]

    assert kinds(api_messages(_bodies())) == [
        ["text"],
        ["thinking", "text", "tool_use"],
        ["tool_result"],
        ["redacted_thinking", "text"],
        ["text"],
    ]
    after_switch = kinds(api_messages(_bodies(), thinking=ForeignThinking("claude-sonnet-4-5")))
    assert after_switch == [["text"], ["text", "tool_use"], ["tool_result"], ["redacted_thinking", "text"], ["text"]]
    back = kinds(api_messages(_bodies(), thinking=ForeignThinking("claude-sonnet-4-0")))
    assert back == [["text"], ["thinking", "text", "tool_use"], ["tool_result"], ["text"], ["text"]]
    kept = kinds(api_messages(_bodies(), thinking=ForeignThinking("claude-sonnet-4-0", "all")))
    assert kept == kinds(api_messages(_bodies()))


def _session(tmp_path, records: list[dict], version: str = "2.1.332") -> Session:
    prev = None
    lines = []
    for k, r in enumerate(records):
        r = {"parentUuid": prev, "timestamp": f"2026-12-06T01:55:{k:02d}.000Z", "sessionId": "s", "version": version, **r}
        prev = r["uuid"]
        lines.append(orjson.dumps(r))
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return Session.load(path)


def test_a_session_on_one_model_keeps_its_reasoning_and_shows_no_rule(tmp_path) -> None:
    s = _session(tmp_path, _bodies()[:5])  # the first reply alone: one model, no recorded request
    assert foreign_keep(s) == "none"
    sent = api_messages(_bodies()[:5], thinking=ForeignThinking("claude-sonnet-4-0"))
    assert sent[1]["content"][0]["type"] == "thinking"


def test_a_release_before_2_1_152_sends_every_models_reasoning(tmp_path) -> None:
    """The era-matrix probe foreign-thinking (bisected): 2.1.150 sent claude-sonnet-4-0's thinking in the requests of
    claude-haiku-4-5 after a /model switch, 2.1.152 left it out (generated seeds 179003 and 179004 on 2.1.150: two of
    their requests were rebuilt without it)."""
    for version, keep in (("2.1.150", "all"), ("2.1.152", "none"), ("2.1.332", "none")):
        (tmp_path / version).mkdir()
        s = _session(tmp_path / version, _bodies(), version)
        assert foreign_keep(s) == keep, version
        sent = api_messages(_bodies(), thinking=ForeignThinking("claude-haiku-4-5", foreign_keep(s)))
        assert (sent[1]["content"][0]["type"] == "thinking") == (keep == "all"), version


def test_a_live_process_holds_a_replys_results_after_its_last_fragment(tmp_path) -> None:
    """2.1.332 wrote an Agent call's result between two fragments of the reply that made it (the reply was still
    streaming its next call); the compacting process held it after the reply's last fragment, as its preserved list
    shows (REPL seed 79200). Records the process read from the file keep the file's order."""

    def call(n: int) -> dict:
        return {"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {"file_path": f"f{n}.txt"}}

    def result(uuid: str, n: int) -> dict:
        return {
            "type": "user",
            "uuid": uuid,
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "x"}]},
        }

    recs = [
        {"type": "user", "uuid": "p", "message": {"role": "user", "content": "go"}},
        *_reply("f", "msg_1", "claude-opus-5", {"type": "text", "text": "Reading."}, call(1), call(2)),  # f0 f1 f2
        result("r2", 2),  # written before the reply's last fragment
        *_reply("g", "msg_1", "claude-opus-5", call(3)),  # g0
        result("r1", 1),
        result("r3", 3),
    ]
    s = _session(tmp_path, recs)
    keep = list(range(len(s.records)))
    uuids = lambda order: [s.records[i].uuid for i in order]  # noqa: E731
    assert uuids(_as_held(s, keep, -1)) == ["p", "f0", "f1", "f2", "g0", "r2", "r1", "r3"]
    assert uuids(_as_held(s, keep, len(s.records))) == ["p", "f0", "f1", "f2", "r2", "g0", "r1", "r3"]  # read, not made


def test_only_a_compaction_inside_the_loop_holds_the_turns_replies_in_loop_order(tmp_path) -> None:
    """Claude Code's query loop holds each reply's fragments, then its results; the REPL's list holds records as
    written. A compaction inside the loop (automatic, or after a refusal) reorders the replies of its turn only (REPL
    seed 79200, a refusal mid-turn); one the user asks for between turns reorders nothing (REPL seed 91000: a partial
    "from" kept a call's result before the next fragment of its reply, as written)."""
    call = lambda n: {"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {}}  # noqa: E731
    result = lambda u, n: {  # noqa: E731
        "type": "user",
        "uuid": u,
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "x"}]},
    }
    recs = [
        {"type": "user", "uuid": "p1", "message": {"role": "user", "content": "go"}},
        *_reply("a", "msg_1", "claude-opus-5", call(1)),
        result("ra", 1),
        *_reply("b", "msg_1", "claude-opus-5", call(2)),  # the reply's next call, written after the first's result
        result("rb", 2),
        *_reply("c", "msg_2", "claude-opus-5", {"type": "text", "text": "done"}),
        {"type": "user", "uuid": "p2", "message": {"role": "user", "content": "and again"}},
        *_reply("d", "msg_3", "claude-opus-5", call(3)),
        result("rd", 3),
        *_reply("e", "msg_3", "claude-opus-5", call(4)),
        result("re", 4),
    ]
    s = _session(tmp_path, recs)
    sl = make_slice(s)
    keep = list(range(len(s.records)))
    order = lambda start: [s.records[i].uuid for i in _as_held(s, keep, start)]  # noqa: E731
    written = [r["uuid"] for r in recs]
    assert _loop_start(sl, "manual") == len(s.records)
    assert order(_loop_start(sl, "manual")) == written
    p2 = written.index("p2")
    assert _loop_start(sl, "auto") == p2
    assert order(_loop_start(sl, "auto")) == written[: p2 + 1] + ["d0", "e0", "rd", "re"]


def _hook(uuid: str, source: str, text: str) -> dict:
    return {
        "type": "attachment",
        "uuid": uuid,
        "attachment": {
            "type": "hook_success",
            "hookName": f"SessionStart:{source}",
            "toolUseID": f"id-{uuid}",
            "hookEvent": "SessionStart",
            "content": text,
            "stdout": text + "\n",
            "exitCode": 0,
        },
        "rendered": [{"content": f"<system-reminder>\nSessionStart:{source} hook success: {text}\n</system-reminder>"}],
        "renderedRole": "system",
    }


def test_thesession_start_hooks_a_compaction_runs_again(tmp_path) -> None:
    """2.1.332 runs the SessionStart hooks again after a compaction (source compact) and writes what they printed
    after the re-announcements (seeds 82009, 82017, REPL 82011 with a SessionStart hook in settings.json). inspector
    never runs a hook: the records of their last run before the point stand in, renamed for the compact source, with
    a call id of their own. A partial compaction counts each such
    record it summarizes twice in messagesSummarized (REPL seeds 82050, 82117, 82161, 82229, 82242)."""
    from inspector.compact.base import RecordFactory, make_slice
    from inspector.compact.engine import _copy_attachment
    from inspector.compact.hooks import as_compact_hook, hook_twins, session_start_hooks

    s = _session(
        tmp_path,
        [
            _hook("h0", "startup", "Project notes: run make check."),
            {"type": "user", "uuid": "p1", "message": {"role": "user", "content": "run the checks"}},
            *_reply("a", "msg_a", "claude-opus-5", {"type": "text", "text": "Done."}),
            _hook("h1", "startup", "Project notes: run make check."),  # a kept earlier run, next on the chain
            {"type": "user", "uuid": "x", "message": {"role": "user", "content": "more"}},
            _hook("h2", "compact", "Project notes: v2."),
            {"type": "attachment", "uuid": "d", "attachment": {"type": "date", "date": "2026-12-06"}},
            {"type": "user", "uuid": "p2", "message": {"role": "user", "content": "go on"}},
        ],
    )
    sl = make_slice(s)
    got = session_start_hooks(sl)
    assert [b["uuid"] for b in got] == ["h2"]
    rec = as_compact_hook(
        _copy_attachment(RecordFactory(s), None, None, session_start_hooks(make_slice(s, at="x"))[0]), RecordFactory(s)
    )
    assert rec["attachment"]["hookName"] == "SessionStart:compact" and rec["attachment"]["toolUseID"] != "id-h1"
    assert (
        rec["rendered"][0]["content"]
        == "<system-reminder>\nSessionStart:compact hook success: Project notes: run make check.\n</system-reminder>"
    )
    assert hook_twins(s, range(len(s.records))) == 3 and hook_twins(s, [1, 2, 4]) == 0
    from inspector.compact.summary_compact import _hooks_notes  # the releases whose compaction is written without them

    assert _hooks_notes(sl) and "SessionStart hooks again" in _hooks_notes(sl)[0]


def test_a_hook_record_kept_from_before_the_last_compaction_counts_once(tmp_path) -> None:
    """messagesSummarized counts twice only the SessionStart hook records written since the last compaction; one an
    earlier compaction kept in its tail (written before the boundary) counts once (2.1.328 REPL seed 96015: a "from"
    over two hook records counted one more than its records)."""
    from inspector.compact.hooks import hook_twins

    recs = [
        _hook("h1", "compact", "Project notes."),  # kept in the last compaction's tail
        {"type": "user", "uuid": "p1", "message": {"role": "user", "content": "run the checks"}},
        {"type": "system", "subtype": "compact_boundary", "uuid": "b", "compactMetadata": {"trigger": "auto"}},
        {"type": "user", "uuid": "s", "isCompactSummary": True, "message": {"role": "user", "content": "Summary"}},
        _hook("h2", "compact", "Project notes."),  # this compaction's run
        *_reply("a", "msg_a", "claude-opus-5", {"type": "text", "text": "Done."}),
    ]
    s = _session(tmp_path, recs)
    every = list(range(len(s.records)))
    assert hook_twins(s, every) == 1
    assert hook_twins(s, every[:2]) == 1  # before any boundary: the session's first run


def test_compact_output_reports_the_precompact_hooks_as_the_last_compact_did(tmp_path) -> None:
    """/compact's output adds a line for each PreCompact hook (2.1.332 seed 83009); what the hook printed is in no
    other record, so the last /compact's report stands in, and a session whose last /compact reported none gets none."""
    from inspector.compact.base import make_slice
    from inspector.compact.engine import STDOUT
    from inspector.compact.hooks import compact_stdout

    hooked = STDOUT.replace(
        "</local-command-stdout>",
        "\nPreCompact [echo 'Keep the step numbers.'] completed successfully: Keep the step numbers.</local-command-stdout>",
    )

    def session(stdout: str):
        return _session(
            tmp_path,
            [
                {"type": "user", "uuid": "p1", "message": {"role": "user", "content": "run the checks"}},
                *_reply("a", "msg_a", "claude-opus-5", {"type": "text", "text": "Done."}),
                {"type": "user", "uuid": "o", "message": {"role": "user", "content": stdout}},
                {"type": "user", "uuid": "p2", "message": {"role": "user", "content": "go on"}},
            ],
        )

    text, note = compact_stdout(make_slice(session(hooked)), STDOUT)
    assert text == hooked and note is not None and "PreCompact" in note
    assert compact_stdout(make_slice(session(STDOUT)), STDOUT) == (STDOUT, None)
    assert compact_stdout(make_slice(session("some other output")), STDOUT) == (STDOUT, None)


def test_a_fork_is_read_as_a_copy_then_a_process_of_its_own(tmp_path) -> None:
    """2.1.332's --fork-session starts a new transcript with a copy of the chain since the last compaction, under the
    fork's session id; a copied reply names the session whose request made it (`requestSessionId`), and the copy is
    stamped before the fork's first write (seeds 84002 and 84014). A copied reply is the other session's (its cost
    too), and the copy ends a process: the fork's holds the files read in it as a resumed process does."""
    from inspector.library.cost import is_copy
    from inspector.tokens.context import process_exits

    def rec(k: int, ts: str, **body: object) -> dict:
        return {"uuid": f"u{k}", "timestamp": f"2026-12-06T02:39:{ts}Z", "sessionId": "fork", **body}

    def said(k: int, ts: str, by: str, mid: str, text: str) -> dict:
        content = [{"type": "text", "text": text}]
        msg = {
            "id": mid,
            "role": "assistant",
            "model": "claude-opus-5",
            "content": content,
            "usage": {"input_tokens": 5, "output_tokens": 1},
        }
        return rec(k, ts, type="assistant", requestSessionId=by, message=msg)

    recs = [
        {"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-12-06T02:39:55.810Z", "sessionId": "fork"},
        rec(1, "54.740", type="user", message={"role": "user", "content": "run the checks"}),
        said(2, "54.741", "orig", "m1", "Done."),
        rec(3, "54.750", type="attachment", attachment={"type": "prompt_snapshot"}),
        rec(4, "55.869", type="user", message={"role": "user", "content": "go on in a fork"}),
        said(5, "55.900", "fork", "m2", "On it."),
    ]
    prev = None
    for r in recs:
        if "uuid" in r:
            r["parentUuid"], prev = prev, r["uuid"]
    path = tmp_path / "fork.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
    s = Session.load(path)
    assert [is_copy(r) for r in s.records if r.type == "assistant"] == [True, False]
    assert process_exits(s) == [3]  # the copy's last record
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(b"".join(orjson.dumps({k: v for k, v in r.items() if k != "requestSessionId"}) + b"\n" for r in recs))
    # unmarked, as a release before 2.1.332 writes a fork (2.1.290 seed 187014): the prompt and reply stamped before
    # the file's first write, then the fork's own prompt, are still its copy; none of its replies is a copy by mark
    unmarked = Session.load(plain)
    assert process_exits(unmarked) == [3]
    assert not any(is_copy(r) for r in unmarked.records if r.type == "assistant")
    # a REPL's queued prompt written above the replies of the turn it waits for is no copy: the turn goes on after it
    turn = [
        recs[0],
        recs[1],
        recs[2],
        rec(
            6,
            "55.950",
            type="user",
            message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
        ),
    ]
    repl = tmp_path / "repl.jsonl"
    repl.write_bytes(b"".join(orjson.dumps({k: v for k, v in r.items() if k != "requestSessionId"}) + b"\n" for r in turn))
    assert process_exits(Session.load(repl)) == []


def test_a_forks_copied_compaction_is_explained_by_the_session_it_was_forked_from(tmp_path) -> None:
    """A fork starts with a copy of the last compaction (2.1.332 seed 85079): with nothing before it in the fork's
    file, it looked like a compaction far below the threshold ("a lower threshold was in force"). Its story is the
    session's it was copied from, when that transcript is beside it; else the fork says it cannot tell."""
    from inspector.tokens.explain import analyze

    def line(k: int, ts: str, sid: str, **body: object) -> dict:
        return {"uuid": f"u{k}", "timestamp": f"2026-12-06T03:11:{ts}Z", "sessionId": sid, "version": "2.1.332", **body}

    def reply(k: int, ts: str, sid: str, mid: str, tokens: int, **extra: object) -> dict:
        usage = {"input_tokens": tokens, "output_tokens": 10, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
        msg = {
            "id": mid,
            "role": "assistant",
            "model": "claude-opus-4-5",
            "content": [{"type": "text", "text": "ok"}],
            "usage": usage,
        }
        return line(k, ts, sid, type="assistant", message=msg, requestId=f"req_{mid}", **extra)

    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": "b1",
        "parentUuid": None,
        "logicalParentUuid": "u2",
        "timestamp": "2026-12-06T03:11:06.351Z",
        "sessionId": "orig",
        "version": "2.1.332",
        "compactMetadata": {"trigger": "manual", "preTokens": 120_000},
    }
    summary = line(
        3,
        "06.400",
        "orig",
        type="user",
        parentUuid="b1",
        isCompactSummary=True,
        message={"role": "user", "content": "This session is being continued."},
    )
    orig = [
        line(1, "01.000", "orig", type="user", parentUuid=None, message={"role": "user", "content": "run the checks"}),
        {**reply(2, "02.000", "orig", "m1", 120_000), "parentUuid": "u1"},
        boundary,
        summary,
    ]
    (tmp_path / "orig.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in orig))
    fork = [
        {"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-12-06T03:11:30.000Z", "sessionId": "fork"},
        {**boundary, "sessionId": "fork"},
        {**summary, "sessionId": "fork"},
        {**reply(4, "06.500", "fork", "m2", 5_000, requestSessionId="orig"), "parentUuid": "u3"},
        {**line(5, "31.000", "fork", type="user", message={"role": "user", "content": "go on in a fork"}), "parentUuid": "u4"},
    ]
    path = tmp_path / "fork.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in fork))
    mine = analyze(Session.load(tmp_path / "orig.jsonl")).compactions[0]
    got = analyze(Session.load(path)).compactions[0]
    assert got.cause == mine.cause == "manual"
    assert got.explanation.startswith("Made by session orig before this session was forked from it")
    assert got.explanation.endswith(mine.explanation)
    (tmp_path / "orig.jsonl").unlink()
    alone = analyze(Session.load(path)).compactions[0]
    assert alone.cause == "unknown" and "not beside this one" in alone.explanation


def test_up_to_the_first_prompt_summarizes_a_session_start_hooks_output(tmp_path) -> None:
    """A SessionStart hook's output is written before the first prompt; 2.1.328 summarized that record alone "up to"
    the first prompt (REPL seed 88003: messagesSummarized 2, the hook's record counted twice), where a session
    without it has nothing there to summarize."""
    from inspector.compact import CompactRequest, compact
    from inspector.compact.base import CompactError

    def session(with_hook: bool) -> Session:
        recs = [_hook("h0", "startup", "Project notes.")] if with_hook else []
        recs += [
            {"type": "user", "uuid": "p1", "message": {"role": "user", "content": "run the checks"}},
            *_reply("a", "msg_a", "claude-opus-5", {"type": "text", "text": "Done."}),
            {"type": "user", "uuid": "p2", "message": {"role": "user", "content": "now task 2"}},
            *_reply("b", "msg_b", "claude-opus-5", {"type": "text", "text": "Done too."}),
        ]
        sub = tmp_path / ("hooked" if with_hook else "plain")
        sub.mkdir()
        return _session(sub, recs)

    res = compact(session(True), CompactRequest(strategy="partial", pivot="p1", direction="up_to"))
    boundary = res.new_records[0]
    assert boundary["compactMetadata"]["messagesSummarized"] == 2 and res.summarized_uuids == ("h0",)
    try:
        compact(session(False), CompactRequest(strategy="partial", pivot="p1", direction="up_to"))
    except CompactError as exc:
        assert "nothing to summarize" in str(exc)
    else:
        raise AssertionError("a session with nothing before its first prompt has nothing to summarize up to it")


def test_the_skill_listing_a_compaction_reannounces_is_the_one_before_its_point(tmp_path) -> None:
    """A compaction re-announces the skill listing the compacting process had: none written after its point (a
    preview at an earlier message took the session's last), and a note when the one it copies was written under
    another model (Claude Code renders the listing for the compacting model's window: 2.1.328 seed 98006)."""
    from inspector.compact.base import make_slice
    from inspector.compact.reattach import reannouncements

    def listing(uuid: str, text: str) -> dict:
        return {
            "type": "attachment",
            "uuid": uuid,
            "attachment": {"type": "skill_listing", "content": text, "isInitial": True},
            "rendered": [{"content": f"<system-reminder>\n{text}\n</system-reminder>"}],
        }

    recs = [
        {"type": "user", "uuid": "p1", "message": {"role": "user", "content": "go"}},
        {"type": "attachment", "uuid": "m1", "attachment": {"type": "model", "identity": {"modelId": "claude-foo-1"}}},
        listing("l1", "- init"),
        *_reply("a", "msg_a", "claude-foo-1", {"type": "text", "text": "Done."}),
        {"type": "system", "subtype": "compact_boundary", "uuid": "cb", "compactMetadata": {"trigger": "manual"}},
        {"type": "user", "uuid": "sm", "isCompactSummary": True, "message": {"role": "user", "content": "Summary"}},
        {"type": "user", "uuid": "p2", "message": {"role": "user", "content": "again"}},
        {"type": "attachment", "uuid": "m2", "attachment": {"type": "model", "identity": {"modelId": "claude-sonnet-4-6"}}},
        *_reply("b", "msg_b", "claude-sonnet-4-6", {"type": "text", "text": "Done again."}),
        listing("l2", "- init: Initialize a new CLAUDE.md file"),
        *_reply("c", "msg_c", "claude-sonnet-4-6", {"type": "text", "text": "And more."}),
    ]
    s = _session(tmp_path, recs)

    def skill(at: str) -> tuple[list[str], list[str]]:
        sl = make_slice(s, at=at)
        bodies, notes = reannouncements(sl, list(sl.messages), [], None)
        return [b["uuid"] for b in bodies if b["attachment"]["type"] == "skill_listing"], notes

    early, notes = skill("a0")
    assert early == ["l1"] and not any("skill listing" in n for n in notes)
    switched, notes = skill("b0")  # none since the compaction: the last before the point, not l2 after it
    assert switched == ["l1"] and any("claude-sonnet-4-6's context window" in n for n in notes)
    assert skill("c0")[0] == ["l2"]


def test_a_compaction_after_a_switch_to_a_model_with_unlisted_deferred_tools_says_so(tmp_path) -> None:
    """2.1.332 seeds 110001 and 110035: a session begun on a model that gets every tool loaded (no deferred tools
    announced), switched to claude-mythos-5-2 and compacted: Claude Code announces the new model's deferred tools,
    which no record lists. inspector cannot write them and says so; without a switch, or with an announcement to copy,
    it says nothing."""
    from inspector.compact.base import make_slice
    from inspector.compact.reattach import reannouncements

    def model(uuid: str, mid: str) -> dict:
        return {"type": "attachment", "uuid": uuid, "attachment": {"type": "model", "identity": {"modelId": mid}}}

    head = [
        {"type": "user", "uuid": "p1", "message": {"role": "user", "content": "go"}},
        model("m1", "claude-3-5-haiku"),
        *_reply("a", "msg_a", "claude-3-5-haiku", {"type": "text", "text": "Done."}),
        {"type": "user", "uuid": "p2", "message": {"role": "user", "content": "again"}},
    ]
    switched = [
        *head,
        model("m2", "claude-mythos-5-2"),
        *_reply("b", "msg_b", "claude-mythos-5-2", {"type": "text", "text": "Ok."}),
    ]
    stayed = [*head, *_reply("b", "msg_b", "claude-3-5-haiku", {"type": "text", "text": "Ok."})]
    tools = {
        "type": "attachment",
        "uuid": "d1",
        "attachment": {
            "type": "deferred_tools_delta",
            "addedNames": ["WebFetch"],
            "addedLines": ["WebFetch"],
            "removedNames": [],
        },
        "rendered": [
            {"content": "<system-reminder>\nThe following deferred tools are now available:\nWebFetch\n</system-reminder>"}
        ],
    }
    listed = [*switched[:-1], tools, switched[-1]]

    def notes(recs: list[dict], name: str) -> list[str]:
        (tmp_path / name).mkdir()
        s = _session(tmp_path / name, recs)
        sl = make_slice(s, at="b0")
        return [n for n in reannouncements(sl, list(sl.messages), [], None)[1] if "deferred tools of" in n]

    assert notes(switched, "switched") and "claude-mythos-5-2" in notes(switched, "again")[0]
    assert notes(stayed, "stayed") == []
    assert notes(listed, "listed") == []


def test_a_model_that_announced_no_tools_of_its_own_gets_its_task_tools_on_a_compaction(tmp_path) -> None:
    """2.1.332 seed 112059: claude-opus-5 (its tools announced without the task tools), then claude-3-5-sonnet (every
    tool loaded, nothing announced), then claude-opus-4-6[1m], which compacted: Claude Code listed the session's
    deferred tools with TaskCreate, TaskGet, TaskList and TaskUpdate, as the release gives them to Opus 4.6."""
    from inspector.compact.base import make_slice
    from inspector.compact.reattach import _TOOLS_HEADER as TOOLS_HEADER
    from inspector.compact.reattach import reannouncements

    def model(uuid: str, mid: str) -> dict:
        return {"type": "attachment", "uuid": uuid, "attachment": {"type": "model", "identity": {"modelId": mid}}}

    names = ["CronCreate", "TaskStop", "WebFetch"]
    tools = {
        "type": "attachment",
        "uuid": "d1",
        "attachment": {"type": "deferred_tools_delta", "addedNames": names, "addedLines": names, "removedNames": []},
        "rendered": [{"content": f"<system-reminder>\n{TOOLS_HEADER} them:\n" + "\n".join(names) + "\n</system-reminder>"}],
    }
    recs = [
        {"type": "user", "uuid": "p1", "message": {"role": "user", "content": "go"}},
        model("m1", "claude-opus-5"),
        tools,
        *_reply("a", "msg_a", "claude-opus-5", {"type": "text", "text": "Done."}),
        {"type": "user", "uuid": "p2", "message": {"role": "user", "content": "continue"}},
        model("m2", "claude-3-5-sonnet"),
        *_reply("b", "msg_b", "claude-3-5-sonnet", {"type": "text", "text": "Ok."}),
        {"type": "user", "uuid": "p3", "message": {"role": "user", "content": "continue"}},
        model("m3", "claude-opus-4-6[1m]"),
        *_reply("c", "msg_c", "claude-opus-4-6", {"type": "text", "text": "Ok again."}),
    ]
    s = _session(tmp_path, recs)
    sl = make_slice(s, at="c0")
    bodies, _ = reannouncements(sl, list(sl.messages), [], None)
    listed = [b["attachment"]["addedNames"] for b in bodies if b["attachment"]["type"] == "deferred_tools_delta"]
    assert listed == [sorted(names + ["TaskCreate", "TaskGet", "TaskList", "TaskUpdate"])]
    # compacting on claude-opus-5 again (the model that announced them): its own list, as it was
    sl = make_slice(s, at="a0")
    bodies, _ = reannouncements(sl, list(sl.messages), [], None)
    assert [b["attachment"]["addedNames"] for b in bodies if b["attachment"]["type"] == "deferred_tools_delta"] == [names]


def test_the_first_deferred_tools_announcement_is_made_from_the_last_request_s_tools(tmp_path, monkeypatch) -> None:
    """2.1.332 seeds 110001, 110035, 112117: the session began on a model that gets every tool loaded and no record
    announced deferred tools; the compaction by the new model announces the deferrable ones of the tools its last
    request carried (built-ins Claude Code defers, MCP tools), with the task tools as the release gives them to it,
    in the text 2.1.328-2.1.332 write."""
    from types import SimpleNamespace

    import inspector.compact.reattach as reattach_module
    from inspector.compact.reattach import _first_tools_delta

    s = _session(tmp_path, [{"type": "user", "uuid": "p1", "message": {"role": "user", "content": "go"}}])
    carried = [
        "Agent",
        "Bash",
        "CronCreate",
        "Read",
        "TaskCreate",
        "TaskGet",
        "TaskList",
        "TaskStop",
        "TaskUpdate",
        "WebFetch",
        "mcp__x__y",
    ]
    q = SimpleNamespace(index=0, agent_id=None, request={"tools": [{"name": n} for n in carried]})
    monkeypatch.setattr(reattach_module, "rebuild_requests", lambda _s: [q])
    made = _first_tools_delta(s, 0, "claude-mythos-5-2")  # no task tools for it
    assert made is not None
    assert made["attachment"]["addedNames"] == ["CronCreate", "TaskStop", "WebFetch", "mcp__x__y"]
    text = made["rendered"][0]["content"]
    assert text.startswith("<system-reminder>\nThe following deferred tools are now available via ToolSearch. Their schemas")
    assert text.endswith(":\nCronCreate\nTaskStop\nWebFetch\nmcp__x__y\n</system-reminder>")
    with_tasks = _first_tools_delta(s, 0, "claude-opus-4-6")  # the task tools, deferred
    assert with_tasks is not None and "TaskCreate" in with_tasks["attachment"]["addedNames"]
    q.request["tools"].append({"name": "ToolSearch"})  # it deferred already: its own announcements are in the records
    assert _first_tools_delta(s, 0, "claude-mythos-5-2") is None
