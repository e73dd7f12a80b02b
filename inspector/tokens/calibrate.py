"""Token counts where the API never counted, calibrated on the session's own usage (§3).

Every record the model saw is counted with the offline tokenizer, by category. The API's usage
at each response is then fitted as `usage ≈ overhead + ratio × counted tokens of what was sent`,
which gives the fixed overhead (system prompt, tools, CLAUDE.md: never in the transcript) and a
ratio from the offline tokenizer to Claude's. With those two numbers any list of messages can be
estimated, e.g. the context right after a compaction, before the API ever saw it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import accumulate
from operator import mul
from pathlib import Path
from typing import Any, Protocol

from inspector.tokens.context import restored_context
from inspector.tokens.estimate import CLEARED_MARKER, api_pieces, count, count_many
from inspector.tokens.series import FULL_COMPACTIONS, Series, Turn, compaction_kind
from inspector.transcript.records import F_COMPACT_SUMMARY, F_DOCUMENT, F_IMAGE, F_META, F_TEXT, F_THINKING, gc_paused
from inspector.transcript.session import Session

DEFAULT_RATIO = 1.1  # Claude's tokenizer vs cl100k on code-heavy text, when nothing can be fitted
DEFAULT_OVERHEAD = 15_000  # a typical system prompt + tools, when nothing can be fitted


@dataclass(frozen=True, slots=True)
class RecordCount:
    """Offline-tokenizer counts of one record's API view, by category."""

    by_category: dict[str, int]
    fixed: int  # images and documents (flat)

    @property
    def total(self) -> int:
        return sum(self.by_category.values()) + self.fixed


@dataclass(slots=True)
class Counts:
    """Per chain position counts, and running sums per segment that follow what the API saw."""

    per_record: dict[int, RecordCount] = field(default_factory=dict)  # by record index
    sent_before: dict[int, int] = field(default_factory=dict)  # chain pos -> counted tokens sent before it
    own: dict[int, int] = field(default_factory=dict)  # chain pos -> the record's own counted tokens
    restored: dict[int, list[Any]] = field(default_factory=dict)  # boundary pos -> files re-attached (§8.5)
    response_of: dict[int, str] = field(default_factory=dict)  # chain pos -> message id, for assistant records
    unseen_cleared: dict[int, int] = field(default_factory=dict)  # microcompact pos -> rough tokens cleared outside the file


class Chained(Protocol):
    """What the counts follow: a logical chain of record indexes (a `Series` has the one it follows)."""

    @property
    def chain(self) -> Sequence[int]: ...


@dataclass(frozen=True, slots=True)
class LogicalChain:
    """A session's logical chain alone, for counting it without its context series (the app's counting child: the
    series is a quarter of a second of a 200 MB session that only the chain of is counted). The same chain as
    `context_series(s).chain`, so the counts are kept under the same key."""

    chain: tuple[int, ...]

    @classmethod
    def of(cls, s: Session) -> LogicalChain:
        return cls(tuple(s.conversation.logical_chain))


EXACT_BUDGET = 4_000_000  # characters counted with the tokenizer per session; beyond it, a sample is
CHUNK = 2_000  # pieces counted per batch: bounds the memory of counting a large session


def _family(cat: str) -> str:
    return "tool_result" if cat.startswith("tool_result:") else cat


Progress = Callable[[str, int, int], None]  # (what, done, total)


def count_records(
    s: Session, indexes: list[int], cleared: frozenset[str] = frozenset(), progress: Progress | None = None
) -> dict[int, RecordCount]:
    """Count the API view of these records.

    Up to 4 million characters, every piece is counted with the tokenizer. A larger session (a
    200 MB transcript holds ~100 million) is counted on an even sample of its records, and every
    other record's pieces get their length times the tokens per character measured for their kind.
    The calibration against the API's own usage absorbs what little that costs in accuracy.
    """
    reps = s.transcript.replacements
    total = sum(s.records[i].content_chars for i in indexes)
    share = EXACT_BUDGET / total if total > EXACT_BUDGET else 1.0  # the share of characters counted exactly
    out: dict[int, RecordCount] = {}
    batch: list[tuple[int, str, str]] = []
    estimated: list[tuple[int, str, int]] = []
    rates: dict[str, list[int]] = {}  # family -> [characters, tokens] of what was counted
    credit = 0.0  # how far into the next sampled record (a large session only)
    step = max(1, len(indexes) // 50)
    for n, i in enumerate(indexes):
        if progress is not None and n % step == 0:
            progress("counting tokens", n, len(indexes))
        r = s.records[i]
        if r.type not in ("user", "assistant", "attachment"):
            continue
        sampled = True
        if share < 1.0:
            # a systematic sample of whole records (every 1/share-th); one left out whose pieces the index
            # already knows is not even decoded (on a 200 MB session that is 19 records in 20)
            credit += share
            sampled = credit >= 1.0
            if sampled:
                credit -= 1.0
        known = None if sampled else _pieces_from_index(r, cleared, reps)
        fx = 0
        if known is None:
            parts, fx = api_pieces(s.body(i), cleared=cleared, replacements=reps)
            if sampled:
                batch.extend((i, cat, text) for cat, text in parts.items())
            else:
                known = [(cat, len(text)) for cat, text in parts.items()]
        out[i] = RecordCount({}, fx)
        if known is not None:
            estimated.extend((i, cat, chars) for cat, chars in known)
        if len(batch) >= CHUNK:
            _flush(batch, out, rates)
    _flush(batch, out, rates)
    if estimated:
        chars = sum(c for c, _ in rates.values())
        overall = sum(t for _, t in rates.values()) / chars if chars else 0.25
        per = {f: (t / c if c else overall) for f, (c, t) in rates.items()}
        for i, cat, length in estimated:
            rc = out[i]
            rc.by_category[cat] = rc.by_category.get(cat, 0) + round(length * per.get(_family(cat), overall))
    return out


def _pieces_from_index(r: Any, cleared: frozenset[str], reps: dict[str, str]) -> list[tuple[str, int]] | None:
    """(category, characters) of a record from its index entry alone, or None when only its body can say.

    Used for the records a large session's sample leaves out: their characters are scaled by the rates
    measured on the sample, so only the category and the length are needed."""
    if r.flags & (F_IMAGE | F_DOCUMENT) or r.type == "attachment":
        return None  # fixed costs, or a JSON text whose length the index does not keep
    n = r.content_chars
    if r.type == "user":
        if r.tool_results:
            if len(r.tool_results) != 1 or r.tool_results[0] in cleared or r.tool_results[0] in reps:
                return None
            return [(f"tool_result:{r.tool_results[0]}", n)]
        if r.flags & F_META:
            return None  # attachment or text: decided by the body
        return [("summary" if r.flags & F_COMPACT_SUMMARY else "user_text", n)]
    # assistant: one kind of content only, else the body splits it
    kinds = bool(r.flags & F_TEXT) + bool(r.flags & F_THINKING) + bool(r.tool_uses)
    if kinds != 1:
        return None
    if r.tool_uses:
        return [("tool_use", n + sum(len(name) for _, name in r.tool_uses))]
    return [("thinking" if r.flags & F_THINKING else "assistant_text", n)]


def _flush(batch: list[tuple[int, str, str]], out: dict[int, RecordCount], rates: dict[str, list[int]]) -> None:
    counts = count_many([p[2] for p in batch])
    for (i, cat, text), n in zip(batch, counts):
        rc = out[i]
        rc.by_category[cat] = rc.by_category.get(cat, 0) + n
        r = rates.setdefault(_family(cat), [0, 0])
        r[0] += len(text)
        r[1] += n
    batch.clear()


def chain_counts(s: Session, series: Chained, progress: Progress | None = None) -> Counts:
    """Counted tokens along the logical chain; a microcompact clears results for what follows."""
    chain = list(series.chain)
    recs = s.records
    per = count_records(s, chain, progress=progress)
    marker = count(CLEARED_MARKER)
    c = Counts(per_record=per)
    running = 0
    seen_results: dict[str, int] = {}  # tool_use id -> its counted tokens, in this segment
    seg_start = 0
    for pos, i in enumerate(chain):
        r = recs[i]
        if r.is_compact_boundary:
            running = 0
            seen_results = {}
            if compaction_kind(s, i) in FULL_COMPACTIONS:
                # a full compaction re-attaches recently used files, the plan and open todos; they are sent from now on
                files = restored_context(s, chain[seg_start:pos], DEFAULT_RATIO, upto=pos - 1)
                c.restored[pos] = files
                running = sum(f.counted for f in files)
            seg_start = pos
        elif r.is_microcompact_boundary:
            meta = r.get("microcompact") or {}
            ids = meta.get("compactedToolIds")
            found_chars, missing = 0, 0
            for tid in ids if isinstance(ids, list) else ():
                n = seen_results.pop(tid, None) if isinstance(tid, str) else None
                if n is not None:
                    running -= max(0, n - marker)
                    res = s.tool_index.get(tid, (None, None))[1]
                    found_chars += recs[res].content_chars if res is not None else 0
                else:
                    missing += 1
            saved = meta.get("tokensSaved")
            if missing and isinstance(saved, int) and not isinstance(saved, bool) and saved > 0:
                # tokensSaved is Claude Code's rough count (characters / 4) of every result it cleared
                c.unseen_cleared[pos] = max(0, saved - found_chars // 4)
        c.sent_before[pos] = running
        if r.type == "assistant":
            c.response_of[pos] = r.message_id or f"#{i}"
        rc = per.get(i)
        own = rc.total if rc else 0
        c.own[pos] = own
        running += own
        if rc:
            for cat, n in rc.by_category.items():
                if cat.startswith("tool_result:"):
                    seen_results[cat.split(":", 1)[1]] = n
    return c


COUNTS_SCHEMA = 1  # bumped when what chain_counts computes changes: older kept counts are counted again


def kept_chain_counts(s: Session, series: Chained, progress: Progress | None = None) -> Counts:
    """`chain_counts`, kept in inspector's cache for the transcript as it was read: opening the session again (the app,
    `inspector tokens`, a what-if) does not count it again (on the bench's 200 MB session, 1.3 s of the app's load).

    Kept only for an index read whole from the file's start; the key is the file (its inode, size and time as read),
    the bytes read and the chain counted, so a session that grew, a file replaced or another chain counts anew. A
    cache that cannot be read or written is no cache."""
    key = _counts_key(s, series)
    if key is None:
        return chain_counts(s, series, progress)
    from inspector.statefiles import read_state, state_file, write_state

    where = state_file("counts", key["path"])
    with gc_paused():  # 45,000 rows for the bench's 200 MB session: collections over the app's heap took 0.2 s of 0.27
        got = read_state(where)
        if got is not None and got.get("key") == key:
            try:
                return _counts_from(got)
            except (KeyError, TypeError, ValueError):
                pass  # damaged: counted again and written over
    c = chain_counts(s, series, progress)
    if write_state(where, {"key": key, **_counts_as(c)}):
        _keep_newest(where.parent, KEPT_COUNTS)
    return c


KEPT_COUNTS = 256  # sessions whose counts are kept; the least recently counted go first


def counts_kept(path: Any) -> bool:
    """Whether the cache holds counts of this transcript as it is on disk now (its inode, size and time, read whole):
    known from the kept key alone, the first bytes of the file (it is written first), without decoding the counts. The
    chain counted is the file's (the settings do not change it), so the same file has the same chain. False when
    unsure: the counts are then made again (what `kept_chain_counts` does without this answer)."""
    import json
    import os

    from inspector.statefiles import state_file

    try:
        resolved = str(Path(path).resolve())
        st = os.stat(resolved)
        with open(state_file("counts", resolved), "rb") as f:
            head = f.read(4096).decode("utf-8", "replace")
        if not head.startswith('{"key":{'):
            return False
        key, _ = json.JSONDecoder().raw_decode(head, len('{"key":'))
    except (OSError, ValueError, RuntimeError):
        return False
    want = _file_key(resolved, st.st_ino, st.st_size, st.st_mtime_ns, st.st_size)
    return isinstance(key, dict) and {k: key.get(k) for k in want} == want


def _file_key(path: str, inode: int, size: int, mtime_ns: int, read: int) -> dict[str, Any]:
    """The part of the counts' key that names the file as it was read (`_counts_key` adds the records and the chain)."""
    from inspector import __version__

    return {
        "schema": COUNTS_SCHEMA,
        "inspector": __version__,
        "path": path,
        "inode": inode,
        "size": size,
        "mtime_ns": mtime_ns,
        "read": read,
    }


def _keep_newest(folder: Any, n: int) -> None:
    """Delete all but the `n` newest kept counts: the cache stays small and a deleted session's counts (the names of
    its files) do not stay for good."""
    import os

    try:
        with os.scandir(folder) as it:
            kept = [(e.stat().st_mtime_ns, e.path) for e in it if e.name.endswith(".json") and e.is_file(follow_symlinks=False)]
    except OSError:
        return
    for _, path in sorted(kept, reverse=True)[n:]:
        try:
            os.unlink(path)
        except OSError:
            pass


def _counts_key(s: Session, series: Chained) -> dict[str, Any] | None:
    import hashlib
    from array import array

    t = s.transcript
    if t.only is not None or not t.records or t.records[0].line != 1 or t.records[0].offset != 0 or t._ino is None:
        return None  # a partial index, or one that began inside the file
    try:
        path = str(t.path.resolve())
        chain = array("q", series.chain).tobytes()
    except (OSError, RuntimeError, OverflowError):
        return None
    return {
        **_file_key(path, t._ino, t.size, t.mtime_ns, t.scanned_to),
        "records": len(t.records),
        "chain": hashlib.blake2b(chain, digest_size=16).hexdigest(),
    }


def _counts_as(c: Counts) -> dict[str, Any]:
    return {
        "per_record": [[i, rc.by_category, rc.fixed] for i, rc in c.per_record.items()],
        "sent_before": list(c.sent_before.items()),
        "own": list(c.own.items()),
        "restored": [[pos, [[f.path, f.tokens, f.kind, f.counted, f.partial] for f in fs]] for pos, fs in c.restored.items()],
        "response_of": list(c.response_of.items()),
        "unseen_cleared": list(c.unseen_cleared.items()),
    }


def _per_record_from(rows: list[Any]) -> dict[int, RecordCount]:
    """The kept per-record counts, as written (`_counts_as`): 45,000 rows for the bench's 200 MB session, so each is
    taken as decoded, its types checked, not converted (0.18 s of the app's report, converting)."""
    out = {}
    for i, cats, fixed in rows:
        if i.__class__ is not int or cats.__class__ is not dict or fixed.__class__ is not int:
            raise ValueError(f"damaged kept counts: {i!r}")
        out[i] = RecordCount(cats, fixed)
    return out


def _counts_from(d: dict[str, Any]) -> Counts:
    from inspector.tokens.context import RestoredFile

    rest = d["restored"]
    return Counts(
        per_record=_per_record_from(d["per_record"]),
        sent_before={int(k): int(v) for k, v in d["sent_before"]},
        own={int(k): int(v) for k, v in d["own"]},
        restored={int(pos): [RestoredFile(str(a), int(b), str(k), int(n), bool(p)) for a, b, k, n, p in fs] for pos, fs in rest},
        response_of={int(k): str(v) for k, v in d["response_of"]},
        unseen_cleared={int(k): int(v) for k, v in d["unseen_cleared"]},
    )


@dataclass(frozen=True, slots=True)
class Calibration:
    overhead: float
    ratio: float
    error_pct: float  # mean absolute error of the fit on the session's own responses, in %
    points: int
    method: str  # "fit", "one point", "default"
    anchor: int = 0  # the response (in order, 0: the session's first) where the fixed overhead was read
    anchor_model: str | None = None  # its model, when it was not the session's first response's

    def predict(self, counted: int) -> int:
        return round(self.overhead + self.ratio * counted)

    def as_dict(self) -> dict[str, Any]:
        return {
            "overhead_tokens": round(self.overhead),
            "ratio": round(self.ratio, 4),
            "error_pct": round(self.error_pct, 2),
            "points": self.points,
            "method": self.method,
        }


def turn_counted(c: Counts, series: Series, t: Turn) -> int:
    """Counted tokens of what one response's context held: what was sent before its first fragment,
    plus the response itself (its fragments only: tool results streamed between the fragments of a
    response with parallel tool calls were sent with the next request, not this one)."""
    chain = series.chain
    pos = t.pos
    mid = c.response_of.get(pos)
    own = 0
    k = pos
    while k < len(chain):
        if c.response_of.get(k) == mid:
            own += c.own.get(k, 0)
        if chain[k] == t.index:
            break
        k += 1
    return c.sent_before[pos] + own


class Calibrator:
    """The fit of `usage ≈ overhead + ratio × counted` on any prefix of a session's responses.

    Prefix sums make each fit O(1) (plus its error, only when asked), so explaining hundreds of
    compactions, each predicted from what preceded it, costs one pass over the responses.
    """

    def __init__(
        self, points: list[tuple[int, int]], positions: list[int] | None = None, models: list[str | None] | None = None
    ) -> None:
        kept = [(k, x, y) for k, (x, y) in enumerate(points) if y > 0]
        self.pts = [(x, y) for _, x, y in kept]
        self.positions = [positions[k] for k, _, _ in kept] if positions is not None else list(range(len(kept)))
        self.models = [models[k] for k, _, _ in kept] if models is not None else [None] * len(kept)
        # prefix sums (the same additions in the same order as a loop: the same floats) and running extremes
        xs = [x for x, _ in self.pts]
        ys = [y for _, y in self.pts]
        self.sx = list(accumulate(xs, initial=0.0))
        self.sy = list(accumulate(ys, initial=0.0))
        self.sxx = list(accumulate((x * x for x in xs), initial=0.0))
        self.sxy = list(accumulate(map(mul, xs, ys), initial=0.0))
        self.lo = [0, *accumulate(xs, min)]
        self.hi = [0, *accumulate(xs, max)]

    def first(self, n: int, *, with_error: bool = True) -> Calibration:
        """The fit on the first `n` responses (with usage)."""
        pts = self.pts
        if n <= 0:
            return Calibration(DEFAULT_OVERHEAD, DEFAULT_RATIO, 0.0, 0, "default")
        x0, y0 = pts[0]
        if n < 3 or self.hi[n] - self.lo[n] < 1000:
            ratio = DEFAULT_RATIO
            overhead = max(0.0, y0 - ratio * x0)  # a system prompt and tools cannot weigh less than nothing
            method = "one point" if n == 1 else "default ratio"
        else:
            sx, sy, sxx, sxy = self.sx[n], self.sy[n], self.sxx[n], self.sxy[n]
            var = sxx - sx * sx / n
            slope = (sxy - sx * sy / n) / var if var else DEFAULT_RATIO
            if not 0.5 <= slope <= 2.5:
                slope = DEFAULT_RATIO
            # the first response carries little but the fixed overhead: read it there
            overhead = max(0.0, y0 - slope * x0)
            ratio = (sxy - overhead * sx) / sxx if sxx else slope
            if not 0.5 <= ratio <= 2.5:
                ratio = slope
            method = "fit"
        err = sum(abs(overhead + ratio * x - y) / y for x, y in pts[:n]) / n * 100 if with_error else float("nan")
        return Calibration(overhead, ratio, err, n, method)

    def before(self, pos: int, *, with_error: bool = False, model: str | None = None) -> Calibration:
        """The fit on the responses before chain position `pos`. With `model` (the one in use there), a session
        that began on another model reads its fixed overhead at the first response of this one instead: the system
        prompt and tools sent are that model's (the ratio stays the fit of every response before `pos`)."""
        import bisect

        n = bisect.bisect_left(self.positions, pos)
        cal = self.first(n, with_error=with_error)
        if model is None or n == 0 or self.models[0] in (None, model):
            return cal
        k = next((i for i in range(n) if self.models[i] == model), None)
        if k is None:
            return cal
        x, y = self.pts[k]
        return replace(cal, overhead=max(0.0, y - cal.ratio * x), anchor=k, anchor_model=model)


def fit(points: list[tuple[int, int]]) -> Calibration:
    """usage ≈ overhead + ratio × counted, with the overhead anchored on the first responses.

    The first response of a session carries almost nothing but the fixed overhead (system prompt,
    tools, CLAUDE.md, start-up hook output), so the overhead is read there; the ratio is then
    the least-squares slope through that anchor. This is what is re-sent after a compaction, so
    it predicts post-compaction sizes better than a free intercept. Too little data: defaults.
    """
    c = Calibrator(points)
    return c.first(len(c.pts))


def calibrator(s: Session, series: Series, counts: Counts | None = None) -> Calibrator:
    c = counts or chain_counts(s, series)
    return Calibrator(
        [(turn_counted(c, series, t), t.tokens) for t in series.turns],
        [t.pos for t in series.turns],
        [_model_key(s.records[t.index].model) for t in series.turns],
    )


@lru_cache(maxsize=512)
def _model_key(model: str | None) -> str | None:
    """A model as the overhead depends on it: the API id without its date or provider decoration."""
    from inspector.claude.versions import catalog_key
    from inspector.transcript.records import SYNTHETIC_MODEL

    if not model or model == SYNTHETIC_MODEL:  # Claude Code's own error replies
        return None
    return catalog_key(model) or model


def calibrate(s: Session, series: Series, counts: Counts | None = None, *, before_pos: int | None = None) -> Calibration:
    """Fit on the responses of the chain (only those before chain position `before_pos`, if given)."""
    cal = calibrator(s, series, counts)
    return cal.first(len(cal.pts)) if before_pos is None else cal.before(before_pos, with_error=True)
