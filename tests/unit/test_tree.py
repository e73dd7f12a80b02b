"""The conversation model (§2.7–2.9, §8.6) on small synthetic transcripts."""

from __future__ import annotations

import pytest
from builders import assistant, attachment, progress, system, tool_result, tool_use, user
from helpers import REAL_PROJECTS, requires_realdata, write_jsonl

from inspector.transcript.session import Session


def load(tmp_path, recs, name="s.jsonl"):
    return Session.load(write_jsonl(tmp_path / name, recs))


def uuids(s, idx):
    return [s.records[i].uuid for i in idx]


def test_linear_chain_and_leaf(tmp_path):
    s = load(
        tmp_path,
        [
            user("u1", None, sec=0),
            assistant("a1", "u1", sec=1),
            user("u2", "a1", sec=2),
            assistant("a2", "u2", sec=3),
            system("s1", "a2", "turn_duration", sec=4),
        ],
    )
    c = s.conversation
    assert c.leaf_uuid == "a2"  # leaves walk up to the nearest user/assistant record
    assert uuids(s, c.chain) == ["u1", "a1", "u2", "a2"]
    assert c.branches == []


def test_rewind_branch_latest_timestamp_wins(tmp_path):
    recs = [
        user("u1", None, sec=0),
        assistant("a1", "u1", sec=1),
        user("old", "a1", sec=2),
        assistant("old-a", "old", sec=3),  # abandoned by a rewind
        user("new", "a1", sec=10),
        assistant("new-a", "new", sec=11),
    ]
    s = load(tmp_path, recs)
    c = s.conversation
    assert c.leaf_uuid == "new-a"
    assert uuids(s, c.chain) == ["u1", "a1", "new", "new-a"]
    assert len(c.branches) == 1
    b = c.branches[0]
    assert s.records[b.tip].uuid == "old-a" and s.records[b.fork].uuid == "a1" and b.length == 2


def test_timestamp_tie_goes_to_file_order(tmp_path):
    s = load(tmp_path, [user("u1", None, sec=0), assistant("x", "u1", sec=5), assistant("y", "u1", sec=5)])
    assert s.conversation.leaf_uuid == "y"


def test_progress_records_are_bridged(tmp_path):
    recs = [
        user("u1", None, sec=0),
        progress("p1", "u1", sec=1),
        progress("p2", "p1", sec=2),
        assistant("a1", "p2", sec=3),
        user("u2", "a1", sec=4),
    ]
    s = load(tmp_path, recs)
    assert uuids(s, s.conversation.chain) == ["u1", "a1", "u2"]


def test_parallel_tool_calls_are_repaired(tmp_path):
    # A1(tool_use t1), A2(tool_use t2) same message id; U1 -> A1, U2 -> A2; next turn follows U2
    recs = [
        user("u1", None, sec=0),
        assistant("A1", "u1", [tool_use("t1")], sec=1, mid="msg_X"),
        assistant("A2", "A1", [tool_use("t2")], sec=2, mid="msg_X"),
        tool_result("U1", "A1", "t1", sec=3),
        tool_result("U2", "A2", "t2", sec=4),
        assistant("B", "U2", sec=5),
    ]
    s = load(tmp_path, recs)
    assert uuids(s, s.conversation.chain) == ["u1", "A1", "A2", "U1", "U2", "B"]
    assert s.tool_index["t1"] == (1, 3) and s.tool_index["t2"] == (2, 4)
    assert s.tool_name("t2") == "Read"


def test_off_chain_sibling_fragment_is_put_back(tmp_path):
    # thinking fragment T and tool fragment F share msg id; F's parent skips T
    recs = [
        user("u1", None, sec=0),
        assistant("T", "u1", [{"type": "thinking", "thinking": "hm", "signature": "s"}], sec=1, mid="m1"),
        assistant("F", "u1", [tool_use("t1")], sec=2, mid="m1"),
        tool_result("R", "F", "t1", sec=3),
    ]
    s = load(tmp_path, recs)
    assert uuids(s, s.conversation.chain) == ["u1", "F", "T", "R"]


def test_cycles_self_parents_and_dangling_parents_terminate(tmp_path):
    recs = [
        user("a", "c", sec=0),
        user("b", "a", sec=1),
        user("c", "b", sec=2),  # a cycle
        user("self", "self", sec=3),
        user("orphan", "missing-parent", sec=4),
        assistant("leaf", "orphan", sec=5),
    ]
    s = load(tmp_path, recs)
    c = s.conversation
    assert c.leaf_uuid == "leaf"
    assert uuids(s, c.chain) == ["orphan", "leaf"]


def test_duplicate_uuid_last_occurrence_wins(tmp_path):
    recs = [user("u1", None, "first", sec=0), assistant("a1", "u1", sec=1), user("u1", None, "second", sec=2)]
    s = load(tmp_path, recs)
    assert s.conversation.by_uuid["u1"] == 2


def test_compact_boundary_stitched_to_logical_parent(tmp_path):
    recs = [
        user("u1", None, sec=0),
        assistant("a1", "u1", sec=1),
        system(
            "b1",
            None,
            "compact_boundary",
            sec=2,
            logicalParentUuid="a1",
            compactMetadata={"trigger": "auto", "preTokens": 170000},
        ),
        user(
            "sum",
            "b1",
            "This session is being continued from a previous conversation that ran out of context.",
            sec=3,
            isCompactSummary=True,
            isVisibleInTranscriptOnly=True,
        ),
        assistant("a2", "sum", sec=4),
    ]
    s = load(tmp_path, recs)
    c = s.conversation
    assert uuids(s, c.chain) == ["b1", "sum", "a2"]
    assert uuids(s, c.logical_chain) == ["u1", "a1", "b1", "sum", "a2"]
    assert c.branches == []  # the pre-compaction tip is history, not an abandoned branch
    assert s.records[3].is_compact_summary


def test_preserved_segment_relinks_kept_messages(tmp_path):
    # kept messages k1..k2 keep their old parents on disk; the boundary's segment relinks them
    recs = [
        user("u1", None, sec=0),
        assistant("a1", "u1", sec=1),
        user("k1", "a1", sec=2),
        assistant("k2", "k1", sec=3),
        system(
            "b",
            None,
            "compact_boundary",
            sec=4,
            logicalParentUuid="k2",
            compactMetadata={
                "trigger": "auto",
                "preTokens": 1,
                "preservedSegment": {"headUuid": "k1", "anchorUuid": "sum", "tailUuid": "k2"},
            },
        ),
        user("sum", "b", "summary", sec=5, isCompactSummary=True),
        user("next", "sum", "go on", sec=6),
        assistant("a3", "next", sec=7),
    ]
    s = load(tmp_path, recs)
    c = s.conversation
    assert c.relink is not None and c.relink.preserved == frozenset({"k1", "k2"})
    assert uuids(s, c.chain) == ["b", "sum", "k1", "k2", "next", "a3"]
    # preserved assistant usage is zeroed for accounting: the last context is a3's
    assert s.last_context() == 10 + 100 + 1000 + 50


@pytest.mark.parametrize("version, leaf", [("2.1.81", "k2"), ("2.1.328", "k2"), (None, "k2"), ("2.1.80", "s1")])
def test_records_a_compaction_dropped_are_no_leaves_once_its_kept_messages_are_relinked(tmp_path, version, leaf):
    """A compaction keeps k1..k2, written before an earlier compaction whose summary s1 is newer than them. Once the
    kept messages are relinked, Claude Code (2.1.81 on: its loader drops the records before the boundary it did not
    keep) continues from the kept tail, not from s1, the newest record by time (resumed by 2.1.152, 2.1.212, 2.1.328
    and 2.1.332: generated run 18018, found_3011 and found_3036). 2.1.80 had no such step."""
    v = {"version": version} if version else {}
    recs = [
        user("u1", None, sec=0, **v),
        assistant("a1", "u1", sec=1, **v),
        user("k1", "a1", sec=2, **v),
        assistant("k2", "k1", sec=3, **v),
        system("b1", None, "compact_boundary", sec=4, logicalParentUuid="k2", compactMetadata={"trigger": "auto"}, **v),
        user("s1", "b1", "summary one", sec=5, isCompactSummary=True, **v),
        system(
            "b2",
            None,
            "compact_boundary",
            sec=6,
            logicalParentUuid="s1",
            compactMetadata={"trigger": "auto", "preservedMessages": {"anchorUuid": "s2", "uuids": ["k1", "k2"]}},
            **v,
        ),
        user("s2", "b2", "summary two", sec=7, isCompactSummary=True, **v),
    ]
    s = load(tmp_path, recs)
    c = s.conversation
    assert c.relink is not None
    assert s.records[c.chain[-1]].uuid == leaf
    if leaf == "k2":
        assert uuids(s, c.chain) == ["b2", "s2", "k1", "k2"]


def _kept_boundary(uuid, sec, after, pre, anchor, kept, v):
    meta = {"trigger": "auto", "preTokens": pre, "preservedMessages": {"anchorUuid": anchor, "uuids": kept}}
    return system(uuid, None, "compact_boundary", sec=sec, logicalParentUuid=after, compactMetadata=meta, **v)


def _back_to_back(version="2.1.332"):
    """Two compactions of 2.1.3xx in a row, the second keeping the first's whole tail (k1..k2) and what followed it
    (n1..n2): the shape of generated run 23026 (claude-opus-5, two compactions at about 1,031,000)."""
    v = {"version": version}
    return [
        user("u1", None, "start", sec=0, **v),
        assistant("a1", "u1", usage=(1, 0, 500_000, 10), sec=1, **v),
        user("k1", "a1", "more", sec=2, **v),
        assistant("k2", "k1", usage=(1, 0, 900_000, 10), sec=3, **v),
        _kept_boundary("b1", 4, "k2", 900_100, "s1", ["k1", "k2"], v),
        user("s1", "b1", "summary one", sec=5, isCompactSummary=True, **v),
        user("n1", "s1", "go on", sec=6, **v),  # written off the summary; the loader puts it after k2
        assistant("n2", "n1", usage=(1, 0, 950_000, 10), sec=7, **v),
        _kept_boundary("b2", 8, "n2", 950_100, "s2", ["k1", "k2", "n1", "n2"], v),
        user("s2", "b2", "summary two", sec=9, isCompactSummary=True, **v),
        user("x1", "s2", "and now", sec=10, **v),
        assistant("x2", "x1", usage=(1, 0, 300_000, 10), sec=11, **v),
    ]


def test_back_to_back_compactions_keep_both_in_the_history(tmp_path):
    """The second compaction's kept head (k1) had, before it, the first summary: the history goes from the second
    summary back through the first compaction, not from k1's parent in the file (which skipped compaction one: its
    boundary, summary and the responses after it were missing from the token story). What Claude Code loads is
    unchanged: the last compaction's kept messages after its summary."""
    s = load(tmp_path, _back_to_back())
    c = s.conversation
    assert uuids(s, c.chain) == ["b2", "s2", "k1", "k2", "n1", "n2", "x1", "x2"]
    assert uuids(s, c.logical_chain) == ["u1", "a1", "b1", "s1", "b2", "s2", "k1", "k2", "n1", "n2", "x1", "x2"]
    assert set(c.relinks) == {4, 8} and c.relinks[8].head_was == 5  # s1: what k1 followed once compaction one ran
    assert c.kept_at == {"k1": 4, "k2": 4, "n1": 8, "n2": 8}

    from inspector.tokens.series import context_series

    series = context_series(s)
    # each response in the segment it was answered in: k2 before compaction one, n2 before compaction two
    assert [(s.records[t.index].uuid, t.segment) for t in series.turns] == [("a1", 0), ("k2", 0), ("n2", 1), ("x2", 2)]
    assert len(series.boundaries) == 2


@pytest.mark.parametrize("both", [True, False])
def test_a_summarized_record_written_after_the_kept_ones_does_not_cut_the_history(tmp_path, both):
    """The compaction's logical parent is a record written after the kept ones that it did not keep (2.1.332's
    prompt_snapshot after a round; generated run 23031, whose token story had lost everything before its last
    /compact): the history goes on from the record before the first kept one, with one compaction that keeps a
    tail or two."""
    recs = _back_to_back()
    snap = attachment("p", "n2", {"type": "prompt_snapshot"}, sec=7, version="2.1.332")
    recs.insert(8, snap)
    recs[9]["logicalParentUuid"] = "p"
    if not both:  # the first compaction keeps nothing, the second what followed it
        del recs[4]["compactMetadata"]["preservedMessages"]
        recs[9]["compactMetadata"]["preservedMessages"]["uuids"] = ["n1", "n2"]
    s = load(tmp_path, recs)
    c = s.conversation
    if both:
        assert uuids(s, c.chain) == ["b2", "s2", "k1", "k2", "n1", "n2", "x1", "x2"]
        assert uuids(s, c.logical_chain) == ["u1", "a1", "b1", "s1", "p", "b2", "s2", "k1", "k2", "n1", "n2", "x1", "x2"]
    else:
        assert uuids(s, c.chain) == ["b2", "s2", "n1", "n2", "x1", "x2"]
        assert uuids(s, c.logical_chain) == ["u1", "a1", "k1", "k2", "b1", "s1", "p", "b2", "s2", "n1", "n2", "x1", "x2"]


def test_the_token_story_draws_every_compaction_of_a_back_to_back_pair(tmp_path):
    """Two compactions with no response between them (generated run 23031: five in a row, then /compact): the
    chart draws each where it happened, the last after the last response too, and the second counts from no
    usage (the response before it belongs to the stretch the first one closed)."""
    from helpers import run_cli

    recs = _back_to_back()
    del recs[6:8]  # no response between the two compactions: the second keeps the first's tail only
    recs[6]["logicalParentUuid"] = "s1"
    recs[6]["compactMetadata"].update(preTokens=3_542, preservedMessages={"anchorUuid": "s2", "uuids": ["k1", "k2"]})
    recs.append(
        system(
            "b3",
            None,
            "compact_boundary",
            sec=12,
            logicalParentUuid="x2",
            compactMetadata={"trigger": "manual", "preTokens": 300_100},
            version="2.1.332",
        )
    )
    recs.append(user("s3", "b3", "summary three", sec=13, isCompactSummary=True, version="2.1.332"))
    path = tmp_path / "s.jsonl"
    load(tmp_path, recs)
    code, out, _ = run_cli("tokens", str(path))
    assert code == 0, out
    lines = out.splitlines()
    chart = lines[next(k for k, ln in enumerate(lines) if "Context per response" in ln) + 1 :]
    marks = [ln.strip() for ln in chart if "compaction at" in ln and ln.strip().startswith("──")]
    assert marks == [
        "── auto compaction at 900,100 tokens ──",
        "── auto compaction at 3,542 tokens ──",
        "── manual compaction at 300,100 tokens ──",
    ]
    second = next(ln for ln in lines if "compacted" in ln and "3,542" in ln or "context (3,542" in ln)
    assert "last API usage" not in second, second


def test_summarize_from_here_keeps_what_came_before_in_place_in_the_history(tmp_path):
    """A "summarize from here" compaction keeps the records before the picked prompt and chains them after its own
    boundary, before its summary (its anchor is the boundary: run repl_14003, which kept an earlier compaction's
    boundary and summary too). Claude Code loads [boundary, kept, summary, ...]; the history keeps the kept records
    where they were, then what the compaction summarized (up to the boundary, its logical parent being the last
    kept record), then the boundary and the summary."""
    v = {"version": "2.1.332"}
    recs = [
        user("u1", None, "first", sec=0, **v),
        assistant("a1", "u1", usage=(1, 0, 10_000, 10), sec=1, **v),
        user("u2", "a1", "now task 2", sec=2, **v),  # picked: summarize from here
        assistant("a2", "u2", usage=(1, 0, 20_000, 10), sec=3, **v),
        system(
            "b",
            None,
            "compact_boundary",
            sec=4,
            logicalParentUuid="a1",
            compactMetadata={
                "trigger": "manual",
                "preTokens": 20_100,
                "messagesSummarized": 2,
                "preservedSegment": {"headUuid": "u1", "anchorUuid": "b", "tailUuid": "a1"},
            },
            **v,
        ),
        user("s", "b", "summary", sec=5, isCompactSummary=True, **v),
        user("x1", "s", "go on", sec=6, **v),
        assistant("x2", "x1", usage=(1, 0, 12_000, 10), sec=7, **v),
    ]
    s = load(tmp_path, recs)
    c = s.conversation
    assert uuids(s, c.chain) == ["b", "u1", "a1", "s", "x1", "x2"]
    assert uuids(s, c.logical_chain) == ["u1", "a1", "u2", "a2", "b", "s", "x1", "x2"]

    from inspector.tokens.explain import analyze
    from inspector.tokens.series import context_series

    # the responses in the order they were answered; the compaction counted from the last one, not the kept one
    assert [(s.records[t.index].uuid, t.segment) for t in context_series(s).turns] == [("a1", 0), ("a2", 0), ("x2", 1)]
    e = analyze(s).compactions[0]
    assert e.last_usage_before == 20_011 and e.kept_uuids == ["u1", "a1"]


def test_one_kept_tail_compaction_leaves_the_history_as_the_loader_has_it(tmp_path):
    recs = _back_to_back()
    del recs[4]["compactMetadata"]["preservedMessages"]  # compaction one kept nothing
    s = load(tmp_path, recs)
    c = s.conversation
    assert c.history_parent is c.parent and set(c.relinks) == {8}


def test_broken_preserved_segment_is_ignored(tmp_path):
    recs = [
        user("k1", None, sec=0),
        assistant("k2", None, sec=1),  # tail does not reach head
        system(
            "b",
            None,
            "compact_boundary",
            sec=2,
            compactMetadata={"preservedSegment": {"headUuid": "k1", "anchorUuid": "sum", "tailUuid": "k2"}},
        ),
        user("sum", "b", "s", sec=3),
    ]
    s = load(tmp_path, recs)
    assert s.conversation.relink is None


def test_sidechain_records_in_main_file_are_not_leaves(tmp_path):
    recs = [
        user("u1", None, sec=0),
        assistant("a1", "u1", [tool_use("t1", "Task", {"prompt": "look"})], sec=1),
        user("s1", None, "look", sec=2, isSidechain=True),
        assistant("s2", "s1", sec=9, isSidechain=True),
        tool_result("r1", "a1", "t1", sec=3),
    ]
    s = load(tmp_path, recs)
    assert s.conversation.leaf_uuid == "r1"
    assert uuids(s, s.conversation.chain) == ["u1", "a1", "r1"]
    assert [a.layout for a in s.subagents] == ["in-file"]


def test_synthetic_assistant_is_not_real_usage(tmp_path):
    recs = [
        user("u1", None),
        assistant("a1", "u1", usage=(1, 2, 3, 4)),
        assistant("x", "a1", [{"type": "text", "text": "API Error: 529"}], model="<synthetic>", usage=(0, 0, 0, 0)),
        assistant("y", "x", [{"type": "text", "text": "[Request interrupted by user]"}], usage=(9, 9, 9, 9)),
    ]
    s = load(tmp_path, recs)
    assert [r.has_real_usage for r in s.records] == [False, True, False, False]
    assert s.peak_context() == 10


def test_fragments_merge_input_from_last_output_from_max(tmp_path):
    recs = [
        user("u1", None, sec=0),
        assistant("f1", "u1", [{"type": "thinking", "thinking": "t", "signature": "s"}], mid="m", usage=(3, 100, 5000, 8), sec=1),
        assistant("f2", "f1", [{"type": "text", "text": "x"}], mid="m", usage=(3, 100, 5000, 420), sec=2),
        assistant("f3", "f2", [tool_use("t1")], mid="m", usage=(3, 100, 5000, 12), sec=3),
    ]
    s = load(tmp_path, recs)
    resp = s.main_responses()
    assert len(resp) == 1 and resp[0][1] == (3, 100, 5000, 420)
    assert s.peak_context() == 5523


@pytest.mark.parametrize(
    ("version", "leaf"), [("2.1.332", "n"), ("2.1.328", "n"), ("2.1.101", "n"), ("2.1.100", "r2"), ("2.1.88", "r2")]
)
def test_the_leaf_a_release_continues_from_when_times_and_the_file_disagree(tmp_path, version, leaf):
    """Three calls at once; a background agent's notice (an attachment that is sent) written after the last result
    but stamped before another call's result. 2.1.328 and 2.1.332 resumed such a file from the notice, the last
    written (REPL seed 79200); the leaf-order probe bisected the change to 2.1.101 (2.1.100 continued from the newest
    stamped, §2.7's rule)."""
    m = "msg_1"
    recs = [
        user("p", None, "go", sec=0),
        assistant("f1", "p", [tool_use("t1")], sec=1, mid=m),
        tool_result("r1", "f1", "t1", sec=2),
        assistant("f2", "r1", [tool_use("t2")], sec=3, mid=m),
        tool_result("r2", "f2", "t2", sec=7),  # finished last, stamped newest
        tool_result("r3", "f1", "t1b", sec=8),
        attachment(
            "n", "r3", {"type": "queued_command", "prompt": "done"}, sec=5, rendered="<system-reminder>done</system-reminder>"
        ),
    ]
    for r in recs:
        r["version"] = version
    s = load(tmp_path, recs)
    assert s.records[s.conversation.leaf].uuid == leaf


@pytest.mark.parametrize(
    ("version", "order"),
    [
        ("2.1.332", ["f1", "f2", "r2", "f3", "r3", "r1"]),
        ("2.1.261", ["f1", "f2", "r2", "f3", "r3", "r1"]),
        ("2.1.260", ["f1", "f2", "f3", "r2", "r3", "r1"]),
        ("2.1.88", ["f1", "f2", "f3", "r2", "r3", "r1"]),
    ],
)
def test_parallel_calls_put_back_in_the_order_a_release_holds_them(tmp_path, version, order):
    """Three calls in one reply, two finishing while it still streamed, the first one's result written last: the
    chain walks the first call's branch and puts the others back. 2.1.332 held them as written (a fork's copy of
    such a reply, seed 85079), and the repair-order probe bisected that to 2.1.261; §2.7 (2.1.88, and 2.1.260) puts
    the reply's fragments first, then the results."""
    m = "msg_1"
    recs = [
        user("p", None, "go", sec=0),
        assistant("f1", "p", [tool_use("t1")], sec=1, mid=m),
        assistant("f2", "f1", [tool_use("t2")], sec=2, mid=m),
        tool_result("r2", "f2", "t2", sec=3),
        assistant("f3", "r2", [tool_use("t3")], sec=4, mid=m),
        tool_result("r3", "f3", "t3", sec=5),
        tool_result("r1", "f1", "t1", sec=6),
        user("n", "r1", "next", sec=7),
    ]
    for r in recs:
        r["version"] = version
    s = load(tmp_path, recs)
    assert [u for u in uuids(s, s.conversation.chain) if u not in ("p", "n")] == order


@pytest.mark.parametrize(
    ("version", "order"),
    [
        ("2.1.332", ["f1", "f2", "r2", "note", "r1", "tt"]),
        ("2.1.261", ["f1", "f2", "r2", "note", "r1", "tt"]),
        ("2.1.260", ["f1", "f2", "r2", "r1", "tt"]),
    ],
)
def test_the_repair_brings_back_what_hangs_below_a_put_back_result(tmp_path, version, order):
    """2.1.332 REPL seed 110001: two parallel Bash calls, the second's result written first with an audience note
    below it (off the chain the leaf walks), then the first's result and a reminder. The live process sent the note
    after the results; the repair (2.1.261+, nMe) puts a line of attachments left hanging below a put-back record
    back with it, but not a line that forks or reaches a prompt (`stray`, `fork*`)."""
    m = "msg_1"
    note = {"type": "bash_output_audience_note", "toolUseID": "t2"}
    recs = [
        user("p", None, "go", sec=0),
        assistant("f1", "p", [tool_use("t1")], sec=1, mid=m),
        assistant("f2", "f1", [tool_use("t2")], sec=2, mid=m),
        tool_result("r2", "f2", "t2", sec=3),
        attachment("note", "r2", note, sec=3, rendered="<system-reminder>Only you see it</system-reminder>"),
        attachment("stray", "f2", note, sec=3),
        user("stray-prompt", "stray", "not a reminder", sec=3),
        attachment("fork", "f1", note, sec=3),
        attachment("fork-a", "fork", note, sec=3),
        attachment("fork-b", "fork", note, sec=3),
        tool_result("r1", "f1", "t1", sec=4),
        attachment("tt", "r1", {"type": "total_tokens_reminder", "text": "x"}, sec=5, rendered="x"),
    ]
    for r in recs:
        r["version"] = version
    s = load(tmp_path, recs)
    assert [u for u in uuids(s, s.conversation.chain) if u != "p"] == order


@pytest.mark.parametrize(
    ("version", "order"),
    [
        ("2.1.332", ["f1", "r1", "note", "tt", "x", "n"]),
        ("2.1.260", ["f1", "r1", "tt", "n"]),
    ],
)
def test_the_repair_brings_back_what_hangs_below_the_chain_after_a_reply(tmp_path, version, order):
    """RRr also walks down from a reply's results on the chain and from the attachments that follow them: a line
    left hanging below one (a note below the result, `x` below the reminder, each beside the chain's next record)
    comes back, merged by where it was written, the anchored one right after its record (2.1.261+)."""
    note = {"type": "bash_output_audience_note", "toolUseID": "t1"}
    recs = [
        user("p", None, "go", sec=0),
        assistant("f1", "p", [tool_use("t1")], sec=1, mid="msg_1"),
        tool_result("r1", "f1", "t1", sec=2),
        attachment("note", "r1", note, sec=3),
        attachment("tt", "r1", {"type": "total_tokens_reminder", "text": "x"}, sec=4),
        attachment("x", "tt", note, sec=5),
        user("n", "tt", "next", sec=6),
    ]
    for r in recs:
        r["version"] = version
    s = load(tmp_path, recs)
    assert [u for u in uuids(s, s.conversation.chain) if u != "p"] == order


def test_what_a_compaction_left_out_does_not_hang_back_in(tmp_path):
    """2.1.328 REPL seed 77090: a compaction's kept list skipped the prompt snapshot between a call's result and the
    next reminder; relinked, the snapshot hangs below the result. The loader drops what a compaction did not keep
    before its boundary, so the repair does not bring it back (the replay kept 27 records as Claude Code, not 28)."""
    v = {"version": "2.1.328"}
    snap = {"type": "prompt_snapshot", "systemPrompt": ["x"]}
    recs = [
        user("p", None, "go", sec=0, **v),
        assistant("f1", "p", [tool_use("t1")], sec=1, mid="msg_1", **v),
        tool_result("r1", "f1", "t1", sec=2, **v),
        attachment("snap", "r1", snap, sec=3, **v),
        attachment("tt", "snap", {"type": "total_tokens_reminder", "text": "x"}, sec=4, rendered="x", **v),
        assistant("a2", "tt", sec=5, mid="msg_2", **v),
        _kept_boundary("b1", 6, "a2", 100_000, "s1", ["f1", "r1", "tt", "a2"], v),
        user("s1", "b1", "summary", sec=7, isCompactSummary=True, **v),
    ]
    s = load(tmp_path, recs)
    assert uuids(s, s.conversation.chain) == ["b1", "s1", "f1", "r1", "tt", "a2"]


@pytest.mark.parametrize(
    ("version", "named", "leaf"),
    [
        # the last-prompt names a reply off the last-written leaf's line: 2.1.120+ continue from it (the leaf-named probe)
        ("2.1.332", "a", "a"),
        ("2.1.120", "a", "a"),
        ("2.1.119", "a", "b"),
        # it names a reply with a reply below it, off the leaf's line: the named reply itself
        ("2.1.332", "f", "f"),
        ("2.1.119", "f", "b"),
        # an ancestor of the leaf, or a uuid the file does not have: the last-written leaf
        ("2.1.332", "p", "b"),
        ("2.1.332", "gone", "b"),
    ],
)
def test_the_leaf_a_release_continues_from_when_the_last_prompt_names_another(tmp_path, version, named, leaf):
    """Below the final reply f one childless reply a; beside f (a child of f's parent) another, b, written and stamped
    last. The file's last last-prompt record names where the last turn ended. Measured on the binaries (leaf-named
    probe): 2.1.120 and later continue from the named record when it is off b's line, else from b."""
    recs = [
        user("p", None, "go", sec=0),
        assistant("f", "p", [{"type": "text", "text": "done"}], sec=1, mid="m1"),
        assistant("a", "f", [{"type": "text", "text": "below"}], sec=2, mid="m2"),
        assistant("b", "p", [{"type": "text", "text": "beside"}], sec=3, mid="m3"),
    ]
    for r in recs:
        r["version"] = version
    recs.append({"type": "last-prompt", "lastPrompt": "go", "leafUuid": named, "sessionId": recs[0].get("sessionId")})
    s = load(tmp_path, recs)
    assert s.records[s.conversation.leaf].uuid == leaf


@pytest.mark.parametrize("logical", [None, "f"])
def test_a_last_prompt_before_the_last_compaction_names_nothing(tmp_path, logical):
    """A file that ends after a compaction's summary, its last-prompt still naming the reply the turn before it ended
    on: 2.1.332 resumed it from the summary (REPL seed 76079, a /compact, no logical parent; seed 79307, an automatic
    compaction continuing from the named record): what is before the last boundary is not loaded."""
    recs = [
        user("p", None, "go", sec=0),
        assistant("f", "p", [{"type": "text", "text": "done"}], sec=1, mid="m1"),
        system("b", None, "compact_boundary", sec=2, logicalParentUuid=logical, compactMetadata={"trigger": "manual"}),
        user("s", "b", "This session is being continued from a previous conversation.", sec=3, isCompactSummary=True),
    ]
    for r in recs:
        r["version"] = "2.1.332"
    recs.append({"type": "last-prompt", "lastPrompt": "go", "leafUuid": "f", "sessionId": recs[0].get("sessionId")})
    s = load(tmp_path, recs)
    assert s.records[s.conversation.leaf].uuid == "s"


THINK = {"type": "thinking", "thinking": "Let me see.", "signature": "sig"}


def _cut_while_thinking(tmp_path, version, last_blocks, name="s.jsonl"):
    """A prompt, a reply, a second prompt, and replies to it of `last_blocks` each (one record per block, as a
    streamed reply is written), the file written by `version`."""
    recs = [
        user("u1", None, "first", sec=0),
        assistant("a1", "u1", [{"type": "text", "text": "done"}], sec=1),
        user("u2", "a1", "second", sec=2),
    ]
    parent = "u2"
    for k, blocks in enumerate(last_blocks):
        recs.append(assistant(f"t{k}", parent, blocks, sec=3 + k, mid="msg_cut"))
        parent = f"t{k}"
    for r in recs:
        r["version"] = version
    return Session.load(write_jsonl(tmp_path / name, recs))


def test_a_reply_cut_off_after_its_thinking_is_left_out_of_what_a_resume_continues_from(tmp_path):
    """A file that ends in a reply of thinking blocks only (a process killed while the model thought): from 2.1.7,
    `--resume` continues from the record before it (bisected with the harness's leaf-thinking probe; 2.1.328 and
    2.1.332 did so on generated sessions cut there). The file's chain keeps it; what a resume continues from, what
    it sends and where a compaction of the session ends leave it out."""
    from inspector.claude.measured import resume_parent, resumed_chain
    from inspector.compact.base import make_slice
    from inspector.transcript.records import F_THINKING_ONLY

    s = _cut_while_thinking(tmp_path, "2.1.332", [[THINK]])
    conv = s.conversation
    t0 = conv.by_uuid["t0"]
    assert s.records[t0].flags & F_THINKING_ONLY and conv.leaf == t0 and conv.chain[-1] == t0
    assert conv.thinking_end() == [t0]
    assert resume_parent(conv, "2.1.332")[0] == "u2" and "thinking" in resume_parent(conv, "2.1.332")[1]
    assert [s.records[i].uuid for i in resumed_chain(conv, "2.1.332")] == ["u1", "a1", "u2"]
    assert s.records[make_slice(s).point].uuid == "u2"
    assert resume_parent(conv, "2.1.7")[0] == "u2"
    # before 2.1.7 the thinking is continued from, and kept
    old = _cut_while_thinking(tmp_path, "2.1.6", [[THINK]], "old.jsonl")
    assert resume_parent(old.conversation, "2.1.6")[0] == "t0" and old.records[make_slice(old).point].uuid == "t0"
    assert [old.records[i].uuid for i in resumed_chain(old.conversation, "2.1.6")][-1] == "t0"
    # two thinking blocks, redacted thinking too: both left out
    two = _cut_while_thinking(tmp_path, "2.1.332", [[THINK], [{"type": "redacted_thinking", "data": "x"}]], "two.jsonl")
    assert resume_parent(two.conversation, "2.1.332")[0] == "u2" and len(two.conversation.thinking_end()) == 2


@pytest.mark.parametrize(
    "last_blocks",
    [
        [[THINK], [{"type": "text", "text": "answer"}]],  # the reply went on after its thinking
        [[THINK, {"type": "text", "text": "answer"}]],  # a record of thinking and text
        [[{"type": "text", "text": "partial"}]],  # cut off inside its text: continued from (8 of 8 on the binaries)
        [[THINK], [tool_use("c1", "Bash", {"command": "ls"})]],  # cut off after a call, before its result
    ],
)
def test_a_reply_that_is_not_thinking_only_at_the_end_is_continued_from(tmp_path, last_blocks):
    from inspector.claude.measured import resume_parent
    from inspector.transcript.records import F_THINKING_ONLY

    s = _cut_while_thinking(tmp_path, "2.1.332", last_blocks)
    conv = s.conversation
    assert conv.thinking_end() == [] and resume_parent(conv, "2.1.332")[0] == s.records[conv.leaf].uuid
    assert not s.records[conv.leaf].flags & F_THINKING_ONLY


@pytest.mark.realdata  # reads ../shared/realdata: the realdata layer
@requires_realdata
def test_a_real_session_killed_while_the_model_thought_resumes_from_the_result_before():
    """A 2.1.29 session of ../shared/realdata ends in a thinking fragment (one output token, no stop reason) and a
    progress record: the process ended while the model thought. Its file chain keeps the fragment; a resume
    continues from the tool result the reply answered."""
    from inspector.claude.measured import resume_parent, resumed_chain

    [path] = REAL_PROJECTS.glob("-Users-gtrrz-victor-wks-test-cli-cli/24a274a3-*.jsonl")
    s = Session.load(path)
    conv = s.conversation
    [cut] = conv.thinking_end()
    assert s.records[conv.leaf].type == "assistant" and conv.leaf == cut and s.version == "2.1.29"
    before = conv.chain[-2]
    assert s.records[before].tool_results and resume_parent(conv, s.version)[0] == s.records[before].uuid
    assert resumed_chain(conv, s.version) == list(conv.chain[:-1])


def _between_results(tmp_path, version, answered, name="p.jsonl"):
    """A prompt and a reply of two parallel calls (one record each, the second below the first), the results of the
    calls named in `answered` written below their calls, the file written by `version`."""
    recs = [
        user("u1", None, "check both", sec=0),
        assistant("f1", "u1", [tool_use("c1", "Bash", {"command": "sleep 100"})], sec=1, mid="m1"),
        assistant("f2", "f1", [tool_use("c2", "Bash", {"command": "ls"})], sec=2, mid="m1"),
    ]
    for k, (tid, call) in enumerate((("c1", "f1"), ("c2", "f2"))):
        if tid in answered:
            recs.append(tool_result(f"r{k + 1}", call, tid, sec=3 + k))
    for r in recs:
        r["version"] = version
    return Session.load(write_jsonl(tmp_path / name, recs))


def test_a_resume_between_parallel_calls_results_continues_below_the_call_left_without_one(tmp_path):
    """A file that ends after one parallel call's result, another call unanswered (a process killed while it ran):
    from 2.1.265 `--resume` writes an interrupted result below that call and continues below it (bisected with the
    harness's unanswered-call probe; 2.1.328 and 2.1.332 on generated sessions cut there, 3 of 3), before it below
    the last result, the leaf."""
    from inspector.claude.measured import resume_parent

    s = _between_results(tmp_path, "2.1.332", {"c2"})
    conv = s.conversation
    assert s.records[conv.leaf].uuid == "r2" and s.records[conv.unanswered_call()].uuid == "f1"
    uuid, why = resume_parent(conv, "2.1.332")
    assert uuid == "f1" and "interrupted result" in why
    assert resume_parent(conv, "2.1.265")[0] == "f1" and resume_parent(conv, "2.1.263")[0] == "r2"
    # the file ends in the unanswered call itself, or every call has its result: the leaf either way
    alone = _between_results(tmp_path, "2.1.332", set(), "alone.jsonl")
    call = alone.conversation.unanswered_call()
    assert call is not None and alone.records[call].uuid == "f2" and resume_parent(alone.conversation, "2.1.332")[0] == "f2"
    both = _between_results(tmp_path, "2.1.332", {"c1", "c2"}, "both.jsonl")
    assert both.conversation.unanswered_call() is None
    assert resume_parent(both.conversation, "2.1.332")[0] == both.records[both.conversation.leaf].uuid


# -- a file cut inside a compaction (the boundary written, the summary not): where --resume continues ----------------


def _cut_after_second_boundary(keeps: bool, version: str = "2.1.332") -> list[dict]:
    """`_back_to_back` cut right after its second boundary: that compaction keeping the first's tail and what followed
    (`keeps`), or nothing; a prompt_snapshot written after n2, before the boundary (2.1.332's shape)."""
    recs = _back_to_back(version)[:9]
    recs.insert(8, attachment("p", "n2", {"type": "prompt_snapshot"}, sec=7, version=version))
    if not keeps:
        del recs[9]["compactMetadata"]["preservedMessages"]
    return recs


def test_a_cut_after_a_boundary_that_kept_nothing_below_one_that_kept_some_continues_from_the_boundary(tmp_path):
    """The loader drops every record before the last boundary once an earlier compaction kept some (2.1.88's xRY,
    2.1.332's kRr): nothing of the conversation is left, and --resume continued from the boundary itself (2.1.328
    and 2.1.332: 13 of 13 such cuts of generated runs); inspector took the last reply before it."""
    from inspector.claude.measured import resume_parent

    s = load(tmp_path, _cut_after_second_boundary(keeps=False))
    c = s.conversation
    assert c.leaf_uuid == "b2"
    assert uuids(s, c.chain) == ["b2"]
    uuid, rule = resume_parent(c, "2.1.332")
    assert uuid == "b2" and "sends none of the conversation" in rule
    from helpers import run_cli

    code, out, err = run_cli("tokens", str(s.path))
    assert code == 0, err
    assert "Resume: continues from line 10: the file ends inside a compaction" in out  # the boundary's line


def test_a_cut_after_a_boundary_that_kept_nothing_in_a_file_with_no_kept_records_is_read_whole(tmp_path):
    """No compaction of the file keeps records: the loader drops nothing, and the resume continued from the last
    record before the boundary (2.1.328 seed 1021, a partial compaction's boundary)."""
    recs = _cut_after_second_boundary(keeps=False)
    del recs[4]["compactMetadata"]["preservedMessages"]
    s = load(tmp_path, recs)
    assert s.conversation.leaf_uuid == "n2"  # (the prompt_snapshot below it is not sent: the walk goes up to n2)


def test_a_cut_before_the_summary_relinks_the_kept_records_without_their_anchor(tmp_path):
    """The summary (the anchor the kept records hang off) was never written: Claude Code relinks them all the same
    (it checks the kept records, not the anchor) and drops the prompt_snapshot after them, so the resume continued
    from the kept tail (2.1.332 REPL seed 99016), where inspector took that prompt_snapshot."""
    s = load(tmp_path, _cut_after_second_boundary(keeps=True))
    c = s.conversation
    assert c.relink is not None and c.relink.anchor_at == -1
    assert c.leaf_uuid == "n2"
    assert uuids(s, c.chain) == ["k1", "k2", "n1", "n2"]
    from inspector.claude.measured import resume_parent

    uuid, rule = resume_parent(c, "2.1.332")
    assert uuid == "n2" and "without the summary" in rule
    # the same file with its summary written: no compaction is cut, the rule is the leaf's
    whole = _back_to_back()
    assert load(tmp_path, whole, name="w.jsonl").conversation.cut_in_compaction() is None


def test_a_cut_after_the_compactions_attachments_continues_from_the_kept_tail(tmp_path):
    """The attachments a compaction writes after its boundary hang off the boundary alone: a sent one is no leaf when
    its walk reaches no message (2.1.328 seed 96004 cut after its date attachment continued from the kept tail)."""
    recs = _cut_after_second_boundary(keeps=True)
    recs.append(attachment("d", "b2", {"type": "date"}, sec=8, rendered="Today is ...", version="2.1.332"))
    s = load(tmp_path, recs)
    assert s.conversation.leaf_uuid == "n2"
    recs2 = _cut_after_second_boundary(keeps=False)
    recs2.append(attachment("d", "b2", {"type": "date"}, sec=8, rendered="Today is ...", version="2.1.332"))
    s2 = load(tmp_path, recs2, name="t.jsonl")
    assert s2.conversation.leaf_uuid == "d"  # nothing else loaded: the last of them (2.1.332 seed 79307)


def test_before_2_1_81_a_cut_after_a_boundary_keeps_the_old_leaf(tmp_path):
    """2.1.80's loader dropped nothing: the last reply before the boundary stays the leaf."""
    s = load(tmp_path, _cut_after_second_boundary(keeps=False, version="2.1.80"))
    assert s.conversation.leaf_uuid == "n2"
