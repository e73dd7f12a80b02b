"""Every strategy previews and saves on every real session, and the original is untouched."""

from __future__ import annotations

import shutil

import pytest
from helpers import REAL_PROJECTS, real_files, requires_realdata, tree_hashes

from inspector.compact import CompactError, CompactRequest, MicrocompactParams, compact, make_slice
from inspector.compact.summary_compact import is_pivot_candidate
from inspector.edit import save
from inspector.transcript.session import Session

pytestmark = requires_realdata


def sessions():
    return [p for p in real_files() if "subagents" not in p.parts and not p.name.startswith("agent-")]


@pytest.fixture(scope="module")
def copy_root(tmp_path_factory):
    dst = tmp_path_factory.mktemp("real") / "projects"
    shutil.copytree(REAL_PROJECTS, dst)
    return dst


@pytest.mark.parametrize("path", sessions(), ids=lambda p: f"{p.parent.name[:20]}/{p.name[:12]}")
def test_every_strategy_previews_and_saves(copy_root, path):
    p = copy_root / path.relative_to(REAL_PROJECTS)
    before = tree_hashes(p.parent)
    s = Session.load(p)
    if not s.conversation.chain:
        with pytest.raises(CompactError):
            compact(s, "full")
        return
    sl = make_slice(s)
    pivots = [s.records[i].uuid for i in sl.messages if is_pivot_candidate(sl, i)]
    runs = [
        ("full", {}),
        ("session-memory", {}),
        ("microcompact", {"microcompact_params": MicrocompactParams(force=True, keep_recent=1)}),
    ]
    # "up to" a slash command's own record can be refused by the save check, rightly (see
    # test_up_to_a_command_record_whose_caveat_is_stamped_later_is_refused): up to the last typed prompt here
    typed = [u for u in pivots if not (s.records[s.conversation.by_uuid[u]].get("prompt") or "").lstrip().startswith("<")]
    if pivots:
        runs.append(("partial", {"pivot": pivots[len(pivots) // 2], "direction": "from"}))
        if len(typed) > 1:
            runs.append(("partial", {"pivot": typed[-1], "direction": "up_to"}))
    saved = 0
    for strategy, kw in runs:
        try:
            r = compact(s, CompactRequest(strategy, **kw))
        except CompactError as e:
            assert "nothing to summarize" in str(e)
            continue
        assert r.tokens_before >= 0 and r.tokens_after >= 0
        if not r.changed:
            assert r.noop
            continue
        res = save(s, r)
        assert res.verification.ok, res.verification.problems
        back = Session.load(res.path)
        assert back.transcript.skipped == []
        if strategy != "microcompact":
            first = back.records[back.conversation.chain[0]]
            assert first.is_compact_boundary and first.uuid == r.new_records[0]["uuid"]
            shown = {back.records[i].uuid for i in back.conversation.chain}
            assert set(r.kept_uuids) <= shown
        saved += 1
    after = tree_hashes(p.parent)
    assert {k: v for k, v in after.items() if k in before} == before
    assert saved >= 1


def test_up_to_in_a_release_that_reads_no_kept_segment_is_the_summary_alone(copy_root):
    """'Up to' /exit in a 2.1.14 session. A release before 2.1.76 reads no preservedSegment (measured: 2.1.41, 2.1.74
    and 2.1.75 resumed a saved compaction without its kept messages; 2.1.14's code has no such field), so the preview
    is what a resume by it sends, the summary alone, and says so; saved, the chain is the boundary and the summary.
    (Read as a later release reads it, the kept tail would be relinked after the summary, and this file's caveat,
    stamped 2 ms after its command, would be a childless record newer than the tail's end: the save check refused it
    while inspector relinked for every release.)"""
    src = next((p for p in REAL_PROJECTS.rglob("6255e7b4*.jsonl")), None)
    if src is None:
        pytest.skip("../shared/realdata is absent")
    p = copy_root / src.relative_to(REAL_PROJECTS)
    before = tree_hashes(p.parent)
    s = Session.load(p)
    assert s.version is not None and s.version.startswith("2.1.14")
    sl = make_slice(s)
    last = [s.records[i].uuid for i in sl.messages if is_pivot_candidate(sl, i)][-1]
    assert s.records[s.conversation.by_uuid[last]].get("prompt").lstrip().startswith("<command-name>/exit")
    r = compact(s, CompactRequest("partial", pivot=last, direction="up_to"))
    assert [v.origin for v in r.view] == ["summary"] and r.kept_uuids == ()
    assert any("the summary alone" in n for n in r.notes)
    saved = Session.load(save(s, r).path)
    assert [saved.records[i].uuid for i in saved.conversation.chain] == [x["uuid"] for x in r.new_records]
    assert {k: v for k, v in tree_hashes(p.parent).items() if k in before} == before  # the original untouched
