"""Context windows and Claude Code's thresholds (§4), with every setting that moves them.

`Settings` gathers what decides the numbers: the model, the window, the environment overrides
and the config switches. `Settings.from_environment()` reads them the way Claude Code does;
every field can be overridden to ask "what if". `thresholds(settings)` computes the numbers of
§4.3–4.4 exactly, and `warning_state(tokens, t)` classifies a context size.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping

import orjson

MODEL_CONTEXT_WINDOW_DEFAULT = 200_000
ONE_MILLION = 1_000_000
MAX_OUTPUT_TOKENS_FOR_SUMMARY = 20_000
AUTOCOMPACT_BUFFER_TOKENS = 13_000
WARNING_THRESHOLD_BUFFER_TOKENS = 20_000
ERROR_THRESHOLD_BUFFER_TOKENS = 20_000
MANUAL_COMPACT_BUFFER_TOKENS = 3_000
CAPPED_DEFAULT_MAX_TOKENS = 8_000

# §4.2: (substring of the canonical model name, default, upper limit); first match wins.
MAX_OUTPUT_TABLE: tuple[tuple[str, int, int], ...] = (
    ("opus-4-6", 64_000, 128_000),
    ("sonnet-4-6", 32_000, 128_000),
    ("opus-4-5", 32_000, 64_000),
    ("sonnet-4", 32_000, 64_000),
    ("haiku-4", 32_000, 64_000),
    ("opus-4-1", 32_000, 32_000),
    ("opus-4", 32_000, 32_000),
    ("claude-3-opus", 4_096, 4_096),
    ("claude-3-sonnet", 8_192, 8_192),
    ("claude-3-haiku", 4_096, 4_096),
    ("3-5-sonnet", 8_192, 8_192),
    ("3-5-haiku", 8_192, 8_192),
    ("3-7-sonnet", 32_000, 64_000),
)
MAX_OUTPUT_OTHER = (32_000, 64_000)


def js_round(x: float) -> int:
    """JavaScript's Math.round: halves round up (Python's round is banker's rounding)."""
    return math.floor(x + 0.5)


def truthy(v: str | None) -> bool:
    """Claude Code's isEnvTruthy: 1, true, yes, on (any case)."""
    return v is not None and v.strip().lower() in ("1", "true", "yes", "on")


def pct_in_range(p: float) -> bool:
    """CLAUDE_AUTOCOMPACT_PCT_OVERRIDE counts only in (0, 100] (§4.3); a NaN is not in it."""
    return 0 < p <= 100


def positive_int(v: Any) -> int | None:
    try:
        n = int(str(v).strip())
    except (TypeError, ValueError):
        return None
    return n if n > 0 else None


def window_value(v: Any) -> int | None:
    """A window as Claude Code 2.1.3xx reads CLAUDE_CODE_AUTO_COMPACT_WINDOW: a positive number of tokens, with an
    optional k or m suffix ("150k"); anything else is ignored."""
    if isinstance(v, str):
        t = v.strip().lower().replace("_", "").replace(",", "")
        mult = 1_000 if t.endswith("k") else 1_000_000 if t.endswith("m") else 1
        if mult > 1:
            t = t[:-1]
        try:
            n = round(float(t) * mult)
        except (ValueError, OverflowError):  # "nan", "inf"
            return None
        return n if n > 0 else None
    return positive_int(v)


def max_output_limits(model: str | None) -> tuple[int, int]:
    """(default, upper limit) of max output tokens for a model (§4.2)."""
    name = (model or "").lower()
    for key, default, upper in MAX_OUTPUT_TABLE:
        if key in name:
            return default, upper
    return MAX_OUTPUT_OTHER


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything that moves the thresholds. Each field is a user-visible setting."""

    model: str | None = None
    window: int | None = None  # explicit context window (the user's choice); None: resolve
    one_m: bool | None = None  # 1M window: True/False, or None to infer from usage > 200k
    auto_compact_enabled: bool = True  # ~/.claude.json autoCompactEnabled, DISABLE_AUTO_COMPACT
    compact_disabled: bool = False  # DISABLE_COMPACT (hides /compact, no auto-compact)
    auto_compact_window: int | None = None  # CLAUDE_CODE_AUTO_COMPACT_WINDOW / autoCompactWindow
    pct_override: float | None = None  # CLAUDE_AUTOCOMPACT_PCT_OVERRIDE (0 < p <= 100)
    max_output_tokens: int | None = None  # CLAUDE_CODE_MAX_OUTPUT_TOKENS
    blocking_override: int | None = None  # CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE
    disable_1m: bool = False  # CLAUDE_CODE_DISABLE_1M_CONTEXT
    output_slot_cap: bool = False  # GrowthBook tengu_otk_slot_v1 (code default off) [uncertain]
    model_windows: tuple[tuple[str, int], ...] = ()  # settings modelSettings.<model>.autoCompactWindow (2.1.3xx)
    max_context_tokens: int | None = None  # CLAUDE_CODE_MAX_CONTEXT_TOKENS: sizes an unknown model (2.1.3xx)
    unknown_model_unenforced: bool = False  # CLAUDE_CODE_DISABLE_UNKNOWN_MODEL_WINDOW_ENFORCEMENT (2.1.3xx)
    enforce: bool | None = None  # what if the threshold were (not) enforced, whatever the window source says
    sources: tuple[tuple[str, str], ...] = ()  # (setting, where it came from) for display

    def with_(self, **changes: Any) -> "Settings":
        return replace(self, **changes)

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None, config_dir: Path | None = None) -> "Settings":
        """Read the overrides from the environment and Claude Code's config files."""
        env = os.environ if env is None else env
        src: list[tuple[str, str]] = []
        kw: dict[str, Any] = {}
        cfg = _read_global_config(env, config_dir)
        settings = _read_settings(env, config_dir)
        block = settings.get("env")
        if isinstance(block, dict):  # settings.json's env block is applied over the environment (2.1.3xx, measured)
            env = {**env, **{k: str(v) for k, v in block.items() if isinstance(k, str) and isinstance(v, (str, int, float))}}
        if truthy(env.get("DISABLE_COMPACT")):
            kw["compact_disabled"] = True
            kw["auto_compact_enabled"] = False
            src.append(("auto_compact", "DISABLE_COMPACT"))
        elif truthy(env.get("DISABLE_AUTO_COMPACT")):
            kw["auto_compact_enabled"] = False
            src.append(("auto_compact", "DISABLE_AUTO_COMPACT"))
        elif cfg.get("autoCompactEnabled") is False:
            kw["auto_compact_enabled"] = False
            src.append(("auto_compact", "autoCompactEnabled in .claude.json"))
        elif settings.get("autoCompactEnabled") is False:
            kw["auto_compact_enabled"] = False
            src.append(("auto_compact", "autoCompactEnabled in settings.json"))
        w = window_value(env.get("CLAUDE_CODE_AUTO_COMPACT_WINDOW"))
        if w:
            kw["auto_compact_window"] = w
            src.append(("auto_compact_window", "CLAUDE_CODE_AUTO_COMPACT_WINDOW"))
        else:
            w = positive_int(settings.get("autoCompactWindow"))  # "auto" means no window: not a number
            if w:
                kw["auto_compact_window"] = w
                src.append(("auto_compact_window", "autoCompactWindow setting"))
        pct = env.get("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE")
        if pct:
            try:
                p = float(pct)
                if pct_in_range(p):
                    kw["pct_override"] = p
                    src.append(("pct_override", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"))
            except ValueError:
                pass
        mo = positive_int(env.get("CLAUDE_CODE_MAX_OUTPUT_TOKENS"))
        if mo:
            kw["max_output_tokens"] = mo
            src.append(("max_output_tokens", "CLAUDE_CODE_MAX_OUTPUT_TOKENS"))
        bo = positive_int(env.get("CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE"))
        if bo:
            kw["blocking_override"] = bo
            src.append(("blocking", "CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE"))
        if truthy(env.get("CLAUDE_CODE_DISABLE_1M_CONTEXT")):
            kw["disable_1m"] = True
            src.append(("window", "CLAUDE_CODE_DISABLE_1M_CONTEXT"))
        ms = settings.get("modelSettings")
        if isinstance(ms, dict):
            pairs = tuple((k, w) for k, v in ms.items() if isinstance(v, dict) and (w := positive_int(v.get("autoCompactWindow"))))
            if pairs:
                kw["model_windows"] = pairs
                src.append(("auto_compact_window", "modelSettings autoCompactWindow"))
        mc = positive_int(env.get("CLAUDE_CODE_MAX_CONTEXT_TOKENS"))
        if mc:
            kw["max_context_tokens"] = mc
            src.append(("window", "CLAUDE_CODE_MAX_CONTEXT_TOKENS"))
        if truthy(env.get("CLAUDE_CODE_DISABLE_UNKNOWN_MODEL_WINDOW_ENFORCEMENT")):
            kw["unknown_model_unenforced"] = True
            src.append(("enforcement", "CLAUDE_CODE_DISABLE_UNKNOWN_MODEL_WINDOW_ENFORCEMENT"))
        return cls(sources=tuple(src), **kw)


def _config_home(env: Mapping[str, str], config_dir: Path | None) -> Path:
    if config_dir is not None:
        return config_dir
    raw = env.get("CLAUDE_CONFIG_DIR")
    return Path(raw) if raw else Path(os.path.expanduser("~")) / ".claude"


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = orjson.loads(path.read_bytes()[: 8 << 20])
    except (OSError, orjson.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _read_global_config(env: Mapping[str, str], config_dir: Path | None) -> dict[str, Any]:
    """`~/.claude.json` (or `$CLAUDE_CONFIG_DIR/.claude.json`): holds autoCompactEnabled (§1.4)."""
    if config_dir is not None or env.get("CLAUDE_CONFIG_DIR"):
        return _read_json(_config_home(env, config_dir) / ".claude.json")
    return _read_json(Path(os.path.expanduser("~")) / ".claude.json")


def _read_settings(env: Mapping[str, str], config_dir: Path | None) -> dict[str, Any]:
    """`<config>/settings.json`: may hold autoCompactWindow (2.1.311+, §10)."""
    return _read_json(_config_home(env, config_dir) / "settings.json")


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The numbers of §4.3–4.4 for one model and one set of settings."""

    model: str | None
    context_window: int  # after CLAUDE_CODE_AUTO_COMPACT_WINDOW
    model_window: int  # the model's own window
    max_output_tokens: int
    reserved: int  # min(max output, 20,000): the summary reserve
    effective_window: int
    auto_compact: int | None  # None when auto-compact is off
    warning: int
    error: int
    blocking: int
    auto_compact_enabled: bool
    window_source: str  # why this window: "[1m] model", "usage above 200k", "user", "default", ...
    auto_pct: float | None = None  # CLAUDE_AUTOCOMPACT_PCT_OVERRIDE when it lowered the auto-compact threshold
    enforced: bool = True  # whether Claude Code compacts at the threshold (2.1.159+: only for some window sources)
    compact_source: str | None = None  # 2.1.159+: the auto-compact window's source (env, settings, model-default, unknown-model, auto)
    unenforced_threshold: int | None = None  # the threshold Claude Code computes but does not act on (not enforced)
    rules: str = ""  # which Claude Code rules gave these numbers, and why (see inspector.claude.versions)
    era: str = ""  # the key of that era
    era_label: str = ""  # its releases, e.g. "2.1.21 – 2.1.158"
    blocks_before_sending: bool = True  # up to 2.1.158 a request at the blocking limit is not sent; from 2.1.159 nothing blocks

    @property
    def base(self) -> int:
        """What percent-left is measured against (§4.4)."""
        return self.auto_compact if self.auto_compact is not None else self.effective_window

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "context_window": self.context_window,
            "model_window": self.model_window,
            "window_source": self.window_source,
            "max_output_tokens": self.max_output_tokens,
            "reserved": self.reserved,
            "effective_window": self.effective_window,
            "auto_compact": self.auto_compact,
            "auto_compact_enabled": self.auto_compact_enabled,
            "auto_compact_pct": self.auto_pct,
            "warning": self.warning,
            "error": self.error,
            "blocking": self.blocking,
            "enforced": self.enforced,
            "source": self.compact_source,  # the auto-compact window's source (2.1.159+), None before
            "compact_source": self.compact_source,
            "unenforced_threshold": self.unenforced_threshold,
            "rules": self.rules,
            "era": self.era,
            "era_label": self.era_label,
        }


def resolve_window(s: Settings, peak_usage: int | None = None) -> tuple[int, str]:
    """The model's context window (§4.1) and why, as releases before 2.1.159 resolve it."""
    if s.window is not None:
        return s.window, "user"
    model = (s.model or "").lower()
    if "[1m]" in model and not s.disable_1m:
        return ONE_MILLION, "[1m] model setting"
    if s.one_m is True and not s.disable_1m:
        return ONE_MILLION, "user (1M)"
    if s.one_m is None and peak_usage is not None and peak_usage > MODEL_CONTEXT_WINDOW_DEFAULT and not s.disable_1m:
        return ONE_MILLION, f"inferred: a response used {peak_usage:,} tokens, more than 200,000 (a [1m] setting is not recorded)"
    return MODEL_CONTEXT_WINDOW_DEFAULT, "default"


def max_output_for(s: Settings) -> int:
    """getMaxOutputTokensForModel (§4.2)."""
    default, upper = max_output_limits(s.model)
    if s.output_slot_cap:
        default = min(default, CAPPED_DEFAULT_MAX_TOKENS)
    if s.max_output_tokens is not None:
        return min(s.max_output_tokens, upper)
    return default


MIN_CONFIGURED_WINDOW = 100_000  # 2.1.3xx raises a smaller configured auto-compact window to this


def _catalog_window(s: Settings, peak_usage: int | None) -> tuple[int, str, str, int, int]:
    """2.1.159+ (measured on 2.1.328, claude-code-2.1.328.md §1.1-1.2): (model window, why, window source,
    default max output, upper max output)."""
    from inspector.claude.versions import CATALOG, catalog_key

    model = (s.model or "").lower()
    key = catalog_key(model)
    cm = CATALOG.get(key) if key else None
    suffix = "[1m]" in model
    default_out, upper_out = (cm.max_output, cm.max_output_upper) if cm else max_output_limits(s.model)
    one_m = False
    if s.window is not None:
        window, why = s.window, "user"
        one_m = s.window > MODEL_CONTEXT_WINDOW_DEFAULT
    elif cm is None:
        window = s.max_context_tokens or (MODEL_CONTEXT_WINDOW_DEFAULT if s.disable_1m else ONE_MILLION)
        why = "CLAUDE_CODE_MAX_CONTEXT_TOKENS (unknown model)" if s.max_context_tokens else "unknown model: 1M"
    elif cm.native_1m:
        window, why = (MODEL_CONTEXT_WINDOW_DEFAULT, "native 1M model, CLAUDE_CODE_DISABLE_1M_CONTEXT") if s.disable_1m else (ONE_MILLION, "native 1M model")
    elif suffix and not s.disable_1m:
        window, why, one_m = ONE_MILLION, "[1m] model setting", True
    elif s.one_m is True and not s.disable_1m:
        window, why, one_m = ONE_MILLION, "user (1M)", True
    elif s.one_m is None and peak_usage is not None and peak_usage > cm.window and not s.disable_1m and cm.supports_1m:
        window, why, one_m = ONE_MILLION, f"inferred: a response used {peak_usage:,} tokens, more than {cm.window:,} (a [1m] setting is not recorded)", True
    else:
        window, why = cm.window, "model catalog"
    # the auto-compact window's source decides whether the threshold is enforced (§1.2, §1.4)
    per_model = dict(s.model_windows)
    env_window = any(k == "auto_compact_window" and v == "CLAUDE_CODE_AUTO_COMPACT_WINDOW" for k, v in s.sources)
    if s.auto_compact_window is not None and env_window:
        source = "env"
    elif (key and key in per_model) or "*" in per_model or s.auto_compact_window is not None:
        source = "settings"
    elif cm is None:
        source = "auto" if s.unknown_model_unenforced else "unknown-model"
    elif one_m and not cm.native_1m:
        source = "auto"  # a [1m] 4.x model: reactive only
    elif cm.native_1m or cm.default_source == "model-default":
        source = "model-default"
    else:
        source = "auto"
    return window, why, source, default_out, upper_out


def thresholds(s: Settings, peak_usage: int | None = None, version: str | None = None) -> Thresholds:
    """Claude Code's effective window, auto-compact, warning and blocking limits, by the rules of the release
    `version` (see inspector.claude.versions; None: the 2.1.88 reference)."""
    from inspector.claude.versions import rules_for

    rules = rules_for(version)
    era = rules.era
    source: str | None = None
    if era.windows == "catalog":
        model_window, why, source, default_out, upper_out = _catalog_window(s, peak_usage)
        if s.output_slot_cap:
            default_out = min(default_out, CAPPED_DEFAULT_MAX_TOKENS)
        max_out = min(s.max_output_tokens, upper_out) if s.max_output_tokens is not None else default_out
    else:
        model_window, why = resolve_window(s, peak_usage)
        max_out = max_output_for(s)
    window = model_window
    configured = s.auto_compact_window
    if era.windows == "catalog":
        from inspector.claude.versions import catalog_key

        key = catalog_key(s.model)
        per_model = dict(s.model_windows)
        own = per_model.get(key) if key else None
        own = own if own is not None else per_model.get("*")  # "*": the session's model (a what-if)
        if own is not None and not any(v == "CLAUDE_CODE_AUTO_COMPACT_WINDOW" for _, v in s.sources):
            configured = own
        if configured is not None:
            configured = max(configured, MIN_CONFIGURED_WINDOW)
    if configured is not None and configured < window:
        origin = next((v for k, v in reversed(s.sources) if k == "auto_compact_window"), "an auto-compact window setting")
        raised = " (raised to 100,000, the least Claude Code accepts)" if era.windows == "catalog" and (
            s.auto_compact_window or 0) < MIN_CONFIGURED_WINDOW and configured == MIN_CONFIGURED_WINDOW else ""
        why = f"{origin}: {configured:,}{raised}; the model's own window is {window:,} ({why})"
    if configured is not None:
        window = min(window, configured)
    reserved = max_out if era.reserve == "max-output" else min(max_out, MAX_OUTPUT_TOKENS_FOR_SUMMARY)
    effective = window - reserved
    enabled = s.auto_compact_enabled and not s.compact_disabled
    auto: int | None = effective - AUTOCOMPACT_BUFFER_TOKENS
    if auto < 0:  # a window smaller than the reserve and the buffer: Claude Code would compact before every request
        why += f"; a {window:,} window leaves no room for the {reserved:,} reserve and the 13,000 buffer: the threshold is 0"
        auto = 0
        effective = max(effective, 0)
    auto_pct = None
    if s.pct_override is not None and pct_in_range(s.pct_override):
        lowered = math.floor(effective * s.pct_override / 100)
        if lowered < effective - AUTOCOMPACT_BUFFER_TOKENS:
            auto, auto_pct = lowered, s.pct_override
    enforced = era.enforcement == "always" or source != "auto"
    if s.enforce is not None:  # a what-if
        enforced = s.enforce
    base = auto if enabled else effective
    if era.windows == "catalog":
        # the blocking limit is measured on the model window, not the auto-compact window (§1.3)
        blocking = s.blocking_override if s.blocking_override is not None else model_window - reserved - MANUAL_COMPACT_BUFFER_TOKENS
    else:
        blocking = s.blocking_override if s.blocking_override is not None else effective - MANUAL_COMPACT_BUFFER_TOKENS
    return Thresholds(
        model=s.model,
        context_window=window,
        model_window=model_window,
        max_output_tokens=max_out,
        reserved=reserved,
        effective_window=effective,
        auto_compact=auto if enabled and enforced else None,
        warning=max(0, base - WARNING_THRESHOLD_BUFFER_TOKENS),  # below 0 means "always": shown as 0
        error=max(0, base - ERROR_THRESHOLD_BUFFER_TOKENS),
        blocking=max(0, blocking),
        auto_compact_enabled=enabled,
        window_source=why,
        auto_pct=auto_pct,
        enforced=enforced,
        compact_source=source,
        unenforced_threshold=auto if enabled and not enforced else None,
        rules=rules.note,
        era=era.key,
        era_label=era.label,
        blocks_before_sending=era.windows == "fixed",
    )


def percent_left(tokens: int, t: Thresholds) -> int:
    base = t.base
    if base <= 0:
        return 0
    return max(0, js_round((base - tokens) / base * 100))


def warning_state(tokens: int, t: Thresholds) -> str:
    """"ok", "warning", "auto_compact" or "blocking" (the most severe that applies). Where Claude Code does not
    enforce the threshold (2.1.159+, window source "auto"), it shows no level at all: "ok"."""
    if not t.enforced:
        return "ok"
    if tokens >= t.blocking and (t.auto_compact_enabled or t.blocks_before_sending):
        return "blocking"
    if t.auto_compact is not None and tokens >= t.auto_compact:
        return "auto_compact"
    if tokens >= t.warning:
        return "warning"
    return "ok"


def describe_changes(s: Settings, base: Settings) -> str:
    """What differs from the configured settings, in a line ("" when nothing does)."""
    names = {"model": "model", "window": "window", "one_m": "1M", "auto_compact_enabled": "auto-compact",
             "auto_compact_window": "auto-compact window", "pct_override": "percent", "max_output_tokens": "max output",
             "blocking_override": "blocking", "disable_1m": "1M disabled", "output_slot_cap": "output-slot cap",
             "enforce": "enforced", "model_windows": "per-model window"}
    out = []
    for field, label in names.items():
        v = getattr(s, field)
        if v != getattr(base, field):
            if isinstance(v, bool):
                out.append(f"{label} {'on' if v else 'off'}")
            elif isinstance(v, float):
                out.append(f"{label} {v:g}%" if field == "pct_override" else f"{label} {v:g}")
            else:
                out.append(f"{label} {v:,}" if isinstance(v, int) else f"{label} {v}")
    return ", ".join(out)
