"""The app under hostile conditions: files changing under it, slow and cancelled previews, names that are not
UTF-8, the exact count asked from the workbench. (Moved from the unit layer: each runs the Textual app.)"""

from __future__ import annotations

import asyncio
import os

import pytest
from builders import assistant, user
from fake_anthropic import FakeAnthropic
from helpers import jsonl, sample_session, write_jsonl
from helpers import run_cli as run

from inspector.transcript.discovery import Target

KEY = "sk-ant-hardening-secret-0000"


async def open_workbench(app, pilot):
    """The session loaded, w pressed, and the workbench's first preview computed (at most 10 s)."""
    from inspector.tui.screens.workbench import WorkbenchScreen

    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()
    await pilot.press("w")
    for _ in range(100):
        await pilot.pause(0.1)
        await app.workers.wait_for_complete()
        if isinstance(app.screen, WorkbenchScreen) and app.screen.result is not None:
            break


async def until_confirm_send(app, pilot):
    """The consent dialog shown and laid out, its Send button where a click lands: a click on a
    dialog still being mounted misses it, which a loaded machine showed. At most 30 s: the whole suite on two busy
    cores once took more than 10 s to count the request the dialog prices."""
    from textual.widgets import Button

    from inspector.tui.screens.workbench import ConfirmSend

    for _ in range(600):
        await pilot.pause(0.05)
        screen = app.screen
        if isinstance(screen, ConfirmSend) and screen.query("#yes") and screen.query_one("#yes", Button).region.width:
            await pilot.pause()
            return


def _live(tmp_path):
    p = write_jsonl(
        tmp_path / "proj" / "live.jsonl",
        [
            user("u1", None, "start", sec=0),
            assistant("a1", "u1", sec=1, usage=(1, 0, 9000, 5)),
            user("u2", "a1", "more", sec=2),
            assistant("a2", "u2", sec=3, usage=(1, 0, 20000, 5)),
        ],
    )
    return p


@pytest.mark.parametrize("change", ["truncate", "replace", "delete", "same-size replace", "recreate"])
def test_tui_survives_files_changing_under_it(tmp_path, change):
    from inspector.tui.app import InspectorApp
    from inspector.tui.widgets.timeline import Timeline

    p = _live(tmp_path)
    seen: list[str] = []

    async def go():
        app = InspectorApp(Target("file", p))
        async with app.run_test(size=(120, 40)) as pilot:
            orig = app.notify
            app.notify = lambda msg, **kw: (seen.append(msg), orig(msg, **kw))[1]  # type: ignore[method-assign]
            for _ in range(3):
                await app.workers.wait_for_complete()
                await pilot.pause()
            screen = app.screen
            assert len(screen.query_one(Timeline).rows) == 4
            if change == "truncate":
                write_jsonl(p, [user("u1", None, "start", sec=0)])
            elif change == "replace":
                tmp = p.with_suffix(".new")
                write_jsonl(tmp, [user("x1", None, "other", sec=0), assistant("x2", "x1", sec=1, usage=(1, 0, 5000, 5))])
                os.replace(tmp, p)
            elif change == "same-size replace":  # an editor's atomic save of a file of exactly the same size
                data = p.read_bytes().replace(b'"more"', b'"MORE"')
                tmp = p.with_suffix(".new")
                tmp.write_bytes(data)
                os.replace(tmp, p)
            elif change == "recreate":
                data = p.read_bytes()
                p.unlink()
                for _ in range(30):
                    await pilot.pause(0.1)
                    if any("gone from disk" in m for m in seen):
                        break
                write_jsonl(p, [user("y1", None, "again", sec=0), assistant("y2", "y1", sec=1, usage=(1, 0, 7000, 5))])
            else:
                p.unlink()
            expected = {"delete": "gone from disk", "recreate": "back on disk"}.get(change, "truncated or replaced")
            for _ in range(60):  # the file is checked once a second; allow for a slow machine
                await pilot.pause(0.1)
                await app.workers.wait_for_complete()
                if any(expected in m for m in seen) and (
                    change in ("delete", "same-size replace") or len(screen.query_one(Timeline).rows) != 4
                ):
                    break
            for _ in range(3):
                await app.workers.wait_for_complete()
                await pilot.pause()
            rows = screen.query_one(Timeline).rows
            if change == "truncate":
                assert any("truncated or replaced" in m for m in seen) and len(rows) == 1
                assert screen.series.turns == ()  # no stale number shown as current
            elif change == "replace":
                assert any("truncated or replaced" in m for m in seen) and screen.series.turns[-1].tokens == 5006
            elif change == "same-size replace":
                assert any("truncated or replaced" in m for m in seen) and len(rows) == 4
                assert "MORE" in screen.session.record_text(screen.session.conversation.by_uuid["u2"])
            elif change == "recreate":
                assert any("back on disk" in m for m in seen) and screen.series.turns[-1].tokens == 7006
            else:
                assert any("gone from disk" in m for m in seen) and len(rows) == 4

    asyncio.run(go())


def test_a_slower_earlier_preview_never_replaces_a_newer_one(workdir, monkeypatch):
    """Two previews in a row (a setting changed while the first is computed): the first, slower, finishes last and
    its result is dropped, so the preview shown, and what ctrl+s would save, is the newer one."""
    import time

    import inspector.tui.screens.workbench as wbmod
    from inspector.tui.app import InspectorApp
    from inspector.tui.screens.workbench import WorkbenchScreen

    src = sample_session("Fix forecast", workdir)
    real = wbmod.compact

    slow_done = []

    def compact(session, request, **kw):
        if request.strategy != "microcompact":
            return real(session, request, **kw)
        time.sleep(1.0)  # the earlier request, slower
        try:
            return real(session, request, **kw)
        finally:
            slow_done.append(True)

    async def go():
        app = InspectorApp(Target("file", src))
        async with app.run_test(size=(160, 48)) as pilot:
            await open_workbench(app, pilot)
            wb = app.screen
            assert isinstance(wb, WorkbenchScreen) and wb.result is not None
            monkeypatch.setattr(wbmod, "compact", compact)
            wb.preview({**wb.params(), "strategy": "microcompact"})
            await pilot.pause(0.1)
            wb.preview({**wb.params(), "strategy": "full"})
            for _ in range(100):  # the first thread done too (its worker is cancelled: the thread runs to its end)
                await pilot.pause(0.05)
                if slow_done:
                    break
            for _ in range(5):
                await pilot.pause(0.05)
            assert slow_done
            assert wb.result is not None and wb.result.strategy == "full"

    asyncio.run(go())


def test_cancel_from_the_workbench(workdir, monkeypatch):
    from inspector.tui.app import InspectorApp
    from inspector.tui.screens.workbench import ConfirmSend, WorkbenchScreen

    src = sample_session("Fix forecast", workdir)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)

    async def go(fake):
        app = InspectorApp(Target("file", src))
        async with app.run_test(size=(160, 48)) as pilot:
            await open_workbench(app, pilot)
            wb = app.screen
            assert isinstance(wb, WorkbenchScreen) and wb.result is not None
            offline = wb.result
            await pilot.press("ctrl+a")
            await until_confirm_send(app, pilot)
            assert isinstance(app.screen, ConfirmSend) and "input tokens" in app.screen.text and "$" in app.screen.text
            assert fake.message_requests == []  # nothing sent before consent
            await pilot.click("#yes")
            for _ in range(200):
                await pilot.pause(0.05)
                if fake.message_requests:
                    break
            await pilot.press("ctrl+c")
            await app.workers.wait_for_complete()
            await pilot.pause()
            status = str(wb.query_one("#wb-status").render())
            assert "cancel" in status
            assert wb.result is None or wb.result is offline

    with FakeAnthropic([("slow", 0.2)]) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        asyncio.run(go(fake))


def test_a_folder_name_that_is_not_utf8(tmp_path, workdir):
    import shutil

    from inspector.tui.app import InspectorApp

    root = tmp_path / "root"
    bad = os.fsdecode(b"proj\xff")  # how Python names a folder whose bytes are not UTF-8: a lone surrogate
    shutil.copytree(workdir / "-home-ann-work-dotfiles", root / bad)
    code, out, err = run("stats", str(root))
    assert code == 0 and "Zsh prompt shows git branch" in out and "proj\ufffd" in out, err
    for argv in (["stats", "--json", str(root)], ["tokens", "--json", str(root)], ["search", "zsh", str(root), "--json"]):
        code, out, err = run(*argv)
        assert code == 0 and jsonl(out), (argv, err)
    code, out, _ = run("search", "zsh", str(root))
    assert code == 0 and "proj\ufffd" in out

    async def go():
        app = InspectorApp(Target("root", root))
        async with app.run_test(size=(140, 40)) as pilot:
            for _ in range(4):
                await app.workers.wait_for_complete()
                await pilot.pause()
            [item] = app.screen.items
            assert item.peak and item.title == "Zsh prompt shows git branch"

    asyncio.run(go())


def test_exact_count_from_the_workbench_asks_then_counts_the_whole_request(tmp_path, monkeypatch):
    from helpers import expand_golden, golden_transcript

    from inspector.tui.app import InspectorApp
    from inspector.tui.screens.workbench import ConfirmSend, WorkbenchScreen

    src = golden_transcript(expand_golden("manual_compact_resume", tmp_path))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)

    async def go(fake):
        app = InspectorApp(Target("file", src))
        async with app.run_test(size=(160, 48)) as pilot:
            await open_workbench(app, pilot)
            wb = app.screen
            assert isinstance(wb, WorkbenchScreen) and wb.result is not None and wb.result.api_messages
            await pilot.press("ctrl+t")
            await until_confirm_send(app, pilot)
            assert isinstance(app.screen, ConfirmSend) and "token-counting" in app.screen.text
            assert fake.requests == []  # nothing sent before consent
            await pilot.click("#yes")
            for _ in range(200):
                await pilot.pause(0.05)
                await app.workers.wait_for_complete()
                if "exact:" in str(wb.query_one("#wb-status").render()):
                    break
            assert "exact:" in str(wb.query_one("#wb-status").render())
            [req] = fake.requests
            assert req["path"].startswith("/v1/messages/count_tokens") and req["body"]["tools"] and req["body"]["system"]
            assert len(req["body"]["messages"]) == len(wb.result.api_messages)

    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        asyncio.run(go(fake))
