"""The key bar: the keys of what has focus, on one line that never cuts a label in half.

Textual's footer lays every key out in a grid and cuts the last ones mid-word on a narrow terminal. This bar
takes the active bindings in order (the focused widget's first, then the screen's, then the app's), keeps as many
whole "key label" pairs as fit, and ends with "? all keys" when some are left out; the help screen and the
command palette list them all.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

MORE = "? all keys"
GAP = "  "


def fit(pairs: list[tuple[str, str]], width: int) -> list[tuple[str, str]]:
    """The whole pairs that fit in `width` cells, leaving room for the "all keys" hint when some do not."""

    def size(ps: list[tuple[str, str]]) -> int:
        return sum(len(k) + 1 + len(label) for k, label in ps) + len(GAP) * max(0, len(ps) - 1)

    if size(pairs) <= width:
        return pairs
    room = width - len(GAP) - len(MORE)
    out: list[tuple[str, str]] = []
    for p in pairs:
        if size(out + [p]) > room:
            break
        out.append(p)
    return out


class KeyBar(Widget):
    DEFAULT_CSS = """
    KeyBar { dock: bottom; height: 1; background: $panel; color: $text-muted; padding: 0 1; }
    """

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _changed(self, _screen: object) -> None:
        self.refresh()

    def on_resize(self) -> None:
        self.refresh()

    def pairs(self) -> list[tuple[str, str]]:
        """The keys to show: those marked for the bar first, then, as room allows, the other keys of inspector's own
        registry (n/N, 1-6, export, reload...) that Textual's footer never showed."""
        from inspector.tui.actions import ACTIONS

        ours = {a.action for a in ACTIONS}
        seen: set[str] = set()
        first: list[tuple[str, str]] = []
        more: list[tuple[str, str]] = []
        for active in self.screen.active_bindings.values():
            b = active.binding
            if b.action in seen or not active.enabled or not (b.show or b.action in ours):
                continue
            seen.add(b.action)
            (first if b.show else more).append((self.app.get_key_display(b), b.description))
        return first + more

    def render(self) -> Text:
        pairs = self.pairs()
        shown = fit(pairs, max(0, self.size.width))
        text = Text(no_wrap=True, overflow="crop")
        for n, (key, label) in enumerate(shown):
            if n:
                text.append(GAP)
            text.append(key, style="bold")
            text.append(" " + label)
        if len(shown) < len(pairs):
            text.append((GAP if shown else "") + MORE, style="italic")
        return text
