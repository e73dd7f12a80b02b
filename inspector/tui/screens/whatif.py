"""What if: change the settings that move Claude Code's thresholds and see the session again.

The same overrides as the `tokens` command's flags. Starts from what the environment and Claude
Code's config say (shown with where each came from); Enter applies, ctrl+r goes back to them.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static, Switch

from inspector.tokens.thresholds import Settings, describe_changes, pct_in_range

TRISTATE = [("as configured", "keep"), ("on", "on"), ("off", "off")]
ONE_M = [("infer from usage above 200k", "infer"), ("yes", "on"), ("no", "off")]
ENFORCE = [("as Claude Code decides (by the window source)", "keep"), ("enforced", "on"), ("not enforced", "off")]


class InvalidSetting(ValueError):
    pass


def _int(raw: str, what: str) -> int | None:
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


def settings_from_form(base: Settings, values: dict[str, Any]) -> Settings:
    """The settings a filled-in form asks for (raises InvalidSetting with a message for the user)."""
    pct_raw = str(values.get("pct", "")).strip()
    pct = None
    if pct_raw:
        try:
            pct = float(pct_raw)
        except ValueError:
            raise InvalidSetting(f"auto-compact percent: {pct_raw!r} is not a number") from None
        if not pct_in_range(pct):
            raise InvalidSetting("auto-compact percent must be in (0, 100]")
    model = str(values.get("model", "")).strip() or None
    one_m = {"infer": None, "on": True, "off": False}[values.get("one_m", "infer")]
    changes: dict[str, Any] = {
        "model": model,
        "window": _int(str(values.get("window", "")), "window"),
        "one_m": one_m,
        "auto_compact_window": _int(str(values.get("auto_compact_window", "")), "auto-compact window"),
        "pct_override": pct,
        "max_output_tokens": _int(str(values.get("max_output_tokens", "")), "max output tokens"),
        "blocking_override": _int(str(values.get("blocking", "")), "blocking limit"),
        "disable_1m": bool(values.get("disable_1m")),
        "output_slot_cap": bool(values.get("output_cap")),
        "enforce": {"keep": None, "on": True, "off": False}[values.get("enforce", "keep")],
    }
    per_model = _int(str(values.get("model_window", "")), "per-model auto-compact window")
    changes["model_windows"] = (("*", per_model),) if per_model else tuple(w for w in base.model_windows if w[0] != "*")
    auto = values.get("auto_compact", "keep")
    if auto == "on":
        changes["auto_compact_enabled"], changes["compact_disabled"] = True, False
    elif auto == "off":
        changes["auto_compact_enabled"] = False
    return base.with_(**changes)


describe = describe_changes


class WhatIfScreen(ModalScreen[Settings | None]):
    BINDINGS = [("escape", "dismiss(None)", "Cancel"), ("ctrl+r", "reset", "Reset"), ("ctrl+s", "apply", "Apply")]

    def __init__(self, current: Settings, configured: Settings) -> None:
        super().__init__()
        self.current = current
        self.configured = configured

    def compose(self) -> ComposeResult:
        c = self.current
        src = (
            ", ".join(f"{k} from {v}" if k != "ignored" else f"ignored: {v}" for k, v in self.configured.sources)
            or "Claude Code's defaults (no override found)"
        )
        with VerticalScroll(id="whatif-box"):
            yield Static(Text("What if: the settings that move the thresholds", style="bold"))
            yield Static(
                Text(
                    f"Configured: {src}. Leave a box empty for Claude Code's own rule. "
                    "ctrl+s applies, ctrl+r resets, esc cancels (the buttons are at the end)."
                ),
                id="whatif-src",
            )
            yield Label("Model (e.g. claude-opus-4-6, opus[1m]); empty: the session's")
            yield Input(c.model or "", placeholder="the session's model", id="wi-model")
            yield Label("Context window, tokens; empty: resolve from the model")
            yield Input(f"{c.window}" if c.window else "", placeholder="200000", id="wi-window")
            yield Label("1M-token window")
            yield Select(ONE_M, value={None: "infer", True: "on", False: "off"}[c.one_m], allow_blank=False, id="wi-one-m")
            yield Label("Auto-compact (DISABLE_AUTO_COMPACT, autoCompactEnabled)")
            auto = (
                "keep"
                if c.auto_compact_enabled == self.configured.auto_compact_enabled
                else ("on" if c.auto_compact_enabled else "off")
            )
            yield Select(TRISTATE, value=auto, allow_blank=False, id="wi-auto")
            yield Label("Auto-compact window, tokens (CLAUDE_CODE_AUTO_COMPACT_WINDOW)")
            yield Input(f"{c.auto_compact_window}" if c.auto_compact_window else "", id="wi-acw")
            yield Label("Per-model auto-compact window, tokens (modelSettings.<model>.autoCompactWindow, /autocompact)")
            own = dict(c.model_windows).get("*")
            yield Input(f"{own}" if own else "", id="wi-model-window")
            yield Label("Threshold enforced (2.1.159+: only for some window sources)")
            yield Select(ENFORCE, value={None: "keep", True: "on", False: "off"}[c.enforce], allow_blank=False, id="wi-enforce")
            yield Label("Auto-compact percent (CLAUDE_AUTOCOMPACT_PCT_OVERRIDE, only lowers it)")
            yield Input(f"{c.pct_override:g}" if c.pct_override else "", id="wi-pct")
            yield Label("Max output tokens (CLAUDE_CODE_MAX_OUTPUT_TOKENS)")
            yield Input(f"{c.max_output_tokens}" if c.max_output_tokens else "", id="wi-maxout")
            yield Label("Blocking limit (CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE)")
            yield Input(f"{c.blocking_override}" if c.blocking_override else "", id="wi-blocking")
            with Horizontal(classes="wi-switch"):
                yield Switch(value=c.disable_1m, id="wi-disable-1m")
                yield Label("CLAUDE_CODE_DISABLE_1M_CONTEXT")
            with Horizontal(classes="wi-switch"):
                yield Switch(value=c.output_slot_cap, id="wi-cap")
                yield Label("8k output-slot cap (a server-side flag whose value is unknown: off by default)")
            yield Static("", id="wi-error")
            with Horizontal(id="wi-buttons"):
                yield Button("Apply (ctrl+s)", variant="primary", id="wi-apply")
                yield Button("Reset to configured (ctrl+r)", id="wi-reset")
                yield Button("Cancel (esc)", id="wi-cancel")

    def on_mount(self) -> None:
        self.query_one("#wi-model", Input).focus()

    def values(self) -> dict[str, Any]:
        q = self.query_one
        return {
            "model": q("#wi-model", Input).value,
            "window": q("#wi-window", Input).value,
            "one_m": q("#wi-one-m", Select).value,
            "auto_compact": q("#wi-auto", Select).value,
            "auto_compact_window": q("#wi-acw", Input).value,
            "pct": q("#wi-pct", Input).value,
            "max_output_tokens": q("#wi-maxout", Input).value,
            "blocking": q("#wi-blocking", Input).value,
            "disable_1m": q("#wi-disable-1m", Switch).value,
            "output_cap": q("#wi-cap", Switch).value,
            "model_window": q("#wi-model-window", Input).value,
            "enforce": q("#wi-enforce", Select).value,
        }

    def action_apply(self) -> None:
        try:
            chosen = settings_from_form(self.configured, self.values())
        except InvalidSetting as exc:
            self.query_one("#wi-error", Static).update(Text(str(exc), style="bold red"))
            return
        self.dismiss(chosen)

    def action_reset(self) -> None:
        self.dismiss(self.configured)

    @on(Input.Submitted)
    def on_submit(self) -> None:
        self.action_apply()

    @on(Button.Pressed, "#wi-apply")
    def on_apply(self) -> None:
        self.action_apply()

    @on(Button.Pressed, "#wi-reset")
    def on_reset(self) -> None:
        self.action_reset()

    @on(Button.Pressed, "#wi-cancel")
    def on_cancel(self) -> None:
        self.dismiss(None)
