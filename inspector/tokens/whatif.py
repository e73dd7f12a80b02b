"""The what-if settings: one table of every setting a user can change to see a session by other thresholds.

Each row says which `Settings` field it sets, the `tokens` command's flag, the form's label in the app, the
environment variable or settings key Claude Code reads it from, the short name a changed value is described by,
and how a typed value is read. The command-line flags (`add_flags`, `from_args`), the app's form (`from_form`,
`form_value`) and the one-line description of what changed (`describe_changes`) are all built from it, so a new
setting is one row. Reading Claude Code's own environment and settings files, with their precedence, is
`Settings.from_environment`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from inspector.tokens.thresholds import Settings, pct_in_range


class InvalidSetting(ValueError):
    """A value the user typed that the setting cannot take (the message is for the user)."""


def whole_number(raw: str, what: str) -> int | None:
    """A positive whole number ("150,000" and "150_000" too); empty: None."""
    raw = raw.strip().replace(",", "").replace("_", "")
    if not raw:
        return None
    try:
        v = int(raw)
    except ValueError:
        raise InvalidSetting(f"{what}: {raw!r} is not a whole number") from None
    if v <= 0:
        raise InvalidSetting(f"{what} must be above 0")
    return v


def percent(raw: str, what: str) -> float | None:
    raw = raw.strip()
    if not raw:
        return None
    try:
        p = float(raw)
    except ValueError:
        raise InvalidSetting(f"{what}: {raw!r} is not a number") from None
    if not pct_in_range(p):
        raise InvalidSetting(f"{what} must be in (0, 100]")
    return p


def text(raw: str, what: str) -> str | None:
    return raw.strip() or None


# a choice's values: what the form's select holds, and the Settings value it stands for
ONE_M = (("infer from usage above 200k", "infer", None), ("yes", "on", True), ("no", "off", False))
ENFORCE = (
    ("as Claude Code decides (by the window source)", "keep", None),
    ("enforced", "on", True),
    ("not enforced", "off", False),
)
AUTO = (("as configured", "keep", None), ("on", "on", True), ("off", "off", False))


@dataclass(frozen=True, slots=True)
class WhatIf:
    key: str  # the form's and the arguments' name
    field: str  # the Settings field it sets
    kind: str  # "number", "percent", "text", "choice", "switch"
    label: str  # the form's label
    short: str  # how a changed value is described ("window 150,000")
    flag: str | None = None  # the tokens command's flag
    help: str = ""
    metavar: str | None = None
    choices: tuple[tuple[str, str, bool | None], ...] = ()  # for "choice": (label, form value, setting)
    placeholder: str = ""
    noun: str = ""  # how an error names it; "": the short name

    def read(self, raw: Any) -> Any:
        """The Settings value of what was typed or chosen (raises InvalidSetting)."""
        if self.kind == "switch":
            return bool(raw)
        if self.kind == "choice":
            for _, value, setting in self.choices:
                if raw == value:
                    return setting
            raise InvalidSetting(f"{self.short}: {raw!r} is not one of the choices")
        parse: Callable[[str, str], Any] = {"number": whole_number, "percent": percent, "text": text}[self.kind]
        return parse(str(raw if raw is not None else ""), self.noun or self.short)


TABLE: tuple[WhatIf, ...] = (
    WhatIf(
        "model", "model", "text", "Model (e.g. claude-opus-4-6, opus[1m]); empty: the session's", "model",
        "--model", "model id or setting, e.g. claude-opus-4-6 or opus[1m] (default: the session's)",
        placeholder="the session's model",
    ),
    WhatIf(
        "window", "window", "number", "Context window, tokens; empty: resolve from the model", "window",
        "--window", "context window in tokens (default: 200,000; 1M if usage exceeded 200k)", "N", placeholder="200000",
    ),
    WhatIf("one_m", "one_m", "choice", "1M-token window", "1M", "--one-m", "assume a 1M window (or not)", choices=ONE_M),
    WhatIf(
        "auto_compact", "auto_compact_enabled", "choice", "Auto-compact (DISABLE_AUTO_COMPACT, autoCompactEnabled)",
        "auto-compact", choices=AUTO,
    ),
    WhatIf(
        "auto_compact_window", "auto_compact_window", "number",
        "Auto-compact window, tokens (CLAUDE_CODE_AUTO_COMPACT_WINDOW)", "auto-compact window",
        "--auto-compact-window", "CLAUDE_CODE_AUTO_COMPACT_WINDOW / autoCompactWindow", "N",
    ),
    WhatIf(
        "model_window", "model_windows", "number",
        "Per-model auto-compact window, tokens (modelSettings.<model>.autoCompactWindow, /autocompact)",
        "per-model window", "--model-auto-compact-window",
        "settings modelSettings.<the session's model>.autoCompactWindow (2.1.3xx; what /autocompact writes)", "N",
        noun="per-model auto-compact window",
    ),
    WhatIf(
        "enforce", "enforce", "choice", "Threshold enforced (2.1.159+: only for some window sources)", "enforced",
        "--enforce", "assume the threshold is (not) enforced, whatever the window source says (2.1.159+)",
        choices=ENFORCE,
    ),
    WhatIf(
        "pct", "pct_override", "percent", "Auto-compact percent (CLAUDE_AUTOCOMPACT_PCT_OVERRIDE, only lowers it)",
        "percent", "--pct", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE (can only lower the threshold)", "P",
        noun="auto-compact percent",
    ),
    WhatIf(
        "max_output_tokens", "max_output_tokens", "number", "Max output tokens (CLAUDE_CODE_MAX_OUTPUT_TOKENS)",
        "max output", "--max-output-tokens", "CLAUDE_CODE_MAX_OUTPUT_TOKENS", "N", noun="max output tokens",
    ),
    WhatIf(
        "blocking", "blocking_override", "number", "Blocking limit (CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE)", "blocking",
        "--blocking-limit", "CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE", "N", noun="blocking limit",
    ),
    WhatIf(
        "disable_1m", "disable_1m", "switch", "CLAUDE_CODE_DISABLE_1M_CONTEXT", "1M disabled", "--disable-1m",
        "CLAUDE_CODE_DISABLE_1M_CONTEXT",
    ),
    WhatIf(
        "other_host", "other_api_host", "switch",
        "Another API host (ANTHROPIC_BASE_URL: a proxy, a gateway)",
        "another API host", "--other-api-host",
        "ANTHROPIC_BASE_URL names another host than api.anthropic.com (2.1.144-2.1.284 give a native 1M window only "
        "on Anthropic's)",
    ),
    WhatIf(
        "output_cap", "output_slot_cap", "switch",
        "8k output-slot cap (a server-side flag; off by default)", "output-slot cap",
        "--output-cap", "assume the 8k output-slot cap (GrowthBook tengu_otk_slot_v1; off by default)",
    ),
)  # fmt: skip
BY_KEY = {w.key: w for w in TABLE}


def add_flags(group: Any, positive: Callable[[str], int]) -> None:
    """The what-if flags of the `tokens` command, in the table's order (auto-compact is two flags); `positive` is
    the command line's reader of a whole number above zero."""
    for w in TABLE:
        if w.key == "auto_compact":
            group.add_argument(
                "--no-auto-compact", action="store_true", help="as with DISABLE_AUTO_COMPACT or autoCompactEnabled=false"
            )
            group.add_argument("--auto-compact", action="store_true", help="assume auto-compact on, whatever the config says")
            continue
        assert w.flag is not None
        if w.kind == "choice":
            group.add_argument(w.flag, action=argparse.BooleanOptionalAction, default=None, help=w.help)
        elif w.kind == "switch":
            group.add_argument(w.flag, action="store_true", help=w.help)
        elif w.kind == "text":
            group.add_argument(w.flag, help=w.help)
        else:
            group.add_argument(w.flag, type=positive if w.kind == "number" else float, metavar=w.metavar, help=w.help)


def _dest(w: WhatIf) -> str:
    assert w.flag is not None
    return w.flag.removeprefix("--").replace("-", "_")


def _apply(base: Settings, values: Mapping[str, Any], flags: bool) -> Settings:
    """`base` with the rows' values; from flags an absent value keeps the base, from the form an empty one clears
    it (the form shows the current value, so an emptied box is the user's choice of Claude Code's own rule)."""
    changes: dict[str, Any] = {}
    sources = list(base.sources)
    for w in TABLE:
        if w.key not in values:
            continue
        v = values[w.key]
        if w.key == "auto_compact":
            if v is True:
                changes["auto_compact_enabled"], changes["compact_disabled"] = True, False
            elif v is False:
                changes["auto_compact_enabled"] = False
            if v is not None:  # the what-if's choice, which every release's session takes as it is
                sources = [(k, s) for k, s in sources if k != "auto_compact"] + [("auto_compact", "a what-if")]
        elif w.key == "model_window":
            if v is not None:
                changes["model_windows"] = (("*", v),)
                if flags:
                    sources = [(k, s) for k, s in sources if k != "auto_compact_window"] + [
                        ("auto_compact_window", "--model-auto-compact-window")
                    ]
            elif not flags:
                changes["model_windows"] = tuple(m for m in base.model_windows if m[0] != "*")
        elif w.kind == "switch":
            if v or not flags:
                changes[w.field] = bool(v)
        elif v is not None or not flags:
            changes[w.field] = v
            if w.key == "auto_compact_window" and (flags or v != base.auto_compact_window):  # the what-if set it now
                sources = [(k, s) for k, s in sources if k != "auto_compact_window"] + [
                    ("auto_compact_window", "--auto-compact-window" if flags else "a what-if")
                ]
    if sources != list(base.sources):
        changes["sources"] = tuple(sources)
    return base.with_(**changes) if changes else base


def from_args(base: Settings, args: argparse.Namespace) -> Settings:
    """`base` (the environment's settings) with the what-if flags given on the command line."""
    values: dict[str, Any] = {}
    for w in TABLE:
        if w.key == "auto_compact":
            if getattr(args, "no_auto_compact", False):
                values[w.key] = False
            if getattr(args, "auto_compact", False):
                values[w.key] = True
            continue
        v = getattr(args, _dest(w), None)
        if v is not None and w.kind == "percent" and not pct_in_range(v):
            raise InvalidSetting(f"{w.flag} must be in (0, 100]")
        if v is not None:
            values[w.key] = v
    return _apply(base, values, flags=True)


def from_form(base: Settings, raw: Mapping[str, Any]) -> Settings:
    """The settings a filled-in form asks for (raises InvalidSetting with a message for the user)."""
    return _apply(base, {w.key: w.read(raw[w.key]) for w in TABLE if w.key in raw}, flags=False)


def form_value(w: WhatIf, current: Settings, configured: Settings) -> Any:
    """What the form shows for a row: the current value, typed as the form's widget holds it."""
    if w.key == "auto_compact":
        if current.auto_compact_enabled == configured.auto_compact_enabled:
            return "keep"
        return "on" if current.auto_compact_enabled else "off"
    if w.key == "model_window":
        v: Any = dict(current.model_windows).get("*")
    else:
        v = getattr(current, w.field)
    if w.kind == "choice":
        return next(value for _, value, setting in w.choices if setting == v)
    if w.kind == "switch":
        return bool(v)
    if w.kind == "percent":
        return f"{v:g}" if v else ""
    return f"{v}" if v else ""


def describe_changes(s: Settings, base: Settings) -> str:
    """What differs from the configured settings, in a line ("" when nothing does)."""
    out = []
    for w in TABLE:
        v = getattr(s, w.field)
        if v == getattr(base, w.field):
            continue
        if isinstance(v, bool):
            out.append(f"{w.short} {'on' if v else 'off'}")
        elif isinstance(v, float):
            out.append(f"{w.short} {v:g}%" if w.kind == "percent" else f"{w.short} {v:g}")
        else:
            out.append(f"{w.short} {v:,}" if isinstance(v, int) else f"{w.short} {v}")
    return ", ".join(out)
