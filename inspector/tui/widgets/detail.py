"""The detail pane: the selected record, block by block (only this record's widgets are mounted)."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Markdown, Static

from inspector.textutil import printable
from inspector.transcript.session import Session
from inspector.view import JSON_CAP, TEXT_CAP, Part, record_parts


def safe(s: str, cap: int = TEXT_CAP) -> Text:
    """Untrusted text as a Rich Text: never markup, no terminal escapes, capped."""
    more = len(s) - cap
    s = printable(s[:cap], keep_newlines=True)
    t = Text(s)
    if more > 0:
        t.append(f"\n… {more:,} more characters (r shows the raw record)", style="italic dim")
    return t


class Detail(VerticalScroll, can_focus=True):
    DEFAULT_CSS = """
    Detail { padding: 0 1; }
    Detail > .detail--head { color: $text-muted; margin-bottom: 1; }
    Detail > .detail--block { margin-bottom: 1; }
    Detail > .detail--label { color: $accent; text-style: bold; }
    Detail > .detail--thinking { color: $text-muted; text-style: italic; }
    Detail > .detail--note { color: $warning; }
    """

    highlight: str | None = None  # the search term, marked wherever it appears in the record

    def clear(self) -> None:
        self.remove_children()

    def show_text(self, title: str, text: str) -> None:
        self.remove_children()
        self.mount(
            Static(Text(title, style="bold"), classes="detail--label"), Static(safe(text, JSON_CAP), classes="detail--block")
        )
        self.scroll_home(animate=False)

    def show_record(self, s: Session, i: int, *, raw: bool = False) -> None:
        self.remove_children()
        widgets = [self._widget(p) for p in record_parts(s, i, raw=raw)]
        self.mount(*widgets)
        first = next((w for w in widgets if "detail--match" in w.classes), None)
        if first is not None:  # the first match in view, not the top of a long record (nor of a long block)
            self.call_after_refresh(self._scroll_to_match, first)
        else:
            self.scroll_home(animate=False)

    def _scroll_to_match(self, w: Static | Markdown) -> None:
        """Scroll so that the line of the block holding the first match is near the top: the block's own top for a
        short one, the match's wrapped line inside a long tool result."""
        shown = getattr(w, "shown_text", None)
        term = (self.highlight or "").casefold()
        at = shown.plain.casefold().find(term) if isinstance(shown, Text) and term else -1
        if at <= 0:
            self.scroll_to_widget(w, animate=False, top=True)
            return
        width = max(1, w.content_region.width)
        lines = len(Text(shown.plain[:at]).wrap(self.app.console, width)) - 1  # wrapped lines above the match's
        top = w.virtual_region.y + lines
        self.scroll_to(y=max(0, top - 1), animate=False)

    def _marked(self, text: Text, raw: str) -> Text:
        """The search term marked in a block's text (case-insensitive, as the search is)."""
        term = self.highlight
        if term and term.casefold() in raw.casefold():
            text.highlight_words([term], style="reverse bold", case_sensitive=False)
        return text

    def _widget(self, p: Part) -> Static | Markdown:
        term = self.highlight
        hit = bool(term) and term.casefold() in p.text.casefold()  # type: ignore[union-attr]
        w = self._plain_widget(p, hit)
        if hit:
            w.add_class("detail--match")
        return w

    def _plain_widget(self, p: Part, hit: bool) -> Static | Markdown:
        if hit and p.kind not in ("head", "label", "note", "persisted"):  # shown as text, so the match can be marked
            shown = self._marked(safe(p.text, JSON_CAP if p.kind == "json" else TEXT_CAP), p.text)
            w = Static(shown, classes="detail--thinking" if p.kind == "thinking" else "detail--block")
            w.shown_text = shown  # type: ignore[attr-defined]  # where in it the match is (_scroll_to_match)
            return w
        return self._widget_of(p)

    @staticmethod
    def _widget_of(p: Part) -> Static | Markdown:
        if p.kind == "head":
            return Static(Text(printable(p.text, keep_newlines=True)), classes="detail--head")
        if p.kind == "label":
            return Static(Text(printable(p.text)), classes="detail--label")
        if p.kind == "markdown":
            return Markdown(printable(p.text, keep_newlines=True), classes="detail--block")
        if p.kind == "thinking":
            return Static(safe(p.text), classes="detail--thinking")
        if p.kind == "note":
            return Static(Text(printable(p.text)), classes="detail--note")
        if p.kind == "persisted":
            return Static(Text(printable(p.text) + ": press f to read it"), classes="detail--note")
        return Static(safe(p.text, JSON_CAP if p.kind == "json" else TEXT_CAP), classes="detail--block")
