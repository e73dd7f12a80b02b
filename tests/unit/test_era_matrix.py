"""The era matrix (inspector/claude/era_matrix.json, measured by `python -m conformance --matrix` on each release's own
binary) against the version table, and the explanations that rest on it."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from builders import assistant, attachment, system, user
from helpers import run_cli, write_jsonl

from inspector.claude import measured
from inspector.claude.versions import parse_version, show_version
from inspector.tokens.explain import analyze
from inspector.tokens.thresholds import Settings, thresholds
from inspector.transcript.session import Session

CELLS = [c for c in orjson.loads(measured.DATA.read_bytes())["cells"] if not c.get("error")]


def _id(c: dict) -> str:
    return f"{c['version']}-{c['model']}"


def test_the_matrix_covers_every_era_boundary_of_the_version_table():
    """Both sides of every change of the rules were run: each era's first and last release, and each release where a
    bisection of the binaries found a rule changed, with the one before it."""
    from inspector.claude.versions import ERAS

    have = {parse_version(c["version"]) for c in CELLS}
    for era in ERAS[1:]:
        assert era.first in have, f"era {era.key} starts at {show_version(era.first)}, which the matrix did not measure"
        if era.last is not None and era.last[1:] != (99, 999):  # (1.99.999: "before 2.0.0", no release of its own)
            assert era.last in have, f"era {era.key} ends at {show_version(era.last)}, which the matrix did not measure"
    data = orjson.loads(measured.DATA.read_bytes())
    bounds = data.get("boundaries", [])
    assert {b["probe"] for b in bounds} >= {"blocking", "enforce-sonnet-4-5", "enforce-sonnet-4-6", "leaf", "analysis"}
    probed = {parse_version(r["version"]) for r in data.get("releases", []) if isinstance(r.get("leaf"), dict)}
    for b in bounds:
        first, before = parse_version(b["first"]), parse_version(b["before"])
        assert first > before and b["answers"]["before"] != b["answers"]["first"]
        where = have if b["kind"] == "cells" else probed
        for v in (first, before):  # both sides of the change were measured whole
            assert v in where, f"{b['probe']} changes at {b['first']}: {show_version(v)} was not measured"


RELEASES = orjson.loads(measured.DATA.read_bytes()).get("releases", [])


@pytest.mark.parametrize("release", RELEASES, ids=lambda r: r["version"])
def test_the_leaf_and_repair_rules_agree_with_what_each_release_did(release):
    """Which leaf a resume continues from and the order it puts off-chain results back in, as each release's binary
    answered the harness's probes (leaf_order_rule, leaf_named_rule, repair_order_rule, leaf_thinking_rule,
    unanswered_call_rule), is what inspector's tree applies to a file that release wrote."""
    from inspector.transcript.tree import (
        leaf_by_file_order,
        leaves_out_thinking_end,
        names_last_prompt,
        repair_in_file_order,
        resumes_below_unanswered_call,
    )

    v = release["version"]
    answers = {
        "leaf_order": ("continues from", {"the last written": True, "the newest stamped": False}, leaf_by_file_order),
        "leaf_named": ("continues from", {"the named record": True, "the last written": False}, names_last_prompt),
        "repair_order": ("results", {"as written": True, "by timestamp": False}, repair_in_file_order),
        "leaf_thinking": (
            "continues from",
            {"the reply before it": True, "the thinking fragment": False},
            leaves_out_thinking_end,
        ),
        "unanswered_call": (
            "continues",
            {"below the unanswered call": True, "below the last result": False},
            resumes_below_unanswered_call,
        ),
    }
    # what no rule of the tree is about: 2.0.x chained each result after the one before (nothing off the chain);
    # 2.1.20-2.1.79 put no off-chain result back on a resume (not followed: docs/binary-findings.md); 1.0.15-1.0.71
    # wrote a resumed session into another file (a copy of the records it continued), so no leaf of the file it read
    unruled = {"on the chain", "not sent", "the resumed session was written to another file"}
    probed = [k for k in answers if release.get(k)]
    if not probed:
        pytest.skip(f"{v} was measured before these probes existed")
    for key in probed:  # (a release measured before a probe existed answers the others)
        field, meaning, rule = answers[key]
        got = (release.get(key) or {}).get(field)
        assert got in meaning or got in unruled, f"{v} {key}: an answer no rule covers: {release.get(key)}"
        if got in meaning:
            assert rule(v) == meaning[got], f"{v} {key}: the binary answered {got!r}"


@pytest.mark.parametrize("cell", CELLS, ids=_id)
def test_thresholds_agree_with_what_each_release_did(cell):
    """What inspector says a release enforces is what its binary did: compacts (and near which count) or not. The
    matrix runs its fake API on another host than Anthropic's, and inspector is told so (2.1.144-2.1.284 give a native
    1M window only on Anthropic's)."""
    th = thresholds(Settings(model=cell["model"], other_api_host=True), version=cell["version"])
    auto = cell["auto"]
    if auto["outcome"] == "compact":
        assert th.enforced and th.auto_compact is not None
        count = auto["count"] if auto.get("count") is not None else auto["usage"] + (auto.get("estimate") or 0)
        assert count - 400 <= th.auto_compact <= count + 400, th.measured
    else:
        assert th.auto_compact is None, th.measured
    blk = cell.get("blocking") or {}
    if blk.get("outcome") != "compact":  # where DISABLE_AUTO_COMPACT is not read, blocking is not measured
        assert th.blocks_before_sending == (blk.get("outcome") == "blocked")
    if blk.get("outcome") == "blocked":
        assert blk["usage"] - 400 <= th.blocking <= blk["usage"] + 400
    assert th.measured.startswith(f"measured on the {cell['version']} binary")


def test_a_release_between_two_measured_ones_says_which_it_borrows():
    rel = measured.releases()
    assert len(rel) >= 2
    lo, mid = next(
        (a, (a[0], a[1], a[2] + 1))
        for a, b in zip(rel[-2::-1], rel[::-1])
        if a[:2] == b[:2] and b[2] - a[2] > 1 and measured.segment((a[0], a[1], a[2] + 1)) == measured.segment(a)
    )
    th = thresholds(Settings(model="claude-opus-4-6"), version=show_version(mid))
    assert f"measured on {show_version(lo)}, the nearest measured release below {show_version(mid)}" in th.measured
    hi = rel[-1]
    newer = (hi[0], hi[1], hi[2] + 5)
    th = thresholds(Settings(model="claude-opus-4-6"), version=show_version(newer))
    assert f"{show_version(newer)} is newer and was not measured" in th.measured


def test_settings_the_matrix_did_not_run_keep_the_formula():
    th = thresholds(Settings(model="claude-haiku-4-5", auto_compact_window=120_000), version="2.1.328")
    assert th.measured == "" and th.auto_compact == 87_000


# -- explanations that the numbers would refute ---------------------------------------------------


def _session(
    tmp_path, usages, pre, version="2.1.88", model="claude-haiku-4-5-20251001", announce=False, failed_then_prompt=False
):
    recs, parent = [], None
    if announce:  # a 2.1.3xx session announces its model, which names a [1m] setting (none here)
        att = {"type": "model", "identity": {"modelId": model}, "text": f"You are {model}"}
        recs.append(attachment("m", None, att, sec=0, version=version))
        parent = "m"
    for k, u in enumerate(usages):
        recs.append(user(f"u{k}", parent, f"step {k}", sec=2 * k, version=version))
        recs.append(assistant(f"a{k}", f"u{k}", usage=(1, 0, u - 11, 10), sec=2 * k + 1, version=version, model=model))
        parent = f"a{k}"
    n = len(usages)
    if failed_then_prompt:  # the turn ends in the error reply of a compaction that failed; the user's next prompt
        words = "Prompt is too long · automatic compaction failed: API Error: 400 the summarizer failed"
        recs.append(
            assistant(
                "err",
                parent,
                [{"type": "text", "text": words}],
                sec=2 * n - 1,
                usage=(0, 0, 0, 0),
                version=version,
                model="<synthetic>",
                isApiErrorMessage=True,
            )
        )
        recs.append(user("next", "err", "now task 3", sec=2 * n - 1, version=version))
        parent = "next"
    recs.append(
        system(
            "b",
            None,
            "compact_boundary",
            sec=2 * n,
            version=version,
            logicalParentUuid=parent,
            compactMetadata={"trigger": "auto", "preTokens": pre},
        )
    )
    recs.append(
        user(
            "sum",
            "b",
            "This session is being continued from a previous conversation that ran out of context.",
            sec=2 * n + 1,
            isCompactSummary=True,
            version=version,
        )
    )
    recs.append(assistant("after", "sum", usage=(1, 0, 30_000, 10), sec=2 * n + 2, version=version, model=model))
    p = tmp_path / "s.jsonl"
    write_jsonl(p, recs)
    return Session.load(p)


def test_a_compaction_long_after_the_threshold_is_not_called_a_plain_threshold_compaction(tmp_path):
    # the haiku sessions of issue 22: several replies above 167,000 went on, then a compaction at 187,201. Claude Code
    # tries to compact before every request above its threshold, and these releases write nothing for a try that
    # fails (measured on 2.0.76, 2.1.20, 2.1.41, 2.1.74, 2.1.88, 2.1.119 and 2.1.152 with every summarize request of a
    # stretch refused: the replies went on, then a try succeeded, generated seed 143101): failed tries are the cause
    # given, the other possibility named, never the margin of a threshold compaction as if normal
    s = _session(tmp_path, [120_000, 150_000, 186_860, 187_051], 187_201)
    e = analyze(s).compactions[0]
    assert e.threshold == 167_000 and e.refuted == 1
    assert e.cause == "threshold"
    assert "reached the auto-compact threshold" not in e.explanation
    assert "186,860" in e.explanation and "write no record of an attempt that fails" in e.explanation
    assert "or a higher threshold was in force for a while" in e.explanation


def test_a_compaction_past_a_window_claude_code_was_shown_to_count_is_not_a_larger_window(tmp_path):
    """2.0.76, claude-haiku-4-5 (seed 143101): the summarizer refused at each try, replies went on past the 200,000
    window (the API served them), and a try at 210,000 compacted. Claude Code counted 200,000 (a compaction far below
    a 1M window's refutes it), so neither a larger window nor a refusal at 200,000 explains it: failed tries do."""
    s = _session(tmp_path, [105_000, 126_000, 147_000, 168_000, 189_000, 210_000], 210_000, version="2.0.76")
    e = analyze(s).compactions[0]
    assert e.threshold == 155_000 and e.refuted >= 2
    assert e.cause == "threshold", e.cause_evidence
    assert "write no record of an attempt that fails" in e.explanation


def test_one_reply_that_jumps_past_the_threshold_is_still_the_threshold(tmp_path):
    s = _session(tmp_path, [120_000, 150_000, 186_000], 186_100)
    e = analyze(s).compactions[0]
    assert e.cause == "threshold" and e.refuted == 0
    assert "reached the auto-compact threshold of 167,000 (" in e.explanation


def test_a_compaction_at_the_window_edge_is_the_refusal_where_the_release_compacts_on_one(tmp_path):
    # claude-opus-5 on a release that enforces 967,000: replies above it went on, then a compaction at 998,659
    s = _session(tmp_path, [900_000, 970_000, 985_000, 998_000], 998_659, version="2.1.328", model="claude-opus-5")
    e = analyze(s).compactions[0]
    assert e.threshold == 967_000 and e.refuted == 2
    assert e.cause == "prompt_too_long", e.cause_evidence
    assert "compacts when the API refuses" in e.explanation


def test_the_command_line_says_so_too(tmp_path):
    s = _session(tmp_path, [120_000, 150_000, 186_860, 187_051], 187_201)
    code, out, _ = run_cli("tokens", "--json", str(s.path))
    assert code == 0
    d = orjson.loads(out)
    c = d["compactions"][0]
    assert c["threshold_refuted"] is True and c["cause"] == "threshold"


def test_a_last_reply_above_the_threshold_with_no_request_after_it_is_no_anomaly(tmp_path):
    recs, parent = [], None
    for k, u in enumerate([100_000, 150_000, 170_000]):
        recs.append(user(f"u{k}", parent, f"step {k}", sec=2 * k))
        recs.append(assistant(f"a{k}", f"u{k}", usage=(1, 0, u - 11, 10), sec=2 * k + 1, model="claude-haiku-4-5"))
        parent = f"a{k}"
    p = write_jsonl(tmp_path / "s.jsonl", recs)
    assert not [a for a in analyze(Session.load(p)).anomalies if "with no compaction" in a]
    # one more reply above it: the request after the first one should have compacted
    recs += [
        user("u9", parent, "more", sec=9),
        assistant("a9", "u9", usage=(1, 0, 171_000, 10), sec=10, model="claude-haiku-4-5"),
    ]
    p = write_jsonl(tmp_path / "s.jsonl", recs)
    assert [a for a in analyze(Session.load(p)).anomalies if "with no compaction" in a]


def _bookkeeping_session(tmp_path, version):
    recs = [
        user("u1", None, "hi", sec=0, version=version),
        assistant("a1", "u1", sec=1, version=version),
        system("d1", "a1", "turn_duration", sec=2, version=version, durationMs=1000),
    ]
    return Session.load(write_jsonl(tmp_path / f"{version}.jsonl", recs))


@pytest.mark.parametrize(
    "version",
    sorted(
        {
            r["version"]
            for r in orjson.loads(measured.DATA.read_bytes()).get("releases", [])
            if isinstance(r.get("leaf"), dict)
            and "error" not in r["leaf"]
            and r["leaf"].get("trailing system record") in ("the last message", "the trailing system record")
        }
    ),
)
def test_resume_continues_from_the_record_each_release_was_measured_to_use(tmp_path, version):
    """A file that ends in a turn_duration record below its last reply: the binary's --resume hung the next prompt
    off the reply (2.1.1xx and before) or off the trailing record (2.1.158 on); inspector says the same, per release."""
    rel = next(r for r in orjson.loads(measured.DATA.read_bytes())["releases"] if r["version"] == version)
    s = _bookkeeping_session(tmp_path, version)
    rep = analyze(s)
    res = rep.resume()
    assert res["leaf_uuid"] == "a1"  # what is sent is the same either way: the chain ends at the reply
    want = "d1" if rel["leaf"]["trailing system record"] == "the trailing system record" else "a1"
    assert res["continues_from"] == want, res["rule"]
    assert f"measured on {version}" in res["rule"]


def test_the_analysis_block_is_dropped_by_the_rule_of_the_release():
    from inspector.compact.base import format_compact_summary

    raw = "<summary>\nS1 the summary\n</summary>\n<analysis>\nA1 the analysis\n</analysis>"
    assert "A1" not in format_compact_summary(raw, "2.1.328")
    assert "A1" in format_compact_summary(raw, "2.1.332") and "Summary:\nS1 the summary" in format_compact_summary(raw, "2.1.332")
    before = "<analysis>\nA1\n</analysis>\n<summary>\nS1\n</summary>"
    assert "A1" not in format_compact_summary(before, "2.1.332") and "A1" not in format_compact_summary(before, None)
    # every release the era matrix ran agrees with the changes its bisections found
    checked = 0
    for r in orjson.loads(measured.DATA.read_bytes()).get("releases", []):
        a = r.get("analysis") or {}
        if "analysis_after_summary_kept" in a:
            assert a["analysis_after_summary_kept"] == measured.answer_at("analysis", r["version"]), r["version"]
            kept = "A1" in format_compact_summary(raw, r["version"])
            assert kept == a["analysis_after_summary_kept"], r["version"]
            checked += 1
    assert checked >= 10


def test_after_a_model_switch_the_overhead_is_the_new_models(tmp_path):
    """A session that began on one model (a large fixed overhead) and compacted under another: the size after the
    compaction is predicted with the overhead measured at the first response of the model in use then."""
    big = "word " * 8_000  # about 8,000 tokens of history
    A, B = "claude-opus-4-5-20251101", "claude-sonnet-4-5-20250929"
    recs = [
        user("u1", None, "hi", sec=0),
        assistant("a1", "u1", usage=(1, 0, 60_000, 10), sec=1, model=A),
        user("u2", "a1", big, sec=2),
        assistant("a2", "u2", usage=(1, 0, 68_000, 10), sec=3, model=A),
        user("u3", "a2", "go on", sec=4),
        assistant("a3", "u3", usage=(1, 0, 28_050, 10), sec=5, model=B),
        user("u4", "a3", "and more", sec=6),
        assistant("a4", "u4", usage=(1, 0, 28_100, 10), sec=7, model=B),
        system(
            "b",
            None,
            "compact_boundary",
            sec=8,
            logicalParentUuid="a4",
            compactMetadata={"trigger": "manual", "preTokens": 28_150},
        ),
        user(
            "sum",
            "b",
            "This session is being continued from a previous conversation that ran out of context.",
            sec=9,
            isCompactSummary=True,
        ),
        assistant("after", "sum", usage=(1, 0, 20_100, 10), sec=10, model=B),
    ]
    s = Session.load(write_jsonl(tmp_path / "s.jsonl", recs))
    e = analyze(s).compactions[0]
    assert e.first_usage_after == 20_111
    assert abs(e.predicted_post_tokens - e.first_usage_after) / e.first_usage_after < 0.05, e.prediction_notes
    assert any("the model in use at the compaction" in n for n in e.prediction_notes)


def test_a_release_after_a_bisected_change_borrows_from_its_side_of_it():
    """A release the matrix did not run, just after a change the bisection found, takes the measurement of the
    change's first release, never of the release before it (whose rules it does not have)."""
    data = orjson.loads(measured.DATA.read_bytes())
    rel = measured.releases()
    checked = 0
    for b in data.get("boundaries", []):
        if b["kind"] != "cells":
            continue
        first = parse_version(b["first"])
        nxt = min((r for r in rel if r > first), default=None)
        mid = (first[0], first[1], first[2] + 1)
        if nxt is not None and not mid < nxt:
            continue
        lk = measured.lookup(show_version(mid), "claude-sonnet-4-5")
        assert lk.release == first, (b["probe"], lk.note)
        checked += 1
    assert checked >= 2


def test_between_2_1_153_and_2_1_158_no_threshold_is_enforced_by_the_defaults():
    for model in ("claude-sonnet-4-5", "claude-opus-4-6", "claude-sonnet-4-6"):
        th = thresholds(Settings(model=model), version="2.1.155")
        assert th.auto_compact is None and not th.enforced, th.measured
        assert "measured on 2.1.153" in th.measured
    th = thresholds(Settings(model="claude-sonnet-4-6"), version="2.1.170")  # enforced again from 2.1.163
    assert th.auto_compact == 167_000 and "measured on 2.1.163" in th.measured


REATTACHED = [
    r
    for r in orjson.loads(measured.DATA.read_bytes()).get("releases", [])
    if isinstance(r.get("reattach"), dict) and r["reattach"].get("files")
]


@pytest.mark.parametrize("rel", REATTACHED, ids=[r["version"] for r in REATTACHED])
def test_the_files_reattached_after_a_compaction_are_the_ones_each_release_reattached(tmp_path, rel):
    """The era matrix's probe (conformance/matrix.py reattach_probe): eight files read, the newest over 5,000 tokens,
    then a compaction. inspector's rule for the files a compaction re-attaches picks what that release's binary
    picked, in its order, the large one named only."""
    from conformance.matrix import REATTACH_FILES
    from inspector.tokens.context import restored_files

    recs, parent, sec = [user("u0", None, "read the files", sec=0, version=rel["version"])], "u0", 1
    for k, (name, text) in enumerate(REATTACH_FILES.items(), 1):
        path = f"/w/proj/{name}"
        numbered = "".join(f"{n:6d}\u2192{line}\n" for n, line in enumerate(text.splitlines(), 1))
        recs.append(
            assistant(
                f"a{k}",
                parent,
                [{"type": "tool_use", "id": f"t{k}", "name": "Read", "input": {"file_path": path}}],
                sec=sec,
                version=rel["version"],
            )
        )
        res = user(
            f"r{k}",
            f"a{k}",
            [{"type": "tool_result", "tool_use_id": f"t{k}", "content": numbered}],
            sec=sec + 1,
            version=rel["version"],
            sourceToolAssistantUUID=f"a{k}",
            toolUseResult={
                "type": "text",
                "file": {
                    "filePath": path,
                    "content": text,
                    "numLines": text.count("\n"),
                    "startLine": 1,
                    "totalLines": text.count("\n"),
                },
            },
        )
        recs.append(res)
        parent, sec = f"r{k}", sec + 2
    s = Session.load(write_jsonl(tmp_path / "s.jsonl", recs))
    got = restored_files(s, s.conversation.chain, 1.0)
    names = [f.path.rsplit("/", 1)[-1] for f in got]
    want = rel["reattach"]["files"]
    assert names == want  # the same files, newest first
    for f in got:
        whole = rel["reattach"]["lines"][f.path.rsplit("/", 1)[-1]] > 0
        assert (f.kind == "file") == whole, (f.path, f.kind, rel["reattach"]["lines"])


def test_print_mode_compacts_where_the_repl_does():
    """The matrix measures print mode; the releases whose REPL was run too (in tmux, on the same sizes) compacted
    after the same reply, or not at all where print mode did not."""
    checks = orjson.loads(measured.DATA.read_bytes()).get("repl", [])
    assert len(checks) >= 5
    assert {c["version"] for c in checks} >= {"2.1.20", "2.1.111", "2.1.158", "2.1.328"}
    for c in checks:
        assert c["agrees"], c


def test_tokens_says_on_which_binary_its_numbers_were_checked(tmp_path):
    s = _session(tmp_path, [120_000, 150_000, 168_000], 168_100, version="2.1.40")
    code, out, _ = run_cli("tokens", str(s.path))
    assert code == 0
    assert "Checked on the binary: measured on 2.1.21, the nearest measured release below 2.1.40" in out
    assert "the threshold 167,000 confirmed" in out


def test_past_the_threshold_on_a_release_that_fails_silently_is_still_the_threshold(tmp_path):
    """2.1.159 on write nothing for a compaction that fails: replies above an enforced threshold followed by a
    compaction are attempts that failed, then one that succeeded (seen on 2.1.332, every summarize request refused
    as too long until the last: the harness's found_88127), not a higher threshold."""
    s = _session(tmp_path, [120_000, 170_000, 172_000, 175_000], 179_500, version="2.1.332", model="claude-opus-4-6")
    e = analyze(s).compactions[0]
    assert e.threshold == 167_000 and e.refuted == 2
    assert e.cause == "threshold", e.cause_evidence
    assert "write no record of an attempt that fails" in e.explanation


@pytest.mark.parametrize("failed", [False, True])
def test_past_the_window_after_a_compaction_that_said_it_failed_is_still_the_threshold(tmp_path, failed):
    """2.1.328 on claude-opus-4-6 (its threshold enforced, 167,000): the summarizer failed at the threshold (nothing
    written), the context grew past the 200,000 window, the next try at the blocking limit failed too and said so in
    an error reply; the next prompt compacted at 207,215 (fresh 2.1.328 REPL seed 72018). Without that reply the
    compaction past the window reads as a larger window."""
    s = _session(tmp_path, [120_000, 172_000, 207_000], 207_215, "2.1.328", "claude-opus-4-6", True, failed)
    e = analyze(s).compactions[0]
    assert e.threshold == 167_000 and e.refuted == 1
    if failed:
        assert e.cause == "threshold", e.cause_evidence
        assert "error reply at line" in e.cause_evidence and "after failed tries" in e.explanation
    else:
        assert e.cause == "other_window", e.cause_evidence


def test_past_the_window_under_an_auto_compact_window_of_its_own_is_still_the_threshold(tmp_path, monkeypatch):
    """2.1.332 on claude-sonnet-4-5, CLAUDE_CODE_AUTO_COMPACT_WINDOW=80000 (threshold 67,000), a summarizer that failed:
    three failures tripped the breaker, replies went on past the 200,000 window, and the check at the blocking limit
    compacted at 203,025 (the transcript of fresh 2.1.332 REPL seed 73007, whose debug log says the threshold). A
    larger model window would not have moved a threshold the auto-compact window set."""
    import lzma

    path = tmp_path / "s.jsonl"
    path.write_bytes(
        lzma.decompress((Path(__file__).parent.parent / "data" / "breaker_then_blocking_limit_332.jsonl.xz").read_bytes())
    )
    monkeypatch.setenv("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "80000")
    monkeypatch.setenv("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "85")
    comps = analyze(Session.load(path), Settings.from_environment()).compactions
    assert [(e.cause, e.pre_tokens) for e in comps][:2] == [("threshold", 91_533), ("threshold", 203_025)]
    assert all(e.cause == "threshold" for e in comps), [e.cause_evidence for e in comps]
    e = comps[1]
    assert e.threshold == 67_000 and e.refuted > 0
    assert "write no record of an attempt that fails" in e.explanation and "window was larger" not in e.explanation


def test_a_refusal_past_the_window_says_by_how_much_it_was_above_it(tmp_path, monkeypatch):
    """With no request recorded to say the last one was answered, a compaction just past the window fits a refusal;
    it is said to be above the window, not a negative distance below it."""
    monkeypatch.setenv("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "80000")
    s = _session(tmp_path, [60_000, 91_000, 150_000, 203_000], 203_025, "2.1.332", "claude-sonnet-4-5", True)
    e = analyze(s, Settings.from_environment()).compactions[0]
    assert e.cause == "prompt_too_long" and e.threshold == 67_000
    assert "203,025, 3,025 above the 200,000 window" in e.cause_evidence and "-3,025" not in e.explanation


@pytest.mark.parametrize("earlier_reply", [False, True])
def test_a_first_reply_above_the_threshold_refutes_nothing_when_there_was_nothing_to_summarize(
    tmp_path, monkeypatch, earlier_reply
):
    """2.1.332, an unknown model sized by CLAUDE_CODE_MAX_CONTEXT_TOKENS=60000 (threshold 27,000): the first reply came
    at 29,990, and the compaction Claude Code tried before the next request bailed ("no assistant messages in summarize
    set": the last round, which a compaction keeps, held the only reply), writing nothing; the next reply jumped to
    86,990 and compacted at 87,016 (fresh 2.1.332 seed 76030). A reply with one before it in the same stretch does
    refute the threshold: a compaction there had something to summarize."""
    monkeypatch.setenv("CLAUDE_CODE_MAX_CONTEXT_TOKENS", "60000")
    usages = ([10_000] if earlier_reply else []) + [29_990, 86_990]
    s = _session(tmp_path, usages, 87_016, "2.1.332", "claude-foo-1", True)
    e = analyze(s, Settings.from_environment()).compactions[0]
    assert e.threshold == 27_000
    if earlier_reply:
        assert e.refuted == 1 and e.cause != "threshold", e.cause_evidence
        assert "nothing to summarize" not in e.explanation
    else:
        assert e.refuted == 0 and e.cause == "threshold", e.cause_evidence
        line = s.records[s.conversation.by_uuid["a0"]].line
        assert f"The reply at line {line} (29,990 tokens) was already above the threshold" in e.explanation
        assert "had nothing to summarize" in e.explanation


def test_the_conformance_page_names_every_probe():
    """`--bisect PROBE` takes the names of conformance.matrix.PROBES: the page lists them all (it had fallen behind by
    seven)."""
    from conformance.matrix import PROBES

    page = (Path(__file__).resolve().parents[2] / "docs" / "conformance.md").read_text()
    assert [name for name in PROBES if f"`{name}`" not in page] == []


def test_the_edge_search_finds_a_threshold_that_a_runs_first_replies_pass(monkeypatch):
    """1.0.16 let a run's first two replies pass above its threshold (claude-haiku-4-5, threshold 176,464: a run that
    began at 178,645 passed it and 182,290): a search whose runs began above the threshold set the edge at 182,607. Each
    run of `find_edge` begins with small replies, and finds the threshold to the token."""
    from conformance import matrix

    threshold = 176_464

    def like_1_0_16(go, model, sizes, env=None, settings=None, config=None, **kw):
        pts = []
        for n, size in enumerate(sizes):
            stop = n >= 2 and size >= threshold  # (the first two replies of a run pass whatever their size)
            pts.append(matrix.Point(size, "compact" if stop else "pass"))
            if stop:
                break

        class Done:
            steps = [type("S", (), {"stdout": "", "stderr": ""})()]

        return pts, Done()

    monkeypatch.setattr(matrix, "probe", like_1_0_16)
    assert like_1_0_16(None, "m", [178_645, 182_290, 185_935])[0][-1].usage == 185_935  # the trap, without a warm-up
    edge = matrix.find_edge(lambda sc: None, "claude-haiku-4-5")
    assert (edge.outcome, edge.usage, edge.below, edge.precision) == ("compact", threshold, threshold - 1, 1)
