"""The token chart: the context at every response, against Claude Code's thresholds.

The responses are spread over the width in order (the x-axis is the response number, and says so);
a column shows the largest context of its responses. Horizontal lines mark the warning, auto-compact
and blocking thresholds and the window, valued on the left and named on the right (every one of them,
also when several fall in one text row); the bars take the colour of the band they reach.
Compactions are marked on the top row, and the cursor column follows the timeline.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

from rich.cells import set_cell_size
from rich.segment import Segment
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from inspector.textutil import printable
from inspector.tokens.series import Series

BLOCKS = " ▁▂▃▄▅▆▇█"


class TokenChart(Widget):
    COMPONENT_CLASSES = {
        "chart--ok",
        "chart--warning",
        "chart--auto",
        "chart--blocking",
        "chart--line",
        "chart--cursor",
        "chart--marker",
        "chart--axis",
    }
    DEFAULT_CSS = """
    TokenChart { height: 30%; min-height: 6; max-height: 12; background: $surface; }
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
    AXIS = 8  # the left axis: the value of the threshold drawn on a row
    NAMES = 9  # the right margin: the name of every threshold that falls in a row

    def _geometry(self) -> tuple[int, int, float, list[tuple[int, int, int, str]]]:
        """(plot width, plot height, tokens per text row, columns as (first turn, last turn, peak, state)); cached.

        The responses are spread over the whole width in order (a column per response when they are fewer than
        the columns, a run of responses per column, shown by its largest context, when they are more): the
        x-axis is the response number, not time, and the axis says so.
        """
        assert self.series is not None
        w = max(1, self.size.width - self.AXIS - self.names_width)
        h = max(2, self.size.height - 1)
        key = (w, h, id(self.series))
        if getattr(self, "_geo_key", None) == key:
            return self._geo  # type: ignore[has-type]
        th = self.series.thresholds
        turns = self.series.turns
        peak = max((t.tokens for t in turns), default=0)
        top = max(th.context_window, peak) * 1.02
        n = len(turns)
        cols: list[tuple[int, int, int, str]] = []
        if n:
            for c in range(w):
                a = c * n // w
                b = max(a, (c + 1) * n // w - 1)
                k = max(range(a, b + 1), key=lambda j: turns[j].tokens)
                cols.append((a, b, turns[k].tokens, turns[k].state))
        self._geo_key, self._geo = key, (w, h, top / h, cols)
        return self._geo

    def _boundary_columns(self) -> set[int]:
        """The columns a compaction's marker is drawn in: the column of the first response after it. Cached with the
        geometry (a session of 21,000 responses and 139 compactions drew its top row in 25 ms a paint)."""
        key = self._geometry()
        if getattr(self, "_marks_key", None) is key:
            return self._marks  # type: ignore[has-type]
        assert self.series is not None
        highest = list(accumulate((t.pos for t in self.series.turns), max))  # the first turn past b is where this passes b
        cols = set()
        for b in self.series.boundaries + self.series.microcompacts:
            k = bisect_right(highest, b)
            c = self.column_of(k) if k < len(highest) else None
            if c is not None:
                cols.add(c)
        self._marks_key, self._marks = key, cols
        return cols

    def columns_of(self, turn: int) -> range:
        """The columns that show this response (several when the responses are fewer than the columns)."""
        if self.series is None or not self.series.turns:
            return range(0)
        w, _, _, cols = self._geometry()
        first = next((c for c, (a, b, _, _) in enumerate(cols) if a <= turn <= b), None)
        if first is None:
            return range(0)
        last = first
        while last + 1 < len(cols) and cols[last + 1][0] <= turn <= cols[last + 1][1]:
            last += 1
        return range(first, last + 1)

    def column_of(self, turn: int) -> int | None:
        r = self.columns_of(turn)
        return r.start if r else None

    def threshold_lines(self) -> list[tuple[int, str]]:
        """The horizontal lines, most important first: when two fall in one text row, the first is drawn and
        the right margin names both, so no threshold ever disappears."""
        assert self.series is not None
        th = self.series.thresholds
        if not th.enforced:
            # Claude Code acts on none of its thresholds here (it compacts when the API refuses): the window,
            # and the threshold it computes but does not enforce, dashed like the window
            lines = [(th.unenforced_threshold, "unenforced")] if th.unenforced_threshold is not None else []
            return lines + [(th.context_window, "window")]
        lines = [(th.auto_compact, "auto")] if th.auto_compact is not None else []
        if th.has_blocking_limit:  # (up to 2.0.76 Claude Code has none)
            lines.append((th.blocking, "blocking"))
        return lines + [(th.warning, "warning"), (th.context_window, "window")]

    SHORT = {"auto": "auto", "blocking": "block", "warning": "warn", "window": "window", "unenforced": "not enf."}
    LONG = {
        "auto": "auto-compact",
        "blocking": "blocking",
        "warning": "warning",
        "window": "window",
        "unenforced": "not enforced",
    }

    @property
    def names_width(self) -> int:
        """The right margin: wide enough on a wide screen for every name in full, with its value."""
        return 30 if self.size.width >= 150 else 23 if self.size.width >= 110 else self.NAMES

    def x_axis(self, width: int) -> str:
        """The bottom row: the first and last response's number and time, and what the axis is."""
        turns = self.series.turns if self.series else []
        if not turns:
            return ""
        w = max(1, width - self.AXIS - self.names_width)

        def when(t) -> str:
            ts = t.timestamp or ""
            if not ts:
                return ""
            same_day = (turns[0].timestamp or "")[:10] == (turns[-1].timestamp or "")[:10]
            return printable(ts[11:16] if same_day else ts[5:10] + " " + ts[11:16])  # the transcript's text

        left = f"#1 {when(turns[0])}".rstrip()
        right = f"{when(turns[-1])} #{len(turns)}".lstrip() if len(turns) > 1 else ""
        room = w - len(left) - len(right)
        middle = ""
        for m in (f"response number ({len(turns)}), not time", "response number", "responses"):
            if len(m) + 2 <= room:
                middle = m
                break
        gap = max(1, room - len(middle))
        body = left + " " * (gap // 2) + middle + " " * (gap - gap // 2) + right
        return " " * self.AXIS + body

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        if self.series is None:
            return Strip.blank(width, base)
        w, h, per_row, cols = self._geometry()
        style = {
            k: base + self.get_component_rich_style(f"chart--{k}")
            for k in ("ok", "warning", "auto", "blocking", "line", "cursor", "marker", "axis")
        }
        if y == h:
            return Strip([Segment(set_cell_size(self.x_axis(width), width), style["axis"])], width)
        row_low = (h - 1 - y) * per_row  # tokens at the bottom of this text row
        row_high = row_low + per_row
        here = [(v, name) for v, name in self.threshold_lines() if row_low <= v < row_high]
        line_here = here[0][1] if here else None
        label = f"{here[0][0] / 1000:.0f}k" if here else ""
        names = ""
        first = self.SHORT[here[0][1]] if here else ""
        room = self.names_width - 1
        for names in (
            " · ".join(f"{self.LONG[n]} {v / 1000:.0f}k" for v, n in here),  # each with its value: never a guess
            "+".join(f"{self.SHORT[n]} {v / 1000:.0f}k" for v, n in here),
            "+".join(self.SHORT[n] for _, n in here),
            "+".join([first] + [self.SHORT[n][:3] for _, n in here[1:]]),
            "+".join(self.SHORT[n][:3] for _, n in here),
            f"{first} +{len(here) - 1}",
        ):
            if len(names) <= room:  # as much as the margin holds: in full with the values on a wide screen
                break
        segs = [
            Segment(
                set_cell_size(label.rjust(self.AXIS - 1) + "┤" if label else " " * (self.AXIS - 1) + "│", self.AXIS),
                style["axis"],
            )
        ]
        boundary_cols = self._boundary_columns() if y == 0 else set()
        cursor_cols = self.columns_of(self.cursor_turn) if self.cursor_turn is not None else range(0)
        line_style = style["warning" if line_here == "warning" else "auto" if line_here in ("auto", "blocking") else "line"]
        for c in range(w):
            ch, st = " ", base
            if c < len(cols):
                _, _, tok, state = cols[c]
                if tok >= row_high:
                    ch = "█"
                elif tok > row_low:
                    ch = BLOCKS[max(1, min(8, int((tok - row_low) / per_row * 8)))]
                if ch != " ":
                    st = style[
                        "ok"
                        if state == "ok"
                        else "warning"
                        if state == "warning"
                        else "auto"
                        if state == "auto_compact"
                        else "blocking"
                    ]
            if ch == " " and line_here is not None:
                ch, st = ("╌" if line_here in ("window", "unenforced") else "─"), line_style
            if c in boundary_cols:
                ch, st = "▼", style["marker"]
            if c in cursor_cols:
                st = st + style["cursor"]
            segs.append(Segment(ch, st))
        segs.append(Segment(set_cell_size((" " + names) if names else "", self.names_width), line_style if names else base))
        return Strip(segs, width)
