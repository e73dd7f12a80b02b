"""The help screen, generated from the action registry."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from inspector.tui.actions import ACTIONS

SCOPES = (("app", "Everywhere"), ("browser", "Session browser"), ("session", "Session"), ("workbench", "Compaction workbench"))


def help_table() -> Table:
    t = Table(box=None, show_header=False, padding=(0, 2))
    t.add_column(style="bold")
    t.add_column()
    for scope, title in SCOPES:
        t.add_row(Text(title, style="bold underline"), "")
        for a in ACTIONS:
            if a.scope == scope:
                keys = " / ".join(
                    k.replace("question_mark", "?")
                    .replace("slash", "/")
                    .replace("colon", ":")
                    .replace("left_square_bracket", "[")
                    .replace("right_square_bracket", "]")
                    for k in a.key.split(",")
                )
                t.add_row(keys, a.help)
        t.add_row("", "")
    t.add_row("tab / shift+tab", "Move between the panes of a screen (the focused one has a bright border; keys act on it)")
    t.add_row("ctrl+p", "Command palette: every action above with its key, and the theme switcher")
    t.add_row("", 'The key bar at the bottom shows the keys that fit, then "? all keys": this screen.')
    t.add_row("", "")
    t.add_row(Text("The token chart", style="bold underline"), "")
    t.add_row("x-axis", "The responses in order, first to last (not time): its ends give their number and time")
    t.add_row("bars", "The context sent with each response (a column's largest, when it shows several), coloured by band")
    t.add_row(
        "lines",
        "Claude Code's thresholds, valued on the left, named on the right; when several fall in one "
        'row, the most telling is drawn and named first ("auto +2": two more in that row)',
    )
    t.add_row("▼", "A compaction or a microcompaction, above the first response after it")
    t.add_row("", "")
    t.add_row(Text("The timeline", style="bold underline"), "")
    t.add_row("»", "A prompt you typed that a partial compaction can pivot on (summarize from / up to here)")
    return t


class HelpScreen(ModalScreen[None]):
    BINDINGS = [("escape,q,question_mark", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(Text("inspector: keys", style="bold"))
            yield Static(help_table())
