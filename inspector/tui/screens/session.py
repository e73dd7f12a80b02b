"""The session screen: the token chart, the timeline, the selected record, and why it fired."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Input, Static, TabbedContent, TabPane

from inspector.textutil import fmt, human_size, printable
from inspector.tokens.explain import TokenReport, analyze, prepare
from inspector.tokens.keptreport import kept_analyze
from inspector.tokens.series import Series, context_series, session_thresholds
from inspector.tokens.thresholds import Settings
from inspector.transcript.index import FileChanged, Transcript
from inspector.transcript.records import gc_paused
from inspector.transcript.session import Session
from inspector.tui.actions import bindings
from inspector.tui.screens.whatif import WhatIfScreen
from inspector.tui.screens.whatif import describe as describe_what_if
from inspector.tui.widgets.chart import TokenChart
from inspector.tui.widgets.detail import Detail
from inspector.tui.widgets.keybar import KeyBar
from inspector.tui.widgets.timeline import Timeline
from inspector.view import Row, Snippets, build_rows, search_records

PAGE = 64 * 1024
QUICK_LOOK_OVER = 8 << 20  # files larger than this show their first records before the whole is read
QUICK_LOOK_BYTES = 2 << 20
COUNTING_WAIT = 120.0  # seconds the report waits for the process counting a large session's tokens
PROGRESS_SHOWN_EVERY = 0.25  # seconds between two updates of the loading line
SHOW_WAIT = 2.0  # seconds a load waits for the screen to show the session before it goes on to the report


@dataclass(frozen=True, slots=True)
class Loaded:
    session: Session
    series: Series
    rows: list[Row] | None = None  # the timeline's rows, built in the worker
    pivots: frozenset[int] = frozenset()  # the records a partial compaction can pivot on


class SessionScreen(Screen):
    BINDINGS = bindings("session")
    scope_name = "session"

    class Ready(Message):
        def __init__(self, loaded: Loaded, keep: int | None, partial: bool = False, tail: bool = False) -> None:
            super().__init__()
            self.loaded = loaded
            self.keep = keep
            self.partial = partial
            self.tail = tail  # new records of a live file: a cursor on the last row follows the end

    class ReportReady(Message):
        def __init__(self, report: TokenReport) -> None:
            super().__init__()
            self.report = report

    class CostReady(Message):
        """The header's cost words, computed after the session is shown (subagent files are read for them)."""

        def __init__(self, words: str) -> None:
            super().__init__()
            self.words = words

    def __init__(
        self,
        path: Path,
        *,
        settings: Settings | None = None,
        search: str | None = None,
        title: str | None = None,
        line: int | None = None,
    ) -> None:
        super().__init__()
        self.path = Path(path)
        self.configured = Settings.from_environment()  # what Claude Code's environment and config say
        self.settings = settings or self.configured  # what the screen shows (a what-if may change it)
        self.session: Session | None = None
        self.series: Series | None = None
        self.report: TokenReport | None = None
        self._counting: Any = None  # the process counting the tokens of a large session (count_in_background)
        self._shown = threading.Event()  # set once the screen has taken a loaded session (Ready, not a first look)
        self.hidden: frozenset[str] = frozenset()
        self.scope = "chain"
        self.raw = False
        self.matches: list[int] = []
        self.search_term: str | None = None  # the last search, marked in the detail pane while its matches are shown
        self.initial_line = line  # opened from a search result: land on this line's record
        self.initial_search = search
        self.progress_text = "Counting tokens…"
        self._progress_at = 0.0
        self.page: int | None = None
        self.title_hint = title
        self.partial = False
        self._file_size = 0
        self._file_sig: tuple[int, int, int | None] | None = None
        # each subagent file's responses, by its size and time, kept in the cache database across runs: a KeptMemo, made
        # when the header's cost is first worked out
        self._subagent_costs: Any = None
        self._cost_words = ""  # the header's cost, as last computed (kept while a live session's new one is on its way)
        self._header: tuple[str, str] | None = None  # the header's text before and after the cost

    def compose(self) -> ComposeResult:
        yield Static(Text(printable(f"Loading {self.path} …")), id="title")
        yield TokenChart(id="chart")
        yield Static("", id="thresholds")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Input(placeholder="Search this session (Enter; n / N for next / previous)", id="search")
                yield Timeline([], id="timeline")
            with TabbedContent(id="tabs"):
                with TabPane("Record", id="tab-record"):
                    yield Detail(id="detail")
                with TabPane("Why / context", id="tab-why"):
                    yield Detail(id="why")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#search", Input).display = False
        self.query_one(Timeline).border_title = "Timeline  ["
        self.query_one(Timeline).border_subtitle = self.view_words()
        self.query_one(TabbedContent).border_title = "Detail  ]"
        self.load()
        self.set_interval(1.0, self.check_growth)

    # -- loading (in a worker thread; only messages come back) --------------------------------
    @work(thread=True, exclusive=True, group="load")
    def load(self, keep: int | None = None) -> None:
        title = self.query_one("#title", Static)
        shown = [0.0]

        def progress(done: int, total: int) -> None:
            # a few times a second, not every 8 MB the index reads: each update lays the screen out again in the UI
            # thread, which shares the interpreter with this one (the bench's 200 MB session: 25 updates, 0.15 s later)
            now = time.monotonic()
            if now - shown[0] < PROGRESS_SHOWN_EVERY:
                return
            shown[0] = now
            self.app.call_from_thread(
                title.update, Text(printable(f"Loading {self.path.name}: {done / (1 << 20):,.0f} of {total / (1 << 20):,.0f} MB"))
            )

        try:
            if keep is None and os.path.getsize(self.path) > QUICK_LOOK_OVER:
                # the report's token counts are most of a large session's load: another process counts them (and
                # keeps them) while this one reads the session (started already when `inspector FILE` opened it)
                from inspector.tokens.background import COUNT_OVER, adopt, count_in_background
                from inspector.tokens.calibrate import counts_kept

                self._counting = adopt(str(self.path))
                if self._counting is None and os.path.getsize(self.path) > COUNT_OVER and not counts_kept(self.path):
                    self._counting = count_in_background(str(self.path))  # (opened again: its counts are kept)
                # a large file: show its first records at once, then the whole of it
                t = Transcript(self.path)
                t.update(max_bytes=QUICK_LOOK_BYTES)
                head = Session(t)
                self.post_message(
                    self.Ready(Loaded(head, context_series(head, self.settings), self.rows_for(head)), None, partial=True)
                )
            with gc_paused():  # (see publish) held from the load through its publishing: re-enabled between them, the
                s = Session.load(self.path, progress=progress)  # collector would walk the whole new session first
                self.publish(s, keep)
        except Exception as exc:  # noqa: BLE001
            self.app.call_from_thread(self.app.notify, f"Could not load {self.path.name}: {exc}", severity="error", timeout=10)

    def publish(self, s: Session, keep: int | None, *, tail: bool = False, announce: bool = False) -> None:
        """From a worker: the session under the current settings, its series and rows at once, then its
        report once the tokens are counted. `announce` says the thresholds in a notification first."""
        # the collector paused throughout: the series, rows and report are tens of thousands of objects that form no
        # cycle, and each 700 allocations began a collection that walked the whole session (0.7 s of the bench's
        # 200 MB session, opened again: loaded at 2.9 s instead of 3.6 s)
        with gc_paused():
            self._publish(s, keep, tail=tail, announce=announce)

    def _publish(self, s: Session, keep: int | None, *, tail: bool, announce: bool) -> None:
        th = session_thresholds(s, self.settings)
        if announce:
            auto = fmt(th.auto_compact) if th.auto_compact else "off"
            self.app.call_from_thread(self.app.notify, f"thresholds: auto-compact {auto}, {th.blocking_words}", timeout=3)
        series = context_series(s, self.settings, th)  # the same key as analyze's: computed once
        from inspector.compact import pivot_candidates

        pivots = frozenset(pivot_candidates(s, self.settings, series))
        self._shown.clear()
        self.post_message(self.Ready(Loaded(s, series, self.rows_for(s), pivots), keep, tail=tail))
        # the screen drawn first: what follows holds the interpreter for a second or more (one process, one lock), and
        # the rows and chart of a large session would wait behind it
        self._shown.wait(SHOW_WAIT)
        # after the screen, the header's cost and the report: the cost first while the counting child is still reading
        # the session (the report waits a second or more for it anyway), else after the report, which it would only delay
        counting, self._counting = self._counting, None
        cost_first = counting is not None and counting.still_reading()
        if cost_first:
            self.post_message(self.CostReady(self.cost_words(s)))
        if counting is not None:
            prepare(s)  # what the report reads that needs no counts (subagents, summarizer calls), while the child counts
            counting.wait(COUNTING_WAIT)  # its counts are kept in the cache, where analyze finds them (else: counted here)
        # a session opened is kept (opened again, its report is read back); a live one's growth is not: its next growth
        # is another key, and each would write the whole report for nothing
        explain = analyze if tail else kept_analyze
        self.post_message(self.ReportReady(explain(s, self.settings, self.report_progress, baseline=self.configured)))
        if not cost_first:
            self.post_message(self.CostReady(self.cost_words(s)))

    def rows_for(self, s: Session) -> list[Row]:
        """The timeline's rows with the current filters (safe to call from a worker)."""
        return build_rows(s, scope=self.scope, hidden=self.hidden)

    @on(Ready)
    def on_ready(self, msg: Ready) -> None:
        s, series = msg.loaded.session, msg.loaded.series
        self.session, self.series = s, series
        self.partial = msg.partial
        self._file_size = s.transcript.size
        self._file_sig = (s.transcript.size, s.transcript.mtime_ns, s.transcript.inode)
        tl = self.query_one(Timeline)
        at_end = msg.tail and bool(tl.rows) and tl.cursor >= len(tl.rows) - 1
        tl.snippets = Snippets(s)
        tl.pivots = set(msg.loaded.pivots)
        self.rebuild(keep=msg.keep, rows=msg.loaded.rows)
        if at_end and tl.rows:
            tl.cursor = len(tl.rows) - 1  # like tail -f: on the last row, stay on the last row
        chart = self.query_one(TokenChart)
        chart.set_series(series)
        bad = len(s.transcript.skipped)
        problems = f"   {bad} unreadable line(s) skipped" if bad else ""
        if msg.partial:
            problems += f"   loading: the first {QUICK_LOOK_BYTES >> 20} MB are shown, the rest is on its way…"
        title = self.title_hint or s.title or s.session_id
        self._header = (
            f"{title}\n{s.cwd or ''}   {s.session_id}   {len(s.records):,} records   {human_size(s.transcript.size)}   "
            f"Claude Code {s.version or '?'}   {series.thresholds.model or ''}",
            problems,
        )
        self.draw_header()
        if not msg.partial:
            self._shown.set()
        if self.initial_search and not msg.partial:
            q = self.initial_search
            self.initial_search = None
            self.run_search(q)
        tl.focus()

    def empty_words(self, s: Session) -> str:
        """Why a session shows no row: an empty file, lines none of which could be read, or records of which none is
        on a conversation (a file of metadata only: titles, snapshots)."""
        t = s.transcript
        if t.size == 0:
            return "The file is empty: Claude Code made it and wrote nothing into it yet (or the session ended at once)."
        if not s.records:
            return (
                f"None of the file's lines could be read as a record ({len(t.skipped):,} skipped: `inspector show` names them)."
            )
        kinds = ", ".join(sorted({r.type or "(no type)" for r in s.records}))
        return (
            f"The file holds {len(s.records):,} record(s), none of them a message of a conversation ({kinds}): press a to "
            "list every record of the file."
        )

    def cost_words(self, s: Session) -> str:
        """The session's cost in the header: inspector's figure (subagents included), Claude Code's own beside it.
        Asked again at each growth of a live session: the subagent transcripts that did not change are not read again."""
        from inspector.library.cost import session_cost, usd

        c = self._known_cost(s) if not self._subagent_costs else None
        try:
            if c is None:
                if self._subagent_costs is None:
                    from inspector.library.costcache import ResponsesCache
                    from inspector.statefiles import cache_dir

                    self._subagent_costs = ResponsesCache(cache_dir()).memo()
                c = session_cost(s, memo=self._subagent_costs)
                self._subagent_costs.flush()
        except OSError:
            return ""
        words = f"   {usd(c['cost_usd_priced'])}" + ("+?" if c["cost_unknown_models"] else "")
        if c["cost_subagents_usd"]:
            words += f" ({usd(c['cost_subagents_usd'])} subagents)"
        if "cost_claude_code_usd" in c:
            words += f", Claude Code's count {usd(c['cost_claude_code_usd'])}"
        return words

    def on_unmount(self) -> None:
        if self._subagent_costs is not None:
            self._subagent_costs.cache.close()

    def _known_cost(self, s: Session) -> dict[str, Any] | None:
        """The session's cost as the stats cache holds it (the browser's listing, `inspector stats`) for the file as it
        was read: opening a session from the list does not read its subagents' transcripts again (issue 29.3)."""
        from inspector.library.stats import known_stats

        try:
            row = known_stats(self.path)
        except Exception:  # noqa: BLE001 - a cache that cannot be read is no cache
            return None
        if row is None or row.get("size") != s.transcript.size or not isinstance(row.get("cost_usd_priced"), (int, float)):
            return None
        return row

    def draw_header(self) -> None:
        if self._header is not None:
            head, tail = self._header
            self.query_one("#title", Static).update(Text(printable(f"{head}{self._cost_words}{tail}", keep_newlines=True)))

    @on(CostReady)
    def on_cost(self, msg: CostReady) -> None:
        self._cost_words = msg.words
        self.draw_header()

    @on(ReportReady)
    def on_report(self, msg: ReportReady) -> None:
        self.report = msg.report
        self.show_why()

    def rebuild(self, keep: int | None = None, rows: list[Row] | None = None) -> None:
        if self.session is None:
            return
        tl = self.query_one(Timeline)
        current = keep if keep is not None else (tl.current.index if tl.current else None)
        tl.set_rows(rows if rows is not None else self.rows_for(self.session), keep_index=current)
        tl.border_subtitle = self.view_words()

    FILTER_KEYS = (
        ("user", "1 users"),
        ("assistant", "2 replies"),
        ("tool_calls", "3 tools"),
        ("thinking", "4 thinking"),
        ("system", "5 system"),
        ("metadata", "6 metadata"),
    )

    def view_words(self) -> str:
        """What the timeline shows, always on screen (the 1-6 and a toggles), not only in a passing toast."""
        hidden = [label for name, label in self.FILTER_KEYS if name in self.hidden]
        scope = "a: every record of the file" if self.scope == "file" else "a: the chain"
        return (f"hidden: {', '.join(hidden)} · " if hidden else "all kinds (1-6 hide) · ") + scope

    # -- live sessions ------------------------------------------------------------------------
    def check_growth(self) -> None:
        """Once a second: has the file grown, been replaced (even by one of the same size) or come back?"""
        if self.session is None or self.partial:
            return
        try:
            st = os.stat(self.path)
        except OSError:
            if self._file_size >= 0:
                self.app.notify(f"{self.path.name} is gone from disk; what you see is what was loaded", severity="warning")
            self._file_size = -1
            return
        sig = (st.st_size, st.st_mtime_ns, st.st_ino)
        if self._file_size < 0:  # deleted, and now there again: another file under the same name
            self._file_size, self._file_sig = st.st_size, sig
            self.app.notify(f"{self.path.name} is back on disk: reloading it", severity="warning")
            self.load()
            return
        if sig != self._file_sig:
            self._file_size, self._file_sig = st.st_size, sig
            self.follow()  # an append is read; a replaced file is noticed by its inode and reloaded

    @work(thread=True, exclusive=True, group="follow")
    def follow(self) -> None:
        s = self.session
        if s is None:
            return
        try:
            n = s.update()
        except FileChanged:
            self.app.call_from_thread(
                self.app.notify, f"{self.path.name} was truncated or replaced: reloading it", severity="warning"
            )
            self.app.call_from_thread(self.load)
            return
        except Exception as exc:  # noqa: BLE001
            self.app.call_from_thread(self.app.notify, f"Could not read the new lines: {exc}", severity="error")
            return
        if n:
            self.app.call_from_thread(self.app.notify, f"{n} new record(s)", timeout=2)
            self.publish(s, None, tail=True)

    # -- selection ----------------------------------------------------------------------------
    @on(Timeline.Selected)
    def on_selected(self, msg: Timeline.Selected) -> None:
        self.page = None
        row = msg.row
        if row is None or self.session is None:
            detail = self.query_one("#detail", Detail)
            if self.session is not None and not self.query_one(Timeline).rows and not self.partial:
                detail.show_text("No records", self.empty_words(self.session))  # not three blank panes
            else:
                detail.clear()
            return
        detail = self.query_one("#detail", Detail)
        detail.highlight = self.search_term if self.matches else None
        detail.show_record(self.session, row.index, raw=self.raw)
        self.update_cursor(row)
        if self.query_one(TabbedContent).active == "tab-why":
            self.show_why()

    def turn_at(self, row: Row) -> int | None:
        """Index (in the series) of the last response at or before this record."""
        if self.series is None:
            return None
        chain = self.series.chain
        try:
            pos = chain.index(row.index)
        except ValueError:
            return None
        best = None
        for k, t in enumerate(self.series.turns):
            if t.pos <= pos:
                best = k
            else:
                break
        return best

    def update_cursor(self, row: Row) -> None:
        k = self.turn_at(row)
        self.query_one(TokenChart).cursor_turn = k
        if self.series is None:
            return
        th = self.series.thresholds
        if th.auto_compact is not None:
            auto = f"auto-compact {fmt(th.auto_compact)}"
        elif th.unenforced_threshold is not None:
            auto = f"auto-compact {fmt(th.unenforced_threshold)} not enforced (compacts when the API refuses)"
        else:
            auto = "auto-compact off"
        if th.auto_compact_enabled and not th.enforced:  # no warning, no blocking either: the chart draws none
            line = f"window {fmt(th.context_window)} ({th.window_source}) · {auto}; no warning or blocking limit"
        else:
            line = (
                f"window {fmt(th.context_window)} ({th.window_source}) · warning {fmt(th.warning)} · {auto} · {th.blocking_words}"
            )
        line += f" · rules of Claude Code {th.era_label}"
        what_if = describe_what_if(self.settings, self.configured)
        if what_if:
            line += f"   [what if: {what_if}; s to change]"
        if k is not None:
            t = self.series.turns[k]
            line += (
                f"\nat the cursor: {fmt(t.tokens)} tokens, {t.percent_left}% left before auto-compact, state "
                f"{t.state.replace('_', '-')}"
            )
            if self.session is not None and 0 <= t.index < len(self.session.records):
                from inspector.library.cost import usd
                from inspector.view import response_cost

                resp, c = response_cost(self.session, t.index)
                if resp is not None:
                    line += f", this response {usd(c)}" if c is not None else ", this response: no price for its model"
        self.query_one("#thresholds", Static).update(Text(line))

    def report_progress(self, what: str, done: int, total: int) -> None:
        """From the worker that builds the report: say how far it is (at most every 0.2 s)."""
        now = time.monotonic()
        if now - self._progress_at < 0.2:
            return
        self._progress_at = now
        self.progress_text = f"{what[:1].upper()}{what[1:]}… {100 * done // max(total, 1)}% of {total:,}"
        self.app.call_from_thread(self._show_progress)

    def _show_progress(self) -> None:
        if self.report is None and self.query_one(TabbedContent).active == "tab-why":
            self.show_why()

    def show_why(self) -> None:
        why = self.query_one("#why", Detail)
        tl = self.query_one(Timeline)
        row = tl.current
        if self.report is None:
            why.show_text("Why / context", f"{self.progress_text} (once per session; the rest of the screen works meanwhile)")
            return
        if row is None or self.session is None:
            return
        rep = self.report
        for e in rep.compactions:
            if e.index == row.index:
                text = [e.explanation, ""]
                for k, v in e.as_dict().items():
                    if (
                        k
                        not in (
                            "explanation",
                            "summary_text",
                            "compact_call",
                            "restored_files",
                            "cleared_tools",
                            "rules",
                            "threshold_source",
                            "prediction_notes",
                            "rules_of",
                        )
                        and v is not None
                        and v is not False  # (a flag shown only when it is set)
                    ):
                        text.append("{}: {}".format(k, "yes" if v is True else f"{v:,}" if isinstance(v, int) else v))
                if e.threshold_source:
                    text.append(f"threshold: {e.threshold_source}")
                if e.rules:
                    text.append(f"rules: {e.rules}")
                if e.prediction_notes:
                    text.append("the predicted size after assumes: " + "; ".join(e.prediction_notes))
                if e.restored_files:
                    text.append("re-attached files: " + ", ".join(f"{f.path} ({f.tokens:,})" for f in e.restored_files))
                for c in e.cleared_tools:
                    text.append(f"cleared {c['tool']} {c['tool_use_id']} ({fmt(c['tokens'])} tokens)")
                if e.compact_call:
                    text += [
                        "",
                        f"summarizer call {e.compact_call['agent_id']}: {e.compact_call.get('usage')}",
                        "",
                        "analysis:",
                        e.compact_call.get("analysis") or "(none)",
                    ]
                lost = self.lost_at(e.index) if e.kind != "microcompact" else None
                if lost is not None:
                    from inspector.tokens.lost import MENTION_RULE, describe

                    text += ["", "What it lost (L: the line in the file):", *describe(lost, 96), f"(how: {MENTION_RULE})"]
                if e.summary_text:
                    text += ["", "summary:", e.summary_text]
                why.show_text("Why this compaction fired", "\n".join(text))
                return
        from inspector.tokens.composition import composition
        from inspector.tokens.series import token_count_with_estimation

        try:
            pos = rep.series.chain.index(row.index)
        except ValueError:
            why.show_text("What fills the context", "This record is not on the conversation's chain.")
            return
        exact = self._request_lines(row.index, rep)
        if exact:
            why.show_text("What fills the context", "\n".join(exact))
            return
        comp = composition(self.session, rep.series, rep.counts, rep.calibration, pos)
        lines = [
            f"Context at this message: {comp.total:,} tokens ({comp.source}); tokenCountWithEstimation "
            f"{token_count_with_estimation(self.session, rep.series, pos):,}",
            "",
        ]
        for cat, n in sorted(comp.categories.items(), key=lambda kv: -kv[1]):
            share = 100 * n / comp.total if comp.total else 0
            lines.append(f"{n:>9,}  {share:5.1f}%  {cat}")
        if comp.tool_results_by_tool:
            lines += ["", "tool results by tool:"] + [f"{n:>9,}  {t}" for t, n in comp.tool_results_by_tool.items()]
        if comp.largest:
            lines += ["", "largest tool results:"] + [f"{x['tokens']:>9,}  {x['tool']} {x['what']}" for x in comp.largest]
        c = rep.calibration
        lines += [
            "",
            f"Estimates are the offline tokenizer calibrated on this session: fixed overhead {c.overhead:,.0f}, ratio "
            f"{c.ratio:.3f}, "
            f"fit error {c.error_pct:.1f}% over {c.points} responses.",
        ]
        if rep.anomalies:
            lines += ["", "Anomalies in this session:"] + [f"! {a}" for a in rep.anomalies]
        why.show_text("What fills the context", "\n".join(lines))

    def lost_at(self, boundary: int) -> dict[str, Any] | None:
        """What the compaction at record `boundary` lost (tokens.lost), worked out once per session as loaded."""
        from inspector.tokens.lost import losses

        s = self.session
        if s is None:
            return None
        memo = s.__dict__.setdefault("_lost_memo", {})
        key = (id(s.conversation), boundary)
        if key not in memo:
            found = losses(s, only=boundary)
            memo[key] = found[0].as_dict() if found else None
        return memo[key]

    def _request_lines(self, index: int, rep: Any) -> list[str] | None:
        """What filled the exact request behind a record, when the transcript records requests (2.1.3xx)."""
        from inspector.claude.requests import rebuild_requests
        from inspector.tokens.composition import request_composition

        s = self.session
        assert s is not None
        memo = self.__dict__.get("_requests")
        if memo is None or memo[0] is not s.conversation:
            memo = (s.conversation, rebuild_requests(s))
            self.__dict__["_requests"] = memo
        requests = memo[1]
        if not requests:
            return None
        ref = s.body(index).get("requestRef") if s.records[index].type == "assistant" else None
        q = next((q for q in requests if q.id == ref), None) or next(
            (q for q in reversed(requests) if q.index < index and q.agent_id is None), None
        )
        if q is None:
            return None
        comp = request_composition(s, q, rep.calibration.ratio)
        lines = [
            f"The request {q.id} ({(q.timestamp or '')[:19]}, {q.model or '?'}): {comp.total:,} tokens, {comp.messages} messages",
            f"({comp.source})",
            "",
        ]
        for p in comp.parts:
            share = 100 * p.tokens / comp.total if comp.total else 0
            lines.append(f"{p.tokens:>9,}  {share:5.1f}%  {p.label}")
        if not q.exact:
            lines += ["", f"{len(q.unresolved)} message(s) of it are not in the transcript: counted without them."]
        return lines

    @on(TabbedContent.TabActivated)
    def on_tab(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "tab-why":
            self.show_why()

    # -- actions ------------------------------------------------------------------------------
    def action_toggle_filter(self, name: str) -> None:
        self.hidden = self.hidden ^ {name}
        self.rebuild()
        state = "hidden" if name in self.hidden else "shown"
        self.notify(f"{name.replace('_', ' ')} {state}", timeout=2)

    def action_toggle_scope(self) -> None:
        self.scope = "file" if self.scope == "chain" else "chain"
        self.rebuild()
        self.notify(
            "every record of the file (off-chain rows in italics)" if self.scope == "file" else "the conversation's chain only",
            timeout=3,
        )

    def action_goto(self) -> None:
        from inspector.tui.screens.prompts import GotoPrompt

        def chosen(ref: str | None) -> None:
            if ref:
                self.goto(ref)

        self.app.push_screen(GotoPrompt(), chosen)

    def goto(self, ref: str) -> None:
        """Select the record a line number or uuid names; a record the view hides is shown by showing every record."""
        s = self.session
        if s is None:
            return
        try:
            i = s.find_record(ref)
        except LookupError as exc:
            self.notify(str(exc), severity="warning", timeout=4)
            return
        tl = self.query_one(Timeline)
        if not any(r.index == i for r in tl.rows) and (self.scope != "file" or self.hidden):
            self.scope, self.hidden = "file", frozenset()  # off the chain or filtered: every record, nothing hidden
            self.rebuild()
            self.notify("every record shown: the one asked for was hidden", timeout=3)
        tl.select_index(i)
        tl.focus()

    def action_back(self) -> None:
        """esc: the search bar first, then the search's highlights, then the screen."""
        box = self.query_one("#search", Input)
        if box.display:
            box.display = False
            self.query_one(Timeline).focus()
            return
        tl = self.query_one(Timeline)
        if self.matches or tl.matches:
            self.matches = []
            tl.matches = set()
            tl.refresh()
            self.refresh_detail()
            self.notify("search cleared", timeout=2)
            return
        self.app.action_back()

    def refresh_detail(self) -> None:
        """The selected record again (the search's marks on or off)."""
        row = self.query_one(Timeline).current
        if row is not None and self.session is not None:
            detail = self.query_one("#detail", Detail)
            detail.highlight = self.search_term if self.matches else None
            detail.show_record(self.session, row.index, raw=self.raw)

    def action_focus_pane(self, pane: str) -> None:
        """[ and ]: the timeline, or the detail pane (the Record or Why tab shown), as posting and harlequin jump panes."""
        if pane == "timeline":
            self.query_one(Timeline).focus()
        else:
            tabs = self.query_one(TabbedContent)
            self.query_one("#why" if tabs.active == "tab-why" else "#detail", Detail).focus()

    def show_record_tab(self) -> None:
        self.query_one(TabbedContent).active = "tab-record"

    def action_toggle_raw(self) -> None:
        self.show_record_tab()
        self.raw = not self.raw
        self.refresh_detail()

    def action_search(self) -> None:
        box = self.query_one("#search", Input)
        box.display = True
        box.focus()

    class Searched(Message):
        def __init__(self, query: str, hits: list[int]) -> None:
            super().__init__()
            self.query, self.hits = query, hits

    @on(Input.Submitted, "#search")
    def on_search(self, event: Input.Submitted) -> None:
        self.run_search(event.value)
        self.query_one(Timeline).focus()

    def run_search(self, q: str) -> None:
        if self.session is None or not q:
            return
        self.notify(f"searching for {q!r}…", timeout=1)
        self.search_worker(q)

    @work(thread=True, exclusive=True, group="search")
    def search_worker(self, q: str) -> None:
        if self.session is None:
            return
        try:
            hits = search_records(self.session, q)
        except OSError as exc:
            self.app.call_from_thread(self.app.notify, f"Search failed: {exc}", severity="error")
            return
        self.post_message(self.Searched(q, hits))

    @on(Searched)
    def on_searched(self, msg: Searched) -> None:
        q, hits = msg.query, msg.hits
        self.search_term = q
        tl = self.query_one(Timeline)
        shown = {r.index for r in tl.rows}
        self.matches = [h for h in hits if h in shown]
        tl.matches = set(self.matches)
        tl.refresh()
        if not self.matches:
            off = len(hits) - len(self.matches)
            self.notify(
                f"no match for {q!r}" + (f" in the rows shown ({off} in hidden or off-chain records: press a)" if off else ""),
                severity="warning",
            )
            return
        self.notify(f"{len(self.matches)} match(es) for {q!r}", timeout=3)
        line, self.initial_line = self.initial_line, None
        target = next((i for i in self.matches if self.session is not None and self.session.records[i].line == line), None)
        if target is not None:  # opened from one result of a search of every session: that result
            tl.select_index(target)
        else:
            self._jump(self.matches, inclusive=True)
        self.refresh_detail()

    def _jump(self, candidates: list[int], forward: bool = True, inclusive: bool = False) -> bool:
        """Move to the next (or previous) candidate row; `inclusive`: the current row counts (a new search starts at the
        first match, even when the cursor is on it)."""
        tl = self.query_one(Timeline)
        cur = tl.current.index if tl.current else -1
        order = [k for k, r in enumerate(tl.rows) if r.index in set(candidates)]
        if not order:
            return False
        if inclusive and forward:
            pos = [k for k in order if tl.rows[k].index >= cur]
        else:
            pos = [k for k in order if (tl.rows[k].index > cur if forward else tl.rows[k].index < cur)]
        target = (pos[0] if forward else pos[-1]) if pos else (order[0] if forward else order[-1])
        tl.cursor = target
        return True

    def action_next_match(self) -> None:
        if not self._jump(self.matches):
            self.notify("no search matches (press / to search)", severity="warning")

    def action_prev_match(self) -> None:
        self._jump(self.matches, forward=False)

    def action_next_compaction(self) -> None:
        if self.session is None:
            return
        b = [c["index"] for c in self.session.compactions()]  # (up to 1.0.108 a compaction is its summary alone)
        if not self._jump(b):
            self.notify("this session has no compaction", severity="information")

    def action_next_crossing(self) -> None:
        if self.series is None:
            return
        turns = self.series.turns
        crossings = [
            turns[k].index
            for k in range(len(turns))
            if turns[k].state != "ok" and (k == 0 or turns[k - 1].state != turns[k].state)
        ]
        if not self._jump(crossings):
            self.notify("the context never crossed a threshold", severity="information")

    def action_full_output(self) -> None:
        row = self.query_one(Timeline).current
        if row is None or self.session is None:
            return
        s = self.session
        ids = set(s.records[row.index].tool_results)
        po = next((p for p in s.persisted_outputs if p.tool_use_id in ids and p.file is not None), None)
        self.show_record_tab()
        if po is None:
            self.notify("this record has no persisted output file", severity="warning")
            return
        self.page = 0 if self.page is None else self.page + 1
        size = po.file_size or 0
        pages = max(1, -(-size // PAGE))
        if self.page >= pages:
            self.page = 0
        text, total = s.read_persisted(po, limit=PAGE, offset=self.page * PAGE)
        self.query_one(TabbedContent).active = "tab-record"
        more = "; f for the next page" if pages > 1 else ""
        self.query_one("#detail", Detail).show_text(
            f"{po.file.name}: page {self.page + 1} of {pages} ({human_size(total)}{more})", text
        )  # type: ignore[union-attr]

    def action_open_subagent(self) -> None:
        row = self.query_one(Timeline).current
        if row is None or self.session is None:
            return
        s = self.session
        r = s.records[row.index]
        ids = {t for t, _ in r.tool_uses} | set(r.tool_results)
        self.show_record_tab()
        for sa in s.subagents:
            if (sa.spawned_by in ids or (r.get("spawned_agent") == sa.agent_id)) and sa.path is not None:
                self.app.push_screen(SessionScreen(sa.path, settings=self.settings, title=f"subagent {sa.agent_id} of {s.title}"))
                return
        compaction = next((sa for sa in s.subagents if sa.boundary == row.index and sa.path is not None), None)
        if compaction is not None:
            self.app.push_screen(
                SessionScreen(compaction.path, settings=self.settings, title=f"compaction call {compaction.agent_id}")
            )  # type: ignore[arg-type]
            return
        self.notify("select an Agent/Task call, its result, or a compaction to open its transcript", severity="warning")

    def action_why(self) -> None:
        tabs = self.query_one(TabbedContent)
        if tabs.active == "tab-why":  # y again: back to the record
            tabs.active = "tab-record"
            return
        tabs.active = "tab-why"
        self.show_why()

    def action_reload(self) -> None:
        row = self.query_one(Timeline).current
        self.load(row.index if row else None)

    def action_export(self) -> None:
        """e: the export dialog, with the path it would write (the current folder, a free name) to keep or change."""
        from inspector.tui.screens.export import ExportScreen, free_name
        from inspector.view import export_name

        if self.session is None:
            return
        try:
            folder = Path.cwd()
        except OSError:  # the folder the app was started in was deleted meanwhile
            folder = Path.home()
        s, scope = self.session, self.scope
        what = "Every record of the file" if scope == "file" else "The conversation"

        def chosen(path: Path | None) -> None:
            if path is not None:
                self.export(s, scope, path)

        self.app.push_screen(ExportScreen(free_name(folder, export_name(s)), what), chosen)

    @work(thread=True, exclusive=True, group="export")
    def export(self, s: Session, scope: str, target: Path) -> None:
        """Write the export to a new file (never over an existing one: the write fails if one appeared): Markdown, or
        an HTML page (the conversation) for a name ending .html."""
        from inspector.edit.files import SaveError, write_atomic
        from inspector.view import export_markdown

        try:
            if target.suffix.lower() in (".html", ".htm"):
                from inspector.htmlexport import session_pages
                from inspector.library.cost import session_cost

                report = self.report if self.report is not None and self.report.session is s else analyze(s)
                # a long session's further pages beside the first, named after it (never over a file)
                for k, (name, chunks) in enumerate(session_pages(s, report, session_cost(s), stem=target.stem)):
                    page = target if k == 0 else target.with_name(name)
                    write_atomic(page, (chunk.encode("utf-8", "replace") for chunk in chunks))
            else:
                chunks = export_markdown(s, scope=scope)
                write_atomic(target, (chunk.encode("utf-8", "replace") for chunk in chunks))
        except SaveError as exc:
            self.app.call_from_thread(self.app.notify, f"Could not export: {exc}", severity="error", timeout=10)
            return
        self.app.call_from_thread(self.app.notify, f"Exported to {target}", timeout=6)

    def action_what_if(self) -> None:
        if self.session is None:
            return

        def chosen(new: Settings | None) -> None:
            if new is not None and new != self.settings:
                self.settings = new
                row = self.query_one(Timeline).current
                self.recompute(row.index if row else None)

        self.app.push_screen(WhatIfScreen(self.settings, self.configured), chosen)

    @work(thread=True, exclusive=True, group="load")
    def recompute(self, keep: int | None) -> None:
        """The series, rows and report again under new settings (the index is kept)."""
        s = self.session
        if s is None:
            return
        try:
            self.publish(s, keep, announce=True)
        except Exception as exc:  # noqa: BLE001
            self.app.call_from_thread(self.app.notify, f"Could not apply the settings: {exc}", severity="error", timeout=10)

    def action_workbench(self) -> None:
        if self.session is None or self.series is None:
            return
        from inspector.tui.screens.workbench import WorkbenchScreen

        row = self.query_one(Timeline).current
        self.app.push_screen(WorkbenchScreen(self.session, self.settings, selected=row.index if row else None))
