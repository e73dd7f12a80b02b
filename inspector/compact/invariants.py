"""The rules every strategy keeps so the API accepts what remains (§7.4, §7.5, §8.3).

Work on lists of `Record`s (the index), so they are cheap and easy to test: a kept window
never splits a tool_use from its tool_result, never splits the fragments of one response
(`message.id`), and never reaches back across the last compact boundary.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from inspector.transcript.records import F_TEXT, Record


@dataclass(frozen=True, slots=True)
class KeepConfig:
    """tengu_sm_compact_config (§7.3), each number adjustable."""

    min_tokens: int = 10_000
    min_text_block_messages: int = 5
    max_tokens: int = 40_000


def adjust_index_to_preserve_api_invariants(msgs: Sequence[Record], start: int) -> int:
    """adjustIndexToPreserveAPIInvariants (§7.5)."""
    if start <= 0 or start >= len(msgs):
        return start
    # 1. tool pairs: results kept whose tool_use is not kept pull the start back
    needed = {tid for m in msgs[start:] for tid in m.tool_results}
    needed -= {tid for m in msgs[start:] if m.type == "assistant" for tid, _ in m.tool_uses}
    k = start - 1
    while needed and k >= 0:
        m = msgs[k]
        if m.type == "assistant":
            ids = {tid for tid, _ in m.tool_uses}
            if ids & needed:
                start = k
                needed -= ids
        k -= 1
    # 2. shared message.id: earlier fragments of a kept response are kept too (the id set is fixed)
    mids = {m.message_id for m in msgs[start:] if m.type == "assistant" and m.message_id}
    for k in range(start - 1, -1, -1):
        m = msgs[k]
        if m.type == "assistant" and m.message_id in mids:
            start = k
    return start


def has_text(m: Record) -> bool:
    """A message with text: assistant with a text block; user with string content or a text block."""
    return m.type in ("user", "assistant") and bool(m.flags & F_TEXT)


def calculate_messages_to_keep_index(
    msgs: Sequence[Record],
    last_summarized_index: int,
    tokens_of: Callable[[int], int],
    config: KeepConfig = KeepConfig(),
) -> int:
    """calculateMessagesToKeepIndex (§7.4). `tokens_of(i)` is estimateMessageTokens of msgs[i]."""
    if not msgs:
        return 0
    start = last_summarized_index + 1 if last_summarized_index >= 0 else len(msgs)
    tokens = sum(tokens_of(i) for i in range(start, len(msgs)))
    texts = sum(1 for i in range(start, len(msgs)) if has_text(msgs[i]))
    if tokens >= config.max_tokens:
        return adjust_index_to_preserve_api_invariants(msgs, start)
    if tokens >= config.min_tokens and texts >= config.min_text_block_messages:
        return adjust_index_to_preserve_api_invariants(msgs, start)
    floor = 0
    for i in range(len(msgs) - 1, -1, -1):
        if msgs[i].is_compact_boundary:
            floor = i + 1
            break
    for i in range(start - 1, floor - 1, -1):
        tokens += tokens_of(i)
        texts += 1 if has_text(msgs[i]) else 0
        start = i
        if tokens >= config.max_tokens:
            break
        if tokens >= config.min_tokens and texts >= config.min_text_block_messages:
            break
    return adjust_index_to_preserve_api_invariants(msgs, start)


def group_by_api_round(msgs: Sequence[Record]) -> list[list[int]]:
    """groupMessagesByApiRound (§8.3): a new group at each assistant with a new message.id."""
    groups: list[list[int]] = [[]]
    last_id: str | None = None
    for i, m in enumerate(msgs):
        if m.type == "assistant" and m.message_id != last_id:
            if groups[-1]:
                groups.append([])
            last_id = m.message_id
        groups[-1].append(i)
    return [g for g in groups if g]


def orphan_tool_results(msgs: Sequence[Record]) -> list[str]:
    """tool_result ids with no tool_use before them in the list (an API error if sent)."""
    seen: set[str] = set()
    out = []
    for m in msgs:
        if m.type == "assistant":
            seen.update(tid for tid, _ in m.tool_uses)
        for tid in m.tool_results:
            if tid not in seen:
                out.append(tid)
    return out


def split_message_ids(msgs: Sequence[Record], start: int) -> set[str]:
    """message.ids with fragments on both sides of `start`."""
    before = {m.message_id for m in msgs[:start] if m.type == "assistant" and m.message_id}
    after = {m.message_id for m in msgs[start:] if m.type == "assistant" and m.message_id}
    return before & after
