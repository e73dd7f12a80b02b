"""The small dialogs: the text to search every session for, the folder an archive goes to, the record to go to."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class SearchPrompt(ModalScreen[str | None]):
    BINDINGS = [("escape", "dismiss(None)", "Cancel")]

    def compose(self) -> ComposeResult:
        yield Static("Search the text of every session (tool output included); Enter to search, Esc to cancel", id="search-help")
        yield Input(placeholder="text to find", id="search-all")

    @on(Input.Submitted)
    def done(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)


class GotoPrompt(ModalScreen[str | None]):
    """The record to go to in a session: its line number (L123 as the why pane lists them) or a uuid (prefix)."""

    BINDINGS = [("escape", "dismiss(None)", "Cancel")]

    def compose(self) -> ComposeResult:
        yield Static("Go to a record: its line (123 or L123) or its uuid; Enter to go, Esc to cancel", id="search-help")
        yield Input(placeholder="line or uuid", id="goto")

    @on(Input.Submitted)
    def done(self, event: Input.Submitted) -> None:
        ref = event.value.strip()
        self.dismiss(ref[1:] if ref[:1] in ("L", "l") and ref[1:].isdigit() else ref or None)


class ArchivePrompt(ModalScreen[Path | None]):
    """Where the archive goes: a folder laid out like a projects root (new or grown files only are copied)."""

    BINDINGS = [("escape", "dismiss(None)", "Cancel")]

    def __init__(self, sessions: int) -> None:
        super().__init__()
        self.sessions = sessions

    def compose(self) -> ComposeResult:
        from textual.containers import Vertical

        with Vertical(id="archive-box"):
            yield Static(Text("Archive sessions", style="bold"))
            yield Static(
                Text(
                    f"Copy the {self.sessions} session(s) listed, with their subagents, tool results and memory, "
                    "into this folder (only what is new or grown; every copy checked by its hash; originals never "
                    "touched). Enter archives, esc cancels. Browse it later with `inspector FOLDER`."
                )
            )
            yield Input(str(Path.home() / "claude-archive"), id="archive-path")

    def on_mount(self) -> None:
        self.query_one("#archive-path", Input).focus()

    @on(Input.Submitted)
    def done(self, event: Input.Submitted) -> None:
        v = event.value.strip()
        self.dismiss(Path(v).expanduser() if v else None)
