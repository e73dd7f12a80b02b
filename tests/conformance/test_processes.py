"""A release that records no process's end (before 2.1.277, no cost-state record) is read as one process; where a
process resumed since the last compaction would re-attach other files, the preview says which (and the harness counts
Claude Code's choosing them as agreeing). The run: generated seed 155000 on the real 2.1.268, whose later compactions
were made by resumed processes (tests/data/gen_155000_2.1.268.tar.xz, the harness's saved run without its HOME)."""

from __future__ import annotations

import tarfile
from pathlib import Path

from helpers import DATA, sha256

from conformance.replay import replay


def _run(tmp_path: Path) -> Path:
    with tarfile.open(DATA / "gen_155000_2.1.268.tar.xz") as tar:
        tar.extractall(tmp_path, filter="data")
    return tmp_path / "gen_155000"


def test_a_resumed_process_re_attaches_what_its_loaded_messages_wrote(tmp_path):
    folder = _run(tmp_path)
    before = {p: sha256(p) for p in (folder / "projects").rglob("*.jsonl")}
    got = {r.boundary: r for r in replay(folder)}
    assert len(got) == 5 and all(r.ok for r in got.values()), [(r.boundary, r.detail) for r in got.values() if not r.ok]
    # the threshold compaction of the resumed process and the /compact of the next one: Claude Code re-attached what
    # inspector's note names for a resumed process (out14 and out10, the files its loaded messages wrote; then f3)
    for b in (3, 4):
        assert "resumed since the last compaction" in got[b].detail, got[b].detail
    assert {p: sha256(p) for p in before} == before


def test_the_preview_names_the_files_a_resumed_process_would_re_attach(tmp_path):
    from inspector.compact import CompactRequest, compact
    from inspector.transcript.session import Session

    folder = _run(tmp_path)
    (t,) = [p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts]
    lines = t.read_bytes().splitlines(keepends=True)
    cuts = [n for n, raw in enumerate(lines) if b'"compact_boundary"' in raw]
    cut = tmp_path / "cut" / t.name
    cut.parent.mkdir()
    cut.write_bytes(b"".join(lines[: cuts[3]]))  # the file as it was when the fourth compaction ran
    res = compact(Session.load(cut), CompactRequest("compact", trigger="auto"))
    names = [Path(f).name for f in res.parameters["reattached_if_resumed"]]
    ours = [Path(r["attachment"]["filename"]).name for r in res.new_records if (r.get("attachment") or {}).get("type") == "file"]
    assert names == ["out14.txt", "out10.txt"] and ours != names
    assert any("records no process's end" in n and "out14.txt, out10.txt" in n for n in res.notes)
    # the same file from a release that records its processes' ends (none here: one process) has no such alternative
    later = tmp_path / "later" / t.name
    later.parent.mkdir()
    later.write_bytes(cut.read_bytes().replace(b'"version":"2.1.268"', b'"version":"2.1.277"'))
    res = compact(Session.load(later), CompactRequest("compact", trigger="auto"))
    assert res.parameters["reattached_if_resumed"] is None
    assert not any("records no process's end" in n for n in res.notes)
