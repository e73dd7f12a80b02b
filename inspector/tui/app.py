"""The inspector app: the session browser, session screens and the compaction workbench."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import Any

from textual.app import App, SystemCommand
from textual.notifications import SeverityLevel
from textual.screen import Screen

from inspector import __version__
from inspector.textutil import printable, redact
from inspector.transcript.discovery import Target
from inspector.tui.actions import ACTIONS, bindings


class InspectorApp(App[None]):
    CSS_PATH = "styles/app.tcss"
    TITLE = f"inspector {__version__}"
    BINDINGS = bindings("app")

    def __init__(self, target: Target, notice: str | None = None) -> None:
        super().__init__()
        self.target = target
        self.notice = notice
        self._prefs_ready = False
        theme = load_prefs().get("theme")
        if isinstance(theme, str) and theme in self.available_themes:
            self.theme = theme  # the one chosen last time (the command palette's theme switcher)
        self._prefs_ready = True

    def watch_theme(self, theme: str) -> None:
        if getattr(self, "_prefs_ready", False):
            save_prefs({**load_prefs(), "theme": theme})

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification as plain text: they carry file names, search terms and error messages, where a
        "[" is not markup (and an unbalanced "[/x]" would be an error). Screens' notify() lands here too."""
        kw: dict[str, Any] = {"title": printable(title), "severity": severity, "markup": False}
        if timeout is not None:
            kw["timeout"] = timeout
        super().notify(printable(redact(message), keep_newlines=True), **kw)

    def on_mount(self) -> None:
        if self.target.kind == "file":
            from inspector.tui.screens.session import SessionScreen

            self.push_screen(SessionScreen(self.target.path))
        else:
            from inspector.tui.screens.browser import BrowserScreen

            self.push_screen(BrowserScreen(self.target, self.notice))
        if self.notice:
            self.notify(self.notice, timeout=8)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        scope = getattr(screen, "scope_name", None)
        from textual.binding import Binding

        for a in ACTIONS:
            if a.palette and a.scope in ("app", scope) and a.action != "quit":  # Textual's own Quit is listed already
                target = self if a.scope == "app" else screen
                key = self.get_key_display(Binding(a.key.split(",")[0], a.action))
                yield SystemCommand(f"{a.name}  ({key})", a.help, partial(self._run, target, a.action))

    def _run(self, target: object, action: str) -> None:
        self.call_later(target.run_action, action)  # type: ignore[attr-defined]

    def _handle_exception(self, error: Exception) -> None:  # textual is pinned exactly: this hook is stable for us
        """An unexpected error becomes a notification, with the traceback in a file, not on screen.

        Under a test (headless) the default behaviour is kept, so a bug fails the test loudly.
        """
        if self.is_headless:
            return super()._handle_exception(error)
        import traceback

        from inspector.library.stats import cache_dir

        where = "the cache folder"
        try:
            folder = cache_dir()
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / "last-error.txt"
            path.write_text(redact("".join(traceback.format_exception(error))))
            where = str(path)
        except OSError:
            pass
        text = f"Unexpected error: {type(error).__name__}: {redact(str(error))}. Details in {where}."
        self.notify(text, severity="error", timeout=30)
        self.call_later(self.show_error, text)

    def show_error(self, text: str) -> None:
        """The error stays on screen, above the footer, until the next one replaces it (esc on the banner clears it)."""
        from textual.widgets import Static

        from inspector.textutil import printable

        screen = self.screen
        try:
            banner = screen.query_one("#error-banner", Static)
            banner.update(printable(text))
            banner.display = True
        except Exception:  # noqa: BLE001 - no banner on this screen yet
            try:
                screen.mount(Static(printable(text), id="error-banner"))
            except Exception:  # noqa: BLE001 - the notification stands
                pass

    def action_help(self) -> None:
        from inspector.tui.screens.help import HelpScreen

        self.push_screen(HelpScreen())

    def action_back(self) -> None:
        if len(self.screen_stack) > 2:
            self.pop_screen()
        else:
            self.notify("press q to quit", timeout=2)


def run(target: Target, notice: str | None = None) -> None:
    InspectorApp(target, notice).run()


def prefs_path() -> Path:
    """The app's preferences (the theme): $XDG_CONFIG_HOME/inspector/app.json, by default ~/.config/inspector."""
    from inspector.statefiles import inspector_dir

    return inspector_dir("config") / "app.json"


def load_prefs() -> dict[str, Any]:
    from inspector.statefiles import read_state

    return read_state(prefs_path()) or {}


def save_prefs(prefs: dict[str, Any]) -> None:
    """Written whole (statefiles.write_state); a folder that cannot be written costs only the memory."""
    from inspector.statefiles import write_state

    write_state(prefs_path(), prefs, readable=True)
