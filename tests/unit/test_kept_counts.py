"""The report's token counts kept in the cache per transcript (issue 29.3): opening a session again does not count it
again, and a kept count is never used for a transcript that is not the one counted."""

from __future__ import annotations

import os
import shutil

import pytest
from helpers import SAMPLES, copied_sample, sample_session, sha256

from inspector.statefiles import cache_dir
from inspector.tokens import calibrate
from inspector.tokens.explain import analyze
from inspector.transcript.index import Transcript
from inspector.transcript.session import Session


def report(path) -> dict:
    return analyze(Session.load(path)).as_dict(full=True)


@pytest.fixture
def copy(tmp_path):
    """A sample session with compactions, copied (its folder too) so that it can grow."""
    return copied_sample("Fix forecast", tmp_path / "p")


def kept() -> list[str]:
    folder = cache_dir() / "counts"
    return sorted(os.listdir(folder)) if folder.is_dir() else []


def test_a_second_opening_reads_the_counts_and_reports_the_same(copy, monkeypatch):
    before = sha256(copy)
    first = report(copy)
    assert len(kept()) == 1
    assert first["compactions"], "a sample with compactions: the re-attached files are kept too"

    def no_counting(*a, **k):
        raise AssertionError("counted again")

    monkeypatch.setattr(calibrate, "chain_counts", no_counting)
    assert report(copy) == first
    assert sha256(copy) == before  # the transcript is only read


def test_a_session_that_grew_or_was_replaced_is_counted_anew(copy, monkeypatch):
    report(copy)
    calls = []
    real = calibrate.chain_counts
    monkeypatch.setattr(calibrate, "chain_counts", lambda *a, **k: calls.append(1) or real(*a, **k))
    lines = copy.read_bytes().splitlines(keepends=True)
    with open(copy, "ab") as f:
        f.write(lines[-1])  # the same record again: the file grew, the key is another
    grown = report(copy)
    assert calls == [1]
    monkeypatch.setattr(calibrate, "chain_counts", real)
    assert grown == report(copy)  # and the kept one is what counting gives
    # the same size and a new inode (a file written over by a copy): counted anew
    tmp = copy.with_name("x.tmp")
    shutil.copyfile(copy, tmp)
    os.replace(tmp, copy)
    monkeypatch.setattr(calibrate, "chain_counts", lambda *a, **k: calls.append(1) or real(*a, **k))
    report(copy)
    assert calls == [1, 1]


@pytest.mark.parametrize("damage", [b"", b"{not json", b"[]", b'{"key": null}', "same key, bad body"])
def test_a_damaged_kept_count_is_counted_again(copy, damage):
    want = report(copy)
    (name,) = kept()
    where = cache_dir() / "counts" / name
    if damage == "same key, bad body":
        import orjson

        d = orjson.loads(where.read_bytes())
        d["per_record"] = [["x", None, "y"]]
        damage = orjson.dumps(d)
    where.write_bytes(damage)
    assert report(copy) == want


def test_a_partial_index_is_not_kept(copy):
    t = Transcript.load(copy, only=(b'"assistant"',))
    analyze(Session(t))
    assert kept() == []


def test_only_the_newest_counts_are_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(calibrate, "KEPT_COUNTS", 2)
    src = sample_session("Fix forecast", SAMPLES)
    for k in range(4):
        p = tmp_path / f"p{k}" / src.name
        p.parent.mkdir()
        shutil.copyfile(src, p)
        report(p)
        assert len(kept()) == min(k + 1, 2)


def test_counting_in_another_process_keeps_what_the_app_then_reads(copy, monkeypatch):
    """`count_in_background` (the app, on a large session) runs a child that keeps the counts: the report made after
    it counts nothing itself, and says what counting here says."""
    from inspector.tokens.background import count_in_background

    monkeypatch.setattr("inspector.tokens.background._cores", lambda: 2)
    child = count_in_background(str(copy))
    assert child is not None and child.wait(120)
    assert child.proc.returncode == 0 and len(kept()) == 1
    real = calibrate.chain_counts
    monkeypatch.setattr(calibrate, "chain_counts", lambda *a, **k: (_ for _ in ()).throw(AssertionError("counted")))
    from_child = report(copy)
    monkeypatch.setattr(calibrate, "chain_counts", real)
    for name in kept():
        (cache_dir() / "counts" / name).unlink()
    assert report(copy) == from_child


def test_no_child_on_one_core_and_a_stopped_child_leaves_nothing_wrong(copy, monkeypatch):
    from inspector.tokens.background import count_in_background

    monkeypatch.setattr("inspector.tokens.background._cores", lambda: 1)
    assert count_in_background(str(copy)) is None
    monkeypatch.setattr("inspector.tokens.background._cores", lambda: 2)
    child = count_in_background(str(copy))
    assert child is not None
    child.stop()  # at once: killed wherever it was; a half-written cache file is never one (written whole, renamed)
    assert child.proc.poll() is not None
    want = report(copy)
    assert report(copy) == want


def test_whether_the_counts_are_kept_is_known_without_reading_them(copy, tmp_path):
    """The app asks before starting a child to count a large session: yes only for the file counted, as it is now."""
    assert not calibrate.counts_kept(copy)  # nothing counted yet
    report(copy)
    assert calibrate.counts_kept(copy)
    assert calibrate.counts_kept(str(copy))
    other = tmp_path / "q" / copy.name
    other.parent.mkdir()
    shutil.copyfile(copy, other)
    assert not calibrate.counts_kept(other)  # the same bytes elsewhere: another file, not counted
    with open(copy, "ab") as f:  # grew: counted anew
        f.write(copy.read_bytes().splitlines(keepends=True)[-1])
    assert not calibrate.counts_kept(copy)
    report(copy)
    assert calibrate.counts_kept(copy)
    kept_file = cache_dir() / "counts" / kept()[0]
    kept_file.write_bytes(b"not json")  # damaged: unsure, so not kept
    assert not calibrate.counts_kept(copy)


def test_the_counting_child_counts_the_chain_the_report_follows():
    """The child counts `LogicalChain.of(s)` without the context series; its counts are kept under the series' chain's
    key only if the two are the same chain, on every sample (a session with compactions, a subagent's, a fork)."""
    from inspector.tokens.series import context_series

    paths = sorted(SAMPLES.rglob("*.jsonl"))
    assert len(paths) > 5
    for path in paths:
        s = Session.load(path)
        assert calibrate.LogicalChain.of(s).chain == context_series(s).chain, path
        assert calibrate._counts_key(s, calibrate.LogicalChain.of(s)) == calibrate._counts_key(s, context_series(s)), path


def test_the_child_says_when_it_has_read_the_session(copy, monkeypatch):
    """The app does something else first only while the child still reads the session (`still_reading`); once the
    child says it counts, or is done, the app waits for its counts. A small file starts no child early."""
    from inspector.tokens import background

    monkeypatch.setattr(background, "_cores", lambda: 2)
    child = background.count_in_background(str(copy))
    assert child is not None
    seen = []
    while child.running():
        seen.append(child.still_reading())
    assert child.wait(120) and child.proc.returncode == 0
    assert not child.still_reading()
    assert seen and seen[0]  # asked at once: it has not even started Python yet
    assert seen == sorted(seen, reverse=True)  # reading, then counting: never reading again
    background.count_early(str(copy))  # under COUNT_OVER
    assert not background._early


def test_the_calibrators_prefix_sums_are_a_plain_loops_bit_for_bit():
    """Each fit of a compaction's prediction reads prefix sums of the responses before it: made with accumulate, they
    are the same floats, of the same types, as the running sums of a loop (the predictions never move by a bit)."""
    import random

    from inspector.tokens.calibrate import Calibrator

    rng = random.Random(29)
    for _ in range(200):
        pts = [(rng.randint(0, 10**7), rng.choice([0, rng.randint(1, 10**7)])) for _ in range(rng.randint(0, 300))]
        c = Calibrator(pts)
        kept = [(x, y) for x, y in pts if y > 0]
        sx, sy, sxx, sxy, lo, hi = [0.0], [0.0], [0.0], [0.0], [0], [0]
        for x, y in kept:
            sx.append(sx[-1] + x)
            sy.append(sy[-1] + y)
            sxx.append(sxx[-1] + x * x)
            sxy.append(sxy[-1] + x * y)
            lo.append(x if len(lo) == 1 else min(lo[-1], x))
            hi.append(x if len(hi) == 1 else max(hi[-1], x))
        assert c.pts == kept
        for got, want in ((c.sx, sx), (c.sy, sy), (c.sxx, sxx), (c.sxy, sxy), (c.lo, lo), (c.hi, hi)):
            assert got == want and [type(v) for v in got] == [type(v) for v in want]
