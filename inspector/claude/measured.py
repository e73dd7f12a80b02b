"""What each Claude Code release did about the context window, measured on its own binary.

The era matrix (`python -m conformance --matrix`, conformance/matrix.py) runs one release on each side of every
boundary of the version table on a model of every family, against a fake of the API, and records for each release ×
model: the smallest context after which it compacted (the auto-compact threshold as the release enforced it, or
none), where it refused to send a request itself with auto-compact off (the blocking limit), what it did when the API
refused a request as too long, and what it did when every summarize request failed. The results are this folder's
`era_matrix.json`; `thresholds()` checks its formula against them and the binary wins where they disagree.

A session's release is answered by the nearest measured release at or below it (said so when it is not the same
release); a release newer than the newest measured one gets the newest one's facts, said so too.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from inspector.claude.models import unknown_to
from inspector.claude.release import MATRIX, Version, matrix_rows, measured_releases, parse_version, show_version
from inspector.claude.versions import catalog_key

DATA = MATRIX
UNKNOWN_MODEL = "claude-foo-1"  # the matrix's stand-in for a model id no release knows
ALIASES = frozenset({"opus", "sonnet", "haiku", "fable", "mythos", "default", "opusplan", "best"})


@dataclass(frozen=True, slots=True)
class Measured:
    version: Version
    model: str  # the model id the matrix ran
    enforced: bool  # it compacted before the next request once the context passed a threshold
    threshold: int | None  # the count (preTokens) recorded at the first size that compacted
    threshold_usage: int | None  # that size: the last response's usage
    blocks: bool  # with auto-compact off, it refused to send a request itself
    blocking_usage: int | None  # the smallest last usage after which it refused
    blocks_with_defaults: bool  # with the defaults, it refused to send before any compaction
    auto_off_compacts: bool  # DISABLE_AUTO_COMPACT set, it compacted all the same (2.0.0 does not read it)
    reactive: str  # what followed the API's 400 "prompt is too long"
    summarizer_fails: str  # what followed when every summarize request failed

    @property
    def label(self) -> str:
        return show_version(self.version)

    @property
    def reactive_compacts(self) -> bool:
        return self.reactive.startswith("compacts")

    @property
    def reactive_words(self) -> str:
        return {
            "compacts and retries": "compacted and sent the request again",
            "compacts": "compacted",
            "ends the turn (no compaction)": "ended the turn without compacting",
        }.get(self.reactive, self.reactive)


def _cell(d: dict[str, Any]) -> Measured | None:
    v = parse_version(d.get("version"))
    if v is None or d.get("error"):
        return None
    auto = d.get("auto") or {}
    blk = d.get("blocking") or {}
    enforced = auto.get("outcome") == "compact"
    count = auto.get("count")
    if enforced and count is None and isinstance(auto.get("usage"), int):  # a search cut short: its last compaction's
        count = auto["usage"] + (auto.get("estimate") or 0)  # usage and the estimate Claude Code added to it
    return Measured(
        version=v,
        model=str(d.get("model")),
        enforced=enforced,
        threshold=count if enforced else None,
        threshold_usage=auto.get("usage") if enforced else None,
        blocks=blk.get("outcome") == "blocked",
        blocking_usage=blk.get("usage") if blk.get("outcome") == "blocked" else None,
        blocks_with_defaults=auto.get("outcome") == "blocked",
        auto_off_compacts=blk.get("outcome") == "compact",
        reactive=str(d.get("reactive") or ""),
        summarizer_fails=str(d.get("summarizer_fails") or ""),
    )


@lru_cache(maxsize=1)
def cells() -> dict[tuple[Version, str], Measured]:
    out: dict[tuple[Version, str], Measured] = {}
    for d in matrix_rows("cells"):
        c = _cell(d)
        if c is not None:
            out[(c.version, c.model)] = c
    return out


def releases() -> tuple[Version, ...]:
    """The releases the matrix measured, oldest first."""
    return measured_releases()


def matrix_model(model: str | None) -> str | None:
    """The matrix's name for a session's model: its catalog id (with `[1m]` when the session asked for 1M), or the
    unknown-model stand-in for an id no catalog has. None without a model."""
    if not model:
        return None
    key = catalog_key(model)
    if key is None:
        if model.lower().split("[", 1)[0] in ALIASES:  # which model an alias meant is a fact of each release: unmeasured
            return None
        return UNKNOWN_MODEL
    return key + ("[1m]" if "[1m]" in model.lower() else "")


@lru_cache(maxsize=1)
def bisected() -> dict[Version, str]:
    """The releases where a rule of the thresholds changed, found by bisecting the binaries (`python -m conformance
    --bisect`, recorded with the matrix): a measurement answers for the releases after it up to the next one only."""
    out: dict[Version, str] = {}
    for b in matrix_rows("boundaries"):
        v = parse_version(b.get("first"))
        if v is not None and b.get("kind") == "cells":
            out[v] = str(b.get("what") or "")
    return out


@lru_cache(maxsize=256)
def segment(v: Version) -> Version:
    """The first release of the stretch of releases with the same rules as `v`: the era's first release, or the
    latest bisected change at or below it."""
    from inspector.claude.versions import rules_for

    era = rules_for(show_version(v)).era
    starts = [b for b in bisected() if b <= v and era.contains(b)] + ([era.first] if era.first else [(0, 0, 0)])
    return max(starts)


@dataclass(frozen=True, slots=True)
class Lookup:
    cell: Measured | None  # None: the matrix has no row for this model near this release
    release: Version | None  # the measured release whose facts apply
    note: str  # in words: which release was measured, and how it relates to the session's


def lookup(version: str | None, model: str | None) -> Lookup:
    """The measured facts for a session's release and model: the nearest measured release at or below it."""
    v = parse_version(version)
    name = matrix_model(model)
    rel = releases()
    if v is None or name is None or not rel:
        return Lookup(None, None, "")
    seg = segment(v)
    below = [r for r in rel if r <= v and segment(r) == seg]  # never across a boundary where the rules changed
    one_m = parse_version(first_answering("one-m-suffix", True)) if "[1m]" in name else None
    if one_m is not None and v >= one_m and seg < one_m:
        # a [1m] model is measured only on releases that read the suffix (2.0.0 ran claude-sonnet-4-5[1m] on a 200,000
        # window, 2.0.15 and later on 1M: the one-m-suffix probe)
        seg = one_m
        below = [r for r in below if r >= one_m]
    if not below:
        return Lookup(
            None,
            None,
            f"no release from {show_version(seg)} to {show_version(v)} (where the rules last changed) "
            "was measured by the era matrix",
        )
    r = below[-1]
    known_from = unknown_to(name, r) if name is not None else None
    if known_from is not None and unknown_to(name, v) is None:
        # the measured release did not know the model yet, the session's release does (claude-haiku-5-5, first named by
        # 2.1.293: 2.1.285 ran it as an unknown model's 200,000, 2.1.300 as its own 1M; generated seed 155002): the
        # nearest measured release above it with the same rules that knows the model answers, not today's catalog
        # (claude-fable-5-1, first named by 2.1.257: 2.1.284 ran it as a 200,000 window with no threshold enforced,
        # 2.1.285 as a native 1M one; 2.1.273 as 2.1.284 did, no threshold checked up to 300,000: seed 110021)
        told = f"{show_version(r)}, the nearest below, did not know {name} yet: first named in {show_version(known_from)}"
        up = next((x for x in rel if x > v and segment(x) == seg and unknown_to(name, x) is None), None)
        c = cells().get((up, name)) if up is not None else None
        if up is not None and c is not None:
            return Lookup(c, up, f"measured on {show_version(up)}, the nearest measured release above {show_version(v)} ({told})")
        return Lookup(None, r, f"measured on {told}")
    c = cells().get((r, name))
    if c is None and name is not None and "[1m]" not in name:
        if unknown_to(name, v) is not None:  # a model the session's release did not know yet: its unknown models' cell
            c = cells().get((r, UNKNOWN_MODEL))
            if c is not None:
                name = UNKNOWN_MODEL
    if r == v:
        where = f"measured on the {show_version(r)} binary"
    elif r == rel[-1]:
        where = (
            f"measured on {show_version(r)}, the newest release the era matrix ran; {show_version(v)} is newer and was "
            "not measured"
        )
    else:
        nxt = next(x for x in rel if x > v)
        where = (
            f"measured on {show_version(r)}, the nearest measured release below {show_version(v)} (the next measured "
            f"is {show_version(nxt)})"
        )
    if c is None:
        return Lookup(None, r, f"{where}, but not on {name}")
    what = f"{where} with an id no catalog has ({name}, standing for {model})" if name == UNKNOWN_MODEL else f"{where} on {name}"
    return Lookup(c, r, what)


@lru_cache(maxsize=1)
def _leaf_rules() -> dict[Version, dict[str, str]]:
    out: dict[Version, dict[str, str]] = {}
    for r in matrix_rows("releases"):
        v = parse_version(r.get("version"))
        if v is not None and isinstance(r.get("leaf"), dict):
            out[v] = {str(k): str(x) for k, x in r["leaf"].items()}
    return out


def resume_parent(conv: Any, version: str | None) -> tuple[str | None, str]:
    """The uuid that the first prompt after `claude --resume` hangs off, by the rule the session's release was
    measured to follow, and that rule in words. A file that ends in a bookkeeping record below its last message
    (turn_duration, stop_hook_summary...) continues from that record in some releases and from the message in
    others; the messages sent are the same either way, but for a record that is sent (a local command's output
    below a /compact that compacted nothing: `resumed_chain`). A file a killed process left continues elsewhere in
    some releases (`killed_resume`)."""
    killed = killed_resume(conv, version)
    if killed is not None:
        return killed
    leaf = conv.leaf_uuid
    tail = conv.trailing_leaf
    if leaf is None or tail is None:
        return leaf, "the leaf is the file's last chain record"
    rules = _leaf_rules()
    v = parse_version(version)
    below = sorted(r for r in rules if v is not None and r <= v)
    if not below:
        return leaf, ("the leaf's trailing bookkeeping record is not measured for this release: the last message is assumed")
    r = below[-1]
    rule = rules[r].get("trailing system record", "")
    nearest = "" if r == v or v is None else f", the nearest measured release at or below {show_version(v)}"
    at = f"measured on {show_version(r)}" + nearest
    bisected = answer_at("leaf", version)  # where the bisection found the change, it answers for every release
    if bisected is not None:
        rule = "the trailing system record" if bisected else "the last message"
    if rule == "the trailing system record":
        return conv.records[tail].uuid, f"--resume continues from the trailing bookkeeping record ({at})"
    return leaf, f"--resume continues from the last message, not the bookkeeping record after it ({at})"


def resumed_chain(conv: Any, version: str | None) -> list[int]:
    """The records a resume continues from, in order: the active chain and, when the release continues from the
    trailing record below its leaf, the records down to it (a system record among them is sent when it is a local
    command's output: "Not enough messages to compact." below the /compact that printed it, 2.1.328 seed 28002); without
    a last reply cut off after its thinking, where the release leaves it out."""
    cut = conv.left_out_on_resume(version)
    if cut:
        return list(conv.chain)[: len(conv.chain) - len(cut)]
    tail = conv.trailing_leaf
    if tail is None or resume_parent(conv, version)[0] != conv.records[tail].uuid:
        return list(conv.chain)
    return list(conv.chain) + conv.below_leaf()


def killed_resume(conv: Any, version: str | None) -> tuple[str | None, str] | None:
    """Where `claude --resume` continues a file a killed process left, when the release does not continue from its
    leaf (the uuid, and the rule in words): a last reply cut off after its thinking is left out, from 2.1.7
    (`Conversation.left_out_on_resume`); a call the last reply left without a result while another has one gets an
    interrupted result below it, from 2.1.265 (`Conversation.resumed_below_call`); a file that ends inside a compaction
    continues from what the loader kept of it (`Conversation.cut_in_compaction`: the boundary, or the kept records).
    None otherwise."""
    cut = conv.left_out_on_resume(version)
    if cut:
        before = conv.chain[-len(cut) - 1] if len(conv.chain) > len(cut) else None
        return (
            conv.records[before].uuid if before is not None else None,
            "--resume leaves out the last reply, cut off after its thinking, and continues from the record before it "
            "(bisected: Claude Code 2.1.7 and later)",
        )
    call = conv.resumed_below_call(version)
    if call is not None and call != conv.leaf:
        return (
            conv.records[call].uuid,
            "--resume writes an interrupted result below the call the last reply left without one and continues below "
            "it, not below the last result (bisected: Claude Code 2.1.265 and later)",
        )
    b = conv.cut_in_compaction()
    if b is None:
        return None
    cut = "the file ends inside a compaction (its boundary written, not its summary: the process was killed while compacting); "
    if conv.leaf is not None and conv.leaf >= b:
        sends = "the loader keeps nothing before the boundary, so --resume sends none of the conversation and no summary of it"
    elif conv.relink is not None and conv.relink.boundary == b:
        sends = "--resume sends the records the compaction kept, without the summary of what it dropped"
    else:
        return None
    return conv.leaf_uuid, f"{cut}{sends} (2.1.328 and 2.1.332, files cut so)"


def first_answering(probe: str, answer: bool) -> str | None:
    """The first release the bisections found giving `answer` to a per-release probe (None: no change found)."""
    found = [
        b for b in matrix_rows("boundaries") if b.get("probe") == probe and bool((b.get("answers") or {}).get("first")) is answer
    ]
    firsts = sorted((v, b["first"]) for b in found if (v := parse_version(b.get("first"))) is not None)
    return firsts[0][1] if firsts else None


def answer_at(probe: str, version: str | None) -> bool | None:
    """What a release answers to one of the matrix's per-release probes ("analysis", "leaf"), from the changes the
    bisections found: the answer after the last change at or below it, before the first one the answer before it.
    None when no change of that probe was found or the version is not known."""
    v = parse_version(version)
    found = [(parse_version(b.get("first")), b) for b in matrix_rows("boundaries") if b.get("probe") == probe]
    changes = sorted(((first, b) for first, b in found if first is not None), key=lambda x: x[0])
    if v is None or not changes:
        return None
    answer = changes[0][1]["answers"]["before"]
    for first, b in changes:
        if v >= first:
            answer = b["answers"]["first"]
    return bool(answer)
