"""What 2.1.159-2.1.327 releases write and send that 2.1.328 does otherwise, each bisected on the binaries with
generated seeds (docs/binary-findings.md): a re-attached file's record, where an automatic compaction writes the
session's context, and how a system-role reminder of several entries is sent."""

from __future__ import annotations

import pytest
from builders import assistant, tool_result, tool_use, user
from helpers import write_jsonl

from inspector.claude.wire import api_messages
from inspector.compact import CompactRequest, compact
from inspector.transcript.session import Session

CALL = "<system-reminder>\nCalled the Read tool with the following input: {}\n</system-reminder>"
RESULT = "<system-reminder>\nResult of calling the Read tool:\n1\tone\n</system-reminder>"


def _file_reminder() -> dict:
    return {
        "type": "attachment",
        "attachment": {"type": "file", "filename": "/w/a.txt"},
        "rendered": [{"content": CALL}, {"content": RESULT}],
        "renderedRole": "system",
    }


@pytest.mark.parametrize(
    "style, sent",
    [
        ("system-bare", "Called the Read tool with the following input: {}\nResult of calling the Read tool:\n1\tone"),
        (
            "system",
            "<system-reminder>\nCalled the Read tool with the following input: {}\nResult of calling the Read tool:"
            "\n1\tone\n</system-reminder>",
        ),
    ],
)
def test_the_entries_of_one_system_role_reminder_are_sent_as_one(style, sent):
    """2.1.285-2.1.317 send a re-attached file's call and result in the system role, as one reminder joined by a
    newline (2.1.315 seed 150000, bare; 2.1.290 seed 150001, wrapped once); two reminders are joined by a blank line."""
    bodies = [
        {"type": "user", "message": {"role": "user", "content": "go"}},
        _file_reminder(),
        {
            "type": "attachment",
            "attachment": {"type": "date"},
            "rendered": [{"content": "<system-reminder>\nToday's date is 2026-12-07.\n</system-reminder>"}],
            "renderedRole": "system",
        },
    ]
    msgs = api_messages(bodies, style)
    system = [m for m in msgs if m["role"] == "system"]
    assert len(system) == 1
    text = system[0]["content"] if isinstance(system[0]["content"], str) else system[0]["content"][0]["text"]
    date = "Today's date is 2026-12-07." if style == "system-bare" else bodies[2]["rendered"][0]["content"]
    assert text == f"{sent}\n\n{date}"


def _read_session(tmp_path, version):
    """A Read of a file, then four Bash rounds, written by `version`."""
    recs = [user("u0", None, "read it", sec=1, version=version)]
    recs.append(assistant("a0", "u0", [tool_use("t0", "Read", {"file_path": "/w/a.txt"})], sec=2, version=version))
    r0 = tool_result("r0", "a0", "t0", "     1\tone\n", sec=3, version=version)
    r0["toolUseResult"] = {
        "type": "text",
        "file": {"filePath": "/w/a.txt", "content": "one", "numLines": 1, "startLine": 1, "totalLines": 1},
    }
    recs.append(r0)
    parent = "r0"
    for k in range(1, 5):
        call = tool_use(f"t{k}", "Bash", {"command": f"echo {k}"})
        recs.append(assistant(f"a{k}", parent, [call], sec=2 * k + 2, version=version, usage=(1, 0, 20_000 * k, 10)))
        recs.append(tool_result(f"r{k}", f"a{k}", f"t{k}", f"{k}", sec=2 * k + 3, version=version))
        parent = f"r{k}"
    for r in recs:
        r["cwd"] = "/w"
    return Session.load(write_jsonl(tmp_path / "p" / "s.jsonl", recs))


@pytest.mark.parametrize(
    "version, rendered, role, framing",
    [
        ("2.1.200", False, None, False),
        ("2.1.284", True, None, False),
        ("2.1.317", True, "system", False),
        ("2.1.318", True, "user", True),
    ],
)
def test_a_re_attached_file_is_written_as_the_release_wrote_it(tmp_path, version, rendered, role, framing):
    """No text before 2.1.268, no role up to 2.1.284, the system role 2.1.285-2.1.317, the user's with
    `savedCopyFraming` from 2.1.318 (bisected with seed 150000; 2.1.200's, 2.1.268's and 2.1.328's records)."""
    res = compact(_read_session(tmp_path, version), CompactRequest("compact"))
    files = [b for b in res.new_records if (b.get("attachment") or {}).get("type") == "file"]
    assert len(files) == 1, [b.get("attachment", {}).get("type") for b in res.new_records]
    (f,) = files
    assert ("rendered" in f) is rendered and f.get("renderedRole") == role
    assert ("savedCopyFraming" in f["attachment"]) is framing


@pytest.mark.parametrize("version, first", [("2.1.270", False), ("2.1.273", False), ("2.1.274", True), ("2.1.332", True)])
def test_an_automatic_compaction_that_keeps_a_tail_writes_the_context_where_the_release_did(tmp_path, version, first):
    """Before its summary from 2.1.274; after its re-announcements up to 2.1.273, as a compaction that keeps nothing
    does (bisected with generated seed 150003, a refusal that kept 15 messages)."""
    res = compact(_read_session(tmp_path, version), CompactRequest("compact", trigger="auto"))
    assert res.kept_uuids
    kinds = [(b.get("attachment") or {}).get("type") or b.get("type") for b in res.new_records]
    summary = next(i for i, b in enumerate(res.new_records) if b.get("isCompactSummary"))
    ctx = kinds.index("session_context")
    assert (ctx < summary) is first, kinds


def _snapshot(uuid, parent, version, sec):
    from builders import attachment

    att = {"type": "prompt_snapshot", "systemPrompt": ["You are Claude Code."], "model": "claude-sonnet-4-6"}
    return attachment(uuid, parent, att, sec=sec, version=version)


def _session_with_snapshots(tmp_path, version, earlier=True, exited=False):
    """Four Bash rounds, with a prompt_snapshot after the last result (written for the next request), and, when
    `earlier`, one at the start and one after the third result; `exited`: a process ended after the last one (a
    cost-state record), so a later process compacts."""
    recs = [user("u0", None, "run", sec=1, version=version)]
    parent = "u0"
    if earlier:
        recs.append(_snapshot("p0", "u0", version, 2))
        parent = "p0"
    for k in range(1, 5):
        call = tool_use(f"t{k}", "Bash", {"command": f"echo {k}"})
        recs.append(assistant(f"a{k}", parent, [call], sec=4 * k, version=version, usage=(1, 0, 20_000 * k, 10)))
        recs.append(tool_result(f"r{k}", f"a{k}", f"t{k}", f"{k}", sec=4 * k + 1, version=version))
        parent = f"r{k}"
        if k == 4 or (k == 3 and earlier):
            recs.append(_snapshot(f"p{k}", parent, version, 4 * k + 2))
            parent = f"p{k}"
    if exited:
        recs.append({"type": "cost-state", "sessionId": "s1", "version": version})
    return Session.load(write_jsonl(tmp_path / "p" / "s.jsonl", recs))


@pytest.mark.parametrize(
    "version, earlier, exited, listed",
    [
        ("2.1.300", True, False, []),  # the live process holds p4 after p3, before the tail: not named
        ("2.1.300", True, True, ["p4"]),  # a later process loaded it where the file has it: named
        ("2.1.300", False, False, ["p4"]),  # no snapshot before it: it stays in the tail
        ("2.1.327", False, False, ["p4"]),
        ("2.1.328", False, False, []),  # 2.1.328 names none
        ("2.1.332", True, True, []),
    ],
)
def test_a_kept_tail_lists_its_prompt_snapshots_up_to_2_1_327(tmp_path, version, earlier, exited, listed):
    """Up to 2.1.327 the live process holds each snapshot it writes just after the one before it, and the kept tail
    is taken from that list; one loaded from the file stays where it is (generated seeds 150003 on 2.1.290 and 2.1.315,
    152002 on 2.1.300, 155000 on 2.1.268 and 2.1.300). No new snapshot is written while one is kept; 2.1.328 names none
    and writes a new one after an automatic compaction."""
    s = _session_with_snapshots(tmp_path, version, earlier, exited)
    res = compact(s, CompactRequest("compact", trigger="auto"))
    kept = list(res.kept_uuids)
    assert [u for u in kept if u.startswith("p")] == listed, kept
    written = [b for b in res.new_records if (b.get("attachment") or {}).get("type") == "prompt_snapshot"]
    assert bool(written) is not listed


def test_a_later_snapshot_is_listed_after_the_one_before_it():
    from inspector.compact.engine import _snapshots_together

    class R:
        def __init__(self, kind):
            self.kind = kind

        def get(self, key):
            return self.kind if key == "attachment_type" else None

    class S:
        records = [R("prompt_snapshot"), R(None), R(None), R("prompt_snapshot"), R("total_tokens_reminder")]

    assert _snapshots_together(S(), [0, 1, 2, 3, 4]) == [0, 3, 1, 2, 4]
    assert _snapshots_together(S(), [1, 2, 3, 4]) == [1, 2, 3, 4]


@pytest.mark.parametrize("version, unrecorded", [("2.1.300", []), ("2.1.328", ["safeguards"]), ("2.1.332", ["safeguards"])])
def test_the_auto_mode_safeguards_are_unrecorded_only_from_2_1_328(tmp_path, version, unrecorded):
    """2.1.300 sends the classifier's safeguards with the first auto-mode request of each process and records them
    in that request's row (generated seed 152000: its 13 requests rebuilt identical once nothing is said to be
    missing); 2.1.328 sends them with every such request and records none."""
    from inspector.claude.requests import rebuild_requests

    row = {
        "type": "api-request",
        "id": "q1",
        "params": {"model": "claude-sonnet-4-6", "betas": ["afk-mode-2026-01-31"], "max_tokens": 32000},
        "tail": [],
        "version": version,
        "sessionId": "s1",
        "timestamp": "2026-12-07T00:00:00.000Z",
    }
    s = Session.load(write_jsonl(tmp_path / "s.jsonl", [user("u0", None, "go", sec=0, version=version), row]))
    (q,) = rebuild_requests(s)
    assert q.not_recorded == unrecorded


@pytest.mark.parametrize("version, listing_role", [("2.1.270", "system"), ("2.1.284", "system"), ("2.1.332", "user")])
def test_an_attachment_recorded_without_its_role_is_sent_in_the_role_of_its_kind(version, listing_role):
    """2.1.268-2.1.284 record an attachment's text without `renderedRole`: they send it in the system role, the
    attribution (remote_session_change) in the user turn (2.1.270 seed 152001's round trips, identical once so); from
    2.1.285 the record says, and a record that says nothing is user text."""
    listing = "<system-reminder>\nAvailable agent types for the Agent tool:\n- Explore: Fast search\n</system-reminder>"
    attribution = "<system-reminder>\nAttribution for git commits: none\n</system-reminder>"
    bodies = [
        {"type": "user", "message": {"role": "user", "content": "go"}, "version": version},
        {
            "type": "attachment",
            "attachment": {"type": "agent_listing_delta"},
            "rendered": [{"content": listing}],
            "version": version,
        },
        {
            "type": "attachment",
            "attachment": {"type": "remote_session_change"},
            "rendered": [{"content": attribution}],
            "version": version,
        },
    ]
    msgs = api_messages(bodies, "system-bare")
    roles = {
        (
            "listing" if "Available agent" in str(m["content"]) else "attribution" if "Attribution" in str(m["content"]) else "go"
        ): m["role"]
        for m in msgs
    }
    assert roles.get("listing") == listing_role, msgs
    user_text = str([m["content"] for m in msgs if m["role"] == "user"])
    assert "Attribution for git commits" in user_text


@pytest.mark.parametrize(
    "version, first", [("2.1.20", "continue"), ("2.1.77", "continue"), ("2.1.78", "continue\n"), ("2.1.332", "continue\n")]
)
def test_two_user_turns_joined_as_one_meet_with_a_newline_from_2_1_78(version, first):
    """joinTextAtSeam (bisected on the binaries): from 2.1.78 a newline goes where two user turns joined as one meet
    text to text; 2.1.20 sent "continue" + "continue" as they are (generated seed 180004: a step that ended without a
    reply, resumed with the same prompt). The release is the sending one: the last record's."""
    bodies = [
        {"type": "user", "version": version, "message": {"role": "user", "content": "continue"}},
        {"type": "user", "version": version, "message": {"role": "user", "content": "continue"}},
    ]
    assert api_messages(bodies)[0]["content"] == [{"type": "text", "text": first}, {"type": "text", "text": "continue"}]


@pytest.mark.parametrize(
    "version, form",
    [
        ("2.1.201", "text"),
        ("2.1.204", "text"),
        ("2.1.205", "prefix"),
        ("2.1.219", "prefix"),
        ("2.1.233", "prefix"),
        ("2.1.234", "wrap"),
        ("2.1.332", "wrap"),
    ],
)
def test_a_background_agent_s_turn_is_sent_as_its_release_words_it(version, form):
    """A background agent's completion starts a turn: 2.1.201-2.1.204 sent the notification's own text (generated seed
    180001); 2.1.205-2.1.233 put the notice's words before it (read in their code; generated seeds 189005-189059 on
    2.1.219); 2.1.234 and later wrap both in a system-reminder. inspector had wrapped it from 2.1.234 and sent the
    text alone before."""
    from inspector.claude.wire import NOTIFICATION_OPEN, NOTIFICATION_WORDS

    text = "<task-notification>\n<task-id>a1</task-id>\n<status>completed</status>\n</task-notification>"
    for content in (text, [{"type": "text", "text": text}]) if form != "wrap" else (text,):  # (2.1.234+: a string)
        bodies = [
            {
                "type": "user",
                "version": version,
                "origin": {"kind": "task-notification"},
                "message": {"role": "user", "content": content},
            }
        ]
        sent = api_messages(bodies)[0]["content"]
        sent = sent if isinstance(sent, str) else sent[0]["text"]
        want = {"text": text, "prefix": NOTIFICATION_WORDS + text, "wrap": NOTIFICATION_OPEN + text + "\n</system-reminder>"}
        assert sent == want[form], (version, content)


@pytest.mark.parametrize(
    "version, sent", [("1.0.128", True), ("2.0.46", True), ("2.0.47", False), ("2.1.88", False), (None, False)]
)
def test_a_reply_written_as_an_api_error_is_sent_up_to_2_0_46(version, sent):
    """A request refused as too long writes its reply as an API error ("Prompt is too long"): up to 2.0.46 the requests
    after it send it as the assistant message it was written as (the api-error-left-out probe, bisected; 1.0.128's
    resumed requests sent it, generated seed 197000), from 2.0.47 they leave it out."""
    extra = {"version": version} if version else {}
    bodies = [
        {"type": "user", "message": {"role": "user", "content": "run the checks"}, **extra},
        {
            "type": "assistant",
            "isApiErrorMessage": True,
            "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "Prompt is too long"}]},
            **extra,
        },
        {"type": "user", "message": {"role": "user", "content": "continue"}, **extra},
    ]
    got = api_messages(bodies)
    assert [m["role"] for m in got] == (["user", "assistant", "user"] if sent else ["user"])
    assert any(m["role"] == "assistant" and m["content"][0]["text"] == "Prompt is too long" for m in got) is sent
