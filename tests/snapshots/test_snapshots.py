"""What the screens look like: SVG snapshots of the app on the bundled samples (pytest-textual-snapshot).

A layout regression (a label cut off, a panel that no longer fits, a column gone) fails here with a
visual diff in the report. After an intended change: `python -m pytest tests/test_snapshots.py
--snapshot-update`, then look at the new SVGs in tests/__snapshots__/ before committing them.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from helpers import SAMPLES

from inspector.transcript.discovery import Target
from inspector.tui.app import InspectorApp

SIZE = (140, 42)
SESSION = Path("sample_sessions/-home-ann-work-weatherly/6513270e-269e-4d37-b2a7-4de452e6b438.jsonl")


@pytest.fixture(autouse=True)
def stable(monkeypatch):
    """The same picture on every machine: UTC clock, paths relative to a folder that holds the pristine samples (never
    what else a checkout's sample_sessions/ may hold)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    monkeypatch.chdir(SAMPLES.parent)
    yield
    monkeypatch.undo()
    time.tzset()


async def loaded(pilot) -> None:
    for _ in range(4):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def test_browser(snap_compare):
    async def run_before(pilot):
        await loaded(pilot)

    assert snap_compare(InspectorApp(Target("root", Path("sample_sessions"))), terminal_size=SIZE, run_before=run_before)


def test_session_at_a_compaction_with_why(snap_compare):
    async def run_before(pilot):
        await loaded(pilot)
        await pilot.press("c", "y")
        await loaded(pilot)

    assert snap_compare(InspectorApp(Target("file", SESSION)), terminal_size=SIZE, run_before=run_before)


def test_workbench_full_preview(snap_compare, monkeypatch):
    import inspector.compact.summary_compact as sc

    # the summary names the transcript by its absolute path (as Claude Code's does), which differs from
    # checkout to checkout; the picture should not
    real = sc.wrap_summary
    monkeypatch.setattr(
        sc,
        "wrap_summary",
        lambda formatted, *, transcript_path, **kw: real(
            formatted, transcript_path=f"/home/ann/.claude/projects/-home-ann-work-weatherly/{SESSION.name}", **kw
        ),
    )

    async def run_before(pilot):
        await loaded(pilot)
        await pilot.press("w")
        await loaded(pilot)
        await pilot.pause(0.6)  # the preview is debounced
        await loaded(pilot)

    assert snap_compare(InspectorApp(Target("file", SESSION)), terminal_size=SIZE, run_before=run_before)


def session_after(snap_compare, key: str) -> bool:
    """The session screen, loaded, after one key that opens a panel over it."""

    async def run_before(pilot):
        await loaded(pilot)
        await pilot.press(key)
        await pilot.pause()

    return snap_compare(InspectorApp(Target("file", SESSION)), terminal_size=SIZE, run_before=run_before)


def test_what_if_panel(snap_compare):
    assert session_after(snap_compare, "s")


def test_help(snap_compare):
    assert session_after(snap_compare, "question_mark")


def test_small_terminal_keeps_room_for_the_timeline(snap_compare):
    """80×24: the chart shrinks (30% of the height, at least 5 rows) so the timeline keeps most of the screen."""

    async def run_before(pilot):
        await loaded(pilot)

    assert snap_compare(InspectorApp(Target("file", SESSION)), terminal_size=(80, 24), run_before=run_before)


def test_light_theme(snap_compare):
    """A light theme: the chart, the timeline and the detail on light backgrounds, at a compaction with its why."""

    async def run_before(pilot):
        pilot.app.theme = "textual-light"
        await loaded(pilot)
        await pilot.press("c", "y")
        await loaded(pilot)

    assert snap_compare(InspectorApp(Target("file", SESSION)), terminal_size=(120, 36), run_before=run_before)


async def workbench_ready(pilot) -> None:
    """The workbench open with its first preview shown (debounced, then computed in a worker)."""
    await loaded(pilot)
    await pilot.press("w")
    for _ in range(100):
        await pilot.pause(0.05)
        await loaded(pilot)
        if getattr(pilot.app.screen, "result", None) is not None:
            break
    await pilot.pause()


def test_workbench_at_80x24(snap_compare, monkeypatch):
    """The workbench on a small terminal: the form narrows so that the preview keeps most of the width."""
    import inspector.compact.summary_compact as sc

    real = sc.wrap_summary  # the summary names the transcript by its absolute path: the same on every machine here
    monkeypatch.setattr(
        sc,
        "wrap_summary",
        lambda formatted, *, transcript_path, **kw: real(
            formatted, transcript_path=f"/home/ann/.claude/projects/-home-ann-work-weatherly/{SESSION.name}", **kw
        ),
    )

    async def run_before(pilot):
        await workbench_ready(pilot)

    assert snap_compare(InspectorApp(Target("file", SESSION)), terminal_size=(80, 24), run_before=run_before)
