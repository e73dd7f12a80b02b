"""Issue 27 (a new user's walk, round three): one test per item, each failing without its fix."""

from __future__ import annotations

import re

from builders import assistant, system, tool_result, tool_use, user
from helpers import SAMPLES, jsonl, run_cli, write_jsonl

from inspector.textutil import printable


def test_17_a_bad_flag_is_one_line_and_a_hint_not_the_usage_block(capsys):
    for argv in (("tokens", "--window", "abc"), ("stats", "--bogus"), ("--bogus",), ("compact",)):
        code, out, _ = run_cli(*argv)
        err = capsys.readouterr().err  # argparse writes to the process's stderr
        lines = err.strip().splitlines()
        assert code == 2 and out == "" and len(lines) == 2 and "usage:" not in err, (argv, err)
        assert lines[1].startswith("(`inspector") and "--help` lists its options" in lines[1]


def test_19_character_set_switches_are_dropped_like_colours_and_other_escapes_still_shown(tmp_path):
    assert printable("ok\x1b(B\x1b[m done") == "ok done"
    assert printable("\x1b]0;title\x07x") == "\\x1b]0;title\\x07x"  # retitling the terminal: shown, never obeyed
    recs = [
        user("u1", None, "run it", sec=1),
        assistant("a1", "u1", [tool_use("t1", "Bash", {"command": "make"})], sec=2),
        tool_result("r1", "a1", "t1", "\x1b[1mbuild\x1b(B\x1b[m ok", sec=3),
    ]
    path = write_jsonl(tmp_path / "p" / "s.jsonl", recs)
    code, out, err = run_cli("show", path)
    assert code == 0 and "build ok" in out and "\\x1b" not in out


def test_9_tokens_says_what_each_row_of_its_chart_stands_for_from_the_first_response():
    path = next(SAMPLES.rglob("6513270e*.jsonl"))
    code, out, err = run_cli("tokens", path)
    assert code == 0
    head = next(ln for ln in out.splitlines() if "Context per response" in ln)
    assert re.search(r"\(121 responses, each row the largest of up to \d+ consecutive responses", head)
    rows = [ln for ln in out.splitlines() if re.match(r"\s+\d\d:\d\d–\d\d:\d\d\s+[\d,]+", ln)]
    code, out, err = run_cli("tokens", path, "--json")
    [d] = jsonl(out)
    first = d["turns"][0]["timestamp"][11:16]
    assert rows and rows[0].strip().startswith(first)  # the chart starts at the session's first response


def test_11_a_microcompactions_saving_is_said_against_what_it_is_measured_on():
    path = next(
        p for p in SAMPLES.rglob("*.jsonl") if "subagents" not in p.parts and "Microcompaction" in run_cli("tokens", p)[1]
    )
    out = run_cli("tokens", path)[1]
    said = next(ln for ln in out.splitlines() if "Microcompaction cleared" in ln)
    assert "its tokensSaved: what the cleared results weighed, not a change of the context" in said
    m = re.search(r"when the context was ([\d,]+) tokens.*The next response used ([\d,]+) tokens, ([\d,]+) (fewer|more)", said)
    before, after, diff = (int(x.replace(",", "")) for x in m.group(1, 2, 3))
    assert abs(before - after) == diff


def test_13_a_compaction_that_leaves_the_context_larger_is_an_anomaly(tmp_path):
    meta = {"trigger": "manual", "preTokens": 100_000}
    recs = [
        user("u1", None, "hi", sec=1),
        assistant("a1", "u1", usage=(10, 0, 99_000, 50), sec=2),
        system("b1", None, "compact_boundary", sec=3, logicalParentUuid="a1", compactMetadata=meta),
        user("s1", "b1", "This session is being continued from a previous conversation.", sec=4, isCompactSummary=True),
        user("u2", "s1", "go on", sec=5),
        assistant("a2", "u2", usage=(10, 0, 119_000, 50), sec=6),
    ]
    path = write_jsonl(tmp_path / "p" / "s.jsonl", recs)
    [d] = jsonl(run_cli("tokens", path, "--json")[1])
    [said] = [a for a in d["anomalies"] if "larger than before" in a]
    assert "100,000 → 119,060" in said
    recs[-1] = assistant("a2", "u2", usage=(10, 0, 30_000, 50), sec=6)  # the usual case: smaller after
    path = write_jsonl(tmp_path / "q" / "s.jsonl", recs)
    [d] = jsonl(run_cli("tokens", path, "--json")[1])
    assert not [a for a in d["anomalies"] if "larger than before" in a]


def test_20_the_run_says_how_many_tests_need_the_real_transcripts(tmp_path):
    import os
    import shutil
    import subprocess
    import sys

    from helpers import ROOT

    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_x.py").write_text(
        "import pytest\n"
        "def test_a():\n    pytest.skip('../shared/realdata is absent')\n"
        "def test_b():\n    pytest.skip('../shared/realdata is absent')\n"
        "def test_c():\n    pass\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests") + os.pathsep + str(ROOT)}
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert "2 test(s) skipped: they read real transcripts from ../shared/realdata" in p.stdout, p.stdout[-2000:]


def test_7_a_saved_copy_costs_nothing_everywhere_and_the_original_its_cost(tmp_path):
    """A session inspector saved copies the original's responses (and its subagents' files): the copy made no API
    call. stats, cost and the statusline charge it nothing, whichever file is read first, and the root's total is the
    originals' alone."""
    import io
    import json
    import shutil
    import sys

    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    original = next(root.rglob("6513270e*.jsonl"))
    before = {d["session_id"]: d for d in jsonl(run_cli("stats", root, "--json")[1])}
    total_before = jsonl(run_cli("cost", root, "--json")[1])
    code, out, err = run_cli("compact", original, "--strategy", "compact", "--write", "--yes")
    assert code == 0, err
    copy = next(p for p in original.parent.glob("*.jsonl") if p.stem not in before)
    after = {d["session_id"]: d for d in jsonl(run_cli("stats", root, "--json")[1])}
    assert after[copy.stem]["cost_usd"] == 0.0 and after[copy.stem]["cost_copied_responses"] > 100
    assert after[original.stem]["cost_usd"] == before[original.stem]["cost_usd"]
    rows = jsonl(run_cli("cost", root, "--json")[1])
    assert [r["cost_usd"] for r in rows if r["session_id"] == copy.stem] == [0.0]
    assert round(sum(r["cost_usd"] for r in rows), 6) == round(sum(r["cost_usd"] for r in total_before), 6)  # no growth

    stdin = io.TextIOWrapper(io.BytesIO(json.dumps({"transcript_path": str(copy)}).encode()), encoding="utf-8")
    old, sys.stdin = sys.stdin, stdin
    try:
        d = json.loads(run_cli("statusline", "--json")[1])
    finally:
        sys.stdin = old
    assert d["cost"] == 0.0


def test_8_the_cheap_read_and_the_session_name_a_session_by_one_rule(tmp_path):
    """The first prompt typed as a list of blocks (not a string) and an earlier record written after a later one:
    the browser's cheap read (quick_info) and Session read the same title and span."""
    from inspector.textutil import human_duration
    from inspector.transcript.discovery import quick_info
    from inspector.transcript.session import Session

    recs = [
        user("u0", None, "<command-name>/review</command-name>", sec=100),
        user("u1", "u0", [{"type": "text", "text": "merge the two branches"}], sec=200),
        assistant("a1", "u1", sec=300),
        user("u2", "a1", "push", sec=10),  # written after, stamped before: the span is the earliest to the latest
    ]
    path = write_jsonl(tmp_path / "p" / "s.jsonl", recs)
    q, s = quick_info(path), Session.load(path)
    assert q.title == s.title == "merge the two branches"
    assert (q.first_timestamp, q.last_timestamp) == s.time_span
    assert human_duration(q.first_timestamp, q.last_timestamp) == human_duration(*s.time_span)


def test_8_search_names_a_session_as_stats_does_once_stats_know_it(tmp_path):
    """The first prompt far from the file's head: the cheap read cannot see it, stats can; once stats have read the
    session, search titles it the same."""
    big = "x" * 70_000
    recs = [
        user("u0", None, "<command-name>/review</command-name>", sec=1),
        assistant("a0", "u0", [{"type": "text", "text": big}], sec=2),
        user("u1", "a0", "fix the flaky zebra test", sec=3),
        assistant("a1", "u1", sec=4),
        user("u2", "a1", "push", sec=5),
    ]
    root = tmp_path / "projects"
    write_jsonl(root / "p" / "s.jsonl", recs)
    [st] = jsonl(run_cli("stats", root, "--json")[1])
    assert st["title"] == "fix the flaky zebra test"
    code, out, err = run_cli("search", "zebra", root)
    assert code == 0 and out.splitlines()[0].startswith("fix the flaky zebra test")


def test_8_a_previews_counts_are_one_number_each():
    path = next(SAMPLES.rglob("6513270e*.jsonl"))
    out = run_cli("compact", path, "--strategy", "compact")[1]
    said = next(ln for ln in out.splitlines() if ln.strip().startswith("Summarized"))
    made = next(ln for ln in out.splitlines() if "Made of" in ln)
    n_sum, n_kept = (
        int(x.replace(",", "")) for x in re.search(r"Summarized ([\d,]+) message\(s\), kept ([\d,]+)", said).groups()
    )
    assert f"the {n_sum:,} summarized messages it replaces" in made
    assert f"kept ({n_kept:,} messages)" in made or n_kept == 0


def test_12_the_size_after_says_when_it_is_uncertain_where_it_is_shown(tmp_path):
    path = next(SAMPLES.rglob("6513270e*.jsonl"))  # its calibration fits its 121 responses within 1%
    out = run_cli("compact", path, "--strategy", "compact")[1]
    assert "caveat" not in out
    recs = [
        user("u1", None, "first " + "word " * 2000, sec=1),
        assistant("a1", "u1", usage=(10, 0, 115_000, 50), sec=2),  # a first request already large: little to fit on
        user("u2", "a1", "second", sec=3),
        assistant("a2", "u2", usage=(10, 0, 116_000, 50), sec=4),
        user("u3", "a2", "third", sec=5),
    ]
    small = write_jsonl(tmp_path / "p" / "s.jsonl", recs)
    code, out, err = run_cli("compact", small, "--strategy", "compact")
    assert code == 0, err
    lines = out.splitlines()
    after = next(k for k, ln in enumerate(lines) if ln.strip().startswith("after"))
    assert lines[after + 1].strip().startswith("caveat: the size after is an estimate from 2 response(s)")
    [d] = jsonl(run_cli("compact", small, "--strategy", "compact", "--json")[1])
    assert d["caveat"].startswith("an estimate from 2 response(s)")


def test_4_the_rewind_menus_rule_of_the_release_decides_the_pivots(tmp_path):
    """Before 2.1.3xx: 2.1.88's selector filter, read from its source (selectableUserMessagesFilter): a slash
    command's own record is offered, its output, an interrupt and a rejection are not. The CLI's --at says so."""
    from inspector.compact import pivot_candidates
    from inspector.transcript.session import Session

    v = "2.1.39"
    recs = [
        user("u1", None, "rename the module", sec=1, version=v),
        assistant("a1", "u1", sec=2, version=v),
        user("u2", "a1", "<command-name>/model</command-name>\n<command-args>opus</command-args>", sec=3, version=v),
        user("u3", "u2", "<local-command-stdout>Set model to opus</local-command-stdout>", sec=4, version=v),
        user("u4", "u3", [{"type": "text", "text": "[Request interrupted by user]"}], sec=5, version=v),
        assistant("a2", "u4", sec=6, version=v),
        user("u5", "a2", "now the tests", sec=7, version=v),
        assistant("a3", "u5", sec=8, version=v),
    ]
    path = write_jsonl(tmp_path / "p" / "s.jsonl", recs)
    s = Session.load(path)
    assert [s.records[i].uuid for i in pivot_candidates(s)] == ["u1", "u2", "u5"]
    for line, ok in ((3, True), (4, False), (5, False), (7, True)):
        code, out, err = run_cli("compact", path, "--strategy", "partial", "--at", str(line))
        assert (code == 0) == ok, (line, err)
        if not ok:
            assert "not a message the rewind menu offers" in err
            assert ("output" in err) if line == 4 else ("interruption" in err)
