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

from inspector.tokens.thresholds import Settings
from inspector.tokens.whatif import TABLE, InvalidSetting, WhatIf, describe_changes, form_value, from_form

describe = describe_changes


def _widget_id(w: WhatIf) -> str:
    return "wi-" + w.key.replace("_", "-")


class WhatIfScreen(ModalScreen[Settings | None]):
    BINDINGS = [("escape", "dismiss(None)", "Cancel"), ("ctrl+r", "reset", "Reset"), ("ctrl+s", "apply", "Apply")]

    def __init__(self, current: Settings, configured: Settings) -> None:
        super().__init__()
        self.current = current
        self.configured = configured

    def compose(self) -> ComposeResult:
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
            for w in TABLE:
                yield from self._row(w)
            yield Static("", id="wi-error")
            with Horizontal(id="wi-buttons"):
                yield Button("Apply (ctrl+s)", variant="primary", id="wi-apply")
                yield Button("Reset to configured (ctrl+r)", id="wi-reset")
                yield Button("Cancel (esc)", id="wi-cancel")

    def _row(self, w: WhatIf) -> ComposeResult:
        value = form_value(w, self.current, self.configured)
        if w.kind == "switch":
            with Horizontal(classes="wi-switch"):
                yield Switch(value=value, id=_widget_id(w))
                yield Label(w.label)
            return
        yield Label(w.label)
        if w.kind == "choice":
            yield Select([(label, v) for label, v, _ in w.choices], value=value, allow_blank=False, id=_widget_id(w))
        else:
            yield Input(value, placeholder=w.placeholder, id=_widget_id(w))

    def on_mount(self) -> None:
        self.query_one("#wi-model", Input).focus()

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for w in TABLE:
            widget = self.query_one(f"#{_widget_id(w)}")
            assert isinstance(widget, (Input, Select, Switch))
            out[w.key] = widget.value
        return out

    def action_apply(self) -> None:
        try:
            chosen = from_form(self.configured, self.values())
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
