"""Searching the text of every session from the browser: the prompt, the search in a worker (through the index,
built in a child process when it is behind), and the table of matches that opens a session on one.

A Screen base class of the browser (Textual collects a screen's message handlers class by class, so they live on a
Screen subclass, not a plain mixin); it asks the browser for its rows (`items`), the folder (`target`) and `redraw`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, ProgressBar

from inspector.library.search import Query, search_target
from inspector.textutil import human_when, printable
from inspector.transcript.discovery import Target
from inspector.tui.screens.browser_rows import RESULTS_SHOWN, Item
from inspector.tui.screens.prompts import SearchPrompt


class SessionSearch(Screen):
    """The search of every session, as part of the browser."""

    items: list[Item]
    target: Target
    results: list[tuple[Path, str, Any]]
    search_term: str | None

    def redraw(self, keep_cursor: bool = False, keep: Path | None = None) -> None:
        raise NotImplementedError  # the browser's table

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
