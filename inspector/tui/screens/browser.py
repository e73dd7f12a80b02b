"""The session browser: every project's sessions, at once from a cheap read, details filled in behind."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widgets import DataTable, Input, ProgressBar, Static

from inspector.library.retention import SOON_DAYS, Retention
from inspector.library.search import Query, search_target
from inspector.library.stats import StatsCache, cache_dir
from inspector.textutil import human_duration, human_size, human_when, json_dumps, json_loads, printable
from inspector.transcript.discovery import Target, quick_info, session_files
from inspector.transcript.session import orphan_agents, own_agents
from inspector.tui.actions import bindings
from inspector.tui.widgets.keybar import KeyBar

# the columns `s` sorts by, in turn; S (or a second click on a header) reverses the order
SORTS = ("when", "size", "peak", "cost", "comp", "title", "project", "dur", "model")
ASCENDING_FIRST = {
    "title",
    "project",
    "model",
    "cleanup",
}  # and the sessions due soonest first  # text reads A to Z first; times and sizes largest first
WATCH_EVERY = 3.0  # seconds between looks for sessions that appeared or changed
FILTER_AT_ONCE_UNDER = 300  # sessions; with more, the filter waits for a pause in the typing
FILTER_PAUSE = 0.15  # seconds
# the most telling first, so that a narrow terminal still shows when, how big and how full
COLUMNS = (
    ("title", "Title"),
    ("project", "Project"),
    ("when", "When"),
    ("dur", "Dur"),
    ("size", "Size"),
    ("peak", "Peak ctx"),
    ("cost", "Cost"),
    ("cleanup", "Cleanup"),
    ("comp", "Compactions"),
    ("model", "Model"),
)


RESULT_COLUMNS = (("session", "Session"), ("when", "When"), ("line", "Line"), ("where", "Where"), ("snippet", "Text around it"))
RESULTS_SHOWN = 2000  # matches listed (every session with one is still in the sessions table)


def _window(model: str | None, version: str | None, peak: int | None) -> int:
    """The session's context window by the rules `inspector tokens` applies (its release and model: a natively 1M
    model is 1M from its first turn; the usage past 200k infers it only where the release did so)."""
    from inspector.tokens.thresholds import Settings, thresholds

    try:
        return thresholds(Settings(model=model), peak or None, version).model_window
    except (ValueError, TypeError):
        return 1_000_000 if (peak or 0) > 200_000 else 200_000


@dataclass(slots=True)
class Item:
    path: Path
    project: str
    title: str
    when: str
    duration: str
    size: int
    model: str = ""
    peak: int | None = None
    window: int = 200_000
    compactions: str = ""
    matches: int | None = None
    flat_agents: list[Path] = field(default_factory=list)
    ts: str = ""
    mtime_ns: int = 0
    span: float = 0.0  # seconds from the first record to the last
    orphan: bool = False  # a subagent transcript whose session is gone
    cost: float | None = None  # USD, subagents included (None: not known yet)
    cost_unknown: bool = False  # some responses are of a model with no price: the figure is a lower bound
    due: datetime | None = None  # when Claude Code's cleanup deletes it
    risk: str | None = None  # "next start", "soon" or None

    def cells(self, title_width: int = 64, project_width: int = 26) -> tuple[Any, ...]:
        """The row's cells, in the order of COLUMNS."""
        peak = f"{self.peak / 1000:.0f}k {100 * self.peak / self.window:.0f}%" if self.peak else ""  # tokens, share of the window
        title = printable(self.title or "(untitled)")
        if self.orphan:
            title = "[subagent without its session] " + title
        if self.matches is not None:
            title = f"[{self.matches} match{'es' if self.matches != 1 else ''}] " + title
        project = printable(self.project)
        project = project if len(project) <= project_width else "…" + project[-(project_width - 1) :]
        title = title if len(title) <= title_width else title[: title_width - 1] + "…"
        # Text, not str: DataTable reads a str cell as markup, and the model name comes from the transcript
        from inspector.library.cost import usd

        cost = "" if self.cost is None else usd(self.cost) + ("+?" if self.cost_unknown else "")
        cleanup = Text("")
        if self.risk == "next start":
            cleanup = Text("next start!", style="bold red")
        elif self.risk == "soon" and self.due is not None:
            cleanup = Text(self.due.astimezone().strftime("%m-%d"), style="bold yellow")
        return (
            Text(title),
            Text(project),
            Text(self.when),
            Text(self.duration),
            Text(human_size(self.size)),
            Text(peak),
            Text(cost),
            cleanup,
            Text(self.compactions),
            Text(printable(self.model)),
        )

    def text(self) -> str:
        """What the filter looks in: the project, the title, the session id and the project's folder name."""
        return f"{self.project} {self.title} {self.path.stem} {self.path.parent.name}".lower()

    def sort_value(self, column: str) -> Any:
        comp = self.compactions.split("+")
        return {
            "when": self.ts,
            "size": self.size,
            "peak": self.peak or 0,
            "title": self.title.lower(),
            "comp": (int(comp[0]) if comp[0].isdigit() else -1, self.compactions),
            "project": self.project.lower(),
            "dur": self.span,
            "model": self.model,
            "cost": self.cost or 0.0,
            "cleanup": (self.due.timestamp() if self.due else float("inf")),
        }[column]


class SearchPrompt(ModalScreen[str | None]):
    BINDINGS = [("escape", "dismiss(None)", "Cancel")]

    def compose(self) -> ComposeResult:
        yield Static("Search the text of every session (tool output included); Enter to search, Esc to cancel", id="search-help")
        yield Input(placeholder="text to find", id="search-all")

    @on(Input.Submitted)
    def done(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)


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


class BrowserScreen(Screen):
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
        self.retention = Retention.read()  # Claude Code's cleanupPeriodDays, as its next start will read it
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
        yield DataTable(id="sessions", cursor_type="row", zebra_stripes=True)
        yield DataTable(id="results", cursor_type="row", zebra_stripes=True)
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
        )
        it.due, it.risk = self.retention.due(path), self.retention.risk(path)
        return it

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
        it.window = _window(st.get("model"), st.get("version"), it.peak)
        c = st["counts"]
        it.compactions = f"{c['compactions']}" + (f"+{c['microcompactions']}mc" if c["microcompactions"] else "")
        it.title = st.get("title") or it.title
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
        return [k for k, (key, _) in enumerate(COLUMNS) if key != "cleanup" or at_risk]

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
                    f"{'; '.join(parts)} ({self.retention.source}). A archives every session listed "
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

    def clear_search(self) -> None:
        self.search_term = None
        self.results = []
        for it in self.items:
            it.matches = None
        results = self.query_one("#results", DataTable)
        results.clear()
        results.display = False
        self.redraw()
        self.query_one("#sessions", DataTable).focus()

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
        return f"sorted by {label.lower()} {'▼' if self.descending else '▲'} · s next column · S reverse · click a header"

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

    @on(DataTable.RowSelected, "#results")
    def on_result(self, event: DataTable.RowSelected) -> None:
        """A match of the search of every session: its session, on that record, the term marked."""
        from inspector.tui.screens.session import SessionScreen

        k = event.cursor_row
        if not 0 <= k < len(self.results):
            return
        path, _title, hit = self.results[k]
        self.app.push_screen(SessionScreen(path, search=self.search_term, line=hit.line or None))

    class Grepped(Message):
        def __init__(self, term: str, results: list[tuple[Path, str, Any]], total: int, sessions: int) -> None:
            super().__init__()
            self.term, self.results, self.total, self.sessions = term, results, total, sessions

    @on(Grepped)
    def on_grepped(self, msg: Grepped) -> None:
        """The result list: one row per match, with its session, time, line, where it is and the text around it."""
        self.results = msg.results[:RESULTS_SHOWN]
        table = self.query_one("#results", DataTable)
        self.fill_results()
        sessions = msg.sessions  # a match in a subagent's transcript counts for its session
        more = f", the first {RESULTS_SHOWN:,} listed" if msg.total > RESULTS_SHOWN else ""
        table.border_title = f"Matches for {printable(msg.term)!r}: {msg.total:,} in {sessions:,} session(s){more}"
        table.border_subtitle = "enter opens the session on the match · esc clears the search"
        table.display = bool(self.results)
        if self.results:
            table.focus()

    def fill_results(self, keep_cursor: bool = False) -> None:
        """The result rows, cut to the terminal's width so that the text around the match keeps most of a row: on a
        narrow terminal the session's title and where are shorter and the time has no year."""
        table = self.query_one("#results", DataTable)
        row = table.cursor_row if keep_cursor else 0
        table.clear()
        narrow = self.size.width < 120
        title_w = max(12, min(28, (self.size.width - 40) // 3)) if narrow else 28  # 28 leaves the text room at 100 columns
        where_w = 12 if narrow else 24  # a persisted file's long name would push the text off
        # the room the text gets: the row less the other columns (each padded by 2), the borders and the scrollbar
        room = max(20, self.size.width - (title_w + 2) - (11 if narrow else 16) - 2 - 7 - (where_w + 2) - 4)
        for path, title, hit in self.results:
            t = printable(title or path.stem)
            t = t if len(t) <= title_w else t[: title_w - 1] + "…"
            when = human_when(hit.timestamp, local=True) or ""
            when = when[5:] if narrow else when
            where = hit.where + (f" {hit.file}" if hit.file else "")
            where = where if len(where) <= where_w else where[: where_w - 1] + "…"
            table.add_row(
                Text(t), Text(when), Text(str(hit.line or "")), Text(printable(where)), self.snippet_cell(hit.snippet, room)
            )
        if self.results:
            table.move_cursor(row=min(max(row, 0), len(self.results) - 1))

    def snippet_cell(self, snippet: str, room: int) -> Text:
        """The text around a match, its start cut so that the match is within the first third of `room` characters
        (the snippet has more before it than a narrow column shows), the term marked as in the session's detail."""
        text = " ".join(printable(snippet).split())
        term = " ".join((self.search_term or "").split())
        at = text.casefold().find(term.casefold()) if term else -1
        if at > room // 3:
            text = "…" + text[at - room // 4 :]
        cell = Text(text[:200])
        if term:
            cell.highlight_words([term], style="reverse bold", case_sensitive=False)
        return cell

    def action_open(self) -> None:
        path = self.selected_path()
        if path is None:
            return
        from inspector.tui.screens.session import SessionScreen

        self.app.push_screen(SessionScreen(path, search=self.search_term))

    # -- search inside every session ---------------------------------------------------------
    def action_search_all(self) -> None:
        def done(term: str | None) -> None:
            if term:
                self.search_term = term
                self.grep(term)
            elif self.search_term is not None:
                self.clear_search()

        self.app.push_screen(SearchPrompt(), done)

    @work(thread=True, exclusive=True, group="index")
    def build_index(self) -> None:
        """Bring the search index up to date for every session here, in the background: `inspector index` in a child
        process (its own process per core; the app's threads are never forked), stopped when the app quits (what
        it indexed is kept: each file is one transaction). A search meanwhile reads what is not indexed yet."""
        import subprocess
        import sys
        import tempfile
        import time

        from textual.worker import get_current_worker

        def say(m: str, severity: str = "information") -> None:
            self.app.call_from_thread(self.app.notify, m, severity=severity)

        worker = get_current_worker()
        t0 = time.monotonic()
        say("Building the search index in the background: the next searches look it up instead of reading every session.")
        with (
            tempfile.TemporaryFile() as errors,
            subprocess.Popen(
                [sys.executable, "-m", "inspector", "index", str(self.target.path)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=errors,
            ) as proc,
        ):
            while proc.poll() is None:
                if worker.is_cancelled:
                    proc.terminate()
                    proc.wait()
                    return
                time.sleep(0.2)
            errors.seek(0)
            why = errors.read(64 << 10).decode("utf-8", "replace").strip()
        if proc.returncode == 0:
            say(f"Search index ready (built in {time.monotonic() - t0:.0f} s).")
        else:
            say(f"The search index could not be built: {why.splitlines()[-1] if why else proc.returncode}", "warning")

    @work(thread=True, exclusive=True, group="grep")
    def grep(self, term: str) -> None:
        import time

        from inspector.library.fts import SEARCH_BUDGET, open_index

        query = Query(term)
        index = open_index(notice=lambda m: self.app.call_from_thread(self.app.notify, m, severity="warning"))
        hits_total = 0
        results: list[tuple[Path, str, Any]] = []
        items = list(self.items)
        by_path = {it.path: it for it in items}
        counts: dict[Path, int] = {}
        bar = self.query_one(ProgressBar)
        last = time.monotonic()
        self.app.call_from_thread(lambda: (setattr(bar, "display", True), bar.update(total=len(items), progress=0)))

        def progress(n: int, of: int) -> None:  # a long search (a scan, or an index being built) says how far it is
            nonlocal last
            if time.monotonic() - last > 0.2:
                last = time.monotonic()
                self.app.call_from_thread(bar.update, total=of, progress=n)

        # one search of the whole folder: with the index, every file is brought up to date and looked up at once
        # workers=1: no process pool from the app (its threads are never forked; the build below is a child process)
        for fh in search_target(self.target, query, index=index, progress=progress, budget=SEARCH_BUDGET, workers=1):
            it = by_path.get(fh.session)
            if it is None:  # a flat agent file of a listed session, or a session listed since: not a row here
                continue
            counts[it.path] = counts.get(it.path, 0) + len(fh.hits)
            hits_total += len(fh.hits)
            if len(results) < RESULTS_SHOWN:
                results += [(fh.path, it.title, h) for h in fh.hits[: RESULTS_SHOWN - len(results)]]
        for it in items:
            it.matches = counts.get(it.path, 0)
        total = sum(1 for n in counts.values() if n)
        behind = index is not None and bool(index.stale or index.stale_sessions)
        if index is not None:
            index.close()
        self.app.call_from_thread(lambda: setattr(bar, "display", False))
        if behind:  # what this search read instead of looking up: indexed now, for the next search
            self.build_index()
        self.app.call_from_thread(self.redraw)
        self.post_message(self.Grepped(term, results, hits_total, total))
        if not total:
            self.app.call_from_thread(self.app.notify, f"no session contains {term!r}", severity="warning")
