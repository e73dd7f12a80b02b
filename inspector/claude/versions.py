"""What each Claude Code release did about the context window: one table that `tokens`, `compact` and
`edit` ask instead of comparing version strings where they stand.

Claude Code's rules changed many times (format-2.1.3xx.md, Appendix B). A session is explained by
the rules of the release that wrote it, and every answer says which rules were applied and on what
evidence: measured on real sessions, read in a release's code, or carried over from the nearest release
that was (an assumption, said as such). An unknown, newer release gets the newest known rules and says so.

The eras (first release of each, inclusive; no blocking limit before 2.0.77; it is the window − 3,000 up to 2.1.74, the effective
window − 3,000 from 2.1.75, the model's own window − reserve − 3,000 from 2.1.159; up to 1.0.70 the threshold is
0.92 of the window less the reserve, from 1.0.71 the window less the reserve less 13,000):

| era      | releases          | summary reserve          | windows                       | threshold enforced       |
|----------|-------------------|--------------------------|-------------------------------|--------------------------|
| 1.0      | up to 1.0.70      | model's max output       | 200k (180k up to 1.0.15)      | always                   |
| 1.0.71   | 1.0.71 – 1.x      | model's max output       | 200k                          | always                   |
| 2.0      | 2.0.0 – 2.1.20    | model's max output       | 200k; 1M for `[1m]`           | always                   |
| 2.1.21   | 2.1.21 – 2.1.74   | min(max output, 20,000)  | 200k; 1M for `[1m]`           | always                   |
| 2.1.75   | 2.1.75 – 2.1.152  | min(max output, 20,000)  | 200k; 1M for `[1m]`           | always                   |
| 2.1.153  | 2.1.153 – 2.1.158 | min(max output, 20,000)  | 200k; 1M for `[1m]`           | only with a set window   |
| 2.1.159  | 2.1.159 – 2.1.327 | min(max output, 20,000)  | the model catalog             | by window source         |
| 2.1.328  | 2.1.328 and later | min(max output, 20,000)  | the model catalog             | by window source         |
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.claude.models import model as registry_model
from inspector.claude.release import Version, measured_releases, parse_version, show_version

# -- strategies -----------------------------------------------------------------------------------
# What compaction could do in each era (issue: strategies by version). Names are the ones the workbench uses.
FULL = "full"  # summarize everything after the last boundary, keep nothing (2.1.88 §8.1-8.6)
PARTIAL_FROM = "partial-from"  # "Summarize from here" (rewind selector, §8.7)
PARTIAL_UP_TO = "partial-up-to"  # "Summarize up to here": internal in 2.1.88, public by 2.1.328
SESSION_MEMORY = "session-memory"  # §7, gated by flags (default off); removed by 2.1.328
MICROCOMPACT = "microcompact"  # client-side clearing of old tool results (§6.1); removed by 2.1.328
TAIL = "tail"  # 2.1.328: one engine that summarizes all rounds but the kept tail


@dataclass(frozen=True, slots=True)
class Era:
    key: str
    first: Version | None  # first release of the era (None: from the start)
    last: Version | None  # last release (None: open-ended)
    reserve: str  # "max-output": the model's whole max output; "capped": min(max output, 20,000)
    windows: str  # "fixed": 200k, 1M for a [1m] model setting; "catalog": the 2.1.328 model catalog
    enforcement: str  # "always": the threshold always triggers; "window-source": only for some window sources;
    # "none": not with the defaults (a configured auto-compact window is assumed to enforce it)
    strategies: tuple[str, ...]
    basis: str  # "measured", "read" or "assumed": how the rules of this era are known
    evidence: str  # where they come from, in a sentence
    # what the blocking limit (a request not sent) is measured on: "window" (window − 3,000), "effective" (window −
    # reserve − 3,000) or "model" (the model's own window − reserve − 3,000, whatever the auto-compact window)
    blocking: str = "effective"
    # how the threshold is worked out of the effective window: "buffer" (less 13,000; the warning and error levels
    # 20,000 below the threshold) or "share" (0.92 of it; the levels a share of the threshold: up to 1.0.70)
    threshold: str = "buffer"

    @property
    def label(self) -> str:
        first, last = self.first, self.last
        if first is None and last is not None:
            return f"before {show_version((last[0] + 1, 0, 0))}" if last[1:] == (99, 999) else f"up to {show_version(last)}"
        if last is None:
            return f"{show_version(first)} and later" if first else "every release"
        if first is None:
            return "every release"
        return f"{show_version(first)} – {show_version(last)}"

    def contains(self, v: Version) -> bool:
        return (self.first is None or v >= self.first) and (self.last is None or v <= self.last)


ERAS: tuple[Era, ...] = (
    Era(
        "1.0",
        None,
        (1, 0, 70),
        "max-output",
        "fixed",
        "always",
        (FULL,),
        "measured",
        "up to 1.0.70 the threshold is 0.92 of the window less the model's whole max output (154,560 for a 32,000 max "
        "output), up to 1.0.15 0.92 of a fixed 180,000 for every model (165,600), the warning at 0.6 of the threshold "
        "up to 1.0.48 and 0.8 from 1.0.50: read in the 1.0.0, 1.0.17, 1.0.51 and 1.0.70 code and bisected on the "
        "binaries (the era matrix's window-less-output and reserve-share probes: 1.0.16 and 1.0.71 the first of each)",
        "window",
        "share",
    ),
    Era(
        "1.0.71",
        (1, 0, 71),
        (1, 99, 999),
        "max-output",
        "fixed",
        "always",
        (FULL,),
        "measured",
        "from 1.0.71 the threshold is the window less the model's whole max output less 13,000 (155,000 for a 32,000 "
        "max output), as in 2.0: bisected and measured on the 1.0.71 and 1.0.128 binaries (the era matrix); no 1.x "
        "release has a blocking limit (none in their code; 1.0.51 sent every request with auto-compact off)",
        "window",
    ),
    Era(
        "2.0",
        (2, 0, 0),
        (2, 1, 20),
        "max-output",
        "fixed",
        "always",
        (FULL, MICROCOMPACT),
        "measured",
        "the summary reserve was the model's whole max output (32,000 for Opus 4.5: threshold 155,000): measured on the "
        "2.0.0, 2.0.76 and 2.1.20 binaries (the era matrix), as real sessions of 2.0.76–2.1.20 compacted at "
        "155,301–157,692; Claude Code's 2.1.21 changelog fixed the reserve. The blocking limit, the window − 3,000, "
        "is there from 2.0.77 (none before: 2.0.76's REPL sent a prompt at 210,000 with auto-compact off, 2.1.0's "
        "refused it), checked when a prompt starts up to 2.1.2 and before every request from 2.1.3",
        "window",
    ),
    Era(
        "2.1.21",
        (2, 1, 21),
        (2, 1, 74),
        "capped",
        "fixed",
        "always",
        (FULL, PARTIAL_FROM, SESSION_MEMORY, MICROCOMPACT),
        "measured",
        "from 2.1.21 the reserve is capped at 20,000 (threshold 167,000 for a 200k window), the blocking limit still the "
        "window − 3,000 (197,000): measured on the 2.1.21 and 2.1.74 binaries (the era matrix); real sessions of "
        "2.1.25–2.1.42 compacted at 167,094–174,247",
        "window",
    ),
    Era(
        "2.1.75",
        (2, 1, 75),
        (2, 1, 152),
        "capped",
        "fixed",
        "always",
        (FULL, PARTIAL_FROM, PARTIAL_UP_TO, SESSION_MEMORY, MICROCOMPACT),
        "measured",
        "from 2.1.75 the blocking limit is the effective window − 3,000 (177,000; bisected on the binaries: 2.1.74 "
        "refuses at 197,000, 2.1.75 at 177,000); 2.1.88's code is the format reference (§4); measured on the 2.1.75, "
        "2.1.88, 2.1.111 and 2.1.152 binaries (the era matrix)",
        "effective",
    ),
    Era(
        "2.1.153",
        (2, 1, 153),
        (2, 1, 158),
        "capped",
        "fixed",
        "none",
        (FULL, PARTIAL_FROM, PARTIAL_UP_TO, SESSION_MEMORY, MICROCOMPACT),
        "measured",
        "from 2.1.153 no model compacts at its threshold with the defaults: Claude Code compacts when the API refuses "
        "a request as too long (bisected on the binaries: 2.1.152 compacts claude-sonnet-4-5 at 167,000, 2.1.153 does "
        "not; measured on the 2.1.153 and 2.1.158 binaries, the era matrix); a configured window is assumed to enforce "
        "it, as from 2.1.159",
        "effective",
    ),
    Era(
        "2.1.159",
        (2, 1, 159),
        (2, 1, 327),
        "capped",
        "catalog",
        "window-source",
        (TAIL, FULL, PARTIAL_FROM, PARTIAL_UP_TO),
        "measured",
        "from 2.1.159 the model catalog sizes the window and auto-compaction fires only for some window sources "
        "(anthropics/claude-code#64520): none with the defaults up to 2.1.162, claude-opus-4-6 and claude-sonnet-4-6 "
        "again from 2.1.163 (bisected); each release's own catalog decides the rest, measured on the 2.1.159, 2.1.162, "
        "2.1.163, 2.1.219, 2.1.237 and 2.1.327 binaries (the era matrix)",
        "model",
    ),
    Era(
        "2.1.328",
        (2, 1, 328),
        None,
        "capped",
        "catalog",
        "window-source",
        (TAIL, PARTIAL_FROM, PARTIAL_UP_TO),
        "measured",
        "measured on the 2.1.328 binary (format-2.1.3xx.md §1, and the era matrix on 2.1.328 and later): the window "
        "source decides whether the threshold is enforced",
        "model",
    ),
)
NEWEST = ERAS[-1]
# The newest release that resumed sessions inspector saved, in the conformance round trip (python -m conformance
# --resume): a session from a newer one is previewed, and saved only when asked to.
SAVES_CHECKED_ON: Version = (2, 1, 332)

# the workbench's strategies, and the era strategy each one is
WORKBENCH = {
    "compact": TAIL,
    "reactive": TAIL,
    "partial-from": PARTIAL_FROM,
    "partial-up-to": PARTIAL_UP_TO,
    "full": FULL,
    "session-memory": SESSION_MEMORY,
    "microcompact": MICROCOMPACT,
}
STRATEGY_WORDS = {
    "compact": "compaction that keeps the last round (threshold or /compact)",
    "reactive": "compaction after the API refused a request as too long",
    "partial-from": "summarize from a chosen message",
    "partial-up-to": "summarize up to a chosen message",
    "full": "full compaction with no kept tail",
    "session-memory": "session-memory compaction",
    "microcompact": "time-based microcompaction",
}


# A strategy that began inside an era: its first release. "Summarize from here" first appears in 2.1.32's code (the
# menu item and messagesSummarized; 2.1.31's has neither: bisected over the releases npm has); "Summarize up to here"
# in 2.1.141's rewind menu, for every user (no release npm has before it holds the item: 2.1.140's menu has none, and
# the 2.1.88 reference, §8.7, reads it as offered to Anthropic's own builds only).
STRATEGY_FIRST: dict[str, Version] = {PARTIAL_FROM: (2, 1, 32), PARTIAL_UP_TO: (2, 1, 141)}


def releases_with(strategy: str) -> str:
    """The releases that had a workbench strategy, in words ("2.0.0 – 2.1.158")."""
    kind = WORKBENCH.get(strategy)
    eras = [e for e in ERAS if kind is not None and kind in e.strategies]
    if not eras:
        return "no known release"
    first, last = eras[0].first, eras[-1].last
    began = STRATEGY_FIRST.get(kind) if kind is not None else None
    if began is not None and (first is None or began > first):
        first = began
    if first is None:
        return "every release" if last is None else f"up to {show_version(last)}"
    if last is None:
        return f"{show_version(first)} and later"
    return f"{show_version(first)} – {show_version(last)}"


def default_strategy(era: Era) -> str:
    """What the session's own Claude Code does when it compacts: the kept-tail engine from 2.1.159, full before."""
    return "compact" if TAIL in era.strategies else "full"


def what_if(strategy: str, era: Era, version: Version | None = None) -> str | None:
    """None when the session's release (`version`, of `era`) had this strategy; else a sentence saying it is a
    what-if."""
    kind = WORKBENCH.get(strategy)
    if kind is None:
        return None
    began = STRATEGY_FIRST.get(kind)
    if kind in era.strategies and not (began is not None and version is not None and version < began):
        return None
    who = show_version(version) if kind in era.strategies and version is not None else era.label
    return f"a what-if: Claude Code {who} does not do {STRATEGY_WORDS[strategy]}; it is what {releases_with(strategy)} did"


REFERENCE = next(e for e in ERAS if e.key == "2.1.75")  # the 2.1.88 format reference


@dataclass(frozen=True, slots=True)
class Rules:
    """The rules applied to one session, and why."""

    era: Era
    version: Version | None  # the session's release, when it says
    note: str  # which rules and why, in a sentence

    @property
    def key(self) -> str:
        return self.era.key


def rules_for(version: str | None) -> Rules:
    """The era whose rules explain a session written by `version` (the newest known for an unknown one)."""
    v = parse_version(version)
    if v is None:
        era = REFERENCE
        return Rules(era, None, f"version not recorded: the rules of Claude Code {era.label} (the 2.1.88 reference) are applied")
    for era in ERAS:
        if era.contains(v):
            how = {"measured": "measured", "read": "read in its code", "assumed": "assumed"}[era.basis]
            note = f"Claude Code {show_version(v)}: the rules of {era.label} ({how}: {era.evidence})"
            if era is NEWEST and v > (2, 1, 328):
                rel = [r for r in measured_releases() if era.contains(r)]
                newest = rel[-1] if rel else (2, 1, 328)
                if v > newest:
                    note = (
                        f"Claude Code {show_version(v)} is newer than any release the era matrix measured (the newest "
                        f"is {show_version(newest)}): the rules of {era.label} as measured on {show_version(newest)} "
                        "are applied"
                    )
                else:
                    near = max(r for r in rel if r <= v) if any(r <= v for r in rel) else newest
                    note = (
                        f"Claude Code {show_version(v)}: the rules of {era.label}, its numbers checked on the "
                        f"{show_version(near)} binary (the era matrix)"
                    )
            return Rules(era, v, note)
    return Rules(NEWEST, v, f"Claude Code {show_version(v)}: the newest known rules are applied")


# -- the 2.1.328 model catalog (format-2.1.3xx.md §1.1-1.2) is kept in the model registry (models.py)


def catalog_key(model: str | None) -> str | None:
    """The catalog id of an API model id ("claude-opus-4-5-20251101", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    "claude-sonnet-4-5@20250929", "claude-opus-4-6[1m]"), or None when the model is not in the catalog."""
    m = registry_model(model)
    return m.id if m is not None and m.catalog is not None else None
