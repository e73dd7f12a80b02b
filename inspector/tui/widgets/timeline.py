"""The timeline: every record as one row, drawn with the Line API (one widget, any number of rows)."""

from __future__ import annotations

from rich.cells import set_cell_size
from rich.segment import Segment
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from inspector.textutil import human_tokens, printable
from inspector.view import Row, Snippets

KIND_MARK = {
    "user": "▶",
    "assistant": "◆",
    "tool_call": "⚙",
    "tool_result": "↳",
    "thinking": "…",
    "system": "·",
    "boundary": "═",
    "summary": "§",
    "metadata": "○",
    "attachment": "+",
    "progress": "~",
}


class Timeline(ScrollView, can_focus=True):
    """Rows of records; the cursor row is the selected record."""

    COMPONENT_CLASSES = {
        "timeline--cursor",
        "timeline--user",
        "timeline--assistant",
        "timeline--tool",
        "timeline--boundary",
        "timeline--dim",
        "timeline--summary",
        "timeline--match",
        "timeline--offchain",
    }
    DEFAULT_CSS = """
    Timeline { background: $surface; }
    Timeline > .timeline--cursor { background: $accent 40%; text-style: bold; }
    Timeline > .timeline--user { color: $text; text-style: bold; }
    Timeline > .timeline--assistant { color: $text; }
    Timeline > .timeline--tool { color: $text-muted; }
    Timeline > .timeline--boundary { color: $warning; text-style: bold; }
    Timeline > .timeline--summary { color: $success; }
    Timeline > .timeline--dim { color: $text-disabled; }
    Timeline > .timeline--match { background: $primary 30%; }
    Timeline > .timeline--offchain { color: $text-disabled; text-style: italic; }
    """
    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown,space", "page(1)", "Page down", show=False),
        Binding("home,g", "jump(0)", "First", show=False),
        Binding("end,G", "jump(-1)", "Last", show=False),
    ]

    cursor: reactive[int] = reactive(0)

    class Selected(Message):
        def __init__(self, row: Row | None) -> None:
            super().__init__()
            self.row = row

    def __init__(self, rows: list[Row], snippets: Snippets | None = None, **kw) -> None:
        super().__init__(**kw)
        self.rows: list[Row] = rows
        self.snippets = snippets
        self.matches: set[int] = set()
        self.pivots: set[int] = set()  # records a partial compaction can pivot on, marked »
        self.virtual_size = Size(0, len(rows))

    def set_rows(self, rows: list[Row], keep_index: int | None = None) -> None:
        self.rows = rows
        self.virtual_size = Size(0, len(rows))
        target = 0
        if keep_index is not None:
            target = next((k for k, r in enumerate(rows) if r.index >= keep_index), max(0, len(rows) - 1))
        self.cursor = min(target, max(0, len(rows) - 1))
        self.refresh()
        self.post_message(self.Selected(self.current))

    @property
    def current(self) -> Row | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def select_index(self, record_index: int) -> None:
        for k, r in enumerate(self.rows):
            if r.index == record_index:
                self.cursor = k
                return

    def watch_cursor(self, old: int, new: int) -> None:
        self.scroll_to_cursor()
        self.refresh()
        self.post_message(self.Selected(self.current))

    def scroll_to_cursor(self) -> None:
        h = self.scrollable_content_region.height or 1
        top = self.scroll_offset.y
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + h:
            self.scroll_to(y=self.cursor - h + 1, animate=False)

    def action_cursor(self, delta: int) -> None:
        if self.rows:
            self.cursor = max(0, min(len(self.rows) - 1, self.cursor + delta))

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.scrollable_content_region.height - 1))

    def action_jump(self, where: int) -> None:
        if self.rows:
            self.cursor = 0 if where == 0 else len(self.rows) - 1

    def on_click(self, event: events.Click) -> None:
        y = event.y + self.scroll_offset.y
        if 0 <= y < len(self.rows):
            self.cursor = y

    def render_line(self, y: int) -> Strip:
        k = y + self.scroll_offset.y
        width = self.scrollable_content_region.width
        if not 0 <= k < len(self.rows):
            return Strip.blank(width, self.rich_style)
        row = self.rows[k]
        base = self.rich_style
        cls = {
            "user": "timeline--user",
            "assistant": "timeline--assistant",
            "tool_call": "timeline--tool",
            "tool_result": "timeline--tool",
            "boundary": "timeline--boundary",
            "summary": "timeline--summary",
        }.get(row.kind, "timeline--dim")
        style = base + self.get_component_rich_style(cls)
        if not row.on_chain:
            style += self.get_component_rich_style("timeline--offchain")
        if row.index in self.matches:
            style += self.get_component_rich_style("timeline--match")
        if k == self.cursor:
            style += self.get_component_rich_style("timeline--cursor")
        tok = human_tokens(row.tokens) if row.tokens is not None else ""
        pivot = "»" if row.index in self.pivots else " "
        head = printable(
            f"{KIND_MARK.get(row.kind, ' ')}{pivot}{row.time:>8} {tok:>7} {row.label}"
        )  # time and label: the transcript's
        if row.kind != "boundary" and self.snippets is not None:
            head += "  " + self.snippets.get(row.index)
        return Strip([Segment(set_cell_size(head, width), style)], width)
