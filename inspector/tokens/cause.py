"""Why an automatic compaction fired: its threshold, the API's refusal of a request as too long, or neither that the
transcript can show (§4, §9). `compaction_cause` names the cause and its evidence: the request Claude Code recorded
(2.1.3xx), the replies around the boundary against the thresholds of the release that wrote it (`boundary_thresholds`),
what the compaction kept, and the era matrix's answer to how that release reacts to a refusal. `explain` words the
rest of a compaction's story around it.
"""

from __future__ import annotations

import bisect
from typing import Any

from inspector.textutil import fmt
from inspector.tokens.context import same_process
from inspector.tokens.explanation import Explanation
from inspector.tokens.series import Series, Turn, for_model, limit_for, segment_start, session_facts
from inspector.tokens.thresholds import Settings, Thresholds, thresholds
from inspector.transcript.records import F_API_ERROR, F_STRING_CONTENT, F_SYNTHETIC, F_TEXT, F_TOO_LONG
from inspector.transcript.session import Session, model_in_force, same_model


def kept_uuids(s: Session, index: int, meta: dict[str, Any]) -> list[str]:
    """The records a compaction kept verbatim: its `preservedMessages` (2.1.3xx), or the preserved segment's
    records as the loader relinked them, in order."""
    pm = meta.get("preservedMessages")
    if isinstance(pm, dict) and isinstance(pm.get("uuids"), list):
        return [u for u in pm["uuids"] if isinstance(u, str)]
    rl = s.conversation.relinks.get(index)
    if rl is not None:
        return [s.records[i].uuid for i in s.conversation.logical_chain if s.records[i].uuid in rl.preserved]  # type: ignore[misc]
    return []


def keeps_a_tail(th: Thresholds) -> bool:
    """Whether the session's release compacts keeping a tail (2.1.3xx), where keeping none has a cause to name."""
    return th.era == "2.1.328"


REFUTE_MARGIN = 12_000  # an auto compaction further above its threshold than this needs another explanation


def refuted_by(series: Series, e: Explanation, threshold: int, s: Session | None = None) -> list[Turn]:
    """The responses that refute a threshold as the cause of an auto compaction: those of its segment, before the
    last one, whose context was already at or above the threshold (Claude Code checks before every request, so the
    request after such a response would have compacted). Only asked when the compaction is more than
    REFUTE_MARGIN above the threshold: a compaction just above it, or after one reply that jumped past it, is the
    threshold's own."""
    if e.kind != "auto" or e.pos is None or e.pre_tokens is None or e.pre_tokens <= threshold + REFUTE_MARGIN:
        return []
    return [t for t in _above_before(series, e, threshold, s) if not (s is not None and _nothing_to_summarize(s, series, t))]


def _reply_before(series: Series, e: Explanation) -> int:
    """How many of the series' responses come before a compaction (the last of them is `series.turns[k - 1]`)."""
    return bisect.bisect_left(turn_positions(series), e.pos) if e.pos is not None else 0


def _above_before(series: Series, e: Explanation, threshold: int, s: Session | None) -> list[Turn]:
    """The responses at or above `threshold` in the stretch before an auto compaction, but its last one, in order."""
    k = _reply_before(series, e) if e.kind == "auto" else 0
    if k == 0:
        return []
    seg = series.turns[k - 1].segment
    # a response another process answered refutes nothing: its failures (a summarizer that failed, the breaker
    # after three) are not recorded, and a new process starts with none; nor one of another model than the compaction
    # was made for (its threshold was that model's: a process resumed with another --model, 2.1.238 seed 159003)
    made_for = made_for_model(s, e.index) if s is not None else None
    out = []
    for t in reversed(series.turns[: k - 1]):
        if t.segment != seg or (s is not None and not same_process(s, t.index, e.index)):
            break
        if made_for is not None and s is not None and not same_model(s.records[t.index].model, made_for):
            break
        if t.tokens >= threshold:
            out.append(t)
    return out[::-1]


def _above_after(s: Session, series: Series, e: Explanation, level: int, made_for: str | None) -> tuple[Turn, bool] | None:
    """The first reply after an automatic compaction whose context was at or above `level` and after which its process
    sent the next request without compacting: no threshold at or below `level` was in force in that process (Claude
    Code checks before every request, and a compaction that succeeded resets its breaker). In its stretch (a reply of
    another model there too: a threshold that low is set by the settings, not by a model's window; 2.1.285 seed 7010
    refused claude-opus-5[1m] at 51,169, and claude-haiku-4-5, resumed in that stretch, went to 87,000), or in a later
    one on the model it was made for (`made_for`, from `made_for_model`; 2.1.250 seed 183014 refused at 50,055 and at
    50,060, and a later process's reply at 62,000 went out uncompacted after the second; 2.1.273 and 2.1.285 seed 1126,
    which announce their models, the same); with it, whether that process is the one that compacted (a later one, resumed,
    may have run with other settings). None when no reply says so (a compaction that had nothing to summarize fails
    in silence)."""
    if e.kind != "auto" or e.pos is None:
        return None
    seg = bisect.bisect_right(series.boundaries, e.pos)  # the stretch that starts at this boundary
    k = bisect.bisect_left(turn_positions(series), e.pos)
    turns = series.turns
    for t, nxt in zip(turns[k:], turns[k + 1 :]):
        later = t.segment != seg  # past the stretch: only where the model it was made for is known
        if later and made_for is None:
            return None
        if t.segment != nxt.segment:
            continue  # a compaction came before the next request
        if later and not same_model(s.records[t.index].model, made_for):
            continue
        if t.tokens >= level and same_process(s, t.index, nxt.index) and not _nothing_to_summarize(s, series, t):
            return t, same_process(s, e.index, nxt.index)
    return None


def nothing_to_summarize_note(s: Session, series: Series, e: Explanation) -> str:
    """A sentence on the replies above the threshold before a threshold compaction that could not compact (nothing
    to summarize yet), or ""."""
    if e.threshold is None:
        return ""
    bailed = [t for t in _above_before(series, e, e.threshold, s) if _nothing_to_summarize(s, series, t)]
    if not bailed:
        return ""
    t = bailed[0]
    return (
        f" The reply at line {s.records[t.index].line} ({fmt(t.tokens)} tokens) was already above the threshold: the "
        "compaction Claude Code tried before the next request had nothing to summarize (the only reply since the "
        "start or the last compaction was in the last round, which a compaction keeps), so it failed without a trace "
        "and the request went out."
    )


def _nothing_to_summarize(s: Session, series: Series, t: Turn) -> bool:
    """Whether a compaction tried right after response `t` had no reply to summarize: no assistant message since the
    last boundary before `t`'s own, so everything before the last API round (the tail a 2.1.3xx compaction keeps) is
    the user's. Claude Code's engine then bails ("no assistant messages in summarize set") and its threshold
    compaction fails without a trace: the request after `t` goes out uncompacted (fresh 2.1.332 seed 76030, an unknown
    model sized by CLAUDE_CODE_MAX_CONTEXT_TOKENS whose first reply was already above the threshold). Only for the
    releases that keep a tail (before them a compaction summarizes everything)."""
    if not keeps_a_tail(series.thresholds):
        return False
    start = segment_start(series.boundaries, t.pos)  # (its boundary, a system record, or the chain's start)
    recs = s.records
    return not any(recs[i].type == "assistant" and not recs[i].is_sidechain for i in series.chain[start : t.pos])


SILENT_FAILURES = ("2.0", "2.1.21", "2.1.75", "2.1.159", "2.1.328")


def fails_silently(th: Thresholds) -> bool:
    """Whether the release leaves no record of a compaction that fails that tells it from one that succeeded: 2.1.159
    on write nothing; so do 2.0.76, 2.1.20, 2.1.41, 2.1.74, 2.1.119 and 2.1.152, measured with every summarize request
    of a stretch refused (2.0.76 seed 143101: four refused, the replies went on above the threshold, the next try
    compacted); 2.1.88 keeps each call's own transcript, but one that failed is not told from the call that then
    succeeded. Not measured for 1.0; 2.1.153-2.1.158 compacted where the rules say in that run."""
    return th.era in SILENT_FAILURES


def refuted_cause(
    s: Session, e: Explanation, th: Thresholds, over: list[Turn], answered: Any = None, recorded: bool = False
) -> tuple[str, str]:
    """What a refuted threshold leaves: the API's refusal where the compaction kept a refusal's tail (more rounds than a
    threshold compaction keeps, in a release that records no request: not `recorded`; 2.1.250 seed 1079 kept 14 rounds
    at 306,102, on claude-opus-5[1m], which no transcript of that release records as such) or came at the window's edge
    and the release compacts on a refusal, a window larger than assumed where it came past the window, another threshold
    otherwise. `answered` is the request recorded before the compaction when it got its reply: a refusal leaves
    the refused request unanswered, so an answered one rules the refusal out (the compaction came at the check
    before the next request: 2.1.328 routing a threshold compaction through its reactive engine, which failed
    silently until then)."""

    peak = max(t.tokens for t in over)
    passed = (
        f"{len(over)} earlier response(s) of this stretch were already at or above the threshold of {fmt(e.threshold)} "
        f"(up to {fmt(peak)}) and Claude Code sent the next request each time"
    )
    failed = [a for a in s.subagents if a.kind == "compaction" and a.boundary is None]
    if failed:
        return "threshold", (
            f"{passed}; {len(failed)} earlier compaction call(s) left no boundary: it was tried and failed, "
            "then this one succeeded"
        )
    said = _failed_compaction_reply(s, over[0].index, e.index)
    if said is not None:  # before the window's size is guessed at: the error says the rules' limits were in force
        return "threshold", (
            f'{passed}; Claude Code\'s error reply at line {s.records[said].line} ("{COMPACTION_FAILED}") says it '
            "tried to compact and failed: its threshold was in force, and this compaction was the next that succeeded"
        )
    prompt = _prompted_after_error(s, over[-1].index, e.index, F_TOO_LONG, True) if not recorded else None
    if prompt is not None and (e.threshold is None or (e.pre_tokens or 0) >= e.threshold):
        # a release that records no request: the turn ended in a "Prompt is too long" error (the API's refusal, or
        # Claude Code's own block, once its tries to compact had failed), and the compaction came at the first check of
        # the next prompt (2.1.219 seed 189036: a summarizer failing at 146,000 and 180,000, the run blocked; resumed,
        # it compacted at once, keeping the tail of the reactive engine it routes a threshold compaction through)
        return "threshold", (
            f'{passed}; the turn then ended in Claude Code\'s "Prompt is too long" error (line '
            f"{s.records[_too_long_error(s, over[-1].index, prompt)].line}): its tries to compact had failed; the next "
            f"prompt (line {s.records[prompt].line}) came, and Claude Code compacted before sending it"
        )
    seen = passed + ", so that threshold was not in force here"
    pre = e.pre_tokens or 0
    window = th.model_window
    reacts, label = _reacts(s, th)
    measured_on = label or "this release"
    tail = _tail_of_a_refusal(s, e, _refusal_words(reacts, label)) if not recorded else None
    if tail is not None:  # (before a window larger than assumed, or failed tries: neither keeps more than a round)
        return "prompt_too_long", f"{seen}; {tail}"
    # (a window larger than assumed explains nothing where an auto-compact window below the model's set the threshold)
    # (nor where Claude Code was shown to count this window while the API served more: th.served_past)
    if pre > window and th.context_window >= window and not th.served_past:
        return "other_window", (
            f"{seen}; the compaction came at {fmt(pre)}, above the {fmt(window)} window assumed "
            f"({th.window_source}): the window was larger (a model or setting these rules do not size)"
        )
    if pre >= window - 20_000 and reacts is not False and answered is None and not th.served_past:
        how = _refusal_words(reacts, label)
        edge = f"{fmt(window - pre)} below" if pre <= window else f"{fmt(pre - window)} above"
        return "prompt_too_long", (
            f"{seen}; the compaction came at {fmt(pre)}, {edge} the {fmt(window)} window: the API refusing a request "
            f"as too long fits ({how})"
        )
    if fails_silently(th):
        last = (
            f"; the last request before it ({answered.id}) was answered, so no refusal caused it" if answered is not None else ""
        )
        return "threshold", (
            f"{passed}{last}: Claude Code tries to compact before each request above its threshold, and these releases "
            "write no record of an attempt that fails (its summarize requests refused as too long, or an error): "
            "those attempts failed and this one succeeded (or a higher threshold was in force for a while: "
            "auto-compact off then on, or a window setting the transcript does not record)"
        )
    extra = "; a refusal does not explain it either: the API refuses only at the window" + (
        f", and {measured_on}'s binary ends the turn on a refusal without compacting" if reacts is False else ""
    )
    return "other_threshold", (
        f"{seen}; a higher threshold was in force: auto-compact off for a while (DISABLE_AUTO_COMPACT or "
        f"/config) then on, or a window setting the transcript does not record" + extra
    )


def _threshold_after_refusal(e: Explanation, came: str) -> tuple[str, str] | None:
    """A compaction at the check before a request, after a refusal that ended its run or turn (`came` says which):
    the threshold's, when these rules give none (one was in force all the same: the sentence says which settings)
    or the compaction was at or above theirs; None otherwise."""
    if e.threshold is None:
        return "threshold", came
    if e.pre_tokens is not None and e.pre_tokens >= e.threshold:
        return "threshold", f"{came}: preTokens {fmt(e.pre_tokens)} ≥ the threshold {fmt(e.threshold)}"
    return None


COMPACTION_FAILED = "Prompt is too long · automatic compaction failed"  # the API error reply of a failed compaction


def _failed_compaction_reply(s: Session, start: int, end: int) -> int | None:
    """The first error reply between records `start` and `end` that says an automatic compaction failed (written when
    a compaction Claude Code tried at its blocking limit, or on a refusal, failed: the summarizer's error follows the
    words); None when there is none."""
    for i in range(start + 1, end):
        r = s.records[i]
        if r.type == "assistant" and r.flags & F_API_ERROR and not r.is_sidechain:
            if s.record_text(i).startswith(COMPACTION_FAILED):
                return i
    return None


def _prompted_after_error(s: Session, start: int, end: int, error: int = F_API_ERROR, last: bool = False) -> int | None:
    """The user's next prompt between records `start` and `end` once a turn ended in an API error reply (a refused
    request whose compaction failed: 2.1.3xx writes "Prompt is too long · automatic compaction failed"); None when
    there is none. The compaction that answers a refusal comes before any new prompt. `error`: the flag the error reply
    carries; `last`: only a prompt no reply follows before `end` (the compaction came at its first request's check)."""
    errored = False
    prompt = None
    for i in range(start + 1, end):
        r = s.records[i]
        if r.is_sidechain:
            continue
        if r.type == "assistant" and r.flags & error:
            errored = True
        elif prompt is not None and r.type == "assistant" and not r.flags & (F_API_ERROR | F_SYNTHETIC):
            return None  # a reply came after the prompt: its check passed
        elif (
            errored
            and r.type == "user"
            and not r.is_meta
            and not r.tool_results
            and not r.is_compact_summary
            and r.flags & (F_TEXT | F_STRING_CONTENT)
        ):
            if not last:
                return i
            prompt = prompt if prompt is not None else i
    return prompt


def _too_long_error(s: Session, start: int, end: int) -> int:
    """The last "Prompt is too long" error reply of the main thread between records `start` and `end`."""
    return next(i for i in range(end - 1, start, -1) if s.records[i].flags & F_TOO_LONG and not s.records[i].is_sidechain)


REQUEST_EVIDENCE = "the last request before it"  # how the evidence of a recorded request begins


def compaction_cause(
    s: Session,
    e: Explanation,
    th: Thresholds,
    requests: Any,
    series: Series | None = None,
    settings: Settings | None = None,
) -> tuple[str, str]:
    """Why a compaction happened, with the evidence: the kind of boundary, and for an automatic one the request
    recorded before it (2.1.3xx: a request with no reply was refused as too long) or, without recorded requests,
    what the release's rules allow (a threshold not enforced compacts only on a refusal)."""
    if e.kind == "microcompact":
        return "microcompact", "a microcompact_boundary record"
    if e.kind == "session-memory":
        return (
            "session_memory",
            'the summary is the session\'s notes and keeps recent messages ("Recent messages are preserved verbatim.")',
        )
    if e.kind == "partial":
        return "partial", "messagesSummarized on the boundary, or summarizeMetadata on the summary"
    if e.kind == "manual":
        return "manual", 'trigger "manual" (/compact)'
    # (a threshold is given only where it is enforced and auto-compact is on)
    over = refuted_by(series, e, e.threshold, s) if series is not None and e.threshold is not None else []
    answered = None
    refused = False  # the last request recorded before it went unanswered (the API refused it)
    if requests:
        from inspector.claude.requests import request_before

        q = request_before(s, requests, e.index)
        refused = q is not None and not q.answered
        if q is not None and not q.answered and not same_process(s, q.index, e.index):
            # the refusal ended its run (the attempts to compact then failed, leaving no trace): a new process
            # compacted as it started, at its own threshold
            at = _threshold_after_refusal(
                e,
                f"the last request before it ({q.id}) was refused as too long and ended that run without a "
                "compaction; the next run compacted as it started",
            )
            if at is not None:
                return at
        elif q is not None and not q.answered and (prompt := _prompted_after_error(s, q.index, e.index)) is not None:
            # the refusal ended its turn in an error (its compaction failed); the user's next prompt came, and the
            # check before that prompt's request compacted
            at = _threshold_after_refusal(
                e,
                f"the last request before it ({q.id}) was refused as too long and its turn ended in an error; the next "
                f"prompt (line {s.records[prompt].line}) came, and Claude Code compacted before sending it",
            )
            if at is not None:
                return at
        elif q is not None and not q.answered:
            return "prompt_too_long", (
                f"{REQUEST_EVIDENCE} ({q.id}, {q.timestamp or 'no time'}) was recorded and got no reply: the API refused it"
            )
        if q is not None and q.answered and not over:
            return "threshold", f"the last request before it ({q.id}) was answered: Claude Code compacted before sending the next"
        if q is not None and q.answered and same_process(s, q.index, e.index):
            answered = q
    if over:
        e.refuted = len(over)
        return refuted_cause(s, e, th, over, answered, recorded=bool(requests))
    if (
        th.auto_compact_enabled
        and not th.enforced
        and not refused
        and e.pre_tokens is not None
        and e.pre_tokens >= th.blocking
        and (larger := _larger_window(s, e, th, series, settings)) is not None
    ):
        # from 2.1.295, a request at the blocking limit of its model, whose last reply was requested on a model with a
        # larger window, is compacted first, on that model, whatever the window's source (2.1.328's "routing through
        # reactive (thresholdSource=auto)", `compact_larger_model`): a session resumed or forked onto a smaller window
        # above its limit (2.1.328 seed 113016, 2.1.322 seed 188007; the era matrix's blocking-another-window probe)
        model, window = larger
        e.larger_model = model
        return "threshold", (
            f"preTokens {fmt(e.pre_tokens)} ≥ the blocking limit {fmt(th.blocking)} of {th.model or 'the model'}, and the "
            f"last reply before it was requested on {model}, a larger window ({fmt(window)}): Claude Code "
            f"{_writer(s, e)} compacts there before sending, with that model, whatever the window's source"
        )
    if th.auto_compact_enabled and not th.enforced:
        assumed = _assumed_model(s, e, series)
        level = th.unenforced_threshold
        if assumed is not None and level and e.pre_tokens is not None and e.pre_tokens >= level:
            # the model that says no threshold is enforced is an earlier process's: the one that compacted wrote no reply
            # to name its own, and a process resumed with a model whose threshold is enforced compacts there at once
            # (2.1.174 seed 1168, 2.1.219 seed 3036: resumed with --model claude-sonnet-4-6, each compacted at its
            # threshold before its first request, which the API then refused)
            e.model_unrecorded = assumed
            return "unknown", (
                f"the process that compacted recorded no reply, so its model is not known: by {assumed}, the model of "
                f"the last reply (an earlier process's), no threshold is enforced and only a refusal compacts; a process "
                f"resumed with a model whose threshold these rules enforce ({fmt(level)}, which preTokens "
                f"{fmt(e.pre_tokens)} reached) compacts at once ({UNRECORDED})"
            )
        return "prompt_too_long", (
            "no threshold is enforced for this model by these rules, so only the API's refusal "
            "compacts (no request is recorded to show it)"
        )
    if e.threshold is not None and e.pre_tokens is not None and e.pre_tokens >= e.threshold:
        return "threshold", f"preTokens {fmt(e.pre_tokens)} ≥ the threshold {fmt(e.threshold)}"
    refusal = _refusal_below(s, e, th, series) if series is not None and not refused else None
    if refusal is not None:
        return "prompt_too_long", refusal
    e.may_be_refusal = not requests and th.auto_compact_enabled and _reacts(s, th)[0] is not False
    return "unknown", 'trigger "auto" below the threshold these rules give'


def _assumed_model(s: Session, e: Explanation, series: Series | None) -> str | None:
    """The model an automatic compaction is judged by when the process that made it names none, or None when it is
    known: in a session that does not announce its models, no reply of the compacting process follows the boundary
    (`made_for_model`), and the last reply before it was written by an earlier process (a process exit between them),
    whose model is then the one assumed (a resumed process runs the model it is started with, not the session's)."""
    if series is None or s.announces_models or made_for_model(s, e.index) is not None:
        return None
    k = _reply_before(series, e)
    if k == 0:
        return None
    last = series.turns[k - 1].index
    if same_process(s, last - 1, e.index):  # (no process ended at that reply or after it, before the boundary)
        return None
    return s.records[last].model


def _writer(s: Session, e: Explanation) -> str:
    """The release that wrote a compaction's boundary (the session's, when the boundary names none)."""
    return s.records[e.index].version or s.version or "?"


def _larger_window(
    s: Session, e: Explanation, th: Thresholds, series: Series | None, settings: Settings | None
) -> tuple[str, int] | None:
    """The model the last reply before an automatic compaction was requested on (its record's `requestedModel`, written
    from 2.1.295), with its window, when the release that compacted knew that model and its window is larger than the
    compaction's model's: from 2.1.295 a request whose count is at its model's blocking limit is then compacted first,
    on the larger model (the era matrix's blocking-another-window bisection: 2.1.294 sent such a request; on 2.1.328 a
    switch between two windows of one size did not compact so, nor did a session grown on one model past its limit)."""
    from inspector.claude.measured import answer_at
    from inspector.claude.models import catalog, unknown_to
    from inspector.claude.release import parse_version

    version = s.records[e.index].version or s.version
    if series is None or settings is None or answer_at("blocking-another-window", version) is not True:
        return None
    k = _reply_before(series, e)
    if k == 0:
        return None
    asked = s.body(series.turns[k - 1].index).get("requestedModel")
    if not isinstance(asked, str) or not asked or asked == th.model:
        return None
    if catalog(asked) is None or unknown_to(asked, parse_version(version)) is not None:
        return None  # a model the release did not recognise: its window is not compared
    other = thresholds(for_model(settings, asked, s.announces_models), version=version)
    return (asked, other.model_window) if other.model_window > th.model_window else None


def _reacts(s: Session, th: Thresholds) -> tuple[bool | None, str]:
    """Whether the session's release compacts when the API refuses a request as too long, as the era matrix measured
    it on the nearest release it ran (None when not measured), and that release."""
    from inspector.claude.measured import lookup

    lk = lookup(s.version, th.model)
    return (lk.cell.reactive_compacts, lk.cell.label) if lk.cell is not None else (None, "")


def _refusal_words(reacts: bool | None, label: str) -> str:
    """What the era matrix measured of a release's answer to a refusal (`_reacts`), in words."""
    if reacts is None:
        return "whether this release compacts on a refusal is not measured"
    if reacts:
        return f"{label}'s binary compacts when the API refuses a request as too long"
    return f"{label}'s binary ended the turn on the era matrix's refusal, made at the window itself"


UNRECORDED = "this release records no request to show the refusal"


def _tail_of_a_refusal(s: Session, e: Explanation, how: str) -> str | None:
    """Why the tail an automatic compaction kept says the API refused a request (a release that keeps a tail and
    records no request), or None: it kept more than the one round a threshold compaction of its release keeps (a
    refusal's tail is sized by how far the request was over). What it kept says it all: no other compaction of these
    releases keeps more than one round by default; flags off by default can keep one more round of a threshold
    compaction: hence "most likely"."""
    from inspector.claude.versions import TAIL, rules_for

    if e.rounds_kept is None or e.rounds_kept <= 1 or TAIL not in rules_for(s.version).era.strategies:
        return None
    return (
        f"it kept the last {e.rounds_kept} rounds verbatim where a threshold compaction of this release keeps one, "
        f"and the tail kept after a refusal is sized by how far the request was over ({how}; {UNRECORDED})"
    )


def _refusal_below(s: Session, e: Explanation, th: Thresholds, series: Series) -> str | None:
    """Why an automatic compaction below the threshold these rules give was the API's refusal, in a transcript that
    records no request (before 2.1.3xx), or None: it kept more than the one round a threshold compaction of its
    release keeps (a refusal's tail is sized by its gap); or, where the release compacts on a refusal, a later reply
    of its stretch went above the compaction's size and the request after it went out uncompacted, so no lower
    threshold (the other explanation) was in force."""
    if e.pre_tokens is None or not th.auto_compact_enabled:
        return None
    reacts, label = _reacts(s, th)
    how = _refusal_words(reacts, label)
    tail = _tail_of_a_refusal(s, e, how)
    if tail is not None:
        return tail
    if reacts is False:
        return None
    made_for = made_for_model(s, e.index)
    above = _above_after(s, series, e, e.pre_tokens + 1, made_for)  # (the check before a request counts the last reply)
    if above is None:
        return None
    t, own = above
    model = s.records[t.index].model
    line = str(s.records[t.index].line)
    if made_for and model and not same_model(model, made_for):
        line += f" (a reply of {model}, to which the model was switched)"
    if own:
        return (
            f"the reply at line {line} of the same process reached {fmt(t.tokens)} tokens and the next request went out "
            f"uncompacted, so no threshold at or below {fmt(e.pre_tokens)} was in force ({how}; {UNRECORDED})"
        )
    return (
        f"the reply at line {line}, of a later (resumed) process of this session, reached {fmt(t.tokens)} tokens and its "
        f"next request went out uncompacted, so no threshold at or below {fmt(e.pre_tokens)} was in force unless that "
        f"process ran with other settings ({how}; {UNRECORDED})"
    )


def turn_positions(series: Series) -> list[int]:
    memo = _TURN_POS.get(id(series))
    if memo is None or memo[0] is not series:
        memo = (series, [t.pos for t in series.turns])
        _TURN_POS.clear()
        _TURN_POS[id(series)] = memo
    return memo[1]


_TURN_POS: dict[int, tuple[Series, list[int]]] = {}


def boundary_thresholds(
    s: Session, series: Series, index: int, th: Thresholds, settings: Settings | None, before: list[Turn]
) -> Thresholds:
    """The thresholds in force at a boundary: the rules of the release that wrote the boundary, for the model in
    force before it (its last response's, or a later announcement's: a session can be resumed by a newer Claude Code,
    or switch models)."""
    if settings is None:
        return th
    r = s.records[index]
    version = r.version or s.version
    model = settings.model or _compacting_model(s, index) or s.model_at(index)
    model = model or (s.records[before[-1].index].model if before else None) or th.model
    if version == s.version and model == th.model:
        return th
    own = [t.tokens for t in series.turns if s.records[t.index].model == model]  # the model's own usage
    peak = max(own or [t.tokens for t in series.turns], default=None)
    limit = limit_for(session_facts(s), model)
    return thresholds(for_model(settings, model, s.announces_models), peak_usage=peak, version=version, limit=limit)


def made_for_model(s: Session, index: int) -> str | None:
    """The model an automatic compaction was made for: in a session that announces its models (a `model` attachment
    names each process's model, and each switch, before its first request), the one announced in force at the
    boundary; in one that does not, its next reply's (`_compacting_model`). None for a compaction the user asked for.
    A reply of another model says nothing of this one's threshold (2.1.273 seed 9603: claude-opus-4-5's replies went
    to 275,000 unenforced; resumed with claude-sonnet-5, the process compacted at once at its threshold of 167,000)."""
    if not s.announces_models:
        return _compacting_model(s, index)
    meta = s.records[index].get("compact") or {}
    if not isinstance(meta, dict) or meta.get("trigger") != "auto":
        return None
    return s.model_at(index)


def _compacting_model(s: Session, index: int) -> str | None:
    """The model an automatic compaction was made for, in a session that does not announce its models (a 2.1.3xx one
    announces each process's and each switch before its compactions): the model it sent its next request with, its
    first reply after the boundary (a kept record is not its own; None when none follows, or when that reply is not a
    real response). An automatic compaction runs as that request is about to be sent, by the process and for the model
    that sends it: a process resumed with another --model compacts for its own model at once (generated seed 159003
    on 2.1.238: resumed with claude-sonnet-5 after claude-mythos-5-2's last reply, it compacted at claude-sonnet-5's
    threshold), and so does one whose model was switched before the next prompt. None for a compaction the user asked
    for (its thresholds did not set it off)."""
    if s.announces_models:
        return None
    b = s.records[index]
    meta = b.get("compact") or {}
    if not isinstance(meta, dict) or meta.get("trigger") != "auto":
        return None
    kept = set(kept_uuids(s, index, meta))
    stamp = b.timestamp or ""
    for r in s.records[index + 1 :]:
        if r.is_compact_boundary:
            return None
        if r.type == "assistant" and not r.is_sidechain and r.uuid not in kept and (r.timestamp or "") >= stamp:
            return model_in_force(r)  # its next reply; none when that request failed (a later one is another's)
    return None
