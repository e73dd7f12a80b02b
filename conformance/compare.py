"""What Claude Code did in a run, what inspector says about the same transcript, and whether they agree.

Claude Code's side is read from the run itself, never from inspector: the compact boundaries of the transcript
(trigger, preTokens, the kept uuids), the fake API's request log (which request was refused as too long, the exact
messages of every main-thread request) and Claude Code's debug log (`autocompact:` lines: the effective window, and
`thresholdSource=` when a threshold is enforced). inspector's side is `analyze()` and `rebuild_requests()` on the
saved transcript, with the scenario's environment and settings.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.runner import cache_paths, canonical, load_requests


@dataclass
class Facts:
    compactions: list[str] = field(default_factory=list)  # "cause at preTokens, kept N"
    enforced: bool | None = None
    effective_window: int | None = None
    source: str | None = None
    requests: str = ""  # "N requests" / "N/M identical"
    request_diffs: list[str] = field(default_factory=list)  # inspector's side: each request rebuilt otherwise
    requests_recorded: bool = True  # the transcripts record the requests (api-request rows, 2.1.3xx)

    def short(self) -> str:
        th = (
            "not enforced"
            if self.enforced is False
            else f"enforced, effective {self.effective_window:,}" + (f" ({self.source})" if self.source else "")
            if self.enforced
            else "—"
        )
        comp = "; ".join(self.compactions) or "no compaction"
        return f"{comp} · {th}"


@dataclass
class Row:
    scenario: str
    claude: Facts
    inspector: Facts
    notes: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # record types and fields the run wrote that inspector does not know

    @property
    def match(self) -> bool:
        a, b = self.claude, self.inspector
        window_ok = a.enforced is None or (
            a.enforced == b.enforced and (not a.enforced or a.effective_window == b.effective_window)
        )
        source_ok = not a.source or a.source == b.source
        return a.compactions == b.compactions and window_ok and source_ok and b.requests.startswith("all ") and not self.unknown


def _system_without_billing(system: Any) -> Any:
    if (
        isinstance(system, list)
        and system
        and isinstance(system[0], dict)
        and str(system[0].get("text", "")).startswith("x-anthropic-billing-header:")
    ):
        return system[1:]
    return system


def _step_spans(debug: str) -> list[tuple[int, int, int]]:
    """(step, where its text begins, where it ends) of each `=== step N ===` part of a debug log, by step."""
    parts = dict((int(m.group(1)), m.end()) for m in re.finditer(r"^=== step (\d+) ===$", debug, re.M))
    starts = sorted(parts.items())
    return [(n, pos, starts[k + 1][1] if k + 1 < len(starts) else len(debug)) for k, (n, pos) in enumerate(starts)]


def last_working_step(folder: Path, requests: list[dict[str, Any]] | None = None, debug: str | None = None) -> int | None:
    """The step whose thresholds are in force at a run's end: the last that sent turn requests or judged its context
    against them (a step refused as too long whose compaction failed sends no turn but logs its thresholds); None
    for a run whose debug log has no steps."""
    if debug is None:
        debug = (folder / "debug.log").read_text() if (folder / "debug.log").exists() else ""
    if "=== step " not in debug:
        return None
    spans = _step_spans(debug)
    judged = [n for n, begin, end in spans if "autocompact: " in debug[begin:end]]
    working = [q["step"] for q in (load_requests(folder) if requests is None else requests) if q["kind"] == "turn"] + judged
    return max(working) if working else max(n for n, _, _ in spans)


def _segment_length(recs: list[dict[str, Any]], meta: dict[str, Any]) -> int:
    """How many records a compaction's `preservedSegment` (before 2.1.3xx: its head, anchor and tail) keeps: its tail
    and the records above it up to its head, by their parents (2.1.88 REPL seed 181001: a partial compaction that kept
    3, read as none)."""
    seg = meta.get("preservedSegment")
    if not isinstance(seg, dict) or not seg.get("headUuid") or not seg.get("tailUuid"):
        return 0
    by_uuid = {r.get("uuid"): r for r in recs if r.get("uuid")}
    n, u = 0, seg["tailUuid"]
    while u in by_uuid and n <= len(recs):
        n += 1
        if u == seg["headUuid"]:
            return n
        u = by_uuid[u].get("parentUuid")
    return 0


def _unmarked(transcripts: list[Path], requests: list[dict[str, Any]]) -> list[tuple[str, str, int, int]]:
    """The compactions of a release that wrote no boundary (up to 1.0.108): each a summary record with no parent,
    matched in order with the summaries the fake served; what it counted is the last usage before its summarize request
    (these releases added no estimate), and a /compact typed (the REPL writes its command's records after the summary)
    is a manual one. A compaction whose summary was not written (print mode) is in no transcript: not one of them."""
    from inspector.claude.release import at_or_after
    from inspector.transcript.records import COMPACT_COMMANDS, COMPACT_SUMMARY_PREFIX, UNMARKED_COMPACTIONS_UNTIL

    summaries: list[tuple[dict[str, Any], bool]] = []  # (the summary, whether a /compact command follows it)
    for t in transcripts:
        recs = [json.loads(line) for line in t.read_text().splitlines() if line.strip()]
        for i, r in enumerate(recs):
            content = r["message"].get("content") if isinstance(r.get("message"), dict) else None
            said = r.get("isCompactSummary") is True or (isinstance(content, str) and content.startswith(COMPACT_SUMMARY_PREFIX))
            if r.get("type") == "user" and said and r.get("parentUuid") is None:  # (1.0.17 has no isCompactSummary)
                typed = any(c in json.dumps(x.get("message")) for x in recs[i + 1 : i + 6] for c in COMPACT_COMMANDS)
                summaries.append((r, typed))
    if not summaries or any(at_or_after(r.get("version"), UNMARKED_COMPACTIONS_UNTIL) for r, _ in summaries):
        return []
    exchange = [q for q in requests if q["kind"] in ("turn", "summary")]
    served = [n for n, q in enumerate(exchange) if q["kind"] == "summary" and q["answer"] == "summary"]
    out = []
    for k, (r, typed) in enumerate(summaries):
        n = served[k] if k < len(served) else len(exchange)
        before = next((exchange[j] for j in range(n - 1, -1, -1) if exchange[j]["kind"] == "turn"), None)
        out.append((str(r.get("timestamp") or ""), "manual" if typed else "auto", int((before or {}).get("tokens") or 0), 0))
    return out


def claude_facts(folder: Path) -> Facts:
    """What Claude Code did, from its own transcript, its requests and its debug log."""
    f = Facts()
    requests = load_requests(folder)
    transcripts = sorted(p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts)
    turns = [q for q in requests if q["kind"] == "turn"]
    boundaries: list[tuple[str, str, int, int]] = []  # (timestamp, trigger, preTokens, kept)
    seen: set[str] = set()  # a fork (--fork-session) starts with a copy of the last compaction's boundary: one compaction
    for t in transcripts:
        recs = [json.loads(line) for line in t.read_text().splitlines() if line.strip()]  # (2.0.76 wrote a blank line)
        for r in recs:
            if r.get("type") == "system" and r.get("subtype") == "compact_boundary":
                if r.get("uuid") in seen:
                    continue
                seen.add(str(r.get("uuid")))
                m = r.get("compactMetadata") or {}
                # a partial compaction ("summarize from / up to here") is a manual one that names what it summarized
                trigger = "partial" if "messagesSummarized" in m else str(m.get("trigger"))
                boundaries.append(
                    (
                        str(r.get("timestamp") or ""),
                        trigger,
                        int(m.get("preTokens") or 0),
                        len((m.get("preservedMessages") or {}).get("uuids") or []) or _segment_length(recs, m),
                    )
                )
    if not boundaries:
        boundaries = _unmarked(transcripts, requests)
    boundaries.sort(key=lambda b: b[0])
    # the cause, from the request log: the n-th summary served made the n-th boundary; it answered a refusal when the
    # last turn request before its summarize request(s) was refused as too long (a refused summarize request is the
    # round ladder of any compaction, not a cause)
    exchange = [q for q in requests if q["kind"] in ("turn", "summary")]
    served = [n for n, q in enumerate(exchange) if q["kind"] == "summary" and q["answer"] == "summary"]
    for k, (_, trigger, pre, kept) in enumerate(boundaries):
        if trigger in ("manual", "partial"):
            cause = trigger
        else:
            n = served[k] if k < len(served) else len(exchange)
            before = next((exchange[j] for j in range(n - 1, -1, -1) if exchange[j]["kind"] == "turn"), None)
            # a refusal that ended an earlier run was not answered by this compaction (a new process that compacts
            # as it starts does so at its threshold)
            same_run = n >= len(exchange) or before is None or before.get("step") == exchange[n].get("step")
            refused = before is not None and before["answer"] == "prompt_too_long" and same_run
            cause = "prompt_too_long" if refused else "threshold"
        f.compactions.append(f"{cause} at {pre:,}, kept {kept}")
    debug = (folder / "debug.log").read_text() if (folder / "debug.log").exists() else ""
    run = json.loads((folder / "run.json").read_text())
    logs_thresholds = "autocompact: " in debug
    last = last_working_step(folder, requests, debug)
    if last is not None:
        spans = _step_spans(debug)
        begin = next((b for n, b, _ in spans if n == last), 0)
        end = next((b for n, b, _ in spans if n > last), len(debug))
        debug = debug[begin:end]
    levels = re.findall(r"autocompact: .*?level=([a-z]+) effectiveWindow=(\d+)", debug)
    windows = [w for _, w in levels] or re.findall(r"autocompact: .*?effectiveWindow=(\d+)", debug)
    sources = re.findall(r"thresholdSource=([a-z-]+)", debug)
    if levels and all(lv == "blocked" for lv, _ in levels) and sources and sources[-1] == "auto":
        # at the blocking limit Claude Code compacts whatever the window's source (2.1.332 logs "routing through
        # reactive (thresholdSource=auto)"); below it an "auto" window's threshold is not acted on: not enforced
        windows = []
    disabled = any(k in run.get("env", {}) for k in ("DISABLE_AUTO_COMPACT", "DISABLE_COMPACT")) or (
        (run.get("settings") or {}).get("autoCompactEnabled") is False
    )
    if windows:
        f.enforced, f.effective_window = True, int(windows[-1])
        f.source = sources[-1] if sources else None
    elif not disabled and logs_thresholds:
        f.enforced = False  # (a release that logs no `autocompact:` line, 2.1.20, leaves it unknown)
    f.requests = f"{len(turns)} requests"
    return f


def _markers(paths: list[list[Any]]) -> list[str]:
    """Cache breakpoints compared by where they are and what they say (system-prompt blocks' markers aside: the
    billing line Claude Code puts first is not recorded, so the system prompt's indexes differ by one)."""
    return sorted(json.dumps(p, sort_keys=True) for p in paths if p and p[0] and p[0][0] == "messages")


def _one_m_unrecorded(folder: Path, run: dict[str, Any]) -> bool:
    """Every step of the run asked for a [1m] model, and its transcripts cannot say so: a release before 2.1.3xx
    records neither the setting nor a model announcement (the API's model name drops the [1m]), so below 200,000
    tokens a 1M window shows nowhere in them; the run's setting is given to inspector, as the environment is."""
    models = [_step_model(st) or run.get("model") for st in run.get("steps") or ()]  # (a REPL's steps: the run's)
    if not models or not all(m and "[1m]" in m.lower() for m in models):
        return False
    return not _any_line(folder, b'"modelId"')  # a model announcement (2.1.3xx) names the [1m]


def _grew_past_the_window(folder: Path, run: dict[str, Any]) -> set[int]:
    """The effective windows the run's debug log names, when the fake let the context grow past a 200,000 window (every
    one named at most 200,000, no step on a [1m] model, a reply above 200,000): the API would have refused those
    requests, so no real transcript shows a reply above its model's 200,000 window, and inspector reads one as a 1M
    window (the usage can show no other). Where that makes inspector's window another than the one Claude Code ran
    with, the run's window is given to inspector, as the [1m] setting is (2.1.39 seed 179004: claude-sonnet-4-5 at
    202,991 after a compaction that failed); empty otherwise."""
    debug = folder / "debug.log"
    text = debug.read_text(errors="replace") if debug.exists() else ""
    windows = {int(w) for w in re.findall(r"effectiveWindow=(\d+)", text)}
    if (
        not windows
        or max(windows) > 200_000
        or any("[1m]" in (m or "").lower() for m in map(_step_model, run.get("steps") or ()))
    ):
        return set()
    for t in (folder / "projects").rglob("*.jsonl"):
        for line in t.read_text(errors="replace").splitlines():
            if '"usage"' not in line:
                continue
            u = (json.loads(line).get("message") or {}).get("usage") or {}
            keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
            if sum(u.get(k) or 0 for k in keys if isinstance(u.get(k), int)) > 200_000:
                return windows
    return set()


def _step_model(step: dict[str, Any]) -> str | None:
    """The model a step of the run asked for (its --model), if any."""
    argv = list(step.get("argv") or ())
    return argv[argv.index("--model") + 1] if "--model" in argv[:-1] else None


def _any_line(folder: Path, needle: bytes) -> bool:
    """Whether a line of the run's transcripts holds `needle`."""
    for t in (folder / "projects").rglob("*.jsonl"):
        with open(t, "rb") as fh:
            if any(needle in line for line in fh):
                return True
    return False


def fake_env(run: dict[str, Any]) -> dict[str, str]:
    """The environment a run's Claude Code had that matters to inspector's settings: the scenario's, and the fake
    API's base URL, another host than Anthropic's (2.1.144-2.1.284 give a native 1M window only on Anthropic's)."""
    return {"ANTHROPIC_BASE_URL": "http://127.0.0.1", **dict(run.get("env") or {})}


def inspector_facts(folder: Path) -> Facts:
    """What inspector says of the same run, given the scenario's environment and settings."""
    from inspector.tokens.thresholds import Settings

    run = json.loads((folder / "run.json").read_text())
    home = folder / "home"
    home.mkdir(exist_ok=True)
    (home / ".claude").mkdir(exist_ok=True)
    settings_file = run.get("settings_after") if run.get("settings_after") is not None else run.get("settings")
    if settings_file is not None:
        (home / ".claude" / "settings.json").write_text(json.dumps(settings_file))
    settings = Settings.from_environment(env=fake_env(run), config_dir=home / ".claude")
    if _one_m_unrecorded(folder, run):
        settings = settings.with_(one_m=True)  # what a user tells inspector (--one-m) of a window no record names
    f = _thresholds_facts(folder, run, settings)
    named = _grew_past_the_window(folder, run)
    if named and f.effective_window not in named:
        # (and of a window no reply could have shown: the fake's doing) where that window is the one the run names
        alt = _thresholds_facts(folder, run, settings.with_(one_m=False))
        if alt.effective_window in named:
            f = alt
    f.requests_recorded = records_requests(folder)
    if not f.requests_recorded:
        # a release before 2.1.3xx writes no api-request rows: there is nothing to rebuild the requests from
        f.requests = "all requests unrecorded: this release writes no api-request rows (none rebuilt, none compared)"
        return f
    aligned = _aligned(folder)  # (the requests rebuilt once, for the differences and the count)
    diffs = f.request_diffs = request_differences(folder, aligned)
    unrecorded, total = aligned[3], len(aligned[0])
    told = (
        f" (and {unrecorded} first request(s) of a process the release wrote no api-request row for, not compared)"
        if unrecorded
        else ""
    )
    if not diffs:
        f.requests = f"all {total} requests rebuilt identical{told}"
    else:
        f.requests = f"{total - len(diffs)}/{total} requests rebuilt identical{told} (first difference: {diffs[0]})"
    return f


def _fork_of(per: dict[Path, tuple[Any, Any, set[str]]], sid: str) -> Path | None:
    """The transcript a --fork-session step of session `sid` wrote, where no record marks a copy (before 2.1.332): of
    the other transcripts holding records of `sid`'s (a fork keeps their uuids), the newest written (2.1.250 seed
    172002: the fork on claude-foo-1 beside its source on claude-sonnet-4-0, which had more replies)."""
    src = next((t for t in per if t.stem == sid), None)
    if src is None:
        return None
    theirs = {r.uuid for r in per[src][1].records if r.uuid}
    forks = [t for t in per if t != src and any(r.uuid in theirs for r in per[t][1].records)]
    return max(forks, key=lambda t: max((r.timestamp or "" for r in per[t][1].records), default=""), default=None)


def _thresholds_facts(folder: Path, run: dict[str, Any], settings: Any) -> Facts:
    """inspector's compactions and thresholds of a run under these settings (`inspector_facts`)."""
    from inspector.tokens.explain import analyze
    from inspector.transcript.session import Session

    f = Facts()
    th = None
    most = -1
    found: dict[str, tuple[str, str]] = {}  # boundary uuid -> (its time, the fact): a fork's copy of one is the same
    per: dict[Path, tuple[Any, Any, set[str]]] = {}  # transcript -> (its thresholds, the session, sessions it copied)
    worked: Any = None  # the session of `th`
    for t in sorted(p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts):
        s = Session.load(t)
        rep = analyze(s, settings)
        # the thresholds of the session that did the work (a /autocompact step leaves a session of its own, with no
        # model in it); with a fork beside it, the last working step's transcript's (below)
        copied = {r.extra["copied_from"] for r in s.records if r.extra and r.extra.get("fork_copy")}
        per[t] = (rep.thresholds, s, copied)
        if len(rep.series.turns) > most:
            th, most, worked = rep.thresholds, len(rep.series.turns), s
        for e in rep.compactions:
            if e.kind != "microcompact":
                found.setdefault(
                    e.uuid or f"{t.name}:{e.index}",
                    (e.timestamp or "", f"{e.cause} at {e.pre_tokens:,}, kept {len(e.kept_uuids)}"),
                )
    f.compactions = [fact for _when, fact in sorted(found.values(), key=lambda x: x[0])]
    steps = run.get("steps") or ()
    last = last_working_step(folder)
    if last is not None and last < len(steps):
        # the thresholds in force at the end are those of the process of the last working step (Claude Code's side
        # reads them from its debug log): of its transcript, with a fork beside it; and for a step that only
        # compacted (a /compact resumed with --model), of the model it ran on, which no record names
        argv = list(steps[last].get("argv") or ())
        sid = argv[argv.index("--resume") + 1] if "--resume" in argv[:-1] else None
        mine = None
        if sid is not None and "--fork-session" in argv:
            mine = next((t for t, (_, _, copied) in per.items() if sid in copied), None)
            if mine is None:  # a release that marks no copy (before 2.1.332): the fork holds the copied records' uuids
                mine = _fork_of(per, sid)
        elif sid is not None:
            mine = next((t for t in per if t.stem == sid), None)
        elif "--continue" in argv and per:
            # --continue goes on in the newest session (the fork, not the longer one it copied: 2.1.332 seed 110032;
            # 2.1.300 seed 110032, which marks no copy)
            mine = max(per, key=lambda t: max((r.timestamp or "" for r in per[t][1].records), default=""))
        if mine is not None:
            th, worked = per[mine][0], per[mine][1]
        ran_on = _step_model(steps[last])
        from inspector.tokens.series import for_model, session_facts, session_thresholds

        # (a step whose turn requests were all refused left no reply that names its model either: 2.1.88 seed 113015)
        answered = ("tool_use", "text")
        if ran_on and not any(
            q["kind"] == "turn" and q.get("step") == last and q["answer"] in answered for q in load_requests(folder)
        ):
            target = mine or next((t for t in per if t.stem == sid), None)
            if target is not None:
                s = per[target][1]
                th = session_thresholds(s, for_model(settings, ran_on, bool(session_facts(s).announced)))
        elif (
            ran_on
            and "[1m]" in ran_on.lower()
            and settings.one_m is None
            and worked is not None
            and not session_facts(worked).announced
        ):
            # the last step asked for [1m] and no record of its release can say so (below 200,000 tokens): that step's
            # model is given to inspector for its thresholds, as `_one_m_unrecorded` gives [1m] for a run that asks on
            # every step (2.1.88 seeds 181000 and 181029: a last step on claude-opus-5[1m], on claude-opus-4-6[1m];
            # 2.1.250 leaves claude-opus-5[1m] unenforced, its era matrix cell)
            th = session_thresholds(worked, for_model(settings, ran_on, False))
    if th is not None:
        if not th.auto_compact_enabled:
            f.enforced = None
        else:
            f.enforced = th.enforced
            f.effective_window = th.effective_window
            f.source = th.compact_source
    return f


def _system_markers(paths: list[list[Any]], shift: int) -> list[str]:
    """Breakpoints on the system prompt, indexes shifted back by `shift` (the billing line Claude Code puts first)."""
    return sorted(
        json.dumps([["system", path[1] - shift, *path[2:]], marker], sort_keys=True)
        for path, marker in paths
        if path and path[0] == "system" and isinstance(path[1], int)
    )


def whole_difference(sent: dict[str, Any], rebuilt: dict[str, Any], not_recorded: list[str] | tuple[str, ...] = ()) -> str | None:
    """The first way a request inspector rebuilt differs from the one the fake received (None: identical): every
    message, the system prompt (the billing line Claude Code puts first is not recorded), the tools, every
    top-level parameter (`stream` is how it was sent, `betas` its header), and every cache breakpoint."""
    from conformance.resume import _first_difference

    if canonical(sent.get("messages")) != canonical(rebuilt.get("messages")):
        a, b = canonical(sent.get("messages")) or [], canonical(rebuilt.get("messages")) or []
        k = next((n for n, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        return (
            f"message {k}: {_first_difference(a[k], b[k])}"
            if k < min(len(a), len(b))
            else f"{len(a)} messages sent, {len(b)} rebuilt"
        )
    system = sent.get("system")
    billed = _system_without_billing(system) is not system
    if canonical(_system_without_billing(system)) != canonical(rebuilt.get("system")):
        return f"system prompt: {_first_difference(canonical(_system_without_billing(system)), canonical(rebuilt.get('system')))}"
    if canonical(sent.get("tools")) != canonical(rebuilt.get("tools")):
        return f"tools: {_first_difference(canonical(sent.get('tools')), canonical(rebuilt.get('tools')))}"
    params = dict(sent.get("params") or {})
    params.pop("stream", None)
    for k in not_recorded:  # sent, and said by inspector to be unrecorded: present in the request is the check
        if k not in params:
            return f"parameters: inspector says {k} was sent unrecorded; it was not sent"
        params.pop(k)
    mine = {k: v for k, v in rebuilt.items() if k not in ("system", "tools", "messages", "betas")}
    if canonical(params) != canonical(mine):
        return f"parameters: {_first_difference(canonical(params), canonical(mine))}"
    header = str((sent.get("headers") or {}).get("anthropic-beta") or "")
    if "betas" in rebuilt and sorted(x for x in header.split(",") if x) != sorted(rebuilt.get("betas") or []):
        return f"betas: sent {header!r}, rebuilt {','.join(rebuilt.get('betas') or [])!r}"
    if "cache" in sent:
        got = cache_paths(rebuilt)
        if _markers(sent["cache"]) != _markers(got):
            return f"cache breakpoints on messages: sent {_markers(sent['cache'])}, rebuilt {_markers(got)}"
        if _system_markers(sent["cache"], 1 if billed else 0) != _system_markers(got, 0):
            return (
                f"cache breakpoints on the system prompt: sent {_system_markers(sent['cache'], 1 if billed else 0)}, "
                f"rebuilt {_system_markers(got, 0)}"
            )
    return None


def records_requests(folder: Path) -> bool:
    """Whether the run's transcripts record the requests sent (the api-request rows of 2.1.3xx)."""
    return _any_line(folder, b'"type":"api-request"')


def unrecorded_first_requests(folder: Path) -> int:
    """The main-thread requests at the start of a run that no api-request row records (2.1.300's REPL writes none for
    its first request: the first row it writes is the second request's): 1 when the first request inspector rebuilds
    is the run's second and not its first, else 0."""
    return _aligned(folder)[3]


def _aligned(folder: Path) -> tuple[list[Any], list[Any], list[Any], int]:
    """The requests the fake received (turn and subagent), those inspector rebuilds for the main thread and for
    subagents, in the order they are compared, and how many first requests no row records (left out of the first)."""
    from inspector.claude.requests import rebuild_requests
    from inspector.transcript.session import Session

    logged = [q for q in load_requests(folder) if q["kind"] in ("turn", "subagent")]
    main: list[Any] = []
    agents: list[Any] = []
    files: set[Path] = set()  # the transcripts with main-thread requests
    for t in sorted((folder / "projects").rglob("*.jsonl")):
        for q in rebuild_requests(Session.load(t)):
            (main if q.agent_id is None else agents).append(q)
            if q.agent_id is None:
                files.add(t)
    agents.sort(key=lambda q: (q.timestamp or "", q.index))
    if len(files) > 1:
        # a fork (--fork-session) is a transcript of its own, its requests between the first session's
        main.sort(key=lambda q: q.timestamp or "")
    turns = [n for n, q in enumerate(logged) if q["kind"] == "turn"]
    skip = 0
    if len(turns) > 1 and main and not main[0].unresolved:
        first, second = (logged[n] for n in turns[:2])
        if whole_difference(first, main[0].request, main[0].not_recorded) and not whole_difference(
            second, main[0].request, main[0].not_recorded
        ):
            logged, skip = logged[: turns[0]] + logged[turns[0] + 1 :], 1
    return logged, main, agents, skip


def request_differences(folder: Path, aligned: tuple[list[Any], list[Any], list[Any], int] | None = None) -> list[str]:
    """Every request the fake received (main thread and subagents, refused ones too) against the one inspector
    rebuilds from the transcripts alone, in order per thread; one line per request that differs or is missing. A
    first request the release recorded no row for (`unrecorded_first_requests`) is not compared. `aligned`: what
    `_aligned` gave for the folder, where the caller has it."""
    logged, main, agents, _ = aligned if aligned is not None else _aligned(folder)
    out = []
    queues = {"turn": main, "subagent": agents}
    taken = {"turn": 0, "subagent": 0}
    for n, q in enumerate(logged):
        pool = queues[q["kind"]]
        k = taken[q["kind"]]
        taken[q["kind"]] += 1
        if k >= len(pool):
            out.append(f"request {n} ({q['kind']}, {q['answer']}): not rebuilt")
            continue
        if q["kind"] == "subagent":
            # subagents a reply started together run at once: their requests reach the fake in any order, so a
            # request is matched with the first rebuilt one (not matched yet) that it equals, if any
            same = next(
                (
                    j
                    for j in range(k, len(pool))
                    if not pool[j].unresolved and not whole_difference(q, pool[j].request, pool[j].not_recorded)
                ),
                None,
            )
            if same is not None and same != k:
                pool[k], pool[same] = pool[same], pool[k]
        if pool[k].unresolved:
            out.append(f"request {n}: unresolved {pool[k].unresolved[:2]}")
            continue
        d = whole_difference(q, pool[k].request, pool[k].not_recorded)
        if d:
            out.append(f"request {n} ({q['kind']}, {q['answer']}): {d}")
    for kind, pool in queues.items():
        if len(pool) > taken[kind]:
            out.append(f"{len(pool) - taken[kind]} {kind} requests rebuilt that the fake never received")
    return out


MESSAGE_KINDS = ("user", "assistant", "system", "attachment")  # the record types a chain is made of


def _sent_run(s: Any, j: int, stop: int, stamp: str, kinds: tuple[str, ...]) -> int:
    """Past the records from `j` (before `stop`) that are not messages, or are of `kinds` and stamped no later than
    a request sent at `stamp`: the end of the run of records it sent."""
    while j < stop and (
        s.records[j].type not in MESSAGE_KINDS or s.records[j].type in kinds and (s.records[j].timestamp or "~") <= stamp
    ):
        j += 1
    return j


def wire_differences(folder: Path) -> tuple[int, list[str]]:
    """Every main-thread request against the wire form of the records in force just before it (what inspector's
    previews are made of): (requests checked, one line per request that differs)."""
    from inspector.claude.requests import rebuild_requests
    from inspector.claude.wire import (
        foreign_keep,
        style_of_request,
    )
    from inspector.transcript.session import Session
    from inspector.transcript.tree import Conversation

    n, out = 0, []
    repl = False
    unrecorded = not records_requests(folder)
    log = load_requests(folder) if unrecorded else []
    answered: set[str] = set()  # replies already checked (a fork's copy holds its session's: checked there)
    mains = sorted(p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts)
    if unrecorded:
        # a session a step resumed first: a fork of it holds copies of its replies, which 2.1.273 writes after the
        # fork's own prompt, where no stamp tells them from the fork's (kept seed 86197)
        run = json.loads((folder / "run.json").read_text())
        resumed = {
            a[a.index("--resume") + 1] for st in run.get("steps") or () if "--resume" in (a := list(st.get("argv") or ()))[:-1]
        }
        mains.sort(key=lambda t: t.stem not in resumed)
        repl = any(str(a).startswith("(REPL") for st in run.get("steps") or () for a in (st.get("argv") or ())[1:2])
    for t in mains:
        s = Session.load(t)
        if unrecorded:
            checked, diffs = _wire_by_replies(s, log, answered, repl)
            n += checked
            out += [f"{t.name[:8]} {d}" for d in diffs]
            continue
        qs = rebuild_requests(s)
        keep = foreign_keep(s, qs)
        for k, q in enumerate(qs):
            if q.agent_id is not None or q.unresolved:
                continue
            n += 1
            sent = canonical(q.request["messages"])
            style = style_of_request(q.request["messages"])
            # the records in force when it was sent: a REPL writes some of them (the request's reminders) after the
            # api-request row, so the cut is at its first reply, or for one unanswered after the attachments that
            # follow its row (the next message, an API error or a compaction, came after it)
            nxt = next((p.index for p in qs[k + 1 :] if p.agent_id is None), len(s.records))
            end = (
                min(q.replies[0], nxt)
                if q.replies
                else next((j for j in range(q.index + 1, nxt) if s.records[j].type in ("user", "assistant", "system")), nxt)
            )
            if not q.replies and q.timestamp:
                # a REPL records an unanswered request's row before the prompt, reminders and replies it sent (stamped
                # before it; replies too: 2.1.332 REPL seed 19003 wrote a tool round after the row of the request that
                # sent it): they are among its records
                end = max(end, _sent_run(s, q.index + 1, nxt, q.timestamp, ("user", "attachment", "assistant")))
                if end < nxt and s.records[end].is_compact_boundary and (s.records[end].timestamp or "~") <= q.timestamp:
                    # recorded before a compaction but sent after it (2.1.332's REPL): its records are the
                    # compaction's, up to the first one stamped after it
                    end = _sent_run(s, end, nxt, q.timestamp, MESSAGE_KINDS)
            conv = Conversation(s.records[:end])
            chain = conv.chain
            last = next((j for j in range(end - 1, -1, -1) if s.records[j].type in MESSAGE_KINDS and s.records[j].uuid), None)
            if not q.replies and last is not None and last not in chain:
                # the last record written before it is the chain's end, not the newest stamped (an attachment written
                # after a parallel call's result but stamped before it: 2.1.328 REPL seed 79200)
                chain = conv._repair(conv._walk(last, logical=False))
            if q.replies and q.replies[0] < q.index:
                # its reply written above its own row and prompt (2.1.310's REPL wrote its first reply at the file's
                # head, REPL seed 186001): the chain that reply hangs from, walked by its parents
                walked = Conversation(s.records[:nxt])._walk(q.replies[0], logical=False)
                chain = walked[:-1] if walked and walked[-1] == q.replies[0] else walked
            elif q.replies and q.replies[0] <= nxt:
                # the chain its first reply hangs from: with the reply as the leaf, not whichever record before it is
                # the newest (parallel tool results each hang from their own call, and one written after a later
                # bookkeeping record but stamped before it would be the leaf, its siblings put back out of order)
                upto = Conversation(s.records[: q.replies[0] + 1]).chain
                if upto and upto[-1] == q.replies[0]:
                    chain = upto[:-1]
            if q.replies and nxt < q.replies[0] and q.timestamp:
                # the next request was recorded before this one's reply, and records this one sent after it (a tool
                # result stamped before this request): those up to the reply that are not later than it
                later = Conversation(s.records[: q.replies[0]]).chain
                chain = [j for j in later if j < nxt or (s.records[j].timestamp or "") <= q.timestamp]
            b = end if not q.replies else None
            while b is not None and b < len(s.records) and s.records[b].type not in ("user", "assistant", "system"):
                b += 1  # past the rows of requests recorded before the compaction they follow (2.1.332's REPL)
            if b is not None and b < len(s.records) and s.records[b].is_compact_boundary:
                # a REPL writes the reminder of a request refused as too long only after the compaction that answered
                # it (hung below the new summary): the compaction kept it, so it was among the records sent
                meta = s.records[b].get("compact") or {}
                kept = set(((meta.get("preservedMessages") or {}).get("uuids")) or ())
                upto = nxt if b < nxt else len(s.records)
                chain = chain + [
                    j
                    for j in range(b + 1, upto)
                    if s.records[j].uuid in kept and (b < nxt or (s.records[j].timestamp or "~") <= (q.timestamp or ""))
                ]
            # the effort it stated: its own reply's, as its record says (the last before it when it has none)
            mine = _inspector_messages(s, chain, q.model, style, keep, (q.replies[0] + 1) if q.replies else end)
            if mine != sent:
                out.append(f"{t.name[:8]} request {q.id[:8]}: {_message_difference(mine, sent)}")
    return n, out


def _inspector_messages(
    s: Any, chain: list[int], model: str | None, style: str | None, keep: str, upto: int, repl: bool = False
) -> list[Any]:
    """The messages inspector says a request on `model` sends for these chain records (canonical): in the reminder
    style the request shows (else the model's on the session's release), with what it keeps of other models'
    reasoning (`keep`) and the effort of the replies before `upto`."""
    from inspector.claude.wire import ForeignThinking, api_messages, sent_bodies, style_for_model, wire_effort

    thinking = ForeignThinking(model, keep) if model else None
    style = style or style_for_model(model, s.version)
    return canonical(api_messages(sent_bodies(s, _live_order(s, chain, repl)), style, thinking, wire_effort(s, model, upto)))


def _held_output(s: Any, chain: list[int]) -> list[int]:
    """The chain as a resumed process of a release that records no request held it: a command's output (a failed
    /compact's stderr, a `local_command` system record below the command) the file left as its leaf is held after the
    "No response requested." reply the resume put below the command, though that reply's parent is the command (2.1.150
    seed 182000, kept seeds 1142 and 1194: a resume after a /compact whose summarizer failed sent the stderr with its
    prompt). A later resume of the file walks the reply's parents and leaves it out, as inspector's chain does."""
    out = list(chain)
    for k in range(len(chain) - 1, -1, -1):
        r = s.records[chain[k]]
        if r.type != "assistant" or r.model != "<synthetic>" or k == 0:
            continue
        above = chain[k - 1]
        held = [
            j
            for j in range(above + 1, chain[k])
            if s.records[j].type == "system"
            and s.records[j].subtype == "local_command"
            and s.records[j].parent == s.records[above].uuid
        ]
        out[k + 1 : k + 1] = held
    return out


def _message_difference(mine: list[Any], sent: list[Any]) -> str:
    """Where inspector's messages first differ from those sent, and how."""
    from conformance.resume import _first_difference

    m = next((j for j, (x, y) in enumerate(zip(mine, sent)) if x != y), min(len(mine), len(sent)))
    what = _first_difference(mine[m], sent[m]) if m < min(len(mine), len(sent)) else f"{len(mine)} vs {len(sent)} messages"
    return f"message {m}: {what}"


def _wire_by_replies(s: Any, log: list[dict[str, Any]], answered: set[str], repl: bool = False) -> tuple[int, list[str]]:
    """`wire_differences` for a release that writes no api-request row (before 2.1.3xx): each main-thread request the
    fake answered whose reply is in this transcript (its records carry the reply's message id, which the fake logged)
    against the wire form of the chain that reply hangs from. A request refused or never answered is not checked.
    (requests checked, one line per request that differs)."""
    from inspector.claude.wire import foreign_keep, style_of_request
    from inspector.tokens.context import fork_copy_end
    from inspector.transcript.tree import SIDE_REACH, Conversation

    copied = fork_copy_end(s)
    first: dict[str, int] = {}
    for i, r in enumerate(s.records):
        if copied is not None and i <= copied:
            continue  # a fork's copy of its session's reply: checked in that session (2.1.250, kept seed 172009)
        if r.type == "assistant" and not r.is_sidechain and r.message_id and r.message_id not in first:
            first[r.message_id] = i
    keep = foreign_keep(s, [])
    index = s.conversation.by_uuid
    # where each step's process began, by its first reply in this file: a step is one process (`claude -p`, a resume),
    # but a REPL's steps are its prompts to one process
    began: dict[int, int] = {}
    for q in log:
        mid = q.get("reply_id")
        if mid in first and isinstance(q.get("step"), int):
            began[q["step"]] = min(began.get(q["step"], first[mid]), first[mid])
    n, out = 0, []
    for q in log:
        mid = q.get("reply_id")
        if q["kind"] != "turn" or not mid or mid in answered or mid not in first:
            continue
        answered.add(mid)
        reply = first[mid]
        # the records up to the reply, and those it hangs from that were written after it (2.1.150's REPL wrote a
        # process's first reply before its prompt: kept REPL seed 203)
        end, u, seen = reply + 1, s.records[reply].parent, set()
        while u is not None and u in index and index[u] not in seen:
            seen.add(index[u])
            end = max(end, index[u] + 1)
            u = s.records[index[u]].parent
        # a compaction made between the turn's requests writes its summary after the reply's first fragment: the file
        # as the reply found it holds them (Conversation._relink_side_boundaries)
        b = next((k for k in range(reply - 1, max(-1, reply - SIDE_REACH), -1) if s.records[k].is_compact_boundary), None)
        if b is not None:
            for k in range(b + 1, min(len(s.records), b + SIDE_REACH)):
                r = s.records[k]
                if r.is_compact_summary and index.get(r.parent or "") == b:
                    if k >= end:
                        end = k + 1
                        while end < len(s.records) and s.records[end].type == "attachment":
                            end += 1
                    break
        conv = Conversation(s.records[:end])
        walked = conv._walk(reply, logical=False)
        if any(i in conv.side_relinked for i in walked):
            # a compaction between the turn's requests that the file's chain walks past: the process sent what it
            # compacted (Conversation._relink_side_boundaries)
            walked = conv._walk(reply, logical=True)
        upto = conv._repair(walked)
        if not repl and q.get("step") in began:  # (2.1.20-2.1.79 do not repair what the process loaded)
            upto = conv.held_after_resume(upto, began[q["step"]] - 1, s.records[reply].version)
        n += 1
        if reply not in upto:
            out.append(f"request answered by line {s.records[reply].line}: its reply is not on the chain")
            continue
        sent = canonical(q["messages"])
        model = (q.get("params") or {}).get("model")
        before = upto[: upto.index(reply)]  # (the reply's other fragments the repair put back follow it)
        mine = _inspector_messages(s, _held_output(s, before), model, style_of_request(q["messages"]), keep, reply + 1, repl)
        sent = _without_unrecorded(sent, mine, s.version)
        if mine != sent:
            out.append(f"request answered by line {s.records[reply].line}: {_message_difference(mine, sent)}")
    return n, out


REMINDER = "<system-reminder>"
_ONLY_REMINDERS = re.compile(r"(?:\n\n<system-reminder>.*?</system-reminder>\n?)+", re.S)


def _without_unrecorded(sent: list[Any], mine: list[Any], version: str | None) -> list[Any]:
    """The messages sent (canonical), without what the release that sent them records nowhere: before 2.1.268 no
    record holds a reminder's text (the user context, CLAUDE.md and the date, on every request; attachments, written
    from 2.1.97 without their text and not at all before: the skills listing, hook output, re-read files, todo
    reminders). The blocks sent are walked beside inspector's (`mine`, in order): a reminder inspector does not have
    there (a text block that is one, any text of a system-role entry) is left out, and so is a message it leaves
    empty, and the reminders a block's text ends with where inspector's block is that text without them (Claude Code
    trims the text's end before it adds one: "41\t" was sent "41" + the reminder). What a record holds (a reminder a
    Read result ends with, a task's notification) is in both. From 2.1.268 the messages as sent."""
    from inspector.claude.release import at_or_after
    from inspector.compact.reattach import USER_CONTEXT_RECORDED_FROM

    if at_or_after(version, USER_CONTEXT_RECORDED_FROM):
        return sent
    from inspector.compact.hooks import ATTACHMENTS_WRITTEN_FROM

    unwritten = not at_or_after(version, ATTACHMENTS_WRITTEN_FROM)  # no attachment record at all, images included

    def settle(theirs: Any, ours: Any) -> Any:
        if not isinstance(theirs, str) or not isinstance(ours, str) or theirs == ours:
            return theirs
        for base in (ours, ours.rstrip(), ours.strip()):  # (a tool result a reminder is folded into is trimmed)
            rest = theirs[len(base) :]
            # (folded into an empty result, the reminder is the whole text: nothing to join it to with a blank line;
            # 2.1.20's todo reminder in a Bash call's empty output, kept seed 191053)
            if theirs.startswith(base) and (
                _ONLY_REMINDERS.fullmatch(rest) or (not base and _ONLY_REMINDERS.fullmatch("\n\n" + rest))
            ):
                return ours
        return theirs

    def block(b: dict[str, Any], o: Any) -> dict[str, Any]:
        if not isinstance(o, dict) or o.get("type") != b.get("type"):
            return b
        if b.get("type") == "text":
            return {**b, "text": settle(b.get("text"), o.get("text"))}
        if b.get("type") != "tool_result":
            return b
        c, oc = b.get("content"), o.get("content")
        if isinstance(c, list) and isinstance(oc, list) and len(c) == len(oc):
            return {**b, "content": [block(x, y) for x, y in zip(c, oc)]}
        return {**b, "content": settle(c, oc)}

    ours = [b for m in mine for b in (m.get("content") if isinstance(m.get("content"), list) else [m.get("content")])]
    j = 0
    out = []
    for m in sent:
        c = m.get("content")
        if not isinstance(c, list):
            out.append(m)
            j += 1
            continue
        system = m.get("role") == "system"  # (a release that sends reminders with the system role sends them bare)
        kept = []
        for b in c:
            o = ours[j] if j < len(ours) else None
            if b == o:
                kept.append(b)
                j += 1
            elif b.get("type") == "text" and (system or str(b.get("text", "")).startswith(REMINDER)):
                # in no record; the newline a user turn joined after it puts the text inspector has before it
                # instead (a summary followed by unrecorded reminders, then a task's notification: seed 179005)
                last = ours[j - 1] if 0 < j <= len(ours) and kept else None  # (past inspector's blocks: none)
                if (
                    isinstance(last, dict)
                    and kept[-1].get("type") == "text"
                    and last.get("text") == kept[-1].get("text", "") + "\n"
                ):
                    kept[-1] = last
                continue
            elif unwritten and b.get("type") == "image" and not (isinstance(o, dict) and o.get("type") == "image"):
                # an image inspector does not have here: an attachment's (an image file re-attached after a compaction,
                # 2.0.50 seed 198007, 1.0.128 seeds 197012 and 197046), in no record of a release before 2.1.97
                continue
            else:
                kept.append(block(b, o))
                j += 1
        if kept or (system and set(m) - {"role", "content"}):  # (a system entry that states an effort stays)
            out.append({**m, "content": kept})
    return out


def _live_order(s: Any, chain: list[int], repl: bool = False) -> list[int]:
    """The chain in the order the process that wrote it held its records: the results of one reply's calls in the
    order they were written, but by their times in a REPL before 2.1.261. A result hangs from the fragment with its
    call, so the chain (and Claude Code's repair of parallel calls on a resume, §2.7) can put a later result before an
    earlier one; the process that made the calls sent them as it held them (2.1.328 REPL seed 79200, three calls a
    reply). `claude -p` writes each message as its loop yields it, the order it holds them in (2.1.20 seed 196026:
    three Grep results written in the order of their calls, the third stamped before the second, sent as written); a
    REPL of 2.1.88 wrote a subagent's result before a Glob's that ended first, and sent it after it (REPL seed
    181001)."""
    groups: dict[str, list[int]] = {}  # a reply's message id -> positions in the chain of its results
    for k, i in enumerate(chain):
        r = s.records[i]
        if r.type != "user" or not r.tool_results:
            continue
        calls = {s.tool_index.get(t, (None, None))[0] for t in r.tool_results}
        mids = {s.records[c].message_id for c in calls if c is not None}
        if len(mids) == 1 and None not in mids:
            groups.setdefault(str(next(iter(mids))), []).append(k)
    from inspector.claude.release import at_or_after
    from inspector.transcript.tree import REPAIR_IN_FILE_ORDER

    stamped = repl and not at_or_after(s.version, REPAIR_IN_FILE_ORDER)
    out = list(chain)
    for at in groups.values():
        held = sorted((chain[k] for k in at), key=(lambda i: (s.records[i].timestamp or "", i)) if stamped else None)
        for k, i in zip(at, held):
            out[k] = i
    return out


def compare(folder: Path) -> Row:
    a, b = claude_facts(folder), inspector_facts(folder)
    row = Row(folder.name, a, b)
    if a.compactions != b.compactions:
        row.notes.append(f"compactions: Claude Code {a.compactions}, inspector {b.compactions}")
    if a.enforced is not None and (a.enforced != b.enforced or (a.enforced and a.effective_window != b.effective_window)):
        row.notes.append(f"threshold: Claude Code {a.short()}, inspector {b.short()}")
    if a.source and a.source != b.source:
        row.notes.append(f"window source: Claude Code {a.source}, inspector {b.source}")
    if not b.requests.startswith("all "):
        row.notes.append(b.requests)
    row.unknown = unknown_in(folder)
    if row.unknown:
        row.notes.append("fields inspector does not know: " + ", ".join(row.unknown))
    return row


def unknown_in(folder: Path) -> list[str]:
    """The record types and fields of a run's transcripts that inspector's registry does not have ("type.field")."""
    from collections import Counter

    from inspector.transcript.fields import unknown_fields

    seen: Counter[tuple[str, str]] = Counter()
    for t in sorted((folder / "projects").rglob("*.jsonl")):
        seen += unknown_fields(t.read_bytes().splitlines())
    return [f"{w}.{k}" if k != "*" else f"{w} (a record type)" for (w, k) in sorted(seen)]


def table(rows: list[Row], version: str) -> str:
    lines = [
        f"Claude Code {version}, {sum(r.match for r in rows)} of {len(rows)} scenarios match.",
        "",
        "| scenario | Claude Code did | inspector says | requests | match |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| `{r.scenario}` | {r.claude.short()} | {r.inspector.short()} | {r.inspector.requests} | "
            f"{'yes' if r.match else 'NO: ' + '; '.join(r.notes)} |"
        )
    return "\n".join(lines) + "\n"
