"""Property tests (hypothesis) on generated transcripts: the compaction invariants always hold."""

from __future__ import annotations

from datetime import UTC, datetime

from builders import assistant, system, tool_result, tool_use, user
from helpers import write_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.compact import CompactRequest, KeepConfig, MicrocompactParams, compact
from inspector.compact.invariants import (
    adjust_index_to_preserve_api_invariants,
    calculate_messages_to_keep_index,
    orphan_tool_results,
    split_message_ids,
)
from inspector.tokens.estimate import estimate_record_padded
from inspector.transcript.session import Session

turn = st.tuples(
    st.integers(1, 3),  # responses in the turn
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 9000)), min_size=1, max_size=3),  # per response: tool calls, result size
)


def build(turns, boundary_after: int | None):
    recs, parent, sec, n = [], None, 0, 0
    for t, (responses, calls) in enumerate(turns):
        uid = f"u{t}"
        recs.append(user(uid, parent, f"request {t} " + "r" * 50, sec=sec))
        parent, sec = uid, sec + 1
        for k in range(responses):
            ncalls, size = calls[k % len(calls)]
            mid = f"m{t}_{k}"
            frag = f"a{t}_{k}_t"
            recs.append(assistant(frag, parent, [{"type": "text", "text": f"working {t}.{k}"}], mid=mid, sec=sec))
            parent, sec = frag, sec + 1
            srcs = []
            for c in range(ncalls):
                tid = f"t{n}"
                n += 1
                aid = f"a{t}_{k}_{c}"
                recs.append(assistant(aid, parent, [tool_use(tid, "Read", {"file_path": f"/w/{tid}.py"})], mid=mid, sec=sec))
                srcs.append((aid, tid))
                parent, sec = aid, sec + 1
            for aid, tid in srcs:  # parallel results arrive after all calls of the response
                rid = f"r_{tid}"
                recs.append(tool_result(rid, aid, tid, "x" * size, sec=sec))
                parent, sec = rid, sec + 1
        if boundary_after is not None and t == boundary_after:
            recs.append(
                system(
                    f"b{t}",
                    None,
                    "compact_boundary",
                    sec=sec,
                    logicalParentUuid=parent,
                    compactMetadata={"trigger": "auto", "preTokens": 1},
                )
            )
            recs.append(
                user(
                    f"s{t}",
                    f"b{t}",
                    "This session is being continued from a previous conversation.",
                    sec=sec + 1,
                    isCompactSummary=True,
                )
            )
            parent, sec = f"s{t}", sec + 2
    return recs


sessions = st.builds(lambda turns, b: (turns, b), st.lists(turn, min_size=2, max_size=8), st.one_of(st.none(), st.integers(0, 3)))
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=True,
)


@SETTINGS
@given(sessions, st.integers(0, 60), st.integers(500, 20_000), st.integers(1, 6))
def test_keep_window_invariants(tmp_path_factory, case, start_seed, min_tokens, min_text):
    turns, b = case
    s = Session.load(write_jsonl(tmp_path_factory.mktemp("p") / "s.jsonl", build(turns, b)))
    chain = s.conversation.logical_chain  # the whole history, across the boundary if there is one
    msgs = [s.records[i] for i in chain]
    padded = [estimate_record_padded(s.body(i)) for i in chain]
    boundary = max((k for k, m in enumerate(msgs) if m.is_compact_boundary), default=-1)
    last = boundary + 1 + start_seed % max(1, len(msgs) - boundary - 1)
    start = calculate_messages_to_keep_index(
        msgs, min(last, len(msgs) - 1), padded.__getitem__, KeepConfig(min_tokens, min_text, max(min_tokens, 40_000))
    )
    assert start > boundary  # never reaches back across the last boundary
    assert not orphan_tool_results(msgs[start:])
    assert not split_message_ids(msgs, start)
    # the adjustment alone never splits a pair or a response, from any start
    for k in range(len(msgs)):
        j = adjust_index_to_preserve_api_invariants(msgs, k)
        assert j <= k and not orphan_tool_results(msgs[j:]) and not split_message_ids(msgs, j)


@SETTINGS
@given(sessions, st.sampled_from(["session-memory", "full", "microcompact"]))
def test_strategies_never_grow_the_context_and_keep_pairs(tmp_path_factory, case, strategy):
    turns, b = case
    recs = build(turns, b)
    s = Session.load(write_jsonl(tmp_path_factory.mktemp("p") / "s.jsonl", recs))
    r = compact(
        s, CompactRequest(strategy, microcompact_params=MicrocompactParams(now=datetime(2027, 1, 1, tzinfo=UTC), keep_recent=2))
    )
    if r.changed:
        kept = [s.records[s.conversation.by_uuid[u]] for u in r.kept_uuids]
        assert not orphan_tool_results(kept)
        mids = {m.message_id for m in kept if m.type == "assistant"}
        summarized = [s.records[s.conversation.by_uuid[u]] for u in r.summarized_uuids]
        assert not mids & {m.message_id for m in summarized if m.type == "assistant"}
        # microcompact only removes; a summary is smaller than what it replaces once that is more than a few pages
        # (the offline summary quotes every user message, so on a tiny slice it can be the larger of the two)
        if strategy == "microcompact" or sum(x.content_chars for x in summarized) > 60_000:
            assert r.tokens_after <= r.tokens_before
    else:
        assert r.tokens_after == r.tokens_before
