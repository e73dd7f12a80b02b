"""The session browser: every project's sessions, at once from a cheap read, details filled in behind."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.timer import Timer
from textual.widgets import DataTable, Input, ProgressBar, Static

from inspector.library.retention import DEFAULT_DAYS, SOON_DAYS, Retention, newest_release
from inspector.library.stats import StatsCache, cache_dir
from inspector.textutil import human_duration, human_when, json_dumps, json_loads, printable
from inspector.transcript.discovery import Target, quick_info, session_files
from inspector.transcript.session import orphan_agents, own_agents
from inspector.tui.actions import bindings
from inspector.tui.screens.browser_rows import (
    ASCENDING_FIRST,
    COLUMN_SETS,
    COLUMNS,
    RESULT_COLUMNS,
    SORTS,
    Item,
    session_window,
)
from inspector.tui.screens.browser_search import SessionSearch
from inspector.tui.screens.prompts import ArchivePrompt
from inspector.tui.widgets.keybar import KeyBar

WATCH_EVERY = 3.0  # seconds between looks for sessions that appeared or changed
FILTER_AT_ONCE_UNDER = 300  # sessions; with more, the filter waits for a pause in the typing
FILTER_PAUSE = 0.15  # seconds


class RowTable(DataTable):  # type: ignore[type-arg]
    """A table of rows whose Home and End go to the first and last row (a DataTable's scroll sideways)."""

    BINDINGS = [
        Binding("home", "first_row", "First", show=False),
        Binding("end", "last_row", "Last", show=False),
    ]

    def action_first_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=0)

    def action_last_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=self.row_count - 1)


class BrowserScreen(SessionSearch):
    BINDINGS = bindings("browser")
    scope_name = "browser"

    class Found(Message):
        def __init__(self, items: list[Item]) -> None:
            super().__init__()
            self.items = items

    class Changed(Message):
        """Sessions that appeared, changed size or went away since the last look."""

        def __init__(self, items: list[Item], gone: set[Path]) -> None:
            super().__init__()
            self.items, self.gone = items, gone

    class Filled(Message):
        def __init__(self, ks: list[Item], done: int, total: int) -> None:
            super().__init__()
            self.ks, self.done, self.total = ks, done, total

    def __init__(self, target: Target, notice: str | None = None) -> None:
        # Claude Code's cleanupPeriodDays, as its next start will read it: read when the sessions are listed (the
        # release the user runs is the newest of theirs); until then the default
        self.retention = Retention(DEFAULT_DAYS, f"Claude Code's default of {DEFAULT_DAYS} days")
        super().__init__()
        self.target = target
        self.notice = notice
        self.items: list[Item] = []
        self.shown: list[int] = []
        self.sort = "when"
        self._agent_owner: dict[Path, str | None] = {}  # what was read of flat agent files' heads
        self._session_ids: dict[Path, str] = {}
        self.results: list[tuple[Path, str, Any]] = []  # the matches of the last search of every session
        self.descending = True
        self.query_text = ""
        self.search_term: str | None = None
        self.seen: dict[Path, tuple[int, int]] = {}  # path -> (size, mtime_ns) when last read
        self.discovered = False  # the first listing is in: from then on the folder is watched, empty or not
        self._title_width = 64
        self._filter_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text(printable(f"Sessions under {self.target.path}")), id="title")
        if self.notice:
            yield Static(Text(self.notice), id="notice")
        yield Static("", id="risk")
        yield Input(
            placeholder="Filter by title, project, folder or id (type to filter; ctrl+f searches inside every session)",
            id="filter",
        )
        yield ProgressBar(id="progress", show_eta=False)
        yield RowTable(id="sessions", cursor_type="row", zebra_stripes=True)
        yield RowTable(id="results", cursor_type="row", zebra_stripes=True)
        yield Static("", id="empty")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#empty", Static).display = False
        self.query_one("#risk", Static).display = False
        t = self.query_one("#sessions", DataTable)
        t.border_title = "Sessions"
        results = self.query_one("#results", DataTable)
        results.display = False
        for key, label in RESULT_COLUMNS:
            results.add_column(label, key=key)
        t.border_subtitle = self.sort_words()
        self._shown_columns = self.columns()
        for k in self._shown_columns:
            t.add_column(COLUMNS[k][1], key=COLUMNS[k][0])
        self.discover()
        self.set_interval(WATCH_EVERY, self.watch_files)
        t.focus()

    # -- stage 1: the cheap read of every file --------------------------------------------------
    @work(thread=True, exclusive=True, group="discover")
    def discover(self) -> None:
        try:
            files = session_files(self.target)
            items = [it for path, agents in files if (it := self.make_item(path, agents)) is not None]
            for a in orphan_agents(files, self._agent_owner, self._session_ids):  # on their own, as stats lists them
                it = self.make_item(a, [])
                if it is not None:
                    it.orphan = True
                    items.append(it)
            # the cleanup rules of the newest release listed: the one the user runs, whose next start sweeps
            self.retention = Retention.read(release=newest_release(it.version for it in items))
            for it in items:
                self.date(it)
            self.post_message(self.Found(items))
        except Exception as exc:  # noqa: BLE001
            self.app.call_from_thread(self.app.notify, f"Could not list sessions: {exc}", severity="error")

    def make_item(self, path: Path, agents: list[Path]) -> Item | None:
        """The cheap facts of one session (its head and tail), or None if it cannot be read."""
        try:
            info = quick_info(path)
        except OSError:
            return None
        from inspector.textutil import timestamp_key

        a, b = timestamp_key(info.first_timestamp), timestamp_key(info.last_timestamp)
        it = Item(
            path,
            info.cwd or path.parent.name,
            info.title or "",
            human_when(info.first_timestamp, local=True) or "",
            human_duration(info.first_timestamp, info.last_timestamp) or "",
            info.size,
            flat_agents=agents,
            ts=info.first_timestamp or "",
            mtime_ns=info.mtime_ns,
            span=(b - a) if a is not None and b is not None else 0.0,
            version=info.version,
        )
        self.date(it)
        return it

    def date(self, it: Item) -> None:
        """When Claude Code's cleanup deletes a listed session: from the file's time quick_info read, no stat again."""
        it.due = self.retention.due_at(it.mtime_ns / 1e9)
        it.risk = self.retention.risk_at(it.due)

    # -- sessions that appear or grow while the browser is open --------------------------------
    def watch_files(self) -> None:
        if self.app.screen is self and self.discovered:  # an empty list is watched too: its first session appears
            self.rescan()

    @work(thread=True, exclusive=True, group="rescan")
    def rescan(self) -> None:
        """Stat every session file (cheap); read again only those that are new or changed."""
        try:
            files = session_files(self.target)
        except OSError:
            return
        changed: list[Item] = []
        present: set[Path] = set()
        orphans = orphan_agents(files, self._agent_owner, self._session_ids)
        for path, agents in files + [(a, []) for a in orphans]:
            present.add(path)
            try:
                st = os.stat(path)
            except OSError:
                continue
            if self.seen.get(path) == (st.st_size, st.st_mtime_ns):
                continue
            it = self.make_item(path, agents)
            if it is not None:
                it.orphan = path in orphans
                changed.append(it)
        gone = set(self.seen) - present
        if changed or gone:
            self.post_message(self.Changed(changed, gone))

    def selected_path(self) -> Path | None:
        """The session under the cursor, or None (no rows, or the rows are being rebuilt)."""
        t = self.query_one("#sessions", DataTable)
        row = t.cursor_row
        if row is None or not 0 <= row < len(self.shown):
            return None
        k = self.shown[row]
        return self.items[k].path if 0 <= k < len(self.items) else None

    @on(Changed)
    def on_changed(self, msg: Changed) -> None:
        keep = self.selected_path()  # before the items change under the table's rows
        by_path = {it.path: k for k, it in enumerate(self.items)}
        fresh: list[int] = []
        for it in msg.items:
            k = by_path.get(it.path)
            if k is None:
                self.items.append(it)
                fresh.append(len(self.items) - 1)
            else:
                old = self.items[k]
                it.model, it.peak, it.window, it.compactions = old.model, old.peak, old.window, old.compactions
                self.items[k] = it
                fresh.append(k)
            self.seen[it.path] = (it.size, it.mtime_ns)
        if msg.gone:
            self.items = [it for it in self.items if it.path not in msg.gone]
            for p in msg.gone:
                self.seen.pop(p, None)
            changed = {i.path for i in msg.items}
            fresh = [k for k, it in enumerate(self.items) if it.path in changed]
            if keep in msg.gone:
                keep = None
        self.shown = []  # the rows' indexes are stale now
        self.redraw(keep_cursor=True, keep=keep)
        self.show_risk()  # a session due for cleanup may have gone (or come)
        new = sum(1 for it in msg.items if it.path not in by_path)
        if new:
            self.notify(f"{new} new session(s)", timeout=3)
        if fresh:
            self.fill(fresh)

    @on(Found)
    def on_found(self, msg: Found) -> None:
        self.items = msg.items
        self.seen = {it.path: (it.size, it.mtime_ns) for it in self.items}
        self.discovered = True
        self.redraw()
        self.show_risk()
        if not self.items:
            self.query_one(ProgressBar).display = False
            return
        self.fill()

    # -- stage 2: the details, in the background, with progress --------------------------------
    @work(thread=True, exclusive=False, group="fill")
    def fill(self, only: list[int] | set[int] | None = None) -> None:
        """Cached stats first, then the rest in a process per core; the UI hears in batches.

        `only`: the indexes of the items to fill (sessions that appeared or changed); default all."""
        import time

        cache = StatsCache(cache_dir())
        if self.target.kind != "file" and (only is None or len(only) > 50):
            cache.prefetch(self.target.path)
        items = list(self.items)
        total = len(items)
        done = 0
        batch: list[int] = []
        last = time.monotonic()

        def flush(force: bool = False) -> None:
            nonlocal batch, last
            if batch and (force or len(batch) >= 200 or time.monotonic() - last > 0.25):
                self.post_message(self.Filled([items[k] for k in batch], done, total))
                batch, last = [], time.monotonic()

        todo = []
        owners: dict[Path, str | None] = {}
        if only is not None:
            done = total - len(only)
            only = set(only)
        for k, it in enumerate(items):
            if only is not None and k not in only:
                continue
            try:
                mine = own_agents(it.path, it.flat_agents, owners)
                key = cache.key(it.path, mine)
            except OSError:
                done += 1
                continue
            st = cache.get(it.path, key)
            if st is None:
                todo.append((k, it.path, mine, key))
                continue
            self.apply(it, st)
            done += 1
            batch.append(k)
            flush()
        keys = {k: key for k, _, _, key in todo}
        try:
            for k, st in self.compute_elsewhere(todo):
                cache.put(items[k].path, keys[k], st)
                self.apply(items[k], st)
                done += 1
                batch.append(k)
                flush()
        except Exception as exc:  # noqa: BLE001 - a file that cannot be read keeps its cheap facts
            self.app.call_from_thread(self.app.notify, f"Some sessions could not be read: {exc}", severity="warning")
        cache.close()
        done = total
        flush(force=True)
        if only is None:  # the first fill: the table's widths are settled now
            self.post_message(self.Filled([], total, total))

    @staticmethod
    def compute_elsewhere(todo: list[tuple[int, Path, list[Path], Any]]) -> Any:
        """Stats of uncached sessions from a child process (the app's threads are never forked)."""
        import subprocess
        import sys

        if not todo:
            return
        req = json_dumps([[k, str(p), [str(a) for a in agents]] for k, p, agents, _ in todo])
        with subprocess.Popen(
            [sys.executable, "-m", "inspector.library.stats_batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        ) as proc:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(req)
            proc.stdin.close()
            for line in proc.stdout:
                k, st = json_loads(line)
                yield k, st

    @staticmethod
    def apply(it: Item, st: dict[str, Any]) -> None:
        it.model = (st.get("model") or "").replace("claude-", "")
        it.peak = st["context"]["peak_tokens"]
        it.window = session_window(st.get("model"), st.get("version"), it.peak)
        c = st["counts"]
        it.compactions = f"{c['compactions']}" + (f"+{c['microcompactions']}mc" if c["microcompactions"] else "")
        it.title = st.get("title") or it.title
        origin = st.get("copied_from")
        if isinstance(origin, str) and origin:  # a copy (saved by inspector, or a fork): named by its origin
            it.title = f"[copied from {origin[:8]}] {it.title}"
        # the session's times as stats has them (every record's, not the head's and tail's the first paint read)
        first, last = st.get("first_timestamp"), st.get("last_timestamp")
        if first:
            from inspector.textutil import timestamp_key

            a, b = timestamp_key(first), timestamp_key(last)
            it.when, it.ts = human_when(first, local=True) or it.when, first
            it.duration = human_duration(first, last) or it.duration
            it.span = (b - a) if a is not None and b is not None else it.span
        it.cost = st.get("cost_usd_priced")
        it.cost_unknown = bool(st.get("cost_unknown_models"))

    @on(Filled)
    def on_filled(self, msg: Filled) -> None:
        bar = self.query_one(ProgressBar)
        bar.update(total=msg.total, progress=msg.done)
        t = self.query_one("#sessions", DataTable)
        width = self._title_width  # as laid out by the last redraw: computing it again per row is quadratic
        for it in msg.ks:
            key = str(it.path)
            if key in t.rows:
                # no column-width update per cell: with thousands of sessions that is quadratic;
                # the widths are settled once, when everything is filled in
                for k, value in zip(self._shown_columns, self.row_cells(it, width)):
                    t.update_cell(key, COLUMNS[k][0], value)
        if msg.done >= msg.total and not msg.ks:
            bar.display = False
            self.redraw(keep_cursor=True)
        self.show_totals()

    def show_totals(self) -> None:
        """The table's title: how many sessions are shown and what they cost together (each session's cost, copies of
        another session's responses not counted; '+?' when some response has no price; 'so far' while stats load)."""
        from inspector.library.cost import usd

        t = self.query_one("#sessions", DataTable)
        shown = [self.items[k] for k in self.shown]
        known = [it for it in shown if it.cost is not None]
        if not shown:
            t.border_title = "Sessions"
            return
        spent = sum(it.cost or 0.0 for it in known)
        more = "+?" if any(it.cost_unknown for it in known) else ""
        partial = f", {len(known):,} priced so far" if len(known) < len(shown) else ""
        t.border_title = f"Sessions: {len(shown):,} shown, {usd(spent)}{more} together{partial}"

    # -- table --------------------------------------------------------------------------------
    def sort_key(self, it: Item) -> Any:
        return it.sort_value(self.sort)

    def header(self, key: str, label: str) -> Text:
        """A column's header, with ▼ or ▲ on the one the rows are sorted by."""
        if key != self.sort:
            return Text(label)
        return Text(label + (" ▼" if self.descending else " ▲"), style="bold")

    def columns(self) -> list[int]:
        """The indexes of COLUMNS shown: the Cleanup column only while some session is due for Claude Code's cleanup."""
        at_risk = any(it.risk for it in self.items)
        chosen = COLUMN_SETS[getattr(self, "column_set", 0)][1]
        return [k for k, (key, _) in enumerate(COLUMNS) if (key != "cleanup" or at_risk) and (chosen is None or key in chosen)]

    def action_columns(self) -> None:
        """The next set of columns (every one, the token columns, the cost and size columns): on a narrow terminal the
        ones past its edge can be chosen instead of scrolled to."""
        self.column_set = (getattr(self, "column_set", 0) + 1) % len(COLUMN_SETS)
        self.redraw(keep_cursor=True)
        self.query_one("#sessions", DataTable).border_subtitle = self.sort_words()
        self.notify(f"columns: {COLUMN_SETS[self.column_set][0]}", timeout=2)

    def project_width(self) -> int:
        """The project column: 26 characters, more on a wide terminal (its end is the part that tells projects apart)."""
        return 26 if self.size.width < 180 else min(48, 26 + (self.size.width - 180) // 2 + 10)

    def row_cells(self, it: Item, width: int) -> list[Any]:
        cells = it.cells(width, self.project_width())
        return [cells[k] for k in self._shown_columns]

    def title_width(self) -> int:
        """The title column gets what the other columns leave, within 24 to 64 characters."""
        others = 0
        shown = self.columns()
        if self.items:
            cells = [it.cells(1, self.project_width()) for it in self.items[:5000]]
            for k in shown[1:]:
                others += max(len(COLUMNS[k][1]), max(len(str(c[k])) for c in cells)) + 2  # a cell's padding: one each side
        else:
            others = 110
        return max(24, min(64, self.size.width - others - 6))  # and the scrollbar

    def on_resize(self) -> None:
        if self.items:
            self.redraw(keep_cursor=True)
        if self.results:
            self.fill_results(keep_cursor=True)

    def redraw(self, keep_cursor: bool = False, keep: Path | None = None) -> None:
        """Rebuild the rows; the cursor stays on the session it was on (`keep`, or the current one)."""
        t = self.query_one("#sessions", DataTable)
        width = self._title_width = self.title_width()
        current = keep if keep is not None else self.selected_path() if keep_cursor else None
        row_before = t.cursor_row or 0
        t.clear(columns=True)  # the columns too: their widths only ever grow, and titles may now be shorter
        self._shown_columns = self.columns()
        for k in self._shown_columns:
            key, label = COLUMNS[k]
            t.add_column(self.header(key, label), key=key)
        q = self.query_text.lower()
        order = sorted(range(len(self.items)), key=lambda k: self.sort_key(self.items[k]), reverse=self.descending)
        self.shown = [
            k
            for k in order
            if (not q or q in self.items[k].text()) and (self.search_term is None or (self.items[k].matches or 0) > 0)
        ]
        for k in self.shown:
            it = self.items[k]
            t.add_row(*self.row_cells(it, width), key=str(it.path))
        self.show_empty_state()
        self.show_totals()
        if current is not None:
            row = next((r for r, k in enumerate(self.shown) if self.items[k].path == current), 0)
            t.move_cursor(row=row)
        elif keep_cursor and self.shown:  # the session under the cursor went away: the row that took its place
            t.move_cursor(row=min(row_before, len(self.shown) - 1))

    def show_risk(self) -> None:
        """A notice while any session is due for Claude Code's cleanup: how many, when, and how to keep them."""
        box = self.query_one("#risk", Static)
        now = [it for it in self.items if it.risk == "next start"]
        soon = [it for it in self.items if it.risk == "soon"]
        if self.retention.skipped and self.items:  # nothing is due: say why, the user may want it fixed
            box.update(Text(printable(f"Claude Code's cleanup will not run: {self.retention.skipped}."), style="yellow"))
            box.display = True
            return
        if not now and not soon:
            box.display = False
            return
        parts = []
        if now:
            parts.append(f"{len(now)} session(s) will be deleted the next time Claude Code starts")
        if soon:
            parts.append(
                f"{len(soon)} more within {SOON_DAYS} days"
                if now
                else f"{len(soon)} session(s) will be deleted by Claude Code's cleanup within {SOON_DAYS} days"
            )
        box.update(
            Text(
                printable(
                    f"{'; '.join(parts)} ({self.retention.describe()}). A archives every session listed "
                    "to a folder you choose; the Cleanup column has the dates."
                ),
                style="bold yellow",
            )
        )
        box.display = True

    def show_empty_state(self) -> None:
        """A message in place of an empty table, saying why it is empty and what to do."""
        empty = self.query_one("#empty", Static)
        t = self.query_one("#sessions", DataTable)
        if self.shown:
            empty.display = False
            t.display = True
            return
        if not self.items:
            text = (
                f"No sessions under {self.target.path}.\nClaude Code keeps them in ~/.claude/projects (or "
                "$CLAUDE_CONFIG_DIR/projects); new ones appear here within seconds. r looks again."
            )
        elif self.query_text:
            text = f"No session matches {self.query_text!r} in its title, project, folder name or id. esc clears the filter."
        elif self.search_term is not None:
            text = f"No session contains {self.search_term!r}. esc clears the search."
        else:
            text = "No sessions to show."
        empty.update(Text(printable(text, keep_newlines=True)))
        empty.display = True
        t.display = False

    @on(Input.Changed, "#filter")
    def on_filter(self, event: Input.Changed) -> None:
        """Filter as you type; with many sessions, once typing pauses (a redraw of 2,000 rows takes a while)."""
        self.query_text = event.value
        if self._filter_timer is not None:
            self._filter_timer.stop()
            self._filter_timer = None
        if len(self.items) < FILTER_AT_ONCE_UNDER:
            self.redraw()
        else:
            self._filter_timer = self.set_timer(FILTER_PAUSE, self.redraw)

    @on(Input.Submitted, "#filter")
    def on_filter_done(self, event: Input.Submitted) -> None:
        if self._filter_timer is not None:  # Enter applies the filter at once
            self._filter_timer.stop()
            self._filter_timer = None
            self.redraw()
        self.query_one("#sessions", DataTable).focus()

    def action_back(self) -> None:
        """esc: the filter first, then the results of a search inside every session, then the screen."""
        box = self.query_one("#filter", Input)
        if box.value:
            box.value = ""
            self.query_text = ""
            self.redraw()
            self.query_one("#sessions", DataTable).focus()
            return
        if box.has_focus:
            self.query_one("#sessions", DataTable).focus()
            return
        if self.search_term is not None:
            self.clear_search()
            self.notify("search results cleared", timeout=2)
            return
        self.app.action_back()

    def action_blocks(self) -> None:
        """b: the billing blocks of every session under the browser's target."""
        from inspector.tui.screens.usage import BlocksScreen

        self.app.push_screen(BlocksScreen(self.target))

    def action_archive(self) -> None:
        """A: archive the sessions listed (the filter's and the search's), to a folder the user picks."""
        paths = [self.items[k].path for k in self.shown]
        if not paths:
            self.notify("no session listed to archive", severity="warning")
            return

        def chosen(to: Path | None) -> None:
            if to is not None:
                self.notify(f"archiving {len(paths)} session(s) to {to}…", timeout=3)
                self.do_archive(paths, to)

        self.app.push_screen(ArchivePrompt(len(paths)), chosen)

    @work(thread=True, exclusive=True, group="archive")
    def do_archive(self, paths: list[Path], to: Path) -> None:
        from inspector.library.retention import ArchiveError, archive

        try:
            rep = archive(self.target, to, only=set(paths))
            copied, unchanged, warnings = len(rep.copied), rep.unchanged, set(rep.warnings)
        except ArchiveError as exc:
            self.app.call_from_thread(self.app.notify, f"Archive stopped: {exc}", severity="error", timeout=15)
            return
        for w in sorted(warnings):
            self.app.call_from_thread(self.app.notify, w, severity="warning", timeout=10)
        self.app.call_from_thread(
            self.app.notify,
            f"Archived {len(paths)} session(s) to {to}: {copied} file(s) copied, {unchanged} already there (checked by hash)",
            timeout=10,
        )

    def action_focus_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    def sort_by(self, column: str, *, reverse: bool = False) -> None:
        """Sort by a column (its natural order first: times and sizes largest first, text A to Z), or reverse it."""
        if reverse and column == self.sort:
            self.descending = not self.descending
        else:
            self.sort, self.descending = column, column not in ASCENDING_FIRST
        self.redraw(keep_cursor=True)
        self.query_one("#sessions", DataTable).border_subtitle = self.sort_words()

    def sort_words(self) -> str:
        label = dict(COLUMNS)[self.sort]
        cols = COLUMN_SETS[getattr(self, "column_set", 0)][0]
        return (
            f"sorted by {label.lower()} {'▼' if self.descending else '▲'} · s next column · S reverse · click a header"
            f" · v columns: {cols}"
        )

    def action_sort(self) -> None:
        self.sort_by(SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)])

    def action_reverse_sort(self) -> None:
        self.sort_by(self.sort, reverse=True)

    def action_refresh(self) -> None:
        self.query_one(ProgressBar).display = True
        self.discover()

    @on(DataTable.HeaderSelected)
    def on_header(self, event: DataTable.HeaderSelected) -> None:
        """A click on a header sorts by that column; a second click reverses it."""
        self.sort_by(str(event.column_key.value), reverse=True)

    @on(DataTable.RowSelected, "#sessions")
    def on_row(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    def action_open(self) -> None:
        path = self.selected_path()
        if path is None:
            return
        from inspector.tui.screens.session import SessionScreen

        self.app.push_screen(SessionScreen(path, search=self.search_term))

    # -- search inside every session ---------------------------------------------------------
