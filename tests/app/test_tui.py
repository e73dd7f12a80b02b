"""The app, driven with Textual's Pilot: browser, session screen, workbench, help, live files."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from pathlib import Path

import orjson
import pytest
from builders import assistant, user
from helpers import REAL_PROJECTS, SAMPLES, sample_as_release, sample_session, sha256, write_jsonl

from inspector.statefiles import state_file
from inspector.transcript.discovery import Target, resolve_target
from inspector.transcript.session import Session
from inspector.tui.app import InspectorApp
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.session import SessionScreen
from inspector.tui.screens.workbench import WorkbenchScreen
from inspector.tui.widgets.timeline import Timeline
from inspector.view import build_rows, row_kind, search_records

SIZE = (160, 48)


def run(coro):
    return asyncio.run(coro)


async def settle(app, pilot, rounds: int = 3):
    for _ in range(rounds):
        await app.workers.wait_for_complete()
        await pilot.pause()


@contextlib.asynccontextmanager
async def session_app(path: Path, size=SIZE):
    """The app opened on one session, loaded."""
    app = InspectorApp(Target("file", path))
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        yield app, pilot


# -- row models (plain data) ------------------------------------------------------------------


def test_rows_filters_and_search():
    s = Session.load(sample_session("Fix forecast", SAMPLES))
    rows = build_rows(s)
    kinds = {r.kind for r in rows}
    assert {"user", "assistant", "tool_call", "tool_result", "boundary", "summary", "thinking"} <= kinds
    assert len(rows) == len(s.conversation.logical_chain)
    no_tools = build_rows(s, hidden=frozenset({"tool_calls"}))
    assert not {r.kind for r in no_tools} & {"tool_call", "tool_result"}
    every = build_rows(s, scope="file")
    assert len(every) == len(s.records) and any(not r.on_chain for r in every)
    hits = search_records(s, "IndexError")
    assert hits and all("indexerror" in s.transcript.read_raw(s.records[i]).decode().lower() for i in hits)
    assert row_kind(s.records[hits[0]]) in ("user", "assistant", "tool_result", "tool_call", "summary")


# -- the app ----------------------------------------------------------------------------------


def test_browser_lists_filters_and_opens(workdir):
    async def go():
        app = InspectorApp(resolve_target(workdir), notice="sample notice")
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            screen = app.screen
            assert isinstance(screen, BrowserScreen)
            assert len(screen.shown) == 4
            assert all(it.peak for it in screen.items)  # details filled in the background
            await pilot.press("slash", *"dotfiles")
            await pilot.pause()
            assert len(screen.shown) == 1
            await pilot.press("enter")  # leave the filter
            await pilot.press("enter")  # open
            await settle(app, pilot)
            assert isinstance(app.screen, SessionScreen)
            assert app.screen.session.title == "Zsh prompt shows git branch"
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, BrowserScreen)

    run(go())


def test_browser_filter_waits_for_a_pause_when_there_are_many_sessions(workdir, monkeypatch):
    import inspector.tui.screens.browser as browser

    monkeypatch.setattr(browser, "FILTER_AT_ONCE_UNDER", 0)  # as with hundreds of sessions
    monkeypatch.setattr(browser, "FILTER_PAUSE", 30.0)  # longer than any gap between keys, however slow the machine

    async def go():
        app = InspectorApp(resolve_target(workdir))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            screen = app.screen
            await pilot.press("slash", *"dotfiles")
            await pilot.pause()
            assert len(screen.shown) == 4  # not redrawn for every key
            await pilot.press("enter")  # Enter applies it at once
            await pilot.pause()
            assert len(screen.shown) == 1
            browser.FILTER_PAUSE = 0.05
            from textual.widgets import Input

            screen.query_one("#filter", Input).value = "matches nothing"  # applied once the typing pauses
            for _ in range(100):
                await pilot.pause(0.05)
                if not screen.shown:
                    break
            assert screen.shown == [] and screen.query_text == "matches nothing"

    run(go())


def test_browser_sees_sessions_appear_grow_and_go(workdir, monkeypatch):
    import inspector.tui.screens.browser as browser

    monkeypatch.setattr(browser, "WATCH_EVERY", 0.1)
    proj = workdir / "-home-ann-work-weatherly"

    async def wait_for(app, pilot, cond):
        for _ in range(100):
            await settle(app, pilot, 1)
            if cond():
                return
            await asyncio.sleep(0.05)
        raise AssertionError("the browser did not catch up")

    async def go():
        app = InspectorApp(resolve_target(workdir))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            screen = app.screen
            assert len(screen.items) == 4
            new = write_jsonl(
                proj / "0e0e0e0e-new.jsonl",
                [user("n1", None, "a session started while you looked"), assistant("n2", "n1", usage=(10, 100, 50_000, 5))],
            )
            await wait_for(app, pilot, lambda: len(screen.shown) == 5 and any(it.path == new and it.peak for it in screen.items))
            it = next(it for it in screen.items if it.path == new)
            assert it.title == "a session started while you looked" and it.peak == 50_115
            with open(new, "ab") as f:  # the live session grows: its row follows
                f.write(orjson.dumps(user("n3", "n2", "more", sec=5)) + b"\n")
                f.write(orjson.dumps(assistant("n4", "n3", usage=(10, 100, 90_000, 5), sec=6)) + b"\n")
            await wait_for(app, pilot, lambda: next(i for i in screen.items if i.path == new).peak == 90_115)
            new.unlink()
            await wait_for(app, pilot, lambda: len(screen.shown) == 4)

    run(go())


def test_an_empty_browser_sees_its_first_session_appear(tmp_path, monkeypatch):
    """The watcher only looked once it had seen a session: on an empty projects root (and after the last session
    went) nothing appeared until `r`, although the empty state says new ones appear within seconds."""
    import inspector.tui.screens.browser as browser

    monkeypatch.setattr(browser, "WATCH_EVERY", 0.1)
    root = tmp_path / "projects"
    root.mkdir()

    async def go():
        app = InspectorApp(resolve_target(root))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            screen = app.screen
            assert screen.items == []
            new = write_jsonl(root / "-w" / "0e0e0e0e-first.jsonl", [user("n1", None, "the first"), assistant("n2", "n1")])
            for _ in range(300):  # a loaded machine: the new session's facts come from a process
                await settle(app, pilot, 1)
                if any(it.path == new for it in screen.items):
                    break
                await asyncio.sleep(0.05)
            assert [it.path for it in screen.items] == [new] and len(screen.shown) == 1
            new.unlink()
            for _ in range(300):  # a loaded machine: the new session's facts come from a process
                await settle(app, pilot, 1)
                if not screen.items:
                    break
                await asyncio.sleep(0.05)
            assert screen.items == []
            again = write_jsonl(root / "-w" / "0e0e0e0e-again.jsonl", [user("m1", None, "again"), assistant("m2", "m1")])
            for _ in range(300):  # a loaded machine: the new session's facts come from a process
                await settle(app, pilot, 1)
                if screen.items:
                    break
                await asyncio.sleep(0.05)
            assert [it.path for it in screen.items] == [again]

    run(go())


def test_session_screen_navigation_search_and_why(workdir):
    path = sample_session("Fix forecast", workdir)

    async def go():
        async with session_app(path) as (app, pilot):
            screen = app.screen
            assert isinstance(screen, SessionScreen) and screen.series is not None and screen.report is not None
            tl = screen.query_one(Timeline)
            assert tl.rows and tl.cursor == 0
            await pilot.press("c")  # next compaction
            await pilot.pause()
            assert screen.session.records[tl.current.index].is_compact_boundary
            await pilot.press("y")
            await pilot.pause()
            why = screen.query_one("#why")
            text = " ".join(str(w.render()) for w in why.children)
            assert "Auto-compaction fired" in text and "167,000" in text
            # what it lost (issue 26.3): the files read that the summary does not name, with their lines
            assert "What it lost" in text and "files read: 3 dropped" in text and "weatherly/units.py" in text
            # its lines lead to the records: ':', the line, enter
            import re as _re

            line = int(_re.search(r"L(\d+)\s+/home/ann/work/weatherly/weatherly/units.py", text).group(1))
            await pilot.press("colon", *f"L{line}", "enter")  # ':' as in vi
            await pilot.pause()
            assert screen.session.records[tl.current.index].line == line
            await pilot.press("c")  # back to the compaction for what follows
            await pilot.pause()
            await pilot.press("slash", *"IndexError", "enter")
            await settle(app, pilot)
            assert screen.matches and tl.current.index in screen.matches
            first = tl.current.index
            await pilot.press("n")
            await pilot.pause()
            assert tl.current.index != first or len(screen.matches) == 1
            await pilot.press("3")  # hide tool calls
            await pilot.pause()
            assert not {r.kind for r in tl.rows} & {"tool_call", "tool_result"}
            await pilot.press("3", "t")  # show them again; jump to a threshold crossing
            await pilot.pause()
            k = screen.turn_at(tl.current)
            assert screen.series.turns[k].state != "ok"
            await pilot.press("r")  # raw JSON
            await pilot.pause()
            assert screen.raw
            await pilot.press("question_mark")
            await pilot.pause()
            assert type(app.screen).__name__ == "HelpScreen"
            await pilot.press("escape")

    run(go())


def test_what_if_moves_the_thresholds_and_goes_back(workdir):
    from textual.widgets import Input, Static

    from inspector.tui.screens.whatif import WhatIfScreen

    path = sample_session("Fix forecast", workdir)

    async def go():
        async with session_app(path) as (app, pilot):
            screen = app.screen
            assert screen.series.thresholds.auto_compact == 167_000
            await pilot.press("s")
            await pilot.pause()
            assert isinstance(app.screen, WhatIfScreen)
            app.screen.query_one("#wi-window", Input).value = "a lot"
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert isinstance(app.screen, WhatIfScreen)  # refused, with the reason on screen
            assert "not a whole number" in str(app.screen.query_one("#wi-error", Static).render())
            app.screen.query_one("#wi-window", Input).value = ""
            app.screen.query_one("#wi-pct", Input).value = "50"
            await pilot.press("ctrl+s")
            await settle(app, pilot)
            assert app.screen is screen and screen.series.thresholds.auto_compact == 90_000
            assert screen.report.thresholds.auto_compact == 90_000
            assert "what if: percent 50" in str(screen.query_one("#thresholds", Static).render())
            [e] = [e for e in screen.report.compactions if e.kind == "auto"]
            # the compaction that happened is explained by the settings in force, the what-if beside it (issue 15.10)
            assert e.threshold == 167_000 and "reached the auto-compact threshold of 167,000" in e.explanation
            assert e.what_if_threshold == 90_000 and "What if (percent 50%): the threshold would be 90,000" in e.explanation
            await pilot.press("s")
            await pilot.pause()
            await pilot.press("ctrl+r")  # back to what the environment says
            await settle(app, pilot)
            assert screen.series.thresholds.auto_compact == 167_000
            assert "what if" not in str(screen.query_one("#thresholds", Static).render())

    run(go())


@pytest.fixture
def exporting(workdir, tmp_path, monkeypatch):
    """The sample that compacts, its hash, and an empty current folder the export dialog offers."""
    path = sample_session("Fix forecast", workdir)
    out = tmp_path / "exports"
    out.mkdir()
    monkeypatch.chdir(out)
    return path, sha256(path), out


def test_export_writes_markdown_beside_never_over(exporting, tmp_path):
    path, before, out = exporting

    async def go():
        from textual.widgets import Input, Static

        from inspector.tui.screens.export import ExportScreen

        async with session_app(path) as (app, pilot):
            await pilot.press("e")
            await pilot.pause()
            assert isinstance(app.screen, ExportScreen)  # the path is shown before anything is written
            box = app.screen.query_one("#export-path", Input)
            assert box.value == str(out / "fix-forecast-crash-on-empty-hourly-data-6513270e.md") and not list(out.iterdir())
            await pilot.press("enter")
            await settle(app, pilot)
            await pilot.press("e")  # a second export is offered a new name
            await pilot.pause()
            box = app.screen.query_one("#export-path", Input)
            assert box.value.endswith("-6513270e-2.md")
            first = str(out / "fix-forecast-crash-on-empty-hourly-data-6513270e.md")
            box.value = first  # the name of a file that exists: refused, said, nothing written
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, ExportScreen)
            assert "exists already" in str(app.screen.query_one("#export-error", Static).content)
            box.value = str(out / "nowhere" / "x.md")
            await pilot.press("enter")
            await pilot.pause()
            assert "No folder" in str(app.screen.query_one("#export-error", Static).content)
            box.value = str(out / "fix-forecast-crash-on-empty-hourly-data-6513270e-2.md")
            await pilot.press("enter")
            await settle(app, pilot)
            await pilot.press("e")
            await pilot.pause()
            await pilot.press("escape")  # cancelled: nothing written
            await settle(app, pilot)
            assert isinstance(app.screen, SessionScreen)
            mine = tmp_path / "elsewhere"
            mine.mkdir()
            await pilot.press("e")
            await pilot.pause()
            app.screen.query_one("#export-path", Input).value = str(mine / "notes.md")
            await pilot.press("enter")
            await settle(app, pilot)
            assert (mine / "notes.md").read_text().startswith("# Fix forecast")

    run(go())
    files = sorted(out.iterdir())
    assert [f.name for f in files] == [
        "fix-forecast-crash-on-empty-hourly-data-6513270e-2.md",
        "fix-forecast-crash-on-empty-hourly-data-6513270e.md",
    ]
    text = files[1].read_text()
    assert text.startswith("# Fix forecast crash on empty hourly data") and text.count("\n### ") == len(
        Session.load(path).conversation.logical_chain
    )
    assert files[0].read_text() == text and sha256(path) == before


def test_export_as_html_from_the_session_screen(exporting):
    path, before, out = exporting

    async def go():
        from textual.widgets import Input

        async with session_app(path) as (app, pilot):
            await pilot.press("e")
            await pilot.pause()
            app.screen.query_one("#export-path", Input).value = str(out / "page.html")
            await pilot.press("enter")
            await settle(app, pilot)
            for _ in range(100):  # the page is written by a worker
                if (out / "page.html").exists():
                    break
                await pilot.pause(0.05)

    run(go())
    page = (out / "page.html").read_text()
    from inspector.htmlexport import CSP

    assert page.startswith("<!DOCTYPE html>") and CSP in page and "<svg" in page and "<script" not in page
    assert page.count('<section class="rec') == len(Session.load(path).conversation.logical_chain)
    assert "Auto-compaction fired because" in page and sha256(path) == before


def test_export_when_the_current_folder_was_deleted(workdir, tmp_path, monkeypatch):
    """e still exports (to the home folder, and says so) instead of ending the app."""
    import os

    path = sample_session("Fix forecast", workdir)
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    home = Path(os.environ["HOME"])

    async def go():
        async with session_app(path) as (app, pilot):
            gone.rmdir()
            await pilot.press("e")
            await pilot.pause()
            await pilot.press("enter")
            await settle(app, pilot)
            assert app.is_running

    run(go())
    assert [f.name for f in home.glob("*.md")] == ["fix-forecast-crash-on-empty-hourly-data-6513270e.md"]


def test_notifications_are_plain_text(workdir):
    path = sample_session("Fix forecast", workdir)

    async def go():
        app = InspectorApp(Target("file", path))
        async with app.run_test(size=SIZE, notifications=True) as pilot:  # toasts drawn, as in a terminal
            await settle(app, pilot)
            await pilot.press("slash", *"[/oops] [b]x", "enter")  # a search term that is not markup
            await settle(app, pilot)
            await pilot.pause(0.2)
            from textual.widgets._toast import Toast

            rendered = [str(t.render()) for t in app.screen.query(Toast)]
            assert any("[/oops] [b]x" in r for r in rendered), (rendered, [n.message for n in app._notifications])
            assert isinstance(app.screen, SessionScreen)

    run(go())


def test_browser_cells_are_not_markup(tmp_path):
    write_jsonl(
        tmp_path / "root" / "-w" / "s.jsonl",
        [user("u1", None, "[b]title[/b] [/oops]"), assistant("a1", "u1", model="claude-[/oops]")],
    )

    async def go():
        app = InspectorApp(Target("root", tmp_path / "root"))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            from textual.widgets import DataTable

            [item] = app.screen.items
            assert item.model == "[/oops]" and item.title == "[b]title[/b] [/oops]"
            table = app.screen.query_one(DataTable)
            row = table.get_row_at(0)
            assert [str(c) for c in row][0].startswith("[b]title[/b]") and "[/oops]" in [str(c) for c in row]
            await pilot.pause()

    run(go())


def test_titles_and_headers_show_hostile_text_literally(tmp_path):
    from textual.widgets import Static

    evil = "\x1b]0;pwned\x07[bold]t[/bold] [/oops]"
    p = write_jsonl(
        tmp_path / "root" / "-w" / "s.jsonl",
        [
            user("u1", None, evil, cwd=evil, version=evil),
            assistant("a1", "u1", model=evil),
            assistant("a2", "a1", [{"type": "tool_use", "id": "t1", "name": evil, "input": {}}], timestamp="2026-04-02T" + evil),
            {"type": "custom-title", "customTitle": evil, "sessionId": "S"},
        ],
    )
    os.utime(p, (p.stat().st_atime - 3600, p.stat().st_mtime - 3600))  # an hour old: not a session still being written

    async def go(target):
        app = InspectorApp(target)
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            if isinstance(app.screen, BrowserScreen):
                await pilot.press("enter")
                await settle(app, pilot)
            assert isinstance(app.screen, SessionScreen)
            await pilot.press("w")
            await settle(app, pilot)
            await pilot.pause(0.6)  # the debounced preview
            await settle(app, pilot)
            await pilot.press("ctrl+s")  # saved: the modal names the new file and the cwd to resume in
            await settle(app, pilot)
            assert type(app.screen).__name__ == "SavedScreen"
            for screen in app.screen_stack:
                for w in screen.query(Static):
                    text = str(w.render())
                    assert "\x1b" not in text and "\x07" not in text, text
                for w in screen.query("Timeline, TokenChart"):
                    for y in range(w.size.height):
                        text = w.render_line(y).text
                        assert "\x1b" not in text and "\x07" not in text, text

    run(go(Target("root", tmp_path / "root")))
    run(go(Target("file", p)))


def test_full_output_and_subagent(workdir):
    path = sample_session("Fix forecast", workdir)

    async def go():
        async with session_app(path) as (app, pilot):
            screen = app.screen
            tl = screen.query_one(Timeline)
            s = screen.session
            persisted = next(r.index for r in tl.rows if s.records[r.index].get("persisted"))
            tl.select_index(persisted)
            await pilot.press("f")
            await pilot.pause()
            assert screen.page == 0
            agent_call = next(r.index for r in tl.rows if any(n == "Agent" for _, n in s.records[r.index].tool_uses))
            tl.select_index(agent_call)
            await pilot.press("o")
            await settle(app, pilot)
            assert isinstance(app.screen, SessionScreen) and app.screen is not screen
            assert app.screen.session.path.name.startswith("agent-a")
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is screen

    run(go())


def test_workbench_previews_and_saves(workdir):
    path = sample_session("Fix forecast", workdir)
    h = sha256(path)

    async def go():
        async with session_app(path) as (app, pilot):
            await pilot.press("w")
            for _ in range(100):  # the preview is debounced, then computed in a worker
                await pilot.pause(0.1)
                await settle(app, pilot, 1)
                if isinstance(app.screen, WorkbenchScreen) and app.screen.result is not None:
                    break
            wb = app.screen
            assert isinstance(wb, WorkbenchScreen)
            assert wb.result is not None and wb.result.strategy == "full" and wb.result.tokens_after < wb.result.tokens_before
            await pilot.press("ctrl+s")
            await settle(app, pilot, 5)
            assert type(app.screen).__name__ == "SavedScreen"
            text = str(app.screen.text)
            assert "claude --resume" in text
            new = Path(text.splitlines()[0])
            assert new.exists() and Session.load(new).conversation.chain

    run(go())
    assert sha256(path) == h


def test_workbench_on_a_2_1_328_session_defaults_to_its_engine_and_saves_a_refusal(tmp_path):
    from helpers import expand_golden, golden_transcript
    from textual.widgets import Select

    path = golden_transcript(expand_golden("manual_compact_resume", tmp_path))
    os.utime(path, (path.stat().st_atime - 3600, path.stat().st_mtime - 3600))
    h = sha256(path)

    async def wait_for(app, pilot, strategy):
        for _ in range(100):
            await pilot.pause(0.1)
            await settle(app, pilot, 1)
            if (
                isinstance(app.screen, WorkbenchScreen)
                and app.screen.result is not None
                and app.screen.result.strategy == strategy
            ):
                return app.screen
        raise AssertionError(f"no {strategy} preview")

    async def go():
        async with session_app(path) as (app, pilot):
            await pilot.press("w")
            wb = await wait_for(app, pilot, "compact")
            assert wb.result.api_messages and wb.result.what_if is None
            shown = str(wb.query_one("#wb-lists").render())
            assert "What Claude Code sends after `claude --resume`" in shown
            wb.query_one("#strategy", Select).value = "session-memory"
            wb = await wait_for(app, pilot, "session-memory")
            from rich.console import Console

            console = Console(width=140, record=True)
            console.print(wb.numbers(wb.result))
            assert "what-if" in wb.result.what_if and "2.1.21 – 2.1.158" in console.export_text()
            wb.query_one("#strategy", Select).value = "reactive"
            wb = await wait_for(app, pilot, "reactive")
            assert wb.result.parameters["refused_at"] == 200_000 and len(wb.result.kept_uuids) > 1
            await pilot.press("ctrl+s")
            await settle(app, pilot, 5)
            assert type(app.screen).__name__ == "SavedScreen"
            new = Path(str(app.screen.text).splitlines()[0])
            back = Session.load(new)
            assert any(back.records[i].is_compact_boundary for i in back.conversation.chain)

    run(go())
    assert sha256(path) == h


def test_live_session_updates_and_half_line(tmp_path):
    p = tmp_path / "proj" / "live.jsonl"
    full = orjson.dumps(assistant("a2", "u2", sec=3, usage=(1, 0, 50_000, 9)))
    write_jsonl(p, [user("u1", None, "start", sec=0), assistant("a1", "u1", sec=1)])
    with open(p, "ab") as f:
        f.write(orjson.dumps(user("u2", "a1", "more", sec=2)) + b"\n" + full[:20])  # a half-written line

    async def go():
        async with session_app(p) as (app, pilot):
            screen = app.screen
            assert len(screen.query_one(Timeline).rows) == 3
            for _ in range(60):
                if screen.report is not None:
                    break
                await pilot.pause(0.1)
            kept = state_file("report", str(p.resolve()))
            opened = kept.read_bytes()  # the report of the session as opened, kept for its next opening
            await pilot.press("end")  # on the last row: it follows the end as the file grows
            await pilot.pause()
            with open(p, "ab") as f:
                f.write(full[20:] + b"\n")
            for _ in range(60):  # the file is checked once a second; allow for a slow machine
                await pilot.pause(0.1)
                await settle(app, pilot, 1)
                if len(screen.query_one(Timeline).rows) == 4 and screen.report.series.turns[-1].tokens == 50_010:
                    break
            assert len(screen.query_one(Timeline).rows) == 4
            assert screen.series.turns[-1].tokens == 50_010 and screen.report.series.turns[-1].tokens == 50_010
            assert screen.query_one(Timeline).current.index == 3  # the new last record is selected
            assert kept.read_bytes() == opened  # a growth's report is not written (its next growth is another key)

    run(go())


def test_hostile_file_opens(tmp_path):
    p = tmp_path / "proj" / "bad.jsonl"
    p.parent.mkdir()
    p.write_bytes(
        b'{"type":"user","uuid":"u1","message":{"role":"user","content":"\\u001b[31mred \\u001b]0;title\\u0007 '
        b'[bold]x[/bold]"}}\n'
        b"not json\n\xff\xfe\n" + b'{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"content":[{"type":"weird"}]}}\n'
    )

    async def go():
        async with session_app(p) as (app, pilot):
            screen = app.screen
            assert len(screen.query_one(Timeline).rows) == 2
            detail = screen.query_one("#detail")
            shown = " ".join(str(w.render()) for w in detail.children)
            assert "\x1b" not in shown and "[bold]x[/bold]" in shown

    run(go())


def test_palette_offers_registry_actions(workdir):
    path = sample_session("Fix forecast", workdir)

    async def go():
        async with session_app(path) as (app, pilot):
            titles = [c.title for c in app.get_system_commands(app.screen)]
            assert "Next compaction  (c)" in titles and "Compact…  (w)" in titles and "Help  (?)" in titles
            assert any("theme" in t.lower() for t in titles)

    run(go())


@pytest.mark.skipif(not REAL_PROJECTS.is_dir(), reason="../shared/realdata is absent")
def test_every_real_session_opens_in_the_app():
    from inspector.tui.widgets.detail import Detail

    async def go(path: Path) -> None:
        async with session_app(path) as (app, pilot):
            screen = app.screen
            assert isinstance(screen, SessionScreen) and screen.session is not None
            assert len(screen.query_one(Timeline).rows) == len(screen.session.conversation.logical_chain)
            await pilot.press("end", "y", "c", "a", "r")
            await settle(app, pilot)
            assert screen.query_one("#detail", Detail) is not None

    for p in REAL_PROJECTS.rglob("*.jsonl"):
        if "subagents" not in p.parts:
            asyncio.run(go(p))


def test_a_session_deleted_under_the_browser_goes_and_discovery_goes_on(tmp_path):
    """Deleting the session under the cursor (the last row) while the browser is open: the row goes, the cursor
    lands on a row that exists, enter opens it, and a session that appears afterwards shows up."""
    root = tmp_path / "root"
    paths = [
        write_jsonl(
            root / "-w" / f"s{k}.jsonl", [user(f"u{k}", None, f"session {k}", sec=k), assistant(f"a{k}", f"u{k}", sec=k + 1)]
        )
        for k in range(3)
    ]

    async def go():
        app = InspectorApp(Target("root", root))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            b = app.screen
            assert isinstance(b, BrowserScreen) and len(b.shown) == 3
            table = b.query_one("#sessions")
            table.move_cursor(row=2)
            victim = b.selected_path()
            victim.unlink()
            b.rescan()
            await settle(app, pilot)
            assert len(b.shown) == 2 and victim not in {b.items[k].path for k in b.shown}
            assert b.selected_path() is not None
            write_jsonl(root / "-w" / "s9.jsonl", [user("u9", None, "a new one", sec=9), assistant("a9", "u9", sec=10)])
            b.rescan()
            await settle(app, pilot)
            assert len(b.shown) == 3
            await pilot.press("enter")
            await settle(app, pilot)
            assert isinstance(app.screen, SessionScreen)

    run(go())
    assert sum(p.exists() for p in paths) == 2  # the one deleted, and only it


def test_an_unexpected_error_stays_on_screen(tmp_path, monkeypatch):
    p = write_jsonl(tmp_path / "root" / "-w" / "s.jsonl", [user("u1", None, "hello"), assistant("a1", "u1")])
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    async def go():
        app = InspectorApp(Target("file", p))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            monkeypatch.setattr(type(app), "is_headless", property(lambda self: False))
            app._handle_exception(RuntimeError("boom"))
            await settle(app, pilot)
            banner = app.screen.query_one("#error-banner")
            assert "RuntimeError: boom" in str(banner.render()) and "last-error.txt" in str(banner.render())
            monkeypatch.undo()

    run(go())


def test_record_keys_show_the_record_tab_and_y_toggles(tmp_path):
    """With the Why tab open, r (raw), f (full output) and o (subagent) act on the record, so the Record tab shows;
    y again returns to it."""
    from textual.widgets import TabbedContent

    path = sample_session("Fix forecast")

    async def go():
        async with session_app(path) as (app, pilot):
            tabs = app.screen.query_one(TabbedContent)
            await pilot.press("y")
            await settle(app, pilot)
            assert tabs.active == "tab-why"
            await pilot.press("r")
            await settle(app, pilot)
            assert tabs.active == "tab-record" and app.screen.raw
            await pilot.press("y")
            await settle(app, pilot)
            assert tabs.active == "tab-why"
            await pilot.press("y")
            await settle(app, pilot)
            assert tabs.active == "tab-record"
            await pilot.press("y", "f")
            await settle(app, pilot)
            assert tabs.active == "tab-record"

    run(go())


def test_esc_closes_the_innermost_thing_first(tmp_path):
    from textual.widgets import Input

    path = sample_session("Fix forecast")

    async def go():
        app = InspectorApp(Target("root", SAMPLES))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            b = app.screen
            assert isinstance(b, BrowserScreen)
            n = len(b.shown)
            await pilot.press("slash", "f", "i", "x")
            await settle(app, pilot)
            assert len(b.shown) < n
            await pilot.press("escape")  # the filter goes, the browser stays
            await settle(app, pilot)
            assert isinstance(app.screen, BrowserScreen) and len(b.shown) == n and b.query_one("#filter", Input).value == ""
        async with session_app(path) as (app, pilot):
            screen = app.screen
            await pilot.press("slash")
            await settle(app, pilot)
            box = screen.query_one("#search", Input)
            assert box.display
            await pilot.press("escape")  # the search bar goes, the session stays
            await settle(app, pilot)
            assert app.screen is screen and not box.display
            screen.run_search("IndexError")
            await settle(app, pilot)
            assert screen.matches
            await pilot.press("escape")  # then the highlights
            await settle(app, pilot)
            assert app.screen is screen and not screen.matches

    run(go())


def test_opening_a_search_result_lands_on_the_first_match():
    """Opened from a search of every session, the session shows its first match, even on the first row."""
    path = sample_session("Fix forecast")
    s = Session.load(path)
    hits = search_records(s, "forecast")  # the first prompt says it: the first row is a match

    async def go():
        app = InspectorApp(Target("file", path))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            app.push_screen(SessionScreen(path, search="forecast"))
            await settle(app, pilot)
            await settle(app, pilot)
            tl = app.screen.query_one(Timeline)
            shown = [r.index for r in tl.rows if r.index in set(hits)]
            assert shown[0] == tl.rows[0].index and tl.current.index == shown[0]

    run(go())


def test_empty_states_are_shown_on_screen(tmp_path):
    """An empty folder and a filter that matches nothing each show why, in place of the table (no endless progress)."""
    from textual.widgets import ProgressBar, Static

    (tmp_path / "empty").mkdir()

    async def go():
        app = InspectorApp(Target("root", tmp_path / "empty"))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            b = app.screen
            empty = b.query_one("#empty", Static)
            assert empty.display and "No sessions under" in str(empty.render())
            assert not b.query_one(ProgressBar).display
        app = InspectorApp(Target("root", SAMPLES))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            b = app.screen
            await pilot.press("slash", *"zzqq")
            await settle(app, pilot)
            empty = b.query_one("#empty", Static)
            assert empty.display and "No session matches 'zzqq'" in str(empty.render())
            await pilot.press("escape")
            await settle(app, pilot)
            assert not empty.display and b.shown

    run(go())


@pytest.mark.parametrize(
    "size, theme",
    [
        ((80, 24), "textual-light"),
        ((160, 48), "textual-light"),
        ((120, 40), "solarized-light"),
        ((120, 40), "catppuccin-latte"),
        ((120, 40), "rose-pine-dawn"),
        ((120, 40), "atom-one-light"),
    ],
)
def test_a_light_theme_has_no_dark_patches(size, theme):
    """Every cell of the session screen (chart rows included) is painted with the theme's light backgrounds."""
    import re

    path = sample_session("Fix forecast")

    async def go():
        async with session_app(path, size=size) as (app, pilot):
            app.theme = theme
            await settle(app, pilot)
            await pilot.press("c", "y")
            await settle(app, pilot)
            svg = app.export_screenshot()
        fills = set(re.findall(r'<rect fill="#([0-9a-f]{6})" x=', svg))  # the cells (not the window frame)

        def light(h: str) -> float:
            r, g, b = (int(h[k : k + 2], 16) / 255 for k in (0, 2, 4))
            return 0.2126 * r + 0.7152 * g + 0.0722 * b

        dark = sorted(f for f in fills if light(f) < 0.35)
        assert not dark, dark

    run(go())


def test_the_key_bar_never_cuts_a_label_and_the_palette_has_each_command_once_with_its_key():
    from inspector.tui.widgets.keybar import MORE, KeyBar, fit

    pairs = [("/", "Search"), ("c", "Compaction"), ("t", "Crossing"), ("a", "All records")]
    assert fit(pairs, 200) == pairs
    cut = fit(pairs, 34)
    assert cut == pairs[:2] and len("/ Search  c Compaction  " + MORE) == 34 and fit(pairs, 33) == pairs[:1]
    path = sample_session("Fix forecast")

    async def go():
        for width in (200, 120, 80, 60):
            async with session_app(path, size=(width, 30)) as (app, pilot):
                bar = app.screen.query_one(KeyBar)
                text = str(bar.render())
                assert len(text) <= width - 2
                labels = [label for _, label in bar.pairs()]
                shown = [label for label in labels if label in text]
                assert text.endswith(MORE) == (len(shown) < len(labels))
                for label in shown:  # whole labels only
                    assert f" {label}" in text
                if width == 200:
                    assert "Next match" in text  # keys Textual's footer hid show where there is room
                names = [c.title for c in app.get_system_commands(app.screen)]
                assert len(names) == len(set(names))
                assert "Search  (/)" in names and "Why / context  (y)" in names

    run(go())


# -- the chart (issue 15.11) ------------------------------------------------------------------------


def chart_text(app) -> list[str]:
    from inspector.tui.widgets.chart import TokenChart

    ch = app.screen.query_one(TokenChart)
    return ["".join(seg.text for seg in ch.render_line(y)) for y in range(ch.size.height)]


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (160, 48), (200, 50)])
def test_the_chart_names_every_threshold_and_says_what_its_x_axis_is(size):
    """At every size the auto-compact line is drawn and every threshold is named on the right, also when several
    fall in one text row (in full, with its value, on a wide screen: not "auto+blo" at 200 columns); the bottom row
    says the x-axis is the response number, from #1 to the last."""
    from inspector.tui.widgets.chart import TokenChart

    path = sample_session("Fix forecast", SAMPLES)

    async def go():
        async with session_app(path, size=size) as (app, pilot):
            rows = chart_text(app)
            margin = app.screen.query_one(TokenChart).names_width
            n = len(app.screen.series.turns)
            named = " ".join(r[-margin:] for r in rows[:-1])
            assert "auto" in named, rows
            assert any("─" in r for r in rows[:-1])  # the lines themselves are drawn
            if size[0] >= 150:  # every name in full, each with its value
                for name in ("auto-compact 167k", "blocking 197k", "warning 147k", "window 200k"):
                    assert name in named, (name, rows)
            elif size[0] >= 110:  # each with its value
                for name in ("167k", "block 197k", "warning 147k", "window 200k"):
                    assert name in named, (name, rows)
            elif size[1] >= 40:  # room for every name, alone or beside the one drawn in its row
                for name in ("blo", "war", "win"):  # a name shares its row with another: its first three letters
                    assert name in named, (name, rows)
            axis = rows[-1]
            assert "#1 " in axis and f"#{n}" in axis and "response number" in axis

    run(go())


def test_the_chart_spreads_few_responses_over_the_whole_width(tmp_path):
    """Three responses fill the plot (a third of it each), not three columns at the left under a full-width axis."""
    from inspector.tui.widgets.chart import TokenChart

    recs = [user("u0", None, "hello")]
    for k in range(3):
        recs += [
            assistant(f"a{k}", recs[-1]["uuid"], sec=2 * k + 1, usage=(10, 100, 20_000 * (k + 1), 50)),
            user(f"u{k + 1}", f"a{k}", "more", sec=2 * k + 2),
        ]
    p = write_jsonl(tmp_path / "p" / "s.jsonl", recs)

    async def go():
        async with session_app(p, size=(100, 30)) as (app, pilot):
            ch = app.screen.query_one(TokenChart)
            w = ch.size.width - ch.AXIS - ch.names_width
            bottom = chart_text(app)[-2][ch.AXIS : ch.AXIS + w]
            assert bottom.strip() and " " not in bottom, bottom  # every column shows a response
            spans = [ch.columns_of(k) for k in range(3)]
            assert sum(map(len, spans)) == w and min(map(len, spans)) >= w // 3
            assert spans[0].start == 0 and spans[2].stop == w
            assert "#3" in chart_text(app)[-1]

    run(go())


def test_the_chart_marks_each_compaction_above_the_first_response_after_it():
    """The top row carries a marker over the column of the first response after each compaction (and nothing
    else), drawn from the series alone: the columns found once per geometry, not by a scan of every response per
    compaction at each paint (issue 29.3: that scan was half the app's own work while a 200 MB session loaded)."""
    from inspector.tui.widgets.chart import TokenChart

    path = sample_session("Fix forecast", SAMPLES)

    async def go():
        async with session_app(path, size=(160, 48)) as (app, pilot):
            ch = app.screen.query_one(TokenChart)
            series = app.screen.series
            assert series.boundaries, "a sample with compactions"
            w = ch.size.width - ch.AXIS - ch.names_width
            firsts = [next(k for k, t in enumerate(series.turns) if t.pos > b) for b in series.boundaries + series.microcompacts]
            want = {ch.column_of(k) for k in firsts}
            top = chart_text(app)[0][ch.AXIS : ch.AXIS + w]
            assert {c for c, x in enumerate(top) if x == "\u25bc"} == want

    run(go())


def test_a_large_session_is_counted_by_a_child_and_reported_as_counting_here_would(monkeypatch, tmp_path):
    """A session over the quick-look size has its tokens counted in a child process while the app reads it (issue
    29.3): the report that follows is the one counted here, and no child is left running."""
    import shutil

    import inspector.tui.screens.session as screen_module
    from inspector.statefiles import cache_dir
    from inspector.tokens import background
    from inspector.tokens.explain import analyze

    path = sample_session("Fix forecast", SAMPLES)
    want = analyze(Session.load(path)).as_dict(full=True)
    shutil.rmtree(cache_dir() / "counts")  # (kept by the line above: the app would find them)
    children = []
    real = background.count_in_background

    def spy(p):
        child = real(p)
        children.append(child)
        return child

    monkeypatch.setattr(screen_module, "QUICK_LOOK_OVER", 1000)  # the sample counts as large
    monkeypatch.setattr(background, "COUNT_OVER", 1000)
    monkeypatch.setattr(background, "count_in_background", spy)
    monkeypatch.setattr(background, "_cores", lambda: 2)

    async def go():
        async with session_app(path) as (app, pilot):
            for _ in range(200):
                if app.screen.report is not None:
                    break
                await pilot.pause(0.05)
            assert app.screen.report is not None
            assert app.screen.report.as_dict(full=True) == want

    run(go())
    assert len(children) == 1 and children[0] is not None
    assert children[0].proc.poll() == 0
    run(go())  # opened again: its counts are kept, no child counts them again
    assert len(children) == 1
    shutil.rmtree(cache_dir() / "counts")
    # `inspector FILE` starts the child before it imports the app (count_early): the screen adopts that one and
    # starts none of its own
    background.count_early(str(path))
    assert len(children) == 2 and background._early.get(str(path)) is children[1]
    run(go())
    assert len(children) == 2 and not background._early
    assert children[1].proc.poll() == 0


def test_the_loading_line_is_shown_a_few_times_a_second_not_for_every_chunk_read(monkeypatch):
    """Each update of the loading line lays the screen out in the UI thread, which shares the interpreter with the
    load: a 200 MB session reported 25 chunks in under a second, and the load took 0.15 s longer for them."""
    import inspector.tui.screens.session as screen_module

    path = sample_session("Fix forecast", SAMPLES)
    real_load = Session.load
    shown: list[str] = []
    reported = threading.Event()

    def load(p, progress=None, **kw):
        if progress is not None:
            for k in range(40):  # 40 chunks read in a moment
                progress(k << 20, 40 << 20)
            reported.set()
        return real_load(p, **kw)

    monkeypatch.setattr(screen_module, "QUICK_LOOK_OVER", 1000)  # the sample counts as large: loaded with progress
    monkeypatch.setattr(screen_module.Session, "load", staticmethod(load))

    async def go():
        async with session_app(path) as (app, pilot):
            real_call = app.call_from_thread

            def spy(fn, *args, **kw):
                if args and "Loading" in str(args[0]):
                    shown.append(str(args[0]))
                return real_call(fn, *args, **kw)

            monkeypatch.setattr(app, "call_from_thread", spy)
            shown.clear()
            reported.clear()  # (the first load reported too)
            app.screen.load()
            for _ in range(200):
                await pilot.pause(0.02)
                if reported.is_set():
                    break
            assert reported.is_set()

    run(go())
    assert 1 <= len(shown) <= 3, shown  # the first at once, then at most a few a second
    assert shown[0].startswith("Loading ") and "0 of 40 MB" in shown[0]


def test_the_collector_stays_paused_from_the_load_into_its_publishing(monkeypatch):
    """Re-enabled between the two, the collector's next run walked every object of the session just read before its
    thresholds were worked out (the bench's 200 MB session: 0.1 s more before the screen could be browsed)."""
    import gc

    import inspector.tui.screens.session as screen_module

    path = sample_session("Fix forecast", SAMPLES)
    real_publish = screen_module.SessionScreen.publish
    paused: list[bool] = []

    def publish(self, s, keep, **kw):
        paused.append(not gc.isenabled())
        return real_publish(self, s, keep, **kw)

    monkeypatch.setattr(screen_module.SessionScreen, "publish", publish)

    async def go():
        async with session_app(path) as (app, pilot):
            for _ in range(200):
                if app.screen.series is not None and paused:
                    break
                await pilot.pause(0.02)

    assert gc.isenabled()
    run(go())
    assert paused == [True]
    assert gc.isenabled()  # on again once the load was published


# -- focus you can see (issue 15.13) ---------------------------------------------------------------------


def test_panes_are_titled_the_focused_one_stands_out_and_brackets_jump_between_them():
    from textual.widgets import TabbedContent

    from inspector.tui.widgets.detail import Detail

    path = sample_session("Fix forecast", SAMPLES)

    async def go():
        async with session_app(path) as (app, pilot):
            screen = app.screen
            tl, tabs = screen.query_one(Timeline), screen.query_one(TabbedContent)
            assert "Timeline" in tl.border_title and "Detail" in tabs.border_title
            tl.focus()
            await pilot.pause()
            assert tl.styles.border_top[0] == "heavy" and tabs.styles.border_top[0] == "round"
            await pilot.press("right_square_bracket")
            await pilot.pause()
            assert isinstance(app.focused, Detail) and app.focused.id == "detail"
            assert tabs.styles.border_top[0] == "heavy" and tl.styles.border_top[0] == "round"
            await pilot.press("y")  # the Why tab: ] then focuses it
            await pilot.press("left_square_bracket")
            await pilot.pause()
            assert app.focused is tl
            await pilot.press("right_square_bracket")
            await pilot.pause()
            assert app.focused.id == "why"
            help_text = __import__("inspector.tui.screens.help", fromlist=["x"]).help_table()
            from rich.console import Console

            console = Console(width=160, record=True)
            console.print(help_text)
            out = console.export_text()
            assert "tab / shift+tab" in out and "[" in out and "Focus the timeline" in out

    run(go())


# -- modals on a small terminal (issue 15.19) ---------------------------------------------------------------


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
def test_modals_fit_a_small_terminal_and_wrap_their_labels(size):
    """Help, what-if: inside the screen (no cut right edge), every label whole (wrapped, not cut), the buttons
    reachable by scrolling, the keys that act without them said at the top."""
    from textual.containers import VerticalScroll
    from textual.widgets import Button, Label

    path = sample_session("Fix forecast", SAMPLES)

    async def go():
        async with session_app(path, size=size) as (app, pilot):
            for key, box_id in (("question_mark", "help"), ("s", "whatif-box")):
                await pilot.press(key)
                await pilot.pause()
                box = app.screen.query_one(f"#{box_id}", VerticalScroll)
                r = box.region
                assert r.x >= 0 and r.right <= size[0] and r.bottom <= size[1], (box_id, r)
                for label in app.screen.query(Label):
                    text = str(label.render())
                    assert label.size.width <= r.width and label.virtual_size.width <= r.width
                    if len(text) > label.size.width:  # a long label takes several lines, never one cut line
                        assert label.size.height > 1, text
                if box_id == "whatif-box":
                    assert "ctrl+s applies" in str(app.screen.query_one("#whatif-src").render())
                    box.scroll_end(animate=False)
                    await pilot.pause()
                    apply = app.screen.query_one("#wi-apply", Button)
                    assert apply.region.bottom <= r.bottom and apply.region.y >= r.y  # in view once scrolled
                await pilot.press("escape")
                await pilot.pause()

    run(go())


# -- the browser's table and the session's toggles (issue 15.18) ------------------------------------------


def test_browser_sorting_shows_its_column_and_direction_reverses_and_follows_header_clicks(workdir):
    from textual.widgets import DataTable

    async def go():
        app = InspectorApp(resolve_target(workdir))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            b = app.screen
            t = b.query_one(DataTable)
            labels = [str(c.label) for c in t.columns.values()]
            assert labels[:2] == ["Title", "Project"]  # the project right after the title, not last and clipped
            assert "Cleanup" not in labels  # only while some session is due for Claude Code's cleanup
            assert labels[2] == "When ▼" and "sorted by when ▼" in t.border_subtitle
            whens = [b.items[k].ts for k in b.shown]
            assert whens == sorted(whens, reverse=True)
            await pilot.press("S")
            await pilot.pause()
            assert [b.items[k].ts for k in b.shown] == sorted(whens)
            assert str(list(t.columns.values())[2].label) == "When ▲" and "▲" in t.border_subtitle
            await pilot.press("s")  # the next column: size, largest first
            await pilot.pause()
            sizes = [b.items[k].size for k in b.shown]
            assert sizes == sorted(sizes, reverse=True) and "Size ▼" in [str(c.label) for c in t.columns.values()]
            b.post_message(DataTable.HeaderSelected(t, t.ordered_columns[0].key, 0, t.ordered_columns[0].label))
            await pilot.pause()
            titles = [b.items[k].title.lower() for k in b.shown]
            assert titles == sorted(titles) and "Title ▲" in [str(c.label) for c in t.columns.values()]
            b.post_message(DataTable.HeaderSelected(t, t.ordered_columns[0].key, 0, t.ordered_columns[0].label))
            await pilot.pause()
            assert [b.items[k].title.lower() for k in b.shown] == sorted(titles, reverse=True)

    run(go())


def test_browser_filter_matches_the_folder_name(workdir):
    from textual.widgets import Input

    async def go():
        app = InspectorApp(resolve_target(workdir))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            b = app.screen
            every = len(b.shown)
            b.query_one("#filter", Input).value = "-home-ann-work-dotfiles"  # the folder's name, not its cwd
            await settle(app, pilot)
            assert 0 < len(b.shown) < every and all(b.items[k].path.parent.name == "-home-ann-work-dotfiles" for k in b.shown)

    run(go())


def test_the_timeline_always_says_what_it_hides_and_its_scope():
    path = sample_session("Fix forecast", SAMPLES)

    async def go():
        async with session_app(path) as (app, pilot):
            tl = app.screen.query_one(Timeline)
            assert "all kinds" in tl.border_subtitle and "a: the chain" in tl.border_subtitle
            await pilot.press("3", "4", "a")
            await pilot.pause()
            assert "hidden: 3 tools, 4 thinking" in tl.border_subtitle and "every record" in tl.border_subtitle
            await pilot.press("3")
            await pilot.pause()
            assert "hidden: 4 thinking ·" in tl.border_subtitle

    run(go())


# -- pivots (issue 15.16) ------------------------------------------------------------------------------------


def test_the_timeline_marks_pivots_and_the_workbench_says_when_there_are_none(tmp_path):
    from textual.widgets import Select, Static

    from inspector.compact import pivot_candidates

    short = sample_session("Add a changelog", SAMPLES)
    # all its prompts before its last compaction, and a release whose menu leaves out the summary (2.1.83 and later)
    compacted = sample_as_release("Fix forecast", tmp_path, "2.1.88")

    async def go():
        async with session_app(short) as (app, pilot):
            tl = app.screen.query_one(Timeline)
            s = app.screen.session
            assert tl.pivots == set(pivot_candidates(s)) and len(tl.pivots) == 2
            lines = ["".join(seg.text for seg in tl.render_line(y)) for y in range(len(tl.rows))]
            marked = [r.index for r, text in zip(tl.rows, lines) if text[1] == "»"]
            assert marked == sorted(tl.pivots)
            tl.select_index(next(r.index for r in tl.rows if r.kind == "assistant"))  # a reply: not a pivot
            await pilot.press("w")
            await settle(app, pilot)
            wb = app.screen
            wb.query_one("#strategy", Select).value = "partial"
            await settle(app, pilot)
            await pilot.pause(0.5)
            await settle(app, pilot)
            assert "not a pivot" in str(wb.query_one("#wb-selected", Static).render())
            assert "is a reply of the model, not a prompt you typed" in str(wb.query_one("#wb-numbers", Static).render())
        async with session_app(compacted) as (app, pilot):
            assert app.screen.query_one(Timeline).pivots == set()
            await pilot.press("w")
            await settle(app, pilot)
            assert "has no pivot at all" in str(app.screen.query_one("#wb-selected", Static).render())

    run(go())


# -- the search of every session: a result list, and the match marked (issue 15.17) ---------------------------


async def search_every_session(app, pilot, term: str, wait: bool = True) -> None:
    """ctrl+f in the browser, the term typed and entered; with `wait`, until the search has settled."""
    await pilot.press("ctrl+f")
    await pilot.pause()
    await pilot.press(*term, "enter")
    if wait:
        await settle(app, pilot)
        await settle(app, pilot)


def test_search_of_every_session_lists_each_match_and_opens_it_marked(workdir):
    from textual.widgets import DataTable, Static

    from inspector.library.search import Query, search_file
    from inspector.tui.widgets.detail import Detail

    async def go():
        app = InspectorApp(resolve_target(workdir))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            b = app.screen
            await search_every_session(app, pilot, "hourly")
            results = b.query_one("#results", DataTable)
            assert results.display and app.focused is results
            expected = sum(
                len(search_file(p, Query("hourly"), persisted=p.suffix == ".jsonl" and "subagents" not in p.parts))
                for it in b.items
                for p in [it.path, *__import__("inspector.transcript.session", fromlist=["x"]).subagent_files(it.path)]
            )
            assert results.row_count == len(b.results) == min(expected, 2000) and expected > 1
            assert f"{expected:,} in" in results.border_title
            snippets = [str(results.get_row_at(k)[4]) for k in range(results.row_count)]
            assert all("hourly" in s.lower() for s in snippets)
            k = (
                next(k for k, (_, _, h) in enumerate(b.results) if h.line > 1 and b.results[k][0].suffix == ".jsonl")
                if any(h.line > 1 for _, _, h in b.results)
                else 0
            )
            path, _, hit = b.results[k]
            results.move_cursor(row=k)
            await pilot.press("enter")
            await settle(app, pilot)
            await settle(app, pilot)
            screen = app.screen
            assert isinstance(screen, SessionScreen) and screen.path == path
            assert screen.session.records[screen.query_one(Timeline).current.index].line == hit.line  # that match, not the first
            detail = screen.query_one("#detail", Detail)
            marked = [w for w in detail.query(Static) if "detail--match" in w.classes]
            assert marked, "the match is marked in the detail pane"
            text = marked[0].content  # the Rich Text the pane was given
            spans = [sp for sp in text.spans if "reverse" in str(sp.style)]
            assert spans and all(text.plain[sp.start : sp.end].lower() == "hourly" for sp in spans)
            await pilot.press("escape")  # the search's highlights go, and its marks with them
            await settle(app, pilot)
            assert not [w for w in screen.query_one("#detail", Detail).query(Static) if "detail--match" in w.classes]
            await pilot.press("escape")
            await settle(app, pilot)
            assert app.screen is b and b.query_one("#results", DataTable).display
            await pilot.press("escape")  # then the search of every session is cleared, its list hidden
            await settle(app, pilot)
            assert not b.query_one("#results", DataTable).display and b.search_term is None

    run(go())


def test_the_text_around_a_match_keeps_most_of_a_narrow_row_and_follows_a_resize(workdir):
    """At 80 columns the session's title, time and where are cut short so that the text around the match can be read;
    made wider, the rows are laid out again (the full time, longer titles), the cursor on the same match."""
    from textual.widgets import DataTable

    def text_room(b) -> int:
        t = b.query_one("#results", DataTable)
        used = sum(c.get_render_width(t) for key, c in t.columns.items() if key.value != "snippet")
        return t.size.width - used

    async def go():
        app = InspectorApp(resolve_target(workdir))
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(app, pilot)
            b = app.screen
            await search_every_session(app, pilot, "hourly")
            results = b.query_one("#results", DataTable)
            assert results.row_count > 1
            room = text_room(b)
            assert room >= 25, room  # a third of the row (it was off the screen: -4)
            for k in range(results.row_count):  # the match itself in view, marked
                cell = results.get_row_at(k)[4]
                at = cell.plain.lower().find("hourly")
                assert 0 <= at and at + len("hourly") <= room, (at, room, cell.plain)
                assert any("reverse" in str(sp.style) and cell.plain[sp.start : sp.end].lower() == "hourly" for sp in cell.spans)
            when = str(results.get_row_at(0)[1])
            assert when and not when.startswith("20")  # no year
            results.move_cursor(row=1)
            await pilot.resize_terminal(160, 48)
            await settle(app, pilot)
            assert str(results.get_row_at(0)[1]).startswith("20") and results.cursor_row == 1
            assert text_room(b) >= 60

    run(go())


# -- smaller things (issue 15.9) ------------------------------------------------------------------------------


def test_a_subagent_whose_session_is_gone_is_listed_as_stats_lists_it(tmp_path):
    """A flat agent-*.jsonl (2.0.x) whose session file is gone: in the browser, marked, and still there after a rescan."""
    from helpers import run_cli

    proj = tmp_path / "projects" / "-w-proj"
    write_jsonl(
        proj / "11111111-1111-4111-8111-111111111111.jsonl",
        [user("u0", None, "hello", sessionId="S1"), assistant("a1", "u0", sec=1, sessionId="S1")],
    )
    write_jsonl(
        proj / "agent-abc123.jsonl",
        [
            user("x0", None, "look for the bug", sessionId="GONE", isSidechain=True, agentId="abc123"),
            assistant("x1", "x0", sec=1, sessionId="GONE", isSidechain=True, agentId="abc123"),
        ],
    )
    code, out, err = run_cli("stats", "--json", str(tmp_path / "projects"))
    listed = {Path(d["path"]).name for d in __import__("helpers").jsonl(out)}
    assert listed == {"11111111-1111-4111-8111-111111111111.jsonl", "agent-abc123.jsonl"}

    async def go():
        app = InspectorApp(resolve_target(tmp_path / "projects"))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            b = app.screen
            assert {it.path.name for it in b.items} == listed
            orphan = next(it for it in b.items if it.path.name == "agent-abc123.jsonl")
            assert orphan.orphan and str(orphan.cells()[0]).startswith("[subagent without its session]")
            b.rescan()
            await settle(app, pilot)
            assert {it.path.name for it in b.items} == listed  # a rescan does not take it away

    run(go())


def test_deleting_the_open_session_says_so_once(workdir):
    """One notice when the file of the open session goes away, not one per look or per screen."""

    async def go():
        app = InspectorApp(resolve_target(workdir))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            await pilot.press("enter")
            await settle(app, pilot)
            path = app.screen.path
            said: list[str] = []
            real = app.notify
            app.notify = lambda message, *a, **k: (said.append(str(message)), real(message, *a, **k))[1]
            path.unlink()
            await pilot.pause(3.5)
            await pilot.press("escape")
            await pilot.pause(3.5)
            assert [m for m in said if path.name in m] == [f"{path.name} is gone from disk; what you see is what was loaded"]

    run(go())


# -- cost on screen (issue 16) ---------------------------------------------------------------------------------


def test_cost_in_the_browser_the_header_and_each_responses_detail(workdir):
    from textual.widgets import DataTable, Static

    from inspector.library.cost import session_cost, usd
    from inspector.tui.widgets.detail import Detail

    async def go():
        app = InspectorApp(resolve_target(workdir))
        async with app.run_test(size=(200, 50)) as pilot:
            await settle(app, pilot)
            await settle(app, pilot)
            b = app.screen
            t = b.query_one("#sessions", DataTable)
            assert "Cost" in [str(c.label) for c in t.columns.values()]
            for it in b.items:
                assert it.cost == pytest.approx(session_cost(Session.load(it.path))["cost_usd_priced"])
            b.sort_by("cost")
            await pilot.pause()
            costs = [b.items[k].cost for k in b.shown]
            assert costs == sorted(costs, reverse=True)
            t.move_cursor(row=0)
            await pilot.press("enter")
            await settle(app, pilot)
            s = app.screen.session
            header = str(app.screen.query_one("#title", Static).content)
            assert usd(session_cost(s)["cost_usd_priced"]) in header
            tl = app.screen.query_one(Timeline)
            tl.select_index(next(i for i, r in enumerate(s.records) if r.type == "assistant" and r.usage))
            await settle(app, pilot)
            text = " ".join(str(w.content) for w in app.screen.query_one("#detail", Detail).query(Static))
            assert "cost of this response: $" in text
            below_chart = str(app.screen.query_one("#thresholds", Static).content)
            assert "this response $" in below_chart  # beside the chart, with the context at the cursor

    run(go())


def test_the_header_cost_comes_from_the_stats_cache_when_it_holds_the_session(workdir, monkeypatch):
    """A session whose stats the cache holds (the browser's listing, `inspector stats`) shows its cost in the header
    without reading its subagents again (issue 29.3); one the cache does not hold is priced as before."""
    from textual.widgets import Static

    import inspector.library.cost as cost_module
    from inspector.library.cost import session_cost, usd
    from inspector.library.stats import StatsCache, collect_stats
    from inspector.statefiles import cache_dir

    path = sample_session("Fix forecast", workdir)
    want = usd(session_cost(Session.load(path))["cost_usd_priced"])
    cache = StatsCache(cache_dir())
    collect_stats(resolve_target(path), cache, workers=1)
    cache.close()
    monkeypatch.setattr(cost_module, "session_cost", lambda *a, **k: (_ for _ in ()).throw(AssertionError("priced")))

    async def go():
        async with session_app(path) as (app, pilot):
            assert want in str(app.screen.query_one("#title", Static).content)

    run(go())


# -- retention on screen (issue 16) ----------------------------------------------------------------------------


def _root_with_cleanup_due(tmp_path, monkeypatch):
    """The samples under a projects root, Claude Code's cleanup at 30 days: one session 40 days old (deleted at its
    next start), one 26 (within 7 days). Returns (root, the one due now, the one due soon)."""
    import json as _json
    import shutil
    import time

    home = tmp_path / "claude"
    home.mkdir()
    (home / "settings.json").write_text(_json.dumps({"cleanupPeriodDays": 30}))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    files = sorted(p for p in root.glob("*/*.jsonl"))
    doomed, soon = files[0], files[1]
    for p, age in ((doomed, 40), (soon, 26)):
        t = time.time() - age * 86400
        os.utime(p, (t, t))
    return root, doomed, soon


def test_the_browser_marks_sessions_claude_code_will_delete_and_archives_them(tmp_path, monkeypatch):
    from textual.widgets import DataTable, Input, Static

    root, doomed, soon = _root_with_cleanup_due(tmp_path, monkeypatch)

    async def go():
        app = InspectorApp(resolve_target(root))
        async with app.run_test(size=(200, 50)) as pilot:
            await settle(app, pilot)
            b = app.screen
            risk = b.query_one("#risk", Static)
            assert risk.display and "1 session(s) will be deleted the next time Claude Code starts" in str(risk.content)
            assert "1 more within 7 days" in str(risk.content) and "cleanupPeriodDays 30" in str(risk.content)
            by = {it.path: it for it in b.items}
            assert str(by[doomed].cells()[7]) == "next start!" and by[soon].risk == "soon" and str(by[soon].cells()[7])
            assert "Cleanup" in [str(c.label) for c in b.query_one("#sessions", DataTable).columns.values()]
            assert all(it.risk is None for p, it in by.items() if p not in (doomed, soon))
            await pilot.press("A")
            await pilot.pause()
            app.screen.query_one("#archive-path", Input).value = str(tmp_path / "kept")
            await pilot.press("enter")
            await settle(app, pilot)
            kept = {p.relative_to(tmp_path / "kept") for p in (tmp_path / "kept").rglob("*.jsonl")}
            assert {doomed.relative_to(root), soon.relative_to(root)} <= kept

    run(go())


def test_the_project_column_widens_on_a_wide_terminal(tmp_path):
    """A long project path keeps more of its end at 200 columns than at 120 (the end tells projects apart)."""
    long = "/home/someone/work/clients/acme/very-long-project-name-for-the-service"
    write_jsonl(
        tmp_path / "projects" / "-p" / "s.jsonl", [user("u0", None, "hi", cwd=long), assistant("a1", "u0", sec=1, cwd=long)]
    )

    async def project_cell(size):
        app = InspectorApp(resolve_target(tmp_path / "projects"))
        async with app.run_test(size=size) as pilot:
            await settle(app, pilot)
            b = app.screen
            return str(b.row_cells(b.items[0], 40)[1])

    narrow, wide = run(project_cell((120, 40))), run(project_cell((200, 50)))
    assert narrow.startswith("…") and len(narrow) == 26
    assert len(wide) > len(narrow) and long.endswith(wide.lstrip("…"))


def test_a_search_of_every_session_with_the_index_behind_reads_the_rest_and_builds_the_index_behind(workdir, monkeypatch):
    """ctrl+f on sessions the index does not hold yet: the matches at once (read, not looked up), then the index is
    built in the background, and the next search looks them up: the same matches."""
    from textual.widgets import DataTable

    import inspector.library.fts as fts

    monkeypatch.setattr(fts, "SEARCH_BUDGET", 0)  # a search indexes nothing itself

    async def go():
        app = InspectorApp(resolve_target(workdir))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            b = app.screen
            await search_every_session(app, pilot, "hourly", wait=False)
            for _ in range(200):  # the search, then the build, both in the background
                await pilot.pause(0.05)
                if any("Search index ready" in str(n.message) for n in app._notifications):
                    break
            first = [(str(p), h.line, h.count) for p, _, h in b.results]
            assert first and b.query_one("#results", DataTable).row_count == len(first)
            idx = fts.SearchIndex()
            try:
                assert idx.status().files >= len(b.items)  # every transcript, subagents too
            finally:
                idx.close()
            await pilot.press("escape")
            await settle(app, pilot)
            await search_every_session(app, pilot, "hourly")
            assert [(str(p), h.line, h.count) for p, _, h in b.results] == first

    run(go())


def test_the_app_never_starts_a_process_pool_to_index(workdir, monkeypatch):
    """A pool of processes started from the app's threads fails in a real terminal ('bad value(s) in fds_to_keep'):
    the app's search indexes in its own process, whatever the amount."""
    import concurrent.futures

    import inspector.library.fts as fts

    monkeypatch.setattr(fts, "POOL_MIN", 0)  # the samples would be read by a pool, were it allowed

    def no_pool(*a, **k):
        raise AssertionError("a process pool was started from the app")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", no_pool)

    async def go():
        app = InspectorApp(resolve_target(workdir))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            await search_every_session(app, pilot, "hourly")
            assert app.screen.results and not [n for n in app._notifications if "rror" in str(n.message)]
            idx = fts.SearchIndex()
            try:
                assert idx.status().files >= len(app.screen.items)  # it indexed them all itself
            finally:
                idx.close()

    run(go())


def test_the_browsers_share_of_the_window_follows_the_release_and_model():
    """The browser took a 1M window only when usage passed 200k: a natively 1M model's peak was shown as a share of
    200k. It asks the thresholds `inspector tokens` uses."""
    from inspector.tui.screens.browser_rows import session_window as _window

    assert _window("claude-opus-5", "2.1.332", 50_000) == 1_000_000  # natively 1M on today's Claude Code
    # 2.1.219 gives it its native 1M on Anthropic's own API host, 200k through another (both measured)
    assert _window("claude-opus-5", "2.1.219", 50_000) == 1_000_000
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ANTHROPIC_BASE_URL", "http://localhost:8080")
        assert _window("claude-opus-5", "2.1.219", 50_000) == 200_000
    assert _window("claude-opus-4-6[1m]", "2.1.328", 1_000) == 1_000_000
    assert _window("claude-sonnet-4-5", "2.1.88", 250_000) == 1_000_000  # inferred from usage, as that release did
    assert _window("claude-sonnet-4-5", "2.1.88", 50_000) == 200_000


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
def test_the_saved_dialog_keeps_its_close_button_in_view(size):
    """At 80x24 and 60x20 the 'Saved as a new session' dialog was cut: its Close button could not be seen or reached.
    Its text now scrolls and the button stays on screen, focused."""
    from textual.widgets import Button

    from inspector.tui.screens.workbench import SavedScreen

    text = "\n".join(f"line {k} of a long resume hint /a/very/long/path/" + "x" * 60 for k in range(40))

    async def go():
        app = InspectorApp(resolve_target(SAMPLES))
        async with app.run_test(size=size) as pilot:
            await settle(app, pilot)
            app.push_screen(SavedScreen(text))
            await settle(app, pilot)
            button = app.screen.query_one("#close", Button)
            r = button.region
            assert r.height > 0 and r.y + r.height <= size[1] and r.x + r.width <= size[0]
            assert app.focused is button
            await pilot.press("enter")
            await settle(app, pilot)
            assert not isinstance(app.screen, SavedScreen)

    run(go())


def test_the_cleanup_notice_follows_the_sessions_that_go(tmp_path, monkeypatch):
    """After the session due at Claude Code's next start was deleted the notice still said one would be, until r,
    and then read '1 more within 7 days' with nothing before it."""
    from textual.widgets import Static

    import inspector.tui.screens.browser as browser

    monkeypatch.setattr(browser, "WATCH_EVERY", 0.1)
    root, doomed, soon = _root_with_cleanup_due(tmp_path, monkeypatch)

    async def go():
        app = InspectorApp(resolve_target(root))
        async with app.run_test(size=(200, 50)) as pilot:
            await settle(app, pilot)
            risk = app.screen.query_one("#risk", Static)
            assert "1 more within 7 days" in str(risk.content)
            doomed.unlink()
            for _ in range(100):
                await settle(app, pilot, 1)
                if "next time" not in str(risk.content):
                    break
                await asyncio.sleep(0.05)
            text = str(risk.content)
            assert "next time" not in text and "more within" not in text
            assert "1 session(s) will be deleted by Claude Code's cleanup within 7 days" in text

    run(go())


# -- issue 27: the walk's friction items ------------------------------------------------------


def test_27_14_the_workbench_opens_with_the_strategy_in_focus(workdir):
    from textual.widgets import Select

    path = sample_session("Fix forecast", workdir)

    async def go():
        async with session_app(path) as (app, pilot):
            await pilot.press("w")
            await settle(app, pilot)
            assert isinstance(app.screen, WorkbenchScreen)
            assert isinstance(app.focused, Select) and app.focused.id == "strategy"
            await pilot.press("enter")  # opens the strategies at once
            await pilot.pause()
            assert app.focused is not None and app.focused.id != "wb-form"

    run(go())


def test_27_16_home_and_end_move_the_browsers_cursor(workdir):
    async def go():
        app = InspectorApp(resolve_target(workdir))
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(app, pilot)
            t = app.screen.query_one("#sessions")
            assert t.row_count >= 4
            await pilot.press("end")
            assert t.cursor_row == t.row_count - 1
            await pilot.press("home")
            assert t.cursor_row == 0

    run(go())


def test_27_19_the_theme_chosen_is_the_theme_next_time(workdir):
    async def go(theme=None):
        app = InspectorApp(resolve_target(workdir))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            if theme:
                app.theme = theme
                await pilot.pause()
            return app.theme

    first = run(go())
    other = "textual-light" if first != "textual-light" else "nord"
    assert run(go(other)) == other
    assert run(go()) == other  # remembered


def test_27_19_a_session_with_no_records_says_so(tmp_path):
    empty = tmp_path / "p" / "e.jsonl"
    empty.parent.mkdir()
    empty.write_bytes(b"")
    meta = tmp_path / "p" / "m.jsonl"
    meta.write_text('{"type":"summary","summary":"old title","leafUuid":"x"}\n')

    async def go(path, words):
        async with session_app(path) as (app, pilot):
            text = " ".join(str(w.render()) for w in app.screen.query_one("#detail").children)
            assert words in text, text

    run(go(empty, "The file is empty"))
    run(go(meta, "none of them a message of a conversation (summary)"))


def test_27_15_a_match_deep_in_a_long_tool_result_is_scrolled_into_view(tmp_path):
    from builders import tool_result, tool_use

    text = "\n".join(f"line {k}: nothing here" for k in range(400)).replace("line 300:", "line 300: the GIRAFFE was here")
    recs = [
        user("u1", None, "look", sec=1),
        assistant("a1", "u1", [tool_use("t1", "Bash", {"command": "cat log"})], sec=2),
        tool_result("r1", "a1", "t1", text, sec=3),
    ]

    path = write_jsonl(tmp_path / "p" / "s.jsonl", recs)

    async def go():
        async with session_app(path, size=(120, 40)) as (app, pilot):
            screen = app.screen
            await pilot.press("slash", *"giraffe", "enter")
            await settle(app, pilot)
            detail = screen.query_one("#detail")
            await pilot.pause()
            assert detail.scroll_y > 250  # the match's line, not the top of the block

    run(go())


def test_27_10_an_unenforced_threshold_is_said_one_way_in_the_header_and_the_chart(tmp_path):
    """2.1.3xx on a model whose threshold is not enforced: no warning or blocking line drawn, and the header lists
    none either (it listed both); the chart's margin says "not enforced" as the text does (it said "auto off")."""
    from helpers import GOLDENS, expand_golden

    from inspector.tokens.series import session_thresholds
    from inspector.tokens.thresholds import Settings

    path = None
    for name in sorted(p.name for p in GOLDENS.iterdir() if p.is_dir()):
        folder = expand_golden(name, tmp_path / "g")
        for p in folder.rglob("*.jsonl"):
            if "subagents" in p.parts:
                continue
            th = session_thresholds(Session.load(p), Settings())
            if th.auto_compact_enabled and not th.enforced and th.unenforced_threshold:
                path = p
                break
        if path:
            break
    assert path is not None

    async def go():
        async with session_app(path, size=(160, 48)) as (app, pilot):
            header = str(app.screen.query_one("#thresholds").render())
            assert "no warning or blocking limit" in header and "warning 1" not in header
            rows = " ".join(chart_text(app))
            assert "not enforced" in rows and "auto off" not in rows and "warning" not in rows

    run(go())


def test_27_18_a_live_session_is_saved_from_the_app_after_asking(workdir):
    """The CLI saves a session still being written with --allow-live; the app asks instead of only refusing."""
    from inspector.tui.screens.workbench import ConfirmSend, SavedScreen

    path = sample_session("Fix forecast", workdir)

    async def go():
        async with session_app(path) as (app, pilot):
            await pilot.press("w")
            await settle(app, pilot)
            await pilot.pause(0.6)  # the debounced preview
            await settle(app, pilot)
            before = set(path.parent.glob("*.jsonl"))
            with open(path, "ab") as f:  # Claude Code writes on meanwhile
                f.write(b'{"type":"user","uuid":"late","parentUuid":null,"message":{"role":"user","content":"more"}}\n')
            await pilot.press("ctrl+s")
            await settle(app, pilot)
            assert isinstance(app.screen, ConfirmSend), app.screen
            assert set(path.parent.glob("*.jsonl")) == before  # nothing written before the answer
            await pilot.click("#yes")
            await settle(app, pilot, rounds=6)
            assert isinstance(app.screen, SavedScreen)
            assert len(set(path.parent.glob("*.jsonl")) - before) == 1

    run(go())


def test_27_18_a_saved_copy_is_named_by_its_origin_in_the_browser(workdir):
    from helpers import run_cli

    original = sample_session("Fix forecast", workdir)
    code, out, err = run_cli("compact", original, "--strategy", "compact", "--write", "--yes")
    assert code == 0, err

    async def go():
        app = InspectorApp(resolve_target(workdir))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot, rounds=8)
            titles = [it.title for it in app.screen.items]
            copies = [t for t in titles if t.startswith(f"[copied from {original.stem[:8]}]")]
            assert len(copies) == 1, titles
            mine = next(it for it in app.screen.items if it.path == original)
            assert not mine.title.startswith("[copied")

    run(go())


def test_27_16_v_chooses_which_columns_a_narrow_browser_shows(workdir):
    async def go():
        app = InspectorApp(resolve_target(workdir))
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(app, pilot)
            t = app.screen.query_one("#sessions")
            keys = lambda: [c.key.value for c in t.columns.values()]  # noqa: E731
            assert "peak" in keys() and "size" in keys()
            await pilot.press("v")
            await pilot.pause()
            assert keys() == ["title", "when", "peak", "comp", "model"]
            await pilot.press("v")
            await pilot.pause()
            assert keys()[:5] == ["title", "when", "dur", "size", "cost"] and "peak" not in keys()
            assert "v columns: cost and size" in str(t.border_subtitle)
            await pilot.press("v")
            await pilot.pause()
            assert "peak" in keys() and "size" in keys() and "project" in keys()

    run(go())


def test_28_5_the_browser_totals_what_it_shows(workdir):
    async def go():
        app = InspectorApp(resolve_target(workdir))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot, rounds=6)
            t = app.screen.query_one("#sessions")
            total = sum(it.cost for it in app.screen.items)
            from inspector.library.cost import usd

            assert str(t.border_title) == f"Sessions: 4 shown, {usd(total)} together"
            await pilot.press("slash", *"Zsh", "enter")
            await settle(app, pilot)
            [shown] = [app.screen.items[k] for k in app.screen.shown]
            assert str(t.border_title) == f"Sessions: 1 shown, {usd(shown.cost)} together"

    run(go())


def test_the_billing_blocks_view_matches_cost_by_block(workdir):
    """b in the browser: every 5-hour block of the sessions listed, newest first, its cost as `cost --by block` has it,
    and the headline's total; esc closes it (issue 28.5)."""
    import io

    from textual.widgets import DataTable, Static

    from inspector.cli import main
    from inspector.library.cost import Ledger, billing_blocks, timed_responses, usd
    from inspector.tui.screens.usage import BlocksScreen

    ledger = Ledger()
    priced, total, _ = timed_responses(resolve_target(workdir), ledger)
    blocks = billing_blocks(priced, ledger.table)
    assert len(blocks) >= 2
    out = io.StringIO()
    assert main(["cost", "--by", "block", "--json", str(workdir)], out, io.StringIO()) == 0
    cli = [orjson.loads(line) for line in out.getvalue().splitlines()]

    async def go():
        app = InspectorApp(resolve_target(workdir))
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(app, pilot)
            await pilot.press("b")
            await settle(app, pilot)
            assert isinstance(app.screen, BlocksScreen)
            t = app.screen.query_one(DataTable)
            cells = [[str(c) for c in t.get_row_at(k)] for k in range(t.row_count)]
            head = str(app.screen.query_one("#blocks-head", Static).content)
            await pilot.press("escape")
            await pilot.pause()
            return cells, head, app.screen

    cells, head, after = run(go())
    assert [c[1] for c in cells] == [usd(b["cost_usd_priced"]) for b in reversed(cli)]  # newest first, as priced by cost
    assert [int(c[2].replace(",", "")) for c in cells] == [b["responses"] for b in reversed(cli)]
    assert f"{len(blocks)} block(s), {usd(total.usd)} in all" in head
    assert isinstance(after, BrowserScreen)
