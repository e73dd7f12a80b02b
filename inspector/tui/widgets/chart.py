"""The token chart: the context at every response, against Claude Code's thresholds.

Each column is a bucket of responses (its largest context). Horizontal lines mark the warning,
auto-compact and blocking thresholds and the window; the bars take the colour of the band they
reach. Compactions are marked on the top row, and the cursor column follows the timeline.
"""

from __future__ import annotations

from rich.cells import set_cell_size
from rich.segment import Segment
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from inspector.textutil import printable
from inspector.tokens.series import Series

BLOCKS = " ▁▂▃▄▅▆▇█"


class TokenChart(Widget):
    COMPONENT_CLASSES = {"chart--ok", "chart--warning", "chart--auto", "chart--blocking", "chart--line", "chart--cursor",
                         "chart--marker", "chart--axis"}
    DEFAULT_CSS = """
    TokenChart { height: 30%; min-height: 5; max-height: 12; background: $surface; }
    TokenChart > .chart--ok { color: $success; }
    TokenChart > .chart--warning { color: $warning; }
    TokenChart > .chart--auto { color: $error; }
    TokenChart > .chart--blocking { color: $error; text-style: bold; }
    TokenChart > .chart--line { color: $text-muted; }
    TokenChart > .chart--cursor { background: $accent 50%; }
    TokenChart > .chart--marker { color: $warning; text-style: bold; }
    TokenChart > .chart--axis { color: $text-muted; }
    """

    cursor_turn: reactive[int | None] = reactive(None)

    def __init__(self, series: Series | None = None, **kw) -> None:
        super().__init__(**kw)
        self.series = series

    def set_series(self, series: Series) -> None:
        self.series = series
        self.refresh()

    def watch_cursor_turn(self, old: int | None, new: int | None) -> None:
        self.refresh()

    # -- layout -------------------------------------------------------------------------------
    AXIS = 8

    def _geometry(self) -> tuple[int, int, float, list[tuple[int, int, int, str]]]:
        """(plot width, plot height, tokens per text row, buckets as (first turn, last turn, peak, state)); cached."""
        assert self.series is not None
        w = max(1, self.size.width - self.AXIS)
        h = max(2, self.size.height - 1)
        key = (w, h, id(self.series))
        if getattr(self, "_geo_key", None) == key:
            return self._geo  # type: ignore[has-type]
        th = self.series.thresholds
        turns = self.series.turns
        peak = max((t.tokens for t in turns), default=0)
        top = max(th.context_window, peak) * 1.02
        n = len(turns)
        buckets: list[tuple[int, int, int, str]] = []
        if n:
            per = max(1, -(-n // w))
            for start in range(0, n, per):
                end = min(n, start + per) - 1
                k = max(range(start, end + 1), key=lambda j: turns[j].tokens)
                buckets.append((start, end, turns[k].tokens, turns[k].state))
        self._geo_key, self._geo = key, (w, h, top / h, buckets)
        return self._geo

    def column_of(self, turn: int) -> int | None:
        if self.series is None or not self.series.turns:
            return None
        w, _, _, buckets = self._geometry()
        for c, (a, b, _, _) in enumerate(buckets):
            if a <= turn <= b:
                return c
        return None

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        if self.series is None:
            return Strip.blank(width, base)
        w, h, per_row, buckets = self._geometry()
        th = self.series.thresholds
        turns = self.series.turns
        style = {k: base + self.get_component_rich_style(f"chart--{k}") for k in ("ok", "warning", "auto", "blocking", "line", "cursor", "marker", "axis")}
        if y == h:  # bottom axis: first and last time
            first = printable(turns[0].timestamp[11:16]) if turns and turns[0].timestamp else ""  # the transcript's text
            last = printable(turns[-1].timestamp[11:16]) if turns and turns[-1].timestamp else ""
            text = " " * self.AXIS + first + " " * max(1, w - len(first) - len(last)) + last
            return Strip([Segment(set_cell_size(text, width), style["axis"])], width)
        row_low = (h - 1 - y) * per_row  # tokens at the bottom of this text row
        row_high = row_low + per_row
        lines = [(th.context_window, "window")]
        if not th.enforced:
            # Claude Code acts on none of its thresholds here (it compacts when the API refuses): only the
            # window, and the threshold it computes but does not enforce, dashed like the window
            if th.unenforced_threshold is not None:
                lines.append((th.unenforced_threshold, "window"))
        else:
            if th.auto_compact is not None:
                lines.append((th.auto_compact, "auto"))  # wins over blocking when both fall on one text row
            lines += [(th.blocking, "blocking"), (th.warning, "warning")]
        label = ""
        line_here = None
        for value, name in lines:
            if row_low <= value < row_high:
                line_here = name
                label = f"{value / 1000:.0f}k"
                break
        segs = [Segment(set_cell_size(label.rjust(self.AXIS - 1) + "┤" if label else " " * (self.AXIS - 1) + "│", self.AXIS), style["axis"])]
        boundary_cols = set()
        if y == 0:
            for b in self.series.boundaries + self.series.microcompacts:
                k = next((k for k, t in enumerate(turns) if t.pos > b), None)
                c = self.column_of(k) if k is not None else None
                if c is not None:
                    boundary_cols.add(c)
        cursor_col = self.column_of(self.cursor_turn) if self.cursor_turn is not None else None
        for c in range(w):
            ch, st = " ", base
            if c < len(buckets):
                _, _, tok, state = buckets[c]
                if tok >= row_high:
                    ch = "█"
                elif tok > row_low:
                    ch = BLOCKS[max(1, min(8, int((tok - row_low) / per_row * 8)))]
                if ch != " ":
                    st = style["ok" if state == "ok" else "warning" if state == "warning" else "auto" if state == "auto_compact" else "blocking"]
            if ch == " " and line_here is not None:
                ch, st = ("╌" if line_here == "window" else "─"), style["warning" if line_here == "warning" else "auto" if line_here in ("auto", "blocking") else "line"]
            if c in boundary_cols:
                ch, st = "▼", style["marker"]
            if c == cursor_col:
                st = st + style["cursor"]
            segs.append(Segment(ch, st))
        return Strip(segs, width)

