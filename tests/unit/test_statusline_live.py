"""`inspector statusline` reads only what was appended since its last run (an offset and the whole-file facts kept in
the cache) and the file's end for the leaf: at every point of a session's growth, its figures must be the ones the
whole file gives (`context_now`, `session_cost`), for every sample and golden session."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from helpers import GOLDENS, SAMPLES, expand_golden

import inspector.cli.statusline as statusline
import inspector.tokens.now as now_mod
from inspector.cli.statusline import read_live
from inspector.library.cost import session_cost
from inspector.tokens.now import context_now
from inspector.tokens.thresholds import Settings
from inspector.transcript.session import Session


def _copy_session(src: Path, dst_dir: Path) -> Path:
    """A session's folder (subagents) and flat agents beside an empty copy of its transcript."""
    dst_dir.mkdir(parents=True)
    if src.with_suffix("").is_dir():
        shutil.copytree(src.with_suffix(""), dst_dir / src.stem)
    for f in src.parent.glob("agent-*.jsonl"):
        shutil.copy(f, dst_dir / f.name)
    dst = dst_dir / src.name
    dst.write_bytes(b"")
    return dst


def _grow_and_compare(src: Path, dst_dir: Path, settings: Settings, steps: int = 12) -> tuple[int, int]:
    """Append the source's lines in `steps` slices; after each, the live figures against the whole file's. Returns
    (points checked, points whose leaf was found from a tail shorter than the file)."""
    before = hashlib.sha256(src.read_bytes()).hexdigest()
    dst = _copy_session(src, dst_dir)
    lines = src.read_bytes().splitlines(keepends=True)
    cuts = sorted({max(1, len(lines) * k // steps) for k in range(1, steps + 1)})
    done = checked = partial = 0
    for c in cuts:
        with open(dst, "ab") as f:
            f.write(b"".join(lines[done:c]))
        appended = sum(len(x) for x in lines[done:c])
        done = c
        live = read_live(dst, settings, budget=60)
        s = Session.load(dst)
        try:
            want, cost = context_now(s, settings), session_cost(s)
        finally:
            s.close()
        got = live.now
        where = f"{src.name} after {c} of {len(lines)} lines"
        assert (got.tokens, got.level, got.left) == (want.tokens, want.level, want.left), where
        assert got.thresholds == want.thresholds, where
        assert live.cost["cost_usd_priced"] == cost["cost_usd_priced"], where
        assert live.cost["cost_usd"] == cost["cost_usd"], where
        assert live.cost["cost_responses"] == cost["cost_responses"], where
        size = dst.stat().st_size
        tail = live.read - appended  # what this run read beyond the appended lines: the tail for the leaf
        assert appended <= live.read, where  # the new lines were read, once
        partial += tail < size
        checked += 1
    assert hashlib.sha256(src.read_bytes()).hexdigest() == before  # the source is never written
    return checked, partial


def _sessions(root: Path) -> list[Path]:
    return [
        p
        for p in sorted(root.rglob("*.jsonl"))
        if "subagents" not in p.parts and not p.name.startswith("agent-") and p.stat().st_size > 0
    ]


@pytest.mark.parametrize("model", [None, "claude-sonnet-4-5"])
def test_a_growing_sample_reads_as_the_whole_file(tmp_path, monkeypatch, model):
    monkeypatch.setattr(now_mod, "FIRST_TAIL", 2048)  # short tails: the reads that must grow are exercised too
    settings = Settings(model=model)
    checked = partial = 0
    for k, src in enumerate(_sessions(SAMPLES)):
        a, b = _grow_and_compare(src, tmp_path / f"s{k}", settings)
        checked, partial = checked + a, partial + b
    assert checked >= 40 and partial > 0  # some leaves were found from a tail alone


def test_a_growing_golden_reads_as_the_whole_file(tmp_path, monkeypatch):
    """The goldens are sessions the real 2.1.3xx binaries wrote: compactions that keep messages (relinked),
    refusals, subagents, /model switches."""
    monkeypatch.setattr(now_mod, "FIRST_TAIL", 2048)
    names = sorted(p.name for p in GOLDENS.iterdir() if p.is_dir())
    checked = partial = 0
    for name in names:
        folder = expand_golden(name, tmp_path / "goldens")
        for k, src in enumerate(_sessions(folder)):
            a, b = _grow_and_compare(src, tmp_path / "grow" / name / str(k), Settings(), steps=8)
            checked, partial = checked + a, partial + b
    assert checked >= 50 and partial > 0


def test_a_later_run_reads_only_what_was_appended(tmp_path):
    src = _sessions(SAMPLES)[0]
    dst = _copy_session(src, tmp_path / "p")
    lines = src.read_bytes().splitlines(keepends=True)
    dst.write_bytes(b"".join(lines[:-1]))
    first = read_live(dst, Settings())
    assert first.read >= dst.stat().st_size  # the first run reads the file
    with open(dst, "ab") as f:
        f.write(lines[-1])
    second = read_live(dst, Settings())
    assert second.offset == dst.stat().st_size
    # the appended line, and a tail for the leaf (the whole file here, as it is short): nothing read twice for the facts
    assert second.read <= len(lines[-1]) + dst.stat().st_size
    third = read_live(dst, Settings())  # nothing new: only the tail
    assert third.read <= dst.stat().st_size and third.now == second.now


def test_a_file_rewritten_or_replaced_is_read_again(tmp_path):
    src = _sessions(SAMPLES)[0]
    dst = _copy_session(src, tmp_path / "p")
    data = src.read_bytes()
    dst.write_bytes(data)
    read_live(dst, Settings())
    # the same size, other bytes before the offset (an editor's rewrite): the kept state no longer holds
    lines = data.splitlines(keepends=True)
    swapped = b"".join([lines[1], lines[0], *lines[2:]])
    dst.write_bytes(swapped)
    live = read_live(dst, Settings())
    s = Session.load(dst)
    assert live.read >= len(swapped) and live.now.tokens == context_now(s, Settings()).tokens
    s.close()
    # replaced by a shorter file
    dst.unlink()
    dst.write_bytes(b"".join(lines[: len(lines) // 2]))
    live = read_live(dst, Settings())
    s = Session.load(dst)
    assert live.now.tokens == context_now(s, Settings()).tokens
    assert live.cost["cost_usd_priced"] == session_cost(s)["cost_usd_priced"]
    s.close()


def test_a_first_read_over_budget_says_how_far_it_got_and_goes_on(tmp_path, monkeypatch):
    monkeypatch.setattr(statusline, "CHUNK", 4096)
    src = max(_sessions(SAMPLES), key=lambda p: p.stat().st_size)
    dst = _copy_session(src, tmp_path / "p")
    dst.write_bytes(src.read_bytes())
    live = read_live(dst, Settings(), budget=0)
    assert live.now is None and 0 < live.offset < live.size
    for _ in range(10_000):
        live = read_live(dst, Settings(), budget=0)
        if live.now is not None:
            break
    s = Session.load(dst)
    assert live.now == context_now(s, Settings()) and live.cost["cost_usd_priced"] == session_cost(s)["cost_usd_priced"]
    s.close()


def test_over_budget_the_line_says_how_far_it_read(tmp_path, monkeypatch):
    import io
    import json
    import sys

    from helpers import run_cli

    monkeypatch.setattr(statusline, "CHUNK", 4096)
    src = max(_sessions(SAMPLES), key=lambda p: p.stat().st_size)
    dst = _copy_session(src, tmp_path / "p")
    dst.write_bytes(src.read_bytes())
    payload = json.dumps({"transcript_path": str(dst)}).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(payload), encoding="utf-8"))
    code, out, err = run_cli("statusline", "--budget", "0")
    assert code == 0 and out.startswith("inspector: reading this session (") and out.strip().endswith("%)")


def _relinked_session() -> list[dict]:
    """A compaction that kept three messages (§8.6): they sit before the boundary in the file, their usage is stale
    once relinked after the summary, and the prompt after the compaction hangs off the last of them."""
    from builders import assistant, system, user

    pad = "p" * 3000  # lines long enough that a tail can start between any two of them
    recs = [user("u1", None, pad, sec=1), assistant("a1", "u1", usage=(10, 100, 90_000, 50), sec=2)]
    recs += [user("u2", "a1", pad, sec=3), assistant("a2", "u2", usage=(10, 100, 120_000, 50), sec=4)]
    recs += [user("u3", "a2", pad, sec=5), assistant("a3", "u3", usage=(10, 100, 150_000, 50), sec=6)]
    seg = {"headUuid": "u2", "anchorUuid": "s1", "tailUuid": "a3"}
    meta = {"trigger": "auto", "preTokens": 150_160, "preservedSegment": seg}
    recs.append(system("b1", None, "compact_boundary", sec=7, logicalParentUuid="a3", compactMetadata=meta))
    recs.append(user("s1", "b1", "This session is being continued... " + pad, sec=8, isCompactSummary=True))
    recs.append(user("u4", "a3", "and now " + pad, sec=9))
    return recs


def test_a_tail_that_cuts_a_compactions_kept_messages_is_not_trusted(tmp_path, monkeypatch):
    """Whatever tail the leaf is first looked for in (every line start), the figure is the whole file's: a tail that
    holds only part of the kept messages would take their stale usage for the context."""
    from helpers import write_jsonl

    path = write_jsonl(tmp_path / "proj" / "s.jsonl", _relinked_session())
    s = Session.load(path)
    want = context_now(s, Settings())
    assert s.conversation.relink is not None
    starts = [r.offset for r in s.records]
    s.close()
    size = path.stat().st_size
    for start in starts[1:]:
        monkeypatch.setattr(now_mod, "FIRST_TAIL", size - start)
        shutil.rmtree(tmp_path / "cache", ignore_errors=True)
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        got = read_live(path, Settings()).now
        assert got == want, f"first tail from byte {start}"


def test_a_response_continued_far_from_its_start_is_counted_once(tmp_path):
    """A record that continues a response the running cost has already let go of (over RunningCost.RECENT responses
    back) makes it read the file again keeping every response: the cost is the whole file's."""
    from builders import assistant, user
    from helpers import write_jsonl

    from inspector.library.cost import RunningCost

    recs, parent = [user("u0", None, "go", sec=0)], "u0"
    for k in range(RunningCost.RECENT + 20):
        recs.append(assistant(f"a{k}", parent, sec=k + 1, mid=f"m{k}", usage=(10, 0, 1000, 50)))
        parent = f"a{k}"
    recs.append(assistant("late", parent, sec=999, mid="m0", usage=(10, 0, 1000, 5000)))  # m0's output, grown
    path = write_jsonl(tmp_path / "proj" / "s.jsonl", recs)
    live = read_live(path, Settings())
    s = Session.load(path)
    want = session_cost(s)
    s.close()
    assert live.cost["cost_usd_priced"] == want["cost_usd_priced"]
    assert live.cost["cost_responses"] == want["cost_responses"] == RunningCost.RECENT + 20
