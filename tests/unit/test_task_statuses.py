"""Which finished background agents a compaction re-announces (2.1.3xx `task_status`): the ones its process still
holds, and Claude Code forgets a finished agent 30 s after announcing it (`evictAfter`, read from 2.1.328 and
2.1.332; found by the fresh 2.1.332 REPL seed 31027)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from inspector.compact.base import make_slice
from inspector.compact.reattach import EVICT_AFTER_S, task_statuses
from inspector.transcript.session import Session

T0 = datetime(2026, 12, 3, 7, 39, 30, tzinfo=UTC)


def _at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:23] + "Z"


def _session(tmp_path: Path, notified: dict[str, float], idle: frozenset[str] = frozenset(), version: str = "2.1.332") -> Session:
    """A session (of `version`, 2.1.332 unless said) that launches one background agent per entry and is told each
    ended at its time (s): as the model works (a queued command), or, for the agents in `idle`, as a turn of its own
    (a user record)."""
    recs: list[dict] = []
    parent = None

    def add(rec: dict, t: float) -> None:
        nonlocal parent
        rec.update(uuid=f"u{len(recs):03d}", parentUuid=parent, sessionId="s1", version=version, timestamp=_at(t))
        rec.setdefault("cwd", "/w")
        recs.append(rec)
        parent = rec["uuid"]

    add({"type": "user", "message": {"role": "user", "content": "start the agents"}}, 0)
    for n, agent in enumerate(notified):
        call = f"toolu_{n}"
        add(
            {
                "type": "assistant",
                "message": {
                    "id": f"msg_{n}",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [{"type": "tool_use", "id": call, "name": "Agent", "input": {"description": f"job {n}"}}],
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                },
            },
            1 + n,
        )
        add(
            {
                "type": "user",
                "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": "launched"}]},
                "toolUseResult": {
                    "status": "async_launched",
                    "agentId": agent,
                    "description": f"job {n}",
                    "outputFile": f"/tmp/{agent}.output",
                },
            },
            1.5 + n,
        )
    for agent, t in notified.items():
        prompt = f"<task-notification>\n<task-id>{agent}</task-id>\n<status>completed</status>\n</task-notification>"
        if agent in idle:
            origin = {"kind": "task-notification", "producer": "session-task"}
            add({"type": "user", "message": {"role": "user", "content": prompt}, "origin": origin}, t)
        else:
            add({"type": "attachment", "attachment": {"type": "queued_command", "prompt": prompt}}, t)
    add({"type": "user", "message": {"role": "user", "content": "go on"}}, max(notified.values()) + 1)
    add(
        {
            "type": "assistant",
            "message": {
                "id": "msg_end",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "done"}],
                "usage": {"input_tokens": 20, "output_tokens": 5},
            },
        },
        max(notified.values()) + 2,
    )
    path = tmp_path / "s1.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
    return Session.load(path)


def _announced(s: Session, asked: float) -> list[str]:
    sl = make_slice(s, s.records[-2].uuid)  # compacting at the prompt before the last reply: the process that ran it
    out, notes = task_statuses(sl, T0 + timedelta(seconds=asked + 5), T0 + timedelta(seconds=asked))
    gone = [n for n in notes if "not re-announced" in n]
    launched = sum(1 for i, r in enumerate(s.records) if r.type == "user" and "toolUseResult" in s.body(i))
    assert len(out) + len(gone) == launched  # each agent is announced or said to be forgotten
    return [a["attachment"]["taskId"] for a in out]


def test_an_agent_announced_30_s_before_is_forgotten_and_said_so(tmp_path: Path) -> None:
    s = _session(tmp_path, {"a1": 10.0, "a2": 14.0, "a3": 14.3})
    # asked 2 s after a1's time ran out: a1 is gone, the two announced later are still held
    assert _announced(s, 10.0 + EVICT_AFTER_S + 2) == ["a2", "a3"]
    sl = make_slice(s, s.records[-2].uuid)
    _, notes = task_statuses(sl, None, T0 + timedelta(seconds=10.0 + EVICT_AFTER_S + 2))
    assert any("a1" in n and "32 s before the compaction" in n for n in notes)


def test_every_agent_is_held_within_30_s_and_none_after(tmp_path: Path) -> None:
    s = _session(tmp_path, {"a1": 10.0, "a2": 14.0})
    assert _announced(s, 10.0 + EVICT_AFTER_S - 0.5) == ["a1", "a2"]
    assert _announced(s, 14.0 + EVICT_AFTER_S) == []


def test_without_a_time_every_agent_is_re_announced(tmp_path: Path) -> None:
    s = _session(tmp_path, {"a1": 10.0})
    out, _ = task_statuses(make_slice(s, s.records[-2].uuid), None)
    assert [a["attachment"]["taskId"] for a in out] == ["a1"]


def test_an_agent_told_while_the_model_was_idle_is_forgotten_too(tmp_path: Path) -> None:
    """A notification that arrives while nothing runs is a user turn of its own, not a queued command (fresh 2.1.328
    REPL seed 67005: the agent told so two minutes before a "summarize up to here" was not re-announced, inspector
    announced it)."""
    s = _session(tmp_path, {"a1": 10.0, "a2": 14.0}, idle=frozenset({"a1"}))
    assert _announced(s, 10.0 + EVICT_AFTER_S + 2) == ["a2"]
    assert _announced(s, 10.0 + EVICT_AFTER_S - 0.5) == ["a1", "a2"]


@pytest.mark.parametrize(
    "version, rendered, role, ask, cont, said",
    [
        ("2.1.200", False, False, False, False, True),
        ("2.1.284", True, False, False, False, False),
        ("2.1.292", True, True, False, False, False),
        ("2.1.293", True, True, False, True, False),
        ("2.1.327", True, True, True, True, False),
    ],
)
def test_a_finished_agent_is_re_announced_as_the_release_recorded_it(tmp_path, version, rendered, role, ask, cont, said):
    """The task_status of a finished agent by release (generated seed 147102 on 2.1.200-2.1.328, and the binaries):
    no text before 2.1.268 (Claude Code renders it as it sends it), the reminder's role from 2.1.285,
    `canContinueAgent` from 2.1.293, the offer to ask the agent from 2.1.327; a release that records no process's
    end (before 2.1.277) is said to be read as one process."""
    s = _session(tmp_path, {"a1": 10.0}, version=version)
    out, notes = task_statuses(make_slice(s, s.records[-2].uuid), None)
    (a,) = out
    assert ("rendered" in a) is rendered and ("renderedRole" in a) is role
    assert ("canContinueAgent" in a["attachment"]) is cont
    if rendered:
        text = a["rendered"][0]["content"]
        assert text.startswith("<system-reminder>\nTask a1 (type: local_agent) (status: completed)")
        assert ("ask agent a1 with SendMessage" in text) is ask, text
    assert any("records no process's end" in n for n in notes) is said


def test_an_agent_whose_launch_was_written_twice_is_announced_once(tmp_path: Path) -> None:
    """Claude Code holds its tasks by id: a launch's result record written twice (2.1.200 seed 147102: the same
    result on two lines) re-announces the agent once (inspector announced it twice)."""
    s = _session(tmp_path, {"a1": 10.0, "a2": 11.0})
    lines = s.path.read_bytes().splitlines(keepends=True)
    k = next(n for n, raw in enumerate(lines) if b'"async_launched"' in raw and b'"a1"' in raw)
    again = orjson.loads(lines[k])
    again["uuid"] = "u-again"
    s.path.write_bytes(b"".join([*lines[: k + 1], orjson.dumps(again) + b"\n", *lines[k + 1 :]]))
    s = Session.load(s.path)
    out, _ = task_statuses(make_slice(s, s.records[-2].uuid), None)
    assert [a["attachment"]["taskId"] for a in out] == ["a1", "a2"]
