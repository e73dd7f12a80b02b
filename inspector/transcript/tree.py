"""The conversation model: the parentUuid tree, the leaf, the active chain, branches (§2.7–2.9).

Built from the records' index only (no bodies). Follows Claude Code's own loader:
legacy `progress` records are bridged, the last preserved segment of a compaction is relinked,
the leaf is the user/assistant record with the latest timestamp among the tree's leaves, the
active chain is the walk from that leaf to its root, and the parallel tool-call repair puts
back sibling fragments and their tool results. Compact boundaries (parent null) are stitched to
their `logicalParentUuid` for the full logical history, or, when that uuid is not in the file, to
the record before the boundary in file order. Cycles, dangling parents and duplicate uuids never
loop or raise.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache

from inspector.textutil import timestamp_key
from inspector.transcript.records import F_THINKING_ONLY, MESSAGE_TYPES, Record, gc_paused

# The first release whose loader, once it relinks a compaction's kept messages, drops every record before that
# compaction's boundary that it did not keep (2.1.81's wHY, 2.1.88's xRY; absent from 2.1.80's cli.js). Resumed by
# 2.1.152, 2.1.212, 2.1.328 and 2.1.332, a file whose kept tail ends before an older summary continues from the tail.
LOADS_FROM_LAST_COMPACTION = (2, 1, 81)

# The first release that puts a compaction's kept messages back by the boundary's `preservedSegment` when it loads a
# file (the field first appears in 2.1.76's cli.js). Measured by the conformance round trip (seed 137003, "summarize
# from here" saved by inspector and resumed): 2.1.75 and 2.1.74 sent the summary without the messages before the
# pivot, 2.1.76 and 2.1.88 sent them.
RELINKS_FROM = (2, 1, 76)


# The first release that continues from the last-written leaf, not the newest stamped one (bisected with the
# harness's leaf-order probe: two childless replies below the last one, the first written stamped a second later;
# 2.1.100 continued from that one, 2.1.101 from the other; `python -m conformance --bisect leaf-order`). 2.1.328 and
# 2.1.332 did so on a real shape too: a background agent's notice written after a parallel call's result but stamped
# before it (REPL seed 79200). Before it, §2.7's rule (the newest stamped, findLatestMessage in 2.1.88).
LEAF_BY_FILE_ORDER = (2, 1, 101)

# The first release that continues from the record the file's last `last-prompt` names (its leafUuid: where the last
# turn ended) when that record is off the last-written leaf's line, neither its ancestor nor below it (bisected with
# the leaf-named probe: below the last reply a childless reply, beside the last reply another, written and stamped
# last, the last-prompt naming the last reply; 2.1.119 continued from the one beside it, 2.1.120 from the named reply
# itself, though a reply is below it). A named record on the leaf's line changes nothing: what was written after it
# there (a background agent's notice) is continued from; the line runs across compactions (a boundary continues
# from the record before it) and takes in the parallel calls put back (a call the last-prompt of a streaming reply
# named): files of 2.1.327 and 2.1.332 cut at their requests and resumed continued from the last-written leaf so.
LAST_PROMPT_NAMES_LEAF = (2, 1, 120)

# 2.1.20-2.1.79 put none of a reply's off-chain fragments or results back on a resume (the repair probe: 2.1.80 is the
# first that does; 2.0.x chained each result after the one before, so nothing was off the chain): a resumed process of
# those releases holds and sends the walked chain of what it loaded (a fresh 2.1.53 batch, seed 191000, and a 2.1.36
# one, seed 193000: a reply of parallel calls sent with the one call on the walked chain and its result only). The
# chain stays the repaired one, which is also the live process's (it held every result): `held_after_resume` is what a
# later process of such a release held of it.
REPAIRED_ON_RESUME_FROM = (2, 1, 80)

# How far after a compaction's boundary its summary and the reply written past it are looked for (records): a
# compaction writes its boundary, summary and re-attachments (a few, up to 5 files and the rest) together
SIDE_REACH = 64

# The first release that puts a reply's fragments and results that are off the walked chain back in the order they
# were written (bisected with the repair-order probe: three parallel calls, the first result re-stamped after the
# second; 2.1.260 sent them by timestamp, 2.1.261 as written). Before it, §2.7's order: the fragments by timestamp,
# then the results by timestamp.
REPAIR_IN_FILE_ORDER = (2, 1, 261)

# The first release whose `--resume` leaves out a last reply cut off after its thinking (an assistant record of
# thinking blocks only, nothing after it: a process killed while the model thought) and continues from the record
# before it (bisected with the leaf-thinking probe: 2.1.6 continued from the thinking, 2.1.7 from the reply before it;
# 2.1.328 and 2.1.332 did so on generated sessions cut after such a fragment, 8 of 8). The file keeps the fragment: the
# chain and the token story are the file's; what a resume continues from and sends (`claude.measured`) are not.
THINKING_END_LEFT_OUT = (2, 1, 7)

# The first release whose `--resume` of a file that ends between parallel calls' results (one answered, another not:
# a process killed while a call ran) continues below the call left without a result: it writes an interrupted result
# below each such call, then a "No response requested." reply and the new prompt (bisected with the unanswered-call
# probe: 2.1.263 continued below the last result, 2.1.265 below the unanswered call; 2.1.328 and 2.1.332 did so on
# generated sessions cut there, 3 of 3). Before it, and for a file that ends in the call itself, the leaf.
UNANSWERED_CALL_RESUMED = (2, 1, 265)


def leaves_out_thinking_end(version: str | None) -> bool:
    """Whether the release's resume leaves out the chain's last records when they are thinking only (see
    THINKING_END_LEFT_OUT)."""
    return _from(version, THINKING_END_LEFT_OUT)


def resumes_below_unanswered_call(version: str | None) -> bool:
    """Whether the release's resume continues below the last call the chain's last reply left without a result (see
    UNANSWERED_CALL_RESUMED)."""
    return _from(version, UNANSWERED_CALL_RESUMED)


@lru_cache(maxsize=256)
def _from(version: str | None, first: tuple[int, int, int]) -> bool:
    """Whether a release is `first` or later, one that names none not (cached: asked once per reply of a long
    session)."""
    from inspector.claude.release import at_or_after

    return at_or_after(version, first, unknown=False)


def names_last_prompt(version: str | None) -> bool:
    """Whether the release continues from the record the last `last-prompt` names when it is off the leaf's line
    (see LAST_PROMPT_NAMES_LEAF)."""
    return _from(version, LAST_PROMPT_NAMES_LEAF)


def leaf_by_file_order(version: str | None) -> bool:
    """Whether the release chooses among leaves by the order they were written (see LEAF_BY_FILE_ORDER)."""
    return _from(version, LEAF_BY_FILE_ORDER)


def repairs_on_resume(version: str | None) -> bool:
    """Whether the release puts a reply's off-chain fragments and results back when it resumes a session (see
    REPAIRED_ON_RESUME_FROM); a record without a version is taken as today's."""
    from inspector.claude.release import at_or_after

    return at_or_after(version, REPAIRED_ON_RESUME_FROM)


def repair_in_file_order(version: str | None) -> bool:
    """Whether the release puts off-chain fragments and results back as written (see REPAIR_IN_FILE_ORDER)."""
    return _from(version, REPAIR_IN_FILE_ORDER)


def _next_after(sorted_positions: list[int], p: int) -> float:
    """The first of these positions after `p` (infinity when none)."""
    k = bisect.bisect_right(sorted_positions, p)
    return sorted_positions[k] if k < len(sorted_positions) else float("inf")


def _hangs(r: Record) -> bool:
    """A record the repair carries along below a put-back one (2.1.332's XN): an attachment, a system record but a
    compaction's boundary, a meta prompt that answers no call."""
    if r.type == "attachment":
        return True
    if r.type == "system":
        return not r.is_compact_boundary
    return r.type == "user" and r.is_meta and not r.tool_results


def relinks_kept(version: str | None) -> bool:
    """Whether the release that wrote a compaction puts the messages its `preservedSegment` names back on load (see
    RELINKS_FROM); a record without a version is taken as today's."""
    from inspector.claude.release import at_or_after

    return at_or_after(version, RELINKS_FROM)


def kept_not_relinked(version: str | None, n: int, which: str) -> str:
    """What a compaction's preview says when the session's release would not put its kept messages back on resume."""
    return (
        f"Claude Code {version} does not put the {n:,} messages {which} back when it resumes a session (it reads no "
        f"preservedSegment before {'.'.join(map(str, RELINKS_FROM))}): resumed by it, the saved session sends the "
        "summary alone; the process that compacts keeps them until it exits, and later releases put them back"
    )


def loads_from_last_compaction(version: str | None) -> bool:
    """Whether the release that wrote a compaction loads a file from it (see LOADS_FROM_LAST_COMPACTION); a record
    without a version is taken as today's."""
    from inspector.claude.release import at_or_after

    return at_or_after(version, LOADS_FROM_LAST_COMPACTION)


@dataclass(frozen=True, slots=True)
class Branch:
    """An abandoned branch (from a rewind or an edit): its tip and where it left the chain."""

    tip: int  # index of the branch's last user/assistant record
    fork: int | None  # index of the record on the logical chain it forked from (None: own root)
    length: int  # records from the fork (exclusive) to the tip (inclusive)


@dataclass(slots=True)
class Relink:
    """What applying a compaction's preserved segment changed (§8.6, §10)."""

    boundary: int
    head: str
    anchor: str
    tail: str
    preserved: frozenset[str] = field(default_factory=frozenset)
    head_was: int | None = None  # the kept head's parent before the relink: the last record the compaction summarized
    in_place: bool = False  # kept records chained after the boundary itself, before the summary ("summarize from here")
    kept: tuple[int, ...] = ()  # the kept records' indexes, in order
    anchor_at: int = -1  # the anchor's index


def _keeps(r: Record) -> bool:
    """Whether a compaction's boundary names records it kept (the loader looks for the last that does)."""
    meta = r.get("compact") or {}
    return bool(meta.get("preservedMessages") or meta.get("preservedSegment"))


def is_sent(r: Record) -> bool:
    """A record a resumed Claude Code sends: a message, or an attachment with the text it rendered (2.1.3xx)."""
    return r.type in MESSAGE_TYPES or (r.type == "attachment" and bool(r.get("rendered")))


class Conversation:
    """The tree of one transcript's chain records, and the chains that matter."""

    def __init__(self, records: list[Record], *, main_thread: bool = True) -> None:
        with gc_paused():
            self._build(records, main_thread)

    def _build(self, records: list[Record], main_thread: bool) -> None:
        self.records = records
        self.main_thread = main_thread
        by_uuid: dict[str, int] = {}
        for i, r in enumerate(records):
            if r.uuid is not None:
                by_uuid[r.uuid] = i  # a repeated uuid: the last occurrence wins, as in a Map
        self.by_uuid = by_uuid
        self.parent: dict[int, int | None] = {}
        self.relink: Relink | None = None  # the last compaction's, as the loader applies it to `parent`
        self.relinks: dict[int, Relink] = {}  # every compaction's, by boundary, applied to `history_parent`
        self.history_parent: dict[int, int | None] = self.parent
        self._bridge_progress()
        self._apply_preserved_segment()
        self._relink_side_boundaries()
        self._leaf_line: tuple[int | None, list[int]] = (None, [])
        self.leaf: int | None = self._choose_leaf()
        self.logical_chain: list[int] = []
        self.chain: list[int] = []
        if self.leaf is not None:
            # the active chain is the logical chain from its last root (the walk that does not
            # stitch across boundaries stops there), so the repair runs once
            walked = self._leaf_line
            self.logical_chain = walked[1] if walked[0] == self.leaf else self._repair(self._walk(self.leaf, logical=True))
            loaded = self._walk(self.leaf, logical=False)
            root = loaded[0]
            if root not in self.logical_chain:  # the history's relinks led elsewhere (a damaged file): the loader's
                self.history_parent, self.relinks = self.parent, {self.relink.boundary: self.relink} if self.relink else {}
                self.logical_chain = self._repair(self._walk(self.leaf, logical=True))
            self.chain = self.logical_chain[self.logical_chain.index(root) :]
            if self.history_parent is not self.parent and self.chain[: len(loaded)] != loaded:
                # the history holds what the loader puts after the last boundary elsewhere ("summarize from here"
                # keeps the records before its summary): what Claude Code loads is its own walk
                self.chain = self._repair(loaded)
        self.branches: list[Branch] = self._find_branches()
        # the records kept verbatim by a compaction of the history and moved after its summary, each with the
        # boundary of the first one that kept it (back-to-back compactions can keep the same records; those a
        # "summarize from here" kept stay in place, before its boundary)
        self.kept_at: dict[str, int] = {}
        if self.relinks:
            on = set(self.logical_chain)
            for b in sorted(self.relinks):
                if b in on and not self.relinks[b].in_place:
                    for u in self.relinks[b].preserved:
                        self.kept_at.setdefault(u, b)

    # -- construction ------------------------------------------------------------------------
    def _bridge_progress(self) -> None:
        """Resolve parents; a parent that is a `progress` record is replaced by its own parent."""
        recs, by_uuid = self.records, self.by_uuid
        progress_parent: dict[str, str | None] = {}
        for r in recs:
            if r.type == "progress" and r.uuid is not None:
                progress_parent[r.uuid] = r.parent

        def resolve(p: str | None) -> str | None:
            seen = 0
            while p is not None and p in progress_parent and seen < 100000:
                p = progress_parent[p]
                seen += 1
            return p

        parent = self.parent
        for i, r in enumerate(recs):
            u = r.uuid
            if u is None or by_uuid[u] != i:
                continue
            p = r.parent
            if p is None:
                parent[i] = None
                continue
            if p in progress_parent and r.type != "progress":
                p = resolve(p)
            parent[i] = by_uuid.get(p) if p is not None else None

    def _apply_preserved_segment(self) -> None:
        """Relink the kept messages of the last compaction, as Claude Code does on load (§8.6; format-2.1.3xx.md §3.6).

        Only when the last boundary that keeps messages is also the last boundary. With `preservedMessages`
        (2.1.3xx) the listed records, all present, are chained in order after the anchor; with the older
        `preservedSegment` the walk from its tail back to its head must hold. Either way the records that hung
        off the anchor move after the last kept record, and so do the records after the boundary that hung off a
        record the compaction dropped.

        The history (`logical_chain`) needs every compaction's relink, not only the last: a compaction whose kept
        tail reaches back past an earlier summary (back-to-back compactions of 2.1.3xx) continues, before its kept
        head, from that earlier summary, not from the record the head followed in the file. `relinks` has each
        compaction's relink, applied in file order to `history_parent` (the loader's `parent` relinks the last
        only)."""
        recs = self.records
        boundaries = self._boundaries = [i for i, r in enumerate(recs) if r.is_compact_boundary]
        self.last_boundary = -1  # the last compaction's boundary (-1: none)
        self.relinks = {}
        self.history_parent = self.parent
        self._moved: list[int] = []  # the boundaries whose kept records the history moved after their summary
        self._kept_any: set[int] = set()  # the records they kept
        self.loaded_from = -1  # the boundary before which the loader drops the records it did not keep (-1: none)
        if not boundaries:
            return
        found = {b: rl for b in boundaries if (rl := self._relink(b, self.parent, apply=False)) is not None}
        if len(found) > 1 or any(rl.in_place for rl in found.values()):
            # the history: every compaction's kept records relinked in file order, but those a "summarize from here"
            # kept, which stay before its summary where they were. The kept records are chained here; what hung
            # off the anchor or off a record the compaction dropped is moved as the walk reaches it (`_history_of`),
            # so that many compactions cost their kept records, not a pass over the file each
            history = dict(self.parent)
            self.history_parent = history
            for b, rl in found.items():
                if not rl.in_place:
                    rl = replace(rl, head_was=self._history_of(rl.kept[0]))
                    prev = rl.anchor_at if rl.anchor_at >= 0 else None
                    for k in rl.kept:
                        history[k] = prev
                        prev = k
                    self._moved.append(b)
                    self._kept_any.update(rl.kept)
                self.relinks[b] = rl
        last = self.last_boundary = boundaries[-1]  # (one that keeps nothing, or not what it names, relinks nothing)
        self.relink = self._relink(last, self.parent)
        if self.relink is not None and not self.relinks:
            self.relinks = {last: self.relink}
        # Where the loader drops every record before the last boundary it did not keep (LOADS_FROM_LAST_COMPACTION):
        # when the last compaction's kept records are relinked, and when it kept none but an earlier one names kept
        # records (the loader finds the last compaction that keeps some; when that is not the last one, it drops all
        # before the last: 2.1.88's xRY, 2.1.332's kRr). A file without any such compaction is loaded whole.
        if loads_from_last_compaction(recs[last].version) and (
            self.relink is not None or (not _keeps(recs[last]) and any(_keeps(recs[b]) for b in boundaries[:-1]))
        ):
            self.loaded_from = last

    def _relink_side_boundaries(self) -> None:
        """The history of a compaction made between a turn's requests that the file's chain walks past. The REPLs of
        2.1.88, 2.1.113, 2.1.150 and 2.1.219 (and their print modes' kept-nothing compactions: harness seeds of those
        releases) write the reply after such a compaction with the record before the boundary as its parent, and its
        summary and re-attachments below the boundary, off the reply's line: `[boundary, reply's first fragment,
        summary, attachments...]`. The process sent the compacted conversation (the reply's usage is the summary's
        size), so the history (`history_parent`, the logical chain the token story reads) goes from the record before
        the boundary through the boundary, the summary and what it wrote below it to the reply; the loader's walk
        (`parent`, what a resume sends) still passes the boundary by, as Claude Code's does (2.1.113 generated REPL
        seed 194003: the next compaction's stretch had taken in the replies before this one, and read a threshold
        compaction as a refusal)."""
        recs, parent, by_uuid = self.records, self.parent, self.by_uuid
        self.side_relinked: dict[int, int] = {}  # such a reply -> the boundary its history now passes
        for b in self._boundaries:
            if b in self.relinks or recs[b].is_sidechain:
                continue  # (a compaction that keeps messages relinks its own)
            up = recs[b].logical_parent
            x = by_uuid.get(up) if up is not None else None
            if x is None or x > b:
                continue
            reply = summary = None
            for j in range(b + 1, min(len(recs), b + SIDE_REACH)):
                r = recs[j]
                if r.is_compact_boundary:
                    break
                p = parent.get(j)
                if summary is None and p == b and r.is_compact_summary:
                    summary = j
                elif reply is None and p == x and r.type == "assistant" and not r.is_sidechain:
                    reply = j
                if reply is not None and summary is not None:
                    break
            if reply is None or summary is None:
                continue
            end = summary  # then what the compaction wrote below its summary, one after the other (re-attachments)
            for j in range(summary + 1, min(len(recs), b + SIDE_REACH)):
                if parent.get(j) == end and (recs[j].type in ("attachment", "system") or recs[j].is_meta):
                    end = j
            if self.history_parent is self.parent:
                self.history_parent = dict(self.parent)
            self.history_parent[reply] = end
            self.side_relinked[reply] = b

    def _relink(self, last: int, parent: dict[int, int | None], apply: bool = True) -> Relink | None:
        """Apply the kept messages of the compaction at `last` to `parent` (unless not `apply`); its Relink, or None
        when its list or segment does not hold (nothing changed)."""
        recs = self.records
        meta = recs[last].get("compact") or {}
        seg = meta.get("preservedSegment")
        pm = meta.get("preservedMessages")
        bu = self.by_uuid
        listed: list[str] = []
        anchor = None
        if isinstance(pm, dict) and isinstance(pm.get("uuids"), list) and pm["uuids"] and isinstance(pm.get("anchorUuid"), str):
            listed = [u for u in pm["uuids"] if isinstance(u, str)]
            anchor = pm["anchorUuid"]
            if len(listed) != len(pm["uuids"]) or any(u not in bu for u in listed):
                return None  # any listed uuid missing: Claude Code relinks nothing (the anchor is not checked)
        elif (
            isinstance(seg, dict)
            and all(isinstance(seg.get(k), str) for k in ("headUuid", "anchorUuid", "tailUuid"))
            and relinks_kept(recs[last].version)
        ):
            head, anchor, tail = seg["headUuid"], seg["anchorUuid"], seg["tailUuid"]
            if head not in bu or tail not in bu:
                return None
            walk: list[str] = []  # validate: walking parents from tail must reach head
            i: int | None = bu[tail]
            steps = 0
            while i is not None and steps <= len(recs):
                u = recs[i].uuid
                if u is not None:
                    walk.append(u)
                if u == head:
                    break
                i = parent.get(i)
                steps += 1
            else:
                return None
            if i is None:
                return None
            listed = list(reversed(walk))
        else:
            return None
        kept = [bu[u] for u in listed]
        # the anchor (the summary) may be missing: a file cut inside its compaction, the boundary written and the
        # summary not. Claude Code relinks all the same (2.1.88's xRY, 2.1.332's kRr check only the kept records), the
        # head then hanging off a record that is not there; a resume of such a cut continued from the kept tail, not
        # from a record after it that the loader drops (2.1.332 REPL seed 99016 cut after its boundary)
        a = bu.get(anchor)
        head_was = parent.get(kept[0])
        in_place = a == last  # chained after the boundary itself: the kept records come before the summary
        at = a if a is not None else -1
        if not apply:
            return Relink(last, listed[0], anchor, listed[-1], frozenset(listed), head_was, in_place, tuple(kept), at)
        kept_set = set(kept)
        dropped = {j for j in range(last) if j in parent and j not in kept_set}
        recs = self.records
        for j, p in list(parent.items()):
            if j in kept_set:
                continue
            if (p == a if a is not None else recs[j].parent == anchor) or (j > last and p in dropped):
                parent[j] = kept[-1]
        prev = a
        for k in kept:
            parent[k] = prev
            prev = k
        return Relink(last, listed[0], anchor, listed[-1], frozenset(listed), head_was, in_place, tuple(kept), at)

    def _history_of(self, j: int) -> int | None:
        """A record's parent in the history: as chained by the compactions that kept it, else moved as the last
        compaction before it would have (a record that hung off its anchor, or off a record it dropped, follows its
        last kept record)."""
        p = self.history_parent.get(j)
        if p is None or j in self._kept_any or not self._moved:
            return p
        k = bisect.bisect_left(self._moved, j) - 1
        if k < 0:
            return p
        rl = self.relinks[self._moved[k]]
        if p == rl.anchor_at or (p < rl.boundary and self.records[p].uuid not in rl.preserved):
            return rl.kept[-1]
        return p

    def loads(self, i: int) -> bool:
        """Whether Claude Code's loader keeps record `i`: every record where it drops none, else those from the
        boundary it loads from (`loaded_from`) and what that compaction kept."""
        b = self.loaded_from
        return b < 0 or i >= b or (self.relink is not None and self.records[i].uuid in self.relink.preserved)

    def _leaf_candidates(self) -> list[int]:
        # Once a compaction's kept messages are relinked, Claude Code drops the records before its boundary that it
        # did not keep (`loaded_from`), so none of them is a leaf: a summary of the compaction before, newer than the
        # kept tail's end, would be. Where that leaves nothing that is sent (a file cut inside a compaction, after its
        # boundary or its attachments), the resume continues from the last record loaded: resumed by 2.1.328 and
        # 2.1.332, 13 of 13 files cut right after a boundary that kept nothing, below one that kept some, continued from
        # that boundary (docs/binary-findings.md), sending none of the conversation before it.
        if self.loaded_from < 0:
            return self._candidates(lambda i: True)
        recs, loaded = self.records, self.loads
        found = self._candidates(loaded)
        if found:
            return found
        if self.relink is not None:  # kept records that lead to no message (a damaged file: a relink into a cycle)
            return self._candidates(lambda i: True)
        side = [i for i in self.parent if loaded(i) and recs[i].type != "progress"]
        main = [i for i in side if not recs[i].is_sidechain] if self.main_thread else side
        return [max(main or side)] if side else []

    def _candidates(self, loaded: Callable[[int], bool]) -> list[int]:
        """The leaf rule (§2.7, §2.6): records no other chain record names as parent, each walked up to
        its nearest user/assistant record (or 2.1.3xx attachment that was sent: its `rendered` text is part of the
        request a resume sends, format-2.1.3xx.md §3.6). `progress` records are not chain records: Claude Code keeps
        them out of its message map and bridges over them, so a Stop hook's progress hanging off the
        final reply (about half of the files 2.1.1x–2.1.4x wrote) does not make that reply a non-leaf."""
        recs = self.records
        # (a record the loader drops is no one's child: a prompt_snapshot written after the last kept result, before
        # the boundary, leaves that result the leaf: 2.1.328 seed 96004 and 2.1.332 REPL seed 99016, cut in a compaction)
        has_child: set[int] = {p for i, p in self.parent.items() if p is not None and recs[i].type != "progress" and loaded(i)}
        cands: set[int] = set()
        reaches: dict[int, bool] = {}
        trailing: dict[int, int] = {}  # a candidate -> the last childless record below it (a bookkeeping record)
        self.trailing = trailing
        for i in self.parent:
            if i in has_child or recs[i].type == "progress" or not loaded(i):
                continue
            j: int | None = i
            steps = 0
            while j is not None and not is_sent(recs[j]) and steps <= len(recs):
                j = self.parent.get(j)
                steps += 1
            if j is not None and is_sent(recs[j]):
                if recs[j].type == "attachment" and not self._below_message(j, reaches):
                    continue
                cands.add(j)
                if i != j and i > trailing.get(j, -1):
                    trailing[j] = i
        out = sorted(cands)
        if self.main_thread:
            main = [i for i in out if not recs[i].is_sidechain]
            if main:
                return main
        return out

    def _below_message(self, j: int, memo: dict[int, bool]) -> bool:
        """Whether a record's walk up reaches a user or assistant record. An attachment that is sent is a leaf only
        below one: the attachments a compaction writes after its boundary, in a file cut before its summary, hang off
        the boundary alone, and the resume continues from the kept tail when the compaction kept one (2.1.328 seed
        96004 cut after its date attachment), from the last of them when it kept none (2.1.332 seed 79307)."""
        recs = self.records
        path: list[int] = []
        k: int | None = self.parent.get(j)
        found = False
        while k is not None and len(path) <= len(recs):
            if k in memo:
                found = memo[k]
                break
            if recs[k].type in MESSAGE_TYPES:
                found = True
                break
            path.append(k)
            k = self.parent.get(k)
        for q in path:
            memo[q] = found
        return found

    def _choose_leaf(self) -> int | None:
        cands = self._leaf_candidates()
        self.leaf_candidates = cands
        if not cands:
            return None
        recs = self.records
        if leaf_by_file_order(recs[cands[-1]].version):
            leaf = cands[-1]  # the last written (candidates are in file order)
            if names_last_prompt(recs[leaf].version):
                return self._named_leaf(leaf)
            return leaf

        def key(i: int) -> tuple[float, int]:
            ts = timestamp_key(recs[i].timestamp)
            return (ts if ts is not None else float("-inf"), i)

        return max(cands, key=key)

    def _named_leaf(self, leaf: int) -> int:
        """The leaf, or the message the file's last `last-prompt` names when that message is off the leaf's line
        (LAST_PROMPT_NAMES_LEAF)."""
        recs = self.records
        named = None
        for k in range(len(recs) - 1, -1, -1):
            if recs[k].type == "last-prompt" and recs[k].uuid is None:
                meta = (recs[k].extra or {}).get("meta") or {}
                named = meta.get("leafUuid")
                break
        n = self.by_uuid.get(named) if isinstance(named, str) else None
        if n is None or n == leaf or n not in self.parent or recs[n].type == "progress":
            return leaf
        if self.main_thread and recs[n].is_sidechain:
            return leaf
        rl = self.relink
        if n < self.last_boundary and not (rl is not None and recs[n].uuid in rl.preserved):
            # before the last compaction: not loaded (2.1.332 resumed a file that ended after a /compact's summary,
            # its last-prompt naming the reply before it, from the summary: generated REPL seed 76079); this takes in
            # the records the loader drops once the last compaction's kept records are relinked
            return leaf
        # the leaf's line: its chain across compactions (a compaction's boundary continues from the record before it,
        # which the last-prompt of its turn names: 2.1.332 resumed a file cut after an automatic compaction's
        # attachments from the last of them, generated seed 79307), with the parallel calls put back (a call of the
        # reply the chain walks, or its result: 2.1.327 and 2.1.332 continued from the last-written leaf of a file
        # whose last-prompt, written while the reply streamed, named its second call: seed 93000 cut after it)
        line = self._repair(self._walk(leaf, logical=True))
        self._leaf_line = (leaf, line)  # the logical chain _build would walk again for this leaf
        if n in set(line):
            return leaf
        if not is_sent(recs[n]):
            # a record that is not sent (a prompt_snapshot a last-prompt named as a request began): the releases
            # measured continue from the last-written leaf (a file cut after the summary of a compaction that followed
            # such a request, generated seeds 86159 and 86142, is the live process's chain as written)
            return leaf
        return n

    def logical_predecessor(self, boundary: int) -> int | None:
        """The record a compact boundary continues from (§2.7).

        Its `logicalParentUuid` when that record is in the file. Often it is not (a record Claude Code
        never persisted: in one sample 8 of 14 boundaries named such a uuid), yet the conversation the
        compaction summarized is right there before the boundary. Then the file order decides: the
        nearest record before the boundary that is a chain record of the same thread (not `progress`,
        which is bridged; not a record of another thread).
        """
        r = self.records[boundary]
        lp = r.logical_parent
        if lp is None:
            return None
        j = self.by_uuid.get(lp)
        if j is not None:
            return j
        return self._before_in_file(boundary)

    def _before_in_file(self, boundary: int) -> int | None:
        """The nearest record before a boundary in the file that is a chain record of its thread."""
        recs = self.records
        side = recs[boundary].is_sidechain
        for k in range(boundary - 1, -1, -1):
            q = recs[k]
            if q.uuid is not None and q.type != "progress" and q.is_sidechain == side and k in self.parent:
                return k
        return None

    def _walk(self, start: int, *, logical: bool) -> list[int]:
        recs, seen, out = self.records, set(), []
        history = logical and self.history_parent is not self.parent
        parent = self.history_parent if logical else self.parent
        i: int | None = start
        crossed: Relink | None = None  # the last compaction crossed whose kept records were walked after its summary
        while i is not None and i not in seen:
            seen.add(i)
            out.append(i)
            nxt = self._history_of(i) if history else parent.get(i)
            if nxt is None and logical and recs[i].is_compact_boundary:
                crossed = self.relinks.get(i)
                if crossed is not None and crossed.in_place:
                    # "summarize from here": what it summarized came after the kept records, up to the boundary
                    nxt, crossed = self._before_in_file(i), None
                else:
                    nxt = self.logical_predecessor(i)
            elif nxt is None and logical and recs[i].is_unmarked_compaction:
                nxt = self._before_in_file(i)  # (up to 1.0.108: the summary, a new root, was the compaction's only record)
            if crossed is not None and nxt is not None and nxt in seen and recs[nxt].uuid in crossed.preserved:
                # the history before the compaction reaches a kept record (its logical parent, or a record written
                # after the kept ones that it summarized), already walked after the summary: it goes on from the
                # record before the first kept one
                nxt, crossed = crossed.head_was, None
            i = nxt
        out.reverse()
        return out

    def _repair(self, chain: list[int]) -> list[int]:
        """Parallel tool-call repair (§2.7): put back off-chain fragments and their results."""
        recs = self.records
        on = set(chain)
        # Only records off the chain can be put back: index those (few), not the whole tree.
        off_frags: dict[str, list[int]] = {}  # message id -> off-chain assistant fragments
        off_results: dict[int, list[int]] = {}  # parent -> off-chain user records with tool results
        children: dict[int, list[int]] = {}  # parent -> its off-chain children (what may hang below a record)
        # what may hang below a record is what the loader keeps: not what a compaction left out before its boundary
        # (2.1.328 REPL seed 77090: a prompt snapshot the last compaction's kept list skipped stays out)
        for j, p in self.parent.items():
            if j in on:
                continue
            r = recs[j]
            if p is not None and r.type != "progress" and self.loads(j):
                children.setdefault(p, []).append(j)  # (a progress record never starts a line, nor forks one)
            if r.type == "assistant":
                if r.message_id is not None:
                    off_frags.setdefault(r.message_id, []).append(j)
            elif p is not None and r.type == "user" and r.tool_results:
                off_results.setdefault(p, []).append(j)
        if not off_frags and not off_results and not children:
            return chain
        chain_frags: dict[str, list[int]] = {}
        for i in chain:
            r = recs[i]
            if r.message_id is not None and r.type == "assistant":
                chain_frags.setdefault(r.message_id, []).append(i)
        inserts: dict[int, list[int]] = {}
        pos = {i: k for k, i in enumerate(chain)}
        hanging_at = sorted(pos[i] for i in children if i in pos)  # chain positions with off-chain records below
        frag_at = sorted(pos[f] for frs in chain_frags.values() for f in frs)  # chain positions of replies' fragments
        ahead: dict[int, list[int]] = {}  # chain record -> what goes just before it
        for mid, on_frags in chain_frags.items():
            siblings = [f for f in off_frags.get(mid, ()) if f not in on]
            results = [c for f in on_frags + off_frags.get(mid, []) for c in off_results.get(f, ()) if c not in on]
            if not siblings and not results and not children:
                continue
            last_on = max(on_frags, key=pos.__getitem__)
            if not repair_in_file_order(recs[last_on].version):
                if not siblings and not results:
                    continue

                def tkey(k: int) -> tuple[float, int]:
                    ts = timestamp_key(recs[k].timestamp)
                    return (ts if ts is not None else 0.0, k)

                extra = [k for k in sorted(siblings, key=tkey) + sorted(set(results), key=tkey) if k not in on]
                on.update(extra)
                inserts[last_on] = extra
                continue
            # 2.1.261+: in the order they were written, fragments and results together (2.1.332 held a fork's copy of
            # a reply whose three parallel calls finished between its fragments so: seed 85079), with what was left
            # hanging below them (`_dangling`)
            found = set(siblings) | set(results)
            frags = on_frags + off_frags.get(mid, [])
            lp = pos[last_on]
            # the next chain record with something off the chain below it comes before the next reply
            near = _next_after(hanging_at, lp) < _next_after(frag_at, lp)
            if not found and not near and not any(f in children for f in frags):
                continue  # nothing to put back, nothing hanging below the reply or what follows it
            after = self._segment_after(chain, lp)
            if any(recs[f].tool_uses for f in frags):
                # below each fragment and each of its results, on the chain or put back (RRr's Ao); and below each
                # attachment, note or meta prompt of the chain that follows the reply, right after it (RRr's anchors)
                on_results = [c for c in after if self.parent.get(c) in frags]
                for k in [*frags, *on_results, *sorted(found)]:
                    found.update(self._dangling(k, on, found, children))
                for c in after:
                    if _hangs(recs[c]):
                        tail = self._dangling(c, on, found, children)
                        if tail:
                            on.update(tail)
                            inserts.setdefault(c, []).extend(tail)
            extra = sorted(k for k in found if k not in on)
            if extra:
                on.update(extra)
                # merged by their place in the file with the chain's records from the reply's first fragment to the
                # end of what follows it: each before the first of those written after it (RRr)
                first_on = min(on_frags, key=pos.__getitem__)
                span = chain[pos[first_on] + 1 : pos[last_on] + len(after) + 1]
                for k in extra:
                    nxt = next((c for c in span if c > k), None)
                    if nxt is None:
                        inserts.setdefault(span[-1] if span else last_on, []).append(k)
                    else:
                        ahead.setdefault(nxt, []).append(k)
        if not inserts and not ahead:
            return chain
        out: list[int] = []
        for i in chain:
            out.extend(ahead.get(i, ()))
            out.append(i)
            out.extend(inserts.get(i, ()))
        return out

    def _segment_after(self, chain: list[int], at: int) -> list[int]:
        """The chain's records right after position `at` (a reply's last fragment there) that go with the reply: its
        results, attachments, system notes and meta prompts, up to the next prompt or reply (RRr's `co`)."""
        recs = self.records
        out = []
        for k in range(at + 1, len(chain)):
            r = recs[chain[k]]
            if not (_hangs(r) or (r.type == "user" and r.tool_results)):
                break
            out.append(chain[k])
        return out

    def _dangling(self, k: int, on: set[int], found: set[int], children: dict[int, list[int]]) -> list[int]:
        """The records left hanging below record `k` that the parallel-call repair puts back with it (2.1.261+'s
        nMe): from each child not yet in the chain, a line of attachments, system notes and meta prompts, one child
        after another, to its end; none of a line that reaches another kind of record, one already taken, or a fork
        (2.1.332 REPL seed 110001: a Bash output's audience note below the result of a parallel call, written off the
        chain, was sent after the results)."""
        recs = self.records
        side = recs[k].is_sidechain
        out: list[int] = []
        if k not in children:
            return out
        for c in children[k]:
            line: list[int] = []
            y: int | None = c
            while y is not None:
                r = recs[y]
                if y in on or y in found or r.is_sidechain != side or not _hangs(r):
                    line = []
                    break
                line.append(y)
                below = [j for j in children.get(y, ()) if j not in on and j not in found]
                if len(below) > 1:
                    line = []
                    break
                y = below[0] if below else None
            out += line
        return out

    def _find_branches(self) -> list[Branch]:
        recs = self.records
        on = set(self.logical_chain)
        out = []
        for c in self.leaf_candidates:
            if c in on:
                continue
            if self.main_thread and recs[c].is_sidechain:
                continue
            n, seen = 0, set()
            j: int | None = c
            while j is not None and j not in on and j not in seen:
                seen.add(j)
                n += 1
                j = self.parent.get(j)
            out.append(Branch(tip=c, fork=j if j in on else None, length=n))
        return out

    # -- queries -----------------------------------------------------------------------------
    @property
    def leaf_uuid(self) -> str | None:
        return self.records[self.leaf].uuid if self.leaf is not None else None

    @property
    def trailing_leaf(self) -> int | None:
        """The last record hanging below the leaf that no record names as parent (a `system` bookkeeping record
        such as turn_duration or stop_hook_summary), or None when the leaf is the chain's last record. Whether
        `--resume` continues from it or from the leaf is a rule of each release (the era matrix's leaf probe)."""
        return self.trailing.get(self.leaf) if self.leaf is not None else None

    def thinking_end(self) -> list[int]:
        """The records at the end of the chain that are replies of thinking only (a reply cut off while the model
        thought), in order: [] when the chain ends otherwise."""
        chain, recs = self.chain, self.records
        k = len(chain)
        while k > 0 and recs[chain[k - 1]].flags & F_THINKING_ONLY:
            k -= 1
        return list(chain[k:])

    def cut_in_compaction(self) -> int | None:
        """The last compaction's boundary when the file ends inside that compaction (its boundary written, no summary
        after it: a process killed while it compacted), else None."""
        b, recs = self.last_boundary, self.records
        if b < 0 or any(recs[k].is_compact_summary for k in range(b + 1, len(recs))):
            return None
        return b

    def held_after_resume(self, chain: list[int], since: int, version: str | None) -> list[int]:
        """What a process that began after record `since` (a file index) held of this chain, which ends at a record of
        the walked line: the whole of it when its release repairs parallel calls on a resume, else the chain without
        the fragments and results the repair put back that an earlier process wrote (`REPAIRED_ON_RESUME_FROM`)."""
        if not chain or repairs_on_resume(version):
            return chain
        walked = set(self._walk(chain[-1], logical=False))
        held = [i for i in chain if i in walked or i > since]
        # a call of what it loaded whose result it did not is left out too (2.1.36 seed 193028: a reply of two calls
        # sent with the one whose result is on the walked line)
        recs = self.records
        answered = {t for i in held for t in recs[i].tool_results}
        return [i for i in held if i > since or not recs[i].tool_uses or any(t in answered for t, _ in recs[i].tool_uses)]

    def left_out_on_resume(self, version: str | None) -> list[int]:
        """The records at the end of the chain a resume by `version` leaves out: `thinking_end` from 2.1.7."""
        return self.thinking_end() if leaves_out_thinking_end(version) else []

    def unanswered_call(self, end: int | None = None) -> int | None:
        """The record of the last call the chain's last reply left without a result (the chain's trailing fragments and
        results, up to position `end`), or None when each has its result."""
        chain, recs = self.chain, self.records
        k = len(chain) if end is None else end
        calls: list[tuple[int, str]] = []
        answered: set[str] = set()
        while k > 0:
            r = recs[chain[k - 1]]
            if r.type == "assistant":
                calls += [(chain[k - 1], tid) for tid, _ in reversed(r.tool_uses)]
            elif r.type == "user" and r.tool_results:
                answered.update(r.tool_results)
            elif r.type != "attachment":  # (a prompt, a summary, a boundary: the reply began after it)
                break
            k -= 1
        left = [i for i, tid in calls if tid not in answered]  # (calls were collected from the end back)
        return left[0] if left else None

    def resumed_below_call(self, version: str | None) -> int | None:
        """The call a resume by `version` continues below: `unanswered_call` from 2.1.265, after the records it
        leaves out (`left_out_on_resume`)."""
        if not resumes_below_unanswered_call(version):
            return None
        return self.unanswered_call(len(self.chain) - len(self.left_out_on_resume(version)))

    def below_leaf(self) -> list[int]:
        """The records from the leaf's child down to `trailing_leaf`, in order: what a resume that continues from
        the trailing record has on its chain after the leaf ([] without one; the trailing record alone where the
        walk up from it does not reach the leaf)."""
        tail = self.trailing_leaf
        if tail is None:
            return []
        path = [tail]
        j = self.parent.get(tail)
        while j is not None and j != self.leaf and len(path) <= len(self.records):
            path.append(j)
            j = self.parent.get(j)
        return path[::-1] if j == self.leaf else [tail]

    def boundaries(self, indexes: Iterable[int] | None = None) -> list[int]:
        """Compact and microcompact boundaries, in file order (of `indexes` if given)."""
        recs = self.records
        src = sorted(indexes) if indexes is not None else range(len(recs))
        return [i for i in src if recs[i].is_compact_boundary or recs[i].is_microcompact_boundary]
