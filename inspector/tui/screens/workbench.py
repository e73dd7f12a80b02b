"""The compaction workbench: choose a strategy and its parameters, watch the preview, save."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Input, Label, Select, Static, Switch

from inspector.compact import (
    REGISTRY,
    CompactError,
    CompactRequest,
    KeepConfig,
    MicrocompactParams,
    SessionMemoryParams,
    compact,
    make_slice,
)
from inspector.compact.base import CompactionResult, Estimator
from inspector.compact.exact import ExactCountPlan
from inspector.compact.summarize.base import Cancel, Cancelled, SummarizerError, SummaryRequest
from inspector.textutil import human_size, printable, redact
from inspector.tokens.thresholds import Settings
from inspector.transcript.session import Session
from inspector.tui.actions import bindings
from inspector.tui.widgets.keybar import KeyBar
from inspector.view import snippet

LABELS = {
    "compact": "Compact now (keeps the last round)",
    "reactive": "As if the API refused (keeps a tail)",
    "partial": "Partial from / up to the selected prompt",
    "full": "Full compaction (no kept tail)",
    "session-memory": "Session memory (notes + recent messages)",
    "microcompact": "Microcompact (clear old tool results)",
}


def strategy_options(session: Session) -> tuple[list[tuple[str, str]], str]:
    """The strategies, each named with the releases that had it and marked when the session's own release did not:
    (options, the default: what the session's Claude Code does)."""
    from inspector.claude.versions import default_strategy, releases_with, rules_for, what_if

    rules = rules_for(session.version)
    era = rules.era
    opts = []
    for name, label in LABELS.items():
        key = "partial-from" if name == "partial" else name
        mark = " · what-if" if what_if(key, era, rules.version) else ""
        opts.append((f"{label} — {releases_with(key)}{mark}", name))
    return opts, default_strategy(era)


class ConfirmSend(ModalScreen[bool]):
    """Shows what the Anthropic summarizer would send and what it costs; nothing is sent without yes. (Also asks
    the workbench's other questions: `question` and `yes` name them.)"""

    BINDINGS = [("escape", "dismiss(False)", "Cancel")]

    def __init__(self, text: str, question: str = "Send this conversation to the Anthropic API?", yes: str = "Send") -> None:
        super().__init__()
        self.text = text
        self.question, self.yes = question, yes

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(Text(self.question, style="bold"))
            yield Static(Text(printable(self.text, keep_newlines=True)))
            with Horizontal(id="confirm-buttons"):
                yield Button(self.yes, variant="warning", id="yes")
                yield Button("Cancel", variant="primary", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class SavedScreen(ModalScreen[None]):
    BINDINGS = [("escape,enter", "dismiss", "Close")]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(id="saved-box"):
            yield Static(Text("Saved as a new session", style="bold"))
            with VerticalScroll(id="saved-text"):  # scrolls on a small terminal: the Close button stays in view
                yield Static(Text(printable(self.text, keep_newlines=True)))
            yield Button("Close", id="close")

    def on_mount(self) -> None:
        self.query_one("#close", Button).focus()

    @on(Button.Pressed)
    def close(self) -> None:
        self.dismiss()


class WorkbenchScreen(Screen):
    BINDINGS = bindings("workbench")
    scope_name = "workbench"

    class Previewed(Message):
        def __init__(self, result: CompactionResult | None, error: str | None) -> None:
            super().__init__()
            self.result, self.error = result, error

    def __init__(self, session: Session, settings: Settings, selected: int | None = None) -> None:
        super().__init__()
        self.session = session
        self.settings = settings
        self.selected = selected
        self.result: CompactionResult | None = None
        self.estimator: Estimator | None = None
        self.cancel: Cancel | None = None
        self._preview_timer: Any = None
        self.anthropic_result = False
        self.pivots: list[int] = []

    def compose(self) -> ComposeResult:
        s = self.session
        from inspector.compact import pivot_candidates, pivot_words

        self.pivots = pivot_candidates(s, self.settings)
        sel = ""
        if self.selected is not None:
            r = s.records[self.selected]
            sel = f"line {r.line}: {r.type} {(r.uuid or '')[:8]} at {(r.timestamp or '?')[11:19]}"
            if self.selected in self.pivots:
                sel += " (a pivot)"
        if not self.pivots:
            sel = (sel + "\n" if sel else "") + pivot_words(s, [])  # said up front, before any preview
        elif self.selected not in self.pivots:
            sel = (sel + ": not a pivot. " if sel else "") + "Select a prompt marked » in the timeline"
        yield Static(Text(printable(f"Compaction workbench: {s.title or s.session_id}")), id="title")
        memory = self.remembered()
        with Horizontal():
            with VerticalScroll(id="wb-form"):
                options, default = strategy_options(s)
                yield Label("Strategy")
                yield Select(options, value=memory.get("strategy", default), allow_blank=False, id="strategy")
                with Vertical(classes="field", id="f-trigger"):
                    yield Label("As")
                    yield Select(
                        [("/compact (manual)", "manual"), ("the threshold (auto)", "auto")],
                        value=memory.get("trigger", "manual"),
                        allow_blank=False,
                        id="trigger",
                    )
                with Vertical(classes="field", id="f-refused"):
                    yield Label("The API's limit (tokens, e.g. 200k)")
                    yield Input(memory.get("refused-at", f"{self.default_limit():,}".replace(",", "_")), id="refused-at")
                    yield Label("The request's size (empty: the context)")
                    yield Input(memory.get("prompt-tokens", ""), placeholder="e.g. 210k", id="prompt-tokens")
                with Vertical(classes="field", id="f-pivot"):
                    yield Label("Pivot: the selected prompt")
                    yield Static(Text(sel or "none: select a prompt you typed in the timeline"), id="wb-selected")
                    yield Label("Direction")
                    yield Select(
                        [("Summarize from here", "from"), ("Summarize up to here", "up_to")],
                        value=memory.get("direction", "from"),
                        allow_blank=False,
                        id="direction",
                    )
                with Vertical(classes="field", id="f-at"):
                    yield Label("Compact as of the selected message")
                    yield Switch(value=False, id="at-selected")
                with Vertical(classes="field", id="f-instructions"):
                    yield Label("Instructions / context (optional)")
                    yield Input(memory.get("instructions", ""), placeholder="e.g. keep the API decisions", id="instructions")
                with Vertical(classes="field", id="f-microcompact"):
                    yield Label("Idle gap, minutes")
                    yield Input(memory.get("gap", "60"), id="gap")
                    yield Label("Keep the last N results")
                    yield Input(memory.get("keep", "5"), id="keep")
                    yield Label("Run without the gap")
                    yield Switch(value=True, id="force")
                with Vertical(classes="field", id="f-session-memory"):
                    yield Label("Min tokens kept")
                    yield Input(memory.get("min-tokens", "10000"), id="min-tokens")
                    yield Label("Min text messages")
                    yield Input(memory.get("min-text", "5"), id="min-text")
                    yield Label("Max tokens kept")
                    yield Input(memory.get("max-tokens", "40000"), id="max-tokens")
                yield Label("Summary: offline (ctrl+a: Anthropic)", id="summary-note")
            with VerticalScroll(id="wb-preview"):
                yield Static("", id="wb-numbers")
                yield Static("", id="wb-lists")
                yield Static("", id="wb-summary")
        yield Static("", id="wb-status")
        yield KeyBar()

    def default_limit(self) -> int:
        from inspector.tokens.series import session_thresholds

        try:
            return session_thresholds(self.session, self.settings).context_window
        except Exception:  # noqa: BLE001 - a default for a field the user can change
            return 200_000

    FIELDS = {  # the fields each strategy reads
        "compact": ("f-trigger", "f-at", "f-instructions"),
        "reactive": ("f-refused", "f-at", "f-instructions"),
        "partial": ("f-pivot", "f-instructions"),
        "full": ("f-at", "f-instructions"),
        "session-memory": ("f-at", "f-session-memory"),
        "microcompact": ("f-at", "f-microcompact"),
    }

    def remembered(self) -> dict[str, Any]:
        """What was chosen the last time the workbench was open on this session (while the app runs)."""
        memory = getattr(self.app, "workbench_memory", None)
        return dict(memory.get(str(self.session.path), {})) if isinstance(memory, dict) else {}

    def remember(self) -> None:
        if not hasattr(self.app, "workbench_memory"):
            self.app.workbench_memory = {}  # type: ignore[attr-defined]
        values: dict[str, Any] = {k: self.query_one(f"#{k}", Select).value for k in ("strategy", "trigger", "direction")}
        for k in ("refused-at", "prompt-tokens", "instructions", "gap", "keep", "min-tokens", "min-text", "max-tokens"):
            values[k] = self.query_one(f"#{k}", Input).value
        self.app.workbench_memory[str(self.session.path)] = values  # type: ignore[attr-defined]

    def show_fields(self) -> None:
        """Only the fields the chosen strategy reads."""
        wanted = set(self.FIELDS.get(str(self.query_one("#strategy", Select).value), ()))
        for group in self.query(".field"):
            group.display = group.id in wanted
        chosen = REGISTRY.get(str(self.query_one("#strategy", Select).value))
        self.query_one("#summary-note").display = chosen is None or chosen.summarizes

    def on_mount(self) -> None:
        self.query_one("#wb-form").border_title = "Compaction"
        self.query_one("#wb-preview").border_title = "Preview: what the model would see"
        self.show_fields()
        self.schedule_preview()
        self.fit_form()
        self.query_one("#strategy", Select).focus()  # enter opens the strategies at once, tab goes on down the form

    def on_resize(self) -> None:
        self.fit_form()

    def fit_form(self) -> None:
        """The form narrower on a small terminal, so the preview keeps most of the width."""
        form = self.query_one("#wb-form")
        form.styles.width = 42 if self.size.width >= 120 else max(26, self.size.width * 2 // 5)

    # -- parameters ---------------------------------------------------------------------------
    def params(self) -> dict[str, Any]:
        def num(id_: str, default: float) -> float:
            try:
                return float(self.query_one(f"#{id_}", Input).value)
            except ValueError:
                return default

        from inspector.tokens.thresholds import window_value

        strategy = self.query_one("#strategy", Select).value
        sel_uuid = self.session.records[self.selected].uuid if self.selected is not None else None
        at_sel = self.query_one("#at-selected", Switch).value
        return {
            "trigger": self.query_one("#trigger", Select).value,
            "refused_at": window_value(self.query_one("#refused-at", Input).value),
            "prompt_tokens": window_value(self.query_one("#prompt-tokens", Input).value),
            "strategy": strategy,
            "at": sel_uuid if at_sel and strategy != "partial" else None,
            "pivot": sel_uuid if strategy == "partial" else None,
            "direction": self.query_one("#direction", Select).value,
            "instructions": self.query_one("#instructions", Input).value or None,
            "microcompact_params": MicrocompactParams(
                gap_minutes=num("gap", 60), keep_recent=int(num("keep", 5)), force=self.query_one("#force", Switch).value
            ),
            "session_memory_params": SessionMemoryParams(
                KeepConfig(int(num("min-tokens", 10_000)), int(num("min-text", 5)), int(num("max-tokens", 40_000)))
            ),
        }

    @on(Select.Changed)
    @on(Input.Changed)
    @on(Switch.Changed)
    def changed(self) -> None:
        self.anthropic_result = False
        self.show_fields()
        self.remember()
        self.schedule_preview()

    def schedule_preview(self) -> None:
        if self._preview_timer is not None:
            self._preview_timer.stop()
        self._preview_timer = self.set_timer(0.3, self.action_preview)

    def action_preview(self) -> None:
        if self.cancel is not None:  # a request to the Anthropic API in flight is for settings now changed: stopped
            self.cancel.set()
        self.status("computing the preview…")
        self.preview(self.params())

    @work(thread=True, exclusive=True, group="preview")
    def preview(self, p: dict[str, Any], summarizer: Any = None, cancel: Cancel | None = None) -> None:
        """One preview, in a thread. A newer one asked for meanwhile cancels this worker (the thread runs to its end):
        its result is then dropped, never shown over the newer one's, nor saved."""
        from textual.worker import get_current_worker

        from inspector.compact import pivot_words, resolve_reference

        worker = get_current_worker()

        def post(res: CompactionResult | None, error: str | None) -> None:
            if not worker.is_cancelled:
                self.post_message(self.Previewed(res, error))

        try:
            if p["strategy"] == "partial":  # the real reason a pivot cannot be one, and which can
                if p["pivot"] is None:
                    raise CompactError(
                        "partial compaction pivots on the selected message: select a prompt you typed "
                        "(marked » in the timeline); " + pivot_words(self.session, self.pivots)
                    )
                resolve_reference(self.session, p["pivot"], pivot=True, settings=self.settings)
            if self.estimator is None:
                sl = make_slice(self.session, None, self.settings)
                self.estimator = Estimator(self.session, sl.series, self.settings)
            res = compact(
                self.session,
                CompactRequest(
                    p["strategy"],
                    at=p["at"],
                    pivot=p["pivot"],
                    direction=p["direction"],
                    instructions=p["instructions"],
                    settings=self.settings,
                    microcompact_params=p["microcompact_params"],
                    session_memory_params=p["session_memory_params"],
                    trigger=p["trigger"],
                    refused_at=p["refused_at"],
                    prompt_tokens=p["prompt_tokens"],
                ),
                summarizer=summarizer,
                estimator=self.estimator if p["at"] is None else None,
                cancel=cancel,
                progress=lambda what, _fraction: self.app.call_from_thread(self.status, what),
            )
            post(res, None)
        except Cancelled:
            post(None, "cancelled: nothing more was received")
        except (CompactError, SummarizerError) as exc:
            post(None, str(exc))
        except Exception as exc:  # noqa: BLE001
            post(None, f"{type(exc).__name__}: {exc}")

    @on(Previewed)
    def on_previewed(self, msg: Previewed) -> None:
        if msg.error is not None:
            self.result = None
            self.status(msg.error)
            self.query_one("#wb-numbers", Static).update(Text(msg.error, style="bold"))
            self.query_one("#wb-lists", Static).update("")
            self.query_one("#wb-summary", Static).update("")
            return
        res = msg.result
        assert res is not None
        self.result = res
        self.query_one("#wb-numbers", Static).update(self.numbers(res))
        self.query_one("#wb-lists", Static).update(self.lists(res))
        self.query_one("#wb-summary", Static).update(Text(printable(res.summary or "", keep_newlines=True)[:60_000]))
        state = res.noop or ("ready: ctrl+s saves it as a new session" if res.changed else "")
        self.status(f"{res.strategy}{' (' + res.summarizer + ' summary)' if res.summarizer else ''}: {state}")

    def numbers(self, res: CompactionResult) -> Table:
        th = res.thresholds
        t = Table(box=None, show_header=False, padding=(0, 1))
        top = max(th.context_window, res.tokens_before)
        width = max(8, min(40, self.query_one("#wb-preview").size.width - 24))  # the bars shrink on a narrow screen
        for label, n in (("before", res.tokens_before), ("after", res.tokens_after)):
            bar = Text(
                "█" * min(width, round(n / top * width)),
                style="green" if n < th.warning else "yellow" if n < (th.auto_compact or th.effective_window) else "red",
            )
            t.add_row(label, bar + Text(" " * max(0, width - len(bar))), f"{n:,}")
        if res.caveat:  # where the figure is, not only in `tokens`
            t.add_row("caveat", Text(printable(res.caveat), style="yellow"), "")
        t.add_row("change", Text(res.change_words, style="bold yellow" if res.tokens_after > res.tokens_before else ""), "")
        if res.accounting_words:
            t.add_row("made of", Text(res.accounting_words), "")
        auto = (
            f"auto-compact {th.auto_compact:,}"
            if th.auto_compact is not None
            else (
                f"auto-compact {th.unenforced_threshold:,} not enforced"
                if th.unenforced_threshold is not None
                else "auto-compact off"
            )
        )
        t.add_row(
            "",
            Text(f"warning {th.warning:,} · {auto} · {th.blocking_words} · window {th.context_window:,}", style="dim"),
            "",
        )
        if res.strategy_label:
            t.add_row("rules", Text(printable(res.strategy_label), style="dim"), "")
        if res.what_if:
            t.add_row("what-if", Text(printable(res.what_if), style="bold yellow"), "")
        if res.fallback:
            t.add_row("fallback", Text(res.fallback, style="yellow"), "")
        for n in res.notes:
            if n != res.what_if:
                t.add_row("note", Text(printable(n)), "")
        if res.restored_files_tokens:
            t.add_row("live", Text(f"+{res.restored_files_tokens:,} tokens of re-attached files in a live compaction"), "")
        return t

    def lists(self, res: CompactionResult) -> Text:
        s = self.session
        out = Text()

        def block(title: str, uuids: tuple[str, ...] | list[str]) -> None:
            if not uuids:
                return
            out.append(f"\n{title} ({len(uuids)})\n", style="bold")
            for u in list(uuids)[:40]:
                i = s.conversation.by_uuid.get(u)
                if i is None:
                    continue
                r = s.records[i]
                kind = r.get("attachment_type") or r.type if r.type == "attachment" else r.type
                size = human_size(r.content_chars) if r.type != "attachment" else "—"
                words = " ".join(snippet(s, i, 80).split())[:60]
                out.append(printable(f"  {str(kind)[:14]:<14} {(r.timestamp or '')[11:16]} {size:>8}  {words}") + "\n")
            if len(uuids) > 40:
                out.append(f"  … and {len(uuids) - 40} more\n", style="dim")

        if res.cleared_tool_results:
            out.append(f"\nCleared tool results ({len(res.cleared_tool_results)})\n", style="bold")
            for tid in res.cleared_tool_results:
                out.append(
                    printable(
                        f"  {s.tool_name(tid) or '?':<8} {tid}  {res.cleared_tokens.get(tid, 0):,} tokens by Claude Code's "
                        "rough count (characters / 4)"
                    )
                    + "\n"
                )
        block("Summarized", res.summarized_uuids)
        block("Kept", res.kept_uuids)
        if res.api_messages is not None:
            out.append(
                f"\nWhat Claude Code sends after `claude --resume`, before your prompt ({len(res.api_messages)} messages"
                + ("" if res.api_messages_exact else "; and what its release adds as it sends them: see the notes")
                + ")\n",
                style="bold",
            )
            for m in res.api_messages:
                c = m.get("content")
                blocks = [{"type": "text", "text": c}] if isinstance(c, str) else [b for b in c or () if isinstance(b, dict)]
                chars = sum(len(str(b.get("text") or b.get("content") or b.get("input") or "")) for b in blocks)
                kinds = ", ".join(sorted({str(b.get("type")) for b in blocks}))
                first = next((str(b.get("text")) for b in blocks if b.get("type") == "text"), "")
                first = next((ln for ln in first.splitlines() if ln.strip() and ln.strip() != "<system-reminder>"), "")[:60]
                out.append(
                    printable(f"  {str(m.get('role')):<9} {len(blocks):>3} block(s) {human_size(chars):>8}  {kinds}  {first}")
                    + "\n"
                )
        return out

    def status(self, text: str) -> None:
        self.query_one("#wb-status", Static).update(Text(printable(redact(text))))

    # -- Anthropic ----------------------------------------------------------------------------
    def action_anthropic(self) -> None:
        p = self.params()
        chosen = REGISTRY.get(str(p["strategy"]))
        if chosen is not None and not chosen.summarizes:
            self.notify(f"{chosen.name} does not summarize: nothing to send", severity="warning")
            return
        self.estimate_send(p)

    @work(thread=True, exclusive=True, group="estimate")
    def estimate_send(self, p: dict[str, Any]) -> None:
        from inspector.compact.summarize.anthropic_api import AnthropicSummarizer

        summ = AnthropicSummarizer()
        if not summ.has_key:
            self.app.call_from_thread(
                self.app.notify,
                "Set ANTHROPIC_API_KEY to use the Anthropic summarizer; nothing was sent.",
                severity="error",
                timeout=8,
            )
            return
        try:
            sl = make_slice(self.session, p["at"], self.settings)
            est = summ.estimate(SummaryRequest(self.session, tuple(sl.messages), instructions=p["instructions"]))
        except Exception as exc:  # noqa: BLE001
            self.app.call_from_thread(self.app.notify, f"Could not estimate the request: {exc}", severity="error")
            return

        def answer(yes: bool | None) -> None:
            if yes:
                if self.cancel is not None:
                    self.cancel.set()
                self.cancel = Cancel()
                self.anthropic_result = True
                self.status("sending to the Anthropic API… (ctrl+c cancels)")
                self.preview(p, summ, self.cancel)
            else:
                self.status("nothing was sent")

        self.app.call_from_thread(self.app.push_screen, ConfirmSend(est.describe()), answer)

    def action_exact_count(self) -> None:
        res = self.result
        if res is None:
            self.notify("no preview to count yet", severity="warning")
            return
        from inspector.compact.summarize.anthropic_api import AnthropicSummarizer

        counter = AnthropicSummarizer()
        if not counter.has_key:
            self.notify("Set ANTHROPIC_API_KEY to count with the API; nothing was sent.", severity="error", timeout=8)
            return
        from inspector.compact.exact import plan_exact_count

        estimator = self.estimator
        plan = plan_exact_count(
            self.session, res, self.settings, (lambda: estimator.calibration.overhead) if estimator is not None else None
        )

        def answer(yes: bool | None) -> None:
            if yes:
                self.status("counting with the Anthropic API…")
                self.count_exact(plan)
            else:
                self.status("nothing was sent")

        self.app.push_screen(
            ConfirmSend(f"The token-counting endpoint gets {plan.describe()}. It costs nothing and generates nothing."),
            answer,
        )

    @work(thread=True, exclusive=True, group="count")
    def count_exact(self, plan: ExactCountPlan) -> None:
        from inspector.compact.summarize.anthropic_api import AnthropicSummarizer

        try:
            text = plan.count(AnthropicSummarizer()).describe()
        except Exception as exc:  # noqa: BLE001
            self.app.call_from_thread(self.app.notify, f"Not counted: {redact(str(exc))}", severity="error", timeout=10)
            self.app.call_from_thread(self.status, "not counted")
            return
        self.app.call_from_thread(self.status, text)
        self.app.call_from_thread(self.app.notify, text, timeout=10)

    def action_cancel_job(self) -> None:
        if self.cancel is not None:
            self.cancel.set()
            self.status("cancelling…")

    # -- save ---------------------------------------------------------------------------------
    def action_save(self) -> None:
        if self.result is None or not self.result.changed:
            self.notify("nothing to save: the preview changes nothing", severity="warning")
            return
        self.status("saving…")
        self.do_save(self.result)

    def ask_to_save_anyway(self, res: CompactionResult, why: str, flag: str, allowed: frozenset[str]) -> None:
        """A save refused for a reason the user may overrule (a session still being written, a newer release): the
        CLI's --allow-live / --allow-newer, asked here."""

        def answered(yes: bool | None) -> None:
            if yes:
                self.status("saving…")
                self.do_save(res, allowed | {flag})
            else:
                self.status("not saved")

        what = "still being written" if flag == "--allow-live" else "written by a newer Claude Code"
        self.app.push_screen(
            ConfirmSend(
                f"{why}\n\nSave it anyway? The new session holds what the file held when the preview was made "
                "(the original is not touched either way).",
                question=f"The session is {what}",
                yes="Save anyway",
            ),
            answered,
        )

    @work(thread=True, exclusive=True, group="save")
    def do_save(self, res: CompactionResult, allowed: frozenset[str] = frozenset()) -> None:
        from inspector.edit import save
        from inspector.edit.files import RefusedSave

        try:
            out = save(self.session, res, allow_live="--allow-live" in allowed, allow_newer="--allow-newer" in allowed)
        except RefusedSave as exc:
            if exc.flag in ("--allow-live", "--allow-newer") and exc.flag not in allowed:
                self.app.call_from_thread(self.ask_to_save_anyway, res, str(exc), exc.flag, allowed)
                return
            self.app.call_from_thread(self.app.notify, f"Not saved: {exc}", severity="error", timeout=10)
            self.app.call_from_thread(self.status, f"not saved: {exc}")
            return
        except Exception as exc:  # noqa: BLE001
            self.app.call_from_thread(self.app.notify, f"Not saved: {exc}", severity="error", timeout=10)
            self.app.call_from_thread(self.status, f"not saved: {exc}")
            return
        sends = " and a resume sends the previewed messages" if res.api_messages is not None else ""
        how = f"Resume it with:\n  {out.resume_command}" if out.resumable else out.resume_hint
        text = (
            f"{out.path}\n{out.records} records, {len(out.copied)} file(s) copied beside it; checked: chain intact, tool calls "
            f"paired, the messages saved are those previewed{sends}.\n\n{how}\n\n"
            "The original transcript was not modified." + "".join(f"\nNote: {n}" for n in out.notes)
        )
        self.app.call_from_thread(self.status, f"saved to {out.path}")
        self.app.call_from_thread(self.app.push_screen, SavedScreen(text))
