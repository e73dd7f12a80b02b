"""Context windows and Claude Code's thresholds (§4), with every setting that moves them.

`Settings` gathers what decides the numbers: the model, the window, the environment overrides
and the config switches. `Settings.from_environment()` reads them the way Claude Code does;
every field can be overridden to ask "what if". `thresholds(settings)` computes the numbers of
§4.3–4.4 exactly, and `warning_state(tokens, t)` classifies a context size.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson

MODEL_CONTEXT_WINDOW_DEFAULT = 200_000
ONE_MILLION = 1_000_000
MAX_OUTPUT_TOKENS_FOR_SUMMARY = 20_000
AUTOCOMPACT_BUFFER_TOKENS = 13_000
WARNING_THRESHOLD_BUFFER_TOKENS = 20_000
# up to 1.0.70 (the "share" eras): the threshold is 0.92 of the effective window, which up to 1.0.15 is a fixed 180,000
# for every model (read in the 1.0.0, 1.0.17, 1.0.51 and 1.0.70 code; bisected on the binaries: the era matrix's
# window-less-output and reserve-share probes); the warning is 0.6 of the threshold up to 1.0.48, 0.8 from 1.0.50 (read
# in the 1.0.45, 1.0.48, 1.0.50 and 1.0.51 code: no binary shows a warning in print mode), the error level 0.8
AUTOCOMPACT_SHARE = 0.92
FIXED_COUNTED_WINDOW = 180_000
ERROR_SHARE = 0.8
WARNING_SHARE_RAISED = ((1, 0, 50), 0.6, 0.8)  # (the first release with the second share, before, from then on)
ERROR_THRESHOLD_BUFFER_TOKENS = 20_000
MANUAL_COMPACT_BUFFER_TOKENS = 3_000
CAPPED_DEFAULT_MAX_TOKENS = 8_000


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


def other_api_host(env: Mapping[str, str] | None = None) -> bool:
    """Whether the environment's ANTHROPIC_BASE_URL names another host than Anthropic's own API (`Settings`)."""
    base = (os.environ if env is None else env).get("ANTHROPIC_BASE_URL")
    return bool(base) and not _anthropic_host(base or "")


def _anthropic_host(url: str) -> bool:
    """Whether an ANTHROPIC_BASE_URL names Anthropic's own API host, as Claude Code tells it (the URL's host is
    api.anthropic.com; a URL it cannot parse is another host)."""
    from urllib.parse import urlsplit

    try:
        u = urlsplit(url.strip())
        port = u.port
    except ValueError:
        return False
    default = {"https": 443, "http": 80}.get(u.scheme)
    return (u.hostname or "") == "api.anthropic.com" and (port is None or port == default)  # (URL.host: no default port)


def max_output_limits(model: str | None, version: tuple[int, int, int] | None = None) -> tuple[int, int]:
    """(default, upper limit) of max output tokens for a model (§4.2), as the release `version` knew it (None:
    the 2.1.88 reference). The rules are the model registry's: substrings of the name, first match wins; a row
    some releases lacked is skipped for them (measured by the era matrix: 2.1.20 reserves 32,000 for
    claude-opus-4-6 and claude-sonnet-4-6, threshold 155,000)."""
    from inspector.claude.models import max_output_other, max_output_rules

    name = (model or "").lower()
    for rule in max_output_rules():
        if rule.match in name:
            if rule.since is not None and version is not None and version < rule.since:
                continue
            return rule.default, rule.upper
    return max_output_other()


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
    # ANTHROPIC_BASE_URL names another host than Anthropic's own API (api.anthropic.com): 2.1.144-2.1.284 give a native
    # 1M window only on Anthropic's (`models.native_1m`)
    other_api_host: bool = False
    earlier_messages: str | None = (
        None  # CLAUDE_CODE_ELEGANT_MIST (2.1.331+): "messages", "messages_and_replies", "off"; None: as the session shows
    )
    sources: tuple[tuple[str, str], ...] = ()  # (setting, where it came from) for display

    def with_(self, **changes: Any) -> Settings:
        return replace(self, **changes)

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None, config_dir: Path | None = None) -> Settings:
        """Read the overrides from the environment and Claude Code's config files."""
        env = os.environ if env is None else env
        src: list[tuple[str, str]] = []
        kw: dict[str, Any] = {}
        cfg = _read_global_config(env, config_dir)
        settings = _read_settings(env, config_dir)
        block = settings.get("env")
        if isinstance(block, dict):  # settings.json's env block is applied over the environment (2.1.3xx, measured)
            env = {**env, **{k: str(v) for k, v in block.items() if isinstance(k, str) and isinstance(v, (str, int, float))}}
        # every place that turns auto-compact off, the first listed the one that decides today (a release that does
        # not read one of them still reads the others: read_by_release)
        if truthy(env.get("DISABLE_COMPACT")):
            kw["compact_disabled"] = True
            src.append(("auto_compact", "DISABLE_COMPACT"))
        if truthy(env.get("DISABLE_AUTO_COMPACT")):
            src.append(("auto_compact", "DISABLE_AUTO_COMPACT"))
        if cfg.get("autoCompactEnabled") is False:
            src.append(("auto_compact", "autoCompactEnabled in .claude.json"))
        if settings.get("autoCompactEnabled") is False:
            src.append(("auto_compact", "autoCompactEnabled in settings.json"))
        if src:
            kw["auto_compact_enabled"] = False
        w = window_value(env.get("CLAUDE_CODE_AUTO_COMPACT_WINDOW"))
        if w:
            kw["auto_compact_window"] = w
            src.append(("auto_compact_window", "CLAUDE_CODE_AUTO_COMPACT_WINDOW"))
        else:
            w = positive_int(settings.get("autoCompactWindow"))  # "auto" means no window: not a number
            if w and w < MIN_CONFIGURED_WINDOW:
                src.append(
                    (
                        "ignored",
                        f"autoCompactWindow setting {w:,} (settings accept no less than 100,000: Claude "
                        "Code ignores it, measured on 2.1.328)",
                    )
                )
            elif w:
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
        if other_api_host(env):
            kw["other_api_host"] = True
            src.append(("window", "ANTHROPIC_BASE_URL (another host than api.anthropic.com)"))
        if truthy(env.get("CLAUDE_CODE_DISABLE_1M_CONTEXT")):
            kw["disable_1m"] = True
            src.append(("window", "CLAUDE_CODE_DISABLE_1M_CONTEXT"))
        ms = settings.get("modelSettings")
        if isinstance(ms, dict):
            pairs = tuple(
                (k, w) for k, v in ms.items() if isinstance(v, dict) and (w := positive_int(v.get("autoCompactWindow")))
            )
            for k, w in pairs:
                if w < MIN_CONFIGURED_WINDOW:
                    src.append(("ignored", f"modelSettings.{k}.autoCompactWindow {w:,} (below 100,000: ignored)"))
            pairs = tuple((k, w) for k, w in pairs if w >= MIN_CONFIGURED_WINDOW)
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
        mist = env.get("CLAUDE_CODE_ELEGANT_MIST")
        if mist is not None:  # any other value turns the experiment off, as in Claude Code
            kw["earlier_messages"] = mist if mist in ("messages", "messages_and_replies") else "off"
            src.append(("earlier_messages", "CLAUDE_CODE_ELEGANT_MIST"))
        return cls(sources=tuple(src), **kw)


def _config_home(env: Mapping[str, str], config_dir: Path | None) -> Path:
    from inspector.transcript.discovery import config_dir as claude_config_dir

    return config_dir if config_dir is not None else claude_config_dir(env)


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
    """`<config>/settings.json`: may hold autoCompactEnabled and autoCompactWindow (read by the releases the era
    matrix's probes say: `read_by_release`)."""
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
    compact_source: str | None = (
        None  # 2.1.159+: the auto-compact window's source (env, settings, model-default, unknown-model, auto)
    )
    unenforced_threshold: int | None = None  # the threshold Claude Code computes but does not act on (not enforced)
    rules: str = ""  # which Claude Code rules gave these numbers, and why (see inspector.claude.versions)
    era: str = ""  # the key of that era
    era_label: str = ""  # its releases, e.g. "2.1.21 – 2.1.158"
    blocks_before_sending: bool = True  # a request at the blocking limit is not sent (measured per release: era matrix)
    measured: str = ""  # what the release's own binary did with these defaults (the era matrix), in words
    measured_on: str = ""  # the release the era matrix measured for this session ("" when none applied)
    from_binary: bool = False  # the auto-compact threshold is the binary's measured one, not the formula's
    # a 1M window inferred from usage, refuted by a limit met far below it: Claude Code counted this window, and the
    # API served more than it (so the API did not refuse at it either)
    served_past: bool = False
    # up to 1.0.70 the warning and error levels are shares of the threshold (of the effective window with auto-compact
    # off), not 20,000 below it: (warning share, error share), None for the buffer rule (`levels`)
    level_shares: tuple[float, float] | None = None
    # up to 2.0.76 Claude Code has no blocking limit at all (`blocking` is then the window, where the API refuses)
    has_blocking_limit: bool = True

    @property
    def blocking_words(self) -> str:
        """The blocking limit in words: "blocking 197,000", or that the release has none."""
        return f"blocking {self.blocking:,}" if self.has_blocking_limit else "no blocking limit"

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
            "blocking": self.blocking if self.has_blocking_limit else None,
            "enforced": self.enforced,
            "source": self.compact_source,  # the auto-compact window's source (2.1.159+), None before
            "compact_source": self.compact_source,
            "unenforced_threshold": self.unenforced_threshold,
            "rules": self.rules,
            "era": self.era,
            "era_label": self.era_label,
            "blocks_before_sending": self.blocks_before_sending,
            "measured": self.measured,
            "measured_on": self.measured_on,
        }


def settings_key(model: str | None) -> str | None:
    """The key a model's modelSettings entry is found by: its catalog id (a key also matches the model's dated and
    [1m] spellings: 2.1.328 applied `claude-sonnet-4-5[1m]`'s to claude-sonnet-4-5[1m]), or for a model the catalog
    does not know its name without the [1m] (2.1.332 applied `claude-foo-1`'s to claude-foo-1)."""
    from inspector.claude.versions import catalog_key

    if not model:
        return None
    return catalog_key(model) or model.strip().lower().replace("[1m]", "")


def model_windows(s: Settings) -> dict[str, int]:
    """modelSettings' auto-compact windows by `settings_key`; the lowest value wins."""
    out: dict[str, int] = {}
    for k, v in s.model_windows:
        k = k if k == "*" else (settings_key(k) or k)
        out[k] = min(v, out.get(k, v))
    return out


def native_1m_words(s: Settings, version: str | None) -> str | None:
    """Why release `version` gives the settings' model a native 1M window (`models.native_1m`), or None."""
    from inspector.claude.models import native_1m, native_1m_host_dependent
    from inspector.claude.release import parse_version

    v = parse_version(version) if version else None
    if s.disable_1m or not native_1m(s.model, v, not s.other_api_host):
        return None
    host = (
        ", on Anthropic's own API host (this release gives it only there: no ANTHROPIC_BASE_URL to another host)"
        if native_1m_host_dependent(v)
        else ""
    )
    return f"native 1M model{host}"


def reads_one_m_suffix(version: str | None) -> bool:
    """Whether the release gives a model named with [1m] a 1M window (the era matrix's one-m-suffix probe, bisected:
    2.0.14 and earlier take the model's own 200,000 window, 2.0.15 and later 1M; a release the bisection does not place
    as today's)."""
    from inspector.claude.measured import answer_at

    return answer_at("one-m-suffix", version) is not False


def one_m_unread(version: str | None) -> str:
    from inspector.claude.measured import first_answering

    return f"[1m] is not read by Claude Code {version} (a 1M window from {first_answering('one-m-suffix', True)}, measured)"


def resolve_window(s: Settings, peak_usage: int | None = None, version: str | None = None) -> tuple[int, str]:
    """The model's context window (§4.1) and why, as releases before 2.1.159 resolve it (from 2.1.117, a model the
    release gives a native 1M window: `models.native_1m`)."""
    if s.window is not None:
        return s.window, "user"
    model = (s.model or "").lower()
    if ("[1m]" in model or s.one_m is True) and not s.disable_1m and not reads_one_m_suffix(version):
        return MODEL_CONTEXT_WINDOW_DEFAULT, f"default: {one_m_unread(version)}"
    if "[1m]" in model and not s.disable_1m:
        return ONE_MILLION, "[1m] model setting"
    native = native_1m_words(s, version)
    if native is not None:
        return ONE_MILLION, native
    if s.one_m is True and not s.disable_1m:
        return ONE_MILLION, "user (1M)"
    if s.one_m is None and peak_usage is not None and peak_usage > MODEL_CONTEXT_WINDOW_DEFAULT and not s.disable_1m:
        return ONE_MILLION, f"inferred: a response used {peak_usage:,} tokens, more than 200,000 (a [1m] setting is not recorded)"
    return MODEL_CONTEXT_WINDOW_DEFAULT, "default"


def max_output_for(s: Settings, version: tuple[int, int, int] | None = None) -> int:
    """getMaxOutputTokensForModel (§4.2)."""
    default, upper = max_output_limits(s.model, version)
    if s.output_slot_cap:
        default = min(default, CAPPED_DEFAULT_MAX_TOKENS)
    if s.max_output_tokens is not None:
        return min(s.max_output_tokens, upper)
    return default


MIN_CONFIGURED_WINDOW = (
    100_000  # 2.1.89 on raise a smaller CLAUDE_CODE_AUTO_COMPACT_WINDOW to this (settings below it are ignored)
)


def _raises_small_windows(version: str | None) -> bool:
    """Whether the release raises a CLAUDE_CODE_AUTO_COMPACT_WINDOW below 100,000 to 100,000: from 2.1.89 (bisected,
    `--bisect env-window-floor`: 2.1.88 took 80,000 as it is, threshold 47,000, as its code reads; 2.1.89 compacted at
    67,000); a release the bisection does not place reads it as today's does."""
    from inspector.claude.measured import answer_at

    return answer_at("env-window-floor", version) is not False


# a model the release does not know has its own window source, "unknown-model" (enforced), from 2.1.223 (with
# CLAUDE_CODE_DISABLE_UNKNOWN_MODEL_WINDOW_ENFORCEMENT, read from then on); 2.1.159-2.1.222 give it "model-default"
# (enforced) when its name gives it a window above 200,000, else "auto" (not enforced), which the formula cannot tell
# apart: it says "model-default", and the era matrix's measurement of a model that never compacted names it "auto"
# (`with_measured`; read in the 2.1.219, 2.1.222 and 2.1.223 code; generated seeds 189014 and 189024 on 2.1.219)
UNKNOWN_MODEL_SOURCE_FROM = (2, 1, 223)


def _catalog_window(s: Settings, peak_usage: int | None, version: str | None = None) -> tuple[int, str, str, int, int]:
    """2.1.159+ (measured on 2.1.328, format-2.1.3xx.md §1.1-1.2): (model window, why, window source,
    default max output, upper max output). A model the release `version` did not know yet (its code does not name it:
    `models.unknown_to`) is an unknown model to it."""
    from inspector.claude.models import model as registry_model
    from inspector.claude.models import native_1m_enforced, unknown_to
    from inspector.claude.release import at_or_after, parse_version, show_version

    model = (s.model or "").lower()
    entry = registry_model(model)
    cm = entry.catalog if entry is not None else None
    later = unknown_to(model, parse_version(version)) if cm is not None else None
    if later is not None:
        cm = None
    suffix = "[1m]" in model
    default_out, upper_out = (cm.max_output, cm.max_output_upper) if cm else max_output_limits(s.model)
    one_m = False
    reactive = False  # a native 1M window whose release does not enforce its threshold (before 2.1.260)
    if s.window is not None:
        window, why = s.window, "user"
        one_m = s.window > MODEL_CONTEXT_WINDOW_DEFAULT
    elif cm is None:
        window = s.max_context_tokens or (MODEL_CONTEXT_WINDOW_DEFAULT if s.disable_1m else ONE_MILLION)
        why = "CLAUDE_CODE_MAX_CONTEXT_TOKENS (unknown model)" if s.max_context_tokens else "unknown model: 1M"
        if later is not None:
            first = "no release checked" if later[0] == 9999 else show_version(later)
            why += f" (Claude Code {version} does not know {s.model}: its code first names it in {first})"
    elif cm.native_1m and (native := native_1m_words(s, version)) is not None:
        window, why = ONE_MILLION, native
        reactive = not native_1m_enforced(s.model, parse_version(version) if version else None)
    elif cm.native_1m and not (suffix or s.one_m is True) or (cm.native_1m and s.disable_1m):
        # a model today's catalog gives a native 1M that this release does not (its list, its host: `native_1m`)
        window, why = (
            MODEL_CONTEXT_WINDOW_DEFAULT,
            "native 1M model, CLAUDE_CODE_DISABLE_1M_CONTEXT"
            if s.disable_1m
            else f"{MODEL_CONTEXT_WINDOW_DEFAULT:,}: Claude Code {version or '?'} gives {s.model} no native 1M window"
            + (" through another API host (ANTHROPIC_BASE_URL)" if s.other_api_host else ""),
        )
    elif suffix and not s.disable_1m:
        window, why, one_m = ONE_MILLION, "[1m] model setting", True
    elif s.one_m is True and not s.disable_1m:
        window, why, one_m = ONE_MILLION, "user (1M)", True
    elif s.one_m is None and peak_usage is not None and peak_usage > cm.window and not s.disable_1m and cm.supports_1m:
        window, why, one_m = (
            ONE_MILLION,
            f"inferred: a response used {peak_usage:,} tokens, more than {cm.window:,} (a [1m] setting is not recorded)",
            True,
        )
    else:
        window, why = cm.window, "model catalog"
    # the auto-compact window's source decides whether the threshold is enforced (§1.2, §1.4)
    per_model = model_windows(s)
    env_window = any(k == "auto_compact_window" and v == "CLAUDE_CODE_AUTO_COMPACT_WINDOW" for k, v in s.sources)
    if s.auto_compact_window is not None and env_window:
        source = "env"
    elif settings_key(s.model) in per_model or "*" in per_model or s.auto_compact_window is not None:
        source = "settings"
    elif cm is None and not at_or_after(version, UNKNOWN_MODEL_SOURCE_FROM, unknown=True):
        source = "model-default"  # (or "auto": see UNKNOWN_MODEL_SOURCE_FROM; and no variable read)
    elif cm is None:
        source = "auto" if s.unknown_model_unenforced else "unknown-model"
    elif reactive or (one_m and (not cm.native_1m or window == ONE_MILLION)):
        source = "auto"  # a [1m] 4.x model (or a model whose native 1M this release does not give), or a native 1M
        # one before 2.1.260: reactive only
    elif cm.native_1m or cm.default_source == "model-default":
        source = "model-default"
    else:
        source = "auto"
    return window, why, source, default_out, upper_out


# Settings that not every release reads (of ~/.claude/settings.json, of the environment): (the field, the source
# `from_environment` records for it, the era matrix's probe that says whether a release reads it, what is said when one
# does not)
RELEASE_READ_SETTINGS = (
    (
        "auto_compact_enabled",
        "autoCompactEnabled in settings.json",
        "settings-auto-compact",
        "autoCompactEnabled false in settings.json is not read (Claude Code {v} reads it from ~/.claude.json only; "
        "settings.json's from {first}, measured)",
    ),
    (
        "auto_compact_enabled",
        "DISABLE_AUTO_COMPACT",
        "env-auto-compact",
        "DISABLE_AUTO_COMPACT is not read (Claude Code {v} has no such variable and compacts all the same; read from "
        "{first}, measured)",
    ),
    (
        "auto_compact_window",
        "autoCompactWindow setting",
        "settings-window",
        "the autoCompactWindow setting is not read (Claude Code {v} has no such setting; read from {first}, measured)",
    ),
    (
        "auto_compact_window",
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW",
        "env-window",
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW is not read (Claude Code {v} has no such variable; read from {first}, measured)",
    ),
    (
        "model_windows",
        "modelSettings autoCompactWindow",
        "model-settings-window",
        "modelSettings' autoCompactWindow is not read (Claude Code {v} has no modelSettings; read from {first}, measured)",
    ),
    (
        "pct_override",
        "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE",
        "env-pct",
        "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE is not read (Claude Code {v} has no such variable; read from {first}, measured)",
    ),
    (
        "max_context_tokens",
        "CLAUDE_CODE_MAX_CONTEXT_TOKENS",
        "max-context-tokens",
        "CLAUDE_CODE_MAX_CONTEXT_TOKENS is not read (Claude Code {v} sizes an unknown model by its own rule; read from "
        "{first}, measured)",
    ),
)
# the source key a setting's place is listed under (`Settings.sources`), and what the setting is when it is not read
_READ_KEY = {"auto_compact_enabled": "auto_compact", "model_windows": "auto_compact_window", "max_context_tokens": "window"}
_UNREAD: dict[str, Any] = {"auto_compact_enabled": True, "model_windows": ()}
_ANY_PLACE = frozenset({"model_windows", "auto_compact_enabled"})


def read_by_release(s: Settings, version: str | None) -> tuple[Settings, tuple[str, ...]]:
    """The settings as the release that wrote a session read them, and what it left unread: a value that came from a
    place (`sources`) the era matrix measured that release not reading is dropped (2.1.88 reads autoCompactEnabled
    from ~/.claude.json only, and has no autoCompactWindow setting; 2.1.21 no CLAUDE_CODE_AUTO_COMPACT_WINDOW). A
    release the bisections do not place (none recorded, no version) reads them as today's does."""
    from inspector.claude.measured import answer_at, first_answering
    from inspector.claude.release import parse_version, show_version

    changes: dict[str, Any] = {}
    notes: list[str] = []
    sources = list(s.sources)
    per_model = {o for n, o, _p, _w in RELEASE_READ_SETTINGS if n == "model_windows"}
    for name, origin, probe, words in RELEASE_READ_SETTINGS:
        key = _READ_KEY.get(name, name)
        if name in _ANY_PLACE:  # a field of its own, or a switch any listed place turns: each place is dropped alone
            given = any(k == key and v == origin for k, v in sources)
        else:  # the place in force (the last one listed) is the one a release may not read
            given = next((v for k, v in reversed(sources) if k == key and v not in per_model), None) == origin
        if not given or answer_at(probe, version) is not False:
            continue
        sources = [(k, v) for k, v in sources if not (k == key and v == origin)]
        v = parse_version(version)
        note = words.format(v=show_version(v) if v else version, first=first_answering(probe, True) or "a later release")
        unread = {o for n, o, p, _w in RELEASE_READ_SETTINGS if n == name and answer_at(p, version) is False}
        if name == "auto_compact_enabled" and any(k == key and v not in unread for k, v in sources):
            notes.append(f"{note}; another place turns auto-compact off")  # (still off: a place this release reads)
            continue
        changes[name] = _UNREAD.get(name)
        notes.append(f"{note}: auto-compact is on" if name == "auto_compact_enabled" else note)
    if not notes:
        return s, ()
    return s.with_(sources=tuple(sources), **changes), tuple(notes)


def thresholds(
    s: Settings,
    peak_usage: int | None = None,
    version: str | None = None,
    *,
    measured: bool = True,
    limit: tuple[int, str] | None = None,
) -> Thresholds:
    """Claude Code's effective window, auto-compact, warning and blocking limits, by the rules of the release
    `version` (see inspector.claude.versions; None: the 2.1.88 reference), checked against what that release's binary
    did (the era matrix, inspector.claude.measured) unless `measured` is False (the formula alone). `limit`: the
    smallest count at which the session met a limit of its window, and how (series.FileFacts.limit_met): a 1M window
    inferred from usage is refuted by one far below that window's limits."""
    s, unread = read_by_release(s, version)  # once, here: the 1M window's own thresholds below are worked out again
    got = _thresholds(s, peak_usage, version, measured)
    if limit is not None and got.window_source.startswith("inferred") and got.auto_compact_enabled:
        got = _refuted_1m(got, s, peak_usage, version, measured, limit)
    return replace(got, rules="; ".join((got.rules, *unread))) if unread else got


def _refuted_1m(
    got: Thresholds, s: Settings, peak_usage: int | None, version: str | None, measured: bool, limit: tuple[int, str]
) -> Thresholds:
    """The thresholds without the 1M window inferred from usage when the session met a limit (compacted on its own,
    or found a prompt too long) far below what that window would have waited for (`got` as it is otherwise)."""
    if s.auto_compact_window is not None or s.model_windows:
        return got  # a setting lowers the threshold: a compaction below the 1M window's says nothing of the window
    # (CLAUDE_AUTOCOMPACT_PCT_OVERRIDE lowers it to a share of the window, which `got` has: a compaction far below even
    # that share is not one of a 1M window; 2.1.20, claude-fable-5 at 70%: compacted at 206,452, the 1M window's
    # threshold 677,600; kept seed 193003)
    count, how = limit
    at = got.auto_compact if got.auto_compact is not None else got.blocking
    if count >= at - TOLERANCE_BELOW:
        return got
    base = _thresholds(s.with_(one_m=False), peak_usage, version, measured)
    return replace(
        base,
        served_past=True,
        window_source=(
            f"{base.window_source}: a response used {peak_usage or 0:,} tokens, more than 200,000, but Claude Code "
            f"{how}, far below the {at:,} a 1M window would have waited for (the API served more than the window "
            "Claude Code counted)"
        ),
    )


def _lowered(auto: int, effective: int, pct: float | None) -> tuple[int, float | None]:
    """The auto-compact threshold under CLAUDE_AUTOCOMPACT_PCT_OVERRIDE (that percentage of the effective window, where
    it is lower than `auto`), with the percentage when it lowered it."""
    if pct is not None and pct_in_range(pct):
        lowered = math.floor(effective * pct / 100)
        if lowered < effective - AUTOCOMPACT_BUFFER_TOKENS:
            return lowered, pct
    return auto, None


def _thresholds(s: Settings, peak_usage: int | None, version: str | None, measured: bool) -> Thresholds:
    """thresholds() of settings already read as the release read them."""
    from inspector.claude.versions import rules_for

    rules = rules_for(version)
    era = rules.era
    source: str | None = None
    if era.windows == "catalog":
        model_window, why, source, default_out, upper_out = _catalog_window(s, peak_usage, version)
        if s.output_slot_cap:
            default_out = min(default_out, CAPPED_DEFAULT_MAX_TOKENS)
        max_out = min(s.max_output_tokens, upper_out) if s.max_output_tokens is not None else default_out
    else:
        # (a session that records no release takes the 2.1.88 reference's rules: no native 1M window either)
        model_window, why = resolve_window(s, peak_usage, version if rules.version is not None else "2.1.88")
        max_out = max_output_for(s, rules.version)
    window = model_window
    configured = s.auto_compact_window
    if era.windows == "catalog":
        key = settings_key(s.model)
        per_model = model_windows(s)
        own = per_model.get(key) if key else None
        own = own if own is not None else per_model.get("*")  # "*": the session's model (a what-if)
        if own is not None and not any(v == "CLAUDE_CODE_AUTO_COMPACT_WINDOW" for _, v in s.sources):
            configured = own
    floored = era.windows == "catalog" or _raises_small_windows(version)
    if configured is not None and floored:
        configured = max(configured, MIN_CONFIGURED_WINDOW)
    if configured is not None and configured < window:
        origin = next((v for k, v in reversed(s.sources) if k == "auto_compact_window"), "an auto-compact window setting")
        raised = (
            " (raised to 100,000, the least Claude Code accepts)"
            if floored and (s.auto_compact_window or 0) < MIN_CONFIGURED_WINDOW and configured == MIN_CONFIGURED_WINDOW
            else ""
        )
        asked = s.auto_compact_window if raised and s.auto_compact_window else configured
        why = f"{origin}: {asked:,}{raised}; the model's own window is {window:,} ({why})"
    if configured is not None:
        window = min(window, configured)
    if era.windows == "catalog":
        why += "".join(f"; {v}" for k, v in s.sources if k == "ignored")
    reserved = max_out if era.reserve == "max-output" else min(max_out, MAX_OUTPUT_TOKENS_FOR_SUMMARY)
    effective = window - reserved
    enabled = s.auto_compact_enabled and not s.compact_disabled
    shares = _level_shares(version) if era.threshold == "share" else None
    if shares is not None:
        if _fixed_counted_window(version):
            effective = FIXED_COUNTED_WINDOW
            reserved = window - effective
            why += f"; Claude Code counts against a fixed {FIXED_COUNTED_WINDOW:,} for every model"
        share_at = effective * AUTOCOMPACT_SHARE  # (compared as JavaScript does: a count at or above this float)
        auto: int = math.ceil(share_at)
        share_base = share_at if enabled else float(effective)
        warning, error = math.ceil(share_base * shares[0]), math.ceil(share_base * shares[1])
    else:
        auto = effective - AUTOCOMPACT_BUFFER_TOKENS
    if auto < 0:  # a window smaller than the reserve and the buffer: Claude Code would compact before every request
        why += f"; a {window:,} window leaves no room for the {reserved:,} reserve and the 13,000 buffer: the threshold is 0"
        auto = 0
        effective = max(effective, 0)
    auto, auto_pct = _lowered(auto, effective, s.pct_override)
    if era.enforcement == "none":
        enforced = configured is not None
    else:
        enforced = era.enforcement == "always" or source != "auto"
    if s.enforce is not None:  # a what-if
        enforced = s.enforce
    base = auto if enabled else effective
    if shares is None:
        warning, error = base - WARNING_THRESHOLD_BUFFER_TOKENS, base - ERROR_THRESHOLD_BUFFER_TOKENS
    if s.blocking_override is not None:
        blocking = s.blocking_override
    elif era.blocking == "model":
        # the blocking limit is measured on the model window, not the auto-compact window (§1.3)
        blocking = model_window - reserved - MANUAL_COMPACT_BUFFER_TOKENS
    elif era.blocking == "window":
        # up to 2.1.74 it is measured on the window without the summary reserve (the era matrix: 2.1.20 and 2.1.74
        # refuse to send at 197,000 of a 200,000 window)
        blocking = window - MANUAL_COMPACT_BUFFER_TOKENS
    else:
        blocking = effective - MANUAL_COMPACT_BUFFER_TOKENS
    limited = has_blocking_limit(version)
    if not limited:  # (nothing refuses a request before the API does: the window is where it stops)
        blocking = window
    result = Thresholds(
        model=s.model,
        context_window=window,
        model_window=model_window,
        max_output_tokens=max_out,
        reserved=reserved,
        effective_window=effective,
        auto_compact=auto if enabled and enforced else None,
        warning=max(0, warning),  # below 0 means "always": shown as 0
        error=max(0, error),
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
        blocks_before_sending=era.windows == "fixed" and limited,
        level_shares=shares,
        has_blocking_limit=limited,
    )
    return with_measured(result, s, version, peak_usage) if measured else result


BLOCKING_LIMIT_FROM = (2, 0, 77)


def has_blocking_limit(version: str | None) -> bool:
    """Whether the release refuses to send a request at a blocking limit: from 2.0.77, whose code first has one
    (`isAtBlockingLimit`), checked when a prompt starts up to 2.1.2 and before every request from 2.1.3 (the era matrix's
    blocks-at-all probe). Measured: with auto-compact off in ~/.claude.json, the REPL of 2.0.76 sent a prompt at 210,000
    where 2.1.0's refused it ("Context limit reached"), and 1.0.51 and 2.0.76 sent every request up to 1,010,000 in print
    mode. A session that names no release is taken as today's."""
    from inspector.claude.release import at_or_after

    return at_or_after(version, BLOCKING_LIMIT_FROM, unknown=True)


def _level_shares(version: str | None) -> tuple[float, float]:
    """(warning, error) shares of the threshold of a release of the "share" eras (up to 1.0.70)."""
    from inspector.claude.release import parse_version

    v = parse_version(version)
    first, before, after = WARNING_SHARE_RAISED
    return (after if v is not None and v >= first else before), ERROR_SHARE


def _fixed_counted_window(version: str | None) -> bool:
    """Whether the release counts against a fixed 180,000 whatever the model (up to 1.0.15: the era matrix's
    window-less-output probe, bisected; 1.0.16 counts against the window less the model's output)."""
    from inspector.claude.measured import answer_at

    return answer_at("window-less-output", version) is False


def levels(t: Thresholds, base: int) -> tuple[int, int]:
    """The warning and error levels of a threshold (or, auto-compact off, an effective window) `base` by the rule of
    `t`'s release: 20,000 below it, or up to 1.0.70 a share of it."""
    if t.level_shares is None:
        return max(0, base - WARNING_THRESHOLD_BUFFER_TOKENS), max(0, base - ERROR_THRESHOLD_BUFFER_TOKENS)
    return math.ceil(base * t.level_shares[0]), math.ceil(base * t.level_shares[1])


def _measured_defaults(s: Settings, t: Thresholds) -> bool:
    """Whether the settings are the defaults the era matrix ran with (only the model chosen): any window, percent,
    output or enforcement setting, or a 1M window inferred from usage, is outside what it measured. A 1M setting
    that only says what the model's name says (a session that announces its models: `series.for_model`) is the
    matrix's own way to run that name."""
    return (
        s.window is None
        and (s.one_m is None or s.one_m == ("[1m]" in (s.model or "").lower()))
        and s.auto_compact_window is None
        and s.pct_override is None
        and s.max_output_tokens is None
        and s.blocking_override is None
        and not s.disable_1m
        and not s.output_slot_cap
        and not s.model_windows
        and s.max_context_tokens is None
        and not s.unknown_model_unenforced
        and s.enforce is None
        and not t.window_source.startswith("inferred")
    )


TOLERANCE_BELOW = 400  # a recorded count (preTokens, or a usage) sits this far above the limit at most
TOLERANCE_ABOVE = 400  # and this far below it (its estimate of the messages since the last usage can be negative)


def _near(formula: int | None, measured: int) -> bool:
    return formula is not None and measured - TOLERANCE_BELOW <= formula <= measured + TOLERANCE_ABOVE


def _round_limit(n: int) -> int:
    """A measured limit as the round number Claude Code computes it from (windows and reserves are whole thousands
    in every release measured), when the measured count is within the tolerance of one."""
    down = n // 1000 * 1000
    up = down + 1000
    if n - down <= TOLERANCE_BELOW:
        return down
    if up - n <= TOLERANCE_ABOVE:
        return up
    return n


def _implied_window(t: Thresholds, auto: int | None, blocking: int | None) -> int | None:
    """The window a measured threshold or blocking limit implies by the era's own arithmetic (auto = window −
    reserve − 13,000; blocking = window − reserve − 3,000, or window − 3,000 before 2.1.21)."""
    if t.level_shares is not None:  # up to 1.0.70 every window is 200,000: a threshold that differs sized the output
        return None
    if auto is not None:
        return auto + t.reserved + AUTOCOMPACT_BUFFER_TOKENS
    if blocking is not None:
        from inspector.claude.versions import ERAS

        rule = next((e.blocking for e in ERAS if e.key == t.era), "effective")
        return blocking + MANUAL_COMPACT_BUFFER_TOKENS + (0 if rule == "window" else t.reserved)
    return None


def _as_1m(t: Thresholds, s: Settings, peak_usage: int | None, version: str | None, why: str | None = None) -> Thresholds:
    """The thresholds of the model's `[1m]` setting, for a session whose usage shows it had a 1M window: the model
    keeps its name, the window source says why."""
    one = thresholds(s.with_(model=(s.model or "") + "[1m]"), peak_usage, version)
    if not one.measured:
        return t
    source = t.window_source if why is None else f"inferred: {why} (a [1m] setting is not recorded)"
    return replace(one, model=s.model, window_source=source)


def _native_1m_differs(s: Settings, version: str | None, measured: tuple[int, int, int] | None) -> str | None:
    """Why the era matrix's measurement of a release does not size this session's window, or None: the matrix runs
    its fake API on another host (ANTHROPIC_BASE_URL), and whether the model has a native 1M window differs between
    the session's release on the session's host and the measured release on the fake's (`models.native_1m`: 2.1.144-
    2.1.284 give it only on Anthropic's host; a release before 2.1.117, or before the model's turn in the lists, none)."""
    from inspector.claude.models import native_1m
    from inspector.claude.release import parse_version, show_version

    if measured is None or s.disable_1m or "[1m]" in (s.model or "").lower():
        return None
    here = native_1m(s.model, parse_version(version) if version else None, not s.other_api_host)
    there = native_1m(s.model, measured, False)
    if here == there:
        return None
    if here and not native_1m(s.model, measured, True):
        return f"this release gives {s.model} a native 1M window, which {show_version(measured)} gives it on no host"
    if here:
        return (
            f"this release gives {s.model} a native 1M window, which the measurement on {show_version(measured)}, made "
            "through another API host, did not have"
        )
    return (
        f"the measurement on {show_version(measured)} had a native 1M window for {s.model}, which this session's "
        "release and host do not give"
    )


def _served_by_today(s: Settings, version: str | None, window: int | None, peak_usage: int | None) -> str | None:
    """Why a response past the window a release counted says nothing of a setting, or None: the release counted a
    smaller window than the model has (today's catalog), natively, which the API serves: the model came out after the
    release (an unknown model to it, `models.unknown_to`: 2.1.200 counted 200,000 for claude-mythos-5-2 and sent a
    360,000-token request, seed 147103), or the release gave it less (through another API host than Anthropic's,
    2.1.197-2.1.284 count 200,000 for claude-sonnet-5, 1M natively: the era matrix; 2.1.200 compacted it at 204,069 in
    the same run; on Anthropic's host they give it its 1M: `models.native_1m`)."""
    from inspector.claude.models import catalog, unknown_to
    from inspector.claude.release import parse_version, show_version

    if window is None or peak_usage is None or peak_usage <= window or "[1m]" in (s.model or "").lower():
        return None
    real = catalog(s.model)
    if real is None or not real.native_1m or real.window <= window:
        return None
    later = unknown_to(s.model, parse_version(version))
    counted = f"a model it does not know (first named in {show_version(later)})" if later else "this model"
    return (
        f"a response used {peak_usage:,} tokens, more than the {window:,} window Claude Code {version} counts for "
        f"{counted}: the API served {s.model}'s own {real.window:,}"
    )


def with_measured(t: Thresholds, s: Settings, version: str | None, peak_usage: int | None = None) -> Thresholds:
    """The formula's numbers checked against what the release's own binary did (the era matrix): where they disagree,
    the binary's are used and the rules say so. A session whose usage passed the window its model gets by default
    had a 1M window: the matrix's `[1m]` measurement of that model answers it, when there is one."""
    from inspector.claude.measured import lookup

    one_m = "[1m]" in (s.model or "").lower()
    if t.window_source.startswith("inferred") and s.model and not one_m:
        # a 1M window inferred from usage: what the release does with the model's [1m] setting
        return _as_1m(t, s, peak_usage, version)
    if not _measured_defaults(s, t):
        return _percent_of_measured(t, s, version, peak_usage)
    lk = lookup(version, s.model)
    if lk.cell is None:
        return replace(t, measured=(lk.note + ": the formula's numbers are not checked by a measurement") if lk.note else "")
    differs = _native_1m_differs(s, version, lk.release)
    if differs:
        return replace(t, measured=f"{lk.note}: {differs}; the formula's numbers are used, not measured")
    c = lk.cell
    ch: dict[str, Any] = {"measured_on": c.label}
    said: list[str] = []
    formula_auto = t.auto_compact if t.auto_compact is not None else t.unenforced_threshold
    if formula_auto is None and not t.auto_compact_enabled:  # what the formula gives with auto-compact on (the cell's)
        formula_auto = (
            math.ceil(t.effective_window * AUTOCOMPACT_SHARE)
            if t.level_shares is not None
            else t.effective_window - AUTOCOMPACT_BUFFER_TOKENS
        )
    m_auto = None
    if c.enforced and c.threshold is not None:
        m_auto = formula_auto if _near(formula_auto, c.threshold) else _round_limit(c.threshold)
    m_block = None
    if c.blocks and c.blocking_usage is not None:
        m_block = t.blocking if _near(t.blocking, c.blocking_usage) else _round_limit(c.blocking_usage)
    window = _implied_window(t, m_auto, m_block)
    served = _served_by_today(s, version, window, peak_usage)
    if served:
        ch["served_past"] = True
        said.append(served)
    elif window is not None and peak_usage is not None and peak_usage > window and s.one_m is not False:
        if s.model and not one_m and lookup(version, s.model + "[1m]").cell is not None:
            return _as_1m(
                t,
                s,
                peak_usage,
                version,
                f"a response used {peak_usage:,} tokens, more than the {window:,} window the defaults give",
            )
        return replace(
            t,
            measured=(
                f"{lk.note}: the defaults give a {window:,} window, but a response here used "
                f"{peak_usage:,} tokens, so a larger window was set (a [1m] model or a setting the "
                f"transcript does not record); the formula's numbers are used, not measured"
            ),
        )
    if window is not None and window != t.model_window and window > 0:
        ch.update(
            context_window=window,
            model_window=window,
            effective_window=window - t.reserved,
            window_source=f"{window:,}: the window the {c.label} binary's limits imply (era matrix); the formula "
            f"gives {t.model_window:,} ({t.window_source})",
        )
    if t.auto_compact_enabled:
        if m_auto is not None:
            if m_auto == formula_auto:
                said.append(
                    f"it compacted at {c.threshold:,} (the threshold {m_auto:,} confirmed)"
                    + ("" if t.enforced else "; the formula's rules said it was not enforced")
                )
            else:
                ch["from_binary"] = True
                said.append(
                    f"it compacted at {c.threshold:,}, not at the formula's "
                    f"{'no threshold' if formula_auto is None else f'{formula_auto:,}'}: {m_auto:,} is used"
                )
            ch.update(enforced=True, auto_compact=m_auto, unenforced_threshold=None)
            if t.level_shares is None:
                ch["warning"], ch["error"] = levels(t, m_auto)
            elif m_auto != formula_auto:  # (up to 1.0.70: the output it reserved, the threshold 0.92 of what is left)
                near = int(m_auto / AUTOCOMPACT_SHARE)
                effective = max(e for e in (near - 1, near, near + 1) if math.ceil(e * AUTOCOMPACT_SHARE) <= m_auto)
                at = effective * AUTOCOMPACT_SHARE
                w, e = t.level_shares
                ch.update(
                    effective_window=effective,
                    reserved=t.context_window - effective,
                    warning=math.ceil(at * w),
                    error=math.ceil(at * e),
                )
        else:
            unenforced = formula_auto
            if window is not None and window != t.model_window:
                unenforced = window - t.reserved - AUTOCOMPACT_BUFFER_TOKENS
            # (Claude Code enforces a threshold exactly when its window's source is not "auto": 2.1.219's code)
            ch.update(enforced=False, auto_compact=None, unenforced_threshold=unenforced, compact_source="auto")
            if unenforced is not None and unenforced != formula_auto:  # the warning follows the threshold (base)
                ch["warning"], ch["error"] = levels(t, unenforced)
            if c.blocks_with_defaults and c.threshold_usage is None:
                said.append("it never compacted on its own: it refused to send the request itself first")
            else:
                said.append(
                    "it never compacted before the next request, up to 2.1M tokens: no threshold is enforced"
                    + (f" (the {unenforced:,} it computes is not acted on)" if unenforced else "")
                )
            if c.reactive:
                said.append(f"when the API refused a request as too long it {c.reactive_words}")
    if m_block is not None:
        if m_block == t.blocking:
            said.append(
                f"with auto-compact off it refused to send at a usage of {c.blocking_usage:,} (the blocking limit "
                f"{t.blocking:,} confirmed)"
            )
        else:
            said.append(
                f"with auto-compact off it refused to send at a usage of {c.blocking_usage:,}, not at the formula's "
                f"{t.blocking:,}: {m_block:,} is used"
            )
            ch["blocking"] = m_block
        ch["blocks_before_sending"] = True
    elif c.auto_off_compacts:
        said.append(
            "DISABLE_AUTO_COMPACT set, it compacted all the same (this release does not read it): "
            + (
                "its blocking limit could not be measured"
                if t.has_blocking_limit
                else "it has no blocking limit (with auto-compact off in ~/.claude.json it sent every request)"
            )
        )
    else:
        ch["blocks_before_sending"] = False
        said.append("with auto-compact off it sent every request, up to 2.1M tokens (nothing blocks)")
    ch["measured"] = f"{lk.note}: " + "; ".join(said)
    return replace(t, **ch)


def _percent_of_measured(t: Thresholds, s: Settings, version: str | None, peak_usage: int | None) -> Thresholds:
    """The thresholds under CLAUDE_AUTOCOMPACT_PCT_OVERRIDE, the one setting the era matrix did not run, where its
    measurement of the defaults says the release sized the model's window or enforced its threshold otherwise than the
    formula: the percentage lowers a threshold, it neither sizes the window nor enforces one (format-2.1.3xx.md §1.3),
    so the binary's window and enforcement hold, and the percentage is taken of its effective window (2.1.250 ran
    claude-opus-5 with a 200,000 window where today's catalog gives 1M: at 50% it compacted at the first check above
    90,000, generated seed 3037). `t` itself for any other setting, or where the measurement agrees."""
    if s.pct_override is None or not _measured_defaults(s.with_(pct_override=None), t):
        return t
    d = thresholds(s.with_(pct_override=None), peak_usage, version)
    if not d.measured_on or (d.context_window == t.context_window and d.enforced == t.enforced):
        return t
    effective = d.effective_window
    auto, auto_pct = _lowered(max(0, effective - AUTOCOMPACT_BUFFER_TOKENS), effective, s.pct_override)
    base = auto if d.auto_compact_enabled else effective
    return replace(
        d,
        auto_compact=auto if d.auto_compact_enabled and d.enforced else None,
        unenforced_threshold=auto if d.auto_compact_enabled and not d.enforced else None,
        auto_pct=auto_pct,
        warning=levels(d, base)[0],
        error=levels(d, base)[1],
        from_binary=True,
        measured=f"{d.measured}; CLAUDE_AUTOCOMPACT_PCT_OVERRIDE={s.pct_override:g} takes {s.pct_override:g}% of its "
        f"{effective:,} effective window" + ("" if d.enforced else " (still not enforced: a percentage enforces nothing)"),
    )


def percent_left(tokens: int, t: Thresholds) -> int:
    base = t.base
    if base <= 0:
        return 0
    return max(0, js_round((base - tokens) / base * 100))


def warning_state(tokens: int, t: Thresholds) -> str:
    """ "ok", "warning", "auto_compact" or "blocking" (the most severe that applies). Where Claude Code does not
    enforce the threshold (2.1.159+, window source "auto"), it shows no level at all: "ok"."""
    if not t.enforced:
        return "ok"
    if t.has_blocking_limit and tokens >= t.blocking and (t.auto_compact_enabled or t.blocks_before_sending):
        return "blocking"
    if t.auto_compact is not None and tokens >= t.auto_compact:
        return "auto_compact"
    if tokens >= t.warning:
        return "warning"
    return "ok"
