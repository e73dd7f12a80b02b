"""Every real transcript in ../shared/realdata loads, and its numbers match an independent count.

The independent count below uses the standard library's json module and its own simple rules,
not inspector's code.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import pytest
from helpers import REAL_PROJECTS, jsonl, real_files, requires_realdata, tree_hashes

from inspector.cli import main

pytestmark = requires_realdata

SYNTHETIC = {"[Request interrupted by user]", "[Request interrupted by user for tool use]", "No response requested."}


def independent(path: Path) -> dict:
    by_type: Counter = Counter()
    bad = 0
    comps = []
    groups: dict[str, list[dict]] = {}
    markers = 0
    for n, raw in enumerate(path.read_bytes().split(b"\n")):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except ValueError:
            bad += 1
            continue
        if not isinstance(obj, dict):
            bad += 1
            continue
        t = obj.get("type")
        by_type[t if isinstance(t, str) else ""] += 1
        if t == "system" and obj.get("subtype") == "compact_boundary":
            m = obj.get("compactMetadata") or {}
            comps.append(("compact", m.get("trigger"), m.get("preTokens"), m.get("postTokens")))
        if t == "system" and obj.get("subtype") == "microcompact_boundary":
            m = obj.get("microcompactMetadata") or {}
            comps.append(("microcompact", m.get("trigger"), m.get("preTokens"), m.get("tokensSaved")))
        msg = obj.get("message")
        if isinstance(msg, dict) and isinstance(msg.get("content"), list):
            for b in msg["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    c = b.get("content")
                    text = c if isinstance(c, str) else "".join(x.get("text", "") for x in c or [] if isinstance(x, dict))
                    markers += text.startswith("<persisted-output>")
        if t != "assistant" or obj.get("isSidechain") is True or not isinstance(msg, dict):
            continue
        u = msg.get("usage")
        if not isinstance(u, dict) or msg.get("model") == "<synthetic>":
            continue
        content = msg.get("content")
        first = content[0] if isinstance(content, list) and content else None
        if (
            isinstance(first, dict)
            and first.get("type") == "text"
            and (first.get("text") in SYNTHETIC or str(first.get("text")).startswith("The user doesn't want to"))
        ):
            continue
        groups.setdefault(msg.get("id") or f"line{n}", []).append(u)
    peak = None
    for frags in groups.values():
        last = frags[-1]
        val = sum(int(last.get(k) or 0) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
        val += max(int(f.get("output_tokens") or 0) for f in frags)
        peak = val if peak is None else max(peak, val)
    tr = path.with_suffix("") / "tool-results"
    files = len([p for p in tr.iterdir() if p.is_file()]) if tr.is_dir() else 0
    return {
        "by_type": dict(by_type),
        "malformed": bad,
        "total": sum(by_type.values()),
        "compactions": comps,
        "peak": peak,
        "markers": markers,
        "files": files,
    }


@pytest.fixture(scope="module")
def reported():
    before = tree_hashes(REAL_PROJECTS)
    out, err = io.StringIO(), io.StringIO()
    assert main(["stats", "--json", "--no-cache", str(REAL_PROJECTS)], out, err) == 0, err.getvalue()
    assert tree_hashes(REAL_PROJECTS) == before
    return {Path(s["path"]).resolve(): s for s in jsonl(out.getvalue())}


def session_files():
    return [p for p in real_files() if "subagents" not in p.parts]


def test_every_session_file_is_reported(reported):
    assert set(reported) == {p.resolve() for p in session_files()}


@pytest.mark.parametrize("path", session_files(), ids=lambda p: f"{p.parent.name[:24]}/{p.name[:16]}")
def test_numbers_match_an_independent_count(reported, path):
    s = reported[path.resolve()]
    ind = independent(path)
    assert s["records"]["by_type"] == ind["by_type"]
    assert s["records"]["total"] == ind["total"] and s["records"]["malformed"] == ind["malformed"]
    got = [
        (c["kind"], c["trigger"], c["pre_tokens"], c["post_tokens"] if c["kind"] == "compact" else c["tokens_saved"])
        for c in s["compactions"]
    ]
    assert got == ind["compactions"]
    assert s["context"]["peak_tokens"] == ind["peak"]
    assert s["persisted_outputs"] == {"markers": ind["markers"], "files": ind["files"]}
    if ind["by_type"].get("user") or ind["by_type"].get("assistant"):
        assert s["chain"]["length"] > 0 and s["chain"]["leaf_uuid"]


def test_known_facts_from_the_realdata_readme(reported):
    by_name = {p.name: s for p, s in reported.items()}
    s = by_name["fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"]
    assert [(c["kind"], c["trigger"], c["pre_tokens"]) for c in s["compactions"]] == [("compact", "auto", 167117)]
    assert s["subagents"] == 3 and s["records"]["by_type"]["progress"] == 1332
    assert sorted(a["kind"] for a in s["subagent_list"]) == ["agent", "agent", "compaction"]
    assert s["chain"]["logical_length"] > s["chain"]["length"]  # history stitched across the boundary
    s = by_name["6255e7b4-7fdd-4ae3-a135-1848c66aca3b.jsonl"]
    assert s["counts"]["microcompactions"] == 3 and s["persisted_outputs"]["files"] == 16
    s = by_name["58c4ae0b-7366-4711-81c0-28442f46bf65.jsonl"]
    assert s["counts"]["microcompactions"] == 2 and s["persisted_outputs"]["files"] == 9
    assert s["context"]["peak_tokens"] == 180_657 and s["counts"]["compactions"] == 0
    empty = by_name["1ca217c4-f55d-4f6e-a994-b7e2231336f0.jsonl"]
    assert empty["records"]["total"] == 0 and empty["chain"]["length"] == 0
    only = by_name["4e27c414-a885-46a0-b5c8-d58e1417377d.jsonl"]
    assert only["records"]["by_type"] == {"summary": 1} and only["title"]
    flat = by_name["agent-668b5ac2.jsonl"]
    assert flat["orphan_subagent"] is True
    sub = by_name["subagent.jsonl"]
    assert [a["layout"] for a in sub["subagent_list"]] == ["progress"]
    wt = by_name["ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"]
    assert [a["layout"] for a in wt["subagent_list"]] == ["subagents-dir"] and wt["subagent_list"][0]["spawned_by"]


def test_subagent_files_load_as_sessions_too():
    from inspector.transcript.session import Session

    for p in real_files():
        if "subagents" in p.parts:
            s = Session.load(p)
            assert s.records and all(r.is_sidechain for r in s.records if r.uuid)


def rule_leaf(path: Path) -> str | None:
    """The leaf by the rule, written independently of inspector (stdlib json, own walk).

    Chain records are the records with a uuid other than `progress`; a parent that is a progress record is
    replaced by that record's own parent (bridged); a leaf candidate is a chain record that no chain record
    names as parent, walked up to its nearest user/assistant record; the main thread's candidate with the
    latest timestamp wins (a tie: the later in the file)."""
    from datetime import datetime

    recs = []
    for raw in path.read_bytes().split(b"\n"):
        try:
            o = json.loads(raw)
        except ValueError:
            continue
        if isinstance(o, dict) and isinstance(o.get("uuid"), str):
            recs.append(o)
    last = {r["uuid"]: n for n, r in enumerate(recs)}
    progress_parent = {r["uuid"]: r.get("parentUuid") for r in recs if r.get("type") == "progress"}

    def bridged(p):
        hops = 0
        while p in progress_parent and hops < 10_000:
            p, hops = progress_parent[p], hops + 1
        return p

    chain = {r["uuid"]: r for n, r in enumerate(recs) if r.get("type") != "progress" and last[r["uuid"]] == n}
    parent = {u: bridged(r.get("parentUuid")) for u, r in chain.items()}
    named = {p for p in parent.values() if p is not None}
    cands = set()
    for u in chain:
        if u in named:
            continue
        hops, v = 0, u
        while v is not None and v in chain and chain[v].get("type") not in ("user", "assistant") and hops < 10_000:
            v, hops = parent.get(v), hops + 1
        if v in chain and chain[v].get("type") in ("user", "assistant"):
            cands.add(v)
    main = [u for u in cands if chain[u].get("isSidechain") is not True] or list(cands)
    if not main:
        return None

    def key(u):
        ts = chain[u].get("timestamp")
        try:
            t = datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
        except (AttributeError, ValueError):
            t = float("-inf")
        return (t, last[u])

    return max(main, key=key)


@pytest.mark.parametrize("path", session_files(), ids=lambda p: f"{p.parent.name[:24]}/{p.name[:16]}")
def test_every_leaf_equals_the_rule(reported, path):
    """The leaf of every real session is the rule's: Stop-hook progress records after the last reply do not hide it."""
    assert reported[path.resolve()]["chain"]["leaf_uuid"] == rule_leaf(path)


def test_trailing_progress_records_do_not_move_the_leaf():
    """The files that end with Stop-hook progress records: the leaf is the final reply, after the last compaction."""
    from inspector.transcript.session import Session

    for name in (
        "4f8c1176-7025-4530-a860-c6fc4c63a150.jsonl",
        "13da966e-44f7-4a36-8060-ca40451e4561.jsonl",
        "24a274a3-0317-440d-b17a-41e83ee34fec.jsonl",
        "0cd9edf7-459c-4900-af40-cf2c64dea525.jsonl",
    ):
        p = next(REAL_PROJECTS.rglob(name))
        s = Session.load(p)
        assert s.records[-1].type == "progress"
        leaf = s.conversation.leaf
        last_message = max(i for i, r in enumerate(s.records) if r.type in ("user", "assistant") and not r.is_sidechain)
        assert leaf == last_message
        boundaries = [i for i, r in enumerate(s.records) if r.is_compact_boundary]
        assert not boundaries or leaf > boundaries[-1]


def test_history_before_a_boundary_whose_logical_parent_is_missing():
    """A boundary naming a logical parent that is not in the file: the records before it are read in file order."""
    from inspector.tokens.explain import analyze
    from inspector.transcript.session import Session

    for name in ("c010174c-a7cd-4bcc-b7d4-61258d6c463f.jsonl", "24a274a3-0317-440d-b17a-41e83ee34fec.jsonl"):
        s = Session.load(next(REAL_PROJECTS.rglob(name)))
        conv = s.conversation
        [b] = [i for i, r in enumerate(s.records) if r.is_compact_boundary]
        assert s.records[b].logical_parent not in conv.by_uuid
        pred = conv.logical_predecessor(b)
        assert pred is not None and pred < b and s.records[pred].type in ("user", "assistant")
        first_message = min(i for i, r in enumerate(s.records) if r.type in ("user", "assistant"))
        assert conv.logical_chain[0] <= first_message < b < conv.logical_chain[-1]  # the whole history, from the first prompt
        [e] = analyze(s).compactions
        assert e.last_usage_before is not None and e.messages_summarized > 50
        assert "?" not in e.explanation


def test_the_readme_fidelity_table_is_the_scripts_output():
    """docs/fidelity.md's table is generated (bench/fidelity.py), never typed: it must match what the code says now."""
    import importlib.util

    from helpers import ROOT

    spec = importlib.util.spec_from_file_location("fidelity", ROOT / "bench" / "fidelity.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    text = mod.table(mod.rows(REAL_PROJECTS))
    from conformance.docblocks import read_block

    assert read_block(ROOT / "docs" / "fidelity.md", "fidelity") == text, "run python bench/fidelity.py to refresh it"
