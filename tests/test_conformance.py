"""Goldens from the conformance harness: what the real Claude Code 2.1.328 did, read by the normal suite without it.

Each folder under tests/goldens is one run of `python -m conformance` (transcripts and request logs gzipped): what
Claude Code did (its boundaries, the requests the fake API received and which were refused, its debug log) must be
what inspector says of the same transcript, and every request must be rebuilt from the transcript exactly.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import orjson
import pytest

from conformance.compare import claude_facts, compare, inspector_facts
from conformance.runner import canonical, load_requests
from conftest import ROOT, run_cli, sha256

GOLDENS = ROOT / "tests" / "goldens"
NAMES = sorted(p.name for p in GOLDENS.iterdir() if p.is_dir()) if GOLDENS.is_dir() else []


def expand(name: str, tmp: Path) -> Path:
    """A golden as the harness saved it, unzipped into a temporary folder."""
    src = GOLDENS / name
    dst = tmp / name
    for p in src.rglob("*"):
        if p.is_dir():
            continue
        out = dst / p.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        if p.suffix == ".gz":
            out.with_suffix("").write_bytes(gzip.decompress(p.read_bytes()))
        else:
            shutil.copyfile(p, out)
    return dst


def transcript(folder: Path) -> Path:
    return next(p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts)


def test_there_are_goldens():
    assert {"reactive_ptl_sonnet45", "threshold_env_window_100k", "manual_compact_resume", "persisted_bash_output",
            "post_compact_file_restore_4"} <= set(NAMES)
    assert sum(p.stat().st_size for p in GOLDENS.rglob("*") if p.is_file()) < 5 << 20


@pytest.mark.parametrize("name", NAMES)
def test_inspector_agrees_with_what_claude_code_did(name, tmp_path):
    row = compare(expand(name, tmp_path))
    assert row.match, row.notes


@pytest.mark.parametrize("name", NAMES)
def test_every_request_is_rebuilt_from_the_transcript_alone(name, tmp_path):
    folder = expand(name, tmp_path)
    logged = [q for q in load_requests(folder) if q["kind"] == "turn"]
    before = sha256(transcript(folder))
    code, out, err = run_cli("request", transcript(folder), "--json")
    assert code == 0, err
    rebuilt = [q for q in orjson.loads(out) if q["agent_id"] is None]
    assert len(rebuilt) == len(logged) > 0
    for sent, got in zip(logged, rebuilt):
        assert canonical(sent["messages"]) == canonical(got["request"]["messages"])
        assert canonical(sent["tools"]) == canonical(got["request"]["tools"])
        assert canonical(sent["system"][1:]) == canonical(got["request"]["system"])  # the billing line is not recorded
        assert got["answered"] == (sent["answer"] != "prompt_too_long")
    assert sha256(transcript(folder)) == before


def test_a_refused_request_explained_in_words(tmp_path):
    folder = expand("reactive_ptl_sonnet45", tmp_path)
    code, out, err = run_cli("tokens", "--json", transcript(folder))
    rep = orjson.loads(out)[0]
    th = rep["thresholds"]
    assert (th["enforced"], th["source"], th["unenforced_threshold"]) == (False, "auto", 167_000)
    [c] = rep["compactions"]
    assert c["cause"] == "prompt_too_long" and "no reply" in c["cause_evidence"]
    assert c["rounds_kept"] >= 1 and c["kept_uuids"] and c["rounds_summarized"] >= 5
    assert "refused a request as too long" in c["explanation"] and "kept verbatim" in c["explanation"]
    assert "167,000" in c["explanation"] and "not acted on" in c["explanation"]
    assert max(t["context_tokens"] for t in rep["turns"]) >= 180_000  # the history before the compaction is on the chart


def test_claude_codes_side_is_read_from_the_run_not_from_inspector(tmp_path):
    """The harness's own reading of a run: the causes come from the request log, the window from the debug log."""
    a = claude_facts(expand("threshold_env_window_100k", tmp_path))
    assert a.enforced and a.effective_window == 80_000 and a.source == "env"
    assert [c.split(" at ")[0] for c in a.compactions] == ["threshold", "threshold"]
    b = inspector_facts(expand("reactive_ptl_sonnet45", tmp_path / "b"))
    assert b.compactions[0].startswith("prompt_too_long")
