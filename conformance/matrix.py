"""The era matrix: what each Claude Code release does about the context window, measured on its own binary.

For one release and one model, a *probe* is a run in print mode against the fake API whose k-th reply reports a
scripted context size (`Script.sizes`); what Claude Code does after each reply tells, for that size, whether it
compacted before the next request (a summarize request), sent the next request as it was, or sent nothing (it
refused the request itself). A search over such runs, each testing up to `POINTS` sizes in ascending order, narrows
the first size that compacts to one token: that is the auto-compact threshold *as the release enforces it*, never
read from inspector's table. A second search with DISABLE_AUTO_COMPACT finds where the release refuses to send.

Further probes per release: what it does when the API refuses a request as too long (compacts, or ends the turn),
what it does when every summarize request fails (how often it tries, and when it gives up), and the first request
after a compaction (the summary, the reminders and re-attached files, each with its size).

`python -m conformance --matrix` runs every release of `RELEASES` on the models of `MODELS` and writes
`inspector/claude/era_matrix.json` (committed: the version table answers from it) and `docs/era-matrix.md`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from conformance.fake_api import Logged, Script
from conformance.generate import CATALOG
from conformance.runner import Claude, Run, install, run
from conformance.scenarios import Scenario, Step
from inspector.claude.release import show_version
from inspector.claude.versions import ERAS

ROOT = Path(__file__).resolve().parent
DATA = ROOT.parent / "inspector" / "claude" / "era_matrix.json"  # package data: the version table reads it
DOC = ROOT.parent / "docs" / "era-matrix.md"

# one release on each side of every boundary of inspector's version table (2.1.74 | 2.1.75: the blocking limit,
# found by bisecting the binaries; 2.1.330 | 2.1.331: the summary's <analysis>), a few between, and the newest on npm
RELEASES = (
    "1.0.15",
    "1.0.16",
    "1.0.70",
    "1.0.71",
    "1.0.128",
    "2.0.0",
    "2.0.76",
    "2.1.20",
    "2.1.21",
    "2.1.74",
    "2.1.75",
    "2.1.88",
    "2.1.111",
    "2.1.158",
    "2.1.159",
    "2.1.219",
    "2.1.237",
    "2.1.327",
    "2.1.328",
    "2.1.330",
    "2.1.331",
    "2.1.332",
)
# releases measured only for the per-release probes: each side of a change of the summary's <analysis> and of the
# leaf rule (bisected)
PROBE_RELEASES = (
    "1.0.84",
    "1.0.85",
    "1.0.108",
    "1.0.109",
    "2.1.6",
    "2.1.7",
    "2.1.68",
    "2.1.69",
    "2.1.79",
    "2.1.80",
    "2.1.100",
    "2.1.101",
    "2.1.119",
    "2.1.120",
    "2.1.260",
    "2.1.261",
    "2.1.263",
    "2.1.265",
)
# a model of every family (4.x, 4.5 with haiku, 4.6, native 1M), a [1m] setting, and a model no release knows
MODELS = (
    "claude-sonnet-4-0",
    "claude-sonnet-4-5",
    "claude-haiku-4-5",
    "claude-opus-4-5",
    "claude-opus-4-6",
    "claude-sonnet-4-6",
    "claude-opus-4-7",
    "claude-opus-5",
    "claude-sonnet-5",
    "claude-sonnet-4-5[1m]",
    "claude-opus-5[1m]",
    "claude-foo-1",
)
# the catalog's newer models, measured on the catalog-era releases of the matrix (2.1.159 and later: `--model` each,
# `--release` each): their windows moved with the releases (claude-opus-4-8 200,000 from 2.1.219, 1M from 2.1.285;
# claude-mythos-5-2 an unknown model's 200,000 until 2.1.321), and a session's model must be looked up as its release
# ran it
CATALOG_ERA = show_version(next(e.first for e in ERAS if e.windows == "catalog" and e.first))  # 2.1.159
NEWER_MODELS = tuple(m for m in CATALOG[CATALOG.index("claude-opus-4-8") :] if m not in MODELS)
CAP = 2_100_000  # the largest context probed: above every window any release gives
POINTS = 24  # sizes tested in one run
WARM_UP = (1_000, 2_000)  # small replies before a run's sizes (find_edge)
PROMPT = "run the checks"


@dataclass
class Point:
    """What followed one reply of a probe."""

    usage: int  # the context the reply reported
    outcome: str  # "pass" (the next request was sent), "compact" (a summarize request), "blocked" (nothing sent)
    pre_tokens: int | None = None  # the compaction's recorded preTokens, for "compact"


def _script(sizes: list[int], **kw: Any) -> Script:
    return Script(turns=len(sizes), sizes=tuple(sizes), stop_after_summary=True, **kw)


def _scenario(
    model: str,
    script: Script,
    env: dict[str, str] | None = None,
    settings: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
) -> Scenario:
    return Scenario("matrix", model, (Step(PROMPT, script),), env=env or {}, settings=settings, config=config)


def _records(r: Run) -> Iterator[dict[str, Any]]:
    """Every record of a run's transcripts (a line that is not a JSON object left out)."""
    for t in r.transcripts():
        for line in t.read_text(errors="replace").splitlines():
            try:
                o = json.loads(line)
            except ValueError:
                continue
            if isinstance(o, dict):
                yield o


def _boundaries(r: Run) -> list[dict[str, Any]]:
    return [
        o.get("compactMetadata") or {}
        for o in _records(r)
        if o.get("type") == "system" and o.get("subtype") == "compact_boundary"
    ]


def points_of(log: list[Logged], boundaries: list[dict[str, Any]]) -> list[Point]:
    """For each answered turn request (a reply that reported a size), what Claude Code did next."""
    seq = [q for q in log if q.kind in ("turn", "summary")]
    out: list[Point] = []
    bi = 0
    for n, q in enumerate(seq):
        if q.kind != "turn" or q.answer != "tool_use" or q.tokens is None:
            continue
        nxt = seq[n + 1] if n + 1 < len(seq) else None
        if nxt is None:
            out.append(Point(q.tokens, "blocked"))
        elif nxt.kind == "summary":
            pre = boundaries[bi].get("preTokens") if bi < len(boundaries) else None
            bi += 1
            out.append(Point(q.tokens, "compact", pre if isinstance(pre, int) else None))
            break  # the probe's sizes end with the first compaction
        else:
            out.append(Point(q.tokens, "pass"))
    return out


Runner = Callable[[Scenario], Run]


def _runner(claude: Claude) -> Runner:
    def go(sc: Scenario) -> Run:
        return run(sc, claude, timeout=300)

    return go


def probe(
    go: Runner,
    model: str,
    sizes: list[int],
    env: dict[str, str] | None = None,
    settings: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
    **kw: Any,
) -> tuple[list[Point], Run]:
    r = go(_scenario(model, _script(sizes, **kw), env, settings, config))
    try:
        return points_of(r.requests, _boundaries(r)), r
    finally:
        r.close()


@dataclass
class Edge:
    """The first size at which a release stops passing requests on: the outcome there and the counted context."""

    outcome: str  # "compact", "blocked" or "none" (every size up to CAP passed)
    usage: int | None = None  # the smallest reported usage with that outcome (exact to one token)
    below: int | None = None  # the largest usage that still passed
    count: int | None = None  # what Claude Code counted there: the usage plus its estimate of what followed
    estimate: int | None = None  # that estimate (preTokens − usage, measured on a compaction)
    runs: int = 0
    precision: int | None = None  # the spacing of the sizes of the run that found it (1: exact to the token)
    stderr: str = ""


def find_edge(go: Runner, model: str, env: dict[str, str] | None = None, lo: int = 0, hi: int = CAP) -> Edge:
    """The smallest usage in (lo, hi] after which Claude Code does not simply send the next request."""
    edge = Edge("none")
    while hi - lo > 1:
        step = max(1, (hi - lo) // POINTS)
        sizes = list(range(lo + step, hi, step))[: POINTS - 1] + [hi]
        # two small replies first: 1.0.16 let a run's first replies above its threshold pass (claude-haiku-4-5, threshold
        # 176,464: a run that began at 178,645 passed it and 182,290 and compacted at 185,935; after 1,000 and 2,000 it
        # compacted at 178,645), which set the edge thousands of tokens high where no preTokens corrects it
        warm = [w for w in WARM_UP if w < sizes[0]]
        pts, r = probe(go, model, warm + sizes, env)
        pts = pts[len(warm) :] if len(pts) >= len(warm) and all(p.outcome == "pass" for p in pts[: len(warm)]) else pts
        edge.runs += 1
        stopped = next((p for p in pts if p.outcome != "pass"), None)
        passed = [p.usage for p in pts if p.outcome == "pass"]
        if stopped is None:
            if len(pts) < len(sizes):  # the run ended early without a verdict: a failure to report
                edge.stderr = (r.steps[0].stderr or r.steps[0].stdout)[-300:]
                edge.outcome = "error"
                return edge
            # nothing stopped, not even at hi, where an earlier run stopped: what Claude Code counts after a reply
            # grows with the rounds before it, so a run of other rounds need not reproduce it; the earlier run's
            # answer stands, to the precision reached
            edge.below = max(passed) if passed else lo
            return edge
        edge.outcome, edge.usage = stopped.outcome, stopped.usage
        edge.stderr = (r.steps[0].stdout + r.steps[0].stderr)[-300:]
        if stopped.pre_tokens is not None:
            edge.estimate = stopped.pre_tokens - stopped.usage
            edge.count = stopped.pre_tokens
        edge.precision = step
        lo = max(passed) if passed else lo
        hi = stopped.usage
    edge.below = lo
    return edge


@dataclass
class Cell:
    """One release × model."""

    version: str
    model: str
    auto: Edge = field(default_factory=lambda: Edge("none"))  # with the defaults
    blocking: Edge | None = None  # with DISABLE_AUTO_COMPACT: where it refuses to send
    reactive: str = ""  # what follows the API's refusal below the threshold: "compacts" / "ends the turn"
    summarizer_fails: str = ""  # every summarize request fails: how often it is tried, and what follows
    after: dict[str, Any] = field(default_factory=dict)  # the first request after a compaction

    @property
    def enforced(self) -> bool:
        return self.auto.outcome == "compact"

    @property
    def threshold(self) -> int | None:
        return self.auto.count if self.enforced else None


def _reactive(go: Runner, model: str, at: int) -> str:
    """Sizes climb to `at`, where the API refuses the request as too long: does Claude Code compact then?"""
    sizes = [at // 4, at // 2, at, at]
    r = go(_scenario(model, Script(turns=len(sizes), sizes=tuple(sizes), ptl_at=at, stop_after_summary=True)))
    try:
        seq = r.exchange
        refused = [n for n, q in enumerate(seq) if q.answer == "prompt_too_long"]
        if not refused:
            return "no refusal reached"
        rest = seq[refused[0] + 1 :]
        if rest and rest[0].kind == "summary":
            return "compacts and retries" if any(q.kind == "turn" and q.answer != "prompt_too_long" for q in rest) else "compacts"
        return "ends the turn (no compaction)"
    finally:
        r.close()


def _summarizer_fails(go: Runner, model: str, above: int, blocking: int | None = None) -> str:
    """Every reply above the threshold (the last four also above the blocking limit, when there is one) and every
    summarize request failing: how often Claude Code tries to compact, and whether it gives up for the session."""
    sizes = [above] * 6 + ([blocking + 1_000] * 4 if blocking and blocking > above else [above] * 4)
    r = go(_scenario(model, Script(turns=len(sizes), sizes=tuple(sizes), summary_status=400)))
    try:
        seq = r.exchange
        groups: list[int] = []
        after_turn: list[int] = []  # the reply index (turn requests so far) at which each try started
        turns = 0
        for n, q in enumerate(seq):
            if q.kind == "turn":
                turns += 1
            elif n == 0 or seq[n - 1].kind != "summary":
                groups.append(1)
                after_turn.append(turns)
            else:
                groups[-1] += 1
        if not groups:
            return f"no compaction was tried over {turns} turn request(s)"
        last = after_turn[-1]
        high = [k for k in after_turn if k > 6] if blocking and blocking > above else []
        words = (
            f"{len(groups)} compaction tr{'y' if len(groups) == 1 else 'ies'} ({', '.join(map(str, groups))} summarize "
            f"request(s)) over {turns} turn request(s); "
        )
        if turns - last >= 2 and not high:
            words += "then it stopped trying" + (" (also past the blocking limit)" if blocking and blocking > above else "")
        elif high:
            words += f"it tried again past the blocking limit ({len(high)} tr{'y' if len(high) == 1 else 'ies'})"
        else:
            words += "it kept trying"
        return words
    finally:
        r.close()


def _text_len(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    n = 0
    for b in content or ():
        if isinstance(b, dict):
            if isinstance(b.get("text"), str):
                n += len(b["text"])
            elif b.get("type") == "tool_result":
                n += _text_len(b.get("content"))
            else:
                n += len(json.dumps(b))
    return n


def after_shape(log: list[Logged]) -> dict[str, Any]:
    """The first turn request after a summary: its messages, each as its role and blocks with their sizes."""
    seq = [q for q in log if q.kind in ("turn", "summary")]
    k = next((n for n, q in enumerate(seq) if q.kind == "summary" and q.answer == "summary"), None)
    nxt = next((q for q in seq[k + 1 :] if q.kind == "turn"), None) if k is not None else None
    if nxt is None:
        return {}
    msgs = []
    for m in nxt.body.get("messages") or []:
        blocks = m.get("content")
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]
        items = []
        for b in blocks or []:
            if not isinstance(b, dict):
                continue
            text = b.get("text") if isinstance(b.get("text"), str) else ""
            kind = b.get("type", "?")
            if kind == "text":
                if "continued from a previous conversation" in text or "<summary>" in text or "Summary:" in text:
                    kind = "summary"
                elif text.startswith("<system-reminder>"):
                    kind = "reminder"
            items.append({"type": kind, "chars": _text_len([b])})
        msgs.append({"role": m.get("role"), "blocks": items})
    system = nxt.body.get("system")
    return {
        "messages": msgs,
        "system_chars": _text_len(system if isinstance(system, list) else [{"text": system or ""}]),
        "tools": len(nxt.body.get("tools") or []),
    }


def measure(claude: Claude, model: str, *, blocking: bool = True, extras: bool = True) -> Cell:
    go = _runner(claude)
    cell = Cell(claude.version, model)
    cell.auto = find_edge(go, model)
    if blocking:
        cell.blocking = find_edge(go, model, {"DISABLE_AUTO_COMPACT": "1"})
    if extras:
        limit = cell.threshold or (cell.blocking.usage if cell.blocking and cell.blocking.usage else None) or 200_000
        cell.reactive = _reactive(go, model, max(40_000, limit // 2))
        if cell.threshold:
            cell.summarizer_fails = _summarizer_fails(
                go, model, cell.auto.usage or cell.threshold, cell.blocking.usage if cell.blocking else None
            )
            u = cell.auto.usage or cell.threshold
            r = go(_scenario(model, _script([max(1_000, u - 50_000), u + 2_000])))  # one compaction and the request after
            cell.after = after_shape(r.requests)
            r.close()
    return cell


def cell_dict(c: Cell) -> dict[str, Any]:
    d = asdict(c)
    for k in ("auto", "blocking"):
        if d.get(k):
            d[k].pop("stderr", None) if d[k].get("outcome") in ("compact", "none") else None
    d["enforced"], d["threshold"] = c.enforced, c.threshold
    return d


def load() -> dict[str, Any]:
    return json.loads(DATA.read_text()) if DATA.exists() else {"cells": []}


def _write(data: dict[str, Any]) -> None:
    data["about"] = __doc__.splitlines()[0]
    data["cells"] = sorted(data.get("cells", []), key=lambda c: (_vkey(c["version"]), c["model"]))
    data["releases"] = sorted(data.get("releases", []), key=lambda r: _vkey(r["version"]))
    data["boundaries"] = sorted(data.get("boundaries", []), key=lambda x: _vkey(x["first"]))
    tmp = DATA.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(DATA)


def _vkey(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


def _locked(fn: Callable[[], None]) -> None:
    """A change to the data file made under a lock (runs of the matrix and bisections may write at once)."""
    import fcntl

    with open(DATA.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        fn()


def save_cells(cells: list[dict[str, Any]]) -> None:
    _locked(lambda: _save_cells(cells))


def _save_cells(cells: list[dict[str, Any]]) -> None:
    data = load()
    keep = {(c["version"], c["model"]): c for c in data.get("cells", [])}
    for c in cells:
        keep[(c["version"], c["model"])] = c
    data["cells"] = list(keep.values())
    _write(data)


def save_release(version: str, facts: dict[str, Any]) -> None:
    _locked(lambda: _save_release(version, facts))


def _save_release(version: str, facts: dict[str, Any]) -> None:
    data = load()
    rel = {r["version"]: r for r in data.get("releases", [])}
    rel.setdefault(version, {"version": version}).update(facts)
    data["releases"] = list(rel.values())
    _write(data)


PREFERRED = ("claude-sonnet-4-6", "claude-opus-4-6", "claude-sonnet-4-5", "claude-opus-4-5", "claude-sonnet-4-0")


def analysis_rule(claude: Claude, model: str, usage: int) -> dict[str, Any]:
    """Whether the summary record keeps an <analysis> block that the summarizer wrote after its <summary> block."""
    txt = "<summary>\nS1 the summary\n</summary>\n<analysis>\nA1 the analysis\n</analysis>"
    r = run(
        _scenario(
            model,
            Script(
                turns=3,
                sizes=(max(1_000, usage - 50_000), usage + 2_000, usage + 2_000),
                stop_after_summary=True,
                summary_text=txt,
            ),
        ),
        claude,
        timeout=300,
    )
    try:
        for t in r.transcripts():
            for line in t.read_text(errors="replace").splitlines():
                if '"isCompactSummary":true' in line.replace(" ", ""):
                    body = json.dumps(json.loads(line).get("message"))
                    return {"analysis_after_summary_kept": "A1 the analysis" in body, "model": model}
        return {"error": "no summary record"}
    finally:
        r.close()


def release_probes(claude: Claude) -> dict[str, Any]:
    """What does not depend on the model: the leaf `--resume` continues from, where the context of a reply sampled in
    several iterations is read, and the files re-attached after a compaction (on a model whose threshold that release
    enforces, from its cells)."""
    facts: dict[str, Any] = {}

    def fact(name: str, measure: Callable[[], dict[str, Any]]) -> None:
        try:
            facts[name] = measure()
        except Exception as exc:  # a release that cannot run the probe: the row says so
            facts[name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}

    fact("leaf", lambda: leaf_rule(claude))
    fact("leaf_order", lambda: {"continues from": leaf_order_rule(claude)})
    fact("leaf_named", lambda: {"continues from": leaf_named_rule(claude)})
    fact("leaf_thinking", lambda: {"continues from": leaf_thinking_rule(claude)})
    fact("unanswered_call", lambda: {"continues": unanswered_call_rule(claude)})
    fact("repair_order", lambda: {"results": repair_order_rule(claude)})
    every = [c for c in load().get("cells", []) if not c.get("error")]
    have = sorted({c["version"] for c in every}, key=_vkey)
    # a release without cells of its own (measured for these probes only): the cells of the nearest one below it
    near = (
        claude.version
        if claude.version in have
        else max((v for v in have if _vkey(v) < _vkey(claude.version)), key=_vkey, default=None)
    )
    cells = {c["model"]: c for c in every if c["version"] == near}
    pick = next((m for m in PREFERRED if (cells.get(m) or {}).get("enforced")), None)
    if pick is not None:
        usage = cells[pick]["auto"]["usage"]
        fact("analysis", lambda: analysis_rule(claude, pick, usage))
    fact("iterations", lambda: {"last iteration": _iterations_last(claude)})  # where an iterated reply's context is read
    # which of the settings a what-if starts from this release reads (thresholds.read_by_release)
    fact(
        "settings",
        lambda: {
            "CLAUDE_CODE_AUTO_COMPACT_WINDOW": _env_window(claude),
            "autoCompactWindow in settings.json": _settings_window(claude),
            "autoCompactEnabled in settings.json": _settings_auto_compact_off(claude),
            "modelSettings autoCompactWindow in settings.json": _model_settings_window(claude),
        },
    )
    if pick is None:
        facts["reattach"] = {"error": "no model with an enforced threshold in this release's cells"}
    else:
        fact("reattach", lambda: dict(reattach_probe(claude, pick, usage), model=pick))
    return facts


def main(
    versions: list[str],
    models: list[str],
    *,
    jobs: int = 2,
    blocking: bool = True,
    extras: bool = True,
    only: str | None = None,
    probe_versions: list[str] | None = None,
    newer: bool = False,
) -> int:
    """Measure the cells of `versions` × `models` (and `NEWER_MODELS` on the catalog-era releases when `newer`),
    then the per-release probes of `versions` and `probe_versions`."""
    claudes = [install(v, log=lambda m: print(m, file=sys.stderr)) for v in versions]
    probe_claudes = claudes + [
        install(v, log=lambda m: print(m, file=sys.stderr)) for v in probe_versions or () if v not in versions
    ]
    if only in (None, "cells"):
        catalog_era = _vkey(CATALOG_ERA)
        todo = [
            (claude, m)
            for claude in claudes
            for m in [*models, *(x for x in NEWER_MODELS if newer and _vkey(claude.version) >= catalog_era and x not in models)]
        ]

        def one(item: tuple[Claude, str]) -> dict[str, Any]:
            claude, m = item
            try:
                c = cell_dict(measure(claude, m, blocking=blocking, extras=extras))
            except Exception as exc:  # a release that cannot run a probe: a row that says so
                c = {"version": claude.version, "model": m, "error": f"{type(exc).__name__}: {exc}"[:300]}
            print(f"{claude.version} {m}: {summary_words(c)}", file=sys.stderr, flush=True)
            save_cells([c])
            return c

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(one, todo))
    if only == "summarizer":  # the failing-summarizer probe again, on the cells already measured
        have = {(c["version"], c["model"]): c for c in load().get("cells", []) if c.get("enforced")}
        redo = [(claude, c) for claude in claudes for (v, m), c in have.items() if v == claude.version and m in models]

        def again(item: tuple[Claude, dict[str, Any]]) -> None:
            claude, c = item
            blk = (c.get("blocking") or {}).get("usage")
            c["summarizer_fails"] = _summarizer_fails(_runner(claude), c["model"], c["auto"]["usage"], blk)
            print(f"{claude.version} {c['model']}: {c['summarizer_fails']}", file=sys.stderr, flush=True)
            save_cells([c])

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(again, redo))
    if only == "repl":
        repl_checks()
    if only in (None, "release"):

        def rel(claude: Claude) -> None:
            facts = release_probes(claude)
            print(f"{claude.version}: {facts}", file=sys.stderr, flush=True)
            save_release(claude.version, facts)

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(rel, probe_claudes))
    write_doc()
    return 0


def summary_words(c: dict[str, Any]) -> str:
    if c.get("error"):
        return "error: " + c["error"]
    a = c.get("auto") or {}
    b = c.get("blocking") or {}
    words = (
        f"compacts at {a['count']:,}"
        if a.get("outcome") == "compact" and a.get("count")
        else f"auto: {a.get('outcome')} at usage {a.get('usage')}"
    )
    if b:
        words += f"; with auto-compact off: {b.get('outcome')}" + (f" at usage {b['usage']:,}" if b.get("usage") else "")
    if c.get("reactive"):
        words += f"; a refusal: {c['reactive']}"
    return words


def _inspector_words(c: dict[str, Any]) -> tuple[str, str, str]:
    """(inspector's answer now, the era formula's alone, match) for one cell."""
    from inspector.tokens.thresholds import Settings, thresholds

    ran = Settings(model=c["model"], other_api_host=True)  # (through the fake API's host, as the binary ran)
    final = thresholds(ran, version=c["version"])
    formula = thresholds(ran, version=c["version"], measured=False)

    def words(th: Any) -> str:
        auto = f"{th.auto_compact:,}" if th.auto_compact is not None else "not enforced"
        return f"{auto} / {th.blocking:,}{'' if th.blocks_before_sending else ' (not enforced)'} of {th.model_window:,}"

    a = c.get("auto") or {}
    enforced = a.get("outcome") == "compact"
    # the count Claude Code recorded (preTokens), or where a release records none (up to 1.0.70) the usage it compacted at
    count = a.get("count") if a.get("count") is not None else (a.get("usage") or 0) + (a.get("estimate") or 0)
    ok = (final.auto_compact is not None) == enforced and (not enforced or abs((final.auto_compact or 0) - count) <= 400)
    agree = (formula.auto_compact is not None) == enforced and (not enforced or abs((formula.auto_compact or 0) - count) <= 400)
    return words(final), words(formula), ("yes" if agree else "binary wins") if ok else "**no**"


def _md(text: str) -> str:
    """Text for a cell of a Markdown table: no HTML tag, no column break."""
    return text.replace("<", "&lt;").replace("|", "\\|")


def write_doc() -> None:
    data = load()
    cells = data.get("cells", [])
    lines = [
        "# The era matrix: each release measured on its own binary",
        "",
        "Generated by `python -m conformance --matrix` (conformance/matrix.py) from `inspector/claude/era_matrix.json`; do not "
        "edit.",
        "Each release ran in print mode (`-p`) against the fake API, offline (`CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`:",
        "its baked-in model catalog, no served one), with the defaults and the model named. *Compacts at* is the count",
        "Claude Code recorded (preTokens) at the smallest reported context after which it sent a summarize request,",
        "found by stepping the usage and narrowing to one token; it sits within a few hundred tokens of the threshold it",
        "compares with (its estimate of the messages after the last usage). *Blocks at* is the smallest usage after which,",
        "with `DISABLE_AUTO_COMPACT=1`, it refused to send the next request itself. *A refusal* is what followed the API's",
        '400 "prompt is too long" below the threshold; *summarizer failing* what followed when every summarize request',
        "failed. *inspector* is what `thresholds()` answers for that release and model (auto-compact / blocking of window),",
        "*formula* what the era table's arithmetic alone gives; *match*: yes when both agree with the binary, *binary",
        "wins* when the formula does not and inspector uses the measurement. The fake API is another host than",
        "Anthropic's, and inspector is asked as for such a host: on Anthropic's own, 2.1.144-2.1.284 give a model its",
        "native 1M window where these rows show 200,000 (`models.json`'s `native_1m`, read in the code and measured with",
        "the binaries told the host is Anthropic's).",
        "",
        "| release | model | compacts at | blocks at (auto-compact off) | a refusal | summarizer failing | inspector | formula "
        "| match |",
        "|---|---|---:|---:|---|---|---|---|---|",
    ]
    for c in cells:
        if c.get("error"):
            lines.append(f"| {c['version']} | `{c['model']}` | error: {c['error'][:80]} | | | | | | |")
            continue
        a, b = c.get("auto") or {}, c.get("blocking") or {}
        auto = (
            f"{a['count']:,}"
            if a.get("outcome") == "compact" and a.get("count")
            else (
                "never (up to 2.1M)"
                if a.get("outcome") == "none"
                else f"{a.get('usage') or 0:,} (usage: no preTokens recorded)"
                if a.get("outcome") == "compact"
                else f"{a.get('outcome')} at usage {a.get('usage') or 0:,}"
            )
        )
        blk = (
            f"{b['usage']:,} (usage)"
            if b.get("outcome") == "blocked"
            else "never (up to 2.1M)"
            if b.get("outcome") == "none"
            else "compacts anyway (DISABLE_AUTO_COMPACT not read)"
            if b.get("outcome") == "compact"
            else str(b.get("outcome") or "—")
        )
        final, formula, match = _inspector_words(c)
        lines.append(
            f"| {c['version']} | `{c['model']}` | {auto} | {blk} | {c.get('reactive') or '—'} | "
            f"{c.get('summarizer_fails') or '—'} | {final} | {formula} | {match} |"
        )
    bounds = data.get("boundaries", [])
    if bounds:
        lines += [
            "",
            "## Where the rules change",
            "",
            "Found by bisecting every release npm has between two that answer a probe differently (`python -m conformance",
            "--bisect PROBE LO HI`); a measurement of the table above answers only for the releases up to the next change.",
            "",
            "| first release | the one before | probe | what changes | releases tried |",
            "|---|---|---|---|---|",
        ]
        for b in bounds:
            tried = ", ".join(
                f"{v}: {'new' if a == b['answers']['first'] else 'old'}"
                for v, a in sorted(b.get("tried", {}).items(), key=lambda x: _vkey(x[0]))
            )
            now = "yes" if b["answers"]["first"] else "no"
            lines.append(
                f"| {b['first']} | {b['before']} | `{b['probe']}` | {_md(b['what'])} (from {b['first']}: {now}) | {tried} |"
            )
    if data.get("repl"):
        lines += [
            "",
            "## The REPL against print mode",
            "",
            "The matrix runs print mode; these releases were also run interactively (their REPL in tmux, `python -m",
            "conformance --matrix --only repl`) on the same sizes: the reply after which each compacted.",
            "",
            "| release | model | REPL compacted after | agrees with print mode |",
            "|---|---|---:|---|",
        ]
        for r in data["repl"]:
            after = f"{r['compacted_after_usage']:,}" if r.get("compacted_after_usage") else "no compaction"
            lines.append(f"| {r['version']} | `{r['model']}` | {after} | {'yes' if r.get('agrees') else '**no**'} |")
    lines += [
        "",
        "## Per release",
        "",
        "*Leaf*: a file that ends in a `turn_duration` system record below its last reply was resumed with `--resume`;",
        "the new prompt's parentUuid names the record it continues from. *Of two leaves*: two childless replies below the",
        "last one, the first written stamped later (`leaf_order_rule`). *A last-prompt off its line*: the last",
        "`last-prompt` names the last reply, with a reply below it and another beside it written last",
        "(`leaf_named_rule`). *Cut off while thinking*: the file ends in a reply of a thinking block only, nothing after",
        "it (`leaf_thinking_rule`). *Between results*: two parallel calls, the file cut after the second's result, the",
        "first's left out (`unanswered_call_rule`). *Off-chain results*: three parallel calls, the first result",
        "re-stamped after the second: the order the resumed request sends them in (`repair_order_rule`). *Re-attached*:",
        "eight files read (the newest one over 5,000 tokens), then a compaction: the files the first request after it",
        "carried, newest first, with the lines of each it carried (0: the file named only). *Analysis kept*: the",
        "summarizer wrote its `<analysis>` after its `<summary>`; whether the summary record kept it. *First request",
        "after*: the messages of the first request after a compaction on a Bash-only session (the summary and the",
        "reminders, in characters).",
        "",
        "| release | leaf `--resume` continues from | of two leaves | a last-prompt off its line | cut off while thinking "
        "| between results | off-chain results | re-attached after a compaction | analysis kept | first request after |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    after = {}
    for c in cells:
        if c.get("after") and c["version"] not in after:
            after[c["version"]] = c["after"]
    for r in data.get("releases", []):
        leaf = (r.get("leaf") or {}).get("trailing system record") or (r.get("leaf") or {}).get("error") or "—"
        ra = r.get("reattach") or {}
        re_words = ra.get("error") or ", ".join(f"{n} ({ra['lines'].get(n, 0)})" for n in ra.get("files", [])) or "—"
        an = r.get("analysis") or {}
        an_words = an.get("error") or ("yes" if an.get("analysis_after_summary_kept") else "no" if an else "—")
        shape = "; ".join(
            f"{m['role']}: " + ", ".join(f"{x['type']} {x['chars']:,}" for x in m["blocks"])
            for m in (after.get(r["version"]) or {}).get("messages", [])
        )
        order, named, thinking, unanswered, results = (
            (r.get(k) or {}).get(field) or (r.get(k) or {}).get("error") or "—"
            for k, field in (
                ("leaf_order", "continues from"),
                ("leaf_named", "continues from"),
                ("leaf_thinking", "continues from"),
                ("unanswered_call", "continues"),
                ("repair_order", "results"),
            )
        )
        lines.append(
            f"| {r['version']} | {leaf} | {order} | {named} | {thinking} | {unanswered} | {results} | {re_words} | {an_words} "
            f"| {shape or '—'} |"
        )
    from conformance.docblocks import write_page

    write_page(DOC, "\n".join(lines) + "\n")


LEAF_CASES = ("trailing system record", "trailing system record named by last-prompt")


def _append_bookkeeping(transcript: Path, named: bool) -> tuple[str, str]:
    """Append what an interactive session writes after its last reply (a turn_duration system record and, when
    `named`, a last-prompt record whose leafUuid names it); (the last message's uuid, the system record's uuid)."""
    import uuid as uuidlib

    lines = transcript.read_text().splitlines()
    recs = [json.loads(ln) for ln in lines if ln.strip()]
    last = next(r for r in reversed(recs) if r.get("type") in ("user", "assistant") and r.get("uuid"))
    sys_uuid = str(uuidlib.uuid4())
    rec = {
        "parentUuid": last["uuid"],
        "isSidechain": False,
        "type": "system",
        "subtype": "turn_duration",
        "durationMs": 1234,
        "timestamp": last.get("timestamp"),
        "uuid": sys_uuid,
        "isMeta": False,
        "userType": "external",
        "cwd": last.get("cwd"),
        "sessionId": last.get("sessionId"),
        "version": last.get("version"),
    }
    extra = [json.dumps(rec)]
    if named:
        extra.append(
            json.dumps({"type": "last-prompt", "lastPrompt": PROMPT, "leafUuid": sys_uuid, "sessionId": last.get("sessionId")})
        )
    with transcript.open("a") as f:
        f.write("\n".join(extra) + "\n")
    return last["uuid"], sys_uuid


def leaf_rule(claude: Claude, model: str = "claude-sonnet-4-5") -> dict[str, str]:
    """Which record `--resume` continues from when the file ends in bookkeeping: the parentUuid of the new prompt."""
    from conformance.runner import Sandbox

    out: dict[str, str] = {}
    for case in LEAF_CASES:
        sb = Sandbox.make()
        try:
            first = run(_scenario(model, Script(turns=1)), claude, sandbox=sb)
            ts = first.transcripts()
            if not ts:
                out[case] = "no transcript written"
                continue
            t = ts[0]
            msg, sysrec = _append_bookkeeping(t, named=case.endswith("last-prompt"))
            sc = Scenario("leaf", model, (Step("one more", Script(turns=0)),))
            run(sc, claude, sandbox=sb, resume_id=t.stem)
            recs = [json.loads(ln) for ln in t.read_text().splitlines() if ln.strip()]
            new = next((r for r in recs if r.get("type") == "user" and "one more" in json.dumps(r.get("message"))), None)
            if new is None:
                others = [p for p in sb.projects.rglob("*.jsonl") if p != t]
                out[case] = "the resumed session was written to another file" if others else "no new prompt recorded"
                continue
            parent = new.get("parentUuid")
            out[case] = (
                "the last message" if parent == msg else "the trailing system record" if parent == sysrec else "another record"
            )
        finally:
            sb.close()
    return out


def _continued_from(t: Path, known: set[Any], sb: Any) -> tuple[str | None, list[Any], str | None]:
    """After a resume with the prompt "one more": (the uuid of the known record the new prompt continues from, the
    records the resumed process wrote between them, or why there is no answer)."""
    recs = [json.loads(ln) for ln in t.read_text().splitlines() if ln.strip()]
    new = next((r for r in recs if r.get("type") == "user" and "one more" in json.dumps(r.get("message"))), None)
    if new is None:
        others = [p for p in sb.projects.rglob("*.jsonl") if p != t]
        return None, [], "the resumed session was written to another file" if others else "no new prompt recorded"
    by = {r.get("uuid"): r for r in recs if r.get("uuid")}
    j, between = new.get("parentUuid"), []
    while j and j not in known and j in by:
        between.append(by[j].get("type"))
        j = by[j].get("parentUuid")
    return j, between, None


def _branch_probe(
    claude: Claude, model: str, branches: tuple[tuple[str, str, int], ...], named: bool = False, thinking: bool = False
) -> str:
    """One turn, then childless replies appended below its last reply ("below": its children; "beside": children of
    its parent), each (its name, where, seconds after the last reply it is stamped), in that order, and, when `named`,
    a last-prompt naming the last reply; then `--resume`: the name of the record the new prompt continues from ("the
    named record" for the last reply), "another record", or why there is no answer. `thinking`: each appended reply
    holds a thinking block only (a reply cut off after its thinking), not a text."""
    import uuid as uuidlib
    from datetime import datetime, timedelta

    from conformance.runner import Sandbox

    sb = Sandbox.make()
    try:
        first = run(_scenario(model, Script(turns=1)), claude, sandbox=sb)
        ts = first.transcripts()
        if not ts:
            return "no transcript written"
        t = ts[0]
        recs = [json.loads(ln) for ln in t.read_text().splitlines() if ln.strip()]
        last = next(r for r in reversed(recs) if r.get("type") == "assistant" and r.get("uuid"))
        when = datetime.fromisoformat((last.get("timestamp") or "2026-01-01T00:00:00.000Z").replace("Z", "+00:00"))
        names = {last["uuid"]: "the named record"}
        lines = []
        for k, (name, where, later) in enumerate(branches):
            u = str(uuidlib.uuid4())
            names[u] = name
            rec = dict(last, uuid=u, parentUuid=last["uuid"] if where == "below" else last.get("parentUuid"))
            rec["timestamp"] = (when + timedelta(seconds=later)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
            text = [{"type": "text", "text": name}]
            rec["message"] = dict(last.get("message") or {}, id=f"msg_branch_probe_{k}", content=text)
            if thinking:  # as a streamed reply's first fragment is written: its thinking, no stop reason yet
                content = [{"type": "thinking", "thinking": f"Thinking about {name}.", "signature": "c2lnbmF0dXJl"}]
                rec["message"].update(content=content, stop_reason=None)
            rec.pop("requestId", None)
            lines.append(json.dumps(rec))
        if named:
            lp = {"type": "last-prompt", "lastPrompt": PROMPT, "leafUuid": last["uuid"], "sessionId": last.get("sessionId")}
            lines.append(json.dumps(lp))
        with t.open("a") as f:
            f.write("\n".join(lines) + "\n")
        run(Scenario("branches", model, (Step("one more", Script(turns=0)),)), claude, sandbox=sb, resume_id=t.stem)
        parent, _, why = _continued_from(t, set(names), sb)
        return why or names.get(parent, "another record")
    finally:
        sb.close()


def leaf_order_rule(claude: Claude, model: str = "claude-sonnet-4-5") -> str:
    """Which of two childless replies `--resume` continues from when the file and the timestamps disagree: two
    assistant records below the last reply, the first written stamped a second later than the second ("the newest
    stamped" or "the last written", read from the new prompt's parentUuid)."""
    return _branch_probe(claude, model, (("the newest stamped", "below", 2), ("the last written", "below", 1)))


def leaf_thinking_rule(claude: Claude, model: str = "claude-sonnet-4-5") -> str:
    """Which record `--resume` continues from when the file ends in a reply cut off after its thinking (a thinking
    block only, no stop reason, nothing after it: a process killed while the model was thinking): "the thinking
    fragment" or "the reply before it" (the record it hangs off)."""
    ans = _branch_probe(claude, model, (("the thinking fragment", "below", 1),), thinking=True)
    return "the reply before it" if ans == "the named record" else ans


def leaf_named_rule(claude: Claude, model: str = "claude-sonnet-4-5") -> str:
    """Which record `--resume` continues from when the last `last-prompt` record names one off the last-written leaf's
    chain: below the last reply one childless reply, and beside that reply (a child of its parent) another, written
    last and stamped last; the last-prompt names the last reply. "the named record" (the last reply itself), "the
    last written" (the one beside it), "the reply below the named one"."""
    shapes = (("the reply below the named one", "below", 1), ("the last written", "beside", 2))
    return _branch_probe(claude, model, shapes, named=True)


def resume_cut(transcript: Path, lines: int, version: str, model: str = "claude-sonnet-4-5") -> tuple[str | None, list[Any]]:
    """Resume the first `lines` lines of a transcript with a release (its session id and folder made the sandbox's):
    (the uuid of the record of the transcript the new prompt continues from, the records the resumed process wrote
    between them). How the leaf rules of inspector's tree were checked on real shapes: a file cut at a request, after
    a compaction's summary, inside a reply."""
    from conformance.runner import Sandbox

    claude = install(version)
    sb = Sandbox.make()
    try:
        first = run(_scenario(model, Script(turns=0)), claude, sandbox=sb)
        t = first.transcripts()[0]
        mine = [json.loads(ln) for ln in t.read_text().splitlines() if ln.strip()]
        sid = next(r["sessionId"] for r in mine if r.get("sessionId"))
        cwd = next(r["cwd"] for r in mine if r.get("cwd"))
        out = []
        for ln in transcript.read_text().splitlines()[:lines]:
            o = json.loads(ln)
            o.update({k: v for k, v in (("sessionId", sid), ("cwd", cwd)) if k in o})
            out.append(o)
        t.write_text("".join(json.dumps(o) + "\n" for o in out))
        run(Scenario("cut", model, (Step("one more", Script(turns=0)),)), claude, sandbox=sb, resume_id=t.stem)
        parent, between, _ = _continued_from(t, {o.get("uuid") for o in out}, sb)
        return parent, between
    finally:
        sb.close()


def _blocks_of(r: dict[str, Any] | None, kind: str) -> list[dict[str, Any]]:
    c = ((r or {}).get("message") or {}).get("content")
    return [b for b in c if isinstance(b, dict) and b.get("type") == kind] if isinstance(c, list) else []


def _parallel_turn(claude: Claude, model: str, calls: int, sb: Any) -> tuple[Path, list[str], list[Any], list[int]] | str:
    """One turn of a reply of `calls` parallel calls, each result a child of its call: (the transcript, its lines, their
    records, the lines of the result records), or why there is no such file ("on the chain": 2.0.x chained each result
    after the one before, so no call or result is off the chain)."""
    first = run(_scenario(model, Script(turns=1, parallel=calls)), claude, sandbox=sb)
    ts = first.transcripts()
    if not ts:
        return "no transcript written"
    lines = ts[0].read_text().splitlines()
    recs: list[Any] = [json.loads(ln) if ln.strip() else None for ln in lines]
    res = [k for k, r in enumerate(recs) if r and r.get("type") == "user" and _blocks_of(r, "tool_result")]
    if len(res) < calls:
        return f"{len(res)} result records written"
    if recs[res[1]].get("parentUuid") == recs[res[0]].get("uuid"):
        return "on the chain"
    return ts[0], lines, recs, res


def unanswered_call_rule(claude: Claude, model: str = "claude-sonnet-4-5") -> str:
    """Where `--resume` continues a file that ends between parallel calls' results: a reply of two parallel calls (each
    result a child of its call), the first call's result taken out and the file cut after the second's (a process
    killed while the first call ran). "below the unanswered call" (the first call's record) or "below the last
    result", read from the first record of the file the new prompt's chain reaches."""
    from conformance.runner import Sandbox

    sb = Sandbox.make()
    try:
        got = _parallel_turn(claude, model, 2, sb)
        if isinstance(got, str):
            return got
        t, lines, recs, res = got
        first_id = _blocks_of(recs[res[0]], "tool_result")[0].get("tool_use_id")
        call = next((k for k, r in enumerate(recs) if any(b.get("id") == first_id for b in _blocks_of(r, "tool_use"))), None)
        if call is None:
            return "the first result's call not found"
        kept = [ln for k, ln in enumerate(lines[: res[1] + 1]) if k != res[0]]
        t.write_text("\n".join(kept) + "\n")
        names = {recs[call]["uuid"]: "below the unanswered call", recs[res[1]]["uuid"]: "below the last result"}
        run(Scenario("unanswered", model, (Step("one more", Script(turns=0)),)), claude, sandbox=sb, resume_id=t.stem)
        known = {json.loads(ln).get("uuid") for ln in kept if ln.strip()}
        parent, _, why = _continued_from(t, known, sb)
        return why or names.get(parent, "another record")
    finally:
        sb.close()


def repair_order_rule(claude: Claude, model: str = "claude-sonnet-4-5") -> str:
    """In which order `--resume` sends a reply's results that are off the walked chain: a reply of three parallel calls
    (each result a child of its call, the chain through the last), the first result re-stamped after the second
    ("by timestamp" or "as written", read from the order of the results in the resumed request)."""
    from conformance.runner import Sandbox

    sb = Sandbox.make()
    try:
        got = _parallel_turn(claude, model, 3, sb)
        if isinstance(got, str):
            return got
        t, lines, recs, res = got
        a, b = recs[res[0]], recs[res[1]]
        a["timestamp"], b["timestamp"] = b["timestamp"], a["timestamp"]
        if a["timestamp"] == b["timestamp"]:
            return "the results have one timestamp"
        lines[res[0]], lines[res[1]] = json.dumps(a), json.dumps(b)
        t.write_text("\n".join(lines) + "\n")

        def ids(r: dict[str, Any]) -> list[str]:
            return [x["tool_use_id"] for x in r["message"]["content"] if isinstance(x, dict) and x.get("type") == "tool_result"]

        written = ids(a) + ids(b)
        sc = Scenario("repair-order", model, (Step("one more", Script(turns=0)),))
        again = run(sc, claude, sandbox=sb, resume_id=t.stem)
        req = next((q for q in again.exchange if q.kind == "turn"), None)
        if req is None:
            return "no request after the resume"
        sent = [
            x["tool_use_id"]
            for m in req.body.get("messages") or []
            if isinstance(m.get("content"), list)
            for x in m["content"]
            if isinstance(x, dict) and x.get("type") == "tool_result" and x.get("tool_use_id") in written
        ]
        if not sent:
            return "not sent"  # the release puts no off-chain result back (2.1.20-2.1.75)
        if sent == written:
            return "as written"
        if sent == written[::-1]:
            return "by timestamp"
        return f"another order ({sent})"
    finally:
        sb.close()


REATTACH_FILES = {f"f{k}.txt": "".join(f"file {k} line {n:04d} " + "x" * 40 + "\n" for n in range(1, 101)) for k in range(1, 8)}
REATTACH_FILES["f8.txt"] = "".join(f"big line {n:05d} " + "y" * 60 + "\n" for n in range(1, 401))


def reattach_probe(claude: Claude, model: str, usage: int) -> dict[str, Any]:
    """Read eight files, a minute apart in age (seven of 100 lines; the newest of 400, about 7,600 tokens: over the
    5,000 a re-attached file may have, under what Read returns), then compact: which files the first request after
    the compaction carries again, in which order and how many of each one's lines (0: named only)."""
    names = list(REATTACH_FILES)
    sizes = [20_000 + 5_000 * k for k in range(len(names))] + [usage + 2_000]
    script = Script(turns=len(sizes), sizes=tuple(sizes), stop_after_summary=True, tool="Read", cmd="{work}/f{k}.txt")
    sc = Scenario("reattach", model, (Step("read the files", script),), tool="Read", files=dict(REATTACH_FILES))
    r = run(sc, claude, timeout=300)
    try:
        seq = r.exchange
        k = next((n for n, q in enumerate(seq) if q.kind == "summary" and q.answer == "summary"), None)
        nxt = next((q for q in seq[k + 1 :] if q.kind == "turn"), None) if k is not None else None
        if nxt is None:
            return {"error": "no compaction"}
        text = json.dumps(nxt.body.get("messages") or [])
        found = []
        for name in names:
            i = text.find(name)
            if i >= 0:
                body = REATTACH_FILES[name].splitlines()
                lines = sum(1 for ln in body if ln.split(" x")[0].split(" y")[0] in text)
                found.append((i, name, lines))
        found.sort()
        return {
            "reads": len(names),
            "files": [n for _, n, _ in found],
            "lines": {n: ln for _, n, ln in found},
            "after_chars": len(text),
        }
    finally:
        r.close()


# -- bisection: the first release where a probe's answer changes -------------------------------------------------


def _blocks_at_effective(claude: Claude) -> bool:
    pts, _ = probe(_runner(claude), "claude-sonnet-4-5", [180_000, 190_000], {"DISABLE_AUTO_COMPACT": "1"})
    return bool(pts) and pts[0].outcome == "blocked"


def _enforces(model: str) -> Callable[[Claude], bool]:
    def f(claude: Claude) -> bool:
        pts, _ = probe(_runner(claude), model, [100_000, 170_000, 175_000])
        return any(p.outcome == "compact" for p in pts)

    return f


def _settings_auto_compact_off(claude: Claude) -> bool:
    """autoCompactEnabled false in ~/.claude/settings.json: True when Claude Code does not compact where it does
    without the setting (the setting is read), False when it compacts all the same (only ~/.claude.json's is read:
    2.1.88's `autoCompactEnabled` is a global config key). A 100,000 window from the environment puts the threshold at
    67,000 where the variable is read; the sizes go on past the default window's threshold for the releases that do
    not read it (2.1.21)."""
    return _turns_auto_compact_off(
        claude,
        "claude-sonnet-4-5",
        [30_000, 80_000, 85_000, 172_000, 176_000],
        base={"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"},
        settings={"autoCompactEnabled": False},
        what="setting",
    )


def _turns_auto_compact_off(
    claude: Claude,
    model: str,
    sizes: list[int],
    *,
    base: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    settings: dict[str, Any] | None = None,
    what: str,
) -> bool:
    """Whether a place that turns auto-compact off (`env` over the environment `base`, or `settings`) is read: False
    when Claude Code compacts at one of `sizes` with it, True when it does not and compacts without it (in `base`)."""
    go = _runner(claude)
    pts, _ = probe(go, model, sizes, {**(base or {}), **(env or {})} or None, settings)
    if any(p.outcome == "compact" for p in pts):
        return False
    control, _ = probe(go, model, sizes, base)
    if not any(p.outcome == "compact" for p in control):
        raise RuntimeError(f"the probe ended without a verdict: no compaction without the {what} either ({control})")
    return True


def _env_auto_compact_off(claude: Claude) -> bool:
    """DISABLE_AUTO_COMPACT=1 on claude-opus-4-5 (a 32,000 max output: the threshold 155,000 before 2.1.21, 167,000
    after): True when Claude Code does not compact where it does without the variable (it is read: the requests go on,
    or it refuses one at its blocking limit), False when it compacts all the same (the era matrix's cells: 1.0.128,
    2.0.0 and 2.0.76 compact, 2.1.20 refuses at its blocking limit)."""
    return _turns_auto_compact_off(
        claude,
        "claude-opus-4-5",
        [30_000, 150_000, 170_000, 180_000, 190_000],
        env={"DISABLE_AUTO_COMPACT": "1"},
        what="variable",
    )


def _env_pct(claude: Claude) -> bool:
    """CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=50 on claude-opus-4-5 (its threshold half the effective window: 84,000 before
    2.1.21, 90,000 after, where the variable is read): True when Claude Code compacts at 100,000 (it is read), False
    when the requests go on to 120,000 (its own threshold, 155,000 or more: 1.0.128 compacted claude-sonnet-5 at 183,000
    with 85 set, generated seed 197017)."""
    env = {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"}
    return _window_read(claude, env, None, "claude-opus-4-5", (30_000, 100_000, 120_000), at=100_000)


def _one_m_suffix(claude: Claude) -> bool:
    """claude-sonnet-4-5[1m]: True when Claude Code gives it a 1M window (the requests go on past 190,000), False when
    it compacts at its 200,000 window's threshold (the era matrix's cells: 1.0.128 and 2.0.0 compacted it at 155,000,
    2.0.76 at 955,000; 1.0.128 compacted claude-opus-5[1m] at 164,000, generated seed 197033)."""
    return not _window_read(claude, None, None, "claude-sonnet-4-5[1m]", (30_000, 160_000, 190_000), at=160_000)


def _reserve_share(claude: Claude) -> bool:
    """claude-sonnet-4-0 with the defaults: True when Claude Code compacts at 154,700 (a share of the window: 0.92 of
    200,000 less the model's 32,000 of output, 154,560, read in 1.0.51's code), False when the requests go on to
    154,900 (the window less the output and a 13,000 buffer, 155,000: the era matrix's 1.0.128 cells)."""
    return _window_read(claude, None, None, "claude-sonnet-4-0", (30_000, 154_700, 154_900), at=154_700)


def _window_less_output(claude: Claude) -> bool:
    """claude-sonnet-4-0 with the defaults: True when Claude Code compacts at 160,000 (its threshold a share of the
    200,000 window less the model's 32,000 of output: 154,560 in 1.0.17's code, 155,000 from 1.0.71), False when the
    request at 160,000 goes on and the one at 166,000 compacts (0.92 of a fixed 180,000, 165,600: 1.0.0's code)."""
    pts, _ = probe(_runner(claude), "claude-sonnet-4-0", [30_000, 160_000, 166_000])
    stop = next((p for p in pts if p.outcome != "pass"), None)
    if stop is None or stop.outcome != "compact" or stop.usage not in (160_000, 166_000):
        raise RuntimeError(f"the probe ended without a verdict ({pts})")
    return stop.usage == 160_000


def _blocks_at_all(claude: Claude) -> bool:
    """claude-sonnet-4-0 with autoCompactEnabled false in ~/.claude.json (the global config, read by every release):
    True when Claude Code refuses to send a request itself above its blocking limit (197,000 up to 2.1.74), False when
    it sends every one, to 1,010,000. The releases up to 2.0.76 have no blocking limit in their code (`isAtBlockingLimit`
    first appears in 2.0.77's, checked where a query starts); in print mode 2.0.77-2.1.2 send every request too (with
    DISABLE_AUTO_COMPACT as well), 2.1.3 is the first that refuses (bisected): not recorded as a change of the rules,
    as what the REPL of 2.0.77-2.1.2 does at a new prompt was not measured."""
    pts, _ = probe(
        _runner(claude),
        "claude-sonnet-4-0",
        [30_000, 150_000, 170_000, 190_000, 198_000, 205_000, 460_000, 1_010_000],
        config={"autoCompactEnabled": False},
    )
    if any(p.outcome == "compact" for p in pts):
        raise RuntimeError(f"the probe ended without a verdict: it compacted with auto-compact off ({pts})")
    if any(p.outcome == "blocked" for p in pts):
        return True
    if len(pts) < 8:
        raise RuntimeError(f"the probe ended without a verdict ({pts})")
    return False


def _big_file_named(claude: Claude) -> bool:
    """`reattach_probe` on claude-sonnet-4-0 compacted past 155,000: True when the compaction re-attaches the newest file
    read, of 400 lines (about 7,600 tokens), by its name only (over the 5,000 tokens a re-attached file may have), False
    when it re-attaches it whole (1.0.70 and 1.0.71 did)."""
    got = reattach_probe(claude, "claude-sonnet-4-0", 155_000)
    lines = got.get("lines") or {}
    if "f8.txt" not in lines:
        raise RuntimeError(f"the probe ended without a verdict ({got})")
    return lines["f8.txt"] == 0


def _compaction_written(claude: Claude) -> bool:
    """claude-sonnet-4-0 compacted past its threshold in print mode: True when the transcript records the compaction
    (a compact boundary or a summary record), False when the records after it continue the chain as if nothing happened
    (1.0.70 and 1.0.71 wrote neither: their cells have no preTokens)."""
    go = _runner(claude)
    r = go(_scenario("claude-sonnet-4-0", _script([30_000, 160_000, 40_000])))
    try:
        pts = points_of(r.requests, _boundaries(r))
        if not any(p.outcome == "compact" for p in pts):
            raise RuntimeError(f"the probe ended without a verdict: no compaction ({pts})")
        return any(o.get("subtype") == "compact_boundary" or o.get("isCompactSummary") is True for o in _records(r))
    finally:
        r.close()


def _window_read(
    claude: Claude,
    env: dict[str, str] | None,
    settings: dict[str, Any] | None,
    model: str = "claude-sonnet-4-5",
    sizes: tuple[int, ...] = (30_000, 80_000, 85_000),
    at: int | None = None,
) -> bool:
    """A window asked for by `env` or `settings` (by default a 100,000 auto-compact window on claude-sonnet-4-5, its
    threshold 67,000): True when Claude Code compacts at one of `sizes` (at `at`, when given: it is read), False when
    every request goes on (the model's own window)."""
    pts, _ = probe(_runner(claude), model, list(sizes), env, settings)
    if any(p.outcome == "compact" and at in (None, p.usage) for p in pts):
        return True
    if len(pts) < 3 or any(p.outcome != "pass" for p in pts):
        raise RuntimeError(f"the probe ended without a verdict ({pts})")
    return False


def _env_window(claude: Claude) -> bool:
    """CLAUDE_CODE_AUTO_COMPACT_WINDOW=100000 (2.1.21 has no such variable)."""
    return _window_read(claude, {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"}, None)


def _env_window_floor(claude: Claude) -> bool:
    """CLAUDE_CODE_AUTO_COMPACT_WINDOW=80000 on claude-sonnet-4-5: True when Claude Code raises it to 100,000 (its
    threshold 67,000: the replies at 50,000 and 55,000 go on, the one at 70,000 compacts), False when it takes it as
    it is (threshold 47,000: the reply at 50,000 compacts). A release that does not read the variable has no verdict."""
    env = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "80000"}
    pts, _ = probe(_runner(claude), "claude-sonnet-4-5", [30_000, 50_000, 55_000, 70_000], env)
    stop = next((p for p in pts if p.outcome != "pass"), None)
    if stop is not None and stop.outcome == "compact" and stop.usage in (50_000, 70_000):
        return stop.usage == 70_000
    raise RuntimeError(f"the probe ended without a verdict ({pts})")


def _settings_window(claude: Claude) -> bool:
    """autoCompactWindow 100,000 in ~/.claude/settings.json, no environment (2.1.88 has no such setting)."""
    return _window_read(claude, None, {"autoCompactWindow": 100_000})


def _model_settings_window(claude: Claude) -> bool:
    """modelSettings.claude-sonnet-4-5.autoCompactWindow 100,000 in ~/.claude/settings.json (2.1.238 has no
    modelSettings: generated seed 159003 compacted at claude-sonnet-5's own threshold there)."""
    return _window_read(claude, None, {"modelSettings": {"claude-sonnet-4-5": {"autoCompactWindow": 100_000}}})


def _max_context_tokens(claude: Claude) -> bool:
    """CLAUDE_CODE_MAX_CONTEXT_TOKENS=120000 on a model no catalog has (claude-foo-1): True when Claude Code sizes its
    window so (the threshold 87,000: the reply at 95,000 compacts), False when the requests go on (its unknown model's
    own window: 200,000 or 1M)."""
    env = {"CLAUDE_CODE_MAX_CONTEXT_TOKENS": "120000"}
    return _window_read(claude, env, None, model="claude-foo-1", sizes=(30_000, 95_000, 100_000))


def _blocks_another_window(claude: Claude) -> bool:
    """A session grown on claude-sonnet-4-5[1m] to 240,000 tokens, then resumed on claude-haiku-4-5, whose threshold the
    release does not enforce (an `auto` window) and whose blocking limit is below that: True when the resumed process
    compacts before its first request (its estimate is blocked: "routing through reactive"), False when it sends the
    request as it is. The same growth on claude-haiku-4-5 alone passes its blocking limit on every release from 2.1.153
    without a compaction (the era matrix's cells); only the switch from a larger window shows the rule."""
    first = Script(turns=2, sizes=(20_000, 21_000, 22_000))
    grow = Script(turns=2, sizes=(150_000, 230_000, 240_000))
    back = Script(turns=1, sizes=(250_000, 260_000), after=30_000)
    sc = Scenario(
        "matrix",
        "claude-haiku-4-5",
        (
            Step(PROMPT, first),
            Step("continue", grow, resume="resume", model="claude-sonnet-4-5[1m]"),
            Step("go on", back, resume="resume", model="claude-haiku-4-5"),
        ),
    )
    r = run(sc, claude, timeout=300)
    try:
        grown = [q.tokens for q in r.steps[1].requests if q.kind == "turn"]
        seq = [q for q in r.steps[2].requests if q.kind in ("turn", "summary")]
        if 240_000 not in grown or not seq:
            raise RuntimeError(f"the probe ended without a verdict (grown to {grown}, then {[q.kind for q in seq]})")
        if seq[0].kind == "summary":
            return True
        if seq[0].tokens == 250_000 and seq[0].answer != "prompt_too_long":
            return False
        raise RuntimeError(f"the probe ended without a verdict ({[(q.kind, q.answer, q.tokens) for q in seq]})")
    finally:
        r.close()


def _api_error_left_out(claude: Claude) -> bool:
    """A request refused as too long (the reply written as an API error, "Prompt is too long"), then the session resumed:
    True when the resumed process's requests leave the error reply out, False when they send it as an assistant
    message (1.0.128's did: generated seed 197000)."""
    first = Script(turns=3, start=20_000, step=15_000, ptl_at=45_000)
    then = Script(turns=0, start=20_000, step=1_000)
    sc = Scenario("matrix", "claude-sonnet-4-5", (Step(PROMPT, first), Step("continue", then, resume="resume")))
    r = run(sc, claude, timeout=300)
    try:
        if not any(q.answer == "prompt_too_long" for q in r.steps[0].requests):
            raise RuntimeError("the probe ended without a verdict: no request was refused")
        seen: list[bool] = []  # for each request of the resumed process: whether it sends the error reply
        for q in r.steps[1].requests:
            if q.kind != "turn":
                continue
            texts = [
                str(b.get("text", ""))
                for msg in q.body.get("messages") or ()
                if msg.get("role") == "assistant" and isinstance(msg.get("content"), list)
                for b in msg["content"]
                if isinstance(b, dict) and b.get("type") == "text"
            ]
            seen.append(any(t.startswith("Prompt is too long") for t in texts))
        if not seen:
            raise RuntimeError("the probe ended without a verdict: the resumed process sent nothing")
        return not any(seen)
    finally:
        r.close()


def _foreign_thinking_left_out(claude: Claude) -> bool:
    """Replies on claude-sonnet-4-0 that think and call a tool, then the session resumed on claude-haiku-4-5: True
    when its requests leave out the other model's reasoning (the first reply's thinking block), False when they send
    it as written."""
    first = Script(turns=2, sizes=(20_000, 21_000, 22_000), thinking="thinking")
    then = Script(turns=1, sizes=(23_000, 24_000), thinking="thinking")
    sc = Scenario(
        "matrix",
        "claude-sonnet-4-0",
        (Step(PROMPT, first), Step("continue", then, resume="resume", model="claude-haiku-4-5")),
    )
    r = run(sc, claude, timeout=300)
    try:
        thought: set[str] = set()  # the replies of the first model that thought, by message id
        calls: dict[str, str] = {}  # a tool call's id -> the message id of the reply that made it
        for t in r.transcripts():
            for line in t.read_text(errors="replace").splitlines():
                o = json.loads(line) if line.strip() else {}
                m = o.get("message") or {}
                if o.get("type") == "assistant" and isinstance(m.get("content"), list) and "sonnet" in str(m.get("model")):
                    for b in m["content"]:
                        if b.get("type") == "thinking":
                            thought.add(str(m.get("id")))
                        elif b.get("type") == "tool_use":
                            calls[str(b.get("id"))] = str(m.get("id"))
        seen: list[bool] = []  # for each reply of the first model that thought, sent on the second: its reasoning sent
        for q in r.steps[1].requests:
            if q.kind != "turn" or "haiku" not in str(q.body.get("model")):
                continue
            for msg in q.body.get("messages") or ():
                c = msg.get("content") if msg.get("role") == "assistant" else None
                ids = [calls.get(str(b.get("id"))) for b in c if b.get("type") == "tool_use"] if isinstance(c, list) else []
                if ids and ids[0] in thought:
                    seen.append(any(b.get("type") == "thinking" for b in c))
        if not thought or not seen:
            raise RuntimeError(f"the probe ended without a verdict (replies that thought: {len(thought)}, sent: {seen})")
        return not any(seen)
    finally:
        r.close()


def _iterations_last(claude: Claude) -> bool:
    """Replies sampled in two iterations, each at 90,000-100,000 tokens (the top-level usage their sum, 180,000-
    200,000, over claude-sonnet-4-5's threshold): True when Claude Code reads the context from the last iteration
    (every request is sent on), False when it compacts or blocks on the sum."""
    pts, _ = probe(_runner(claude), "claude-sonnet-4-5", [90_000, 95_000, 100_000], iterations=2)
    if any(p.outcome != "pass" for p in pts):
        return False
    if len(pts) < 3:
        raise RuntimeError(f"the probe ended without a verdict ({pts})")
    return True


def _leaf_trailing(claude: Claude) -> bool:
    return leaf_rule(claude)["trailing system record"] == "the trailing system record"


def _verdict(name: str, rule: Callable[[Claude], str], new: tuple[str, ...], old: tuple[str, ...]) -> Callable[[Claude], bool]:
    """A probe of `rule`'s answer: True for one of `new`, False for one of `old`; any other answer has no verdict."""

    def f(claude: Claude) -> bool:
        ans = rule(claude)
        if ans not in new + old:
            raise RuntimeError(f"the {name} probe ended without a verdict ({ans})")
        return ans in new

    return f


def _analysis_kept(claude: Claude) -> bool:
    return bool(analysis_rule(claude, "claude-sonnet-4-6", 166_943).get("analysis_after_summary_kept"))


# name -> (probe, what changes where it flips, whether it is a rule of the thresholds (a cell) or of a release)
PROBES: dict[str, tuple[Callable[[Claude], bool], str, str]] = {
    "blocking": (
        _blocks_at_effective,
        "the blocking limit becomes the effective window − 3,000 (before: the window − 3,000)",
        "cells",
    ),
    "enforce-sonnet-4-5": (_enforces("claude-sonnet-4-5"), "whether claude-sonnet-4-5 compacts at its threshold", "cells"),
    "enforce-sonnet-4-6": (_enforces("claude-sonnet-4-6"), "whether claude-sonnet-4-6 compacts at its threshold", "cells"),
    "enforce-sonnet-5": (
        _enforces("claude-sonnet-5"),
        "whether claude-sonnet-5 compacts at a 200,000 window's threshold (unknown to the catalog, then a 200,000 "
        "window, then a native 1M one)",
        "cells",
    ),
    "enforce-mythos-5-2": (
        _enforces("claude-mythos-5-2"),
        "whether claude-mythos-5-2 compacts at a 200,000 window's threshold (a model no catalog names before 2.1.321: "
        "2.1.237 ran it as claude-mythos-5, unenforced)",
        "cells",
    ),
    "leaf": (_leaf_trailing, "--resume continues from a trailing bookkeeping record (before: from the last message)", "release"),
    "leaf-order": (
        _verdict("leaf-order", leaf_order_rule, ("the last written",), ("the newest stamped",)),
        "--resume continues from the last-written of two childless replies (before: the newest stamped)",
        "release",
    ),
    "leaf-named": (
        _verdict("leaf-named", leaf_named_rule, ("the named record",), ("the last written",)),
        "--resume continues from the record the last last-prompt names when it is off the last-written leaf's chain "
        "(before: from a leaf)",
        "release",
    ),
    "leaf-thinking": (
        _verdict("leaf-thinking", leaf_thinking_rule, ("the reply before it",), ("the thinking fragment",)),
        "--resume leaves out a last reply cut off after its thinking and continues from the record before it (before: "
        "from the thinking)",
        "release",
    ),
    "unanswered-call": (
        _verdict("unanswered-call", unanswered_call_rule, ("below the unanswered call",), ("below the last result",)),
        "--resume of a file that ends between parallel calls' results continues below the call left without one "
        "(before: below the last result)",
        "release",
    ),
    "repair": (
        _verdict("repair", repair_order_rule, ("as written", "by timestamp"), ("not sent",)),
        "--resume puts a reply's results that are off the walked chain back (before: it sends none of them)",
        "release",
    ),
    "repair-order": (
        _verdict("repair-order", repair_order_rule, ("as written",), ("by timestamp",)),
        "--resume sends a reply's results that are off the walked chain in the order written (before: by timestamp)",
        "release",
    ),
    "settings-auto-compact": (
        _settings_auto_compact_off,
        "autoCompactEnabled false in ~/.claude/settings.json turns auto-compact off (before: only ~/.claude.json's "
        "autoCompactEnabled, a global config key, does)",
        "release",
    ),
    "env-auto-compact": (
        _env_auto_compact_off,
        "DISABLE_AUTO_COMPACT turns auto-compact off (before: the variable is not read, it compacts all the same)",
        "release",
    ),
    "env-pct": (
        _env_pct,
        "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE sets the auto-compact threshold to a share of the effective window (before: the "
        "variable is not read)",
        "release",
    ),
    "one-m-suffix": (
        _one_m_suffix,
        "a model named with [1m] gets a 1M window (before: the suffix is not read, the model's 200,000 window)",
        "release",
    ),
    "window-less-output": (
        _window_less_output,
        "the auto-compact threshold is worked out from the 200,000 window less the model's output (before: 0.92 of a "
        "fixed 180,000 for every model)",
        "cells",
    ),
    "compaction-written": (
        _compaction_written,
        "a compaction in print mode is written to the transcript (a boundary or a summary record; before: nothing)",
        "release",
    ),
    "big-file-named": (
        _big_file_named,
        "a compaction re-attaches a file over 5,000 tokens by its name only (before: whole)",
        "release",
    ),
    "blocks-at-all": (
        _blocks_at_all,
        "with auto-compact off, Claude Code refuses to send a request above its blocking limit (before: it has none, "
        "and sends every request for the API to refuse)",
        "release",
    ),
    "reserve-share": (
        _reserve_share,
        "the auto-compact threshold is the window less the model's output less 13,000 (before: 0.92 of the window less the "
        "output)",
        "cells",
    ),
    "env-window": (
        _env_window,
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW sets the auto-compact window (before: the variable is not read)",
        "release",
    ),
    "env-window-floor": (
        _env_window_floor,
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW below 100,000 is raised to 100,000 (before: taken as it is)",
        "release",
    ),
    "settings-window": (
        _settings_window,
        "autoCompactWindow in ~/.claude/settings.json sets the auto-compact window (before: the setting is not read)",
        "release",
    ),
    "model-settings-window": (
        _model_settings_window,
        "modelSettings.<model>.autoCompactWindow in ~/.claude/settings.json sets that model's auto-compact window "
        "(before: modelSettings is not read)",
        "release",
    ),
    "max-context-tokens": (
        _max_context_tokens,
        "CLAUDE_CODE_MAX_CONTEXT_TOKENS sizes the window of a model no catalog has (before: the variable is not read)",
        "release",
    ),
    "api-error-left-out": (
        _api_error_left_out,
        'a resumed session\'s requests leave out a reply written as an API error ("Prompt is too long") (before: sent '
        "as an assistant message)",
        "release",
    ),
    "foreign-thinking": (
        _foreign_thinking_left_out,
        "a request leaves out the reasoning of the replies another model wrote (before: sent as written)",
        "release",
    ),
    "blocking-another-window": (
        _blocks_another_window,
        "a session resumed on a model whose threshold is not enforced, above that model's blocking limit from another "
        "model's larger window, compacts before its first request (before: sends it)",
        "release",
    ),
    "analysis": (_analysis_kept, "an <analysis> after the <summary> is kept in the summary record", "release"),
    "iterations": (
        _iterations_last,
        "the context of a reply sampled in several iterations is its last iteration's (before: the top-level sum)",
        "release",
    ),
}


def npm_versions() -> list[str]:
    import subprocess

    r = subprocess.run(
        ["npm", "view", "@anthropic-ai/claude-code", "versions", "--json"], capture_output=True, text=True, timeout=120
    )
    return json.loads(r.stdout)


def bisect_release(name: str, lo: str, hi: str, log: Callable[[str], None] = print) -> dict[str, Any]:
    """The first release in (lo, hi] whose answer to the probe `name` is hi's, by bisection over every release npm
    has between them (each installed on first use); recorded in the data's boundaries."""
    f, what, kind = PROBES[name]
    cand = [v for v in npm_versions() if _vkey(lo) < _vkey(v) <= _vkey(hi)]
    old = f(install(lo))
    new = f(install(hi))
    if old == new:
        raise RuntimeError(f"{lo} and {hi} answer the same ({old}): no change to bisect")
    a, b = -1, len(cand) - 1  # cand[b] answers `new`; lo (index -1) answers `old`
    seen = {lo: old, hi: new}
    while b - a > 1:
        m = (a + b) // 2
        ans = f(install(cand[m]))
        seen[cand[m]] = ans
        log(f"{cand[m]}: {ans}")
        if ans == new:
            b = m
        else:
            a = m
    first, before = cand[b], (cand[a] if a >= 0 else lo)
    entry = {
        "probe": name,
        "kind": kind,
        "first": first,
        "before": before,
        "what": what,
        "answers": {"before": old, "first": new},
        "tried": seen,
    }

    def put() -> None:
        data = load()
        keep = [
            x for x in data.get("boundaries", []) if not (x.get("probe") == name and _vkey(lo) < _vkey(x["first"]) <= _vkey(hi))
        ]
        data["boundaries"] = sorted(keep + [entry], key=lambda x: _vkey(x["first"]))
        _write(data)

    _locked(put)
    return entry


# releases and models whose REPL is run too (`--only repl`): the matrix measures print mode, real sessions are mostly
# the REPL's; each check must compact after the same reply as print mode (or not at all where print mode does not)
REPL_CHECKS = (
    ("2.1.20", "claude-opus-4-5"),
    ("2.1.111", "claude-haiku-4-5"),
    ("2.1.158", "claude-sonnet-4-5"),
    ("2.1.158", "claude-sonnet-4-6"),
    ("2.1.219", "claude-opus-5"),
    ("2.1.328", "claude-haiku-4-5"),
    ("2.1.328", "claude-sonnet-4-6"),
)


def repl_checks(jobs: int = 1) -> None:
    from conformance.repl import repl_run

    cells = {(c["version"], c["model"]): c for c in load().get("cells", []) if not c.get("error")}
    out = []
    for v, m in REPL_CHECKS:
        c = cells.get((v, m))
        if c is None:
            continue
        u = (c.get("auto") or {}).get("usage") if c.get("enforced") else None
        th = u or 167_000
        sizes = (100_000, th - 1_000, th + 1_000, th + 3_000, th + 6_000)
        got = repl_run(install(v), m, sizes)
        # print mode compacts before the request after the first reply at or above its usage edge
        want = next((s for s in sizes if u is not None and s >= u), None)
        if not got["requests"]:
            raise RuntimeError(f"the {v} REPL sent no request: the prompt was not submitted")
        got["agrees"] = got["compacted_after_usage"] == want
        got.pop("screen", None)
        print(
            f"REPL {v} {m}: compacted after {got['compacted_after_usage']} (print mode: {want}): "
            f"{'agrees' if got['agrees'] else 'DIFFERS'}",
            file=sys.stderr,
            flush=True,
        )
        out.append(got)

    def put() -> None:
        data = load()
        data["repl"] = out
        _write(data)

    _locked(put)


def reminder_style(claude: Claude, model: str) -> str:
    """How a release's first request on `model` carries its reminders (one print-mode turn): "system" (system-role
    entries inside <system-reminder>), "system-bare" (the same without the wrapper) or "user" (no system-role entry:
    reminders as user text). What `inspector.claude.wire.style_for_model` answers for a session with no recorded
    request; tests/conformance/test_conformance.py keeps the table measured with

        python -c "from conformance.matrix import reminder_style; from conformance.runner import install; \\
                   print(reminder_style(install('2.1.332'), 'claude-opus-5'))"
    """
    from inspector.claude.wire import style_of_request

    r = run(_scenario(model, Script(turns=1)), claude)
    try:
        styles = {style_of_request(q.body.get("messages") or []) or "user" for q in r.exchange}
    finally:
        r.close()
    if len(styles) != 1:
        raise RuntimeError(f"{model}: the requests carried {sorted(styles)}")
    return styles.pop()
